--
-- sparsevec operators and functions against hand-computed values.
--
-- Everything is computed in double precision; <#> and inner_product add
-- the exact float4 x float4 products in ascending index order (spv_dot).
--
SET extra_float_digits = 1;

\i test/sql/sparsevec_try.sql

-- <#> is sparsevec_negative_inner_product(sparsevec, sparsevec), the name
-- and signature the sparse_maxscore opclass refers to
SELECT oprname, oprcode::regprocedure, oprresult::regtype, oprcom::regoperator
FROM pg_operator
WHERE oprleft = 'sparsevec'::regtype AND oprright = 'sparsevec'::regtype
	AND oprname IN ('<#>', '<=>', '<->', '<+>')
ORDER BY oprname;

-- inner product: 1*3 + 2*4 = 11
SELECT inner_product('{1:1,2:2}/2'::sparsevec, '{1:3,2:4}/2');
SELECT '{1:1,2:2}/2'::sparsevec <#> '{1:3,2:4}/2';
SELECT sparsevec_negative_inner_product('{1:1,2:2}/2', '{1:3,2:4}/2');
-- partial overlap: only index 3 is shared, 3*6 = 18
SELECT inner_product('{1:1,3:3,5:5}/5'::sparsevec, '{2:4,3:6,4:8}/5');
SELECT '{1:1,3:3,5:5}/5'::sparsevec <#> '{2:4,3:6,4:8}/5';
-- negative weights: -1.5*2 + 2*(-0.25) = -3.5
SELECT inner_product('{1:-1.5,2:2}/3'::sparsevec, '{1:2,2:-0.25,3:7}/3');
SELECT '{1:-1.5,2:2}/3'::sparsevec <#> '{1:2,2:-0.25,3:7}/3';
-- disjoint and empty: 0, so <#> is -0 (as in pgvector)
SELECT inner_product('{1:1,3:3}/4'::sparsevec, '{2:2,4:4}/4'),
	'{1:1,3:3}/4'::sparsevec <#> '{2:2,4:4}/4';
SELECT inner_product('{1:1}/2'::sparsevec, '{}/2'),
	'{}/2'::sparsevec <#> '{1:1}/2', '{}/2'::sparsevec <#> '{}/2';
-- the order of the additions is ascending index order:
-- (1e20 + 1) - 1e20 = 0 in double, but (1e20 - 1e20) + 1 = 1
SELECT inner_product('{1:1e20,2:1,3:-1e20}/3'::sparsevec, '{1:1,2:1,3:1}/3') AS a,
	inner_product('{1:1e20,2:-1e20,3:1}/3'::sparsevec, '{1:1,2:1,3:1}/3') AS b;
-- products are exact in double and never overflow: 3e38 rounds to the
-- float4 300000000549775575777803994281145270272, whose square is
-- 9.000000032986535e+76 in double (pgvector returns Infinity)
SELECT inner_product('{1:3e38}/1'::sparsevec, '{1:3e38}/1');
SELECT inner_product('{1:3e38}/1'::sparsevec, '{1:3e38}/1')
	= '3e38'::real::float8 * '3e38'::real::float8 AS exact;
-- 4 * FLT_MAX^2 = 4.6316830173529565e+77
SELECT v <#> v AS finite
FROM (SELECT '{1:3.4028235e38,2:3.4028235e38,3:-3.4028235e38,4:3.4028235e38}/4'::sparsevec) t(v);
SELECT '{1:1e-45}/1'::sparsevec <#> '{1:1e-45}/1' AS tiny_but_not_zero;
-- commutative, bit for bit
SELECT a <#> b = b <#> a AS commutes, a <#> b = -inner_product(a, b) AS negated
FROM (SELECT '{1:0.1,5:-3.7,9:1e-3}/9'::sparsevec, '{1:7.3,5:0.3,9:11}/9'::sparsevec) t(a, b);

-- cosine distance: 1 - dot / sqrt(|a|^2 |b|^2)
SELECT cosine_distance('{1:1,2:2}/2'::sparsevec, '{1:2,2:4}/2');
SELECT '{1:1,2:2}/2'::sparsevec <=> '{1:2,2:4}/2';
SELECT cosine_distance('{1:1,2:1}/2'::sparsevec, '{1:1,2:1}/2');
SELECT cosine_distance('{1:1,2:1}/2'::sparsevec, '{1:1.1,2:1.1}/2');
SELECT cosine_distance('{1:1}/2'::sparsevec, '{2:2}/2');
SELECT cosine_distance('{2:2}/2'::sparsevec, '{1:2}/2');
SELECT cosine_distance('{1:1,2:1}/2'::sparsevec, '{1:-1,2:-1}/2');
SELECT cosine_distance('{1:1,2:1}/2'::sparsevec, '{1:-1.1,2:-1.1}/2');
-- 16 / sqrt(25 * 25) = 0.64
SELECT cosine_distance('{1:3,2:4}/3'::sparsevec, '{2:4,3:3}/3');
SELECT cosine_distance('{1:3,2:4}/3'::sparsevec, '{2:4,3:3}/3') = 1 - 16 / 25::float8 AS exact;
-- a zero vector gives NaN (pgvector's behaviour)
SELECT cosine_distance('{1:1,2:2}/2'::sparsevec, '{}/2');
SELECT '{}/1'::sparsevec <=> '{}/1';
-- no overflow in double (pgvector returns NaN here)
SELECT cosine_distance('{1:3e38}/1'::sparsevec, '{1:3e38}/1');

-- L2 distance
SELECT l2_distance('{}/2'::sparsevec, '{1:3,2:4}/2');
SELECT l2_distance('{1:3,2:4}/2'::sparsevec, '{}/2');
SELECT l2_distance('{1:3}/2'::sparsevec, '{2:4}/2');
SELECT l2_distance('{2:4}/2'::sparsevec, '{1:3}/2');
SELECT l2_distance('{}/2'::sparsevec, '{2:1}/2');
SELECT '{}/2'::sparsevec <-> '{1:3,2:4}/2';
SELECT '{1:1,2:2,3:3}/3'::sparsevec <-> '{1:1,2:2,3:3}/3';
-- (1-4)^2 + (0-1)^2 + (5-0)^2 + (0+1)^2 = 9 + 1 + 25 + 1 = 36
SELECT '{1:1,3:5}/4'::sparsevec <-> '{1:4,2:1,4:-1}/4';
-- sqrt(2 x^2) with x = float4(3e38): finite (pgvector returns Infinity)
SELECT l2_distance('{1:3e38}/2'::sparsevec, '{2:-3e38}/2');
SELECT l2_distance('{1:3e38}/2'::sparsevec, '{2:-3e38}/2')
	= sqrt(x * x + x * x) AS exact
FROM (SELECT '3e38'::real::float8) t(x);

-- L1 distance
SELECT l1_distance('{}/2'::sparsevec, '{1:3,2:4}/2');
SELECT l1_distance('{}/2'::sparsevec, '{2:1}/2');
SELECT '{}/2'::sparsevec <+> '{1:3,2:4}/2';
SELECT l1_distance('{1:1,3:3,5:5,7:7}/8'::sparsevec, '{2:2,4:4,6:6,8:8}/8');
SELECT l1_distance('{1:1,3:3,5:5,7:7,9:9}/9'::sparsevec, '{2:2,4:4,6:6,8:8}/9');
-- |1.5| + |-2 - 2| + |0 - 0.5| = 6
SELECT '{1:1.5,2:-2}/3'::sparsevec <+> '{2:2,3:0.5}/3';
-- 2x with x = float4(3e38): finite (pgvector returns Infinity)
SELECT l1_distance('{1:3e38}/1'::sparsevec, '{1:-3e38}/1');
SELECT l1_distance('{1:3e38}/1'::sparsevec, '{1:-3e38}/1') = 2 * '3e38'::real::float8 AS exact;

-- the operators commute
SELECT a <=> b = b <=> a AS cos, a <-> b = b <-> a AS l2, a <+> b = b <+> a AS l1
FROM (SELECT '{1:0.1,5:-3.7,9:1e-3}/9'::sparsevec, '{2:7.3,5:0.3,9:11}/9'::sparsevec) t(a, b);

-- different dimensions are an error (22000), for every binary function
SELECT f, pg_temp.try(format('SELECT %s', f)) AS error
FROM (VALUES
	($$inner_product('{1:1,2:2}/2'::sparsevec, '{1:3}/1')$$),
	($$'{1:1,2:2}/2'::sparsevec <#> '{1:3}/1'$$),
	($$'{}/1'::sparsevec <#> '{}/2'$$),
	($$cosine_distance('{1:1,2:2}/2'::sparsevec, '{1:3}/1')$$),
	($$'{1:1,2:2}/2'::sparsevec <=> '{1:3}/1'$$),
	($$l2_distance('{1:1,2:2}/2'::sparsevec, '{1:3}/1')$$),
	($$'{1:1,2:2}/2'::sparsevec <-> '{1:3}/1'$$),
	($$l1_distance('{1:1,2:2}/2'::sparsevec, '{1:3}/1')$$),
	($$'{1:1,2:2}/2'::sparsevec <+> '{1:3}/1'$$)
) t(f);
SELECT inner_product('{1:1,2:2}/2'::sparsevec, '{1:3}/1');

-- STRICT: NULL in, NULL out
SELECT '{1:1}/1'::sparsevec <#> NULL IS NULL AS a, l2_norm(NULL) IS NULL AS b;

-- L2 norm
SELECT l2_norm('{1:3,2:4}/2'::sparsevec);
SELECT l2_norm('{2:1}/2'::sparsevec);
SELECT l2_norm('{}/2'::sparsevec);
SELECT l2_norm('{1:-2}/1'::sparsevec);
SELECT round(l2_norm('{1:1,2:1}/2'::sparsevec)::numeric, 5);
SELECT l2_norm('{1:3e37,2:4e37}/2'::sparsevec)::real;
-- sqrt(2) * FLT_MAX = 4.812319096523503e+38, finite
SELECT l2_norm('{1:3.4028235e38,2:3.4028235e38}/2'::sparsevec);

-- L2 normalize: float4 values; elements that round to zero are dropped
SELECT l2_normalize('{1:3,2:4}/2'::sparsevec);
SELECT l2_normalize('{1:-3,3:4}/3'::sparsevec);
SELECT l2_normalize('{1:3}/2'::sparsevec);
SELECT l2_normalize('{2:0.1}/2'::sparsevec);
SELECT l2_normalize('{}/2'::sparsevec);
SELECT l2_normalize('{1:3e38}/1'::sparsevec);
SELECT l2_normalize('{1:3e38,2:1e-37}/2'::sparsevec);
SELECT l2_normalize('{2:3e37,4:3e-37,6:4e37,8:4e-37}/9'::sparsevec);
SELECT l2_normalize('{1:1e-45,2:1}/2'::sparsevec);
SELECT l2_normalize('{1:1e-45,2:1e10}/2'::sparsevec);
SELECT nnz(l2_normalize('{1:1e-45,2:1e10}/2'::sparsevec));

-- nnz and dims
SELECT nnz('{}/5'::sparsevec), dims('{}/5'::sparsevec);
SELECT nnz('{1:1,3:3}/5'::sparsevec), dims('{1:1,3:3}/5'::sparsevec);
SELECT nnz('{1:0,2:0,3:7}/1000000000'::sparsevec), dims('{1:0,2:0,3:7}/1000000000'::sparsevec);

-- comparison: the dense vectors compared element by element, then by
-- dimensions (pgvector's order)
SELECT '{1:1,2:2,3:3}/3'::sparsevec < '{1:1,2:2,3:3}/3';
SELECT '{1:1,2:2,3:3}/3'::sparsevec < '{1:1,2:2}/2';
SELECT '{1:1,2:2,3:3}/3'::sparsevec <= '{1:1,2:2,3:3}/3';
SELECT '{1:1,2:2,3:3}/3'::sparsevec <= '{1:1,2:2}/2';
SELECT '{1:1,2:2,3:3}/3'::sparsevec = '{1:1,2:2,3:3}/3';
SELECT '{1:1,2:2,3:3}/3'::sparsevec = '{1:1,2:2}/2';
SELECT '{1:1,2:2,3:3}/3'::sparsevec <> '{1:1,2:2,3:3}/3';
SELECT '{1:1,2:2,3:3}/3'::sparsevec <> '{1:1,2:2}/2';
SELECT '{1:1,2:2,3:3}/3'::sparsevec >= '{1:1,2:2,3:3}/3';
SELECT '{1:1,2:2,3:3}/3'::sparsevec >= '{1:1,2:2}/2';
SELECT '{1:1,2:2,3:3}/3'::sparsevec > '{1:1,2:2,3:3}/3';
SELECT '{1:1,2:2,3:3}/3'::sparsevec > '{1:1,2:2}/2';
SELECT a, b, sparsevec_cmp(a, b) AS cmp, sparsevec_cmp(b, a) AS rev
FROM (VALUES
	('{1:1,2:2,3:3}/3'::sparsevec, '{1:1,2:2,3:3}/3'::sparsevec),
	('{1:1,2:2,3:3}/3', '{}/3'),
	('{1:1,2:2}/2', '{1:1,2:2,3:3}/3'),
	('{1:1,2:2}/2', '{1:2,2:3,3:4}/3'),
	('{1:2,2:3}/2', '{1:1,2:2,3:3}/3'),
	('{1:-1}/2', '{}/2'),          -- [-1,0] < [0,0]
	('{2:1}/2', '{1:1}/2'),        -- [0,1] < [1,0]
	('{1:1}/2', '{1:1,2:-1}/2'),   -- [1,0] > [1,-1]
	('{1:1}/1', '{1:1}/2'),        -- a prefix sorts first
	('{2:1}/3', '{1:1}/1'),        -- [0,..] < [1]
	('{3:5}/3', '{1:1,2:1}/2'),    -- [0,0,5] < [1,1]
	('{}/2', '{}/3')
) t(a, b);

-- btree: ORDER BY, DISTINCT, a unique index
CREATE TABLE spv_cmp (v sparsevec);
INSERT INTO spv_cmp VALUES ('{1:1}/2'), ('{}/2'), ('{2:1}/2'), ('{1:-1}/2'),
	('{1:1,2:1}/2'), ('{1:1}/1'), (NULL), ('{2:1.0}/2');
SELECT v FROM spv_cmp ORDER BY v;
SELECT count(DISTINCT v) FROM spv_cmp;
SELECT v, count(*) FROM spv_cmp GROUP BY v ORDER BY v;
CREATE UNIQUE INDEX ON spv_cmp (v);
DELETE FROM spv_cmp a USING spv_cmp b WHERE a.v = b.v AND a.ctid > b.ctid;
CREATE UNIQUE INDEX spv_cmp_v ON spv_cmp (v);
INSERT INTO spv_cmp VALUES ('{2:1e0}/2');
INSERT INTO spv_cmp VALUES ('{2:1}/3');
-- (no bitmap scan: 18 prefers one, and a sort, on this unvacuumed table)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT v FROM spv_cmp WHERE v > '{}/2' ORDER BY v;
SELECT v FROM spv_cmp WHERE v > '{}/2' ORDER BY v;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE spv_cmp;

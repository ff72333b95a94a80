--
-- What a user moving from pgvector's sparsevec sees here: the same text and
-- binary formats, the same results, the same messages and SQLSTATEs for bad
-- input, for the functions, operators and casts both extensions have.
--
-- Everything above the last section prints, byte for byte, what pgvector
-- 0.8.0 prints for the same statements (checked by running this file in a
-- database with pgvector's extension instead of this one; doc/reference.md
-- "Differences from pgvector").  The last section holds the differences
-- kept on purpose, with pgvector's result in a comment.
--

-- r(sql): the single value sql returns, as text, or its error as
-- "SQLSTATE message | detail"
CREATE FUNCTION pg_temp.r(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
	state text;
	msg text;
	detail text;
BEGIN
	EXECUTE sql INTO result;
	RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL;
	RETURN state || ' ' || msg || CASE WHEN detail <> '' THEN ' | ' || detail ELSE '' END;
END
$$;

-- text input that is accepted, and how it prints
SELECT input, pg_temp.r(format('SELECT %L::sparsevec', input)) AS result
FROM (VALUES
	('{2:0.5,4:-8}/6'),
	('{4:-8,2:0.5}/6'),                 -- any order; printed in ascending order
	('  {  2 :  0.5 ,4:-8 } /  6  '),   -- spaces around every token
	(E'{2:0.5,\n4:-8}\t/6'),            -- other whitespace
	('{2:5.,4:-.25}/6'),                -- a dot without digits on one side
	('{2:7e-3,4:-2.5E+2}/6'),           -- exponents
	('{2:0,4:0,6:1}/6'),                -- zeros are dropped
	('{9:0}/6'),                        -- ... before the index is checked
	('{3:0,3:1}/6'),                    -- ... also a repeated index
	('{}/6'),
	('{ }/1'),
	('{1000000000:3}/1000000000'),
	('{1:0.3333333333}/1'),             -- rounded to real
	('{1:16777217}/1'),
	('{1:3.4028234e38,2:-3.4028234e38}/2'),
	('{1:1.2e-38}/1'),                  -- the smallest normal real
	('{1:0.1,2:100000000,3:0.000001,4:123456.7}/4')
) AS t (input);

-- text input that is rejected
SELECT input, pg_temp.r(format('SELECT %L::sparsevec', input)) AS result
FROM (VALUES
	(''),
	('6'),
	('[1,2,3]'),
	('{2:0.5'),
	('{2:0.5}'),
	('{2:0.5}/'),
	('{2:0.5}/6/'),
	('{2:0.5}/6x'),
	('{2:0.5}/x'),
	('{2:0.5}/6.5'),
	('{2:0.5,}/6'),
	('{,2:0.5}/6'),
	('{2:}/6'),
	('{:0.5}/6'),
	('{2 0.5}/6'),
	('{2:0.5:1}/6'),
	('{2.5:1}/6'),
	('{x:1}/6'),
	('{2:abc}/6'),
	('{2:1x}/6'),
	('{2:nan}/6'),
	('{2:NaN}/6'),
	('{2:inf}/6'),
	('{2:-Infinity}/6'),
	('{2:5e38}/6'),
	('{2:-5e38}/6'),
	('{2:1e-50}/6'),
	('{2:-1e-50}/6'),
	('{7:1}/6'),
	('{0:1}/6'),
	('{-1:1}/6'),
	('{4294967297:1}/6'),
	('{2:1,2:2}/6'),
	('{2:1,4:1,2:1}/6'),
	('{}/0'),
	('{}/-6'),
	('{}/1000000001'),
	('{}/4294967296'),
	('{}/99999999999999999999')
) AS t (input);

-- the typmod: sparsevec(n) checks the dimensions
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(6)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(5)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(7)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(0)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(-6)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(1000000001)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec(6, 1)$$);
SELECT pg_temp.r($$SELECT '{2:1}/6'::sparsevec('six')$$);
CREATE TABLE compat_t (v sparsevec(6));
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'compat_t'::regclass AND attname = 'v';
SELECT pg_temp.r($$INSERT INTO compat_t VALUES ('{1:1}/6') RETURNING v$$);
SELECT pg_temp.r($$INSERT INTO compat_t VALUES ('{1:1}/5') RETURNING v$$);
SELECT pg_temp.r($$UPDATE compat_t SET v = '{1:1}/7' RETURNING v$$);
DROP TABLE compat_t;

-- output does not depend on extra_float_digits: shortest digits that
-- read back as the same real
SET extra_float_digits = 0;
SELECT '{1:0.1,2:1.0000001,3:16777216}/3'::sparsevec;
SET extra_float_digits = 3;
SELECT '{1:0.1,2:1.0000001,3:16777216}/3'::sparsevec;
RESET extra_float_digits;

-- comparison: the dense vectors element by element, then the dimensions
SELECT a, b, a < b AS lt, a <= b AS le, a = b AS eq, a <> b AS ne, a >= b AS ge,
	a > b AS gt, sparsevec_cmp(a, b) AS cmp
FROM (VALUES
	('{1:2}/3'::sparsevec, '{1:2}/3'::sparsevec),
	('{1:2}/3', '{1:3}/3'),
	('{1:2}/3', '{2:2}/3'),            -- 2 > 0 at the first element
	('{2:-1}/3', '{}/3'),              -- -1 < 0 at the second
	('{1:2}/3', '{1:2}/4'),            -- equal elements: fewer dimensions first
	('{1:2,3:1}/3', '{1:2}/4'),        -- the elements decide before the dimensions
	('{}/3', '{}/2')
) AS t (a, b);
-- the btree class: ORDER BY, DISTINCT, a unique index
CREATE TABLE compat_o (id int, v sparsevec);
INSERT INTO compat_o VALUES (1, '{1:1}/2'), (2, '{2:1}/2'), (3, '{}/2'), (4, '{1:-1}/2'),
	(5, '{1:1}/3'), (6, '{2:1}/2'), (7, NULL);
SELECT id, v FROM compat_o ORDER BY v, id;
SELECT DISTINCT v FROM compat_o ORDER BY v;
SELECT pg_temp.r('CREATE UNIQUE INDEX ON compat_o (v)');
DELETE FROM compat_o WHERE id = 6;
CREATE UNIQUE INDEX compat_o_v ON compat_o (v);
SET enable_seqscan = off;
SELECT id FROM compat_o WHERE v = '{2:1}/2';
RESET enable_seqscan;
DROP TABLE compat_o;

-- distances and norms, on values whose results are exact in real and in
-- double precision alike
SELECT a, b,
	a <#> b AS neg_ip, inner_product(a, b) AS ip,
	a <=> b AS cos, cosine_distance(a, b) AS cosine_distance,
	a <-> b AS l2, l2_distance(a, b) AS l2_distance,
	a <+> b AS l1, l1_distance(a, b) AS l1_distance
FROM (VALUES
	('{1:3,2:4}/4'::sparsevec, '{1:3,2:4}/4'::sparsevec),
	('{1:3,2:4}/4', '{3:5}/4'),
	('{1:1,3:2}/4', '{2:2,3:4,4:1}/4'),
	('{1:1}/4', '{1:-1}/4'),
	('{1:1.5,4:-2}/4', '{}/4'),
	('{}/4', '{}/4'),
	('{1:0.5,2:0.25}/4', '{1:2,2:-4}/4')
) AS t (a, b);
SELECT v, l2_norm(v), l2_normalize(v)
FROM (VALUES ('{1:3,3:4}/3'::sparsevec), ('{2:-5}/3'), ('{}/3'), ('{1:6,2:8}/3'),
	('{1:1,2:1,3:1,4:1}/4')) AS t (v);
-- different dimensions: every operator and function
SELECT f, pg_temp.r(format('SELECT %s', f)) AS result
FROM (VALUES
	($$'{1:1}/3'::sparsevec <#> '{1:1}/2'$$),
	($$'{1:1}/3'::sparsevec <=> '{1:1}/2'$$),
	($$'{1:1}/3'::sparsevec <-> '{1:1}/2'$$),
	($$'{1:1}/3'::sparsevec <+> '{1:1}/2'$$),
	($$inner_product('{1:1}/2'::sparsevec, '{1:1}/3')$$),
	($$cosine_distance('{1:1}/2'::sparsevec, '{1:1}/3')$$),
	($$l2_distance('{1:1}/2'::sparsevec, '{1:1}/3')$$),
	($$l1_distance('{1:1}/2'::sparsevec, '{1:1}/3')$$),
	($$sparsevec_negative_inner_product('{1:1}/2'::sparsevec, '{1:1}/3')$$)
) AS t (f);

-- casts from arrays: dense, zeros dropped, dims = length
SELECT c, pg_temp.r(format('SELECT %s', c)) AS result
FROM (VALUES
	($$'{0,7,0,-1}'::int[]::sparsevec$$),
	($$'{0,7,0,-1}'::int[]::sparsevec(4)$$),
	($$'{0,7,0,-1}'::int[]::sparsevec(3)$$),
	($$'{0.5,0,2.25}'::real[]::sparsevec$$),
	($$'{0.5,0,2.25}'::float8[]::sparsevec$$),
	($$'{0.5,0,2.25}'::numeric[]::sparsevec$$),
	($$'{0,0,0}'::real[]::sparsevec$$),
	($$'{1,NULL,2}'::real[]::sparsevec$$),
	($$'{1,NaN}'::real[]::sparsevec$$),
	($$'{-Infinity}'::float8[]::sparsevec$$),
	($$'{1e39}'::float8[]::sparsevec$$),
	($$'{}'::real[]::sparsevec$$),
	($$'{{1,2},{3,4}}'::int[]::sparsevec$$),
	($$'[0:2]={1,0,3}'::real[]::sparsevec$$)
) AS t (c);
-- in an INSERT (assignment casts)
CREATE TABLE compat_a (v sparsevec(3));
INSERT INTO compat_a VALUES ('{0,1,2}'::int[]), ('{1.5,0,0}'::real[]);
SELECT * FROM compat_a;
DROP TABLE compat_a;

-- binary format: what send writes, what COPY (FORMAT binary) reads
SELECT sparsevec_send('{2:0.5,4:-8}/6');
SELECT sparsevec_send('{}/6');
CREATE TABLE compat_b (v sparsevec);
CREATE TABLE compat_b6 (v sparsevec(6));
-- b(hex, table): COPY a one-field binary file holding these bytes (a bytea
-- field is, byte for byte, a sparsevec field with the same bytes) into the
-- table, then the value it holds, or the error
CREATE FUNCTION pg_temp.b(hex text, tbl text DEFAULT 'compat_b') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	path text := current_setting('data_directory') || '/compat_' || pg_backend_pid() || '.bin';
	res text;
BEGIN
	EXECUTE format('COPY (SELECT decode(%L, ''hex'')) TO %L (FORMAT binary)', hex, path);
	EXECUTE format('TRUNCATE %I', tbl);
	res := pg_temp.r(format('COPY %I FROM %L (FORMAT binary)', tbl, path));
	IF res <> 'NULL' THEN
		RETURN res;
	END IF;
	RETURN pg_temp.r(format('SELECT v::text FROM %I', tbl));
END
$$;
SELECT what, pg_temp.b(hex, tbl) AS result
FROM (VALUES
	('two elements',      '00000006' || '00000002' || '00000000' || '00000001' || '00000003' || '3f000000' || 'c1000000', 'compat_b'),
	('into sparsevec(6)', '00000006' || '00000002' || '00000000' || '00000001' || '00000003' || '3f000000' || 'c1000000', 'compat_b6'),
	('into sparsevec(6), dims 5', '00000005' || '00000000' || '00000000', 'compat_b6'),
	('empty',             '00000006' || '00000000' || '00000000', 'compat_b'),
	('unused 7',          '00000006' || '00000000' || '00000007', 'compat_b'),
	('zero value',        '00000006' || '00000001' || '00000000' || '00000001' || '00000000', 'compat_b'),
	('descending',        '00000006' || '00000002' || '00000000' || '00000003' || '00000001' || '3f800000' || '3f800000', 'compat_b'),
	('repeated index',    '00000006' || '00000002' || '00000000' || '00000003' || '00000003' || '3f800000' || '3f800000', 'compat_b'),
	('index = dims',      '00000006' || '00000001' || '00000000' || '00000006' || '3f800000', 'compat_b'),
	('index -1',          '00000006' || '00000001' || '00000000' || 'ffffffff' || '3f800000', 'compat_b'),
	('NaN',               '00000006' || '00000001' || '00000000' || '00000001' || '7fc00000', 'compat_b'),
	('-infinity',         '00000006' || '00000001' || '00000000' || '00000001' || 'ff800000', 'compat_b'),
	('nnz -1',            '00000006' || 'ffffffff' || '00000000', 'compat_b'),
	('nnz > dims',        '00000001' || '00000002' || '00000000' || '00000000' || '00000001' || '3f800000' || '3f800000', 'compat_b'),
	('dims 0',            '00000000' || '00000000' || '00000000', 'compat_b'),
	('dims 1000000001',   '3b9aca01' || '00000000' || '00000000', 'compat_b'),
	('eight bytes',       '00000006' || '00000001', 'compat_b'),
	('trailing byte',     '00000006' || '00000000' || '00000000' || '00', 'compat_b')
) AS t (what, hex, tbl);

--
-- Differences kept on purpose (doc/reference.md "Differences from
-- pgvector"); pgvector 0.8.0's result in the comment.
--
-- Distances are accumulated in double precision: other last digits ...
SELECT '{1:0.1,2:0.2}/2'::sparsevec <#> '{1:0.3,2:0.7}/2';        -- -0.17000000178813934
SELECT l2_distance('{1:0.1,2:0.2}/2'::sparsevec, '{1:0.3,2:0.7}/2');  -- 0.5385165006363984
-- ... and no overflow where real overflows
SELECT inner_product('{1:2e38}/1'::sparsevec, '{1:2e38}/1');      -- Infinity
SELECT l1_distance('{1:2e38}/1'::sparsevec, '{1:-2e38}/1');       -- Infinity
SELECT cosine_distance('{1:2e38}/1'::sparsevec, '{1:2e38}/1');    -- NaN
-- More than 16,000 non-zeros in text (and binary) input (pgvector: 54000,
-- sparsevec cannot have more than 16000 non-zero elements; its cast from an
-- array makes such a value all the same)
SELECT pg_temp.r($$SELECT length(('{' || string_agg(i || ':1', ',') || '}/16001')::sparsevec::text)
	FROM generate_series(1, 16001) i$$);
-- A short binary message says what is missing (pgvector: 08P01 insufficient
-- data left in message, no detail)
SELECT pg_temp.b('00000006' || '00000002' || '00000000' || '00000001' || '00000003' || '3f000000');
DROP TABLE compat_b, compat_b6;
-- Only here: nnz, dims, to_sparsevec, sparsevec_from_jsonb, the cast to
-- real[] (pgvector has casts to and from its vector and halfvec instead)
SELECT nnz('{2:1,5:1}/6'), dims('{2:1,5:1}/6'), '{2:1,5:1}/6'::sparsevec::real[];
-- <> estimates its selectivity with neqsel (pgvector: eqsel, as for =)
SELECT oprrest, oprjoin FROM pg_operator
WHERE oprname = '<>' AND oprleft = 'sparsevec'::regtype AND oprright = 'sparsevec'::regtype;

-- remove pg_temp.b's scratch file
SELECT format('COPY (SELECT 1 WHERE false) TO PROGRAM %L',
	'rm -f ' || current_setting('data_directory') || '/compat_' || pg_backend_pid() || '.bin') AS rm \gset
:rm;

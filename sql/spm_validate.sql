--
-- sparse_maxscore: amvalidate.  The index computes its scores itself, so
-- an operator class is only right if its operator 1 is an ORDER BY
-- operator (returning float8) that calls support function 1, and support
-- function 1 is the C function behind <#> or <=> (sparsevec_cosine_ops).
-- amvalidate reports each problem as an INFO message and returns false.
--
SELECT opc.opcname, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE am.amname = 'sparse_maxscore'
ORDER BY 1;

-- the same C function under another name is the same function
CREATE FUNCTION spm_v_nip(sparsevec, sparsevec) RETURNS float8
	AS '$libdir/sparsevec', 'spv_sparsevec_negative_inner_product'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OPERATOR <##> (LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = spm_v_nip);
CREATE OPERATOR CLASS spm_v_alias FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <##> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 spm_v_nip(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_alias';
-- and an index with it answers <##> like <#>
CREATE TABLE spm_v (id int, v sparsevec);
INSERT INTO spm_v VALUES (1, '{1:1}/3'), (2, '{1:2}/3'), (3, '{2:1}/3'), (4, NULL);
CREATE INDEX spm_v_idx ON spm_v USING sparse_maxscore (v spm_v_alias);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM spm_v ORDER BY v <##> '{1:1}/3';
SELECT id, v <##> '{1:1}/3' AS d FROM spm_v ORDER BY v <##> '{1:1}/3';
RESET enable_seqscan;
DROP TABLE spm_v;

-- support function 1 is not the score function: a SQL wrapper computing
-- the same values, or another distance
CREATE FUNCTION spm_v_wrap(sparsevec, sparsevec) RETURNS float8
	AS 'SELECT $1 <#> $2' LANGUAGE sql IMMUTABLE STRICT;
CREATE OPERATOR <#~> (LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = spm_v_wrap);
CREATE OPERATOR CLASS spm_v_wrapped FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#~> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 spm_v_wrap(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_wrapped';
CREATE OPERATOR CLASS spm_v_l1 FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <+> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 l1_distance(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_l1';
-- (the L2 distance is one the index serves: a copy of sparsevec_l2_ops
-- is valid)
CREATE OPERATOR CLASS spm_v_l2 FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <-> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 l2_distance(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_l2';

-- the operator does not call support function 1
CREATE OPERATOR CLASS spm_v_mixed FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <-> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_mixed';

-- operator 1 is a search operator, not FOR ORDER BY
CREATE OPERATOR CLASS spm_v_search FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 = (sparsevec, sparsevec),
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_search';

-- an ORDER BY operator of the wrong result type
CREATE FUNCTION spm_v_int(sparsevec, sparsevec) RETURNS int
	AS 'SELECT nnz($1) + nnz($2)' LANGUAGE sql IMMUTABLE STRICT;
CREATE OPERATOR <#!> (LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = spm_v_int);
CREATE OPERATOR CLASS spm_v_inttype FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#!> (sparsevec, sparsevec) FOR ORDER BY integer_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_inttype';

-- extra members: strategy 2; support function 2 is refused outright
-- (amsupport = 1)
CREATE OPERATOR CLASS spm_v_strategy2 FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	OPERATOR 2 <-> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_strategy2';
CREATE OPERATOR CLASS spm_v_support2 FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec),
	FUNCTION 2 l2_distance(sparsevec, sparsevec);

-- missing members
CREATE OPERATOR CLASS spm_v_nofunc FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY float_ops;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_nofunc';
CREATE OPERATOR CLASS spm_v_noop FOR TYPE sparsevec USING sparse_maxscore AS
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_noop';

-- a sort family that cannot sort the operator's float8 result (the
-- planner would never match it to ORDER BY v <#> q; GiST's amvalidate
-- rejects the same with "invalid ORDER BY specification")
CREATE OPERATOR CLASS spm_v_sortfamily FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY integer_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_sortfamily';

-- a member added to a good family later breaks it
CREATE OPERATOR CLASS spm_v_later FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_later';
ALTER OPERATOR FAMILY spm_v_later USING sparse_maxscore
	ADD OPERATOR 3 <+> (sparsevec, sparsevec) FOR ORDER BY float_ops;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'spm_v_later';

DROP OPERATOR FAMILY spm_v_alias USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_wrapped USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_l1 USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_l2 USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_mixed USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_search USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_inttype USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_strategy2 USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_nofunc USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_noop USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_sortfamily USING sparse_maxscore;
DROP OPERATOR FAMILY spm_v_later USING sparse_maxscore;
DROP OPERATOR <##> (sparsevec, sparsevec);
DROP OPERATOR <#~> (sparsevec, sparsevec);
DROP OPERATOR <#!> (sparsevec, sparsevec);
DROP FUNCTION spm_v_nip, spm_v_wrap, spm_v_int;

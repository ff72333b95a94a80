-- sparsevec 0.2.0 -> 0.3.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.3.0'" to load this file. \quit

-- Each topic of 0.3.0 adds a block of its own below.

------------------------------------------------------------------------
-- cosine distance for sparse_maxscore (issue 39)
------------------------------------------------------------------------
-- An index of this class stores each document's weights divided by its
-- norm and serves ORDER BY v <=> q exactly: it hands the executor a lower
-- bound of each row's distance and the executor rechecks the exact <=>
-- (src/README "Cosine and L2").

CREATE OPERATOR CLASS sparsevec_cosine_ops
	FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <=> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 cosine_distance(sparsevec, sparsevec);

COMMENT ON OPERATOR CLASS sparsevec_cosine_ops USING sparse_maxscore IS
	'cosine distance (<=>) ordering for sparse_maxscore';

COMMENT ON OPERATOR FAMILY sparsevec_cosine_ops USING sparse_maxscore IS
	'cosine distance (<=>) ordering for sparse_maxscore';

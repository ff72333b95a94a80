-- sparsevec 0.1.0: the sparsevec type and the sparse_maxscore index

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION sparsevec" to load this file. \quit

------------------------------------------------------------------------
-- the sparsevec type
------------------------------------------------------------------------

------------------------------------------------------------------------
-- the sparse_maxscore index access method
------------------------------------------------------------------------

CREATE FUNCTION spmhandler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE ACCESS METHOD sparse_maxscore TYPE INDEX HANDLER spmhandler;

COMMENT ON ACCESS METHOD sparse_maxscore IS
	'exact top-k retrieval over sparse vectors: ORDER BY v <#> query [LIMIT k] returns what a sequential scan returns';

CREATE OPERATOR CLASS sparsevec_ip_ops
	DEFAULT FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);

COMMENT ON OPERATOR CLASS sparsevec_ip_ops USING sparse_maxscore IS
	'negative inner product (<#>) ordering for sparse_maxscore';

CREATE FUNCTION sparse_maxscore_last_scan(
	OUT rounds bigint,
	OUT postings_decoded bigint,
	OUT blocks_decoded bigint,
	OUT blocks_skipped bigint,
	OUT windows bigint,
	OUT windows_skipped bigint,
	OUT candidates_scored bigint,
	OUT rows_returned bigint)
	RETURNS record
	AS 'MODULE_PATHNAME', 'spm_last_scan_sql'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION sparse_maxscore_last_scan() IS
	'work counters of the most recent sparse_maxscore index scan in this session';

-- sparsevec 0.2.0 -> 0.3.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.3.0'" to load this file. \quit

-- Each topic of 0.3.0 adds a block of its own below (doc/versions.md).

------------------------------------------------------------------------
-- issue 40, findings: sparse_maxscore_last_scan()
------------------------------------------------------------------------

-- A thirteenth column, pending_scored: the pending-list documents the scan
-- scored by brute force.  Appended in place, in the function's pg_proc row,
-- as 0.1.0 -> 0.2.0 does (see there): a user's view that selects from the
-- function keeps its columns and goes on working, where DROP FUNCTION
-- would fail (or take the view with it).  The function now returns NULL
-- while the session has run no index scan (the library decides that, for
-- every version's declaration).

UPDATE pg_catalog.pg_proc
SET proallargtypes = pg_catalog.array_fill('pg_catalog.int8'::pg_catalog.regtype::pg_catalog.oid, ARRAY[13]),
	proargmodes = pg_catalog.array_fill('o'::"char", ARRAY[13]),
	proargnames = ARRAY['rounds', 'postings_decoded', 'blocks_decoded',
		'blocks_skipped', 'windows', 'windows_skipped', 'candidates_scored',
		'rows_returned', 'segments_exhaustive', 'segments_maxscore',
		'segments_ranges', 'segments_ranges_gave_up', 'pending_scored']
WHERE proname = 'sparse_maxscore_last_scan' AND pronargs = 0
  AND pronamespace = (SELECT extnamespace FROM pg_catalog.pg_extension
					  WHERE extname = 'sparsevec');

COMMENT ON FUNCTION sparse_maxscore_last_scan() IS
	'work counters of the most recent sparse_maxscore index scan in this session; NULL if it ran none';

------------------------------------------------------------------------
-- BM25 ingest in bulk (issue 40): aggregates for set-based statistics
------------------------------------------------------------------------

-- A load or a rebuild computes the vocabulary and the statistics of many
-- documents in one pass (bm25_corpus_stats over their tsvectors), and a
-- refresh recounts document frequencies from the stored vectors without
-- the text (bm25_dim_stats).  examples/bm25/recipe.sql uses both; README
-- "BM25 from text".

CREATE TYPE bm25_corpus_stats AS (n_docs bigint, sum_dl bigint, lexemes text[], df bigint[]);

COMMENT ON TYPE bm25_corpus_stats IS
	'what bm25_corpus_stats returns: documents, the sum of their lengths, each lexeme with its document frequency';

-- PostgreSQL 18 records a type's array type as a member too
COMMENT ON TYPE bm25_corpus_stats[] IS 'array of bm25_corpus_stats';

CREATE FUNCTION bm25_corpus_stats_trans(internal, tsvector, bigint) RETURNS internal
	AS 'MODULE_PATHNAME', 'spv_bm25_corpus_stats_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bm25_corpus_stats_trans(internal, tsvector, bigint) IS
	'transition function of the aggregate bm25_corpus_stats';

CREATE FUNCTION bm25_corpus_stats_final(internal) RETURNS bm25_corpus_stats
	AS 'MODULE_PATHNAME', 'spv_bm25_corpus_stats_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bm25_corpus_stats_final(internal) IS
	'final function of the aggregate bm25_corpus_stats';

CREATE AGGREGATE bm25_corpus_stats(doc tsvector, ord bigint) (
	SFUNC = bm25_corpus_stats_trans,
	STYPE = internal,
	FINALFUNC = bm25_corpus_stats_final,
	PARALLEL = SAFE);

COMMENT ON AGGREGATE bm25_corpus_stats(tsvector, bigint) IS
	'BM25 statistics of documents: their number, the sum of their lengths (bm25_doclen), and each lexeme with its document frequency, in the order of first appearance by ord';

CREATE TYPE bm25_dim_stats AS (n_docs bigint, dims integer[], df bigint[]);

COMMENT ON TYPE bm25_dim_stats IS
	'what bm25_dim_stats returns: vectors, and each dimension with the number of vectors it is non-zero in';

COMMENT ON TYPE bm25_dim_stats[] IS 'array of bm25_dim_stats';

CREATE FUNCTION bm25_dim_stats_trans(internal, sparsevec) RETURNS internal
	AS 'MODULE_PATHNAME', 'spv_bm25_dim_stats_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bm25_dim_stats_trans(internal, sparsevec) IS
	'transition function of the aggregate bm25_dim_stats';

CREATE FUNCTION bm25_dim_stats_final(internal) RETURNS bm25_dim_stats
	AS 'MODULE_PATHNAME', 'spv_bm25_dim_stats_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bm25_dim_stats_final(internal) IS
	'final function of the aggregate bm25_dim_stats';

CREATE AGGREGATE bm25_dim_stats(sparsevec) (
	SFUNC = bm25_dim_stats_trans,
	STYPE = internal,
	FINALFUNC = bm25_dim_stats_final,
	PARALLEL = SAFE);

COMMENT ON AGGREGATE bm25_dim_stats(sparsevec) IS
	'document frequencies from BM25 document vectors: their number, and each dimension (1-based) with the number of vectors it is non-zero in';

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

------------------------------------------------------------------------
-- L2 distance for sparse_maxscore
------------------------------------------------------------------------
-- An index of this class stores, for each non-empty document, one more
-- posting on a term past the index's dimensions holding -|d|^2 / 2
-- (rounded towards zero), and serves ORDER BY v <-> q exactly: it ranks
-- rows by q.d - |d|^2 / 2, hands the executor a lower bound of each row's
-- distance and the executor rechecks the exact <-> (src/README "Cosine and
-- L2").

CREATE OPERATOR CLASS sparsevec_l2_ops
	FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <-> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 l2_distance(sparsevec, sparsevec);

COMMENT ON OPERATOR CLASS sparsevec_l2_ops USING sparse_maxscore IS
	'L2 distance (<->) ordering for sparse_maxscore';

COMMENT ON OPERATOR FAMILY sparsevec_l2_ops USING sparse_maxscore IS
	'L2 distance (<->) ordering for sparse_maxscore';

------------------------------------------------------------------------
-- issue 37: what the policy chose and expected, per segment
------------------------------------------------------------------------
-- A fourteenth column of sparse_maxscore_last_scan(), postings_estimated:
-- the postings the policy expected the kernels it chose to decode, next
-- to postings_decoded.  Appended in place as the issue 40 block above
-- does, so that a user's view keeps working.

UPDATE pg_catalog.pg_proc
SET proallargtypes = pg_catalog.array_fill('pg_catalog.int8'::pg_catalog.regtype::pg_catalog.oid, ARRAY[14]),
	proargmodes = pg_catalog.array_fill('o'::"char", ARRAY[14]),
	proargnames = ARRAY['rounds', 'postings_decoded', 'blocks_decoded',
		'blocks_skipped', 'windows', 'windows_skipped', 'candidates_scored',
		'rows_returned', 'segments_exhaustive', 'segments_maxscore',
		'segments_ranges', 'segments_ranges_gave_up', 'pending_scored',
		'postings_estimated']
WHERE proname = 'sparse_maxscore_last_scan' AND pronargs = 0
  AND pronamespace = (SELECT extnamespace FROM pg_catalog.pg_extension
					  WHERE extname = 'sparsevec');

-- One row per segment of each pass of the same scan (top-k rounds, sorted
-- passes, zero batches): which kernel scored it, the query terms'
-- postings in it, the policy's estimate and what was decoded (src/README
-- "Choosing the kernel").
CREATE FUNCTION sparse_maxscore_last_scan_segments(
	OUT round integer,
	OUT pass text,
	OUT segment integer,
	OUT algorithm text,
	OUT query_postings bigint,
	OUT postings_estimated bigint,
	OUT postings_decoded bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'spm_last_scan_segments_sql'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 4;

COMMENT ON FUNCTION sparse_maxscore_last_scan_segments() IS
	'what each segment ran in each pass of the most recent sparse_maxscore index scan in this session: the algorithm, the query terms'' postings, the policy''s estimate and the postings decoded';

------------------------------------------------------------------------
-- issue 38: what each segment of an index holds
------------------------------------------------------------------------
-- One row per segment: its documents and postings, whether its weights
-- are quantized and whether it has range data, and how its pages divide
-- between postings, skip entries, dictionary, the forward copy, the range
-- maxima and index, and the rest (src/README "Segments", "Ranges").  The
-- same access as sparse_maxscore_info.

CREATE FUNCTION sparse_maxscore_segments(
	index regclass,
	OUT segment integer,
	OUT documents bigint,
	OUT dead_documents bigint,
	OUT null_documents bigint,
	OUT postings bigint,
	OUT terms bigint,
	OUT quantized boolean,
	OUT range_data boolean,
	OUT pages bigint,
	OUT posting_pages bigint,
	OUT skip_pages bigint,
	OUT dictionary_pages bigint,
	OUT forward_pages bigint,
	OUT range_pages bigint,
	OUT other_pages bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'spm_segments_sql'
	LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 8;

COMMENT ON FUNCTION sparse_maxscore_segments(regclass) IS
	'one row per segment of a sparse_maxscore index: documents, postings, terms, quantized weights, range data, and its pages by what they hold';

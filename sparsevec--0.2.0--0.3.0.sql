-- sparsevec 0.2.0 -> 0.3.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.3.0'" to load this file. \quit

-- 0.3.0 adds objects; each topic is a block of its own below.

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

-- sparsevec 0.3.0: the sparsevec type and the sparse_maxscore index
--
-- A fresh install of 0.3.0: sparsevec--0.2.0.sql, then one block per
-- topic of 0.3.0 at the end, each doing what its block of
-- sparsevec--0.2.0--0.3.0.sql does.  An install of 0.1.0 or 0.2.0 reaches
-- the same objects with the update scripts (ALTER EXTENSION sparsevec
-- UPDATE); sql/sparsevec_upgrade.sql checks that they agree.  Versions and the
-- on-disk format: doc/versions.md.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION sparsevec" to load this file. \quit

------------------------------------------------------------------------
-- the sparsevec type
------------------------------------------------------------------------

-- Text and binary formats are pgvector's; C symbols carry the spv_ prefix
-- (pgvector's library exports the plain names).  Functions are IMMUTABLE
-- STRICT PARALLEL SAFE.  Every object has a COMMENT.

CREATE TYPE sparsevec;

CREATE FUNCTION sparsevec_in(cstring, oid, integer) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_sparsevec_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_in(cstring, oid, integer) IS 'I/O';

CREATE FUNCTION sparsevec_out(sparsevec) RETURNS cstring
	AS 'MODULE_PATHNAME', 'spv_sparsevec_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_out(sparsevec) IS 'I/O';

CREATE FUNCTION sparsevec_typmod_in(cstring[]) RETURNS integer
	AS 'MODULE_PATHNAME', 'spv_sparsevec_typmod_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_typmod_in(cstring[]) IS 'I/O typmod';

CREATE FUNCTION sparsevec_recv(internal, oid, integer) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_sparsevec_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_recv(internal, oid, integer) IS 'I/O';

CREATE FUNCTION sparsevec_send(sparsevec) RETURNS bytea
	AS 'MODULE_PATHNAME', 'spv_sparsevec_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_send(sparsevec) IS 'I/O';

CREATE TYPE sparsevec (
	INPUT     = sparsevec_in,
	OUTPUT    = sparsevec_out,
	TYPMOD_IN = sparsevec_typmod_in,
	RECEIVE   = sparsevec_recv,
	SEND      = sparsevec_send,
	STORAGE   = external
);

COMMENT ON TYPE sparsevec IS 'single-precision sparse vector';

-- sparsevec functions

CREATE FUNCTION inner_product(sparsevec, sparsevec) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_inner_product' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION inner_product(sparsevec, sparsevec) IS 'inner product, summed in double precision in ascending index order';

CREATE FUNCTION sparsevec_negative_inner_product(sparsevec, sparsevec) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_sparsevec_negative_inner_product' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_negative_inner_product(sparsevec, sparsevec) IS 'negative inner product (the <#> operator and the sparse_maxscore score)';

CREATE FUNCTION cosine_distance(sparsevec, sparsevec) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_cosine_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION cosine_distance(sparsevec, sparsevec) IS 'cosine distance (NaN if either vector is zero)';

CREATE FUNCTION l2_distance(sparsevec, sparsevec) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_l2_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION l2_distance(sparsevec, sparsevec) IS 'Euclidean distance';

CREATE FUNCTION l1_distance(sparsevec, sparsevec) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_l1_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION l1_distance(sparsevec, sparsevec) IS 'taxicab distance';

CREATE FUNCTION l2_norm(sparsevec) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_l2_norm' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION l2_norm(sparsevec) IS 'Euclidean norm';

CREATE FUNCTION l2_normalize(sparsevec) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_l2_normalize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION l2_normalize(sparsevec) IS 'normalize with Euclidean norm; elements that round to zero are dropped';

CREATE FUNCTION nnz(sparsevec) RETURNS integer
	AS 'MODULE_PATHNAME', 'spv_nnz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION nnz(sparsevec) IS 'number of non-zero elements';

CREATE FUNCTION dims(sparsevec) RETURNS integer
	AS 'MODULE_PATHNAME', 'spv_dims' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dims(sparsevec) IS 'number of dimensions';

CREATE FUNCTION to_sparsevec(indices integer[], vals real[], dims integer) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_to_sparsevec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION to_sparsevec(integer[], real[], integer) IS 'build a sparsevec from 1-based indices (any order) and values; zeros are dropped';

CREATE FUNCTION sparsevec_from_jsonb(jsonb, dims integer) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_sparsevec_from_jsonb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_from_jsonb(jsonb, integer) IS 'build a sparsevec from a jsonb object of 0-based token ids to weights, such as {"17": 0.8}';

-- sparsevec comparison functions (btree support)

CREATE FUNCTION sparsevec_lt(sparsevec, sparsevec) RETURNS bool
	AS 'MODULE_PATHNAME', 'spv_sparsevec_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_lt(sparsevec, sparsevec) IS 'implementation of < operator';

CREATE FUNCTION sparsevec_le(sparsevec, sparsevec) RETURNS bool
	AS 'MODULE_PATHNAME', 'spv_sparsevec_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_le(sparsevec, sparsevec) IS 'implementation of <= operator';

CREATE FUNCTION sparsevec_eq(sparsevec, sparsevec) RETURNS bool
	AS 'MODULE_PATHNAME', 'spv_sparsevec_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_eq(sparsevec, sparsevec) IS 'implementation of = operator';

CREATE FUNCTION sparsevec_ne(sparsevec, sparsevec) RETURNS bool
	AS 'MODULE_PATHNAME', 'spv_sparsevec_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_ne(sparsevec, sparsevec) IS 'implementation of <> operator';

CREATE FUNCTION sparsevec_ge(sparsevec, sparsevec) RETURNS bool
	AS 'MODULE_PATHNAME', 'spv_sparsevec_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_ge(sparsevec, sparsevec) IS 'implementation of >= operator';

CREATE FUNCTION sparsevec_gt(sparsevec, sparsevec) RETURNS bool
	AS 'MODULE_PATHNAME', 'spv_sparsevec_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_gt(sparsevec, sparsevec) IS 'implementation of > operator';

CREATE FUNCTION sparsevec_cmp(sparsevec, sparsevec) RETURNS integer
	AS 'MODULE_PATHNAME', 'spv_sparsevec_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_cmp(sparsevec, sparsevec) IS 'less-equal-greater';

-- sparsevec cast functions

CREATE FUNCTION sparsevec(sparsevec, integer, boolean) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_sparsevec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec(sparsevec, integer, boolean) IS 'adjust sparsevec to typmod';

CREATE FUNCTION array_to_sparsevec(integer[], integer, boolean) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_array_to_sparsevec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION array_to_sparsevec(integer[], integer, boolean) IS 'convert int4 array to sparsevec';

CREATE FUNCTION array_to_sparsevec(real[], integer, boolean) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_array_to_sparsevec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION array_to_sparsevec(real[], integer, boolean) IS 'convert float4 array to sparsevec';

CREATE FUNCTION array_to_sparsevec(double precision[], integer, boolean) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_array_to_sparsevec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION array_to_sparsevec(double precision[], integer, boolean) IS 'convert float8 array to sparsevec';

CREATE FUNCTION array_to_sparsevec(numeric[], integer, boolean) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_array_to_sparsevec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION array_to_sparsevec(numeric[], integer, boolean) IS 'convert numeric array to sparsevec';

CREATE FUNCTION sparsevec_to_float4(sparsevec, integer, boolean) RETURNS real[]
	AS 'MODULE_PATHNAME', 'spv_sparsevec_to_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sparsevec_to_float4(sparsevec, integer, boolean) IS 'convert sparsevec to a dense float4 array';

-- sparsevec casts

CREATE CAST (sparsevec AS sparsevec)
	WITH FUNCTION sparsevec(sparsevec, integer, boolean) AS IMPLICIT;

COMMENT ON CAST (sparsevec AS sparsevec) IS 'check the typmod (dimensions)';

CREATE CAST (integer[] AS sparsevec)
	WITH FUNCTION array_to_sparsevec(integer[], integer, boolean) AS ASSIGNMENT;

COMMENT ON CAST (integer[] AS sparsevec) IS 'dense int4 array to sparsevec';

CREATE CAST (real[] AS sparsevec)
	WITH FUNCTION array_to_sparsevec(real[], integer, boolean) AS ASSIGNMENT;

COMMENT ON CAST (real[] AS sparsevec) IS 'dense float4 array to sparsevec';

CREATE CAST (double precision[] AS sparsevec)
	WITH FUNCTION array_to_sparsevec(double precision[], integer, boolean) AS ASSIGNMENT;

COMMENT ON CAST (double precision[] AS sparsevec) IS 'dense float8 array to sparsevec';

CREATE CAST (numeric[] AS sparsevec)
	WITH FUNCTION array_to_sparsevec(numeric[], integer, boolean) AS ASSIGNMENT;

COMMENT ON CAST (numeric[] AS sparsevec) IS 'dense numeric array to sparsevec';

CREATE CAST (sparsevec AS real[])
	WITH FUNCTION sparsevec_to_float4(sparsevec, integer, boolean) AS ASSIGNMENT;

COMMENT ON CAST (sparsevec AS real[]) IS 'sparsevec to dense float4 array';

-- sparsevec operators

CREATE OPERATOR <#> (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_negative_inner_product,
	COMMUTATOR = '<#>'
);

COMMENT ON OPERATOR <#> (sparsevec, sparsevec) IS 'negative inner product';

CREATE OPERATOR <=> (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = cosine_distance,
	COMMUTATOR = '<=>'
);

COMMENT ON OPERATOR <=> (sparsevec, sparsevec) IS 'cosine distance';

CREATE OPERATOR <-> (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = l2_distance,
	COMMUTATOR = '<->'
);

COMMENT ON OPERATOR <-> (sparsevec, sparsevec) IS 'Euclidean distance';

CREATE OPERATOR <+> (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = l1_distance,
	COMMUTATOR = '<+>'
);

COMMENT ON OPERATOR <+> (sparsevec, sparsevec) IS 'taxicab distance';

CREATE OPERATOR < (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_lt,
	COMMUTATOR = > , NEGATOR = >= ,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

COMMENT ON OPERATOR < (sparsevec, sparsevec) IS 'less than';

CREATE OPERATOR <= (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_le,
	COMMUTATOR = >= , NEGATOR = > ,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

COMMENT ON OPERATOR <= (sparsevec, sparsevec) IS 'less than or equal';

CREATE OPERATOR = (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_eq,
	COMMUTATOR = = , NEGATOR = <> ,
	RESTRICT = eqsel, JOIN = eqjoinsel
);

COMMENT ON OPERATOR = (sparsevec, sparsevec) IS 'equal';

CREATE OPERATOR <> (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_ne,
	COMMUTATOR = <> , NEGATOR = = ,
	RESTRICT = neqsel, JOIN = neqjoinsel
);

COMMENT ON OPERATOR <> (sparsevec, sparsevec) IS 'not equal';

CREATE OPERATOR >= (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_ge,
	COMMUTATOR = <= , NEGATOR = < ,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR >= (sparsevec, sparsevec) IS 'greater than or equal';

CREATE OPERATOR > (
	LEFTARG = sparsevec, RIGHTARG = sparsevec, PROCEDURE = sparsevec_gt,
	COMMUTATOR = < , NEGATOR = <= ,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

COMMENT ON OPERATOR > (sparsevec, sparsevec) IS 'greater than';

-- sparsevec btree operator class (pgvector's order: the dense vectors
-- compared element by element, then by dimensions)

CREATE OPERATOR CLASS sparsevec_ops
	DEFAULT FOR TYPE sparsevec USING btree AS
	OPERATOR 1 < ,
	OPERATOR 2 <= ,
	OPERATOR 3 = ,
	OPERATOR 4 >= ,
	OPERATOR 5 > ,
	FUNCTION 1 sparsevec_cmp(sparsevec, sparsevec);

COMMENT ON OPERATOR CLASS sparsevec_ops USING btree IS 'default btree operator class for sparsevec';

COMMENT ON OPERATOR FAMILY sparsevec_ops USING btree IS 'btree operator family for sparsevec';

------------------------------------------------------------------------
-- the sparse_maxscore index access method
------------------------------------------------------------------------

CREATE FUNCTION spmhandler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;

COMMENT ON FUNCTION spmhandler(internal) IS
	'index access method handler of sparse_maxscore';

CREATE ACCESS METHOD sparse_maxscore TYPE INDEX HANDLER spmhandler;

COMMENT ON ACCESS METHOD sparse_maxscore IS
	'exact top-k retrieval over sparse vectors: ORDER BY v <#> query [LIMIT k] returns what a sequential scan returns';

CREATE OPERATOR CLASS sparsevec_ip_ops
	DEFAULT FOR TYPE sparsevec USING sparse_maxscore AS
	OPERATOR 1 <#> (sparsevec, sparsevec) FOR ORDER BY float_ops,
	FUNCTION 1 sparsevec_negative_inner_product(sparsevec, sparsevec);

COMMENT ON OPERATOR CLASS sparsevec_ip_ops USING sparse_maxscore IS
	'negative inner product (<#>) ordering for sparse_maxscore';

COMMENT ON OPERATOR FAMILY sparsevec_ip_ops USING sparse_maxscore IS
	'negative inner product (<#>) ordering for sparse_maxscore';

CREATE FUNCTION sparse_maxscore_last_scan(
	OUT rounds bigint,
	OUT postings_decoded bigint,
	OUT blocks_decoded bigint,
	OUT blocks_skipped bigint,
	OUT windows bigint,
	OUT windows_skipped bigint,
	OUT candidates_scored bigint,
	OUT rows_returned bigint,
	OUT segments_exhaustive bigint,
	OUT segments_maxscore bigint,
	OUT segments_ranges bigint,
	OUT segments_ranges_gave_up bigint)
	RETURNS record
	AS 'MODULE_PATHNAME', 'spm_last_scan_sql'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION sparse_maxscore_last_scan() IS
	'work counters of the most recent sparse_maxscore index scan in this session';

CREATE FUNCTION sparse_maxscore_flush(regclass) RETURNS bigint
	AS 'MODULE_PATHNAME', 'spm_flush_sql'
	LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION sparse_maxscore_flush(regclass) IS
	'move the pending list of a sparse_maxscore index into a segment; returns the number of rows moved';

CREATE FUNCTION sparse_maxscore_compact(regclass) RETURNS integer
	AS 'MODULE_PATHNAME', 'spm_compact_sql'
	LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION sparse_maxscore_compact(regclass) IS
	'flush, then merge every segment of a sparse_maxscore index into one without dead rows; returns the number of segments merged';

CREATE FUNCTION sparse_maxscore_info(
	index regclass,
	OUT segments integer,
	OUT documents bigint,
	OUT dead_documents bigint,
	OUT null_documents bigint,
	OUT postings bigint,
	OUT pending_documents bigint,
	OUT pending_postings bigint,
	OUT pending_bytes bigint,
	OUT pending_pages bigint,
	OUT dead_fraction float8,
	OUT pages bigint,
	OUT free_pages bigint,
	OUT dims integer)
	RETURNS record
	AS 'MODULE_PATHNAME', 'spm_info_sql'
	LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION sparse_maxscore_info(regclass) IS
	'segments, documents, postings, pending list, dead fraction and pages of a sparse_maxscore index';

CREATE FUNCTION sparse_maxscore_verify(regclass) RETURNS text
	AS 'MODULE_PATHNAME', 'spm_verify_sql'
	LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION sparse_maxscore_verify(regclass) IS
	'check the structural invariants of a sparse_maxscore index; raises an error on the first violation';

------------------------------------------------------------------------
-- BM25 from text search vectors (tsvector)
------------------------------------------------------------------------

-- A document's vector holds BM25's saturated term frequencies, a query's
-- vector the idf of its lexemes, so doc <#> query is minus the BM25 score
-- and sparse_maxscore returns the exact BM25 top k.  The caller names a
-- vocabulary table (lexeme text, dim integer, df bigint); the functions
-- read it under the caller's privileges with a schema-qualified query, so
-- they do not depend on search_path.  They never write: keeping the
-- vocabulary and the statistics current is the recipe's part (README
-- "BM25 from text", doc/decisions.md).  Reading a table makes
-- bm25_document and bm25_query STABLE; the other two are IMMUTABLE.

CREATE FUNCTION bm25_doclen(tsvector) RETURNS bigint
	AS 'MODULE_PATHNAME', 'spv_bm25_doclen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bm25_doclen(tsvector) IS
	'BM25 document length: the number of positions in a tsvector';

CREATE FUNCTION bm25_idf(n_docs bigint, df bigint) RETURNS float8
	AS 'MODULE_PATHNAME', 'spv_bm25_idf' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bm25_idf(bigint, bigint) IS
	'BM25 inverse document frequency ln(1 + (n_docs - df + 0.5) / (df + 0.5))';

CREATE FUNCTION bm25_document(doc tsvector, vocab regclass, dims integer, avgdl float8,
		k1 float8 DEFAULT 1.2, b float8 DEFAULT 0.75) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_bm25_document' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bm25_document(tsvector, regclass, integer, float8, float8, float8) IS
	'BM25 document vector: tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) at each lexeme''s dim in the vocabulary table';

CREATE FUNCTION bm25_query(query tsvector, vocab regclass, dims integer, n_docs bigint) RETURNS sparsevec
	AS 'MODULE_PATHNAME', 'spv_bm25_query' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bm25_query(tsvector, regclass, integer, bigint) IS
	'BM25 query vector: bm25_idf(n_docs, df) at the dim of each query lexeme found in the vocabulary table';

------------------------------------------------------------------------
-- issue 40, findings: sparse_maxscore_last_scan()
------------------------------------------------------------------------

-- A thirteenth column, pending_scored, and NULL while the session has run
-- no index scan (and the fourteenth, postings_estimated, of issue 37).  The update appends the column in place (a user's view
-- may use the function); a fresh install has no such view yet.

DROP FUNCTION sparse_maxscore_last_scan();

CREATE FUNCTION sparse_maxscore_last_scan(
	OUT rounds bigint,
	OUT postings_decoded bigint,
	OUT blocks_decoded bigint,
	OUT blocks_skipped bigint,
	OUT windows bigint,
	OUT windows_skipped bigint,
	OUT candidates_scored bigint,
	OUT rows_returned bigint,
	OUT segments_exhaustive bigint,
	OUT segments_maxscore bigint,
	OUT segments_ranges bigint,
	OUT segments_ranges_gave_up bigint,
	OUT pending_scored bigint,
	OUT postings_estimated bigint)
	RETURNS record
	AS 'MODULE_PATHNAME', 'spm_last_scan_sql'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;

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
-- A fourteenth column of sparse_maxscore_last_scan(), postings_estimated,
-- created with the others in the issue 40 block above (the update appends
-- it in place), and a function with one row per segment of each pass of a
-- scan (src/README "Choosing the kernel").

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

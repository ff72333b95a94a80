-- examples/hybrid/rrf.sql: hybrid search by reciprocal rank fusion (RRF)
-- of a sparse top-k (sparsevec, sparse_maxscore) and a dense top-k
-- (pgvector).  README "Hybrid search with pgvector".
--
-- pgvector's extension also defines a type named sparsevec, so this
-- extension lives in a schema of its own, here spv:
--   CREATE SCHEMA spv; CREATE EXTENSION sparsevec SCHEMA spv;
--   CREATE EXTENSION vector;                         -- in public
--   CREATE TABLE items (id bigint PRIMARY KEY,
--                       sv spv.sparsevec(30522),     -- SPLADE or BM25
--                       emb vector(384));            -- a dense encoder
--   CREATE INDEX ON items USING sparse_maxscore (sv);
--   CREATE INDEX ON items USING hnsw (emb vector_cosine_ops);  -- optional
--
-- Each side ranks its own top `depth` rows (ties broken by id); a row's
-- RRF score is the sum over the sides that found it of 1 / (c + rank).
-- The sparse side is exact (sparse_maxscore); the dense side is exact
-- without a dense index and approximate with HNSW or IVFFlat.

CREATE FUNCTION hybrid_search(q_sparse spv.sparsevec, q_dense vector, k integer,
		depth integer DEFAULT 50, c integer DEFAULT 60)
RETURNS TABLE (id bigint, score float8, sparse_rank bigint, dense_rank bigint)
LANGUAGE sql STABLE AS $$
	WITH s AS (
		SELECT t.id, row_number() OVER (ORDER BY t.d, t.id) AS r
		FROM (SELECT i.id, i.sv OPERATOR(spv.<#>) q_sparse AS d FROM items i
			ORDER BY i.sv OPERATOR(spv.<#>) q_sparse LIMIT depth) t),
	v AS (
		SELECT t.id, row_number() OVER (ORDER BY t.d, t.id) AS r
		FROM (SELECT i.id, i.emb <=> q_dense AS d FROM items i
			ORDER BY i.emb <=> q_dense LIMIT depth) t)
	SELECT id, coalesce(1.0 / (c + s.r), 0) + coalesce(1.0 / (c + v.r), 0), s.r, v.r
	FROM s FULL JOIN v USING (id)
	ORDER BY 2 DESC, id
	LIMIT k
$$;

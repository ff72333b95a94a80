-- examples/bm25/recipe.sql: exact, indexed BM25 ranking of docs.body
-- (README "BM25 from text"; doc/decisions.md "BM25 from text").
--
-- Run it once in a database where sparsevec is on the search_path, on a
-- table  docs (id bigint PRIMARY KEY, body text NOT NULL).  It adds
--   docs.tsv, docs.bm25       the lexemes and the BM25 document vector
--   docs_vocab                lexeme -> dim, and its document frequency df
--   docs_bm25_stats           one row: n_docs, avgdl, dims, k1, b
--   a trigger                 keeps tsv, vocabulary and vector of a row
--   docs_bm25_refresh()       recounts df and n_docs (idf), one pass
--   docs_bm25_rebuild()       new avgdl, every vector again, then refresh
--   docs_bm25_query(text)     the query vector
-- then:  SELECT id FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query('...')) LIMIT 10;
-- (the scalar subquery computes the query vector once, not once per row
-- returned: doc/reference.md "BM25 from text")
--
-- Change 'english' (the text search configuration), the dimensions and
-- k1, b below to taste; a dims well above the vocabulary you expect costs
-- nothing (a vector stores only its non-zeros).

ALTER TABLE docs ADD COLUMN tsv tsvector, ADD COLUMN bm25 sparsevec(10000000);

CREATE TABLE docs_vocab (
	lexeme text PRIMARY KEY,
	dim integer GENERATED ALWAYS AS IDENTITY UNIQUE,
	df bigint NOT NULL DEFAULT 0);

CREATE TABLE docs_bm25_stats (
	n_docs bigint NOT NULL,
	avgdl float8 NOT NULL,          -- the avgdl the stored vectors were built with
	dims integer NOT NULL,          -- the dimensions of docs.bm25
	k1 float8 NOT NULL,
	b float8 NOT NULL);
INSERT INTO docs_bm25_stats VALUES (0, 1, 10000000, 1.2, 0.75);

-- a row's lexemes, new lexemes into the vocabulary, the row's vector
CREATE FUNCTION docs_bm25_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.tsv := to_tsvector('english', NEW.body);
	-- EXECUTE: planned each time for the vocabulary's current size (a
	-- cached plan made while it was small would scan all of it per row);
	-- NOT EXISTS first, since ON CONFLICT alone would burn a dim per
	-- lexeme already there
	EXECUTE 'INSERT INTO docs_vocab (lexeme)
		SELECT l FROM unnest(tsvector_to_array($1)) l
		WHERE NOT EXISTS (SELECT FROM docs_vocab v WHERE v.lexeme = l)
		ORDER BY l
		ON CONFLICT DO NOTHING' USING NEW.tsv;
	SELECT bm25_document(NEW.tsv, 'docs_vocab', s.dims, s.avgdl, s.k1, s.b) INTO NEW.bm25
		FROM docs_bm25_stats s;
	RETURN NEW;
END $$;
CREATE TRIGGER docs_bm25_row BEFORE INSERT OR UPDATE OF body ON docs
	FOR EACH ROW EXECUTE FUNCTION docs_bm25_row();

-- idf statistics: every df and n_docs from one snapshot (one statement)
CREATE FUNCTION docs_bm25_refresh() RETURNS void LANGUAGE sql AS $$
	WITH c AS (SELECT t.lexeme, count(*) AS df FROM docs d, unnest(d.tsv) t GROUP BY t.lexeme),
	v AS (UPDATE docs_vocab v SET df = coalesce(c.df, 0)
		FROM docs_vocab v0 LEFT JOIN c ON c.lexeme = v0.lexeme
		WHERE v.lexeme = v0.lexeme AND v.df <> coalesce(c.df, 0))
	UPDATE docs_bm25_stats SET n_docs = (SELECT count(*) FROM docs)
$$;

-- a new avgdl, so every document vector again (writes every row)
CREATE FUNCTION docs_bm25_rebuild() RETURNS void LANGUAGE sql AS $$
	UPDATE docs_bm25_stats SET avgdl = coalesce(
		(SELECT nullif(avg(bm25_doclen(to_tsvector('english', body))), 0) FROM docs), 1);
	UPDATE docs SET body = body;
	SELECT docs_bm25_refresh();
$$;

CREATE FUNCTION docs_bm25_query(q text) RETURNS sparsevec LANGUAGE sql STABLE
	RETURN (SELECT bm25_query(to_tsvector('english', q), 'docs_vocab', s.dims, s.n_docs)
		FROM docs_bm25_stats s);

CREATE INDEX docs_bm25_idx ON docs USING sparse_maxscore (bm25);
SELECT docs_bm25_rebuild();

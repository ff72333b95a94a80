-- examples/bm25/recipe.sql: exact, indexed BM25 ranking of docs.body
-- (README "BM25 from text"; doc/reference.md "BM25 from text").
--
-- Run it once on a table  <schema>.docs (id bigint PRIMARY KEY, body text
-- NOT NULL), empty or not, in a database with the sparsevec extension, as
-- the table's owner.  It adds, all in <schema> ('public', unless changed
-- below or set with  SET docs_bm25.schema = 'myschema'  before running it):
--   docs.bm25                 the BM25 document vector of body
--   docs_vocab                lexeme -> dim, and its document frequency df
--   docs_bm25_stats           one row: n_docs, avgdl, dims, k1, b
--   docs_bm25_load(src)       bulk load: the (id, body) rows of table src
--                             into docs, set-based, statistics included
--   triggers                  a row inserted or updated one at a time gets
--                             its lexemes and its vector
--   docs_bm25_refresh()       recounts df and n_docs (idf) from the vectors
--   docs_bm25_rebuild()       every statistic again, every vector again
--   docs_bm25_query(text)     the query vector
-- then:
--   SELECT id FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query('...')) LIMIT 10;
-- (the scalar subquery computes the query vector once, not once per row
-- returned: doc/reference.md "BM25 from text").
--
-- Every name is schema-qualified: the objects go into <schema> whatever
-- the search_path, and the type, functions and operators are the sparsevec
-- extension's, found through the schema it is installed in, even when
-- another extension (pgvector) owns the unqualified name sparsevec.  The
-- recipe creates objects only: if one of its names is taken, it stops with
-- an error and leaves everything as it was.
--
-- Change the schema, 'english' (the text search configuration), the
-- dimensions and k1, b below to taste; a dims well above the vocabulary
-- you expect costs nothing (a vector stores only its non-zeros).

DO $recipe$
DECLARE
	-- to taste; the schema may also be given by SET docs_bm25.schema = '...'
	schema_name name := coalesce(nullif(pg_catalog.current_setting('docs_bm25.schema', true), ''), 'public');
	config regconfig := 'pg_catalog.english';
	dims integer := 10000000;
	k1 float8 := 1.2;
	b float8 := 0.75;
	-- where the sparsevec extension is
	ext name := (SELECT n.nspname FROM pg_catalog.pg_extension x
		JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace
		WHERE x.extname = 'sparsevec');
	body text := $body$

ALTER TABLE @s@.docs ADD COLUMN bm25 @e@.sparsevec(@dims@);

CREATE TABLE @s@.docs_vocab (
	lexeme text COLLATE "C" PRIMARY KEY,   -- bytes, as a tsvector sorts them
	dim integer GENERATED ALWAYS AS IDENTITY,  -- unique: only the identity sets it
	df bigint NOT NULL DEFAULT 0);

CREATE TABLE @s@.docs_bm25_stats (
	n_docs bigint NOT NULL,         -- the documents counted in docs_vocab.df
	avgdl float8 NOT NULL,          -- the avgdl the stored vectors were built with
	avgdl_docs bigint NOT NULL,     -- how many documents it is the average of (0: none yet)
	dims integer NOT NULL,          -- the dimensions of docs.bm25
	k1 float8 NOT NULL,
	b float8 NOT NULL);
INSERT INTO @s@.docs_bm25_stats VALUES (0, 1, 0, @dims@, @k1@, @b@);

-- one row at a time: the row's new lexemes into the vocabulary, its vector
-- with the stored avgdl (df and n_docs wait for docs_bm25_refresh())
CREATE FUNCTION @s@.docs_bm25_row() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	tsv tsvector := to_tsvector(@cfg@, NEW.body);
BEGIN
	-- EXECUTE: planned each time for the vocabulary's current size (a
	-- cached plan made while it was small would scan all of it per row);
	-- NOT EXISTS first, since ON CONFLICT alone would burn a dim per
	-- lexeme already there; byte order, as docs_bm25_load() adds them
	EXECUTE 'INSERT INTO @s@.docs_vocab (lexeme)
		SELECT l FROM unnest(tsvector_to_array($1)) l
		WHERE NOT EXISTS (SELECT FROM @s@.docs_vocab v WHERE v.lexeme = l)
		ORDER BY l COLLATE "C"
		ON CONFLICT DO NOTHING' USING tsv;
	SELECT @e@.bm25_document(tsv, @vocab@, s.dims, s.avgdl, s.k1, s.b) INTO NEW.bm25
		FROM @s@.docs_bm25_stats s;
	RETURN NEW;
END $$;
-- not while docs_bm25_load() inserts rows whose vectors it has computed
CREATE TRIGGER docs_bm25_insert BEFORE INSERT ON @s@.docs FOR EACH ROW
	WHEN (pg_catalog.current_setting('docs_bm25.loading', true) IS DISTINCT FROM 'on')
	EXECUTE FUNCTION @s@.docs_bm25_row();
CREATE TRIGGER docs_bm25_update BEFORE UPDATE OF body ON @s@.docs FOR EACH ROW
	EXECUTE FUNCTION @s@.docs_bm25_row();

-- the lexemes of documents into the vocabulary, with their counts: known
-- ones get df + count, new ones dims in the order of the aggregate (by
-- the least id of a document with the lexeme: the order rows inserted
-- one at a time by id would give them)
CREATE FUNCTION @s@.docs_bm25_add_lexemes(st @e@.bm25_corpus_stats) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	UPDATE @s@.docs_vocab v SET df = v.df + u.df
		FROM unnest(st.lexemes, st.df) u(lexeme, df) WHERE v.lexeme = u.lexeme;
	INSERT INTO @s@.docs_vocab (lexeme, df)
		SELECT u.lexeme, u.df FROM unnest(st.lexemes, st.df) WITH ORDINALITY u(lexeme, df, o)
		WHERE NOT EXISTS (SELECT FROM @s@.docs_vocab v WHERE v.lexeme = u.lexeme)
		ORDER BY u.o
		ON CONFLICT (lexeme) DO UPDATE SET df = docs_vocab.df + excluded.df;
END $$;

-- bulk load: the rows (id, body) of table src into docs, set-based: one
-- parse of each text, the batch's lexemes and counts in one aggregate, the
-- vocabulary and the statistics in a few statements, then every vector in
-- one INSERT (each row written once).  n_docs, df and, on a table without
-- documents yet, avgdl are exact when it returns
CREATE FUNCTION @s@.docs_bm25_load(src regclass) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	st @e@.bm25_corpus_stats;
	s @s@.docs_bm25_stats;
	had_rows boolean;
	idx text;
BEGIN
	-- one load at a time (a row lock, also taken by refresh and rebuild)
	SELECT * INTO s FROM @s@.docs_bm25_stats FOR UPDATE;
	EXECUTE format('CREATE TEMP TABLE docs_bm25_batch AS
		SELECT id, body, to_tsvector(%L::regconfig, body) AS tsv FROM %s', @cfg@, src);
	st := (SELECT @e@.bm25_corpus_stats(tsv, id) FROM pg_temp.docs_bm25_batch);
	PERFORM @s@.docs_bm25_add_lexemes(st);
	had_rows := EXISTS (SELECT FROM @s@.docs);
	IF s.avgdl_docs = 0 AND NOT had_rows AND st.n_docs > 0 THEN
		-- the first documents: the average is theirs
		s.avgdl := CASE WHEN st.sum_dl > 0 THEN st.sum_dl::float8 / st.n_docs ELSE 1 END;
		s.avgdl_docs := st.n_docs;
	END IF;
	UPDATE @s@.docs_bm25_stats SET n_docs = n_docs + st.n_docs, avgdl = s.avgdl,
		avgdl_docs = s.avgdl_docs;
	-- into an empty table, the recipe's index is rebuilt afterwards
	-- (REINDEX: one pass, as compact as CREATE INDEX; the index itself,
	-- its name, owner and options stay)
	IF NOT had_rows THEN
		idx := (SELECT i.indexrelid::regclass::text FROM pg_index i
			WHERE i.indexrelid = to_regclass('@s@.docs_bm25_idx')
			AND i.indrelid = '@s@.docs'::regclass);
	END IF;
	PERFORM set_config('docs_bm25.loading', 'on', true);
	INSERT INTO @s@.docs (id, body, bm25)
		SELECT id, body, @e@.bm25_document(tsv, @vocab@, s.dims, s.avgdl, s.k1, s.b)
		FROM pg_temp.docs_bm25_batch;
	PERFORM set_config('docs_bm25.loading', 'off', true);
	IF idx IS NOT NULL THEN
		EXECUTE format('REINDEX INDEX %s', idx);
	END IF;
	DROP TABLE pg_temp.docs_bm25_batch;
	-- rows inserted one at a time before any average was known: all again
	IF s.avgdl_docs = 0 AND had_rows THEN
		PERFORM @s@.docs_bm25_rebuild();
	END IF;
	RETURN st.n_docs;
END $$;

-- idf statistics: every df and n_docs again, counted from the stored
-- vectors (one snapshot); on a table whose vectors were built before any
-- average document length was known, a rebuild
CREATE FUNCTION @s@.docs_bm25_refresh() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	ds @e@.bm25_dim_stats;
	s @s@.docs_bm25_stats;
BEGIN
	SELECT * INTO s FROM @s@.docs_bm25_stats FOR UPDATE;
	ds := (SELECT @e@.bm25_dim_stats(bm25) FROM @s@.docs);
	IF s.avgdl_docs = 0 AND ds.n_docs > 0 THEN
		PERFORM @s@.docs_bm25_rebuild();
		RETURN;
	END IF;
	UPDATE @s@.docs_vocab v SET df = coalesce(c.df, 0)
		FROM @s@.docs_vocab v0 LEFT JOIN unnest(ds.dims, ds.df) c(dim, df) ON c.dim = v0.dim
		WHERE v.lexeme = v0.lexeme AND v.df <> coalesce(c.df, 0);
	UPDATE @s@.docs_bm25_stats SET n_docs = ds.n_docs;
END $$;

-- everything again: the vocabulary's df, n_docs, a new avgdl from the
-- texts, then every vector, by rewriting the table (ALTER TABLE ... TYPE
-- ... USING: a new heap, no dead rows; it locks docs for the rewrite and
-- rebuilds its indexes)
CREATE FUNCTION @s@.docs_bm25_rebuild() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
DECLARE
	st @e@.bm25_corpus_stats;
	s @s@.docs_bm25_stats;
BEGIN
	SELECT * INTO s FROM @s@.docs_bm25_stats FOR UPDATE;
	st := (SELECT @e@.bm25_corpus_stats(to_tsvector(@cfg@, body), id) FROM @s@.docs);
	UPDATE @s@.docs_vocab v SET df = coalesce(c.df, 0)
		FROM @s@.docs_vocab v0 LEFT JOIN unnest(st.lexemes, st.df) c(lexeme, df) ON c.lexeme = v0.lexeme
		WHERE v.lexeme = v0.lexeme AND v.df <> coalesce(c.df, 0);
	-- lexemes of rows that did not pass the trigger (none, normally)
	PERFORM @s@.docs_bm25_add_lexemes(ROW(0, 0, array_agg(c.lexeme ORDER BY c.o), array_agg(c.df ORDER BY c.o))::@e@.bm25_corpus_stats)
		FROM unnest(st.lexemes, st.df) WITH ORDINALITY c(lexeme, df, o)
		WHERE NOT EXISTS (SELECT FROM @s@.docs_vocab v WHERE v.lexeme = c.lexeme)
		HAVING count(*) > 0;
	IF st.n_docs > 0 THEN
		s.avgdl := CASE WHEN st.sum_dl > 0 THEN st.sum_dl::float8 / st.n_docs ELSE 1 END;
	END IF;
	UPDATE @s@.docs_bm25_stats SET n_docs = st.n_docs, avgdl = s.avgdl, avgdl_docs = st.n_docs;
	-- float8 text with extra_float_digits 1 reads back to the same value
	EXECUTE format('ALTER TABLE @s@.docs ALTER COLUMN bm25 TYPE @e@.sparsevec(%s)
		USING @e@.bm25_document(to_tsvector(%L::regconfig, body), %L::regclass, %s, %s::float8, %s::float8, %s::float8)',
		s.dims, @cfg@, @vocab@, s.dims, s.avgdl, s.k1, s.b);
END $$;

CREATE FUNCTION @s@.docs_bm25_query(q text) RETURNS @e@.sparsevec LANGUAGE sql STABLE
	RETURN (SELECT @e@.bm25_query(pg_catalog.to_tsvector(@cfg@, q), @vocab@, s.dims, s.n_docs)
		FROM @s@.docs_bm25_stats s);

CREATE INDEX docs_bm25_idx ON @s@.docs USING sparse_maxscore (bm25);
SELECT @s@.docs_bm25_rebuild();

$body$;
BEGIN
	IF ext IS NULL THEN
		RAISE EXCEPTION 'the sparsevec extension is not installed in this database'
			USING HINT = 'CREATE EXTENSION sparsevec;';
	END IF;
	body := pg_catalog.replace(body, '@s@', pg_catalog.quote_ident(schema_name));
	body := pg_catalog.replace(body, '@e@', pg_catalog.quote_ident(ext));
	body := pg_catalog.replace(body, '@vocab@', pg_catalog.quote_literal(pg_catalog.format('%I.docs_vocab', schema_name)) || '::pg_catalog.regclass');
	body := pg_catalog.replace(body, '@cfg@', pg_catalog.quote_literal((SELECT pg_catalog.format('%I.%I', n.nspname, c.cfgname)
		FROM pg_catalog.pg_ts_config c JOIN pg_catalog.pg_namespace n ON n.oid = c.cfgnamespace
		WHERE c.oid = config)) || '::pg_catalog.regconfig');
	body := pg_catalog.replace(body, '@dims@', dims::text);
	body := pg_catalog.replace(body, '@k1@', k1::text);
	body := pg_catalog.replace(body, '@b@', b::text);
	EXECUTE body;
END $recipe$;

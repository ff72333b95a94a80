--
-- BM25 ingest in bulk (issue 40): examples/bm25/recipe.sql's
-- docs_bm25_load() against the row-by-row path, the statistics from the
-- first rows, refresh and rebuild, the index against the seq scan, and the
-- recipe schema-qualified (issue 39: whichever extension owns the
-- unqualified name sparsevec, whatever the search_path).
-- Runs after spm_setup (uses spm_check).
--
SET client_min_messages = warning;

-- 3,000 texts: 1 to 40 words of a small English list and of 1,500 rare
-- tokens, some of stop words only, some empty of lexemes
CREATE TABLE ingest_src (id bigint, body text);
INSERT INTO ingest_src
SELECT i, CASE
	WHEN i % 500 = 0 THEN 'the and of the'
	WHEN i % 777 = 0 THEN ''
	ELSE (SELECT string_agg(CASE WHEN h % 5 = 0 THEN 'tok' || (h % 1500)
		ELSE (ARRAY['fox', 'dog', 'cat', 'brown', 'quick', 'lazy', 'jumps', 'over', 'the', 'a',
			'license', 'software', 'free', 'database', 'server', 'query', 'index', 'exact',
			'vector', 'sparse', 'text', 'search', 'rank', 'score', 'running', 'runs', 'ran'])[1 + h % 27]
		END, ' ' ORDER BY j)
		FROM generate_series(1, 1 + i % 40) j,
			LATERAL (SELECT ('x' || substr(md5(i || '/' || j), 1, 8))::bit(32)::bigint AS h) x)
	END
FROM generate_series(1, 3000) i;

-- the bulk path: the recipe on an empty table, then one load
CREATE SCHEMA ingest_bulk;
CREATE TABLE ingest_bulk.docs (id bigint PRIMARY KEY, body text NOT NULL);
SET docs_bm25.schema = 'ingest_bulk';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
-- before any document: no average yet
SELECT n_docs, avgdl, avgdl_docs FROM ingest_bulk.docs_bm25_stats;
SELECT ingest_bulk.docs_bm25_load('ingest_src') AS loaded;
-- right from the first rows: n_docs, avgdl and df of every lexeme are the
-- corpus's, computed here from the text
SELECT s.n_docs = 3000 AS n_docs_ok, s.avgdl_docs,
	s.avgdl = (SELECT sum(bm25_doclen(to_tsvector('english', body)))::float8 / 3000 FROM ingest_src) AS avgdl_ok
FROM ingest_bulk.docs_bm25_stats s;
SELECT count(*) AS lexemes,
	count(*) FILTER (WHERE v.df IS DISTINCT FROM c.df) AS df_wrong,
	min(v.dim) AS min_dim, max(v.dim) AS max_dim
FROM ingest_bulk.docs_vocab v FULL JOIN (SELECT t.lexeme, count(*) AS df
	FROM ingest_src, unnest(to_tsvector('english', body)) t GROUP BY t.lexeme) c USING (lexeme);
-- no dead rows: each row written once (the heap is no larger than a copy)
CREATE TABLE ingest_copy AS SELECT * FROM ingest_bulk.docs;
SELECT pg_relation_size('ingest_bulk.docs') <= 1.02 * pg_relation_size('ingest_copy') AS no_dead_rows;
DROP TABLE ingest_copy;
-- the recipe's index was built after the rows, from its definition
SELECT pg_get_indexdef('ingest_bulk.docs_bm25_idx'::regclass);
SELECT count(*) AS null_vectors FROM ingest_bulk.docs WHERE bm25 IS NULL;
-- after the load, rows one at a time go through the trigger again
BEGIN;
INSERT INTO ingest_bulk.docs (id, body) VALUES (-1, 'quick brown tok1');
SELECT nnz(bm25) AS trigger_after_load FROM ingest_bulk.docs WHERE id = -1;
ROLLBACK;

-- the row-by-row path, the same rows in the same order, with the avgdl
-- the load found (as a table that had it before its rows would)
CREATE SCHEMA ingest_row;
CREATE TABLE ingest_row.docs (id bigint PRIMARY KEY, body text NOT NULL);
SET docs_bm25.schema = 'ingest_row';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
UPDATE ingest_row.docs_bm25_stats SET (avgdl, avgdl_docs) =
	(SELECT avgdl, avgdl_docs FROM ingest_bulk.docs_bm25_stats);
INSERT INTO ingest_row.docs SELECT * FROM ingest_src ORDER BY id;
SELECT ingest_row.docs_bm25_refresh();
-- the same vocabulary (lexemes, dims, df), statistics and vectors, bit for bit
SELECT count(*) AS lexemes, count(*) FILTER (WHERE r.dim IS DISTINCT FROM b.dim OR r.df IS DISTINCT FROM b.df) AS differ
FROM ingest_row.docs_vocab r FULL JOIN ingest_bulk.docs_vocab b USING (lexeme);
SELECT (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_row.docs_bm25_stats)
	= (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_bulk.docs_bm25_stats) AS stats_equal;
SELECT count(*) AS rows, count(*) FILTER (WHERE r.bm25 IS DISTINCT FROM b.bm25) AS vectors_differ
FROM ingest_row.docs r FULL JOIN ingest_bulk.docs b USING (id);

-- a rebuild (a table rewrite) gives the same vectors again; a refresh
-- after a load changes no df (the load's were exact)
CREATE TABLE ingest_before AS SELECT id, bm25 FROM ingest_bulk.docs;
SELECT ingest_bulk.docs_bm25_refresh();
SELECT count(*) FILTER (WHERE r.df IS DISTINCT FROM b.df) AS refresh_changed
FROM ingest_row.docs_vocab r JOIN ingest_bulk.docs_vocab b USING (lexeme);
SELECT ingest_bulk.docs_bm25_rebuild();
SELECT count(*) FILTER (WHERE a.bm25 IS DISTINCT FROM b.bm25) AS rebuild_changed
FROM ingest_before a FULL JOIN ingest_bulk.docs b USING (id);
DROP TABLE ingest_before;

-- exact through the index: every query equals the seq scan, with and
-- without LIMIT and a filter
SET search_path = ingest_bulk, public;
SELECT q, f, lim, spm_check(format('SELECT id, bm25 <#> (SELECT docs_bm25_query(%1$L)) AS d FROM docs WHERE %2$s ORDER BY bm25 <#> (SELECT docs_bm25_query(%1$L))', q, f), lim)
FROM unnest(ARRAY['brown fox', 'lazy dog running', 'tok7 tok8 vector', 'the', 'tok1499', 'unknown words']) q,
	unnest(ARRAY['true', 'id % 3 = 1']) f, unnest(ARRAY[1, 10, NULL]) lim
ORDER BY f, lim, q;
RESET search_path;

-- a second load into a table that has rows: vectors with the stored avgdl,
-- n_docs and df exact (a refresh changes nothing), the index kept and
-- maintained
CREATE TABLE ingest_src2 AS SELECT id + 10000 AS id, body || ' zebra ' || id AS body FROM ingest_src WHERE id <= 1200;
SELECT ingest_bulk.docs_bm25_load('ingest_src2') AS loaded;
SELECT n_docs, avgdl_docs FROM ingest_bulk.docs_bm25_stats;
CREATE TABLE ingest_df AS SELECT lexeme, df FROM ingest_bulk.docs_vocab;
SELECT ingest_bulk.docs_bm25_refresh();
SELECT count(*) FILTER (WHERE a.df IS DISTINCT FROM b.df) AS refresh_changed, count(*) AS lexemes
FROM ingest_df a FULL JOIN ingest_bulk.docs_vocab b USING (lexeme);
SELECT v.df AS zebra_df FROM ingest_bulk.docs_vocab v WHERE lexeme = 'zebra';
SET search_path = ingest_bulk, public;
SELECT q, lim, spm_check(format('SELECT id, bm25 <#> (SELECT docs_bm25_query(%1$L)) AS d FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query(%1$L))', q), lim)
FROM unnest(ARRAY['zebra fox', 'tok3', '1100']) q, unnest(ARRAY[10, NULL]) lim ORDER BY lim, q;
RESET search_path;
-- a load that fails leaves everything as it was
SELECT ingest_bulk.docs_bm25_load('ingest_src2');
SELECT (SELECT n_docs FROM ingest_bulk.docs_bm25_stats) AS n_docs, (SELECT count(*) FROM ingest_bulk.docs) AS rows,
	current_setting('docs_bm25.loading', true) IS DISTINCT FROM 'on' AS trigger_on;
DROP TABLE ingest_df;

-- the finding of issue 40: rows one at a time into an empty table keep a
-- provisional avgdl (no document to average yet) ...
CREATE SCHEMA ingest_late;
CREATE TABLE ingest_late.docs (id bigint PRIMARY KEY, body text NOT NULL);
SET docs_bm25.schema = 'ingest_late';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
INSERT INTO ingest_late.docs SELECT * FROM ingest_src WHERE id <= 300 ORDER BY id;
SELECT n_docs, avgdl, avgdl_docs FROM ingest_late.docs_bm25_stats;
-- ... and docs_bm25_refresh() makes every statistic and vector right
SELECT ingest_late.docs_bm25_refresh();
CREATE SCHEMA ingest_ref;
CREATE TABLE ingest_ref.docs (id bigint PRIMARY KEY, body text NOT NULL);
SET docs_bm25.schema = 'ingest_ref';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
CREATE TABLE ingest_src300 AS SELECT * FROM ingest_src WHERE id <= 300 ORDER BY id;
SELECT ingest_ref.docs_bm25_load('ingest_src300') AS loaded;
SELECT (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_late.docs_bm25_stats)
	= (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_ref.docs_bm25_stats) AS stats_equal,
	(SELECT avgdl_docs FROM ingest_late.docs_bm25_stats) AS avgdl_docs;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.bm25 IS DISTINCT FROM b.bm25) AS vectors_differ
FROM ingest_late.docs a FULL JOIN ingest_ref.docs b USING (id);
SELECT count(*) FILTER (WHERE a.dim IS DISTINCT FROM b.dim OR a.df IS DISTINCT FROM b.df) AS vocab_differ
FROM ingest_late.docs_vocab a FULL JOIN ingest_ref.docs_vocab b USING (lexeme);
-- a load into a table whose rows came before any average: all again
CREATE SCHEMA ingest_mix;
CREATE TABLE ingest_mix.docs (id bigint PRIMARY KEY, body text NOT NULL);
SET docs_bm25.schema = 'ingest_mix';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
INSERT INTO ingest_mix.docs SELECT * FROM ingest_src WHERE id <= 100 ORDER BY id;
CREATE TABLE ingest_src_rest AS SELECT * FROM ingest_src WHERE id > 100 AND id <= 300 ORDER BY id;
SELECT ingest_mix.docs_bm25_load('ingest_src_rest') AS loaded;
SELECT (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_mix.docs_bm25_stats)
	= (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_ref.docs_bm25_stats) AS stats_equal;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.bm25 IS DISTINCT FROM b.bm25) AS vectors_differ
FROM ingest_mix.docs a FULL JOIN ingest_ref.docs b USING (id);
-- the recipe on a table that has rows builds everything at once (the same)
CREATE SCHEMA ingest_full;
CREATE TABLE ingest_full.docs (id bigint PRIMARY KEY, body text NOT NULL);
INSERT INTO ingest_full.docs SELECT * FROM ingest_src WHERE id <= 300 ORDER BY id;
SET docs_bm25.schema = 'ingest_full';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
SELECT (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_full.docs_bm25_stats)
	= (SELECT row(n_docs, avgdl, avgdl_docs) FROM ingest_ref.docs_bm25_stats) AS stats_equal;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.bm25 IS DISTINCT FROM b.bm25) AS vectors_differ
FROM ingest_full.docs a FULL JOIN ingest_ref.docs b USING (id);

-- the recipe creates only: run again on the same schema, it stops at the
-- first name taken and leaves everything as it was
SET docs_bm25.schema = 'ingest_full';
\set VERBOSITY terse
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
\set VERBOSITY default
RESET docs_bm25.schema;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.bm25 IS DISTINCT FROM b.bm25) AS vectors_differ
FROM ingest_full.docs a FULL JOIN ingest_ref.docs b USING (id);
SELECT count(*) AS functions FROM pg_proc WHERE pronamespace = 'ingest_full'::regnamespace;

-- schema-qualified (issue 39): another type named sparsevec first on the
-- search_path (as pgvector's would be), and the schema given explicitly
CREATE SCHEMA ingest_other;
CREATE DOMAIN ingest_other.sparsevec AS text;
CREATE FUNCTION ingest_other.bm25_document(tsvector, regclass, integer, float8, float8, float8)
	RETURNS text LANGUAGE sql AS 'SELECT ''wrong''';
CREATE SCHEMA ingest_q;
CREATE TABLE ingest_q.docs (id bigint PRIMARY KEY, body text NOT NULL);
SET search_path = ingest_other, public;
SET docs_bm25.schema = 'ingest_q';
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
RESET docs_bm25.schema;
INSERT INTO ingest_q.docs SELECT * FROM ingest_src WHERE id <= 300 ORDER BY id;
SELECT ingest_q.docs_bm25_refresh();
SELECT atttypid::regtype AS bm25_type FROM pg_attribute
WHERE attrelid = 'ingest_q.docs'::regclass AND attname = 'bm25';
SELECT count(*) AS objects_in_other FROM pg_class WHERE relnamespace = 'ingest_other'::regnamespace;
RESET search_path;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.bm25 IS DISTINCT FROM b.bm25) AS vectors_differ
FROM ingest_q.docs a FULL JOIN ingest_ref.docs b USING (id);
-- and with an empty search_path
SET search_path = '';
SELECT q.id FROM ingest_q.docs q
ORDER BY q.bm25 OPERATOR(public.<#>) (SELECT ingest_q.docs_bm25_query('brown fox')), q.id LIMIT 3;
INSERT INTO ingest_q.docs (id, body) VALUES (5000, 'brown fox brown fox');
SELECT ingest_q.docs_bm25_refresh();
RESET search_path;
SELECT id FROM ingest_q.docs ORDER BY bm25 <#> (SELECT ingest_q.docs_bm25_query('brown fox')), id LIMIT 1;

-- the aggregates by themselves
-- lexemes by the least ord of a document that has them (NULL last), then
-- in byte order, whatever order the rows come in
SELECT bm25_corpus_stats(t, o) FROM (VALUES (to_tsvector('english', 'b a b'), 3),
	(NULL, 1), (to_tsvector('english', 'c a d'), 2), (to_tsvector('english', 'zebra b'), NULL),
	(to_tsvector('english', 'yak b'), 1)) v(t, o);
SELECT bm25_corpus_stats(t, o) FROM (VALUES (NULL::tsvector, 1)) v(t, o);
SELECT bm25_corpus_stats(strip(to_tsvector('english', 'fox')), 1);
SELECT bm25_dim_stats(v) FROM (VALUES ('{3:1,1:2}/5'::sparsevec), (NULL), ('{1:0.5}/5'), ('{}/5')) x(v);
SELECT bm25_dim_stats(v) FROM (VALUES (NULL::sparsevec)) x(v);

DROP SCHEMA ingest_bulk, ingest_row, ingest_late, ingest_ref, ingest_mix, ingest_full, ingest_q, ingest_other CASCADE;
DROP TABLE ingest_src, ingest_src2, ingest_src300, ingest_src_rest;

--
-- BM25 from tsvector: bm25_doclen, bm25_idf, bm25_document, bm25_query.
-- Hand-checked weights, the recipe of README "BM25 from text" on a tiny
-- corpus (exact index scans via spm_check), and every argument error.
-- Runs after spm_setup (uses spm_check).
--

-- dl counts positions, not lexemes; stop words are not counted
SELECT bm25_doclen(to_tsvector('english', 'the fox and the other fox')) AS dl;
SELECT bm25_doclen(''::tsvector) AS empty_dl;
-- idf = ln(1 + (N - df + 0.5) / (df + 0.5)); ln(8/3), ln(2), ln(1 + 0.5/3.5)
SELECT abs(bm25_idf(3, 1) - ln(8.0 / 3)) < 1e-15 AS idf_3_1, abs(bm25_idf(0, 0) - ln(2.0)) < 1e-15 AS idf_0_0,
       abs(bm25_idf(3, 3) - ln(1 + 0.5 / 3.5)) < 1e-15 AS idf_3_3;
SELECT bm25_idf(NULL, 1) IS NULL AS strict;

CREATE TABLE bm25_vocab (lexeme text PRIMARY KEY, dim integer NOT NULL UNIQUE, df bigint NOT NULL);
INSERT INTO bm25_vocab VALUES ('fox', 1, 2), ('dog', 2, 1), ('cat', 3, 0);

-- 'fox fox dog': tf(fox) = 2, tf(dog) = 1, dl = 3.  With avgdl = 3 the
-- length norm is k1 = 1.2: fox 2 * 2.2 / 3.2 = 1.375, dog 2.2 / 2.2 = 1
SELECT bm25_document(to_tsvector('english', 'fox fox dog'), 'bm25_vocab', 10, 3);
-- avgdl = 6 (dl/avgdl = 1/2), k1 = 2, b = 0.5: norm = 2 * 0.75 = 1.5;
-- fox 2 * 3 / 3.5 = 12/7 (rounded to real), dog 3 / 2.5 = 1.2
SELECT bm25_document(to_tsvector('english', 'fox fox dog'), 'bm25_vocab', 10, 6, 2, 0.5)
	= to_sparsevec('{1,2}', ARRAY[(12.0 / 7)::real, 1.2::real], 10) AS k1_b;
-- k1 = 0: binary weights; b = 0: no length normalization (avgdl unused)
SELECT bm25_document(to_tsvector('english', 'fox fox dog'), 'bm25_vocab', 10, 3, 0, 0.75) AS k1_0,
       bm25_document(to_tsvector('english', 'fox fox dog'), 'bm25_vocab', 10, 1e9, 1.2, 0) AS b_0;
SELECT bm25_document(''::tsvector, 'bm25_vocab', 10, 3) AS empty_doc;
-- the query: idf of each distinct known lexeme; 'bird' is in no document
SELECT bm25_query(to_tsvector('english', 'dog fox fox bird'), 'bm25_vocab', 10, 3)
	= to_sparsevec('{1,2}', ARRAY[bm25_idf(3, 2)::real, bm25_idf(3, 1)::real], 10) AS query_ok;
-- positions do not matter in a query
SELECT bm25_query(strip(to_tsvector('english', 'dog')), 'bm25_vocab', 10, 3)
	= bm25_query(to_tsvector('english', 'dog'), 'bm25_vocab', 10, 3) AS strip_query;
SELECT bm25_query(to_tsvector('english', 'bird'), 'bm25_vocab', 10, 3) AS unknown_only;
SELECT bm25_query(to_tsvector('english', 'cat'), 'bm25_vocab', 10, 3) = to_sparsevec('{3}', ARRAY[ln(1 + 3.5 / 0.5)::real], 10)
	AS df_0;
-- score = -BM25: idf(fox) * 1.375 + idf(dog) * 1
SELECT abs(-(bm25_document(to_tsvector('english', 'fox fox dog'), 'bm25_vocab', 10, 3)
	<#> bm25_query(to_tsvector('english', 'dog fox'), 'bm25_vocab', 10, 3))
	- (bm25_idf(3, 2) * 1.375 + bm25_idf(3, 1))) < 1e-6 AS score_ok;

-- argument errors
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 0, 3);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 1000000001, 3);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 0);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 'NaN');
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 'Infinity');
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3, -0.1);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3, 1001);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3, 'NaN');
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3, 1.2, 1.5);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3, 1.2, -0.5);
SELECT bm25_document(strip(to_tsvector('english', 'fox')), 'bm25_vocab', 10, 3);
SELECT bm25_doclen('fox dog'::tsvector);
SELECT bm25_document(to_tsvector('english', 'fox bird'), 'bm25_vocab', 10, 3);
SELECT bm25_document(to_tsvector('english', 'fox cat'), 'bm25_vocab', 2, 3);
SELECT bm25_query(to_tsvector('english', 'cat'), 'bm25_vocab', 2, 3);
SELECT bm25_query(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 1);
SELECT bm25_query(to_tsvector('english', 'fox'), 'bm25_vocab', 10, -1);
SELECT bm25_idf(-1, 0);
SELECT bm25_idf(3, 4);
SELECT bm25_idf(3, -1);
SELECT bm25_query(to_tsvector('english', 'fox'), 0, 10, 3);
-- a weight that rounds to zero as real
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 1e-300);

-- broken vocabularies
CREATE TABLE bm25_bad (lexeme text, dim integer, df bigint);
INSERT INTO bm25_bad VALUES ('fox', 1, 1), ('fox', 2, 1);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_bad', 10, 3);
TRUNCATE bm25_bad;
INSERT INTO bm25_bad VALUES ('fox', 1, 1), ('dog', 1, 1);
SELECT bm25_document(to_tsvector('english', 'fox dog'), 'bm25_bad', 10, 3);
TRUNCATE bm25_bad;
INSERT INTO bm25_bad VALUES ('fox', NULL, 1), ('dog', 0, NULL);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_bad', 10, 3);
SELECT bm25_document(to_tsvector('english', 'dog'), 'bm25_bad', 10, 3);
SELECT bm25_query(to_tsvector('english', 'dog'), 'bm25_bad', 10, 3);
UPDATE bm25_bad SET dim = 2 WHERE lexeme = 'dog';
SELECT bm25_query(to_tsvector('english', 'dog'), 'bm25_bad', 10, 3);
CREATE TABLE bm25_badtype (lexeme text, dim bigint, df bigint);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_badtype', 10, 3);
CREATE TABLE bm25_nocol (lexeme text, dim integer);
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_nocol', 10, 3);
-- ... but an empty tsvector never reads the table
SELECT bm25_document(''::tsvector, 'bm25_nocol', 10, 3) AS empty_never_reads;
DROP TABLE bm25_bad, bm25_badtype, bm25_nocol;

-- the caller's privileges apply to the vocabulary
CREATE ROLE regress_bm25_reader;
SET ROLE regress_bm25_reader;
SELECT bm25_query(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3);
RESET ROLE;
DROP ROLE regress_bm25_reader;

-- search_path does not matter: neither an empty one, nor a shadowing
-- text = text[] operator ahead of pg_catalog
SET search_path = '';
SELECT public.bm25_query(pg_catalog.to_tsvector('english', 'fox'), 'public.bm25_vocab', 10, 3)
	OPERATOR(public.=) public.to_sparsevec('{1}', ARRAY[public.bm25_idf(3, 2)::real], 10) AS empty_path;
RESET search_path;
CREATE SCHEMA bm25_evil;
CREATE FUNCTION bm25_evil.eq(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR bm25_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = bm25_evil.eq);
SET search_path = bm25_evil, public;
SELECT bm25_document(to_tsvector('english', 'fox'), 'bm25_vocab', 10, 3) AS evil_path;
RESET search_path;
DROP SCHEMA bm25_evil CASCADE;

-- the vocabulary may change between calls of one prepared statement
PREPARE bm25_q(regclass) AS SELECT bm25_query(to_tsvector('english', 'fox dog'), $1, 10, 3);
CREATE TABLE bm25_vocab2 (lexeme text PRIMARY KEY, dim integer NOT NULL UNIQUE, df bigint NOT NULL);
INSERT INTO bm25_vocab2 VALUES ('dog', 5, 3);
EXECUTE bm25_q('bm25_vocab');
EXECUTE bm25_q('bm25_vocab2');
DEALLOCATE bm25_q;
DROP TABLE bm25_vocab2;
DROP TABLE bm25_vocab;

--
-- The recipe (README "BM25 from text", examples/bm25/recipe.sql), on
-- seven documents
--
CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL);
\set ECHO none
\i examples/bm25/recipe.sql
\set ECHO all
INSERT INTO docs (id, body) VALUES
	(1, 'The quick brown fox jumps over the lazy dog'),
	(2, 'A fox, a fox, and another fox'),
	(3, 'Dogs chase cats; cats chase mice'),
	(4, 'Nothing to see here'),
	(5, 'The the the'),
	(6, 'Brown dogs and brown foxes'),
	(7, 'Lazy afternoons');
SELECT docs_bm25_rebuild();
SELECT n_docs, avgdl, dims FROM docs_bm25_stats;
SELECT lexeme, dim, df FROM docs_vocab ORDER BY dim;
SELECT id, bm25 FROM docs ORDER BY id;
SELECT docs_bm25_query('brown fox') AS q;

-- the BM25 scores: idf(brown) = ln(1 + 5.5/2.5) = 1.16315 (df 2 of 7),
-- idf(fox) = ln(1 + 4.5/3.5) = 0.82668 (df 3); doc 6 = 1.16315 * 1.31343
-- + 0.82668 * 0.93617 = 2.30163 ...
SELECT id, round((-(bm25 <#> docs_bm25_query('brown fox')))::numeric, 5) AS bm25
FROM docs ORDER BY bm25 <#> docs_bm25_query('brown fox'), id LIMIT 4;
-- ... against the formula computed here from the tsvectors
SELECT d.id, round(sum(ln(1 + (7 - v.df + 0.5) / (v.df + 0.5))
	* t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * t.dl / s.avgdl)))::numeric, 5) AS formula
FROM docs d, docs_bm25_stats s,
	LATERAL (SELECT u.lexeme, cardinality(u.positions) AS tf, bm25_doclen(to_tsvector('english', d.body)) AS dl
		FROM unnest(to_tsvector('english', d.body)) u) t,
	docs_vocab v
WHERE v.lexeme = t.lexeme AND t.lexeme IN ('brown', 'fox')
GROUP BY d.id ORDER BY formula DESC, d.id LIMIT 4;

-- exact through the index, with and without LIMIT and a filter
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY bm25 <#> docs_bm25_query('brown fox') LIMIT 3;
RESET enable_seqscan;
SELECT q, f, lim, spm_check(format('SELECT id, bm25 <#> docs_bm25_query(%1$L) AS d FROM docs WHERE %2$s ORDER BY bm25 <#> docs_bm25_query(%1$L)', q, f), lim)
FROM unnest(ARRAY['brown fox', 'lazy dog', 'cats', 'the', 'unknown words']) q,
	unnest(ARRAY['true', 'id % 2 = 1']) f, unnest(ARRAY[1, 3, NULL]) lim
ORDER BY f, lim, q;
-- the query vector in a scalar subquery (README "BM25 from text"): an
-- InitPlan, computed once instead of once per row; exact all the same
SELECT q, lim, spm_check(format('SELECT id, bm25 <#> (SELECT docs_bm25_query(%1$L)) AS d FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query(%1$L))', q), lim)
FROM unnest(ARRAY['brown fox', 'lazy dog', 'unknown words']) q, unnest(ARRAY[1, 3, NULL]) lim
ORDER BY lim, q;

-- an update re-derives the row's vector; new lexemes get new dims
UPDATE docs SET body = 'A zebra' WHERE id = 4;
SELECT lexeme, dim, df FROM docs_vocab WHERE lexeme = 'zebra';
SELECT docs_bm25_refresh();
SELECT id, -(bm25 <#> docs_bm25_query('zebra')) > 0 AS hit FROM docs ORDER BY bm25 <#> docs_bm25_query('zebra') LIMIT 1;
DELETE FROM docs WHERE id = 2;
SELECT docs_bm25_refresh();
SELECT n_docs FROM docs_bm25_stats;
SELECT df FROM docs_vocab WHERE lexeme = 'fox';
-- the vocabulary outgrowing the vectors
UPDATE docs_bm25_stats SET dims = 3;
INSERT INTO docs (id, body) VALUES (8, 'zebra fox');
DROP TABLE docs;
DROP FUNCTION docs_bm25_row, docs_bm25_add_lexemes, docs_bm25_load, docs_bm25_refresh, docs_bm25_rebuild, docs_bm25_query;
DROP TABLE docs_vocab, docs_bm25_stats;

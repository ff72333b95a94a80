--
-- Updates with a user's view on sparse_maxscore_last_scan() (issue 40).
-- Both updates add columns to the function (0.1.0 -> 0.2.0 four, 0.2.0 ->
-- 0.3.0 one); they append them in place, so ALTER EXTENSION UPDATE works
-- while views select from the function, and each view keeps the columns
-- it was created with.  Afterwards the function's full signature (OUT
-- columns included) and comment equal a fresh install's.  In a database
-- of its own, like sparsevec_upgrade.
--
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS sparsevec_upgrade_view;
CREATE DATABASE sparsevec_upgrade_view;
\c sparsevec_upgrade_view
SET client_min_messages = warning;

CREATE EXTENSION sparsevec VERSION '0.1.0';
CREATE TABLE docs (id int PRIMARY KEY, v sparsevec(20));
INSERT INTO docs SELECT i, ('{' || (1 + i % 20) || ':' || i || '}/20')::sparsevec
FROM generate_series(1, 300) i;
CREATE INDEX docs_v_idx ON docs USING sparse_maxscore (v);

-- views of every kind on the 0.1.0 function: all columns, some columns,
-- a field of the composite value, the function in a join
CREATE VIEW scan_all AS SELECT * FROM sparse_maxscore_last_scan();
CREATE VIEW scan_some AS SELECT rounds, rows_returned FROM sparse_maxscore_last_scan();
CREATE VIEW scan_field AS SELECT (sparse_maxscore_last_scan()).candidates_scored;
CREATE VIEW scan_join AS SELECT s.rows_returned, c.relname
	FROM sparse_maxscore_last_scan() s, pg_class c WHERE c.relname = 'docs_v_idx';
-- and a function of the user's that returns the composite
CREATE FUNCTION my_scan() RETURNS bigint LANGUAGE sql
	RETURN (SELECT rows_returned FROM sparse_maxscore_last_scan());

ALTER EXTENSION sparsevec UPDATE TO '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'sparsevec';
-- a view on the 0.2.0 function, with its new columns
CREATE VIEW scan_020 AS SELECT rounds, segments_maxscore FROM sparse_maxscore_last_scan();
ALTER EXTENSION sparsevec UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'sparsevec';

-- the views keep their columns
SELECT c.relname, string_agg(a.attname, ',' ORDER BY a.attnum) AS columns
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
WHERE c.relname LIKE 'scan\_%' GROUP BY c.relname ORDER BY c.relname;
-- before a scan, NULL
SELECT * FROM scan_all;
SELECT * FROM scan_some;
SELECT * FROM scan_field;
SELECT * FROM scan_join;
SELECT * FROM scan_020;
SELECT my_scan();
-- after an index scan, its counters, through every view
SET enable_seqscan = off;
SELECT array_agg(id) AS top3 FROM (SELECT id FROM docs ORDER BY v <#> '{3:1}/20' LIMIT 3) s;
RESET enable_seqscan;
SELECT rounds, rows_returned, candidates_scored > 0 AS scored FROM scan_all;
SELECT * FROM scan_some;
SELECT candidates_scored > 0 AS scored FROM scan_field;
SELECT * FROM scan_join;
SELECT * FROM scan_020;
SELECT my_scan();
SELECT rounds, rows_returned, segments_maxscore + segments_exhaustive + segments_ranges AS segments,
	pending_scored FROM sparse_maxscore_last_scan();

-- the function as a fresh install declares it
CREATE TABLE last_scan_def (how text, def text);
INSERT INTO last_scan_def
SELECT 'updated', concat_ws(' | ', pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
	p.prosrc, p.provolatile, p.proisstrict, p.proparallel, obj_description(p.oid, 'pg_proc'))
FROM pg_proc p WHERE p.proname = 'sparse_maxscore_last_scan';
-- (a fresh install: the views go with the extension)
DROP EXTENSION sparsevec CASCADE;
CREATE EXTENSION sparsevec;
INSERT INTO last_scan_def
SELECT 'fresh', concat_ws(' | ', pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
	p.prosrc, p.provolatile, p.proisstrict, p.proparallel, obj_description(p.oid, 'pg_proc'))
FROM pg_proc p WHERE p.proname = 'sparse_maxscore_last_scan';
SELECT count(DISTINCT def) AS definitions, count(*) AS installs FROM last_scan_def;
SELECT def FROM last_scan_def WHERE how = 'fresh';

\c :regress_db
DROP DATABASE sparsevec_upgrade_view;

--
-- sparse_maxscore: queries that reach the scan toasted.  sparsevec has
-- STORAGE external, so a query vector of more than about 2 kB read from a
-- table is a pointer to TOAST chunks, and with STORAGE main or extended a
-- compressed value; through a subquery, a join or a PL/pgSQL variable such
-- a value arrives as is, and the scan must detoast it.  Uses spm_setup's
-- helpers.
--
SELECT setseed(0.23);
SET enable_seqscan = off;

CREATE TABLE spm_tt (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_tt
SELECT i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/30522'
	ELSE spm_rand_sv(30522, 1 + (random() * 60)::int, 1200, 0.1, r < 0.3) END
FROM (SELECT i, random() AS r FROM generate_series(1, 2000) i) s;
CREATE INDEX spm_tt_idx ON spm_tt USING sparse_maxscore (v);

-- queries of a few hundred to about a thousand terms (3 to 9 kB), stored
-- out of line
CREATE TABLE spm_tt_q (qid int, q sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_tt_q
SELECT i, spm_rand_sv(30522, n, 1500, CASE WHEN i % 2 = 0 THEN 0.3 ELSE 0 END, i = 3)
FROM (VALUES (1, 500), (2, 900), (3, 1500), (4, 2500)) AS p(i, n);
-- terms 1 .. 1000, all weights 1: compressible; in a copy of the table
-- with STORAGE main it stays in the row, compressed
INSERT INTO spm_tt_q
SELECT 5, to_sparsevec(array_agg(i), array_agg(1::real), 30522) FROM generate_series(1, 1000) i;
CREATE TABLE spm_tt_qc (qid int, q sparsevec) WITH (autovacuum_enabled = off);
ALTER TABLE spm_tt_qc ALTER COLUMN q SET STORAGE main;
INSERT INTO spm_tt_qc SELECT * FROM spm_tt_q WHERE qid = 5;

SELECT qid, 16 + 8 * nnz(q) > 2100 AS over_2kb FROM spm_tt_q ORDER BY qid;
SELECT reltoastrelid::regclass AS toast FROM pg_class WHERE relname = 'spm_tt_q' \gset
SELECT count(DISTINCT chunk_id) AS values_out_of_line FROM :toast;
-- compressed: fewer bytes stored than the value has
SELECT pg_column_size(q) < 16 + 8 * nnz(q) AS compressed FROM spm_tt_qc;

-- through a scalar subquery (an InitPlan parameter)
EXPLAIN (COSTS OFF)
SELECT id FROM spm_tt ORDER BY v <#> (SELECT q FROM spm_tt_q WHERE qid = 1) LIMIT 10;
SELECT t, qid, lim, spm_check(format('SELECT id, v <#> (SELECT q FROM %1$s WHERE qid = %2$s) AS d FROM spm_tt
	ORDER BY v <#> (SELECT q FROM %1$s WHERE qid = %2$s)', t, qid), lim)
FROM (SELECT 'spm_tt_q' AS t, qid FROM spm_tt_q UNION ALL SELECT 'spm_tt_qc', qid FROM spm_tt_qc) qs,
	(VALUES (10), (NULL)) ls(lim)
ORDER BY t, qid, lim;
SELECT rows_returned FROM sparse_maxscore_last_scan();

-- through a join, as the outer row of each rescan
EXPLAIN (COSTS OFF)
SELECT o.qid, s.id FROM spm_tt_q o CROSS JOIN LATERAL (
	SELECT id FROM spm_tt ORDER BY v <#> o.q LIMIT 10) s;
SELECT t, lim, spm_compare(
	format('SELECT o.qid AS g, s.id, s.d FROM %s o CROSS JOIN LATERAL (
		SELECT id, v <#> o.q AS d FROM spm_tt ORDER BY v <#> o.q %s) s', t, 'LIMIT ' || lim),
	format('SELECT o.qid AS g, r.id, r.v <#> o.q AS d FROM %s o, spm_tt r', t),
	lim)
FROM (VALUES ('spm_tt_q'), ('spm_tt_qc')) ts(t), (VALUES (1), (10), (100), (NULL)) ls(lim)
ORDER BY t, lim;

-- through a PL/pgSQL variable (a constant in the custom plans)
CREATE FUNCTION spm_tt_top(t text, qid int, n int)
RETURNS TABLE (g int, id int, d float8) LANGUAGE plpgsql AS $$
DECLARE
	q sparsevec;
BEGIN
	EXECUTE format('SELECT q FROM %s WHERE qid = %s', t, qid) INTO q;
	RETURN QUERY SELECT 0, p.id, p.v <#> q FROM spm_tt p ORDER BY p.v <#> q LIMIT n;
END $$;
SELECT t, qid, spm_compare_scanned(format('SELECT * FROM spm_tt_top(%L, %s, 10)', t, qid),
	format('SELECT 0 AS g, id, v <#> (SELECT q FROM %s WHERE qid = %s) AS d FROM spm_tt', t, qid),
	10, 'spm_tt_idx')
FROM (SELECT 'spm_tt_q' AS t, qid FROM spm_tt_q UNION ALL SELECT 'spm_tt_qc', qid FROM spm_tt_qc) qs
ORDER BY t, qid;

-- the same vectors as constants in the query text
SELECT qid, spm_check(format('SELECT id, v <#> %1$L::sparsevec AS d FROM spm_tt ORDER BY v <#> %1$L::sparsevec', q), 10)
FROM spm_tt_q ORDER BY qid;

DROP TABLE spm_tt, spm_tt_q, spm_tt_qc;
DROP FUNCTION spm_tt_top;
RESET enable_seqscan;

--
-- sparse_maxscore: DELETE and VACUUM.  VACUUM clears the alive bits of
-- dead rows (ambulkdelete), so index scans skip them instead of handing
-- their TIDs to the executor; results stay exact throughout.  Uses
-- spm_setup's helpers.
--
SELECT setseed(0.57);
SET enable_seqscan = off;

-- 5000 rows, more than one docid window (4096) of the traversal; a btree
-- index too, so that a parallel VACUUM has two indexes to share out
CREATE TABLE spm_vac (id int NOT NULL, note text, v sparsevec)
	WITH (autovacuum_enabled = off, fillfactor = 70);
INSERT INTO spm_vac
SELECT i, 'n' || i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/500'
	ELSE spm_rand_sv(500, 1 + (random() * 20)::int, 480, 0.1, r < 0.4) END
FROM (SELECT i, random() AS r FROM generate_series(1, 5000) i) s;
CREATE INDEX spm_vac_idx ON spm_vac USING sparse_maxscore (v);
CREATE INDEX spm_vac_id ON spm_vac (id);

CREATE TABLE spm_vac_q (qid int, q sparsevec);
INSERT INTO spm_vac_q
SELECT i, spm_rand_sv(500, 1 + (random() * 10)::int, CASE WHEN i % 3 = 0 THEN 500 ELSE 480 END,
	CASE WHEN i % 4 = 0 THEN 0.3 ELSE 0 END, i % 5 = 0)
FROM generate_series(1, 8) i;
INSERT INTO spm_vac_q VALUES (9, '{1:1}/500'), (10, NULL);

-- every query at LIMIT 10, 100 and none, with and without a WHERE that
-- keeps 1 row in 40
CREATE FUNCTION spm_vac_check()
RETURNS TABLE (comparisons bigint, ok bigint, first_problem text) LANGUAGE sql AS $$
	SELECT count(*), count(*) FILTER (WHERE r LIKE 'ok%'),
		min(r) FILTER (WHERE r NOT LIKE 'ok%')
	FROM spm_vac_q,
		(VALUES ('true'), ('id % 40 = 3')) AS fs(f),
		(VALUES (10), (100), (NULL)) AS ls(lim),
		LATERAL spm_check(format('SELECT id, v <#> %1$s AS d FROM spm_vac WHERE %2$s ORDER BY v <#> %1$s',
			coalesce(quote_literal(q) || '::sparsevec', '(SELECT NULL::sparsevec)'), f), lim) r
$$;

-- what VACUUM leaves in pg_class: the index's reltuples counts the live
-- rows (NULL rows included), relpages its size
CREATE FUNCTION spm_vac_stats()
RETURNS TABLE (heap_rows bigint, index_reltuples real, relpages_is_size boolean) LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM spm_vac), reltuples,
		relpages = pg_relation_size('spm_vac_idx') / current_setting('block_size')::int
	FROM pg_class WHERE relname = 'spm_vac_idx'
$$;

SELECT * FROM spm_vac_check();

-- the TIDs of the rows deleted below
CREATE TABLE spm_vac_dead (tid tid);

-- delete the 40 rows closest to {1:1} and those tied with the 40th: they
-- come before all others in the index order.  Until VACUUM the index
-- still returns them (the executor drops them), after VACUUM it skips them.
-- The index's weights are quantized, so the executor rescores and asks for
-- a few rows past the 10th (the extra rows, the same before and after).
SELECT d AS cut FROM (SELECT v <#> '{1:1}/500' AS d FROM spm_vac
	ORDER BY 1 LIMIT 1 OFFSET 39) s \gset
SELECT count(*) AS deleted FROM spm_vac WHERE v <#> '{1:1}/500' <= :cut \gset
SELECT :deleted >= 40 AS at_least_40;
WITH d AS (DELETE FROM spm_vac WHERE v <#> '{1:1}/500' <= :cut RETURNING ctid)
INSERT INTO spm_vac_dead SELECT ctid FROM d;
SELECT count(*) FROM (SELECT id FROM spm_vac ORDER BY v <#> '{1:1}/500' LIMIT 10) s;
SELECT rows_returned AS before_vacuum FROM sparse_maxscore_last_scan() \gset
SELECT :before_vacuum >= :deleted + 10 AS returned_dead_rows_too;
SELECT spm_check($$SELECT id, v <#> '{1:1}/500' AS d FROM spm_vac ORDER BY v <#> '{1:1}/500'$$, 10);
VACUUM spm_vac;
SELECT count(*) FROM (SELECT id FROM spm_vac ORDER BY v <#> '{1:1}/500' LIMIT 10) s;
SELECT rows_returned = :before_vacuum - :deleted AS skipped_exactly_the_dead_rows,
	rows_returned >= 11 AS rescored_past_the_tenth
	FROM sparse_maxscore_last_scan();
SELECT spm_check($$SELECT id, v <#> '{1:1}/500' AS d FROM spm_vac ORDER BY v <#> '{1:1}/500'$$, 10);
SELECT * FROM spm_vac_stats();

-- delete a third of the rows at random (NULL and empty ones among them)
WITH d AS (DELETE FROM spm_vac WHERE random() < 0.33 RETURNING ctid)
INSERT INTO spm_vac_dead SELECT ctid FROM d;
SELECT * FROM spm_vac_check();
VACUUM spm_vac;
SELECT * FROM spm_vac_stats();
SELECT * FROM spm_vac_check();
-- again: nothing left to clear
VACUUM spm_vac;
SELECT * FROM spm_vac_stats();
SELECT * FROM spm_vac_check();

-- a VACUUM that skips the indexes leaves the dead TIDs in place (LP_DEAD),
-- the next one clears them
WITH d AS (DELETE FROM spm_vac WHERE id % 7 = 0 RETURNING ctid)
INSERT INTO spm_vac_dead SELECT ctid FROM d;
VACUUM (INDEX_CLEANUP off) spm_vac;
SELECT * FROM spm_vac_check();
VACUUM spm_vac;
SELECT * FROM spm_vac_stats();
SELECT * FROM spm_vac_check();

-- updates that need no index entry (HOT) now land in the line pointers
-- VACUUM freed, i.e. at TIDs the index still maps to deleted rows
UPDATE spm_vac SET note = note || '+' WHERE id % 5 = 1;
SELECT count(*) > 100 AS tids_reused FROM spm_vac WHERE ctid IN (SELECT tid FROM spm_vac_dead);
SELECT * FROM spm_vac_check();

-- a parallel VACUUM: ambulkdelete may run in a worker
DELETE FROM spm_vac WHERE id % 11 = 0;
SET min_parallel_index_scan_size = 0;
VACUUM (PARALLEL 2) spm_vac;
RESET min_parallel_index_scan_size;
SELECT * FROM spm_vac_stats();
SELECT * FROM spm_vac_check();

-- VACUUM FULL rebuilds the index
VACUUM FULL spm_vac;
SELECT * FROM spm_vac_stats();
SELECT * FROM spm_vac_check();

-- every row gone
DELETE FROM spm_vac;
VACUUM spm_vac;
SELECT * FROM spm_vac_stats();
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/500' AS d FROM spm_vac ORDER BY v <#> '{1:1}/500'$$);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/500' AS d FROM spm_vac ORDER BY v <#> (SELECT NULL::sparsevec)$$);

DROP TABLE spm_vac, spm_vac_q, spm_vac_dead;
DROP FUNCTION spm_vac_check, spm_vac_stats;
RESET enable_seqscan;

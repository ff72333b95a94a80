--
-- VACUUM after writes: bulkdelete clears alive bits in segments and flags
-- pending documents; cleanup flushes the pending list, rewrites segments
-- with many dead documents, reclaims pages and truncates the index.
-- Deleted rows are never returned, also after their heap slots have been
-- reused by new rows.
--

CREATE TABLE w_vac (id int, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO w_vac SELECT i, CASE WHEN i % 19 = 0 THEN NULL ELSE spmw_vec(i, 1 + i % 30, 150, 0.1) END
FROM generate_series(1, 1500) i;
CREATE INDEX w_vac_idx ON w_vac USING sparse_maxscore (v);
-- a pending list of several pages
INSERT INTO w_vac SELECT i, CASE WHEN i % 19 = 0 THEN NULL ELSE spmw_vec(i, 1 + i % 30, 150, 0.1) END
FROM generate_series(1501, 2500) i;
SELECT * FROM spmw_info('w_vac_idx');
SELECT pending_pages > 1 AS several_pages FROM sparse_maxscore_info('w_vac_idx');

-- delete rows from the segment and from the pending list
DELETE FROM w_vac WHERE id % 4 = 0;
SELECT spmw_exact('w_vac', 150);
VACUUM w_vac;
SELECT * FROM spmw_info('w_vac_idx');
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);
SELECT count(*) FROM w_vac;

-- deleted rows in a pending list that also has live rows
INSERT INTO w_vac SELECT i, spmw_vec(i, 12, 150) FROM generate_series(3001, 3400) i;
DELETE FROM w_vac WHERE id BETWEEN 3001 AND 3400 AND id % 3 = 0;
VACUUM w_vac;
SELECT * FROM spmw_info('w_vac_idx');
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);

-- heap slots freed by VACUUM are reused by new rows: the index must
-- return the new rows (with their own vectors) and never the old ones
CREATE TEMP TABLE w_freed AS SELECT ctid AS tid FROM w_vac WHERE id % 5 = 1;
DELETE FROM w_vac WHERE id % 5 = 1;
VACUUM w_vac;
INSERT INTO w_vac SELECT 10000 + i, spmw_vec(10000 + i, 1 + i % 20, 150, 0.3) FROM generate_series(1, 600) i;
SELECT count(*) > 0 AS slots_reused FROM w_vac WHERE ctid IN (SELECT tid FROM w_freed);
SELECT spmw_exact('w_vac', 150);
SELECT sparse_maxscore_flush('w_vac_idx') > 0 AS flushed;
SELECT spmw_exact('w_vac', 150);
VACUUM w_vac;
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);

-- updates: the old versions die, VACUUM clears them
UPDATE w_vac SET v = spmw_vec(id + 20000, 8, 150) WHERE id % 7 = 2;
SELECT spmw_exact('w_vac', 150);
VACUUM w_vac;
SELECT documents = (SELECT count(*) FROM w_vac) AS documents_match, dead FROM spmw_info('w_vac_idx');
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);

-- VACUUM without index cleanup leaves the index alone; scans stay exact
DELETE FROM w_vac WHERE id % 11 = 3;
VACUUM (INDEX_CLEANUP off) w_vac;
SELECT spmw_exact('w_vac', 150);
VACUUM w_vac;
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);
-- ANALYZE only does not touch the index
INSERT INTO w_vac SELECT 30000 + i, spmw_vec(30000 + i, 9, 150) FROM generate_series(1, 20) i;
ANALYZE w_vac;
SELECT pending FROM spmw_info('w_vac_idx');
-- a VACUUM with nothing to remove still flushes, and is idempotent
VACUUM w_vac;
SELECT pending FROM spmw_info('w_vac_idx');
VACUUM w_vac;
SELECT spmw_verify('w_vac_idx');

-- most rows deleted: VACUUM gives the space back (the file shrinks)
SELECT pg_relation_size('w_vac_idx') AS size_before \gset
DELETE FROM w_vac WHERE id % 10 <> 0;
VACUUM w_vac;
SELECT pg_relation_size('w_vac_idx') < :size_before / 2 AS shrunk;
SELECT * FROM spmw_info('w_vac_idx');
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);
-- every row deleted
DELETE FROM w_vac;
VACUUM w_vac;
SELECT * FROM spmw_info('w_vac_idx');
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);
-- and filled again
INSERT INTO w_vac SELECT i, spmw_vec(i, 1 + i % 30, 150, 0.1) FROM generate_series(1, 300) i;
SELECT spmw_exact('w_vac', 150);
VACUUM w_vac;
SELECT * FROM spmw_info('w_vac_idx');
SELECT spmw_verify('w_vac_idx');
SELECT spmw_exact('w_vac', 150);

-- VACUUM FULL rebuilds the index
DELETE FROM w_vac WHERE id % 2 = 0;
VACUUM FULL w_vac;
SELECT * FROM spmw_info('w_vac_idx');
SELECT spmw_exact('w_vac', 150);
DROP TABLE w_vac;

-- (VACUUM of a pending list whose rows are all deleted: test/t/012_spm_churn.pl,
-- where a failure cannot take the shared server down)

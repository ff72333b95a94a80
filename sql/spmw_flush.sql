--
-- Flushing and merging: fastupdate = off (every insert flushes),
-- pending_list_limit (reloption and GUC: inserts flush once the list is
-- larger), sparse_maxscore_flush and sparse_maxscore_compact, the tiered
-- merge policy and compact_segments at VACUUM.
--

CREATE TABLE w_fl (id int, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO w_fl SELECT i, CASE WHEN i % 31 = 0 THEN NULL ELSE spmw_vec(i, 1 + i % 25, 100, 0.1) END
FROM generate_series(1, 400) i;
CREATE INDEX w_fl_idx ON w_fl USING sparse_maxscore (v) WITH (fastupdate = off);
SELECT * FROM spmw_info('w_fl_idx');

-- fastupdate = off: every insert is flushed at once, so the pending list
-- stays empty; the tiered policy merges the small segments as they pile
-- up (four of a size level become one), so their number stays small
INSERT INTO w_fl VALUES (401, spmw_vec(401, 10, 100));
SELECT segments, pending FROM spmw_info('w_fl_idx');
INSERT INTO w_fl VALUES (402, NULL);
INSERT INTO w_fl VALUES (403, spmw_vec(403, 0, 100));
SELECT segments, pending FROM spmw_info('w_fl_idx');
SELECT spmw_exact('w_fl', 100);
DO $$
BEGIN
	FOR i IN 404 .. 460 LOOP
		INSERT INTO w_fl VALUES (i, spmw_vec(i, 1 + i % 25, 100, 0.1));
	END LOOP;
END $$;
SELECT segments BETWEEN 1 AND 4 AS few_segments, pending, documents FROM spmw_info('w_fl_idx');
SELECT spmw_verify('w_fl_idx');
SELECT spmw_exact('w_fl', 100);
-- a multi-row insert flushes after each row too
INSERT INTO w_fl SELECT i, spmw_vec(i, 5, 100) FROM generate_series(461, 480) i;
SELECT segments BETWEEN 1 AND 4 AS few_segments, pending, documents FROM spmw_info('w_fl_idx');
-- a rolled-back insert has been flushed already: its document stays, the
-- row is invisible
BEGIN;
INSERT INTO w_fl VALUES (481, spmw_vec(481, 20, 100));
ROLLBACK;
SELECT pending, documents FROM spmw_info('w_fl_idx');
SELECT spmw_exact('w_fl', 100);

-- back to the pending list, with the smallest limit (64kB): a large
-- insert flushes whenever the list outgrows it
ALTER INDEX w_fl_idx SET (fastupdate = on, pending_list_limit = 64);
INSERT INTO w_fl SELECT i, spmw_vec(i, 60, 100) FROM generate_series(1001, 1010) i;
SELECT pending FROM spmw_info('w_fl_idx');
-- about 2000 rows of ~45 non-zeros, 0.7MB: about ten flushes
INSERT INTO w_fl SELECT i, spmw_vec(i, 60, 100, 0.2) FROM generate_series(1011, 3000) i;
SELECT pending_bytes <= 64 * 1024 + 1024 AS within_limit, pending_documents < 2000 AS flushed,
	segments BETWEEN 1 AND 8 AS few_segments
FROM sparse_maxscore_info('w_fl_idx');
SELECT documents FROM spmw_info('w_fl_idx');
SELECT spmw_verify('w_fl_idx');
SELECT spmw_exact('w_fl', 100);

-- the GUC is the limit when the reloption is not set
ALTER INDEX w_fl_idx RESET (pending_list_limit);
SELECT sparse_maxscore_flush('w_fl_idx') > 0 AS flushed;
SET sparse_maxscore.pending_list_limit = '64kB';
INSERT INTO w_fl SELECT i, spmw_vec(i, 60, 100) FROM generate_series(3001, 3500) i;
SELECT pending_bytes <= 64 * 1024 + 1024 AS within_limit, pending_documents < 500 AS flushed
FROM sparse_maxscore_info('w_fl_idx');
RESET sparse_maxscore.pending_list_limit;
INSERT INTO w_fl SELECT i, spmw_vec(i, 60, 100) FROM generate_series(3501, 4000) i;
SELECT pending_documents >= 500 AS not_flushed FROM sparse_maxscore_info('w_fl_idx');
SELECT spmw_exact('w_fl', 100);

-- the reloption's range
ALTER INDEX w_fl_idx SET (pending_list_limit = 63);
ALTER INDEX w_fl_idx SET (compact_segments = 0);
ALTER INDEX w_fl_idx SET (compact_segments = 31);
ALTER INDEX w_fl_idx SET (fastupdate = maybe);
CREATE INDEX w_fl_bad ON w_fl USING sparse_maxscore (v) WITH (pending_list_limit = -2);
CREATE INDEX w_fl_bad ON w_fl USING sparse_maxscore (v) WITH (no_such_option = 1);
SELECT reloptions FROM pg_class WHERE relname = 'w_fl_idx';

-- sparse_maxscore_flush moves everything and returns how many rows
SELECT pending_documents AS pending_before FROM sparse_maxscore_info('w_fl_idx') \gset
SELECT sparse_maxscore_flush('w_fl_idx') = :pending_before AS moved_all;
SELECT pending, documents FROM spmw_info('w_fl_idx');
SELECT sparse_maxscore_flush('w_fl_idx');
SELECT spmw_verify('w_fl_idx');

-- sparse_maxscore_compact: flush, then merge every segment into one
-- (it returns the number of segments after the flush)
INSERT INTO w_fl SELECT i, spmw_vec(i, 7, 100) FROM generate_series(4001, 4050) i;
SELECT segments AS segments_before FROM sparse_maxscore_info('w_fl_idx') \gset
SELECT sparse_maxscore_compact('w_fl_idx') BETWEEN :segments_before AND :segments_before + 1 AS merged_all;
SELECT * FROM spmw_info('w_fl_idx');
SELECT spmw_verify('w_fl_idx');
SELECT spmw_exact('w_fl', 100);
-- one segment without dead rows: nothing to do
SELECT sparse_maxscore_compact('w_fl_idx');
SELECT * FROM spmw_info('w_fl_idx');

-- compact drops dead rows (cleared by VACUUM) even from a single segment;
-- 10% dead is below VACUUM's own threshold for rewriting a segment (the
-- first VACUUM gives back the pages the compaction freed, so that the
-- second does not rewrite the index to shrink it)
VACUUM w_fl;
DELETE FROM w_fl WHERE id % 10 = 0;
VACUUM w_fl;
SELECT documents, dead FROM spmw_info('w_fl_idx');
SELECT spmw_exact('w_fl', 100);
SELECT sparse_maxscore_compact('w_fl_idx');
SELECT * FROM spmw_info('w_fl_idx');
SELECT spmw_verify('w_fl_idx');
SELECT spmw_exact('w_fl', 100);

-- compact_segments: VACUUM merges down to that many segments
ALTER INDEX w_fl_idx SET (compact_segments = 1, pending_list_limit = 64);
INSERT INTO w_fl SELECT i, spmw_vec(i, 60, 100) FROM generate_series(5001, 5600) i;
SELECT sparse_maxscore_flush('w_fl_idx') >= 0 AS flushed;
SELECT segments > 1 AS several FROM sparse_maxscore_info('w_fl_idx');
VACUUM w_fl;
SELECT segments, pending FROM spmw_info('w_fl_idx');
SELECT spmw_verify('w_fl_idx');
SELECT spmw_exact('w_fl', 100);
ALTER INDEX w_fl_idx SET (compact_segments = 3);
INSERT INTO w_fl SELECT i, spmw_vec(i, 60, 100) FROM generate_series(6001, 7000) i;
VACUUM w_fl;
SELECT segments <= 3 AS at_most_3, pending FROM spmw_info('w_fl_idx');
SELECT spmw_exact('w_fl', 100);

-- flushing an index of an empty table, and compacting it
CREATE TABLE w_fl_empty (id int, v sparsevec) WITH (autovacuum_enabled = off);
CREATE INDEX w_fl_empty_idx ON w_fl_empty USING sparse_maxscore (v);
SELECT sparse_maxscore_flush('w_fl_empty_idx'), sparse_maxscore_compact('w_fl_empty_idx');
SELECT spmw_verify('w_fl_empty_idx');
-- a pending list of NULL rows only becomes a segment without postings
INSERT INTO w_fl_empty VALUES (1, NULL), (2, NULL);
SELECT sparse_maxscore_flush('w_fl_empty_idx');
SELECT * FROM spmw_info('w_fl_empty_idx');
SELECT spmw_exact('w_fl_empty', 10);
SELECT sparse_maxscore_compact('w_fl_empty_idx');
SELECT * FROM spmw_info('w_fl_empty_idx');
SELECT spmw_verify('w_fl_empty_idx');

DROP TABLE w_fl, w_fl_empty;

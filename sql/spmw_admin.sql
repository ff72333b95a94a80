--
-- The maintenance functions' checks: the argument must be a
-- sparse_maxscore index (else ERRCODE_WRONG_OBJECT_TYPE); flush, compact
-- and verify need its ownership (GIN's gin_clean_pending_list rule; verify
-- holds the structure lock, VACUUM's lock, while it reads every page), info
-- the SELECT privilege on the table or membership in pg_stat_scan_tables
-- (else ERRCODE_INSUFFICIENT_PRIVILEGE).  (During recovery -> 55000 is tested on
-- a standby, test/t/010_spm_standby.pl.)  Errors are shown as SQLSTATE and
-- message.
--

CREATE TABLE w_adm (id int, v sparsevec, n int) WITH (autovacuum_enabled = off);
INSERT INTO w_adm SELECT i, spmw_vec(i, 5, 20), i FROM generate_series(1, 50) i;
CREATE INDEX w_adm_idx ON w_adm USING sparse_maxscore (v);
CREATE INDEX w_adm_btree ON w_adm (n);
INSERT INTO w_adm SELECT i, spmw_vec(i, 5, 20), i FROM generate_series(51, 60) i;

-- not an index, or not ours
SELECT f, spmw_try(format('SELECT %s(%L)', f, r)) AS result
FROM unnest('{sparse_maxscore_flush,sparse_maxscore_compact,sparse_maxscore_info,sparse_maxscore_segments,sparse_maxscore_verify}'::text[]) f,
	unnest('{w_adm,w_adm_btree}'::text[]) r
ORDER BY r, f;
-- a partitioned index is not a sparse_maxscore index either (its
-- partitions' indexes are)
CREATE TABLE w_adm_part (id int, v sparsevec) PARTITION BY RANGE (id);
CREATE TABLE w_adm_part1 PARTITION OF w_adm_part FOR VALUES FROM (0) TO (100);
CREATE INDEX w_adm_part_idx ON w_adm_part USING sparse_maxscore (v);
INSERT INTO w_adm_part SELECT i, spmw_vec(i, 4, 20) FROM generate_series(1, 30) i;
SELECT spmw_try($$SELECT sparse_maxscore_flush('w_adm_part_idx')$$);
SELECT sparse_maxscore_flush(c.oid) FROM pg_class c
WHERE c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'w_adm_part_idx'::regclass);
SELECT spmw_exact('w_adm_part', 20);
DROP TABLE w_adm_part;
-- a view, a sequence
CREATE VIEW w_adm_view AS SELECT * FROM w_adm;
CREATE SEQUENCE w_adm_seq;
SELECT spmw_try($$SELECT sparse_maxscore_info('w_adm_view')$$);
SELECT spmw_try($$SELECT sparse_maxscore_verify('w_adm_seq')$$);
DROP VIEW w_adm_view;
DROP SEQUENCE w_adm_seq;
-- NULL: the functions are strict
SELECT sparse_maxscore_flush(NULL), sparse_maxscore_compact(NULL), sparse_maxscore_verify(NULL);
SELECT * FROM sparse_maxscore_info(NULL);

-- not the owner: flush, compact and verify refuse; info and segments need
-- no more than SELECT on the table
CREATE ROLE w_adm_other;
GRANT SELECT, INSERT, DELETE ON w_adm TO w_adm_other;
SET ROLE w_adm_other;
SELECT f, spmw_try(format('SELECT %s(%L)', f, 'w_adm_idx')) AS result
FROM unnest('{sparse_maxscore_flush,sparse_maxscore_compact,sparse_maxscore_info,sparse_maxscore_segments,sparse_maxscore_verify}'::text[]) f
ORDER BY f;
-- without SELECT (INSERT only) info refuses too, naming the table
RESET ROLE;
CREATE ROLE w_adm_writer;
GRANT INSERT ON w_adm TO w_adm_writer;
SET ROLE w_adm_writer;
SELECT spmw_try($$SELECT sparse_maxscore_info('w_adm_idx')$$) AS info,
	spmw_try($$SELECT sparse_maxscore_segments('w_adm_idx')$$) AS segments;
SELECT segments FROM sparse_maxscore_info('w_adm_idx');
-- SELECT on one column is not SELECT on the table
RESET ROLE;
GRANT SELECT (id) ON w_adm TO w_adm_writer;
SET ROLE w_adm_writer;
SELECT spmw_try($$SELECT sparse_maxscore_info('w_adm_idx')$$) AS info,
	spmw_try($$SELECT sparse_maxscore_segments('w_adm_idx')$$) AS segments;
-- a member of pg_stat_scan_tables may (as with pgstattuple's pgstatindex),
-- still not verify
RESET ROLE;
GRANT pg_stat_scan_tables TO w_adm_writer;
SET ROLE w_adm_writer;
SELECT spmw_try($$SELECT sparse_maxscore_info('w_adm_idx')$$) AS info,
	spmw_try($$SELECT count(*) FROM sparse_maxscore_segments('w_adm_idx')$$) AS segments,
	spmw_try($$SELECT sparse_maxscore_verify('w_adm_idx')$$) AS verify;
RESET ROLE;
DROP OWNED BY w_adm_writer;
DROP ROLE w_adm_writer;
-- but writing to the table does not need ownership, also when the insert
-- flushes (fastupdate = off) or VACUUM would
RESET ROLE;
ALTER INDEX w_adm_idx SET (fastupdate = off);
SET ROLE w_adm_other;
INSERT INTO w_adm SELECT i, spmw_vec(i, 5, 20), i FROM generate_series(61, 70) i;
DELETE FROM w_adm WHERE id % 9 = 0;
SELECT spmw_exact('w_adm', 20);
RESET ROLE;
SELECT pending, documents FROM spmw_info('w_adm_idx');
-- ownership passed on
ALTER TABLE w_adm OWNER TO w_adm_other;
SET ROLE w_adm_other;
SELECT sparse_maxscore_flush('w_adm_idx');
SELECT segments, pending FROM spmw_info('w_adm_idx');
SELECT spmw_verify('w_adm_idx');
RESET ROLE;
ALTER TABLE w_adm OWNER TO CURRENT_USER;

-- anyone may execute the functions: the owner check is what guards an
-- index
SELECT p.proname, has_function_privilege('w_adm_other', p.oid, 'EXECUTE') AS execute
FROM pg_proc p WHERE p.proname LIKE 'sparse_maxscore_%' ORDER BY 1;

-- the index of a temporary table of this session works
CREATE TEMP TABLE w_adm_temp (id int, v sparsevec);
CREATE INDEX w_adm_temp_idx ON w_adm_temp USING sparse_maxscore (v);
INSERT INTO w_adm_temp SELECT i, spmw_vec(i, 3, 20) FROM generate_series(1, 40) i;
SELECT sparse_maxscore_flush('w_adm_temp_idx');
INSERT INTO w_adm_temp SELECT i, spmw_vec(i, 3, 20) FROM generate_series(41, 50) i;
SELECT * FROM spmw_info('w_adm_temp_idx');
SELECT spmw_exact('w_adm_temp', 20);
DELETE FROM w_adm_temp WHERE id % 2 = 0;
VACUUM w_adm_temp;
SELECT sparse_maxscore_compact('w_adm_temp_idx');
SELECT spmw_verify('w_adm_temp_idx');
SELECT spmw_exact('w_adm_temp', 20);
DROP TABLE w_adm_temp;

-- the info and verify outputs on this index
SELECT sparse_maxscore_compact('w_adm_idx');
SELECT * FROM spmw_info('w_adm_idx');
SELECT dead_fraction, pages > 1 AS pages, free_pages >= 0 AS free_pages, pending_bytes, pending_pages
FROM sparse_maxscore_info('w_adm_idx');
SELECT sparse_maxscore_verify('w_adm_idx') ~
	'^segments=1 documents=\d+ postings=\d+ pending=0 pages=\d+ free=\d+ unreachable=0$' AS verify_format;

DROP TABLE w_adm;
DROP ROLE w_adm_other;

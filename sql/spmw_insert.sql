--
-- Inserts after CREATE INDEX: rows go to the pending list, where scans
-- score them by brute force, until a flush moves them into a segment.
-- NULL rows, empty vectors and negative weights; rolled-back inserts;
-- updates; an index built on an empty table; the dimension rule.
--
-- Tables have autovacuum off: an autovacuum would flush the pending list
-- behind our back and change what sparse_maxscore_info reports.
--

-- rows: about 20 non-zeros of 200 dimensions; every 23rd NULL, every 29th
-- empty, every 5th with some negative weights
CREATE TABLE w_ins (id int, v sparsevec, note text) WITH (autovacuum_enabled = off);
INSERT INTO w_ins
SELECT i, CASE WHEN i % 23 = 0 THEN NULL WHEN i % 29 = 0 THEN spmw_vec(i, 0, 200)
	ELSE spmw_vec(i, 1 + i % 40, 200, CASE WHEN i % 5 = 0 THEN 0.3 ELSE 0 END) END, 'built'
FROM generate_series(1, 600) i;
CREATE INDEX w_ins_idx ON w_ins USING sparse_maxscore (v);
SELECT * FROM spmw_info('w_ins_idx');

-- inserts land in the pending list
INSERT INTO w_ins
SELECT i, CASE WHEN i % 23 = 0 THEN NULL WHEN i % 29 = 0 THEN spmw_vec(i, 0, 200)
	ELSE spmw_vec(i, 1 + i % 40, 200, CASE WHEN i % 5 = 0 THEN 0.3 ELSE 0 END) END, 'inserted'
FROM generate_series(601, 900) i;
SELECT * FROM spmw_info('w_ins_idx');
SELECT pending_bytes > 0 AS has_bytes, pending_pages > 0 AS has_pages FROM sparse_maxscore_info('w_ins_idx');
SELECT spmw_exact('w_ins', 200);
SELECT spmw_verify('w_ins_idx');

-- one row at a time, and rows equal to existing ones (ties across the
-- segment and the pending list)
INSERT INTO w_ins VALUES (901, spmw_vec(7, 8, 200), 'single');
INSERT INTO w_ins VALUES (902, NULL, 'single');
INSERT INTO w_ins VALUES (903, spmw_vec(1, 0, 200), 'single');
INSERT INTO w_ins SELECT 1000 + id, v, 'copy' FROM w_ins WHERE id % 50 = 1;
SELECT * FROM spmw_info('w_ins_idx');
SELECT spmw_exact('w_ins', 200);

-- rolled-back inserts stay in the index (as documents of aborted rows),
-- and scans must not return them
BEGIN;
INSERT INTO w_ins SELECT 2000 + i, spmw_vec(2000 + i, 10, 200), 'aborted' FROM generate_series(1, 50) i;
SELECT spmw_exact('w_ins', 200);
ROLLBACK;
SELECT documents, pending FROM spmw_info('w_ins_idx');
SELECT count(*) FROM w_ins WHERE note = 'aborted';
SELECT spmw_exact('w_ins', 200);

-- a transaction sees its own inserts through the index
BEGIN;
INSERT INTO w_ins VALUES (3001, spmw_vec(3001, 30, 200), 'own');
SELECT spmw_exact('w_ins', 200);
SELECT id FROM w_ins ORDER BY v <#> spmw_vec(3001, 30, 200) LIMIT 1;
COMMIT;

-- updates: a new version of v is a new document; an update of another
-- column may be HOT (no new document) or not, either way exact
UPDATE w_ins SET v = spmw_vec(id + 5000, 12, 200) WHERE id % 7 = 0;
UPDATE w_ins SET note = 'updated' WHERE id % 11 = 0;
UPDATE w_ins SET v = NULL WHERE id % 13 = 0;
SELECT spmw_exact('w_ins', 200);

-- flush: everything pending (live or not) moves into a new segment
SELECT pending_documents AS pending_before FROM sparse_maxscore_info('w_ins_idx') \gset
SELECT sparse_maxscore_flush('w_ins_idx') = :pending_before AS moved_all;
SELECT * FROM spmw_info('w_ins_idx');
SELECT spmw_verify('w_ins_idx');
SELECT spmw_exact('w_ins', 200);
-- nothing left to flush
SELECT sparse_maxscore_flush('w_ins_idx');

-- and inserts after the flush start a new pending list
INSERT INTO w_ins SELECT 4000 + i, spmw_vec(4000 + i, 15, 200, 0.2), 'after flush' FROM generate_series(1, 40) i;
SELECT segments, pending FROM spmw_info('w_ins_idx');
SELECT spmw_exact('w_ins', 200);
SELECT spmw_verify('w_ins_idx');
DROP TABLE w_ins;

-- an index built on an empty table: no segment, dimensions unknown
CREATE TABLE w_empty (id int, v sparsevec) WITH (autovacuum_enabled = off);
CREATE INDEX w_empty_idx ON w_empty USING sparse_maxscore (v);
SELECT * FROM spmw_info('w_empty_idx');
SELECT spmw_exact('w_empty', 50);
-- NULL rows do not fix the dimensions
INSERT INTO w_empty VALUES (1, NULL), (2, NULL);
SELECT * FROM spmw_info('w_empty_idx');
SELECT spmw_exact('w_empty', 50);
-- the first vector does
INSERT INTO w_empty VALUES (3, spmw_vec(3, 10, 50)), (4, spmw_vec(4, 0, 50));
SELECT dims, documents, nulls FROM spmw_info('w_empty_idx');
-- a vector of other dimensions is refused, in the pending list ...
INSERT INTO w_empty VALUES (5, spmw_vec(5, 10, 51));
INSERT INTO w_empty VALUES (5, '{}/49');
-- ... and after a flush
SELECT sparse_maxscore_flush('w_empty_idx');
INSERT INTO w_empty VALUES (5, spmw_vec(5, 10, 51));
SELECT spmw_try($$INSERT INTO w_empty VALUES (5, '{1:1}/1')$$);
-- the refused rows left nothing behind
SELECT count(*) FROM w_empty;
SELECT * FROM spmw_info('w_empty_idx');
INSERT INTO w_empty SELECT i, spmw_vec(i, 1 + i % 12, 50) FROM generate_series(10, 200) i;
SELECT spmw_exact('w_empty', 50);
SELECT spmw_verify('w_empty_idx');
DROP TABLE w_empty;

-- an index of NULL rows only, built and then inserted into
CREATE TABLE w_nulls (id int, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO w_nulls SELECT i, NULL FROM generate_series(1, 30) i;
CREATE INDEX w_nulls_idx ON w_nulls USING sparse_maxscore (v);
SELECT * FROM spmw_info('w_nulls_idx');
INSERT INTO w_nulls SELECT i, NULL FROM generate_series(31, 40) i;
SELECT spmw_exact('w_nulls', 30);
INSERT INTO w_nulls SELECT i, spmw_vec(i, 5, 30) FROM generate_series(41, 60) i;
SELECT * FROM spmw_info('w_nulls_idx');
SELECT spmw_exact('w_nulls', 30);
SELECT sparse_maxscore_flush('w_nulls_idx');
SELECT spmw_exact('w_nulls', 30);
SELECT spmw_verify('w_nulls_idx');
DROP TABLE w_nulls;

-- a typmod column: the cast refuses other dimensions before the index
-- sees them
CREATE TABLE w_typmod (id int, v sparsevec(40)) WITH (autovacuum_enabled = off);
CREATE INDEX w_typmod_idx ON w_typmod USING sparse_maxscore (v);
INSERT INTO w_typmod SELECT i, spmw_vec(i, 6, 40) FROM generate_series(1, 100) i;
INSERT INTO w_typmod VALUES (0, '{1:1}/41');
SELECT spmw_exact('w_typmod', 40);
DROP TABLE w_typmod;

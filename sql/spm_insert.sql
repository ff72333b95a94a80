--
-- sparse_maxscore: every way of adding index entries after the build, as
-- seen by an index scan (the spmw_* files test the write path in depth).
-- Uses spm_setup's helpers.
--
SET enable_seqscan = off;
CREATE TABLE spm_ins (id int NOT NULL, note text, v sparsevec)
	WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO spm_ins VALUES (1, 'a', '{1:1}/4'), (2, 'b', '{1:2,2:1}/4'), (3, 'c', NULL),
	(4, 'd', '{}/4'), (5, 'e', '{2:-1}/4');
CREATE INDEX spm_ins_idx ON spm_ins USING sparse_maxscore (v);

-- every way of adding an index entry: INSERT (vector, NULL, empty), a
-- non-HOT UPDATE, COPY, and an INSERT in a subtransaction that rolls back
INSERT INTO spm_ins VALUES (6, 'f', '{3:1}/4');
INSERT INTO spm_ins VALUES (7, 'g', NULL);
INSERT INTO spm_ins VALUES (8, 'h', '{}/4');
UPDATE spm_ins SET v = '{3:3}/4' WHERE id = 1;
COPY spm_ins FROM stdin;
9	i	{4:1}/4
\.
BEGIN;
SAVEPOINT s;
INSERT INTO spm_ins VALUES (10, 'j', '{1:5}/4');
ROLLBACK TO SAVEPOINT s;
COMMIT;

-- the index sees exactly the committed rows, in the seq scan's order
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1,2:1}/4' AS d FROM spm_ins ORDER BY v <#> '{1:1,2:1}/4'$$);
SELECT spm_check($$SELECT id, v <#> '{1:1,3:1}/4' AS d FROM spm_ins ORDER BY v <#> '{1:1,3:1}/4'$$, 3);
SELECT count(*) FROM spm_ins;

-- an update that needs no new index entry (HOT: v unchanged, room on the
-- page) is fine, and index scans find the new row version
UPDATE spm_ins SET note = note || '2' WHERE id IN (1, 2, 3);
SELECT s.d, s.pos, array_agg(t.note ORDER BY t.note) AS notes
FROM spm_index_groups($$SELECT id, v <#> '{1:1,2:1}/4' AS d FROM spm_ins ORDER BY v <#> '{1:1,2:1}/4'$$) s,
	unnest(s.ids) AS i(id) JOIN spm_ins t ON t.id = i.id
GROUP BY s.d, s.pos
ORDER BY s.pos;
-- and so is DELETE
DELETE FROM spm_ins WHERE id = 2;
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1,2:1}/4' AS d FROM spm_ins ORDER BY v <#> '{1:1,2:1}/4'$$);

-- a row outside a partial index's predicate needs no entry in it
CREATE TABLE spm_ins_part (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_ins_part VALUES (1, '{1:1}/4'), (2, '{1:3}/4');
CREATE INDEX spm_ins_part_idx ON spm_ins_part USING sparse_maxscore (v) WHERE id < 100;
INSERT INTO spm_ins_part VALUES (100, '{1:2}/4');
INSERT INTO spm_ins_part VALUES (3, '{1:2}/4');
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/4' AS d FROM spm_ins_part WHERE id < 100 ORDER BY v <#> '{1:1}/4'$$);

-- a rebuilt index answers the same
REINDEX INDEX spm_ins_idx;
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1,2:1}/4' AS d FROM spm_ins ORDER BY v <#> '{1:1,2:1}/4'$$);

DROP TABLE spm_ins, spm_ins_part;
RESET enable_seqscan;

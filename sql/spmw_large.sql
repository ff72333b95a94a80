--
-- Documents larger than a page in the pending list (doc/design.md, hazard
-- 10): a head tuple plus continuation chunks on pages of their own.  Sizes
-- around the one-page limit (1014 non-zeros fill a page exactly with the
-- current tuple layout; 1015 is the smallest continued document; 2028 fill
-- two chunk pages, 2029 need a third), 5000, pgvector's limit of 16000, and
-- 100000.  Inserted after the build, scanned while pending (also as
-- queries), flushed, deleted, vacuumed, compacted.
--

-- a document of n non-zeros: indices spread over 300000 dimensions,
-- weights varying (some negative when neg)
CREATE FUNCTION spmw_big(n int, shift int, neg boolean DEFAULT false) RETURNS sparsevec
LANGUAGE sql IMMUTABLE AS $$
	SELECT to_sparsevec(array_agg(1 + (j * 3 + shift) % 300000 ORDER BY 1 + (j * 3 + shift) % 300000),
		array_agg(((1 + (j * 7 + shift) % 9) / 8.0 * CASE WHEN neg AND j % 5 = 0 THEN -1 ELSE 1 END)::real
			ORDER BY 1 + (j * 3 + shift) % 300000), 300000)
	FROM generate_series(0, n - 1) j
$$;

CREATE TABLE w_big (id int, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO w_big SELECT i, spmw_vec(i, 1 + i % 60, 300000) FROM generate_series(1, 300) i;
-- small documents on the terms the big ones use, so that scores mix
INSERT INTO w_big SELECT 300 + i, spmw_big(1 + i % 30, i) FROM generate_series(1, 100) i;
CREATE INDEX w_big_idx ON w_big USING sparse_maxscore (v);

INSERT INTO w_big VALUES
	(1001, spmw_big(1013, 0)),
	(1002, spmw_big(1014, 1)),
	(1003, spmw_big(1015, 2)),
	(1004, spmw_vec(1004, 10, 300000)),
	(1005, spmw_big(2028, 0, true)),
	(1006, spmw_big(2029, 1)),
	(1007, NULL),
	(1008, spmw_big(5000, 2)),
	(1009, spmw_big(16000, 0, true)),
	(1010, spmw_vec(1010, 10, 300000)),
	(1011, spmw_big(100000, 1));
SELECT id, nnz(v) FROM w_big WHERE id > 1000 ORDER BY id;
SELECT * FROM spmw_info('w_big_idx');
SELECT pending_pages >= 100 AS spans_pages FROM sparse_maxscore_info('w_big_idx');
SELECT spmw_verify('w_big_idx');

-- scanned while pending: the standard queries, and the big documents
-- themselves as queries (scores of up to 100000 products)
SELECT spmw_exact('w_big', 300000);
SELECT id, coalesce(spmw_diff('w_big', v, 20), 'ok') AS lim20, coalesce(spmw_diff('w_big', v), 'ok') AS all_rows
FROM w_big WHERE id IN (1003, 1006, 1008, 1009, 1011) ORDER BY id;
-- each big document is its own best match (all weights positive, and no
-- other document has more of its terms)
SET enable_seqscan = off;
SELECT q.id, (SELECT b.id FROM w_big b ORDER BY b.v <#> q.v LIMIT 1) AS best
FROM w_big q WHERE q.id IN (1008, 1011) ORDER BY q.id;
RESET enable_seqscan;

-- flushed into a segment: same answers
SELECT sparse_maxscore_flush('w_big_idx');
SELECT * FROM spmw_info('w_big_idx');
SELECT spmw_verify('w_big_idx');
SELECT spmw_exact('w_big', 300000);
-- (not the 100000 one: once it is in a segment, a query that large takes
-- seconds through the index)
SELECT id, coalesce(spmw_diff('w_big', v, 20), 'ok') AS lim20, coalesce(spmw_diff('w_big', v), 'ok') AS all_rows
FROM w_big WHERE id IN (1003, 1006, 1008, 1009) ORDER BY id;

-- more big documents after the flush; delete some while pending and some
-- in the segment, then VACUUM (bulkdelete flags the continued documents in
-- the pending list, cleanup flushes and compacts)
INSERT INTO w_big VALUES
	(2001, spmw_big(100000, 2, true)),
	(2002, spmw_big(5000, 0)),
	(2003, spmw_vec(2003, 10, 300000)),
	(2004, spmw_big(3000, 1)),
	(2005, spmw_big(1015, 1));
SELECT pending, pending_postings FROM spmw_info('w_big_idx');
DELETE FROM w_big WHERE id IN (1002, 1008, 1011, 2001, 2004);
SELECT spmw_exact('w_big', 300000);
VACUUM w_big;
SELECT * FROM spmw_info('w_big_idx');
SELECT spmw_verify('w_big_idx');
SELECT spmw_exact('w_big', 300000);
SELECT id, coalesce(spmw_diff('w_big', v, 20), 'ok') AS lim20, coalesce(spmw_diff('w_big', v), 'ok') AS all_rows
FROM w_big WHERE id IN (1003, 1006, 2002, 2005) ORDER BY id;

-- a big document deleted and vacuumed before any flush, in a fresh pending
-- list: its chunk pages become free
INSERT INTO w_big VALUES (3001, spmw_big(50000, 0)), (3002, spmw_big(20, 3));
DELETE FROM w_big WHERE id = 3001;
VACUUM w_big;
SELECT * FROM spmw_info('w_big_idx');
SELECT spmw_verify('w_big_idx');
SELECT spmw_exact('w_big', 300000);

-- compaction keeps the big documents whole
INSERT INTO w_big VALUES (4001, spmw_big(7000, 2, true));
SELECT sparse_maxscore_compact('w_big_idx') > 0 AS compacted;
SELECT * FROM spmw_info('w_big_idx');
SELECT spmw_verify('w_big_idx');
SELECT id, coalesce(spmw_diff('w_big', v), 'ok') AS all_rows
FROM w_big WHERE id IN (1009, 2002, 4001) ORDER BY id;
SELECT spmw_exact('w_big', 300000);

DROP TABLE w_big;
DROP FUNCTION spmw_big(int, int, boolean);

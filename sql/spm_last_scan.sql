--
-- sparse_maxscore_last_scan() (issue 40): NULL while the session has run
-- no index scan (a new session, here: pg_regress starts every file in
-- one), and pending_scored, the pending-list documents a scan scores by
-- brute force, summed over its rounds.
--
SELECT * FROM sparse_maxscore_last_scan();
SELECT sparse_maxscore_last_scan() IS NULL AS no_scan_yet;
SELECT count(*) AS segment_rows FROM sparse_maxscore_last_scan_segments();

CREATE TABLE spm_ls (id int, v sparsevec(50)) WITH (autovacuum_enabled = off);
INSERT INTO spm_ls SELECT i, ('{' || (1 + i % 25) || ':' || (1 + i % 7) ||
	',' || (26 + (i * 7) % 25) || ':1}/50')::sparsevec
FROM generate_series(1, 400) i;
CREATE INDEX spm_ls_idx ON spm_ls USING sparse_maxscore (v);

-- a seq scan, or a plan that is only explained, is no index scan
SET enable_indexscan = off;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1}/50' LIMIT 3) s;
RESET enable_indexscan;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM spm_ls ORDER BY v <#> '{1:1}/50' LIMIT 3;
SELECT sparse_maxscore_last_scan() IS NULL AS no_scan_yet;

-- an index scan of the built index: no pending list
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1}/50' LIMIT 3) s;
SELECT rounds, rows_returned, candidates_scored > 0 AS scored, pending_scored
FROM sparse_maxscore_last_scan();

-- 29 rows in the pending list, of which a NULL one and an empty one:
-- each pass over the list scores the 28 that are not NULL (the empty
-- vector too: its score is computed, 0)
INSERT INTO spm_ls SELECT 400 + i, ('{' || i || ':2}/50')::sparsevec
FROM generate_series(1, 27) i;
INSERT INTO spm_ls VALUES (428, NULL), (429, '{}/50');
SELECT pending_documents, segments FROM sparse_maxscore_info('spm_ls_idx');
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1}/50' LIMIT 3) s;
SELECT rounds, rows_returned, pending_scored FROM sparse_maxscore_last_scan();
-- every row: the rounds, the sorted pass, the zero, negative and NULL
-- phases each score the pending list again
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1}/50') s;
SELECT rounds, rows_returned, pending_scored,
	pending_scored % 28 AS remainder
FROM sparse_maxscore_last_scan();
-- a NULL query (in a subquery: v <#> NULL would be folded to NULL, and
-- the ORDER BY dropped) scores nothing
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> (SELECT NULL::sparsevec)) s;
SELECT rounds, rows_returned, pending_scored FROM sparse_maxscore_last_scan();
-- after a flush the pending list is empty again
SELECT sparse_maxscore_flush('spm_ls_idx') AS flushed;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1}/50' LIMIT 3) s;
SELECT rounds, pending_scored FROM sparse_maxscore_last_scan();
-- the counters stay those of the last scan that ran, in this session
RESET enable_seqscan;
SET enable_indexscan = off;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{2:1}/50' LIMIT 3) s;
SELECT rounds, pending_scored FROM sparse_maxscore_last_scan();
RESET enable_indexscan;

-- the result is one row, so it works in a view and as a composite value
CREATE VIEW spm_ls_view AS SELECT rounds, pending_scored FROM sparse_maxscore_last_scan();
SELECT * FROM spm_ls_view;
SELECT (sparse_maxscore_last_scan()).pending_scored;
DROP VIEW spm_ls_view;

-- sparse_maxscore_last_scan_segments() (issue 37): one row per segment of
-- each pass of the scan (top-k rounds, the sorted passes, the batches of
-- zero rows), saying which kernel scored it, the query terms' postings
-- there, the policy's estimate and what was decoded; the sums are the
-- counters of sparse_maxscore_last_scan().  Three segments:
INSERT INTO spm_ls SELECT 500 + i, ('{' || (1 + i % 25) || ':3}/50')::sparsevec
FROM generate_series(1, 60) i;
SELECT sparse_maxscore_flush('spm_ls_idx') AS flushed;
SELECT segments FROM sparse_maxscore_info('spm_ls_idx');
SET enable_seqscan = off;
CREATE FUNCTION spm_ls_segments_agree() RETURNS TABLE (rounds bigint, segment_rows bigint, sums_agree boolean, exhaustive_decodes_all boolean)
LANGUAGE sql AS $$
	SELECT c.rounds, s.n,
		s.decoded = c.postings_decoded AND s.estimated = c.postings_estimated
		AND s.exh = c.segments_exhaustive AND s.ms = c.segments_maxscore,
		s.exh_all
	FROM sparse_maxscore_last_scan() c,
		(SELECT count(*) AS n, sum(postings_decoded) AS decoded,
			sum(postings_estimated) AS estimated,
			count(*) FILTER (WHERE algorithm = 'exhaustive') AS exh,
			count(*) FILTER (WHERE algorithm = 'maxscore') AS ms,
			coalesce(bool_and(postings_decoded = query_postings AND
				postings_estimated = query_postings)
				FILTER (WHERE algorithm = 'exhaustive'), true) AS exh_all
		 FROM sparse_maxscore_last_scan_segments()) s
$$;
SET sparse_maxscore.algorithm = exhaustive;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1,30:1}/50' LIMIT 3) s;
SELECT * FROM spm_ls_segments_agree();
SELECT round, pass, segment, algorithm, query_postings, postings_estimated, postings_decoded
FROM sparse_maxscore_last_scan_segments() ORDER BY round, segment;
-- every pass: without a LIMIT the rounds deepen, then the sorted pass
-- and the batches of zero rows follow; under maxscore the estimate is the
-- postings (a setting: nothing is learnt)
SET sparse_maxscore.algorithm = maxscore;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1,30:1}/50') s;
SELECT * FROM spm_ls_segments_agree();
SELECT pass, algorithm, count(*) AS segment_rows,
	bool_and(postings_estimated = query_postings) AS estimated_all
FROM sparse_maxscore_last_scan_segments() GROUP BY 1, 2 ORDER BY 1, 2;
RESET sparse_maxscore.algorithm;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{1:1,30:1}/50' LIMIT 3) s;
SELECT * FROM spm_ls_segments_agree();
-- a seq scan leaves the rows of the last index scan
RESET enable_seqscan;
SET enable_indexscan = off;
SELECT count(*) FROM (SELECT id FROM spm_ls ORDER BY v <#> '{2:1}/50' LIMIT 3) s;
SELECT count(*) AS segment_rows FROM sparse_maxscore_last_scan_segments();
RESET enable_indexscan;
DROP FUNCTION spm_ls_segments_agree();
DROP TABLE spm_ls;

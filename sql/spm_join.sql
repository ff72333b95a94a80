--
-- Top k per query vector taken from another table (issue 40).  The plain
-- join, FROM docs d, queries q ... ORDER BY d.v <#> q.v LIMIT k, cannot
-- use the index: an index scan orders by a value known when it starts,
-- and q.v is a column of another relation of the same join, so the
-- planner joins every pair and sorts them, whatever it costs.  Two forms
-- reach the index (README "Troubleshooting", doc/reference.md "Top k for
-- the rows of another table"):
--   * one query row: the query vector in a scalar subquery (an InitPlan,
--     computed once before the scan starts),
--   * every query row: a LATERAL subquery, one index scan per outer row
--     (rescanned with each row's vector).
-- Each is compared with a seq scan (spm_setup's helpers: the same rows
-- and distances, tie-aware), and must scan the index without sorting.
--
SELECT setseed(0.4);
CREATE TABLE spm_j (id int NOT NULL, v sparsevec(300)) WITH (autovacuum_enabled = off);
INSERT INTO spm_j
SELECT i, CASE WHEN r < 0.02 THEN NULL
	ELSE spm_rand_sv(300, 1 + (random() * 12)::int, 280, 0.1, r < 0.5) END
FROM (SELECT i, random() AS r FROM generate_series(1, 3000) i) s;
CREATE INDEX spm_j_idx ON spm_j USING sparse_maxscore (v);
ANALYZE spm_j;
CREATE TABLE spm_jq (qid int PRIMARY KEY, q sparsevec(300));
INSERT INTO spm_jq
SELECT i, spm_rand_sv(300, 1 + (random() * 10)::int, 300, CASE WHEN i % 4 = 0 THEN 0.3 ELSE 0 END, i % 3 = 0)
FROM generate_series(1, 12) i;
INSERT INTO spm_jq VALUES (13, '{}/300'), (14, NULL);
ANALYZE spm_jq;

-- the plain join: no index scan, even with seq scans disabled, and a sort
SET enable_seqscan = off;
SELECT spm_plan_indexes($$SELECT d.id FROM spm_j d, spm_jq q WHERE q.qid = 1
	ORDER BY d.v <#> q.q LIMIT 10$$) AS plain_join_indexes,
	spm_plan_sorts($$SELECT d.id FROM spm_j d, spm_jq q WHERE q.qid = 1
	ORDER BY d.v <#> q.q LIMIT 10$$) AS plain_join_sorts;
RESET enable_seqscan;

-- one query row, in a scalar subquery: the index, at every LIMIT
SELECT lim, spm_check($$SELECT id, v <#> (SELECT q FROM spm_jq WHERE qid = 1) AS d
	FROM spm_j ORDER BY v <#> (SELECT q FROM spm_jq WHERE qid = 1)$$, lim)
FROM unnest('{1,10,100,5000}'::int[]) lim;
-- the same for a query with negative weights, the empty and the NULL query
SELECT qid, spm_check(format($$SELECT id, v <#> (SELECT q FROM spm_jq WHERE qid = %s) AS d
	FROM spm_j ORDER BY v <#> (SELECT q FROM spm_jq WHERE qid = %s)$$, qid, qid), 10)
FROM unnest('{4,13,14}'::int[]) qid;
-- and the plain join's answer is the same rows at the same distances
-- (it is only slower)
SELECT spm_compare(
	$$SELECT 0 AS g, id, v <#> (SELECT q FROM spm_jq WHERE qid = 1) AS d
	  FROM spm_j ORDER BY v <#> (SELECT q FROM spm_jq WHERE qid = 1) LIMIT 10$$,
	$$SELECT 0 AS g, id, d FROM (SELECT d.id, d.v <#> q.q AS d FROM spm_j d, spm_jq q
	  WHERE q.qid = 1 ORDER BY d.v <#> q.q LIMIT 10) s$$, 10) AS plain_join_agrees;

-- every query row, LATERAL: the top 10 of each, against every pair of the
-- seq scan grouped by query (also LIMIT 1 and 100, and a filter)
SELECT lim, spm_compare(
	format($$SELECT q.qid AS g, r.id, r.d FROM spm_jq q CROSS JOIN LATERAL
		(SELECT id, v <#> q.q AS d FROM spm_j ORDER BY v <#> q.q LIMIT %s) r$$, lim),
	$$SELECT q.qid AS g, d.id, d.v <#> q.q AS d FROM spm_jq q, spm_j d$$, lim)
FROM unnest('{1,10,100}'::int[]) lim;
SELECT spm_compare(
	$$SELECT q.qid AS g, r.id, r.d FROM spm_jq q CROSS JOIN LATERAL
		(SELECT id, v <#> q.q AS d FROM spm_j WHERE id % 3 = 0 ORDER BY v <#> q.q LIMIT 10) r
	  WHERE q.qid <= 6$$,
	$$SELECT q.qid AS g, d.id, d.v <#> q.q AS d FROM spm_jq q, spm_j d
	  WHERE d.id % 3 = 0 AND q.qid <= 6$$, 10) AS lateral_filtered;
-- the ranks of each query's rows, as a user would write them
SELECT q.qid, count(*) AS rows, min(r.rank) AS first, max(r.rank) AS last
FROM spm_jq q CROSS JOIN LATERAL
	(SELECT id, rank() OVER (ORDER BY v <#> q.q) AS rank
	 FROM (SELECT id, v FROM spm_j ORDER BY v <#> q.q LIMIT 5) s) r
WHERE q.qid IN (1, 2, 13)
GROUP BY q.qid ORDER BY q.qid;

DROP TABLE spm_j, spm_jq;

--
-- sparse_maxscore: the order of an index scan on tiny data, checked by
-- hand: positive inner products first (distance < 0), then the rows with
-- distance 0 (no common term, empty vectors, cancelling terms), then the
-- negative inner products, then NULL vectors.  Uses spm_setup's helpers.
--
CREATE TABLE spm_tiny (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_tiny VALUES
	(1, '{1:1,2:2}/6'),
	(2, '{1:1}/6'),
	(3, '{}/6'),
	(4, NULL),
	(5, '{3:-1}/6'),
	(6, '{1:2,3:-2}/6'),
	(7, '{2:1}/6'),
	(8, '{1:0.5,4:3}/6'),
	(9, '{1:-1}/6'),
	(10, '{4:1,5:1}/6'),
	(11, NULL),
	(12, '{}/6'),
	(13, '{1:1,3:0.5}/6');
CREATE INDEX spm_tiny_idx ON spm_tiny USING sparse_maxscore (v sparsevec_ip_ops);
SET enable_seqscan = off;

EXPLAIN (COSTS OFF) SELECT id FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6';
EXPLAIN (COSTS OFF) SELECT id FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' LIMIT 3;

-- {1:1,3:1}: 13 scores 1.5; 1 and 2 score 1; 8 scores 0.5; 3 and 12 are
-- empty, 7 and 10 share no term, 6 cancels (2 - 2); 5 and 9 score -1;
-- 4 and 11 are NULL
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6'$$);
SELECT rows_returned FROM sparse_maxscore_last_scan();

-- negative query weights: {1:-1,4:2}
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:-1,4:2}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:-1,4:2}/6'$$);

-- only negative query weights: almost everything scores <= 0
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:-1,2:-1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:-1,2:-1}/6'$$);

-- a term no row has, alone and next to one some rows have
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{6:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{6:1}/6'$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{2:1,6:5}/6' AS d FROM spm_tiny ORDER BY v <#> '{2:1,6:5}/6'$$);

-- an empty query: every distance is 0, NULL rows last
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{}/6' AS d FROM spm_tiny ORDER BY v <#> '{}/6'$$);

-- a NULL query: every distance is NULL, every row comes back.  A NULL
-- constant never reaches the index (the planner folds v <#> NULL to NULL
-- and drops the ORDER BY), so the query comes from a subquery
EXPLAIN (COSTS OFF) SELECT id FROM spm_tiny ORDER BY v <#> NULL::sparsevec;
EXPLAIN (COSTS OFF) SELECT id FROM spm_tiny ORDER BY v <#> (SELECT NULL::sparsevec);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> q AS d FROM spm_tiny, (SELECT NULL::sparsevec) s(q)
	ORDER BY v <#> (SELECT NULL::sparsevec)$$);
SELECT rows_returned FROM sparse_maxscore_last_scan();
SELECT count(*) FROM (SELECT id FROM spm_tiny ORDER BY v <#> (SELECT NULL::sparsevec) LIMIT 5) s;
SELECT rows_returned FROM sparse_maxscore_last_scan();

-- LIMITs that end at a change of distance: the rows are determined
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' LIMIT 1$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' LIMIT 4$$);
SELECT rows_returned FROM sparse_maxscore_last_scan();
-- beyond the positive rows, into the zero rows, the negative rows and the
-- NULL rows
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' LIMIT 9$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' LIMIT 11$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' LIMIT 100$$);

-- FETCH FIRST ... WITH TIES: all the rows tied with the last one, so the
-- rows are determined even when the cut falls inside a group
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6'
	FETCH FIRST 2 ROWS WITH TIES$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6'
	FETCH FIRST 5 ROWS WITH TIES$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6'
	FETCH FIRST 12 ROWS WITH TIES$$);

-- every LIMIT, including those that cut a group of ties (any of the tied
-- rows may come), for each of the queries above, with and without a WHERE
SELECT q, f, count(*) AS limits, count(*) FILTER (WHERE r LIKE 'ok%') AS ok,
	min(r) FILTER (WHERE r NOT LIKE 'ok%') AS first_problem
FROM (VALUES ($$'{1:1,3:1}/6'$$), ($$'{1:-1,4:2}/6'$$), ($$'{1:-1,2:-1}/6'$$),
		($$'{6:1}/6'$$), ($$'{2:1,6:5}/6'$$), ($$'{}/6'$$),
		('(SELECT NULL::sparsevec)')) AS qs(q),
	(VALUES ('true'), ('id % 2 = 1'), ('id > 6'), ('v IS NULL'), ('id < 0')) AS fs(f),
	LATERAL (SELECT lim FROM generate_series(1, 14) lim UNION ALL SELECT NULL) ls,
	LATERAL spm_check(format('SELECT id, v <#> %1$s AS d FROM spm_tiny WHERE %2$s ORDER BY v <#> %1$s', q, f), lim) r
GROUP BY q, f
ORDER BY q, f;

-- an explicit ASC NULLS LAST is the same order
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1,3:1}/6' AS d FROM spm_tiny ORDER BY v <#> '{1:1,3:1}/6' ASC NULLS LAST$$);

-- the commuted operator: the planner uses <#>'s commutator, so q <#> v
-- scans the index as well
EXPLAIN (COSTS OFF) SELECT id FROM spm_tiny ORDER BY '{1:1,3:1}/6' <#> v LIMIT 3;
SELECT * FROM spm_index_groups($$
	SELECT id, '{1:1,3:1}/6' <#> v AS d FROM spm_tiny ORDER BY '{1:1,3:1}/6' <#> v$$);
SELECT spm_check($$SELECT id, '{1:-1,4:2}/6' <#> v AS d FROM spm_tiny ORDER BY '{1:-1,4:2}/6' <#> v$$, 5);

-- a query of other dimensions: the error the operator raises
SELECT id FROM spm_tiny ORDER BY v <#> '{1:1}/5' LIMIT 3;
SELECT id FROM spm_tiny ORDER BY v <#> '{1:1}/7';
-- (for q <#> v the index names the dimensions in the commuted order, 6 and
-- 5, where the operator says 5 and 6: the index cannot tell)
SELECT id FROM spm_tiny ORDER BY '{1:1}/5' <#> v LIMIT 3;
-- A seq scan only evaluates the operator for rows that pass the WHERE
-- clause and have a vector, so it returns these without an error; the
-- index checks the query's dimensions before it returns anything and
-- raises the error anyway (documented in README "Limits").
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1}/5' AS d FROM spm_tiny WHERE id > 100 ORDER BY v <#> '{1:1}/5'$$);
SELECT * FROM spm_index_groups($$
	SELECT id, v <#> '{1:1}/5' AS d FROM spm_tiny WHERE v IS NULL ORDER BY v <#> '{1:1}/5'$$);
SET enable_seqscan = on;
SET enable_indexscan = off;
SELECT id FROM spm_tiny ORDER BY v <#> '{1:1}/5' LIMIT 3;
SELECT id FROM spm_tiny ORDER BY '{1:1}/5' <#> v LIMIT 3;
SELECT id FROM spm_tiny WHERE id > 100 ORDER BY v <#> '{1:1}/5';
SELECT id FROM spm_tiny WHERE v IS NULL ORDER BY v <#> '{1:1}/5', id;
RESET enable_indexscan;

RESET enable_seqscan;
DROP TABLE spm_tiny;

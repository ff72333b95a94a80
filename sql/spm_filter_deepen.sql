--
-- sparse_maxscore: WHERE clauses that reject almost every row.  The
-- executor drops rows after the index returns them, so the scan has to
-- keep producing rows -- deeper rounds, then the sorted pass, then the
-- zero, negative and NULL tails -- until the LIMIT is met.  Uses
-- spm_setup's helpers.
--
SELECT setseed(0.77);
SET enable_seqscan = off;

CREATE TABLE spm_fd (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_fd
SELECT i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/1000'
	ELSE spm_rand_sv(1000, 1 + (random() * 20)::int, 950, 0.1, r < 0.4) END
FROM (SELECT i, random() AS r FROM generate_series(1, 10000) i) s;
-- ranges = on with quantize = off keeps exact weights (no executor
-- rescoring), so that the rows the scan returns can be predicted from the
-- exact scores below
CREATE INDEX spm_fd_idx ON spm_fd USING sparse_maxscore (v) WITH (ranges = on, quantize = off);

CREATE TABLE spm_fd_q (qid int, q sparsevec);
INSERT INTO spm_fd_q VALUES
	(1, '{1:1,2:1,3:1}/1000'),	-- frequent terms: most rows score > 0
	(2, '{1:1,2:-1,5:0.5,990:2}/1000');	-- negative weight, absent term
INSERT INTO spm_fd_q
SELECT 2 + i, spm_rand_sv(1000, 1 + (random() * 30)::int, 1000,
	CASE WHEN i % 2 = 0 THEN 0.3 ELSE 0 END, i = 3)
FROM generate_series(1, 3) i;
SELECT qid, nnz(q),
	(SELECT count(*) FROM spm_fd WHERE v <#> q < 0) AS positive_rows,
	(SELECT count(*) FROM spm_fd WHERE v <#> q > 0) AS negative_rows
FROM spm_fd_q ORDER BY qid;

-- filters keeping 0.5%, 0.1%, one row, no row, only NULL rows (found in
-- the last tail), only rows of negative score (found after all the
-- others but the NULL rows), only rows of score 0 (with BETWEEN: given
-- v <#> q = 0 the planner drops the ORDER BY as constant)
CREATE TABLE spm_fd_f (f text);
INSERT INTO spm_fd_f VALUES ('id % 199 = 5'), ('id % 1000 = 7'), ('id = 4321'), ('id < 0'),
	('v IS NULL AND id % 10 = 3'), ('v <#> q > 0 AND id % 20 = 1'),
	('v <#> q BETWEEN 0 AND 0 AND id % 100 = 1');

CREATE FUNCTION spm_fd_check()
RETURNS TABLE (comparisons bigint, ok bigint, first_problem text) LANGUAGE sql AS $$
	SELECT count(*), count(*) FILTER (WHERE r LIKE 'ok%'),
		min(r) FILTER (WHERE r NOT LIKE 'ok%')
	FROM spm_fd_q, spm_fd_f, (VALUES (1), (10), (100), (NULL)) AS ls(lim),
		LATERAL spm_check(format('SELECT id, v <#> q AS d FROM spm_fd, (SELECT %1$L::sparsevec AS q) s WHERE %2$s ORDER BY v <#> %1$L::sparsevec',
			q, f), lim) r
$$;

-- the default first round (100 rows)
SELECT * FROM spm_fd_check();
-- a round of one row, doubling many times
SET sparse_maxscore.initial_k = 1;
SELECT * FROM spm_fd_check();
-- a first round larger than what a work_mem of 64kB holds: the rounds give
-- way at once to one sorted pass (a tuplesort that spills)
SET work_mem = '64kB';
SET sparse_maxscore.initial_k = 5000;
SELECT * FROM spm_fd_check();
-- rounds that grow until they outgrow work_mem, then the sorted pass
SET sparse_maxscore.initial_k = 100;
SELECT * FROM spm_fd_check();
RESET work_mem;
-- no pruning
SET sparse_maxscore.algorithm = exhaustive;
SELECT * FROM spm_fd_check();
RESET sparse_maxscore.algorithm;
RESET sparse_maxscore.initial_k;

-- how deep a scan went: the 10 rows of id % 199 = 5 closest to query 1.
-- The index returned every row closer than the 10th of them, and some of
-- those at the same distance.
SELECT q AS q1 FROM spm_fd_q WHERE qid = 1 \gset
CREATE TABLE spm_fd_bounds AS
WITH t AS (SELECT id, v <#> :'q1' AS d, id % 199 = 5 AS pass FROM spm_fd),
	d10 AS (SELECT d FROM t WHERE pass ORDER BY d LIMIT 1 OFFSET 9)
SELECT (SELECT count(*) FROM t, d10 WHERE t.d < d10.d) +
		10 - (SELECT count(*) FROM t, d10 WHERE t.d < d10.d AND pass) AS least,
	(SELECT count(*) FROM t, d10 WHERE t.d <= d10.d) AS most;
SELECT most > 1000 AS deep FROM spm_fd_bounds;

CREATE FUNCTION spm_fd_depth(k int)
RETURNS TABLE (initial_k int, rounds bigint, rows_returned_as_expected boolean) LANGUAGE plpgsql AS $$
DECLARE
	query text := format('SELECT id FROM spm_fd WHERE id %% 199 = 5 ORDER BY v <#> %L::sparsevec LIMIT 10',
		(SELECT q FROM spm_fd_q WHERE qid = 1));
BEGIN
	PERFORM set_config('sparse_maxscore.initial_k', k::text, true);
	IF cardinality(spm_plan_indexes(query)) = 0 THEN
		RAISE EXCEPTION 'no index scan';
	END IF;
	EXECUTE query;
	RETURN QUERY SELECT k, s.rounds, s.rows_returned BETWEEN b.least AND b.most
		FROM sparse_maxscore_last_scan() s, spm_fd_bounds b;
END $$;
SELECT * FROM spm_fd_depth(1);
SELECT * FROM spm_fd_depth(100);
SELECT * FROM spm_fd_depth(100000);
-- the more rows a round computes, the fewer rounds
SELECT a.rounds > 5 AS many_rounds, a.rounds > b.rounds AS more_than_default,
	b.rounds > c.rounds AS more_than_one_big
FROM spm_fd_depth(1) a, spm_fd_depth(100) b, spm_fd_depth(100000) c;

DROP TABLE spm_fd, spm_fd_q, spm_fd_f, spm_fd_bounds;
DROP FUNCTION spm_fd_check, spm_fd_depth;
RESET enable_seqscan;

--
-- sparse_maxscore: prepared statements and PL/pgSQL, whose plans become
-- generic (the query is a Param, unknown at plan time) after five custom
-- plans.  The scan does not depend on plan-time knowledge of the query or
-- the LIMIT.  Uses spm_setup's helpers.
--
SELECT setseed(0.41);
SET enable_seqscan = off;

CREATE TABLE spm_pr (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_pr
SELECT i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/300'
	ELSE spm_rand_sv(300, 1 + (random() * 15)::int, 280, 0.1, r < 0.4) END
FROM (SELECT i, random() AS r FROM generate_series(1, 3000) i) s;
CREATE INDEX spm_pr_idx ON spm_pr USING sparse_maxscore (v);
ANALYZE spm_pr;

CREATE TABLE spm_pr_q (qid int, q sparsevec, lim int);
INSERT INTO spm_pr_q
SELECT i, spm_rand_sv(300, 1 + (random() * 15)::int, CASE WHEN i % 3 = 0 THEN 300 ELSE 280 END,
	CASE WHEN i % 4 = 0 THEN 0.4 ELSE 0 END, i % 5 = 0),
	(ARRAY[1, 10, 100, 1000])[1 + i % 4]
FROM generate_series(1, 10) i;
INSERT INTO spm_pr_q VALUES (11, NULL, 5), (12, '{}/300', 50), (13, '{1:1}/300', 3000);

PREPARE spm_pr_s(sparsevec, int) AS
	SELECT 0 AS g, id, v <#> $1 AS d FROM spm_pr ORDER BY v <#> $1 LIMIT $2;

-- the custom plans show the query, the generic plan a Param
EXPLAIN (COSTS OFF) EXECUTE spm_pr_s('{1:1}/300', 10);

-- EXECUTE each query with its LIMIT, compared with a seq scan; the plan
-- of every execution scans the index.  (Each comparison EXPLAINs the
-- statement twice and runs it once: three uses of the plan cache.)  A
-- NULL query is left out while plans may be custom: there the planner
-- folds v <#> NULL to NULL and drops the ORDER BY.
CREATE FUNCTION spm_pr_check(stmt text, reference text, with_null boolean)
RETURNS TABLE (qid int, result text) LANGUAGE sql AS $$
	SELECT qid, spm_compare(format('EXECUTE %s(%L, %s)', stmt, q, lim),
		format(reference, coalesce(quote_literal(q) || '::sparsevec', 'NULL')), lim)
	FROM spm_pr_q WHERE with_null OR q IS NOT NULL ORDER BY qid
$$;
SELECT * FROM spm_pr_check('spm_pr_s', 'SELECT 0 AS g, id, v <#> %s AS d FROM spm_pr', false);
-- by now the plan cache has switched to the generic plan; once more, with
-- a NULL query (every row, any order)
EXPLAIN (COSTS OFF) EXECUTE spm_pr_s('{1:1}/300', 10);
SELECT * FROM spm_pr_check('spm_pr_s', 'SELECT 0 AS g, id, v <#> %s AS d FROM spm_pr', true);
SELECT generic_plans > 0 AS generic, custom_plans >= 5 AS custom
FROM pg_prepared_statements WHERE name = 'spm_pr_s';

-- forced generic from the first execution, with a WHERE clause
SET plan_cache_mode = force_generic_plan;
PREPARE spm_pr_f(sparsevec, int) AS
	SELECT 0 AS g, id, v <#> $1 AS d FROM spm_pr WHERE id % 3 = 1 ORDER BY v <#> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE spm_pr_f('{1:1}/300', 10);
SELECT * FROM spm_pr_check('spm_pr_f', 'SELECT 0 AS g, id, v <#> %s AS d FROM spm_pr WHERE id %% 3 = 1', true);
SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'spm_pr_f';
RESET plan_cache_mode;

-- without a LIMIT
PREPARE spm_pr_n(sparsevec, int) AS
	SELECT 0 AS g, id, v <#> $1 AS d FROM spm_pr WHERE id % $2 = 0 ORDER BY v <#> $1;
SELECT count(*) AS executions, count(*) FILTER (WHERE r LIKE 'ok%') AS ok,
	min(r) FILTER (WHERE r NOT LIKE 'ok%') AS first_problem
FROM spm_pr_q, LATERAL spm_compare(format('EXECUTE spm_pr_n(%L, %s)', q, 1 + qid % 4),
	format('SELECT 0 AS g, id, v <#> %L::sparsevec AS d FROM spm_pr WHERE id %% %s = 0',
		q, 1 + qid % 4)) r
WHERE q IS NOT NULL;

-- PL/pgSQL caches its plans the same way: the query is a variable.  The
-- function's plan is not visible from here, so the check is that the
-- index was scanned once per call.
CREATE FUNCTION spm_pr_top(q sparsevec, n int)
RETURNS TABLE (g int, id int, d float8) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY SELECT 0, p.id, p.v <#> q FROM spm_pr p ORDER BY p.v <#> q LIMIT n;
END $$;
SELECT qid, spm_compare_scanned(format('SELECT * FROM spm_pr_top(%L, %s)', q, lim),
	format('SELECT 0 AS g, id, v <#> %L::sparsevec AS d FROM spm_pr', q), lim, 'spm_pr_idx')
FROM spm_pr_q WHERE q IS NOT NULL ORDER BY qid;

DEALLOCATE ALL;
DROP TABLE spm_pr, spm_pr_q;
DROP FUNCTION spm_pr_check, spm_pr_top;
RESET enable_seqscan;

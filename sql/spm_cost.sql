--
-- sparse_maxscore: which plans the planner picks (EXPLAIN, default
-- settings).  It must pick the index for ORDER BY v <#> q LIMIT n on tables
-- of a few thousand rows and up, and never for conditions without that
-- ORDER BY.  Without a LIMIT either plan is fine, so that is not shown.
-- Uses spm_setup's helpers.
--
SELECT setseed(0.9);

CREATE TABLE spm_c (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_c
SELECT i, CASE WHEN r < 0.03 THEN NULL
	ELSE spm_rand_sv(1000, 1 + (random() * 30)::int, 1000, 0.1, r < 0.4) END
FROM (SELECT i, random() AS r FROM generate_series(1, 2000) i) s;
CREATE INDEX spm_c_idx ON spm_c USING sparse_maxscore (v);
ANALYZE spm_c;

-- 2000 rows: the index for LIMIT 1 and 10, with a constant query ...
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000' LIMIT 1;
EXPLAIN (COSTS OFF) SELECT id, v <#> '{4:0.5,17:1,99:2,250:-1,600:1,999:3}/1000'
	FROM spm_c ORDER BY v <#> '{4:0.5,17:1,99:2,250:-1,600:1,999:3}/1000' LIMIT 10;
-- ... the commuted operator ...
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY '{1:1,2:1,3:1}/1000' <#> v LIMIT 10;
-- ... a query from a subquery ...
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> (SELECT v FROM spm_c WHERE id = 7) LIMIT 10;
-- ... and a parameter (generic plan)
SET plan_cache_mode = force_generic_plan;
PREPARE spm_c_p(sparsevec, int) AS SELECT id FROM spm_c ORDER BY v <#> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE spm_c_p('{1:1,2:1,3:1}/1000', 10);
RESET plan_cache_mode;

-- never without ORDER BY <#>: a condition on the distance, on NULL, a
-- count, even when seq scans are disabled
EXPLAIN (COSTS OFF) SELECT id FROM spm_c WHERE v <#> '{1:1,2:1,3:1}/1000' < -1;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c WHERE v IS NULL;
EXPLAIN (COSTS OFF) SELECT count(*) FROM spm_c;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c WHERE v <#> '{1:1,2:1,3:1}/1000' < -1;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c WHERE v = '{1:1}/1000';
RESET enable_seqscan;

-- nor for an order it cannot produce: another distance, descending, NULLs
-- first
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <-> '{1:1,2:1,3:1}/1000' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000' DESC LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000' NULLS FIRST LIMIT 10;

-- nor for a second sort key: PostgreSQL 15 uses ordering operators only
-- when they produce every ORDER BY key (no Incremental Sort on top), so
-- ORDER BY v <#> q, id sorts a seq scan even when seq scans are disabled
-- (18 puts an Incremental Sort on the index scan: expected/spm_cost_1.out)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000', id LIMIT 10;
RESET enable_seqscan;

-- 20000 rows: still the index
DROP INDEX spm_c_idx;
INSERT INTO spm_c
SELECT i, CASE WHEN r < 0.03 THEN NULL
	ELSE spm_rand_sv(1000, 1 + (random() * 30)::int, 1000, 0.1, r < 0.4) END
FROM (SELECT i, random() AS r FROM generate_series(2001, 20000) i) s;
CREATE INDEX spm_c_idx ON spm_c USING sparse_maxscore (v);
ANALYZE spm_c;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c ORDER BY v <#> '{1:1,2:1,3:1}/1000' LIMIT 1;
EXPLAIN (COSTS OFF) SELECT id, v <#> '{4:0.5,17:1,99:2,250:-1,600:1,999:3}/1000'
	FROM spm_c ORDER BY v <#> '{4:0.5,17:1,99:2,250:-1,600:1,999:3}/1000' LIMIT 10;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE spm_c_p('{1:1,2:1,3:1}/1000', 10);
RESET plan_cache_mode;
EXPLAIN (COSTS OFF) SELECT id FROM spm_c WHERE v <#> '{1:1,2:1,3:1}/1000' < -1;

DEALLOCATE spm_c_p;
DROP TABLE spm_c;

--
-- sparse_maxscore on partitioned tables: an index on the parent gives every
-- partition one, and ORDER BY v <#> q LIMIT k becomes a Merge Append of one
-- ordered index scan per partition, which must return exactly what a seq
-- scan of the whole table followed by a sort returns.  Partition pruning
-- (at plan time and at run time) must keep working.  Then the same through
-- postgres_fdw (a loopback server): which parts of the query reach the
-- remote side, and that the answers stay exact.  Uses spm_setup's helpers.
--
SELECT setseed(0.42);

-- rows: ~3% NULL, ~3% empty vectors, tied weights in 40% of the rows,
-- negative weights; cat for filters
CREATE FUNCTION spm_p_row(i int, r float8) RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN r < 0.03 THEN NULL
		WHEN r < 0.06 THEN '{}/500'::sparsevec
		ELSE spm_rand_sv(500, 1 + (random() * 25)::int, 500, 0.1, r < 0.4) END
$$;

-- hash-partitioned on id, three partitions
CREATE TABLE spm_ph (id int NOT NULL, cat int NOT NULL, v sparsevec)
	PARTITION BY HASH (id);
CREATE TABLE spm_ph_0 PARTITION OF spm_ph FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE spm_ph_1 PARTITION OF spm_ph FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE spm_ph_2 PARTITION OF spm_ph FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO spm_ph SELECT i, i % 13, spm_p_row(i, random())
	FROM generate_series(1, 4500) i;
CREATE INDEX spm_ph_idx ON spm_ph USING sparse_maxscore (v);

-- range-partitioned on id: four ranges (one empty) and a default
-- partition; the index is created on the parent before the rows arrive,
-- and one partition is attached afterwards with an index of its own
CREATE TABLE spm_pr (id int NOT NULL, cat int NOT NULL, v sparsevec)
	PARTITION BY RANGE (id);
CREATE TABLE spm_pr_a PARTITION OF spm_pr FOR VALUES FROM (1) TO (1001);
CREATE TABLE spm_pr_b PARTITION OF spm_pr FOR VALUES FROM (1001) TO (2501);
CREATE TABLE spm_pr_empty PARTITION OF spm_pr FOR VALUES FROM (2501) TO (3001);
CREATE TABLE spm_pr_def PARTITION OF spm_pr DEFAULT;
CREATE INDEX spm_pr_idx ON spm_pr USING sparse_maxscore (v);
INSERT INTO spm_pr SELECT i, i % 13, spm_p_row(i, random())
	FROM generate_series(1, 2500) i;
INSERT INTO spm_pr SELECT i, i % 13, spm_p_row(i, random())
	FROM generate_series(5001, 5500) i;
CREATE TABLE spm_pr_c (LIKE spm_pr);
INSERT INTO spm_pr_c SELECT i, i % 13, spm_p_row(i, random())
	FROM generate_series(3001, 4500) i;
CREATE INDEX spm_pr_c_idx ON spm_pr_c USING sparse_maxscore (v);
ALTER TABLE spm_pr ATTACH PARTITION spm_pr_c FOR VALUES FROM (3001) TO (5001);
ANALYZE spm_ph, spm_pr;

-- every partition has its index, attached to the parent's
SELECT c.relname AS partition, i.relname AS index, a.amname,
	(SELECT p.relname FROM pg_inherits h JOIN pg_class p ON p.oid = h.inhparent
	 WHERE h.inhrelid = i.oid) AS parent_index
FROM pg_inherits h
JOIN pg_class c ON c.oid = h.inhrelid
JOIN pg_index x ON x.indrelid = c.oid
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_am a ON a.oid = i.relam
WHERE h.inhparent IN ('spm_ph'::regclass, 'spm_pr'::regclass)
ORDER BY 1;

-- the plans, at default settings: a Merge Append of the partitions' index
-- scans, no Sort
EXPLAIN (COSTS OFF) SELECT id FROM spm_ph ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM spm_pr ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
-- a filter on another column stays on each index scan
EXPLAIN (COSTS OFF) SELECT id FROM spm_ph WHERE cat = 3
	ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
-- the query from a subquery (an InitPlan) and as a parameter (generic plan)
EXPLAIN (COSTS OFF) SELECT id FROM spm_ph
	ORDER BY v <#> (SELECT v FROM spm_ph WHERE id = 7) LIMIT 10;
SET plan_cache_mode = force_generic_plan;
PREPARE spm_p_q(sparsevec, int) AS SELECT id FROM spm_pr ORDER BY v <#> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE spm_p_q('{1:1,2:1,3:1}/500', 10);
DEALLOCATE spm_p_q;
RESET plan_cache_mode;

-- partition pruning at plan time: a WHERE on the partition key keeps only
-- the partitions it can match, each still through its index
EXPLAIN (COSTS OFF) SELECT id FROM spm_pr WHERE id BETWEEN 1500 AND 3500
	ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM spm_pr WHERE id > 5000
	ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM spm_ph WHERE id IN (1, 2, 4, 5, 8)
	ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
RESET enable_seqscan;
-- ... and at run time, for a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE spm_p_r(sparsevec, int) AS SELECT id FROM spm_pr WHERE id >= $2
	ORDER BY v <#> $1 LIMIT 10;
EXPLAIN (COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
	EXECUTE spm_p_r('{1:1,2:1,3:1}/500', 4000);
DEALLOCATE spm_p_r;
RESET plan_cache_mode;

-- exactness: twelve random queries (tied and negative weights, terms no
-- row has, an empty query, a NULL query from a subquery), LIMIT 1, 10,
-- 100, 1000 and none, with filters, against a seq scan of the whole table
CREATE TABLE spm_p_qs (qid int, q text);
INSERT INTO spm_p_qs
SELECT k, quote_literal(spm_rand_sv(500, 3 + (random() * 30)::int, 500, 0.15, k % 2 = 0)) || '::sparsevec'
FROM generate_series(1, 9) k;
INSERT INTO spm_p_qs VALUES (10, $$'{499:1,500:-2}/500'$$), (11, $$'{}/500'$$),
	(12, '(SELECT NULL::sparsevec)');

CREATE FUNCTION spm_p_check(tbl text, filters text[])
RETURNS TABLE (f text, comparisons bigint, ok bigint, first_problem text) LANGUAGE sql AS $$
	SELECT f, count(*), count(*) FILTER (WHERE r LIKE 'ok%'),
		min(format('query %s LIMIT %s: %s', qid, coalesce(lim::text, 'none'), r))
			FILTER (WHERE r NOT LIKE 'ok%')
	FROM spm_p_qs, unnest(filters) AS fs(f), (VALUES (1), (10), (100), (1000), (NULL)) AS ls(lim),
		LATERAL spm_check(format('SELECT id, v <#> %1$s AS d FROM %2$s WHERE %3$s ORDER BY v <#> %1$s',
			q, tbl, f), lim) r
	GROUP BY f ORDER BY f
$$;

SELECT * FROM spm_p_check('spm_ph', ARRAY['true', 'cat = 3', 'id % 97 = 1', 'v IS NULL',
	'id IN (1, 2, 4, 5, 8, 100, 200)']);
SELECT * FROM spm_p_check('spm_pr', ARRAY['true', 'cat = 3', 'id BETWEEN 1500 AND 3500',
	'id > 5000', 'id BETWEEN 2600 AND 2900', 'id % 97 = 1 AND id < 2000']);
-- a first round of one row (many rounds per partition)
SET sparse_maxscore.initial_k = 1;
SELECT * FROM spm_p_check('spm_ph', ARRAY['true', 'cat = 3']);
RESET sparse_maxscore.initial_k;

-- rows moved between partitions by an UPDATE of the key, deleted, added
UPDATE spm_ph SET id = id + 10000 WHERE id % 5 = 0;
DELETE FROM spm_pr WHERE id % 7 = 0;
INSERT INTO spm_pr SELECT i, i % 13, spm_p_row(i, random()) FROM generate_series(2501, 2600) i;
SELECT * FROM spm_p_check('spm_ph', ARRAY['true']);
SELECT * FROM spm_p_check('spm_pr', ARRAY['true', 'id BETWEEN 2501 AND 3000']);

-- two levels: range partitions, one of them hash-partitioned again
CREATE TABLE spm_p2 (id int NOT NULL, cat int NOT NULL, v sparsevec) PARTITION BY RANGE (cat);
CREATE TABLE spm_p2_lo PARTITION OF spm_p2 FOR VALUES FROM (0) TO (6) PARTITION BY HASH (id);
CREATE TABLE spm_p2_lo0 PARTITION OF spm_p2_lo FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE spm_p2_lo1 PARTITION OF spm_p2_lo FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE spm_p2_hi PARTITION OF spm_p2 FOR VALUES FROM (6) TO (13);
INSERT INTO spm_p2 SELECT id, cat, v FROM spm_ph;
CREATE INDEX ON spm_p2 USING sparse_maxscore (v);
ANALYZE spm_p2;
EXPLAIN (COSTS OFF) SELECT id FROM spm_p2 ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
SELECT * FROM spm_p_check('spm_p2', ARRAY['true', 'cat < 6']);

--
-- postgres_fdw: foreign partitions on a loopback server (this database)
--
CREATE EXTENSION postgres_fdw;
DO $$
BEGIN
	EXECUTE format('CREATE SERVER spm_loop FOREIGN DATA WRAPPER postgres_fdw
		OPTIONS (host %L, port %L, dbname %L, extensions %L, fdw_startup_cost %L)',
		'127.0.0.1', current_setting('port'), current_database(), 'sparsevec', '0');
	EXECUTE format('CREATE SERVER spm_loop_noext FOREIGN DATA WRAPPER postgres_fdw
		OPTIONS (host %L, port %L, dbname %L)',
		'127.0.0.1', current_setting('port'), current_database());
END $$;
CREATE USER MAPPING FOR CURRENT_USER SERVER spm_loop;
CREATE USER MAPPING FOR CURRENT_USER SERVER spm_loop_noext;

-- the coordinator's table: hash on id like spm_ph, every partition a
-- foreign table on the partition of the same remainder
CREATE TABLE spm_pf (id int NOT NULL, cat int NOT NULL, v sparsevec) PARTITION BY HASH (id);
CREATE FOREIGN TABLE spm_pf_0 PARTITION OF spm_pf FOR VALUES WITH (MODULUS 3, REMAINDER 0)
	SERVER spm_loop OPTIONS (table_name 'spm_ph_0');
CREATE FOREIGN TABLE spm_pf_1 PARTITION OF spm_pf FOR VALUES WITH (MODULUS 3, REMAINDER 1)
	SERVER spm_loop OPTIONS (table_name 'spm_ph_1');
CREATE FOREIGN TABLE spm_pf_2 PARTITION OF spm_pf FOR VALUES WITH (MODULUS 3, REMAINDER 2)
	SERVER spm_loop OPTIONS (table_name 'spm_ph_2');
ANALYZE spm_pf;

-- with extensions 'sparsevec' the ORDER BY <#> is shipped, the query
-- vector as a literal (a constant) or as a parameter with a cast; a
-- filter too.  postgres_fdw does not push a LIMIT below a Merge Append:
-- each shard's cursor is read fetch_size rows at a time.
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM spm_pf ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM spm_pf WHERE cat = 3
	ORDER BY v <#> (SELECT v FROM spm_ph WHERE id = 7) LIMIT 10;
SET plan_cache_mode = force_generic_plan;
PREPARE spm_p_f(sparsevec, int) AS SELECT id FROM spm_pf ORDER BY v <#> $1 LIMIT $2;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE spm_p_f('{1:1,2:1,3:1}/500', 10);
RESET plan_cache_mode;
-- on one foreign table, ORDER BY and LIMIT are both shipped
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM spm_pf_1 ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
-- the remote side's plan for what it is sent: the index (a cursor plans
-- for a fast start, as with a LIMIT)
BEGIN;
EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR
	SELECT id, v FROM public.spm_ph_0 ORDER BY (v OPERATOR(public.<#>) '{1:1,2:1,3:1}/500') ASC NULLS LAST;
ROLLBACK;
-- without the extensions option nothing of sparsevec is shipped: every row
-- comes over and the coordinator sorts
CREATE FOREIGN TABLE spm_pf_noext (id int NOT NULL, cat int NOT NULL, v sparsevec)
	SERVER spm_loop_noext OPTIONS (table_name 'spm_ph_1');
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM spm_pf_noext ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;

-- exact: the foreign partitions against a seq scan of the local table
-- (same rows), for every query, LIMIT and filter, also with fetch_size 1
-- (one round trip per row).  sorted: plans in which the coordinator sorts
-- what the shards send instead of merging their ordered streams; the
-- planner does so where the LIMIT reaches beyond the rows it expects the
-- filter to leave (or without a LIMIT), which is exact too.
CREATE FUNCTION spm_p_fdw_check(filters text[], qform text DEFAULT '%s')
RETURNS TABLE (f text, comparisons bigint, ok bigint, sorted bigint, first_problem text)
LANGUAGE sql AS $$
	SELECT f, count(*), count(*) FILTER (WHERE r IS NULL),
		count(*) FILTER (WHERE spm_plan_sorts(tq)),
		min(format('query %s LIMIT %s: %s', qid, coalesce(lim::text, 'none'), r))
			FILTER (WHERE r IS NOT NULL)
	FROM spm_p_qs, unnest(filters) AS fs(f), (VALUES (1), (10), (100), (1000), (NULL)) AS ls(lim),
		LATERAL format(qform, q) AS qf,
		LATERAL format('SELECT 0 AS g, id, v <#> %1$s AS d FROM spm_pf WHERE %2$s ORDER BY v <#> %1$s %3$s',
			qf, f, 'LIMIT ' || lim) AS tq,
		LATERAL spm_rows(tq) t,
		LATERAL spm_rows(format('SELECT 0 AS g, id, v <#> %1$s AS d FROM spm_ph WHERE %2$s', q, f)) s,
		LATERAL spm_diff(t.g, t.id, t.d, s.g, s.id, s.d, lim) r
	GROUP BY f ORDER BY f
$$;
-- the query vector shipped as a literal ...
SELECT * FROM spm_p_fdw_check(ARRAY['true', 'cat = 3', 'v IS NULL', 'id IN (1, 2, 4, 5, 8, 100, 200)']);
-- ... and as a parameter (from an InitPlan)
SELECT * FROM spm_p_fdw_check(ARRAY['true', 'cat = 3'], '(SELECT (%s)::sparsevec)');
ALTER SERVER spm_loop OPTIONS (ADD fetch_size '1');
SELECT * FROM spm_p_fdw_check(ARRAY['true']);
ALTER SERVER spm_loop OPTIONS (DROP fetch_size);

-- a shard that cannot be reached is an error, not a shorter answer
CREATE SERVER spm_gone FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '127.0.0.1', port '1', dbname 'nowhere', extensions 'sparsevec');
CREATE USER MAPPING FOR CURRENT_USER SERVER spm_gone;
ALTER TABLE spm_pf DETACH PARTITION spm_pf_2;
CREATE FOREIGN TABLE spm_pf_gone PARTITION OF spm_pf FOR VALUES WITH (MODULUS 3, REMAINDER 2)
	SERVER spm_gone OPTIONS (table_name 'spm_ph_2');
\set VERBOSITY terse
SELECT id FROM spm_pf ORDER BY v <#> '{1:1,2:1,3:1}/500' LIMIT 10;
\set VERBOSITY default

DROP TABLE spm_pf;
DROP FOREIGN TABLE spm_pf_2, spm_pf_noext;
DROP USER MAPPING FOR CURRENT_USER SERVER spm_loop;
DROP USER MAPPING FOR CURRENT_USER SERVER spm_loop_noext;
DROP USER MAPPING FOR CURRENT_USER SERVER spm_gone;
DROP SERVER spm_loop, spm_loop_noext, spm_gone;
DROP EXTENSION postgres_fdw;
DROP FUNCTION spm_p_check, spm_p_fdw_check, spm_p_row;
DROP TABLE spm_ph, spm_pr, spm_p2, spm_p_qs;

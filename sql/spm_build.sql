--
-- sparse_maxscore: CREATE INDEX on empty, NULL-only and empty-vector
-- tables, what CREATE INDEX refuses, index variants (expression, partial,
-- temporary, unlogged, concurrent, partitioned), and builds that spill to
-- disk.
-- Uses spm_setup's helpers.
--
SELECT setseed(0.31);
SET enable_seqscan = off;

--
-- an empty table
--
CREATE TABLE spm_b (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v sparsevec_ip_ops);
EXPLAIN (COSTS OFF) SELECT id FROM spm_b ORDER BY v <#> '{1:1}/5' LIMIT 1;
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/5' AS d FROM spm_b ORDER BY v <#> '{1:1}/5'$$);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/5' AS d FROM spm_b ORDER BY v <#> (SELECT NULL::sparsevec)$$);
SELECT rows_returned FROM sparse_maxscore_last_scan();
SELECT relname, reltuples FROM pg_class WHERE relname = 'spm_b_idx';

--
-- only NULL rows: each comes back, with a NULL distance; no vector, so a
-- query of any dimensions is fine (as in a seq scan, where the strict
-- operator is never called)
--
TRUNCATE spm_b;
DROP INDEX spm_b_idx;
INSERT INTO spm_b SELECT i, NULL FROM generate_series(1, 5) i;
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/5' AS d FROM spm_b ORDER BY v <#> '{1:1}/5'$$);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{2:-1}/9' AS d FROM spm_b ORDER BY v <#> '{2:-1}/9' LIMIT 2$$);
SELECT rows_returned FROM sparse_maxscore_last_scan();
SELECT relname, reltuples FROM pg_class WHERE relname = 'spm_b_idx';

--
-- only empty vectors (and a NULL): all at distance 0, the NULL last; the
-- empty vectors fix the dimensions
--
DROP INDEX spm_b_idx;
TRUNCATE spm_b;
INSERT INTO spm_b VALUES (1, '{}/5'), (2, NULL), (3, '{}/5'), (4, '{}/5');
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/5' AS d FROM spm_b ORDER BY v <#> '{1:1}/5'$$);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:-1}/5' AS d FROM spm_b ORDER BY v <#> '{1:-1}/5'$$);
SELECT id FROM spm_b ORDER BY v <#> '{1:1}/6' LIMIT 1;

--
-- one row
--
DROP INDEX spm_b_idx;
TRUNCATE spm_b;
INSERT INTO spm_b VALUES (1, '{3:2.5}/5');
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{3:2}/5' AS d FROM spm_b ORDER BY v <#> '{3:2}/5'$$);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{3:-2}/5' AS d FROM spm_b ORDER BY v <#> '{3:-2}/5'$$);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{2:2}/5' AS d FROM spm_b ORDER BY v <#> '{2:2}/5'$$);

--
-- vectors of different dimensions cannot share an index: the error of the
-- <#> operator, SQLSTATE 22000 (data_exception); empty vectors count too
--
DROP INDEX spm_b_idx;
INSERT INTO spm_b VALUES (2, NULL), (3, '{1:1}/6');
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
DELETE FROM spm_b WHERE id = 3;
INSERT INTO spm_b VALUES (3, '{}/4');
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
DO $$
BEGIN
	CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
EXCEPTION WHEN data_exception THEN
	RAISE NOTICE 'data_exception (%): %', SQLSTATE, SQLERRM;
END $$;
-- after the offending row is gone (and vacuumed away), the build works
DELETE FROM spm_b WHERE id = 3;
VACUUM spm_b;
CREATE INDEX spm_b_idx ON spm_b USING sparse_maxscore (v);
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{3:1}/5' AS d FROM spm_b ORDER BY v <#> '{3:1}/5'$$);
-- a typmod makes the dimensions a column property
CREATE TABLE spm_b5 (id int NOT NULL, v sparsevec(5));
INSERT INTO spm_b5 VALUES (1, '{1:1}/5');
CREATE INDEX ON spm_b5 USING sparse_maxscore (v);
INSERT INTO spm_b5 VALUES (2, '{1:1}/6');
DROP TABLE spm_b5;

--
-- what CREATE INDEX refuses
--
CREATE INDEX ON spm_b USING sparse_maxscore (v, v);
CREATE UNIQUE INDEX ON spm_b USING sparse_maxscore (v);
CREATE INDEX ON spm_b USING sparse_maxscore (v) INCLUDE (id);
CREATE INDEX ON spm_b USING sparse_maxscore (id);
CREATE INDEX ON spm_b USING sparse_maxscore (v DESC);
CLUSTER spm_b USING spm_b_idx;

--
-- reloptions: fastupdate, pending_list_limit, compact_segments
--
CREATE INDEX spm_b_opt ON spm_b USING sparse_maxscore (v)
	WITH (fastupdate = off, pending_list_limit = 64, compact_segments = 4);
SELECT reloptions FROM pg_class WHERE relname = 'spm_b_opt';
ALTER INDEX spm_b_opt SET (pending_list_limit = 1024);
ALTER INDEX spm_b_opt RESET (fastupdate);
SELECT reloptions FROM pg_class WHERE relname = 'spm_b_opt';
DROP INDEX spm_b_opt;
CREATE INDEX ON spm_b USING sparse_maxscore (v) WITH (pending_list_limit = 63);
CREATE INDEX ON spm_b USING sparse_maxscore (v) WITH (compact_segments = 0);
CREATE INDEX ON spm_b USING sparse_maxscore (v) WITH (compact_segments = 31);
CREATE INDEX ON spm_b USING sparse_maxscore (v) WITH (fastupdate = maybe);
CREATE INDEX ON spm_b USING sparse_maxscore (v) WITH (lists = 100);
DROP TABLE spm_b;

--
-- a few thousand random rows, for the index variants below: ties, negative
-- weights, about 3% NULL and 3% empty vectors, a long posting list (term 1)
--
CREATE TABLE spm_bm (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_bm
SELECT i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/300'
	ELSE spm_rand_sv(300, 1 + (random() * 25)::int, 280, 0.15, r < 0.4) END
FROM (SELECT i, random() AS r FROM generate_series(1, 3000) i) s;
SELECT count(*) AS rows, count(*) FILTER (WHERE v IS NULL) > 50 AS has_nulls,
	count(*) FILTER (WHERE nnz(v) = 0) > 50 AS has_empty,
	sum(nnz(v)) > 30000 AS many_postings
FROM spm_bm;

-- the queries: random, with some negative weights and terms 281..300 that
-- no row has
CREATE TABLE spm_bq (qid int, q sparsevec);
INSERT INTO spm_bq
SELECT i, spm_rand_sv(300, 1 + (random() * 12)::int, CASE WHEN i % 3 = 0 THEN 300 ELSE 280 END,
	CASE WHEN i % 4 = 0 THEN 0.3 ELSE 0 END, i % 5 = 0)
FROM generate_series(1, 12) i;
INSERT INTO spm_bq VALUES (13, '{290:1}/300'), (14, '{}/300');

-- compare every query with a seq scan: LIMIT 1, 10, 100, 1000, none; with
-- and without a WHERE that keeps 1 row in 50 (a NULL query comes from a
-- subquery, as a NULL constant never reaches the index)
CREATE FUNCTION spm_bm_check(tab text, expr text DEFAULT 'v', filter text DEFAULT 'true')
RETURNS TABLE (comparisons bigint, ok bigint, first_problem text) LANGUAGE sql AS $$
	SELECT count(*), count(*) FILTER (WHERE r LIKE 'ok%'),
		min(r) FILTER (WHERE r NOT LIKE 'ok%')
	FROM spm_bq,
		(VALUES ('true'), ('id % 50 = 8')) AS fs(f),
		(VALUES (1), (10), (100), (1000), (NULL)) AS ls(lim),
		LATERAL spm_check(format('SELECT id, %2$s <#> %1$s AS d FROM %3$s WHERE %4$s AND %5$s ORDER BY %2$s <#> %1$s',
			coalesce(quote_literal(q) || '::sparsevec', '(SELECT NULL::sparsevec)'),
			expr, tab, f, filter), lim) r
$$;

CREATE INDEX spm_bm_idx ON spm_bm USING sparse_maxscore (v);
SELECT relname, reltuples FROM pg_class WHERE relname = 'spm_bm_idx';
SELECT * FROM spm_bm_check('spm_bm');

-- REINDEX, and the concurrent variants (whose validation pass reads the
-- index through ambulkdelete)
REINDEX INDEX spm_bm_idx;
SELECT * FROM spm_bm_check('spm_bm');
DROP INDEX spm_bm_idx;
CREATE INDEX CONCURRENTLY spm_bm_idx ON spm_bm USING sparse_maxscore (v);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'spm_bm_idx'::regclass;
SELECT * FROM spm_bm_check('spm_bm');
REINDEX INDEX CONCURRENTLY spm_bm_idx;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'spm_bm_idx'::regclass;
SELECT * FROM spm_bm_check('spm_bm');
DROP INDEX spm_bm_idx;

-- an expression index
CREATE INDEX spm_bm_expr ON spm_bm USING sparse_maxscore (l2_normalize(v));
EXPLAIN (COSTS OFF) SELECT id FROM spm_bm ORDER BY l2_normalize(v) <#> '{1:1}/300' LIMIT 5;
SELECT * FROM spm_bm_check('spm_bm', 'l2_normalize(v)');
DROP INDEX spm_bm_expr;

-- a partial index, used by queries whose WHERE implies its predicate
CREATE INDEX spm_bm_part ON spm_bm USING sparse_maxscore (v) WHERE id % 2 = 0;
SELECT relname, reltuples FROM pg_class WHERE relname = 'spm_bm_part';
EXPLAIN (COSTS OFF) SELECT id FROM spm_bm WHERE id % 2 = 0 ORDER BY v <#> '{1:1}/300' LIMIT 5;
SELECT * FROM spm_bm_check('spm_bm', 'v', 'id % 2 = 0');
DROP INDEX spm_bm_part;

-- a temporary table (local buffers)
CREATE TEMP TABLE spm_bm_temp AS SELECT * FROM spm_bm;
CREATE INDEX spm_bm_temp_idx ON spm_bm_temp USING sparse_maxscore (v);
SELECT * FROM spm_bm_check('spm_bm_temp');
DROP TABLE spm_bm_temp;

-- an unlogged table (the index gets an init fork: ambuildempty)
CREATE UNLOGGED TABLE spm_bm_unlogged AS SELECT * FROM spm_bm;
CREATE INDEX spm_bm_unlogged_idx ON spm_bm_unlogged USING sparse_maxscore (v);
SELECT relpersistence FROM pg_class WHERE relname = 'spm_bm_unlogged_idx';
SELECT * FROM spm_bm_check('spm_bm_unlogged');
-- TRUNCATE rebuilds an empty index
TRUNCATE spm_bm_unlogged;
SELECT * FROM spm_index_groups($$SELECT id, v <#> '{1:1}/300' AS d FROM spm_bm_unlogged ORDER BY v <#> '{1:1}/300'$$);
DROP TABLE spm_bm_unlogged;

-- a partitioned table: an index on each partition, and ORDER BY ... LIMIT
-- merges their scans (Merge Append)
CREATE TABLE spm_bp (id int NOT NULL, v sparsevec) PARTITION BY RANGE (id);
CREATE TABLE spm_bp_1 PARTITION OF spm_bp FOR VALUES FROM (MINVALUE) TO (1000);
CREATE TABLE spm_bp_2 PARTITION OF spm_bp FOR VALUES FROM (1000) TO (2000);
CREATE TABLE spm_bp_3 PARTITION OF spm_bp FOR VALUES FROM (2000) TO (MAXVALUE);
INSERT INTO spm_bp SELECT * FROM spm_bm;
CREATE INDEX spm_bp_idx ON spm_bp USING sparse_maxscore (v);
EXPLAIN (COSTS OFF) SELECT id FROM spm_bp ORDER BY v <#> '{1:1}/300' LIMIT 5;
SELECT * FROM spm_bm_check('spm_bp');
DROP TABLE spm_bp;

--
-- a build whose postings do not fit in maintenance_work_mem: 30000 rows
-- of about 30 terms are about 900000 postings, beyond the 65536 postings a
-- batch holds at the 1MB minimum, so the build writes a dozen sorted runs
-- to temporary files and merges them
--
CREATE TABLE spm_bs (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_bs
SELECT i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/2000'
	ELSE spm_rand_sv(2000, 30, 1800, 0.1, r < 0.3) END
FROM (SELECT i, random() AS r FROM generate_series(1, 30000) i) s;
SELECT sum(nnz(v)) > 800000 AS many_postings FROM spm_bs;

SELECT pg_stat_force_next_flush();
SELECT temp_files AS temp_files_before FROM pg_stat_database WHERE datname = current_database() \gset
SET maintenance_work_mem = '1MB';
CREATE INDEX spm_bs_idx ON spm_bs USING sparse_maxscore (v);
RESET maintenance_work_mem;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT temp_files - :temp_files_before >= 10 AS spilled_to_runs
FROM pg_stat_database WHERE datname = current_database();
SELECT relname, reltuples FROM pg_class WHERE relname = 'spm_bs_idx';

TRUNCATE spm_bq;
INSERT INTO spm_bq
SELECT i, spm_rand_sv(2000, 1 + (random() * 40)::int, CASE WHEN i % 3 = 0 THEN 2000 ELSE 1800 END,
	CASE WHEN i % 4 = 0 THEN 0.3 ELSE 0 END, i % 5 = 0)
FROM generate_series(1, 6) i;
INSERT INTO spm_bq VALUES (7, '{1:1}/2000'), (8, NULL);
SELECT * FROM spm_bm_check('spm_bs');

--
-- terms beyond 65535: the build's radix sort takes two passes over the
-- 16-bit digits, in memory and when spilling
--
CREATE TABLE spm_bd (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_bd
SELECT i, spm_rand_sv(200000, 1 + (random() * 40)::int, 200000, 0.1, random() < 0.3)
FROM generate_series(1, 5000) i;
INSERT INTO spm_bd
SELECT 5000 + i, '{1:1,65536:1,65537:2,131072:1,199999:3,200000:1}/200000'
FROM generate_series(1, 200) i;
TRUNCATE spm_bq;
INSERT INTO spm_bq
SELECT i, spm_rand_sv(200000, 1 + (random() * 60)::int, 200000, 0.2, false)
FROM generate_series(1, 6) i;
INSERT INTO spm_bq VALUES (7, '{65536:1,65537:1,200000:2}/200000'), (8, '{1:1,2:1,3:1}/200000');
SELECT sum(nnz(v)) > 65536 AS more_than_one_batch FROM spm_bd;
CREATE INDEX spm_bd_idx ON spm_bd USING sparse_maxscore (v);
SELECT * FROM spm_bm_check('spm_bd');
DROP INDEX spm_bd_idx;
SET maintenance_work_mem = '1MB';
CREATE INDEX spm_bd_idx ON spm_bd USING sparse_maxscore (v);
RESET maintenance_work_mem;
SELECT * FROM spm_bm_check('spm_bd');

DROP TABLE spm_bs, spm_bm, spm_bq, spm_bd;
DROP FUNCTION spm_bm_check;
RESET enable_seqscan;

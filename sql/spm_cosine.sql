--
-- sparse_maxscore: sparsevec_cosine_ops (issue 39, src/README "Cosine and
-- L2") against the seq scan.  The index scores each document's weights
-- divided by its norm, hands the executor a lower bound of <=> and lets it
-- recheck the exact distance: every answer must be the seq scan's (same
-- rows, same order, same distances; ties in any order).  The corpus has
-- tied weights, negative weights, documents that are multiples of one
-- another (equal cosines), weights whose ratio is so large that the
-- normalized small weight underflows float4, NULL rows and empty vectors
-- (whose <=> is NaN: after every number, before the NULLs).  Every query
-- runs with LIMITs 1, 10 and 100 and without, with and without a filter,
-- from the pending list, from built, flushed and merged segments, under
-- every algorithm.  Uses spm_setup's helpers.
--
SET enable_seqscan = off;
SELECT setseed(0.39);

-- document i, by family (i % 6): random weights; tied weights; 40%
-- negative weights; a multiple of {1:1,2:2,3:3}; a huge and a tiny weight
-- (the tiny one normalizes below float4's range); random magnitudes over
-- 12 orders
CREATE FUNCTION spm_cos_sv(i int) RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT CASE i % 6
		WHEN 0 THEN spm_rand_sv(60, 8)
		WHEN 1 THEN spm_rand_sv(60, 6, NULL, 0, true)
		WHEN 2 THEN spm_rand_sv(60, 8, NULL, 0.4)
		WHEN 3 THEN to_sparsevec('{1,2,3}', ARRAY[i % 7 + 1, 2 * (i % 7 + 1), 3 * (i % 7 + 1)]::real[], 60)
		WHEN 4 THEN to_sparsevec(ARRAY[1, 2 + i % 5, 9], ARRAY[3e38, 1e-45, -(i % 3 + 1) * 1e-40]::real[], 60)
		ELSE (SELECT to_sparsevec(array_agg(t ORDER BY t), array_agg((10 ^ (12 * random() - 6))::real ORDER BY t), 60)
			  FROM (SELECT DISTINCT 1 + floor(60 * random() ^ 1.5)::int AS t FROM generate_series(1, 6)) e)
	END
$$;

CREATE TABLE spm_cos (id int NOT NULL, v sparsevec(60)) WITH (autovacuum_enabled = off);
INSERT INTO spm_cos SELECT i,
	CASE WHEN i % 71 = 0 THEN NULL WHEN i % 67 = 0 THEN '{}/60' ELSE spm_cos_sv(i) END
FROM generate_series(1, 3000) i;

CREATE TABLE spm_cos_queries (qid int, q sparsevec);
INSERT INTO spm_cos_queries VALUES
	(1, '{1:1,2:0.5}/60'),
	(2, '{1:1,2:2,3:3}/60'),             -- parallel to family 3: distance 0 or nearly
	(3, '{1:-1,2:0.5,3:-0.25}/60'),       -- negative query weights
	(4, '{}/60'),                         -- the empty query: NaN for every row
	(5, '{58:1}/60'),                     -- a rare term: most rows at distance 1
	(6, '{1:1e-30,2:1e30,9:-1e30}/60'),
	(7, '{2:1e-45}/60'),                  -- a denormal query
	(8, '{1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1,11:1,12:1,13:1,14:1,15:1}/60');

CREATE FUNCTION spm_cos_check(filter text DEFAULT 'true') RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	lim bigint;
	res text;
BEGIN
	FOR r IN SELECT qid, q FROM spm_cos_queries ORDER BY qid LOOP
		FOREACH lim IN ARRAY ARRAY[1, 10, 100, NULL]::bigint[] LOOP
			res := spm_check(format('SELECT id, v <=> %L AS d FROM spm_cos WHERE %s ORDER BY v <=> %L',
				r.q, filter, r.q), lim);
			IF res NOT LIKE 'ok:%' THEN
				RETURN NEXT format('q%s limit %s filter %s: %s', r.qid, lim, filter, res);
			END IF;
		END LOOP;
	END LOOP;
	RETURN NEXT 'checked';
END $$;

-- every row of the pending list: an index built on the empty table
CREATE TABLE spm_cos_p (LIKE spm_cos) WITH (autovacuum_enabled = off);
CREATE INDEX spm_cos_p_idx ON spm_cos_p USING sparse_maxscore (v sparsevec_cosine_ops)
	WITH (pending_list_limit = 65536);
INSERT INTO spm_cos_p SELECT * FROM spm_cos;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_cos_p_idx');
ALTER TABLE spm_cos RENAME TO spm_cos_all;
ALTER TABLE spm_cos_p RENAME TO spm_cos;
SELECT * FROM spm_cos_check();
SELECT * FROM spm_cos_check('id % 3 = 0');
-- flushed into one segment
SELECT sparse_maxscore_flush('spm_cos_p_idx') > 0 AS flushed;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_cos_p_idx');
SELECT * FROM spm_cos_check();
DROP TABLE spm_cos;
ALTER TABLE spm_cos_all RENAME TO spm_cos;

-- built by CREATE INDEX
CREATE INDEX spm_cos_idx ON spm_cos USING sparse_maxscore (v sparsevec_cosine_ops)
	WITH (pending_list_limit = 4096);
SELECT sparse_maxscore_verify('spm_cos_idx');
SELECT * FROM spm_cos_check();
SELECT * FROM spm_cos_check('id % 3 = 0');

-- the executor rechecks: a LIMIT 10 query takes rows past the 10th
SELECT count(*) FROM (SELECT id FROM spm_cos ORDER BY v <=> '{1:1,2:0.5}/60' LIMIT 10) s;
SELECT rows_returned > 10 AS rechecked_past_the_limit FROM sparse_maxscore_last_scan();

-- pending rows next to segments
INSERT INTO spm_cos SELECT i, spm_cos_sv(i) FROM generate_series(3001, 3400) i;
SELECT pending_documents > 0 AS pending FROM sparse_maxscore_info('spm_cos_idx');
SELECT * FROM spm_cos_check();

-- deletions, a flush, VACUUM, more rows, merges
DELETE FROM spm_cos WHERE id % 7 = 0;
SELECT sparse_maxscore_flush('spm_cos_idx') >= 0 AS flushed;
SELECT * FROM spm_cos_check();
VACUUM spm_cos;
SELECT * FROM spm_cos_check();
INSERT INTO spm_cos SELECT i, CASE WHEN i % 50 = 0 THEN '{}/60' ELSE spm_cos_sv(i) END
FROM generate_series(3401, 3800) i;
SELECT sparse_maxscore_flush('spm_cos_idx') >= 0 AS flushed;
SELECT segments > 1 AS several_segments FROM sparse_maxscore_info('spm_cos_idx');
SELECT * FROM spm_cos_check();
SELECT sparse_maxscore_compact('spm_cos_idx') >= 0 AS compacted;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_cos_idx');
SELECT sparse_maxscore_verify('spm_cos_idx');
SELECT * FROM spm_cos_check();
SELECT * FROM spm_cos_check('id % 3 = 0');

-- every algorithm
SET sparse_maxscore.algorithm = exhaustive;
SELECT * FROM spm_cos_check();
SET sparse_maxscore.algorithm = maxscore;
SELECT * FROM spm_cos_check();
SET sparse_maxscore.algorithm = ranges;
SELECT * FROM spm_cos_check();
RESET sparse_maxscore.algorithm;

-- quantize = off: raw normalized weights; the executor still rechecks
CREATE INDEX spm_cos_raw ON spm_cos USING sparse_maxscore (v sparsevec_cosine_ops)
	WITH (quantize = off);
DROP INDEX spm_cos_idx;
SELECT * FROM spm_cos_check();

-- range data (the forward copy normalized too): range pruning needs
-- weights of one sign, so on the rows without a negative weight
CREATE TABLE spm_cos_pos AS SELECT * FROM spm_cos
WHERE v IS NULL OR NOT EXISTS (SELECT FROM unnest(v::real[]) w WHERE w < 0);
ALTER TABLE spm_cos RENAME TO spm_cos_all;
ALTER TABLE spm_cos_pos RENAME TO spm_cos;
CREATE INDEX spm_cos_ranges ON spm_cos USING sparse_maxscore (v sparsevec_cosine_ops)
	WITH (ranges = on);
SELECT sparse_maxscore_verify('spm_cos_ranges');
DELETE FROM spm_cos_queries WHERE qid IN (3, 6);
SET sparse_maxscore.algorithm = ranges;
SELECT * FROM spm_cos_check();
SELECT segments_ranges > 0 AS ranges_ran FROM sparse_maxscore_last_scan();
SELECT * FROM spm_cos_check('id % 3 = 0');
RESET sparse_maxscore.algorithm;
SELECT * FROM spm_cos_check();
-- no negative weight: a row of score 0 shares no term with the query, is
-- reported at its exact distance 1, and the executor returns it at once:
-- a LIMIT past the rows with a common term reads a few rows more, not
-- the table (with negative weights it would hold every row of score 0)
SELECT count(*) FROM (SELECT id FROM spm_cos ORDER BY v <=> '{58:1}/60' LIMIT 10) s;
SELECT rows_returned < 50 AS few_rows FROM sparse_maxscore_last_scan();
DROP TABLE spm_cos;
ALTER TABLE spm_cos_all RENAME TO spm_cos;

-- an index serves its own operator only: next to an inner-product index
-- on the same column, each ORDER BY takes its own; alone, the other
-- operator is a seq scan and a sort
CREATE INDEX spm_cos_ip ON spm_cos USING sparse_maxscore (v);
EXPLAIN (COSTS OFF) SELECT id FROM spm_cos ORDER BY v <=> '{1:1}/60' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM spm_cos ORDER BY v <#> '{1:1}/60' LIMIT 5;
-- (seq scans allowed: from 18 on a disabled one says so in EXPLAIN)
RESET enable_seqscan;
DROP INDEX spm_cos_raw;
EXPLAIN (COSTS OFF) SELECT id FROM spm_cos ORDER BY v <=> '{1:1}/60' LIMIT 5;
CREATE INDEX spm_cos_idx ON spm_cos USING sparse_maxscore (v sparsevec_cosine_ops);
DROP INDEX spm_cos_ip;
EXPLAIN (COSTS OFF) SELECT id FROM spm_cos ORDER BY v <#> '{1:1}/60' LIMIT 5;
-- <-> has no index here (sparsevec_l2_ops is its class: spm_l2) and <+>
-- has no operator class: a seq scan and a sort
EXPLAIN (COSTS OFF) SELECT id FROM spm_cos ORDER BY v <-> '{1:1}/60' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM spm_cos ORDER BY v <+> '{1:1}/60' LIMIT 5;

-- the operator class passes amvalidate
SELECT opcname, amvalidate(c.oid) FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'sparse_maxscore' ORDER BY opcname;

DROP TABLE spm_cos, spm_cos_queries;
DROP FUNCTION spm_cos_sv(int), spm_cos_check(text);

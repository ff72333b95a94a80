--
-- sparse_maxscore: sparsevec_l2_ops (src/README "Cosine and L2") against
-- the seq scan.  The index keeps a norm posting -|d|^2 / 2 per document,
-- ranks rows by q.d - |d|^2 / 2, hands the executor a lower bound of <->
-- and lets it recheck the exact distance: every answer must be the seq
-- scan's (same rows, same order, same distances; ties in any order).  The
-- corpus has tied weights, negative weights, copies and multiples of one
-- vector (distance 0, equal distances), a weight near FLT_MAX (its norm
-- posting is clamped at -FLT_MAX), weights so small that -|d|^2 / 2
-- underflows float4 (the norm posting becomes -FLT_TRUE_MIN), magnitudes
-- over 12 orders, NULL rows (last) and empty vectors (distance |q|).  Every
-- query runs with LIMITs 1, 10 and 100 and without, with and without a
-- filter, from the pending list, from built, flushed and merged segments,
-- under every algorithm, with quantize = off, ranges = on and reorder =
-- on.  Uses spm_setup's helpers.
--
SET enable_seqscan = off;
SELECT setseed(0.42);

-- document i, by family (i % 8): random weights; tied weights; 40%
-- negative weights; a multiple of {1:1,2:2,3:3}; a huge and a tiny
-- weight; random magnitudes over 12 orders; tiny weights only; a copy of
-- query 1
CREATE FUNCTION spm_l2_sv(i int) RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT CASE i % 8
		WHEN 0 THEN spm_rand_sv(60, 8)
		WHEN 1 THEN spm_rand_sv(60, 6, NULL, 0, true)
		WHEN 2 THEN spm_rand_sv(60, 8, NULL, 0.4)
		WHEN 3 THEN to_sparsevec('{1,2,3}', ARRAY[i % 7 + 1, 2 * (i % 7 + 1), 3 * (i % 7 + 1)]::real[], 60)
		WHEN 4 THEN to_sparsevec(ARRAY[1, 2 + i % 5, 9], ARRAY[3e38, 1e-45, -(i % 3 + 1) * 1e-40]::real[], 60)
		WHEN 5 THEN (SELECT to_sparsevec(array_agg(t ORDER BY t), array_agg((10 ^ (12 * random() - 6))::real ORDER BY t), 60)
			  FROM (SELECT DISTINCT 1 + floor(60 * random() ^ 1.5)::int AS t FROM generate_series(1, 6)) e)
		WHEN 6 THEN to_sparsevec(ARRAY[1 + i % 3, 40], ARRAY[(i % 5 + 1) * 1e-25, -1e-30]::real[], 60)
		ELSE '{1:1,2:0.5}/60'
	END
$$;

CREATE TABLE spm_l2 (id int NOT NULL, v sparsevec(60)) WITH (autovacuum_enabled = off);
INSERT INTO spm_l2 SELECT i,
	CASE WHEN i % 71 = 0 THEN NULL WHEN i % 67 = 0 THEN '{}/60' ELSE spm_l2_sv(i) END
FROM generate_series(1, 3000) i;

CREATE TABLE spm_l2_queries (qid int, q sparsevec);
INSERT INTO spm_l2_queries VALUES
	(1, '{1:1,2:0.5}/60'),                -- copies at distance 0
	(2, '{1:1,2:2,3:3}/60'),              -- family 3 at distance 0 or multiples of it
	(3, '{1:-1,2:0.5,3:-0.25}/60'),       -- negative query weights
	(4, '{}/60'),                         -- the empty query: distance |d|
	(5, '{58:1}/60'),                     -- a rare term: nearly every row ranked by its norm
	(6, '{1:1e-30,2:1e30,9:-1e30}/60'),
	(7, '{2:1e-45}/60'),                  -- a denormal query
	(8, '{1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1,11:1,12:1,13:1,14:1,15:1}/60'),
	(9, '{1:3e38,2:-1}/60'),              -- near FLT_MAX
	(10, '{1:1e-25,40:-1e-30}/60');       -- among the tiny documents

CREATE FUNCTION spm_l2_check(filter text DEFAULT 'true') RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	lim bigint;
	res text;
BEGIN
	FOR r IN SELECT qid, q FROM spm_l2_queries ORDER BY qid LOOP
		FOREACH lim IN ARRAY ARRAY[1, 10, 100, NULL]::bigint[] LOOP
			res := spm_check(format('SELECT id, v <-> %L AS d FROM spm_l2 WHERE %s ORDER BY v <-> %L',
				r.q, filter, r.q), lim);
			IF res NOT LIKE 'ok:%' THEN
				RETURN NEXT format('q%s limit %s filter %s: %s', r.qid, lim, filter, res);
			END IF;
		END LOOP;
	END LOOP;
	RETURN NEXT 'checked';
END $$;

-- every row of the pending list: an index built on the empty table
CREATE TABLE spm_l2_p (LIKE spm_l2) WITH (autovacuum_enabled = off);
CREATE INDEX spm_l2_p_idx ON spm_l2_p USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (pending_list_limit = 65536);
INSERT INTO spm_l2_p SELECT * FROM spm_l2;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_l2_p_idx');
ALTER TABLE spm_l2 RENAME TO spm_l2_all;
ALTER TABLE spm_l2_p RENAME TO spm_l2;
SELECT * FROM spm_l2_check();
SELECT * FROM spm_l2_check('id % 3 = 0');
-- the pending list adds the norm posting's product too: with it the
-- bounds are close to the distances and a LIMIT 10 reads a row or two
-- past the 10th (without it every row sharing a term would come first)
SELECT count(*) FROM (SELECT id FROM spm_l2
	ORDER BY v <-> '{1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1}/60' LIMIT 10) s;
SELECT rows_returned < 20 AS tight_bounds, pending_scored > 0 AS pending
FROM sparse_maxscore_last_scan();
-- flushed into one segment
SELECT sparse_maxscore_flush('spm_l2_p_idx') > 0 AS flushed;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_l2_p_idx');
SELECT sparse_maxscore_verify('spm_l2_p_idx');
SELECT * FROM spm_l2_check();
DROP TABLE spm_l2;
ALTER TABLE spm_l2_all RENAME TO spm_l2;

-- built by CREATE INDEX: one norm posting per document with elements
CREATE INDEX spm_l2_idx ON spm_l2 USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (pending_list_limit = 4096);
SELECT sparse_maxscore_verify('spm_l2_idx');
SELECT (SELECT postings FROM sparse_maxscore_info('spm_l2_idx')) =
	(SELECT sum(nnz(v)) + count(*) FILTER (WHERE nnz(v) > 0) FROM spm_l2) AS one_norm_posting_each;
SELECT * FROM spm_l2_check();
SELECT * FROM spm_l2_check('id % 3 = 0');

-- the executor rechecks: a LIMIT 10 query takes rows past the 10th
SELECT count(*) FROM (SELECT id FROM spm_l2 ORDER BY v <-> '{1:1,2:2}/60' LIMIT 10) s;
SELECT rows_returned > 10 AS rechecked_past_the_limit FROM sparse_maxscore_last_scan();
-- rows farther from q than |q| score below 0, rows without a query term
-- rank by their norm, empty ones score 0: an L2 index's rounds rank rows
-- of every sign at once (no ZERO or NEGATIVE phase), each round scoring
-- every row but keeping only k of them.  Here about 420 rows (the empty
-- and the tiny vectors) are at distance |q| or a hair above, under the
-- bound of none of them: the executor takes them all
SELECT count(*) FROM (SELECT id FROM spm_l2 ORDER BY v <-> '{58:1}/60' LIMIT 10) s;
SELECT array_agg(DISTINCT pass ORDER BY pass) AS passes FROM sparse_maxscore_last_scan_segments();
-- on random vectors, a round or two for a LIMIT 10
CREATE TABLE spm_l2_rand (id int NOT NULL, v sparsevec(60));
INSERT INTO spm_l2_rand SELECT i, spm_rand_sv(60, 8, NULL, 0.2) FROM generate_series(1, 2000) i;
CREATE INDEX spm_l2_rand_idx ON spm_l2_rand USING sparse_maxscore (v sparsevec_l2_ops);
SELECT spm_check($$SELECT id, v <-> '{58:1}/60' AS d FROM spm_l2_rand ORDER BY v <-> '{58:1}/60'$$, 10)
	AS rand_limit_10;
SELECT count(*) FROM (SELECT id FROM spm_l2_rand ORDER BY v <-> '{58:1}/60' LIMIT 10) s;
-- one round, one pass over the postings of the query's term and of the
-- norm term (a positive round, a ZERO pass and a NEGATIVE round each made
-- that pass before: doc/decisions.md "L2 in one pass (issue 39)")
SELECT rounds, rows_returned < 20 AS few_rows
FROM sparse_maxscore_last_scan();
SELECT count(*) AS segment_passes,
	sum(postings_decoded) = sum(query_postings) AS every_posting_once
FROM sparse_maxscore_last_scan_segments();
DROP TABLE spm_l2_rand;
-- without a LIMIT the rounds double k until work_mem would not hold it,
-- then the rest is sorted (after the rounds' cursor)
SET work_mem = '64kB';
SELECT * FROM spm_l2_check();
SELECT * FROM spm_l2_check('id % 3 = 0');
RESET work_mem;

-- pending rows next to segments
INSERT INTO spm_l2 SELECT i, spm_l2_sv(i) FROM generate_series(3001, 3400) i;
SELECT pending_documents > 0 AS pending FROM sparse_maxscore_info('spm_l2_idx');
SELECT * FROM spm_l2_check();

-- deletions, a flush, VACUUM, more rows, merges
DELETE FROM spm_l2 WHERE id % 7 = 0;
SELECT sparse_maxscore_flush('spm_l2_idx') >= 0 AS flushed;
SELECT * FROM spm_l2_check();
VACUUM spm_l2;
SELECT sparse_maxscore_verify('spm_l2_idx');
SELECT * FROM spm_l2_check();
INSERT INTO spm_l2 SELECT i, CASE WHEN i % 50 = 0 THEN '{}/60' ELSE spm_l2_sv(i) END
FROM generate_series(3401, 3800) i;
SELECT sparse_maxscore_flush('spm_l2_idx') >= 0 AS flushed;
SELECT segments > 1 AS several_segments FROM sparse_maxscore_info('spm_l2_idx');
SELECT * FROM spm_l2_check();
SELECT sparse_maxscore_compact('spm_l2_idx') >= 0 AS compacted;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_l2_idx');
SELECT sparse_maxscore_verify('spm_l2_idx');
SELECT * FROM spm_l2_check();
SELECT * FROM spm_l2_check('id % 3 = 0');

-- every algorithm
SET sparse_maxscore.algorithm = exhaustive;
SELECT * FROM spm_l2_check();
SET sparse_maxscore.algorithm = maxscore;
SELECT * FROM spm_l2_check();
SELECT * FROM spm_l2_check('id % 3 = 0');
SET sparse_maxscore.algorithm = ranges;
SELECT * FROM spm_l2_check();
SET sparse_maxscore.algorithm = auto;
SET sparse_maxscore.initial_k = 1;
SELECT * FROM spm_l2_check();
RESET sparse_maxscore.initial_k;
RESET sparse_maxscore.algorithm;

-- a LATERAL rescan per query, with LIMIT 5
SELECT spm_compare(
	'SELECT q.qid AS g, s.id, s.d FROM spm_l2_queries q CROSS JOIN LATERAL
	   (SELECT id, v <-> q.q AS d FROM spm_l2 ORDER BY v <-> q.q LIMIT 5) s',
	'SELECT q.qid AS g, s.id, s.d FROM spm_l2_queries q CROSS JOIN LATERAL
	   (SELECT id, v <-> q.q AS d FROM spm_l2) s', 5) AS lateral_rescans;

-- a NULL query: every distance is NULL
-- (in a subquery: v <-> NULL would be folded to NULL, and no index scanned)
SELECT spm_check('SELECT id, v <-> (SELECT NULL::sparsevec) AS d FROM spm_l2
	ORDER BY v <-> (SELECT NULL::sparsevec)') AS null_query;
-- a query of other dimensions
SELECT id FROM spm_l2 ORDER BY v <-> '{1:1}/10' LIMIT 1;

-- quantize = off: raw weights (norm postings are raw in every segment);
-- the executor still rechecks
CREATE INDEX spm_l2_raw ON spm_l2 USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (quantize = off);
DROP INDEX spm_l2_idx;
SELECT sparse_maxscore_verify('spm_l2_raw');
SELECT * FROM spm_l2_check();
-- the build's norm postings: with exact weights the bounds are close to
-- the distances, as from the pending list (quantized real weights are
-- looser: a block holding 3e38 and 1 has cells of 2e36)
SELECT count(*) FROM (SELECT id FROM spm_l2
	ORDER BY v <-> '{1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1}/60' LIMIT 10) s;
SELECT rows_returned < 20 AS tight_bounds, pending_scored = 0 AS segments_only
FROM sparse_maxscore_last_scan();

-- range data: the forward copy holds every norm posting (verify checks
-- each against its document's weights); norm postings are negative, so
-- range pruning never runs and the other kernels score
CREATE INDEX spm_l2_ranges ON spm_l2 USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (ranges = on);
DROP INDEX spm_l2_raw;
SELECT sparse_maxscore_verify('spm_l2_ranges');
SET sparse_maxscore.algorithm = ranges;
SELECT * FROM spm_l2_check();
SELECT segments_ranges = 0 AS no_range_pruning FROM sparse_maxscore_last_scan();
RESET sparse_maxscore.algorithm;
INSERT INTO spm_l2 SELECT i, spm_l2_sv(i) FROM generate_series(3801, 4000) i;
SELECT sparse_maxscore_flush('spm_l2_ranges') > 0 AS flushed;
SELECT sparse_maxscore_compact('spm_l2_ranges') >= 0 AS compacted;
SELECT sparse_maxscore_verify('spm_l2_ranges');
SELECT * FROM spm_l2_check();

-- reorder = on: the build's documents in another docid order
CREATE INDEX spm_l2_reorder ON spm_l2 USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (reorder = on);
DROP INDEX spm_l2_ranges;
SELECT sparse_maxscore_verify('spm_l2_reorder');
SELECT * FROM spm_l2_check();
SELECT * FROM spm_l2_check('id % 3 = 0');

-- an index serves its own operator only: next to an inner-product index
-- on the same column, each ORDER BY takes its own; alone, another
-- operator is a seq scan and a sort
CREATE INDEX spm_l2_ip ON spm_l2 USING sparse_maxscore (v);
EXPLAIN (COSTS OFF) SELECT id FROM spm_l2 ORDER BY v <-> '{1:1}/60' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM spm_l2 ORDER BY v <#> '{1:1}/60' LIMIT 5;
-- (seq scans allowed: from 18 on a disabled one says so in EXPLAIN)
RESET enable_seqscan;
DROP INDEX spm_l2_ip;
EXPLAIN (COSTS OFF) SELECT id FROM spm_l2 ORDER BY v <#> '{1:1}/60' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM spm_l2 ORDER BY v <=> '{1:1}/60' LIMIT 5;
-- <+> has no operator class: a seq scan and a sort
EXPLAIN (COSTS OFF) SELECT id FROM spm_l2 ORDER BY v <+> '{1:1}/60' LIMIT 5;
-- with only an inner-product index, <-> is a seq scan and a sort
DROP INDEX spm_l2_reorder;
CREATE INDEX spm_l2_ip ON spm_l2 USING sparse_maxscore (v);
EXPLAIN (COSTS OFF) SELECT id FROM spm_l2 ORDER BY v <-> '{1:1}/60' LIMIT 5;

-- the operator classes pass amvalidate
SELECT opcname, amvalidate(c.oid) FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'sparse_maxscore' ORDER BY opcname;

DROP TABLE spm_l2, spm_l2_queries;
DROP FUNCTION spm_l2_sv(int), spm_l2_check(text);

-- the norm postings' term is one dimension more: at 65,535 dimensions the
-- forward copy still has 16-bit terms (the norm's is 65,535), at 65,536
-- it has 32-bit ones; elements on the last dimension, range data, verify
SET enable_seqscan = off;
CREATE TABLE spm_l2_wide (id int NOT NULL, v sparsevec);
CREATE INDEX spm_l2_wide_idx ON spm_l2_wide USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (ranges = on);
INSERT INTO spm_l2_wide SELECT i, to_sparsevec(ARRAY[1 + i % 3, 65535 - i % 2],
	ARRAY[i % 4 + 1, -(i % 3) - 0.5]::real[], 65535) FROM generate_series(1, 300) i;
SELECT sparse_maxscore_flush('spm_l2_wide_idx') > 0 AS flushed;
SELECT sparse_maxscore_verify('spm_l2_wide_idx');
SELECT spm_check($$SELECT id, v <-> '{2:1,65535:-1}/65535' AS d FROM spm_l2_wide
	ORDER BY v <-> '{2:1,65535:-1}/65535'$$, 10) AS dims_65535;
TRUNCATE spm_l2_wide;
INSERT INTO spm_l2_wide SELECT i, to_sparsevec(ARRAY[1 + i % 3, 65536 - i % 2],
	ARRAY[i % 4 + 1, -(i % 3) - 0.5]::real[], 65536) FROM generate_series(1, 300) i;
SELECT sparse_maxscore_flush('spm_l2_wide_idx') > 0 AS flushed;
SELECT sparse_maxscore_verify('spm_l2_wide_idx');
SELECT spm_check($$SELECT id, v <-> '{2:1,65536:-1}/65536' AS d FROM spm_l2_wide
	ORDER BY v <-> '{2:1,65536:-1}/65536'$$, 10) AS dims_65536;
SELECT spm_check($$SELECT id, v <-> '{2:1,65536:-1}/65536' AS d FROM spm_l2_wide
	ORDER BY v <-> '{2:1,65536:-1}/65536'$$) AS dims_65536_all;
DROP TABLE spm_l2_wide;
RESET enable_seqscan;

-- more than one window (16,384 docids): from the second on, a round whose
-- threshold is at or below 0 leaves the norm term's blocks that cannot
-- reach it, where those blocks hold every docid of the window (no NULL,
-- hole or empty vector there: doc/decisions.md "L2: the norm term's
-- blocks by their bounds").  NULL and empty vectors only past row 36,000,
-- deleted rows in the first window
SET enable_seqscan = off;
SELECT setseed(0.43);
CREATE TABLE spm_l2_big (id int NOT NULL, v sparsevec(60)) WITH (autovacuum_enabled = off);
INSERT INTO spm_l2_big SELECT i, CASE WHEN i > 36000 AND i % 97 = 0 THEN NULL
	WHEN i > 36000 AND i % 89 = 0 THEN '{}/60' ELSE spm_rand_sv(60, 8, NULL, 0.2) END
FROM generate_series(1, 40000) i;
CREATE INDEX spm_l2_big_idx ON spm_l2_big USING sparse_maxscore (v sparsevec_l2_ops);
DELETE FROM spm_l2_big WHERE id % 50 = 0 AND id < 16000;
VACUUM spm_l2_big;
SELECT count(*) FROM (SELECT id FROM spm_l2_big ORDER BY v <-> '{5:0.01,58:0.01}/60' LIMIT 10) s;
SELECT rounds, postings_decoded < (SELECT sum(query_postings) FROM sparse_maxscore_last_scan_segments())
	AS norm_blocks_left, blocks_skipped > 0 AS blocks_skipped
FROM sparse_maxscore_last_scan();
SELECT q, lim, filter, spm_check(format('SELECT id, v <-> %L AS d FROM spm_l2_big WHERE %s ORDER BY v <-> %L',
		q, filter, q), lim) AS result
FROM unnest(ARRAY['{5:0.01,58:0.01}/60', '{58:1}/60', '{1:1,2:1,3:1}/60', '{1:-0.5,7:0.01}/60']) q,
	unnest(ARRAY[1, 10, 100, NULL]) lim, unnest(ARRAY['true', 'id % 3 = 0']) filter
ORDER BY q, lim, filter;
DROP TABLE spm_l2_big;
RESET enable_seqscan;

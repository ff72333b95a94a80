--
-- sparse_maxscore: range pruning (src/README "Ranges") against the seq
-- scan.  A corpus of positive weights whose documents come in topical
-- runs of docids (so range bounds prune), with tied weights, NULL rows and
-- empty vectors; queries with positive weights (range pruning) and some
-- with a negative one (MaxScore).  Every query runs under each algorithm,
-- with LIMITs 1, 10 and 100 and without, before and after pending rows,
-- deletions, a flush and a merge.  Uses spm_setup's helpers.
--
SET enable_seqscan = off;

-- document i: 8 terms of its run's topic (runs of 64 docids, 12 topics of
-- 20 terms), 3 common terms; weights tied (0.5 .. 2 in steps of 0.5) in
-- every third document
CREATE FUNCTION spm_topic_sv(i int, stride int DEFAULT 1, dims int DEFAULT 300)
RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT to_sparsevec(array_agg(t * stride ORDER BY t), array_agg(w ORDER BY t), dims)
	FROM (
		SELECT DISTINCT ON (t) t, w
		FROM (
			SELECT CASE WHEN k <= 8 THEN ((i / 64) % 12) * 20 + 1 + floor(20 * random())::int
					ELSE 241 + floor(59 * random() ^ 2)::int END AS t,
				(CASE WHEN i % 3 = 0 THEN (1 + floor(random() * 4)) / 2
					ELSE 0.01 + 2 * random() END)::real AS w
			FROM generate_series(1, 11) k
		) e
		ORDER BY t, w
	) e2
$$;

SELECT setseed(0.25);
CREATE TABLE spm_r (id int NOT NULL, v sparsevec(300), grp int) WITH (autovacuum_enabled = off);
INSERT INTO spm_r SELECT i,
	CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN '{}/300' ELSE spm_topic_sv(i) END,
	i % 5
FROM generate_series(1, 4000) i;
CREATE INDEX spm_r_idx ON spm_r USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 4096);

-- 24 queries: a topic's terms (positive, tied in every other query), and
-- every sixth with one negative weight
CREATE TABLE spm_rq (qid int, q sparsevec);
CREATE FUNCTION spm_topic_q(n int, stride int DEFAULT 1, dims int DEFAULT 300)
RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT to_sparsevec(array_agg(t * stride ORDER BY t), array_agg(w ORDER BY t), dims)
	FROM (
		SELECT DISTINCT ON (t) t,
			(CASE WHEN n % 6 = 0 AND k = 1 THEN -1 ELSE 1 END *
			 CASE WHEN n % 2 = 0 THEN (1 + floor(random() * 2)) / 2 ELSE 0.1 + random() END)::real AS w
		FROM (
			SELECT k, CASE WHEN k <= 4 THEN (n % 12) * 20 + 1 + floor(20 * random())::int
					ELSE 241 + floor(59 * random())::int END AS t
			FROM generate_series(1, 6) k
		) e
		ORDER BY t
	) e2
$$;
INSERT INTO spm_rq SELECT n, spm_topic_q(n) FROM generate_series(1, 24) n;

-- every query, every LIMIT, under the current algorithm: the number of
-- comparisons and the first difference, if any
CREATE FUNCTION spm_ranges_check(filter text DEFAULT '', tab text DEFAULT 'spm_r',
	qtab text DEFAULT 'spm_rq')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	lim bigint;
	res text;
	n int := 0;
BEGIN
	FOR r IN EXECUTE format('SELECT qid, q FROM %I ORDER BY qid', qtab) LOOP
		FOREACH lim IN ARRAY ARRAY[1, 10, 100, NULL]::bigint[] LOOP
			res := spm_check(format('SELECT id, v <#> %L::sparsevec AS d FROM %I %s ORDER BY v <#> %L::sparsevec',
				r.q, tab, filter, r.q), lim);
			IF res NOT LIKE 'ok:%' THEN
				RETURN format('query %s limit %s: %s', r.qid, coalesce(lim::text, 'none'), res);
			END IF;
			n := n + 1;
		END LOOP;
	END LOOP;
	RETURN format('ok: %s comparisons', n);
END $$;

-- a positive query is answered by range pruning (algorithm ranges: on
-- this small corpus auto finds MaxScore cheaper): ranges bounded, no
-- posting block decoded, some ranges never scored
SELECT q AS q1 FROM spm_rq WHERE qid = 1 \gset
SET sparse_maxscore.algorithm = ranges;
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT windows > 0 AS ranges_bounded, windows_skipped > 0 AS ranges_pruned,
	blocks_decoded = 0 AS no_block_decoded, candidates_scored < 4000 AS not_every_document
FROM sparse_maxscore_last_scan();
-- the policy's counters say which algorithm scored the segments
SELECT segments_ranges > 0 AS by_ranges,
	segments_maxscore + segments_exhaustive + segments_ranges_gave_up = 0 AS nothing_else
FROM sparse_maxscore_last_scan();
-- under maxscore, the same query decodes posting blocks
SET sparse_maxscore.algorithm = maxscore;
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT blocks_decoded > 0 AS blocks_decoded FROM sparse_maxscore_last_scan();
SELECT segments_maxscore > 0 AS by_maxscore,
	segments_ranges + segments_exhaustive + segments_ranges_gave_up = 0 AS nothing_else
FROM sparse_maxscore_last_scan();
-- without LIMIT, the rows scoring 0 come from exhaustive passes
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q1') s;
SELECT segments_maxscore > 0 AS by_maxscore, segments_exhaustive > 0 AS zero_pass_exhaustive,
	segments_ranges + segments_ranges_gave_up = 0 AS no_ranges
FROM sparse_maxscore_last_scan();
-- exhaustive: nothing else
SET sparse_maxscore.algorithm = exhaustive;
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT segments_exhaustive > 0 AS by_exhaustive,
	segments_ranges + segments_maxscore + segments_ranges_gave_up = 0 AS nothing_else
FROM sparse_maxscore_last_scan();
-- auto tries range pruning first; where it gives up, MaxScore scores the
-- segment too
RESET sparse_maxscore.algorithm;
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT segments_ranges + segments_ranges_gave_up > 0 AS ranges_tried,
	segments_maxscore = segments_ranges_gave_up AS maxscore_after_give_up,
	segments_exhaustive = 0 AS no_exhaustive
FROM sparse_maxscore_last_scan();
-- a query with a negative weight is answered by MaxScore
SET sparse_maxscore.algorithm = ranges;
SELECT q AS q6 FROM spm_rq WHERE qid = 6 \gset
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q6' LIMIT 10) s;
SELECT blocks_decoded > 0 AS blocks_decoded FROM sparse_maxscore_last_scan();
SELECT segments_maxscore > 0 AND segments_ranges = 0 AS by_maxscore
FROM sparse_maxscore_last_scan();
RESET sparse_maxscore.algorithm;

-- the built index
SHOW sparse_maxscore.algorithm;
SELECT spm_ranges_check() AS auto;
SET sparse_maxscore.algorithm = ranges;
SELECT spm_ranges_check() AS ranges;
SET sparse_maxscore.algorithm = maxscore;
SELECT spm_ranges_check() AS maxscore;
SET sparse_maxscore.algorithm = exhaustive;
SELECT spm_ranges_check() AS exhaustive;

-- rounds past the first: initial_k 1 and a filter that keeps one row in five
SET sparse_maxscore.algorithm = ranges;
SET sparse_maxscore.initial_k = 1;
SELECT spm_ranges_check('WHERE grp = 3') AS filtered_rounds;
RESET sparse_maxscore.initial_k;

-- pending rows next to the segment, then deleted rows
INSERT INTO spm_r SELECT i, spm_topic_sv(i), i % 5 FROM generate_series(4001, 4400) i;
SELECT pending_documents > 0 AS pending FROM sparse_maxscore_info('spm_r_idx');
SELECT spm_ranges_check() AS with_pending;
DELETE FROM spm_r WHERE id % 7 = 0 OR id BETWEEN 1000 AND 1100;
VACUUM spm_r;
SELECT dead_documents > 0 AS dead FROM sparse_maxscore_info('spm_r_idx');
SELECT spm_ranges_check() AS with_deletions;
SET sparse_maxscore.initial_k = 1;
SELECT spm_ranges_check('WHERE grp <> 2') AS with_deletions_filtered;
RESET sparse_maxscore.initial_k;

-- VACUUM flushed the pending rows (deleted ones included) into a second
-- segment with its own ranges; then a merge into one
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_r_idx');
SELECT spm_ranges_check() AS two_segments;
SELECT sparse_maxscore_compact('spm_r_idx') >= 0 AS compacted;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_r_idx');
SELECT spm_ranges_check() AS merged;
RESET sparse_maxscore.algorithm;
SELECT spm_ranges_check() AS merged_auto;
SET sparse_maxscore.algorithm = ranges;
SELECT count(*) FROM (SELECT id FROM spm_r ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT windows > 0 AND blocks_decoded = 0 AS merged_by_ranges FROM sparse_maxscore_last_scan();
SELECT sparse_maxscore_verify('spm_r_idx') LIKE 'segments=1 %' AS verified;
RESET sparse_maxscore.algorithm;

-- ranges = off: new segments get no range data, and scans use MaxScore;
-- turned on, later segments get it; a merge with a segment without range
-- data has none
CREATE TABLE spm_r3 (id int NOT NULL, v sparsevec(300), grp int) WITH (autovacuum_enabled = off);
INSERT INTO spm_r3 SELECT i, spm_topic_sv(i), i % 5 FROM generate_series(1, 1500) i;
CREATE INDEX spm_r3_idx ON spm_r3 USING sparse_maxscore (v) WITH (ranges = off);
SELECT pg_relation_size('spm_r3_idx') AS size_off \gset
SET sparse_maxscore.algorithm = ranges;
SELECT count(*) FROM (SELECT id FROM spm_r3 ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT blocks_decoded > 0 AS maxscore_without_ranges FROM sparse_maxscore_last_scan();
SELECT spm_ranges_check('', 'spm_r3') AS ranges_off;
ALTER INDEX spm_r3_idx SET (ranges = on);
INSERT INTO spm_r3 SELECT i, spm_topic_sv(i), i % 5 FROM generate_series(1501, 2000) i;
SELECT sparse_maxscore_flush('spm_r3_idx');
SELECT spm_ranges_check('', 'spm_r3') AS one_segment_each;
SELECT sparse_maxscore_verify('spm_r3_idx') LIKE 'segments=2 %' AS verified;
SELECT sparse_maxscore_compact('spm_r3_idx');
SELECT spm_ranges_check('', 'spm_r3') AS merged_without_ranges;
SELECT count(*) FROM (SELECT id FROM spm_r3 ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT blocks_decoded > 0 AS maxscore_after_merge FROM sparse_maxscore_last_scan();
REINDEX INDEX spm_r3_idx;
SELECT count(*) FROM (SELECT id FROM spm_r3 ORDER BY v <#> :'q1' LIMIT 10) s;
SELECT blocks_decoded = 0 AS ranges_after_reindex FROM sparse_maxscore_last_scan();
SELECT pg_relation_size('spm_r3_idx') > :size_off AS range_data_takes_space;
SELECT sparse_maxscore_verify('spm_r3_idx') LIKE 'segments=1 %' AS verified;
RESET sparse_maxscore.algorithm;
DROP TABLE spm_r3;

-- more than 65,536 dimensions: the forward copy keeps 32-bit terms (src/README
-- "Ranges"), through build, flush and merge
CREATE TABLE spm_rw (id int NOT NULL, v sparsevec(70000), grp int) WITH (autovacuum_enabled = off);
INSERT INTO spm_rw SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE spm_topic_sv(i, 233, 70000) END, i % 5
FROM generate_series(1, 1500) i;
CREATE INDEX spm_rw_idx ON spm_rw USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 4096);
CREATE TABLE spm_rqw (qid int, q sparsevec);
INSERT INTO spm_rqw SELECT n, spm_topic_q(n, 233, 70000) FROM generate_series(1, 24) n;
SELECT q AS qw FROM spm_rqw WHERE qid = 1 \gset
SET sparse_maxscore.algorithm = ranges;
SELECT count(*) FROM (SELECT id FROM spm_rw ORDER BY v <#> :'qw' LIMIT 10) s;
SELECT blocks_decoded = 0 AND windows > 0 AS wide_by_ranges FROM sparse_maxscore_last_scan();
SELECT spm_ranges_check('', 'spm_rw', 'spm_rqw') AS wide_built;
INSERT INTO spm_rw SELECT i, spm_topic_sv(i, 233, 70000), i % 5 FROM generate_series(1501, 2000) i;
SELECT sparse_maxscore_flush('spm_rw_idx');
SELECT spm_ranges_check('WHERE grp <> 2', 'spm_rw', 'spm_rqw') AS wide_flushed;
SELECT sparse_maxscore_compact('spm_rw_idx');
SELECT spm_ranges_check('', 'spm_rw', 'spm_rqw') AS wide_merged;
SELECT sparse_maxscore_verify('spm_rw_idx') LIKE 'segments=1 %' AS verified;
RESET sparse_maxscore.algorithm;
SELECT spm_ranges_check('', 'spm_rw', 'spm_rqw') AS wide_auto;
DROP TABLE spm_rw, spm_rqw;
-- the same documents in 300 and in 70,000 dimensions: only the forward
-- copy differs, 6 bytes an element against 8
CREATE TABLE spm_rs (v sparsevec(300));
INSERT INTO spm_rs SELECT spm_topic_sv(i) FROM generate_series(1, 3000) i;
CREATE TABLE spm_rs_wide (v sparsevec(70000));
INSERT INTO spm_rs_wide SELECT regexp_replace(v::text, '/300$', '/70000')::sparsevec FROM spm_rs;
CREATE INDEX spm_rs_idx ON spm_rs USING sparse_maxscore (v) WITH (ranges = on);
CREATE INDEX spm_rs_wide_idx ON spm_rs_wide USING sparse_maxscore (v) WITH (ranges = on);
SELECT pg_relation_size('spm_rs_idx') < pg_relation_size('spm_rs_wide_idx') AS fwd16_smaller;
DROP TABLE spm_rs, spm_rs_wide;

-- reorder = on (src/README "Reordering"): documents of the same topics
-- as above, but the topics shuffled across the heap, tied weights in every
-- third one, NULL rows and empty vectors.  CREATE INDEX reorders them in
-- batches (maintenance_work_mem 1MB: two batches here).  Exact under every
-- algorithm, with a filter, after pending rows, deletions, a flush and a
-- merge; and range pruning scores fewer ranges than on the same rows in
-- heap order, so the docids did change.
CREATE TABLE spm_ro (id int NOT NULL, v sparsevec(300), grp int) WITH (autovacuum_enabled = off);
INSERT INTO spm_ro SELECT i,
	CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN '{}/300' ELSE spm_topic_sv((i * 7919) % 10007) END,
	i % 5
FROM generate_series(1, 10000) i;
CREATE TABLE spm_rn AS SELECT * FROM spm_ro;
SET maintenance_work_mem = '1MB';
CREATE INDEX spm_ro_idx ON spm_ro USING sparse_maxscore (v) WITH (ranges = on, reorder = on);
CREATE INDEX spm_rn_idx ON spm_rn USING sparse_maxscore (v) WITH (ranges = on);
RESET maintenance_work_mem;
CREATE INDEX spm_bad_idx ON spm_rn USING sparse_maxscore (v) WITH (reorder = sometimes);
SELECT documents, null_documents FROM sparse_maxscore_info('spm_ro_idx');
SELECT sparse_maxscore_verify('spm_ro_idx') LIKE 'segments=1 %' AS verified;
-- ranges scored by the positive queries at LIMIT 10
CREATE FUNCTION spm_ranges_scored(tab text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	r record;
	c record;
	total bigint := 0;
BEGIN
	FOR r IN SELECT q FROM spm_rq WHERE qid % 6 <> 0 ORDER BY qid LOOP
		EXECUTE format('SELECT count(*) FROM (SELECT id FROM %I ORDER BY v <#> %L::sparsevec LIMIT 10) s',
			tab, r.q);
		SELECT * INTO c FROM sparse_maxscore_last_scan();
		total := total + c.windows - c.windows_skipped;
	END LOOP;
	RETURN total;
END $$;
SET sparse_maxscore.algorithm = ranges;
SELECT spm_ranges_scored('spm_ro') AS reordered, spm_ranges_scored('spm_rn') AS heap_order \gset
SELECT :reordered < 0.5 * :heap_order AS fewer_ranges_scored;
SELECT spm_ranges_check('', 'spm_ro') AS reordered_ranges;
SET sparse_maxscore.algorithm = maxscore;
SELECT spm_ranges_check('', 'spm_ro') AS reordered_maxscore;
SET sparse_maxscore.algorithm = exhaustive;
SELECT spm_ranges_check('', 'spm_ro') AS reordered_exhaustive;
RESET sparse_maxscore.algorithm;
SELECT spm_ranges_check('', 'spm_ro') AS reordered_auto;
SET sparse_maxscore.algorithm = ranges;
SET sparse_maxscore.initial_k = 1;
SELECT spm_ranges_check('WHERE grp = 3', 'spm_ro') AS reordered_filtered_rounds;
RESET sparse_maxscore.initial_k;
INSERT INTO spm_ro SELECT i, spm_topic_sv(i), i % 5 FROM generate_series(10001, 10400) i;
DELETE FROM spm_ro WHERE id % 7 = 0 OR id BETWEEN 1000 AND 1100;
SELECT spm_ranges_check('', 'spm_ro') AS reordered_pending_deleted;
VACUUM spm_ro;
SELECT sparse_maxscore_compact('spm_ro_idx') >= 0 AS compacted;
SELECT spm_ranges_check('WHERE grp <> 2', 'spm_ro') AS reordered_merged;
SELECT sparse_maxscore_verify('spm_ro_idx') LIKE 'segments=1 %' AS verified;
-- turned on for an existing index, REINDEX reorders it
ALTER INDEX spm_rn_idx SET (reorder = on);
REINDEX INDEX spm_rn_idx;
SELECT spm_ranges_scored('spm_rn') < 0.5 * :heap_order AS reindex_reordered;
RESET sparse_maxscore.algorithm;
DROP FUNCTION spm_ranges_scored(text);
DROP TABLE spm_ro, spm_rn;
-- negative weights (every third document negated; MaxScore then), one
-- batch
CREATE TABLE spm_ron (id int NOT NULL, v sparsevec(300), grp int) WITH (autovacuum_enabled = off);
INSERT INTO spm_ron SELECT i,
	CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN '{}/300'
		WHEN i % 3 = 0 THEN regexp_replace(spm_topic_sv((i * 7919) % 10007)::text, ':', ':-', 'g')::sparsevec
		ELSE spm_topic_sv((i * 7919) % 10007) END,
	i % 5
FROM generate_series(1, 3000) i;
SET maintenance_work_mem = '1MB';
CREATE INDEX spm_ron_idx ON spm_ron USING sparse_maxscore (v) WITH (ranges = on, reorder = on);
RESET maintenance_work_mem;
SELECT count(*) FILTER (WHERE v::text LIKE '%:-%') > 900 AS negative_rows FROM spm_ron;
SELECT spm_ranges_check('', 'spm_ron') AS reordered_negative;
SET sparse_maxscore.initial_k = 1;
SELECT spm_ranges_check('WHERE grp = 1', 'spm_ron') AS reordered_negative_filtered;
RESET sparse_maxscore.initial_k;
SELECT sparse_maxscore_verify('spm_ron_idx') LIKE 'segments=1 %' AS verified;
DROP TABLE spm_ron;
-- 10M dimensions, terms 32,768 apart: the signatures' terms modulo
-- 65,536 collide (two values), and the duplicates are dropped
CREATE TABLE spm_row (id int NOT NULL, v sparsevec(10000000), grp int) WITH (autovacuum_enabled = off);
INSERT INTO spm_row SELECT i,
	CASE WHEN i % 97 = 0 THEN NULL ELSE spm_topic_sv((i * 7919) % 10007, 32768, 10000000) END, i % 5
FROM generate_series(1, 1500) i;
CREATE INDEX spm_row_idx ON spm_row USING sparse_maxscore (v) WITH (ranges = on, reorder = on);
CREATE TABLE spm_rqo (qid int, q sparsevec);
INSERT INTO spm_rqo SELECT n, spm_topic_q(n, 32768, 10000000) FROM generate_series(1, 24) n;
SELECT spm_ranges_check('', 'spm_row', 'spm_rqo') AS reordered_wide;
DROP TABLE spm_row, spm_rqo;
-- nothing to order: an empty table, only NULL rows, only empty vectors
CREATE TABLE spm_roe (id int NOT NULL, v sparsevec(300));
CREATE INDEX spm_roe_idx ON spm_roe USING sparse_maxscore (v) WITH (ranges = on, reorder = on);
INSERT INTO spm_roe SELECT i, NULL FROM generate_series(1, 50) i;
REINDEX INDEX spm_roe_idx;
SELECT documents, null_documents FROM sparse_maxscore_info('spm_roe_idx');
SELECT count(*) FROM (SELECT id FROM spm_roe ORDER BY v <#> '{1:1}/300' LIMIT 10) s;
UPDATE spm_roe SET v = '{}/300' WHERE id % 2 = 0;
REINDEX INDEX spm_roe_idx;
SELECT documents, null_documents FROM sparse_maxscore_info('spm_roe_idx');
SELECT spm_check('SELECT id, v <#> ''{1:1}/300''::sparsevec AS d FROM spm_roe ORDER BY v <#> ''{1:1}/300''::sparsevec') AS empty_and_null;
DROP TABLE spm_roe;

-- ranges = auto, the default (src/README "Ranges": "Which segments"): a
-- build or a flush keeps range data when its range maxima are much tighter
-- than its terms' bounds and its terms occur together.  spm_r's weights
-- are spread evenly (0.01 .. 2): every range of 32 documents holds about
-- its terms' largest weights, so no range data.  spm_rs draws its terms as
-- spm_r does (topics in runs of docids), 24 of a topic and 6 common ones
-- a document, with spiky weights (one in 50 from 1 .. 2, the others below
-- 0.1), so the ranges' maxima are mostly far below their terms' bounds,
-- and it keeps them; spm_rf draws its terms independently, so it does
-- not.  The index's size says which: the same as with ranges = off, or
-- as with ranges = on.
CREATE INDEX spm_r_auto ON spm_r USING sparse_maxscore (v) WITH (ranges = auto);
CREATE INDEX spm_r_off ON spm_r USING sparse_maxscore (v) WITH (ranges = off);
SELECT pg_relation_size('spm_r_auto') = pg_relation_size('spm_r_off') AS even_weights_no_ranges,
	pg_relation_size('spm_r_auto') < pg_relation_size('spm_r_idx') AS smaller_than_on;
SELECT setseed(0.5);
CREATE TABLE spm_rs (id int NOT NULL, v sparsevec(300)) WITH (autovacuum_enabled = off);
CREATE FUNCTION spm_spiky_sv(i int) RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT to_sparsevec(array_agg(t ORDER BY t),
		array_agg(CASE WHEN random() < 0.02 THEN 1 + random() ELSE 0.01 + 0.09 * random() END::real ORDER BY t), 300)
	FROM (SELECT DISTINCT CASE WHEN k <= 24 THEN ((i / 64) % 12) * 20 + 1 + floor(20 * random())::int
			ELSE 241 + floor(59 * random() ^ 2)::int END AS t
		FROM generate_series(1, 30) k) e
$$;
INSERT INTO spm_rs SELECT i,
	CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN '{}/300' ELSE spm_spiky_sv(i) END
FROM generate_series(1, 4000) i;
CREATE INDEX spm_rs_default ON spm_rs USING sparse_maxscore (v);
CREATE INDEX spm_rs_on ON spm_rs USING sparse_maxscore (v) WITH (ranges = on);
CREATE INDEX spm_rs_off ON spm_rs USING sparse_maxscore (v) WITH (ranges = off);
SELECT pg_relation_size('spm_rs_default') = pg_relation_size('spm_rs_on') AS spiky_weights_ranges,
	pg_relation_size('spm_rs_default') > pg_relation_size('spm_rs_off') AS larger_than_off;
CREATE TABLE spm_rf (id int NOT NULL, v sparsevec(300)) WITH (autovacuum_enabled = off);
INSERT INTO spm_rf SELECT i, to_sparsevec(array_agg(t ORDER BY t),
		array_agg(CASE WHEN random() < 0.02 THEN 1 + random() ELSE 0.01 + 0.09 * random() END::real ORDER BY t), 300)
	FROM generate_series(1, 4000) i,
		LATERAL (SELECT DISTINCT 1 + floor(300 * random() + 0 * i)::int AS t FROM generate_series(1, 30) k) e
	GROUP BY i;
CREATE INDEX spm_rf_default ON spm_rf USING sparse_maxscore (v);
CREATE INDEX spm_rf_off ON spm_rf USING sparse_maxscore (v) WITH (ranges = off);
SELECT pg_relation_size('spm_rf_default') = pg_relation_size('spm_rf_off') AS independent_terms_no_ranges;
DROP TABLE spm_rf;
-- a cosine index decides on its documents' own weights, not on the
-- normalized ones it stores (doc/decisions.md "Range data for cosine
-- indexes is decided on the raw weights"): topics in runs of docids,
-- every weight 1, every 8th document a single term.  Normalized, a term's
-- bound is a single-term document's 1 and most of its weights 1/sqrt(15),
-- which looks tight enough: an inner-product index of the normalized rows
-- gets range data.  As the documents have them every weight is its
-- term's bound, so the cosine index gets none
SELECT setseed(0.75);
CREATE TABLE spm_rc (id int NOT NULL, v sparsevec(300)) WITH (autovacuum_enabled = off);
INSERT INTO spm_rc SELECT i, (SELECT to_sparsevec(array_agg(t ORDER BY t), array_agg(1::real), 300)
	FROM (SELECT DISTINCT ((i / 64) % 12) * 20 + 1 + floor(20 * random())::int AS t
		FROM generate_series(1, CASE WHEN i % 8 = 0 THEN 1 ELSE 24 END) k) e)
FROM generate_series(1, 12000) i;
CREATE INDEX spm_rc_default ON spm_rc USING sparse_maxscore (v sparsevec_cosine_ops);
CREATE INDEX spm_rc_off ON spm_rc USING sparse_maxscore (v sparsevec_cosine_ops) WITH (ranges = off);
SELECT pg_relation_size('spm_rc_default') = pg_relation_size('spm_rc_off') AS cosine_no_ranges;
CREATE TABLE spm_rcn AS SELECT id, l2_normalize(v) AS v FROM spm_rc;
CREATE INDEX spm_rcn_default ON spm_rcn USING sparse_maxscore (v);
CREATE INDEX spm_rcn_off ON spm_rcn USING sparse_maxscore (v) WITH (ranges = off);
SELECT pg_relation_size('spm_rcn_default') > pg_relation_size('spm_rcn_off') AS normalized_ip_ranges;
DROP TABLE spm_rc, spm_rcn;
-- MaxScore where it saves (src/spmpolicy.c): independent terms, even
-- weights, 20-term queries (over 4,096 postings): MaxScore decodes nearly
-- every posting, so after its first runs auto lets the exhaustive kernel
-- score the segment, and runs MaxScore again now and then; maxscore
-- always runs it.  Every answer is the seq scan's either way.
SELECT setseed(0.75);
CREATE TABLE spm_rm (id int NOT NULL, v sparsevec(300)) WITH (autovacuum_enabled = off);
INSERT INTO spm_rm SELECT i, to_sparsevec(array_agg(t ORDER BY t), array_agg((0.5 + random())::real ORDER BY t), 300)
	FROM generate_series(1, 4000) i,
		LATERAL (SELECT DISTINCT 1 + floor(300 * random() + 0 * i)::int AS t FROM generate_series(1, 30) k) e
	GROUP BY i;
CREATE INDEX spm_rm_idx ON spm_rm USING sparse_maxscore (v);
CREATE TABLE spm_rmq (qid int, q sparsevec);
INSERT INTO spm_rmq SELECT n, to_sparsevec(array_agg(t ORDER BY t), array_agg(1::real), 300)
	FROM generate_series(1, 12) n,
		LATERAL (SELECT DISTINCT 1 + floor(300 * random() + 0 * n)::int AS t FROM generate_series(1, 20) k) e
	GROUP BY n;
CREATE TEMP TABLE spm_rm_runs (alg text, qid int, ms bigint, ex bigint);
CREATE FUNCTION spm_rm_run(alg text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
	PERFORM set_config('sparse_maxscore.algorithm', alg, true);
	FOR r IN SELECT qid, q FROM spm_rmq ORDER BY qid LOOP
		PERFORM count(*) FROM (SELECT id FROM spm_rm ORDER BY v <#> r.q LIMIT 10) s;
		INSERT INTO spm_rm_runs SELECT alg, r.qid, segments_maxscore, segments_exhaustive
			FROM sparse_maxscore_last_scan();
	END LOOP;
END $$;
SELECT spm_rm_run('auto');
SELECT spm_rm_run('maxscore');
SELECT alg, sum(ms) AS by_maxscore, sum(ex) > 0 AS some_exhaustive,
	bool_and(ms + ex = 1) AS one_segment_each
FROM spm_rm_runs GROUP BY alg ORDER BY alg;
SELECT spm_ranges_check('', 'spm_rm', 'spm_rmq') AS independent_auto;
DROP FUNCTION spm_rm_run(text);
DROP TABLE spm_rm, spm_rmq, spm_rm_runs;
-- which kernel scores under algorithm ranges tells too, and every answer
-- is the seq scan's
DROP INDEX spm_rs_on, spm_rs_off;
SET sparse_maxscore.algorithm = ranges;
SELECT count(*) FROM (SELECT id FROM spm_rs ORDER BY v <#> (SELECT q FROM spm_rq WHERE qid = 1) LIMIT 10) s;
SELECT segments_ranges > 0 AS spiky_by_ranges FROM sparse_maxscore_last_scan();
SELECT spm_ranges_check('', 'spm_rs') AS spiky_ranges;
RESET sparse_maxscore.algorithm;
SELECT spm_ranges_check('', 'spm_rs') AS spiky_auto;
-- a flush decides for its own segment: 4,000 spiky rows through the
-- pending list get range data, 4,000 even ones do not (a segment needs
-- 1,024 postings of sampled terms, about 16,000 in all, to be judged)
ALTER INDEX spm_rs_default SET (pending_list_limit = 1000000);
INSERT INTO spm_rs SELECT i + 10000, spm_spiky_sv(i) FROM generate_series(1, 4000) i;
SELECT sparse_maxscore_flush('spm_rs_default');
SET sparse_maxscore.algorithm = ranges;
SELECT count(*) FROM (SELECT id FROM spm_rs ORDER BY v <#> (SELECT q FROM spm_rq WHERE qid = 1) LIMIT 10) s;
SELECT segments_ranges AS both_by_ranges, segments_maxscore FROM sparse_maxscore_last_scan();
INSERT INTO spm_rs SELECT id + 20000, v FROM spm_r;
SELECT sparse_maxscore_flush('spm_rs_default');
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_rs_default');
SELECT count(*) FROM (SELECT id FROM spm_rs ORDER BY v <#> (SELECT q FROM spm_rq WHERE qid = 1) LIMIT 10) s;
SELECT segments_ranges AS by_ranges, segments_maxscore AS flushed_even_by_maxscore FROM sparse_maxscore_last_scan();
-- a merge of a segment with range data and one without has none
SELECT sparse_maxscore_compact('spm_rs_default');
SELECT segments FROM sparse_maxscore_info('spm_rs_default');
SELECT count(*) FROM (SELECT id FROM spm_rs ORDER BY v <#> (SELECT q FROM spm_rq WHERE qid = 1) LIMIT 10) s;
SELECT segments_ranges AS merged_by_ranges, segments_maxscore FROM sparse_maxscore_last_scan();
RESET sparse_maxscore.algorithm;
SELECT spm_ranges_check('', 'spm_rs') AS after_flush_and_merge;
-- the reloption's words: auto, on, off and a boolean's
ALTER INDEX spm_rs_default SET (ranges = true);
ALTER INDEX spm_rs_default SET (ranges = OFF);
SELECT reloptions FROM pg_class WHERE relname = 'spm_rs_default';
ALTER INDEX spm_rs_default SET (ranges = maybe);
CREATE INDEX ON spm_rs USING sparse_maxscore (v) WITH (ranges = 2);
DROP TABLE spm_rs;
DROP FUNCTION spm_spiky_sv(int);
DROP INDEX spm_r_auto, spm_r_off;

DROP FUNCTION spm_ranges_check(text, text, text);
DROP TABLE spm_rq;
DROP TABLE spm_r;
DROP FUNCTION spm_topic_sv(int, int, int);
DROP FUNCTION spm_topic_q(int, int, int);
RESET enable_seqscan;

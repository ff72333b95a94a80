--
-- sparse_maxscore: quantized weights (src/README "Quantized weights")
-- against the seq scan.  The index keeps each weight as one byte (an
-- interval that holds it); the executor rescores the rows the scan returns
-- in the order of their bounds.  Adversarial weights: one huge weight among
-- small ones, all-equal weights, weights one float4 step apart (the same
-- code, different exact scores), denormals, negative weights; NULL rows
-- and empty vectors.  Every query runs with LIMITs 1, 10 and 100 and
-- without, with and without a filter, before and after pending rows,
-- deletions, a flush, and merges that re-encode quantized postings.
-- Uses spm_setup's helpers.
--
SET enable_seqscan = off;
SELECT setseed(0.31);

-- document i: 6 terms out of 60; its weights by family (i % 6):
-- 0 small random weights and, every 50th, a huge one on term 1;
-- 1 all equal; 2 0.7 or the next float4 above it; 3 denormals;
-- 4 mixed signs; 5 random magnitudes over 12 orders
CREATE FUNCTION spm_q_sv(i int) RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT to_sparsevec(array_agg(t ORDER BY t), array_agg(w ORDER BY t), 60)
	FROM (
		SELECT DISTINCT ON (t) t,
			(CASE i % 6
				WHEN 0 THEN CASE WHEN t = 1 AND i % 50 = 0 THEN 1e30 ELSE 0.001 + random() END
				WHEN 1 THEN 0.5
				WHEN 2 THEN CASE WHEN random() < 0.5 THEN 0.7 ELSE 0.70000005 END
				WHEN 3 THEN (1 + floor(random() * 100)) * 1e-42
				WHEN 4 THEN (random() - 0.4) * 4 + 1e-3
				ELSE 10 ^ (12 * random() - 6) END)::real AS w
		FROM (SELECT 1 + floor(60 * random() ^ 1.5)::int AS t FROM generate_series(1, 6)) e
		ORDER BY t
	) e2
$$;

CREATE TABLE spm_q (id int NOT NULL, v sparsevec(60)) WITH (autovacuum_enabled = off);
INSERT INTO spm_q SELECT i,
	CASE WHEN i % 71 = 0 THEN NULL WHEN i % 67 = 0 THEN '{}/60' ELSE spm_q_sv(i) END
FROM generate_series(1, 3000) i;
CREATE INDEX spm_q_idx ON spm_q USING sparse_maxscore (v) WITH (pending_list_limit = 4096);
SELECT sparse_maxscore_verify('spm_q_idx');

-- the weights really are quantized: on 30,000 documents of 10 terms the
-- whole index takes less than raw float4 weights alone would
CREATE TABLE spm_q_size (v sparsevec(60));
INSERT INTO spm_q_size SELECT to_sparsevec(array_agg(6 * k + i % 6 + 1 ORDER BY k),
	array_agg(random()::real ORDER BY k), 60)
FROM generate_series(1, 30000) i, generate_series(0, 9) k GROUP BY i;
CREATE INDEX spm_q_size_idx ON spm_q_size USING sparse_maxscore (v);
SELECT pg_relation_size('spm_q_size_idx') < 4 * (SELECT sum(nnz(v)) FROM spm_q_size)
	AS smaller_than_raw_weights;
DROP TABLE spm_q_size;

-- queries: the huge-weight term; the tied terms; the near-tied terms;
-- the denormal and the mixed families' terms; negative query weights
CREATE TABLE spm_q_queries (qid int, q sparsevec);
INSERT INTO spm_q_queries VALUES
	(1, '{1:1,2:0.5}/60'),
	(2, '{1:1,3:1,5:1}/60'),
	(3, '{2:0.25,4:1,6:3}/60'),
	(4, '{1:1e20,2:1e20}/60'),
	(5, '{1:-1,2:0.5,3:-0.25}/60'),
	(6, '{7:1,8:-2,9:1.5,10:1,11:1,12:1}/60'),
	(7, '{1:0.7,2:0.70000005}/60'),
	(8, '{1:1e-30,3:1e30}/60');

CREATE FUNCTION spm_q_check(filter text DEFAULT 'true') RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	lim bigint;
	res text;
BEGIN
	FOR r IN SELECT qid, q FROM spm_q_queries ORDER BY qid LOOP
		FOREACH lim IN ARRAY ARRAY[1, 10, 100, NULL]::bigint[] LOOP
			res := spm_check(format('SELECT id, v <#> %L AS d FROM spm_q WHERE %s ORDER BY v <#> %L',
				r.q, filter, r.q), lim);
			IF res NOT LIKE 'ok:%' THEN
				RETURN NEXT format('q%s limit %s filter %s: %s', r.qid, lim, filter, res);
			END IF;
		END LOOP;
	END LOOP;
	RETURN NEXT 'checked';
END $$;

SELECT * FROM spm_q_check();
SELECT * FROM spm_q_check('id % 3 = 0');

-- the executor rescores: a LIMIT 10 query takes rows past the 10th; one
-- round serves a query of random weights, while on the near-tied family
-- hundreds of documents share one bound and the rounds go on past them
SELECT count(*) FROM (SELECT id FROM spm_q ORDER BY v <#> '{2:0.25,4:1,6:3}/60' LIMIT 10) s;
SELECT rounds, rows_returned BETWEEN 11 AND 26 AS rescored_past_the_limit FROM sparse_maxscore_last_scan();
SELECT count(*) FROM (SELECT id FROM spm_q ORDER BY v <#> '{1:0.7,2:0.70000005}/60' LIMIT 10) s;
SELECT rounds > 1 AS several_rounds, rows_returned > 100 AS many_rows FROM sparse_maxscore_last_scan();

-- an elastic first round: 40 documents share the top cell of their
-- block, so the executor needs 41 rows for LIMIT 10; the round keeps every
-- row within the cells' gap of the 10th bound and one more, so one round
-- serves the query (a first round of LIMIT + 5 rows took two, three
-- for the LIMIT 3 query)
CREATE TABLE spm_q_cell (id int PRIMARY KEY, v sparsevec(4));
INSERT INTO spm_q_cell
	SELECT i, format('{1:%s,2:1}/4', CASE WHEN i <= 40 THEN (2 + i * 1e-5)::real
									   WHEN i = 41 THEN 1
									   ELSE (1 + 0.5 * ((i * 7919) % 1000) / 1000.0)::real END)::sparsevec
	FROM generate_series(1, 300) i;
CREATE INDEX spm_q_cell_idx ON spm_q_cell USING sparse_maxscore (v);
SELECT array_agg(id) FROM (SELECT id FROM spm_q_cell ORDER BY v <#> '{1:1}/4' LIMIT 10) s;
SELECT rounds, rows_returned > 15 AS past_a_fixed_margin FROM sparse_maxscore_last_scan();
SELECT array_agg(id) FROM (SELECT id FROM spm_q_cell ORDER BY v <#> '{1:1,2:0.5}/4' LIMIT 3) s;
SELECT rounds FROM sparse_maxscore_last_scan();
-- the same rows as the seq scan, with LIMITs below and past the tied rows
SET enable_indexscan = off;
CREATE TEMP TABLE spm_q_cell_seq AS
	SELECT l, array(SELECT id FROM spm_q_cell ORDER BY v <#> '{1:1}/4', id LIMIT l) AS ids
	FROM (VALUES (1), (10), (39), (40), (41), (42), (300)) x(l);
RESET enable_indexscan;
-- each LIMIT a literal, as the LIMIT hint needs (a LIMIT taken from an
-- outer column is no hint: the scan would run its ordinary rounds), and
-- every one of them one elastic round
CREATE FUNCTION pg_temp.spm_q_cell_index(l int, OUT ids int[], OUT rounds bigint)
LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM spm_q_cell ORDER BY v <#> %L LIMIT %s) s',
				   '{1:1}/4', l) INTO ids;
	SELECT s.rounds INTO rounds FROM sparse_maxscore_last_scan() s;
END
$f$;
SELECT l, x.ids = c.ids AS same, x.rounds
FROM spm_q_cell_seq c, pg_temp.spm_q_cell_index(l) x ORDER BY l;
DROP TABLE spm_q_cell;

-- pending rows (exact) next to quantized segments
INSERT INTO spm_q SELECT i, spm_q_sv(i) FROM generate_series(3001, 3400) i;
SELECT pending_documents > 0 AS pending FROM sparse_maxscore_info('spm_q_idx');
SELECT * FROM spm_q_check();

-- deletions, a flush, then merges: merged segments re-encode quantized
-- postings at their own grid or a coarser one
DELETE FROM spm_q WHERE id % 7 = 0;
SELECT sparse_maxscore_flush('spm_q_idx') >= 0 AS flushed;
SELECT * FROM spm_q_check();
VACUUM spm_q;
INSERT INTO spm_q SELECT i, spm_q_sv(i) FROM generate_series(3401, 3800) i;
SELECT sparse_maxscore_flush('spm_q_idx') >= 0 AS flushed;
SELECT segments > 1 AS several_segments FROM sparse_maxscore_info('spm_q_idx');
SELECT sparse_maxscore_compact('spm_q_idx') >= 0 AS compacted;
SELECT segments, pending_documents FROM sparse_maxscore_info('spm_q_idx');
SELECT sparse_maxscore_verify('spm_q_idx');
SELECT * FROM spm_q_check();
SELECT * FROM spm_q_check('id % 3 = 0');

-- every algorithm gives the same rows
SET sparse_maxscore.algorithm = exhaustive;
SELECT * FROM spm_q_check();
SET sparse_maxscore.algorithm = maxscore;
SELECT * FROM spm_q_check();
RESET sparse_maxscore.algorithm;

-- range data quantizes each term at one exponent (format 6): the same
-- many tied bounds, the same exact rows
CREATE INDEX spm_q_ranges ON spm_q USING sparse_maxscore (v) WITH (ranges = on);
DROP INDEX spm_q_idx;
SELECT count(*) FROM (SELECT id FROM spm_q ORDER BY v <#> '{1:0.7,2:0.70000005}/60' LIMIT 10) s;
SELECT rounds > 1 AS several_rounds, rows_returned > 100 AS many_rows FROM sparse_maxscore_last_scan();
SELECT * FROM spm_q_check();
SET sparse_maxscore.algorithm = ranges;
SELECT * FROM spm_q_check();
RESET sparse_maxscore.algorithm;
SELECT sparse_maxscore_verify('spm_q_ranges');

-- with range data and quantize = off the weights stay exact: no
-- rescoring, the scan returns exactly the LIMIT's rows
CREATE INDEX spm_q_exact ON spm_q USING sparse_maxscore (v) WITH (ranges = on, quantize = off);
DROP INDEX spm_q_ranges;
SELECT count(*) FROM (SELECT id FROM spm_q ORDER BY v <#> '{1:0.7,2:0.70000005}/60' LIMIT 10) s;
SELECT rounds, rows_returned FROM sparse_maxscore_last_scan();
SELECT * FROM spm_q_check();

-- format 6 next to exact range data: spm_q_exact's new segments quantize
-- each term at one exponent; a merge with an exact segment quantizes it
-- too; and with quantize = off again, a merge keeps quantized what came
-- quantized (src/README "Ranges")
ALTER INDEX spm_q_exact SET (quantize = on, pending_list_limit = 4096);
INSERT INTO spm_q SELECT i, spm_q_sv(i) FROM generate_series(3801, 4000) i;
SELECT sparse_maxscore_flush('spm_q_exact') >= 0 AS flushed;
SELECT segments FROM sparse_maxscore_info('spm_q_exact');
SELECT sparse_maxscore_verify('spm_q_exact');
SELECT * FROM spm_q_check();
SELECT sparse_maxscore_compact('spm_q_exact') >= 0 AS compacted;
SELECT segments FROM sparse_maxscore_info('spm_q_exact');
SELECT sparse_maxscore_verify('spm_q_exact');
SELECT * FROM spm_q_check();
SELECT * FROM spm_q_check('id % 3 = 0');
ALTER INDEX spm_q_exact SET (quantize = off);
INSERT INTO spm_q SELECT i, spm_q_sv(i) FROM generate_series(4001, 4200) i;
SELECT sparse_maxscore_flush('spm_q_exact') >= 0 AS flushed;
SELECT sparse_maxscore_compact('spm_q_exact') >= 0 AS compacted;
SELECT sparse_maxscore_verify('spm_q_exact');
SELECT * FROM spm_q_check();
SET sparse_maxscore.algorithm = exhaustive;
SELECT * FROM spm_q_check();
RESET sparse_maxscore.algorithm;
DELETE FROM spm_q WHERE id > 3800;

-- range data with 1-byte weights takes less room than with exact ones:
-- on 20,000 documents of 10 positive terms, under half
CREATE TABLE spm_q_size (v sparsevec(60));
INSERT INTO spm_q_size SELECT to_sparsevec(array_agg(6 * k + i % 6 + 1 ORDER BY k),
	array_agg(random()::real ORDER BY k), 60)
FROM generate_series(1, 20000) i, generate_series(0, 9) k GROUP BY i;
CREATE INDEX spm_q_size_q ON spm_q_size USING sparse_maxscore (v) WITH (ranges = on);
CREATE INDEX spm_q_size_x ON spm_q_size USING sparse_maxscore (v) WITH (ranges = on, quantize = off);
SELECT pg_relation_size('spm_q_size_q') < 0.6 * pg_relation_size('spm_q_size_x')
	AS quantized_smaller;
SELECT sparse_maxscore_verify('spm_q_size_q') LIKE 'segments=1 %' AS verified;
DROP TABLE spm_q_size;

-- quantize = off keeps exact weights without range data
CREATE INDEX spm_q_raw ON spm_q USING sparse_maxscore (v) WITH (quantize = off);
DROP INDEX spm_q_exact;
SELECT count(*) FROM (SELECT id FROM spm_q ORDER BY v <#> '{1:0.7,2:0.70000005}/60' LIMIT 10) s;
SELECT rounds, rows_returned FROM sparse_maxscore_last_scan();
SELECT * FROM spm_q_check();
-- turned on, new segments are quantized; a merge with an exact segment
-- quantizes both
ALTER INDEX spm_q_raw SET (quantize = on, pending_list_limit = 4096);
INSERT INTO spm_q SELECT i, spm_q_sv(i) FROM generate_series(3801, 4200) i;
SELECT sparse_maxscore_flush('spm_q_raw') >= 0 AS flushed;
SELECT * FROM spm_q_check();
SELECT sparse_maxscore_compact('spm_q_raw') >= 0 AS compacted;
SELECT segments FROM sparse_maxscore_info('spm_q_raw');
SELECT sparse_maxscore_verify('spm_q_raw');
SELECT * FROM spm_q_check();
SELECT * FROM spm_q_check('id % 3 = 0');

DROP TABLE spm_q, spm_q_queries;
DROP FUNCTION spm_q_sv(int), spm_q_check(text);

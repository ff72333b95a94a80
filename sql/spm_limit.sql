--
-- sparse_maxscore: the LIMIT above a scan sizes its first round
-- (src/spmlimit.c).  A hint never changes a result: every query is
-- compared with a seq scan, and the rounds counter shows when the hint
-- was used.  Uses spm_setup's helpers.  The index's weights are quantized:
-- the executor rescores and takes a row or a few past the LIMIT.
--
SELECT setseed(0.57);
SET enable_seqscan = off;

CREATE TABLE spm_lim (id int NOT NULL, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO spm_lim
SELECT i, CASE WHEN r < 0.03 THEN NULL
	WHEN r < 0.06 THEN '{}/200'
	ELSE spm_rand_sv(200, 1 + (random() * 12)::int, 190, 0.1, r < 0.5) END
FROM (SELECT i, random() AS r FROM generate_series(1, 3000) i) s;
CREATE INDEX spm_lim_idx ON spm_lim USING sparse_maxscore (v);
ANALYZE spm_lim;

-- rounds and rows of the last scan
CREATE FUNCTION spm_lim_rounds(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	EXECUTE query;
	SELECT * INTO r FROM sparse_maxscore_last_scan();
	RETURN format('%s rounds, %s rows', r.rounds, r.rows_returned);
END $$;

-- constant LIMITs, exact against the seq scan
SELECT lim, spm_compare(
	format('SELECT 0 AS g, id, v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' AS d FROM spm_lim ORDER BY v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' LIMIT %s', lim),
	'SELECT 0 AS g, id, v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' AS d FROM spm_lim',
	lim)
FROM (VALUES (1), (7), (100), (500), (2999), (5000)) l(lim)
ORDER BY lim;

-- with OFFSET: a seq scan may skip other rows among ties, so the reference
-- is the index scan with the LIMIT hidden behind OFFSET 0 (no hint); the
-- index returns ties in docid order whatever the rounds, so the rows must
-- be equal
CREATE FUNCTION spm_lim_same(q text, lim int, off int) RETURNS text LANGUAGE sql AS $$
	SELECT CASE WHEN t.id = r.id AND t.d IS NOT DISTINCT FROM r.d
		THEN format('same %s rows', cardinality(t.id)) ELSE 'DIFFERENT' END
	FROM spm_rows(format('SELECT 0 AS g, id, v <#> %1$L AS d FROM spm_lim ORDER BY v <#> %1$L LIMIT %2$s OFFSET %3$s', q, lim, off)) t,
		spm_rows(format('SELECT 0 AS g, id, d FROM (SELECT id, v <#> %1$L AS d FROM spm_lim ORDER BY v <#> %1$L OFFSET 0) s LIMIT %2$s OFFSET %3$s', q, lim, off)) r
$$;
SELECT lim, off, spm_lim_same('{1:1,3:0.5,7:-0.25,40:2}/200', lim, off)
FROM (VALUES (1), (7), (100), (500), (5000)) l(lim),
	(VALUES (13), (480), (2990)) o(off)
ORDER BY lim, off;

-- LIMIT 500: one round of 500 with the hint (initial_k = 100 would need
-- 100 + 200 + 400); the same query behind OFFSET 0 hides the LIMIT
EXPLAIN (COSTS OFF) SELECT id FROM spm_lim ORDER BY v <#> '{1:1,40:2}/200' LIMIT 500;
SELECT spm_lim_rounds('SELECT id FROM spm_lim ORDER BY v <#> ''{1:1,40:2}/200'' LIMIT 500');
SELECT spm_lim_rounds('SELECT id FROM (SELECT id FROM spm_lim ORDER BY v <#> ''{1:1,40:2}/200'' OFFSET 0) s LIMIT 500');
-- LIMIT 10 OFFSET 480: a first round of 490
SELECT spm_lim_rounds('SELECT id FROM spm_lim ORDER BY v <#> ''{1:1,40:2}/200'' LIMIT 10 OFFSET 480');
-- LIMIT 3: one round of 3; asking for more than the hint starts round 2
SELECT spm_lim_rounds('SELECT id FROM spm_lim ORDER BY v <#> ''{1:1,40:2}/200'' LIMIT 3');
-- a LATERAL top-k per outer row: every rescan keeps the hint
SELECT spm_lim_rounds('SELECT g, id FROM generate_series(1, 3) g,
	LATERAL (SELECT id FROM spm_lim ORDER BY v <#> format(''{%s:1,40:2}/200'', g)::sparsevec LIMIT 300) s');
SELECT spm_compare(
	'SELECT g, id, d FROM generate_series(1, 3) g, LATERAL (SELECT id, v <#> format(''{%s:1,40:2}/200'', g)::sparsevec AS d FROM spm_lim ORDER BY v <#> format(''{%s:1,40:2}/200'', g)::sparsevec LIMIT 300) s',
	'SELECT g, id, v <#> format(''{%s:1,40:2}/200'', g)::sparsevec AS d FROM generate_series(1, 3) g, spm_lim', 300);
-- a filter on the scan: no hint (rows are rejected after the scan)
SELECT spm_lim_rounds('SELECT id FROM spm_lim WHERE id % 7 = 0 ORDER BY v <#> ''{1:1,40:2}/200'' LIMIT 50');
SELECT spm_compare(
	'SELECT 0 AS g, id, v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' AS d FROM spm_lim WHERE id % 7 = 0 ORDER BY v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' LIMIT 50',
	'SELECT 0 AS g, id, v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' AS d FROM spm_lim WHERE id % 7 = 0 ORDER BY v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200''', 50);
-- LIMIT 0
SELECT count(*) FROM (SELECT id FROM spm_lim ORDER BY v <#> '{1:1}/200' LIMIT 0) s;

-- WITH TIES: the hint is a start, ties past it come from later rounds
SELECT spm_compare(
	'SELECT 0 AS g, id, v <#> ''{5:1}/200'' AS d FROM spm_lim ORDER BY v <#> ''{5:1}/200'' FETCH FIRST 4 ROWS WITH TIES',
	'SELECT 0 AS g, id, v <#> ''{5:1}/200'' AS d FROM spm_lim WHERE v <#> ''{5:1}/200'' <= (SELECT v <#> ''{5:1}/200'' FROM spm_lim ORDER BY 1 NULLS LAST LIMIT 1 OFFSET 3)');

-- a prepared LIMIT $1, generic plan: the parameter's value is the hint
SET plan_cache_mode = force_generic_plan;
PREPARE spm_lim_p(sparsevec, bigint) AS
	SELECT 0 AS g, id, v <#> $1 AS d FROM spm_lim ORDER BY v <#> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE spm_lim_p('{1:1}/200', 700);
SELECT spm_lim_rounds('EXECUTE spm_lim_p(''{1:1,40:2}/200'', 700)');
SELECT spm_lim_rounds('EXECUTE spm_lim_p(''{1:1,40:2}/200'', 1)');
SELECT spm_compare(
	format('EXECUTE spm_lim_p(''{1:1,3:0.5,7:-0.25,40:2}/200'', %s)', n),
	'SELECT 0 AS g, id, v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200'' AS d FROM spm_lim ORDER BY v <#> ''{1:1,3:0.5,7:-0.25,40:2}/200''', n)
FROM (VALUES (1), (250), (3000)) x(n);
RESET plan_cache_mode;

-- two scans of the same index under different LIMITs in one query: each
-- may take the other's hint, which costs rounds, never rows.  The
-- reference is the same query with the LIMITs hidden behind OFFSET 0 (no
-- hints); ties come in docid order either way, so the rows must be equal.
SELECT t.id = r.id AND t.d = r.d AS same, cardinality(t.id) AS n
FROM spm_rows('SELECT 0 AS g, id, d FROM (SELECT id, v <#> ''{1:1,3:2}/200'' AS d FROM spm_lim ORDER BY v <#> ''{1:1,3:2}/200'' LIMIT 5) a
	UNION ALL SELECT 1, id, d FROM (SELECT id, v <#> ''{40:1}/200'' AS d FROM spm_lim ORDER BY v <#> ''{40:1}/200'' LIMIT 900) b') t,
	spm_rows('SELECT 0 AS g, id, d FROM (SELECT * FROM (SELECT id, v <#> ''{1:1,3:2}/200'' AS d FROM spm_lim ORDER BY v <#> ''{1:1,3:2}/200'' OFFSET 0) a0 LIMIT 5) a
	UNION ALL SELECT 1, id, d FROM (SELECT * FROM (SELECT id, v <#> ''{40:1}/200'' AS d FROM spm_lim ORDER BY v <#> ''{40:1}/200'' OFFSET 0) b0 LIMIT 900) b') r;

DROP TABLE spm_lim;
DROP FUNCTION spm_lim_rounds(text), spm_lim_same(text, int, int);

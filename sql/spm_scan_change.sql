-- A flush or a merge between two rounds of one scan (src/README
-- "Structure changes during a scan").  Quantized bounds only go up when
-- pending rows move into a segment or a merge re-encodes a block, so a row
-- the scan had not returned yet can move above its cursor; the rounds
-- remember what they returned and start again from the top.  Checked
-- against the seq scan: every row once, in the seq scan's order.
SET sparse_maxscore.initial_k = 10;
CREATE TABLE sc (id int PRIMARY KEY, v sparsevec(10));
CREATE INDEX sc_v ON sc USING sparse_maxscore (v) WITH (pending_list_limit = 65536);
SELECT setseed(0.5);
INSERT INTO sc SELECT i, to_sparsevec('{1}', ARRAY[(1 + random())::real], 10)
FROM generate_series(1, 3000) i;
-- ties, a row of score 0 and a NULL row too
INSERT INTO sc SELECT i, '{1:1.5}/10' FROM generate_series(3001, 3040) i;
INSERT INTO sc VALUES (3041, '{2:1}/10'), (3042, NULL);

CREATE TEMP TABLE got (n int, id int, d float8);
-- read ORDER BY v <op> q through a cursor into got, flushing and merging
-- the index after the rows given
CREATE FUNCTION scan_with_changes(flush_at int, compact_at int,
	tab text DEFAULT 'sc', op text DEFAULT '<#>', q text DEFAULT '{1:1}/10')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	i int := 0;
	idx text := tab || '_v';
BEGIN
	SET LOCAL enable_seqscan = off;
	OPEN c FOR EXECUTE format('SELECT id, v %s %L AS d FROM %I ORDER BY v %s %L',
		op, q, tab, op, q);
	LOOP
		FETCH c INTO r;
		EXIT WHEN NOT FOUND;
		i := i + 1;
		INSERT INTO got VALUES (i, r.id, r.d);
		IF i = flush_at THEN PERFORM sparse_maxscore_flush(idx); END IF;
		IF i = compact_at THEN PERFORM sparse_maxscore_compact(idx); END IF;
	END LOOP;
	CLOSE c;
END $$;

-- what the cursor read against the seq scan: every row once, in order
-- (the distances, position by position: ties may come in any order)
CREATE FUNCTION check_got(tab text DEFAULT 'sc', op text DEFAULT '<#>',
	q text DEFAULT '{1:1}/10', OUT rows bigint, OUT distinct_rows bigint,
	OUT out_of_order bigint, OUT not_returned bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SELECT count(*), count(DISTINCT id) INTO rows, distinct_rows FROM got;
	EXECUTE format('WITH s AS (
			SELECT row_number() OVER (ORDER BY v %s %L, id) AS n,
				v %s %L AS d
			FROM %I)
		SELECT count(*) FROM got g JOIN s USING (n) WHERE g.d IS DISTINCT FROM s.d',
		op, q, op, q, tab) INTO out_of_order;
	EXECUTE format('SELECT count(*) FROM %I WHERE id NOT IN (SELECT id FROM got)', tab)
		INTO not_returned;
END $$;

-- every row is pending; the cursor reads 10 rows, they all move into a
-- segment (exact scores become bounds), and the cursor reads on
SELECT scan_with_changes(10, 0);
SELECT * FROM check_got();

-- two segments and pending rows: a flush after 10 rows, then a merge of
-- the three segments (quantized blocks re-encoded on coarser lattices)
TRUNCATE got;
INSERT INTO sc SELECT i, to_sparsevec('{1}', ARRAY[(1 + random())::real], 10)
FROM generate_series(3043, 4500) i;
SELECT sparse_maxscore_flush('sc_v') > 0 AS flushed;
INSERT INTO sc SELECT i, to_sparsevec('{1}', ARRAY[(1 + random())::real], 10)
FROM generate_series(4501, 6000) i;
SELECT scan_with_changes(10, 200);
SELECT * FROM check_got();

-- the docid-order phase (rows of score 0) cannot tell what it returned
-- once bounds moved: a flush there is an error to retry, not a wrong answer
CREATE TABLE sz (id int PRIMARY KEY, v sparsevec(10));
INSERT INTO sz SELECT i, '{1:1}/10' FROM generate_series(1, 10) i;
INSERT INTO sz SELECT i, '{2:1}/10' FROM generate_series(11, 20010) i;
CREATE INDEX sz_v ON sz USING sparse_maxscore (v);
INSERT INTO sz VALUES (20011, '{1:2}/10');
DO $$
DECLARE
	c refcursor;
	r record;
	i int := 0;
BEGIN
	SET LOCAL enable_seqscan = off;
	OPEN c FOR SELECT id FROM sz ORDER BY v <#> '{1:1}/10';
	LOOP
		FETCH c INTO r;
		EXIT WHEN NOT FOUND;
		i := i + 1;
		IF i = 20 THEN PERFORM sparse_maxscore_flush('sz_v'); END IF;
	END LOOP;
	RAISE NOTICE 'read % rows', i;
EXCEPTION WHEN serialization_failure THEN
	RAISE NOTICE 'refused after % rows: %', i, SQLERRM;
END $$;
-- without a change the same scan reads every row
DO $$
DECLARE
	n int;
BEGIN
	SET LOCAL enable_seqscan = off;
	SELECT count(*) INTO n FROM (SELECT id FROM sz ORDER BY v <#> '{1:1}/10') s;
	RAISE NOTICE 'read % rows', n;
END $$;

-- an L2 index's rounds rank rows of every sign (src/README "Cosine and
-- L2"): after a flush or a merge they too start again from the top, and
-- never refuse.  Positive, zero (empty vectors) and negative scores, ties
-- (copies), a NULL row
TRUNCATE got;
CREATE TABLE sl (id int PRIMARY KEY, v sparsevec(10));
CREATE INDEX sl_v ON sl USING sparse_maxscore (v sparsevec_l2_ops)
	WITH (pending_list_limit = 65536);
INSERT INTO sl SELECT i, CASE
		WHEN i % 97 = 0 THEN '{}/10'
		WHEN i % 89 = 0 THEN '{1:1,2:1}/10'
		ELSE to_sparsevec('{1,2,3}', ARRAY[(random() * 2 - 0.5)::real,
			(random() * 1.5)::real, (random() * 3)::real], 10) END
FROM generate_series(1, 3000) i;
INSERT INTO sl VALUES (3001, NULL);
SELECT scan_with_changes(10, 0, 'sl', '<->', '{1:1,2:1}/10');
SELECT * FROM check_got('sl', '<->', '{1:1,2:1}/10');
TRUNCATE got;
INSERT INTO sl SELECT i, to_sparsevec('{1,2,3}', ARRAY[(random() * 2 - 0.5)::real,
	(random() * 1.5)::real, (random() * 3)::real], 10)
FROM generate_series(3002, 4500) i;
SELECT sparse_maxscore_flush('sl_v') > 0 AS flushed;
INSERT INTO sl SELECT i, to_sparsevec('{1,3}', ARRAY[(random() * 2)::real,
	(random() * 3)::real], 10)
FROM generate_series(4501, 6000) i;
SELECT scan_with_changes(10, 200, 'sl', '<->', '{1:1,2:1}/10');
SELECT * FROM check_got('sl', '<->', '{1:1,2:1}/10');

DROP FUNCTION scan_with_changes(int, int, text, text, text);
DROP FUNCTION check_got(text, text, text);
DROP TABLE sc, sz, sl;
RESET sparse_maxscore.initial_k;

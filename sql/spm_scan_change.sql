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
CREATE FUNCTION scan_with_changes(flush_at int, compact_at int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	i int := 0;
BEGIN
	SET LOCAL enable_seqscan = off;
	OPEN c FOR SELECT id, v <#> '{1:1}/10' AS d FROM sc ORDER BY v <#> '{1:1}/10';
	LOOP
		FETCH c INTO r;
		EXIT WHEN NOT FOUND;
		i := i + 1;
		INSERT INTO got VALUES (i, r.id, r.d);
		IF i = flush_at THEN PERFORM sparse_maxscore_flush('sc_v'); END IF;
		IF i = compact_at THEN PERFORM sparse_maxscore_compact('sc_v'); END IF;
	END LOOP;
	CLOSE c;
END $$;

-- what the cursor read against the seq scan: every row once, in order
CREATE FUNCTION check_got(OUT rows bigint, OUT distinct_rows bigint,
	OUT out_of_order bigint, OUT not_returned bigint)
LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM got), (SELECT count(DISTINCT id) FROM got),
		(WITH s AS (
			SELECT row_number() OVER (ORDER BY v <#> '{1:1}/10', id) AS n,
				v <#> '{1:1}/10' AS d
			FROM sc)
		 SELECT count(*) FROM got g JOIN s USING (n) WHERE g.d IS DISTINCT FROM s.d),
		(SELECT count(*) FROM sc WHERE id NOT IN (SELECT id FROM got))
$$;

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

DROP FUNCTION scan_with_changes(int, int);
DROP FUNCTION check_got();
DROP TABLE sc, sz;
RESET sparse_maxscore.initial_k;

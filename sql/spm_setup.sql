--
-- Helpers for the sparse_maxscore suites (spm_*), which run after this
-- file in the same database.
--
-- The contract they check (doc/design.md, "The contract"): an index scan
-- for ORDER BY v <#> q returns the rows a sequential scan followed by a sort
-- returns, in non-decreasing distance, NULL distances last; rows with equal
-- distances may come in any order.  So a comparison
--   * requires the same distance at every position (float8 equality: the
--     index and the operator compute distances bit for bit alike),
--   * requires every returned row to be a row the sequential scan returns
--     with that very distance, and no row twice,
--   * and so, with a LIMIT, accepts any of the tied rows at the cut.
--

-- sparse_maxscore indexes that the plan of a query scans (Index Scan
-- nodes), under the current settings
CREATE FUNCTION spm_plan_indexes(query text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	m text[];
	result text[] := '{}';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		m := regexp_match(line, 'Index Scan using (\S+) on ');
		IF m IS NOT NULL AND EXISTS (
				SELECT FROM pg_class c JOIN pg_am a ON a.oid = c.relam
				WHERE c.oid = to_regclass(m[1]) AND a.amname = 'sparse_maxscore') THEN
			result := result || m[1];
		END IF;
	END LOOP;
	RETURN result;
END $$;

-- does the plan of a query have a Sort node (other than an Incremental
-- Sort), which would hide the order the index returns?
CREATE FUNCTION spm_plan_sorts(query text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line ~ '^\s*(->\s+)?Sort\s*$' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;

-- The tie-aware comparison.  (tg, ti, td): the rows under test in the
-- order they came, as (group, id, distance); (rg, ri, rd): every row of
-- the reference, in any order.  Groups are compared separately: they are
-- the outer rows of a LATERAL join, or a single group 0.  lim: the LIMIT
-- applied to each group of the rows under test, NULL for none.  Returns
-- NULL, or a description of the first difference.
-- No merge joins: the planner estimates 10 rows for each unnest, and from
-- 18 on it knows the CTEs come out sorted by g; a merge join on g alone,
-- with k or id left to a join filter, compares every row of a group with
-- every other (30000 rows: minutes).
CREATE FUNCTION spm_diff(tg bigint[], ti bigint[], td float8[],
	rg bigint[], ri bigint[], rd float8[], lim bigint)
RETURNS text LANGUAGE sql SET enable_mergejoin = off AS $$
	WITH t AS (
		SELECT g, id, d, row_number() OVER (PARTITION BY g ORDER BY n) AS k
		FROM unnest(tg, ti, td) WITH ORDINALITY AS u(g, id, d, n)
	), r AS (
		SELECT g, id, d, row_number() OVER (PARTITION BY g ORDER BY d NULLS LAST) AS k
		FROM unnest(rg, ri, rd) AS u(g, id, d)
	), rc AS (
		SELECT g, count(*) AS n FROM r GROUP BY g
	), tc AS (
		SELECT g, count(*) AS n FROM t GROUP BY g
	), problems AS (
		-- as many rows as the reference has, up to the LIMIT
		SELECT 1 AS o, g, 0::bigint AS k,
			format('group %s: %s rows, expected %s', g, coalesce(tc.n, 0),
				least(lim, coalesce(rc.n, 0))) AS msg
		FROM rc FULL JOIN tc USING (g)
		WHERE coalesce(tc.n, 0) <> least(lim, coalesce(rc.n, 0))
		UNION ALL
		-- the reference's distance at every position
		SELECT 2, t.g, t.k,
			format('group %s row %s: id %s at distance %s, expected distance %s',
				t.g, t.k, t.id, coalesce(t.d::text, 'NULL'),
				CASE WHEN r.k IS NULL THEN 'none' ELSE coalesce(r.d::text, 'NULL') END)
		FROM t LEFT JOIN r ON r.g = t.g AND r.k = t.k
		WHERE r.k IS NULL OR t.d IS DISTINCT FROM r.d
		UNION ALL
		-- no row twice
		SELECT 3, g, min(k),
			format('group %s: id %s returned %s times', g, id, count(*))
		FROM t GROUP BY g, id HAVING count(*) > 1
		UNION ALL
		-- only rows the reference has at that distance
		SELECT 4, t.g, t.k,
			format('group %s row %s: id %s at distance %s is not in the reference at that distance',
				t.g, t.k, t.id, coalesce(t.d::text, 'NULL'))
		FROM t
		WHERE NOT EXISTS (SELECT FROM r
			WHERE r.g = t.g AND r.id = t.id AND r.d IS NOT DISTINCT FROM t.d)
	)
	SELECT msg FROM problems ORDER BY o, g, k LIMIT 1
$$;

-- The rows of query (columns g, id, d) as three arrays, in the order they
-- came.
CREATE FUNCTION spm_rows(query text, OUT g bigint[], OUT id bigint[], OUT d float8[])
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	g := '{}';
	id := '{}';
	d := '{}';
	FOR r IN EXECUTE query LOOP
		g := g || r.g::bigint;
		id := id || r.id::bigint;
		d := d || r.d::float8;
	END LOOP;
END $$;

-- Run test_query with index scans forced (it must scan a sparse_maxscore
-- index and must not sort), run ref_query with index scans disabled (it
-- must not scan one), and compare.  Both return columns g, id, d.
-- Returns 'ok: N rows' or the first difference.
CREATE FUNCTION spm_compare(test_query text, ref_query text, lim bigint DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	tg bigint[];
	ti bigint[];
	td float8[];
	rg bigint[];
	ri bigint[];
	rd float8[];
	old_seqscan text := current_setting('enable_seqscan');
	old_indexscan text := current_setting('enable_indexscan');
	msg text;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	IF cardinality(spm_plan_indexes(test_query)) = 0 THEN
		RETURN 'the query under test does not scan a sparse_maxscore index';
	END IF;
	IF spm_plan_sorts(test_query) THEN
		RETURN 'the query under test sorts';
	END IF;
	SELECT * INTO tg, ti, td FROM spm_rows(test_query);

	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	IF cardinality(spm_plan_indexes(ref_query)) > 0 THEN
		RETURN 'the reference scans a sparse_maxscore index';
	END IF;
	SELECT * INTO rg, ri, rd FROM spm_rows(ref_query);

	PERFORM set_config('enable_seqscan', old_seqscan, true);
	PERFORM set_config('enable_indexscan', old_indexscan, true);
	msg := spm_diff(tg, ti, td, rg, ri, rd, lim);
	RETURN coalesce(msg, format('ok: %s rows', cardinality(ti)));
END $$;

-- Like spm_compare, for a test query whose plan EXPLAIN cannot show (the
-- index scan runs inside a function): instead of the plan, check that
-- running it scanned index idx exactly once.
CREATE FUNCTION spm_compare_scanned(test_query text, ref_query text, lim bigint, idx regclass)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	scans bigint;
	tg bigint[];
	ti bigint[];
	td float8[];
	rg bigint[];
	ri bigint[];
	rd float8[];
	old_indexscan text := current_setting('enable_indexscan');
	msg text;
BEGIN
	scans := pg_stat_get_xact_numscans(idx);
	SELECT * INTO tg, ti, td FROM spm_rows(test_query);
	IF pg_stat_get_xact_numscans(idx) <> scans + 1 THEN
		RETURN format('%s scans of %s instead of one', pg_stat_get_xact_numscans(idx) - scans, idx);
	END IF;

	PERFORM set_config('enable_indexscan', 'off', true);
	IF cardinality(spm_plan_indexes(ref_query)) > 0 THEN
		RETURN 'the reference scans a sparse_maxscore index';
	END IF;
	SELECT * INTO rg, ri, rd FROM spm_rows(ref_query);
	PERFORM set_config('enable_indexscan', old_indexscan, true);
	msg := spm_diff(tg, ti, td, rg, ri, rd, lim);
	RETURN coalesce(msg, format('ok: %s rows', cardinality(ti)));
END $$;

-- The usual case: query returns (id, d) and ends with ORDER BY v <#> q;
-- it runs with the LIMIT lim through the index and without a LIMIT as
-- the reference.
CREATE FUNCTION spm_check(query text, lim bigint DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
	SELECT spm_compare(
		format('SELECT 0 AS g, id, d FROM (%s%s) s', query, ' LIMIT ' || lim),
		format('SELECT 0 AS g, id, d FROM (%s) s', query),
		lim)
$$;

-- The rows of query (id, d), numbered in the order they came; the plan
-- must scan a sparse_maxscore index (under the current settings).
CREATE FUNCTION spm_index_run(query text)
RETURNS TABLE (n bigint, id bigint, d float8) LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	IF cardinality(spm_plan_indexes(query)) = 0 THEN
		RAISE EXCEPTION 'no sparse_maxscore index scan in the plan of: %', query;
	END IF;
	n := 0;
	FOR r IN EXECUTE query LOOP
		n := n + 1;
		id := r.id;
		d := r.d;
		RETURN NEXT;
	END LOOP;
END $$;

-- The same rows grouped by distance, for hand-checked expectations: each
-- distance once, in the order the groups came, with the positions its rows
-- took (first-last) and their ids (sorted, since ties may come in any
-- order).  Disjoint position ranges mean each group came in one piece.
CREATE FUNCTION spm_index_groups(query text)
RETURNS TABLE (d float8, pos text, ids bigint[]) LANGUAGE sql AS $$
	SELECT d, min(n) || '-' || max(n), array_agg(id ORDER BY id)
	FROM spm_index_run(query)
	GROUP BY d
	ORDER BY min(n)
$$;

-- A random vector of dims dimensions with up to nnz elements (repeated
-- indices collapse), on indices 1 .. maxterm skewed towards small ones (so
-- that some posting lists are long); weights negative with probability
-- negfrac, and drawn from {0.5, 1, 1.5, 2} if tied (exact ties), else
-- from [0.01, 2.01).  Deterministic after setseed().
CREATE FUNCTION spm_rand_sv(dims int, nnz int, maxterm int DEFAULT NULL,
	negfrac float8 DEFAULT 0, tied boolean DEFAULT false)
RETURNS sparsevec LANGUAGE sql VOLATILE AS $$
	SELECT to_sparsevec(coalesce(array_agg(i ORDER BY i), '{}'),
		coalesce(array_agg(w ORDER BY i), '{}'), dims)
	FROM (
		SELECT DISTINCT ON (i) i, w
		FROM (
			SELECT 1 + floor(coalesce(maxterm, dims) * random() ^ 2)::int AS i,
				((CASE WHEN random() < negfrac THEN -1 ELSE 1 END) *
				 (CASE WHEN tied THEN (1 + floor(random() * 4)) / 2
					ELSE 0.01 + 2 * random() END))::real AS w
			FROM generate_series(1, nnz)
		) e
		ORDER BY i, w
	) e2
$$;

-- a self-test of the comparison on hand-made rows (reference: ids 1, 2, 3
-- at distance -1, 4 at 0, 5 NULL): ties in any order and any tied rows at
-- a LIMIT cut pass; a wrong distance, a missing row, a duplicate, a row
-- from another distance, an unknown row and a mix-up of groups fail
CREATE FUNCTION spm_diff_demo(ti bigint[], td float8[], lim bigint)
RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(spm_diff(array_fill(0::bigint, ARRAY[cardinality(ti)]), ti, td,
		'{0,0,0,0,0}', '{1,2,3,4,5}', '{-1,-1,-1,0,NULL}', lim), 'no difference')
$$;
SELECT spm_diff_demo('{3,1,2,4,5}', '{-1,-1,-1,0,NULL}', NULL) AS ties_any_order;
SELECT spm_diff_demo('{3,1}', '{-1,-1}', 2) AS any_tied_rows_at_cut;
SELECT spm_diff_demo('{2,1,3,4,5}', '{-1,-1,-1,0,NULL}', 10) AS limit_beyond_rows;
SELECT spm_diff_demo('{2,1,4}', '{-1,-1,0}', 3) AS wrong_distance;
SELECT spm_diff_demo('{2,1,3,4}', '{-1,-1,-1,0}', NULL) AS missing_row;
SELECT spm_diff_demo('{2,1,3,4,5,4}', '{-1,-1,-1,0,NULL,0}', NULL) AS extra_row;
SELECT spm_diff_demo('{1,1}', '{-1,-1}', 2) AS duplicate;
SELECT spm_diff_demo('{1,4}', '{-1,-1}', 2) AS row_from_other_distance;
SELECT spm_diff_demo('{1,6}', '{-1,-1}', 2) AS unknown_row;
SELECT spm_diff_demo('{1,2,3,5,4}', '{-1,-1,-1,NULL,0}', NULL) AS nulls_not_last;
SELECT coalesce(spm_diff('{1,1,2,2}', '{7,8,7,8}', '{-2,-1,-3,-1}',
	'{2,1,2,1}', '{8,8,7,7}', '{-1,-1,-3,-2}', 2), 'no difference') AS groups;
SELECT coalesce(spm_diff('{1,1,2,2}', '{7,8,7,8}', '{-2,-1,-3,-1}',
	'{2,1,2,1}', '{8,8,7,7}', '{-2,-1,-3,-2}', 2), 'no difference') AS groups_kept_apart;
DROP FUNCTION spm_diff_demo;
-- and the detector of Sort nodes
SELECT spm_plan_sorts('SELECT x FROM generate_series(1, 3) x ORDER BY x DESC') AS sort,
	spm_plan_sorts('SELECT x FROM generate_series(1, 3) x') AS no_sort;

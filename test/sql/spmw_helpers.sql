--
-- SQL helpers of the write-path tests, shared by sql/spmw_setup.sql (which
-- includes this file) and the TAP tests (test/perl/SpmwTest.pm reads it).
--

-- A deterministic vector: up to nnz distinct indices in [1, dims] drawn
-- from hashes of (seed, j), weights in {0.25, 0.5, ..., 2} (many ties),
-- negative for about a fraction neg of them.  nnz = 0 gives an empty vector.
CREATE FUNCTION spmw_vec(seed bigint, nnz int, dims int, neg float8 DEFAULT 0)
RETURNS sparsevec LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT to_sparsevec(coalesce(array_agg(i ORDER BY i), '{}'),
		coalesce(array_agg(w ORDER BY i), '{}'), dims)
	FROM (
		SELECT DISTINCT ON (i) i, w FROM (
			SELECT 1 + (hashint8(seed * 1000003 + j) & 2147483647) % dims AS i,
				((1 + (hashint8(seed * 7919 + j * 31 + 1) & 2147483647) % 8) / 4.0
				 * CASE WHEN (hashint8(seed * 104729 + j * 17 + 2) & 1023) < neg * 1024
					THEN -1 ELSE 1 END)::real AS w
			FROM generate_series(1, nnz) j) s
		ORDER BY i, w) s2
$$;

-- The queries the suites compare with: six ordinary ones (one with
-- negative weights), an empty one, and one on indices 1..3 only.
CREATE FUNCTION spmw_queries(dims int) RETURNS sparsevec[]
LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT array_agg(q ORDER BY k) FROM (
		SELECT k, spmw_vec(100000 + k, 4 + 3 * k, dims, CASE WHEN k = 3 THEN 0.4 ELSE 0 END) AS q
		FROM generate_series(1, 6) k
		UNION ALL SELECT 7, to_sparsevec('{}', '{}', dims)
		UNION ALL SELECT 8, to_sparsevec('{1,2,3}', '{1,0.5,-0.25}', dims)) s
$$;

-- The comparison: (ti, td) the rows under test in the order they came,
-- (ri, rd) every row of the reference in any order, lim the LIMIT (NULL:
-- none).  Returns NULL, or the first difference.
CREATE FUNCTION spmw_cmp(ti bigint[], td float8[], ri bigint[], rd float8[], lim int)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	WITH t AS (
		SELECT id, d, k FROM unnest(ti, td) WITH ORDINALITY AS u(id, d, k)
	), r AS (
		SELECT id, d, row_number() OVER (ORDER BY d NULLS LAST) AS k
		FROM unnest(ri, rd) AS u(id, d)
	), problems AS (
		SELECT 1 AS o, 0::bigint AS k,
			format('%s rows, expected %s', cardinality(ti),
				coalesce(least(lim, cardinality(ri)), cardinality(ri))) AS msg
		WHERE cardinality(ti) <> coalesce(least(lim, cardinality(ri)), cardinality(ri))
		UNION ALL
		SELECT 2, t.k, format('row %s: id %s at distance %s, expected distance %s',
			t.k, t.id, coalesce(t.d::text, 'NULL'),
			CASE WHEN r.k IS NULL THEN 'none' ELSE coalesce(r.d::text, 'NULL') END)
		FROM t LEFT JOIN r ON r.k = t.k
		WHERE r.k IS NULL OR t.d IS DISTINCT FROM r.d
		UNION ALL
		SELECT 3, min(k), format('id %s returned %s times', id, count(*))
		FROM t GROUP BY id HAVING count(*) > 1
		UNION ALL
		SELECT 4, t.k, format('row %s: id %s at distance %s is not a row at that distance',
			t.k, t.id, coalesce(t.d::text, 'NULL'))
		FROM t WHERE NOT EXISTS (SELECT FROM r WHERE r.id = t.id AND r.d IS NOT DISTINCT FROM t.d)
	)
	SELECT p.msg FROM problems p ORDER BY o, k LIMIT 1
$$;

-- Compare one query on table tbl (columns id, v; one sparse_maxscore
-- index on v) between an index scan (forced; the plan must use the index
-- and must not sort) and a sequential scan.  q may be NULL (every
-- distance is NULL: any order).  Returns NULL if they agree, else the
-- first difference.
CREATE FUNCTION spmw_diff(tbl text, q sparsevec, lim int DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	-- a NULL constant would fold v <#> NULL into NULL and drop the ORDER BY
	qexpr text := CASE WHEN q IS NULL THEN '(SELECT $1)' ELSE '$1' END;
	sql text := format('SELECT id::bigint AS id, v <#> %s AS d FROM %s ORDER BY v <#> %s',
		qexpr, tbl, qexpr) || CASE WHEN lim IS NULL THEN '' ELSE ' LIMIT ' || lim END;
	old_seqscan text := current_setting('enable_seqscan');
	old_indexscan text := current_setting('enable_indexscan');
	old_bitmapscan text := current_setting('enable_bitmapscan');
	line text;
	scans boolean := false;
	sorts boolean := false;
	r record;
	ti bigint[] := '{}';
	td float8[] := '{}';
	ri bigint[];
	rd float8[];
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql USING q LOOP
		scans := scans OR line ~ 'Index Scan using \S+ on ';
		sorts := sorts OR line ~ '^\s*(->\s+)?Sort\M';
	END LOOP;
	IF NOT scans OR sorts THEN
		PERFORM set_config('enable_seqscan', old_seqscan, true);
		PERFORM set_config('enable_indexscan', old_indexscan, true);
		PERFORM set_config('enable_bitmapscan', old_bitmapscan, true);
		RETURN 'the plan does not scan the index in order';
	END IF;
	FOR r IN EXECUTE sql USING q LOOP
		ti := ti || r.id;
		td := td || r.d;
	END LOOP;

	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	EXECUTE format('SELECT coalesce(array_agg(id), ''{}''), coalesce(array_agg(v <#> $1), ''{}'') FROM %s', tbl)
		INTO ri, rd USING q;
	PERFORM set_config('enable_seqscan', old_seqscan, true);
	PERFORM set_config('enable_indexscan', old_indexscan, true);
	PERFORM set_config('enable_bitmapscan', old_bitmapscan, true);

	RETURN spmw_cmp(ti, td, ri, rd, lim);
END $$;

-- Compare every query of spmw_queries(dims), and a NULL query, with
-- LIMITs 1, 10, 100 and none.  Returns 'ok: N comparisons' or the first
-- difference (with the query number and LIMIT).
CREATE FUNCTION spmw_exact(tbl text, dims int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	qs sparsevec[] := spmw_queries(dims) || NULL::sparsevec;
	lims int[] := '{1,10,100,NULL}';
	n int := 0;
	msg text;
BEGIN
	FOR i IN 1 .. cardinality(qs) LOOP
		FOR j IN 1 .. cardinality(lims) LOOP
			msg := spmw_diff(tbl, qs[i], lims[j]);
			IF msg IS NOT NULL THEN
				RETURN format('query %s limit %s: %s', i, coalesce(lims[j]::text, 'none'), msg);
			END IF;
			n := n + 1;
		END LOOP;
	END LOOP;
	RETURN format('ok: %s comparisons', n);
END $$;

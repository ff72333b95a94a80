--
-- Helpers for the write-path suites (spmw_*), which run after this file in
-- the same database.  Objects are named spmw_* so that they do not meet the
-- read-path suites' helpers.
--
-- The contract (doc/design.md, "The contract"): an index scan for
-- ORDER BY v <#> q returns the rows a sequential scan followed by a sort
-- returns, in non-decreasing distance, NULL distances last, rows with equal
-- distance in any order.  So a comparison requires
--   * as many rows as the sequential scan has (up to the LIMIT),
--   * the sequential scan's distance at every position (float8 equality:
--     the index computes the operator's distances bit for bit),
--   * every row to be a row the sequential scan has at that distance,
--   * no row twice;
-- with a LIMIT, any of the rows tied at the cut may come.
--

\i test/sql/spmw_helpers.sql

-- sparse_maxscore_info without the columns that depend on page layout
CREATE FUNCTION spmw_info(idx regclass, OUT segments int, OUT documents bigint,
	OUT dead bigint, OUT nulls bigint, OUT postings bigint, OUT pending bigint,
	OUT pending_postings bigint, OUT dims int)
LANGUAGE sql AS $$
	SELECT segments, documents, dead_documents, null_documents, postings,
		pending_documents, pending_postings, dims
	FROM sparse_maxscore_info(idx)
$$;

-- sparse_maxscore_verify without the page counts
CREATE FUNCTION spmw_verify(idx regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT regexp_replace(sparse_maxscore_verify(idx), ' pages=\d+ free=\d+', '')
$$;

-- Run a statement; 'ok', or the SQLSTATE and message of its error.
CREATE FUNCTION spmw_try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- sanity checks of the helpers themselves: the comparison accepts ties
-- in any order and any tied rows at the cut of a LIMIT, and rejects the
-- rest
SELECT c, coalesce(spmw_cmp(ti, td, ri, rd, lim), 'agree') AS result
FROM (VALUES
	('same', '{1,2,3}'::bigint[], '{-2,-1,-1}'::float8[], '{3,2,1}'::bigint[], '{-1,-1,-2}'::float8[], NULL::int),
	('ties swapped', '{1,3,2}', '{-2,-1,-1}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('limit cuts a tie', '{1,3}', '{-2,-1}', '{3,2,1}', '{-1,-1,-2}', 2),
	('nulls last', '{1,4}', '{-2,NULL}', '{4,1}', '{NULL,-2}', NULL),
	('empty', '{}', '{}', '{}', '{}', 10),
	('wrong order', '{2,1,3}', '{-1,-2,-1}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('missing', '{1,2}', '{-2,-1}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('extra', '{1,2,3,4}', '{-2,-1,-1,0}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('twice', '{1,2,2}', '{-2,-1,-1}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('stranger', '{1,2,4}', '{-2,-1,-1}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('wrong distance', '{1,2,3}', '{-2,-1,-0.5}', '{3,2,1}', '{-1,-1,-2}', NULL),
	('short of the limit', '{1}', '{-2}', '{3,2,1}', '{-1,-1,-2}', 2)) AS x(c, ti, td, ri, rd, lim);

SELECT nnz(spmw_vec(1, 20, 200)) BETWEEN 15 AND 20 AS ok,
	spmw_vec(1, 20, 200) = spmw_vec(1, 20, 200) AS deterministic,
	nnz(spmw_vec(1, 0, 200)) AS empty,
	(SELECT count(*) FROM unnest(spmw_queries(50)) q WHERE dims(q) = 50) AS queries;
SELECT count(*) FILTER (WHERE w < 0) > 0 AS has_negative, count(*) FILTER (WHERE w > 0) > 0 AS has_positive
FROM unnest(spmw_vec(3, 200, 1000, 0.5)::real[]) w WHERE w <> 0;

-- sparsevec 0.2.0 -> 0.3.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.3.0'" to load this file. \quit

-- Each topic of 0.3.0 adds a block of its own below (doc/versions.md).

------------------------------------------------------------------------
-- issue 40, findings: sparse_maxscore_last_scan()
------------------------------------------------------------------------

-- A thirteenth column, pending_scored: the pending-list documents the scan
-- scored by brute force.  Appended in place, in the function's pg_proc row,
-- as 0.1.0 -> 0.2.0 does (see there): a user's view that selects from the
-- function keeps its columns and goes on working, where DROP FUNCTION
-- would fail (or take the view with it).  The function now returns NULL
-- while the session has run no index scan (the library decides that, for
-- every version's declaration).

UPDATE pg_catalog.pg_proc
SET proallargtypes = pg_catalog.array_fill('pg_catalog.int8'::pg_catalog.regtype::pg_catalog.oid, ARRAY[13]),
	proargmodes = pg_catalog.array_fill('o'::"char", ARRAY[13]),
	proargnames = ARRAY['rounds', 'postings_decoded', 'blocks_decoded',
		'blocks_skipped', 'windows', 'windows_skipped', 'candidates_scored',
		'rows_returned', 'segments_exhaustive', 'segments_maxscore',
		'segments_ranges', 'segments_ranges_gave_up', 'pending_scored']
WHERE proname = 'sparse_maxscore_last_scan' AND pronargs = 0
  AND pronamespace = (SELECT extnamespace FROM pg_catalog.pg_extension
					  WHERE extname = 'sparsevec');

COMMENT ON FUNCTION sparse_maxscore_last_scan() IS
	'work counters of the most recent sparse_maxscore index scan in this session; NULL if it ran none';

-- sparsevec 0.1.0 -> 0.2.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.2.0'" to load this file. \quit

-- 0.1.0 is sparsevec--0.1.0.sql as of commit 7929f06.  0.2.0 changes one
-- object: sparse_maxscore_last_scan() reports which algorithm scored each
-- segment (four columns more).  The rest of what 0.2.0 marks is the
-- library: index format 4 (packed docid deltas, range maxima and a forward
-- copy, 16-bit terms), range pruning, the reloptions ranges and reorder,
-- the GUC sparse_maxscore.algorithm.  The library reads every format an
-- index of 0.1.0 may have been written in (1 to 4), so indexes built under
-- 0.1.0 keep working after the update; new segments are written in the
-- library's current format, and REINDEX rewrites old ones
-- (doc/versions.md).
--
-- The four columns are appended to the function in place, in its pg_proc
-- row: neither CREATE OR REPLACE FUNCTION (it refuses other OUT columns)
-- nor DROP FUNCTION (it refuses while a user's view selects from the
-- function, and would take the view with CASCADE) can.  A view keeps the
-- columns it was created with (their positions do not change) and goes on
-- working; sql/sparsevec_upgrade_view.sql tests it.  The library fills as
-- many columns as the function declares.
--
-- A later version that changes objects adds its statements to its own
-- update script; sql/sparsevec_upgrade.sql compares an updated install
-- with a fresh one object by object.

UPDATE pg_catalog.pg_proc
SET proallargtypes = pg_catalog.array_fill('pg_catalog.int8'::pg_catalog.regtype::pg_catalog.oid, ARRAY[12]),
	proargmodes = pg_catalog.array_fill('o'::"char", ARRAY[12]),
	proargnames = ARRAY['rounds', 'postings_decoded', 'blocks_decoded',
		'blocks_skipped', 'windows', 'windows_skipped', 'candidates_scored',
		'rows_returned', 'segments_exhaustive', 'segments_maxscore',
		'segments_ranges', 'segments_ranges_gave_up']
WHERE proname = 'sparse_maxscore_last_scan' AND pronargs = 0
  AND pronamespace = (SELECT extnamespace FROM pg_catalog.pg_extension
					  WHERE extname = 'sparsevec');

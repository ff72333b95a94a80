-- sparsevec 0.1.0 -> 0.2.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.2.0'" to load this file. \quit

-- 0.1.0 is sparsevec--0.1.0.sql as of commit 7929f06.  0.2.0 changes one
-- object: sparse_maxscore_last_scan() reports which algorithm scored each
-- segment (four columns more; the OUT columns of a function cannot be
-- changed in place, so it is dropped and created again).  The rest of
-- what 0.2.0 marks is the library: index format 4 (packed docid deltas,
-- range maxima and a forward copy, 16-bit terms), range pruning, the
-- reloptions ranges and reorder, the GUC sparse_maxscore.algorithm.  The
-- library reads every format an index of 0.1.0 may have been written in
-- (1 to 4), so indexes built under 0.1.0 keep working after the update;
-- new segments are written in format 4, and REINDEX rewrites old ones
-- (doc/versions.md).
--
-- A later version that changes objects adds its statements to its own
-- update script; sql/sparsevec_upgrade.sql compares an updated install
-- with a fresh one object by object.

DROP FUNCTION sparse_maxscore_last_scan();

CREATE FUNCTION sparse_maxscore_last_scan(
	OUT rounds bigint,
	OUT postings_decoded bigint,
	OUT blocks_decoded bigint,
	OUT blocks_skipped bigint,
	OUT windows bigint,
	OUT windows_skipped bigint,
	OUT candidates_scored bigint,
	OUT rows_returned bigint,
	OUT segments_exhaustive bigint,
	OUT segments_maxscore bigint,
	OUT segments_ranges bigint,
	OUT segments_ranges_gave_up bigint)
	RETURNS record
	AS 'MODULE_PATHNAME', 'spm_last_scan_sql'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION sparse_maxscore_last_scan() IS
	'work counters of the most recent sparse_maxscore index scan in this session';

-- sparsevec 0.1.0 -> 0.2.0
--
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sparsevec UPDATE TO '0.2.0'" to load this file. \quit

-- 0.2.0 has the SQL objects of 0.1.0 (sparsevec--0.1.0.sql as of commit
-- 7929f06): no object is added, dropped or changed, so this script has no
-- statement.  What 0.2.0 marks is the library: index format 4 (packed
-- docid deltas, range maxima and a forward copy, 16-bit terms), range
-- pruning, the reloptions ranges and reorder, the GUC
-- sparse_maxscore.algorithm.  The library reads every format an index of
-- 0.1.0 may have been written in (1 to 4), so indexes built under 0.1.0
-- keep working after the update; new segments are written in format 4,
-- and REINDEX rewrites old ones (doc/versions.md).
--
-- A later version that changes objects adds its statements to its own
-- update script; sql/sparsevec_upgrade.sql compares an updated install
-- with a fresh one object by object.

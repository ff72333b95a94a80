--
-- The settings (GUCs) of sparse_maxscore and the reloption
-- pending_list_limit (issue 40): what a session sees before and after the
-- library is loaded, the ranges (doc/reference.md "Settings"), and
-- session_preload_libraries, which makes them known from the start.
--
-- pg_regress starts this file in a new session that has not called any
-- function of the library yet (the extension was created by another
-- session): PostgreSQL does not know the settings, and takes any value
-- as a placeholder.
SELECT count(*) AS loaded FROM pg_settings WHERE name LIKE 'sparse_maxscore.%';
SHOW sparse_maxscore.initial_k;
SET sparse_maxscore.initial_k = 0;
SET sparse_maxscore.no_such_setting = 1;
SHOW sparse_maxscore.initial_k;
-- the first use of the type loads the library: the bad value and the
-- unknown name are dropped with a WARNING (PostgreSQL's rule for
-- placeholders), the setting keeps its default
SELECT '{1:1}/3'::sparsevec AS loads_the_library;
SHOW sparse_maxscore.initial_k;
SHOW sparse_maxscore.no_such_setting;

-- once loaded, a bad value or name is an ERROR at SET
\set VERBOSITY terse
SET sparse_maxscore.initial_k = 0;
SET sparse_maxscore.initial_k = 1000001;
SET sparse_maxscore.initial_k = 'many';
SET sparse_maxscore.algorithm = 'fast';
-- (the SQLSTATE only: from 18 on the message prints the range with its unit)
\set VERBOSITY sqlstate
SET sparse_maxscore.pending_list_limit = '63kB';
SET sparse_maxscore.pending_list_limit = -1;
\set VERBOSITY terse
SET sparse_maxscore.no_such_setting = 1;
-- not a superuser: the debug setting is refused
CREATE ROLE regress_spm_settings LOGIN;
SET ROLE regress_spm_settings;
SET sparse_maxscore.debug_round_delay = 10;
RESET ROLE;
\set VERBOSITY default
-- the extremes are accepted
SET sparse_maxscore.initial_k = 1;
SET sparse_maxscore.initial_k = 1000000;
SET sparse_maxscore.pending_list_limit = '64kB';
SET sparse_maxscore.pending_list_limit = '2147483647kB';
SHOW sparse_maxscore.pending_list_limit;
RESET ALL;

-- every setting with its type, default, unit and range: what
-- doc/reference.md "Settings" and README "Settings (GUCs)" state
SELECT name, vartype, boot_val, unit, min_val, max_val, enumvals, context
FROM pg_settings WHERE name LIKE 'sparse_maxscore.%' ORDER BY name;

-- session_preload_libraries (set by a superuser for a role or a
-- database) loads the library when the session starts: a bad value is an
-- ERROR from the first statement on
ALTER ROLE regress_spm_settings SET session_preload_libraries = 'sparsevec';
SELECT current_user AS regress_user \gset
\c - regress_spm_settings
SELECT count(*) AS loaded FROM pg_settings WHERE name LIKE 'sparse_maxscore.%';
\set VERBOSITY terse
SET sparse_maxscore.initial_k = 0;
\set VERBOSITY default
SET sparse_maxscore.initial_k = 50;
SHOW sparse_maxscore.initial_k;
\c - :regress_user
DROP ROLE regress_spm_settings;

-- the reloption pending_list_limit: -1 (the default) means the setting
-- sparse_maxscore.pending_list_limit, and may be written explicitly;
-- below 64 (kB) is refused, at CREATE INDEX and at ALTER INDEX
CREATE TABLE spm_set (id int, v sparsevec(20)) WITH (autovacuum_enabled = off);
INSERT INTO spm_set SELECT i, ('{' || (1 + i % 20) || ':' || i || '}/20')::sparsevec
FROM generate_series(1, 100) i;
CREATE INDEX spm_set_a ON spm_set USING sparse_maxscore (v) WITH (pending_list_limit = -1);
CREATE INDEX spm_set_b ON spm_set USING sparse_maxscore (v) WITH (pending_list_limit = 64);
CREATE INDEX spm_set_c ON spm_set USING sparse_maxscore (v) WITH (pending_list_limit = 63);
CREATE INDEX spm_set_c ON spm_set USING sparse_maxscore (v) WITH (pending_list_limit = 0);
CREATE INDEX spm_set_c ON spm_set USING sparse_maxscore (v) WITH (pending_list_limit = -2);
ALTER INDEX spm_set_b SET (pending_list_limit = -1);
ALTER INDEX spm_set_b SET (pending_list_limit = 10);
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'spm_set_%' ORDER BY 1;
-- -1 follows the setting: with the smallest setting, an insert that takes
-- the pending list past 64 kB flushes it into a segment
SET sparse_maxscore.pending_list_limit = '64kB';
INSERT INTO spm_set SELECT 100 + i, ('{' || (1 + i % 20) || ':' || i || '}/20')::sparsevec
FROM generate_series(1, 3000) i;
SELECT segments > 1 AS flushed, pending_documents < 3000 AS pending_cut
FROM sparse_maxscore_info('spm_set_a');
RESET sparse_maxscore.pending_list_limit;
SELECT spm_check($$SELECT id, v <#> '{1:1,7:2}/20' AS d FROM spm_set ORDER BY v <#> '{1:1,7:2}/20'$$, 10);
DROP TABLE spm_set;

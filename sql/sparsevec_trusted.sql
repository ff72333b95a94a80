--
-- The extension is trusted: a role without superuser but with CREATE on
-- the database can install it, into the default schema or another one.
-- Done in a scratch database so the suite's own copy is left alone.
--
\set regress_db :DBNAME
-- leftovers of an interrupted run
SET client_min_messages = warning;
DROP DATABASE IF EXISTS regression_spv_trusted;
DROP ROLE IF EXISTS regress_spv_user;
RESET client_min_messages;
CREATE ROLE regress_spv_user NOSUPERUSER;
CREATE DATABASE regression_spv_trusted;
\c regression_spv_trusted

-- without CREATE on the database: refused
SET ROLE regress_spv_user;
CREATE EXTENSION sparsevec;
RESET ROLE;

-- with it: works, and the role owns the extension
GRANT CREATE ON DATABASE regression_spv_trusted TO regress_spv_user;
SET ROLE regress_spv_user;
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
CREATE EXTENSION sparsevec;
SELECT extname, extowner::regrole, extnamespace::regnamespace, extrelocatable
FROM pg_extension WHERE extname = 'sparsevec';
SELECT '{1:1,3:2}/3'::sparsevec <#> '{1:1,2:1,3:1}/3' AS score;
-- the owner can drop it
DROP EXTENSION sparsevec;

-- into its own schema (how to install next to pgvector)
CREATE SCHEMA spv AUTHORIZATION regress_spv_user;
CREATE EXTENSION sparsevec SCHEMA spv;
SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'sparsevec';
SELECT '{1:1,2:2}/2'::spv.sparsevec OPERATOR(spv.<#>) '{1:3,2:4}/2';
SET search_path = spv, public;
CREATE TABLE spv.spv_trusted (v sparsevec(3));
INSERT INTO spv_trusted VALUES ('{1:1,3:2}/3'), ('{2:5}/3'), ('{}/3');
SELECT v, v <#> '{1:1,2:1,3:1}/3' AS score FROM spv_trusted ORDER BY score, v;
DROP TABLE spv_trusted;
RESET search_path;
-- the objects of a trusted extension belong to the bootstrap superuser, so
-- moving them to another schema takes a superuser
CREATE SCHEMA spv2 AUTHORIZATION regress_spv_user;
ALTER EXTENSION sparsevec SET SCHEMA spv2;
RESET ROLE;
ALTER EXTENSION sparsevec SET SCHEMA spv2;
SELECT '{1:1,2:2}/2'::spv2.sparsevec OPERATOR(spv2.<#>) '{1:3,2:4}/2';
SET ROLE regress_spv_user;
DROP EXTENSION sparsevec;
DROP SCHEMA spv, spv2;
RESET ROLE;

\c :regress_db
DROP DATABASE regression_spv_trusted;
DROP ROLE regress_spv_user;

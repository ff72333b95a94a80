--
-- Versions and the update path (doc/versions.md): an install of 0.1.0
-- with a sparse_maxscore index built under it, ALTER EXTENSION sparsevec
-- UPDATE to the default version, then
--   * the same extension objects, with the same definitions and comments,
--     as a fresh install of the default version,
--   * the index built under 0.1.0 answers as before, exactly, and takes
--     writes.
-- In a database of its own: DROP EXTENSION ... CASCADE below must not touch
-- the other suites' tables.
--
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS sparsevec_upgrade;
CREATE DATABASE sparsevec_upgrade;
\c sparsevec_upgrade
SET client_min_messages = warning;

SELECT name, version, installed FROM pg_available_extension_versions
WHERE name = 'sparsevec' ORDER BY version;
SELECT source, target, path FROM pg_extension_update_paths('sparsevec')
ORDER BY source, target;

CREATE EXTENSION sparsevec VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'sparsevec';

-- every member of the extension with what defines it: functions by their
-- signature, result, body symbol and attributes; operators by their
-- function; every object by its comment
CREATE TABLE ext_objects (how text, obj text, detail text);
CREATE FUNCTION ext_objects_now(how text) RETURNS bigint LANGUAGE sql AS $$
	INSERT INTO ext_objects
	SELECT how, pg_describe_object(d.classid, d.objid, d.objsubid),
		concat_ws(' | ',
			(SELECT concat_ws(' ', pg_get_function_identity_arguments(p.oid),
					pg_get_function_result(p.oid), p.prosrc, p.provolatile,
					p.proisstrict, p.proparallel, p.procost, p.prokind)
			 FROM pg_proc p WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid),
			(SELECT concat_ws(' ', o.oprcode, o.oprcom::regoperator, o.oprnegate::regoperator)
			 FROM pg_operator o WHERE d.classid = 'pg_operator'::regclass AND o.oid = d.objid),
			(SELECT concat_ws(' ', c.castfunc::regprocedure, c.castcontext, c.castmethod)
			 FROM pg_cast c WHERE d.classid = 'pg_cast'::regclass AND c.oid = d.objid),
			(SELECT concat_ws(' ', t.typinput, t.typoutput, t.typreceive, t.typsend,
					t.typmodin, t.typlen, t.typalign, t.typstorage)
			 FROM pg_type t WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid),
			obj_description(d.objid, d.classid::regclass::text))
	FROM pg_depend d
	WHERE d.refclassid = 'pg_extension'::regclass
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sparsevec')
	  AND d.deptype = 'e'
	  -- not the array type, which 18 records as a member too
	  -- (sparsevec_catalog); looked up here, not by a constant: the type
	  -- is dropped and created again below
	  AND NOT EXISTS (SELECT 1 FROM pg_type t
					  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
						AND t.typcategory = 'A');
	SELECT count(*) FROM ext_objects WHERE ext_objects.how = ext_objects_now.how;
$$;

-- a corpus with few ties, and an index built under 0.1.0
CREATE TABLE docs (id int PRIMARY KEY, v sparsevec(60));
INSERT INTO docs
SELECT i, ('{' || (1 + i % 7) || ':' || ((i * 37) % 101 + 1) / 10.0 ||
		   ',' || (8 + (i * 13) % 25) || ':' || ((i * 53) % 89 + 1) / 20.0 ||
		   ',' || (33 + (i * 29) % 25) || ':' || ((i * 71) % 97 + 1) / 30.0 || '}/60')::sparsevec
FROM generate_series(1, 2000) i;
INSERT INTO docs VALUES (2001, NULL), (2002, '{}/60');
CREATE INDEX docs_v_idx ON docs USING sparse_maxscore (v);
CREATE TABLE queries (qid int, q sparsevec(60));
INSERT INTO queries VALUES
	(1, '{1:1,9:0.5,30:2}/60'),
	(2, '{2:0.25,3:1.5,40:1,57:3}/60'),
	(3, '{1:-1,20:1}/60'),
	(4, '{60:1}/60');

-- the top 10 of every query through the index (distances and rows)
CREATE FUNCTION top10_by_index() RETURNS TABLE (qid int, ids int[], dists float8[])
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	RETURN QUERY
	SELECT x.qid, array_agg(r.id ORDER BY r.n), array_agg(r.d ORDER BY r.n)
	FROM queries x CROSS JOIN LATERAL
		(SELECT id, v <#> x.q AS d, row_number() OVER () AS n
		 FROM (SELECT id, v FROM docs ORDER BY v <#> x.q LIMIT 10) s) r
	GROUP BY x.qid;
END $$;

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY v <#> '{1:1}/60' LIMIT 10;
RESET enable_seqscan;
CREATE TABLE before_update AS SELECT * FROM top10_by_index();
SELECT ext_objects_now('0.1.0');

ALTER EXTENSION sparsevec UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'sparsevec';
SELECT ext_objects_now('updated');

-- the index built under 0.1.0: the same answers as before the update, and
-- as a sequential scan (distances in order; ties may swap rows)
SELECT b.qid, b.ids = a.ids AS same_rows, b.dists = a.dists AS same_dists
FROM before_update b JOIN top10_by_index() a USING (qid) ORDER BY qid;
SELECT x.qid,
	(SELECT array_agg(d ORDER BY d NULLS LAST) FROM
		(SELECT v <#> x.q AS d FROM docs ORDER BY 1 NULLS LAST LIMIT 10) s)
	= a.dists AS seqscan_agrees
FROM queries x JOIN top10_by_index() a USING (qid) ORDER BY qid;

-- writes after the update: inserts, a flush into a segment, a delete
INSERT INTO docs SELECT 3000 + i, ('{1:' || i || ',30:1}/60')::sparsevec
FROM generate_series(1, 50) i;
SELECT sparse_maxscore_flush('docs_v_idx');
DELETE FROM docs WHERE id % 10 = 0;
SET enable_seqscan = off;
SELECT array_agg(id) AS top5 FROM
	(SELECT id FROM docs ORDER BY v <#> '{1:1}/60' LIMIT 5) s;
RESET enable_seqscan;
SELECT array_agg(id) AS top5_seqscan FROM
	(SELECT id FROM docs ORDER BY v <#> '{1:1}/60' LIMIT 5) s;
SELECT sparse_maxscore_verify('docs_v_idx') LIKE 'segments=2 %' AS verify_passes;
SELECT segments, documents FROM sparse_maxscore_info('docs_v_idx');

-- a fresh install of the default version has the same objects
DROP EXTENSION sparsevec CASCADE;
CREATE EXTENSION sparsevec;
SELECT extversion FROM pg_extension WHERE extname = 'sparsevec';
SELECT ext_objects_now('fresh');
-- the members that differ between the updated and the fresh install: none
(SELECT obj, detail FROM ext_objects WHERE how = 'updated'
 EXCEPT SELECT obj, detail FROM ext_objects WHERE how = 'fresh')
UNION ALL
(SELECT obj, detail FROM ext_objects WHERE how = 'fresh'
 EXCEPT SELECT obj, detail FROM ext_objects WHERE how = 'updated');
-- and no object of 0.1.0 was lost on the way
SELECT obj FROM ext_objects WHERE how = '0.1.0'
EXCEPT SELECT obj FROM ext_objects WHERE how = 'updated';

\c :regress_db
DROP DATABASE sparsevec_upgrade;

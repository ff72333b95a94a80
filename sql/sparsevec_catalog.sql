--
-- Catalog properties of the extension's objects.
--

-- the type: variable length, int4 alignment, STORAGE external (as pgvector),
-- with binary I/O and a typmod
SELECT typname, typlen, typalign, typstorage, typinput, typoutput, typreceive,
	typsend, typmodin, typmodout
FROM pg_type WHERE oid = 'sparsevec'::regtype;

-- every object of the extension has a comment (but the array type,
-- sparsevec[], which 18 also records as a member)
SELECT pg_describe_object(classid, objid, objsubid) AS missing_comment
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass
	AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sparsevec')
	AND deptype = 'e'
	AND obj_description(objid, classid::regclass::text) IS NULL
	AND NOT (classid = 'pg_type'::regclass AND objid = 'sparsevec[]'::regtype)
ORDER BY 1;

-- every C function that takes or returns sparsevec is IMMUTABLE STRICT
-- PARALLEL SAFE and has a spv_-prefixed symbol
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel, p.prosrc
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
WHERE d.refclassid = 'pg_extension'::regclass
	AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sparsevec')
	AND d.deptype = 'e'
	AND ('sparsevec'::regtype = ANY (p.proargtypes) OR p.prorettype = 'sparsevec'::regtype)
	AND (p.provolatile <> 'i' OR NOT p.proisstrict OR p.proparallel <> 's'
		OR p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'c')
		OR p.prosrc NOT LIKE 'spv\_%')
	AND p.proname NOT LIKE 'bm25\_%';  -- listed below

-- the functions, operators and casts on sparsevec
SELECT p.oid::regprocedure AS function, p.prorettype::regtype AS returns, p.prosrc AS symbol
FROM pg_proc p
WHERE ('sparsevec'::regtype = ANY (p.proargtypes) OR p.prorettype = 'sparsevec'::regtype)
	AND p.proname NOT LIKE 'bm25\_%'
ORDER BY 1::text;
-- the BM25 functions: those that read the vocabulary table are STABLE
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel, p.prosrc,
	obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p WHERE p.proname LIKE 'bm25\_%' ORDER BY 1;
SELECT o.oid::regoperator AS operator, o.oprcode AS function, o.oprcom::regoperator AS commutator,
	o.oprnegate::regoperator AS negator
FROM pg_operator o
WHERE o.oprleft = 'sparsevec'::regtype OR o.oprright = 'sparsevec'::regtype
ORDER BY 1::text;
SELECT c.castsource::regtype AS source, c.casttarget::regtype AS target,
	c.castfunc::regprocedure AS function,
	CASE c.castcontext WHEN 'i' THEN 'implicit' WHEN 'a' THEN 'assignment' ELSE 'explicit' END AS context
FROM pg_cast c
WHERE c.castsource = 'sparsevec'::regtype OR c.casttarget = 'sparsevec'::regtype
ORDER BY 1::text, 2::text;
SELECT opcname, amname, opcdefault
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE opcintype = 'sparsevec'::regtype AND amname = 'btree';

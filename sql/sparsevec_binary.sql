--
-- Binary I/O: pgvector's wire format, big-endian
--   int32 dims, int32 nnz, int32 unused (0),
--   nnz x int32 index (0-based), nnz x float4 value
-- sparsevec_recv runs every check text input runs and also rejects zeros.
--

-- send: the exact bytes
SELECT sparsevec_send('{1:1.5,3:-2}/5');
SELECT sparsevec_send('{}/3');
SELECT sparsevec_send('{1000000000:1}/1000000000');
SELECT sparsevec_send('{1:1e-45,2:-3.4028235e38}/2');

-- A scratch file in the data directory (server-side COPY needs an absolute
-- path); removed at the end.
SELECT current_setting('data_directory') || '/spv_binary_' || pg_backend_pid() || '.bin'
	AS binfile \gset

-- COPY ... (FORMAT binary) round trip through send and recv
CREATE TABLE spv_bin (id int, v sparsevec);
INSERT INTO spv_bin VALUES
	(1, '{}/3'), (2, '{1:1,2:2,3:3}/3'), (3, NULL), (4, '{1:-1.5,30522:0.25}/30522'),
	(5, '{1:1e-45,2:3.4028235e38,3:-3.4028235e38}/3'),
	(6, '{1000000000:1}/1000000000'), (7, '{17:0.1,18:0.2,19:0.3}/100');
CREATE TABLE spv_bin2 (LIKE spv_bin);
COPY spv_bin TO :'binfile' (FORMAT binary);
COPY spv_bin2 FROM :'binfile' (FORMAT binary);
SELECT * FROM spv_bin2 ORDER BY id;
-- the same values, compared with = and as text
SELECT count(*) AS rows,
	count(*) FILTER (WHERE a.v = b.v AND a.v::text = b.v::text) AS equal,
	count(*) FILTER (WHERE a.v IS NULL AND b.v IS NULL) AS null
FROM spv_bin a JOIN spv_bin2 b USING (id);
-- into a column with a typmod
CREATE TABLE spv_bin3 (id int, v sparsevec(3));
COPY spv_bin3 FROM :'binfile' (FORMAT binary);
DELETE FROM spv_bin WHERE dims(v) <> 3;
COPY spv_bin TO :'binfile' (FORMAT binary);
COPY spv_bin3 FROM :'binfile' (FORMAT binary);
SELECT * FROM spv_bin3 ORDER BY id;
DROP TABLE spv_bin, spv_bin2, spv_bin3;

--
-- recv on hand-made messages.  A one-column binary COPY file holding a
-- bytea field is, byte for byte, a file holding a sparsevec field with the
-- same bytes, so recv sees exactly the message below.
--
CREATE TABLE spv_recv (v sparsevec);
CREATE TABLE spv_recv4 (v sparsevec(4));
CREATE FUNCTION pg_temp.recv(hex text, tbl text DEFAULT 'spv_recv') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	path text := current_setting('data_directory') || '/spv_binary_' || pg_backend_pid() || '.bin';
	result text;
	state text;
	msg text;
	detail text;
BEGIN
	EXECUTE format('COPY (SELECT decode(%L, ''hex'')) TO %L (FORMAT binary)', hex, path);
	EXECUTE format('TRUNCATE %I', tbl);
	EXECUTE format('COPY %I FROM %L (FORMAT binary)', tbl, path);
	EXECUTE format('SELECT v::text FROM %I', tbl) INTO result;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL;
	RETURN state || ' ' || msg || CASE WHEN detail <> '' THEN ' | ' || detail ELSE '' END;
END
$$;

-- the helper can tell accepted from rejected
SELECT pg_temp.recv(encode(sparsevec_send('{1:1.5,3:-2}/5'), 'hex'));

SELECT what, pg_temp.recv(hex) AS result
FROM (VALUES
	-- accepted
	('two elements', '00000005 00000002 00000000  00000000 00000002  3fc00000 c0000000'),
	('empty', '00000003 00000000 00000000'),
	('smallest subnormal', '00000001 00000001 00000000  00000000  00000001'),
	('largest index', '3b9aca00 00000001 00000000  3b9ac9ff  3f800000'),
	-- truncated or too long
	('no bytes', ''),
	('half a header', '00000005 0000'),
	('no reserved field', '00000005 00000000'),
	('nnz 2, one element', '00000005 00000002 00000000  00000000  3fc00000'),
	('nnz 1, index only', '00000005 00000001 00000000  00000000'),
	('nnz 100000000, no data', '3b9aca00 05f5e100 00000000'),
	('trailing byte', '00000005 00000001 00000000  00000000  3fc00000  00'),
	-- dimensions
	('dims 0', '00000000 00000000 00000000'),
	('dims -1', 'ffffffff 00000000 00000000'),
	('dims 1000000001', '3b9aca01 00000000 00000000'),
	-- element count
	('nnz -1', '00000005 ffffffff 00000000'),
	('nnz > dims', '00000002 00000003 00000000  00000000 00000001 00000002  3f800000 3f800000 3f800000'),
	('nnz 2^31-1', '3b9aca00 7fffffff 00000000'),
	-- reserved field
	('unused 1', '00000005 00000000 00000001'),
	('unused -1', '00000005 00000001 ffffffff  00000000  3f800000'),
	-- indices
	('index -1', '00000005 00000001 00000000  ffffffff  3f800000'),
	('index = dims', '00000005 00000001 00000000  00000005  3f800000'),
	('descending', '00000005 00000002 00000000  00000002 00000000  3f800000 3f800000'),
	('duplicate', '00000005 00000002 00000000  00000001 00000001  3f800000 3f800000'),
	-- values
	('NaN', '00000005 00000001 00000000  00000000  7fc00000'),
	('+Infinity', '00000005 00000001 00000000  00000000  7f800000'),
	('-Infinity', '00000005 00000001 00000000  00000000  ff800000'),
	('zero', '00000005 00000001 00000000  00000000  00000000'),
	('minus zero', '00000005 00000002 00000000  00000000 00000001  3f800000 80000000')
) t(what, hex);

-- the typmod of the target column is checked
SELECT pg_temp.recv('00000004 00000001 00000000  00000003  3f800000', 'spv_recv4');
SELECT pg_temp.recv('00000005 00000001 00000000  00000004  3f800000', 'spv_recv4');

-- as users see a recv error
COPY (SELECT decode('00000005 00000001 00000000  00000000  00000000', 'hex')) TO :'binfile' (FORMAT binary);
COPY spv_recv FROM :'binfile' (FORMAT binary);

DROP TABLE spv_recv, spv_recv4;
-- remove the scratch file
SELECT format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', 'rm -f ' || :'binfile') AS rm \gset
:rm;

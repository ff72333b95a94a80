--
-- Large values: 100,000 non-zeros through text, binary, the constructors,
-- storage and <#>; 16,001 non-zeros (one over pgvector's cap).
--
SET extra_float_digits = 1;

-- 100,000 elements at indices 3, 6, ..., 300000 of 1,000,000 dimensions;
-- values are nonzero multiples of 1/8 with both signs (exact in float4)
CREATE TABLE spv_large_elems AS
SELECT i * 3 AS idx,
	((i % 97) + 1) * (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END) / 8.0 AS val
FROM generate_series(1, 100000) i;

CREATE TABLE spv_large (id int, v sparsevec);
-- text input, sorted and shuffled
INSERT INTO spv_large
SELECT 1, ('{' || string_agg(idx || ':' || val, ',' ORDER BY idx) || '}/1000000')::sparsevec
FROM spv_large_elems;
INSERT INTO spv_large
SELECT 2, ('{' || string_agg(idx || ':' || val, ',' ORDER BY md5(idx::text)) || '}/1000000')::sparsevec
FROM spv_large_elems;
-- to_sparsevec, sparsevec_from_jsonb (0-based keys) and the dense cast
INSERT INTO spv_large
SELECT 3, to_sparsevec(array_agg(idx ORDER BY md5(idx::text)),
	array_agg(val::real ORDER BY md5(idx::text)), 1000000)
FROM spv_large_elems;
INSERT INTO spv_large
SELECT 4, sparsevec_from_jsonb(jsonb_object_agg((idx - 1)::text, val), 1000000)
FROM spv_large_elems;
INSERT INTO spv_large
SELECT 5, v::real[]::sparsevec FROM spv_large WHERE id = 1;

SELECT id, nnz(v), dims(v), v = (SELECT v FROM spv_large WHERE id = 1) AS same
FROM spv_large ORDER BY id;

-- STORAGE external: stored out of line and not compressed; the toast
-- pointer reports the 16 + 8 * nnz bytes less the 4-byte header
SELECT pg_column_compression(v) IS NULL AS uncompressed,
	pg_column_size(v) AS stored_bytes,
	pg_column_size(v::text::sparsevec) AS in_memory_bytes
FROM spv_large WHERE id = 1;

-- text output, byte for byte: each value printed as float4out prints it
SELECT v::text = (SELECT '{' || string_agg(idx || ':' || val::real::text, ',' ORDER BY idx) || '}/1000000'
	FROM spv_large_elems) AS text_ok,
	length(v::text) AS text_length,
	v::text::sparsevec = v AS round_trip
FROM spv_large WHERE id = 1;

-- binary output, byte for byte
SELECT sparsevec_send(v) = (SELECT int4send(1000000) || int4send(100000) || int4send(0)
		|| string_agg(int4send(idx - 1), '' ORDER BY idx)
		|| string_agg(float4send(val::real), '' ORDER BY idx)
	FROM spv_large_elems) AS send_ok,
	length(sparsevec_send(v)) AS send_length
FROM spv_large WHERE id = 1;

-- COPY (FORMAT binary) round trip
SELECT current_setting('data_directory') || '/spv_large_' || pg_backend_pid() || '.bin'
	AS binfile \gset
CREATE TABLE spv_large2 (LIKE spv_large);
COPY spv_large TO :'binfile' (FORMAT binary);
COPY spv_large2 FROM :'binfile' (FORMAT binary);
SELECT count(*), bool_and(a.v = b.v) AS same
FROM spv_large a JOIN spv_large2 b USING (id);
SELECT format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', 'rm -f ' || :'binfile') AS rm \gset
:rm;

-- <#> against brute force sums taken in ascending index order
SELECT v <#> v = -(SELECT sum(val::real::float8 * val::real::float8 ORDER BY idx)
	FROM spv_large_elems) AS self_ok,
	v <#> v AS self
FROM spv_large WHERE id = 1;
-- a query on every 7th index, with weight 0.5 on every 7th element
SELECT v <#> q = -(SELECT sum(val::real::float8 * 0.5::float8 ORDER BY idx)
	FROM spv_large_elems WHERE idx % 7 = 0) AS query_ok,
	v <#> q AS score
FROM spv_large,
	(SELECT to_sparsevec(array_agg(i), array_fill(0.5::real, ARRAY[count(*)::int]), 1000000)
	 FROM generate_series(7, 1000000, 7) i) t(q)
WHERE id = 1;
SELECT l2_norm(v) = sqrt((SELECT sum(val::real::float8 * val::real::float8 ORDER BY idx)
	FROM spv_large_elems)) AS norm_ok
FROM spv_large WHERE id = 1;

-- 16,001 non-zeros (pgvector stops at 16,000)
SELECT nnz(v), dims(v), v::text::sparsevec = v AS round_trip
FROM (SELECT ('{' || string_agg(i || ':1', ',') || '}/16001')::sparsevec
	FROM generate_series(1, 16001) i) t(v);

DROP TABLE spv_large, spv_large2, spv_large_elems;

--
-- Casts between sparsevec and arrays.
--
-- integer[], real[], double precision[] and numeric[] -> sparsevec (as in
-- pgvector: dims = array length, zeros dropped, assignment casts), and
-- sparsevec -> real[] (dense; pgvector has no such cast).
--

-- dense arrays to sparsevec
SELECT ARRAY[1,0,2,0,3,0]::sparsevec;
SELECT ARRAY[1.0,0.0,2.0,0.0,3.0,0.0]::sparsevec;
SELECT ARRAY[1,0,2,0,3,0]::real[]::sparsevec;
SELECT ARRAY[1,0,2,0,3,0]::double precision[]::sparsevec;
SELECT ARRAY[1,0,2,0,3,0]::numeric[]::sparsevec;
SELECT '{1,0,2,0,3,0}'::real[]::sparsevec;
SELECT '{-1.5,0,-0,1e-45,3.4028235e38}'::real[]::sparsevec;
SELECT '{0,0,0}'::real[]::sparsevec;
SELECT '{7}'::real[]::sparsevec;
-- a non-default lower bound does not matter: index 1 is the first element
SELECT '[5:7]={0,2,3}'::real[]::sparsevec;
-- values are rounded to float4 first
SELECT '{16777217,0.1}'::double precision[]::sparsevec;
SELECT '{16777217}'::integer[]::sparsevec;
SELECT '{0.30000000000000000001}'::numeric[]::sparsevec;
-- beyond float4: infinite (rejected) or zero (dropped), as in pgvector
SELECT '{4e38,-4e38}'::double precision[]::sparsevec;
SELECT '{1e-46,-1e-46}'::double precision[]::sparsevec;
SELECT '{4e38}'::numeric[]::sparsevec;
-- typmod
SELECT '{1,0,2,0,3,0}'::real[]::sparsevec(6);
SELECT '{1,0,2,0,3,0}'::real[]::sparsevec(5);
SELECT '{1,0,2,0,3,0}'::integer[]::sparsevec(5);
SELECT '{1,0,2,0,3,0}'::double precision[]::sparsevec(5);
SELECT '{1,0,2,0,3,0}'::numeric[]::sparsevec(5);
-- rejected: NULL elements, NaN, infinities, empty, multidimensional
SELECT '{NULL}'::real[]::sparsevec;
SELECT '{1,NULL,2}'::integer[]::sparsevec;
SELECT '{NaN}'::real[]::sparsevec;
SELECT '{0,NaN}'::double precision[]::sparsevec;
SELECT '{NaN}'::numeric[]::sparsevec;
SELECT '{Infinity}'::real[]::sparsevec;
SELECT '{-Infinity}'::real[]::sparsevec;
SELECT '{}'::real[]::sparsevec;
SELECT '{{1}}'::real[]::sparsevec;
SELECT '{{1,0},{0,1}}'::integer[]::sparsevec;
-- no cast from other array types
SELECT '{1,2}'::bigint[]::sparsevec;
SELECT '{1,2}'::text[]::sparsevec;
-- more elements than pgvector's 16000 cap
SELECT nnz(array_agg(n)::sparsevec), dims(array_agg(n)::sparsevec)
FROM generate_series(1, 16001) n;
-- assignment casts: an array can be stored in a sparsevec column
CREATE TABLE spv_cast (v sparsevec(3));
INSERT INTO spv_cast VALUES (ARRAY[0,1.5,0]::real[]), ('{0,0,2}'::integer[]);
INSERT INTO spv_cast VALUES (ARRAY[1,2]::real[]);
SELECT * FROM spv_cast;
-- but not implicitly in an expression
SELECT ARRAY[1,0]::real[] <#> '{1:1}/2'::sparsevec;
DROP TABLE spv_cast;

-- sparsevec to a dense real[]
SELECT '{2:1.5,4:-3.5}/5'::sparsevec::real[];
SELECT '{}/3'::sparsevec::real[];
SELECT '{1:1e-45,3:3.4028235e38}/3'::sparsevec::real[];
SELECT array_length('{1:1}/100000'::sparsevec::real[], 1);
-- round trips
SELECT '{2:1.5,4:-3.5}/5'::sparsevec::real[]::sparsevec;
SELECT '{0,1.5,0,-3.5,0}'::real[]::sparsevec::real[];
-- an array holds at most 134217727 elements
SELECT '{}/1000000000'::sparsevec::real[];
SELECT '{1:1}/134217728'::sparsevec::real[];
-- assignment cast into a real[] column
CREATE TABLE spv_cast_arr (a real[]);
INSERT INTO spv_cast_arr VALUES ('{1:2,3:4}/3'::sparsevec);
SELECT * FROM spv_cast_arr;
DROP TABLE spv_cast_arr;

-- the typmod coercion cast is the identity apart from the check
SELECT '{1:1}/3'::sparsevec::sparsevec(3);
SELECT '{1:1}/3'::sparsevec::sparsevec(2);

--
-- Constructors: to_sparsevec(indices, vals, dims) and
-- sparsevec_from_jsonb(jsonb, dims).
--

\i test/sql/sparsevec_try.sql

--
-- to_sparsevec(indices integer[], vals real[], dims integer): 1-based
-- indices in any order; zeros are dropped, but every index is checked
--
SELECT to_sparsevec('{1,7}', '{0.5,1.25}', 30522);
SELECT to_sparsevec(ARRAY[3,1,2], ARRAY[0.5,-2,1e-3], 3);
SELECT to_sparsevec(ARRAY[10,9,8,7,6,5,4,3,2,1], ARRAY[10,9,8,7,6,5,4,3,2,1], 10);
SELECT to_sparsevec('{}', '{}', 5);
SELECT to_sparsevec('{2,1}', '{0,0}', 2);
SELECT to_sparsevec('{1,2,3}', '{0,-0,4}', 3);
SELECT to_sparsevec(ARRAY[1000000000], ARRAY[1], 1000000000);
-- the same value as text input
SELECT to_sparsevec('{5,2}', '{0.1,3.5}', 5) = '{2:3.5,5:0.1}/5' AS same;
-- named arguments
SELECT to_sparsevec(indices => '{2}', vals => '{1}', dims => 2);
-- STRICT
SELECT to_sparsevec(NULL, '{1}', 2) IS NULL AS a, to_sparsevec('{1}', '{1}', NULL) IS NULL AS b;
-- a typmod applies on assignment
CREATE TABLE spv_construct (v sparsevec(3));
INSERT INTO spv_construct VALUES (to_sparsevec('{1}', '{1}', 3));
INSERT INTO spv_construct VALUES (to_sparsevec('{1}', '{1}', 4));
DROP TABLE spv_construct;
-- rejected
SELECT to_sparsevec('{0}', '{1}', 2);
SELECT to_sparsevec('{1,1}', '{1,2}', 2);
SELECT to_sparsevec('{1,2}', '{1}', 2);
SELECT f, pg_temp.try(format('SELECT to_sparsevec(%s)', f)) AS error
FROM (VALUES
	-- lengths, NULLs, shapes
	($$'{1,2}', '{1}', 2$$), ($$'{1}', '{1,2}', 2$$), ($$'{}', '{1}', 2$$),
	($$'{1,NULL}', '{1,2}', 2$$), ($$'{1,2}', '{1,NULL}', 2$$),
	($$'{{1,2}}', '{{1,2}}', 2$$), ($$'{{1}}', '{1}', 2$$),
	-- dimensions
	($$'{}', '{}', 0$$), ($$'{}', '{}', -1$$), ($$'{}', '{}', 1000000001$$),
	-- indices out of bounds, also where the value is zero
	($$'{0}', '{1}', 2$$), ($$'{3}', '{1}', 2$$), ($$'{-1}', '{1}', 2$$),
	($$'{-2147483648}', '{1}', 2$$), ($$'{2147483647}', '{1}', 2$$),
	($$'{3}', '{0}', 2$$), ($$'{1,0}', '{1,0}', 2$$),
	-- duplicates, also where a value is zero
	($$'{1,1}', '{1,2}', 2$$), ($$'{2,1,2}', '{1,2,3}', 2$$),
	($$'{1,1}', '{0,2}', 2$$), ($$'{1,1}', '{0,0}', 2$$),
	-- values
	($$'{1}', '{NaN}', 2$$), ($$'{1}', '{Infinity}', 2$$), ($$'{1}', '{-Infinity}', 2$$),
	($$'{1,2}', '{0,NaN}', 2$$)
) t(f);
-- double precision values need a cast (no implicit float8[] -> real[])
SELECT to_sparsevec('{1}', ARRAY[0.5::float8], 2);
SELECT to_sparsevec('{1}', ARRAY[0.5::float8]::real[], 2);

--
-- sparsevec_from_jsonb(jsonb, dims integer): keys are 0-based token ids,
-- so token 17 is text index 18; values are JSON numbers
--
SELECT sparsevec_from_jsonb('{"17": 0.8, "2044": 1.3}', 30522);
SELECT sparsevec_from_jsonb('{"0": 1, "30521": -2.5}', 30522);
-- jsonb orders keys by length, not by number: the result is sorted anyway
SELECT sparsevec_from_jsonb('{"100": 3, "20": 2, "3": 1, "1000": 4}', 1001);
SELECT sparsevec_from_jsonb('{}', 5);
-- zeros dropped
SELECT sparsevec_from_jsonb('{"1": 0, "2": 0.0, "3": -0, "4": 7}', 5);
-- numbers are rounded to float4 like text input
SELECT sparsevec_from_jsonb('{"0": 0.1, "1": 16777217, "2": 1e-45, "3": 3.4028235e38, "4": 1E2}', 5);
SELECT sparsevec_from_jsonb('{"0": 0.30000000000000000001}', 1);
-- leading zeros are allowed in a token id
SELECT sparsevec_from_jsonb('{"007": 1}', 8);
-- the same value as text input with index + 1
SELECT sparsevec_from_jsonb('{"4": 0.1, "1": 3.5}', 5) = '{2:3.5,5:0.1}/5' AS same;
-- what SPLADE-style code builds, with jsonb_object_agg
SELECT sparsevec_from_jsonb(jsonb_object_agg(tok::text, w), 30522)
FROM (VALUES (2003, 0.25), (1012, 1.5), (7592, 0.75)) t(tok, w);
-- STRICT: a SQL NULL is NULL; a JSON null is an error
SELECT sparsevec_from_jsonb(NULL, 3) IS NULL AS a, sparsevec_from_jsonb('{}', NULL) IS NULL AS b;
-- rejected, as users see them
SELECT sparsevec_from_jsonb('[1,2]', 3);
SELECT sparsevec_from_jsonb('{"a": 1}', 3);
SELECT sparsevec_from_jsonb('{"3": 1}', 3);
SELECT sparsevec_from_jsonb('{"1": "0.5"}', 3);
-- every rejected class with its SQLSTATE
SELECT j, pg_temp.try(format('SELECT sparsevec_from_jsonb(%L, 3)', j)) AS error
FROM (VALUES
	-- not an object
	('[1,2]'), ('[]'), ('1'), ('"x"'), ('null'), ('true'),
	-- keys that are not non-negative decimal integers
	('{"a": 1}'), ('{"": 1}'), ('{"-1": 1}'), ('{"+1": 1}'), ('{" 1": 1}'),
	('{"1 ": 1}'), ('{"1.0": 1}'), ('{"1e0": 1}'), ('{"0x1": 1}'), ('{"١": 1}'),
	-- token ids out of range (3 dimensions: ids 0, 1, 2), also with value 0
	('{"3": 1}'), ('{"3": 0}'), ('{"99999999999999999999999": 1}'),
	-- duplicates after parsing
	('{"1": 1, "01": 2}'),
	-- values that are not numbers
	('{"1": "0.5"}'), ('{"1": null}'), ('{"1": true}'), ('{"1": [1]}'), ('{"1": {"a": 1}}'),
	-- values outside float4
	('{"1": 4e38}'), ('{"1": -4e38}'), ('{"1": 1e-46}'), ('{"1": 1e400}'), ('{"1": -1e-400}')
) t(j);
SELECT sparsevec_from_jsonb('{}', 0);
SELECT sparsevec_from_jsonb('{}', 1000000001);

--
-- sparsevec text input and output, and the typmod.
--
-- The grammar, the messages and the SQLSTATEs are pgvector's: text is
-- {index:value,...}/dims with 1-based indices in any order.
--

\i test/sql/sparsevec_try.sql

-- accepted: the canonical form prints back unchanged
SELECT '{1:1.5,3:3.5}/5'::sparsevec;
SELECT '{1:-2,3:-4}/5'::sparsevec;
-- number syntaxes strtof accepts: trailing or leading dot, sign, exponent,
-- hexadecimal
SELECT '{1:2.,2:.5,3:-.25e1,4:+1,5:1E2,6:0x1p-2}/6'::sparsevec;
-- whitespace around every token: space, \t, \n, \r, \v, \f
SELECT ' { 1 : 1.5 ,  3  :  3.5  } / 5 '::sparsevec;
SELECT E'\t{\n1\r:\x0b1.5\f,3:3.5\t}\n/\r5\f'::sparsevec;
-- signs and leading zeros in indices and dimensions
SELECT '{+1:1,002:2}/+0003'::sparsevec;
-- empty vectors
SELECT '{}/1'::sparsevec, '{ }/5'::sparsevec, '{}/1000000000'::sparsevec;
-- input is sorted by index
SELECT '{3:3,1:1,2:2}/3'::sparsevec;
SELECT '{10:10,9:9,8:8,7:7,6:6,5:5,4:4,3:3,2:2,1:1}/10'::sparsevec;
-- zero values (also -0 and 0e10) are dropped
SELECT '{1:0,2:1,3:0}/3'::sparsevec;
SELECT '{1:-0,2:0.0,3:0e10}/3'::sparsevec;
-- zero values are dropped before the index checks, as in pgvector: an
-- out-of-range or repeated index with a zero value is accepted
SELECT '{0:0}/1'::sparsevec, '{5:0}/1'::sparsevec, '{1:0,1:1}/1'::sparsevec;
-- the largest index and the largest dimensions
SELECT '{1000000000:1}/1000000000'::sparsevec;

-- output: the shortest digits that round-trip a float4
SELECT '{1:0.1,2:100000,3:1e7,4:123456789,5:1.5e-5,6:0.0001,7:1.23456789}/7'::sparsevec;
SELECT '{1:16777217,2:0.3333333333333}/2'::sparsevec;
-- float4 extremes: largest, smallest normal, subnormals down to the smallest
SELECT '{1:3.4028235e38,2:-3.4028235e38}/2'::sparsevec;
SELECT '{1:1.1754944e-38,2:1e-40,3:1.4e-45,4:-1e-45}/4'::sparsevec;
SELECT '{1:1.5e38,2:-1.5e38}/2'::sparsevec, '{1:1.5e+38,2:-1.5e-38}/2'::sparsevec;

-- rejected inputs, as users see them
SELECT ''::sparsevec;
SELECT '{}'::sparsevec;
SELECT '{}/1a'::sparsevec;
SELECT '{1:hello,2:1}/2'::sparsevec;
SELECT '{1:NaN,2:1}/2'::sparsevec;
SELECT '{1:4e38,2:1}/2'::sparsevec;
SELECT '{}/0'::sparsevec;
SELECT '{0:1}/1'::sparsevec;
SELECT '{1:1,1:1}/2'::sparsevec;

-- every rejected class with its SQLSTATE: 22P02 invalid_text_representation,
-- 22000 data_exception, 22003 numeric_value_out_of_range, 54000
-- program_limit_exceeded
SELECT lit, pg_temp.try(format('SELECT %L::sparsevec', lit)) AS error
FROM (VALUES
	-- syntax: start, elements, separators, dimensions, junk
	(''), ('   '), ('[1,2]'), ('1:1/2'), ('{'), ('{ '), ('{:'), ('{,'),
	('{}'), ('{1:1}'), ('{1:1} 5'), ('{1:1}}/2'),
	('{}/'), ('{}/ '), ('{}/x'), ('{}/1a'), ('{}/1.0'), ('{}/5 x'),
	('{1:1}/2/3'), ('{}/5;'),
	('{:}/1'), ('{,}/1'), ('{1,}/1'), ('{:1}/1'), ('{1:}/1'), ('{1}/1'),
	('{1a:1}/1'), ('{1.5:1}/2'), ('{- 1:1}/2'), ('{a:1}/2'), ('{1e1:1}/20'),
	('{1:1a}/1'), ('{1:hello,2:1}/2'), ('{1:1e}/1'), ('{1:--1}/1'),
	('{1:1.2.3}/1'), ('{1:1,}/1'), ('{1:1 2:2}/2'), ('{1:1;2:2}/2'),
	('{1:1,,2:2}/2'), ('{1::1}/1'),
	-- NaN and infinities
	('{1:NaN,2:1}/2'), ('{1:nan}/1'), ('{1:-NaN}/1'), ('{1:Infinity,2:1}/2'),
	('{1:-Infinity,2:1}/2'), ('{1:inf}/1'), ('{1:-INF}/1'),
	-- float4 overflow and underflow
	('{1:4e38,2:1}/2'), ('{1:-4e38,2:1}/2'), ('{1:3.5e38}/1'), ('{1:1e400}/1'),
	('{1:1e-46,2:1}/2'), ('{1:-1e-46,2:1}/2'), ('{1:1e-400}/1'),
	-- dimensions
	('{}/0'), ('{}/-0'), ('{}/-1'), ('{}/1000000001'), ('{}/2147483647'),
	('{}/2147483648'), ('{}/-2147483649'), ('{}/9223372036854775808'),
	('{}/-9223372036854775809'), ('{1:NaN}/0'),
	-- indices out of bounds
	('{0:1}/1'), ('{2:1}/1'), ('{-1:1}/1'), ('{1000000001:1}/1000000000'),
	('{2147483647:1}/1'), ('{2147483648:1}/1'), ('{-2147483648:1}/1'),
	('{-2147483649:1}/1'), ('{99999999999999999999:1}/1'), ('{3:1,0:1}/3'),
	-- duplicate indices, adjacent or not, sorted or not
	('{1:1,1:1}/2'), ('{1:1,2:1,1:2}/2'), ('{3:1,1:1,2:2,3:3}/3'),
	('{1:1,01:2}/2')
) t(lit);

-- NULL in, NULL out
SELECT NULL::sparsevec IS NULL AS is_null;

-- text round trip
SELECT v::text::sparsevec = v AS same, v::text AS text
FROM (VALUES ('{1:1e-45,7:0.1,30522:-3.4028235e+38}/30522'::sparsevec)) t(v);

-- typmod: sparsevec(dims), 1 <= dims <= 1000000000
SELECT '{}/3'::sparsevec(3);
SELECT '{1:1}/1000000000'::sparsevec(1000000000);
SELECT '{}/3'::sparsevec(2);
SELECT '{}/3'::sparsevec(4);
SELECT '{}/3'::sparsevec(3, 2);
SELECT '{}/3'::sparsevec('a');
SELECT '{}/3'::sparsevec(0);
SELECT '{}/3'::sparsevec(-1);
SELECT '{}/3'::sparsevec(1000000001);
SELECT pg_temp.try($$SELECT '{}/3'::sparsevec(2)$$),
	pg_temp.try($$SELECT '{}/3'::sparsevec(3, 2)$$),
	pg_temp.try($$SELECT '{}/3'::sparsevec(0)$$);

CREATE TABLE spv_typmod (id int, v sparsevec(4));
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'spv_typmod'::regclass AND attname = 'v';
INSERT INTO spv_typmod VALUES (1, '{1:1,4:4}/4');
-- a literal goes through sparsevec_in with the typmod
INSERT INTO spv_typmod VALUES (2, '{1:1}/3');
-- a typed value goes through the length coercion cast
INSERT INTO spv_typmod VALUES (3, '{1:1}/3'::sparsevec);
INSERT INTO spv_typmod SELECT 4, '{1:1}/5'::sparsevec;
UPDATE spv_typmod SET v = '{2:2}/3'::sparsevec;
UPDATE spv_typmod SET v = '{2:2}/4'::sparsevec;
SELECT '{1:1}/3'::text::sparsevec(4);
SELECT '{1:1}/4'::text::sparsevec(4);
SELECT * FROM spv_typmod;
DROP TABLE spv_typmod;

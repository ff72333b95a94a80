--
-- Randomized checks against brute force in SQL.
--
-- The brute force sums float8 products with sum(... ORDER BY idx), which
-- adds in ascending index order starting from the first product, as
-- spv_dot does; products of two float4 values are exact in double.  So
-- the comparison is for equality, not within a tolerance.
--
SET extra_float_digits = 1;
SELECT setseed(0.2024);

-- groups of vectors that are compared pairwise: dimensions, the largest
-- element count, and the spread of magnitudes (values are about
-- 10^[-spread, spread], with both signs)
CREATE TABLE spv_rand_vec (id int PRIMARY KEY, grp int, dims int, maxnnz int, spread int);
INSERT INTO spv_rand_vec
SELECT row_number() OVER (), grp, dims, maxnnz, spread
FROM (VALUES (1, 50, 40, 3, 150), (2, 1000, 60, 10, 100), (3, 1, 1, 38, 20),
	(4, 30522, 200, 30, 60), (5, 8, 8, 1, 40)) g(grp, dims, maxnnz, spread, n),
	generate_series(1, n);

CREATE TABLE spv_rand_elem AS
SELECT DISTINCT ON (v.id, e.idx) v.id, e.idx, e.val
FROM spv_rand_vec v, LATERAL (
	SELECT 1 + floor(random() * v.dims)::int AS idx,
		((CASE WHEN random() < 0.3 THEN -1 ELSE 1 END)
			* power(10::float8, (random() * 2 - 1) * v.spread) * (0.5 + random()))::real AS val
	FROM generate_series(1, floor(random() * (v.maxnnz + 1))::int)
) e
ORDER BY v.id, e.idx;
CREATE INDEX ON spv_rand_elem (id, idx);

-- build every vector twice: to_sparsevec from arrays, and text input with
-- the elements in random order
CREATE TABLE spv_rand AS
SELECT v.id, v.grp,
	to_sparsevec(coalesce(array_agg(e.idx ORDER BY e.idx) FILTER (WHERE e.idx IS NOT NULL), '{}'),
		coalesce(array_agg(e.val ORDER BY e.idx) FILTER (WHERE e.idx IS NOT NULL), '{}'),
		v.dims) AS v,
	('{' || coalesce(string_agg(e.idx || ':' || e.val::text, ',' ORDER BY random()), '')
		|| '}/' || v.dims)::sparsevec AS t,
	'{' || coalesce(string_agg(e.idx || ':' || e.val::text, ',' ORDER BY e.idx), '')
		|| '}/' || v.dims AS expected_text,
	coalesce(sum(e.val::float8 * e.val::float8 ORDER BY e.idx), 0) AS norm2
FROM spv_rand_vec v LEFT JOIN spv_rand_elem e USING (id)
GROUP BY v.id, v.grp, v.dims;

-- the data has what it should: empty vectors, negative and tiny and huge
-- values, in every group
SELECT grp, count(*) AS vectors, count(*) FILTER (WHERE nnz(v) = 0) > 0 AS has_empty,
	sum(nnz(v)) > 0 AS has_elements
FROM spv_rand GROUP BY grp ORDER BY grp;
SELECT count(*) FILTER (WHERE val < 0) > 0 AS negative,
	count(*) FILTER (WHERE abs(val) < 1e-20) > 0 AS tiny,
	count(*) FILTER (WHERE abs(val) > 1e20) > 0 AS huge
FROM spv_rand_elem;

-- text input in any order = to_sparsevec; output = float4out's digits
SELECT count(*) AS vectors,
	count(*) FILTER (WHERE v = t) AS same_value,
	count(*) FILTER (WHERE v::text = expected_text) AS same_text,
	count(*) FILTER (WHERE nnz(v) = (SELECT count(*) FROM spv_rand_elem e WHERE e.id = r.id)) AS same_nnz
FROM spv_rand r;

-- all pairs in a group (a = b included), with brute-force dot products
CREATE TABLE spv_rand_dot AS
SELECT a.id AS aid, b.id AS bid,
	sum(a.val::float8 * b.val::float8 ORDER BY a.idx) AS dot,
	sum(a.val::float8 * b.val::float8 ORDER BY a.idx DESC) AS dot_desc
FROM spv_rand_elem a JOIN spv_rand_elem b ON a.idx = b.idx
	JOIN spv_rand_vec va ON va.id = a.id JOIN spv_rand_vec vb ON vb.id = b.id
WHERE va.grp = vb.grp
GROUP BY a.id, b.id;

CREATE TABLE spv_rand_pair AS
SELECT a.id AS aid, b.id AS bid, a.grp, a.v AS a, b.v AS b,
	coalesce(d.dot, 0) AS dot, d.dot_desc, d.aid IS NULL AS disjoint
FROM spv_rand a JOIN spv_rand b ON a.grp = b.grp
	LEFT JOIN spv_rand_dot d ON d.aid = a.id AND d.bid = b.id;

-- <#> and inner_product equal the brute force exactly, for every pair
SELECT count(*) AS pairs,
	count(*) FILTER (WHERE disjoint) AS disjoint_pairs,
	count(*) FILTER (WHERE a <#> b = -dot) AS exact_negative_ip,
	count(*) FILTER (WHERE inner_product(a, b) = dot) AS exact_ip,
	count(*) FILTER (WHERE a <#> b = b <#> a) AS commutes,
	count(*) FILTER (WHERE a <#> b IN ('Infinity', '-Infinity', 'NaN')) AS not_finite
FROM spv_rand_pair;
SELECT grp, count(*) AS pairs, count(*) FILTER (WHERE a <#> b = -dot) AS exact
FROM spv_rand_pair GROUP BY grp ORDER BY grp;
-- the comparison can tell the order of the additions apart: summing the
-- same products in descending index order gives a different float8 for
-- some pairs
SELECT count(*) FILTER (WHERE dot_desc <> dot) > 100 AS order_matters
FROM spv_rand_pair;
SELECT count(*) FILTER (WHERE a <#> b = -dot_desc) < count(*) FILTER (WHERE a <#> b = -dot) AS operator_is_ascending
FROM spv_rand_pair WHERE NOT disjoint;

-- <#>, inner_product and <=> prepare an argument that repeats from call to
-- call (sparsevec.c, DotOfArgs): the outer row of a nested loop (either
-- argument), an InitPlan's value, a Const, and a value computed again for
-- every row at the same address whose contents change with the outer row.
-- Each still equals the brute force.  (The index keeps the nested loop's
-- inner side on spv_rand_dot from reading the whole table for each row:
-- two minutes.)
CREATE INDEX ON spv_rand_dot (aid, bid);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT count(*) AS pairs,
	count(*) FILTER (WHERE a.v <#> b.v = -coalesce(d.dot, 0)) AS exact_outer_second,
	count(*) FILTER (WHERE b.v <#> a.v = -coalesce(d.dot, 0)) AS exact_outer_first,
	count(*) FILTER (WHERE inner_product(a.v, b.v) = coalesce(d.dot, 0)) AS exact_ip,
	count(*) FILTER (WHERE a.v <#> b.expected_text::sparsevec = -coalesce(d.dot, 0)) AS exact_recomputed,
	count(*) FILTER (WHERE a.v <=> b.v IS NOT DISTINCT FROM
		CASE WHEN a.norm2 = 0 OR b.norm2 = 0 THEN 'NaN'::float8
			ELSE 1 - greatest(-1, least(1, coalesce(d.dot, 0) / sqrt(a.norm2 * b.norm2))) END) AS exact_cosine
FROM spv_rand b JOIN spv_rand a ON a.grp = b.grp
	LEFT JOIN spv_rand_dot d ON d.aid = a.id AND d.bid = b.id;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
SELECT count(*) AS pairs,
	count(*) FILTER (WHERE p.a <#> (SELECT v FROM spv_rand WHERE id = p.bid) = -p.dot) AS exact_initplan
FROM spv_rand_pair p WHERE p.bid IN (SELECT min(id) FROM spv_rand GROUP BY grp);
SELECT count(*) AS vectors,
	count(*) FILTER (WHERE v <#> '{1:1.5,3:-2,17:0.25,40:3,500:1e10,30000:-7}/30522' =
		-coalesce((SELECT sum(e.val::float8 * q.w ORDER BY e.idx) FROM spv_rand_elem e
			JOIN (VALUES (1, 1.5::float8), (3, -2), (17, 0.25), (40, 3), (500, 1e10), (30000, -7)) q(idx, w)
			ON q.idx = e.idx WHERE e.id = r.id), 0)) AS exact_const
FROM spv_rand r WHERE grp = 4;

-- indices that share a bit of the prepared side's filter (equal modulo
-- 65536) without being equal
CREATE TABLE spv_rand_far AS
SELECT g AS id, to_sparsevec(array_agg(i ORDER BY i), array_agg(w ORDER BY i), 100000000) AS v,
	array_agg(i ORDER BY i) AS idx, array_agg(w ORDER BY i) AS val
FROM (SELECT DISTINCT ON (g, i) g, i, ((random() - 0.4) * 100)::real AS w
	FROM generate_series(1, 60) g, generate_series(1, 40) k,
		LATERAL (SELECT 1 + floor(random() * 30)::int * 65536 + floor(random() * 3)::int + k * 0 AS i) x
	ORDER BY g, i) e
GROUP BY g;
SELECT count(*) AS pairs,
	count(*) FILTER (WHERE a.v <#> b.v = -coalesce((SELECT sum(x.w::float8 * y.w::float8 ORDER BY x.i)
		FROM unnest(a.idx, a.val) x(i, w) JOIN unnest(b.idx, b.val) y(i, w) ON x.i = y.i), 0)) AS exact,
	count(*) FILTER (WHERE EXISTS (SELECT FROM unnest(a.idx) x(i), unnest(b.idx) y(i)
		WHERE x.i <> y.i AND x.i % 65536 = y.i % 65536)) > 0 AS shared_bits
FROM spv_rand_far b CROSS JOIN spv_rand_far a;
DROP TABLE spv_rand_far;

-- the other distances, replicating their double arithmetic in SQL: the
-- differences (a_i - b_i) over the union of indices in ascending order
CREATE TABLE spv_rand_diff AS
SELECT p.aid, p.bid,
	sqrt(coalesce(sum(u.d * u.d ORDER BY u.idx), 0)) AS l2,
	coalesce(sum(abs(u.d) ORDER BY u.idx), 0) AS l1
FROM spv_rand_pair p LEFT JOIN LATERAL (
	SELECT coalesce(x.idx, y.idx) AS idx,
		coalesce(x.val::float8, 0) - coalesce(y.val::float8, 0) AS d
	FROM (SELECT idx, val FROM spv_rand_elem WHERE id = p.aid) x
		FULL JOIN (SELECT idx, val FROM spv_rand_elem WHERE id = p.bid) y ON x.idx = y.idx
) u ON true
WHERE p.grp IN (1, 3, 5)
GROUP BY p.aid, p.bid;

SELECT count(*) AS pairs,
	count(*) FILTER (WHERE p.a <-> p.b = d.l2) AS exact_l2,
	count(*) FILTER (WHERE p.a <+> p.b = d.l1) AS exact_l1,
	count(*) FILTER (WHERE p.a <=> p.b IS NOT DISTINCT FROM
		CASE WHEN ra.norm2 = 0 OR rb.norm2 = 0 THEN 'NaN'::float8
			ELSE 1 - greatest(-1, least(1, p.dot / sqrt(ra.norm2 * rb.norm2))) END) AS exact_cosine,
	count(*) FILTER (WHERE p.a <=> p.b = 'NaN') AS nan_cosine
FROM spv_rand_pair p JOIN spv_rand_diff d USING (aid, bid)
	JOIN spv_rand ra ON ra.id = p.aid JOIN spv_rand rb ON rb.id = p.bid;
SELECT count(*) AS vectors, count(*) FILTER (WHERE l2_norm(v) = sqrt(norm2)) AS exact_norm
FROM spv_rand;

DROP TABLE spv_rand_diff, spv_rand_pair, spv_rand_dot, spv_rand, spv_rand_elem, spv_rand_vec;

--
-- float4 parsing and printing against float4in and float4out: random
-- decimal strings with 13 significant digits over the whole float4 range
-- (subnormals included)
--
CREATE TABLE spv_rand_float AS
SELECT (CASE WHEN random() < 0.5 THEN '-' ELSE '' END)
	|| round((1 + 9 * random())::numeric, 12)::text
	|| 'e' || (floor(random() * 83) - 45)::int AS s
FROM generate_series(1, 20000);
SELECT count(*) AS strings,
	count(*) FILTER (WHERE (('{1:' || s || '}/1')::sparsevec::real[])[1] = s::real) AS parsed_like_float4in,
	count(*) FILTER (WHERE ('{1:' || s || '}/1')::sparsevec::text = '{1:' || s::real::text || '}/1') AS printed_like_float4out,
	count(*) FILTER (WHERE abs(s::real) < 1.1754944e-38) > 0 AS has_subnormals
FROM spv_rand_float;
DROP TABLE spv_rand_float;

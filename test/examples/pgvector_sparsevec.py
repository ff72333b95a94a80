#!/usr/bin/python3
"""pgvector's own sparsevec statements with <=> and <->, run against both
extensions in one database, and compared.

pgvector's extension `vector` in public, sparsevec in schema spv.  The
same vectors go into a column of each type (pgvector's sparsevec and
spv.sparsevec); pgvector's README statements for sparsevec run on each:

    CREATE TABLE items (id bigserial PRIMARY KEY, embedding sparsevec(5));
    INSERT INTO items (embedding) VALUES ('{1:1,3:2,5:3}/5'), ('{1:4,3:5,5:6}/5');
    SELECT * FROM items ORDER BY embedding <-> '{1:3,3:1,5:2}/5' LIMIT 5;
    (and <=>, <#>, <+>)

then the same ORDER BYs on 2000 random rows (tied weights, negative
weights, multiples of one another, empty vectors, NULLs) for 40 queries
(one empty), with LIMIT 10 and without.  pgvector answers by a seq scan;
sparsevec answers <=> through a sparse_maxscore index of
sparsevec_cosine_ops and <-> through one of sparsevec_l2_ops (the plans
are checked).  Compared: the same distances position by position and every
row's distance against the other extension's for that row, within 1e-6
(pgvector accumulates in float4, sparsevec in double: doc/reference.md),
NaN (zero vectors) and NULL in the same places; rows may trade places
only within that tolerance.

When pgvector is not installed the test says so and exits 0: it cannot
run, it did not pass; unless SPARSEVEC_EXPECT_PGVECTOR=1 (test/run sets
it where it installed pgvector): then that is a failure.

Usage: pgvector_sparsevec.py  (libpq environment variables)
"""
import math
import os
import random
import sys

import psycopg

DIMS = 300
TOL = 1e-6
rng = random.Random(39)


def rand_vec():
    k = rng.random()
    if k < 0.03:
        return "{}/%d" % DIMS
    n = rng.randint(1, 12)
    ids = sorted(set(1 + int(DIMS * rng.random() ** 2) for _ in range(n)))
    if k < 0.25:
        ws = [rng.choice([0.5, 1, 1.5, 2]) for _ in ids]          # ties
    elif k < 0.45:
        ws = [rng.uniform(-2, 2) or 0.5 for _ in ids]            # negatives
    elif k < 0.6:
        m = rng.randint(1, 5)
        ids, ws = [1, 2, 3], [m, 2 * m, 3 * m]                  # equal cosines
    else:
        ws = [rng.uniform(0.01, 3) for _ in ids]
    return "{%s}/%d" % (",".join("%d:%r" % (i, float(w)) for i, w in zip(ids, ws)), DIMS)


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def compare(label, ours, theirs, their_by_id):
    """ours, theirs: [(id, distance)] in the order each extension returned."""
    assert len(ours) == len(theirs), "%s: %d rows, pgvector %d" % (label, len(ours), len(theirs))
    for k, ((i, d), (j, e)) in enumerate(zip(ours, theirs)):
        assert close(d, e), "%s: position %d: distance %r, pgvector %r" % (label, k, d, e)
        assert close(d, their_by_id[i]), "%s: id %d: distance %r, pgvector %r" % (label, i, d, their_by_id[i])
    assert len(set(i for i, _ in ours)) == len(ours), "%s: a row twice" % label


def main():
    with psycopg.connect(autocommit=True) as conn:
        if conn.execute("SELECT FROM pg_available_extensions WHERE name = 'vector'").fetchone() is None:
            if os.environ.get("SPARSEVEC_EXPECT_PGVECTOR") == "1":
                print("FAIL - pgvector comparison: pgvector should be installed on this server "
                      "(SPARSEVEC_EXPECT_PGVECTOR=1) but is not")
                return 1
            print("skip - pgvector comparison: pgvector (extension \"vector\") is not installed "
                  "on this server, so it was NOT tested")
            return 0
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE SCHEMA spv")
        conn.execute("CREATE EXTENSION sparsevec SCHEMA spv")

        # pgvector's README, on each type
        conn.execute("CREATE TABLE pgv_items (id bigserial PRIMARY KEY, embedding sparsevec(5))")
        conn.execute("CREATE TABLE spv_items (id bigserial PRIMARY KEY, embedding spv.sparsevec(5))")
        for t in ("pgv_items", "spv_items"):
            conn.execute("INSERT INTO %s (embedding) VALUES ('{1:1,3:2,5:3}/5'), ('{1:4,3:5,5:6}/5')" % t)
        conn.execute("CREATE INDEX ON spv_items USING sparse_maxscore (embedding spv.sparsevec_cosine_ops)")
        conn.execute("CREATE INDEX ON spv_items USING sparse_maxscore (embedding spv.sparsevec_l2_ops)")
        for op in ("<->", "<=>", "<#>", "<+>"):
            q = "'{1:3,3:1,5:2}/5'"
            theirs = conn.execute("SELECT id, embedding %s %s FROM pgv_items ORDER BY embedding %s %s LIMIT 5"
                                  % (op, q, op, q)).fetchall()
            ours = conn.execute("SELECT id, embedding OPERATOR(spv.%s) %s FROM spv_items "
                                "ORDER BY embedding OPERATOR(spv.%s) %s LIMIT 5" % (op, q, op, q)).fetchall()
            compare("README %s" % op, ours, theirs, dict(theirs))
        print("ok - pgvector's README sparsevec statements: the same rows, order and distances "
              "(<->, <=>, <#>, <+>)")

        # 2000 random rows in both types
        conn.execute("CREATE TABLE both_items (id bigint PRIMARY KEY, a sparsevec(%d), b spv.sparsevec(%d))"
                     % (DIMS, DIMS))
        rows = []
        for i in range(1, 2001):
            v = None if rng.random() < 0.02 else rand_vec()
            rows.append((i, v, v))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO both_items VALUES (%s, %s::sparsevec, %s::spv.sparsevec)", rows)
        conn.execute("CREATE INDEX both_b_cos ON both_items USING sparse_maxscore (b spv.sparsevec_cosine_ops)")
        conn.execute("CREATE INDEX both_b_l2 ON both_items USING sparse_maxscore (b spv.sparsevec_l2_ops)")
        conn.execute("ANALYZE both_items")
        queries = ["{}/%d" % DIMS] + [rand_vec() for _ in range(39)]
        checked = 0
        for n, q in enumerate(queries):
            for op, index in (("<=>", "both_b_cos"), ("<->", "both_b_l2")):
                for lim in ("LIMIT 10", ""):
                    their_sql = "SELECT id, a %s %%(q)s::sparsevec FROM both_items ORDER BY a %s %%(q)s::sparsevec %s" \
                        % (op, op, lim)
                    our_sql = ("SELECT id, b OPERATOR(spv.%s) %%(q)s::spv.sparsevec FROM both_items "
                               "ORDER BY b OPERATOR(spv.%s) %%(q)s::spv.sparsevec %s" % (op, op, lim))
                    conn.execute("SET enable_seqscan = off")
                    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + our_sql, {"q": q}))
                    assert "Index Scan using %s" % index in plan, plan
                    ours = conn.execute(our_sql, {"q": q}).fetchall()
                    conn.execute("RESET enable_seqscan")
                    theirs = conn.execute(their_sql, {"q": q}).fetchall()
                    their_all = dict(conn.execute(
                        "SELECT id, a %s %%(q)s::sparsevec FROM both_items" % op, {"q": q}).fetchall())
                    compare("query %d %s %s" % (n, op, lim or "no LIMIT"), ours, theirs, their_all)
                    checked += 1
        print("ok - %d orderings of 2000 rows by <=> (our cosine index) and <-> (our L2 index): "
              "the same as pgvector's within %g" % (checked, TOL))
    return 0


if __name__ == "__main__":
    sys.exit(main())

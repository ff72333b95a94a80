#!/usr/bin/python3
"""The hybrid search recipe (examples/hybrid/rrf.sql) with pgvector.

sparsevec in schema spv, pgvector's `vector` in public; 2000 items with a
random sparse and a random dense vector.  For many queries, the recipe's
fused top 10 must equal an RRF computed here from the two exact rankings
the server gives without any index (ORDER BY distance, id), and the sparse
side must run on the sparse_maxscore index.

When pgvector is not installed (Debian 12 has no package for it) the test
says so and exits 0: it cannot run, it did not pass; unless
SPARSEVEC_EXPECT_PGVECTOR=1 (test/run sets it where it installed
pgvector): then that is a failure.

Usage: hybrid_rrf.py RRF_SQL  (libpq environment variables)
"""
import os
import random
import sys

import psycopg

DIMS, DENSE = 1000, 16
rng = random.Random(5)


def sparse_text(nnz):
    ids = rng.sample(range(1, DIMS + 1), nnz)
    return "{%s}/%d" % (",".join("%d:%.4f" % (i, rng.uniform(0.1, 2)) for i in sorted(ids)), DIMS)


def dense_text():
    return "[%s]" % ",".join("%.4f" % rng.uniform(-1, 1) for _ in range(DENSE))


def main():
    with psycopg.connect(autocommit=True) as conn:
        if conn.execute("SELECT FROM pg_available_extensions WHERE name = 'vector'").fetchone() is None:
            if os.environ.get("SPARSEVEC_EXPECT_PGVECTOR") == "1":
                print("FAIL - hybrid RRF recipe: pgvector should be installed on this server "
                      "(SPARSEVEC_EXPECT_PGVECTOR=1) but is not")
                return 1
            print("skip - hybrid RRF recipe: pgvector (extension \"vector\") is not installed "
                  "on this server, so the recipe was NOT tested")
            return 0
        conn.execute("CREATE SCHEMA spv")
        conn.execute("CREATE EXTENSION sparsevec SCHEMA spv")
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE TABLE items (id bigint PRIMARY KEY, sv spv.sparsevec(%d), emb vector(%d))"
                     % (DIMS, DENSE))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO items VALUES (%s, %s::spv.sparsevec, %s::vector)",
                            [(i, sparse_text(30), dense_text()) for i in range(1, 2001)])
        conn.execute("CREATE INDEX items_sv_idx ON items USING sparse_maxscore (sv)")
        conn.execute("ANALYZE items")
        with open(sys.argv[1]) as f:
            conn.execute(f.read())

        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT * FROM hybrid_search(%s::spv.sparsevec, %s::vector, 10)",
            [sparse_text(10), dense_text()]))
        assert "Index Scan using items_sv_idx" in plan, plan

        depth, c = 50, 60
        for n in range(40):
            qs, qd = sparse_text(rng.randint(3, 15)), dense_text()
            got = conn.execute("SELECT id, score, sparse_rank, dense_rank "
                               "FROM hybrid_search(%s::spv.sparsevec, %s::vector, 10)", [qs, qd]).fetchall()
            conn.execute("SET enable_indexscan = off")
            conn.execute("SET enable_bitmapscan = off")
            srank = [r[0] for r in conn.execute(
                "SELECT id FROM items ORDER BY sv OPERATOR(spv.<#>) %s::spv.sparsevec, id LIMIT %s",
                [qs, depth])]
            drank = [r[0] for r in conn.execute(
                "SELECT id FROM items ORDER BY emb <=> %s::vector, id LIMIT %s", [qd, depth])]
            conn.execute("RESET enable_indexscan")
            conn.execute("RESET enable_bitmapscan")
            score = {}
            for ranking in (srank, drank):
                for r, i in enumerate(ranking, 1):
                    score[i] = score.get(i, 0.0) + 1.0 / (c + r)
            want = sorted(score.items(), key=lambda x: (-x[1], x[0]))[:10]
            assert [g[0] for g in got] == [i for i, _ in want], (n, got, want)
            for (i, s, sr, dr), (_, w) in zip(got, want):
                assert abs(float(s) - w) < 1e-12, (n, i, s, w)
                assert sr == (srank.index(i) + 1 if i in srank else None), (n, i, sr)
                assert dr == (drank.index(i) + 1 if i in drank else None), (n, i, dr)
        print("ok - hybrid RRF recipe: 40 queries, fused top 10 equal to RRF of the exact rankings")
    return 0


if __name__ == "__main__":
    sys.exit(main())

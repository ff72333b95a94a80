#!/usr/bin/python3
"""sparsevec from Python (psycopg 3), the README's "From Python" section.

Inserts SPLADE-shaped vectors four ways (sparsevec_from_jsonb, the text
format, binary COPY by hand, binary COPY through the adapter), then runs
parameterized top-k queries with and without the adapter of
sparsevec_adapter.py, and checks every answer against a brute force
computed here: the same rows, the same distances bit for bit.

Connects with the usual libpq variables (PGHOST, PGPORT, PGUSER,
PGDATABASE); needs a database where sparsevec is installed or where it may
CREATE EXTENSION sparsevec (then into a schema spv of its own, which works
next to pgvector, whose extension also has a type named sparsevec).  It
never touches anything it did not create: its table is a temporary one
(one session throughout), gone when the session ends.  test/run's
`examples` suite runs it against a throwaway cluster with pgvector
installed in the same database.
"""
import random
import struct
import sys

import psycopg
import psycopg.sql
from psycopg.types.json import Jsonb

from sparsevec_adapter import SparseVector, register_sparsevec, round_f4

DIMS = 30522                # a BERT vocabulary, as SPLADE uses
rng = random.Random(11)


def random_vector(nnz):
    """A SPLADE-like vector: 0-based token ids, float4 weights."""
    ids = set()
    while len(ids) < nnz:
        ids.add(min(int(rng.paretovariate(0.7)) - 1, DIMS - 1) if rng.random() < 0.7
                else rng.randrange(DIMS))
    return {i: round_f4(rng.uniform(0.05, 3.0)) for i in ids}


def dot(a, b):
    """The server's inner product: float4 products (exact in a double),
    added in ascending index order from 0."""
    s = 0.0
    for i in sorted(set(a) & set(b)):
        s += a[i] * b[i]
    return s


def check_topk(label, rows, docs, q, k):
    """rows: [(id, distance)] from ORDER BY embedding <#> q LIMIT k."""
    want = sorted(-dot(v, q) for v in docs.values())[:k]
    got = [d for _, d in rows]
    assert got == want, "%s: distances %r, expected %r" % (label, got, want)
    ids = [i for i, _ in rows]
    assert len(set(ids)) == len(ids), "%s: a row twice" % label
    for i, d in rows:
        assert -dot(docs[i], q) == d, "%s: row %d has distance %r" % (label, i, d)
    print("ok - %s: top %d equal to the brute force" % (label, k))


def copy_binary_stream(rows):
    """A COPY ... (FORMAT binary) stream of (bigint, sparsevec) rows, by hand."""
    out = [b"PGCOPY\n\xff\r\n\x00", struct.pack("!ii", 0, 0)]
    for i, vec in rows:
        v = SparseVector(vec, DIMS).to_binary()
        out.append(struct.pack("!hiq", 2, 8, i))
        out.append(struct.pack("!i", len(v)) + v)
    out.append(struct.pack("!h", -1))
    return b"".join(out)


def check_api():
    """SparseVector's constructor forms and methods, as pgvector-python's."""
    v = SparseVector({7: 2.0, 0: 1.5, 3: 0}, 10)
    assert v.dimensions() == 10 and v.indices() == [0, 7] and v.values() == [1.5, 2.0], v
    assert v.to_list() == [1.5, 0, 0, 0, 0, 0, 0, 2.0, 0, 0]
    assert SparseVector([1.5, 0, 0, 0, 0, 0, 0, 2, 0, 0]) == v
    assert SparseVector((0, 0.5)).indices() == [1]
    assert SparseVector([]).dimensions() == 0
    assert SparseVector({}, 4).to_list() == [0.0] * 4
    assert repr(v) == "SparseVector({0: 1.5, 7: 2.0}, 10)", repr(v)
    assert v.to_text() == "{1:1.5,8:2.0}/10"
    assert SparseVector.from_text(" { 8 : 2 , 1:1.5 } / 10") == v
    assert SparseVector.from_text("{}/3") == SparseVector({}, 3)
    assert SparseVector.from_binary(v.to_binary()) == v
    for bad, err in ((lambda: SparseVector({1: 1.0}), ValueError),
                     (lambda: SparseVector([1.0], 3), ValueError),
                     (lambda: SparseVector({5: 1.0}, 5), ValueError),
                     (lambda: SparseVector({-1: 1.0}, 5), ValueError)):
        try:
            bad()
        except err:
            pass
        else:
            raise AssertionError("no %s" % err.__name__)
    try:
        import numpy
    except ImportError:
        print("not tested - numpy is not installed (python3-numpy): "
              "SparseVector(numpy array) and to_numpy()")
    else:
        a = numpy.array([0, 1.5, 0, -2], dtype=numpy.float32)
        w = SparseVector(a)
        assert w.dimensions() == 4 and w.indices() == [1, 3] and w.values() == [1.5, -2.0], w
        assert w.to_numpy().dtype == numpy.float32 and (w.to_numpy() == a).all()
        try:
            SparseVector(numpy.zeros((2, 2)))
        except ValueError:
            pass
        else:
            raise AssertionError("a 2-D array was accepted")
        print("ok - SparseVector from a numpy array, to_numpy()")
    print("ok - SparseVector: pgvector-python's constructor forms and methods")


def extension_schema(conn):
    """The schema sparsevec is installed in; if it is not, install it into
    a schema spv of its own (next to pgvector, public has its sparsevec)."""
    row = conn.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                       "ON n.oid = e.extnamespace WHERE e.extname = 'sparsevec'").fetchone()
    if row:
        return row[0]
    conn.execute("CREATE SCHEMA IF NOT EXISTS spv")
    conn.execute("CREATE EXTENSION sparsevec SCHEMA spv")
    return "spv"


def use_schemas(conn, ext):
    """The extension's type and operators, nothing of public; our table is
    temporary (pg_temp, searched first), so nothing of the user's is
    touched and nothing is left behind."""
    conn.execute("SELECT set_config('search_path', %s, false)",
                 [psycopg.sql.Identifier(ext).as_string(conn)])


def main():
    check_api()
    with psycopg.connect(autocommit=True) as conn:
        run(conn, extension_schema(conn))
    print("python example: all checks passed")


def run(conn, ext):
    docs = {}
    queries = [random_vector(rng.randint(5, 40)) for _ in range(8)]

    # ---------------------------------------------------- without an adapter
    use_schemas(conn, ext)
    conn.execute("CREATE TEMP TABLE items (id bigint PRIMARY KEY, embedding sparsevec(%d))" % DIMS)
    conn.execute("CREATE INDEX items_embedding_idx ON items USING sparse_maxscore (embedding)")

    # 1. from jsonb: the {"token id": weight} dict an encoder returns
    batch = {i: random_vector(rng.randint(20, 120)) for i in range(1, 401)}
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO items (id, embedding) VALUES (%s, sparsevec_from_jsonb(%s, %s))",
            [(i, Jsonb({str(t): w for t, w in v.items()}), DIMS) for i, v in batch.items()])
    docs.update(batch)

    # 2. the text format, 1-based: '{18:0.8,2045:1.3}/30522'
    batch = {i: random_vector(rng.randint(20, 120)) for i in range(401, 801)}
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO items (id, embedding) VALUES (%s, %s::sparsevec)",
                        [(i, SparseVector(v, DIMS).to_text()) for i, v in batch.items()])
    docs.update(batch)

    # 3. binary COPY, stream built by hand
    batch = {i: random_vector(rng.randint(20, 120)) for i in range(801, 1201)}
    with conn.cursor() as cur:
        with cur.copy("COPY items (id, embedding) FROM STDIN (FORMAT binary)") as cp:
            cp.write(copy_binary_stream(batch.items()))
    docs.update(batch)

    # the values came back as they went in (text output, parsed here)
    for i, text in conn.execute("SELECT id, embedding::text FROM items WHERE id IN (1, 401, 801)"):
        assert SparseVector.from_text(text) == SparseVector(docs[i], DIMS), i
    print("ok - jsonb, text and binary COPY inserts read back equal")

    # 4. top-k with parameters; the query vector travels as text
    conn.execute("SET enable_seqscan = off")
    sql = ("SELECT id, embedding <#> %(q)s::sparsevec AS d FROM items "
           "ORDER BY embedding <#> %(q)s::sparsevec LIMIT %(k)s")
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN " + sql, {"q": SparseVector(queries[0], DIMS).to_text(), "k": 10}))
    assert "Index Scan using items_embedding_idx" in plan, plan
    for n, q in enumerate(queries):
        rows = conn.execute(sql, {"q": SparseVector(q, DIMS).to_text(), "k": 10}).fetchall()
        check_topk("no adapter, query %d" % n, rows, docs, q, 10)

    # ------------------------------------------------------- with the adapter
    # (the same session: the temporary table lives as long as it does)
    register_sparsevec(conn, "%s.sparsevec" % psycopg.sql.Identifier(ext).as_string(conn))

    # 5. SparseVector parameters, in binary (%b) and in text (%t)
    batch = {i: random_vector(rng.randint(20, 120)) for i in range(1201, 1401)}
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO items (id, embedding) VALUES (%s, %b)",
                        [(i, SparseVector(v, DIMS)) for i, v in batch.items() if i % 2])
        cur.executemany("INSERT INTO items (id, embedding) VALUES (%s, %t)",
                        [(i, SparseVector(v, DIMS)) for i, v in batch.items() if not i % 2])
    docs.update(batch)

    # 6. binary COPY through the adapter
    batch = {i: random_vector(rng.randint(20, 120)) for i in range(1401, 1801)}
    with conn.cursor() as cur:
        with cur.copy("COPY items (id, embedding) FROM STDIN (FORMAT binary)") as cp:
            cp.set_types(["bigint", "sparsevec"])
            for i, v in batch.items():
                cp.write_row((i, SparseVector(v, DIMS)))
    docs.update(batch)

    # 7. rows come back as SparseVector, in text and in binary results
    for binary in (False, True):
        with conn.cursor(binary=binary) as cur:
            cur.execute("SELECT id, embedding FROM items WHERE id IN (1, 401, 801, 1201, 1202, 1401)")
            for i, v in cur:
                assert isinstance(v, SparseVector), type(v)
                assert v == SparseVector(docs[i], DIMS), i
    print("ok - adapter: parameters, binary COPY and both result formats read back equal")

    # 8. top-k with a SparseVector parameter, binary and text
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == len(docs)
    sql = ("SELECT id, embedding <#> %(q)s AS d FROM items "
           "ORDER BY embedding <#> %(q)s LIMIT %(k)s")
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN " + sql, {"q": SparseVector(queries[0], DIMS), "k": 10}))
    assert "Index Scan using items_embedding_idx" in plan, plan
    for n, q in enumerate(queries):
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                rows = cur.execute(sql, {"q": SparseVector(q, DIMS), "k": 10}).fetchall()
            check_topk("adapter (%s), query %d" % ("binary" if binary else "text", n),
                       rows, docs, q, 10)
    # a whole ordering, no LIMIT
    rows = conn.execute("SELECT id, embedding <#> %(q)s FROM items ORDER BY embedding <#> %(q)s",
                        {"q": SparseVector(queries[1], DIMS)}).fetchall()
    check_topk("adapter, no LIMIT", rows, docs, queries[1], len(docs))


if __name__ == "__main__":
    sys.exit(main())

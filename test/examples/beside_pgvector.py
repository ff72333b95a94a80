#!/usr/bin/python3
"""Run a client example in a database that already has pgvector and a
user's table named items, and check that the example left them alone.

Before: pgvector's extension `vector` in public, and public.items (id,
embedding sparsevec(5)) -- pgvector's sparsevec, the very table name
pgvector's README and the hybrid recipe use -- with 500 rows.  Then the
command runs (the Python or the Node example).  After: public.items has
the same 500 rows, byte for byte, and no schema of the example is left.

When pgvector is not installed, the user's table is a plain one (id,
note text) and the rest is the same; unless SPARSEVEC_EXPECT_PGVECTOR=1
(test/run sets it where it installed pgvector): then that is a failure.

Usage: beside_pgvector.py COMMAND [ARG...]  (libpq environment variables)
"""
import os
import subprocess
import sys

import psycopg

ROWS = 500


def snapshot(conn):
    return conn.execute("SELECT count(*), md5(string_agg(id || ':' || embedding::text, ',' ORDER BY id)) "
                        "FROM public.items").fetchone()


def main():
    with psycopg.connect(autocommit=True) as conn:
        have = conn.execute("SELECT FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if have is not None:
            conn.execute("CREATE EXTENSION vector")
            conn.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, embedding public.sparsevec(5))")
            conn.execute("INSERT INTO public.items SELECT i, ('{1:' || i || ',3:2,5:3}/5')::public.sparsevec "
                         "FROM generate_series(1, %d) i" % ROWS)
            print("ok - pgvector %s installed in public, public.items (pgvector's sparsevec) has %d rows"
                  % (conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0],
                     ROWS))
        else:
            if os.environ.get("SPARSEVEC_EXPECT_PGVECTOR") == "1":
                print("FAIL - pgvector should be installed on this server (SPARSEVEC_EXPECT_PGVECTOR=1) but is not")
                return 1
            print("note - pgvector (extension \"vector\") is not installed: the example runs next to a "
                  "plain user table only, NOT next to pgvector")
            conn.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, embedding text)")
            conn.execute("INSERT INTO public.items SELECT i, 'row ' || i FROM generate_series(1, %d) i" % ROWS)
        before = snapshot(conn)

    rc = subprocess.call(sys.argv[1:])
    if rc != 0:
        print("FAIL - %s exited with %d" % (" ".join(sys.argv[1:]), rc))
        return 1

    with psycopg.connect(autocommit=True) as conn:
        after = snapshot(conn)
        if after != before:
            print("FAIL - public.items changed: %r, was %r" % (after, before))
            return 1
        left = [r[0] for r in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'sparsevec_example%'")]
        if left:
            print("FAIL - the example left schemas behind: %s" % ", ".join(left))
            return 1
        typ = conn.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                           "ON n.oid = e.extnamespace WHERE e.extname = 'sparsevec'").fetchone()
    print("ok - public.items unchanged (%d rows), no schema left behind; sparsevec is in schema %s"
          % (before[0], typ[0] if typ else "(none)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

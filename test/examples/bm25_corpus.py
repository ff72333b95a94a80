#!/usr/bin/python3
"""BM25 from text, checked on a real corpus against a BM25 computed here.

The corpus is what any Debian machine has: the package descriptions in
/var/lib/dpkg/status and the files /usr/share/doc/*/copyright.  The test
loads it into docs(id, body), applies examples/bm25/recipe.sql (which
builds everything for the rows there), and for
many queries compares the index's top 10 (ORDER BY bm25 <#>
docs_bm25_query(q) LIMIT 10, the plan checked to scan docs_bm25_idx) with
a BM25 computed in Python from nothing but the lexemes and positions of
to_tsvector('english', body): its own tf, dl, avgdl, df, N and idf, in
double precision.

The server's vectors hold float4 weights, so scores agree to ~1e-6
relative, and rows whose reference scores tie (within that tolerance) at
the 10th place may be swapped: the check is tie-aware.  It then changes
the corpus (updates, deletes, inserts), refreshes the idf statistics
without rebuilding, and checks again against a reference that keeps the
avgdl the vectors were built with, as the recipe documents.  The bulk
path too: the recipe on an empty table of a schema of its own, the corpus
loaded by docs_bm25_load() from a staging table: statistics right at once
(checked against the reference's), the same vectors as the first table's
(bit for bit), the same top 10s.

Usage: bm25_corpus.py RECIPE_SQL [MAX_DOCS]  (libpq environment variables)
"""
import glob
import json
import math
import os
import random
import re
import sys

import psycopg

K1, B = 1.2, 0.75
REL_TOL = 2e-5


def read_corpus(max_docs):
    docs = []
    with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
        for para in f.read().split("\n\n"):
            m = re.search(r"^Package: (.*)$", para, re.M)
            d = re.search(r"^Description: (.*(?:\n .*)*)", para, re.M)
            if m and d:
                docs.append(m.group(1) + "\n" + d.group(1))
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                docs.append(f.read(20000))
        except OSError:
            pass
    docs = [d.replace("\x00", " ") for d in docs if d.strip()]
    random.Random(1).shuffle(docs)
    return docs[:max_docs]


class Reference:
    """BM25 in Python from the (lexeme, tf) lists of every document."""

    def __init__(self, terms, avgdl=None):
        self.terms = terms                    # id -> {lexeme: tf}
        self.n = len(terms)
        self.dl = {i: sum(t.values()) for i, t in terms.items()}
        self.avgdl = avgdl if avgdl is not None else (
            sum(self.dl.values()) / self.n if self.n else 1.0)
        self.df = {}
        for t in terms.values():
            for lex in t:
                self.df[lex] = self.df.get(lex, 0) + 1

    def idf(self, lex):
        df = self.df.get(lex, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, qlex):
        out = {}
        for i, t in self.terms.items():
            s = 0.0
            for lex in qlex:
                tf = t.get(lex)
                if tf:
                    s += self.idf(lex) * tf * (K1 + 1) / (
                        tf + K1 * (1 - B + B * self.dl[i] / self.avgdl))
            out[i] = s
        return out


def fetch_terms(conn):
    terms = {}
    for i, lex, tf in conn.execute(
            "SELECT id, u.lexeme, cardinality(u.positions) "
            "FROM docs, unnest(to_tsvector('english', body)) u"):
        terms.setdefault(i, {})[lex] = tf
    for (i,) in conn.execute("SELECT id FROM docs"):
        terms.setdefault(i, {})
    return terms


def check_queries(conn, ref, queries, label):
    sql = ("SELECT id, -(bm25 <#> docs_bm25_query(%(q)s)) FROM docs "
           "ORDER BY bm25 <#> docs_bm25_query(%(q)s) LIMIT 10")
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, {"q": queries[0]}))
    assert "Index Scan using docs_bm25_idx" in plan, plan
    nonzero = 0
    for q in queries:
        qlex = [r[0] for r in conn.execute(
            "SELECT lexeme FROM unnest(to_tsvector('english', %s))", [q])]
        want = ref.scores(qlex)
        got = conn.execute(sql, {"q": q}).fetchall()
        assert len(got) == min(10, ref.n), (q, len(got))
        ranked = sorted(want.values(), reverse=True)
        tenth = ranked[min(10, ref.n) - 1]
        tol = REL_TOL * max(1.0, ranked[0])
        ids = [i for i, _ in got]
        assert len(set(ids)) == len(ids), q
        for i, s in got:
            assert abs(s - want[i]) <= tol, "%s: %r: row %d scores %r, reference %r" % (
                label, q, i, s, want[i])
            assert want[i] >= tenth - tol, "%s: %r: row %d (%r) is not in the top 10 (10th %r)" % (
                label, q, i, want[i], tenth)
        for i, s in want.items():
            if s > tenth + tol:
                assert i in ids, "%s: %r: row %d (%r) missing from the top 10" % (label, q, i, s)
        nonzero += ranked[0] > 0
    print("ok - %s: %d queries (%d with matches), top 10 equal to the reference BM25"
          % (label, len(queries), nonzero))


def make_queries(docs, rng, n):
    words = [w for d in docs for w in re.findall(r"[A-Za-z]{3,}", d)]
    queries = []
    for k in range(n):
        queries.append(" ".join(rng.choice(words) for _ in range(1 + k % 4)))
    queries += ["free software license", "the", "GNU General Public License version 2",
                "postgresql database server", "perl module", "zzzz qqqq"]
    return queries


def main():
    recipe = sys.argv[1]
    max_docs = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    docs = read_corpus(max_docs)
    if len(docs) < 100:
        print("not ok - only %d documents found on this machine" % len(docs))
        return 1
    rng = random.Random(7)
    queries = make_queries(docs, rng, 80)

    with psycopg.connect(autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS sparsevec")
        conn.execute("DROP TABLE IF EXISTS docs CASCADE")
        conn.execute("CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL)")
        with conn.cursor() as cur:
            with cur.copy("COPY docs (id, body) FROM STDIN") as cp:
                for i, d in enumerate(docs, 1):
                    cp.write_row((i, d))
        with open(recipe) as f:
            conn.execute(f.read())
        n, avgdl, vocab = conn.execute(
            "SELECT n_docs, avgdl, (SELECT count(*) FROM docs_vocab) FROM docs_bm25_stats").fetchone()
        print("corpus: %d documents, avgdl %.1f, %d lexemes" % (n, avgdl, vocab))

        ref = Reference(fetch_terms(conn))
        assert ref.n == n and abs(ref.avgdl - avgdl) < 1e-9 * avgdl, (ref.n, ref.avgdl, n, avgdl)
        check_queries(conn, ref, queries, "after the build")

        # the bulk path: an empty table, the recipe, one docs_bm25_load()
        conn.execute("DROP SCHEMA IF EXISTS bm25_bulk CASCADE")
        conn.execute("CREATE SCHEMA bm25_bulk")
        conn.execute("CREATE TABLE bm25_bulk.docs (id bigint PRIMARY KEY, body text NOT NULL)")
        conn.execute("SET docs_bm25.schema = 'bm25_bulk'")
        with open(recipe) as f:
            conn.execute(f.read())
        conn.execute("RESET docs_bm25.schema")
        conn.execute("CREATE TEMP TABLE bm25_stage AS SELECT id, body FROM public.docs")
        loaded = conn.execute("SELECT bm25_bulk.docs_bm25_load('bm25_stage')").fetchone()[0]
        bn, bavgdl, bvocab = conn.execute(
            "SELECT n_docs, avgdl, (SELECT count(*) FROM bm25_bulk.docs_vocab) "
            "FROM bm25_bulk.docs_bm25_stats").fetchone()
        assert loaded == n and bn == n and bavgdl == avgdl and bvocab == vocab, (loaded, bn, bavgdl, bvocab)
        wrong_df = conn.execute(
            "SELECT count(*) FROM bm25_bulk.docs_vocab v "
            "WHERE v.df IS DISTINCT FROM (%s::jsonb->>v.lexeme)::bigint",
            [json.dumps(ref.df)]).fetchone()[0]
        assert wrong_df == 0, wrong_df
        differ = conn.execute(
            "SELECT count(*) FROM public.docs a FULL JOIN bm25_bulk.docs b USING (id) "
            "WHERE a.bm25 IS DISTINCT FROM b.bm25").fetchone()[0]
        assert differ == 0, "%d vectors differ between the two paths" % differ
        conn.execute("SET search_path = bm25_bulk, public")
        check_queries(conn, ref, queries, "after docs_bm25_load() into an empty table")
        conn.execute("RESET search_path")
        conn.execute("DROP SCHEMA bm25_bulk CASCADE")
        conn.execute("DROP TABLE bm25_stage")

        # rows change; only the idf statistics are refreshed
        ids = sorted(ref.terms)
        conn.execute("UPDATE docs SET body = body || ' ' || %s WHERE id = ANY(%s)",
                     [" ".join(rng.choice(queries) for _ in range(5)), ids[:50]])
        conn.execute("DELETE FROM docs WHERE id = ANY(%s)", [ids[50:150]])
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO docs (id, body) VALUES (%s, %s)",
                            [(len(docs) + k + 1, docs[k] + " " + docs[-k - 1][:500]) for k in range(100)])
        conn.execute("SELECT docs_bm25_refresh()")
        ref = Reference(fetch_terms(conn), avgdl=avgdl)
        check_queries(conn, ref, queries, "after updates, deletes, inserts and docs_bm25_refresh()")

        # and a rebuild: a new avgdl
        conn.execute("SELECT docs_bm25_rebuild()")
        ref = Reference(fetch_terms(conn))
        check_queries(conn, ref, queries, "after docs_bm25_rebuild()")
        conn.execute("DROP TABLE docs")
        conn.execute("DROP FUNCTION docs_bm25_row, docs_bm25_add_lexemes, docs_bm25_load, "
                     "docs_bm25_refresh, docs_bm25_rebuild, docs_bm25_query")
        conn.execute("DROP TABLE docs_vocab, docs_bm25_stats")
    print("bm25 corpus: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

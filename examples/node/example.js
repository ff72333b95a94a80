'use strict';
// sparsevec from Node (node-postgres), the README's "From Node" section.
//
// Vectors are npm's `pgvector` package's SparseVector (pgvector-node),
// whose text format this type shares.  Inserts SPLADE-shaped vectors three
// ways (sparsevec_from_jsonb, pgvector's toSql, binary COPY with
// pg-copy-streams), then runs parameterized top-k queries with and without
// a type parser registered by the type's oid (sparsevec.js: pgvector's
// registerTypes needs pgvector's own `vector` type), and checks every
// answer against a brute force computed here: the same rows, the same
// distances bit for bit.
//
// Connects with the libpq variables (PGHOST, PGPORT, PGUSER, PGDATABASE);
// needs a database where sparsevec is installed or where it may CREATE
// EXTENSION sparsevec (then into a schema spv of its own, which works next
// to pgvector, whose extension also has a type named sparsevec).  It never
// touches anything it did not create: its table is a temporary one (one
// session throughout), gone when the session ends.  test/run's
// `examples` suite runs it against a throwaway cluster with pgvector
// installed in the same database.

const assert = require('node:assert/strict');
const { pipeline } = require('node:stream/promises');
const { Readable } = require('node:stream');
const pg = require('pg');
const copyFrom = require('pg-copy-streams').from;
const pgvector = require('pgvector');
const { SparseVector } = pgvector;
const { registerSparsevec, parseSparsevec, sparsevecToBinary } = require('./sparsevec');

const DIMS = 30522;

// a small deterministic generator (mulberry32)
let seed = 11;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function randomVector(nnz) {
  const v = new Map();
  while (v.size < nnz) {
    const id = rand() < 0.7 ? Math.min(Math.floor(1 / Math.pow(1 - rand(), 1 / 0.7)) - 1, DIMS - 1)
      : Math.floor(rand() * DIMS);
    v.set(id, Math.fround(0.05 + rand() * 2.95));
  }
  return new SparseVector(v, DIMS);
}
// equal as the server stores them: the same dimensions and elements, values
// as float4
function sameVector(a, b) {
  if (!(a instanceof SparseVector) || !(b instanceof SparseVector) ||
      a.dimensions !== b.dimensions || a.indices.length !== b.indices.length) return false;
  const m = new Map(b.indices.map((i, k) => [i, Math.fround(b.values[k])]));
  return a.indices.every((i, k) => m.get(i) === Math.fround(a.values[k]));
}
const randInt = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

// the server's inner product: float4 products, exact in a double, added in
// ascending index order starting from 0
function dot(a, b) {
  const bw = new Map(b.indices.map((i, k) => [i, Math.fround(b.values[k])]));
  const order = a.indices.map((i, k) => [i, Math.fround(a.values[k])]).sort((x, y) => x[0] - y[0]);
  let s = 0;
  for (const [i, w] of order) {
    if (bw.has(i)) s += w * bw.get(i);
  }
  return s;
}

function checkTopk(label, rows, docs, q, k) {
  const want = [...docs.values()].map((v) => -dot(v, q)).sort((x, y) => x - y).slice(0, k);
  const got = rows.map((r) => Number(r.d));
  assert.deepEqual(got.map((x) => x + 0), want.map((x) => x + 0), `${label}: distances`);
  const ids = rows.map((r) => String(r.id));
  assert.equal(new Set(ids).size, ids.length, `${label}: a row twice`);
  for (const r of rows) {
    assert.equal(-dot(docs.get(String(r.id)), q) + 0, Number(r.d) + 0, `${label}: row ${r.id}`);
  }
  console.log(`ok - ${label}: top ${k} equal to the brute force`);
}

function copyBinaryStream(batch) {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)];
  for (const [id, v] of batch) {
    const head = Buffer.alloc(2 + 4 + 8 + 4);
    const bin = sparsevecToBinary(v);
    head.writeInt16BE(2, 0);
    head.writeInt32BE(8, 2);
    head.writeBigInt64BE(BigInt(id), 6);
    head.writeInt32BE(bin.length, 14);
    parts.push(head, bin);
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1, 0);
  parts.push(trailer);
  return Buffer.concat(parts);
}

// the schema sparsevec is installed in; if it is not, install it into a
// schema spv of its own (next to pgvector, public has its sparsevec)
async function extensionSchema(client) {
  const res = await client.query("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n " +
    "ON n.oid = e.extnamespace WHERE e.extname = 'sparsevec'");
  if (res.rows.length > 0) return res.rows[0].nspname;
  await client.query('CREATE SCHEMA IF NOT EXISTS spv');
  await client.query('CREATE EXTENSION sparsevec SCHEMA spv');
  return 'spv';
}

// the extension's type and operators, nothing of public; our table is
// temporary (pg_temp, searched first)
async function useSchemas(client, ext) {
  await client.query(`SET search_path = ${pg.escapeIdentifier(ext)}`);
}

async function main() {
  const client = new pg.Client();
  await client.connect();
  try {
    await run(client, await extensionSchema(client));
  } finally {
    await client.end();
  }
  console.log('node example: all checks passed');
}

async function run(client, ext) {
  const docs = new Map(); // id (string) -> SparseVector
  const queries = Array.from({ length: 8 }, () => randomVector(randInt(5, 40)));
  const sql = 'SELECT id, embedding <#> $1::sparsevec AS d FROM items ' +
    'ORDER BY embedding <#> $1::sparsevec LIMIT $2';

  // ---------------------------------------------------- without a parser
  {
    await useSchemas(client, ext);
    await client.query(`CREATE TEMP TABLE items (id bigint PRIMARY KEY, embedding sparsevec(${DIMS}))`);
    await client.query('CREATE INDEX items_embedding_idx ON items USING sparse_maxscore (embedding)');

    // 1. from jsonb: the {"token id": weight} object an encoder returns
    for (let id = 1; id <= 300; id++) {
      const v = randomVector(randInt(20, 120));
      const json = Object.fromEntries(v.indices.map((i, k) => [String(i), v.values[k]]));
      await client.query('INSERT INTO items (id, embedding) VALUES ($1, sparsevec_from_jsonb($2, $3))',
        [id, JSON.stringify(json), DIMS]);
      docs.set(String(id), v);
    }
    // 2. the text format, 1-based (pgvector's toSql)
    for (let id = 301; id <= 600; id++) {
      const v = randomVector(randInt(20, 120));
      await client.query('INSERT INTO items (id, embedding) VALUES ($1, $2::sparsevec)', [id, pgvector.toSql(v)]);
      docs.set(String(id), v);
    }
    // 3. binary COPY
    const batch = [];
    for (let id = 601; id <= 1000; id++) batch.push([id, randomVector(randInt(20, 120))]);
    await pipeline(Readable.from([copyBinaryStream(batch)]),
      client.query(copyFrom('COPY items (id, embedding) FROM STDIN (FORMAT binary)')));
    for (const [id, v] of batch) docs.set(String(id), v);

    // without a parser, sparsevec arrives as a string in the text format
    const back = await client.query('SELECT id, embedding FROM items WHERE id IN (1, 301, 601)');
    assert.equal(back.rows.length, 3);
    for (const r of back.rows) {
      assert.equal(typeof r.embedding, 'string');
      assert.ok(sameVector(pgvector.fromSql(r.embedding), docs.get(r.id)), `row ${r.id}`);
    }
    console.log('ok - jsonb, text and binary COPY inserts read back equal');

    // 4. top-k with parameters (the query vector as text)
    await client.query('SET enable_seqscan = off');
    const plan = await client.query(`EXPLAIN ${sql}`, [pgvector.toSql(queries[0]), 10]);
    assert.match(plan.rows.map((r) => r['QUERY PLAN']).join('\n'), /Index Scan using items_embedding_idx/);
    for (const [n, q] of queries.entries()) {
      const res = await client.query(sql, [pgvector.toSql(q), 10]);
      checkTopk(`no parser, query ${n}`, res.rows, docs, q, 10);
    }
  }

  // ---------------------------------------------------- with the parser
  // (the same session: the temporary table lives as long as it does)
  {
    // pgvector's own registration needs pgvector's `vector` type, which
    // only a database with pgvector has (its parsers go by pgvector's oids)
    const hasPgvector = await client.query("SELECT FROM pg_extension WHERE extname = 'vector'");
    if (hasPgvector.rows.length === 0) {
      await assert.rejects(require('pgvector/pg').registerTypes(client), /vector type not found/);
    }
    await registerSparsevec(client, `${pg.escapeIdentifier(ext)}.sparsevec`);
    // 5. SparseVector parameters (toPostgres sends the text format)
    for (let id = 1001; id <= 1200; id++) {
      const v = randomVector(randInt(20, 120));
      await client.query('INSERT INTO items (id, embedding) VALUES ($1, $2)', [id, v]);
      docs.set(String(id), v);
    }
    // 6. rows come back as SparseVector, from text and binary results
    for (const binary of [false, true]) {
      const res = await client.query({
        text: 'SELECT id::text AS id, embedding FROM items WHERE id IN (1, 301, 601, 1001)', binary,
      });
      assert.equal(res.rows.length, 4);
      for (const r of res.rows) {
        const id = binary ? r.id.toString() : r.id;
        assert.ok(r.embedding instanceof SparseVector, `${binary}: ${typeof r.embedding}`);
        assert.ok(sameVector(r.embedding, docs.get(id)), `row ${id}`);
      }
    }
    console.log('ok - parser: parameters and both result formats read back equal');

    // 7. top-k with a SparseVector parameter
    const count = await client.query('SELECT count(*)::int AS n FROM items');
    assert.equal(count.rows[0].n, docs.size);
    for (const [n, q] of queries.entries()) {
      const res = await client.query(sql, [q, 10]);
      checkTopk(`parser, query ${n}`, res.rows, docs, q, 10);
    }
    const all = await client.query(
      'SELECT id, embedding <#> $1 AS d FROM items ORDER BY embedding <#> $1', [queries[1]]);
    checkTopk('parser, no LIMIT', all.rows, docs, queries[1], docs.size);
    // the empty vector, and NULL
    const edge = await client.query("SELECT '{}/7'::sparsevec AS e, NULL::sparsevec AS n, '{2:0.5}/7'::sparsevec AS s");
    assert.ok(sameVector(edge.rows[0].e, new SparseVector({}, 7)), 'the empty vector');
    assert.equal(edge.rows[0].n, null);
    assert.ok(sameVector(edge.rows[0].s, new SparseVector([0, 0.5, 0, 0, 0, 0, 0])), 'from a dense array');
    assert.ok(sameVector(parseSparsevec(' { } / 3'), new SparseVector({}, 3)), 'the empty vector, spaced');
    console.log('ok - the empty vector, NULL, a dense SparseVector');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

'use strict';
// sparsevec with npm's `pgvector` package (pgvector-node) and node-postgres.
//
// The type's text format is pgvector's, so pgvector's SparseVector, toSql
// and sparsevecFromSql serve it unchanged.  Two things the package does
// not do are here:
//   * registerSparsevec(client): pgvector's registerTypes(client) throws
//     "vector type not found in the database" unless pgvector's own
//     extension is installed; this registers the parser by the oid of
//     this extension's type instead (typeName may be schema-qualified);
//   * the binary format (binary results, binary COPY), which pgvector-node
//     does not implement.
// It also reads the empty vector '{}/n' as a vector without elements
// (pgvector 0.2.1's parser makes one NaN element of it).
//
// SparseVector indices are 0-based (token ids); the text format prints
// them 1-based.  The server stores float4: a value read back is the
// float4's shortest decimal, Math.fround() of what was sent.

const { SparseVector } = require('pgvector');
const { sparsevecFromSql } = require('pgvector/utils');

function parseSparsevec(text) {
  if (text === null) return null;
  if (/^\s*\{\s*\}/.test(text)) {
    return new SparseVector({}, Number(text.slice(text.lastIndexOf('/') + 1)));
  }
  return sparsevecFromSql(text);
}

// binary format: int32 dims, int32 nnz, int32 0, nnz int32 0-based indices
// ascending, nnz float4 values, big-endian
function sparsevecToBinary(v) {
  const order = v.indices.map((_, k) => k).sort((a, b) => v.indices[a] - v.indices[b]);
  const n = order.length;
  const buf = Buffer.alloc(12 + 8 * n);
  buf.writeInt32BE(v.dimensions, 0);
  buf.writeInt32BE(n, 4);
  buf.writeInt32BE(0, 8);
  order.forEach((k, j) => {
    buf.writeInt32BE(v.indices[k], 12 + 4 * j);
    buf.writeFloatBE(v.values[k], 12 + 4 * n + 4 * j);
  });
  return buf;
}

function sparsevecFromBinary(buf) {
  if (buf === null) return null;
  const dims = buf.readInt32BE(0);
  const n = buf.readInt32BE(4);
  const elements = new Map();
  for (let k = 0; k < n; k++) {
    elements.set(buf.readInt32BE(12 + 4 * k), buf.readFloatBE(12 + 4 * n + 4 * k));
  }
  return new SparseVector(elements, dims);
}

// sparsevec columns of this client's results parse into SparseVector, in
// text and binary results
async function registerSparsevec(client, typeName = 'sparsevec') {
  const res = await client.query('SELECT to_regtype($1)::oid AS oid', [typeName]);
  const oid = res.rows[0].oid;
  if (!oid) throw new Error(`type ${typeName} not found: CREATE EXTENSION sparsevec first`);
  client.setTypeParser(oid, 'text', parseSparsevec);
  client.setTypeParser(oid, 'binary', sparsevecFromBinary);
  return oid;
}

module.exports = { registerSparsevec, parseSparsevec, sparsevecToBinary, sparsevecFromBinary };

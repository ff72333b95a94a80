'use strict';
// sparsevec for node-postgres: a SparseVector class, its text and binary
// formats, and a type parser to register per client.
//
//   const { SparseVector, sparsevecTypes } = require('./sparsevec');
//   const client = new pg.Client({ types: await sparsevecTypes(otherClient) });
//   await client.query('INSERT INTO docs (v) VALUES ($1)', [new SparseVector({ 17: 0.8 }, 30522)]);
//
// Indices in SparseVector are 0-based (token ids); the text format prints
// them 1-based.  The server stores float4: values are kept as
// Math.fround(value).

const pg = require('pg');

class SparseVector {
  constructor(elements, dims) {
    this.dims = dims;
    this.elements = new Map();
    const entries = elements instanceof Map ? elements.entries() : Object.entries(elements);
    for (const [i, v] of entries) {
      if (v !== 0) this.elements.set(Number(i), Math.fround(v));
    }
  }

  sortedIndices() {
    return [...this.elements.keys()].sort((a, b) => a - b);
  }

  equals(other) {
    if (!(other instanceof SparseVector) || other.dims !== this.dims ||
        other.elements.size !== this.elements.size) return false;
    for (const [i, v] of this.elements) if (other.elements.get(i) !== v) return false;
    return true;
  }

  // text format: {i:v,...}/dims, 1-based
  toText() {
    const body = this.sortedIndices().map((i) => `${i + 1}:${this.elements.get(i)}`).join(',');
    return `{${body}}/${this.dims}`;
  }

  // node-postgres calls this for query parameters
  toPostgres() {
    return this.toText();
  }

  static fromText(s) {
    const slash = s.lastIndexOf('/');
    const body = s.slice(0, slash).trim().slice(1, -1);
    const elements = new Map();
    if (body.length > 0) {
      for (const item of body.split(',')) {
        const [i, v] = item.split(':');
        elements.set(Number(i) - 1, Number(v));
      }
    }
    return new SparseVector(elements, Number(s.slice(slash + 1)));
  }

  // binary format: int32 dims, int32 nnz, int32 0, nnz int32 0-based
  // indices ascending, nnz float4 values, big-endian
  toBinary() {
    const idx = this.sortedIndices();
    const buf = Buffer.alloc(12 + 8 * idx.length);
    buf.writeInt32BE(this.dims, 0);
    buf.writeInt32BE(idx.length, 4);
    buf.writeInt32BE(0, 8);
    idx.forEach((i, k) => {
      buf.writeInt32BE(i, 12 + 4 * k);
      buf.writeFloatBE(this.elements.get(i), 12 + 4 * idx.length + 4 * k);
    });
    return buf;
  }

  static fromBinary(buf) {
    const dims = buf.readInt32BE(0);
    const n = buf.readInt32BE(4);
    const elements = new Map();
    for (let k = 0; k < n; k++) {
      elements.set(buf.readInt32BE(12 + 4 * k), buf.readFloatBE(12 + 4 * n + 4 * k));
    }
    return new SparseVector(elements, dims);
  }
}

// Type overrides for a client: sparsevec columns parse as SparseVector in
// text and binary results.  typeName may be schema-qualified.
async function sparsevecTypes(client, typeName = 'sparsevec') {
  const res = await client.query('SELECT to_regtype($1)::oid AS oid', [typeName]);
  const oid = res.rows[0].oid;
  if (!oid) throw new Error(`type ${typeName} not found: CREATE EXTENSION sparsevec first`);
  const types = new pg.TypeOverrides();
  types.setTypeParser(oid, 'text', SparseVector.fromText);
  types.setTypeParser(oid, 'binary', SparseVector.fromBinary);
  return types;
}

module.exports = { SparseVector, sparsevecTypes };

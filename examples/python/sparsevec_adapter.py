"""A psycopg 3 adapter for the sparsevec type (text and binary formats).

    from sparsevec_adapter import SparseVector, register_sparsevec
    register_sparsevec(conn)            # once per connection
    v = SparseVector({17: 0.8, 2044: 1.3}, 30522)   # 0-based token ids
    conn.execute("INSERT INTO docs (v) VALUES (%s)", [v])

Indices in SparseVector are 0-based (as tokenizers and the binary format
count); the text format prints them 1-based.  Values are float4 on the
server: from_text/from_binary give them back as Python floats holding the
float4 value exactly.
"""
import struct

from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo


def round_f4(x):
    """x rounded to float4, as the server stores it."""
    return struct.unpack("!f", struct.pack("!f", x))[0]


class SparseVector:
    def __init__(self, elements, dims):
        """elements: {0-based index: value}; zeros are dropped.  The text
        format prints the shortest decimal of a float4, so from_text rounds
        each value back to float4."""
        self.dims = int(dims)
        self.elements = {int(i): float(v) for i, v in elements.items() if v != 0}

    def __eq__(self, other):
        return (isinstance(other, SparseVector) and self.dims == other.dims
                and self.elements == other.elements)

    def __repr__(self):
        return "SparseVector(%r, %d)" % (self.elements, self.dims)

    # --- text format: {i:v,...}/dims with 1-based indices
    def to_text(self):
        body = ",".join("%d:%r" % (i + 1, v) for i, v in sorted(self.elements.items()))
        return "{%s}/%d" % (body, self.dims)

    @classmethod
    def from_text(cls, s):
        body, dims = s.rsplit("/", 1)
        body = body.strip()[1:-1]
        elements = {}
        if body:
            for item in body.split(","):
                i, v = item.split(":")
                elements[int(i) - 1] = round_f4(float(v))
        return cls(elements, int(dims))

    # --- binary format: int32 dims, int32 nnz, int32 0, nnz int32 0-based
    # indices (ascending), nnz float4 values; big-endian
    def to_binary(self):
        items = sorted(self.elements.items())
        n = len(items)
        return struct.pack("!iii%di%df" % (n, n), self.dims, n, 0,
                           *[i for i, _ in items], *[v for _, v in items])

    @classmethod
    def from_binary(cls, data):
        dims, n, _ = struct.unpack_from("!iii", data, 0)
        idx = struct.unpack_from("!%di" % n, data, 12)
        vals = struct.unpack_from("!%df" % n, data, 12 + 4 * n)
        return cls(dict(zip(idx, vals)), dims)


def register_sparsevec(conn, name="sparsevec"):
    """Teach conn to send SparseVector values and to read sparsevec columns
    as SparseVector, in text and in binary.  name may be schema-qualified
    ("spv.sparsevec") when the extension lives in its own schema."""
    info = TypeInfo.fetch(conn, name)
    if info is None:
        raise RuntimeError("type %s not found: CREATE EXTENSION sparsevec first" % name)
    info.register(conn)

    class TextDumper(Dumper):
        oid = info.oid

        def dump(self, obj):
            return obj.to_text().encode()

    class BinaryDumper(Dumper):
        oid = info.oid
        format = Format.BINARY

        def dump(self, obj):
            return obj.to_binary()

    class TextLoader(Loader):
        def load(self, data):
            return SparseVector.from_text(bytes(data).decode())

    class BinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return SparseVector.from_binary(bytes(data))

    conn.adapters.register_dumper(SparseVector, TextDumper)
    conn.adapters.register_dumper(SparseVector, BinaryDumper)
    conn.adapters.register_loader(info.oid, TextLoader)
    conn.adapters.register_loader(info.oid, BinaryLoader)
    return info

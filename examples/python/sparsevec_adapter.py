"""A psycopg 3 adapter for the sparsevec type (text and binary formats).

    from sparsevec_adapter import SparseVector, register_sparsevec
    register_sparsevec(conn)            # once per connection
    v = SparseVector({17: 0.8, 2044: 1.3}, 30522)   # 0-based token ids
    conn.execute("INSERT INTO docs (v) VALUES (%s)", [v])

SparseVector has the constructor forms and methods of pgvector-python's
class of the same name (pgvector.SparseVector), so code written for one
runs on the other unchanged:

    SparseVector({0: 1.5, 7: 2.0}, 10)  from a dict of 0-based index -> value
                                        and the dimensions
    SparseVector([1.5, 0, 0, 2.0])      from a dense list (or tuple)
    SparseVector(numpy_array)           from a 1-D numpy array
    v.dimensions(), v.indices(), v.values()   (indices ascending)
    v.to_list(), v.to_numpy()           dense, to_numpy as float32
    v.to_text(), v.to_binary(), SparseVector.from_text(s), .from_binary(b)

Not supported: scipy.sparse arrays (pgvector-python takes them too).
One difference: from_text rounds each value to float4, as the server
stores it (the text format prints the shortest decimal of a float4), so
that a value read as text equals the same value read in binary.

numpy is optional: to_numpy() and numpy arrays need it (Debian:
python3-numpy); everything else works without.
"""
import struct

from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

_NO_DIMENSIONS = object()


def round_f4(x):
    """x rounded to float4, as the server stores it."""
    return struct.unpack("!f", struct.pack("!f", x))[0]


class SparseVector:
    def __init__(self, value, dimensions=_NO_DIMENSIONS, /):
        if isinstance(value, dict):
            if dimensions is _NO_DIMENSIONS:
                raise ValueError("SparseVector from a dict needs the dimensions")
            items = sorted((int(i), float(v)) for i, v in value.items() if v != 0)
            self._dim = int(dimensions)
        else:
            if dimensions is not _NO_DIMENSIONS:
                raise ValueError("SparseVector from a dense list takes no dimensions")
            if type(value).__module__.startswith("scipy."):
                raise TypeError("scipy.sparse arrays are not supported: pass a dict or a dense list")
            if getattr(value, "ndim", 1) != 1:
                raise ValueError("expected a 1-D array, got %d dimensions" % value.ndim)
            dense = [float(v) for v in value]
            items = [(i, v) for i, v in enumerate(dense) if v != 0]
            self._dim = len(dense)
        for i, _ in items:
            if i < 0 or i >= self._dim:
                raise ValueError("index %d out of range for %d dimensions" % (i, self._dim))
        self._indices = [i for i, _ in items]
        self._values = [v for _, v in items]

    def dimensions(self):
        return self._dim

    def indices(self):
        return list(self._indices)

    def values(self):
        return list(self._values)

    def to_list(self):
        dense = [0.0] * self._dim
        for i, v in zip(self._indices, self._values):
            dense[i] = v
        return dense

    def to_numpy(self):
        import numpy
        dense = numpy.zeros(self._dim, dtype=numpy.float32)
        dense[self._indices] = self._values
        return dense

    def __eq__(self, other):
        return (isinstance(other, SparseVector) and self._dim == other._dim
                and self._indices == other._indices and self._values == other._values)

    def __repr__(self):
        return "SparseVector(%r, %d)" % (dict(zip(self._indices, self._values)), self._dim)

    # --- text format: {i:v,...}/dims with 1-based indices
    def to_text(self):
        body = ",".join("%d:%r" % (i + 1, v) for i, v in zip(self._indices, self._values))
        return "{%s}/%d" % (body, self._dim)

    @classmethod
    def from_text(cls, s):
        body, dims = s.rsplit("/", 1)
        body = body.strip()[1:-1]
        elements = {}
        if body.strip():
            for item in body.split(","):
                i, v = item.split(":")
                elements[int(i) - 1] = round_f4(float(v))
        return cls(elements, int(dims))

    # --- binary format: int32 dims, int32 nnz, int32 0, nnz int32 0-based
    # indices (ascending), nnz float4 values; big-endian
    def to_binary(self):
        n = len(self._indices)
        return struct.pack("!iii%di%df" % (n, n), self._dim, n, 0,
                           *self._indices, *self._values)

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

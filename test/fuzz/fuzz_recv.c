/*
 * fuzz_recv: sparsevec_recv on an arbitrary binary message.  Accepted
 * input must give a canonical vector that is exactly the bytes consumed
 * (the wire format is the on-disk one, big-endian); rejected input must
 * get a proper SQLSTATE.  The first byte picks the typmod (-1 or 1..255).
 */
#include "fuzzpg.h"

#include "fmgr.h"
#include "lib/stringinfo.h"

#include "sparsevec.h"

extern Datum spv_sparsevec_recv(PG_FUNCTION_ARGS);
extern int	LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

static const int allowed[] = {
	ERRCODE_INVALID_BINARY_REPRESENTATION, ERRCODE_PROTOCOL_VIOLATION,
	ERRCODE_DATA_EXCEPTION, ERRCODE_PROGRAM_LIMIT_EXCEEDED, 0
};

static SparseVector *
call_recv(StringInfo buf, int32 typmod)
{
	return (SparseVector *) DatumGetPointer(fuzz_call(spv_sparsevec_recv,
													  PointerGetDatum(buf),
													  ObjectIdGetDatum(InvalidOid),
													  Int32GetDatum(typmod)));
}

static uint32
be32(const uint8 *p)
{
	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) |
		((uint32) p[2] << 8) | p[3];
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	StringInfoData buf;
	int32		typmod;
	bool		ok;
	SparseVector *volatile v = NULL;

	if (size < 1 || size > 1 << 20)
		return -1;
	fuzz_begin();
	typmod = data[0] == 0 ? -1 : data[0];
	/* the server hands recv a NUL-terminated copy of the message */
	buf.data = palloc(size);
	memcpy(buf.data, data + 1, size - 1);
	buf.data[size - 1] = '\0';
	buf.len = (int) size - 1;
	buf.maxlen = (int) size;
	buf.cursor = 0;

	FUZZ_TRY(ok, v = call_recv(&buf, typmod));
	if (!ok)
		fuzz_check_error(allowed);
	else
	{
		const uint8 *msg = data + 1;
		const float *values = SPV_VALUES(v);

		fuzz_check_sparsevec(v);
		if (typmod != -1 && v->dim != typmod)
			fuzz_fail("typmod %d accepted dim %d", typmod, v->dim);
		if (buf.cursor != 12 + 8 * v->nnz)
			fuzz_fail("consumed %d bytes for %d elements", buf.cursor, v->nnz);
		if ((int32) be32(msg) != v->dim || (int32) be32(msg + 4) != v->nnz)
			fuzz_fail("header not kept");
		for (int i = 0; i < v->nnz; i++)
		{
			uint32		bits;

			memcpy(&bits, &values[i], 4);
			if ((int32) be32(msg + 12 + 4 * i) != v->indices[i] ||
				be32(msg + 12 + 4 * v->nnz + 4 * i) != bits)
				fuzz_fail("element %d not kept", i);
		}
	}
	fuzz_end();
	return 0;
}

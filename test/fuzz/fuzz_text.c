/*
 * fuzz_text: sparsevec_in on arbitrary text.  Accepted input must give a
 * canonical vector whose sparsevec_out text reads back to the same bytes;
 * rejected input must get a proper SQLSTATE (never an internal error).
 * The first byte picks the typmod (-1 or 1..255), the rest is the text.
 */
#include "fuzzpg.h"

#include "fmgr.h"

#include "sparsevec.h"

extern Datum spv_sparsevec_in(PG_FUNCTION_ARGS);
extern Datum spv_sparsevec_out(PG_FUNCTION_ARGS);
extern int	LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

static const int allowed[] = {
	ERRCODE_INVALID_TEXT_REPRESENTATION, ERRCODE_DATA_EXCEPTION,
	ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, ERRCODE_PROGRAM_LIMIT_EXCEEDED, 0
};

static SparseVector *
call_in(char *text, int32 typmod)
{
	return (SparseVector *) DatumGetPointer(fuzz_call(spv_sparsevec_in,
													  CStringGetDatum(text),
													  ObjectIdGetDatum(InvalidOid),
													  Int32GetDatum(typmod)));
}

static char *
call_out(SparseVector *v)
{
	return DatumGetCString(DirectFunctionCall1(spv_sparsevec_out,
											   PointerGetDatum(v)));
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	char	   *text;
	int32		typmod;
	bool		ok;
	SparseVector *volatile v = NULL;
	SparseVector *volatile w = NULL;
	char	   *volatile out = NULL;

	if (size < 1 || memchr(data + 1, '\0', size - 1) != NULL)
		return -1;				/* a cstring has no NUL inside */
	fuzz_begin();
	typmod = data[0] == 0 ? -1 : data[0];
	text = palloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	FUZZ_TRY(ok, v = call_in(text, typmod));
	if (!ok)
		fuzz_check_error(allowed);
	else
	{
		fuzz_check_sparsevec(v);
		if (typmod != -1 && v->dim != typmod)
			fuzz_fail("typmod %d accepted dim %d", typmod, v->dim);
		FUZZ_TRY(ok, out = call_out(v));
		if (!ok)
			fuzz_fail("output of an accepted value failed: %s", fuzz_error.msg);
		FUZZ_TRY(ok, w = call_in(out, -1));
		if (!ok)
			fuzz_fail("\"%s\" (output of \"%s\") rejected: %s", out, text,
					  fuzz_error.msg);
		if (VARSIZE(v) != VARSIZE(w) || memcmp(v, w, VARSIZE(v)) != 0)
			fuzz_fail("\"%s\" does not read back as \"%s\"", out, text);
	}
	fuzz_end();
	return 0;
}

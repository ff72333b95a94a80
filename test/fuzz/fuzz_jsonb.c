/*
 * fuzz_jsonb: sparsevec_from_jsonb(jsonb, dims) on objects built from
 * arbitrary bytes.
 *
 * The jsonb machinery is the server's, so this harness stands in for
 * what the function sees of it: JsonbIteratorInit/Next yield the root's
 * tokens (skipping nested containers, as asked), keys are arbitrary byte
 * strings and values numbers, strings, booleans, nulls or containers; a
 * number is a varlena holding the text numeric_out prints for it.  Real
 * jsonb objects have unique sorted keys; these may not, which only adds
 * cases.
 *
 * Byte 0: the root (0 object, 1 array, 2 scalar), byte 1: dims (0 means
 * 1000000000, else 1..255).  Then records: key length, key bytes, value
 * type (0 number, 1 string, 2 bool, 3 null, 4 object), and for a number 8
 * bytes of a double.  Accepted input must give a canonical vector holding
 * exactly the nonzero numbers at their keys; rejected input a proper
 * SQLSTATE.
 */
#include "fuzzpg.h"

#include <math.h>
#include <stdio.h>

#include "fmgr.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "sparsevec.h"

extern Datum spv_sparsevec_from_jsonb(PG_FUNCTION_ARGS);
extern int	LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

static const int allowed[] = {
	ERRCODE_INVALID_PARAMETER_VALUE, ERRCODE_INVALID_TEXT_REPRESENTATION,
	ERRCODE_DATA_EXCEPTION, ERRCODE_NON_NUMERIC_SQL_JSON_ITEM,
	ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, ERRCODE_PROGRAM_LIMIT_EXCEEDED, 0
};

#define MAX_PAIRS 4096

typedef struct Pair
{
	const char *key;
	int			keylen;
	int			type;
	char		num[400];
	Numeric		numeric;
} Pair;

static Pair pairs[MAX_PAIRS];
static int	npairs;
static int	root_kind;

/* the iterator: -1 before BEGIN, 2i key i, 2i+1 value i, then END, DONE */
static int	pos;

JsonbIterator *
JsonbIteratorInit(JsonbContainer *container)
{
	pos = -1;
	return (JsonbIterator *) &pos;
}

JsonbIteratorToken
JsonbIteratorNext(JsonbIterator **it, JsonbValue *val, bool skipNested)
{
	int			p;

	if (*it == NULL)
		return WJB_DONE;
	if (!skipNested || root_kind != 0)
		fuzz_fail("iterator case not in the harness");
	p = pos++;
	if (p == -1)
	{
		val->type = jbvObject;
		return WJB_BEGIN_OBJECT;
	}
	if (p < 2 * npairs)
	{
		Pair	   *pr = &pairs[p / 2];

		if (p % 2 == 0)
		{
			val->type = jbvString;
			val->val.string.val = (char *) pr->key;
			val->val.string.len = pr->keylen;
			return WJB_KEY;
		}
		switch (pr->type)
		{
			case 0:
				val->type = jbvNumeric;
				val->val.numeric = pr->numeric;
				break;
			case 1:
				val->type = jbvString;
				val->val.string.val = "x";
				val->val.string.len = 1;
				break;
			case 2:
				val->type = jbvBool;
				val->val.boolean = true;
				break;
			case 3:
				val->type = jbvNull;
				break;
			default:
				val->type = jbvBinary;
				break;
		}
		return WJB_VALUE;
	}
	if (p == 2 * npairs)
		return WJB_END_OBJECT;
	*it = NULL;
	return WJB_DONE;
}

const char *
JsonbTypeName(JsonbValue *jbv)
{
	switch (jbv->type)
	{
		case jbvNumeric:
			return "number";
		case jbvString:
			return "string";
		case jbvBool:
			return "boolean";
		case jbvNull:
			return "null";
		case jbvBinary:
			return root_kind == 1 ? "array" : root_kind == 2 ? "number" : "object";
		default:
			return "unknown";
	}
}

Datum
numeric_out(PG_FUNCTION_ARGS)
{
	struct varlena *num = (struct varlena *) PG_GETARG_POINTER(0);

	PG_RETURN_CSTRING(pnstrdup(VARDATA(num), VARSIZE(num) - VARHDRSZ));
}

/* the text numeric_out prints for a double's value (jsonb has no NaN) */
static void
numeric_text(double d, char *buf)
{
	if (isnan(d) || isinf(d))
		d = 0;
	snprintf(buf, 400, "%.17g", d);
	/* numeric_out never uses exponents: print a plain decimal */
	if (strchr(buf, 'e') != NULL)
		snprintf(buf, 400, fabs(d) >= 1 ? "%.0f" : "%.340f", d);
}

static SparseVector *
call(Jsonb *jb, int32 dims)
{
	return (SparseVector *) DatumGetPointer(fuzz_call(spv_sparsevec_from_jsonb,
													  PointerGetDatum(jb),
													  Int32GetDatum(dims), 0));
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	size_t		off = 2;
	int32		dims;
	Jsonb	   *jb;
	uint32		header;
	bool		ok;
	SparseVector *volatile v = NULL;

	if (size < 2 || size > 1 << 16)
		return -1;
	fuzz_begin();
	root_kind = data[0] % 3;
	dims = data[1] == 0 ? SPV_MAX_DIM : data[1];
	npairs = 0;
	while (off < size && npairs < MAX_PAIRS)
	{
		Pair	   *pr = &pairs[npairs];
		int			klen = data[off++];

		if (off + klen + 1 > size)
			break;
		pr->key = (const char *) data + off;
		pr->keylen = klen;
		off += klen;
		pr->type = data[off++] % 5;
		if (pr->type == 0)
		{
			double		d;

			if (off + 8 > size)
				break;
			memcpy(&d, data + off, 8);
			off += 8;
			numeric_text(d, pr->num);
			pr->numeric = palloc(VARHDRSZ + strlen(pr->num));
			SET_VARSIZE(pr->numeric, VARHDRSZ + strlen(pr->num));
			memcpy(VARDATA(pr->numeric), pr->num, strlen(pr->num));
		}
		npairs++;
	}

	header = root_kind == 0 ? JB_FOBJECT | npairs :
		root_kind == 1 ? JB_FARRAY | npairs : JB_FARRAY | JB_FSCALAR | 1;
	jb = palloc0(VARHDRSZ + sizeof(uint32));
	SET_VARSIZE(jb, VARHDRSZ + sizeof(uint32));
	memcpy(VARDATA(jb), &header, sizeof(uint32));

	FUZZ_TRY(ok, v = call(jb, dims));
	if (!ok)
		fuzz_check_error(allowed);
	else
	{
		int			nonzero = 0;

		fuzz_check_sparsevec(v);
		if (root_kind != 0 || v->dim != dims)
			fuzz_fail("accepted root %d, dims %d made %d", root_kind, dims,
					  v->dim);
		for (int i = 0; i < npairs; i++)
		{
			float		x;
			long		id;

			if (pairs[i].type != 0)
				fuzz_fail("accepted a non-number value");
			x = strtof(pairs[i].num, NULL);
			if (x == 0)
				continue;
			nonzero++;
			id = strtol(pnstrdup(pairs[i].key, pairs[i].keylen), NULL, 10);
			if (!fuzz_vector_has(v, (int32) id, x))
				fuzz_fail("pair %ld:%g not in the vector", id, x);
		}
		if (nonzero != v->nnz)
			fuzz_fail("%d elements for %d nonzero numbers", v->nnz, nonzero);
	}
	fuzz_end();
	return 0;
}

/*
 * fuzz_array: the array casts, array_to_sparsevec (integer[], real[],
 * double precision[], numeric[], and an unsupported type) and
 * to_sparsevec(integer[], real[], integer), on arrays built from
 * arbitrary bytes: 0-D, 1-D or 2-D, with or without a NULL bitmap.
 *
 * Byte 0 picks the case (low 3 bits) and the array's shape (bit 3: 2-D,
 * bit 4: empty, bit 5: a NULL bitmap; bit 6: one of its bits is 0);
 * byte 1 the typmod or dims; the rest are the elements.  Accepted input
 * must give a canonical vector holding exactly the nonzero elements;
 * rejected input a proper SQLSTATE.
 *
 * The server's array helpers (ArrayGetNItems, array_contains_nulls,
 * deconstruct_array) and numeric_float4 are re-stated below with the
 * server's semantics; a numeric is a varlena holding the decimal text
 * numeric_out would print.
 */
#include "fuzzpg.h"

#include <math.h>
#include <stdio.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "sparsevec.h"

extern Datum spv_array_to_sparsevec(PG_FUNCTION_ARGS);
extern Datum spv_to_sparsevec(PG_FUNCTION_ARGS);
extern Datum numeric_float4(PG_FUNCTION_ARGS);
extern int	LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

static const int allowed[] = {
	ERRCODE_DATA_EXCEPTION, ERRCODE_NULL_VALUE_NOT_ALLOWED,
	ERRCODE_PROGRAM_LIMIT_EXCEEDED, ERRCODE_ARRAY_SUBSCRIPT_ERROR,
	ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, 0
};

/* ---- the server's helpers, same semantics ---- */

int
ArrayGetNItems(int ndim, const int *dims)
{
	int64		n = 1;

	if (ndim <= 0)
		return 0;
	for (int i = 0; i < ndim; i++)
	{
		if (dims[i] < 0)
			fuzz_fail("negative array dimension");
		n *= dims[i];
		if (n > (int64) MaxArraySize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("array size exceeds the maximum allowed (%d)",
							(int) MaxArraySize)));
	}
	return (int) n;
}

bool
array_contains_nulls(ArrayType *array)
{
	int			n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	bits8	   *bitmap = ARR_NULLBITMAP(array);

	if (bitmap == NULL)
		return false;
	for (int i = 0; i < n; i++)
		if (!(bitmap[i / 8] & (1 << (i % 8))))
			return true;
	return false;
}

void
deconstruct_array(ArrayType *array, Oid elmtype, int elmlen, bool elmbyval,
				  char elmalign, Datum **elemsp, bool **nullsp, int *nelemsp)
{
	int			n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	char	   *p = ARR_DATA_PTR(array);

	if (elmtype != NUMERICOID || elmlen != -1 || nullsp != NULL)
		fuzz_fail("deconstruct_array: case not in the harness");
	if (array_contains_nulls(array))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("null array element not allowed in this context")));
	*elemsp = palloc(Max(n, 1) * sizeof(Datum));
	for (int i = 0; i < n; i++)
	{
		(*elemsp)[i] = PointerGetDatum(p);
		p += INTALIGN(VARSIZE(p));
	}
	*nelemsp = n;
}

/* float4in(numeric_out(x)): strtof, range errors as float4in raises them */
Datum
numeric_float4(PG_FUNCTION_ARGS)
{
	struct varlena *num = (struct varlena *) PG_GETARG_POINTER(0);
	char	   *text = pnstrdup(VARDATA_ANY(num), VARSIZE_ANY_EXHDR(num));
	char	   *end;
	float		f;

	if (strcmp(text, "NaN") == 0)
		PG_RETURN_FLOAT4(NAN);
	if (strcmp(text, "Infinity") == 0)
		PG_RETURN_FLOAT4(INFINITY);
	if (strcmp(text, "-Infinity") == 0)
		PG_RETURN_FLOAT4(-INFINITY);
	errno = 0;
	f = strtof(text, &end);
	if (end == text || *end != '\0')
		fuzz_fail("harness made a bad numeric \"%s\"", text);
	if (errno == ERANGE && (f == 0 || isinf(f)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("\"%s\" is out of range for type real", text)));
	PG_RETURN_FLOAT4(f);
}

/* ---- building arrays ---- */

/* numeric text of a double, as numeric_out would print such a value */
static void
numeric_text(double d, char *buf)
{
	if (isnan(d))
		strcpy(buf, "NaN");
	else if (isinf(d))
		strcpy(buf, d > 0 ? "Infinity" : "-Infinity");
	else
		snprintf(buf, 64, "%.17g", d);
}

/*
 * An array of n elements of elemtype from raw element bytes (elem bytes
 * each; numeric: 8-byte doubles turned into numeric text).
 */
static ArrayType *
make_array(Oid elemtype, int elem, const uint8 *raw, int n, int shape)
{
	int			ndim = (shape & 0x10) ? 0 : (shape & 0x08) ? 2 : 1;
	bool		nulls = (shape & 0x20) != 0 && ndim > 0;
	Size		datalen = 0;
	Size		hdr;
	ArrayType  *a;
	char	   *p;
	char		num[64];

	if (ndim == 0)
		n = 0;
	if (ndim == 2 && n % 2 != 0)
		n--;
	for (int i = 0; i < n; i++)
	{
		if (elemtype == NUMERICOID)
		{
			double		d;

			memcpy(&d, raw + i * 8, 8);
			numeric_text(d, num);
			datalen += INTALIGN(VARHDRSZ + strlen(num));
		}
		else
			datalen += elem;
	}
	hdr = nulls ? ARR_OVERHEAD_WITHNULLS(ndim, n) : ARR_OVERHEAD_NONULLS(ndim);
	a = palloc0(hdr + datalen);
	SET_VARSIZE(a, hdr + datalen);
	a->ndim = ndim;
	a->dataoffset = nulls ? (int32) hdr : 0;
	a->elemtype = elemtype;
	if (ndim == 1)
	{
		ARR_DIMS(a)[0] = n;
		ARR_LBOUND(a)[0] = 1;
	}
	else if (ndim == 2)
	{
		ARR_DIMS(a)[0] = 2;
		ARR_DIMS(a)[1] = n / 2;
		ARR_LBOUND(a)[0] = ARR_LBOUND(a)[1] = 1;
	}
	if (nulls)
	{
		/* all present, or element 0 NULL (its data is then left out) */
		memset(ARR_NULLBITMAP(a), 0xFF, (n + 7) / 8);
		if ((shape & 0x40) && n > 0)
			ARR_NULLBITMAP(a)[0] &= ~1;
	}
	p = (char *) a + hdr;
	for (int i = 0; i < n; i++)
	{
		if (elemtype == NUMERICOID)
		{
			double		d;

			memcpy(&d, raw + i * 8, 8);
			numeric_text(d, num);
			SET_VARSIZE(p, VARHDRSZ + strlen(num));
			memcpy(VARDATA(p), num, strlen(num));
			p += INTALIGN(VARHDRSZ + strlen(num));
		}
		else
		{
			memcpy(p, raw + i * elem, elem);
			p += elem;
		}
	}
	return a;
}

/* the float4 the cast makes of element i */
static float
element_value(Oid elemtype, const uint8 *raw, int i)
{
	if (elemtype == INT4OID)
	{
		int32		v;

		memcpy(&v, raw + 4 * i, 4);
		return (float) v;
	}
	if (elemtype == FLOAT4OID)
	{
		float		v;

		memcpy(&v, raw + 4 * i, 4);
		return v;
	}
	else
	{
		double		v;
		char		num[64];

		memcpy(&v, raw + 8 * i, 8);
		if (elemtype == FLOAT8OID)
			return (float) v;
		numeric_text(v, num);
		return strtof(num, NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	static const Oid types[] = {INT4OID, FLOAT4OID, FLOAT8OID, NUMERICOID, INT8OID};
	static const int lens[] = {4, 4, 8, 8, 8};
	int			which;
	int			shape;
	int32		typmod;
	bool		ok;
	SparseVector *volatile v = NULL;
	const uint8 *raw = data + 2;
	int			rawlen = (int) size - 2;

	if (size < 2 || size > 1 << 16)
		return -1;
	fuzz_begin();
	which = data[0] & 0x07;
	shape = data[0];
	typmod = data[1] == 0 ? -1 : data[1];

	if (which < 5)
	{
		int			n = rawlen / lens[which];
		ArrayType  *a = make_array(types[which], lens[which], raw, n, shape);

		FUZZ_TRY(ok, v = (SparseVector *) DatumGetPointer(fuzz_call(spv_array_to_sparsevec, PointerGetDatum(a),
							  Int32GetDatum(typmod), BoolGetDatum(false))));
		if (!ok)
			fuzz_check_error(allowed);
		else
		{
			const float *values = SPV_VALUES(v);
			int			j = 0;

			fuzz_check_sparsevec(v);
			if (ARR_NDIM(a) != 1 || (ARR_HASNULL(a) && array_contains_nulls(a)) ||
				which == 4 || (typmod != -1 && typmod != v->dim) ||
				v->dim != ARR_DIMS(a)[0])
				fuzz_fail("accepted a bad array (ndim %d dim %d)",
						  ARR_NDIM(a), v->dim);
			for (int i = 0; i < v->dim; i++)
			{
				float		x = element_value(types[which], raw, i);

				if (x == 0)
					continue;
				if (j >= v->nnz || v->indices[j] != i ||
					memcmp(&values[j], &x, 4) != 0)
					fuzz_fail("element %d (%g) not in the vector", i, x);
				j++;
			}
			if (j != v->nnz)
				fuzz_fail("%d elements, %d nonzero in the array", v->nnz, j);
		}
	}
	else
	{
		/* to_sparsevec: n indices, n (or n - 1) values, dims */
		int			n = rawlen / 8;
		int			nv = (shape & 0x40) ? Max(n - 1, 0) : n;
		ArrayType  *ia = make_array(INT4OID, 4, raw, n, shape & 0x38);
		ArrayType  *va = make_array(FLOAT4OID, 4, raw + 4 * n, nv, 0);
		int32		dims = typmod == -1 ? 0 : typmod * (1 + (shape >> 7) * 1000);

		FUZZ_TRY(ok, v = (SparseVector *) DatumGetPointer(fuzz_call(spv_to_sparsevec, PointerGetDatum(ia),
							  PointerGetDatum(va), Int32GetDatum(dims))));
		if (!ok)
			fuzz_check_error(allowed);
		else
		{
			int			nonzero = 0;

			fuzz_check_sparsevec(v);
			if (v->dim != dims || ARR_NDIM(ia) > 1)
				fuzz_fail("dims %d made %d", dims, v->dim);
			for (int i = 0; i < ArrayGetNItems(ARR_NDIM(ia), ARR_DIMS(ia)); i++)
			{
				int32		idx;
				float		x;

				memcpy(&idx, raw + 4 * i, 4);
				memcpy(&x, raw + 4 * n + 4 * i, 4);
				if (x == 0)
					continue;
				nonzero++;
				if (!fuzz_vector_has(v, idx - 1, x))
					fuzz_fail("element %d:%g not in the vector", idx, x);
			}
			if (nonzero != v->nnz)
				fuzz_fail("%d elements, %d nonzero given", v->nnz, nonzero);
		}
	}
	fuzz_end();
	return 0;
}

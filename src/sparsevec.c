/*-------------------------------------------------------------------------
 *
 * sparsevec.c
 *	  The sparsevec type: I/O, typmod, casts, distances and comparisons.
 *
 * The text and binary formats are pgvector's, byte for byte: text is
 * "{i:v,...}/dim" with 1-based indices, binary is int32 dim, int32 nnz,
 * int32 reserved (0), nnz int32 0-based indices, nnz float4 values.  Every
 * value this file returns is canonical (indices strictly ascending and in
 * [0, dim), values finite and nonzero); sparse_maxscore relies on that.
 *
 * All SQL-callable C symbols carry the spv_ prefix and everything else is
 * static (doc/style.md, "Symbol hygiene"): pgvector's library exports the
 * unprefixed names, and on PG15 two loaded libraries share one symbol
 * scope.
 *
 * Distances are computed in double precision.  The inner product is
 * spv_dot() from sparsevec.h, which the index calls too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "sparsevec.h"

PG_MODULE_MAGIC;

/* one parsed element, before sorting */
typedef struct SpvElement
{
	int32		index;			/* 0-based, may be out of range until checked */
	float		value;
} SpvElement;

/* ----------------------------------------------------------------
 * Shared validation.  in, recv, the typmod coercion, the casts and the
 * constructors all go through these, so every path rejects the same
 * things with the same message and SQLSTATE (pgvector's).
 * ----------------------------------------------------------------
 */

/* the two operands of a binary function must have the same dimensions */
static inline void
CheckDims(const SparseVector *a, const SparseVector *b)
{
	if (a->dim != b->dim)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("different sparsevec dimensions %d and %d",
						a->dim, b->dim)));
}

/* a value must match the column's typmod, if any */
static inline void
CheckExpectedDim(int32 typmod, int dim)
{
	if (typmod != -1 && typmod != dim)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("expected %d dimensions, not %d", typmod, dim)));
}

static inline void
CheckDim(int dim)
{
	if (dim < 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("sparsevec must have at least 1 dimension")));

	if (dim > SPV_MAX_DIM)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sparsevec cannot have more than %d dimensions",
						SPV_MAX_DIM)));
}

static inline void
CheckNnzLimit(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("sparsevec cannot have more than %d non-zero elements",
					SPV_MAX_NNZ)));
}

static inline void
CheckNnz(int nnz, int dim)
{
	if (nnz < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("sparsevec cannot have negative number of elements")));

	if (nnz > SPV_MAX_NNZ)
		CheckNnzLimit();

	if (nnz > dim)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sparsevec cannot have more elements than dimensions")));
}

/* a 0-based index must be in [0, dim) */
static inline void
CheckIndexInRange(int32 index, int dim)
{
	if (index < 0 || index >= dim)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("sparsevec index out of bounds")));
}

/* an index must differ from the one before it */
static inline void
CheckNotDuplicate(int32 index, int32 previous)
{
	if (index == previous)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("sparsevec indices must not contain duplicates")));
}

/*
 * indices[i] must be in [0, dim) and greater than indices[i - 1].
 */
static inline void
CheckIndex(const int32 *indices, int i, int dim)
{
	CheckIndexInRange(indices[i], dim);

	if (i > 0)
	{
		if (indices[i] < indices[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("sparsevec indices must be in ascending order")));

		CheckNotDuplicate(indices[i], indices[i - 1]);
	}
}

/* values must be finite (zeros are the caller's business) */
static inline void
CheckElement(float value)
{
	if (isnan(value))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("NaN not allowed in sparsevec")));

	if (isinf(value))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("infinite value not allowed in sparsevec")));
}

/*
 * Convert a 1-based SQL index to a 0-based one.  Indices outside int32
 * become -1 or INT_MAX, which CheckIndex rejects as out of bounds.
 */
static inline int32
ZeroBasedIndex(int64 index)
{
	if (index < 1)
		return -1;
	if (index > (int64) INT_MAX)
		return INT_MAX;
	return (int32) (index - 1);
}

/*
 * Parse one float4 the way float4in and pgvector do: strtof (so there is
 * no double rounding), ERANGE with a zero or infinite result is an
 * out-of-range error, NaN and infinities are rejected.  Returns the value;
 * *endptr is set as by strtof, and equals str if nothing was parsed (the
 * caller reports the syntax error).
 */
static inline float
ParseFloat(char *str, char **endptr)
{
	float		value;

	errno = 0;
	value = strtof(str, endptr);
	if (*endptr == str)
		return 0;

	if (errno == ERANGE && (value == 0 || isinf(value)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("\"%s\" is out of range for type sparsevec",
						pnstrdup(str, *endptr - str))));

	CheckElement(value);
	return value;
}

/*
 * Allocate a zeroed sparse vector.  The caller fills indices and values.
 */
SparseVector *
spv_new(int dim, int nnz)
{
	SparseVector *result;
	Size		size;

	Assert(nnz >= 0 && nnz <= SPV_MAX_NNZ);
	size = SPV_SIZE(nnz);
	result = (SparseVector *) palloc0(size);
	SET_VARSIZE(result, size);
	result->dim = dim;
	result->nnz = nnz;
	return result;
}

static int
CompareElements(const void *a, const void *b)
{
	int32		ia = ((const SpvElement *) a)->index;
	int32		ib = ((const SpvElement *) b)->index;

	return (ia > ib) - (ia < ib);
}

/*
 * Build a canonical vector from n unsorted elements, of which nonzero are
 * nonzero.  Sorts by index (skipped if already sorted), checks every index
 * (including those of zero elements) for bounds and duplicates, and drops
 * the zeros.  dim must already be valid.  Linear apart from the sort.
 */
static SparseVector *
BuildFromElements(SpvElement *elements, int n, int nonzero, int dim)
{
	SparseVector *result;
	float	   *values;
	bool		sorted = true;
	int			j = 0;

	for (int i = 1; i < n; i++)
	{
		if (elements[i].index < elements[i - 1].index)
		{
			sorted = false;
			break;
		}
	}
	if (!sorted)
		qsort(elements, (size_t) n, sizeof(SpvElement), CompareElements);

	/* every index, zero or not, in order: bounds first, then duplicates */
	for (int i = 0; i < n; i++)
	{
		CheckIndexInRange(elements[i].index, dim);
		if (i > 0)
			CheckNotDuplicate(elements[i].index, elements[i - 1].index);
	}

	/* unique and in [0, dim), so nonzero <= n <= dim */
	result = spv_new(dim, nonzero);
	values = SPV_VALUES(result);
	for (int i = 0; i < n; i++)
	{
		if (elements[i].value != 0)
		{
			if (j >= nonzero)
				elog(ERROR, "sparsevec element count mismatch");
			result->indices[j] = elements[i].index;
			values[j] = elements[i].value;
			j++;
		}
	}
	if (j != nonzero)
		elog(ERROR, "sparsevec element count mismatch");

	return result;
}

/* ----------------------------------------------------------------
 * Text I/O
 * ----------------------------------------------------------------
 */

/* the whitespace pgvector skips (scanner_isspace) */
static inline bool
IsSpace(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' ||
		ch == '\r' || ch == '\v' || ch == '\f';
}

pg_noreturn static void InputSyntaxError(const char *lit, const char *detail);

static void
InputSyntaxError(const char *lit, const char *detail)
{
	if (detail)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type sparsevec: \"%s\"", lit),
				 errdetail("%s", detail)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type sparsevec: \"%s\"", lit)));
	pg_unreachable();
}

/*
 * sparsevec_in(cstring, oid, integer): "{i:v,...}/dim", 1-based indices in
 * any order.  Zero values are dropped before any index check, as pgvector
 * does, so "{0:0}/1" is accepted and equals "{}/1".
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_in);
Datum
spv_sparsevec_in(PG_FUNCTION_ARGS)
{
	char	   *lit = PG_GETARG_CSTRING(0);
	int32		typmod = PG_GETARG_INT32(2);
	char	   *pt;
	char	   *end;
	SpvElement *elements;
	int			maxnnz;
	int			nnz = 0;
	long		ldim;
	int			dim;

	/*
	 * Every element but the last is followed by a comma, so the commas bound
	 * the element count.  A cstring is shorter than MaxAllocSize, so this
	 * cannot overflow.
	 */
	maxnnz = 1;
	for (pt = lit; *pt != '\0'; pt++)
	{
		if (*pt == ',')
			maxnnz++;
	}
	if (maxnnz > SPV_MAX_NNZ)
		maxnnz = SPV_MAX_NNZ;
	elements = (SpvElement *) palloc(sizeof(SpvElement) * (Size) maxnnz);

	pt = lit;
	while (IsSpace(*pt))
		pt++;

	if (*pt != '{')
		InputSyntaxError(lit, "Vector contents must start with \"{\".");
	pt++;

	while (IsSpace(*pt))
		pt++;

	if (*pt == '}')
		pt++;
	else
	{
		for (;;)
		{
			long		index;
			float		value;

			while (IsSpace(*pt))
				pt++;

			if (*pt == '\0')
				InputSyntaxError(lit, NULL);

			/* base 10, optional sign, as pgvector (strtol) accepts */
			errno = 0;
			index = strtol(pt, &end, 10);
			if (end == pt)
				InputSyntaxError(lit, NULL);
			pt = end;

			while (IsSpace(*pt))
				pt++;

			if (*pt != ':')
				InputSyntaxError(lit, NULL);
			pt++;

			while (IsSpace(*pt))
				pt++;

			value = ParseFloat(pt, &end);
			if (end == pt)
				InputSyntaxError(lit, NULL);
			pt = end;

			if (value != 0)
			{
				if (nnz >= maxnnz)
				{
					if (maxnnz == SPV_MAX_NNZ)
						CheckNnzLimit();
					elog(ERROR, "sparsevec input ran out of buffer");
				}
				elements[nnz].index = ZeroBasedIndex(index);
				elements[nnz].value = value;
				nnz++;
			}

			while (IsSpace(*pt))
				pt++;

			if (*pt == ',')
				pt++;
			else if (*pt == '}')
			{
				pt++;
				break;
			}
			else
				InputSyntaxError(lit, NULL);
		}
	}

	while (IsSpace(*pt))
		pt++;

	if (*pt != '/')
		InputSyntaxError(lit, "Unexpected end of input.");
	pt++;

	while (IsSpace(*pt))
		pt++;

	errno = 0;
	ldim = strtol(pt, &end, 10);
	if (end == pt)
		InputSyntaxError(lit, NULL);
	pt = end;

	while (IsSpace(*pt))
		pt++;

	if (*pt != '\0')
		InputSyntaxError(lit, "Junk after closing.");

	/* clamp so that huge values give the range error, not a wrapped one */
	if (ldim > INT_MAX)
		dim = INT_MAX;
	else if (ldim < INT_MIN)
		dim = INT_MIN;
	else
		dim = (int) ldim;

	CheckDim(dim);
	CheckExpectedDim(typmod, dim);

	PG_RETURN_SPARSEVEC_P(BuildFromElements(elements, nnz, nnz, dim));
}

/*
 * Worst-case output sizes: "," + up to 11 index digits and a NUL from
 * pg_ltoa + ":" + a float; the tail is "}/" + dim + NUL.
 */
#define SPV_OUT_ELEM_MAX	(1 + 12 + 1 + FLOAT_SHORTEST_DECIMAL_LEN)
#define SPV_OUT_TAIL_MAX	(2 + 12)

/*
 * sparsevec_out(sparsevec): the shortest digits that round-trip each
 * float4, as float4out (extra_float_digits > 0) and pgvector print them.
 * One allocation sized for the worst case unless that would exceed
 * MaxAllocSize; then the buffer grows by doubling.  Linear either way.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_out);
Datum
spv_sparsevec_out(PG_FUNCTION_ARGS)
{
	SparseVector *svec = PG_GETARG_SPARSEVEC_P(0);
	float	   *values = SPV_VALUES(svec);
	StringInfoData buf;
	Size		worst;
	char	   *ptr;

	worst = 1 + (Size) svec->nnz * SPV_OUT_ELEM_MAX + SPV_OUT_TAIL_MAX;
	buf.maxlen = (int) Min(worst, (Size) (MaxAllocSize / 2));
	buf.data = (char *) palloc(buf.maxlen);
	buf.len = 0;
	buf.cursor = 0;

	buf.data[buf.len++] = '{';
	for (int i = 0; i < svec->nnz; i++)
	{
		if (buf.maxlen - buf.len <= SPV_OUT_ELEM_MAX)
			enlargeStringInfo(&buf, SPV_OUT_ELEM_MAX);
		ptr = buf.data + buf.len;
		if (i > 0)
			*ptr++ = ',';
		/* 0-based (C) to 1-based (SQL) */
		ptr += pg_ltoa(svec->indices[i] + 1, ptr);
		*ptr++ = ':';
		ptr += float_to_shortest_decimal_bufn(values[i], ptr);
		buf.len = ptr - buf.data;
	}
	if (buf.maxlen - buf.len <= SPV_OUT_TAIL_MAX)
		enlargeStringInfo(&buf, SPV_OUT_TAIL_MAX);
	ptr = buf.data + buf.len;
	*ptr++ = '}';
	*ptr++ = '/';
	ptr += pg_ltoa(svec->dim, ptr);
	*ptr = '\0';

	PG_FREE_IF_COPY(svec, 0);
	PG_RETURN_CSTRING(buf.data);
}

/*
 * sparsevec_typmod_in(cstring[]): sparsevec(dims), 1 <= dims <= 1e9.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_typmod_in);
Datum
spv_sparsevec_typmod_in(PG_FUNCTION_ARGS)
{
	ArrayType  *ta = PG_GETARG_ARRAYTYPE_P(0);
	int32	   *tl;
	int			n;

	tl = ArrayGetIntegerTypmods(ta, &n);

	if (n != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid type modifier")));

	if (*tl < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dimensions for type sparsevec must be at least 1")));

	if (*tl > SPV_MAX_DIM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dimensions for type sparsevec cannot exceed %d",
						SPV_MAX_DIM)));

	PG_RETURN_INT32(*tl);
}

/* ----------------------------------------------------------------
 * Binary I/O (pgvector's wire format)
 * ----------------------------------------------------------------
 */

/*
 * sparsevec_recv(internal, oid, integer).  Repeats every check of the text
 * path and also rejects zero values, which the text path silently drops:
 * a binary value must already be canonical.  The element count is checked
 * against the bytes left in the message before anything is allocated, so
 * a hostile header cannot make us allocate or read beyond the message.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_recv);
Datum
spv_sparsevec_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int32		typmod = PG_GETARG_INT32(2);
	SparseVector *result;
	float	   *values;
	int32		dim;
	int32		nnz;
	int32		unused;
	int			remaining;

	dim = (int32) pq_getmsgint(buf, sizeof(int32));
	nnz = (int32) pq_getmsgint(buf, sizeof(int32));
	unused = (int32) pq_getmsgint(buf, sizeof(int32));

	CheckDim(dim);
	CheckNnz(nnz, dim);
	CheckExpectedDim(typmod, dim);

	if (unused != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("expected unused to be 0, not %d", unused)));

	/*
	 * Checked before allocating anything; the SQLSTATE is the one
	 * pq_getmsgint raises for a short header, and pgvector's for any short
	 * message (08P01)
	 */
	remaining = buf->len - buf->cursor;
	if ((Size) nnz * (sizeof(int32) + sizeof(float)) > (Size) remaining)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("insufficient data left in message"),
				 errdetail_plural("The sparsevec header announces %d element, but only %d bytes follow it.",
								  "The sparsevec header announces %d elements, but only %d bytes follow it.",
								  nnz, nnz, remaining)));

	result = spv_new(dim, nnz);
	values = SPV_VALUES(result);

	/* indices are 0-based on the wire, as on disk */
	for (int i = 0; i < nnz; i++)
	{
		result->indices[i] = (int32) pq_getmsgint(buf, sizeof(int32));
		CheckIndex(result->indices, i, dim);
	}

	for (int i = 0; i < nnz; i++)
	{
		values[i] = pq_getmsgfloat4(buf);
		CheckElement(values[i]);

		if (values[i] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("binary representation of sparsevec cannot contain zero values")));
	}

	PG_RETURN_SPARSEVEC_P(result);
}

/*
 * sparsevec_send(sparsevec) returns bytea.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_send);
Datum
spv_sparsevec_send(PG_FUNCTION_ARGS)
{
	SparseVector *svec = PG_GETARG_SPARSEVEC_P(0);
	float	   *values = SPV_VALUES(svec);
	StringInfoData buf;

	pq_begintypsend(&buf);
	enlargeStringInfo(&buf, 3 * sizeof(int32) +
					  svec->nnz * (sizeof(int32) + sizeof(float)));
	pq_sendint32(&buf, (uint32) svec->dim);
	pq_sendint32(&buf, (uint32) svec->nnz);
	pq_sendint32(&buf, (uint32) svec->unused);

	for (int i = 0; i < svec->nnz; i++)
		pq_sendint32(&buf, (uint32) svec->indices[i]);

	for (int i = 0; i < svec->nnz; i++)
		pq_sendfloat4(&buf, values[i]);

	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ----------------------------------------------------------------
 * Typmod coercion and casts
 * ----------------------------------------------------------------
 */

/*
 * sparsevec(sparsevec, integer, boolean): the length coercion cast that
 * enforces sparsevec(dims).
 */
PG_FUNCTION_INFO_V1(spv_sparsevec);
Datum
spv_sparsevec(PG_FUNCTION_ARGS)
{
	SparseVector *svec = PG_GETARG_SPARSEVEC_P(0);
	int32		typmod = PG_GETARG_INT32(1);

	CheckExpectedDim(typmod, svec->dim);

	PG_RETURN_SPARSEVEC_P(svec);
}

/*
 * ARR_DATA_PTR without its signed/unsigned ?: (which -Wextra flags in the
 * PG15 header)
 */
static inline void *
ArrayDataPtr(ArrayType *array)
{
	Size		offset;

	if (ARR_HASNULL(array))
		offset = (Size) array->dataoffset;
	else
		offset = ARR_OVERHEAD_NONULLS(ARR_NDIM(array));
	return (char *) array + offset;
}

/* a 1-D (or empty) array without NULLs; returns its length */
static int
CheckArray(ArrayType *array)
{
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("array must be 1-D")));

	if (ARR_HASNULL(array) && array_contains_nulls(array))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array must not contain nulls")));

	return ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
}

/*
 * array_to_sparsevec(integer[] | real[] | double precision[] | numeric[],
 * integer, boolean): a dense array becomes a sparsevec with dims = array
 * length; zeros are dropped.  As in pgvector, double precision and numeric
 * elements are rounded to float4 first, so values beyond the float4 range
 * become infinite (and are rejected) and tiny ones become zero (and are
 * dropped).
 */
PG_FUNCTION_INFO_V1(spv_array_to_sparsevec);
Datum
spv_array_to_sparsevec(PG_FUNCTION_ARGS)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(0);
	int32		typmod = PG_GETARG_INT32(1);
	Oid			elemtype = ARR_ELEMTYPE(array);
	SparseVector *result;
	float	   *values;
	float	   *x;
	int			n;
	int			nnz = 0;
	int			j = 0;

	n = CheckArray(array);

	CheckDim(n);
	CheckExpectedDim(typmod, n);

	/* get a float4 view of the elements (no NULLs, so they are contiguous) */
	if (elemtype == FLOAT4OID)
		x = (float *) ArrayDataPtr(array);
	else if (elemtype == INT4OID)
	{
		int32	   *src = (int32 *) ArrayDataPtr(array);

		x = (float *) palloc(sizeof(float) * (Size) n);
		for (int i = 0; i < n; i++)
			x[i] = (float) src[i];
	}
	else if (elemtype == FLOAT8OID)
	{
		float8	   *src = (float8 *) ArrayDataPtr(array);

		x = (float *) palloc(sizeof(float) * (Size) n);
		for (int i = 0; i < n; i++)
			x[i] = (float) src[i];
	}
	else if (elemtype == NUMERICOID)
	{
		Datum	   *elems;
		int			nelems;

		deconstruct_array(array, NUMERICOID, -1, false, TYPALIGN_INT,
						  &elems, NULL, &nelems);
		x = (float *) palloc(sizeof(float) * (Size) n);
		for (int i = 0; i < nelems; i++)
			x[i] = DatumGetFloat4(DirectFunctionCall1(numeric_float4, elems[i]));
		pfree(elems);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("unsupported array type")));

	for (int i = 0; i < n; i++)
	{
		CheckElement(x[i]);
		if (x[i] != 0)
			nnz++;
	}

	CheckNnz(nnz, n);
	result = spv_new(n, nnz);
	values = SPV_VALUES(result);
	for (int i = 0; i < n; i++)
	{
		if (x[i] != 0)
		{
			result->indices[j] = i;
			values[j] = x[i];
			j++;
		}
	}
	Assert(j == nnz);

	PG_RETURN_SPARSEVEC_P(result);
}

/*
 * sparsevec_to_float4(sparsevec, integer, boolean): the dense real[] of
 * length dims.  Arrays hold at most MaxArraySize elements.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_to_float4);
Datum
spv_sparsevec_to_float4(PG_FUNCTION_ARGS)
{
	SparseVector *svec = PG_GETARG_SPARSEVEC_P(0);
	float	   *values = SPV_VALUES(svec);
	ArrayType  *result;
	float	   *x;
	Size		nbytes;

	if ((Size) svec->dim > MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sparsevec with %d dimensions is too large to convert to real[]",
						svec->dim),
				 errdetail("An array can have at most %d elements.",
						   (int) MaxArraySize)));

	nbytes = ARR_OVERHEAD_NONULLS(1) + (Size) svec->dim * sizeof(float);
	/* palloc0: the zero bits are 0.0f */
	result = (ArrayType *) palloc0(nbytes);
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = 0;		/* no NULL bitmap */
	result->elemtype = FLOAT4OID;
	ARR_DIMS(result)[0] = svec->dim;
	ARR_LBOUND(result)[0] = 1;

	x = (float *) ArrayDataPtr(result);
	for (int i = 0; i < svec->nnz; i++)
		x[svec->indices[i]] = values[i];

	PG_RETURN_ARRAYTYPE_P(result);
}

/*
 * to_sparsevec(indices integer[], vals real[], dims integer): 1-based
 * indices in any order.  Unlike text input, every index is checked, zero
 * or not: out-of-bounds and duplicate indices are errors even where the
 * value is zero.  Zeros are then dropped.
 */
PG_FUNCTION_INFO_V1(spv_to_sparsevec);
Datum
spv_to_sparsevec(PG_FUNCTION_ARGS)
{
	ArrayType  *iarray = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *varray = PG_GETARG_ARRAYTYPE_P(1);
	int32		dim = PG_GETARG_INT32(2);
	int32	   *ix;
	float	   *vx;
	int			ni;
	int			nv;
	int			nonzero = 0;
	SpvElement *elements;

	ni = CheckArray(iarray);
	nv = CheckArray(varray);
	if (ni != nv)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("indices and values arrays must have the same length"),
				 errdetail("The indices array has %d elements and the values array has %d.",
						   ni, nv)));

	CheckDim(dim);

	if (ni > SPV_MAX_NNZ)
		CheckNnzLimit();

	ix = (int32 *) ArrayDataPtr(iarray);
	vx = (float *) ArrayDataPtr(varray);
	elements = (SpvElement *) palloc(sizeof(SpvElement) * (Size) Max(ni, 1));
	for (int i = 0; i < ni; i++)
	{
		CheckElement(vx[i]);
		elements[i].index = ZeroBasedIndex(ix[i]);
		elements[i].value = vx[i];
		if (vx[i] != 0)
			nonzero++;
	}

	PG_RETURN_SPARSEVEC_P(BuildFromElements(elements, ni, nonzero, dim));
}

/*
 * Parse a jsonb object key as a token id: decimal digits only (no sign,
 * no space, no exponent).  Returns false if the key is not of that form;
 * values too large for int64 come back as INT64_MAX (out of bounds).
 */
static bool
ParseTokenId(const char *key, int len, int64 *id)
{
	int64		result = 0;

	if (len == 0)
		return false;

	for (int i = 0; i < len; i++)
	{
		if (key[i] < '0' || key[i] > '9')
			return false;
		if (result <= (PG_INT64_MAX - 9) / 10)
			result = result * 10 + (key[i] - '0');
		else
			result = PG_INT64_MAX;
	}
	*id = result;
	return true;
}

/*
 * sparsevec_from_jsonb(jsonb, dims integer): an object mapping 0-based
 * token ids (vocabulary ids, as SPLADE encoders and tokenizers emit them)
 * to JSON numbers.  {"17": 0.8} sets token 17, which prints as index 18.
 * Numbers are rounded to float4 exactly as text input rounds them; zeros
 * are dropped after every key has been checked.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_from_jsonb);
Datum
spv_sparsevec_from_jsonb(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	int32		dim = PG_GETARG_INT32(1);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	SpvElement *elements;
	int			count;
	int			n = 0;
	int			nonzero = 0;
	const char *keyval = NULL;	/* current key, not NUL-terminated */
	int			keylen = 0;

	if (!JB_ROOT_IS_OBJECT(jb))
	{
		JsonbValue	root;

		root.type = jbvBinary;
		root.val.binary.data = &jb->root;
		root.val.binary.len = VARSIZE(jb) - VARHDRSZ;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot convert jsonb %s to sparsevec",
						JsonbTypeName(&root)),
				 errhint("Pass an object that maps token ids to weights, such as {\"17\": 0.8}.")));
	}

	CheckDim(dim);

	count = (int) JB_ROOT_COUNT(jb);
	if (count > SPV_MAX_NNZ)
		CheckNnzLimit();
	elements = (SpvElement *) palloc(sizeof(SpvElement) * (Size) Max(count, 1));

	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			int64		id;

			keyval = v.val.string.val;
			keylen = v.val.string.len;
			if (!ParseTokenId(keyval, keylen, &id))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						 errmsg("invalid token id \"%s\" in jsonb for sparsevec",
								pnstrdup(keyval, keylen)),
						 errdetail("Token ids are non-negative integers written in decimal, such as \"17\".")));
			if (id >= dim)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("sparsevec index out of bounds"),
						 errdetail("Token id %s is not less than the number of dimensions, %d.",
								   pnstrdup(keyval, keylen), dim),
						 errhint("Token ids in jsonb are 0-based.")));
			if (n >= count)
				elog(ERROR, "jsonb object has more keys than it announced");
			elements[n].index = (int32) id;
		}
		else if (tok == WJB_VALUE)
		{
			char	   *num;
			char	   *end;
			float		value;

			if (v.type != jbvNumeric)
				ereport(ERROR,
						(errcode(ERRCODE_NON_NUMERIC_SQL_JSON_ITEM),
						 errmsg("jsonb value for token id \"%s\" must be a number, not %s",
								pnstrdup(keyval, keylen), JsonbTypeName(&v))));

			/*
			 * The same rounding and range rules as text input (strtof of the
			 * decimal string, as float4in and numeric_float4 do), but the
			 * message names the key: the expanded decimal can be very long.
			 */
			num = DatumGetCString(DirectFunctionCall1(numeric_out,
													  NumericGetDatum(v.val.numeric)));
			errno = 0;
			value = strtof(num, &end);
			if (end == num || *end != '\0')
				elog(ERROR, "could not parse numeric \"%s\"", num);
			if (errno == ERANGE && (value == 0 || isinf(value)))
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("jsonb value for token id \"%s\" is out of range for type sparsevec",
								pnstrdup(keyval, keylen))));
			CheckElement(value);
			pfree(num);

			elements[n].value = value;
			if (value != 0)
				nonzero++;
			n++;
		}
	}

	PG_RETURN_SPARSEVEC_P(BuildFromElements(elements, n, nonzero, dim));
}

/* ----------------------------------------------------------------
 * Distances and norms, all in double precision
 * ----------------------------------------------------------------
 */

/*
 * The dot product of a call's two arguments, with a side that stays the same
 * from call to call prepared once (spv_dot_filtered, sparsevec.h).
 *
 * A seq scan under ORDER BY v <#> q, or a filter on it, calls the operator
 * once a row with the same q: a Const, a parameter, an InitPlan's value.
 * Walking each row's elements against a filter of q's indices costs about
 * half of the merge of the two index arrays (doc/decisions.md "The <#>
 * operator prepares a repeated argument").
 * Which side repeats is seen from the raw argument datums: the same
 * pointer as in the previous call (a row's value points into its buffer
 * page, a different place every row).  That is only a hint: the prepared
 * copy is compared with the argument, by dimension, length and bytes, on
 * every call; a difference drops it, and the call takes spv_dot unless its
 * pointer repeats (a value computed again at the same address), when a new
 * copy is taken.  So the result never depends on the cache, only the speed
 * does.  A copy dropped after serving at most one call makes the next
 * copies wait 1, 3, 7, ... up to 1023 calls, so that arguments that change
 * every call at the same address cost a copy and a filter only now and
 * then.  The cache lives in the call site's fn_mcxt (8 kB of filter once a
 * side repeats, plus the copy); calls without an FmgrInfo
 * (DirectFunctionCall) take spv_dot.
 */
typedef struct SpvDotCache
{
	Datum		last[2];		/* raw arguments of the previous call */
	int			side;			/* argument the copy was taken from, or -1 */
	int32		uses;			/* calls the copy has served */
	int32		backoff;		/* calls to wait after a wasted copy */
	int32		wait;			/* calls left to wait before the next copy */
	int32		dim;
	int32		nnz;
	int32		cap;			/* elements idx and val have room for */
	int32	   *idx;
	float	   *val;
	uint64	   *filter;			/* SPV_FILTER_WORDS, from the first copy on */
} SpvDotCache;

static bool
DotCacheHolds(const SpvDotCache *c, const SparseVector *x)
{
	return c->dim == x->dim && c->nnz == x->nnz &&
		memcmp(c->idx, x->indices, sizeof(int32) * x->nnz) == 0 &&
		memcmp(c->val, SPV_VALUES(x), sizeof(float) * x->nnz) == 0;
}

static double
DotOfArgs(FunctionCallInfo fcinfo, const SparseVector *a, const SparseVector *b)
{
	FmgrInfo   *fl = fcinfo->flinfo;
	SpvDotCache *c;
	const SparseVector *prep,
			   *other;
	Datum		ra = PG_GETARG_DATUM(0);
	Datum		rb = PG_GETARG_DATUM(1);
	int			side;

	if (fl == NULL)
		return spv_dot(a->indices, SPV_VALUES(a), a->nnz,
					   b->indices, SPV_VALUES(b), b->nnz);
	c = (SpvDotCache *) fl->fn_extra;
	if (c == NULL)
	{
		c = MemoryContextAllocZero(fl->fn_mcxt, sizeof(SpvDotCache));
		c->side = -1;			/* the filter waits for a side that repeats */
		fl->fn_extra = c;
	}

	if (c->side >= 0 && DotCacheHolds(c, c->side == 0 ? a : b))
		side = c->side;
	else
	{
		if (c->side >= 0)
		{
			/* the copy is dropped: was it worth taking? */
			c->backoff = c->uses <= 1 ? Min(c->backoff * 2 + 1, 1023) : 0;
			c->wait = c->backoff;
			c->side = -1;
		}
		side = rb == c->last[1] ? 1 : ra == c->last[0] ? 0 : -1;
		if (side >= 0 && c->wait > 0)
		{
			c->wait--;
			side = -1;
		}
	}
	c->last[0] = ra;
	c->last[1] = rb;
	if (side < 0)
		return spv_dot(a->indices, SPV_VALUES(a), a->nnz,
					   b->indices, SPV_VALUES(b), b->nnz);

	prep = side == 0 ? a : b;
	other = side == 0 ? b : a;
	if (c->side < 0)
	{
		/* take a copy of prep and build its filter */
		if (c->filter == NULL)
			c->filter = MemoryContextAlloc(fl->fn_mcxt,
										   sizeof(uint64) * SPV_FILTER_WORDS);
		if (prep->nnz > c->cap)
		{
			int32		cap = Max(prep->nnz, 64);

			if (c->idx)
				pfree(c->idx);
			c->idx = MemoryContextAlloc(fl->fn_mcxt,
										(sizeof(int32) + sizeof(float)) * (Size) cap);
			c->val = (float *) (c->idx + cap);
			c->cap = cap;
		}
		c->dim = prep->dim;
		c->nnz = prep->nnz;
		memcpy(c->idx, prep->indices, sizeof(int32) * prep->nnz);
		memcpy(c->val, SPV_VALUES(prep), sizeof(float) * prep->nnz);
		spv_filter_build(c->filter, c->idx, c->nnz);
		c->side = side;
		c->uses = 0;
	}
	if (c->uses < PG_INT32_MAX)
		c->uses++;
	return spv_dot_filtered(c->filter, c->idx, c->val, c->nnz,
							other->indices, SPV_VALUES(other), other->nnz);
}

/*
 * inner_product(sparsevec, sparsevec): exact products, added in ascending
 * index order (spv_dot).  Finite for any finite float4 inputs.
 */
PG_FUNCTION_INFO_V1(spv_inner_product);
Datum
spv_inner_product(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	double		result;

	CheckDims(a, b);
	result = DotOfArgs(fcinfo, a, b);

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_FLOAT8(result);
}

/*
 * sparsevec_negative_inner_product(sparsevec, sparsevec): the function
 * behind <#>, and the score sparse_maxscore reproduces bit for bit.
 */
PG_FUNCTION_INFO_V1(spv_sparsevec_negative_inner_product);
Datum
spv_sparsevec_negative_inner_product(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	double		result;

	CheckDims(a, b);
	result = -DotOfArgs(fcinfo, a, b);

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_FLOAT8(result);
}

/* sum of squares in ascending index order */
static double
SquaredNorm(const SparseVector *a)
{
	const float *ax = SPV_VALUES(a);
	double		sum = 0.0;

	for (int i = 0; i < a->nnz; i++)
		sum = spv_norm_add(sum, ax[i]);
	return sum;
}

/*
 * cosine_distance(sparsevec, sparsevec): 1 - dot / sqrt(|a|^2 |b|^2),
 * with the similarity clamped to [-1, 1].  NaN if either vector is zero,
 * as in pgvector.
 */
PG_FUNCTION_INFO_V1(spv_cosine_distance);
Datum
spv_cosine_distance(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	double		similarity;

	CheckDims(a, b);

	similarity = DotOfArgs(fcinfo, a, b);
	similarity /= sqrt(SquaredNorm(a) * SquaredNorm(b));

	if (similarity > 1)
		similarity = 1.0;
	else if (similarity < -1)
		similarity = -1.0;

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_FLOAT8(1.0 - similarity);
}

/*
 * Merge the two index lists in ascending order and add up f(a_i - b_i)
 * over the union (missing entries are zero).  squared picks (d * d) over
 * fabs(d).
 */
static double
SumOfDifferences(const SparseVector *a, const SparseVector *b, bool squared)
{
	const float *ax = SPV_VALUES(a);
	const float *bx = SPV_VALUES(b);
	double		sum = 0.0;
	int			i = 0;
	int			j = 0;

	while (i < a->nnz || j < b->nnz)
	{
		double		d;

		if (j >= b->nnz || (i < a->nnz && a->indices[i] < b->indices[j]))
			d = (double) ax[i++];
		else if (i >= a->nnz || b->indices[j] < a->indices[i])
			d = -(double) bx[j++];
		else
			d = (double) ax[i++] - (double) bx[j++];

		sum += squared ? d * d : fabs(d);
	}
	return sum;
}

/* l2_distance(sparsevec, sparsevec): Euclidean distance */
PG_FUNCTION_INFO_V1(spv_l2_distance);
Datum
spv_l2_distance(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	double		result;

	CheckDims(a, b);
	result = sqrt(SumOfDifferences(a, b, true));

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_FLOAT8(result);
}

/* l1_distance(sparsevec, sparsevec): taxicab distance */
PG_FUNCTION_INFO_V1(spv_l1_distance);
Datum
spv_l1_distance(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	double		result;

	CheckDims(a, b);
	result = SumOfDifferences(a, b, false);

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_FLOAT8(result);
}

/* l2_norm(sparsevec): Euclidean norm */
PG_FUNCTION_INFO_V1(spv_l2_norm);
Datum
spv_l2_norm(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);

	PG_RETURN_FLOAT8(sqrt(SquaredNorm(a)));
}

/*
 * l2_normalize(sparsevec): a / |a| rounded to float4; values that round to
 * zero are dropped so the result stays canonical.  The zero vector stays
 * zero.  |a_i / |a|| <= 1, so nothing can overflow.
 */
PG_FUNCTION_INFO_V1(spv_l2_normalize);
Datum
spv_l2_normalize(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	const float *ax = SPV_VALUES(a);
	double		norm = sqrt(SquaredNorm(a));
	SparseVector *result;
	float	   *rx;
	int			nnz = 0;
	int			j = 0;

	if (norm == 0)
		PG_RETURN_SPARSEVEC_P(spv_new(a->dim, 0));

	for (int i = 0; i < a->nnz; i++)
	{
		if ((float) (ax[i] / norm) != 0)
			nnz++;
	}

	result = spv_new(a->dim, nnz);
	rx = SPV_VALUES(result);
	for (int i = 0; i < a->nnz; i++)
	{
		float		x = (float) (ax[i] / norm);

		if (x != 0)
		{
			result->indices[j] = a->indices[i];
			rx[j] = x;
			j++;
		}
	}
	Assert(j == nnz);

	PG_RETURN_SPARSEVEC_P(result);
}

/* nnz(sparsevec): the number of stored (nonzero) elements */
PG_FUNCTION_INFO_V1(spv_nnz);
Datum
spv_nnz(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);

	PG_RETURN_INT32(a->nnz);
}

/* dims(sparsevec): the number of dimensions */
PG_FUNCTION_INFO_V1(spv_dims);
Datum
spv_dims(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);

	PG_RETURN_INT32(a->dim);
}

/* ----------------------------------------------------------------
 * Comparison (btree support), pgvector's order
 * ----------------------------------------------------------------
 */

/*
 * Compare as the dense vectors would compare as arrays: element by element
 * over the common dimensions, then by dimensions (a prefix sorts first).
 * This is the order pgvector's sparsevec_cmp defines.  Values are finite
 * and nonzero, so the comparisons are total.
 */
static int
CompareVectors(const SparseVector *a, const SparseVector *b)
{
	const float *ax = SPV_VALUES(a);
	const float *bx = SPV_VALUES(b);
	int32		limit = Min(a->dim, b->dim);
	int			i = 0;
	int			j = 0;

	for (;;)
	{
		int32		ia = i < a->nnz ? a->indices[i] : INT_MAX;
		int32		ib = j < b->nnz ? b->indices[j] : INT_MAX;
		int32		pos = Min(ia, ib);
		float		va;
		float		vb;

		if (pos >= limit)
			break;

		va = (ia == pos) ? ax[i++] : 0.0f;
		vb = (ib == pos) ? bx[j++] : 0.0f;
		if (va < vb)
			return -1;
		if (va > vb)
			return 1;
	}

	if (a->dim < b->dim)
		return -1;
	if (a->dim > b->dim)
		return 1;
	return 0;
}

/* sparsevec_lt(sparsevec, sparsevec): less than */
PG_FUNCTION_INFO_V1(spv_sparsevec_lt);
Datum
spv_sparsevec_lt(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	bool		result = CompareVectors(a, b) < 0;

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_BOOL(result);
}

/* sparsevec_le(sparsevec, sparsevec): less than or equal */
PG_FUNCTION_INFO_V1(spv_sparsevec_le);
Datum
spv_sparsevec_le(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	bool		result = CompareVectors(a, b) <= 0;

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_BOOL(result);
}

/* sparsevec_eq(sparsevec, sparsevec): equal */
PG_FUNCTION_INFO_V1(spv_sparsevec_eq);
Datum
spv_sparsevec_eq(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	bool		result = CompareVectors(a, b) == 0;

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_BOOL(result);
}

/* sparsevec_ne(sparsevec, sparsevec): not equal */
PG_FUNCTION_INFO_V1(spv_sparsevec_ne);
Datum
spv_sparsevec_ne(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	bool		result = CompareVectors(a, b) != 0;

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_BOOL(result);
}

/* sparsevec_ge(sparsevec, sparsevec): greater than or equal */
PG_FUNCTION_INFO_V1(spv_sparsevec_ge);
Datum
spv_sparsevec_ge(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	bool		result = CompareVectors(a, b) >= 0;

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_BOOL(result);
}

/* sparsevec_gt(sparsevec, sparsevec): greater than */
PG_FUNCTION_INFO_V1(spv_sparsevec_gt);
Datum
spv_sparsevec_gt(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	bool		result = CompareVectors(a, b) > 0;

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_BOOL(result);
}

/* sparsevec_cmp(sparsevec, sparsevec): btree support: -1, 0 or 1 */
PG_FUNCTION_INFO_V1(spv_sparsevec_cmp);
Datum
spv_sparsevec_cmp(PG_FUNCTION_ARGS)
{
	SparseVector *a = PG_GETARG_SPARSEVEC_P(0);
	SparseVector *b = PG_GETARG_SPARSEVEC_P(1);
	int32		result = CompareVectors(a, b);

	/* comparisons run inside sorts: do not leak detoasted copies */
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	PG_RETURN_INT32(result);
}

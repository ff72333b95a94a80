/*-------------------------------------------------------------------------
 *
 * sparsevec.h
 *	  The sparsevec type: layout, limits and the one scoring function.
 *
 * The on-disk layout is pgvector's sparsevec layout (so that the binary
 * wire formats can match it field for field), but every C symbol here
 * carries our prefix: on PG15 two loaded libraries share one global symbol
 * scope (see STYLE.md section 7).
 *
 * A stored value is always canonical: indices strictly ascending, in
 * [0, dim), values finite and nonzero.  The index relies on that.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPARSEVEC_H
#define SPARSEVEC_H

#include "fmgr.h"
#include "utils/memutils.h"

#define SPV_MAX_DIM		1000000000
/* as many elements as one varlena of at most MaxAllocSize can hold */
#define SPV_MAX_NNZ \
	((int) ((MaxAllocSize - offsetof(SparseVector, indices)) / \
			(sizeof(int32) + sizeof(float))))

typedef struct SparseVector
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int32		dim;			/* number of dimensions */
	int32		nnz;			/* number of stored elements */
	int32		unused;			/* reserved, always 0 */
	int32		indices[FLEXIBLE_ARRAY_MEMBER];	/* 0-based, ascending */
	/* float values[nnz] follow indices[nnz] */
} SparseVector;

#define SPV_SIZE(nnz) \
	(offsetof(SparseVector, indices) + (Size) (nnz) * (sizeof(int32) + sizeof(float)))
#define SPV_VALUES(x)	((float *) ((x)->indices + (x)->nnz))

#define DatumGetSparseVectorP(x)	((SparseVector *) PG_DETOAST_DATUM(x))
#define PG_GETARG_SPARSEVEC_P(n)	DatumGetSparseVectorP(PG_GETARG_DATUM(n))
#define PG_RETURN_SPARSEVEC_P(x)	PG_RETURN_POINTER(x)

extern SparseVector *spv_new(int dim, int nnz);

/*
 * The scoring function.  Sum of a[i] * b[i] over the common indices, taken
 * in ascending index order, accumulated in double.  The SQL operator <#>
 * returns -(this) and the sparse_maxscore index reproduces it bit for bit:
 * a product of two float4 values is exact in double, so only the order of
 * the additions matters, and both sides add in ascending index order
 * starting from +0.0.  Do not reorder, vectorize with reassociation, or
 * build this with fast-math flags.
 */
static inline double
spv_dot(const int32 *ai, const float *av, int an,
		const int32 *bi, const float *bv, int bn)
{
	double		sum = 0.0;
	int			i = 0;
	int			j = 0;

	while (i < an && j < bn)
	{
		if (ai[i] == bi[j])
		{
			sum += (double) av[i] * (double) bv[j];
			i++;
			j++;
		}
		else if (ai[i] < bi[j])
			i++;
		else
			j++;
	}
	return sum;
}

#endif							/* SPARSEVEC_H */

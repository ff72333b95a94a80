/*-------------------------------------------------------------------------
 *
 * sparsevec.h
 *	  The sparsevec type: layout, limits and the one scoring function.
 *
 * The on-disk layout is pgvector's sparsevec layout (so that the binary
 * wire formats can match it field for field), but every C symbol here
 * carries our prefix: on PG15 two loaded libraries share one global symbol
 * scope (see doc/style.md, "Symbol hygiene").
 *
 * A stored value is always canonical: indices strictly ascending, in
 * [0, dim), values finite and nonzero.  The index relies on that.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPARSEVEC_H
#define SPARSEVEC_H

#include <float.h>
#include <math.h>

#include "fmgr.h"
#include "utils/memutils.h"

#include "spmcompat.h"

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
 * The score, and how the index reproduces it bit for bit.  The score of a
 * document d for a query q is the sum of q[i] * d[i] over their common
 * indices i, computed as follows, and nothing else:
 *
 *	 - every product is of two float4 values widened to double, which is
 *	   exact (24-bit significands, 48-bit product): spv_score_add();
 *	 - the sum is a double starting from +0.0;
 *	 - the products are added one at a time in ascending index order.
 *
 * Only the additions round, so any code that makes the same additions in
 * the same order gets the same bits.  The SQL operator <#> returns
 * -spv_dot().  The index scores pending documents with spv_dot_continue()
 * (spmpending.c), and segment documents term-at-a-time over the query
 * terms in ascending order, each posting's product added to its
 * document's sum (spm_block_accumulate in spmblock.c, taat in
 * spmtraverse.c), or, after MaxScore pruning, by rescoring the survivors
 * in ascending term order (canonical_score in spmtraverse.c); see
 * src/README "Exactness".  spv_dot, spv_dot_continue, spm_block_accumulate
 * and taat and canonical_score take every step with spv_score_add().
 *
 * Do not reorder, vectorize with reassociation, or build this with
 * fast-math flags.  The Makefile builds with -ffp-contract=off: a fused
 * multiply-add of an exact product would round the same, but nothing
 * should depend on that.  bench/truth.c, the benchmark's oracle, computes
 * the same sum on its own, on purpose: it checks this code, not itself.
 */

/*
 * One step of the score: sum + q * w.  q and w are float4 weights; q may
 * be passed already widened to double (as the traversal keeps it), which
 * changes nothing since widening is exact.
 */
static inline double
spv_score_add(double sum, double q, float w)
{
	return sum + q * (double) w;
}

/*
 * The merge behind spv_dot(), resumable: add to sum the products of a's
 * elements with b's matching elements from b[*bpos] on, in ascending index
 * order, and leave in *bpos the position in b to go on from.  A document
 * whose elements arrive in pieces (ascending across pieces) is scored by
 * calling it once per piece with the same *bpos and the running sum.
 */
static inline double
spv_dot_continue(const int32 *ai, const float *av, int an,
				 const int32 *bi, const float *bv, int bn,
				 int *bpos, double sum)
{
	int			i = 0;
	int			j = *bpos;

	/*
	 * Matches are rare, so the only branch is the match test; the two
	 * advances are computed without branching (faster than an if/else-if
	 * chain, which mispredicts on every step).
	 */
	while (i < an && j < bn)
	{
		int32		x = ai[i];
		int32		y = bi[j];

		if (x == y)
			sum = spv_score_add(sum, av[i], bv[j]);
		i += x <= y;
		j += y <= x;
	}
	*bpos = j;
	return sum;
}

/*
 * The scoring function: the sum of a[i] * b[i] over the common indices,
 * as described above.
 */
static inline double
spv_dot(const int32 *ai, const float *av, int an,
		const int32 *bi, const float *bv, int bn)
{
	int			j = 0;

	return spv_dot_continue(ai, av, an, bi, bv, bn, &j, 0.0);
}

/*
 * Cosine distance, and what a cosine index scores (issue 39).
 *
 * The operator <=> computes 1 - dot / sqrt(|a|^2 |b|^2) (sparsevec.c), the
 * squared norms summed with spv_norm_add in ascending index order from
 * +0.0.  A sparse_maxscore index of sparsevec_cosine_ops stores each
 * document's weights divided by its norm, rounded to float4
 * (spv_cosine_weight: a weight that would round to zero keeps its sign as
 * the smallest denormal, so that a document keeps its elements), and scores
 * the raw query against them with spv_score_add: an approximation of
 * |q| * cos(q, d) that the scan turns into a lower bound of the operator's
 * distance (spmscan.c, src/README "Cosine and L2").  The writer and the
 * pending list's scoring both normalize with these two functions, so a
 * document scores the same wherever it is.
 */
static inline double
spv_norm_add(double sum, float w)
{
	return sum + (double) w * (double) w;
}

static inline float
spv_cosine_weight(float w, double norm)
{
	float		r = (float) ((double) w / norm);

	if (r == 0.0f)
		r = w > 0 ? FLT_TRUE_MIN : -FLT_TRUE_MIN;
	return r;
}

/*
 * A document's weights as a cosine index stores them: out[i] =
 * spv_cosine_weight(in[i], |in|), the norm summed as the operator sums it.
 * out may be in.  Returns |in|.
 */
static inline double
spv_cosine_normalize(const float *in, float *out, int n)
{
	double		sum = 0.0;
	double		norm;

	for (int i = 0; i < n; i++)
		sum = spv_norm_add(sum, in[i]);
	norm = sqrt(sum);
	for (int i = 0; i < n; i++)
		out[i] = spv_cosine_weight(in[i], norm);
	return norm;
}

/*
 * L2 distance, and what an L2 index stores (src/README "Cosine and L2").
 *
 * An index of sparsevec_l2_ops ranks documents by q.d - |d|^2 / 2 and keeps
 * -|d|^2 / 2 as one more posting of every document with elements, on the
 * term just past the index's dimensions (so it is the last product of the
 * canonical sum, with query weight 1).  Its weight must never be below the
 * real -|d|^2 / 2 (a score's bound must be at least the real score), so
 * it is spv_l2_norm_weight(sum) of the squared norm summed with
 * spv_norm_add in ascending index order from +0.0 (sum of n elements):
 *   - sum is at most |d|^2 (1 + 1.01 (n - 1) 2^-53) (a sum of non-negative
 *     exact squares), so fl(sum * (1 - (n + 2) 2^-51)) is below |d|^2
 *     (1 - (n + 2) 2^-51 is exact for n < 2^27);
 *   - halving is exact, and the float4 is rounded towards zero;
 *   - beyond float4 range it is -FLT_MAX (above the real value); a weight
 *     that would be 0 is -FLT_TRUE_MIN instead (a posting is never 0),
 *     which may be below the real value by less than 2^-149: the scan's
 *     slack covers it.
 * The writer's sink and the pending list's scoring both use it.
 */
static inline float
spv_l2_norm_weight(double sum, int n)
{
	double		low = (sum * (1.0 - (double) (n + 2) * (1.0 / 2251799813685248.0))) * 0.5;
	float		f;

	if (low >= (double) FLT_MAX)
		f = FLT_MAX;
	else
	{
		f = (float) low;
		if ((double) f > low)
			f = nextafterf(f, 0.0f);
	}
	if (f == 0.0f)
		f = FLT_TRUE_MIN;
	return -f;
}

/*
 * A filter of a vector's indices: bit (index mod SPV_FILTER_BITS) is set for
 * each, so that an index whose bit is clear (most, for a short vector) is
 * rejected by one load and a test; a set bit may come from another index
 * with the same remainder, and the caller confirms it.  Used by
 * spv_dot_filtered below and by range pruning's scoring of forward-copy
 * documents against the query terms (spmrange.c).
 */
#define SPV_FILTER_BITS		65536
#define SPV_FILTER_WORDS	(SPV_FILTER_BITS / 64)

static inline void
spv_filter_add(uint64 *filter, uint32 x)
{
	uint32		t = x % SPV_FILTER_BITS;

	filter[t / 64] |= UINT64CONST(1) << (t % 64);
}

static inline bool
spv_filter_has(const uint64 *filter, uint32 x)
{
	uint32		t = x % SPV_FILTER_BITS;

	return (filter[t / 64] >> (t % 64)) & 1;
}

/*
 * spv_dot with one side prepared, for a vector scored against many others
 * (the <#> of a seq scan or of an ORDER BY's rows: sparsevec.c keeps the
 * prepared side per call site).  The filter holds the indices of the
 * prepared vector (qi, qv, qn).  The other vector's
 * elements are walked in their ascending order, most rejected by one load
 * and a test; a set bit (which another index with the same remainder may
 * have set) is confirmed by a binary search of qi from the last match on.
 * The matches come in ascending index order and each adds the same exact
 * product as in spv_dot, so the result is spv_dot's, bit for bit.
 * (A rank table or a byte table of positions instead of the search, and a
 * linear advance, measured the same: doc/decisions.md "The <#> operator
 * prepares a repeated argument".)
 */
static inline void
spv_filter_build(uint64 *filter, const int32 *qi, int qn)
{
	memset(filter, 0, SPV_FILTER_WORDS * sizeof(uint64));
	for (int k = 0; k < qn; k++)
		spv_filter_add(filter, (uint32) qi[k]);
}

static inline double
spv_dot_filtered(const uint64 *filter, const int32 *qi, const float *qv, int qn,
				 const int32 *ai, const float *av, int an)
{
	double		sum = 0.0;
	int			lo = 0;			/* qi[0 .. lo) are below every index to come */

	for (int i = 0; i < an; i++)
	{
		int32		x = ai[i];
		int			len;

		if (likely(!spv_filter_has(filter, (uint32) x)))
			continue;
		/* the first of qi[lo .. qn) that is >= x */
		len = qn - lo;
		while (len > 0)
		{
			int			half = len / 2;

			if (qi[lo + half] < x)
			{
				lo += half + 1;
				len -= half + 1;
			}
			else
				len = half;
		}
		if (lo == qn)
			break;				/* ascending: nothing more can match */
		if (qi[lo] == x)
		{
			sum = spv_score_add(sum, qv[lo], av[i]);
			lo++;
		}
	}
	return sum;
}

#endif							/* SPARSEVEC_H */

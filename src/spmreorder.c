/*-------------------------------------------------------------------------
 *
 * spmreorder.c
 *	  Docid order by recursive graph bisection (see spmreorder.h).
 *
 * A split of the positions [lo, hi) into L = [lo, mid) and R = [mid, hi)
 * is improved SPM_REORDER_ITERS times: the degree of every term in L and
 * in R is counted, each document gets the gain of moving it to the other
 * side, both sides are sorted by gain (largest first), and the i-th
 * documents of the two sides trade places for as long as their gains add
 * up to more than zero.  The cost being lowered is the log-gap estimate of
 * Dhulipala et al.: a term with degree d among n documents costs about
 * d * log2(n / (d + 1)) bits; the gain of a move is that cost of the
 * document's terms before it minus after it.  Then both halves are split
 * the same way, down to leaf documents.  Every level of the recursion
 * reads every document's terms 3 * iters times: O(postings * iters *
 * log(ndocs / leaf)).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "spmreorder.h"

typedef struct BpState
{
	const uint32 *off;
	const uint32 *terms;
	uint32		leaf;
	int			iters;
	uint32	   *perm;
	int32	   *deg_l;			/* [nterms] */
	int32	   *deg_r;			/* [nterms] */
	double	   *gain;			/* [ndocs], by document */
	float	   *lg;				/* [ndocs + 3]: log2(i), lg[0] = 0 */
} BpState;

/* larger gain first; equal gains by document number (deterministic) */
static int
cmp_gain(const void *a, const void *b, void *arg)
{
	const double *gain = (const double *) arg;
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	if (gain[x] != gain[y])
		return gain[x] > gain[y] ? -1 : 1;
	return x < y ? -1 : (x > y ? 1 : 0);
}

static void
bisect(BpState *st, uint32 lo, uint32 hi)
{
	uint32		n = hi - lo;
	uint32		mid;
	double		l2l;
	double		l2r;
	const float *lg = st->lg;

	if (n <= st->leaf)
		return;
	/* the left half: n / 2 rounded up to a multiple of leaf */
	mid = lo + (uint32) ((((uint64) n / 2 + st->leaf - 1) / st->leaf) * st->leaf);
	if (mid >= hi)
		return;
	l2l = log2((double) (mid - lo));
	l2r = log2((double) (hi - mid));

	for (int it = 0; it < st->iters; it++)
	{
		uint32		swapped = 0;

		CHECK_FOR_INTERRUPTS();
		for (uint32 i = lo; i < hi; i++)
		{
			uint32		d = st->perm[i];

			for (uint32 j = st->off[d]; j < st->off[d + 1]; j++)
				st->deg_l[st->terms[j]] = st->deg_r[st->terms[j]] = 0;
		}
		for (uint32 i = lo; i < hi; i++)
		{
			uint32		d = st->perm[i];
			int32	   *deg = i < mid ? st->deg_l : st->deg_r;

			for (uint32 j = st->off[d]; j < st->off[d + 1]; j++)
				deg[st->terms[j]]++;
		}
		for (uint32 i = lo; i < hi; i++)
		{
			uint32		d = st->perm[i];
			double		g = 0.0;

			for (uint32 j = st->off[d]; j < st->off[d + 1]; j++)
			{
				int32		a = st->deg_l[st->terms[j]];
				int32		b = st->deg_r[st->terms[j]];
				double		before = a * (l2l - lg[a + 1]) + b * (l2r - lg[b + 1]);

				if (i < mid)	/* a >= 1: the document is in L */
					g += before - ((a - 1) * (l2l - lg[a]) + (b + 1) * (l2r - lg[b + 2]));
				else			/* b >= 1 */
					g += before - ((a + 1) * (l2l - lg[a + 2]) + (b - 1) * (l2r - lg[b]));
			}
			st->gain[d] = g;
		}
		qsort_arg(st->perm + lo, mid - lo, sizeof(uint32), cmp_gain, st->gain);
		qsort_arg(st->perm + mid, hi - mid, sizeof(uint32), cmp_gain, st->gain);
		for (uint32 i = 0; lo + i < mid && mid + i < hi; i++)
		{
			uint32		x = st->perm[lo + i];
			uint32		y = st->perm[mid + i];

			if (!(st->gain[x] + st->gain[y] > 0.0))
				break;
			st->perm[lo + i] = y;
			st->perm[mid + i] = x;
			swapped++;
		}
		if (swapped == 0)
			break;
	}
	bisect(st, lo, mid);
	bisect(st, mid, hi);
}

void
spm_reorder_bisect(uint32 ndocs, const uint32 *off, const uint32 *terms,
				   uint32 nterms, uint32 leaf, int iters, uint32 *perm)
{
	BpState		st;

	for (uint32 i = 0; i < ndocs; i++)
		perm[i] = i;
	if (ndocs <= 1 || leaf == 0 || nterms == 0)
		return;
	for (uint32 j = 0; j < off[ndocs]; j++)
		if (terms[j] >= nterms)
			elog(ERROR, "sparse_maxscore: reorder term %u out of range", terms[j]);

	st.off = off;
	st.terms = terms;
	st.leaf = leaf;
	st.iters = iters;
	st.perm = perm;
	st.deg_l = palloc_extended((Size) nterms * sizeof(int32), MCXT_ALLOC_HUGE);
	st.deg_r = palloc_extended((Size) nterms * sizeof(int32), MCXT_ALLOC_HUGE);
	/* a batch of over 134M documents has a gain array above 1 GB */
	st.gain = palloc_extended((Size) ndocs * sizeof(double), MCXT_ALLOC_HUGE);
	st.lg = palloc_extended(((Size) ndocs + 3) * sizeof(float), MCXT_ALLOC_HUGE);
	st.lg[0] = 0.0f;
	for (uint32 i = 1; i < ndocs + 3; i++)
		st.lg[i] = (float) log2((double) i);

	/*
	 * A degree counts documents, so it stays below ndocs + 1 and inside
	 * lg[], only if no document repeats a term: checked (deg_l stamps the
	 * document that last had the term).
	 */
	memset(st.deg_l, 0xFF, (Size) nterms * sizeof(int32));
	for (uint32 d = 0; d < ndocs; d++)
		for (uint32 j = off[d]; j < off[d + 1]; j++)
		{
			if (st.deg_l[terms[j]] == (int32) d)
				elog(ERROR, "sparse_maxscore: reorder document %u repeats term %u",
					 d, terms[j]);
			st.deg_l[terms[j]] = (int32) d;
		}

	bisect(&st, 0, ndocs);

	pfree(st.lg);
	pfree(st.gain);
	pfree(st.deg_r);
	pfree(st.deg_l);
}

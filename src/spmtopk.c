/*-------------------------------------------------------------------------
 *
 * spmtopk.c
 *	  The top-k heap shared by the kernels and the pending list (see
 *	  spmtopk.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "spmtopk.h"

/* heap order: the root is the entry that comes last in result order */
static inline bool
heap_above(const SpmHit *a, const SpmHit *b)
{
	return spm_hit_before(b->score, b->docid, a->score, a->docid);
}

void
spm_topk_init(SpmTopK *topk, int k, SpmHit *storage)
{
	Assert(k >= 1);
	memset(topk, 0, sizeof(SpmTopK));
	topk->k = k;
	topk->heap = storage;
}

/*
 * An elastic heap (spmtopk.h) of at most k rows, sure of the want best:
 * best has room for want doubles, and gap >= 0.
 */
void
spm_topk_init_elastic(SpmTopK *topk, int k, SpmHit *storage, int want,
					  double gap, double *best)
{
	Assert(want >= 1 && k > want && gap >= 0.0);
	spm_topk_init(topk, k, storage);
	topk->want = want;
	topk->gap = gap;
	topk->theta = -HUGE_VAL;
	topk->best = best;
}

/* src into dst, with dst's entries in heap and its best scores in best */
void
spm_topk_copy(SpmTopK *dst, const SpmTopK *src, SpmHit *heap, double *best)
{
	*dst = *src;
	dst->heap = heap;
	dst->best = best;
	if (heap != src->heap)
		memcpy(heap, src->heap, src->n * sizeof(SpmHit));
	if (src->want > 0 && best != src->best)
		memcpy(best, src->best, src->nbest * sizeof(double));
}

static void
sift_down(SpmHit *h, int n, int i)
{
	SpmHit		x = h[i];

	for (;;)
	{
		int			c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && heap_above(&h[c + 1], &h[c]))
			c++;
		if (!heap_above(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* the score into the min-heap best[0 .. nbest) of the want best */
static void
best_push(SpmTopK *topk, double score)
{
	double	   *b = topk->best;
	int			i;

	if (topk->nbest < topk->want)
	{
		for (i = topk->nbest++; i > 0 && b[(i - 1) / 2] > score; i = (i - 1) / 2)
			b[i] = b[(i - 1) / 2];
		b[i] = score;
		return;
	}
	if (!(score > b[0]))
		return;
	for (i = 0;;)
	{
		int			c = 2 * i + 1;

		if (c >= topk->nbest)
			break;
		if (c + 1 < topk->nbest && b[c + 1] < b[c])
			c++;
		if (!(b[c] < score))
			break;
		b[i] = b[c];
		i = c;
	}
	b[i] = score;
}

/*
 * After x entered an elastic heap: raise theta, and drop the worst entry
 * while the next worst is below theta too, keeping the best row below it.
 * Every entry dropped comes after an entry that stays.
 */
static void
elastic_settle(SpmTopK *topk, double score)
{
	SpmHit	   *h = topk->heap;

	best_push(topk, score);
	if (topk->nbest < topk->want)
		return;
	topk->theta = Max(topk->theta, topk->best[0] - topk->gap);
	while (topk->n >= 2 && h[0].score < topk->theta)
	{
		/* the second worst entry is a child of the root */
		int			c = topk->n > 2 && heap_above(&h[2], &h[1]) ? 2 : 1;

		if (!(h[c].score < topk->theta))
			break;
		h[0] = h[--topk->n];
		sift_down(h, topk->n, 0);
	}
	if (h[0].score < topk->theta)
		topk->full = true;
}

/*
 * Offer (score, docid) to the heap.  Returns true if it was admitted.
 */
bool
spm_topk_push(SpmTopK *topk, double score, uint64 docid,
			  const ItemPointerData *tid)
{
	SpmHit	   *h = topk->heap;
	SpmHit		x;

	if (topk->full && !spm_hit_before(score, docid, h[0].score, h[0].docid))
		return false;

	x.score = score;
	x.docid = docid;
	if (tid)
		x.tid = *tid;
	else
		ItemPointerSetInvalid(&x.tid);

	if (topk->n < topk->k)
	{
		int			i = topk->n++;

		while (i > 0)
		{
			int			p = (i - 1) / 2;

			if (!heap_above(&x, &h[p]))
				break;
			h[i] = h[p];
			i = p;
		}
		h[i] = x;
	}
	else
	{
		h[0] = x;
		sift_down(h, topk->n, 0);
	}
	if (topk->n >= topk->k)
		topk->full = true;
	if (topk->want > 0)
		elastic_settle(topk, score);
	return true;
}

/*
 * Sort the heap's entries into result order (best first), in place.  The
 * heap is unusable afterwards except for reading heap[0 .. n-1].
 */
void
spm_topk_sort(SpmTopK *topk)
{
	SpmHit	   *h = topk->heap;

	/* repeatedly move the worst entry behind the shrinking heap */
	for (int n = topk->n; n > 1; n--)
	{
		SpmHit		worst = h[0];

		h[0] = h[n - 1];
		sift_down(h, n - 1, 0);
		h[n - 1] = worst;
	}
}

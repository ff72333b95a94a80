/*-------------------------------------------------------------------------
 *
 * spmtopk.c
 *	  The top-k heap shared by the kernels and the pending list (see
 *	  spmtopk.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
	topk->k = k;
	topk->n = 0;
	topk->heap = storage;
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

/*
 * Offer (score, docid) to the heap.  Returns true if it was admitted.
 */
bool
spm_topk_push(SpmTopK *topk, double score, uint64 docid,
			  const ItemPointerData *tid)
{
	SpmHit	   *h = topk->heap;
	SpmHit		x;

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
		return true;
	}
	if (!spm_hit_before(score, docid, h[0].score, h[0].docid))
		return false;
	h[0] = x;
	sift_down(h, topk->n, 0);
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

/*-------------------------------------------------------------------------
 *
 * spmtraverse.c
 *	  Exact top-k over one segment: windowed block-max MaxScore.
 *
 * The segment's local docids are cut into windows of SPM_WINDOW docids.
 * For each window:
 *
 *	1. Every query term gets a window bound wub: the largest block bound
 *	   (max(0, q * max_w) for q > 0, max(0, q * min_w) for q < 0) over its
 *	   blocks that overlap the window, read from the skip entries without
 *	   touching posting data.  If the bounds add up to less than the heap's
 *	   threshold theta, the window is skipped.
 *	2. MaxScore partition: terms sorted by wub ascending; the longest prefix
 *	   whose bounds add up to less than theta is "non-essential" -- a
 *	   document that only has those terms cannot reach theta.
 *	3. Essential terms are accumulated term-at-a-time, in ascending term
 *	   order, into a dense window accumulator of doubles.
 *	4. If every present term is essential the accumulator already holds
 *	   canonical scores (see spmtraverse.h) and is offered to the heap
 *	   directly.  Otherwise each document whose partial score plus the
 *	   non-essential bounds reaches theta probes the non-essential terms,
 *	   most valuable first, tightening with block bounds before decoding;
 *	   a survivor's canonical score is then computed by probing every term
 *	   in ascending term order.
 *
 * This is MaxScore (Turtle and Flood 1995) in the windowed, block-max form
 * Lucene's MaxScoreBulkScorer uses; pruning is safe because nothing is
 * dropped unless its upper bound plus a rounding margin is strictly below
 * theta, so ties at theta always reach the exact comparison.
 *
 * With exhaustive = true nothing is pruned: every window is scored in full
 * (the oracle for tests, and the fastest plan when pruning cannot help).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "sparsevec.h"
#include "spmtraverse.h"

/* ----------------------------------------------------------------
 * Top-k heap
 * ----------------------------------------------------------------
 */

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

/* ----------------------------------------------------------------
 * Term cursors
 * ----------------------------------------------------------------
 */

/* lowest docid block b can hold */
static inline uint32
block_first(const SpmTermCursor *c, int b)
{
	return b == 0 ? 0 : c->last[b - 1] + 1;
}

static inline void
note_decoded(SpmTraverse *t, SpmTermCursor *c, int b)
{
	t->counters->blocks_decoded++;
	t->counters->postings_decoded += c->count[b];
	if (!(c->seen[b >> 3] & (1 << (b & 7))))
	{
		c->seen[b >> 3] |= (1 << (b & 7));
		t->counters->blocks_skipped--;
	}
}

/* move the probe cursor to the first block that may hold d */
static inline void
probe_shallow(SpmTermCursor *c, uint32 d)
{
	while (c->pblk < c->nblocks && c->last[c->pblk] < d)
		c->pblk++;
}

/*
 * Probe for docid d (after probe_shallow).  Returns true and sets *w if
 * the term has a posting for d.  Probes must come in ascending d.
 */
static inline bool
probe_deep(SpmTraverse *t, SpmTermCursor *c, uint32 d, float *w)
{
	int			b = c->pblk;
	int			n;

	if (b >= c->nblocks || d < block_first(c, b))
		return false;
	if (c->pdec != b)
	{
		if (c->pdocs == NULL)
		{
			c->pdocs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
			c->pw = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
		}
		t->read_block(t->arg, c, b, c->pdocs, c->pw);
		note_decoded(t, c, b);
		c->pdec = b;
		c->ppos = 0;
	}
	n = c->count[b];
	while (c->ppos < n && c->pdocs[c->ppos] < d)
		c->ppos++;
	if (c->ppos < n && c->pdocs[c->ppos] == d)
	{
		*w = c->pw[c->ppos];
		return true;
	}
	return false;
}

/*
 * Term-at-a-time: add q * w of every posting with docid in [a, b) to
 * acc[docid - a].  Windows must come in ascending order.  With record,
 * the postings are also kept in c->wdocs/c->wvals (offsets from a), for
 * canonical_score.
 */
static void
taat(SpmTraverse *t, SpmTermCursor *c, uint32 a, uint32 b, double *acc,
	 bool record)
{
	const double q = c->q;
	int			j = c->tblk;

	c->wn = 0;
	while (j < c->nblocks && c->last[j] < a)
		j++;
	while (j < c->nblocks && block_first(c, j) < b)
	{
		int			n = c->count[j];
		int			p;

		/* a block the window holds whole: decode straight into acc */
		if (!record && c->tdec != j && block_first(c, j) >= a && c->last[j] < b)
		{
			t->accumulate_block(t->arg, c, j, q, acc, a);
			note_decoded(t, c, j);
			j++;
			continue;
		}
		if (c->tdec != j)
		{
			if (c->tdocs == NULL)
			{
				c->tdocs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
				c->tw = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
			}
			t->read_block(t->arg, c, j, c->tdocs, c->tw);
			note_decoded(t, c, j);
			c->tdec = j;
			c->tpos = 0;
		}
		p = c->tpos;
		while (p < n && c->tdocs[p] < a)
			p++;
		if (record)
		{
			for (; p < n; p++)
			{
				uint32		d = c->tdocs[p];

				if (d >= b)
					break;
				acc[d - a] = spv_score_add(acc[d - a], q, c->tw[p]);
				c->wdocs[c->wn] = (uint16) (d - a);
				c->wvals[c->wn] = c->tw[p];
				c->wn++;
			}
		}
		else
		{
			for (; p < n; p++)
			{
				uint32		d = c->tdocs[p];

				if (d >= b)
					break;
				acc[d - a] = spv_score_add(acc[d - a], q, c->tw[p]);
			}
		}
		c->tpos = p;
		if (p < n)
			break;				/* the block goes on in the next window */
		j++;
	}
	c->tblk = j;
}

/*
 * Set wub and present of every term for the window [a, b); returns the
 * sum of the bounds.
 */
static double
window_bounds(SpmTraverse *t, uint32 a, uint32 b)
{
	double		sum = 0.0;

	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];
		double		wub = 0.0;
		int			j;

		while (c->sblk < c->nblocks && c->last[c->sblk] < a)
			c->sblk++;
		c->wpost = 0;
		for (j = c->sblk; j < c->nblocks && block_first(c, j) < b; j++)
		{
			if (c->bub[j] > wub)
				wub = c->bub[j];
			c->wpost += c->count[j];
		}
		c->present = j > c->sblk;
		c->wub = wub;
		sum += wub;
	}
	return sum;
}

/*
 * Canonical score of local docid d in window [a, ...) of a MaxScore
 * window: q * w over the terms that hold d, in ascending term order, from
 * +0.0 (the same additions spv_dot makes).  Essential terms' postings of
 * the window were recorded by taat(); every non-essential term has just
 * been probed for d.
 */
static double
canonical_score(SpmTraverse *t, uint32 a, uint32 d)
{
	double		sum = 0.0;
	uint16		off = (uint16) (d - a);

	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];

		if (!c->present)
			continue;
		if (c->essential)
		{
			int			lo = 0;
			int			hi = c->wn - 1;

			while (lo <= hi)
			{
				int			mid = (lo + hi) >> 1;

				if (c->wdocs[mid] < off)
					lo = mid + 1;
				else if (c->wdocs[mid] > off)
					hi = mid - 1;
				else
				{
					sum = spv_score_add(sum, c->q, c->wvals[mid]);
					break;
				}
			}
		}
		else
		{
			Assert(c->probe_doc == d);
			if (c->probe_hit)
				sum = spv_score_add(sum, c->q, c->probe_w);
		}
	}
	t->counters->candidates++;
	return sum;
}

/* offer a document with canonical score s to the heap */
static inline void
consider(SpmTraverse *t, uint32 d, double s)
{
	uint64		docid = t->docid_lo + d;

	if (t->phase == SPM_PHASE_POSITIVE ? !(s > 0.0) : !(s < 0.0))
		return;
	if (!spm_topk_admits(t->topk, s, docid) ||
		!spm_is_after(&t->after, s, docid))
		return;
	if (t->is_alive && !t->is_alive(t->arg, d))
		return;
	spm_topk_push(t->topk, s, docid, NULL);
}

/* ----------------------------------------------------------------
 * Segment traversal
 * ----------------------------------------------------------------
 */

/*
 * Set the caller's part of cursor c (see SpmTermCursor) for query weight q
 * over a term whose block b holds weights in [min_w[b], max_w[b]]: the
 * block bounds go into bub[0 .. nblocks), which must outlive the
 * traversal.  The other arrays are referenced, not copied.
 */
void
spm_cursor_init(SpmTermCursor *c, double q, int nblocks, const uint32 *last,
				const float *max_w, const float *min_w, const uint32 *blkno,
				const uint16 *off, const uint8 *count, double *bub)
{
	double		amax = 0.0;

	/* a block's best contribution: q * max_w for q > 0, q * min_w for q < 0 */
	if (q > 0)
	{
		for (int b = 0; b < nblocks; b++)
			bub[b] = Max(q * max_w[b], 0.0);
	}
	else
	{
		for (int b = 0; b < nblocks; b++)
			bub[b] = Max(q * min_w[b], 0.0);
	}
	for (int b = 0; b < nblocks; b++)
		amax = Max(amax, Max(fabs(max_w[b]), fabs(min_w[b])));

	memset(c, 0, sizeof(SpmTermCursor));
	c->q = q;
	c->qabsmax = fabs(q) * amax;
	c->nblocks = nblocks;
	c->last = last;
	c->bub = bub;
	c->blkno = blkno;
	c->off = off;
	c->count = count;
}

/*
 * Prepare t (terms, ndocs, callbacks and the rest already set) for
 * spm_traverse_topk or spm_window_scores.  Scratch memory comes from
 * CurrentMemoryContext.
 *
 * The pruning margin: every bound and partial score is a sum of at most
 * nterms + 1 rounded terms, each bounded in magnitude by |q| * max|w|, so
 * its error is below (nterms + 1) * 2^-53 * sum(|q| * max|w|).  Twice
 * that, with room to spare, separates "certainly below theta" from "maybe
 * equal".
 */
void
spm_traverse_begin(SpmTraverse *t)
{
	double		absmass = 0.0;
	int64		blocks = 0;

	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];

		absmass += c->qabsmax;
		c->sblk = c->tblk = c->pblk = 0;
		c->tdec = c->pdec = -1;
		c->tpos = c->ppos = 0;
		c->seen = palloc0((c->nblocks + 7) / 8);
		c->tdocs = c->pdocs = NULL;
		c->tw = c->pw = NULL;
		blocks += c->nblocks;
	}
	t->counters->blocks_skipped += blocks;
	t->slack = absmass * (t->nterms + 8) * ldexp(1.0, -50);
	/*
	 * A window never reaches past ndocs, so only that much of the
	 * accumulator is ever read; zeroing all 128 kB for a small segment cost
	 * more than scoring it.  The rest is allocated only so that the block
	 * decoder's SPM_WINDOW - 1 mask keeps even a damaged block's writes in
	 * bounds (they are never read: it fails its skip-entry check).
	 */
	t->acc = palloc(SPM_WINDOW * sizeof(double));
	memset(t->acc, 0, Min(t->ndocs, SPM_WINDOW) * sizeof(double));
	t->order = palloc(Max(t->nterms, 1) * sizeof(int));
	t->next = 0;
	t->wdocs = NULL;
	t->wvals = NULL;
	t->wcap = 0;
	t->backoff = 0;
	t->skip_ms = 0;
	t->cand_rate = 1.0;
}

void
spm_traverse_end(SpmTraverse *t)
{
	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];

		pfree(c->seen);
		if (c->tdocs)
		{
			pfree(c->tdocs);
			pfree(c->tw);
		}
		if (c->pdocs)
		{
			pfree(c->pdocs);
			pfree(c->pw);
		}
	}
	pfree(t->acc);
	pfree(t->order);
	if (t->wdocs)
	{
		pfree(t->wdocs);
		pfree(t->wvals);
	}
}

/*
 * Room for the window's postings of every essential term (at most the
 * postings of its blocks that overlap the window).
 */
static void
reserve_window_buffers(SpmTraverse *t)
{
	int64		need = 0;

	for (int i = 0; i < t->nterms; i++)
	{
		if (t->terms[i].essential)
			need += t->terms[i].wpost;
	}
	if (need > t->wcap)
	{
		t->wcap = Max(need, t->wcap * 2);
		if (t->wdocs)
		{
			pfree(t->wdocs);
			pfree(t->wvals);
		}
		t->wdocs = palloc(t->wcap * sizeof(uint16));
		t->wvals = palloc(t->wcap * sizeof(float));
	}
	need = 0;
	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];

		if (c->essential)
		{
			c->wdocs = t->wdocs + need;
			c->wvals = t->wvals + need;
			need += c->wpost;
		}
	}
}

/* pruning threshold: a document needs a score of at least this */
static inline double
threshold(SpmTraverse *t)
{
	double		theta = t->phase == SPM_PHASE_POSITIVE ? 0.0 : -INFINITY;

	if (spm_topk_full(t->topk) && t->topk->heap[0].score > theta)
		theta = t->topk->heap[0].score;
	return theta;
}

/*
 * After a term-at-a-time window: with the threshold reached by now, how
 * many of its documents would have been MaxScore candidates?  A
 * document's full score bounds its essential score from above when the
 * non-essential contributions are not negative, which is close enough
 * for a prediction of the next window (t->cand_rate).
 */
#define SPM_PREDICT_STRIDE	8

static void
predict_candidates(SpmTraverse *t, const double *acc, uint32 n, int npresent)
{
	double		theta = threshold(t);
	double		noness = 0.0;
	double		thr;
	int			nne = 0;
	int64		count = 0;

	while (nne < npresent &&
		   noness + t->terms[t->order[nne]].wub + t->slack < theta)
		noness += t->terms[t->order[nne++]].wub;
	if (nne == 0)
		return;
	thr = theta - noness - t->slack;

	/*
	 * A rate for a cost estimate: every 8th document is enough (2,048 of a
	 * full window), and a pass over all of them cost 8% of a 100k-document
	 * query under callgrind.
	 */
	for (uint32 i = 0; i < n; i += SPM_PREDICT_STRIDE)
		count += acc[i] >= thr;
	t->cand_rate = (double) count / ((n + SPM_PREDICT_STRIDE - 1) / SPM_PREDICT_STRIDE);
}

/*
 * Should this window take the MaxScore path?  Skipping the non-essential
 * terms saves at most their postings (pn), and every candidate -- a
 * document whose essential score plus the non-essential bounds reaches
 * theta -- pays for probes.  So the path is taken only when the
 * non-essential terms hold at least half of the window's postings and the
 * expected probes (candidates, predicted from the previous window, times
 * the probes a candidate needs before the remaining bounds stop mattering,
 * estimated as one plus the non-essential terms carrying at least a tenth
 * of their total bound) cost well under pn; topk_window does not even ask
 * while backing off after a window where the probes cost more than they
 * saved.  Otherwise every present term is essential: plain
 * term-at-a-time, whose sums are already canonical.  Either way the
 * result is exact; this only picks the cheaper plan.
 */
#define SPM_PROBE_COST		8	/* a probe costs about this many postings */

static bool
use_maxscore(SpmTraverse *t, int nne, int npresent, uint32 ndocs,
			 double noness)
{
	int64		pn = 0;
	int64		pall = 0;
	int			heavy = 0;

	if (nne == 0)
		return false;
	if (t->always_maxscore)
		return true;
	for (int k = 0; k < npresent; k++)
	{
		SpmTermCursor *c = &t->terms[t->order[k]];

		pall += c->wpost;
		if (!c->essential)
		{
			pn += c->wpost;
			/* probing stops once the remaining bounds cannot matter */
			if (c->wub >= 0.1 * noness)
				heavy++;
		}
	}
	t->window_pn = pn;
	return pn * 2 >= pall &&
		t->cand_rate * ndocs * (1 + heavy) * SPM_PROBE_COST <= (double) pn;
}

/* qsort_arg comparator: term indexes by window bound, then index */
static int
cmp_wub(const void *a, const void *b, void *arg)
{
	const SpmTermCursor *terms = arg;
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	if (terms[x].wub != terms[y].wub)
		return terms[x].wub < terms[y].wub ? -1 : 1;
	return (x > y) - (x < y);
}

/*
 * The plan for one window (partition_window): skip it, score it
 * term-at-a-time over every present term, or take the MaxScore path with
 * the nne terms order[0 .. nne) non-essential, their bounds adding up to
 * noness.
 */
typedef enum SpmWindowPath
{
	SPM_WINDOW_SKIP,
	SPM_WINDOW_TAAT,
	SPM_WINDOW_MAXSCORE
} SpmWindowPath;

typedef struct SpmWindowPlan
{
	SpmWindowPath path;
	int			npresent;		/* terms with a block in the window */
	int			nne;			/* non-essential terms (MaxScore only) */
	double		noness;			/* the sum of their window bounds */
} SpmWindowPlan;

/* sort t->order[0 .. n) by window bound, ascending, ties in term order */
static void
sort_by_window_bound(SpmTraverse *t, int n)
{
	int		   *order = t->order;

	/*
	 * insertion sort for the usual few terms, qsort_arg beyond (a query may
	 * have 100000 terms: quadratic would take minutes)
	 */
	if (n > 64)
	{
		qsort_arg(order, n, sizeof(int), cmp_wub, t->terms);
		return;
	}
	for (int i = 1; i < n; i++)
	{
		int			x = order[i];
		int			j = i;

		while (j > 0 && t->terms[order[j - 1]].wub > t->terms[x].wub)
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
}

/*
 * Step 1 and 2 of the file header: window bounds, the skip test, the
 * MaxScore partition and the cost rule.  Sets every term's essential flag
 * to match the plan.
 */
static void
partition_window(SpmTraverse *t, uint32 a, uint32 b, SpmWindowPlan *plan)
{
	double		theta = threshold(t);
	double		sumub;
	int		   *order = t->order;

	plan->npresent = 0;
	plan->nne = 0;
	plan->noness = 0.0;

	/*
	 * Pruning applies to the positive phase only: in the negative phase the
	 * threshold is below zero and no bound (all >= 0) can fall under it.
	 */
	if (t->exhaustive || t->phase != SPM_PHASE_POSITIVE || t->skip_ms > 0)
	{
		/* no pruning here (or backing off from MaxScore: see use_maxscore) */
		if (t->skip_ms > 0)
			t->skip_ms--;
		for (int i = 0; i < t->nterms; i++)
			t->terms[i].essential = true;
		plan->path = SPM_WINDOW_TAAT;
		return;
	}

	sumub = window_bounds(t, a, b);
	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];

		c->essential = c->present;
		if (c->present)
			order[plan->npresent++] = i;
	}
	if (plan->npresent == 0)
	{
		plan->path = SPM_WINDOW_SKIP;
		return;
	}
	if (sumub + t->slack < theta)
	{
		t->counters->windows_skipped++;
		plan->path = SPM_WINDOW_SKIP;
		return;
	}

	sort_by_window_bound(t, plan->npresent);
	while (plan->nne < plan->npresent &&
		   plan->noness + t->terms[order[plan->nne]].wub + t->slack < theta)
	{
		plan->noness += t->terms[order[plan->nne]].wub;
		t->terms[order[plan->nne]].essential = false;
		plan->nne++;
	}
	if (use_maxscore(t, plan->nne, plan->npresent, b - a, plan->noness))
	{
		plan->path = SPM_WINDOW_MAXSCORE;
		return;
	}
	for (int k = 0; k < plan->nne; k++)
		t->terms[order[k]].essential = true;
	plan->nne = 0;
	plan->path = SPM_WINDOW_TAAT;
}

/*
 * Step 4, every term essential: acc[0 .. n) holds canonical scores of the
 * window starting at a; offer every document that can qualify, then clear
 * acc.
 */
static void
offer_window(SpmTraverse *t, uint32 a, uint32 n, int npresent)
{
	double	   *acc = t->acc;
	double		theta = threshold(t);
	uint32		i = 0;
	int64		scored = 0;

	/* most windows hold only a few: test eight at a time first */
	for (; i + 8 <= n; i += 8)
	{
		double	   *x = acc + i;

		scored += (x[0] != 0.0) + (x[1] != 0.0) + (x[2] != 0.0) +
			(x[3] != 0.0) + (x[4] != 0.0) + (x[5] != 0.0) +
			(x[6] != 0.0) + (x[7] != 0.0);
		if ((x[0] >= theta) | (x[1] >= theta) | (x[2] >= theta) |
			(x[3] >= theta) | (x[4] >= theta) | (x[5] >= theta) |
			(x[6] >= theta) | (x[7] >= theta))
		{
			for (int j = 0; j < 8; j++)
			{
				if (x[j] >= theta && x[j] != 0.0)
				{
					consider(t, a + i + j, x[j]);
					theta = threshold(t);
				}
			}
		}
	}
	for (; i < n; i++)
	{
		scored += (acc[i] != 0.0);
		if (acc[i] >= theta && acc[i] != 0.0)
		{
			consider(t, a + i, acc[i]);
			theta = threshold(t);
		}
	}
	t->counters->candidates += scored;
	if (npresent > 0)
		predict_candidates(t, acc, n, npresent);
	memset(acc, 0, n * sizeof(double));
}

/*
 * Probe the non-essential terms for candidate d (partial = its essential
 * score), largest bound first, stopping as soon as its bound cannot reach
 * theta.  Returns false if d is pruned; otherwise every non-essential term
 * has been probed for d, as canonical_score needs.  *probes counts probes.
 */
static bool
probe_candidate(SpmTraverse *t, uint32 d, double partial,
				const SpmWindowPlan *plan, double theta, int64 *probes)
{
	double		rest = plan->noness;
	double		slack = t->slack;

	for (int k = plan->nne - 1; k >= 0; k--)
	{
		SpmTermCursor *c = &t->terms[t->order[k]];
		float		w = 0;

		rest -= c->wub;
		(*probes)++;
		probe_shallow(c, d);
		c->probe_doc = d;
		c->probe_hit = false;
		if (c->pblk < c->nblocks && d >= block_first(c, c->pblk))
		{
			if (partial + c->bub[c->pblk] + rest + slack < theta)
				return false;
			if (probe_deep(t, c, d, &w))
			{
				c->probe_hit = true;
				c->probe_w = w;
				partial += c->q * (double) w;
			}
		}
		if (partial + rest + slack < theta)
			return false;
	}
	return true;
}

/*
 * Step 4, MaxScore: acc holds the essential terms' partial scores of the
 * window [a, b); every document whose partial score plus the non-essential
 * bounds can reach theta is probed, and a survivor is offered with its
 * canonical score.  Clears acc.  Then the back-off rule: for 2, 4, 8 ...
 * windows when the probes cost more than decoding the non-essential
 * postings would have (a probe counts as a few postings' worth of work).
 */
static void
maxscore_window(SpmTraverse *t, uint32 a, uint32 b, const SpmWindowPlan *plan)
{
	double	   *acc = t->acc;
	double		theta = threshold(t);
	int64		decoded_before = t->counters->postings_decoded;
	int64		probes = 0;
	int64		ncand = 0;

	for (uint32 d = a; d < b; d++)
	{
		double		partial = acc[d - a];

		acc[d - a] = 0.0;
		if (partial + plan->noness + t->slack < theta)
			continue;
		ncand++;
		if (!probe_candidate(t, d, partial, plan, theta, &probes))
			continue;
		consider(t, d, canonical_score(t, a, d));
		theta = threshold(t);
	}

	t->cand_rate = (double) ncand / (b - a);
	if (t->counters->postings_decoded - decoded_before +
		probes * SPM_PROBE_COST > t->window_pn)
	{
		t->backoff = t->backoff ? Min(t->backoff * 2, 64) : 2;
		t->skip_ms = t->backoff;
	}
	else
		t->backoff = 0;
}

/*
 * One window [a, b): plan it, accumulate its essential terms
 * term-at-a-time (step 3), then offer its documents by the plan's path.
 */
static void
topk_window(SpmTraverse *t, uint32 a, uint32 b)
{
	SpmWindowPlan plan;
	bool		maxscore;

	t->counters->windows++;
	partition_window(t, a, b, &plan);
	if (plan.path == SPM_WINDOW_SKIP)
		return;
	maxscore = plan.path == SPM_WINDOW_MAXSCORE;

	/* acc is all zeros here: offer_window and maxscore_window clear it */
	if (maxscore)
		reserve_window_buffers(t);
	for (int i = 0; i < t->nterms; i++)
	{
		SpmTermCursor *c = &t->terms[i];

		if (c->essential)
			taat(t, c, a, b, t->acc, maxscore);
	}
	if (maxscore)
		maxscore_window(t, a, b, &plan);
	else
		offer_window(t, a, b - a, plan.npresent);
}

/*
 * Offer every document of the segment that can enter the heap.
 */
void
spm_traverse_topk(SpmTraverse *t)
{
	for (uint64 a = 0; a < t->ndocs; a += SPM_WINDOW)
	{
		topk_window(t, (uint32) a, (uint32) Min(a + SPM_WINDOW, t->ndocs));
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Canonical scores of every local docid in [a, b), returned in t->acc[0 ..
 * b-a) (valid until the next call): exhaustive term-at-a-time over all
 * terms in ascending term order, so every entry equals spv_dot of the
 * document and the query (0 for a document without a query term).  b - a
 * <= SPM_WINDOW; windows must come in ascending order.
 */
const double *
spm_window_scores(SpmTraverse *t, uint32 a, uint32 b)
{
	Assert(b > a && b - a <= SPM_WINDOW && a >= t->next);
	t->next = b;
	t->counters->windows++;
	memset(t->acc, 0, (b - a) * sizeof(double));
	for (int i = 0; i < t->nterms; i++)
		taat(t, &t->terms[i], a, b, t->acc, false);
	return t->acc;
}

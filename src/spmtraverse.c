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
 *	   directly: all of it, or, in a sparse window (few postings for its
 *	   width, window_is_sparse), only the offsets step 3 listed, so that
 *	   a short query costs what its postings cost, not what the
 *	   segment's width does.  Otherwise each document whose partial score plus the
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
 * The phase (spmtopk.h) says which rows are offered: scores above 0, below
 * 0, or of any sign.  Bounds are never below 0, so only a threshold above
 * 0 prunes as above.  In the phase of any sign (an L2 index's rounds),
 * until the heap's worst row scores above 0, a window is scored in full,
 * every docid offered (untouched ones at 0), or, when the caller says the
 * last term is an L2 norm term and its blocks cover the window, by that
 * term's signed block bounds (signed_window); from then on it is pruned
 * as in the positive phase.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "sparsevec.h"
#include "spmtraverse.h"
#include "spmtest.h"

/* ----------------------------------------------------------------
 * Term cursors and the traversal's state (see spmtraverse.h: private
 * here, allocated by spm_traverse_begin)
 * ----------------------------------------------------------------
 */

/*
 * One query term's cursor over its blocks.  It starts with a copy of the
 * caller's SpmQueryTerm: the hot loops read q, nblocks, last and count at
 * a fixed offset, as they did when the caller's fields and the state were
 * one public struct, and the callbacks get &c->term.
 *
 * Pointers first, then 4-byte fields, then flags: the cursor is then 192
 * bytes on a 64-bit machine, three cache lines.  The traversal indexes its
 * array of cursors by term number everywhere (terms[order[k]]), and gcc
 * turns a multiply by 192 into a shift and an lea; at 176 bytes (the first
 * layout of this split) the longer multiply cost more instructions
 * (doc/decisions.md, "Traversal state is private").
 */
typedef struct SpmTermCursor
{
	SpmQueryTerm term;			/* the caller's description, copied */

	double		wub;			/* bound of the current window */
	int64		wpost;			/* postings of blocks overlapping it */
	/* MaxScore windows: essential postings of the window (offsets) */
	uint16	   *wdocs;
	float	   *wvals;
	uint8	   *seen;			/* bitmap of blocks decoded at least once */
	/* decoded blocks, [SPM_BLOCK_POSTINGS] each */
	uint32	   *tdocs;
	float	   *tw;
	uint32	   *pdocs;
	float	   *pw;

	int			wn;				/* entries in wdocs/wvals */
	/* MaxScore windows: the last probe of a non-essential term */
	uint32		probe_doc;
	float		probe_w;
	int			sblk;			/* first block not wholly before window */
	int			tblk;			/* term-at-a-time: current block */
	int			tdec;			/* block decoded in tdocs, or -1 */
	int			tpos;
	int			pblk;			/* probe: current block */
	int			pdec;			/* block decoded in pdocs, or -1 */
	int			ppos;

	bool		present;		/* has a block overlapping the window */
	bool		essential;
	bool		probe_hit;
} SpmTermCursor;

#if SIZEOF_VOID_P == 8
StaticAssertDecl(sizeof(SpmTermCursor) == 192,
				 "SpmTermCursor is 192 bytes: see its comment");
#endif

/*
 * MaxScore's candidate prediction samples every SPM_PREDICT_STRIDE-th
 * document of a term-at-a-time window (predict_candidates)
 */
#define SPM_PREDICT_STRIDE	8

/*
 * window_is_sparse: at most one posting per SPM_SPARSE_RATIO docids
 * (test/unit builds it with 1 too: every window sparse)
 */
#ifndef SPM_SPARSE_RATIO
#define SPM_SPARSE_RATIO	4
#endif

/*
 * Entries of the samples array: offer_window keeps one per
 * SPM_PREDICT_STRIDE docids, offer_touched up to one per posting of a
 * sparse window (and writes one further)
 */
#define SPM_SAMPLES_CAP \
	(SPM_WINDOW / Min(SPM_PREDICT_STRIDE, SPM_SPARSE_RATIO) + 1)

struct SpmTraverseState
{
	SpmTraverse t;				/* a copy of the caller's part (one load
								 * less than a pointer to it) */
	SpmTermCursor *terms;		/* [nterms], in the caller's order */
	int			nterms;
	double		slack;			/* pruning margin, see spm_traverse_begin */
	double	   *acc;			/* [SPM_WINDOW], all zeros between windows
								 * of spm_traverse_topk */
	uint64	   *touched;		/* [SPM_WINDOW / 64]: MaxScore and the
								 * sparse windows of signed_window, bit of
								 * every offset an essential posting added
								 * to; all zeros between windows */
	uint16	   *tlist;			/* [SPM_WINDOW + 1]: sparse windows, the
								 * offsets added to, in the order listed
								 * (TAAT_LIST, TAAT_MARK) */
	uint32		ntl;			/* offsets in tlist; 0 between windows */
	double	   *samples;		/* [SPM_SAMPLES_CAP]: the window's sampled
								 * scores, for the candidate prediction
								 * (offer_window, offer_touched) */
	int		   *order;			/* [nterms] */
	uint8	   *seen;			/* every term's seen bitmap, one array */
	uint32		next;			/* next window start (spm_window_scores) */
	SpmTraverseScratch *mem;	/* t.scratch, or own: where the pool and
								 * the terms' window postings live */
	SpmTraverseScratch own;		/* without t.scratch: in CurrentMemoryContext,
								 * freed at the end */
	int64		window_pn;		/* non-essential postings of the window */
	int			backoff;		/* MaxScore back-off, in windows */
	int			skip_ms;		/* windows left before MaxScore is retried */
	double		cand_rate;		/* candidates per document, last window */
};

/* lowest docid block b can hold */
static inline uint32
block_first(const SpmTermCursor *c, int b)
{
	return b == 0 ? 0 : c->term.last[b - 1] + 1;
}

/*
 * Block b's bound: the largest contribution a posting of it can make, or
 * 0; q * max_w for q > 0, q * min_w for q < 0.
 */
static inline double
block_bound(const SpmTermCursor *c, int b)
{
	const float *bw = c->term.q > 0 ? c->term.max_w : c->term.min_w;

	return Max(c->term.q * bw[b], 0.0);
}

/* the same for group g of SPM_SKIP_GROUP blocks (term.sum) */
static inline double
group_bound(const SpmTermCursor *c, int g)
{
	const float *bw = c->term.q > 0 ? c->term.sum->gmax_w :
		c->term.sum->gmin_w;

	return Max(c->term.q * bw[g], 0.0);
}

/*
 * The first block after block lo whose last docid is at least d (n if
 * none), given last[lo] < d: a galloping search, so that a cursor moving
 * far pays for the logarithm of the distance, not for every block in
 * between.
 */
static pg_noinline int
seek_block_far(const uint32 *last, int n, int lo, uint32 d)
{
	int			hi;
	int			step = 1;

	for (;;)
	{
		hi = lo + step;
		if (hi >= n)
		{
			hi = n;
			break;
		}
		if (last[hi] >= d)
			break;
		lo = hi;
		step <<= 1;
	}
	/* last[lo] < d, and hi == n or last[hi] >= d */
	while (hi - lo > 1)
	{
		int			mid = lo + (hi - lo) / 2;

		if (last[mid] < d)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 * The first block at or after block `from` whose last docid is at least d
 * (nblocks if none).  Most moves are by zero blocks or one (probes of
 * nearby documents, the next window of a sparse term), and those are
 * looked at inline; longer ones, across a whole window or segment of a
 * long list when a sparser term sets the pace, gallop.
 */
static inline int
seek_block(const SpmTermCursor *c, int from, uint32 d)
{
	const uint32 *last = c->term.last;
	const int	n = c->term.nblocks;

	if (from >= n || last[from] >= d)
		return from;
	if (from + 1 >= n || last[from + 1] >= d)
		return from + 1;
	return seek_block_far(last, n, from + 1, d);
}

static inline void
note_decoded(SpmTraverseState *s, SpmTermCursor *c, int b)
{
	s->t.counters->blocks_decoded++;
	s->t.counters->postings_decoded += c->term.count[b];
	if (!(c->seen[b >> 3] & (1 << (b & 7))))
	{
		c->seen[b >> 3] |= (1 << (b & 7));
		s->t.counters->blocks_skipped--;
	}
}

/* move the probe cursor to the first block that may hold d */
static inline void
probe_shallow(SpmTermCursor *c, uint32 d)
{
	c->pblk = seek_block(c, c->pblk, d);
}

/*
 * Probe for docid d (after probe_shallow).  Returns true and sets *w if
 * the term has a posting for d.  Probes must come in ascending d.
 */
static inline bool
probe_deep(SpmTraverseState *s, SpmTermCursor *c, uint32 d, float *w)
{
	int			b = c->pblk;
	int			n;

	if (b >= c->term.nblocks || d < block_first(c, b))
		return false;
	if (c->pdec != b)
	{
		s->t.read_block(s->t.arg, &c->term, b, c->pdocs, c->pw);
		note_decoded(s, c, b);
		c->pdec = b;
		c->ppos = 0;
	}
	n = c->term.count[b];
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
 * Decode block j of c into c->tdocs / c->tw unless it is there already
 * (a block that goes on from the previous window), and return the
 * position of its first posting at docid a or after (from c->tpos, where
 * the previous window stopped).
 */
static inline int
block_from(SpmTraverseState *s, SpmTermCursor *c, int j, uint32 a)
{
	int			n = c->term.count[j];
	int			p;

	if (c->tdec != j)
	{
		s->t.read_block(s->t.arg, &c->term, j, c->tdocs, c->tw);
		note_decoded(s, c, j);
		c->tdec = j;
		c->tpos = 0;
	}
	p = c->tpos;
	while (p < n && c->tdocs[p] < a)
		p++;
	return p;
}

/*
 * How taat() leaves a window's postings behind, besides their sums in acc:
 *	TAAT_DENSE	nothing else: the caller walks all of acc (offer_window)
 *	TAAT_LIST	every offset added to is in s->tlist, so that offer_touched
 *				visits only those (a sparse window): listed when its sum
 *				was 0 before the addition, so an offset whose sum is 0
 *				again may be listed twice (harmless: see offer_touched)
 *	TAAT_MARK	every offset added to is marked in s->touched and listed
 *				once in s->tlist (the sparse windows of signed_window,
 *				which reads the marks)
 *	TAAT_RECORD as TAAT_MARK's marks, and the postings are kept in c->wdocs
 *				and c->wvals (offsets from a) for canonical_score
 *				(MaxScore)
 */
typedef enum TaatMode
{
	TAAT_DENSE,
	TAAT_LIST,
	TAAT_MARK,
	TAAT_RECORD
} TaatMode;

/*
 * Term-at-a-time: add q * w of every posting with docid in [a, b) to
 * acc[docid - a], and keep what mode asks for.  Windows must come in
 * ascending order.
 */
static void
taat(SpmTraverseState *s, SpmTermCursor *c, uint32 a, uint32 b, double *acc,
	 TaatMode mode)
{
	const double q = c->term.q;
	uint64	   *touched = s->touched;
	uint16	   *tlist = s->tlist;
	uint32		ntl = s->ntl;
	int			j = c->tblk;

	c->wn = 0;
	j = seek_block(c, j, a);
	while (j < c->term.nblocks && block_first(c, j) < b)
	{
		int			n = c->term.count[j];
		int			p;

		/* a block the window holds whole: decode straight into acc */
		if (mode == TAAT_DENSE && c->tdec != j && block_first(c, j) >= a &&
			c->term.last[j] < b)
		{
			s->t.accumulate_block(s->t.arg, &c->term, j, q, acc, a);
			note_decoded(s, c, j);
			j++;
			continue;
		}
		p = block_from(s, c, j, a);
		if (mode == TAAT_RECORD)
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
				touched[(d - a) >> 6] |= UINT64CONST(1) << ((d - a) & 63);
			}
		}
		else if (mode == TAAT_LIST)
		{
			/*
			 * No bitmap: a bit's read-modify-write carried a dependency
			 * through memory from one posting to the next of the same 64
			 * docids (doc/decisions.md "Sparse windows visit a list")
			 */
			for (; p < n; p++)
			{
				uint32		d = c->tdocs[p];
				uint32		o = d - a;
				double		old;

				if (d >= b)
					break;
				old = acc[o];
				tlist[ntl] = (uint16) o;
				ntl += old == 0.0;
				acc[o] = spv_score_add(old, q, c->tw[p]);
			}
		}
		else if (mode == TAAT_MARK)
		{
			for (; p < n; p++)
			{
				uint32		d = c->tdocs[p];
				uint32		o = d - a;
				uint64		bit,
							word;

				if (d >= b)
					break;
				bit = UINT64CONST(1) << (o & 63);
				word = touched[o >> 6];
				acc[o] = spv_score_add(acc[o], q, c->tw[p]);
				/* listed once, at its first mark: no branch */
				tlist[ntl] = (uint16) o;
				ntl += (word & bit) == 0;
				touched[o >> 6] = word | bit;
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
	/* at most one entry a posting, and a sparse window has few */
	Assert(ntl <= SPM_WINDOW);
	s->ntl = ntl;
}

/*
 * Set wub, wpost and present of every term for the window [a, b); returns
 * the sum of the bounds.  The walk over the blocks overlapping the window
 * takes a whole group of SPM_SKIP_GROUP blocks in one step where the
 * window covers it, with the group's bound and postings from the summary.
 * For q > 0, q * max(max_w) is the largest of the q * max_w (a product
 * rounds monotonically in its factor), so the group's bound is exactly
 * the largest of its blocks'.  Otherwise the walk goes block by block,
 * rather than searching for the window's last block: a term has a few
 * blocks per window, and on large segments a galloping search for the
 * last one cost more than the walk it saved (doc/decisions.md, "Skip-entry
 * summaries").
 */
static double
window_bounds(SpmTraverseState *s, uint32 a, uint32 b)
{
	double		sum = 0.0;

	for (int i = 0; i < s->nterms; i++)
	{
		SpmTermCursor *c = &s->terms[i];
		const int	n = c->term.nblocks;
		const uint32 *last = c->term.last;
		double		wub = 0.0;
		int64		wpost = 0;
		int			j;

		c->sblk = j = seek_block(c, c->sblk, a);
		while (j < n && block_first(c, j) < b)
		{
			/* all of group j's blocks start before b: take it whole */
			if (j % SPM_SKIP_GROUP == 0 && j + SPM_SKIP_GROUP <= n &&
				last[j + SPM_SKIP_GROUP - 2] + 1 < b)
			{
				wub = Max(wub, group_bound(c, j / SPM_SKIP_GROUP));
				wpost += c->term.sum->gcount[j / SPM_SKIP_GROUP];
				j += SPM_SKIP_GROUP;
			}
			else
			{
				wub = Max(wub, block_bound(c, j));
				wpost += c->term.count[j];
				j++;
			}
		}
		c->present = j > c->sblk;
		c->wpost = wpost;
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
canonical_score(SpmTraverseState *s, uint32 a, uint32 d)
{
	double		sum = 0.0;
	uint16		off = (uint16) (d - a);

	for (int i = 0; i < s->nterms; i++)
	{
		SpmTermCursor *c = &s->terms[i];

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
					sum = spv_score_add(sum, c->term.q, c->wvals[mid]);
					break;
				}
			}
		}
		else
		{
			Assert(c->probe_doc == d);
			if (c->probe_hit)
				sum = spv_score_add(sum, c->term.q, c->probe_w);
		}
	}
	s->t.counters->candidates++;
	return sum;
}

/* offer a document with canonical score `score` to the heap */
static inline void
consider(SpmTraverseState *s, uint32 d, double score)
{
	const SpmTraverse *t = &s->t;
	uint64		docid = t->docid_lo + d;

	if (!spm_phase_admits(t->phase, score))
		return;
	if (!spm_topk_admits(t->topk, score, docid) ||
		!spm_is_after(&t->after, score, docid))
		return;
	if (t->is_alive && !t->is_alive(t->arg, d))
		return;
	spm_topk_push(t->topk, score, docid, NULL);
}

/* ----------------------------------------------------------------
 * Segment traversal
 * ----------------------------------------------------------------
 */

/*
 * Set cursor c over the caller's term, its seen bitmap in seen (zeroed)
 * and its decoded-block buffers at blockbuf (4 * SPM_BLOCK_POSTINGS
 * words); returns |q| * max |w| over the term's postings.  Nothing here
 * visits the term's blocks: bounds are computed when a window or probe
 * needs them.
 */
static double
cursor_init(SpmTermCursor *c, const SpmQueryTerm *term, uint8 *seen,
			uint32 *blockbuf)
{
	memset(c, 0, sizeof(SpmTermCursor));
	c->term = *term;
	c->seen = seen;
	c->tdocs = blockbuf;
	c->tw = (float *) (blockbuf + SPM_BLOCK_POSTINGS);
	c->pdocs = blockbuf + 2 * SPM_BLOCK_POSTINGS;
	c->pw = (float *) (blockbuf + 3 * SPM_BLOCK_POSTINGS);
	c->tdec = c->pdec = -1;
	return fabs(term->q) * term->sum->absmax;
}

/*
 * The traversal's memory is one pool, cut into the parts below (each
 * MAXALIGNed) by the same code that sizes it: with base NULL it only
 * counts.
 */
typedef struct PoolCut
{
	char	   *base;
	Size		used;
} PoolCut;

static void *
pool_cut(PoolCut *pc, Size n)
{
	void	   *p = pc->base ? pc->base + pc->used : NULL;

	pc->used += MAXALIGN(n);
	return p;
}

typedef struct PoolParts
{
	SpmTraverseState *s;
	double	   *acc;
	uint64	   *touched;
	uint16	   *tlist;
	double	   *samples;
	SpmTermCursor *terms;
	int		   *order;
	uint32	   *blockbufs;
	uint8	   *seen;
} PoolParts;

static Size
pool_parts(char *base, int nterms, int64 seenbytes, PoolParts *parts)
{
	PoolCut		pc = {base, 0};
	int			n = Max(nterms, 1);

	parts->s = pool_cut(&pc, sizeof(SpmTraverseState));
	parts->acc = pool_cut(&pc, SPM_WINDOW * sizeof(double));
	parts->touched = pool_cut(&pc, SPM_WINDOW / 64 * sizeof(uint64));
	/* one more: taat stores an offset before it knows whether it is new */
	parts->tlist = pool_cut(&pc, (SPM_WINDOW + 1) * sizeof(uint16));
	/* offer_touched stores one entry past the ones it keeps */
	parts->samples = pool_cut(&pc, SPM_SAMPLES_CAP * sizeof(double));
	parts->terms = pool_cut(&pc, n * sizeof(SpmTermCursor));
	parts->order = pool_cut(&pc, n * sizeof(int));
	parts->blockbufs = pool_cut(&pc, (Size) n * 4 * SPM_BLOCK_POSTINGS * sizeof(uint32));
	parts->seen = pool_cut(&pc, Max(seenbytes, 1));
	return pc.used;
}

/*
 * Prepare t (terms, ndocs, callbacks and the rest already set) for
 * spm_traverse_topk or spm_window_scores: set up t->state, with a cursor
 * per term and a bitmap of the blocks decoded (for the counters), in
 * t->scratch, else in CurrentMemoryContext.
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
	SpmTraverseScratch own = {.cxt = CurrentMemoryContext};
	SpmTraverseScratch *sc = t->scratch ? t->scratch : &own;
	SpmTraverseState *s;
	PoolParts	parts;
	Size		need;
	double		absmass = 0.0;
	int64		blocks = 0;
	int64		seenbytes = 0;
	int64		ns = 0;

	for (int i = 0; i < t->nterms; i++)
	{
		blocks += t->terms[i].nblocks;
		seenbytes += (t->terms[i].nblocks + 7) / 8;
	}

	/* huge: a query may hold many long terms (the limit is the memory) */
	need = pool_parts(NULL, t->nterms, seenbytes, &parts);
	if (sc->poolcap < need)
	{
		MemoryContext old = MemoryContextSwitchTo(sc->cxt);

		if (sc->pool)
			pfree(sc->pool);
		sc->pool = NULL;
		sc->poolcap = 0;
		sc->acc_dirty = SPM_WINDOW;
		sc->pool = palloc_extended(need, MCXT_ALLOC_HUGE);
		sc->poolcap = need;
		MemoryContextSwitchTo(old);
	}
	pool_parts(sc->pool, t->nterms, seenbytes, &parts);

	s = parts.s;
	memset(s, 0, sizeof(SpmTraverseState));
	s->t = *t;
	if (t->scratch)
		s->mem = t->scratch;
	else
	{
		/* the pool holds the state, and the state its own description */
		s->own = own;
		s->mem = &s->own;
	}
	s->nterms = t->nterms;
	s->terms = parts.terms;
	s->order = parts.order;
	s->seen = parts.seen;
	memset(s->seen, 0, Max(seenbytes, 1));
	for (int i = 0; i < t->nterms; i++)
	{
		absmass += cursor_init(&s->terms[i], &t->terms[i], s->seen + ns,
							   parts.blockbufs + (Size) i * 4 * SPM_BLOCK_POSTINGS);
		ns += (t->terms[i].nblocks + 7) / 8;
	}
	t->counters->blocks_skipped += blocks;
	s->slack = absmass * (t->nterms + 8) * ldexp(1.0, -50);

	/*
	 * Every window path leaves the accumulator all zeros, so after a
	 * traversal that ran to its end there is nothing to clear; after one
	 * that did not (an error, spm_window_scores, a new pool) the whole of
	 * it is cleared, also what a damaged block may have written anywhere
	 * in it under the decoder's SPM_WINDOW - 1 mask.  Clearing 128 kB per
	 * segment and query was a cost that did not depend on the query
	 * (doc/decisions.md, "Sparse windows").
	 */
	s->acc = parts.acc;
	if (sc->acc_dirty > 0)
		memset(s->acc, 0, (Size) sc->acc_dirty * sizeof(double));
#ifdef USE_ASSERT_CHECKING
	for (uint32 i = 0; i < SPM_WINDOW; i++)
		Assert(s->acc[i] == 0.0);
#endif
	sc->acc_dirty = SPM_WINDOW; /* until spm_traverse_topk ends */
	s->touched = parts.touched;
	s->tlist = parts.tlist;
	s->ntl = 0;
	s->samples = parts.samples;
	memset(s->touched, 0, SPM_WINDOW / 64 * sizeof(uint64));
	s->cand_rate = 1.0;
	t->state = s;
}

/* free the MaxScore window buffers (also those of a growth that failed) */
static void
free_window_buffers(SpmTraverseScratch *sc)
{
	if (sc->wdocs)
		pfree(sc->wdocs);
	if (sc->wvals)
		pfree(sc->wvals);
	sc->wdocs = NULL;
	sc->wvals = NULL;
	sc->wcap = 0;
}

void
spm_traverse_end(SpmTraverse *t)
{
	SpmTraverseState *s = t->state;
	SpmTraverseScratch *sc = s->mem;

	t->state = NULL;
	if (sc == &s->own)
	{
		free_window_buffers(sc);
		pfree(sc->pool);		/* holds s and sc: nothing after this */
		return;
	}
	if ((Size) sc->wcap * (sizeof(uint16) + sizeof(float)) > SPM_TRAVERSE_SCRATCH_KEEP)
		free_window_buffers(sc);
	if (sc->poolcap > SPM_TRAVERSE_SCRATCH_KEEP)
	{
		pfree(sc->pool);
		sc->pool = NULL;
		sc->poolcap = 0;
	}
}

/*
 * Room for the window's postings of every essential term (at most the
 * postings of its blocks that overlap the window).
 */
static void
reserve_window_buffers(SpmTraverseState *s)
{
	int64		need = 0;

	for (int i = 0; i < s->nterms; i++)
	{
		if (s->terms[i].essential)
			need += s->terms[i].wpost;
	}
	if (need > s->mem->wcap)
	{
		SpmTraverseScratch *sc = s->mem;
		int64		cap = Max(need, sc->wcap * 2);
		MemoryContext old = MemoryContextSwitchTo(sc->cxt);

		/* each pointer is stored before the next allocation can fail */
		free_window_buffers(sc);
		sc->wdocs = palloc(cap * sizeof(uint16));
		sc->wvals = palloc(cap * sizeof(float));
		sc->wcap = cap;
		MemoryContextSwitchTo(old);
	}
	need = 0;
	for (int i = 0; i < s->nterms; i++)
	{
		SpmTermCursor *c = &s->terms[i];

		if (c->essential)
		{
			c->wdocs = s->mem->wdocs + need;
			c->wvals = s->mem->wvals + need;
			need += c->wpost;
		}
	}
}

/* pruning threshold: a document needs a score of at least this */
static inline double
threshold(SpmTraverseState *s)
{
	double		theta = s->t.phase == SPM_PHASE_POSITIVE ? 0.0 : -INFINITY;

	if (spm_topk_full(s->t.topk) && s->t.topk->heap[0].score > theta)
		theta = s->t.topk->heap[0].score;
	return theta;
}

/*
 * After a term-at-a-time window: with the threshold reached by now, how
 * many of its documents would have been MaxScore candidates?  A
 * document's full score bounds its essential score from above when the
 * non-essential contributions are not negative, which is close enough
 * for a prediction of the next window (s->cand_rate).
 */
/*
 * The partial score a MaxScore candidate would need in this window, or
 * false when every present term would be essential (no prediction).
 */
static bool
predict_threshold(SpmTraverseState *s, int npresent, double *thr)
{
	double		theta = threshold(s);
	double		noness = 0.0;
	int			nne = 0;

	while (nne < npresent &&
		   noness + s->terms[s->order[nne]].wub + s->slack < theta)
		noness += s->terms[s->order[nne++]].wub;
	if (nne == 0)
		return false;
	*thr = theta - noness - s->slack;
	return true;
}

/*
 * The prediction from the window's samples: its documents at every
 * SPM_PREDICT_STRIDE-th offset, nsamples of them.  samples[0 .. ngiven)
 * holds the score of each that a posting reached, once, and any number
 * of zeros besides (an offset listed twice, or not reached: offer_touched,
 * offer_window); every sample not given as a non-zero score is 0.  A rate
 * for a cost estimate: every 8th document is enough (2,048 of a full
 * window), and a pass over all of them was a visible part of a query
 * (doc/decisions.md, "MaxScore's candidate prediction samples every 8th
 * document").
 */
static void
predict_candidates(SpmTraverseState *s, const double *samples, uint32 ngiven,
				   uint32 nsamples, int npresent)
{
	double		thr;
	int64		count = 0;
	int64		nonzero = 0;

	if (nsamples == 0 || !predict_threshold(s, npresent, &thr))
		return;
	for (uint32 i = 0; i < ngiven; i++)
	{
		count += (samples[i] >= thr) & (samples[i] != 0.0);
		nonzero += samples[i] != 0.0;
	}
	Assert(nonzero <= nsamples);
	if (0.0 >= thr)
		count += nsamples - nonzero;
	s->cand_rate = (double) count / nsamples;
}

/* tests: every window with non-essential terms takes MaxScore (spmtest.h) */
static bool always_maxscore = false;

void
spm_test_always_maxscore(bool always)
{
	always_maxscore = always;
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
use_maxscore(SpmTraverseState *s, int nne, int npresent, uint32 ndocs,
			 double noness)
{
	int64		pn = 0;
	int64		pall = 0;
	int			heavy = 0;

	if (nne == 0)
		return false;
	if (always_maxscore)
		return true;
	for (int k = 0; k < npresent; k++)
	{
		SpmTermCursor *c = &s->terms[s->order[k]];

		pall += c->wpost;
		if (!c->essential)
		{
			pn += c->wpost;
			/* probing stops once the remaining bounds cannot matter */
			if (c->wub >= 0.1 * noness)
				heavy++;
		}
	}
	s->window_pn = pn;
	return pn * 2 >= pall &&
		s->cand_rate * ndocs * (1 + heavy) * SPM_PROBE_COST <= (double) pn;
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
	SPM_WINDOW_MAXSCORE,
	SPM_WINDOW_SIGNED			/* the norm term's blocks by their signed
								 * bounds (signed_window) */
} SpmWindowPath;

typedef struct SpmWindowPlan
{
	SpmWindowPath path;
	int			npresent;		/* terms with a block in the window */
	int			nne;			/* non-essential terms (MaxScore only) */
	double		noness;			/* the sum of their window bounds */
	bool		sparse;			/* TAAT: few postings (window_is_sparse) */
} SpmWindowPlan;

/*
 * Is the window sparse: do its essential terms' blocks hold fewer than
 * 1/SPM_SPARSE_RATIO postings per docid?  Then visiting the marked
 * offsets (offer_touched) costs less than walking and clearing all of acc
 * (offer_window).  Counted from the skip entries of the blocks that
 * overlap the window (an upper bound), stopping at the first posting
 * past the limit, so a dense window costs at most n / SPM_SPARSE_RATIO
 * postings' worth of block counts.
 */
static bool
window_is_sparse(SpmTraverseState *s, uint32 a, uint32 b)
{
	int64		limit = (b - a) / SPM_SPARSE_RATIO;
	int64		est = 0;

	for (int i = 0; i < s->nterms; i++)
	{
		SpmTermCursor *c = &s->terms[i];

		if (!c->essential)
			continue;
		for (int j = seek_block(c, c->tblk, a);
			 j < c->term.nblocks && block_first(c, j) < b; j++)
		{
			est += c->term.count[j];
			if (est > limit)
				return false;
		}
	}
	return true;
}

/* sort s->order[0 .. n) by window bound, ascending, ties in term order */
static void
sort_by_window_bound(SpmTraverseState *s, int n)
{
	int		   *order = s->order;

	/*
	 * insertion sort for the usual few terms, qsort_arg beyond (a query may
	 * have 100000 terms: quadratic would take minutes)
	 */
	if (n > 64)
	{
		qsort_arg(order, n, sizeof(int), cmp_wub, s->terms);
		return;
	}
	for (int i = 1; i < n; i++)
	{
		int			x = order[i];
		int			j = i;

		while (j > 0 && s->terms[order[j - 1]].wub > s->terms[x].wub)
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
}

/*
 * Do the norm term's blocks (the last term's: SpmTraverse.norm_last) hold
 * a posting for every docid of [a, b)?  Only then is a docid without one
 * (a NULL row, a hole, an empty document, which scores 0) known to be
 * absent, so that signed_window may leave a block's docids unoffered.
 * From the skip entries: a block whose postings number its docid span
 * holds all of it.
 */
static bool
norm_covers(SpmTraverseState *s, uint32 a, uint32 b)
{
	const SpmTermCursor *c = &s->terms[s->nterms - 1];
	int			j = seek_block(c, c->tblk, a);

	if (j >= c->term.nblocks || block_first(c, j) > a)
		return false;
	for (; j < c->term.nblocks; j++)
	{
		if (c->term.count[j] != c->term.last[j] - block_first(c, j) + 1)
			return false;
		if (c->term.last[j] >= b - 1)
			return true;
	}
	return false;
}

/*
 * Step 1 and 2 of the file header: window bounds, the skip test, the
 * MaxScore partition and the cost rule.  Sets every term's essential flag
 * to match the plan.
 */
static void
partition_window(SpmTraverseState *s, uint32 a, uint32 b, SpmWindowPlan *plan)
{
	double		theta = threshold(s);
	double		sumub;
	int		   *order = s->order;
	bool		zeros;

	plan->npresent = 0;
	plan->nne = 0;
	plan->noness = 0.0;
	plan->sparse = false;

	/*
	 * Pruning needs a threshold above zero: in the negative phase the
	 * threshold is below zero and no bound (all >= 0) can fall under it,
	 * and so in the phase of every sign until the heap's worst row scores
	 * above 0.  Until then that phase also offers every docid of the
	 * window, untouched ones at 0, so the window is walked whole
	 * (offer_window), never by its marked offsets.
	 */
	zeros = s->t.phase == SPM_PHASE_ANY && !(theta > 0.0);
	if (zeros && s->t.norm_last && !s->t.exhaustive && norm_covers(s, a, b))
	{
		/* sparse: the other terms' postings are few (window_is_sparse) */
		for (int i = 0; i < s->nterms; i++)
			s->terms[i].essential = i < s->nterms - 1;
		plan->path = SPM_WINDOW_SIGNED;
		plan->sparse = window_is_sparse(s, a, b);
		return;
	}
	if (s->t.exhaustive || s->t.phase == SPM_PHASE_NEGATIVE || zeros ||
		s->skip_ms > 0)
	{
		/* no pruning here (or backing off from MaxScore: see use_maxscore) */
		if (s->skip_ms > 0)
			s->skip_ms--;
		for (int i = 0; i < s->nterms; i++)
			s->terms[i].essential = true;
		plan->path = SPM_WINDOW_TAAT;
		plan->sparse = !zeros && window_is_sparse(s, a, b);
		return;
	}

	/*
	 * A sparse window is scored term-at-a-time without a plan: there is
	 * little for MaxScore to skip, and its bounds, probes and recorded
	 * postings cost more than the pass over them all (on the real-text
	 * tier's keyword queries MaxScore was the slower arm)
	 */
	for (int i = 0; i < s->nterms; i++)
		s->terms[i].essential = true;
	if (window_is_sparse(s, a, b))
	{
		plan->path = SPM_WINDOW_TAAT;
		plan->sparse = true;
		return;
	}

	sumub = window_bounds(s, a, b);
	for (int i = 0; i < s->nterms; i++)
	{
		SpmTermCursor *c = &s->terms[i];

		c->essential = c->present;
		if (c->present)
			order[plan->npresent++] = i;
	}
	if (plan->npresent == 0)
	{
		plan->path = SPM_WINDOW_SKIP;
		return;
	}
	if (sumub + s->slack < theta)
	{
		s->t.counters->windows_skipped++;
		plan->path = SPM_WINDOW_SKIP;
		return;
	}

	sort_by_window_bound(s, plan->npresent);
	while (plan->nne < plan->npresent &&
		   plan->noness + s->terms[order[plan->nne]].wub + s->slack < theta)
	{
		plan->noness += s->terms[order[plan->nne]].wub;
		s->terms[order[plan->nne]].essential = false;
		plan->nne++;
	}
	if (use_maxscore(s, plan->nne, plan->npresent, b - a, plan->noness))
	{
		plan->path = SPM_WINDOW_MAXSCORE;
		return;
	}
	for (int k = 0; k < plan->nne; k++)
		s->terms[order[k]].essential = true;
	plan->nne = 0;
	plan->path = SPM_WINDOW_TAAT;
}

/*
 * Eight accumulator slots at once: bit j of *ge is x[j] >= theta, of *nz
 * x[j] != 0.0, as C compares them (>= false, != true for a NaN).
 */
static inline void
test8(const double *x, double theta, uint32 *ge, uint32 *nz)
{
#ifdef __SSE2__
	__m128d		t = _mm_set1_pd(theta);
	__m128d		z = _mm_setzero_pd();
	__m128d		x0 = _mm_loadu_pd(x),
				x1 = _mm_loadu_pd(x + 2),
				x2 = _mm_loadu_pd(x + 4),
				x3 = _mm_loadu_pd(x + 6);

	*ge = _mm_movemask_pd(_mm_cmpge_pd(x0, t)) |
		(_mm_movemask_pd(_mm_cmpge_pd(x1, t)) << 2) |
		(_mm_movemask_pd(_mm_cmpge_pd(x2, t)) << 4) |
		(_mm_movemask_pd(_mm_cmpge_pd(x3, t)) << 6);
	*nz = _mm_movemask_pd(_mm_cmpneq_pd(x0, z)) |
		(_mm_movemask_pd(_mm_cmpneq_pd(x1, z)) << 2) |
		(_mm_movemask_pd(_mm_cmpneq_pd(x2, z)) << 4) |
		(_mm_movemask_pd(_mm_cmpneq_pd(x3, z)) << 6);
#else
	uint32		g = 0,
				z = 0;

	for (int j = 0; j < 8; j++)
	{
		g |= (uint32) (x[j] >= theta) << j;
		z |= (uint32) (x[j] != 0.0) << j;
	}
	*ge = g;
	*nz = z;
#endif
}

StaticAssertDecl(SPM_PREDICT_STRIDE == 8, "offer_window samples one in eight");

/*
 * Step 4, every term essential: acc[0 .. n) holds canonical scores of the
 * window starting at a; offer every document that can qualify, then clear
 * acc.  One pass, eight slots at a time (test8): most windows hold only a
 * few documents that reach the threshold; each eight are cleared after
 * their test, and every SPM_PREDICT_STRIDE-th is kept for the candidate
 * prediction, which needs the threshold as it stands after the window.
 * (Until issue 38 this was three passes: the offers, the samples, a
 * memset; on a 2.2M-document segment they were a third of a keyword
 * query's time.)
 */
static void
offer_window(SpmTraverseState *s, uint32 a, uint32 n, int npresent)
{
	double	   *acc = s->acc;
	double	   *samples = s->samples;
	double		theta = threshold(s);
	uint32		i = 0;
	int64		scored = 0;

	/* the phase of every sign offers rows of score 0 too */
	bool		zeros = s->t.phase == SPM_PHASE_ANY;

	for (; i + 8 <= n; i += 8)
	{
		double	   *x = acc + i;
		uint32		ge,
					nz;

		test8(x, theta, &ge, &nz);
		samples[i / 8] = x[0];
		scored += pg_number_of_ones[nz];
		/* theta only rises: ge holds every slot that may still qualify */
		for (; ge != 0; ge &= ge - 1)
		{
			int			j = pg_rightmost_one_pos32(ge);

			if (x[j] >= theta && (x[j] != 0.0 || zeros))
			{
				consider(s, a + i + j, x[j]);
				theta = threshold(s);
			}
		}
		memset(x, 0, 8 * sizeof(double));
	}
	for (; i < n; i++)
	{
		double		x = acc[i];

		if (i % 8 == 0)
			samples[i / 8] = x;
		scored += (x != 0.0);
		if (x >= theta && (x != 0.0 || zeros))
		{
			consider(s, a + i, x);
			theta = threshold(s);
		}
		acc[i] = 0.0;
	}
	s->t.counters->candidates += scored;
	if (npresent > 0)
		predict_candidates(s, samples, (n + 7) / 8, (n + 7) / 8, npresent);
}

/*
 * Step 4 for a sparse window (TAAT_LIST): as offer_window, but visiting
 * only the offsets taat listed in s->tlist, the only ones acc can hold a
 * score for, in the order they were listed, and clearing each after its
 * test, so acc and tlist are empty again.  The work is proportional to
 * the window's postings, not to its width: a short query over a large
 * segment no longer pays a walk over every docid (doc/decisions.md,
 * "Sparse windows").  A list, not a walk over set bits: the walk's loops
 * ended at unpredictable places, a branch mispredicted every few
 * documents (doc/decisions.md "Sparse windows visit a list").  The order
 * does not matter: the heap's order is total.  An offset listed twice
 * reads 0 the second time, which is neither offered nor counted; as a
 * sample it is a 0, which the candidate prediction counts as it counts an
 * unlisted offset, so the prediction sees the same sample as
 * offer_window's (every SPM_PREDICT_STRIDE-th offset, whose score is 0
 * unless a posting reached it).  A sparse window lists at most one offset
 * a posting, at most SPM_WINDOW / SPM_SPARSE_RATIO (window_is_sparse), so
 * the samples never pass SPM_SAMPLES_CAP.
 */
static void
offer_touched(SpmTraverseState *s, uint32 a, uint32 n, int npresent)
{
	double	   *acc = s->acc;
	const uint16 *tlist = s->tlist;
	uint32		ntl = s->ntl;
	double	   *samples = s->samples;
	double		theta = threshold(s);
	int64		scored = 0;
	uint32		nsampled = 0;

	for (uint32 i = 0; i < ntl; i++)
	{
		uint32		off = tlist[i];
		double		x = acc[off];

		acc[off] = 0.0;
		scored += (x != 0.0);

		/*
		 * kept by its offset alone, whatever x: a count that waited for x
		 * made every store here wait for the load of acc[off], about a
		 * tenth of a keyword query on real text (doc/decisions.md "Sparse
		 * windows sample by offset")
		 */
		samples[nsampled] = x;
		nsampled += off % SPM_PREDICT_STRIDE == 0;
		if (x >= theta && x != 0.0)
		{
			consider(s, a + off, x);
			theta = threshold(s);
		}
	}
	Assert(nsampled < SPM_SAMPLES_CAP);
	s->ntl = 0;
	s->t.counters->candidates += scored;
	if (npresent > 0)
		predict_candidates(s, samples, nsampled,
						   (n + SPM_PREDICT_STRIDE - 1) / SPM_PREDICT_STRIDE,
						   npresent);
}


/*
 * Probe the non-essential terms for candidate d (partial = its essential
 * score), largest bound first, stopping as soon as its bound cannot reach
 * theta.  Returns false if d is pruned; otherwise every non-essential term
 * has been probed for d, as canonical_score needs.  *probes counts probes.
 */
static bool
probe_candidate(SpmTraverseState *s, uint32 d, double partial,
				const SpmWindowPlan *plan, double theta, int64 *probes)
{
	double		rest = plan->noness;
	double		slack = s->slack;

	for (int k = plan->nne - 1; k >= 0; k--)
	{
		SpmTermCursor *c = &s->terms[s->order[k]];
		float		w = 0;

		rest -= c->wub;
		(*probes)++;
		probe_shallow(c, d);
		c->probe_doc = d;
		c->probe_hit = false;
		if (c->pblk < c->term.nblocks && d >= block_first(c, c->pblk))
		{
			if (partial + block_bound(c, c->pblk) + rest + slack < theta)
				return false;
			if (probe_deep(s, c, d, &w))
			{
				c->probe_hit = true;
				c->probe_w = w;
				partial += c->term.q * (double) w;
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
maxscore_window(SpmTraverseState *s, uint32 a, uint32 b,
				const SpmWindowPlan *plan)
{
	double	   *acc = s->acc;
	uint64	   *touched = s->touched;
	double		theta = threshold(s);
	int64		decoded_before = s->t.counters->postings_decoded;
	int64		probes = 0;
	int64		ncand = 0;

	/*
	 * Only documents an essential term holds can be candidates: the
	 * non-essential bounds alone stay below theta by construction.  So walk
	 * the touched bits (ascending, as the probes need) instead of every
	 * docid of the window, which was most of MaxScore's instructions on
	 * a corpus where it prunes (doc/decisions.md, "MaxScore windows visit
	 * only touched documents").
	 */
	for (uint32 wi = 0; wi < (b - a + 63) / 64; wi++)
	{
		uint64		bits = touched[wi];
		uint32		coff[64];
		double		cpartial[64];
		int			nc = 0;

		if (bits == 0)
			continue;
		touched[wi] = 0;

		/*
		 * Collect this word's candidates without a branch on the test
		 * (whether a document passes is close to a coin flip for the
		 * branch predictor), then probe them.
		 */
		do
		{
			uint32		off = wi * 64 + pg_rightmost_one_pos64(bits);
			double		partial = acc[off];

			bits &= bits - 1;
			acc[off] = 0.0;
			coff[nc] = off;
			cpartial[nc] = partial;
			nc += !(partial + plan->noness + s->slack < theta);
		} while (bits != 0);

		for (int i = 0; i < nc; i++)
		{
			uint32		d = a + coff[i];
			double		partial = cpartial[i];

			/* theta may have risen since the word was collected */
			if (partial + plan->noness + s->slack < theta)
				continue;
			ncand++;
			if (!probe_candidate(s, d, partial, plan, theta, &probes))
				continue;
			consider(s, d, canonical_score(s, a, d));
			theta = threshold(s);
		}
	}

	s->cand_rate = (double) ncand / (b - a);
	if (s->t.counters->postings_decoded - decoded_before +
		probes * SPM_PROBE_COST > s->window_pn)
	{
		s->backoff = s->backoff ? Min(s->backoff * 2, 64) : 2;
		s->skip_ms = s->backoff;
	}
	else
		s->backoff = 0;
}

/*
 * The phase of any sign, a threshold at or below 0, and the norm term's
 * blocks covering the window (norm_covers): acc holds the canonical sums
 * of every other term, so a document's score is its sum plus its norm
 * posting, the last product of the canonical order.  Every docid of a
 * norm block scores at most M + q * w_max, M the largest of 0 and the
 * block's sums: of its marked offsets when the other terms' postings are
 * few (marked: TAAT_MARK, an unmarked offset holds 0), else of all its
 * offsets (TAAT_DENSE, straight into acc); w_max is the block's bound from
 * its skip entry (its largest weight for q > 0), signed, not clamped at 0
 * as bounds elsewhere.  A block below the threshold is neither decoded
 * nor offered.  The others are decoded, and
 * each posting's document offered with its full score.  Clears acc (and
 * touched and tlist).  On an L2 index's real text most of a short query's
 * norm blocks are left: the threshold is about the k-th smallest
 * -|d|^2 / 2 of the segment, and a block of 128 documents rarely holds
 * one (doc/decisions.md "L2: the norm term's blocks by their bounds").
 */
static void
signed_window(SpmTraverseState *s, uint32 a, uint32 b, bool marked)
{
	SpmTermCursor *c = &s->terms[s->nterms - 1];
	double	   *acc = s->acc;
	uint64	   *touched = s->touched;
	const double q = c->term.q;
	const float *bw = q > 0 ? c->term.max_w : c->term.min_w;
	double		theta = threshold(s);
	int			j = seek_block(c, c->tblk, a);
	int64		scored = 0;

	while (j < c->term.nblocks && block_first(c, j) < b)
	{
		uint32		lo = Max(block_first(c, j), a) - a;
		uint32		hi = Min(c->term.last[j] + 1, b) - a;
		double		m = 0.0;
		int			n = c->term.count[j];
		int			p;

		/* the largest sum of the block's docids in the window */
		for (uint32 i = lo; !marked && i < hi; i++)
			m = Max(m, acc[i]);
		for (uint32 wi = lo >> 6; marked && wi <= (hi - 1) >> 6; wi++)
		{
			uint64		bits = touched[wi];

			if (wi == lo >> 6)
				bits &= ~UINT64CONST(0) << (lo & 63);
			if (wi == (hi - 1) >> 6 && ((hi - 1) & 63) != 63)
				bits &= (UINT64CONST(1) << (((hi - 1) & 63) + 1)) - 1;
			while (bits != 0)
			{
				uint32		off = wi * 64 + pg_rightmost_one_pos64(bits);

				bits &= bits - 1;
				m = Max(m, acc[off]);
			}
		}
		if (m + q * bw[j] + s->slack < theta)
		{
			/* a block that goes on in the next window is judged there too */
			if (c->term.last[j] >= b)
				break;
			j++;
			continue;
		}
		p = block_from(s, c, j, a);
		for (; p < n; p++)
		{
			uint32		d = c->tdocs[p];
			double		x;

			if (d >= b)
				break;
			x = spv_score_add(acc[d - a], q, c->tw[p]);
			scored++;
			if (x >= theta)
			{
				consider(s, d, x);
				theta = threshold(s);
			}
		}
		c->tpos = p;
		if (p < n)
			break;				/* the block goes on in the next window */
		j++;
	}
	c->tblk = j;
	s->t.counters->candidates += scored;

	/* clear what the other terms added */
	if (!marked)
	{
		memset(acc, 0, (b - a) * sizeof(double));
		return;
	}
	for (uint32 i = 0; i < s->ntl; i++)
	{
		acc[s->tlist[i]] = 0.0;
		touched[s->tlist[i] >> 6] = 0;
	}
	s->ntl = 0;
}

/*
 * One window [a, b): plan it, accumulate its essential terms
 * term-at-a-time (step 3), then offer its documents by the plan's path.
 */
static void
topk_window(SpmTraverseState *s, uint32 a, uint32 b)
{
	SpmWindowPlan plan;
	TaatMode	mode;

	s->t.counters->windows++;
	partition_window(s, a, b, &plan);
	if (plan.path == SPM_WINDOW_SKIP)
		return;
	if (plan.path == SPM_WINDOW_SIGNED)
	{
		for (int i = 0; i < s->nterms - 1; i++)
			taat(s, &s->terms[i], a, b, s->acc,
				 plan.sparse ? TAAT_MARK : TAAT_DENSE);
		signed_window(s, a, b, plan.sparse);
		return;
	}
	if (plan.path == SPM_WINDOW_MAXSCORE)
		mode = TAAT_RECORD;
	else
		mode = plan.sparse ? TAAT_LIST : TAAT_DENSE;

	/*
	 * acc and touched are all zeros here: offer_window, offer_touched and
	 * maxscore_window clear acc, maxscore_window the touched bits it set
	 */
	if (mode == TAAT_RECORD)
		reserve_window_buffers(s);
	for (int i = 0; i < s->nterms; i++)
	{
		SpmTermCursor *c = &s->terms[i];

		if (c->essential)
			taat(s, c, a, b, s->acc, mode);
	}
	if (mode == TAAT_RECORD)
		maxscore_window(s, a, b, &plan);
	else if (mode == TAAT_LIST)
		offer_touched(s, a, b - a, plan.npresent);
	else
		offer_window(s, a, b - a, plan.npresent);
}

/*
 * Offer every document of the segment that can enter the heap.
 */
void
spm_traverse_topk(SpmTraverse *t)
{
	SpmTraverseState *s = t->state;

	for (uint64 a = 0; a < s->t.ndocs; a += SPM_WINDOW)
	{
		topk_window(s, (uint32) a, (uint32) Min(a + SPM_WINDOW, s->t.ndocs));
		CHECK_FOR_INTERRUPTS();
	}
	/* every window path leaves acc all zeros (see topk_window) */
	s->mem->acc_dirty = 0;
}

/*
 * Canonical scores of every local docid in [a, b), returned in an array
 * indexed by docid - a (valid until the next call): exhaustive
 * term-at-a-time over all terms in ascending term order, so every entry
 * equals spv_dot of the document and the query (0 for a document without a
 * query term).  b - a <= SPM_WINDOW; windows must come in ascending order.
 */
const double *
spm_window_scores(SpmTraverse *t, uint32 a, uint32 b)
{
	SpmTraverseState *s = t->state;

	Assert(b > a && b - a <= SPM_WINDOW && a >= s->next);
	s->next = b;
	s->t.counters->windows++;
	memset(s->acc, 0, (b - a) * sizeof(double));
	for (int i = 0; i < s->nterms; i++)
		taat(s, &s->terms[i], a, b, s->acc, TAAT_DENSE);
	return s->acc;
}

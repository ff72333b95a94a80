/*-------------------------------------------------------------------------
 *
 * spmtraverse.h
 *	  Exact top-k traversal of one segment: windowed block-max MaxScore,
 *	  the exhaustive term-at-a-time kernel, and the top-k heap.
 *
 * Nothing here touches the buffer manager: posting blocks arrive through
 * the read_block callback and alive bits through is_alive, so the code
 * can be unit-tested and benchmarked outside the server (test/unit).
 *
 * Scores are canonical: every score that enters the heap, or that a tail
 * phase compares with zero, is the sum of q * w over the document's
 * matching query terms taken in ascending term order in double, starting
 * from +0.0 -- the exact computation of spv_dot() behind the <#> operator.
 * Sums in any other order are used only to prune, and only with a margin
 * (slack) larger than their worst rounding error.  See README "Exactness".
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMTRAVERSE_H
#define SPMTRAVERSE_H

#include "storage/itemptr.h"

#include "spmblock.h"

/* docids per window of the term-at-a-time kernel (a power of two) */
#define SPM_WINDOW			16384

/* ----------------------------------------------------------------
 * Top-k heap ordered by (score desc, docid asc)
 * ----------------------------------------------------------------
 */
typedef struct SpmHit
{
	double		score;
	uint64		docid;			/* global docid */
	ItemPointerData tid;		/* heap TID once known */
} SpmHit;

typedef struct SpmTopK
{
	int			k;				/* capacity */
	int			n;				/* entries in heap[] */
	SpmHit	   *heap;			/* heap[0] is the worst entry */
} SpmTopK;

/* is (s1, d1) strictly before (s2, d2) in result order? */
static inline bool
spm_hit_before(double s1, uint64 d1, double s2, uint64 d2)
{
	return s1 > s2 || (s1 == s2 && d1 < d2);
}

extern void spm_topk_init(SpmTopK *topk, int k, SpmHit *storage);
extern bool spm_topk_push(SpmTopK *topk, double score, uint64 docid,
						  const ItemPointerData *tid);
extern void spm_topk_sort(SpmTopK *topk);

static inline bool
spm_topk_full(const SpmTopK *topk)
{
	return topk->n >= topk->k;
}

/* would (score, docid) enter the heap? */
static inline bool
spm_topk_admits(const SpmTopK *topk, double score, uint64 docid)
{
	return !spm_topk_full(topk) ||
		spm_hit_before(score, docid, topk->heap[0].score, topk->heap[0].docid);
}

/*
 * The resume point of a scan: results strictly after (score, docid) in
 * result order are wanted.
 */
typedef struct SpmAfter
{
	bool		active;
	double		score;
	uint64		docid;
} SpmAfter;

static inline bool
spm_is_after(const SpmAfter *after, double score, uint64 docid)
{
	return !after->active || spm_hit_before(after->score, after->docid,
											score, docid);
}

/* ----------------------------------------------------------------
 * Per-scan counters (reported by sparse_maxscore_last_scan())
 * ----------------------------------------------------------------
 */
typedef struct SpmCounters
{
	int64		rounds;			/* top-k rounds run */
	int64		postings_decoded;
	int64		blocks_decoded;
	int64		blocks_skipped; /* blocks of query terms never decoded */
	int64		windows;		/* docid windows visited */
	int64		windows_skipped;	/* windows pruned by their bound */
	int64		candidates;		/* documents scored in full */
	int64		rows_returned;
} SpmCounters;

/* ----------------------------------------------------------------
 * One query term in one segment
 * ----------------------------------------------------------------
 */
typedef struct SpmTermCursor
{
	/* set by the caller */
	double		q;				/* query weight */
	double		qabsmax;		/* |q| * max |w| of the term's postings */
	int			nblocks;
	const uint32 *last;			/* [nblocks] last local docid of block */
	const double *bub;			/* [nblocks] max(0, best q * w in block) */
	const uint32 *blkno;		/* [nblocks] where the block lives */
	const uint16 *off;
	const uint8 *count;

	/* state, owned by spmtraverse.c */
	double		wub;			/* bound of the current window */
	int64		wpost;			/* postings of blocks overlapping it */
	bool		present;		/* has a block overlapping the window */
	bool		essential;
	/* MaxScore windows: essential postings of the window (offsets) */
	uint16	   *wdocs;
	float	   *wvals;
	int			wn;
	/* MaxScore windows: the last probe of a non-essential term */
	uint32		probe_doc;
	bool		probe_hit;
	float		probe_w;
	int			sblk;			/* first block not wholly before window */
	int			tblk;			/* term-at-a-time: current block */
	int			tdec;			/* block decoded in tdocs, or -1 */
	int			tpos;
	int			pblk;			/* probe: current block */
	int			pdec;			/* block decoded in pdocs, or -1 */
	int			ppos;
	uint8	   *seen;			/* bitmap of blocks decoded at least once */
	/* decoded blocks, [SPM_BLOCK_POSTINGS] each, allocated on first use */
	uint32	   *tdocs;
	float	   *tw;
	uint32	   *pdocs;
	float	   *pw;
} SpmTermCursor;

typedef enum SpmPhase
{
	SPM_PHASE_POSITIVE,			/* admit score > 0 */
	SPM_PHASE_NEGATIVE			/* admit score < 0 */
} SpmPhase;

/*
 * Decode block b of term cursor c into docids/weights.  Raises an error on
 * corruption.
 */
typedef void (*SpmReadBlock) (void *arg, const SpmTermCursor *c, int b,
							  uint32 *docids, float *weights);
typedef bool (*SpmIsAlive) (void *arg, uint32 local);

/*
 * Add q * w of every posting of block b to acc[docid - base]; the caller
 * guarantees the block's docids lie in [base, base + SPM_WINDOW).  Raises
 * an error on corruption.  Saves storing docids for blocks a window
 * holds whole.
 */
typedef void (*SpmAccumulateBlock) (void *arg, const SpmTermCursor *c, int b,
									double q, double *acc, uint32 base);

typedef struct SpmTraverse
{
	/* query terms present in the segment, in ascending term order */
	SpmTermCursor *terms;
	int			nterms;

	uint64		docid_lo;		/* global docid of local docid 0 */
	uint32		ndocs;			/* visit local docids [0, ndocs) */
	bool		exhaustive;		/* no pruning (the test oracle) */
	bool		always_maxscore;	/* tests: skip the cost rule */
	SpmPhase	phase;
	SpmAfter	after;
	SpmTopK    *topk;

	SpmReadBlock read_block;
	SpmAccumulateBlock accumulate_block;
	SpmIsAlive	is_alive;		/* NULL when every docid is alive */
	void	   *arg;

	SpmCounters *counters;

	/* scratch, allocated by spm_traverse_begin */
	double		slack;			/* pruning margin, see spm_traverse_begin */
	double	   *acc;			/* [SPM_WINDOW], all zeros between windows
								 * of spm_traverse_topk */
	int		   *order;			/* [nterms] */
	uint32		next;			/* next window start (spm_window_scores) */
	uint16	   *wdocs;			/* pool for the terms' window postings */
	float	   *wvals;
	int64		wcap;
	int64		window_pn;		/* non-essential postings of the window */
	int			backoff;		/* MaxScore back-off, in windows */
	int			skip_ms;		/* windows left before MaxScore is retried */
	double		cand_rate;		/* candidates per document, last window */
} SpmTraverse;

extern void spm_cursor_init(SpmTermCursor *c, double q, int nblocks,
							const uint32 *last, const float *max_w,
							const float *min_w, const uint32 *blkno,
							const uint16 *off, const uint8 *count,
							double *bub);
extern void spm_traverse_begin(SpmTraverse *t);
extern void spm_traverse_topk(SpmTraverse *t);
extern const double *spm_window_scores(SpmTraverse *t, uint32 a, uint32 b);
extern void spm_traverse_end(SpmTraverse *t);

#endif							/* SPMTRAVERSE_H */

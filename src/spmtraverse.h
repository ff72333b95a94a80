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
 * One segment's traversal
 *
 * The interface is split in two.  The caller describes the work: one
 * SpmQueryTerm per query term the segment has (its query weight and its
 * skip entries as flat arrays) and an SpmTraverse with the segment, the
 * phase, the heap and the callbacks.  Everything the traversal keeps while
 * it runs -- each term's window bound, block and probe positions, decoded
 * blocks, and the window accumulator -- is SpmTraverseState, defined in
 * spmtraverse.c only: spm_traverse_begin allocates it (the per-term
 * cursors in one array) and spm_traverse_end frees it.  The caller
 * computes no bounds and allocates nothing for the traversal; it only
 * keeps, with each term's skip entries, their summary
 * (spm_term_summarize), so that a query does not visit every skip entry
 * of its terms.
 *
 * Each private cursor starts with a copy of its SpmQueryTerm, so the hot
 * loops read q, nblocks, last and count at a fixed offset from the cursor
 * (no extra pointer to follow per block or posting), and the callbacks get
 * that copy.  Measured with test/unit/bench_traverse under callgrind: the
 * same instructions as the public cursor this replaced (doc/decisions.md,
 * "Traversal state is private").
 * ----------------------------------------------------------------
 */

/*
 * A summary of a term's skip entries, for moving over them in fewer steps
 * than one per block: the extremes and the postings of every group of
 * SPM_SKIP_GROUP blocks, and the largest |w| of the term.  One allocation
 * of spm_term_summary_size(nblocks) bytes, filled by spm_term_summarize
 * from the skip entries it summarises.
 */
#define SPM_SKIP_GROUP		16

typedef struct SpmTermSummary
{
	float		absmax;			/* max |w| over the term's postings */
	int			ngroups;		/* ceil(nblocks / SPM_SKIP_GROUP) */
	float	   *gmax_w;			/* [ngroups] largest max_w of the group */
	float	   *gmin_w;			/* [ngroups] smallest min_w of the group */
	uint32	   *gcount;			/* [ngroups] postings of the group */
} SpmTermSummary;

extern Size spm_term_summary_size(int nblocks);
extern SpmTermSummary *spm_term_summarize(void *mem, int nblocks,
										  const float *max_w,
										  const float *min_w,
										  const uint8 *count);

/* one query term in one segment, as the caller describes it */
typedef struct SpmQueryTerm
{
	double		q;				/* query weight */
	int			nblocks;		/* posting blocks of the term */
	int			id;				/* the caller's own number for the term,
								 * for its callbacks (the traversal does
								 * not read it) */

	/*
	 * the skip entries, [nblocks] each: referenced, so they must outlive
	 * the traversal (the struct itself is copied by spm_traverse_begin)
	 */
	const uint32 *last;			/* last local docid of the block */
	const float *max_w;			/* largest weight in the block */
	const float *min_w;			/* smallest weight in the block */
	const uint32 *blkno;		/* where the block lives (for the callbacks) */
	const uint16 *off;
	const uint8 *count;			/* postings in the block */

	/*
	 * The summary of those skip entries (spm_term_summarize), computed
	 * once per term and segment and kept with them by the caller, so that
	 * a query's work is proportional to the blocks it visits, not to the
	 * blocks its terms have.
	 */
	const SpmTermSummary *sum;
} SpmQueryTerm;

typedef enum SpmPhase
{
	SPM_PHASE_POSITIVE,			/* admit score > 0 */
	SPM_PHASE_NEGATIVE			/* admit score < 0 */
} SpmPhase;

/*
 * Decode block b of term into docids/weights.  Raises an error on
 * corruption.
 */
typedef void (*SpmReadBlock) (void *arg, const SpmQueryTerm *term, int b,
							  uint32 *docids, float *weights);
typedef bool (*SpmIsAlive) (void *arg, uint32 local);

/*
 * Add q * w of every posting of block b of term to acc[docid - base]; the
 * caller guarantees the block's docids lie in [base, base + SPM_WINDOW).
 * Raises an error on corruption.  Saves storing docids for blocks a window
 * holds whole.
 */
typedef void (*SpmAccumulateBlock) (void *arg, const SpmQueryTerm *term,
									int b, double q, double *acc,
									uint32 base);

/* private to spmtraverse.c */
typedef struct SpmTraverseState SpmTraverseState;

/*
 * Work memory a caller may keep from one traversal to the next (spmscan.c
 * keeps one per backend): the state, the window's accumulator (128 kB),
 * the cursors with their decoded blocks, the bitmaps and the MaxScore
 * window's postings.  Allocated per traversal and freed at its end, they
 * made glibc grow and trim its heap on every query, and the page faults
 * took 17% of a query on the flat 100k corpus (doc/decisions.md "Traversal
 * memory kept per backend").  The traversal grows the arrays in cxt and
 * initializes what it reads, so their contents between traversals,
 * including after an error, do not matter; after a traversal it frees any
 * part larger than SPM_TRAVERSE_SCRATCH_KEEP.  One traversal at a time.
 */
typedef struct SpmTraverseScratch
{
	MemoryContext cxt;			/* set by the owner: where the arrays live */
	char	   *pool;			/* state, accumulator, cursors, bitmaps */
	Size		poolcap;		/* bytes at pool */
	uint16	   *wdocs;			/* MaxScore window postings, [wcap] */
	float	   *wvals;
	int64		wcap;
} SpmTraverseScratch;

#define SPM_TRAVERSE_SCRATCH_KEEP	((Size) 8 << 20)

typedef struct SpmTraverse
{
	/*
	 * Set by the caller before spm_traverse_begin, which takes a copy:
	 * changing them afterwards has no effect on the traversal.
	 */
	const SpmQueryTerm *terms;	/* [nterms], the query terms present in
								 * the segment, in ascending term order */
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

	SpmTraverseScratch *scratch;	/* NULL: allocate in CurrentMemoryContext
									 * and free at the end */

	/* set by spm_traverse_begin, freed by spm_traverse_end */
	SpmTraverseState *state;
} SpmTraverse;

extern void spm_traverse_begin(SpmTraverse *t);
extern void spm_traverse_topk(SpmTraverse *t);
extern const double *spm_window_scores(SpmTraverse *t, uint32 a, uint32 b);
extern void spm_traverse_end(SpmTraverse *t);

#endif							/* SPMTRAVERSE_H */

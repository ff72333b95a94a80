/*-------------------------------------------------------------------------
 *
 * spmtraverse.h
 *	  Exact top-k traversal of one segment: windowed block-max MaxScore,
 *	  and the exhaustive term-at-a-time kernel.
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

#include "spmblock.h"
#include "spmtopk.h"

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
 * that copy: under callgrind, the same instructions as the public cursor
 * this replaced (doc/decisions.md, "Traversal state is private").
 * ----------------------------------------------------------------
 */

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

/*
 * Decode block b of term into docids/weights.  Raises an error on
 * corruption.
 */
typedef void (*SpmReadBlock) (void *arg, const SpmQueryTerm *term, int b,
							  uint32 *docids, float *weights);

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
 * Work memory a caller may keep from one traversal to the next (the
 * segment scan, spmsegscan.c, keeps one per backend): the state, the
 * window's accumulator (128 kB), the cursors with their decoded blocks,
 * the bitmaps and the MaxScore window's postings.  Allocated per traversal
 * and freed at its end, they made glibc grow and trim its heap on every
 * query, and the page faults were a large part of a query
 * (doc/decisions.md "Traversal memory kept per backend").  The owner sets
 * cxt and zeroes the rest; the traversal grows the arrays in cxt and
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
	uint32		acc_dirty;		/* entries of the pool's accumulator from 0
								 * that may not be zero: SPM_WINDOW while a
								 * traversal runs, 0 once spm_traverse_topk
								 * has ended (saves clearing 128 kB a
								 * query) */
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
	SpmPhase	phase;

	/*
	 * The last term holds a norm posting on every document with elements
	 * (an L2 index's norm term, src/README "Cosine and L2"), and this is
	 * the phase of any sign: a window where that term's blocks cover every
	 * docid may then skip the ones whose signed bound cannot reach a
	 * threshold at or below 0 (spmtraverse.c, signed_window).
	 */
	bool		norm_last;
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

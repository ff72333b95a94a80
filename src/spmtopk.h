/*-------------------------------------------------------------------------
 *
 * spmtopk.h
 *	  The top-k heap and the types every scorer of a round shares: hits,
 *	  the scan's resume cursor, the phase and the per-scan counters.
 *
 * The two kernels (spmtraverse.h, spmrange.h) and the pending list
 * (spmpending.c) push into the same heap, so it lives in a unit of its
 * own, below all of them.  Nothing here touches the buffer manager.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMTOPK_H
#define SPMTOPK_H

#include "storage/itemptr.h"

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

/*
 * A heap is plain (spm_topk_init): the k first rows in result order of all
 * offered, full once it holds k.  Or elastic (spm_topk_init_elastic, src/
 * README "Quantized weights"): it keeps every row whose score is at least
 * theta = (the want-th best score offered) - gap, and the best row below
 * theta, up to k rows, full once it holds k or a row below theta.  Either
 * way, once full, every row it drops or the kernels skip comes after
 * heap[0], heap[0] only moves up in result order, and the heap ends as
 * the first n rows of all offered: a prefix that the scan may return.
 * Not full at the end means nothing was dropped.
 */
typedef struct SpmTopK
{
	int			k;				/* capacity */
	int			n;				/* entries in heap[] */
	bool		full;			/* kernels may prune below heap[0] */
	SpmHit	   *heap;			/* heap[0] is the worst entry */
	/* elastic only (want > 0) */
	int			want;			/* rows the caller needs for sure */
	int			nbest;			/* entries in best[] */
	double		gap;			/* how far below a bound a score may be */
	double		theta;			/* never falls; -inf until nbest == want */
	double	   *best;			/* [want] min-heap of the best scores */
} SpmTopK;

/* is (s1, d1) strictly before (s2, d2) in result order? */
static inline bool
spm_hit_before(double s1, uint64 d1, double s2, uint64 d2)
{
	return s1 > s2 || (s1 == s2 && d1 < d2);
}

extern void spm_topk_init(SpmTopK *topk, int k, SpmHit *storage);
extern void spm_topk_init_elastic(SpmTopK *topk, int k, SpmHit *storage,
								  int want, double gap, double *best);
extern void spm_topk_copy(SpmTopK *dst, const SpmTopK *src, SpmHit *heap,
						  double *best);
extern bool spm_topk_push(SpmTopK *topk, double score, uint64 docid,
						  const ItemPointerData *tid);
extern void spm_topk_sort(SpmTopK *topk);

static inline bool
spm_topk_full(const SpmTopK *topk)
{
	return topk->full;
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

/* is local docid alive?  (both kernels' callback for the alive bits) */
typedef bool (*SpmIsAlive) (void *arg, uint32 local);

/* which rows a pass admits (src/README "Rounds") */
typedef enum SpmPhase
{
	SPM_PHASE_POSITIVE,			/* admit score > 0 */
	SPM_PHASE_NEGATIVE,			/* admit score < 0 */
	SPM_PHASE_ANY				/* admit every score, 0 included: an L2
								 * index's rounds, where a document that
								 * shares no term with the query still has
								 * a rank (src/README "Cosine and L2");
								 * the pass offers the untouched docids of
								 * a window, at 0, until the threshold is
								 * above 0 */
} SpmPhase;

/* does a pass of this phase admit a row of this score?  (NaN: never) */
static inline bool
spm_phase_admits(SpmPhase phase, double score)
{
	if (phase == SPM_PHASE_POSITIVE)
		return score > 0.0;
	if (phase == SPM_PHASE_NEGATIVE)
		return score < 0.0;
	return score == score;		/* not NaN */
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

	/*
	 * Which algorithm scored each segment of each round (spmpolicy.h):
	 * exhaustive, MaxScore, range pruning to the end, and range pruning
	 * that gave up (MaxScore then scored the segment too, and counts in
	 * seg_maxscore).
	 */
	int64		seg_exhaustive;
	int64		seg_maxscore;
	int64		seg_ranges;
	int64		seg_ranges_gave_up;

	/* pending-list documents scored by brute force, summed over rounds */
	int64		pending_scored;

	/*
	 * The policy's estimate of the postings the kernels it chose would
	 * decode (spmpolicy.h SpmPolicy.estimate), summed as postings_decoded
	 * is, over the segments of every pass
	 */
	int64		postings_estimated;
} SpmCounters;

/*
 * What each segment ran in each pass of a scan (sparse_maxscore_last_scan_
 * segments()): the policy's choice, the query terms' postings in the
 * segment, the estimate and what was decoded.  The first SPM_SEGLOG_MAX
 * of a scan are kept.
 */
#define SPM_SEGLOG_MAX	256

/* the passes of a scan over a segment */
typedef enum SpmPass
{
	SPM_PASS_TOPK,				/* a top-k round */
	SPM_PASS_SORTED,			/* every positive row, sorted */
	SPM_PASS_NEGATIVE,			/* every negative row, sorted */
	SPM_PASS_ZERO				/* the rows of score zero, a batch at a time */
} SpmPass;

typedef struct SpmSegRun
{
	int32		round;			/* top-k rounds run so far, 1 for the first */
	int32		segment;		/* 0 for the first of the segment list */
	int32		pass;			/* SpmPass */
	int32		run;			/* SpmRun; SPM_SEGRUN_GAVE_UP: range pruning
								 * gave up and MaxScore scored it */
	int64		postings;
	int64		estimate;
	int64		decoded;
} SpmSegRun;

#define SPM_SEGRUN_GAVE_UP	(-1)

typedef struct SpmSegLog
{
	int			n;
	int64		dropped;		/* rows beyond SPM_SEGLOG_MAX */
	SpmSegRun	rows[SPM_SEGLOG_MAX];
} SpmSegLog;

#endif							/* SPMTOPK_H */

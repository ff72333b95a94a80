/*-------------------------------------------------------------------------
 *
 * spmsegscan.h
 *	  Scoring one segment for a scan: the boundary between the scan
 *	  (spmscan.c: rounds, tail phases, the AM callbacks) and the kernels.
 *
 * spmsegscan.c is the only file that includes the kernels' headers
 * (spmtraverse.h, spmrange.h): it asks the policy (spmpolicy.h) which
 * algorithm scores the segment, wraps the segment reader (spmsegment.c)
 * in the kernels' callbacks, and keeps the kernels' work memory per
 * backend.  See src/README "Changing the scan".
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMSEGSCAN_H
#define SPMSEGSCAN_H

#include "spm.h"
#include "spmsegment.h"
#include "spmtopk.h"

/* the query, as every segment of a scan sees it */
typedef struct SpmSegQuery
{
	const SparseVector *query;
	bool		negative;		/* some query weight is below zero */
	bool		l2;				/* the query's last term is an L2 index's
								 * norm term (weight 1) */
	int			algorithm;		/* sparse_maxscore.algorithm when the scan
								 * started (SpmAlgorithm) */
	SpmCounters *counters;		/* the scan's */
	SpmSegLog  *log;			/* the scan's, or NULL */
} SpmSegQuery;

/*
 * A round's part of one segment, the segno-th of the list: offer every
 * document of local docids below docid_limit - ref->docid_lo whose score
 * the phase admits (SPM_PHASE_POSITIVE, or SPM_PHASE_ANY for an L2 index:
 * every row but the NULL ones) and that is after the cursor to topk.  The
 * documents' TIDs are not resolved.
 */
extern void spm_segscan_topk(Relation index, SpmSegment *seg, int segno,
							 const SpmSegmentRef *ref, uint64 docid_limit,
							 const SpmSegQuery *q, SpmPhase phase,
							 const SpmAfter *after, SpmTopK *topk);

/*
 * How far below its bound a document's exact score may be in this
 * segment, about: the sum over the query's terms of |q| times the
 * term's widest quantization cell (src/README "Quantized weights");
 * 0 for a segment of exact weights.
 */
extern double spm_segscan_gap(Relation index, SpmSegment *seg,
							  const SpmSegQuery *q);

/*
 * Every alive document of the segment (below docid_limit) whose score the
 * phase admits (not NULL for SPM_PHASE_ANY) and comes after the cursor,
 * with its TID, to cb.
 */
extern void spm_segscan_rows(Relation index, SpmSegment *seg, int segno,
							 const SpmSegmentRef *ref, uint64 docid_limit,
							 const SpmSegQuery *q, SpmPhase phase,
							 const SpmAfter *after, SpmRowCallback cb,
							 void *arg);

/*
 * The canonical scores of a segment's documents, a window of at most
 * SPM_WINDOW local docids at a time, in ascending order of windows:
 * spm_segscores_window returns the scores of [a, b) indexed by docid - a,
 * valid until the next call, or NULL when the segment holds no query term
 * (every score is 0).  Allocates in CurrentMemoryContext.
 */
typedef struct SpmSegScores SpmSegScores;

extern SpmSegScores *spm_segscores_begin(Relation index, SpmSegment *seg,
										 int segno,
										 const SpmSegmentRef *ref,
										 uint64 docid_limit,
										 const SpmSegQuery *q);
extern const double *spm_segscores_window(SpmSegScores *ss, uint32 a,
										  uint32 b);
extern void spm_segscores_end(SpmSegScores *ss);

#endif							/* SPMSEGSCAN_H */

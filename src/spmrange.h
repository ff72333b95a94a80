/*-------------------------------------------------------------------------
 *
 * spmrange.h
 *	  Exact top-k of one segment by range pruning (Block-Max Pruning):
 *	  upper bounds per docid range from the query terms' range maxima,
 *	  ranges visited in bound order and scored from the forward copy,
 *	  stopped when no remaining bound reaches the k-th score.
 *
 * Like spmtraverse.h, nothing here touches the buffer manager: the range
 * maxima and the documents arrive through callbacks, so that the kernel
 * is tested against brute force outside the server (test/unit).  See
 * src/README "Ranges" for the format and "Exactness" for the scores.
 *
 * The kernel handles the positive phase of segments and queries whose
 * weights are all positive (the caller checks spm_range_usable).  Every
 * score it admits is canonical: the sum of q * w over the document's
 * matching query terms, in ascending term order, in double from +0.0.
 * The bounds are float sums; a range is skipped only when its bound,
 * enlarged by a margin larger than their worst rounding error, stays
 * below the k-th score.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMRANGE_H
#define SPMRANGE_H

#include "sparsevec.h"
#include "spmblock.h"
#include "spmtopk.h"

/* one query term the segment has, as the caller describes it */
typedef struct SpmRangeTerm
{
	uint32		term;			/* dimension */
	double		q;				/* query weight, > 0 */
	float		max_w;			/* the term's largest weight (> 0) in the
								 * segment: level 255 */
	bool		dense;			/* nranges level bytes, else nr entries */
	uint32		nr;				/* ranges where the term has a posting */
	int			id;				/* the caller's own number, for callbacks */
	/* format 6 (SpmRangeDoc.codes16): code m is (qbase + m) * qscale */
	int32		qbase;			/* the term's base b_t */
	float		qscale;			/* 2^e_t */
} SpmRangeTerm;

/*
 * A document of the forward copy: nnz elements in ascending term order,
 * either as (term, weight) pairs in elems, or (elems NULL) as 16-bit terms
 * in terms16 and their weights in w16, or (w16 NULL, format 6) their codes
 * in codes16, whose weights are the upper ends (SpmRangeTerm.qbase +
 * code) * qscale, what the term's posting blocks decode to.
 */
typedef struct SpmRangeDoc
{
	int32		nnz;
	const SpmFwdElem *elems;
	const uint16 *terms16;
	const float *w16;
	const uint8 *codes16;
} SpmRangeDoc;

/*
 * The bytes of the term's range data from byte pos on, as far as they are
 * contiguous in memory: sets *data and returns how many (>= 1, and a
 * multiple of 4 for entries; possibly more than the term has, which the
 * kernel ignores).  Valid until the next call.
 */
typedef uint32 (*SpmRangeData) (void *arg, const SpmRangeTerm *term,
								 uint64 pos, const uint8 **data);

/*
 * Start reading range r of the forward copy; then next_doc is called once
 * per local docid of the range, in order.  Each document is valid until
 * the next call.
 */
typedef void (*SpmRangeBegin) (void *arg, uint32 r);
typedef void (*SpmRangeNextDoc) (void *arg, SpmRangeDoc *doc);
typedef void (*SpmRangeEnd) (void *arg, uint32 r);

/*
 * Work arrays of spm_range_topk, which a caller may keep from one call to
 * the next (the segment scan, spmsegscan.c, keeps one per backend), as it
 * keeps the traversal's (SpmTraverseScratch): arrays of a few MB
 * allocated and freed per call come from mmap, and faulting their pages in
 * made large segments much slower (doc/decisions.md "Work arrays kept per
 * backend").  The owner sets cxt and zeroes the rest; the kernel grows the
 * arrays in cxt to the segment's ranges and initializes what it reads, so
 * their contents between calls, including after an error, do not matter;
 * after a call it frees the per-range arrays if they have room for more
 * than SPM_RANGE_SCRATCH_KEEP ranges (about 14 bytes a range).  One call
 * at a time.
 */
typedef struct SpmRangeScratch
{
	MemoryContext cxt;			/* set by the owner: where the arrays live */
	uint32		cap;			/* ranges the arrays below have room for */
	float	   *ub;				/* [cap] bounds */
	uint16	   *bucket;			/* [cap] */
	uint32	   *order;			/* [cap] */
	uint32	   *band;			/* [cap] */
	uint64	   *filter;			/* [SPM_RANGE_FILTER_BITS / 64] */
	uint8	   *qidx;			/* [SPM_RANGE_FILTER_BITS + 4]: a gather
								 * reads 4 bytes from an entry */
} SpmRangeScratch;

#define SPM_RANGE_SCRATCH_KEEP	(4U << 20)

/* the query-term filter's size, in bits (and qidx's, in bytes) */
#define SPM_RANGE_FILTER_BITS	SPV_FILTER_BITS

typedef struct SpmRangeScan
{
	/* the query terms the segment has, in ascending term order */
	const SpmRangeTerm *terms;
	int			nterms;

	uint64		docid_lo;		/* global docid of local docid 0 */
	uint32		ndocs;			/* visit local docids [0, ndocs) */
	uint32		nranges;		/* the segment's ranges (>= those of ndocs) */
	SpmAfter	after;
	SpmTopK    *topk;

	SpmRangeData range_data;
	SpmRangeBegin range_begin;
	SpmRangeNextDoc next_doc;
	SpmRangeEnd range_end;
	SpmIsAlive	is_alive;		/* NULL when every docid is alive */
	void	   *arg;

	/*
	 * Give up (return false, the heap untouched) when the documents still
	 * to score would cost more than this many forward-copy elements, the
	 * caller's price of its other way; 0 = never.  elems_per_doc is the
	 * segment's mean document length.
	 */
	double		fallback_cost;
	double		elems_per_doc;

	SpmRangeScratch *scratch;	/* NULL: allocate in CurrentMemoryContext
								 * and free at the end */

	const char *relname;		/* the index, for error messages */
	SpmCounters *counters;		/* windows = ranges with a bound,
								 * windows_skipped = of those, not scored,
								 * candidates = documents scored */
} SpmRangeScan;

/*
 * Can the kernel score this segment for this query?  The query terms' q
 * and max_w must be positive and q * max_w / 255 a normal float (so that
 * the bounds' rounding is relative).
 */
extern bool spm_range_usable(const SpmRangeTerm *terms, int nterms);

extern bool spm_range_topk(SpmRangeScan *s);

/* ub[r] += scale * levels[r] for r < n (the bound pass of dense terms) */
extern void spm_range_add_dense(float *ub, const uint8 *levels, float scale,
								uint32 n);

#endif							/* SPMRANGE_H */

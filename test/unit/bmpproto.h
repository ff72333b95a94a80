/*
 * bmpproto.h: a kernel-only prototype of Block-Max Pruning (Mallia et al.,
 * SIGIR 2024) for measurement: documents in ranges of `range` docids, per
 * term and range the term's largest weight there quantized upward to a
 * byte, and a forward copy of the postings per range.  A query sums its
 * terms' range maxima into a bound per range, scores ranges from the
 * forward copy in descending bound order, and stops when no remaining
 * bound reaches the k-th score.  Positive weights only.  Used by
 * bench_traverse's "bmp" mode; not part of the extension.
 */
#ifndef BMPPROTO_H
#define BMPPROTO_H

#include "unitseg.h"

typedef struct Bmp
{
	int			range;			/* docids per range, <= 64 */
	uint32		nranges;
	float	   *tmax;			/* per term: its largest weight */
	int64	   *rm_start;		/* per term: its first (range, max) pair */
	uint32	   *rm_range;		/* per pair: the range */
	uint8	   *rm_q;			/* per pair: ceil(255 * max / tmax) */
	int64		npairs;
	/* the forward copy: per range its terms, per term its postings */
	uint32	   *r_tstart;		/* per range: first index into f_term */
	uint32	   *r_estart;		/* per range: first posting entry */
	uint16	   *f_term;			/* term ids, ascending within a range */
	uint32	   *f_first;		/* per (range, term): first posting entry */
	uint8	   *e_off;			/* per posting: docid - range start */
	float	   *e_w;			/* per posting: its weight */
	int64		npostings;
	uint8	  **dense;			/* per term: rm_q over all ranges, or NULL */
	/* per-query scratch */
	float	   *ub;
	uint16	   *bucket_of;
	uint32	   *order;
	double	   *acc;
} Bmp;

typedef struct BmpCounters
{
	int64		queries;
	int64		ranges;			/* ranges scored */
	int64		postings;		/* forward postings read */
	int64		pairs;			/* range maxima summed */
} BmpCounters;

extern void bmp_build(Bmp *b, const UnitTerm *terms, int nterms, uint32 ndocs,
					  int range);
extern int	bmp_query(Bmp *b, const int32 *qt, const float *qv, int nq, int k,
					  SpmHit *hits, BmpCounters *c);

#endif							/* BMPPROTO_H */

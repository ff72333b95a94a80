/*
 * bmpproto.h: a kernel-only prototype of Block-Max Pruning (Mallia et al.,
 * SIGIR 2024) for measurement: documents in ranges of `range` docids, per
 * term and range the term's largest weight there quantized upward to a
 * byte, and a forward copy of the postings per range.  A query sums its
 * terms' range maxima into a bound per range, scores ranges from the
 * forward copy in descending bound order, and stops when no remaining
 * bound reaches the k-th score.  Positive weights only.  Used by
 * bench_traverse's "bmp" mode; not part of the extension.
 *
 * A scored range's documents can be taken from three layouts
 * (BmpScorer), so that they can be compared on the same visits: the
 * prototype's own per-range copy; the index's forward copy, a document's
 * 16-bit terms then its weights, scored through the query-term filter
 * and table as spmrange.c does; or no copy at all, the query terms'
 * posting blocks of the real codec (spmblock.c) found through their last
 * docids and decoded, which an index without a forward copy would do.
 */
#ifndef BMPPROTO_H
#define BMPPROTO_H

#include "unitseg.h"

typedef enum BmpScorer
{
	BMP_SCORE_RANGE,			/* the per-range copy below */
	BMP_SCORE_DOCS,				/* a forward copy per document */
	BMP_SCORE_POSTINGS,			/* the posting blocks */
	BMP_SCORE_DOCS_BF16,		/* a forward copy per document with its
								 * weights rounded up to bfloat16, exact
								 * scores from the posting blocks */
	BMP_SCORE_DOCS_Q8			/* the same with levels of 255 per term */
} BmpScorer;

#define BMP_NSCORERS	5

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
	/* the forward copy per document, as the index stores it (format 4) */
	uint32		ndocs;
	int64	   *d_start;		/* per document: its first element */
	uint16	   *d_term;			/* per element: term, ascending per document */
	float	   *d_w;			/* per element: weight */
	uint16	   *d_w16;			/* per element: weight rounded upward to a
								 * bfloat16 (its top 16 bits) */
	/* the posting lists, encoded (bmp_build's terms and blocks) */
	const UnitTerm *terms;
	const UnitBlocks *blocks;
	/* per-query scratch */
	float	   *ub;
	uint16	   *bucket_of;
	uint32	   *order;
	double	   *acc;
	uint64	   *filter;			/* BMP_SCORE_DOCS: 65,536-bit term filter */
	uint8	   *qidx;			/* and 1 + query position by term */
	int		   *pblk;			/* BMP_SCORE_POSTINGS, per query term: the
								 * block decoded into pdocs/pw, or -1 */
	uint32	   *pdocs;			/* [1024][SPM_BLOCK_POSTINGS] */
	float	   *pw;
} Bmp;

typedef struct BmpCounters
{
	int64		queries;
	int64		ranges;			/* ranges scored */
	int64		postings;		/* forward postings read */
	int64		pairs;			/* range maxima summed */
	int64		blocks;			/* BMP_SCORE_POSTINGS: blocks decoded */
	int64		docs;			/* BMP_SCORE_DOCS_*: documents scored */
	int64		exact;			/* BMP_SCORE_DOCS_BF16, _Q8: of those, the
								 * ones whose bound reached the k-th score */
} BmpCounters;

extern void bmp_build(Bmp *b, const UnitTerm *terms, const UnitBlocks *blocks,
					  int nterms, uint32 ndocs, int range);
extern int	bmp_query(Bmp *b, const int32 *qt, const float *qv, int nq, int k,
					  BmpScorer scorer, SpmHit *hits, BmpCounters *c);

#endif							/* BMPPROTO_H */

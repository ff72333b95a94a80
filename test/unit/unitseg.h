/*
 * unitseg.h: posting lists encoded with the real block codec, in memory,
 * for the unit tests and the kernel benchmark (no buffer manager).
 */
#ifndef UNITSEG_H
#define UNITSEG_H

#include "spmtraverse.h"

/* one term's postings and, after unit_encode_term, its blocks */
typedef struct UnitTerm
{
	int			df;
	uint32	   *docs;			/* [df] ascending local docids */
	float	   *w;				/* [df] */
	int			nblocks;
	uint32	   *last;			/* [nblocks] last docid of the block */
	float	   *bmax;
	float	   *bmin;
	uint8	   *count;
	uint32	   *blkno;			/* index into UnitBlocks.enc */
	uint16	   *off;			/* all zero: a block per "page" */
	SpmTermSummary *sum;		/* spm_term_summarize of the above */
} UnitTerm;

/* the encoded blocks of every term */
typedef struct UnitBlocks
{
	char	  **enc;
	int			n;
	int			cap;
	int64		bytes;			/* encoded bytes of all blocks */
	int64		postings;
	int64		packed;			/* blocks in the packed codec */
	bool		quantize;		/* encode quantized weights (spmblock.h) */
} UnitBlocks;

extern void unit_encode_term(UnitTerm *t, UnitBlocks *blocks);
extern void unit_free_term(UnitTerm *t);
extern void unit_free_blocks(UnitBlocks *blocks);
extern void unit_query_term(const UnitTerm *t, double q, SpmQueryTerm *out);
extern void unit_read_block(const UnitBlocks *blocks, const SpmQueryTerm *term,
							int b, uint32 *docids, float *weights);
extern void unit_accumulate_block(const UnitBlocks *blocks,
								  const SpmQueryTerm *term, int b, double q,
								  double *acc, uint32 base);

#endif							/* UNITSEG_H */

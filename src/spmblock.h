/*-------------------------------------------------------------------------
 *
 * spmblock.h
 *	  Posting-block codec: up to 128 (docid, weight) postings of one term.
 *
 * Layout (all offsets 4-byte aligned within the page):
 *
 *	SpmBlockHeader				8 bytes
 *	docid deltas				nbytes_ids bytes, varbyte, count - 1 of them
 *	padding						to a multiple of 4
 *	float4 weights[count]		raw, bit-identical to the heap value
 *
 * Docids are segment-local (uint32).  The first one is absolute, the others
 * are deltas d[i] - d[i-1] >= 1 in 7-bit groups, least significant first,
 * high bit set on every byte but the last of a value.  The codec has no
 * buffer-manager calls so that it can be tested outside the server.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMBLOCK_H
#define SPMBLOCK_H

#define SPM_BLOCK_POSTINGS	128

typedef struct SpmBlockHeader
{
	uint32		first_docid;	/* local docid of the first posting */
	uint8		count;			/* postings, 1..SPM_BLOCK_POSTINGS */
	uint8		flags;			/* codec; 0 is the only one in version 1 */
	uint16		nbytes_ids;		/* bytes of varbyte deltas (no padding) */
} SpmBlockHeader;

/* worst case: every delta takes 5 bytes */
#define SPM_BLOCK_MAX_BYTES \
	(sizeof(SpmBlockHeader) + (SPM_BLOCK_POSTINGS - 1) * 5 + 3 + \
	 SPM_BLOCK_POSTINGS * sizeof(float))

extern int	spm_block_encode(const uint32 *docids, const float *weights,
							 int count, char *out);
extern int	spm_block_size(const char *block, int avail);
extern bool spm_block_decode(const char *block, int avail, int count,
							 uint32 last_docid, uint32 *docids, float *weights);
extern bool spm_block_accumulate(const char *block, int avail, int count,
								 uint32 last_docid, double q, double *acc,
								 uint32 base, uint32 mask);

#endif							/* SPMBLOCK_H */

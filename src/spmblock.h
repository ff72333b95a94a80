/*-------------------------------------------------------------------------
 *
 * spmblock.h
 *	  Posting-block codec: up to 128 (docid, weight) postings of one term;
 *	  skip-entry summaries, the accumulator window and the range units.
 *
 * Layout (all offsets 4-byte aligned within the page):
 *
 *	SpmBlockHeader				8 bytes
 *	docid deltas				nbytes_ids bytes, count - 1 of them, in one
 *								of two codecs (flags)
 *	padding						to a multiple of 4
 *	weights, in one of two forms (flags & SPM_BLOCK_QUANT):
 *	  raw		float4 weights[count], bit-identical to the heap value
 *	  quantized	SpmBlockQuant (4 bytes), then one code byte per posting,
 *				padded to a multiple of 4 (format version 5)
 *
 * Docids are segment-local (uint32).  The first one is absolute (in the
 * header); the others are deltas d[i] - d[i-1] >= 1:
 *
 *	flags		codec		deltas
 *	0			varbyte		7-bit groups, least significant first, high bit
 *							set on every byte but the last of a value
 *	0x40 | b	packed		delta - 1 in b bits (0 <= b <= 32), value j in
 *							bits [j*b, j*b + b) of the little-endian bit
 *							string, nbytes_ids = ceil((count - 1) * b / 8)
 *
 * The encoder takes the codec whose deltas take fewer bytes, the packed one
 * on a tie (format version 2; version 1 wrote only varbyte, and both
 * decode).  Packed decodes without a branch per posting and is smaller
 * unless one delta of the block is far larger than the others; the choice
 * is measured in doc/decisions.md, "Bit-packed docid deltas".  The codec
 * has no buffer-manager calls so that it can be tested outside the server.
 *
 * Quantized weights (src/README "Quantized weights").  A block holds an
 * exponent e and a base b, and per posting a code m in 1..255: the exact
 * weight lies in the cell ((b + m - 1) * 2^e, (b + m) * 2^e] of the
 * lattice of 2^e.  It is decoded for a positive query weight as the upper
 * end of its cell, for a negative one as the lower end, so that every
 * product q * w the index adds is at least the exact one.  e is the
 * smallest exponent whose cells from the smallest weight's to the
 * largest's number at most 255, so a cell is at most 1/127 of the block's
 * spread of weights (max - min: the next smaller exponent would need
 * more than 255 cells, so 2^e < 2 * spread / 254), or about 2^-23 of them when they are all
 * equal.  The lattice of 2^e is nested in the lattice of every larger
 * power of two, so a merge re-encodes a quantized posting at an exponent
 * >= its own without widening its interval beyond one cell of the new
 * lattice (the postings' exps given to spm_block_encode_bounds).  Blocks
 * of fewer than 3 postings, and blocks whose weights no exponent in
 * [SPM_QEXP_MIN, SPM_QEXP_MAX] can hold, stay raw: exact.
 *
 * Besides the codec, this header holds the few pieces of the segment
 * format that the writers, the segment reader and the kernels all use,
 * so that none of them needs another's header: the accumulator window,
 * skip-entry summaries, and the units of range pruning (src/README
 * "Ranges").
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMBLOCK_H
#define SPMBLOCK_H

#include <math.h>

#define SPM_BLOCK_POSTINGS	128

typedef struct SpmBlockHeader
{
	uint32		first_docid;	/* local docid of the first posting */
	uint8		count;			/* postings, 1..SPM_BLOCK_POSTINGS */
	uint8		flags;			/* codec: 0 varbyte, SPM_BLOCK_PACKED | width */
	uint16		nbytes_ids;		/* bytes of docid deltas (no padding) */
} SpmBlockHeader;

#define SPM_BLOCK_PACKED	0x40	/* flags: packed deltas; low bits: width */
#define SPM_BLOCK_WIDTH_MASK 0x3F
#define SPM_BLOCK_QUANT		0x80	/* flags: quantized weights */

/* in front of the codes of a quantized block */
typedef struct SpmBlockQuant
{
	int32		base;			/* |base| + 256 < SPM_QBASE_LIMIT */
	int16		exp;			/* SPM_QEXP_MIN..SPM_QEXP_MAX */
	uint16		reserved;		/* 0 */
} SpmBlockQuant;

#define SPM_QEXP_MIN		(-149)	/* 2^-149: the smallest float4 */
#define SPM_QEXP_MAX		104		/* (2^24 - 1) * 2^104 < FLT_MAX */
#define SPM_QBASE_LIMIT		(1 << 24)	/* (base + m) * 2^e is a float4 */
#define SPM_QEXP_EXACT		(-32768)	/* a posting's weight is exact */
#define SPM_QUANT_MIN_POSTINGS 3	/* below, raw takes no more bytes */

/* codecs for spm_block_encode_codec */
#define SPM_CODEC_VARBYTE	0
#define SPM_CODEC_PACKED	1

/* bytes of count - 1 packed deltas of width bits */
#define SPM_PACKED_BYTES(count, width) ((((count) - 1) * (width) + 7) / 8)

/* worst case: every delta takes 5 bytes (varbyte; packed takes at most 4) */
#define SPM_BLOCK_MAX_BYTES \
	(sizeof(SpmBlockHeader) + (SPM_BLOCK_POSTINGS - 1) * 5 + 3 + \
	 SPM_BLOCK_POSTINGS * sizeof(float))

extern int	spm_block_encode(const uint32 *docids, const float *weights,
							 int count, char *out);
extern int	spm_block_encode_codec(const uint32 *docids, const float *weights,
								   int count, int codec, char *out);
extern int	spm_block_encode_bounds(const uint32 *docids,
									const float *weights, const int16 *exps,
									int count, bool quantize, char *out,
									float *bmax, float *bmin);
extern int	spm_block_size(const char *block, int avail);
extern bool spm_block_decode(const char *block, int avail, int count,
							 uint32 last_docid, uint32 *docids, float *weights);
extern bool spm_block_decode_bounds(const char *block, int avail, int count,
									uint32 last_docid, bool lower,
									uint32 *docids, float *weights,
									int16 *exp);
extern bool spm_block_last_docid(const char *block, int avail, int count,
								 uint32 *last);
extern bool spm_quantize(const float *weights, const int16 *exps, int count,
						 int16 *exp, int32 *base, int *codes);

/*
 * 2^e as a float4, for e in [SPM_QEXP_MIN, SPM_QEXP_MAX]: ldexpf's value,
 * from its bits (a call to ldexpf cost 45 instructions a block).
 */
static inline float
spm_pow2f(int e)
{
	uint32		bits;
	float		f;

	Assert(e >= SPM_QEXP_MIN && e <= SPM_QEXP_MAX);
	if (e >= -126)
		bits = (uint32) (e + 127) << 23;	/* normal */
	else
		bits = (uint32) 1 << (e + 149); /* subnormal */
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/*
 * The cell n = ceil(w / 2^e) of a weight (or of the upper end of a cell of
 * an exponent <= e) at exponent e, computed exactly in double; its upper
 * end is n * 2^e, which spm_qupper gives as every decoder computes it
 * (exact in float4 while |n| < SPM_QBASE_LIMIT).
 */
static inline int32
spm_qcell(float w, int e)
{
	return (int32) ceil(ldexp((double) w, -e));
}

static inline float
spm_qupper(int32 n, int e)
{
	return (float) n * spm_pow2f(e);
}

/*
 * Ask for every cache line of a block about to be decoded at once, so
 * that the misses overlap instead of coming one by one as the decoder
 * reaches them.  A block of count postings takes about 5.2 bytes per
 * posting with raw float4 weights and about 2.2 with 1-byte weights
 * (format 5, "Quantized weights" in README); count * 6 + 16 covers both
 * but blocks of far-apart docids (on a quantized block it asks for more
 * than the block, which costs a few hints), and avail keeps the prefetch
 * inside the page.  On large indexes a query's posting
 * blocks come from DRAM, not the CPU caches, and the prefetch lowered the
 * backend's CPU time per query (doc/decisions.md, "Prefetching a posting
 * block").  A prefetch never faults, so a damaged count costs nothing but
 * the hint.  The server calls it when it locks a posting block
 * (spmsegment.c), the unit harness where the server would
 * (test/unit/unitseg.c).
 */
static inline void
spm_block_prefetch(const char *block, int avail, int count)
{
	int			n = Min(avail, count * 6 + 16);

	for (int i = 0; i < n; i += 64)
		__builtin_prefetch(block + i);
}

extern bool spm_block_accumulate(const char *block, int avail, int count,
								 uint32 last_docid, double q, double *acc,
								 uint32 base, uint32 mask);

/*
 * docids per window of the term-at-a-time kernel and of
 * spm_block_accumulate's accumulator (a power of two)
 */
#define SPM_WINDOW			16384

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
	float		spread;			/* the largest max_w - min_w of a block of
								 * 3 postings or more, about 127 times its
								 * widest quantization cell as a build
								 * writes it (the first round's gap, an
								 * estimate: spmsegscan.c) */
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


/* docids per range (src/README "Ranges") */
#define SPM_RANGE_SHIFT		5
#define SPM_RANGE_DOCS		(1 << SPM_RANGE_SHIFT)

/* an element of a document in the forward copy */
typedef struct SpmFwdElem
{
	uint32		term;
	float		w;
} SpmFwdElem;

/* the level of weight m in a term whose largest weight is max_w */
extern uint8 spm_range_level(float m, float max_w);

#endif							/* SPMBLOCK_H */

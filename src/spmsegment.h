/*-------------------------------------------------------------------------
 *
 * spmsegment.h
 *	  sparse_maxscore: reading segments through the per-backend segment
 *	  cache (spmsegment.c).
 *
 * See src/README "Segment cache".  Scans, merges, VACUUM and the admin
 * functions read segments only through this interface.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMSEGMENT_H
#define SPMSEGMENT_H

#include "storage/buf.h"
#include "utils/relcache.h"

#include "spmcompat.h"
#include "spmformat.h"
#include "spmpolicy.h"

/* the byte streams of a segment (README "Ranges") */
typedef enum SpmStreamKind
{
	SPM_STREAM_FWD,
	SPM_STREAM_RANGEIDX,
	SPM_STREAM_RANGEMAX
} SpmStreamKind;

#define SPM_STREAM_KINDS	3

typedef struct SpmSegment
{
	/* identity: index (relfilenode + build nonce) and segment */
	SpmRelFile	node;
	uint64		nonce;
	uint32		segment_id;
	BlockNumber header;

	SpmSegmentHeaderData hdr;
	BlockNumber *docmap;		/* [hdr.ndocmap] */
	BlockNumber *alive;			/* [hdr.nalive] */
	BlockNumber *nullmap;		/* [hdr.nnullmap] */
	uint32	   *dict_first;		/* [hdr.ndict] first term of each page */
	BlockNumber *dict_blk;		/* [hdr.ndict] */
	BlockNumber *post;			/* [hdr.npost] */
	BlockNumber *skip;			/* [hdr.nskip] */
	BlockNumber *fwd;			/* [hdr.nfwd] */
	BlockNumber *rangeidx;		/* [hdr.nrangeidx] */
	BlockNumber *rangemax;		/* [hdr.nrangemax] */
	struct HTAB *terms;			/* term -> SpmTermInfo, filled lazily */
	Size		skipbytes;		/* bytes of cached SpmTermData arrays */

	/* the policy's memory of the segment in this backend (spmpolicy.h) */
	SpmBackoff	backoff;

	/*
	 * Per stream kind, the buffer each page of the stream was last found
	 * in, by page index, InvalidBuffer if none yet; allocated on first use
	 * (spmsegment.c SpmLockStream).
	 */
	Buffer	   *recent[SPM_STREAM_KINDS];

	MemoryContext cxt;
	uint64		stamp;			/* last round that used it */
} SpmSegment;

/* a term's skip entries, as flat arrays (one element per posting block) */
typedef struct SpmTermData
{
	SpmDictEntry entry;
	int			nblocks;		/* -1: from SpmGetTermBrief, no skip arrays */
	uint32	   *last;			/* last local docid of the block */
	float4	   *max_w;
	float4	   *min_w;
	BlockNumber *blkno;
	uint16	   *off;
	uint8	   *count;
	SpmTermSummary *sum;		/* spm_term_summarize of the above */
	SpmRangeDesc range;			/* its range maxima (SPM_SEG_RANGES) */
} SpmTermData;

/* a pinned page kept across lookups (docmap, bitsets) */
typedef struct SpmPin
{
	Buffer		buf;
	BlockNumber blkno;
} SpmPin;

extern void SpmCacheNewRound(void);
extern SpmSegment *SpmGetSegment(Relation index, const SpmMetaPageData *meta,
								 int i);
extern bool SpmLookupTerm(Relation index, SpmSegment *seg, uint32 term,
						  SpmDictEntry *entry);
extern int	SpmReadSkips(Relation index, SpmSegment *seg,
						 const SpmDictEntry *entry, SpmSkipEntry *out);
extern const SpmTermData *SpmGetTerm(Relation index, SpmSegment *seg,
									 uint32 term);
extern const SpmTermData *SpmGetTermBrief(Relation index, SpmSegment *seg,
										  uint32 term);
extern void SpmGetTid(Relation index, SpmSegment *seg, uint32 local,
					  ItemPointer tid, SpmPin *pin);
extern void SpmReadBitsetPage(Relation index, SpmSegment *seg, bool nulls,
							  uint32 pageno, uint8 *dst, SpmPin *pin);
extern void SpmUnpin(SpmPin *pin);
extern int	SpmReadDictPage(Relation index, SpmSegment *seg, uint32 pageno,
							SpmDictEntry *out);
extern void SpmReadPostingBlock(Relation index, SpmSegment *seg,
								BlockNumber blkno, int off, int count,
								uint32 last, bool lower, uint32 *docids,
								float *weights, int16 *exp, SpmPin *pin);
extern void SpmAccumulatePostingBlock(Relation index, SpmSegment *seg,
									  BlockNumber blkno, int off, int count,
									  uint32 last, double q, double *acc,
									  uint32 base, SpmPin *pin);
extern BlockNumber *SpmSegmentPages(Relation index, SpmSegment *seg,
									int *npages);
extern void SpmReadStream(Relation index, SpmSegment *seg, SpmStreamKind kind,
						  uint64 x, Size len, void *dst, SpmPin *pin);
extern const char *SpmLockStream(Relation index, SpmSegment *seg,
								 SpmStreamKind kind, uint64 x, uint32 *avail,
								 SpmPin *pin);
extern void SpmPrefetchStream(Relation index, SpmSegment *seg,
							  SpmStreamKind kind, uint64 x, uint64 len);
/*
 * Every term's exponent and base in a segment with SPM_SEG_FWDQ (exp
 * SPM_QEXP_EXACT for a term it does not have), for reading its forward
 * copy (SpmReadFwdElems)
 */
typedef struct SpmTermQuant
{
	int16		exp[SPM_FWD16_DIMS];
	int32		base[SPM_FWD16_DIMS];
} SpmTermQuant;

extern bool SpmDictEntryQuantOk(const SpmSegment *seg, const SpmDictEntry *e);
extern SpmTermQuant *SpmLoadTermQuant(Relation index, SpmSegment *seg);
extern uint64 SpmReadFwdElems(Relation index, SpmSegment *seg, uint64 pos,
							  uint32 nnz, SpmFwdElem *out, SpmPin *pin,
							  const SpmTermQuant *tq);
extern uint64 SpmRangeOffset(Relation index, SpmSegment *seg, uint32 r,
							 SpmPin *pin);
extern void SpmReadRangeDesc(Relation index, SpmSegment *seg, uint32 ordinal,
							 uint32 df, SpmRangeDesc *desc);

#endif							/* SPMSEGMENT_H */

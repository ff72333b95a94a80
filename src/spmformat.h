/*-------------------------------------------------------------------------
 *
 * spmformat.h
 *	  sparse_maxscore: the on-disk format (pages, metapage, segments, the
 *	  pending list).
 *
 * The format and the invariants the code relies on are described in
 * src/README; the fields below carry short reminders only.  The posting
 * blocks' codec and the range units are in spmblock.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMFORMAT_H
#define SPMFORMAT_H

#include "access/transam.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"

#include "spmblock.h"

/* ----------------------------------------------------------------
 * Format identification
 * ----------------------------------------------------------------
 */
#define SPM_MAGIC			0x53504D31	/* "SPM1" */
#define SPM_VERSION			6	/* 2: packed docid deltas (spmblock.h);
								 * 3: range maxima and forward copy;
								 * 4: 16-bit terms in the forward copy
								 * (SPM_SEG_FWD16);
								 * 5: quantized weights (SPM_SEG_QUANT);
								 * 6: quantized weights in segments with
								 * range data (SPM_SEG_FWDQ) */
#define SPM_VERSION_OLDEST	1	/* the oldest format this library reads */
#define SPM_PAGE_ID			0xFF8A	/* bloom FF83, ivfflat FF84, hnsw FF90 */

#define SPM_METAPAGE_BLKNO	0

/* ----------------------------------------------------------------
 * Page special space (every page, including the metapage)
 * ----------------------------------------------------------------
 */
typedef enum SpmPageType
{
	SPM_PAGE_META = 1,
	SPM_PAGE_PENDING,			/* pending-list page */
	SPM_PAGE_SEGHEADER,			/* segment header */
	SPM_PAGE_SEGDIR,			/* segment page directory */
	SPM_PAGE_DICT,				/* term dictionary entries */
	SPM_PAGE_SKIP,				/* skip entries */
	SPM_PAGE_POSTING,			/* posting blocks */
	SPM_PAGE_DOCMAP,			/* local docid -> heap TID */
	SPM_PAGE_ALIVE,				/* alive bitset (mutable) */
	SPM_PAGE_NULLMAP,			/* NULL-row bitset */
	SPM_PAGE_FREE,				/* recyclable once xid is old */
	SPM_PAGE_FORWARD,			/* forward copy: documents in docid order */
	SPM_PAGE_RANGEIDX,			/* range offsets, then term range descs */
	SPM_PAGE_RANGEMAX			/* per term: its maxima per docid range */
} SpmPageType;

typedef struct SpmPageOpaqueData
{
	BlockNumber next;			/* next page of this chain or Invalid */
	uint32		segment_id;		/* owning segment, 0 if none */
	FullTransactionId xid;		/* FREE: next xid when freed; PENDING:
								 * the inserting transaction */
	uint16		type;			/* SpmPageType */
	uint16		flags;			/* SPM_PAGE_FREED */
	uint16		unused2;
	uint16		page_id;		/* SPM_PAGE_ID; last two bytes of page */
} SpmPageOpaqueData;

typedef SpmPageOpaqueData *SpmPageOpaque;

StaticAssertDecl(sizeof(SpmPageOpaqueData) == 24,
				 "page_id must be the last two bytes of the page");

#define SpmPageGetOpaque(page) ((SpmPageOpaque) PageGetSpecialPointer(page))

/*
 * Is the special space of page (read from disk: may be anything) where
 * ours is?  Checks pd_special itself: PageGetSpecialSize trusts the page
 * size field, so a damaged one made it point past the buffer.
 */
#define SpmPageHasOpaque(page) \
	(((PageHeader) (page))->pd_special == BLCKSZ - MAXALIGN(sizeof(SpmPageOpaqueData)))

/*
 * A freed page keeps its type, segment and contents (a hot standby query
 * holding an old copy of the metapage may still read it) until it is
 * reused; SPM_PAGE_FREED and the xid stamp say when it may be.  Pages that
 * never held anything useful are simply of type SPM_PAGE_FREE.
 */
#define SPM_PAGE_FREED		0x0001

/* is this (initialised) page free: FREE, or FREED and not yet reused? */
#define SpmPageIsFree(opaque) \
	((opaque)->type == SPM_PAGE_FREE || ((opaque)->flags & SPM_PAGE_FREED))

/* usable bytes between the page header and the special space */
#define SPM_PAGE_CONTENT \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SpmPageOpaqueData)))

/* ----------------------------------------------------------------
 * Metapage (block 0)
 * ----------------------------------------------------------------
 */
#define SPM_MAX_SEGMENTS	32
#define SPM_RECYCLE_MAX		1000

typedef struct SpmSegmentRef
{
	uint32		segment_id;		/* unique within the index, never reused */
	BlockNumber header;			/* segment header page */
	uint64		docid_lo;		/* first global docid of the range */
	uint64		docid_hi;		/* one past the last global docid */
	uint64		npostings;		/* postings stored */
	uint32		ndead;			/* docids whose alive bit is 0 */
	uint32		nnull;			/* NULL rows in the range */
	uint32		nholes;			/* of ndead, those written dead (no
								 * postings: gaps kept for dense docids) */
	float4		sum_df_squared; /* sum of df^2 over terms (planner) */
} SpmSegmentRef;

typedef struct SpmMetaPageData
{
	uint32		magic;			/* SPM_MAGIC */
	uint32		version;		/* SPM_VERSION */
	uint64		nonce;			/* random per build: keys backend caches */
	int32		dims;			/* dims of every indexed vector; 0 = none */
	uint32		next_segment_id;
	uint64		next_docid;		/* next global docid to hand out */
	uint32		nsegments;
	uint32		flags;			/* SPM_META_* */
	SpmSegmentRef segments[SPM_MAX_SEGMENTS];	/* sorted by docid_lo */

	/* pending list of whole documents (docids >= pending_docid_lo) */
	BlockNumber pending_head;	/* first pending page or Invalid */
	BlockNumber pending_tail;	/* last pending page or Invalid */
	BlockNumber pending_sealed; /* page being flushed: append after it */
	uint32		pending_tail_free;	/* free bytes on the tail page */
	uint64		pending_docid_lo;	/* = next_docid when the list is empty */
	uint64		pending_ndocs;
	uint64		pending_npostings;
	uint64		pending_bytes;	/* bytes of document tuples */
	uint32		pending_npages;
	uint32		pending_nnull;
	uint32		pending_ndead;

	/* statistics for amcostestimate */
	uint64		nterms_max;		/* largest dictionary of any segment */

	/*
	 * Pages freed by flushes and merges, not yet in the free space map
	 * because they may not be reused before their xid stamp is old enough
	 * (spmpage.c SpmRecycleFreed).  What does not fit waits for VACUUM.
	 */
	uint32		nrecycle;
	BlockNumber recycle[SPM_RECYCLE_MAX];
} SpmMetaPageData;

typedef SpmMetaPageData *SpmMetaPage;

StaticAssertDecl(sizeof(SpmMetaPageData) <= SPM_PAGE_CONTENT,
				 "the metapage struct must fit on a page");

#define SpmPageGetMeta(page)	((SpmMetaPage) PageGetContents(page))

#define SPM_META_NEGATIVE	0x0001	/* some indexed weight is < 0 */
#define SPM_META_COSINE		0x0002	/* segments hold weights divided by
									 * their document's norm: the index is of
									 * sparsevec_cosine_ops (README "Cosine
									 * and L2") */
#define SPM_META_L2			0x0004	/* segments hold a norm posting per
									 * document: the index is of
									 * sparsevec_l2_ops (README "Cosine and
									 * L2") */

/* ----------------------------------------------------------------
 * Segments (immutable once published, except the alive bitset)
 * ----------------------------------------------------------------
 */
typedef struct SpmSegmentHeaderData
{
	uint32		magic;			/* SPM_MAGIC */
	uint32		segment_id;
	uint64		docid_lo;		/* global docid of local docid 0 */
	uint32		ndocs;			/* local docids are [0, ndocs) */
	uint32		nterms;			/* dictionary entries */
	uint64		npostings;
	uint32		nnull;			/* NULL rows */
	uint32		flags;			/* SPM_META_NEGATIVE if any weight < 0 */
	int32		dims;			/* dims of the vectors, 0 if all NULL */
	uint32		ndocmap;		/* docmap pages */
	uint32		nalive;			/* alive-bitset pages */
	uint32		nnullmap;		/* null-bitset pages */
	uint32		ndict;			/* dictionary pages */
	uint32		npost;			/* posting pages */
	uint32		nskip;			/* skip pages */
	uint32		ndirwords;		/* words in the directory chain */
	BlockNumber dir_head;		/* first SEGDIR page */
	float4		max_abs_weight;	/* largest |w| of any posting */

	/* version 3: range maxima and the forward copy (README "Ranges") */
	uint32		nranges;		/* ceil(ndocs / SPM_RANGE_DOCS) if the
								 * segment has SPM_SEG_RANGES, else 0 */
	uint32		nfwd;			/* FORWARD pages */
	uint32		nrangeidx;		/* RANGEIDX pages */
	uint32		nrangemax;		/* RANGEMAX pages */
	uint64		fwd_bytes;		/* bytes of the forward copy */
	uint64		rangemax_bytes; /* bytes of the range maxima */
} SpmSegmentHeaderData;

/* segment header flags, besides SPM_META_NEGATIVE */
#define SPM_SEG_RANGES		0x0100	/* has range maxima and forward copy */
#define SPM_SEG_FWD16		0x0200	/* the forward copy's terms are 16-bit
									 * (README "Ranges"; with SPM_SEG_RANGES,
									 * when dims <= SPM_FWD16_DIMS) */
#define SPM_FWD16_DIMS		65536
#define SPM_SEG_QUANT		0x0400	/* has quantized posting blocks: its
									 * scores are upper bounds (README
									 * "Quantized weights"; version 5) */
#define SPM_SEG_FWDQ		0x0800	/* with SPM_SEG_RANGES, SPM_SEG_FWD16
									 * and SPM_SEG_QUANT: every term's
									 * weights are quantized at one
									 * exponent, and the forward copy holds
									 * code bytes (README "Ranges";
									 * version 6) */

/*
 * Bytes of the elements of a forward-copy document of nnz elements, after
 * its element count: (term, weight) pairs of 8 bytes, or with 16-bit terms
 * the terms, zeros up to a multiple of 4 bytes, then the weights.
 */
static inline uint64
spm_fwd_elems_bytes(bool fwd16, uint64 nnz)
{
	return fwd16 ? TYPEALIGN(4, 2 * nnz) + 4 * nnz : 8 * nnz;
}

/*
 * The same in a segment with SPM_SEG_FWDQ: the terms as uint16, zeros to a
 * multiple of 4 bytes, then one code byte per element, zeros to a
 * multiple of 4 bytes.
 */
static inline uint64
spm_fwdq_elems_bytes(uint64 nnz)
{
	return TYPEALIGN(4, 2 * nnz) + TYPEALIGN(4, nnz);
}

/* the bytes of a document's elements in a segment of these header flags */
static inline uint64
spm_fwd_doc_bytes(uint32 segflags, uint64 nnz)
{
	if (segflags & SPM_SEG_FWDQ)
		return spm_fwdq_elems_bytes(nnz);
	return spm_fwd_elems_bytes((segflags & SPM_SEG_FWD16) != 0, nnz);
}

typedef SpmSegmentHeaderData *SpmSegmentHeader;

/*
 * The directory is a sequence of uint32 words spread over a chain of
 * SEGDIR pages: the docmap page numbers, the alive-bitset page numbers,
 * the null-bitset page numbers, one (first term, page number) pair per
 * dictionary page, then the posting and skip page numbers.  With the
 * header and the directory chain itself, that is every page of the
 * segment.
 */
#define SPM_DIR_WORDS_PER_PAGE	((int) (SPM_PAGE_CONTENT / sizeof(uint32)))

/* Term dictionary entry, sorted by term within and across DICT pages. */
typedef struct SpmDictEntry
{
	uint32		term;			/* 0-based dimension */
	uint32		df;				/* postings of this term in the segment */
	float4		max_w;			/* largest weight */
	float4		min_w;			/* smallest weight */
	BlockNumber skip_blkno;		/* SKIP page holding the first entry; with
								 * SPM_DICT_INLINE the POSTING page of the
								 * only block */
	uint16		skip_idx;		/* index of the first entry on that page;
								 * with SPM_DICT_INLINE the block's offset */
	uint16		flags;			/* SPM_DICT_INLINE or 0 (format <= 4: 0);
								 * format 6: SPM_DICT_TERMQ and e_t */
} SpmDictEntry;

/*
 * A term of one block has no skip entry (format 5): the dictionary entry
 * locates the block, its max_w/min_w are the block's, and the last docid
 * is read from the block itself (SpmReadSkips).
 */
#define SPM_DICT_INLINE		0x0001

/*
 * In a segment with SPM_SEG_FWDQ (format 6) every term has SPM_DICT_TERMQ
 * and its exponent e_t, plus SPM_DICT_QEXP_BIAS, in bits 8-15 of flags:
 * every block of the term is quantized at e_t, and min_w, the smallest
 * lower end, is b_t * 2^e_t for the term's base b_t.  A forward-copy code
 * m stands for the weight (b_t + m) * 2^e_t, the upper end its block
 * decodes to (README "Ranges").
 */
#define SPM_DICT_TERMQ		0x0002
#define SPM_DICT_QEXP_BIAS	150
#define SPM_DICT_QEXP_SHIFT	8

static inline uint16
spm_dict_qflags(int exp)
{
	return (uint16) (SPM_DICT_TERMQ |
					 ((exp + SPM_DICT_QEXP_BIAS) << SPM_DICT_QEXP_SHIFT));
}

static inline int
spm_dict_qexp(const SpmDictEntry *e)
{
	return (int) (e->flags >> SPM_DICT_QEXP_SHIFT) - SPM_DICT_QEXP_BIAS;
}

/* its base, min_w / 2^e_t (an integer, which readers check) */
static inline int32
spm_dict_qbase(const SpmDictEntry *e)
{
	return (int32) ldexp((double) e->min_w, -spm_dict_qexp(e));
}

#define SPM_DICT_PER_PAGE	((int) (SPM_PAGE_CONTENT / sizeof(SpmDictEntry)))

/*
 * Skip entry: one per posting block.  A term's entries are consecutive,
 * continuing on the next SKIP page of the chain when one fills up.
 */
typedef struct SpmSkipEntry
{
	uint32		last_docid;		/* last local docid in block, inclusive */
	float4		max_w;			/* largest weight in block */
	float4		min_w;			/* smallest weight in block */
	BlockNumber blkno;			/* POSTING page holding the block */
	uint16		off;			/* byte offset of the block in the page */
	uint8		count;			/* postings in block, 1..128 */
	uint8		flags;			/* codec, 0 = varbyte ids + float4 */
} SpmSkipEntry;

#define SPM_SKIP_PER_PAGE	((int) (SPM_PAGE_CONTENT / sizeof(SpmSkipEntry)))

/*
 * Ranges (README "Ranges"): local docids [r * SPM_RANGE_DOCS, (r + 1) *
 * SPM_RANGE_DOCS) form range r.  FORWARD, RANGEIDX and RANGEMAX pages are
 * byte streams: byte x of a stream is byte x % SPM_PAGE_CONTENT of the
 * stream's page x / SPM_PAGE_CONTENT (every page but the last full).
 *
 * The forward copy holds every document in local docid order: a uint32
 * element count, then that many SpmFwdElem in ascending term order (0
 * elements for NULL rows and documents written dead); in segments with
 * SPM_SEG_FWD16 (version 4, dims <= 65536) the count, then the terms as
 * uint16, zeros up to a multiple of 4 bytes, then the float4 weights
 * (spm_fwd_elems_bytes); with SPM_SEG_FWDQ too (version 6) a code byte
 * per element instead of its weight, zeros up to a multiple of 4 bytes
 * (spm_fwdq_elems_bytes, SPM_DICT_TERMQ).
 *
 * RANGEIDX: nranges + 1 uint64 forward-copy offsets (range r starts at
 * the r-th, the last is fwd_bytes), padded to 16 bytes, then one
 * SpmRangeDesc per dictionary entry, in dictionary order.
 *
 * RANGEMAX: per term, at the offset its SpmRangeDesc gives (a multiple of
 * 4), either nranges bytes (SPM_RANGE_DENSE: the term's level in every
 * range, 0 where it has no posting) or nr uint32 entries, (range << 8) |
 * level, ascending.  A level L >= 1 stands for the upper bound L * max_w
 * / 255 (max_w from the dictionary entry), never below the term's
 * largest weight in the range; level 0 means no positive weight.
 */
#define SPM_RANGE_LIMIT		((uint32) 1 << 24)	/* ranges a segment may have */

typedef struct SpmRangeDesc
{
	uint64		off;			/* byte offset in the RANGEMAX stream */
	uint32		nr;				/* ranges where the term has a posting */
	uint32		flags;			/* SPM_RANGE_DENSE */
} SpmRangeDesc;

#define SPM_RANGE_DENSE		0x0001

StaticAssertDecl(SPM_PAGE_CONTENT % sizeof(SpmRangeDesc) == 0,
				 "range descriptors must not straddle pages");

/* docmap: ItemPointerData per local docid */
#define SPM_DOCMAP_PER_PAGE ((int) (SPM_PAGE_CONTENT / sizeof(ItemPointerData)))
/* bitsets: one bit per local docid */
#define SPM_BITMAP_BYTES	((int) (SPM_PAGE_CONTENT & ~7))
#define SPM_BITS_PER_PAGE	(SPM_BITMAP_BYTES * 8)

/* ----------------------------------------------------------------
 * Pending list: whole documents, in docid order
 * ----------------------------------------------------------------
 */
/*
 * A document is one tuple, or, if it does not fit on one page, a head
 * tuple without elements (flagged CONTINUED) followed by continuation
 * chunks (flagged CHUNK, all but the last CONTINUED) filling pages of
 * their own.  A document's docid is pending_docid_lo plus its position in
 * the list; the head tuple records it (continuation chunks carry 0).
 * Tuples are MAXALIGNed and laid out from the start of the page contents
 * to pd_lower.  See README "Pending list".
 */
typedef struct SpmPendingTupleData
{
	uint64		docid;			/* global docid */
	ItemPointerData tid;		/* heap TID */
	uint16		flags;			/* SPM_PT_* */
	int32		dims;			/* 0 for a NULL row */
	int32		nnz;			/* elements of the whole document */
	int32		nhere;			/* elements stored in this chunk */
	/* int32 indices[nhere], float4 values[nhere] follow */
} SpmPendingTupleData;

typedef SpmPendingTupleData *SpmPendingTuple;

#define SPM_PT_NULL			0x0001	/* NULL row: no elements */
#define SPM_PT_DELETED		0x0002	/* VACUUM found the heap tuple dead */
#define SPM_PT_CONTINUED	0x0004	/* more elements in the next chunk */
#define SPM_PT_CHUNK		0x0008	/* a continuation chunk */

#define SpmPendingTupleSize(nhere) \
	MAXALIGN(sizeof(SpmPendingTupleData) + (Size) (nhere) * (sizeof(int32) + sizeof(float4)))
#define SpmPendingIndices(t)	((int32 *) ((char *) (t) + sizeof(SpmPendingTupleData)))
#define SpmPendingValues(t)		((float4 *) (SpmPendingIndices(t) + (t)->nhere))

#endif							/* SPMFORMAT_H */

/*-------------------------------------------------------------------------
 *
 * spmwrite.c
 *	  Write one immutable segment: docmap, postings, skip entries,
 *	  dictionary, bitsets, the forward copy and range maxima (README
 *	  "Ranges"), directory and header.
 *
 * Used by the bulk build and by the pending-list flush and compaction.
 * The caller feeds the documents of the segment in docid order
 * (spm_writer_doc, then its elements with spm_writer_doc_elems) and then
 * the posting lists in ascending term order (spm_writer_term_begin /
 * spm_writer_postings / spm_writer_term_end).  Every document comes
 * before the first term: a term's range maxima need the number of
 * ranges.  Each kind of page fills up in a local page
 * image; a block number is taken when an image is started (so that skip
 * entries can point at posting pages and chains can link forward) and the
 * image is written out when it is full.
 *
 * Nothing written here is reachable until the caller publishes the
 * returned SpmSegmentRef in the metapage; every page is written (and, when
 * wal is set, WAL-logged as a full image) before spm_writer_finish
 * returns: "children first, link last" (README "WAL").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/buffile.h"
#include "storage/bufpage.h"
#include "utils/hsearch.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmwrite.h"
#include "spmblock.h"

typedef struct SpmStream
{
	SpmPageType type;
	char	   *image;			/* BLCKSZ page being filled, or NULL */
	Buffer		buf;			/* the block it will be written to */
	BlockNumber blkno;
	int			nitems;			/* items on the current image */
} SpmStream;

/* a stream of full pages read as one byte sequence (README "Ranges") */
typedef struct SpmByteStream
{
	SpmStream	s;
	uint32	   *blk;			/* its pages, in order */
	uint32		nblk;
	uint32		cap;
	uint64		bytes;			/* written so far */
} SpmByteStream;

struct SpmWriter
{
	MemoryContext cxt;			/* everything the writer allocates */
	Relation	index;
	ForkNumber	fork;
	bool		wal;			/* GenericXLog every page (online writes) */
	uint32		segment_id;
	uint64		docid_lo;

	/* documents */
	uint32		ndocs;
	uint32		nnull;
	int32		dims;
	uint8	   *alive;			/* bitset, grows */
	uint8	   *nullmap;
	Size		bitcap;			/* bytes allocated for each bitset */

	/* page streams */
	SpmStream	docmap;
	SpmStream	post;
	SpmStream	skip;
	SpmStream	dict;

	/* directory */
	uint32	   *docmap_blk;
	uint32		ndocmap;
	uint32		docmap_cap;
	uint32	   *dict_pairs;		/* (first term, blkno) per dictionary page */
	uint32		ndict;
	uint32		dict_cap;
	uint32	   *post_blk;		/* posting pages */
	uint32		npost;
	uint32		post_cap;
	uint32	   *skip_blk;		/* skip pages */
	uint32		nskip;
	uint32		skip_cap;

	/* pages to use first (compaction), ascending */
	const BlockNumber *pref;
	int			npref;
	int			ipref;
	bool		pref_any_xid;	/* caller holds AccessExclusiveLock */
	bool		extend_only;	/* new pages only at the end of the file */

	/* the term being written */
	bool		in_term;
	bool		any_term;
	uint32		term;
	uint32		df;
	float4		max_w;
	float4		min_w;
	BlockNumber skip_blkno;
	uint16		skip_idx;
	int			t_nblocks;		/* blocks of the term so far */
	SpmSkipEntry held_se;		/* the first one's entry, written only when
								 * a second block comes (SPM_DICT_INLINE) */
	uint32		last_docid;
	int			bn;
	uint32		bdocs[SPM_BLOCK_POSTINGS];
	float		bw[SPM_BLOCK_POSTINGS];
	int16		bexp[SPM_BLOCK_POSTINGS];	/* SPM_QEXP_EXACT or a quantized
											 * weight's exponent */
	bool		quant;			/* a block was quantized (SPM_SEG_QUANT) */
	bool		exact;			/* quantize only what comes quantized */
	bool		exact_last;		/* and nothing of the last dimension's term
								 * (an L2 index's norm postings) */
	char		enc[SPM_BLOCK_MAX_BYTES];

	/* ranges and the forward copy (README "Ranges") */
	bool		ranges;			/* writing them */
	bool		terms_started;	/* no more documents may come */
	SpmByteStream fwd;
	SpmByteStream rmax;
	int32		doc_left;		/* elements of the current document to come */
	int64		doc_prev;		/* its last term so far, -1 if none */
	int			fwd16;			/* 16-bit terms (SPM_SEG_FWD16): -1 until
								 * the first document with elements */
	uint16	   *doc_terms;		/* with 16-bit terms, the current document */
	float	   *doc_w;			/* is kept here until it is complete */
	int32		doc_n;
	int32		doc_cap;
	uint64	   *range_off;		/* forward-copy offset of each range */
	uint32		range_cap;
	SpmRangeDesc *rdesc;		/* per dictionary entry */
	uint32		rdesc_cap;
	uint32	   *t_range;		/* the term's ranges so far */
	float	   *t_max;			/* and its largest weight in each */
	uint32		t_nr;
	uint32		t_cap;
	uint8	   *levels;			/* scratch: nranges bytes */

	/*
	 * ranges = auto (spm_writer_ranges_auto): the forward copy waits in a
	 * temporary file, and sampled terms' range maxima are measured, until
	 * the first term decides whether the segment keeps range data
	 * (README "Ranges": "Which segments")
	 */
	BufFile    *spool;

	/*
	 * Format 6 (README "Ranges", "Quantized weights"): a segment with range
	 * data and 16-bit terms quantizes every term at one exponent, in its
	 * posting blocks and in its forward copy, which waits in the spool
	 * until every document is in and the exponents are known.
	 */
	bool		fwdq_ok;		/* may (spooling, measuring the terms) */
	bool		fwdq;			/* does (decided in fwd_unspool) */
	bool		tq_floors;		/* spm_writer_term_exp_floor was called */
	float	   *tq_min;			/* [SPM_FWD16_DIMS] smallest weight */
	float	   *tq_max;			/* largest weight */
	int16	   *tq_exp;			/* the exponent: at least a floor, then
								 * the term's */
	int32	   *tq_base;		/* the term's base */
	HTAB	   *rs_terms;		/* SpmRangeSample by term */
	bool		rs_negative;	/* a negative weight: no range pruning */
	HTAB	   *rs_pairs;		/* SpmPairSample by pair of terms */
	uint32	   *rs_doc;			/* the current document's pair terms */
	int			rs_ndoc;
	int			rs_cap;
	bool		rs_docsampled;	/* the current document counts for pairs */
	double		rs_scale;		/* the current document's weights times
								 * this are its own (spm_writer_doc_scale) */
	double		rs_docs;		/* documents sampled for pairs */
	double		rs_len;			/* their lengths, summed */
	double		rs_len2;		/* and squared */

	/* totals */
	uint32		nterms;
	uint64		npostings;
	double		sum_df_squared;
	uint32		flags;
	float4		max_abs;
};

static uint32 writer_nranges(SpmWriter *w);

/* repalloc keeps the chunk in its own context, the writer's */
static void
grow_u32(uint32 **arr, uint32 *cap, uint32 need)
{
	if (need <= *cap)
		return;
	*cap = Max(need, *cap * 2);
	*arr = repalloc(*arr, *cap * sizeof(uint32));
}

/* ---------------------------------------------------------------- pages */

/*
 * A new page for the segment, exclusively locked until it is written: one
 * of the preferred free pages if any is usable, else SpmNewBuffer.
 */
static Buffer
writer_new_buffer(SpmWriter *w)
{
	while (w->ipref < w->npref)
	{
		BlockNumber blkno = w->pref[w->ipref++];
		Buffer		buf = ReadBuffer(w->index, blkno);

		if (ConditionalLockBuffer(buf))
		{
			if (SpmPageIsRecyclable(BufferGetPage(buf), w->pref_any_xid))
				return buf;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}
	if (w->extend_only)
		return SpmExtendBuffer(w->index, w->fork);
	return SpmNewBuffer(w->index, w->fork);
}

static void
stream_start(SpmWriter *w, SpmStream *s)
{
	Assert(s->image == NULL);
	s->buf = writer_new_buffer(w);
	s->blkno = BufferGetBlockNumber(s->buf);
	s->image = MemoryContextAlloc(w->cxt, BLCKSZ);
	SpmInitPage((Page) s->image, s->type, w->segment_id);
	s->nitems = 0;
}

/* write a finished image to its buffer and release the buffer */
static void
write_image(SpmWriter *w, Buffer buf, char *image)
{
	if (w->wal)
	{
		GenericXLogState *state = GenericXLogStart(w->index);
		Page		page = GenericXLogRegisterBuffer(state, buf,
													 GENERIC_XLOG_FULL_IMAGE);

		memcpy(page, image, BLCKSZ);
		GenericXLogFinish(state);
	}
	else
	{
		memcpy(BufferGetPage(buf), image, BLCKSZ);
		MarkBufferDirty(buf);
	}
	UnlockReleaseBuffer(buf);
}

static void
stream_finish(SpmWriter *w, SpmStream *s, BlockNumber next)
{
	if (s->image == NULL)
		return;
	SpmPageGetOpaque((Page) s->image)->next = next;
	write_image(w, s->buf, s->image);
	pfree(s->image);
	s->image = NULL;
	s->buf = InvalidBuffer;
	s->blkno = InvalidBlockNumber;
	CHECK_FOR_INTERRUPTS();
}

/*
 * Make room for len bytes on the stream's image, moving to a new page
 * (linked from the old one) if needed.  Returns true if a new page was
 * started.
 */
static bool
stream_reserve(SpmWriter *w, SpmStream *s, Size len)
{
	SpmStream	old;

	if (s->image != NULL && PageGetExactFreeSpace((Page) s->image) >= len)
		return false;
	if (s->image == NULL)
	{
		stream_start(w, s);
		return true;
	}
	old = *s;
	s->image = NULL;
	stream_start(w, s);
	stream_finish(w, &old, s->blkno);
	return true;
}

/* append len bytes at pd_lower; returns their offset in the page */
static uint16
stream_put(SpmStream *s, const void *data, Size len)
{
	PageHeader	phdr = (PageHeader) s->image;
	uint16		off = phdr->pd_lower;

	Assert((Size) (phdr->pd_upper - phdr->pd_lower) >= len);
	memcpy(s->image + off, data, len);
	phdr->pd_lower += len;
	s->nitems++;
	return off;
}

/* append len bytes to a byte stream, filling every page */
static void
bytes_put(SpmWriter *w, SpmByteStream *b, const void *data, Size len)
{
	const char *p = data;

	if (b == &w->fwd && w->spool)
	{
		BufFileWrite(w->spool, unconstify(void *, data), len);
		b->bytes += len;
		return;
	}
	while (len > 0)
	{
		Size		n;

		if (stream_reserve(w, &b->s, 1))
		{
			grow_u32(&b->blk, &b->cap, b->nblk + 1);
			b->blk[b->nblk++] = b->s.blkno;
		}
		n = Min(len, PageGetExactFreeSpace((Page) b->s.image));
		stream_put(&b->s, p, n);
		p += n;
		len -= n;
		b->bytes += n;
	}
}

static void
bytes_pad(SpmWriter *w, SpmByteStream *b, int align)
{
	static const char zeros[16] = {0};

	if (b->bytes % align != 0)
		bytes_put(w, b, zeros, align - b->bytes % align);
}

/* ------------------------------------------------- ranges = auto: measure */

/*
 * Under ranges = auto a segment keeps range data when two things hold
 * (doc/decisions.md "Ranges where they pay (issue 37)"):
 *
 * - Its range maxima are much tighter than its terms' bounds: over the
 *   postings of sampled terms, the mean of (the largest |w| of the
 *   posting's term in the posting's range) / (the term's largest |w|) is
 *   at most SPM_RANGES_TIGHT.  Where the maxima are about the term's
 *   bound, as on real text (0.66-0.69 on BM25 paragraphs), a range's
 *   bound is no better than what MaxScore's block maxima give, and the
 *   data costs ~3x the postings.  The bench's corpora: 0.27-0.31.
 * - Its terms occur together: pairs of sampled terms are found in the
 *   same (sampled) document at least SPM_RANGES_LIFT times as often as
 *   independent terms would be, given the documents' lengths.  Range
 *   pruning skips a range when its bound stays below the k-th score, and
 *   the k-th score stands out only where documents gather a query's
 *   terms; with independent terms (the bench's flat corpus: 0.99) nearly
 *   every range's bound reaches it and the kernel gives up, while the
 *   bench's topical corpus measures 2.1.
 *
 * A term is sampled when a hash of it falls in 1/SPM_RANGES_SAMPLE of
 * the range (for pairs, with more than SPM_RANGES_PAIR_DIMS dimensions,
 * 1/SPM_RANGES_PAIR_SAMPLE, a subset: pair_term), and every
 * SPM_RANGES_PAIR_DOCS-th document counts for pairs; fewer than
 * SPM_RANGES_MIN_SAMPLED sampled postings or SPM_RANGES_MIN_PAIRS pair
 * occurrences are too few to judge, and such a segment (a small flush)
 * gets no range data.
 */
#define SPM_RANGES_TIGHT		0.45
#define SPM_RANGES_LIFT			1.5
#define SPM_RANGES_SAMPLE		16
#define SPM_RANGES_PAIR_SAMPLE	64
#define SPM_RANGES_PAIR_DIMS	8192
#define SPM_RANGES_PAIR_DOCS	4
#define SPM_RANGES_MIN_SAMPLED	1024
#define SPM_RANGES_MIN_PAIRS	256
#define SPM_RANGES_MAX_PAIRS	(1 << 20)	/* distinct pairs counted */

typedef struct SpmRangeSample
{
	uint32		term;			/* hash key */
	uint32		range;			/* the range of the last posting */
	float		rmax;			/* the term's largest |w| in it */
	uint32		rcnt;			/* and its postings there */
	float		tmax;			/* the term's largest |w| so far */
	double		sum;			/* sum over closed ranges of rcnt * rmax */
	double		n;				/* postings so far */
	double		pdocs;			/* sampled documents with it (pair terms) */
} SpmRangeSample;

typedef struct SpmPairSample
{
	uint64		key;			/* (smaller term << 32) | larger term */
	double		n;				/* sampled documents with both */
} SpmPairSample;

static inline uint32
range_hash(uint32 term)
{
	return (term * 2654435761u) >> 16;
}

static inline bool
range_sampled(uint32 term)
{
	return range_hash(term) % SPM_RANGES_SAMPLE == 0;
}

/*
 * Pairs are counted between sampled terms, and where the index has more
 * than SPM_RANGES_PAIR_DIMS dimensions only between 1 in
 * SPM_RANGES_PAIR_SAMPLE of them (at most dims / 64 terms, so that the
 * pairs stay few)
 */
static inline bool
pair_term(SpmWriter *w, uint32 term)
{
	return w->dims <= SPM_RANGES_PAIR_DIMS ||
		range_hash(term) % SPM_RANGES_PAIR_SAMPLE == 0;
}

/* the current document is complete: count its pairs of pair terms */
static void
range_doc_pairs(SpmWriter *w)
{
	for (int i = 0; i < w->rs_ndoc; i++)
		for (int j = i + 1; j < w->rs_ndoc; j++)
		{
			uint64		key = ((uint64) w->rs_doc[i] << 32) | w->rs_doc[j];
			SpmPairSample *e;
			bool		found;

			e = hash_search(w->rs_pairs, &key,
							hash_get_num_entries(w->rs_pairs) < SPM_RANGES_MAX_PAIRS ?
							HASH_ENTER : HASH_FIND, &found);
			if (e == NULL)
				continue;
			if (!found)
				e->n = 0;
			e->n++;
		}
	w->rs_ndoc = 0;
}

/* the elements of the current document (local docid ndocs - 1) */
static void
range_measure(SpmWriter *w, const SpmFwdElem *elems, int n)
{
	uint32		r = (w->ndocs - 1) / SPM_RANGE_DOCS;

	for (int i = 0; i < n; i++)
	{
		SpmRangeSample *e;
		bool		found;
		bool		paired;
		float		a;

		if (elems[i].w < 0)
			w->rs_negative = true;
		if (!range_sampled(elems[i].term))
			continue;
		paired = w->rs_docsampled && pair_term(w, elems[i].term);
		if (paired)
		{
			if (w->rs_ndoc == w->rs_cap)
			{
				w->rs_cap *= 2;
				w->rs_doc = repalloc(w->rs_doc, w->rs_cap * sizeof(uint32));
			}
			w->rs_doc[w->rs_ndoc++] = elems[i].term;
		}
		a = (float) Min(fabsf(elems[i].w) * w->rs_scale, FLT_MAX);
		e = hash_search(w->rs_terms, &elems[i].term, HASH_ENTER, &found);
		if (!found)
		{
			e->range = r;
			e->rmax = 0;
			e->rcnt = 0;
			e->tmax = 0;
			e->sum = 0;
			e->n = 0;
			e->pdocs = 0;
		}
		if (paired)
			e->pdocs++;
		if (e->range != r)
		{
			e->sum += (double) e->rcnt * e->rmax;
			e->range = r;
			e->rmax = 0;
			e->rcnt = 0;
		}
		e->rmax = Max(e->rmax, a);
		e->rcnt++;
		e->tmax = Max(e->tmax, a);
		e->n++;
	}
}

/* ------------------------------------------------- format 6 (fwdq) */

/* the per-term arrays of format 6, allocated when first needed */
static void
tq_alloc(SpmWriter *w)
{
	if (w->tq_min != NULL)
		return;
	w->tq_min = MemoryContextAlloc(w->cxt, SPM_FWD16_DIMS * sizeof(float));
	w->tq_max = MemoryContextAlloc(w->cxt, SPM_FWD16_DIMS * sizeof(float));
	w->tq_exp = MemoryContextAlloc(w->cxt, SPM_FWD16_DIMS * sizeof(int16));
	w->tq_base = MemoryContextAllocZero(w->cxt, SPM_FWD16_DIMS * sizeof(int32));
	for (int t = 0; t < SPM_FWD16_DIMS; t++)
	{
		w->tq_min[t] = INFINITY;
		w->tq_max[t] = -INFINITY;
		w->tq_exp[t] = SPM_QEXP_MIN;
	}
}

/*
 * Every term's exponent and base from its smallest and largest weight in
 * the segment, at least its floor: the rule spm_quantize applies to a
 * block, over the whole term, so that each of the term's blocks, whose
 * weights lie between the term's, is quantized at that exponent too (its
 * own would be no larger, and the floor makes it the term's).  False if
 * some term has none (weights near FLT_MAX).
 */
static bool
tq_choose(SpmWriter *w)
{
	for (int t = 0; t < SPM_FWD16_DIMS; t++)
	{
		float		ends[2];
		int16		exps[2];
		int			codes[2];
		int16		e;
		int32		b;

		if (w->tq_min[t] > w->tq_max[t])
			continue;			/* no element */
		ends[0] = w->tq_min[t];
		ends[1] = w->tq_max[t];
		exps[0] = exps[1] = w->tq_exp[t];
		if (!spm_quantize(ends, exps, 2, &e, &b, codes))
			return false;
		w->tq_exp[t] = e;
		w->tq_base[t] = b;
	}
	return true;
}

static void
spool_read(BufFile *spool, void *p, Size n)
{
	spm_buffile_read_exact(spool, p, n, "the forward copy's temporary file");
}

/*
 * Every document is in: write the spooled forward copy into the segment's
 * pages, as it is, or (format 6, where every term has an exponent) with a
 * code byte per element instead of its weight, the range offsets moved to
 * the new layout.
 */
static void
fwd_unspool(SpmWriter *w)
{
	BufFile    *spool = w->spool;
	uint64		bytes = w->fwd.bytes;

	w->spool = NULL;
	w->fwd.bytes = 0;
	if (BufFileSeek(spool, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind the forward copy's temporary file")));
	w->fwdq = w->fwdq_ok && w->fwd16 > 0 && w->tq_min != NULL &&
		writer_nranges(w) < SPM_RANGE_LIMIT && tq_choose(w);
	if (!w->fwdq)
	{
		char	   *chunk = palloc(BLCKSZ);

		while (w->fwd.bytes < bytes)
		{
			Size		n = Min((uint64) BLCKSZ, bytes - w->fwd.bytes);

			spool_read(spool, chunk, n);
			bytes_put(w, &w->fwd, chunk, n);
		}
		pfree(chunk);
	}
	else
	{
		uint8	   *codes = palloc(TYPEALIGN(4, w->doc_cap) + 4);
		uint64		read = 0;

		for (uint32 d = 0; d < w->ndocs; d++)
		{
			uint32		nnz;
			Size		tbytes;
			uint16		pad;

			if (d % SPM_RANGE_DOCS == 0)
				w->range_off[d / SPM_RANGE_DOCS] = w->fwd.bytes;
			spool_read(spool, &nnz, sizeof(uint32));
			bytes_put(w, &w->fwd, &nnz, sizeof(uint32));
			read += sizeof(uint32);
			if (nnz == 0)
				continue;
			if ((int32) nnz > w->doc_cap)
				elog(ERROR, "sparse_maxscore: a spooled document longer than any written");
			tbytes = TYPEALIGN(4, 2 * (Size) nnz);
			spool_read(spool, w->doc_terms, 2 * (Size) nnz);
			if (nnz % 2)
				spool_read(spool, &pad, sizeof(uint16));
			spool_read(spool, w->doc_w, 4 * (Size) nnz);
			read += tbytes + 4 * (Size) nnz;
			for (uint32 i = 0; i < nnz; i++)
			{
				uint16		t = w->doc_terms[i];
				int32		m = spm_qcell(w->doc_w[i], w->tq_exp[t]) - w->tq_base[t];

				if (m < 1 || m > 255)
					elog(ERROR, "sparse_maxscore: weight of term %u outside its cells", t);
				codes[i] = (uint8) m;
			}
			memset(codes + nnz, 0, TYPEALIGN(4, nnz) - nnz);
			pad = 0;
			bytes_put(w, &w->fwd, w->doc_terms, 2 * (Size) nnz);
			if (nnz % 2)
				bytes_put(w, &w->fwd, &pad, sizeof(uint16));
			bytes_put(w, &w->fwd, codes, TYPEALIGN(4, (Size) nnz));
		}
		if (read != bytes)
			elog(ERROR, "sparse_maxscore: the forward copy's temporary file holds %llu bytes, its documents %llu",
				 (unsigned long long) bytes, (unsigned long long) read);
		pfree(codes);
	}
	BufFileClose(spool);
}

/*
 * Every document is in: keep the range data (write the spooled forward
 * copy into the segment's pages) or drop it.
 */
static void
range_decide(SpmWriter *w)
{
	HASH_SEQ_STATUS seq;
	SpmRangeSample *e;
	double		num = 0;
	double		den = 0;
	double		lift_num = 0;
	double		lift_den = 0;
	bool		keep;

	hash_seq_init(&seq, w->rs_terms);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->n < 2 || e->tmax <= 0)
			continue;
		num += (e->sum + (double) e->rcnt * e->rmax) / e->tmax;
		den += e->n;
	}

	/*
	 * The lift: sum over pairs of (n^2 - n) / mu, where mu, the documents
	 * expected to hold both if terms were independent, is df_t df_u / N
	 * times E[len^2] / E[len]^2 (longer documents hold more of every
	 * term); n^2 - n makes the estimate unbiased for counts n ~ Poisson(mu)
	 * (E = mu^2), so independent terms give 1 however rare they are.
	 */
	if (w->rs_docs > 0 && w->rs_len > 0)
	{
		double		lenf = w->rs_len2 * w->rs_docs / (w->rs_len * w->rs_len);
		HASH_SEQ_STATUS pseq;
		SpmPairSample *pe;

		hash_seq_init(&pseq, w->rs_pairs);
		while ((pe = hash_seq_search(&pseq)) != NULL)
		{
			uint32		t = (uint32) (pe->key >> 32);
			uint32		u = (uint32) pe->key;
			SpmRangeSample *et = hash_search(w->rs_terms, &t, HASH_FIND, NULL);
			SpmRangeSample *eu = hash_search(w->rs_terms, &u, HASH_FIND, NULL);
			double		mu;

			if (et == NULL || eu == NULL || et->pdocs <= 0 || eu->pdocs <= 0)
				continue;
			mu = et->pdocs * eu->pdocs / w->rs_docs * lenf;
			lift_num += (pe->n * pe->n - pe->n) / mu;
			lift_den += pe->n;
		}
	}
	hash_destroy(w->rs_terms);
	w->rs_terms = NULL;
	hash_destroy(w->rs_pairs);
	w->rs_pairs = NULL;
	keep = !w->rs_negative && den >= SPM_RANGES_MIN_SAMPLED &&
		num <= SPM_RANGES_TIGHT * den &&
		lift_den >= SPM_RANGES_MIN_PAIRS && lift_num >= SPM_RANGES_LIFT * lift_den;
	elog(DEBUG1, "sparse_maxscore: segment %u: range maxima %.3f of the term bounds on %.0f sampled postings, terms together %.2f times as often as independent ones on %.0f pairs%s: %s range data",
		 w->segment_id, den > 0 ? num / den : 0, den,
		 lift_den > 0 ? lift_num / lift_den : 0, lift_den,
		 w->rs_negative ? ", negative weights" : "", keep ? "with" : "no");

	if (keep)
		fwd_unspool(w);
	else
	{
		BufFileClose(w->spool);
		w->spool = NULL;
		w->ranges = false;
		w->fwd.bytes = 0;
	}
}

/* ------------------------------------------------------------ interface */

/*
 * Start a segment.  fork is MAIN_FORKNUM except when building the init
 * fork; wal says whether every page is WAL-logged as it is written (the
 * build logs everything at the end instead).  The writer allocates in
 * the current memory context, whatever context later calls run in.
 */
SpmWriter *
spm_writer_begin(Relation index, ForkNumber fork, bool wal,
				 uint32 segment_id, uint64 docid_lo)
{
	SpmWriter  *w = palloc0(sizeof(SpmWriter));

	w->cxt = CurrentMemoryContext;
	w->index = index;
	w->fork = fork;
	w->wal = wal;
	w->segment_id = segment_id;
	w->docid_lo = docid_lo;
	w->bitcap = 1024;
	w->alive = palloc0(w->bitcap);
	w->nullmap = palloc0(w->bitcap);
	w->docmap.type = SPM_PAGE_DOCMAP;
	w->post.type = SPM_PAGE_POSTING;
	w->skip.type = SPM_PAGE_SKIP;
	w->dict.type = SPM_PAGE_DICT;
	w->docmap_cap = 64;
	w->docmap_blk = palloc(w->docmap_cap * sizeof(uint32));
	w->dict_cap = 64;
	w->dict_pairs = palloc(w->dict_cap * sizeof(uint32));
	w->post_cap = 64;
	w->post_blk = palloc(w->post_cap * sizeof(uint32));
	w->skip_cap = 64;
	w->skip_blk = palloc(w->skip_cap * sizeof(uint32));
	w->max_w = w->min_w = 0;
	w->ranges = true;
	w->fwd.s.type = SPM_PAGE_FORWARD;
	w->rmax.s.type = SPM_PAGE_RANGEMAX;
	w->fwd.cap = w->rmax.cap = 64;
	w->fwd.blk = palloc(w->fwd.cap * sizeof(uint32));
	w->rmax.blk = palloc(w->rmax.cap * sizeof(uint32));
	w->range_cap = 64;
	w->range_off = palloc(w->range_cap * sizeof(uint64));
	w->fwd16 = -1;
	w->doc_cap = 64;
	w->doc_terms = palloc(w->doc_cap * sizeof(uint16));
	w->doc_w = palloc(w->doc_cap * sizeof(float));
	w->rdesc_cap = 64;
	w->rdesc = palloc(w->rdesc_cap * sizeof(SpmRangeDesc));
	w->t_cap = 64;
	w->t_range = palloc(w->t_cap * sizeof(uint32));
	w->t_max = palloc(w->t_cap * sizeof(float));
	return w;
}

/*
 * Write no range maxima and no forward copy (a merge of segments that
 * have none).  Call before the first document.
 */
/*
 * Keep exact weights exact (the reloption quantize = off); weights that
 * come quantized from a merge stay quantized.
 */
void
spm_writer_exact(SpmWriter *w)
{
	w->exact = true;
}

/*
 * Keep the weights of the term dims - 1 (the last of the dimensions set by
 * spm_writer_set_dims) exact even where others are quantized: an L2
 * index's norm postings, which every query scores, so that their bounds
 * are the stored weights (README "Cosine and L2").
 */
void
spm_writer_exact_last_term(SpmWriter *w)
{
	w->exact_last = true;
}

/*
 * A merge's input holds term's weights quantized at exponent exp (format
 * 6): the output quantizes it at exp or above, so that every cell of the
 * input lies inside one of the output's (README "Quantized weights").
 * Call before the first document.
 */
void
spm_writer_term_exp_floor(SpmWriter *w, uint32 term, int exp)
{
	Assert(w->ndocs == 0);
	if (term >= SPM_FWD16_DIMS)
		elog(ERROR, "sparse_maxscore: term %u quantized for a forward copy of 16-bit terms", term);
	tq_alloc(w);
	w->tq_exp[term] = Max(w->tq_exp[term], exp);
	w->tq_floors = true;
}

void
spm_writer_no_ranges(SpmWriter *w)
{
	Assert(w->ndocs == 0);
	w->ranges = false;
}

/*
 * The current document's weights are its own divided by scale (a cosine
 * index stores them normalized): ranges = auto measures them as the
 * document has them, so that a cosine index gets range data where an
 * inner-product index of the same rows would (doc/decisions.md "Range
 * data for cosine indexes is decided on the raw weights").  Call after
 * spm_writer_doc, before the document's elements.
 */
void
spm_writer_doc_scale(SpmWriter *w, double scale)
{
	w->rs_scale = scale;
}

/*
 * Range data if the segment's documents say it pays (ranges = auto; see
 * range_decide).  Call before the first document.
 */
void
spm_writer_ranges_auto(SpmWriter *w)
{
	HASHCTL		ctl;

	Assert(w->ndocs == 0 && w->ranges);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(SpmRangeSample);
	ctl.hcxt = w->cxt;
	w->rs_terms = hash_create("sparse_maxscore range sample", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(SpmPairSample);
	w->rs_pairs = hash_create("sparse_maxscore pair sample", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	w->rs_cap = 64;
	w->rs_doc = MemoryContextAlloc(w->cxt, w->rs_cap * sizeof(uint32));
	w->spool = BufFileCreateTemp(false);
}

/*
 * Append the next document (local docid = documents so far).  flags may
 * carry SPM_DOC_NULL (a NULL row) and SPM_DOC_DEAD (known dead: kept in
 * the docmap so that docids stay dense, but never alive).  Its nnz
 * elements (0 for NULL rows and dead documents) follow through
 * spm_writer_doc_elems, before the next document and the first term.
 */
void
spm_writer_doc(SpmWriter *w, ItemPointer tid, uint8 flags, int32 nnz)
{
	uint32		d = w->ndocs;

	if (w->doc_left != 0 || w->terms_started || nnz < 0)
		elog(ERROR, "sparse_maxscore: document %u out of order", d);

	/*
	 * Format 6 where the weights may be quantized (or come quantized) and
	 * are not an L2 index's: the forward copy waits in the spool until
	 * the terms' exponents are known (fwd_unspool)
	 */
	if (d == 0 && w->ranges && !w->exact_last && (!w->exact || w->tq_floors))
	{
		w->fwdq_ok = true;
		if (w->spool == NULL)
		{
			/* the caller's context may be a document's */
			MemoryContext old = MemoryContextSwitchTo(w->cxt);

			w->spool = BufFileCreateTemp(false);
			MemoryContextSwitchTo(old);
		}
	}
	if (w->rs_terms)
	{
		w->rs_docsampled = nnz > 0 && d % SPM_RANGES_PAIR_DOCS == 0;
		w->rs_ndoc = 0;
		w->rs_scale = 1.0;
		if (w->rs_docsampled)
		{
			w->rs_docs++;
			w->rs_len += nnz;
			w->rs_len2 += (double) nnz * nnz;
		}
	}
	if (w->ranges)
	{
		uint32		n32 = (uint32) nnz;

		if (d % SPM_RANGE_DOCS == 0)
		{
			uint32		r = d / SPM_RANGE_DOCS;

			if (r >= w->range_cap)
			{
				w->range_cap *= 2;
				w->range_off = repalloc(w->range_off, w->range_cap * sizeof(uint64));
			}
			w->range_off[r] = w->fwd.bytes;
		}
		bytes_put(w, &w->fwd, &n32, sizeof(uint32));
		w->doc_left = nnz;
		w->doc_prev = -1;
		w->doc_n = 0;
		/* the layout, once the dimensions are known (spm_writer_set_dims) */
		if (nnz > 0 && w->fwd16 < 0)
			w->fwd16 = w->dims >= 1 && w->dims <= SPM_FWD16_DIMS;
		if (w->fwd16 > 0 && nnz > w->doc_cap)
		{
			w->doc_cap = Max(nnz, 2 * w->doc_cap);
			w->doc_terms = repalloc(w->doc_terms, w->doc_cap * sizeof(uint16));
			w->doc_w = repalloc(w->doc_w, w->doc_cap * sizeof(float));
		}
	}

	if (d == PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sparse_maxscore index \"%s\" cannot hold more than %u documents in one segment",
						RelationGetRelationName(w->index), PG_UINT32_MAX - 1)));

	if ((Size) d / 8 >= w->bitcap)
	{
		Size		newcap = w->bitcap * 2;

		w->alive = repalloc(w->alive, newcap);
		w->nullmap = repalloc(w->nullmap, newcap);
		memset(w->alive + w->bitcap, 0, newcap - w->bitcap);
		memset(w->nullmap + w->bitcap, 0, newcap - w->bitcap);
		w->bitcap = newcap;
	}
	if (!(flags & SPM_DOC_DEAD))
		w->alive[d / 8] |= 1 << (d % 8);
	if (flags & SPM_DOC_NULL)
	{
		w->nullmap[d / 8] |= 1 << (d % 8);
		w->nnull++;
	}

	if (w->docmap.image == NULL || w->docmap.nitems == SPM_DOCMAP_PER_PAGE)
	{
		if (stream_reserve(w, &w->docmap, BLCKSZ))
		{
			grow_u32(&w->docmap_blk, &w->docmap_cap, w->ndocmap + 1);
			w->docmap_blk[w->ndocmap++] = w->docmap.blkno;
		}
	}
	stream_put(&w->docmap, tid, sizeof(ItemPointerData));
	w->ndocs++;
}

/* the next n elements of the current document, in ascending term order */
void
spm_writer_doc_fwd(SpmWriter *w, const SpmFwdElem *elems, int n)
{
	if (!w->ranges)
		return;
	if (n > w->doc_left)
		elog(ERROR, "sparse_maxscore: more elements than the document has");
	for (int i = 0; i < n; i++)
	{
		if ((int64) elems[i].term <= w->doc_prev)
			elog(ERROR, "sparse_maxscore: document elements out of order");
		w->doc_prev = elems[i].term;
	}
	w->doc_left -= n;
	if (w->rs_terms)
	{
		range_measure(w, elems, n);
		if (w->doc_left == 0 && w->rs_docsampled)
			range_doc_pairs(w);
	}
	if (w->fwd16 <= 0)
	{
		bytes_put(w, &w->fwd, elems, (Size) n * sizeof(SpmFwdElem));
		return;
	}

	/* 16-bit terms: the terms, zeros to a multiple of 4, the weights */
	if (w->doc_prev >= SPM_FWD16_DIMS)
		elog(ERROR, "sparse_maxscore: term %u in a forward copy of 16-bit terms",
			 (uint32) w->doc_prev);
	if (w->fwdq_ok)
		tq_alloc(w);
	for (int i = 0; i < n; i++)
	{
		w->doc_terms[w->doc_n] = (uint16) elems[i].term;
		w->doc_w[w->doc_n] = elems[i].w;
		w->doc_n++;
		if (w->fwdq_ok)
		{
			uint32		t = elems[i].term;

			w->tq_min[t] = Min(w->tq_min[t], elems[i].w);
			w->tq_max[t] = Max(w->tq_max[t], elems[i].w);
		}
	}
	if (w->doc_left == 0 && w->doc_n > 0)
	{
		uint16		pad = 0;

		bytes_put(w, &w->fwd, w->doc_terms, (Size) w->doc_n * sizeof(uint16));
		if (w->doc_n % 2)
			bytes_put(w, &w->fwd, &pad, sizeof(uint16));
		bytes_put(w, &w->fwd, w->doc_w, (Size) w->doc_n * sizeof(float));
	}
}

/* the same from a vector's index and value arrays */
void
spm_writer_doc_elems(SpmWriter *w, const int32 *idx, const float *val, int n)
{
	SpmFwdElem	buf[256];

	if (!w->ranges)
		return;
	while (n > 0)
	{
		int			m = Min(n, (int) lengthof(buf));

		for (int i = 0; i < m; i++)
		{
			buf[i].term = (uint32) idx[i];
			buf[i].w = val[i];
		}
		spm_writer_doc_fwd(w, buf, m);
		idx += m;
		val += m;
		n -= m;
	}
}

void
spm_writer_set_dims(SpmWriter *w, int32 dims)
{
	w->dims = dims;
}

void
spm_writer_term_begin(SpmWriter *w, uint32 term)
{
	Assert(!w->in_term);
	if (w->any_term && term <= w->term)
		elog(ERROR, "sparse_maxscore: terms out of order (%u after %u)",
			 term, w->term);
	if (w->doc_left != 0)
		elog(ERROR, "sparse_maxscore: a term before the last document is complete");
	if (w->rs_terms)
		range_decide(w);
	else if (w->spool)
		fwd_unspool(w);
	w->terms_started = true;
	w->in_term = true;
	w->any_term = true;
	w->term = term;
	w->df = 0;
	w->t_nr = 0;
	w->bn = 0;
	w->skip_blkno = InvalidBlockNumber;
	w->skip_idx = 0;
	w->t_nblocks = 0;
}

/* append a skip entry of the current term */
static void
put_skip(SpmWriter *w, const SpmSkipEntry *se)
{
	if (stream_reserve(w, &w->skip, sizeof(SpmSkipEntry)))
	{
		grow_u32(&w->skip_blk, &w->skip_cap, w->nskip + 1);
		w->skip_blk[w->nskip++] = w->skip.blkno;
	}
	if (w->skip_blkno == InvalidBlockNumber)
	{
		w->skip_blkno = w->skip.blkno;
		w->skip_idx = (uint16) w->skip.nitems;
	}
	stream_put(&w->skip, se, sizeof(SpmSkipEntry));
}

/* encode the buffered postings as one block and add its skip entry */
static void
flush_block(SpmWriter *w)
{
	SpmSkipEntry se;
	int			size;
	float4		bmax;
	float4		bmin;

	/*
	 * Segments with range data keep exact weights (the forward copy
	 * scores with them, and both paths must agree: README "Quantized
	 * weights"), except in format 6, where every block of a term is
	 * quantized at the term's exponent, as its forward-copy codes are:
	 * that exponent as every posting's makes spm_quantize choose it
	 * (tq_choose), blocks of 1-2 postings included.
	 */
	if (w->fwdq)
		for (int i = 0; i < w->bn; i++)
			w->bexp[i] = w->tq_exp[w->term];
	size = spm_block_encode_bounds(w->bdocs, w->bw, w->bexp, w->bn,
								   (!w->ranges || w->fwdq) && !w->exact &&
								   !(w->exact_last && w->dims > 0 &&
									 w->term == (uint32) (w->dims - 1)),
								   w->enc, &bmax, &bmin);
	if (size < 0)
		elog(ERROR, "sparse_maxscore: quantized weights of term %u out of range",
			 w->term);
	if (w->fwdq)
	{
		const SpmBlockHeader *h = (const SpmBlockHeader *) w->enc;
		SpmBlockQuant q;

		if (!(h->flags & SPM_BLOCK_QUANT))
			elog(ERROR, "sparse_maxscore: a block of term %u is not quantized", w->term);
		memcpy(&q, w->enc + TYPEALIGN(4, sizeof(SpmBlockHeader) + h->nbytes_ids),
			   sizeof(q));
		if (q.exp != w->tq_exp[w->term])
			elog(ERROR, "sparse_maxscore: a block of term %u quantized at 2^%d, the term at 2^%d",
				 w->term, q.exp, w->tq_exp[w->term]);
	}
	if (((const SpmBlockHeader *) w->enc)->flags & SPM_BLOCK_QUANT)
		w->quant = true;
	/* the header's largest |w| bounds what the blocks decode to */
	w->max_abs = Max(w->max_abs, Max(fabsf(bmax), fabsf(bmin)));
	if (stream_reserve(w, &w->post, size))
	{
		grow_u32(&w->post_blk, &w->post_cap, w->npost + 1);
		w->post_blk[w->npost++] = w->post.blkno;
	}

	se.last_docid = w->bdocs[w->bn - 1];
	se.max_w = bmax;
	se.min_w = bmin;
	se.blkno = w->post.blkno;
	se.off = stream_put(&w->post, w->enc, size);
	se.count = (uint8) w->bn;
	se.flags = 0;

	/* a term of one block keeps its entry in the dictionary (term_end) */
	if (w->t_nblocks == 0)
		w->held_se = se;
	else
	{
		if (w->t_nblocks == 1)
			put_skip(w, &w->held_se);
		put_skip(w, &se);
	}
	w->t_nblocks++;

	if (w->df == 0)
	{
		w->max_w = bmax;
		w->min_w = bmin;
	}
	else
	{
		w->max_w = Max(w->max_w, bmax);
		w->min_w = Min(w->min_w, bmin);
	}
	w->df += w->bn;
	w->npostings += w->bn;
	w->bn = 0;
}

/*
 * Add n postings of the current term; docids strictly ascending across
 * calls, all below the number of documents given so far or to come.
 */
void
spm_writer_postings(SpmWriter *w, const uint32 *docids, const float *weights,
					int n)
{
	spm_writer_postings_bounds(w, docids, weights, NULL, n);
}

/*
 * The same, for postings read from quantized blocks: weights[i] is the
 * upper end of a quantized weight of exponent exps[i], or exact if
 * exps[i] is SPM_QEXP_EXACT (exps == NULL: all exact).  Merges copy
 * quantized postings this way (spmblock.h).
 */
void
spm_writer_postings_bounds(SpmWriter *w, const uint32 *docids,
						   const float *weights, const int16 *exps, int n)
{
	Assert(w->in_term);
	for (int i = 0; i < n; i++)
	{
		float		v = weights[i];
		int16		e = exps ? exps[i] : SPM_QEXP_EXACT;

		if ((w->df > 0 || w->bn > 0) && docids[i] <= w->last_docid)
			elog(ERROR, "sparse_maxscore: postings of term %u out of order",
				 w->term);
		if ((e == SPM_QEXP_EXACT && v == 0.0f) || isnan(v) || isinf(v) ||
			(e != SPM_QEXP_EXACT && (e < SPM_QEXP_MIN || e > SPM_QEXP_MAX)))
			elog(ERROR, "sparse_maxscore: invalid weight in term %u", w->term);
		if (e != SPM_QEXP_EXACT && w->ranges && !w->fwdq)
			elog(ERROR, "sparse_maxscore: a quantized weight in a segment with range data");
		if (w->fwdq && e != SPM_QEXP_EXACT && e > w->tq_exp[w->term])
			elog(ERROR, "sparse_maxscore: a weight of term %u quantized above the term's exponent",
				 w->term);
		/* an upper end <= 0 stands for a negative weight */
		if (v < 0.0f || (e != SPM_QEXP_EXACT && v <= 0.0f))
			w->flags |= SPM_META_NEGATIVE;
		w->max_abs = Max(w->max_abs, fabsf(v));
		w->bexp[w->bn] = e;
		if (w->ranges)
		{
			uint32		r = docids[i] >> SPM_RANGE_SHIFT;
			/* the range maxima bound what the blocks decode to */
			float		rv = w->fwdq ?
				spm_qupper(spm_qcell(v, w->tq_exp[w->term]), w->tq_exp[w->term]) : v;

			if (w->t_nr == 0 || w->t_range[w->t_nr - 1] != r)
			{
				if (w->t_nr == w->t_cap)
				{
					w->t_cap *= 2;
					w->t_range = repalloc(w->t_range, w->t_cap * sizeof(uint32));
					w->t_max = repalloc(w->t_max, w->t_cap * sizeof(float));
				}
				w->t_range[w->t_nr] = r;
				w->t_max[w->t_nr++] = rv;
			}
			else
				w->t_max[w->t_nr - 1] = Max(w->t_max[w->t_nr - 1], rv);
		}
		w->last_docid = docids[i];
		w->bdocs[w->bn] = docids[i];
		w->bw[w->bn] = v;
		if (++w->bn == SPM_BLOCK_POSTINGS)
			flush_block(w);
	}
}

/* the number of ranges of the segment (its documents are all given) */
static uint32
writer_nranges(SpmWriter *w)
{
	return (uint32) (((uint64) w->ndocs + SPM_RANGE_DOCS - 1) / SPM_RANGE_DOCS);
}

/*
 * The range maxima of the term just ended, and its descriptor: a byte per
 * range if the term is in a quarter of the ranges or more, else an entry
 * per range it is in.
 */
static void
write_term_ranges(SpmWriter *w)
{
	uint32		nranges = writer_nranges(w);
	SpmRangeDesc *desc;

	if (nranges >= SPM_RANGE_LIMIT)
	{
		/* too many ranges for the entries' 24 bits: no range data */
		w->ranges = false;
		return;
	}
	if (w->nterms == w->rdesc_cap)
	{
		w->rdesc_cap *= 2;
		w->rdesc = repalloc(w->rdesc, w->rdesc_cap * sizeof(SpmRangeDesc));
	}
	bytes_pad(w, &w->rmax, 4);
	desc = &w->rdesc[w->nterms];
	desc->off = w->rmax.bytes;
	desc->nr = w->t_nr;
	desc->flags = 0;
	if ((uint64) w->t_nr * 4 >= nranges)
	{
		if (w->levels == NULL)
			w->levels = MemoryContextAlloc(w->cxt, Max(nranges, 1));
		memset(w->levels, 0, nranges);
		for (uint32 i = 0; i < w->t_nr; i++)
			w->levels[w->t_range[i]] = spm_range_level(w->t_max[i], w->max_w);
		bytes_put(w, &w->rmax, w->levels, nranges);
		desc->flags = SPM_RANGE_DENSE;
	}
	else
	{
		uint32		buf[256];
		uint32		i = 0;

		while (i < w->t_nr)
		{
			uint32		m = Min(w->t_nr - i, (uint32) lengthof(buf));

			for (uint32 j = 0; j < m; j++)
				buf[j] = (w->t_range[i + j] << 8) |
					spm_range_level(w->t_max[i + j], w->max_w);
			bytes_put(w, &w->rmax, buf, m * sizeof(uint32));
			i += m;
		}
	}
}

void
spm_writer_term_end(SpmWriter *w)
{
	SpmDictEntry e;

	Assert(w->in_term);
	w->in_term = false;
	if (w->bn > 0)
		flush_block(w);
	if (w->df == 0)
		return;

	e.term = w->term;
	e.df = w->df;
	e.max_w = w->max_w;
	e.min_w = w->min_w;
	if (w->t_nblocks == 1)
	{
		e.skip_blkno = w->held_se.blkno;
		e.skip_idx = w->held_se.off;
		e.flags = SPM_DICT_INLINE;
	}
	else
	{
		e.skip_blkno = w->skip_blkno;
		e.skip_idx = w->skip_idx;
		e.flags = 0;
	}
	if (w->fwdq)
	{
		int			et = w->tq_exp[w->term];

		/* the term's base is min_w / 2^e_t (spmformat.h, SPM_DICT_TERMQ) */
		if (w->term >= SPM_FWD16_DIMS ||
			e.min_w != spm_qupper(w->tq_base[w->term], et))
			elog(ERROR, "sparse_maxscore: term %u's smallest lower end is not its base", w->term);
		e.flags |= spm_dict_qflags(et);
	}
	if (stream_reserve(w, &w->dict, sizeof(SpmDictEntry)))
	{
		grow_u32(&w->dict_pairs, &w->dict_cap, 2 * (w->ndict + 1));
		w->dict_pairs[2 * w->ndict] = w->term;
		w->dict_pairs[2 * w->ndict + 1] = w->dict.blkno;
		w->ndict++;
	}
	stream_put(&w->dict, &e, sizeof(SpmDictEntry));
	if (w->ranges)
		write_term_ranges(w);
	w->nterms++;
	w->sum_df_squared += (double) w->df * w->df;
}

/* write a bitset of ndocs bits over pages; appends their numbers to dir */
static void
write_bitset(SpmWriter *w, SpmPageType type, const uint8 *bits,
			 uint32 **dir, uint32 *ndir, uint32 *dircap)
{
	uint32		nbytes = (w->ndocs + 7) / 8;

	for (uint32 start = 0; start < nbytes; start += SPM_BITMAP_BYTES)
	{
		SpmStream	s;

		memset(&s, 0, sizeof(s));
		s.type = type;
		stream_start(w, &s);
		stream_put(&s, bits + start, Min(SPM_BITMAP_BYTES, nbytes - start));
		((PageHeader) s.image)->pd_lower =
			MAXALIGN(SizeOfPageHeaderData) + SPM_BITMAP_BYTES;
		grow_u32(dir, dircap, *ndir + 1);
		(*dir)[(*ndir)++] = s.blkno;
		stream_finish(w, &s, InvalidBlockNumber);
	}
}

/*
 * Write out everything that is left, then the directory and the header.
 * Fills *ref (for the metapage) and returns nothing reachable yet: the
 * caller publishes ref.
 */
void
spm_writer_finish(SpmWriter *w, SpmSegmentRef *ref)
{
	SpmSegmentHeaderData hdr;
	uint32	   *words;
	uint32		nwords = 0;
	uint32		cap = 64;
	uint32		nalive = 0;
	uint32		nnullmap = 0;
	SpmStream	dir;
	SpmStream	head;
	SpmByteStream ridx;
	bool		has_ranges;

	memset(&hdr, 0, sizeof(hdr));
	Assert(!w->in_term);
	if (w->any_term && w->last_docid >= w->ndocs && w->npostings > 0)
		elog(ERROR, "sparse_maxscore: posting beyond the last document");

	if (w->doc_left != 0)
		elog(ERROR, "sparse_maxscore: the last document is incomplete");
	if (w->rs_terms)
		range_decide(w);
	else if (w->spool)
		fwd_unspool(w);
	stream_finish(w, &w->docmap, InvalidBlockNumber);
	stream_finish(w, &w->post, InvalidBlockNumber);
	stream_finish(w, &w->skip, InvalidBlockNumber);
	stream_finish(w, &w->dict, InvalidBlockNumber);

	/* range offsets (and the end), padded, then the term descriptors */
	memset(&ridx, 0, sizeof(ridx));
	ridx.s.type = SPM_PAGE_RANGEIDX;
	ridx.cap = 64;
	ridx.blk = MemoryContextAlloc(w->cxt, ridx.cap * sizeof(uint32));
	has_ranges = w->ranges && writer_nranges(w) < SPM_RANGE_LIMIT;
	if (has_ranges)
	{
		uint32		nranges = writer_nranges(w);

		bytes_put(w, &ridx, w->range_off, (Size) nranges * sizeof(uint64));
		bytes_put(w, &ridx, &w->fwd.bytes, sizeof(uint64));
		bytes_pad(w, &ridx, sizeof(SpmRangeDesc));
		bytes_put(w, &ridx, w->rdesc, (Size) w->nterms * sizeof(SpmRangeDesc));
		hdr.nranges = nranges;
	}
	stream_finish(w, &w->fwd.s, InvalidBlockNumber);
	stream_finish(w, &w->rmax.s, InvalidBlockNumber);
	stream_finish(w, &ridx.s, InvalidBlockNumber);

	/* directory words: docmap, alive, null, dictionary pairs */
	words = MemoryContextAlloc(w->cxt, cap * sizeof(uint32));
	grow_u32(&words, &cap, w->ndocmap);
	memcpy(words, w->docmap_blk, w->ndocmap * sizeof(uint32));
	nwords = w->ndocmap;
	write_bitset(w, SPM_PAGE_ALIVE, w->alive, &words, &nwords, &cap);
	nalive = nwords - w->ndocmap;
	if (w->nnull > 0)
		write_bitset(w, SPM_PAGE_NULLMAP, w->nullmap, &words, &nwords, &cap);
	nnullmap = nwords - w->ndocmap - nalive;
	grow_u32(&words, &cap, nwords + 2 * w->ndict + w->npost + w->nskip);
	memcpy(words + nwords, w->dict_pairs, 2 * w->ndict * sizeof(uint32));
	nwords += 2 * w->ndict;
	memcpy(words + nwords, w->post_blk, w->npost * sizeof(uint32));
	nwords += w->npost;
	memcpy(words + nwords, w->skip_blk, w->nskip * sizeof(uint32));
	nwords += w->nskip;
	grow_u32(&words, &cap, nwords + w->fwd.nblk + ridx.nblk + w->rmax.nblk);
	memcpy(words + nwords, w->fwd.blk, w->fwd.nblk * sizeof(uint32));
	nwords += w->fwd.nblk;
	memcpy(words + nwords, ridx.blk, ridx.nblk * sizeof(uint32));
	nwords += ridx.nblk;
	memcpy(words + nwords, w->rmax.blk, w->rmax.nblk * sizeof(uint32));
	nwords += w->rmax.nblk;

	memset(&dir, 0, sizeof(dir));
	dir.type = SPM_PAGE_SEGDIR;
	{
		BlockNumber first = InvalidBlockNumber;

		for (uint32 i = 0; i < nwords; i++)
		{
			if (stream_reserve(w, &dir, sizeof(uint32)) &&
				first == InvalidBlockNumber)
				first = dir.blkno;
			stream_put(&dir, &words[i], sizeof(uint32));
		}
		stream_finish(w, &dir, InvalidBlockNumber);
		hdr.dir_head = first;
	}

	hdr.magic = SPM_MAGIC;
	hdr.segment_id = w->segment_id;
	hdr.docid_lo = w->docid_lo;
	hdr.ndocs = w->ndocs;
	hdr.nterms = w->nterms;
	hdr.npostings = w->npostings;
	hdr.nnull = w->nnull;
	hdr.flags = w->flags | (has_ranges ? SPM_SEG_RANGES : 0) |
		(has_ranges && w->fwd16 > 0 ? SPM_SEG_FWD16 : 0) |
		(w->quant ? SPM_SEG_QUANT : 0) |
		(has_ranges && w->fwdq && w->quant ? SPM_SEG_FWDQ : 0);
	hdr.dims = w->dims;
	hdr.ndocmap = w->ndocmap;
	hdr.nalive = nalive;
	hdr.nnullmap = nnullmap;
	hdr.ndict = w->ndict;
	hdr.npost = w->npost;
	hdr.nskip = w->nskip;
	hdr.ndirwords = nwords;
	hdr.max_abs_weight = w->max_abs;
	hdr.nfwd = w->fwd.nblk;
	hdr.nrangeidx = ridx.nblk;
	hdr.nrangemax = w->rmax.nblk;
	hdr.fwd_bytes = w->fwd.bytes;
	hdr.rangemax_bytes = w->rmax.bytes;

	memset(&head, 0, sizeof(head));
	head.type = SPM_PAGE_SEGHEADER;
	stream_start(w, &head);
	stream_put(&head, &hdr, sizeof(hdr));
	ref->segment_id = w->segment_id;
	ref->header = head.blkno;
	ref->docid_lo = w->docid_lo;
	ref->docid_hi = w->docid_lo + w->ndocs;
	ref->npostings = w->npostings;
	ref->ndead = 0;
	ref->nnull = w->nnull;
	for (uint32 i = 0; i < w->ndocs; i++)
	{
		if (!(w->alive[i / 8] & (1 << (i % 8))))
			ref->ndead++;
	}
	ref->nholes = ref->ndead;
	ref->sum_df_squared = (float4) w->sum_df_squared;
	stream_finish(w, &head, InvalidBlockNumber);

	pfree(words);
	pfree(ridx.blk);
}

/* flags of the segment: SPM_META_NEGATIVE if any weight is negative */
uint32
spm_writer_flags(SpmWriter *w)
{
	return w->flags;
}

uint32
spm_writer_nterms(SpmWriter *w)
{
	return w->nterms;
}

/*
 * Take new pages from pages[0..n) (ascending free pages) before asking
 * the free space map.  any_xid: the caller holds AccessExclusiveLock on the
 * index, so freed pages need not wait for their xid horizon.
 */
void
spm_writer_prefer_pages(SpmWriter *w, const BlockNumber *pages, int n,
						bool any_xid)
{
	w->pref = pages;
	w->npref = n;
	w->ipref = 0;
	w->pref_any_xid = any_xid;
}

/* take new pages only by extending the file (VACUUM's shrink) */
void
spm_writer_extend_only(SpmWriter *w)
{
	w->extend_only = true;
}

/*
 * Free the writer.  A writer given up before spm_writer_finish still holds
 * the locked buffers of the pages it started: release them unwritten (a
 * new page stays all zeros, a recycled one stays FREE), so that they are
 * free pages again.
 */
void
spm_writer_free(SpmWriter *w)
{
	SpmStream  *streams[] = {&w->docmap, &w->post, &w->skip, &w->dict,
	&w->fwd.s, &w->rmax.s};

	if (w->spool)
	{
		BufFileClose(w->spool);
		w->spool = NULL;
	}

	for (int i = 0; i < (int) lengthof(streams); i++)
	{
		if (streams[i]->image != NULL)
		{
			UnlockReleaseBuffer(streams[i]->buf);
			pfree(streams[i]->image);
			streams[i]->image = NULL;
		}
	}
	pfree(w->alive);
	pfree(w->nullmap);
	pfree(w->docmap_blk);
	pfree(w->dict_pairs);
	pfree(w->post_blk);
	pfree(w->skip_blk);
	pfree(w->fwd.blk);
	pfree(w->rmax.blk);
	pfree(w->range_off);
	pfree(w->rdesc);
	pfree(w->t_range);
	pfree(w->t_max);
	pfree(w->doc_terms);
	pfree(w->doc_w);
	if (w->levels)
		pfree(w->levels);
	pfree(w);
}

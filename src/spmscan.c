/*-------------------------------------------------------------------------
 *
 * spmscan.c
 *	  The ordered index scan: ORDER BY v <#> q, exact and unbounded.
 *
 * A scan produces every indexed row, in the order a sequential scan
 * followed by a sort would: positive scores descending, then the rows
 * whose score is exactly 0 (no common term, empty vectors, cancellation),
 * then negative scores descending, then NULL rows.  Rows with equal scores
 * come in ascending docid order.  The executor stops asking when its LIMIT
 * is met (after applying the other quals), so we produce rows in batches
 * and do as little work as the rows asked for need:
 *
 *	ROUNDS		exact top-k of the positive rows strictly after the cursor
 *				(score, docid) of the last row returned, with k doubling from
 *				sparse_maxscore.initial_k; a round that comes back short means
 *				the positive rows are exhausted.
 *	SORTED		when k would outgrow work_mem: every remaining positive row
 *				into a tuplesort (spills to disk), streamed.
 *	ZERO		rows scoring exactly 0, in docid order, in growing batches.
 *	NEGATIVE	rows scoring below 0 into a tuplesort, streamed (skipped
 *				when no query weight and no indexed weight is negative).
 *	NULLS		NULL rows in docid order.
 *	ALL			for a NULL query: every row in docid order (every distance
 *				is NULL, so any order is correct).
 *
 * Every round, pass and batch runs inside one amgettuple call, holding
 * SPM_SCAN_LOCK in share mode, from one copy of the metapage; all TIDs it
 * will return are resolved before the lock is released (README "Rounds").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relscan.h"
#include "access/xlog.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "spm.h"

typedef enum SpmScanState
{
	SPM_SCAN_FIRST,
	SPM_SCAN_ROUNDS,
	SPM_SCAN_SORTED,
	SPM_SCAN_ZERO,
	SPM_SCAN_NEGATIVE,
	SPM_SCAN_NULLS,
	SPM_SCAN_ALL,
	SPM_SCAN_DONE
} SpmScanState;

typedef struct SpmScanOpaqueData
{
	MemoryContext scanCtx;		/* the whole scan */
	MemoryContext queryCtx;		/* reset at rescan: query, tuplesort */
	MemoryContext roundCtx;		/* reset at every round */

	SpmScanState state;
	SparseVector *query;		/* detoasted copy, NULL for a NULL query */
	bool		querynegative;	/* some query weight is below zero */
	bool		exhaustive;		/* sparse_maxscore.algorithm */
	bool		ranges;			/* range pruning allowed (auto, ranges) */
	bool		range_fallback; /* and may give up for MaxScore (auto) */
	int			k;				/* size of the next round */
	int			kmax;			/* largest round that fits work_mem */
	int			limit_hint;		/* LIMIT above the scan, 0 if unknown */
	bool		hint_taken;		/* limit_hint looked up (once per scan) */
	SpmAfter	after;			/* last row returned by the rounds */
	uint64		pos;			/* docid-order phases: next docid */
	int			batch;			/* docid-order phases: batch size */

	/* rows of the current round or batch, in roundCtx */
	SpmHit	   *hits;
	int			nhits;
	int			next;

	/* SORTED and NEGATIVE: the rows, sorted */
	Tuplesortstate *sort;
	TupleDesc	sortdesc;
	TupleTableSlot *slot;		/* virtual, to put rows */
	TupleTableSlot *mslot;		/* minimal tuple, to get rows */

	SpmCounters counters;
} SpmScanOpaqueData;

typedef SpmScanOpaqueData *SpmScanOpaque;

/* the most recent scan of this backend, for sparse_maxscore_last_scan() */
SpmCounters spm_last_scan;

/* ----------------------------------------------------------------
 * Reading posting blocks and alive bits for spmtraverse.c
 * ----------------------------------------------------------------
 */
/*
 * Pages stay pinned (not locked) between blocks, so that the next block of
 * a term, usually on the same page, needs no buffer lookup.  Each query
 * term has a pin of its own (SpmQueryTerm.id picks it): MaxScore probes
 * hop between the non-essential terms from one candidate to the next, and
 * even term-at-a-time visits every term once per window.  When eight pins
 * were shared round-robin by all terms, a 1M-document query at LIMIT 100
 * read 5,292 index buffers on average, now 1,770 (doc/decisions.md, "A pin
 * per query term").  Beyond SPM_READER_MAX_PINS terms share pins by id
 * modulo the count.  The count is also held to a backend's proportional
 * share of the buffer pool, NBuffers / MaxBackends (the share the buffer
 * manager itself computes as MaxProportionalPins from PostgreSQL 16 on),
 * so that every backend can run a scan at once, but never below the 8
 * this reader always had.
 */
#define SPM_READER_MAX_PINS	64

typedef struct SpmReader
{
	Relation	index;
	SpmSegment *seg;
	SpmPin	   *pins;			/* [npins] */
	int			npins;
	uint8	  **alive;			/* copied alive pages, NULL until needed */
	SpmPin		bitpin;
} SpmReader;

/* the pin for the blocks of term */
static inline SpmPin *
reader_pin(SpmReader *r, const SpmQueryTerm *term)
{
	return &r->pins[(uint32) term->id % (uint32) r->npins];
}

static void
read_block(void *arg, const SpmQueryTerm *term, int b,
		   uint32 *docids, float *weights)
{
	SpmReader  *r = arg;

	SpmReadPostingBlock(r->index, r->seg, term->blkno[b], term->off[b],
						term->count[b], term->last[b], docids, weights,
						reader_pin(r, term));
}

static void
accumulate_block(void *arg, const SpmQueryTerm *term, int b,
				 double q, double *acc, uint32 base)
{
	SpmReader  *r = arg;

	SpmAccumulatePostingBlock(r->index, r->seg, term->blkno[b], term->off[b],
							  term->count[b], term->last[b], q, acc, base,
							  reader_pin(r, term));
}

static bool
is_alive(void *arg, uint32 local)
{
	SpmReader  *r = arg;
	uint32		pageno = local / SPM_BITS_PER_PAGE;
	uint32		bit = local % SPM_BITS_PER_PAGE;

	if (r->alive[pageno] == NULL)
	{
		r->alive[pageno] = palloc(SPM_BITMAP_BYTES);
		SpmReadBitsetPage(r->index, r->seg, false, pageno, r->alive[pageno],
						  &r->bitpin);
	}
	return (r->alive[pageno][bit / 8] >> (bit % 8)) & 1;
}

static void
reader_release(SpmReader *r)
{
	for (int i = 0; i < r->npins; i++)
		SpmUnpin(&r->pins[i]);
	SpmUnpin(&r->bitpin);
}

/* ----------------------------------------------------------------
 * Setting up the traversal of one segment
 * ----------------------------------------------------------------
 */

/*
 * The context of the work memory that scans keep per backend: the
 * traversal's (SpmTraverseScratch) and range pruning's (SpmRangeScratch,
 * below).  Every traversal and range round runs inside one amgettuple
 * call, so no two use the same memory at once.
 */
static MemoryContext
scan_work_context(void)
{
	static MemoryContext cxt = NULL;

	if (cxt == NULL)
		cxt = AllocSetContextCreate(TopMemoryContext,
									"sparse_maxscore scan work memory",
									ALLOCSET_DEFAULT_SIZES);
	return cxt;
}

static SpmTraverseScratch traverse_scratch;

static SpmTraverseScratch *
traverse_scratch_get(void)
{
	if (traverse_scratch.cxt == NULL)
		traverse_scratch.cxt = scan_work_context();
	return &traverse_scratch;
}

/*
 * The query terms the segment has (in roundCtx), ready for
 * spm_traverse_begin.  The reader must outlive the traversal.
 */
static void
setup_traverse(IndexScanDesc scan, SpmSegment *seg, const SpmSegmentRef *ref,
			   uint64 docid_limit, SpmTraverse *t, SpmReader *r)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	SparseVector *q = so->query;
	float	   *qv = SPV_VALUES(q);
	SpmQueryTerm *terms = palloc(Max(q->nnz, 1) * sizeof(SpmQueryTerm));
	int			n = 0;

	for (int i = 0; i < q->nnz; i++)
	{
		const SpmTermData *d;
		SpmQueryTerm *term = &terms[n];

		d = SpmGetTerm(scan->indexRelation, seg, (uint32) q->indices[i]);
		if (d == NULL)
			continue;
		term->q = qv[i];
		term->nblocks = d->nblocks;
		term->id = n;
		term->last = d->last;
		term->max_w = d->max_w;
		term->min_w = d->min_w;
		term->blkno = d->blkno;
		term->off = d->off;
		term->count = d->count;
		term->sum = d->sum;
		n++;
	}

	memset(r, 0, sizeof(SpmReader));
	r->index = scan->indexRelation;
	r->seg = seg;
	r->npins = Max(1, Min(n, Min(SPM_READER_MAX_PINS,
								 Max(8, NBuffers / Max(MaxBackends, 1)))));
	r->pins = palloc(r->npins * sizeof(SpmPin));
	for (int i = 0; i < r->npins; i++)
		r->pins[i].buf = InvalidBuffer;
	r->bitpin.buf = InvalidBuffer;
	r->alive = palloc0(Max(seg->hdr.nalive, 1) * sizeof(uint8 *));

	memset(t, 0, sizeof(SpmTraverse));
	t->terms = terms;
	t->nterms = n;
	t->docid_lo = ref->docid_lo;
	t->ndocs = (uint32) Min(seg->hdr.ndocs, docid_limit - ref->docid_lo);
	t->exhaustive = so->exhaustive;
	t->read_block = read_block;
	t->accumulate_block = accumulate_block;
	t->is_alive = ref->ndead > 0 ? is_alive : NULL;
	t->arg = r;
	t->counters = &so->counters;
	t->scratch = traverse_scratch_get();
}

/* ----------------------------------------------------------------
 * Range pruning (spmrange.c): reading range maxima and the forward copy
 * ----------------------------------------------------------------
 */
typedef struct RangeReader
{
	SpmReader	r;				/* for the alive bits */
	const SpmRangeDesc **desc;	/* per SpmRangeTerm.id */
	SpmPin		maxpin;			/* a RANGEMAX page */
	SpmPin		idxpin;			/* a RANGEIDX page */
	SpmPin		fwdpin;			/* a FORWARD page */
	SpmPin	   *locked;			/* the pin whose page is share-locked */

	/* the current range of the forward copy */
	uint64		pos;			/* stream offset of the next document */
	uint64		end;			/* of the range */
	const char *page;			/* stream bytes [page_lo, page_hi) */
	uint64		page_lo;
	uint64		page_hi;
	char	   *buf;			/* a document that straddles pages */
	Size		cap;
	uint32		ndocs;			/* the kernel reads local docids below */
	bool		fwd16;			/* 16-bit terms (SPM_SEG_FWD16) */
} RangeReader;

/*
 * The callbacks hand the kernel pointers into share-locked pages (one at a
 * time), valid until the next call; this releases the lock.
 */
static void
range_unlock(RangeReader *rr)
{
	if (rr->locked)
	{
		LockBuffer(rr->locked->buf, BUFFER_LOCK_UNLOCK);
		rr->locked = NULL;
	}
	rr->page = NULL;
	rr->page_lo = rr->page_hi = 0;
}

pg_noreturn static void range_doc_corrupt(RangeReader *rr);

static void
range_doc_corrupt(RangeReader *rr)
{
	range_unlock(rr);
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" is corrupted: invalid document in the forward copy of segment %u",
					RelationGetRelationName(rr->r.index), rr->r.seg->segment_id),
			 errhint("REINDEX the index.")));
}

/*
 * The range kernel's work arrays, kept per backend for segments of up to
 * SPM_RANGE_SCRATCH_KEEP ranges (about 10 bytes a range: 3.1 MB for a
 * segment of 10M documents); a larger segment's are freed after its call
 * (or, if the call failed, after the next range round of any segment).
 */
#define SPM_RANGE_SCRATCH_KEEP	(4U << 20)

static SpmRangeScratch range_scratch;

/* free the per-range arrays, also those of a growth that failed halfway */
static void
range_scratch_free(void)
{
	if (range_scratch.ub)
		pfree(range_scratch.ub);
	if (range_scratch.bucket)
		pfree(range_scratch.bucket);
	if (range_scratch.order)
		pfree(range_scratch.order);
	range_scratch.ub = NULL;
	range_scratch.bucket = NULL;
	range_scratch.order = NULL;
	range_scratch.cap = 0;
}

/* range_scratch with room for nranges ranges */
static SpmRangeScratch *
range_scratch_get(uint32 nranges)
{
	if (range_scratch.filter == NULL)
	{
		range_scratch.filter = MemoryContextAlloc(scan_work_context(),
												  SPM_RANGE_FILTER_BITS / 8);
		range_scratch.qidx = MemoryContextAlloc(scan_work_context(),
												SPM_RANGE_FILTER_BITS);
	}
	if (range_scratch.cap < nranges)
	{
		MemoryContext cxt = scan_work_context();
		uint32		cap = Max(nranges, 1024);

		range_scratch_free();
		range_scratch.ub = MemoryContextAllocHuge(cxt, (Size) cap * sizeof(float));
		range_scratch.bucket = MemoryContextAllocHuge(cxt, (Size) cap * sizeof(uint16));
		range_scratch.order = MemoryContextAllocHuge(cxt, (Size) cap * sizeof(uint32));
		range_scratch.cap = cap;
	}
	return &range_scratch;
}

/* the rest of the page from the term's byte pos (the kernel clamps it) */
static uint32
range_data(void *arg, const SpmRangeTerm *term, uint64 pos, const uint8 **data)
{
	RangeReader *rr = arg;
	uint32		avail;

	range_unlock(rr);
	*data = (const uint8 *) SpmLockStream(rr->r.index, rr->r.seg,
										  SPM_STREAM_RANGEMAX,
										  rr->desc[term->id]->off + pos,
										  &avail, &rr->maxpin);
	rr->locked = &rr->maxpin;
	return avail;
}

static void
range_begin(void *arg, uint32 r)
{
	RangeReader *rr = arg;

	range_unlock(rr);
	rr->pos = SpmRangeOffset(rr->r.index, rr->r.seg, r, &rr->idxpin);
	rr->end = SpmRangeOffset(rr->r.index, rr->r.seg, r + 1, &rr->idxpin);
	if (rr->end < rr->pos)
		range_doc_corrupt(rr);
}

/*
 * The next document, read in place where it lies on one page, else
 * copied; its elements inside the range, the last inside dims (the
 * kernel checks that they ascend).
 */
static void
range_next_doc(void *arg, SpmRangeDoc *doc)
{
	RangeReader *rr = arg;
	uint32		nnz;
	uint64		need;
	const char *e;
	uint32		last;

	if (rr->end - rr->pos < sizeof(uint32))
		range_doc_corrupt(rr);
	if (rr->pos < rr->page_lo || rr->pos >= rr->page_hi)
	{
		uint32		avail;

		range_unlock(rr);
		rr->page = SpmLockStream(rr->r.index, rr->r.seg, SPM_STREAM_FWD,
								 rr->pos, &avail, &rr->fwdpin);
		rr->locked = &rr->fwdpin;
		rr->page_lo = rr->pos;
		rr->page_hi = rr->pos + avail;
	}
	/* offsets are multiples of 4 and so is a page's content: no straddle */
	memcpy(&nnz, rr->page + (rr->pos - rr->page_lo), sizeof(uint32));
	rr->pos += sizeof(uint32);
	need = spm_fwd_elems_bytes(rr->fwd16, nnz);
	if (need > rr->end - rr->pos)
		range_doc_corrupt(rr);
	if (rr->pos + need <= rr->page_hi)
		e = rr->page + (rr->pos - rr->page_lo);
	else
	{
		range_unlock(rr);
		if (need > rr->cap)
		{
			rr->cap = Max((Size) need, 2 * rr->cap);
			rr->buf = repalloc(rr->buf, rr->cap);
		}
		SpmReadStream(rr->r.index, rr->r.seg, SPM_STREAM_FWD, rr->pos, need,
					  rr->buf, &rr->fwdpin);
		e = rr->buf;
	}
	rr->pos += need;
	doc->nnz = (int32) nnz;
	if (rr->fwd16)
	{
		/* offsets are multiples of 4, and so is the weights' start */
		doc->elems = NULL;
		doc->terms16 = (const uint16 *) e;
		doc->w16 = (const float *) (e + TYPEALIGN(4, 2 * (Size) nnz));
		last = nnz > 0 ? doc->terms16[nnz - 1] : 0;
	}
	else
	{
		doc->elems = (const SpmFwdElem *) e;
		doc->terms16 = NULL;
		doc->w16 = NULL;
		last = nnz > 0 ? doc->elems[nnz - 1].term : 0;
	}
	if (nnz > 0 && last >= (uint32) rr->r.seg->hdr.dims)
		range_doc_corrupt(rr);
}

/* a range read whole ends where the next begins */
static void
range_end(void *arg, uint32 r)
{
	RangeReader *rr = arg;
	uint64		last = Min((uint64) (r + 1) * SPM_RANGE_DOCS,
						   (uint64) rr->r.seg->hdr.ndocs);

	if (last <= rr->ndocs && rr->pos != rr->end)
		range_doc_corrupt(rr);
}

static bool
range_is_alive(void *arg, uint32 local)
{
	RangeReader *rr = arg;

	return is_alive(&rr->r, local);
}

/*
 * Range pruning gives up on a segment (and MaxScore takes it) when the
 * documents it would still score hold more forward-copy elements than
 * this many times the postings of the query terms (see "Range pruning in
 * the index" in doc/decisions.md for the measurements behind it).
 */
#define SPM_RANGE_FALLBACK	1.0

/* at most 2^SPM_RANGE_BACKOFF - 1 rounds skipped after give-ups in a row */
#define SPM_RANGE_BACKOFF	6

/*
 * The positive round's top-k of a segment by range pruning, if the
 * segment and the query allow it (see spmrange.h); returns false, having
 * done nothing, if not.
 */
static bool
range_round(IndexScanDesc scan, SpmSegment *seg, const SpmSegmentRef *ref,
			uint64 docid_limit, SpmTopK *topk)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	SparseVector *q = so->query;
	float	   *qv = SPV_VALUES(q);
	SpmRangeTerm *terms;
	const SpmRangeDesc **desc;
	int			n = 0;
	RangeReader rr;
	SpmRangeScan s;
	double		postings = 0;
	bool		done;

	if (!so->ranges || so->querynegative ||
		!(seg->hdr.flags & SPM_SEG_RANGES) ||
		(seg->hdr.flags & SPM_META_NEGATIVE))
		return false;
	if (so->range_fallback && seg->range_skip > 0)
	{
		seg->range_skip--;
		return false;
	}

	terms = palloc(Max(q->nnz, 1) * sizeof(SpmRangeTerm));
	desc = palloc(Max(q->nnz, 1) * sizeof(SpmRangeDesc *));
	for (int i = 0; i < q->nnz; i++)
	{
		const SpmTermData *d;

		d = SpmGetTerm(scan->indexRelation, seg, (uint32) q->indices[i]);
		if (d == NULL)
			continue;
		terms[n].term = (uint32) q->indices[i];
		terms[n].q = qv[i];
		terms[n].max_w = d->entry.max_w;
		terms[n].dense = (d->range.flags & SPM_RANGE_DENSE) != 0;
		terms[n].nr = d->range.nr;
		terms[n].id = n;
		desc[n] = &d->range;
		postings += d->entry.df;
		n++;
	}
	if (!spm_range_usable(terms, n))
		return false;

	memset(&rr, 0, sizeof(rr));
	rr.r.index = scan->indexRelation;
	rr.r.seg = seg;
	rr.r.bitpin.buf = InvalidBuffer;
	rr.r.alive = palloc0(Max(seg->hdr.nalive, 1) * sizeof(uint8 *));
	rr.desc = desc;
	rr.fwd16 = (seg->hdr.flags & SPM_SEG_FWD16) != 0;
	rr.maxpin.buf = rr.idxpin.buf = rr.fwdpin.buf = InvalidBuffer;
	rr.cap = 4096;
	rr.buf = palloc(rr.cap);

	memset(&s, 0, sizeof(s));
	s.terms = terms;
	s.nterms = n;
	s.docid_lo = ref->docid_lo;
	s.ndocs = (uint32) Min(seg->hdr.ndocs, docid_limit - ref->docid_lo);
	rr.ndocs = s.ndocs;
	s.nranges = seg->hdr.nranges;
	s.after = so->after;
	s.topk = topk;
	s.range_data = range_data;
	s.range_begin = range_begin;
	s.next_doc = range_next_doc;
	s.range_end = range_end;
	s.is_alive = ref->ndead > 0 ? range_is_alive : NULL;
	s.arg = &rr;
	s.fallback_cost = so->range_fallback ? postings * SPM_RANGE_FALLBACK : 0;
	s.elems_per_doc = (double) seg->hdr.npostings / Max(seg->hdr.ndocs, 1);
	s.relname = RelationGetRelationName(scan->indexRelation);
	s.counters = &so->counters;
	s.scratch = range_scratch_get(s.nranges);
	done = spm_range_topk(&s);
	if (range_scratch.cap > SPM_RANGE_SCRATCH_KEEP)
		range_scratch_free();

	/*
	 * Under auto, a segment where range pruning keeps giving up (a corpus
	 * whose bounds do not prune) is left to MaxScore for 1, 3, 7 .. 63
	 * rounds after 1, 2, 3 .. 6 give-ups in a row, then tried again; one
	 * round that finishes starts the count afresh.
	 */
	if (so->range_fallback)
	{
		if (done)
			seg->range_fails = 0;
		else
		{
			seg->range_fails = Min(seg->range_fails + 1, SPM_RANGE_BACKOFF);
			seg->range_skip = ((uint32) 1 << seg->range_fails) - 1;
		}
	}

	range_unlock(&rr);
	SpmUnpin(&rr.maxpin);
	SpmUnpin(&rr.idxpin);
	SpmUnpin(&rr.fwdpin);
	SpmUnpin(&rr.r.bitpin);
	return done;
}

/* ----------------------------------------------------------------
 * Rounds
 * ----------------------------------------------------------------
 */

/*
 * Start a round: share SPM_SCAN_LOCK, copy the metapage, reset roundCtx
 * and switch into it.  Returns the old memory context.
 */
static MemoryContext
begin_round(IndexScanDesc scan, SpmMetaPageData *meta)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;

	CHECK_FOR_INTERRUPTS();
	LockPage(scan->indexRelation, SPM_SCAN_LOCK, ShareLock);
	SpmReadMeta(scan->indexRelation, meta);
	if (so->query && meta->dims != 0 && so->query->dim != meta->dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("different sparsevec dimensions %d and %d",
						meta->dims, so->query->dim)));
	SpmCacheNewRound();
	so->hits = NULL;
	so->nhits = so->next = 0;
	MemoryContextReset(so->roundCtx);

	/* tests: hold the round open (see sparse_maxscore.debug_round_delay) */
	for (int ms = 0; ms < spm_debug_round_delay; ms += 10)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
	return MemoryContextSwitchTo(so->roundCtx);
}

static void
end_round(IndexScanDesc scan, MemoryContext old)
{
	MemoryContextSwitchTo(old);
	UnlockPage(scan->indexRelation, SPM_SCAN_LOCK, ShareLock);
}

/* heap TIDs of the hits that have none yet (segment documents) */
static void
resolve_tids(IndexScanDesc scan, const SpmMetaPageData *meta,
			 SpmSegment **segs, SpmHit *hits, int n)
{
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};

	for (int i = 0; i < n; i++)
	{
		int			s;

		if (ItemPointerIsValid(&hits[i].tid))
			continue;
		s = SpmFindSegment(meta, hits[i].docid);
		if (s < 0)
			elog(ERROR, "sparse_maxscore: docid " UINT64_FORMAT " is in no segment",
				 hits[i].docid);
		SpmGetTid(scan->indexRelation, segs[s], hits[i].docid - meta->segments[s].docid_lo,
				  &hits[i].tid, &pin);
	}
	SpmUnpin(&pin);
}

static SpmSegment **
get_segments(IndexScanDesc scan, const SpmMetaPageData *meta)
{
	SpmSegment **segs = palloc(Max(meta->nsegments, 1) * sizeof(SpmSegment *));

	for (uint32 i = 0; i < meta->nsegments; i++)
		segs[i] = SpmGetSegment(scan->indexRelation, meta, (int) i);
	return segs;
}

/*
 * One round: the exact top-k positive rows after the cursor.
 */
static void
run_round(IndexScanDesc scan)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	SpmMetaPageData meta;
	MemoryContext old = begin_round(scan, &meta);
	SpmSegment **segs = get_segments(scan, &meta);
	SpmTopK		topk;
	int			k = so->k;

	so->counters.rounds++;
	spm_topk_init(&topk, k, palloc(k * sizeof(SpmHit)));

	spm_pending_topk(scan->indexRelation, &meta, so->query, SPM_PHASE_POSITIVE,
					 &so->after, &topk);

	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		SpmTraverse t;
		SpmReader	r;

		if (range_round(scan, segs[i], &meta.segments[i],
						meta.pending_docid_lo, &topk))
			continue;
		setup_traverse(scan, segs[i], &meta.segments[i], meta.pending_docid_lo,
					   &t, &r);
		t.phase = SPM_PHASE_POSITIVE;
		t.after = so->after;
		t.topk = &topk;
		spm_traverse_begin(&t);
		spm_traverse_topk(&t);
		spm_traverse_end(&t);
		reader_release(&r);
	}

	spm_topk_sort(&topk);
	resolve_tids(scan, &meta, segs, topk.heap, topk.n);
	so->hits = topk.heap;
	so->nhits = topk.n;
	end_round(scan, old);

	if (topk.n > 0)
	{
		so->after.active = true;
		so->after.score = topk.heap[topk.n - 1].score;
		so->after.docid = topk.heap[topk.n - 1].docid;
	}
	if (topk.n < k)
		so->state = SPM_SCAN_ZERO;	/* no positive row is left */
	else if (k > so->kmax / 2)
		so->state = SPM_SCAN_SORTED;
	else
		so->k = k * 2;
}

/* ----------------------------------------------------------------
 * Sorted passes (SORTED, NEGATIVE)
 * ----------------------------------------------------------------
 */
static void
sort_put(SpmScanOpaque so, double score, uint64 docid, ItemPointer tid)
{
	TupleTableSlot *slot = so->slot;

	ExecClearTuple(slot);
	slot->tts_values[0] = Float8GetDatum(-score);	/* the distance */
	slot->tts_values[1] = Int64GetDatum((int64) docid);
	slot->tts_values[2] = PointerGetDatum(tid);
	slot->tts_isnull[0] = slot->tts_isnull[1] = slot->tts_isnull[2] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(so->sort, slot);
}

typedef struct SortPassState
{
	SpmScanOpaque so;
	SpmPhase	phase;
} SortPassState;

static void
pending_sort_cb(void *arg, double score, uint64 docid, ItemPointer tid)
{
	SortPassState *ps = arg;

	if (ps->phase == SPM_PHASE_POSITIVE ? score > 0 : score < 0)
	{
		if (spm_is_after(&ps->so->after, score, docid))
			sort_put(ps->so, score, docid, tid);
	}
}

/*
 * Every row of the phase's sign (after the cursor, for the positive
 * phase) into a tuplesort ordered like the results, then start streaming
 * it.
 */
static void
sort_pass(IndexScanDesc scan, SpmPhase phase)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	SpmMetaPageData meta;
	MemoryContext old;
	SpmSegment **segs;
	AttrNumber	attnums[2] = {1, 2};
	Oid			ops[2] = {Float8LessOperator, Int8LessOperator};
	Oid			colls[2] = {InvalidOid, InvalidOid};
	bool		nullsFirst[2] = {false, false};
	SortPassState ps;

	old = begin_round(scan, &meta);
	segs = get_segments(scan, &meta);
	so->counters.rounds++;

	MemoryContextSwitchTo(so->queryCtx);
	if (so->sortdesc == NULL)
	{
		so->sortdesc = CreateTemplateTupleDesc(3);
		TupleDescInitEntry(so->sortdesc, 1, "distance", FLOAT8OID, -1, 0);
		TupleDescInitEntry(so->sortdesc, 2, "docid", INT8OID, -1, 0);
		TupleDescInitEntry(so->sortdesc, 3, "tid", TIDOID, -1, 0);
		so->slot = MakeSingleTupleTableSlot(so->sortdesc, &TTSOpsVirtual);
		so->mslot = MakeSingleTupleTableSlot(so->sortdesc, &TTSOpsMinimalTuple);
	}
	so->sort = tuplesort_begin_heap(so->sortdesc, 2, attnums, ops, colls,
									nullsFirst, work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(so->roundCtx);

	ps.so = so;
	ps.phase = phase;
	spm_pending_scan(scan->indexRelation, &meta, so->query, meta.pending_docid_lo,
					 pending_sort_cb, &ps);

	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		SpmTraverse t;
		SpmReader	r;
		SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
		SpmTopK		dummy;
		SpmHit		one;

		setup_traverse(scan, segs[i], &meta.segments[i], meta.pending_docid_lo,
					   &t, &r);
		spm_topk_init(&dummy, 1, &one);
		t.exhaustive = true;
		t.phase = phase;
		t.topk = &dummy;
		spm_traverse_begin(&t);
		for (uint64 a = 0; a < t.ndocs; a += SPM_WINDOW)
		{
			uint32		b = (uint32) Min(a + SPM_WINDOW, t.ndocs);
			const double *acc;

			if (t.nterms == 0)
				break;
			acc = spm_window_scores(&t, (uint32) a, b);
			for (uint32 d = (uint32) a; d < b; d++)
			{
				double		s = acc[d - a];
				uint64		docid = t.docid_lo + d;
				ItemPointerData tid;

				if (phase == SPM_PHASE_POSITIVE ? !(s > 0) : !(s < 0))
					continue;
				so->counters.candidates++;
				if (!spm_is_after(&so->after, s, docid))
					continue;
				if (t.is_alive && !t.is_alive(t.arg, d))
					continue;
				SpmGetTid(scan->indexRelation, segs[i], d, &tid, &pin);
				sort_put(so, s, docid, &tid);
			}
			CHECK_FOR_INTERRUPTS();
		}
		spm_traverse_end(&t);
		reader_release(&r);
		SpmUnpin(&pin);
	}

	tuplesort_performsort(so->sort);
	end_round(scan, old);
}

/* next row of the sorted pass, or false when it is exhausted */
static bool
sort_next(IndexScanDesc scan)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	bool		isnull;
	Datum		d;

	if (!tuplesort_gettupleslot(so->sort, true, false, so->mslot, NULL))
	{
		tuplesort_end(so->sort);
		so->sort = NULL;
		return false;
	}
	scan->xs_heaptid = *((ItemPointer) DatumGetPointer(slot_getattr(so->mslot, 3, &isnull)));
	d = slot_getattr(so->mslot, 1, &isnull);
	scan->xs_orderbyvals[0] = d;
	scan->xs_orderbynulls[0] = false;
	/* keep the cursor current, for the record */
	so->after.active = true;
	so->after.score = -DatumGetFloat8(d);
	so->after.docid = (uint64) DatumGetInt64(slot_getattr(so->mslot, 2, &isnull));
	return true;
}

/* ----------------------------------------------------------------
 * Docid-order phases (ZERO, NULLS, ALL)
 * ----------------------------------------------------------------
 */
typedef struct StreamState
{
	SpmHit	   *hits;
	int			n;
	int			cap;
	SpmScanState what;
} StreamState;

static void
stream_add(StreamState *ss, uint64 docid, double score, ItemPointer tid)
{
	if (ss->n == ss->cap)
	{
		ss->cap *= 2;
		ss->hits = repalloc(ss->hits, ss->cap * sizeof(SpmHit));
	}
	ss->hits[ss->n].docid = docid;
	ss->hits[ss->n].score = score;
	if (tid)
		ss->hits[ss->n].tid = *tid;
	else
		ItemPointerSetInvalid(&ss->hits[ss->n].tid);
	ss->n++;
}

static void
pending_stream_cb(void *arg, double score, uint64 docid, ItemPointer tid)
{
	StreamState *ss = arg;

	/* the pending pass reports NULL rows with a NaN score */
	if (ss->what == SPM_SCAN_ALL ||
		(ss->what == SPM_SCAN_NULLS && isnan(score)) ||
		(ss->what == SPM_SCAN_ZERO && score == 0.0))
		stream_add(ss, docid, score, tid);
}

/*
 * The next batch of a docid-order phase: about so->batch rows at docids
 * >= so->pos, whole windows at a time.
 */
static void
stream_batch(IndexScanDesc scan)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	SpmMetaPageData meta;
	MemoryContext old = begin_round(scan, &meta);
	SpmSegment **segs = get_segments(scan, &meta);
	StreamState ss;
	uint8	   *alive = palloc(SPM_BITMAP_BYTES);
	uint8	   *nulls = palloc(SPM_BITMAP_BYTES);
	bool		done = true;

	so->counters.rounds++;
	ss.cap = Max(so->batch, 16);
	ss.hits = palloc(ss.cap * sizeof(SpmHit));
	ss.n = 0;
	ss.what = so->state;

	for (uint32 i = 0; i < meta.nsegments && done; i++)
	{
		SpmSegmentRef *ref = &meta.segments[i];
		SpmSegment *seg = segs[i];
		SpmTraverse t;
		SpmReader	r;
		SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
		uint64		end = Min(ref->docid_hi, meta.pending_docid_lo);
		uint32		local;
		uint32		ndocs;
		int64		alive_page = -1;

		if (end <= so->pos)
			continue;
		local = (uint32) (Max(so->pos, ref->docid_lo) - ref->docid_lo);
		ndocs = (uint32) (end - ref->docid_lo);
		if (so->state == SPM_SCAN_ZERO)
		{
			setup_traverse(scan, seg, ref, meta.pending_docid_lo, &t, &r);
			t.exhaustive = true;
			spm_traverse_begin(&t);
		}

		while (local < ndocs)
		{
			uint32		b = Min(ndocs, local - local % SPM_WINDOW + SPM_WINDOW);
			const double *acc = NULL;

			if (so->state == SPM_SCAN_ZERO && t.nterms > 0)
				acc = spm_window_scores(&t, local, b);
			for (uint32 d = local; d < b; d++)
			{
				uint32		bit = d % SPM_BITS_PER_PAGE;
				bool		isnull;

				if ((int64) (d / SPM_BITS_PER_PAGE) != alive_page)
				{
					alive_page = d / SPM_BITS_PER_PAGE;
					SpmReadBitsetPage(scan->indexRelation, seg, false,
									  (uint32) alive_page, alive, &pin);
					SpmReadBitsetPage(scan->indexRelation, seg, true,
									  (uint32) alive_page, nulls, &pin);
				}
				if (!((alive[bit / 8] >> (bit % 8)) & 1))
					continue;
				isnull = (nulls[bit / 8] >> (bit % 8)) & 1;
				if (so->state == SPM_SCAN_ZERO)
				{
					if (isnull || (acc != NULL && acc[d - local] != 0.0))
						continue;
					stream_add(&ss, ref->docid_lo + d, 0.0, NULL);
				}
				else if (so->state == SPM_SCAN_NULLS)
				{
					if (isnull)
						stream_add(&ss, ref->docid_lo + d, NAN, NULL);
				}
				else
					stream_add(&ss, ref->docid_lo + d, isnull ? NAN : 0.0, NULL);
			}
			local = b;
			so->pos = ref->docid_lo + b;
			CHECK_FOR_INTERRUPTS();
			if (ss.n >= so->batch)
				break;
		}
		if (so->state == SPM_SCAN_ZERO)
		{
			spm_traverse_end(&t);
			reader_release(&r);
		}
		SpmUnpin(&pin);
		if (local < ndocs)
			done = false;
	}

	if (done && so->pos < meta.next_docid)
	{
		/* the pending list, docids >= pending_docid_lo */
		spm_pending_scan(scan->indexRelation, &meta, so->query,
						 Max(so->pos, meta.pending_docid_lo), pending_stream_cb,
						 &ss);
		so->pos = meta.next_docid;
	}

	resolve_tids(scan, &meta, segs, ss.hits, ss.n);
	so->hits = ss.hits;
	so->nhits = ss.n;
	end_round(scan, old);

	so->batch = Min(so->batch * 2, 65536);
	if (done)
	{
		so->pos = 0;
		so->batch = 256;
		if (so->state == SPM_SCAN_ZERO)
			so->state = SPM_SCAN_NEGATIVE;
		else
			so->state = SPM_SCAN_DONE;
	}
}

/* ----------------------------------------------------------------
 * Access method callbacks
 * ----------------------------------------------------------------
 */

/*
 * Prepare for an index scan.  No I/O.
 */
IndexScanDesc
spmbeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	SpmScanOpaque so;
	MemoryContext scanCtx;

	scanCtx = AllocSetContextCreate(CurrentMemoryContext,
									"sparse_maxscore scan",
									ALLOCSET_DEFAULT_SIZES);
	so = MemoryContextAllocZero(scanCtx, sizeof(SpmScanOpaqueData));
	so->scanCtx = scanCtx;
	so->queryCtx = AllocSetContextCreate(scanCtx, "sparse_maxscore query",
										 ALLOCSET_DEFAULT_SIZES);
	so->roundCtx = AllocSetContextCreate(scanCtx, "sparse_maxscore round",
										 ALLOCSET_DEFAULT_SIZES);
	so->state = SPM_SCAN_FIRST;
	scan->opaque = so;

	/* we report the distance of every row (never lossy, but it is free) */
	scan->xs_orderbyvals = MemoryContextAllocZero(scanCtx, Max(norderbys, 1) * sizeof(Datum));
	scan->xs_orderbynulls = MemoryContextAlloc(scanCtx, Max(norderbys, 1) * sizeof(bool));
	memset(scan->xs_orderbynulls, true, Max(norderbys, 1) * sizeof(bool));
	return scan;
}

static void
publish_counters(SpmScanOpaque so)
{
	if (so->state != SPM_SCAN_FIRST)
		spm_last_scan = so->counters;
}

static void
reset_scan(SpmScanOpaque so)
{
	publish_counters(so);
	if (so->sort)
	{
		tuplesort_end(so->sort);
		so->sort = NULL;
	}
	so->slot = NULL;
	so->mslot = NULL;
	so->sortdesc = NULL;
	so->query = NULL;
	so->hits = NULL;
	so->nhits = so->next = 0;
	MemoryContextReset(so->roundCtx);
	MemoryContextReset(so->queryCtx);
	so->state = SPM_SCAN_FIRST;
}

/*
 * Start or restart a scan.  Called once per outer row of a nested loop,
 * so it only resets state; the work starts at the first amgettuple.
 */
void
spmrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
		  int norderbys)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;

	reset_scan(so);
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys,
				scan->numberOfOrderBys * sizeof(ScanKeyData));
}

/* first amgettuple of a scan: validate and copy the query */
static void
start_scan(IndexScanDesc scan)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	ScanKey		key;

	if (scan->numberOfOrderBys != 1 || scan->orderByData == NULL)
		elog(ERROR, "cannot scan sparse_maxscore index without order");
	if (scan->numberOfKeys > 0)
		elog(ERROR, "sparse_maxscore index scans take no search keys");
	/* see README "Snapshots" for why MVCC is required */
	if (!IsMVCCSnapshot(scan->xs_snapshot))
		elog(ERROR, "non-MVCC snapshots are not supported with sparse_maxscore");

	pgstat_count_index_scan(scan->indexRelation);
#if PG_VERSION_NUM >= 180000
	/* one index search a scan: EXPLAIN ANALYZE's "Index Searches" */
	if (scan->instrument)
		scan->instrument->nsearches++;
#endif
	memset(&so->counters, 0, sizeof(SpmCounters));

	key = &scan->orderByData[0];
	if (key->sk_flags & SK_ISNULL)
	{
		so->query = NULL;
		so->state = SPM_SCAN_ALL;
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(so->queryCtx);
		SparseVector *q = (SparseVector *) PG_DETOAST_DATUM_COPY(key->sk_argument);
		float	   *qv = SPV_VALUES(q);
		bool		negative = false;

		MemoryContextSwitchTo(old);
		for (int i = 0; i < q->nnz; i++)
			negative |= qv[i] < 0;
		so->query = q;
		so->querynegative = negative;
		so->state = SPM_SCAN_ROUNDS;
	}
	so->exhaustive = spm_algorithm == SPM_ALG_EXHAUSTIVE;
	so->ranges = spm_algorithm == SPM_ALG_AUTO || spm_algorithm == SPM_ALG_RANGES;
	so->range_fallback = spm_algorithm == SPM_ALG_AUTO;
	/* the LIMIT above the scan, when known (spmlimit.c), or initial_k */
	if (!so->hint_taken)
	{
		so->limit_hint = SpmTakeLimitHint(RelationGetRelid(scan->indexRelation));
		so->hint_taken = true;
	}
	so->k = so->limit_hint > 0 ? so->limit_hint : spm_initial_k;
	so->kmax = (int) Min((Size) work_mem * 1024 / (2 * sizeof(SpmHit)),
						 (Size) (MaxAllocSize / sizeof(SpmHit)));
	so->kmax = Max(so->kmax, 2);
	/* a first round too large for work_mem: sort instead (not for NULL) */
	if (so->query != NULL && so->k > so->kmax)
		so->state = SPM_SCAN_SORTED;
	so->after.active = false;
	so->pos = 0;
	so->batch = 256;
}

/*
 * Fetch the next tuple, in ascending distance.
 */
bool
spmgettuple(IndexScanDesc scan, ScanDirection dir)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;

	Assert(ScanDirectionIsForward(dir));
	if (so->state == SPM_SCAN_FIRST)
		start_scan(scan);

	for (;;)
	{
		if (so->next < so->nhits)
		{
			SpmHit	   *h = &so->hits[so->next++];

			scan->xs_heaptid = h->tid;
			scan->xs_recheck = false;
			scan->xs_recheckorderby = false;
			scan->xs_orderbyvals[0] = Float8GetDatum(-h->score);
			scan->xs_orderbynulls[0] = isnan(h->score) || so->query == NULL;
			so->counters.rows_returned++;
			return true;
		}
		if (so->sort)
		{
			if (sort_next(scan))
			{
				scan->xs_recheck = false;
				scan->xs_recheckorderby = false;
				so->counters.rows_returned++;
				return true;
			}
			continue;
		}

		switch (so->state)
		{
			case SPM_SCAN_ROUNDS:
				run_round(scan);
				break;
			case SPM_SCAN_SORTED:
				sort_pass(scan, SPM_PHASE_POSITIVE);
				so->state = SPM_SCAN_ZERO;
				break;
			case SPM_SCAN_ZERO:
			case SPM_SCAN_NULLS:
			case SPM_SCAN_ALL:
				stream_batch(scan);
				break;
			case SPM_SCAN_NEGATIVE:
				{
					SpmMetaPageData meta;

					SpmReadMeta(scan->indexRelation, &meta);
					if (so->querynegative || (meta.flags & SPM_META_NEGATIVE))
						sort_pass(scan, SPM_PHASE_NEGATIVE);
					so->state = SPM_SCAN_NULLS;
					break;
				}
			case SPM_SCAN_DONE:
				publish_counters(so);
				return false;
			case SPM_SCAN_FIRST:
				elog(ERROR, "sparse_maxscore: scan not started");
		}
	}
}

/*
 * End a scan and release resources.
 */
void
spmendscan(IndexScanDesc scan)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;

	publish_counters(so);
	if (so->sort)
		tuplesort_end(so->sort);
	MemoryContextDelete(so->scanCtx);
	scan->opaque = NULL;
}

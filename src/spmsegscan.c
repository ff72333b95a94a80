/*-------------------------------------------------------------------------
 *
 * spmsegscan.c
 *	  Scoring one segment for a scan (see spmsegscan.h): the policy's
 *	  choice, the kernels' callbacks over the segment reader, and the
 *	  kernels' work memory kept per backend.
 *
 * The callbacks hand the kernels posting blocks, alive bits, range maxima
 * and forward-copy documents read through spmsegment.c; the kernels never
 * see a buffer.  Everything here runs inside one amgettuple call, under
 * the round's SPM_SCAN_LOCK (src/README "Rounds").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "spmpolicy.h"
#include "spmrange.h"
#include "spmsegscan.h"
#include "spmtraverse.h"

/* ----------------------------------------------------------------
 * Reading posting blocks and alive bits for spmtraverse.c
 * ----------------------------------------------------------------
 */
/*
 * Pages stay pinned (not locked) between blocks, so that the next block of
 * a term, usually on the same page, needs no buffer lookup.  Each query
 * term has a pin of its own (SpmQueryTerm.id picks it): MaxScore probes
 * hop between the non-essential terms from one candidate to the next, and
 * even term-at-a-time visits every term once per window.  Eight pins
 * shared round-robin by all terms made a query read about three times as
 * many index buffers (doc/decisions.md, "A pin per query term").  Beyond
 * SPM_READER_MAX_PINS terms share pins by id modulo the count.  The count is also held to a backend's proportional
 * share of the buffer pool, NBuffers / MaxBackends (the share the buffer
 * manager itself computes as MaxProportionalPins from PostgreSQL 16 on),
 * so that every backend can run a scan at once, but never below the 8
 * this reader always had.
 */
#define SPM_READER_MAX_PINS	64

/* the share of a format 6 segment's largest bound excess that the elastic
 * round's gap takes (spm_segscan_gap) */
#define SPM_FWDQ_GAP_SHARE	0.5

typedef struct SpmReader
{
	Relation	index;
	SpmSegment *seg;
	SpmPin	   *pins;			/* [npins] */
	int			npins;
	uint8	  **alive;			/* copied alive pages, NULL until needed */
	uint8	  **nulls;			/* copied null pages, the array too */
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
	int16		exp;

	/* a negative query weight takes the lower ends (spmblock.h) */
	SpmReadPostingBlock(r->index, r->seg, term->blkno[b], term->off[b],
						term->count[b], term->last[b], term->q < 0, docids,
						weights, &exp, reader_pin(r, term));
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

/*
 * Alive and not NULL: the phase of every sign offers the docids no query
 * term touched at 0, and a NULL row is not one of them (it comes last, in
 * the NULLS phase).  For segments that hold NULL rows.
 */
static bool
is_alive_not_null(void *arg, uint32 local)
{
	SpmReader  *r = arg;
	uint32		pageno = local / SPM_BITS_PER_PAGE;
	uint32		bit = local % SPM_BITS_PER_PAGE;

	if (!is_alive(arg, local))
		return false;
	if (r->nulls == NULL)
		r->nulls = palloc0(Max(r->seg->hdr.nnullmap, 1) * sizeof(uint8 *));
	if (r->nulls[pageno] == NULL)
	{
		r->nulls[pageno] = palloc(SPM_BITMAP_BYTES);
		SpmReadBitsetPage(r->index, r->seg, true, pageno, r->nulls[pageno],
						  &r->bitpin);
	}
	return !((r->nulls[pageno][bit / 8] >> (bit % 8)) & 1);
}

static void
reader_release(SpmReader *r)
{
	for (int i = 0; i < r->npins; i++)
		SpmUnpin(&r->pins[i]);
	SpmUnpin(&r->bitpin);
}

/* ----------------------------------------------------------------
 * The kernels' work memory, kept per backend
 * ----------------------------------------------------------------
 */

/*
 * The context of the work memory that scans keep per backend: the
 * traversal's (SpmTraverseScratch) and range pruning's (SpmRangeScratch).
 * Every traversal and range round runs inside one amgettuple call, so no
 * two use the same memory at once.  Each kernel grows its own scratch in
 * this context and frees what is larger than it keeps.
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
static SpmRangeScratch range_scratch;

static SpmTraverseScratch *
traverse_scratch_get(void)
{
	if (traverse_scratch.cxt == NULL)
		traverse_scratch.cxt = scan_work_context();
	return &traverse_scratch;
}

static SpmRangeScratch *
range_scratch_get(void)
{
	if (range_scratch.cxt == NULL)
		range_scratch.cxt = scan_work_context();
	return &range_scratch;
}

/* ----------------------------------------------------------------
 * The query terms a segment has
 * ----------------------------------------------------------------
 */
typedef struct SegTerms
{
	int			n;				/* query terms the segment has */
	const SpmTermData **data;	/* [n] their entries and range descriptors
								 * (SpmGetTermBrief: skip arrays only if
								 * loaded, or without range data) */
	int		   *qi;				/* [n] their index in the query */
	double		postings;		/* sum of their df */
} SegTerms;

/* look the query's terms up in the segment (in the current context) */
static void
seg_terms(Relation index, SpmSegment *seg, const SparseVector *q,
		  SegTerms *st)
{
	st->n = 0;
	st->postings = 0;
	st->data = palloc(Max(q->nnz, 1) * sizeof(SpmTermData *));
	st->qi = palloc(Max(q->nnz, 1) * sizeof(int));
	for (int i = 0; i < q->nnz; i++)
	{
		const SpmTermData *d = SpmGetTermBrief(index, seg, (uint32) q->indices[i]);

		if (d == NULL)
			continue;
		st->data[st->n] = d;
		st->qi[st->n] = i;
		st->postings += d->entry.df;
		st->n++;
	}
}

/* ----------------------------------------------------------------
 * Setting up the traversal of one segment
 * ----------------------------------------------------------------
 */

/*
 * The traversal of the segment's query terms (in the current context),
 * ready for spm_traverse_begin.  The reader must outlive the traversal.
 */
static void
setup_traverse(Relation index, SpmSegment *seg, const SpmSegmentRef *ref,
			   uint64 docid_limit, const SpmSegQuery *sq, const SegTerms *st,
			   SpmPhase phase, SpmTraverse *t, SpmReader *r)
{
	const float *qv = SPV_VALUES(sq->query);
	SpmQueryTerm *terms = palloc(Max(st->n, 1) * sizeof(SpmQueryTerm));
	int			n = st->n;

	for (int i = 0; i < n; i++)
	{
		const SpmTermData *d = st->data[i];
		SpmQueryTerm *term = &terms[i];

		/* the skip entries, loaded now where SpmGetTermBrief left them out */
		if (d->nblocks < 0)
			d = SpmGetTerm(index, seg, (uint32) sq->query->indices[st->qi[i]]);
		if (d == NULL || d->nblocks < 0)
			elog(ERROR, "sparse_maxscore: term %d of the query lost its skip entries",
				 sq->query->indices[st->qi[i]]);

		term->q = qv[st->qi[i]];
		term->nblocks = d->nblocks;
		term->id = i;
		term->last = d->last;
		term->max_w = d->max_w;
		term->min_w = d->min_w;
		term->blkno = d->blkno;
		term->off = d->off;
		term->count = d->count;
		term->sum = d->sum;
	}

	memset(r, 0, sizeof(SpmReader));
	r->index = index;
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
	t->read_block = read_block;
	t->accumulate_block = accumulate_block;
	t->is_alive = ref->ndead > 0 ? is_alive : NULL;
	if (phase == SPM_PHASE_ANY && seg->hdr.nnullmap > 0)
		t->is_alive = is_alive_not_null;
	t->phase = phase;
	/* the segment has the norm term, the last of the query */
	t->norm_last = phase == SPM_PHASE_ANY && sq->l2 && n > 0 &&
		st->qi[n - 1] == sq->query->nnz - 1;
	t->arg = r;
	t->counters = sq->counters;
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
	bool		fwdq;			/* and codes (SPM_SEG_FWDQ) */
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
	need = spm_fwd_doc_bytes(rr->r.seg->hdr.flags, nnz);
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
		doc->w16 = NULL;
		doc->codes16 = NULL;
		if (rr->fwdq)
			doc->codes16 = (const uint8 *) (e + TYPEALIGN(4, 2 * (Size) nnz));
		else
			doc->w16 = (const float *) (e + TYPEALIGN(4, 2 * (Size) nnz));
		last = nnz > 0 ? doc->terms16[nnz - 1] : 0;
	}
	else
	{
		doc->elems = (const SpmFwdElem *) e;
		doc->terms16 = NULL;
		doc->w16 = NULL;
		doc->codes16 = NULL;
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
 * The range kernel's terms for the segment's query terms, or NULL if the
 * kernel cannot take them (spm_range_usable).
 */
static SpmRangeTerm *
range_terms(const SpmSegQuery *sq, const SpmSegment *seg, const SegTerms *st)
{
	const float *qv = SPV_VALUES(sq->query);
	SpmRangeTerm *terms = palloc(Max(st->n, 1) * sizeof(SpmRangeTerm));

	for (int i = 0; i < st->n; i++)
	{
		const SpmTermData *d = st->data[i];

		terms[i].term = (uint32) sq->query->indices[st->qi[i]];
		terms[i].q = qv[st->qi[i]];
		terms[i].max_w = d->entry.max_w;
		terms[i].dense = (d->range.flags & SPM_RANGE_DENSE) != 0;
		terms[i].nr = d->range.nr;
		terms[i].id = i;
		terms[i].qbase = 0;
		terms[i].qscale = 0.0f;
		/* format 6: the codes' weights (checked by SpmDictEntryQuantOk) */
		if (seg->hdr.flags & SPM_SEG_FWDQ)
		{
			terms[i].qbase = spm_dict_qbase(&d->entry);
			terms[i].qscale = spm_pow2f(spm_dict_qexp(&d->entry));
		}
	}
	if (!spm_range_usable(terms, st->n))
		return NULL;
	return terms;
}

/*
 * The top-k of a segment by range pruning; returns false, the heap
 * untouched, if the kernel gave up (only with fallback_cost > 0).
 */
static bool
run_ranges(Relation index, SpmSegment *seg, const SpmSegmentRef *ref,
		   uint64 docid_limit, const SpmSegQuery *sq, const SegTerms *st,
		   SpmRangeTerm *terms, double fallback_cost, const SpmAfter *after,
		   SpmTopK *topk)
{
	const SpmRangeDesc **desc = palloc(Max(st->n, 1) * sizeof(SpmRangeDesc *));
	RangeReader rr;
	SpmRangeScan s;
	bool		done;

	for (int i = 0; i < st->n; i++)
		desc[i] = &st->data[i]->range;

	/*
	 * The bound pass reads every query term's range maxima: ask for all of
	 * them at once, so that on a cold cache their reads overlap.
	 */
	for (int i = 0; i < st->n; i++)
		SpmPrefetchStream(index, seg, SPM_STREAM_RANGEMAX, desc[i]->off,
						  (desc[i]->flags & SPM_RANGE_DENSE) ?
						  (uint64) seg->hdr.nranges : (uint64) desc[i]->nr * 4);

	memset(&rr, 0, sizeof(rr));
	rr.r.index = index;
	rr.r.seg = seg;
	rr.r.bitpin.buf = InvalidBuffer;
	rr.r.alive = palloc0(Max(seg->hdr.nalive, 1) * sizeof(uint8 *));
	rr.desc = desc;
	rr.fwd16 = (seg->hdr.flags & SPM_SEG_FWD16) != 0;
	rr.fwdq = (seg->hdr.flags & SPM_SEG_FWDQ) != 0;
	rr.maxpin.buf = rr.idxpin.buf = rr.fwdpin.buf = InvalidBuffer;
	rr.cap = 4096;
	rr.buf = palloc(rr.cap);

	memset(&s, 0, sizeof(s));
	s.terms = terms;
	s.nterms = st->n;
	s.docid_lo = ref->docid_lo;
	s.ndocs = (uint32) Min(seg->hdr.ndocs, docid_limit - ref->docid_lo);
	rr.ndocs = s.ndocs;
	s.nranges = seg->hdr.nranges;
	s.after = *after;
	s.topk = topk;
	s.range_data = range_data;
	s.range_begin = range_begin;
	s.next_doc = range_next_doc;
	s.range_end = range_end;
	s.is_alive = ref->ndead > 0 ? range_is_alive : NULL;
	s.arg = &rr;
	s.fallback_cost = fallback_cost;
	s.elems_per_doc = (double) seg->hdr.npostings / Max(seg->hdr.ndocs, 1);
	s.relname = RelationGetRelationName(index);
	s.counters = sq->counters;
	s.scratch = range_scratch_get();
	done = spm_range_topk(&s);

	range_unlock(&rr);
	SpmUnpin(&rr.maxpin);
	SpmUnpin(&rr.idxpin);
	SpmUnpin(&rr.fwdpin);
	SpmUnpin(&rr.r.bitpin);
	return done;
}

/* ----------------------------------------------------------------
 * Entry points (spmsegscan.h)
 * ----------------------------------------------------------------
 */

/* the policy's inputs for the segment and the query */
static void
policy_init(SpmPolicy *p, SpmSegment *seg, const SpmSegQuery *sq,
			const SegTerms *st, bool all_rows)
{
	memset(p, 0, sizeof(SpmPolicy));
	p->algorithm = sq->algorithm;
	p->all_rows = all_rows;
	p->ranges_data = !sq->negative &&
		(seg->hdr.flags & SPM_SEG_RANGES) &&
		!(seg->hdr.flags & SPM_META_NEGATIVE);
	p->nterms = st->n;
	p->ndocs = seg->hdr.ndocs;
	p->postings = st->postings;
	p->nranges = seg->hdr.nranges;
	p->backoff = &seg->backoff;
}

/* what the segment ran, for sparse_maxscore_last_scan_segments() */
static void
log_segment(const SpmSegQuery *sq, int segno, SpmPass pass, int run,
			const SpmPolicy *p, int64 decoded)
{
	SpmSegLog  *log = sq->log;
	SpmSegRun  *r;

	sq->counters->postings_estimated += (int64) p->estimate;
	if (log == NULL)
		return;
	if (log->n >= SPM_SEGLOG_MAX)
	{
		log->dropped++;
		return;
	}
	r = &log->rows[log->n++];
	r->round = (int32) sq->counters->rounds;
	r->segment = segno;
	r->pass = pass;
	r->run = run;
	r->postings = (int64) p->postings;
	r->estimate = (int64) p->estimate;
	r->decoded = decoded;
}

void
spm_segscan_topk(Relation index, SpmSegment *seg, int segno,
				 const SpmSegmentRef *ref,
				 uint64 docid_limit, const SpmSegQuery *sq, SpmPhase phase,
				 const SpmAfter *after, SpmTopK *topk)
{
	SegTerms	st;
	SpmPolicy	p;
	SpmRangeTerm *rterms = NULL;
	SpmTraverse t;
	SpmReader	r;
	int64		decoded;
	bool		gave_up = false;

	Assert(phase != SPM_PHASE_NEGATIVE);
	seg_terms(index, seg, sq->query, &st);
	policy_init(&p, seg, sq, &st, false);
	/* range pruning offers positive rows only */
	if (phase == SPM_PHASE_ANY)
		p.ranges_data = false;
	if (p.ranges_data)
	{
		rterms = range_terms(sq, seg, &st);
		p.ranges_usable = rterms != NULL;
	}
	decoded = sq->counters->postings_decoded;
	if (spm_policy_choose(&p) == SPM_RUN_RANGES)
	{
		bool		done = run_ranges(index, seg, ref, docid_limit, sq, &st,
									  rterms, p.fallback_cost, after, topk);

		spm_policy_ranges_done(&p, done);
		if (done)
		{
			sq->counters->seg_ranges++;
			log_segment(sq, segno, SPM_PASS_TOPK, SPM_RUN_RANGES, &p,
						sq->counters->postings_decoded - decoded);
			return;
		}
		sq->counters->seg_ranges_gave_up++;
		p.run = SPM_RUN_MAXSCORE;
		p.cell = NULL;			/* not a measure of MaxScore alone */
		gave_up = true;
	}

	setup_traverse(index, seg, ref, docid_limit, sq, &st, phase, &t, &r);
	t.exhaustive = p.run == SPM_RUN_EXHAUSTIVE;
	if (t.exhaustive)
		sq->counters->seg_exhaustive++;
	else
		sq->counters->seg_maxscore++;
	t.after = *after;
	t.topk = topk;
	spm_traverse_begin(&t);
	spm_traverse_topk(&t);
	spm_traverse_end(&t);
	reader_release(&r);
	decoded = sq->counters->postings_decoded - decoded;
	if (!t.exhaustive)
		spm_policy_maxscore_done(&p, (double) decoded);
	log_segment(sq, segno, SPM_PASS_TOPK,
				gave_up ? SPM_SEGRUN_GAVE_UP : (int) p.run, &p, decoded);
}

double
spm_segscan_gap(Relation index, SpmSegment *seg, const SpmSegQuery *sq)
{
	const SparseVector *q = sq->query;
	const float *qv = SPV_VALUES(q);
	double		gap = 0.0;

	if (!(seg->hdr.flags & SPM_SEG_QUANT))
		return 0.0;
	/*
	 * format 6: every cell of a term is 2^e_t, in the dictionary entry.
	 * The sum of |q| 2^e_t is the most a bound can exceed its exact score;
	 * what a round needs is how far the L best exact scores fall below the
	 * L-th bound, about half of it: each matched weight is below its upper
	 * end by about half a cell on average, and a document matches only
	 * some of the query's terms.  Half the sum (SPM_FWDQ_GAP_SHARE): a
	 * query that needs more takes a second round, never loses a row
	 * (doc/decisions.md "The elastic gap of format 6 segments").
	 */
	if (seg->hdr.flags & SPM_SEG_FWDQ)
	{
		for (int i = 0; i < q->nnz; i++)
		{
			const SpmTermData *d = SpmGetTermBrief(index, seg, (uint32) q->indices[i]);

			if (d != NULL)
				gap += fabs((double) qv[i]) * ldexp(1.0, spm_dict_qexp(&d->entry));
		}
		return gap * SPM_FWDQ_GAP_SHARE;
	}
	for (int i = 0; i < q->nnz; i++)
	{
		const SpmTermData *d = SpmGetTerm(index, seg, (uint32) q->indices[i]);

		/*
		 * a cell as a build writes it is about 1/127 of its block's
		 * spread (spmblock.h); a merge's blocks can have wider ones (an
		 * exponent inherited from an input, quantized blocks of 1-2
		 * postings), and so can a block whose weights differ by less
		 * than 127 steps of float4's precision: then the gap is too
		 * small, and the query takes a second round, never loses a row
		 * (the round is an exact prefix)
		 */
		if (d != NULL)
			gap += fabs((double) qv[i]) * d->sum->spread / 127.0;
	}
	return gap;
}

void
spm_segscan_rows(Relation index, SpmSegment *seg, int segno,
				 const SpmSegmentRef *ref,
				 uint64 docid_limit, const SpmSegQuery *sq, SpmPhase phase,
				 const SpmAfter *after, SpmRowCallback cb, void *arg)
{
	SegTerms	st;
	SpmPolicy	p;
	SpmTraverse t;
	SpmReader	r;
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	SpmTopK		dummy;
	SpmHit		one;
	int64		decoded = sq->counters->postings_decoded;

	seg_terms(index, seg, sq->query, &st);
	policy_init(&p, seg, sq, &st, true);
	if (spm_policy_choose(&p) != SPM_RUN_EXHAUSTIVE)
		elog(ERROR, "sparse_maxscore: a pass over every row must be exhaustive");
	sq->counters->seg_exhaustive++;

	setup_traverse(index, seg, ref, docid_limit, sq, &st, phase, &t, &r);
	spm_topk_init(&dummy, 1, &one);
	t.exhaustive = true;
	t.topk = &dummy;
	spm_traverse_begin(&t);
	for (uint64 a = 0; a < t.ndocs; a += SPM_WINDOW)
	{
		uint32		b = (uint32) Min(a + SPM_WINDOW, t.ndocs);
		const double *acc;

		/* without a query term every row scores 0 */
		if (t.nterms == 0 && phase != SPM_PHASE_ANY)
			break;
		acc = spm_window_scores(&t, (uint32) a, b);
		for (uint32 d = (uint32) a; d < b; d++)
		{
			double		s = acc[d - a];
			uint64		docid = t.docid_lo + d;
			ItemPointerData tid;

			if (!spm_phase_admits(phase, s))
				continue;
			sq->counters->candidates++;
			if (!spm_is_after(after, s, docid))
				continue;
			if (t.is_alive && !t.is_alive(t.arg, d))
				continue;
			SpmGetTid(index, seg, d, &tid, &pin);
			cb(arg, s, docid, &tid);
		}
		CHECK_FOR_INTERRUPTS();
	}
	spm_traverse_end(&t);
	reader_release(&r);
	SpmUnpin(&pin);
	log_segment(sq, segno,
				phase == SPM_PHASE_NEGATIVE ? SPM_PASS_NEGATIVE : SPM_PASS_SORTED,
				SPM_RUN_EXHAUSTIVE, &p,
				sq->counters->postings_decoded - decoded);
}

struct SpmSegScores
{
	SpmTraverse t;
	SpmReader	r;
	SpmPolicy	p;
	const SpmSegQuery *sq;
	int			segno;
	int64		decoded;		/* the scan's postings_decoded at the start */
};

SpmSegScores *
spm_segscores_begin(Relation index, SpmSegment *seg, int segno,
					const SpmSegmentRef *ref, uint64 docid_limit,
					const SpmSegQuery *sq)
{
	SpmSegScores *ss = palloc(sizeof(SpmSegScores));
	SegTerms	st;
	SpmPolicy	p;

	seg_terms(index, seg, sq->query, &st);
	policy_init(&p, seg, sq, &st, true);
	if (spm_policy_choose(&p) != SPM_RUN_EXHAUSTIVE)
		elog(ERROR, "sparse_maxscore: a pass over every row must be exhaustive");
	sq->counters->seg_exhaustive++;
	ss->p = p;
	ss->sq = sq;
	ss->segno = segno;
	ss->decoded = sq->counters->postings_decoded;
	setup_traverse(index, seg, ref, docid_limit, sq, &st, SPM_PHASE_POSITIVE,
				   &ss->t, &ss->r);
	ss->t.exhaustive = true;
	spm_traverse_begin(&ss->t);
	return ss;
}

const double *
spm_segscores_window(SpmSegScores *ss, uint32 a, uint32 b)
{
	if (ss->t.nterms == 0)
		return NULL;
	return spm_window_scores(&ss->t, a, b);
}

void
spm_segscores_end(SpmSegScores *ss)
{
	spm_traverse_end(&ss->t);
	reader_release(&ss->r);
	log_segment(ss->sq, ss->segno, SPM_PASS_ZERO, SPM_RUN_EXHAUSTIVE, &ss->p,
				ss->sq->counters->postings_decoded - ss->decoded);
	pfree(ss);
}

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
 *				sparse_maxscore.initial_k; a round whose heap was never full
 *				(spm_topk_full: nothing was dropped) means the positive rows
 *				are exhausted.  The first round of an inner product scan
 *				under a LIMIT over quantized segments is elastic (run_round):
 *				a prefix of that order of a size the gap decides.  For an
 *				L2 index, rows of every sign (all but NULL ones), and the
 *				scan goes on with NULLS: no ZERO or NEGATIVE phase.
 *	SORTED		when k would outgrow work_mem: every remaining row of the
 *				rounds' sign into a tuplesort (spills to disk), streamed.
 *	ZERO		rows scoring exactly 0, in docid order, in growing batches.
 *	NEGATIVE	rows scoring below 0 into a tuplesort, streamed (skipped
 *				when no query weight and no indexed weight is negative).
 *	NULLS		NULL rows in docid order.
 *	ALL			for a NULL query: every row in docid order (every distance
 *				is NULL, so any order is correct).
 *
 * An index of sparsevec_cosine_ops scores each document's weights divided
 * by its norm, and reports for a score s the distance cosine_distance(s),
 * a lower bound of the operator's <=>, with xs_recheckorderby set: the
 * executor computes the exact distance and reorders (README "Cosine and
 * L2").  An index of sparsevec_l2_ops holds a norm posting -|d|^2 / 2 per
 * document, which the scan adds to the query with weight 1: a score s is
 * then q.d - |d|^2 / 2, and the scan reports l2_distance(s), a lower bound
 * of the operator's <->, with xs_recheckorderby set.  Most L2 scores are
 * negative, and a row that shares no term with the query still has a
 * rank, so an L2 index's rounds rank rows of every sign at once: one pass
 * for a LIMIT where positive, zero and negative phases took three
 * (src/README "Cosine and L2").  The phases work on the scores unchanged.
 *
 * Every round, pass and batch runs inside one amgettuple call, holding
 * SPM_SCAN_LOCK in share mode, from one copy of the metapage; all TIDs it
 * will return are resolved before the lock is released (README "Rounds").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
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
#include "spmsegment.h"
#include "spmsegscan.h"

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
	SpmSegQuery sq;				/* the query, as the segments see it */
	int			k;				/* size of the next round */
	int			kmax;			/* largest round that fits work_mem */
	int			limit_hint;		/* LIMIT above the scan, 0 if unknown */
	bool		hint_taken;		/* limit_hint looked up (once per scan) */
	SpmAfter	after;			/* last row returned by the rounds */
	bool		recheck;		/* some segment has quantized weights, or
								 * the index serves <=>: the executor
								 * rescores (README "Quantized weights") */
	SpmKind		kind;			/* the distance the index serves */
	double		qnorm;			/* COSINE: the query's norm, as <=> has it */
	double		l2_qq;			/* L2: a lower bound of |q|^2 */
	double		l2_slack;		/* L2: what a distance bound is lowered by */
	double		l2_shrink;		/* L2: and the factor it is shrunk by */
	bool		zero_decided;	/* COSINE: zero_is_one was set (ZERO phase) */
	bool		zero_is_one;	/* COSINE: no weight is negative, so a row
								 * of score 0 shares no term with the query:
								 * its <=> is exactly 1 (or NaN) */
	SpmPhase	phase;			/* the rows the rounds and SORTED rank:
								 * POSITIVE, or ANY for L2 */
	/*
	 * A flush or a merge between two rounds can raise the bound of a row
	 * this scan has not returned yet above the cursor (quantized weights
	 * only go up: README "Structure changes during a scan").  The rounds
	 * remember what they returned, and restart from the top without it
	 * once the structure changed.
	 */
	uint32		seen_segment_id;	/* meta's next_segment_id at the last
									 * round or pass, 0 before the first */
	uint64	   *returned;		/* docids the rounds returned (queryCtx) */
	int			nreturned;
	int			returned_cap;
	bool		returned_sorted;
	bool		filter;			/* skip returned docids (after a change) */
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
	SpmSegLog  *seglog;			/* in scanCtx, from the first rescan */
} SpmScanOpaqueData;

typedef SpmScanOpaqueData *SpmScanOpaque;

/* rows a first round takes past a LIMIT when the executor rescores, at least */
#define SPM_RECHECK_EXTRA	5

/* an elastic first round holds up to max(4 LIMIT, LIMIT + this) rows */
#define SPM_ELASTIC_EXTRA	64

/* rows an L2 index's first round takes, at least (run_round) */
#define SPM_L2_MIN_K		16

/*
 * COSINE: what a score's similarity bound is raised by, 2^-20: more than
 * the worst difference between score / |q| and the operator's similarity
 * (README "Cosine and L2" has the proof: at most 2^-21).
 */
#define SPM_COSINE_MARGIN	(1.0 / 1048576.0)

/* L2: 2^-22, the relative margin of a distance bound (README "Cosine and L2") */
#define SPM_L2_SHRINK		(1.0 - 1.0 / 4194304.0)

/*
 * the most recent scan of this backend, for sparse_maxscore_last_scan()
 * and sparse_maxscore_last_scan_segments()
 */
SpmCounters spm_last_scan;
SpmSegLog	spm_last_seglog;
bool		spm_last_scan_valid = false;

/*
 * L2: the distance reported for a score s, a lower bound of the operator's
 * <-> for every row of score s, non-decreasing as s decreases (every step
 * is a correctly rounded operation that is monotone in its argument, then
 * max with 0).  With Q the query's squared norm as summed in double (n
 * terms), G = (n + 8) 2^-50 and g = sqrt(G), start_scan sets l2_qq =
 * fl(Q (1 - G)), l2_slack = 2 g |q|c (1 + G) + 2^-70 and l2_shrink =
 * 1 - g; the bound is
 *     (sqrt(l2_qq - 2 s) (1 - 2^-22) - l2_slack) (1 - g)
 * README "Cosine and L2" has the proof.
 */
static double
l2_distance(SpmScanOpaque so, double s)
{
	double		b = so->l2_qq - 2.0 * s;
	double		r;

	if (!(b > 0.0))
		return 0.0;
	r = sqrt(b) * SPM_L2_SHRINK - so->l2_slack;
	if (!(r > 0.0))
		return 0.0;
	return r * so->l2_shrink;
}

/*
 * The distance reported for a row of score s (not NaN): -s for <#>; for
 * <=>, 1 - min(1, s / |q| + margin), a lower bound of the operator's
 * distance, non-increasing in s (every step rounds monotonically), and NaN
 * for an empty query, as the operator gives (README "Cosine and L2").
 */
static double
row_distance(SpmScanOpaque so, double s)
{
	double		y;

	if (so->kind == SPM_KIND_IP)
		return -s;
	if (so->kind == SPM_KIND_L2)
		return l2_distance(so, s);
	if (so->qnorm == 0.0)
		return get_float8_nan();
	if (s == 0.0 && so->zero_is_one)
		return 1.0;
	y = s / so->qnorm + SPM_COSINE_MARGIN;
	if (y > 1.0)
		y = 1.0;
	else if (y < -1.0)
		y = -1.0;
	return 1.0 - y;
}

/* ----------------------------------------------------------------
 * Structure changes during a scan
 * ----------------------------------------------------------------
 */
static int
cmp_docid(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/* whether the rounds returned docid already (so->filter only) */
static bool
was_returned(SpmScanOpaque so, uint64 docid)
{
	if (!so->returned_sorted)
	{
		qsort(so->returned, so->nreturned, sizeof(uint64), cmp_docid);
		so->returned_sorted = true;
	}
	return bsearch(&docid, so->returned, so->nreturned, sizeof(uint64),
				   cmp_docid) != NULL;
}

static void
remember_returned(SpmScanOpaque so, const SpmHit *hits, int n)
{
	if (so->nreturned + n > so->returned_cap)
	{
		int			cap = Max(so->nreturned + n, 2 * so->returned_cap);

		so->returned = so->returned ?
			repalloc_huge(so->returned, (Size) cap * sizeof(uint64)) :
			MemoryContextAllocHuge(so->queryCtx, (Size) cap * sizeof(uint64));
		so->returned_cap = cap;
	}
	for (int i = 0; i < n; i++)
		so->returned[so->nreturned++] = hits[i].docid;
	if (n > 0)
		so->returned_sorted = false;
}

/*
 * Did a flush or a merge change the structure since the last round or
 * pass?  Remembers the version seen.
 */
static bool
structure_changed(SpmScanOpaque so, const SpmMetaPageData *meta)
{
	bool		changed = so->seen_segment_id != 0 &&
		so->seen_segment_id != meta->next_segment_id;

	so->seen_segment_id = meta->next_segment_id;
	return changed;
}

/*
 * The docid-order and negative phases cannot tell which rows they have
 * returned once bounds have moved: where bounds can move (quantized
 * segments), a change there is an error the query can retry, never a
 * wrong answer.
 */
static void
refuse_change(IndexScanDesc scan, const SpmMetaPageData *meta)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;

	if (structure_changed(so, meta) && so->recheck)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("sparse_maxscore index \"%s\" was flushed or merged during this scan",
						RelationGetRelationName(scan->indexRelation)),
				 errdetail("The scan had passed its rows of positive score, and a change of the index's structure can move the bounds of rows it has not returned yet."),
				 errhint("Run the query again.")));
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
	/* the segments were written for the index's operator class */
	if (meta->nsegments > 0 &&
		(((meta->flags & SPM_META_COSINE) != 0) != (so->kind == SPM_KIND_COSINE) ||
		 ((meta->flags & SPM_META_L2) != 0) != (so->kind == SPM_KIND_L2)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("sparse_maxscore index \"%s\" was written for another operator class than it has",
						RelationGetRelationName(scan->indexRelation)),
				 errhint("REINDEX the index.")));
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
	{
		segs[i] = SpmGetSegment(scan->indexRelation, meta, (int) i);
		if (segs[i]->hdr.flags & SPM_SEG_QUANT)
			((SpmScanOpaque) scan->opaque)->recheck = true;
	}
	return segs;
}

/*
 * One round: the exact top-k rows of the rounds' phase (positive ones, or
 * every non-NULL one for L2) after the cursor; an elastic round, the
 * exact first rows of that order down to where spmtopk.h's elastic heap
 * settles (at most k).
 */
static void
run_round(IndexScanDesc scan)
{
	SpmScanOpaque so = (SpmScanOpaque) scan->opaque;
	SpmMetaPageData meta;
	MemoryContext old = begin_round(scan, &meta);
	SpmSegment **segs = get_segments(scan, &meta);
	SpmTopK		topk;
	int			k;
	int			want = 0;

	/*
	 * With quantized segments the executor rescores the rows in the order
	 * of their bounds and needs rows past the LIMIT before it can return
	 * the last one.  The first round of an inner product scan is elastic
	 * (spmtopk.h): every row whose bound is within the gap below the
	 * LIMIT-th bound, where the rows the executor returns can be, and the
	 * next one, which lets it return them.  Other first rounds take
	 * max(LIMIT / 2, 5) more; later rounds double that.  So one round
	 * usually serves the whole query (README "Quantized weights").
	 */
	if (so->recheck && so->counters.rounds == 0 && so->limit_hint > 0)
	{
		if (so->kind == SPM_KIND_IP && so->phase == SPM_PHASE_POSITIVE &&
			!so->filter)
			want = so->k;
		so->k = Min(so->kmax, so->k + Max(so->k / 2, SPM_RECHECK_EXTRA));
	}

	/*
	 * An L2 round scores every row whatever its k (it prunes only above 0),
	 * so a second round costs a whole pass and a larger first one almost
	 * nothing: at least SPM_L2_MIN_K rows
	 */
	if (so->phase == SPM_PHASE_ANY && so->counters.rounds == 0)
		so->k = Min(so->kmax, Max(so->k, SPM_L2_MIN_K));
	k = so->k;

	/*
	 * After a flush or a merge, rows not returned yet may have bounds above
	 * the cursor: start again from the top, with room for the rows
	 * returned so far, and leave those out from now on.
	 */
	if (structure_changed(so, &meta) && so->nreturned > 0)
	{
		so->after.active = false;
		so->filter = true;
	}
	if (so->filter && !so->after.active)
		k += so->nreturned;
	so->counters.rounds++;
	if (want > 0 && Min(so->kmax, Max(4 * want, want + SPM_ELASTIC_EXTRA)) > want)
	{
		double		gap = 0.0;

		for (uint32 i = 0; i < meta.nsegments; i++)
			gap = Max(gap, spm_segscan_gap(scan->indexRelation, segs[i], &so->sq));
		k = Min(so->kmax, Max(4 * want, want + SPM_ELASTIC_EXTRA));
		spm_topk_init_elastic(&topk, k, palloc(k * sizeof(SpmHit)), want, gap,
							  palloc(want * sizeof(double)));
	}
	else
		spm_topk_init(&topk, k, palloc(k * sizeof(SpmHit)));

	so->counters.pending_scored +=
		spm_pending_topk(scan->indexRelation, &meta, so->query, so->kind,
						 so->phase, &so->after, &topk);

	for (uint32 i = 0; i < meta.nsegments; i++)
		spm_segscan_topk(scan->indexRelation, segs[i], (int) i,
						 &meta.segments[i], meta.pending_docid_lo, &so->sq,
						 so->phase, &so->after, &topk);

	spm_topk_sort(&topk);
	if (topk.n > 0)
	{
		so->after.active = true;
		so->after.score = topk.heap[topk.n - 1].score;
		so->after.docid = topk.heap[topk.n - 1].docid;
	}
	so->hits = topk.heap;
	so->nhits = topk.n;
	if (so->filter)
	{
		int			n = 0;

		for (int i = 0; i < topk.n; i++)
		{
			if (!was_returned(so, topk.heap[i].docid))
				so->hits[n++] = topk.heap[i];
		}
		so->nhits = n;
	}
	resolve_tids(scan, &meta, segs, so->hits, so->nhits);
	remember_returned(so, so->hits, so->nhits);
	end_round(scan, old);

	if (!spm_topk_full(&topk) && so->phase == SPM_PHASE_ANY)
		so->state = SPM_SCAN_NULLS; /* no row but NULL ones is left */
	else if (!spm_topk_full(&topk))
	{
		so->state = SPM_SCAN_ZERO;	/* no positive row is left */

		/*
		 * Under a known LIMIT, the first batch of zero rows is about what
		 * the LIMIT still needs (at least 16): a query whose terms few or
		 * no documents have would otherwise find, and resolve the TIDs
		 * of, 256 rows to return a handful (issue 38: 536 us for a query
		 * of zero postings, most of it in SpmGetTid).  Later batches
		 * double as before.
		 */
		if (so->limit_hint > 0)
			so->batch = (int) Max(16, Min(256, (int64) so->limit_hint -
										  so->counters.rows_returned -
										  so->nhits));
	}
	else if (want > 0)
		so->k = Min(so->kmax, so->k * 2);	/* after an elastic round */
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

	if (spm_phase_admits(ps->phase, score))
	{
		if (spm_is_after(&ps->so->after, score, docid) &&
			!(ps->so->filter && was_returned(ps->so, docid)))
			sort_put(ps->so, score, docid, tid);
	}
}

/* the segments check sign and cursor themselves (spm_segscan_rows) */
static void
segment_sort_cb(void *arg, double score, uint64 docid, ItemPointer tid)
{
	SpmScanOpaque so = (SpmScanOpaque) arg;

	if (!(so->filter && was_returned(so, docid)))
		sort_put(so, score, docid, tid);
}

/*
 * Every row the phase admits (after the cursor, for the rounds' phase)
 * into a tuplesort ordered like the results, then start streaming it.
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
	if (phase == SPM_PHASE_NEGATIVE)
		refuse_change(scan, &meta);
	else if (structure_changed(so, &meta) && so->nreturned > 0)
	{
		/* as in run_round: from the top, without the rows returned */
		so->after.active = false;
		so->filter = true;
	}

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
	so->counters.pending_scored +=
		spm_pending_scan(scan->indexRelation, &meta, so->query, so->kind,
						 meta.pending_docid_lo, pending_sort_cb, &ps);

	for (uint32 i = 0; i < meta.nsegments; i++)
		spm_segscan_rows(scan->indexRelation, segs[i], (int) i,
						 &meta.segments[i],
						 meta.pending_docid_lo, &so->sq, phase, &so->after,
						 segment_sort_cb, so);

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
	scan->xs_orderbyvals[0] = Float8GetDatum(row_distance(so, -DatumGetFloat8(d)));
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
 * >= so->pos, window by window, the last window cut where the batch is full.
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
	if (so->state == SPM_SCAN_ZERO)
		refuse_change(scan, &meta);

	/*
	 * COSINE: when neither the query nor any indexed weight is negative,
	 * every product is positive, so a row scores 0 only if it shares no
	 * term with the query: its distance is exactly 1 (NaN if empty), and
	 * reporting 1 lets the executor return it at once instead of holding
	 * every such row until the scan ends.  Decided once, at the first
	 * batch: a negative weight indexed later belongs to a row this scan
	 * cannot see (README "Cosine and L2").
	 */
	if (so->state == SPM_SCAN_ZERO && !so->zero_decided)
	{
		so->zero_is_one = so->kind == SPM_KIND_COSINE && !so->sq.negative &&
			!(meta.flags & SPM_META_NEGATIVE);
		so->zero_decided = true;
	}
	ss.cap = Max(so->batch, 16);
	ss.hits = palloc(ss.cap * sizeof(SpmHit));
	ss.n = 0;
	ss.what = so->state;

	for (uint32 i = 0; i < meta.nsegments && done; i++)
	{
		SpmSegmentRef *ref = &meta.segments[i];
		SpmSegment *seg = segs[i];
		SpmSegScores *scores = NULL;
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
			scores = spm_segscores_begin(scan->indexRelation, seg, (int) i, ref,
										 meta.pending_docid_lo, &so->sq);
		}

		while (local < ndocs)
		{
			uint32		b = Min(ndocs, local - local % SPM_WINDOW + SPM_WINDOW);
			const double *acc = NULL;

			if (so->state == SPM_SCAN_ZERO)
				acc = spm_segscores_window(scores, local, b);
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

				/* the batch may end inside a window */
				if (ss.n >= so->batch)
				{
					b = d + 1;
					break;
				}
			}
			local = b;
			so->pos = ref->docid_lo + b;
			CHECK_FOR_INTERRUPTS();
			if (ss.n >= so->batch)
				break;
		}
		if (so->state == SPM_SCAN_ZERO)
		{
			spm_segscores_end(scores);
		}
		SpmUnpin(&pin);
		if (local < ndocs)
			done = false;
	}

	if (done && so->pos < meta.next_docid)
	{
		/* the pending list, docids >= pending_docid_lo */
		so->counters.pending_scored +=
			spm_pending_scan(scan->indexRelation, &meta, so->query, so->kind,
							 Max(so->pos, meta.pending_docid_lo),
							 pending_stream_cb, &ss);
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
	{
		spm_last_scan = so->counters;
		spm_last_seglog.n = so->seglog->n;
		spm_last_seglog.dropped = so->seglog->dropped;
		memcpy(spm_last_seglog.rows, so->seglog->rows,
			   so->seglog->n * sizeof(SpmSegRun));
		spm_last_scan_valid = true;
	}
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
	/* the index's distance, and the operator it is asked for is its own */
	so->kind = spm_index_kind(scan->indexRelation);
	if (scan->orderByData[0].sk_func.fn_oid != index_getprocid(scan->indexRelation, 1, 1))
		elog(ERROR, "sparse_maxscore index \"%s\" cannot order by the operator of another operator class",
			 RelationGetRelationName(scan->indexRelation));
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
	if (so->seglog == NULL)
		so->seglog = MemoryContextAlloc(so->scanCtx, sizeof(SpmSegLog));
	so->seglog->n = 0;
	so->seglog->dropped = 0;

	key = &scan->orderByData[0];
	if (key->sk_flags & SK_ISNULL)
	{
		so->query = NULL;
		so->state = SPM_SCAN_ALL;
		so->sq.query = NULL;
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
		so->sq.negative = negative;
		so->sq.l2 = false;
		so->state = SPM_SCAN_ROUNDS;
		so->qnorm = 0.0;
		for (int i = 0; i < q->nnz; i++)
			so->qnorm = spv_norm_add(so->qnorm, qv[i]);
		so->qnorm = sqrt(so->qnorm);
		so->sq.query = so->query;
		if (so->kind == SPM_KIND_L2)
		{
			/*
			 * the segments score the query and, with weight 1, the norm
			 * posting on the term past the query's dimensions (which the
			 * index's are: begin_round checks); the pending list adds
			 * that product itself
			 */
			double		qq = 0.0;
			double		G = (double) (q->nnz + 8) / 1125899906842624.0;	/* 2^-50 */
			double		g = sqrt(G);
			SparseVector *q2;

			for (int i = 0; i < q->nnz; i++)
				qq = spv_norm_add(qq, qv[i]);
			so->l2_qq = qq * (1.0 - G);
			so->l2_slack = 2.0 * g * so->qnorm * (1.0 + G) + 1.0 / 1180591620717411303424.0;	/* 2^-70 */
			so->l2_shrink = 1.0 - g;

			old = MemoryContextSwitchTo(so->queryCtx);
			q2 = spv_new(q->dim + 1, q->nnz + 1);
			MemoryContextSwitchTo(old);
			memcpy(q2->indices, q->indices, q->nnz * sizeof(int32));
			memcpy(SPV_VALUES(q2), qv, q->nnz * sizeof(float));
			q2->indices[q->nnz] = (int32) spm_l2_term(q->dim);
			SPV_VALUES(q2)[q->nnz] = 1.0f;
			so->sq.query = q2;
			so->sq.l2 = true;
		}
	}
	so->sq.algorithm = spm_algorithm;
	so->sq.counters = &so->counters;
	so->sq.log = so->seglog;
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
	so->seen_segment_id = 0;
	so->returned = NULL;		/* in queryCtx, reset with the query */
	so->nreturned = so->returned_cap = 0;
	so->returned_sorted = true;
	so->filter = false;
	so->recheck = so->kind == SPM_KIND_COSINE || so->kind == SPM_KIND_L2;
	so->zero_decided = false;
	so->zero_is_one = false;
	so->phase = so->kind == SPM_KIND_L2 ? SPM_PHASE_ANY : SPM_PHASE_POSITIVE;
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
			scan->xs_orderbynulls[0] = isnan(h->score) || so->query == NULL;
			scan->xs_orderbyvals[0] = scan->xs_orderbynulls[0] ? Float8GetDatum(0) :
				Float8GetDatum(row_distance(so, h->score));
			scan->xs_recheckorderby = so->recheck && !scan->xs_orderbynulls[0];
			so->counters.rows_returned++;
			return true;
		}
		if (so->sort)
		{
			if (sort_next(scan))
			{
				scan->xs_recheck = false;
				scan->xs_recheckorderby = so->recheck;
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
				sort_pass(scan, so->phase);
				so->state = so->phase == SPM_PHASE_ANY ? SPM_SCAN_NULLS :
					SPM_SCAN_ZERO;
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
					if (so->sq.negative || (meta.flags & SPM_META_NEGATIVE))
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

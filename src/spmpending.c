/*-------------------------------------------------------------------------
 *
 * spmpending.c
 *	  Reading the pending list: whole documents not yet in a segment.
 *
 * Scans score pending documents by brute force, with the same additions
 * spv_dot makes (ascending index order, double, from +0.0), so a pending
 * document scores bit for bit what it will score once flushed.  A reader
 * only considers documents with pending_docid_lo <= docid < next_docid of
 * its copy of the metapage: those are complete and linked (README
 * "Pending list"), and later ones belong to newer snapshots.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "utils/rel.h"

#include "spm.h"

typedef void (*PendingEmit) (void *arg, double score, uint64 docid,
							 ItemPointer tid);

static void pending_corrupt(Relation index, BlockNumber blkno) pg_attribute_noreturn();

static void
pending_corrupt(Relation index, BlockNumber blkno)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" has a corrupted pending-list page at block %u",
					RelationGetRelationName(index), blkno),
			 errhint("REINDEX the index.")));
}

/*
 * Call emit for every live pending document with from_docid <= docid <
 * meta->next_docid, in docid order, with its score against query (NaN for
 * a NULL row; 0 for every row when query is NULL).
 */
static void
pending_walk(Relation index, const SpmMetaPageData *meta,
			 const SparseVector *query, uint64 from_docid,
			 PendingEmit emit, void *arg)
{
	BlockNumber blkno = meta->pending_head;
	const float *qv = query ? SPV_VALUES(query) : NULL;
	const int32 *qi = query ? query->indices : NULL;
	int			qn = query ? query->nnz : 0;
	bool		indoc = false;
	bool		wanted = false;
	uint64		docid = 0;
	uint64		prev = 0;
	bool		any = false;
	ItemPointerData tid;
	uint16		flags = 0;
	int32		nnz = 0;
	int32		seen = 0;
	int			j = 0;
	double		sum = 0.0;
	bool		stop = false;

	if (meta->pending_ndocs == 0)
		return;

	while (blkno != InvalidBlockNumber && !stop)
	{
		Buffer		buf;
		Page		page;
		Size		off;
		Size		lower;
		BlockNumber next;

		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_PENDING, 0);
		off = MAXALIGN(SizeOfPageHeaderData);
		lower = ((PageHeader) page)->pd_lower;

		while (off < lower)
		{
			SpmPendingTuple t = (SpmPendingTuple) ((char *) page + off);
			Size		size;
			const int32 *idx;
			const float4 *val;

			if (off + sizeof(SpmPendingTupleData) > lower || t->nhere < 0 ||
				t->nhere > (int32) (BLCKSZ / sizeof(int32)))
				pending_corrupt(index, blkno);
			size = SpmPendingTupleSize(t->nhere);
			if (off + size > lower)
				pending_corrupt(index, blkno);

			if (!indoc)
			{
				if (any && t->docid <= prev)
					pending_corrupt(index, blkno);
				if (t->docid >= meta->next_docid)
				{
					stop = true;	/* newer than our metapage copy */
					break;
				}
				indoc = true;
				any = true;
				docid = prev = t->docid;
				tid = t->tid;
				flags = t->flags;
				nnz = t->nnz;
				seen = 0;
				j = 0;
				sum = 0.0;
				wanted = docid >= from_docid && docid >= meta->pending_docid_lo &&
					!(flags & SPM_PT_DELETED);
			}
			else if (t->docid != docid)
				pending_corrupt(index, blkno);

			if (wanted && query && !(flags & SPM_PT_NULL))
			{
				idx = SpmPendingIndices(t);
				val = SpmPendingValues(t);
				for (int i = 0; i < t->nhere; i++)
				{
					while (j < qn && qi[j] < idx[i])
						j++;
					if (j < qn && qi[j] == idx[i])
					{
						sum += (double) val[i] * (double) qv[j];
						j++;
					}
				}
			}
			seen += t->nhere;
			off += size;

			if (!(t->flags & SPM_PT_CONTINUED))
			{
				if (seen != nnz)
					pending_corrupt(index, blkno);
				indoc = false;
				if (wanted)
					emit(arg, (flags & SPM_PT_NULL) ? NAN : sum, docid, &tid);
			}
		}
		next = SpmPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		blkno = next;
		CHECK_FOR_INTERRUPTS();
	}
}

typedef struct TopkArg
{
	SpmPhase	phase;
	const SpmAfter *after;
	SpmTopK    *topk;
} TopkArg;

static void
topk_emit(void *arg, double score, uint64 docid, ItemPointer tid)
{
	TopkArg    *ta = arg;

	if (isnan(score))
		return;
	if (ta->phase == SPM_PHASE_POSITIVE ? !(score > 0) : !(score < 0))
		return;
	if (spm_topk_admits(ta->topk, score, docid) &&
		spm_is_after(ta->after, score, docid))
		spm_topk_push(ta->topk, score, docid, tid);
}

/*
 * Offer every pending document of the phase's sign, after the cursor, to
 * the heap (with its TID).
 */
void
spm_pending_topk(Relation index, const SpmMetaPageData *meta,
				 const SparseVector *query, SpmPhase phase,
				 const SpmAfter *after, SpmTopK *topk)
{
	TopkArg		ta;

	ta.phase = phase;
	ta.after = after;
	ta.topk = topk;
	pending_walk(index, meta, query, 0, topk_emit, &ta);
}

/*
 * Report every live pending document with docid >= from_docid to cb, in
 * docid order: score against query, NaN for a NULL row.
 */
void
spm_pending_scan(Relation index, const SpmMetaPageData *meta,
				 const SparseVector *query, uint64 from_docid,
				 SpmPendingCallback cb, void *arg)
{
	pending_walk(index, meta, query, from_docid, cb, arg);
}

/*
 * VACUUM: flag pending documents whose heap tuple is dead.  The caller
 * holds SPM_FLUSH_LOCK, so no flush moves documents out of the list while
 * we walk it (README "VACUUM").  Each page is changed in one record with
 * the metapage's count of dead pending documents.
 */
void
spm_pending_bulkdelete(Relation index, IndexBulkDeleteResult *stats,
					   IndexBulkDeleteCallback callback, void *callback_state)
{
	SpmMetaPageData meta;
	BlockNumber blkno;
	bool		incont = false; /* the next chunk continues a document */
	uint16	   *offs = palloc(BLCKSZ / sizeof(SpmPendingTupleData) * sizeof(uint16));

	SpmReadMeta(index, &meta);
	blkno = meta.pending_head;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		Size		off;
		Size		lower;
		int			n = 0;
		BlockNumber next;

		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_PENDING, 0);
		off = MAXALIGN(SizeOfPageHeaderData);
		lower = ((PageHeader) page)->pd_lower;
		while (off < lower)
		{
			SpmPendingTuple t = (SpmPendingTuple) ((char *) page + off);

			if (off + sizeof(SpmPendingTupleData) > lower || t->nhere < 0 ||
				off + SpmPendingTupleSize(t->nhere) > lower)
				pending_corrupt(index, blkno);
			if (!incont && !(t->flags & SPM_PT_DELETED) &&
				callback(&t->tid, callback_state))
				offs[n++] = (uint16) off;
			incont = (t->flags & SPM_PT_CONTINUED) != 0;
			off += SpmPendingTupleSize(t->nhere);
		}
		next = SpmPageGetOpaque(page)->next;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);

		if (n > 0)
		{
			Buffer		metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
			GenericXLogState *state;
			Page		mpage;

			LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			state = GenericXLogStart(index);
			mpage = GenericXLogRegisterBuffer(state, metabuf, 0);
			page = GenericXLogRegisterBuffer(state, buf, 0);
			for (int i = 0; i < n; i++)
			{
				SpmPendingTuple t = (SpmPendingTuple) ((char *) page + offs[i]);

				t->flags |= SPM_PT_DELETED;
			}
			SpmPageGetMeta(mpage)->pending_ndead += n;
			GenericXLogFinish(state);
			UnlockReleaseBuffer(metabuf);
			stats->tuples_removed += n;
		}
		UnlockReleaseBuffer(buf);
		blkno = next;
		vacuum_delay_point();
	}
	pfree(offs);
}

/*-------------------------------------------------------------------------
 *
 * spmvacuum.c
 *	  VACUUM: ambulkdelete clears the alive bits of dead rows and flags dead
 *	  pending documents; amvacuumcleanup flushes, compacts (spmmerge.c),
 *	  reclaims unreachable pages, shrinks the file and reports statistics.
 *
 * ambulkdelete walks every segment's docmap and asks the callback about
 * each TID whose alive bit is still set.  Bits only ever go from 1 to 0,
 * and each bitset page is changed in one GenericXLog record together with
 * the metapage's count of dead documents of the segment, so a scan that
 * sees ndead == 0 may skip the bitset (README "Alive bits").  It can be
 * called several times per VACUUM and is idempotent.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmsegment.h"
#include "spmwrite.h"

/* a segment with more dead documents than this fraction is rewritten */
#define SPM_DEAD_FRACTION	0.2

/* ----------------------------------------------------------------
 * ambulkdelete
 * ----------------------------------------------------------------
 */

/*
 * Clear the given bits of alive page pageno of segment seg, and add their
 * number to the segment's ndead in the metapage, in one WAL record.
 * Returns the number of bits that were set.
 */
static uint32
clear_alive_bits(Relation index, SpmSegment *seg, uint32 pageno,
				 const uint32 *bits, int nbits)
{
	Buffer		metabuf;
	Buffer		buf;
	GenericXLogState *state;
	Page		metapage;
	Page		page;
	SpmMetaPage meta;
	uint8	   *map;
	uint32		cleared = 0;
	int			s;

	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	buf = ReadBuffer(index, seg->alive[pageno]);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);

	state = GenericXLogStart(index);
	metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	SpmCheckPage(index, metapage, SPM_METAPAGE_BLKNO, SPM_PAGE_META, 0);
	SpmCheckPage(index, page, seg->alive[pageno], SPM_PAGE_ALIVE, seg->segment_id);
	meta = SpmPageGetMeta(metapage);

	for (s = 0; s < (int) meta->nsegments; s++)
	{
		if (meta->segments[s].segment_id == seg->segment_id)
			break;
	}

	map = (uint8 *) PageGetContents(page);
	if (s < (int) meta->nsegments)
	{
		for (int i = 0; i < nbits; i++)
		{
			uint32		b = bits[i];

			if (map[b / 8] & (1 << (b % 8)))
			{
				map[b / 8] &= ~(1 << (b % 8));
				cleared++;
			}
		}
		spm_meta_count_dead(meta, s, cleared);
	}

	if (cleared > 0)
		GenericXLogFinish(state);
	else
		GenericXLogAbort(state);
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	return cleared;
}

/*
 * Flag pending documents whose heap tuple is dead.  The caller holds
 * the structure lock, so no flush moves documents out of the list while we
 * walk it (README "VACUUM").  Each page is changed in one record with the
 * metapage's count of dead pending documents.
 */
static void
pending_bulkdelete(Relation index, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	SpmMetaPageData meta;
	BlockNumber blkno;
	bool		incont = false; /* the next tuple continues a document */
	BlockNumber nblocks = 0;
	BlockNumber walked = 0;
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

		SpmPendingCheckLink(index, blkno, &nblocks, &walked);
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_PENDING, 0);
		off = MAXALIGN(SizeOfPageHeaderData);
		lower = ((PageHeader) page)->pd_lower;
		while (off < lower)
		{
			SpmPendingTuple t = SpmPendingTupleAt(index, page, blkno, off, lower);

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

			/* lock order: metapage first */
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
			UnlockReleaseBuffer(buf);
			stats->tuples_removed += n;
		}
		else
			ReleaseBuffer(buf);
		blkno = next;
		spm_vacuum_delay_point();
	}
	pfree(offs);
}

IndexBulkDeleteResult *
spmbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	SpmMetaPageData meta;
	uint8	   *bits = palloc(SPM_BITMAP_BYTES);
	uint32	   *dead = palloc(SPM_BITS_PER_PAGE * sizeof(uint32));

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * No flush or compaction may move documents while we look at them: a
	 * dead document moved into a segment we have already passed would stay
	 * alive while the heap recycles its TID (README "VACUUM").
	 */
	SpmLockStructure(index);

	SpmReadMeta(index, &meta);
	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		SpmSegment *seg;
		SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
		SpmPin		bitpin = {InvalidBuffer, InvalidBlockNumber};

		SpmCacheNewRound();
		seg = SpmGetSegment(index, &meta, (int) i);
		for (uint32 p = 0; p < seg->hdr.nalive; p++)
		{
			uint32		lo = p * SPM_BITS_PER_PAGE;
			uint32		hi = Min(seg->hdr.ndocs, lo + SPM_BITS_PER_PAGE);
			int			ndead = 0;

			SpmReadBitsetPage(index, seg, false, p, bits, &bitpin);
			for (uint32 d = lo; d < hi; d++)
			{
				uint32		b = d - lo;
				ItemPointerData tid;

				if (!(bits[b / 8] & (1 << (b % 8))))
					continue;
				SpmGetTid(index, seg, d, &tid, &pin);
				if (callback(&tid, callback_state))
					dead[ndead++] = b;
			}
			SpmUnpin(&pin);
			SpmUnpin(&bitpin);
			if (ndead > 0)
				stats->tuples_removed += clear_alive_bits(index, seg, p, dead, ndead);
			spm_vacuum_delay_point();
		}
	}

	pending_bulkdelete(index, stats, callback, callback_state);
	SpmUnlockStructure(index);

	pfree(bits);
	pfree(dead);
	return stats;
}

/* ----------------------------------------------------------------
 * amvacuumcleanup: compaction policy, orphans, shrinking
 * ----------------------------------------------------------------
 */

/*
 * Rewrite segments with many dead documents; merge down to
 * compact_segments segments.  Caller holds the structure lock.
 */
static void
compact_locked(Relation index, int compact_segments)
{
	/* every merge removes a segment or the dead postings of one */
	for (int guard = 0; guard < 2 * SPM_MAX_SEGMENTS; guard++)
	{
		SpmMetaPageData meta;
		bool		done = true;

		SpmReadMeta(index, &meta);
		for (uint32 i = 0; i < meta.nsegments; i++)
		{
			SpmSegmentRef *r = &meta.segments[i];
			double		withpostings = (double) (r->docid_hi - r->docid_lo) - r->nholes;
			double		deadpostings = (double) r->ndead - r->nholes;

			/* dead documents whose postings are still there */
			if (deadpostings > 0 && deadpostings >= SPM_DEAD_FRACTION * withpostings)
			{
				spm_merge_segments(index, (int) i, (int) i, NULL, 0, false);
				done = false;
				break;
			}
		}
		if (!done)
			continue;
		if ((int) meta.nsegments > compact_segments)
		{
			spm_merge_smallest_pair(index, &meta);
			continue;
		}
		return;
	}
	elog(WARNING, "sparse_maxscore index \"%s\": compaction stopped after %d merges",
		 RelationGetRelationName(index), 2 * SPM_MAX_SEGMENTS);
}

static int
blkno_cmp(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

static inline void
mark(uint8 *bits, BlockNumber nblocks, BlockNumber blkno)
{
	if (blkno < nblocks)
		bits[blkno / 8] |= 1 << (blkno % 8);
}

static inline bool
marked(const uint8 *bits, BlockNumber blkno)
{
	return (bits[blkno / 8] >> (blkno % 8)) & 1;
}

/* mark the pages the metapage reaches: segments and the pending chain */
static void
mark_reachable(Relation index, uint8 *bits, BlockNumber nblocks, bool pending)
{
	SpmMetaPageData meta;

	SpmReadMeta(index, &meta);
	mark(bits, nblocks, SPM_METAPAGE_BLKNO);
	if (!pending)
	{
		SpmCacheNewRound();
		for (uint32 i = 0; i < meta.nsegments; i++)
		{
			SpmSegment *seg = SpmGetSegment(index, &meta, (int) i);
			int			n;
			BlockNumber *pages = SpmSegmentPages(index, seg, &n);

			for (int j = 0; j < n; j++)
				mark(bits, nblocks, pages[j]);
			pfree(pages);
		}
	}
	for (BlockNumber blkno = meta.pending_head, size = 0, walked = 0;
		 blkno != InvalidBlockNumber;)
	{
		Buffer		buf;
		BlockNumber next;

		SpmPendingCheckLink(index, blkno, &size, &walked);
		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(index, blkno);
		mark(bits, nblocks, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		SpmCheckPage(index, BufferGetPage(buf), blkno, SPM_PAGE_PENDING, 0);
		next = SpmPageGetOpaque(BufferGetPage(buf))->next;
		UnlockReleaseBuffer(buf);
		blkno = next;
	}
}

/*
 * Find the pages nothing reaches and free them; put recyclable FREE pages
 * in the free space map.  Returns the FREE pages (ascending) in *free.
 * Caller holds the structure lock, so no segment is being written; pending
 * pages are the only ones that can get linked meanwhile, see below.
 */
static void
reclaim_locked(Relation index, BufferAccessStrategy strategy,
			   BlockNumber **free, int *nfree, BlockNumber *nfree_recyclable)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	uint8	   *reach = palloc0(nblocks / 8 + 1);
	BlockNumber *orphans = palloc(Max(nblocks, 1) * sizeof(BlockNumber));
	BlockNumber *pend = palloc(Max(nblocks, 1) * sizeof(BlockNumber));
	int			norphans = 0;
	int			npend = 0;

	*free = palloc(Max(nblocks, 1) * sizeof(BlockNumber));
	*nfree = 0;
	*nfree_recyclable = 0;
	SpmRecycleFreed(index);

	mark_reachable(index, reach, nblocks, false);
	for (BlockNumber blkno = 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		SpmPageOpaque opaque;

		if (marked(reach, blkno))
			continue;
		spm_vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		/* a page someone holds locked is being written: not an orphan */
		if (!ConditionalLockBuffer(buf))
		{
			ReleaseBuffer(buf);
			continue;
		}
		page = BufferGetPage(buf);
		opaque = PageIsNew(page) || !SpmPageHasOpaque(page) ? NULL :
			SpmPageGetOpaque(page);
		if (opaque == NULL || opaque->page_id != SPM_PAGE_ID)
			orphans[norphans++] = blkno;
		else if (SpmPageIsFree(opaque))
		{
			(*free)[(*nfree)++] = blkno;
			if (SpmPageIsRecyclable(page, false))
			{
				RecordFreeIndexPage(index, blkno);
				(*nfree_recyclable)++;
			}
		}
		else if (opaque->type == SPM_PAGE_PENDING)
		{
			/*
			 * An insert writes a big document's continuation pages before it
			 * links them, and may link pages after our walk: leave pages of
			 * running transactions alone, check the others again below.
			 */
			if (!TransactionIdIsInProgress(XidFromFullTransactionId(opaque->xid)))
				pend[npend++] = blkno;
		}
		else
			orphans[norphans++] = blkno;
		UnlockReleaseBuffer(buf);
	}

	if (npend > 0)
	{
		memset(reach, 0, nblocks / 8 + 1);
		mark_reachable(index, reach, nblocks, true);
		for (int i = 0; i < npend; i++)
		{
			if (!marked(reach, pend[i]))
				orphans[norphans++] = pend[i];
		}
	}

	if (norphans > 0)
	{
		ereport(DEBUG1,
				(errmsg("sparse_maxscore index \"%s\": reclaiming %d unreachable pages",
						RelationGetRelationName(index), norphans)));
		SpmFreePages(index, orphans, norphans);
		/* newly freed: in the list, not yet recyclable */
		for (int i = 0; i < norphans; i++)
			(*free)[(*nfree)++] = orphans[i];
		qsort(*free, *nfree, sizeof(BlockNumber), blkno_cmp);
	}
	IndexFreeSpaceMapVacuum(index);
	pfree(reach);
	pfree(orphans);
	pfree(pend);
}

/*
 * Give back free space at the end of the file.  If at least a third of the
 * index is free, first move the segments into the lowest free pages (a
 * merge, which also drops dead documents), so that the tail becomes free.
 * Needs AccessExclusiveLock on the index, taken only if nobody else holds
 * a lock on it; then no scan runs here, and a hot standby replays the lock
 * before anything else, so freed pages may be reused at once.
 */
static void
shrink(Relation index, IndexVacuumInfo *info)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber *free;
	int			nfree;
	BlockNumber nrecyclable;
	BlockNumber newblocks;
	SpmMetaPageData meta;

	if (nblocks < 16 || !ConditionalLockRelation(index, AccessExclusiveLock))
		return;
	SpmLockStructure(index);

	reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	SpmReadMeta(index, &meta);
	if ((uint64) nfree * 3 >= nblocks && meta.nsegments > 0)
	{
		/*
		 * Move the data out of the way first, to new pages at the end, so
		 * that the second move finds the lowest pages free: one move into
		 * the lowest free pages could leave the data split around where it
		 * was.  Then cut the free tail.
		 */
		pfree(free);
		spm_merge_segments(index, 0, (int) meta.nsegments - 1, NULL, 0, true);
		reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
		SpmReadMeta(index, &meta);
		if (meta.nsegments > 0)
			spm_merge_segments(index, 0, (int) meta.nsegments - 1, free, nfree, true);
		pfree(free);
		reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	}

	/* truncate the run of free pages at the end */
	newblocks = nblocks = RelationGetNumberOfBlocks(index);
	for (int i = nfree - 1; i >= 0 && free[i] == newblocks - 1; i--)
		newblocks--;
	pfree(free);
	if (newblocks < nblocks)
	{
		RelationTruncate(index, newblocks);
		/* forget truncated pages on the recycle list */
		SpmRecycleFreed(index);
		ereport(DEBUG1,
				(errmsg("sparse_maxscore index \"%s\": truncated from %u to %u pages",
						RelationGetRelationName(index), nblocks, newblocks)));
	}
	SpmUnlockStructure(index);
	UnlockRelation(index, AccessExclusiveLock);
}

/*
 * amvacuumcleanup's maintenance: flush the pending list, compact, reclaim
 * orphaned pages, shrink.  Fills stats->pages_free.
 */
static void
vacuum_maintain(Relation index, IndexVacuumInfo *info,
					IndexBulkDeleteResult *stats)
{
	SpmOptions *opts = spm_get_options(index);
	BlockNumber *free;
	int			nfree;
	BlockNumber nrecyclable;

	SpmLockStructure(index);
	spm_flush_locked(index, (Size) maintenance_work_mem * 1024);
	spm_merge_tiered(index, true);
	compact_locked(index, opts->compactSegments);
	reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	SpmUnlockStructure(index);
	pfree(free);

	shrink(index, info);

	SpmLockStructure(index);
	reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	SpmUnlockStructure(index);
	pfree(free);
	stats->pages_free = nrecyclable;
}

IndexBulkDeleteResult *
spmvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	SpmMetaPageData meta;
	double		live = 0;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/* flush the pending list, compact, reclaim and shrink */
	vacuum_maintain(index, info, stats);

	SpmReadMeta(index, &meta);
	for (uint32 i = 0; i < meta.nsegments; i++)
		live += (double) (meta.segments[i].docid_hi - meta.segments[i].docid_lo) -
			meta.segments[i].ndead;
	live += (double) meta.pending_ndocs - meta.pending_ndead;

	stats->num_pages = RelationGetNumberOfBlocks(index);
	stats->num_index_tuples = live;
	stats->estimated_count = false;
	return stats;
}

/*-------------------------------------------------------------------------
 *
 * spmpage.c
 *	  Page allocation and recycling: new pages (from the free space map or
 *	  by extending the file), freeing pages, and the metapage's recycle
 *	  list that hands freed pages to the free space map once they may be
 *	  reused.
 *
 * A freed page keeps its type, segment id, links and contents, flagged
 * SPM_PAGE_FREED and stamped with the next full transaction id, because a
 * hot standby query may still follow an old reference to it; the stamp
 * says when it may be reused (README "Page recycling").  Callers free
 * pages only after they made them unreachable and drained the scans that
 * could still read them (SpmDrainScans).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "spm.h"

/* ----------------------------------------------------------------
 * New pages
 * ----------------------------------------------------------------
 */

/*
 * May page (exclusively locked by the caller) be reused?  A never
 * initialised page may; a FREE page once no snapshot anywhere can still
 * reach it through an old copy of the metapage: the drain lock covers the
 * primary, the xid stamp covers hot standbys (README "Page recycling").
 * any_xid skips the stamp, for a caller holding AccessExclusiveLock on the
 * index (which standbys replay, cancelling their readers first).
 */
bool
SpmPageIsRecyclable(Page page, bool any_xid)
{
	SpmPageOpaque opaque;

	if (PageIsNew(page))
		return true;
	if (!SpmPageHasOpaque(page))
		return false;
	opaque = SpmPageGetOpaque(page);
	return opaque->page_id == SPM_PAGE_ID && SpmPageIsFree(opaque) &&
		(any_xid || GlobalVisCheckRemovableFullXid(NULL, opaque->xid));
}

/*
 * A new page for the index, exclusively locked: a recyclable page from the
 * free space map if there is one, else a new block at the end.  The caller
 * initialises it and keeps it locked until it has written it (README
 * "Page recycling": a locked page is never taken as an orphan).
 */
Buffer
SpmNewBuffer(Relation index, ForkNumber forknum)
{
	Buffer		buf;

	if (forknum == MAIN_FORKNUM)
	{
		for (;;)
		{
			BlockNumber blkno = GetFreeIndexPage(index);

			if (blkno == InvalidBlockNumber)
				break;
			buf = ReadBuffer(index, blkno);
			if (ConditionalLockBuffer(buf))
			{
				if (SpmPageIsRecyclable(BufferGetPage(buf), false))
					return buf;
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			}
			ReleaseBuffer(buf);
		}
	}

	return SpmExtendBuffer(index, forknum);
}

/*
 * A new block at the end of the index, exclusively locked.  The extension
 * lock is kept until the page is locked, so that VACUUM's reclaim never
 * takes an unlocked new page for an orphan.
 */
Buffer
SpmExtendBuffer(Relation index, ForkNumber forknum)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(index);

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBufferExtended(index, forknum, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/* ----------------------------------------------------------------
 * Freeing pages, the recycle list
 * ----------------------------------------------------------------
 */

/*
 * Put freed pages on the metapage's recycle list (as many as fit; the
 * rest are found by VACUUM's reclaim).  Caller holds the structure lock.
 */
static void
remember_freed(Relation index, const BlockNumber *pages, int n)
{
	Buffer		metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	GenericXLogState *state;
	SpmMetaPage meta;
	int			m;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	m = Min(n, SPM_RECYCLE_MAX - (int) meta->nrecycle);
	if (m > 0)
	{
		memcpy(&meta->recycle[meta->nrecycle], pages, m * sizeof(BlockNumber));
		meta->nrecycle += m;
		GenericXLogFinish(state);
	}
	else
		GenericXLogAbort(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Free pages the caller has made unreachable (and drained the scans that
 * could still be reading them): flag them FREED, stamped with the next
 * transaction id, leaving their type, segment id, links and contents as
 * they are.  A hot standby query that still follows an old reference
 * reads them intact until they are reused, which waits for the stamp
 * (README "Page recycling").  Pages that are not ours at all (never
 * written, torn) become FREE pages.  The pages go on the metapage's
 * recycle list (below), which puts them in the free space map once
 * they may be reused.
 */
void
SpmFreePages(Relation index, const BlockNumber *pages, int n)
{
	FullTransactionId xid = ReadNextFullTransactionId();

	for (int i = 0; i < n; i += MAX_GENERIC_XLOG_PAGES)
	{
		GenericXLogState *state = GenericXLogStart(index);
		Buffer		bufs[MAX_GENERIC_XLOG_PAGES];
		int			m = Min(MAX_GENERIC_XLOG_PAGES, n - i);

		for (int j = 0; j < m; j++)
		{
			Page		page;
			SpmPageOpaque opaque;

			bufs[j] = ReadBuffer(index, pages[i + j]);
			LockBuffer(bufs[j], BUFFER_LOCK_EXCLUSIVE);
			page = GenericXLogRegisterBuffer(state, bufs[j], 0);
			if (PageIsNew(page) ||
				!SpmPageHasOpaque(page) ||
				SpmPageGetOpaque(page)->page_id != SPM_PAGE_ID)
				SpmInitPage(page, SPM_PAGE_FREE, 0);
			opaque = SpmPageGetOpaque(page);
			opaque->flags |= SPM_PAGE_FREED;
			opaque->xid = xid;
		}
		GenericXLogFinish(state);
		for (int j = 0; j < m; j++)
			UnlockReleaseBuffer(bufs[j]);
	}
	remember_freed(index, pages, n);
}

/*
 * Move the pages of the recycle list that may be reused by now into the
 * free space map (and make the map's upper levels find them).  Called by
 * every flush and VACUUM, so that an insert-only index reuses the space
 * its flushes and merges free.  Caller holds the structure lock.
 */
void
SpmRecycleFreed(Relation index)
{
	SpmMetaPageData meta;
	BlockNumber ready[SPM_RECYCLE_MAX];
	BlockNumber keep[SPM_RECYCLE_MAX];
	int			nready = 0;
	int			nkeep = 0;
	BlockNumber lo = InvalidBlockNumber;
	BlockNumber hi = 0;
	Buffer		metabuf;
	GenericXLogState *state;
	SpmMetaPage m;

	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	int			ngone = 0;

	SpmReadMeta(index, &meta);
	if (meta.nrecycle == 0 || meta.nrecycle > SPM_RECYCLE_MAX)
		return;
	for (uint32 i = 0; i < meta.nrecycle; i++)
	{
		Buffer		buf;
		bool		ok;

		/* truncated away by VACUUM's shrink */
		if (meta.recycle[i] >= nblocks)
		{
			ngone++;
			continue;
		}
		buf = ReadBuffer(index, meta.recycle[i]);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		ok = SpmPageIsRecyclable(BufferGetPage(buf), false);
		UnlockReleaseBuffer(buf);
		if (ok)
			ready[nready++] = meta.recycle[i];
		else
			keep[nkeep++] = meta.recycle[i];
	}
	if (nready == 0 && ngone == 0)
		return;

	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	memcpy(m->recycle, keep, nkeep * sizeof(BlockNumber));
	m->nrecycle = nkeep;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	for (int i = 0; i < nready; i++)
	{
		RecordFreeIndexPage(index, ready[i]);
		lo = Min(lo, ready[i]);
		hi = Max(hi, ready[i]);
	}
	if (nready > 0)
		FreeSpaceMapVacuumRange(index, lo, hi + 1);
}

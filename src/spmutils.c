/*-------------------------------------------------------------------------
 *
 * spmutils.c
 *	  Page initialisation and validation, the metapage, new pages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/transam.h"
#include "utils/snapmgr.h"
#include "storage/bufpage.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "spm.h"

static const char *const page_type_names[] = {
	"unknown", "meta", "pending", "segment header", "segment directory",
	"dictionary", "skip", "posting", "docmap", "alive bitset",
	"null bitset", "free"
};

static const char *
page_type_name(int type)
{
	if (type < 0 || type >= (int) lengthof(page_type_names))
		type = 0;
	return page_type_names[type];
}

/*
 * Initialise page as an empty page of the given type.
 */
void
SpmInitPage(Page page, SpmPageType type, uint32 segment_id)
{
	SpmPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SpmPageOpaqueData));
	opaque = SpmPageGetOpaque(page);
	opaque->next = InvalidBlockNumber;
	opaque->segment_id = segment_id;
	opaque->xid = InvalidFullTransactionId;
	opaque->type = (uint16) type;
	opaque->unused1 = 0;
	opaque->unused2 = 0;
	opaque->page_id = SPM_PAGE_ID;
}

/*
 * Check that page (block blkno, content-locked by the caller) is a page of
 * the expected type belonging to segment_id (0: any).  A page that is not
 * what its reference promised means corruption -- or, on a hot standby,
 * that replay recycled a page a query was still following (README "Page
 * recycling"), which is reported as a retryable conflict.
 */
void
SpmCheckPage(Relation index, Page page, BlockNumber blkno, SpmPageType type,
			 uint32 segment_id)
{
	SpmPageOpaque opaque;
	PageHeader	phdr = (PageHeader) page;

	if (!PageIsNew(page) &&
		PageGetSpecialSize(page) == MAXALIGN(sizeof(SpmPageOpaqueData)) &&
		phdr->pd_lower >= MAXALIGN(SizeOfPageHeaderData) &&
		phdr->pd_lower <= phdr->pd_upper &&
		phdr->pd_upper <= phdr->pd_special)
	{
		opaque = SpmPageGetOpaque(page);
		if (opaque->page_id == SPM_PAGE_ID && opaque->type == type &&
			(segment_id == 0 || opaque->segment_id == segment_id))
			return;
		if (RecoveryInProgress())
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("canceling statement due to conflict with recovery"),
					 errdetail("Block %u of sparse_maxscore index \"%s\" was recycled while the query was reading it.",
							   blkno, RelationGetRelationName(index)),
					 errhint("Retry the query.  hot_standby_feedback avoids this.")));
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("sparse_maxscore index \"%s\" has an unexpected page at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail("Expected a %s page of segment %u, found a %s page of segment %u.",
						   page_type_name(type), segment_id,
						   page_type_name(opaque->type), opaque->segment_id),
				 errhint("REINDEX the index.")));
	}
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" has an invalid page at block %u",
					RelationGetRelationName(index), blkno),
			 errhint("REINDEX the index.")));
}

/*
 * Check the metapage contents (page already checked as a META page).
 */
void
SpmCheckMeta(Relation index, SpmMetaPage meta)
{
	if (meta->magic != SPM_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a sparse_maxscore index",
						RelationGetRelationName(index))));
	if (meta->version != SPM_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sparse_maxscore index \"%s\" has format version %u, this library reads version %d",
						RelationGetRelationName(index), meta->version,
						SPM_VERSION),
				 errhint("REINDEX the index.")));
	if (meta->nsegments > SPM_MAX_SEGMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("sparse_maxscore index \"%s\" has a corrupted metapage",
						RelationGetRelationName(index))));
}

/*
 * Copy the metapage into *meta (share lock held only while copying).
 */
void
SpmReadMeta(Relation index, SpmMetaPageData *meta)
{
	Buffer		buf;
	Page		page;

	buf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	SpmCheckPage(index, page, SPM_METAPAGE_BLKNO, SPM_PAGE_META, 0);
	memcpy(meta, SpmPageGetMeta(page), sizeof(SpmMetaPageData));
	UnlockReleaseBuffer(buf);
	SpmCheckMeta(index, meta);
}

/*
 * Index of the segment whose docid range holds docid, or -1.
 */
int
SpmFindSegment(const SpmMetaPageData *meta, uint64 docid)
{
	int			lo = 0;
	int			hi = (int) meta->nsegments - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (docid < meta->segments[mid].docid_lo)
			hi = mid - 1;
		else if (docid >= meta->segments[mid].docid_hi)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

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
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(SpmPageOpaqueData)))
		return false;
	opaque = SpmPageGetOpaque(page);
	return opaque->page_id == SPM_PAGE_ID && opaque->type == SPM_PAGE_FREE &&
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
	bool		needLock;

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

	/* keep the extension lock until the new page is locked */
	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBufferExtended(index, forknum, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/*
 * Mark pages FREE, stamped with the next transaction id, and tell the free
 * space map.  The caller has made them unreachable and drained the scans
 * that could still be reading them.  The page contents are left as they
 * are (a reader that follows a stale reference finds the FREE type).
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
				PageGetSpecialSize(page) != MAXALIGN(sizeof(SpmPageOpaqueData)))
				SpmInitPage(page, SPM_PAGE_FREE, 0);
			opaque = SpmPageGetOpaque(page);
			opaque->type = SPM_PAGE_FREE;
			opaque->page_id = SPM_PAGE_ID;
			opaque->segment_id = 0;
			opaque->next = InvalidBlockNumber;
			opaque->xid = xid;
		}
		GenericXLogFinish(state);
		for (int j = 0; j < m; j++)
		{
			UnlockReleaseBuffer(bufs[j]);
			RecordFreeIndexPage(index, pages[i + j]);
		}
	}
}

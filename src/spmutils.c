/*-------------------------------------------------------------------------
 *
 * spmutils.c
 *	  Page initialisation and validation, the metapage, the structure lock
 *	  and the drain, and the check of an indexed value (for the build and
 *	  aminsert).  Page allocation and recycling are in spmpage.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "access/transam.h"
#include "storage/bufpage.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "spm.h"

static const char *const page_type_names[] = {
	"unknown", "meta", "pending", "segment header", "segment directory",
	"dictionary", "skip", "posting", "docmap", "alive bitset",
	"null bitset", "free", "forward copy", "range index", "range maxima"
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
	opaque->flags = 0;
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
		SpmPageHasOpaque(page) &&
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

pg_noreturn static void meta_corrupt(Relation index, const char *what);

static void
meta_corrupt(Relation index, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" has a corrupted metapage: %s",
					RelationGetRelationName(index), what),
			 errhint("REINDEX the index.")));
}

/*
 * Check the metapage contents (page already checked as a META page): the
 * counts and docid ranges everything else relies on.  Cheap: every scan
 * and writer calls it on its copy.
 */
void
SpmCheckMeta(Relation index, SpmMetaPage meta)
{
	if (meta->magic != SPM_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a sparse_maxscore index",
						RelationGetRelationName(index))));
	if (meta->version < SPM_VERSION_OLDEST || meta->version > SPM_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sparse_maxscore index \"%s\" has format version %u, this library reads versions %d to %d",
						RelationGetRelationName(index), meta->version,
						SPM_VERSION_OLDEST, SPM_VERSION),
				 errhint("REINDEX the index.")));
	if (meta->nsegments > SPM_MAX_SEGMENTS)
		meta_corrupt(index, "segment count");
	/* README "Documents and docids": the docid ranges, in order */
	for (uint32 i = 0; i < meta->nsegments; i++)
	{
		if (meta->segments[i].docid_lo > meta->segments[i].docid_hi ||
			(i > 0 && meta->segments[i].docid_lo < meta->segments[i - 1].docid_hi))
			meta_corrupt(index, "segment docid ranges");
	}
	if ((meta->nsegments > 0 &&
		 meta->segments[meta->nsegments - 1].docid_hi > meta->pending_docid_lo) ||
		meta->next_docid != meta->pending_docid_lo + meta->pending_ndocs)
		meta_corrupt(index, "pending docid range");
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
 * The structure lock: one flush, merge, VACUUM or verify at a time
 * (README "Locking").  It is ShareUpdateExclusiveLock on the index, which
 * conflicts with itself but not with the locks scans (AccessShareLock) and
 * inserts (RowExclusiveLock) hold.  A relation lock rather than a page
 * lock, because its holder waits for SPM_SCAN_LOCK in the drain, and
 * PostgreSQL does not let the holder of a heavyweight page lock acquire
 * another one (the deadlock detector ignores page locks).
 */
void
SpmLockStructure(Relation index)
{
	LockRelation(index, ShareUpdateExclusiveLock);
}

bool
SpmConditionalLockStructure(Relation index)
{
	return ConditionalLockRelation(index, ShareUpdateExclusiveLock);
}

void
SpmUnlockStructure(Relation index)
{
	UnlockRelation(index, ShareUpdateExclusiveLock);
}

/*
 * The drain: take SPM_SCAN_LOCK exclusively and let go at once, so that
 * every scan round that could still read what the caller has just
 * unpublished has ended (README "Flush and compaction", step 3).
 */
void
SpmDrainScans(Relation index)
{
	LockPage(index, SPM_SCAN_LOCK, ExclusiveLock);
	UnlockPage(index, SPM_SCAN_LOCK, ExclusiveLock);
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
 * Check an indexed value: canonical (what the type guarantees, checked
 * again because the index depends on it) and of the index's dimension.
 */
void
SpmCheckVector(Relation index, SparseVector *v, int32 *dims)
{
	float	   *values = SPV_VALUES(v);

	if (v->dim < 1 || v->dim > SPV_MAX_DIM || v->nnz < 0 || v->nnz > v->dim)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid sparsevec value in index \"%s\"",
						RelationGetRelationName(index))));
	for (int i = 0; i < v->nnz; i++)
	{
		if (v->indices[i] < 0 || v->indices[i] >= v->dim ||
			(i > 0 && v->indices[i] <= v->indices[i - 1]) ||
			values[i] == 0.0f || isnan(values[i]) || isinf(values[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid sparsevec value in index \"%s\"",
							RelationGetRelationName(index)),
					 errdetail("Element %d is not canonical.", i + 1)));
	}
	if (*dims == 0)
		*dims = v->dim;
	else if (v->dim != *dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("different sparsevec dimensions %d and %d",
						*dims, v->dim),
				 errdetail("Every vector in sparse_maxscore index \"%s\" must have %d dimensions.",
						   RelationGetRelationName(index), *dims),
				 errhint("Declare the column with a fixed dimension, for example sparsevec(%d).",
						 *dims)));
}

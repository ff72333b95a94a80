/*-------------------------------------------------------------------------
 *
 * spmflush.c
 *	  Flush: move the pending list into a new segment.  Also the two entry
 *	  points that flush and then merge (spmmerge.c): spm_flush (inserts,
 *	  sparse_maxscore_flush) and spm_compact_all (sparse_maxscore_compact).
 *
 * Every structural change runs under the structure lock (one structural
 * writer at a time) and follows the same steps (README "Flush and
 * compaction"):
 *
 *	1. write the new segment's pages (WAL-logged full images); nothing
 *	   points at them yet;
 *	2. publish: one GenericXLog record on the metapage switches the index
 *	   to the new version (segment list and pending pointers);
 *	3. drain: take SPM_SCAN_LOCK exclusively and let go at once, so that
 *	   every scan round that could still read the old version has ended;
 *	4. free the old pages (FREED, stamped with the next xid for standbys;
 *	   spmpage.c).
 *
 * A crash between 1 and 2 leaves orphans, between 2 and 4 unreachable
 * pages; VACUUM's reclaim (spmvacuum.c) finds both by walking what the
 * metapage reaches.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmwrite.h"

/* ----------------------------------------------------------------
 * Flush
 * ----------------------------------------------------------------
 */
typedef struct FlushState
{
	SpmWriter  *writer;
	SpmSorter  *sorter;
	uint64		docid_lo;
	uint64		ndocs;			/* documents seen */
	uint64		nlive;			/* of which not deleted */
	uint64		npostings;		/* elements of all documents */
	uint64		bytes;			/* as counted by spm_pending_append */
	uint32		nnull;
	uint32		ndead;
	uint32		cur;			/* local docid of the current document */
	bool		curlive;
} FlushState;

static void
flush_begin(void *arg, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz)
{
	FlushState *fs = arg;
	uint8		docflags = 0;

	if (flags & SPM_PT_NULL)
	{
		docflags |= SPM_DOC_NULL;
		fs->nnull++;
	}
	if (flags & SPM_PT_DELETED)
	{
		docflags |= SPM_DOC_DEAD;
		fs->ndead++;
	}
	else
		fs->nlive++;
	fs->cur = (uint32) (docid - fs->docid_lo);
	fs->curlive = !(flags & (SPM_PT_DELETED | SPM_PT_NULL));
	spm_writer_doc(fs->writer, tid, docflags, fs->curlive ? nnz : 0);
	fs->npostings += nnz;
	fs->bytes += SpmPendingTupleSize(nnz);
	fs->ndocs++;
}

static void
flush_elems(void *arg, const int32 *idx, const float4 *val, int n)
{
	FlushState *fs = arg;

	if (!fs->curlive)
		return;
	spm_writer_doc_elems(fs->writer, idx, val, n);
	for (int i = 0; i < n; i++)
		spm_sorter_add(fs->sorter, (uint32) idx[i], fs->cur, val[i]);
}

static void
flush_end(void *arg)
{
}

/*
 * Move the pending list into a new segment.  Caller holds the structure lock.
 * Returns the number of documents moved.
 */
int64
spm_flush_locked(Relation index, Size mem)
{
	Buffer		metabuf;
	SpmMetaPage meta;
	SpmMetaPageData copy;
	GenericXLogState *state;
	FlushState	fs;
	SpmPendingVisitor v = {flush_begin, flush_elems, flush_end, &fs};
	BlockNumber *pages;
	int			npages;
	SpmSegmentRef ref;
	bool		write_segment;
	BlockNumber sealed;

	/* space freed by earlier flushes and merges, reusable by now */
	SpmRecycleFreed(index);

	/* make room for one more segment */
	SpmReadMeta(index, &copy);
	if (copy.pending_ndocs == 0)
		return 0;
	while (copy.nsegments >= SPM_MAX_SEGMENTS)
	{
		spm_merge_smallest_pair(index, &copy);
		SpmReadMeta(index, &copy);
	}

	/* seal the tail: inserts start a new page after it from now on */
	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->pending_sealed = meta->pending_tail;
	memcpy(&copy, meta, sizeof(SpmMetaPageData));
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	sealed = copy.pending_sealed;

	/* read every document up to the sealed page into a segment */
	memset(&fs, 0, sizeof(fs));
	fs.docid_lo = copy.pending_docid_lo;
	fs.writer = spm_writer_begin(index, MAIN_FORKNUM, true,
								 copy.next_segment_id, copy.pending_docid_lo);
	if (!spm_get_options(index)->ranges)
		spm_writer_no_ranges(fs.writer);
	if (!spm_get_options(index)->quantize)
		spm_writer_exact(fs.writer);
	/* before the documents: the forward copy's layout depends on it */
	spm_writer_set_dims(fs.writer, copy.dims);
	fs.sorter = spm_sorter_begin(mem, false);
	spm_pending_visit(index, copy.pending_head, copy.pending_docid_lo,
					  copy.pending_docid_lo + copy.pending_ndocs, sealed,
					  &v, &pages, &npages);
	if (fs.ndocs != copy.pending_ndocs)
		elog(ERROR, "sparse_maxscore index \"%s\": pending list holds " UINT64_FORMAT " documents, the metapage says " UINT64_FORMAT,
			 RelationGetRelationName(index), fs.ndocs, copy.pending_ndocs);

	/* a batch of deleted documents needs no segment: its docids stay unused */
	write_segment = fs.nlive > 0;
	if (write_segment)
	{
		spm_sorter_finish(fs.sorter, fs.writer);
		spm_writer_set_dims(fs.writer, copy.dims);
		spm_writer_finish(fs.writer, &ref);
	}
	else
	{
		/* give its started pages back now: no buffer lock held below */
		spm_writer_free(fs.writer);
		fs.writer = NULL;
	}
	spm_sorter_end(fs.sorter);

	/* publish */
	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		Buffer		sbuf = ReadBuffer(index, sealed);
		BlockNumber next;

		LockBuffer(sbuf, BUFFER_LOCK_SHARE);
		SpmCheckPage(index, BufferGetPage(sbuf), sealed, SPM_PAGE_PENDING, 0);
		next = SpmPageGetOpaque(BufferGetPage(sbuf))->next;
		UnlockReleaseBuffer(sbuf);

		state = GenericXLogStart(index);
		meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		if (meta->pending_head != copy.pending_head ||
			meta->pending_sealed != sealed ||
			meta->pending_docid_lo != copy.pending_docid_lo ||
			meta->nsegments != copy.nsegments)
			elog(ERROR, "sparse_maxscore index \"%s\" changed during a flush",
				 RelationGetRelationName(index));
		if (write_segment)
		{
			meta->segments[meta->nsegments++] = ref;
			meta->flags |= spm_writer_flags(fs.writer);
			/* its blocks may be packed: older libraries must not read it */
			meta->version = SPM_VERSION;
			meta->nterms_max = Max(meta->nterms_max, spm_writer_nterms(fs.writer));
		}
		meta->next_segment_id++;
		meta->pending_head = next;
		if (next == InvalidBlockNumber)
		{
			meta->pending_tail = InvalidBlockNumber;
			meta->pending_tail_free = 0;
		}
		meta->pending_sealed = InvalidBlockNumber;
		meta->pending_docid_lo += fs.ndocs;
		meta->pending_ndocs -= fs.ndocs;
		meta->pending_npostings -= fs.npostings;
		meta->pending_bytes -= Min(meta->pending_bytes, fs.bytes);
		meta->pending_npages -= Min(meta->pending_npages, (uint32) npages);
		meta->pending_nnull -= fs.nnull;
		meta->pending_ndead -= fs.ndead;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);

	SpmDrainScans(index);
	SpmFreePages(index, pages, npages);
	if (fs.writer)
		spm_writer_free(fs.writer);
	return (int64) fs.ndocs;
}

/*
 * Flush the pending list, if there is anything in it, and merge segments
 * as the tiered policy asks.  wait = false gives up at once if another
 * backend holds the structure lock (inserts); vacuum says whether to sort
 * within maintenance_work_mem (else work_mem).  Returns the number of
 * documents moved.
 */
int64
spm_flush(Relation index, bool wait, bool vacuum)
{
	int64		n;

	if (wait)
		SpmLockStructure(index);
	else if (!SpmConditionalLockStructure(index))
		return 0;
	n = spm_flush_locked(index, (Size) (vacuum ? maintenance_work_mem : work_mem) * 1024);
	spm_merge_tiered(index, vacuum);
	SpmUnlockStructure(index);
	return n;
}

/*
 * Merge every segment into one (dropping dead documents), after flushing
 * the pending list.  Returns the number of segments merged.
 */
int
spm_compact_all(Relation index)
{
	SpmMetaPageData meta;
	int			n;

	SpmLockStructure(index);
	spm_flush_locked(index, (Size) maintenance_work_mem * 1024);
	SpmReadMeta(index, &meta);
	n = (int) meta.nsegments;
	if (n > 1 || (n == 1 && meta.segments[0].ndead > 0))
		spm_merge_segments(index, 0, n - 1, NULL, 0, false);
	SpmUnlockStructure(index);
	return n;
}

/*-------------------------------------------------------------------------
 *
 * spmflush.c
 *	  Flush: move the pending list into a new segment.  Also the two entry
 *	  points that flush and then merge (spmmerge.c): spm_flush (inserts,
 *	  sparse_maxscore_flush) and spm_compact_all (sparse_maxscore_compact).
 *
 * The sealed part of the pending list is the document source of a segment
 * written and published by the write pipeline (spmpipeline.c, README
 * "Writing a segment"), under the structure lock, in the steps of README
 * "Flush and compaction": write, publish (the segment and the list's new
 * head in one metapage record), drain, free the pages read.
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

/* the sealed part of the pending list as a document source (spmpipeline.c) */
typedef struct FlushSource
{
	SpmSource	src;			/* first: the pipeline sees only this */
	Relation	index;
	const SpmMetaPageData *meta;	/* the copy taken when sealing */
	SpmSink    *sink;
	SpmPendingCut cut;			/* what the documents take from the list */
	BlockNumber *pages;			/* the pages read, freed once published */
	int			npages;
} FlushSource;

static void
flush_begin(void *arg, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz)
{
	FlushSource *fs = arg;
	uint8		docflags = 0;

	/* docids are positions in the list: dense from docid_lo */
	if (docid != fs->src.docid_lo + spm_sink_ndocs(fs->sink))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("sparse_maxscore index \"%s\" is corrupted: pending document " UINT64_FORMAT " out of order",
						RelationGetRelationName(fs->index), docid),
				 errhint("REINDEX the index.")));
	if (flags & SPM_PT_NULL)
	{
		docflags |= SPM_DOC_NULL;
		fs->cut.nnull++;
	}
	if (flags & SPM_PT_DELETED)
	{
		/* deleted documents become holes: alive bit 0, no postings */
		docflags |= SPM_DOC_DEAD;
		fs->cut.ndead++;
	}
	spm_sink_doc_begin(fs->sink, tid, docflags, nnz);
	fs->cut.npostings += nnz;
	fs->cut.bytes += SpmPendingTupleSize(nnz);
	fs->cut.ndocs++;
}

static void
flush_elems(void *arg, const int32 *idx, const float4 *val, int n)
{
	FlushSource *fs = arg;

	spm_sink_doc_elems(fs->sink, idx, val, n);
}

static void
flush_end(void *arg)
{
}

static void
flush_documents(SpmSource *src, SpmSink *sink)
{
	FlushSource *fs = (FlushSource *) src;
	SpmPendingVisitor v = {flush_begin, flush_elems, flush_end, fs};

	fs->sink = sink;
	spm_pending_visit(fs->index, fs->meta->pending_head,
					  fs->meta->pending_docid_lo,
					  fs->meta->pending_docid_lo + fs->meta->pending_ndocs,
					  fs->cut.sealed, &v, &fs->pages, &fs->npages);
	if (fs->cut.ndocs != fs->meta->pending_ndocs)
		elog(ERROR, "sparse_maxscore index \"%s\": pending list holds " UINT64_FORMAT " documents, the metapage says " UINT64_FORMAT,
			 RelationGetRelationName(fs->index), fs->cut.ndocs,
			 fs->meta->pending_ndocs);
	fs->cut.npages = (uint32) fs->npages;
	fs->sink = NULL;
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
	FlushSource fs;
	SpmWriteTarget target;
	SpmSegmentOut out;
	SpmPublish	p;

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

	/* every document up to the sealed page, into a segment */
	memset(&fs, 0, sizeof(fs));
	fs.index = index;
	fs.meta = &copy;
	fs.cut.head = copy.pending_head;
	fs.cut.sealed = copy.pending_sealed;
	fs.cut.docid_lo = copy.pending_docid_lo;
	fs.src.docid_lo = copy.pending_docid_lo;
	fs.src.ranges_ok = true;
	fs.src.sort_mem = mem;
	fs.src.documents = flush_documents;
	spm_target_online(&target, &copy);
	spm_segment_write(index, &target, &fs.src, &out);

	/*
	 * Publish the segment (a batch of deleted documents needs none: its
	 * docids stay unused) and move the list past its documents, then free
	 * the pages read.
	 */
	spm_publish_online(&p, "flush", &copy);
	p.first = (int) copy.nsegments;
	p.seg = &out;
	p.cut = &fs.cut;
	p.old_pages = fs.pages;
	p.nold = fs.npages;
	spm_publish(index, &p);
	return (int64) fs.cut.ndocs;
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

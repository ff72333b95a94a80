/*-------------------------------------------------------------------------
 *
 * spmbuild.c
 *	  Bulk build (ambuild) and the init fork of unlogged indexes.
 *
 * The heap scan gives every row the next docid, in the order the scan
 * returns rows; its TID (and NULL flag) goes straight to the docmap of the
 * one segment being written.  Its postings (term, docid, weight) go to a
 * sorter (spmsort.c) limited to maintenance_work_mem, which hands them to
 * the segment writer in (term, docid) order, spilling to temporary files
 * if they do not fit.
 *
 * Pages are written without WAL and logged at the end with
 * log_newpage_range, as pgvector's hnswbuild.c does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "spm.h"

typedef struct SpmBuildState
{
	SpmWriter  *writer;
	SpmSorter  *sorter;
	int32		dims;
	uint32		ndocs;
	double		indtuples;
	MemoryContext tmpCtx;		/* per-row */
} SpmBuildState;

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

/* ---------------------------------------------------------------- scan */

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	SpmBuildState *st = (SpmBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(st->tmpCtx);
	uint32		doc = st->ndocs;

	if (isnull[0])
		spm_writer_doc(st->writer, tid, SPM_DOC_NULL, 0);
	else
	{
		SparseVector *v = DatumGetSparseVectorP(values[0]);
		float	   *vals = SPV_VALUES(v);

		SpmCheckVector(index, v, &st->dims);
		/* before the document: the forward copy's layout depends on it */
		spm_writer_set_dims(st->writer, st->dims);
		spm_writer_doc(st->writer, tid, 0, v->nnz);
		spm_writer_doc_elems(st->writer, v->indices, vals, v->nnz);
		for (int i = 0; i < v->nnz; i++)
			spm_sorter_add(st->sorter, (uint32) v->indices[i], doc, vals[i]);
	}
	st->ndocs++;
	st->indtuples += 1;
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->tmpCtx);
}

static uint64
make_nonce(void)
{
	uint64		nonce;

	if (!pg_strong_random(&nonce, sizeof(nonce)))
		nonce = (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 32);
	return nonce;
}

/*
 * Write an empty metapage to block 0 of fork (no WAL; see build_index).
 */
static void
write_empty_meta(Relation index, ForkNumber fork)
{
	Buffer		buf = SpmNewBuffer(index, fork);
	Page		page = BufferGetPage(buf);
	SpmMetaPage meta;

	if (BufferGetBlockNumber(buf) != SPM_METAPAGE_BLKNO)
		elog(ERROR, "sparse_maxscore: metapage is not block 0");
	SpmInitPage(page, SPM_PAGE_META, 0);
	meta = SpmPageGetMeta(page);
	memset(meta, 0, sizeof(SpmMetaPageData));
	meta->magic = SPM_MAGIC;
	meta->version = SPM_VERSION;
	meta->nonce = make_nonce();
	meta->next_segment_id = 1;
	meta->pending_head = InvalidBlockNumber;
	meta->pending_tail = InvalidBlockNumber;
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(SpmMetaPageData)) - (char *) page;
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
}

static void
build_index(Relation heap, Relation index, IndexInfo *indexInfo,
			ForkNumber fork, double *reltuples, double *indtuples)
{
	SpmBuildState st;
	MemoryContext buildCtx;
	MemoryContext old;

	buildCtx = AllocSetContextCreate(CurrentMemoryContext,
									 "sparse_maxscore build",
									 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(buildCtx);

	write_empty_meta(index, fork);

	memset(&st, 0, sizeof(st));
	st.tmpCtx = AllocSetContextCreate(buildCtx, "sparse_maxscore build row",
									  ALLOCSET_DEFAULT_SIZES);
	st.sorter = spm_sorter_begin((Size) maintenance_work_mem * 1024, true);
	st.writer = spm_writer_begin(index, fork, false, 1, 0);
	if (!spm_get_options(index)->ranges)
		spm_writer_no_ranges(st.writer);

	if (heap != NULL)
	{
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 PROGRESS_SPM_PHASE_LOAD);
		*reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
											build_callback, (void *) &st, NULL);
	}

	if (st.ndocs > 0)
	{
		SpmSegmentRef ref;
		Buffer		buf;
		SpmMetaPage meta;

		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 PROGRESS_SPM_PHASE_WRITE);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
									 spm_sorter_count(st.sorter));
		spm_sorter_finish(st.sorter, st.writer);
		spm_writer_set_dims(st.writer, st.dims);
		spm_writer_finish(st.writer, &ref);

		buf = ReadBufferExtended(index, fork, SPM_METAPAGE_BLKNO, RBM_NORMAL, NULL);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		meta = SpmPageGetMeta(BufferGetPage(buf));
		meta->dims = st.dims;
		meta->segments[0] = ref;
		meta->nsegments = 1;
		meta->next_segment_id = 2;
		meta->next_docid = st.ndocs;
		meta->pending_docid_lo = st.ndocs;
		meta->flags |= spm_writer_flags(st.writer);
		meta->nterms_max = spm_writer_nterms(st.writer);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
	spm_sorter_end(st.sorter);

	/* WAL-log every page at once, as pgvector and the core AMs do */
	if (RelationNeedsWAL(index) || fork == INIT_FORKNUM)
		log_newpage_range(index, fork, 0,
						  RelationGetNumberOfBlocksInFork(index, fork), true);

	*indtuples = st.indtuples;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(buildCtx);
}

IndexBuildResult *
spmbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	double		reltuples = 0;
	double		indtuples = 0;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	if (indexInfo->ii_NumIndexAttrs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("sparse_maxscore indexes exactly one column")));

	build_index(heap, index, indexInfo, MAIN_FORKNUM, &reltuples, &indtuples);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = indtuples;
	return result;
}

/*
 * The init fork of an unlogged index: just the metapage.
 */
void
spmbuildempty(Relation index)
{
	double		reltuples = 0;
	double		indtuples = 0;

	build_index(NULL, index, NULL, INIT_FORKNUM, &reltuples, &indtuples);
}

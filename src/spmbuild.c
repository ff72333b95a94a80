/*-------------------------------------------------------------------------
 *
 * spmbuild.c
 *	  Bulk build (ambuild) and the init fork of unlogged indexes.
 *
 * The heap scan gives every row the next docid, in the order the scan
 * returns rows; its TID (and NULL flag) goes straight to the docmap of the
 * one segment being written.  Its postings (term, docid, weight) collect
 * in a batch of at most maintenance_work_mem.  Because docids ascend as
 * they are handed out, a stable sort of a batch by term alone leaves every
 * term's postings in docid order: a two-pass LSD radix sort on 16-bit
 * digits does it in linear time, with no comparisons.
 *
 * If the batches do not fit in memory, each full batch is sorted and
 * spilled to a temporary file as a "run" of (term, postings) groups.  Runs
 * cover ascending, disjoint docid ranges, so merging them needs no
 * comparison of docids either: for each term, in ascending term order,
 * the groups of that term are copied from the runs in run order.
 *
 * This departs from DESIGN.md section 4 (tuplesort over (term, docid,
 * weight) tuples): the radix sort uses 24 bytes per posting at its peak
 * instead of tuplesort's ~60, sorts in O(n) instead of O(n log n), and
 * spills through BufFile just as tuplesort would.  See doc/decisions.md.
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
#include "storage/buffile.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "spm.h"

typedef struct SpmPosting
{
	uint32		term;
	uint32		doc;
	float4		w;
} SpmPosting;

/* a posting as it sits in a run file, after its group header */
typedef struct SpmRunPosting
{
	uint32		doc;
	float4		w;
} SpmRunPosting;

typedef struct SpmRunGroup
{
	uint32		term;
	uint32		n;
} SpmRunGroup;

typedef struct SpmBuildState
{
	Relation	index;
	SpmWriter  *writer;
	int32		dims;
	uint32		ndocs;
	double		indtuples;

	SpmPosting *batch;
	SpmPosting *tmp;			/* radix-sort buffer */
	Size		nbatch;
	Size		maxbatch;
	uint32		maxterm;		/* largest term in the batch */
	uint64		npostings;		/* all postings so far */

	BufFile   **runs;
	int			nruns;
	int			maxruns;

	MemoryContext tmpCtx;		/* per-row */
} SpmBuildState;

#define SPM_CHUNK 2048			/* postings handed to the writer at once */

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

/* ---------------------------------------------------------------- sort */

/*
 * Stable sort of a[0..n) by term (docids already ascend), result in a.
 */
static void
sort_batch(SpmPosting *a, SpmPosting *tmp, Size n, uint32 maxterm)
{
	Size	   *count = palloc(65536 * sizeof(Size));
	int			passes = maxterm >= 65536 ? 2 : 1;
	SpmPosting *src = a;
	SpmPosting *dst = tmp;

	for (int pass = 0; pass < passes; pass++)
	{
		int			shift = pass * 16;
		Size		sum = 0;

		memset(count, 0, 65536 * sizeof(Size));
		for (Size i = 0; i < n; i++)
			count[(src[i].term >> shift) & 0xFFFF]++;
		for (int d = 0; d < 65536; d++)
		{
			Size		c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (Size i = 0; i < n; i++)
			dst[count[(src[i].term >> shift) & 0xFFFF]++] = src[i];
		src = dst;
		dst = (dst == tmp) ? a : tmp;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(SpmPosting));
	pfree(count);
}

/* ---------------------------------------------------------------- runs */

static void
write_run(SpmBuildState *st)
{
	BufFile    *file;
	Size		i = 0;

	sort_batch(st->batch, st->tmp, st->nbatch, st->maxterm);
	file = BufFileCreateTemp(false);
	while (i < st->nbatch)
	{
		SpmRunGroup g;
		Size		j = i;

		while (j < st->nbatch && st->batch[j].term == st->batch[i].term)
			j++;
		g.term = st->batch[i].term;
		g.n = (uint32) (j - i);
		BufFileWrite(file, &g, sizeof(g));
		for (; i < j; i++)
		{
			SpmRunPosting p;

			p.doc = st->batch[i].doc;
			p.w = st->batch[i].w;
			BufFileWrite(file, &p, sizeof(p));
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		elog(ERROR, "could not rewind sparse_maxscore build run");

	if (st->nruns == st->maxruns)
	{
		st->maxruns *= 2;
		st->runs = repalloc(st->runs, st->maxruns * sizeof(BufFile *));
	}
	st->runs[st->nruns++] = file;
	st->nbatch = 0;
	st->maxterm = 0;
}

static void
read_exact(BufFile *file, void *buf, Size len)
{
	if (BufFileRead(file, buf, len) != len)
		elog(ERROR, "could not read sparse_maxscore build run");
}

/* feed the sorted in-memory batch to the writer */
static void
write_batch(SpmBuildState *st)
{
	uint32		docs[SPM_CHUNK];
	float		ws[SPM_CHUNK];
	Size		i = 0;

	sort_batch(st->batch, st->tmp, st->nbatch, st->maxterm);
	while (i < st->nbatch)
	{
		uint32		term = st->batch[i].term;

		spm_writer_term_begin(st->writer, term);
		while (i < st->nbatch && st->batch[i].term == term)
		{
			int			n = 0;

			while (n < SPM_CHUNK && i < st->nbatch && st->batch[i].term == term)
			{
				docs[n] = st->batch[i].doc;
				ws[n] = st->batch[i].w;
				n++;
				i++;
			}
			spm_writer_postings(st->writer, docs, ws, n);
		}
		spm_writer_term_end(st->writer);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, i);
		CHECK_FOR_INTERRUPTS();
	}
}

/* merge the runs into the writer, term by term */
static void
merge_runs(SpmBuildState *st)
{
	SpmRunGroup *head = palloc(st->nruns * sizeof(SpmRunGroup));
	bool	   *live = palloc(st->nruns * sizeof(bool));
	SpmRunPosting *buf = palloc(SPM_CHUNK * sizeof(SpmRunPosting));
	uint32		docs[SPM_CHUNK];
	float		ws[SPM_CHUNK];
	uint64		done = 0;

	for (int r = 0; r < st->nruns; r++)
		live[r] = BufFileRead(st->runs[r], &head[r], sizeof(SpmRunGroup)) ==
			sizeof(SpmRunGroup);

	for (;;)
	{
		uint32		term = PG_UINT32_MAX;
		bool		any = false;

		for (int r = 0; r < st->nruns; r++)
		{
			if (live[r] && (!any || head[r].term < term))
			{
				term = head[r].term;
				any = true;
			}
		}
		if (!any)
			break;

		spm_writer_term_begin(st->writer, term);
		for (int r = 0; r < st->nruns; r++)
		{
			uint32		left;

			if (!live[r] || head[r].term != term)
				continue;
			left = head[r].n;
			while (left > 0)
			{
				uint32		n = Min(left, SPM_CHUNK);

				read_exact(st->runs[r], buf, n * sizeof(SpmRunPosting));
				for (uint32 i = 0; i < n; i++)
				{
					docs[i] = buf[i].doc;
					ws[i] = buf[i].w;
				}
				spm_writer_postings(st->writer, docs, ws, n);
				left -= n;
				done += n;
			}
			live[r] = BufFileRead(st->runs[r], &head[r], sizeof(SpmRunGroup)) ==
				sizeof(SpmRunGroup);
		}
		spm_writer_term_end(st->writer);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
		CHECK_FOR_INTERRUPTS();
	}

	for (int r = 0; r < st->nruns; r++)
		BufFileClose(st->runs[r]);
	pfree(head);
	pfree(live);
	pfree(buf);
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
		spm_writer_doc(st->writer, tid, SPM_DOC_NULL);
	else
	{
		SparseVector *v = DatumGetSparseVectorP(values[0]);
		float	   *vals = SPV_VALUES(v);

		SpmCheckVector(index, v, &st->dims);
		spm_writer_doc(st->writer, tid, 0);
		for (int i = 0; i < v->nnz; i++)
		{
			SpmPosting *p;

			if (st->nbatch == st->maxbatch)
				write_run(st);
			p = &st->batch[st->nbatch++];
			p->term = (uint32) v->indices[i];
			p->doc = doc;
			p->w = vals[i];
			st->npostings++;
			st->maxterm = Max(st->maxterm, p->term);
		}
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
	Size		mem;

	buildCtx = AllocSetContextCreate(CurrentMemoryContext,
									 "sparse_maxscore build",
									 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(buildCtx);

	write_empty_meta(index, fork);

	memset(&st, 0, sizeof(st));
	st.index = index;
	st.tmpCtx = AllocSetContextCreate(buildCtx, "sparse_maxscore build row",
									  ALLOCSET_DEFAULT_SIZES);
	/* the batch and its radix buffer share maintenance_work_mem */
	mem = (Size) maintenance_work_mem * 1024;
	st.maxbatch = Max(mem / (2 * sizeof(SpmPosting)), 65536);
	st.maxbatch = Min(st.maxbatch, MaxAllocHugeSize / sizeof(SpmPosting));
	st.batch = palloc_extended(st.maxbatch * sizeof(SpmPosting), MCXT_ALLOC_HUGE);
	st.tmp = palloc_extended(st.maxbatch * sizeof(SpmPosting), MCXT_ALLOC_HUGE);
	st.maxruns = 16;
	st.runs = palloc(st.maxruns * sizeof(BufFile *));
	st.writer = spm_writer_begin(index, fork, false, 1, 0);

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
									 st.npostings);
		if (st.nruns == 0)
			write_batch(&st);
		else
		{
			if (st.nbatch > 0)
				write_run(&st);
			pfree(st.batch);
			pfree(st.tmp);
			st.batch = st.tmp = NULL;
			merge_runs(&st);
		}
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
		meta->sum_df_squared = spm_writer_sum_df_squared(st.writer);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}

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

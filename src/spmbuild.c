/*-------------------------------------------------------------------------
 *
 * spmbuild.c
 *	  Bulk build (ambuild) and the init fork of unlogged indexes.
 *
 * The heap is the document source of one segment written by the write
 * pipeline (spmpipeline.c, README "Writing a segment"): the heap scan gives
 * every row the next docid, in the order the scan returns rows; the
 * pipeline puts its TID (and NULL flag) in the segment's docmap and its
 * postings (term, docid, weight) through a sorter limited to
 * maintenance_work_mem.
 *
 * With reorder = on the documents do not go to the writer as they come:
 * they wait in a temporary file, a batch at a time, and go in the order
 * spm_reorder_bisect (spmreorder.c) gives them, so docids follow that
 * order instead of the heap's (src/README "Reordering").
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
#include "spmwrite.h"
#include "spmreorder.h"

/*
 * The batch of documents waiting to be reordered: each document in the
 * file as (tid, flags, nnz, indices, values); in memory where it is and
 * its signature for spm_reorder_bisect.  Documents without elements (NULL
 * rows, empty vectors) take no part: they follow the batch's others.
 */
typedef struct SpmReorderBatch
{
	BufFile    *file;
	Size		budget;			/* bytes for the arrays below and the
								 * kernel's per-document work memory */
	uint32		n;				/* documents in the batch */
	uint32		cap;
	int		   *fileno;			/* [cap] where document i starts */
	off_t	   *offset;			/* [cap] */
	bool	   *empty;			/* [cap] */
	uint32	   *off;			/* [cap + 1] signatures of the non-empty
								 * documents, in terms[] */
	uint32	   *terms;
	uint32		nsig;			/* non-empty documents */
	uint32		terms_cap;
	int32	   *idx;			/* a document read back */
	float	   *vals;
	int32		elems_cap;
} SpmReorderBatch;

/* the heap as the build's document source (spmpipeline.c) */
typedef struct SpmBuildState
{
	SpmSource	src;			/* first: the pipeline sees only this */
	Relation	heap;
	Relation	index;
	IndexInfo  *indexInfo;
	double		reltuples;
	SpmSink    *sink;			/* while the heap is read */
	int32		dims;
	double		indtuples;
	MemoryContext tmpCtx;		/* per-row */
	SpmReorderBatch *reorder;	/* NULL unless reorder = on */
} SpmBuildState;

/* ---------------------------------------------------------------- scan */

/* the next document, with the next docid */
static void
build_emit(SpmBuildState *st, ItemPointer tid, uint8 flags,
		   const int32 *idx, const float *vals, int32 nnz)
{
	/* known from the first vector on, before its elements */
	spm_sink_set_dims(st->sink, st->dims);
	spm_sink_doc(st->sink, tid, flags, idx, vals, nnz);
}

/*
 * Bytes of batch memory per document of capacity: its place in the file,
 * its signature offset, and the kernel's permutation, gain and log table
 * (and reorder_flush's sigdoc).  Term numbers take 4 bytes each.  Not
 * counted: the kernel's degree arrays (512 kB) and one document read back.
 */
#define REORDER_DOC_BYTES	(sizeof(int) + sizeof(off_t) + sizeof(bool) + \
							 3 * sizeof(uint32) + sizeof(double) + sizeof(float))

static Size
reorder_bytes(uint32 cap, uint32 terms_cap)
{
	return (Size) cap * REORDER_DOC_BYTES + (Size) terms_cap * sizeof(uint32);
}

/*
 * The batch's budget is at most 4 GB, which keeps its counts within
 * uint32; its arrays may pass 1 GB (MaxAllocSize), so they are "huge"
 * allocations.
 */
#define REORDER_MAX_BUDGET	((Size) 4 * 1024 * 1024 * 1024)

static SpmReorderBatch *
reorder_begin(Size budget)
{
	SpmReorderBatch *b = palloc0(sizeof(SpmReorderBatch));

	b->budget = Min(budget, REORDER_MAX_BUDGET);
	b->cap = 1024;
	b->fileno = palloc(b->cap * sizeof(int));
	b->offset = palloc(b->cap * sizeof(off_t));
	b->empty = palloc(b->cap * sizeof(bool));
	b->off = palloc((b->cap + 1) * sizeof(uint32));
	b->terms_cap = b->cap * SPM_REORDER_TERMS;
	b->terms = palloc(b->terms_cap * sizeof(uint32));
	b->off[0] = 0;
	return b;
}

static void
read_exact(BufFile *file, void *buf, Size len)
{
	spm_buffile_read_exact(file, buf, len, "sparse_maxscore reorder temporary file");
}

/*
 * Reorder the batch and hand its documents on: the non-empty ones in the
 * kernel's order, then the others in the order they came.
 */
static void
reorder_flush(SpmBuildState *st)
{
	SpmReorderBatch *b = st->reorder;
	uint32	   *perm;
	uint32	   *sigdoc;			/* non-empty document k is batch document
								 * sigdoc[k] */
	uint32		k = 0;

	if (b->n == 0)
		return;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 PROGRESS_SPM_PHASE_REORDER);
	perm = palloc_extended((Size) Max(b->nsig, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	sigdoc = palloc_extended((Size) Max(b->nsig, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < b->n; i++)
		if (!b->empty[i])
			sigdoc[k++] = i;
	Assert(k == b->nsig);
	spm_reorder_bisect(b->nsig, b->off, b->terms, SPM_REORDER_TERM_SPACE,
					   SPM_RANGE_DOCS, SPM_REORDER_ITERS, perm);

	for (uint32 pass = 0; pass < 2; pass++)
	{
		uint32		count = pass == 0 ? b->nsig : b->n;

		for (uint32 i = 0; i < count; i++)
		{
			uint32		d = pass == 0 ? sigdoc[perm[i]] : i;
			ItemPointerData tid;
			uint8		flags;
			int32		nnz;

			if (pass == 1 && !b->empty[d])
				continue;
			if (BufFileSeek(b->file, b->fileno[d], b->offset[d], SEEK_SET) != 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not seek in sparse_maxscore reorder temporary file")));
			read_exact(b->file, &tid, sizeof(tid));
			read_exact(b->file, &flags, sizeof(flags));
			read_exact(b->file, &nnz, sizeof(nnz));
			if (nnz < 0 || nnz > SPV_MAX_DIM || (nnz == 0) != b->empty[d])
				elog(ERROR, "sparse_maxscore: reorder temporary file is corrupted");
			if (nnz > b->elems_cap)
			{
				b->elems_cap = Max(nnz, 2 * b->elems_cap);
				if (b->idx)
				{
					pfree(b->idx);
					pfree(b->vals);
				}
				b->idx = palloc((Size) b->elems_cap * sizeof(int32));
				b->vals = palloc((Size) b->elems_cap * sizeof(float));
			}
			read_exact(b->file, b->idx, (Size) nnz * sizeof(int32));
			read_exact(b->file, b->vals, (Size) nnz * sizeof(float));
			build_emit(st, &tid, flags, b->idx, b->vals, nnz);
			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	pfree(sigdoc);
	pfree(perm);

	BufFileClose(b->file);
	b->file = NULL;
	b->n = 0;
	b->nsig = 0;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 PROGRESS_SPM_PHASE_LOAD);
}

/* the positions of the (up to) SPM_REORDER_TERMS largest |vals|, in nsel */
static int
signature(const float *vals, int32 nnz, int *sel)
{
	int			n = 0;

	/* sel[] sorted by |weight| descending; ties keep the earlier element */
	for (int i = 0; i < nnz; i++)
	{
		float		a = fabsf(vals[i]);
		int			j;

		if (n == SPM_REORDER_TERMS && !(a > fabsf(vals[sel[n - 1]])))
			continue;
		j = n < SPM_REORDER_TERMS ? n++ : n - 1;
		while (j > 0 && a > fabsf(vals[sel[j - 1]]))
		{
			sel[j] = sel[j - 1];
			j--;
		}
		sel[j] = i;
	}
	return n;
}

/* queue a document for reordering (flushing the batch first if full) */
static void
reorder_add(SpmBuildState *st, ItemPointer tid, uint8 flags,
			const int32 *idx, const float *vals, int32 nnz)
{
	SpmReorderBatch *b = st->reorder;
	int			sel[SPM_REORDER_TERMS];
	int			nsel = nnz > 0 ? signature(vals, nnz, sel) : 0;

	/* a batch grows by doubling its arrays, and ends where that would
	 * pass its budget */
	if (b->n == b->cap && reorder_bytes(2 * b->cap, b->terms_cap) > b->budget)
		reorder_flush(st);
	if (b->off[b->nsig] + nsel > b->terms_cap &&
		reorder_bytes(b->cap, 2 * b->terms_cap) > b->budget)
		reorder_flush(st);
	if (b->file == NULL)
		b->file = BufFileCreateTemp(false);
	if (b->n == b->cap)
	{
		b->cap *= 2;
		b->fileno = repalloc_huge(b->fileno, (Size) b->cap * sizeof(int));
		b->offset = repalloc_huge(b->offset, (Size) b->cap * sizeof(off_t));
		b->empty = repalloc_huge(b->empty, (Size) b->cap * sizeof(bool));
		b->off = repalloc_huge(b->off, ((Size) b->cap + 1) * sizeof(uint32));
	}
	if (b->off[b->nsig] + nsel > b->terms_cap)
	{
		b->terms_cap *= 2;
		b->terms = repalloc_huge(b->terms, (Size) b->terms_cap * sizeof(uint32));
	}

	BufFileTell(b->file, &b->fileno[b->n], &b->offset[b->n]);
	BufFileWrite(b->file, tid, sizeof(ItemPointerData));
	BufFileWrite(b->file, &flags, sizeof(flags));
	BufFileWrite(b->file, &nnz, sizeof(nnz));
	BufFileWrite(b->file, (void *) idx, (Size) nnz * sizeof(int32));
	BufFileWrite(b->file, (void *) vals, (Size) nnz * sizeof(float));
	b->empty[b->n] = nnz == 0;
	if (nnz > 0)
	{
		uint32		o = b->off[b->nsig];

		for (int i = 0; i < nsel; i++)
			b->terms[o + i] = (uint32) idx[sel[i]] % SPM_REORDER_TERM_SPACE;
		/* the kernel wants distinct terms: drop those the modulus merged */
		if (st->dims > SPM_REORDER_TERM_SPACE)
		{
			int			m = 0;

			for (int i = 0; i < nsel; i++)
			{
				bool		dup = false;

				for (int j = 0; j < m && !dup; j++)
					dup = b->terms[o + j] == b->terms[o + i];
				if (!dup)
					b->terms[o + m++] = b->terms[o + i];
			}
			nsel = m;
		}
		b->off[b->nsig + 1] = o + nsel;
		b->nsig++;
	}
	b->n++;
}

static void
reorder_end(SpmReorderBatch *b)
{
	if (b->file)
		BufFileClose(b->file);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	SpmBuildState *st = (SpmBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(st->tmpCtx);
	SparseVector *v = NULL;

	if (!isnull[0])
	{
		v = DatumGetSparseVectorP(values[0]);
		SpmCheckVector(index, v, &st->dims);
	}
	if (st->reorder)
	{
		/* the batch's memory is not the row's */
		MemoryContextSwitchTo(old);
		if (v)
			reorder_add(st, tid, 0, v->indices, SPV_VALUES(v), v->nnz);
		else
			reorder_add(st, tid, SPM_DOC_NULL, NULL, NULL, 0);
	}
	else if (v)
		build_emit(st, tid, 0, v->indices, SPV_VALUES(v), v->nnz);
	else
		build_emit(st, tid, SPM_DOC_NULL, NULL, NULL, 0);
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

/* the source's documents: every row of the heap */
static void
build_documents(SpmSource *src, SpmSink *sink)
{
	SpmBuildState *st = (SpmBuildState *) src;

	st->sink = sink;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 PROGRESS_SPM_PHASE_LOAD);
	st->reltuples = table_index_build_scan(st->heap, st->index, st->indexInfo,
										   true, true, build_callback,
										   (void *) st, NULL);
	if (st->reorder)
	{
		reorder_flush(st);
		reorder_end(st->reorder);
	}
	st->sink = NULL;
}

static void
build_index(Relation heap, Relation index, IndexInfo *indexInfo,
			ForkNumber fork, double *reltuples, double *indtuples)
{
	MemoryContext buildCtx;
	MemoryContext old;

	buildCtx = AllocSetContextCreate(CurrentMemoryContext,
									 "sparse_maxscore build",
									 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(buildCtx);

	write_empty_meta(index, fork);

	/* the init fork of an unlogged index is just the metapage */
	if (heap != NULL)
	{
		SpmBuildState st;
		SpmWriteTarget target;
		SpmSegmentOut out;
		Size		mem = (Size) maintenance_work_mem * 1024;

		memset(&st, 0, sizeof(st));
		st.heap = heap;
		st.index = index;
		st.indexInfo = indexInfo;
		st.tmpCtx = AllocSetContextCreate(buildCtx, "sparse_maxscore build row",
										  ALLOCSET_DEFAULT_SIZES);
		/* with reorder = on, half of maintenance_work_mem is the batch's */
		if (spm_get_options(index)->reorder)
			st.reorder = reorder_begin(mem / 2);
		st.src.docid_lo = 0;
		st.src.ranges_ok = true;
		st.src.sort_mem = st.reorder ? mem / 2 : mem;
		st.src.progress = true;
		st.src.documents = build_documents;

		memset(&target, 0, sizeof(target));
		target.fork = fork;
		target.wal = false;		/* logged all at once below */
		target.segment_id = 1;
		spm_segment_write(index, &target, &st.src, &out);
		if (out.written)
		{
			SpmMetaPageData empty;
			SpmPublish	p;

			memset(&empty, 0, sizeof(empty));
			memset(&p, 0, sizeof(p));
			p.what = "build";
			p.fork = fork;
			p.wal = false;
			p.seen = &empty;
			p.seg = &out;
			p.numbered = out.ndocs;
			spm_publish(index, &p);
		}
		*reltuples = st.reltuples;
		*indtuples = st.indtuples;
	}

	/* WAL-log every page at once, as pgvector and the core AMs do */
	if (RelationNeedsWAL(index) || fork == INIT_FORKNUM)
		log_newpage_range(index, fork, 0,
						  RelationGetNumberOfBlocksInFork(index, fork), true);

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

/*-------------------------------------------------------------------------
 *
 * spmpending.c
 *	  The pending list: whole documents not yet in a segment.
 *
 * aminsert appends a document to the tail page of the list (GIN's "fast
 * update").  Its docid is its position: pending_docid_lo plus the number
 * of documents before it in the list, handed out under the metapage lock
 * at the moment the document is linked, so the list is always in docid
 * order and next_docid = pending_docid_lo + pending_ndocs.  A document that
 * does not fit on one page is a small head tuple plus continuation pages,
 * which are written (and WAL-logged) first and linked last, together with
 * the head, in one record: a reader never sees half a document.
 *
 * Scans score pending documents by brute force, with the same additions
 * spv_dot makes (ascending index order, double, from +0.0), so a pending
 * document scores bit for bit what it will score once flushed (for an
 * index of sparsevec_cosine_ops, against its weights divided by its norm,
 * spv_cosine_weight, as the writer stores them; for one of sparsevec_l2_ops,
 * with the norm posting the writer adds, spv_l2_norm_weight, as the last
 * product).  A reader
 * only considers documents with pending_docid_lo <= docid < next_docid of
 * its copy of the metapage; later ones were linked after it read the
 * metapage, by transactions its snapshot cannot see.  See README "Pending
 * list".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "utils/rel.h"

#include "spm.h"

/* elements per continuation chunk: a chunk fills one page */
#define SPM_CHUNK_ELEMS \
	((int) ((SPM_PAGE_CONTENT - MAXALIGN(sizeof(SpmPendingTupleData))) / \
			(sizeof(int32) + sizeof(float4))))

pg_noreturn static void pending_corrupt(Relation index, BlockNumber blkno);

static void
pending_corrupt(Relation index, BlockNumber blkno)
{
	/*
	 * Pending pages carry no segment id, so a standby that follows a stale
	 * link into a page replay has recycled meets someone else's tuples:
	 * that is a conflict with recovery, not corruption (README "Page
	 * recycling").
	 */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("A pending-list page of sparse_maxscore index \"%s\" was recycled while the query was reading it.",
						   RelationGetRelationName(index)),
				 errhint("Retry the query.  hot_standby_feedback avoids this.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" has a corrupted pending-list page at block %u",
					RelationGetRelationName(index), blkno),
			 errhint("REINDEX the index.")));
}

/*
 * Check blkno, the next page of a walk along the pending list: a link past
 * the end of the index, or a walk longer than the index (a cycle), is
 * corruption.  *nblocks caches the index's size (start with 0: the list
 * may have grown since it was read); *walked counts the pages (start 0).
 */
void
SpmPendingCheckLink(Relation index, BlockNumber blkno, BlockNumber *nblocks,
					BlockNumber *walked)
{
	if (blkno >= *nblocks)
		*nblocks = RelationGetNumberOfBlocks(index);
	if (blkno >= *nblocks || ++(*walked) > *nblocks)
		pending_corrupt(index, blkno);
}

/* the tuple at off of a pending page, checked to lie within pd_lower */
SpmPendingTuple
SpmPendingTupleAt(Relation index, Page page, BlockNumber blkno, Size off, Size lower)
{
	SpmPendingTuple t = (SpmPendingTuple) ((char *) page + off);

	if (off + sizeof(SpmPendingTupleData) > lower || t->nhere < 0 ||
		t->nhere > SPM_CHUNK_ELEMS ||
		off + SpmPendingTupleSize(t->nhere) > lower)
		pending_corrupt(index, blkno);
	return t;
}

/*
 * Walk the list from head (whose first document has docid docid_lo) and
 * show v every document with docid < docid_hi, in docid order; stop after
 * page last_page if it is valid.  If pages is not NULL, the numbers of the
 * pages walked are returned in a palloc'd array.  Pages are share-locked
 * one at a time while they are read.
 */
void
spm_pending_visit(Relation index, BlockNumber head, uint64 docid_lo,
				  uint64 docid_hi, BlockNumber last_page,
				  SpmPendingVisitor *v, BlockNumber **pages, int *npages)
{
	BlockNumber blkno = head;
	uint64		docid = docid_lo;	/* of the next document to start */
	bool		indoc = false;
	int32		nnz = 0;
	int32		seen = 0;
	bool		stop = false;
	int			cap = 16;
	BlockNumber nblocks = 0;
	BlockNumber walked = 0;
	int32		lastidx = -1;

	if (pages)
	{
		*pages = palloc(cap * sizeof(BlockNumber));
		*npages = 0;
	}

	while (blkno != InvalidBlockNumber && !stop)
	{
		Buffer		buf;
		Page		page;
		Size		off;
		Size		lower;
		BlockNumber next;

		SpmPendingCheckLink(index, blkno, &nblocks, &walked);

		if (pages)
		{
			if (*npages == cap)
			{
				cap *= 2;
				*pages = repalloc(*pages, cap * sizeof(BlockNumber));
			}
			(*pages)[(*npages)++] = blkno;
		}

		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_PENDING, 0);
		off = MAXALIGN(SizeOfPageHeaderData);
		lower = ((PageHeader) page)->pd_lower;

		while (off < lower)
		{
			SpmPendingTuple t = SpmPendingTupleAt(index, page, blkno, off, lower);

			if (!indoc)
			{
				if (t->flags & SPM_PT_CHUNK)
					pending_corrupt(index, blkno);
				if (docid >= docid_hi)
				{
					stop = true;	/* newer than the caller's metapage */
					break;
				}
				if (t->docid != docid || t->nnz < 0 ||
					(!(t->flags & SPM_PT_CONTINUED) && t->nhere != t->nnz))
					pending_corrupt(index, blkno);
				indoc = true;
				nnz = t->nnz;
				seen = 0;
				lastidx = -1;
				v->begin(v->arg, docid, &t->tid, t->flags, nnz);
			}
			else if (!(t->flags & SPM_PT_CHUNK))
				pending_corrupt(index, blkno);

			if (t->nhere > 0)
			{
				const int32 *idx = SpmPendingIndices(t);

				/* scoring merges in index order: a disorder would misscore */
				for (int i = 0; i < t->nhere; i++)
				{
					if (idx[i] <= lastidx)
						pending_corrupt(index, blkno);
					lastidx = idx[i];
				}
				v->elems(v->arg, idx, SpmPendingValues(t), t->nhere);
			}
			seen += t->nhere;
			off += SpmPendingTupleSize(t->nhere);

			if (!(t->flags & SPM_PT_CONTINUED))
			{
				if (seen != nnz)
					pending_corrupt(index, blkno);
				indoc = false;
				docid++;
				v->end(v->arg);
			}
		}
		next = SpmPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		if (blkno == last_page)
			break;
		blkno = next;
		CHECK_FOR_INTERRUPTS();
	}
	if (indoc && !stop)
		pending_corrupt(index, blkno);
}

/* ----------------------------------------------------------------
 * Scoring pending documents
 * ----------------------------------------------------------------
 */
/* queries of at most this many dimensions get a dense lookup table */
#define SPM_DENSE_QUERY_DIMS	(1 << 20)

typedef struct ScoreState
{
	const SparseVector *query;	/* NULL: every document scores 0 */
	float	   *dense;			/* query weight by index, or NULL */
	uint32		ndense;
	Relation	index;
	uint64		from_docid;
	bool		cosine;			/* SPM_KIND_COSINE: score the normalized
								 * document */
	bool		l2;				/* SPM_KIND_L2: add the norm posting's
								 * product (query weight 1) */
	/* the current document */
	bool		wanted;
	bool		isnull;
	uint64		docid;
	ItemPointerData tid;
	int			j;				/* position in the query */
	double		sum;
	int64		scored;			/* documents scored against the query */
	int32		nnz;			/* L2: the document's elements */
	/* cosine: the document's squared norm, its matches (q, w) in order */
	double		sqnorm;
	int			nmatch;
	float	   *match_q;		/* [query->nnz] */
	float	   *match_w;		/* [query->nnz] */
	/* where results go */
	SpmRowCallback cb;
	void	   *cbarg;
} ScoreState;

static void
score_begin(void *arg, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz)
{
	ScoreState *ss = arg;

	ss->wanted = docid >= ss->from_docid && !(flags & SPM_PT_DELETED);
	ss->isnull = (flags & SPM_PT_NULL) != 0;
	ss->docid = docid;
	ss->tid = *tid;
	ss->j = 0;
	ss->sum = 0.0;
	ss->sqnorm = 0.0;
	ss->nmatch = 0;
	ss->nnz = nnz;
}

/*
 * Cosine: the document's norm needs all its elements, so its matches wait
 * (in ascending index order) until score_end normalizes and adds them.
 */
static void
cosine_elems(ScoreState *ss, const int32 *idx, const float4 *val, int n)
{
	const SparseVector *q = ss->query;
	const int32 *qi = q->indices;
	const float *qv = SPV_VALUES(q);
	int			j = ss->j;

	for (int i = 0; i < n; i++)
	{
		ss->sqnorm = spv_norm_add(ss->sqnorm, val[i]);
		while (j < q->nnz && qi[j] < idx[i])
			j++;
		if (j < q->nnz && qi[j] == idx[i])
		{
			ss->match_q[ss->nmatch] = qv[j];
			ss->match_w[ss->nmatch] = val[i];
			ss->nmatch++;
			j++;
		}
	}
	ss->j = j;
}

/* spv_dot's additions, resumable across chunks */
static void
score_elems(void *arg, const int32 *idx, const float4 *val, int n)
{
	ScoreState *ss = arg;
	const SparseVector *q = ss->query;
	double		sum = ss->sum;

	if (!ss->wanted || q == NULL)
		return;
	if (ss->cosine)
	{
		cosine_elems(ss, idx, val, n);
		return;
	}
	/* L2: the squared norm, summed as the writer sums it */
	if (ss->l2)
	{
		for (int i = 0; i < n; i++)
			ss->sqnorm = spv_norm_add(ss->sqnorm, val[i]);
	}
	if (ss->dense)
	{
		/* same additions, in the document's (ascending) index order */
		for (int i = 0; i < n; i++)
		{
			float		w;

			if ((uint32) idx[i] >= ss->ndense)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("sparse_maxscore index \"%s\" has a pending document beyond its dimensions",
								RelationGetRelationName(ss->index))));
			w = ss->dense[idx[i]];
			if (w != 0.0f)
				sum = spv_score_add(sum, val[i], w);
		}
		ss->sum = sum;
		return;
	}
	ss->sum = spv_dot_continue(idx, val, n, q->indices, SPV_VALUES(q), q->nnz,
							   &ss->j, sum);
}

static void
score_end(void *arg)
{
	ScoreState *ss = arg;

	if (!ss->wanted)
		return;
	if (ss->cosine && ss->nmatch > 0)
	{
		/* the writer's weights: w / |d| in float4 */
		double		norm = sqrt(ss->sqnorm);
		double		sum = 0.0;

		for (int i = 0; i < ss->nmatch; i++)
			sum = spv_score_add(sum, ss->match_q[i],
								spv_cosine_weight(ss->match_w[i], norm));
		ss->sum = sum;
	}

	/*
	 * L2: the norm posting the writer adds after a document's elements, on
	 * a term past every query term but the norm's own (weight 1): the last
	 * addition of the canonical sum
	 */
	if (ss->l2 && !ss->isnull && ss->nnz > 0)
		ss->sum = spv_score_add(ss->sum, 1.0f,
								spv_l2_norm_weight(ss->sqnorm, ss->nnz));
	if (!ss->isnull && ss->query != NULL)
		ss->scored++;
	ss->cb(ss->cbarg, ss->isnull ? NAN : ss->sum, ss->docid, &ss->tid);
}

/*
 * Report every live pending document of meta's version with docid >=
 * from_docid to cb, in docid order, with its score against query as the
 * index of kind scores it (NaN for a NULL row; 0 for every other row when
 * query is NULL).  Returns the number of documents scored against the
 * query (live, not NULL; none when query is NULL), for
 * sparse_maxscore_last_scan().pending_scored.
 */
int64
spm_pending_scan(Relation index, const SpmMetaPageData *meta,
				 const SparseVector *query, SpmKind kind, uint64 from_docid,
				 SpmRowCallback cb, void *arg)
{
	ScoreState	ss;
	SpmPendingVisitor v = {score_begin, score_elems, score_end, &ss};

	if (meta->pending_ndocs == 0 || from_docid >= meta->next_docid)
		return 0;
	memset(&ss, 0, sizeof(ss));
	ss.query = query;
	ss.from_docid = from_docid;
	ss.cb = cb;
	ss.cbarg = arg;
	if (kind == SPM_KIND_COSINE && query != NULL)
	{
		ss.cosine = true;
		ss.match_q = palloc(Max(query->nnz, 1) * sizeof(float));
		ss.match_w = palloc(Max(query->nnz, 1) * sizeof(float));
	}
	ss.l2 = kind == SPM_KIND_L2 && query != NULL;

	/*
	 * A dense table of the query's weights makes scoring a lookup per
	 * element; indexed vectors all have meta->dims dimensions, which the
	 * scan has checked the query against.
	 */
	if (query && !ss.cosine && meta->dims > 0 && meta->dims <= SPM_DENSE_QUERY_DIMS &&
		query->dim == meta->dims && meta->pending_ndocs > 16)
	{
		const float *qv = SPV_VALUES(query);

		ss.dense = palloc0(meta->dims * sizeof(float));
		ss.ndense = (uint32) meta->dims;
		ss.index = index;
		for (int i = 0; i < query->nnz; i++)
			ss.dense[query->indices[i]] = qv[i];
	}
	spm_pending_visit(index, meta->pending_head, meta->pending_docid_lo,
					  meta->next_docid, InvalidBlockNumber, &v, NULL, NULL);
	if (ss.dense)
		pfree(ss.dense);
	if (ss.cosine)
	{
		pfree(ss.match_q);
		pfree(ss.match_w);
	}
	return ss.scored;
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
	if (!spm_phase_admits(ta->phase, score))
		return;
	if (spm_topk_admits(ta->topk, score, docid) &&
		spm_is_after(ta->after, score, docid))
		spm_topk_push(ta->topk, score, docid, tid);
}

/*
 * Offer every pending document whose score the phase admits (never a
 * NULL one), after the cursor, to the heap (with its TID).  Returns the number of documents scored.
 */
int64
spm_pending_topk(Relation index, const SpmMetaPageData *meta,
				 const SparseVector *query, SpmKind kind, SpmPhase phase,
				 const SpmAfter *after, SpmTopK *topk)
{
	TopkArg		ta;

	ta.phase = phase;
	ta.after = after;
	ta.topk = topk;
	return spm_pending_scan(index, meta, query, kind, 0, topk_emit, &ta);
}

/* ----------------------------------------------------------------
 * Appending
 * ----------------------------------------------------------------
 */

/* write tuple header + elements at pd_lower of page */
static void
put_tuple(Page page, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz,
		  const int32 *idx, const float4 *val, int nhere)
{
	PageHeader	phdr = (PageHeader) page;
	Size		size = SpmPendingTupleSize(nhere);
	SpmPendingTuple t = (SpmPendingTuple) ((char *) page + phdr->pd_lower);

	Assert((Size) (phdr->pd_upper - phdr->pd_lower) >= size);
	memset(t, 0, size);
	t->docid = docid;
	t->tid = *tid;
	t->flags = flags;
	t->nnz = nnz;
	t->nhere = nhere;
	if (nhere > 0)
	{
		memcpy(SpmPendingIndices(t), idx, nhere * sizeof(int32));
		memcpy(SpmPendingValues(t), val, nhere * sizeof(float4));
	}
	phdr->pd_lower += size;
}

static void
init_pending_page(Page page)
{
	SpmInitPage(page, SPM_PAGE_PENDING, 0);
	SpmPageGetOpaque(page)->xid = GetTopFullTransactionId();
}

/*
 * Write the continuation chunks of a document too large for one page on
 * new pages of their own, chained, each WAL-logged; they stay unreachable
 * until the caller links the first.  Their xid stamp tells VACUUM that they
 * are not orphans while this transaction runs.
 */
static void
write_chunks(Relation index, SparseVector *v, BlockNumber *first,
			 BlockNumber *last, int *npages)
{
	int32	   *idx = v->indices;
	float4	   *val = SPV_VALUES(v);
	int			done = 0;
	Buffer		cur = InvalidBuffer;

	*npages = 0;
	while (done < v->nnz)
	{
		int			n = Min(SPM_CHUNK_ELEMS, v->nnz - done);
		Buffer		buf = SpmNewBuffer(index, MAIN_FORKNUM);
		GenericXLogState *state;
		Page		page;
		ItemPointerData none;

		ItemPointerSetInvalid(&none);
		if (cur != InvalidBuffer)
		{
			/* link the previous chunk page to this one and write it */
			state = GenericXLogStart(index);
			page = GenericXLogRegisterBuffer(state, cur, 0);
			SpmPageGetOpaque(page)->next = BufferGetBlockNumber(buf);
			GenericXLogFinish(state);
			UnlockReleaseBuffer(cur);
		}
		else
			*first = BufferGetBlockNumber(buf);

		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
		init_pending_page(page);
		put_tuple(page, 0, &none,
				  SPM_PT_CHUNK | (done + n < v->nnz ? SPM_PT_CONTINUED : 0),
				  v->nnz, idx + done, val + done, n);
		GenericXLogFinish(state);
		cur = buf;
		done += n;
		(*npages)++;
		CHECK_FOR_INTERRUPTS();
	}
	*last = BufferGetBlockNumber(cur);
	UnlockReleaseBuffer(cur);
}

/*
 * Append a document (v, or NULL for a NULL row) for heap TID tid.
 * Returns the size of the pending list afterwards, in bytes.
 */
uint64
spm_pending_append(Relation index, SparseVector *v, ItemPointer tid)
{
	int32		nnz = v ? v->nnz : 0;
	bool		big = v && SpmPendingTupleSize(nnz) > SPM_PAGE_CONTENT;
	Size		size = SpmPendingTupleSize(big ? 0 : nnz);
	Size		docbytes = SpmPendingTupleSize(nnz);
	BlockNumber chunk_first = InvalidBlockNumber;
	BlockNumber chunk_last = InvalidBlockNumber;
	int			chunk_pages = 0;
	Buffer		newbuf = InvalidBuffer;
	Buffer		metabuf;
	uint64		bytes;
	bool		negative = false;

	for (int i = 0; v && i < nnz; i++)
		negative |= SPV_VALUES(v)[i] < 0;

	if (big)
		write_chunks(index, v, &chunk_first, &chunk_last, &chunk_pages);

	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	for (;;)
	{
		SpmMetaPage meta;
		Page		metapage;
		Buffer		tailbuf = InvalidBuffer;
		BlockNumber tail;
		bool		fits;
		GenericXLogState *state;
		Page		tailpage = NULL;
		Page		newpage = NULL;
		Page		headpage;
		uint64		docid;

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		metapage = BufferGetPage(metabuf);
		SpmCheckPage(index, metapage, SPM_METAPAGE_BLKNO, SPM_PAGE_META, 0);
		meta = SpmPageGetMeta(metapage);
		SpmCheckMeta(index, meta);

		if (v && meta->dims != 0 && v->dim != meta->dims)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("different sparsevec dimensions %d and %d",
							meta->dims, v->dim),
					 errdetail("Every vector in sparse_maxscore index \"%s\" must have %d dimensions.",
							   RelationGetRelationName(index), meta->dims),
					 errhint("Declare the column with a fixed dimension, for example sparsevec(%d).",
							 meta->dims)));

		tail = meta->pending_tail;
		fits = tail != InvalidBlockNumber && tail != meta->pending_sealed &&
			meta->pending_tail_free >= size;
		if (!fits && newbuf == InvalidBuffer)
		{
			/* get a page without holding the metapage lock, then retry */
			LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
			newbuf = SpmNewBuffer(index, MAIN_FORKNUM);
			continue;
		}

		/* lock order: metapage, tail page, new page */
		if (tail != InvalidBlockNumber)
		{
			tailbuf = ReadBuffer(index, tail);
			LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
		}

		state = GenericXLogStart(index);
		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
		meta = SpmPageGetMeta(metapage);
		if (tailbuf != InvalidBuffer)
		{
			tailpage = GenericXLogRegisterBuffer(state, tailbuf, 0);
			SpmCheckPage(index, tailpage, tail, SPM_PAGE_PENDING, 0);
		}
		if (fits)
		{
			if (PageGetExactFreeSpace(tailpage) < size)
				elog(ERROR, "sparse_maxscore index \"%s\": pending tail page %u has less room than the metapage says",
					 RelationGetRelationName(index), tail);
			headpage = tailpage;
		}
		else
		{
			newpage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
			init_pending_page(newpage);
			if (tailpage)
				SpmPageGetOpaque(tailpage)->next = BufferGetBlockNumber(newbuf);
			else
				meta->pending_head = BufferGetBlockNumber(newbuf);
			meta->pending_tail = BufferGetBlockNumber(newbuf);
			meta->pending_npages++;
			headpage = newpage;
		}

		docid = meta->next_docid;
		Assert(docid == meta->pending_docid_lo + meta->pending_ndocs);
		if (big)
		{
			put_tuple(headpage, docid, tid, SPM_PT_CONTINUED, nnz, NULL, NULL, 0);
			SpmPageGetOpaque(headpage)->next = chunk_first;
			meta->pending_tail = chunk_last;
			meta->pending_npages += chunk_pages;
			/* the last chunk page is full enough: start a new page next */
			meta->pending_tail_free = 0;
		}
		else
		{
			put_tuple(headpage, docid, tid, v ? 0 : SPM_PT_NULL, nnz,
					  v ? v->indices : NULL, v ? SPV_VALUES(v) : NULL, nnz);
			meta->pending_tail_free = PageGetExactFreeSpace(headpage);
		}
		meta->next_docid++;
		meta->pending_ndocs++;
		meta->pending_npostings += nnz;
		meta->pending_bytes += docbytes;
		if (!v)
			meta->pending_nnull++;
		else if (meta->dims == 0)
			meta->dims = v->dim;
		if (negative)
			meta->flags |= SPM_META_NEGATIVE;
		bytes = meta->pending_bytes;
		GenericXLogFinish(state);

		if (tailbuf != InvalidBuffer)
			UnlockReleaseBuffer(tailbuf);
		if (newbuf != InvalidBuffer)
		{
			UnlockReleaseBuffer(newbuf);
			/* a page taken in case the tail was full but not needed */
			if (fits)
				RecordFreeIndexPage(index, BufferGetBlockNumber(newbuf));
		}
		UnlockReleaseBuffer(metabuf);
		return bytes;
	}
}

/*-------------------------------------------------------------------------
 *
 * spmpipeline.c
 *	  The write pipeline: spm_segment_write writes a segment from any
 *	  document source, spm_publish alone changes the metapage's segment
 *	  list (README "Writing a segment").
 *
 * The build (the heap, spmbuild.c), the flush (the pending list,
 * spmflush.c) and merges (the input segments, spmmerge.c) are the three
 * sources.  Each pushes its documents in docid order into a sink, which
 * hands them to the segment writer (spmwrite.c) and, when the source does
 * not give its own posting lists, to a sorter (spmsort.c).  What the
 * segment gets is decided here, once, from the reloptions and the source:
 * range data (ranges = on, or auto and the documents call for it, and the
 * source allows it), exact or 1-byte
 * weights (quantize), the dimensions before the first document (the
 * forward copy's layout depends on them), and, for an index of
 * sparsevec_cosine_ops, each document's weights divided by its norm
 * (README "Cosine and L2"): the one per-document transformation, made on
 * the documents of the sources whose elements the sink sorts (the heap,
 * the pending list); a merge's posting lists and forward copies are
 * already stored so.  For an index of sparsevec_l2_ops the same sources'
 * documents get one more element, their norm posting (spm_l2_term, the
 * weight spv_l2_norm_weight), every segment has one dimension more than
 * the index's vectors, and the norm postings are never quantized.
 *
 * A change of the index's structure then takes the steps of README "Flush
 * and compaction": write (spm_segment_write), publish, drain, free (all
 * three in spm_publish).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/progress.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmwrite.h"

struct SpmSink
{
	SpmWriter  *writer;
	SpmSorter  *sorter;			/* NULL: the source gives the postings */
	bool		ranges;			/* the segment keeps a forward copy */
	int32		dims;
	uint64		ndocs;			/* documents so far: the next local docid */
	uint64		nlive;			/* of which not written dead */
	uint32		cur;			/* local docid of the current document */
	bool		curlive;		/* it has elements to keep */

	/*
	 * cosine: documents are normalized (spv_cosine_normalize), which needs
	 * all of a document's elements: a live document's begin waits here
	 * until its nnz elements are in, then goes to the writer whole.
	 */
	bool		cosine;
	MemoryContext cxt;			/* of the buffers (sources reset theirs) */
	ItemPointerData wait_tid;
	uint8		wait_flags;
	int32		wait_nnz;		/* elements of the waiting document, 0 if none */
	int32		wait_have;
	Size		wait_cap;
	int32	   *wait_idx;
	float	   *wait_val;

	/*
	 * L2: the index's segments have dims + 1 dimensions; l2 (a source whose
	 * documents are raw) adds to each document with elements its norm
	 * posting after its last element, which it sums meanwhile.
	 */
	SpmKind		kind;
	bool		l2;
	int32		l2_nnz;			/* elements of the current document */
	int32		l2_left;		/* of which still to come */
	double		l2_sum;			/* their squares so far (spv_norm_add) */
};

/* hand the writer and the sorter a document whose elements are all here */
static void
sink_put(SpmSink *sink, const int32 *idx, const float *val, int n)
{
	spm_writer_doc_elems(sink->writer, idx, val, n);
	if (sink->sorter)
	{
		for (int i = 0; i < n; i++)
			spm_sorter_add(sink->sorter, (uint32) idx[i], sink->cur, val[i]);
	}
}

/* ----------------------------------------------------------------
 * The sink: where a source's documents go
 * ----------------------------------------------------------------
 */

/*
 * The next document (the next local docid), whose nnz elements follow
 * through spm_sink_doc_elems or spm_sink_doc_fwd.  flags are SPM_DOC_*:
 * a NULL row or a document written dead keeps its docmap entry and no
 * elements, whatever nnz says.
 */
void
spm_sink_doc_begin(SpmSink *sink, ItemPointer tid, uint8 flags, int32 nnz)
{
	if (sink->wait_nnz > 0 || sink->l2_left > 0)
		elog(ERROR, "sparse_maxscore: a document began before the previous one had its elements");
	sink->curlive = !(flags & (SPM_DOC_NULL | SPM_DOC_DEAD));
	if (!(flags & SPM_DOC_DEAD))
		sink->nlive++;
	sink->cur = (uint32) sink->ndocs;
	sink->ndocs++;
	if (sink->cosine && sink->curlive && nnz > 0)
	{
		/* the writer gets it once its elements are in (spm_sink_doc_elems) */
		if ((Size) nnz > sink->wait_cap)
		{
			sink->wait_cap = Max((Size) nnz, 2 * sink->wait_cap);
			if (sink->wait_idx)
			{
				pfree(sink->wait_idx);
				pfree(sink->wait_val);
			}
			sink->wait_idx = MemoryContextAllocExtended(sink->cxt,
														sink->wait_cap * sizeof(int32),
														MCXT_ALLOC_HUGE);
			sink->wait_val = MemoryContextAllocExtended(sink->cxt,
														sink->wait_cap * sizeof(float),
														MCXT_ALLOC_HUGE);
		}
		sink->wait_tid = *tid;
		sink->wait_flags = flags;
		sink->wait_nnz = nnz;
		sink->wait_have = 0;
		return;
	}
	if (sink->l2 && sink->curlive && nnz > 0)
	{
		/* its elements, then its norm posting (spm_sink_doc_elems) */
		if (sink->dims <= 0)
			elog(ERROR, "sparse_maxscore: a document with elements before the index's dimensions");
		spm_writer_doc(sink->writer, tid, flags, nnz + 1);
		sink->l2_nnz = nnz;
		sink->l2_left = nnz;
		sink->l2_sum = 0.0;
		return;
	}
	spm_writer_doc(sink->writer, tid, flags, sink->curlive ? nnz : 0);
}

/* some of the current document's elements, in ascending term order */
void
spm_sink_doc_elems(SpmSink *sink, const int32 *idx, const float *val, int n)
{
	if (!sink->curlive)
		return;
	if (sink->cosine)
	{
		double		norm;

		if (n > sink->wait_nnz - sink->wait_have)
			elog(ERROR, "sparse_maxscore: a document has more elements than it said");
		memcpy(sink->wait_idx + sink->wait_have, idx, n * sizeof(int32));
		memcpy(sink->wait_val + sink->wait_have, val, n * sizeof(float));
		sink->wait_have += n;
		if (sink->wait_have < sink->wait_nnz)
			return;
		norm = spv_cosine_normalize(sink->wait_val, sink->wait_val,
									sink->wait_nnz);
		spm_writer_doc(sink->writer, &sink->wait_tid, sink->wait_flags,
					   sink->wait_nnz);
		spm_writer_doc_scale(sink->writer, norm);
		sink->wait_nnz = 0;
		sink_put(sink, sink->wait_idx, sink->wait_val, sink->wait_have);
		return;
	}
	if (sink->l2)
	{
		int32		term;
		float		w;

		if (n > sink->l2_left)
			elog(ERROR, "sparse_maxscore: a document has more elements than it said");
		for (int i = 0; i < n; i++)
			sink->l2_sum = spv_norm_add(sink->l2_sum, val[i]);
		sink_put(sink, idx, val, n);
		sink->l2_left -= n;
		if (sink->l2_left > 0 || n == 0)
			return;
		/* the last element is in: the norm posting follows it */
		term = (int32) spm_l2_term(sink->dims);
		w = spv_l2_norm_weight(sink->l2_sum, sink->l2_nnz);
		sink_put(sink, &term, &w, 1);
		return;
	}
	sink_put(sink, idx, val, n);
}

/* the same as (term, weight) pairs, as a segment stores them (a merge) */
void
spm_sink_doc_fwd(SpmSink *sink, const SpmFwdElem *elems, int n)
{
	Assert(!sink->cosine && !sink->l2);
	if (!sink->curlive)
		return;
	spm_writer_doc_fwd(sink->writer, elems, n);
	if (sink->sorter)
	{
		for (int i = 0; i < n; i++)
			spm_sorter_add(sink->sorter, elems[i].term, sink->cur, elems[i].w);
	}
}

/* a whole document */
void
spm_sink_doc(SpmSink *sink, ItemPointer tid, uint8 flags,
			 const int32 *idx, const float *val, int32 nnz)
{
	spm_sink_doc_begin(sink, tid, flags, nnz);
	if (nnz > 0)
		spm_sink_doc_elems(sink, idx, val, nnz);
}

/*
 * The index's dimensions, when the source learns them (the build, at its
 * first vector): before the first document with elements.
 */
/*
 * A merge's input quantizes term at exponent exp (format 6): before the
 * first document (spm_writer_term_exp_floor)
 */
void
spm_sink_term_exp_floor(SpmSink *sink, uint32 term, int exp)
{
	spm_writer_term_exp_floor(sink->writer, term, exp);
}

void
spm_sink_set_dims(SpmSink *sink, int32 dims)
{
	if (dims == sink->dims)
		return;
	sink->dims = dims;
	/* L2: the norm postings' term is one more dimension */
	spm_writer_set_dims(sink->writer,
						sink->kind == SPM_KIND_L2 && dims > 0 ? dims + 1 : dims);
}

/*
 * Whether the sink needs the documents' elements: a merge, whose postings
 * come from its inputs' posting lists, reads its inputs' forward copies
 * only for a segment that keeps one.
 */
bool
spm_sink_wants_elements(const SpmSink *sink)
{
	return sink->sorter != NULL || sink->ranges;
}

uint64
spm_sink_ndocs(const SpmSink *sink)
{
	return sink->ndocs;
}

/* ----------------------------------------------------------------
 * Writing a segment
 * ----------------------------------------------------------------
 */

/*
 * The target of a write while the index is in use (a flush, a merge):
 * every page logged, the next segment id and the index's dimensions from
 * meta, new pages from the free space map.
 */
void
spm_target_online(SpmWriteTarget *target, const SpmMetaPageData *meta)
{
	memset(target, 0, sizeof(*target));
	target->fork = MAIN_FORKNUM;
	target->wal = true;
	target->segment_id = meta->next_segment_id;
	target->dims = meta->dims;
}

/*
 * Write the segment of src's documents: out->written is false, and
 * nothing is written, when none of them is alive (a flush of deleted
 * documents).  Nothing points at the segment until spm_publish.
 */
void
spm_segment_write(Relation index, const SpmWriteTarget *target,
				  SpmSource *src, SpmSegmentOut *out)
{
	SpmOptions *opts = spm_get_options(index);
	SpmSink		sink;

	memset(&sink, 0, sizeof(sink));
	memset(out, 0, sizeof(*out));
	sink.writer = spm_writer_begin(index, target->fork, target->wal,
								   target->segment_id, src->docid_lo);
	if (target->pref)
		spm_writer_prefer_pages(sink.writer, target->pref, target->npref,
								target->any_xid);
	else if (target->any_xid)
		spm_writer_extend_only(sink.writer);
	/*
	 * ranges = auto: a source whose documents the sink sorts (the heap,
	 * the pending list) lets the writer measure them and decide; a merge
	 * keeps range data when every input has it, as under on
	 */
	sink.ranges = opts->ranges != SPM_RANGES_OFF && src->ranges_ok;
	if (!sink.ranges)
		spm_writer_no_ranges(sink.writer);
	else if (opts->ranges == SPM_RANGES_AUTO && src->postings == NULL)
		spm_writer_ranges_auto(sink.writer);
	if (!opts->quantize)
		spm_writer_exact(sink.writer);
	sink.kind = spm_index_kind(index);
	/* L2: norm postings stay exact, so that their bounds are tight */
	if (sink.kind == SPM_KIND_L2)
		spm_writer_exact_last_term(sink.writer);
	spm_sink_set_dims(&sink, target->dims);
	if (src->postings == NULL)
		sink.sorter = spm_sorter_begin(src->sort_mem, src->progress);
	/* raw documents of a cosine index are normalized ("Cosine and L2") */
	sink.cosine = sink.kind == SPM_KIND_COSINE && src->postings == NULL;
	/* and those of an L2 index get their norm postings */
	sink.l2 = sink.kind == SPM_KIND_L2 && src->postings == NULL;
	sink.cxt = CurrentMemoryContext;

	src->documents(src, &sink);
	if (sink.wait_nnz > 0 || sink.l2_left > 0)
		elog(ERROR, "sparse_maxscore: the last document lacks elements");
	if (sink.wait_idx)
	{
		pfree(sink.wait_idx);
		pfree(sink.wait_val);
	}

	out->ndocs = sink.ndocs;
	if (sink.nlive > 0)
	{
		if (sink.sorter)
		{
			if (src->progress)
			{
				pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
											 PROGRESS_SPM_PHASE_WRITE);
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
											 spm_sorter_count(sink.sorter));
			}
			spm_sorter_finish(sink.sorter, sink.writer);
		}
		else
			src->postings(src, sink.writer);
		spm_writer_finish(sink.writer, &out->ref);
		out->written = true;
		out->flags = spm_writer_flags(sink.writer);
		if (sink.kind == SPM_KIND_COSINE)
			out->flags |= SPM_META_COSINE;
		else if (sink.kind == SPM_KIND_L2)
			out->flags |= SPM_META_L2;
		out->nterms = spm_writer_nterms(sink.writer);
		out->dims = sink.dims;
	}
	/* unwritten: gives back the pages it started (no buffer lock after) */
	spm_writer_free(sink.writer);
	if (sink.sorter)
		spm_sorter_end(sink.sorter);
}

/* ----------------------------------------------------------------
 * Publishing: the only code that changes the segment list
 * ----------------------------------------------------------------
 */

/* a change planned from seen, published in one logged record */
void
spm_publish_online(SpmPublish *p, const char *what,
				   const SpmMetaPageData *seen)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->fork = MAIN_FORKNUM;
	p->wal = true;
	p->seen = seen;
}

pg_noreturn static void changed_during(Relation index, const SpmPublish *p);

static void
changed_during(Relation index, const SpmPublish *p)
{
	elog(ERROR, "sparse_maxscore index \"%s\" changed during a %s",
		 RelationGetRelationName(index), p->what);
}

/*
 * Switch the index to its new structure in one metapage record (README
 * "Flush and compaction", step 2): segments [first, first + nremove) of
 * the list the caller planned from are replaced by the new segment, if
 * one was written; a flush also moves the pending list past the documents
 * it took, a build hands the docids it numbered.  Then, when old pages
 * are given, wait until no round can be reading them (the drain) and free
 * them.  Caller holds the structure lock (or builds the index).
 */
void
spm_publish(Relation index, const SpmPublish *p)
{
	const SpmMetaPageData *seen = p->seen;
	bool		add = p->seg != NULL && p->seg->written;
	Buffer		metabuf;
	GenericXLogState *state = NULL;
	SpmMetaPage meta;
	BlockNumber next = InvalidBlockNumber;
	int			tail;

	metabuf = ReadBufferExtended(index, p->fork, SPM_METAPAGE_BLKNO,
								 RBM_NORMAL, NULL);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SpmPageGetMeta(BufferGetPage(metabuf));

	/* the list and the pending pointers are as the caller planned */
	if (meta->nsegments != seen->nsegments ||
		p->first < 0 || p->nremove < 0 ||
		p->first + p->nremove > (int) meta->nsegments)
		changed_during(index, p);
	for (int i = p->first; i < p->first + p->nremove; i++)
	{
		if (meta->segments[i].segment_id != seen->segments[i].segment_id)
			changed_during(index, p);
	}
	tail = (int) meta->nsegments - p->first - p->nremove;
	if (p->first + (add ? 1 : 0) + tail > SPM_MAX_SEGMENTS)
		elog(ERROR, "sparse_maxscore index \"%s\": no room for a segment",
			 RelationGetRelationName(index));
	if (p->cut)
	{
		Buffer		sbuf;

		if (meta->pending_head != p->cut->head ||
			meta->pending_sealed != p->cut->sealed ||
			meta->pending_docid_lo != p->cut->docid_lo)
			changed_during(index, p);
		/* lock order: the metapage, then a pending page */
		sbuf = ReadBuffer(index, p->cut->sealed);
		LockBuffer(sbuf, BUFFER_LOCK_SHARE);
		SpmCheckPage(index, BufferGetPage(sbuf), p->cut->sealed,
					 SPM_PAGE_PENDING, 0);
		next = SpmPageGetOpaque(BufferGetPage(sbuf))->next;
		UnlockReleaseBuffer(sbuf);
	}

	if (p->wal)
	{
		state = GenericXLogStart(index);
		meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	}

	memmove(&meta->segments[p->first + (add ? 1 : 0)],
			&meta->segments[p->first + p->nremove],
			tail * sizeof(SpmSegmentRef));
	if (add)
	{
		meta->segments[p->first] = p->seg->ref;
		meta->flags |= p->seg->flags;
		/* its blocks may be packed: older libraries must not read it */
		meta->version = SPM_VERSION;
		meta->nterms_max = Max(meta->nterms_max, p->seg->nterms);
		if (meta->dims == 0)
			meta->dims = p->seg->dims;
	}
	meta->nsegments = p->first + (add ? 1 : 0) + tail;
	meta->next_segment_id++;
	meta->next_docid += p->numbered;
	meta->pending_docid_lo += p->numbered;
	if (p->cut)
	{
		const SpmPendingCut *c = p->cut;

		meta->pending_head = next;
		if (next == InvalidBlockNumber)
		{
			meta->pending_tail = InvalidBlockNumber;
			meta->pending_tail_free = 0;
		}
		meta->pending_sealed = InvalidBlockNumber;
		meta->pending_docid_lo += c->ndocs;
		meta->pending_ndocs -= c->ndocs;
		meta->pending_npostings -= c->npostings;
		meta->pending_bytes -= Min(meta->pending_bytes, c->bytes);
		meta->pending_npages -= Min(meta->pending_npages, c->npages);
		meta->pending_nnull -= c->nnull;
		meta->pending_ndead -= c->ndead;
	}

	if (state)
		GenericXLogFinish(state);
	else
		MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (p->nold > 0)
	{
		SpmDrainScans(index);
		SpmFreePages(index, p->old_pages, p->nold);
	}
}

/*
 * VACUUM cleared n more alive bits of segment s (meta is registered in
 * the record that clears them; README "Alive bits"): the only other
 * change to the segment list.
 */
void
spm_meta_count_dead(SpmMetaPage meta, int s, uint32 n)
{
	meta->segments[s].ndead += n;
}

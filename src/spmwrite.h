/*-------------------------------------------------------------------------
 *
 * spmwrite.h
 *	  sparse_maxscore: writing a segment (spmwrite.c) from postings sorted
 *	  by (term, docid) (spmsort.c).
 *
 * The build, the flush and merges write segments through this interface;
 * see src/README "Segments".
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMWRITE_H
#define SPMWRITE_H

#include "common/relpath.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "spmformat.h"

/* spmwrite.c: segment writer */
typedef struct SpmWriter SpmWriter;

#define SPM_DOC_NULL		0x01	/* NULL row: docmap entry, no postings */
#define SPM_DOC_DEAD		0x02	/* known dead: alive bit 0 */

extern SpmWriter *spm_writer_begin(Relation index, ForkNumber fork, bool wal,
								   uint32 segment_id, uint64 docid_lo);
extern void spm_writer_doc(SpmWriter *w, ItemPointer tid, uint8 flags,
						   int32 nnz);
extern void spm_writer_doc_scale(SpmWriter *w, double scale);
extern void spm_writer_doc_elems(SpmWriter *w, const int32 *idx,
								 const float *val, int n);
extern void spm_writer_doc_fwd(SpmWriter *w, const SpmFwdElem *elems, int n);
extern void spm_writer_no_ranges(SpmWriter *w);
extern void spm_writer_ranges_auto(SpmWriter *w);
extern void spm_writer_exact(SpmWriter *w);
extern void spm_writer_exact_last_term(SpmWriter *w);
extern void spm_writer_term_exp_floor(SpmWriter *w, uint32 term, int exp);
extern void spm_writer_set_dims(SpmWriter *w, int32 dims);
extern void spm_writer_term_begin(SpmWriter *w, uint32 term);
extern void spm_writer_postings(SpmWriter *w, const uint32 *docids,
								const float *weights, int n);
extern void spm_writer_postings_bounds(SpmWriter *w, const uint32 *docids,
									   const float *weights,
									   const int16 *exps, int n);
extern void spm_writer_term_end(SpmWriter *w);
extern void spm_writer_finish(SpmWriter *w, SpmSegmentRef *ref);
extern uint32 spm_writer_flags(SpmWriter *w);
extern uint32 spm_writer_nterms(SpmWriter *w);
extern void spm_writer_free(SpmWriter *w);
extern void spm_writer_prefer_pages(SpmWriter *w, const BlockNumber *pages,
									int n, bool any_xid);
extern void spm_writer_extend_only(SpmWriter *w);

/*
 * spmpipeline.c: the write pipeline (README "Writing a segment").  A
 * source pushes its documents, in docid order, into a sink; the sink
 * hands them to the writer and, unless the source gives its own posting
 * lists in term order, to a sorter; spm_segment_write runs a source and
 * writes its segment, and spm_publish alone changes the metapage's
 * segment list.  The three sources: the heap (spmbuild.c), the pending
 * list (spmflush.c), the input segments of a merge (spmmerge.c).
 */
typedef struct SpmSink SpmSink;

typedef struct SpmSource SpmSource;
struct SpmSource
{
	uint64		docid_lo;		/* the segment's first docid */
	bool		ranges_ok;		/* false: no range data whatever the
								 * reloption (a merge of inputs without) */
	Size		sort_mem;		/* the sorter's memory (postings == NULL) */
	bool		progress;		/* report CREATE INDEX progress (the build) */
	/* push every document of the segment into the sink, in docid order */
	void		(*documents) (SpmSource *src, SpmSink *sink);
	/*
	 * NULL: the sink sorts the documents' elements into posting lists.
	 * Else: push the posting lists, in ascending term order, into w.
	 */
	void		(*postings) (SpmSource *src, SpmWriter *w);
};

/* where and how the segment is written */
typedef struct SpmWriteTarget
{
	ForkNumber	fork;			/* MAIN_FORKNUM but for an init fork */
	bool		wal;			/* log every page as written (not the build) */
	uint32		segment_id;
	int32		dims;			/* the index's dimensions, 0 if unknown yet */
	const BlockNumber *pref;	/* pages to use first (shrink), ascending */
	int			npref;
	bool		any_xid;		/* caller holds AccessExclusiveLock */
} SpmWriteTarget;

/* what spm_segment_write wrote */
typedef struct SpmSegmentOut
{
	bool		written;		/* false: no document was alive, no segment */
	SpmSegmentRef ref;			/* for the metapage's segment list */
	uint32		flags;			/* SPM_META_* flags the segment brings */
	uint32		nterms;
	int32		dims;
	uint64		ndocs;			/* documents pushed, alive or not */
} SpmSegmentOut;

extern void spm_sink_doc(SpmSink *sink, ItemPointer tid, uint8 flags,
						 const int32 *idx, const float *val, int32 nnz);
extern void spm_sink_doc_begin(SpmSink *sink, ItemPointer tid, uint8 flags,
							   int32 nnz);
extern void spm_sink_doc_elems(SpmSink *sink, const int32 *idx,
							   const float *val, int n);
extern void spm_sink_doc_fwd(SpmSink *sink, const SpmFwdElem *elems, int n);
extern void spm_sink_set_dims(SpmSink *sink, int32 dims);
extern void spm_sink_term_exp_floor(SpmSink *sink, uint32 term, int exp);
extern bool spm_sink_wants_elements(const SpmSink *sink);
extern uint64 spm_sink_ndocs(const SpmSink *sink);
extern void spm_target_online(SpmWriteTarget *target,
							  const SpmMetaPageData *meta);
extern void spm_segment_write(Relation index, const SpmWriteTarget *target,
							  SpmSource *src, SpmSegmentOut *out);

/* the pending documents a flush moved into its segment */
typedef struct SpmPendingCut
{
	BlockNumber head;			/* the list's head when it was read */
	BlockNumber sealed;			/* its last page read, sealed */
	uint64		docid_lo;
	uint64		ndocs;
	uint64		npostings;
	uint64		bytes;			/* as spm_pending_append counted them */
	uint32		npages;
	uint32		nnull;
	uint32		ndead;
} SpmPendingCut;

/* one change of the segment list (spm_publish) */
typedef struct SpmPublish
{
	const char *what;			/* "build", "flush", "merge": for errors */
	ForkNumber	fork;
	bool		wal;			/* GenericXLog (all but the build) */
	const SpmMetaPageData *seen;	/* the metapage the change was planned
									 * from: must still hold */
	int			first;			/* seen's segments [first, first + nremove) */
	int			nremove;		/* are replaced by */
	const SpmSegmentOut *seg;	/* the new segment, if written */
	const SpmPendingCut *cut;	/* a flush: pending documents moved */
	uint64		numbered;		/* a build: docids it handed out itself */
	const BlockNumber *old_pages;	/* freed once no round can read them */
	int			nold;
} SpmPublish;

extern void spm_publish_online(SpmPublish *p, const char *what,
							   const SpmMetaPageData *seen);
extern void spm_publish(Relation index, const SpmPublish *p);
extern void spm_meta_count_dead(SpmMetaPage meta, int s, uint32 n);

/* spmsort.c: postings sorted by (term, docid) for a writer */
typedef struct SpmSorter SpmSorter;

extern SpmSorter *spm_sorter_begin(Size mem, bool progress);
extern void spm_sorter_add(SpmSorter *s, uint32 term, uint32 doc, float4 w);
extern uint64 spm_sorter_count(SpmSorter *s);
extern void spm_sorter_finish(SpmSorter *s, SpmWriter *w);
extern void spm_sorter_end(SpmSorter *s);

#endif							/* SPMWRITE_H */

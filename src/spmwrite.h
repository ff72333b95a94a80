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
extern void spm_writer_doc_elems(SpmWriter *w, const int32 *idx,
								 const float *val, int n);
extern void spm_writer_doc_fwd(SpmWriter *w, const SpmFwdElem *elems, int n);
extern void spm_writer_no_ranges(SpmWriter *w);
extern void spm_writer_exact(SpmWriter *w);
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

/* spmsort.c: postings sorted by (term, docid) for a writer */
typedef struct SpmSorter SpmSorter;

extern SpmSorter *spm_sorter_begin(Size mem, bool progress);
extern void spm_sorter_add(SpmSorter *s, uint32 term, uint32 doc, float4 w);
extern uint64 spm_sorter_count(SpmSorter *s);
extern void spm_sorter_finish(SpmSorter *s, SpmWriter *w);
extern void spm_sorter_end(SpmSorter *s);

#endif							/* SPMWRITE_H */

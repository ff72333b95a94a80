/*-------------------------------------------------------------------------
 *
 * spm.h
 *	  sparse_maxscore: the access method's callbacks, GUCs and options, and
 *	  the index's internal entry points (pages, the metapage, flush, merge,
 *	  the pending list).
 *
 * The on-disk format is in spmformat.h, reading segments in spmsegment.h,
 * writing them in spmwrite.h; scoring a segment is behind spmsegscan.h,
 * the only code that sees the kernels (spmtraverse.h, spmrange.h).
 * src/README lists the files and their layers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPM_H
#define SPM_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

#include "sparsevec.h"
#include "spmcompat.h"
#include "spmformat.h"
#include "spmtopk.h"

/*
 * The heavyweight page-lock tag (LockPage) scan rounds share and structural
 * writers drain; no other code takes heavyweight page locks on our index.
 * One structural writer at a time is ensured by ShareUpdateExclusiveLock
 * on the index itself (SpmLockStructure).  See README "Locking".
 */
#define SPM_SCAN_LOCK		1

/* ----------------------------------------------------------------
 * Options, GUCs
 * ----------------------------------------------------------------
 */
typedef struct SpmOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	bool		fastupdate;		/* use the pending list */
	int			pendingListLimit;	/* kB, -1 = use the GUC */
	int			compactSegments;	/* compact when more segments than this */
	int			ranges;			/* SpmRangesOption: which new segments
								 * get range data (README "Ranges") */
	bool		reorder;		/* CREATE INDEX reorders docids (README
								 * "Reordering") */
	bool		quantize;		/* new segments without range data get
								 * 1-byte weights (README "Quantized
								 * weights") */
} SpmOptions;

/* the values of the reloption ranges */
typedef enum SpmRangesOption
{
	SPM_RANGES_AUTO,			/* where the segment's bounds say it pays
								 * (README "Ranges": "Which segments") */
	SPM_RANGES_ON,
	SPM_RANGES_OFF
} SpmRangesOption;

extern int	spm_initial_k;
extern int	spm_algorithm;	/* SpmAlgorithm (spmpolicy.h) */
extern int	spm_pending_list_limit;
extern int	spm_debug_round_delay;

/* progress phases of CREATE INDEX */
#define PROGRESS_SPM_PHASE_LOAD		2
#define PROGRESS_SPM_PHASE_SORT		3
#define PROGRESS_SPM_PHASE_WRITE	4
#define PROGRESS_SPM_PHASE_REORDER	5

/*
 * The distance an index serves, from its operator class (issue 39; src/README
 * "Cosine and L2").  An IP index stores the weights as they are; a COSINE
 * index each document's weights divided by its norm (spv_cosine_weight).
 */
typedef enum SpmKind
{
	SPM_KIND_IP = 0,			/* sparsevec_ip_ops: <#> */
	SPM_KIND_COSINE = 1,		/* sparsevec_cosine_ops: <=> */
	SPM_KIND_L2 = 2				/* sparsevec_l2_ops: <->, with a norm posting
								 * per document (spm_l2_term) */
} SpmKind;

/*
 * L2: the term of a document's norm posting (-|d|^2 / 2), just past the
 * index's dimensions; segments of an L2 index have one dimension more
 * than their vectors (README "Cosine and L2").
 */
#define spm_l2_term(dims)	((uint32) (dims))

/* ----------------------------------------------------------------
 * Prototypes
 * ----------------------------------------------------------------
 */

/* spmoptions.c: GUCs, reloptions */
extern void spm_init(void);
extern bytea *spmoptions(Datum reloptions, bool validate);
extern SpmOptions *spm_get_options(Relation index);

/* spmlimit.c: the LIMIT above a scan */
extern int	SpmTakeLimitHint(Oid index);
extern void SpmInstallLimitHints(amgettuple_function gettuple);

/* spmutils.c: pages, the metapage, the structure lock, vector checks */
extern void SpmInitPage(Page page, SpmPageType type, uint32 segment_id);
extern void SpmCheckPage(Relation index, Page page, BlockNumber blkno,
						 SpmPageType type, uint32 segment_id);
extern void SpmReadMeta(Relation index, SpmMetaPageData *meta);
extern void SpmCheckMeta(Relation index, SpmMetaPage meta);
extern int	SpmFindSegment(const SpmMetaPageData *meta, uint64 docid);
extern void SpmLockStructure(Relation index);
extern bool SpmConditionalLockStructure(Relation index);
extern void SpmUnlockStructure(Relation index);
extern void SpmDrainScans(Relation index);
extern void SpmCheckVector(Relation index, SparseVector *v, int32 *dims);

/* spmpage.c: page allocation and recycling */
extern Buffer SpmNewBuffer(Relation index, ForkNumber forknum);
extern Buffer SpmExtendBuffer(Relation index, ForkNumber forknum);
extern bool SpmPageIsRecyclable(Page page, bool any_xid);
extern void SpmFreePages(Relation index, const BlockNumber *pages, int n);
extern void SpmRecycleFreed(Relation index);

/* spmflush.c: flush (and the entry points that flush, then merge) */
extern int64 spm_flush_locked(Relation index, Size mem);
extern int64 spm_flush(Relation index, bool wait, bool vacuum);
extern int	spm_compact_all(Relation index);

/* spmmerge.c: merging segments, the tiered policy */
extern void spm_merge_segments(Relation index, int first, int last,
							   const BlockNumber *pref, int npref,
							   bool any_xid);
extern void spm_merge_smallest_pair(Relation index,
									const SpmMetaPageData *meta);
extern void spm_merge_tiered(Relation index, bool vacuum);

/* spmpending.c */
/* a row of a pass, with its score (NaN for a NULL row) and TID */
typedef void (*SpmRowCallback) (void *arg, double score, uint64 docid,
								ItemPointer tid);
/* both return the number of documents scored against the query */
extern int64 spm_pending_topk(Relation index, const SpmMetaPageData *meta,
							  const SparseVector *query, SpmKind kind,
							  SpmPhase phase, const SpmAfter *after,
							  SpmTopK *topk);
extern int64 spm_pending_scan(Relation index, const SpmMetaPageData *meta,
							  const SparseVector *query, SpmKind kind,
							  uint64 from_docid, SpmRowCallback cb, void *arg);
extern void SpmPendingCheckLink(Relation index, BlockNumber blkno,
								BlockNumber *nblocks, BlockNumber *walked);
extern SpmPendingTuple SpmPendingTupleAt(Relation index, Page page,
										 BlockNumber blkno, Size off,
										 Size lower);
extern uint64 spm_pending_append(Relation index, SparseVector *v,
								 ItemPointer tid);

/* a visitor of pending documents (spm_pending_visit) */
typedef struct SpmPendingVisitor
{
	/* a document starts; flags are its SPM_PT_* flags */
	void		(*begin) (void *arg, uint64 docid, ItemPointer tid,
						  uint16 flags, int32 nnz);
	/* some of its elements, in ascending index order */
	void		(*elems) (void *arg, const int32 *idx, const float4 *val, int n);
	/* the document is complete */
	void		(*end) (void *arg);
	void	   *arg;
} SpmPendingVisitor;

extern void spm_pending_visit(Relation index, BlockNumber head,
							  uint64 docid_lo, uint64 docid_hi,
							  BlockNumber last_page, SpmPendingVisitor *v,
							  BlockNumber **pages, int *npages);

/* spmbuild.c */
extern IndexBuildResult *spmbuild(Relation heap, Relation index,
								  struct IndexInfo *indexInfo);
extern void spmbuildempty(Relation index);

/* spminsert.c */
extern bool spminsert(Relation index, Datum *values, bool *isnull,
					  ItemPointer heap_tid, Relation heap,
					  IndexUniqueCheck checkUnique, bool indexUnchanged,
					  struct IndexInfo *indexInfo);

/* spmscan.c: the scan (rounds, tail phases), its counters */
extern SpmCounters spm_last_scan;
extern SpmSegLog spm_last_seglog;
extern bool spm_last_scan_valid;	/* false until a scan of this session ran */
extern IndexScanDesc spmbeginscan(Relation index, int nkeys, int norderbys);
extern void spmrescan(IndexScanDesc scan, ScanKey keys, int nkeys,
					  ScanKey orderbys, int norderbys);
extern bool spmgettuple(IndexScanDesc scan, ScanDirection dir);
extern void spmendscan(IndexScanDesc scan);

/* spmvacuum.c */
extern IndexBulkDeleteResult *spmbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *spmvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* spmcost.c */
extern void spmcostestimate(struct PlannerInfo *root, struct IndexPath *path,
							double loop_count, Cost *indexStartupCost,
							Cost *indexTotalCost, Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);

/* spmvalidate.c */
extern bool spmvalidate(Oid opclassoid);


extern SpmKind spm_index_kind(Relation index);

#endif							/* SPM_H */

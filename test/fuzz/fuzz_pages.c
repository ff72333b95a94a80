/*
 * fuzz_pages: the index's page readers (src/spmsegment.c, spmpending.c,
 * spmutils.c) on a relation made of arbitrary pages.
 *
 * The input is the relation's file: block i is bytes [i * BLCKSZ,
 * (i + 1) * BLCKSZ), at most 64 blocks; the seeds are real small indexes
 * (test/fuzz/README says how they were made).  The target reads the
 * metapage and then everything a scan, VACUUM or verify reads through the
 * readers' interface: every segment (header, directory, dictionary pages,
 * each term's skip entries through the cache, every posting block both
 * ways, the docmap, the bitsets, the page list) and the pending list,
 * scored against a query.
 *
 * Oracles: no crash, no read outside a page or of a page without its
 * buffer lock (AddressSanitizer; unlocked pages are poisoned), no loop
 * beyond the fuzzer's -timeout, no pin or lock left behind, and every
 * ERROR is index_corrupted (XX002) -- not an internal error, not a read
 * past the end of the relation, not an allocation beyond 1 GB.  Pages
 * whose header fails the server's own check (PageIsVerifiedExtended,
 * re-stated in fuzzpg.c) get its XX001 before the extension sees them.
 */
#include "fuzzpg.h"

#include "spm.h"
#include "spmblock.h"
#include "spmsegment.h"

#define MAX_PAGES	64
#define MAX_TERMS	200			/* terms walked per segment */
#define MAX_DOCS	4000		/* docmap entries read per segment */

extern int	LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

static const int allowed[] = {
	ERRCODE_INDEX_CORRUPTED,
	ERRCODE_DATA_CORRUPTED,		/* the server's own page header check */
	ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,	/* format version */
	0
};

static void
walk_segment(Relation rel, const SpmMetaPageData *meta, int i)
{
	SpmSegment *seg = SpmGetSegment(rel, meta, i);
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	SpmDictEntry *entries = palloc(SPM_DICT_PER_PAGE * sizeof(SpmDictEntry));
	uint8	   *bits = palloc(SPM_BITMAP_BYTES);
	uint32		docids[SPM_BLOCK_POSTINGS];
	float		weights[SPM_BLOCK_POSTINGS];
	double	   *acc = palloc0(SPM_WINDOW * sizeof(double));
	int			npages;
	int			terms = 0;
	BlockNumber *pages = SpmSegmentPages(rel, seg, &npages);

	for (int p = 0; p < npages; p++)
		if (pages[p] >= RelationGetNumberOfBlocks(rel))
			fuzz_fail("SpmSegmentPages lists block %u of %u", pages[p],
					  RelationGetNumberOfBlocks(rel));

	for (uint32 p = 0; p < seg->hdr.ndict && terms < MAX_TERMS; p++)
	{
		int			n = SpmReadDictPage(rel, seg, p, entries);

		for (int e = 0; e < n && terms < MAX_TERMS; e++, terms++)
		{
			const SpmTermData *td;
			SpmDictEntry found;

			if (!SpmLookupTerm(rel, seg, entries[e].term, &found))
				continue;		/* unsorted dictionary: not found */
			td = SpmGetTerm(rel, seg, entries[e].term);
			for (int b = 0; b < td->nblocks; b++)
			{
				uint32		base;

				int16		exp;

				/* both ends of quantized weights, in turn */
				SpmReadPostingBlock(rel, seg, td->blkno[b], td->off[b],
									td->count[b], td->last[b], b % 2 == 1,
									docids, weights, &exp, &pin);
				if (docids[td->count[b] - 1] != td->last[b])
					fuzz_fail("block ends at %u, skip entry says %u",
							  docids[td->count[b] - 1], td->last[b]);
				base = docids[0] & ~(uint32) (SPM_WINDOW - 1);
				if (td->last[b] - base < SPM_WINDOW)
					SpmAccumulatePostingBlock(rel, seg, td->blkno[b],
											  td->off[b], td->count[b],
											  td->last[b], b % 2 ? -1.0 : 1.0,
											  acc, base, &pin);
			}
		}
	}
	for (uint32 d = 0; d < seg->hdr.ndocs && d < MAX_DOCS; d++)
	{
		ItemPointerData tid;

		SpmGetTid(rel, seg, d, &tid, &pin);
	}
	for (uint32 p = 0; p < seg->hdr.nalive; p++)
		SpmReadBitsetPage(rel, seg, false, p, bits, &pin);
	for (uint32 p = 0; p < Max(seg->hdr.nnullmap, 1); p++)
		SpmReadBitsetPage(rel, seg, true, p, bits, &pin);
	SpmUnpin(&pin);
}

typedef struct VisitState
{
	uint64		docs;
	bool		indoc;
} VisitState;

static void
v_begin(void *arg, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz)
{
	VisitState *vs = arg;

	if (vs->indoc)
		fuzz_fail("pending document begins inside another");
	vs->indoc = true;
}

static void
v_elems(void *arg, const int32 *idx, const float4 *val, int n)
{
	if (!((VisitState *) arg)->indoc)
		fuzz_fail("pending elements outside a document");
}

static void
v_end(void *arg)
{
	VisitState *vs = arg;

	if (!vs->indoc)
		fuzz_fail("pending document ends twice");
	vs->indoc = false;
	vs->docs++;
}

static void
score_cb(void *arg, double score, uint64 docid, ItemPointer tid)
{
	uint64	   *n = arg;

	(*n)++;
}

static void
walk_pending(Relation rel, const SpmMetaPageData *meta)
{
	VisitState vs = {0, false};
	SpmPendingVisitor v = {v_begin, v_elems, v_end, &vs};
	BlockNumber *pages;
	int			npages;
	uint64		scored = 0;

	if (meta->pending_head == InvalidBlockNumber)
		return;
	spm_pending_visit(rel, meta->pending_head, meta->pending_docid_lo,
					  meta->next_docid, InvalidBlockNumber, &v, &pages,
					  &npages);
	if (vs.indoc)
		fuzz_fail("pending walk ended inside a document");

	/* score against a query of the index's dimensions */
	if (meta->dims >= 1 && meta->dims <= SPV_MAX_DIM)
	{
		SparseVector *q = spv_new(meta->dims, Min(meta->dims, 3));
		float	   *qv = SPV_VALUES(q);

		for (int i = 0; i < q->nnz; i++)
		{
			q->indices[i] = i * (meta->dims / q->nnz);
			qv[i] = 1.0f + i;
		}
		/* as an inner-product index scores, and as a cosine one does */
		spm_pending_scan(rel, meta, q, SPM_KIND_IP, meta->pending_docid_lo,
						 score_cb, &scored);
		spm_pending_scan(rel, meta, q, SPM_KIND_COSINE, meta->pending_docid_lo,
						 score_cb, &scored);
	}
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	Relation	rel;
	SpmMetaPageData meta;
	bool		ok;

	if (size < sizeof(PageHeaderData) || size > MAX_PAGES * BLCKSZ)
		return -1;
	fuzz_begin();
	rel = fuzz_relation(data, size, MAX_PAGES);

	FUZZ_TRY(ok, SpmReadMeta(rel, &meta));
	if (!ok)
		fuzz_check_error(allowed);
	else
	{
		SpmCacheNewRound();
		for (uint32 i = 0; i < meta.nsegments; i++)
		{
			FUZZ_TRY(ok, walk_segment(rel, &meta, (int) i));
			if (!ok)
				fuzz_check_error(allowed);
		}
		FUZZ_TRY(ok, walk_pending(rel, &meta));
		if (!ok)
			fuzz_check_error(allowed);
	}
	fuzz_end();
	return 0;
}

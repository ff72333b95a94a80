/*-------------------------------------------------------------------------
 *
 * spmmerge.c
 *	  Merging segments: replace adjacent segments by one holding their
 *	  alive documents, and the tiered policy that keeps the number of
 *	  segments logarithmic.
 *
 * A merge follows the steps of every structural change (README "Flush and
 * compaction"): write the new segment, publish it in one metapage record,
 * drain the scans, free the inputs' pages.  Callers hold the structure
 * lock.  Who merges when: spmflush.c (after a flush, and when the segment
 * list is full), spmvacuum.c (dead documents, compact_segments, shrink),
 * sparse_maxscore_compact().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmsegment.h"
#include "spmwrite.h"
#include "spmblock.h"

/* tiered merging: this many adjacent segments of one size level merge */
#define SPM_MERGE_FANIN		4
#define SPM_LEVEL_BASE		16384.0 /* postings of a level-0 segment */
/* the largest merge an inserting backend does (a few tenths of a second) */
#define SPM_INLINE_MERGE_POSTINGS	(2 * 1024 * 1024)

/* ----------------------------------------------------------------
 * Merging segments
 * ----------------------------------------------------------------
 */
typedef struct MergeInput
{
	SpmSegment *seg;
	SpmSegmentRef ref;
	uint8	   *alive;			/* copy of the alive bitset */
	uint8	   *nulls;			/* copy of the null bitset */
	/* dictionary cursor */
	SpmDictEntry *dict;
	int			ndict;
	int			pos;
	uint32		page;			/* next dictionary page to read */
	/* forward copy cursor (README "Ranges") */
	bool		fwd_started;
	uint64		fwd_pos;		/* next document's offset */
} MergeInput;

pg_noreturn static void fwd_corrupt(Relation index, MergeInput *x);

static void
fwd_corrupt(Relation index, MergeInput *x)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" is corrupted: invalid document in the forward copy of segment %u",
					RelationGetRelationName(index), x->seg->segment_id),
			 errhint("REINDEX the index.")));
}

/*
 * Pass the next document of input x (local docid d, alive or not) to the
 * writer if alive; the first call positions the cursor at d.  Its
 * elements must ascend inside dims.
 */
static void
merge_fwd_doc(Relation index, MergeInput *x, uint32 d, bool alive,
			  SpmWriter *w, ItemPointer tid, uint8 flags, SpmPin *pin,
			  SpmFwdElem **buf, int32 *cap)
{
	uint32		nnz;
	bool		fwd16 = (x->seg->hdr.flags & SPM_SEG_FWD16) != 0;

	if (!x->fwd_started)
	{
		x->fwd_pos = SpmRangeOffset(index, x->seg, d / SPM_RANGE_DOCS, pin);
		for (uint32 skip = d % SPM_RANGE_DOCS; skip > 0; skip--)
		{
			SpmReadStream(index, x->seg, SPM_STREAM_FWD, x->fwd_pos,
						  sizeof(uint32), &nnz, pin);
			x->fwd_pos += sizeof(uint32) + spm_fwd_elems_bytes(fwd16, nnz);
		}
		x->fwd_started = true;
	}
	SpmReadStream(index, x->seg, SPM_STREAM_FWD, x->fwd_pos, sizeof(uint32),
				  &nnz, pin);
	x->fwd_pos += sizeof(uint32);
	if (nnz > (uint32) PG_INT32_MAX)
		fwd_corrupt(index, x);
	if (!alive)
	{
		x->fwd_pos += spm_fwd_elems_bytes(fwd16, nnz);
		spm_writer_doc(w, tid, flags, 0);
		return;
	}
	if ((int32) nnz > *cap)
	{
		*cap = Max((int32) nnz, 2 * *cap);
		*buf = repalloc(*buf, *cap * sizeof(SpmFwdElem));
	}
	x->fwd_pos = SpmReadFwdElems(index, x->seg, x->fwd_pos, nnz, *buf, pin);
	for (uint32 i = 0; i < nnz; i++)
	{
		if ((i > 0 && (*buf)[i].term <= (*buf)[i - 1].term) ||
			(*buf)[i].term >= (uint32) x->seg->hdr.dims)
			fwd_corrupt(index, x);
	}
	spm_writer_doc(w, tid, flags, (int32) nnz);
	spm_writer_doc_fwd(w, *buf, (int32) nnz);
}

static inline bool
bit_is_set(const uint8 *bits, uint32 i)
{
	return (bits[i / 8] >> (i % 8)) & 1;
}

static void
read_bitset(Relation index, MergeInput *in, bool nulls, uint8 *dst)
{
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	uint32		npages = nulls ? in->seg->hdr.nnullmap : in->seg->hdr.nalive;
	uint32		nbytes = (in->seg->hdr.ndocs + 7) / 8;

	memset(dst, 0, nbytes + 1);
	for (uint32 p = 0; p < npages; p++)
	{
		uint8	   *buf = palloc(SPM_BITMAP_BYTES);
		uint32		off = p * SPM_BITMAP_BYTES;

		SpmReadBitsetPage(index, in->seg, nulls, p, buf, &pin);
		memcpy(dst + off, buf, Min(SPM_BITMAP_BYTES, nbytes - off));
		pfree(buf);
	}
	SpmUnpin(&pin);
}

/* advance the dictionary cursor; false at the end */
static bool
dict_next(Relation index, MergeInput *in)
{
	if (++in->pos < in->ndict)
		return true;
	if (in->page >= in->seg->hdr.ndict)
		return false;
	in->ndict = SpmReadDictPage(index, in->seg, in->page++, in->dict);
	in->pos = 0;
	return true;
}

/*
 * Replace segments first..last (adjacent, in the metapage's list) by one
 * segment holding their alive documents; the docid range is trimmed to the
 * first and last alive document, and a merge with nothing alive just
 * removes them.  New pages come from pref[] first when given; with no
 * pref and any_xid (shrink, under AccessExclusiveLock) only from extending
 * the file.  Caller holds the structure lock (so no alive bit changes
 * underneath).
 */
void
spm_merge_segments(Relation index, int first, int last,
				   const BlockNumber *pref, int npref, bool any_xid)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "sparse_maxscore merge",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SpmMetaPageData meta;
	int			nin = last - first + 1;
	MergeInput *in = palloc0(nin * sizeof(MergeInput));
	uint64		lo = PG_UINT64_MAX;
	uint64		hi = 0;
	SpmWriter  *w = NULL;
	SpmSegmentRef ref;
	uint32	   *docs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
	float	   *ws = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
	uint32	   *odocs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
	float	   *ows = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
	int16	   *oexps = palloc(SPM_BLOCK_POSTINGS * sizeof(int16));
	int			skipcap = 64;
	SpmSkipEntry *skips = palloc(skipcap * sizeof(SpmSkipEntry));
	Buffer		metabuf;
	GenericXLogState *state;
	SpmMetaPage m;

	SpmReadMeta(index, &meta);
	Assert(first >= 0 && last < (int) meta.nsegments && first <= last);
	SpmCacheNewRound();

	/* the alive range */
	for (int k = 0; k < nin; k++)
	{
		MergeInput *x = &in[k];
		uint32		n;

		x->ref = meta.segments[first + k];
		x->seg = SpmGetSegment(index, &meta, first + k);
		n = x->seg->hdr.ndocs;
		x->alive = palloc((n + 7) / 8 + 1);
		x->nulls = palloc((n + 7) / 8 + 1);
		read_bitset(index, x, false, x->alive);
		read_bitset(index, x, true, x->nulls);
		for (uint32 d = 0; d < n; d++)
		{
			if (bit_is_set(x->alive, d))
			{
				lo = Min(lo, x->ref.docid_lo + d);
				break;
			}
		}
		for (uint32 d = n; d > 0; d--)
		{
			if (bit_is_set(x->alive, d - 1))
			{
				hi = Max(hi, x->ref.docid_lo + d);
				break;
			}
		}
	}

	if (lo < hi)
	{
		SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
		SpmPin		bpin = {InvalidBuffer, InvalidBlockNumber};
		SpmPin		fpin = {InvalidBuffer, InvalidBlockNumber};
		int			k = 0;
		bool		ranges = true;
		int32		fcap = 256;
		SpmFwdElem *fbuf = palloc(fcap * sizeof(SpmFwdElem));

		if (hi - lo > PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("sparse_maxscore index \"%s\" cannot merge more than %u document ids into one segment",
							RelationGetRelationName(index), PG_UINT32_MAX),
					 errhint("REINDEX the index.")));

		w = spm_writer_begin(index, MAIN_FORKNUM, true, meta.next_segment_id, lo);
		if (pref)
			spm_writer_prefer_pages(w, pref, npref, any_xid);
		else if (any_xid)
			spm_writer_extend_only(w);
		spm_writer_set_dims(w, meta.dims);
		/* the merged segment has range data if every input has */
		if (!spm_get_options(index)->ranges)
			ranges = false;
		for (int j = 0; j < nin; j++)
		{
			if (!(in[j].seg->hdr.flags & SPM_SEG_RANGES))
				ranges = false;
		}
		if (!ranges)
			spm_writer_no_ranges(w);
		if (!spm_get_options(index)->quantize)
			spm_writer_exact(w);

		/* docmap: every docid of [lo, hi), dead ones and gaps flagged */
		for (uint64 g = lo; g < hi; g++)
		{
			ItemPointerData tid;
			uint8		flags = SPM_DOC_DEAD;
			bool		done = false;

			while (k < nin && g >= in[k].ref.docid_hi)
			{
				k++;
				SpmUnpin(&pin);
			}
			ItemPointerSet(&tid, 0, 1);
			if (k < nin && g >= in[k].ref.docid_lo)
			{
				uint32		d = (uint32) (g - in[k].ref.docid_lo);

				bool		alive = bit_is_set(in[k].alive, d);

				if (alive)
				{
					flags = bit_is_set(in[k].nulls, d) ? SPM_DOC_NULL : 0;
					SpmGetTid(index, in[k].seg, d, &tid, &pin);
				}
				if (ranges)
				{
					merge_fwd_doc(index, &in[k], d, alive, w, &tid, flags,
								  &fpin, &fbuf, &fcap);
					done = true;
				}
			}
			if (!done)
				spm_writer_doc(w, &tid, flags, 0);
			if ((g & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		SpmUnpin(&pin);
		SpmUnpin(&fpin);

		/* postings: the union of the dictionaries, term by term */
		for (k = 0; k < nin; k++)
		{
			in[k].dict = palloc(SPM_DICT_PER_PAGE * sizeof(SpmDictEntry));
			in[k].pos = -1;
			in[k].ndict = 0;
			if (!dict_next(index, &in[k]))
				in[k].pos = -2;
		}
		for (;;)
		{
			uint32		term = PG_UINT32_MAX;
			bool		any = false;

			for (k = 0; k < nin; k++)
			{
				if (in[k].pos >= 0 && (!any || in[k].dict[in[k].pos].term < term))
				{
					term = in[k].dict[in[k].pos].term;
					any = true;
				}
			}
			if (!any)
				break;

			spm_writer_term_begin(w, term);
			for (k = 0; k < nin; k++)
			{
				SpmDictEntry *e;
				int			nb;

				if (in[k].pos < 0 || in[k].dict[in[k].pos].term != term)
					continue;
				/* read the skips directly: no point caching a dying segment */
				e = &in[k].dict[in[k].pos];
				nb = (e->df + SPM_BLOCK_POSTINGS - 1) / SPM_BLOCK_POSTINGS;
				if (nb > skipcap)
				{
					skipcap = Max(nb, skipcap * 2);
					skips = repalloc(skips, skipcap * sizeof(SpmSkipEntry));
				}
				SpmReadSkips(index, in[k].seg, e, skips);
				for (int b = 0; b < nb; b++)
				{
					int			n = 0;
					int16		exp;

					/*
					 * Quantized weights go on as the upper ends of their
					 * intervals with their exponent, re-encoded on a grid
					 * that holds each interval in one cell (spmblock.h).
					 */
					SpmReadPostingBlock(index, in[k].seg, skips[b].blkno, skips[b].off,
										skips[b].count, skips[b].last_docid,
										false, docs, ws, &exp, &bpin);
					for (int p = 0; p < skips[b].count; p++)
					{
						if (!bit_is_set(in[k].alive, docs[p]))
							continue;
						odocs[n] = (uint32) (in[k].ref.docid_lo + docs[p] - lo);
						ows[n] = ws[p];
						oexps[n] = exp;
						n++;
					}
					spm_writer_postings_bounds(w, odocs, ows, oexps, n);
				}
				if (!dict_next(index, &in[k]))
					in[k].pos = -2;
			}
			spm_writer_term_end(w);
			CHECK_FOR_INTERRUPTS();
		}
		SpmUnpin(&bpin);
		spm_writer_finish(w, &ref);
	}

	/* publish: replace the inputs by the merged segment (or nothing) */
	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	for (int i = 0; i < nin; i++)
	{
		if (m->nsegments != meta.nsegments ||
			m->segments[first + i].segment_id != in[i].ref.segment_id)
			elog(ERROR, "sparse_maxscore index \"%s\" changed during a merge",
				 RelationGetRelationName(index));
	}
	{
		int			out = first;
		int			tail = (int) m->nsegments - last - 1;

		if (w)
			m->segments[out++] = ref;
		memmove(&m->segments[out], &m->segments[last + 1],
				tail * sizeof(SpmSegmentRef));
		m->nsegments = out + tail;
	}
	m->next_segment_id++;
	if (w)
	{
		m->nterms_max = Max(m->nterms_max, spm_writer_nterms(w));
		/* its blocks may be packed: older libraries must not read it */
		m->version = SPM_VERSION;
	}
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	/* free the inputs' pages once no round can be reading them */
	SpmDrainScans(index);
	for (int i = 0; i < nin; i++)
	{
		int			npages;
		BlockNumber *pages = SpmSegmentPages(index, in[i].seg, &npages);

		SpmFreePages(index, pages, npages);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* ----------------------------------------------------------------
 * Policies
 * ----------------------------------------------------------------
 */

/* the size level of a segment, for tiered merging */
static int
segment_level(const SpmSegmentRef *ref)
{
	double		p = (double) ref->npostings;

	if (p <= SPM_LEVEL_BASE)
		return 0;
	return (int) floor(log(p / SPM_LEVEL_BASE) / log((double) SPM_MERGE_FANIN));
}

/* merge the adjacent pair with the fewest postings */
void
spm_merge_smallest_pair(Relation index, const SpmMetaPageData *meta)
{
	int			best = 0;
	uint64		bestsize = PG_UINT64_MAX;

	for (uint32 i = 0; i + 1 < meta->nsegments; i++)
	{
		uint64		size = meta->segments[i].npostings + meta->segments[i + 1].npostings;

		if (size < bestsize)
		{
			best = (int) i;
			bestsize = size;
		}
	}
	spm_merge_segments(index, best, best + 1, NULL, 0, false);
}

/*
 * Keep the number of segments logarithmic: when SPM_MERGE_FANIN adjacent
 * segments at the end of the list share a size level, merge them.
 * Caller holds the structure lock.
 */
void
spm_merge_tiered(Relation index, bool vacuum)
{
	/* every merge removes at least SPM_MERGE_FANIN - 1 segments */
	for (int guard = 0; guard < SPM_MAX_SEGMENTS; guard++)
	{
		SpmMetaPageData meta;
		int			last;
		int			first;
		int			level;
		uint64		postings = 0;

		SpmReadMeta(index, &meta);
		if (meta.nsegments < SPM_MERGE_FANIN)
			return;
		last = (int) meta.nsegments - 1;
		level = segment_level(&meta.segments[last]);
		first = last;
		while (first > 0 && segment_level(&meta.segments[first - 1]) == level)
			first--;
		if (last - first + 1 < SPM_MERGE_FANIN)
			return;
		for (int i = first; i <= last; i++)
			postings += meta.segments[i].npostings;

		/*
		 * An inserting backend merges only small runs, so that no INSERT
		 * stalls for a large rewrite; larger runs wait for VACUUM (or for a
		 * full segment list, see spm_flush_locked).
		 */
		if (!vacuum && postings > SPM_INLINE_MERGE_POSTINGS)
			return;
		spm_merge_segments(index, first, last, NULL, 0, false);
	}
}

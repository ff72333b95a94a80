/*-------------------------------------------------------------------------
 *
 * spmmerge.c
 *	  Merging segments: replace adjacent segments by one holding their
 *	  alive documents, and the tiered policy that keeps the number of
 *	  segments logarithmic.
 *
 * The input segments are the document source of a segment written and
 * published by the write pipeline (spmpipeline.c, README "Writing a
 * segment"): their alive documents in docid order, and their posting lists
 * merged term by term (no sorter).  Callers hold the structure
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
	SpmTermQuant *tq;			/* format 6: its terms' exponents, bases */
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
 * sink, with its elements if alive; the first call positions the cursor at d.  Its
 * elements must ascend inside dims.
 */
static void
merge_fwd_doc(Relation index, MergeInput *x, uint32 d, bool alive,
			  SpmSink *sink, ItemPointer tid, uint8 flags, SpmPin *pin,
			  SpmFwdElem **buf, int32 *cap)
{
	uint32		nnz;
	uint32		segflags = x->seg->hdr.flags;

	if (!x->fwd_started)
	{
		x->fwd_pos = SpmRangeOffset(index, x->seg, d / SPM_RANGE_DOCS, pin);
		for (uint32 skip = d % SPM_RANGE_DOCS; skip > 0; skip--)
		{
			SpmReadStream(index, x->seg, SPM_STREAM_FWD, x->fwd_pos,
						  sizeof(uint32), &nnz, pin);
			x->fwd_pos += sizeof(uint32) + spm_fwd_doc_bytes(segflags, nnz);
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
		x->fwd_pos += spm_fwd_doc_bytes(segflags, nnz);
		spm_sink_doc_begin(sink, tid, flags, 0);
		return;
	}
	if ((int32) nnz > *cap)
	{
		*cap = Max((int32) nnz, 2 * *cap);
		*buf = repalloc(*buf, *cap * sizeof(SpmFwdElem));
	}
	x->fwd_pos = SpmReadFwdElems(index, x->seg, x->fwd_pos, nnz, *buf, pin,
								 x->tq);
	for (uint32 i = 0; i < nnz; i++)
	{
		if ((i > 0 && (*buf)[i].term <= (*buf)[i - 1].term) ||
			(*buf)[i].term >= (uint32) x->seg->hdr.dims)
			fwd_corrupt(index, x);
	}
	spm_sink_doc_begin(sink, tid, flags, (int32) nnz);
	spm_sink_doc_fwd(sink, *buf, (int32) nnz);
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

/* the input segments of a merge as a document source (spmpipeline.c) */
typedef struct MergeSource
{
	SpmSource	src;			/* first: the pipeline sees only this */
	Relation	index;
	MergeInput *in;
	int			nin;
	uint64		hi;				/* the alive range is [src.docid_lo, hi) */
} MergeSource;

/* docmap: every docid of [lo, hi), dead ones and gaps flagged */
static void
merge_documents(SpmSource *src, SpmSink *sink)
{
	MergeSource *ms = (MergeSource *) src;
	Relation	index = ms->index;
	MergeInput *in = ms->in;
	int			nin = ms->nin;
	bool		fwd = spm_sink_wants_elements(sink);
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	SpmPin		fpin = {InvalidBuffer, InvalidBlockNumber};
	int			k = 0;
	int32		fcap = 256;
	SpmFwdElem *fbuf = palloc(fcap * sizeof(SpmFwdElem));

	/*
	 * Format 6 inputs: their forward copies decode to the upper ends of
	 * their cells, and the output quantizes each term at an exponent no
	 * smaller than any input's (README "Quantized weights")
	 */
	for (int j = 0; fwd && j < nin; j++)
	{
		if (!(in[j].seg->hdr.flags & SPM_SEG_FWDQ))
			continue;
		in[j].tq = SpmLoadTermQuant(index, in[j].seg);
		for (int t = 0; t < SPM_FWD16_DIMS; t++)
			if (in[j].tq->exp[t] != SPM_QEXP_EXACT)
				spm_sink_term_exp_floor(sink, (uint32) t, in[j].tq->exp[t]);
	}

	for (uint64 g = src->docid_lo; g < ms->hi; g++)
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
			/* the elements, for the merged segment's forward copy */
			if (fwd)
			{
				merge_fwd_doc(index, &in[k], d, alive, sink, &tid, flags,
							  &fpin, &fbuf, &fcap);
				done = true;
			}
		}
		if (!done)
			spm_sink_doc_begin(sink, &tid, flags, 0);
		if ((g & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	SpmUnpin(&pin);
	SpmUnpin(&fpin);
	pfree(fbuf);
}

/* postings: the union of the dictionaries, term by term */
static void
merge_postings(SpmSource *src, SpmWriter *w)
{
	MergeSource *ms = (MergeSource *) src;
	Relation	index = ms->index;
	MergeInput *in = ms->in;
	int			nin = ms->nin;
	uint64		lo = src->docid_lo;
	SpmPin		bpin = {InvalidBuffer, InvalidBlockNumber};
	uint32	   *docs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
	float	   *ws = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
	uint32	   *odocs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
	float	   *ows = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
	int16	   *oexps = palloc(SPM_BLOCK_POSTINGS * sizeof(int16));
	int			skipcap = 64;
	SpmSkipEntry *skips = palloc(skipcap * sizeof(SpmSkipEntry));
	int			k;

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
				 * intervals with their exponent, re-encoded on a grid that
				 * holds each interval in one cell (spmblock.h).
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
	SpmSegmentOut out;
	SpmPublish	p;
	BlockNumber *oldpages = NULL;
	int			nold = 0;

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

	memset(&out, 0, sizeof(out));
	if (lo < hi)
	{
		MergeSource ms;
		SpmWriteTarget target;

		if (hi - lo > PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("sparse_maxscore index \"%s\" cannot merge more than %u document ids into one segment",
							RelationGetRelationName(index), PG_UINT32_MAX),
					 errhint("REINDEX the index.")));

		memset(&ms, 0, sizeof(ms));
		ms.index = index;
		ms.in = in;
		ms.nin = nin;
		ms.hi = hi;
		ms.src.docid_lo = lo;
		/* the merged segment has range data if every input has */
		ms.src.ranges_ok = true;
		for (int j = 0; j < nin; j++)
		{
			if (!(in[j].seg->hdr.flags & SPM_SEG_RANGES))
				ms.src.ranges_ok = false;
		}
		ms.src.documents = merge_documents;
		ms.src.postings = merge_postings;

		spm_target_online(&target, &meta);
		target.pref = pref;
		target.npref = npref;
		target.any_xid = any_xid;
		spm_segment_write(index, &target, &ms.src, &out);
	}

	/* the inputs' pages, freed once no round can be reading them */
	for (int i = 0; i < nin; i++)
	{
		int			npages;
		BlockNumber *pages = SpmSegmentPages(index, in[i].seg, &npages);

		oldpages = oldpages ? repalloc(oldpages, (nold + npages) * sizeof(BlockNumber)) :
			palloc(Max(npages, 1) * sizeof(BlockNumber));
		memcpy(oldpages + nold, pages, npages * sizeof(BlockNumber));
		nold += npages;
	}

	/* publish: replace the inputs by the merged segment (or nothing) */
	spm_publish_online(&p, "merge", &meta);
	p.first = first;
	p.nremove = nin;
	p.seg = &out;
	p.old_pages = oldpages;
	p.nold = nold;
	spm_publish(index, &p);

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

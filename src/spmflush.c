/*-------------------------------------------------------------------------
 *
 * spmflush.c
 *	  Structural changes: flush the pending list into a segment, merge
 *	  segments, reclaim orphaned pages, shrink the index.
 *
 * All of it runs under the structure lock (one structural writer at a time)
 * and follows the same steps (README "Flush and compaction"):
 *
 *	1. write the new segment's pages (WAL-logged full images); nothing
 *	   points at them yet;
 *	2. publish: one GenericXLog record on the metapage switches the index
 *	   to the new version (segment list and pending pointers);
 *	3. drain: take SPM_SCAN_LOCK exclusively and let go at once, so that
 *	   every scan round that could still read the old version has ended;
 *	4. free the old pages (FREE, stamped with the next xid for standbys).
 *
 * A crash between 1 and 2 leaves orphans, between 2 and 4 unreachable
 * pages; VACUUM's reclaim finds both by walking what the metapage reaches.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmblock.h"

/* a segment with more dead documents than this fraction is rewritten */
#define SPM_DEAD_FRACTION	0.2
/* tiered merging: this many adjacent segments of one size level merge */
#define SPM_MERGE_FANIN		4
#define SPM_LEVEL_BASE		16384.0 /* postings of a level-0 segment */
/* the largest merge an inserting backend does (a few tenths of a second) */
#define SPM_INLINE_MERGE_POSTINGS	(2 * 1024 * 1024)

static void
drain_scans(Relation index)
{
	LockPage(index, SPM_SCAN_LOCK, ExclusiveLock);
	UnlockPage(index, SPM_SCAN_LOCK, ExclusiveLock);
}

/* ----------------------------------------------------------------
 * Recycling freed pages
 * ----------------------------------------------------------------
 */

/*
 * Put freed pages on the metapage's recycle list (as many as fit; the
 * rest are found by VACUUM's reclaim).  Caller holds the structure lock.
 */
void
SpmRememberFreed(Relation index, const BlockNumber *pages, int n)
{
	Buffer		metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	GenericXLogState *state;
	SpmMetaPage meta;
	int			m;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	m = Min(n, SPM_RECYCLE_MAX - (int) meta->nrecycle);
	if (m > 0)
	{
		memcpy(&meta->recycle[meta->nrecycle], pages, m * sizeof(BlockNumber));
		meta->nrecycle += m;
		GenericXLogFinish(state);
	}
	else
		GenericXLogAbort(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Move the pages of the recycle list that may be reused by now into the
 * free space map (and make the map's upper levels find them).  Called by
 * every flush and VACUUM, so that an insert-only index reuses the space
 * its flushes and merges free.  Caller holds the structure lock.
 */
void
SpmRecycleFreed(Relation index)
{
	SpmMetaPageData meta;
	BlockNumber ready[SPM_RECYCLE_MAX];
	BlockNumber keep[SPM_RECYCLE_MAX];
	int			nready = 0;
	int			nkeep = 0;
	BlockNumber lo = InvalidBlockNumber;
	BlockNumber hi = 0;
	Buffer		metabuf;
	GenericXLogState *state;
	SpmMetaPage m;

	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	int			ngone = 0;

	SpmReadMeta(index, &meta);
	if (meta.nrecycle == 0 || meta.nrecycle > SPM_RECYCLE_MAX)
		return;
	for (uint32 i = 0; i < meta.nrecycle; i++)
	{
		Buffer		buf;
		bool		ok;

		/* truncated away by VACUUM's shrink */
		if (meta.recycle[i] >= nblocks)
		{
			ngone++;
			continue;
		}
		buf = ReadBuffer(index, meta.recycle[i]);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		ok = SpmPageIsRecyclable(BufferGetPage(buf), false);
		UnlockReleaseBuffer(buf);
		if (ok)
			ready[nready++] = meta.recycle[i];
		else
			keep[nkeep++] = meta.recycle[i];
	}
	if (nready == 0 && ngone == 0)
		return;

	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	memcpy(m->recycle, keep, nkeep * sizeof(BlockNumber));
	m->nrecycle = nkeep;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	for (int i = 0; i < nready; i++)
	{
		RecordFreeIndexPage(index, ready[i]);
		lo = Min(lo, ready[i]);
		hi = Max(hi, ready[i]);
	}
	if (nready > 0)
		FreeSpaceMapVacuumRange(index, lo, hi + 1);
}

/* ----------------------------------------------------------------
 * Flush
 * ----------------------------------------------------------------
 */
typedef struct FlushState
{
	SpmWriter  *writer;
	SpmSorter  *sorter;
	uint64		docid_lo;
	uint64		ndocs;			/* documents seen */
	uint64		nlive;			/* of which not deleted */
	uint64		npostings;		/* elements of all documents */
	uint64		bytes;			/* as counted by spm_pending_append */
	uint32		nnull;
	uint32		ndead;
	uint32		cur;			/* local docid of the current document */
	bool		curlive;
} FlushState;

static void
flush_begin(void *arg, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz)
{
	FlushState *fs = arg;
	uint8		docflags = 0;

	if (flags & SPM_PT_NULL)
	{
		docflags |= SPM_DOC_NULL;
		fs->nnull++;
	}
	if (flags & SPM_PT_DELETED)
	{
		docflags |= SPM_DOC_DEAD;
		fs->ndead++;
	}
	else
		fs->nlive++;
	fs->cur = (uint32) (docid - fs->docid_lo);
	fs->curlive = !(flags & (SPM_PT_DELETED | SPM_PT_NULL));
	spm_writer_doc(fs->writer, tid, docflags);
	fs->npostings += nnz;
	fs->bytes += SpmPendingTupleSize(nnz);
	fs->ndocs++;
}

static void
flush_elems(void *arg, const int32 *idx, const float4 *val, int n)
{
	FlushState *fs = arg;

	if (!fs->curlive)
		return;
	for (int i = 0; i < n; i++)
		spm_sorter_add(fs->sorter, (uint32) idx[i], fs->cur, val[i]);
}

static void
flush_end(void *arg)
{
}

/* the size level of a segment, for tiered merging */
static int
segment_level(const SpmSegmentRef *ref)
{
	double		p = (double) ref->npostings;

	if (p <= SPM_LEVEL_BASE)
		return 0;
	return (int) floor(log(p / SPM_LEVEL_BASE) / log((double) SPM_MERGE_FANIN));
}

static void merge_segments(Relation index, int first, int last,
						   const BlockNumber *pref, int npref, bool any_xid);

/* merge the adjacent pair with the fewest postings */
static void
merge_smallest_pair(Relation index, const SpmMetaPageData *meta)
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
	merge_segments(index, best, best + 1, NULL, 0, false);
}

/*
 * Move the pending list into a new segment.  Caller holds the structure lock.
 * Returns the number of documents moved.
 */
static int64
flush_locked(Relation index, Size mem)
{
	Buffer		metabuf;
	SpmMetaPage meta;
	SpmMetaPageData copy;
	GenericXLogState *state;
	FlushState	fs;
	SpmPendingVisitor v = {flush_begin, flush_elems, flush_end, &fs};
	BlockNumber *pages;
	int			npages;
	SpmSegmentRef ref;
	bool		write_segment;
	BlockNumber sealed;

	/* space freed by earlier flushes and merges, reusable by now */
	SpmRecycleFreed(index);

	/* make room for one more segment */
	SpmReadMeta(index, &copy);
	if (copy.pending_ndocs == 0)
		return 0;
	while (copy.nsegments >= SPM_MAX_SEGMENTS)
	{
		merge_smallest_pair(index, &copy);
		SpmReadMeta(index, &copy);
	}

	/* seal the tail: inserts start a new page after it from now on */
	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->pending_sealed = meta->pending_tail;
	memcpy(&copy, meta, sizeof(SpmMetaPageData));
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	sealed = copy.pending_sealed;

	/* read every document up to the sealed page into a segment */
	memset(&fs, 0, sizeof(fs));
	fs.docid_lo = copy.pending_docid_lo;
	fs.writer = spm_writer_begin(index, MAIN_FORKNUM, true,
								 copy.next_segment_id, copy.pending_docid_lo);
	fs.sorter = spm_sorter_begin(mem, false);
	spm_pending_visit(index, copy.pending_head, copy.pending_docid_lo,
					  copy.pending_docid_lo + copy.pending_ndocs, sealed,
					  &v, &pages, &npages);
	if (fs.ndocs != copy.pending_ndocs)
		elog(ERROR, "sparse_maxscore index \"%s\": pending list holds " UINT64_FORMAT " documents, the metapage says " UINT64_FORMAT,
			 RelationGetRelationName(index), fs.ndocs, copy.pending_ndocs);

	/* a batch of deleted documents needs no segment: its docids stay unused */
	write_segment = fs.nlive > 0;
	if (write_segment)
	{
		spm_sorter_finish(fs.sorter, fs.writer);
		spm_writer_set_dims(fs.writer, copy.dims);
		spm_writer_finish(fs.writer, &ref);
	}
	else
	{
		/* give its started pages back now: no buffer lock held below */
		spm_writer_free(fs.writer);
		fs.writer = NULL;
	}
	spm_sorter_end(fs.sorter);

	/* publish */
	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		Buffer		sbuf = ReadBuffer(index, sealed);
		BlockNumber next;

		LockBuffer(sbuf, BUFFER_LOCK_SHARE);
		SpmCheckPage(index, BufferGetPage(sbuf), sealed, SPM_PAGE_PENDING, 0);
		next = SpmPageGetOpaque(BufferGetPage(sbuf))->next;
		UnlockReleaseBuffer(sbuf);

		state = GenericXLogStart(index);
		meta = SpmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		if (meta->pending_head != copy.pending_head ||
			meta->pending_sealed != sealed ||
			meta->pending_docid_lo != copy.pending_docid_lo ||
			meta->nsegments != copy.nsegments)
			elog(ERROR, "sparse_maxscore index \"%s\" changed during a flush",
				 RelationGetRelationName(index));
		if (write_segment)
		{
			meta->segments[meta->nsegments++] = ref;
			meta->flags |= spm_writer_flags(fs.writer);
			meta->nterms_max = Max(meta->nterms_max, spm_writer_nterms(fs.writer));
		}
		meta->next_segment_id++;
		meta->pending_head = next;
		if (next == InvalidBlockNumber)
		{
			meta->pending_tail = InvalidBlockNumber;
			meta->pending_tail_free = 0;
		}
		meta->pending_sealed = InvalidBlockNumber;
		meta->pending_docid_lo += fs.ndocs;
		meta->pending_ndocs -= fs.ndocs;
		meta->pending_npostings -= fs.npostings;
		meta->pending_bytes -= Min(meta->pending_bytes, fs.bytes);
		meta->pending_npages -= Min(meta->pending_npages, (uint32) npages);
		meta->pending_nnull -= fs.nnull;
		meta->pending_ndead -= fs.ndead;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);

	drain_scans(index);
	SpmFreePages(index, pages, npages);
	if (fs.writer)
		spm_writer_free(fs.writer);
	return (int64) fs.ndocs;
}

/*
 * Keep the number of segments logarithmic: when SPM_MERGE_FANIN adjacent
 * segments at the end of the list share a size level, merge them.
 * Caller holds the structure lock.
 */
static void
merge_tiered_locked(Relation index, bool vacuum)
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
		 * full segment list, see flush_locked).
		 */
		if (!vacuum && postings > SPM_INLINE_MERGE_POSTINGS)
			return;
		merge_segments(index, first, last, NULL, 0, false);
	}
}

/*
 * Flush the pending list, if there is anything in it, and merge segments
 * as the tiered policy asks.  wait = false gives up at once if another
 * backend holds the structure lock (inserts); vacuum says whether to sort
 * within maintenance_work_mem (else work_mem).  Returns the number of
 * documents moved.
 */
int64
spm_flush(Relation index, bool wait, bool vacuum)
{
	int64		n;

	if (wait)
		SpmLockStructure(index);
	else if (!SpmConditionalLockStructure(index))
		return 0;
	n = flush_locked(index, (Size) (vacuum ? maintenance_work_mem : work_mem) * 1024);
	merge_tiered_locked(index, vacuum);
	SpmUnlockStructure(index);
	return n;
}

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
} MergeInput;

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
static void
merge_segments(Relation index, int first, int last, const BlockNumber *pref,
			   int npref, bool any_xid)
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
		int			k = 0;

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

		/* docmap: every docid of [lo, hi), dead ones and gaps flagged */
		for (uint64 g = lo; g < hi; g++)
		{
			ItemPointerData tid;
			uint8		flags = SPM_DOC_DEAD;

			while (k < nin && g >= in[k].ref.docid_hi)
			{
				k++;
				SpmUnpin(&pin);
			}
			ItemPointerSet(&tid, 0, 1);
			if (k < nin && g >= in[k].ref.docid_lo)
			{
				uint32		d = (uint32) (g - in[k].ref.docid_lo);

				if (bit_is_set(in[k].alive, d))
				{
					flags = bit_is_set(in[k].nulls, d) ? SPM_DOC_NULL : 0;
					SpmGetTid(index, in[k].seg, d, &tid, &pin);
				}
			}
			spm_writer_doc(w, &tid, flags);
			if ((g & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		SpmUnpin(&pin);

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

					SpmReadPostingBlock(index, in[k].seg, skips[b].blkno, skips[b].off,
										skips[b].count, skips[b].last_docid,
										docs, ws, &bpin);
					for (int p = 0; p < skips[b].count; p++)
					{
						if (!bit_is_set(in[k].alive, docs[p]))
							continue;
						odocs[n] = (uint32) (in[k].ref.docid_lo + docs[p] - lo);
						ows[n] = ws[p];
						n++;
					}
					spm_writer_postings(w, odocs, ows, n);
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
	}
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	/* free the inputs' pages once no round can be reading them */
	drain_scans(index);
	for (int i = 0; i < nin; i++)
	{
		int			npages;
		BlockNumber *pages = SpmSegmentPages(index, in[i].seg, &npages);

		SpmFreePages(index, pages, npages);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * Merge every segment into one (dropping dead documents), after flushing
 * the pending list.  Returns the number of segments merged.
 */
int
spm_compact_all(Relation index)
{
	SpmMetaPageData meta;
	int			n;

	SpmLockStructure(index);
	flush_locked(index, (Size) maintenance_work_mem * 1024);
	SpmReadMeta(index, &meta);
	n = (int) meta.nsegments;
	if (n > 1 || (n == 1 && meta.segments[0].ndead > 0))
		merge_segments(index, 0, n - 1, NULL, 0, false);
	SpmUnlockStructure(index);
	return n;
}

/* ----------------------------------------------------------------
 * VACUUM: compaction policy, orphans, shrinking
 * ----------------------------------------------------------------
 */

/*
 * Rewrite segments with many dead documents; merge down to
 * compact_segments segments.  Caller holds the structure lock.
 */
static void
compact_locked(Relation index, int compact_segments)
{
	/* every merge removes a segment or the dead postings of one */
	for (int guard = 0; guard < 2 * SPM_MAX_SEGMENTS; guard++)
	{
		SpmMetaPageData meta;
		bool		done = true;

		SpmReadMeta(index, &meta);
		for (uint32 i = 0; i < meta.nsegments; i++)
		{
			SpmSegmentRef *r = &meta.segments[i];
			double		withpostings = (double) (r->docid_hi - r->docid_lo) - r->nholes;
			double		deadpostings = (double) r->ndead - r->nholes;

			/* dead documents whose postings are still there */
			if (deadpostings > 0 && deadpostings >= SPM_DEAD_FRACTION * withpostings)
			{
				merge_segments(index, (int) i, (int) i, NULL, 0, false);
				done = false;
				break;
			}
		}
		if (!done)
			continue;
		if ((int) meta.nsegments > compact_segments)
		{
			merge_smallest_pair(index, &meta);
			continue;
		}
		return;
	}
	elog(WARNING, "sparse_maxscore index \"%s\": compaction stopped after %d merges",
		 RelationGetRelationName(index), 2 * SPM_MAX_SEGMENTS);
}

static int
blkno_cmp(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

static inline void
mark(uint8 *bits, BlockNumber nblocks, BlockNumber blkno)
{
	if (blkno < nblocks)
		bits[blkno / 8] |= 1 << (blkno % 8);
}

static inline bool
marked(const uint8 *bits, BlockNumber blkno)
{
	return (bits[blkno / 8] >> (blkno % 8)) & 1;
}

/* mark the pages the metapage reaches: segments and the pending chain */
static void
mark_reachable(Relation index, uint8 *bits, BlockNumber nblocks, bool pending)
{
	SpmMetaPageData meta;

	SpmReadMeta(index, &meta);
	mark(bits, nblocks, SPM_METAPAGE_BLKNO);
	if (!pending)
	{
		SpmCacheNewRound();
		for (uint32 i = 0; i < meta.nsegments; i++)
		{
			SpmSegment *seg = SpmGetSegment(index, &meta, (int) i);
			int			n;
			BlockNumber *pages = SpmSegmentPages(index, seg, &n);

			for (int j = 0; j < n; j++)
				mark(bits, nblocks, pages[j]);
			pfree(pages);
		}
	}
	for (BlockNumber blkno = meta.pending_head; blkno != InvalidBlockNumber;)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		BlockNumber next;

		mark(bits, nblocks, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		SpmCheckPage(index, BufferGetPage(buf), blkno, SPM_PAGE_PENDING, 0);
		next = SpmPageGetOpaque(BufferGetPage(buf))->next;
		UnlockReleaseBuffer(buf);
		blkno = next;
	}
}

/*
 * Find the pages nothing reaches and free them; put recyclable FREE pages
 * in the free space map.  Returns the FREE pages (ascending) in *free.
 * Caller holds the structure lock, so no segment is being written; pending
 * pages are the only ones that can get linked meanwhile, see below.
 */
static void
reclaim_locked(Relation index, BufferAccessStrategy strategy,
			   BlockNumber **free, int *nfree, BlockNumber *nfree_recyclable)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	uint8	   *reach = palloc0(nblocks / 8 + 1);
	BlockNumber *orphans = palloc(Max(nblocks, 1) * sizeof(BlockNumber));
	BlockNumber *pend = palloc(Max(nblocks, 1) * sizeof(BlockNumber));
	int			norphans = 0;
	int			npend = 0;

	*free = palloc(Max(nblocks, 1) * sizeof(BlockNumber));
	*nfree = 0;
	*nfree_recyclable = 0;
	SpmRecycleFreed(index);

	mark_reachable(index, reach, nblocks, false);
	for (BlockNumber blkno = 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		SpmPageOpaque opaque;

		if (marked(reach, blkno))
			continue;
		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		/* a page someone holds locked is being written: not an orphan */
		if (!ConditionalLockBuffer(buf))
		{
			ReleaseBuffer(buf);
			continue;
		}
		page = BufferGetPage(buf);
		opaque = PageIsNew(page) ? NULL : SpmPageGetOpaque(page);
		if (PageIsNew(page) ||
			PageGetSpecialSize(page) != MAXALIGN(sizeof(SpmPageOpaqueData)) ||
			opaque->page_id != SPM_PAGE_ID)
			orphans[norphans++] = blkno;
		else if (SpmPageIsFree(opaque))
		{
			(*free)[(*nfree)++] = blkno;
			if (SpmPageIsRecyclable(page, false))
			{
				RecordFreeIndexPage(index, blkno);
				(*nfree_recyclable)++;
			}
		}
		else if (opaque->type == SPM_PAGE_PENDING)
		{
			/*
			 * An insert writes a big document's continuation pages before it
			 * links them, and may link pages after our walk: leave pages of
			 * running transactions alone, check the others again below.
			 */
			if (!TransactionIdIsInProgress(XidFromFullTransactionId(opaque->xid)))
				pend[npend++] = blkno;
		}
		else
			orphans[norphans++] = blkno;
		UnlockReleaseBuffer(buf);
	}

	if (npend > 0)
	{
		memset(reach, 0, nblocks / 8 + 1);
		mark_reachable(index, reach, nblocks, true);
		for (int i = 0; i < npend; i++)
		{
			if (!marked(reach, pend[i]))
				orphans[norphans++] = pend[i];
		}
	}

	if (norphans > 0)
	{
		ereport(DEBUG1,
				(errmsg("sparse_maxscore index \"%s\": reclaiming %d unreachable pages",
						RelationGetRelationName(index), norphans)));
		SpmFreePages(index, orphans, norphans);
		/* newly freed: in the list, not yet recyclable */
		for (int i = 0; i < norphans; i++)
			(*free)[(*nfree)++] = orphans[i];
		qsort(*free, *nfree, sizeof(BlockNumber), blkno_cmp);
	}
	IndexFreeSpaceMapVacuum(index);
	pfree(reach);
	pfree(orphans);
	pfree(pend);
}

/*
 * Give back free space at the end of the file.  If at least a third of the
 * index is free, first move the segments into the lowest free pages (a
 * merge, which also drops dead documents), so that the tail becomes free.
 * Needs AccessExclusiveLock on the index, taken only if nobody else holds
 * a lock on it; then no scan runs here, and a hot standby replays the lock
 * before anything else, so freed pages may be reused at once.
 */
static void
shrink(Relation index, IndexVacuumInfo *info)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber *free;
	int			nfree;
	BlockNumber nrecyclable;
	BlockNumber newblocks;
	SpmMetaPageData meta;

	if (nblocks < 16 || !ConditionalLockRelation(index, AccessExclusiveLock))
		return;
	SpmLockStructure(index);

	reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	SpmReadMeta(index, &meta);
	if ((uint64) nfree * 3 >= nblocks && meta.nsegments > 0)
	{
		/*
		 * Move the data out of the way first, to new pages at the end, so
		 * that the second move finds the lowest pages free: one move into
		 * the lowest free pages could leave the data split around where it
		 * was.  Then cut the free tail.
		 */
		pfree(free);
		merge_segments(index, 0, (int) meta.nsegments - 1, NULL, 0, true);
		reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
		SpmReadMeta(index, &meta);
		if (meta.nsegments > 0)
			merge_segments(index, 0, (int) meta.nsegments - 1, free, nfree, true);
		pfree(free);
		reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	}

	/* truncate the run of free pages at the end */
	newblocks = nblocks = RelationGetNumberOfBlocks(index);
	for (int i = nfree - 1; i >= 0 && free[i] == newblocks - 1; i--)
		newblocks--;
	pfree(free);
	if (newblocks < nblocks)
	{
		RelationTruncate(index, newblocks);
		/* forget truncated pages on the recycle list */
		SpmRecycleFreed(index);
		ereport(DEBUG1,
				(errmsg("sparse_maxscore index \"%s\": truncated from %u to %u pages",
						RelationGetRelationName(index), nblocks, newblocks)));
	}
	SpmUnlockStructure(index);
	UnlockRelation(index, AccessExclusiveLock);
}

/*
 * amvacuumcleanup's maintenance: flush the pending list, compact, reclaim
 * orphaned pages, shrink.  Fills stats->pages_free.
 */
void
spm_vacuum_maintain(Relation index, IndexVacuumInfo *info,
					IndexBulkDeleteResult *stats)
{
	SpmOptions *opts = spm_get_options(index);
	BlockNumber *free;
	int			nfree;
	BlockNumber nrecyclable;

	SpmLockStructure(index);
	flush_locked(index, (Size) maintenance_work_mem * 1024);
	merge_tiered_locked(index, true);
	compact_locked(index, opts->compactSegments);
	reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	SpmUnlockStructure(index);
	pfree(free);

	shrink(index, info);

	SpmLockStructure(index);
	reclaim_locked(index, info->strategy, &free, &nfree, &nrecyclable);
	SpmUnlockStructure(index);
	pfree(free);
	stats->pages_free = nrecyclable;
}

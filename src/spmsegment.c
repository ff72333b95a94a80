/*-------------------------------------------------------------------------
 *
 * spmsegment.c
 *	  Reading segments, and the per-backend segment cache.
 *
 * A segment never changes once published (only its alive bitset does, and
 * that is never cached), so what a backend learns about one -- its header,
 * its page directory and the dictionary entries of the terms it has been
 * asked about -- stays true for as long as the segment exists.  The cache
 * is keyed by (relfilenode, build nonce, segment id): a REINDEX or TRUNCATE
 * gets a new relfilenode, a rebuilt index a new nonce, and segment ids are
 * never reused within an index.  Entries whose segment is gone are never
 * looked up again and age out.  So the per-query setup is one hash probe
 * per query term once a backend is warm (README "Segment cache").
 *
 * Every page read here is checked (type, segment, bounds) before use.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "port/pg_bitutils.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmsegment.h"
#include "spmblock.h"

#define SPM_CACHE_MAX	256		/* segments cached per backend */

/* skip arrays cached per backend, over all segments */
#define SPM_SKIP_CACHE_BYTES	((Size) 256 * 1024 * 1024)

typedef struct SpmTermInfo
{
	uint32		term;			/* hash key */
	bool		found;
	SpmDictEntry entry;
	uint32		ordinal;		/* position in the dictionary */
	SpmTermData *data;			/* skip arrays, once loaded */
	SpmTermData *brief;			/* entry and range only (SpmGetTermBrief),
								 * once asked for */
} SpmTermInfo;

static MemoryContext cache_cxt = NULL;
static SpmSegment *cache[SPM_CACHE_MAX];
static int	cache_n = 0;
static uint64 cache_stamp = 1;
static Size skip_cache_bytes = 0;

pg_noreturn static void corrupt(Relation index, SpmSegment *seg, const char *what);
static Page pin_page(Relation index, SpmPin *pin, BlockNumber blkno,
					 Buffer *recent);

static void
corrupt(Relation index, SpmSegment *seg, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" is corrupted: %s in segment %u",
					RelationGetRelationName(index), what,
					seg ? seg->segment_id : 0),
			 errhint("REINDEX the index.")));
}

/*
 * Start a new round: segments used from now on are protected from
 * eviction until the next call.
 */
void
SpmCacheNewRound(void)
{
	cache_stamp++;
}

static void
evict_one(void)
{
	int			victim = -1;

	for (int i = 0; i < cache_n; i++)
	{
		if (cache[i]->stamp == cache_stamp)
			continue;
		if (victim < 0 || cache[i]->stamp < cache[victim]->stamp)
			victim = i;
	}
	if (victim < 0)
		elog(ERROR, "sparse_maxscore: segment cache full");
	skip_cache_bytes -= cache[victim]->skipbytes;
	MemoryContextDelete(cache[victim]->cxt);
	cache[victim] = cache[--cache_n];
}

/* pages of a byte stream of n bytes (README "Ranges") */
static uint64
stream_pages(uint64 n)
{
	return (n + SPM_PAGE_CONTENT - 1) / SPM_PAGE_CONTENT;
}

/* where the RANGEIDX stream's descriptors start: after the offsets, padded */
static uint64
range_desc_base(const SpmSegmentHeaderData *hdr)
{
	return TYPEALIGN(sizeof(SpmRangeDesc), ((uint64) hdr->nranges + 1) * sizeof(uint64));
}

/* the bytes of the RANGEIDX stream: range offsets, padding, descriptors */
static uint64
rangeidx_bytes(const SpmSegmentHeaderData *hdr)
{
	if (!(hdr->flags & SPM_SEG_RANGES))
		return 0;
	return range_desc_base(hdr) + (uint64) hdr->nterms * sizeof(SpmRangeDesc);
}

/* read the directory chain into words[nwords] */
static void
read_directory(Relation index, SpmSegment *seg, uint32 *words, uint32 nwords)
{
	BlockNumber blkno = seg->hdr.dir_head;
	uint32		got = 0;

	while (got < nwords)
	{
		Buffer		buf;
		Page		page;
		uint32		n;

		if (blkno == InvalidBlockNumber ||
			blkno >= RelationGetNumberOfBlocks(index))
			corrupt(index, seg, "broken directory chain");
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_SEGDIR, seg->segment_id);
		n = (((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData)) /
			sizeof(uint32);
		n = Min(n, nwords - got);
		memcpy(words + got, PageGetContents(page), n * sizeof(uint32));
		got += n;
		blkno = SpmPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		if (n == 0)
			corrupt(index, seg, "empty directory page");
	}
}

static SpmSegment *
load_segment(Relation index, const SpmMetaPageData *meta,
			 const SpmSegmentRef *ref)
{
	MemoryContext cxt;
	MemoryContext old;
	SpmSegment *seg;
	Buffer		buf;
	Page		page;
	uint32	   *words;
	uint32		expect;
	uint64		expect64;
	BlockNumber nblocks;
	HASHCTL		ctl;

	cxt = AllocSetContextCreate(cache_cxt, "sparse_maxscore segment",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	seg = palloc0(sizeof(SpmSegment));
	seg->cxt = cxt;
	seg->node = SPM_REL_FILE(index);
	seg->nonce = meta->nonce;
	seg->segment_id = ref->segment_id;
	seg->header = ref->header;

	PG_TRY();
	{
		if (ref->header >= RelationGetNumberOfBlocks(index))
			corrupt(index, seg, "header beyond the end of the index");
		buf = ReadBuffer(index, ref->header);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, ref->header, SPM_PAGE_SEGHEADER,
					 ref->segment_id);
		memcpy(&seg->hdr, PageGetContents(page), sizeof(SpmSegmentHeaderData));
		UnlockReleaseBuffer(buf);

		/* every count is of distinct pages, so none exceeds the index */
		nblocks = RelationGetNumberOfBlocks(index);
		expect64 = (uint64) seg->hdr.ndocmap + seg->hdr.nalive +
			seg->hdr.nnullmap + 2 * (uint64) seg->hdr.ndict +
			seg->hdr.npost + seg->hdr.nskip + seg->hdr.nfwd +
			seg->hdr.nrangeidx + seg->hdr.nrangemax;
		expect = (uint32) expect64;
		if (expect64 > 2 * (uint64) nblocks ||
			seg->hdr.magic != SPM_MAGIC ||
			seg->hdr.segment_id != ref->segment_id ||
			seg->hdr.docid_lo != ref->docid_lo ||
			seg->hdr.docid_lo + seg->hdr.ndocs != ref->docid_hi ||
			seg->hdr.ndirwords != expect ||
			seg->hdr.ndocmap != (seg->hdr.ndocs + SPM_DOCMAP_PER_PAGE - 1) / SPM_DOCMAP_PER_PAGE ||
			seg->hdr.nalive != (seg->hdr.ndocs + SPM_BITS_PER_PAGE - 1) / SPM_BITS_PER_PAGE ||
			(seg->hdr.nnullmap != 0 && seg->hdr.nnullmap != seg->hdr.nalive))
			corrupt(index, seg, "inconsistent header");
		if ((seg->hdr.flags & SPM_SEG_RANGES ?
			 seg->hdr.nranges != (uint32) (((uint64) seg->hdr.ndocs + SPM_RANGE_DOCS - 1) / SPM_RANGE_DOCS) ||
			 seg->hdr.nranges >= SPM_RANGE_LIMIT ||
			 seg->hdr.fwd_bytes < (uint64) seg->hdr.ndocs * sizeof(uint32) :
			 seg->hdr.nranges != 0) ||
			((seg->hdr.flags & SPM_SEG_FWD16) &&
			 (!(seg->hdr.flags & SPM_SEG_RANGES) || seg->hdr.dims < 1 ||
			  seg->hdr.dims > SPM_FWD16_DIMS)) ||
			((seg->hdr.flags & SPM_SEG_FWDQ) &&
			 (seg->hdr.flags & (SPM_SEG_RANGES | SPM_SEG_FWD16 | SPM_SEG_QUANT)) !=
			 (SPM_SEG_RANGES | SPM_SEG_FWD16 | SPM_SEG_QUANT)) ||
			seg->hdr.nfwd != stream_pages(seg->hdr.fwd_bytes) ||
			seg->hdr.nrangemax != stream_pages(seg->hdr.rangemax_bytes) ||
			seg->hdr.nrangeidx != stream_pages(rangeidx_bytes(&seg->hdr)))
			corrupt(index, seg, "inconsistent range data in the header");

		words = palloc(Max(expect, 1) * sizeof(uint32));
		read_directory(index, seg, words, expect);
		for (uint32 i = 0; i < expect; i++)
		{
			/* skip the first terms of the dictionary pairs */
			uint32		pair = i - (seg->hdr.ndocmap + seg->hdr.nalive +
									seg->hdr.nnullmap);

			if (pair < 2 * seg->hdr.ndict && pair % 2 == 0)
				continue;
			if (words[i] == SPM_METAPAGE_BLKNO || words[i] >= nblocks)
				corrupt(index, seg, "directory lists a page outside the index");
		}
		seg->docmap = words;
		seg->alive = words + seg->hdr.ndocmap;
		seg->nullmap = seg->alive + seg->hdr.nalive;
		seg->dict_first = palloc(Max(seg->hdr.ndict, 1) * sizeof(uint32));
		seg->dict_blk = palloc(Max(seg->hdr.ndict, 1) * sizeof(BlockNumber));
		seg->post = seg->nullmap + seg->hdr.nnullmap + 2 * seg->hdr.ndict;
		seg->skip = seg->post + seg->hdr.npost;
		seg->fwd = seg->skip + seg->hdr.nskip;
		seg->rangeidx = seg->fwd + seg->hdr.nfwd;
		seg->rangemax = seg->rangeidx + seg->hdr.nrangeidx;
		for (uint32 i = 0; i < seg->hdr.ndict; i++)
		{
			uint32	   *pair = seg->nullmap + seg->hdr.nnullmap + 2 * i;

			seg->dict_first[i] = pair[0];
			seg->dict_blk[i] = pair[1];
			if (i > 0 && seg->dict_first[i] <= seg->dict_first[i - 1])
				corrupt(index, seg, "unsorted dictionary directory");
		}

		/*
		 * The NULL-row bitset never changes: count it once, when the
		 * segment is loaded, so that a lost or extra bit (a NULL row
		 * scored as an empty one) is caught rather than misplaced.
		 */
		/*
		 * Alive bits only go from 1 to 0, and the metapage's ndead counts
		 * the zeros, so there are at least ref->ndead of them now; fewer
		 * means dead documents came back, whose TIDs VACUUM may have
		 * handed to other rows.  Checked once per segment and backend.
		 */
		{
			uint64		alive = 0;

			for (uint32 i = 0; i < seg->hdr.nalive; i++)
			{
				uint32		nbits = Min(seg->hdr.ndocs - i * SPM_BITS_PER_PAGE,
										(uint32) SPM_BITS_PER_PAGE);
				const uint8 *bits;

				buf = ReadBuffer(index, seg->alive[i]);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
				page = BufferGetPage(buf);
				SpmCheckPage(index, page, seg->alive[i], SPM_PAGE_ALIVE,
							 ref->segment_id);
				bits = (const uint8 *) PageGetContents(page);
				alive += pg_popcount((const char *) bits, nbits / 8);
				for (uint32 b = nbits & ~7; b < nbits; b++)
					alive += (bits[b / 8] >> (b % 8)) & 1;
				UnlockReleaseBuffer(buf);
			}
			if (alive + ref->ndead > seg->hdr.ndocs)
				corrupt(index, seg, "alive bitset has fewer dead documents than the metapage counts");
		}

		if (seg->hdr.nnullmap > 0)
		{
			uint64		nulls = 0;

			for (uint32 i = 0; i < seg->hdr.nnullmap; i++)
			{
				buf = ReadBuffer(index, seg->nullmap[i]);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
				page = BufferGetPage(buf);
				SpmCheckPage(index, page, seg->nullmap[i], SPM_PAGE_NULLMAP,
							 ref->segment_id);
				nulls += pg_popcount(PageGetContents(page), SPM_BITMAP_BYTES);
				UnlockReleaseBuffer(buf);
			}
			if (nulls != seg->hdr.nnull)
				corrupt(index, seg, "NULL-row bitset does not match the header's count");
		}

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(SpmTermInfo);
		ctl.hcxt = cxt;
		seg->terms = hash_create("sparse_maxscore terms", 256, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();

	MemoryContextSwitchTo(old);
	return seg;
}

/*
 * The cached view of segment i of meta, loading it if needed.
 */
SpmSegment *
SpmGetSegment(Relation index, const SpmMetaPageData *meta, int i)
{
	const SpmSegmentRef *ref = &meta->segments[i];
	SpmSegment *seg;

	for (int j = 0; j < cache_n; j++)
	{
		seg = cache[j];
		if (seg->segment_id == ref->segment_id && seg->nonce == meta->nonce &&
			seg->header == ref->header &&
			SpmRelFileEquals(seg->node, SPM_REL_FILE(index)))
		{
			seg->stamp = cache_stamp;
			return seg;
		}
	}

	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext,
										  "sparse_maxscore segment cache",
										  ALLOCSET_DEFAULT_SIZES);
	if (cache_n == SPM_CACHE_MAX)
		evict_one();
	seg = load_segment(index, meta, ref);
	seg->stamp = cache_stamp;
	cache[cache_n++] = seg;
	return seg;
}

/*
 * The cache entry of term (looked up in the dictionary on first use).
 */
static SpmTermInfo *
lookup_term(Relation index, SpmSegment *seg, uint32 term)
{
	SpmTermInfo *info;
	SpmDictEntry e;
	SpmDictEntry *entry = &e;
	bool		found;
	int			lo;
	int			hi;
	int			p;
	Buffer		buf;
	Page		page;
	SpmDictEntry *entries;
	int			n;
	bool		have = false;
	uint32		ordinal = 0;

	info = hash_search(seg->terms, &term, HASH_FIND, NULL);
	if (info)
		return info;

	/* last dictionary page whose first term is <= term */
	lo = 0;
	hi = (int) seg->hdr.ndict - 1;
	p = -1;
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (seg->dict_first[mid] <= term)
		{
			p = mid;
			lo = mid + 1;
		}
		else
			hi = mid - 1;
	}

	if (p >= 0)
	{
		BlockNumber blkno = seg->dict_blk[p];

		if (blkno >= RelationGetNumberOfBlocks(index))
			corrupt(index, seg, "dictionary page beyond the end of the index");
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_DICT, seg->segment_id);
		entries = (SpmDictEntry *) PageGetContents(page);
		n = (((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData)) /
			sizeof(SpmDictEntry);
		if (n < 1 || entries[0].term != seg->dict_first[p])
		{
			UnlockReleaseBuffer(buf);
			corrupt(index, seg, "dictionary page does not start with the directory's first term");
		}
		/* the binary search needs order; once per term and backend */
		for (int i = 1; i < n; i++)
		{
			if (entries[i].term <= entries[i - 1].term)
			{
				UnlockReleaseBuffer(buf);
				corrupt(index, seg, "dictionary page out of order");
			}
		}
		lo = 0;
		hi = n - 1;
		while (lo <= hi)
		{
			int			mid = (lo + hi) / 2;

			if (entries[mid].term == term)
			{
				*entry = entries[mid];
				have = true;
				ordinal = (uint32) p * SPM_DICT_PER_PAGE + mid;
				break;
			}
			if (entries[mid].term < term)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
		UnlockReleaseBuffer(buf);
		/* ordinals count full pages (README "Ranges") */
		if (have && p < (int) seg->hdr.ndict - 1 && n != SPM_DICT_PER_PAGE)
			corrupt(index, seg, "dictionary page not full");
		if (have && (entry->df == 0 || entry->df > seg->hdr.ndocs ||
					 entry->skip_blkno == InvalidBlockNumber ||
					 !SpmDictEntryQuantOk(seg, entry) ||
					 ((entry->flags & SPM_DICT_INLINE) ?
					  (entry->df > SPM_BLOCK_POSTINGS || entry->skip_idx >= BLCKSZ) :
					  entry->skip_idx >= SPM_SKIP_PER_PAGE)))
			corrupt(index, seg, "invalid dictionary entry");
	}

	info = hash_search(seg->terms, &term, HASH_ENTER, &found);
	info->found = have;
	info->ordinal = ordinal;
	info->data = NULL;
	info->brief = NULL;
	if (have)
		info->entry = *entry;
	return info;
}

/*
 * Find term in the segment's dictionary.  Returns false if the segment
 * has no posting for it.
 */
bool
SpmLookupTerm(Relation index, SpmSegment *seg, uint32 term,
			  SpmDictEntry *entry)
{
	SpmTermInfo *info = lookup_term(index, seg, term);

	if (info->found)
		*entry = info->entry;
	return info->found;
}

/*
 * The term's skip entries as flat arrays, or NULL if the segment has no
 * posting for it.  Cached with the segment while the backend's budget for
 * skip arrays lasts; beyond it, built in CurrentMemoryContext each time.
 */
const SpmTermData *
SpmGetTerm(Relation index, SpmSegment *seg, uint32 term)
{
	SpmTermInfo *info = lookup_term(index, seg, term);
	SpmTermData *d;
	SpmSkipEntry *skips;
	int			nb;
	Size		bytes;
	MemoryContext cxt;
	char	   *mem;

	if (!info->found)
		return NULL;
	if (info->data)
		return info->data;

	nb = (info->entry.df + SPM_BLOCK_POSTINGS - 1) / SPM_BLOCK_POSTINGS;
	bytes = MAXALIGN(sizeof(SpmTermData)) + spm_term_summary_size(nb) +
		nb * (sizeof(uint32) * 4 + sizeof(uint16) + sizeof(uint8)) + 16;
	cxt = skip_cache_bytes + bytes <= SPM_SKIP_CACHE_BYTES ? seg->cxt :
		CurrentMemoryContext;

	skips = palloc(nb * sizeof(SpmSkipEntry));
	SpmReadSkips(index, seg, &info->entry, skips);

	mem = MemoryContextAlloc(cxt, bytes);
	d = (SpmTermData *) mem;
	mem += MAXALIGN(sizeof(SpmTermData));
	d->sum = (SpmTermSummary *) mem;
	mem += spm_term_summary_size(nb);
	d->entry = info->entry;
	d->nblocks = nb;
	d->last = (uint32 *) mem;
	d->max_w = (float4 *) (d->last + nb);
	d->min_w = d->max_w + nb;
	d->blkno = (BlockNumber *) (d->min_w + nb);
	d->off = (uint16 *) (d->blkno + nb);
	d->count = (uint8 *) (d->off + nb);
	for (int b = 0; b < nb; b++)
	{
		d->last[b] = skips[b].last_docid;
		d->max_w[b] = skips[b].max_w;
		d->min_w[b] = skips[b].min_w;
		d->blkno[b] = skips[b].blkno;
		d->off[b] = skips[b].off;
		d->count[b] = skips[b].count;
	}
	pfree(skips);
	spm_term_summarize(d->sum, nb, d->max_w, d->min_w, d->count);
	memset(&d->range, 0, sizeof(SpmRangeDesc));
	if (info->brief)
		d->range = info->brief->range;
	else if (seg->hdr.flags & SPM_SEG_RANGES)
		SpmReadRangeDesc(index, seg, info->ordinal, info->entry.df, &d->range);

	if (cxt == seg->cxt)
	{
		info->data = d;
		seg->skipbytes += bytes;
		skip_cache_bytes += bytes;
	}
	return d;
}

/*
 * What SpmGetTerm returns without the skip entries: the term's dictionary
 * entry and range descriptor, nblocks -1 and the skip arrays NULL; or NULL
 * if the segment has no posting for it.  A segment without range data, or
 * a term already loaded, gets SpmGetTerm's whole entry.  What the policy and range pruning
 * read, cached with the term's dictionary entry.  Loading every query
 * term's skip entries for a segment that range pruning then answered made
 * a new backend's first queries pay page faults for a skip cache they did
 * not use (doc/decisions.md "Skip entries loaded when a traversal needs
 * them").
 */
const SpmTermData *
SpmGetTermBrief(Relation index, SpmSegment *seg, uint32 term)
{
	SpmTermInfo *info = lookup_term(index, seg, term);

	if (!info->found)
		return NULL;
	if (info->data)
		return info->data;
	/* without range data every algorithm reads the skip entries */
	if (!(seg->hdr.flags & SPM_SEG_RANGES))
		return SpmGetTerm(index, seg, term);
	if (info->brief == NULL)
	{
		SpmTermData *b = MemoryContextAllocZero(seg->cxt, sizeof(SpmTermData));

		b->entry = info->entry;
		b->nblocks = -1;
		if (seg->hdr.flags & SPM_SEG_RANGES)
			SpmReadRangeDesc(index, seg, info->ordinal, info->entry.df, &b->range);
		info->brief = b;
	}
	return info->brief;
}

/*
 * The range descriptor of the dictionary's ordinal-th term (df postings)
 * in a segment with SPM_SEG_RANGES, checked against the segment: inside
 * the RANGEMAX stream, dense exactly when the term is in a quarter of the
 * ranges or more (the writer's rule).
 */
void
SpmReadRangeDesc(Relation index, SpmSegment *seg, uint32 ordinal, uint32 df,
				 SpmRangeDesc *desc)
{
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	uint64		len;
	bool		dense;

	if (ordinal >= seg->hdr.nterms)
		corrupt(index, seg, "dictionary entry beyond the header's term count");
	SpmReadStream(index, seg, SPM_STREAM_RANGEIDX,
				  range_desc_base(&seg->hdr) + (uint64) ordinal * sizeof(SpmRangeDesc),
				  sizeof(SpmRangeDesc), desc, &pin);
	SpmUnpin(&pin);
	dense = (uint64) desc->nr * 4 >= seg->hdr.nranges;
	len = dense ? seg->hdr.nranges : (uint64) desc->nr * 4;
	if (desc->nr == 0 || desc->nr > seg->hdr.nranges ||
		desc->nr > df || desc->off % 4 != 0 ||
		desc->flags != (dense ? SPM_RANGE_DENSE : 0) ||
		desc->off > seg->hdr.rangemax_bytes ||
		len > seg->hdr.rangemax_bytes - desc->off)
		corrupt(index, seg, "invalid range descriptor");
}

/* the pages, length and page type of one of the segment's byte streams */
static void
stream_of(SpmSegment *seg, SpmStreamKind kind, const BlockNumber **pages,
		  uint32 *npages, uint64 *total, SpmPageType *type)
{
	switch (kind)
	{
		case SPM_STREAM_FWD:
			*pages = seg->fwd;
			*npages = seg->hdr.nfwd;
			*total = seg->hdr.fwd_bytes;
			*type = SPM_PAGE_FORWARD;
			break;
		case SPM_STREAM_RANGEIDX:
			*pages = seg->rangeidx;
			*npages = seg->hdr.nrangeidx;
			*total = rangeidx_bytes(&seg->hdr);
			*type = SPM_PAGE_RANGEIDX;
			break;
		default:
			*pages = seg->rangemax;
			*npages = seg->hdr.nrangemax;
			*total = seg->hdr.rangemax_bytes;
			*type = SPM_PAGE_RANGEMAX;
			break;
	}
}

/*
 * Pin (keeping the pin between calls) and share-lock the page of one of
 * the segment's byte streams that holds byte x (x < the stream's length);
 * return a pointer to byte x and set *avail to the bytes of the stream
 * from there to the end of the page.  The caller unlocks (LockBuffer
 * BUFFER_LOCK_UNLOCK on pin->buf) before pinning another page with the
 * same pin.  Each page is checked when first pinned (on every read on a
 * hot standby, README "Page recycling"), and its length against the
 * stream's.
 */
const char *
SpmLockStream(Relation index, SpmSegment *seg, SpmStreamKind kind, uint64 x,
			  uint32 *avail, SpmPin *pin)
{
	const BlockNumber *pages;
	uint32		npages;
	uint64		total;
	SpmPageType type;
	uint64		pi;
	uint32		within;
	uint64		fill;
	bool		fresh;
	Page		page;

	stream_of(seg, kind, &pages, &npages, &total, &type);
	if (x >= total)
		corrupt(index, seg, "read beyond the end of the range data or forward copy");
	pi = x / SPM_PAGE_CONTENT;
	within = (uint32) (x % SPM_PAGE_CONTENT);
	fill = Min(total - pi * SPM_PAGE_CONTENT, (uint64) SPM_PAGE_CONTENT);
	if (pi >= npages)
		corrupt(index, seg, "range data or forward copy page out of range");
	fresh = pin->buf == InvalidBuffer || pin->blkno != pages[pi];
	if (fresh && seg->recent[kind] == NULL && !RelationUsesLocalBuffers(index))
		seg->recent[kind] = MemoryContextAllocZero(seg->cxt,
												   (Size) npages * sizeof(Buffer));
	page = pin_page(index, pin, pages[pi],
					seg->recent[kind] ? &seg->recent[kind][pi] : NULL);
	if (fresh || RecoveryInProgress())
		SpmCheckPage(index, page, pages[pi], type, seg->segment_id);
	if (((PageHeader) page)->pd_lower != MAXALIGN(SizeOfPageHeaderData) + fill)
	{
		LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
		corrupt(index, seg, "range data or forward copy page of the wrong length");
	}
	*avail = (uint32) fill - within;
	return PageGetContents(page) + within;
}

/*
 * Ask the OS for the pages of one of the segment's byte streams that hold
 * bytes [x, x + len) (clipped to the stream), so that their reads overlap
 * instead of waiting one by one when SpmLockStream reaches them.  A page
 * this backend has found in shared buffers before (its recent slot is
 * set) is taken to be there still and costs nothing; for the others,
 * PrefetchBuffer looks the page up and, if it is in shared buffers,
 * remembers where for the pin, else starts its read (posix_fadvise).  On a
 * warm cache this is a few array reads per page (doc/decisions.md
 * "Prefetching range data").
 */
void
SpmPrefetchStream(Relation index, SpmSegment *seg, SpmStreamKind kind,
				  uint64 x, uint64 len)
{
	const BlockNumber *pages;
	uint32		npages;
	uint64		total;
	SpmPageType type;
	uint64		first;
	uint64		last;

	stream_of(seg, kind, &pages, &npages, &total, &type);
	if (len == 0 || x >= total || RelationUsesLocalBuffers(index))
		return;
	len = Min(len, total - x);
	first = x / SPM_PAGE_CONTENT;
	last = Min((x + len - 1) / SPM_PAGE_CONTENT, (uint64) npages - 1);
	if (seg->recent[kind] == NULL)
		seg->recent[kind] = MemoryContextAllocZero(seg->cxt,
												   (Size) npages * sizeof(Buffer));
	for (uint64 pi = first; pi <= last; pi++)
	{
		PrefetchBufferResult res;

		if (seg->recent[kind][pi] != InvalidBuffer)
			continue;
		res = PrefetchBuffer(index, MAIN_FORKNUM, pages[pi]);
		if (BufferIsValid(res.recent_buffer))
			seg->recent[kind][pi] = res.recent_buffer;
	}
}

/* copy len bytes from byte x of one of the segment's byte streams */
void
SpmReadStream(Relation index, SpmSegment *seg, SpmStreamKind kind, uint64 x,
			  Size len, void *dst, SpmPin *pin)
{
	const BlockNumber *pages;
	uint32		npages;
	uint64		total;
	SpmPageType type;
	char	   *out = dst;

	stream_of(seg, kind, &pages, &npages, &total, &type);
	if (x > total || len > total - x)
		corrupt(index, seg, "read beyond the end of the range data or forward copy");
	while (len > 0)
	{
		uint32		avail;
		const char *p = SpmLockStream(index, seg, kind, x, &avail, pin);
		uint32		n = (uint32) Min((Size) avail, len);

		memcpy(out, p, n);
		LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
		out += n;
		x += n;
		len -= n;
	}
}

/*
 * Whether a dictionary entry's flags beside SPM_DICT_INLINE are what the
 * segment's format says: none, or in a segment with SPM_SEG_FWDQ the
 * term's exponent (SPM_DICT_TERMQ), in range, with min_w an integer
 * multiple b_t of 2^e_t and max_w inside the term's 255 cells.
 */
bool
SpmDictEntryQuantOk(const SpmSegment *seg, const SpmDictEntry *e)
{
	int			exp;
	double		b;

	if (!(seg->hdr.flags & SPM_SEG_FWDQ))
		return (e->flags & ~SPM_DICT_INLINE) == 0;
	if ((e->flags & ((1 << SPM_DICT_QEXP_SHIFT) - 1) & ~SPM_DICT_INLINE) != SPM_DICT_TERMQ)
		return false;
	exp = spm_dict_qexp(e);
	if (exp < SPM_QEXP_MIN || exp > SPM_QEXP_MAX || isnan(e->min_w) ||
		isnan(e->max_w) || isinf(e->min_w) || isinf(e->max_w))
		return false;
	b = ldexp((double) e->min_w, -exp);
	return b == floor(b) && fabs(b) + 256 < SPM_QBASE_LIMIT &&
		e->max_w > e->min_w &&
		(double) e->max_w <= ldexp(b + 255, exp);
}

/*
 * Every term's exponent and base (a segment with SPM_SEG_FWDQ), from its
 * whole dictionary.
 */
SpmTermQuant *
SpmLoadTermQuant(Relation index, SpmSegment *seg)
{
	SpmTermQuant *tq = palloc(sizeof(SpmTermQuant));
	SpmDictEntry *dict = palloc(SPM_DICT_PER_PAGE * sizeof(SpmDictEntry));

	Assert(seg->hdr.flags & SPM_SEG_FWDQ);
	for (int t = 0; t < SPM_FWD16_DIMS; t++)
	{
		tq->exp[t] = SPM_QEXP_EXACT;
		tq->base[t] = 0;
	}
	for (uint32 p = 0; p < seg->hdr.ndict; p++)
	{
		int			n = SpmReadDictPage(index, seg, p, dict);

		for (int i = 0; i < n; i++)
		{
			if (dict[i].term >= SPM_FWD16_DIMS || !SpmDictEntryQuantOk(seg, &dict[i]))
				corrupt(index, seg, "invalid dictionary entry");
			tq->exp[dict[i].term] = (int16) spm_dict_qexp(&dict[i]);
			tq->base[dict[i].term] = spm_dict_qbase(&dict[i]);
		}
	}
	pfree(dict);
	return tq;
}

/*
 * Read the nnz elements of the forward-copy document whose elements start
 * at stream offset pos into out[], in the segment's layout (spmformat.h,
 * spm_fwd_doc_bytes); returns the offset after them.  In a segment with
 * SPM_SEG_FWDQ the codes are decoded with tq (SpmLoadTermQuant) to the
 * upper ends the posting blocks decode to.  The caller checks their order
 * and range.
 */
uint64
SpmReadFwdElems(Relation index, SpmSegment *seg, uint64 pos, uint32 nnz,
				SpmFwdElem *out, SpmPin *pin, const SpmTermQuant *tq)
{
	bool		fwd16 = (seg->hdr.flags & SPM_SEG_FWD16) != 0;
	bool		fwdq = (seg->hdr.flags & SPM_SEG_FWDQ) != 0;
	uint64		len = spm_fwd_doc_bytes(seg->hdr.flags, nnz);

	if (pos > seg->hdr.fwd_bytes || len > seg->hdr.fwd_bytes - pos)
		corrupt(index, seg, "read beyond the end of the range data or forward copy");
	if (!fwd16)
		SpmReadStream(index, seg, SPM_STREAM_FWD, pos, len, out, pin);
	else
	{
		/*
		 * The terms go to the last quarter of out first; moving them to
		 * out[i].term in ascending i never overwrites one not yet moved.
		 */
		uint16	   *terms = (uint16 *) (out + nnz) - nnz;
		uint64		wpos = pos + TYPEALIGN(4, 2 * (uint64) nnz);

		SpmReadStream(index, seg, SPM_STREAM_FWD, pos, 2 * (Size) nnz, terms, pin);
		for (uint32 i = 0; i < nnz; i++)
			out[i].term = terms[i];
		if (fwdq && tq == NULL)
			elog(ERROR, "sparse_maxscore: a quantized forward copy read without its exponents");
		for (uint32 i = 0; i < nnz;)
		{
			float		w[256];
			uint8		c[256];
			uint32		n = Min(nnz - i, (uint32) lengthof(w));

			if (!fwdq)
			{
				SpmReadStream(index, seg, SPM_STREAM_FWD, wpos + 4 * (uint64) i,
							  4 * (Size) n, w, pin);
				for (uint32 j = 0; j < n; j++)
					out[i + j].w = w[j];
			}
			else
			{
				SpmReadStream(index, seg, SPM_STREAM_FWD, wpos + (uint64) i,
							  (Size) n, c, pin);
				for (uint32 j = 0; j < n; j++)
				{
					uint32		t = out[i + j].term;

					if (tq->exp[t] == SPM_QEXP_EXACT || c[j] == 0)
						corrupt(index, seg, "invalid code in the forward copy");
					out[i + j].w = spm_qupper(tq->base[t] + c[j], tq->exp[t]);
				}
			}
			i += n;
		}
	}
	return pos + len;
}

/* the forward-copy offset of range r (r = nranges: the end) */
uint64
SpmRangeOffset(Relation index, SpmSegment *seg, uint32 r, SpmPin *pin)
{
	uint64		off;

	if (r > seg->hdr.nranges)
		corrupt(index, seg, "range beyond the segment");
	SpmReadStream(index, seg, SPM_STREAM_RANGEIDX, (uint64) r * sizeof(uint64),
				  sizeof(uint64), &off, pin);
	if (off > seg->hdr.fwd_bytes || off % 4 != 0)
		corrupt(index, seg, "invalid range offset");
	return off;
}

/*
 * Read the skip entries of a term into out[] (room for ceil(df / 128)
 * entries); returns their number.  They are checked to describe a
 * well-formed posting list of df postings inside the segment.
 */
int
SpmReadSkips(Relation index, SpmSegment *seg, const SpmDictEntry *entry,
			 SpmSkipEntry *out)
{
	int			nblocks = (entry->df + SPM_BLOCK_POSTINGS - 1) / SPM_BLOCK_POSTINGS;
	BlockNumber blkno = entry->skip_blkno;
	int			idx = entry->skip_idx;
	int			got = 0;
	uint64		postings = 0;
	BlockNumber nrel = RelationGetNumberOfBlocks(index);

	if (entry->flags & SPM_DICT_INLINE)
	{
		/* one block, no skip entry: the last docid from the block */
		Buffer		buf;
		Page		page;
		int			lower;
		bool		ok;

		if (nblocks != 1 || blkno == InvalidBlockNumber)
			corrupt(index, seg, "invalid dictionary entry");
		if (blkno >= nrel)
			corrupt(index, seg, "the block of a one-block term is beyond the end");
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_POSTING, seg->segment_id);
		lower = ((PageHeader) page)->pd_lower;
		ok = idx >= (int) MAXALIGN(SizeOfPageHeaderData) &&
			idx + (int) sizeof(SpmBlockHeader) <= lower;
		if (ok && ((const SpmBlockHeader *) (page + idx))->count != entry->df)
		{
			UnlockReleaseBuffer(buf);
			corrupt(index, seg, "posting count does not match the dictionary");
		}
		ok = ok && spm_block_last_docid((const char *) page + idx, lower - idx,
										(int) entry->df, &out[0].last_docid);
		UnlockReleaseBuffer(buf);
		if (!ok)
			corrupt(index, seg, "posting block of a one-block term");
		out[0].max_w = entry->max_w;
		out[0].min_w = entry->min_w;
		out[0].blkno = blkno;
		out[0].off = (uint16) idx;
		out[0].count = (uint8) entry->df;
		out[0].flags = 0;
		got = 1;
	}

	while (got < nblocks)
	{
		Buffer		buf;
		Page		page;
		int			n;

		if (blkno == InvalidBlockNumber || blkno >= nrel)
			corrupt(index, seg, "broken skip chain");
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_SKIP, seg->segment_id);
		n = (((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData)) /
			sizeof(SpmSkipEntry);
		if (idx >= n)
		{
			UnlockReleaseBuffer(buf);
			corrupt(index, seg, "skip entry out of range");
		}
		n = Min(n - idx, nblocks - got);
		memcpy(out + got, (SpmSkipEntry *) PageGetContents(page) + idx,
			   n * sizeof(SpmSkipEntry));
		blkno = SpmPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		got += n;
		idx = 0;
	}

	for (int i = 0; i < nblocks; i++)
	{
		const SpmSkipEntry *s = &out[i];

		if (s->count < 1 || s->count > SPM_BLOCK_POSTINGS ||
			s->last_docid >= seg->hdr.ndocs ||
			(i > 0 && s->last_docid < out[i - 1].last_docid + s->count) ||
			s->max_w < s->min_w || s->blkno >= nrel)
			corrupt(index, seg, "invalid skip entry");
		postings += s->count;
	}
	if (postings != entry->df)
		corrupt(index, seg, "posting count does not match the dictionary");
	return nblocks;
}

/*
 * Pinning a page by the buffer it was last found in.
 *
 * ReadBuffer hashes the block's tag into the shared buffer mapping table
 * and takes the table partition's lock, a large part of a query's time
 * where range pruning pins hundreds of stream pages per query or MaxScore
 * thousands of posting blocks (src/README "Segment cache").  ReadRecentBuffer instead
 * pins a given buffer after checking, under the buffer header's lock,
 * that it still holds exactly that block: the same page, without the
 * lookup.  The buffer to try comes from a slot: per stream page of a
 * segment (SpmSegment.recent), or for other pages (posting blocks, the
 * docmap, the bitsets) one per block number modulo SPM_BLOCK_HINTS in a
 * table per backend shared by every index, where a slot may name a buffer
 * that now holds another block, of this index or another, and the pin
 * goes through ReadBuffer (which refills the slot).
 *
 * ReadRecentBuffer does not raise the buffer's usage count; so that the
 * clock sweep still sees the pages in use, every SPM_RECENT_BUMP-th pin
 * that could take the short way takes ReadBuffer, which does.  Temporary
 * indexes (local buffers) always take ReadBuffer.
 */
#define SPM_RECENT_BUMP		16
#define SPM_BLOCK_HINTS		131072

static uint32 recent_pins = 0;
static Buffer *block_hints = NULL;

/* pin block blkno of the index; recent: a SpmSegment.recent slot or NULL */
static Buffer
read_buffer(Relation index, BlockNumber blkno, Buffer *recent)
{
	Buffer		buf;

	if (RelationUsesLocalBuffers(index))
		return ReadBuffer(index, blkno);
	if (recent == NULL)
	{
		if (block_hints == NULL)
			block_hints = MemoryContextAllocZero(TopMemoryContext,
												 SPM_BLOCK_HINTS * sizeof(Buffer));
		recent = &block_hints[blkno % SPM_BLOCK_HINTS];
	}
	if (*recent != InvalidBuffer &&
		++recent_pins % SPM_RECENT_BUMP != 0 &&
#if PG_VERSION_NUM >= 160000
		ReadRecentBuffer(index->rd_locator, MAIN_FORKNUM, blkno, *recent)
#else
		ReadRecentBuffer(index->rd_node, MAIN_FORKNUM, blkno, *recent)
#endif
		)
		return *recent;
	buf = ReadBuffer(index, blkno);
	*recent = buf;
	return buf;
}

/*
 * Pin (and keep pinned) page blkno in pin, by read_buffer with recent,
 * and share-lock it.
 */
static Page
pin_page(Relation index, SpmPin *pin, BlockNumber blkno, Buffer *recent)
{
	if (pin->buf != InvalidBuffer && pin->blkno != blkno)
	{
		ReleaseBuffer(pin->buf);
		pin->buf = InvalidBuffer;
	}
	if (pin->buf == InvalidBuffer)
	{
		pin->buf = read_buffer(index, blkno, recent);
		pin->blkno = blkno;
	}
	LockBuffer(pin->buf, BUFFER_LOCK_SHARE);
	return BufferGetPage(pin->buf);
}

void
SpmUnpin(SpmPin *pin)
{
	if (pin->buf != InvalidBuffer)
		ReleaseBuffer(pin->buf);
	pin->buf = InvalidBuffer;
	pin->blkno = InvalidBlockNumber;
}

/*
 * Heap TID of local docid `local`.  pin keeps the last docmap page pinned
 * (no lock) between calls; release it with SpmUnpin.
 */
void
SpmGetTid(Relation index, SpmSegment *seg, uint32 local, ItemPointer tid,
		  SpmPin *pin)
{
	uint32		pageno = local / SPM_DOCMAP_PER_PAGE;
	uint32		slot = local % SPM_DOCMAP_PER_PAGE;
	BlockNumber blkno;
	Page		page;

	if (local >= seg->hdr.ndocs)
		corrupt(index, seg, "docid beyond the docmap");
	blkno = seg->docmap[pageno];
	page = pin_page(index, pin, blkno, NULL);
	SpmCheckPage(index, page, blkno, SPM_PAGE_DOCMAP, seg->segment_id);
	if (MAXALIGN(SizeOfPageHeaderData) + (slot + 1) * sizeof(ItemPointerData) >
		((PageHeader) page)->pd_lower)
	{
		LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
		corrupt(index, seg, "short docmap page");
	}
	*tid = ((ItemPointerData *) PageGetContents(page))[slot];
	LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
	if (!ItemPointerIsValid(tid))
		corrupt(index, seg, "invalid heap TID in docmap");
}

/*
 * Copy bitset page pageno (alive bits, or NULL-row bits if nulls) into
 * dst[SPM_BITMAP_BYTES].  A segment without NULL rows has no null pages:
 * then dst is zeroed.
 */
void
SpmReadBitsetPage(Relation index, SpmSegment *seg, bool nulls, uint32 pageno,
				  uint8 *dst, SpmPin *pin)
{
	uint32		npages = nulls ? seg->hdr.nnullmap : seg->hdr.nalive;
	BlockNumber blkno;
	Page		page;
	SpmPageType type = nulls ? SPM_PAGE_NULLMAP : SPM_PAGE_ALIVE;

	if (npages == 0 && nulls)
	{
		memset(dst, 0, SPM_BITMAP_BYTES);
		return;
	}
	if (pageno >= npages)
		corrupt(index, seg, "bitset page out of range");
	blkno = nulls ? seg->nullmap[pageno] : seg->alive[pageno];
	page = pin_page(index, pin, blkno, NULL);
	SpmCheckPage(index, page, blkno, type, seg->segment_id);
	memcpy(dst, PageGetContents(page), SPM_BITMAP_BYTES);
	LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
}

/*
 * Read dictionary page pageno of the segment into out[] (room for
 * SPM_DICT_PER_PAGE entries); returns the number of entries.
 */
int
SpmReadDictPage(Relation index, SpmSegment *seg, uint32 pageno,
				SpmDictEntry *out)
{
	BlockNumber blkno;
	Buffer		buf;
	Page		page;
	int			n;

	if (pageno >= seg->hdr.ndict)
		corrupt(index, seg, "dictionary page out of range");
	blkno = seg->dict_blk[pageno];
	buf = ReadBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	SpmCheckPage(index, page, blkno, SPM_PAGE_DICT, seg->segment_id);
	n = (((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData)) /
		sizeof(SpmDictEntry);
	if (n < 1 || n > SPM_DICT_PER_PAGE)
	{
		UnlockReleaseBuffer(buf);
		corrupt(index, seg, "bad dictionary page");
	}
	memcpy(out, PageGetContents(page), n * sizeof(SpmDictEntry));
	UnlockReleaseBuffer(buf);
	return n;
}

/*
 * Pin (keeping the pin between calls) and share-lock the posting page
 * blkno; return the block at off, of count postings, and the bytes
 * available from it, its cache lines already requested (spm_block_prefetch).
 * The page is checked when first pinned, and on every call on a hot
 * standby (README "Page recycling").
 */
static const char *
lock_posting_block(Relation index, SpmSegment *seg, BlockNumber blkno,
				   int off, int count, int *avail, SpmPin *pin)
{
	Page		page;
	int			lower;
	bool		fresh = false;

	if (pin->buf != InvalidBuffer && pin->blkno != blkno)
		SpmUnpin(pin);
	if (pin->buf == InvalidBuffer)
	{
		pin->buf = read_buffer(index, blkno, NULL);
		pin->blkno = blkno;
		fresh = true;
	}
	LockBuffer(pin->buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(pin->buf);
	if (fresh || RecoveryInProgress())
		SpmCheckPage(index, page, blkno, SPM_PAGE_POSTING, seg->segment_id);
	lower = ((PageHeader) page)->pd_lower;
	if (off < (int) MAXALIGN(SizeOfPageHeaderData) || off >= lower)
	{
		*avail = 0;
		return NULL;
	}
	*avail = lower - off;
	spm_block_prefetch((const char *) page + off, *avail, count);
	return (const char *) page + off;
}

pg_noreturn static void block_corrupt(Relation index, BlockNumber blkno, int off);

static void
block_corrupt(Relation index, BlockNumber blkno, int off)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" has a corrupted posting block at block %u offset %d",
					RelationGetRelationName(index), blkno, off),
			 errhint("REINDEX the index.")));
}

/*
 * Decode the posting block at (blkno, off), described by its skip entry's
 * count and last docid, into docids/weights: quantized weights as the
 * upper ends of their intervals, or the lower ends if lower is true, and
 * the block's exponent into *exp (spm_block_decode_bounds).  pin keeps
 * the page pinned between calls (never locked).
 */
void
SpmReadPostingBlock(Relation index, SpmSegment *seg, BlockNumber blkno,
					int off, int count, uint32 last, bool lower,
					uint32 *docids, float *weights, int16 *exp, SpmPin *pin)
{
	int			avail;
	const char *block = lock_posting_block(index, seg, blkno, off, count,
										   &avail, pin);
	bool		ok = block &&
		spm_block_decode_bounds(block, avail, count, last, lower, docids,
								weights, exp);

	LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
	if (!ok)
		block_corrupt(index, blkno, off);
}

/*
 * Add q * w of every posting of the block to acc[docid - base]; the
 * caller knows from the skip entries that the block's docids lie in
 * [base, base + SPM_WINDOW).
 */
void
SpmAccumulatePostingBlock(Relation index, SpmSegment *seg, BlockNumber blkno,
						  int off, int count, uint32 last, double q,
						  double *acc, uint32 base, SpmPin *pin)
{
	int			avail;
	const char *block = lock_posting_block(index, seg, blkno, off, count,
										   &avail, pin);
	bool		ok = block &&
		spm_block_accumulate(block, avail, count, last, q, acc, base,
							 SPM_WINDOW - 1);

	LockBuffer(pin->buf, BUFFER_LOCK_UNLOCK);
	if (!ok)
		block_corrupt(index, blkno, off);
}

/*
 * Every page of the segment, in a palloc'd array: header, directory
 * chain, and what the directory lists.
 */
BlockNumber *
SpmSegmentPages(Relation index, SpmSegment *seg, int *npages)
{
	int			cap = 2 + seg->hdr.ndirwords;
	BlockNumber *pages = palloc(cap * sizeof(BlockNumber));
	int			n = 0;
	BlockNumber blkno = seg->hdr.dir_head;
	uint32		pairs = seg->hdr.ndict;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	pages[n++] = seg->header;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;

		/* load_segment read the chain, but a cycle ends it early there */
		if (blkno >= nblocks || (BlockNumber) n > nblocks)
			corrupt(index, seg, "broken directory chain");
		buf = ReadBuffer(index, blkno);

		if (n == cap)
		{
			cap *= 2;
			pages = repalloc(pages, cap * sizeof(BlockNumber));
		}
		pages[n++] = blkno;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		SpmCheckPage(index, page, blkno, SPM_PAGE_SEGDIR, seg->segment_id);
		blkno = SpmPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
	if (n + seg->hdr.ndirwords > (uint32) cap)
	{
		cap = n + seg->hdr.ndirwords;
		pages = repalloc(pages, cap * sizeof(BlockNumber));
	}
	for (uint32 i = 0; i < seg->hdr.ndocmap; i++)
		pages[n++] = seg->docmap[i];
	for (uint32 i = 0; i < seg->hdr.nalive; i++)
		pages[n++] = seg->alive[i];
	for (uint32 i = 0; i < seg->hdr.nnullmap; i++)
		pages[n++] = seg->nullmap[i];
	for (uint32 i = 0; i < pairs; i++)
		pages[n++] = seg->dict_blk[i];
	for (uint32 i = 0; i < seg->hdr.npost; i++)
		pages[n++] = seg->post[i];
	for (uint32 i = 0; i < seg->hdr.nskip; i++)
		pages[n++] = seg->skip[i];
	for (uint32 i = 0; i < seg->hdr.nfwd; i++)
		pages[n++] = seg->fwd[i];
	for (uint32 i = 0; i < seg->hdr.nrangeidx; i++)
		pages[n++] = seg->rangeidx[i];
	for (uint32 i = 0; i < seg->hdr.nrangemax; i++)
		pages[n++] = seg->rangemax[i];
	*npages = n;
	return pages;
}

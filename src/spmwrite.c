/*-------------------------------------------------------------------------
 *
 * spmwrite.c
 *	  Write one immutable segment: docmap, postings, skip entries,
 *	  dictionary, bitsets, directory and header.
 *
 * Used by the bulk build and by the pending-list flush and compaction.
 * The caller feeds the documents of the segment in docid order
 * (spm_writer_doc) and then the posting lists in ascending term order
 * (spm_writer_term_begin / spm_writer_postings / spm_writer_term_end);
 * the two may interleave.  Each kind of page fills up in a local page
 * image; a block number is taken when an image is started (so that skip
 * entries can point at posting pages and chains can link forward) and the
 * image is written out when it is full.
 *
 * Nothing written here is reachable until the caller publishes the
 * returned SpmSegmentRef in the metapage; every page is written (and, when
 * wal is set, WAL-logged as a full image) before spm_writer_finish
 * returns: "children first, link last" (README "WAL").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmblock.h"

typedef struct SpmStream
{
	SpmPageType type;
	char	   *image;			/* BLCKSZ page being filled, or NULL */
	Buffer		buf;			/* the block it will be written to */
	BlockNumber blkno;
	int			nitems;			/* items on the current image */
} SpmStream;

struct SpmWriter
{
	MemoryContext cxt;			/* everything the writer allocates */
	Relation	index;
	ForkNumber	fork;
	bool		wal;			/* GenericXLog every page (online writes) */
	uint32		segment_id;
	uint64		docid_lo;

	/* documents */
	uint32		ndocs;
	uint32		nnull;
	int32		dims;
	uint8	   *alive;			/* bitset, grows */
	uint8	   *nullmap;
	Size		bitcap;			/* bytes allocated for each bitset */

	/* page streams */
	SpmStream	docmap;
	SpmStream	post;
	SpmStream	skip;
	SpmStream	dict;

	/* directory */
	uint32	   *docmap_blk;
	uint32		ndocmap;
	uint32		docmap_cap;
	uint32	   *dict_pairs;		/* (first term, blkno) per dictionary page */
	uint32		ndict;
	uint32		dict_cap;
	uint32	   *post_blk;		/* posting pages */
	uint32		npost;
	uint32		post_cap;
	uint32	   *skip_blk;		/* skip pages */
	uint32		nskip;
	uint32		skip_cap;

	/* pages to use first (compaction), ascending */
	const BlockNumber *pref;
	int			npref;
	int			ipref;
	bool		pref_any_xid;	/* caller holds AccessExclusiveLock */
	bool		extend_only;	/* new pages only at the end of the file */

	/* the term being written */
	bool		in_term;
	bool		any_term;
	uint32		term;
	uint32		df;
	float4		max_w;
	float4		min_w;
	BlockNumber skip_blkno;
	uint16		skip_idx;
	uint32		last_docid;
	int			bn;
	uint32		bdocs[SPM_BLOCK_POSTINGS];
	float		bw[SPM_BLOCK_POSTINGS];
	char		enc[SPM_BLOCK_MAX_BYTES];

	/* totals */
	uint32		nterms;
	uint64		npostings;
	double		sum_df_squared;
	uint32		flags;
	float4		max_abs;
};

/* repalloc keeps the chunk in its own context, the writer's */
static void
grow_u32(uint32 **arr, uint32 *cap, uint32 need)
{
	if (need <= *cap)
		return;
	*cap = Max(need, *cap * 2);
	*arr = repalloc(*arr, *cap * sizeof(uint32));
}

/* ---------------------------------------------------------------- pages */

/*
 * A new page for the segment, exclusively locked until it is written: one
 * of the preferred free pages if any is usable, else SpmNewBuffer.
 */
static Buffer
writer_new_buffer(SpmWriter *w)
{
	while (w->ipref < w->npref)
	{
		BlockNumber blkno = w->pref[w->ipref++];
		Buffer		buf = ReadBuffer(w->index, blkno);

		if (ConditionalLockBuffer(buf))
		{
			if (SpmPageIsRecyclable(BufferGetPage(buf), w->pref_any_xid))
				return buf;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}
	if (w->extend_only)
		return SpmExtendBuffer(w->index, w->fork);
	return SpmNewBuffer(w->index, w->fork);
}

static void
stream_start(SpmWriter *w, SpmStream *s)
{
	Assert(s->image == NULL);
	s->buf = writer_new_buffer(w);
	s->blkno = BufferGetBlockNumber(s->buf);
	s->image = MemoryContextAlloc(w->cxt, BLCKSZ);
	SpmInitPage((Page) s->image, s->type, w->segment_id);
	s->nitems = 0;
}

/* write a finished image to its buffer and release the buffer */
static void
write_image(SpmWriter *w, Buffer buf, char *image)
{
	if (w->wal)
	{
		GenericXLogState *state = GenericXLogStart(w->index);
		Page		page = GenericXLogRegisterBuffer(state, buf,
													 GENERIC_XLOG_FULL_IMAGE);

		memcpy(page, image, BLCKSZ);
		GenericXLogFinish(state);
	}
	else
	{
		memcpy(BufferGetPage(buf), image, BLCKSZ);
		MarkBufferDirty(buf);
	}
	UnlockReleaseBuffer(buf);
}

static void
stream_finish(SpmWriter *w, SpmStream *s, BlockNumber next)
{
	if (s->image == NULL)
		return;
	SpmPageGetOpaque((Page) s->image)->next = next;
	write_image(w, s->buf, s->image);
	pfree(s->image);
	s->image = NULL;
	s->buf = InvalidBuffer;
	s->blkno = InvalidBlockNumber;
	CHECK_FOR_INTERRUPTS();
}

/*
 * Make room for len bytes on the stream's image, moving to a new page
 * (linked from the old one) if needed.  Returns true if a new page was
 * started.
 */
static bool
stream_reserve(SpmWriter *w, SpmStream *s, Size len)
{
	SpmStream	old;

	if (s->image != NULL && PageGetExactFreeSpace((Page) s->image) >= len)
		return false;
	if (s->image == NULL)
	{
		stream_start(w, s);
		return true;
	}
	old = *s;
	s->image = NULL;
	stream_start(w, s);
	stream_finish(w, &old, s->blkno);
	return true;
}

/* append len bytes at pd_lower; returns their offset in the page */
static uint16
stream_put(SpmStream *s, const void *data, Size len)
{
	PageHeader	phdr = (PageHeader) s->image;
	uint16		off = phdr->pd_lower;

	Assert((Size) (phdr->pd_upper - phdr->pd_lower) >= len);
	memcpy(s->image + off, data, len);
	phdr->pd_lower += len;
	s->nitems++;
	return off;
}

/* ------------------------------------------------------------ interface */

/*
 * Start a segment.  fork is MAIN_FORKNUM except when building the init
 * fork; wal says whether every page is WAL-logged as it is written (the
 * build logs everything at the end instead).  The writer allocates in
 * the current memory context, whatever context later calls run in.
 */
SpmWriter *
spm_writer_begin(Relation index, ForkNumber fork, bool wal,
				 uint32 segment_id, uint64 docid_lo)
{
	SpmWriter  *w = palloc0(sizeof(SpmWriter));

	w->cxt = CurrentMemoryContext;
	w->index = index;
	w->fork = fork;
	w->wal = wal;
	w->segment_id = segment_id;
	w->docid_lo = docid_lo;
	w->bitcap = 1024;
	w->alive = palloc0(w->bitcap);
	w->nullmap = palloc0(w->bitcap);
	w->docmap.type = SPM_PAGE_DOCMAP;
	w->post.type = SPM_PAGE_POSTING;
	w->skip.type = SPM_PAGE_SKIP;
	w->dict.type = SPM_PAGE_DICT;
	w->docmap_cap = 64;
	w->docmap_blk = palloc(w->docmap_cap * sizeof(uint32));
	w->dict_cap = 64;
	w->dict_pairs = palloc(w->dict_cap * sizeof(uint32));
	w->post_cap = 64;
	w->post_blk = palloc(w->post_cap * sizeof(uint32));
	w->skip_cap = 64;
	w->skip_blk = palloc(w->skip_cap * sizeof(uint32));
	w->max_w = w->min_w = 0;
	return w;
}

/*
 * Append the next document (local docid = documents so far).  flags may
 * carry SPM_DOC_NULL (a NULL row) and SPM_DOC_DEAD (known dead: kept in
 * the docmap so that docids stay dense, but never alive).
 */
void
spm_writer_doc(SpmWriter *w, ItemPointer tid, uint8 flags)
{
	uint32		d = w->ndocs;

	if (d == PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sparse_maxscore index \"%s\" cannot hold more than %u documents in one segment",
						RelationGetRelationName(w->index), PG_UINT32_MAX - 1)));

	if ((Size) d / 8 >= w->bitcap)
	{
		Size		newcap = w->bitcap * 2;

		w->alive = repalloc(w->alive, newcap);
		w->nullmap = repalloc(w->nullmap, newcap);
		memset(w->alive + w->bitcap, 0, newcap - w->bitcap);
		memset(w->nullmap + w->bitcap, 0, newcap - w->bitcap);
		w->bitcap = newcap;
	}
	if (!(flags & SPM_DOC_DEAD))
		w->alive[d / 8] |= 1 << (d % 8);
	if (flags & SPM_DOC_NULL)
	{
		w->nullmap[d / 8] |= 1 << (d % 8);
		w->nnull++;
	}

	if (w->docmap.image == NULL || w->docmap.nitems == SPM_DOCMAP_PER_PAGE)
	{
		if (stream_reserve(w, &w->docmap, BLCKSZ))
		{
			grow_u32(&w->docmap_blk, &w->docmap_cap, w->ndocmap + 1);
			w->docmap_blk[w->ndocmap++] = w->docmap.blkno;
		}
	}
	stream_put(&w->docmap, tid, sizeof(ItemPointerData));
	w->ndocs++;
}

void
spm_writer_set_dims(SpmWriter *w, int32 dims)
{
	w->dims = dims;
}

void
spm_writer_term_begin(SpmWriter *w, uint32 term)
{
	Assert(!w->in_term);
	if (w->any_term && term <= w->term)
		elog(ERROR, "sparse_maxscore: terms out of order (%u after %u)",
			 term, w->term);
	w->in_term = true;
	w->any_term = true;
	w->term = term;
	w->df = 0;
	w->bn = 0;
	w->skip_blkno = InvalidBlockNumber;
	w->skip_idx = 0;
}

/* encode the buffered postings as one block and add its skip entry */
static void
flush_block(SpmWriter *w)
{
	SpmSkipEntry se;
	int			size;
	float4		bmax = w->bw[0];
	float4		bmin = w->bw[0];

	for (int i = 1; i < w->bn; i++)
	{
		bmax = Max(bmax, w->bw[i]);
		bmin = Min(bmin, w->bw[i]);
	}
	size = spm_block_encode(w->bdocs, w->bw, w->bn, w->enc);
	if (stream_reserve(w, &w->post, size))
	{
		grow_u32(&w->post_blk, &w->post_cap, w->npost + 1);
		w->post_blk[w->npost++] = w->post.blkno;
	}

	se.last_docid = w->bdocs[w->bn - 1];
	se.max_w = bmax;
	se.min_w = bmin;
	se.blkno = w->post.blkno;
	se.off = stream_put(&w->post, w->enc, size);
	se.count = (uint8) w->bn;
	se.flags = 0;

	if (stream_reserve(w, &w->skip, sizeof(SpmSkipEntry)))
	{
		grow_u32(&w->skip_blk, &w->skip_cap, w->nskip + 1);
		w->skip_blk[w->nskip++] = w->skip.blkno;
	}
	if (w->skip_blkno == InvalidBlockNumber)
	{
		w->skip_blkno = w->skip.blkno;
		w->skip_idx = (uint16) w->skip.nitems;
	}
	stream_put(&w->skip, &se, sizeof(SpmSkipEntry));

	if (w->df == 0)
	{
		w->max_w = bmax;
		w->min_w = bmin;
	}
	else
	{
		w->max_w = Max(w->max_w, bmax);
		w->min_w = Min(w->min_w, bmin);
	}
	w->df += w->bn;
	w->npostings += w->bn;
	w->bn = 0;
}

/*
 * Add n postings of the current term; docids strictly ascending across
 * calls, all below the number of documents given so far or to come.
 */
void
spm_writer_postings(SpmWriter *w, const uint32 *docids, const float *weights,
					int n)
{
	Assert(w->in_term);
	for (int i = 0; i < n; i++)
	{
		float		v = weights[i];

		if ((w->df > 0 || w->bn > 0) && docids[i] <= w->last_docid)
			elog(ERROR, "sparse_maxscore: postings of term %u out of order",
				 w->term);
		if (v == 0.0f || isnan(v) || isinf(v))
			elog(ERROR, "sparse_maxscore: invalid weight in term %u", w->term);
		if (v < 0.0f)
			w->flags |= SPM_META_NEGATIVE;
		w->max_abs = Max(w->max_abs, fabsf(v));
		w->last_docid = docids[i];
		w->bdocs[w->bn] = docids[i];
		w->bw[w->bn] = v;
		if (++w->bn == SPM_BLOCK_POSTINGS)
			flush_block(w);
	}
}

void
spm_writer_term_end(SpmWriter *w)
{
	SpmDictEntry e;

	Assert(w->in_term);
	w->in_term = false;
	if (w->bn > 0)
		flush_block(w);
	if (w->df == 0)
		return;

	e.term = w->term;
	e.df = w->df;
	e.max_w = w->max_w;
	e.min_w = w->min_w;
	e.skip_blkno = w->skip_blkno;
	e.skip_idx = w->skip_idx;
	e.unused = 0;
	if (stream_reserve(w, &w->dict, sizeof(SpmDictEntry)))
	{
		grow_u32(&w->dict_pairs, &w->dict_cap, 2 * (w->ndict + 1));
		w->dict_pairs[2 * w->ndict] = w->term;
		w->dict_pairs[2 * w->ndict + 1] = w->dict.blkno;
		w->ndict++;
	}
	stream_put(&w->dict, &e, sizeof(SpmDictEntry));
	w->nterms++;
	w->sum_df_squared += (double) w->df * w->df;
}

/* write a bitset of ndocs bits over pages; appends their numbers to dir */
static void
write_bitset(SpmWriter *w, SpmPageType type, const uint8 *bits,
			 uint32 **dir, uint32 *ndir, uint32 *dircap)
{
	uint32		nbytes = (w->ndocs + 7) / 8;

	for (uint32 start = 0; start < nbytes; start += SPM_BITMAP_BYTES)
	{
		SpmStream	s;

		memset(&s, 0, sizeof(s));
		s.type = type;
		stream_start(w, &s);
		stream_put(&s, bits + start, Min(SPM_BITMAP_BYTES, nbytes - start));
		((PageHeader) s.image)->pd_lower =
			MAXALIGN(SizeOfPageHeaderData) + SPM_BITMAP_BYTES;
		grow_u32(dir, dircap, *ndir + 1);
		(*dir)[(*ndir)++] = s.blkno;
		stream_finish(w, &s, InvalidBlockNumber);
	}
}

/*
 * Write out everything that is left, then the directory and the header.
 * Fills *ref (for the metapage) and returns nothing reachable yet: the
 * caller publishes ref.
 */
void
spm_writer_finish(SpmWriter *w, SpmSegmentRef *ref)
{
	SpmSegmentHeaderData hdr;
	uint32	   *words;
	uint32		nwords = 0;
	uint32		cap = 64;
	uint32		nalive = 0;
	uint32		nnullmap = 0;
	SpmStream	dir;
	SpmStream	head;

	memset(&hdr, 0, sizeof(hdr));
	Assert(!w->in_term);
	if (w->any_term && w->last_docid >= w->ndocs && w->npostings > 0)
		elog(ERROR, "sparse_maxscore: posting beyond the last document");

	stream_finish(w, &w->docmap, InvalidBlockNumber);
	stream_finish(w, &w->post, InvalidBlockNumber);
	stream_finish(w, &w->skip, InvalidBlockNumber);
	stream_finish(w, &w->dict, InvalidBlockNumber);

	/* directory words: docmap, alive, null, dictionary pairs */
	words = MemoryContextAlloc(w->cxt, cap * sizeof(uint32));
	grow_u32(&words, &cap, w->ndocmap);
	memcpy(words, w->docmap_blk, w->ndocmap * sizeof(uint32));
	nwords = w->ndocmap;
	write_bitset(w, SPM_PAGE_ALIVE, w->alive, &words, &nwords, &cap);
	nalive = nwords - w->ndocmap;
	if (w->nnull > 0)
		write_bitset(w, SPM_PAGE_NULLMAP, w->nullmap, &words, &nwords, &cap);
	nnullmap = nwords - w->ndocmap - nalive;
	grow_u32(&words, &cap, nwords + 2 * w->ndict + w->npost + w->nskip);
	memcpy(words + nwords, w->dict_pairs, 2 * w->ndict * sizeof(uint32));
	nwords += 2 * w->ndict;
	memcpy(words + nwords, w->post_blk, w->npost * sizeof(uint32));
	nwords += w->npost;
	memcpy(words + nwords, w->skip_blk, w->nskip * sizeof(uint32));
	nwords += w->nskip;

	memset(&dir, 0, sizeof(dir));
	dir.type = SPM_PAGE_SEGDIR;
	{
		BlockNumber first = InvalidBlockNumber;

		for (uint32 i = 0; i < nwords; i++)
		{
			if (stream_reserve(w, &dir, sizeof(uint32)) &&
				first == InvalidBlockNumber)
				first = dir.blkno;
			stream_put(&dir, &words[i], sizeof(uint32));
		}
		stream_finish(w, &dir, InvalidBlockNumber);
		hdr.dir_head = first;
	}

	hdr.magic = SPM_MAGIC;
	hdr.segment_id = w->segment_id;
	hdr.docid_lo = w->docid_lo;
	hdr.ndocs = w->ndocs;
	hdr.nterms = w->nterms;
	hdr.npostings = w->npostings;
	hdr.nnull = w->nnull;
	hdr.flags = w->flags;
	hdr.dims = w->dims;
	hdr.ndocmap = w->ndocmap;
	hdr.nalive = nalive;
	hdr.nnullmap = nnullmap;
	hdr.ndict = w->ndict;
	hdr.npost = w->npost;
	hdr.nskip = w->nskip;
	hdr.ndirwords = nwords;
	hdr.max_abs_weight = w->max_abs;

	memset(&head, 0, sizeof(head));
	head.type = SPM_PAGE_SEGHEADER;
	stream_start(w, &head);
	stream_put(&head, &hdr, sizeof(hdr));
	ref->segment_id = w->segment_id;
	ref->header = head.blkno;
	ref->docid_lo = w->docid_lo;
	ref->docid_hi = w->docid_lo + w->ndocs;
	ref->npostings = w->npostings;
	ref->ndead = 0;
	ref->nnull = w->nnull;
	for (uint32 i = 0; i < w->ndocs; i++)
	{
		if (!(w->alive[i / 8] & (1 << (i % 8))))
			ref->ndead++;
	}
	ref->nholes = ref->ndead;
	ref->sum_df_squared = (float4) w->sum_df_squared;
	stream_finish(w, &head, InvalidBlockNumber);

	pfree(words);
}

/* flags of the segment: SPM_META_NEGATIVE if any weight is negative */
uint32
spm_writer_flags(SpmWriter *w)
{
	return w->flags;
}

uint32
spm_writer_nterms(SpmWriter *w)
{
	return w->nterms;
}

/*
 * Take new pages from pages[0..n) (ascending free pages) before asking
 * the free space map.  any_xid: the caller holds AccessExclusiveLock on the
 * index, so freed pages need not wait for their xid horizon.
 */
void
spm_writer_prefer_pages(SpmWriter *w, const BlockNumber *pages, int n,
						bool any_xid)
{
	w->pref = pages;
	w->npref = n;
	w->ipref = 0;
	w->pref_any_xid = any_xid;
}

/* take new pages only by extending the file (VACUUM's shrink) */
void
spm_writer_extend_only(SpmWriter *w)
{
	w->extend_only = true;
}

/*
 * Free the writer.  A writer given up before spm_writer_finish still holds
 * the locked buffers of the pages it started: release them unwritten (a
 * new page stays all zeros, a recycled one stays FREE), so that they are
 * free pages again.
 */
void
spm_writer_free(SpmWriter *w)
{
	SpmStream  *streams[] = {&w->docmap, &w->post, &w->skip, &w->dict};

	for (int i = 0; i < (int) lengthof(streams); i++)
	{
		if (streams[i]->image != NULL)
		{
			UnlockReleaseBuffer(streams[i]->buf);
			pfree(streams[i]->image);
			streams[i]->image = NULL;
		}
	}
	pfree(w->alive);
	pfree(w->nullmap);
	pfree(w->docmap_blk);
	pfree(w->dict_pairs);
	pfree(w->post_blk);
	pfree(w->skip_blk);
	pfree(w);
}

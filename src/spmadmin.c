/*-------------------------------------------------------------------------
 *
 * spmadmin.c
 *	  SQL-callable maintenance and inspection of sparse_maxscore indexes:
 *	  sparse_maxscore_flush, _compact, _info, _segments and _verify.
 *
 * The relation must be a sparse_maxscore index, not another session's
 * temporary one.  Flush and compact write and, like GIN's
 * gin_clean_pending_list, need ownership of the index; so does verify,
 * which holds the structure lock (ShareUpdateExclusiveLock, VACUUM's) for
 * as long as it reads every page.  Info only reads the metapage and the
 * page headers under AccessShareLock (segments the segment headers too),
 * and reports what a SELECT of the table could count itself (documents,
 * NULLs, postings, pages): it needs what a SELECT needs, the SELECT
 * privilege on the table (which its owner and pg_read_all_data have), or
 * membership in pg_stat_scan_tables, the role PostgreSQL made for
 * monitoring functions that take ACCESS SHARE locks (pgstattuple's
 * pgstatindex, for one).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_am.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmsegment.h"
#include "spmblock.h"

typedef enum SpmAdminAccess
{
	SPM_ACCESS_OWNER,			/* flush, compact, verify */
	SPM_ACCESS_READ				/* info */
} SpmAdminAccess;

static Relation
open_index(Oid indexoid, LOCKMODE lockmode, SpmAdminAccess access)
{
	Relation	index = relation_open(indexoid, lockmode);

	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_rel->relam != get_index_am_oid("sparse_maxscore", false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a sparse_maxscore index",
						RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	if (access == SPM_ACCESS_READ)
	{
		Oid			heapoid = index->rd_index->indrelid;

		if (!spm_class_ownercheck(indexoid, GetUserId()) &&
			pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
			!has_privs_of_role(GetUserId(), ROLE_PG_STAT_SCAN_TABLES))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for table %s",
							get_rel_name(heapoid)),
					 errdetail("Reading sparse_maxscore index \"%s\" needs the SELECT privilege on its table or membership in pg_stat_scan_tables.",
							   RelationGetRelationName(index))));
	}
	else if (!spm_class_ownercheck(indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX,
					   RelationGetRelationName(index));
	return index;
}

static void
check_not_in_recovery(const char *what)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("sparse_maxscore indexes cannot be %s during recovery.", what)));
}

/*
 * sparse_maxscore_flush(regclass): move the pending list into a segment.
 * Returns the number of documents moved.
 */
PG_FUNCTION_INFO_V1(spm_flush_sql);
Datum
spm_flush_sql(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	int64		n;

	check_not_in_recovery("flushed");
	index = open_index(indexoid, RowExclusiveLock, SPM_ACCESS_OWNER);
	n = spm_flush(index, true, true);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_INT64(n);
}

/*
 * sparse_maxscore_compact(regclass): flush, then merge every segment into
 * one without the dead documents.  Returns the number of segments merged.
 */
PG_FUNCTION_INFO_V1(spm_compact_sql);
Datum
spm_compact_sql(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	int			n;

	check_not_in_recovery("compacted");
	index = open_index(indexoid, RowExclusiveLock, SPM_ACCESS_OWNER);
	n = spm_compact_all(index);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_INT32(n);
}

/* number of FREE (or never initialised) pages */
static int64
count_free_pages(Relation index)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	int64		n = 0;

	for (BlockNumber blkno = 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page) ||
			(SpmPageHasOpaque(page) &&
			 SpmPageIsFree(SpmPageGetOpaque(page))))
			n++;
		UnlockReleaseBuffer(buf);
	}
	return n;
}

/*
 * sparse_maxscore_info(regclass): one row describing the index.
 */
/*
 * A segment's documents, from its metapage entry: of its docids, those
 * written dead (holes, no postings) are no documents; the others are live
 * or dead by their alive bits.
 */
static inline int64
segref_live(const SpmSegmentRef *r)
{
	return (int64) (r->docid_hi - r->docid_lo) - r->ndead;
}

static inline int64
segref_dead(const SpmSegmentRef *r)
{
	return (int64) r->ndead - r->nholes;
}

PG_FUNCTION_INFO_V1(spm_info_sql);
Datum
spm_info_sql(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	SpmMetaPageData meta;
	TupleDesc	tupdesc;
	Datum		values[13];
	bool		nulls[13] = {false};
	int64		docs = 0;
	int64		dead = 0;
	int64		nnull = 0;
	int64		postings = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	index = open_index(indexoid, AccessShareLock, SPM_ACCESS_READ);
	SpmReadMeta(index, &meta);
	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		SpmSegmentRef *r = &meta.segments[i];

		docs += segref_live(r) + segref_dead(r);
		dead += segref_dead(r);
		nnull += r->nnull;
		postings += (int64) r->npostings;
	}
	docs += (int64) meta.pending_ndocs;
	dead += meta.pending_ndead;
	nnull += meta.pending_nnull;

	values[0] = Int32GetDatum((int32) meta.nsegments);
	values[1] = Int64GetDatum(docs - dead);
	values[2] = Int64GetDatum(dead);
	values[3] = Int64GetDatum(nnull);
	values[4] = Int64GetDatum(postings);
	values[5] = Int64GetDatum((int64) meta.pending_ndocs);
	values[6] = Int64GetDatum((int64) meta.pending_npostings);
	values[7] = Int64GetDatum((int64) meta.pending_bytes);
	values[8] = Int64GetDatum((int64) meta.pending_npages);
	values[9] = Float8GetDatum(docs > 0 ? (double) dead / (double) docs : 0.0);
	values[10] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index));
	values[11] = Int64GetDatum(count_free_pages(index));
	values[12] = Int32GetDatum(meta.dims);
	relation_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * sparse_maxscore_segments(index): one row per segment, what it holds and
 * how its pages divide between postings, skip entries, dictionary, range
 * data (the forward copy and the range maxima) and the rest (header,
 * directory, docid map, alive and NULL bitsets).  The same access as
 * info; the segments are read as a scan reads them, one copy of the
 * metapage under SPM_SCAN_LOCK in share mode, so a concurrent merge cannot
 * free a segment while its header is read.  Every count but the directory
 * chain's pages is in the segment header; those are computed from its
 * words, as the writer cuts them (src/README "Segments").
 */
PG_FUNCTION_INFO_V1(spm_segments_sql);
Datum
spm_segments_sql(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	SpmMetaPageData meta;

	InitMaterializedSRF(fcinfo, 0);
	index = open_index(indexoid, AccessShareLock, SPM_ACCESS_READ);
	LockPage(index, SPM_SCAN_LOCK, ShareLock);
	SpmReadMeta(index, &meta);
	SpmCacheNewRound();
	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		const SpmSegmentRef *r = &meta.segments[i];
		const SpmSegmentHeaderData *h = &SpmGetSegment(index, &meta, (int) i)->hdr;
		int64		dirpages = (h->ndirwords + SPM_DIR_WORDS_PER_PAGE - 1) /
			SPM_DIR_WORDS_PER_PAGE;
		int64		other = 1 + dirpages + h->ndocmap + h->nalive + h->nnullmap;
		int64		rangedata = (int64) h->nfwd + h->nrangeidx + h->nrangemax;
		Datum		values[15];
		bool		nulls[15] = {false};

		values[0] = Int32GetDatum((int32) r->segment_id);
		values[1] = Int64GetDatum(segref_live(r));
		values[2] = Int64GetDatum(segref_dead(r));
		values[3] = Int64GetDatum((int64) r->nnull);
		values[4] = Int64GetDatum((int64) r->npostings);
		values[5] = Int64GetDatum((int64) h->nterms);
		values[6] = BoolGetDatum((h->flags & SPM_SEG_QUANT) != 0);
		values[7] = BoolGetDatum((h->flags & SPM_SEG_RANGES) != 0);
		values[8] = Int64GetDatum(other + h->ndict + h->npost + h->nskip + rangedata);
		values[9] = Int64GetDatum((int64) h->npost);
		values[10] = Int64GetDatum((int64) h->nskip);
		values[11] = Int64GetDatum((int64) h->ndict);
		values[12] = Int64GetDatum((int64) h->nfwd);
		values[13] = Int64GetDatum((int64) h->nrangeidx + h->nrangemax);
		values[14] = Int64GetDatum(other);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	UnlockPage(index, SPM_SCAN_LOCK, ShareLock);
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * Verification
 * ----------------------------------------------------------------
 */
pg_noreturn static void verify_fail(Relation index, const char *fmt,...) pg_attribute_printf(2, 3);

static void
verify_fail(Relation index, const char *fmt,...)
{
	va_list		args;
	char		buf[512];

	va_start(args, fmt);
	vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" is corrupted: %s",
					RelationGetRelationName(index), buf)));
}

typedef struct VerifyState
{
	Relation	index;
	uint8	   *used;			/* pages reached */
	BlockNumber nblocks;
	uint64		pending_docs;
	uint64		pending_postings;
	uint32		pending_null;
	uint32		pending_dead;
	uint16		flags;
	int32		nnz;
	int32		got;
	int32		last;
	int32		dims;
	uint64		docid;
	SpmKind		kind;			/* the index's operator class */
} VerifyState;

static void
use_page(VerifyState *vs, BlockNumber blkno, const char *what)
{
	if (blkno >= vs->nblocks)
		verify_fail(vs->index, "%s page %u is beyond the end of the index", what, blkno);
	if ((vs->used[blkno / 8] >> (blkno % 8)) & 1)
		verify_fail(vs->index, "page %u is reached twice (as %s)", blkno, what);
	vs->used[blkno / 8] |= 1 << (blkno % 8);
}

static bool
bitset_get(const uint8 *bits, uint32 i)
{
	return (bits[i / 8] >> (i % 8)) & 1;
}

/* a hash of one posting, summed over a segment in any order */
static uint64
posting_hash(uint32 doc, uint32 term, float4 w)
{
	uint32		wbits;
	uint64		x;

	memcpy(&wbits, &w, sizeof(wbits));
	x = ((uint64) doc << 32 | term) ^ ((uint64) wbits * UINT64CONST(0x9E3779B97F4A7C15));
	x ^= x >> 30;
	x *= UINT64CONST(0xBF58476D1CE4E5B9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94D049BB133111EB);
	x ^= x >> 31;
	return x;
}

/*
 * The forward copy of a segment with ranges (README "Ranges"): every
 * document where its range's offset says, elements ascending and valid,
 * none for NULL rows; returns the number of elements and the sum of their
 * posting_hash, which must match the posting lists'.
 */
static uint64
verify_forward(VerifyState *vs, SpmSegment *seg, const uint8 *nulls,
			   uint64 *hash)
{
	Relation	index = vs->index;
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	uint64		pos = 0;
	uint64		elems = 0;
	int32		cap = 256;
	SpmFwdElem *buf = palloc(cap * sizeof(SpmFwdElem));
	SpmTermQuant *tq = NULL;

	/* format 6: codes decode to the upper ends the blocks decode to */
	if (seg->hdr.flags & SPM_SEG_FWDQ)
		tq = SpmLoadTermQuant(index, seg);

	*hash = 0;
	for (uint32 d = 0; d < seg->hdr.ndocs; d++)
	{
		uint32		nnz;

		if (d % SPM_RANGE_DOCS == 0 &&
			SpmRangeOffset(index, seg, d / SPM_RANGE_DOCS, &pin) != pos)
			verify_fail(index, "segment %u range %u does not start at its document %u",
						seg->segment_id, d / SPM_RANGE_DOCS, d);
		SpmReadStream(index, seg, SPM_STREAM_FWD, pos, sizeof(uint32), &nnz, &pin);
		pos += sizeof(uint32);
		if (spm_fwd_doc_bytes(seg->hdr.flags, nnz) > seg->hdr.fwd_bytes - pos)
			verify_fail(index, "segment %u document %u of the forward copy is too long",
						seg->segment_id, d);
		if (nnz > 0 && bitset_get(nulls, d))
			verify_fail(index, "segment %u NULL row %u has elements in the forward copy",
						seg->segment_id, d);
		if ((int32) nnz > cap)
		{
			cap = Max((int32) nnz, 2 * cap);
			buf = repalloc(buf, cap * sizeof(SpmFwdElem));
		}
		pos = SpmReadFwdElems(index, seg, pos, nnz, buf, &pin, tq);

		/*
		 * L2: a document's last element is its norm posting, with the
		 * weight its other elements give (README "Cosine and L2")
		 */
		if (vs->kind == SPM_KIND_L2 && nnz > 0)
		{
			double		sum = 0.0;

			for (uint32 i = 0; i + 1 < nnz; i++)
				sum = spv_norm_add(sum, buf[i].w);
			if (nnz < 2 || seg->hdr.dims < 2 ||
				buf[nnz - 1].term != spm_l2_term(seg->hdr.dims - 1) ||
				buf[nnz - 1].w != spv_l2_norm_weight(sum, (int) nnz - 1))
				verify_fail(index, "segment %u document %u of the forward copy has no valid norm posting",
							seg->segment_id, d);
		}
		for (uint32 i = 0; i < nnz; i++)
		{
			if ((i > 0 && buf[i].term <= buf[i - 1].term) ||
				(seg->hdr.dims > 0 && buf[i].term >= (uint32) seg->hdr.dims) ||
				/* format 6: the upper end of a negative weight's cell may be 0 */
				(buf[i].w == 0.0f && tq == NULL) ||
				isnan(buf[i].w) || isinf(buf[i].w))
				verify_fail(index, "segment %u document %u of the forward copy is not canonical",
							seg->segment_id, d);
			*hash += posting_hash(d, buf[i].term, buf[i].w);
		}
		elems += nnz;
		if ((d & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (pos != seg->hdr.fwd_bytes ||
		SpmRangeOffset(index, seg, seg->hdr.nranges, &pin) != pos)
		verify_fail(index, "segment %u forward copy has " UINT64_FORMAT " bytes, its header says " UINT64_FORMAT,
					seg->segment_id, pos, seg->hdr.fwd_bytes);
	SpmUnpin(&pin);
	pfree(buf);
	if (tq)
		pfree(tq);
	return elems;
}

/*
 * A term's range maxima against its postings (docs/ws, n of them): the
 * level of every range the term is in, as the writer computes it, and
 * nothing elsewhere.
 */
static void
verify_term_ranges(VerifyState *vs, SpmSegment *seg, const SpmDictEntry *e,
				   uint32 ordinal, const uint32 *docs, const float *ws,
				   uint32 n)
{
	Relation	index = vs->index;
	SpmRangeDesc desc;
	bool		dense;
	uint64		len;
	uint8	   *data;
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	uint32		nr = 0;
	uint32		i = 0;

	SpmReadRangeDesc(index, seg, ordinal, e->df, &desc);
	dense = (desc.flags & SPM_RANGE_DENSE) != 0;
	len = dense ? seg->hdr.nranges : (uint64) desc.nr * 4;
	data = palloc(Max(len, 1));
	SpmReadStream(index, seg, SPM_STREAM_RANGEMAX, desc.off, len, data, &pin);
	SpmUnpin(&pin);
	if (dense)
	{
		for (uint32 r = 0; r < seg->hdr.nranges; r++)
		{
			float4		m = 0;
			bool		any = false;

			for (; i < n && docs[i] / SPM_RANGE_DOCS == r; i++)
			{
				m = any ? Max(m, ws[i]) : ws[i];
				any = true;
			}
			if ((any ? spm_range_level(m, e->max_w) : 0) != data[r])
				verify_fail(index, "segment %u term %u range %u: level %u, its postings give %u",
							seg->segment_id, e->term, r, data[r],
							any ? spm_range_level(m, e->max_w) : 0);
			nr += any;
		}
	}
	else
	{
		while (i < n)
		{
			uint32		r = docs[i] / SPM_RANGE_DOCS;
			float4		m = ws[i];
			uint32		entry;

			for (i++; i < n && docs[i] / SPM_RANGE_DOCS == r; i++)
				m = Max(m, ws[i]);
			if (nr >= desc.nr)
				verify_fail(index, "segment %u term %u has more ranges than its range maxima",
							seg->segment_id, e->term);
			memcpy(&entry, data + 4 * (Size) nr, sizeof(entry));
			if (entry != ((r << 8) | spm_range_level(m, e->max_w)))
				verify_fail(index, "segment %u term %u range %u: range maxima entry %08x, its postings give %08x",
							seg->segment_id, e->term, r, entry,
							(r << 8) | spm_range_level(m, e->max_w));
			nr++;
		}
	}
	if (nr != desc.nr)
		verify_fail(index, "segment %u term %u is in %u ranges, its range descriptor says %u",
					seg->segment_id, e->term, nr, desc.nr);
	pfree(data);
}

static void
verify_segment(VerifyState *vs, const SpmMetaPageData *meta, int s)
{
	Relation	index = vs->index;
	const SpmSegmentRef *ref = &meta->segments[s];
	SpmSegment *seg = SpmGetSegment(index, meta, s);
	uint32		ndocs = seg->hdr.ndocs;
	uint8	   *alive = palloc0(Max(seg->hdr.nalive, 1) * SPM_BITMAP_BYTES);
	uint8	   *nulls = palloc0(Max(seg->hdr.nalive, 1) * SPM_BITMAP_BYTES);
	uint8	   *hasposting = palloc0(ndocs / 8 + 1);
	SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
	SpmDictEntry *dict = palloc(SPM_DICT_PER_PAGE * sizeof(SpmDictEntry));
	SpmSkipEntry *skips = NULL;
	int			skipcap = 0;
	uint32	   *docs = palloc(SPM_BLOCK_POSTINGS * sizeof(uint32));
	float	   *ws = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
	float	   *los = palloc(SPM_BLOCK_POSTINGS * sizeof(float));
	uint64		postings = 0;
	uint32		nterms = 0;
	uint32		ndead = 0;
	uint32		nnull = 0;
	uint32		nnullbits = 0;
	bool		anyterm = false;
	uint32		prevterm = 0;
	int			npages;
	BlockNumber *pages;
	bool		ranges = (seg->hdr.flags & SPM_SEG_RANGES) != 0;
	uint64		post_hash = 0;
	uint32	   *tdocs = NULL;
	float	   *tws = NULL;
	uint32		tcap = 0;
	bool		l2 = vs->kind == SPM_KIND_L2;
	uint32		l2_term = spm_l2_term(meta->dims);
	uint32		l2_df = 0;		/* norm postings */

	/* L2: the segment's terms include the norm postings' (README "Cosine and L2") */
	if (l2 && seg->hdr.dims != 0 && seg->hdr.dims != meta->dims + 1)
		verify_fail(index, "segment %u has %d dimensions, an L2 index of %d dimensions needs %d",
					seg->segment_id, seg->hdr.dims, meta->dims, meta->dims + 1);

	pages = SpmSegmentPages(index, seg, &npages);
	for (int i = 0; i < npages; i++)
		use_page(vs, pages[i], "segment");

	for (uint32 p = 0; p < seg->hdr.nalive; p++)
	{
		SpmReadBitsetPage(index, seg, false, p, alive + p * SPM_BITMAP_BYTES, &pin);
		SpmReadBitsetPage(index, seg, true, p, nulls + p * SPM_BITMAP_BYTES, &pin);
	}
	for (uint32 d = 0; d < ndocs; d++)
	{
		ItemPointerData tid;

		if (bitset_get(nulls, d))
			nnullbits++;
		if (!bitset_get(alive, d))
		{
			ndead++;
			continue;
		}
		if (bitset_get(nulls, d))
			nnull++;
		SpmGetTid(index, seg, d, &tid, &pin);
	}
	for (uint32 d = ndocs; d < seg->hdr.nalive * SPM_BITS_PER_PAGE; d++)
	{
		if (bitset_get(alive, d) || bitset_get(nulls, d))
			verify_fail(index, "segment %u has bits set beyond its %u documents",
						seg->segment_id, ndocs);
	}
	SpmUnpin(&pin);
	if (ndead != ref->ndead)
		verify_fail(index, "segment %u has %u dead documents, the metapage says %u",
					seg->segment_id, ndead, ref->ndead);

	for (uint32 p = 0; p < seg->hdr.ndict; p++)
	{
		int			n = SpmReadDictPage(index, seg, p, dict);

		/* range descriptors are found by ordinal: full pages but the last */
		if (ranges && p < seg->hdr.ndict - 1 && n != SPM_DICT_PER_PAGE)
			verify_fail(index, "segment %u dictionary page %u is not full",
						seg->segment_id, p);
		if (dict[0].term != seg->dict_first[p])
			verify_fail(index, "segment %u dictionary page %u starts with term %u, the directory says %u",
						seg->segment_id, p, dict[0].term, seg->dict_first[p]);
		for (int i = 0; i < n; i++)
		{
			SpmDictEntry *e = &dict[i];
			int			nb = (e->df + SPM_BLOCK_POSTINGS - 1) / SPM_BLOCK_POSTINGS;
			float4		tmax = -INFINITY;
			float4		tmin = INFINITY;
			bool		anydoc = false;
			uint32		prevdoc = 0;
			uint64		tpost0 = postings;

			if (anyterm && e->term <= prevterm)
				verify_fail(index, "segment %u dictionary is not sorted at term %u",
							seg->segment_id, e->term);
			if (meta->dims > 0 && e->term >= (uint32) meta->dims + (l2 ? 1 : 0))
				verify_fail(index, "segment %u has term %u beyond %d dimensions",
							seg->segment_id, e->term, meta->dims);
			if (l2 && e->term == l2_term)
				l2_df = e->df;
			if (!SpmDictEntryQuantOk(seg, e))
				verify_fail(index, "segment %u term %u has invalid dictionary flags %04x",
							seg->segment_id, e->term, e->flags);
			anyterm = true;
			prevterm = e->term;
			nterms++;
			if (nb > skipcap)
			{
				skipcap = Max(nb, 2 * skipcap);
				skips = skips ? repalloc(skips, skipcap * sizeof(SpmSkipEntry)) :
					palloc(skipcap * sizeof(SpmSkipEntry));
			}
			SpmReadSkips(index, seg, e, skips);
			if (ranges && e->df > tcap)
			{
				tcap = Max(e->df, 2 * tcap);
				tdocs = tdocs ? repalloc(tdocs, tcap * sizeof(uint32)) :
					palloc(tcap * sizeof(uint32));
				tws = tws ? repalloc(tws, tcap * sizeof(float)) :
					palloc(tcap * sizeof(float));
			}
			for (int b = 0; b < nb; b++)
			{
				float4		bmax = -INFINITY;
				float4		bmin = INFINITY;
				int16		exp;

				if (b < nb - 1 && skips[b].count != SPM_BLOCK_POSTINGS)
					verify_fail(index, "segment %u term %u block %d is not full",
								seg->segment_id, e->term, b);
				SpmReadPostingBlock(index, seg, skips[b].blkno, skips[b].off,
									skips[b].count, skips[b].last_docid, false,
									docs, ws, &exp, &pin);
				/* L2: norm postings are never quantized (spmpipeline.c) */
				if (l2 && e->term == l2_term && exp != SPM_QEXP_EXACT)
					verify_fail(index, "segment %u block %d of the norm postings is quantized",
								seg->segment_id, b);
				/* format 6: every block at the term's exponent */
				if ((seg->hdr.flags & SPM_SEG_FWDQ) && exp != spm_dict_qexp(e))
					verify_fail(index, "segment %u term %u block %d is not quantized at its term's exponent",
								seg->segment_id, e->term, b);
				if (exp == SPM_QEXP_EXACT)
					memcpy(los, ws, skips[b].count * sizeof(float));
				else
				{
					int16		exp2;

					if (ranges && !(seg->hdr.flags & SPM_SEG_FWDQ))
						verify_fail(index, "segment %u term %u block %d is quantized in a segment with range data",
									seg->segment_id, e->term, b);
					if (!(seg->hdr.flags & SPM_SEG_QUANT))
						verify_fail(index, "segment %u term %u block %d is quantized, the segment header says none is",
									seg->segment_id, e->term, b);
					SpmReadPostingBlock(index, seg, skips[b].blkno, skips[b].off,
										skips[b].count, skips[b].last_docid, true,
										docs, los, &exp2, &pin);
				}
				for (int j = 0; j < skips[b].count; j++)
				{
					if (anydoc && docs[j] <= prevdoc)
						verify_fail(index, "segment %u term %u has docids out of order",
									seg->segment_id, e->term);
					if (docs[j] >= ndocs)
						verify_fail(index, "segment %u term %u has docid %u beyond %u documents",
									seg->segment_id, e->term, docs[j], ndocs);
					if (bitset_get(nulls, docs[j]))
						verify_fail(index, "segment %u term %u has a posting for the NULL row %u",
									seg->segment_id, e->term, docs[j]);

					/*
					 * L2: the norm term comes last; a norm posting is
					 * negative and belongs to a document with elements
					 */
					if (l2 && e->term == l2_term &&
						(!(los[j] < 0.0f) ||
						 !((hasposting[docs[j] / 8] >> (docs[j] % 8)) & 1)))
						verify_fail(index, "segment %u document %u has an invalid norm posting",
									seg->segment_id, docs[j]);
					if ((exp == SPM_QEXP_EXACT && ws[j] == 0.0f) ||
						isnan(ws[j]) || isinf(ws[j]) || !(los[j] <= ws[j]))
						verify_fail(index, "segment %u term %u has an invalid weight",
									seg->segment_id, e->term);
					if (ranges)
					{
						post_hash += posting_hash(docs[j], e->term, ws[j]);
						tdocs[postings - tpost0 + j] = docs[j];
						tws[postings - tpost0 + j] = ws[j];
					}
					anydoc = true;
					prevdoc = docs[j];
					hasposting[docs[j] / 8] |= 1 << (docs[j] % 8);
					bmax = Max(bmax, ws[j]);
					bmin = Min(bmin, los[j]);
				}
				if (bmax != skips[b].max_w || bmin != skips[b].min_w)
					verify_fail(index, "segment %u term %u block %d: block max/min %g/%g, the skip entry says %g/%g",
								seg->segment_id, e->term, b, bmax, bmin,
								skips[b].max_w, skips[b].min_w);
				tmax = Max(tmax, bmax);
				tmin = Min(tmin, bmin);
				postings += skips[b].count;
			}
			if (tmax != e->max_w || tmin != e->min_w)
				verify_fail(index, "segment %u term %u: max/min %g/%g, the dictionary says %g/%g",
							seg->segment_id, e->term, tmax, tmin, e->max_w, e->min_w);
			if (ranges)
				verify_term_ranges(vs, seg, e, p * SPM_DICT_PER_PAGE + i,
								   tdocs, tws, e->df);
		}
		CHECK_FOR_INTERRUPTS();
	}
	SpmUnpin(&pin);

	/* L2: every document with elements has its norm posting */
	if (l2)
	{
		uint32		withelems = 0;

		for (uint32 d = 0; d < ndocs; d++)
			withelems += (hasposting[d / 8] >> (d % 8)) & 1;
		if (withelems != l2_df)
			verify_fail(index, "segment %u has %u documents with elements and %u norm postings",
						seg->segment_id, withelems, l2_df);
	}
	if (nterms != seg->hdr.nterms)
		verify_fail(index, "segment %u has %u terms, its header says %u",
					seg->segment_id, nterms, seg->hdr.nterms);
	if (postings != seg->hdr.npostings || postings != ref->npostings)
		verify_fail(index, "segment %u has " UINT64_FORMAT " postings, its header says " UINT64_FORMAT,
					seg->segment_id, postings, seg->hdr.npostings);
	if (nnull > seg->hdr.nnull || seg->hdr.nnull != ref->nnull ||
		nnullbits != seg->hdr.nnull)
		verify_fail(index, "segment %u NULL counts disagree", seg->segment_id);
	if (ranges)
	{
		uint64		fwd_hash;
		uint64		elems = verify_forward(vs, seg, nulls, &fwd_hash);

		if (elems != postings || fwd_hash != post_hash)
			verify_fail(index, "segment %u forward copy (" UINT64_FORMAT " elements) does not hold the same postings as the posting lists (" UINT64_FORMAT ")",
						seg->segment_id, elems, postings);
	}
}

static void
vp_begin(void *arg, uint64 docid, ItemPointer tid, uint16 flags, int32 nnz)
{
	VerifyState *vs = arg;

	if (!(flags & SPM_PT_DELETED) && !ItemPointerIsValid(tid))
		verify_fail(vs->index, "pending document " UINT64_FORMAT " has an invalid heap TID", docid);
	if ((flags & SPM_PT_NULL) && nnz != 0)
		verify_fail(vs->index, "pending NULL row " UINT64_FORMAT " has elements", docid);
	vs->pending_docs++;
	vs->pending_postings += nnz;
	if (flags & SPM_PT_NULL)
		vs->pending_null++;
	if (flags & SPM_PT_DELETED)
		vs->pending_dead++;
	vs->docid = docid;
	vs->nnz = nnz;
	vs->got = 0;
	vs->last = -1;
}

static void
vp_elems(void *arg, const int32 *idx, const float4 *val, int n)
{
	VerifyState *vs = arg;

	for (int i = 0; i < n; i++)
	{
		if (idx[i] <= vs->last || (vs->dims > 0 && idx[i] >= vs->dims) ||
			val[i] == 0.0f || isnan(val[i]) || isinf(val[i]))
			verify_fail(vs->index, "pending document " UINT64_FORMAT " is not canonical",
						vs->docid);
		vs->last = idx[i];
	}
	vs->got += n;
}

static void
vp_end(void *arg)
{
}

/*
 * sparse_maxscore_verify(regclass): check the structural invariants and
 * return a one-line summary; raise ERRCODE_INDEX_CORRUPTED on the first
 * violation.  Holds the structure lock, so no flush, compaction or VACUUM
 * runs meanwhile; inserts may.
 */
PG_FUNCTION_INFO_V1(spm_verify_sql);
Datum
spm_verify_sql(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	SpmMetaPageData meta;
	VerifyState vs;
	SpmPendingVisitor v = {vp_begin, vp_elems, vp_end, &vs};
	BlockNumber *pages;
	int			npages;
	int64		nfree = 0;
	int64		orphans = 0;
	uint64		docs = 0;
	uint64		postings = 0;

	/*
	 * Ownership, unlike info: verify holds the structure lock (a
	 * ShareUpdateExclusiveLock, what VACUUM takes) for the whole check,
	 * which keeps VACUUM, flushes and compactions of the index waiting.
	 */
	index = open_index(indexoid, AccessShareLock, SPM_ACCESS_OWNER);

	/*
	 * On a standby nothing changes the structure but replay, which the lock
	 * would not stop anyway (and recovery allows no such lock): verify what
	 * is there; a page replay recycles meanwhile is reported as a conflict.
	 */
	if (!RecoveryInProgress())
		SpmLockStructure(index);
	SpmReadMeta(index, &meta);
	SpmCacheNewRound();

	memset(&vs, 0, sizeof(vs));
	vs.index = index;
	vs.nblocks = RelationGetNumberOfBlocks(index);
	vs.used = palloc0(vs.nblocks / 8 + 1);
	vs.dims = meta.dims;
	vs.kind = spm_index_kind(index);
	use_page(&vs, SPM_METAPAGE_BLKNO, "meta");
	if (meta.nsegments > 0 &&
		(((meta.flags & SPM_META_COSINE) != 0) != (vs.kind == SPM_KIND_COSINE) ||
		 ((meta.flags & SPM_META_L2) != 0) != (vs.kind == SPM_KIND_L2)))
		verify_fail(index, "the metapage's flags %x do not match the index's operator class",
					meta.flags);

	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		const SpmSegmentRef *r = &meta.segments[i];

		if (r->docid_lo >= r->docid_hi ||
			(i > 0 && r->docid_lo < meta.segments[i - 1].docid_hi) ||
			r->docid_hi > meta.pending_docid_lo)
			verify_fail(index, "segment %u has docid range [" UINT64_FORMAT ", " UINT64_FORMAT ") out of order",
						r->segment_id, r->docid_lo, r->docid_hi);
		if (r->segment_id >= meta.next_segment_id)
			verify_fail(index, "segment id %u is not below the next id %u",
						r->segment_id, meta.next_segment_id);
		verify_segment(&vs, &meta, (int) i);
		docs += segref_live(r);
		postings += r->npostings;
	}

	if (meta.pending_docid_lo + meta.pending_ndocs != meta.next_docid)
		verify_fail(index, "pending list counts disagree with next_docid");
	spm_pending_visit(index, meta.pending_head, meta.pending_docid_lo,
					  meta.next_docid, InvalidBlockNumber, &v, &pages, &npages);
	for (int i = 0; i < npages; i++)
		use_page(&vs, pages[i], "pending");
	if (vs.pending_docs != meta.pending_ndocs ||
		vs.pending_null != meta.pending_nnull ||
		vs.pending_dead != meta.pending_ndead ||
		vs.pending_postings != meta.pending_npostings)
		verify_fail(index, "pending list holds " UINT64_FORMAT " documents (%u NULL, %u dead, " UINT64_FORMAT " elements), the metapage says " UINT64_FORMAT " (%u, %u, " UINT64_FORMAT ")",
					vs.pending_docs, vs.pending_null, vs.pending_dead,
					vs.pending_postings, meta.pending_ndocs, meta.pending_nnull,
					meta.pending_ndead, meta.pending_npostings);
	docs += vs.pending_docs - vs.pending_dead;

	/* every other page is free, or an orphan VACUUM will reclaim */
	for (BlockNumber blkno = 1; blkno < vs.nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;

		if ((vs.used[blkno / 8] >> (blkno % 8)) & 1)
			continue;
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page) ||
			(SpmPageHasOpaque(page) &&
			 SpmPageIsFree(SpmPageGetOpaque(page))))
			nfree++;
		else
			orphans++;
		UnlockReleaseBuffer(buf);
	}

	if (!RecoveryInProgress())
		SpmUnlockStructure(index);
	relation_close(index, AccessShareLock);

	PG_RETURN_TEXT_P(cstring_to_text(psprintf("segments=%u documents=" UINT64_FORMAT " postings=" UINT64_FORMAT " pending=" UINT64_FORMAT " pages=%u free=" INT64_FORMAT " unreachable=" INT64_FORMAT,
											  meta.nsegments, docs, postings,
											  meta.pending_ndocs, vs.nblocks,
											  nfree, orphans)));
}

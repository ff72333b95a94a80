/*-------------------------------------------------------------------------
 *
 * spmvacuum.c
 *	  VACUUM: clear the alive bits of dead rows; at cleanup, flush, compact
 *	  and reclaim (spmflush.c), and report statistics.
 *
 * ambulkdelete walks every segment's docmap and asks the callback about
 * each TID whose alive bit is still set.  Bits only ever go from 1 to 0,
 * and each bitset page is changed in one GenericXLog record together with
 * the metapage's count of dead documents of the segment, so a scan that
 * sees ndead == 0 may skip the bitset (README "Alive bits").  It can be
 * called several times per VACUUM and is idempotent.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "commands/vacuum.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "spm.h"

/*
 * Clear the given bits of alive page pageno of segment seg, and add their
 * number to the segment's ndead in the metapage, in one WAL record.
 * Returns the number of bits that were set.
 */
static uint32
clear_alive_bits(Relation index, SpmSegment *seg, uint32 pageno,
				 const uint32 *bits, int nbits)
{
	Buffer		metabuf;
	Buffer		buf;
	GenericXLogState *state;
	Page		metapage;
	Page		page;
	SpmMetaPage meta;
	uint8	   *map;
	uint32		cleared = 0;
	int			s;

	metabuf = ReadBuffer(index, SPM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	buf = ReadBuffer(index, seg->alive[pageno]);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);

	state = GenericXLogStart(index);
	metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	SpmCheckPage(index, metapage, SPM_METAPAGE_BLKNO, SPM_PAGE_META, 0);
	SpmCheckPage(index, page, seg->alive[pageno], SPM_PAGE_ALIVE, seg->segment_id);
	meta = SpmPageGetMeta(metapage);

	for (s = 0; s < (int) meta->nsegments; s++)
	{
		if (meta->segments[s].segment_id == seg->segment_id)
			break;
	}

	map = (uint8 *) PageGetContents(page);
	if (s < (int) meta->nsegments)
	{
		for (int i = 0; i < nbits; i++)
		{
			uint32		b = bits[i];

			if (map[b / 8] & (1 << (b % 8)))
			{
				map[b / 8] &= ~(1 << (b % 8));
				cleared++;
			}
		}
		meta->segments[s].ndead += cleared;
	}

	if (cleared > 0)
		GenericXLogFinish(state);
	else
		GenericXLogAbort(state);
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	return cleared;
}

IndexBulkDeleteResult *
spmbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	SpmMetaPageData meta;
	uint8	   *bits = palloc(SPM_BITMAP_BYTES);
	uint32	   *dead = palloc(SPM_BITS_PER_PAGE * sizeof(uint32));

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * No flush or compaction may move documents while we look at them: a
	 * dead document moved into a segment we have already passed would stay
	 * alive while the heap recycles its TID (README "VACUUM").
	 */
	LockPage(index, SPM_FLUSH_LOCK, ExclusiveLock);

	SpmReadMeta(index, &meta);
	for (uint32 i = 0; i < meta.nsegments; i++)
	{
		SpmSegment *seg;
		SpmPin		pin = {InvalidBuffer, InvalidBlockNumber};
		SpmPin		bitpin = {InvalidBuffer, InvalidBlockNumber};

		SpmCacheNewRound();
		seg = SpmGetSegment(index, &meta, (int) i);
		for (uint32 p = 0; p < seg->hdr.nalive; p++)
		{
			uint32		lo = p * SPM_BITS_PER_PAGE;
			uint32		hi = Min(seg->hdr.ndocs, lo + SPM_BITS_PER_PAGE);
			int			ndead = 0;

			SpmReadBitsetPage(index, seg, false, p, bits, &bitpin);
			for (uint32 d = lo; d < hi; d++)
			{
				uint32		b = d - lo;
				ItemPointerData tid;

				if (!(bits[b / 8] & (1 << (b % 8))))
					continue;
				SpmGetTid(index, seg, d, &tid, &pin);
				if (callback(&tid, callback_state))
					dead[ndead++] = b;
			}
			SpmUnpin(&pin);
			SpmUnpin(&bitpin);
			if (ndead > 0)
				stats->tuples_removed += clear_alive_bits(index, seg, p, dead, ndead);
			vacuum_delay_point();
		}
	}

	spm_pending_bulkdelete(index, stats, callback, callback_state);
	UnlockPage(index, SPM_FLUSH_LOCK, ExclusiveLock);

	pfree(bits);
	pfree(dead);
	return stats;
}

IndexBulkDeleteResult *
spmvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	SpmMetaPageData meta;
	double		live = 0;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/* flush the pending list, compact, reclaim and shrink */
	spm_vacuum_maintain(index, info, stats);

	SpmReadMeta(index, &meta);
	for (uint32 i = 0; i < meta.nsegments; i++)
		live += (double) (meta.segments[i].docid_hi - meta.segments[i].docid_lo) -
			meta.segments[i].ndead;
	live += (double) meta.pending_ndocs - meta.pending_ndead;

	stats->num_pages = RelationGetNumberOfBlocks(index);
	stats->num_index_tuples = live;
	stats->estimated_count = false;
	return stats;
}

/*-------------------------------------------------------------------------
 *
 * spminsert.c
 *	  aminsert for sparse_maxscore: append to the pending list.
 *
 * Every row, NULL or not, becomes a pending document (README "Pending
 * list").  When the list grows beyond pending_list_limit (the reloption,
 * else sparse_maxscore.pending_list_limit), the inserting backend flushes
 * it into a new segment -- unless another backend is already flushing or
 * VACUUM is at work, in which case it does not wait (as GIN does).  With
 * fastupdate = off every insert flushes at once (a test aid: one segment
 * per row, merged as they accumulate).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "spm.h"

bool
spminsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid,
		  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
		  IndexInfo *indexInfo)
{
	MemoryContext ctx = AllocSetContextCreate(CurrentMemoryContext,
											  "sparse_maxscore insert",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(ctx);
	SpmOptions *opts = spm_get_options(index);
	SparseVector *v = NULL;
	int32		dims = 0;
	uint64		bytes;
	int			limit;

	if (!isnull[0])
	{
		v = DatumGetSparseVectorP(values[0]);
		SpmCheckVector(index, v, &dims);
	}
	bytes = spm_pending_append(index, v, heap_tid);

	limit = opts->pendingListLimit >= 0 ? opts->pendingListLimit :
		spm_pending_list_limit;
	if (!opts->fastupdate)
		spm_flush(index, true, false);
	else if (bytes > (uint64) limit * 1024)
		spm_flush(index, false, false);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(ctx);
	return false;
}

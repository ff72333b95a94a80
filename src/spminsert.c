/*-------------------------------------------------------------------------
 *
 * spminsert.c
 *	  aminsert for sparse_maxscore.
 *
 * Writes after the build are not supported yet (the pending list arrives
 * with the next issue).  Rather than drop the row, which would make index
 * scans miss it, the insert is refused.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/rel.h"

#include "spm.h"

bool
spminsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid,
		  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
		  IndexInfo *indexInfo)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("sparse_maxscore index \"%s\" does not accept new rows yet",
					RelationGetRelationName(index)),
			 errhint("Drop the index before loading rows and create it afterwards, or REINDEX it after the load.")));
	return false;
}

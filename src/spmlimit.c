/*-------------------------------------------------------------------------
 *
 * spmlimit.c
 *	  The LIMIT above an index scan, as the size of its first round.
 *
 * A scan computes the exact top k of its first round before it returns a
 * row (spmscan.c, "ROUNDS"), and how much MaxScore can prune depends on k:
 * the threshold is the k-th best score.  PostgreSQL 15 does not tell an
 * index scan how many rows its caller wants (ExecSetTupleBound stops at
 * sorts and appends), so a scan under LIMIT 10 computed
 * sparse_maxscore.initial_k (100) rows, pruning like a top-100 query.
 *
 * An ExecutorStart hook therefore walks every new plan-state tree.  For
 * each Limit node whose count (and offset) is a constant or an external
 * parameter, and whose child is an Index Scan on a sparse_maxscore index
 * without a filter of its own (or a Merge Append of such scans, as over
 * partitions), it records a hint: (index, executor state, offset + count).
 * The scan's first amgettuple takes the most recent hint for its index,
 * removing it, and uses it as the size of its first round, also after
 * every rescan (a LATERAL top-k per outer row).
 *
 * A hint only chooses how many rows the first round computes; it never
 * changes a result.  A round that returns fewer rows than the executor
 * wants is followed by the next one (k doubles), so a hint taken by the
 * wrong scan of the same index (two scans of one index under different
 * LIMITs, a nested query) costs time, never rows.  Hints are dropped at
 * ExecutorEnd of the executor state that made them and at transaction
 * end.  A filter on the scan (a qual the index cannot check) rejects
 * rows after the scan, so no hint is made for it: the first round keeps
 * initial_k, as before.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/relscan.h"
#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/rel.h"

#include "spm.h"

#define SPM_MAX_HINTS	16

typedef struct SpmLimitHint
{
	Oid			index;
	EState	   *estate;			/* compared, never dereferenced */
	int			bound;			/* offset + count, at least 1 */
} SpmLimitHint;

static SpmLimitHint hints[SPM_MAX_HINTS];
static int	nhints = 0;

/* our amgettuple, given by the caller (so that this file needs no scan code) */
static amgettuple_function spm_gettuple = NULL;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

/*
 * The value of a LIMIT or OFFSET expression if it is known before the
 * query runs: a constant or an external parameter (a prepared statement's
 * $n).  Anything else (a subquery, a volatile function) is left alone:
 * evaluating it here could run it early.
 */
static bool
known_int8(Node *expr, EState *estate, int64 *value)
{
	if (expr == NULL)
		return false;
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;

		if (c->constisnull || c->consttype != INT8OID)
			return false;
		*value = DatumGetInt64(c->constvalue);
		return true;
	}
	if (IsA(expr, Param) && ((Param *) expr)->paramkind == PARAM_EXTERN)
	{
		Param	   *p = (Param *) expr;
		ParamListInfo params = estate->es_param_list_info;
		ParamExternData *prm;

		if (params == NULL || params->paramFetch != NULL ||
			p->paramid < 1 || p->paramid > params->numParams)
			return false;
		prm = &params->params[p->paramid - 1];
		if (prm->isnull || prm->ptype != INT8OID || p->paramtype != INT8OID)
			return false;
		*value = DatumGetInt64(prm->value);
		return true;
	}
	return false;
}

static void
add_hint(Oid index, EState *estate, int bound)
{
	if (nhints == SPM_MAX_HINTS)
	{
		/* forget the oldest */
		memmove(&hints[0], &hints[1], (SPM_MAX_HINTS - 1) * sizeof(SpmLimitHint));
		nhints--;
	}
	hints[nhints].index = index;
	hints[nhints].estate = estate;
	hints[nhints].bound = bound;
	nhints++;
}

/* a hint for ps if it is an unfiltered scan of a sparse_maxscore index */
static void
hint_scan(PlanState *ps, EState *estate, int bound)
{
	IndexScanState *iss;
	Relation	index;

	if (ps == NULL || !IsA(ps, IndexScanState))
		return;
	iss = (IndexScanState *) ps;
	index = iss->iss_RelationDesc;
	if (index == NULL || index->rd_indam == NULL ||
		index->rd_indam->amgettuple != spm_gettuple ||
		ps->plan->qual != NIL)
		return;
	add_hint(RelationGetRelid(index), estate, bound);
}

static bool
find_limits(PlanState *ps, void *context)
{
	EState	   *estate = (EState *) context;

	if (ps == NULL)
		return false;
	if (IsA(ps, LimitState))
	{
		Limit	   *plan = (Limit *) ps->plan;
		PlanState  *child = outerPlanState(ps);
		int64		count;
		int64		offset = 0;

		if (known_int8(plan->limitCount, estate, &count) &&
			(plan->limitOffset == NULL ||
			 known_int8(plan->limitOffset, estate, &offset)) &&
			count >= 0 && offset >= 0 && child != NULL)
		{
			int			bound = (int) Min(Min(count, PG_INT32_MAX) +
										  Min(offset, PG_INT32_MAX),
										  PG_INT32_MAX);

			bound = Max(bound, 1);
			if (IsA(child, MergeAppendState))
			{
				MergeAppendState *ms = (MergeAppendState *) child;

				for (int i = 0; i < ms->ms_nplans; i++)
					hint_scan(ms->mergeplans[i], estate, bound);
			}
			else
				hint_scan(child, estate, bound);
		}
	}
	return planstate_tree_walker(ps, find_limits, context);
}

static void
spm_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && queryDesc->planstate)
		find_limits(queryDesc->planstate, queryDesc->estate);
}

static void
forget_estate(EState *estate)
{
	int			n = 0;

	for (int i = 0; i < nhints; i++)
		if (hints[i].estate != estate)
			hints[n++] = hints[i];
	nhints = n;
}

static void
spm_ExecutorEnd(QueryDesc *queryDesc)
{
	forget_estate(queryDesc->estate);
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static void
forget_all(XactEvent event, void *arg)
{
	nhints = 0;
}

/*
 * The size of the first round for a scan of index that is starting now:
 * the most recent hint for the index (which is removed), or 0 if none.
 */
int
SpmTakeLimitHint(Oid index)
{
	for (int i = nhints - 1; i >= 0; i--)
	{
		if (hints[i].index == index)
		{
			int			bound = hints[i].bound;

			memmove(&hints[i], &hints[i + 1],
					(nhints - i - 1) * sizeof(SpmLimitHint));
			nhints--;
			return bound;
		}
	}
	return 0;
}

/* called once from _PG_init, with the handler's amgettuple */
void
SpmInstallLimitHints(amgettuple_function gettuple)
{
	spm_gettuple = gettuple;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = spm_ExecutorStart;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = spm_ExecutorEnd;
	RegisterXactCallback(forget_all, NULL);
}

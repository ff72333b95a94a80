/*-------------------------------------------------------------------------
 *
 * spm.c
 *	  sparse_maxscore: the handler, GUCs, reloptions and SQL functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "spm.h"

int			spm_initial_k = 100;
int			spm_algorithm = SPM_ALG_MAXSCORE;
int			spm_pending_list_limit = 4096;
int			spm_debug_round_delay = 0;

static relopt_kind spm_relopt_kind;
static bool spm_initialized = false;

static const struct config_enum_entry algorithm_options[] = {
	{"maxscore", SPM_ALG_MAXSCORE, false},
	{"exhaustive", SPM_ALG_EXHAUSTIVE, false},
	{NULL, 0, false}
};

/*
 * Register GUCs and reloptions.  Called from _PG_init, i.e. when the
 * library is first loaded (at the latest by the first call of the
 * handler, before any reloption of ours is parsed).
 */
void
spm_init(void)
{
	if (spm_initialized)
		return;
	spm_initialized = true;

	spm_relopt_kind = add_reloption_kind();
	add_bool_reloption(spm_relopt_kind, "fastupdate",
					   "Enables the pending list of the sparse_maxscore index",
					   true, AccessExclusiveLock);
	add_int_reloption(spm_relopt_kind, "pending_list_limit",
					  "Maximum size of the pending list in kilobytes (-1: sparse_maxscore.pending_list_limit)",
					  -1, 64, MAX_KILOBYTES, AccessExclusiveLock);
	add_int_reloption(spm_relopt_kind, "compact_segments",
					  "Compact at VACUUM when the index has more segments than this",
					  8, 1, SPM_MAX_SEGMENTS - 2, AccessExclusiveLock);

	DefineCustomIntVariable("sparse_maxscore.initial_k",
							"Rows computed by the first round of an index scan.",
							"Later rounds double it for as long as the query asks for more rows.",
							&spm_initial_k, 100, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("sparse_maxscore.algorithm",
							 "Traversal used by sparse_maxscore index scans.",
							 "maxscore prunes with block-max bounds; exhaustive scores every posting of the query terms. Both are exact.",
							 &spm_algorithm, SPM_ALG_MAXSCORE, algorithm_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("sparse_maxscore.pending_list_limit",
							"Size of the pending list beyond which an insert flushes it into a segment.",
							NULL, &spm_pending_list_limit, 4096, 64, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("sparse_maxscore.debug_round_delay",
							"Sleep this long inside every scan round, holding the round's lock (tests only).",
							"Lets concurrency tests catch a round in progress.",
							&spm_debug_round_delay, 0, 0, 60000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("sparse_maxscore");
}

/*
 * Parse and validate reloptions.
 */
bytea *
spmoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fastupdate", RELOPT_TYPE_BOOL, offsetof(SpmOptions, fastupdate)},
		{"pending_list_limit", RELOPT_TYPE_INT, offsetof(SpmOptions, pendingListLimit)},
		{"compact_segments", RELOPT_TYPE_INT, offsetof(SpmOptions, compactSegments)},
	};

	return (bytea *) build_reloptions(reloptions, validate, spm_relopt_kind,
									  sizeof(SpmOptions), tab, lengthof(tab));
}

/* the index's options, defaults filled in */
SpmOptions *
spm_get_options(Relation index)
{
	static SpmOptions defaults = {0, true, -1, 8};

	if (index->rd_options)
		return (SpmOptions *) index->rd_options;
	return &defaults;
}

static char *
spmbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case PROGRESS_SPM_PHASE_LOAD:
			return "loading tuples";
		case PROGRESS_SPM_PHASE_WRITE:
			return "writing segment";
		default:
			return NULL;
	}
}

PG_FUNCTION_INFO_V1(spmhandler);
Datum
spmhandler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = 0;
	amroutine->amsupport = 1;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = true;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = true;
	/* ambulkdelete takes SPM_FLUSH_LOCK, a page lock; keep it in the leader */
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = spmbuild;
	amroutine->ambuildempty = spmbuildempty;
	amroutine->aminsert = spminsert;
	amroutine->ambulkdelete = spmbulkdelete;
	amroutine->amvacuumcleanup = spmvacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = spmcostestimate;
	amroutine->amoptions = spmoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = spmbuildphasename;
	amroutine->amvalidate = spmvalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = spmbeginscan;
	amroutine->amrescan = spmrescan;
	amroutine->amgettuple = spmgettuple;
	amroutine->amgetbitmap = NULL;
	amroutine->amendscan = spmendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}

/*
 * sparse_maxscore_last_scan(): the counters of the most recent
 * sparse_maxscore index scan of this session.
 */
PG_FUNCTION_INFO_V1(spm_last_scan_sql);
Datum
spm_last_scan_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {false};
	SpmCounters *c = &spm_last_scan;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Int64GetDatum(c->rounds);
	values[1] = Int64GetDatum(c->postings_decoded);
	values[2] = Int64GetDatum(c->blocks_decoded);
	values[3] = Int64GetDatum(c->blocks_skipped);
	values[4] = Int64GetDatum(c->windows);
	values[5] = Int64GetDatum(c->windows_skipped);
	values[6] = Int64GetDatum(c->candidates);
	values[7] = Int64GetDatum(c->rows_returned);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

void		_PG_init(void);

void
_PG_init(void)
{
	spm_init();
}

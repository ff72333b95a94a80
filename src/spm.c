/*-------------------------------------------------------------------------
 *
 * spm.c
 *	  sparse_maxscore: the handler, _PG_init and sparse_maxscore_last_scan().
 *	  GUCs and reloptions are in spmoptions.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmcompat.h"
#include "spmpolicy.h"

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
		case PROGRESS_SPM_PHASE_REORDER:
			return "reordering documents";
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
#if PG_VERSION_NUM >= 180000
	amroutine->amcanhash = false;
	amroutine->amconsistentequality = false;
	amroutine->amconsistentordering = false;
#endif
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
#if PG_VERSION_NUM >= 170000
	/* one process builds (spmbuild.c) */
	amroutine->amcanbuildparallel = false;
#endif
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = true;
#if PG_VERSION_NUM >= 160000
	amroutine->amsummarizing = false;
#endif
	/* ambulkdelete holds the structure lock throughout: workers would queue */
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = spmbuild;
	amroutine->ambuildempty = spmbuildempty;
	amroutine->aminsert = spminsert;
#if PG_VERSION_NUM >= 170000
	amroutine->aminsertcleanup = NULL;
#endif
	amroutine->ambulkdelete = spmbulkdelete;
	amroutine->amvacuumcleanup = spmvacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = spmcostestimate;
#if PG_VERSION_NUM >= 180000
	amroutine->amgettreeheight = NULL;
#endif
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
#if PG_VERSION_NUM >= 180000
	/* no strategies (amstrategies = 0): nothing to translate */
	amroutine->amtranslatestrategy = NULL;
	amroutine->amtranslatecmptype = NULL;
#endif

	PG_RETURN_POINTER(amroutine);
}

/*
 * sparse_maxscore_last_scan(): the counters of the most recent
 * sparse_maxscore index scan of this session, or NULL (every column NULL)
 * when the session has not run one.
 *
 * The result type is the caller's: an install of an older extension
 * version declares fewer OUT columns (the columns are only ever appended,
 * doc/versions.md), and gets the first ones.
 */
PG_FUNCTION_INFO_V1(spm_last_scan_sql);
Datum
spm_last_scan_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[14];
	bool		nulls[14] = {false};
	SpmCounters *c = &spm_last_scan;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts > (int) lengthof(values))
		elog(ERROR, "sparse_maxscore_last_scan() declares %d columns, this library fills at most %d",
			 tupdesc->natts, (int) lengthof(values));
	if (!spm_last_scan_valid)
		PG_RETURN_NULL();
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Int64GetDatum(c->rounds);
	values[1] = Int64GetDatum(c->postings_decoded);
	values[2] = Int64GetDatum(c->blocks_decoded);
	values[3] = Int64GetDatum(c->blocks_skipped);
	values[4] = Int64GetDatum(c->windows);
	values[5] = Int64GetDatum(c->windows_skipped);
	values[6] = Int64GetDatum(c->candidates);
	values[7] = Int64GetDatum(c->rows_returned);
	values[8] = Int64GetDatum(c->seg_exhaustive);
	values[9] = Int64GetDatum(c->seg_maxscore);
	values[10] = Int64GetDatum(c->seg_ranges);
	values[11] = Int64GetDatum(c->seg_ranges_gave_up);
	values[12] = Int64GetDatum(c->pending_scored);
	values[13] = Int64GetDatum(c->postings_estimated);
	/* heap_form_tuple reads the tupdesc's natts values */
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * sparse_maxscore_last_scan_segments(): one row per segment of each pass
 * of the same scan (the first SPM_SEGLOG_MAX), saying what the policy
 * chose, what it expected that to decode and what it decoded; no rows when
 * the session has run no scan.
 */
PG_FUNCTION_INFO_V1(spm_last_scan_segments_sql);
Datum
spm_last_scan_segments_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (!spm_last_scan_valid)
		return (Datum) 0;
	for (int i = 0; i < spm_last_seglog.n; i++)
	{
		const SpmSegRun *r = &spm_last_seglog.rows[i];
		Datum		values[7];
		bool		nulls[7] = {false};
		const char *run;
		static const char *const passes[] = {"top-k", "sorted", "negative", "zero"};

		switch (r->run)
		{
			case SPM_RUN_EXHAUSTIVE:
				run = "exhaustive";
				break;
			case SPM_RUN_MAXSCORE:
				run = "maxscore";
				break;
			case SPM_RUN_RANGES:
				run = "ranges";
				break;
			default:
				run = "ranges, gave up: maxscore";
				break;
		}
		values[0] = Int32GetDatum(r->round);
		values[1] = CStringGetTextDatum(passes[r->pass]);
		values[2] = Int32GetDatum(r->segment);
		values[3] = CStringGetTextDatum(run);
		values[4] = Int64GetDatum(r->postings);
		values[5] = Int64GetDatum(r->estimate);
		values[6] = Int64GetDatum(r->decoded);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

void		_PG_init(void);

void
_PG_init(void)
{
	spm_init();
	SpmInstallLimitHints(spmgettuple);
}

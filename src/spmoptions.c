/*-------------------------------------------------------------------------
 *
 * spmoptions.c
 *	  sparse_maxscore: GUCs and reloptions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "spm.h"
#include "spmpolicy.h"

int			spm_initial_k = 100;
int			spm_algorithm = SPM_ALG_AUTO;
int			spm_pending_list_limit = 4096;
int			spm_debug_round_delay = 0;

/* kB: the smallest pending list limit, GUC or reloption (GIN's too) */
#define SPM_MIN_PENDING_LIST_LIMIT	64

static relopt_kind spm_relopt_kind;
static bool spm_initialized = false;

static const struct config_enum_entry algorithm_options[] = {
	{"auto", SPM_ALG_AUTO, false},
	{"ranges", SPM_ALG_RANGES, false},
	{"maxscore", SPM_ALG_MAXSCORE, false},
	{"exhaustive", SPM_ALG_EXHAUSTIVE, false},
	{NULL, 0, false}
};

static relopt_enum_elt_def ranges_options[] = {
	{"auto", SPM_RANGES_AUTO},
	{"on", SPM_RANGES_ON},
	{"off", SPM_RANGES_OFF},
	{"true", SPM_RANGES_ON},
	{"false", SPM_RANGES_OFF},
	{"yes", SPM_RANGES_ON},
	{"no", SPM_RANGES_OFF},
	{"1", SPM_RANGES_ON},
	{"0", SPM_RANGES_OFF},
	{(const char *) NULL}
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

	/*
	 * The options are read only by builds, inserts, flushes and VACUUM,
	 * which see either value (reorder only by CREATE INDEX and REINDEX);
	 * ShareUpdateExclusiveLock (GIN's choice for fastupdate) is also what
	 * ALTER INDEX takes in a backend that has not loaded us.
	 */
	spm_relopt_kind = add_reloption_kind();
	add_bool_reloption(spm_relopt_kind, "fastupdate",
					   "Enables the pending list of the sparse_maxscore index",
					   true, ShareUpdateExclusiveLock);
	/*
	 * -1, the default, means sparse_maxscore.pending_list_limit and may be
	 * given explicitly too; spmoptions refuses every other value below 64,
	 * with one message that names -1 (no lower bound here, else values
	 * below it would get PostgreSQL's message, which does not).
	 */
	add_int_reloption(spm_relopt_kind, "pending_list_limit",
					  "Maximum size of the pending list in kilobytes (-1: sparse_maxscore.pending_list_limit)",
					  -1, PG_INT32_MIN, MAX_KILOBYTES, ShareUpdateExclusiveLock);
	/*
	 * ranges was a boolean before issue 37: the words a boolean took stay
	 * valid, so that an index created with ranges = true dumps and
	 * restores (doc/versions.md).
	 */
	add_enum_reloption(spm_relopt_kind, "ranges",
					   "Which new segments of the sparse_maxscore index get range maxima and a forward copy (range pruning): auto, on or off",
					   ranges_options, SPM_RANGES_AUTO,
					   "Valid values are \"auto\", \"on\" and \"off\".",
					   ShareUpdateExclusiveLock);
	add_bool_reloption(spm_relopt_kind, "reorder",
					   "CREATE INDEX and REINDEX give documents that share terms nearby docids (recursive graph bisection)",
					   false, ShareUpdateExclusiveLock);
	add_bool_reloption(spm_relopt_kind, "quantize",
					   "Stores the weights of new segments without range data in one byte each; the executor rescores the rows the scan returns",
					   true, ShareUpdateExclusiveLock);
	add_int_reloption(spm_relopt_kind, "compact_segments",
					  "Compact at VACUUM when the index has more segments than this",
					  8, 1, SPM_MAX_SEGMENTS - 2, ShareUpdateExclusiveLock);

	DefineCustomIntVariable("sparse_maxscore.initial_k",
							"Rows computed by the first round of an index scan.",
							"Later rounds double it for as long as the query asks for more rows.",
							&spm_initial_k, 100, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("sparse_maxscore.algorithm",
							 "Traversal used by sparse_maxscore index scans.",
							 "auto prunes docid ranges by their bounds where the segment and query allow it and it pays, else like maxscore; ranges does so wherever allowed; maxscore prunes with block-max bounds; exhaustive scores every posting of the query terms. All are exact.",
							 &spm_algorithm, SPM_ALG_AUTO, algorithm_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("sparse_maxscore.pending_list_limit",
							"Size of the pending list beyond which an insert flushes it into a segment.",
							"An index's reloption pending_list_limit, unless -1, overrides it.",
							&spm_pending_list_limit, 4096, SPM_MIN_PENDING_LIST_LIMIT, MAX_KILOBYTES,
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
		{"ranges", RELOPT_TYPE_ENUM, offsetof(SpmOptions, ranges)},
		{"reorder", RELOPT_TYPE_BOOL, offsetof(SpmOptions, reorder)},
		{"quantize", RELOPT_TYPE_BOOL, offsetof(SpmOptions, quantize)},
	};

	SpmOptions *opts;

	opts = (SpmOptions *) build_reloptions(reloptions, validate, spm_relopt_kind,
										   sizeof(SpmOptions), tab, lengthof(tab));
	/* the words of parse_one_reloption's range error */
	if (validate && opts != NULL &&
		opts->pendingListLimit != -1 && opts->pendingListLimit < SPM_MIN_PENDING_LIST_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value %d out of bounds for option \"pending_list_limit\"",
						opts->pendingListLimit),
				 errdetail("Valid values are -1 (use sparse_maxscore.pending_list_limit) and between \"%d\" and \"%d\".",
						   SPM_MIN_PENDING_LIST_LIMIT, MAX_KILOBYTES)));
	return (bytea *) opts;
}

/* the index's options, defaults filled in */
SpmOptions *
spm_get_options(Relation index)
{
	static SpmOptions defaults = {0, true, -1, 8, SPM_RANGES_AUTO, false, true};

	if (index->rd_options)
		return (SpmOptions *) index->rd_options;
	return &defaults;
}

/*-------------------------------------------------------------------------
 *
 * spmpolicy.h
 *	  Which algorithm scores a segment for a query: the scan's one policy.
 *
 * A round scores every segment of the index, one at a time
 * (spmsegscan.c).  For each, spm_policy_choose picks one of
 *
 *	EXHAUSTIVE	term-at-a-time over every window, nothing pruned
 *				(spmtraverse.c with exhaustive = true): the test oracle, and
 *				the passes that need every row's score (SORTED, ZERO,
 *				NEGATIVE);
 *	MAXSCORE	windowed block-max MaxScore (spmtraverse.c);
 *	RANGES		range pruning over the forward copy (spmrange.c), which
 *				under sparse_maxscore.algorithm = auto may give up when it
 *				costs more than MaxScore would, and then MaxScore scores the
 *				segment.
 *
 * Everything the choice depends on is in SpmPolicy: the setting, the pass,
 * whether the range kernel can score this segment for this query, and the
 * segment's backoff state, kept with the segment in the backend's segment
 * cache.  After a range round the segment scan reports whether it finished
 * (spm_policy_ranges_done), which is what the backoff learns from; after a
 * MaxScore run, the postings it decoded (spm_policy_maxscore_done): where
 * MaxScore keeps decoding nearly everything (a corpus of independent
 * terms), auto runs the exhaustive kernel, which does the same work
 * without MaxScore's bookkeeping, and tries MaxScore again now and then.
 *
 * Two finer choices are made inside the kernels, while they run, because
 * they need the kernel's running state: spmtraverse.c chooses per window
 * between MaxScore and plain term-at-a-time (use_maxscore: both exact,
 * a cost decision), and spmrange.c gives up when the ranges still to score
 * would cost more than fallback_cost (too_costly), a price this policy
 * sets.  src/README "Changing the scan" says where to add an algorithm.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMPOLICY_H
#define SPMPOLICY_H

/* the values of sparse_maxscore.algorithm */
typedef enum SpmAlgorithm
{
	SPM_ALG_AUTO,				/* range pruning where it applies and pays,
								 * else MaxScore */
	SPM_ALG_RANGES,				/* range pruning wherever it applies */
	SPM_ALG_MAXSCORE,
	SPM_ALG_EXHAUSTIVE
} SpmAlgorithm;

/* what scores the segment */
typedef enum SpmRun
{
	SPM_RUN_EXHAUSTIVE,
	SPM_RUN_MAXSCORE,
	SPM_RUN_RANGES
} SpmRun;

/*
 * What the policy remembers of one segment in this backend, in the
 * segment's cache entry (SpmSegment.backoff; zero when first cached).
 */
typedef struct SpmBackoff
{
	uint32		fails;			/* rounds in a row range pruning gave up */
	uint32		skip;			/* rounds left that go to MaxScore */

	/* under auto, what MaxScore decodes of the query terms' postings */
	bool		ms_known;
	float		ms_share;		/* moving average over its runs */
	uint32		ms_fails;		/* runs in a row it saved too little */
	uint32		ms_skip;		/* rounds left that go exhaustive */
} SpmBackoff;

typedef struct SpmPolicy
{
	/* inputs, set by the caller */
	int			algorithm;		/* sparse_maxscore.algorithm */
	bool		all_rows;		/* a pass that needs every row's score */
	bool		ranges_data;	/* the segment has range data and no
								 * negative weight, nor has the query */
	bool		ranges_usable;	/* and the query's terms suit the range
								 * kernel (spm_range_usable) */
	double		postings;		/* postings of the query terms in the
								 * segment */
	double		nranges;		/* the segment's ranges (with range data) */
	SpmBackoff *backoff;		/* the segment's */

	/* outputs, set by spm_policy_choose */
	SpmRun		run;
	double		fallback_cost;	/* RANGES: SpmRangeScan.fallback_cost (0 =
								 * never give up) */
} SpmPolicy;

extern SpmRun spm_policy_choose(SpmPolicy *p);
extern void spm_policy_ranges_done(SpmPolicy *p, bool finished);
extern void spm_policy_maxscore_done(SpmPolicy *p, double decoded);

#endif							/* SPMPOLICY_H */

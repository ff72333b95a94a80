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
 * whether the range kernel can score this segment for this query, what is
 * cheap to know of the query before scoring (its terms in the segment and
 * their postings), and what the policy has learnt of the segment, kept
 * with it in the backend's segment cache (SpmBackoff).
 *
 * The choice is a cost model (issue 37; src/README "Which segments"):
 * each kernel's cost is estimated in units of a posting decoded by the
 * exhaustive kernel, from one table of unit costs (spmpolicy.c), and the
 * cheapest runs.  The exhaustive kernel decodes every posting of the
 * query terms; MaxScore decodes a share of them that nothing cheap
 * predicts (it depends on the k-th score, which is known only by
 * scoring), so the policy learns it per segment and per query class --
 * the query's terms in the segment and the log2 of their postings, which
 * on real text separate keyword queries, where MaxScore skips half and
 * more of the postings of long lists, from expansion queries, where it
 * skips next to nothing -- from what MaxScore decoded in its runs
 * (spm_policy_maxscore_done), and tries MaxScore again now and then where
 * it chose the exhaustive kernel, since the share is measured only by
 * running it.  Range pruning runs where the segment has range data and
 * its bound pass costs less than the exhaustive estimate, and gives up
 * when it would cost more than that estimate; give-ups in a row keep it
 * off the segment for a while (spm_policy_ranges_done).
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
 * The query classes whose MaxScore share is learnt apart: by the query's
 * terms in the segment (1-2, 3-8, 9-32, more) and by the log2 of their
 * postings (below 2^12, then one class per power of two up to 2^26 and
 * more).  Classes of fewer than 2^12 postings are not learnt: MaxScore
 * scores them (the kernels differ there by microseconds).
 */
#define SPM_MS_TERM_CLASSES	4
#define SPM_MS_SIZE_CLASSES	16

/* what the policy has learnt of MaxScore on one query class */
typedef struct SpmMsCell
{
	bool		known;			/* share measured at least once */
	uint8		fails;			/* runs in a row it saved too little */
	uint8		skip;			/* queries of the class left that go
								 * exhaustive before MaxScore runs again */
	float		share;			/* moving average of the share of the query
								 * terms' postings it decoded */
} SpmMsCell;

/*
 * What the policy remembers of one segment in this backend, in the
 * segment's cache entry (SpmSegment.backoff; zero when first cached).
 */
typedef struct SpmBackoff
{
	uint32		fails;			/* rounds in a row range pruning gave up */
	uint32		skip;			/* rounds left that go to MaxScore */

	/* under auto, what MaxScore decodes, by query class */
	SpmMsCell	ms[SPM_MS_TERM_CLASSES][SPM_MS_SIZE_CLASSES];
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
	int			nterms;			/* query terms the segment has */
	double		ndocs;			/* documents the segment has */
	double		postings;		/* their postings in the segment */
	double		nranges;		/* the segment's ranges (with range data) */
	SpmBackoff *backoff;		/* the segment's */

	/* outputs, set by spm_policy_choose */
	SpmRun		run;
	double		fallback_cost;	/* RANGES: SpmRangeScan.fallback_cost (0 =
								 * never give up) */
	double		estimate;		/* postings the chosen kernel is expected to
								 * decode (for RANGES: the most it may cost,
								 * in postings, before it gives up) */
	SpmMsCell  *cell;			/* the query's class (NULL: not learnt) */
} SpmPolicy;

extern SpmRun spm_policy_choose(SpmPolicy *p);
extern void spm_policy_ranges_done(SpmPolicy *p, bool finished);
extern void spm_policy_maxscore_done(SpmPolicy *p, double decoded);

#endif							/* SPMPOLICY_H */

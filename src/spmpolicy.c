/*-------------------------------------------------------------------------
 *
 * spmpolicy.c
 *	  The choice of algorithm per segment and query (see spmpolicy.h).
 *
 * No buffer manager, no kernel: a function of SpmPolicy alone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "spmblock.h"
#include "spmpolicy.h"

/*
 * The unit costs of the model, in one table: each in units of one posting
 * decoded and accumulated by the exhaustive kernel (about 1.5 ns here).
 * Measured per query on the real-text tier (bench/policyfit.sh: 450
 * keyword and expansion queries, each timed under maxscore and
 * exhaustive, a least-squares fit of the time on the postings decoded and
 * the query terms; doc/decisions.md "A cost model per query (issue 37)"),
 * and agreeing with the kernel benchmark's per-posting instruction counts
 * (bench/kernel.sh: MaxScore 2-4% more per posting where it prunes
 * nothing).
 */
typedef struct SpmUnitCosts
{
	double		posting_exhaustive; /* the unit */
	double		posting_maxscore;	/* a posting MaxScore decodes */
	double		term_window_exhaustive; /* a query term in a window of
										 * SPM_WINDOW documents (its cursor,
										 * its bound, its blocks' seeks) */
	double		term_window_maxscore;	/* the same under MaxScore, which
										 * also orders and partitions the
										 * terms by their window bounds */
	double		range_bound;	/* the range kernel's bound pass and
								 * bucketing, per range of the segment */
	double		range_element;	/* a forward-copy element the range kernel
								 * scores */
} SpmUnitCosts;

static const SpmUnitCosts spm_costs = {
	.posting_exhaustive = 1.0,
	.posting_maxscore = 1.04,
	.term_window_exhaustive = 86,
	.term_window_maxscore = 135,

	/*
	 * Not fitted: range pruning is tried only where the query terms hold at
	 * least two postings per range of the segment, since its bound pass
	 * costs something per range while the other kernels cost per posting,
	 * so that for a short query over a wide segment the ranges would be a
	 * cost that grows with the segment, not with the query
	 * (doc/decisions.md "Sparse windows"); and it gives up where the
	 * documents it would still score hold more forward-copy elements than
	 * the exhaustive kernel's postings ("Range pruning in the index").
	 */
	.range_bound = 2.0,
	.range_element = 1.0,
};

/*
 * Range pruning's backoff: after g give-ups in a row (g >= 2), the next
 * 2^(g-1) - 1 rounds of the segment skip it, at most 2^SPM_RANGE_BACKOFF
 * - 1.  A single give-up skips nothing: where range data pays, a query
 * that gives up says nothing of the next one (on the bench's topical 1M, 2%
 * of the queries give up, and the query after each, sent to MaxScore,
 * took 2-4 times what range pruning takes; doc/decisions.md "The range
 * backoff waits for a second give-up").
 */
#define SPM_RANGE_BACKOFF	6

/*
 * Learning MaxScore's share: the moving average moves by 1/SPM_MS_WEIGHT
 * of each run; where the model prefers the exhaustive kernel, MaxScore
 * runs again after 1, 3, 7 .. 63 queries of the class (after 1 .. 6 such
 * choices in a row), so a class whose share falls gets MaxScore back.
 */
#define SPM_MS_WEIGHT		4
#define SPM_MS_MIN_LOG2		12
#define SPM_MS_BACKOFF		6

/* the class of a query of nterms terms and postings postings (NULL: none) */
static SpmMsCell *
ms_cell(SpmBackoff *b, int nterms, double postings)
{
	int			tc,
				sc;

	if (postings < (double) (1 << SPM_MS_MIN_LOG2) || nterms <= 0)
		return NULL;
	tc = nterms <= 2 ? 0 : nterms <= 8 ? 1 : nterms <= 32 ? 2 : 3;
	sc = (int) floor(log2(postings)) - SPM_MS_MIN_LOG2 + 1;
	sc = Min(sc, SPM_MS_SIZE_CLASSES - 1);
	return &b->ms[tc][sc];
}

/* windows of SPM_WINDOW documents the segment has */
static double
windows(double ndocs)
{
	return Max(1.0, ceil(ndocs / SPM_WINDOW));
}

/* the exhaustive kernel's estimated cost */
static double
cost_exhaustive(const SpmPolicy *p)
{
	return p->postings * spm_costs.posting_exhaustive +
		p->nterms * windows(p->ndocs) * spm_costs.term_window_exhaustive;
}

/* MaxScore's, if it decodes share of the postings */
static double
cost_maxscore(const SpmPolicy *p, double share)
{
	return share * p->postings * spm_costs.posting_maxscore +
		p->nterms * windows(p->ndocs) * spm_costs.term_window_maxscore;
}

/*
 * Choose what scores the segment; sets p->run, p->estimate and
 * p->fallback_cost and returns p->run.
 *
 * A segment that range pruning keeps giving up on (a corpus whose bounds
 * do not prune) is left to the other kernels for 1, 3, 7 .. 63 rounds
 * after 2, 3, 4 .. 7 give-ups in a row, then tried again; such a round
 * counts down p->backoff.
 */
SpmRun
spm_policy_choose(SpmPolicy *p)
{
	bool		auto_ = p->algorithm == SPM_ALG_AUTO;
	double		exh = cost_exhaustive(p);
	double		decode_exhaustive = p->postings * spm_costs.posting_exhaustive;
	SpmMsCell  *c;

	p->fallback_cost = 0;
	p->estimate = p->postings;
	p->cell = NULL;
	if (p->algorithm == SPM_ALG_EXHAUSTIVE || p->all_rows)
		return p->run = SPM_RUN_EXHAUSTIVE;
	if ((auto_ || p->algorithm == SPM_ALG_RANGES) && p->ranges_data)
	{
		if (auto_ && p->backoff->skip > 0)
			p->backoff->skip--;
		else if (p->ranges_usable &&
				 (!auto_ ||
				  p->nranges * spm_costs.range_bound <= decode_exhaustive))
		{
			/*
			 * Priced against the exhaustive kernel's decoding alone: the
			 * range kernel has per-term costs too, which are not fitted.
			 * It gives up beyond that price, counted in elements.
			 */
			if (auto_)
				p->fallback_cost = decode_exhaustive / spm_costs.range_element;
			return p->run = SPM_RUN_RANGES;
		}
	}
	p->run = SPM_RUN_MAXSCORE;
	if (!auto_)
		return p->run;

	/*
	 * auto: MaxScore where the class has not been measured yet, or its
	 * measured share makes it the cheaper kernel; else exhaustive, but
	 * MaxScore now and then to measure again (spm_policy_maxscore_done
	 * sets the skip).
	 */
	c = ms_cell(p->backoff, p->nterms, p->postings);
	p->cell = c;
	if (c == NULL || !c->known)
		return p->run;
	if (c->skip > 0 && cost_maxscore(p, c->share) >= exh)
	{
		c->skip--;
		return p->run = SPM_RUN_EXHAUSTIVE;
	}
	p->estimate = c->share * p->postings;
	return p->run;
}

/*
 * After a MaxScore run that spm_policy_choose chose under auto (not one
 * after range pruning gave up): decoded is the postings it decoded.
 */
void
spm_policy_maxscore_done(SpmPolicy *p, double decoded)
{
	SpmMsCell  *c = p->cell;
	float		share;

	if (c == NULL || p->postings <= 0)
		return;
	share = (float) Min(decoded / p->postings, 1.0);
	if (!c->known)
		c->share = share;
	else
		c->share += (share - c->share) / SPM_MS_WEIGHT;
	c->known = true;
	if (cost_maxscore(p, c->share) >= cost_exhaustive(p))
	{
		/* the skip doubles while the exhaustive kernel stays cheaper */
		c->fails = Min(c->fails + 1, SPM_MS_BACKOFF);
		c->skip = (uint8) ((1 << c->fails) - 1);
	}
	else
		c->fails = c->skip = 0;
}

/*
 * After a RANGES run: finished is false if the kernel gave up (MaxScore
 * then scores the segment).  One round that finishes starts the count of
 * give-ups afresh.
 */
void
spm_policy_ranges_done(SpmPolicy *p, bool finished)
{
	SpmBackoff *b = p->backoff;

	if (p->algorithm != SPM_ALG_AUTO)
		return;
	if (finished)
		b->fails = 0;
	else
	{
		b->fails = Min(b->fails + 1, SPM_RANGE_BACKOFF + 1);
		b->skip = ((uint32) 1 << (b->fails - 1)) - 1;
	}
}

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

#include "spmpolicy.h"

/*
 * Under auto, range pruning gives up on a segment (and MaxScore takes it)
 * when the documents it would still score hold more forward-copy elements
 * than this many times the postings of the query terms (see "Range
 * pruning in the index" in doc/decisions.md for the measurements behind
 * it).
 */
#define SPM_RANGE_FALLBACK	1.0

/*
 * Under auto, range pruning is not tried on a segment whose query terms
 * hold fewer than this many postings per range: its bound pass and the
 * bucketing of the ranges cost something per range of the segment, the
 * other kernels only per posting, so for a short query over a wide
 * segment the ranges would be a cost that grows with the segment, not
 * with the query (doc/decisions.md "Sparse windows").
 */
#define SPM_RANGE_MIN_POSTINGS	2.0

/* at most 2^SPM_RANGE_BACKOFF - 1 rounds skipped after give-ups in a row */
#define SPM_RANGE_BACKOFF	6

/*
 * Under auto, a segment where MaxScore decodes on average at least this
 * share of the query terms' postings goes to the exhaustive kernel: the
 * same postings without MaxScore's window plans and probes, which cost
 * about 3% of a query where they save nothing (callgrind on the bench's
 * flat corpus, doc/decisions.md "MaxScore where it saves (issue 37)").
 * The average moves by 1/SPM_MS_WEIGHT of each run; segments whose query
 * terms hold fewer than SPM_MS_MIN_POSTINGS postings are not measured.
 * MaxScore runs again after 1, 3, 7 .. 63 exhaustive rounds (the share is
 * measured only by running it), and one run that saves enough brings the
 * average down and MaxScore back.
 */
#define SPM_MS_USELESS		0.97
#define SPM_MS_WEIGHT		4
#define SPM_MS_MIN_POSTINGS	4096
#define SPM_MS_BACKOFF		6

/*
 * Choose what scores the segment; sets p->run and p->fallback_cost and
 * returns p->run.  A segment that range pruning keeps giving up on (a
 * corpus whose bounds do not prune) is left to MaxScore for 1, 3, 7 .. 63
 * rounds after 1, 2, 3 .. 6 give-ups in a row, then tried again; such a
 * round counts down p->backoff.
 */
SpmRun
spm_policy_choose(SpmPolicy *p)
{
	bool		auto_ = p->algorithm == SPM_ALG_AUTO;

	p->fallback_cost = 0;
	if (p->algorithm == SPM_ALG_EXHAUSTIVE || p->all_rows)
		p->run = SPM_RUN_EXHAUSTIVE;
	else if (!(auto_ || p->algorithm == SPM_ALG_RANGES) || !p->ranges_data)
		p->run = SPM_RUN_MAXSCORE;
	else if (auto_ && p->backoff->skip > 0)
	{
		p->backoff->skip--;
		p->run = SPM_RUN_MAXSCORE;
	}
	else if (!p->ranges_usable)
		p->run = SPM_RUN_MAXSCORE;
	else if (auto_ && p->postings < SPM_RANGE_MIN_POSTINGS * p->nranges)
		p->run = SPM_RUN_MAXSCORE;
	else
	{
		p->run = SPM_RUN_RANGES;
		if (auto_)
			p->fallback_cost = p->postings * SPM_RANGE_FALLBACK;
	}
	if (p->run == SPM_RUN_MAXSCORE && auto_ && p->backoff->ms_skip > 0)
	{
		p->backoff->ms_skip--;
		p->run = SPM_RUN_EXHAUSTIVE;
	}
	return p->run;
}

/*
 * After a MaxScore run under auto (also one after range pruning gave up):
 * decoded is the postings it decoded.
 */
void
spm_policy_maxscore_done(SpmPolicy *p, double decoded)
{
	SpmBackoff *b = p->backoff;
	float		share;

	if (p->algorithm != SPM_ALG_AUTO || p->postings < SPM_MS_MIN_POSTINGS)
		return;
	share = (float) Min(decoded / p->postings, 1.0);
	if (!b->ms_known)
		b->ms_share = share;
	else
		b->ms_share += (share - b->ms_share) / SPM_MS_WEIGHT;
	b->ms_known = true;
	if (b->ms_share >= SPM_MS_USELESS)
	{
		b->ms_fails = Min(b->ms_fails + 1, SPM_MS_BACKOFF);
		b->ms_skip = ((uint32) 1 << b->ms_fails) - 1;
	}
	else
		b->ms_fails = 0;
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
		b->fails = Min(b->fails + 1, SPM_RANGE_BACKOFF);
		b->skip = ((uint32) 1 << b->fails) - 1;
	}
}

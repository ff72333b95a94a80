/*-------------------------------------------------------------------------
 *
 * spmcost.c
 *	  amcostestimate for sparse_maxscore.
 *
 * An ordering scan returns every row, so the selectivity is 1; what makes
 * it attractive under a LIMIT is a low startup cost: the first round reads
 * the query terms' posting lists and nothing else.  The planner charges a
 * LIMIT n plan startup + (total - startup) * n / rows, against a
 * sequential scan that must evaluate <#> on every row before its top-N
 * sort can return anything.
 *
 *	startup = postings * cpu_operator_cost / 10		(decode + accumulate)
 *			+ posting and skip pages * random_page_cost
 *			+ query terms * 4 * cpu_operator_cost	(dictionary probes)
 *	total	= startup + every other posting + every index page
 *			  + rows * cpu_index_tuple_cost
 *
 * postings is the exact sum of the query terms' document frequencies when
 * the query is a constant (the dictionaries are cached per backend), and
 * otherwise 40 terms of the df-weighted mean document frequency.  Without
 * an ORDER BY the index is useless and costs infinity, as in pgvector.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/relation.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/float.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "spm.h"
#include "spmsegment.h"
#include "spmblock.h"

#define SPM_GENERIC_QUERY_TERMS 40
/* bytes a query term's posting takes in its blocks (see below) */
#define SPM_COST_POSTING_BYTES 2.5

/* sum of the document frequencies of the query's terms, over segments */
static double
query_postings(Relation index, const SpmMetaPageData *meta, SparseVector *q)
{
	double		sum = 0;

	SpmCacheNewRound();
	for (uint32 s = 0; s < meta->nsegments; s++)
	{
		SpmSegment *seg = SpmGetSegment(index, meta, (int) s);

		for (int i = 0; i < q->nnz; i++)
		{
			SpmDictEntry e;

			if (SpmLookupTerm(index, seg, (uint32) q->indices[i], &e))
				sum += e.df;
		}
	}
	return sum;
}

void
spmcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	GenericCosts costs;
	Relation	index;
	SpmMetaPageData meta;
	double		npostings;
	double		postings;
	double		nterms;
	double		pages;
	Node	   *arg;

	if (path->indexorderbys == NIL)
	{
		*indexStartupCost = get_float8_infinity();
		*indexTotalCost = get_float8_infinity();
		*indexSelectivity = 0;
		*indexCorrelation = 0;
		*indexPages = 0;
#if PG_VERSION_NUM >= 180000

		/*
		 * From 18 on the planner compares disabled nodes before costs, and a
		 * seq scan under enable_seqscan = off is one: an infinite cost alone
		 * would win against it (a partial index offers such a path).  Two
		 * more than any other path of the relation can have.
		 */
		path->path.disabled_nodes += 2;
#endif
		return;
	}

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	index = index_open(path->indexinfo->indexoid, NoLock);
	SpmReadMeta(index, &meta);
	npostings = (double) meta.pending_npostings;
	for (uint32 s = 0; s < meta.nsegments; s++)
		npostings += (double) meta.segments[s].npostings;

	arg = get_rightop((Expr *) linitial(path->indexorderbys));
	if (arg && IsA(arg, Const) && !((Const *) arg)->constisnull)
	{
		SparseVector *q = DatumGetSparseVectorP(((Const *) arg)->constvalue);

		postings = query_postings(index, &meta, q);
		nterms = q->nnz;
	}
	else
	{
		double		sum_df2 = 0;
		double		mean_df;

		for (uint32 s = 0; s < meta.nsegments; s++)
			sum_df2 += meta.segments[s].sum_df_squared;
		mean_df = npostings > 0 ? sum_df2 / npostings : 0;

		nterms = SPM_GENERIC_QUERY_TERMS;
		postings = Min(npostings, nterms * mean_df);
	}
	index_close(index, NoLock);

	/*
	 * Format 5 (quantized weights, the default): a full block of a query
	 * term is its 12-byte header, bit-packed docid deltas (about a byte a
	 * posting) and one code byte a posting, about 2.5 bytes a posting; its
	 * skip entry adds 20 bytes per block (doc/decisions.md "Quantized
	 * weights": the whole index takes 2.5 bytes a posting on the synthetic
	 * 1M corpus, 4.4 on real text, where most terms are one short block).
	 * Segments with range data keep float4 weights, about twice that.
	 */
	pages = ceil(postings * (SPM_COST_POSTING_BYTES +
							 20.0 / SPM_BLOCK_POSTINGS) / BLCKSZ) + 1;

	costs.indexStartupCost = postings * cpu_operator_cost / 10 +
		pages * costs.spc_random_page_cost +
		nterms * 4 * cpu_operator_cost;
	costs.indexTotalCost = costs.indexStartupCost +
		Max(npostings - postings, 0) * cpu_operator_cost / 10 +
		costs.numIndexPages * seq_page_cost +
		costs.numIndexTuples * cpu_index_tuple_cost;

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;
	*indexPages = costs.numIndexPages;
}

/*
 * bmpproto.c: a kernel-only prototype of Block-Max Pruning over docid
 * ranges with a forward copy (see bmpproto.h), to measure what issue 8's
 * range pruning could give before the index format gets it.  Not part of
 * the extension; bench_traverse runs it as its "bmp" mode and checks every
 * answer against the exhaustive kernel.
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "port/pg_bitutils.h"
#include "sparsevec.h"
#include "bmpproto.h"
#include "spmrange.h"

#define NBUCKETS	1024

/*
 * Build the range maxima (one byte per term and range where the term
 * occurs, rounded upward relative to the term's largest weight) and the
 * forward copy (per range, its terms in ascending order, each with the
 * offsets and weights of its postings there) from the posting lists.
 */
void
bmp_build(Bmp *b, const UnitTerm *terms, int nterms, uint32 ndocs, int range)
{
	uint32		nr = (ndocs + range - 1) / range;
	uint32	   *tcount = calloc(nr + 1, sizeof(uint32));
	uint32	   *ecount = calloc(nr + 1, sizeof(uint32));
	uint32	   *tfill;
	uint32	   *efill;
	int64		npairs = 0;

	memset(b, 0, sizeof(*b));
	b->range = range;
	b->nranges = nr;
	b->rm_start = calloc(nterms + 1, sizeof(int64));
	b->tmax = calloc(nterms, sizeof(float));

	/* pass 1: pairs per term, terms and postings per range */
	for (int t = 0; t < nterms; t++)
	{
		const UnitTerm *u = &terms[t];
		uint32		last = PG_UINT32_MAX;

		b->rm_start[t] = npairs;
		for (int i = 0; i < u->df; i++)
		{
			uint32		r = u->docs[i] / range;

			if (u->w[i] < 0)
			{
				fprintf(stderr, "bmp prototype: negative weights are not handled\n");
				exit(1);
			}
			b->tmax[t] = Max(b->tmax[t], u->w[i]);
			if (r != last)
			{
				npairs++;
				tcount[r]++;
				last = r;
			}
			ecount[r]++;
		}
	}
	b->rm_start[nterms] = npairs;
	b->npairs = npairs;
	b->rm_range = malloc(npairs * sizeof(uint32));
	b->rm_q = malloc(npairs);

	b->r_tstart = malloc((nr + 1) * sizeof(uint32));
	b->r_estart = malloc((nr + 1) * sizeof(uint32));
	b->r_tstart[0] = b->r_estart[0] = 0;
	for (uint32 r = 0; r < nr; r++)
	{
		b->r_tstart[r + 1] = b->r_tstart[r] + tcount[r];
		b->r_estart[r + 1] = b->r_estart[r] + ecount[r];
	}
	b->f_term = malloc(npairs * sizeof(uint16));
	b->f_first = malloc((npairs + 1) * sizeof(uint32));
	b->e_off = malloc(b->r_estart[nr]);
	b->e_w = malloc((size_t) b->r_estart[nr] * sizeof(float));
	b->npostings = b->r_estart[nr];
	tfill = calloc(nr, sizeof(uint32));
	efill = calloc(nr, sizeof(uint32));

	/* pass 2: fill, terms in ascending order within every range */
	for (int t = 0; t < nterms; t++)
	{
		const UnitTerm *u = &terms[t];
		int64		p = b->rm_start[t] - 1;
		uint32		last = PG_UINT32_MAX;

		for (int i = 0; i < u->df; i++)
		{
			uint32		r = u->docs[i] / range;
			uint32		e = b->r_estart[r] + efill[r]++;

			if (r != last)
			{
				uint32		ti = b->r_tstart[r] + tfill[r]++;

				p++;
				b->rm_range[p] = r;
				b->rm_q[p] = 0;
				b->f_term[ti] = (uint16) t;
				b->f_first[ti] = e;
				last = r;
			}
			/* quantized upward: never below the true maximum */
			{
				int			v = (int) ceil(255.0 * u->w[i] / b->tmax[t]);

				v = Min(Max(v, 1), 255);
				while ((double) b->tmax[t] * v / 255.0 < u->w[i] && v < 255)
					v++;
				if (v > b->rm_q[p])
					b->rm_q[p] = (uint8) v;
			}
			b->e_off[e] = (uint8) (u->docs[i] % range);
			b->e_w[e] = u->w[i];
		}
	}
	b->f_first[npairs] = b->r_estart[nr];


	/* terms in a quarter of the ranges or more: their maxima also dense */
	b->dense = calloc(nterms, sizeof(uint8 *));
	for (int t = 0; t < nterms; t++)
	{
		if (b->rm_start[t + 1] - b->rm_start[t] < nr / 4)
			continue;
		b->dense[t] = calloc(nr, 1);
		for (int64 p = b->rm_start[t]; p < b->rm_start[t + 1]; p++)
			b->dense[t][b->rm_range[p]] = b->rm_q[p];
	}
	b->ub = malloc(nr * sizeof(float));
	b->bucket_of = malloc(nr * sizeof(uint16));
	b->order = malloc(nr * sizeof(uint32));
	b->acc = malloc(range * sizeof(double));
	free(tcount);
	free(ecount);
	free(tfill);
	free(efill);
}

/* the end of range r's entries of its term at ti */
static inline uint32
term_end(const Bmp *b, uint32 ti)
{
	return b->f_first[ti + 1];
}

/*
 * Score range r for the query (terms ascending): every document's score is
 * the sum of its products in ascending term order, as spv_dot adds them.
 */
static void
score_range(Bmp *b, uint32 r, const int32 *qt, const double *qv, int nq,
			SpmTopK *topk, int64 *postings)
{
	uint32		lo = b->r_tstart[r];
	uint32		hi = b->r_tstart[r + 1];
	uint64		touched = 0;
	double	   *acc = b->acc;

	for (int i = 0; i < nq && lo < hi; i++)
	{
		uint16		t = (uint16) qt[i];
		uint32		step = 1;
		uint32		l;
		uint32		h;

		/* gallop from lo to the first term >= t */
		if (b->f_term[lo] < t)
		{
			while (lo + step < hi && b->f_term[lo + step] < t)
				step <<= 1;
			l = lo + (step >> 1) + 1;
			h = Min(lo + step, hi);
			while (l < h)
			{
				uint32		m = (l + h) >> 1;

				if (b->f_term[m] < t)
					l = m + 1;
				else
					h = m;
			}
			lo = l;
		}
		if (lo < hi && b->f_term[lo] == t)
		{
			for (uint32 e = b->f_first[lo]; e < term_end(b, lo); e++)
			{
				uint8		off = b->e_off[e];
				uint64		bit = UINT64CONST(1) << off;

				if (!(touched & bit))
				{
					touched |= bit;
					acc[off] = 0.0;
				}
				acc[off] = spv_score_add(acc[off], qv[i], b->e_w[e]);
			}
			*postings += term_end(b, lo) - b->f_first[lo];
			lo++;
		}
	}
	while (touched)
	{
		int			off = pg_rightmost_one_pos64(touched);

		touched &= touched - 1;
		spm_topk_push(topk, acc[off], (uint64) r * b->range + off, NULL);
	}
}

/*
 * Top k of the query by Block-Max Pruning: range bounds from the maxima,
 * ranges visited in descending bound (bucketed: within a bucket in any
 * order), stopping when the next bucket's largest bound cannot reach the
 * k-th score.  Documents without any query term score 0 and are not
 * offered (the prototype assumes k documents score above 0).
 */
int
bmp_query(Bmp *b, const int32 *qt_in, const float *qv_in, int nq_in,
		  int k, SpmHit *hits, BmpCounters *c)
{
	SpmTopK		topk;
	int32		qt[1024];
	double		qv[1024];
	int			nq = 0;
	double		maxub = 0.0;
	uint32		bcount[NBUCKETS + 1];
	uint32		nlive = 0;

	if (nq_in > 1024)
	{
		fprintf(stderr, "bmp prototype: at most 1024 query terms\n");
		exit(1);
	}
	/* query terms present in the corpus, ascending (the input is sorted) */
	for (int i = 0; i < nq_in; i++)
	{
		if (b->rm_start[qt_in[i] + 1] > b->rm_start[qt_in[i]] && qv_in[i] > 0)
		{
			qt[nq] = qt_in[i];
			qv[nq] = qv_in[i];
			nq++;
		}
		else if (qv_in[i] < 0)
		{
			fprintf(stderr, "bmp prototype: negative query weights are not handled\n");
			exit(1);
		}
	}

	/*
	 * bounds: per range, the sum over terms of q * (quantized maximum), in
	 * float (the comparisons below allow 1e-5 relative for its rounding)
	 */
	memset(b->ub, 0, b->nranges * sizeof(float));
	for (int i = 0; i < nq; i++)
	{
		float		scale = (float) (qv[i] * b->tmax[qt[i]] / 255.0);
		float	   *restrict ub = b->ub;

		if (b->dense[qt[i]])
		{
			spm_range_add_dense(ub, b->dense[qt[i]], scale, b->nranges);
			c->pairs += b->nranges;
		}
		else
		{
			const uint32 *restrict rr = b->rm_range;
			const uint8 *restrict rq = b->rm_q;
			int64		end = b->rm_start[qt[i] + 1];

			for (int64 p = b->rm_start[qt[i]]; p < end; p++)
				ub[rr[p]] += scale * rq[p];
			c->pairs += end - b->rm_start[qt[i]];
		}
	}
	for (uint32 r = 0; r < b->nranges; r++)
		maxub = Max(maxub, b->ub[r]);
	if (maxub <= 0)
		return 0;

	/* bucket the ranges by bound, highest bucket first */
	memset(bcount, 0, sizeof(bcount));
	for (uint32 r = 0; r < b->nranges; r++)
	{
		int			bk = (int) (b->ub[r] / maxub * (NBUCKETS - 1));

		b->bucket_of[r] = (uint16) (NBUCKETS - 1 - bk);
		bcount[NBUCKETS - 1 - bk + 1]++;
	}
	for (int i = 0; i < NBUCKETS; i++)
		bcount[i + 1] += bcount[i];
	for (uint32 r = 0; r < b->nranges; r++)
		b->order[bcount[b->bucket_of[r]]++] = r;

	/* visit */
	spm_topk_init(&topk, k, hits);
	{
		uint32		i = 0;

		while (i < b->nranges)
		{
			uint32		r = b->order[i];
			double		ub = b->ub[r];
			/* the largest bound of this range's bucket and all after it */
			double		bucket_top = maxub * (NBUCKETS - b->bucket_of[r]) / (NBUCKETS - 1);

			if (spm_topk_full(&topk) &&
				bucket_top * (1 + 1e-5) < topk.heap[0].score)
				break;
			/* (a bound of 0: no query term, no document to offer) */
			if (ub > 0 &&
				(!spm_topk_full(&topk) || ub * (1 + 1e-5) >= topk.heap[0].score))
			{
				score_range(b, r, qt, qv, nq, &topk, &c->postings);
				nlive++;
			}
			i++;
		}
	}
	c->ranges += nlive;
	c->queries++;
	spm_topk_sort(&topk);
	return topk.n;
}

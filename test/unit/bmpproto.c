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
#include "spmblock.h"
#include "spmrange.h"

#define NBUCKETS	1024

/* the top 16 bits of w > 0 rounded upward: a bfloat16 not below w */
static uint16
bf16_bits_up(float w)
{
	uint32		u;

	memcpy(&u, &w, sizeof(u));
	if (u & 0xFFFF)
		u = (u | 0xFFFF) + 1;
	return (uint16) (u >> 16);
}

static inline float
bf16_float(uint16 h)
{
	uint32		u = (uint32) h << 16;
	float		w;

	memcpy(&w, &u, sizeof(w));
	return w;
}

/*
 * Build the range maxima (one byte per term and range where the term
 * occurs, rounded upward relative to the term's largest weight) and the
 * forward copy (per range, its terms in ascending order, each with the
 * offsets and weights of its postings there) from the posting lists.
 */
void
bmp_build(Bmp *b, const UnitTerm *terms, const UnitBlocks *blocks, int nterms,
		  uint32 ndocs, int range)
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
	/* the forward copy per document: count, then fill term by term */
	b->ndocs = ndocs;
	b->terms = terms;
	b->blocks = blocks;
	b->d_start = calloc(ndocs + 1, sizeof(int64));
	for (int t = 0; t < nterms; t++)
		for (int i = 0; i < terms[t].df; i++)
			b->d_start[terms[t].docs[i] + 1]++;
	for (uint32 d = 0; d < ndocs; d++)
		b->d_start[d + 1] += b->d_start[d];
	b->d_term = malloc(Max(b->d_start[ndocs], 1) * sizeof(uint16));
	b->d_w = malloc(Max(b->d_start[ndocs], 1) * sizeof(float));
	b->d_w16 = malloc(Max(b->d_start[ndocs], 1) * sizeof(uint16));
	{
		int64	   *fill = malloc((ndocs + 1) * sizeof(int64));

		memcpy(fill, b->d_start, (ndocs + 1) * sizeof(int64));
		for (int t = 0; t < nterms; t++)
		{
			if (t > PG_UINT16_MAX && terms[t].df > 0)
			{
				fprintf(stderr, "bmp prototype: terms above 65535 are not handled\n");
				exit(1);
			}
			for (int i = 0; i < terms[t].df; i++)
			{
				int64		e = fill[terms[t].docs[i]]++;

				b->d_term[e] = (uint16) t;
				b->d_w[e] = terms[t].w[i];
				b->d_w16[e] = bf16_bits_up(terms[t].w[i]);
			}
		}
		free(fill);
	}
	b->filter = malloc(65536 / 8);
	b->qidx = malloc(65536);
	b->pblk = malloc(1024 * sizeof(int));
	b->pdocs = malloc((size_t) 1024 * SPM_BLOCK_POSTINGS * sizeof(uint32));
	b->pw = malloc((size_t) 1024 * SPM_BLOCK_POSTINGS * sizeof(float));

	b->ub = malloc(nr * sizeof(float));
	b->bucket_of = malloc(nr * sizeof(uint16));
	b->order = malloc(nr * sizeof(uint32));
	b->acc = malloc(range * sizeof(double));
	free(tcount);
	free(ecount);
	free(tfill);
	free(efill);
}

/* offer the documents of range r that the scorers touched to the heap */
static void
offer_range(Bmp *b, uint32 r, uint64 touched, SpmTopK *topk)
{
	while (touched)
	{
		int			off = pg_rightmost_one_pos64(touched);

		touched &= touched - 1;
		spm_topk_push(topk, b->acc[off], (uint64) r * b->range + off, NULL);
	}
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
	offer_range(b, r, touched, topk);
}

/*
 * The position of term t among the query's terms, or -1: the filter, then
 * the table for the terms that pass it (BMP_SCORE_DOCS*).
 */
static inline int
query_pos(const Bmp *b, uint16 t)
{
	if (!((b->filter[t >> 6] >> (t & 63)) & 1))
		return -1;
	return (int) b->qidx[t] - 1;
}

/*
 * Score range r from the per-document forward copy, as spmrange.c's
 * score_range does: every element of every document of the range, a
 * filter test, a table lookup for those that pass, the products added in
 * the document's (ascending) term order.
 */
static void
score_range_docs(Bmp *b, uint32 r, const double *qv, SpmTopK *topk,
				 BmpCounters *c)
{
	uint32		lo = r * b->range;
	uint32		hi = Min(lo + b->range, b->ndocs);

	for (uint32 d = lo; d < hi; d++)
	{
		double		score = 0.0;

		for (int64 e = b->d_start[d]; e < b->d_start[d + 1]; e++)
		{
			int			j = query_pos(b, b->d_term[e]);

			if (j >= 0)
				score = spv_score_add(score, qv[j], b->d_w[e]);
		}
		c->postings += b->d_start[d + 1] - b->d_start[d];
		if (score > 0)
			spm_topk_push(topk, score, d, NULL);
	}
}

/* the first i < n with a[i] >= x (a ascending), or n */
static int
first_at_least(const uint32 *a, int n, uint32 x)
{
	int			l = 0;
	int			h = n;

	while (l < h)
	{
		int			m = (l + h) >> 1;

		if (a[m] < x)
			l = m + 1;
		else
			h = m;
	}
	return l;
}

/*
 * Block bl of query term i (postings u) decoded into the term's slot of
 * pdocs and pw, unless it is the block the term decoded last.
 */
static void
decode_term_block(Bmp *b, int i, const UnitTerm *u, int bl, BmpCounters *c)
{
	if (b->pblk[i] == bl)
		return;
	if (!spm_block_decode(b->blocks->enc[u->blkno[bl]], SPM_BLOCK_MAX_BYTES,
						  u->count[bl], u->last[bl],
						  b->pdocs + (size_t) i * SPM_BLOCK_POSTINGS,
						  b->pw + (size_t) i * SPM_BLOCK_POSTINGS))
	{
		fprintf(stderr, "corrupt block\n");
		abort();
	}
	b->pblk[i] = bl;
	c->blocks++;
	c->postings += u->count[bl];
}

/*
 * The exact weight of query term i (term t) in document d, which has it:
 * from the term's posting block that holds d (binary search of the last
 * docids), decoded unless it is the block the term decoded last.
 */
static float
posting_weight(Bmp *b, int i, int32 t, uint32 d, BmpCounters *c)
{
	const UnitTerm *u = &b->terms[t];
	uint32	   *docs = b->pdocs + (size_t) i * SPM_BLOCK_POSTINGS;
	int			bl = first_at_least(u->last, u->nblocks, d);
	int			p;

	if (bl < u->nblocks)
	{
		decode_term_block(b, i, u, bl, c);
		p = first_at_least(docs, u->count[bl], d);
		if (p < u->count[bl] && docs[p] == d)
			return b->pw[(size_t) i * SPM_BLOCK_POSTINGS + p];
	}
	fprintf(stderr, "bmp prototype: document %u not in the postings of term %d\n", d, t);
	abort();
}

/* would a document whose score is at most ub reach the heap? */
static inline bool
may_enter(const SpmTopK *topk, double ub)
{
	return !spm_topk_full(topk) || ub * (1 + 1e-6) >= topk->heap[0].score;
}

/*
 * Score range r from a forward copy whose weights are bfloat16 upper
 * bounds (with q8, levels of 255 per term instead, as the range maxima
 * have them, computed here from the weights: then only the count of exact
 * scores means something, not the time).  A document's bound is the sum
 * of q times those, each product at least the exact one, so the sum is at
 * least the exact score up to rounding, which the 1e-6 of may_enter
 * covers many times over.  Only a document whose bound reaches the k-th
 * score (or any while the heap is not full) gets its exact score: its
 * matching query terms' weights from the posting blocks, added in the
 * document's (ascending) term order.
 */
static void
score_range_docs_bf16(Bmp *b, uint32 r, const int32 *qt, const double *qv,
					  bool q8, SpmTopK *topk, BmpCounters *c)
{
	uint32		lo = r * b->range;
	uint32		hi = Min(lo + b->range, b->ndocs);
	int			match[1024];

	for (uint32 d = lo; d < hi; d++)
	{
		double		ub = 0.0;
		int			nm = 0;

		for (int64 e = b->d_start[d]; e < b->d_start[d + 1]; e++)
		{
			uint16		t = b->d_term[e];
			int			j = query_pos(b, t);

			if (j < 0)
				continue;
			if (q8)
				ub += qv[j] * spm_range_level(b->d_w[e], b->tmax[t]) *
					(double) b->tmax[t] / 255.0;
			else
				ub += qv[j] * bf16_float(b->d_w16[e]);
			match[nm++] = j;
		}
		c->postings += b->d_start[d + 1] - b->d_start[d];
		c->docs++;
		if (nm > 0 && may_enter(topk, ub))
		{
			double		score = 0.0;

			for (int m = 0; m < nm; m++)
				score = spv_score_add(score, qv[match[m]],
									  posting_weight(b, match[m], qt[match[m]], d, c));
			c->exact++;
			spm_topk_push(topk, score, d, NULL);
		}
	}
}

/*
 * Score range r from the query terms' posting blocks: for each query term
 * in ascending order that may have a posting in the range (a dense term
 * whose level there is 0 has none), the first block whose last docid
 * reaches the range (binary search), decoded unless it is the block this
 * term decoded last, then its postings inside the range, and the next
 * block while the range goes on.  Term-at-a-time in ascending term order
 * adds each document's products in that order: the canonical score.
 */
static void
score_range_postings(Bmp *b, uint32 r, const int32 *qt, const double *qv,
					 int nq, SpmTopK *topk, BmpCounters *c)
{
	uint32		lo = r * b->range;
	uint32		hi = Min(lo + b->range, b->ndocs);
	uint64		touched = 0;
	double	   *acc = b->acc;

	for (int i = 0; i < nq; i++)
	{
		const UnitTerm *u = &b->terms[qt[i]];
		const uint32 *docs = b->pdocs + (size_t) i * SPM_BLOCK_POSTINGS;
		const float *w = b->pw + (size_t) i * SPM_BLOCK_POSTINGS;

		if (b->dense[qt[i]] && b->dense[qt[i]][r] == 0)
			continue;
		/* from the first block whose last docid is >= lo */
		for (int bl = first_at_least(u->last, u->nblocks, lo); bl < u->nblocks; bl++)
		{
			int			n = u->count[bl];

			decode_term_block(b, i, u, bl, c);
			for (int j = first_at_least(docs, n, lo); j < n && docs[j] < hi; j++)
			{
				uint32		off = docs[j] - lo;
				uint64		bit = UINT64CONST(1) << off;

				if (!(touched & bit))
				{
					touched |= bit;
					acc[off] = 0.0;
				}
				acc[off] = spv_score_add(acc[off], qv[i], w[j]);
			}
			if (u->last[bl] >= hi - 1)
				break;
		}
	}
	offer_range(b, r, touched, topk);
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
		  int k, BmpScorer scorer, SpmHit *hits, BmpCounters *c)
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

	/* the scorers' per-query state */
	if (scorer == BMP_SCORE_DOCS || scorer == BMP_SCORE_DOCS_BF16 ||
		scorer == BMP_SCORE_DOCS_Q8)
	{
		if (nq > 255)
		{
			fprintf(stderr, "bmp prototype: at most 255 query terms with the document scorers\n");
			exit(1);
		}
		memset(b->filter, 0, 65536 / 8);
		memset(b->qidx, 0, 65536);
		for (int i = 0; i < nq; i++)
		{
			b->filter[qt[i] >> 6] |= UINT64CONST(1) << (qt[i] & 63);
			b->qidx[qt[i]] = (uint8) (i + 1);
		}
	}
	for (int i = 0; i < nq; i++)
		b->pblk[i] = -1;

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
				if (scorer == BMP_SCORE_RANGE)
					score_range(b, r, qt, qv, nq, &topk, &c->postings);
				else if (scorer == BMP_SCORE_DOCS)
					score_range_docs(b, r, qv, &topk, c);
				else if (scorer == BMP_SCORE_POSTINGS)
					score_range_postings(b, r, qt, qv, nq, &topk, c);
				else
					score_range_docs_bf16(b, r, qt, qv,
										  scorer == BMP_SCORE_DOCS_Q8, &topk, c);
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

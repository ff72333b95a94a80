/*-------------------------------------------------------------------------
 *
 * spmrange.c
 *	  Exact top-k of one segment by range pruning (see spmrange.h and
 *	  src/README "Ranges").
 *
 * A query adds, for each of its terms, q * (the term's level in the
 * range) * max_w / 255 into a float bound per range: one pass over a byte
 * per range for terms in many ranges (vectorized), one entry per range the
 * term is in for the others.  The ranges are then bucketed by bound
 * (NBUCKETS buckets of equal width, no sort) and scored from the highest
 * bucket down, each document from its forward copy, until a bucket's
 * largest bound, with the rounding margin, cannot reach the k-th score.
 * doc/decisions.md "Range pruning in the index" has the measurements.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SPM_AVX2_TARGET 1
#endif

#include "miscadmin.h"
#include "sparsevec.h"
#include "spmrange.h"
#include "spmtest.h"

#define NBUCKETS	1024

/*
 * The cost of the ranges left is estimated every SPM_RANGE_CHECK_EVERY
 * ranges scored, once the elements read reach SPM_RANGE_PROBE of the
 * caller's fallback cost (before, the k-th score is too low to say).
 */
#define SPM_RANGE_CHECK_EVERY	8
#define SPM_RANGE_PROBE			0.05

/*
 * Before scoring anything, give up at once when the ranges whose bound
 * reaches half the largest bound hold more than SPM_RANGE_EARLY times the
 * caller's fallback cost in elements: on the bench's corpora that ratio
 * stayed well below it where range pruning pays, and was above it for
 * most queries where it does not (doc/decisions.md "Giving up before
 * scoring").
 */
#define SPM_RANGE_EARLY			3.0

/* the bound of level 1 of term t for the query: q * max_w / 255 */
static double
level_unit(const SpmRangeTerm *t)
{
	return t->q * (double) t->max_w / 255.0;
}

bool
spm_range_usable(const SpmRangeTerm *terms, int nterms)
{
	for (int i = 0; i < nterms; i++)
	{
		double		u = level_unit(&terms[i]);

		/*
		 * The bound of one term in one range is up to 255 units, and a
		 * range's bound sums nterms of them: keep both normal floats.
		 */
		if (!(terms[i].q > 0) || !(terms[i].max_w > 0) ||
			!(u >= 1e-30) || !(u <= 1e30 / Max(nterms, 1)))
			return false;
	}
	return true;
}

/*
 * Whether spm_range_add_dense and score_doc16 may use AVX2 where the CPU
 * has it (the default); the unit tests clear it to check the SSE2 and
 * scalar loops too (spmtest.h).
 */
static bool use_avx2 = true;

void
spm_test_range_avx2(bool use)
{
	use_avx2 = use;
}

static void add_dense_sse2(float *restrict ub, const uint8 *restrict d,
						   float scale, uint32 n);

#ifdef SPM_AVX2_TARGET
/*
 * The loop below with 8 lanes: a byte is widened to int32 and converted,
 * multiplied by the scale and added, in separate instructions (the
 * target has no FMA), so every lane computes the scalar loop's float
 * product and sum.  Half the instructions of the SSE2 loop per range.
 */
__attribute__((target("avx2")))
static void
add_dense_avx2(float *restrict ub, const uint8 *restrict d, float scale,
			   uint32 n)
{
	uint32		r = 0;
	const __m256 s = _mm256_set1_ps(scale);

	for (; r + 16 <= n; r += 16)
	{
		__m128i		b = _mm_loadu_si128((const __m128i *) (d + r));
		__m256		w0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
		__m256		w1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(b, 8)));

		_mm256_storeu_ps(ub + r, _mm256_add_ps(_mm256_loadu_ps(ub + r),
											   _mm256_mul_ps(s, w0)));
		_mm256_storeu_ps(ub + r + 8, _mm256_add_ps(_mm256_loadu_ps(ub + r + 8),
												   _mm256_mul_ps(s, w1)));
	}
	for (; r < n; r++)
		ub[r] += scale * d[r];
}

/* does the CPU (and the OS, for the YMM registers) support AVX2? */
static bool
have_avx2(void)
{
	static int	have = -1;

	if (have < 0)
	{
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx2") ? 1 : 0;
	}
	return have == 1;
}
#endif

/*
 * ub[r] += scale * d[r] for n ranges.  GCC vectorizes the plain loop only
 * at -O3, and PostgreSQL builds at -O2, so it is written with SSE2 (every
 * x86-64 has it), or AVX2 when the CPU has it: the same products and sums
 * as the scalar loop.
 */
void
spm_range_add_dense(float *restrict ub, const uint8 *restrict d, float scale,
					uint32 n)
{
#ifdef SPM_AVX2_TARGET
	if (use_avx2 && have_avx2())
		add_dense_avx2(ub, d, scale, n);
	else
#endif
		add_dense_sse2(ub, d, scale, n);
}

static void
add_dense_sse2(float *restrict ub, const uint8 *restrict d, float scale,
			   uint32 n)
{
	uint32		r = 0;

#ifdef __SSE2__
	const __m128 s = _mm_set1_ps(scale);
	const __m128i zero = _mm_setzero_si128();

	for (; r + 16 <= n; r += 16)
	{
		__m128i		b = _mm_loadu_si128((const __m128i *) (d + r));
		__m128i		lo = _mm_unpacklo_epi8(b, zero);
		__m128i		hi = _mm_unpackhi_epi8(b, zero);
		__m128i		w[4];

		w[0] = _mm_unpacklo_epi16(lo, zero);
		w[1] = _mm_unpackhi_epi16(lo, zero);
		w[2] = _mm_unpacklo_epi16(hi, zero);
		w[3] = _mm_unpackhi_epi16(hi, zero);
		for (int j = 0; j < 4; j++)
			_mm_storeu_ps(ub + r + 4 * j,
						  _mm_add_ps(_mm_loadu_ps(ub + r + 4 * j),
									 _mm_mul_ps(s, _mm_cvtepi32_ps(w[j]))));
	}
#endif
	for (; r < n; r++)
		ub[r] += scale * d[r];
}

/*
 * The largest of ub[0 .. n), all finite and not negative.
 */
static float
max_bound(const float *ub, uint32 n)
{
	uint32		r = 0;
	float		m = 0.0f;

#ifdef __SSE2__
	__m128		v[4];
	float		lane[4];

	for (int j = 0; j < 4; j++)
		v[j] = _mm_setzero_ps();
	for (; r + 16 <= n; r += 16)
		for (int j = 0; j < 4; j++)
			v[j] = _mm_max_ps(v[j], _mm_loadu_ps(ub + r + 4 * j));
	v[0] = _mm_max_ps(_mm_max_ps(v[0], v[1]), _mm_max_ps(v[2], v[3]));
	_mm_storeu_ps(lane, v[0]);
	m = Max(Max(lane[0], lane[1]), Max(lane[2], lane[3]));
#endif
	for (; r < n; r++)
		m = Max(m, ub[r]);
	return m;
}

/*
 * The bucket of a positive bound u: NBUCKETS - 1 - floor(u * bscale),
 * clamped to [0, NBUCKETS - 1], where bscale = (NBUCKETS - 1) / the
 * largest bound.  A product by a positive constant is monotone in u, so
 * a larger bound never gets a later bucket (what the visit relies on).
 */
static inline int
bucket_of(float u, float bscale)
{
	float		x = u * bscale;
	int			b = x >= (float) (NBUCKETS - 1) ? NBUCKETS - 1 : (int) x;

	return NBUCKETS - 1 - b;
}

/*
 * bucket[r] = bucket_of(ub[r]) for r < n, or NBUCKETS where ub[r] is 0 (no
 * query term in the range: no positive score).  The SSE2 loop computes
 * the same: truncation is floor for the non-negative products.
 */
static void
set_buckets(const float *ub, uint32 n, float bscale, uint16 *bucket)
{
	uint32		r = 0;

#ifdef __SSE2__
	const __m128 sc = _mm_set1_ps(bscale);
	const __m128 top = _mm_set1_ps((float) (NBUCKETS - 1));
	const __m128 zero = _mm_setzero_ps();
	const __m128i last = _mm_set1_epi32(NBUCKETS - 1);
	const __m128i none = _mm_set1_epi32(NBUCKETS);

	for (; r + 4 <= n; r += 4)
	{
		__m128		u = _mm_loadu_ps(ub + r);
		__m128		x = _mm_min_ps(_mm_mul_ps(u, sc), top);
		__m128i		b = _mm_sub_epi32(last, _mm_cvttps_epi32(x));
		__m128i		empty = _mm_castps_si128(_mm_cmple_ps(u, zero));

		b = _mm_or_si128(_mm_and_si128(empty, none),
						 _mm_andnot_si128(empty, b));
		_mm_storel_epi64((__m128i *) (bucket + r), _mm_packs_epi32(b, b));
	}
#endif
	for (; r < n; r++)
		bucket[r] = ub[r] > 0.0f ? (uint16) bucket_of(ub[r], bscale) : NBUCKETS;
}

pg_noreturn static void range_corrupt(const SpmRangeScan *s, const char *what);

static void
range_corrupt(const SpmRangeScan *s, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("sparse_maxscore index \"%s\" is corrupted: %s",
					s->relname ? s->relname : "?", what),
			 errhint("REINDEX the index.")));
}

/* add term t's bounds into ub[nranges] */
static void
add_term(SpmRangeScan *s, const SpmRangeTerm *t, float *ub)
{
	double		unit = level_unit(t);
	float		scale = (float) unit;
	uint64		len = t->dense ? (uint64) s->nranges : (uint64) t->nr * 4;
	uint64		pos = 0;
	float		lut[256];

	/* round the unit upward, so that every product is rounded from above */
	if ((double) scale < unit)
		scale = nextafterf(scale, FLT_MAX);
	/* the products of the entries, as the dense pass computes them */
	if (!t->dense)
		for (int l = 0; l < 256; l++)
			lut[l] = scale * (float) l;

	while (pos < len)
	{
		const uint8 *data;
		uint32		n = s->range_data(s->arg, t, pos, &data);

		n = (uint32) Min((uint64) n, len - pos);
		if (t->dense)
			spm_range_add_dense(ub + pos, data, scale, n);
		else
		{
			for (uint32 i = 0; i + 4 <= n; i += 4)
			{
				uint32		e;
				uint32		r;

				memcpy(&e, data + i, sizeof(uint32));
				r = e >> 8;
				if (r >= s->nranges)
					range_corrupt(s, "range maxima name a range beyond the segment");
				ub[r] += lut[e & 255];
			}
			n &= ~3;
			if (n == 0)
				range_corrupt(s, "range maxima entry split across pages");
		}
		pos += n;
	}
}

/*
 * A filter of the query's terms (spv_filter_add, sparsevec.h): a document
 * element whose bit is clear (most of them) costs one load and a test; a
 * set bit is confirmed by qidx or a binary search of the query terms.
 */
#define SPM_FILTER_BITS		SPM_RANGE_FILTER_BITS

/* the query term equal to t, or -1 */
static inline int
find_term(const SpmRangeTerm *qt, int nq, uint32 t)
{
	int			lo = 0;
	int			hi = nq - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) >> 1;

		if (qt[mid].term == t)
			return mid;
		if (qt[mid].term < t)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * Where a query has at most SPM_QIDX_TERMS terms, qidx[t] is 1 + the
 * position of query term t < SPM_FILTER_BITS, 0 for any other t below
 * that: a filter hit is then resolved by one load (from 64 KB, cleared
 * per call) instead of a binary search, whose branches mispredicted.
 */
#define SPM_QIDX_TERMS		255

/*
 * One element (term t, weight w) of a document, after the one whose term
 * was *prev: the score with it added if t is a query term.
 */
static inline double
score_elem(SpmRangeScan *s, const uint64 *filter, const uint8 *qidx,
		   uint32 t, float w, int64 *prev, double score)
{
	if ((int64) t <= *prev)
		range_corrupt(s, "a document of the forward copy is not in ascending term order");
	*prev = t;
	if (spv_filter_has(filter, t))
	{
		int			j = qidx && t < SPM_FILTER_BITS ? (int) qidx[t] - 1 :
			find_term(s->terms, s->nterms, t);

		if (j >= 0)
			score = spv_score_add(score, s->terms[j].q, w);
	}
	return score;
}

/*
 * The weight of element i of a 16-bit document, of query term j: w16[i],
 * or (format 6, w16 NULL) the upper end of its code, exact in float4 as
 * in the block decoder (spmblock.h spm_qupper)
 */
static inline float
elem16_w(const SpmRangeScan *s, const float *w16, const uint8 *c16, int j,
		 int32 i)
{
	if (w16)
		return w16[i];
	return (float) (s->terms[j].qbase + (int32) c16[i]) * s->terms[j].qscale;
}

/*
 * Elements i .. nnz - 1 of a document of a 16-bit forward copy (terms
 * t16[nnz], weights w16[nnz] or codes c16[nnz]) added to score as
 * score_elem adds them;
 * *ok is cleared if a term is not above the one before it.  Every term is
 * below SPM_FILTER_BITS, so a set filter bit is a query term, and qidx
 * (when there is one) names it.
 */
static inline double
score_doc16_from(const SpmRangeScan *s, const uint64 *filter,
				 const uint8 *qidx, const uint16 *t16, const float *w16,
				 const uint8 *c16,
				 int32 i, int32 nnz, double score, bool *ok)
{
	int32		prev = i > 0 ? t16[i - 1] : -1;

	for (; i < nnz; i++)
	{
		int32		t = t16[i];

		*ok &= t > prev;
		prev = t;
		if (spv_filter_has(filter, (uint32) t))
		{
			int			j = qidx ? (int) qidx[t] - 1 :
				find_term(s->terms, s->nterms, (uint32) t);

			if (j >= 0)
				score = spv_score_add(score, s->terms[j].q,
									  elem16_w(s, w16, c16, j, i));
		}
	}
	return score;
}

/*
 * The score of a document of a 16-bit forward copy; *ordered is cleared
 * if its terms do not strictly ascend (the caller reports the corruption).
 */
static double
score_doc16_scalar(const SpmRangeScan *s, const uint64 *filter,
				   const uint8 *qidx, const uint16 *t16, const float *w16,
				   const uint8 *c16, int32 nnz, bool *ordered)
{
	bool		ok = true;
	double		score = score_doc16_from(s, filter, qidx, t16, w16, c16, 0,
										 nnz, 0.0, &ok);

	*ordered = ok;
	return score;
}

#ifdef SPM_AVX2_TARGET
/*
 * score_doc16_scalar eight elements at a time: one gather reads the
 * eight terms' entries of qidx (four bytes from each term's, hence its
 * four bytes of padding), or without qidx their words of the filter; only
 * the query terms among them (few) are added, in ascending lane order, so
 * the additions and their order, and the score's bits, are the scalar
 * loop's.  The order check compares each lane with the next element, so a
 * vector step needs nine elements; score_doc16_from finishes the last few.
 * Gathering qidx beat gathering the filter and then reading qidx per hit
 * (doc/decisions.md "Scoring eight forward-copy elements at a time").
 */
__attribute__((target("avx2")))
static double
score_doc16_avx2(const SpmRangeScan *s, const uint64 *filter,
				 const uint8 *qidx, const uint16 *t16, const float *w16,
				 const uint8 *c16, int32 nnz, bool *ordered)
{
	double		score = 0.0;
	int32		i = 0;
	bool		ok;
	__m256i		bad = _mm256_setzero_si256();
	const __m256i low5 = _mm256_set1_epi32(31);
	const __m256i ones = _mm256_set1_epi32(-1);

	if (qidx)
	{
		/* qidx[t] for eight terms at once: 1 + the query term, or 0 */
		const __m256i lowbyte = _mm256_set1_epi32(0xFF);

		for (; i + 9 <= nnz; i += 8)
		{
			__m256i		a = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) (t16 + i)));
			__m256i		b = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) (t16 + i + 1)));
			__m256i		jv = _mm256_and_si256(_mm256_i32gather_epi32((const int *) qidx, a, 1),
											  lowbyte);
			uint32		m = (uint32) _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(jv, _mm256_setzero_si256())));

			bad = _mm256_or_si256(bad, _mm256_andnot_si256(_mm256_cmpgt_epi32(b, a), ones));
			if (m != 0)
			{
				uint32		jj[8];

				_mm256_storeu_si256((__m256i *) jj, jv);
				do
				{
					int32		l = __builtin_ctz(m);

					score = spv_score_add(score, s->terms[jj[l] - 1].q,
										  elem16_w(s, w16, c16, jj[l] - 1, i + l));
					m &= m - 1;
				} while (m != 0);
			}
		}
	}
	else
	{
		for (; i + 9 <= nnz; i += 8)
		{
			__m256i		a = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) (t16 + i)));
			__m256i		b = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) (t16 + i + 1)));
			__m256i		words = _mm256_i32gather_epi32((const int *) filter,
													   _mm256_srli_epi32(a, 5), 4);
			__m256i		bits = _mm256_srlv_epi32(words, _mm256_and_si256(a, low5));
			uint32		m = (uint32) _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(bits, 31)));

			bad = _mm256_or_si256(bad, _mm256_andnot_si256(_mm256_cmpgt_epi32(b, a), ones));
			while (m != 0)
			{
				int32		l = __builtin_ctz(m);
				int			j = find_term(s->terms, s->nterms, t16[i + l]);

				if (j >= 0)
					score = spv_score_add(score, s->terms[j].q,
										  elem16_w(s, w16, c16, j, i + l));
				m &= m - 1;
			}
		}
	}
	ok = _mm256_testz_si256(bad, bad) != 0;
	score = score_doc16_from(s, filter, qidx, t16, w16, c16, i, nnz, score,
							 &ok);
	*ordered = ok;
	return score;
}
#endif

/* score_doc16_scalar, or its AVX2 loop where the CPU has it */
static inline double
score_doc16(const SpmRangeScan *s, const uint64 *filter, const uint8 *qidx,
			const uint16 *t16, const float *w16, const uint8 *c16, int32 nnz,
			bool *ordered)
{
#ifdef SPM_AVX2_TARGET
	if (use_avx2 && have_avx2())
		return score_doc16_avx2(s, filter, qidx, t16, w16, c16, nnz, ordered);
#endif
	return score_doc16_scalar(s, filter, qidx, t16, w16, c16, nnz, ordered);
}

double
spm_test_range_score16(const SpmRangeTerm *terms, int nterms, bool use_qidx,
					   const uint16 *t16, const float *w16, const uint8 *c16,
					   int32 nnz, bool *ordered)
{
	SpmRangeScan s;
	uint64	   *filter = palloc0(SPM_FILTER_BITS / 8);
	uint8	   *qidx = NULL;
	double		score;

	memset(&s, 0, sizeof(s));
	s.terms = terms;
	s.nterms = nterms;
	for (int t = 0; t < nterms; t++)
		spv_filter_add(filter, terms[t].term);
	if (use_qidx)
	{
		qidx = palloc0(SPM_FILTER_BITS + 4);
		for (int t = 0; t < nterms; t++)
			if (terms[t].term < SPM_FILTER_BITS)
				qidx[terms[t].term] = (uint8) (t + 1);
	}
	score = score_doc16(&s, filter, qidx, t16, w16, c16, nnz, ordered);
	pfree(filter);
	if (qidx)
		pfree(qidx);
	return score;
}

/*
 * Score range r: every live document of it with a positive score after
 * the cursor is offered to the heap.  The document's elements are taken
 * in their (ascending, checked here) term order and the matching ones
 * added with spv_score_add, as spv_dot computes it.
 */
static void
score_range(SpmRangeScan *s, const uint64 *filter, const uint8 *qidx,
			uint32 r)
{
	uint32		first = r << SPM_RANGE_SHIFT;
	uint32		end = Min(first + SPM_RANGE_DOCS, s->ndocs);

	s->range_begin(s->arg, r);
	for (uint32 d = first; d < end; d++)
	{
		SpmRangeDoc doc;
		double		score = 0.0;
		int64		prev = -1;
		uint64		docid;

		s->next_doc(s->arg, &doc);
		if (doc.nnz == 0 || (s->is_alive && !s->is_alive(s->arg, d)))
			continue;
		/* one loop per layout, each with the element's term and weight */
		if (doc.elems)
		{
			for (int i = 0; i < doc.nnz; i++)
				score = score_elem(s, filter, qidx, doc.elems[i].term,
								   doc.elems[i].w, &prev, score);
		}
		else
		{
			bool		ordered;

			score = score_doc16(s, filter, qidx, doc.terms16, doc.w16,
								doc.codes16, doc.nnz, &ordered);
			if (!ordered)
				range_corrupt(s, "a document of the forward copy is not in ascending term order");
		}
		s->counters->postings_decoded += doc.nnz;
		s->counters->candidates++;
		docid = s->docid_lo + d;
		if (score > 0 && spm_is_after(&s->after, score, docid) &&
			spm_topk_admits(s->topk, score, docid))
			spm_topk_push(s->topk, score, docid, NULL);
	}
	s->range_end(s->arg, r);
}

/*
 * Would scoring the ranges still to visit (from position pos of the visit
 * order on) whose bound reaches the k-th score cost more elements than
 * the caller's other way, given the elements already read?  Those ranges
 * lie in the buckets up to the k-th score's own (bucket ends[], a prefix
 * of the visit order), so counting them is O(1); the count includes the
 * rest of that bucket, an overestimate of at most one bucket.
 */
static bool
too_costly(const SpmRangeScan *s, const SpmTopK *topk, float maxub,
		   float bscale, const uint32 *ends, uint32 pos, uint32 nlive,
		   double margin, double read)
{
	double		left = nlive - pos;

	if (spm_topk_full(topk))
	{
		double		t = topk->heap[0].score / margin;

		if (t > maxub)
			left = 0;
		else
		{
			int			b = bucket_of((float) t, bscale);

			left = ends[b] > pos ? ends[b] - pos : 0;
		}
	}
	return read + left * SPM_RANGE_DOCS * s->elems_per_doc > s->fallback_cost;
}

#define SPM_RANGE_BAND_MIN	4096

/*
 * The fewest ranges of a band (fill_band, below); the unit tests set it
 * lower (spmtest.h).
 */
static uint32 band_min = SPM_RANGE_BAND_MIN;

void
spm_test_range_band_min(uint32 n)
{
	band_min = n;
}

/*
 * The visit needs the ranges of bucket 0 first, and usually stops long
 * before the last bucket: where the bounds prune it scores a tiny share of
 * the ranges.  So the visit order is filled a band of buckets at a time,
 * when the visit reaches the band's start: a pass over bucket[] that
 * stores only the band's ranges, instead of one scattered store per range
 * with a bound, which was a visible part of a query (doc/decisions.md "The
 * visit order filled a band at a time").  A band holds at least band_min
 * ranges and at least as many as the bands before it, so a query that
 * visits everything makes a logarithmic number of passes.
 * count[b] is where bucket b starts in order[] (count[b + 1] where it
 * ends); cur[b] where its next range goes.  Fills buckets filled ..
 * (the return value) - 1.
 */
static int
fill_band(const uint16 *bucket, uint32 nr, const uint32 *count, uint32 *cur,
		  uint32 *order, uint32 *band, int filled)
{
	uint32		lo = count[filled];
	uint32		want = Max(Max(band_min, 1), lo);
	int			hi = filled + 1;
	uint32		m = 0;

	while (hi < NBUCKETS && count[hi] - lo < want)
		hi++;

	/*
	 * The band's ranges, in ascending order, into band[] without a branch
	 * (a range in the band is a random few of the ranges, and a branch on it
	 * mispredicted: doc/decisions.md "The band filled without a branch");
	 * one compare: buckets below filled wrap around to large values.  Then
	 * each goes to its bucket's next place.
	 */
	for (uint32 i = 0; i < nr; i++)
	{
		band[m] = i;
		m += (uint32) (bucket[i] - filled) < (uint32) (hi - filled);
	}
	for (uint32 j = 0; j < m; j++)
		order[cur[bucket[band[j]]]++] = band[j];
	return hi;
}

/* free the per-range arrays, also those of a growth that failed halfway */
static void
scratch_free_ranges(SpmRangeScratch *w)
{
	if (w->ub)
		pfree(w->ub);
	if (w->bucket)
		pfree(w->bucket);
	if (w->order)
		pfree(w->order);
	if (w->band)
		pfree(w->band);
	w->ub = NULL;
	w->bucket = NULL;
	w->order = NULL;
	w->band = NULL;
	w->cap = 0;
}

/* room in w for nranges ranges, and the query-term filter */
static void
scratch_reserve(SpmRangeScratch *w, uint32 nranges)
{
	MemoryContext old = MemoryContextSwitchTo(w->cxt);

	if (w->filter == NULL)
	{
		w->filter = palloc(SPM_RANGE_FILTER_BITS / 8);
		w->qidx = palloc0(SPM_RANGE_FILTER_BITS + 4);
	}
	if (w->cap < nranges)
	{
		uint32		cap = Max(nranges, 1024);

		/* each pointer is stored before the next allocation can fail */
		scratch_free_ranges(w);
		w->ub = palloc_extended((Size) cap * sizeof(float), MCXT_ALLOC_HUGE);
		w->bucket = palloc_extended((Size) cap * sizeof(uint16), MCXT_ALLOC_HUGE);
		w->order = palloc_extended((Size) cap * sizeof(uint32), MCXT_ALLOC_HUGE);
		w->band = palloc_extended((Size) cap * sizeof(uint32), MCXT_ALLOC_HUGE);
		w->cap = cap;
	}
	MemoryContextSwitchTo(old);
}

bool
spm_range_topk(SpmRangeScan *s)
{
	uint32		nr = (uint32) (((uint64) s->ndocs + SPM_RANGE_DOCS - 1) >> SPM_RANGE_SHIFT);
	float	   *ub;
	uint16	   *bucket;
	uint32	   *order;
	uint32		count[NBUCKETS + 2];	/* [NBUCKETS + 1]: no bound */
	uint32		cur[NBUCKETS];	/* where the band fill puts the next range
								 * of each bucket */
	int			filled = 0;		/* buckets 0 .. filled - 1 are in order[] */
	float		maxub;
	float		bscale;
	double		margin;
	uint32		nlive = 0;
	uint32		i;
	uint64	   *filter;
	uint8	   *qidx = NULL;
	SpmTopK		topk;
	bool		gave_up = false;
	SpmRangeScratch own;
	SpmRangeScratch *w = s->scratch;

	Assert(nr <= s->nranges);
	if (s->nterms == 0 || nr == 0)
		return true;

	if (w == NULL)
	{
		memset(&own, 0, sizeof(own));
		own.cxt = CurrentMemoryContext;
		w = &own;
	}
	scratch_reserve(w, s->nranges);
	ub = w->ub;
	bucket = w->bucket;
	order = w->order;
	filter = w->filter;
	memset(ub, 0, (Size) s->nranges * sizeof(float));
	for (int t = 0; t < s->nterms; t++)
	{
		add_term(s, &s->terms[t], ub);
		CHECK_FOR_INTERRUPTS();
	}

	/*
	 * A bound is a float sum of nterms float products, each of a unit
	 * rounded upward: its relative rounding error is below (nterms + 1) *
	 * 2^-24.  The margin is four times that, plus the double rounding of
	 * the levels (spm_range_level).
	 */
	margin = 1.0 + (s->nterms + 8) * ldexp(1.0, -22);

	maxub = max_bound(ub, nr);
	if (!(maxub > 0.0f))
		goto out;

	/* bucket the ranges with a bound; bucket 0 is the highest */
	bscale = (float) (NBUCKETS - 1) / maxub;
	set_buckets(ub, nr, bscale, bucket);
	memset(count, 0, sizeof(count));
	for (i = 0; i < nr; i++)
		count[bucket[i] + 1]++;
	for (int b = 0; b < NBUCKETS; b++)
		count[b + 1] += count[b];
	nlive = count[NBUCKETS];

	/* hopeless already? (count[b + 1]: the ranges of buckets 0 .. b) */
	if (s->fallback_cost > 0 &&
		(double) count[bucket_of(0.5f * maxub, bscale) + 1] * SPM_RANGE_DOCS *
		s->elems_per_doc > SPM_RANGE_EARLY * s->fallback_cost)
	{
		gave_up = true;
		goto out;
	}
	memcpy(cur, count, sizeof(cur));

	memset(filter, 0, SPM_FILTER_BITS / 8);
	for (int t = 0; t < s->nterms; t++)
		spv_filter_add(filter, s->terms[t].term);
	if (s->nterms <= SPM_QIDX_TERMS)
	{
		qidx = w->qidx;
		memset(qidx, 0, SPM_FILTER_BITS);
		for (int t = 0; t < s->nterms; t++)
			if (s->terms[t].term < SPM_FILTER_BITS)
				qidx[s->terms[t].term] = (uint8) (t + 1);
	}

	/*
	 * Visit.  The bucket of a bound is a non-decreasing function of it, so
	 * a range in a later bucket has a smaller bound than every range of an
	 * earlier one; the stop test uses the largest bound of the bucket
	 * reached, which bounds all the ranges after it.
	 *
	 * The ranges are scored into a copy of the heap, so that giving up
	 * leaves the caller's heap as it was.  Whether to give up is asked
	 * every SPM_RANGE_CHECK_EVERY ranges scored once the elements read
	 * reach SPM_RANGE_PROBE of the fallback cost (too_costly).
	 */
	spm_topk_copy(&topk, s->topk, palloc(Max(s->topk->k, 1) * sizeof(SpmHit)),
				  s->topk->want > 0 ? palloc(s->topk->want * sizeof(double)) : NULL);
	{
		SpmTopK    *caller = s->topk;
		uint32		scored = 0;
		uint32		pos = 0;
		int64		read0 = s->counters->postings_decoded;

		s->topk = &topk;

		while (pos < nlive)
		{
			int			b;
			uint32		bend;
			float		top = 0.0f;

			if (pos == count[filled])
				filled = fill_band(bucket, nr, count, cur, order, w->band, filled);
			b = bucket[order[pos]];
			bend = count[b + 1];
			for (uint32 j = pos; j < bend; j++)
				top = Max(top, ub[order[j]]);
			if (spm_topk_full(s->topk) &&
				(double) top * margin < s->topk->heap[0].score)
				break;
			for (; pos < bend; pos++)
			{
				uint32		r = order[pos];

				if (spm_topk_full(s->topk) &&
					(double) ub[r] * margin < s->topk->heap[0].score)
					continue;
				score_range(s, filter, qidx, r);
				scored++;
				if ((scored & 63) == 0)
					CHECK_FOR_INTERRUPTS();
				if (s->fallback_cost > 0 && scored % SPM_RANGE_CHECK_EVERY == 0 &&
					(double) (s->counters->postings_decoded - read0) >=
					s->fallback_cost * SPM_RANGE_PROBE &&
					too_costly(s, &topk, maxub, bscale, count + 1, pos + 1, nlive, margin,
							   (double) (s->counters->postings_decoded - read0)))
				{
					gave_up = true;
					break;
				}
			}
			if (gave_up)
				break;
		}
		s->topk = caller;
		if (!gave_up)
		{
			s->counters->windows += nlive;
			s->counters->windows_skipped += nlive - scored;
			spm_topk_copy(caller, &topk, caller->heap, caller->best);
		}
	}
	pfree(topk.heap);
	if (topk.best)
		pfree(topk.best);
out:
	if (w == &own)
	{
		scratch_free_ranges(w);
		pfree(own.qidx);
		pfree(own.filter);
	}
	else if (w->cap > SPM_RANGE_SCRATCH_KEEP)
		scratch_free_ranges(w);
	return !gave_up;
}

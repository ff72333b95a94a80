/*
 * bench/gen.c: a seeded, deterministic, SPLADE-shaped corpus and query
 * generator for the sparsevec benchmark.
 *
 *	 gen [--shape S] [--weights W] docs N [SEED]         documents 1..N as COPY
 *	           text rows "id<TAB>{i:v,...}/30522" (1-based, ascending)
 *	 gen [--shape S] [--weights W] queries SET N [SEED]  queries 1..N of SET
 *	           (skewed | flat), same format
 *	 S is flat (the default) or topical; W is independent (the default) or
 *	 idf (both below).
 *
 * Rows go to stdout; progress and a one-line summary of the shape go to
 * stderr.  The same arguments give byte-identical output.  Every document
 * and every query draws from its own PRNG stream, seeded from (SEED, kind,
 * id), so the first 1000 documents of a 100000-document corpus are the
 * 1000-document corpus, and the queries do not depend on N.
 *
 * The shape imitates MS MARCO passages encoded with SPLADE:
 *	 - vocabulary of 30522 terms (BERT WordPiece);
 *	 - term r (by rank) is drawn with probability proportional to
 *	   1/(r + ZIPF_C)^ZIPF_S, which puts the most common term in ~40% of
 *	   documents; ranks map to term ids through a seeded permutation, so
 *	   frequent terms are not the small ids;
 *	 - document lengths (non-zeros) lognormal, mean ~120, clipped to 20..400;
 *	   the terms of a document are drawn without replacement;
 *	 - document weights lognormal, truncated to [0.001, 3];
 *	 - queries of 9..110 terms (median 42) drawn from the same term
 *	   distribution, i.e. toward frequent terms; weights lognormal with
 *	   sigma 1.2 ("skewed": mean/median ~2, max/median ~13 as in SPLADE++
 *	   queries on MS MARCO dev) or sigma 0.5 ("flat", the pessimistic case
 *	   for pruning), truncated to [0.001, 3].
 * Weights are independent of term frequency (--weights independent, the
 * default).  In real SPLADE output, frequent terms tend to get lower
 * weights, which helps pruning; here they do not, so this corpus is on the
 * pessimistic side.
 *
 * --weights idf models that: every weight of term t, in documents and
 * queries, is the same draw as above multiplied by
 *	 f_t = (idf_t / idf_max)^IDF_POWER,	idf_t = -ln q_t,
 * put back on the weight grid (0.001 at least, so no weight becomes zero and
 * the terms, hence nnz, are the independent corpus's).  q_t is the share of
 * documents expected to contain t, 1 - exp(-IDF_DOC_LEN * p_t), from the
 * probability p_t that one term draw gives t (the Zipf probability of its
 * rank; for the topical shape the topic mixture's marginal): the limit of
 * ln(N/df_t) as N grows, taken from the model rather than counted, so the
 * factors do not depend on N and corpora stay prefixes of each other.
 * idf_max is the rarest term's, so f_t is in (0, 1]: ~0.017 for the most
 * common term (in ~1/3 of documents), ~0.6 for a term in 0.1% of them.  The
 * exponent 2 is the curve of the experiment in doc/decisions.md (issue 8:
 * weights scaled by (ln(N/df)/ln N)^2), which it reproduces closely (mean
 * weight at df 33% / at df 0.1%: 0.027 here, 0.026 there); it is steeper
 * than BM25, which has idf^1 on the query side only, and SPLADE is
 * known to keep some signal in frequent terms, so the two settings bracket
 * real data rather than either being it.  Queries draw from narrower
 * lognormals before the scaling (SKEWED_IDF_*, FLAT_IDF_*) so that the
 * per-query weight ratios after it stay those of the sets above.
 *
 * The topical shape (--shape topical) keeps the lengths and the weights of
 * each document and query, and changes only which terms it has.  There are
 * N_TOPICS topics; topic t has TOPIC_CORE core terms, drawn without
 * replacement from the global Zipf distribution, then shuffled, so a topic's
 * most likely term is any of its core terms, often one that is rare in the
 * corpus as a whole.  Drawing the cores from the global distribution keeps
 * the document frequencies close to the flat shape's (the most common term
 * in ~33% of documents instead of ~40%; a query term in ~5.6% of documents
 * instead of ~6.6%), so the two shapes differ mainly in which terms occur
 * together.  Within a topic, core term i is drawn with
 * probability proportional to 1/(i + TOPIC_IN_C).  Topics are not equally
 * popular: topic t is chosen with probability proportional to
 * 1/(t + TOPIC_POP_C).  A document (or query) picks 1, 2 or 3 distinct
 * topics (probabilities TOPIC_K1, TOPIC_K2, rest) with mixing weights
 * 1 | .65 .35 | .5 .3 .2; each of its terms comes with probability
 * TOPIC_SHARE from one of its topics and otherwise from the global Zipf
 * distribution (a repeat is drawn again, so long documents of a single topic
 * take more global terms).  Every document draws its topics from its own
 * PRNG stream, so document ids are in random order with respect to topics:
 * an index gets no help from the generator's topic ids.
 *
 * Weights are written with 4 significant digits ("0.01234", "1.5").  The
 * float a weight stands for is whatever strtof() makes of that text, which
 * is what the server's input function and bench/truth.c both read.
 *
 * Build: cc -O2 -Wall -Wextra -ffp-contract=off -o gen gen.c -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOCAB			30522
#define ZIPF_S			1.0
#define ZIPF_C			33.0

#define DOC_LEN_MEDIAN	106.0	/* lognormal mean = median * e^(sigma^2/2) ~ 120 */
#define DOC_LEN_SIGMA	0.5
#define DOC_LEN_MIN		20
#define DOC_LEN_MAX		400

#define Q_LEN_MEDIAN	42.0
#define Q_LEN_SIGMA		0.4
#define Q_LEN_MIN		9
#define Q_LEN_MAX		110

#define W_MIN			0.001
#define W_MAX			3.0

/* weights: lognormal(ln median, sigma), truncated to [W_MIN, W_MAX] */
#define DOC_W_MEDIAN	0.45
#define DOC_W_SIGMA		0.7
#define SKEWED_W_MEDIAN	0.1
#define SKEWED_W_SIGMA	1.2
#define FLAT_W_MEDIAN	0.5
#define FLAT_W_SIGMA	0.5
/*
 * With --weights idf, queries draw from narrower distributions before the
 * scaling, so that the per-query weight shape after it stays what the sets
 * promise (skewed: mean/median ~2, max/median ~13; flat: as near ~1.1 and ~3
 * as the idf factors alone allow, ~1.2 and ~3.5)
 */
#define SKEWED_IDF_W_MEDIAN	0.3
#define SKEWED_IDF_W_SIGMA	0.9
#define FLAT_IDF_W_MEDIAN	1.0
#define FLAT_IDF_W_SIGMA	0.1

/* the topical shape (see the header comment) */
#define N_TOPICS		3000
#define TOPIC_CORE		256
#define TOPIC_IN_C		5.0
#define TOPIC_POP_C		30.0
#define TOPIC_SHARE		0.7
#define TOPIC_K1		0.5		/* P(1 topic) */
#define TOPIC_K2		0.3		/* P(2 topics); 3 topics otherwise */
#define TOPIC_MAXK		3

/* --weights idf (see the header comment) */
#define IDF_DOC_LEN		119.0	/* mean document length, for the expected df */
#define IDF_POWER		2.0

/* PRNG streams */
enum
{
	STREAM_PERM = 1, STREAM_DOC, STREAM_SKEWED, STREAM_FLAT, STREAM_TOPIC
};

/* ------------------------------------------------------------------ PRNG */

/* splitmix64, used only to seed xoshiro256** */
static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

typedef struct Rng
{
	uint64_t	s[4];
} Rng;

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 (Blackman and Vigna) */
static inline uint64_t
rng_next(Rng *r)
{
	uint64_t	result = rotl(r->s[1] * 5, 7) * 9;
	uint64_t	t = r->s[1] << 17;

	r->s[2] ^= r->s[0];
	r->s[3] ^= r->s[1];
	r->s[1] ^= r->s[2];
	r->s[0] ^= r->s[3];
	r->s[2] ^= t;
	r->s[3] = rotl(r->s[3], 45);
	return result;
}

/* an independent stream for (seed, kind, id) */
static void
rng_seed(Rng *r, uint64_t seed, uint64_t kind, uint64_t id)
{
	uint64_t	x = seed;
	uint64_t	k;
	int			i;

	k = splitmix64(&x) ^ (kind * 0xD1B54A32D192ED03ULL);
	x = k;
	k = splitmix64(&x) ^ id;
	x = k;
	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

/* uniform in [0, 1) with 53 random bits */
static inline double
rng_uniform(Rng *r)
{
	return (double) (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* standard normal (Box-Muller; one of the pair is thrown away) */
static double
rng_normal(Rng *r)
{
	double		u = 1.0 - rng_uniform(r);	/* (0, 1] */
	double		v = rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* lognormal integer in [lo, hi], by rejection */
static int
rng_length(Rng *r, double median, double sigma, int lo, int hi)
{
	for (;;)
	{
		long		n = lround(median * exp(sigma * rng_normal(r)));

		if (n >= lo && n <= hi)
			return (int) n;
	}
}

/* ------------------------------------------------------- weight grid */

/*
 * The weights on the 4-significant-digit grid in [0.001, 3]: index
 * g = decade * 9000 + (mantissa - 1000), mantissa in 1000..9999, decade 0
 * for 0.001..0.009999 up to decade 3 for 1.000..3.000.
 */
#define GRID_SIZE (3 * 9000 + 2001)
static char grid_text[GRID_SIZE][12];
static unsigned char grid_len[GRID_SIZE];
static float grid_val[GRID_SIZE];	/* what strtof() reads back */

static void
grid_init(void)
{
	int			g;

	for (g = 0; g < GRID_SIZE; g++)
	{
		int			decade = g / 9000;
		int			m = 1000 + g % 9000;
		char	   *s = grid_text[g];
		int			n;

		if (decade == 3)
			n = sprintf(s, "%d.%03d", m / 1000, m % 1000);
		else
			n = sprintf(s, "0.%.*s%04d", 2 - decade, "00", m);
		while (s[n - 1] == '0')
			s[--n] = '\0';
		if (s[n - 1] == '.')
			s[--n] = '\0';
		grid_len[g] = (unsigned char) n;
		grid_val[g] = strtof(s, NULL);
	}
}

static int
grid_index(double w)
{
	int			e;
	long		m;

	if (w <= W_MIN)
		return 0;
	if (w >= W_MAX)
		return GRID_SIZE - 1;
	e = (int) floor(log10(w));
	m = lround(w / pow(10.0, e - 3));
	if (m >= 10000)
	{
		m = 1000;
		e++;
	}
	if (e < -3)
		return 0;
	if (e >= 0)
		return m > 3000 ? GRID_SIZE - 1 : 3 * 9000 + (int) (m - 1000);
	return (e + 3) * 9000 + (int) (m - 1000);
}

/*
 * A weight distribution: lognormal(ln median, sigma) truncated to
 * [W_MIN, W_MAX], as 65536 equiprobable quantiles on the grid.
 */
#define QUANTILES 65536
typedef struct WeightDist
{
	uint16_t	q[QUANTILES];
} WeightDist;

static double
phi(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

static void
weight_init(WeightDist *d, double median, double sigma)
{
	double		mu = log(median);
	double		pa = phi((log(W_MIN) - mu) / sigma);
	double		pb = phi((log(W_MAX) - mu) / sigma);
	int			k;

	for (k = 0; k < QUANTILES; k++)
	{
		double		p = pa + (pb - pa) * ((k + 0.5) / QUANTILES);
		double		lo = -40.0,
					hi = 40.0;
		int			it;

		for (it = 0; it < 80; it++)
		{
			double		mid = 0.5 * (lo + hi);

			if (phi(mid) < p)
				lo = mid;
			else
				hi = mid;
		}
		d->q[k] = (uint16_t) grid_index(exp(mu + sigma * 0.5 * (lo + hi)));
	}
}

static inline int
weight_draw(const WeightDist *d, Rng *r)
{
	return d->q[rng_next(r) >> 48];
}

/* ------------------------------------------------- term distribution */

/* Vose's alias table: draws i in [0, n) with probability w[i] / sum(w) */
typedef struct Alias
{
	int			n;
	uint32_t   *prob;			/* acceptance threshold, scaled to 2^32 */
	uint32_t   *other;
} Alias;

static void
alias_init(Alias *a, const double *w, int n)
{
	double	   *p = malloc(n * sizeof(double));
	uint32_t   *small = malloc(n * sizeof(uint32_t));
	uint32_t   *large = malloc(n * sizeof(uint32_t));
	int			ns = 0,
				nl = 0;
	double		sum = 0.0;
	int			i;

	if (!p || !small || !large)
	{
		perror("gen: malloc");
		exit(1);
	}
	a->n = n;
	a->prob = malloc(n * sizeof(uint32_t));
	a->other = malloc(n * sizeof(uint32_t));
	if (!a->prob || !a->other)
	{
		perror("gen: malloc");
		exit(1);
	}
	for (i = 0; i < n; i++)
		sum += w[i];
	for (i = 0; i < n; i++)
	{
		p[i] = w[i] / sum * n;
		if (p[i] < 1.0)
			small[ns++] = i;
		else
			large[nl++] = i;
	}
	while (ns > 0 && nl > 0)
	{
		uint32_t	s = small[--ns];
		uint32_t	l = large[nl - 1];

		a->prob[s] = (uint32_t) (p[s] * 4294967296.0);
		a->other[s] = l;
		p[l] -= 1.0 - p[s];
		if (p[l] < 1.0)
		{
			nl--;
			small[ns++] = l;
		}
	}
	while (nl > 0)
	{
		uint32_t	l = large[--nl];

		a->prob[l] = UINT32_MAX;
		a->other[l] = l;
	}
	while (ns > 0)
	{
		uint32_t	s = small[--ns];

		a->prob[s] = UINT32_MAX;
		a->other[s] = s;
	}
	free(p);
	free(small);
	free(large);
}

static inline uint32_t
alias_draw(const Alias *a, Rng *r)
{
	uint64_t	x = rng_next(r);
	uint32_t	i = (uint32_t) (((x >> 32) * (uint64_t) a->n) >> 32);

	if ((uint32_t) x >= a->prob[i])
		i = a->other[i];
	return i;
}

/* Zipf-like weights 1/(i + 1 + c)^s, i in [0, n) */
static double *
zipf_weights(int n, double c, double s)
{
	double	   *w = malloc(n * sizeof(double));
	int			i;

	if (!w)
	{
		perror("gen: malloc");
		exit(1);
	}
	for (i = 0; i < n; i++)
		w[i] = pow(i + 1 + c, -s);
	return w;
}

/* uniform integer in [0, n) */
static inline uint32_t
rng_below(Rng *r, uint32_t n)
{
	return (uint32_t) (((rng_next(r) >> 32) * (uint64_t) n) >> 32);
}

/* the global term distribution over ranks, and the rank -> term id permutation */
static Alias term_alias;
static uint32_t rank_term[VOCAB];

static void
terms_init(uint64_t seed)
{
	double	   *w = zipf_weights(VOCAB, ZIPF_C, ZIPF_S);
	Rng			r;
	int			i;

	alias_init(&term_alias, w, VOCAB);
	free(w);

	/* Fisher-Yates: rank -> term id */
	rng_seed(&r, seed, STREAM_PERM, 0);
	for (i = 0; i < VOCAB; i++)
		rank_term[i] = i;
	for (i = VOCAB - 1; i > 0; i--)
	{
		uint32_t	j = rng_below(&r, (uint32_t) i + 1);
		uint32_t	t = rank_term[i];

		rank_term[i] = rank_term[j];
		rank_term[j] = t;
	}
}

static inline uint32_t
term_draw(Rng *r)
{
	return rank_term[alias_draw(&term_alias, r)];
}

/* --------------------------------------------------- the topical shape */

static int	shape_topical = 0;
static uint16_t topic_terms[N_TOPICS][TOPIC_CORE];	/* term ids, VOCAB < 2^16 */
static Alias topic_alias;		/* which topic */
static Alias core_alias;		/* which core term of a topic */

static void
topics_init(uint64_t seed)
{
	double	   *w;
	int			t;

	w = zipf_weights(N_TOPICS, TOPIC_POP_C, 1.0);
	alias_init(&topic_alias, w, N_TOPICS);
	free(w);
	w = zipf_weights(TOPIC_CORE, TOPIC_IN_C, 1.0);
	alias_init(&core_alias, w, TOPIC_CORE);
	free(w);

	for (t = 0; t < N_TOPICS; t++)
	{
		uint64_t	seen[(VOCAB + 63) / 64];
		Rng			r;
		int			n = 0;
		int			i;

		memset(seen, 0, sizeof(seen));
		rng_seed(&r, seed, STREAM_TOPIC, (uint64_t) t);
		while (n < TOPIC_CORE)
		{
			uint32_t	rank = alias_draw(&term_alias, &r);

			if (seen[rank >> 6] & (1ULL << (rank & 63)))
				continue;
			seen[rank >> 6] |= 1ULL << (rank & 63);
			topic_terms[t][n++] = (uint16_t) rank_term[rank];
		}
		/* shuffle: the topic's favourite terms are not the globally common ones */
		for (i = TOPIC_CORE - 1; i > 0; i--)
		{
			uint32_t	j = rng_below(&r, (uint32_t) i + 1);
			uint16_t	x = topic_terms[t][i];

			topic_terms[t][i] = topic_terms[t][j];
			topic_terms[t][j] = x;
		}
	}
}

/* ------------------------------------------------ weights by frequency */

static int	weights_idf = 0;
static double idf_factor[VOCAB];	/* by term id, in (0, 1] */

/*
 * --weights idf: the factor each weight of term t is multiplied by,
 * (idf_t / idf_max)^IDF_POWER, where idf_t = -ln q_t and q_t is the share of
 * documents expected to contain t: 1 - exp(-IDF_DOC_LEN * p_t), p_t being
 * the probability that one draw of draw_terms() gives t.  For the flat shape
 * p_t is the Zipf probability of t's rank; for the topical shape it is
 * (1 - TOPIC_SHARE) times that plus TOPIC_SHARE times the sum over topics of
 * the topic's popularity times the core probability of t in it (the
 * mixture's marginal, ignoring that a document's topics are distinct and that
 * repeats are drawn again).  Everything comes from the generator's model, not
 * from counting: the factors do not depend on N, so corpora stay prefixes of
 * each other.  Needs terms_init() and, for the topical shape, topics_init().
 */
static void
idf_init(void)
{
	double	   *w = zipf_weights(VOCAB, ZIPF_C, ZIPF_S);
	double		p[VOCAB];
	double		sum = 0.0;
	double		idf_max = 0.0;
	int			i;

	for (i = 0; i < VOCAB; i++)
		sum += w[i];
	for (i = 0; i < VOCAB; i++)
		p[rank_term[i]] = w[i] / sum;
	free(w);
	if (shape_topical)
	{
		double	   *pop = zipf_weights(N_TOPICS, TOPIC_POP_C, 1.0);
		double	   *core = zipf_weights(TOPIC_CORE, TOPIC_IN_C, 1.0);
		double		pop_sum = 0.0,
					core_sum = 0.0;
		int			t;

		for (t = 0; t < N_TOPICS; t++)
			pop_sum += pop[t];
		for (i = 0; i < TOPIC_CORE; i++)
			core_sum += core[i];
		for (i = 0; i < VOCAB; i++)
			p[i] *= 1.0 - TOPIC_SHARE;
		for (t = 0; t < N_TOPICS; t++)
			for (i = 0; i < TOPIC_CORE; i++)
				p[topic_terms[t][i]] += TOPIC_SHARE * pop[t] / pop_sum * core[i] / core_sum;
		free(pop);
		free(core);
	}
	for (i = 0; i < VOCAB; i++)
	{
		idf_factor[i] = -log(-expm1(-IDF_DOC_LEN * p[i]));
		if (idf_factor[i] > idf_max)
			idf_max = idf_factor[i];
	}
	for (i = 0; i < VOCAB; i++)
		idf_factor[i] = pow(idf_factor[i] / idf_max, IDF_POWER);
}

/* ---------------------------------------------------------- one vector */

#define SET_WORDS ((VOCAB + 63) / 64)

/* output buffer for one row; 400 terms * (5 + 1 + 11 + 1) fits easily */
static char row[16384];

static inline char *
put_uint(char *p, uint64_t v)
{
	char		tmp[24];
	int			n = 0;

	do
	{
		tmp[n++] = (char) ('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

typedef struct Stats
{
	uint64_t	rows;
	uint64_t	postings;
	int			minlen;
	int			maxlen;
	uint32_t   *df;
	double		wsum;
	double		ratio_mean_median;	/* summed over rows */
	double		ratio_max_median;
	int		   *lens;
} Stats;

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *) a - *(const int *) b;
}

/* the topical shape: the topics of one document or query, and their mixture */
static void
draw_topics(Rng *r, int *topics, double *cum)
{
	static const double mix[TOPIC_MAXK][TOPIC_MAXK] = {
		{1.0}, {0.65, 1.0}, {0.5, 0.8, 1.0}
	};
	double		u = rng_uniform(r);
	int			k = u < TOPIC_K1 ? 1 : u < TOPIC_K1 + TOPIC_K2 ? 2 : 3;
	int			n = 0;
	int			i;

	while (n < k)
	{
		int			t = (int) alias_draw(&topic_alias, r);

		for (i = 0; i < n; i++)
			if (topics[i] == t)
				break;
		if (i == n)
			topics[n++] = t;
	}
	for (i = 0; i < TOPIC_MAXK; i++)
		cum[i] = i < k ? mix[k - 1][i] : 1.0;
}

/*
 * Draw len distinct terms into set: from the global distribution (flat), or
 * mostly from 1-3 topics (topical).
 */
static void
draw_terms(uint64_t *set, int len, Rng *r)
{
	int			topics[TOPIC_MAXK];
	double		cum[TOPIC_MAXK];
	int			n = 0;

	memset(set, 0, SET_WORDS * sizeof(uint64_t));
	if (shape_topical)
		draw_topics(r, topics, cum);
	while (n < len)
	{
		uint32_t	t;

		if (shape_topical)
		{
			double		u = rng_uniform(r);

			if (u < TOPIC_SHARE)
			{
				int			j = 0;

				u /= TOPIC_SHARE;
				while (u >= cum[j])
					j++;
				t = topic_terms[topics[j]][alias_draw(&core_alias, r)];
			}
			else
				t = term_draw(r);
		}
		else
			t = term_draw(r);
		if (set[t >> 6] & (1ULL << (t & 63)))
			continue;			/* drawn before: without replacement */
		set[t >> 6] |= 1ULL << (t & 63);
		n++;
	}
}

/*
 * Draw one vector of len distinct terms, with weights from wd, and write it
 * as a COPY row "id\t{...}/VOCAB\n".
 */
static size_t
make_row(uint64_t id, int len, Rng *r, const WeightDist *wd, Stats *st)
{
	uint64_t	set[SET_WORDS];
	int			wv[DOC_LEN_MAX > Q_LEN_MAX ? DOC_LEN_MAX : Q_LEN_MAX];
	char	   *p = row;
	int			n = 0;
	int			w;
	int			i;

	draw_terms(set, len, r);

	p = put_uint(p, id);
	*p++ = '\t';
	*p++ = '{';
	n = 0;
	for (w = 0; w < SET_WORDS; w++)
	{
		uint64_t	bits = set[w];

		while (bits)
		{
			uint32_t	t = (uint32_t) (w * 64 + __builtin_ctzll(bits));
			int			g = weight_draw(wd, r);

			if (weights_idf)	/* the same draw, scaled; 0.001 at least */
				g = grid_index(grid_val[g] * idf_factor[t]);
			bits &= bits - 1;
			if (n > 0)
				*p++ = ',';
			p = put_uint(p, t + 1);
			*p++ = ':';
			memcpy(p, grid_text[g], grid_len[g]);
			p += grid_len[g];
			if (st->df)
				st->df[t]++;
			wv[n++] = g;
		}
	}
	memcpy(p, "}/", 2);
	p = put_uint(p + 2, VOCAB);
	*p++ = '\n';

	st->rows++;
	st->postings += len;
	if (len < st->minlen)
		st->minlen = len;
	if (len > st->maxlen)
		st->maxlen = len;
	for (i = 0; i < n; i++)
		st->wsum += atof(grid_text[wv[i]]);
	if (st->lens)
	{
		/* per-query weight shape: mean/median and max/median */
		double		sum = 0.0;
		double		med;

		st->lens[st->rows - 1] = len;
		for (i = 0; i < n; i++)
			sum += atof(grid_text[wv[i]]);
		qsort(wv, n, sizeof(int), cmp_int);	/* grid order is value order */
		med = n % 2 ? atof(grid_text[wv[n / 2]]) :
			0.5 * (atof(grid_text[wv[n / 2 - 1]]) + atof(grid_text[wv[n / 2]]));
		st->ratio_mean_median += sum / n / med;
		st->ratio_max_median += atof(grid_text[wv[n - 1]]) / med;
	}
	return (size_t) (p - row);
}

/* ---------------------------------------------------------------- main */

static void
usage(void)
{
	fprintf(stderr,
			"usage: gen [--shape flat|topical] [--weights independent|idf] docs N [SEED]\n"
			"       gen [--shape flat|topical] [--weights independent|idf] queries skewed|flat N [SEED]\n");
	exit(2);
}

static uint64_t
parse_count(const char *s)
{
	char	   *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*s == '\0' || *end != '\0')
		usage();
	return v;
}

int
main(int argc, char **argv)
{
	static char obuf[1 << 20];
	static WeightDist wd;
	uint64_t	seed = 42;
	uint64_t	n,
				i;
	Stats		st;
	Rng			r;

	while (argc >= 3 && (strcmp(argv[1], "--shape") == 0 ||
						 strcmp(argv[1], "--weights") == 0))
	{
		if (strcmp(argv[1], "--shape") == 0)
		{
			if (strcmp(argv[2], "topical") == 0)
				shape_topical = 1;
			else if (strcmp(argv[2], "flat") == 0)
				shape_topical = 0;
			else
				usage();
		}
		else if (strcmp(argv[2], "idf") == 0)
			weights_idf = 1;
		else if (strcmp(argv[2], "independent") == 0)
			weights_idf = 0;
		else
			usage();
		argc -= 2;
		argv += 2;
	}
	memset(&st, 0, sizeof(st));
	st.minlen = 1 << 30;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	grid_init();

	if (argc >= 3 && strcmp(argv[1], "docs") == 0)
	{
		uint64_t	step;
		uint32_t	maxdf = 0;

		if (argc > 4)
			usage();
		n = parse_count(argv[2]);
		if (argc == 4)
			seed = parse_count(argv[3]);
		terms_init(seed);
		if (shape_topical)
			topics_init(seed);
		if (weights_idf)
			idf_init();
		weight_init(&wd, DOC_W_MEDIAN, DOC_W_SIGMA);
		st.df = calloc(VOCAB, sizeof(uint32_t));
		step = n >= 1000000 ? 100000 : n >= 100000 ? 50000 : 0;
		for (i = 1; i <= n; i++)
		{
			int			len;

			rng_seed(&r, seed, STREAM_DOC, i);
			len = rng_length(&r, DOC_LEN_MEDIAN, DOC_LEN_SIGMA, DOC_LEN_MIN, DOC_LEN_MAX);
			fwrite(row, 1, make_row(i, len, &r, &wd, &st), stdout);
			if (step && i % step == 0)
				fprintf(stderr, "gen: %llu/%llu documents\n",
						(unsigned long long) i, (unsigned long long) n);
		}
		for (i = 0; i < VOCAB; i++)
			if (st.df[i] > maxdf)
				maxdf = st.df[i];
		fprintf(stderr,
				"gen: docs=%llu postings=%llu nnz_mean=%.1f nnz_min=%d nnz_max=%d "
				"weight_mean=%.3f top_term_df=%.1f%% shape=%s weights=%s\n",
				(unsigned long long) st.rows, (unsigned long long) st.postings,
				n ? (double) st.postings / n : 0.0, n ? st.minlen : 0, st.maxlen,
				st.postings ? st.wsum / st.postings : 0.0,
				n ? 100.0 * maxdf / n : 0.0, shape_topical ? "topical" : "flat",
				weights_idf ? "idf" : "independent");
	}
	else if (argc >= 4 && strcmp(argv[1], "queries") == 0)
	{
		int			stream;

		if (argc > 5)
			usage();
		if (strcmp(argv[2], "skewed") == 0)
		{
			stream = STREAM_SKEWED;
			if (weights_idf)
				weight_init(&wd, SKEWED_IDF_W_MEDIAN, SKEWED_IDF_W_SIGMA);
			else
				weight_init(&wd, SKEWED_W_MEDIAN, SKEWED_W_SIGMA);
		}
		else if (strcmp(argv[2], "flat") == 0)
		{
			stream = STREAM_FLAT;
			if (weights_idf)
				weight_init(&wd, FLAT_IDF_W_MEDIAN, FLAT_IDF_W_SIGMA);
			else
				weight_init(&wd, FLAT_W_MEDIAN, FLAT_W_SIGMA);
		}
		else
			usage();
		n = parse_count(argv[3]);
		if (argc == 5)
			seed = parse_count(argv[4]);
		terms_init(seed);
		if (shape_topical)
			topics_init(seed);
		if (weights_idf)
			idf_init();
		st.lens = calloc(n ? n : 1, sizeof(int));
		for (i = 1; i <= n; i++)
		{
			int			len;

			rng_seed(&r, seed, stream, i);
			len = rng_length(&r, Q_LEN_MEDIAN, Q_LEN_SIGMA, Q_LEN_MIN, Q_LEN_MAX);
			fwrite(row, 1, make_row(i, len, &r, &wd, &st), stdout);
		}
		qsort(st.lens, n, sizeof(int), cmp_int);
		fprintf(stderr,
				"gen: %s queries=%llu terms_median=%d terms_min=%d terms_max=%d "
				"weight_mean/median=%.2f weight_max/median=%.1f shape=%s weights=%s\n",
				argv[2], (unsigned long long) n, n ? st.lens[n / 2] : 0,
				n ? st.minlen : 0, st.maxlen,
				n ? st.ratio_mean_median / n : 0.0, n ? st.ratio_max_median / n : 0.0,
				shape_topical ? "topical" : "flat", weights_idf ? "idf" : "independent");
	}
	else
		usage();

	if (fflush(stdout) != 0 || ferror(stdout))
	{
		perror("gen: write");
		return 1;
	}
	return 0;
}

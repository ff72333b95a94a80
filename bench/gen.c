/*
 * bench/gen.c: a seeded, deterministic, SPLADE-shaped corpus and query
 * generator for the sparsevec benchmark.
 *
 *	 gen docs N [SEED]           documents 1..N as COPY text rows
 *	                             "id<TAB>{i:v,...}/30522" (1-based, ascending)
 *	 gen queries SET N [SEED]    queries 1..N of SET (skewed | flat), same format
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
 * Weights are independent of term frequency.  In real SPLADE output,
 * frequent terms tend to get lower weights, which helps pruning; here they
 * do not, so this corpus is on the pessimistic side.
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

/* PRNG streams */
enum
{
	STREAM_PERM = 1, STREAM_DOC, STREAM_SKEWED, STREAM_FLAT
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

/* Vose's alias table over ranks, and the rank -> term id permutation */
static uint32_t alias_prob[VOCAB];	/* acceptance threshold, scaled to 2^32 */
static uint32_t alias_other[VOCAB];
static uint32_t rank_term[VOCAB];

static void
terms_init(uint64_t seed)
{
	static double p[VOCAB];
	static uint32_t small[VOCAB],
				large[VOCAB];
	int			ns = 0,
				nl = 0;
	double		sum = 0.0;
	Rng			r;
	int			i;

	for (i = 0; i < VOCAB; i++)
		sum += p[i] = pow(i + 1 + ZIPF_C, -ZIPF_S);
	for (i = 0; i < VOCAB; i++)
	{
		p[i] = p[i] / sum * VOCAB;
		if (p[i] < 1.0)
			small[ns++] = i;
		else
			large[nl++] = i;
	}
	while (ns > 0 && nl > 0)
	{
		uint32_t	s = small[--ns];
		uint32_t	l = large[nl - 1];

		alias_prob[s] = (uint32_t) (p[s] * 4294967296.0);
		alias_other[s] = l;
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

		alias_prob[l] = UINT32_MAX;
		alias_other[l] = l;
	}
	while (ns > 0)
	{
		uint32_t	s = small[--ns];

		alias_prob[s] = UINT32_MAX;
		alias_other[s] = s;
	}

	/* Fisher-Yates: rank -> term id */
	rng_seed(&r, seed, STREAM_PERM, 0);
	for (i = 0; i < VOCAB; i++)
		rank_term[i] = i;
	for (i = VOCAB - 1; i > 0; i--)
	{
		uint32_t	j = (uint32_t) (((rng_next(&r) >> 32) * (uint64_t) (i + 1)) >> 32);
		uint32_t	t = rank_term[i];

		rank_term[i] = rank_term[j];
		rank_term[j] = t;
	}
}

static inline uint32_t
term_draw(Rng *r)
{
	uint64_t	x = rng_next(r);
	uint32_t	rank = (uint32_t) (((x >> 32) * (uint64_t) VOCAB) >> 32);

	if ((uint32_t) x >= alias_prob[rank])
		rank = alias_other[rank];
	return rank_term[rank];
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

/*
 * Draw one vector of len distinct terms from the term distribution, with
 * weights from wd, and write it as a COPY row "id\t{...}/VOCAB\n".
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

	memset(set, 0, sizeof(set));
	while (n < len)
	{
		uint32_t	t = term_draw(r);

		if (set[t >> 6] & (1ULL << (t & 63)))
			continue;			/* drawn before: without replacement */
		set[t >> 6] |= 1ULL << (t & 63);
		n++;
	}

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
			"usage: gen docs N [SEED]\n"
			"       gen queries skewed|flat N [SEED]\n");
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
				"weight_mean=%.3f top_term_df=%.1f%%\n",
				(unsigned long long) st.rows, (unsigned long long) st.postings,
				n ? (double) st.postings / n : 0.0, n ? st.minlen : 0, st.maxlen,
				st.postings ? st.wsum / st.postings : 0.0,
				n ? 100.0 * maxdf / n : 0.0);
	}
	else if (argc >= 4 && strcmp(argv[1], "queries") == 0)
	{
		int			stream;

		if (argc > 5)
			usage();
		if (strcmp(argv[2], "skewed") == 0)
		{
			stream = STREAM_SKEWED;
			weight_init(&wd, SKEWED_W_MEDIAN, SKEWED_W_SIGMA);
		}
		else if (strcmp(argv[2], "flat") == 0)
		{
			stream = STREAM_FLAT;
			weight_init(&wd, FLAT_W_MEDIAN, FLAT_W_SIGMA);
		}
		else
			usage();
		n = parse_count(argv[3]);
		if (argc == 5)
			seed = parse_count(argv[4]);
		terms_init(seed);
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
				"weight_mean/median=%.2f weight_max/median=%.1f\n",
				argv[2], (unsigned long long) n, n ? st.lens[n / 2] : 0,
				n ? st.minlen : 0, st.maxlen,
				n ? st.ratio_mean_median / n : 0.0, n ? st.ratio_max_median / n : 0.0);
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

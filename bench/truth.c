/*
 * bench/truth.c: exact ground truth by brute force, and the tie-aware
 * recall of an arm's results against it.  Independent of the server and of
 * the index: it reads the same COPY text the server loaded.  It streams the
 * documents (DOCS is read once, front to back, and may be a pipe): memory
 * holds the queries and the answers, never the corpus, so a 10M-document
 * corpus needs no more memory than a 1,000-document one.
 *
 *	 truth [--metric ip|cosine|l2] top K DOCS QUERIES OUT [QUERIES OUT ...]
 *		For every query, the K best documents (score descending, ties by
 *		smaller id) as lines "qid<TAB>rank<TAB>id<TAB>score", rank 1-based,
 *		score printed with %.17g (exact as a double).  With --metric
 *		cosine or l2 the fourth column is the <=> or <-> distance instead
 *		(below).
 *
 *	 truth [--metric ip|cosine|l2] naive K DOCS QUERIES OUT
 *		The same answer as top, the slow way (bench/selftest compares the
 *		two): every document held in memory, each (document, query) pair's
 *		score computed on its own by merging the two vectors, every
 *		document of a query sorted.
 *
 *	 truth [--metric ip|cosine|l2] eval DOCS QUERIES TRUTH S LIMIT RESULTS
 *			[LIMIT RESULTS ...]
 *		Scores the first S queries of QUERIES.  RESULTS holds the rows an
 *		arm returned, in returned order, as "qid<TAB>id[<TAB>distance]";
 *		LIMIT is the LIMIT the arm ran with; TRUTH is top's output for the
 *		same metric.  Prints one line per RESULTS:
 *		  RESULTS queries=S recall@10=<mean> recall_min=<min> exact=<n>/S
 *
 * Scores are computed as the <#> operator does: the sum of
 * (double) q * (double) w over the common terms, in ascending term order,
 * starting from 0.0.  The top-K pass reads one document at a time and walks
 * its terms in ascending order, adding each term's products into one
 * accumulator per query (all the query files of the command at once, through
 * an inverted index of the queries), so each (document, query) pair sees the
 * same additions in the same order as the operator and gets the same bits.
 * eval first reads the arm's rows, then keeps only the documents they name.
 *
 * --metric cosine ranks by the <=> operator instead (ORDER BY v <=> q), as
 * sparsevec.c computes it: the same dot product, divided by
 * sqrt(|d|^2 * |q|^2) with both squared norms summed from 0.0 as
 * (double) w * (double) w over the vector's elements in ascending order,
 * the quotient clamped to [-1, 1], and 1.0 minus that; the same operations
 * in the same order, so the same bits.  A zero vector (document or query)
 * has distance NaN (0 / 0), which ORDER BY puts after every number: NaN
 * ranks last, and all NaNs tie.  The rank of a distance d is its score
 * -d (NaN: -infinity, below every distance, which lies in [0, 2]), so
 * everything below reads "score" as for <#>; top prints the distance
 * itself ("NaN" for NaN, as the server does) and eval compares an arm's
 * distances with it (NaN equals NaN).
 *
 * --metric l2 ranks by the <-> operator (ORDER BY v <-> q) as sparsevec.c's
 * l2_distance computes it: the two index lists merged in ascending order,
 * over their union, each element's difference (double) d_i - (double) q_i
 * (a missing element is 0: (double) d_i alone, or -(double) q_i) squared
 * and added to a double from 0.0, then sqrt; the same operations in the
 * same order, so the same bits.  (An element stored as 0 adds +0.0, which
 * changes nothing, so dropping zeros on reading is harmless.)  Never NaN
 * for finite weights; the score is -d as for cosine.  top does not merge
 * every pair: from the dot product it accumulates anyway and the two
 * squared norms it gets |d|^2 + |q|^2 - 2 d.q, whose rounding error
 * against the merged sum is bounded (l2_slack), and it merges a pair only
 * when that bound lets the document enter the query's heap; naive merges
 * every pair, and selftest checks that the two agree.
 *
 * recall@10 is tie-aware: with k = min(10, documents), a returned row among
 * the first k counts if its true score is at least the true k-th score, so
 * a row that ties with the k-th counts whichever of the tied ids it is.
 * A query is "exact" when it returned min(LIMIT, documents) distinct rows,
 * at every rank the true score of the returned row equals the true score at
 * that rank, and (if the arm reported distances) each distance equals the
 * negated true score exactly: what an exact index must give.
 *
 * Build: cc -O2 -Wall -Wextra -ffp-contract=off -o truth truth.c -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the ranking: <#> (the default), <=> (--metric cosine) or <-> (--metric l2) */
typedef enum Metric
{
	METRIC_IP,
	METRIC_COSINE,
	METRIC_L2
} Metric;
static Metric metric = METRIC_IP;

/* ranked by a distance (score -d) rather than by the inner product */
#define BY_DISTANCE (metric != METRIC_IP)

typedef struct Vecs
{
	int64_t		n;				/* vectors kept */
	int64_t		total;			/* rows read, kept or not */
	int64_t		cap;
	int64_t    *id;				/* id of each vector, in file order */
	int64_t    *off;			/* postings of vector i: off[i] .. off[i+1]-1 */
	int64_t		npost;
	int64_t		postcap;
	int32_t    *term;			/* 0-based, ascending within a vector */
	float	   *w;
	int32_t		dim;
} Vecs;

static void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (p == NULL)
	{
		fprintf(stderr, "truth: out of memory\n");
		exit(1);
	}
	return p;
}

static void
fail(const char *file, int64_t line, const char *msg)
{
	fprintf(stderr, "truth: %s:%lld: %s\n", file, (long long) line, msg);
	exit(1);
}

static int64_t
parse_int(const char **pp)
{
	const char *p = *pp;
	int64_t		v = 0;
	int			neg = 0;

	if (*p == '-')
	{
		neg = 1;
		p++;
	}
	if (*p < '0' || *p > '9')
	{
		*pp = NULL;
		return 0;
	}
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	*pp = p;
	return neg ? -v : v;
}

static void
vecs_init(Vecs *v)
{
	memset(v, 0, sizeof(*v));
	v->dim = -1;
	v->off = xrealloc(NULL, sizeof(int64_t));
	v->off[0] = 0;
}

/* forget the vectors (not the dimensions), keep the memory */
static void
vecs_clear(Vecs *v)
{
	v->n = 0;
	v->npost = 0;
}

/* parse one "id<TAB>{i:v,...}/dim" row (COPY text, 1-based indices) into v */
static void
parse_row(const char *file, int64_t lineno, const char *line, Vecs *v)
{
	const char *p = line;
	int64_t		id,
				prev = -1,
				dim;

	id = parse_int(&p);
	if (p == NULL || *p++ != '\t' || *p++ != '{')
		fail(file, lineno, "expected \"id<TAB>{\"");
	while (*p != '}')
	{
		int64_t		i = parse_int(&p);
		char	   *end;
		float		x;

		if (p == NULL || *p++ != ':')
			fail(file, lineno, "expected \"index:value\"");
		x = strtof(p, &end);
		if (end == p)
			fail(file, lineno, "bad value");
		p = end;
		if (i <= prev)
			fail(file, lineno, "indices must be ascending (this tool reads gen's output)");
		prev = i;
		if (x != 0.0f)
		{
			if (v->npost == v->postcap)
			{
				v->postcap = v->postcap ? 2 * v->postcap : 1 << 12;
				v->term = xrealloc(v->term, v->postcap * sizeof(int32_t));
				v->w = xrealloc(v->w, v->postcap * sizeof(float));
			}
			v->term[v->npost] = (int32_t) (i - 1);
			v->w[v->npost] = x;
			v->npost++;
		}
		if (*p == ',')
			p++;
		else if (*p != '}')
			fail(file, lineno, "expected ',' or '}'");
	}
	p++;
	if (*p++ != '/')
		fail(file, lineno, "expected \"/dim\"");
	dim = parse_int(&p);
	if (p == NULL || dim <= 0 || prev > dim)
		fail(file, lineno, "bad dimensions");
	if (v->dim < 0)
		v->dim = (int32_t) dim;
	else if (v->dim != dim)
		fail(file, lineno, "dimensions differ between rows");
	if (v->n + 1 >= v->cap)
	{
		v->cap = v->cap ? 2 * v->cap : 1024;
		v->id = xrealloc(v->id, v->cap * sizeof(int64_t));
		v->off = xrealloc(v->off, (v->cap + 1) * sizeof(int64_t));
	}
	v->id[v->n] = id;
	v->off[++v->n] = v->npost;
}

static int
cmp_int64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* a sorted set of ids */
typedef struct IdSet
{
	int64_t		n;
	int64_t    *id;
} IdSet;

/* the first position of sorted a[0..n-1] holding a value >= id */
static int64_t
lower_bound(const int64_t *a, int64_t n, int64_t id)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (a[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
idset_has(const IdSet *set, int64_t id)
{
	int64_t		i = lower_bound(set->id, set->n, id);

	return i < set->n && set->id[i] == id;
}

/*
 * Read the rows of file into v; with keep, only the rows whose id is in keep
 * (the others are counted in v->total, not parsed beyond their id).
 */
static void
read_vecs(const char *file, Vecs *v, const IdSet *keep)
{
	FILE	   *f = fopen(file, "r");
	char	   *line = NULL;
	size_t		linecap = 0;
	int64_t		lineno = 0;

	if (f == NULL)
	{
		perror(file);
		exit(1);
	}
	vecs_init(v);
	while (getline(&line, &linecap, f) > 0)
	{
		lineno++;
		v->total++;
		if (keep)
		{
			const char *p = line;
			int64_t		id = parse_int(&p);

			if (p == NULL)
				fail(file, lineno, "expected \"id<TAB>{\"");
			if (!idset_has(keep, id))
				continue;
		}
		parse_row(file, lineno, line, v);
	}
	if (ferror(f))
	{
		perror(file);
		exit(1);
	}
	free(line);
	fclose(f);
}

/* the <#> operator's sum: common terms, ascending order, double */
static double
dot(const Vecs *a, int64_t i, const Vecs *b, int64_t j)
{
	int64_t		x = a->off[i],
				xe = a->off[i + 1];
	int64_t		y = b->off[j],
				ye = b->off[j + 1];
	double		sum = 0.0;

	while (x < xe && y < ye)
	{
		if (a->term[x] == b->term[y])
		{
			sum += (double) a->w[x] * (double) b->w[y];
			x++;
			y++;
		}
		else if (a->term[x] < b->term[y])
			x++;
		else
			y++;
	}
	return sum;
}

/* the squared norm as the <=> operator sums it: ascending order, double */
static double
squared_norm(const Vecs *a, int64_t i)
{
	double		sum = 0.0;
	int64_t		x;

	for (x = a->off[i]; x < a->off[i + 1]; x++)
		sum = sum + (double) a->w[x] * (double) a->w[x];
	return sum;
}

/*
 * The <=> operator's distance from the dot product and the two squared
 * norms (document first, as in v <=> q; the product is the same either
 * way): NaN when either vector is zero.
 */
static double
cosine_distance(double dot, double dnorm2, double qnorm2)
{
	double		similarity = dot;

	similarity /= sqrt(dnorm2 * qnorm2);
	if (similarity > 1)
		similarity = 1.0;
	else if (similarity < -1)
		similarity = -1.0;
	return 1.0 - similarity;
}

/*
 * The <-> operator's distance, as sparsevec.c's l2_distance computes v <-> q
 * (a the document, b the query): the union of the two index lists in
 * ascending order, each difference squared and added from 0.0, then sqrt.
 */
static double
l2_distance(const Vecs *a, int64_t i, const Vecs *b, int64_t j)
{
	int64_t		x = a->off[i],
				xe = a->off[i + 1];
	int64_t		y = b->off[j],
				ye = b->off[j + 1];
	double		sum = 0.0;

	while (x < xe || y < ye)
	{
		double		d;

		if (y >= ye || (x < xe && a->term[x] < b->term[y]))
			d = (double) a->w[x++];
		else if (x >= xe || b->term[y] < a->term[x])
			d = -(double) b->w[y++];
		else
		{
			d = (double) a->w[x] - (double) b->w[y];
			x++;
			y++;
		}
		sum += d * d;
	}
	return sqrt(sum);
}

/*
 * How far |d|^2 + |q|^2 - 2 d.q, computed from the squared norms and the dot
 * product as top computes them, can lie from the sum l2_distance squares
 * and adds, as a multiple of |d|^2 + |q|^2 (n2 below), for n = nnz(d) +
 * nnz(q).  With u = 2^-53 and R the real |d - q|^2 (at most 2 n2): the
 * products of two floats are exact in double; each squared norm is off by
 * at most ~(n - 1) u of itself and the dot product by ~(n - 1) u of
 * sum |d_i q_i| <= n2 / 2, the two last operations add ~3u n2, so the
 * estimate is within ~(2n + 3) u n2 of R; l2_distance's sum is within
 * ~(n + 3) u R <= (2n + 6) u n2 of R (each difference and square rounded
 * once, n additions).  So they differ by less than (4n + 9) u n2; the slack
 * is 16 (n + 8) u, more than three times that, which also covers the
 * rounding of n2 and of the subtraction that uses the slack.
 */
static double
l2_slack(int64_t n)
{
	return 16.0 * (double) (n + 8) * (1.0 / 9007199254740992.0);
}

/* the score that ranks a distance: -d, NaN last of all */
static double
distance_score(double d)
{
	return isnan(d) ? -INFINITY : -d;
}

/* the distance of a score (the inverse of distance_score) */
static double
score_distance(double sc)
{
	return sc == -INFINITY ? NAN : -sc;
}

/* ---------------------------------------------------------------- top */

typedef struct Hit
{
	double		score;
	int64_t		id;
} Hit;

/* a ranks before b: higher score, then smaller id */
static inline int
before(const Hit *a, const Hit *b)
{
	return a->score > b->score || (a->score == b->score && a->id < b->id);
}

/* min-heap on rank: heap[0] is the worst of the kept hits */
static void
sift_down(Hit *h, int n, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					worst = i;
		Hit			t;

		if (l < n && before(&h[worst], &h[l]))
			worst = l;
		if (l + 1 < n && before(&h[worst], &h[l + 1]))
			worst = l + 1;
		if (worst == i)
			return;
		t = h[i];
		h[i] = h[worst];
		h[worst] = t;
		i = worst;
	}
}

static int
cmp_hit(const void *a, const void *b)
{
	return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* one query's ranked hits as top's lines: the score, or the distance */
static void
print_hits(FILE *out, int64_t qid, const Hit *h, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		double		x = BY_DISTANCE ? score_distance(h[i].score) : h[i].score;

		fprintf(out, "%lld\t%d\t%lld\t", (long long) qid, i + 1, (long long) h[i].id);
		if (isnan(x))
			fprintf(out, "NaN\n");
		else
			fprintf(out, "%.17g\n", x);
	}
}

/*
 * The K best documents of DOCS for every query of every query file, in one
 * pass over DOCS.
 */
static void
top(int k, const char *docfile, int nfiles, char **files)
{
	Vecs	   *q = xrealloc(NULL, nfiles * sizeof(Vecs));
	int64_t    *qoff;			/* query postings of term t: qoff[t] .. qoff[t+1]-1 */
	int64_t    *fill;
	int32_t    *qwho;			/* which query (global index) */
	double	   *qw;
	int64_t    *base;			/* global index of file f's first query */
	int64_t		nq = 0;
	int32_t		dim = -1;
	double	   *acc;
	double	   *qnorm2;			/* --metric cosine, l2: each query's squared norm */
	int		   *qfile;			/* --metric l2: query g is q[qfile[g]] ... */
	int64_t    *qlocal;			/* ... vector qlocal[g] */
	double	   *thr;			/* score a document must reach to enter a heap */
	Hit		   *heap;			/* k per query */
	int		   *hn;
	Vecs		doc;
	FILE	   *f;
	char	   *line = NULL;
	size_t		linecap = 0;
	int64_t		lineno = 0,
				g,
				i,
				t;
	int			fi;

	base = xrealloc(NULL, (nfiles + 1) * sizeof(int64_t));
	for (fi = 0; fi < nfiles; fi++)
	{
		read_vecs(files[2 * fi], &q[fi], NULL);
		if (q[fi].n > 0 && dim >= 0 && q[fi].dim != dim)
			fail(files[2 * fi], 1, "query dimensions differ between query files");
		if (q[fi].n > 0)
			dim = q[fi].dim;
		base[fi] = nq;
		nq += q[fi].n;
	}
	base[nfiles] = nq;

	/* the queries, inverted: for each term, the queries that have it */
	if (dim < 0)
		dim = 0;
	qoff = calloc(dim + 2, sizeof(int64_t));
	fill = xrealloc(NULL, (dim + 1) * sizeof(int64_t));
	if (qoff == NULL)
	{
		fprintf(stderr, "truth: out of memory\n");
		exit(1);
	}
	for (fi = 0; fi < nfiles; fi++)
		for (i = 0; i < q[fi].npost; i++)
			qoff[q[fi].term[i] + 1]++;
	for (t = 0; t < dim; t++)
		qoff[t + 1] += qoff[t];
	memcpy(fill, qoff, (dim + 1) * sizeof(int64_t));
	qwho = xrealloc(NULL, (qoff[dim] + 1) * sizeof(int32_t));
	qw = xrealloc(NULL, (qoff[dim] + 1) * sizeof(double));
	for (fi = 0; fi < nfiles; fi++)
		for (g = 0; g < q[fi].n; g++)
			for (i = q[fi].off[g]; i < q[fi].off[g + 1]; i++)
			{
				int64_t		pos = fill[q[fi].term[i]]++;

				qwho[pos] = (int32_t) (base[fi] + g);
				qw[pos] = q[fi].w[i];
			}

	acc = calloc(nq + 1, sizeof(double));
	qnorm2 = xrealloc(NULL, (nq + 1) * sizeof(double));
	qfile = xrealloc(NULL, (nq + 1) * sizeof(int));
	qlocal = xrealloc(NULL, (nq + 1) * sizeof(int64_t));
	for (fi = 0; fi < nfiles; fi++)
		for (g = 0; g < q[fi].n; g++)
		{
			qnorm2[base[fi] + g] = squared_norm(&q[fi], g);
			qfile[base[fi] + g] = fi;
			qlocal[base[fi] + g] = g;
		}
	thr = xrealloc(NULL, (nq + 1) * sizeof(double));
	hn = calloc(nq + 1, sizeof(int));
	heap = xrealloc(NULL, (nq * (int64_t) k + 1) * sizeof(Hit));
	if (acc == NULL || hn == NULL)
	{
		fprintf(stderr, "truth: out of memory\n");
		exit(1);
	}
	for (g = 0; g < nq; g++)
		thr[g] = -INFINITY;

	f = fopen(docfile, "r");
	if (f == NULL)
	{
		perror(docfile);
		exit(1);
	}
	vecs_init(&doc);
	while (getline(&line, &linecap, f) > 0)
	{
		int64_t		id;
		double		dnorm2;

		lineno++;
		vecs_clear(&doc);
		parse_row(docfile, lineno, line, &doc);
		if (nq > 0 && doc.dim != dim)
			fail(docfile, lineno, "the documents' dimensions differ from the queries'");
		id = doc.id[0];
		dnorm2 = BY_DISTANCE ? squared_norm(&doc, 0) : 0.0;
		/* ascending document terms: each query adds in ascending term order */
		for (i = 0; i < doc.npost; i++)
		{
			double		w = doc.w[i];
			int32_t		dt = doc.term[i];

			for (t = qoff[dt]; t < qoff[dt + 1]; t++)
				acc[qwho[t]] += qw[t] * w;
		}
		/* every query sees every document, also those scoring 0 */
		for (g = 0; g < nq; g++)
		{
			double		x = acc[g];

			acc[g] = 0.0;
			if (metric == METRIC_COSINE)
				x = distance_score(cosine_distance(x, dnorm2, qnorm2[g]));
			else if (metric == METRIC_L2)
			{
				const Vecs *qv = &q[qfile[g]];
				int64_t		ql = qlocal[g];

				/*
				 * A full heap: skip the merge when even the least the merged
				 * sum can be (the estimate less its slack) makes a distance
				 * beyond the heap's worst, -thr[g] (sqrt is monotone, so the
				 * document's distance is beyond it too, not even a tie).
				 */
				if (hn[g] == k)
				{
					double		n2 = dnorm2 + qnorm2[g];
					double		low = (n2 - 2.0 * x) -
						l2_slack(doc.npost + qv->off[ql + 1] - qv->off[ql]) * n2;

					if (low > 0 && sqrt(low) > -thr[g])
						continue;
				}
				x = distance_score(l2_distance(&doc, 0, qv, ql));
			}
			if (x >= thr[g])
			{
				Hit			h = {x, id};
				Hit		   *hp = heap + g * k;

				if (hn[g] < k)
				{
					int			c = hn[g]++;

					/* sift up */
					hp[c] = h;
					while (c > 0 && before(&hp[(c - 1) / 2], &hp[c]))
					{
						Hit			tmp = hp[c];

						hp[c] = hp[(c - 1) / 2];
						hp[(c - 1) / 2] = tmp;
						c = (c - 1) / 2;
					}
				}
				else if (before(&h, &hp[0]))
				{
					hp[0] = h;
					sift_down(hp, k, 0);
				}
				if (hn[g] == k)
					thr[g] = hp[0].score;
			}
		}
		if (lineno % 1000000 == 0)
			fprintf(stderr, "truth: %lld documents\n", (long long) lineno);
	}
	if (ferror(f))
	{
		perror(docfile);
		exit(1);
	}
	fclose(f);
	free(line);

	for (fi = 0; fi < nfiles; fi++)
	{
		const char *outfile = files[2 * fi + 1];
		FILE	   *out = fopen(outfile, "w");

		if (out == NULL)
		{
			perror(outfile);
			exit(1);
		}
		for (g = 0; g < q[fi].n; g++)
		{
			Hit		   *hp = heap + (base[fi] + g) * k;
			int			n = hn[base[fi] + g];

			qsort(hp, n, sizeof(Hit), cmp_hit);
			print_hits(out, q[fi].id[g], hp, n);
		}
		if (fclose(out) != 0)
		{
			perror(outfile);
			exit(1);
		}
		fprintf(stderr, "truth: %s: top %d of %lld documents for %lld queries\n",
				outfile, k, (long long) lineno, (long long) q[fi].n);
	}
	free(qoff);
	free(fill);
	free(qwho);
	free(qw);
	free(acc);
	free(qnorm2);
	free(qfile);
	free(qlocal);
	free(thr);
	free(hn);
	free(heap);
	free(base);
}

/*
 * naive: top's answer the slow way, for bench/selftest to check top
 * against: every (document, query) pair scored on its own by merging the
 * two vectors (dot, or l2_distance), every document of a query sorted.
 */
static double
pair_score(const Vecs *d, int64_t i, const Vecs *q, int64_t j)
{
	switch (metric)
	{
		case METRIC_COSINE:
			return distance_score(cosine_distance(dot(d, i, q, j), squared_norm(d, i),
												  squared_norm(q, j)));
		case METRIC_L2:
			return distance_score(l2_distance(d, i, q, j));
		default:
			return dot(d, i, q, j);
	}
}

static void
naive(int k, const char *docfile, const char *qfile, const char *outfile)
{
	Vecs		docs,
				q;
	Hit		   *h;
	FILE	   *out;
	int64_t		i,
				j;

	read_vecs(docfile, &docs, NULL);
	read_vecs(qfile, &q, NULL);
	h = xrealloc(NULL, (docs.n + 1) * sizeof(Hit));
	out = fopen(outfile, "w");
	if (out == NULL)
	{
		perror(outfile);
		exit(1);
	}
	for (j = 0; j < q.n; j++)
	{
		for (i = 0; i < docs.n; i++)
		{
			h[i].score = pair_score(&docs, i, &q, j);
			h[i].id = docs.id[i];
		}
		qsort(h, docs.n, sizeof(Hit), cmp_hit);
		print_hits(out, q.id[j], h, docs.n < k ? (int) docs.n : k);
	}
	if (fclose(out) != 0)
	{
		perror(outfile);
		exit(1);
	}
	free(h);
}

/* --------------------------------------------------------------- eval */

/* document index by id: ids sorted, with their positions */
typedef struct IdIndex
{
	int64_t		n;
	int64_t    *id;
	int64_t    *pos;
} IdIndex;

static int64_t *sort_ids;

static int
cmp_by_id(const void *a, const void *b)
{
	int64_t		x = sort_ids[*(const int64_t *) a],
				y = sort_ids[*(const int64_t *) b];

	return x < y ? -1 : x > y;
}

static void
id_index(const Vecs *v, IdIndex *ix)
{
	int64_t		i;

	ix->n = v->n;
	ix->pos = xrealloc(NULL, v->n * sizeof(int64_t));
	ix->id = xrealloc(NULL, v->n * sizeof(int64_t));
	for (i = 0; i < v->n; i++)
		ix->pos[i] = i;
	sort_ids = v->id;
	qsort(ix->pos, v->n, sizeof(int64_t), cmp_by_id);
	for (i = 0; i < v->n; i++)
		ix->id[i] = v->id[ix->pos[i]];
}

static int64_t
id_lookup(const IdIndex *ix, int64_t id)
{
	int64_t		i = lower_bound(ix->id, ix->n, id);

	return i < ix->n && ix->id[i] == id ? ix->pos[i] : -1;
}

typedef struct Row
{
	int64_t		qid;
	int64_t		a;				/* truth: rank; results: id */
	int64_t		b;				/* truth: id */
	double		x;				/* truth: score; results: distance */
	int			has_x;
} Row;

/* read tab-separated rows: truth (qid rank id score) or results (qid id [dist]) */
static Row *
read_rows(const char *file, int truth, int64_t *nrows)
{
	FILE	   *f = fopen(file, "r");
	char	   *line = NULL;
	size_t		linecap = 0;
	int64_t		n = 0,
				cap = 0,
				lineno = 0;
	Row		   *rows = NULL;

	if (f == NULL)
	{
		perror(file);
		exit(1);
	}
	while (getline(&line, &linecap, f) > 0)
	{
		const char *p = line;
		Row			r;

		lineno++;
		memset(&r, 0, sizeof(r));
		r.qid = parse_int(&p);
		if (p == NULL || *p++ != '\t')
			fail(file, lineno, "bad row");
		r.a = parse_int(&p);
		if (p == NULL)
			fail(file, lineno, "bad row");
		if (truth)
		{
			if (*p++ != '\t')
				fail(file, lineno, "bad row");
			r.b = parse_int(&p);
			if (p == NULL)
				fail(file, lineno, "bad row");
		}
		if (*p == '\t' && p[1] != '\n' && p[1] != '\0')
		{
			char	   *end;

			r.x = strtod(p + 1, &end);
			if (end == p + 1)
				fail(file, lineno, "bad number");
			r.has_x = 1;
		}
		else if (truth)
			fail(file, lineno, "missing score");
		if (n == cap)
		{
			cap = cap ? 2 * cap : 4096;
			rows = xrealloc(rows, cap * sizeof(Row));
		}
		rows[n++] = r;
	}
	free(line);
	fclose(f);
	*nrows = n;
	return rows;
}

static void
eval(const char *docfile, const char *qfile, const char *tfile, int64_t s,
	 int nres, char **res)
{
	Vecs		docs,
				q;
	IdIndex		dix,
				qix;
	IdSet		keep;
	Row		   *truth;
	Row		  **results;
	int64_t    *nresults;
	int64_t		ntruth,
				ndocs,
				i,
				j;
	int64_t    *tstart;			/* first truth row of query position j */
	int			r;

	read_vecs(qfile, &q, NULL);
	if (s > q.n)
		s = q.n;
	id_index(&q, &qix);
	truth = read_rows(tfile, 1, &ntruth);
	tstart = xrealloc(NULL, (q.n + 1) * sizeof(int64_t));
	for (j = 0; j <= q.n; j++)
		tstart[j] = -1;
	for (i = ntruth - 1; i >= 0; i--)
	{
		int64_t		qp = id_lookup(&qix, truth[i].qid);

		if (qp < 0)
			fail(tfile, i + 1, "unknown query id");
		tstart[qp] = i;
		if (BY_DISTANCE)
			truth[i].x = distance_score(truth[i].x);	/* ranks as a score */
	}

	/* the arms' rows first: then only the documents they name are kept */
	results = xrealloc(NULL, (nres / 2 + 1) * sizeof(Row *));
	nresults = xrealloc(NULL, (nres / 2 + 1) * sizeof(int64_t));
	keep.n = 0;
	keep.id = NULL;
	for (r = 0; r + 1 < nres; r += 2)
	{
		results[r / 2] = read_rows(res[r + 1], 0, &nresults[r / 2]);
		keep.id = xrealloc(keep.id, (keep.n + nresults[r / 2] + 1) * sizeof(int64_t));
		for (i = 0; i < nresults[r / 2]; i++)
			keep.id[keep.n++] = results[r / 2][i].a;
	}
	qsort(keep.id, keep.n, sizeof(int64_t), cmp_int64);
	for (i = 0, j = 0; i < keep.n; i++)
		if (j == 0 || keep.id[j - 1] != keep.id[i])
			keep.id[j++] = keep.id[i];
	keep.n = j;
	read_vecs(docfile, &docs, &keep);
	ndocs = docs.total;
	id_index(&docs, &dix);

	for (r = 0; r + 1 < nres; r += 2)
	{
		int			limit = atoi(res[r]);
		const char *file = res[r + 1];
		int64_t		nrows = nresults[r / 2];
		Row		   *rows = results[r / 2];
		int64_t    *rstart = xrealloc(NULL, q.n * sizeof(int64_t));
		int64_t    *rcount = calloc(q.n, sizeof(int64_t));
		double		rsum = 0.0,
					rmin = 1.0;
		int64_t		exact = 0;

		for (j = 0; j < q.n; j++)
			rstart[j] = -1;
		for (i = 0; i < nrows; i++)
		{
			int64_t		qp = id_lookup(&qix, rows[i].qid);

			if (qp < 0)
				fail(file, i + 1, "unknown query id");
			if (rstart[qp] < 0)
				rstart[qp] = i;
			else if (rstart[qp] + rcount[qp] != i)
				fail(file, i + 1, "rows of one query must be contiguous");
			rcount[qp]++;
		}

		for (j = 0; j < s; j++)
		{
			int64_t		k = ndocs < 10 ? ndocs : 10;
			int64_t		want = ndocs < limit ? ndocs : limit;
			int64_t		t0 = tstart[j];
			int64_t		tn = 0;
			double		kth;
			int64_t		hits = 0;
			int			ok = 1;

			if (t0 < 0)
				fail(tfile, 0, "a query of the sample has no truth rows");
			while (t0 + tn < ntruth && truth[t0 + tn].qid == q.id[j])
				tn++;
			if (tn < k)
				fail(tfile, 0, "truth is shallower than 10");
			kth = truth[t0 + k - 1].x;
			if (rcount[j] != want)
				ok = 0;
			for (i = 0; i < rcount[j]; i++)
			{
				Row		   *row = &rows[rstart[j] + i];
				int64_t		d = id_lookup(&dix, row->a);
				double		sc;
				int64_t		e;

				if (d < 0)
				{
					ok = 0;
					continue;
				}
				for (e = 0; e < i; e++)
					if (rows[rstart[j] + e].a == row->a)
						break;
				if (e < i)
				{
					ok = 0;		/* duplicate */
					continue;
				}
				sc = pair_score(&docs, d, &q, j);
				if (i < k && sc >= kth)
					hits++;
				if (i >= tn || sc != truth[t0 + i].x)
					ok = 0;
				if (row->has_x && !BY_DISTANCE && row->x != -sc)
					ok = 0;
				if (row->has_x && BY_DISTANCE &&
					!(isnan(row->x) ? sc == -INFINITY : row->x == score_distance(sc)))
					ok = 0;
			}
			rsum += (double) hits / k;
			if ((double) hits / k < rmin)
				rmin = (double) hits / k;
			exact += ok;
		}
		printf("%s queries=%lld recall@10=%.4f recall_min=%.2f exact=%lld/%lld\n",
			   file, (long long) s, s ? rsum / s : 0.0, s ? rmin : 0.0,
			   (long long) exact, (long long) s);
		free(rows);
		free(rstart);
		free(rcount);
	}
	free(tstart);
	free(truth);
	free(results);
	free(nresults);
	free(keep.id);
}

static void
usage(void)
{
	fprintf(stderr,
			"usage: truth [--metric ip|cosine|l2] top K DOCS QUERIES OUT [QUERIES OUT ...]\n"
			"       truth [--metric ip|cosine|l2] naive K DOCS QUERIES OUT\n"
			"       truth [--metric ip|cosine|l2] eval DOCS QUERIES TRUTH S LIMIT RESULTS [LIMIT RESULTS ...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--metric") == 0)
	{
		if (strcmp(argv[2], "cosine") == 0)
			metric = METRIC_COSINE;
		else if (strcmp(argv[2], "l2") == 0)
			metric = METRIC_L2;
		else if (strcmp(argv[2], "ip") != 0)
			usage();
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	if (argc >= 6 && strcmp(argv[1], "top") == 0 && argc % 2 == 0)
	{
		int			k = atoi(argv[2]);

		if (k <= 0)
			usage();
		top(k, argv[3], (argc - 4) / 2, argv + 4);
	}
	else if (argc == 6 && strcmp(argv[1], "naive") == 0)
	{
		int			k = atoi(argv[2]);

		if (k <= 0)
			usage();
		naive(k, argv[3], argv[4], argv[5]);
	}
	else if (argc >= 8 && strcmp(argv[1], "eval") == 0 && argc % 2 == 0)
		eval(argv[2], argv[3], argv[4], atoll(argv[5]), argc - 6, argv + 6);
	else
		usage();
	return 0;
}

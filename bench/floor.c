/*
 * bench/floor.c: the in-memory floor arm of bench/run.  The same queries,
 * answered by a plain term-at-a-time loop over the corpus held in RAM as
 * an inverted index, no database: what any exact engine must at least do
 * (read every posting of every query term once), without pages, tuples,
 * executor or client.  bench/run reports each index arm's p50 as a
 * multiple of this one, per query set.
 *
 *	 floor DOCS SECONDS NRECALL QUERIES ROWS LAT [QUERIES ROWS LAT ...]
 *
 * DOCS is the COPY text the server loaded ("id<TAB>{i:v,...}/dim",
 * indices ascending, as bench/gen, bench/corpus and the text tier write
 * it).  Per query file: the queries are run in rounds, each round all of
 * them in a new random order (fixed seed), until SECONDS have passed (at
 * least one round); every query's time goes to LAT as a pgbench -l style
 * line "0 n microseconds cpu_microseconds" (bench/run's latency_stats reads
 * the third column, the wall-clock time as pgbench's; the fourth is the
 * thread's CPU time, without the time the query waited for a core).  ROWS gets
 * the top 10 of the first NRECALL queries as "qid<TAB>id<TAB>distance",
 * which bench/truth.c eval checks like any arm's rows.
 *
 * One query, term at a time in windows of WINDOW documents (so that the
 * accumulators stay in the CPU's cache; one pass over all documents at
 * once made each posting a cache miss and the loop slower than the index on
 * the real-text tier's 590,000 documents): for each window that a query
 * term has postings in, for the query's terms in ascending term order, for
 * every posting (document, weight) of the term inside the window: a
 * document seen for the first time (a stamp array) starts its accumulator
 * at 0.0 and joins the touched list; then acc += (double) q * (double) w.
 * After the window its touched documents are offered to a heap of 10
 * (score descending, ties by smaller id), those below the heap's 10th
 * score without reading their ids.  If fewer than 10 were touched, or the
 * 10th score is not above 0, untouched documents (score 0) fill up in id
 * order (run_query).  Each document sees
 * the same additions in the same order as the <#> operator, so the scores
 * are its bit for bit.  Nothing per query is sized by the corpus: the work
 * is the postings read, the touched documents and a cursor step per term
 * and window.
 *
 * Build: cc -O2 -Wall -Wextra -ffp-contract=off -o floor floor.c
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Under valgrind --tool=callgrind --instr-atstart=no only the timed rounds
 * are instrumented (bench/kernel.sh: instructions per posting, with
 * SECONDS 0 for one round); elsewhere these are no-ops.
 */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define TOPK 10
#define WINDOW 16384			/* documents per window: 192 kB of accumulators and stamps */

typedef struct Vecs
{
	int64_t		n;
	int64_t		cap;
	int64_t    *id;
	int64_t    *off;
	int64_t		npost;
	int64_t		postcap;
	int32_t    *term;			/* 0-based */
	float	   *w;
	int64_t		dim;
} Vecs;

typedef struct Hit
{
	double		score;
	int64_t		id;
} Hit;

static void *
xmalloc(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "floor: out of memory\n");
		exit(1);
	}
	return p;
}

static void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (p == NULL)
	{
		fprintf(stderr, "floor: out of memory\n");
		exit(1);
	}
	return p;
}

static void
fail(const char *file, int64_t line, const char *msg)
{
	fprintf(stderr, "floor: %s:%lld: %s\n", file, (long long) line, msg);
	exit(1);
}

/* rows "id<TAB>{i:v,...}/dim" with ascending indices */
static void
read_vecs(const char *file, Vecs *v)
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
	memset(v, 0, sizeof(*v));
	v->dim = -1;
	v->off = xmalloc(sizeof(int64_t));
	v->off[0] = 0;
	while (getline(&line, &linecap, f) > 0)
	{
		char	   *p = line,
				   *end;
		int64_t		id,
					prev = 0,
					dim;

		lineno++;
		id = strtoll(p, &end, 10);
		if (end == p || *end != '\t' || end[1] != '{')
			fail(file, lineno, "expected \"id<TAB>{\"");
		p = end + 2;
		while (*p != '}')
		{
			long		i = strtol(p, &end, 10);
			float		x;

			if (end == p || *end != ':' || i <= prev)
				fail(file, lineno, "expected ascending \"index:value\"");
			p = end + 1;
			x = strtof(p, &end);
			if (end == p)
				fail(file, lineno, "bad value");
			p = end;
			prev = i;
			if (v->npost == v->postcap)
			{
				v->postcap = v->postcap ? 2 * v->postcap : 1 << 16;
				v->term = xrealloc(v->term, v->postcap * sizeof(int32_t));
				v->w = xrealloc(v->w, v->postcap * sizeof(float));
			}
			v->term[v->npost] = (int32_t) (i - 1);
			v->w[v->npost] = x;
			v->npost++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				fail(file, lineno, "expected ',' or '}'");
		}
		if (p[1] != '/')
			fail(file, lineno, "expected \"/dim\"");
		dim = strtoll(p + 2, &end, 10);
		if (end == p + 2 || dim < prev)
			fail(file, lineno, "bad dimensions");
		if (v->dim < 0)
			v->dim = dim;
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
	free(line);
	fclose(f);
}

/* a ranks before b: higher score, then smaller id */
static inline int
before(const Hit *a, const Hit *b)
{
	return a->score > b->score || (a->score == b->score && a->id < b->id);
}

static void
heap_offer(Hit *h, int *n, Hit x)
{
	int			c;

	if (*n < TOPK)
	{
		c = (*n)++;
		h[c] = x;
		while (c > 0 && before(&h[(c - 1) / 2], &h[c]))
		{
			Hit			t = h[c];

			h[c] = h[(c - 1) / 2];
			h[(c - 1) / 2] = t;
			c = (c - 1) / 2;
		}
		return;
	}
	if (!before(&x, &h[0]))
		return;
	h[0] = x;
	c = 0;
	for (;;)
	{
		int			l = 2 * c + 1,
					worst = c;
		Hit			t;

		if (l < TOPK && before(&h[worst], &h[l]))
			worst = l;
		if (l + 1 < TOPK && before(&h[worst], &h[l + 1]))
			worst = l + 1;
		if (worst == c)
			break;
		t = h[c];
		h[c] = h[worst];
		h[worst] = t;
		c = worst;
	}
}

static int
cmp_hit(const void *a, const void *b)
{
	return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* the corpus as an inverted index */
typedef struct Index
{
	int64_t		ndocs;
	int64_t		dim;
	int64_t    *start;			/* postings of term t: start[t] .. start[t+1]-1 */
	int32_t    *doc;			/* document position (file order) */
	float	   *w;
	int64_t    *id;				/* id of a document position */
	int32_t    *by_id;			/* document positions in id order */
	double	   *acc;			/* WINDOW */
	uint32_t   *stamp;			/* WINDOW */
	int32_t    *touched;		/* WINDOW */
	uint32_t	gen;
	uint32_t   *seen;			/* ndocs: stamp of the query that touched it */
	uint32_t	qgen;
	int64_t    *cur;			/* per query term: next posting */
	int64_t		curcap;
} Index;

static int64_t *sort_ids;

static int
cmp_pos_by_id(const void *a, const void *b)
{
	int64_t		x = sort_ids[*(const int32_t *) a],
				y = sort_ids[*(const int32_t *) b];

	return (x > y) - (x < y);
}

static void
build_index(Vecs *d, Index *ix)
{
	int64_t    *fill;

	ix->ndocs = d->n;
	ix->dim = d->dim < 0 ? 0 : d->dim;
	if (d->n >= INT32_MAX)
	{
		fprintf(stderr, "floor: too many documents\n");
		exit(1);
	}
	ix->start = calloc(ix->dim + 2, sizeof(int64_t));
	fill = xmalloc((ix->dim + 1) * sizeof(int64_t));
	if (ix->start == NULL)
	{
		fprintf(stderr, "floor: out of memory\n");
		exit(1);
	}
	for (int64_t i = 0; i < d->npost; i++)
		ix->start[d->term[i] + 1]++;
	for (int64_t t = 0; t < ix->dim; t++)
		ix->start[t + 1] += ix->start[t];
	memcpy(fill, ix->start, (ix->dim + 1) * sizeof(int64_t));
	ix->doc = xmalloc(d->npost * sizeof(int32_t));
	ix->w = xmalloc(d->npost * sizeof(float));
	/* documents in file order: each posting list comes out in that order */
	for (int64_t g = 0; g < d->n; g++)
		for (int64_t i = d->off[g]; i < d->off[g + 1]; i++)
		{
			int64_t		pos = fill[d->term[i]]++;

			ix->doc[pos] = (int32_t) g;
			ix->w[pos] = d->w[i];
		}
	free(fill);
	free(d->term);
	free(d->w);
	d->term = NULL;
	d->w = NULL;
	ix->id = d->id;
	ix->by_id = xmalloc(d->n * sizeof(int32_t));
	for (int64_t g = 0; g < d->n; g++)
		ix->by_id[g] = (int32_t) g;
	sort_ids = ix->id;
	qsort(ix->by_id, d->n, sizeof(int32_t), cmp_pos_by_id);
	ix->acc = xmalloc(WINDOW * sizeof(double));
	ix->stamp = calloc(WINDOW, sizeof(uint32_t));
	ix->touched = xmalloc(WINDOW * sizeof(int32_t));
	ix->seen = calloc(d->n ? d->n : 1, sizeof(uint32_t));
	if (ix->stamp == NULL || ix->seen == NULL)
	{
		fprintf(stderr, "floor: out of memory\n");
		exit(1);
	}
	ix->gen = 0;
	ix->qgen = 0;
	ix->cur = NULL;
	ix->curcap = 0;
}

/*
 * Query j of q: its top hits into h (sorted), returns how many.  Only when
 * untouched documents (score 0) may rank -- fewer than 10 touched, or the
 * 10th score not above 0 -- does it need to know which documents were
 * touched: then the query runs again with mark, stamping each touched
 * document in seen.  Otherwise a touched document below the 10th score
 * costs nothing past its accumulator (at 2.2M documents the stamp and the
 * id of every touched document, one cache miss each, took 70% of the
 * loop's time).
 */
static int
run_query(Index *ix, const Vecs *q, int64_t j, Hit *h, bool mark)
{
	int			n = 0;
	int64_t		nq = q->off[j + 1] - q->off[j];
	int64_t		lo = 0;
	uint32_t	qgen = ++ix->qgen;

	if (qgen == 0)				/* wrapped: clear the marks once */
	{
		memset(ix->seen, 0, ix->ndocs * sizeof(uint32_t));
		qgen = ix->qgen = 1;
	}
	if (nq > ix->curcap)
	{
		ix->curcap = nq;
		ix->cur = xrealloc(ix->cur, nq * sizeof(int64_t));
	}
	for (int64_t i = 0; i < nq; i++)
	{
		int64_t		t = q->term[q->off[j] + i];

		ix->cur[i] = t < ix->dim ? ix->start[t] : 0;
	}
	/* the windows, each from the smallest document any cursor is at */
	for (;;)
	{
		int64_t		next = ix->ndocs,
					nt = 0;
		uint32_t	gen;

		for (int64_t i = 0; i < nq; i++)
		{
			int64_t		t = q->term[q->off[j] + i];

			if (t < ix->dim && ix->cur[i] < ix->start[t + 1] && ix->doc[ix->cur[i]] < next)
				next = ix->doc[ix->cur[i]];
		}
		if (next >= ix->ndocs)
			break;
		lo = next - next % WINDOW;
		gen = ++ix->gen;
		if (gen == 0)
		{
			memset(ix->stamp, 0, WINDOW * sizeof(uint32_t));
			gen = ix->gen = 1;
		}
		for (int64_t i = 0; i < nq; i++)
		{
			int64_t		t = q->term[q->off[j] + i],
						p,
						end;
			double		qw = q->w[q->off[j] + i];

			if (t >= ix->dim)
				continue;
			end = ix->start[t + 1];
			for (p = ix->cur[i]; p < end && ix->doc[p] < lo + WINDOW; p++)
			{
				int32_t		d = ix->doc[p] - (int32_t) lo;

				if (ix->stamp[d] != gen)
				{
					ix->stamp[d] = gen;
					ix->acc[d] = 0.0;
					ix->touched[nt++] = d;
				}
				ix->acc[d] += qw * (double) ix->w[p];
			}
			ix->cur[i] = p;
		}
		for (int64_t k = 0; k < nt; k++)
		{
			int32_t		d = ix->touched[k];

			if (mark)
				ix->seen[lo + d] = qgen;
			/* below the 10th score: cannot rank, and its id is not read */
			if (n == TOPK && ix->acc[d] < h[0].score)
				continue;
			{
				Hit			x = {ix->acc[d], ix->id[lo + d]};

				heap_offer(h, &n, x);
			}
		}
	}
	/* untouched documents score 0: the first ones by id, if they rank */
	if ((n < TOPK || h[0].score <= 0.0) && !mark)
		return run_query(ix, q, j, h, true);
	if (n < TOPK || h[0].score <= 0.0)
		for (int64_t k = 0, found = 0; k < ix->ndocs && found < TOPK; k++)
		{
			int32_t		d = ix->by_id[k];

			if (ix->seen[d] == qgen)
				continue;
			found++;
			{
				Hit			x = {0.0, ix->id[d]};

				heap_offer(h, &n, x);
			}
		}
	qsort(h, n, sizeof(Hit), cmp_hit);
	return n;
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time of this thread: what a query cost without the time it waited */
static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* xorshift64*, for the query order */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

int
main(int argc, char **argv)
{
	Vecs		docs;
	Index		ix;
	double		seconds;
	int64_t		nrecall;
	double		t0;

	if (argc < 7 || (argc - 4) % 3 != 0)
	{
		fprintf(stderr, "usage: floor DOCS SECONDS NRECALL QUERIES ROWS LAT [QUERIES ROWS LAT ...]\n");
		return 2;
	}
	seconds = atof(argv[2]);
	nrecall = atoll(argv[3]);
	t0 = now_us();
	read_vecs(argv[1], &docs);
	build_index(&docs, &ix);
	fprintf(stderr, "floor: %lld documents, %lld postings in memory (%.0f MB) in %.1f s\n",
			(long long) ix.ndocs, (long long) ix.start[ix.dim],
			(ix.start[ix.dim] * 8.0 + ix.ndocs * 24.0 + ix.dim * 8.0) / 1e6, (now_us() - t0) / 1e6);

	for (int a = 4; a + 2 < argc; a += 3)
	{
		Vecs		q;
		FILE	   *rows,
				   *lat;
		int64_t    *order,
					rounds = 0,
					runs = 0;
		Hit			h[TOPK];
		double		start;

		read_vecs(argv[a], &q);
		if (q.n > 0 && q.dim != ix.dim && ix.ndocs > 0)
			fail(argv[a], 1, "the queries' dimensions differ from the documents'");
		rows = fopen(argv[a + 1], "w");
		lat = fopen(argv[a + 2], "w");
		if (rows == NULL || lat == NULL)
		{
			perror(rows == NULL ? argv[a + 1] : argv[a + 2]);
			return 1;
		}
		/* the answers, for the exactness check */
		for (int64_t j = 0; j < q.n && j < nrecall; j++)
		{
			int			n = run_query(&ix, &q, j, h, false);

			for (int i = 0; i < n; i++)
				fprintf(rows, "%lld\t%lld\t%.17g\n", (long long) q.id[j], (long long) h[i].id,
						-h[i].score);
		}
		/* the timed rounds */
		order = xmalloc((q.n ? q.n : 1) * sizeof(int64_t));
		for (int64_t j = 0; j < q.n; j++)
			order[j] = j;
		CALLGRIND_START_INSTRUMENTATION;
		start = now_us();
		while (q.n > 0 && (rounds == 0 || now_us() - start < seconds * 1e6))
		{
			for (int64_t j = q.n - 1; j > 0; j--)
			{
				int64_t		k = (int64_t) (rng_next() % (uint64_t) (j + 1)),
							t = order[j];

				order[j] = order[k];
				order[k] = t;
			}
			for (int64_t j = 0; j < q.n; j++)
			{
				double		b = now_us(),
							c = cpu_us(),
							wall,
							cpu;
				volatile int n = run_query(&ix, &q, order[j], h, false);

				(void) n;
				cpu = cpu_us() - c;
				wall = now_us() - b;
				fprintf(lat, "0 %lld %.3f %.3f\n", (long long) runs++, wall, cpu);
			}
			rounds++;
		}
		CALLGRIND_STOP_INSTRUMENTATION;
		fclose(rows);
		fclose(lat);
		fprintf(stderr, "floor: %s: %lld queries, %lld rounds, %lld timed runs\n",
				argv[a], (long long) q.n, (long long) rounds, (long long) runs);
		free(order);
	}
	return 0;
}

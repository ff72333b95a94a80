/*
 * bench/paired.c: arms that answer the same queries, timed query by query
 * side by side (bench/run's "paired" table; bench/README.md "Paired
 * arms").
 *
 *   paired CONNINFO SQL NQ SECONDS SEED OUT NAME=OPTIONS...
 *
 * Opens NCONN connections per arm, with OPTIONS as the connections'
 * options (for example "-c sparse_maxscore.algorithm=maxscore"), and
 * prepares SQL there: one statement whose only parameter, $1, is a query
 * id from 1 to NQ.  Each connection first answers every query once, not
 * timed, so that its backend has read what the queries read (its caches
 * and its mappings of shared buffers are what a pooled connection has).
 * Then rounds until SECONDS have passed: the queries in a random order
 * (SEED), and for each query every arm once, back to back, the arm that
 * goes first rotating from query to query, and each arm's connections
 * taking turns (two backends running the same statement differ by a
 * percent or two for their whole life, which one arm should not carry
 * alone).  An arm's latency is the wall time of its execute and of
 * reading its result.
 *
 * Why: runs of the same statement on this project's machine move by 20%
 * and more from one second to the next, so two arms measured seconds
 * apart, even in alternating slices, cannot be told apart at a few
 * percent.  Arms run back to back on the same query share the machine's
 * state of the moment (doc/decisions.md "Paired arms").
 *
 * OUT gets one line per execution: arm, query id, round, microseconds.
 * stdout gets one line per arm: name, executions, p50, p90, p99 and mean
 * in ms, then the median over the queries of the arm's mean time on the
 * query divided by the first arm's (1 for the first arm).  Exit status 0,
 * or 1 on any error (a failed connection or statement).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#define MAX_ARMS 16
#define NCONN	2

typedef struct Arm
{
	const char *name;
	const char *options;
	PGconn	   *conn[NCONN];
	double	   *us;				/* us[i]: the i-th execution */
	int		   *qid;			/* its query */
	long		n;
	long		cap;
} Arm;

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* xorshift64*: the query order, the same for a given seed */
static unsigned long long rng_state;

static unsigned long long
rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* the p-quantile of sorted v[0 .. n-1], nearest rank */
static double
quantile(const double *v, long n, double p)
{
	long		r = (long) (p * n + 0.999999);

	if (n == 0)
		return 0.0;
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

static void
die(const char *what, PGconn *conn)
{
	fprintf(stderr, "paired: %s: %s", what, conn ? PQerrorMessage(conn) : "\n");
	exit(1);
}

/* run query qid on arm a's connection c; the microseconds it took */
static double
run_one(Arm *a, int c, int qid)
{
	char		buf[16];
	const char *val[1] = {buf};
	double		t0;
	PGresult   *res;
	double		us;

	snprintf(buf, sizeof(buf), "%d", qid);
	t0 = now_us();
	res = PQexecPrepared(a->conn[c], "s", 1, val, NULL, NULL, 0);
	us = now_us() - t0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die(a->name, a->conn[c]);
	PQclear(res);
	return us;
}

int
main(int argc, char **argv)
{
	const char *conninfo,
			   *sql,
			   *out;
	int			nq,
				narms;
	double		seconds;
	Arm			arms[MAX_ARMS];
	int		   *order;
	FILE	   *f;
	double		start;
	int			round = 0;
	double	   *sum;		/* sum[a * nq + q - 1]: arm a's time on query q */

	if (argc < 8 || argc - 7 > MAX_ARMS)
	{
		fprintf(stderr, "usage: paired CONNINFO SQL NQ SECONDS SEED OUT NAME=OPTIONS... (at most %d arms)\n", MAX_ARMS);
		return 1;
	}
	conninfo = argv[1];
	sql = argv[2];
	nq = atoi(argv[3]);
	seconds = atof(argv[4]);
	rng_state = strtoull(argv[5], NULL, 10) * 2 + 1;
	out = argv[6];
	narms = argc - 7;
	if (nq < 1 || !(seconds > 0))
	{
		fprintf(stderr, "paired: NQ must be at least 1 and SECONDS above 0\n");
		return 1;
	}

	for (int a = 0; a < narms; a++)
	{
		char	   *eq = strchr(argv[7 + a], '=');
		const char *kw[] = {"dbname", "options", NULL};
		const char *vals[3];

		if (eq == NULL)
		{
			fprintf(stderr, "paired: an arm is NAME=OPTIONS, not \"%s\"\n", argv[7 + a]);
			return 1;
		}
		*eq = '\0';
		arms[a].name = argv[7 + a];
		arms[a].options = eq + 1;
		vals[0] = conninfo;
		vals[1] = arms[a].options;
		vals[2] = NULL;
		for (int c = 0; c < NCONN; c++)
		{
			PGresult   *res;

			/* expand_dbname: CONNINFO may be a connection string */
			arms[a].conn[c] = PQconnectdbParams(kw, vals, 1);
			if (PQstatus(arms[a].conn[c]) != CONNECTION_OK)
				die(arms[a].name, arms[a].conn[c]);
			res = PQprepare(arms[a].conn[c], "s", sql, 1, NULL);
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				die(arms[a].name, arms[a].conn[c]);
			PQclear(res);
		}
		arms[a].n = 0;
		arms[a].cap = 4096;
		arms[a].us = malloc(arms[a].cap * sizeof(double));
		arms[a].qid = malloc(arms[a].cap * sizeof(int));
		if (!arms[a].us || !arms[a].qid)
			die("out of memory", NULL);
	}
	order = malloc(nq * sizeof(int));
	sum = calloc((size_t) narms * nq, sizeof(double));
	if (!order || !sum)
		die("out of memory", NULL);
	for (int i = 0; i < nq; i++)
		order[i] = i + 1;

	/* the untimed pass: every query once on every connection */
	for (int q = 1; q <= nq; q++)
		for (int a = 0; a < narms; a++)
			for (int c = 0; c < NCONN; c++)
				(void) run_one(&arms[a], c, q);

	f = fopen(out, "w");
	if (f == NULL)
	{
		perror(out);
		return 1;
	}
	start = now_us();
	while (now_us() - start < seconds * 1e6)
	{
		round++;
		for (int i = nq - 1; i > 0; i--)
		{
			int			j = (int) (rng_next() % (unsigned long long) (i + 1));
			int			t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (int i = 0; i < nq && now_us() - start < seconds * 1e6; i++)
		{
			int			q = order[i];

			for (int k = 0; k < narms; k++)
			{
				Arm		   *a = &arms[(i + k) % narms];
				double		us = run_one(a, (round + i) % NCONN, q);

				if (a->n == a->cap)
				{
					a->cap *= 2;
					a->us = realloc(a->us, a->cap * sizeof(double));
					a->qid = realloc(a->qid, a->cap * sizeof(int));
					if (!a->us || !a->qid)
						die("out of memory", NULL);
				}
				a->us[a->n] = us;
				a->qid[a->n] = q;
				a->n++;
				fprintf(f, "%s\t%d\t%d\t%.1f\n", a->name, q, round, us);
			}
		}
	}
	fclose(f);

	for (int a = 0; a < narms; a++)
		for (long i = 0; i < arms[a].n; i++)
			sum[(size_t) a * nq + arms[a].qid[i] - 1] += arms[a].us[i];

	for (int a = 0; a < narms; a++)
	{
		Arm		   *x = &arms[a];
		double		total = 0;
		double	   *ratio = malloc(nq * sizeof(double));
		long		nr = 0;

		if (!ratio)
			die("out of memory", NULL);
		/* every arm ran the same queries the same number of times */
		for (int q = 0; q < nq; q++)
			if (sum[q] > 0 && sum[(size_t) a * nq + q] > 0)
				ratio[nr++] = sum[(size_t) a * nq + q] / sum[q];
		for (long i = 0; i < x->n; i++)
			total += x->us[i];
		qsort(x->us, x->n, sizeof(double), cmp_double);
		qsort(ratio, nr, sizeof(double), cmp_double);
		printf("%s\t%ld\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\n", x->name, x->n,
			   quantile(x->us, x->n, 0.5) / 1e3, quantile(x->us, x->n, 0.9) / 1e3,
			   quantile(x->us, x->n, 0.99) / 1e3, x->n ? total / x->n / 1e3 : 0.0,
			   nr ? quantile(ratio, nr, 0.5) : 0.0);
		free(ratio);
		for (int c = 0; c < NCONN; c++)
			PQfinish(x->conn[c]);
	}
	return 0;
}

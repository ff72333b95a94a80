/*
 * bench/truth.c: exact ground truth by brute force, in memory, and the
 * tie-aware recall of an arm's results against it.  Independent of the
 * server and of the index: it reads the same COPY text the server loaded.
 *
 *	 truth top K DOCS QUERIES OUT [QUERIES OUT ...]
 *		For every query, the K best documents (score descending, ties by
 *		smaller id) as lines "qid<TAB>rank<TAB>id<TAB>score", rank 1-based,
 *		score printed with %.17g (exact as a double).
 *
 *	 truth eval DOCS QUERIES TRUTH S LIMIT RESULTS [LIMIT RESULTS ...]
 *		Scores the first S queries of QUERIES.  RESULTS holds the rows an
 *		arm returned, in returned order, as "qid<TAB>id[<TAB>distance]";
 *		LIMIT is the LIMIT the arm ran with.  Prints one line per RESULTS:
 *		  RESULTS queries=S recall@10=<mean> recall_min=<min> exact=<n>/S
 *
 * Scores are computed as the <#> operator does: the sum of
 * (double) q * (double) w over the common terms, in ascending term order,
 * starting from 0.0.  The top-K pass accumulates term-at-a-time with the
 * query terms in ascending order, so each document sees the same additions
 * in the same order and gets the same bits.
 *
 * recall@10 is tie-aware: with k = min(10, documents), a returned row among
 * the first k counts if its true score is at least the true k-th score, so
 * a row that ties with the k-th counts whichever of the tied ids it is.
 * A query is "exact" when it returned min(LIMIT, documents) distinct rows,
 * at every rank the true score of the returned row equals the true score at
 * that rank, and (if the arm reported distances) each distance equals the
 * negated true score exactly: what an exact index must give.
 *
 * Build: cc -O2 -Wall -Wextra -ffp-contract=off -o truth truth.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Vecs
{
	int64_t		n;				/* vectors */
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

/* read "id<TAB>{i:v,...}/dim" rows (COPY text, 1-based indices) */
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
	v->off = xrealloc(NULL, sizeof(int64_t));
	v->off[0] = 0;
	while (getline(&line, &linecap, f) > 0)
	{
		const char *p = line;
		int64_t		id,
					prev = -1,
					dim;

		lineno++;
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
					v->postcap = v->postcap ? 2 * v->postcap : 1 << 20;
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

static void
top(const Vecs *docs, int k, const char *qfile, const char *outfile)
{
	Vecs		q;
	int64_t    *df,
			   *ioff,
			   *fill;
	int32_t    *idoc;
	float	   *iw;
	double	   *acc;
	Hit		   *heap;
	FILE	   *out;
	int64_t		t,
				d,
				i,
				j;
	int32_t		dim = docs->dim;

	read_vecs(qfile, &q);
	if (q.n > 0 && q.dim != dim)
		fail(qfile, 1, "query dimensions differ from the documents'");

	/* inverted index, postings in document order */
	df = calloc(dim + 1, sizeof(int64_t));
	ioff = xrealloc(NULL, (dim + 1) * sizeof(int64_t));
	fill = xrealloc(NULL, dim * sizeof(int64_t));
	for (i = 0; i < docs->npost; i++)
		df[docs->term[i]]++;
	ioff[0] = 0;
	for (t = 0; t < dim; t++)
		ioff[t + 1] = ioff[t] + df[t];
	memcpy(fill, ioff, dim * sizeof(int64_t));
	idoc = xrealloc(NULL, docs->npost * sizeof(int32_t));
	iw = xrealloc(NULL, docs->npost * sizeof(float));
	for (d = 0; d < docs->n; d++)
		for (i = docs->off[d]; i < docs->off[d + 1]; i++)
		{
			int64_t		pos = fill[docs->term[i]]++;

			idoc[pos] = (int32_t) d;
			iw[pos] = docs->w[i];
		}

	acc = xrealloc(NULL, docs->n * sizeof(double));
	heap = xrealloc(NULL, (k + 1) * sizeof(Hit));
	out = fopen(outfile, "w");
	if (out == NULL)
	{
		perror(outfile);
		exit(1);
	}
	for (j = 0; j < q.n; j++)
	{
		int			n = 0;

		memset(acc, 0, docs->n * sizeof(double));
		/* query terms ascending: each document adds in ascending term order */
		for (i = q.off[j]; i < q.off[j + 1]; i++)
		{
			double		qw = q.w[i];
			int32_t		qt = q.term[i];

			for (t = ioff[qt]; t < ioff[qt + 1]; t++)
				acc[idoc[t]] += qw * (double) iw[t];
		}
		for (d = 0; d < docs->n; d++)
		{
			Hit			h = {acc[d], docs->id[d]};

			if (n < k)
			{
				int			c = n++;

				/* sift up */
				heap[c] = h;
				while (c > 0 && before(&heap[(c - 1) / 2], &heap[c]))
				{
					Hit			tmp = heap[c];

					heap[c] = heap[(c - 1) / 2];
					heap[(c - 1) / 2] = tmp;
					c = (c - 1) / 2;
				}
			}
			else if (before(&h, &heap[0]))
			{
				heap[0] = h;
				sift_down(heap, n, 0);
			}
		}
		qsort(heap, n, sizeof(Hit), cmp_hit);
		for (i = 0; i < n; i++)
			fprintf(out, "%lld\t%d\t%lld\t%.17g\n", (long long) q.id[j], (int) i + 1,
					(long long) heap[i].id, heap[i].score);
	}
	if (fclose(out) != 0)
	{
		perror(outfile);
		exit(1);
	}
	fprintf(stderr, "truth: %s: top %d of %lld documents for %lld queries\n",
			outfile, k, (long long) docs->n, (long long) q.n);
	free(df);
	free(ioff);
	free(fill);
	free(idoc);
	free(iw);
	free(acc);
	free(heap);
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
	int64_t		lo = 0,
				hi = ix->n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (ix->id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->id[lo] == id ? ix->pos[lo] : -1;
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
eval(const Vecs *docs, const char *qfile, const char *tfile, int64_t s,
	 int nres, char **res)
{
	Vecs		q;
	IdIndex		dix,
				qix;
	Row		   *truth;
	int64_t		ntruth,
				i,
				j;
	int64_t    *tstart;			/* first truth row of query position j */
	int			r;

	read_vecs(qfile, &q);
	if (s > q.n)
		s = q.n;
	id_index(docs, &dix);
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
	}

	for (r = 0; r + 1 < nres; r += 2)
	{
		int			limit = atoi(res[r]);
		const char *file = res[r + 1];
		int64_t		nrows;
		Row		   *rows = read_rows(file, 0, &nrows);
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
			int64_t		k = docs->n < 10 ? docs->n : 10;
			int64_t		want = docs->n < limit ? docs->n : limit;
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
				sc = dot(docs, d, &q, j);
				if (i < k && sc >= kth)
					hits++;
				if (i >= tn || sc != truth[t0 + i].x)
					ok = 0;
				if (row->has_x && row->x != -sc)
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
}

static void
usage(void)
{
	fprintf(stderr,
			"usage: truth top K DOCS QUERIES OUT [QUERIES OUT ...]\n"
			"       truth eval DOCS QUERIES TRUTH S LIMIT RESULTS [LIMIT RESULTS ...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	Vecs		docs;
	int			i;

	if (argc >= 6 && strcmp(argv[1], "top") == 0 && argc % 2 == 0)
	{
		int			k = atoi(argv[2]);

		if (k <= 0)
			usage();
		read_vecs(argv[3], &docs);
		for (i = 4; i + 1 < argc; i += 2)
			top(&docs, k, argv[i], argv[i + 1]);
	}
	else if (argc >= 8 && strcmp(argv[1], "eval") == 0 && argc % 2 == 0)
	{
		read_vecs(argv[2], &docs);
		eval(&docs, argv[3], argv[4], atoll(argv[5]), argc - 6, argv + 6);
	}
	else
		usage();
	return 0;
}

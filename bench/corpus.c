/*
 * bench/corpus.c: check a user's vectors for bench/run --corpus DOCS
 * --queries QUERIES and write them in the form the bench loads.
 *
 *	 corpus docs IN OUT [LIMIT]
 *		IN holds "id<TAB>{i:v,...}/dim" rows, pgvector's text format as COPY
 *		reads it (1-based indices in any order, zero values allowed and
 *		dropped before any check as the server drops them, spaces around
 *		tokens allowed, CRLF line ends allowed).  OUT
 *		gets the first LIMIT rows (all without LIMIT) with indices ascending,
 *		zeros dropped and every value printed in the shortest form that
 *		strtof reads back as the same float, so that the server and
 *		bench/truth.c read the very same floats.  Prints on stderr
 *		  corpus: docs=N postings=P nnz_mean=x nnz_min=a nnz_max=b
 *		          weight_mean=x top_term_df=x% dims=D ids=dense|sparse
 *		(ids=dense: the ids are exactly 1..N, which the pk_lookup and
 *		pk_floor arms need).
 *	 corpus queries NAME IN OUT
 *		The same checks for a query file; OUT numbers the queries 1..n in
 *		file order (the bench draws qid at random in 1..n).  Prints
 *		  corpus: NAME queries=n terms_median=a terms_min=b terms_max=c
 *		          weight_mean/median=x weight_max/median=y dims=D
 *
 * Any malformed row stops it with "corpus: FILE:LINE: what is wrong" and
 * exit status 1; nothing is skipped.  Also refused: an empty file, rows
 * whose dimensions differ from the first row's, a repeated document id (both
 * line numbers given), an index repeated within a row, NaN, infinities and
 * values out of float range, as the server would refuse them.
 *
 * Build: cc -O2 -Wall -Wextra -ffp-contract=off -o corpus corpus.c -lm
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM 1000000000		/* SPV_MAX_DIM of src/sparsevec.h */

typedef struct Elem
{
	int32_t		index;			/* 1-based */
	float		value;
} Elem;

typedef struct IdLine
{
	int64_t		id;
	int64_t		line;
} IdLine;

static const char *cur_file;
static int64_t cur_line;

static void
fail(const char *fmt, const char *detail)
{
	fprintf(stderr, "corpus: %s:%lld: ", cur_file, (long long) cur_line);
	fprintf(stderr, fmt, detail);
	fputc('\n', stderr);
	exit(1);
}

static void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (p == NULL)
	{
		fprintf(stderr, "corpus: out of memory\n");
		exit(1);
	}
	return p;
}

/* a short quote of the text at p, for messages */
static const char *
near(const char *p)
{
	static char buf[40];
	size_t		n = 0;

	while (p[n] && p[n] != '\n' && n < 24)
		n++;
	if (n == 0)
		return "end of line";
	snprintf(buf, sizeof(buf), "\"%.*s\"", (int) n, p);
	return buf;
}

static const char *
skip_spaces(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* a decimal integer (optional sign); NULL if there is none or it overflows */
static const char *
parse_int64(const char *p, int64_t *out)
{
	char	   *end;
	long long	v;

	if (!(*p == '-' || *p == '+' || (*p >= '0' && *p <= '9')))
		return NULL;
	errno = 0;
	v = strtoll(p, &end, 10);
	if (end == p || errno == ERANGE)
		return NULL;
	*out = v;
	return end;
}

static int
cmp_elem(const void *a, const void *b)
{
	int32_t		x = ((const Elem *) a)->index,
				y = ((const Elem *) b)->index;

	return (x > y) - (x < y);
}

static int
cmp_idline(const void *a, const void *b)
{
	const IdLine *x = a,
			   *y = b;

	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->line > y->line) - (x->line < y->line);
}

static int
cmp_int(const void *a, const void *b)
{
	int			x = *(const int *) a,
				y = *(const int *) b;

	return (x > y) - (x < y);
}

static int
cmp_float(const void *a, const void *b)
{
	float		x = *(const float *) a,
				y = *(const float *) b;

	return (x > y) - (x < y);
}

/* the shortest %g form that strtof reads back as x */
static void
print_float(FILE *out, float x)
{
	char		buf[32];

	for (int prec = 6; prec <= 9; prec++)
	{
		snprintf(buf, sizeof(buf), "%.*g", prec, (double) x);
		if (strtof(buf, NULL) == x)
			break;
	}
	fputs(buf, out);
}

/*
 * Parse one row into *id, elems[0..*n-1] (sorted, zeros dropped) and *dim.
 * Fails with a message naming the line on anything COPY or the sparsevec
 * input function would refuse.
 */
static void
parse_line(char *line, int64_t *id, Elem **elems, int *cap, int *n, int64_t *dim)
{
	const char *p;
	size_t		len = strlen(line);
	int			m = 0;

	if (len > 0 && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	if (len == 0)
		fail("%s", "empty line (expected \"id<TAB>{i:v,...}/dim\")");
	p = parse_int64(line, id);
	if (p == NULL)
		fail("the id is not an integer in the bigint range, near %s", near(line));
	if (*p != '\t')
		fail("expected a tab after the id, found %s", near(p));
	p++;
	if (strcmp(p, "\\N") == 0)
		fail("%s", "the vector is NULL (\\N)");
	p = skip_spaces(p);
	if (*p != '{')
		fail("expected \"{\" to open the vector, found %s", near(p));
	p = skip_spaces(p + 1);
	if (*p != '}')
	{
		for (;;)
		{
			int64_t		index;
			char	   *end;
			float		value;
			const char *at = skip_spaces(p);

			p = parse_int64(at, &index);
			if (p == NULL)
				fail("expected an index (an integer) in the vector, found %s", near(at));
			p = skip_spaces(p);
			if (*p != ':')
				fail("expected \":\" after an index, found %s", near(p));
			p = skip_spaces(p + 1);
			errno = 0;
			value = strtof(p, &end);
			if (end == p)
				fail("expected a number after \":\", found %s", near(p));
			if (isnan(value))
				fail("%s", "NaN is not allowed in a sparsevec");
			if (isinf(value) && errno != ERANGE)
				fail("%s", "an infinite value is not allowed in a sparsevec");
			if (errno == ERANGE && (value == 0 || isinf(value)))
				fail("the value %s is out of range for a float", near(p));
			/* zeros are dropped before any index check, as the server does */
			if (value != 0 && (index < 1 || index > MAX_DIM))
				fail("index out of range (indices are 1-based), at %s", near(at));
			if (value != 0 && m == *cap)
			{
				*cap = *cap ? 2 * *cap : 256;
				*elems = xrealloc(*elems, *cap * sizeof(Elem));
			}
			if (value != 0)
			{
				(*elems)[m].index = (int32_t) index;
				(*elems)[m].value = value;
				m++;
			}
			p = skip_spaces(end);
			if (*p == ',')
			{
				p++;
				continue;
			}
			if (*p == '}')
				break;
			fail("expected \",\" or \"}\" after a value, found %s", near(p));
		}
	}
	p = skip_spaces(p + 1);
	if (*p != '/')
		fail("expected \"/dim\" after \"}\", found %s", near(p));
	p = parse_int64(skip_spaces(p + 1), dim);
	if (p == NULL)
		fail("%s", "expected the dimensions (an integer) after \"/\"");
	p = skip_spaces(p);
	if (*p == '\t')
		fail("%s", "more than two columns (a second tab)");
	if (*p != '\0')
		fail("unexpected text after the dimensions: %s", near(p));
	if (*dim < 1 || *dim > MAX_DIM)
		fail("%s", "the dimensions must be between 1 and 1000000000");
	qsort(*elems, m, sizeof(Elem), cmp_elem);
	for (int i = 0; i < m; i++)
	{
		char		buf[64];

		if (i > 0 && (*elems)[i].index == (*elems)[i - 1].index)
		{
			snprintf(buf, sizeof(buf), "%d", (*elems)[i].index);
			fail("index %s appears twice", buf);
		}
		if ((*elems)[i].index > *dim)
		{
			snprintf(buf, sizeof(buf), "%d > %lld", (*elems)[i].index, (long long) *dim);
			fail("index out of bounds: %s dimensions", buf);
		}
	}
	*n = m;
}

static void
run(int queries, const char *name, const char *in, const char *outfile, int64_t limit)
{
	FILE	   *f = fopen(in, "r"),
			   *out;
	char	   *line = NULL;
	size_t		linecap = 0;
	Elem	   *elems = NULL;
	int			cap = 0,
				n;
	int64_t		dim,
				dim0 = -1,
				id,
				rows = 0,
				postings = 0,
				idcap = 0;
	IdLine	   *ids = NULL;
	int		   *lens = NULL;
	uint32_t   *df = NULL;
	double		wsum = 0.0,
				ratio_mean = 0.0,
				ratio_max = 0.0;
	int			nmin = 0,
				nmax = 0;
	float	   *vals = NULL;
	int			valcap = 0;

	if (f == NULL)
	{
		fprintf(stderr, "corpus: %s: %s\n", in, strerror(errno));
		exit(1);
	}
	out = fopen(outfile, "w");
	if (out == NULL)
	{
		fprintf(stderr, "corpus: %s: %s\n", outfile, strerror(errno));
		exit(1);
	}
	cur_file = in;
	while ((limit < 0 || rows < limit) && getline(&line, &linecap, f) > 0)
	{
		cur_line = rows + 1;
		parse_line(line, &id, &elems, &cap, &n, &dim);
		if (dim0 < 0)
		{
			dim0 = dim;
			if (!queries)
				df = calloc(dim + 1, sizeof(uint32_t));
			if (!queries && df == NULL)
			{
				fprintf(stderr, "corpus: out of memory\n");
				exit(1);
			}
		}
		else if (dim != dim0)
		{
			char		buf[64];

			snprintf(buf, sizeof(buf), "%lld, not %lld", (long long) dim0, (long long) dim);
			fail("every row must have the dimensions of line 1: %s", buf);
		}
		rows++;
		if (rows > idcap)
		{
			idcap = idcap ? 2 * idcap : 4096;
			ids = xrealloc(ids, idcap * sizeof(IdLine));
			lens = xrealloc(lens, idcap * sizeof(int));
		}
		ids[rows - 1].id = id;
		ids[rows - 1].line = rows;
		lens[rows - 1] = n;
		postings += n;
		if (rows == 1 || n < nmin)
			nmin = n;
		if (n > nmax)
			nmax = n;
		fprintf(out, "%lld\t{", (long long) (queries ? rows : id));
		for (int i = 0; i < n; i++)
		{
			fprintf(out, "%s%d:", i ? "," : "", elems[i].index);
			print_float(out, elems[i].value);
			wsum += elems[i].value;
			if (!queries)
				df[elems[i].index]++;
		}
		fprintf(out, "}/%lld\n", (long long) dim);
		if (queries && n > 0)
		{
			double		sum = 0.0,
						median;

			if (n > valcap)
			{
				valcap = n;
				vals = xrealloc(vals, valcap * sizeof(float));
			}
			for (int i = 0; i < n; i++)
			{
				vals[i] = fabsf(elems[i].value);
				sum += vals[i];
			}
			qsort(vals, n, sizeof(float), cmp_float);
			median = vals[n / 2];
			if (median > 0)
			{
				ratio_mean += sum / n / median;
				ratio_max += vals[n - 1] / median;
			}
		}
	}
	if (ferror(f))
	{
		fprintf(stderr, "corpus: %s: %s\n", in, strerror(errno));
		exit(1);
	}
	if (rows == 0)
	{
		fprintf(stderr, "corpus: %s: no rows\n", in);
		exit(1);
	}
	if (fclose(out) != 0)
	{
		fprintf(stderr, "corpus: %s: %s\n", outfile, strerror(errno));
		exit(1);
	}
	fclose(f);
	if (queries)
	{
		qsort(lens, rows, sizeof(int), cmp_int);
		fprintf(stderr,
				"corpus: %s queries=%lld terms_median=%d terms_min=%d terms_max=%d "
				"weight_mean/median=%.2f weight_max/median=%.1f dims=%lld\n",
				name, (long long) rows, lens[rows / 2], nmin, nmax,
				ratio_mean / rows, ratio_max / rows, (long long) dim0);
	}
	else
	{
		uint32_t	maxdf = 0;
		int			dense;

		/* a repeated id would fail the primary key: name both lines */
		qsort(ids, rows, sizeof(IdLine), cmp_idline);
		for (int64_t i = 1; i < rows; i++)
			if (ids[i].id == ids[i - 1].id)
			{
				char		buf[64];

				cur_line = ids[i].line;
				snprintf(buf, sizeof(buf), "%lld (first on line %lld)",
						 (long long) ids[i].id, (long long) ids[i - 1].line);
				fail("repeated document id %s", buf);
			}
		dense = ids[0].id == 1 && ids[rows - 1].id == rows;
		for (int64_t t = 1; t <= dim0; t++)
			if (df[t] > maxdf)
				maxdf = df[t];
		fprintf(stderr,
				"corpus: docs=%lld postings=%lld nnz_mean=%.1f nnz_min=%d nnz_max=%d "
				"weight_mean=%.3f top_term_df=%.1f%% dims=%lld ids=%s\n",
				(long long) rows, (long long) postings, (double) postings / rows, nmin, nmax,
				postings ? wsum / postings : 0.0, 100.0 * maxdf / rows, (long long) dim0,
				dense ? "dense" : "sparse");
	}
	free(line);
	free(elems);
	free(ids);
	free(lens);
	free(df);
	free(vals);
}

static void
usage(void)
{
	fprintf(stderr, "usage: corpus docs IN OUT [LIMIT]\n"
			"       corpus queries NAME IN OUT\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "docs") == 0)
	{
		int64_t		limit = -1;

		if (argc == 5)
		{
			char	   *end;

			limit = strtoll(argv[4], &end, 10);
			if (*end != '\0' || limit <= 0)
				usage();
		}
		run(0, NULL, argv[2], argv[3], limit);
	}
	else if (argc == 5 && strcmp(argv[1], "queries") == 0)
		run(1, argv[2], argv[3], argv[4], -1);
	else
		usage();
	return 0;
}

/*
 * bench_traverse.c: time the traversal kernel outside the server.
 *
 *	 bench_traverse DOCS.tsv QUERIES.tsv [K] [NQUERIES] [exhaustive|maxscore|bmp]
 *
 * Reads a corpus and queries in bench/gen's COPY format (id<TAB>sparsevec
 * text), builds one segment in memory with the real block codec, and runs
 * every query through spm_traverse_topk (top K, default 10) with the
 * exhaustive kernel and with MaxScore, checking that both return the same
 * hits and printing the mean time per query and the counters.  No buffer
 * manager is involved, so this measures the kernel alone: decoding,
 * accumulation, bounds and the heap.  Build: make -C test/unit bench.
 *
 * SPM_BENCH_QUANTIZE=1 encodes the blocks with quantized weights, as the
 * server's segments are by default (src/README "Quantized weights"); the
 * default is raw weights.  Each kernel's line also gives the wall-clock
 * and the CPU time per posting decoded (bench/kernel.sh, issue 38).  Under callgrind
 * with --instr-atstart=no only the timed loop of each kernel is
 * instrumented.
 *
 * The mode bmp runs the Block-Max Pruning prototype instead (bmpproto.h;
 * BMP_RANGE=n docids per range, default 32, at most 64), once with each
 * way of scoring a range (BmpScorer; BMP_ROUNDS=n times each, the ways
 * alternating, default once), and checks every answer against the
 * exhaustive kernel.
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sparsevec.h"
#include "spmblock.h"
#include "spmtraverse.h"
#include "unitseg.h"
#include "bmpproto.h"

/*
 * Under valgrind --tool=callgrind --instr-atstart=no only the timed loops
 * are instrumented, so that loading the corpus costs minutes less
 * (bench/kernel.sh); elsewhere these are no-ops.
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

typedef struct Query
{
	int			n;
	int32	   *idx;
	float	   *val;
} Query;

static UnitTerm *terms;
static int *term_cap;			/* room in terms[t].docs and .w */
static int	nterms_vocab;
static UnitBlocks blocks;

/* parse "{i:v,...}/dim"; returns nnz, fills idx (0-based) and val */
static int
parse_vec(const char *s, int32 *idx, float *val, int *dim)
{
	int			n = 0;
	const char *p = strchr(s, '{') + 1;

	while (*p && *p != '}')
	{
		char	   *end;
		long		i = strtol(p, &end, 10);

		p = end + 1;			/* ':' */
		val[n] = strtof(p, &end);
		idx[n] = (int32) (i - 1);
		n++;
		p = end;
		if (*p == ',')
			p++;
	}
	*dim = atoi(strchr(p, '/') + 1);
	return n;
}

static void
read_docs(const char *path, int *ndocs)
{
	FILE	   *f = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;
	int32	   *idx = malloc(100000 * sizeof(int32));
	float	   *val = malloc(100000 * sizeof(float));
	int			d = 0;
	int			dim;

	if (!f)
	{
		perror(path);
		exit(1);
	}
	while (getline(&line, &cap, f) > 0)
	{
		int			n = parse_vec(line, idx, val, &dim);

		if (terms == NULL)
		{
			nterms_vocab = dim;
			terms = calloc(dim, sizeof(UnitTerm));
			term_cap = calloc(dim, sizeof(int));
		}
		for (int i = 0; i < n; i++)
		{
			UnitTerm   *t = &terms[idx[i]];
			int		   *cap = &term_cap[idx[i]];

			if (t->df == *cap)
			{
				*cap = *cap ? 2 * *cap : 16;
				t->docs = realloc(t->docs, *cap * sizeof(uint32));
				t->w = realloc(t->w, *cap * sizeof(float));
			}
			t->docs[t->df] = d;
			t->w[t->df] = val[i];
			t->df++;
		}
		d++;
	}
	*ndocs = d;
	fclose(f);
	free(line);
}

static void
encode_all(void)
{
	for (int t = 0; t < nterms_vocab; t++)
		unit_encode_term(&terms[t], &blocks);
	printf("blocks: %.3f bytes per posting (header, docids, padding, weights), %d blocks, %.1f%% packed, %s weights\n",
		   (double) blocks.bytes / Max(blocks.postings, 1), blocks.n,
		   100.0 * blocks.packed / Max(blocks.n, 1),
		   blocks.quantize ? "quantized" : "raw");
}

static void
read_block(void *arg, const SpmQueryTerm *term, int b,
		   uint32 *docids, float *weights)
{
	unit_read_block(&blocks, term, b, docids, weights);
}

static void
accumulate_block(void *arg, const SpmQueryTerm *term, int b,
				 double q, double *acc, uint32 base)
{
	unit_accumulate_block(&blocks, term, b, q, acc, base);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* this thread's CPU time: without the time spent waiting for a core */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* do two answers to query i (1-based) agree exactly?  Says where not. */
static bool
same_hits(int i, const SpmHit *h1, int n1, const SpmHit *h2, int n2)
{
	if (n1 != n2)
	{
		printf("query %d: %d vs %d hits\n", i, n1, n2);
		return false;
	}
	for (int j = 0; j < n1; j++)
	{
		if (h1[j].docid != h2[j].docid || h1[j].score != h2[j].score)
		{
			printf("query %d: hit %d differs\n", i, j);
			return false;
		}
	}
	return true;
}

static int
run(Query *q, int ndocs, bool exhaustive, int k, SpmHit *hits,
	SpmCounters *counters)
{
	/* work memory kept from query to query, as a backend keeps it */
	static SpmTraverseScratch scratch;
	SpmQueryTerm *qterms = palloc(Max(q->n, 1) * sizeof(SpmQueryTerm));
	SpmTopK		topk;
	SpmTraverse t;
	int			n = 0;

	for (int i = 0; i < q->n; i++)
	{
		if (terms[q->idx[i]].df > 0)
			unit_query_term(&terms[q->idx[i]], q->val[i], &qterms[n++]);
	}
	spm_topk_init(&topk, k, hits);
	memset(&t, 0, sizeof(t));
	t.terms = qterms;
	t.nterms = n;
	t.ndocs = ndocs;
	t.exhaustive = exhaustive;
	t.phase = SPM_PHASE_POSITIVE;
	t.topk = &topk;
	t.read_block = read_block;
	t.accumulate_block = accumulate_block;
	t.counters = counters;
	t.scratch = &scratch;
	spm_traverse_begin(&t);
	spm_traverse_topk(&t);
	spm_traverse_end(&t);
	spm_topk_sort(&topk);
	pfree(qterms);
	return topk.n;
}

int
main(int argc, char **argv)
{
	int			ndocs;
	int			k = argc > 3 ? atoi(argv[3]) : 10;
	int			maxq = argc > 4 ? atoi(argv[4]) : 1000000;
	FILE	   *f;
	char	   *line = NULL;
	size_t		cap = 0;
	Query	   *qs = malloc(maxq * sizeof(Query));
	int			nq = 0;
	int32	   *idx = malloc(100000 * sizeof(int32));
	float	   *val = malloc(100000 * sizeof(float));
	SpmHit	   *h1 = malloc(k * sizeof(SpmHit));
	SpmHit	   *h2 = malloc(k * sizeof(SpmHit));

	if (argc < 3)
	{
		fprintf(stderr, "usage: bench_traverse DOCS.tsv QUERIES.tsv [K] [NQUERIES] [exhaustive|maxscore|bmp]\n");
		return 2;
	}
	read_docs(argv[1], &ndocs);
	blocks.quantize = getenv("SPM_BENCH_QUANTIZE") != NULL &&
		strcmp(getenv("SPM_BENCH_QUANTIZE"), "1") == 0;
	encode_all();
	f = fopen(argv[2], "r");
	if (!f)
	{
		perror(argv[2]);
		return 1;
	}
	while (nq < maxq && getline(&line, &cap, f) > 0)
	{
		int			dim;
		int			n = parse_vec(line, idx, val, &dim);

		qs[nq].n = n;
		qs[nq].idx = malloc(Max(n, 1) * sizeof(int32));
		qs[nq].val = malloc(Max(n, 1) * sizeof(float));
		memcpy(qs[nq].idx, idx, n * sizeof(int32));
		memcpy(qs[nq].val, val, n * sizeof(float));
		nq++;
	}
	fclose(f);

	/* the Block-Max Pruning prototype (bmpproto.h), against exhaustive */
	if (argc > 5 && strcmp(argv[5], "bmp") == 0)
	{
		Bmp			b;
		BmpCounters bc;
		int			range = getenv("BMP_RANGE") ? atoi(getenv("BMP_RANGE")) : 32;
		int			rounds = getenv("BMP_ROUNDS") ? atoi(getenv("BMP_ROUNDS")) : 1;
		double		t0 = now();

		if (range < 1 || range > 64)
		{
			fprintf(stderr, "BMP_RANGE must be 1 to 64\n");
			return 2;
		}

		bmp_build(&b, terms, &blocks, nterms_vocab, ndocs, range);
		printf("bmp: %d-docid ranges, built in %.1f s, %.0f range maxima (%.3f per posting), %ld forward postings\n",
			   range, now() - t0, (double) b.npairs,
			   (double) b.npairs / Max(b.npostings, 1), (long) b.npostings);
		for (int it = 0; it < rounds * BMP_NSCORERS; it++)
		{
			static const char *const names[] = {"range", "docs", "postings", "docs_bf16", "docs_q8"};
			int			sc = it % BMP_NSCORERS;

			memset(&bc, 0, sizeof(bc));
			t0 = now();
			for (int i = 0; i < nq; i++)
				bmp_query(&b, qs[i].idx, qs[i].val, qs[i].n, k, sc, h2, &bc);
			printf("bmp %-8s %d docs, %d queries, top %d: %.3f ms/query, ranges scored %.0f of %u, %s %.0f, blocks decoded %.0f, maxima summed %.0f per query\n",
				   names[sc], ndocs, nq, k, (now() - t0) * 1000 / nq,
				   (double) bc.ranges / nq, b.nranges,
				   sc == BMP_SCORE_POSTINGS ? "postings decoded" :
				   sc >= BMP_SCORE_DOCS_BF16 ? "forward elements and postings read" :
				   "forward elements read",
				   (double) bc.postings / nq, (double) bc.blocks / nq,
				   (double) bc.pairs / nq);
			if (sc == BMP_SCORE_DOCS_BF16 || sc == BMP_SCORE_DOCS_Q8)
				printf("bmp %s: exact scores of %.1f of the %.0f documents scored per query\n",
					   names[sc], (double) bc.exact / nq, (double) bc.docs / nq);
		}
		for (int i = 0; i < nq; i++)
		{
			SpmCounters c;
			int			n1;
			int			n2;

			memset(&c, 0, sizeof(c));
			n1 = run(&qs[i], ndocs, true, k, h1, &c);
			for (int sc = 0; sc < BMP_NSCORERS; sc++)
			{
				n2 = bmp_query(&b, qs[i].idx, qs[i].val, qs[i].n, k, sc, h2, &bc);
				if (!same_hits(i + 1, h1, n1, h2, n2))
				{
					printf("(bmp scorer %d)\n", sc);
					return 1;
				}
			}
		}
		printf("exhaustive and bmp (every scorer) agree on all %d queries\n", nq);
		return 0;
	}

	for (int mode = 0; mode < 2; mode++)
	{
		SpmCounters c;
		double		t0;
		double		c0;
		double		elapsed;
		double		cpu;

		if (argc > 5 && strcmp(argv[5], mode == 0 ? "exhaustive" : "maxscore") != 0)
			continue;

		memset(&c, 0, sizeof(c));
		CALLGRIND_START_INSTRUMENTATION;
		t0 = now();
		c0 = cpu_now();
		for (int i = 0; i < nq; i++)
			run(&qs[i], ndocs, mode == 0, k, mode == 0 ? h1 : h2, &c);
		elapsed = now() - t0;
		cpu = cpu_now() - c0;
		CALLGRIND_STOP_INSTRUMENTATION;
		printf("%-10s %d docs, %d queries, top %d: %.3f ms/query, postings decoded %.0f, blocks skipped %.0f, windows skipped %.1f, candidates %.0f per query, %.2f ns per posting decoded (CPU %.2f)\n",
			   mode == 0 ? "exhaustive" : "maxscore", ndocs, nq, k,
			   elapsed * 1000 / nq, (double) c.postings_decoded / nq,
			   (double) c.blocks_skipped / nq, (double) c.windows_skipped / nq,
			   (double) c.candidates / nq,
			   elapsed * 1e9 / Max(c.postings_decoded, 1),
			   cpu * 1e9 / Max(c.postings_decoded, 1));
	}

	/* both must agree exactly */
	for (int i = 0; argc <= 5 && i < nq; i++)
	{
		SpmCounters c;
		int			n1 = run(&qs[i], ndocs, true, k, h1, &c);
		int			n2 = run(&qs[i], ndocs, false, k, h2, &c);

		if (!same_hits(i + 1, h1, n1, h2, n2))
			return 1;
	}
	if (argc <= 5)
		printf("exhaustive and maxscore agree on all %d queries\n", nq);
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * spmsort.c
 *	  Sort postings by (term, docid) for a segment writer.
 *
 * Postings are added in docid order (documents arrive in docid order), so
 * a *stable* sort by term alone leaves every term's postings in docid
 * order.  A batch of at most `mem` bytes is sorted with a two-pass LSD
 * radix sort on 16-bit digits: linear, no comparisons.  If the postings do
 * not fit, each full batch is spilled to a temporary file as a run of
 * (term, n, postings) groups; runs cover ascending, disjoint docid ranges,
 * so merging them copies each term's groups in run order.  Used by the
 * build and by the pending-list flush.  See doc/decisions.md for why this
 * replaces tuplesort.
 *
 * Everything is allocated in the sorter's own memory context, whatever
 * context the caller adds postings from.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "commands/progress.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "spm.h"
#include "spmwrite.h"

typedef struct SpmPosting
{
	uint32		term;
	uint32		doc;
	float4		w;
} SpmPosting;

/* a posting as it sits in a run file, after its group header */
typedef struct SpmRunPosting
{
	uint32		doc;
	float4		w;
} SpmRunPosting;

typedef struct SpmRunGroup
{
	uint32		term;
	uint32		n;
} SpmRunGroup;

struct SpmSorter
{
	MemoryContext cxt;
	SpmPosting *batch;
	SpmPosting *tmp;			/* radix-sort buffer */
	Size		nbatch;
	Size		maxbatch;
	uint32		maxterm;		/* largest term in the batch */
	uint64		count;			/* all postings added */
	bool		progress;		/* report CREATE INDEX progress */

	BufFile   **runs;
	int			nruns;
	int			maxruns;
};

#define SPM_CHUNK 2048			/* postings handed to the writer at once */

/*
 * A sorter using at most about mem bytes of memory for its batch.
 */
SpmSorter *
spm_sorter_begin(Size mem, bool progress)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "sparse_maxscore sort",
											  ALLOCSET_DEFAULT_SIZES);
	SpmSorter  *s = MemoryContextAllocZero(cxt, sizeof(SpmSorter));

	s->cxt = cxt;
	s->progress = progress;
	/* the batch and its radix buffer share mem */
	s->maxbatch = Max(mem / (2 * sizeof(SpmPosting)), 65536);
	s->maxbatch = Min(s->maxbatch, MaxAllocHugeSize / sizeof(SpmPosting));
	s->batch = MemoryContextAllocExtended(cxt, s->maxbatch * sizeof(SpmPosting),
										  MCXT_ALLOC_HUGE);
	s->maxruns = 16;
	s->runs = MemoryContextAlloc(cxt, s->maxruns * sizeof(BufFile *));
	return s;
}

/* stable sort of batch[0..n) by term, using tmp */
static void
sort_batch(SpmSorter *s)
{
	Size	   *count = MemoryContextAlloc(s->cxt, 65536 * sizeof(Size));
	int			passes = s->maxterm >= 65536 ? 2 : 1;
	SpmPosting *src = s->batch;
	SpmPosting *dst;

	if (s->tmp == NULL)
		s->tmp = MemoryContextAllocExtended(s->cxt, s->maxbatch * sizeof(SpmPosting),
											MCXT_ALLOC_HUGE);
	dst = s->tmp;
	for (int pass = 0; pass < passes; pass++)
	{
		int			shift = pass * 16;
		Size		sum = 0;

		memset(count, 0, 65536 * sizeof(Size));
		for (Size i = 0; i < s->nbatch; i++)
			count[(src[i].term >> shift) & 0xFFFF]++;
		for (int d = 0; d < 65536; d++)
		{
			Size		c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (Size i = 0; i < s->nbatch; i++)
			dst[count[(src[i].term >> shift) & 0xFFFF]++] = src[i];
		src = dst;
		dst = (dst == s->tmp) ? s->batch : s->tmp;
	}
	if (src != s->batch)
		memcpy(s->batch, src, s->nbatch * sizeof(SpmPosting));
	pfree(count);
}

static void
write_run(SpmSorter *s)
{
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	BufFile    *file;
	Size		i = 0;

	sort_batch(s);
	file = BufFileCreateTemp(false);
	while (i < s->nbatch)
	{
		SpmRunGroup g;
		Size		j = i;

		while (j < s->nbatch && s->batch[j].term == s->batch[i].term)
			j++;
		g.term = s->batch[i].term;
		g.n = (uint32) (j - i);
		BufFileWrite(file, &g, sizeof(g));
		for (; i < j; i++)
		{
			SpmRunPosting p;

			p.doc = s->batch[i].doc;
			p.w = s->batch[i].w;
			BufFileWrite(file, &p, sizeof(p));
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		elog(ERROR, "could not rewind sparse_maxscore sort run");

	if (s->nruns == s->maxruns)
	{
		s->maxruns *= 2;
		s->runs = repalloc(s->runs, s->maxruns * sizeof(BufFile *));
	}
	s->runs[s->nruns++] = file;
	s->nbatch = 0;
	s->maxterm = 0;
	MemoryContextSwitchTo(old);
}

/*
 * Add a posting.  Docids must not decrease from one call to the next.
 */
void
spm_sorter_add(SpmSorter *s, uint32 term, uint32 doc, float4 w)
{
	SpmPosting *p;

	if (s->nbatch == s->maxbatch)
		write_run(s);
	p = &s->batch[s->nbatch++];
	p->term = term;
	p->doc = doc;
	p->w = w;
	s->maxterm = Max(s->maxterm, term);
	s->count++;
}

uint64
spm_sorter_count(SpmSorter *s)
{
	return s->count;
}

static void
read_exact(BufFile *file, void *buf, Size len)
{
	if (BufFileRead(file, buf, len) != len)
		elog(ERROR, "could not read sparse_maxscore sort run");
}

/* feed the sorted in-memory batch to the writer */
static void
write_batch(SpmSorter *s, SpmWriter *w)
{
	uint32		docs[SPM_CHUNK];
	float		ws[SPM_CHUNK];
	Size		i = 0;

	sort_batch(s);
	while (i < s->nbatch)
	{
		uint32		term = s->batch[i].term;

		spm_writer_term_begin(w, term);
		while (i < s->nbatch && s->batch[i].term == term)
		{
			int			n = 0;

			while (n < SPM_CHUNK && i < s->nbatch && s->batch[i].term == term)
			{
				docs[n] = s->batch[i].doc;
				ws[n] = s->batch[i].w;
				n++;
				i++;
			}
			spm_writer_postings(w, docs, ws, n);
		}
		spm_writer_term_end(w);
		if (s->progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, i);
		CHECK_FOR_INTERRUPTS();
	}
}

/* merge the runs into the writer, term by term */
static void
merge_runs(SpmSorter *s, SpmWriter *w)
{
	SpmRunGroup *head = MemoryContextAlloc(s->cxt, s->nruns * sizeof(SpmRunGroup));
	bool	   *live = MemoryContextAlloc(s->cxt, s->nruns * sizeof(bool));
	SpmRunPosting *buf = MemoryContextAlloc(s->cxt, SPM_CHUNK * sizeof(SpmRunPosting));
	uint32		docs[SPM_CHUNK];
	float		ws[SPM_CHUNK];
	uint64		done = 0;

	for (int r = 0; r < s->nruns; r++)
		live[r] = BufFileRead(s->runs[r], &head[r], sizeof(SpmRunGroup)) ==
			sizeof(SpmRunGroup);

	for (;;)
	{
		uint32		term = PG_UINT32_MAX;
		bool		any = false;

		for (int r = 0; r < s->nruns; r++)
		{
			if (live[r] && (!any || head[r].term < term))
			{
				term = head[r].term;
				any = true;
			}
		}
		if (!any)
			break;

		spm_writer_term_begin(w, term);
		for (int r = 0; r < s->nruns; r++)
		{
			uint32		left;

			if (!live[r] || head[r].term != term)
				continue;
			left = head[r].n;
			while (left > 0)
			{
				uint32		n = Min(left, SPM_CHUNK);

				read_exact(s->runs[r], buf, n * sizeof(SpmRunPosting));
				for (uint32 i = 0; i < n; i++)
				{
					docs[i] = buf[i].doc;
					ws[i] = buf[i].w;
				}
				spm_writer_postings(w, docs, ws, n);
				left -= n;
				done += n;
			}
			live[r] = BufFileRead(s->runs[r], &head[r], sizeof(SpmRunGroup)) ==
				sizeof(SpmRunGroup);
		}
		spm_writer_term_end(w);
		if (s->progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Hand every posting, sorted, to the writer.
 */
void
spm_sorter_finish(SpmSorter *s, SpmWriter *w)
{
	if (s->nruns == 0)
		write_batch(s, w);
	else
	{
		if (s->nbatch > 0)
			write_run(s);
		merge_runs(s, w);
	}
}

void
spm_sorter_end(SpmSorter *s)
{
	for (int r = 0; r < s->nruns; r++)
		BufFileClose(s->runs[r]);
	MemoryContextDelete(s->cxt);
}

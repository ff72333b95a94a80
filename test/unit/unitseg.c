/*
 * unitseg.c: see unitseg.h.
 */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>

#include "unitseg.h"

/* cut t's postings into blocks of SPM_BLOCK_POSTINGS, encoded into blocks */
void
unit_encode_term(UnitTerm *t, UnitBlocks *blocks)
{
	int			nb = (t->df + SPM_BLOCK_POSTINGS - 1) / SPM_BLOCK_POSTINGS;

	t->nblocks = nb;
	t->last = palloc(sizeof(uint32) * (nb + 1));
	t->bmax = palloc(sizeof(float) * (nb + 1));
	t->bmin = palloc(sizeof(float) * (nb + 1));
	t->count = palloc(sizeof(uint8) * (nb + 1));
	t->blkno = palloc(sizeof(uint32) * (nb + 1));
	t->off = palloc0(sizeof(uint16) * (nb + 1));
	for (int b = 0; b < nb; b++)
	{
		int			first = b * SPM_BLOCK_POSTINGS;
		int			n = Min(SPM_BLOCK_POSTINGS, t->df - first);
		char	   *enc = palloc(SPM_BLOCK_MAX_BYTES);
		SpmBlockHeader hdr;

		/* the bounds of what the block decodes to, as the writer's */
		blocks->bytes += spm_block_encode_bounds(t->docs + first, t->w + first,
												 NULL, n, blocks->quantize, enc,
												 &t->bmax[b], &t->bmin[b]);
		blocks->postings += n;
		memcpy(&hdr, enc, sizeof(hdr));
		blocks->packed += (hdr.flags & SPM_BLOCK_PACKED) != 0;
		t->last[b] = t->docs[first + n - 1];
		t->count[b] = n;
		if (blocks->n == blocks->cap)
		{
			blocks->cap = blocks->cap ? 2 * blocks->cap : 1024;
			blocks->enc = blocks->enc
				? repalloc(blocks->enc, sizeof(char *) * blocks->cap)
				: palloc(sizeof(char *) * blocks->cap);
		}
		t->blkno[b] = blocks->n;
		blocks->enc[blocks->n++] = enc;
	}
	t->sum = spm_term_summarize(palloc(spm_term_summary_size(nb)), nb,
								t->bmax, t->bmin, t->count);
}

void
unit_free_term(UnitTerm *t)
{
	pfree(t->docs);
	pfree(t->w);
	pfree(t->last);
	pfree(t->bmax);
	pfree(t->bmin);
	pfree(t->count);
	pfree(t->blkno);
	pfree(t->off);
	pfree(t->sum);
}

void
unit_free_blocks(UnitBlocks *blocks)
{
	for (int b = 0; b < blocks->n; b++)
		pfree(blocks->enc[b]);
	if (blocks->enc)
		pfree(blocks->enc);
	memset(blocks, 0, sizeof(*blocks));
}

/* t with query weight q, for SpmTraverse.terms */
void
unit_query_term(const UnitTerm *t, double q, SpmQueryTerm *out)
{
	out->q = q;
	out->nblocks = t->nblocks;
	out->id = 0;
	out->last = t->last;
	out->max_w = t->bmax;
	out->min_w = t->bmin;
	out->blkno = t->blkno;
	out->off = t->off;
	out->count = t->count;
	out->sum = t->sum;
}

void
unit_read_block(const UnitBlocks *blocks, const SpmQueryTerm *term, int b,
				uint32 *docids, float *weights)
{
	int16		exp;

	/*
	 * as the server's read_block: its cache lines asked for at once, lower
	 * ends for a negative query weight
	 */
	spm_block_prefetch(blocks->enc[term->blkno[b]], SPM_BLOCK_MAX_BYTES,
					   term->count[b]);
	if (!spm_block_decode_bounds(blocks->enc[term->blkno[b]], SPM_BLOCK_MAX_BYTES,
								 term->count[b], term->last[b], term->q < 0,
								 docids, weights, &exp))
	{
		fprintf(stderr, "corrupt block\n");
		abort();
	}
}

void
unit_accumulate_block(const UnitBlocks *blocks, const SpmQueryTerm *term,
					  int b, double q, double *acc, uint32 base)
{
	spm_block_prefetch(blocks->enc[term->blkno[b]], SPM_BLOCK_MAX_BYTES,
					   term->count[b]);
	if (!spm_block_accumulate(blocks->enc[term->blkno[b]], SPM_BLOCK_MAX_BYTES,
							  term->count[b], term->last[b], q, acc, base,
							  SPM_WINDOW - 1))
	{
		fprintf(stderr, "corrupt block\n");
		abort();
	}
}

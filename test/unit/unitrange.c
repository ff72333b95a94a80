/*
 * unitrange.c: see unitrange.h.
 */
#include "postgres.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "unitrange.h"

/* garbage after each term's range maxima (a multiple of 4) */
#define RANGE_PAD	64

static void breach(UnitRangeSeg *s, const char *fmt,...) pg_attribute_printf(2, 3);

static void
breach(UnitRangeSeg *s, const char *fmt,...)
{
	if (s->nerrors++ == 0)
	{
		va_list		ap;

		va_start(ap, fmt);
		vsnprintf(s->error, sizeof(s->error), fmt, ap);
		va_end(ap);
	}
}

static uint64
chunk_rnd(UnitRangeSeg *s)
{
	uint64		z = (s->chunk_rng += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

int64
unit_range_index(const UnitRangeSeg *s, uint32 id)
{
	int64		lo = 0;
	int64		hi = (int64) s->nterms - 1;

	while (lo <= hi)
	{
		int64		mid = (lo + hi) / 2;

		if (s->ids[mid] == id)
			return mid;
		if (s->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * The range maxima as write_term_ranges (spmwrite.c) lays them out: the
 * term's largest weight per range, levelled against its largest weight in
 * the segment; a byte per range if the term is in a quarter of the ranges
 * or more, else a uint32 (range << 8) | level per range it is in.
 */
void
unit_range_build(UnitRangeSeg *s, uint32 ndocs, uint32 nterms,
				 const uint32 *ids, SpmRangeDoc *docs)
{
	uint32		nranges = (ndocs + SPM_RANGE_DOCS - 1) / SPM_RANGE_DOCS;
	float	   *rmax = palloc0((Size) nterms * Max(nranges, 1) * sizeof(float));

	memset(s, 0, sizeof(*s));
	s->ndocs = ndocs;
	s->nranges = nranges;
	s->nterms = nterms;
	s->docs = docs;
	s->ids = palloc(sizeof(uint32) * Max(nterms, 1));
	for (uint32 t = 0; t < nterms; t++)
	{
		s->ids[t] = ids ? ids[t] : t;
		if (t > 0 && s->ids[t] <= s->ids[t - 1])
		{
			fprintf(stderr, "unit_range_build: term ids not ascending\n");
			abort();
		}
	}
	s->df = palloc0(sizeof(uint32) * Max(nterms, 1));
	s->max_w = palloc0(sizeof(float) * Max(nterms, 1));
	s->nr = palloc0(sizeof(uint32) * Max(nterms, 1));
	s->dense = palloc0(sizeof(bool) * Max(nterms, 1));
	s->rdata = palloc0(sizeof(uint8 *) * Max(nterms, 1));
	s->rlen = palloc0(sizeof(uint64) * Max(nterms, 1));
	s->cur = -1;

	for (uint32 d = 0; d < ndocs; d++)
	{
		for (int32 i = 0; i < docs[d].nnz; i++)
		{
			const SpmFwdElem *e = &docs[d].elems[i];
			int64		t = unit_range_index(s, e->term);
			float	   *m;

			if (t < 0 || !(e->w > 0.0f) || isinf(e->w) ||
				(i > 0 && e->term <= docs[d].elems[i - 1].term))
			{
				fprintf(stderr, "unit_range_build: bad element %d of document %u\n",
						i, d);
				abort();
			}
			m = &rmax[(Size) t * nranges + d / SPM_RANGE_DOCS];
			s->df[t]++;
			s->max_w[t] = Max(s->max_w[t], e->w);
			*m = Max(*m, e->w);
		}
	}
	for (uint32 t = 0; t < nterms; t++)
	{
		const float *m = &rmax[(Size) t * nranges];
		uint8	   *p;

		for (uint32 r = 0; r < nranges; r++)
			s->nr[t] += m[r] > 0.0f;
		if (s->df[t] == 0)
			continue;
		s->dense[t] = (uint64) s->nr[t] * 4 >= nranges;
		s->rlen[t] = s->dense[t] ? nranges : (uint64) s->nr[t] * 4;
		p = s->rdata[t] = palloc(s->rlen[t] + RANGE_PAD);
		memset(p + s->rlen[t], 0xFF, RANGE_PAD);
		for (uint32 r = 0; r < nranges; r++)
		{
			if (s->dense[t])
				*p++ = spm_range_level(m[r], s->max_w[t]);
			else if (m[r] > 0.0f)
			{
				uint32		e = (r << 8) | spm_range_level(m[r], s->max_w[t]);

				memcpy(p, &e, sizeof(e));
				p += sizeof(e);
			}
		}
	}
	pfree(rmax);
}

void
unit_range_free(UnitRangeSeg *s)
{
	for (uint32 d = 0; d < s->ndocs; d++)
		if (s->docs[d].elems)
			pfree((void *) s->docs[d].elems);
	for (uint32 t = 0; t < s->nterms; t++)
		if (s->rdata[t])
			pfree(s->rdata[t]);
	pfree(s->docs);
	pfree(s->ids);
	pfree(s->df);
	pfree(s->max_w);
	pfree(s->nr);
	pfree(s->dense);
	pfree(s->rdata);
	pfree(s->rlen);
	if (s->qrange)
		pfree(s->qrange);
	if (s->begun)
		pfree(s->begun);
	for (int i = 0; i < 2; i++)
	{
		if (s->chunk[i])
			pfree(s->chunk[i]);
		if (s->doc[i])
			pfree(s->doc[i]);
	}
	memset(s, 0, sizeof(*s));
}

void
unit_range_term(const UnitRangeSeg *s, uint32 t, double q, int id,
				SpmRangeTerm *out)
{
	out->term = s->ids[t];
	out->q = q;
	out->max_w = s->max_w[t];
	out->dense = s->dense[t];
	out->nr = s->nr[t];
	out->id = id;
}

/*
 * The callbacks.  A handout goes into the buffer not handed out last;
 * that one is spoilt (see UnitRangeSeg).
 */
static uint8 *
chunk_buffer(UnitRangeSeg *s, uint32 n)
{
	if (s->chunk_len > 0)
		memset(s->chunk[s->chunk_cur], 0xFF, s->chunk_len);
	s->chunk_cur ^= 1;
	if (s->chunk[s->chunk_cur] == NULL || s->chunk_cap[s->chunk_cur] < n)
	{
		if (s->chunk[s->chunk_cur])
			pfree(s->chunk[s->chunk_cur]);
		s->chunk_cap[s->chunk_cur] = Max(n, 64);
		s->chunk[s->chunk_cur] = palloc(s->chunk_cap[s->chunk_cur]);
	}
	s->chunk_len = n;
	return s->chunk[s->chunk_cur];
}

static uint32
range_data(void *arg, const SpmRangeTerm *term, uint64 pos, const uint8 **data)
{
	UnitRangeSeg *s = arg;
	int64		t = unit_range_index(s, term->term);
	uint64		len;
	uint64		n;
	uint8	   *p;

	s->data_calls++;
	if (term->id < 0 || term->id >= s->nterms_q ||
		s->terms[term->id].term != term->term || t < 0 || s->df[t] == 0)
	{
		breach(s, "range_data for term %u id %d, not a query term",
			   term->term, term->id);
		/* zeros: no entry, no range */
		*data = p = chunk_buffer(s, 4);
		memset(p, 0, 4);
		return 4;
	}
	len = s->rlen[t];
	if (pos >= len || (!s->dense[t] && pos % 4 != 0))
	{
		breach(s, "range_data of term %u at %llu of %llu bytes (%s)", term->term,
			   (unsigned long long) pos, (unsigned long long) len,
			   s->dense[t] ? "dense" : "entries");
		*data = p = chunk_buffer(s, 4);
		memset(p, 0, 4);
		return 4;
	}
	if (s->max_chunk == 0)
		n = len - pos;
	else if (s->dense[t])
		n = 1 + chunk_rnd(s) % s->max_chunk;
	else
		n = 4 * (1 + chunk_rnd(s) % Max(s->max_chunk / 4, 1));
	if (s->overlong && chunk_rnd(s) % 3 == 0)
		n = Min(n + RANGE_PAD, len - pos + RANGE_PAD);
	else
		n = Min(n, len - pos);
	*data = p = chunk_buffer(s, (uint32) n);
	memcpy(p, s->rdata[t] + pos, n);
	return (uint32) n;
}

static uint32
range_end_doc(const UnitRangeSeg *s, uint32 r)
{
	return (uint32) Min((uint64) r * SPM_RANGE_DOCS + SPM_RANGE_DOCS,
						(uint64) s->scan_ndocs);
}

static void
range_begin(void *arg, uint32 r)
{
	UnitRangeSeg *s = arg;

	if (s->cur >= 0)
		breach(s, "range_begin(%u) inside range %lld", r, (long long) s->cur);
	if ((uint64) r * SPM_RANGE_DOCS >= s->scan_ndocs)
	{
		breach(s, "range_begin(%u) beyond the scan's %u documents", r,
			   s->scan_ndocs);
		s->cur = -1;
		return;
	}
	if (s->begun[r]++)
		breach(s, "range %u read twice", r);
	if (!s->qrange[r])
		breach(s, "range %u read, but no query term is in it", r);
	s->cur = r;
	s->next_local = r * SPM_RANGE_DOCS;
	s->ranges_read++;
}

static void
next_doc(void *arg, SpmRangeDoc *doc)
{
	UnitRangeSeg *s = arg;
	const SpmRangeDoc *d;
	SpmFwdElem *e;

	if (s->doc_len > 0)
		memset(s->doc[s->doc_cur], 0xFF, sizeof(SpmFwdElem) * s->doc_len);
	s->doc_len = 0;
	doc->nnz = 0;
	doc->elems = NULL;
	doc->terms16 = NULL;
	doc->w16 = NULL;
	if (s->cur < 0 || s->next_local >= range_end_doc(s, (uint32) s->cur))
	{
		breach(s, "next_doc outside a range or past its end (range %lld, docid %u)",
			   (long long) s->cur, s->next_local);
		return;
	}
	d = &s->docs[s->next_local];
	s->docs_read++;
	if (d->nnz > 0 && (s->alive == NULL || s->alive[s->next_local]))
		s->docs_scored++;
	s->next_local++;
	doc->nnz = d->nnz;
	if (d->elems)
	{
		s->doc_cur ^= 1;
		if (s->doc[s->doc_cur] == NULL || s->doc_cap[s->doc_cur] < d->nnz)
		{
			if (s->doc[s->doc_cur])
				pfree(s->doc[s->doc_cur]);
			s->doc_cap[s->doc_cur] = Max(d->nnz, 64);
			s->doc[s->doc_cur] = palloc(sizeof(SpmFwdElem) * s->doc_cap[s->doc_cur]);
		}
		e = s->doc[s->doc_cur];
		s->doc_len = d->nnz;
		if (s->fwd16)
		{
			/* the layout of spm_fwd_elems_bytes, in the same buffer */
			uint16	   *t16 = (uint16 *) e;
			float	   *w16 = (float *) ((char *) e + TYPEALIGN(4, 2 * d->nnz));

			for (int32 i = 0; i < d->nnz; i++)
			{
				if (d->elems[i].term >= 65536)
					breach(s, "a 16-bit forward copy with term %u", d->elems[i].term);
				t16[i] = (uint16) d->elems[i].term;
				w16[i] = d->elems[i].w;
			}
			doc->terms16 = t16;
			doc->w16 = w16;
		}
		else
		{
			memcpy(e, d->elems, sizeof(SpmFwdElem) * d->nnz);
			doc->elems = e;
		}
	}
}

static void
range_end(void *arg, uint32 r)
{
	UnitRangeSeg *s = arg;

	if (s->cur != (int64) r)
		breach(s, "range_end(%u) in range %lld", r, (long long) s->cur);
	else if (s->next_local != range_end_doc(s, r))
		breach(s, "range_end(%u) after docid %u, want %u", r, s->next_local,
			   range_end_doc(s, r));
	s->cur = -1;
}

static bool
is_alive(void *arg, uint32 local)
{
	UnitRangeSeg *s = arg;

	if (s->alive == NULL || s->cur < 0 || local >= s->next_local ||
		local < (uint32) s->cur * SPM_RANGE_DOCS)
	{
		breach(s, "is_alive(%u) outside the documents read of range %lld",
			   local, (long long) s->cur);
		return false;
	}
	return s->alive[local] != 0;
}

void
unit_range_scan(UnitRangeSeg *s, SpmRangeScan *scan,
				const SpmRangeTerm *terms, int nterms, uint32 ndocs,
				const uint8 *alive)
{
	if (s->qrange == NULL)
	{
		s->qrange = palloc(Max(s->nranges, 1));
		s->begun = palloc(Max(s->nranges, 1));
	}
	memset(s->qrange, 0, Max(s->nranges, 1));
	memset(s->begun, 0, Max(s->nranges, 1));
	for (int i = 0; i < nterms; i++)
	{
		int64		t = unit_range_index(s, terms[i].term);

		if (t < 0)
		{
			fprintf(stderr, "unit_range_scan: term %u not in the segment\n",
					terms[i].term);
			abort();
		}

		for (uint64 p = 0; p < s->rlen[t]; p += s->dense[t] ? 1 : 4)
		{
			uint32		e;

			if (s->dense[t])
				s->qrange[p] |= s->rdata[t][p] != 0;
			else
			{
				memcpy(&e, s->rdata[t] + p, sizeof(e));
				s->qrange[e >> 8] = 1;
			}
		}
	}
	s->terms = terms;
	s->nterms_q = nterms;
	s->scan_ndocs = ndocs;
	s->alive = alive;
	s->cur = -1;
	s->next_local = 0;
	s->ranges_read = s->docs_read = s->docs_scored = s->data_calls = 0;
	s->nerrors = 0;
	s->error[0] = '\0';

	memset(scan, 0, sizeof(*scan));
	scan->terms = terms;
	scan->nterms = nterms;
	scan->ndocs = ndocs;
	scan->nranges = s->nranges;
	scan->range_data = range_data;
	scan->range_begin = range_begin;
	scan->next_doc = next_doc;
	scan->range_end = range_end;
	scan->is_alive = alive ? is_alive : NULL;
	scan->arg = s;
}

void
unit_range_scan_done(UnitRangeSeg *s)
{
	if (s->cur >= 0)
		breach(s, "range %lld never ended", (long long) s->cur);
}

/*
 * unitrange.h: a segment's forward copy and range maxima in memory, for
 * the unit tests of the range-pruning kernel (src/spmrange.c), with the
 * kernel's callbacks.  The range maxima are laid out as spmwrite.c's
 * write_term_ranges writes them; the callbacks hand them out in chunks of
 * random sizes and record every breach of the callback protocol
 * (spmrange.h) instead of trusting the kernel.
 */
#ifndef UNITRANGE_H
#define UNITRANGE_H

#include "spmrange.h"

typedef struct UnitRangeSeg
{
	/*
	 * The segment: documents 0 .. ndocs - 1 over a vocabulary of nterms
	 * term ids, ids[0] < ids[1] < ...; the per-term arrays below are
	 * indexed by the position of the id in ids[].
	 */
	uint32		ndocs;
	uint32		nranges;		/* ceil(ndocs / SPM_RANGE_DOCS) */
	uint32		nterms;
	uint32	   *ids;			/* [nterms] */
	SpmRangeDoc *docs;			/* [ndocs], owned (elems may be NULL) */

	/* per term, from the documents */
	uint32	   *df;
	float	   *max_w;			/* largest weight (0 if df == 0) */
	uint32	   *nr;				/* ranges with a posting of the term */
	bool	   *dense;
	uint8	  **rdata;			/* the range maxima bytes (+ garbage pad) */
	uint64	   *rlen;			/* their length, pad excluded */

	/*
	 * Serving: chunks of 1 .. max_chunk bytes (0: all that is left), drawn
	 * from chunk_rng; with overlong set, sometimes more than the term's
	 * bytes (the garbage after them), as a page could hold.
	 */
	uint32		max_chunk;
	bool		overlong;
	uint64		chunk_rng;
	/*
	 * Hand documents out as SPM_SEG_FWD16 segments hold them (16-bit
	 * terms, then the weights; elems NULL); every id must be below 65536.
	 */
	bool		fwd16;

	/* the scan being served (unit_range_scan) */
	const SpmRangeTerm *terms;
	int			nterms_q;
	uint32		scan_ndocs;
	const uint8 *alive;			/* [ndocs] or NULL */
	uint8	   *qrange;			/* [nranges] 1 if a query term is there */
	uint8	   *begun;			/* [nranges] range_begin calls */
	int64		cur;			/* range being read, -1 if none */
	uint32		next_local;		/* next docid next_doc hands out */
	/*
	 * Handouts alternate between two buffers of each kind, and the one
	 * handed out before is overwritten with 0xFF bytes at each call: a
	 * kernel that kept using a chunk or a document past the next call
	 * would read garbage.
	 */
	uint8	   *chunk[2];
	uint32		chunk_cap[2];
	uint32		chunk_len;		/* of chunk[chunk_cur] */
	int			chunk_cur;
	SpmFwdElem *doc[2];
	int32		doc_cap[2];
	int32		doc_len;
	int			doc_cur;

	/* what the kernel did */
	int64		ranges_read;
	int64		docs_read;
	int64		docs_scored;	/* read, alive and not empty */
	int64		data_calls;
	int			nerrors;
	char		error[256];		/* the first breach */
} UnitRangeSeg;

/*
 * docs[ndocs] (taken over), whose elements' terms are among ids[nterms]
 * (ascending; copied; NULL for 0 .. nterms - 1), ascending in each
 */
extern void unit_range_build(UnitRangeSeg *s, uint32 ndocs, uint32 nterms,
							 const uint32 *ids, SpmRangeDoc *docs);
extern void unit_range_free(UnitRangeSeg *s);

/* the position of term id in s->ids, or -1 */
extern int64 unit_range_index(const UnitRangeSeg *s, uint32 id);

/* the descriptor of the term at position t (df > 0) with query weight q */
extern void unit_range_term(const UnitRangeSeg *s, uint32 t, double q, int id,
							SpmRangeTerm *out);

/*
 * Fill scan with s's callbacks for terms[nterms] (ascending, as
 * unit_range_term made them, id = their position) over local docids
 * [0, ndocs); alive[] or NULL.  Resets the protocol record.
 */
extern void unit_range_scan(UnitRangeSeg *s, SpmRangeScan *scan,
							const SpmRangeTerm *terms, int nterms,
							uint32 ndocs, const uint8 *alive);

/* after the kernel: record anything it left unfinished */
extern void unit_range_scan_done(UnitRangeSeg *s);

#endif							/* UNITRANGE_H */

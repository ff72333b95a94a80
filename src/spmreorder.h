/*-------------------------------------------------------------------------
 *
 * spmreorder.h
 *	  Docid order by recursive graph bisection ("BP", Dhulipala et al.,
 *	  KDD 2016), for CREATE INDEX ... WITH (reorder = on).
 *
 * Documents that share terms should get nearby docids: then a range of
 * 32 docids holds fewer distinct terms, its range maxima are fewer and
 * tighter (src/README "Ranges"), and the docid gaps in posting blocks are
 * smaller.  BP finds such an order by splitting the documents in two
 * halves, moving documents between them while that lowers an estimate of
 * the bits the halves' posting lists would take, and recursing into each
 * half down to SPM_RANGE_DOCS documents.  src/README "Reordering" says how
 * the build uses it, doc/decisions.md "Docid reordering in CREATE INDEX"
 * what it gives.
 *
 * Like spmrange.h, nothing here touches the buffer manager: the kernel
 * sees documents as lists of small term numbers and returns a
 * permutation, so the unit tests (test/unit) run it outside the server.
 * It never changes a result: an order of docids is as exact as any other.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMREORDER_H
#define SPMREORDER_H

/*
 * A document takes part with its SPM_REORDER_TERMS largest |weights|
 * (all of its terms if it has fewer), each term reduced modulo
 * SPM_REORDER_TERM_SPACE: the kernel's degree arrays then take 512 kB
 * whatever the dimensions (terms that share a number only make the order
 * a little worse).  SPM_REORDER_ITERS rounds of moves per split.  The
 * three were measured (doc/decisions.md "Docid reordering in CREATE
 * INDEX").
 */
#define SPM_REORDER_TERMS		32
#define SPM_REORDER_TERM_SPACE	65536
#define SPM_REORDER_ITERS		4

/*
 * Order ndocs documents: perm[i] = the document that goes to position i.
 * Document d is the terms terms[off[d] .. off[d + 1]), distinct, each
 * below nterms.  Splits stop at leaf documents (>= 1); the halves of a
 * split are multiples of leaf apart from the last, so leaves start at
 * multiples of leaf.  Deterministic: the same input gives the same
 * permutation.  Work memory (palloc) is 12 bytes per document plus 8 per
 * term number.
 */
extern void spm_reorder_bisect(uint32 ndocs, const uint32 *off,
							   const uint32 *terms, uint32 nterms,
							   uint32 leaf, int iters, uint32 *perm);

#endif							/* SPMREORDER_H */

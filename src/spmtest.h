/*-------------------------------------------------------------------------
 *
 * spmtest.h
 *	  Test-only knobs of the kernels.
 *
 * Only the unit tests (test/unit) include this header: no server file
 * does, so the server always runs the kernels with their defaults.  Each
 * knob is a setter; the tests set a knob back to its default when done.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMTEST_H
#define SPMTEST_H

/*
 * spmrange.c: the fewest ranges the visit order is filled with at a time
 * (default SPM_RANGE_BAND_MIN; lower values give many bands).
 */
extern void spm_test_range_band_min(uint32 n);

/*
 * spmrange.c: false, spm_range_add_dense and the scoring of 16-bit
 * forward-copy documents do not use AVX2 (default true)
 */
extern void spm_test_range_avx2(bool use);

/*
 * spmrange.c: the score range pruning gives a document of a 16-bit
 * forward copy (terms t16[nnz], weights w16[nnz], or with w16 NULL the
 * codes c16[nnz] of format 6) for the query terms (ascending), by the
 * loop spm_test_range_avx2 selects, with qidx or by binary search;
 * *ordered false if the terms do not strictly ascend.
 */
struct SpmRangeTerm;
extern double spm_test_range_score16(const struct SpmRangeTerm *terms,
									 int nterms, bool use_qidx,
									 const uint16 *t16, const float *w16,
									 const uint8 *c16, int32 nnz,
									 bool *ordered);

/*
 * spmtraverse.c: true, a window with non-essential terms always takes the
 * MaxScore path, whatever its cost rule says (default false).
 */
extern void spm_test_always_maxscore(bool always);

#endif							/* SPMTEST_H */

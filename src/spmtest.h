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

/* spmrange.c: false, spm_range_add_dense does not use AVX2 (default true) */
extern void spm_test_range_avx2(bool use);

/*
 * spmtraverse.c: true, a window with non-essential terms always takes the
 * MaxScore path, whatever its cost rule says (default false).
 */
extern void spm_test_always_maxscore(bool always);

#endif							/* SPMTEST_H */

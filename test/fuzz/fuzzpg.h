/*
 * fuzzpg.h: the stand-in backend the fuzz targets run the extension's
 * code against (fuzzpg.c).  palloc lives on malloc in memory contexts that
 * are really freed, ereport(ERROR) longjmps back to the target, and a fake
 * buffer manager serves the pages of a relation made from the fuzzer's
 * bytes.  See test/fuzz/README.
 */
#ifndef FUZZPG_H
#define FUZZPG_H

#include "postgres.h"

#include <setjmp.h>

#include "fmgr.h"
#include "utils/rel.h"

/* the last ERROR raised (elevel >= ERROR only) */
typedef struct FuzzError
{
	int			code;			/* sqlerrcode, ERRCODE_INTERNAL_ERROR by
								 * default, as in the server */
	char		msg[512];
	const char *file;
	int			line;
} FuzzError;

extern FuzzError fuzz_error;

/* start an iteration: a fresh CurrentMemoryContext */
extern void fuzz_begin(void);

/* end it: free the iteration's memory; abort if a buffer is still pinned */
extern void fuzz_end(void);

/*
 * Run stmt; ok becomes false if it raised an ERROR (then every buffer pin
 * and lock is released, as the server's abort does).  Variables stmt
 * assigns and the caller reads afterwards must be volatile.
 */
#define FUZZ_TRY(ok, stmt) \
	do { \
		sigjmp_buf	fuzz_jb_; \
		sigjmp_buf *fuzz_save_ = PG_exception_stack; \
		if (sigsetjmp(fuzz_jb_, 0) == 0) \
		{ \
			PG_exception_stack = &fuzz_jb_; \
			stmt; \
			(ok) = true; \
		} \
		else \
		{ \
			(ok) = false; \
			fuzz_release_buffers(); \
		} \
		PG_exception_stack = fuzz_save_; \
	} while (0)

/*
 * An ERROR whose code is not in allowed[] (terminated by 0) is a finding:
 * print it and abort (the fuzzer records the input).  Internal errors
 * (elog) are never allowed: they are "cannot happen" checks.
 */
extern void fuzz_check_error(const int *allowed);

/* abort with a message: an oracle failed */
extern void fuzz_fail(const char *fmt,...) pg_attribute_printf(1, 2) pg_attribute_noreturn();

/* abort unless v is a canonical sparsevec (what every input path must make) */
struct SparseVector;
extern void fuzz_check_sparsevec(const struct SparseVector *v);

/* the element of v at 0-based index, which must be x (bit for bit) */
extern bool fuzz_vector_has(const struct SparseVector *v, int32 index, float x);

/* call a V1 function with three arguments (unused ones are ignored) */
extern Datum fuzz_call(PGFunction f, Datum a0, Datum a1, Datum a2);

/* ---- the fake relation ---- */

/*
 * A relation whose blocks are the input's BLCKSZ-sized pieces (at most
 * maxpages; a short last piece is zero-padded).  Each iteration gets a new
 * relfilenode, so caches keyed by it never mix inputs.  Pages are
 * readable only while their buffer is content-locked: the others are
 * poisoned for AddressSanitizer.
 */
extern Relation fuzz_relation(const uint8 *data, size_t len, int maxpages);
extern void fuzz_release_buffers(void);
extern int	fuzz_pins_held(void);

#endif							/* FUZZPG_H */

/*
 * stubs.c: just enough of the backend for the server-free sources.
 * palloc is malloc; an ereport(ERROR) or a failed Assert aborts the test.
 */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>

#include "miscadmin.h"

/* MemoryContextSwitchTo sets it; palloc ignores it */
MemoryContext CurrentMemoryContext = NULL;

/* CHECK_FOR_INTERRUPTS: never pending here */
volatile sig_atomic_t InterruptPending = false;

void
ProcessInterrupts(void)
{
}

void *
palloc(Size size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void *
palloc0(Size size)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void *
palloc_extended(Size size, int flags)
{
	return (flags & MCXT_ALLOC_ZERO) ? palloc0(size) : palloc(size);
}

void *
repalloc(void *pointer, Size size)
{
	void	   *p = realloc(pointer, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void
pfree(void *pointer)
{
	free(pointer);
}

bool
errstart(int elevel, const char *domain)
{
	return elevel >= ERROR;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	fprintf(stderr, "ereport(ERROR) at %s:%d (%s)\n", filename, lineno, funcname);
	abort();
}

int
errcode(int sqlerrcode)
{
	return 0;
}

int
errmsg(const char *fmt,...)
{
	return 0;
}

int
errhint(const char *fmt,...)
{
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	return 0;
}

void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "assertion failed: %s at %s:%d\n", conditionName,
			fileName, lineNumber);
	abort();
}

/*
 * fuzzpg.c: just enough of the backend for the fuzz targets (fuzzpg.h).
 *
 * Unlike test/unit/stubs.c, an ERROR does not abort: it longjmps to the
 * innermost FUZZ_TRY/PG_TRY like the server's does, after recording the
 * SQLSTATE and message, so that a target can check that bad input gets a
 * proper error.  Memory contexts are real enough that MemoryContextDelete
 * frees what was allocated in them (the segment cache relies on it) and
 * AddressSanitizer sees every use after free.
 */
#include "fuzzpg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "access/xlog.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "nodes/memnodes.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "sparsevec.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)	__asan_poison_memory_region((p), (n))
#define UNPOISON(p, n)	__asan_unpoison_memory_region((p), (n))
#else
#define POISON(p, n)	((void) 0)
#define UNPOISON(p, n)	((void) 0)
#endif

/* ----------------------------------------------------------------
 * Errors
 * ----------------------------------------------------------------
 */
FuzzError	fuzz_error;
sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;
volatile sig_atomic_t InterruptPending = false;

void
fuzz_fail(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	fprintf(stderr, "FUZZ FINDING: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

bool
errstart(int elevel, const char *domain)
{
	if (elevel < ERROR)
		return false;
	fuzz_error.code = ERRCODE_INTERNAL_ERROR;
	fuzz_error.msg[0] = '\0';
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	fuzz_error.file = filename;
	fuzz_error.line = lineno;
	/* never right: fail here, where the stack shows the caller */
	if (fuzz_error.code == ERRCODE_INTERNAL_ERROR)
		fuzz_fail("ERROR %s at %s:%d: %s",
				  unpack_sql_state(fuzz_error.code), filename, lineno,
				  fuzz_error.msg);
	if (PG_exception_stack == NULL)
		fuzz_fail("ERROR outside any FUZZ_TRY at %s:%d: %s", filename, lineno,
				  fuzz_error.msg);
	siglongjmp(*PG_exception_stack, 1);
}

void
pg_re_throw(void)
{
	if (PG_exception_stack == NULL)
		fuzz_fail("PG_RE_THROW outside any FUZZ_TRY");
	siglongjmp(*PG_exception_stack, 1);
}

int
errcode(int sqlerrcode)
{
	fuzz_error.code = sqlerrcode;
	return 0;
}

static void
set_message(const char *fmt, va_list ap)
{
	vsnprintf(fuzz_error.msg, sizeof(fuzz_error.msg), fmt, ap);
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_plural(const char *fmt_singular, const char *fmt_plural,
			  unsigned long n,...)
{
	return 0;
}

int
errdetail(const char *fmt,...)
{
	return 0;
}

int
errdetail_plural(const char *fmt_singular, const char *fmt_plural,
				 unsigned long n,...)
{
	return 0;
}

int
errhint(const char *fmt,...)
{
	return 0;
}

void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fuzz_fail("assertion failed: %s at %s:%d", conditionName, fileName,
			  lineNumber);
}

void
fuzz_check_error(const int *allowed)
{
	for (const int *a = allowed; *a != 0; a++)
		if (fuzz_error.code == *a)
			return;
	fuzz_fail("ERROR with unexpected SQLSTATE %s at %s:%d: %s",
			  unpack_sql_state(fuzz_error.code), fuzz_error.file,
			  fuzz_error.line, fuzz_error.msg);
}

/* pgcommon has no unpack_sql_state: the server's, five characters */
char *
unpack_sql_state(int sql_state)
{
	static char buf[12];

	for (int i = 0; i < 5; i++)
	{
		buf[i] = PGUNSIXBIT(sql_state);
		sql_state >>= 6;
	}
	buf[5] = '\0';
	return buf;
}

void
ProcessInterrupts(void)
{
	InterruptPending = false;
}

bool
RecoveryInProgress(void)
{
	return false;
}

/* ----------------------------------------------------------------
 * Memory contexts: every chunk is linked into its context
 * ----------------------------------------------------------------
 */
typedef struct FuzzChunk
{
	struct FuzzChunk *prev;
	struct FuzzChunk *next;
	struct FuzzContext *cxt;
	Size		size;
} FuzzChunk;

#define CHUNK_HDR	MAXALIGN(sizeof(FuzzChunk))

typedef struct FuzzContext
{
	MemoryContextData base;
	FuzzChunk	chunks;			/* circular list head */
} FuzzContext;

MemoryContext CurrentMemoryContext = NULL;
MemoryContext TopMemoryContext = NULL;
static MemoryContext iteration_cxt = NULL;

static MemoryContext
new_context(MemoryContext parent, const char *name)
{
	FuzzContext *c = calloc(1, sizeof(FuzzContext));

	if (c == NULL)
		abort();
	c->base.type = T_AllocSetContext;
	c->base.name = name;
	c->base.parent = parent;
	c->chunks.prev = c->chunks.next = &c->chunks;
	if (parent)
	{
		c->base.nextchild = parent->firstchild;
		if (parent->firstchild)
			parent->firstchild->prevchild = &c->base;
		parent->firstchild = &c->base;
	}
	return &c->base;
}

MemoryContext
AllocSetContextCreateInternal(MemoryContext parent, const char *name,
							  Size minContextSize, Size initBlockSize,
							  Size maxBlockSize)
{
	return new_context(parent, name);
}

void
MemoryContextDeleteChildren(MemoryContext context)
{
	while (context->firstchild)
		MemoryContextDelete(context->firstchild);
}

void
MemoryContextReset(MemoryContext context)
{
	FuzzContext *c = (FuzzContext *) context;

	MemoryContextDeleteChildren(context);
	while (c->chunks.next != &c->chunks)
	{
		FuzzChunk  *ch = c->chunks.next;

		c->chunks.next = ch->next;
		free(ch);
	}
	c->chunks.prev = &c->chunks;
}

void
MemoryContextDelete(MemoryContext context)
{
	MemoryContext parent = context->parent;

	MemoryContextReset(context);
	if (parent)
	{
		if (context->prevchild)
			context->prevchild->nextchild = context->nextchild;
		else
			parent->firstchild = context->nextchild;
		if (context->nextchild)
			context->nextchild->prevchild = context->prevchild;
	}
	if (CurrentMemoryContext == context)
		CurrentMemoryContext = parent;
	free(context);
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	FuzzContext *c = (FuzzContext *) context;
	FuzzChunk  *ch;

	if (!AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	ch = malloc(CHUNK_HDR + size);
	if (ch == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	ch->cxt = c;
	ch->size = size;
	ch->next = c->chunks.next;
	ch->prev = &c->chunks;
	c->chunks.next->prev = ch;
	c->chunks.next = ch;
	return (char *) ch + CHUNK_HDR;
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	void	   *p = MemoryContextAlloc(context, size);

	memset(p, 0, size);
	return p;
}

void *
MemoryContextAllocZeroAligned(MemoryContext context, Size size)
{
	return MemoryContextAllocZero(context, size);
}

void *
palloc(Size size)
{
	return MemoryContextAlloc(CurrentMemoryContext, size);
}

void *
palloc0(Size size)
{
	return MemoryContextAllocZero(CurrentMemoryContext, size);
}

/* spmtraverse.c allocates its per-query arrays with MCXT_ALLOC_HUGE */
void *
palloc_extended(Size size, int flags)
{
	return (flags & MCXT_ALLOC_ZERO) ? palloc0(size) : palloc(size);
}

void
pfree(void *pointer)
{
	FuzzChunk  *ch = (FuzzChunk *) ((char *) pointer - CHUNK_HDR);

	ch->prev->next = ch->next;
	ch->next->prev = ch->prev;
	free(ch);
}

void *
repalloc(void *pointer, Size size)
{
	FuzzChunk  *ch = (FuzzChunk *) ((char *) pointer - CHUNK_HDR);
	void	   *p = MemoryContextAlloc(&ch->cxt->base, size);

	memcpy(p, pointer, Min(size, ch->size));
	pfree(pointer);
	return p;
}

char *
pnstrdup(const char *in, Size len)
{
	char	   *out;

	len = strnlen(in, len);
	out = palloc(len + 1);
	memcpy(out, in, len);
	out[len] = '\0';
	return out;
}

char *
pstrdup(const char *in)
{
	return pnstrdup(in, strlen(in));
}

void
fuzz_begin(void)
{
	if (TopMemoryContext == NULL)
		TopMemoryContext = new_context(NULL, "TopMemoryContext");
	iteration_cxt = new_context(TopMemoryContext, "fuzz iteration");
	CurrentMemoryContext = iteration_cxt;
	PG_exception_stack = NULL;
	InterruptPending = false;
}

void
fuzz_end(void)
{
	if (fuzz_pins_held() > 0)
		fuzz_fail("%d buffer pins still held at the end of an iteration",
				  fuzz_pins_held());
	fuzz_release_buffers();
	MemoryContextDelete(iteration_cxt);
	iteration_cxt = NULL;
	CurrentMemoryContext = TopMemoryContext;
}

/* ----------------------------------------------------------------
 * Hash tables: a list, enough for a few hundred keys
 * ----------------------------------------------------------------
 */
struct HTAB
{
	Size		keysize;
	Size		entrysize;
	MemoryContext cxt;
	int			n;
	int			cap;
	char	  **entries;
};

HTAB *
hash_create(const char *tabname, long nelem, const HASHCTL *info, int flags)
{
	MemoryContext cxt = (flags & HASH_CONTEXT) ? info->hcxt : TopMemoryContext;
	HTAB	   *h = MemoryContextAllocZero(cxt, sizeof(HTAB));

	h->keysize = info->keysize;
	h->entrysize = info->entrysize;
	h->cxt = cxt;
	return h;
}

void *
hash_search(HTAB *h, const void *key, HASHACTION action, bool *found)
{
	for (int i = 0; i < h->n; i++)
	{
		if (memcmp(h->entries[i], key, h->keysize) == 0)
		{
			if (found)
				*found = true;
			if (action == HASH_REMOVE)
			{
				char	   *e = h->entries[i];

				h->entries[i] = h->entries[--h->n];
				return e;
			}
			return h->entries[i];
		}
	}
	if (found)
		*found = false;
	if (action != HASH_ENTER)
		return NULL;
	if (h->n == h->cap)
	{
		int			cap = h->cap ? h->cap * 2 : 16;
		char	  **e = MemoryContextAlloc(h->cxt, cap * sizeof(char *));

		if (h->n)
			memcpy(e, h->entries, h->n * sizeof(char *));
		h->entries = e;
		h->cap = cap;
	}
	h->entries[h->n] = MemoryContextAllocZero(h->cxt, h->entrysize);
	memcpy(h->entries[h->n], key, h->keysize);
	return h->entries[h->n++];
}

/* ----------------------------------------------------------------
 * Buffers: block b of the fake relation is local buffer -(b + 1)
 * ----------------------------------------------------------------
 */
int			NBuffers = 0;
char	   *BufferBlocks = NULL;
int			NLocBuffer = 0;
Block	   *LocalBufferBlockPointers = NULL;

static int	npages = 0;
static int *pins = NULL;
static int *locks = NULL;		/* 0, or the lock mode held */
static RelationData fake_rel;
static FormData_pg_class fake_class;
static Oid	next_relfilenode = 100000;

static void
free_pages(void)
{
	for (int i = 0; i < npages; i++)
	{
		UNPOISON(LocalBufferBlockPointers[i], BLCKSZ);
		free(LocalBufferBlockPointers[i]);
	}
	free(LocalBufferBlockPointers);
	free(pins);
	free(locks);
	LocalBufferBlockPointers = NULL;
	pins = locks = NULL;
	npages = NLocBuffer = 0;
}

Relation
fuzz_relation(const uint8 *data, size_t len, int maxpages)
{
	int			n = (int) Min((len + BLCKSZ - 1) / BLCKSZ, (size_t) maxpages);

	free_pages();
	npages = NLocBuffer = n;
	LocalBufferBlockPointers = calloc(Max(n, 1), sizeof(Block));
	pins = calloc(Max(n, 1), sizeof(int));
	locks = calloc(Max(n, 1), sizeof(int));
	for (int i = 0; i < n; i++)
	{
		size_t		from = (size_t) i * BLCKSZ;
		size_t		take = Min((size_t) BLCKSZ, len - from);
		char	   *p = aligned_alloc(BLCKSZ, BLCKSZ);

		memset(p, 0, BLCKSZ);
		memcpy(p, data + from, take);
		POISON(p, BLCKSZ);
		LocalBufferBlockPointers[i] = p;
	}

	memset(&fake_rel, 0, sizeof(fake_rel));
	memset(&fake_class, 0, sizeof(fake_class));
	strcpy(NameStr(fake_class.relname), "fuzz_idx");
	fake_rel.rd_rel = &fake_class;
	fake_rel.rd_node.spcNode = 1663;
	fake_rel.rd_node.dbNode = 1;
	fake_rel.rd_node.relNode = next_relfilenode++;
	return &fake_rel;
}

static int
buffer_index(Buffer buffer)
{
	int			i = -buffer - 1;

	if (buffer >= 0 || i >= npages)
		fuzz_fail("invalid buffer %d", buffer);
	return i;
}

BlockNumber
RelationGetNumberOfBlocksInFork(Relation relation, ForkNumber forkNum)
{
	return forkNum == MAIN_FORKNUM ? (BlockNumber) npages : 0;
}

Buffer
ReadBuffer(Relation reln, BlockNumber blockNum)
{
	/*
	 * The server raises XX001 for a block past the end (md.c): the readers
	 * must check their links first, so here it is a finding.
	 */
	if (blockNum >= (BlockNumber) npages)
		fuzz_fail("read of block %u past the end (%d blocks)", blockNum, npages);

	/*
	 * The header checks of PageIsVerifiedExtended, which the server applies
	 * to every page it reads from disk (no checksums here): a page failing
	 * them never reaches the extension.
	 */
	{
		PageHeader	p = (PageHeader) LocalBufferBlockPointers[blockNum];
		bool		ok;

		UNPOISON(p, BLCKSZ);
		ok = PageIsNew((Page) p) ?
			true :
			((p->pd_flags & ~PD_VALID_FLAG_BITS) == 0 &&
			 p->pd_lower <= p->pd_upper && p->pd_upper <= p->pd_special &&
			 p->pd_special <= BLCKSZ && p->pd_special == MAXALIGN(p->pd_special));
		if (locks[blockNum] == 0)
			POISON(p, BLCKSZ);
		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid page in block %u of relation fuzz", blockNum)));
	}
	pins[blockNum]++;
	return -(Buffer) blockNum - 1;
}

/*
 * The fake pool keeps block b of the current input's relation in buffer
 * -(b + 1) for as long as the input runs: a recent buffer is still right
 * exactly when it is that buffer of that relation (the server's
 * ReadRecentBuffer checks the same under the buffer header's lock).
 */
bool
ReadRecentBuffer(RelFileNode rnode, ForkNumber forkNum, BlockNumber blockNum,
				 Buffer recent_buffer)
{
	if (!RelFileNodeEquals(rnode, fake_rel.rd_node) || forkNum != MAIN_FORKNUM ||
		recent_buffer != -(Buffer) blockNum - 1)
		return false;
	return ReadBuffer(&fake_rel, blockNum) == recent_buffer;
}

void
LockBuffer(Buffer buffer, int mode)
{
	int			i = buffer_index(buffer);

	if (pins[i] == 0)
		fuzz_fail("lock of unpinned block %d", i);
	if (mode == BUFFER_LOCK_UNLOCK)
	{
		if (locks[i] == 0)
			fuzz_fail("unlock of unlocked block %d", i);
		locks[i] = 0;
		POISON(LocalBufferBlockPointers[i], BLCKSZ);
		return;
	}
	if (locks[i] != 0)
		fuzz_fail("block %d locked twice (self-deadlock)", i);
	locks[i] = mode;
	UNPOISON(LocalBufferBlockPointers[i], BLCKSZ);
}

void
ReleaseBuffer(Buffer buffer)
{
	int			i = buffer_index(buffer);

	if (pins[i] == 0)
		fuzz_fail("release of unpinned block %d", i);
	if (locks[i] != 0 && pins[i] == 1)
		fuzz_fail("last pin of block %d released while locked", i);
	pins[i]--;
}

void
UnlockReleaseBuffer(Buffer buffer)
{
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buffer);
}

int
fuzz_pins_held(void)
{
	int			n = 0;

	for (int i = 0; i < npages; i++)
		n += pins[i] + (locks[i] != 0);
	return n;
}

void
fuzz_release_buffers(void)
{
	for (int i = 0; i < npages; i++)
	{
		if (locks[i])
			POISON(LocalBufferBlockPointers[i], BLCKSZ);
		pins[i] = locks[i] = 0;
	}
}

/* ----------------------------------------------------------------
 * fmgr and friends used by the type's functions
 * ----------------------------------------------------------------
 */
struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	if (VARATT_IS_EXTENDED(datum))
		fuzz_fail("the harness passed a toasted datum");
	return datum;
}

Datum
DirectFunctionCall1Coll(PGFunction func, Oid collation, Datum arg1)
{
	LOCAL_FCINFO(fcinfo, 1);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, NULL, 1, collation, NULL, NULL);
	fcinfo->args[0].value = arg1;
	fcinfo->args[0].isnull = false;
	result = (*func) (fcinfo);
	if (fcinfo->isnull)
		fuzz_fail("function returned NULL");
	return result;
}

int
pg_ltoa(int32 value, char *a)
{
	return sprintf(a, "%d", value);
}

/* the server's pqformat.c, same errors */
void
pq_copymsgbytes(StringInfo msg, char *buf, int datalen)
{
	if (datalen < 0 || datalen > (msg->len - msg->cursor))
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("insufficient data left in message")));
	memcpy(buf, &msg->data[msg->cursor], datalen);
	msg->cursor += datalen;
}

unsigned int
pq_getmsgint(StringInfo msg, int b)
{
	uint32		n32;

	if (b != 4)
		fuzz_fail("pq_getmsgint(%d) not in the harness", b);
	pq_copymsgbytes(msg, (char *) &n32, 4);
	return pg_ntoh32(n32);
}

float4
pq_getmsgfloat4(StringInfo msg)
{
	union
	{
		float4		f;
		uint32		i;
	}			swap;

	swap.i = pq_getmsgint(msg, 4);
	return swap.f;
}

void
fuzz_check_sparsevec(const SparseVector *v)
{
	const float *values = SPV_VALUES(v);

	if (VARSIZE(v) != SPV_SIZE(v->nnz))
		fuzz_fail("varlena size %u for %d elements", VARSIZE(v), v->nnz);
	if (v->dim < 1 || v->dim > SPV_MAX_DIM || v->nnz < 0 ||
		v->nnz > v->dim || v->nnz > SPV_MAX_NNZ || v->unused != 0)
		fuzz_fail("bad header dim %d nnz %d unused %d", v->dim, v->nnz,
				  v->unused);
	for (int i = 0; i < v->nnz; i++)
	{
		if (v->indices[i] < 0 || v->indices[i] >= v->dim ||
			(i > 0 && v->indices[i] <= v->indices[i - 1]))
			fuzz_fail("index %d = %d not ascending in [0, %d)", i,
					  v->indices[i], v->dim);
		if (values[i] == 0 || isnan(values[i]) || isinf(values[i]))
			fuzz_fail("value %d = %g", i, values[i]);
	}
}

bool
fuzz_vector_has(const SparseVector *v, int32 index, float x)
{
	const float *values = SPV_VALUES(v);

	for (int j = 0; j < v->nnz; j++)
		if (v->indices[j] == index)
			return memcmp(&values[j], &x, sizeof(float)) == 0;
	return false;
}

Datum
fuzz_call(PGFunction f, Datum a0, Datum a1, Datum a2)
{
	LOCAL_FCINFO(fcinfo, 3);

	InitFunctionCallInfoData(*fcinfo, NULL, 3, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = a0;
	fcinfo->args[1].value = a1;
	fcinfo->args[2].value = a2;
	return f(fcinfo);
}

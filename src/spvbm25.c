/*-------------------------------------------------------------------------
 *
 * spvbm25.c
 *	  BM25 weights from text search vectors (tsvector).
 *
 * BM25 of a document D for a query Q is
 *
 *	 sum over distinct lexemes t of Q and D:  idf(t) * tfw(t, D)
 *
 *	 idf(t)    = ln(1 + (N - df + 0.5) / (df + 0.5))
 *	 tfw(t, D) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
 *
 * which is an inner product: bm25_document() stores tfw as a document's
 * vector, bm25_query() puts idf into the query's vector, and
 * ORDER BY doc <#> query is BM25 descending, answered exactly by
 * sparse_maxscore.  tf is the number of positions the tsvector keeps for a
 * lexeme and dl the sum of them over the document (bm25_doclen).
 *
 * A vocabulary table, named by the caller (regclass), maps lexemes to
 * dimensions and holds document frequencies: columns lexeme text,
 * dim integer (1-based) and df bigint.  It is read with SPI under the
 * caller's privileges, through a query that names the table by schema and
 * qualifies its operator, so neither the extension's schema nor the
 * caller's search_path matters.  bm25_document keeps what it read for the
 * rest of its statement and reads the whole table once when a statement
 * computes many vectors (a bulk load, a rebuild): see VocabCache.  The
 * functions never write.
 *
 * Two aggregates serve set-based ingest: bm25_corpus_stats (documents,
 * their lengths, each lexeme's document frequency, from tsvectors) and
 * bm25_dim_stats (document frequencies recounted from stored vectors).
 *
 * All symbols carry the spv_ prefix (see sparsevec.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "nodes/parsenodes.h"
#include "fmgr.h"
#include "storage/proc.h"
#include "tsearch/ts_type.h"
#include "tsearch/ts_utils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "sparsevec.h"

/* k1 above this makes no practical difference and risks overflow */
#define BM25_MAX_K1		1000.0

/*
 * SPI plans for vocabulary tables, kept for the life of the backend: a
 * trigger or a SQL function calls us with a fresh FmgrInfo every time, so
 * fn_extra would not keep them.  A plan is reused only for the same OID
 * under the same qualified name (the plan cache re-resolves the name when
 * the table changes, so a rename must not reuse it).
 */
#define VOCAB_PLANS 8

typedef struct VocabPlan
{
	Oid			relid;
	char	   *qualname;		/* in TopMemoryContext */
	SPIPlanPtr	plan;			/* kept (SPI_keepplan) */
} VocabPlan;

static VocabPlan vocab_plans[VOCAB_PLANS];
static int	vocab_next_victim = 0;

/* what the vocabulary says about one lexeme of the tsvector */
typedef struct VocabHit
{
	bool		found;
	int32		dim;			/* 1-based */
	int64		df;
} VocabHit;

static void
CheckDimsArg(int32 dims)
{
	if (dims < 1 || dims > SPV_MAX_DIM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dims must be between 1 and %d, not %d", SPV_MAX_DIM, dims)));
}

/* dl: the positions of every lexeme; stripped tsvectors have none */
static int64
DocLength(TSVector tsv)
{
	WordEntry  *we = ARRPTR(tsv);
	int64		dl = 0;

	for (int i = 0; i < tsv->size; i++)
	{
		if (!we[i].haspos)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tsvector lexeme \"%s\" has no positions",
							pnstrdup(STRPTR(tsv) + we[i].pos, we[i].len)),
					 errdetail("BM25 counts a lexeme's positions as its term frequency."),
					 errhint("Build document vectors from to_tsvector(), not from strip() or array_to_tsvector().")));
		dl += POSDATALEN(tsv, &we[i]);
	}
	return dl;
}

/* a lexeme by reference: into a tsvector, or a copy the cache owns */
typedef struct LexemeRef
{
	const char *str;
	int			len;
} LexemeRef;

/* the lexemes of a tsvector, in its (byte) order */
static LexemeRef *
TsvLexemes(TSVector tsv)
{
	LexemeRef  *lex = palloc(sizeof(LexemeRef) * Max(tsv->size, 1));
	WordEntry  *we = ARRPTR(tsv);

	for (int i = 0; i < tsv->size; i++)
	{
		lex[i].str = STRPTR(tsv) + we[i].pos;
		lex[i].len = we[i].len;
	}
	return lex;
}

/* the vocabulary's table name, schema-qualified and quoted */
static char *
VocabQualName(Oid relid)
{
	char	   *relname = get_rel_name(relid);
	Oid			nsp = get_rel_namespace(relid);

	if (relname == NULL || !OidIsValid(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("vocabulary relation with OID %u does not exist", relid)));
	return quote_qualified_identifier(get_namespace_name(nsp), relname);
}

/* the columns a vocabulary query returns must be lexeme text, dim int, df bigint */
static void
CheckVocabColumns(TupleDesc desc, Oid relid)
{
	if (SPI_gettypeid(desc, 1) != TEXTOID ||
		SPI_gettypeid(desc, 2) != INT4OID ||
		SPI_gettypeid(desc, 3) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("vocabulary table \"%s\" must have columns lexeme text, dim integer, df bigint",
						get_rel_name(relid))));
}

/*
 * Look up n lexemes, sorted as a tsvector sorts them, in the vocabulary
 * table; returns hits, where hits[i] describes lex[i] (palloc'd, at least
 * one element).
 */
static VocabHit *
LookupVocabulary(Oid relid, const LexemeRef *lex, int n)
{
	VocabHit   *hits = palloc(sizeof(VocabHit) * Max(n, 1));
	VocabPlan  *vp = NULL;
	Datum	   *lexemes;
	Datum		arg;
	char		nulls = ' ';
	int			ret;
	char	   *qualname;

	for (int i = 0; i < n; i++)
		hits[i].found = false;
	if (n == 0)
		return hits;

	qualname = VocabQualName(relid);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	for (int i = 0; i < VOCAB_PLANS; i++)
	{
		if (vocab_plans[i].plan && vocab_plans[i].relid == relid &&
			strcmp(vocab_plans[i].qualname, qualname) == 0)
		{
			vp = &vocab_plans[i];
			break;
		}
	}
	if (vp == NULL)
	{
		char	   *sql;
		Oid			argtype = TEXTARRAYOID;
		SPIPlanPtr	plan;

		sql = psprintf("SELECT lexeme, dim, df FROM %s "
					   "WHERE lexeme OPERATOR(pg_catalog.=) ANY ($1)", qualname);
		/*
		 * Custom plans only: a vocabulary grows from empty, and a generic
		 * plan made while it was small (a seq scan) would stay for the life
		 * of the backend unless something analyzes the table.  A custom plan
		 * sees the table's current size and the array's length.
		 */
		plan = SPI_prepare_cursor(sql, 1, &argtype, CURSOR_OPT_CUSTOM_PLAN);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		vp = &vocab_plans[vocab_next_victim];
		vocab_next_victim = (vocab_next_victim + 1) % VOCAB_PLANS;
		if (vp->plan)
		{
			SPI_freeplan(vp->plan);
			pfree(vp->qualname);
		}
		vp->relid = relid;
		vp->qualname = MemoryContextStrdup(TopMemoryContext, qualname);
		vp->plan = plan;
	}

	lexemes = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		lexemes[i] = PointerGetDatum(cstring_to_text_with_len(lex[i].str, lex[i].len));
	arg = PointerGetDatum(construct_array(lexemes, n, TEXTOID, -1, false,
										  TYPALIGN_INT));
	ret = SPI_execute_plan(vp->plan, &arg, &nulls, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(ret));

	CheckVocabColumns(SPI_tuptable->tupdesc, relid);

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		text	   *t;
		int			lo = 0;
		int			hi = n - 1;
		int			at = -1;
		Datum		d;

		t = DatumGetTextPP(SPI_getbinval(tup, desc, 1, &isnull));
		/* the lexemes are sorted by tsCompareString */
		while (lo <= hi)
		{
			int			mid = lo + (hi - lo) / 2;
			int			c = tsCompareString(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
											(char *) lex[mid].str, lex[mid].len,
											false);

			if (c == 0)
			{
				at = mid;
				break;
			}
			if (c < 0)
				hi = mid - 1;
			else
				lo = mid + 1;
		}
		if (at < 0)
			elog(ERROR, "vocabulary returned a lexeme that was not asked for");
		if (hits[at].found)
			ereport(ERROR,
					(errcode(ERRCODE_CARDINALITY_VIOLATION),
					 errmsg("lexeme \"%s\" appears more than once in vocabulary table \"%s\"",
							text_to_cstring(t), get_rel_name(relid)),
					 errhint("Make lexeme the vocabulary's primary key.")));
		hits[at].found = true;

		d = SPI_getbinval(tup, desc, 2, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lexeme \"%s\" has a NULL dim in vocabulary table \"%s\"",
							text_to_cstring(t), get_rel_name(relid))));
		hits[at].dim = DatumGetInt32(d);
		d = SPI_getbinval(tup, desc, 3, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lexeme \"%s\" has a NULL df in vocabulary table \"%s\"",
							text_to_cstring(t), get_rel_name(relid))));
		hits[at].df = DatumGetInt64(d);
	}

	SPI_finish();
	return hits;
}

/*
 * The vocabulary of one statement, for bm25_document.
 *
 * A statement that computes many document vectors (INSERT ... SELECT of a
 * load, the table rewrite of a rebuild) would otherwise look the lexemes
 * of every row up with a query of its own.  The cache, kept in fn_extra,
 * remembers each lexeme found (its dim); after VOCAB_FULL_AFTER calls it
 * reads the whole vocabulary once, with one query, and from then on asks
 * the table only for lexemes it does not hold.  bm25_document is STABLE:
 * within one statement the answer may not change, and the cache lives no
 * longer than that: it is dropped when the command id or the transaction
 * differs from the one it was filled in (a PL/pgSQL trigger keeps its
 * expressions for a whole transaction, and every statement it runs, such
 * as adding lexemes to the vocabulary, advances the command id).  A lexeme
 * the cache does not hold is looked up again, never assumed absent.
 */
#define VOCAB_FULL_AFTER	1000
#define VOCAB_FETCH			10000

typedef struct VocabEntry
{
	LexemeRef	key;			/* must be first: the hash key */
	int32		dim;
	int64		df;
	bool		dim_null;
	bool		df_null;
} VocabEntry;

typedef struct VocabCache
{
	Oid			relid;
	LocalTransactionId lxid;
	CommandId	cid;
	int64		calls;
	bool		full;			/* every row of the table is in map */
	MemoryContext cxt;			/* map and its strings */
	HTAB	   *map;
} VocabCache;

static uint32
lexeme_hash(const void *key, Size keysize)
{
	const LexemeRef *k = key;

	return hash_bytes((const unsigned char *) k->str, k->len);
}

static int
lexeme_match(const void *key1, const void *key2, Size keysize)
{
	const LexemeRef *a = key1;
	const LexemeRef *b = key2;

	if (a->len != b->len)
		return 1;
	return memcmp(a->str, b->str, a->len);
}

/* a hash of LexemeRef keys (the strings are the caller's to keep) */
static HTAB *
lexeme_map_create(const char *name, Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(LexemeRef);
	ctl.entrysize = entrysize;
	ctl.hash = lexeme_hash;
	ctl.match = lexeme_match;
	ctl.hcxt = cxt;
	return hash_create(name, 1024, &ctl,
					   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

static LocalTransactionId
current_lxid(void)
{
#if PG_VERSION_NUM >= 170000
	return MyProc->vxid.lxid;
#else
	return MyProc->lxid;
#endif
}

/* enter a lexeme into the cache, its string copied; false if already there */
static VocabEntry *
cache_enter(VocabCache *cache, const char *str, int len, bool *found)
{
	LexemeRef	key = {str, len};
	VocabEntry *e = hash_search(cache->map, &key, HASH_ENTER, found);

	if (!*found)
	{
		char	   *copy = MemoryContextAlloc(cache->cxt, Max(len, 1));

		memcpy(copy, str, len);
		e->key.str = copy;
		e->key.len = len;
	}
	return e;
}

/* read every row of the vocabulary into the cache, in batches */
static void
cache_fill(VocabCache *cache)
{
	char	   *sql = psprintf("SELECT lexeme, dim, df FROM %s",
							   VocabQualName(cache->relid));
	SPIPlanPtr	plan;
	Portal		portal;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, VOCAB_FETCH);
		if (SPI_processed == 0)
			break;
		CheckVocabColumns(SPI_tuptable->tupdesc, cache->relid);
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			bool		found;
			text	   *t;
			VocabEntry *e;
			Datum		d;

			d = SPI_getbinval(tup, desc, 1, &isnull);
			if (isnull)
				continue;		/* matches no lexeme, as in a lookup */
			t = DatumGetTextPP(d);
			e = cache_enter(cache, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &found);
			if (found)
				ereport(ERROR,
						(errcode(ERRCODE_CARDINALITY_VIOLATION),
						 errmsg("lexeme \"%s\" appears more than once in vocabulary table \"%s\"",
								text_to_cstring(t), get_rel_name(cache->relid)),
						 errhint("Make lexeme the vocabulary's primary key.")));
			d = SPI_getbinval(tup, desc, 2, &e->dim_null);
			e->dim = e->dim_null ? 0 : DatumGetInt32(d);
			d = SPI_getbinval(tup, desc, 3, &e->df_null);
			e->df = e->df_null ? 0 : DatumGetInt64(d);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	cache->full = true;
}

/*
 * The vocabulary entries of every lexeme of tsv, through the statement's
 * cache: hits[i] for lexeme i, found false when the table has no such
 * lexeme.
 */
static VocabHit *
CachedLookup(FunctionCallInfo fcinfo, Oid relid, TSVector tsv)
{
	VocabCache *cache = fcinfo->flinfo->fn_extra;
	LexemeRef  *lex = TsvLexemes(tsv);
	VocabHit   *hits = palloc(sizeof(VocabHit) * Max(tsv->size, 1));
	LexemeRef  *miss = palloc(sizeof(LexemeRef) * Max(tsv->size, 1));
	int		   *missat = palloc(sizeof(int) * Max(tsv->size, 1));
	int			nmiss = 0;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(VocabCache));
		cache->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
										   "bm25 vocabulary cache",
										   ALLOCSET_DEFAULT_SIZES);
		fcinfo->flinfo->fn_extra = cache;
	}
	if (cache->map == NULL || cache->relid != relid ||
		cache->lxid != current_lxid() ||
		cache->cid != GetCurrentCommandId(false))
	{
		MemoryContextReset(cache->cxt);
		cache->map = lexeme_map_create("bm25 vocabulary cache",
									   sizeof(VocabEntry), cache->cxt);
		cache->relid = relid;
		cache->lxid = current_lxid();
		cache->cid = GetCurrentCommandId(false);
		cache->calls = 0;
		cache->full = false;
	}
	if (tsv->size > 0 && !cache->full && ++cache->calls > VOCAB_FULL_AFTER)
	{
		/* from empty: a lexeme read twice is then a duplicate row */
		MemoryContextReset(cache->cxt);
		cache->map = lexeme_map_create("bm25 vocabulary cache",
									   sizeof(VocabEntry), cache->cxt);
		cache_fill(cache);
	}

	for (int i = 0; i < tsv->size; i++)
	{
		VocabEntry *e = hash_search(cache->map, &lex[i], HASH_FIND, NULL);

		hits[i].found = false;
		if (e == NULL)
		{
			miss[nmiss] = lex[i];
			missat[nmiss++] = i;
			continue;
		}
		if (e->dim_null)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lexeme \"%s\" has a NULL dim in vocabulary table \"%s\"",
							pnstrdup(lex[i].str, lex[i].len), get_rel_name(relid))));
		if (e->df_null)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lexeme \"%s\" has a NULL df in vocabulary table \"%s\"",
							pnstrdup(lex[i].str, lex[i].len), get_rel_name(relid))));
		hits[i].found = true;
		hits[i].dim = e->dim;
		hits[i].df = e->df;
	}
	if (nmiss > 0)
	{
		VocabHit   *mh = LookupVocabulary(relid, miss, nmiss);

		for (int j = 0; j < nmiss; j++)
		{
			bool		found;
			VocabEntry *e;

			if (!mh[j].found)
				continue;
			hits[missat[j]] = mh[j];
			e = cache_enter(cache, miss[j].str, miss[j].len, &found);
			e->dim = mh[j].dim;
			e->df = mh[j].df;
			e->dim_null = e->df_null = false;
		}
	}
	return hits;
}

/* a vocabulary dimension must fit the vectors */
static void
CheckVocabDim(TSVector tsv, int i, int32 dim, int32 dims)
{
	WordEntry  *we = ARRPTR(tsv) + i;

	if (dim < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lexeme \"%s\" has dim %d in the vocabulary; dims are 1-based",
						pnstrdup(STRPTR(tsv) + we->pos, we->len), dim)));
	if (dim > dims)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lexeme \"%s\" has dim %d in the vocabulary, beyond the vectors' %d dimensions",
						pnstrdup(STRPTR(tsv) + we->pos, we->len), dim, dims),
				 errhint("The vocabulary has outgrown the vectors: rebuild them with more dimensions.")));
}

/* elements are collected 0-based and sorted before building the vector */
typedef struct Bm25Elem
{
	int32		index;
	float		value;
} Bm25Elem;

static int
CompareElem(const void *a, const void *b)
{
	int32		ia = ((const Bm25Elem *) a)->index;
	int32		ib = ((const Bm25Elem *) b)->index;

	return (ia > ib) - (ia < ib);
}

static SparseVector *
BuildVector(Bm25Elem *elems, int n, int32 dims, Oid relid)
{
	SparseVector *result;

	qsort(elems, (size_t) n, sizeof(Bm25Elem), CompareElem);
	result = spv_new(dims, n);
	for (int i = 0; i < n; i++)
	{
		if (i > 0 && elems[i].index == elems[i - 1].index)
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("two lexemes share dim %d in vocabulary table \"%s\"",
							elems[i].index + 1, get_rel_name(relid)),
					 errhint("Make dim unique in the vocabulary.")));
		result->indices[i] = elems[i].index;
		SPV_VALUES(result)[i] = elems[i].value;
	}
	return result;
}

/* a weight is stored as float4: it must stay finite and nonzero */
static float
StoreWeight(double w)
{
	float		f = (float) w;

	if (isnan(f) || isinf(f) || f == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("BM25 weight %g is out of range for type sparsevec", w)));
	return f;
}

/*
 * bm25_doclen(tsvector) -> bigint: the document length dl, the number of
 * positions in the tsvector.
 */
PG_FUNCTION_INFO_V1(spv_bm25_doclen);
Datum
spv_bm25_doclen(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);

	PG_RETURN_INT64(DocLength(tsv));
}

/*
 * bm25_idf(n_docs bigint, df bigint) -> float8
 */
static double
Idf(int64 n, int64 df, const char *lexeme)
{
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n_docs must not be negative, not " INT64_FORMAT, n)));
	if (df < 0 || df > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 lexeme ?
				 errmsg("df " INT64_FORMAT " of lexeme \"%s\" is not between 0 and n_docs " INT64_FORMAT,
						df, lexeme, n) :
				 errmsg("df " INT64_FORMAT " is not between 0 and n_docs " INT64_FORMAT, df, n),
				 errhint("Refresh the document frequencies and the document count together.")));
	return log(1.0 + ((double) n - (double) df + 0.5) / ((double) df + 0.5));
}

PG_FUNCTION_INFO_V1(spv_bm25_idf);
Datum
spv_bm25_idf(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(Idf(PG_GETARG_INT64(0), PG_GETARG_INT64(1), NULL));
}

/*
 * bm25_document(doc tsvector, vocab regclass, dims integer, avgdl float8,
 *				 k1 float8, b float8) -> sparsevec
 *
 * Every lexeme of doc must be in the vocabulary: a missing one is an error,
 * never a silently dropped term.
 */
PG_FUNCTION_INFO_V1(spv_bm25_document);
Datum
spv_bm25_document(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);
	Oid			relid = PG_GETARG_OID(1);
	int32		dims = PG_GETARG_INT32(2);
	double		avgdl = PG_GETARG_FLOAT8(3);
	double		k1 = PG_GETARG_FLOAT8(4);
	double		b = PG_GETARG_FLOAT8(5);
	WordEntry  *we = ARRPTR(tsv);
	VocabHit   *hits;
	Bm25Elem   *elems;
	double		norm;
	int64		dl;

	CheckDimsArg(dims);
	if (!(avgdl > 0) || isinf(avgdl))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("avgdl must be positive and finite, not %g", avgdl)));
	if (!(k1 >= 0 && k1 <= BM25_MAX_K1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k1 must be between 0 and %g, not %g", BM25_MAX_K1, k1)));
	if (!(b >= 0 && b <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("b must be between 0 and 1, not %g", b)));

	dl = DocLength(tsv);
	hits = CachedLookup(fcinfo, relid, tsv);
	elems = palloc(sizeof(Bm25Elem) * Max(tsv->size, 1));

	norm = k1 * (1.0 - b + b * (double) dl / avgdl);
	for (int i = 0; i < tsv->size; i++)
	{
		double		tf = POSDATALEN(tsv, &we[i]);

		if (!hits[i].found)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lexeme \"%s\" is not in vocabulary table \"%s\"",
							pnstrdup(STRPTR(tsv) + we[i].pos, we[i].len),
							get_rel_name(relid)),
					 errhint("Add the document's lexemes to the vocabulary before computing its vector.")));
		CheckVocabDim(tsv, i, hits[i].dim, dims);
		elems[i].index = hits[i].dim - 1;
		elems[i].value = StoreWeight(tf * (k1 + 1.0) / (tf + norm));
	}

	PG_RETURN_SPARSEVEC_P(BuildVector(elems, tsv->size, dims, relid));
}

/*
 * bm25_query(query tsvector, vocab regclass, dims integer, n_docs bigint)
 * -> sparsevec
 *
 * One element per distinct lexeme of the query found in the vocabulary,
 * weighted by its idf; lexemes the vocabulary does not know are in no
 * document and are left out.  Positions are not needed.
 */
PG_FUNCTION_INFO_V1(spv_bm25_query);
Datum
spv_bm25_query(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);
	int32		dims = PG_GETARG_INT32(2);
	int64		n = PG_GETARG_INT64(3);
	Oid			relid;
	VocabHit   *hits;
	Bm25Elem   *elems = palloc(sizeof(Bm25Elem) * Max(tsv->size, 1));
	int			nelems = 0;

	CheckDimsArg(dims);
	if (n < 0)
		(void) Idf(n, 0, NULL);
	relid = PG_GETARG_OID(1);
	hits = LookupVocabulary(relid, TsvLexemes(tsv), tsv->size);

	for (int i = 0; i < tsv->size; i++)
	{
		char	   *lexeme;

		if (!hits[i].found)
			continue;
		CheckVocabDim(tsv, i, hits[i].dim, dims);
		lexeme = pnstrdup(STRPTR(tsv) + ARRPTR(tsv)[i].pos, ARRPTR(tsv)[i].len);
		elems[nelems].index = hits[i].dim - 1;
		elems[nelems].value = StoreWeight(Idf(n, hits[i].df, lexeme));
		nelems++;
	}

	PG_RETURN_SPARSEVEC_P(BuildVector(elems, nelems, dims, relid));
}

/*
 * bm25_corpus_stats(doc tsvector, ord bigint): an aggregate over the
 * documents of a corpus (or of a batch of new ones), for building the
 * vocabulary and the statistics in one pass, set-based:
 *
 *	 (n_docs bigint, sum_dl bigint, lexemes text[], df bigint[])
 *
 * n_docs counts the non-NULL tsvectors, sum_dl their lengths
 * (bm25_doclen), and lexemes[i] is in df[i] of them.  The lexemes come in
 * the order of their first appearance by ord (a document's key, such as
 * its id; NULL sorts last): by the least ord of a document that has the
 * lexeme, then in byte order (a tsvector's order).  That is the order in
 * which the recipe's row trigger adds lexemes to the vocabulary when rows
 * come one at a time in ord order, so a vocabulary built in this order
 * gives the same dims whatever order the aggregate reads the rows in.
 */
typedef struct CorpusLexeme
{
	LexemeRef	key;			/* must be first: the hash key */
	int64		df;
	int64		first;			/* the least ord of a document with it */
	bool		first_null;		/* every such document had a NULL ord */
} CorpusLexeme;

typedef struct CorpusStats
{
	MemoryContext cxt;
	HTAB	   *map;
	int64		n_docs;
	int64		sum_dl;
	CorpusLexeme **order;		/* the entries, first appearance first */
	int64		nlex;
	int64		maxlex;
} CorpusStats;

PG_FUNCTION_INFO_V1(spv_bm25_corpus_stats_trans);
Datum
spv_bm25_corpus_stats_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	CorpusStats *st;
	TSVector	tsv;
	WordEntry  *we;
	int64		ord;
	bool		ord_null;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "bm25_corpus_stats transition called in a non-aggregate context");
	if (PG_ARGISNULL(0))
	{
		st = MemoryContextAllocZero(aggcxt, sizeof(CorpusStats));
		st->cxt = aggcxt;
		st->map = lexeme_map_create("bm25_corpus_stats", sizeof(CorpusLexeme), aggcxt);
		st->maxlex = 1024;
		st->order = MemoryContextAlloc(aggcxt, sizeof(CorpusLexeme *) * st->maxlex);
	}
	else
		st = (CorpusStats *) PG_GETARG_POINTER(0);
	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(st);

	tsv = PG_GETARG_TSVECTOR(1);
	ord_null = PG_ARGISNULL(2);
	ord = ord_null ? 0 : PG_GETARG_INT64(2);
	we = ARRPTR(tsv);
	st->sum_dl += DocLength(tsv);
	st->n_docs++;
	for (int i = 0; i < tsv->size; i++)
	{
		LexemeRef	key = {STRPTR(tsv) + we[i].pos, we[i].len};
		bool		found;
		CorpusLexeme *e = hash_search(st->map, &key, HASH_ENTER, &found);

		if (found)
		{
			e->df++;
			if (!ord_null && (e->first_null || ord < e->first))
			{
				e->first = ord;
				e->first_null = false;
			}
			continue;
		}
		e->key.str = MemoryContextAlloc(st->cxt, Max(key.len, 1));
		memcpy((char *) e->key.str, key.str, key.len);
		e->df = 1;
		e->first = ord;
		e->first_null = ord_null;
		if (st->nlex == st->maxlex)
		{
			st->maxlex *= 2;
			st->order = repalloc_huge(st->order, sizeof(CorpusLexeme *) * st->maxlex);
		}
		st->order[st->nlex++] = e;
	}
	PG_RETURN_POINTER(st);
}

/* first appearance: the least ord (NULL last), then byte order */
static int
CompareCorpusLexeme(const void *a, const void *b)
{
	const CorpusLexeme *x = *(CorpusLexeme *const *) a;
	const CorpusLexeme *y = *(CorpusLexeme *const *) b;

	if (x->first_null != y->first_null)
		return x->first_null ? 1 : -1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return tsCompareString((char *) x->key.str, x->key.len,
						   (char *) y->key.str, y->key.len, false);
}

PG_FUNCTION_INFO_V1(spv_bm25_corpus_stats_final);
Datum
spv_bm25_corpus_stats_final(PG_FUNCTION_ARGS)
{
	CorpusStats *st = PG_ARGISNULL(0) ? NULL : (CorpusStats *) PG_GETARG_POINTER(0);
	int64		n = st ? st->nlex : 0;
	TupleDesc	desc;
	Datum	   *lexemes;
	Datum	   *dfs;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "bm25_corpus_stats must return a composite type");
	if (n > (int64) (MaxAllocSize / sizeof(Datum)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many distinct lexemes: " INT64_FORMAT, n)));
	lexemes = palloc(sizeof(Datum) * Max(n, 1));
	dfs = palloc(sizeof(Datum) * Max(n, 1));
	if (n > 1)
		qsort(st->order, (size_t) n, sizeof(CorpusLexeme *), CompareCorpusLexeme);
	for (int64 i = 0; i < n; i++)
	{
		lexemes[i] = PointerGetDatum(cstring_to_text_with_len(st->order[i]->key.str,
															  st->order[i]->key.len));
		dfs[i] = Int64GetDatum(st->order[i]->df);
	}
	values[0] = Int64GetDatum(st ? st->n_docs : 0);
	values[1] = Int64GetDatum(st ? st->sum_dl : 0);
	values[2] = PointerGetDatum(construct_array(lexemes, (int) n, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(dfs, (int) n, INT8OID, 8, FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	desc = BlessTupleDesc(desc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/*
 * bm25_dim_stats(sparsevec): an aggregate over document vectors, for
 * recounting document frequencies without the text:
 *
 *	 (n_docs bigint, dims integer[], df bigint[])
 *
 * n_docs counts the non-NULL vectors; dims[i] (1-based, ascending) is a
 * non-zero element of df[i] of them.  A document vector of bm25_document
 * has a non-zero element for each of its lexemes, so df[i] is that
 * lexeme's document frequency.
 */
typedef struct DimCount
{
	int32		dim;			/* the hash key, 0-based */
	int64		df;
} DimCount;

typedef struct DimStats
{
	HTAB	   *map;
	int64		n_docs;
} DimStats;

PG_FUNCTION_INFO_V1(spv_bm25_dim_stats_trans);
Datum
spv_bm25_dim_stats_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	DimStats   *st;
	SparseVector *v;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "bm25_dim_stats transition called in a non-aggregate context");
	if (PG_ARGISNULL(0))
	{
		HASHCTL		ctl;

		st = MemoryContextAllocZero(aggcxt, sizeof(DimStats));
		ctl.keysize = sizeof(int32);
		ctl.entrysize = sizeof(DimCount);
		ctl.hcxt = aggcxt;
		st->map = hash_create("bm25_dim_stats", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	else
		st = (DimStats *) PG_GETARG_POINTER(0);
	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(st);

	v = PG_GETARG_SPARSEVEC_P(1);
	st->n_docs++;
	for (int i = 0; i < v->nnz; i++)
	{
		bool		found;
		DimCount   *e;

		if (SPV_VALUES(v)[i] == 0)
			continue;
		e = hash_search(st->map, &v->indices[i], HASH_ENTER, &found);
		e->df = found ? e->df + 1 : 1;
	}
	PG_RETURN_POINTER(st);
}

static int
CompareDimCount(const void *a, const void *b)
{
	int32		da = ((const DimCount *) a)->dim;
	int32		db = ((const DimCount *) b)->dim;

	return (da > db) - (da < db);
}

PG_FUNCTION_INFO_V1(spv_bm25_dim_stats_final);
Datum
spv_bm25_dim_stats_final(PG_FUNCTION_ARGS)
{
	DimStats   *st = PG_ARGISNULL(0) ? NULL : (DimStats *) PG_GETARG_POINTER(0);
	int64		n = st ? hash_get_num_entries(st->map) : 0;
	DimCount   *all = palloc(sizeof(DimCount) * Max(n, 1));
	Datum	   *dims = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *dfs = palloc(sizeof(Datum) * Max(n, 1));
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		k = 0;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "bm25_dim_stats must return a composite type");
	if (st)
	{
		HASH_SEQ_STATUS seq;
		DimCount   *e;

		hash_seq_init(&seq, st->map);
		while ((e = hash_seq_search(&seq)) != NULL)
			all[k++] = *e;
	}
	qsort(all, (size_t) k, sizeof(DimCount), CompareDimCount);
	for (int64 i = 0; i < k; i++)
	{
		dims[i] = Int32GetDatum(all[i].dim + 1);
		dfs[i] = Int64GetDatum(all[i].df);
	}
	values[0] = Int64GetDatum(st ? st->n_docs : 0);
	values[1] = PointerGetDatum(construct_array(dims, (int) k, INT4OID, 4, true,
												TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(dfs, (int) k, INT8OID, 8, FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	desc = BlessTupleDesc(desc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

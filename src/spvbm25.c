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
 * caller's search_path matters.  The functions never write.
 *
 * All symbols carry the spv_ prefix (see sparsevec.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "fmgr.h"
#include "tsearch/ts_type.h"
#include "tsearch/ts_utils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

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

/*
 * Look up every lexeme of tsv in the vocabulary table; returns hits, where
 * hits[i] describes ARRPTR(tsv)[i] (palloc'd, at least one element).
 */
static VocabHit *
LookupVocabulary(Oid relid, TSVector tsv)
{
	VocabHit   *hits = palloc(sizeof(VocabHit) * Max(tsv->size, 1));
	VocabPlan  *vp = NULL;
	WordEntry  *we = ARRPTR(tsv);
	Datum	   *lexemes;
	Datum		arg;
	char		nulls = ' ';
	int			ret;
	char	   *relname;
	Oid			nsp;
	char	   *qualname;

	for (int i = 0; i < tsv->size; i++)
		hits[i].found = false;
	if (tsv->size == 0)
		return hits;

	relname = get_rel_name(relid);
	nsp = get_rel_namespace(relid);
	if (relname == NULL || !OidIsValid(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("vocabulary relation with OID %u does not exist", relid)));
	qualname = quote_qualified_identifier(get_namespace_name(nsp), relname);

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

	lexemes = palloc(sizeof(Datum) * tsv->size);
	for (int i = 0; i < tsv->size; i++)
		lexemes[i] = PointerGetDatum(cstring_to_text_with_len(STRPTR(tsv) + we[i].pos,
															  we[i].len));
	arg = PointerGetDatum(construct_array(lexemes, tsv->size, TEXTOID, -1, false,
										  TYPALIGN_INT));
	ret = SPI_execute_plan(vp->plan, &arg, &nulls, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(ret));

	if (SPI_gettypeid(SPI_tuptable->tupdesc, 1) != TEXTOID ||
		SPI_gettypeid(SPI_tuptable->tupdesc, 2) != INT4OID ||
		SPI_gettypeid(SPI_tuptable->tupdesc, 3) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("vocabulary table \"%s\" must have columns lexeme text, dim integer, df bigint",
						get_rel_name(relid))));

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		text	   *lex;
		int			lo = 0;
		int			hi = tsv->size - 1;
		int			at = -1;
		Datum		d;

		lex = DatumGetTextPP(SPI_getbinval(tup, desc, 1, &isnull));
		/* the lexemes of a tsvector are sorted by tsCompareString */
		while (lo <= hi)
		{
			int			mid = lo + (hi - lo) / 2;
			int			c = tsCompareString(VARDATA_ANY(lex), VARSIZE_ANY_EXHDR(lex),
											STRPTR(tsv) + we[mid].pos, we[mid].len,
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
							text_to_cstring(lex), get_rel_name(relid)),
					 errhint("Make lexeme the vocabulary's primary key.")));
		hits[at].found = true;

		d = SPI_getbinval(tup, desc, 2, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lexeme \"%s\" has a NULL dim in vocabulary table \"%s\"",
							text_to_cstring(lex), get_rel_name(relid))));
		hits[at].dim = DatumGetInt32(d);
		d = SPI_getbinval(tup, desc, 3, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lexeme \"%s\" has a NULL df in vocabulary table \"%s\"",
							text_to_cstring(lex), get_rel_name(relid))));
		hits[at].df = DatumGetInt64(d);
	}

	SPI_finish();
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
	hits = LookupVocabulary(relid, tsv);
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
	hits = LookupVocabulary(relid, tsv);

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

/*-------------------------------------------------------------------------
 *
 * spmvalidate.c
 *	  amvalidate for sparse_maxscore.
 *
 * The index computes its scores itself (it never calls the opclass's
 * function), so an operator class is only correct if its one operator is
 * an ORDER BY operator whose function is support function 1, and support
 * function 1 is one of the distances the index knows how to bound: our
 * negative inner product (sparsevec_ip_ops), our cosine distance
 * (sparsevec_cosine_ops) or our L2 distance (sparsevec_l2_ops).  Anything
 * else would make the index disagree with the operator, silently.
 *
 * spm_index_kind() tells the rest of the index which distance an index
 * serves, from its support function 1: the operator class of an index
 * never changes, and amvalidate ties its operator to that function.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_language.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "spm.h"

/* the C functions behind the distances an index can serve, by SpmKind */
static const char *const spm_kind_functions[] = {
	[SPM_KIND_IP] = "spv_sparsevec_negative_inner_product",
	[SPM_KIND_COSINE] = "spv_cosine_distance",
	[SPM_KIND_L2] = "spv_l2_distance",
};

/*
 * The SpmKind of funcid, our C function computing a distance an index can
 * serve, or -1.  (A C function of another library with the same symbol
 * name would need the same probin too; the opclasses' functions are
 * MODULE_PATHNAME's, and amvalidate runs on ours.)
 */
static int
score_function_kind(Oid funcid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	int			kind = -1;

	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
		bool		isnull;
		Datum		src;

		if (proc->prolang == ClanguageId)
		{
			src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
			for (int k = 0; !isnull && k < (int) lengthof(spm_kind_functions); k++)
			{
				if (strcmp(TextDatumGetCString(src), spm_kind_functions[k]) == 0)
					kind = k;
			}
		}
		ReleaseSysCache(tup);
	}
	return kind;
}

/*
 * Which distance index serves: its operator class's support function 1.
 */
SpmKind
spm_index_kind(Relation index)
{
	int			kind = score_function_kind(index_getprocid(index, 1, 1));

	if (kind < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("sparse_maxscore index \"%s\" has an operator class whose support function 1 is not a distance the index can serve",
						RelationGetRelationName(index))));
	return (SpmKind) kind;
}

bool
spmvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	HeapTuple	familytup;
	Form_pg_opfamily familyform;
	char	   *opfamilyname;
	CatCList   *proclist;
	CatCList   *oprlist;
	Oid			proc1 = InvalidOid;
	Oid			op1func = InvalidOid;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	familytup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	if (!HeapTupleIsValid(familytup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	familyform = (Form_pg_opfamily) GETSTRUCT(familytup);
	opfamilyname = NameStr(familyform->opfname);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	for (int i = 0; i < proclist->n_members; i++)
	{
		HeapTuple	proctup = &proclist->members[i]->tuple;
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(proctup);

		if (procform->amprocnum != 1)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains function %s with invalid support number %d",
							opfamilyname, "sparse_maxscore",
							format_procedure(procform->amproc),
							procform->amprocnum)));
			result = false;
			continue;
		}
		if (procform->amproclefttype != opcintype ||
			procform->amprocrighttype != opcintype ||
			!check_amproc_signature(procform->amproc, FLOAT8OID, true, 2, 2,
									opcintype, opcintype) ||
			score_function_kind(procform->amproc) < 0)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains function %s with wrong signature for support number %d",
							opfamilyname, "sparse_maxscore",
							format_procedure(procform->amproc),
							procform->amprocnum),
					 errdetail("Support function 1 must be sparsevec_negative_inner_product(sparsevec, sparsevec), cosine_distance(sparsevec, sparsevec) or l2_distance(sparsevec, sparsevec).")));
			result = false;
			continue;
		}
		proc1 = procform->amproc;
	}

	for (int i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(oprtup);

		if (oprform->amopstrategy != 1)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains operator %s with invalid strategy number %d",
							opfamilyname, "sparse_maxscore",
							format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
			continue;
		}
		if (oprform->amoppurpose != AMOP_ORDER ||
			!OidIsValid(oprform->amopsortfamily) ||
			!opfamily_can_sort_type(oprform->amopsortfamily,
									get_op_rettype(oprform->amopopr)))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains invalid ORDER BY specification for operator %s",
							opfamilyname, "sparse_maxscore",
							format_operator(oprform->amopopr))));
			result = false;
			continue;
		}
		if (oprform->amoplefttype != opcintype ||
			oprform->amoprighttype != opcintype ||
			!check_amop_signature(oprform->amopopr, FLOAT8OID,
								  oprform->amoplefttype, oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains operator %s with wrong signature",
							opfamilyname, "sparse_maxscore",
							format_operator(oprform->amopopr))));
			result = false;
			continue;
		}
		op1func = get_opcode(oprform->amopopr);
	}

	if (!OidIsValid(proc1) || !OidIsValid(op1func))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator class \"%s\" of access method %s is missing operator 1 or support function 1",
						opclassname, "sparse_maxscore")));
		result = false;
	}
	else if (op1func != proc1)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator class \"%s\" of access method %s has an operator that does not use support function 1",
						opclassname, "sparse_maxscore")));
		result = false;
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(familytup);
	ReleaseSysCache(classtup);
	return result;
}

/*-------------------------------------------------------------------------
 *
 * spmvalidate.c
 *	  amvalidate for sparse_maxscore.
 *
 * The index computes the inner product itself (it never calls the
 * opclass's function), so an operator class is only correct if its one
 * operator is an ORDER BY operator whose function is support function 1,
 * and support function 1 is our negative inner product.  Anything else
 * would make the index disagree with the operator, silently.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
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
#include "utils/syscache.h"

#include "spm.h"

#define SPM_SCORE_FUNCTION	"spv_sparsevec_negative_inner_product"

/* is funcid our C function computing the negative inner product? */
static bool
is_score_function(Oid funcid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	bool		ok = false;

	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
		bool		isnull;
		Datum		src;

		if (proc->prolang == ClanguageId)
		{
			src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
			ok = !isnull && strcmp(TextDatumGetCString(src), SPM_SCORE_FUNCTION) == 0;
		}
		ReleaseSysCache(tup);
	}
	return ok;
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
			!is_score_function(procform->amproc))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains function %s with wrong signature for support number %d",
							opfamilyname, "sparse_maxscore",
							format_procedure(procform->amproc),
							procform->amprocnum),
					 errdetail("Support function 1 must be sparsevec_negative_inner_product(sparsevec, sparsevec).")));
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

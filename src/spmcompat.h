/*-------------------------------------------------------------------------
 *
 * spmcompat.h
 *	  sparse_maxscore: what differs between the PostgreSQL versions built
 *	  against (15, 17 and 18; doc/versions.md "PostgreSQL versions").
 *	  Version tests on PG_VERSION_NUM live here, or next to the one call
 *	  that needs them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SPMCOMPAT_H
#define SPMCOMPAT_H

#include "postgres.h"

/*
 * A function that does not return: pg_noreturn, before the declaration,
 * from 18 on (pg_attribute_noreturn(), after it, is gone); before 18 the
 * GCC attribute stands there as well.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * A relation's physical file: RelFileNode (rd_node) until 15,
 * RelFileLocator (rd_locator) from 16 on.
 */
#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
typedef RelFileLocator SpmRelFile;
#define SPM_REL_FILE(rel)				((rel)->rd_locator)
#define SpmRelFileEquals(a, b)			RelFileLocatorEquals(a, b)
#else
#include "storage/relfilenode.h"
typedef RelFileNode SpmRelFile;
#define SPM_REL_FILE(rel)				((rel)->rd_node)
#define SpmRelFileEquals(a, b)			RelFileNodeEquals(a, b)
#endif

/*
 * Ownership of a relation (utils/acl.h): object_ownercheck from 16 on.
 */
#if PG_VERSION_NUM >= 160000
#define spm_class_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define spm_class_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/*
 * vacuum_delay_point (commands/vacuum.h) tells VACUUM from ANALYZE in 18.
 */
/* a set-returning function's tuplestore: renamed in PostgreSQL 16 */
#if PG_VERSION_NUM < 160000
#define InitMaterializedSRF(fcinfo, flags)	SetSingleFuncCall((fcinfo), (flags))
#endif

#if PG_VERSION_NUM >= 180000
#define spm_vacuum_delay_point()	vacuum_delay_point(false)
#else
#define spm_vacuum_delay_point()	vacuum_delay_point()
#endif

/*
 * Read exactly len bytes of a temporary file: BufFileReadExact from 16
 * on; before, BufFileRead and the same error (what names the file).
 */
#include "storage/buffile.h"

static inline void
spm_buffile_read_exact(BufFile *file, void *buf, Size len, const char *what)
{
#if PG_VERSION_NUM >= 160000
	(void) what;
	BufFileReadExact(file, buf, len);
#else
	if (BufFileRead(file, buf, len) != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from %s", what)));
#endif
}

#endif							/* SPMCOMPAT_H */

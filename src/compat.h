/*
 * compat.h - every difference between the PostgreSQL versions cosid supports
 * (15 and newer; tested on 15 and 18), and nothing else.  Code elsewhere
 * uses these names and never tests PG_VERSION_NUM itself.
 *
 * Owns: version differences.  Must not: hold anything that is the same on
 * every supported version.
 */
#ifndef COSID_COMPAT_H
#define COSID_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "cosid needs PostgreSQL 15 or newer"
#endif

/*
 * A function that does not return: 18 spells it before the declaration
 * (pg_noreturn), older versions after it (pg_attribute_noreturn()).
 */
#if PG_VERSION_NUM >= 180000
#define COSID_NORETURN_BEFORE pg_noreturn
#define COSID_NORETURN_AFTER
#else
#define COSID_NORETURN_BEFORE
#define COSID_NORETURN_AFTER pg_attribute_noreturn()
#endif

/* Privilege and ownership checks: one generic call from 16 on. */
#if PG_VERSION_NUM >= 160000
#define cosid_database_aclcheck(dbid, role, mode) \
	object_aclcheck(DatabaseRelationId, (dbid), (role), (mode))
#define cosid_proc_aclcheck(proc, role, mode) \
	object_aclcheck(ProcedureRelationId, (proc), (role), (mode))
#else
#define cosid_database_aclcheck(dbid, role, mode) \
	pg_database_aclcheck((dbid), (role), (mode))
#define cosid_proc_aclcheck(proc, role, mode) \
	pg_proc_aclcheck((proc), (role), (mode))
#endif

/* A qualified name's parts; 16 added a soft-error context. */
#if PG_VERSION_NUM >= 160000
#define cosid_qualified_name_list(s) stringToQualifiedNameList((s), NULL)
#else
#define cosid_qualified_name_list(s) stringToQualifiedNameList(s)
#endif

/*
 * Input errors: soft (ereturn, for pg_input_is_valid) from 16 on, where the
 * caller asked for them; an ERROR before.  Use in a V1 function.
 */
#if PG_VERSION_NUM >= 160000
#define cosid_input_error(...) ereturn(fcinfo->context, (Datum) 0, __VA_ARGS__)
#else
#define cosid_input_error(...) ereport(ERROR, __VA_ARGS__)
#endif

/* Whether this process is a background worker: a function from 17 on. */
#if PG_VERSION_NUM >= 170000
#define cosid_am_background_worker() AmBackgroundWorkerProcess()
#else
#define cosid_am_background_worker() IsBackgroundWorker
#endif

/*
 * Whether a relation's file is another than at the start of this
 * transaction: the highest subtransaction a relfilenode change survived
 * into (InvalidSubTransactionId: none).  Not rd_newRelfilenodeSubid, which
 * forgets an earlier change when a later one is rolled back to a savepoint.
 * 16 renamed the field.
 */
#if PG_VERSION_NUM >= 160000
#define cosid_rel_changed_file_subid(rel) ((rel)->rd_firstRelfilelocatorSubid)
#else
#define cosid_rel_changed_file_subid(rel) ((rel)->rd_firstRelfilenodeSubid)
#endif

/*
 * A wait event of cosid's own, by name (pg_stat_activity.wait_event, type
 * Extension): registered with WaitEventExtensionNew from 17 on (the first
 * call in the cluster allocates it, later ones look it up; it takes an
 * LWLock, so never under a spinlock); before 17 there are no named events
 * and every wait shows as the generic Extension.  Needs utils/wait_event.h.
 */
#if PG_VERSION_NUM >= 170000
#define cosid_wait_event_new(name) WaitEventExtensionNew(name)
#else
#define cosid_wait_event_new(name) ((void) (name), (uint32) PG_WAIT_EXTENSION)
#endif

/*
 * A relation's primary key index (InvalidOid: none); 18 asks whether a
 * deferrable one will do.  Needs utils/relcache.h.
 */
#if PG_VERSION_NUM >= 180000
#define cosid_rel_primary_key(rel) RelationGetPrimaryKeyIndex((rel), false)
#else
#define cosid_rel_primary_key(rel) RelationGetPrimaryKeyIndex(rel)
#endif

#endif							/* COSID_COMPAT_H */

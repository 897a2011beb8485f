/*
 * ddl.h - what ddl.c (cosid_define, cosid_alter, cosid_drop) shares with
 * restore.c, which checks a restored row against the rules of a define.
 *
 * Owns: the names of the backing sequences cosid makes, and who may give
 * this database another database's identity.  Must not: write the catalog
 * (only ddl.c's SQL functions do).
 */
#ifndef COSID_DDL_H
#define COSID_DDL_H

#include "gendef.h"

/* The name of the backing sequence cosid makes for a generator, in schema cosid. */
extern char *cosid_ddl_backing_sequence_name(const char *name);

/* The generator other than name that seqid backs, or NULL (SPI connected). */
extern char *cosid_ddl_sequence_backs(Oid seqid, const char *name);

/* The owner role of database dbid, or InvalidOid when it is gone. */
extern Oid	cosid_ddl_database_owner(Oid dbid);

/*
 * Whether the current role may give this database the identity of def,
 * which belongs to database db.
 */
extern bool cosid_ddl_may_take_identity(const CosidGenDef *def, Oid db);

/*
 * 42501 for taking identity def->identity of database db into this one: a
 * restored row of table (NULL: cosid_define).
 */
extern void cosid_ddl_identity_owner_error(const CosidGenDef *def, Oid db, const char *table);

#endif							/* COSID_DDL_H */

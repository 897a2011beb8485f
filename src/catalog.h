/*
 * catalog.h - the generator catalog, cosid.generator (catalog.c): reading a
 * row, writing as the catalog's owner, and telling backends it changed.
 *
 * Owns: access to cosid.generator and its change counters, per slot (a
 * hash of the database and the name): shared generations bumped when a
 * transaction that changed the catalog commits (the slots of the names it
 * changed, or every slot for a change not made by name), and per-backend
 * ones bumped at once (and at rollback), that cached definitions are
 * stamped with.  Must not: interpret a definition beyond gendef.c's parse,
 * or cache generators (gencache.c does).
 */
#ifndef COSID_CATALOG_H
#define COSID_CATALOG_H

#include "gendef.h"

#include "port/atomics.h"

extern Size cosid_catalog_shmem_size(void);
extern void cosid_catalog_shmem_init(void);

/* 22023 unless name has 1 to NAMEDATALEN - 1 bytes. */
extern void cosid_catalog_check_name(const char *name);

/* 42501 unless the current role has the privileges of owner. */
extern void cosid_catalog_check_owner(const char *name, Oid owner);

/* 42704 for an unknown generator, with hint (NULL: the usual one). */
COSID_NORETURN_BEFORE extern void cosid_unknown_generator(const char *name, const char *hint)
			COSID_NORETURN_AFTER;

/* The owner of cosid.generator (the role that created the extension). */
extern Oid	cosid_catalog_owner(void);

/*
 * Run a constant statement on the catalog as its owner (SPI connected):
 * ordinary roles cannot write it, and the checks that matter have been made
 * by the caller.  Every value is a parameter, every name and operator
 * qualified.
 */
extern int	cosid_catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *values,
							   const char *nulls, bool read_only);

/* 55000 when a segment generator whose segments come from its sequence has none. */
extern void cosid_catalog_check_sequence(const CosidGenDef *def);

/*
 * Whether cosid.generator has 1.3's columns (codec_functions, identity,
 * counter_database): a library newer than the extension's SQL keeps 1.2's
 * catalog (functions by name, identity 0) until ALTER EXTENSION cosid UPDATE.
 */
extern bool cosid_catalog_is_1_3(void);

/*
 * Read the stored row of a generator: its definition's jsonb in *config,
 * what the catalog's columns say in *stored (strategy, layout, sequence,
 * owner, bound codec functions, identity, counter's database).  42704 when
 * there is none.  for_update: locked, through SPI (connected); otherwise
 * by the primary key in C, no SPI, seeing the same row.
 * fresh: with a snapshot taken now (a lookup for the hot path).
 */
extern void cosid_catalog_read(const char *name, bool for_update, bool fresh,
							   Jsonb **config, CosidGenDef *stored,
							   const char *hint);

/*
 * This transaction changed the catalog other than by name (a restore's
 * rows, the update's identities): every generator is read again, here at
 * once, in every backend once it commits.
 */
extern void cosid_catalog_changed_now(void);

/*
 * This transaction changed the generator of this name in this database:
 * it is read again, here at once, in every backend once it commits (and
 * here again if it rolls back).
 */
extern void cosid_catalog_changed_name(const char *name);

/*
 * cosid_catalog_exec of a statement that writes the row of name in
 * cosid.generator (SPI connected): the change counts as one of that name
 * (cosid_catalog_changed_name), not of the whole catalog.
 */
extern int	cosid_catalog_write(const char *name, const char *sql, int nargs,
								Oid *argtypes, Datum *values, const char *nulls);

/* Whether it did (read on the hot path of segment generators: a variable). */
extern bool cosid_catalog_dirty;

/*
 * What cached definitions are stamped with (read on every lookup: inline):
 * a name's slot, its shared generation (shared memory) and its local one
 * (this backend's).  A power of two.
 */
#define COSID_CATALOG_SLOTS 8192

extern pg_atomic_uint64 *cosid_catalog_generations;
extern uint64 cosid_local_generations[COSID_CATALOG_SLOTS];

/* The slot of generator name (len bytes) in this database. */
extern int	cosid_catalog_slot(const char *name, int len);

/* The slot's shared generation (one that never changes when not preloaded). */
extern pg_atomic_uint64 *cosid_catalog_shared_slot(int slot);

/* Every generator of this backend is read again before its next use. */
extern void cosid_catalog_local_changed_all(void);

#endif							/* COSID_CATALOG_H */

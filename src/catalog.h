/*
 * catalog.h - the generator catalog, cosid.generator (catalog.c): reading a
 * row, writing as the catalog's owner, and telling backends it changed.
 *
 * Owns: access to cosid.generator and its change counters: a shared
 * generation bumped when a transaction that changed the catalog commits, and
 * a per-backend one bumped at once (and at rollback), that cached
 * definitions are stamped with.  Must not: interpret a definition beyond
 * gendef.c's parse, or cache generators (gencache.c does).
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
 * Read the stored row of a generator (SPI connected): its definition's
 * jsonb in *config, what the catalog's columns say in *stored (strategy,
 * layout, sequence, owner, bound codec functions, identity, counter's
 * database).  42704 when there is none.
 * fresh: with a snapshot taken now (a lookup for the hot path).
 */
extern void cosid_catalog_read(const char *name, bool for_update, bool fresh,
							   Jsonb **config, CosidGenDef *stored,
							   const char *hint);

/* This transaction changed the catalog: backends re-read at its end. */
extern void cosid_catalog_changed_now(void);

/* Whether it did (read on the hot path of segment generators: a variable). */
extern bool cosid_catalog_dirty;

/* What cached definitions are stamped with (read on every lookup: inline). */
extern pg_atomic_uint64 *cosid_catalog_generation;
extern uint64 cosid_local_generation;

static inline uint64
cosid_catalog_shared_generation(void)
{
	return cosid_catalog_generation ? pg_atomic_read_u64(cosid_catalog_generation) : 0;
}

#endif							/* COSID_CATALOG_H */

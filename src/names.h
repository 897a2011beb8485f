/*
 * names.h - pg_cosid/names, the durable record of time-based generators'
 * identities and layouts, and its index in shared memory (names.c).
 *
 * Two kinds of record, each with its key; the last record of a key counts:
 * - COSID_NAME_LAYOUT, key (identity, name): the identity's record: the
 *   layout it issues with, its floor (ids up to it are never issued again:
 *   an identity made for another layout of its name, 1.2's names), the
 *   database it belongs to (owner_db) and, for identity 0 of a 1.2 name the
 *   update gave an identity, that identity (successor).  Every identity
 *   other than 0 that this server knows has one (1.4).
 * - COSID_NAME_OF_DB, key (database, name): the identity and layout the
 *   name was last defined with in a database, so that it keeps its
 *   identity when defined again after its catalog went (forgotten: it
 *   starts over).
 *
 * Locks (see ARCHITECTURE.md, Locks): the write lock serialises writers
 * (an append and its fsync, compaction, the first load); the index lock
 * guards the index in shared memory and is held only for a look-up or an
 * update of it, never across I/O.  A look-up takes only the index lock,
 * shared.  Writers take the write lock first, then the index lock.
 * The writers: a define, a drop with forget_history, the first issue of an
 * identity no database holds, identity 0's first issue after a change; an
 * issuer of a known identity never takes the write lock.
 */
#ifndef COSID_NAMES_H
#define COSID_NAMES_H

#include "postgres.h"

#include "core/timegen.h"
#include "port/pg_crc32c.h"

#define COSID_NAME_LAYOUT	1
#define COSID_NAME_OF_DB	2

/* one record, as it is on disk (format 4 and 5) and in the index */
typedef struct CosidNameRecord
{
	char		name[NAMEDATALEN];
	int32		kind;			/* COSID_NAME_LAYOUT or COSID_NAME_OF_DB */
	Oid			db;				/* the database that wrote it */
	int64		ident;			/* 0: a name of 1.2 (identity 0) */
	int32		wide;			/* cosid80: ids are not bigints */
	int32		uncertainty_bits;
	CosidLayout layout;			/* seq_reset_threshold not kept (0) */
	int64		floor;			/* ids up to this one are never issued again
								 * (-1: none) */
	int32		forgotten;		/* COSID_NAME_OF_DB: the name starts over;
								 * COSID_NAME_LAYOUT: its owner forgot its
								 * name (forgotten first when full) */
	Oid			owner_db;		/* the database the identity belongs to;
								 * InvalidOid: not known (1.2's records) */
	int64		successor;		/* COSID_NAME_LAYOUT of identity 0: the
								 * identity the update gave the name (0:
								 * none) */
	pg_crc32c	crc;			/* of the bytes before it */
} CosidNameRecord;

/* cosid.max_names */
extern int	cosid_max_names;

extern void cosid_names_define_settings(void);
extern void cosid_names_shmem_request(void);
extern Size cosid_names_shmem_size(void);
extern void cosid_names_shmem_init(void);

/*
 * The live record of a key (a copy) into *out: false when there is none.
 * kind COSID_NAME_LAYOUT looks up (ident, name), COSID_NAME_OF_DB (db,
 * name).  Takes the index lock, shared (or nothing, when the caller holds
 * the write lock).
 */
extern bool cosid_names_get(int kind, Oid db, int64 ident, const char *name,
							CosidNameRecord *out);

/* The write lock: exclusive, for a look-up followed by an append. */
extern void cosid_names_lock(void);
extern void cosid_names_unlock(void);

/*
 * Make n records durable (the write lock held): appended to the log with
 * one fsync, then in the index.  ERROR before anything is written when the
 * index is full of records that cannot be forgotten.
 */
extern void cosid_names_append(CosidNameRecord *recs, int n);

/* How many identity records with a floor or a successor db wrote (they are kept for good). */
extern int	cosid_names_kept_layouts(Oid db);

/* The databases whose live COSID_NAME_OF_DB record of name (not forgotten) names ident (palloc'd). */
extern int	cosid_names_holders(int64 ident, const char *name, Oid **dbs);

#endif							/* COSID_NAMES_H */

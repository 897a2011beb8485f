/*
 * genstate.h - the shared state of generators (genstate.c).
 *
 * Per-generator state (CosidGenEntry), in a fixed array of
 * cosid.max_generators entries found through a hash keyed by CosidGenKey.
 * cosid_gen_hash_lock (exclusive) guards the hash and the assignment of entries:
 * an entry is given to a generator, or freed, only under it.  Everything
 * else in an entry is read and written under the entry's own spinlock, for
 * one short critical section per call (check the tag and the window,
 * advance the sequence, count); every wait happens after it is released.
 * An entry's spinlock is initialised once at start-up and the entry never
 * moves, so a backend may keep a pointer to it; the entry's tag changes
 * whenever it is freed or given to another generator, and a backend that
 * finds another tag than the one it attached with looks the generator up
 * again.
 *
 * The state of a time-based generator belongs to its identity (a random
 * value kept in its catalog row, copied with the database and kept in
 * cosid.generator_history when the name is dropped) and its name: copies of
 * a database share it, another database's generator of the same name does
 * not.  When an identity takes another layout (its name dropped and defined
 * again), pg_cosid/names records the layouts it issued with, and the new
 * layout must issue above everything the old one could have issued.  A
 * freed time-based entry stays a tombstone of its identity (its next entry
 * starts above it); retired_ms is the end of the last unit issued by a
 * tombstone whose entry went to another generator (atomic max), below
 * which no new entry starts.  A database holds at most its fair share of
 * the entries when others need them (max-min fair: databases holding few
 * leave the rest to the others).  pg_cosid/names also records the
 * database each identity belongs to (1.4).
 *
 * Owns: the entries, their hash, retired_ms and pg_cosid/names.  Must not:
 * read the catalog (callers hand it a parsed definition) or issue ids
 * (issue.c does, under each entry's spinlock).
 */
#ifndef COSID_GENSTATE_H
#define COSID_GENSTATE_H

#include "gendef.h"

#include "storage/lwlock.h"
#include "storage/spin.h"

/* cosid.max_generators */
extern int	cosid_max_generators;

/*
 * Whose state an entry holds.  Time-based generators: the identity and the
 * name (dbid and seqid 0): one entry for a database and its copies.  Segment generators: the database, the backing
 * sequence (0 for the lease store's) and the name: one entry per generator,
 * whatever versions of its definition the backends see (an alter keeps the
 * entry and its segments, which came from the same sequence).  A drop frees
 * the entry when it commits; the name defined again has another sequence
 * (ddl.c makes a new one, above the name's history), so its entry is new.
 */
typedef struct CosidGenKey
{
	Oid			dbid;
	Oid			seqid;
	int64		ident;			/* time-based: the catalog row's identity */
	char		name[NAMEDATALEN];
} CosidGenKey;

/* A range of numbers fetched for a segment generator, in one period. */
typedef struct CosidSegRange
{
	int64		start;
	int64		end;
	int64		period;
} CosidSegRange;

#define COSID_RESERVE_RANGES 4

/* What a generator's entry counts (cosid.stats() shows them). */
typedef struct CosidGenCounters
{
	uint64		issued;
	uint64		seq_waits;
	uint64		clock_borrows;
	uint64		clock_waits;
	uint64		clock_failures;
	uint64		segment_fetches;
	uint64		segment_waits;
} CosidGenCounters;

typedef struct CosidGenEntry
{
	slock_t		mutex;			/* protects everything below */
	uint64		tag;			/* changes when the entry is freed or reused */
	bool		in_use;
	bool		tombstone;		/* freed, time-based: keeps its name's last
								 * unit until the entry is reused */
	int			tomb_prev;		/* tombstones in the order made (genstate.c,
								 * under cosid_gen_hash_lock): -1 at the ends */
	int			tomb_next;
	CosidGenKey key;
	Oid			db;				/* the database that took the entry (its
								 * share, and whose stats show it) */
	bool		time_based;
	CosidLayout layout;			/* time-based: the layout ids are made with */
	int			uncertainty_bits;
	Oid			seqid;			/* segment generators: the backing sequence */
	int64		last_used_ms;	/* for reclaiming idle entries when full */
	CosidTimeState state;		/* time-based generators */

	/*
	 * Segment generators: the current segment [seg_next, seg_end] and the
	 * numbers fetched ahead, the reserve: up to COSID_RESERVE_RANGES ranges
	 * in the order fetched (a range is one or more consecutive segments;
	 * segments from the lease store are consecutive only when no other
	 * server fetched in between), each with its period (groups).
	 * fetched_end is the highest number ever fetched into the entry: a fetch
	 * must give numbers above it.  One backend at a time fetches (fetching):
	 * it clears the flag itself, also when it fails or exits (segment.c).
	 */
	int64		seg_next;
	int64		seg_end;
	int64		seg_period;
	CosidSegRange reserve[COSID_RESERVE_RANGES];
	int			nreserve;
	int64		fetched_end;
	bool		fetching;
	int			reserve_depth;	/* a factor of the reserve kept (1..16):
								 * doubled whenever a backend had to wait */

	CosidGenCounters counts;
} CosidGenEntry;

/* The entries (cosid.max_generators of them), and the lock of their hash
 * and of entry assignment (see above). */
extern CosidGenEntry *cosid_gen_entries;
extern LWLock *cosid_gen_hash_lock;

/* An entry's place in the table (a lock tag's key, say): 0 .. max - 1. */
static inline uint32
cosid_gen_entry_index(const CosidGenEntry *e)
{
	return (uint32) (e - cosid_gen_entries);
}

extern void cosid_genstate_define_settings(void);
extern void cosid_genstate_shmem_request(void);
extern Size cosid_genstate_shmem_size(void);
extern void cosid_genstate_shmem_init(void);

/* The generator's shared entry, created on first use; *tag as attached. */
extern CosidGenEntry *cosid_gen_attach(const CosidGenDef *def, uint64 *tag);

/*
 * For a restored row: raise 22023 when a time-based definition would issue
 * ids below those its identity may already have issued on this server.
 */
extern void cosid_gen_check_define(const CosidGenDef *def);

/*
 * The database def's identity belongs to on this server (the first that
 * defined it or issued with it: pg_cosid/names keeps it), or InvalidOid
 * when none does (unknown here, or its database was dropped).
 */
extern Oid	cosid_gen_identity_owner(const CosidGenDef *def);

/*
 * Whether identity 0 of def's name and layout leads to the identity the
 * update gave it in a database (a generator of identity 0, def, then issues
 * with that one).
 */
extern bool cosid_gen_zero_led_on(const CosidGenDef *def);

/*
 * The databases whose name def->name has def's identity on this server
 * (pg_cosid/names' record of the name in each: the ones that defined it,
 * issued with it first, or were given it by the update), in *dbs
 * (palloc'd); returns how many.
 */
extern int	cosid_gen_identity_holders(const CosidGenDef *def, Oid **dbs);

/*
 * The update to 1.4: the identity a generator of identity 0 (1.2's, def
 * with its layout) takes: fresh_identity, recorded as this database's with
 * a floor above every id identity 0 of its name may have issued, or the
 * identity a copy of this database was given before (pg_cosid/names keeps
 * which).  Generators of identity 0 of that name and layout in databases
 * not yet updated then issue with that identity too.
 */
extern int64 cosid_gen_give_identity(const CosidGenDef *def, int64 fresh_identity);

/*
 * For cosid_define() of a time-based generator: the identity and layout its
 * name was last defined with in this database, as pg_cosid/names keeps them
 * (also after DROP EXTENSION cosid); false when none (or forgotten).
 */
extern bool cosid_gen_name_identity(const char *name, CosidGenDef *old);

/*
 * For cosid_define() of def with identity def->identity, which issued with
 * old's layout before (NULL: a new identity).  With another layout than
 * the identity issued with, the name gets fresh_identity (written to
 * def->identity), recorded with a floor above every id the old identity
 * may have issued (22023 when def cannot issue above it now); with
 * fresh_identity 0 (1.2's catalog, identity 0) it keeps identity 0, as in
 * 1.2.  Records def's identity and layout as its name's in this database.
 */
extern void cosid_gen_define_name(CosidGenDef *def, const CosidGenDef *old, int64 fresh_identity);

/*
 * cosid_drop(..., forget_history => true): the name starts over, once the
 * transaction commits (cosid_gen_at_pre_commit writes it just before).
 */
extern void cosid_gen_forget_name(const char *name);
extern void cosid_gen_at_pre_commit(void);

/* Once this transaction commits: free the entry of a generator (dropped). */
extern void cosid_gen_release_at_commit(const CosidGenDef *def);
extern void cosid_gen_at_commit(bool commit);
extern void cosid_gen_at_subxact(bool commit, SubTransactionId sub, SubTransactionId parent);

/*
 * One entry's counters and what identifies it (cosid.stats()): a copy,
 * taken under the entry's lock.
 */
typedef struct CosidGenStats
{
	CosidGenKey key;
	bool		time_based;
	CosidLayout layout;			/* time-based */
	Oid			seqid;			/* segment generators; InvalidOid: the lease
								 * store's, or time-based */
	CosidGenCounters counts;
} CosidGenStats;

/*
 * The stats of every entry in use whose generator wanted(key, time_based,
 * arg) accepts, in *out (palloc'd in the current context; NULL when none);
 * returns how many.  wanted runs under the entries' hash lock: it must not
 * raise an error, allocate or wait.
 */
typedef bool (*CosidGenWanted) (const CosidGenKey *key, bool time_based, void *arg);
extern int	cosid_gen_stats(CosidGenWanted wanted, void *arg, CosidGenStats **out);

/* Ids issued by every entry in use (for telling whether the window is used). */
extern uint64 cosid_gen_issued_total(void);

/*
 * Where the next slot window may start, once the window is closed: after the
 * start of the last unit any generator issued, and never before start_ms.
 */
extern int64 cosid_gen_issued_bound_ms(int64 start_ms);

#endif							/* COSID_GENSTATE_H */

/*
 * util.h - small services every PostgreSQL-side module of cosid may use.
 *
 * Owns: the clock as cosid reads it, interruptible waits, conversions between
 * Unix milliseconds and timestamptz, running code as another role in a
 * restricted security context, durable file writes, the error for a bad key
 * of a definition or codec list, and the "loaded at server start?" check.
 * Must not: know about generators, slots or the catalog; it is the bottom of
 * the module graph (see ARCHITECTURE.md) and includes no other module.
 */
#ifndef COSID_UTIL_H
#define COSID_UTIL_H

#include "postgres.h"

#include "compat.h"
#include "core/backoff.h"

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

/*
 * True once cosid's shared memory exists: the library was loaded by
 * shared_preload_libraries.  Loaded later, codecs and the ulid type still
 * work and everything that needs shared state raises 55000.
 */
extern bool cosid_preloaded;

/* Raise 55000 unless cosid was loaded by shared_preload_libraries. */
extern void cosid_require_preload(const char *what);

/*
 * Raise 22023 for a bad key of a generator definition or of a codec list:
 * primary message "invalid generator definition" (what_list false) or
 * "invalid codec list" (true); the detail names the JSON path and what was
 * expected, e.g. 'At time-bits: expected an integer from 1 to 63.'
 */
COSID_NORETURN_BEFORE extern void cosid_invalid_key(bool what_list, const char *path,
													const char *fmt,...)
			pg_attribute_printf(3, 4) COSID_NORETURN_AFTER;

/* src/core's allocator (CosidAlloc): palloc in the MemoryContext ctx. */
extern void *cosid_core_alloc(void *ctx, size_t size);

/*
 * Inside an ereport of a failure that core/backoff.h rated for the log: the
 * detail saying when the next try is, and how many failures like it since
 * the last report went unlogged.
 */
extern int	cosid_backoff_errdetail(CosidBackoffStep step);

/* Wall-clock Unix milliseconds. */
extern uint64 cosid_now_ms(void);

/*
 * Milliseconds of the monotonic clock (CLOCK_MONOTONIC: the same in every
 * process, never stepped when the wall clock is set).  Every back-off and
 * deadline is measured on it, so a clock set back or forward neither
 * stretches nor cuts them; ids and windows use the wall clock.
 */
extern int64 cosid_monotonic_ms(void);

/*
 * Every place where cosid waits, each reported as its own wait event
 * (pg_stat_activity.wait_event, wait_event_type Extension) from PostgreSQL
 * 17 on; on 15 and 16 every one shows as the generic event Extension.  The
 * names are in util.c; docs/operations.md ("Wait events") says what each
 * means and what to do.
 */
typedef enum CosidWait
{
	COSID_WAIT_WINDOW,			/* CosidWindow: for the slot's window to open or
								 * be extended */
	COSID_WAIT_CLOCK_BEHIND,	/* CosidClockBehind: for the clock to catch up
								 * after it went back */
	COSID_WAIT_SEQUENCE,		/* CosidSequenceExhausted: a time unit's
								 * sequence is used up, for the next unit */
	COSID_WAIT_SEGMENT_FETCH,	/* CosidSegmentFetch: for another backend's
								 * fetch of segments */
	COSID_WAIT_LEASE_STORE,		/* CosidLeaseStore: for the lease store */
	COSID_WAIT_CITUS_READER,	/* CosidCitusReaderMain: the Citus group
								 * reader between readings */
	COSID_WAIT_SLOT_WORKER,		/* CosidSlotWorkerMain: the slot worker
								 * between turns */
	COSID_WAIT_RECOVERY_END,	/* CosidRecoveryEnd: the slot worker, for
								 * recovery to end */
	COSID_WAIT_COUNT
} CosidWait;

/* The wait event of a wait. */
extern uint32 cosid_wait_event(CosidWait wait);

/*
 * Register every wait event (the postmaster, as it makes cosid's shared
 * memory); when the cluster has no room for them, a WARNING, and they show
 * as the generic Extension.
 */
extern void cosid_wait_events_init(void);

/* Sleep ms on the process latch (a set latch ends it early; no interrupt check). */
extern void cosid_sleep_ms(int ms, CosidWait wait);

/* Sleep about one millisecond, interruptibly (never inside a lock). */
extern void cosid_wait_1ms(CosidWait wait);

/* Wait until the wall clock reaches target_ms, interruptibly. */
extern void cosid_wait_until_ms(int64 target_ms, CosidWait wait);

/* Unix milliseconds <-> timestamptz; and as text for messages. */
extern TimestampTz cosid_ms_to_timestamptz(int64 ms);
extern int64 cosid_timestamptz_to_ms(TimestampTz ts);
extern const char *cosid_ms_text(int64 ms);

/*
 * Become role for work done on the caller's behalf, the way core runs an
 * index expression or refreshes a materialized view: a restricted security
 * context and search_path = pg_catalog, pg_temp, so nothing the caller
 * defined (functions, operators, temporary relations) can be reached.
 * cosid_end_as_role() undoes it; an error undoes it too (transaction abort).
 */
typedef struct CosidAsRole
{
	Oid			save_uid;
	int			save_ctx;
	int			save_nestlevel;
} CosidAsRole;

extern void cosid_begin_as_role(Oid role, CosidAsRole *as);
extern void cosid_end_as_role(CosidAsRole *as);

/* The owner of a relation. */
extern Oid	cosid_rel_owner(Oid relid);

/*
 * What cosid_row_by_key reads, and how: a table of cosid whose primary key
 * is one text column, and the columns to copy out of a row, found by name
 * and type.  The last nlater of them came together with an update of
 * cosid: a table from before it has none of them (read as NULL).
 */
typedef struct CosidRowRead
{
	const char *table;			/* cosid.<table> */
	const char *key_column;		/* its primary key: this text column, text's
								 * default btree operator family */
	int			ncolumns;
	const char *const *columns;
	const Oid  *types;			/* each column's type */
	int			nlater;
	/*
	 * The snapshot: fresh, one taken now (what a statement of its own would
	 * see; a parallel worker's leader's); else the active one (what the
	 * running statement sees), or one taken now when none is active.
	 */
	bool		fresh;
	/*
	 * A table not as cosid made it (no such primary key, a column missing
	 * or of another type, some later columns but not all), or a session
	 * that ignores system indexes: COSID_ROW_UNREAD, no lock kept (soft);
	 * else an internal error (the second case reads the heap).
	 */
	bool		soft;
} CosidRowRead;

typedef enum CosidRowFound
{
	COSID_ROW_NONE,				/* no row of that key */
	COSID_ROW_FOUND,			/* values and nulls hold its columns */
	COSID_ROW_UNREAD			/* soft, and the table is not as expected */
} CosidRowFound;

/*
 * The row of cosid.<read->table> whose primary key is key, read by that
 * index, no SQL: for the reads at every cosid_define and at a generator's
 * first call in a session.  Its columns are copied (detoasted while the
 * snapshot is registered) into values and nulls; *later (when not NULL):
 * whether the table has the later columns.  The table and index stay
 * locked (AccessShareLock) until the transaction ends, as a statement's.
 */
extern CosidRowFound cosid_row_by_key(const CosidRowRead *read, const char *key,
									  Datum *values, bool *nulls, bool *later);

/* A sequence's increment (its pg_sequence row). */
extern int64 cosid_sequence_increment(Oid seqid);

/* The directory under the data directory where cosid keeps its files. */
#define COSID_STATE_DIR "pg_cosid"

/* Create COSID_STATE_DIR if it is missing (durably). */
extern void cosid_ensure_state_dir(void);

/* Write a file durably: tmp, fsync, atomic rename to path (ERROR on failure). */
extern void cosid_write_durably(const char *path, const char *tmp, const void *data, size_t len);

/* Append len bytes to an existing file and fsync it. */
extern void cosid_append_durably(const char *path, const void *data, size_t len);

/* durable_rename(from, to), checked as an fsync (cosid_check_lock_rules); ERROR on failure. */
extern void cosid_rename_durably(const char *from, const char *to);

/*
 * The lock rules (ARCHITECTURE.md, Locks): no fsync and no call to the lease
 * store while this backend holds a lock that issuing backends wait on.
 * Modules register such locks at start-up; cosid_check_lock_rules(what)
 * raises an internal error naming the lock when one is held.  Every fsync of
 * cosid's files and every store call goes through it, so a suite that takes
 * those paths fails on a breach.
 */
extern void cosid_issuer_lock(LWLock *lock, const char *name);
extern void cosid_check_lock_rules(const char *what);

#endif							/* COSID_UTIL_H */

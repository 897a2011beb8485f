/*
 * slot_source.h - where this server's slot comes from: the small interface
 * the slot worker (worker.c) drives, and its two implementations.
 *
 *  - cosid_manual_source (slot_manual.c): cosid.slot = N, the window's end
 *    kept durable in pg_cosid/slot.state;
 *  - cosid_lease_source (slot_lease.c): cosid.slot = 'lease', the slot and
 *    the window's end kept in a lease store;
 *  - cosid_citus_source (slot_citus.c): cosid.slot = 'citus', the slot is
 *    the node's Citus group id, the window's end kept as the manual slot's.
 *
 * A source never touches the window in shared memory: it says which slot it
 * holds, where that slot's window may start, and makes each new end durable
 * before the worker publishes it.  The worker writes the end to the WAL
 * (wal.c) on a primary, opens, extends and closes the window (slot.c).
 *
 * Owns: the interface.  Must not: grow a method only one source needs
 * without a default in the others.
 */
#ifndef COSID_SLOT_SOURCE_H
#define COSID_SLOT_SOURCE_H

#include "util.h"

/* A turn of the slot worker's loop when nothing failed, in milliseconds. */
#define COSID_WORKER_TURN_MS	100

typedef enum CosidRecordResult
{
	COSID_RECORD_OK,			/* the end is durable: the worker may use it */
	COSID_RECORD_RETRY,			/* not now (the store is away): try again */
	COSID_RECORD_LOST			/* the slot is no longer ours: close the
								 * window at once and take a slot again */
} CosidRecordResult;

typedef struct CosidSlotSource
{
	/* Needs the end of recovery before it may hold its slot. */
	bool		primary_only;

	/* Once, when the worker starts. */
	void		(*start) (void);

	/*
	 * Each turn of the worker's loop, before anything else; false when this
	 * turn cannot go on (the store is away, or its back-off is running).
	 * No method sleeps: the worker waits retry_ms() after a false, a failed
	 * acquire or a record_end that is not OK.
	 */
	bool		(*poll) (void);

	/*
	 * Take a slot: *slot, and in *start_ms the earliest start of its window.
	 * False when there is none now.
	 */
	bool		(*acquire) (int *slot, int64 *start_ms);

	/* How long the worker waits before it tries again after a failure. */
	int			(*retry_ms) (void);

	/* After the slot's first window is open (for the log). */
	void		(*opened) (int slot, int64 start_ms, int64 now_ms);

	/* A renewal is due even though the window needs no later end. */
	bool		(*renewal_due) (int64 now_ms);

	/* Make end_ms durable for the slot (the same end again: a renewal). */
	CosidRecordResult (*record_end) (int slot, int64 end_ms, int64 now_ms);

	/*
	 * Clean shutdown, the window closed for good: the slot's next window may
	 * start at next_start_ms; end_ms is the last end recorded.
	 */
	void		(*release) (int slot, int64 next_start_ms, int64 end_ms);
} CosidSlotSource;

extern const CosidSlotSource cosid_manual_source;
extern const CosidSlotSource cosid_lease_source;
extern const CosidSlotSource cosid_citus_source;

/* ---------- the manual slot's record, shared with the Citus slot ---------- */

/* Take slot with pg_cosid/slot.state (see slot_manual.c). */
extern bool cosid_manual_take(int slot, bool from_citus, int64 *start_ms);

/* The Citus group id this data directory last held as its slot, or -1. */
extern int	cosid_manual_recorded_citus_group(void);

/* ---------- what the Citus source reports (slot_citus.c) ---------- */

extern Size cosid_citus_slot_shmem_size(void);
extern void cosid_citus_slot_shmem_init(void);

/* cosid.slot = 'citus': register the background worker that reads the group id. */
extern void cosid_register_citus_reader(void);
PGDLLEXPORT void cosid_citus_reader_main(Datum arg);

/*
 * Why this node holds no slot from Citus now ("" when it holds one or it is
 * not known yet); true when the slot worker refused the group id it read,
 * so that callers need not wait for a window.
 */
extern bool cosid_citus_slot_refused(char *why, size_t len);

/* The Citus group id last read (-1: none yet). */
extern int	cosid_citus_slot_group(void);

/*
 * pg_upgrade's new server (upgrade.c, the postmaster at start-up): the
 * manual slot's record copied from the old data directory names this one
 * from now on.
 */
extern void cosid_manual_take_upgraded_record(void);

/*
 * Whether pg_cosid/slot.state exists and was written in this data directory
 * (not copied from another one): pg_upgrade's new server, given no manifest
 * to check a copy against, takes no record of its own for the old one's.
 */
extern bool cosid_manual_record_is_own(void);

/* ---------- what the lease source reports (slot_lease.c) ---------- */

extern Size cosid_lease_shmem_size(void);
extern void cosid_lease_shmem_init(void);

typedef struct CosidLeaseStatus
{
	bool		store_connected;
	int64		last_renewal_ms;
	uint64		renewal_failures;
	char		last_error[256];
	char		instance[256];
} CosidLeaseStatus;

extern void cosid_lease_status(CosidLeaseStatus *out);

/* Lease mode with the store unreachable (false in manual mode). */
extern bool cosid_lease_store_away(void);

#endif							/* COSID_SLOT_SOURCE_H */

/*
 * slot_source.h - where this server's slot comes from: the small interface
 * the slot worker (worker.c) drives.  Each implementation has its own
 * header, with what else it offers (slot_manual.h, slot_lease.h,
 * slot_citus.h):
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
 * without a default in the others; declare what one source alone offers
 * (its own header does).
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

	/*
	 * How far past its base the worker puts a new window end: the base is
	 * the clock, or the window's start when that is later, ahead_ms ahead
	 * of the clock.  NULL: COSID_WINDOW_LEAD_MS.  The worker extends the
	 * window when less than COSID_WINDOW_RENEW_MS of it are left.
	 */
	int64		(*lead_ms) (int64 ahead_ms);

	/* Make end_ms durable for the slot (the same end again: a renewal). */
	CosidRecordResult (*record_end) (int slot, int64 end_ms, int64 now_ms);

	/*
	 * Clean shutdown, the window closed for good: the slot's next window may
	 * start at next_start_ms; end_ms is the last end recorded.
	 */
	void		(*release) (int slot, int64 next_start_ms, int64 end_ms);
} CosidSlotSource;

#endif							/* COSID_SLOT_SOURCE_H */

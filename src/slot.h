/*
 * slot.h - this server's slot and its window: the settings that name the
 * slot, and the window in shared memory through which backends may issue
 * time-based ids.
 *
 * Owns: the cosid.slot, machine_bits, namespace, lease and citus_database
 * settings, and the window (start, end, state, slot) in shared memory.  Must not: decide
 * windows (the slot worker does, worker.c, with a slot source) or know about
 * generators.
 *
 * Locking: the window is written only by the slot worker and read by every
 * backend without a lock (64-bit atomics).  The worker makes a new end
 * durable before it stores it, so a backend never issues past a durable end.
 * The slot is stored before the end and the state (write barrier), so a
 * backend that sees an end sees its slot.  At shutdown the worker stores
 * end 0 (closing the window) before it reads each generator's last unit, so
 * nothing is issued after the time it records.
 */
#ifndef COSID_SLOT_H
#define COSID_SLOT_H

#include "util.h"

#include "port/atomics.h"
#include "storage/latch.h"

/* ---------- settings ---------- */

extern int	cosid_machine_bits;
extern char *cosid_slot_setting;
extern char *cosid_namespace;
extern char *cosid_lease_store;
extern int	cosid_lease_ttl;
extern char *cosid_instance_id;
extern bool cosid_promote_above_replayed;
extern char *cosid_citus_database;

/* Define the settings (preloaded), or read them from the configuration. */
extern void cosid_slot_define_settings(void);
extern void cosid_slot_read_settings_unloaded(void);

/* At start-up: raise an error for settings that cannot hold a slot. */
extern void cosid_slot_check_settings(void);

/* cosid.slot = N: N (manual mode only). */
extern int	cosid_manual_slot(void);
/*
 * The slot a copied server must confirm (cosid_slot_confirm): the manual
 * one, or the Citus group id last read (cosid.slot = 'citus').
 */
extern int	cosid_configured_slot(void);
extern bool cosid_lease_mode(void);
/* cosid.slot = 'citus': the slot is the node's Citus group id (slot_citus.c). */
extern bool cosid_citus_slot_mode(void);

/* ---------- the window ---------- */

/* How far ahead of the clock the worker keeps the window end, and when it
 * extends it (ms). */
#define COSID_WINDOW_LEAD_MS	1000
#define COSID_WINDOW_RENEW_MS	700

/*
 * A leased slot renews its lease every TTL / COSID_LEASE_RENEW_PART
 * (slot_lease.c), counted from when the last renewal was sent (1.4; from its
 * answer before, so that servers whose calls waited out one stall of the
 * store renewed together from then on): half the TTL, so a lease outlives a
 * store that stops answering by about half its TTL (less the time of a turn);
 * a call made while the lease lives gives up after half the time it has left,
 * so a call never answered leaves time to retry.  (A third until the fleet
 * measurements of issue 31: what a store spends goes with the number of
 * calls, each a synchronous commit, so 1,024 servers cost it a third less
 * CPU.)  Its lead is that part of the TTL and COSID_WINDOW_RENEW_MS, so that
 * the extension of a busy server's window falls on the renewal its lease
 * needs anyway (one store call every half TTL, busy or idle, not every 300
 * ms), at most COSID_LEASE_LEAD_MAX_MS and never less than
 * COSID_WINDOW_LEAD_MS.  It also stays COSID_LEASE_LEAD_MARGIN_MS inside what
 * the store takes (an end at most the TTL and a second ahead of its clock),
 * from the offset of this server's clock to the store's measured at the last
 * renewal: a clock that runs ahead gets a shorter lead, down to
 * COSID_WINDOW_LEAD_MS, so it may still run up to the TTL ahead.  A call
 * waits up to the longest lead for a window that starts ahead of the clock
 * (after a crash, its own lease taken again).  bench/fleet.c reads these four
 * from here.
 */
#define COSID_LEASE_RENEW_PART		2
#define COSID_LEASE_LEAD_MAX_MS		6000
/*
 * While a lease lives, a call to the store ends by half the time it has
 * left, at least this (slot_lease.c, limit_to_lease).
 */
#define COSID_LEASE_CALL_MIN_MS		500
#define COSID_LEASE_LEAD_MARGIN_MS	500

/*
 * The worker extends the window while ids are being issued (or were in the
 * last COSID_WINDOW_IDLE_MS); an idle server lets it lapse, so it writes no
 * WAL, and the first call after that asks the worker (cosid_window_request)
 * and waits a moment for a new end.
 */
#define COSID_WINDOW_IDLE_MS	60000

typedef enum CosidSlotState
{
	COSID_SLOT_STARTING = 0,	/* no window yet */
	COSID_SLOT_ACTIVE,			/* window open */
	COSID_SLOT_CLOSED,			/* shutting down: window closed for good */
	COSID_SLOT_RECOVERY,		/* manual slot, server in recovery: no window
								 * until it ends (promotion) */
	COSID_SLOT_UNCONFIRMED,		/* manual slot recorded by another data
								 * directory: no window until the operator
								 * confirms it (cosid_slot_confirm) */
	COSID_SLOT_UPGRADED			/* made by pg_upgrade, cosid's state not
								 * copied (upgrade.c): no window until it is
								 * and the server restarted */
} CosidSlotState;

/* The window in shared memory: written by slot.c's functions only. */
typedef struct CosidSlotWindow
{
	pg_atomic_uint64 start_ms;
	pg_atomic_uint64 end_ms;
	pg_atomic_uint32 state;		/* CosidSlotState */
	int			slot;			/* set by the worker before ACTIVE */
	pg_atomic_uint64 renewals;	/* durable window extensions */
	pg_atomic_uint32 wanted;	/* a backend found the window lapsed */
	pg_atomic_uint32 confirmed;	/* cosid_slot_confirm() was called */
	pg_atomic_uint32 citus_group;	/* the Citus reader's group id + 1 (0: none) */
	Latch	   *worker_latch;	/* the slot worker's, set once it runs */
} CosidSlotWindow;

extern CosidSlotWindow *cosid_window;

extern Size cosid_window_shmem_size(void);
extern void cosid_window_shmem_init(void);

/*
 * cosid.slot = 'citus': the group id the Citus reader (slot_citus.c) read
 * last, published here so that cosid_configured_slot() need not ask it;
 * -1 when it read none.
 */
extern void cosid_window_publish_citus_group(int group);

/* Read by backends (no lock), on the hot path: inline. */
static inline int64
cosid_window_start(void)
{
	return (int64) pg_atomic_read_u64(&cosid_window->start_ms);
}

static inline int64
cosid_window_end(void)
{
	return (int64) pg_atomic_read_u64(&cosid_window->end_ms);
}

static inline CosidSlotState
cosid_window_state(void)
{
	return (CosidSlotState) pg_atomic_read_u32(&cosid_window->state);
}

static inline int
cosid_window_slot(void)
{
	return cosid_window->slot;
}

static inline uint64
cosid_window_renewals(void)
{
	return pg_atomic_read_u64(&cosid_window->renewals);
}

/* A backend found the window lapsed: ask the worker for a new end now. */
extern void cosid_window_request(void);

/* cosid_slot_confirm(): this copy's manual slot is its own; and its reading. */
extern void cosid_window_confirm(void);
extern bool cosid_window_confirmed(void);

/* Written by the slot worker only. */
extern void cosid_window_set_worker_latch(void);
extern bool cosid_window_take_request(void);
extern void cosid_window_set_state(CosidSlotState state);
extern void cosid_window_open(int slot, int64 start_ms, int64 end_ms);
extern void cosid_window_extend(int64 end_ms);
extern void cosid_window_raise_start(int64 start_ms);
extern void cosid_window_close(bool for_good);

#endif							/* COSID_SLOT_H */

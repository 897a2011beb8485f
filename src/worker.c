/*
 * worker.c - the slot worker: holds this server's slot and keeps its window
 * open while ids are issued.
 *
 * It drives one slot source (slot_source.h): the manual slot, the leased
 * one, or the node's Citus group id.  Each turn (every 100 ms, or when a backend sets its latch) it asks
 * for a later window end when the end is near and ids were issued lately
 * (or a backend asked), has the source make it durable, writes it to the
 * WAL on a primary (wal.c), and only then publishes it (slot.c).  A slot the
 * source reports lost closes the window at once.  At shutdown it closes the
 * window, reads where the next window may start (after the start of the last
 * unit any generator issued) and has the source record that.
 *
 * Every turn of the loop ends in one latch wait: the turn's own length, or
 * after a failure the source's back-off (core/backoff.h), so a store that
 * fails at once cannot make the worker spin.
 *
 * Shutdown uses PostgreSQL's standard handling, as autoprewarm does:
 * SIGTERM sets ShutdownRequestPending (SignalHandlerForShutdownRequest),
 * SIGHUP ConfigReloadPending.
 *
 * No wait here or at the ULID mark (ulid_type.c) is for something another
 * backend holds across a lock wait, so neither can close a cycle of waits
 * that the deadlock detector does not see.
 *
 * Owns: the worker's registration and its loop.  Must not: write the slot's
 * durable record itself (sources do) or be called by backends.
 */
#include "worker.h"
#include "genstate.h"
#include "slot.h"
#include "slot_source.h"
#include "slot_citus.h"
#include "slot_lease.h"
#include "slot_manual.h"
#include "upgrade.h"
#include "wal.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

void
cosid_register_worker(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	/* no database needed: ids are issued on a standby and during recovery */
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "cosid");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "cosid_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "cosid slot worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "cosid slot worker");
	RegisterBackgroundWorker(&worker);
}

static void
reload(void)
{
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

/*
 * Whether the window should be kept ahead of the clock: ids were issued in
 * the last COSID_WINDOW_IDLE_MS (or the window opened that recently), or a
 * backend found it lapsed and asked.  It looks at every entry, so it is
 * asked only when the end is near (it notices any change since its last
 * call).
 */
static bool
window_in_demand(void)
{
	static uint64 last_total = 0;
	static int64 last_use = -1;
	int64		now = cosid_monotonic_ms();	/* an idle time: not the wall clock's */
	uint64		total = cosid_gen_issued_total();

	if (last_use < 0 || total != last_total)
		last_use = now;
	last_total = total;
	if (cosid_window_take_request())
		last_use = now;
	return now - last_use < COSID_WINDOW_IDLE_MS;
}

/*
 * Manual mode has no window while the server is in recovery (a standby, or
 * crash or point-in-time recovery): the slot is the primary's, and the
 * window ends replayed from its WAL are known only when recovery is over.
 * False if asked to stop meanwhile.
 */
static bool
wait_for_recovery_end(void)
{
	if (!RecoveryInProgress())
		return true;
	cosid_window_set_state(COSID_SLOT_RECOVERY);
	for (int turn = 0; RecoveryInProgress(); turn++)
	{
		if (turn == 200 && cosid_citus_slot_mode())
			ereport(LOG,
					(errmsg("cosid slot worker waits for the end of recovery before it reads this node's Citus group id"),
					 errdetail("A slot from Citus issues no ids on a standby; its window starts above the window ends replayed from the WAL.")));
		else if (turn == 200)	/* a second: a standby, or a long recovery */
			ereport(LOG,
					(errmsg("cosid slot worker waits for the end of recovery before it opens a window for slot %d",
							cosid_manual_slot()),
					 errdetail("A manual slot issues no ids on a standby; its window starts above the window ends replayed from the WAL.")));
		/*
		 * Crash recovery and a clean start are over in moments: look often
		 * at first, so the window opens as the server starts accepting
		 * connections; a standby waits long, so look less often later.
		 */
		cosid_sleep_ms(turn < 1000 ? 5 : 100, COSID_WAIT_RECOVERY_END);
		if (ShutdownRequestPending)
			return false;
		reload();
	}
	cosid_window_set_state(COSID_SLOT_STARTING);
	return true;
}

/* The worker's state between turns. */
typedef struct WorkerState
{
	const CosidSlotSource *src;
	int			slot;			/* -1: none held */
	int64		start;			/* where the slot's window may start */
	int64		end;			/* the window's end; 0: not open */
	bool		in_recovery;
} WorkerState;

/*
 * Promoted: with cosid.promote_above_replayed, ids sort above the old
 * primary's, whose window ends were replayed from its WAL.
 */
static void
check_promotion(WorkerState *w)
{
	int64		replayed;

	if (!w->in_recovery || RecoveryInProgress())
		return;
	w->in_recovery = false;
	if (!cosid_promote_above_replayed)
		return;
	replayed = cosid_wal_replayed_end(-1, cosid_namespace);
	if (replayed > w->start)
	{
		w->start = replayed;
		if (w->end > 0)
			cosid_window_raise_start(w->start);
		ereport(LOG,
				(errmsg("cosid slot worker: promoted, the window now starts at %s, above the window ends replayed from the WAL",
						cosid_ms_text(w->start))));
	}
}

/*
 * One turn of the loop: hold a slot and keep its window ahead of the clock.
 * Returns how long to wait before the next turn: COSID_WORKER_TURN_MS, or
 * the source's back-off after a failure.  It never waits itself, so every
 * turn ends in exactly one latch wait (cosid_worker_main).
 */
static int
worker_turn(WorkerState *w)
{
	const CosidSlotSource *src = w->src;
	int64		now;
	bool		extend;

	if (!src->poll())
		return src->retry_ms();
	check_promotion(w);

	now = (int64) cosid_now_ms();
	if (w->slot < 0)
	{
		if (!src->acquire(&w->slot, &w->start))
		{
			w->slot = -1;
			return src->retry_ms();
		}
		w->end = 0;
	}

	/*
	 * A later end is made durable before anyone may use it; a source may
	 * also want the same end recorded again (a lease renewal, even when the
	 * window needs no extending: it can start far ahead of the clock, after
	 * a holder whose clock was ahead).
	 */
	extend = w->end == 0 ||
		(w->end - now < COSID_WINDOW_RENEW_MS && window_in_demand());
	if (!extend && !src->renewal_due(now))
		return COSID_WORKER_TURN_MS;

	{
		int64		base = Max(now, w->start);
		int64		lead = src->lead_ms ? src->lead_ms(base - now) : COSID_WINDOW_LEAD_MS;
		int64		new_end = extend ? Max(base + lead, w->end) : w->end;

		switch (src->record_end(w->slot, new_end, now))
		{
			case COSID_RECORD_OK:
				/* on a primary, the WAL carries the end too (see wal.c) */
				if (new_end > w->end && !RecoveryInProgress())
					cosid_wal_log_window(w->slot, new_end);
				if (w->end == 0)
				{
					cosid_window_open(w->slot, w->start, new_end);
					src->opened(w->slot, w->start, now);
				}
				else if (new_end > w->end)
					cosid_window_extend(new_end);
				w->end = new_end;
				return COSID_WORKER_TURN_MS;
			case COSID_RECORD_LOST:

				/*
				 * Stop issuing at once, then take a slot again (next turn);
				 * but first wait out every backend still inside its entry's
				 * lock with the old window (reading where the next window
				 * may start takes each entry's lock), so none issues under
				 * the next slot with this window.
				 */
				cosid_window_close(false);
				(void) cosid_gen_issued_bound_ms(w->start);
				w->slot = -1;
				w->end = 0;
				return src->retry_ms();
			case COSID_RECORD_RETRY:
				break;
		}
	}
	return src->retry_ms();
}

void
cosid_worker_main(Datum arg)
{
	WorkerState w;

	w.src = cosid_lease_mode() ? &cosid_lease_source :
		cosid_citus_slot_mode() ? &cosid_citus_source : &cosid_manual_source;
	w.slot = -1;
	w.start = 0;
	w.end = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	cosid_window_set_worker_latch();

	/*
	 * pg_upgrade made this data directory and cosid's state was not copied
	 * into it: where the old server's windows ended is unknown, so no slot
	 * (and no lease, no record written) until a restart with the state.
	 */
	if (cosid_upgrade_pending)
	{
		cosid_window_set_state(COSID_SLOT_UPGRADED);
		ereport(WARNING,
				(errmsg("cosid slot worker holds no window: this server was upgraded by pg_upgrade and cosid's state was not copied"),
				 errdetail("%s Where the old server's ids ended is unknown.", cosid_upgrade_detail()),
				 errhint("Stop this server, copy the files in pg_cosid of the old data directory into pg_cosid of this one, and start it again (docs/installation.md: Upgrading PostgreSQL).")));
		while (!ShutdownRequestPending)
		{
			reload();
			cosid_sleep_ms(1000, COSID_WAIT_SLOT_WORKER);
		}
		proc_exit(0);
	}

	w.src->start();
	if (w.src->primary_only && !wait_for_recovery_end())
		proc_exit(0);
	w.in_recovery = RecoveryInProgress();

	while (!ShutdownRequestPending)
	{
		reload();
		/* every turn ends here, in one wait; a backend's request ends it early */
		cosid_sleep_ms(worker_turn(&w), COSID_WAIT_SLOT_WORKER);
	}

	/* clean shutdown: close the window, record where the next may start */
	if (w.slot >= 0)
	{
		cosid_window_close(true);
		w.src->release(w.slot, cosid_gen_issued_bound_ms(w.start), w.end);
	}
	proc_exit(0);
}

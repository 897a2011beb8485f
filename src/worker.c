/*
 * worker.c - the slot worker: holds this server's slot and keeps its window
 * open while ids are issued.
 *
 * It drives one slot source (slot_source.h): the manual slot or the leased
 * one.  Each turn (every 100 ms, or when a backend sets its latch) it asks
 * for a later window end when the end is near and ids were issued lately
 * (or a backend asked), has the source make it durable, writes it to the
 * WAL on a primary (wal.c), and only then publishes it (slot.c).  A slot the
 * source reports lost closes the window at once.  At shutdown it closes the
 * window, reads where the next window may start (after the start of the last
 * unit any generator issued) and has the source record that.
 *
 * Shutdown uses PostgreSQL's standard handling, as autoprewarm does:
 * SIGTERM sets ShutdownRequestPending (SignalHandlerForShutdownRequest),
 * SIGHUP ConfigReloadPending.
 *
 * Owns: the worker's registration and its loop.  Must not: write the slot's
 * durable record itself (sources do) or be called by backends.
 */
#include "worker.h"
#include "genstate.h"
#include "slot.h"
#include "slot_source.h"
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
	int64		now = (int64) cosid_now_ms();
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
		if (turn == 200)		/* a second: a standby, or a long recovery */
			ereport(LOG,
					(errmsg("cosid slot worker waits for the end of recovery before it opens a window for slot %d",
							cosid_manual_slot()),
					 errdetail("A manual slot issues no ids on a standby; its window starts above the window ends replayed from the WAL.")));
		/*
		 * Crash recovery and a clean start are over in moments: look often
		 * at first, so the window opens as the server starts accepting
		 * connections; a standby waits long, so look less often later.
		 */
		cosid_sleep_ms(turn < 1000 ? 5 : 100);
		if (ShutdownRequestPending)
			return false;
		reload();
	}
	cosid_window_set_state(COSID_SLOT_STARTING);
	return true;
}

void
cosid_worker_main(Datum arg)
{
	const CosidSlotSource *src = cosid_lease_mode() ?
		&cosid_lease_source : &cosid_manual_source;
	int			slot = -1;
	int64		start = 0;
	int64		end = 0;			/* the window's end; 0: not open */
	bool		in_recovery;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	cosid_window_set_worker_latch();

	src->start();
	if (src->primary_only && !wait_for_recovery_end())
		proc_exit(0);
	in_recovery = RecoveryInProgress();

	while (!ShutdownRequestPending)
	{
		int64		now;
		bool		extend;

		reload();
		if (!src->poll())
			continue;

		/*
		 * Promoted: with cosid.promote_above_replayed, ids sort above the old
		 * primary's, whose window ends were replayed from its WAL.
		 */
		if (in_recovery && !RecoveryInProgress())
		{
			in_recovery = false;
			if (cosid_promote_above_replayed)
			{
				int64		replayed = cosid_wal_replayed_end(-1, cosid_namespace);

				if (replayed > start)
				{
					start = replayed;
					if (end > 0)
						cosid_window_raise_start(start);
					ereport(LOG,
							(errmsg("cosid slot worker: promoted, the window now starts at %s, above the window ends replayed from the WAL",
									cosid_ms_text(start))));
				}
			}
		}

		now = (int64) cosid_now_ms();
		if (slot < 0)
		{
			if (!src->acquire(&slot, &start))
			{
				slot = -1;
				continue;
			}
			end = 0;
		}

		/*
		 * A later end is made durable before anyone may use it; a source may
		 * also want the same end recorded again (a lease renewal, even when
		 * the window needs no extending: it can start far ahead of the clock,
		 * after a holder whose clock was ahead).
		 */
		extend = end == 0 ||
			(end - now < COSID_WINDOW_RENEW_MS && window_in_demand());
		if (extend || src->renewal_due(now))
		{
			int64		new_end = extend ?
				Max(Max(now, start) + COSID_WINDOW_LEAD_MS, end) : end;

			switch (src->record_end(slot, new_end, now))
			{
				case COSID_RECORD_OK:
					/* on a primary, the WAL carries the end too (see wal.c) */
					if (new_end > end && !RecoveryInProgress())
						cosid_wal_log_window(slot, new_end);
					if (end == 0)
					{
						cosid_window_open(slot, start, new_end);
						src->opened(slot, start, now);
					}
					else if (new_end > end)
						cosid_window_extend(new_end);
					end = new_end;
					break;
				case COSID_RECORD_LOST:

					/*
					 * Stop issuing at once, then take a slot again; but first
					 * wait out every backend still inside its entry's lock
					 * with the old window (reading where the next window may
					 * start takes each entry's lock), so none issues under
					 * the next slot with this window.
					 */
					cosid_window_close(false);
					(void) cosid_gen_issued_bound_ms(start);
					slot = -1;
					end = 0;
					continue;
				case COSID_RECORD_RETRY:
					continue;
			}
		}
		cosid_sleep_ms(100);
	}

	/* clean shutdown: close the window, record where the next may start */
	if (slot >= 0)
	{
		cosid_window_close(true);
		src->release(slot, cosid_gen_issued_bound_ms(start), end);
	}
	proc_exit(0);
}

/*
 * worker.c - the slot worker: holds this server's slot and its window.
 *
 * Manual mode (cosid.slot = N): the window's end is kept durable in
 * pg_cosid/slot.state under the data directory.  The worker
 *  - at start, reads the end recorded by the previous run and starts the new
 *    window there (ids of that run all belong to units that start before it);
 *  - writes a new end (fsync'd, atomic rename) before backends may use it,
 *    about COSID_WINDOW_LEAD_MS ahead of the clock;
 *  - at clean shutdown closes the window, then records the start of the last
 *    unit issued plus one, so a restart with a correct clock need not wait
 *    for the end it had written ahead.
 * After a crash the recorded end stands: the next window starts at most
 * COSID_WINDOW_LEAD_MS after the crash, and backends wait that long at most.
 *
 * Lease mode (cosid.slot = 'lease') is in lease.c; both use the window
 * helpers below.
 */
#include "cosid.h"

#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#define STATE_DIR	"pg_cosid"
#define STATE_FILE	STATE_DIR "/slot.state"
#define STATE_TMP	STATE_DIR "/slot.state.tmp"
#define STATE_MAGIC "cosid slot state 1"

typedef struct SlotRecord
{
	int			slot;
	char		namespace[NAMEDATALEN];
	int64		end_ms;			/* no id of this slot's holder used a unit
								 * starting at or after this */
	bool		clean;			/* written at clean shutdown */
} SlotRecord;

static volatile sig_atomic_t shutdown_requested = false;

int
cosid_manual_slot(void)
{
	return (int) strtol(cosid_slot_setting, NULL, 10);
}

bool
cosid_lease_mode(void)
{
	return pg_strcasecmp(cosid_slot_setting, "lease") == 0;
}

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
worker_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	shutdown_requested = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* Read the record; false when there is none.  A damaged one is an error. */
static bool
read_record(SlotRecord *rec)
{
	FILE	   *f = AllocateFile(STATE_FILE, "r");
	char		line[256];
	bool		have_magic = false,
				have_slot = false,
				have_end = false;

	if (f == NULL)
	{
		if (errno == ENOENT)
			return false;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", STATE_FILE)));
	}
	memset(rec, 0, sizeof(*rec));
	while (fgets(line, sizeof(line), f))
	{
		char	   *eq;
		size_t		n = strlen(line);

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (strcmp(line, STATE_MAGIC) == 0)
		{
			have_magic = true;
			continue;
		}
		eq = strchr(line, '=');
		if (eq == NULL)
			continue;
		*eq++ = '\0';
		if (strcmp(line, "slot") == 0)
			rec->slot = atoi(eq), have_slot = true;
		else if (strcmp(line, "namespace") == 0)
			strlcpy(rec->namespace, eq, NAMEDATALEN);
		else if (strcmp(line, "end_ms") == 0)
		{
			char	   *end;

			rec->end_ms = strtoll(eq, &end, 10);
			have_end = (*end == '\0' && rec->end_ms >= 0);
		}
		else if (strcmp(line, "clean") == 0)
			rec->clean = strcmp(eq, "1") == 0;
	}
	FreeFile(f);
	if (!have_magic || !have_slot || !have_end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cosid slot state file \"%s\" is damaged", STATE_FILE),
				 errdetail("Without it the end of the previous window is unknown, so ids could repeat."),
				 errhint("If no id was issued since a time you know, write that time as end_ms (Unix milliseconds) in the file, or remove it only if the clock is certainly past every id issued.")));
	return true;
}

/* Write the record durably: temporary file, fsync, atomic rename. */
static void
write_record(const SlotRecord *rec)
{
	char		buf[256];
	int			len;

	len = snprintf(buf, sizeof(buf), "%s\nslot=%d\nnamespace=%s\nend_ms=" INT64_FORMAT "\nclean=%d\n",
				   STATE_MAGIC, rec->slot, rec->namespace, rec->end_ms, rec->clean ? 1 : 0);
	cosid_write_durably(STATE_FILE, STATE_TMP, buf, len);
}

static void
ensure_state_dir(void)
{
	if (MakePGDirectory(STATE_DIR) == 0)
		fsync_fname(".", true);
	else if (errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", STATE_DIR)));
}

static volatile sig_atomic_t exiting = false;

bool
cosid_worker_stopping(void)
{
	return shutdown_requested && !exiting;
}

void
cosid_worker_clear_stop_for_exit(void)
{
	exiting = true;
}

void
cosid_worker_reload(void)
{
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

void
cosid_worker_sleep(int ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

/* Publish a new window (the slot first: backends read it after the end). */
void
cosid_open_window(int slot, int64 start_ms, int64 end_ms)
{
	cosid_shared->slot = slot;
	pg_write_barrier();
	pg_atomic_write_u64(&cosid_shared->window_start_ms, (uint64) start_ms);
	pg_atomic_write_u64(&cosid_shared->window_end_ms, (uint64) end_ms);
	pg_write_barrier();
	pg_atomic_write_u32(&cosid_shared->slot_state, COSID_SLOT_ACTIVE);
}

/* A later end, already durable. */
void
cosid_extend_window(int64 end_ms)
{
	pg_atomic_write_u64(&cosid_shared->window_end_ms, (uint64) end_ms);
	pg_atomic_fetch_add_u64(&cosid_shared->window_renewals, 1);
}

/*
 * Close the window (for good at shutdown, or until a new lease), then find
 * where the next one may start: after the start of the last unit any
 * generator issued, and never before this window's start.
 */
/*
 * Whether the window should be kept ahead of the clock: ids were issued in
 * the last COSID_WINDOW_IDLE_MS (or the window opened that recently), or a
 * backend found it lapsed and asked.  It looks at every entry, so callers
 * ask only when the end is near (it notices any change since its last call).
 */
bool
cosid_window_in_demand(void)
{
	static uint64 last_total = 0;
	static int64 last_use = -1;
	int64		now = (int64) cosid_now_ms();
	uint64		total = cosid_gen_issued_total();

	if (last_use < 0 || total != last_total)
		last_use = now;
	last_total = total;
	if (pg_atomic_exchange_u32(&cosid_shared->window_wanted, 0) != 0)
		last_use = now;
	return now - last_use < COSID_WINDOW_IDLE_MS;
}

/* A backend found the window lapsed: ask the worker for a new end now. */
void
cosid_request_window(void)
{
	Latch	   *latch = cosid_shared->worker_latch;

	pg_atomic_write_u32(&cosid_shared->window_wanted, 1);
	if (latch != NULL)
		SetLatch(latch);
}

/* A later start for the open window (lease mode, promoted): atomic. */
void
cosid_raise_window_start(int64 start_ms)
{
	if ((int64) pg_atomic_read_u64(&cosid_shared->window_start_ms) < start_ms)
		pg_atomic_write_u64(&cosid_shared->window_start_ms, (uint64) start_ms);
}

int64
cosid_close_window(int64 start_ms, bool for_good)
{
	pg_atomic_write_u32(&cosid_shared->slot_state,
						for_good ? COSID_SLOT_CLOSED : COSID_SLOT_STARTING);
	pg_atomic_write_u64(&cosid_shared->window_end_ms, 0);
	pg_memory_barrier();
	return cosid_gen_issued_bound_ms(start_ms);
}

/*
 * Manual mode has no window while the server is in recovery (a standby, or
 * crash or point-in-time recovery): the slot is the primary's, and the
 * window ends replayed from its WAL are known only when recovery is over.
 * False if asked to stop meanwhile.
 */
bool
cosid_wait_for_recovery_end(void)
{
	if (!RecoveryInProgress())
		return true;
	pg_atomic_write_u32(&cosid_shared->slot_state, COSID_SLOT_RECOVERY);
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
		cosid_worker_sleep(turn < 1000 ? 5 : 100);
		if (cosid_worker_stopping())
			return false;
		cosid_worker_reload();
	}
	pg_atomic_write_u32(&cosid_shared->slot_state, COSID_SLOT_STARTING);
	return true;
}

/* A new window end: durable in the state file and in the WAL, then used. */
static void
record_end(SlotRecord *rec, int64 end)
{
	rec->end_ms = end;
	write_record(rec);
	cosid_wal_log_window(rec->slot, end);
}

static void
manual_main(void)
{
	SlotRecord rec;
	SlotRecord prev;
	int			slot = cosid_manual_slot();
	int64		start;
	int64		end;
	int64		now;
	int64		replayed;

	ensure_state_dir();
	if (!cosid_wait_for_recovery_end())
		return;
	now = (int64) cosid_now_ms();
	start = 0;
	if (read_record(&prev))
	{
		if (prev.slot == slot && strcmp(prev.namespace, cosid_namespace) == 0)
			start = prev.end_ms;
		else
			ereport(LOG,
					(errmsg("cosid slot changed from %d (namespace \"%s\") to %d (namespace \"%s\"): the new slot's history is not known here",
							prev.slot, prev.namespace, slot, cosid_namespace)));
	}
	/* what the WAL says this slot's holder may have issued up to */
	replayed = cosid_wal_replayed_end(slot, cosid_namespace);
	if (replayed > start)
	{
		ereport(LOG,
				(errmsg("cosid slot worker starts slot %d's window at %s, the end replayed from the WAL",
						slot, timestamptz_to_str(cosid_ms_to_timestamptz(replayed)))));
		start = replayed;
	}

	memset(&rec, 0, sizeof(rec));
	rec.slot = slot;
	strlcpy(rec.namespace, cosid_namespace, NAMEDATALEN);
	rec.clean = false;
	end = Max(now, start) + COSID_WINDOW_LEAD_MS;
	record_end(&rec, end);
	cosid_open_window(slot, start, end);

	if (start > now)
		ereport(LOG,
				(errmsg("cosid slot worker holds slot %d; its window opens at %s, " INT64_FORMAT " ms ahead of the clock",
						slot, timestamptz_to_str(cosid_ms_to_timestamptz(start)), start - now)));
	else
		ereport(LOG,
				(errmsg("cosid slot worker holds slot %d (manual, namespace \"%s\")",
						slot, cosid_namespace)));

	while (!cosid_worker_stopping())
	{
		cosid_worker_sleep(100);
		if (cosid_worker_stopping())
			break;
		cosid_worker_reload();

		now = (int64) cosid_now_ms();
		if (end - now < COSID_WINDOW_RENEW_MS && cosid_window_in_demand())
		{
			int64		new_end = Max(now, start) + COSID_WINDOW_LEAD_MS;

			if (new_end > end)
			{
				record_end(&rec, new_end);
				cosid_extend_window(new_end);
				end = new_end;
			}
		}
	}

	rec.end_ms = cosid_close_window(start, true);
	rec.clean = true;
	write_record(&rec);
	ereport(LOG,
			(errmsg("cosid slot worker released slot %d; the next window starts at %s",
					slot, timestamptz_to_str(cosid_ms_to_timestamptz(rec.end_ms)))));
}

void
cosid_worker_main(Datum arg)
{
	pqsignal(SIGTERM, worker_sigterm);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	cosid_shared->worker_latch = MyLatch;

	if (cosid_lease_mode())
		cosid_lease_main();
	else
		manual_main();
	proc_exit(0);
}

/*
 * slot_manual.c - the manual slot (cosid.slot = N): a slot source.
 *
 * The window's end is kept durable in pg_cosid/slot.state under the data
 * directory (and, by the worker, in the WAL).  At start the slot's window
 * starts at the end recorded by the previous run, or at the end replayed
 * from the WAL if that is later (ids of those runs all belong to units that
 * start before it).  Each new end is written (fsync'd, atomic rename) before
 * backends may use it.  At clean shutdown the record gets the start of the
 * last unit issued plus one, so a restart with a correct clock need not wait
 * for the end it had written ahead.  After a crash the recorded end stands:
 * the next window starts at most COSID_WINDOW_LEAD_MS after the crash.
 *
 * A manual slot is the primary's: it holds no window while the server is in
 * recovery (primary_only), since the window ends replayed from the WAL are
 * known only when recovery is over.
 *
 * A copy of a server is not the same server (1.3): the record names the
 * data directory that wrote it (its inode).  A server that finds the record
 * of another data directory, and did not start as a standby (standby.signal:
 * a promoted standby of a running stream takes its primary's place), was
 * started from a copy: a base backup, a point-in-time recovery, a file copy.
 * It would issue the very ids its original issues with the same slot, so it
 * opens no window (COSID_SLOT_UNCONFIRMED, 55000 for its callers) until the
 * operator confirms that the slot is its own (cosid_slot_confirm()); then
 * the record becomes this directory's.  A record of 1.2 names no directory:
 * it is taken as this one's.  So is the record of the old data directory
 * that the operator copies into the new one after pg_upgrade (upgrade.c):
 * pg_upgrade's old server does not run again.
 *
 * The Citus slot (slot_citus.c) keeps its record here too: the slot is the
 * node's group id, and the record says so (citus=1).
 *
 * Owns: pg_cosid/slot.state.  Must not: touch the window (the worker does).
 */
#include "slot_manual.h"
#include "slot.h"
#include "wal.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/fd.h"

#define SLOT_FILE	COSID_STATE_DIR "/slot.state"
#define SLOT_TMP	COSID_STATE_DIR "/slot.state.tmp"
#define STATE_MAGIC "cosid slot state 1"

typedef struct SlotRecord
{
	int			slot;
	char		namespace[NAMEDATALEN];
	int64		end_ms;			/* no id of this slot's holder used a unit
								 * starting at or after this */
	bool		clean;			/* written at clean shutdown */
	uint64		datadir;		/* the inode of the data directory that
								 * wrote it (0: unknown, 1.2) */
	bool		citus;			/* the slot is a Citus group id (cosid.slot
								 * = 'citus', slot_citus.c) */
} SlotRecord;

static SlotRecord rec;

/* The worker started while the server was a standby (standby.signal). */
static bool started_as_standby = false;

/* The inode of this server's data directory. */
static uint64
datadir_inode(void)
{
	struct stat st;

	if (stat(".", &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat data directory \"%s\": %m", DataDir)));
	return (uint64) st.st_ino;
}

/* Read the record; false when there is none.  A damaged one is an error. */
static bool
read_record(SlotRecord *rec)
{
	FILE	   *f = AllocateFile(SLOT_FILE, "r");
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
				 errmsg("could not open file \"%s\": %m", SLOT_FILE)));
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
		else if (strcmp(line, "datadir_inode") == 0)
			rec->datadir = strtou64(eq, NULL, 10);
		else if (strcmp(line, "citus") == 0)
			rec->citus = strcmp(eq, "1") == 0;
	}
	FreeFile(f);
	if (!have_magic || !have_slot || !have_end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cosid slot state file \"%s\" is damaged", SLOT_FILE),
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

	len = snprintf(buf, sizeof(buf), "%s\nslot=%d\nnamespace=%s\nend_ms=" INT64_FORMAT "\nclean=%d\ndatadir_inode=" UINT64_FORMAT "\n%s",
				   STATE_MAGIC, rec->slot, rec->namespace, rec->end_ms, rec->clean ? 1 : 0,
				   rec->datadir, rec->citus ? "citus=1\n" : "");
	cosid_write_durably(SLOT_FILE, SLOT_TMP, buf, len);
}

bool
cosid_manual_record_is_own(void)
{
	SlotRecord	rec;

	return read_record(&rec) && rec.datadir == datadir_inode();
}

void
cosid_manual_take_upgraded_record(void)
{
	SlotRecord	prev;
	uint64		here = datadir_inode();

	if (!read_record(&prev) || prev.datadir == here)
		return;
	prev.datadir = here;
	write_record(&prev);
	ereport(LOG,
			(errmsg("cosid takes the record of slot %d copied from the data directory this server was upgraded from: its next window starts at %s",
					prev.slot, cosid_ms_text(prev.end_ms))));
}

static void
manual_start(void)
{
	cosid_ensure_state_dir();
	/* the worker starts with the postmaster, before a promotion removes it */
	started_as_standby = access(STANDBY_SIGNAL_FILE, F_OK) == 0;
}

/*
 * Whether this server may take the slot of a record another data directory
 * wrote: it started as a standby, or the operator confirmed.  Otherwise
 * say why (once) and hold no window.
 */
static bool
copy_may_take(const SlotRecord *prev)
{
	static bool said = false;

	if (started_as_standby || cosid_window_confirmed())
	{
		ereport(LOG,
				(errmsg("cosid slot worker takes slot %d, recorded by another data directory, as this server's: %s",
						prev->slot, started_as_standby ? "it was promoted from a standby" : "cosid_slot_confirm() was called")));
		return true;
	}
	cosid_window_set_state(COSID_SLOT_UNCONFIRMED);
	if (!said)
		ereport(WARNING,
				(errmsg("cosid slot worker holds no window: slot %d was recorded by another data directory", prev->slot),
				 errdetail("This server was started from a copy of a server that uses slot %d (a base backup, a point-in-time recovery or a file copy); both would issue the same ids.",
						   prev->slot),
				 errhint("If the server it was copied from no longer uses slot %d, run SELECT cosid_slot_confirm(); as a superuser. Otherwise give this server a slot of its own (cosid.slot) and restart it.",
						 prev->slot)));
	said = true;
	return false;
}

static bool
manual_poll(void)
{
	return true;
}

/*
 * Take slot (a manual slot, or a Citus group id: from_citus) with the
 * record: its window starts at the end recorded for it, or replayed from
 * the WAL.  False when this server is a copy that may not take it yet.
 */
bool
cosid_manual_take(int slot, bool from_citus, int64 *start_ms)
{
	SlotRecord	prev;
	int64		start = 0;
	int64		replayed;

	if (read_record(&prev))
	{
		/* a record of another data directory: this server is a copy */
		if (prev.datadir != 0 && prev.datadir != datadir_inode() &&
			prev.slot == slot && strcmp(prev.namespace, cosid_namespace) == 0 &&
			!copy_may_take(&prev))
			return false;
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
						slot, cosid_ms_text(replayed))));
		start = replayed;
	}
	memset(&rec, 0, sizeof(rec));
	rec.slot = slot;
	strlcpy(rec.namespace, cosid_namespace, NAMEDATALEN);
	rec.clean = false;
	rec.datadir = datadir_inode();
	rec.citus = from_citus;
	/* this directory's from now on, before any window opens */
	rec.end_ms = start;
	write_record(&rec);
	*start_ms = start;
	return true;
}

/*
 * The Citus group id this data directory last held as its slot (a record
 * of this namespace written with cosid.slot = 'citus'), or -1.
 */
int
cosid_manual_recorded_citus_group(void)
{
	SlotRecord	prev;

	if (!read_record(&prev) || !prev.citus ||
		strcmp(prev.namespace, cosid_namespace) != 0)
		return -1;
	return prev.slot;
}

static bool
manual_acquire(int *slot, int64 *start_ms)
{
	*slot = cosid_manual_slot();
	return cosid_manual_take(*slot, false, start_ms);
}

/* Nothing of the manual slot fails but by an ERROR (which restarts the worker). */
static int
manual_retry_ms(void)
{
	return COSID_WORKER_TURN_MS;
}

static void
manual_opened(int slot, int64 start_ms, int64 now_ms)
{
	if (start_ms > now_ms)
		ereport(LOG,
				(errmsg("cosid slot worker holds slot %d; its window opens at %s, " INT64_FORMAT " ms ahead of the clock",
						slot, cosid_ms_text(start_ms), start_ms - now_ms)));
	else
		ereport(LOG,
				(errmsg("cosid slot worker holds slot %d (manual, namespace \"%s\")",
						slot, cosid_namespace)));
}

static bool
manual_renewal_due(int64 now_ms)
{
	return false;
}

/* A later end (the file holds the last one written; never lower it). */
static CosidRecordResult
manual_record_end(int slot, int64 end_ms, int64 now_ms)
{
	if (end_ms > rec.end_ms)
	{
		rec.end_ms = end_ms;
		write_record(&rec);
	}
	return COSID_RECORD_OK;
}

static void
manual_release(int slot, int64 next_start_ms, int64 end_ms)
{
	rec.end_ms = next_start_ms;
	rec.clean = true;
	write_record(&rec);
	ereport(LOG,
			(errmsg("cosid slot worker released slot %d; the next window starts at %s",
					slot, cosid_ms_text(rec.end_ms))));
}

const CosidSlotSource cosid_manual_source = {
	.primary_only = true,
	.start = manual_start,
	.poll = manual_poll,
	.acquire = manual_acquire,
	.retry_ms = manual_retry_ms,
	.opened = manual_opened,
	.renewal_due = manual_renewal_due,
	.record_end = manual_record_end,
	.release = manual_release,
};

/*
 * upgrade.c - pg_upgrade: the marker pg_cosid/upgraded, and whether cosid's
 * state came along to the new data directory.
 *
 * pg_upgrade copies (links, clones, swaps) the relation files of the old
 * cluster into the new one, but not pg_cosid/, where the old server kept
 * where its slot's window ended (slot.state), the layouts its generators'
 * names issued with (names), the mark of its monotonic ULIDs and uuids
 * (ulid.state) and the window ends its WAL replay saw (replayed.state).
 * Without them the new server would open its window at its own clock
 * (below, even on, ids the old server issued when the clock is behind),
 * forget layout history, and make monotonic ids below the old ones.
 *
 * During pg_upgrade the new server runs in binary-upgrade mode and loads
 * cosid (preloaded, or by pg_upgrade's LOAD of every library the old
 * cluster's functions use); the data directory that holds pg_upgrade's
 * pg_upgrade_output.d (pg_upgrade 15 and later keeps its work in the new
 * cluster; the old one, also started in that mode, has none) gets the
 * marker.  At the next normal start, the postmaster finds it and:
 *  - pg_cosid/ holds files besides it (the operator copied the old data
 *    directory's): they are this server's from now on.  The slot record of
 *    the old data directory is taken as this one's (slot_manual.c), without
 *    the confirmation a copy of a running server needs, since pg_upgrade's
 *    old server stops for good; then the marker goes.
 *  - it holds nothing else: cosid_upgrade_pending.  The slot worker opens
 *    no window, and monotonic ULIDs and uuids and pg_cosid/names (every
 *    define, drop and first use of a time-based generator) refuse with
 *    55000 and the procedure; nothing writes pg_cosid/, so files copied in
 *    later are the old server's.  Segment generators (the sequences came
 *    along) and random ULIDs and uuids are not held up.
 * A data directory without the marker starts as before.
 *
 * Owns: pg_cosid/upgraded and cosid_upgrade_pending.  Must not: write the
 * other state files (their modules do).
 */
#include "upgrade.h"
#include "slot_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"

#define UPGRADED_FILE	COSID_STATE_DIR "/upgraded"
#define UPGRADED_TMP	COSID_STATE_DIR "/upgraded.tmp"
#define UPGRADE_OUTPUT_DIR "pg_upgrade_output.d"

bool		cosid_upgrade_pending = false;

void
cosid_upgrade_mark(void)
{
	static const char text[] =
		"This data directory was made by pg_upgrade. cosid issues nothing that depends on\n"
		"its state until the files of the old data directory's pg_cosid are copied here\n"
		"(docs/installation.md: Upgrading PostgreSQL).\n";
	struct stat st;

	/* the old cluster, also started in binary-upgrade mode, has none */
	if (stat(UPGRADE_OUTPUT_DIR, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	if (access(UPGRADED_FILE, F_OK) == 0)
		return;
	cosid_ensure_state_dir();
	cosid_write_durably(UPGRADED_FILE, UPGRADED_TMP, text, sizeof(text) - 1);
}

/* Whether pg_cosid/ holds any file but the marker (and unfinished writes). */
static bool
state_present(void)
{
	DIR		   *dir = AllocateDir(COSID_STATE_DIR);
	struct dirent *de;
	bool		found = false;

	while ((de = ReadDir(dir, COSID_STATE_DIR)) != NULL)
	{
		size_t		len = strlen(de->d_name);

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			strcmp(de->d_name, "upgraded") == 0 ||
			(len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0))
			continue;
		found = true;
		break;
	}
	FreeDir(dir);
	return found;
}

void
cosid_upgrade_start(void)
{
	if (access(UPGRADED_FILE, F_OK) != 0)
	{
		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not access file \"%s\": %m", UPGRADED_FILE)));
		return;
	}
	if (!state_present())
	{
		/* the slot worker says so in the log; callers get the error */
		cosid_upgrade_pending = true;
		return;
	}
	cosid_manual_take_upgraded_record();
	if (unlink(UPGRADED_FILE) != 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", UPGRADED_FILE)));
	fsync_fname(COSID_STATE_DIR, true);
	ereport(LOG,
			(errmsg("cosid takes the state copied into pg_cosid as this server's: it was upgraded by pg_upgrade")));
}

void
cosid_upgrade_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cosid's state was not carried over by pg_upgrade"),
			 errdetail("pg_upgrade does not copy pg_cosid of the old data directory, which records how far the old server's ids went. Until it is copied, this server issues no time-based ids and no monotonic ULIDs or uuids and defines no time-based generators, since they could repeat or go below earlier ids."),
			 errhint("Stop this server, copy the files in pg_cosid of the old data directory into pg_cosid of this one, and start it again (docs/installation.md: Upgrading PostgreSQL). If the old data directory has no pg_cosid, remove the file pg_cosid/upgraded instead.")));
}

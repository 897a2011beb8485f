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
 * cluster) and runs with fsync off (pg_upgrade starts only the new cluster
 * so) gets the marker.  The old server, also started in that mode (it
 * loads cosid when it preloads it), has none: it writes the manifest
 * pg_cosid/upgrade.manifest, the size and CRC of each of its state files,
 * which the operator copies with them.  At the next normal start, the
 * postmaster of the new server finds the marker and:
 *  - pg_cosid/ holds every file the manifest lists, as the old server left
 *    it (or, with no manifest, one state file at least, and slot.state when
 *    the slot is manual or Citus's): the operator copied the old data
 *    directory's, and they are this server's from now on.  The slot record
 *    of the old data directory is taken as this one's (slot_manual.c),
 *    without the confirmation a copy of a running server needs, since
 *    pg_upgrade's old server stops for good; then the manifest and the
 *    marker go (the manifest first: the record taken no longer matches it,
 *    and a crash before the marker goes finds what the manifest checked).
 *  - it holds nothing else, or less than that, or another server's file:
 *    cosid_upgrade_pending.  The slot worker opens no window, and monotonic
 *    ULIDs and uuids and pg_cosid/names (every define, drop and first use
 *    of a time-based generator) refuse with 55000, what is missing, and the
 *    procedure; nothing writes pg_cosid/, so files copied in later are the
 *    old server's.  Segment generators (the sequences came along) and
 *    random ULIDs and uuids are not held up.
 * A data directory without the marker starts as before, and removes a
 * manifest (its old server runs again, so the files it lists change).
 *
 * Owns: pg_cosid/upgraded, pg_cosid/upgrade.manifest and
 * cosid_upgrade_pending.  Must not: write the other state files (their
 * modules do).
 */
#include "upgrade.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "slot_manual.h"

#define UPGRADED_FILE	COSID_STATE_DIR "/upgraded"
#define UPGRADED_TMP	COSID_STATE_DIR "/upgraded.tmp"
#define MANIFEST_FILE	COSID_STATE_DIR "/upgrade.manifest"
#define MANIFEST_TMP	COSID_STATE_DIR "/upgrade.manifest.tmp"
#define MANIFEST_MAGIC	"cosid upgrade manifest 1"
#define UPGRADE_OUTPUT_DIR "pg_upgrade_output.d"

/* the state files of pg_cosid (their modules own them) */
static const char *const state_files[] = {"slot.state", "names", "names.next", "ulid.state", "replayed.state"};

#define N_STATE_FILES ((int) lengthof(state_files))

bool		cosid_upgrade_pending = false;

/* why cosid_upgrade_pending: what is missing or differs, or "" (nothing copied) */
static char pending_why[256] = "";

/*
 * The size and CRC-32C of pg_cosid/<name>: false when it does not exist.
 */
static bool
file_sum(const char *name, uint64 *size, pg_crc32c *crc)
{
	char		path[MAXPGPATH];
	char		buf[8192];
	int			fd;
	ssize_t		n;

	snprintf(path, sizeof(path), "%s/%s", COSID_STATE_DIR, name);
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return false;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	}
	*size = 0;
	INIT_CRC32C(*crc);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
	{
		COMP_CRC32C(*crc, buf, n);
		*size += n;
	}
	if (n < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", path)));
	FIN_CRC32C(*crc);
	CloseTransientFile(fd);
	return true;
}

/*
 * The old server (binary-upgrade mode, no pg_upgrade_output.d): record in
 * pg_cosid/upgrade.manifest which state files it holds, with their sizes
 * and CRCs, so that the new server can tell a complete copy.  None when it
 * was made by pg_upgrade itself and its own state was never copied in (it
 * has the marker): what it holds is not where its ids ended, and the new
 * server, with no manifest, refuses until a slot record is copied.
 */
static void
write_manifest(void)
{
	char		buf[1024];
	int			len;

	if (access(UPGRADED_FILE, F_OK) == 0)
	{
		if (unlink(MANIFEST_FILE) != 0 && errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not remove file \"%s\": %m", MANIFEST_FILE)));
		return;
	}
	cosid_ensure_state_dir();
	len = snprintf(buf, sizeof(buf), "%s\n", MANIFEST_MAGIC);
	for (int i = 0; i < N_STATE_FILES; i++)
	{
		uint64		size;
		pg_crc32c	crc;

		if (file_sum(state_files[i], &size, &crc))
			len += snprintf(buf + len, sizeof(buf) - len, "%08x " UINT64_FORMAT " %s\n",
							crc, size, state_files[i]);
	}
	cosid_write_durably(MANIFEST_FILE, MANIFEST_TMP, buf, len);
}

void
cosid_upgrade_mark(void)
{
	static const char text[] =
		"This data directory was made by pg_upgrade. cosid issues nothing that depends on\n"
		"its state until the files of the old data directory's pg_cosid are copied here\n"
		"(docs/installation.md: Upgrading PostgreSQL).\n";
	struct stat st;

	/*
	 * The old cluster, also started in binary-upgrade mode, has no
	 * pg_upgrade_output.d (unless an earlier pg_upgrade --retain left one),
	 * and runs with fsync on: pg_upgrade starts only the new one with
	 * fsync=off.
	 */
	if (stat(UPGRADE_OUTPUT_DIR, &st) != 0 || !S_ISDIR(st.st_mode) || enableFsync)
	{
		write_manifest();
		return;
	}
	if (access(UPGRADED_FILE, F_OK) == 0)
		return;
	cosid_ensure_state_dir();
	cosid_write_durably(UPGRADED_FILE, UPGRADED_TMP, text, sizeof(text) - 1);
}

/* Whether pg_cosid/ holds any of the state files. */
static bool
state_present(void)
{
	for (int i = 0; i < N_STATE_FILES; i++)
	{
		char		path[MAXPGPATH];

		snprintf(path, sizeof(path), "%s/%s", COSID_STATE_DIR, state_files[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Whether pg_cosid/ holds what the old server's manifest lists, unchanged;
 * false with pending_why filled in otherwise.  No manifest (the old server
 * did not load cosid 1.3 while pg_upgrade ran, or it ran since): at least
 * one state file, and slot.state when slot_record (this server's slot is
 * manual or Citus's).
 */
static bool
state_complete(bool slot_record)
{
	FILE	   *f = AllocateFile(MANIFEST_FILE, "r");
	char		line[256];
	bool		ok = true;

	if (f == NULL)
	{
		char		path[MAXPGPATH];

		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", MANIFEST_FILE)));
		if (!state_present())
			return false;
		snprintf(path, sizeof(path), "%s/slot.state", COSID_STATE_DIR);
		if (slot_record && access(path, F_OK) != 0)
		{
			snprintf(pending_why, sizeof(pending_why),
					 "slot.state is missing, which a manual slot needs");
			return false;
		}
		/* this cluster's own, from a start before pg_upgrade: not a copy */
		if (cosid_manual_record_is_own())
		{
			snprintf(pending_why, sizeof(pending_why),
					 "slot.state was written by this data directory, not copied from the old one");
			return false;
		}
		return true;
	}
	if (fgets(line, sizeof(line), f) == NULL || strcmp(line, MANIFEST_MAGIC "\n") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("file \"%s\" is not a cosid upgrade manifest", MANIFEST_FILE),
				 errdetail("The old server writes it while pg_upgrade runs; it lists the files of its pg_cosid."),
				 errhint("Copy it again from pg_cosid of the old data directory with the other files.")));
	while (ok && fgets(line, sizeof(line), f) != NULL)
	{
		unsigned int want_crc;
		uint64		want_size;
		char		name[64];
		uint64		size;
		pg_crc32c	crc;
		int			known = -1;

		if (sscanf(line, "%8x " UINT64_FORMAT " %63s", &want_crc, &want_size, name) != 3)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid line in file \"%s\": \"%s\"", MANIFEST_FILE, line),
					 errdetail("Each line after the first is the CRC, the size and the name of a file."),
					 errhint("Copy it again from pg_cosid of the old data directory with the other files.")));
		for (int i = 0; i < N_STATE_FILES; i++)
			if (strcmp(name, state_files[i]) == 0)
				known = i;
		if (known < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("file \"%s\" names \"%s\", which is not a cosid state file", MANIFEST_FILE, name),
					 errhint("Copy it again from pg_cosid of the old data directory with the other files.")));
		if (!file_sum(name, &size, &crc))
		{
			snprintf(pending_why, sizeof(pending_why), "%s is missing", name);
			ok = false;
		}
		else if (size != want_size || crc != (pg_crc32c) want_crc)
		{
			snprintf(pending_why, sizeof(pending_why), "%s is not the old data directory's", name);
			ok = false;
		}
	}
	FreeFile(f);
	return ok;
}

static void
remove_file(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", path)));
}

void
cosid_upgrade_start(bool slot_record)
{
	if (access(UPGRADED_FILE, F_OK) != 0)
	{
		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not access file \"%s\": %m", UPGRADED_FILE)));
		/* a manifest the old server wrote: it runs again, so the files change */
		if (access(MANIFEST_FILE, F_OK) == 0)
		{
			remove_file(MANIFEST_FILE);
			fsync_fname(COSID_STATE_DIR, true);
		}
		return;
	}
	if (!state_complete(slot_record))
	{
		/* the slot worker says so in the log; callers get the error */
		cosid_upgrade_pending = true;
		return;
	}

	/*
	 * The manifest goes first: the record taken below no longer matches it,
	 * and after a crash the files it checked are still there.
	 */
	remove_file(MANIFEST_FILE);
	fsync_fname(COSID_STATE_DIR, true);
	cosid_manual_take_upgraded_record();
	remove_file(UPGRADED_FILE);
	fsync_fname(COSID_STATE_DIR, true);
	ereport(LOG,
			(errmsg("cosid takes the state copied into pg_cosid as this server's: it was upgraded by pg_upgrade")));
}

const char *
cosid_upgrade_detail(void)
{
	static char buf[512];

	if (pending_why[0] == '\0')
		return "pg_upgrade does not copy pg_cosid of the old data directory, which records how far the old server's ids went.";
	snprintf(buf, sizeof(buf),
			 "pg_upgrade does not copy pg_cosid of the old data directory, which records how far the old server's ids went, and the copy here is not complete: %s.",
			 pending_why);
	return buf;
}

void
cosid_upgrade_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cosid's state was not carried over by pg_upgrade"),
			 errdetail("%s Until it is copied, this server issues no time-based ids and no monotonic ULIDs or uuids and defines no time-based generators, since they could repeat or go below earlier ids.",
					   cosid_upgrade_detail()),
			 errhint("Stop this server, copy the files in pg_cosid of the old data directory into pg_cosid of this one, and start it again (docs/installation.md: Upgrading PostgreSQL). If the old data directory has no pg_cosid, remove the file pg_cosid/upgraded instead.")));
}

/*
 * wal.c - the slot window in the WAL: a custom WAL resource manager.
 *
 * Owns: the "cosid" resource manager (COSID_RMGR_ID), its one record (a slot's
 * new window end) and pg_cosid/replayed.state, where replay keeps the highest
 * end of each slot.  Must not: decide windows (worker.c and its slot sources
 * do).
 *
 * A primary's slot worker writes every new window end to the WAL and flushes
 * it before backends may use the end.  Any row with an id of that window is
 * written to the WAL after it, so a server that replays the row (a standby,
 * crash recovery, point-in-time recovery, a base backup restored anywhere)
 * has replayed the end first: the same guarantee PostgreSQL gives sequences.
 * Replay raises the slot's end in pg_cosid/replayed.state (durably, in the
 * startup process); when recovery ends, the worker starts the window no
 * earlier than it.
 *
 * Every server that replays this WAL must load cosid (shared_preload_libraries):
 * without the resource manager, recovery stops with "resource manager with
 * ID 199 not registered".
 */
#include "wal.h"
#include "slot.h"

#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#define XLOG_COSID_WINDOW_END	0x00

#define REPLAYED_FILE	COSID_STATE_DIR "/replayed.state"
#define REPLAYED_TMP	COSID_STATE_DIR "/replayed.state.tmp"
#define REPLAYED_MAGIC	0xC051D4A5u

/* The record: a slot's window end (also the state file's entries). */
typedef struct xl_cosid_window
{
	int32		slot;
	int32		pad;
	int64		end_ms;
	char		namespace[NAMEDATALEN];
} xl_cosid_window;

typedef struct ReplayedHeader
{
	uint32		magic;
	uint32		count;
	pg_crc32c	crc;
} ReplayedHeader;

/* pg_cosid/replayed.state, cached by the process that reads or writes it */
static xl_cosid_window *replayed = NULL;
static int	nreplayed = 0;

static void
replayed_load(void)
{
	int			fd;
	ReplayedHeader h;
	Size		len;
	pg_crc32c	crc;

	if (replayed != NULL)
		return;
	replayed = MemoryContextAlloc(TopMemoryContext, sizeof(xl_cosid_window));
	nreplayed = 0;
	fd = OpenTransientFile(REPLAYED_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", REPLAYED_FILE)));
	}
	if (read(fd, &h, sizeof(h)) != sizeof(h) || h.magic != REPLAYED_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cosid file \"%s\" is damaged", REPLAYED_FILE)));
	len = mul_size(h.count, sizeof(xl_cosid_window));
	replayed = repalloc(replayed, Max(len, sizeof(xl_cosid_window)));
	if (len > 0 && read(fd, replayed, len) != (ssize_t) len)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cosid file \"%s\" is damaged", REPLAYED_FILE)));
	CloseTransientFile(fd);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, replayed, len);
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, h.crc))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cosid file \"%s\" is damaged: checksum mismatch", REPLAYED_FILE)));
	nreplayed = (int) h.count;
}

static void
replayed_write(void)
{
	ReplayedHeader h;
	Size		len = mul_size(nreplayed, sizeof(xl_cosid_window));
	char	   *buf = palloc(sizeof(h) + len);

	cosid_ensure_state_dir();
	h.magic = REPLAYED_MAGIC;
	h.count = (uint32) nreplayed;
	INIT_CRC32C(h.crc);
	COMP_CRC32C(h.crc, replayed, len);
	FIN_CRC32C(h.crc);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), replayed, len);
	cosid_write_durably(REPLAYED_FILE, REPLAYED_TMP, buf, sizeof(h) + len);
	pfree(buf);
}

/* Raise the end replayed for a slot (startup process). */
static void
replayed_raise(const xl_cosid_window *rec)
{
	replayed_load();
	for (int i = 0; i < nreplayed; i++)
	{
		if (replayed[i].slot == rec->slot &&
			strncmp(replayed[i].namespace, rec->namespace, NAMEDATALEN) == 0)
		{
			if (rec->end_ms <= replayed[i].end_ms)
				return;
			replayed[i].end_ms = rec->end_ms;
			replayed_write();
			return;
		}
	}
	replayed = repalloc(replayed, sizeof(xl_cosid_window) * (nreplayed + 1));
	replayed[nreplayed++] = *rec;
	replayed_write();
}

int64
cosid_wal_replayed_end(int slot, const char *namespace)
{
	int64		end = 0;

	/* read afresh: the startup process wrote it */
	if (replayed != NULL)
		pfree(replayed);
	replayed = NULL;
	replayed_load();
	for (int i = 0; i < nreplayed; i++)
		if ((slot < 0 || replayed[i].slot == slot) &&
			strncmp(replayed[i].namespace, namespace, NAMEDATALEN) == 0)
			end = Max(end, replayed[i].end_ms);
	return end;
}

void
cosid_wal_log_window(int slot, int64 end_ms)
{
	xl_cosid_window rec;
	XLogRecPtr	lsn;

	memset(&rec, 0, sizeof(rec));
	rec.slot = slot;
	rec.end_ms = end_ms;
	strlcpy(rec.namespace, cosid_namespace, NAMEDATALEN);
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	lsn = XLogInsert(COSID_RMGR_ID, XLOG_COSID_WINDOW_END);
	XLogFlush(lsn);
}

static void
cosid_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_cosid_window rec;

	if (info != XLOG_COSID_WINDOW_END)
		elog(PANIC, "cosid_redo: unknown op code %u", info);
	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	rec.namespace[NAMEDATALEN - 1] = '\0';
	replayed_raise(&rec);
}

static void
cosid_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_COSID_WINDOW_END)
	{
		xl_cosid_window rec;

		memcpy(&rec, XLogRecGetData(record), sizeof(rec));
		appendStringInfo(buf, "slot %d namespace \"%.*s\" window end " INT64_FORMAT,
						 rec.slot, NAMEDATALEN - 1, rec.namespace, rec.end_ms);
	}
}

static const char *
cosid_identify(uint8 info)
{
	return (info & ~XLR_INFO_MASK) == XLOG_COSID_WINDOW_END ? "WINDOW_END" : NULL;
}

static RmgrData cosid_rmgr = {
	.rm_name = "cosid",
	.rm_redo = cosid_redo,
	.rm_desc = cosid_desc,
	.rm_identify = cosid_identify,
};

void
cosid_wal_init(void)
{
	RegisterCustomRmgr(COSID_RMGR_ID, &cosid_rmgr);
}

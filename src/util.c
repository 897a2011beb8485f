/*
 * util.c - small services for every PostgreSQL-side module (see util.h).
 *
 * Owns: the clock reads and waits, time conversions, acting as another role,
 * durable files, the invalid-key error.  Must not: include any other cosid
 * module's header; everything above it in the module graph may call it.
 */
#include "util.h"

#include <time.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "catalog/pg_sequence.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#define UNIX_TO_PG_USECS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

bool		cosid_preloaded = false;


void
cosid_invalid_key(bool what_list, const char *path, const char *fmt,...)
{
	char		msg[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 what_list ? errmsg("invalid codec list") : errmsg("invalid generator definition"),
			 errdetail("At %s: %s.", path, msg)));
	pg_unreachable();
}

void
cosid_begin_as_role(Oid role, CosidAsRole *as)
{
	GetUserIdAndSecContext(&as->save_uid, &as->save_ctx);
	SetUserIdAndSecContext(role, as->save_ctx | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	as->save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
}

void
cosid_end_as_role(CosidAsRole *as)
{
	AtEOXact_GUC(false, as->save_nestlevel);
	SetUserIdAndSecContext(as->save_uid, as->save_ctx);
}

/* the locks issuing backends wait on (this process's copy of the list made at start-up) */
#define MAX_ISSUER_LOCKS 8
static LWLock *issuer_locks[MAX_ISSUER_LOCKS];
static const char *issuer_lock_names[MAX_ISSUER_LOCKS];
static int	n_issuer_locks = 0;

void
cosid_issuer_lock(LWLock *lock, const char *name)
{
	for (int i = 0; i < n_issuer_locks; i++)
		if (issuer_locks[i] == lock)
			return;
	if (n_issuer_locks == MAX_ISSUER_LOCKS)
		elog(ERROR, "too many cosid issuer locks");
	issuer_locks[n_issuer_locks] = lock;
	issuer_lock_names[n_issuer_locks++] = name;
}

void
cosid_check_lock_rules(const char *what)
{
	for (int i = 0; i < n_issuer_locks; i++)
		if (LWLockHeldByMe(issuer_locks[i]))
			elog(ERROR, "cosid made %s while holding %s, which issuing backends wait on",
				 what, issuer_lock_names[i]);
}

/* Write len bytes to fd (opened on path) and fsync it; ERROR on failure. */
static void
write_and_sync(int fd, const char *path, const void *data, size_t len)
{
	cosid_check_lock_rules("an fsync");
	errno = 0;
	if (write(fd, data, len) != (ssize_t) len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", path)));
	}
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", path)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", path)));
}

void
cosid_rename_durably(const char *from, const char *to)
{
	cosid_check_lock_rules("an fsync");
	(void) durable_rename(from, to, data_sync_elevel(ERROR));
}

void
cosid_write_durably(const char *path, const char *tmp, const void *data, size_t len)
{
	int			fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	write_and_sync(fd, tmp, data, len);
	cosid_rename_durably(tmp, path);
}

void
cosid_append_durably(const char *path, const void *data, size_t len)
{
	int			fd = OpenTransientFile(path, O_WRONLY | O_APPEND | PG_BINARY);

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	write_and_sync(fd, path, data, len);
}

Oid
cosid_rel_owner(Oid relid)
{
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
	ReleaseSysCache(tp);
	return owner;
}

/*
 * A table not as cosid made it (why): soft, COSID_ROW_UNREAD with its locks
 * released; else an internal error.
 */
static CosidRowFound
row_unread(const CosidRowRead *read, Relation rel, Relation index, const char *why)
{
	if (!read->soft)
		elog(ERROR, "cosid.%s is not as cosid made it: %s", read->table, why);
	if (index != NULL)
		index_close(index, AccessShareLock);
	table_close(rel, AccessShareLock);
	return COSID_ROW_UNREAD;
}

CosidRowFound
cosid_row_by_key(const CosidRowRead *read, const char *key, Datum *values, bool *nulls,
				 bool *later)
{
	Relation	rel;
	Relation	index;
	TupleDesc	desc;
	AttrNumber	key_attno = InvalidAttrNumber;
	AttrNumber *attnos;
	int			nfirst = read->ncolumns - read->nlater;
	int			nlater = 0;
	Oid			pk;
	ScanKeyData skey;
	SysScanDesc scan;
	Snapshot	snapshot;
	HeapTuple	tup;
	CosidRowFound found = COSID_ROW_NONE;

	Assert(read->nlater >= 0 && read->nlater <= read->ncolumns);
	/* the scan would warn, or read the heap: SQL does neither */
	if (read->soft && IgnoreSystemIndexes)
		return COSID_ROW_UNREAD;
	rel = table_openrv(makeRangeVar("cosid", (char *) read->table, -1), AccessShareLock);
	desc = RelationGetDescr(rel);

	/* the columns by name and type */
	attnos = palloc0(sizeof(AttrNumber) * (read->ncolumns + 1));
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (att->attisdropped)
			continue;
		if (strcmp(NameStr(att->attname), read->key_column) == 0 && att->atttypid == TEXTOID)
			key_attno = att->attnum;
		for (int i = 0; i < read->ncolumns; i++)
			if (strcmp(NameStr(att->attname), read->columns[i]) == 0 &&
				att->atttypid == read->types[i])
				attnos[i] = att->attnum;
	}
	for (int i = 0; i < read->ncolumns; i++)
		if (attnos[i] != InvalidAttrNumber)
			nlater += i < nfirst ? 0 : 1;
		else if (i < nfirst)
			return row_unread(read, rel, NULL,
							  psprintf("no column \"%s\" of type %s", read->columns[i],
									   format_type_be(read->types[i])));
	if (nlater != 0 && nlater != read->nlater)
		return row_unread(read, rel, NULL,
						  psprintf("some of the columns from \"%s\" on, not all", read->columns[nfirst]));

	/* the primary key: the key column alone, as text's = orders it */
	pk = cosid_rel_primary_key(rel);
	if (key_attno == InvalidAttrNumber || !OidIsValid(pk))
		return row_unread(read, rel, NULL,
						  psprintf("no primary key, or no text column \"%s\"", read->key_column));
	index = index_open(pk, AccessShareLock);
	if (IndexRelationGetNumberOfKeyAttributes(index) != 1 ||
		index->rd_index->indkey.values[0] != key_attno ||
		index->rd_opfamily[0] != TEXT_BTREE_FAM_OID)
		return row_unread(read, rel, index,
						  psprintf("its primary key is not its text column \"%s\" alone, in text's btree operator family",
								   read->key_column));

	/*
	 * As SQL would have read: fresh, a snapshot taken now (a parallel
	 * worker's: its leader's); else the active one.
	 */
	if ((read->fresh && !IsInParallelMode()) || !ActiveSnapshotSet())
		snapshot = RegisterSnapshot(GetLatestSnapshot());
	else
		snapshot = RegisterSnapshot(GetActiveSnapshot());
	/* the index's collation, which orders it (a deterministic one: bytes) */
	ScanKeyEntryInitialize(&skey, 0, key_attno, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[0], F_TEXTEQ, CStringGetTextDatum(key));
	/* by the index, but in a session that ignores system indexes (not soft) */
	scan = systable_beginscan(rel, RelationGetRelid(index), true, snapshot, 1, &skey);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		for (int i = 0; i < read->ncolumns; i++)
		{
			Form_pg_attribute att;

			if (attnos[i] == InvalidAttrNumber)
			{
				values[i] = (Datum) 0;
				nulls[i] = true;
				continue;
			}
			att = TupleDescAttr(desc, attnos[i] - 1);
			values[i] = heap_getattr(tup, attnos[i], desc, &nulls[i]);
			/* a copy, detoasted with the snapshot it was read with */
			if (!nulls[i] && att->attlen == -1)
				values[i] = PointerGetDatum(PG_DETOAST_DATUM_COPY(values[i]));
			else if (!nulls[i])
				values[i] = datumCopy(values[i], att->attbyval, att->attlen);
		}
		found = COSID_ROW_FOUND;
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	/* held until the transaction ends, as a statement's */
	index_close(index, NoLock);
	table_close(rel, NoLock);
	pfree(attnos);
	if (later != NULL)
		*later = nlater != 0;
	return found;
}

int64
cosid_sequence_increment(Oid seqid)
{
	HeapTuple	tp = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	int64		inc;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for sequence %u", seqid);
	inc = ((Form_pg_sequence) GETSTRUCT(tp))->seqincrement;
	ReleaseSysCache(tp);
	return inc;
}

void
cosid_require_preload(const char *what)
{
	if (!cosid_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs cosid to be loaded at server start", what),
				 errhint("Add cosid to shared_preload_libraries in postgresql.conf and restart the server.")));
}

uint64
cosid_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64) ts.tv_sec * 1000 + (uint64) ts.tv_nsec / 1000000;
}

int64
cosid_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + (int64) ts.tv_nsec / 1000000;
}

int
cosid_backoff_errdetail(CosidBackoffStep step)
{
	if (step.repeats == 0)
		return errdetail("The next try is in %d ms.", step.delay_ms);
	return errdetail_plural("%u more failure like it since the last report was not logged; the next try is in %d ms.",
							"%u more failures like it since the last report were not logged; the next try is in %d ms.",
							step.repeats, step.repeats, step.delay_ms);
}

/* The wait events' names: the one list of them (docs/operations.md has their table). */
static const char *const wait_names[COSID_WAIT_COUNT] = {
	[COSID_WAIT_WINDOW] = "CosidWindow",
	[COSID_WAIT_CLOCK_BEHIND] = "CosidClockBehind",
	[COSID_WAIT_SEQUENCE] = "CosidSequenceExhausted",
	[COSID_WAIT_SEGMENT_FETCH] = "CosidSegmentFetch",
	[COSID_WAIT_LEASE_STORE] = "CosidLeaseStore",
	[COSID_WAIT_CITUS_READER] = "CosidCitusReaderMain",
	[COSID_WAIT_SLOT_WORKER] = "CosidSlotWorkerMain",
	[COSID_WAIT_RECOVERY_END] = "CosidRecoveryEnd",
};

/*
 * The wait event of each wait in this process (0: not known yet; no wait
 * event is 0).  Preloaded, the postmaster registers them all as it makes the
 * shared memory (cosid_wait_events_init) and its children inherit them;
 * loaded later, a process registers each at its first use, which takes an
 * LWLock: the callers wait outside locks.
 */
static uint32 wait_events[COSID_WAIT_COUNT];

void
cosid_wait_events_init(void)
{
	MemoryContext mcxt = CurrentMemoryContext;

	/* after a crash the shared memory, and its table of events, is new */
	memset(wait_events, 0, sizeof(wait_events));
	PG_TRY();
	{
		for (int i = 0; i < COSID_WAIT_COUNT; i++)
			wait_events[i] = cosid_wait_event_new(wait_names[i]);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		/*
		 * The cluster's table of custom wait events is full (128 for every
		 * extension): no wait of cosid may fail on it later, so they show as
		 * the generic event.  The postmaster holds no lock here but, maybe,
		 * the registration's.
		 */
		MemoryContextSwitchTo(mcxt);
		edata = CopyErrorData();
		FlushErrorState();
		LWLockReleaseAll();
		ereport(WARNING,
				(errmsg("cosid could not register its wait events: %s", edata->message),
				 errdetail("Its waits show as the wait event Extension.")));
		FreeErrorData(edata);
		for (int i = 0; i < COSID_WAIT_COUNT; i++)
			if (wait_events[i] == 0)
				wait_events[i] = PG_WAIT_EXTENSION;
	}
	PG_END_TRY();
}

uint32
cosid_wait_event(CosidWait wait)
{
	Assert(wait < COSID_WAIT_COUNT);
	if (unlikely(wait_events[wait] == 0))
		wait_events[wait] = cosid_wait_event_new(wait_names[wait]);
	return wait_events[wait];
}

void
cosid_sleep_ms(int ms, CosidWait wait)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, cosid_wait_event(wait));
	ResetLatch(MyLatch);
}

void
cosid_wait_1ms(CosidWait wait)
{
	cosid_sleep_ms(1, wait);
	CHECK_FOR_INTERRUPTS();
}

void
cosid_wait_until_ms(int64 target_ms, CosidWait wait)
{
	for (;;)
	{
		int64		now = (int64) cosid_now_ms();

		CHECK_FOR_INTERRUPTS();
		if (now >= target_ms)
			return;
		if (target_ms - now <= 2)
		{
			/* under two milliseconds: a latch timeout would overshoot */
			pg_spin_delay();
			continue;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) (target_ms - now - 1), cosid_wait_event(wait));
		ResetLatch(MyLatch);
	}
}

TimestampTz
cosid_ms_to_timestamptz(int64 ms)
{
	return (TimestampTz) (ms * 1000 - UNIX_TO_PG_USECS);
}

int64
cosid_timestamptz_to_ms(TimestampTz ts)
{
	int64		us = ts + UNIX_TO_PG_USECS;

	return us / 1000 - (us % 1000 < 0 ? 1 : 0);
}

const char *
cosid_ms_text(int64 ms)
{
	return timestamptz_to_str(cosid_ms_to_timestamptz(ms));
}

void
cosid_ensure_state_dir(void)
{
	if (MakePGDirectory(COSID_STATE_DIR) == 0)
		fsync_fname(".", true);
	else if (errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", COSID_STATE_DIR)));
}

void *
cosid_core_alloc(void *ctx, size_t size)
{
	return MemoryContextAlloc((MemoryContext) ctx, size);
}

/*
 * slot_citus.c - the slot from Citus (cosid.slot = 'citus'): a slot source.
 *
 * The slot is the node's Citus group id, read from pg_dist_local_group of
 * the database cosid.citus_database.  Citus gives every primary node a group
 * id of its own: the coordinator's is 0, a worker's is taken from the
 * sequence pg_dist_groupid_seq by citus_add_node (GetNextGroupId in Citus's
 * metadata/node_metadata.c, which also refuses a second primary in a
 * group), so a group id from that sequence is never given again; only the
 * operator gives one to another server (citus_update_node keeps it for the
 * replacing server; citus_add_node takes an explicit groupid), and must stop
 * its old holder first (docs/citus.md).  The window's end is kept as the manual
 * slot's (pg_cosid/slot.state and the WAL, slot_manual.c), so a restart
 * does not issue again, a copy of a server is caught, and a promoted
 * standby continues its primary's window.
 *
 * The slot worker holds no database connection (it starts with the
 * postmaster and runs on a standby); a second background worker, the
 * reader, connects to cosid.citus_database once recovery is over, reads the
 * group id every second (C catalog scans, no SQL text) and publishes it in
 * shared memory, waking the slot worker when it changes.  The slot worker
 * takes the published group id as its slot only when it is sure of it:
 *
 *  - a group id above 2^cosid.machine_bits - 1 is refused;
 *  - group id 0 is the coordinator's, but also that of every node not yet
 *    added to a cluster (pg_dist_local_group starts with 0: Citus's
 *    citus--8.0-1.sql) and of a worker removed by citus_remove_node (which
 *    sets the removed node's group id to 0: RemoveNodeFromCluster), whose
 *    copy of pg_dist_node still lists the coordinator.  So 0 is taken only
 *    when pg_dist_node lists a primary in group 0 (citus_set_coordinator_host
 *    ran, or Citus added the coordinator itself) and this data directory
 *    never held another Citus group id (its record says which it held
 *    last): a worker that was removed holds no slot until it is added again.
 *
 * Each turn the slot worker compares its slot with the group id last read:
 * a change (the node was removed, or removed and added again) closes the
 * window at once (COSID_RECORD_LOST) and the next turn takes the new one.
 * While the group id was not read for a while (the reader cannot connect,
 * or is restarting), the window is not extended, so no id is issued under a
 * group id that may no longer be this node's.
 *
 * Owns: the reader, and what it and the source publish in shared memory
 * (CitusSlotShared).  Must not: touch the window (the worker does), write
 * Citus's catalogs, or build SQL text.
 */
#include "slot_citus.h"
#include "slot.h"
#include "slot_manual.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/* How often the reader reads the group id (ms). */
#define READ_INTERVAL_MS	1000

/* A group id read longer ago than this is not trusted to extend a window. */
#define READ_FRESH_MS		10000

typedef enum CitusRead
{
	CITUS_NOT_READ = 0,			/* the reader has not read yet */
	CITUS_READ_OK,				/* group and coordinator_listed are valid */
	CITUS_READ_NO_CITUS,		/* no Citus in cosid.citus_database */
	CITUS_READ_NO_ROW			/* pg_dist_local_group has no single row */
} CitusRead;

typedef struct CitusSlotShared
{
	slock_t		lock;
	/* written by the reader */
	CitusRead	read;
	int32		group;
	bool		coordinator_listed; /* pg_dist_node has a primary in group 0 */
	int64		read_ms;		/* when the reader last read */
	/* written by the slot worker */
	bool		refused;		/* it holds no slot, and knows why */
	char		why[256];		/* why it holds no slot or cannot extend */
} CitusSlotShared;

static CitusSlotShared *citus_shared = NULL;

/* the slot worker's own state */
static int	held = -1;			/* the group id held as the slot */

Size
cosid_citus_slot_shmem_size(void)
{
	return MAXALIGN(sizeof(CitusSlotShared));
}

/* Called under AddinShmemInitLock. */
void
cosid_citus_slot_shmem_init(void)
{
	bool		found;

	citus_shared = ShmemInitStruct("cosid citus slot", sizeof(CitusSlotShared), &found);
	if (!found)
	{
		memset(citus_shared, 0, sizeof(CitusSlotShared));
		SpinLockInit(&citus_shared->lock);
		citus_shared->group = -1;
	}
}

bool
cosid_citus_slot_refused(char *why, size_t len)
{
	bool		refused;

	if (!cosid_citus_slot_mode() || citus_shared == NULL)
	{
		if (why != NULL && len > 0)
			why[0] = '\0';
		return false;
	}
	SpinLockAcquire(&citus_shared->lock);
	refused = citus_shared->refused;
	if (why != NULL)
		strlcpy(why, citus_shared->why, len);
	SpinLockRelease(&citus_shared->lock);
	return refused;
}

/* ---------- the reader ---------- */

void
cosid_register_citus_reader(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* the slot worker opens no window before recovery is over either */
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "cosid");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "cosid_citus_reader_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "cosid citus group reader");
	snprintf(worker.bgw_type, BGW_MAXLEN, "cosid citus group reader");
	RegisterBackgroundWorker(&worker);
}

/* Whether pg_dist_node lists a primary node in group 0 (the coordinator). */
static bool
coordinator_listed(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	AttrNumber	group_att = InvalidAttrNumber;
	AttrNumber	role_att = InvalidAttrNumber;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		listed = false;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (strcmp(NameStr(att->attname), "groupid") == 0 && att->atttypid == INT4OID)
			group_att = att->attnum;
		else if (strcmp(NameStr(att->attname), "noderole") == 0)
			role_att = att->attnum;
	}
	if (group_att == InvalidAttrNumber || role_att == InvalidAttrNumber)
	{
		table_close(rel, AccessShareLock);
		return false;
	}
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (!listed && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		group = heap_getattr(tup, group_att, desc, &isnull);
		Datum		role;
		HeapTuple	enumtup;

		if (isnull || DatumGetInt32(group) != 0)
			continue;
		role = heap_getattr(tup, role_att, desc, &isnull);
		if (isnull)
			continue;
		/* noderole is Citus's enum: its label */
		enumtup = SearchSysCache1(ENUMOID, role);
		if (HeapTupleIsValid(enumtup))
		{
			listed = strcmp(NameStr(((Form_pg_enum) GETSTRUCT(enumtup))->enumlabel), "primary") == 0;
			ReleaseSysCache(enumtup);
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return listed;
}

/* Read this node's group id from Citus's catalogs (in a transaction). */
static CitusRead
read_catalogs(int32 *group, bool *listed)
{
	Oid			local_relid;
	Oid			node_relid;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	int			rows = 0;
	bool		isnull = true;

	if (!OidIsValid(get_extension_oid("citus", true)))
		return CITUS_READ_NO_CITUS;
	local_relid = get_relname_relid("pg_dist_local_group", PG_CATALOG_NAMESPACE);
	node_relid = get_relname_relid("pg_dist_node", PG_CATALOG_NAMESPACE);
	if (!OidIsValid(local_relid) || !OidIsValid(node_relid))
		return CITUS_READ_NO_CITUS;

	rel = table_open(local_relid, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Datum		d = heap_getattr(tup, 1, RelationGetDescr(rel), &isnull);

		if (!isnull && TupleDescAttr(RelationGetDescr(rel), 0)->atttypid == INT4OID)
			*group = DatumGetInt32(d);
		else
			isnull = true;
		rows++;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	/* Citus keeps one row; none while a pg_upgrade moves its metadata */
	if (rows != 1 || isnull)
		return CITUS_READ_NO_ROW;
	*listed = coordinator_listed(node_relid);
	return CITUS_READ_OK;
}

/* One reading, published; the slot worker is woken when it changed. */
static void
read_and_publish(void)
{
	static CitusRead said = CITUS_NOT_READ;
	int32		group = -1;
	bool		listed = false;
	CitusRead	read;
	bool		changed;
	Latch	   *latch;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "reading this node's Citus group id");
	read = read_catalogs(&group, &listed);
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);

	SpinLockAcquire(&citus_shared->lock);
	changed = citus_shared->read != read || citus_shared->group != group ||
		citus_shared->coordinator_listed != listed;
	citus_shared->read = read;
	citus_shared->group = group;
	citus_shared->coordinator_listed = listed;
	citus_shared->read_ms = (int64) cosid_now_ms();
	SpinLockRelease(&citus_shared->lock);
	cosid_window_publish_citus_group(read == CITUS_READ_OK ? group : -1);

	if (read != said)
	{
		if (read == CITUS_READ_NO_CITUS)
			ereport(WARNING,
					(errmsg("cosid.slot = 'citus', but Citus is not installed in database \"%s\"",
							cosid_citus_database),
					 errdetail("This node's slot is its Citus group id, read from pg_catalog.pg_dist_local_group of database cosid.citus_database; it holds no slot and issues no time-based ids."),
					 errhint("Run CREATE EXTENSION citus in that database, or set cosid.citus_database to the database in which Citus is installed.")));
		else if (read == CITUS_READ_NO_ROW)
			ereport(WARNING,
					(errmsg("pg_catalog.pg_dist_local_group of database \"%s\" does not hold one group id",
							cosid_citus_database),
					 errdetail("Citus keeps this node's group id there; it holds no row while Citus's metadata is moved by a pg_upgrade.")));
		said = read;
	}
	latch = cosid_window->worker_latch;
	if (changed && latch != NULL)
		SetLatch(latch);
}

void
cosid_citus_reader_main(Datum arg)
{
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(cosid_citus_database, NULL, 0);
	pgstat_report_appname("cosid citus group reader");

	while (!ShutdownRequestPending)
	{
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		read_and_publish();
		cosid_sleep_ms(READ_INTERVAL_MS, COSID_WAIT_CITUS_READER);
		CHECK_FOR_INTERRUPTS();
	}
	/* exit code 1: restarted when terminated (the postmaster shutting down does not) */
	proc_exit(1);
}

/* ---------- the source ---------- */

typedef struct CitusReading
{
	CitusRead	read;
	int32		group;
	bool		coordinator_listed;
	int64		age_ms;			/* since the reader read */
} CitusReading;

static CitusReading
reading(void)
{
	CitusReading r;

	SpinLockAcquire(&citus_shared->lock);
	r.read = citus_shared->read;
	r.group = citus_shared->group;
	r.coordinator_listed = citus_shared->coordinator_listed;
	r.age_ms = (int64) cosid_now_ms() - citus_shared->read_ms;
	SpinLockRelease(&citus_shared->lock);
	return r;
}

/*
 * Publish why this node holds no slot (refused) or cannot extend its window
 * now, and log it when it is new.  An empty text: all is well.
 */
static void
set_why(bool refused, const char *why, bool log)
{
	static char logged[256] = "";

	SpinLockAcquire(&citus_shared->lock);
	citus_shared->refused = refused;
	strlcpy(citus_shared->why, why, sizeof(citus_shared->why));
	SpinLockRelease(&citus_shared->lock);
	if (log && why[0] != '\0' && strcmp(why, logged) != 0)
		ereport(LOG,
				(errmsg("cosid slot worker holds no slot from Citus: %s", why)));
	strlcpy(logged, why, sizeof(logged));
}

static void
citus_start(void)
{
	cosid_manual_source.start();
	ereport(LOG,
			(errmsg("cosid slot worker takes this node's Citus group id in database \"%s\" as its slot",
					cosid_citus_database)));
}

static bool
citus_poll(void)
{
	return true;
}

/*
 * Whether the reading is a group id this node may hold as its slot now;
 * otherwise why not, in why.
 */
static bool
acceptable(const CitusReading *r, char *why, size_t len)
{
	int			before;

	switch (r->read)
	{
		case CITUS_NOT_READ:
			snprintf(why, len, "its Citus group id was not read from database \"%s\" yet",
					 cosid_citus_database);
			return false;
		case CITUS_READ_NO_CITUS:
			snprintf(why, len, "Citus is not installed in database \"%s\" (cosid.citus_database)",
					 cosid_citus_database);
			return false;
		case CITUS_READ_NO_ROW:
			snprintf(why, len, "pg_dist_local_group of database \"%s\" holds no group id",
					 cosid_citus_database);
			return false;
		case CITUS_READ_OK:
			break;
	}
	if (r->age_ms > READ_FRESH_MS)
	{
		snprintf(why, len, "its Citus group id was last read from database \"%s\" " INT64_FORMAT " ms ago",
				 cosid_citus_database, r->age_ms);
		return false;
	}
	if (r->group < 0 || (int64) r->group >= (INT64CONST(1) << cosid_machine_bits))
	{
		snprintf(why, len, "its Citus group id %d does not fit cosid.machine_bits = %d (slots 0 to %lld)",
				 r->group, cosid_machine_bits,
				 (long long) ((INT64CONST(1) << cosid_machine_bits) - 1));
		return false;
	}
	if (r->group != 0)
		return true;
	if (!r->coordinator_listed)
	{
		snprintf(why, len, "its Citus group id is 0, and pg_dist_node of database \"%s\" lists no coordinator: a node not yet added with citus_add_node has group id 0 too",
				 cosid_citus_database);
		return false;
	}
	before = cosid_manual_recorded_citus_group();
	if (before > 0)
	{
		snprintf(why, len, "its Citus group id is 0, the coordinator's, but it held group id %d before: citus_remove_node sets a removed worker's group id to 0",
				 before);
		return false;
	}
	return true;
}

static bool
citus_acquire(int *slot, int64 *start_ms)
{
	CitusReading r = reading();
	char		why[256];

	if (!acceptable(&r, why, sizeof(why)))
	{
		set_why(r.read != CITUS_NOT_READ, why, r.read != CITUS_NOT_READ);
		return false;
	}
	set_why(false, "", false);
	if (!cosid_manual_take(r.group, true, start_ms))
		return false;
	*slot = held = r.group;
	if (*start_ms > 0)
		ereport(LOG,
				(errmsg("cosid slot worker holds slot %d, this node's Citus group id in database \"%s\"; its window starts at %s",
						held, cosid_citus_database, cosid_ms_text(*start_ms))));
	else
		ereport(LOG,
				(errmsg("cosid slot worker holds slot %d, this node's Citus group id in database \"%s\"",
						held, cosid_citus_database)));
	return true;
}

static int
citus_retry_ms(void)
{
	return 250;
}

static void
citus_opened(int slot, int64 start_ms, int64 now_ms)
{
}

/* A changed group id is noticed at once, even while the window is idle. */
static bool
citus_renewal_due(int64 now_ms)
{
	CitusReading r = reading();

	return r.read != CITUS_READ_OK || r.group != held || r.age_ms > READ_FRESH_MS;
}

static CosidRecordResult
citus_record_end(int slot, int64 end_ms, int64 now_ms)
{
	CitusReading r = reading();
	char		why[256];

	if (r.read == CITUS_READ_OK && r.group != slot)
	{
		ereport(LOG,
				(errmsg("this node's Citus group id changed from %d to %d: cosid slot worker closes the window of slot %d",
						slot, r.group, slot)));
		held = -1;
		return COSID_RECORD_LOST;
	}
	if (r.read == CITUS_READ_NO_CITUS || r.read == CITUS_READ_NO_ROW)
	{
		(void) acceptable(&r, why, sizeof(why));
		ereport(LOG,
				(errmsg("cosid slot worker closes the window of slot %d: %s", slot, why)));
		held = -1;
		return COSID_RECORD_LOST;
	}
	if (r.age_ms > READ_FRESH_MS)
	{
		/* not sure the group id is still ours: let the window lapse */
		(void) acceptable(&r, why, sizeof(why));
		set_why(false, why, true);
		return COSID_RECORD_RETRY;
	}
	set_why(false, "", false);
	/* an end recorded at a renewal only: nothing new to write */
	return cosid_manual_source.record_end(slot, end_ms, now_ms);
}

static void
citus_release(int slot, int64 next_start_ms, int64 end_ms)
{
	cosid_manual_source.release(slot, next_start_ms, end_ms);
}

const CosidSlotSource cosid_citus_source = {
	.primary_only = true,
	.start = citus_start,
	.poll = citus_poll,
	.acquire = citus_acquire,
	.retry_ms = citus_retry_ms,
	.opened = citus_opened,
	.renewal_due = citus_renewal_due,
	.record_end = citus_record_end,
	.release = citus_release,
};

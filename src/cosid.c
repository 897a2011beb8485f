/*
 * cosid.c - module entry point: settings, shared memory, small helpers.
 *
 * The locking rules for shared memory are stated in cosid.h.
 */
#include "cosid.h"

#include <time.h>
#include <unistd.h>

#include "datatype/timestamp.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "catalog/pg_class.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

int			cosid_machine_bits = 10;
char	   *cosid_slot_setting = NULL;
char	   *cosid_namespace = NULL;
int			cosid_max_generators = 1024;
char	   *cosid_debug_now = NULL;
char	   *cosid_lease_store = NULL;
int			cosid_lease_ttl = 60;
char	   *cosid_instance_id = NULL;
bool		cosid_promote_above_replayed = false;

CosidShared *cosid_shared = NULL;
HTAB	   *cosid_gen_hash = NULL;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;

#define UNIX_TO_PG_USECS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/* ---------- settings ---------- */

static bool
check_slot(char **newval, void **extra, GucSource source)
{
	char	   *end;
	long		v;

	if (pg_strcasecmp(*newval, "lease") == 0)
		return true;
	errno = 0;
	v = strtol(*newval, &end, 10);
	if (*newval[0] == '\0' || *end != '\0' || errno != 0 || v < 0 || v > INT_MAX)
	{
		GUC_check_errdetail("cosid.slot is a slot number (0 or more) or \"lease\".");
		return false;
	}
	return true;
}

static void
define_settings(void)
{
	DefineCustomIntVariable("cosid.machine_bits",
							"Bits of this server's slot: slots are 0 to 2^machine_bits - 1.",
							"Every time-based generator's layout needs at least this many node bits.",
							&cosid_machine_bits,
							10, 0, 31,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("cosid.slot",
							   "This server's slot: a number (a manual slot) or \"lease\".",
							   "A manual slot must differ from every other server's that shares the id space.",
							   &cosid_slot_setting,
							   "0",
							   PGC_POSTMASTER, 0,
							   check_slot, NULL, NULL);
	DefineCustomStringVariable("cosid.namespace",
							   "Slots are unique within a namespace.",
							   NULL,
							   &cosid_namespace,
							   "default",
							   PGC_POSTMASTER, 0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("cosid.max_generators",
							"Generators (across all databases) whose state shared memory can hold.",
							NULL,
							&cosid_max_generators,
							1024, 16, 1000000,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("cosid.lease_store",
							   "libpq connection string of the PostgreSQL that keeps the slot leases (cosid.slot = 'lease').",
							   NULL,
							   &cosid_lease_store,
							   "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("cosid.lease_ttl",
							"How long a slot lease holds without renewal.",
							"Another server may take the slot over after that.",
							&cosid_lease_ttl,
							60, 2, 86400,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomStringVariable("cosid.instance_id",
							   "This server's name in the lease store.",
							   "Empty (the default): the system identifier, host name and port.",
							   &cosid_instance_id,
							   "",
							   PGC_POSTMASTER, 0,
							   NULL, NULL, NULL);
	DefineCustomBoolVariable("cosid.promote_above_replayed",
							 "Lease mode: when promoted, start the window above the window ends replayed from the WAL.",
							 "The new primary's ids then sort above the old primary's, at the cost of waiting for a clock that is behind.",
							 &cosid_promote_above_replayed,
							 false,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomStringVariable("cosid.debug_now",
							   "For tests: the time segment generators take their period from.",
							   "Empty (the default) means the clock.",
							   &cosid_debug_now,
							   "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);
	MarkGUCPrefixReserved("cosid");
}

/* ---------- shared memory ---------- */

static Size
cosid_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(CosidShared)), cosid_genstate_shmem_size());
}

static void
cosid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(cosid_shmem_size());
	RequestNamedLWLockTranche("cosid", 1);
}

static void
cosid_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	cosid_shared = ShmemInitStruct("cosid", sizeof(CosidShared), &found);
	if (!found)
	{
		memset(cosid_shared, 0, sizeof(CosidShared));
		SpinLockInit(&cosid_shared->ulid_lock);
		pg_atomic_init_u64(&cosid_shared->window_start_ms, 0);
		pg_atomic_init_u64(&cosid_shared->window_end_ms, 0);
		pg_atomic_init_u32(&cosid_shared->slot_state, COSID_SLOT_STARTING);
		pg_atomic_init_u64(&cosid_shared->window_renewals, 0);
		pg_atomic_init_u32(&cosid_shared->window_wanted, 0);
		cosid_shared->worker_latch = NULL;
		pg_atomic_init_u64(&cosid_shared->config_generation, 1);
		cosid_shared->slot = -1;
		cosid_shared->gen_hash_lock = &(GetNamedLWLockTranche("cosid"))->lock;
		SpinLockInit(&cosid_shared->lease_lock);
		pg_atomic_init_u64(&cosid_shared->renewal_failures, 0);
		pg_atomic_init_u64(&cosid_shared->retired_ms, 0);
	}
	cosid_genstate_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Loaded after start-up, cosid cannot define settings fixed at start-up;
 * it reads what postgresql.conf says of them (placeholders) instead, so
 * that definitions are still checked against the configured machine bits.
 */
static void
read_settings_unloaded(void)
{
	const char *v;

	v = GetConfigOption("cosid.machine_bits", true, false);
	if (v != NULL && atoi(v) >= 0 && atoi(v) <= 31)
		cosid_machine_bits = atoi(v);
	v = GetConfigOption("cosid.slot", true, false);
	cosid_slot_setting = MemoryContextStrdup(TopMemoryContext, v != NULL ? v : "0");
	v = GetConfigOption("cosid.namespace", true, false);
	cosid_namespace = MemoryContextStrdup(TopMemoryContext, v != NULL ? v : "default");
}

void
_PG_init(void)
{
	/*
	 * Shared state and the worker exist only when the library is preloaded;
	 * loaded later, the codecs and the ulid type still work and the rest
	 * says why not.
	 */
	if (!process_shared_preload_libraries_in_progress)
	{
		read_settings_unloaded();
		return;
	}
	define_settings();
	/* the window's WAL records are replayed by whoever reads this WAL */
	cosid_wal_init();
	cosid_issue_init();
	if (IsBinaryUpgrade)
		return;

	if (pg_strcasecmp(cosid_slot_setting, "lease") == 0)
	{
		if (cosid_lease_store == NULL || cosid_lease_store[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cosid.slot = 'lease' needs cosid.lease_store"),
					 errhint("Set cosid.lease_store to a libpq connection string of a PostgreSQL with cosid installed.")));
	}
	else if (cosid_manual_slot() >= (INT64CONST(1) << cosid_machine_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cosid.slot %d does not fit in cosid.machine_bits = %d",
						cosid_manual_slot(), cosid_machine_bits),
				 errdetail("Slots run from 0 to %lld.",
						   (long long) ((INT64CONST(1) << cosid_machine_bits) - 1))));

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = cosid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = cosid_shmem_startup;

	cosid_register_worker();
}

/* ---------- helpers ---------- */

void
cosid_key_error(const char *path, const char *fmt,...)
{
	char		msg[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s: %s", path, msg)));
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

void
cosid_write_durably(const char *path, const char *tmp, const void *data, size_t len)
{
	int			fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	errno = 0;
	if (write(fd, data, len) != (ssize_t) len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	}
	if (pg_fsync(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", tmp)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
	(void) durable_rename(tmp, path, ERROR);
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

void
cosid_require_preload(const char *what)
{
	if (cosid_shared == NULL)
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

void
cosid_wait_1ms(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 1, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

void
cosid_wait_until_ms(int64 target_ms)
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
						 (long) (target_ms - now - 1), PG_WAIT_EXTENSION);
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

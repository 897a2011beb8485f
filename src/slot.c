/*
 * slot.c - this server's slot: its settings and its window in shared memory
 * (see slot.h for the locking rules).
 *
 * Owns: the slot settings, CosidSlotWindow in shared memory (backends read it
 * through slot.h's inline functions).  Must not:
 * decide windows (worker.c drives a slot source for that), call into
 * generators, or block.
 */
#include "slot.h"

#include <limits.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"

int			cosid_machine_bits = 10;
char	   *cosid_slot_setting = NULL;
char	   *cosid_namespace = NULL;
char	   *cosid_lease_store = NULL;
int			cosid_lease_ttl = 60;
char	   *cosid_instance_id = NULL;
bool		cosid_promote_above_replayed = false;
char	   *cosid_citus_database = NULL;

CosidSlotWindow *cosid_window = NULL;

/* ---------- settings ---------- */

static bool
check_slot(char **newval, void **extra, GucSource source)
{
	char	   *end;
	long		v;

	if (pg_strcasecmp(*newval, "lease") == 0 ||
		pg_strcasecmp(*newval, "citus") == 0)
		return true;
	errno = 0;
	v = strtol(*newval, &end, 10);
	if (*newval[0] == '\0' || *end != '\0' || errno != 0 || v < 0 || v > INT_MAX)
	{
		GUC_check_errdetail("cosid.slot is a slot number (0 or more), \"lease\" or \"citus\".");
		return false;
	}
	return true;
}

void
cosid_slot_define_settings(void)
{
	DefineCustomIntVariable("cosid.machine_bits",
							"Bits of this server's slot: slots are 0 to 2^machine_bits - 1.",
							"Every time-based generator's layout needs at least this many node bits.",
							&cosid_machine_bits,
							10, 0, 31,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("cosid.slot",
							   "This server's slot: a number (a manual slot), \"lease\" or \"citus\" (the node's Citus group id).",
							   "A manual slot must differ from every other server's that shares the id space.",
							   &cosid_slot_setting,
							   "0",
							   PGC_POSTMASTER, 0,
							   check_slot, NULL, NULL);
	DefineCustomStringVariable("cosid.namespace",
							   "Slots, and the segments of generators shared through the lease store, are unique within a namespace.",
							   NULL,
							   &cosid_namespace,
							   "default",
							   PGC_POSTMASTER, 0,
							   NULL, NULL, NULL);
	DefineCustomStringVariable("cosid.lease_store",
							   "libpq connection string of the PostgreSQL that keeps the slot leases (cosid.slot = 'lease') and shared segments (\"distributor\": \"lease-store\").",
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
	DefineCustomStringVariable("cosid.citus_database",
							   "cosid.slot = 'citus': the database whose Citus metadata gives this node's slot (its group id).",
							   NULL,
							   &cosid_citus_database,
							   "postgres",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
}

/*
 * Loaded after start-up, cosid cannot define settings fixed at start-up;
 * it reads what postgresql.conf says of them (placeholders) instead, so
 * that definitions are still checked against the configured machine bits.
 */
void
cosid_slot_read_settings_unloaded(void)
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
cosid_slot_check_settings(void)
{
	if (cosid_lease_mode())
	{
		if (cosid_lease_store == NULL || cosid_lease_store[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cosid.slot = 'lease' needs cosid.lease_store"),
					 errhint("Set cosid.lease_store to a libpq connection string of a PostgreSQL with cosid installed.")));
	}
	else if (cosid_citus_slot_mode())
	{
		if (cosid_citus_database == NULL || cosid_citus_database[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cosid.slot = 'citus' needs cosid.citus_database"),
					 errhint("Set cosid.citus_database to the database in which Citus is installed.")));
	}
	else if (cosid_manual_slot() >= (INT64CONST(1) << cosid_machine_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cosid.slot %d does not fit in cosid.machine_bits = %d",
						cosid_manual_slot(), cosid_machine_bits),
				 errdetail("Slots run from 0 to %lld.",
						   (long long) ((INT64CONST(1) << cosid_machine_bits) - 1))));
}

int
cosid_manual_slot(void)
{
	return (int) strtol(cosid_slot_setting, NULL, 10);
}

int
cosid_configured_slot(void)
{
	return cosid_citus_slot_mode() ?
		(int) pg_atomic_read_u32(&cosid_window->citus_group) - 1 : cosid_manual_slot();
}

bool
cosid_lease_mode(void)
{
	return pg_strcasecmp(cosid_slot_setting, "lease") == 0;
}

bool
cosid_citus_slot_mode(void)
{
	return pg_strcasecmp(cosid_slot_setting, "citus") == 0;
}

/* ---------- the window ---------- */

Size
cosid_window_shmem_size(void)
{
	return MAXALIGN(sizeof(CosidSlotWindow));
}

/* Called under AddinShmemInitLock. */
void
cosid_window_shmem_init(void)
{
	bool		found;

	cosid_window = ShmemInitStruct("cosid slot window", sizeof(CosidSlotWindow), &found);
	if (!found)
	{
		memset(cosid_window, 0, sizeof(CosidSlotWindow));
		pg_atomic_init_u64(&cosid_window->start_ms, 0);
		pg_atomic_init_u64(&cosid_window->end_ms, 0);
		pg_atomic_init_u32(&cosid_window->state, COSID_SLOT_STARTING);
		pg_atomic_init_u64(&cosid_window->renewals, 0);
		pg_atomic_init_u32(&cosid_window->wanted, 0);
		pg_atomic_init_u32(&cosid_window->confirmed, 0);
		pg_atomic_init_u32(&cosid_window->citus_group, 0);
		cosid_window->worker_latch = NULL;
		cosid_window->slot = -1;
	}
}

void
cosid_window_request(void)
{
	Latch	   *latch = cosid_window->worker_latch;

	pg_atomic_write_u32(&cosid_window->wanted, 1);
	if (latch != NULL)
		SetLatch(latch);
}

void
cosid_window_confirm(void)
{
	pg_atomic_write_u32(&cosid_window->confirmed, 1);
	cosid_window_request();
}

bool
cosid_window_confirmed(void)
{
	return pg_atomic_read_u32(&cosid_window->confirmed) != 0;
}

void
cosid_window_set_worker_latch(void)
{
	cosid_window->worker_latch = MyLatch;
}

/* Whether a backend asked for a window since the last call. */
bool
cosid_window_take_request(void)
{
	return pg_atomic_exchange_u32(&cosid_window->wanted, 0) != 0;
}

void
cosid_window_set_state(CosidSlotState state)
{
	pg_atomic_write_u32(&cosid_window->state, state);
}

/* Publish a new window (the slot first: backends read it after the end). */
void
cosid_window_open(int slot, int64 start_ms, int64 end_ms)
{
	cosid_window->slot = slot;
	pg_write_barrier();
	pg_atomic_write_u64(&cosid_window->start_ms, (uint64) start_ms);
	pg_atomic_write_u64(&cosid_window->end_ms, (uint64) end_ms);
	pg_write_barrier();
	pg_atomic_write_u32(&cosid_window->state, COSID_SLOT_ACTIVE);
}

void
cosid_window_publish_citus_group(int group)
{
	pg_atomic_write_u32(&cosid_window->citus_group, (uint32) (group < 0 ? 0 : group + 1));
}

/* A later end, already durable. */
void
cosid_window_extend(int64 end_ms)
{
	pg_atomic_write_u64(&cosid_window->end_ms, (uint64) end_ms);
	pg_atomic_fetch_add_u64(&cosid_window->renewals, 1);
}

/* A later start for the open window (lease mode, promoted): atomic. */
void
cosid_window_raise_start(int64 start_ms)
{
	if ((int64) pg_atomic_read_u64(&cosid_window->start_ms) < start_ms)
		pg_atomic_write_u64(&cosid_window->start_ms, (uint64) start_ms);
}

/*
 * Close the window (for good at shutdown, or until a new lease).  After the
 * barrier, whatever a backend issues was reserved before: the caller may
 * then read where the next window may start (cosid_gen_issued_bound_ms).
 */
void
cosid_window_close(bool for_good)
{
	pg_atomic_write_u32(&cosid_window->state,
						for_good ? COSID_SLOT_CLOSED : COSID_SLOT_STARTING);
	pg_atomic_write_u64(&cosid_window->end_ms, 0);
	pg_memory_barrier();
}

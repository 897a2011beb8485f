/*
 * cosid.c - the module's entry point: _PG_init calls one init function per
 * module, and the shared-memory hooks ask each module for its part.
 *
 * The module graph, the path of cosid_next from SQL to shared memory, and
 * where each uniqueness guarantee is enforced are in ARCHITECTURE.md.
 *
 * Owns: PG_MODULE_MAGIC and the hooks' chaining.  Must not: hold state or
 * logic of its own.
 */
#include "util.h"
#include "catalog.h"
#include "genstate.h"
#include "issue.h"
#include "segment.h"
#include "slot.h"
#include "slot_citus.h"
#include "slot_lease.h"
#include "ulid_type.h"
#include "upgrade.h"
#include "wal.h"
#include "worker.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
shmem_size(void)
{
	Size		size = 0;

	size = add_size(size, cosid_ulid_shmem_size());
	size = add_size(size, cosid_window_shmem_size());
	size = add_size(size, cosid_lease_shmem_size());
	size = add_size(size, cosid_citus_slot_shmem_size());
	size = add_size(size, cosid_catalog_shmem_size());
	size = add_size(size, cosid_genstate_shmem_size());
	size = add_size(size, cosid_segment_shmem_size());
	return size;
}

static void
cosid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shmem_size());
	cosid_genstate_shmem_request();
	cosid_ulid_shmem_request();
}

static void
cosid_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	cosid_ulid_shmem_init();
	cosid_window_shmem_init();
	cosid_lease_shmem_init();
	cosid_citus_slot_shmem_init();
	cosid_catalog_shmem_init();
	cosid_genstate_shmem_init();
	cosid_segment_shmem_init();
	LWLockRelease(AddinShmemInitLock);
	cosid_wait_events_init();
	cosid_preloaded = true;
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
		/* pg_upgrade LOADs every library into its new server */
		if (IsBinaryUpgrade)
			cosid_upgrade_mark();
		cosid_slot_read_settings_unloaded();
		return;
	}
	cosid_slot_define_settings();
	cosid_genstate_define_settings();
	cosid_segment_define_settings();
	MarkGUCPrefixReserved("cosid");
	cosid_segment_preload();

	/* the window's WAL records are replayed by whoever reads this WAL */
	cosid_wal_init();
	cosid_issue_init();
	if (IsBinaryUpgrade)
	{
		cosid_upgrade_mark();
		return;
	}
	cosid_upgrade_start(!cosid_lease_mode());

	cosid_slot_check_settings();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = cosid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = cosid_shmem_startup;

	cosid_register_worker();
	if (cosid_citus_slot_mode())
		cosid_register_citus_reader();
}

/*
 * cosid.c - module entry point, shared memory and small shared helpers.
 *
 * The locking rules for shared memory are stated in cosid.h.
 */
#include "cosid.h"

#include <time.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

CosidShared *cosid_shared = NULL;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

static Size
cosid_shmem_size(void)
{
	return MAXALIGN(sizeof(CosidShared));
}

#if PG_VERSION_NUM >= 150000
static void
cosid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(cosid_shmem_size());
}
#endif

static void
cosid_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	cosid_shared = ShmemInitStruct("cosid", cosid_shmem_size(), &found);
	if (!found)
	{
		memset(cosid_shared, 0, sizeof(CosidShared));
		SpinLockInit(&cosid_shared->ulid_lock);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	/*
	 * Shared state exists only when the library is preloaded; loaded later,
	 * the codecs and the ulid type still work and the rest says why not.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = cosid_shmem_request;
#else
	RequestAddinShmemSpace(cosid_shmem_size());
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = cosid_shmem_startup;
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

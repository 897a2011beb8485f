/*
 * cosid.h - what the PostgreSQL side of cosid shares between its files.
 *
 * Shared memory (created only when cosid is in shared_preload_libraries):
 *
 * CosidShared holds the server-wide state of gen_ulid_monotonic(): the last
 * ULID issued by any backend.  Every backend that calls gen_ulid_monotonic()
 * reads and writes it, and only while holding ulid_lock, a spinlock: the
 * critical section is a clock comparison and a 16-byte increment or copy,
 * with no function call that can error or wait.  Random bytes are drawn and
 * the clock is read before the lock is taken; a wait (the 80-bit part would
 * overflow within one millisecond) happens after it is released.
 *
 * When cosid is not preloaded, cosid_shared is NULL and everything that needs
 * it raises 55000 with a hint naming shared_preload_libraries.
 */
#ifndef COSID_H
#define COSID_H

#include "postgres.h"

#include "storage/spin.h"

#include "core/ulid.h"

typedef struct CosidShared
{
	slock_t		ulid_lock;		/* protects ulid_last */
	uint8		ulid_last[ULID_BYTES];	/* last ULID of gen_ulid_monotonic() */
} CosidShared;

extern CosidShared *cosid_shared;

/* Raise 55000 unless cosid was loaded by shared_preload_libraries. */
extern void cosid_require_preload(const char *what);

/* Fill dst with n CSPRNG bytes from this backend's block (random.c). */
extern void cosid_random_bytes(uint8 *dst, size_t n);

/* Wall-clock Unix milliseconds. */
extern uint64 cosid_now_ms(void);

/* Sleep about one millisecond, interruptibly (never inside a lock). */
extern void cosid_wait_1ms(void);

#endif							/* COSID_H */

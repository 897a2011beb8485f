/*
 * ulid_type.h - the ulid type's shared memory: gen_ulid_monotonic()'s last
 * ULID, read and written only under its spinlock, held for a compare and a
 * 16-byte copy, and its durable mark (pg_cosid/ulid.state), read and
 * written under an LWLock (ulid_type.c).
 * Its top comment in ulid_type.c says what the module owns and must not do.
 */
#ifndef COSID_ULID_TYPE_H
#define COSID_ULID_TYPE_H

#include "util.h"

extern Size cosid_ulid_shmem_size(void);
extern void cosid_ulid_shmem_request(void);
extern void cosid_ulid_shmem_init(void);

#endif							/* COSID_ULID_TYPE_H */

/*
 * slot_lease.h - the leased slot (cosid.slot = 'lease', slot_lease.c): its
 * source, and what it reports of the lease store.
 *
 * Owns: the declarations of slot_lease.c.  Must not: declare another
 * source's functions.
 */
#ifndef COSID_SLOT_LEASE_H
#define COSID_SLOT_LEASE_H

#include "slot_source.h"

extern const CosidSlotSource cosid_lease_source;

extern Size cosid_lease_shmem_size(void);
extern void cosid_lease_shmem_init(void);

typedef struct CosidLeaseStatus
{
	bool		store_connected;
	int64		last_renewal_ms;
	uint64		renewal_failures;
	char		last_error[256];
	char		instance[256];
} CosidLeaseStatus;

extern void cosid_lease_status(CosidLeaseStatus *out);

/* Lease mode with the store unreachable (false in manual mode). */
extern bool cosid_lease_store_away(void);

#endif							/* COSID_SLOT_LEASE_H */

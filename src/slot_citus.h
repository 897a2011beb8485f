/*
 * slot_citus.h - the Citus slot (cosid.slot = 'citus', slot_citus.c): its
 * source, and the background worker that reads the node's group id.  The
 * reader publishes the group id it read to the window (slot.c), so that
 * nothing asks this module for it.
 *
 * Owns: the declarations of slot_citus.c.  Must not: declare another
 * source's functions.
 */
#ifndef COSID_SLOT_CITUS_H
#define COSID_SLOT_CITUS_H

#include "slot_source.h"

extern const CosidSlotSource cosid_citus_source;

extern Size cosid_citus_slot_shmem_size(void);
extern void cosid_citus_slot_shmem_init(void);

/* cosid.slot = 'citus': register the background worker that reads the group id. */
extern void cosid_register_citus_reader(void);
PGDLLEXPORT void cosid_citus_reader_main(Datum arg);

/*
 * Why this node holds no slot from Citus now ("" when it holds one or it is
 * not known yet); true when the slot worker refused the group id it read,
 * so that callers need not wait for a window.
 */
extern bool cosid_citus_slot_refused(char *why, size_t len);

#endif							/* COSID_SLOT_CITUS_H */

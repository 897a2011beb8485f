/*
 * slot_manual.h - the manual slot (cosid.slot = N, slot_manual.c): its
 * source, and its record pg_cosid/slot.state, which the Citus slot shares
 * and pg_upgrade's new server takes over.
 *
 * Owns: the declarations of slot_manual.c.  Must not: declare another
 * source's functions.
 */
#ifndef COSID_SLOT_MANUAL_H
#define COSID_SLOT_MANUAL_H

#include "slot_source.h"

extern const CosidSlotSource cosid_manual_source;

/* Take slot with pg_cosid/slot.state (from_citus: the Citus slot's take). */
extern bool cosid_manual_take(int slot, bool from_citus, int64 *start_ms);

/* The Citus group id this data directory last held as its slot, or -1. */
extern int	cosid_manual_recorded_citus_group(void);

/*
 * pg_upgrade's new server (upgrade.c, the postmaster at start-up): the
 * manual slot's record copied from the old data directory names this one
 * from now on.
 */
extern void cosid_manual_take_upgraded_record(void);

/*
 * Whether pg_cosid/slot.state exists and was written in this data directory
 * (not copied from another one): pg_upgrade's new server, given no manifest
 * to check a copy against, takes no record of its own for the old one's.
 */
extern bool cosid_manual_record_is_own(void);

#endif							/* COSID_SLOT_MANUAL_H */

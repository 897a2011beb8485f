/*
 * upgrade.h - pg_upgrade: the marker pg_cosid/upgraded, and whether cosid's
 * state came along to the new data directory (see upgrade.c).
 *
 * Owns: pg_cosid/upgraded, pg_cosid/upgrade.manifest and cosid_upgrade_pending.  Must not: write the
 * other state files (their modules do).
 */
#ifndef COSID_UPGRADE_H
#define COSID_UPGRADE_H

#include "util.h"

/*
 * Set at start-up (postmaster, inherited by every process it starts): this
 * data directory was made by pg_upgrade and cosid's state was not copied
 * into it, so nothing that depends on that state may run.
 */
extern bool cosid_upgrade_pending;

/*
 * _PG_init in binary-upgrade mode: mark the new data directory of
 * pg_upgrade; in the old one, list its state files (upgrade.manifest).
 */
extern void cosid_upgrade_mark(void);

/*
 * _PG_init at a normal start (in the postmaster: its children inherit the
 * outcome): with the marker, take the copied state as this server's and
 * remove the marker, or set cosid_upgrade_pending when it is not there or
 * not complete.  slot_record: this server's slot is manual or Citus's, so
 * the copy must hold the old slot record (slot.state).
 */
extern void cosid_upgrade_start(bool slot_record);

/* Why cosid_upgrade_pending: a full sentence for an errdetail. */
extern const char *cosid_upgrade_detail(void);

/* The error (55000, with the procedure) of what cosid_upgrade_pending stops. */
extern void cosid_upgrade_error(void);

/* Raise it while cosid_upgrade_pending. */
static inline void
cosid_upgrade_check(void)
{
	if (unlikely(cosid_upgrade_pending))
		cosid_upgrade_error();
}

#endif							/* COSID_UPGRADE_H */

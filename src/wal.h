/*
 * wal.h - the slot window in the WAL: a custom WAL resource manager (wal.c).
 * Its top comment in wal.c says what the module owns and must not do.
 */
#ifndef COSID_WAL_H
#define COSID_WAL_H

#include "util.h"

/*
 * The custom WAL resource manager's id, one of the 128..255 PostgreSQL leaves
 * to extensions; not reserved on the wiki's list.  ARCHITECTURE.md, "WAL
 * resource manager id", says why 199, how a clash shows and what changing it
 * means for WAL already written (replay needs the id it was written with).
 */
#define COSID_RMGR_ID	199

extern void cosid_wal_init(void);

/* Write a slot's new window end to the WAL and flush it (not in recovery). */
extern void cosid_wal_log_window(int slot, int64 end_ms);

/*
 * The highest window end replayed from the WAL for a slot of a namespace
 * (slot -1: any slot), 0 if none.
 */
extern int64 cosid_wal_replayed_end(int slot, const char *namespace);

#endif							/* COSID_WAL_H */

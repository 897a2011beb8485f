/*
 * wal.h - the slot window in the WAL: a custom WAL resource manager (wal.c).
 * Its top comment in wal.c says what the module owns and must not do.
 */
#ifndef COSID_WAL_H
#define COSID_WAL_H

#include "util.h"

/*
 * The custom WAL resource manager's id, one of the 128..255 PostgreSQL leaves
 * to extensions; not reserved on the wiki's list.  wal.c registers it in
 * _PG_init (RegisterCustomRmgr) and writes each new window end of a
 * primary's slot as a record of it.
 *
 * Why 199.  PostgreSQL keeps the ids below 128 for its own resource managers
 * and leaves 128 to 255 (RM_MIN_CUSTOM_ID to RM_MAX_CUSTOM_ID, access/rmgr.h)
 * to extensions.  128 is RM_EXPERIMENTAL_ID, which rmgr.h and the wiki page
 * https://wiki.postgresql.org/wiki/CustomWALResourceManagers give to
 * extensions still in development, so two of them may well use it at once:
 * a released extension must not.  The wiki's list hands out ids upwards from
 * 129 (OrioleDB 129, EnterpriseDB's Bluefin 130 and 131, ...); 199 was
 * picked well away from that end.  Nothing else about the number matters.
 *
 * It is not registered: cosid has no entry on the wiki's list, which is the
 * only register there is (PostgreSQL checks nothing beyond one process), so
 * another extension may pick 199 too.
 *
 * What a clash looks like.  Two libraries in shared_preload_libraries that
 * register the same id stop the server at start-up: the second registration
 * fails, and an error in the postmaster is fatal.  With cosid loaded first
 * and an extension whose resource manager is named "other" second,
 * PostgreSQL 18 logs (tried with a module that registers only that)
 *
 *   LOG:  registered custom resource manager "cosid" with ID 199
 *   FATAL:  failed to register custom resource manager "other" with ID 199
 *   DETAIL:  Custom resource manager "cosid" already registered with the same ID.
 *   LOG:  database system is shut down
 *
 * (the other way round, "cosid" fails and the detail names the other one).
 * A server that replays cosid's WAL without loading cosid (a standby, crash
 * recovery, a restored base backup) stops with "FATAL: resource manager with
 * ID 199 not registered" and the hint "Include the extension module that
 * implements this resource manager in "shared_preload_libraries"."
 *
 * How a packager changes it: this one #define, to another free id of 129 to
 * 255 (and please reserve it on the wiki's list).  The id is written into
 * every record, so WAL written with the old id can be replayed only by a
 * build with the old id: the new build must start from a clean shutdown
 * (nothing to replay), every server of a replication set must change
 * together, and base backups and WAL archives taken before the change need
 * the old build to be restored.  A build with another id that replays old
 * records finds nothing registered at 199 and stops as above, or, worse,
 * hands them to whatever extension now holds 199: never mix them.  The user
 * documentation says this in short (docs/operations.md, "Replicas and
 * failover").
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

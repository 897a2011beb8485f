/*
 * store.h - a libpq client for the lease store (cosid.lease_store), for
 * processes that must stay responsive: every wait has a deadline
 * (COSID_STORE_TIMEOUT_MS) and ends early when the process is asked to shut
 * down, unless it is draining (giving a slot back on the way out).
 *
 * Owns: the connection and statement mechanics.  Must not: know what the
 * statements mean (slot_lease.c does).
 */
#ifndef COSID_STORE_H
#define COSID_STORE_H

#include "util.h"

#include "libpq-fe.h"

#define COSID_STORE_TIMEOUT_MS	5000

/* Connect to conninfo; NULL with err filled in on failure. */
extern PGconn *cosid_store_connect(const char *conninfo, char *err, size_t errlen);
extern void cosid_store_disconnect(PGconn *conn);

/*
 * Run one statement; the last result, or NULL with err filled in (one line)
 * and *lost set when the store raised 55000 (the lease is no longer ours).
 */
extern PGresult *cosid_store_exec(PGconn *conn, const char *sql, int nparams,
								  const char *const *params, char *err, size_t errlen,
								  bool *lost);

/* From now on a shutdown request does not cut waits short. */
extern void cosid_store_drain(void);

#endif							/* COSID_STORE_H */

/*
 * store.h - a libpq client for the lease store (cosid.lease_store), for
 * processes that must stay responsive: every wait has a deadline
 * (COSID_STORE_TIMEOUT_MS, on the monotonic clock, or the caller's limit:
 * cosid_store_limit) and ends early when the slot worker is asked to
 * shut down, unless it is draining (giving a slot back on the way out); in a
 * backend, a cancel or termination ends it with an ERROR, after which the
 * caller must drop the connection (a statement may be in flight).
 *
 * Owns: the connection and statement mechanics.  Must not: know what the
 * statements or the store's SQLSTATEs mean (slot_lease.c and segment.c
 * do: a lease lost, a counter used up or refused).
 */
#ifndef COSID_STORE_H
#define COSID_STORE_H

#include "util.h"

#include "libpq-fe.h"

#define COSID_STORE_TIMEOUT_MS	5000

/*
 * Connect to conninfo; NULL with err filled in on failure.  A new
 * connection's search_path is pg_catalog, pg_temp, and the store's cosid
 * objects are checked to be superusers' own (1.4): when one is not, NULL
 * with *untrusted set and err naming it (the caller raises that with
 * ERRCODE_INSUFFICIENT_PRIVILEGE, COSID_STORE_UNTRUSTED_DETAIL and
 * COSID_STORE_UNTRUSTED_HINT).
 */
extern PGconn *cosid_store_connect(const char *conninfo, char *err, size_t errlen,
								   bool *untrusted);
extern void cosid_store_disconnect(PGconn *conn);

#define COSID_STORE_UNTRUSTED_DETAIL \
	"A role that owns cosid's schema, a function there of a name this server calls, or a table those functions use, could answer for the lease store: two servers could then issue the same ids."
#define COSID_STORE_UNTRUSTED_HINT \
	"On the lease store, a superuser drops that object or gives it to a superuser (ALTER ... OWNER TO); this server tries the store again by itself."

/*
 * Run one statement, each of its parameters of the type types names (every
 * call names them, so that no overload of anyone else's fits better); the
 * last result, or NULL with err filled in (one line)
 * and sqlstate (6 bytes) set to the store's SQLSTATE when it answered with an
 * error, "" when it did not answer in time or the connection broke; what
 * that SQLSTATE means is the caller's to say.  needs_version: the cosid
 * version the statement needs on the store (each caller names its own, with
 * the reason), which err names when the store has no such function or
 * column (42883, 42703): the statement is newer than the store's cosid.
 */
extern PGresult *cosid_store_run(PGconn *conn, const char *sql, int nparams,
								 const Oid *types, const char *const *params,
								 const char *needs_version, char *err, size_t errlen,
								 char *sqlstate);

/*
 * Whether a connection is worth keeping after a statement that failed with
 * sqlstate ("" when the store did not answer): it is open and idle, and the
 * store did not answer that it takes no writes (25006: a primary made
 * read-only to fence it before a failover, or a standby).  Otherwise the
 * caller drops it, and its next connection, through a cosid.lease_store that
 * lists every member with target_session_attrs=read-write, finds the server
 * that takes writes.
 */
extern bool cosid_store_keep(PGconn *conn, const char *sqlstate);

/*
 * From now on every wait ends by limit_ms (cosid_monotonic_ms()) at the
 * latest, even before its own COSID_STORE_TIMEOUT_MS; 0 lifts the limit.  A
 * backend sets it around the segment fetches of one statement, so that the
 * statement waits one deadline for the store however many fetches it makes.
 */
extern void cosid_store_limit(int64 limit_ms);

/* From now on a shutdown request does not cut waits short. */
extern void cosid_store_drain(void);

#endif							/* COSID_STORE_H */

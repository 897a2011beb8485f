/*
 * store.c - the libpq client of the lease store (see store.h).
 *
 * Used by the slot worker (slot_lease.c) and by backends that fetch shared
 * segments (segment.c).  In a backend every wait also answers query cancel
 * and termination (CHECK_FOR_INTERRUPTS): the error leaves the statement
 * in flight, so the caller drops that connection; a connection being made
 * is closed here.
 *
 * Owns: connecting with a deadline, running one statement with a deadline
 * (both on the monotonic clock, cut short by the caller's limit),
 * making libpq's messages one line, naming a store whose cosid is older than
 * the statement, and trusting a store (1.4): every connection first pins its
 * search_path to pg_catalog, pg_temp, then refuses a store whose cosid
 * objects (the schema, every function of a name this server calls, the
 * tables those functions use) a role other than a superuser owns.  Must
 * not: interpret results or say what an error means to a lease or a
 * segment (its callers do), or block without a deadline.
 */
#include "store.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

static bool draining = false;

/* cosid_store_limit(): when every wait must end, monotonic ms; 0: no limit */
static int64 wait_limit = 0;

/*
 * The store's answer that it takes no writes (read_only_sql_transaction: a
 * primary fenced read-only before a failover, or a standby): a fact about the
 * connection, not about a lease or a segment, so it is decided here.
 */
#define STORE_TAKES_NO_WRITES "25006"

void
cosid_store_drain(void)
{
	draining = true;
}

void
cosid_store_limit(int64 limit_ms)
{
	wait_limit = limit_ms;
}

/*
 * The deadline of a call starting now: COSID_STORE_TIMEOUT_MS from now on
 * the monotonic clock (a wall clock set back would stretch it), or the
 * caller's limit when that comes first.
 */
static int64
call_deadline(void)
{
	int64		deadline = cosid_monotonic_ms() + COSID_STORE_TIMEOUT_MS;

	if (wait_limit > 0 && wait_limit < deadline)
		deadline = wait_limit;
	return deadline;
}

/* libpq messages end in a newline and may hold more: make them one line. */
static void
drop_newline(char *s)
{
	size_t		n;
	char	   *w = s;
	bool		space = false;

	for (char *r = s; *r; r++)
	{
		bool		ws = (*r == '\n' || *r == '\r' || *r == '\t' || *r == ' ');

		if (ws && space)
			continue;
		*w++ = ws ? ' ' : *r;
		space = ws;
	}
	*w = '\0';
	n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
}

/* Wait for the socket (or the deadline, or shutdown); false: give up. */
static bool
wait_socket(PGconn *conn, int io_flag, int64 deadline, char *err, size_t errlen)
{
	int64		left = deadline - cosid_monotonic_ms();
	int			rc;

	if (left <= 0)
	{
		snprintf(err, errlen, "the lease store did not answer within %d ms", COSID_STORE_TIMEOUT_MS);
		return false;
	}
	rc = WaitLatchOrSocket(MyLatch,
						   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | io_flag,
						   PQsocket(conn), (long) left,
						   cosid_wait_event(COSID_WAIT_LEASE_STORE));
	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	/* a backend (segment fetches): cancel and terminate end the wait */
	if (!cosid_am_background_worker())
		CHECK_FOR_INTERRUPTS();
	if (ShutdownRequestPending && !draining)
	{
		snprintf(err, errlen, "shutting down");
		return false;
	}
	return true;
}

bool
cosid_store_keep(PGconn *conn, const char *sqlstate)
{
	return conn != NULL && PQstatus(conn) == CONNECTION_OK &&
		PQtransactionStatus(conn) == PQTRANS_IDLE &&
		strcmp(sqlstate, STORE_TAKES_NO_WRITES) != 0;
}

void
cosid_store_disconnect(PGconn *conn)
{
	if (conn != NULL)
	{
		PQfinish(conn);
		ReleaseExternalFD();
	}
}

/*
 * The session's search_path, set before any other statement: no schema of
 * anyone else's (pg_temp last, where no function or operator is looked up)
 * resolves a name of a statement this server sends.
 */
static const char *const pin_sql =
"SELECT pg_catalog.set_config($1::pg_catalog.text, $2::pg_catalog.text, false)";

/*
 * The store's cosid objects that a role other than a superuser owns: the
 * schema, every function in it of a name this server calls (an overload of
 * anyone else's would be one more candidate), the tables those functions
 * read and write.  Every name is qualified, every operator too.
 */
static const char *const trust_sql =
"SELECT o.kind, o.object, pg_catalog.quote_ident(coalesce(r.rolname, o.owner::pg_catalog.text)) "
"FROM (SELECT 1 AS ord, 'schema'::pg_catalog.text AS kind, n.nspname::pg_catalog.text AS object, n.nspowner AS owner "
"        FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) 'cosid' "
"      UNION ALL "
"      SELECT 2, 'function', p.oid::pg_catalog.regprocedure::pg_catalog.text, p.proowner "
"        FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace "
"       WHERE n.nspname OPERATOR(pg_catalog.=) 'cosid' "
"         AND p.proname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.name[]) "
"      UNION ALL "
"      SELECT 3, 'table', c.oid::pg_catalog.regclass::pg_catalog.text, c.relowner "
"        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
"       WHERE n.nspname OPERATOR(pg_catalog.=) 'cosid' "
"         AND c.relname OPERATOR(pg_catalog.=) ANY ($2::pg_catalog.name[])) o "
"LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) o.owner "
"WHERE r.rolsuper IS NOT TRUE "
"ORDER BY o.ord, o.object";

/* the functions this server calls on the store, and the tables they use */
#define STORE_FUNCTIONS "{lease_acquire,lease_renew,lease_release,segment_acquire}"
#define STORE_TABLES "{lease,lease_namespace,lease_namespace_config,segment_counter,segment_counter_grant}"

/*
 * Pin the new connection's search_path, then check that the store's cosid
 * is a superuser's own: false with err filled in, and *untrusted set when
 * the store answered but is not to be trusted.
 */
static bool
store_trust(PGconn *conn, char *err, size_t errlen, bool *untrusted)
{
	static const Oid pin_types[2] = {TEXTOID, TEXTOID};
	static const char *const pin_params[2] = {"search_path", "pg_catalog, pg_temp"};
	static const Oid trust_types[2] = {NAMEARRAYOID, NAMEARRAYOID};
	static const char *const trust_params[2] = {STORE_FUNCTIONS, STORE_TABLES};
	char		sqlstate[6];
	PGresult   *res;
	int			n;

	res = cosid_store_run(conn, pin_sql, 2, pin_types, pin_params, "1.1", err, errlen, sqlstate);
	if (res == NULL)
		return false;
	PQclear(res);
	res = cosid_store_run(conn, trust_sql, 2, trust_types, trust_params, "1.1", err, errlen, sqlstate);
	if (res == NULL)
		return false;
	n = PQntuples(res);
	if (n > 0)
	{
		snprintf(err, errlen,
				 "the lease store's %s %s is owned by role %s, which is not a superuser%s",
				 PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
				 n > 1 ? " (and so are more cosid objects there)" : "");
		PQclear(res);
		*untrusted = true;
		return false;
	}
	PQclear(res);
	return true;
}

/* Connect to the store; NULL with err filled in (one line) on failure. */
PGconn *
cosid_store_connect(const char *conninfo, char *err, size_t errlen, bool *untrusted)
{
	PGconn	   *conn;
	volatile PostgresPollingStatusType status = PGRES_POLLING_WRITING;
	volatile int64 deadline = call_deadline();	/* volatile: read inside PG_TRY */
	volatile bool trusted = false;

	*untrusted = false;
	cosid_check_lock_rules("a connection to the lease store");
	if (conninfo == NULL || conninfo[0] == '\0')
	{
		snprintf(err, errlen, "cosid.lease_store is not set");
		return NULL;
	}
	if (!AcquireExternalFD())
	{
		snprintf(err, errlen, "no file descriptor left for the lease store connection");
		return NULL;
	}
	conn = PQconnectStart(conninfo);
	if (conn == NULL)
	{
		ReleaseExternalFD();
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* libpq's memory is malloc'd: an error (a cancel) must not leak it */
	PG_TRY();
	{
		while (PQstatus(conn) != CONNECTION_BAD &&
			   status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
		{
			if (!wait_socket(conn, status == PGRES_POLLING_READING ?
							 WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE, deadline, err, errlen))
				break;
			status = PQconnectPoll(conn);
		}
	}
	PG_CATCH();
	{
		cosid_store_disconnect(conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (PQstatus(conn) != CONNECTION_BAD &&
		status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
	{
		/* gave up waiting: err says why */
		cosid_store_disconnect(conn);
		return NULL;
	}
	if (PQstatus(conn) != CONNECTION_OK)
	{
		snprintf(err, errlen, "could not connect to the lease store: %s", PQerrorMessage(conn));
		drop_newline(err);
		cosid_store_disconnect(conn);
		return NULL;
	}
	/* an error (a cancel) in a backend: the caller has no connection yet */
	PG_TRY();
	{
		trusted = store_trust(conn, err, errlen, untrusted);
	}
	PG_CATCH();
	{
		cosid_store_disconnect(conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!trusted)
	{
		cosid_store_disconnect(conn);
		return NULL;
	}
	return conn;
}

/*
 * Run one statement (see store.h).  A store whose cosid predates the
 * statement (no such function or column) is named as such, with the version
 * the caller says it needs.
 */
PGresult *
cosid_store_run(PGconn *conn, const char *sql, int nparams, const Oid *types,
				const char *const *params, const char *needs_version, char *err, size_t errlen,
				char *sqlstate)
{
	PGresult   *volatile last = NULL;
	volatile int64 deadline = call_deadline();	/* volatile: read inside PG_TRY */
	bool		answered = true;

	cosid_check_lock_rules("a call to the lease store");
	sqlstate[0] = '\0';
	if (!PQsendQueryParams(conn, sql, nparams, types, params, NULL, NULL, 0))
	{
		snprintf(err, errlen, "could not send to the lease store: %s", PQerrorMessage(conn));
		drop_newline(err);
		return NULL;
	}
	PG_TRY();
	{
		for (;;)
		{
			PGresult   *res;

			while (answered && PQisBusy(conn))
			{
				if (!wait_socket(conn, WL_SOCKET_READABLE, deadline, err, errlen))
					answered = false;
				else if (!PQconsumeInput(conn))
				{
					snprintf(err, errlen, "lost the lease store: %s", PQerrorMessage(conn));
					answered = false;
				}
			}
			if (!answered)
				break;
			res = PQgetResult(conn);
			if (res == NULL)
				break;
			PQclear(last);
			last = res;
		}
	}
	PG_CATCH();
	{
		PQclear(last);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!answered)
	{
		PQclear(last);
		drop_newline(err);
		return NULL;
	}
	if (last == NULL || PQresultStatus(last) != PGRES_TUPLES_OK)
	{
		const char *state = last ? PQresultErrorField(last, PG_DIAG_SQLSTATE) : NULL;
		bool		outdated = state != NULL &&
			(strcmp(state, "42883") == 0 || strcmp(state, "42703") == 0);

		snprintf(err, errlen, "the lease store refused%s%s%s: %s",
				 outdated ? " (its cosid must be " : "",
				 outdated ? needs_version : "",
				 outdated ? " or later: ALTER EXTENSION cosid UPDATE there)" : "",
				 last ? PQresultErrorMessage(last) : PQerrorMessage(conn));
		drop_newline(err);
		if (state != NULL)
			strlcpy(sqlstate, state, 6);
		PQclear(last);
		return NULL;
	}
	return last;
}

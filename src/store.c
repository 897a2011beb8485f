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
 * the statement.  Must not: interpret results or say what an error means to
 * a lease or a segment (its callers do), or block without a deadline.
 */
#include "store.h"

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
						   PQsocket(conn), (long) left, PG_WAIT_EXTENSION);
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

/* Connect to the store; NULL with err filled in (one line) on failure. */
PGconn *
cosid_store_connect(const char *conninfo, char *err, size_t errlen)
{
	PGconn	   *conn;
	volatile PostgresPollingStatusType status = PGRES_POLLING_WRITING;
	volatile int64 deadline = call_deadline();	/* volatile: read inside PG_TRY */

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
	return conn;
}

/*
 * Run one statement (see store.h).  A store whose cosid predates the
 * statement (no such function or column) is named as such, with the version
 * the caller says it needs.
 */
PGresult *
cosid_store_run(PGconn *conn, const char *sql, int nparams, const char *const *params,
				const char *needs_version, char *err, size_t errlen, char *sqlstate)
{
	PGresult   *volatile last = NULL;
	volatile int64 deadline = call_deadline();	/* volatile: read inside PG_TRY */
	bool		answered = true;

	sqlstate[0] = '\0';
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
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

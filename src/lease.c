/*
 * lease.c - the slot worker in lease mode (cosid.slot = 'lease').
 *
 * The slot comes from a lease store: any PostgreSQL with cosid 1.1 or later
 * installed, reached with libpq (cosid.lease_store).  Its SQL functions
 * (sql/cosid--*.sql: cosid.lease_acquire, lease_renew, lease_release) are each
 * atomic, so a slot is held by one instance at a time, and a new holder
 * learns the window end its previous holder recorded and starts no earlier.
 * Acquire returns a fencing token that renew and release require: once the
 * slot was taken again (by another instance, or by this one restarted), an
 * older holder can neither extend nor release it.
 *
 * The worker records every new window end in the store (lease_renew) before
 * backends may use it, which also extends the lease.  While the store is
 * away, ids are issued until the window ends, then 55000; the worker
 * reconnects with backoff and issuing resumes.  A renewal that finds the
 * lease taken closes the window at once and takes a slot again.  At clean
 * shutdown the window is closed and the slot released with the start of the
 * last unit issued.  Nothing is written locally, so this works on a standby.
 *
 * Every libpq wait goes through WaitLatchOrSocket with a deadline and checks
 * for shutdown, so the worker stays responsive whatever the store does.
 */
#include "cosid.h"

#include <unistd.h>

#include "access/xlog.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#define STORE_TIMEOUT_MS	5000
#define BACKOFF_MIN_MS		100
#define BACKOFF_MAX_MS		5000

static char instance_id[256];

static void
set_store_state(bool connected, const char *error)
{
	SpinLockAcquire(&cosid_shared->lease_lock);
	cosid_shared->store_connected = connected;
	if (error != NULL)
		strlcpy(cosid_shared->last_error, error, sizeof(cosid_shared->last_error));
	SpinLockRelease(&cosid_shared->lease_lock);
}

/* Wait for the socket (or the deadline, or shutdown); false: give up. */
static bool
wait_socket(PGconn *conn, int io_flag, int64 deadline, char *err, size_t errlen)
{
	int64		left = deadline - (int64) cosid_now_ms();
	int			rc;

	if (left <= 0)
	{
		snprintf(err, errlen, "the lease store did not answer within %d ms", STORE_TIMEOUT_MS);
		return false;
	}
	rc = WaitLatchOrSocket(MyLatch,
						   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | io_flag,
						   PQsocket(conn), (long) left, PG_WAIT_EXTENSION);
	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	if (cosid_worker_stopping())
	{
		snprintf(err, errlen, "shutting down");
		return false;
	}
	return true;
}

static void
store_disconnect(PGconn *conn)
{
	if (conn != NULL)
	{
		PQfinish(conn);
		ReleaseExternalFD();
	}
}

/* Connect to the store; NULL with err filled in on failure. */
static PGconn *
store_connect(char *err, size_t errlen)
{
	PGconn	   *conn;
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;
	int64		deadline = (int64) cosid_now_ms() + STORE_TIMEOUT_MS;

	if (cosid_lease_store == NULL || cosid_lease_store[0] == '\0')
	{
		snprintf(err, errlen, "cosid.lease_store is not set");
		return NULL;
	}
	if (!AcquireExternalFD())
	{
		snprintf(err, errlen, "no file descriptor left for the lease store connection");
		return NULL;
	}
	conn = PQconnectStart(cosid_lease_store);
	if (conn == NULL)
	{
		ReleaseExternalFD();
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while (PQstatus(conn) != CONNECTION_BAD &&
		   status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
	{
		if (!wait_socket(conn, status == PGRES_POLLING_READING ?
						 WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE, deadline, err, errlen))
		{
			store_disconnect(conn);
			return NULL;
		}
		status = PQconnectPoll(conn);
	}
	if (PQstatus(conn) != CONNECTION_OK)
	{
		snprintf(err, errlen, "could not connect to the lease store: %s", PQerrorMessage(conn));
		store_disconnect(conn);
		return NULL;
	}
	return conn;
}

/*
 * Run one statement; the last result, or NULL with err filled in (and
 * *lost set when the store said the lease is no longer ours: 55000).  A
 * store whose cosid predates the 1.1 lease functions (no such function or
 * column) is named as such.
 */
static PGresult *
store_exec(PGconn *conn, const char *sql, int nparams, const char *const *params,
		   char *err, size_t errlen, bool *lost)
{
	PGresult   *res;
	PGresult   *last = NULL;
	int64		deadline = (int64) cosid_now_ms() + STORE_TIMEOUT_MS;

	*lost = false;
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		snprintf(err, errlen, "could not send to the lease store: %s", PQerrorMessage(conn));
		return NULL;
	}
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!wait_socket(conn, WL_SOCKET_READABLE, deadline, err, errlen))
			{
				PQclear(last);
				return NULL;
			}
			if (!PQconsumeInput(conn))
			{
				snprintf(err, errlen, "lost the lease store: %s", PQerrorMessage(conn));
				PQclear(last);
				return NULL;
			}
		}
		res = PQgetResult(conn);
		if (res == NULL)
			break;
		PQclear(last);
		last = res;
	}
	if (last == NULL || PQresultStatus(last) != PGRES_TUPLES_OK)
	{
		const char *state = last ? PQresultErrorField(last, PG_DIAG_SQLSTATE) : NULL;
		bool		outdated = state != NULL &&
			(strcmp(state, "42883") == 0 || strcmp(state, "42703") == 0);

		snprintf(err, errlen, "the lease store refused%s: %s",
				 outdated ? " (its cosid must be 1.1 or later: ALTER EXTENSION cosid UPDATE there)" : "",
				 last ? PQresultErrorMessage(last) : PQerrorMessage(conn));
		*lost = state != NULL && strcmp(state, "55000") == 0;
		PQclear(last);
		return NULL;
	}
	return last;
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

/* This server's instance id: the setting, or system identifier, host and port. */
static void
compute_instance_id(void)
{
	char		host[128];

	if (cosid_instance_id != NULL && cosid_instance_id[0] != '\0')
	{
		strlcpy(instance_id, cosid_instance_id, sizeof(instance_id));
		return;
	}
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "localhost", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(instance_id, sizeof(instance_id), UINT64_FORMAT ":%s:%d",
			 GetSystemIdentifier(), host, PostPortNumber);
}

void
cosid_lease_main(void)
{
	PGconn	   *conn = NULL;
	int			slot = -1;
	char		token[64] = "";	/* the fencing token of our lease */
	int64		start = 0;
	int64		end = 0;
	int			backoff = BACKOFF_MIN_MS;
	int64		renewed = 0;	/* when the store last renewed our lease */
	char		err[512];
	char		ttl[32];
	char		slot_bits[16];
	bool		lost;
	bool		extend;
	bool		in_recovery = RecoveryInProgress();

	compute_instance_id();
	SpinLockAcquire(&cosid_shared->lease_lock);
	strlcpy(cosid_shared->instance, instance_id, sizeof(cosid_shared->instance));
	SpinLockRelease(&cosid_shared->lease_lock);
	/* the store counts the slots itself: 1 << 31 does not fit an int */
	snprintf(slot_bits, sizeof(slot_bits), "%d", cosid_machine_bits);
	ereport(LOG,
			(errmsg("cosid slot worker leases a slot of namespace \"%s\" as instance \"%s\"",
					cosid_namespace, instance_id)));

	while (!cosid_worker_stopping())
	{
		int64		now;
		PGresult   *res;

		cosid_worker_reload();
		snprintf(ttl, sizeof(ttl), "%d seconds", cosid_lease_ttl);

		if (conn == NULL)
		{
			conn = store_connect(err, sizeof(err));
			if (conn == NULL)
			{
				drop_newline(err);
				set_store_state(false, err);
				pg_atomic_fetch_add_u64(&cosid_shared->renewal_failures, 1);
				cosid_worker_sleep(backoff);
				backoff = Min(backoff * 2, BACKOFF_MAX_MS);
				continue;
			}
			set_store_state(true, NULL);
			backoff = BACKOFF_MIN_MS;
		}

		/*
		 * Promoted: with cosid.promote_above_replayed, ids sort above the old
		 * primary's, whose window ends were replayed from its WAL.
		 */
		if (in_recovery && !RecoveryInProgress())
		{
			in_recovery = false;
			if (cosid_promote_above_replayed)
			{
				int64		replayed = cosid_wal_replayed_end(-1, cosid_namespace);

				if (replayed > start)
				{
					start = replayed;
					if (end > 0)
						cosid_raise_window_start(start);
					ereport(LOG,
							(errmsg("cosid slot worker: promoted, the window now starts at %s, above the window ends replayed from the WAL",
									timestamptz_to_str(cosid_ms_to_timestamptz(start)))));
				}
			}
		}

		now = (int64) cosid_now_ms();
		if (slot < 0)
		{
			const char *params[4] = {cosid_namespace, instance_id, slot_bits, ttl};

			res = store_exec(conn,
							 "SELECT slot, previous_end, token FROM cosid.lease_acquire($1, $2, $3, $4)",
							 4, params, err, sizeof(err), &lost);
			if (res == NULL)
			{
				drop_newline(err);
				set_store_state(PQstatus(conn) == CONNECTION_OK, err);
				ereport(LOG, (errmsg("cosid slot worker could not lease a slot: %s", err)));
				if (PQstatus(conn) != CONNECTION_OK)
				{
					store_disconnect(conn);
					conn = NULL;
				}
				cosid_worker_sleep(Max(backoff, 1000));
				backoff = Min(backoff * 2, BACKOFF_MAX_MS);
				continue;
			}
			slot = atoi(PQgetvalue(res, 0, 0));
			start = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
			strlcpy(token, PQgetvalue(res, 0, 2), sizeof(token));
			PQclear(res);
			end = 0;
			renewed = 0;
			ereport(LOG,
					(errmsg("cosid slot worker leased slot %d of namespace \"%s\"; its window starts at %s",
							slot, cosid_namespace,
							timestamptz_to_str(cosid_ms_to_timestamptz(start)))));
		}

		/*
		 * Record a new window end in the store before anyone may use it; and
		 * renew the lease a third of the TTL after the last renewal even when
		 * the window needs no extending (it can start far ahead of the clock,
		 * after a holder whose clock was ahead): the same end, never lower.
		 */
		extend = end == 0 ||
			(end - now < COSID_WINDOW_RENEW_MS && cosid_window_in_demand());
		if (extend || now - renewed >= (int64) cosid_lease_ttl * 1000 / 3)
		{
			int64		new_end = extend ?
				Max(Max(now, start) + COSID_WINDOW_LEAD_MS, end) : end;
			char		slot_s[16];
			char		end_s[32];
			const char *params[6] = {cosid_namespace, slot_s, instance_id, token, end_s, ttl};

			snprintf(slot_s, sizeof(slot_s), "%d", slot);
			snprintf(end_s, sizeof(end_s), INT64_FORMAT, new_end);
			res = store_exec(conn, "SELECT cosid.lease_renew($1, $2, $3, $4, $5, $6)",
							 6, params, err, sizeof(err), &lost);
			if (res != NULL)
			{
				PQclear(res);
				/* on a primary, the WAL carries the end too (see wal.c) */
				if (new_end > end && !RecoveryInProgress())
					cosid_wal_log_window(slot, new_end);
				if (end == 0)
					cosid_open_window(slot, start, new_end);
				else if (new_end > end)
					cosid_extend_window(new_end);
				end = new_end;
				renewed = now;
				SpinLockAcquire(&cosid_shared->lease_lock);
				cosid_shared->last_renewal_ms = now;
				cosid_shared->store_connected = true;
				cosid_shared->last_error[0] = '\0';
				SpinLockRelease(&cosid_shared->lease_lock);
			}
			else
			{
				drop_newline(err);
				pg_atomic_fetch_add_u64(&cosid_shared->renewal_failures, 1);
				set_store_state(PQstatus(conn) == CONNECTION_OK, err);
				if (lost)
				{
					/* taken over: stop issuing at once, then lease again */
					(void) cosid_close_window(start, false);
					ereport(LOG,
							(errmsg("cosid slot worker lost the lease of slot %d: %s", slot, err)));
					slot = -1;
					token[0] = '\0';
					end = 0;
					continue;
				}
				ereport(LOG,
						(errmsg("cosid slot worker could not renew the lease of slot %d: %s", slot, err)));
				store_disconnect(conn);
				conn = NULL;
				continue;
			}
		}
		cosid_worker_sleep(100);
	}

	/* clean shutdown: close the window, give the slot back */
	if (slot >= 0)
	{
		int64		last = cosid_close_window(start, true);

		if (conn != NULL)
		{
			char		slot_s[16];
			char		end_s[32];
			const char *params[5] = {cosid_namespace, slot_s, instance_id, token, end_s};
			PGresult   *res;

			snprintf(slot_s, sizeof(slot_s), "%d", slot);
			snprintf(end_s, sizeof(end_s), INT64_FORMAT, last);
			/* the stop flag is set: give the store its own short deadline */
			cosid_worker_clear_stop_for_exit();
			res = store_exec(conn, "SELECT cosid.lease_release($1, $2, $3, $4, $5)",
							 5, params, err, sizeof(err), &lost);
			if (res != NULL)
			{
				PQclear(res);
				/* the store keeps the greater of the recorded end and ours */
				ereport(LOG,
						(errmsg("cosid slot worker released slot %d; its next holder starts no earlier than %s",
								slot, timestamptz_to_str(cosid_ms_to_timestamptz(Max(last, end))))));
			}
			else
			{
				drop_newline(err);
				ereport(LOG,
						(errmsg("cosid slot worker could not release slot %d (it expires by itself): %s",
								slot, err)));
			}
		}
	}
	store_disconnect(conn);
}

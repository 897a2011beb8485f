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
#include "common/pg_prng.h"
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

/*
 * Wait for the socket (or the deadline, or shutdown); false: give up.  true
 * with *ready false: the wait ended before the socket was ready (the latch,
 * or the deadline just now: the next call gives up), so the caller must not
 * act as if it were.  PQconnectPoll must be called only once the socket is
 * ready for what it asked: called early, it takes a connection still being
 * made (its handshake unanswered, as behind a partition) for one that is
 * made, and then blocks on the socket with no timeout at all.
 */
static bool
wait_socket(PGconn *conn, int io_flag, int64 deadline, char *err, size_t errlen, bool *ready)
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
	*ready = (rc & io_flag) != 0;
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

#define CONNECT_FAILED "could not connect to the lease store: "

/*
 * Poll a connection being made until it is made (true), fails, or deadline
 * passes; false with err filled in, *gave_up set when it was not over yet
 * (the deadline, or a shutdown).
 */
static bool
poll_connection(PGconn *conn, int64 deadline, char *err, size_t errlen, bool *gave_up)
{
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;
	bool		ready;

	*gave_up = false;
	while (PQstatus(conn) != CONNECTION_BAD &&
		   status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
	{
		if (!wait_socket(conn, status == PGRES_POLLING_READING ?
						 WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE, deadline, err, errlen, &ready))
		{
			*gave_up = true;
			return false;
		}
		if (ready)
			status = PQconnectPoll(conn);
	}
	if (PQstatus(conn) != CONNECTION_OK)
	{
		snprintf(err, errlen, CONNECT_FAILED "%s", PQerrorMessage(conn));
		drop_newline(err);
		return false;
	}
	return true;
}

/* how many comma-separated elements s has (0 for NULL) */
static int
list_length_of(const char *s)
{
	int			n = 1;

	if (s == NULL)
		return 0;
	for (; *s; s++)
		n += (*s == ',');
	return n;
}

/* element i of a comma-separated list, palloc'd; the whole of a one-element list */
static char *
list_element(const char *s, int i)
{
	const char *end;

	for (; i > 0; i--)
		s = strchr(s, ',') + 1;
	end = strchr(s, ',');
	return end ? pnstrdup(s, end - s) : pstrdup(s);
}

/*
 * The options of a conninfo that lists several hosts, to be tried one at a
 * time (connect_hosts), or NULL: one host, or a conninfo libpq should judge
 * itself (it does not parse, or its lists do not match).
 */
typedef struct StoreHosts
{
	PQconninfoOption *options;
	int			nhosts;
	const char *host;
	const char *hostaddr;
	int			timeout_ms;		/* connect_timeout, 0: none */
	bool		shuffle;		/* load_balance_hosts=random */
} StoreHosts;

static bool
store_hosts(const char *conninfo, StoreHosts *h)
{
	char	   *msg = NULL;
	const char *port = NULL;
	int			nhost,
				naddr,
				nport;

	memset(h, 0, sizeof(*h));
	h->options = PQconninfoParse(conninfo, &msg);
	if (h->options == NULL)
	{
		if (msg)
			PQfreemem(msg);
		return false;
	}
	for (PQconninfoOption *o = h->options; o->keyword; o++)
	{
		if (o->val == NULL)
			continue;
		if (strcmp(o->keyword, "host") == 0)
			h->host = o->val;
		else if (strcmp(o->keyword, "hostaddr") == 0)
			h->hostaddr = o->val;
		else if (strcmp(o->keyword, "port") == 0)
			port = o->val;
		else if (strcmp(o->keyword, "connect_timeout") == 0)
			h->timeout_ms = atoi(o->val) > 0 ? Max(atoi(o->val), 2) * 1000 : 0;
		else if (strcmp(o->keyword, "load_balance_hosts") == 0)
			h->shuffle = strcmp(o->val, "random") == 0;
	}
	nhost = list_length_of(h->host);
	naddr = list_length_of(h->hostaddr);
	nport = list_length_of(port);
	h->nhosts = Max(nhost, naddr);
	if (h->nhosts <= 1 || (nhost > 0 && naddr > 0 && nhost != naddr) ||
		(nport > 1 && nport != h->nhosts))
	{
		PQconninfoFree(h->options);
		h->options = NULL;
		return false;
	}
	return true;
}

/*
 * Start a connection to host number i of h: every option as given, but
 * host, hostaddr and port the host's own.
 */
static PGconn *
start_host(StoreHosts *h, int i)
{
	int			n = 0;
	const char **keywords;
	const char **values;
	PGconn	   *conn;

	for (PQconninfoOption *o = h->options; o->keyword; o++)
		n++;
	keywords = palloc0((n + 1) * sizeof(char *));
	values = palloc0((n + 1) * sizeof(char *));
	n = 0;
	for (PQconninfoOption *o = h->options; o->keyword; o++)
	{
		if (o->val == NULL)
			continue;
		keywords[n] = o->keyword;
		if (strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0 ||
			strcmp(o->keyword, "port") == 0)
			values[n] = list_length_of(o->val) > 1 ? list_element(o->val, i) : o->val;
		else
			values[n] = o->val;
		n++;
	}
	conn = PQconnectStartParams(keywords, values, 0);
	pfree(keywords);
	pfree(values);
	return conn;
}

/* poll_connection, the connection closed on an error (a cancel) */
static bool
poll_host(PGconn *conn, int64 until, char *err, size_t errlen, bool *gave_up)
{
	volatile bool made = false;

	PG_TRY();
	{
		made = poll_connection(conn, until, err, errlen, gave_up);
	}
	PG_CATCH();
	{
		PQfinish(conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return made;
}

/*
 * Connect to a store whose conninfo lists several hosts (the Patroni
 * recipe's lists every member, with target_session_attrs=read-write): each
 * host on its own, in the conninfo's order (shuffled with
 * load_balance_hosts=random), for connect_timeout when that is set and never
 * more than an even share of the call's time left.  libpq's own way through
 * the list would not do: PQconnectPoll, which every wait here needs, gives
 * each host as long as it takes (connect_timeout is applied only by
 * PQconnectdb's blocking loop), so a first host whose packets are dropped (a
 * partition: nothing refuses the connection, it hangs) or that never answers
 * would take every call's whole time, and the next host would never be
 * tried.  NULL with err filled in, naming each host's failure.
 */
static PGconn *
connect_hosts(StoreHosts *h, int64 deadline, char *err, size_t errlen)
{
	int		   *order = palloc(h->nhosts * sizeof(int));
	char		one[256];
	const char *why;
	size_t		used = 0;

	for (int i = 0; i < h->nhosts; i++)
		order[i] = i;
	if (h->shuffle)
		for (int i = h->nhosts - 1; i > 0; i--)
		{
			int			j = (int) pg_prng_uint64_range(&pg_global_prng_state, 0, i);
			int			t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
	err[0] = '\0';
	for (int k = 0; k < h->nhosts; k++)
	{
		int			i = order[k];
		int64		now = cosid_monotonic_ms();
		int64		share = (deadline - now) / (h->nhosts - k);
		int64		until;
		bool		gave_up;
		PGconn	   *conn;
		char	   *name = list_element(h->host ? h->host : h->hostaddr, i);

		if (h->timeout_ms > 0 && h->timeout_ms < share)
			share = h->timeout_ms;
		until = now + share;
		conn = start_host(h, i);
		if (conn == NULL)
		{
			snprintf(err, errlen, "out of memory");
			pfree(name);
			break;
		}
		if (poll_host(conn, until, one, sizeof(one), &gave_up))
		{
			pfree(name);
			pfree(order);
			return conn;
		}
		PQfinish(conn);
		if (gave_up && ShutdownRequestPending && !draining)
		{
			strlcpy(err, one, errlen);
			pfree(name);
			break;
		}
		/* a host that did not answer in its time: the next one */
		if (gave_up)
			snprintf(one, sizeof(one), "did not answer within %lld ms", (long long) share);
		why = one;
		if (strncmp(why, CONNECT_FAILED, strlen(CONNECT_FAILED)) == 0)
			why += strlen(CONNECT_FAILED);
		used += snprintf(err + Min(used, errlen - 1), errlen - Min(used, errlen - 1), "%shost \"%s\": %s",
						 used == 0 ? CONNECT_FAILED : "; ", name, why);
		pfree(name);
		if (cosid_monotonic_ms() >= deadline)
			break;
	}
	pfree(order);
	return NULL;
}

/* Connect to a one-host conninfo (or one libpq judges itself); NULL with err filled in. */
static PGconn *
connect_one(const char *conninfo, int64 deadline, char *err, size_t errlen)
{
	PGconn	   *conn = PQconnectStart(conninfo);
	bool		gave_up;

	if (conn == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (poll_host(conn, deadline, err, errlen, &gave_up))
		return conn;
	/* gave up waiting, or failed: err says why */
	PQfinish(conn);
	return NULL;
}

/* Connect to the store; NULL with err filled in (one line) on failure. */
PGconn *
cosid_store_connect(const char *conninfo, char *err, size_t errlen, bool *untrusted)
{
	PGconn	   *volatile conn = NULL;
	volatile int64 deadline = call_deadline();	/* volatile: read inside PG_TRY */
	volatile bool trusted = false;
	volatile bool several;
	StoreHosts	hosts;

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
	several = store_hosts(conninfo, &hosts);
	/* libpq's memory is malloc'd: an error (a cancel) must not leak it */
	PG_TRY();
	{
		conn = several ? connect_hosts(&hosts, deadline, err, errlen) :
			connect_one(conninfo, deadline, err, errlen);
	}
	PG_CATCH();
	{
		if (several)
			PQconninfoFree(hosts.options);
		ReleaseExternalFD();
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (several)
		PQconninfoFree(hosts.options);
	if (conn == NULL)
	{
		ReleaseExternalFD();
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
	bool		ready;

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
				if (!wait_socket(conn, WL_SOCKET_READABLE, deadline, err, errlen, &ready))
					answered = false;
				else if (ready && !PQconsumeInput(conn))
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

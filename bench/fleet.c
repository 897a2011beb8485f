/*
 * fleet.c - the fleet simulator of make bench (bench/fleet.sh): N virtual
 * cosid servers, each holding a slot of one lease store the way a server's
 * slot worker does (src/worker.c, src/slot_lease.c), on one connection each,
 * all driven by one poll() loop.
 *
 * Each virtual server runs the worker's turn every COSID_WORKER_TURN_MS
 * (100 ms): without a slot it acquires one (the previous holder's window end
 * is where its window starts); then it records a window end when the window
 * needs extending (less than COSID_WINDOW_RENEW_MS = 700 ms left, and ids in
 * demand: "busy"; new end = max(now, start) + the lease source's lead, half
 * the TTL and 700 ms, at most 6 s, after the first renewal; 1 s before) or
 * when a renewal is due (half the TTL after the last one was sent).  So a
 * busy server renews about every half TTL (at most 5 s: the turn after less
 * than 700 ms are left), as an idle one does (until 1.4's longer lead a busy
 * one renewed every 300 ms: --lead-ms 1000; 1.4 before the fleet measurements
 * renewed every third of the TTL).  The worker's constants
 * (COSID_WINDOW_RENEW_MS, COSID_WINDOW_LEAD_MS, COSID_LEASE_RENEW_PART,
 * COSID_LEASE_LEAD_MAX_MS, COSID_LEASE_LEAD_MARGIN_MS) come from src/slot.h:
 * bench/fleet.sh passes them with -D.  A failed call
 * backs off (100 ms doubling to 2 s, each wait between half and all of
 * it: core/backoff.c's equal jitter), a lost lease is
 * acquired again.  As the worker does (src/store.c, cosid_store_keep), a
 * connection that broke, timed out with a call in flight or reached a store
 * that takes no writes (25006) is dropped, and the next turn after the
 * back-off connects again without blocking the other servers
 * (PQconnectStart, PQconnectPoll, then the pin and the trust check): with a
 * multi-host conninfo and target_session_attrs=read-write libpq finds the
 * new primary of a store that failed over.  With --segments R, virtual
 * servers also take R segment ranges a second in all
 * (cosid.segment_acquire, as a segment fetch does); with --restarts R, R of
 * them a second release their slot and acquire one again (a clean
 * restart), so acquire and release run beside the renewals.
 *
 * The statements are the worker's own, read from the C sources by
 * bench/fleet_sql.py (the file --sql names: acquire, renew, release, segment,
 * then the pin and trust statements a new store connection runs first and
 * the trust check's two parameters, one a line) and sent as the server sends
 * them: PQsendQueryParams, each parameter in text with the type its cast in
 * the statement names ($2::pg_catalog.int4: int4).
 *
 * Measured over --seconds after --warmup: every call's latency (send to
 * last result), per kind; the CPU the store's processes used (the
 * postmaster's children from /proc, and the postmaster's own and reaped
 * children's time) and PgBouncer's (--bouncer-pid); the store's client
 * connections (pg_stat_activity, through --admin); new connections made and
 * failed; how many servers were back at the end (a window open within its
 * last 2 s) and connected; when the last server got its first slot
 * (all_slots_ms, from the start ramp's beginning; -1: one never had one).
 * Printed as key=value lines; --mark FILE is
 * written when the measurement starts (bench/fleet.sh times its faults from
 * it).  At the end every virtual server releases its slot (for 30 s at
 * most).
 *
 *   fleet --conninfo C --admin C --sql FILE --n N [--seconds 15] [--warmup 5]
 *         [--ttl 10] [--idle] [--slot-bits 11] [--namespace fleet]
 *         [--prefix sim] [--store-pid PID] [--bouncer-pid PID] [--segments R]
 *         [--restarts R] [--lead-ms 1000] [--renew-ms 700] [--mark FILE]
 *         [--ramp-ms MS]
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "libpq-fe.h"

#if !defined(COSID_WORKER_TURN_MS) || !defined(COSID_LEASE_CALL_MIN_MS) || \
	!defined(COSID_WINDOW_RENEW_MS) || !defined(COSID_WINDOW_LEAD_MS) || \
	!defined(COSID_LEASE_RENEW_PART) || !defined(COSID_LEASE_LEAD_MAX_MS) || \
	!defined(COSID_LEASE_LEAD_MARGIN_MS) || !defined(COSID_BACKOFF_MIN_MS) || \
	!defined(COSID_BACKOFF_MAX_MS) || !defined(COSID_STORE_TIMEOUT_MS)
#error "build with the worker's constants from src/slot.h, src/slot_source.h, src/core/backoff.h and src/store.h (bench/fleet.sh passes them)"
#endif
#define TURN_MS COSID_WORKER_TURN_MS
#define RENEW_MS COSID_WINDOW_RENEW_MS
#define LEAD_MS COSID_WINDOW_LEAD_MS
#define LEASE_LEAD_MAX_MS COSID_LEASE_LEAD_MAX_MS
#define LEASE_LEAD_MARGIN_MS COSID_LEASE_LEAD_MARGIN_MS
#define BACKOFF_FIRST_MS COSID_BACKOFF_MIN_MS
#define BACKOFF_MAX_MS COSID_BACKOFF_MAX_MS
#define STORE_TIMEOUT_MS COSID_STORE_TIMEOUT_MS

enum Kind
{
	K_ACQUIRE,
	K_RENEW,
	K_RELEASE,
	K_SEGMENT,
	K_COUNT,
	/* a new connection's steps (the worker's cosid_store_connect) */
	K_CONNECT = K_COUNT,
	K_PIN,
	K_TRUST
};
static const char *kind_name[] = {"acquire", "renew", "release", "segment", "connect", "pin", "trust"};
static char *sql[K_COUNT];
static Oid	types[K_COUNT][8];
/* what a new connection runs first (src/store.c, store_trust) */
static char *pin_sql,
		   *trust_sql,
		   *trust_params[2];
static Oid	pin_types[8],
			trust_types[8];

/* The parameters' types, from their casts: $n::pg_catalog.name (or name[]). */
static void
param_types(const char *q, Oid *out, int max)
{
	static const struct
	{
		const char *name;
		Oid			oid;
	}			known[] = {{"text", 25}, {"int4", 23}, {"int8", 20}, {"interval", 1186},
	{"uuid", 2950}, {"name[]", 1003}, {"text[]", 1009}};
	const char *p = q;

	for (int i = 0; i < max; i++)
		out[i] = 0;
	while ((p = strchr(p, '$')) != NULL)
	{
		int			n = atoi(p + 1);
		const char *c = strstr(p, "::pg_catalog.");

		p++;
		if (n < 1 || n > max || c == NULL || c - p > 4)
			continue;
		c += strlen("::pg_catalog.");
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		{
			size_t		len = strlen(known[k].name);

			if (strncmp(c, known[k].name, len) == 0 &&
				(known[k].name[len - 1] == ']' || c[len] != '['))
			{
				out[n - 1] = known[k].oid;
				break;
			}
		}
		if (out[n - 1] == 0)
		{
			fprintf(stderr, "fleet: unknown type of $%d in %s\n", n, q);
			exit(2);
		}
	}
}

/* A new connection's first statements, as the server runs them: false on failure. */
static bool
setup_conn(PGconn *conn)
{
	const char *pin_params[2] = {"search_path", "pg_catalog, pg_temp"};
	PGresult   *r;
	bool		ok;

	PQsetnonblocking(conn, 0);
	r = PQexecParams(conn, pin_sql, 2, pin_types, pin_params, NULL, NULL, 0);
	ok = PQresultStatus(r) == PGRES_TUPLES_OK;
	PQclear(r);
	if (!ok)
		return false;
	r = PQexecParams(conn, trust_sql, 2, trust_types, (const char *const *) trust_params, NULL, NULL, 0);
	ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 0;
	PQclear(r);
	PQsetnonblocking(conn, 1);
	return ok;
}

typedef struct Holder
{
	PGconn	   *conn;			/* NULL: none (dropped after a failure) */
	PostgresPollingStatusType polling;	/* K_CONNECT: what PQconnectPoll said */
	int			slot;			/* -1: none */
	char		token[64];
	int64_t		start;
	int64_t		end;
	int64_t		renewed;
	int64_t		next_turn;
	int64_t		backoff_ms;
	int			inflight;		/* a kind, or -1 */
	int64_t		sent_us;
	int64_t		limit_us;		/* the worker's limit_to_lease: a call ends by then (0: none) */
	int64_t		pending_end;
	bool		offset_known;	/* store_offset measured */
	int64_t		store_offset;	/* our clock minus the store's, at most */
	bool		segment_due;
	bool		restart_due;	/* release, then acquire again */
	int64_t		closed_since;	/* busy: when its window last closed (0: open) */
	int64_t		longest_stall;	/* busy: the longest time it was closed */
	int64_t		last_open;		/* when its window was last seen open */
	int64_t		first_slot;		/* when its first acquire answered (0: not yet) */
	char		instance[64];
} Holder;

/* latencies (ms) of one kind within the window */
typedef struct Lat
{
	double	   *v;
	size_t		n,
				cap;
	long		errors;
} Lat;

static Lat	lat[K_COUNT];
static int	nholders;
static Holder *holders;
static const char *ns = "fleet";
static int	ttl_s = 10;

/* --lead-ms and --renew-ms: a fixed lead and renewal margin instead of the
 * worker's (what another lead would cost the store); 0: the worker's */
static int	lead_ms = 0;
static int	renew_ms = RENEW_MS;
static int	slot_bits = 11;
static bool busy = true;
static double segments_per_s = 0;
static double restarts_per_s = 0;
static bool measuring = false;
static long lost_leases = 0;
static long held_twice = 0;		/* checks that found two holders' windows of one slot overlapping */
static const char *conninfo = NULL;
static long reconnects = 0;		/* new connections made while measuring */
static long connect_errors = 0; /* connections that failed while measuring */

static int64_t
now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t) tv.tv_sec * 1000000 + tv.tv_usec;
}

static int64_t
now_ms(void)
{
	return now_us() / 1000;
}

/*
 * Calls of SLOW_MS or more while measuring, by the second they ended in
 * (wall clock): printed to stderr at the end, so that a tail can be set
 * beside the store's log (its checkpoints) and told from a queue of calls.
 */
#define SLOW_MS 20.0
#define SLOW_MAX 100000
static struct
{
	int64_t		at_ms;
	double		ms;
	int			kind;
}			slow[SLOW_MAX];
static long nslow = 0;

static void
slow_add(int kind, double ms)
{
	if (ms < SLOW_MS)
		return;
	if (nslow < SLOW_MAX)
	{
		slow[nslow].at_ms = now_ms();
		slow[nslow].ms = ms;
		slow[nslow].kind = kind;
	}
	nslow++;
}

/* One line a second that had slow calls: how many, of which kinds, the slowest. */
static void
slow_report(void)
{
	long		n = nslow < SLOW_MAX ? nslow : SLOW_MAX;

	fprintf(stderr, "fleet: %ld calls of %.0f ms or more%s\n", nslow, SLOW_MS,
			nslow > SLOW_MAX ? " (the first ones by the second below)" : (nslow > 0 ? ", by the second they ended in:" : ""));
	for (long i = 0; i < n;)
	{
		int64_t		sec = slow[i].at_ms / 1000;
		long		count[K_COUNT] = {0};
		double		worst = 0;
		time_t		t = (time_t) sec;
		struct tm	tm;
		char		when[16];

		for (; i < n && slow[i].at_ms / 1000 == sec; i++)
		{
			count[slow[i].kind]++;
			if (slow[i].ms > worst)
				worst = slow[i].ms;
		}
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		fprintf(stderr, "  %s UTC: slowest %.1f ms;", when, worst);
		for (int k = 0; k < K_COUNT; k++)
			if (count[k] > 0)
				fprintf(stderr, " %s %ld", kind_name[k], count[k]);
		fprintf(stderr, "\n");
	}
}

static void
lat_add(Lat *l, double ms)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->v = realloc(l->v, l->cap * sizeof(double));
		if (l->v == NULL)
		{
			perror("realloc");
			exit(1);
		}
	}
	l->v[l->n++] = ms;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static double
pct(Lat *l, double p)
{
	size_t		i;

	if (l->n == 0)
		return 0;
	i = (size_t) (p * (double) (l->n - 1) + 0.5);
	return l->v[i];
}

/*
 * The worker's limit_to_lease (slot_lease.c): while its lease lives, a
 * connect (with its pin and trust check) and a renewal give up after half
 * the time the lease has left, at least COSID_LEASE_CALL_MIN_MS; otherwise
 * each call has its own deadline only.
 */
static int64_t
lease_limit_us(const Holder *h, int64_t now)
{
	int64_t		left = h->renewed + (int64_t) ttl_s * 1000 - now;

	if (h->slot < 0 || h->renewed == 0 || left <= 0)
		return 0;
	return (now + (left / 2 > COSID_LEASE_CALL_MIN_MS ? left / 2 : COSID_LEASE_CALL_MIN_MS)) * 1000;
}

static void failed(Holder *h, int kind, int64_t now, const char *why, const char *sqlstate);
static void start_connect(Holder *h, int64_t now);

static void
send_call(Holder *h, int kind, int64_t now)
{
	char		slot_s[16],
				end_s[32],
				bits_s[16],
				ttl_s_text[32];
	const char *params[7];
	int			n = 0;

	snprintf(slot_s, sizeof(slot_s), "%d", h->slot);
	snprintf(bits_s, sizeof(bits_s), "%d", slot_bits);
	snprintf(ttl_s_text, sizeof(ttl_s_text), "%d seconds", ttl_s);
	switch (kind)
	{
		case K_ACQUIRE:
			params[n++] = ns;
			params[n++] = h->instance;
			params[n++] = bits_s;
			params[n++] = ttl_s_text;
			break;
		case K_RENEW:
			snprintf(end_s, sizeof(end_s), "%lld", (long long) h->pending_end);
			params[n++] = ns;
			params[n++] = slot_s;
			params[n++] = h->instance;
			params[n++] = h->token;
			params[n++] = end_s;
			params[n++] = ttl_s_text;
			break;
		case K_RELEASE:
			/*
			 * the worker's last end: the start of the last unit issued (a
			 * busy server issued until now; an idle one nothing past its
			 * window's start), not the end recorded ahead
			 */
			h->end = busy ? (now < h->end ? now : h->end) : h->start;
			if (h->end < h->start)
				h->end = h->start;
			/* the worker closes its window there before it releases */
			snprintf(end_s, sizeof(end_s), "%lld", (long long) h->end);
			params[n++] = ns;
			params[n++] = slot_s;
			params[n++] = h->instance;
			params[n++] = h->token;
			params[n++] = end_s;
			break;
		case K_SEGMENT:
			params[n++] = ns;
			params[n++] = "fleetdb";
			params[n++] = "fleet_segments";
			params[n++] = "postgres";
			params[n++] = "100";
			params[n++] = "1";
			params[n++] = "10";
			break;
	}
	h->sent_us = now_us();
	h->limit_us = kind == K_RENEW ? lease_limit_us(h, now) : 0;
	if (!PQsendQueryParams(h->conn, sql[kind], n, types[kind], params, NULL, NULL, 0))
	{
		h->inflight = -1;
		failed(h, kind, now, PQerrorMessage(h->conn), NULL);
		return;
	}
	PQflush(h->conn);
	h->inflight = kind;
}

/*
 * While measuring, every loop: no two holders' windows of one slot overlap
 * (a holder that lost its lease keeps its window until a renewal tells it,
 * and the next holder's must start at or above its end), and, with busy
 * holders, how long each one's window stayed closed (no id could be
 * issued: a store away, a restart's release and acquire).
 */
static void
check_windows(int64_t now, int *by_slot, int nslots)
{
	for (int s = 0; s < nslots; s++)
		by_slot[s] = -1;
	for (int i = 0; i < nholders; i++)
	{
		Holder	   *h = &holders[i];
		bool		open = h->slot >= 0 && h->end > now;

		if (open)
			h->last_open = now;
		if (busy && !open && h->closed_since == 0)
			h->closed_since = now;
		else if (open && h->closed_since != 0)
		{
			if (now - h->closed_since > h->longest_stall)
				h->longest_stall = now - h->closed_since;
			h->closed_since = 0;
		}
		if (h->slot < 0 || h->slot >= nslots || h->end == 0)
			continue;
		if (by_slot[h->slot] >= 0)
		{
			Holder	   *o = &holders[by_slot[h->slot]];

			if (!(h->start >= o->end || o->start >= h->end))
			{
				if (held_twice++ < 10)
					fprintf(stderr, "fleet: slot %d held twice: %s [%lld, %lld) and %s [%lld, %lld)\n", h->slot,
							o->instance, (long long) o->start, (long long) o->end, h->instance,
							(long long) h->start, (long long) h->end);
			}
		}
		else
			by_slot[h->slot] = i;
	}
}

/* The worker's turn (src/worker.c, worker_turn): maybe send one call. */
static void
turn(Holder *h, int64_t now)
{
	bool		extend;
	int64_t		lead,
				room;

	if (h->conn == NULL)
	{
		/* the worker connects again at its next turn after a back-off */
		start_connect(h, now);
		return;
	}
	if (h->slot < 0)
	{
		send_call(h, K_ACQUIRE, now);
		return;
	}
	if (h->restart_due)
	{
		/* a clean restart: release, then (next turn) acquire */
		h->restart_due = false;
		send_call(h, K_RELEASE, now);
		return;
	}
	extend = h->end == 0 || (h->end - now < renew_ms && busy);
	/* the lease source's lead (src/slot_lease.c, lease_lead_ms) */
	if (lead_ms > 0)
		lead = lead_ms;
	else if (!h->offset_known)
		lead = LEAD_MS;
	else
	{
		lead = (int64_t) ttl_s * 1000 / COSID_LEASE_RENEW_PART + RENEW_MS;
		lead = lead < LEASE_LEAD_MAX_MS ? lead : LEASE_LEAD_MAX_MS;
		room = (int64_t) ttl_s * 1000 + 1000 - (h->store_offset > 0 ? h->store_offset : 0)
			- (h->start > now ? h->start - now : 0) - LEASE_LEAD_MARGIN_MS;
		lead = lead < room ? lead : room;
		lead = lead > LEAD_MS ? lead : LEAD_MS;
	}
	if (!extend && !(now - h->renewed >= (int64_t) ttl_s * 1000 / COSID_LEASE_RENEW_PART))
	{
		if (h->segment_due)
		{
			h->segment_due = false;
			send_call(h, K_SEGMENT, now);
			return;
		}
		h->next_turn = now + TURN_MS;
		return;
	}
	{
		int64_t		base = now > h->start ? now : h->start;

		h->pending_end = extend ? (base + lead > h->end ? base + lead : h->end) : h->end;
	}
	send_call(h, K_RENEW, now);
}

/*
 * A call or a connection failed: count it, back off, and drop the
 * connection when the worker would (src/store.c, cosid_store_keep: it is
 * broken, a statement is still in flight, or the store takes no writes,
 * 25006); the next turn after the back-off connects again (start_connect).
 */
static void
failed(Holder *h, int kind, int64_t now, const char *why, const char *sqlstate)
{
	static long logged = 0;

	if (measuring)
	{
		if (kind < K_COUNT)
			lat[kind].errors++;
		else
			connect_errors++;
	}
	/* the message's first line (a store's error goes on with its CONTEXT) */
	if (logged++ < 10)
		fprintf(stderr, "fleet: %s of %s failed: %.*s\n", kind_name[kind], h->instance,
				(int) strcspn(why, "\n"), why);
	h->inflight = -1;
	/* equal jitter, as core/backoff.c: between half and all of the delay */
	h->next_turn = now + h->backoff_ms - h->backoff_ms / 2 + random() % (h->backoff_ms / 2 + 1);
	h->backoff_ms = h->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : h->backoff_ms * 2;
	if (h->conn != NULL &&
		(kind >= K_COUNT || PQstatus(h->conn) != CONNECTION_OK ||
		 PQtransactionStatus(h->conn) != PQTRANS_IDLE ||
		 (sqlstate != NULL && strcmp(sqlstate, "25006") == 0)))
	{
		PQfinish(h->conn);
		h->conn = NULL;
	}
}

/*
 * Connect without blocking the other holders (the worker's
 * cosid_store_connect: PQconnectStart and PQconnectPoll, then the pin and
 * the trust check, each within the store's deadline and the lease's
 * limit); libpq goes through a multi-host conninfo's hosts itself,
 * target_session_attrs included.  (The worker tries each host on its own,
 * for its share of the call: store.c.  Not modelled: the bench's hosts
 * refuse or answer, none hangs.)
 */
static void
start_connect(Holder *h, int64_t now)
{
	h->conn = PQconnectStart(conninfo);
	h->sent_us = now_us();
	h->limit_us = lease_limit_us(h, now);
	h->inflight = K_CONNECT;
	h->polling = PGRES_POLLING_WRITING;
	if (h->conn == NULL || PQstatus(h->conn) == CONNECTION_BAD)
		failed(h, K_CONNECT, now, h->conn ? PQerrorMessage(h->conn) : "out of memory", NULL);
}

/* The socket of a connection being made is ready: the next step. */
static void
connect_step(Holder *h, int64_t now)
{
	const char *pin_params[2] = {"search_path", "pg_catalog, pg_temp"};

	h->polling = PQconnectPoll(h->conn);
	if (h->polling == PGRES_POLLING_FAILED)
		failed(h, K_CONNECT, now, PQerrorMessage(h->conn), NULL);
	else if (h->polling == PGRES_POLLING_OK)
	{
		PQsetnonblocking(h->conn, 1);
		h->sent_us = now_us();
		h->inflight = K_PIN;
		if (!PQsendQueryParams(h->conn, pin_sql, 2, pin_types, pin_params, NULL, NULL, 0))
			failed(h, K_PIN, now, PQerrorMessage(h->conn), NULL);
		else
			PQflush(h->conn);
	}
}

/* A call's answer has come: act on it as the worker does. */
static void
answered(Holder *h, PGresult *res)
{
	int			kind = h->inflight;
	int64_t		now = now_ms();
	double		ms = (double) (now_us() - h->sent_us) / 1000.0;

	h->inflight = -1;
	if (kind == K_PIN || kind == K_TRUST)
	{
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK || (kind == K_TRUST && PQntuples(res) != 0))
		{
			failed(h, kind, now, res && PQresultStatus(res) != PGRES_TUPLES_OK ? PQresultErrorMessage(res) :
				   kind == K_TRUST && res ? "the store's cosid is not a superuser's" : PQerrorMessage(h->conn),
				   NULL);
			return;
		}
		if (kind == K_PIN)
		{
			h->sent_us = now_us();
			h->inflight = K_TRUST;
			if (!PQsendQueryParams(h->conn, trust_sql, 2, trust_types, (const char *const *) trust_params,
								   NULL, NULL, 0))
				failed(h, K_TRUST, now, PQerrorMessage(h->conn), NULL);
			else
				PQflush(h->conn);
			return;
		}
		/* connected: the same turn goes on (the worker's lease_poll, then the call) */
		if (measuring)
			reconnects++;
		turn(h, now);
		return;
	}
	if (measuring)
	{
		lat_add(&lat[kind], ms);
		slow_add(kind, ms);
	}
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

		if (kind == K_RENEW)
			h->offset_known = false;	/* the short lead until measured again */
		if (kind == K_RENEW && state != NULL && strcmp(state, "55000") == 0)
		{
			lost_leases++;
			h->slot = -1;
			h->end = 0;
		}
		failed(h, kind, now, res ? PQresultErrorMessage(res) : PQerrorMessage(h->conn), state);
		return;
	}
	h->backoff_ms = BACKOFF_FIRST_MS;
	switch (kind)
	{
		case K_ACQUIRE:
			if (h->first_slot == 0)
				h->first_slot = now;
			h->slot = atoi(PQgetvalue(res, 0, 0));
			h->start = atoll(PQgetvalue(res, 0, 1));
			snprintf(h->token, sizeof(h->token), "%s", PQgetvalue(res, 0, 2));
			h->end = 0;
			h->renewed = 0;
			h->offset_known = false;
			/* the same turn goes on to record the first window end */
			turn(h, now);
			return;
		case K_RENEW:
			h->end = h->pending_end;
			/* from when it was sent, as the worker counts (lease_record_end) */
			h->renewed = h->sent_us / 1000;
			/* the answer is the lease's expiry (Unix seconds): the offset */
			h->offset_known = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
			if (h->offset_known)
				h->store_offset = now - ((int64_t) (atof(PQgetvalue(res, 0, 0)) * 1000.0) - (int64_t) ttl_s * 1000);
			break;
		case K_RELEASE:
			h->slot = -1;
			h->end = 0;
			break;
		default:
			break;
	}
	h->next_turn = now + TURN_MS;
}

/*
 * CPU time of one process in nanoseconds: the scheduler's own count
 * (/proc/PID/schedstat, its first field), not the clock ticks of
 * /proc/PID/stat.  Those are truncated to 10 ms for each process, and a
 * store of 1,024 backends each using a fraction of a millisecond a second
 * lost most of its time to them: SELECT 1 at 205 a second over 1,024
 * connections read 0.15% of a core in ticks against 4.7% in schedstat.
 * ticks: the /proc/PID/stat reading (utime + stime), used when there is no
 * schedstat.
 */
static long long
proc_ns(int pid, long ticks)
{
	char		path[64];
	long long	ns;
	FILE	   *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if ((f = fopen(path, "r")) != NULL)
	{
		int			got = fscanf(f, "%lld", &ns);

		fclose(f);
		/* a kernel without schedstats reads 0: fall back to the ticks */
		if (got == 1 && (ns > 0 || ticks == 0))
			return ns;
	}
	return ticks * (1000000000LL / sysconf(_SC_CLK_TCK));
}

/*
 * CPU time of a process tree in nanoseconds: pid's own, its live children's
 * (with_children) and its reaped children's (/proc/PID/stat's cutime and
 * cstime: one truncation to a tick for all of them).
 */
static long long
proc_cpu_ns(int pid, bool with_children)
{
	long long	total = 0;
	long		tick_ns = 1000000000L / sysconf(_SC_CLK_TCK);
	char		path[64],
				buf[1024];
	FILE	   *f;
	DIR		   *d;
	struct dirent *e;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) != NULL)
	{
		if (fgets(buf, sizeof(buf), f))
		{
			char	   *p = strrchr(buf, ')');
			long		ut,
						st,
						cut,
						cst;

			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld %ld %ld",
							&ut, &st, &cut, &cst) == 4)
				total += proc_ns(pid, ut + st) + (long long) (cut + cst) * tick_ns;
		}
		fclose(f);
	}
	if (!with_children || (d = opendir("/proc")) == NULL)
		return total;
	while ((e = readdir(d)) != NULL)
	{
		int			child = atoi(e->d_name);

		if (child <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", child);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f))
		{
			char	   *p = strrchr(buf, ')');
			int			ppid;
			long		ut,
						st;

			if (p && sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld",
							&ppid, &ut, &st) == 3 && ppid == pid)
				total += proc_ns(child, ut + st);
		}
		fclose(f);
	}
	closedir(d);
	return total;
}

static void
give_up(int sig)
{
	static const char msg[] = "fleet: the store did not answer the releases within 30 s: not waiting\n";

	(void) sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(0);
	_exit(0);
}

static char *
read_line(FILE *f)
{
	char		buf[4096];
	size_t		len;

	if (!fgets(buf, sizeof(buf), f))
		return NULL;
	len = strlen(buf);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	return strdup(buf);
}

int
main(int argc, char **argv)
{
	const char *admin = NULL,
			   *mark = NULL,
			   *sqlfile = NULL,
			   *prefix = "sim";
	int			seconds = 15,
				warmup = 5,
				store_pid = 0,
				bouncer_pid = 0;
	struct pollfd *pfd;
	int		   *by_slot;
	int			nslots;
	int64_t		t0,
				ramp0,
				m0 = 0,
				m1 = 0;
	long long	cpu0 = 0,
				cpu1 = 0,
				bcpu0 = 0,
				bcpu1 = 0;
	long		conns = -1;
	long		back = 0,
				connected = 0;
	double		seg_credit = 0;
	double		restart_credit = 0;
	int64_t		last_loop;
	int			ramp_ms = -1;
	FILE	   *f;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--idle") == 0)
		{
			busy = false;
			continue;
		}
		if (v == NULL)
		{
			fprintf(stderr, "fleet: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (strcmp(a, "--conninfo") == 0)
			conninfo = v;
		else if (strcmp(a, "--admin") == 0)
			admin = v;
		else if (strcmp(a, "--mark") == 0)
			mark = v;
		else if (strcmp(a, "--ramp-ms") == 0)
			ramp_ms = atoi(v);
		else if (strcmp(a, "--sql") == 0)
			sqlfile = v;
		else if (strcmp(a, "--n") == 0)
			nholders = atoi(v);
		else if (strcmp(a, "--seconds") == 0)
			seconds = atoi(v);
		else if (strcmp(a, "--warmup") == 0)
			warmup = atoi(v);
		else if (strcmp(a, "--ttl") == 0)
			ttl_s = atoi(v);
		else if (strcmp(a, "--lead-ms") == 0)
			lead_ms = atoi(v);
		else if (strcmp(a, "--renew-ms") == 0)
			renew_ms = atoi(v);
		else if (strcmp(a, "--slot-bits") == 0)
			slot_bits = atoi(v);
		else if (strcmp(a, "--namespace") == 0)
			ns = v;
		else if (strcmp(a, "--prefix") == 0)
			prefix = v;
		else if (strcmp(a, "--store-pid") == 0)
			store_pid = atoi(v);
		else if (strcmp(a, "--bouncer-pid") == 0)
			bouncer_pid = atoi(v);
		else if (strcmp(a, "--segments") == 0)
			segments_per_s = atof(v);
		else if (strcmp(a, "--restarts") == 0)
			restarts_per_s = atof(v);
		else
		{
			fprintf(stderr, "fleet: unknown option %s\n", a);
			return 2;
		}
	}
	if (conninfo == NULL || sqlfile == NULL || nholders <= 0)
	{
		fprintf(stderr, "usage: fleet --conninfo C --sql FILE --n N [options] (see fleet.c)\n");
		return 2;
	}
	if ((f = fopen(sqlfile, "r")) == NULL)
	{
		perror(sqlfile);
		return 2;
	}
	for (int k = 0; k < K_COUNT; k++)
		if ((sql[k] = read_line(f)) == NULL)
		{
			fprintf(stderr, "fleet: %s has no %s statement\n", sqlfile, kind_name[k]);
			return 2;
		}
		else
			param_types(sql[k], types[k], 8);
	if ((pin_sql = read_line(f)) == NULL || (trust_sql = read_line(f)) == NULL ||
		(trust_params[0] = read_line(f)) == NULL || (trust_params[1] = read_line(f)) == NULL)
	{
		fprintf(stderr, "fleet: %s lacks the connection's statements\n", sqlfile);
		return 2;
	}
	param_types(pin_sql, pin_types, 8);
	param_types(trust_sql, trust_types, 8);
	fclose(f);

	holders = calloc(nholders, sizeof(Holder));
	pfd = calloc(nholders, sizeof(struct pollfd));
	nslots = slot_bits < 20 ? 1 << slot_bits : 1 << 20;
	by_slot = calloc(nslots, sizeof(int));
	srandom((unsigned) now_us());
	t0 = now_ms();
	for (int i = 0; i < nholders; i++)
	{
		Holder	   *h = &holders[i];

		h->conn = PQconnectdb(conninfo);
		if (PQstatus(h->conn) != CONNECTION_OK)
		{
			fprintf(stderr, "fleet: connection %d: %s", i, PQerrorMessage(h->conn));
			return 1;
		}
		if (!setup_conn(h->conn))
		{
			fprintf(stderr, "fleet: connection %d: pinning or the trust check failed: %s", i,
					PQerrorMessage(h->conn));
			return 1;
		}
		h->slot = -1;
		h->inflight = -1;
		h->backoff_ms = BACKOFF_FIRST_MS;
		snprintf(h->instance, sizeof(h->instance), "%s-%d", prefix, i);
	}
	fprintf(stderr, "fleet: %d connections in %lld ms\n", nholders, (long long) (now_ms() - t0));
	/*
	 * Start at random times over the ramp (--ramp-ms; 5 ms a server, at
	 * least 1 s), as servers started over a while; the warm-up begins after
	 * it.
	 */
	t0 = now_ms();
	ramp0 = t0;
	if (ramp_ms <= 0)
		ramp_ms = nholders * 5 > 1000 ? nholders * 5 : 1000;
	for (int i = 0; i < nholders; i++)
		holders[i].next_turn = t0 + random() % ramp_ms;
	t0 += ramp_ms;

	last_loop = t0;
	for (;;)
	{
		int64_t		now = now_ms();
		int64_t		wake = now + TURN_MS;
		int			np;

		if (!measuring && m0 == 0 && now >= t0 + warmup * 1000)
		{
			measuring = true;
			m0 = now;
			cpu0 = proc_cpu_ns(store_pid, true);
			bcpu0 = proc_cpu_ns(bouncer_pid, false);
			if (mark != NULL && (f = fopen(mark, "w")) != NULL)
			{
				/* for a fault timed from the start of the measurement */
				fprintf(f, "%lld\n", (long long) now);
				fclose(f);
			}
		}
		if (measuring)
			check_windows(now, by_slot, nslots);
		if (measuring && now >= m0 + seconds * 1000)
		{
			measuring = false;
			m1 = now;
			for (int i = 0; i < nholders; i++)
			{
				Holder	   *h = &holders[i];

				if (h->closed_since != 0 && now - h->closed_since > h->longest_stall)
					h->longest_stall = now - h->closed_since;
				/*
				 * back at the end: a window open within the last 2 s (a clean
				 * restart closes it for a turn or two), a connection made
				 */
				back += now - h->last_open < 2000;
				connected += h->conn != NULL && h->inflight < K_COUNT && PQstatus(h->conn) == CONNECTION_OK;
			}
			cpu1 = proc_cpu_ns(store_pid, true);
			bcpu1 = proc_cpu_ns(bouncer_pid, false);
			break;
		}
		/* segment fetches: R a second, each by a random holder */
		seg_credit += segments_per_s * (double) (now - last_loop) / 1000.0;
		while (seg_credit >= 1)
		{
			holders[random() % nholders].segment_due = true;
			seg_credit -= 1;
		}
		restart_credit += restarts_per_s * (double) (now - last_loop) / 1000.0;
		while (restart_credit >= 1)
		{
			holders[random() % nholders].restart_due = true;
			restart_credit -= 1;
		}
		last_loop = now;
		for (int i = 0; i < nholders; i++)
		{
			Holder	   *h = &holders[i];

			if (h->inflight < 0 && h->next_turn <= now)
				turn(h, now);
			if (h->inflight >= 0 &&
				(now_us() - h->sent_us > (int64_t) STORE_TIMEOUT_MS * 1000 ||
				 (h->limit_us > 0 && now_us() > h->limit_us)))
			{
				/*
				 * the worker's deadline: give up (a statement still in
				 * flight: failed() drops the connection)
				 */
				failed(h, h->inflight, now, "timed out", NULL);
			}
			if (h->inflight < 0 && h->next_turn < wake)
				wake = h->next_turn;
			pfd[i].fd = h->conn != NULL ? PQsocket(h->conn) : -1;
			pfd[i].events = h->inflight == K_CONNECT ?
				(h->polling == PGRES_POLLING_READING ? POLLIN : POLLOUT) :
				h->inflight >= 0 ? POLLIN : 0;
			pfd[i].revents = 0;
		}
		np = poll(pfd, nholders, (int) (wake > now ? wake - now : 0));
		if (np < 0 && errno != EINTR)
		{
			perror("poll");
			return 1;
		}
		for (int i = 0; i < nholders && np > 0; i++)
		{
			Holder	   *h = &holders[i];
			PGresult   *res,
					   *last = NULL;

			if (!(pfd[i].revents & (POLLIN | POLLOUT | POLLERR | POLLHUP)) || h->inflight < 0)
				continue;
			if (h->inflight == K_CONNECT)
			{
				connect_step(h, now_ms());
				continue;
			}
			if (!PQconsumeInput(h->conn))
			{
				failed(h, h->inflight, now_ms(), PQerrorMessage(h->conn), NULL);
				continue;
			}
			if (PQisBusy(h->conn))
				continue;
			while ((res = PQgetResult(h->conn)) != NULL)
			{
				PQclear(last);
				last = res;
			}
			answered(h, last);
			PQclear(last);
		}
	}

	if (admin != NULL)
	{
		PGconn	   *a = PQconnectdb(admin);
		PGresult   *r = PQexec(a, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");

		if (PQresultStatus(r) == PGRES_TUPLES_OK)
			conns = atol(PQgetvalue(r, 0, 0));
		PQclear(r);
		PQfinish(a);
	}

	{
		double		secs = (double) (m1 - m0) / 1000.0;
		long		held = 0;

		for (int i = 0; i < nholders; i++)
			held += holders[i].slot >= 0;
		printf("holders=%d\nbusy=%d\nseconds=%.1f\nheld=%ld\nlost_leases=%ld\n", nholders, busy, secs, held,
			   lost_leases);
		printf("back=%ld\nconnected=%ld\nreconnects=%ld\nconnect_errors=%ld\n", back, connected, reconnects,
			   connect_errors);
		printf("held_twice=%ld\n", held_twice);
		/*
		 * how long the start took: from the ramp's start until every holder
		 * had its first slot (-1: one never had one)
		 */
		{
			int64_t		last = 0;

			for (int i = 0; i < nholders && last >= 0; i++)
				last = holders[i].first_slot == 0 ? -1 :
					holders[i].first_slot > last ? holders[i].first_slot : last;
			printf("all_slots_ms=%lld\n", (long long) (last < 0 ? -1 : last - ramp0));
		}
		if (busy)
		{
			double	   *st = malloc(sizeof(double) * nholders);
			Lat			sl = {st, (size_t) nholders, (size_t) nholders, 0};

			for (int i = 0; i < nholders; i++)
				st[i] = (double) holders[i].longest_stall;
			qsort(st, nholders, sizeof(double), cmp_double);
			printf("stall_p50_ms=%.0f\nstall_p99_ms=%.0f\nstall_max_ms=%.0f\n", pct(&sl, 0.50), pct(&sl, 0.99),
				   st[nholders - 1]);
			free(st);
		}
		printf("store_cpu_pct=%.1f\n", 100.0 * (double) (cpu1 - cpu0) / 1e9 / secs);
		if (bouncer_pid > 0)
			printf("bouncer_cpu_pct=%.1f\n", 100.0 * (double) (bcpu1 - bcpu0) / 1e9 / secs);
		printf("store_connections=%ld\n", conns);
		for (int k = 0; k < K_COUNT; k++)
		{
			Lat		   *l = &lat[k];

			qsort(l->v, l->n, sizeof(double), cmp_double);
			printf("%s_calls=%zu\n%s_per_s=%.1f\n%s_errors=%ld\n", kind_name[k], l->n, kind_name[k],
				   (double) l->n / secs, kind_name[k], l->errors);
			if (l->n > 0)
				printf("%s_p50_ms=%.2f\n%s_p99_ms=%.2f\n%s_p999_ms=%.2f\n%s_max_ms=%.2f\n",
					   kind_name[k], pct(l, 0.50), kind_name[k], pct(l, 0.99), kind_name[k],
					   pct(l, 0.999), kind_name[k], l->v[l->n - 1]);
		}
	}

	slow_report();

	/*
	 * give every slot back, as a clean shutdown does; a store that hangs
	 * (commits waiting for a synchronous standby that is gone) must not hang
	 * the bench: the figures are out, and 30 s end it
	 */
	fflush(stdout);
	signal(SIGALRM, give_up);
	alarm(30);
	for (int i = 0; i < nholders; i++)
	{
		Holder	   *h = &holders[i];
		PGresult   *res;

		if (h->conn == NULL)
			continue;
		if (h->inflight >= K_COUNT || PQstatus(h->conn) != CONNECTION_OK)
		{
			/* a connection being made: drop it */
			PQfinish(h->conn);
			continue;
		}
		/* a call still out: wait for its answer (blocking) */
		PQsetnonblocking(h->conn, 0);
		while ((res = PQgetResult(h->conn)) != NULL)
			PQclear(res);
		if (h->slot >= 0)
		{
			char		slot_s[16],
						end_s[32];
			const char *params[5] = {ns, slot_s, h->instance, h->token, end_s};

			snprintf(slot_s, sizeof(slot_s), "%d", h->slot);
			snprintf(end_s, sizeof(end_s), "%lld", (long long) h->end);
			PQclear(PQexecParams(h->conn, sql[K_RELEASE], 5, types[K_RELEASE], params, NULL, NULL, 0));
		}
		PQfinish(h->conn);
	}
	return 0;
}

/*
 * slot_lease.c - the leased slot (cosid.slot = 'lease'): a slot source.
 *
 * The slot comes from a lease store: any PostgreSQL with cosid 1.1 or later
 * installed, reached with libpq (cosid.lease_store, store.c).  Its SQL
 * functions (cosid.lease_acquire, lease_renew, lease_release) are each
 * atomic, so a slot is held by one instance at a time, and a new holder
 * learns the window end its previous holder recorded and starts no earlier.
 * Acquire returns a fencing token that renew and release require: once the
 * slot was taken again (by another instance, or by this one restarted), an
 * older holder can neither extend nor release it.  From 1.3 the store also
 * binds the lease to the role this server logs in as (one role per server,
 * docs/operations.md, "Several servers"): no other role can take, renew or release it.
 *
 * Every new window end is recorded in the store (lease_renew) before
 * backends may use it, which also extends the lease; half the TTL after
 * the last renewal (slot.h, COSID_LEASE_RENEW_PART) the same end is
 * recorded again.  While the store is
 * away, ids are issued until the window ends, then 55000; the source
 * tries again after the back-off of core/backoff.h (the one the segment
 * fetches use), logs a failure at that scheme's rate, and issuing resumes.
 * A renewal that finds the lease taken reports the slot lost.  At clean
 * shutdown the slot is released with the start of the last unit issued.  Nothing is written locally, so
 * this works on a standby.
 *
 * Another role naming this server's instance id in lease_acquire gets a
 * free slot, never this lease: the store's choice (1.3) over refusing it
 * with 42501, which would let a role squat a stopped server's instance id
 * and keep that server from its slot.
 *
 * Owns: the store connection of the slot worker, the fencing token, and
 * what it reports in shared memory (CosidLeaseStatus, for cosid_slot()).
 * Must not: touch the window (the worker does) or write local files.
 */
#include "slot_lease.h"
#include "slot.h"
#include "store.h"
#include "core/backoff.h"

#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_type_d.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/postmaster.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/wait_event.h"

typedef struct LeaseShared
{
	slock_t		lock;			/* protects the fields below but failures */
	bool		store_connected;
	int64		last_renewal_ms;
	char		last_error[256];
	char		instance[256];
	pg_atomic_uint64 renewal_failures;
} LeaseShared;

static LeaseShared *lease_shared = NULL;

/*
 * The store's cosid that the statements below need: 1.1 made
 * cosid.lease_acquire return a fencing token and lease_renew and
 * lease_release take it, the signatures called here (1.3 changed what they
 * do, not how they are called).
 */
#define LEASE_FUNCTIONS_VERSION "1.1"

/* The store's SQLSTATE for a renew or release refused because the lease is not ours. */
#define LEASE_NOT_OURS "55000"

/* the slot worker's own state */
static PGconn *conn = NULL;
static char instance_id[256];
static char token[64] = "";		/* the fencing token of our lease */
static CosidBackoff backoff;	/* the store's failures (core/backoff.h) */
static int64 renewed = 0;		/* when we sent the renewal the store last
								 * answered, on the monotonic clock (a clock
								 * set back must not put off renewals); 0:
								 * not yet */
static bool offset_known = false;	/* store_offset_ms measured */
static int64 store_offset_ms = 0;	/* our clock minus the store's, at most: from
									 * the last renewal's answer */

/* ---------- what cosid_slot() shows ---------- */

Size
cosid_lease_shmem_size(void)
{
	return MAXALIGN(sizeof(LeaseShared));
}

/* Called under AddinShmemInitLock. */
void
cosid_lease_shmem_init(void)
{
	bool		found;

	lease_shared = ShmemInitStruct("cosid lease status", sizeof(LeaseShared), &found);
	if (!found)
	{
		memset(lease_shared, 0, sizeof(LeaseShared));
		SpinLockInit(&lease_shared->lock);
		pg_atomic_init_u64(&lease_shared->renewal_failures, 0);
	}
}

void
cosid_lease_status(CosidLeaseStatus *out)
{
	SpinLockAcquire(&lease_shared->lock);
	out->store_connected = lease_shared->store_connected;
	out->last_renewal_ms = lease_shared->last_renewal_ms;
	strlcpy(out->last_error, lease_shared->last_error, sizeof(out->last_error));
	strlcpy(out->instance, lease_shared->instance, sizeof(out->instance));
	SpinLockRelease(&lease_shared->lock);
	out->renewal_failures = pg_atomic_read_u64(&lease_shared->renewal_failures);
}

bool
cosid_lease_store_away(void)
{
	bool		away;

	if (!cosid_lease_mode())
		return false;
	SpinLockAcquire(&lease_shared->lock);
	away = !lease_shared->store_connected;
	SpinLockRelease(&lease_shared->lock);
	return away;
}

static void
set_store_state(bool connected, const char *error)
{
	SpinLockAcquire(&lease_shared->lock);
	lease_shared->store_connected = connected;
	if (error != NULL)
		strlcpy(lease_shared->last_error, error, sizeof(lease_shared->last_error));
	SpinLockRelease(&lease_shared->lock);
}

static void
disconnect(void)
{
	cosid_store_disconnect(conn);
	conn = NULL;
}

/*
 * After a statement that failed: keep the connection when the store
 * answered with an error (it is idle), drop it when it broke or did not
 * answer in time (a statement may be in flight), or when the store takes no
 * writes any more (cosid_store_keep: the next connection finds the one that
 * does).
 */
static void
drop_if_unusable(const char *sqlstate)
{
	if (conn != NULL && !cosid_store_keep(conn, sqlstate))
		disconnect();
}

typedef enum LeaseFailure
{
	FAILED_CONNECT,
	FAILED_UNTRUSTED,
	FAILED_ACQUIRE,
	FAILED_RENEW
} LeaseFailure;

/*
 * A failure: count it, start or lengthen the back-off, and log it at the
 * rate of core/backoff.h, with how many like it went unlogged.
 */
static void
lease_failed(LeaseFailure what, int slot, const char *err)
{
	CosidBackoffStep step = cosid_backoff_failed(&backoff, cosid_monotonic_ms(),
												  pg_prng_uint32(&pg_global_prng_state));

	pg_atomic_fetch_add_u64(&lease_shared->renewal_failures, 1);
	set_store_state(conn != NULL && PQstatus(conn) == CONNECTION_OK, err);
	if (!step.report)
		return;
	switch (what)
	{
		case FAILED_CONNECT:
			ereport(LOG,
					(errmsg("cosid slot worker could not reach the lease store: %s", err),
					 cosid_backoff_errdetail(step)));
			break;
		case FAILED_UNTRUSTED:
			ereport(WARNING,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("cosid slot worker refuses the lease store: %s", err),
					 errdetail(COSID_STORE_UNTRUSTED_DETAIL),
					 errhint(COSID_STORE_UNTRUSTED_HINT)));
			break;
		case FAILED_ACQUIRE:
			ereport(LOG,
					(errmsg("cosid slot worker could not lease a slot: %s", err),
					 cosid_backoff_errdetail(step)));
			break;
		case FAILED_RENEW:
			ereport(LOG,
					(errmsg("cosid slot worker could not renew the lease of slot %d: %s", slot, err),
					 cosid_backoff_errdetail(step)));
			break;
	}
}

/* A statement worked: end the back-off, and say so when it was running. */
static void
lease_worked(void)
{
	uint32		failures = cosid_backoff_succeeded(&backoff);

	if (failures > 0)
		ereport(LOG,
				(errmsg_plural("cosid slot worker reaches the lease store again, after %u failed attempt",
							   "cosid slot worker reaches the lease store again, after %u failed attempts",
							   failures, failures)));
}

/*
 * Run one of the lease functions on the store; NULL with err filled in,
 * sqlstate set as cosid_store_run sets it, and *lost set when the store said
 * the lease is no longer ours (taken by another instance, or by this one
 * restarted).
 */
static PGresult *
lease_run(const char *sql, int nparams, const Oid *types, const char *const *params,
		  char *err, size_t errlen, char *sqlstate, bool *lost)
{
	PGresult   *res = cosid_store_run(conn, sql, nparams, types, params,
									  LEASE_FUNCTIONS_VERSION, err, errlen, sqlstate);

	*lost = strcmp(sqlstate, LEASE_NOT_OURS) == 0;
	return res;
}

static void
ttl_text(char *buf, size_t len)
{
	snprintf(buf, len, "%d seconds", cosid_lease_ttl);
}

/*
 * While we hold a lease the store renewed, a call to the store (and the
 * connection made for it) ends by half the time the lease has left
 * (COSID_STORE_TIMEOUT_MS at most, COSID_LEASE_CALL_MIN_MS at least): a
 * call the store never answers (a partition that drops packets, a store
 * that hangs) then leaves time to connect again and renew before the lease
 * expires, which a renewal every half TTL with the full timeout would not
 * (at TTL 10 s: due 5 s after the last, given up at 7.5 s, not 10 s).
 * Without a lease, or once it has expired, the full timeout: nothing is left
 * to protect, and a store slower than the short limit must still be able to
 * answer.
 */
static void
limit_to_lease(void)
{
	int64		now = cosid_monotonic_ms();
	int64		left = renewed + (int64) cosid_lease_ttl * 1000 - now;

	if (token[0] == '\0' || renewed == 0 || left <= 0)
		cosid_store_limit(0);
	else
		cosid_store_limit(now + Max(left / 2, COSID_LEASE_CALL_MIN_MS));
}

/* ---------- the source ---------- */

/* This server's instance id: the setting, or system identifier, host and port. */
static void
lease_start(void)
{
	char		host[128];

	if (cosid_instance_id != NULL && cosid_instance_id[0] != '\0')
		strlcpy(instance_id, cosid_instance_id, sizeof(instance_id));
	else
	{
		if (gethostname(host, sizeof(host)) != 0)
			strlcpy(host, "localhost", sizeof(host));
		host[sizeof(host) - 1] = '\0';
		snprintf(instance_id, sizeof(instance_id), UINT64_FORMAT ":%s:%d",
				 GetSystemIdentifier(), host, PostPortNumber);
	}
	SpinLockAcquire(&lease_shared->lock);
	strlcpy(lease_shared->instance, instance_id, sizeof(lease_shared->instance));
	SpinLockRelease(&lease_shared->lock);
	ereport(LOG,
			(errmsg("cosid slot worker leases a slot of namespace \"%s\" as instance \"%s\"",
					cosid_namespace, instance_id)));
}

/*
 * Keep a connection to the store.  While a back-off runs nothing is tried,
 * even when a backend's request woke the worker early.
 */
static bool
lease_poll(void)
{
	char		err[512];
	bool		untrusted;

	if (!cosid_backoff_may_try(&backoff, cosid_monotonic_ms()))
		return false;
	if (conn != NULL)
		return true;
	limit_to_lease();
	conn = cosid_store_connect(cosid_lease_store, err, sizeof(err), &untrusted);
	cosid_store_limit(0);
	if (conn == NULL)
	{
		lease_failed(untrusted ? FAILED_UNTRUSTED : FAILED_CONNECT, -1, err);
		return false;
	}
	set_store_state(true, NULL);
	return true;
}

/* The rest of the back-off, or a turn when none runs. */
static int
lease_retry_ms(void)
{
	int64		left = backoff.retry_at_ms - cosid_monotonic_ms();

	if (backoff.failures == 0 || left <= 0)
		return COSID_WORKER_TURN_MS;
	return (int) Min(left, COSID_BACKOFF_MAX_MS);
}

static bool
lease_acquire(int *slot, int64 *start_ms)
{
	char		err[512];
	char		ttl[32];
	char		slot_bits[16];
	bool		lost;
	char		sqlstate[6];
	PGresult   *res;
	const char *params[4] = {cosid_namespace, instance_id, slot_bits, ttl};
	static const Oid types[4] = {TEXTOID, TEXTOID, INT4OID, INTERVALOID};

	/* the store counts the slots itself: 1 << 31 does not fit an int */
	snprintf(slot_bits, sizeof(slot_bits), "%d", cosid_machine_bits);
	ttl_text(ttl, sizeof(ttl));
	res = lease_run("SELECT slot, previous_end, token FROM cosid.lease_acquire("
					"$1::pg_catalog.text, $2::pg_catalog.text, $3::pg_catalog.int4, $4::pg_catalog.interval)",
					4, types, params, err, sizeof(err), sqlstate, &lost);
	if (res == NULL)
	{
		drop_if_unusable(sqlstate);
		lease_failed(FAILED_ACQUIRE, -1, err);
		return false;
	}
	lease_worked();
	*slot = atoi(PQgetvalue(res, 0, 0));
	*start_ms = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	strlcpy(token, PQgetvalue(res, 0, 2), sizeof(token));
	PQclear(res);
	renewed = 0;
	offset_known = false;
	ereport(LOG,
			(errmsg("cosid slot worker leased slot %d of namespace \"%s\"; its window starts at %s",
					*slot, cosid_namespace, cosid_ms_text(*start_ms))));
	return true;
}

static void
lease_opened(int slot, int64 start_ms, int64 now_ms)
{
}

static bool
lease_renewal_due(int64 now_ms)
{
	return renewed == 0 ||
		cosid_monotonic_ms() - renewed >= (int64) cosid_lease_ttl * 1000 / COSID_LEASE_RENEW_PART;
}

/*
 * The lead of a new window end (slot.h): half the TTL and the renewal
 * margin, so a busy server's extension is the renewal its lease needs anyway,
 * up to COSID_LEASE_LEAD_MAX_MS; kept COSID_LEASE_LEAD_MARGIN_MS inside
 * what the store takes (the TTL and a second ahead of its clock) from the
 * offset measured at the last renewal and how far the window's base is
 * ahead of our clock (a start after a holder whose clock ran ahead);
 * COSID_WINDOW_LEAD_MS until an offset
 * was measured (after an acquire, and after any failed renewal: a clock
 * that jumped ahead is refused once, then gets the short lead), and at
 * least that.
 */
static int64
lease_lead_ms(int64 ahead_ms)
{
	int64		ttl_ms = (int64) cosid_lease_ttl * 1000;
	int64		lead = Min(ttl_ms / COSID_LEASE_RENEW_PART + COSID_WINDOW_RENEW_MS, COSID_LEASE_LEAD_MAX_MS);

	if (!offset_known)
		return COSID_WINDOW_LEAD_MS;
	lead = Min(lead, ttl_ms + 1000 - Max(store_offset_ms, 0) - Max(ahead_ms, 0) - COSID_LEASE_LEAD_MARGIN_MS);
	return Max(lead, COSID_WINDOW_LEAD_MS);
}

/*
 * Our clock's offset to the store's, from a renewal's answer (the lease's
 * expiry, Unix seconds): the store read its clock before it answered, so
 * the offset found is at least the true one (a lead from it is never too
 * long).
 */
static void
measure_offset(const char *expiry_s)
{
	char	   *end;
	double		expiry = strtod(expiry_s, &end);
	int64		store_now_ms;

	if (end == expiry_s || *end != '\0' || !(expiry > 0 && expiry < 1e12))
	{
		offset_known = false;
		return;
	}
	store_now_ms = (int64) (expiry * 1000.0) - (int64) cosid_lease_ttl * 1000;
	store_offset_ms = (int64) cosid_now_ms() - store_now_ms;
	offset_known = true;
}

static CosidRecordResult
lease_record_end(int slot, int64 end_ms, int64 now_ms)
{
	char		err[512];
	char		ttl[32];
	char		slot_s[16];
	char		end_s[32];
	bool		lost;
	char		sqlstate[6];
	PGresult   *res;
	int64		sent;
	const char *params[6] = {cosid_namespace, slot_s, instance_id, token, end_s, ttl};
	static const Oid types[6] = {TEXTOID, INT4OID, TEXTOID, UUIDOID, INT8OID, INTERVALOID};

	snprintf(slot_s, sizeof(slot_s), "%d", slot);
	snprintf(end_s, sizeof(end_s), INT64_FORMAT, end_ms);
	ttl_text(ttl, sizeof(ttl));
	limit_to_lease();
	sent = cosid_monotonic_ms();
	res = lease_run("SELECT pg_catalog.date_part('epoch', "
					"cosid.lease_renew($1::pg_catalog.text, $2::pg_catalog.int4, "
					"$3::pg_catalog.text, $4::pg_catalog.uuid, $5::pg_catalog.int8, $6::pg_catalog.interval))",
					6, types, params, err, sizeof(err), sqlstate, &lost);
	cosid_store_limit(0);
	if (res != NULL)
	{
		if (PQntuples(res) == 1 && PQnfields(res) == 1 && !PQgetisnull(res, 0, 0))
			measure_offset(PQgetvalue(res, 0, 0));
		else
			offset_known = false;
		PQclear(res);

		/*
		 * The lease runs from when we asked, not from the answer (1.4): the
		 * store stamped its expiry in between, so the time left is never
		 * overstated, and the next renewal is due half the TTL after this
		 * one was sent, however long the store took to answer.  Counted from
		 * the answer, every server whose call waited out one stall of the
		 * store got its answer at the stall's end and renewed again together
		 * with the others: a burst that stalled the store in its turn and
		 * gathered more servers every half TTL (the fleet bench, 1,024 idle
		 * servers: up to 490 renewals together every 5 s, p50 32 ms).
		 */
		renewed = sent;
		lease_worked();
		set_store_state(true, "");
		SpinLockAcquire(&lease_shared->lock);
		lease_shared->last_renewal_ms = now_ms;
		SpinLockRelease(&lease_shared->lock);
		return COSID_RECORD_OK;
	}
	drop_if_unusable(sqlstate);
	/*
	 * Whatever failed (the store away or replaced, our clock jumped, an end
	 * refused as too far ahead), the next end is put the short lead ahead
	 * until a renewal measures the offset again.
	 */
	offset_known = false;
	if (lost)
	{
		pg_atomic_fetch_add_u64(&lease_shared->renewal_failures, 1);
		set_store_state(conn != NULL, err);
		/* taken over: the worker stops issuing at once, then we lease again */
		ereport(LOG,
				(errmsg("cosid slot worker lost the lease of slot %d: %s", slot, err)));
		token[0] = '\0';
		return COSID_RECORD_LOST;
	}
	/*
	 * Anything else (the store away, or a refusal: a 1.3 store refuses, with
	 * 22023, a window end further ahead of its clock than the TTL and a
	 * second, so a clock that runs ahead ends up here): the end is not
	 * durable, so the worker keeps the window it has and issues nothing past
	 * its end; the back-off retries, and issuing resumes once the store
	 * takes an end again.
	 */
	lease_failed(FAILED_RENEW, slot, err);
	return COSID_RECORD_RETRY;
}

/*
 * Give the slot back; the store keeps the greater of its end and ours.  The
 * shutdown request may have cut the last renewal short and dropped the
 * connection: connect again, with the store's own deadline.
 */
static void
lease_release(int slot, int64 next_start_ms, int64 end_ms)
{
	char		err[512];
	bool		untrusted;

	/* shutdown was asked for: give the store its own short deadline */
	cosid_store_drain();
	if (conn == NULL)
		conn = cosid_store_connect(cosid_lease_store, err, sizeof(err), &untrusted);
	if (conn == NULL)
		ereport(LOG,
				(errmsg("cosid slot worker could not release slot %d (it expires by itself): %s",
						slot, err)));
	else
	{
		char		slot_s[16];
		char		end_s[32];
		bool		lost;
		char		sqlstate[6];
		const char *params[5] = {cosid_namespace, slot_s, instance_id, token, end_s};
		static const Oid types[5] = {TEXTOID, INT4OID, TEXTOID, UUIDOID, INT8OID};
		PGresult   *res;

		snprintf(slot_s, sizeof(slot_s), "%d", slot);
		snprintf(end_s, sizeof(end_s), INT64_FORMAT, next_start_ms);
		res = lease_run("SELECT cosid.lease_release($1::pg_catalog.text, $2::pg_catalog.int4, "
						"$3::pg_catalog.text, $4::pg_catalog.uuid, $5::pg_catalog.int8)",
						5, types, params, err, sizeof(err), sqlstate, &lost);
		if (res != NULL)
		{
			PQclear(res);
			ereport(LOG,
					(errmsg("cosid slot worker released slot %d; its next holder starts no earlier than %s",
							slot, cosid_ms_text(Max(next_start_ms, end_ms)))));
		}
		else
			ereport(LOG,
					(errmsg("cosid slot worker could not release slot %d (it expires by itself): %s",
							slot, err)));
	}
	disconnect();
}

const CosidSlotSource cosid_lease_source = {
	.primary_only = false,
	.start = lease_start,
	.poll = lease_poll,
	.acquire = lease_acquire,
	.retry_ms = lease_retry_ms,
	.opened = lease_opened,
	.renewal_due = lease_renewal_due,
	.lead_ms = lease_lead_ms,
	.record_end = lease_record_end,
	.release = lease_release,
};

/*
 * segment.c - issuing the numbers of segment generators: segments of
 * consecutive numbers fetched from the generator's distributor, kept in the
 * generator's shared entry, with a reserve fetched ahead.
 *
 * Two distributors ("distributor" in the definition):
 * - "local" (the default): the generator's backing sequence.  A fetch makes
 *   the segment durable (nextval, then the WAL is flushed) before any of
 *   its numbers is handed out.
 * - "lease-store": the lease store (cosid.lease_store), shared by every
 *   server of the namespace (cosid.namespace), as CosId's segment
 *   distributor shares segments across application instances.  One call of
 *   cosid.segment_acquire there gives this server a range no other server
 *   ever gets, committed durably before it answers; nothing is written here
 *   (so it works on a hot standby), and a crash loses at most the reserve:
 *   a gap, never a repeat.  Each backend that fetches keeps its own
 *   connection to the store; every wait has a deadline and answers cancel,
 *   and a statement waits for a store that does not answer one deadline in
 *   all, however many fetches it makes.
 *   While the store does not answer, numbers come from the reserve
 *   ("reserve" segments, more after waits); once it is used up, 55000
 *   naming the store and its last error.  After a failed fetch no backend
 *   asks the store again for a short back-off (core/backoff.h: 100 ms
 *   doubling to 2 s, jittered, on the monotonic clock), so calls fail at once
 *   instead of each waiting on it; issuing resumes by itself when the store
 *   answers again.
 *
 * One backend at a time fetches for an entry (its fetching flag), outside
 * the entry's spinlock.  A fetch that has to wait for the sequence's lock
 * (an alter or drop holds it or queued for it) first takes the entry's
 * fetch lock, a heavyweight lock (advisory, objsubid 3 in pg_locks) that a
 * backend with nothing left to hand out waits on: then a wait for another
 * backend's fetch is a lock wait the deadlock detector sees, and a cycle
 * through the queued alter or drop is broken, the fetch going first.  A fetch
 * that waits for no lock cannot be part of such a cycle, and takes none.
 *
 * A number handed out is never handed out again, whatever rolls back:
 * numbers are fetched only from a sequence whose state is committed (not
 * created or rewritten in this transaction, as cosid_define and cosid_alter
 * do), so a rollback cannot take the sequence back below them; an entry is
 * the generator's one entry (genstate.h), and a call whose entry went away
 * reads the generator again instead of attaching with what it read before.  Periodic generators ("group") take their period
 * from the clock in the group's zone (cosid.debug_now for tests).
 *
 * Owns: the fetch, the fetching flag of this backend, this backend's
 * connection to the store, the store's state as fetches saw it (shared:
 * failures, back-off, last error), cosid.debug_now.
 * Must not: read the catalog (gencache.c does) or issue time-based ids.
 */
#include "segment.h"
#include "catalog.h"
#include "gencache.h"
#include "slot.h"
#include "store.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type_d.h"
#include "commands/dbcommands.h"
#include "commands/sequence.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

char	   *cosid_debug_now = NULL;

void
cosid_segment_define_settings(void)
{
	DefineCustomStringVariable("cosid.debug_now",
							   "For tests: the time segment generators take their period from.",
							   "Empty (the default) means the clock.",
							   &cosid_debug_now,
							   "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);
}

void
cosid_segment_preload(void)
{
	/*
	 * The default zone of a group's periods (and of codecs): pg_tzset reads
	 * a zone's file once a process, on a session's first call of a grouped
	 * segment generator; read here, in the postmaster, every backend
	 * inherits it (a backend's own copy of the postmaster's cache; not on
	 * EXEC_BACKEND builds).  Another zone is read on its first use.
	 */
	(void) pg_tzset("UTC");
}

/* ---------- the lease store, as segment fetches see it ---------- */

/*
 * Shared by every backend: whether the last fetch from the store worked,
 * when the next may be tried, and why the last one failed.  Read and
 * written under lock, never while an entry's spinlock is held.
 */
typedef struct StoreState
{
	slock_t		lock;
	CosidBackoff backoff;		/* consecutive failed fetches, and when the
								 * next may be tried (core/backoff.h, the
								 * scheme of the slot worker's lease) */
	char		last_error[256];
} StoreState;

static StoreState *store_state = NULL;

Size
cosid_segment_shmem_size(void)
{
	return MAXALIGN(sizeof(StoreState));
}

/* Called under AddinShmemInitLock. */
void
cosid_segment_shmem_init(void)
{
	bool		found;

	store_state = ShmemInitStruct("cosid segment store", sizeof(StoreState), &found);
	if (!found)
	{
		memset(store_state, 0, sizeof(StoreState));
		SpinLockInit(&store_state->lock);
	}
}

/* This backend's connection to the store, and the setting it was made with. */
static PGconn *store_conn = NULL;
static char *store_conninfo = NULL;

static void
store_disconnect(void)
{
	cosid_store_disconnect(store_conn);
	store_conn = NULL;
}

/* Whether a fetch from the store may be tried now (no back-off running). */
static bool
store_may_try(void)
{
	int64		now = cosid_monotonic_ms();
	bool		may;

	SpinLockAcquire(&store_state->lock);
	may = cosid_backoff_may_try(&store_state->backoff, now);
	SpinLockRelease(&store_state->lock);
	return may;
}

/* Whether the last fetch from the store failed. */
static bool
store_failing(void)
{
	bool		failing;

	SpinLockAcquire(&store_state->lock);
	failing = store_state->backoff.failures > 0;
	SpinLockRelease(&store_state->lock);
	return failing;
}

/*
 * A fetch worked (err NULL) or failed: record it; log the failure at the
 * rate of core/backoff.h, and the end of a run of failures.
 */
static void
store_record(const char *name, const char *err)
{
	uint32		ended = 0;
	CosidBackoffStep step = {0, false, 0};
	int64		now = cosid_monotonic_ms();
	uint32		jitter = pg_prng_uint32(&pg_global_prng_state);

	SpinLockAcquire(&store_state->lock);
	if (err == NULL)
		ended = cosid_backoff_succeeded(&store_state->backoff);
	else
	{
		step = cosid_backoff_failed(&store_state->backoff, now, jitter);
		strlcpy(store_state->last_error, err, sizeof(store_state->last_error));
	}
	SpinLockRelease(&store_state->lock);
	if (err != NULL && step.report)
		ereport(LOG,
				(errmsg("cosid could not fetch segments of generator \"%s\" from the lease store: %s",
						name, err),
				 cosid_backoff_errdetail(step),
				 errhint("Segment generators with \"distributor\": \"lease-store\" issue from their reserve until it answers again.")));
	else if (ended > 0)
		ereport(LOG,
				(errmsg_plural("cosid fetches segments from the lease store again, after %u failed attempt",
							   "cosid fetches segments from the lease store again, after %u failed attempts",
							   ended, ended)));
}

/*
 * One deadline per statement: however many fetches a statement makes, it
 * waits for a store that does not answer COSID_STORE_TIMEOUT_MS in all
 * (store.c cuts every wait short at what is left of it), on the monotonic
 * clock.  What counts is the time that failed fetches waited, not the time
 * since the first fetch, nor the round trips of fetches that worked: a long
 * statement that fetches often from a store that answers is never cut off.
 * A statement is told by its start time (GetCurrentStatementStartTimestamp,
 * a key only: it is the wall clock's) within one transaction: the end of a
 * transaction forgets it, so each transaction of a procedure that commits
 * waits for the store a deadline of its own.
 */
static bool statement_known = false;	/* the fields below are this
										 * transaction's */
static TimestampTz statement_start = 0; /* whose waits they count */
static int64 statement_waited = 0;	/* ms its failed fetches waited */
static int	statement_fetches = 0;	/* its failed fetches */
static int64 fetch_began = 0;

static void
forget_statement_waits(XactEvent event, void *arg)
{
	statement_known = false;
}

/* Whether the counts above are those of the running statement. */
static bool
statement_current(void)
{
	return statement_known && statement_start == GetCurrentStatementStartTimestamp();
}

/*
 * Before a fetch from the store: false, with err filled in, when this
 * statement has waited its deadline for the store already (the fetch is not
 * made); else the store's waits are limited to what is left of it.
 */
static bool
statement_fetch_begin(char *err, size_t errlen)
{
	static bool registered = false;
	int64		now = cosid_monotonic_ms();

	if (!registered)
	{
		RegisterXactCallback(forget_statement_waits, NULL);
		registered = true;
	}
	if (!statement_current())
	{
		statement_known = true;
		statement_start = GetCurrentStatementStartTimestamp();
		statement_waited = 0;
		statement_fetches = 0;
	}
	if (statement_waited >= COSID_STORE_TIMEOUT_MS)
	{
		snprintf(err, errlen, "this statement has waited " INT64_FORMAT " ms for the lease store already, its deadline",
				 statement_waited);
		return false;
	}
	cosid_store_limit(now + COSID_STORE_TIMEOUT_MS - statement_waited);
	fetch_began = now;
	return true;
}

/* After a fetch from the store: lift the limit; count the wait of a failed one. */
static void
statement_fetch_end(bool fetched)
{
	cosid_store_limit(0);
	if (fetched)
		return;
	statement_waited += cosid_monotonic_ms() - fetch_began;
	statement_fetches++;
}

/* 55000: nothing left, and the store does not answer. */
static void
report_store_away(CosidGenCache *c)
{
	char		why[256];
	/* a statement that used up its deadline is told so: why it asked no more */
	bool		waited = statement_current() && statement_waited >= COSID_STORE_TIMEOUT_MS;

	SpinLockAcquire(&store_state->lock);
	strlcpy(why, store_state->last_error, sizeof(why));
	SpinLockRelease(&store_state->lock);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("segment generator \"%s\" has used up its reserve and the lease store does not answer",
					c->def.name),
			 waited ?
			 errdetail_plural("Last error: %s.  This statement waited " INT64_FORMAT " ms for the lease store in %d failed fetch; a statement waits at most %d ms for it in all.",
							  "Last error: %s.  This statement waited " INT64_FORMAT " ms for the lease store in %d failed fetches; a statement waits at most %d ms for it in all.",
							  statement_fetches, why[0] ? why : "(none)", statement_waited,
							  statement_fetches, COSID_STORE_TIMEOUT_MS) :
			 errdetail("Last error: %s", why[0] ? why : "(none)"),
			 errhint("Its segments come from the lease store (cosid.lease_store); numbers are issued again as soon as it answers.")));
}

/*
 * What cosid.segment_acquire needs of the store's cosid: 1.3 gave it the
 * database and owner arguments that name a counter (the 7 arguments sent
 * below).
 */
#define SEGMENT_ACQUIRE_VERSION "1.3"

/* The store's SQLSTATEs that mean something to a segment fetch. */
#define COUNTER_USED_UP		"22003"	/* the counter has no numbers left */
#define COUNTER_NOT_YOURS	"42501"	/* another owner's, or another store
									 * role's, counter */

/*
 * Ask the store for count segments, at or above start: true with the range;
 * false with err filled in when the store could not be reached, did not
 * answer in time, or refused for a reason of its own (read-only, an older
 * cosid): an outage, as far as this server can tell.  A counter used up is
 * raised here (22003), and so is a counter that is not this generator's to
 * use (42501: another owner's, or another store role's).  Parameters only:
 * no SQL text is made from a name.
 *
 * The store's side (cosid.segment_acquire, 1.3): the counter's row is
 * locked FOR UPDATE and advanced in one call, committed durably before it
 * answers; a counter's first fetches race on INSERT ... ON CONFLICT DO
 * NOTHING and the loser takes the row lock.  A counter is named by the
 * database's name, not its OID: servers sharing a counter have different
 * OIDs, and a restore changes it.  1.2's counters (database '') are the
 * floor of every new counter of their namespace and name.  A 42501 is
 * raised at once, never taken for an outage.
 */
static bool
store_acquire(CosidGenCache *c, int64 start, int count, int64 *first, int64 *last,
			  char *err, size_t errlen)
{
	static char *dbname = NULL; /* this backend's database: it cannot be
								 * renamed while we are connected to it */
	char	   *owner;
	char		step_s[32];
	char		start_s[32];
	char		count_s[16];
	const char *params[7];
	static const Oid types[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, INT4OID};

	/*
	 * The counter is named by the namespace, the database's name when the
	 * generator was defined (kept in its row: a copy or a renamed database
	 * goes on with the counter) and the generator's name, and belongs to the
	 * generator's owner: names from this server's catalogs, which no role of
	 * another database can choose.  A generator defined before 1.3 has no
	 * database in its row: this database's name.
	 */
	if (c->def.counter_db[0] == '\0' && dbname == NULL)
	{
		char	   *d = get_database_name(MyDatabaseId);

		if (d == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_DATABASE),
					 errmsg("database with OID %u does not exist", MyDatabaseId)));
		dbname = MemoryContextStrdup(TopMemoryContext, d);
		pfree(d);
	}
	owner = GetUserNameFromId(c->def.owner, true);
	if (owner == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the owner of segment generator \"%s\" does not exist", c->def.name),
				 errdetail("Its shared counter in the lease store belongs to the generator's owner, role OID %u.",
						   c->def.owner)));
	params[0] = cosid_namespace;
	params[1] = c->def.counter_db[0] != '\0' ? c->def.counter_db : dbname;
	params[2] = c->def.name;
	params[3] = owner;
	params[4] = step_s;
	params[5] = start_s;
	params[6] = count_s;
	snprintf(step_s, sizeof(step_s), INT64_FORMAT, c->def.spec.step);
	snprintf(start_s, sizeof(start_s), INT64_FORMAT, start);
	snprintf(count_s, sizeof(count_s), "%d", count);
	for (int attempt = 0;; attempt++)
	{
		bool		fresh = false;
		char		sqlstate[6];
		bool		untrusted;
		PGresult   *res;

		/* a broken connection, or one to a store the setting no longer names */
		if (store_conn != NULL &&
			(PQstatus(store_conn) != CONNECTION_OK ||
			 strcmp(store_conninfo, cosid_lease_store) != 0))
			store_disconnect();
		if (store_conn == NULL)
		{
			store_conn = cosid_store_connect(cosid_lease_store, err, errlen, &untrusted);
			if (store_conn == NULL && untrusted)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("segment generator \"%s\" refuses the lease store: %s",
								c->def.name, err),
						 errdetail(COSID_STORE_UNTRUSTED_DETAIL),
						 errhint(COSID_STORE_UNTRUSTED_HINT)));
			if (store_conn == NULL)
				return false;
			fresh = true;
			if (store_conninfo != NULL)
				pfree(store_conninfo);
			store_conninfo = MemoryContextStrdup(TopMemoryContext, cosid_lease_store);
		}
		res = cosid_store_run(store_conn,
							  "SELECT first, last FROM cosid.segment_acquire($1::pg_catalog.text, "
							  "$2::pg_catalog.text, $3::pg_catalog.text, $4::pg_catalog.text, "
							  "$5::pg_catalog.int8, $6::pg_catalog.int8, $7::pg_catalog.int4)",
							  7, types, params, SEGMENT_ACQUIRE_VERSION, err, errlen, sqlstate);
		if (res != NULL)
		{
			bool		ok = PQntuples(res) == 1 && PQnfields(res) == 2 &&
				!PQgetisnull(res, 0, 0) && !PQgetisnull(res, 0, 1);

			if (ok)
			{
				*first = strtoi64(PQgetvalue(res, 0, 0), NULL, 10);
				*last = strtoi64(PQgetvalue(res, 0, 1), NULL, 10);
				ok = *last - *first + 1 == c->def.spec.step * count;
			}
			PQclear(res);
			if (ok)
				return true;
			snprintf(err, errlen, "the lease store gave an unexpected answer to cosid.segment_acquire");
			store_disconnect();
			return false;
		}
		if (sqlstate[0] != '\0' && cosid_store_keep(store_conn, sqlstate))
		{
			/* the store answered, with an error */
			if (strcmp(sqlstate, COUNTER_USED_UP) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("segment generator \"%s\" has used up its numbers in the lease store",
								c->def.name),
						 errdetail("%s", err)));
			/* the counter is another owner's or another store role's */
			if (strcmp(sqlstate, COUNTER_NOT_YOURS) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("the lease store refused segment generator \"%s\" its shared counter",
								c->def.name),
						 errdetail("%s", err),
						 errhint("A shared counter is named by cosid.namespace, the database's name and the generator's name, and serves only generators of one owner, through the store role that created it and those a superuser of the lease store granted it to (cosid.segment_counter_grant).")));
			return false;
		}
		/*
		 * no answer (the statement may still be running there), or a store
		 * that takes no writes any more (fenced or demoted: a new connection
		 * finds the one that does)
		 */
		store_disconnect();
		/* one that broke while idle (the store restarted) or went read-only: once more */
		if (fresh || attempt > 0)
			return false;
	}
}

/*
 * The entry whose fetching flag this backend holds, if any.  The backend
 * clears the flag itself: after the fetch, when the fetch fails (ERROR), and
 * when it exits (FATAL); a crash restarts shared memory anyway.  So no other
 * backend ever has to guess whether the fetcher is alive.
 */
static CosidGenEntry *fetch_entry = NULL;
static uint64 fetch_tag;

static void
clear_fetching(void)
{
	CosidGenEntry *e = fetch_entry;

	if (e == NULL)
		return;
	SpinLockAcquire(&e->mutex);
	if (e->tag == fetch_tag)
		e->fetching = false;
	SpinLockRelease(&e->mutex);
	fetch_entry = NULL;
}


/* This backend's fetching flag goes when it exits (also on FATAL). */
static void
clear_fetching_at_exit(int code, Datum arg)
{
	clear_fetching();
	store_disconnect();
}

static void
register_exit_callback(void)
{
	static bool registered = false;

	if (likely(registered))
		return;
	before_shmem_exit(clear_fetching_at_exit, (Datum) 0);
	registered = true;
}

/* The period (yyyyMMdd, yyyyMM or yyyy digits) the clock is in, in the zone. */
static int64
current_period(CosidGenCache *c)
{
	TimestampTz now;
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	CosidTm		t;

	if (cosid_debug_now != NULL && cosid_debug_now[0] != '\0')
		now = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													  CStringGetDatum(cosid_debug_now),
													  ObjectIdGetDatum(InvalidOid),
													  Int32GetDatum(-1)));
	else
		now = GetCurrentTimestamp();
	if (timestamp2tm(now, &tz, &tm, &fsec, NULL, c->group_zone) != 0)
		elog(ERROR, "could not read the clock in zone %s", c->def.spec.zone);
	memset(&t, 0, sizeof(t));
	t.year = tm.tm_year;
	t.month = tm.tm_mon;
	t.day = tm.tm_mday;
	return cosid_group_period(c->def.spec.group, &t);
}

/* setval() on the backing sequence, as its owner: callers need no rights on it. */
static void
sequence_jump(Oid seqid, int64 value)
{
	Oid			save_uid;
	int			save_ctx;

	GetUserIdAndSecContext(&save_uid, &save_ctx);
	SetUserIdAndSecContext(cosid_rel_owner(seqid), save_ctx | SECURITY_LOCAL_USERID_CHANGE);
	DirectFunctionCall3(setval3_oid, ObjectIdGetDatum(seqid), Int64GetDatum(value),
						BoolGetDatum(true));
	SetUserIdAndSecContext(save_uid, save_ctx);
}

/* Numbers in the reserve (entry's spinlock held). */
static int64
reserve_numbers(const CosidGenEntry *e)
{
	int64		n = 0;

	for (int i = 0; i < e->nreserve; i++)
		n += e->reserve[i].end - e->reserve[i].start + 1;
	return n;
}

/*
 * A fetched range into the entry (its spinlock held): the current segment
 * when nothing is left, else the reserve, joined to its last range when
 * consecutive.  The caller made sure there is room.
 */
static void
add_range(CosidGenEntry *e, int64 start, int64 end, int64 period)
{
	CosidSegRange *last = e->nreserve > 0 ? &e->reserve[e->nreserve - 1] : NULL;

	if (e->seg_next > e->seg_end && e->nreserve == 0)
	{
		e->seg_next = start;
		e->seg_end = end;
		e->seg_period = period;
	}
	else if (last != NULL && start == last->end + 1 && period == last->period)
		last->end = end;
	else if (e->nreserve < COSID_RESERVE_RANGES)
	{
		e->reserve[e->nreserve].start = start;
		e->reserve[e->nreserve].end = end;
		e->reserve[e->nreserve].period = period;
		e->nreserve++;
	}
	/* else: no room (cannot happen: fetches wait for room); a gap */
}

/* Ranges of the reserve from a period before this one go (lock held). */
static void
drop_old_ranges(CosidGenEntry *e, int64 period)
{
	int			kept = 0;

	for (int i = 0; i < e->nreserve; i++)
		if (e->reserve[i].period >= period)
			e->reserve[kept++] = e->reserve[i];
	e->nreserve = kept;
}

/* The first range of the reserve becomes the current segment (lock held). */
static void
next_range(CosidGenEntry *e)
{
	e->seg_next = e->reserve[0].start;
	e->seg_end = e->reserve[0].end;
	e->seg_period = e->reserve[0].period;
	e->nreserve--;
	memmove(&e->reserve[0], &e->reserve[1], sizeof(CosidSegRange) * e->nreserve);
}

/* ---------- the fetch lock, and the sequence's state ---------- */

/*
 * Only a fetch that must wait for its sequence's lock takes the fetch lock
 * (the top of this file says why one is needed then): a lock-table entry
 * for every fetch cost about 5 ns an id at step 1,000.
 */

/* pg_locks shows the fetch lock as advisory with this objsubid */
#define FETCH_LOCK_KIND	3

/* The fetch lock of entry e as attached with tag: per entry and use of it. */
static void
fetch_locktag(LOCKTAG *tag, CosidGenEntry *e, uint64 entry_tag)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, cosid_gen_entry_index(e),
						 (uint32) entry_tag, FETCH_LOCK_KIND);
}

/*
 * Wait until the backend fetching for e is done: on its fetch lock, where
 * the deadlock detector sees the wait, when the fetcher holds it (it waits
 * for a lock itself); otherwise a short sleep, then the caller looks again.
 */
static void
wait_for_fetch(CosidGenEntry *e, uint64 entry_tag)
{
	LOCKTAG		tag;

	fetch_locktag(&tag, e, entry_tag);
	if (LockAcquire(&tag, ShareLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		(void) LockAcquire(&tag, ShareLock, false, false);
	else
		cosid_wait_1ms(COSID_WAIT_SEGMENT_FETCH);
	LockRelease(&tag, ShareLock, false);
}

/*
 * 55000 when the backing sequence was created or given a new relfilenode in
 * this transaction or one of its live subtransactions (cosid_define made or
 * adopted it, cosid_alter changed its step, an ALTER SEQUENCE): nextval
 * would advance a state that a rollback throws away, and the numbers would
 * be handed out again.  The caller holds a lock on the sequence.
 *
 * Chosen over a high-water mark kept outside the sequence: the sequence
 * already is the durable, non-transactional, dumped and replicated record
 * of what was handed out.  The price: the transaction that defines or
 * alters a generator issues from it only after its commit.
 */
static void
check_sequence_committed(CosidGenCache *c)
{
	Relation	rel = RelationIdGetRelation(c->def.seqid);
	bool		uncommitted;

	if (!RelationIsValid(rel))
		return;					/* gone: the fetch says so */
	uncommitted = rel->rd_createSubid != InvalidSubTransactionId ||
		cosid_rel_changed_file_subid(rel) != InvalidSubTransactionId;
	RelationClose(rel);
	if (uncommitted)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment generator \"%s\" cannot issue numbers in the transaction that defined or altered it",
						c->def.name),
				 errdetail("Its backing sequence was created or changed in this transaction: numbers taken from it would be handed out again if the transaction rolled back."),
				 errhint("Commit the cosid_define() or cosid_alter() first, or roll back to a savepoint taken before it.")));
}

/* 55000: the sequence is gone, but the generator still names it. */
static void
lost_sequence_error(CosidGenCache *c)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("segment generator \"%s\" has lost its backing sequence", c->def.name),
			 errdetail("The sequence was dropped, perhaps with the table whose column owned it."),
			 errhint("Drop the generator and define it again.")));
}

/*
 * Numbers from the local backing sequence: the end of the next segment
 * (nextval), durable before it is used.  For a group, a sequence still in an
 * older period jumps to the start of this one.
 */
static bool
fetch_local(CosidGenCache *c, int64 period, int64 ahead_after, int64 *start, int64 *end,
			bool *gone, const LOCKTAG *fetch_lock, bool *fetch_locked)
{
	int64		inc;
	HeapTuple	tp;
	Form_pg_sequence seq;
	bool		exhausted;

	/*
	 * The lock nextval takes, taken first: a drop of the generator (or of
	 * the sequence) that committed while we waited is seen here, once the
	 * lock's invalidations are read, and the caller reads the generator
	 * again (*gone) instead of failing on a dropped relation.  When it must
	 * wait for it (an alter or drop holds it or queued for it), the entry's
	 * fetch lock is taken first, so that backends waiting for this fetch
	 * wait where the deadlock detector sees them; the usual fetch, which
	 * waits for nothing, takes no such lock (it costs microseconds).
	 */
	if (!ConditionalLockRelationOid(c->def.seqid, RowExclusiveLock))
	{
		(void) LockAcquire(fetch_lock, ExclusiveLock, false, false);
		*fetch_locked = true;
		LockRelationOid(c->def.seqid, RowExclusiveLock);
	}
	check_sequence_committed(c);
	tp = SearchSysCache1(SEQRELID, ObjectIdGetDatum(c->def.seqid));
	if (!HeapTupleIsValid(tp))
	{
		*gone = true;
		return false;
	}

	/*
	 * A fetch ahead (the caller already has numbers): when the sequence
	 * cannot give another segment, fetch nothing, so that the numbers already
	 * fetched are handed out first; the fetch the next call needs raises the
	 * sequence's own error.
	 */
	seq = (Form_pg_sequence) GETSTRUCT(tp);
	exhausted = ahead_after >= 0 && !seq->seqcycle && seq->seqincrement > 0 &&
		ahead_after > seq->seqmax - seq->seqincrement;
	ReleaseSysCache(tp);
	if (exhausted)
		return false;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("segment generator \"%s\" cannot allocate numbers on a hot standby", c->def.name),
				 errdetail("Its numbers come from a sequence, which only the primary can advance."),
				 errhint("Issue its numbers on the primary, use \"distributor\": \"lease-store\", or use a time-based generator here.")));
	*end = nextval_internal(c->def.seqid, false);
	/* the sequence's own increment: a step changed since this call site
	 * looked cannot make segments overlap */
	inc = cosid_sequence_increment(c->def.seqid);
	if (c->def.spec.group != COSID_GROUP_NONE)
	{
		int64		scale = cosid_group_scale(c->def.spec.group);
		int64		base = period * scale + c->def.spec.start - 1;

		if (*end - inc + 1 <= base)
		{
			*end = base + inc;
			sequence_jump(c->def.seqid, *end);
		}
	}
	*start = *end - inc + 1;
	/*
	 * Never hand out a number a crash could give again.  (When nextval wrote
	 * no WAL, the value is covered by a record an earlier fetch wrote and
	 * flushed; only a nextval outside cosid, in a transaction that never
	 * flushed, could leave that record unflushed: see docs/generators.md: never call
	 * nextval on a backing sequence.)
	 */
	XLogFlush(XactLastRecEnd);
	return true;
}

typedef enum FetchResult
{
	FETCH_DONE,					/* fetched into the entry, or the entry went
								 * away meanwhile (the caller sees its tag) */
	FETCH_NONE,					/* the lease store did not answer (or is
								 * backing off), or a local sequence has no
								 * whole segment left to fetch ahead */
	FETCH_GONE					/* the backing sequence is gone: read the
								 * generator again */
} FetchResult;

/*
 * Fetch segments (this backend holds the entry's fetching flag) and put
 * them into the entry, then release the entry's fetch lock if fetch_local
 * had to take it; count is how many segments the store is asked for.
 * Errors (and a cancel) clear the flag (the lock goes with the
 * (sub)transaction) and drop the store connection, whose statement may
 * still be in flight.
 */
static FetchResult
fetch_segment(CosidGenCache *c, int64 period, int count, int64 ahead_after)
{
	CosidGenEntry *e = c->entry;
	bool		shared = c->def.spec.distributor == COSID_DISTRIBUTOR_LEASE_STORE;
	volatile bool fetched = false;
	volatile bool gone = false;
	volatile bool locked = false;	/* this backend took the fetch lock */
	volatile int64 start = 0;	/* set inside PG_TRY, read after it */
	volatile int64 end = 0;
	volatile int64 seg_period = 0;
	char		err[512];
	LOCKTAG		tag;

	err[0] = '\0';
	fetch_locktag(&tag, e, c->entry_tag);
	PG_TRY();
	{
		if (!shared)
		{
			int64		s,
						t;
			bool		g = false;
			bool		l = false;

			fetched = fetch_local(c, period, ahead_after, &s, &t, &g, &tag, &l);
			gone = g;
			locked = l;
			start = s;
			end = t;
		}
		else if (!store_may_try())
			snprintf(err, sizeof(err), "backing off");
		else if (statement_fetch_begin(err, sizeof(err)))
		{
			int64		s = 0,
						t = 0;
			int64		floor = c->def.spec.start;

			/* a group's numbers carry their period: at least this period's first */
			if (c->def.spec.group != COSID_GROUP_NONE)
				floor = period * cosid_group_scale(c->def.spec.group) + c->def.spec.start;
			fetched = store_acquire(c, floor, count, &s, &t, err, sizeof(err));
			statement_fetch_end(fetched);
			start = s;
			end = t;
			store_record(c->def.name, fetched ? NULL : err);
		}
		if (fetched && c->def.spec.group != COSID_GROUP_NONE)
		{
			int64		scale = cosid_group_scale(c->def.spec.group);

			seg_period = end / scale;
			if (start / scale != seg_period)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("generator \"%s\" has used up the numbers of period " INT64_FORMAT,
								c->def.name, start / scale),
						 errdetail("A period holds " INT64_FORMAT " numbers.", scale - 1)));
		}
	}
	PG_CATCH();
	{
		clear_fetching();
		if (shared)
		{
			cosid_store_limit(0);
			store_disconnect();
		}
		PG_RE_THROW();
	}
	PG_END_TRY();

	fetch_entry = NULL;
	SpinLockAcquire(&e->mutex);
	if (e->tag != c->entry_tag)
	{
		/* freed meanwhile (dropped): these numbers go unused; the caller
		 * reads the generator again */
		SpinLockRelease(&e->mutex);
		if (locked)
			LockRelease(&tag, ExclusiveLock, false);
		return FETCH_DONE;
	}
	e->fetching = false;
	if (!fetched)
	{
		SpinLockRelease(&e->mutex);
		if (locked)
			LockRelease(&tag, ExclusiveLock, false);
		return gone ? FETCH_GONE : FETCH_NONE;
	}
	e->last_used_ms = (int64) cosid_now_ms();
	if (start <= e->fetched_end)
	{
		int64		before = e->fetched_end;

		SpinLockRelease(&e->mutex);
		if (shared)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the lease store's counter of generator \"%s\" went back", c->def.name),
					 errdetail("It gave " INT64_FORMAT " after numbers up to " INT64_FORMAT " were handed out.",
							   (int64) start, before),
					 errhint("The store lost committed data (restored from an old backup, or failed over to a standby that lagged); set its cosid.segment_counter row above the numbers in use.")));
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the backing sequence of generator \"%s\" went back", c->def.name),
				 errdetail("It gave " INT64_FORMAT " after numbers up to " INT64_FORMAT " were handed out.",
						   (int64) start, before),
				 errhint("Something other than the generator changed the sequence; set it above the numbers in use.")));
	}
	e->fetched_end = end;
	add_range(e, start, end, seg_period);
	e->counts.segment_fetches++;
	SpinLockRelease(&e->mutex);
	if (locked)
		LockRelease(&tag, ExclusiveLock, false);
	return FETCH_DONE;
}

/*
 * The entry went away under a running call: read the generator again
 * (gencache.c).  Defined again as a time-based generator meanwhile, it is
 * not this function's to issue.
 */
static void
refresh(CosidGenCache *c)
{
	cosid_gencache_refresh(c);
	if (c->def.spec.strategy != COSID_STRATEGY_SEGMENT)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" was dropped and defined again with another strategy while this statement used it",
						c->def.name),
				 errhint("Run the statement again.")));
}

/*
 * Hand out up to n numbers (n >= 1) from the shared segments, keeping a
 * reserve fetched ahead of time so that callers do not wait on a fetch in
 * the steady state: a local generator fetches one segment when fewer than
 * reserve_depth segments are left; a lease-store one fetches, when fewer
 * than half its target are left (the "reserve" times reserve_depth
 * segments), as many as bring it back to the target, in one call.  Returns
 * how many (at least one).
 */
size_t
cosid_segment_issue(CosidGenCache *c, size_t n, int64 *out)
{
	CosidGenEntry *e = c->entry;
	bool		shared = c->def.spec.distributor == COSID_DISTRIBUTOR_LEASE_STORE;
	size_t		got = 0;
	bool		counted_wait = false;
	int			spins = 0;

	register_exit_callback();
	/* a define or alter in this transaction: refuse at once, not at the next fetch */
	if (unlikely(cosid_catalog_dirty) && !shared)
	{
		LockRelationOid(c->def.seqid, RowExclusiveLock);
		check_sequence_committed(c);
	}

	for (;;)
	{
		int64		period = c->def.spec.group != COSID_GROUP_NONE ? current_period(c) : 0;
		bool		fetch = false;
		bool		wait = false;
		int			count = 1;
		size_t		before = got;
		int64		left;
		int64		target;
		int64		low;
		int64		ahead_after = -1;

		SpinLockAcquire(&e->mutex);
		if (unlikely(e->tag != c->entry_tag))
		{
			/* freed meanwhile (dropped, or reclaimed): read it again */
			SpinLockRelease(&e->mutex);
			refresh(c);
			e = c->entry;
			shared = c->def.spec.distributor == COSID_DISTRIBUTOR_LEASE_STORE;
			continue;
		}
		/* the statement's start: no clock read on this path */
		e->last_used_ms = Max(e->last_used_ms,
							  cosid_timestamptz_to_ms(GetCurrentStatementStartTimestamp()));
		if (period > e->seg_period)
		{
			/* a new period: what is left of the old one is not handed out */
			e->seg_next = e->seg_end + 1;
			e->seg_period = period;
		}
		if (e->nreserve > 0 && period > e->reserve[0].period)
			drop_old_ranges(e, period);
		for (;;)
		{
			while (got < n && e->seg_next <= e->seg_end)
				out[got++] = e->seg_next++;
			if (got == n || e->nreserve == 0)
				break;
			next_range(e);
		}

		/*
		 * Keep the reserve: fetch as soon as it is below its low mark (the
		 * depth grows when someone had to wait).
		 */
		left = reserve_numbers(e);
		if (shared)
		{
			target = Min((int64) c->def.spec.reserve * e->reserve_depth, 100000);
			low = (target + 1) / 2;
		}
		else
			target = low = e->reserve_depth;
		if (!e->fetching && e->nreserve < COSID_RESERVE_RANGES && left < c->def.spec.step * low)
		{
			e->fetching = true;
			fetch_entry = e;
			fetch_tag = e->tag;
			fetch = true;
			if (shared)
				count = (int) Max(target - left / c->def.spec.step, 1);
			else if (got > 0)
				ahead_after = e->fetched_end;	/* the sequence's last value, as far as we know */
		}
		else if (got == 0)
		{
			wait = true;
			if (!counted_wait)
			{
				e->counts.segment_waits++;
				if (e->reserve_depth < 16)
					e->reserve_depth *= 2;
			}
			counted_wait = true;
		}
		e->counts.issued += got - before;
		SpinLockRelease(&e->mutex);

		if (fetch)
		{
			FetchResult r = fetch_segment(c, period, count, ahead_after);

			if (r == FETCH_NONE)
			{
				/*
				 * The lease store did not answer, or a local sequence has no
				 * whole segment left to fetch ahead: the reserve carries on.
				 */
				if (got > 0)
					return got;
				report_store_away(c);
			}
			else if (r == FETCH_GONE)
			{
				/* dropped (and perhaps defined again) while we waited */
				Oid			seqid = c->def.seqid;

				if (got > 0)
					return got;
				refresh(c);
				if (c->def.seqid == seqid)
					lost_sequence_error(c);
				e = c->entry;
				shared = c->def.spec.distributor == COSID_DISTRIBUTOR_LEASE_STORE;
				continue;
			}
		}
		if (got > 0 && (got == n || !fetch))
			return got;
		if (wait)
		{
			/* the store is not answering: do not wait on another's attempt */
			if (shared && store_failing())
				report_store_away(c);
			/*
			 * another backend is fetching: it takes microseconds (a local
			 * sequence) or a round trip (the store); then wait_for_fetch
			 * (on its fetch lock when it holds one)
			 */
			if (++spins < 1000)
			{
				pg_spin_delay();
				continue;
			}
			wait_for_fetch(e, c->entry_tag);
		}
	}
}

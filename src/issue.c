/*
 * issue.c - issuing ids: cosid_next, cosid_next_int, cosid_next_text and
 * cosid_next_many, for time-based generators here and segment generators
 * through segment.c.
 *
 * Hot path (cosid_next): the call site's generator (gencache.c), the clock,
 * then one spinlock section on the generator's shared entry that checks the
 * slot window (slot.c) and advances the sequence (core/timegen.c).  Waits
 * (sequence used up, clock behind, window not yet open) happen after the
 * lock is released.  Single ids come from a per-backend block (below).
 *
 * Owns: the per-backend block of ids and the errors that stop issuing.
 * Must not: read the catalog (gencache.c does) or change the window.
 */
#include "issue.h"
#include "codecbind.h"
#include "gencache.h"
#include "random.h"
#include "segment.h"
#include "slot.h"
#include "slot_citus.h"
#include "slot_lease.h"
#include "upgrade.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(cosid_next);
PG_FUNCTION_INFO_V1(cosid_next_text);
PG_FUNCTION_INFO_V1(cosid_next_int);
PG_FUNCTION_INFO_V1(cosid_next_many);

/* How long a backend waits for a window the worker has not opened or renewed. */
#define WINDOW_GRACE_MS 2000

/* What the slot worker last failed at with the lease store ("" if nothing). */
static void
lease_last_error(char *buf, size_t len)
{
	CosidLeaseStatus st;

	cosid_lease_status(&st);
	strlcpy(buf, st.last_error, len);
}

/*
 * Raise the error for a result that stops issuing.  behind_ms is what
 * cosid_time_next() left in *wait_until_ms for these results.
 */
static void
report_stop(CosidGenCache *c, CosidNextResult r, int64 behind_ms)
{
	const char *name = c->def.name;

	switch (r)
	{
		case COSID_NEXT_CLOCK_BACKWARDS:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("clock moved backwards by " INT64_FORMAT " ms: generator \"%s\" will not issue an id",
							behind_ms, name),
					 errdetail("Its clock-regression policy borrows up to " INT64_FORMAT " ms and waits up to " INT64_FORMAT " ms.",
							   c->def.spec.policy.borrow_ms, c->def.spec.policy.wait_ms),
					 errhint("Ids are issued again once the clock has caught up.")));
			break;
		case COSID_NEXT_BEFORE_WINDOW:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("clock is " INT64_FORMAT " ms behind the start of this server's slot window",
							behind_ms),
					 errdetail("The window starts at %s, where the previous holder of slot %d stopped; ids issued before then could be issued again.",
							   cosid_ms_text(cosid_window_start()),
							   cosid_window_slot()),
					 errhint("Ids are issued again once the clock reaches the window start.")));
			break;
		case COSID_NEXT_TIME_OVERFLOW:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("generator \"%s\" has run out of time: the clock is past the end of its layout", name),
					 errdetail("Its layout holds %d bits of time in %s from its epoch.",
							   c->def.spec.layout.time_bits, c->def.spec.layout.unit_ms == 1 ? "milliseconds" : "seconds")));
			break;
		case COSID_NEXT_BEFORE_EPOCH:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("clock is before the epoch of generator \"%s\" (%s)",
							name, cosid_ms_text(c->def.spec.layout.epoch_ms))));
			break;
		case COSID_NEXT_WINDOW_ENDED:
			switch (cosid_window_state())
			{
				case COSID_SLOT_STARTING:
					if (cosid_citus_slot_mode())
					{
						char		why[256];

						(void) cosid_citus_slot_refused(why, sizeof(why));
						ereport(ERROR,
								(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
								 errmsg("this server holds no slot from Citus yet"),
								 errdetail("Its slot is its Citus group id in database \"%s\" (cosid.slot = 'citus'): %s.",
										   cosid_citus_database, why[0] ? why : "the slot worker has not taken it yet"),
								 errhint("A worker holds its slot once citus_add_node on the coordinator has given it a group id; check cosid.citus_database, cosid.machine_bits and the server log.")));
					}
					if (cosid_lease_mode())
					{
						char		why[256];

						lease_last_error(why, sizeof(why));
						ereport(ERROR,
								(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
								 errmsg("this server holds no slot lease in namespace \"%s\" yet", cosid_namespace),
								 errdetail("Last error: %s", why[0] ? why : "(none)"),
								 errhint("Check cosid.lease_store, cosid.machine_bits and the server log.")));
					}
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("this server has no slot window yet"),
							 errdetail("The cosid slot worker has not opened a window for slot %s.",
									   cosid_slot_setting),
							 errhint("Check the server log for messages from the cosid slot worker.")));
					break;
				case COSID_SLOT_RECOVERY:
					if (cosid_citus_slot_mode())
						ereport(ERROR,
								(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
								 errmsg("this server is in recovery: its slot from Citus issues no ids until it is promoted"),
								 errdetail("A standby's slot is its primary's; the primary's window ends are replayed from the WAL."),
								 errhint("To issue time-based ids on a standby, lease a slot of its own (cosid.slot = 'lease'); or promote it.")));
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("this server is in recovery: its manual slot %d issues no ids until it is promoted",
									cosid_manual_slot()),
							 errdetail("A standby's manual slot is its primary's; the primary's window ends are replayed from the WAL."),
							 errhint("To issue time-based ids on a standby, lease a slot of its own (cosid.slot = 'lease'); or promote it.")));
					break;
				case COSID_SLOT_CLOSED:
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("this server's slot window is closed because the server is shutting down")));
					break;
				case COSID_SLOT_UNCONFIRMED:
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("this server's %s slot %d was recorded by another data directory: it issues no ids until it is confirmed",
									cosid_citus_slot_mode() ? "Citus" : "manual", cosid_configured_slot()),
							 errdetail("The server was started from a copy (a base backup, a point-in-time recovery or a file copy) of a server that uses slot %d; both would issue the same ids.",
									   cosid_configured_slot()),
							 errhint("If the server it was copied from no longer uses slot %d, a superuser runs SELECT cosid_slot_confirm(); otherwise give this server a slot of its own (cosid.slot) and restart it.",
									 cosid_configured_slot())));
					break;
				case COSID_SLOT_UPGRADED:
					cosid_upgrade_error();
					break;
				default:
					if (cosid_lease_mode())
					{
						char		why[256];

						lease_last_error(why, sizeof(why));
						ereport(ERROR,
								(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
								 errmsg("the lease of slot %d could not be renewed, so its window ended at %s",
										cosid_window_slot(),
										cosid_ms_text(cosid_window_end())),
								 errdetail("Last error: %s", why[0] ? why : "(none)"),
								 errhint("Ids are issued again as soon as the lease store (cosid.lease_store) answers.")));
					}
					if (cosid_citus_slot_mode())
					{
						char		why[256];

						(void) cosid_citus_slot_refused(why, sizeof(why));
						if (why[0] != '\0')
							ereport(ERROR,
									(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
									 errmsg("this server's slot window ended at %s and was not extended",
											cosid_ms_text(cosid_window_end())),
									 errdetail("Its slot is its Citus group id, and the slot worker is not sure it still is: %s.", why),
									 errhint("Check cosid.citus_database and the server log; ids are issued again once the group id is read.")));
					}
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("this server's slot window ended at %s and was not extended",
									cosid_ms_text(cosid_window_end())),
							 errdetail("Ids are issued only inside a window the slot worker has made durable."),
							 errhint("Check the server log for messages from the cosid slot worker.")));
					break;
			}
			break;
		default:
			elog(ERROR, "unexpected generator result %d", (int) r);
	}
}


/*
 * Reserve up to n ids (n >= 1) of one unit under the entry's lock: the slot
 * they were issued under in *slot, the unit in *unit, their sequences
 * *first_seq onwards.  Returns how many.  Waits and retries as the result
 * asks, outside the lock.
 */
static size_t
issue_locked(CosidGenCache *c, size_t n, int *slot, int64 *unit, int64 *first_seq)
{
	bool		counted_seq_wait = false;
	bool		counted_clock_wait = false;
	int64		window_wait_since = -1;

	/*
	 * How far a window may start ahead of the clock: its source's longest
	 * lead.  cosid.slot is set at server start, so once a backend: the hot
	 * path compares no string.
	 */
	static int64 open_wait = 0;

	if (unlikely(open_wait == 0))
		open_wait = cosid_lease_mode() ? COSID_LEASE_LEAD_MAX_MS : COSID_WINDOW_LEAD_MS;

	for (;;)
	{
		CosidGenEntry *e = c->entry;
		int64		now = (int64) cosid_now_ms();
		CosidWindow w;
		CosidNextResult r;
		int64		wait_until = 0;
		size_t		got;

		SpinLockAcquire(&e->mutex);
		if (unlikely(e->tag != c->entry_tag))
		{
			/* freed or given to another layout meanwhile: attach again */
			SpinLockRelease(&e->mutex);
			cosid_gencache_reattach(c);
			continue;
		}
		e->last_used_ms = now;
		/* read inside the lock: see slot.h on closing the window */
		w.start_ms = cosid_window_start();
		w.end_ms = cosid_window_end();
		w.open_wait_ms = open_wait;
		pg_read_barrier();
		*slot = cosid_window_slot();	/* published before the window */
		got = cosid_time_next_many(&c->def.spec.layout, &c->def.spec.policy, &w,
								   &e->state, now, n, first_seq, unit, &r,
								   &wait_until);
		e->counts.issued += got;
		switch (r)
		{
			case COSID_NEXT_BORROWED:
				e->counts.clock_borrows++;
				break;
			case COSID_NEXT_WAIT_SEQUENCE:
				if (!counted_seq_wait)
					e->counts.seq_waits++;
				counted_seq_wait = true;
				break;
			case COSID_NEXT_WAIT_CLOCK:
				if (!counted_clock_wait)
					e->counts.clock_waits++;
				counted_clock_wait = true;
				break;
			case COSID_NEXT_CLOCK_BACKWARDS:
			case COSID_NEXT_BEFORE_WINDOW:
				e->counts.clock_failures++;
				break;
			default:
				break;
		}
		SpinLockRelease(&e->mutex);

		if (likely(got > 0))
			return got;

		switch (r)
		{
			case COSID_NEXT_WAIT_SEQUENCE:
				cosid_wait_until_ms(wait_until, COSID_WAIT_SEQUENCE);
				break;
			case COSID_NEXT_WAIT_CLOCK:
				cosid_wait_until_ms(wait_until, COSID_WAIT_CLOCK_BEHIND);
				break;
			case COSID_NEXT_WAIT_WINDOW:
				cosid_wait_until_ms(wait_until, COSID_WAIT_WINDOW);
				break;
			case COSID_NEXT_WINDOW_ENDED:
				/*
				 * A standby with a manual slot: no window until promotion
				 * (once recovery has ended, the worker opens one in a moment).
				 */
				if (cosid_window_state() == COSID_SLOT_RECOVERY &&
					RecoveryInProgress())
					report_stop(c, r, 0);
				/* the worker may be about to open or extend it: ask it */
				if (window_wait_since < 0)
				{
					window_wait_since = now;
					cosid_window_request();
				}
				if (now - window_wait_since >= WINDOW_GRACE_MS ||
					cosid_window_state() == COSID_SLOT_CLOSED ||
					cosid_window_state() == COSID_SLOT_UNCONFIRMED ||
					cosid_window_state() == COSID_SLOT_UPGRADED ||
					cosid_lease_store_away() ||
					cosid_citus_slot_refused(NULL, 0))
					report_stop(c, r, 0);
				cosid_wait_1ms(COSID_WAIT_WINDOW);
				break;
			default:
				report_stop(c, r, wait_until);
		}
	}
}


/*
 * Single ids come from a small block of consecutive sequences this backend
 * reserves under the lock (one lock for BLOCK_IDS ids, so that backends
 * sharing a generator do not pass its cache line back and forth on every
 * id).  A block is used only while the clock is in its unit, and only by
 * this backend, so every id is still issued once and a backend's ids still
 * increase.  What a block does not use goes back when the backend moves on
 * (another unit or generator, a bulk call, the end of the statement or the
 * transaction): its sequences return to the generator if nobody reserved
 * after it, so one backend alone issues exactly the sequences it did
 * without blocks, cosid_stats counts only ids handed out, and an id issued
 * by a later statement is above every id of earlier ones.  (Two statements
 * running at once interleave their ids by up to a block within a
 * millisecond, as they interleave them anyway.)
 */
#define BLOCK_IDS 64

typedef struct IdBlock
{
	CosidGenEntry *entry;		/* NULL: no block */
	uint64		tag;
	const CosidLayout *layout;	/* the cache's (to tell the unit of now) */
	int			slot;
	int64		unit;
	int64		next;			/* next sequence to hand out */
	int64		last;			/* last sequence reserved */
} IdBlock;

static IdBlock block;

/* Give back what the block did not use, and forget it. */
static void
release_block(void)
{
	CosidGenEntry *e = block.entry;

	if (e == NULL)
		return;
	block.entry = NULL;
	if (block.next > block.last)
		return;
	SpinLockAcquire(&e->mutex);
	if (e->tag == block.tag)
	{
		/* nobody reserved after it: the sequences return to the pool */
		if (e->state.last_unit == block.unit && e->state.seq == block.last)
			e->state.seq = block.next - 1;
		e->counts.issued -= (uint64) (block.last - block.next + 1);
	}
	SpinLockRelease(&e->mutex);
}

static void
release_block_at_xact_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		release_block();
}


static ExecutorEnd_hook_type prev_executor_end = NULL;

/* The end of every statement (and of each query a function runs). */
static void
release_block_at_executor_end(QueryDesc *queryDesc)
{
	release_block();
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * The block of ids a backend holds goes back to its generator's entry when
 * the backend exits, also on FATAL; a crash restarts shared memory anyway.
 * (A segment fetch's flag is segment.c's: clear_fetching_at_exit.)
 * Registered once, outside any spinlock.
 */
static void
release_at_exit(int code, Datum arg)
{
	release_block();
}

static void
register_backend_callbacks(void)
{
	static bool registered = false;

	if (likely(registered))
		return;
	RegisterXactCallback(release_block_at_xact_end, NULL);
	before_shmem_exit(release_at_exit, (Datum) 0);
	registered = true;
}

void
cosid_issue_init(void)
{
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = release_block_at_executor_end;
}

/*
 * Issue n ids (see issue_locked); one id comes from this backend's block
 * when it can.
 */
static size_t
issue(CosidGenCache *c, size_t n, int *slot, int64 *unit, int64 *first_seq)
{
	size_t		got;

	if (likely(n == 1 && block.entry == c->entry && block.tag == c->entry_tag &&
			   block.next <= block.last &&
			   cosid_unit_of(block.layout, (int64) cosid_now_ms()) == block.unit))
	{
		*slot = block.slot;
		*unit = block.unit;
		*first_seq = block.next++;
		return 1;
	}
	release_block();
	if (n > 1)
		return issue_locked(c, n, slot, unit, first_seq);

	register_backend_callbacks();
	got = issue_locked(c, BLOCK_IDS, slot, unit, first_seq);
	if (got > 1)
	{
		block.entry = c->entry;
		block.tag = c->entry_tag;
		block.layout = &c->def.spec.layout;
		block.slot = *slot;
		block.unit = *unit;
		block.next = *first_seq + 1;
		block.last = *first_seq + (int64) got - 1;
		/* borrowed (the clock is behind the unit): no block to keep */
		if (cosid_unit_of(block.layout, (int64) cosid_now_ms()) != block.unit)
			release_block();
	}
	return 1;
}

/* The id's number (at most 63 bits), uncertainty bits filled in. */
static int64
finish_id(CosidGenCache *c, int slot, int64 unit, int64 seq)
{
	int64		id = cosid_layout_pack(&c->def.spec.layout, unit, slot, seq);

	if (c->def.spec.uncertainty_bits > 0)
	{
		uint64		rnd;

		cosid_random_bytes((uint8 *) &rnd, sizeof(rnd));
		id = (int64) (((uint64) id << c->def.spec.uncertainty_bits) |
					  (rnd & ((UINT64CONST(1) << c->def.spec.uncertainty_bits) - 1)));
	}
	return id;
}

static void
check_int32(CosidGenCache *c, int64 id)
{
	if (id > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("id of generator \"%s\" is out of range for type integer",
						c->def.name),
				 errdetail("The id is " INT64_FORMAT "; an integer holds at most 2147483647.", id)));
}

void
cosid_check_not_cosid80(CosidGenCache *c, const char *instead)
{
	if (c->def.spec.strategy == COSID_STRATEGY_COSID80)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("generator \"%s\" makes 80-bit ids, which do not fit a bigint", c->def.name),
				 errhint("Use %s.", instead)));
}

static CosidGenCache *
lookup_issuer(FunctionCallInfo fcinfo)
{
	return cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), true);
}

/* The next number of a generator whose ids fit a bigint. */
static int64
next_number(CosidGenCache *c)
{
	int			slot;
	int64		unit;
	int64		seq;
	int64		id;

	cosid_check_not_cosid80(c, "cosid_next_text()");
	if (c->def.spec.strategy == COSID_STRATEGY_SEGMENT)
		cosid_segment_issue(c, 1, &id);
	else
	{
		issue(c, 1, &slot, &unit, &seq);
		id = finish_id(c, slot, unit, seq);
	}
	return id;
}

Datum
cosid_next(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = lookup_issuer(fcinfo);
	int64		id = next_number(c);

	if (c->def.spec.int32)
		check_int32(c, id);
	PG_RETURN_INT64(id);
}

Datum
cosid_next_int(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = lookup_issuer(fcinfo);
	int64		id = next_number(c);

	check_int32(c, id);
	PG_RETURN_INT32((int32) id);
}

/* An id through the generator's codec. */
static text *
id_text(CosidGenCache *c, int slot, int64 unit, int64 seq)
{
	CosidId		id;

	memset(&id, 0, sizeof(id));
	if (c->def.spec.strategy == COSID_STRATEGY_COSID80)
	{
		id.wide = true;
		id.time = unit;
		id.node = slot;
		id.seq = seq;
	}
	else
	{
		id.id = finish_id(c, slot, unit, seq);
		if (c->def.spec.int32)
			check_int32(c, id.id);
	}
	return cosid_codecbind_encode(c->codec, &id, (int64) cosid_now_ms());
}

Datum
cosid_next_text(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = lookup_issuer(fcinfo);
	int			slot;
	int64		unit;
	int64		seq;

	if (c->def.spec.strategy == COSID_STRATEGY_SEGMENT)
	{
		CosidId		id;

		memset(&id, 0, sizeof(id));
		cosid_segment_issue(c, 1, &id.id);
		if (c->def.spec.int32)
			check_int32(c, id.id);
		PG_RETURN_TEXT_P(cosid_codecbind_encode(c->codec, &id, (int64) cosid_now_ms()));
	}
	issue(c, 1, &slot, &unit, &seq);
	PG_RETURN_TEXT_P(id_text(c, slot, unit, seq));
}

/*
 * cosid_next_many: value per call, refilled a batch at a time (one unit's
 * ids, or what a segment has), so that a consumer in the select list counts
 * or inserts ids while the generator waits for the next unit.
 */
#define MANY_BATCH 4096

typedef struct ManyState
{
	void	   *cache;			/* CosidGenCache, for this call series */
	int64		remaining;		/* ids still to issue */
	int			nbuf;
	int			pos;
	int64		buf[MANY_BATCH];
} ManyState;

Datum
cosid_next_many(PG_FUNCTION_ARGS)
{
	FuncCallContext *f;
	ManyState  *st;
	CosidGenCache *c;

	if (SRF_IS_FIRSTCALL())
	{
		int32		n = PG_GETARG_INT32(1);
		MemoryContext old;

		if (n < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot issue a negative number of ids: %d", n)));
		f = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(f->multi_call_memory_ctx);
		st = palloc0(sizeof(ManyState));
		st->remaining = n;
		MemoryContextSwitchTo(old);
		f->user_fctx = st;
		c = cosid_lookup_in(&st->cache, PG_GETARG_TEXT_PP(0), true, NULL);
		cosid_check_not_cosid80(c, "cosid_next_text()");
	}
	f = SRF_PERCALL_SETUP();
	st = (ManyState *) f->user_fctx;
	c = (CosidGenCache *) st->cache;

	if (st->pos == st->nbuf)
	{
		size_t		want = Min(st->remaining, MANY_BATCH);

		if (want == 0)
			SRF_RETURN_DONE(f);
		if (c->def.spec.strategy == COSID_STRATEGY_SEGMENT)
			st->nbuf = (int) cosid_segment_issue(c, want, st->buf);
		else
		{
			int			slot;
			int64		unit;

			int64		first;

			/* the ids are reserved under the lock and written out after it */
			st->nbuf = (int) issue(c, want, &slot, &unit, &first);
			for (int i = 0; i < st->nbuf; i++)
				st->buf[i] = finish_id(c, slot, unit, first + i);
		}
		if (c->def.spec.int32)
			for (int i = 0; i < st->nbuf; i++)
				check_int32(c, st->buf[i]);
		st->remaining -= st->nbuf;
		st->pos = 0;
	}
	SRF_RETURN_NEXT(f, Int64GetDatum(st->buf[st->pos++]));
}


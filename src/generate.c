/*
 * generate.c - issuing time-based ids, packing and unpacking them, and the
 * views of generator and slot state.
 *
 * Hot path (cosid_next): the call site's cached generator (catalog.c), the
 * clock, then one spinlock section on the generator's shared entry that
 * checks the slot window and advances the sequence.  Waits (sequence used up,
 * clock behind, window not yet open) happen after the lock is released.
 */
#include "cosid.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_sequence.h"
#include "commands/sequence.h"
#include "funcapi.h"
#include "storage/ipc.h"
#include "utils/syscache.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(cosid_next);
PG_FUNCTION_INFO_V1(cosid_next_text);
PG_FUNCTION_INFO_V1(cosid_next_int);
PG_FUNCTION_INFO_V1(cosid_next_many);
PG_FUNCTION_INFO_V1(cosid_unpack);
PG_FUNCTION_INFO_V1(cosid_unpack_text);
PG_FUNCTION_INFO_V1(cosid_pack);
PG_FUNCTION_INFO_V1(cosid_is_js_safe);
PG_FUNCTION_INFO_V1(cosid_stats);
PG_FUNCTION_INFO_V1(cosid_slot);

#define JS_MAX_SAFE_INTEGER ((INT64CONST(1) << 53) - 1)

/* How long a backend waits for a window the worker has not opened or renewed. */
#define WINDOW_GRACE_MS 2000

static const char *
ms_text(int64 ms)
{
	return timestamptz_to_str(cosid_ms_to_timestamptz(ms));
}

/* What the slot worker last failed at with the lease store ("" if nothing). */
static void
lease_last_error(char *buf, size_t len)
{
	SpinLockAcquire(&cosid_shared->lease_lock);
	strlcpy(buf, cosid_shared->last_error, len);
	SpinLockRelease(&cosid_shared->lease_lock);
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
							   c->def.policy.borrow_ms, c->def.policy.wait_ms),
					 errhint("Ids are issued again once the clock has caught up.")));
			break;
		case COSID_NEXT_BEFORE_WINDOW:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("clock is " INT64_FORMAT " ms behind the start of this server's slot window",
							behind_ms),
					 errdetail("The window starts at %s, where the previous holder of slot %d stopped; ids issued before then could be issued again.",
							   ms_text((int64) pg_atomic_read_u64(&cosid_shared->window_start_ms)),
							   cosid_shared->slot),
					 errhint("Ids are issued again once the clock reaches the window start.")));
			break;
		case COSID_NEXT_TIME_OVERFLOW:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("generator \"%s\" has run out of time: the clock is past the end of its layout", name),
					 errdetail("Its layout holds %d bits of time in %s from its epoch.",
							   c->def.layout.time_bits, c->def.layout.unit_ms == 1 ? "milliseconds" : "seconds")));
			break;
		case COSID_NEXT_BEFORE_EPOCH:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("clock is before the epoch of generator \"%s\" (%s)",
							name, ms_text(c->def.layout.epoch_ms))));
			break;
		case COSID_NEXT_WINDOW_ENDED:
			switch ((CosidSlotState) pg_atomic_read_u32(&cosid_shared->slot_state))
			{
				case COSID_SLOT_STARTING:
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
				default:
					if (cosid_lease_mode())
					{
						char		why[256];

						lease_last_error(why, sizeof(why));
						ereport(ERROR,
								(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
								 errmsg("the lease of slot %d could not be renewed, so its window ended at %s",
										cosid_shared->slot,
										ms_text((int64) pg_atomic_read_u64(&cosid_shared->window_end_ms))),
								 errdetail("Last error: %s", why[0] ? why : "(none)"),
								 errhint("Ids are issued again as soon as the lease store (cosid.lease_store) answers.")));
					}
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("this server's slot window ended at %s and was not extended",
									ms_text((int64) pg_atomic_read_u64(&cosid_shared->window_end_ms))),
							 errdetail("Ids are issued only inside a window the slot worker has made durable."),
							 errhint("Check the server log for messages from the cosid slot worker.")));
					break;
			}
			break;
		default:
			elog(ERROR, "unexpected generator result %d", (int) r);
	}
}

/* Lease mode with the store unreachable: a window that ended stays ended. */
static bool
lease_store_away(void)
{
	bool		away;

	if (!cosid_lease_mode())
		return false;
	SpinLockAcquire(&cosid_shared->lease_lock);
	away = !cosid_shared->store_connected;
	SpinLockRelease(&cosid_shared->lease_lock);
	return away;
}

/* The entry was freed or reused: attach again (entry and tag change together). */
static void
reattach(CosidGenCache *c)
{
	uint64		tag;
	CosidGenEntry *e = cosid_gen_attach(&c->def, &tag);

	c->entry = e;
	c->entry_tag = tag;
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
			reattach(c);
			continue;
		}
		e->last_used_ms = now;
		/* read inside the lock: see cosid.h on closing the window */
		w.start_ms = (int64) pg_atomic_read_u64(&cosid_shared->window_start_ms);
		w.end_ms = (int64) pg_atomic_read_u64(&cosid_shared->window_end_ms);
		w.open_wait_ms = COSID_WINDOW_LEAD_MS;
		pg_read_barrier();
		*slot = cosid_shared->slot;	/* published before the window */
		got = cosid_time_next_many(&c->def.layout, &c->def.policy, &w,
								   &e->state, now, n, first_seq, unit, &r,
								   &wait_until);
		e->issued += got;
		switch (r)
		{
			case COSID_NEXT_BORROWED:
				e->clock_borrows++;
				break;
			case COSID_NEXT_WAIT_SEQUENCE:
				if (!counted_seq_wait)
					e->seq_waits++;
				counted_seq_wait = true;
				break;
			case COSID_NEXT_WAIT_CLOCK:
				if (!counted_clock_wait)
					e->clock_waits++;
				counted_clock_wait = true;
				break;
			case COSID_NEXT_CLOCK_BACKWARDS:
			case COSID_NEXT_BEFORE_WINDOW:
				e->clock_failures++;
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
			case COSID_NEXT_WAIT_CLOCK:
			case COSID_NEXT_WAIT_WINDOW:
				cosid_wait_until_ms(wait_until);
				break;
			case COSID_NEXT_WINDOW_ENDED:
				/*
				 * A standby with a manual slot: no window until promotion
				 * (once recovery has ended, the worker opens one in a moment).
				 */
				if (pg_atomic_read_u32(&cosid_shared->slot_state) == COSID_SLOT_RECOVERY &&
					RecoveryInProgress())
					report_stop(c, r, 0);
				/* the worker may be about to open or extend it: ask it */
				if (window_wait_since < 0)
				{
					window_wait_since = now;
					cosid_request_window();
				}
				if (now - window_wait_since >= WINDOW_GRACE_MS ||
					pg_atomic_read_u32(&cosid_shared->slot_state) == COSID_SLOT_CLOSED ||
					lease_store_away())
					report_stop(c, r, 0);
				cosid_wait_1ms();
				break;
			default:
				report_stop(c, r, wait_until);
		}
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
		e->issued -= (uint64) (block.last - block.next + 1);
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
 * What a backend holds in shared state of its own (a block of ids, a
 * segment fetch) it gives back itself when it exits, also on FATAL; a crash
 * restarts shared memory anyway.  Registered once, outside any spinlock.
 */
static void
release_at_exit(int code, Datum arg)
{
	release_block();
	clear_fetching();
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
		block.layout = &c->def.layout;
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

/* ---------- segment generators ---------- */

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
		elog(ERROR, "could not read the clock in zone %s", c->def.zone);
	memset(&t, 0, sizeof(t));
	t.year = tm.tm_year;
	t.month = tm.tm_mon;
	t.day = tm.tm_mday;
	return cosid_group_period(c->def.group, &t);
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

static int64
sequence_increment(Oid seqid)
{
	HeapTuple	tp = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	int64		inc;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for sequence %u", seqid);
	inc = ((Form_pg_sequence) GETSTRUCT(tp))->seqincrement;
	ReleaseSysCache(tp);
	return inc;
}

/*
 * Fetch the next segment from the backing sequence (this backend holds the
 * entry's fetching flag) and make it durable before any of its numbers is
 * handed out.  For a group, a sequence still in an older period jumps to
 * the start of this one.
 */
static void
fetch_segment(CosidGenCache *c, int64 period)
{
	CosidGenEntry *e = c->entry;
	volatile int64 end = 0;		/* set inside PG_TRY, read after it */
	volatile int64 inc = 0;
	volatile int64 seg_period = 0;
	int64		start;

	if (RecoveryInProgress())
	{
		clear_fetching();
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("segment generator \"%s\" cannot allocate numbers on a hot standby", c->def.name),
				 errdetail("Its numbers come from a sequence, which only the primary can advance."),
				 errhint("Issue its numbers on the primary, or use a time-based generator here.")));
	}
	PG_TRY();
	{
		end = nextval_internal(c->def.seqid, false);
		/* the sequence's own increment: a step changed since this call site
		 * looked cannot make segments overlap */
		inc = sequence_increment(c->def.seqid);
		if (c->def.group != COSID_GROUP_NONE)
		{
			int64		scale = cosid_group_scale(c->def.group);
			int64		base = period * scale + c->def.start - 1;

			if (end - inc + 1 <= base)
			{
				end = base + inc;
				sequence_jump(c->def.seqid, end);
			}
			seg_period = end / scale;
			if ((end - inc + 1) / scale != seg_period)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("generator \"%s\" has used up the numbers of period " INT64_FORMAT,
								c->def.name, (end - inc + 1) / scale),
						 errdetail("A period holds " INT64_FORMAT " numbers.", scale - 1)));
		}
		/* never hand out a number a crash could give again */
		XLogFlush(XactLastRecEnd);
	}
	PG_CATCH();
	{
		clear_fetching();
		PG_RE_THROW();
	}
	PG_END_TRY();

	start = end - inc + 1;
	fetch_entry = NULL;
	SpinLockAcquire(&e->mutex);
	if (e->tag != c->entry_tag)
	{
		/* freed meanwhile (dropped or altered): these numbers go unused */
		SpinLockRelease(&e->mutex);
		return;
	}
	e->fetching = false;
	e->last_used_ms = (int64) cosid_now_ms();
	if (start <= Max(e->seg_end, e->pre_end))
	{
		SpinLockRelease(&e->mutex);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the backing sequence of generator \"%s\" went back", c->def.name),
				 errdetail("It gave " INT64_FORMAT " after numbers up to " INT64_FORMAT " were handed out.",
						   start, Max(e->seg_end, e->pre_end)),
				 errhint("Something other than the generator changed the sequence; set it above the numbers in use.")));
	}
	if (e->pre_start <= e->pre_end && start == e->pre_end + 1 && seg_period == e->pre_period)
		e->pre_end = end;		/* the reserve grows: segments are consecutive */
	else if (e->seg_next <= e->seg_end)
	{
		e->pre_start = start;
		e->pre_end = end;
		e->pre_period = seg_period;
	}
	else
	{
		e->seg_next = start;
		e->seg_end = end;
		e->seg_period = seg_period;
	}
	e->segment_fetches++;
	SpinLockRelease(&e->mutex);
}

/*
 * Hand out up to n numbers (n >= 1) from the shared segments, keeping the
 * next segment fetched ahead of time so that callers do not wait on a fetch
 * in the steady state.  Returns how many (at least one).
 */
static size_t
segment_issue(CosidGenCache *c, size_t n, int64 *out)
{
	CosidGenEntry *e = c->entry;
	size_t		got = 0;
	bool		counted_wait = false;
	int			spins = 0;

	register_backend_callbacks();

	for (;;)
	{
		int64		period = c->def.group != COSID_GROUP_NONE ? current_period(c) : 0;
		bool		fetch = false;
		bool		wait = false;
		size_t		before = got;

		SpinLockAcquire(&e->mutex);
		if (unlikely(e->tag != c->entry_tag))
		{
			/* freed meanwhile (dropped or altered): attach again */
			SpinLockRelease(&e->mutex);
			reattach(c);
			e = c->entry;
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
		if (period > e->pre_period && e->pre_start <= e->pre_end)
			e->pre_start = e->pre_end + 1;
		while (got < n && e->seg_next <= e->seg_end)
			out[got++] = e->seg_next++;
		if (got < n && e->pre_start <= e->pre_end)
		{
			e->seg_next = e->pre_start;
			e->seg_end = e->pre_end;
			e->seg_period = e->pre_period;
			e->pre_start = e->pre_end + 1;
			while (got < n && e->seg_next <= e->seg_end)
				out[got++] = e->seg_next++;
		}
		/*
		 * Keep reserve_depth segments fetched ahead: fetch as soon as the
		 * reserve is smaller (the depth grows when someone had to wait).
		 */
		if (!e->fetching &&
			(e->pre_start > e->pre_end ? 0 : e->pre_end - e->pre_start + 1) <
			c->def.step * e->reserve_depth)
		{
			e->fetching = true;
			fetch_entry = e;
			fetch_tag = e->tag;
			fetch = true;
		}
		else if (got == 0)
		{
			wait = true;
			if (!counted_wait)
			{
				e->segment_waits++;
				if (e->reserve_depth < 16)
					e->reserve_depth *= 2;
			}
			counted_wait = true;
		}
		e->issued += got - before;
		SpinLockRelease(&e->mutex);

		if (fetch)
			fetch_segment(c, period);
		if (got > 0 && (got == n || !fetch))
			return got;
		if (wait)
		{
			/* another backend is fetching: it takes microseconds */
			if (++spins < 1000)
			{
				pg_spin_delay();
				continue;
			}
			cosid_wait_1ms();
		}
	}
}

static void
check_time_based(CosidGenCache *c, const char *what)
{
	if (!COSID_TIME_BASED(c->def.strategy))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s needs a time-based generator; \"%s\" is a segment generator", what,
						c->def.name),
				 errdetail("A segment number has no time, node or sequence parts.")));
}

/* The id's number (at most 63 bits), uncertainty bits filled in. */
static int64
finish_id(CosidGenCache *c, int slot, int64 unit, int64 seq)
{
	int64		id = cosid_layout_pack(&c->def.layout, unit, slot, seq);

	if (c->def.uncertainty_bits > 0)
	{
		uint64		rnd;

		cosid_random_bytes((uint8 *) &rnd, sizeof(rnd));
		id = (int64) (((uint64) id << c->def.uncertainty_bits) |
					  (rnd & ((UINT64CONST(1) << c->def.uncertainty_bits) - 1)));
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

static void
check_not_cosid80(CosidGenCache *c, const char *instead)
{
	if (c->def.strategy == COSID_STRATEGY_COSID80)
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

	check_not_cosid80(c, "cosid_next_text()");
	if (c->def.strategy == COSID_STRATEGY_SEGMENT)
		segment_issue(c, 1, &id);
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

	if (c->def.int32)
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
	if (c->def.strategy == COSID_STRATEGY_COSID80)
	{
		id.wide = true;
		id.time = unit;
		id.node = slot;
		id.seq = seq;
	}
	else
	{
		id.id = finish_id(c, slot, unit, seq);
		if (c->def.int32)
			check_int32(c, id.id);
	}
	return cosid_codec_encode(c->codec, &id, (int64) cosid_now_ms());
}

Datum
cosid_next_text(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = lookup_issuer(fcinfo);
	int			slot;
	int64		unit;
	int64		seq;

	if (c->def.strategy == COSID_STRATEGY_SEGMENT)
	{
		CosidId		id;

		memset(&id, 0, sizeof(id));
		segment_issue(c, 1, &id.id);
		if (c->def.int32)
			check_int32(c, id.id);
		PG_RETURN_TEXT_P(cosid_codec_encode(c->codec, &id, (int64) cosid_now_ms()));
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
		check_not_cosid80(c, "cosid_next_text()");
	}
	f = SRF_PERCALL_SETUP();
	st = (ManyState *) f->user_fctx;
	c = (CosidGenCache *) st->cache;

	if (st->pos == st->nbuf)
	{
		size_t		want = Min(st->remaining, MANY_BATCH);

		if (want == 0)
			SRF_RETURN_DONE(f);
		if (c->def.strategy == COSID_STRATEGY_SEGMENT)
			st->nbuf = (int) segment_issue(c, want, st->buf);
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
		if (c->def.int32)
			for (int i = 0; i < st->nbuf; i++)
				check_int32(c, st->buf[i]);
		st->remaining -= st->nbuf;
		st->pos = 0;
	}
	SRF_RETURN_NEXT(f, Int64GetDatum(st->buf[st->pos++]));
}

/* ---------- packing and unpacking ---------- */

static Datum
parts_tuple(FunctionCallInfo fcinfo, CosidGenCache *c, const CosidId *id)
{
	const CosidLayout *l = &c->def.layout;
	/* the last Unix millisecond whose microseconds fit a timestamptz */
	const int64 max_ms = PG_INT64_MAX / 1000;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		ms;

	if (!cosid_layout_time_ms(l, id->time, max_ms, &ms))
	{
		/* a layout that reaches past 294247 AD (in seconds, with many bits) */
		int64		last = cosid_layout_last_time(l, max_ms);
		char		idtext[48];
		char		lasttext[48];

		if (id->wide)
		{
			uint64		hi,
						lo;

			cosid_layout_pack128(l, id->time, id->node, id->seq, &hi, &lo);
			cosid_u128_decimal(hi, lo, idtext);
			cosid_layout_pack128(l, last, (INT64CONST(1) << l->node_bits) - 1,
								 cosid_layout_max_seq(l), &hi, &lo);
			cosid_u128_decimal(hi, lo, lasttext);
		}
		else
		{
			uint64		lastid = (uint64) cosid_layout_pack(l, last, (INT64CONST(1) << l->node_bits) - 1,
														   cosid_layout_max_seq(l));

			lastid = (lastid << c->def.uncertainty_bits) |
				((UINT64CONST(1) << c->def.uncertainty_bits) - 1);
			snprintf(idtext, sizeof(idtext), INT64_FORMAT, id->id);
			snprintf(lasttext, sizeof(lasttext), UINT64_FORMAT, lastid);
		}
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("time of id %s of generator \"%s\" is out of range for timestamptz",
						idtext, c->def.name),
				 errdetail("Only its ids up to %s hold a time that fits a timestamptz (up to %s).",
						   lasttext, ms_text(l->epoch_ms + last * l->unit_ms))));
	}
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = TimestampTzGetDatum(cosid_ms_to_timestamptz(ms));
	values[1] = Int32GetDatum((int32) id->node);
	values[2] = Int64GetDatum(id->seq);
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

static void
id_out_of_range(CosidGenCache *c, int64 id)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg(INT64_FORMAT " is not an id of generator \"%s\"", id, c->def.name),
			 errdetail("Its ids are from 0 to 2^%d - 1.",
					   cosid_layout_total_bits(&c->def.layout) + c->def.uncertainty_bits)));
}

Datum
cosid_unpack(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), false);
	CosidId		id;

	check_time_based(c, "cosid_unpack()");
	check_not_cosid80(c, "cosid_unpack(name, text)");
	memset(&id, 0, sizeof(id));
	id.id = PG_GETARG_INT64(1);
	if (!cosid_layout_holds_id(&c->def.layout, c->def.uncertainty_bits, id.id))
		id_out_of_range(c, id.id);
	cosid_layout_unpack(&c->def.layout, id.id >> c->def.uncertainty_bits,
						&id.time, &id.node, &id.seq);
	PG_RETURN_DATUM(parts_tuple(fcinfo, c, &id));
}

Datum
cosid_unpack_text(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), false);
	CosidId		id;

	check_time_based(c, "cosid_unpack()");
	cosid_codec_decode(c->codec, PG_GETARG_TEXT_PP(1), &id);
	if (!id.wide)
	{
		/* a custom decode function may return any bigint */
		if (!cosid_layout_holds_id(&c->def.layout, c->def.uncertainty_bits, id.id))
			id_out_of_range(c, id.id);
		cosid_layout_unpack(&c->def.layout, id.id >> c->def.uncertainty_bits,
							&id.time, &id.node, &id.seq);
	}
	PG_RETURN_DATUM(parts_tuple(fcinfo, c, &id));
}

Datum
cosid_pack(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), false);
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(1);
	int32		node = PG_GETARG_INT32(2);
	int64		seq = PG_GETARG_INT64(3);
	const CosidLayout *l = &c->def.layout;
	/* the last Unix millisecond whose microseconds fit an int64 */
	const int64 max_ms = PG_INT64_MAX / 1000;
	int64		last;
	int64		time;

	check_time_based(c, "cosid_pack()");
	check_not_cosid80(c, "cosid_unpack(name, text) to read cosid80 ids");
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("cannot pack an infinite time into an id")));
	last = cosid_layout_last_time(l, max_ms);
	time = ts > cosid_ms_to_timestamptz(max_ms) ? last + 1 :
		cosid_unit_of(l, cosid_timestamptz_to_ms(ts));
	if (time < 0 || time > last)
	{
		/* timestamptz_to_str() answers in one static buffer: copy each */
		char	   *from = pstrdup(ms_text(l->epoch_ms));
		char	   *to = pstrdup(ms_text(Min(l->epoch_ms + (last + 1) * l->unit_ms - 1, max_ms)));

		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("time %s is outside the range of generator \"%s\"",
						timestamptz_to_str(ts), c->def.name),
				 errdetail("Its ids hold times from %s to %s.", from, to)));
	}
	if (node < 0 || (int64) node >= (INT64CONST(1) << l->node_bits))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("node %d is out of range for generator \"%s\"", node, c->def.name),
				 errdetail("Its nodes are from 0 to %lld.",
						   (long long) ((INT64CONST(1) << l->node_bits) - 1))));
	if (seq < 0 || seq > cosid_layout_max_seq(l))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("sequence " INT64_FORMAT " is out of range for generator \"%s\"",
						seq, c->def.name),
				 errdetail("Its sequences are from 0 to " INT64_FORMAT ".", cosid_layout_max_seq(l))));
	PG_RETURN_INT64((int64) ((uint64) cosid_layout_pack(l, time, node, seq) << c->def.uncertainty_bits));
}

Datum
cosid_is_js_safe(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);

	PG_RETURN_BOOL(id >= -JS_MAX_SAFE_INTEGER && id <= JS_MAX_SAFE_INTEGER);
}

/* ---------- state views ---------- */

Datum
cosid_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (cosid_shared == NULL)
		return (Datum) 0;

	LWLockAcquire(cosid_shared->gen_hash_lock, LW_SHARED);
	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];
		Datum		values[14];
		bool		nulls[14] = {false};
		uint64		counts[7];

		/* time-based state is the server's; a segment's, its database's */
		if (!e->in_use || (!e->time_based && e->key.dbid != MyDatabaseId))
			continue;
		SpinLockAcquire(&e->mutex);
		counts[0] = e->issued;
		counts[1] = e->seq_waits;
		counts[2] = e->clock_borrows;
		counts[3] = e->clock_waits;
		counts[4] = e->clock_failures;
		counts[5] = e->segment_fetches;
		counts[6] = e->segment_waits;
		SpinLockRelease(&e->mutex);
		values[0] = CStringGetTextDatum(e->key.name);
		for (int j = 0; j < 7; j++)
			values[j + 1] = Int64GetDatum((int64) counts[j]);
		/* whose state this is: the view matches it to the catalog */
		values[8] = Int64GetDatum(e->layout.epoch_ms);
		values[9] = Int32GetDatum((int32) e->layout.unit_ms);
		values[10] = Int32GetDatum(e->layout.time_bits);
		values[11] = Int32GetDatum(e->layout.node_bits);
		values[12] = Int32GetDatum(e->layout.seq_bits);
		values[13] = ObjectIdGetDatum(e->seqid);
		if (!e->time_based)
			nulls[8] = nulls[9] = nulls[10] = nulls[11] = nulls[12] = true;
		else
			nulls[13] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(cosid_shared->gen_hash_lock);
	return (Datum) 0;
}

Datum
cosid_slot(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12] = {false};
	CosidSlotState state;
	int64		start;
	int64		end;
	bool		lease = cosid_lease_mode();
	bool		connected;
	int64		renewed;
	char		error[256];
	char		instance[256];

	cosid_require_preload("cosid_slot()");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	state = (CosidSlotState) pg_atomic_read_u32(&cosid_shared->slot_state);
	start = (int64) pg_atomic_read_u64(&cosid_shared->window_start_ms);
	end = (int64) pg_atomic_read_u64(&cosid_shared->window_end_ms);
	SpinLockAcquire(&cosid_shared->lease_lock);
	connected = cosid_shared->store_connected;
	renewed = cosid_shared->last_renewal_ms;
	strlcpy(error, cosid_shared->last_error, sizeof(error));
	strlcpy(instance, cosid_shared->instance, sizeof(instance));
	SpinLockRelease(&cosid_shared->lease_lock);

	values[0] = CStringGetTextDatum(lease ? "lease" : "manual");
	if (lease && state != COSID_SLOT_ACTIVE)
		nulls[1] = true;
	else
		values[1] = Int32GetDatum(lease ? cosid_shared->slot : cosid_manual_slot());
	values[2] = CStringGetTextDatum(cosid_namespace);
	values[3] = CStringGetTextDatum(state == COSID_SLOT_ACTIVE ? "active" :
									state == COSID_SLOT_CLOSED ? "closed" :
									state == COSID_SLOT_RECOVERY ? "recovery" : "starting");
	/* a start of 0: no earlier window bounds this one */
	nulls[4] = state != COSID_SLOT_ACTIVE || start == 0;
	nulls[5] = state != COSID_SLOT_ACTIVE || end == 0;
	if (!nulls[4])
		values[4] = TimestampTzGetDatum(cosid_ms_to_timestamptz(start));
	if (!nulls[5])
		values[5] = TimestampTzGetDatum(cosid_ms_to_timestamptz(end));
	values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&cosid_shared->window_renewals));
	values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&cosid_shared->renewal_failures));
	/* the store's state: lease mode only */
	nulls[8] = nulls[9] = nulls[10] = nulls[11] = !lease;
	if (lease)
	{
		values[8] = CStringGetTextDatum(instance);
		values[9] = BoolGetDatum(connected);
		nulls[10] = renewed == 0;
		if (renewed != 0)
			values[10] = TimestampTzGetDatum(cosid_ms_to_timestamptz(renewed));
		nulls[11] = error[0] == '\0';
		if (error[0] != '\0')
			values[11] = CStringGetTextDatum(error);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

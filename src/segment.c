/*
 * segment.c - issuing the numbers of segment generators: segments of
 * consecutive numbers fetched from the generator's backing sequence, kept
 * in the generator's shared entry, with a reserve fetched ahead.
 *
 * One backend at a time fetches for an entry (its fetching flag).  A fetch
 * makes the segment durable (nextval, so the WAL has it) before any of its
 * numbers is handed out.  Periodic generators ("group") take their period
 * from the clock in the group's zone (cosid.debug_now for tests).
 *
 * Owns: the fetch, the fetching flag of this backend, cosid.debug_now.
 * Must not: read the catalog (gencache.c does) or issue time-based ids.
 */
#include "segment.h"
#include "gencache.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_sequence.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
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
size_t
cosid_segment_issue(CosidGenCache *c, size_t n, int64 *out)
{
	CosidGenEntry *e = c->entry;
	size_t		got = 0;
	bool		counted_wait = false;
	int			spins = 0;

	register_exit_callback();

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
			cosid_gencache_reattach(c);
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


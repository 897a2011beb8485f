/*
 * inspect.c - what ids and generators hold: cosid_unpack, cosid_pack,
 * cosid_is_js_safe, cosid_capacity (a generator's limits and when its ids run
 * out), and the views cosid_stats (generators' counters) and cosid_slot (this
 * server's slot and window); cosid_slot_confirm(), the operator's word that a
 * copied server's manual slot is its own (the one call here that changes
 * something: it asks the slot worker to open the window).
 *
 * Owns: nothing but these functions.  Must not: issue ids or change a
 * generator's state.
 */
#include "catalog.h"
#include "codecbind.h"
#include "gencache.h"
#include "genstate.h"
#include "issue.h"
#include "slot.h"
#include "slot_lease.h"
#include "upgrade.h"

#include <math.h>

#include "access/htup_details.h"
#include "common/int.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(cosid_unpack);
PG_FUNCTION_INFO_V1(cosid_unpack_text);
PG_FUNCTION_INFO_V1(cosid_pack);
PG_FUNCTION_INFO_V1(cosid_is_js_safe);
PG_FUNCTION_INFO_V1(cosid_stats);
PG_FUNCTION_INFO_V1(cosid_slot);
PG_FUNCTION_INFO_V1(cosid_capacity);

#define JS_MAX_SAFE_INTEGER ((INT64CONST(1) << 53) - 1)

static void
check_time_based(CosidGenCache *c, const char *what)
{
	if (!COSID_TIME_BASED(c->def.spec.strategy))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s needs a time-based generator; \"%s\" is a segment generator", what,
						c->def.name),
				 errdetail("A segment number has no time, node or sequence parts.")));
}

/* ---------- packing and unpacking ---------- */

static Datum
parts_tuple(FunctionCallInfo fcinfo, CosidGenCache *c, const CosidId *id)
{
	const CosidLayout *l = &c->def.spec.layout;
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

			lastid = (lastid << c->def.spec.uncertainty_bits) |
				((UINT64CONST(1) << c->def.spec.uncertainty_bits) - 1);
			snprintf(idtext, sizeof(idtext), INT64_FORMAT, id->id);
			snprintf(lasttext, sizeof(lasttext), UINT64_FORMAT, lastid);
		}
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("time of id %s of generator \"%s\" is out of range for timestamptz",
						idtext, c->def.name),
				 errdetail("Only its ids up to %s hold a time that fits a timestamptz (up to %s).",
						   lasttext, cosid_ms_text(l->epoch_ms + last * l->unit_ms))));
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
					   cosid_layout_total_bits(&c->def.spec.layout) + c->def.spec.uncertainty_bits)));
}

Datum
cosid_unpack(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), false);
	CosidId		id;

	check_time_based(c, "cosid_unpack()");
	cosid_check_not_cosid80(c, "cosid_unpack_text(name, text)");
	memset(&id, 0, sizeof(id));
	id.id = PG_GETARG_INT64(1);
	if (!cosid_layout_holds_id(&c->def.spec.layout, c->def.spec.uncertainty_bits, id.id))
		id_out_of_range(c, id.id);
	cosid_layout_unpack(&c->def.spec.layout, id.id >> c->def.spec.uncertainty_bits,
						&id.time, &id.node, &id.seq);
	PG_RETURN_DATUM(parts_tuple(fcinfo, c, &id));
}

Datum
cosid_unpack_text(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), false);
	CosidId		id;

	check_time_based(c, "cosid_unpack_text()");
	cosid_codecbind_decode(c->codec, PG_GETARG_TEXT_PP(1), &id);
	if (!id.wide)
	{
		/* a custom decode function may return any bigint */
		if (!cosid_layout_holds_id(&c->def.spec.layout, c->def.spec.uncertainty_bits, id.id))
			id_out_of_range(c, id.id);
		cosid_layout_unpack(&c->def.spec.layout, id.id >> c->def.spec.uncertainty_bits,
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
	const CosidLayout *l = &c->def.spec.layout;
	/* the last Unix millisecond whose microseconds fit an int64 */
	const int64 max_ms = PG_INT64_MAX / 1000;
	int64		last;
	int64		time;

	check_time_based(c, "cosid_pack()");
	cosid_check_not_cosid80(c, "cosid_unpack_text(name, text) to read cosid80 ids");
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
		char	   *from = pstrdup(cosid_ms_text(l->epoch_ms));
		char	   *to = pstrdup(cosid_ms_text(Min(l->epoch_ms + (last + 1) * l->unit_ms - 1, max_ms)));

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
	PG_RETURN_INT64((int64) ((uint64) cosid_layout_pack(l, time, node, seq) << c->def.spec.uncertainty_bits));
}

Datum
cosid_is_js_safe(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);

	PG_RETURN_BOOL(id >= -JS_MAX_SAFE_INTEGER && id <= JS_MAX_SAFE_INTEGER);
}

/* ---------- state views ---------- */

/* A time-based generator of this database: its name and identity. */
typedef struct TimedGen
{
	char	   *name;
	int64		ident;
} TimedGen;

/*
 * This database's time-based generators (1.2's catalog: identity 0), read
 * as the catalog's owner.
 */
static TimedGen *
timed_generators(int *count)
{
	TimedGen   *gens;
	bool		isnull;

	SPI_connect();
	if (cosid_catalog_exec(cosid_catalog_is_1_3() ?
						   "SELECT name, identity FROM cosid.generator WHERE strategy OPERATOR(pg_catalog.<>) 'segment'" :
						   "SELECT name, 0::pg_catalog.int8 FROM cosid.generator WHERE strategy OPERATOR(pg_catalog.<>) 'segment'",
						   0, NULL, NULL, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	*count = (int) SPI_processed;
	gens = SPI_palloc(sizeof(TimedGen) * Max(*count, 1));
	for (int i = 0; i < *count; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		char	   *name = TextDatumGetCString(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));

		gens[i].name = SPI_palloc(strlen(name) + 1);
		strcpy(gens[i].name, name);
		gens[i].ident = DatumGetInt64(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
	}
	SPI_finish();
	return gens;
}

/* This database's timed generators, for cosid_gen_stats. */
typedef struct TimedGens
{
	const TimedGen *gens;
	int			count;
} TimedGens;

/*
 * This database's entries only: a segment generator's is keyed by its
 * database; a time-based one's by its identity, which this database and its
 * copies have (another database's generator of the name has another).
 */
static bool
in_this_database(const CosidGenKey *key, bool time_based, void *arg)
{
	const TimedGens *timed = arg;

	if (!time_based)
		return key->dbid == MyDatabaseId;
	for (int i = 0; i < timed->count; i++)
		if (timed->gens[i].ident == key->ident &&
			strncmp(timed->gens[i].name, key->name, NAMEDATALEN) == 0)
			return true;
	return false;
}

Datum
cosid_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimedGens	timed;
	CosidGenStats *stats;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	if (!cosid_preloaded)
		return (Datum) 0;

	timed.gens = timed_generators(&timed.count);
	n = cosid_gen_stats(in_this_database, &timed, &stats);
	for (int i = 0; i < n; i++)
	{
		const CosidGenStats *s = &stats[i];
		Datum		values[15];
		bool		nulls[15] = {false};

		values[0] = CStringGetTextDatum(s->key.name);
		values[1] = Int64GetDatum((int64) s->counts.issued);
		values[2] = Int64GetDatum((int64) s->counts.seq_waits);
		values[3] = Int64GetDatum((int64) s->counts.clock_borrows);
		values[4] = Int64GetDatum((int64) s->counts.clock_waits);
		values[5] = Int64GetDatum((int64) s->counts.clock_failures);
		values[6] = Int64GetDatum((int64) s->counts.segment_fetches);
		values[7] = Int64GetDatum((int64) s->counts.segment_waits);
		/* whose state this is: the view matches it to the catalog */
		values[8] = Int64GetDatum(s->layout.epoch_ms);
		values[9] = Int32GetDatum((int32) s->layout.unit_ms);
		values[10] = Int32GetDatum(s->layout.time_bits);
		values[11] = Int32GetDatum(s->layout.node_bits);
		values[12] = Int32GetDatum(s->layout.seq_bits);
		values[13] = ObjectIdGetDatum(s->seqid);
		if (!s->time_based)
			nulls[8] = nulls[9] = nulls[10] = nulls[11] = nulls[12] = true;
		/* no sequence: time-based, or segments from the lease store */
		nulls[13] = !OidIsValid(s->seqid);
		values[14] = Int64GetDatum(s->key.ident);
		nulls[14] = !s->time_based;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
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
	bool		citus = cosid_citus_slot_mode();
	CosidLeaseStatus lease_st;

	cosid_require_preload("cosid_slot()");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	state = cosid_window_state();
	start = cosid_window_start();
	end = cosid_window_end();
	cosid_lease_status(&lease_st);

	values[0] = CStringGetTextDatum(lease ? "lease" : citus ? "citus" : "manual");
	/* a leased slot or one from Citus: the slot of the open window */
	if ((lease || citus) && state != COSID_SLOT_ACTIVE)
		nulls[1] = true;
	else
		values[1] = Int32GetDatum(lease || citus ? cosid_window_slot() : cosid_manual_slot());
	values[2] = CStringGetTextDatum(cosid_namespace);
	values[3] = CStringGetTextDatum(state == COSID_SLOT_ACTIVE ? "active" :
									state == COSID_SLOT_CLOSED ? "closed" :
									state == COSID_SLOT_RECOVERY ? "recovery" :
									state == COSID_SLOT_UNCONFIRMED ? "unconfirmed" :
									state == COSID_SLOT_UPGRADED ? "upgraded" : "starting");
	/* a start of 0: no earlier window bounds this one */
	nulls[4] = state != COSID_SLOT_ACTIVE || start == 0;
	nulls[5] = state != COSID_SLOT_ACTIVE || end == 0;
	if (!nulls[4])
		values[4] = TimestampTzGetDatum(cosid_ms_to_timestamptz(start));
	if (!nulls[5])
		values[5] = TimestampTzGetDatum(cosid_ms_to_timestamptz(end));
	values[6] = Int64GetDatum((int64) cosid_window_renewals());
	values[7] = Int64GetDatum((int64) lease_st.renewal_failures);
	/* the store's state: lease mode only */
	nulls[8] = nulls[9] = nulls[10] = nulls[11] = !lease;
	if (lease)
	{
		values[8] = CStringGetTextDatum(lease_st.instance);
		values[9] = BoolGetDatum(lease_st.store_connected);
		nulls[10] = lease_st.last_renewal_ms == 0;
		if (!nulls[10])
			values[10] = TimestampTzGetDatum(cosid_ms_to_timestamptz(lease_st.last_renewal_ms));
		nulls[11] = lease_st.last_error[0] == '\0';
		if (!nulls[11])
			values[11] = CStringGetTextDatum(lease_st.last_error);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
/* ---------- cosid_slot_confirm() ---------- */

PG_FUNCTION_INFO_V1(cosid_slot_confirm);

/*
 * The operator's word that a server started from a copy may use its manual
 * slot (slot_manual.c): the server it was copied from no longer does.
 * true once the window opened; false when there was nothing to confirm.
 */
Datum
cosid_slot_confirm(PG_FUNCTION_ARGS)
{
	int			slot;

	cosid_require_preload("cosid_slot_confirm()");
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to confirm this server's cosid slot"),
				 errdetail("Only a superuser may say that a copied server's manual slot is its own.")));
	if (cosid_lease_mode())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cosid_slot_confirm() confirms a manual slot; this server leases its slot"),
				 errdetail("The lease store gives each instance its own slot, copied or not.")));
	/* after pg_upgrade, no confirmation stands in for the old state */
	if (cosid_window_state() == COSID_SLOT_UPGRADED)
		cosid_upgrade_error();
	slot = cosid_configured_slot();
	if (cosid_window_state() != COSID_SLOT_UNCONFIRMED)
	{
		ereport(NOTICE,
				(errmsg("this server's slot %d needs no confirmation", slot)));
		PG_RETURN_BOOL(false);
	}
	cosid_window_confirm();
	/* the worker takes it at its next turn; wait for the window */
	for (int i = 0; i < 500 && cosid_window_state() != COSID_SLOT_ACTIVE; i++)
	{
		cosid_sleep_ms(10, COSID_WAIT_WINDOW);
		CHECK_FOR_INTERRUPTS();
	}
	if (cosid_window_state() != COSID_SLOT_ACTIVE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the cosid slot worker did not open a window for slot %d within 5 seconds", slot),
				 errhint("The confirmation stands; check the server log for messages from the cosid slot worker.")));
	PG_RETURN_BOOL(true);
}

/* ---------- capacity ---------- */

/* An unsigned 128-bit value hi:lo as numeric. */
static Datum
u128_numeric(uint64 hi, uint64 lo)
{
	char		buf[48];

	cosid_u128_decimal(hi, lo, buf);
	return DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* 2^bits - 1 (bits 0 to 128) as hi:lo. */
static void
u128_mask(int bits, uint64 *hi, uint64 *lo)
{
	*lo = bits >= 64 ? PG_UINT64_MAX : (UINT64CONST(1) << bits) - 1;
	*hi = bits <= 64 ? 0 : bits >= 128 ? PG_UINT64_MAX : (UINT64CONST(1) << (bits - 64)) - 1;
}

/*
 * The last number a local segment generator's backing sequence handed out
 * (read as the sequence's owner, as issuing does); false when none was.
 */
static bool
sequence_last_value(Oid seqid, int64 *last)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(seqid)};
	CosidAsRole as;
	bool		isnull = true;

	cosid_begin_as_role(cosid_rel_owner(seqid), &as);
	if (SPI_execute_with_args("SELECT pg_catalog.pg_sequence_last_value($1)", 1, argtypes, values,
							  NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the backing sequence of a segment generator");
	*last = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	cosid_end_as_role(&as);
	return !isnull;
}

/*
 * cosid_capacity(name): a generator's limits from its stored layout and this
 * server's cosid.machine_bits, and when its ids run out.  A time-based id
 * runs out when its time part does, or earlier when it must fit an int4:
 * then only the times whose every id (any node, any sequence) fits count.
 * A layout with fewer node bits than cosid.machine_bits is shown (that is
 * what one may want to find out), not refused as issuing would.
 */
Datum
cosid_capacity(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	TupleDesc	tupdesc;
	Datum		values[18];
	bool		nulls[18] = {false};
	Jsonb	   *config;
	CosidGenDef stored;
	CosidGenDef def;
	const CosidDefinition *spec = &def.spec;
	int64		now_ms = cosid_timestamptz_to_ms(GetCurrentTransactionStartTimestamp());
	bool		seq_known = false;
	bool		seq_called = false;
	int64		seq_last = 0;
	uint64		hi,
				lo;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	cosid_catalog_check_name(name);

	/*
	 * Everything read in SPI's memory is gone at SPI_finish: keep the
	 * definition's scalars (the codec list is not used) and the sequence's
	 * last number.
	 */
	SPI_connect();
	memset(&stored, 0, sizeof(stored));
	cosid_catalog_read(name, false, false, &config, &stored, NULL);
	cosid_gendef_parse(name, config, &def, false);
	def.spec.strategy = stored.spec.strategy;
	def.spec.layout = stored.spec.layout;
	def.spec.codec = NULL;
	def.spec.adopt = NULL;
	if (!COSID_TIME_BASED(spec->strategy) && spec->group == COSID_GROUP_NONE &&
		spec->distributor == COSID_DISTRIBUTOR_LOCAL && OidIsValid(stored.seqid))
	{
		seq_known = true;
		seq_called = sequence_last_value(stored.seqid, &seq_last);
	}
	SPI_finish();

	values[0] = CStringGetTextDatum(cosid_strategy_name(spec->strategy));
	values[7] = Int32GetDatum(cosid_machine_bits);
	values[9] = Int64GetDatum(INT64CONST(1) << cosid_machine_bits);
	if (COSID_TIME_BASED(spec->strategy))
	{
		const CosidLayout *l = &spec->layout;
		int			low = l->node_bits + l->seq_bits + spec->uncertainty_bits;
		int			total = l->time_bits + low;
		int			value_bits = spec->int32 ? Min(total, 31) : total;
		/* the time bits whose every id fits: all of them, unless "int" */
		int			eff = Max(Min(l->time_bits, value_bits - low), 0);
		int64		span;
		int64		out_ms;
		int64		out_us;
		bool		fits;

		values[1] = CStringGetTextDatum(l->unit_ms == 1000 ? "s" : "ms");
		values[2] = TimestampTzGetDatum(cosid_ms_to_timestamptz(l->epoch_ms));
		values[3] = Int32GetDatum(l->time_bits);
		values[4] = Int32GetDatum(l->node_bits);
		values[5] = Int32GetDatum(l->seq_bits);
		values[6] = Int32GetDatum(spec->uncertainty_bits);
		values[8] = Int64GetDatum(INT64CONST(1) << l->node_bits);
		values[10] = Int64GetDatum(INT64CONST(1) << l->seq_bits);
		values[11] = DirectFunctionCall2(numeric_mul,
										 NumericGetDatum(int64_to_numeric(INT64CONST(1) << l->seq_bits)),
										 NumericGetDatum(int64_to_numeric(1000 / l->unit_ms)));
		u128_mask(spec->int32 ? Min(total, 31) : total, &hi, &lo);
		values[12] = u128_numeric(hi, lo);
		/* the first instant past the last time unit that holds ids */
		fits = eff < 63 &&
			!pg_mul_s64_overflow(INT64CONST(1) << eff, l->unit_ms, &span) &&
			!pg_add_s64_overflow(l->epoch_ms, span, &out_ms) &&
			!pg_mul_s64_overflow(out_ms, 1000, &out_us) &&
			IS_VALID_TIMESTAMP(cosid_ms_to_timestamptz(out_ms));
		if (fits)
			values[13] = TimestampTzGetDatum(cosid_ms_to_timestamptz(out_ms));
		else
			nulls[13] = true;	/* past the end of timestamptz */
		values[14] = Float8GetDatum(((double) l->epoch_ms + ldexp(1.0, eff) * (double) l->unit_ms -
									 (double) now_ms) / (365.2425 * 86400000.0));
		values[15] = BoolGetDatum(spec->strategy != COSID_STRATEGY_COSID80 &&
								  (spec->int32 || total <= 53));
		nulls[16] = nulls[17] = true;
	}
	else
	{
		int64		max = spec->int32 ? PG_INT32_MAX : PG_INT64_MAX;

		for (int i = 1; i <= 6; i++)
			nulls[i] = true;
		nulls[8] = nulls[10] = nulls[11] = nulls[13] = nulls[14] = true;
		values[12] = NumericGetDatum(int64_to_numeric(max));
		values[15] = BoolGetDatum(spec->int32);
		/*
		 * What is left: below the largest number, above the last one this
		 * server's sequence handed out (at least start).  A period's numbers
		 * (group) restart each period, and a lease-store counter lives on
		 * the store: neither is known here.
		 */
		if (seq_known)
		{
			int64		last = seq_called ? Max(seq_last, spec->start - 1) : spec->start - 1;

			values[16] = Int64GetDatum(seq_last);
			nulls[16] = !seq_called;
			values[17] = NumericGetDatum(int64_to_numeric(last >= max ? 0 : max - last));
		}
		else
			nulls[16] = nulls[17] = true;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

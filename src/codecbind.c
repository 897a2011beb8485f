/*
 * codecbind.c - codec lists on the PostgreSQL side (see codecbind.h): a list
 * parsed by src/core/codec.c, bound to time zones, SQL functions and a
 * generator's layout, and the pipeline that runs it both ways.
 *
 * Owns: binding (zones; custom functions: a generator's fixed by OID, the
 * owner rule, who they run as; which items an immutable list may hold) and
 * running a bound list.  Must not: look generators up or read the catalog
 * (its callers hand it a definition), or be bound per row (callers keep the
 * result).
 */
#include "codecbind.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "access/xact.h"
#include "catalog/pg_proc.h"
#include "utils/datetime.h"
#include "catalog/namespace.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/jsonb.h"
#include "utils/acl.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/*
 * Whether the list being bound is ad hoc: its errors say "invalid codec
 * list", a generator's "invalid generator definition".
 */
static bool binding_adhoc = false;

#define key_error(path, ...) cosid_invalid_key(binding_adhoc, path, __VA_ARGS__)

static char *
item_path(const char *prefix, int i, CosidCodecKind k, const char *key)
{
	return key ? psprintf("%s[%d].%s.%s", prefix, i, cosid_codec_kind_name(k), key)
		: psprintf("%s[%d].%s", prefix, i, cosid_codec_kind_name(k));
}

static pg_tz *
bind_zone(const char *zone, const char *path)
{
	pg_tz	   *tz = pg_tzset(zone ? zone : "UTC");

	if (tz == NULL)
		key_error(path, "unknown time zone \"%s\"", zone);
	return tz;
}

/*
 * "schema.f(bigint)": a function of one argument as the catalog's codec list
 * names it (written by cosid_codec_qualify, and by the updates to 1.1 and
 * 1.3, which format it the same way).
 */
static char *
qualified_signature(Oid fn)
{
	Oid		   *argtypes;
	int			nargs;

	(void) get_func_signature(fn, &argtypes, &nargs);
	return psprintf("%s(%s)",
					quote_qualified_identifier(get_namespace_name(get_func_namespace(fn)),
											   get_func_name(fn)),
					nargs == 1 ? format_type_be(argtypes[0]) : "...");
}

/* A role's name for a message, also when it was dropped. */
static const char *
role_name(Oid role)
{
	const char *name = GetUserNameFromId(role, true);

	return name ? name : psprintf("(dropped role %u)", role);
}

/*
 * The owner rule of a generator's custom functions: they run as the
 * generator's owner, and whoever owns a function can replace its code
 * (CREATE OR REPLACE), so only the generator's owner or a superuser may own
 * them.  A superuser's function is safe to run as anyone; another role's
 * would let that role run code with the owner's rights.  Checked at
 * define/alter and again at every bind, so an owner changed later (ALTER
 * FUNCTION ... OWNER TO, or a role that stopped being superuser) stops the
 * generator's codec the same way.
 */
static void
check_function_owner(Oid fn, const CosidGenDef *gen, const char *path)
{
	HeapTuple	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	Oid			fnowner;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for function %u", fn);
	fnowner = ((Form_pg_proc) GETSTRUCT(tp))->proowner;
	ReleaseSysCache(tp);
	if (fnowner == gen->owner || superuser_arg(fnowner))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for function %s of generator \"%s\"",
					format_procedure(fn), gen->name),
			 errdetail("At %s: the function is owned by role %s.  A generator's custom functions run as "
					   "its owner, %s, so they must be owned by that role or by a superuser: whoever "
					   "owns a function can replace its code.",
					   path, role_name(fnowner), role_name(gen->owner)),
			 errhint("Give the function to role %s (ALTER FUNCTION ... OWNER TO), or bind a function "
					 "that role owns with cosid_alter().", role_name(gen->owner))));
}

/*
 * Bind a custom item's function "f(bigint)" or "f(text)" (which: 0 encode,
 * 1 decode) and check what it takes and returns.
 *
 * A generator's functions are fixed by OID when its codec is defined or
 * altered (gen->codec_fns, the catalog's codec_functions): a stored
 * generator, and one altered without a new "codec", use that function and
 * no other.  If it was dropped, the generator's codec fails (55000) rather
 * than find a function created again under its name, by whoever may create
 * one in that schema.  Only a codec list given to cosid_define or
 * cosid_alter is resolved by name, the caller's way (as written, then kept
 * by OID), and an ad hoc list the caller's way every time it is bound.  A
 * catalog from before 1.3 (gen->codec_by_name) has only the names: they are
 * found with search_path = pg_catalog, pg_temp, whatever the caller's.
 *
 * A generator's functions must pass the owner rule (check_function_owner)
 * and its owner needs EXECUTE on them when the codec is bound from the
 * catalog; a list given to cosid_define or cosid_alter, or ad hoc, needs
 * EXECUTE for the caller.
 */
static void
bind_function(const char *sig, int which, Oid argtype, Oid rettype, const char *path,
			  CosidBindMode mode, const CosidGenDef *gen, FmgrInfo *finfo, MemoryContext cxt)
{
	Oid			fn = InvalidOid;
	Oid		   *argtypes;
	int			nargs;
	Oid			ret;
	Oid			user = mode == COSID_BIND_STORED ? gen->owner : GetUserId();

	if (gen != NULL && OidIsValid(gen->codec_fns[which]))
	{
		char	   *now;

		fn = gen->codec_fns[which];
		if (!SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(fn)))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("custom codec function %s of generator \"%s\" no longer exists",
							sig, gen->name),
					 errdetail("At %s: the generator's codec was bound to that function (OID %u), which "
							   "was dropped.  A function created again under its name is not used.",
							   path, fn),
					 errhint("Bind the codec again with cosid_alter(), giving its \"codec\": the names "
							 "in it are resolved then.")));
		/*
		 * The OID still names the function the list names: an OID copied
		 * from another cluster (pg_upgrade gives functions new OIDs) or
		 * taken by a new function after OID wraparound is never used, and
		 * neither is a function renamed or moved since.
		 */
		now = qualified_signature(fn);
		if (strcmp(now, sig) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("custom codec function %s of generator \"%s\" is not the function its codec was bound to",
							sig, gen->name),
					 errdetail("At %s: the codec was bound to function OID %u, which is now %s: the function "
							   "was renamed or moved, or the database was upgraded with pg_upgrade, which "
							   "gives functions new OIDs.", path, fn, now),
					 errhint("Bind the codec again with cosid_alter(), giving its \"codec\": the names "
							 "in it are resolved then.")));
	}
	else if (mode == COSID_BIND_STORED && !gen->codec_by_name)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("custom codec function %s of generator \"%s\" is not bound", sig, gen->name),
				 errdetail("At %s: the catalog holds no function for it: its name found no function "
						   "when the generator was restored or updated to cosid 1.3.", path),
				 errhint("Bind the codec again with cosid_alter(), giving its \"codec\": the names "
						 "in it are resolved then.")));
	else
	{
		LOCAL_FCINFO(lookup, 1);
		Datum		d;
		int			nest = -1;

		if (mode == COSID_BIND_STORED)
		{
			nest = NewGUCNestLevel();
			(void) set_config_option("search_path", "pg_catalog, pg_temp",
									 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
									 true, 0, false);
		}
		/* to_regprocedure() answers NULL for a function that does not exist */
		InitFunctionCallInfoData(*lookup, NULL, 1, InvalidOid, NULL, NULL);
		lookup->args[0].value = CStringGetTextDatum(sig);
		lookup->args[0].isnull = false;
		d = to_regprocedure(lookup);
		if (!lookup->isnull)
			fn = DatumGetObjectId(d);
		if (nest >= 0)
			AtEOXact_GUC(false, nest);
		if (fn == InvalidOid)
			key_error(path, "function %s does not exist", sig);
	}
	if (gen != NULL)
		check_function_owner(fn, gen, path);
	ret = get_func_signature(fn, &argtypes, &nargs);
	if (nargs != 1 || argtypes[0] != argtype || ret != rettype)
		key_error(path, "expected a function of (%s) returning %s",
					format_type_be(argtype), format_type_be(rettype));
	/* cosid_encode and cosid_decode promise STABLE and PARALLEL SAFE */
	if (func_volatile(fn) == PROVOLATILE_VOLATILE || func_parallel(fn) != PROPARALLEL_SAFE)
		key_error(path, "function %s must be IMMUTABLE or STABLE, and PARALLEL SAFE", sig);
	/* a generator outlives the session: its functions must too */
	if (mode == COSID_BIND_DEFINE && isAnyTempNamespace(get_func_namespace(fn)))
		key_error(path, "function %s is temporary; a generator's codec needs a permanent function", sig);
	if (cosid_proc_aclcheck(fn, user, ACL_EXECUTE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function %s", format_procedure(fn)),
				 errdetail("%s: role %s needs EXECUTE on the function.", path,
						   GetUserNameFromId(user, false))));
	fmgr_info_cxt(fn, finfo, cxt);
}

/*
 * Call a custom function: as the caller for an ad hoc list, else as the
 * generator's owner under SECURITY_RESTRICTED_OPERATION, as an index
 * expression runs, so that whoever calls runs nothing with its own rights.
 */
static Datum
call_custom(const CosidCodecRt *rt, const FmgrInfo *flinfo, Datum arg)
{
	LOCAL_FCINFO(fcinfo, 1);
	CosidAsRole as;
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, (FmgrInfo *) flinfo, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = arg;
	fcinfo->args[0].isnull = false;
	if (OidIsValid(rt->run_as))
		cosid_begin_as_role(rt->run_as, &as);
	result = FunctionCallInvoke(fcinfo);
	if (OidIsValid(rt->run_as))
		cosid_end_as_role(&as);
	if (fcinfo->isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("codec function %s returned NULL", format_procedure(flinfo->fn_oid)),
				 errdetail("A custom codec function must return a value for every input.")));
	return result;
}

/* config with codec[i].custom.key set to the function's qualified name. */
static Jsonb *
set_custom_name(Jsonb *config, int i, const char *key, Oid fn)
{
	Datum		path[4];
	char	   *name;
	JsonbValue	v;

	name = qualified_signature(fn);

	v.type = jbvString;
	v.val.string.val = name;
	v.val.string.len = strlen(name);
	path[0] = CStringGetTextDatum("codec");
	path[1] = CStringGetTextDatum(psprintf("%d", i));
	path[2] = CStringGetTextDatum("custom");
	path[3] = CStringGetTextDatum(key);
	return DatumGetJsonbP(DirectFunctionCall4(jsonb_set, JsonbPGetDatum(config),
											  PointerGetDatum(construct_array(path, 4, TEXTOID, -1, false, TYPALIGN_INT)),
											  JsonbPGetDatum(JsonbValueToJsonb(&v)),
											  BoolGetDatum(false)));
}

Jsonb *
cosid_codec_qualify(Jsonb *config, const CosidCodecRt *rt)
{
	if (rt->custom_item < 0)
		return config;
	config = set_custom_name(config, rt->custom_item, "encode", rt->encode_fn.fn_oid);
	return set_custom_name(config, rt->custom_item, "decode", rt->decode_fn.fn_oid);
}

bool
cosid_codec_functions(const CosidCodecRt *rt, Oid fns[2])
{
	if (rt->custom_item < 0)
		return false;
	fns[0] = rt->encode_fn.fn_oid;
	fns[1] = rt->decode_fn.fn_oid;
	return true;
}

/*
 * Whether a friendly item's zone is UTC (absent, or "UTC" in any case, as
 * pg_tzset() reads it): the one zone whose rules are fixed by definition.
 * Every other name, "Etc/UTC" and "GMT" included, is a file of the time zone
 * database, which an update (or another system's tzdata) may change; a
 * bound UTC is not looked up there at all (zones[i] NULL: plain arithmetic).
 */
static bool
zone_is_utc(const char *zone)
{
	return zone == NULL || pg_strcasecmp(zone, "UTC") == 0;
}

static void
impure_error(const char *path, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid codec list"),
			 errdetail("At %s: %s.", path, why),
			 errhint("cosid_encode_immutable and cosid_decode_immutable take only items whose text "
					 "depends on the id or the text alone; cosid_encode and cosid_decode take "
					 "every item, but are STABLE.")));
}

/*
 * COSID_BIND_IMMUTABLE: refuse the first item whose text depends on
 * anything but the input, in list order.  Decided item by item (codec.h):
 *
 * - radix, prefix, suffix: the digits and strings of the list alone.
 * - grouped: arithmetic on the number and the Gregorian calendar (is the
 *   period a date); its group is the list's ("day" by default).  The zone
 *   of a periodic segment generator decides which period a new number is
 *   in when it is issued, never the text of a given number.
 * - friendly: the id's time as a local time in its zone; the layout is a
 *   preset, fixed in the code.  A zone's offsets and transitions come from
 *   the time zone database and change with it (Brazil, Mexico, Egypt and
 *   others changed theirs lately), so only UTC passes, and is computed
 *   without the database.  PostgreSQL ignores leap seconds, and so does
 *   this: UTC is plain arithmetic on Unix milliseconds.
 * - date-prefix: "NOW" (the default without a generator) is the clock;
 *   "ID_TIME" needs a generator's layout, which cosid_alter can change
 *   (and ad hoc lists refuse it in any case).
 * - custom: SQL functions named by text, resolved when the list is bound,
 *   through the caller's search_path and privileges.  The same expression
 *   could run other functions in another session or after a function is
 *   dropped and created again, and PostgreSQL records no dependency of an
 *   index on a function named inside a jsonb constant.  Refused: an
 *   IMMUTABLE function of the user's goes straight into the index
 *   expression, where PostgreSQL checks and records it.
 * - parts-radix, parts-friendly: only for cosid80 generators, whose 80-bit
 *   ids no bigint holds; the bind below refuses them ad hoc (after
 *   parts-friendly's zone, as for friendly).
 */
static void
check_immutable(const CosidCodec *codec, const char *prefix)
{
	for (int i = 0; i < codec->nitems; i++)
	{
		const CosidCodecItem *it = &codec->items[i];

		switch (it->kind)
		{
			case COSID_CODEC_FRIENDLY:
			case COSID_CODEC_PARTS_FRIENDLY:
				if (!zone_is_utc(it->zone))
					impure_error(item_path(prefix, i, it->kind, "zone"),
								 psprintf("%s in time zone \"%s\" depends on that zone's rules, "
										  "which time zone data updates change; only UTC (the default) is fixed",
										  cosid_codec_kind_name(it->kind), it->zone));
				break;
			case COSID_CODEC_DATE_PREFIX:
				if (it->has_source && it->source == COSID_SOURCE_ID_TIME)
					impure_error(item_path(prefix, i, it->kind, "source"),
								 "date-prefix of source \"ID_TIME\" depends on a generator's layout, "
								 "which cosid_alter can change; an immutable list names no generator");
				impure_error(item_path(prefix, i, it->kind, it->has_source ? "source" : NULL),
							 "date-prefix depends on the clock: it shows the date of \"NOW\" "
							 "(the default without a generator)");
				break;
			case COSID_CODEC_CUSTOM:
				impure_error(item_path(prefix, i, it->kind, NULL),
							 "custom depends on the functions its names find through the search_path "
							 "when the list is bound; call an IMMUTABLE function directly in the "
							 "expression instead");
				break;
			case COSID_CODEC_RADIX:
			case COSID_CODEC_PARTS_RADIX:
			case COSID_CODEC_GROUPED:
			case COSID_CODEC_PREFIX:
			case COSID_CODEC_SUFFIX:
				break;
		}
	}
}

/*
 * Parse a codec list and bind it for a generator (gen != NULL) or for ad-hoc
 * use.  Errors name the JSON path; strategy rules are checked here.
 */
CosidCodecRt *
cosid_codec_bind(const char *json, size_t len, const CosidGenDef *gen,
				 CosidBindMode mode, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	CosidCodecRt *rt = palloc0(sizeof(CosidCodecRt));
	char		path[256];
	char		msg[512];
	const char *prefix = "codec";

	binding_adhoc = gen == NULL;
	if (json != NULL)
	{
		if (!cosid_codec_parse(json, len, prefix, cosid_core_alloc, cxt,
							   &rt->codec, path, sizeof(path), msg, sizeof(msg)))
			key_error(path, "%s", msg);
	}

	Assert(gen != NULL ? mode == COSID_BIND_DEFINE || mode == COSID_BIND_STORED :
		   mode == COSID_BIND_CALLER || mode == COSID_BIND_IMMUTABLE);
	if (mode == COSID_BIND_IMMUTABLE)
		check_immutable(&rt->codec, prefix);
	rt->custom_item = -1;
	rt->has_gen = gen != NULL;
	if (gen)
	{
		rt->layout = gen->spec.layout;
		rt->strategy = gen->spec.strategy;
		rt->uncertainty_bits = gen->spec.uncertainty_bits;
	}

	/* a segment number has no time, node or sequence to show */
	if (gen && gen->spec.strategy == COSID_STRATEGY_SEGMENT)
	{
		for (int i = 0; i < rt->codec.nitems; i++)
		{
			CosidCodecItem *it = &rt->codec.items[i];

			if (it->kind == COSID_CODEC_FRIENDLY || it->kind == COSID_CODEC_PARTS_RADIX ||
				it->kind == COSID_CODEC_PARTS_FRIENDLY)
				key_error(item_path(prefix, i, it->kind, NULL),
							"needs a time-based generator; a segment number has no time, node or sequence");
			if (it->kind == COSID_CODEC_DATE_PREFIX && it->has_source &&
				it->source == COSID_SOURCE_ID_TIME)
				key_error(item_path(prefix, i, it->kind, "source"),
							"\"ID_TIME\" needs a time-based generator; a segment number has no time");
		}
	}

	for (int i = 0; i < rt->codec.nitems; i++)
	{
		CosidCodecItem *it = &rt->codec.items[i];

		/* on a cosid80 generator, radix and friendly mean the parts forms */
		if (gen && gen->spec.strategy == COSID_STRATEGY_COSID80)
		{
			if (it->kind == COSID_CODEC_RADIX)
				it->kind = COSID_CODEC_PARTS_RADIX;
			else if (it->kind == COSID_CODEC_FRIENDLY)
				it->kind = COSID_CODEC_PARTS_FRIENDLY;
		}

		switch (it->kind)
		{
			case COSID_CODEC_FRIENDLY:
				if (gen && gen->spec.uncertainty_bits > 0)
					key_error(item_path(prefix, i, it->kind, NULL),
								"not available with uncertainty-bits, whose random bits it would drop");
				if (gen && it->has_layout)
					key_error(item_path(prefix, i, it->kind, "layout"),
								"a generator's codec uses the generator's layout");
				if (!gen)
				{
					rt->layout = cosid_preset_layout(it->has_layout ? it->layout :
													 COSID_PRESET_SNOWFLAKE_MS);
					if (cosid_layout_total_bits(&rt->layout) > 63)
						key_error(item_path(prefix, i, it->kind, "layout"),
									"%s ids do not fit a bigint", cosid_preset_name(it->layout));
				}
				/* immutable: UTC (checked above), without the zone database */
				rt->zones[i] = mode == COSID_BIND_IMMUTABLE ? NULL :
					bind_zone(it->zone, item_path(prefix, i, it->kind, "zone"));
				break;
			case COSID_CODEC_PARTS_RADIX:
			case COSID_CODEC_PARTS_FRIENDLY:
				if (!gen || gen->spec.strategy != COSID_STRATEGY_COSID80)
					key_error(item_path(prefix, i, it->kind, NULL),
								"only for a generator of strategy \"cosid80\"");
				if (it->kind == COSID_CODEC_PARTS_FRIENDLY)
					rt->zones[i] = bind_zone(it->zone, item_path(prefix, i, it->kind, "zone"));
				break;
			case COSID_CODEC_GROUPED:
				if (gen && (gen->spec.strategy != COSID_STRATEGY_SEGMENT || gen->spec.group == COSID_GROUP_NONE))
					key_error(item_path(prefix, i, it->kind, NULL),
								"only for a segment generator with a \"group\"");
				if (gen)
					it->group = gen->spec.group; /* the generator's period */
				break;
			case COSID_CODEC_CUSTOM:
				if (gen && gen->spec.strategy == COSID_STRATEGY_COSID80)
					key_error(item_path(prefix, i, it->kind, NULL),
								"not available for strategy \"cosid80\", whose ids do not fit a bigint");
				bind_function(it->encode_fn, 0, INT8OID, TEXTOID,
							  item_path(prefix, i, it->kind, "encode"), mode,
							  gen, &rt->encode_fn, cxt);
				bind_function(it->decode_fn, 1, TEXTOID, INT8OID,
							  item_path(prefix, i, it->kind, "decode"), mode,
							  gen, &rt->decode_fn, cxt);
				rt->custom_item = i;
				rt->run_as = gen == NULL ? InvalidOid : gen->owner;
				break;
			case COSID_CODEC_DATE_PREFIX:
				if (!it->has_source)
					it->source = gen && COSID_TIME_BASED(gen->spec.strategy) ?
						COSID_SOURCE_ID_TIME : COSID_SOURCE_NOW;
				else if (it->source == COSID_SOURCE_ID_TIME && !gen)
					key_error(item_path(prefix, i, it->kind, "source"),
								"\"ID_TIME\" needs a time-based generator: use cosid_encode(name, id)");
				rt->zones[i] = bind_zone(it->zone, item_path(prefix, i, it->kind, "zone"));
				break;
			default:
				break;
		}
	}
	MemoryContextSwitchTo(old);
	return rt;
}

/* ---------- time in a zone ---------- */

/*
 * Text forms show years 1 to 9999: any Unix millisecond beyond +-2^48
 * (about 8900 years from 1970) is outside that in every zone, and below it
 * the conversion to timestamptz cannot overflow.
 */
#define TEXT_MS_LIMIT (INT64CONST(1) << 48)

static void
time_text_out_of_range(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("time of the id is out of range for its text form"),
			 errdetail("Text forms show years 1 to 9999.")));
}

/*
 * The local time of Unix milliseconds in a zone; zone NULL is UTC by
 * arithmetic alone (timestamp2tm() with no zone wanted), never the session's
 * zone.
 */
static void
ms_to_tm(int64 ms, pg_tz *zone, CosidTm *out)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			tzoff;

	if (ms < -TEXT_MS_LIMIT || ms > TEXT_MS_LIMIT ||
		timestamp2tm(cosid_ms_to_timestamptz(ms), zone != NULL ? &tzoff : NULL,
					 &tm, &fsec, NULL, zone) != 0 ||
		tm.tm_year < 1 || tm.tm_year > 9999)
		time_text_out_of_range();
	out->year = tm.tm_year;
	out->month = tm.tm_mon;
	out->day = tm.tm_mday;
	out->hour = tm.tm_hour;
	out->minute = tm.tm_min;
	out->second = tm.tm_sec;
	out->millis = fsec / 1000;
}

/*
 * The instant of a local time, resolved as CosId (java.time) does: a time
 * the clocks repeat takes the earlier instant, a time they skip moves
 * forward by the gap (cosid_zone_offset_for_local).  PostgreSQL's own
 * DetermineTimeZoneOffset() takes the later instant of a repeated time, so
 * this finds the zone's change around it as that function does and decides
 * itself.  False with msg when the fields are not a date (30 February).
 * Zone NULL is UTC, by arithmetic alone.
 */
static bool
tm_to_ms(const CosidTm *in, pg_tz *zone, int64 *ms, char *msg, size_t msglen)
{
	pg_time_t	local;
	pg_time_t	prev;
	pg_time_t	boundary;
	long int	before_gmtoff;
	long int	after_gmtoff;
	int			before_isdst;
	int			after_isdst;
	int64		gmtoff;
	int			res;

	if (!cosid_date_valid(in->year, in->month, in->day, msg, msglen))
		return false;
	local = (pg_time_t) (date2j(in->year, in->month, in->day) - UNIX_EPOCH_JDATE) * SECS_PER_DAY +
		in->hour * SECS_PER_HOUR + in->minute * SECS_PER_MINUTE + in->second;
	if (zone == NULL)
	{
		*ms = local * 1000 + in->millis;
		return true;
	}

	/*
	 * As DetermineTimeZoneOffset(): offsets are under a day and changes at
	 * least two days apart, so the first change after a day earlier is the
	 * one that matters, if any.
	 */
	prev = local - SECS_PER_DAY;
	res = pg_next_dst_boundary(&prev, &before_gmtoff, &before_isdst, &boundary,
							   &after_gmtoff, &after_isdst, zone);
	if (res < 0)
	{
		/* cannot happen for years 1..9999; PostgreSQL's answer then */
		struct pg_tm tm;

		memset(&tm, 0, sizeof(tm));
		tm.tm_year = in->year;
		tm.tm_mon = in->month;
		tm.tm_mday = in->day;
		tm.tm_hour = in->hour;
		tm.tm_min = in->minute;
		tm.tm_sec = in->second;
		gmtoff = -DetermineTimeZoneOffset(&tm, zone);
	}
	else if (res == 0)
		gmtoff = before_gmtoff; /* no change ahead: one offset */
	else
		gmtoff = cosid_zone_offset_for_local(local, before_gmtoff, boundary, after_gmtoff);
	*ms = (local - gmtoff) * 1000 + in->millis;
	return true;
}

/* ---------- the pipeline ---------- */

/*
 * The text being decoded, as a C string for messages: up to its first NUL,
 * as text_to_cstring() and "%s" show it.
 */
static void
decode_error(int i, const CosidCodecItem *it, const char *txt, size_t txtlen,
			 const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid id text \"%s\"", pnstrdup(txt, txtlen)),
			 i >= 0 ? errdetail("codec[%d] (%s): %s", i, cosid_codec_kind_name(it->kind), detail)
			 : errdetail("%s", detail)));
}

static void
range_error(int i, const CosidCodecItem *it, const char *txt, size_t txtlen,
			const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("id text \"%s\" is out of range", pnstrdup(txt, txtlen)),
			 i >= 0 ? errdetail("codec[%d] (%s): %s", i, cosid_codec_kind_name(it->kind), detail)
			 : errdetail("%s", detail)));
}

/*
 * The id's parts (snowflake ids lose their uncertainty bits here).  A bigint
 * outside the layout (negative, or bits above its time) has none: its time
 * would be some other date, which decoding refuses.
 */
static void
id_parts(const CosidCodecRt *rt, const CosidId *id, int64 *time, int64 *node, int64 *seq)
{
	if (id->wide)
	{
		*time = id->time;
		*node = id->node;
		*seq = id->seq;
		return;
	}
	if (unlikely(!cosid_layout_holds_id(&rt->layout, rt->uncertainty_bits, id->id)))
	{
		int			bits = cosid_layout_total_bits(&rt->layout) + rt->uncertainty_bits;

		/* without a generator, the layout is the friendly item's (codec[0]) */
		if (rt->has_gen)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("id " INT64_FORMAT " is out of range for the generator's layout", id->id),
					 errdetail("Its ids are from 0 to 2^%d - 1.", bits)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("id " INT64_FORMAT " is out of range for layout %s", id->id,
							cosid_preset_name(rt->codec.items[0].has_layout ?
											  rt->codec.items[0].layout :
											  COSID_PRESET_SNOWFLAKE_MS)),
					 errdetail("Its ids are from 0 to 2^%d - 1.", bits)));
	}
	cosid_layout_unpack(&rt->layout, id->id >> rt->uncertainty_bits, time, node, seq);
}

/* The Unix milliseconds of a time part, if a text form can show them. */
static int64
time_part_ms(const CosidCodecRt *rt, int64 time)
{
	int64		ms;

	if (!cosid_layout_time_ms(&rt->layout, time, TEXT_MS_LIMIT, &ms))
		time_text_out_of_range();
	return ms;
}

static int64
id_time_ms(const CosidCodecRt *rt, const CosidId *id)
{
	int64		time,
				node,
				seq;

	id_parts(rt, id, &time, &node, &seq);
	return time_part_ms(rt, time);
}

/* Whether encoding shows "NOW" (a date prefix of source NOW). */
bool
cosid_codec_uses_now(const CosidCodecRt *rt)
{
	for (int i = 0; i < rt->codec.nitems; i++)
		if (rt->codec.items[i].kind == COSID_CODEC_DATE_PREFIX &&
			rt->codec.items[i].source != COSID_SOURCE_ID_TIME)
			return true;
	return false;
}

/*
 * The converter (item 0, or decimal when there is none) writes into a stack
 * buffer; each wrapper adds text before (prefix, date-prefix) or after
 * (suffix) everything so far.  The result is allocated once, at its final
 * size, and filled: the fronts of the wrappers from the outermost (last) in,
 * the converter's text, then the backs from the innermost out.
 */
text *
cosid_codec_encode(const CosidCodecRt *rt, const CosidId *id, int64 now_ms)
{
	char		buf[256];
	const char *core = buf;
	size_t		core_len = 0;
	int			first = 0;
	const char *front[COSID_CODEC_MAX_ITEMS][2];
	size_t		front_len[COSID_CODEC_MAX_ITEMS][2];
	const char *back[COSID_CODEC_MAX_ITEMS];
	size_t		back_len[COSID_CODEC_MAX_ITEMS];
	size_t		total;
	text	   *result;
	char	   *p;

	/* just a radix */
	if (rt->codec.nitems == 1 && rt->codec.items[0].kind == COSID_CODEC_RADIX)
		return cosid_codec_radix_text(&rt->codec.items[0].radix, id->id);

	if (rt->codec.nitems > 0)
	{
		const CosidCodecItem *it = &rt->codec.items[0];
		int64		time,
					node,
					seq;
		CosidTm		tm;
		int			n;

		first = 1;
		switch (it->kind)
		{
			case COSID_CODEC_RADIX:
				n = cosid_radix_encode(&it->radix, id->id, buf);
				if (unlikely(n < 0))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("id " INT64_FORMAT " does not fit in %d base-%d digits",
									id->id, it->radix.width, it->radix.radix)));
				core_len = (size_t) n;
				break;
			case COSID_CODEC_FRIENDLY:
			case COSID_CODEC_PARTS_FRIENDLY:
				id_parts(rt, id, &time, &node, &seq);
				ms_to_tm(time_part_ms(rt, time), rt->zones[0], &tm);
				core_len = (size_t) cosid_friendly_format(&rt->layout, it->pad_start, &tm,
														  node, seq, buf);
				break;
			case COSID_CODEC_PARTS_RADIX:
				/* -1 (buf untouched) never happens for an id of the layout */
				buf[0] = '\0';
				cosid_parts_radix_encode(&rt->layout, it->radix.radix, id->time, id->node,
										 id->seq, buf);
				core_len = strlen(buf);
				break;
			case COSID_CODEC_GROUPED:
				{
					int64		period;
					int64		value;
					size_t		dlen = strlen(it->delimiter);
					int			plen = (int) strlen(cosid_group_pattern(it->group));
					char	   *g = buf;

					if (!cosid_group_split(it->group, id->id, &period, &value))
						ereport(ERROR,
								(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
								 errmsg("id " INT64_FORMAT " does not hold a %s period", id->id,
										it->group == COSID_GROUP_DAY ? "day" :
										it->group == COSID_GROUP_MONTH ? "month" : "year")));
					/* period (<= 20), delimiter, value (<= 64 digits), NUL */
					if (dlen + 21 + 65 > sizeof(buf))
						g = palloc(dlen + 21 + 65);
					/*
					 * the period at its pattern's width (0002 for year 2), as
					 * decoding reads it: unpadded, a year before 1000 made
					 * text that decoded to another number or not at all
					 */
					n = cosid_put_decimal(g, period, plen);
					memcpy(g + n, it->delimiter, dlen);
					n += (int) dlen;
					if (it->value_is_radix)
					{
						int			vn = cosid_radix_encode(&it->radix, value, g + n);

						if (vn < 0)
							ereport(ERROR,
									(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
									 errmsg("value " INT64_FORMAT " does not fit in %d base-%d digits",
											value, it->radix.width, it->radix.radix)));
						n += vn;
					}
					else
						n += pg_lltoa(value, g + n);
					core = g;
					core_len = (size_t) n;
				}
				break;
			case COSID_CODEC_CUSTOM:
				{
					Datum		d = call_custom(rt, &rt->encode_fn, Int64GetDatum(id->id));
					text	   *t = DatumGetTextPP(d);

					/* up to a NUL, as text_to_cstring() and "%s" had it */
					core = VARDATA_ANY(t);
					core_len = strnlen(core, VARSIZE_ANY_EXHDR(t));
				}
				break;
			default:
				first = 0;		/* a wrapper: the number is decimal */
				break;
		}
	}
	if (first == 0)
	{
		if (id->wide)
		{
			uint64		hi,
						lo;

			cosid_layout_pack128(&rt->layout, id->time, id->node, id->seq, &hi, &lo);
			cosid_u128_decimal(hi, lo, buf);
			core_len = strlen(buf);
		}
		else
			core_len = (size_t) pg_lltoa(id->id, buf);
	}

	/* the wrappers' pieces, in list order (errors in the same order) */
	total = core_len;
	for (int i = first; i < rt->codec.nitems; i++)
	{
		const CosidCodecItem *it = &rt->codec.items[i];
		CosidTm		tm;
		char	   *date;
		int			n;

		front[i][0] = front[i][1] = back[i] = NULL;
		front_len[i][0] = front_len[i][1] = back_len[i] = 0;
		switch (it->kind)
		{
			case COSID_CODEC_PREFIX:
				front[i][0] = it->text;
				front_len[i][0] = strlen(it->text);
				break;
			case COSID_CODEC_SUFFIX:
				back[i] = it->text;
				back_len[i] = strlen(it->text);
				break;
			case COSID_CODEC_DATE_PREFIX:
				ms_to_tm(it->source == COSID_SOURCE_ID_TIME ? id_time_ms(rt, id) : now_ms,
						 rt->zones[i], &tm);
				/* as long as the pattern */
				date = palloc(strlen(it->pattern) + 1);
				n = cosid_date_format(it->pattern, &tm, date);
				front[i][0] = date;
				front_len[i][0] = n < 0 ? 0 : (size_t) n;
				front[i][1] = it->delimiter;
				front_len[i][1] = strlen(it->delimiter);
				break;
			default:
				elog(ERROR, "codec item %d cannot wrap", i);
		}
		total += front_len[i][0] + front_len[i][1] + back_len[i];
	}

	result = (text *) palloc(VARHDRSZ + total);
	SET_VARSIZE(result, VARHDRSZ + total);
	p = VARDATA(result);
	for (int i = rt->codec.nitems - 1; i >= first; i--)
	{
		memcpy(p, front[i][0], front_len[i][0]);
		p += front_len[i][0];
		memcpy(p, front[i][1], front_len[i][1]);
		p += front_len[i][1];
	}
	memcpy(p, core, core_len);
	p += core_len;
	for (int i = first; i < rt->codec.nitems; i++)
	{
		memcpy(p, back[i], back_len[i]);
		p += back_len[i];
	}
	return result;
}

/* Decimal digits only, no sign, no more than max. */
static CosidDecodeResult
parse_decimal(const char *s, size_t len, uint64 max, int64 *v)
{
	uint64		x = 0;

	if (len == 0)
		return COSID_DECODE_SYNTAX;
	for (size_t i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return COSID_DECODE_SYNTAX;
		if (x > (max - (uint64) (s[i] - '0')) / 10)
		{
			/* keep checking the syntax before calling it a range error */
			for (size_t j = i; j < len; j++)
				if (s[j] < '0' || s[j] > '9')
					return COSID_DECODE_SYNTAX;
			return COSID_DECODE_RANGE;
		}
		x = x * 10 + (uint64) (s[i] - '0');
	}
	*v = (int64) x;
	return COSID_DECODE_OK;
}

/* The largest id a snowflake generator's codec accepts. */
static uint64
id_max(const CosidCodecRt *rt)
{
	int			bits;

	if (!rt->has_gen || rt->strategy == COSID_STRATEGY_SEGMENT)
		return (uint64) PG_INT64_MAX;
	bits = cosid_layout_total_bits(&rt->layout) + rt->uncertainty_bits;
	return bits >= 63 ? (uint64) PG_INT64_MAX : (UINT64CONST(1) << bits) - 1;
}

/*
 * Decode txt[0..txtlen), which holds no NUL (the text up to its first NUL,
 * as text_to_cstring() and strlen() had it).  Errors quote all of it.
 */
static void
codec_decode_text(const CosidCodecRt *rt, const char *txt, size_t txtlen, CosidId *id)
{
	const char *s = txt;
	size_t		len = txtlen;
	char		msg[256];
	bool		check_date[COSID_CODEC_MAX_ITEMS] = {false};
	CosidTm		date_tm[COSID_CODEC_MAX_ITEMS];
	int			first;
	CosidDecodeResult r;

	memset(id, 0, sizeof(*id));
	id->wide = rt->has_gen && rt->strategy == COSID_STRATEGY_COSID80;

	first = (rt->codec.nitems > 0 &&
			 rt->codec.items[0].kind != COSID_CODEC_PREFIX &&
			 rt->codec.items[0].kind != COSID_CODEC_SUFFIX &&
			 rt->codec.items[0].kind != COSID_CODEC_DATE_PREFIX) ? 1 : 0;

	/* the wrappers, outermost (last) first */
	for (int i = rt->codec.nitems - 1; i >= first; i--)
	{
		const CosidCodecItem *it = &rt->codec.items[i];
		size_t		n;

		switch (it->kind)
		{
			case COSID_CODEC_PREFIX:
				n = strlen(it->text);
				if (len < n || memcmp(s, it->text, n) != 0)
					decode_error(i, it, txt, txtlen, psprintf("the text does not start with \"%s\"", it->text));
				s += n;
				len -= n;
				break;
			case COSID_CODEC_SUFFIX:
				n = strlen(it->text);
				if (len < n || memcmp(s + len - n, it->text, n) != 0)
					decode_error(i, it, txt, txtlen, psprintf("the text does not end with \"%s\"", it->text));
				len -= n;
				break;
			case COSID_CODEC_DATE_PREFIX:
				n = strlen(it->delimiter);
				if (len < (size_t) it->pattern_len + n)
					decode_error(i, it, txt, txtlen, psprintf("expected a date of the form %s first", it->pattern));
				memset(&date_tm[i], 0, sizeof(CosidTm));
				date_tm[i].year = 1970;
				date_tm[i].month = date_tm[i].day = 1;
				if (cosid_date_parse(it->pattern, s, it->pattern_len, &date_tm[i], msg, sizeof(msg)) != COSID_DECODE_OK)
					decode_error(i, it, txt, txtlen, msg);
				if (memcmp(s + it->pattern_len, it->delimiter, n) != 0)
					decode_error(i, it, txt, txtlen, psprintf("expected \"%s\" after the date", it->delimiter));
				check_date[i] = it->source == COSID_SOURCE_ID_TIME;
				s += it->pattern_len + n;
				len -= it->pattern_len + n;
				break;
			default:
				elog(ERROR, "codec item %d cannot wrap", i);
		}
	}

	/* the number */
	if (first == 0)
	{
		if (id->wide)
		{
			uint64		hi,
						lo;
			char	   *digits = pnstrdup(s, len);

			if (!cosid_u128_parse(digits, len, &hi, &lo))
				decode_error(-1, NULL, txt, txtlen, "Expected the decimal digits of an id.");
			if ((cosid_layout_total_bits(&rt->layout) >= 64 ?
				 (hi >> (cosid_layout_total_bits(&rt->layout) - 64)) != 0 :
				 (hi != 0 || (lo >> cosid_layout_total_bits(&rt->layout)) != 0)))
				range_error(-1, NULL, txt, txtlen, "The number is larger than the generator's ids.");
			cosid_layout_unpack128(&rt->layout, hi, lo, &id->time, &id->node, &id->seq);
		}
		else
		{
			r = parse_decimal(s, len, id_max(rt), &id->id);
			if (r == COSID_DECODE_SYNTAX)
				decode_error(-1, NULL, txt, txtlen, "Expected the decimal digits of an id.");
			if (r == COSID_DECODE_RANGE)
				range_error(-1, NULL, txt, txtlen, "The number is larger than the generator's ids.");
		}
	}
	else
	{
		const CosidCodecItem *it = &rt->codec.items[0];

		switch (it->kind)
		{
			case COSID_CODEC_RADIX:
				r = cosid_radix_decode(&it->radix, s, len, id_max(rt), &id->id, msg, sizeof(msg));
				if (r == COSID_DECODE_SYNTAX)
					decode_error(0, it, txt, txtlen, msg);
				if (r == COSID_DECODE_RANGE)
					range_error(0, it, txt, txtlen, msg);
				break;
			case COSID_CODEC_FRIENDLY:
			case COSID_CODEC_PARTS_FRIENDLY:
				{
					CosidTm		tm;
					int64		ms;
					int64		time;

					memset(&tm, 0, sizeof(tm));
					r = cosid_friendly_parse(&rt->layout, it->pad_start, s, len, &tm,
											 &id->node, &id->seq, msg, sizeof(msg));
					if (r == COSID_DECODE_SYNTAX)
						decode_error(0, it, txt, txtlen, msg);
					if (r == COSID_DECODE_RANGE)
						range_error(0, it, txt, txtlen, msg);
					if (!tm_to_ms(&tm, rt->zones[0], &ms, msg, sizeof(msg)))
						decode_error(0, it, txt, txtlen, msg);
					time = cosid_unit_of(&rt->layout, ms);
					if (time < 0 || time > cosid_layout_max_time(&rt->layout))
						range_error(0, it, txt, txtlen, "the time is outside the layout's range");
					id->time = time;
					if (!id->wide)
						id->id = cosid_layout_pack(&rt->layout, time, id->node, id->seq);
				}
				break;
			case COSID_CODEC_PARTS_RADIX:
				r = cosid_parts_radix_decode(&rt->layout, it->radix.radix, s, len,
											 &id->time, &id->node, &id->seq, msg, sizeof(msg));
				if (r == COSID_DECODE_SYNTAX)
					decode_error(0, it, txt, txtlen, msg);
				if (r == COSID_DECODE_RANGE)
					range_error(0, it, txt, txtlen, msg);
				break;
			case COSID_CODEC_GROUPED:
				{
					int			plen = (int) strlen(cosid_group_pattern(it->group));
					size_t		dlen = strlen(it->delimiter);
					int64		period;
					int64		value;

					if (len < (size_t) plen + dlen ||
						parse_decimal(s, plen, PG_INT64_MAX, &period) != COSID_DECODE_OK ||
						memcmp(s + plen, it->delimiter, dlen) != 0)
						decode_error(0, it, txt, txtlen,
									 psprintf("expected the period as %s, then \"%s\"",
											  cosid_group_pattern(it->group), it->delimiter));
					if (!cosid_group_period_valid(it->group, period, msg, sizeof(msg)))
						decode_error(0, it, txt, txtlen,
									 psprintf("the period %s is not a date: %s",
											  pnstrdup(s, plen), msg));
					s += plen + dlen;
					len -= plen + dlen;
					if (it->value_is_radix)
						r = cosid_radix_decode(&it->radix, s, len, (uint64) cosid_group_scale(it->group) - 1,
											   &value, msg, sizeof(msg));
					else
					{
						r = parse_decimal(s, len, (uint64) cosid_group_scale(it->group) - 1, &value);
						snprintf(msg, sizeof(msg), "expected the value's decimal digits");
					}
					if (r == COSID_DECODE_SYNTAX)
						decode_error(0, it, txt, txtlen, msg);
					if (r == COSID_DECODE_RANGE)
						range_error(0, it, txt, txtlen, "the value does not fit its period");
					id->id = period * cosid_group_scale(it->group) + value;
				}
				break;
			case COSID_CODEC_CUSTOM:
				{
					Datum		d = call_custom(rt, &rt->decode_fn,
												PointerGetDatum(cstring_to_text_with_len(s, len)));

					id->id = DatumGetInt64(d);
				}
				break;
			default:
				elog(ERROR, "codec item 0 is not a converter");
		}
	}

	/* a date prefix from the id's time must match that time */
	for (int i = first; i < rt->codec.nitems; i++)
	{
		const CosidCodecItem *it = &rt->codec.items[i];
		CosidTm		tm;
		char		want[64];
		char		got[64];

		if (!check_date[i])
			continue;
		ms_to_tm(id_time_ms(rt, id), rt->zones[i], &tm);
		cosid_date_format(it->pattern, &tm, want);
		cosid_date_format(it->pattern, &date_tm[i], got);
		if (strcmp(want, got) != 0)
			decode_error(i, it, txt, txtlen, psprintf("the date %s is not the id's time (%s)", got, want));
	}
}

/*
 * The text is read in place (no C-string copy).  Like text_to_cstring() and
 * strlen() before, a NUL ends it.  A list that is just a radix first tries
 * the whole text: a NUL is never a digit, so success means there was none,
 * and anything else goes the general way, which reports it.
 */
void
cosid_codec_decode(const CosidCodecRt *rt, text *t, CosidId *id)
{
	const char *data;
	size_t		size;

	/* as text_to_cstring() did, should a caller pass toasted text */
	if (unlikely(VARATT_IS_COMPRESSED(t) || VARATT_IS_EXTERNAL(t)))
		t = (text *) pg_detoast_datum_packed((struct varlena *) t);
	data = VARDATA_ANY(t);
	size = VARSIZE_ANY_EXHDR(t);

	if (rt->codec.nitems == 1 && rt->codec.items[0].kind == COSID_CODEC_RADIX)
	{
		int64		v;

		if (likely(cosid_radix_decode(&rt->codec.items[0].radix, data, size, id_max(rt),
									  &v, NULL, 0) == COSID_DECODE_OK))
		{
			memset(id, 0, sizeof(*id));
			id->wide = rt->has_gen && rt->strategy == COSID_STRATEGY_COSID80;
			id->id = v;
			return;
		}
	}
	codec_decode_text(rt, data, strnlen(data, size), id);
}


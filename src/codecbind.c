/*
 * codecbind.c - codec lists on the PostgreSQL side (see codecbind.h): a list
 * parsed, prepared and run by src/core (codec.h), bound here to what only
 * the server has: time zones, SQL functions and a generator.
 *
 * Owns: binding (zones; custom functions: a generator's fixed by OID, the
 * owner rule, who they run as), the hooks the pipeline calls (local times
 * through pg_tz, custom functions through fmgr), and raising the pipeline's
 * failures with their SQLSTATEs.  Must not: decide what a list may hold or
 * how text reads (core does), look generators up or read the catalog (its
 * callers hand it a definition), or be bound per row (callers keep the
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
 * A bad key: an ad hoc list's errors (gen NULL) say "invalid codec list", a
 * generator's "invalid generator definition".
 */
#define key_error(gen, path, ...) cosid_invalid_key((gen) == NULL, path, __VA_ARGS__)

/* The JSON path of item i's key, for a message. */
static char *
item_path(const CosidCodecRt *rt, int i, const char *key)
{
	char		path[256];

	cosid_codec_item_path(&rt->plan.codec, i, "codec", key, path, sizeof(path));
	return pstrdup(path);
}

static pg_tz *
bind_zone(const char *zone, const CosidGenDef *gen, const char *path)
{
	pg_tz	   *tz = pg_tzset(zone ? zone : "UTC");

	if (tz == NULL)
		key_error(gen, path, "unknown time zone \"%s\"", zone);
	return tz;
}

/*
 * "schema.f(bigint)": a function of one argument as the catalog's codec list
 * names it (written by cosid_codecbind_qualify, and by the updates to 1.1 and
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
 *
 * No pg_depend entry holds the function: a catalog row is not an object,
 * and the only objects one could hang on (the table, its column) would go
 * with DROP FUNCTION ... CASCADE.  A row written with OIDs that are not its
 * list's functions (a restore, the update from 1.2) is bound once by its
 * qualified names by the SQL trigger cosid.generator_bind_codec.  The column
 * is oid[], not regprocedure[]: pg_upgrade refuses regprocedure columns.
 */
/*
 * A generator's function fixed by OID: it must still exist and still be the
 * function the list names.
 */
static Oid
stored_function(const char *sig, Oid fn, const CosidGenDef *gen, const char *path)
{
	char	   *now;

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
	 * The OID still names the function the list names: an OID copied from
	 * another cluster (pg_upgrade gives functions new OIDs) or taken by a new
	 * function after OID wraparound is never used, and neither is a function
	 * renamed or moved since.
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
	return fn;
}

/*
 * A function found by name: the caller's way, or for a stored generator of a
 * catalog from before 1.3 with search_path = pg_catalog, pg_temp.
 */
static Oid
function_by_name(const char *sig, CosidBindMode mode, const CosidGenDef *gen,
				 const char *path)
{
	LOCAL_FCINFO(lookup, 1);
	Datum		d;
	int			nest = -1;
	Oid			fn = InvalidOid;

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
	/*
	 * A stored generator bound by name is a Citus worker's copy of the
	 * coordinator's (or a catalog from before 1.3): its definition is fine,
	 * the function is what this server lacks.
	 */
	if (fn == InvalidOid && mode == COSID_BIND_STORED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("custom codec function %s of generator \"%s\" does not exist on this server",
						sig, gen->name),
				 errdetail("At %s: the generator's codec names that function, and this server binds it by "
						   "that name (a Citus worker binds the coordinator's generators so).", path),
				 errhint("Create the function here. On a Citus cluster create it on the coordinator, with "
						 "citus.enable_ddl_propagation on, or run create_distributed_function() there: Citus "
						 "then creates it on every node.")));
	if (fn == InvalidOid)
		key_error(gen, path, "function %s does not exist", sig);
	return fn;
}

static void
bind_function(const char *sig, int which, Oid argtype, Oid rettype, const char *path,
			  CosidBindMode mode, const CosidGenDef *gen, FmgrInfo *finfo, MemoryContext cxt)
{
	Oid			fn;
	Oid		   *argtypes;
	int			nargs;
	Oid			ret;
	Oid			user = mode == COSID_BIND_STORED ? gen->owner : GetUserId();

	if (gen != NULL && OidIsValid(gen->codec_fns[which]))
		fn = stored_function(sig, gen->codec_fns[which], gen, path);
	else if (mode == COSID_BIND_STORED && !gen->codec_by_name)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("custom codec function %s of generator \"%s\" is not bound", sig, gen->name),
				 errdetail("At %s: the catalog holds no function for it: its name found no function "
						   "when the generator was restored or updated to cosid 1.3.", path),
				 errhint("Bind the codec again with cosid_alter(), giving its \"codec\": the names "
						 "in it are resolved then.")));
	else
		fn = function_by_name(sig, mode, gen, path);
	if (gen != NULL)
		check_function_owner(fn, gen, path);
	ret = get_func_signature(fn, &argtypes, &nargs);
	if (nargs != 1 || argtypes[0] != argtype || ret != rettype)
		key_error(gen, path, "expected a function of (%s) returning %s",
				  format_type_be(argtype), format_type_be(rettype));
	/* cosid_encode and cosid_decode promise STABLE and PARALLEL SAFE */
	if (func_volatile(fn) == PROVOLATILE_VOLATILE || func_parallel(fn) != PROPARALLEL_SAFE)
		key_error(gen, path, "function %s must be IMMUTABLE or STABLE, and PARALLEL SAFE", sig);
	/* a generator outlives the session: its functions must too */
	if (mode == COSID_BIND_DEFINE && isAnyTempNamespace(get_func_namespace(fn)))
		key_error(gen, path, "function %s is temporary; a generator's codec needs a permanent function", sig);
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
cosid_codecbind_qualify(Jsonb *config, const CosidCodecRt *rt)
{
	if (rt->custom_item < 0)
		return config;
	config = set_custom_name(config, rt->custom_item, "encode", rt->encode_fn.fn_oid);
	return set_custom_name(config, rt->custom_item, "decode", rt->decode_fn.fn_oid);
}

bool
cosid_codecbind_functions(const CosidCodecRt *rt, Oid fns[2])
{
	if (rt->custom_item < 0)
		return false;
	fns[0] = rt->encode_fn.fn_oid;
	fns[1] = rt->decode_fn.fn_oid;
	return true;
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

/* ---------- the hooks ---------- */

/*
 * The local time of Unix milliseconds in a zone, as timestamp2tm() gives it
 * (core checks the range first, and the years after).
 */
static bool
hook_to_local(void *ctx, const void *zone, int64_t ms, CosidTm *out)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			tzoff;

	if (timestamp2tm(cosid_ms_to_timestamptz(ms), &tzoff, &tm, &fsec, NULL,
					 (pg_tz *) zone) != 0)
		return false;
	out->year = tm.tm_year;
	out->month = tm.tm_mon;
	out->day = tm.tm_mday;
	out->hour = tm.tm_hour;
	out->minute = tm.tm_min;
	out->second = tm.tm_sec;
	out->millis = fsec / 1000;
	return true;
}

/*
 * The offset of a local time, resolved as CosId (java.time) does: a time
 * the clocks repeat takes the earlier instant, a time they skip moves
 * forward by the gap (cosid_zone_offset_for_local).  PostgreSQL's own
 * DetermineTimeZoneOffset() takes the later instant of a repeated time, so
 * this finds the zone's change around it as that function does and lets
 * core decide.
 */
static int64_t
hook_local_offset(void *ctx, const void *zone, int64_t local)
{
	pg_time_t	prev = (pg_time_t) local - SECS_PER_DAY;
	pg_time_t	boundary;
	long int	before_gmtoff;
	long int	after_gmtoff;
	int			before_isdst;
	int			after_isdst;
	int			res;

	/*
	 * As DetermineTimeZoneOffset(): offsets are under a day and changes at
	 * least two days apart, so the first change after a day earlier is the
	 * one that matters, if any.
	 */
	res = pg_next_dst_boundary(&prev, &before_gmtoff, &before_isdst, &boundary,
							   &after_gmtoff, &after_isdst, (pg_tz *) zone);
	if (res < 0)
	{
		/* cannot happen for years 1..9999; PostgreSQL's answer then */
		struct pg_tm tm;
		int64		days = local / SECS_PER_DAY;
		int64		secs = local % SECS_PER_DAY;

		if (secs < 0)
		{
			secs += SECS_PER_DAY;
			days--;
		}
		memset(&tm, 0, sizeof(tm));
		j2date((int) (days + UNIX_EPOCH_JDATE), &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
		tm.tm_hour = (int) (secs / SECS_PER_HOUR);
		tm.tm_min = (int) (secs / SECS_PER_MINUTE % 60);
		tm.tm_sec = (int) (secs % 60);
		return -DetermineTimeZoneOffset(&tm, (pg_tz *) zone);
	}
	if (res == 0)
		return before_gmtoff;	/* no change ahead: one offset */
	return cosid_zone_offset_for_local(local, before_gmtoff, boundary, after_gmtoff);
}

static void
hook_custom_encode(void *ctx, int64_t id, const char **s, size_t *len)
{
	const CosidCodecRt *rt = ctx;
	text	   *t = DatumGetTextPP(call_custom(rt, &rt->encode_fn, Int64GetDatum(id)));

	*s = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
}

static int64_t
hook_custom_decode(void *ctx, const char *s, size_t len)
{
	const CosidCodecRt *rt = ctx;

	return DatumGetInt64(call_custom(rt, &rt->decode_fn,
									 PointerGetDatum(cstring_to_text_with_len(s, len))));
}

static const CosidCodecHooks codec_hooks = {
	hook_to_local, hook_local_offset, hook_custom_encode, hook_custom_decode
};

/* ---------- binding ---------- */

/* What the rules and the pipeline need of a generator (NULL: ad hoc). */
static void
gen_target(const CosidGenDef *gen, CosidCodecTarget *t)
{
	memset(t, 0, sizeof(*t));
	if (gen == NULL)
		return;
	t->has_gen = true;
	t->time_based = COSID_TIME_BASED(gen->spec.strategy);
	t->wide = gen->spec.strategy == COSID_STRATEGY_COSID80;
	t->layout = gen->spec.layout;
	t->uncertainty_bits = gen->spec.uncertainty_bits;
	t->group = gen->spec.group;
}

/* Item i's zone and functions, after its rules. */
static void
bind_item(CosidCodecRt *rt, int i, const CosidGenDef *gen, CosidBindMode mode,
		  MemoryContext cxt)
{
	const CosidCodecItem *it = &rt->plan.codec.items[i];

	switch (it->kind)
	{
		case COSID_CODEC_FRIENDLY:
			/* immutable: UTC (checked by core), without the zone database */
			if (mode != COSID_BIND_IMMUTABLE)
				rt->plan.zones[i] = bind_zone(it->zone, gen, item_path(rt, i, "zone"));
			break;
		case COSID_CODEC_PARTS_FRIENDLY:
		case COSID_CODEC_DATE_PREFIX:
			rt->plan.zones[i] = bind_zone(it->zone, gen, item_path(rt, i, "zone"));
			break;
		case COSID_CODEC_CUSTOM:
			bind_function(it->encode_fn, 0, INT8OID, TEXTOID, item_path(rt, i, "encode"),
						  mode, gen, &rt->encode_fn, cxt);
			bind_function(it->decode_fn, 1, TEXTOID, INT8OID, item_path(rt, i, "decode"),
						  mode, gen, &rt->decode_fn, cxt);
			rt->custom_item = i;
			rt->run_as = gen == NULL ? InvalidOid : gen->owner;
			break;
		default:
			break;
	}
}

/*
 * Prepare a parsed list (core's rules, in list order) and bind it item by
 * item, in the current memory context (cxt, the caller's).
 */
static CosidCodecRt *
bind_list(const CosidCodec *codec, const CosidGenDef *gen, CosidBindMode mode,
		  MemoryContext cxt)
{
	CosidCodecRt *rt = palloc0(sizeof(CosidCodecRt));
	CosidCodecTarget target;
	CosidCodecRule r;
	char		path[256];
	char		msg[512];

	Assert(gen != NULL ? mode == COSID_BIND_DEFINE || mode == COSID_BIND_STORED :
		   mode == COSID_BIND_CALLER || mode == COSID_BIND_IMMUTABLE);
	gen_target(gen, &target);
	r = cosid_codec_prepare(&rt->plan, codec, &target, mode == COSID_BIND_IMMUTABLE,
							"codec", path, sizeof(path), msg, sizeof(msg));
	if (r == COSID_CODEC_RULE_IMPURE)
		impure_error(path, msg);
	if (r != COSID_CODEC_RULE_OK)
		key_error(gen, path, "%s", msg);
	rt->custom_item = -1;
	for (int i = 0; i < rt->plan.codec.nitems; i++)
	{
		if (cosid_codec_prepare_item(&rt->plan, i, "codec", path, sizeof(path),
									 msg, sizeof(msg)) != COSID_CODEC_RULE_OK)
			key_error(gen, path, "%s", msg);
		bind_item(rt, i, gen, mode, cxt);
	}
	rt->plan.hooks = &codec_hooks;
	rt->plan.hooks_ctx = rt;
	return rt;
}

CosidCodecRt *
cosid_codecbind_adhoc(const char *json, size_t len, CosidBindMode mode,
					  MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	CosidCodec	codec;
	char		path[256];
	char		msg[512];
	CosidCodecRt *rt;

	if (!cosid_codec_parse(json, len, "codec", cosid_core_alloc, cxt, &codec,
						   path, sizeof(path), msg, sizeof(msg)))
		key_error(NULL, path, "%s", msg);
	rt = bind_list(&codec, NULL, mode, cxt);
	MemoryContextSwitchTo(old);
	return rt;
}

/*
 * The generator's list is its definition's "codec" node, parsed here (once):
 * its strings are copied into cxt, as the node may live in shorter memory
 * (SPI's, for a generator read from the catalog).
 */
CosidCodecRt *
cosid_codecbind_generator(const CosidGenDef *gen, CosidBindMode mode,
						  MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	CosidCodec	codec;
	char		path[256];
	char		msg[512];
	CosidCodecRt *rt;

	memset(&codec, 0, sizeof(codec));
	if (gen->spec.codec != NULL)
	{
		if (!cosid_codec_parse_node(gen->spec.codec, "codec", cosid_core_alloc, cxt, &codec,
									path, sizeof(path), msg, sizeof(msg)))
			key_error(gen, path, "%s", msg);
		/* cosid_core_alloc never returns NULL: palloc raises */
		(void) cosid_codec_copy_strings(&codec, cosid_core_alloc, cxt);
	}
	rt = bind_list(&codec, gen, mode, cxt);
	MemoryContextSwitchTo(old);
	return rt;
}

/* ---------- running it ---------- */

bool
cosid_codecbind_uses_now(const CosidCodecRt *rt)
{
	return cosid_codec_uses_now(&rt->plan);
}

/* A failure that is not about the text: its own message. */
static void
raise_failure(const CosidCodecError *err)
{
	ereport(ERROR,
			(errcode(err->result == COSID_DECODE_SYNTAX ? ERRCODE_INVALID_TEXT_REPRESENTATION :
					 ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("%s", err->message),
			 err->detail[0] != '\0' ? errdetail("%s", err->detail) : 0));
}

/*
 * Text that does not decode.  The message quotes it up to its first NUL,
 * as text_to_cstring() and "%s" show it.
 */
static void
raise_decode(const CosidCodecRt *rt, const CosidCodecError *err, const char *txt,
			 size_t size)
{
	char	   *quoted;

	if (err->message[0] != '\0')
		raise_failure(err);
	quoted = pnstrdup(txt, size);
	ereport(ERROR,
			(errcode(err->result == COSID_DECODE_SYNTAX ? ERRCODE_INVALID_TEXT_REPRESENTATION :
					 ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 err->result == COSID_DECODE_SYNTAX ?
			 errmsg("invalid id text \"%s\"", quoted) :
			 errmsg("id text \"%s\" is out of range", quoted),
			 err->item >= 0 ?
			 errdetail("codec[%d] (%s): %s", err->item,
					   cosid_codec_kind_name(rt->plan.codec.items[err->item].kind), err->detail) :
			 errdetail("%s", err->detail)));
}

/* Memory for core's text: a text datum's data, its header in front. */
static void *
text_alloc(void *ctx, size_t size)
{
	return VARDATA(palloc(VARHDRSZ + size));
}

text *
cosid_codecbind_encode(const CosidCodecRt *rt, const CosidId *id, int64 now_ms)
{
	CosidCodecError err;
	char	   *data;
	int64		n;
	text	   *result;

	/* just a radix */
	if (rt->plan.codec.nitems == 1 && rt->plan.codec.items[0].kind == COSID_CODEC_RADIX)
		return cosid_codecbind_radix_text(&rt->plan.codec.items[0].radix, id->id);
	n = cosid_codec_encode(&rt->plan, id, now_ms, text_alloc, NULL, &data, &err);
	if (unlikely(n < 0))
		raise_failure(&err);
	result = (text *) (data - VARHDRSZ);
	SET_VARSIZE(result, VARHDRSZ + n);
	return result;
}

/* The text is read in place (no C-string copy); a NUL ends it. */
void
cosid_codecbind_decode(const CosidCodecRt *rt, text *t, CosidId *id)
{
	CosidCodecError err;
	const char *data;
	size_t		size;

	/* as text_to_cstring() did, should a caller pass toasted text */
	if (unlikely(VARATT_IS_COMPRESSED(t) || VARATT_IS_EXTERNAL(t)))
		t = (text *) pg_detoast_datum_packed((struct varlena *) t);
	data = VARDATA_ANY(t);
	size = VARSIZE_ANY_EXHDR(t);
	if (unlikely(!cosid_codec_decode(&rt->plan, data, size, id, &err)))
		raise_decode(rt, &err, data, strnlen(data, size));
}

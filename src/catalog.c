/*
 * catalog.c - generator definitions: parsing and validating the JSON, the
 * cosid.generator catalog (define, alter, drop), invalidation at commit, and
 * the per-call-site cache the hot path resolves a generator through.
 *
 * The catalog table is not writable by ordinary roles.  cosid_define() and
 * friends check what the caller may do, then write as the catalog's owner.
 */
#include "cosid.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "commands/dbcommands.h"
#include "commands/tablecmds.h"
#include "storage/lmgr.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/pg_database.h"
#include "catalog/pg_sequence.h"
#include "commands/sequence.h"
#include "common/md5.h"
#include "parser/parse_node.h"
#include "storage/bufmgr.h"
#include "utils/snapmgr.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(cosid_define);
PG_FUNCTION_INFO_V1(cosid_alter);
PG_FUNCTION_INFO_V1(cosid_drop);
PG_FUNCTION_INFO_V1(cosid_catalog_changed);

uint64		cosid_local_generation = 1;

/* ---------- parsing a definition ---------- */

static const char *const known_keys[] = {
	"strategy", "layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "codec", "int", "uncertainty-bits",
	"step", "start", "group", "zone", "adopt-sequence",
	NULL
};

/* Keys only a time-based generator has, and only a segment generator has. */
static const char *const time_keys[] = {
	"layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "uncertainty-bits", NULL
};
static const char *const segment_keys[] = {
	"step", "start", "group", "zone", "adopt-sequence", NULL
};

static bool
key_in(const char *key, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(key, list[i]) == 0)
			return true;
	return false;
}

static char *
jbv_type_name(JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "a string";
		case jbvNumeric:
			return "a number";
		case jbvBool:
			return "a boolean";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "an array" : "an object";
		default:
			return "a JSON value";
	}
}

static char *
jbv_string(JsonbValue *v, const char *path, const char *expected)
{
	if (v->type != jbvString)
		cosid_key_error(path, "expected %s, found %s", expected, jbv_type_name(v));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static int64
jbv_int(JsonbValue *v, const char *path, int64 min, int64 max)
{
	char	   *s;
	char	   *end;
	long long	x;

	if (v->type == jbvNumeric)
	{
		s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
		errno = 0;
		x = strtoll(s, &end, 10);
		if (*end == '\0' && errno == 0 && x >= min && x <= max)
			return (int64) x;
	}
	cosid_key_error(path, "expected an integer from " INT64_FORMAT " to " INT64_FORMAT,
			  min, max);
	return 0;					/* keep the compiler quiet */
}

static bool
jbv_bool(JsonbValue *v, const char *path)
{
	if (v->type != jbvBool)
		cosid_key_error(path, "expected true or false, found %s", jbv_type_name(v));
	return v->val.boolean;
}

/* A duration: "5ms", "1s", ... or a number of milliseconds. */
static int64
jbv_duration(JsonbValue *v, const char *path)
{
	int64		ms;

	if (v->type == jbvNumeric)
		return jbv_int(v, path, 0, 60000);
	if (v->type == jbvString)
	{
		char	   *s = pnstrdup(v->val.string.val, v->val.string.len);

		if (cosid_parse_duration_ms(s, &ms) && ms <= 60000)
			return ms;
	}
	cosid_key_error(path, "expected a duration of at most 60s such as \"5ms\" or \"1s\"");
	return 0;
}

/* Unix milliseconds, or an ISO 8601 time such as "2019-12-24T16:00:00Z". */
static int64
jbv_epoch(JsonbValue *v, const char *path)
{
	if (v->type == jbvString)
	{
		char	   *s = pnstrdup(v->val.string.val, v->val.string.len);
		TimestampTz ts = 0;
		bool		ok = true;
		MemoryContext cxt = CurrentMemoryContext;

		PG_TRY();
		{
			ts = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
														 CStringGetDatum(s),
														 ObjectIdGetDatum(InvalidOid),
														 Int32GetDatum(-1)));
		}
		PG_CATCH();
		{
			/* replaced at once by our own error below */
			MemoryContextSwitchTo(cxt);
			FlushErrorState();
			ok = false;
		}
		PG_END_TRY();
		if (ok && !TIMESTAMP_NOT_FINITE(ts))
			return cosid_timestamptz_to_ms(ts);
		cosid_key_error(path, "expected Unix milliseconds or an ISO 8601 time such as \"2019-12-24T16:00:00Z\"");
	}
	return jbv_int(v, path, 0, INT64CONST(1) << 47);
}

/*
 * Parse and validate a definition.  check_machine_bits: refuse a layout
 * whose node bits cannot hold cosid.machine_bits (at definition time; at
 * lookup time the caller reports that differently).
 */
static void
parse_definition(const char *name, Jsonb *config, CosidGenDef *def,
				 bool check_machine_bits)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbValue	val;
	JsonbIteratorToken tok;
	char	   *strategy = NULL;
	char	   *preset_name = NULL;
	bool		have_epoch = false,
				have_unit = false,
				have_time = false,
				have_node = false,
				have_seq = false,
				have_threshold = false;
	int64		epoch = 0,
				unit = 0,
				time_bits = 0,
				node_bits = 0,
				seq_bits = 0,
				threshold = 0;
	CosidPreset preset;
	char		msg[256];
	const char *bad;
	int			max_bits;

	const char *time_key = NULL;
	const char *segment_key = NULL;

	memset(def, 0, sizeof(*def));
	strlcpy(def->name, name, NAMEDATALEN);
	def->policy.borrow_ms = COSID_DEFAULT_BORROW_MS;
	def->policy.wait_ms = COSID_DEFAULT_WAIT_MS;
	def->step = 100;
	def->start = 1;
	strlcpy(def->zone, "UTC", sizeof(def->zone));

	if (!JB_ROOT_IS_OBJECT(config) || JB_ROOT_IS_SCALAR(config))
		cosid_key_error("definition", "expected a JSON object such as {\"strategy\": \"snowflake\"}");

	it = JsonbIteratorInit(&config->root);
	tok = JsonbIteratorNext(&it, &v, true);
	Assert(tok == WJB_BEGIN_OBJECT);
	while ((tok = JsonbIteratorNext(&it, &v, true)) == WJB_KEY)
	{
		char	   *key = pnstrdup(v.val.string.val, v.val.string.len);

		tok = JsonbIteratorNext(&it, &val, true);
		Assert(tok == WJB_VALUE);

		if (time_key == NULL && key_in(key, time_keys))
			time_key = key;
		if (segment_key == NULL && key_in(key, segment_keys))
			segment_key = key;

		if (strcmp(key, "strategy") == 0)
			strategy = jbv_string(&val, key, "\"snowflake\", \"cosid80\" or \"segment\"");
		else if (strcmp(key, "step") == 0)
			def->step = jbv_int(&val, key, 1, INT64CONST(1000000000));
		else if (strcmp(key, "start") == 0)
			def->start = jbv_int(&val, key, 0, INT64CONST(1) << 62);
		else if (strcmp(key, "group") == 0)
		{
			char	   *g = jbv_string(&val, key, "\"day\", \"month\" or \"year\"");

			if (pg_strcasecmp(g, "day") == 0)
				def->group = COSID_GROUP_DAY;
			else if (pg_strcasecmp(g, "month") == 0)
				def->group = COSID_GROUP_MONTH;
			else if (pg_strcasecmp(g, "year") == 0)
				def->group = COSID_GROUP_YEAR;
			else
				cosid_key_error(key, "expected \"day\", \"month\" or \"year\", found \"%s\"", g);
		}
		else if (strcmp(key, "zone") == 0)
		{
			char	   *z = jbv_string(&val, key, "a time zone name such as \"Asia/Shanghai\"");

			if (strlen(z) >= sizeof(def->zone) || pg_tzset(z) == NULL)
				cosid_key_error(key, "unknown time zone \"%s\"", z);
			strlcpy(def->zone, z, sizeof(def->zone));
		}
		else if (strcmp(key, "adopt-sequence") == 0)
			def->adopt = jbv_string(&val, key, "the name of a sequence");
		else if (strcmp(key, "layout") == 0)
			preset_name = jbv_string(&val, key, "a layout name");
		else if (strcmp(key, "epoch") == 0)
			epoch = jbv_epoch(&val, key), have_epoch = true;
		else if (strcmp(key, "unit") == 0)
		{
			char	   *u = jbv_string(&val, key, "\"ms\" or \"s\"");

			if (pg_strcasecmp(u, "ms") == 0 || pg_strcasecmp(u, "millis") == 0)
				unit = 1;
			else if (pg_strcasecmp(u, "s") == 0 || pg_strcasecmp(u, "seconds") == 0)
				unit = 1000;
			else
				cosid_key_error(key, "expected \"ms\" or \"s\", found \"%s\"", u);
			have_unit = true;
		}
		else if (strcmp(key, "time-bits") == 0)
			time_bits = jbv_int(&val, key, 1, 63), have_time = true;
		else if (strcmp(key, "node-bits") == 0)
			node_bits = jbv_int(&val, key, 0, 31), have_node = true;
		else if (strcmp(key, "seq-bits") == 0)
			seq_bits = jbv_int(&val, key, 1, 62), have_seq = true;
		else if (strcmp(key, "seq-reset-threshold") == 0)
			threshold = jbv_int(&val, key, 0, PG_INT64_MAX), have_threshold = true;
		else if (strcmp(key, "clock-regression") == 0)
		{
			if (val.type == jbvString)
			{
				char	   *p = jbv_string(&val, key, "\"FAIL\"");

				if (pg_strcasecmp(p, "FAIL") != 0)
					cosid_key_error(key, "expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\"");
				def->policy.borrow_ms = 0;
				def->policy.wait_ms = 0;
			}
			else if (val.type == jbvBinary && JsonContainerIsObject(val.val.binary.data))
			{
				JsonbIterator *it2 = JsonbIteratorInit(val.val.binary.data);
				JsonbValue	k2,
							v2;

				(void) JsonbIteratorNext(&it2, &k2, true);
				while (JsonbIteratorNext(&it2, &k2, true) == WJB_KEY)
				{
					char	   *key2 = pnstrdup(k2.val.string.val, k2.val.string.len);
					char	   *path2 = psprintf("clock-regression.%s", key2);

					(void) JsonbIteratorNext(&it2, &v2, true);
					if (strcmp(key2, "borrow-up-to") == 0)
						def->policy.borrow_ms = jbv_duration(&v2, path2);
					else if (strcmp(key2, "wait-up-to") == 0)
						def->policy.wait_ms = jbv_duration(&v2, path2);
					else
						cosid_key_error(path2, "unknown key; expected \"borrow-up-to\" or \"wait-up-to\"");
				}
			}
			else
				cosid_key_error(key, "expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\", found %s",
						  jbv_type_name(&val));
		}
		else if (strcmp(key, "codec") == 0)
		{
			if (!(val.type == jbvBinary && JsonContainerIsArray(val.val.binary.data)))
				cosid_key_error(key, "expected a JSON array of codec items, found %s", jbv_type_name(&val));
			def->codec = JsonbValueToJsonb(&val);
		}
		else if (strcmp(key, "int") == 0)
			def->int32 = jbv_bool(&val, key);
		else if (strcmp(key, "uncertainty-bits") == 0)
			def->uncertainty_bits = (int) jbv_int(&val, key, 0, 62);
		else
		{
			StringInfoData keys;

			initStringInfo(&keys);
			for (int i = 0; known_keys[i]; i++)
				appendStringInfo(&keys, "%s%s", i ? ", " : "", known_keys[i]);
			cosid_key_error(key, "unknown key; expected one of %s", keys.data);
		}
	}

	if (strategy == NULL || pg_strcasecmp(strategy, "snowflake") == 0)
		def->strategy = COSID_STRATEGY_SNOWFLAKE;
	else if (pg_strcasecmp(strategy, "cosid80") == 0)
		def->strategy = COSID_STRATEGY_COSID80;
	else if (pg_strcasecmp(strategy, "segment") == 0)
		def->strategy = COSID_STRATEGY_SEGMENT;
	else
		cosid_key_error("strategy", "expected \"snowflake\", \"cosid80\" or \"segment\", found \"%s\"", strategy);

	if (def->strategy == COSID_STRATEGY_SEGMENT)
	{
		if (time_key)
			cosid_key_error(time_key, "not a key of segment generators (it belongs to time-based ones)");
		if (def->adopt && def->group != COSID_GROUP_NONE)
			cosid_key_error("adopt-sequence", "cannot be combined with \"group\": a periodic number carries its period");
		if (def->group != COSID_GROUP_NONE && def->start >= cosid_group_scale(def->group))
			cosid_key_error("start", "expected at most " INT64_FORMAT " for group values",
					  cosid_group_scale(def->group) - 1);
		if (def->int32 && def->group != COSID_GROUP_NONE)
			cosid_key_error("int", "cannot be combined with \"group\": periodic numbers do not fit int4");
		if (def->int32 && def->start > PG_INT32_MAX)
			cosid_key_error("start", "expected at most 2147483647 with \"int\": true");
		return;
	}
	if (segment_key)
		cosid_key_error(segment_key, "only a key of segment generators (strategy \"segment\")");

	if (preset_name == NULL)
		preset = def->strategy == COSID_STRATEGY_COSID80 ?
			COSID_PRESET_COSID_80 : COSID_PRESET_SNOWFLAKE_MS;
	else if (!cosid_preset_find(preset_name, &preset))
		cosid_key_error("layout", "expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, found \"%s\"",
				  preset_name);

	def->layout = cosid_preset_layout(preset);
	if (have_epoch)
		def->layout.epoch_ms = epoch;
	if (have_unit)
		def->layout.unit_ms = unit;
	if (have_time)
		def->layout.time_bits = (int) time_bits;
	if (have_node)
		def->layout.node_bits = (int) node_bits;
	if (have_seq)
		def->layout.seq_bits = (int) seq_bits;
	def->layout.seq_reset_threshold = have_threshold ? threshold :
		cosid_default_seq_reset_threshold(def->layout.seq_bits);

	max_bits = def->strategy == COSID_STRATEGY_COSID80 ? 127 : 63;
	bad = cosid_layout_check(&def->layout, max_bits, msg, sizeof(msg));
	if (bad)
	{
		if (strcmp(bad, "layout") == 0 && def->strategy == COSID_STRATEGY_SNOWFLAKE)
			cosid_key_error(bad, "%s (an id longer than 63 bits needs strategy \"cosid80\")", msg);
		cosid_key_error(bad, "%s", msg);
	}

	if (def->strategy == COSID_STRATEGY_COSID80)
	{
		if (def->int32)
			cosid_key_error("int", "not available for strategy \"cosid80\", whose ids are text");
		if (def->uncertainty_bits)
			cosid_key_error("uncertainty-bits", "not available for strategy \"cosid80\", whose ids are text");
	}
	else if (cosid_layout_total_bits(&def->layout) + def->uncertainty_bits > 63)
		cosid_key_error("uncertainty-bits",
				  "the layout has %d bits, so at most %d more fit in 63",
				  cosid_layout_total_bits(&def->layout),
				  63 - cosid_layout_total_bits(&def->layout));

	if (check_machine_bits && def->layout.node_bits < cosid_machine_bits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("node-bits: the layout has %d node bits, fewer than cosid.machine_bits (%d)",
						def->layout.node_bits, cosid_machine_bits),
				 errdetail("Every time-based layout must hold this server's slot."),
				 errhint("Use a layout with more node bits, or set cosid.machine_bits to %d or less.",
						 def->layout.node_bits)));
}

/* ---------- the catalog ---------- */

static void
check_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid generator name \"%s\"", name),
				 errdetail("A generator name has 1 to %d bytes.", NAMEDATALEN - 1)));
}

static Oid
catalog_relid(void)
{
	return RangeVarGetRelid(makeRangeVar("cosid", "generator", -1), NoLock, false);
}

/* The owner of cosid.generator (the role that created the extension). */
static Oid
catalog_owner(void)
{
	return cosid_rel_owner(catalog_relid());
}

/*
 * Run a constant statement on the catalog as its owner: ordinary roles cannot
 * write it, and the checks that matter have been made by the caller.  Every
 * value is a parameter, every name and operator qualified.
 */
static int
catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *values,
			 const char *nulls, bool read_only)
{
	CosidAsRole as;
	int			ret;

	cosid_begin_as_role(catalog_owner(), &as);
	ret = SPI_execute_with_args(sql, nargs, argtypes, values, nulls, read_only, 0);
	cosid_end_as_role(&as);
	return ret;
}

static void
check_owner(const char *name, Oid owner)
{
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of generator \"%s\"", name),
				 errdetail("Generator \"%s\" is owned by role %s.", name,
						   GetUserNameFromId(owner, true) ? GetUserNameFromId(owner, true) : "(dropped)")));
}

static void
unknown_generator_hinted(const char *name, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("generator \"%s\" does not exist", name),
			 hint ? errhint("%s", hint) :
			 errhint("Define it with cosid_define(); cosid.generators lists those of this database.")));
}


/* Commit-time invalidation (see cosid.h). */
static bool catalog_dirty = false;
static bool xact_callbacks_registered = false;

static void
cosid_xact_callback(XactEvent event, void *arg)
{
	if (!catalog_dirty)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot prepare a transaction that changed cosid generators")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (cosid_shared)
			{
				pg_atomic_fetch_add_u64(&cosid_shared->config_generation, 1);
				cosid_gen_at_commit(true);
			}
			catalog_dirty = false;
			cosid_local_generation++;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			cosid_gen_at_commit(false);
			catalog_dirty = false;
			cosid_local_generation++;
			break;
		default:
			break;
	}
}

static void
cosid_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && catalog_dirty)
		cosid_local_generation++;
	if (event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB)
		cosid_gen_at_subxact(event == SUBXACT_EVENT_COMMIT_SUB, mySubid, parentSubid);
}

static void
mark_catalog_changed(void)
{
	if (!xact_callbacks_registered)
	{
		RegisterXactCallback(cosid_xact_callback, NULL);
		RegisterSubXactCallback(cosid_subxact_callback, NULL);
		xact_callbacks_registered = true;
	}
	catalog_dirty = true;
	cosid_local_generation++;
}

/* Statement trigger on cosid.generator: any change, e.g. by a restore. */
Datum
cosid_catalog_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "cosid_catalog_changed: not called as a trigger");
	mark_catalog_changed();
	return PointerGetDatum(NULL);
}

static void
layout_values(const CosidGenDef *def, Datum *values, char *nulls)
{
	bool		time_based = COSID_TIME_BASED(def->strategy);

	values[0] = Int64GetDatum(def->layout.epoch_ms);
	values[1] = Int32GetDatum((int32) def->layout.unit_ms);
	values[2] = Int32GetDatum(def->layout.time_bits);
	values[3] = Int32GetDatum(def->layout.node_bits);
	values[4] = Int32GetDatum(def->layout.seq_bits);
	values[5] = Int64GetDatum(def->layout.seq_reset_threshold);
	for (int i = 0; i < 6; i++)
		nulls[i] = time_based ? ' ' : 'n';
}

static const char *
strategy_name(CosidStrategy s)
{
	return s == COSID_STRATEGY_COSID80 ? "cosid80" :
		s == COSID_STRATEGY_SEGMENT ? "segment" : "snowflake";
}

static CosidStrategy
strategy_from_name(const char *s)
{
	return strcmp(s, "cosid80") == 0 ? COSID_STRATEGY_COSID80 :
		strcmp(s, "segment") == 0 ? COSID_STRATEGY_SEGMENT : COSID_STRATEGY_SNOWFLAKE;
}

/* An int8 option of CREATE/ALTER SEQUENCE, as a parse node. */
static DefElem *
int8_option(const char *name, int64 value)
{
	return makeDefElem(pstrdup(name), (Node *) makeFloat(psprintf(INT64_FORMAT, value)), -1);
}

/* The sequence's last_value and is_called, read as core's sequence.c does. */
static void
sequence_state(Oid relid, int64 *last_value, bool *is_called)
{
	Relation	rel = relation_open(relid, NoLock);
	Buffer		buf = ReadBuffer(rel, 0);
	Page		page;
	ItemId		lp;
	HeapTupleHeader th;
	Form_pg_sequence_data seq;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	lp = PageGetItemId(page, FirstOffsetNumber);
	if (!ItemIdIsNormal(lp))
		elog(ERROR, "sequence %u has no tuple", relid);
	th = (HeapTupleHeader) PageGetItem(page, lp);
	seq = (Form_pg_sequence_data) ((char *) th + th->t_hoff);
	*last_value = seq->last_value;
	*is_called = seq->is_called;
	UnlockReleaseBuffer(buf);
	relation_close(rel, NoLock);
}

/*
 * ALTER SEQUENCE on a parse node (no SQL text): the sequence is named by the
 * schema and name its OID has now, and the caller holds a lock on it.
 */
static void
alter_sequence(Oid relid, List *options)
{
	AlterSeqStmt *stmt = makeNode(AlterSeqStmt);

	stmt->sequence = makeRangeVar(get_namespace_name(get_rel_namespace(relid)),
								  get_rel_name(relid), -1);
	stmt->options = options;
	stmt->missing_ok = false;
	(void) AlterSequence(make_parsestate(NULL), stmt);
	CommandCounterIncrement();
}

/*
 * The backing sequence of a segment generator.  Its value is the last number
 * of the last segment handed out, its increment the step, so nextval() gives
 * the end of the next segment: [value - step + 1, value].
 *
 * cosid makes one in schema cosid (as the catalog's owner, through
 * DefineSequence: no SQL text), named after the md5 of the generator's name.
 * A sequence to adopt (a bigserial's) must be the caller's, permanent and
 * logged; it is set to the step and to the last number it gave (or one below
 * its start), so that the generator continues it with no gap and no overlap.
 * The lock taken here (SHARE ROW EXCLUSIVE, as ALTER SEQUENCE's) keeps
 * nextval() out until the transaction ends.
 */
static Oid
segment_sequence(const CosidGenDef *def, bool *owns)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1];
	Oid			relid;
	char		persistence;
	List	   *names;

	if (def->adopt == NULL)
	{
		char		hex[33];
		const char *errstr = NULL;
		CreateSeqStmt *stmt = makeNode(CreateSeqStmt);
		ObjectAddress addr;
		CosidAsRole as;

		if (!pg_md5_hash(def->name, strlen(def->name), hex, &errstr))
			elog(ERROR, "could not compute an MD5 hash: %s", errstr);
		stmt->sequence = makeRangeVar("cosid", psprintf("segment_%s", hex), -1);
		stmt->options = list_make3(int8_option("increment", def->step),
								   int8_option("minvalue", 0),
								   int8_option("start", def->start + def->step - 1));
		stmt->ownerId = InvalidOid;
		cosid_begin_as_role(catalog_owner(), &as);
		addr = DefineSequence(make_parsestate(NULL), stmt);
		cosid_end_as_role(&as);
		CommandCounterIncrement();
		*owns = true;
		return addr.objectId;
	}

	*owns = false;
	/* the caller's own name lookup, as ALTER SEQUENCE would do it */
	names = cosid_qualified_name_list(def->adopt);
	relid = RangeVarGetRelidExtended(makeRangeVarFromNameList(names),
									 ShareRowExclusiveLock, RVR_MISSING_OK,
									 RangeVarCallbackOwnsRelation, NULL);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_SEQUENCE)
		cosid_key_error("adopt-sequence", "\"%s\" is not a sequence", def->adopt);
	persistence = get_rel_persistence(relid);
	if (persistence == RELPERSISTENCE_TEMP)
		cosid_key_error("adopt-sequence",
						"sequence \"%s\" is temporary; only a permanent sequence can back a generator (other sessions cannot see a temporary one)",
						def->adopt);
	if (persistence != RELPERSISTENCE_PERMANENT)
		cosid_key_error("adopt-sequence",
						"sequence \"%s\" is unlogged; only a logged sequence can back a generator (a crash resets an unlogged one, so its numbers would return)",
						def->adopt);

	values[0] = ObjectIdGetDatum(relid);
	if (catalog_exec("SELECT name FROM cosid.generator WHERE sequence::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
					 1, argtypes, values, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	if (SPI_processed > 0)
		cosid_key_error("adopt-sequence", "sequence \"%s\" already backs generator \"%s\"", def->adopt,
						SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));

	/* continue from the last number given (one below the start if none) */
	{
		HeapTuple	tp = SearchSysCache1(SEQRELID, ObjectIdGetDatum(relid));
		int64		inc;
		int64		min;
		int64		last;
		bool		is_called;

		if (!HeapTupleIsValid(tp))
			elog(ERROR, "cache lookup failed for sequence %u", relid);
		inc = ((Form_pg_sequence) GETSTRUCT(tp))->seqincrement;
		min = ((Form_pg_sequence) GETSTRUCT(tp))->seqmin;
		ReleaseSysCache(tp);
		if (inc < 0)
			cosid_key_error("adopt-sequence", "sequence \"%s\" descends; a segment generator counts up", def->adopt);
		sequence_state(relid, &last, &is_called);
		if (!is_called)
			last--;
		alter_sequence(relid, list_make2(int8_option("increment", def->step),
										 int8_option("minvalue", Min(min, last))));
		DirectFunctionCall3(setval3_oid, ObjectIdGetDatum(relid), Int64GetDatum(last),
							BoolGetDatum(true));
	}
	return relid;
}

Datum
cosid_define(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *config = PG_GETARG_JSONB_P(1);
	CosidGenDef def;
	CosidCodecRt *rt;
	Oid			argtypes[12] = {TEXTOID, TEXTOID, JSONBOID, INT8OID, INT4OID,
	INT4OID, INT4OID, INT4OID, INT8OID, OIDOID, OIDOID, BOOLOID};
	Datum		values[12];
	char		nulls[12];
	bool		owns = false;

	check_name(name);
	/* what CREATE SCHEMA needs: a generator is a new object of the database */
	if (cosid_database_aclcheck(MyDatabaseId, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to define generator \"%s\"", name),
				 errdetail("Defining a generator needs the CREATE privilege on database %s.",
						   get_database_name(MyDatabaseId))));
	parse_definition(name, config, &def, true);
	def.owner = GetUserId();
	rt = cosid_codec_bind(def.codec, &def, COSID_BIND_DEFINE, CurrentMemoryContext);
	/* custom functions are kept as resolved now, whoever calls later */
	config = cosid_codec_qualify(config, rt);
	cosid_gen_check_define(&def);

	SPI_connect();
	values[0] = CStringGetTextDatum(name);
	if (catalog_exec("SELECT 1 FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1",
					 1, argtypes, values, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("generator \"%s\" already exists", name),
				 errhint("Use cosid_alter() to change it, or cosid_drop() first.")));

	memset(nulls, ' ', sizeof(nulls));
	values[1] = CStringGetTextDatum(strategy_name(def.strategy));
	values[2] = JsonbPGetDatum(config);
	layout_values(&def, &values[3], &nulls[3]);
	values[9] = ObjectIdGetDatum(GetUserId());
	values[10] = ObjectIdGetDatum(InvalidOid);
	nulls[10] = 'n';
	if (def.strategy == COSID_STRATEGY_SEGMENT)
	{
		values[10] = ObjectIdGetDatum(segment_sequence(&def, &owns));
		nulls[10] = ' ';
	}
	values[11] = BoolGetDatum(owns);
	values[0] = CStringGetTextDatum(name);
	if (catalog_exec("INSERT INTO cosid.generator (name, strategy, config, epoch_ms, unit_ms, "
					 "time_bits, node_bits, seq_bits, seq_reset_threshold, owner, sequence, "
					 "owns_sequence) "
					 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
					 "$10::pg_catalog.regrole, $11::pg_catalog.regclass, $12)",
					 12, argtypes, values, nulls, false) != SPI_OK_INSERT)
		elog(ERROR, "could not insert into cosid.generator");
	SPI_finish();
	mark_catalog_changed();
	PG_RETURN_VOID();
}

/*
 * Read the stored row of a generator: 42704 when there is none.  A lookup
 * for the hot path reads with a snapshot taken now (fresh), after the
 * caller read the config generation, so a row it reads is never older than
 * the generation it is stamped with.
 */
static void
read_row(const char *name, bool for_update, bool fresh, Jsonb **config,
		 CosidGenDef *stored, Oid *owner, const char *hint)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	char	   *strategy;
	Datum		d;
	int			ret;

	/* a parallel worker reads what its leader's snapshot shows */
	fresh = fresh && !IsInParallelMode();
	if (fresh)
		PushActiveSnapshot(GetLatestSnapshot());
	ret = catalog_exec(for_update ?
					   "SELECT strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, "
					   "seq_reset_threshold, owner::pg_catalog.oid, sequence::pg_catalog.oid, owns_sequence, xmin "
					   "FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE" :
					   "SELECT strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, "
					   "seq_reset_threshold, owner::pg_catalog.oid, sequence::pg_catalog.oid, owns_sequence, xmin "
					   "FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1",
					   1, argtypes, values, NULL, !for_update);
	if (fresh)
		PopActiveSnapshot();
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	if (SPI_processed == 0)
		unknown_generator_hinted(name, hint);

	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	strategy = TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull));
	*config = DatumGetJsonbPCopy(SPI_getbinval(tup, desc, 2, &isnull));
	stored->strategy = strategy_from_name(strategy);
	if (COSID_TIME_BASED(stored->strategy))
	{
		stored->layout.epoch_ms = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		stored->layout.unit_ms = DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull));
		stored->layout.time_bits = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
		stored->layout.node_bits = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
		stored->layout.seq_bits = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
		stored->layout.seq_reset_threshold = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
	}
	*owner = DatumGetObjectId(SPI_getbinval(tup, desc, 9, &isnull));
	stored->owner = *owner;
	d = SPI_getbinval(tup, desc, 10, &isnull);
	stored->seqid = isnull ? InvalidOid : DatumGetObjectId(d);
	if (stored->strategy == COSID_STRATEGY_SEGMENT && !OidIsValid(stored->seqid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment generator \"%s\" has lost its backing sequence", name),
				 errhint("Drop the generator and define it again.")));
	d = SPI_getbinval(tup, desc, 11, &isnull);
	stored->owns_sequence = !isnull && DatumGetBool(d);
	stored->row_xmin = DatumGetTransactionId(SPI_getbinval(tup, desc, 12, &isnull));
}

/* What cosid_alter() must refuse: anything that could issue an id again. */
static void
check_alter(const char *name, const CosidGenDef *old, const CosidGenDef *new)
{
	const char *key = NULL;

	if (old->strategy != new->strategy)
		key = "strategy";
	else if (old->strategy == COSID_STRATEGY_SEGMENT)
	{
		if (old->start != new->start)
			key = "start";
		else if (old->group != new->group)
			key = "group";
		else if (strcmp(old->zone, new->zone) != 0)
			key = "zone";
		else if ((old->adopt == NULL) != (new->adopt == NULL) ||
				 (old->adopt && strcmp(old->adopt, new->adopt) != 0))
			key = "adopt-sequence";
		if (key)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: cannot change the %s of segment generator \"%s\"", key, key, name),
					 errdetail("Changing where numbers start, their period or their sequence could issue a number again."),
					 errhint("Define a new generator instead; cosid_alter() changes the step, codec and int.")));
		return;
	}
	else if (old->layout.epoch_ms != new->layout.epoch_ms)
		key = "epoch";
	else if (old->layout.unit_ms != new->layout.unit_ms)
		key = "unit";
	else if (old->layout.time_bits != new->layout.time_bits)
		key = "time-bits";
	else if (old->layout.node_bits != new->layout.node_bits)
		key = "node-bits";
	else if (old->layout.seq_bits != new->layout.seq_bits)
		key = "seq-bits";
	else if (old->uncertainty_bits != new->uncertainty_bits)
		key = "uncertainty-bits";
	if (key)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: cannot change the %s of generator \"%s\"", key,
						strcmp(key, "strategy") == 0 ? "strategy" : "layout", name),
				 errdetail("Changing the strategy, epoch, unit, bit widths or uncertainty bits could issue an id again."),
				 errhint("Define a new generator instead; cosid_alter() changes the codec, clock-regression, seq-reset-threshold and int.")));
}

Datum
cosid_alter(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *patch = PG_GETARG_JSONB_P(1);
	Jsonb	   *config;
	Jsonb	   *merged;
	CosidGenDef stored;
	CosidGenDef old;
	CosidGenDef new;
	CosidCodecRt *rt;
	Oid			owner;
	Oid			argtypes[3] = {TEXTOID, JSONBOID, INT8OID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};

	if (!JB_ROOT_IS_OBJECT(patch) || JB_ROOT_IS_SCALAR(patch))
		cosid_key_error("definition", "expected a JSON object of the keys to change");

	SPI_connect();
	memset(&stored, 0, sizeof(stored));
	read_row(name, true, false, &config, &stored, &owner, NULL);
	check_owner(name, owner);

	/* The patch replaces top-level keys; a key set to null goes back to its default. */
	merged = DatumGetJsonbP(DirectFunctionCall1(jsonb_strip_nulls,
												DirectFunctionCall2(jsonb_concat,
																	JsonbPGetDatum(config),
																	JsonbPGetDatum(patch))));
	parse_definition(name, config, &old, false);
	parse_definition(name, merged, &new, false);
	/* the stored layout is what ids were made with, whatever the presets say now */
	old.layout = stored.layout;
	old.strategy = stored.strategy;
	check_alter(name, &old, &new);
	/* the new codec is checked against the layout ids are made with */
	{
		int64		threshold = new.layout.seq_reset_threshold;

		new.layout = stored.layout;
		new.layout.seq_reset_threshold = threshold;
	}
	new.owner = owner;
	rt = cosid_codec_bind(new.codec, &new, COSID_BIND_DEFINE, CurrentMemoryContext);
	merged = cosid_codec_qualify(merged, rt);

	/* a new step: the sequence hands out segments of the new size from now on */
	if (new.strategy == COSID_STRATEGY_SEGMENT && new.step != old.step)
	{
		Oid			seqowner;
		CosidAsRole as;

		LockRelationOid(stored.seqid, ShareRowExclusiveLock);
		if (stored.owns_sequence)
		{
			/* cosid's own sequence: as the catalog's owner, who owns it */
			seqowner = cosid_rel_owner(stored.seqid);
			cosid_begin_as_role(seqowner, &as);
			alter_sequence(stored.seqid, list_make1(int8_option("increment", new.step)));
			cosid_end_as_role(&as);
		}
		else
		{
			/* an adopted sequence: only by whoever owns it now */
			alter_sequence(stored.seqid, list_make1(int8_option("increment", new.step)));
		}
	}

	values[0] = CStringGetTextDatum(name);
	values[1] = JsonbPGetDatum(merged);
	values[2] = Int64GetDatum(new.layout.seq_reset_threshold);
	if (!COSID_TIME_BASED(new.strategy))
		nulls[2] = 'n';
	if (catalog_exec("UPDATE cosid.generator SET config = $2, seq_reset_threshold = $3 "
					 "WHERE name OPERATOR(pg_catalog.=) $1 RETURNING xmin",
					 3, argtypes, values, nulls, false) != SPI_OK_UPDATE_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "could not update cosid.generator");
	/* a segment generator's state follows its row to the new version */
	if (stored.strategy == COSID_STRATEGY_SEGMENT)
	{
		bool		isnull;

		strlcpy(stored.name, name, NAMEDATALEN);
		cosid_gen_rekey_at_commit(&stored,
								  DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
																	  SPI_tuptable->tupdesc, 1, &isnull)));
	}
	SPI_finish();
	mark_catalog_changed();
	PG_RETURN_VOID();
}

Datum
cosid_drop(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		if_exists = PG_GETARG_BOOL(1);
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	Jsonb	   *config;
	CosidGenDef stored;
	Oid			owner;

	SPI_connect();
	if (if_exists)
	{
		if (catalog_exec("SELECT 1 FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1",
						 1, argtypes, values, NULL, true) != SPI_OK_SELECT)
			elog(ERROR, "could not read cosid.generator");
		if (SPI_processed == 0)
		{
			SPI_finish();
			ereport(NOTICE,
					(errmsg("generator \"%s\" does not exist, skipping", name)));
			PG_RETURN_VOID();
		}
	}
	memset(&stored, 0, sizeof(stored));
	read_row(name, true, false, &config, &stored, &owner, NULL);
	check_owner(name, owner);
	if (catalog_exec("DELETE FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1",
					 1, argtypes, values, NULL, false) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from cosid.generator");
	SPI_finish();

	/* a sequence cosid made goes with it; an adopted one stays its owner's */
	if (stored.owns_sequence && get_rel_relkind(stored.seqid) == RELKIND_SEQUENCE &&
		get_rel_namespace(stored.seqid) == get_namespace_oid("cosid", false))
	{
		ObjectAddress seq;

		ObjectAddressSet(seq, RelationRelationId, stored.seqid);
		performDeletion(&seq, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	strlcpy(stored.name, name, NAMEDATALEN);
	cosid_gen_release_at_commit(&stored);
	mark_catalog_changed();
	PG_RETURN_VOID();
}

/* ---------- lookup for the hot path ---------- */

CosidGenCache *
cosid_lookup(FunctionCallInfo fcinfo, text *name, bool need_entry)
{
	return cosid_lookup_hinted(fcinfo, name, need_entry, NULL);
}

CosidGenCache *
cosid_lookup_hinted(FunctionCallInfo fcinfo, text *name, bool need_entry,
					const char *hint)
{
	return cosid_lookup_in(&fcinfo->flinfo->fn_extra, name, need_entry, hint);
}

/*
 * Resolved generators of this backend, by name (a backend is in one
 * database).  A call site keeps a pointer to one of these, so a statement
 * planned anew (a DEFAULT in a one-row INSERT) finds its generator with a
 * hash lookup, not a catalog query.
 */
typedef struct BackendGenerator
{
	char		name[NAMEDATALEN];	/* hash key */
	CosidGenCache *cache;
} BackendGenerator;

static HTAB *backend_generators = NULL;

static CosidGenCache *
backend_generator(const char *name)
{
	BackendGenerator *bg;
	char		key[NAMEDATALEN];
	bool		found;

	if (backend_generators == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(BackendGenerator);
		backend_generators = hash_create("cosid generators of this backend", 16, &ctl,
										 HASH_ELEM | HASH_STRINGS);
	}
	memset(key, 0, sizeof(key));
	strlcpy(key, name, NAMEDATALEN);
	bg = hash_search(backend_generators, key, HASH_ENTER, &found);
	if (!found)
	{
		bg->cache = MemoryContextAllocZero(TopMemoryContext, sizeof(CosidGenCache));
		bg->cache->cxt = AllocSetContextCreate(TopMemoryContext, "cosid generator",
											   ALLOCSET_SMALL_SIZES);
	}
	return bg->cache;
}

static inline bool
cache_valid(const CosidGenCache *c, text *name, int len, uint64 generation, bool need_entry)
{
	return c != NULL &&
		c->shared_generation == generation &&
		c->local_generation == cosid_local_generation &&
		c->name_len == len &&
		memcmp(c->name, VARDATA_ANY(name), len) == 0 &&
		(c->entry != NULL || !need_entry);
}

CosidGenCache *
cosid_lookup_in(void **slot, text *name, bool need_entry, const char *hint)
{
	CosidGenCache *c = (CosidGenCache *) *slot;
	int			len = VARSIZE_ANY_EXHDR(name);
	uint64		generation;
	char	   *cname;
	Jsonb	   *config;
	CosidGenDef stored;
	Oid			owner;

	generation = cosid_shared ? pg_atomic_read_u64(&cosid_shared->config_generation) : 0;
	if (likely(cache_valid(c, name, len, generation, need_entry)))
		return c;

	if (need_entry)
		cosid_require_preload("issuing ids");

	cname = text_to_cstring(name);
	if (len == 0 || len >= NAMEDATALEN)
		unknown_generator_hinted(cname, hint);

	/* another call site of this backend may have read it already */
	c = backend_generator(cname);
	*slot = c;
	if (cache_valid(c, name, len, generation, need_entry))
		return c;

	c->name_len = 0;			/* invalid until filled in */
	c->entry = NULL;
	c->codec = NULL;
	MemoryContextReset(c->cxt);

	SPI_connect();
	memset(&stored, 0, sizeof(stored));
	read_row(cname, false, true, &config, &stored, &owner, hint);
	parse_definition(cname, config, &c->def, false);
	c->def.strategy = stored.strategy;
	c->def.layout = stored.layout;
	c->def.seqid = stored.seqid;
	c->def.owns_sequence = stored.owns_sequence;
	c->def.row_xmin = stored.row_xmin;
	c->def.owner = owner;
	c->def.adopt = NULL;		/* parsed in SPI's memory: not kept */
	c->group_zone = c->def.group != COSID_GROUP_NONE ? pg_tzset(c->def.zone) : NULL;
	/* bound into the cache's context before SPI frees what it was parsed in */
	c->codec = cosid_codec_bind(c->def.codec, &c->def, COSID_BIND_STORED, c->cxt);
	c->def.codec = NULL;
	SPI_finish();

	if (COSID_TIME_BASED(c->def.strategy) && c->def.layout.node_bits < cosid_machine_bits)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" has %d node bits, fewer than cosid.machine_bits (%d)",
						cname, c->def.layout.node_bits, cosid_machine_bits),
				 errdetail("This server's slot does not fit the generator's layout."),
				 errhint("Set cosid.machine_bits to %d or less, or define a generator with more node bits.",
						 c->def.layout.node_bits)));

	if (need_entry)
		c->entry = cosid_gen_attach(&c->def, &c->entry_tag);
	c->shared_generation = generation;
	c->local_generation = cosid_local_generation;
	memcpy(c->name, VARDATA_ANY(name), len);
	c->name_len = len;
	return c;
}

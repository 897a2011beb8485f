/*
 * gendef.c - a generator's definition: the JSON parsed and validated into a
 * CosidGenDef (see gendef.h).
 *
 * Owns: the rules of a definition.  Must not: read or write the catalog,
 * bind codecs or touch shared memory.
 */
#include "gendef.h"
#include "slot.h"

#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#define key_error(path, ...) cosid_invalid_key(false, path, __VA_ARGS__)

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
		key_error(path, "expected %s, found %s", expected, jbv_type_name(v));
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
	key_error(path, "expected an integer from " INT64_FORMAT " to " INT64_FORMAT,
			  min, max);
	return 0;					/* keep the compiler quiet */
}

static bool
jbv_bool(JsonbValue *v, const char *path)
{
	if (v->type != jbvBool)
		key_error(path, "expected true or false, found %s", jbv_type_name(v));
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
	key_error(path, "expected a duration of at most 60s such as \"5ms\" or \"1s\"");
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
		key_error(path, "expected Unix milliseconds or an ISO 8601 time such as \"2019-12-24T16:00:00Z\"");
	}
	return jbv_int(v, path, 0, INT64CONST(1) << 47);
}

/*
 * Parse and validate a definition.  check_machine_bits: refuse a layout
 * whose node bits cannot hold cosid.machine_bits (at definition time; at
 * lookup time the caller reports that differently).
 */
void
cosid_gendef_parse(const char *name, Jsonb *config, CosidGenDef *def,
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
		key_error("definition", "expected a JSON object such as {\"strategy\": \"snowflake\"}");

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
				key_error(key, "expected \"day\", \"month\" or \"year\", found \"%s\"", g);
		}
		else if (strcmp(key, "zone") == 0)
		{
			char	   *z = jbv_string(&val, key, "a time zone name such as \"Asia/Shanghai\"");

			if (strlen(z) >= sizeof(def->zone) || pg_tzset(z) == NULL)
				key_error(key, "unknown time zone \"%s\"", z);
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
				key_error(key, "expected \"ms\" or \"s\", found \"%s\"", u);
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
					key_error(key, "expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\"");
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
						key_error(path2, "unknown key; expected \"borrow-up-to\" or \"wait-up-to\"");
				}
			}
			else
				key_error(key, "expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\", found %s",
						  jbv_type_name(&val));
		}
		else if (strcmp(key, "codec") == 0)
		{
			if (!(val.type == jbvBinary && JsonContainerIsArray(val.val.binary.data)))
				key_error(key, "expected a JSON array of codec items, found %s", jbv_type_name(&val));
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
			key_error(key, "unknown key; expected one of %s", keys.data);
		}
	}

	if (strategy == NULL || pg_strcasecmp(strategy, "snowflake") == 0)
		def->strategy = COSID_STRATEGY_SNOWFLAKE;
	else if (pg_strcasecmp(strategy, "cosid80") == 0)
		def->strategy = COSID_STRATEGY_COSID80;
	else if (pg_strcasecmp(strategy, "segment") == 0)
		def->strategy = COSID_STRATEGY_SEGMENT;
	else
		key_error("strategy", "expected \"snowflake\", \"cosid80\" or \"segment\", found \"%s\"", strategy);

	if (def->strategy == COSID_STRATEGY_SEGMENT)
	{
		if (time_key)
			key_error(time_key, "not a key of segment generators (it belongs to time-based ones)");
		if (def->adopt && def->group != COSID_GROUP_NONE)
			key_error("adopt-sequence", "cannot be combined with \"group\": a periodic number carries its period");
		if (def->group != COSID_GROUP_NONE && def->start >= cosid_group_scale(def->group))
			key_error("start", "expected at most " INT64_FORMAT " for group values",
					  cosid_group_scale(def->group) - 1);
		if (def->int32 && def->group != COSID_GROUP_NONE)
			key_error("int", "cannot be combined with \"group\": periodic numbers do not fit int4");
		if (def->int32 && def->start > PG_INT32_MAX)
			key_error("start", "expected at most 2147483647 with \"int\": true");
		return;
	}
	if (segment_key)
		key_error(segment_key, "only a key of segment generators (strategy \"segment\")");

	if (preset_name == NULL)
		preset = def->strategy == COSID_STRATEGY_COSID80 ?
			COSID_PRESET_COSID_80 : COSID_PRESET_SNOWFLAKE_MS;
	else if (!cosid_preset_find(preset_name, &preset))
		key_error("layout", "expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, found \"%s\"",
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
			key_error(bad, "%s (an id longer than 63 bits needs strategy \"cosid80\")", msg);
		key_error(bad, "%s", msg);
	}

	if (def->strategy == COSID_STRATEGY_COSID80)
	{
		if (def->int32)
			key_error("int", "not available for strategy \"cosid80\", whose ids are text");
		if (def->uncertainty_bits)
			key_error("uncertainty-bits", "not available for strategy \"cosid80\", whose ids are text");
	}
	else if (cosid_layout_total_bits(&def->layout) + def->uncertainty_bits > 63)
		key_error("uncertainty-bits",
				  "the layout has %d bits, so at most %d more fit in 63",
				  cosid_layout_total_bits(&def->layout),
				  63 - cosid_layout_total_bits(&def->layout));

	if (check_machine_bits && def->layout.node_bits < cosid_machine_bits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid generator definition"),
				 errdetail("At node-bits: the layout has %d node bits, fewer than cosid.machine_bits (%d); every time-based layout must hold this server's slot.",
						   def->layout.node_bits, cosid_machine_bits),
				 errhint("Use a layout with more node bits, or set cosid.machine_bits to %d or less.",
						 def->layout.node_bits)));
}

const char *
cosid_strategy_name(CosidStrategy s)
{
	return s == COSID_STRATEGY_COSID80 ? "cosid80" :
		s == COSID_STRATEGY_SEGMENT ? "segment" : "snowflake";
}

CosidStrategy
cosid_strategy_from_name(const char *s)
{
	return strcmp(s, "cosid80") == 0 ? COSID_STRATEGY_COSID80 :
		strcmp(s, "segment") == 0 ? COSID_STRATEGY_SEGMENT : COSID_STRATEGY_SNOWFLAKE;
}


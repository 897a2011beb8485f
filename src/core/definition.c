/*
 * definition.c - parse and validate a generator definition (no PostgreSQL).
 *
 * Owns the rules of a definition's keys, in the order they are checked:
 * first each key as it comes in the text (its value's type and range, an
 * unknown key), then the strategy, then what depends on it (keys of the
 * other kind of generator, the segment rules, the layout checked with
 * timegen, the cosid80 and uncertainty rules).  The texts are those users
 * have always seen; sql/generator.sql and sql/segment.sql pin them.
 *
 * Must not: include PostgreSQL headers, keep any state, or allocate except
 * through the caller's CosidAlloc; it asks the caller's hooks about time
 * strings and zone names.  The JSON reader is json.c's, so what it refuses
 * (not well formed, nested deeper than COSID_JSON_MAX_DEPTH, a key twice)
 * is refused here with the path "definition" (or the repeated key's path).
 */
#include "definition.h"
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_STEP	100
#define DEFAULT_START	1
#define MAX_STEP		INT64_C(1000000000)
#define MAX_START		(INT64_C(1) << 62)
#define MAX_EPOCH_MS	(INT64_C(1) << 47)
#define MAX_DURATION_MS INT64_C(60000)

static const char *const known_keys[] = {
	"strategy", "layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "codec", "int", "uncertainty-bits",
	"step", "start", "group", "zone", "adopt-sequence", "distributor", "reserve",
	NULL
};

/* Keys only a time-based generator has, and only a segment generator has. */
static const char *const time_keys[] = {
	"layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "uncertainty-bits", NULL
};
static const char *const segment_keys[] = {
	"step", "start", "group", "zone", "adopt-sequence", "distributor", "reserve", NULL
};

typedef struct DefParse
{
	const CosidDefinitionHooks *hooks;
	const char *prefix;			/* put before every path, or NULL */
	char	   *path;
	size_t		pathlen;
	char	   *msg;
	size_t		msglen;
} DefParse;

static bool
key_in(const char *key, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(key, list[i]) == 0)
			return true;
	return false;
}

/*
 * Case-insensitive equality, folding ASCII letters only (as pg_strcasecmp
 * does for the ASCII words compared here; no locale).
 */
static bool
word_eq(const char *s, const char *word)
{
	for (;; s++, word++)
	{
		unsigned char a = (unsigned char) *s;
		unsigned char b = (unsigned char) *word;

		if (a >= 'A' && a <= 'Z')
			a = (unsigned char) (a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (unsigned char) (b - 'A' + 'a');
		if (a != b)
			return false;
		if (a == '\0')
			return true;
	}
}

/* Bytes of the UTF-8 character a lead byte starts (1 for a stray byte). */
static size_t
utf8_len(unsigned char c)
{
	if (c >= 0xF0 && c <= 0xF7)
		return 4;
	if (c >= 0xE0)
		return c <= 0xEF ? 3 : 1;
	if (c >= 0xC0)
		return 2;
	return 1;
}

/*
 * Write path and the formatted message; returns false.  A message that does
 * not fit is cut on a UTF-8 character boundary.
 */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool
fail(DefParse *d, const char *path, const char *fmt,...)
{
	size_t		pos = 0;

	if (d->path != NULL && d->pathlen > 0)
	{
		d->path[0] = '\0';
		if (d->prefix != NULL)
			cosid_buf_append(d->path, d->pathlen, &pos, d->prefix,
							 strlen(d->prefix));
		cosid_buf_append(d->path, d->pathlen, &pos, path, strlen(path));
	}
	if (d->msg != NULL && d->msglen > 0)
	{
		va_list		ap;
		int			n;

		va_start(ap, fmt);
		n = vsnprintf(d->msg, d->msglen, fmt, ap);
		va_end(ap);
		if (n < 0)
			d->msg[0] = '\0';
		else if ((size_t) n >= d->msglen && d->msglen > 1)
		{
			/* cut: drop a last character that lost some of its bytes */
			size_t		last = d->msglen - 2;
			size_t		kept;

			while (last > 0 && ((unsigned char) d->msg[last] & 0xC0) == 0x80)
				last--;
			kept = d->msglen - 1 - last;
			if (utf8_len((unsigned char) d->msg[last]) > kept)
				d->msg[last] = '\0';
		}
	}
	return false;
}

static const char *
type_name(const CosidJsonValue *v)
{
	switch (v->type)
	{
		case COSID_JSON_NULL:
			return "null";
		case COSID_JSON_STRING:
			return "a string";
		case COSID_JSON_NUMBER:
			return "a number";
		case COSID_JSON_TRUE:
		case COSID_JSON_FALSE:
			return "a boolean";
		case COSID_JSON_ARRAY:
			return "an array";
		case COSID_JSON_OBJECT:
			return "an object";
	}
	return "a JSON value";
}

static bool
get_string(DefParse *d, const CosidJsonValue *v, const char *path,
		   const char *expected, const char **out)
{
	if (v->type != COSID_JSON_STRING)
		return fail(d, path, "expected %s, found %s", expected, type_name(v));
	*out = v->str;
	return true;
}

/* An integer written as one (numeric_out's text: no fraction, no exponent). */
static bool
get_int(DefParse *d, const CosidJsonValue *v, const char *path, int64_t min,
		int64_t max, int64_t *out)
{
	if (v->type == COSID_JSON_NUMBER && v->int_fits &&
		v->integer >= min && v->integer <= max)
	{
		*out = v->integer;
		return true;
	}
	return fail(d, path, "expected an integer from %lld to %lld",
				(long long) min, (long long) max);
}

static bool
get_bool(DefParse *d, const CosidJsonValue *v, const char *path, bool *out)
{
	if (v->type != COSID_JSON_TRUE && v->type != COSID_JSON_FALSE)
		return fail(d, path, "expected true or false, found %s", type_name(v));
	*out = v->type == COSID_JSON_TRUE;
	return true;
}

/* A duration: "5ms", "1s", ... or a number of milliseconds. */
static bool
get_duration(DefParse *d, const CosidJsonValue *v, const char *path,
			 int64_t *out)
{
	int64_t		ms;

	if (v->type == COSID_JSON_NUMBER)
		return get_int(d, v, path, 0, MAX_DURATION_MS, out);
	if (v->type == COSID_JSON_STRING &&
		cosid_parse_duration_ms(v->str, &ms) && ms <= MAX_DURATION_MS)
	{
		*out = ms;
		return true;
	}
	return fail(d, path, "expected a duration of at most 60s such as \"5ms\" or \"1s\"");
}

/* Unix milliseconds, or a time such as "2019-12-24T16:00:00Z" (the hook). */
static bool
get_epoch(DefParse *d, const CosidJsonValue *v, const char *path,
		  int64_t *out)
{
	if (v->type == COSID_JSON_STRING)
	{
		int64_t		ms = 0;

		if (d->hooks != NULL && d->hooks->parse_time != NULL &&
			d->hooks->parse_time(d->hooks->ctx, v->str, &ms))
		{
			*out = ms;
			return true;
		}
		return fail(d, path, "expected Unix milliseconds or an ISO 8601 time such as \"2019-12-24T16:00:00Z\"");
	}
	return get_int(d, v, path, 0, MAX_EPOCH_MS, out);
}

static bool
zone_exists(DefParse *d, const char *name)
{
	return d->hooks != NULL && d->hooks->zone_exists != NULL &&
		d->hooks->zone_exists(d->hooks->ctx, name);
}

static bool
parse_clock_regression(DefParse *d, const CosidJsonValue *v,
					   CosidClockPolicy *policy)
{
	if (v->type == COSID_JSON_STRING)
	{
		if (!word_eq(v->str, "FAIL"))
			return fail(d, "clock-regression",
						"expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\"");
		policy->borrow_ms = 0;
		policy->wait_ms = 0;
		return true;
	}
	if (v->type != COSID_JSON_OBJECT)
		return fail(d, "clock-regression",
					"expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\", found %s",
					type_name(v));

	/* paths below are clock-regression.<key> */
	d->prefix = "clock-regression.";
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		bool		ok;

		if (strcmp(m->key, "borrow-up-to") == 0)
			ok = get_duration(d, m, m->key, &policy->borrow_ms);
		else if (strcmp(m->key, "wait-up-to") == 0)
			ok = get_duration(d, m, m->key, &policy->wait_ms);
		else
			ok = fail(d, m->key, "unknown key; expected \"borrow-up-to\" or \"wait-up-to\"");
		if (!ok)
			return false;
	}
	d->prefix = NULL;
	return true;
}

/* The unknown-key message: every known key, in the order written above. */
static bool
fail_unknown_key(DefParse *d, const char *key)
{
	char		keys[256];
	size_t		pos = 0;

	keys[0] = '\0';
	for (int i = 0; known_keys[i]; i++)
	{
		if (i > 0)
			cosid_buf_append(keys, sizeof(keys), &pos, ", ", 2);
		cosid_buf_append(keys, sizeof(keys), &pos, known_keys[i],
						 strlen(known_keys[i]));
	}
	return fail(d, key, "unknown key; expected one of %s", keys);
}

/*
 * After a JSON reader failure: its path is "" for the document, or
 * ".key..." for a repeated key (no prefix was given); make that
 * "definition" or "key...".
 */
static void
fix_json_path(char *path, size_t pathlen)
{
	size_t		n;
	size_t		pos = 0;

	if (path == NULL || pathlen == 0)
		return;
	n = strlen(path);
	if (n == 0)
		cosid_buf_append(path, pathlen, &pos, "definition", 10);
	else if (path[0] == '.')
		memmove(path, path + 1, n);
}

bool
cosid_definition_parse(const char *json, size_t len,
					   const CosidDefinitionHooks *hooks, CosidAlloc alloc,
					   void *alloc_ctx, CosidDefinition *out, char *path,
					   size_t pathlen, char *msg, size_t msglen)
{
	DefParse	dp;
	DefParse   *d = &dp;
	CosidDefinition def;
	const CosidJsonValue *root;
	const CosidJsonValue *codec = NULL;
	const char *strategy = NULL;
	const char *preset_name = NULL;
	bool		have_epoch = false,
				have_unit = false,
				have_time = false,
				have_node = false,
				have_seq = false,
				have_threshold = false;
	int64_t		epoch = 0,
				unit = 0,
				time_bits = 0,
				node_bits = 0,
				seq_bits = 0,
				threshold = 0;
	CosidPreset preset;
	char		lmsg[256];
	const char *bad;
	const char *time_key = NULL;
	const char *segment_key = NULL;
	bool		have_reserve = false;
	int			max_bits;
	int			total;

	d->hooks = hooks;
	d->prefix = NULL;
	d->path = path;
	d->pathlen = pathlen;
	d->msg = msg;
	d->msglen = msglen;
	if (path != NULL && pathlen > 0)
		path[0] = '\0';
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';

	memset(&def, 0, sizeof(def));
	def.policy.borrow_ms = COSID_DEFAULT_BORROW_MS;
	def.policy.wait_ms = COSID_DEFAULT_WAIT_MS;
	def.step = DEFAULT_STEP;
	def.start = DEFAULT_START;
	def.group = COSID_GROUP_NONE;
	memcpy(def.zone, "UTC", 4);

	root = cosid_json_parse(json, len, alloc, alloc_ctx, NULL, path, pathlen,
							msg, msglen);
	if (root == NULL)
	{
		fix_json_path(path, pathlen);
		return false;
	}
	if (root->type != COSID_JSON_OBJECT)
		return fail(d, "definition",
					"expected a JSON object such as {\"strategy\": \"snowflake\"}");

	for (const CosidJsonValue *v = root->first; v != NULL; v = v->next)
	{
		const char *key = v->key;

		if (time_key == NULL && key_in(key, time_keys))
			time_key = key;
		if (segment_key == NULL && key_in(key, segment_keys))
			segment_key = key;

		if (strcmp(key, "strategy") == 0)
		{
			if (!get_string(d, v, key, "\"snowflake\", \"cosid80\" or \"segment\"",
							&strategy))
				return false;
		}
		else if (strcmp(key, "step") == 0)
		{
			if (!get_int(d, v, key, 1, MAX_STEP, &def.step))
				return false;
		}
		else if (strcmp(key, "start") == 0)
		{
			if (!get_int(d, v, key, 0, MAX_START, &def.start))
				return false;
		}
		else if (strcmp(key, "group") == 0)
		{
			const char *g = NULL;

			if (!get_string(d, v, key, "\"day\", \"month\" or \"year\"", &g))
				return false;
			if (word_eq(g, "day"))
				def.group = COSID_GROUP_DAY;
			else if (word_eq(g, "month"))
				def.group = COSID_GROUP_MONTH;
			else if (word_eq(g, "year"))
				def.group = COSID_GROUP_YEAR;
			else
				return fail(d, key, "expected \"day\", \"month\" or \"year\", found \"%s\"", g);
		}
		else if (strcmp(key, "zone") == 0)
		{
			const char *z = NULL;

			if (!get_string(d, v, key, "a time zone name such as \"Asia/Shanghai\"", &z))
				return false;
			if (v->str_len >= sizeof(def.zone) || !zone_exists(d, z))
				return fail(d, key, "unknown time zone \"%s\"", z);
			memcpy(def.zone, z, v->str_len + 1);
		}
		else if (strcmp(key, "adopt-sequence") == 0)
		{
			if (!get_string(d, v, key, "the name of a sequence", &def.adopt))
				return false;
		}
		else if (strcmp(key, "distributor") == 0)
		{
			const char *dist = NULL;

			if (!get_string(d, v, key, "\"local\" or \"lease-store\"", &dist))
				return false;
			if (word_eq(dist, "local"))
				def.distributor = COSID_DISTRIBUTOR_LOCAL;
			else if (word_eq(dist, "lease-store"))
				def.distributor = COSID_DISTRIBUTOR_LEASE_STORE;
			else
				return fail(d, key, "expected \"local\" or \"lease-store\", found \"%s\"", dist);
		}
		else if (strcmp(key, "reserve") == 0)
		{
			int64_t		r = 0;

			if (!get_int(d, v, key, 1, COSID_MAX_RESERVE, &r))
				return false;
			def.reserve = (int) r;
			have_reserve = true;
		}
		else if (strcmp(key, "layout") == 0)
		{
			if (!get_string(d, v, key, "a layout name", &preset_name))
				return false;
		}
		else if (strcmp(key, "epoch") == 0)
		{
			if (!get_epoch(d, v, key, &epoch))
				return false;
			have_epoch = true;
		}
		else if (strcmp(key, "unit") == 0)
		{
			const char *u = NULL;

			if (!get_string(d, v, key, "\"ms\" or \"s\"", &u))
				return false;
			if (word_eq(u, "ms") || word_eq(u, "millis"))
				unit = 1;
			else if (word_eq(u, "s") || word_eq(u, "seconds"))
				unit = 1000;
			else
				return fail(d, key, "expected \"ms\" or \"s\", found \"%s\"", u);
			have_unit = true;
		}
		else if (strcmp(key, "time-bits") == 0)
		{
			if (!get_int(d, v, key, 1, 63, &time_bits))
				return false;
			have_time = true;
		}
		else if (strcmp(key, "node-bits") == 0)
		{
			if (!get_int(d, v, key, 0, 31, &node_bits))
				return false;
			have_node = true;
		}
		else if (strcmp(key, "seq-bits") == 0)
		{
			if (!get_int(d, v, key, 1, 62, &seq_bits))
				return false;
			have_seq = true;
		}
		else if (strcmp(key, "seq-reset-threshold") == 0)
		{
			if (!get_int(d, v, key, 0, INT64_MAX, &threshold))
				return false;
			have_threshold = true;
		}
		else if (strcmp(key, "clock-regression") == 0)
		{
			if (!parse_clock_regression(d, v, &def.policy))
				return false;
		}
		else if (strcmp(key, "codec") == 0)
		{
			if (v->type != COSID_JSON_ARRAY)
				return fail(d, key, "expected a JSON array of codec items, found %s",
							type_name(v));
			codec = v;
		}
		else if (strcmp(key, "int") == 0)
		{
			if (!get_bool(d, v, key, &def.int32))
				return false;
		}
		else if (strcmp(key, "uncertainty-bits") == 0)
		{
			int64_t		u = 0;

			if (!get_int(d, v, key, 0, 62, &u))
				return false;
			def.uncertainty_bits = (int) u;
		}
		else
			return fail_unknown_key(d, key);
	}

	if (strategy == NULL || word_eq(strategy, "snowflake"))
		def.strategy = COSID_STRATEGY_SNOWFLAKE;
	else if (word_eq(strategy, "cosid80"))
		def.strategy = COSID_STRATEGY_COSID80;
	else if (word_eq(strategy, "segment"))
		def.strategy = COSID_STRATEGY_SEGMENT;
	else
		return fail(d, "strategy",
					"expected \"snowflake\", \"cosid80\" or \"segment\", found \"%s\"",
					strategy);

	if (def.strategy == COSID_STRATEGY_SEGMENT)
	{
		if (time_key)
			return fail(d, time_key,
						"not a key of segment generators (it belongs to time-based ones)");
		if (def.adopt && def.group != COSID_GROUP_NONE)
			return fail(d, "adopt-sequence",
						"cannot be combined with \"group\": a periodic number carries its period");
		if (def.adopt && def.distributor == COSID_DISTRIBUTOR_LEASE_STORE)
			return fail(d, "adopt-sequence",
						"cannot be combined with \"distributor\": \"lease-store\" (the lease store counts the numbers, not a sequence; start above the numbers in use instead)");
		if (have_reserve && def.distributor != COSID_DISTRIBUTOR_LEASE_STORE)
			return fail(d, "reserve",
						"only with \"distributor\": \"lease-store\" (a local sequence is read when a segment is needed)");
		if (def.distributor == COSID_DISTRIBUTOR_LEASE_STORE && !have_reserve)
			def.reserve = COSID_DEFAULT_RESERVE;
		if (def.group != COSID_GROUP_NONE &&
			def.start >= cosid_group_scale(def.group))
			return fail(d, "start", "expected at most %lld for group values",
						(long long) (cosid_group_scale(def.group) - 1));
		if (def.int32 && def.group != COSID_GROUP_NONE)
			return fail(d, "int",
						"cannot be combined with \"group\": periodic numbers do not fit int4");
		if (def.int32 && def.start > INT32_MAX)
			return fail(d, "start", "expected at most 2147483647 with \"int\": true");
	}
	else
	{
		if (segment_key)
			return fail(d, segment_key,
						"only a key of segment generators (strategy \"segment\")");

		if (preset_name == NULL)
			preset = def.strategy == COSID_STRATEGY_COSID80 ?
				COSID_PRESET_COSID_80 : COSID_PRESET_SNOWFLAKE_MS;
		else if (!cosid_preset_find(preset_name, &preset))
			return fail(d, "layout",
						"expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, found \"%s\"",
						preset_name);

		def.layout = cosid_preset_layout(preset);
		if (have_epoch)
			def.layout.epoch_ms = epoch;
		if (have_unit)
			def.layout.unit_ms = unit;
		if (have_time)
			def.layout.time_bits = (int) time_bits;
		if (have_node)
			def.layout.node_bits = (int) node_bits;
		if (have_seq)
			def.layout.seq_bits = (int) seq_bits;
		def.layout.seq_reset_threshold = have_threshold ? threshold :
			cosid_default_seq_reset_threshold(def.layout.seq_bits);

		max_bits = def.strategy == COSID_STRATEGY_COSID80 ? 127 : 63;
		bad = cosid_layout_check(&def.layout, max_bits, lmsg, sizeof(lmsg));
		if (bad)
		{
			if (strcmp(bad, "layout") == 0 &&
				def.strategy == COSID_STRATEGY_SNOWFLAKE)
				return fail(d, bad, "%s (an id longer than 63 bits needs strategy \"cosid80\")",
							lmsg);
			return fail(d, bad, "%s", lmsg);
		}

		total = cosid_layout_total_bits(&def.layout);
		if (def.strategy == COSID_STRATEGY_COSID80)
		{
			if (def.int32)
				return fail(d, "int",
							"not available for strategy \"cosid80\", whose ids are text");
			if (def.uncertainty_bits)
				return fail(d, "uncertainty-bits",
							"not available for strategy \"cosid80\", whose ids are text");
		}
		else if (total + def.uncertainty_bits > 63)
			return fail(d, "uncertainty-bits",
						"the layout has %d bits, so at most %d more fit in 63",
						total, 63 - total);
	}

	/* The codec list's node, for cosid_codec_parse_node when it is bound. */
	def.codec = codec;

	*out = def;
	return true;
}

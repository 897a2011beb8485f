/*
 * definition.c - parse and validate a generator definition (no PostgreSQL).
 *
 * Owns the rules of a definition's keys, in the order they are checked:
 * first each key as it comes in the text (its value's type and range, an
 * unknown key), then the strategy, then what depends on it (keys of the
 * other kind of generator, the segment rules, the layout checked with
 * timegen, the cosid80 and uncertainty rules).  The texts are those users
 * have always seen; sql/generator.sql and sql/segment.sql pin them.  One
 * function per concern: read_keys (with a reader per kind of key) fills one
 * DefKeys; resolve_strategy, check_segment, resolve_layout and
 * check_time_based give the keys their meaning.  The codec list is handed
 * back as its parsed node (cosid_codec_parse_node reads it when bound).
 *
 * Must not: include PostgreSQL headers, keep any state, or allocate except
 * through the caller's CosidAlloc; it asks the caller's hooks about time
 * strings and zone names.  The JSON reader is json.c's, so what it refuses
 * (not well formed, nested deeper than COSID_JSON_MAX_DEPTH, a key twice)
 * is refused here with the path "definition" (or the repeated key's path).
 */
#include "definition.h"
#include "json.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_STEP	100
#define DEFAULT_START	1
#define MAX_STEP		INT64_C(1000000000)
#define MAX_START		(INT64_C(1) << 62)
#define MAX_EPOCH_MS	(INT64_C(1) << 47)
#define MAX_DURATION_MS INT64_C(60000)

/* A definition's keys, in the order the unknown-key message lists them. */
typedef enum DefKey
{
	KEY_STRATEGY,
	KEY_LAYOUT,
	KEY_EPOCH,
	KEY_UNIT,
	KEY_TIME_BITS,
	KEY_NODE_BITS,
	KEY_SEQ_BITS,
	KEY_SEQ_RESET_THRESHOLD,
	KEY_CLOCK_REGRESSION,
	KEY_CODEC,
	KEY_INT,
	KEY_UNCERTAINTY_BITS,
	KEY_STEP,
	KEY_START,
	KEY_GROUP,
	KEY_ZONE,
	KEY_ADOPT_SEQUENCE,
	KEY_DISTRIBUTOR,
	KEY_RESERVE,
	KEY_COUNT
} DefKey;

static const char *const known_keys[KEY_COUNT + 1] = {
	"strategy", "layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "codec", "int", "uncertainty-bits",
	"step", "start", "group", "zone", "adopt-sequence", "distributor", "reserve",
	NULL
};

/* Whose key it is: every generator's, only time-based ones', only segment ones'. */
typedef enum DefKeyKind
{
	KIND_ANY,
	KIND_TIME,
	KIND_SEGMENT
} DefKeyKind;

static DefKeyKind
key_kind(DefKey k)
{
	switch (k)
	{
		case KEY_STRATEGY:
		case KEY_CODEC:
		case KEY_INT:
			return KIND_ANY;
		case KEY_STEP:
		case KEY_START:
		case KEY_GROUP:
		case KEY_ZONE:
		case KEY_ADOPT_SEQUENCE:
		case KEY_DISTRIBUTOR:
		case KEY_RESERVE:
			return KIND_SEGMENT;
		default:
			return KIND_TIME;
	}
}

typedef struct DefParse
{
	const CosidDefinitionHooks *hooks;
	const char *prefix;			/* put before every path, or NULL */
	char	   *path;
	size_t		pathlen;
	char	   *msg;
	size_t		msglen;
} DefParse;

/*
 * What the text says, key by key, before the strategy gives it a meaning:
 * the values that need no strategy go straight into def (over the
 * defaults), the rest wait here.
 */
typedef struct DefKeys
{
	CosidDefinition def;
	bool		given[KEY_COUNT];	/* the key is in the text */
	const char *first_of[KIND_SEGMENT + 1];	/* the first time-based and
											 * segment key written */
	const char *strategy;		/* as written, or NULL */
	const char *layout;			/* the preset's name as written, or NULL */
	CosidLayout overrides;		/* epoch, unit, bits and threshold written */
	const CosidJsonValue *codec;	/* the "codec" array, or NULL */
} DefKeys;

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
		else if ((size_t) n >= d->msglen)
			/* cut: drop a last character that lost some of its bytes */
			d->msg[cosid_utf8_trim(d->msg, d->msglen - 1)] = '\0';
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
		if (!cosid_word_eq(v->str, "FAIL"))
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

/* ---------- reading the keys ---------- */

/* A key every generator has: "strategy", "codec", "int". */
static bool
read_common_key(DefParse *d, DefKeys *k, DefKey key, const CosidJsonValue *v)
{
	switch (key)
	{
		case KEY_STRATEGY:
			return get_string(d, v, v->key,
							  "\"snowflake\", \"cosid80\" or \"segment\"",
							  &k->strategy);
		case KEY_CODEC:
			if (v->type != COSID_JSON_ARRAY)
				return fail(d, v->key, "expected a JSON array of codec items, found %s",
							type_name(v));
			k->codec = v;
			return true;
		case KEY_INT:
			return get_bool(d, v, v->key, &k->def.int32);
		default:
			return false;
	}
}

/* A word of a list ("day", "month", ...) as its value; -1 for another. */
static int
read_word(const char *s, const char *const *words, const int *values)
{
	for (int i = 0; words[i] != NULL; i++)
		if (cosid_word_eq(s, words[i]))
			return values[i];
	return -1;
}

/* A key of segment generators: "step" ... "reserve". */
static bool
read_segment_key(DefParse *d, DefKeys *k, DefKey key, const CosidJsonValue *v)
{
	static const char *const groups[] = {"day", "month", "year", NULL};
	static const int group_values[] = {
		COSID_GROUP_DAY, COSID_GROUP_MONTH, COSID_GROUP_YEAR
	};
	static const char *const distributors[] = {"local", "lease-store", NULL};
	static const int distributor_values[] = {
		COSID_DISTRIBUTOR_LOCAL, COSID_DISTRIBUTOR_LEASE_STORE
	};
	CosidDefinition *def = &k->def;
	const char *s = NULL;
	int64_t		n = 0;
	int			w;

	switch (key)
	{
		case KEY_STEP:
			return get_int(d, v, v->key, 1, MAX_STEP, &def->step);
		case KEY_START:
			return get_int(d, v, v->key, 0, MAX_START, &def->start);
		case KEY_GROUP:
			if (!get_string(d, v, v->key, "\"day\", \"month\" or \"year\"", &s))
				return false;
			if ((w = read_word(s, groups, group_values)) < 0)
				return fail(d, v->key, "expected \"day\", \"month\" or \"year\", found \"%s\"", s);
			def->group = (CosidGroup) w;
			return true;
		case KEY_ZONE:
			if (!get_string(d, v, v->key, "a time zone name such as \"Asia/Shanghai\"", &s))
				return false;
			if (v->str_len >= sizeof(def->zone) || !zone_exists(d, s))
				return fail(d, v->key, "unknown time zone \"%s\"", s);
			memcpy(def->zone, s, v->str_len + 1);
			return true;
		case KEY_ADOPT_SEQUENCE:
			return get_string(d, v, v->key, "the name of a sequence", &def->adopt);
		case KEY_DISTRIBUTOR:
			if (!get_string(d, v, v->key, "\"local\" or \"lease-store\"", &s))
				return false;
			if ((w = read_word(s, distributors, distributor_values)) < 0)
				return fail(d, v->key, "expected \"local\" or \"lease-store\", found \"%s\"", s);
			def->distributor = (CosidDistributor) w;
			return true;
		case KEY_RESERVE:
			if (!get_int(d, v, v->key, 1, COSID_MAX_RESERVE, &n))
				return false;
			def->reserve = (int) n;
			return true;
		default:
			return false;
	}
}

/*
 * A key of time-based generators: the layout's (kept in k->overrides until
 * the strategy picks the preset), the clock policy and uncertainty bits.
 */
static bool
read_time_key(DefParse *d, DefKeys *k, DefKey key, const CosidJsonValue *v)
{
	static const char *const units[] = {"ms", "millis", "s", "seconds", NULL};
	static const int unit_values[] = {1, 1, 1000, 1000};
	CosidLayout *o = &k->overrides;
	const char *s = NULL;
	int64_t		n = 0;
	bool		ok;

	switch (key)
	{
		case KEY_LAYOUT:
			return get_string(d, v, v->key, "a layout name", &k->layout);
		case KEY_EPOCH:
			return get_epoch(d, v, v->key, &o->epoch_ms);
		case KEY_UNIT:
			if (!get_string(d, v, v->key, "\"ms\" or \"s\"", &s))
				return false;
			if ((o->unit_ms = read_word(s, units, unit_values)) < 0)
				return fail(d, v->key, "expected \"ms\" or \"s\", found \"%s\"", s);
			return true;
		case KEY_TIME_BITS:
			ok = get_int(d, v, v->key, 1, 63, &n);
			o->time_bits = (int) n;
			return ok;
		case KEY_NODE_BITS:
			ok = get_int(d, v, v->key, 0, 31, &n);
			o->node_bits = (int) n;
			return ok;
		case KEY_SEQ_BITS:
			ok = get_int(d, v, v->key, 1, 62, &n);
			o->seq_bits = (int) n;
			return ok;
		case KEY_SEQ_RESET_THRESHOLD:
			return get_int(d, v, v->key, 0, INT64_MAX, &o->seq_reset_threshold);
		case KEY_CLOCK_REGRESSION:
			return parse_clock_regression(d, v, &k->def.policy);
		case KEY_UNCERTAINTY_BITS:
			ok = get_int(d, v, v->key, 0, 62, &n);
			k->def.uncertainty_bits = (int) n;
			return ok;
		default:
			return false;
	}
}

/*
 * Every key of the document, in the text's order: its value's type and
 * range, or an unknown key.  Notes which keys were given and the first one
 * of each kind of generator.
 */
static bool
read_keys(DefParse *d, const CosidJsonValue *root, DefKeys *k)
{
	for (const CosidJsonValue *v = root->first; v != NULL; v = v->next)
	{
		int			i = cosid_key_index(v->key, known_keys);
		DefKey		key;
		DefKeyKind	kind;
		bool		ok;

		if (i < 0)
			return fail_unknown_key(d, v->key);
		key = (DefKey) i;
		kind = key_kind(key);
		k->given[key] = true;
		if (kind != KIND_ANY && k->first_of[kind] == NULL)
			k->first_of[kind] = v->key;
		if (kind == KIND_ANY)
			ok = read_common_key(d, k, key, v);
		else if (kind == KIND_SEGMENT)
			ok = read_segment_key(d, k, key, v);
		else
			ok = read_time_key(d, k, key, v);
		if (!ok)
			return false;
	}
	return true;
}

/* ---------- what the keys mean together ---------- */

static bool
resolve_strategy(DefParse *d, DefKeys *k)
{
	static const char *const names[] = {"snowflake", "cosid80", "segment", NULL};
	static const int values[] = {
		COSID_STRATEGY_SNOWFLAKE, COSID_STRATEGY_COSID80, COSID_STRATEGY_SEGMENT
	};
	int			s = k->strategy == NULL ? COSID_STRATEGY_SNOWFLAKE :
		read_word(k->strategy, names, values);

	if (s < 0)
		return fail(d, "strategy",
					"expected \"snowflake\", \"cosid80\" or \"segment\", found \"%s\"",
					k->strategy);
	k->def.strategy = (CosidStrategy) s;
	return true;
}

/* The rules of a segment generator's keys. */
static bool
check_segment(DefParse *d, DefKeys *k)
{
	CosidDefinition *def = &k->def;
	bool		lease_store = def->distributor == COSID_DISTRIBUTOR_LEASE_STORE;

	if (k->first_of[KIND_TIME])
		return fail(d, k->first_of[KIND_TIME],
					"not a key of segment generators (it belongs to time-based ones)");
	if (def->adopt && def->group != COSID_GROUP_NONE)
		return fail(d, "adopt-sequence",
					"cannot be combined with \"group\": a periodic number carries its period");
	if (def->adopt && lease_store)
		return fail(d, "adopt-sequence",
					"cannot be combined with \"distributor\": \"lease-store\" (the lease store counts the numbers, not a sequence; start above the numbers in use instead)");
	if (k->given[KEY_RESERVE] && !lease_store)
		return fail(d, "reserve",
					"only with \"distributor\": \"lease-store\" (a local sequence is read when a segment is needed)");
	if (lease_store && !k->given[KEY_RESERVE])
		def->reserve = COSID_DEFAULT_RESERVE;
	if (def->group != COSID_GROUP_NONE &&
		def->start >= cosid_group_scale(def->group))
		return fail(d, "start", "expected at most %lld for group values",
					(long long) (cosid_group_scale(def->group) - 1));
	if (def->int32 && def->group != COSID_GROUP_NONE)
		return fail(d, "int",
					"cannot be combined with \"group\": periodic numbers do not fit int4");
	if (def->int32 && def->start > INT32_MAX)
		return fail(d, "start", "expected at most 2147483647 with \"int\": true");
	return true;
}

/* The preset (named, or the strategy's) with the layout keys written over it. */
static bool
resolve_layout(DefParse *d, DefKeys *k)
{
	CosidLayout *l = &k->def.layout;
	const CosidLayout *o = &k->overrides;
	CosidPreset preset;

	if (k->layout == NULL)
		preset = k->def.strategy == COSID_STRATEGY_COSID80 ?
			COSID_PRESET_COSID_80 : COSID_PRESET_SNOWFLAKE_MS;
	else if (!cosid_preset_find(k->layout, &preset))
		return fail(d, "layout",
					"expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, found \"%s\"",
					k->layout);

	*l = cosid_preset_layout(preset);
	if (k->given[KEY_EPOCH])
		l->epoch_ms = o->epoch_ms;
	if (k->given[KEY_UNIT])
		l->unit_ms = o->unit_ms;
	if (k->given[KEY_TIME_BITS])
		l->time_bits = o->time_bits;
	if (k->given[KEY_NODE_BITS])
		l->node_bits = o->node_bits;
	if (k->given[KEY_SEQ_BITS])
		l->seq_bits = o->seq_bits;
	l->seq_reset_threshold = k->given[KEY_SEQ_RESET_THRESHOLD] ?
		o->seq_reset_threshold : cosid_default_seq_reset_threshold(l->seq_bits);
	return true;
}

/* The rules of a time-based generator: its layout, cosid80's and the bits'. */
static bool
check_time_based(DefParse *d, DefKeys *k)
{
	CosidDefinition *def = &k->def;
	char		lmsg[256];
	const char *bad;
	int			total;

	if (k->first_of[KIND_SEGMENT])
		return fail(d, k->first_of[KIND_SEGMENT],
					"only a key of segment generators (strategy \"segment\")");
	if (!resolve_layout(d, k))
		return false;

	bad = cosid_layout_check(&def->layout,
							 def->strategy == COSID_STRATEGY_COSID80 ? 127 : 63,
							 lmsg, sizeof(lmsg));
	if (bad)
	{
		if (strcmp(bad, "layout") == 0 && def->strategy == COSID_STRATEGY_SNOWFLAKE)
			return fail(d, bad, "%s (an id longer than 63 bits needs strategy \"cosid80\")",
						lmsg);
		return fail(d, bad, "%s", lmsg);
	}

	total = cosid_layout_total_bits(&def->layout);
	if (def->strategy == COSID_STRATEGY_COSID80)
	{
		if (def->int32)
			return fail(d, "int",
						"not available for strategy \"cosid80\", whose ids are text");
		if (def->uncertainty_bits)
			return fail(d, "uncertainty-bits",
						"not available for strategy \"cosid80\", whose ids are text");
	}
	else if (total + def->uncertainty_bits > 63)
		return fail(d, "uncertainty-bits",
					"the layout has %d bits, so at most %d more fit in 63",
					total, 63 - total);
	return true;
}

/* ---------- the definition ---------- */

/* The defaults of every key. */
static void
init_keys(DefKeys *k)
{
	memset(k, 0, sizeof(*k));
	k->def.policy.borrow_ms = COSID_DEFAULT_BORROW_MS;
	k->def.policy.wait_ms = COSID_DEFAULT_WAIT_MS;
	k->def.step = DEFAULT_STEP;
	k->def.start = DEFAULT_START;
	k->def.group = COSID_GROUP_NONE;
	memcpy(k->def.zone, "UTC", 4);
}

bool
cosid_definition_parse(const char *json, size_t len,
					   const CosidDefinitionHooks *hooks, CosidAlloc alloc,
					   void *alloc_ctx, CosidDefinition *out, char *path,
					   size_t pathlen, char *msg, size_t msglen)
{
	DefParse	d = {hooks, NULL, path, pathlen, msg, msglen};
	DefKeys		k;
	const CosidJsonValue *root;

	if (path != NULL && pathlen > 0)
		path[0] = '\0';
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	init_keys(&k);

	root = cosid_json_parse(json, len, alloc, alloc_ctx, NULL, path, pathlen,
							msg, msglen);
	if (root == NULL)
	{
		fix_json_path(path, pathlen);
		return false;
	}
	if (root->type != COSID_JSON_OBJECT)
		return fail(&d, "definition",
					"expected a JSON object such as {\"strategy\": \"snowflake\"}");

	if (!read_keys(&d, root, &k) || !resolve_strategy(&d, &k))
		return false;
	if (k.def.strategy == COSID_STRATEGY_SEGMENT ? !check_segment(&d, &k) :
		!check_time_based(&d, &k))
		return false;
	/* the codec list's node: the caller parses it when it binds the list,
	 * after its own checks, so that its other errors come first */
	k.def.codec = k.codec;

	*out = k.def;
	return true;
}

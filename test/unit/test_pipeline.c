/*
 * test_pipeline.c - cmocka unit tests for the codec pipeline of src/core
 * (codec_run.c, codec_encode.c, codec_decode.c): a list's rules for its
 * target, encoding and decoding through every stage, the messages of text
 * that does not decode and of an id with no text, UTC arithmetic and the
 * hooks (a fixed-offset zone and a fake custom function written here).
 *
 * Every expected text below was computed independently (by hand or with a
 * few lines of Python's datetime), not by running this code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/codec.h"
#include "core/json.h"

/* ---------- helpers ---------- */

typedef struct Arena
{
	void	   *blocks[256];
	int			n;
} Arena;

static void *
arena_alloc(void *ctx, size_t size)
{
	Arena	   *a = ctx;
	void	   *p = malloc(size == 0 ? 1 : size);

	if (p == NULL || a->n >= 256)
	{
		free(p);
		return NULL;
	}
	a->blocks[a->n++] = p;
	return p;
}

static void
arena_free(Arena *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->blocks[i]);
	a->n = 0;
}

/* A zone of a fixed offset, through the hooks. */
typedef struct FixedZone
{
	int64_t		offset_s;
} FixedZone;

static const FixedZone plus8 = {8 * 3600};
static int	custom_calls;

static bool
fixed_to_local(void *ctx, const void *zone, int64_t ms, CosidTm *out)
{
	/* days since 1970 are small here: a plain walk */
	int64_t		local = ms + ((const FixedZone *) zone)->offset_s * 1000;
	int64_t		days = local / 86400000;
	int64_t		rem = local % 86400000;
	int			y = 1970;
	int			m = 1;

	(void) ctx;
	assert_true(local >= 0);
	while (days >= (cosid_days_in_month(y, 2) == 29 ? 366 : 365))
		days -= cosid_days_in_month(y++, 2) == 29 ? 366 : 365;
	while (days >= cosid_days_in_month(y, m))
		days -= cosid_days_in_month(y, m++);
	out->year = y;
	out->month = m;
	out->day = (int) days + 1;
	out->hour = (int) (rem / 3600000);
	out->minute = (int) (rem / 60000 % 60);
	out->second = (int) (rem / 1000 % 60);
	out->millis = (int) (rem % 1000);
	return true;
}

static int64_t
fixed_local_offset(void *ctx, const void *zone, int64_t local)
{
	(void) ctx;
	(void) local;
	return ((const FixedZone *) zone)->offset_s;
}

static void
fake_encode(void *ctx, int64_t id, const char **text, size_t *len)
{
	static char buf[32];

	(void) ctx;
	custom_calls++;
	*len = (size_t) snprintf(buf, sizeof(buf), "c%lld", (long long) id);
	*text = buf;
}

static int64_t
fake_decode(void *ctx, const char *text, size_t len)
{
	(void) ctx;
	custom_calls++;
	return len > 1 && text[0] == 'c' ? strtoll(text + 1, NULL, 10) : -1;
}

static const CosidCodecHooks hooks = {
	fixed_to_local, fixed_local_offset, fake_encode, fake_decode
};

/* The list prepared for target (NULL: ad hoc); every rule must pass. */
static void
plan_for(const char *json, const CosidCodecTarget *target, CosidCodecPlan *p,
		 Arena *a)
{
	CosidCodec	codec;
	CosidCodecTarget adhoc;
	char		path[128];
	char		msg[256];

	memset(&adhoc, 0, sizeof(adhoc));
	assert_true(cosid_codec_parse(json, strlen(json), "codec", arena_alloc, a,
								  &codec, path, sizeof(path), msg, sizeof(msg)));
	assert_int_equal(cosid_codec_prepare(p, &codec, target ? target : &adhoc, false,
										 "codec", path, sizeof(path), msg, sizeof(msg)),
					 COSID_CODEC_RULE_OK);
	for (int i = 0; i < p->codec.nitems; i++)
		assert_int_equal(cosid_codec_prepare_item(p, i, "codec", path, sizeof(path),
												  msg, sizeof(msg)),
						 COSID_CODEC_RULE_OK);
	p->hooks = &hooks;
	p->hooks_ctx = NULL;
}

/* The rule a list breaks: its path and message. */
static void
expect_rule(const char *json, const CosidCodecTarget *target, bool immutable,
			CosidCodecRule why, const char *want_path, const char *want_msg)
{
	Arena		a = {{0}, 0};
	CosidCodec	codec;
	CosidCodecPlan p;
	CosidCodecTarget adhoc;
	CosidCodecRule r;
	char		path[128];
	char		msg[256];

	memset(&adhoc, 0, sizeof(adhoc));
	assert_true(cosid_codec_parse(json, strlen(json), "codec", arena_alloc, &a,
								  &codec, path, sizeof(path), msg, sizeof(msg)));
	r = cosid_codec_prepare(&p, &codec, target ? target : &adhoc, immutable,
							"codec", path, sizeof(path), msg, sizeof(msg));
	for (int i = 0; r == COSID_CODEC_RULE_OK && i < p.codec.nitems; i++)
		r = cosid_codec_prepare_item(&p, i, "codec", path, sizeof(path), msg, sizeof(msg));
	assert_int_equal(r, why);
	assert_string_equal(path, want_path);
	assert_string_equal(msg, want_msg);
	arena_free(&a);
}

/* Encode id (a number); the text, NUL-terminated, in a static buffer. */
static const char *
encode(const CosidCodecPlan *p, int64_t v, int64_t now_ms)
{
	static char out[600];
	Arena		a = {{0}, 0};
	CosidId		id;
	CosidCodecError err;
	char	   *text;
	int64_t		n;

	memset(&id, 0, sizeof(id));
	id.id = v;
	n = cosid_codec_encode(p, &id, now_ms, arena_alloc, &a, &text, &err);
	if (n < 0)
		snprintf(out, sizeof(out), "ERROR %s | %s", err.message, err.detail);
	else
	{
		assert_true(n < (int64_t) sizeof(out));
		memcpy(out, text, (size_t) n);
		out[n] = '\0';
		assert_int_equal(a.n, 1);	/* allocated once */
	}
	arena_free(&a);
	return out;
}

static int64_t
decode_ok(const CosidCodecPlan *p, const char *text)
{
	CosidId		id;
	CosidCodecError err;

	if (!cosid_codec_decode(p, text, strlen(text), &id, &err))
		fail_msg("\"%s\" does not decode: %s%s", text, err.message, err.detail);
	return id.id;
}

static void
expect_decode_error(const CosidCodecPlan *p, const char *text, size_t len,
					CosidDecodeResult result, int item, const char *detail)
{
	CosidId		id;
	CosidCodecError err;

	assert_false(cosid_codec_decode(p, text, len, &id, &err));
	assert_int_equal(err.result, result);
	assert_int_equal(err.item, item);
	assert_string_equal(err.message, "");
	assert_string_equal(err.detail, detail);
}

static CosidCodecTarget
snowflake_ms(void)
{
	CosidCodecTarget t;

	memset(&t, 0, sizeof(t));
	t.has_gen = t.time_based = true;
	t.layout = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	return t;
}

static CosidCodecTarget
segment(CosidGroup g)
{
	CosidCodecTarget t;

	memset(&t, 0, sizeof(t));
	t.has_gen = true;
	t.group = g;
	return t;
}

/* ---------- wrappers and decimal ---------- */

static void
test_wrappers(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;

	(void) state;
	plan_for("[{\"prefix\": \"ord_\"}, {\"suffix\": \"!\"}, {\"prefix\": \"X\"}]", NULL, &p, &a);
	/* fronts from the outermost (last) in, backs from the innermost out */
	assert_string_equal(encode(&p, 9176500767786, 0), "Xord_9176500767786!");
	assert_int_equal(decode_ok(&p, "Xord_9176500767786!"), 9176500767786);
	assert_int_equal(decode_ok(&p, "Xord_0!"), 0);
	/* the outermost wrapper is checked first */
	expect_decode_error(&p, "ord_1!", 6, COSID_DECODE_SYNTAX, 2,
						"the text does not start with \"X\"");
	expect_decode_error(&p, "Xord_1", 6, COSID_DECODE_SYNTAX, 1,
						"the text does not end with \"!\"");
	expect_decode_error(&p, "Xord!", 5, COSID_DECODE_SYNTAX, 0,
						"the text does not start with \"ord_\"");
	/* the number: digits only, no sign, at most INT64_MAX ad hoc */
	expect_decode_error(&p, "Xord_-1!", 8, COSID_DECODE_SYNTAX, -1,
						"Expected the decimal digits of an id.");
	expect_decode_error(&p, "Xord_!", 6, COSID_DECODE_SYNTAX, -1,
						"Expected the decimal digits of an id.");
	expect_decode_error(&p, "Xord_9223372036854775808!", 25, COSID_DECODE_RANGE, -1,
						"The number is larger than the generator's ids.");
	/* syntax is checked past a number too large */
	expect_decode_error(&p, "Xord_99999999999999999999x!", 27, COSID_DECODE_SYNTAX, -1,
						"Expected the decimal digits of an id.");
	assert_int_equal(decode_ok(&p, "Xord_9223372036854775807!"), INT64_MAX);
	/* a negative id has decimal text, which no decoder takes (no sign) */
	assert_string_equal(encode(&p, -5, 0), "Xord_-5!");
	/* a NUL ends the text, as a C string did */
	{
		CosidId		id;
		CosidCodecError err;

		assert_true(cosid_codec_decode(&p, "Xord_12!\0tail", 13, &id, &err));
		assert_int_equal(id.id, 12);
	}
	arena_free(&a);

	/* no list at all: decimal */
	plan_for("[]", NULL, &p, &a);
	assert_string_equal(encode(&p, INT64_MIN, 0), "-9223372036854775808");
	assert_int_equal(decode_ok(&p, "42"), 42);
	arena_free(&a);
}

/* A generator's ids: at most its layout's bits. */
static void
test_decimal_generator(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;
	CosidCodecTarget t = snowflake_ms();

	(void) state;
	t.layout = cosid_preset_layout(COSID_PRESET_JS_SAFE_MS);	/* 53 bits */
	plan_for("[{\"prefix\": \"J\"}]", &t, &p, &a);
	assert_int_equal(p.max_id, (UINT64_C(1) << 53) - 1);
	assert_int_equal(decode_ok(&p, "J9007199254740991"), INT64_C(9007199254740991));
	expect_decode_error(&p, "J9007199254740992", 17, COSID_DECODE_RANGE, -1,
						"The number is larger than the generator's ids.");
	arena_free(&a);
}

/* ---------- converters ---------- */

static void
test_radix_stage(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;
	CosidId		id;
	CosidCodecError err;
	char	   *text;

	(void) state;
	plan_for("[{\"radix\": {\"radix\": 36, \"width\": 3}}, {\"prefix\": \"R\"}]", NULL, &p, &a);
	assert_string_equal(encode(&p, 46655, 0), "RZZZ");	/* 36^3 - 1 */
	assert_string_equal(encode(&p, 46656, 0),
						"ERROR id 46656 does not fit in 3 base-36 digits | ");
	assert_int_equal(decode_ok(&p, "RZZZ"), 46655);
	memset(&id, 0, sizeof(id));
	id.id = -1;
	assert_true(cosid_codec_encode(&p, &id, 0, arena_alloc, &a, &text, &err) < 0);
	assert_int_equal(err.result, COSID_DECODE_RANGE);
	arena_free(&a);

	/* just a radix: the whole text first, a NUL then goes the general way */
	plan_for("[{\"radix\": 10}]", NULL, &p, &a);
	assert_int_equal(decode_ok(&p, "123"), 123);
	assert_true(cosid_codec_decode(&p, "1\0002", 3, &id, &err));
	assert_int_equal(id.id, 1);
	arena_free(&a);
}

static void
test_grouped_stage(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;
	CosidCodecTarget t = segment(COSID_GROUP_DAY);

	(void) state;
	plan_for("[{\"grouped\": {}}]", &t, &p, &a);
	assert_string_equal(encode(&p, INT64_C(202601020000000042), 0), "20260102-42");
	assert_int_equal(decode_ok(&p, "20260102-42"), INT64_C(202601020000000042));
	assert_string_equal(encode(&p, 5, 0), "ERROR id 5 does not hold a day period | ");
	expect_decode_error(&p, "20260231-1", 10, COSID_DECODE_SYNTAX, 0,
						"the period 20260231 is not a date: day 31 is out of range for February 2026 (1 to 28)");
	expect_decode_error(&p, "2026010-1", 9, COSID_DECODE_SYNTAX, 0,
						"expected the period as yyyyMMdd, then \"-\"");
	expect_decode_error(&p, "20260102-x", 10, COSID_DECODE_SYNTAX, 0,
						"expected the value's decimal digits");
	expect_decode_error(&p, "20260102-10000000000", 20, COSID_DECODE_RANGE, 0,
						"the value does not fit its period");
	arena_free(&a);

	/* the generator's group wins over the list's; a year at its width */
	t = segment(COSID_GROUP_YEAR);
	plan_for("[{\"grouped\": {\"group\": \"day\", \"delimiter\": \"/\", "
			 "\"value\": {\"radix\": {\"radix\": 10, \"width\": 6, \"pad-start\": true}}}}]",
			 &t, &p, &a);
	assert_int_equal(p.codec.items[0].group, COSID_GROUP_YEAR);
	assert_string_equal(encode(&p, INT64_C(200000000000042), 0), "0002/000042");
	assert_int_equal(decode_ok(&p, "0002/000042"), INT64_C(200000000000042));
	assert_string_equal(encode(&p, INT64_C(200001000000000), 0),
						"ERROR value 1000000000 does not fit in 6 base-10 digits | ");
	arena_free(&a);
}

static void
test_friendly_stage(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;
	CosidCodecTarget t = snowflake_ms();
	/* time 1000 (ms after 2019-12-24T16:00Z), node 3, sequence 17 */
	const int64_t id = INT64_C(4194316305);

	(void) state;
	/* ad hoc, UTC by arithmetic (no zone bound) */
	plan_for("[{\"friendly\": {}}]", NULL, &p, &a);
	assert_null(p.zones[0]);
	assert_string_equal(encode(&p, id, 0), "20191224160001000-0003-0017");
	assert_int_equal(decode_ok(&p, "20191224160001000-0003-0017"), id);
	assert_string_equal(encode(&p, -1, 0),
						"ERROR id -1 is out of range for layout SNOWFLAKE_MS | Its ids are from 0 to 2^63 - 1.");
	expect_decode_error(&p, "20190230160001000-0003-0017", 27, COSID_DECODE_SYNTAX, 0,
						"day 30 is out of range for February 2019 (1 to 28)");
	/* before the epoch: outside the layout's range */
	expect_decode_error(&p, "20191224155959999-0003-0017", 27, COSID_DECODE_RANGE, 0,
						"the time is outside the layout's range");
	arena_free(&a);

	/* a generator's, in a zone of the hooks (+08:00) */
	plan_for("[{\"friendly\": {\"zone\": \"Asia/Shanghai\"}}]", &t, &p, &a);
	p.zones[0] = &plus8;
	assert_string_equal(encode(&p, id, 0), "20191225000001000-0003-0017");
	assert_int_equal(decode_ok(&p, "20191225000001000-0003-0017"), id);
	assert_string_equal(encode(&p, INT64_MIN, 0),
						"ERROR id -9223372036854775808 is out of range for the generator's layout | "
						"Its ids are from 0 to 2^63 - 1.");
	arena_free(&a);
}

static void
test_custom_stage(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;

	(void) state;
	plan_for("[{\"custom\": {\"encode\": \"f(bigint)\", \"decode\": \"g(text)\"}}, "
			 "{\"suffix\": \"#\"}]", NULL, &p, &a);
	custom_calls = 0;
	assert_string_equal(encode(&p, -42, 0), "c-42#");
	assert_int_equal(decode_ok(&p, "c-42#"), -42);
	/* the function gets what the wrappers leave */
	assert_int_equal(decode_ok(&p, "x#"), -1);
	assert_int_equal(custom_calls, 3);
	arena_free(&a);
}

/* ---------- date prefixes and time ---------- */

static void
test_date_prefix_stage(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;
	CosidCodecTarget t = snowflake_ms();

	(void) state;
	/* NOW, ad hoc: shown, never checked */
	plan_for("[{\"date-prefix\": {\"pattern\": \"yyyy-MM-dd HH:mm:ss.SSS\", \"delimiter\": \"|\"}}]",
			 NULL, &p, &a);
	assert_int_equal(p.codec.items[0].source, COSID_SOURCE_NOW);
	assert_true(cosid_codec_uses_now(&p));
	assert_string_equal(encode(&p, 7, 0), "1970-01-01 00:00:00.000|7");
	assert_string_equal(encode(&p, 7, -1), "1969-12-31 23:59:59.999|7");
	assert_string_equal(encode(&p, 7, INT64_C(253402300799999)), "9999-12-31 23:59:59.999|7");
	assert_string_equal(encode(&p, 7, INT64_C(253402300800000)),
						"ERROR time of the id is out of range for its text form | Text forms show years 1 to 9999.");
	assert_string_equal(encode(&p, 7, -INT64_C(62135596800000)), "0001-01-01 00:00:00.000|7");
	assert_string_equal(encode(&p, 7, -INT64_C(62135596800001)),
						"ERROR time of the id is out of range for its text form | Text forms show years 1 to 9999.");
	assert_int_equal(decode_ok(&p, "2000-02-29 23:59:59.999|7"), 7);
	expect_decode_error(&p, "2000-02-29|7", 12, COSID_DECODE_SYNTAX, 0,
						"expected a date of the form yyyy-MM-dd HH:mm:ss.SSS first");
	expect_decode_error(&p, "2000-02-29 23:59:59.999-7", 25, COSID_DECODE_SYNTAX, 0,
						"expected \"|\" after the date");
	arena_free(&a);

	/* a generator's: the id's time, by default, and checked */
	plan_for("[{\"radix\": 62}, {\"date-prefix\": {\"pattern\": \"yyMMdd\", \"delimiter\": \"-\"}}]",
			 &t, &p, &a);
	assert_int_equal(p.codec.items[1].source, COSID_SOURCE_ID_TIME);
	assert_false(cosid_codec_uses_now(&p));
	assert_string_equal(encode(&p, INT64_C(4194316305), 0), "191224-4ZqvGz");
	assert_int_equal(decode_ok(&p, "191224-4ZqvGz"), INT64_C(4194316305));
	expect_decode_error(&p, "200101-4ZqvGz", 13, COSID_DECODE_SYNTAX, 1,
						"the date 200101 is not the id's time (191224)");
	arena_free(&a);
}

/* ---------- the rules ---------- */

static void
test_rules(void **state)
{
	Arena		a = {{0}, 0};
	CosidCodecPlan p;
	CosidCodecTarget t = snowflake_ms();
	CosidCodecTarget seg = segment(COSID_GROUP_NONE);
	CosidCodecTarget c80;

	(void) state;
	expect_rule("[{\"radix\": 62}, {\"suffix\": \"x\"}]", NULL, false, COSID_CODEC_RULE_OK, "", "");
	expect_rule("[{\"friendly\": {}}]", &seg, false, COSID_CODEC_RULE_BROKEN, "codec[0].friendly",
				"needs a time-based generator; a segment number has no time, node or sequence");
	expect_rule("[{\"date-prefix\": {\"source\": \"ID_TIME\"}}]", &seg, false,
				COSID_CODEC_RULE_BROKEN, "codec[0].date-prefix.source",
				"\"ID_TIME\" needs a time-based generator; a segment number has no time");
	expect_rule("[{\"grouped\": {}}]", &seg, false, COSID_CODEC_RULE_BROKEN, "codec[0].grouped",
				"only for a segment generator with a \"group\"");
	expect_rule("[{\"grouped\": {}}]", &t, false, COSID_CODEC_RULE_BROKEN, "codec[0].grouped",
				"only for a segment generator with a \"group\"");
	expect_rule("[{\"parts-radix\": {\"radix\": 62}}]", &t, false, COSID_CODEC_RULE_BROKEN,
				"codec[0].parts-radix", "only for a generator of strategy \"cosid80\"");
	expect_rule("[{\"friendly\": {\"layout\": \"COSID_80\"}}]", NULL, false, COSID_CODEC_RULE_BROKEN,
				"codec[0].friendly.layout", "COSID_80 ids do not fit a bigint");
	expect_rule("[{\"friendly\": {\"layout\": \"JS_SAFE_S\"}}]", &t, false, COSID_CODEC_RULE_BROKEN,
				"codec[0].friendly.layout", "a generator's codec uses the generator's layout");
	t.uncertainty_bits = 2;
	expect_rule("[{\"friendly\": {}}]", &t, false, COSID_CODEC_RULE_BROKEN, "codec[0].friendly",
				"not available with uncertainty-bits, whose random bits it would drop");
	expect_rule("[{\"date-prefix\": {\"source\": \"id_time\"}}]", NULL, false, COSID_CODEC_RULE_BROKEN,
				"codec[0].date-prefix.source",
				"\"ID_TIME\" needs a time-based generator: use cosid_encode(name, id)");

	/* cosid80: radix and friendly mean the parts forms; custom is refused */
	memset(&c80, 0, sizeof(c80));
	c80.has_gen = c80.time_based = c80.wide = true;
	c80.layout = cosid_preset_layout(COSID_PRESET_COSID_80);
	plan_for("[{\"radix\": 62}]", &c80, &p, &a);
	assert_int_equal(p.codec.items[0].kind, COSID_CODEC_PARTS_RADIX);
	arena_free(&a);
	plan_for("[{\"friendly\": {}}]", &c80, &p, &a);
	assert_int_equal(p.codec.items[0].kind, COSID_CODEC_PARTS_FRIENDLY);
	arena_free(&a);
	expect_rule("[{\"custom\": {\"encode\": \"f(bigint)\", \"decode\": \"g(text)\"}}]", &c80, false,
				COSID_CODEC_RULE_BROKEN, "codec[0].custom",
				"not available for strategy \"cosid80\", whose ids do not fit a bigint");

	/* immutable: the first impure item, in list order */
	expect_rule("[{\"friendly\": {\"zone\": \"uTc\"}}, {\"suffix\": \"x\"}]", NULL, true,
				COSID_CODEC_RULE_OK, "", "");
	expect_rule("[{\"friendly\": {\"zone\": \"Etc/UTC\"}}]", NULL, true, COSID_CODEC_RULE_IMPURE,
				"codec[0].friendly.zone",
				"friendly in time zone \"Etc/UTC\" depends on that zone's rules, which time zone data "
				"updates change; only UTC (the default) is fixed");
	expect_rule("[{\"radix\": 10}, {\"date-prefix\": {}}, {\"prefix\": \"p\"}]", NULL, true,
				COSID_CODEC_RULE_IMPURE, "codec[1].date-prefix",
				"date-prefix depends on the clock: it shows the date of \"NOW\" (the default without a generator)");
	expect_rule("[{\"date-prefix\": {\"source\": \"ID_TIME\"}}]", NULL, true, COSID_CODEC_RULE_IMPURE,
				"codec[0].date-prefix.source",
				"date-prefix of source \"ID_TIME\" depends on a generator's layout, which cosid_alter can "
				"change; an immutable list names no generator");
	expect_rule("[{\"custom\": {\"encode\": \"f(bigint)\", \"decode\": \"g(text)\"}}]", NULL, true,
				COSID_CODEC_RULE_IMPURE, "codec[0].custom",
				"custom depends on the functions its names find through the search_path when the list "
				"is bound; call an IMMUTABLE function directly in the expression instead");
}

/* ---------- parsing from a node ---------- */

static void
test_parse_node(void **state)
{
	static const char json[] = "{\"codec\": [{\"prefix\": \"a\"}, {\"date-prefix\": {}}], \"x\": 1}";
	Arena		a = {{0}, 0};
	CosidJsonValue *root;
	CosidCodec	codec;
	char		path[128];
	char		msg[256];

	(void) state;
	root = cosid_json_parse(json, strlen(json), arena_alloc, &a, NULL, path, sizeof(path),
							msg, sizeof(msg));
	assert_non_null(root);
	assert_true(cosid_codec_parse_node(root->first, "codec", arena_alloc, &a, &codec,
									   path, sizeof(path), msg, sizeof(msg)));
	assert_int_equal(codec.nitems, 2);
	assert_string_equal(codec.items[0].text, "a");
	assert_string_equal(codec.items[1].pattern, "yyyyMMdd");
	/* strings copied out of the node's memory */
	assert_true(cosid_codec_copy_strings(&codec, arena_alloc, &a));
	assert_ptr_not_equal(codec.items[0].text, root->first->first->first->str);
	assert_string_equal(codec.items[0].text, "a");
	/* not an array */
	assert_false(cosid_codec_parse_node(root->first->next, "codec", arena_alloc, &a, &codec,
										path, sizeof(path), msg, sizeof(msg)));
	assert_string_equal(path, "codec");
	assert_string_equal(msg, "expected an array of codec items");
	arena_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrappers),
		cmocka_unit_test(test_decimal_generator),
		cmocka_unit_test(test_radix_stage),
		cmocka_unit_test(test_grouped_stage),
		cmocka_unit_test(test_friendly_stage),
		cmocka_unit_test(test_custom_stage),
		cmocka_unit_test(test_date_prefix_stage),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_parse_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

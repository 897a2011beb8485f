/*
 * test_definition.c - cmocka unit tests for src/core/definition.c (and the
 * end offsets json.c gives it).
 *
 * Owns: every rule of a generator definition, good and bad, with the exact
 * path and message users see.  The cases of sql/generator.sql and
 * sql/segment.sql that concern definitions are here too, written as the
 * PostgreSQL side passes them (JsonbToCString: keys in jsonb's order, i.e.
 * shorter keys first, then bytewise); their texts are copied from
 * expected/generator.out and expected/segment.out, not from this code.
 * Must not: depend on PostgreSQL; the hooks below stand in for
 * timestamptz_in and pg_tzset.
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
#include "core/definition.h"
#include "core/json.h"
#include "core/text.h"

#define BUF 1024

/* ---------- an arena and the hooks ---------- */

typedef struct Arena
{
	void	   *blocks[1024];
	int			n;
	int			fail_after;		/* -1: never fail */
	int			calls;
} Arena;

static void *
arena_alloc(void *ctx, size_t size)
{
	Arena	   *a = ctx;
	void	   *p;

	a->calls++;
	if (a->fail_after >= 0 && a->calls > a->fail_after)
		return NULL;
	if (a->n >= (int) (sizeof(a->blocks) / sizeof(a->blocks[0])))
		return NULL;
	p = malloc(size == 0 ? 1 : size);
	if (p != NULL)
	{
		/* garbage, so code that trusts fresh memory to be zero is caught */
		memset(p, 0xA5, size);
		a->blocks[a->n++] = p;
	}
	return p;
}

static void
arena_init(Arena *a, int fail_after)
{
	a->n = 0;
	a->fail_after = fail_after;
	a->calls = 0;
}

static void
arena_free(Arena *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->blocks[i]);
	a->n = 0;
	a->calls = 0;
}

/* What the hooks were asked. */
typedef struct HookLog
{
	int			time_calls;
	int			zone_calls;
	char		last[BUF];
} HookLog;

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;
	int64_t		doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Stands in for timestamptz_in: "YYYY-MM-DDTHH:MM:SSZ" only, all finite. */
static bool
test_parse_time(void *ctx, const char *text, int64_t *ms)
{
	HookLog    *log = ctx;
	int			y,
				mo,
				d,
				h,
				mi,
				s;
	int			n = -1;

	log->time_calls++;
	snprintf(log->last, sizeof(log->last), "%s", text);
	if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 ||
		n < 0 || text[n] != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 ||
		h > 23 || mi > 59 || s > 59)
		return false;
	*ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * INT64_C(60000) +
		s * INT64_C(1000);
	return true;
}

/* Stands in for pg_tzset: a few zones exist. */
static bool
test_zone_exists(void *ctx, const char *name)
{
	static const char *const zones[] = {"UTC", "Asia/Shanghai", "Asia/Tokyo",
	"Europe/Paris", NULL};
	HookLog    *log = ctx;

	log->zone_calls++;
	snprintf(log->last, sizeof(log->last), "%s", name);
	for (int i = 0; zones[i]; i++)
		if (strcmp(name, zones[i]) == 0)
			return true;
	/* a 63-byte name, the longest that may be asked about */
	return strlen(name) == 63 && strspn(name, "Z") == 63;
}

static HookLog hook_log;
static const CosidDefinitionHooks hooks = {&hook_log, test_parse_time,
test_zone_exists};

/* ---------- helpers ---------- */

/* The text of a parsed node: the JSON it was parsed from, as written. */
static const char *
node_text(const char *json, const CosidJsonValue *v)
{
	static char buf[512];
	size_t		n = v->end - v->offset;

	assert_true(n < sizeof(buf));
	memcpy(buf, json + v->offset, n);
	buf[n] = '\0';
	return buf;
}

static void
parse_ok(const char *json, CosidDefinition *out, Arena *a)
{
	char		path[BUF];
	char		msg[BUF];
	bool		ok;

	arena_init(a, -1);
	ok = cosid_definition_parse(json, strlen(json), &hooks, arena_alloc, a,
								out, path, sizeof(path), msg, sizeof(msg));
	if (!ok)
		fail_msg("%s: refused: %s: %s", json, path, msg);
	assert_string_equal(path, "");
	assert_string_equal(msg, "");
}

/* Refused with exactly this path and message; *out untouched. */
static void
expect_error_with(const CosidDefinitionHooks *h, const char *json,
				  const char *want_path, const char *want_msg)
{
	Arena		a;
	CosidDefinition out;
	CosidDefinition before;
	char		path[BUF];
	char		msg[BUF];
	bool		ok;

	memset(&out, 0x5A, sizeof(out));
	before = out;
	memset(path, 'x', sizeof(path));
	memset(msg, 'x', sizeof(msg));
	arena_init(&a, -1);
	ok = cosid_definition_parse(json, strlen(json), h, arena_alloc, &a, &out,
								path, sizeof(path), msg, sizeof(msg));
	arena_free(&a);
	if (ok)
		fail_msg("%s: accepted, expected %s: %s", json, want_path, want_msg);
	if (strcmp(path, want_path) != 0 || strcmp(msg, want_msg) != 0)
		fail_msg("%s:\n  got      %s: %s\n  expected %s: %s", json, path, msg,
				 want_path, want_msg);
	assert_memory_equal(&out, &before, sizeof(out));
}

static void
expect_error(const char *json, const char *want_path, const char *want_msg)
{
	expect_error_with(&hooks, json, want_path, want_msg);
}

/* Refused with this path and a message starting so. */
static void
expect_error_prefix(const char *json, const char *want_path,
					const char *want_msg_start)
{
	Arena		a;
	CosidDefinition out;
	char		path[BUF];
	char		msg[BUF];

	arena_init(&a, -1);
	assert_false(cosid_definition_parse(json, strlen(json), &hooks, arena_alloc,
										&a, &out, path, sizeof(path), msg,
										sizeof(msg)));
	arena_free(&a);
	assert_string_equal(path, want_path);
	if (strncmp(msg, want_msg_start, strlen(want_msg_start)) != 0)
		fail_msg("%s: message \"%s\" does not start with \"%s\"", json, msg,
				 want_msg_start);
}

static void
assert_layout(const CosidLayout *l, int64_t epoch, int64_t unit, int t,
			  int n, int s, int64_t threshold)
{
	assert_int_equal(l->epoch_ms, epoch);
	assert_int_equal(l->unit_ms, unit);
	assert_int_equal(l->time_bits, t);
	assert_int_equal(l->node_bits, n);
	assert_int_equal(l->seq_bits, s);
	assert_int_equal(l->seq_reset_threshold, threshold);
}

/* The segment defaults, as a time-based definition keeps them. */
static void
assert_segment_defaults(const CosidDefinition *d)
{
	assert_int_equal(d->step, 100);
	assert_int_equal(d->start, 1);
	assert_int_equal(d->group, COSID_GROUP_NONE);
	assert_string_equal(d->zone, "UTC");
	assert_null(d->adopt);
	assert_int_equal(d->distributor, COSID_DISTRIBUTOR_LOCAL);
	assert_int_equal(d->reserve, 0);
}

#define SNOWFLAKE_EPOCH INT64_C(1577203200000)
#define UNKNOWN_KEY "unknown key; expected one of strategy, layout, epoch, unit, " \
	"time-bits, node-bits, seq-bits, seq-reset-threshold, clock-regression, " \
	"codec, int, uncertainty-bits, step, start, group, zone, adopt-sequence, " \
	"distributor, reserve"
#define NOT_SEGMENT "not a key of segment generators (it belongs to time-based ones)"
#define ONLY_SEGMENT "only a key of segment generators (strategy \"segment\")"
#define DURATION "expected a duration of at most 60s such as \"5ms\" or \"1s\""
#define CLOCK_EXPECTED "expected \"FAIL\" or an object with \"borrow-up-to\" and \"wait-up-to\""
#define EPOCH_TEXT "expected Unix milliseconds or an ISO 8601 time such as \"2019-12-24T16:00:00Z\""
#define STRATEGY_EXPECTED "expected \"snowflake\", \"cosid80\" or \"segment\""

/* ---------- good definitions ---------- */

/* generator.sql: defaults, presets, overrides */
static void
test_defaults_and_presets(void **state)
{
	Arena		a;
	CosidDefinition d;

	(void) state;
	parse_ok("{\"strategy\": \"snowflake\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SNOWFLAKE);
	assert_true(COSID_TIME_BASED(d.strategy));
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 41, 10, 12, 2047);
	assert_int_equal(d.policy.borrow_ms, 5);
	assert_int_equal(d.policy.wait_ms, 1000);
	assert_false(d.int32);
	assert_int_equal(d.uncertainty_bits, 0);
	assert_null(d.codec);
	assert_segment_defaults(&d);
	arena_free(&a);

	parse_ok("{}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SNOWFLAKE);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 41, 10, 12, 2047);
	arena_free(&a);

	parse_ok(" \n{ }\t", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SNOWFLAKE);
	arena_free(&a);

	parse_ok("{\"layout\": \"SNOWFLAKE_S\"}", &d, &a);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1000, 31, 10, 22, 2097151);
	arena_free(&a);

	parse_ok("{\"strategy\": \"cosid80\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_COSID80);
	assert_true(COSID_TIME_BASED(d.strategy));
	assert_layout(&d.layout, 0, 1, 44, 20, 16, 32767);
	arena_free(&a);

	/* JS_SAFE layouts: 3 node bits pass here; cosid.machine_bits is the
	 * caller's check */
	parse_ok("{\"layout\": \"JS_SAFE_MS\"}", &d, &a);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 41, 3, 9, 255);
	arena_free(&a);
	parse_ok("{\"layout\": \"JS_SAFE_S\"}", &d, &a);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1000, 31, 3, 19, 262143);
	arena_free(&a);
	parse_ok("{\"node-bits\": 9}", &d, &a);
	assert_int_equal(d.layout.node_bits, 9);
	arena_free(&a);

	/* a cosid80 generator on a 63-bit preset, and COSID_80 named */
	parse_ok("{\"layout\": \"SNOWFLAKE_MS\", \"strategy\": \"cosid80\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_COSID80);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 41, 10, 12, 2047);
	arena_free(&a);
	parse_ok("{\"layout\": \"COSID_80\", \"strategy\": \"cosid80\"}", &d, &a);
	assert_layout(&d.layout, 0, 1, 44, 20, 16, 32767);
	arena_free(&a);
	parse_ok("{\"strategy\": \"cosid80\", \"uncertainty-bits\": 0}", &d, &a);
	arena_free(&a);
	parse_ok("{\"int\": false, \"strategy\": \"cosid80\"}", &d, &a);
	arena_free(&a);
}

/* generator.sql's 'custom', as JsonbToCString writes it */
static void
test_overrides(void **state)
{
	static const char json[] =
		"{\"unit\": \"s\", \"codec\": [{\"radix\": {\"radix\": 62}}], "
		"\"epoch\": \"2024-01-01T00:00:00Z\", \"seq-bits\": 20, \"node-bits\": 12, "
		"\"time-bits\": 30, \"clock-regression\": {\"wait-up-to\": \"500ms\", "
		"\"borrow-up-to\": \"2ms\"}, \"seq-reset-threshold\": 7}";
	Arena		a;
	Arena		ca;
	CosidDefinition d;
	CosidCodec	codec;
	char		path[BUF];
	char		msg[BUF];

	(void) state;
	memset(&hook_log, 0, sizeof(hook_log));
	parse_ok(json, &d, &a);
	assert_int_equal(hook_log.time_calls, 1);
	assert_string_equal(hook_log.last, "2024-01-01T00:00:00Z");
	assert_int_equal(d.strategy, COSID_STRATEGY_SNOWFLAKE);
	assert_layout(&d.layout, INT64_C(1704067200000), 1000, 30, 12, 20, 7);
	assert_int_equal(d.policy.borrow_ms, 2);
	assert_int_equal(d.policy.wait_ms, 500);
	assert_non_null(d.codec);
	assert_int_equal(d.codec->type, COSID_JSON_ARRAY);
	assert_string_equal(node_text(json, d.codec), "[{\"radix\": {\"radix\": 62}}]");

	/* the node is what cosid_codec_parse_node takes: no second parse */
	arena_init(&ca, -1);
	assert_true(cosid_codec_parse_node(d.codec, "codec", arena_alloc,
									   &ca, &codec, path, sizeof(path), msg,
									   sizeof(msg)));
	assert_int_equal(codec.nitems, 1);
	assert_int_equal(codec.items[0].kind, COSID_CODEC_RADIX);
	assert_int_equal(codec.items[0].radix.radix, 62);
	arena_free(&ca);
	arena_free(&a);

	parse_ok("{\"unit\": \"MILLIS\", \"epoch\": 1600000000000}", &d, &a);
	assert_layout(&d.layout, INT64_C(1600000000000), 1, 41, 10, 12, 2047);
	arena_free(&a);

	/* generator.sql's 'small' */
	parse_ok("{\"int\": true, \"unit\": \"s\", \"epoch\": 1700000000000, "
			 "\"seq-bits\": 5, \"node-bits\": 10, \"time-bits\": 16}", &d, &a);
	assert_true(d.int32);
	assert_layout(&d.layout, INT64_C(1700000000000), 1000, 16, 10, 5, 15);
	arena_free(&a);

	/* generator.sql's 'fuzzy': 59 bits and 4 more */
	parse_ok("{\"seq-bits\": 8, \"node-bits\": 10, \"time-bits\": 41, "
			 "\"uncertainty-bits\": 4}", &d, &a);
	assert_int_equal(d.uncertainty_bits, 4);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 41, 10, 8, 127);
	arena_free(&a);
	parse_ok("{\"uncertainty-bits\": 0}", &d, &a);
	assert_int_equal(d.uncertainty_bits, 0);
	arena_free(&a);

	/* generator.sql: an earlier epoch; the layout keeps SNOWFLAKE_S's bits */
	parse_ok("{\"epoch\": \"2000-01-01T00:00:00Z\", \"layout\": \"SNOWFLAKE_S\"}", &d, &a);
	assert_layout(&d.layout, INT64_C(946684800000), 1000, 31, 10, 22, 2097151);
	arena_free(&a);

	/* the tap tests' override */
	parse_ok("{\"seq-bits\": 11, \"strategy\": \"snowflake\", \"time-bits\": 42}", &d, &a);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 42, 10, 11, 1023);
	arena_free(&a);

	/* edges of each range */
	parse_ok("{\"epoch\": 0, \"seq-bits\": 62, \"node-bits\": 0, \"time-bits\": 1}", &d, &a);
	assert_layout(&d.layout, 0, 1, 1, 0, 62, (INT64_C(1) << 61) - 1);
	arena_free(&a);
	parse_ok("{\"epoch\": 140737488355328, \"seq-bits\": 1, \"node-bits\": 31, "
			 "\"time-bits\": 31}", &d, &a);
	assert_layout(&d.layout, INT64_C(140737488355328), 1, 31, 31, 1, 0);
	arena_free(&a);
	parse_ok("{\"seq-bits\": 62, \"node-bits\": 0, \"time-bits\": 1, "
			 "\"seq-reset-threshold\": 4611686018427387903}", &d, &a);
	assert_int_equal(d.layout.seq_reset_threshold, INT64_C(4611686018427387903));
	arena_free(&a);
	parse_ok("{\"seq-reset-threshold\": 0}", &d, &a);
	assert_int_equal(d.layout.seq_reset_threshold, 0);
	arena_free(&a);
	parse_ok("{\"seq-reset-threshold\": 4095}", &d, &a);
	assert_int_equal(d.layout.seq_reset_threshold, 4095);
	arena_free(&a);
	/* cosid80: up to 127 bits */
	parse_ok("{\"seq-bits\": 62, \"strategy\": \"cosid80\", \"node-bits\": 2, "
			 "\"time-bits\": 63}", &d, &a);
	assert_int_equal(cosid_layout_total_bits(&d.layout), 127);
	arena_free(&a);
	/* 52 bits and 11 uncertain: exactly 63 */
	parse_ok("{\"seq-bits\": 1, \"node-bits\": 10, \"time-bits\": 41, "
			 "\"uncertainty-bits\": 11}", &d, &a);
	assert_int_equal(d.uncertainty_bits, 11);
	arena_free(&a);
	parse_ok("{\"seq-bits\": 1, \"node-bits\": 0, \"time-bits\": 1, "
			 "\"uncertainty-bits\": 61}", &d, &a);
	assert_int_equal(d.uncertainty_bits, 61);
	arena_free(&a);
	/* -0 is the integer 0 */
	parse_ok("{\"node-bits\": -0}", &d, &a);
	assert_int_equal(d.layout.node_bits, 0);
	arena_free(&a);
}

/* Words are case-insensitive (ASCII); keys are not. */
static void
test_words_case_insensitive(void **state)
{
	Arena		a;
	CosidDefinition d;

	(void) state;
	parse_ok("{\"strategy\": \"SnowFlake\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SNOWFLAKE);
	arena_free(&a);
	parse_ok("{\"strategy\": \"COSID80\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_COSID80);
	arena_free(&a);
	parse_ok("{\"group\": \"DAY\", \"strategy\": \"Segment\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SEGMENT);
	assert_int_equal(d.group, COSID_GROUP_DAY);
	arena_free(&a);
	parse_ok("{\"group\": \"Month\", \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.group, COSID_GROUP_MONTH);
	arena_free(&a);
	parse_ok("{\"group\": \"yEAR\", \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.group, COSID_GROUP_YEAR);
	arena_free(&a);
	parse_ok("{\"unit\": \"S\"}", &d, &a);
	assert_int_equal(d.layout.unit_ms, 1000);
	arena_free(&a);
	parse_ok("{\"unit\": \"Seconds\"}", &d, &a);
	assert_int_equal(d.layout.unit_ms, 1000);
	arena_free(&a);
	parse_ok("{\"unit\": \"MS\", \"layout\": \"snowflake_s\"}", &d, &a);
	assert_layout(&d.layout, SNOWFLAKE_EPOCH, 1, 31, 10, 22, 2097151);
	arena_free(&a);
	parse_ok("{\"clock-regression\": \"fail\"}", &d, &a);
	assert_int_equal(d.policy.borrow_ms, 0);
	assert_int_equal(d.policy.wait_ms, 0);
	arena_free(&a);
	parse_ok("{\"clock-regression\": {\"wait-up-to\": \"2S\", \"borrow-up-to\": \"7Ms\"}}",
			 &d, &a);
	assert_int_equal(d.policy.borrow_ms, 7);
	assert_int_equal(d.policy.wait_ms, 2000);
	arena_free(&a);

	/* only ASCII letters fold: an accented a is no a, a dotless i no i */
	expect_error("{\"group\": \"d\xc3\xa1y\", \"strategy\": \"segment\"}", "group",
				 "expected \"day\", \"month\" or \"year\", found \"d\xc3\xa1y\"");
	expect_error("{\"strategy\": \"snowflake \"}", "strategy",
				 STRATEGY_EXPECTED ", found \"snowflake \"");
	expect_error("{\"unit\": \"m\xc4\xb1llis\"}", "unit",
				 "expected \"ms\" or \"s\", found \"m\xc4\xb1llis\"");
}

static void
test_clock_regression(void **state)
{
	Arena		a;
	CosidDefinition d;

	(void) state;
	parse_ok("{\"clock-regression\": \"FAIL\"}", &d, &a);
	assert_int_equal(d.policy.borrow_ms, 0);
	assert_int_equal(d.policy.wait_ms, 0);
	arena_free(&a);
	/* an empty object, or one key: the other keeps its default */
	parse_ok("{\"clock-regression\": {}}", &d, &a);
	assert_int_equal(d.policy.borrow_ms, 5);
	assert_int_equal(d.policy.wait_ms, 1000);
	arena_free(&a);
	parse_ok("{\"clock-regression\": {\"borrow-up-to\": \"1s\"}}", &d, &a);
	assert_int_equal(d.policy.borrow_ms, 1000);
	assert_int_equal(d.policy.wait_ms, 1000);
	arena_free(&a);
	parse_ok("{\"clock-regression\": {\"wait-up-to\": 0}}", &d, &a);
	assert_int_equal(d.policy.borrow_ms, 5);
	assert_int_equal(d.policy.wait_ms, 0);
	arena_free(&a);
	/* numbers are milliseconds, up to 60000; strings up to 60s */
	parse_ok("{\"clock-regression\": {\"wait-up-to\": 60000, \"borrow-up-to\": 0}}", &d, &a);
	assert_int_equal(d.policy.borrow_ms, 0);
	assert_int_equal(d.policy.wait_ms, 60000);
	arena_free(&a);
	parse_ok("{\"clock-regression\": {\"wait-up-to\": \"1m\", \"borrow-up-to\": \"1500us\"}}",
			 &d, &a);
	assert_int_equal(d.policy.borrow_ms, 2);
	assert_int_equal(d.policy.wait_ms, 60000);
	arena_free(&a);
	parse_ok("{\"clock-regression\": {\"wait-up-to\": \"60s\", \"borrow-up-to\": \"0h\"}}",
			 &d, &a);
	assert_int_equal(d.policy.borrow_ms, 0);
	assert_int_equal(d.policy.wait_ms, 60000);
	arena_free(&a);

	/* generator.sql */
	expect_error("{\"clock-regression\": \"WAIT\"}", "clock-regression", CLOCK_EXPECTED);
	expect_error("{\"clock-regression\": 5}", "clock-regression",
				 CLOCK_EXPECTED ", found a number");
	expect_error("{\"clock-regression\": {\"borrow\": \"5ms\"}}", "clock-regression.borrow",
				 "unknown key; expected \"borrow-up-to\" or \"wait-up-to\"");
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"2m\"}}",
				 "clock-regression.wait-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"borrow-up-to\": \"-5ms\"}}",
				 "clock-regression.borrow-up-to", DURATION);
	/* more */
	expect_error("{\"clock-regression\": null}", "clock-regression",
				 CLOCK_EXPECTED ", found null");
	expect_error("{\"clock-regression\": [\"FAIL\"]}", "clock-regression",
				 CLOCK_EXPECTED ", found an array");
	expect_error("{\"clock-regression\": true}", "clock-regression",
				 CLOCK_EXPECTED ", found a boolean");
	expect_error("{\"clock-regression\": \"\"}", "clock-regression", CLOCK_EXPECTED);
	expect_error("{\"clock-regression\": {\"wait-up-to\": 60001}}",
				 "clock-regression.wait-up-to", "expected an integer from 0 to 60000");
	expect_error("{\"clock-regression\": {\"wait-up-to\": -1}}",
				 "clock-regression.wait-up-to", "expected an integer from 0 to 60000");
	expect_error("{\"clock-regression\": {\"wait-up-to\": 5.0}}",
				 "clock-regression.wait-up-to", "expected an integer from 0 to 60000");
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"61s\"}}",
				 "clock-regression.wait-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"5\"}}",
				 "clock-regression.wait-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"5 ms\"}}",
				 "clock-regression.wait-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"wait-up-to\": true}}",
				 "clock-regression.wait-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"wait-up-to\": {}}}",
				 "clock-regression.wait-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"999999999999999999999ms\"}}",
				 "clock-regression.wait-up-to", DURATION);
	/* in key order: the first bad member */
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"1s\", \"borrow-up-to\": \"1h\"}}",
				 "clock-regression.borrow-up-to", DURATION);
	expect_error("{\"clock-regression\": {\"x\": 1, \"wait-up-to\": \"1h\"}}",
				 "clock-regression.x",
				 "unknown key; expected \"borrow-up-to\" or \"wait-up-to\"");
	/* segment generators have none */
	expect_error("{\"strategy\": \"segment\", \"clock-regression\": \"FAIL\"}",
				 "clock-regression", NOT_SEGMENT);
}

static void
test_epoch(void **state)
{
	Arena		a;
	CosidDefinition d;

	(void) state;
	memset(&hook_log, 0, sizeof(hook_log));
	parse_ok("{\"epoch\": \"2019-12-24T16:00:00Z\"}", &d, &a);
	assert_int_equal(d.layout.epoch_ms, SNOWFLAKE_EPOCH);
	assert_int_equal(hook_log.time_calls, 1);
	arena_free(&a);
	/* numbers never reach the hook */
	parse_ok("{\"epoch\": 1577203200000}", &d, &a);
	assert_int_equal(d.layout.epoch_ms, SNOWFLAKE_EPOCH);
	assert_int_equal(hook_log.time_calls, 1);
	arena_free(&a);

	/* generator.sql */
	expect_error("{\"epoch\": -1}", "epoch", "expected an integer from 0 to 140737488355328");
	expect_error("{\"epoch\": 1.5}", "epoch", "expected an integer from 0 to 140737488355328");
	expect_error("{\"epoch\": \"yesterday-ish\"}", "epoch", EPOCH_TEXT);
	expect_error("{\"epoch\": \"infinity\"}", "epoch", EPOCH_TEXT);
	expect_error("{\"unit\": \"s\", \"epoch\": 1577203200001}", "epoch",
				 "a layout in seconds needs an epoch on a whole second");
	/* more */
	expect_error("{\"epoch\": 140737488355329}", "epoch",
				 "expected an integer from 0 to 140737488355328");
	expect_error("{\"epoch\": 1e3}", "epoch",
				 "expected an integer from 0 to 140737488355328");
	expect_error("{\"epoch\": 1577203200000.0}", "epoch",
				 "expected an integer from 0 to 140737488355328");
	expect_error("{\"epoch\": null}", "epoch",
				 "expected an integer from 0 to 140737488355328");
	expect_error("{\"epoch\": [1]}", "epoch",
				 "expected an integer from 0 to 140737488355328");
	/* a time string is not range-checked as it is read, but the layout is */
	expect_error("{\"epoch\": \"1900-01-01T00:00:00Z\"}", "epoch",
				 "expected Unix milliseconds from 0 to 2^47 or an ISO 8601 time");
	expect_error("{\"unit\": \"s\", \"epoch\": \"1900-01-01T00:00:00Z\"}", "epoch",
				 "expected Unix milliseconds from 0 to 2^47 or an ISO 8601 time");
	/* a seconds preset on an epoch that is not a whole second */
	expect_error("{\"layout\": \"SNOWFLAKE_S\", \"epoch\": 999}", "epoch",
				 "a layout in seconds needs an epoch on a whole second");

	/* no hook: every time string is refused, numbers still work */
	{
		CosidDefinitionHooks none = {NULL, NULL, NULL};

		expect_error_with(&none, "{\"epoch\": \"2019-12-24T16:00:00Z\"}", "epoch", EPOCH_TEXT);
		expect_error_with(NULL, "{\"epoch\": \"2019-12-24T16:00:00Z\"}", "epoch", EPOCH_TEXT);
	}
}

static void
test_segment_good(void **state)
{
	static const char daily[] =
		"{\"step\": 3, \"codec\": [{\"grouped\": {\"value\": {\"radix\": {\"radix\": 10, "
		"\"width\": 6, \"pad-start\": true}}}}], \"group\": \"day\", \"strategy\": \"segment\"}";
	static const char coded[] =
		"{\"codec\": [{\"radix\": 62}, {\"date-prefix\": {\"pattern\": \"yyMMdd\", "
		"\"delimiter\": \"-\"}}, {\"prefix\": \"O\"}], \"strategy\": \"segment\"}";
	Arena		a;
	CosidDefinition d;

	(void) state;
	parse_ok("{\"step\": 10, \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SEGMENT);
	assert_false(COSID_TIME_BASED(d.strategy));
	assert_int_equal(d.step, 10);
	assert_int_equal(d.start, 1);
	assert_int_equal(d.group, COSID_GROUP_NONE);
	assert_string_equal(d.zone, "UTC");
	assert_null(d.adopt);
	assert_null(d.codec);
	/* no layout for a segment generator; the policy keeps its defaults */
	assert_layout(&d.layout, 0, 0, 0, 0, 0, 0);
	assert_int_equal(d.policy.borrow_ms, 5);
	assert_int_equal(d.policy.wait_ms, 1000);
	arena_free(&a);

	parse_ok("{\"start\": 1000, \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.start, 1000);
	assert_int_equal(d.step, 100);
	arena_free(&a);

	parse_ok("{\"step\": 5, \"strategy\": \"segment\", \"adopt-sequence\": \"orders_id_seq\"}",
			 &d, &a);
	assert_string_equal(d.adopt, "orders_id_seq");
	assert_int_equal(d.step, 5);
	arena_free(&a);
	/* any string is a name here; the caller looks it up */
	parse_ok("{\"strategy\": \"segment\", \"adopt-sequence\": \"\"}", &d, &a);
	assert_string_equal(d.adopt, "");
	arena_free(&a);
	parse_ok("{\"strategy\": \"segment\", \"adopt-sequence\": \"evil.\\\"b\\u00e9\\\"\"}",
			 &d, &a);
	assert_string_equal(d.adopt, "evil.\"b\xc3\xa9\"");
	arena_free(&a);

	/* segment.sql's 'daily' */
	parse_ok(daily, &d, &a);
	assert_int_equal(d.group, COSID_GROUP_DAY);
	assert_int_equal(d.step, 3);
	assert_string_equal(node_text(daily, d.codec), "[{\"grouped\": {\"value\": {\"radix\": {\"radix\": 10, "
						"\"width\": 6, \"pad-start\": true}}}}]");
	arena_free(&a);

	memset(&hook_log, 0, sizeof(hook_log));
	parse_ok("{\"zone\": \"Asia/Tokyo\", \"group\": \"month\", \"strategy\": \"segment\"}",
			 &d, &a);
	assert_int_equal(d.group, COSID_GROUP_MONTH);
	assert_string_equal(d.zone, "Asia/Tokyo");
	assert_int_equal(hook_log.zone_calls, 1);
	arena_free(&a);

	parse_ok("{\"zone\": \"Asia/Tokyo\", \"group\": \"year\", \"start\": 100, "
			 "\"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.group, COSID_GROUP_YEAR);
	assert_int_equal(d.start, 100);
	arena_free(&a);

	/* a zone without a group is kept too */
	parse_ok("{\"zone\": \"Europe/Paris\", \"strategy\": \"segment\"}", &d, &a);
	assert_string_equal(d.zone, "Europe/Paris");
	assert_int_equal(d.group, COSID_GROUP_NONE);
	arena_free(&a);
	/* the longest zone name that fits */
	parse_ok("{\"zone\": \"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ\", "
			 "\"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(strlen(d.zone), 63);
	arena_free(&a);

	/* segment.sql's 'small' */
	parse_ok("{\"int\": true, \"step\": 2, \"start\": 2147483645, \"strategy\": \"segment\"}",
			 &d, &a);
	assert_true(d.int32);
	assert_int_equal(d.start, 2147483645);
	arena_free(&a);
	parse_ok("{\"int\": true, \"start\": 2147483647, \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.start, 2147483647);
	arena_free(&a);

	/* segment.sql's 'coded' */
	parse_ok(coded, &d, &a);
	assert_string_equal(node_text(coded, d.codec), "[{\"radix\": 62}, {\"date-prefix\": {\"pattern\": \"yyMMdd\", "
						"\"delimiter\": \"-\"}}, {\"prefix\": \"O\"}]");
	arena_free(&a);

	/* edges */
	parse_ok("{\"step\": 1000000000, \"start\": 4611686018427387904, \"strategy\": \"segment\"}",
			 &d, &a);
	assert_int_equal(d.step, 1000000000);
	assert_int_equal(d.start, INT64_C(4611686018427387904));
	arena_free(&a);
	parse_ok("{\"step\": 1, \"start\": 0, \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.step, 1);
	assert_int_equal(d.start, 0);
	arena_free(&a);
	parse_ok("{\"group\": \"day\", \"start\": 9999999999, \"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.start, INT64_C(9999999999));
	arena_free(&a);
	parse_ok("{\"group\": \"month\", \"start\": 999999999999, \"strategy\": \"segment\"}", &d, &a);
	arena_free(&a);
	parse_ok("{\"group\": \"year\", \"start\": 99999999999999, \"strategy\": \"segment\"}", &d, &a);
	arena_free(&a);
	/* "int" belongs to both kinds; "uncertainty-bits" to time-based ones */
	parse_ok("{\"int\": false, \"group\": \"day\", \"strategy\": \"segment\"}", &d, &a);
	arena_free(&a);
	expect_error("{\"strategy\": \"segment\", \"uncertainty-bits\": 0}", "uncertainty-bits",
				 NOT_SEGMENT);
}

/*
 * "distributor": "lease-store" (segments shared across servers through the
 * lease store) and its "reserve"; which keys combine with them.  Written in
 * jsonb's key order (shorter keys first).
 */
#define ADOPT_DISTRIBUTOR "cannot be combined with \"distributor\": \"lease-store\" " \
	"(the lease store counts the numbers, not a sequence; start above the numbers in use instead)"
#define RESERVE_LOCAL "only with \"distributor\": \"lease-store\" " \
	"(a local sequence is read when a segment is needed)"

static void
test_segment_distributor(void **state)
{
	static const char combined[] =
		"{\"int\": true, \"step\": 50, \"start\": 1000, \"codec\": [{\"prefix\": \"S\"}], "
		"\"reserve\": 1000, \"strategy\": \"segment\", \"distributor\": \"lease-store\"}";
	Arena		a;
	CosidDefinition d;

	(void) state;
	/* the default: the local sequence, no reserve */
	parse_ok("{\"strategy\": \"segment\"}", &d, &a);
	assert_int_equal(d.distributor, COSID_DISTRIBUTOR_LOCAL);
	assert_int_equal(d.reserve, 0);
	arena_free(&a);
	parse_ok("{\"strategy\": \"segment\", \"distributor\": \"local\"}", &d, &a);
	assert_int_equal(d.distributor, COSID_DISTRIBUTOR_LOCAL);
	assert_int_equal(d.reserve, 0);
	arena_free(&a);
	/* local may adopt a sequence, as before */
	parse_ok("{\"strategy\": \"segment\", \"distributor\": \"local\", "
			 "\"adopt-sequence\": \"orders_id_seq\"}", &d, &a);
	assert_string_equal(d.adopt, "orders_id_seq");
	arena_free(&a);

	/* the lease store, with the default reserve */
	parse_ok("{\"strategy\": \"segment\", \"distributor\": \"lease-store\"}", &d, &a);
	assert_int_equal(d.strategy, COSID_STRATEGY_SEGMENT);
	assert_int_equal(d.distributor, COSID_DISTRIBUTOR_LEASE_STORE);
	assert_int_equal(d.reserve, COSID_DEFAULT_RESERVE);
	assert_int_equal(d.reserve, 10);
	assert_int_equal(d.step, 100);
	assert_int_equal(d.start, 1);
	assert_null(d.adopt);
	arena_free(&a);
	/* words are case-insensitive, as "group" and "unit" are */
	parse_ok("{\"strategy\": \"segment\", \"distributor\": \"Lease-Store\"}", &d, &a);
	assert_int_equal(d.distributor, COSID_DISTRIBUTOR_LEASE_STORE);
	arena_free(&a);
	parse_ok("{\"strategy\": \"segment\", \"distributor\": \"LOCAL\"}", &d, &a);
	assert_int_equal(d.distributor, COSID_DISTRIBUTOR_LOCAL);
	arena_free(&a);

	/* what combines with it: step, start, int, reserve, group, zone, codec */
	parse_ok(combined, &d, &a);
	assert_true(d.int32);
	assert_int_equal(d.step, 50);
	assert_int_equal(d.start, 1000);
	assert_int_equal(d.reserve, 1000);
	assert_string_equal(node_text(combined, d.codec), "[{\"prefix\": \"S\"}]");
	arena_free(&a);
	parse_ok("{\"reserve\": 1, \"strategy\": \"segment\", \"distributor\": \"lease-store\"}",
			 &d, &a);
	assert_int_equal(d.reserve, 1);
	arena_free(&a);
	parse_ok("{\"zone\": \"Asia/Tokyo\", \"group\": \"day\", \"start\": 9999999999, "
			 "\"strategy\": \"segment\", \"distributor\": \"lease-store\"}", &d, &a);
	assert_int_equal(d.group, COSID_GROUP_DAY);
	assert_string_equal(d.zone, "Asia/Tokyo");
	assert_int_equal(d.distributor, COSID_DISTRIBUTOR_LEASE_STORE);
	arena_free(&a);
	/* the "int" rules hold as for a local generator */
	expect_error("{\"int\": true, \"start\": 2147483648, \"strategy\": \"segment\", "
				 "\"distributor\": \"lease-store\"}", "start",
				 "expected at most 2147483647 with \"int\": true");
	expect_error("{\"int\": true, \"group\": \"day\", \"strategy\": \"segment\", "
				 "\"distributor\": \"lease-store\"}", "int",
				 "cannot be combined with \"group\": periodic numbers do not fit int4");

	/* what does not: an adopted sequence, a reserve without the store */
	expect_error("{\"strategy\": \"segment\", \"distributor\": \"lease-store\", "
				 "\"adopt-sequence\": \"orders_id_seq\"}", "adopt-sequence", ADOPT_DISTRIBUTOR);
	expect_error("{\"reserve\": 5, \"strategy\": \"segment\"}", "reserve", RESERVE_LOCAL);
	expect_error("{\"reserve\": 5, \"strategy\": \"segment\", \"distributor\": \"local\"}",
				 "reserve", RESERVE_LOCAL);
	/* group and adopt-sequence: the older rule comes first */
	expect_error("{\"group\": \"day\", \"strategy\": \"segment\", \"distributor\": \"lease-store\", "
				 "\"adopt-sequence\": \"s\"}", "adopt-sequence",
				 "cannot be combined with \"group\": a periodic number carries its period");

	/* values */
	expect_error("{\"strategy\": \"segment\", \"distributor\": \"redis\"}", "distributor",
				 "expected \"local\" or \"lease-store\", found \"redis\"");
	/* no connection string in a definition: the store is the server's setting */
	expect_error("{\"strategy\": \"segment\", \"distributor\": \"host=evil dbname=x\"}",
				 "distributor",
				 "expected \"local\" or \"lease-store\", found \"host=evil dbname=x\"");
	expect_error("{\"strategy\": \"segment\", \"distributor\": \"\"}", "distributor",
				 "expected \"local\" or \"lease-store\", found \"\"");
	expect_error("{\"strategy\": \"segment\", \"distributor\": true}", "distributor",
				 "expected \"local\" or \"lease-store\", found a boolean");
	expect_error("{\"strategy\": \"segment\", \"distributor\": null}", "distributor",
				 "expected \"local\" or \"lease-store\", found null");
	expect_error("{\"strategy\": \"segment\", \"distributor\": {\"lease-store\": 1}}",
				 "distributor", "expected \"local\" or \"lease-store\", found an object");
	expect_error("{\"reserve\": 0, \"strategy\": \"segment\", \"distributor\": \"lease-store\"}",
				 "reserve", "expected an integer from 1 to 1000");
	expect_error("{\"reserve\": 1001, \"strategy\": \"segment\", \"distributor\": \"lease-store\"}",
				 "reserve", "expected an integer from 1 to 1000");
	expect_error("{\"reserve\": 2.5, \"strategy\": \"segment\", \"distributor\": \"lease-store\"}",
				 "reserve", "expected an integer from 1 to 1000");
	expect_error("{\"reserve\": \"10\", \"strategy\": \"segment\", \"distributor\": \"lease-store\"}",
				 "reserve", "expected an integer from 1 to 1000");
	/* a bad value is reported before the strategy is known */
	expect_error("{\"reserve\": -1, \"strategy\": \"snowflake\"}", "reserve",
				 "expected an integer from 1 to 1000");

	/* segment keys only */
	expect_error("{\"strategy\": \"snowflake\", \"distributor\": \"lease-store\"}", "distributor",
				 ONLY_SEGMENT);
	expect_error("{\"distributor\": \"local\"}", "distributor", ONLY_SEGMENT);
	expect_error("{\"reserve\": 10, \"strategy\": \"cosid80\"}", "reserve", ONLY_SEGMENT);
	/* a time key on a shared segment generator */
	expect_error("{\"layout\": \"SNOWFLAKE_MS\", \"strategy\": \"segment\", "
				 "\"distributor\": \"lease-store\"}", "layout", NOT_SEGMENT);
}

static void
test_segment_bad(void **state)
{
	(void) state;
	/* segment.sql */
	expect_error("{\"strategy\": \"segment\", \"layout\": \"SNOWFLAKE_MS\"}", "layout",
				 NOT_SEGMENT);
	expect_error("{\"strategy\": \"segment\", \"clock-regression\": \"FAIL\"}",
				 "clock-regression", NOT_SEGMENT);
	expect_error("{\"step\": 10}", "step", ONLY_SEGMENT);
	expect_error("{\"step\": 0, \"strategy\": \"segment\"}", "step",
				 "expected an integer from 1 to 1000000000");
	expect_error("{\"start\": -1, \"strategy\": \"segment\"}", "start",
				 "expected an integer from 0 to 4611686018427387904");
	expect_error("{\"group\": \"week\", \"strategy\": \"segment\"}", "group",
				 "expected \"day\", \"month\" or \"year\", found \"week\"");
	expect_error("{\"zone\": \"Mars/Olympus\", \"group\": \"day\", \"strategy\": \"segment\"}",
				 "zone", "unknown time zone \"Mars/Olympus\"");
	expect_error("{\"group\": \"day\", \"start\": 10000000000, \"strategy\": \"segment\"}",
				 "start", "expected at most 9999999999 for group values");
	expect_error("{\"group\": \"day\", \"strategy\": \"segment\", \"adopt-sequence\": \"down\"}",
				 "adopt-sequence",
				 "cannot be combined with \"group\": a periodic number carries its period");
	expect_error("{\"int\": true, \"group\": \"day\", \"strategy\": \"segment\"}", "int",
				 "cannot be combined with \"group\": periodic numbers do not fit int4");
	/* segment.sql: altering 'seg' back to snowflake keeps its step */
	expect_error("{\"step\": 10, \"strategy\": \"snowflake\"}", "step", ONLY_SEGMENT);

	/* more */
	expect_error("{\"step\": 1000000001, \"strategy\": \"segment\"}", "step",
				 "expected an integer from 1 to 1000000000");
	expect_error("{\"step\": \"10\", \"strategy\": \"segment\"}", "step",
				 "expected an integer from 1 to 1000000000");
	expect_error("{\"step\": 10.0, \"strategy\": \"segment\"}", "step",
				 "expected an integer from 1 to 1000000000");
	expect_error("{\"step\": 1e2, \"strategy\": \"segment\"}", "step",
				 "expected an integer from 1 to 1000000000");
	expect_error("{\"start\": 4611686018427387905, \"strategy\": \"segment\"}", "start",
				 "expected an integer from 0 to 4611686018427387904");
	expect_error("{\"start\": 99999999999999999999, \"strategy\": \"segment\"}", "start",
				 "expected an integer from 0 to 4611686018427387904");
	expect_error("{\"group\": 1, \"strategy\": \"segment\"}", "group",
				 "expected \"day\", \"month\" or \"year\", found a number");
	expect_error("{\"group\": null, \"strategy\": \"segment\"}", "group",
				 "expected \"day\", \"month\" or \"year\", found null");
	expect_error("{\"group\": \"\", \"strategy\": \"segment\"}", "group",
				 "expected \"day\", \"month\" or \"year\", found \"\"");
	expect_error("{\"zone\": 9, \"strategy\": \"segment\"}", "zone",
				 "expected a time zone name such as \"Asia/Shanghai\", found a number");
	expect_error("{\"adopt-sequence\": 5, \"strategy\": \"segment\"}", "adopt-sequence",
				 "expected the name of a sequence, found a number");
	expect_error("{\"adopt-sequence\": null, \"strategy\": \"segment\"}", "adopt-sequence",
				 "expected the name of a sequence, found null");
	expect_error("{\"group\": \"month\", \"start\": 1000000000000, \"strategy\": \"segment\"}",
				 "start", "expected at most 999999999999 for group values");
	expect_error("{\"group\": \"year\", \"start\": 100000000000000, \"strategy\": \"segment\"}",
				 "start", "expected at most 99999999999999 for group values");
	expect_error("{\"int\": true, \"start\": 2147483648, \"strategy\": \"segment\"}", "start",
				 "expected at most 2147483647 with \"int\": true");

	/* zone names: too long never reaches the hook; unknown ones do */
	memset(&hook_log, 0, sizeof(hook_log));
	expect_error("{\"zone\": \"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ\", "
				 "\"strategy\": \"segment\"}", "zone",
				 "unknown time zone \"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ\"");
	assert_int_equal(hook_log.zone_calls, 0);
	expect_error("{\"zone\": \"\", \"strategy\": \"segment\"}", "zone",
				 "unknown time zone \"\"");
	assert_int_equal(hook_log.zone_calls, 1);
	expect_error("{\"zone\": \"utc\", \"strategy\": \"segment\"}", "zone",
				 "unknown time zone \"utc\"");
	{
		CosidDefinitionHooks none = {NULL, NULL, NULL};

		expect_error_with(&none, "{\"zone\": \"UTC\", \"strategy\": \"segment\"}", "zone",
						  "unknown time zone \"UTC\"");
	}

	/* the segment rules in their order */
	expect_error("{\"int\": true, \"group\": \"day\", \"start\": 10000000000, "
				 "\"strategy\": \"segment\", \"adopt-sequence\": \"s\"}",
				 "adopt-sequence",
				 "cannot be combined with \"group\": a periodic number carries its period");
	expect_error("{\"int\": true, \"group\": \"day\", \"start\": 10000000000, "
				 "\"strategy\": \"segment\"}",
				 "start", "expected at most 9999999999 for group values");
	expect_error("{\"unit\": \"s\", \"group\": \"day\", \"strategy\": \"segment\", "
				 "\"adopt-sequence\": \"s\"}", "unit", NOT_SEGMENT);
}

/* generator.sql: every other kind of bad definition */
static void
test_bad_definitions(void **state)
{
	(void) state;
	expect_error("[]", "definition",
				 "expected a JSON object such as {\"strategy\": \"snowflake\"}");
	expect_error("\"snowflake\"", "definition",
				 "expected a JSON object such as {\"strategy\": \"snowflake\"}");
	expect_error("1", "definition",
				 "expected a JSON object such as {\"strategy\": \"snowflake\"}");
	expect_error("null", "definition",
				 "expected a JSON object such as {\"strategy\": \"snowflake\"}");
	expect_error("{\"strategy\": \"snowflak\"}", "strategy",
				 STRATEGY_EXPECTED ", found \"snowflak\"");
	expect_error("{\"strategy\": 1}", "strategy", STRATEGY_EXPECTED ", found a number");
	expect_error("{\"strategy\": \"sequence\"}", "strategy",
				 STRATEGY_EXPECTED ", found \"sequence\"");
	expect_error("{\"strategy\": null}", "strategy", STRATEGY_EXPECTED ", found null");
	expect_error("{\"strategy\": false}", "strategy", STRATEGY_EXPECTED ", found a boolean");
	expect_error("{\"strategy\": [\"segment\"]}", "strategy",
				 STRATEGY_EXPECTED ", found an array");
	expect_error("{\"strategy\": {}}", "strategy", STRATEGY_EXPECTED ", found an object");
	expect_error("{\"layout\": \"SNOWFLAKE\"}", "layout",
				 "expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, "
				 "found \"SNOWFLAKE\"");
	expect_error("{\"layout\": 5}", "layout", "expected a layout name, found a number");
	expect_error("{\"layout\": \"COSID_80\"}", "layout",
				 "time-bits + node-bits + seq-bits is 80; at most 63 fit this strategy "
				 "(an id longer than 63 bits needs strategy \"cosid80\")");
	expect_error("{\"unit\": \"minutes\"}", "unit", "expected \"ms\" or \"s\", found \"minutes\"");
	expect_error("{\"unit\": 1000}", "unit", "expected \"ms\" or \"s\", found a number");
	expect_error("{\"time-bits\": 0}", "time-bits", "expected an integer from 1 to 63");
	expect_error("{\"time-bits\": 64}", "time-bits", "expected an integer from 1 to 63");
	expect_error("{\"time-bits\": \"41\"}", "time-bits", "expected an integer from 1 to 63");
	expect_error("{\"time-bits\": \"x\"}", "time-bits", "expected an integer from 1 to 63");
	expect_error("{\"time-bits\": 41.0}", "time-bits", "expected an integer from 1 to 63");
	expect_error("{\"time-bits\": true}", "time-bits", "expected an integer from 1 to 63");
	expect_error("{\"node-bits\": 32}", "node-bits", "expected an integer from 0 to 31");
	expect_error("{\"node-bits\": -1}", "node-bits", "expected an integer from 0 to 31");
	expect_error("{\"seq-bits\": 0}", "seq-bits", "expected an integer from 1 to 62");
	expect_error("{\"seq-bits\": 63}", "seq-bits", "expected an integer from 1 to 62");
	expect_error("{\"seq-bits\": 13}", "layout",
				 "time-bits + node-bits + seq-bits is 64; at most 63 fit this strategy "
				 "(an id longer than 63 bits needs strategy \"cosid80\")");
	expect_error("{\"seq-reset-threshold\": 4096}", "seq-reset-threshold",
				 "expected an integer from 0 to 4095 (the largest sequence)");
	expect_error("{\"seq-reset-threshold\": -1}", "seq-reset-threshold",
				 "expected an integer from 0 to 9223372036854775807");
	expect_error("{\"seq-reset-threshold\": 9223372036854775808}", "seq-reset-threshold",
				 "expected an integer from 0 to 9223372036854775807");
	expect_error("{\"codec\": {\"radix\": 62}}", "codec",
				 "expected a JSON array of codec items, found an object");
	expect_error("{\"codec\": \"radix\"}", "codec",
				 "expected a JSON array of codec items, found a string");
	expect_error("{\"codec\": null}", "codec",
				 "expected a JSON array of codec items, found null");
	expect_error("{\"int\": \"yes\"}", "int", "expected true or false, found a string");
	expect_error("{\"int\": 1}", "int", "expected true or false, found a number");
	expect_error("{\"int\": null}", "int", "expected true or false, found null");
	expect_error("{\"uncertainty-bits\": 1}", "uncertainty-bits",
				 "the layout has 63 bits, so at most 0 more fit in 63");
	expect_error("{\"uncertainty-bits\": 63}", "uncertainty-bits",
				 "expected an integer from 0 to 62");
	expect_error("{\"uncertainty-bits\": -1}", "uncertainty-bits",
				 "expected an integer from 0 to 62");
	expect_error("{\"seq-bits\": 8, \"node-bits\": 10, \"time-bits\": 41, "
				 "\"uncertainty-bits\": 5}", "uncertainty-bits",
				 "the layout has 59 bits, so at most 4 more fit in 63");
	expect_error("{\"int\": true, \"strategy\": \"cosid80\"}", "int",
				 "not available for strategy \"cosid80\", whose ids are text");
	expect_error("{\"strategy\": \"cosid80\", \"uncertainty-bits\": 4}", "uncertainty-bits",
				 "not available for strategy \"cosid80\", whose ids are text");
	expect_error("{\"Strategy\": \"snowflake\"}", "Strategy", UNKNOWN_KEY);
	expect_error("{\"\": 1}", "", UNKNOWN_KEY);
	expect_error("{\"name\": \"x\"}", "name", UNKNOWN_KEY);
	/* cosid80: the layout's limit is 127, without the cosid80 hint */
	expect_error("{\"seq-bits\": 62, \"strategy\": \"cosid80\", \"node-bits\": 3, "
				 "\"time-bits\": 63}", "layout",
				 "time-bits + node-bits + seq-bits is 128; at most 127 fit this strategy");
	/* timegen's checks in their order: unit, epoch, widths, total, threshold */
	expect_error("{\"unit\": \"s\", \"epoch\": 1, \"seq-bits\": 62, "
				 "\"time-bits\": 63, \"seq-reset-threshold\": -0}", "epoch",
				 "a layout in seconds needs an epoch on a whole second");
	expect_error("{\"seq-bits\": 62, \"time-bits\": 63, \"seq-reset-threshold\": 4096}",
				 "layout",
				 "time-bits + node-bits + seq-bits is 135; at most 63 fit this strategy "
				 "(an id longer than 63 bits needs strategy \"cosid80\")");
	expect_error("{\"seq-bits\": 3, \"seq-reset-threshold\": 8}", "seq-reset-threshold",
				 "expected an integer from 0 to 7 (the largest sequence)");
	/* a preset's threshold follows new seq-bits */
	expect_error("{\"seq-bits\": 2, \"layout\": \"SNOWFLAKE_S\", \"seq-reset-threshold\": 4}",
				 "seq-reset-threshold",
				 "expected an integer from 0 to 3 (the largest sequence)");
}

/*
 * Which error comes first: each key's own value in text order (unknown keys
 * too), then the strategy, then keys of the other kind (the first in text
 * order), then the rest.
 */
static void
test_precedence(void **state)
{
	(void) state;
	/* a bad value before a bad strategy, whatever the order */
	expect_error("{\"step\": 0, \"strategy\": \"bogus\"}", "step",
				 "expected an integer from 1 to 1000000000");
	expect_error("{\"strategy\": \"bogus\", \"step\": 0}", "step",
				 "expected an integer from 1 to 1000000000");
	/* a bad value before the exclusivity of keys */
	expect_error("{\"layout\": 5, \"strategy\": \"segment\"}", "layout",
				 "expected a layout name, found a number");
	expect_error("{\"zone\": \"Mars/Olympus\", \"layout\": \"SNOWFLAKE_MS\"}", "zone",
				 "unknown time zone \"Mars/Olympus\"");
	/* a bad strategy before the exclusivity of keys */
	expect_error("{\"step\": 1, \"unit\": \"s\", \"strategy\": \"bogus\"}", "strategy",
				 STRATEGY_EXPECTED ", found \"bogus\"");
	/* unknown keys in their place */
	expect_error("{\"int\": \"x\", \"zzz\": 1}", "int",
				 "expected true or false, found a string");
	expect_error("{\"zzz\": 1, \"int\": \"x\"}", "zzz", UNKNOWN_KEY);
	expect_error("{\"zzz\": 1, \"strategy\": \"bogus\"}", "zzz", UNKNOWN_KEY);
	/* the first time-based key (jsonb order: unit, layout) */
	expect_error("{\"unit\": \"s\", \"layout\": \"X\", \"strategy\": \"segment\"}", "unit",
				 NOT_SEGMENT);
	expect_error("{\"layout\": \"X\", \"unit\": \"s\", \"strategy\": \"segment\"}", "layout",
				 NOT_SEGMENT);
	/* the first segment key (jsonb order: step, zone) */
	expect_error("{\"step\": 1, \"zone\": \"UTC\"}", "step", ONLY_SEGMENT);
	expect_error("{\"zone\": \"UTC\", \"group\": \"day\"}", "zone", ONLY_SEGMENT);
	/* a segment key before the layout's own checks */
	expect_error("{\"step\": 1, \"layout\": \"NOPE\"}", "step", ONLY_SEGMENT);
	expect_error("{\"start\": 5, \"seq-bits\": 13}", "start", ONLY_SEGMENT);
	/* the preset before the layout, the layout before cosid80's rules */
	expect_error("{\"int\": true, \"layout\": \"NOPE\", \"strategy\": \"cosid80\"}", "layout",
				 "expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, "
				 "found \"NOPE\"");
	expect_error("{\"int\": true, \"seq-bits\": 0, \"strategy\": \"cosid80\"}", "seq-bits",
				 "expected an integer from 1 to 62");
	expect_error("{\"int\": true, \"seq-bits\": 60, \"strategy\": \"cosid80\", "
				 "\"uncertainty-bits\": 4}", "int",
				 "not available for strategy \"cosid80\", whose ids are text");
	/* the layout before uncertainty-bits */
	expect_error("{\"seq-bits\": 13, \"uncertainty-bits\": 4}", "layout",
				 "time-bits + node-bits + seq-bits is 64; at most 63 fit this strategy "
				 "(an id longer than 63 bits needs strategy \"cosid80\")");
	/* after a clock-regression object, paths are top-level again */
	expect_error("{\"clock-regression\": {\"wait-up-to\": \"1s\"}, \"seq-reset-threshold\": -1}",
				 "seq-reset-threshold", "expected an integer from 0 to 9223372036854775807");
	expect_error("{\"layout\": \"NOPE\", \"clock-regression\": {}}", "layout",
				 "expected SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80, "
				 "found \"NOPE\"");
	/* the codec's contents are not looked at here */
	{
		Arena		a;
		CosidDefinition d;

		parse_ok("{\"codec\": [1, \"x\", {\"nonsense\": []}]}", &d, &a);
		assert_string_equal(node_text("{\"codec\": [1, \"x\", {\"nonsense\": []}]}", d.codec),
							"[1, \"x\", {\"nonsense\": []}]");
		assert_int_equal(d.codec->count, 3);
		arena_free(&a);
		parse_ok("{\"codec\":[ ]}", &d, &a);
		assert_string_equal(node_text("{\"codec\":[ ]}", d.codec), "[ ]");
		assert_int_equal(d.codec->count, 0);
		arena_free(&a);
	}
}

/* {"codec": [[...]]} with the codec list nested depth arrays deep. */
static void
nested_codec(char *buf, size_t size, int depth)
{
	size_t		n = (size_t) snprintf(buf, size, "{\"codec\": ");

	assert_true(n + 2 * (size_t) depth + 2 <= size);
	for (int i = 0; i < depth; i++)
		buf[n++] = '[';
	for (int i = 0; i < depth; i++)
		buf[n++] = ']';
	buf[n++] = '}';
	buf[n] = '\0';
}

/* What the JSON reader refuses, and its paths. */
static void
test_json_errors(void **state)
{
	char		deep[200];

	(void) state;
	expect_error_prefix("", "definition", "invalid JSON at byte 0: ");
	expect_error_prefix("{", "definition", "invalid JSON at byte 1: ");
	expect_error_prefix("{\"step\": 01}", "definition", "invalid JSON at byte 9: ");
	expect_error_prefix("{\"step\": 1} x", "definition", "invalid JSON at byte 12: ");
	expect_error_prefix("{'step': 1}", "definition", "invalid JSON at byte 1: ");
	expect_error_prefix("{\"zone\": \"a\\u0000b\"}", "definition", "invalid JSON at byte 11: ");
	/* a key twice: the repeated key's path */
	expect_error("{\"step\": 1, \"step\": 2}", "step", "duplicate key at byte 12");
	expect_error("{\"clock-regression\": {\"wait-up-to\": 1, \"wait-up-to\": 2}}",
				 "clock-regression.wait-up-to", "duplicate key at byte 39");
	expect_error("{\"codec\": [{\"a\": 1, \"a\": 2}]}", "codec[0].a",
				 "duplicate key at byte 20");
	/* nesting deeper than the reader's limit: refused as a whole */
	nested_codec(deep, sizeof(deep), COSID_JSON_MAX_DEPTH);
	expect_error_prefix(deep, "definition", "invalid JSON at byte 41: nested deeper than 32");
	/* one level less is read (and is no list the codec parser would take) */
	nested_codec(deep, sizeof(deep), COSID_JSON_MAX_DEPTH - 1);
	{
		Arena		a;
		CosidDefinition d;

		parse_ok(deep, &d, &a);
		assert_int_equal(d.codec->end - d.codec->offset, 2 * (COSID_JSON_MAX_DEPTH - 1));
		arena_free(&a);
	}
}

/* json.c: end offsets, which the codec text is cut by */
static void
test_json_end_offsets(void **state)
{
	static const char text[] = " {\"a\": [1, -2.5e3, \"x\\\"y\"], \"b\": {\"c\": true},"
		"\"d\":null , \"e\":false}  ";
	Arena		a;
	CosidJsonValue *root;
	const CosidJsonValue *m;
	const CosidJsonValue *e;
	char		path[BUF];
	char		msg[BUF];

	(void) state;
	arena_init(&a, -1);
	root = cosid_json_parse(text, strlen(text), arena_alloc, &a, NULL, path,
							sizeof(path), msg, sizeof(msg));
	assert_non_null(root);
	assert_int_equal(root->offset, 1);
	assert_int_equal(root->end, strlen(text) - 2);
	m = root->first;			/* "a" */
	assert_int_equal(m->end - m->offset, strlen("[1, -2.5e3, \"x\\\"y\"]"));
	assert_memory_equal(text + m->offset, "[1, -2.5e3, \"x\\\"y\"]", m->end - m->offset);
	e = m->first;
	assert_memory_equal(text + e->offset, "1", e->end - e->offset);
	e = e->next;
	assert_memory_equal(text + e->offset, "-2.5e3", e->end - e->offset);
	assert_int_equal(e->end - e->offset, 6);
	e = e->next;
	assert_memory_equal(text + e->offset, "\"x\\\"y\"", e->end - e->offset);
	assert_int_equal(e->end - e->offset, 6);
	m = m->next;				/* "b" */
	assert_memory_equal(text + m->offset, "{\"c\": true}", m->end - m->offset);
	assert_int_equal(m->end - m->offset, 11);
	assert_memory_equal(text + m->first->offset, "true", 4);
	assert_int_equal(m->first->end - m->first->offset, 4);
	m = m->next;				/* "d" */
	assert_int_equal(m->end - m->offset, 4);
	m = m->next;				/* "e" */
	assert_int_equal(m->end - m->offset, 5);
	arena_free(&a);
}

/* Memory that runs out: a clean failure at every allocation. */
static void
test_out_of_memory(void **state)
{
	static const char json[] = "{\"codec\": [{\"prefix\": \"O\"}], \"strategy\": \"segment\"}";
	int			needed = -1;

	(void) state;
	for (int k = 0; k < 200; k++)
	{
		Arena		a;
		CosidDefinition d;
		CosidDefinition before;
		char		path[BUF];
		char		msg[BUF];
		bool		ok;

		memset(&d, 0x5A, sizeof(d));
		before = d;
		arena_init(&a, k);
		ok = cosid_definition_parse(json, strlen(json), &hooks, arena_alloc, &a,
									&d, path, sizeof(path), msg, sizeof(msg));
		arena_free(&a);
		if (ok)
		{
			needed = k;
			break;
		}
		assert_string_equal(path, "definition");
		assert_string_equal(msg, "out of memory");
		assert_memory_equal(&d, &before, sizeof(d));
	}
	/* the JSON tree, then the codec's copy */
	assert_true(needed > 5);
}

/* Small buffers: cut on a character boundary, always terminated. */
static void
test_buffers(void **state)
{
	/* "é" is 2 bytes, "€" 3 */
	static const char json[] = "{\"group\": \"\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\", "
		"\"strategy\": \"segment\"}";
	static const char full[] = "expected \"day\", \"month\" or \"year\", found \""
		"\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\"";
	size_t		prefix = strlen("expected \"day\", \"month\" or \"year\", found \"");
	char		path[BUF];
	char		msg[BUF];
	Arena		a;
	CosidDefinition d;

	(void) state;
	for (size_t len = 1; len <= sizeof(full) + 2; len++)
	{
		size_t		got;

		memset(msg, 'x', sizeof(msg));
		arena_init(&a, -1);
		assert_false(cosid_definition_parse(json, strlen(json), &hooks, arena_alloc,
											&a, &d, path, 3, msg, len));
		arena_free(&a);
		assert_string_equal(path, "gr");
		got = strlen(msg);
		assert_true(got < len);
		assert_memory_equal(msg, full, got);
		assert_int_equal(msg[len], 'x');
		/* never half a character */
		if (got > prefix && got < strlen(full))
		{
			size_t		tail = got - prefix;

			assert_true(tail == 2 || tail == 5 || tail == 7 || tail == 10);
		}
		if (len > strlen(full))
			assert_string_equal(msg, full);
	}

	/* no buffers at all */
	arena_init(&a, -1);
	assert_false(cosid_definition_parse(json, strlen(json), &hooks, arena_alloc, &a,
										&d, NULL, 0, NULL, 0));
	arena_free(&a);
	arena_init(&a, -1);
	assert_false(cosid_definition_parse("{", 1, &hooks, arena_alloc, &a, &d, NULL, 0,
										NULL, 0));
	arena_free(&a);
	/* a one-byte buffer is just the NUL */
	arena_init(&a, -1);
	assert_false(cosid_definition_parse("[]", 2, &hooks, arena_alloc, &a, &d, path, 1,
										msg, 1));
	arena_free(&a);
	assert_string_equal(path, "");
	assert_string_equal(msg, "");
	/* the document's own path cut */
	arena_init(&a, -1);
	assert_false(cosid_definition_parse("{", 1, &hooks, arena_alloc, &a, &d, path, 4,
										msg, sizeof(msg)));
	arena_free(&a);
	assert_string_equal(path, "def");
}

/* text.c: the one UTF-8 cut of src/core (json.c's appends, definition.c's messages) */
static void
test_utf8_trim(void **state)
{
	/* "a", "\xc3\xa9" (2 bytes), "\xe2\x82\xac" (3), "\xf0\x9f\x98\x80" (4) */
	static const char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	static const size_t kept[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};

	(void) state;
	for (size_t n = 0; n < sizeof(kept) / sizeof(kept[0]); n++)
		assert_int_equal(cosid_utf8_trim(s, n), kept[n]);
	/* a stray byte is a whole character; a lone lead byte is cut */
	assert_int_equal(cosid_utf8_trim("a\x80", 2), 2);
	assert_int_equal(cosid_utf8_trim("\x80\x80", 2), 2);
	assert_int_equal(cosid_utf8_trim("ab\xf0", 3), 2);
	assert_int_equal(cosid_utf8_trim("\xff", 1), 1);
}

/* text.c: ASCII words in any case, keys exactly */
static void
test_words_and_keys(void **state)
{
	static const char *const keys[] = {"step", "start", "group", NULL};

	(void) state;
	assert_true(cosid_word_eq("Lease-Store", "lease-store"));
	assert_true(cosid_word_eq("DAY", "day"));
	assert_true(cosid_word_eq("day", "DAY"));
	assert_true(cosid_word_eq("", ""));
	assert_false(cosid_word_eq("days", "day"));
	assert_false(cosid_word_eq("da", "day"));
	/* no folding beyond ASCII: "\xc3\x89" is not "\xc3\xa9" */
	assert_false(cosid_word_eq("\xc3\x89", "\xc3\xa9"));
	assert_int_equal(cosid_key_index("step", keys), 0);
	assert_int_equal(cosid_key_index("group", keys), 2);
	assert_int_equal(cosid_key_index("Group", keys), -1);
	assert_int_equal(cosid_key_index("", keys), -1);
}

/* json.c: a cut buffer stays a prefix of everything appended */
static void
test_buf_append_prefix(void **state)
{
	char		buf[6];
	size_t		pos = 0;

	(void) state;
	memset(buf, 'x', sizeof(buf));
	cosid_buf_append(buf, sizeof(buf), &pos, "ab", 2);
	assert_string_equal(buf, "ab");
	assert_int_equal(pos, 2);
	/* "\xc3\xa9" does not fit after "abc": cut before it */
	cosid_buf_append(buf, sizeof(buf), &pos, "cd\xc3\xa9", 4);
	assert_string_equal(buf, "abcd");
	/* and nothing may follow the cut, though "[" would fit */
	cosid_buf_append(buf, sizeof(buf), &pos, "[", 1);
	assert_string_equal(buf, "abcd");
	cosid_buf_append(buf, sizeof(buf), &pos, "", 0);
	assert_string_equal(buf, "abcd");

	/* a duplicate key's path, cut inside a key, as the fuzzer found it */
	{
		static const char json[] = "{\"k\xc3\xa9y\": [{\"a\": 1, \"a\": 2}]}";
		Arena		a;
		CosidDefinition d;
		char		path[BUF];
		char		msg[BUF];

		for (size_t len = 1; len <= 16; len++)
		{
			static const char full[] = "k\xc3\xa9y[0].a";

			arena_init(&a, -1);
			assert_false(cosid_definition_parse(json, strlen(json), &hooks,
												arena_alloc, &a, &d, path, len,
												msg, sizeof(msg)));
			arena_free(&a);
			assert_string_equal(msg, "duplicate key at byte 19");
			assert_true(strlen(path) < len);
			assert_memory_equal(path, full, strlen(path));
			/* the reader's path has a leading "." until it is stripped */
			if (len > strlen(full) + 1)
				assert_string_equal(path, full);
			/* never "k" followed by a later piece ("k[" with 4 bytes) */
			if (len == 3 || len == 4)
				assert_string_equal(path, "k");
		}
	}
}

/* Buffers of the text's length plus COSID_DEFINITION_TEXT_EXTRA hold it all. */
static void
test_long_strings_fit(void **state)
{
	static char json[8192];
	static char big[16384];
	char	   *path;
	char	   *msg;
	size_t		n;
	size_t		len;
	Arena		a;
	CosidDefinition d;

	(void) state;
	/* an unknown key of 3000 bytes */
	n = (size_t) snprintf(json, sizeof(json), "{\"");
	memset(json + n, 'k', 3000);
	n += 3000;
	n += (size_t) snprintf(json + n, sizeof(json) - n, "\": 1}");
	len = n + COSID_DEFINITION_TEXT_EXTRA;
	path = malloc(len);
	msg = malloc(len);
	assert_non_null(path);
	assert_non_null(msg);
	arena_init(&a, -1);
	assert_false(cosid_definition_parse(json, n, &hooks, arena_alloc, &a, &d, path,
										len, msg, len));
	arena_free(&a);
	assert_int_equal(strlen(path), 3000);
	assert_string_equal(msg, UNKNOWN_KEY);

	/* a clock-regression key of 3000 bytes */
	n = (size_t) snprintf(json, sizeof(json), "{\"clock-regression\": {\"");
	memset(json + n, 'k', 3000);
	n += 3000;
	n += (size_t) snprintf(json + n, sizeof(json) - n, "\": 1}}");
	arena_init(&a, -1);
	assert_false(cosid_definition_parse(json, n, &hooks, arena_alloc, &a, &d, path,
										n + COSID_DEFINITION_TEXT_EXTRA, msg,
										n + COSID_DEFINITION_TEXT_EXTRA));
	arena_free(&a);
	assert_int_equal(strlen(path), strlen("clock-regression.") + 3000);
	assert_memory_equal(path, "clock-regression.kkk", 20);

	/* a group value of 3000 bytes */
	n = (size_t) snprintf(json, sizeof(json), "{\"group\": \"");
	memset(json + n, 'w', 3000);
	n += 3000;
	n += (size_t) snprintf(json + n, sizeof(json) - n, "\", \"strategy\": \"segment\"}");
	arena_init(&a, -1);
	assert_false(cosid_definition_parse(json, n, &hooks, arena_alloc, &a, &d, path,
										n + COSID_DEFINITION_TEXT_EXTRA, msg,
										n + COSID_DEFINITION_TEXT_EXTRA));
	arena_free(&a);
	snprintf(big, sizeof(big), "expected \"day\", \"month\" or \"year\", found \"%.*s\"",
			 3000, json + strlen("{\"group\": \""));
	assert_string_equal(msg, big);
	free(path);
	free(msg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_presets),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_words_case_insensitive),
		cmocka_unit_test(test_clock_regression),
		cmocka_unit_test(test_epoch),
		cmocka_unit_test(test_segment_good),
		cmocka_unit_test(test_segment_bad),
		cmocka_unit_test(test_segment_distributor),
		cmocka_unit_test(test_bad_definitions),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_json_end_offsets),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_buffers),
		cmocka_unit_test(test_buf_append_prefix),
		cmocka_unit_test(test_utf8_trim),
		cmocka_unit_test(test_words_and_keys),
		cmocka_unit_test(test_long_strings_fit),
	};

	return cmocka_run_group_tests_name("definition", tests, NULL, NULL);
}

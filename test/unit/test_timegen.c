/*
 * test_timegen.c - cmocka unit tests for src/core/timegen.c.
 *
 * The clock is injected: every test passes the wall-clock time it wants, so
 * each expected unit, sequence and wait time is written out exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "core/timegen.h"

#define E		COSID_SNOWFLAKE_EPOCH_MS
/* a clock time well after the SNOWFLAKE epoch, in milliseconds */
#define T		(E + INT64_C(123456789))
/* a clock time on a whole second after the SNOWFLAKE epoch */
#define X		(E + INT64_C(5000000))

static const CosidClockPolicy default_policy = {COSID_DEFAULT_BORROW_MS,
COSID_DEFAULT_WAIT_MS};
static const CosidClockPolicy fail_policy = {0, 0};
static const CosidWindow open_window = {0, INT64_MAX, 1000};

/* Fixed-seed xorshift64 generator: reproducible on every platform. */
typedef struct Xorshift
{
	uint64_t	s;
} Xorshift;

static uint64_t
xs_next(Xorshift *x)
{
	x->s ^= x->s << 13;
	x->s ^= x->s >> 7;
	x->s ^= x->s << 17;
	return x->s;
}

static CosidLayout
make_layout(int64_t epoch_ms, int64_t unit_ms, int time_bits, int node_bits,
			int seq_bits, int64_t threshold)
{
	CosidLayout l;

	l.epoch_ms = epoch_ms;
	l.unit_ms = unit_ms;
	l.time_bits = time_bits;
	l.node_bits = node_bits;
	l.seq_bits = seq_bits;
	l.seq_reset_threshold = threshold;
	return l;
}

/* One step with the default policy and the wide-open window. */
static CosidNextResult
step(const CosidLayout *l, CosidTimeState *st, int64_t now, int64_t *unit,
	 int64_t *seq, int64_t *wait)
{
	return cosid_time_next(l, &default_policy, &open_window, st, now, unit,
						   seq, wait);
}

/* Expect OK (or BORROWED) with these parts, and the state to match. */
static void
expect_id(const CosidLayout *l, CosidTimeState *st, int64_t now,
		  CosidNextResult want, int64_t want_unit, int64_t want_seq)
{
	int64_t		unit = -7;
	int64_t		seq = -7;
	int64_t		wait = -7;

	assert_int_equal(step(l, st, now, &unit, &seq, &wait), want);
	assert_int_equal(unit, want_unit);
	assert_int_equal(seq, want_seq);
	assert_int_equal(st->last_unit, want_unit);
	assert_int_equal(st->seq, want_seq);
	assert_int_equal(wait, -7);
}

/* Expect a result that issues nothing: its wait value, and no state change. */
static void
expect_stop(const CosidLayout *l, const CosidClockPolicy *policy,
			const CosidWindow *w, CosidTimeState *st, int64_t now,
			CosidNextResult want, int64_t want_wait)
{
	CosidTimeState before = *st;
	int64_t		unit = -7;
	int64_t		seq = -7;
	int64_t		wait = -7;

	assert_int_equal(cosid_time_next(l, policy, w, st, now, &unit, &seq, &wait),
					 want);
	assert_int_equal(wait, want_wait);
	assert_int_equal(unit, -7);
	assert_int_equal(seq, -7);
	assert_int_equal(st->last_unit, before.last_unit);
	assert_int_equal(st->seq, before.seq);
}

/* ---------------------------------------------------------------- presets */

static void
check_preset(CosidPreset p, const char *name, int64_t epoch, int64_t unit,
			 int tb, int nb, int sb, int64_t thr)
{
	CosidLayout l = cosid_preset_layout(p);
	CosidPreset found = COSID_PRESET_COUNT;

	assert_string_equal(cosid_preset_name(p), name);
	assert_int_equal(l.epoch_ms, epoch);
	assert_int_equal(l.unit_ms, unit);
	assert_int_equal(l.time_bits, tb);
	assert_int_equal(l.node_bits, nb);
	assert_int_equal(l.seq_bits, sb);
	assert_int_equal(l.seq_reset_threshold, thr);
	assert_true(cosid_preset_find(name, &found));
	assert_int_equal(found, p);
}

static void
test_presets(void **state)
{
	(void) state;
	assert_int_equal(COSID_SNOWFLAKE_EPOCH_MS, INT64_C(1577203200000));
	check_preset(COSID_PRESET_SNOWFLAKE_MS, "SNOWFLAKE_MS",
				 INT64_C(1577203200000), 1, 41, 10, 12, 2047);
	check_preset(COSID_PRESET_SNOWFLAKE_S, "SNOWFLAKE_S",
				 INT64_C(1577203200000), 1000, 31, 10, 22, 2097151);
	check_preset(COSID_PRESET_JS_SAFE_MS, "JS_SAFE_MS",
				 INT64_C(1577203200000), 1, 41, 3, 9, 255);
	check_preset(COSID_PRESET_JS_SAFE_S, "JS_SAFE_S",
				 INT64_C(1577203200000), 1000, 31, 3, 19, 262143);
	check_preset(COSID_PRESET_COSID_80, "COSID_80", 0, 1, 44, 20, 16, 32767);
	assert_null(cosid_preset_name(COSID_PRESET_COUNT));
}

static void
test_preset_find(void **state)
{
	CosidPreset p;

	(void) state;
	p = COSID_PRESET_COUNT;
	assert_true(cosid_preset_find("snowflake_ms", &p));
	assert_int_equal(p, COSID_PRESET_SNOWFLAKE_MS);
	p = COSID_PRESET_COUNT;
	assert_true(cosid_preset_find("Snowflake_S", &p));
	assert_int_equal(p, COSID_PRESET_SNOWFLAKE_S);
	p = COSID_PRESET_COUNT;
	assert_true(cosid_preset_find("js_SAFE_ms", &p));
	assert_int_equal(p, COSID_PRESET_JS_SAFE_MS);
	p = COSID_PRESET_COUNT;
	assert_true(cosid_preset_find("Js_Safe_S", &p));
	assert_int_equal(p, COSID_PRESET_JS_SAFE_S);
	p = COSID_PRESET_COUNT;
	assert_true(cosid_preset_find("cosid_80", &p));
	assert_int_equal(p, COSID_PRESET_COSID_80);

	assert_false(cosid_preset_find("", &p));
	assert_false(cosid_preset_find("SNOWFLAKE", &p));
	assert_false(cosid_preset_find("SNOWFLAKE_MS ", &p));
	assert_false(cosid_preset_find(" SNOWFLAKE_MS", &p));
	assert_false(cosid_preset_find("SNOWFLAKE-MS", &p));
	assert_false(cosid_preset_find("SNOWFLAKE_MSX", &p));
	assert_false(cosid_preset_find("COSID80", &p));
}

static void
test_default_threshold(void **state)
{
	(void) state;
	assert_int_equal(cosid_default_seq_reset_threshold(1), 0);
	assert_int_equal(cosid_default_seq_reset_threshold(2), 1);
	assert_int_equal(cosid_default_seq_reset_threshold(12), 2047);
	assert_int_equal(cosid_default_seq_reset_threshold(16), 32767);
	assert_int_equal(cosid_default_seq_reset_threshold(62),
					 INT64_C(2305843009213693951));
}

/* ------------------------------------------------------------ layout check */

static const char *
check(const CosidLayout *l, int max_total, char *msg)
{
	memset(msg, 0, 200);
	return cosid_layout_check(l, max_total, msg, 200);
}

static void
test_layout_check_valid(void **state)
{
	char		msg[200];
	CosidLayout l;
	int			p;

	(void) state;
	for (p = 0; p < COSID_PRESET_COSID_80; p++)
	{
		l = cosid_preset_layout((CosidPreset) p);
		assert_null(check(&l, 63, msg));
	}
	l = cosid_preset_layout(COSID_PRESET_COSID_80);
	assert_null(check(&l, 127, msg));
	assert_null(check(&l, 80, msg));

	/* the edges of every range */
	l = make_layout(0, 1, 1, 0, 1, 0);
	assert_null(check(&l, 63, msg));
	l = make_layout(INT64_C(1) << 47, 1, 1, 0, 1, 1);
	assert_null(check(&l, 63, msg));
	l = make_layout(0, 1, 63, 0, 1, 0);
	assert_null(check(&l, 64, msg));
	l = make_layout(0, 1, 1, 31, 1, 0);
	assert_null(check(&l, 63, msg));
	l = make_layout(0, 1, 1, 0, 62, INT64_C(4611686018427387903));
	assert_null(check(&l, 63, msg));
	l = make_layout(0, 1, 63, 31, 33, 0);
	assert_null(check(&l, 127, msg));
	/* a seconds layout on a whole-second epoch; any epoch in ms */
	l = make_layout(E, 1000, 31, 10, 22, 0);
	assert_null(check(&l, 63, msg));
	l = make_layout(E + 500, 1, 41, 10, 12, 4095);
	assert_null(check(&l, 63, msg));
}

static void
test_layout_check_errors(void **state)
{
	char		msg[200];
	CosidLayout base = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout l;

	(void) state;

	l = base;
	l.unit_ms = 0;
	assert_string_equal(check(&l, 63, msg), "unit");
	assert_string_equal(msg, "expected \"ms\" or \"s\"");
	l.unit_ms = 60000;
	assert_string_equal(check(&l, 63, msg), "unit");
	l.unit_ms = 10;
	assert_string_equal(check(&l, 63, msg), "unit");

	l = base;
	l.epoch_ms = -1;
	assert_string_equal(check(&l, 63, msg), "epoch");
	assert_string_equal(msg, "expected Unix milliseconds from 0 to 2^47 or an ISO 8601 time");
	l.epoch_ms = (INT64_C(1) << 47) + 1;
	assert_string_equal(check(&l, 63, msg), "epoch");
	l = base;
	l.unit_ms = 1000;
	l.time_bits = 31;
	l.seq_bits = 22;
	l.epoch_ms = E + 500;
	assert_string_equal(check(&l, 63, msg), "epoch");
	assert_string_equal(msg, "a layout in seconds needs an epoch on a whole second");
	l.epoch_ms = E + 1;
	assert_string_equal(check(&l, 63, msg), "epoch");
	l.epoch_ms = E + 999;
	assert_string_equal(check(&l, 63, msg), "epoch");

	l = base;
	l.time_bits = 0;
	assert_string_equal(check(&l, 63, msg), "time-bits");
	assert_string_equal(msg, "expected an integer from 1 to 63");
	l.time_bits = 64;
	assert_string_equal(check(&l, 200, msg), "time-bits");
	l.time_bits = -1;
	assert_string_equal(check(&l, 63, msg), "time-bits");

	l = base;
	l.node_bits = 32;
	assert_string_equal(check(&l, 200, msg), "node-bits");
	assert_string_equal(msg, "expected an integer from 0 to 31");
	l.node_bits = -1;
	assert_string_equal(check(&l, 63, msg), "node-bits");

	l = base;
	l.seq_bits = 0;
	l.seq_reset_threshold = 0;
	assert_string_equal(check(&l, 63, msg), "seq-bits");
	assert_string_equal(msg, "expected an integer from 1 to 62");
	l.seq_bits = 63;
	assert_string_equal(check(&l, 200, msg), "seq-bits");

	l = base;
	l.seq_bits = 13;
	assert_string_equal(check(&l, 63, msg), "layout");
	assert_string_equal(msg, "time-bits + node-bits + seq-bits is 64; at most 63 fit this strategy");
	assert_null(check(&l, 64, msg));
	l = cosid_preset_layout(COSID_PRESET_COSID_80);
	assert_string_equal(check(&l, 63, msg), "layout");
	assert_string_equal(msg, "time-bits + node-bits + seq-bits is 80; at most 63 fit this strategy");
	assert_string_equal(check(&l, 79, msg), "layout");

	l = base;
	l.seq_reset_threshold = 4096;
	assert_string_equal(check(&l, 63, msg), "seq-reset-threshold");
	assert_string_equal(msg, "expected an integer from 0 to 4095 (the largest sequence)");
	l.seq_reset_threshold = -1;
	assert_string_equal(check(&l, 63, msg), "seq-reset-threshold");
	l.seq_reset_threshold = 4095;
	assert_null(check(&l, 63, msg));
	l.seq_reset_threshold = 0;
	assert_null(check(&l, 63, msg));
}

/* ------------------------------------------------------------ pack/unpack */

static void
test_pack64(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout js = cosid_preset_layout(COSID_PRESET_JS_SAFE_MS);
	int64_t		t;
	int64_t		n;
	int64_t		s;
	Xorshift	x = {UINT64_C(0x9E3779B97F4A7C15)};
	int			i;

	(void) state;
	assert_int_equal(cosid_layout_pack(&l, 1, 1, 1),
					 (INT64_C(1) << 22) | (INT64_C(1) << 12) | 1);
	assert_int_equal(cosid_layout_pack(&l, 0, 0, 0), 0);
	assert_int_equal(cosid_layout_pack(&l, 0, 0, 4095), 4095);
	assert_int_equal(cosid_layout_pack(&l, 0, 1023, 0), INT64_C(4190208));
	assert_int_equal(cosid_layout_pack(&l, (INT64_C(1) << 41) - 1, 1023, 4095),
					 INT64_MAX);
	assert_int_equal(cosid_layout_max_time(&l), (INT64_C(1) << 41) - 1);
	assert_int_equal(cosid_layout_max_seq(&l), 4095);
	assert_int_equal(cosid_layout_total_bits(&l), 63);
	assert_int_equal(cosid_layout_total_bits(&js), 53);
	assert_int_equal(cosid_layout_pack(&js, (INT64_C(1) << 41) - 1, 7, 511),
					 (INT64_C(1) << 53) - 1);

	cosid_layout_unpack(&l, INT64_MAX, &t, &n, &s);
	assert_int_equal(t, (INT64_C(1) << 41) - 1);
	assert_int_equal(n, 1023);
	assert_int_equal(s, 4095);
	cosid_layout_unpack(&l, (INT64_C(1) << 22) | (INT64_C(1) << 12) | 1,
						&t, &n, &s);
	assert_int_equal(t, 1);
	assert_int_equal(n, 1);
	assert_int_equal(s, 1);
	cosid_layout_unpack(&l, 0, &t, &n, &s);
	assert_int_equal(t, 0);
	assert_int_equal(n, 0);
	assert_int_equal(s, 0);

	for (i = 0; i < 10000; i++)
	{
		int64_t		tt = (int64_t) (xs_next(&x) >> 23);
		int64_t		nn = (int64_t) (xs_next(&x) >> 54);
		int64_t		ss = (int64_t) (xs_next(&x) >> 52);

		cosid_layout_unpack(&l, cosid_layout_pack(&l, tt, nn, ss), &t, &n, &s);
		assert_int_equal(t, tt);
		assert_int_equal(n, nn);
		assert_int_equal(s, ss);
	}
}

static void
test_pack128(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_COSID_80);
	CosidLayout big = make_layout(0, 1, 63, 31, 33, 0);
	CosidLayout sf = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	uint64_t	hi;
	uint64_t	lo;
	int64_t		t;
	int64_t		n;
	int64_t		s;
	Xorshift	x = {UINT64_C(0x0123456789ABCDEF)};
	int			i;

	(void) state;

	/* COSID_80: time 44 | node 20 | seq 16 */
	cosid_layout_pack128(&l, 1, 1, 1, &hi, &lo);
	assert_int_equal(hi, 0);
	assert_int_equal(lo, (UINT64_C(1) << 36) | (UINT64_C(1) << 16) | 1);
	cosid_layout_pack128(&l, INT64_C(1) << 43, 0, 0, &hi, &lo);
	assert_int_equal(hi, UINT64_C(0x8000));
	assert_int_equal(lo, 0);
	cosid_layout_pack128(&l, (INT64_C(1) << 44) - 1, (1 << 20) - 1, 65535,
						 &hi, &lo);
	assert_int_equal(hi, UINT64_C(0xFFFF));
	assert_int_equal(lo, UINT64_MAX);
	cosid_layout_unpack128(&l, UINT64_C(0xFFFF), UINT64_MAX, &t, &n, &s);
	assert_int_equal(t, (INT64_C(1) << 44) - 1);
	assert_int_equal(n, (1 << 20) - 1);
	assert_int_equal(s, 65535);
	cosid_layout_unpack128(&l, 0, 0, &t, &n, &s);
	assert_int_equal(t, 0);
	assert_int_equal(n, 0);
	assert_int_equal(s, 0);
	/* parts apart: only the time part set, then only node, then only seq */
	cosid_layout_pack128(&l, (INT64_C(1) << 44) - 1, 0, 0, &hi, &lo);
	assert_int_equal(hi, UINT64_C(0xFFFF));
	assert_int_equal(lo, UINT64_C(0xFFFFFFF000000000));
	cosid_layout_pack128(&l, 0, (1 << 20) - 1, 0, &hi, &lo);
	assert_int_equal(hi, 0);
	assert_int_equal(lo, UINT64_C(0x0000000FFFFF0000));

	/* a 127-bit layout: time 63 | node 31 | seq 33 */
	cosid_layout_pack128(&big, INT64_MAX, INT32_MAX, (INT64_C(1) << 33) - 1,
						 &hi, &lo);
	assert_int_equal(hi, UINT64_MAX >> 1);
	assert_int_equal(lo, UINT64_MAX);
	cosid_layout_unpack128(&big, UINT64_MAX >> 1, UINT64_MAX, &t, &n, &s);
	assert_int_equal(t, INT64_MAX);
	assert_int_equal(n, INT32_MAX);
	assert_int_equal(s, (INT64_C(1) << 33) - 1);
	cosid_layout_pack128(&big, 1, 0, 0, &hi, &lo);
	assert_int_equal(hi, 1);
	assert_int_equal(lo, 0);
	cosid_layout_pack128(&big, 0, 1, 0, &hi, &lo);
	assert_int_equal(hi, 0);
	assert_int_equal(lo, UINT64_C(1) << 33);

	/* 128-bit packing of a 63-bit layout matches the 64-bit one */
	cosid_layout_pack128(&sf, (INT64_C(1) << 41) - 1, 1023, 4095, &hi, &lo);
	assert_int_equal(hi, 0);
	assert_int_equal(lo, (uint64_t) INT64_MAX);
	cosid_layout_pack128(&sf, 12345, 678, 901, &hi, &lo);
	assert_int_equal(hi, 0);
	assert_int_equal(lo, (uint64_t) cosid_layout_pack(&sf, 12345, 678, 901));

	for (i = 0; i < 10000; i++)
	{
		int64_t		tt = (int64_t) (xs_next(&x) >> 20);
		int64_t		nn = (int64_t) (xs_next(&x) >> 44);
		int64_t		ss = (int64_t) (xs_next(&x) >> 48);
		int64_t		bt = (int64_t) (xs_next(&x) >> 1);
		int64_t		bn = (int64_t) (xs_next(&x) >> 33);
		int64_t		bs = (int64_t) (xs_next(&x) >> 31);

		cosid_layout_pack128(&l, tt, nn, ss, &hi, &lo);
		cosid_layout_unpack128(&l, hi, lo, &t, &n, &s);
		assert_int_equal(t, tt);
		assert_int_equal(n, nn);
		assert_int_equal(s, ss);
		cosid_layout_pack128(&big, bt, bn, bs, &hi, &lo);
		assert_int_equal(hi, (uint64_t) bt);
		assert_int_equal(lo, ((uint64_t) bn << 33) | (uint64_t) bs);
		cosid_layout_unpack128(&big, hi, lo, &t, &n, &s);
		assert_int_equal(t, bt);
		assert_int_equal(n, bn);
		assert_int_equal(s, bs);
	}
}

/* ------------------------------------------------------------------ units */

static void
test_units(void **state)
{
	CosidLayout ms = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout s = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_S);

	(void) state;
	assert_int_equal(cosid_unit_of(&ms, E), 0);
	assert_int_equal(cosid_unit_of(&ms, E + 1), 1);
	assert_int_equal(cosid_unit_of(&ms, E - 1), -1);
	assert_int_equal(cosid_unit_of(&ms, E - 1000), -1000);
	assert_int_equal(cosid_unit_of(&ms, T), 123456789);
	assert_int_equal(cosid_unit_of(&ms, 0), -E);
	assert_int_equal(cosid_unit_start_ms(&ms, 0), E);
	assert_int_equal(cosid_unit_start_ms(&ms, 123456789), T);
	assert_int_equal(cosid_unit_start_ms(&ms, -1), E - 1);

	assert_int_equal(cosid_unit_of(&s, E), 0);
	assert_int_equal(cosid_unit_of(&s, E + 999), 0);
	assert_int_equal(cosid_unit_of(&s, E + 1000), 1);
	assert_int_equal(cosid_unit_of(&s, E + 1999), 1);
	assert_int_equal(cosid_unit_of(&s, E - 1), -1);
	assert_int_equal(cosid_unit_of(&s, E - 999), -1);
	assert_int_equal(cosid_unit_of(&s, E - 1000), -1);
	assert_int_equal(cosid_unit_of(&s, E - 1001), -2);
	assert_int_equal(cosid_unit_of(&s, E - 2000), -2);
	assert_int_equal(cosid_unit_of(&s, X + 600), 5000);
	assert_int_equal(cosid_unit_start_ms(&s, 5000), X);
	assert_int_equal(cosid_unit_start_ms(&s, -1), E - 1000);
	assert_int_equal(cosid_unit_start_ms(&s, -2), E - 2000);
}

/* ---------------------------------------------------------- state machine */

/* CosId's own check: threshold 2, one unit per call gives 1, 2, 1, 2, ... */
static void
test_seq_threshold_cycle(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	static const int64_t want[] = {1, 2, 1, 2, 1, 2, 1};
	int			i;

	(void) state;
	l.seq_reset_threshold = 2;
	assert_int_equal(st.last_unit, -1);
	assert_int_equal(st.seq, 0);
	for (i = 0; i < 7; i++)
		expect_id(&l, &st, T + i, COSID_NEXT_OK, 123456789 + i, want[i]);
}

static void
test_seq_same_unit(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout tiny = make_layout(E, 1, 41, 10, 2, 1);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	int64_t		u = 123456789;

	(void) state;
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 1);
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 2);
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 3);
	/* below the threshold the sequence carries on into the next unit */
	expect_id(&l, &st, T + 1, COSID_NEXT_OK, u + 1, 4);
	expect_id(&l, &st, T + 1, COSID_NEXT_OK, u + 1, 5);
	/* and across a gap of several units */
	expect_id(&l, &st, T + 50, COSID_NEXT_OK, u + 50, 6);

	/* seq_bits 2: max 3, default threshold 1 */
	assert_int_equal(cosid_default_seq_reset_threshold(2), 1);
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	expect_id(&tiny, &st, T, COSID_NEXT_OK, u, 1);
	expect_id(&tiny, &st, T, COSID_NEXT_OK, u, 2);
	expect_id(&tiny, &st, T, COSID_NEXT_OK, u, 3);
	expect_stop(&tiny, &default_policy, &open_window, &st, T,
				COSID_NEXT_WAIT_SEQUENCE, T + 1);
	expect_stop(&tiny, &default_policy, &open_window, &st, T,
				COSID_NEXT_WAIT_SEQUENCE, T + 1);
	/* 3 >= threshold 1: the next unit restarts */
	expect_id(&tiny, &st, T + 1, COSID_NEXT_OK, u + 1, 1);
	/* 1 >= 1 as well */
	expect_id(&tiny, &st, T + 2, COSID_NEXT_OK, u + 2, 1);
	expect_id(&tiny, &st, T + 2, COSID_NEXT_OK, u + 2, 2);

	/* a seconds layout: the whole second is one unit */
	tiny = make_layout(E, 1000, 31, 10, 2, 1);
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	expect_id(&tiny, &st, X + 1, COSID_NEXT_OK, 5000, 1);
	expect_id(&tiny, &st, X + 400, COSID_NEXT_OK, 5000, 2);
	expect_id(&tiny, &st, X + 999, COSID_NEXT_OK, 5000, 3);
	expect_stop(&tiny, &default_policy, &open_window, &st, X + 999,
				COSID_NEXT_WAIT_SEQUENCE, X + 1000);
	expect_id(&tiny, &st, X + 1000, COSID_NEXT_OK, 5001, 1);

	/* threshold 0: every new unit restarts */
	tiny = make_layout(E, 1, 41, 10, 4, 0);
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	expect_id(&tiny, &st, T, COSID_NEXT_OK, u, 1);
	expect_id(&tiny, &st, T + 1, COSID_NEXT_OK, u + 1, 1);
	/* threshold = max: carries on until the sequence is full */
	tiny.seq_reset_threshold = 15;
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	expect_id(&tiny, &st, T, COSID_NEXT_OK, u, 1);
	expect_id(&tiny, &st, T + 1, COSID_NEXT_OK, u + 1, 2);
	st.seq = 14;
	expect_id(&tiny, &st, T + 2, COSID_NEXT_OK, u + 2, 15);
	expect_id(&tiny, &st, T + 3, COSID_NEXT_OK, u + 3, 1);
}

/* Count id % 4 over 99,999 ids, 37 per ms, from a fresh state. */
static void
spread(const CosidLayout *l, int64_t counts[4])
{
	CosidTimeState st = COSID_TIME_STATE_INIT;
	int64_t		prev = -1;
	int64_t		i;

	memset(counts, 0, 4 * sizeof(int64_t));
	for (i = 0; i < 99999; i++)
	{
		int64_t		unit;
		int64_t		seq;
		int64_t		wait;
		int64_t		id;

		assert_int_equal(step(l, &st, T + i / 37, &unit, &seq, &wait),
						 COSID_NEXT_OK);
		assert_int_equal(unit, 123456789 + i / 37);
		id = cosid_layout_pack(l, unit, 517, seq);
		assert_true(id > prev);
		prev = id;
		counts[id % 4]++;
	}
}

static bool
within_one_percent(int64_t count)
{
	/* |count - 99999/4| <= 1% of 99999/4 */
	int64_t		d = 400 * count - 100 * 99999;

	return d <= 99999 && d >= -99999;
}

static void
test_seq_spread(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	int64_t		counts[4];
	int			r;

	(void) state;
	spread(&l, counts);
	for (r = 0; r < 4; r++)
		assert_true(within_one_percent(counts[r]));
	/* sequences run 1..2072 (56 ms of 37) then restart: exact counts */
	assert_int_equal(counts[0], 24999);
	assert_int_equal(counts[1], 25000);
	assert_int_equal(counts[2], 25000);
	assert_int_equal(counts[3], 25000);

	/* the check can fail: restarting every unit skews towards residue 1 */
	l.seq_reset_threshold = 0;
	spread(&l, counts);
	assert_false(within_one_percent(counts[1]));
	assert_int_equal(counts[1], 2702 * 10 + 7);
	assert_int_equal(counts[0], 2702 * 9 + 6);
}

static void
test_regress_borrow(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	int64_t		u = 123456789;

	(void) state;
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 1);
	expect_id(&l, &st, T - 3, COSID_NEXT_BORROWED, u, 2);
	expect_id(&l, &st, T - 5, COSID_NEXT_BORROWED, u, 3);
	expect_id(&l, &st, T - 1, COSID_NEXT_BORROWED, u, 4);
	/* the clock is back on the last unit: plain OK, sequence goes on */
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 5);
	/* behind a later unit: measured from that unit */
	expect_id(&l, &st, T + 10, COSID_NEXT_OK, u + 10, 6);
	expect_id(&l, &st, T + 7, COSID_NEXT_BORROWED, u + 10, 7);
	expect_id(&l, &st, T + 5, COSID_NEXT_BORROWED, u + 10, 8);
	expect_stop(&l, &default_policy, &open_window, &st, T + 4,
				COSID_NEXT_WAIT_CLOCK, T + 10);
}

static void
test_regress_wait_and_fail(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	CosidClockPolicy custom = {10, 20};
	int64_t		u = 123456789;
	int64_t		unit;
	int64_t		seq;
	int64_t		wait;

	(void) state;
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 1);
	expect_stop(&l, &default_policy, &open_window, &st, T - 6,
				COSID_NEXT_WAIT_CLOCK, T);
	expect_stop(&l, &default_policy, &open_window, &st, T - 500,
				COSID_NEXT_WAIT_CLOCK, T);
	expect_stop(&l, &default_policy, &open_window, &st, T - 1000,
				COSID_NEXT_WAIT_CLOCK, T);
	expect_stop(&l, &default_policy, &open_window, &st, T - 1001,
				COSID_NEXT_CLOCK_BACKWARDS, 1001);
	expect_stop(&l, &default_policy, &open_window, &st, T - 86400000,
				COSID_NEXT_CLOCK_BACKWARDS, 86400000);
	/* a clock far back, even before the epoch, is a regression */
	expect_stop(&l, &default_policy, &open_window, &st, E - 5,
				COSID_NEXT_CLOCK_BACKWARDS, T - E + 5);
	expect_id(&l, &st, T, COSID_NEXT_OK, u, 2);

	/* FAIL: 0/0 */
	expect_stop(&l, &fail_policy, &open_window, &st, T - 1,
				COSID_NEXT_CLOCK_BACKWARDS, 1);
	expect_stop(&l, &fail_policy, &open_window, &st, T - 2,
				COSID_NEXT_CLOCK_BACKWARDS, 2);
	assert_int_equal(cosid_time_next(&l, &fail_policy, &open_window, &st, T,
									 &unit, &seq, &wait), COSID_NEXT_OK);
	assert_int_equal(unit, u);
	assert_int_equal(seq, 3);

	/* another policy's edges */
	expect_stop(&l, &custom, &open_window, &st, T - 11,
				COSID_NEXT_WAIT_CLOCK, T);
	expect_stop(&l, &custom, &open_window, &st, T - 20,
				COSID_NEXT_WAIT_CLOCK, T);
	expect_stop(&l, &custom, &open_window, &st, T - 21,
				COSID_NEXT_CLOCK_BACKWARDS, 21);
	assert_int_equal(cosid_time_next(&l, &custom, &open_window, &st,
									 T - 10, &unit, &seq, &wait),
					 COSID_NEXT_BORROWED);
	assert_int_equal(unit, u);
	assert_int_equal(seq, 4);
}

static void
test_regress_borrow_exhausted(void **state)
{
	CosidLayout tiny = make_layout(E, 1, 41, 10, 2, 1);
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	int64_t		u = 123456789;
	int64_t		first;
	int64_t		unit;
	int64_t		wait;
	CosidNextResult res;

	(void) state;
	expect_id(&tiny, &st, T, COSID_NEXT_OK, u, 1);
	expect_id(&tiny, &st, T - 1, COSID_NEXT_BORROWED, u, 2);
	expect_id(&tiny, &st, T - 2, COSID_NEXT_BORROWED, u, 3);
	expect_stop(&tiny, &default_policy, &open_window, &st, T - 1,
				COSID_NEXT_WAIT_CLOCK, T + 1);
	expect_stop(&tiny, &default_policy, &open_window, &st, T - 5,
				COSID_NEXT_WAIT_CLOCK, T + 1);
	expect_stop(&tiny, &default_policy, &open_window, &st, T,
				COSID_NEXT_WAIT_SEQUENCE, T + 1);
	expect_id(&tiny, &st, T + 1, COSID_NEXT_OK, u + 1, 1);

	/* the same with a full 12-bit sequence */
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T, 4096, &first, &unit, &res,
										  &wait), 4095);
	expect_stop(&l, &default_policy, &open_window, &st, T - 3,
				COSID_NEXT_WAIT_CLOCK, T + 1);

	/* a seconds layout borrows from the unit's start, not the last clock */
	l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_S);
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	expect_id(&l, &st, X + 700, COSID_NEXT_OK, 5000, 1);
	expect_id(&l, &st, X + 100, COSID_NEXT_OK, 5000, 2);
	expect_id(&l, &st, X - 3, COSID_NEXT_BORROWED, 5000, 3);
	expect_id(&l, &st, X - 5, COSID_NEXT_BORROWED, 5000, 4);
	expect_stop(&l, &default_policy, &open_window, &st, X - 6,
				COSID_NEXT_WAIT_CLOCK, X);
	expect_stop(&l, &default_policy, &open_window, &st, X - 1000,
				COSID_NEXT_WAIT_CLOCK, X);
	expect_stop(&l, &default_policy, &open_window, &st, X - 1001,
				COSID_NEXT_CLOCK_BACKWARDS, 1001);
	/* exhausted borrowed second: wait for the next second */
	st.seq = (INT64_C(1) << 22) - 1;
	expect_stop(&l, &default_policy, &open_window, &st, X - 2,
				COSID_NEXT_WAIT_CLOCK, X + 1000);
}

static void
test_window(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout s = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_S);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	CosidWindow w;
	CosidClockPolicy slow = {5, 4000};
	int64_t		unit;
	int64_t		seq;
	int64_t		wait;

	(void) state;

	/* the end */
	w = (CosidWindow) {0, T, 1000};
	expect_stop(&l, &default_policy, &w, &st, T, COSID_NEXT_WINDOW_ENDED, -7);
	expect_stop(&l, &default_policy, &w, &st, T + 1000, COSID_NEXT_WINDOW_ENDED, -7);
	assert_int_equal(cosid_time_next(&l, &default_policy, &w, &st, T - 1,
									 &unit, &seq, &wait), COSID_NEXT_OK);
	assert_int_equal(unit, 123456788);
	assert_int_equal(seq, 1);
	expect_stop(&l, &default_policy, &w, &st, T, COSID_NEXT_WINDOW_ENDED, -7);

	/* a start ahead of the clock, in ms */
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	w = (CosidWindow) {T + 300, INT64_MAX, 1000};
	expect_stop(&l, &default_policy, &w, &st, T, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &default_policy, &w, &st, T + 299, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &default_policy, &w, &st, T - 700, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &default_policy, &w, &st, T - 701, COSID_NEXT_BEFORE_WINDOW, 1001);
	expect_stop(&l, &default_policy, &w, &st, T + 300 - 30000,
				COSID_NEXT_BEFORE_WINDOW, 30000);
	/* the larger of open_wait and the clock policy's wait */
	w.open_wait_ms = 5000;
	expect_stop(&l, &default_policy, &w, &st, T - 2700, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &default_policy, &w, &st, T - 4700, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &default_policy, &w, &st, T - 4701, COSID_NEXT_BEFORE_WINDOW, 5001);
	w.open_wait_ms = 1000;
	expect_stop(&l, &slow, &w, &st, T - 3700, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &slow, &w, &st, T - 3701, COSID_NEXT_BEFORE_WINDOW, 4001);
	expect_stop(&l, &fail_policy, &w, &st, T - 700, COSID_NEXT_WAIT_WINDOW, T + 300);
	expect_stop(&l, &fail_policy, &w, &st, T - 701, COSID_NEXT_BEFORE_WINDOW, 1001);
	/* ids once the clock reaches the start */
	{
		int64_t		u = 123456789 + 300;

		assert_int_equal(cosid_time_next(&l, &default_policy, &w, &st, T + 300,
										 &unit, &seq, &wait), COSID_NEXT_OK);
		assert_int_equal(unit, u);
		assert_int_equal(seq, 1);
		assert_int_equal(cosid_time_next(&l, &default_policy, &w, &st, T + 301,
										 &unit, &seq, &wait), COSID_NEXT_OK);
		assert_int_equal(unit, u + 1);
		assert_int_equal(seq, 2);
	}

	/* seconds: a unit is issued only if it starts inside the window */
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	w = (CosidWindow) {X + 500, INT64_MAX, 1000};
	expect_stop(&s, &default_policy, &w, &st, X + 600, COSID_NEXT_WAIT_WINDOW, X + 1000);
	expect_stop(&s, &default_policy, &w, &st, X + 500, COSID_NEXT_WAIT_WINDOW, X + 1000);
	expect_stop(&s, &default_policy, &w, &st, X + 999, COSID_NEXT_WAIT_WINDOW, X + 1000);
	expect_stop(&s, &default_policy, &w, &st, X, COSID_NEXT_WAIT_WINDOW, X + 1000);
	expect_stop(&s, &default_policy, &w, &st, X - 1, COSID_NEXT_BEFORE_WINDOW, 1001);
	assert_int_equal(cosid_time_next(&s, &default_policy, &w, &st, X + 1000,
									 &unit, &seq, &wait), COSID_NEXT_OK);
	assert_int_equal(unit, 5001);
	assert_int_equal(seq, 1);
	/* a start on a unit boundary opens that unit */
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	w = (CosidWindow) {X, INT64_MAX, 1000};
	expect_stop(&s, &default_policy, &w, &st, X - 1, COSID_NEXT_WAIT_WINDOW, X);
	assert_int_equal(cosid_time_next(&s, &default_policy, &w, &st, X,
									 &unit, &seq, &wait), COSID_NEXT_OK);
	assert_int_equal(unit, 5000);
	assert_int_equal(seq, 1);
}

static void
test_epoch_and_overflow(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout s = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_S);
	CosidLayout small = make_layout(0, 1, 2, 0, 4, 7);
	CosidLayout small_s = make_layout(0, 1000, 2, 0, 1, 0);
	CosidTimeState st = COSID_TIME_STATE_INIT;

	(void) state;
	expect_stop(&l, &default_policy, &open_window, &st, E - 1,
				COSID_NEXT_BEFORE_EPOCH, -7);
	expect_stop(&l, &default_policy, &open_window, &st, 0,
				COSID_NEXT_BEFORE_EPOCH, -7);
	expect_stop(&s, &default_policy, &open_window, &st, E - 1,
				COSID_NEXT_BEFORE_EPOCH, -7);
	expect_id(&l, &st, E, COSID_NEXT_OK, 0, 1);
	/* once unit 0 is issued, a clock before the epoch is a regression */
	expect_id(&l, &st, E - 3, COSID_NEXT_BORROWED, 0, 2);
	expect_stop(&l, &default_policy, &open_window, &st, E - 6,
				COSID_NEXT_WAIT_CLOCK, E);
	expect_stop(&l, &default_policy, &open_window, &st, E - 1001,
				COSID_NEXT_CLOCK_BACKWARDS, 1001);

	/* time_bits 2: units 0..3 */
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	assert_int_equal(cosid_layout_max_time(&small), 3);
	expect_id(&small, &st, 0, COSID_NEXT_OK, 0, 1);
	expect_id(&small, &st, 3, COSID_NEXT_OK, 3, 2);
	expect_stop(&small, &default_policy, &open_window, &st, 4,
				COSID_NEXT_TIME_OVERFLOW, -7);
	expect_stop(&small, &default_policy, &open_window, &st, 1000,
				COSID_NEXT_TIME_OVERFLOW, -7);
	st.seq = 15;
	expect_stop(&small, &default_policy, &open_window, &st, 3,
				COSID_NEXT_WAIT_SEQUENCE, 4);

	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	expect_id(&small_s, &st, 3999, COSID_NEXT_OK, 3, 1);
	expect_stop(&small_s, &default_policy, &open_window, &st, 4000,
				COSID_NEXT_TIME_OVERFLOW, -7);
}

static void
test_next_many(void **state)
{
	CosidLayout l = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	CosidTimeState st = COSID_TIME_STATE_INIT;
	int64_t		first = -7;
	int64_t		unit = -7;
	int64_t		wait = -7;
	CosidNextResult res = COSID_NEXT_TIME_OVERFLOW;
	CosidWindow ended = {0, T, 1000};

	(void) state;
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T, 10000, &first, &unit, &res,
										  &wait), 4095);
	assert_int_equal(res, COSID_NEXT_OK);
	assert_int_equal(unit, 123456789);
	assert_int_equal(wait, -7);
	/* ids 1..4095: the first and the count say it all */
	assert_int_equal(first, 1);
	assert_int_equal(st.last_unit, 123456789);
	assert_int_equal(st.seq, 4095);
	expect_stop(&l, &default_policy, &open_window, &st, T,
				COSID_NEXT_WAIT_SEQUENCE, T + 1);
	first = -7;
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T, 10, &first, &unit, &res,
										  &wait), 0);
	assert_int_equal(res, COSID_NEXT_WAIT_SEQUENCE);
	assert_int_equal(wait, T + 1);
	assert_int_equal(first, -7);
	assert_int_equal(st.seq, 4095);

	/* n smaller than what is left */
	st = (CosidTimeState) COSID_TIME_STATE_INIT;
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T, 100, &first, &unit, &res,
										  &wait), 100);
	assert_int_equal(res, COSID_NEXT_OK);
	assert_int_equal(first, 1);
	assert_int_equal(first + 99, 100);
	assert_int_equal(st.seq, 100);
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T, 10, &first, &unit, &res,
										  &wait), 10);
	assert_int_equal(first, 101);
	/* the next unit carries on below the threshold */
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T + 1, 5, &first, &unit, &res,
										  &wait), 5);
	assert_int_equal(unit, 123456790);
	assert_int_equal(first, 111);
	assert_int_equal(first + 4, 115);
	/* exactly what is left */
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T + 1, 4095 - 115, &first, &unit,
										  &res, &wait), 4095 - 115);
	assert_int_equal(first + 4095 - 116, 4095);
	assert_int_equal(st.seq, 4095);
	/* one id */
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T + 2, 1, &first, &unit, &res,
										  &wait), 1);
	assert_int_equal(first, 1);
	assert_int_equal(unit, 123456791);

	/* borrowed */
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T, 3, &first, &unit, &res,
										  &wait), 3);
	assert_int_equal(res, COSID_NEXT_BORROWED);
	assert_int_equal(unit, 123456791);
	assert_int_equal(first, 2);
	assert_int_equal(first + 2, 4);
	assert_int_equal(st.seq, 4);

	/* stopped by the window */
	unit = -7;
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &ended,
										  &st, T + 5, 3, &first, &unit, &res,
										  &wait), 0);
	assert_int_equal(res, COSID_NEXT_WINDOW_ENDED);
	assert_int_equal(unit, -7);
	assert_int_equal(st.last_unit, 123456791);
	assert_int_equal(st.seq, 4);

	/* n = 0 issues nothing */
	assert_int_equal(cosid_time_next_many(&l, &default_policy, &open_window,
										  &st, T + 5, 0, &first, &unit, &res,
										  &wait), 0);
	assert_int_equal(st.last_unit, 123456791);
	assert_int_equal(st.seq, 4);
}

/*
 * A long randomized run against a model of the sequence rules: the clock
 * mostly advances, sometimes stays, sometimes goes back up to 8 ms, and
 * sometimes honours the wait it was given.
 */
static void
random_run(const CosidLayout *l, uint64_t seed, int64_t *counts)
{
	CosidTimeState st = COSID_TIME_STATE_INIT;
	Xorshift	x = {seed};
	int64_t		now = T;
	int64_t		max_id = -1;
	int64_t		max_seq = cosid_layout_max_seq(l);
	int			i;

	for (i = 0; i < 200000; i++)
	{
		CosidTimeState before = st;
		uint64_t	r = xs_next(&x);
		int			roll = (int) (r % 100);
		int64_t		unit = -7;
		int64_t		seq = -7;
		int64_t		wait = -7;
		int64_t		now_unit;
		CosidNextResult res;

		if (roll < 55)
			now += 1;
		else if (roll < 60)
			now += 1 + (int64_t) ((r >> 8) % 20);
		else if (roll < 90)
			;
		else
			now -= 1 + (int64_t) ((r >> 8) % 8);

		now_unit = cosid_unit_of(l, now);
		res = step(l, &st, now, &unit, &seq, &wait);
		counts[res]++;
		switch (res)
		{
			case COSID_NEXT_OK:
			case COSID_NEXT_BORROWED:
				{
					int64_t		id = cosid_layout_pack(l, unit, 1, seq);

					assert_true(id > max_id);
					max_id = id;
					assert_int_equal(st.last_unit, unit);
					assert_int_equal(st.seq, seq);
					if (res == COSID_NEXT_BORROWED)
					{
						assert_true(now_unit < before.last_unit);
						assert_true(cosid_unit_start_ms(l, before.last_unit) - now
									<= COSID_DEFAULT_BORROW_MS);
						assert_int_equal(unit, before.last_unit);
						assert_int_equal(seq, before.seq + 1);
					}
					else if (now_unit == before.last_unit)
					{
						assert_int_equal(unit, now_unit);
						assert_int_equal(seq, before.seq + 1);
					}
					else
					{
						assert_true(now_unit > before.last_unit);
						assert_int_equal(unit, now_unit);
						assert_int_equal(seq, before.seq >= l->seq_reset_threshold ?
										 1 : before.seq + 1);
					}
					break;
				}
			case COSID_NEXT_WAIT_SEQUENCE:
				assert_int_equal(st.last_unit, before.last_unit);
				assert_int_equal(st.seq, before.seq);
				assert_int_equal(before.last_unit, now_unit);
				assert_int_equal(before.seq, max_seq);
				assert_int_equal(wait, cosid_unit_start_ms(l, now_unit + 1));
				if (r & (UINT64_C(1) << 40))
					now = wait;
				break;
			case COSID_NEXT_WAIT_CLOCK:
				assert_int_equal(st.last_unit, before.last_unit);
				assert_int_equal(st.seq, before.seq);
				assert_true(now_unit < before.last_unit);
				if (before.seq == max_seq &&
					cosid_unit_start_ms(l, before.last_unit) - now <= COSID_DEFAULT_BORROW_MS)
					assert_int_equal(wait, cosid_unit_start_ms(l, before.last_unit + 1));
				else
				{
					assert_true(cosid_unit_start_ms(l, before.last_unit) - now >
								COSID_DEFAULT_BORROW_MS);
					assert_int_equal(wait, cosid_unit_start_ms(l, before.last_unit));
				}
				if (r & (UINT64_C(1) << 40))
					now = wait;
				break;
			case COSID_NEXT_CLOCK_BACKWARDS:
				assert_int_equal(st.last_unit, before.last_unit);
				assert_int_equal(st.seq, before.seq);
				assert_int_equal(wait, cosid_unit_start_ms(l, before.last_unit) - now);
				break;
			default:
				fail_msg("unexpected result %d at call %d", (int) res, i);
		}
	}
}

static void
test_random_run(void **state)
{
	CosidLayout layouts[3];
	int			k;

	(void) state;
	layouts[0] = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	layouts[1] = make_layout(E, 1, 41, 10, 3, 3);
	layouts[2] = make_layout(E, 1000, 31, 10, 6, 31);
	for (k = 0; k < 3; k++)
	{
		int64_t		counts[COSID_NEXT_BEFORE_EPOCH + 1];

		memset(counts, 0, sizeof(counts));
		random_run(&layouts[k], UINT64_C(0x2545F4914F6CDD1D) + (uint64_t) k,
				   counts);
		/* the run went through the interesting paths */
		assert_true(counts[COSID_NEXT_OK] > 1000);
		assert_true(counts[COSID_NEXT_BORROWED] > 100);
		assert_true(counts[COSID_NEXT_WAIT_CLOCK] > 100);
		if (k > 0)
			assert_true(counts[COSID_NEXT_WAIT_SEQUENCE] > 100);
	}
}

/* --------------------------------------------------------------- duration */

static void
expect_duration(const char *s, int64_t want)
{
	int64_t		ms = -7;

	if (!cosid_parse_duration_ms(s, &ms))
		fail_msg("\"%s\" rejected", s);
	assert_int_equal(ms, want);
}

static void
expect_bad_duration(const char *s)
{
	int64_t		ms = -7;

	if (cosid_parse_duration_ms(s, &ms))
		fail_msg("\"%s\" accepted as %lld", s, (long long) ms);
}

static void
test_duration(void **state)
{
	(void) state;
	expect_duration("5ms", 5);
	expect_duration("1s", 1000);
	expect_duration("2m", 120000);
	expect_duration("1h", 3600000);
	expect_duration("1500us", 2);
	expect_duration("1000us", 1);
	expect_duration("1us", 1);
	expect_duration("0us", 0);
	expect_duration("0ms", 0);
	expect_duration("0s", 0);
	expect_duration("60s", 60000);
	expect_duration("007ms", 7);
	expect_duration("5MS", 5);
	expect_duration("5Ms", 5);
	expect_duration("1S", 1000);
	expect_duration("2M", 120000);
	expect_duration("1H", 3600000);
	expect_duration("1500US", 2);

	expect_bad_duration("");
	expect_bad_duration("ms");
	expect_bad_duration("5");
	expect_bad_duration("5 ms");
	expect_bad_duration("5ms ");
	expect_bad_duration("5m s");
	expect_bad_duration("-5ms");
	expect_bad_duration("+5ms");
	expect_bad_duration("5parsecs");
	expect_bad_duration("5msx");
	expect_bad_duration("5sec");
	expect_bad_duration("5ns");
	expect_bad_duration("5d");
	expect_bad_duration("1.5s");
	expect_bad_duration("0x10ms");
	expect_bad_duration("999999999999999999s");
	expect_bad_duration("9223372036854775807ms");
	expect_bad_duration("99999999999999999999999999999h");
}

/* ---------------------------------------------------------------- u128 */

static void
expect_u128(uint64_t hi, uint64_t lo, const char *text)
{
	char		buf[48];
	uint64_t	h = 7;
	uint64_t	l = 7;

	memset(buf, 'x', sizeof(buf));
	cosid_u128_decimal(hi, lo, buf);
	assert_string_equal(buf, text);
	assert_int_equal(buf[strlen(text) + 1], 'x');
	assert_true(cosid_u128_parse(text, strlen(text), &h, &l));
	assert_int_equal(h, hi);
	assert_int_equal(l, lo);
}

static void
expect_bad_u128(const char *text)
{
	uint64_t	h = 7;
	uint64_t	l = 7;

	if (cosid_u128_parse(text, strlen(text), &h, &l))
		fail_msg("\"%s\" accepted", text);
}

static void
test_u128(void **state)
{
	uint64_t	h;
	uint64_t	l;
	char		buf[40];
	Xorshift	x = {UINT64_C(0xDEADBEEFCAFEF00D)};
	int			i;

	(void) state;
	expect_u128(0, 0, "0");
	expect_u128(0, 1, "1");
	expect_u128(0, 9, "9");
	expect_u128(0, 10, "10");
	expect_u128(0, UINT64_MAX, "18446744073709551615");
	expect_u128(1, 0, "18446744073709551616");
	expect_u128(UINT64_C(0xFFFF), UINT64_MAX, "1208925819614629174706175");
	expect_u128(UINT64_C(0x10000), 0, "1208925819614629174706176");
	expect_u128(UINT64_MAX, UINT64_MAX - 1,
				"340282366920938463463374607431768211454");
	expect_u128(UINT64_MAX, UINT64_MAX,
				"340282366920938463463374607431768211455");
	expect_u128(UINT64_C(0x4B3B4CA85A86C47A), UINT64_C(0x098A224000000000),
				"100000000000000000000000000000000000000");

	/* the longest text fills the 40-byte buffer */
	cosid_u128_decimal(UINT64_MAX, UINT64_MAX, buf);
	assert_int_equal(strlen(buf), 39);

	/* leading zeros; len bounds what is read */
	assert_true(cosid_u128_parse("000000000000000000000000000000000000000000042",
								 45, &h, &l));
	assert_int_equal(h, 0);
	assert_int_equal(l, 42);
	assert_true(cosid_u128_parse("123xyz", 3, &h, &l));
	assert_int_equal(h, 0);
	assert_int_equal(l, 123);
	assert_false(cosid_u128_parse("123xyz", 4, &h, &l));
	assert_false(cosid_u128_parse("5", 0, &h, &l));

	expect_bad_u128("");
	expect_bad_u128("12a");
	expect_bad_u128("a12");
	expect_bad_u128("1 2");
	expect_bad_u128(" 12");
	expect_bad_u128("12 ");
	expect_bad_u128("+1");
	expect_bad_u128("-1");
	expect_bad_u128("-0");
	expect_bad_u128("340282366920938463463374607431768211456");
	expect_bad_u128("340282366920938463463374607431768211460");
	expect_bad_u128("999999999999999999999999999999999999999");
	expect_bad_u128("1000000000000000000000000000000000000000");
	expect_bad_u128("3402823669209384634633746074317682114550");

	/* round trips: shifts of one bit, and random values */
	for (i = 0; i < 128; i++)
	{
		uint64_t	hi = i >= 64 ? UINT64_C(1) << (i - 64) : 0;
		uint64_t	lo = i < 64 ? UINT64_C(1) << i : 0;

		cosid_u128_decimal(hi, lo, buf);
		assert_true(cosid_u128_parse(buf, strlen(buf), &h, &l));
		assert_int_equal(h, hi);
		assert_int_equal(l, lo);
	}
	for (i = 0; i < 10000; i++)
	{
		int			shift = (int) (xs_next(&x) % 64);
		uint64_t	hi = xs_next(&x) >> shift;
		uint64_t	lo = xs_next(&x);

		cosid_u128_decimal(hi, lo, buf);
		assert_true(cosid_u128_parse(buf, strlen(buf), &h, &l));
		assert_int_equal(h, hi);
		assert_int_equal(l, lo);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_preset_find),
		cmocka_unit_test(test_default_threshold),
		cmocka_unit_test(test_layout_check_valid),
		cmocka_unit_test(test_layout_check_errors),
		cmocka_unit_test(test_pack64),
		cmocka_unit_test(test_pack128),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_seq_threshold_cycle),
		cmocka_unit_test(test_seq_same_unit),
		cmocka_unit_test(test_seq_spread),
		cmocka_unit_test(test_regress_borrow),
		cmocka_unit_test(test_regress_wait_and_fail),
		cmocka_unit_test(test_regress_borrow_exhausted),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_epoch_and_overflow),
		cmocka_unit_test(test_next_many),
		cmocka_unit_test(test_random_run),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_u128),
	};

	return cmocka_run_group_tests_name("timegen", tests, NULL, NULL);
}

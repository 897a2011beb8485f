/*
 * test_backoff.c - cmocka unit tests for src/core/backoff.c: the delays of
 * consecutive failures, the log-rate rule and the start over on success.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/backoff.h"

/* 100 ms doubling, capped at 2 s, also for absurd failure counts. */
static void
test_delays(void **state)
{
	(void) state;
	assert_int_equal(cosid_backoff_delay_ms(1), 100);
	assert_int_equal(cosid_backoff_delay_ms(2), 200);
	assert_int_equal(cosid_backoff_delay_ms(3), 400);
	assert_int_equal(cosid_backoff_delay_ms(4), 800);
	assert_int_equal(cosid_backoff_delay_ms(5), 1600);
	assert_int_equal(cosid_backoff_delay_ms(6), 2000);
	assert_int_equal(cosid_backoff_delay_ms(7), 2000);
	assert_int_equal(cosid_backoff_delay_ms(64), 2000);
	assert_int_equal(cosid_backoff_delay_ms(UINT32_MAX), 2000);
	/* 0 is not a failure count; it waits as little as one */
	assert_int_equal(cosid_backoff_delay_ms(0), 100);
}

/*
 * Equal jitter: between half and all of the delay, from the random draw's
 * share; the ends are exact, the middle is the middle, and every delay of
 * the schedule (odd halves too) stays in its range.
 */
static void
test_jitter(void **state)
{
	uint32_t	f;

	(void) state;
	assert_int_equal(cosid_backoff_jitter(100, 0), 50);
	assert_int_equal(cosid_backoff_jitter(100, UINT32_MAX), 100);
	assert_int_equal(cosid_backoff_jitter(100, UINT32_MAX / 2), 74);
	assert_int_equal(cosid_backoff_jitter(2000, UINT32_MAX / 4), 1249);
	assert_int_equal(cosid_backoff_jitter(101, 0), 51);
	assert_int_equal(cosid_backoff_jitter(101, UINT32_MAX), 101);
	assert_int_equal(cosid_backoff_jitter(1, 0), 1);
	assert_int_equal(cosid_backoff_jitter(0, UINT32_MAX), 0);
	assert_int_equal(cosid_backoff_jitter(-5, UINT32_MAX), 0);
	for (f = 1; f <= 8; f++)
	{
		int32_t		d = cosid_backoff_delay_ms(f);
		uint32_t	r;

		for (r = 0; r < 64; r++)
		{
			int32_t		j = cosid_backoff_jitter(d, r * (UINT32_MAX / 63));

			assert_true(j >= d - d / 2);
			assert_true(j <= d);
		}
	}
}

/*
 * A failure with a low draw waits less than the whole delay, and when the
 * next try may be made follows the jittered wait, not the delay.
 */
static void
test_failure_jittered(void **state)
{
	CosidBackoff b;
	CosidBackoffStep s;
	int64_t		now = 5000;

	(void) state;
	cosid_backoff_init(&b);
	s = cosid_backoff_failed(&b, now, 0);
	assert_int_equal(s.delay_ms, 50);
	assert_false(cosid_backoff_may_try(&b, now + 49));
	assert_true(cosid_backoff_may_try(&b, now + 50));
	s = cosid_backoff_failed(&b, now + 50, UINT32_MAX / 2);
	assert_int_equal(s.delay_ms, 149);
	assert_int_equal(b.retry_at_ms, now + 50 + 149);
	/* the failure count and the log rule do not depend on the draw */
	assert_int_equal(b.failures, 2);
	assert_true(s.report);
}

/* Each failure waits longer and sets when the next try may be made. */
static void
test_failures_wait(void **state)
{
	CosidBackoff b;
	CosidBackoffStep s;
	int64_t		now = 1000000;

	(void) state;
	cosid_backoff_init(&b);
	assert_true(cosid_backoff_may_try(&b, now));
	s = cosid_backoff_failed(&b, now, UINT32_MAX);
	assert_int_equal(s.delay_ms, 100);
	assert_false(cosid_backoff_may_try(&b, now + 99));
	assert_true(cosid_backoff_may_try(&b, now + 100));
	s = cosid_backoff_failed(&b, now + 100, UINT32_MAX);
	assert_int_equal(s.delay_ms, 200);
	assert_false(cosid_backoff_may_try(&b, now + 299));
	assert_true(cosid_backoff_may_try(&b, now + 300));
}

/*
 * Lines at failures 1, 2, 4, 8, ... with the count of those left out in
 * between: over an hour of failures every 2 s, a dozen lines at most, and
 * every failure is counted in some line.
 */
static void
test_report_rate(void **state)
{
	CosidBackoff b;
	int64_t		now = 0;
	uint32_t	lines = 0,
				counted = 0,
				n;

	(void) state;
	cosid_backoff_init(&b);
	for (n = 1; now < 3600 * 1000; n++)
	{
		CosidBackoffStep s = cosid_backoff_failed(&b, now, UINT32_MAX);

		if (s.report)
		{
			lines++;
			counted += 1 + s.repeats;
			assert_true((n & (n - 1)) == 0);
			/* the line before was at n / 2: the ones between were left out */
			assert_int_equal(s.repeats, n == 1 ? 0 : n / 2 - 1);
		}
		now += s.delay_ms;
	}
	n--;
	assert_true(lines <= 12);
	assert_true(lines >= 10);
	/* the failures after the last line are still pending */
	assert_int_equal(counted + b.unreported, n);
}

/* A success says how many failures it ends, and starts over. */
static void
test_success_starts_over(void **state)
{
	CosidBackoff b;
	CosidBackoffStep s;

	(void) state;
	cosid_backoff_init(&b);
	assert_int_equal(cosid_backoff_succeeded(&b), 0);
	for (int i = 0; i < 5; i++)
		(void) cosid_backoff_failed(&b, 0, UINT32_MAX);
	assert_int_equal(cosid_backoff_succeeded(&b), 5);
	assert_true(cosid_backoff_may_try(&b, 0));
	s = cosid_backoff_failed(&b, 0, UINT32_MAX);
	assert_int_equal(s.delay_ms, 100);
	assert_true(s.report);
	assert_int_equal(s.repeats, 0);
}

/* The count saturates instead of wrapping to 0 (which means "working"). */
static void
test_saturates(void **state)
{
	CosidBackoff b;

	(void) state;
	cosid_backoff_init(&b);
	b.failures = UINT32_MAX - 1;
	(void) cosid_backoff_failed(&b, 0, UINT32_MAX);
	(void) cosid_backoff_failed(&b, 0, UINT32_MAX);
	assert_int_equal(b.failures, UINT32_MAX);
	assert_false(cosid_backoff_may_try(&b, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delays),
		cmocka_unit_test(test_failures_wait),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_failure_jittered),
		cmocka_unit_test(test_report_rate),
		cmocka_unit_test(test_success_starts_over),
		cmocka_unit_test(test_saturates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

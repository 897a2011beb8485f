/*
 * test_codec.c - cmocka unit tests for the codecs of src/core (radix.c,
 * datetext.c, parts.c, grouped.c, codec.c), json.c, and a layout's ids and
 * times (timegen.c).
 *
 * Every expected text below was computed independently (by hand or with a
 * few lines of Python) from CosId's rules, not by running this code.
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

#define MSGLEN 256

/* ---------- helpers ---------- */

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

/* A tracking arena: every block is freed by arena_free. */
typedef struct Arena
{
	void	   *blocks[4096];
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
		a->blocks[a->n++] = p;
	return p;
}

static void
arena_init(Arena *a)
{
	a->n = 0;
	a->fail_after = -1;
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

/* p is the start of one of the arena's blocks. */
static bool
in_arena(const Arena *a, const void *p)
{
	for (int i = 0; i < a->n; i++)
		if (a->blocks[i] == p)
			return true;
	return false;
}

static CosidTm
make_tm(int y, int mo, int d, int h, int mi, int s, int ms)
{
	CosidTm		tm;

	tm.year = y;
	tm.month = mo;
	tm.day = d;
	tm.hour = h;
	tm.minute = mi;
	tm.second = s;
	tm.millis = ms;
	return tm;
}

static void
assert_tm(const CosidTm *tm, int y, int mo, int d, int h, int mi, int s, int ms)
{
	assert_int_equal(tm->year, y);
	assert_int_equal(tm->month, mo);
	assert_int_equal(tm->day, d);
	assert_int_equal(tm->hour, h);
	assert_int_equal(tm->minute, mi);
	assert_int_equal(tm->second, s);
	assert_int_equal(tm->millis, ms);
}

static CosidRadix
rx(int radix, int width, bool pad)
{
	CosidRadix	r;

	r.radix = radix;
	r.width = width;
	r.pad_start = pad;
	return r;
}

static void
expect_encode(int radix, int width, bool pad, int64_t v, const char *want)
{
	CosidRadix	r = rx(radix, width, pad);
	char		buf[80];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(cosid_radix_encode(&r, v, buf), (int) strlen(want));
	assert_string_equal(buf, want);
}

static void
expect_decode(int radix, int width, bool pad, const char *s, int64_t want)
{
	CosidRadix	r = rx(radix, width, pad);
	int64_t		v = -7;
	char		msg[MSGLEN] = "untouched";

	assert_int_equal(cosid_radix_decode(&r, s, strlen(s), (uint64_t) INT64_MAX,
										&v, msg, sizeof(msg)), COSID_DECODE_OK);
	assert_int_equal(v, want);
}

static void
expect_decode_fail(int radix, int width, bool pad, const char *s, size_t len,
				   uint64_t max, CosidDecodeResult res, const char *want_msg)
{
	CosidRadix	r = rx(radix, width, pad);
	int64_t		v = -7;
	char		msg[MSGLEN];

	memset(msg, 'x', sizeof(msg));
	assert_int_equal(cosid_radix_decode(&r, s, len, max, &v, msg, sizeof(msg)),
					 res);
	assert_string_equal(msg, want_msg);
	assert_int_equal(v, -7);
}

/* ---------- radix ---------- */

static void
test_radix_widths(void **state)
{
	(void) state;
	assert_int_equal(cosid_radix_default_width(62), 11);
	assert_int_equal(cosid_radix_default_width(36), 13);
	assert_int_equal(cosid_radix_default_width(10), 19);
	assert_int_equal(cosid_radix_default_width(16), 16);
	assert_int_equal(cosid_radix_default_width(2), 63);
	assert_int_equal(cosid_radix_default_width(1), -1);
	assert_int_equal(cosid_radix_default_width(63), -1);

	assert_int_equal(cosid_radix_width_for_bits(62, 44), 8);
	assert_int_equal(cosid_radix_width_for_bits(62, 20), 4);
	assert_int_equal(cosid_radix_width_for_bits(62, 16), 3);
	assert_int_equal(cosid_radix_width_for_bits(62, 12), 3);
	assert_int_equal(cosid_radix_width_for_bits(62, 10), 2);
	assert_int_equal(cosid_radix_width_for_bits(62, 41), 7);
	assert_int_equal(cosid_radix_width_for_bits(36, 44), 9);
	assert_int_equal(cosid_radix_width_for_bits(62, 0), 1);
	assert_int_equal(cosid_radix_width_for_bits(62, 1), 1);
	assert_int_equal(cosid_radix_width_for_bits(2, 1), 1);
	assert_int_equal(cosid_radix_width_for_bits(2, 64), 64);
	assert_int_equal(cosid_radix_width_for_bits(10, 64), 20);
	assert_int_equal(cosid_radix_width_for_bits(62, -1), -1);
	assert_int_equal(cosid_radix_width_for_bits(62, 65), -1);
	assert_int_equal(cosid_radix_width_for_bits(1, 8), -1);

	assert_int_equal(cosid_decimal_width_for_bits(10), 4);
	assert_int_equal(cosid_decimal_width_for_bits(12), 4);
	assert_int_equal(cosid_decimal_width_for_bits(20), 7);
	assert_int_equal(cosid_decimal_width_for_bits(16), 5);
	assert_int_equal(cosid_decimal_width_for_bits(3), 1);
	assert_int_equal(cosid_decimal_width_for_bits(9), 3);
	assert_int_equal(cosid_decimal_width_for_bits(19), 6);
	assert_int_equal(cosid_decimal_width_for_bits(22), 7);
	assert_int_equal(cosid_decimal_width_for_bits(31), 10);
	assert_int_equal(cosid_decimal_width_for_bits(62), 19);
	assert_int_equal(cosid_decimal_width_for_bits(63), 19);
	assert_int_equal(cosid_decimal_width_for_bits(0), 1);
}

static void
test_radix62_vectors(void **state)
{
	(void) state;
	expect_encode(62, 11, false, 0, "0");
	expect_encode(62, 11, false, 61, "z");
	expect_encode(62, 11, false, 62, "10");
	expect_encode(62, 11, false, 3843, "zz");
	expect_encode(62, 11, false, 3844, "100");
	expect_encode(62, 11, false, INT64_MAX, "AzL8n0Y58m7");
	expect_encode(62, 11, true, 0, "00000000000");
	expect_encode(62, 11, true, 61, "0000000000z");
	expect_encode(62, 11, true, 62, "00000000010");
	expect_encode(62, 11, true, 3843, "000000000zz");
	expect_encode(62, 11, true, 3844, "00000000100");
	expect_encode(62, 11, true, INT64_MAX, "AzL8n0Y58m7");

	expect_decode(62, 11, false, "0", 0);
	expect_decode(62, 11, false, "z", 61);
	expect_decode(62, 11, false, "10", 62);
	expect_decode(62, 11, false, "zz", 3843);
	expect_decode(62, 11, false, "100", 3844);
	expect_decode(62, 11, false, "AzL8n0Y58m7", INT64_MAX);
	expect_decode(62, 11, true, "00000000000", 0);
	expect_decode(62, 11, true, "0000000000z", 61);
	expect_decode(62, 11, true, "00000000010", 62);
	expect_decode(62, 11, true, "000000000zz", 3843);
	expect_decode(62, 11, true, "00000000100", 3844);
	expect_decode(62, 11, true, "AzL8n0Y58m7", INT64_MAX);

	/* One past INT64_MAX, and the largest 11 digits. */
	expect_decode_fail(62, 11, false, "AzL8n0Y58m8", 11, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(62, 11, true, "AzL8n0Y58m8", 11, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(62, 11, false, "zzzzzzzzzzz", 11, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(62, 11, false, "B0000000000", 11, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	/* A max above INT64_MAX is capped at it. */
	expect_decode_fail(62, 11, false, "AzL8n0Y58m8", 11, UINT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
}

static void
test_radix36_vectors(void **state)
{
	(void) state;
	expect_encode(36, 13, false, 0, "0");
	expect_encode(36, 13, false, 61, "1P");
	expect_encode(36, 13, false, 62, "1Q");
	expect_encode(36, 13, false, 3843, "2YR");
	expect_encode(36, 13, false, 3844, "2YS");
	expect_encode(36, 13, false, INT64_MAX, "1Y2P0IJ32E8E7");
	expect_encode(36, 13, true, 0, "0000000000000");
	expect_encode(36, 13, true, 61, "000000000001P");
	expect_encode(36, 13, true, 3844, "00000000002YS");
	expect_encode(36, 13, true, INT64_MAX, "1Y2P0IJ32E8E7");

	expect_decode(36, 13, false, "1P", 61);
	expect_decode(36, 13, false, "1Q", 62);
	expect_decode(36, 13, false, "2YR", 3843);
	expect_decode(36, 13, false, "2YS", 3844);
	expect_decode(36, 13, false, "1Y2P0IJ32E8E7", INT64_MAX);
	expect_decode(36, 13, true, "0000000000000", 0);
	expect_decode(36, 13, true, "00000000002YS", 3844);

	expect_decode_fail(36, 13, false, "1Y2P0IJ32E8E8", 13, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(36, 13, false, "ZZZZZZZZZZZZZ", 13, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	/* Lower case is a foreign digit up to base 36. */
	expect_decode_fail(36, 13, false, "1p", 2, (uint64_t) INT64_MAX,
					   COSID_DECODE_SYNTAX,
					   "character 2 (\"p\") is not a base-36 digit (upper case only)");
}

static void
test_radix_other_bases(void **state)
{
	char		ones[64];
	char		big[65];

	(void) state;
	expect_encode(10, 19, false, INT64_MAX, "9223372036854775807");
	expect_decode(10, 19, false, "9223372036854775807", INT64_MAX);
	expect_decode_fail(10, 19, false, "9223372036854775808", 19,
					   (uint64_t) INT64_MAX, COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(10, 19, false, "9999999999999999999", 19,
					   (uint64_t) INT64_MAX, COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_encode(16, 16, false, INT64_MAX, "7FFFFFFFFFFFFFFF");
	expect_encode(16, 16, true, 255, "00000000000000FF");
	expect_decode(16, 16, false, "7FFFFFFFFFFFFFFF", INT64_MAX);
	expect_decode_fail(16, 16, false, "8000000000000000", 16,
					   (uint64_t) INT64_MAX, COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(16, 16, false, "ff", 2, (uint64_t) INT64_MAX,
					   COSID_DECODE_SYNTAX,
					   "character 1 (\"f\") is not a base-16 digit (upper case only)");
	expect_decode_fail(16, 16, false, "FG", 2, (uint64_t) INT64_MAX,
					   COSID_DECODE_SYNTAX,
					   "character 2 (\"G\") is not a base-16 digit");

	/* Base 2: 63 ones is INT64_MAX; 2^63 needs 64 digits. */
	memset(ones, '1', 63);
	ones[63] = '\0';
	expect_encode(2, 63, false, INT64_MAX, ones);
	expect_decode(2, 63, false, ones, INT64_MAX);
	memset(big, '0', 60);
	strcpy(big + 60, "101");
	expect_encode(2, 63, true, 5, big);
	expect_decode(2, 63, false, "101", 5);
	big[0] = '1';
	memset(big + 1, '0', 63);
	big[64] = '\0';
	expect_decode_fail(2, 63, false, big, 64, (uint64_t) INT64_MAX,
					   COSID_DECODE_SYNTAX, "expected at most 63 characters, got 64");
	expect_decode_fail(2, 64, false, big, 64, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	/* 64 ones: the scan must not wrap around 2^64. */
	memset(big, '1', 64);
	expect_decode_fail(2, 64, false, big, 64, (uint64_t) INT64_MAX,
					   COSID_DECODE_RANGE,
					   "the value is out of range (at most 9223372036854775807)");
	expect_decode_fail(2, 63, false, "2", 1, (uint64_t) INT64_MAX,
					   COSID_DECODE_SYNTAX,
					   "character 1 (\"2\") is not a base-2 digit");
}

static void
test_radix_small_max(void **state)
{
	(void) state;
	/* A caller's max: 61 fits one base-62 digit, 62 does not. */
	{
		CosidRadix	r = rx(62, 11, false);
		int64_t		v = -1;
		char		msg[MSGLEN];

		assert_int_equal(cosid_radix_decode(&r, "z", 1, 61, &v, msg, sizeof(msg)),
						 COSID_DECODE_OK);
		assert_int_equal(v, 61);
	}
	expect_decode_fail(62, 11, false, "10", 2, 61, COSID_DECODE_RANGE,
					   "the value is out of range (at most 61)");
	/* max 0: only zero fits. */
	expect_decode_fail(62, 11, false, "1", 1, 0, COSID_DECODE_RANGE,
					   "the value is out of range (at most 0)");
	expect_decode_fail(62, 11, true, "00000000001", 11, 0, COSID_DECODE_RANGE,
					   "the value is out of range (at most 0)");
	expect_decode(62, 11, false, "0", 0);
}

/*
 * Radix 62 around every length, padded and not, in every width from 1 to
 * 12, against digits written one at a time here: the encoder writes chunks
 * of digits at places it takes from the length (padded text over 11 digits
 * goes another way), so each length and the values where it changes are
 * checked, and that no byte past the NUL is written.
 */
static int
radix62_slow(uint64_t u, int width, bool pad, char *out)
{
	static const char alphabet[] =
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	char		digits[24];
	int			n = 0;
	int			len;

	do
	{
		digits[n++] = alphabet[u % 62];
		u /= 62;
	} while (u > 0);
	if (n > width)
		return -1;
	len = pad ? width : n;
	for (int i = 0; i < len; i++)
		out[i] = i < len - n ? '0' : digits[len - 1 - i];
	out[len] = '\0';
	return len;
}

static void
test_radix62_lengths(void **state)
{
	uint64_t	power = 1;

	(void) state;
	expect_encode(62, 11, false, INT64_C(3521614606207), "zzzzzzz");
	expect_encode(62, 11, false, INT64_C(3521614606208), "10000000");
	expect_encode(62, 11, false, INT64_C(218340105584895), "zzzzzzzz");
	expect_encode(62, 11, false, INT64_C(218340105584896), "100000000");
	expect_encode(62, 11, false, INT64_C(839299365868340224), "10000000000");
	expect_encode(62, 8, true, INT64_C(3521614606207), "0zzzzzzz");
	expect_encode(62, 9, true, INT64_C(3521614606208), "010000000");
	expect_encode(62, 10, false, INT64_C(839299365868340223), "zzzzzzzzzz");
	for (int k = 0; k <= 11; k++)
	{
		for (int d = -1; d <= 1; d++)
		{
			uint64_t	u = power + (uint64_t) (int64_t) d;

			if (u > (uint64_t) INT64_MAX)
				continue;
			for (int width = 1; width <= 12; width++)
			{
				for (int pad = 0; pad <= 1; pad++)
				{
					CosidRadix	r = rx(62, width, pad == 1);
					char		got[80];
					char		want[80];
					int			n;

					memset(got, 'x', sizeof(got));
					memset(want, 'x', sizeof(want));
					n = radix62_slow(u, width, pad == 1, want);
					/* -1 writes nothing: want stays all 'x' */
					assert_int_equal(cosid_radix_encode(&r, (int64_t) u, got), n);
					assert_memory_equal(got, want, sizeof(got));
				}
			}
		}
		power *= 62;
	}
}

static void
test_radix_encode_errors(void **state)
{
	CosidRadix	r;
	char		buf[80];

	(void) state;
	r = rx(62, 11, false);
	strcpy(buf, "keep");
	assert_int_equal(cosid_radix_encode(&r, -1, buf), -1);
	assert_int_equal(cosid_radix_encode(&r, INT64_MIN, buf), -1);
	assert_string_equal(buf, "keep");
	/* Width 2 holds up to "zz" = 3843, not 3844. */
	expect_encode(62, 2, false, 3843, "zz");
	expect_encode(62, 2, true, 61, "0z");
	r = rx(62, 2, false);
	assert_int_equal(cosid_radix_encode(&r, 3844, buf), -1);
	r = rx(62, 2, true);
	assert_int_equal(cosid_radix_encode(&r, 3844, buf), -1);
	r = rx(10, 1, false);
	assert_int_equal(cosid_radix_encode(&r, 10, buf), -1);
	expect_encode(10, 1, false, 9, "9");
	/* Invalid settings. */
	r = rx(1, 11, false);
	assert_int_equal(cosid_radix_encode(&r, 1, buf), -1);
	r = rx(63, 11, false);
	assert_int_equal(cosid_radix_encode(&r, 1, buf), -1);
	r = rx(62, 0, false);
	assert_int_equal(cosid_radix_encode(&r, 0, buf), -1);
	r = rx(62, 65, false);
	assert_int_equal(cosid_radix_encode(&r, 0, buf), -1);
	assert_int_equal(cosid_radix_encode(NULL, 0, buf), -1);
	assert_string_equal(buf, "keep");
	/* Width 64 pads to 64. */
	expect_encode(62, 64, true, 1,
				  "0000000000000000000000000000000000000000000000000000000000000001");
}

static void
test_radix_syntax(void **state)
{
	const uint64_t M = (uint64_t) INT64_MAX;

	(void) state;
	expect_decode_fail(62, 11, false, "", 0, M, COSID_DECODE_SYNTAX,
					   "the text is empty");
	expect_decode_fail(62, 11, true, "", 0, M, COSID_DECODE_SYNTAX,
					   "the text is empty");
	expect_decode_fail(62, 11, false, "-1", 2, M, COSID_DECODE_SYNTAX,
					   "character 1 (\"-\") is not a base-62 digit");
	expect_decode_fail(62, 11, false, "+1", 2, M, COSID_DECODE_SYNTAX,
					   "character 1 (\"+\") is not a base-62 digit");
	expect_decode_fail(62, 11, false, "ab-", 3, M, COSID_DECODE_SYNTAX,
					   "character 3 (\"-\") is not a base-62 digit");
	expect_decode_fail(62, 11, false, " 1", 2, M, COSID_DECODE_SYNTAX,
					   "character 1 (\" \") is not a base-62 digit");
	expect_decode_fail(62, 11, false, "1\"", 2, M, COSID_DECODE_SYNTAX,
					   "character 2 (0x22) is not a base-62 digit");
	expect_decode_fail(62, 11, false, "1\\", 2, M, COSID_DECODE_SYNTAX,
					   "character 2 (0x5C) is not a base-62 digit");
	expect_decode_fail(62, 11, false, "1\xff", 2, M, COSID_DECODE_SYNTAX,
					   "character 2 (0xFF) is not a base-62 digit");
	expect_decode_fail(62, 11, false, "1\0" "2", 3, M, COSID_DECODE_SYNTAX,
					   "character 2 (0x00) is not a base-62 digit");
	expect_decode_fail(62, 11, false, "\xc3\xa9", 2, M, COSID_DECODE_SYNTAX,
					   "character 1 (0xC3) is not a base-62 digit");
	expect_decode_fail(36, 13, false, "Z_", 2, M, COSID_DECODE_SYNTAX,
					   "character 2 (\"_\") is not a base-36 digit");
	expect_decode_fail(10, 19, false, "A", 1, M, COSID_DECODE_SYNTAX,
					   "character 1 (\"A\") is not a base-10 digit");
	/* Too long, unpadded and padded; padded too short. */
	expect_decode_fail(62, 11, false, "000000000001", 12, M, COSID_DECODE_SYNTAX,
					   "expected at most 11 characters, got 12");
	expect_decode_fail(62, 11, true, "000000000001", 12, M, COSID_DECODE_SYNTAX,
					   "expected exactly 11 characters (padded), got 12");
	expect_decode_fail(62, 11, true, "zz", 2, M, COSID_DECODE_SYNTAX,
					   "expected exactly 11 characters (padded), got 2");
	/* A bad character is reported before a bad length. */
	expect_decode_fail(62, 11, false, "00000000000-", 12, M, COSID_DECODE_SYNTAX,
					   "character 12 (\"-\") is not a base-62 digit");
	expect_decode_fail(62, 11, true, "-", 1, M, COSID_DECODE_SYNTAX,
					   "character 1 (\"-\") is not a base-62 digit");
	/* A too-long text is SYNTAX even when its value would overflow. */
	expect_decode_fail(62, 11, false, "zzzzzzzzzzzz", 12, M, COSID_DECODE_SYNTAX,
					   "expected at most 11 characters, got 12");
	/* Invalid settings. */
	expect_decode_fail(63, 11, false, "1", 1, M, COSID_DECODE_SYNTAX,
					   "invalid radix settings");
	expect_decode_fail(62, 0, false, "1", 1, M, COSID_DECODE_SYNTAX,
					   "invalid radix settings");
}

static void
test_radix_leading_zeros(void **state)
{
	(void) state;
	/* Unpadded decoding accepts leading zeros up to the width. */
	expect_decode(62, 11, false, "007", 7);
	expect_decode(62, 11, false, "00000000000", 0);
	expect_decode(62, 11, false, "0AzL8n0Y58m", INT64_MAX / 62);
	expect_decode(36, 13, false, "00000000002YS", 3844);
	expect_decode_fail(62, 11, false, "000000000000", 12, (uint64_t) INT64_MAX,
					   COSID_DECODE_SYNTAX,
					   "expected at most 11 characters, got 12");
}

static void
test_radix_msg_buffers(void **state)
{
	CosidRadix	r = rx(62, 11, false);
	int64_t		v = 0;
	char		msg[8];

	(void) state;
	memset(msg, 'x', sizeof(msg));
	assert_int_equal(cosid_radix_decode(&r, "-", 1, (uint64_t) INT64_MAX, &v,
										msg, sizeof(msg)), COSID_DECODE_SYNTAX);
	assert_string_equal(msg, "charact");
	/* No message buffer at all. */
	assert_int_equal(cosid_radix_decode(&r, "-", 1, (uint64_t) INT64_MAX, &v,
										NULL, 0), COSID_DECODE_SYNTAX);
	assert_int_equal(cosid_radix_decode(&r, "zzzzzzzzzzz", 11,
										(uint64_t) INT64_MAX, &v, NULL, 0),
					 COSID_DECODE_RANGE);
	assert_int_equal(cosid_radix_decode(&r, "", 0, (uint64_t) INT64_MAX, &v,
										NULL, 0), COSID_DECODE_SYNTAX);
}

static void
test_radix_round_trip_and_order(void **state)
{
	static const int radixes[] = {2, 8, 10, 16, 32, 36, 58, 62};
	Xorshift	x = {UINT64_C(0x9E3779B97F4A7C15)};

	(void) state;
	for (int i = 0; i < 20000; i++)
	{
		int			radix = radixes[i % 8];
		CosidRadix	r = rx(radix, cosid_radix_default_width(radix), true);
		CosidRadix	u = rx(radix, cosid_radix_default_width(radix), false);
		/* Vary the magnitude so short values are common too. */
		int64_t		a = (int64_t) (xs_next(&x) >> (1 + xs_next(&x) % 63));
		int64_t		b = (int64_t) (xs_next(&x) >> (1 + xs_next(&x) % 63));
		char		ta[80];
		char		tb[80];
		char		tu[80];
		int64_t		back = -1;
		int			la;
		int			lb;
		int			cmp;

		la = cosid_radix_encode(&r, a, ta);
		lb = cosid_radix_encode(&r, b, tb);
		assert_int_equal(la, r.width);
		assert_int_equal(lb, r.width);
		assert_int_equal(cosid_radix_decode(&r, ta, (size_t) la,
											(uint64_t) INT64_MAX, &back, NULL, 0),
						 COSID_DECODE_OK);
		assert_true(back == a);
		cmp = memcmp(ta, tb, (size_t) la);
		assert_int_equal((cmp > 0) - (cmp < 0), (a > b) - (a < b));

		/* Unpadded: the padded text without its leading zeros. */
		la = cosid_radix_encode(&u, a, tu);
		assert_true(la >= 1);
		assert_true(tu[0] != '0' || la == 1);
		assert_string_equal(tu, ta + (r.width - la));
		assert_int_equal(cosid_radix_decode(&u, tu, (size_t) la,
											(uint64_t) INT64_MAX, &back, NULL, 0),
						 COSID_DECODE_OK);
		assert_true(back == a);
	}
}

/* ---------- date patterns ---------- */

static void
expect_pattern_error(const char *pattern, const char *want)
{
	char		msg[MSGLEN];

	memset(msg, 'x', sizeof(msg));
	assert_int_equal(cosid_date_pattern_check(pattern, msg, sizeof(msg)), -1);
	assert_string_equal(msg, want);
}

static void
test_date_pattern_check(void **state)
{
	char		msg[MSGLEN];

	(void) state;
	assert_int_equal(cosid_date_pattern_check("yyyyMMdd", msg, sizeof(msg)), 8);
	assert_int_equal(cosid_date_pattern_check("yyMMdd", msg, sizeof(msg)), 6);
	assert_int_equal(cosid_date_pattern_check("yyyy-MM-dd HH:mm:ss.SSS", msg,
											  sizeof(msg)), 23);
	assert_int_equal(cosid_date_pattern_check("yyyyMMddHHmmssSSS", msg,
											  sizeof(msg)), 17);
	assert_int_equal(cosid_date_pattern_check("HH", msg, sizeof(msg)), 2);
	assert_int_equal(cosid_date_pattern_check("/", msg, sizeof(msg)), 1);
	assert_int_equal(cosid_date_pattern_check("'yy'", msg, sizeof(msg)), 4);
	assert_int_equal(cosid_date_pattern_check("\xc3\xa9yy", msg, sizeof(msg)), 4);
	assert_int_equal(cosid_date_pattern_check("yyyy", NULL, 0), 4);

	expect_pattern_error("yyy",
						 "\"yyy\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("yyyyMdd",
						 "\"M\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("yyyyy",
						 "\"yyyyy\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("ss.SS",
						 "\"SS\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("yyyyDD",
						 "\"DD\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("Q",
						 "\"Q\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("yyyyyyyyyyyyyyyyyyyy",
						 "\"yyyyyyyyyyyyyyyy...\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	expect_pattern_error("yyyy1",
						 "\"1\" cannot be a literal: letters and digits are reserved for fields");
	expect_pattern_error("00",
						 "\"00\" cannot be a literal: letters and digits are reserved for fields");
	expect_pattern_error("yyyyMMyy", "\"yy\" repeats the year");
	expect_pattern_error("yyyy-yyyy", "\"yyyy\" repeats the year");
	expect_pattern_error("MMddMM", "\"MM\" repeats the month");
	expect_pattern_error("SSS.SSS", "\"SSS\" repeats the millisecond");
	expect_pattern_error("", "the pattern is empty");
	expect_pattern_error(NULL, "the pattern is empty");
	assert_int_equal(cosid_date_pattern_check("yyy", NULL, 0), -1);
}

static void
test_date_format(void **state)
{
	CosidTm		tm = make_tm(2026, 10, 27, 15, 30, 12, 123);
	CosidTm		early = make_tm(33, 1, 2, 3, 4, 5, 6);
	char		buf[64];

	(void) state;
	assert_int_equal(cosid_date_format("yyyyMMdd", &tm, buf), 8);
	assert_string_equal(buf, "20261027");
	assert_int_equal(cosid_date_format("yyMMdd", &tm, buf), 6);
	assert_string_equal(buf, "261027");
	assert_int_equal(cosid_date_format("yyyy-MM-dd HH:mm:ss.SSS", &tm, buf), 23);
	assert_string_equal(buf, "2026-10-27 15:30:12.123");
	assert_int_equal(cosid_date_format("yyyyMMddHHmmssSSS", &tm, buf), 17);
	assert_string_equal(buf, "20261027153012123");
	assert_int_equal(cosid_date_format("yyyyMMddHHmmssSSS", &early, buf), 17);
	assert_string_equal(buf, "00330102030405006");
	assert_int_equal(cosid_date_format("'yy'/\xc3\xa9", &early, buf), 7);
	assert_string_equal(buf, "'33'/\xc3\xa9");
	assert_int_equal(cosid_date_format("yyyyMM", &tm, buf), 6);
	assert_string_equal(buf, "202610");
	strcpy(buf, "keep");
	assert_int_equal(cosid_date_format("yyy", &tm, buf), -1);
	assert_string_equal(buf, "");
}

static void
expect_date_error(const char *pattern, const char *s, const char *want)
{
	CosidTm		tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	char		msg[MSGLEN];

	memset(msg, 'x', sizeof(msg));
	assert_int_equal(cosid_date_parse(pattern, s, strlen(s), &tm, msg,
									  sizeof(msg)), COSID_DECODE_SYNTAX);
	assert_string_equal(msg, want);
	/* tm is untouched on failure. */
	assert_tm(&tm, 1, 2, 3, 4, 5, 6, 7);
}

static void
test_date_parse(void **state)
{
	CosidTm		tm;
	char		msg[MSGLEN];

	(void) state;
	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("yyyyMMdd", "20261027", 8, &tm, msg,
									  sizeof(msg)), COSID_DECODE_OK);
	assert_tm(&tm, 2026, 10, 27, 4, 5, 6, 7);

	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("yyMMdd", "261027", 6, &tm, msg,
									  sizeof(msg)), COSID_DECODE_OK);
	assert_tm(&tm, 2026, 10, 27, 4, 5, 6, 7);

	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("yyyy-MM-dd HH:mm:ss.SSS",
									  "9999-12-31 23:59:59.999", 23, &tm, msg,
									  sizeof(msg)), COSID_DECODE_OK);
	assert_tm(&tm, 9999, 12, 31, 23, 59, 59, 999);

	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("HHmm", "0000", 4, &tm, msg, sizeof(msg)),
					 COSID_DECODE_OK);
	assert_tm(&tm, 1, 2, 3, 0, 0, 6, 7);

	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("yyyyMMdd", "00010101", 8, &tm, msg,
									  sizeof(msg)), COSID_DECODE_OK);
	assert_tm(&tm, 1, 1, 1, 4, 5, 6, 7);

	/* Literals only. */
	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("--", "--", 2, &tm, msg, sizeof(msg)),
					 COSID_DECODE_OK);
	assert_tm(&tm, 1, 2, 3, 4, 5, 6, 7);

	expect_date_error("yyyyMMdd", "2026102", "expected 8 characters (yyyyMMdd), got 7");
	expect_date_error("yyyyMMdd", "202610271", "expected 8 characters (yyyyMMdd), got 9");
	expect_date_error("yyyyMMdd", "", "expected 8 characters (yyyyMMdd), got 0");
	expect_date_error("yyyyMMdd", "2026 027", "character 5 (\" \") is not a digit of the month");
	expect_date_error("yyyyMMdd", "-0261027", "character 1 (\"-\") is not a digit of the year");
	expect_date_error("yyyy-MM-dd", "2026/10/27", "character 5 (\"/\") should be \"-\"");
	expect_date_error("yyyy-MM-dd", "2026-1x-27", "character 7 (\"x\") is not a digit of the month");
	expect_date_error("yyyy\xc3\xa9MM", "2026\xc3\xa8" "01", "character 6 (0xA8) should be 0xA9");
	expect_date_error("yyyyMMdd", "20261327", "month 13 is out of range (1 to 12)");
	expect_date_error("yyyyMMdd", "20260027", "month 0 is out of range (1 to 12)");
	expect_date_error("yyyyMMdd", "20261000", "day 0 is out of range (1 to 31)");
	expect_date_error("yyyyMMdd", "20261032", "day 32 is out of range (1 to 31)");
	expect_date_error("yyyyMMdd", "00001027", "year 0 is out of range (1 to 9999)");
	expect_date_error("HH:mm:ss", "24:00:00", "hour 24 is out of range (0 to 23)");
	expect_date_error("HH:mm:ss", "23:60:00", "minute 60 is out of range (0 to 59)");
	expect_date_error("HH:mm:ss", "23:59:60", "second 60 is out of range (0 to 59)");
	/* The shape is checked before any range. */
	expect_date_error("MMdd", "13x1", "character 3 (\"x\") is not a digit of the day");
	expect_date_error("yyy", "202", "\"yyy\" is not a date field; expected yyyy, yy, MM, dd, HH, mm, ss or SSS");
	/* yy covers 2000 to 2099 only. */
	tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(cosid_date_parse("yy", "99", 2, &tm, NULL, 0), COSID_DECODE_OK);
	assert_int_equal(tm.year, 2099);
	assert_int_equal(cosid_date_parse("yy", "00", 2, &tm, NULL, 0), COSID_DECODE_OK);
	assert_int_equal(tm.year, 2000);
}

/* ---------- friendly ---------- */

static CosidLayout
preset(CosidPreset p)
{
	return cosid_preset_layout(p);
}

static void
expect_friendly(CosidPreset p, bool pad, const char *want)
{
	CosidLayout l = preset(p);
	CosidTm		tm = make_tm(2026, 10, 27, 15, 30, 12, 123);
	CosidTm		back = make_tm(1, 1, 1, 1, 1, 1, 1);
	int64_t		node = -1;
	int64_t		seq = -1;
	char		buf[64];
	char		msg[MSGLEN];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(cosid_friendly_format(&l, pad, &tm, 3, 17, buf),
					 (int) strlen(want));
	assert_string_equal(buf, want);
	assert_int_equal(cosid_friendly_parse(&l, pad, buf, strlen(buf), &back,
										  &node, &seq, msg, sizeof(msg)),
					 COSID_DECODE_OK);
	assert_tm(&back, 2026, 10, 27, 15, 30, 12, l.unit_ms == 1000 ? 0 : 123);
	assert_int_equal(node, 3);
	assert_int_equal(seq, 17);
}

static void
test_friendly_vectors(void **state)
{
	(void) state;
	expect_friendly(COSID_PRESET_SNOWFLAKE_MS, true, "20261027153012123-0003-0017");
	expect_friendly(COSID_PRESET_SNOWFLAKE_MS, false, "20261027153012123-3-17");
	expect_friendly(COSID_PRESET_SNOWFLAKE_S, true, "20261027153012-0003-0000017");
	expect_friendly(COSID_PRESET_SNOWFLAKE_S, false, "20261027153012-3-17");
	expect_friendly(COSID_PRESET_JS_SAFE_MS, true, "20261027153012123-3-017");
	expect_friendly(COSID_PRESET_JS_SAFE_S, true, "20261027153012-3-000017");
	expect_friendly(COSID_PRESET_COSID_80, true, "20261027153012123-0000003-00017");
	expect_friendly(COSID_PRESET_COSID_80, false, "20261027153012123-3-17");
}

static void
test_friendly_extremes(void **state)
{
	CosidLayout l = preset(COSID_PRESET_SNOWFLAKE_MS);
	CosidLayout z = l;
	CosidTm		tm = make_tm(2019, 12, 24, 16, 0, 0, 0);
	CosidTm		back;
	int64_t		node;
	int64_t		seq;
	char		buf[64];

	(void) state;
	assert_int_equal(cosid_friendly_format(&l, true, &tm, 1023, 4095, buf), 27);
	assert_string_equal(buf, "20191224160000000-1023-4095");
	assert_int_equal(cosid_friendly_format(&l, true, &tm, 0, 0, buf), 27);
	assert_string_equal(buf, "20191224160000000-0000-0000");
	assert_int_equal(cosid_friendly_format(&l, false, &tm, 0, 0, buf), 21);
	assert_string_equal(buf, "20191224160000000-0-0");
	assert_int_equal(cosid_friendly_parse(&l, false, buf, 21, &back, &node, &seq,
										  NULL, 0), COSID_DECODE_OK);
	assert_int_equal(node, 0);
	assert_int_equal(seq, 0);

	/* No node bits: the node is always "0". */
	z.node_bits = 0;
	z.seq_bits = 22;
	assert_int_equal(cosid_friendly_format(&z, true, &tm, 0, 5, buf), 27);
	assert_string_equal(buf, "20191224160000000-0-0000005");
	assert_int_equal(cosid_friendly_parse(&z, true, buf, 27, &back, &node, &seq,
										  NULL, 0), COSID_DECODE_OK);
	assert_int_equal(node, 0);
	assert_int_equal(seq, 5);
	assert_int_equal(cosid_friendly_parse(&z, true, "20191224160000000-1-0000005",
										  27, &back, &node, &seq, NULL, 0),
					 COSID_DECODE_RANGE);

	/* 62 sequence bits: 19 digits, the largest value parses back. */
	z.seq_bits = 62;
	assert_int_equal(cosid_friendly_format(&z, true, &tm, 0,
										   INT64_C(4611686018427387903), buf), 39);
	assert_string_equal(buf, "20191224160000000-0-4611686018427387903");
	assert_int_equal(cosid_friendly_parse(&z, true, buf, 39, &back, &node, &seq,
										  NULL, 0), COSID_DECODE_OK);
	assert_true(seq == INT64_C(4611686018427387903));
	assert_int_equal(cosid_friendly_parse(&z, true,
										  "20191224160000000-0-9999999999999999999",
										  39, &back, &node, &seq, NULL, 0),
					 COSID_DECODE_RANGE);
}

static void
expect_friendly_fail(CosidPreset p, bool pad, const char *s,
					 CosidDecodeResult res, const char *want)
{
	CosidLayout l = preset(p);
	CosidTm		tm = make_tm(1, 2, 3, 4, 5, 6, 7);
	int64_t		node = -7;
	int64_t		seq = -7;
	char		msg[MSGLEN];

	memset(msg, 'x', sizeof(msg));
	assert_int_equal(cosid_friendly_parse(&l, pad, s, strlen(s), &tm, &node,
										  &seq, msg, sizeof(msg)), res);
	assert_string_equal(msg, want);
	assert_tm(&tm, 1, 2, 3, 4, 5, 6, 7);
	assert_int_equal(node, -7);
	assert_int_equal(seq, -7);
}

static void
test_friendly_errors(void **state)
{
	const CosidPreset MS = COSID_PRESET_SNOWFLAKE_MS;
	const CosidPreset S = COSID_PRESET_SNOWFLAKE_S;

	(void) state;
	expect_friendly_fail(MS, true, "", COSID_DECODE_SYNTAX,
						 "the text is too short; expected yyyyMMddHHmmssSSS-node-sequence");
	expect_friendly_fail(MS, true, "20261027153012123", COSID_DECODE_SYNTAX,
						 "the text is too short; expected yyyyMMddHHmmssSSS-node-sequence");
	expect_friendly_fail(MS, true, "2026102715301212-0003-0017", COSID_DECODE_SYNTAX,
						 "character 17 (\"-\") is not a digit of the time; expected yyyyMMddHHmmssSSS-node-sequence");
	expect_friendly_fail(S, true, "20261027153012123-0003-0000017", COSID_DECODE_SYNTAX,
						 "character 15 (\"1\") should be \"-\"; expected yyyyMMddHHmmss-node-sequence");
	expect_friendly_fail(MS, true, "20261027153012123_0003-0017", COSID_DECODE_SYNTAX,
						 "character 18 (\"_\") should be \"-\"; expected yyyyMMddHHmmssSSS-node-sequence");
	expect_friendly_fail(MS, true, "20261027153012123-0003", COSID_DECODE_SYNTAX,
						 "no \"-\" before the sequence; expected yyyyMMddHHmmssSSS-node-sequence");
	expect_friendly_fail(MS, true, "20261027153012123-", COSID_DECODE_SYNTAX,
						 "no \"-\" before the sequence; expected yyyyMMddHHmmssSSS-node-sequence");
	expect_friendly_fail(MS, true, "20261027153012123-00x3-0017", COSID_DECODE_SYNTAX,
						 "character 21 (\"x\") is not a decimal digit");
	expect_friendly_fail(MS, true, "20261027153012123-0003-00-17", COSID_DECODE_SYNTAX,
						 "character 26 (\"-\") is not a decimal digit");
	expect_friendly_fail(MS, true, "20261027153012123-0003-+017", COSID_DECODE_SYNTAX,
						 "character 24 (\"+\") is not a decimal digit");
	expect_friendly_fail(MS, true, "20261027153012123-0003-0017 ", COSID_DECODE_SYNTAX,
						 "character 28 (\" \") is not a decimal digit");
	expect_friendly_fail(MS, true, "20261027153012123--0017", COSID_DECODE_SYNTAX,
						 "the node is empty");
	expect_friendly_fail(MS, true, "20261027153012123-0003-", COSID_DECODE_SYNTAX,
						 "the sequence is empty");
	expect_friendly_fail(MS, true, "20261027153012123-3-0017", COSID_DECODE_SYNTAX,
						 "the node has 1 digits; padded, it has exactly 4");
	expect_friendly_fail(MS, true, "20261027153012123-0003-00017", COSID_DECODE_SYNTAX,
						 "the sequence has 5 digits; padded, it has exactly 4");
	expect_friendly_fail(MS, false, "20261027153012123-00003-17", COSID_DECODE_SYNTAX,
						 "the node has 5 digits, more than 4");
	expect_friendly_fail(MS, false, "20261027153012123-3-00017", COSID_DECODE_SYNTAX,
						 "the sequence has 5 digits, more than 4");
	expect_friendly_fail(MS, true, "20261327153012123-0003-0017", COSID_DECODE_SYNTAX,
						 "month 13 is out of range (1 to 12)");
	expect_friendly_fail(MS, true, "20261027243012123-0003-0017", COSID_DECODE_SYNTAX,
						 "hour 24 is out of range (0 to 23)");
	expect_friendly_fail(MS, true, "00001027153012123-0003-0017", COSID_DECODE_SYNTAX,
						 "year 0 is out of range (1 to 9999)");
	/* Syntax before ranges: a bad node digit wins over month 13. */
	expect_friendly_fail(MS, true, "20261327153012123-000x-0017", COSID_DECODE_SYNTAX,
						 "character 22 (\"x\") is not a decimal digit");
	/* Ranges. */
	expect_friendly_fail(MS, true, "20261027153012123-1024-0017", COSID_DECODE_RANGE,
						 "node 1024 is out of range (at most 1023 for 10 bits)");
	expect_friendly_fail(MS, true, "20261027153012123-9999-0017", COSID_DECODE_RANGE,
						 "node 9999 is out of range (at most 1023 for 10 bits)");
	expect_friendly_fail(MS, true, "20261027153012123-0003-4096", COSID_DECODE_RANGE,
						 "sequence 4096 is out of range (at most 4095 for 12 bits)");
	expect_friendly_fail(COSID_PRESET_JS_SAFE_MS, true, "20261027153012123-8-017",
						 COSID_DECODE_RANGE,
						 "node 8 is out of range (at most 7 for 3 bits)");
	expect_friendly_fail(COSID_PRESET_JS_SAFE_MS, true, "20261027153012123-7-512",
						 COSID_DECODE_RANGE,
						 "sequence 512 is out of range (at most 511 for 9 bits)");
}

static void
test_friendly_unpadded_leading_zeros(void **state)
{
	CosidLayout l = preset(COSID_PRESET_SNOWFLAKE_MS);
	CosidTm		tm;
	int64_t		node = -1;
	int64_t		seq = -1;

	(void) state;
	/* Unpadded decoding accepts padded text (CosId's parseLong does). */
	assert_int_equal(cosid_friendly_parse(&l, false, "20261027153012123-0003-0017",
										  27, &tm, &node, &seq, NULL, 0),
					 COSID_DECODE_OK);
	assert_int_equal(node, 3);
	assert_int_equal(seq, 17);
	assert_int_equal(cosid_friendly_parse(&l, false, "20261027153012123-03-017",
										  24, &tm, &node, &seq, NULL, 0),
					 COSID_DECODE_OK);
	assert_int_equal(node, 3);
	assert_int_equal(seq, 17);
	/* Padded decoding does not accept unpadded text. */
	assert_int_equal(cosid_friendly_parse(&l, true, "20261027153012123-3-17",
										  22, &tm, &node, &seq, NULL, 0),
					 COSID_DECODE_SYNTAX);
}

static void
test_friendly_round_trip(void **state)
{
	static const CosidPreset presets[] = {
		COSID_PRESET_SNOWFLAKE_MS, COSID_PRESET_SNOWFLAKE_S,
		COSID_PRESET_JS_SAFE_MS, COSID_PRESET_JS_SAFE_S, COSID_PRESET_COSID_80
	};
	Xorshift	x = {UINT64_C(12345678901)};

	(void) state;
	for (int i = 0; i < 10000; i++)
	{
		CosidLayout l = preset(presets[i % 5]);
		bool		pad = (i / 5) % 2 == 0;
		CosidTm		tm = make_tm(1 + (int) (xs_next(&x) % 9999),
								 1 + (int) (xs_next(&x) % 12),
								 1 + (int) (xs_next(&x) % 31),
								 (int) (xs_next(&x) % 24),
								 (int) (xs_next(&x) % 60),
								 (int) (xs_next(&x) % 60),
								 l.unit_ms == 1000 ? 0 : (int) (xs_next(&x) % 1000));
		int64_t		node = (int64_t) (xs_next(&x) & ((UINT64_C(1) << l.node_bits) - 1));
		int64_t		seq = (int64_t) (xs_next(&x) & ((UINT64_C(1) << l.seq_bits) - 1));
		CosidTm		back;
		int64_t		n2 = -1;
		int64_t		s2 = -1;
		char		buf[64];
		int			len;

		len = cosid_friendly_format(&l, pad, &tm, node, seq, buf);
		assert_int_equal((size_t) len, strlen(buf));
		assert_int_equal(cosid_friendly_parse(&l, pad, buf, (size_t) len, &back,
											  &n2, &s2, NULL, 0), COSID_DECODE_OK);
		assert_memory_equal(&back, &tm, sizeof(tm));
		assert_true(n2 == node);
		assert_true(s2 == seq);
	}
}

/* ---------- parts-radix ---------- */

static void
test_parts_radix_vectors(void **state)
{
	CosidLayout c80 = preset(COSID_PRESET_COSID_80);
	CosidLayout ms = preset(COSID_PRESET_SNOWFLAKE_MS);
	int64_t		t = -1;
	int64_t		n = -1;
	int64_t		s = -1;
	char		buf[80];
	char		msg[MSGLEN];

	(void) state;
	assert_int_equal(cosid_parts_radix_length(&c80, 62), 15);
	assert_int_equal(cosid_parts_radix_length(&c80, 36), 17);
	assert_int_equal(cosid_parts_radix_length(&c80, 10), 26);
	assert_int_equal(cosid_parts_radix_length(&ms, 62), 12);
	assert_int_equal(cosid_parts_radix_length(&c80, 1), -1);
	assert_int_equal(cosid_parts_radix_length(&c80, 63), -1);

	assert_int_equal(cosid_parts_radix_encode(&c80, 62, 0, 0, 0, buf), 15);
	assert_string_equal(buf, "000000000000000");
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, INT64_C(17592186044415),
											  1048575, 65535, buf), 15);
	assert_string_equal(buf, "4ziepp2F4OmVH31");
	/* 2026-10-27T15:30:12.123Z = 1793115012123 ms, node 3, seq 17. */
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, INT64_C(1793115012123),
											  3, 17, buf), 15);
	assert_string_equal(buf, "0VZGRqyx000300H");
	assert_int_equal(cosid_parts_radix_decode(&c80, 62, buf, 15, &t, &n, &s,
											  msg, sizeof(msg)), COSID_DECODE_OK);
	assert_true(t == INT64_C(1793115012123));
	assert_int_equal(n, 3);
	assert_int_equal(s, 17);
	assert_int_equal(cosid_parts_radix_encode(&c80, 36, INT64_C(1793115012123),
											  3, 17, buf), 17);
	assert_string_equal(buf, "0MVQUDQ8R0003000H");
	assert_int_equal(cosid_parts_radix_decode(&c80, 36, buf, 17, &t, &n, &s,
											  msg, sizeof(msg)), COSID_DECODE_OK);
	assert_true(t == INT64_C(1793115012123));
	assert_int_equal(n, 3);
	assert_int_equal(s, 17);
	assert_int_equal(cosid_parts_radix_encode(&ms, 62, INT64_C(2199023255551),
											  1023, 4095, buf), 12);
	assert_string_equal(buf, "ciKbTd1GV143");
}

static void
expect_parts_fail(int radix, const char *s, CosidDecodeResult res,
				  const char *want)
{
	CosidLayout c80 = preset(COSID_PRESET_COSID_80);
	int64_t		t = -7;
	int64_t		n = -7;
	int64_t		q = -7;
	char		msg[MSGLEN];

	memset(msg, 'x', sizeof(msg));
	assert_int_equal(cosid_parts_radix_decode(&c80, radix, s, strlen(s), &t, &n,
											  &q, msg, sizeof(msg)), res);
	assert_string_equal(msg, want);
	assert_int_equal(t, -7);
	assert_int_equal(n, -7);
	assert_int_equal(q, -7);
}

static void
test_parts_radix_errors(void **state)
{
	CosidLayout c80 = preset(COSID_PRESET_COSID_80);
	char		buf[80];

	(void) state;
	expect_parts_fail(62, "", COSID_DECODE_SYNTAX,
					  "expected 15 characters (8 time, 4 node, 3 sequence), got 0");
	expect_parts_fail(62, "0VZGRqyx000300", COSID_DECODE_SYNTAX,
					  "expected 15 characters (8 time, 4 node, 3 sequence), got 14");
	expect_parts_fail(62, "0VZGRqyx000300H0", COSID_DECODE_SYNTAX,
					  "expected 15 characters (8 time, 4 node, 3 sequence), got 16");
	expect_parts_fail(62, "0VZGRqyx-00300H", COSID_DECODE_SYNTAX,
					  "character 9 (\"-\") is not a base-62 digit");
	expect_parts_fail(36, "0MVQUDQ8R0003000h", COSID_DECODE_SYNTAX,
					  "character 17 (\"h\") is not a base-36 digit (upper case only)");
	expect_parts_fail(62, "4ziepp2G0000000", COSID_DECODE_RANGE,
					  "the time part is out of range (more than 44 bits)");
	expect_parts_fail(62, "zzzzzzzz0000000", COSID_DECODE_RANGE,
					  "the time part is out of range (more than 44 bits)");
	expect_parts_fail(62, "000000004OmW000", COSID_DECODE_RANGE,
					  "the node part is out of range (more than 20 bits)");
	expect_parts_fail(62, "000000000000H32", COSID_DECODE_RANGE,
					  "the sequence part is out of range (more than 16 bits)");
	expect_parts_fail(1, "0", COSID_DECODE_SYNTAX, "invalid layout or radix");

	strcpy(buf, "keep");
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, -1, 0, 0, buf), -1);
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, INT64_C(17592186044416),
											  0, 0, buf), -1);
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, 0, 1048576, 0, buf), -1);
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, 0, -1, 0, buf), -1);
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, 0, 0, 65536, buf), -1);
	assert_int_equal(cosid_parts_radix_encode(&c80, 62, 0, 0, -1, buf), -1);
	assert_int_equal(cosid_parts_radix_encode(&c80, 63, 0, 0, 0, buf), -1);
	assert_string_equal(buf, "keep");
}

/* Compare two COSID_80 ids as the 80-bit numbers they are. */
static int
cmp80(int64_t t1, int64_t n1, int64_t s1, int64_t t2, int64_t n2, int64_t s2)
{
	if (t1 != t2)
		return t1 < t2 ? -1 : 1;
	if (n1 != n2)
		return n1 < n2 ? -1 : 1;
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	return 0;
}

static void
test_parts_radix_sorts_like_id(void **state)
{
	CosidLayout c80 = preset(COSID_PRESET_COSID_80);
	Xorshift	x = {UINT64_C(0xDEADBEEFCAFE)};

	(void) state;
	for (int i = 0; i < 20000; i++)
	{
		int			radix = i % 2 ? 62 : 36;
		int64_t		t1 = (int64_t) (xs_next(&x) >> 20);
		int64_t		n1 = (int64_t) (xs_next(&x) >> 44);
		int64_t		s1 = (int64_t) (xs_next(&x) >> 48);
		/* Often share the time or node, to reach the lower parts. */
		int64_t		t2 = i % 3 ? t1 : (int64_t) (xs_next(&x) >> 20);
		int64_t		n2 = i % 5 ? n1 : (int64_t) (xs_next(&x) >> 44);
		int64_t		s2 = (int64_t) (xs_next(&x) >> 48);
		char		a[32];
		char		b[32];
		int64_t		bt;
		int64_t		bn;
		int64_t		bs;
		int			len = cosid_parts_radix_length(&c80, radix);
		int			c;

		assert_int_equal(cosid_parts_radix_encode(&c80, radix, t1, n1, s1, a), len);
		assert_int_equal(cosid_parts_radix_encode(&c80, radix, t2, n2, s2, b), len);
		c = memcmp(a, b, (size_t) len);
		assert_int_equal((c > 0) - (c < 0), cmp80(t1, n1, s1, t2, n2, s2));
		assert_int_equal(cosid_parts_radix_decode(&c80, radix, a, (size_t) len,
												  &bt, &bn, &bs, NULL, 0),
						 COSID_DECODE_OK);
		assert_true(bt == t1 && bn == n1 && bs == s1);
	}
}

/* ---------- groups ---------- */

static void
test_groups(void **state)
{
	CosidTm		tm = make_tm(2026, 10, 27, 15, 30, 12, 123);
	int64_t		p = -1;
	int64_t		v = -1;

	(void) state;
	assert_true(cosid_group_scale(COSID_GROUP_DAY) == INT64_C(10000000000));
	assert_true(cosid_group_scale(COSID_GROUP_MONTH) == INT64_C(1000000000000));
	assert_true(cosid_group_scale(COSID_GROUP_YEAR) == INT64_C(100000000000000));
	assert_true(cosid_group_scale(COSID_GROUP_NONE) == 0);
	assert_true(cosid_group_period(COSID_GROUP_DAY, &tm) == 20261027);
	assert_true(cosid_group_period(COSID_GROUP_MONTH, &tm) == 202610);
	assert_true(cosid_group_period(COSID_GROUP_YEAR, &tm) == 2026);
	assert_true(cosid_group_period(COSID_GROUP_NONE, &tm) == 0);
	assert_string_equal(cosid_group_pattern(COSID_GROUP_DAY), "yyyyMMdd");
	assert_string_equal(cosid_group_pattern(COSID_GROUP_MONTH), "yyyyMM");
	assert_string_equal(cosid_group_pattern(COSID_GROUP_YEAR), "yyyy");
	assert_null(cosid_group_pattern(COSID_GROUP_NONE));

	assert_true(cosid_group_split(COSID_GROUP_DAY, INT64_C(202610270000000042), &p, &v));
	assert_true(p == 20261027 && v == 42);
	assert_true(cosid_group_split(COSID_GROUP_MONTH, INT64_C(202610000000000042), &p, &v));
	assert_true(p == 202610 && v == 42);
	assert_true(cosid_group_split(COSID_GROUP_YEAR, INT64_C(202600000000000042), &p, &v));
	assert_true(p == 2026 && v == 42);
	assert_true(cosid_group_split(COSID_GROUP_DAY, INT64_C(999912319999999999), &p, &v));
	assert_true(p == 99991231 && v == INT64_C(9999999999));
	assert_true(cosid_group_split(COSID_GROUP_DAY, INT64_C(101010000000000), &p, &v));
	assert_true(p == 10101 && v == 0);

	p = v = -1;
	/* Month 13, day 0, day 32, year 0, past 9999, negative, no group. */
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(202613270000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(202610000000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(202610320000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(42), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(1000001010000000000), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_MAX, &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_MONTH, INT64_C(202600000000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_MONTH, INT64_C(202613000000000000), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_YEAR, INT64_C(42), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_YEAR, INT64_MAX, &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, -1, &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_NONE, 42, &p, &v));
	assert_true(p == -1 && v == -1);
}

/* Impossible days of real months: what java.time's LocalDate.of refuses. */
static void
test_group_impossible_dates(void **state)
{
	char		msg[MSGLEN];
	int64_t		p = -1;
	int64_t		v = -1;

	(void) state;
	/* 31 February, 29 February of common years, 31 April: refused */
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(202602310000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(202602290000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(190002290000000042), &p, &v));
	assert_false(cosid_group_split(COSID_GROUP_DAY, INT64_C(202604310000000042), &p, &v));
	assert_true(p == -1 && v == -1);
	/* 29 February of leap years (2024; 2000, divisible by 400), 31 December */
	assert_true(cosid_group_split(COSID_GROUP_DAY, INT64_C(202402290000000042), &p, &v));
	assert_true(p == 20240229 && v == 42);
	assert_true(cosid_group_split(COSID_GROUP_DAY, INT64_C(200002290000000007), &p, &v));
	assert_true(p == 20000229 && v == 7);
	assert_true(cosid_group_split(COSID_GROUP_DAY, INT64_C(202612310000000001), &p, &v));
	assert_true(p == 20261231 && v == 1);

	/* the messages name the field and its range */
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 20260231, msg, sizeof(msg)));
	assert_string_equal(msg, "day 31 is out of range for February 2026 (1 to 28)");
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 19000229, msg, sizeof(msg)));
	assert_string_equal(msg, "day 29 is out of range for February 1900 (1 to 28)");
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 20260431, msg, sizeof(msg)));
	assert_string_equal(msg, "day 31 is out of range for April 2026 (1 to 30)");
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 20261232, msg, sizeof(msg)));
	assert_string_equal(msg, "day 32 is out of range (1 to 31)");
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 20261200, msg, sizeof(msg)));
	assert_string_equal(msg, "day 0 is out of range (1 to 31)");
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 20261327, msg, sizeof(msg)));
	assert_string_equal(msg, "month 13 is out of range (1 to 12)");
	assert_false(cosid_group_period_valid(COSID_GROUP_MONTH, 202600, msg, sizeof(msg)));
	assert_string_equal(msg, "month 0 is out of range (1 to 12)");
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 1231, msg, sizeof(msg)));
	assert_string_equal(msg, "year 0 is out of range (1 to 9999)");
	assert_false(cosid_group_period_valid(COSID_GROUP_YEAR, 10000, msg, sizeof(msg)));
	assert_string_equal(msg, "year 10000 is out of range (1 to 9999)");
	assert_false(cosid_group_period_valid(COSID_GROUP_YEAR, -5, msg, sizeof(msg)));
	assert_string_equal(msg, "the period is negative");
	assert_false(cosid_group_period_valid(COSID_GROUP_NONE, 2026, msg, sizeof(msg)));
	assert_string_equal(msg, "no period");
	assert_true(cosid_group_period_valid(COSID_GROUP_DAY, 20240229, msg, sizeof(msg)));
	assert_true(cosid_group_period_valid(COSID_GROUP_MONTH, 202602, NULL, 0));
	assert_true(cosid_group_period_valid(COSID_GROUP_YEAR, 9999, NULL, 0));
	assert_false(cosid_group_period_valid(COSID_GROUP_DAY, 20260231, NULL, 0));
}

static void
test_days_in_month(void **state)
{
	static const int common[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	char		msg[MSGLEN];

	(void) state;
	for (int m = 1; m <= 12; m++)
	{
		assert_int_equal(cosid_days_in_month(2026, m), common[m - 1]);
		assert_int_equal(cosid_days_in_month(2024, m), m == 2 ? 29 : common[m - 1]);
	}
	assert_int_equal(cosid_days_in_month(1900, 2), 28);
	assert_int_equal(cosid_days_in_month(2000, 2), 29);
	assert_int_equal(cosid_days_in_month(2100, 2), 28);
	assert_int_equal(cosid_days_in_month(2026, 0), 0);
	assert_int_equal(cosid_days_in_month(2026, 13), 0);

	assert_true(cosid_date_valid(1, 1, 1, msg, sizeof(msg)));
	assert_true(cosid_date_valid(9999, 12, 31, msg, sizeof(msg)));
	assert_false(cosid_date_valid(2026, 2, 30, msg, sizeof(msg)));
	assert_string_equal(msg, "day 30 is out of range for February 2026 (1 to 28)");
	assert_false(cosid_date_valid(2026, 9, 31, msg, sizeof(msg)));
	assert_string_equal(msg, "day 31 is out of range for September 2026 (1 to 30)");
	/* a short buffer is cut, not overrun */
	memset(msg, 'x', sizeof(msg));
	assert_false(cosid_date_valid(2026, 2, 30, msg, 8));
	assert_string_equal(msg, "day 30 ");
	assert_false(cosid_date_valid(2026, 2, 30, NULL, 0));
}

/*
 * Local time to offset, java.time's way.  The zone data are New York's
 * and Sydney's 2024 changes; each expected instant is what
 * LocalDateTime.of(...).atZone(ZoneId.of(...)).toInstant() gives (also
 * Python's zoneinfo with fold=0).  PostgreSQL's DetermineTimeZoneOffset
 * answers the later instant for repeated times (06:30Z for the first case).
 */
static void
test_zone_offset_for_local(void **state)
{
	/* America/New_York, 2024-11-03: 02:00 EDT (-4) becomes 01:00 EST (-5) at 06:00Z */
	const int64_t edt = -4 * 3600,
				est = -5 * 3600,
				fall = 1730613600;
	/* America/New_York, 2024-03-10: 02:00 EST becomes 03:00 EDT at 07:00Z */
	const int64_t spring = 1710054000;
	/* Australia/Sydney, 2024-04-07: 03:00 AEDT (+11) becomes 02:00 AEST (+10) at 2024-04-06 16:00Z */
	const int64_t aedt = 11 * 3600,
				aest = 10 * 3600,
				syd_fall = 1712419200;
	/* Australia/Sydney, 2024-10-06: 02:00 AEST becomes 03:00 AEDT at 2024-10-05 16:00Z */
	const int64_t syd_spring = 1728144000;
	int64_t		local;

	(void) state;

	/* 2024-11-03 01:30 happens twice: java takes EDT, 05:30Z (not 06:30Z) */
	local = 1730597400;
	assert_true(cosid_zone_offset_for_local(local, edt, fall, est) == edt);
	assert_true(local - cosid_zone_offset_for_local(local, edt, fall, est) == 1730611800);
	/* the whole repeated hour, 01:00:00 to 01:59:59, is EDT; 02:00 is EST only */
	assert_true(cosid_zone_offset_for_local(1730595600, edt, fall, est) == edt);
	assert_true(cosid_zone_offset_for_local(1730599199, edt, fall, est) == edt);
	assert_true(cosid_zone_offset_for_local(1730599200, edt, fall, est) == est);
	assert_true(cosid_zone_offset_for_local(1730595599, edt, fall, est) == edt);

	/* 2024-03-10 02:30 never happens: java moves it to 03:30 EDT, 07:30Z */
	local = 1710037800;
	assert_true(cosid_zone_offset_for_local(local, est, spring, edt) == est);
	assert_true(local - cosid_zone_offset_for_local(local, est, spring, edt) == 1710055800);
	/* 02:00 is 03:00 EDT (07:00Z); 01:59:59 is EST; 03:00 is EDT (07:00Z) */
	assert_true(1710036000 - cosid_zone_offset_for_local(1710036000, est, spring, edt) == 1710054000);
	assert_true(cosid_zone_offset_for_local(1710035999, est, spring, edt) == est);
	assert_true(cosid_zone_offset_for_local(1710039600, est, spring, edt) == edt);
	assert_true(1710039600 - cosid_zone_offset_for_local(1710039600, est, spring, edt) == 1710054000);

	/* east of UTC: Sydney 2024-04-07 02:30 twice, java takes AEDT, 15:30Z */
	local = 1712457000;
	assert_true(cosid_zone_offset_for_local(local, aedt, syd_fall, aest) == aedt);
	assert_true(local - aedt == 1712417400);
	/* Sydney 2024-10-06 02:30 never happens: 03:30 AEDT, 2024-10-05 16:30Z */
	local = 1728181800;
	assert_true(cosid_zone_offset_for_local(local, aest, syd_spring, aedt) == aest);
	assert_true(local - aest == 1728145800);

	/* far from a change: the side it is on */
	assert_true(cosid_zone_offset_for_local(1730597400 - 86400, edt, fall, est) == edt);
	assert_true(cosid_zone_offset_for_local(1730597400 + 86400, edt, fall, est) == est);
}

/* A layout's ids and the instants of its times, checked against overflow. */
static void
test_layout_ids_and_times(void **state)
{
	const CosidLayout js = cosid_preset_layout(COSID_PRESET_JS_SAFE_MS);
	const CosidLayout snow = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	/* seconds with 50 time bits: its last times are past year 294247 */
	CosidLayout wide_s = {COSID_SNOWFLAKE_EPOCH_MS, 1000, 50, 10, 3, 3};
	const int64_t max_ms = INT64_MAX / 1000;	/* 9223372036854775 */
	int64_t		ms = -1;

	(void) state;
	/* JS_SAFE_MS: 53 bits, 0 to 2^53 - 1 */
	assert_true(cosid_layout_holds_id(&js, 0, 0));
	assert_true(cosid_layout_holds_id(&js, 0, INT64_C(9007199254740991)));
	assert_false(cosid_layout_holds_id(&js, 0, INT64_C(9007199254740992)));
	assert_false(cosid_layout_holds_id(&js, 0, -1));
	assert_false(cosid_layout_holds_id(&js, 0, INT64_MIN));
	/* with 4 uncertainty bits: 57 bits */
	assert_true(cosid_layout_holds_id(&js, 4, (INT64_C(1) << 57) - 1));
	assert_false(cosid_layout_holds_id(&js, 4, INT64_C(1) << 57));
	/* 63 bits: every bigint but the negative ones */
	assert_true(cosid_layout_holds_id(&snow, 0, INT64_MAX));
	assert_false(cosid_layout_holds_id(&snow, 0, -1));

	/* time 0 is the epoch; the last time of 41 bits is 2089-08-30 07:47:35.551Z */
	assert_true(cosid_layout_time_ms(&snow, 0, max_ms, &ms));
	assert_true(ms == INT64_C(1577203200000));
	assert_true(cosid_layout_time_ms(&snow, (INT64_C(1) << 41) - 1, max_ms, &ms));
	assert_true(ms == INT64_C(3776226455551));
	assert_true(cosid_layout_last_time(&snow, max_ms) == (INT64_C(1) << 41) - 1);
	/* a time past the layout or a negative one has no instant */
	ms = -1;
	assert_false(cosid_layout_time_ms(&snow, INT64_C(1) << 41, max_ms, &ms));
	assert_false(cosid_layout_time_ms(&snow, -1, max_ms, &ms));
	assert_true(ms == -1);
	/* a limit inside the layout: exactly up to it */
	assert_true(cosid_layout_time_ms(&snow, 1000, INT64_C(1577203201000), &ms));
	assert_false(cosid_layout_time_ms(&snow, 1001, INT64_C(1577203201000), &ms));
	assert_true(cosid_layout_last_time(&snow, INT64_C(1577203201000)) == 1000);
	assert_true(cosid_layout_last_time(&snow, INT64_C(1577203199999)) == -1);

	/*
	 * 2^50 - 1 seconds would be ms * 1000 past INT64_MAX microseconds: the
	 * last time that fits is (9223372036854775 - 1577203200000) / 1000.
	 */
	assert_true(cosid_layout_last_time(&wide_s, max_ms) == INT64_C(9221794833654));
	assert_true(cosid_layout_time_ms(&wide_s, INT64_C(9221794833654), max_ms, &ms));
	assert_true(ms == INT64_C(9223372036854000));
	assert_false(cosid_layout_time_ms(&wide_s, INT64_C(9221794833655), max_ms, &ms));
	assert_false(cosid_layout_time_ms(&wide_s, (INT64_C(1) << 50) - 1, max_ms, &ms));
	/* 62 time bits in seconds: time * 1000 would overflow an int64 */
	wide_s.time_bits = 62;
	wide_s.node_bits = 0;
	wide_s.seq_bits = 1;
	assert_false(cosid_layout_time_ms(&wide_s, (INT64_C(1) << 62) - 1, INT64_MAX, &ms));
	assert_true(cosid_layout_last_time(&wide_s, INT64_MAX) ==
				(INT64_MAX - INT64_C(1577203200000)) / 1000);
}

/* ---------- codec lists ---------- */

static bool
parse_codec(Arena *a, const char *json, CosidCodec *c, char *path, char *msg)
{
	arena_init(a);
	memset(path, 'x', MSGLEN);
	memset(msg, 'x', MSGLEN);
	return cosid_codec_parse(json, strlen(json), "codec", arena_alloc, a, c,
							 path, MSGLEN, msg, MSGLEN);
}

static CosidCodec *
parse_ok(Arena *a, const char *json)
{
	static CosidCodec c;
	char		path[MSGLEN];
	char		msg[MSGLEN];

	if (!parse_codec(a, json, &c, path, msg))
		fail_msg("%s: unexpected error at %s: %s", json, path, msg);
	return &c;
}

/* Parse, expect failure, and compare "path: msg". */
static void
expect_codec_error(const char *json, const char *want_path, const char *want_msg)
{
	Arena		a;
	CosidCodec	c;
	char		path[MSGLEN];
	char		msg[MSGLEN];
	bool		ok;

	ok = parse_codec(&a, json, &c, path, msg);
	arena_free(&a);
	if (ok)
		fail_msg("%s: parsed, expected an error at %s", json, want_path);
	assert_string_equal(path, want_path);
	assert_string_equal(msg, want_msg);
}

static void
test_codec_kind_names(void **state)
{
	(void) state;
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_RADIX), "radix");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_FRIENDLY), "friendly");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_CUSTOM), "custom");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_PARTS_RADIX), "parts-radix");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_PARTS_FRIENDLY), "parts-friendly");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_GROUPED), "grouped");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_PREFIX), "prefix");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_SUFFIX), "suffix");
	assert_string_equal(cosid_codec_kind_name(COSID_CODEC_DATE_PREFIX), "date-prefix");
	assert_null(cosid_codec_kind_name((CosidCodecKind) 9));
	assert_null(cosid_codec_kind_name((CosidCodecKind) -1));
}

static void
test_codec_radix_items(void **state)
{
	Arena		a;
	CosidCodec *c;

	(void) state;
	c = parse_ok(&a, "[{\"radix\": 62}]");
	assert_int_equal(c->nitems, 1);
	assert_int_equal(c->items[0].kind, COSID_CODEC_RADIX);
	assert_int_equal(c->items[0].radix.radix, 62);
	assert_int_equal(c->items[0].radix.width, 11);
	assert_false(c->items[0].radix.pad_start);
	assert_null(c->items[0].zone);
	assert_int_equal(c->items[0].group, COSID_GROUP_NONE);
	arena_free(&a);

	c = parse_ok(&a, "[{\"radix\": {\"radix\": 36}}]");
	assert_int_equal(c->items[0].radix.radix, 36);
	assert_int_equal(c->items[0].radix.width, 13);
	assert_false(c->items[0].radix.pad_start);
	arena_free(&a);

	c = parse_ok(&a, "[{\"radix\": {\"pad-start\": true, \"width\": 64, \"radix\": 2}}]");
	assert_int_equal(c->items[0].radix.radix, 2);
	assert_int_equal(c->items[0].radix.width, 64);
	assert_true(c->items[0].radix.pad_start);
	arena_free(&a);

	c = parse_ok(&a, "[{\"radix\": {\"radix\": 10, \"width\": 1, \"pad-start\": false}}]");
	assert_int_equal(c->items[0].radix.radix, 10);
	assert_int_equal(c->items[0].radix.width, 1);
	assert_false(c->items[0].radix.pad_start);
	arena_free(&a);

	c = parse_ok(&a, "[{\"parts-radix\": 62}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_PARTS_RADIX);
	assert_int_equal(c->items[0].radix.radix, 62);
	arena_free(&a);

	c = parse_ok(&a, "[{\"parts-radix\": {\"radix\": 36}}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_PARTS_RADIX);
	assert_int_equal(c->items[0].radix.radix, 36);
	arena_free(&a);
}

static void
test_codec_friendly_items(void **state)
{
	Arena		a;
	CosidCodec *c;

	(void) state;
	c = parse_ok(&a, "[{\"friendly\": {}}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_FRIENDLY);
	assert_true(c->items[0].pad_start);
	assert_null(c->items[0].zone);
	assert_false(c->items[0].has_layout);
	arena_free(&a);

	c = parse_ok(&a, "[{\"friendly\": {\"zone\": \"Asia/Shanghai\", \"pad-start\": false, \"layout\": \"snowflake_s\"}}]");
	assert_false(c->items[0].pad_start);
	assert_string_equal(c->items[0].zone, "Asia/Shanghai");
	assert_true(c->items[0].has_layout);
	assert_int_equal(c->items[0].layout, COSID_PRESET_SNOWFLAKE_S);
	arena_free(&a);

	c = parse_ok(&a, "[{\"friendly\": {\"layout\": \"COSID_80\"}}]");
	assert_true(c->items[0].has_layout);
	assert_int_equal(c->items[0].layout, COSID_PRESET_COSID_80);
	arena_free(&a);

	c = parse_ok(&a, "[{\"parts-friendly\": {}}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_PARTS_FRIENDLY);
	assert_true(c->items[0].pad_start);
	assert_null(c->items[0].zone);
	arena_free(&a);

	c = parse_ok(&a, "[{\"parts-friendly\": {\"zone\": \"UTC\", \"pad-start\": false}}]");
	assert_false(c->items[0].pad_start);
	assert_string_equal(c->items[0].zone, "UTC");
	arena_free(&a);

	/* 64 bytes of zone is the limit. */
	c = parse_ok(&a, "[{\"friendly\": {\"zone\": \"America/Argentina/ComodRivadavia____________________________0123\"}}]");
	assert_int_equal(strlen(c->items[0].zone), 64);
	arena_free(&a);
}

static void
test_codec_other_items(void **state)
{
	Arena		a;
	CosidCodec *c;

	(void) state;
	c = parse_ok(&a, "[{\"custom\": {\"encode\": \"f(bigint)\", \"decode\": \"g(text)\"}}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_CUSTOM);
	assert_string_equal(c->items[0].encode_fn, "f(bigint)");
	assert_string_equal(c->items[0].decode_fn, "g(text)");
	arena_free(&a);

	c = parse_ok(&a, "[{\"grouped\": {}}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_GROUPED);
	assert_string_equal(c->items[0].delimiter, "-");
	assert_true(in_arena(&a, c->items[0].delimiter));
	assert_int_equal(c->items[0].group, COSID_GROUP_DAY);
	assert_false(c->items[0].value_is_radix);
	arena_free(&a);

	c = parse_ok(&a, "[{\"grouped\": {\"delimiter\": \"\", \"group\": \"Month\", \"value\": {\"radix\": {\"radix\": 36, \"width\": 6, \"pad-start\": true}}}}]");
	assert_string_equal(c->items[0].delimiter, "");
	assert_int_equal(c->items[0].group, COSID_GROUP_MONTH);
	assert_true(c->items[0].value_is_radix);
	assert_int_equal(c->items[0].radix.radix, 36);
	assert_int_equal(c->items[0].radix.width, 6);
	assert_true(c->items[0].radix.pad_start);
	arena_free(&a);

	c = parse_ok(&a, "[{\"grouped\": {\"group\": \"year\", \"value\": {\"radix\": 62}}}]");
	assert_int_equal(c->items[0].group, COSID_GROUP_YEAR);
	assert_true(c->items[0].value_is_radix);
	assert_int_equal(c->items[0].radix.radix, 62);
	assert_int_equal(c->items[0].radix.width, 11);
	assert_false(c->items[0].radix.pad_start);
	arena_free(&a);

	c = parse_ok(&a, "[{\"grouped\": {\"group\": \"DAY\"}}]");
	assert_int_equal(c->items[0].group, COSID_GROUP_DAY);
	arena_free(&a);

	c = parse_ok(&a, "[{\"prefix\": \"O\"}, {\"suffix\": \"\"}, {\"prefix\": \"\\u00e9\"}]");
	assert_int_equal(c->nitems, 3);
	assert_int_equal(c->items[0].kind, COSID_CODEC_PREFIX);
	assert_string_equal(c->items[0].text, "O");
	assert_int_equal(c->items[1].kind, COSID_CODEC_SUFFIX);
	assert_string_equal(c->items[1].text, "");
	assert_string_equal(c->items[2].text, "\xc3\xa9");
	arena_free(&a);

	c = parse_ok(&a, "[{\"date-prefix\": {}}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_DATE_PREFIX);
	assert_string_equal(c->items[0].pattern, "yyyyMMdd");
	assert_int_equal(c->items[0].pattern_len, 8);
	assert_string_equal(c->items[0].delimiter, "");
	/* Defaults live in the caller's arena too. */
	assert_true(in_arena(&a, c->items[0].pattern));
	assert_true(in_arena(&a, c->items[0].delimiter));
	assert_false(c->items[0].has_source);
	assert_null(c->items[0].zone);
	arena_free(&a);

	c = parse_ok(&a, "[{\"date-prefix\": {\"pattern\": \"yyMMdd\", \"delimiter\": \"-\", \"source\": \"now\", \"zone\": \"Europe/Riga\"}}]");
	assert_string_equal(c->items[0].pattern, "yyMMdd");
	assert_int_equal(c->items[0].pattern_len, 6);
	assert_string_equal(c->items[0].delimiter, "-");
	assert_true(c->items[0].has_source);
	assert_int_equal(c->items[0].source, COSID_SOURCE_NOW);
	assert_string_equal(c->items[0].zone, "Europe/Riga");
	arena_free(&a);

	c = parse_ok(&a, "[{\"date-prefix\": {\"source\": \"ID_TIME\"}}]");
	assert_true(c->items[0].has_source);
	assert_int_equal(c->items[0].source, COSID_SOURCE_ID_TIME);
	arena_free(&a);

	/* The seed's example list, in order. */
	c = parse_ok(&a, "[{\"radix\": {\"radix\": 62}},"
				 " {\"date-prefix\": {\"pattern\": \"yyMMdd\", \"delimiter\": \"\", \"source\": \"NOW\"}},"
				 " {\"prefix\": \"O\"}]");
	assert_int_equal(c->nitems, 3);
	assert_int_equal(c->items[0].kind, COSID_CODEC_RADIX);
	assert_int_equal(c->items[1].kind, COSID_CODEC_DATE_PREFIX);
	assert_int_equal(c->items[1].source, COSID_SOURCE_NOW);
	assert_int_equal(c->items[2].kind, COSID_CODEC_PREFIX);
	arena_free(&a);

	/* No items: plain decimal.  Wrappers alone are fine too. */
	c = parse_ok(&a, " [ ] ");
	assert_int_equal(c->nitems, 0);
	arena_free(&a);
	c = parse_ok(&a, "[{\"date-prefix\": {}}, {\"date-prefix\": {\"pattern\": \"HH\"}}]");
	assert_int_equal(c->nitems, 2);
	assert_string_equal(c->items[1].pattern, "HH");
	assert_int_equal(c->items[1].pattern_len, 2);
	arena_free(&a);

	/* Sixteen items is the limit. */
	c = parse_ok(&a, "[{\"radix\":62},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},"
				 "{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},"
				 "{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},"
				 "{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"suffix\":\"z\"}]");
	assert_int_equal(c->nitems, 16);
	assert_int_equal(c->items[15].kind, COSID_CODEC_SUFFIX);
	arena_free(&a);
}

#define ITEMS "radix, friendly, custom, parts-radix, parts-friendly, grouped, prefix, suffix or date-prefix"
#define FIELDS "expected yyyy, yy, MM, dd, HH, mm, ss or SSS"
#define ZONE_MSG "expected a time zone name: 1 to 64 printable ASCII characters without spaces"

static void
test_codec_list_errors(void **state)
{
	(void) state;
	expect_codec_error("{}", "codec", "expected an array of codec items");
	expect_codec_error("\"radix\"", "codec", "expected an array of codec items");
	expect_codec_error("[{\"radix\":62},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},"
					   "{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},"
					   "{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},"
					   "{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"prefix\":\"a\"},{\"suffix\":\"z\"},"
					   "{\"suffix\":\"z\"}]",
					   "codec", "expected at most 16 items");
	expect_codec_error("[62]", "codec[0]",
					   "expected an object with one key naming the item: " ITEMS);
	expect_codec_error("[{}]", "codec[0]",
					   "expected an object with one key naming the item: " ITEMS);
	expect_codec_error("[{\"prefix\": \"a\", \"suffix\": \"b\"}]", "codec[0]",
					   "expected an object with one key naming the item: " ITEMS);
	expect_codec_error("[{\"prefix\": \"a\"}, [1]]", "codec[1]",
					   "expected an object with one key naming the item: " ITEMS);
	expect_codec_error("[{\"base62\": {}}]", "codec[0].base62",
					   "unknown codec item; expected " ITEMS);
	expect_codec_error("[{\"Radix\": 62}]", "codec[0].Radix",
					   "unknown codec item; expected " ITEMS);
	/* Converters only come first. */
	expect_codec_error("[{\"prefix\": \"a\"}, {\"radix\": 62}]", "codec[1].radix",
					   "must be the first item: radix, friendly, custom, parts-radix, parts-friendly and grouped turn the number into text");
	expect_codec_error("[{\"radix\": 62}, {\"friendly\": {}}]", "codec[1].friendly",
					   "must be the first item: radix, friendly, custom, parts-radix, parts-friendly and grouped turn the number into text");
	expect_codec_error("[{\"suffix\": \"a\"}, {\"grouped\": {}}]", "codec[1].grouped",
					   "must be the first item: radix, friendly, custom, parts-radix, parts-friendly and grouped turn the number into text");
	expect_codec_error("[{\"prefix\": \"a\"}, {\"custom\": {}}]", "codec[1].custom",
					   "must be the first item: radix, friendly, custom, parts-radix, parts-friendly and grouped turn the number into text");
	expect_codec_error("[{\"prefix\": \"a\"}, {\"parts-radix\": 62}]", "codec[1].parts-radix",
					   "must be the first item: radix, friendly, custom, parts-radix, parts-friendly and grouped turn the number into text");
	expect_codec_error("[{\"prefix\": \"a\"}, {\"parts-friendly\": {}}]", "codec[1].parts-friendly",
					   "must be the first item: radix, friendly, custom, parts-radix, parts-friendly and grouped turn the number into text");
}

static void
test_codec_radix_errors(void **state)
{
	(void) state;
	expect_codec_error("[{\"radix\": 1}]", "codec[0].radix", "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": 63}]", "codec[0].radix", "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": -62}]", "codec[0].radix", "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": 62.0}]", "codec[0].radix",
					   "expected an integer from 2 to 62, not a fraction or exponent");
	expect_codec_error("[{\"radix\": 6.2e1}]", "codec[0].radix",
					   "expected an integer from 2 to 62, not a fraction or exponent");
	expect_codec_error("[{\"radix\": 62e0}]", "codec[0].radix",
					   "expected an integer from 2 to 62, not a fraction or exponent");
	expect_codec_error("[{\"radix\": 99999999999999999999999999}]", "codec[0].radix",
					   "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": -9223372036854775808}]", "codec[0].radix",
					   "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": 18446744073709551678}]", "codec[0].radix",
					   "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": \"62\"}]", "codec[0].radix",
					   "expected an integer from 2 to 62 or an object");
	expect_codec_error("[{\"radix\": null}]", "codec[0].radix",
					   "expected an integer from 2 to 62 or an object");
	expect_codec_error("[{\"radix\": [62]}]", "codec[0].radix",
					   "expected an integer from 2 to 62 or an object");
	expect_codec_error("[{\"radix\": {}}]", "codec[0].radix.radix",
					   "missing; expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": {\"width\": 5}}]", "codec[0].radix.radix",
					   "missing; expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": {\"radix\": 0}}]", "codec[0].radix.radix",
					   "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": {\"radix\": true}}]", "codec[0].radix.radix",
					   "expected an integer from 2 to 62");
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"width\": 0}}]", "codec[0].radix.width",
					   "expected an integer from 1 to 64");
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"width\": 65}}]", "codec[0].radix.width",
					   "expected an integer from 1 to 64");
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"width\": 11.5}}]", "codec[0].radix.width",
					   "expected an integer from 1 to 64, not a fraction or exponent");
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"pad-start\": 1}}]", "codec[0].radix.pad-start",
					   "expected true or false");
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"pad-start\": \"true\"}}]", "codec[0].radix.pad-start",
					   "expected true or false");
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"padStart\": true}}]", "codec[0].radix.padStart",
					   "unknown key; expected \"radix\", \"width\" or \"pad-start\"");
	expect_codec_error("[{\"parts-radix\": {\"radix\": 62, \"width\": 11}}]", "codec[0].parts-radix.width",
					   "unknown key; expected \"radix\"");
	expect_codec_error("[{\"parts-radix\": {}}]", "codec[0].parts-radix.radix",
					   "missing; expected an integer from 2 to 62");
	expect_codec_error("[{\"parts-radix\": 64}]", "codec[0].parts-radix",
					   "expected an integer from 2 to 62");
	expect_codec_error("[{\"parts-radix\": false}]", "codec[0].parts-radix",
					   "expected an integer from 2 to 62 or an object");
}

static void
test_codec_friendly_errors(void **state)
{
	(void) state;
	expect_codec_error("[{\"friendly\": true}]", "codec[0].friendly", "expected an object");
	expect_codec_error("[{\"friendly\": []}]", "codec[0].friendly", "expected an object");
	expect_codec_error("[{\"friendly\": {\"zone\": \"\"}}]", "codec[0].friendly.zone", ZONE_MSG);
	expect_codec_error("[{\"friendly\": {\"zone\": \"Asia/ Shanghai\"}}]", "codec[0].friendly.zone", ZONE_MSG);
	expect_codec_error("[{\"friendly\": {\"zone\": \"Europe/R\\u012bga\"}}]", "codec[0].friendly.zone", ZONE_MSG);
	expect_codec_error("[{\"friendly\": {\"zone\": \"a\\tb\"}}]", "codec[0].friendly.zone", ZONE_MSG);
	expect_codec_error("[{\"friendly\": {\"zone\": 8}}]", "codec[0].friendly.zone", ZONE_MSG);
	expect_codec_error("[{\"friendly\": {\"zone\": \"America/Argentina/ComodRivadavia____________________________01234\"}}]",
					   "codec[0].friendly.zone", ZONE_MSG);
	expect_codec_error("[{\"friendly\": {\"pad-start\": null}}]", "codec[0].friendly.pad-start",
					   "expected true or false");
	expect_codec_error("[{\"friendly\": {\"layout\": \"SNOWFLAKE\"}}]", "codec[0].friendly.layout",
					   "expected a layout: SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80");
	expect_codec_error("[{\"friendly\": {\"layout\": {}}}]", "codec[0].friendly.layout",
					   "expected a layout: SNOWFLAKE_MS, SNOWFLAKE_S, JS_SAFE_MS, JS_SAFE_S or COSID_80");
	expect_codec_error("[{\"friendly\": {\"Zone\": \"UTC\"}}]", "codec[0].friendly.Zone",
					   "unknown key; expected \"zone\", \"pad-start\" or \"layout\"");
	expect_codec_error("[{\"parts-friendly\": {\"layout\": \"COSID_80\"}}]", "codec[0].parts-friendly.layout",
					   "unknown key; expected \"zone\" or \"pad-start\"");
	expect_codec_error("[{\"parts-friendly\": 1}]", "codec[0].parts-friendly", "expected an object");
	expect_codec_error("[{\"parts-friendly\": {\"zone\": \"\"}}]", "codec[0].parts-friendly.zone", ZONE_MSG);
}

static void
test_codec_other_errors(void **state)
{
	(void) state;
	/* custom */
	expect_codec_error("[{\"custom\": \"f\"}]", "codec[0].custom", "expected an object");
	expect_codec_error("[{\"custom\": {}}]", "codec[0].custom.encode",
					   "missing; expected a function such as \"f(bigint)\"");
	expect_codec_error("[{\"custom\": {\"encode\": \"f(bigint)\"}}]", "codec[0].custom.decode",
					   "missing; expected a function such as \"g(text)\"");
	expect_codec_error("[{\"custom\": {\"decode\": \"g(text)\"}}]", "codec[0].custom.encode",
					   "missing; expected a function such as \"f(bigint)\"");
	expect_codec_error("[{\"custom\": {\"encode\": \"\", \"decode\": \"g(text)\"}}]", "codec[0].custom.encode",
					   "expected a non-empty string of at most 200 bytes");
	expect_codec_error("[{\"custom\": {\"encode\": \"f(bigint)\", \"decode\": 1}}]", "codec[0].custom.decode",
					   "expected a non-empty string of at most 200 bytes");
	expect_codec_error("[{\"custom\": {\"encode\": \"f\", \"decode\": \"g\", \"schema\": \"s\"}}]",
					   "codec[0].custom.schema", "unknown key; expected \"encode\" and \"decode\"");
	/* grouped */
	expect_codec_error("[{\"grouped\": 1}]", "codec[0].grouped", "expected an object");
	expect_codec_error("[{\"grouped\": {\"group\": \"week\"}}]", "codec[0].grouped.group",
					   "expected \"day\", \"month\" or \"year\"");
	expect_codec_error("[{\"grouped\": {\"group\": 1}}]", "codec[0].grouped.group",
					   "expected \"day\", \"month\" or \"year\"");
	expect_codec_error("[{\"grouped\": {\"delimiter\": 1}}]", "codec[0].grouped.delimiter",
					   "expected a string of at most 64 bytes");
	expect_codec_error("[{\"grouped\": {\"value\": 62}}]", "codec[0].grouped.value",
					   "expected an object {\"radix\": ...}");
	expect_codec_error("[{\"grouped\": {\"value\": {}}}]", "codec[0].grouped.value",
					   "expected an object {\"radix\": ...}");
	expect_codec_error("[{\"grouped\": {\"value\": {\"friendly\": {}}}}]", "codec[0].grouped.value.friendly",
					   "unknown key; expected \"radix\"");
	expect_codec_error("[{\"grouped\": {\"value\": {\"radix\": 62, \"prefix\": \"a\"}}}]",
					   "codec[0].grouped.value.prefix", "unknown key; expected \"radix\"");
	expect_codec_error("[{\"grouped\": {\"value\": {\"radix\": {\"radix\": 62, \"width\": 99}}}}]",
					   "codec[0].grouped.value.radix.width", "expected an integer from 1 to 64");
	expect_codec_error("[{\"grouped\": {\"value\": {\"radix\": 1}}}]",
					   "codec[0].grouped.value.radix", "expected an integer from 2 to 62");
	expect_codec_error("[{\"grouped\": {\"value\": {\"radix\": {}}}}]",
					   "codec[0].grouped.value.radix.radix", "missing; expected an integer from 2 to 62");
	expect_codec_error("[{\"grouped\": {\"period\": \"day\"}}]", "codec[0].grouped.period",
					   "unknown key; expected \"delimiter\", \"value\" or \"group\"");
	/* prefix, suffix */
	expect_codec_error("[{\"prefix\": 1}]", "codec[0].prefix", "expected a string of at most 64 bytes");
	expect_codec_error("[{\"suffix\": null}]", "codec[0].suffix", "expected a string of at most 64 bytes");
	expect_codec_error("[{\"prefix\": \"0123456789012345678901234567890123456789012345678901234567890123X\"}]",
					   "codec[0].prefix", "expected a string of at most 64 bytes");
	/* date-prefix */
	expect_codec_error("[{\"date-prefix\": \"yyyyMMdd\"}]", "codec[0].date-prefix", "expected an object");
	expect_codec_error("[{\"date-prefix\": {\"source\": \"id-time\"}}]", "codec[0].date-prefix.source",
					   "expected \"ID_TIME\" or \"NOW\"");
	expect_codec_error("[{\"prefix\": \"O\"}, {\"date-prefix\": {\"source\": \"clock\"}}]", "codec[1].date-prefix.source",
					   "expected \"ID_TIME\" or \"NOW\"");
	expect_codec_error("[{\"date-prefix\": {\"source\": null}}]", "codec[0].date-prefix.source",
					   "expected \"ID_TIME\" or \"NOW\"");
	expect_codec_error("[{\"date-prefix\": {\"pattern\": \"yyy\"}}]", "codec[0].date-prefix.pattern",
					   "\"yyy\" is not a date field; " FIELDS);
	expect_codec_error("[{\"date-prefix\": {\"pattern\": \"\"}}]", "codec[0].date-prefix.pattern",
					   "the pattern is empty");
	expect_codec_error("[{\"date-prefix\": {\"pattern\": \"yyyyMMddyy\"}}]", "codec[0].date-prefix.pattern",
					   "\"yy\" repeats the year");
	expect_codec_error("[{\"date-prefix\": {\"pattern\": 8}}]", "codec[0].date-prefix.pattern",
					   "expected a date pattern of at most 32 bytes");
	expect_codec_error("[{\"date-prefix\": {\"pattern\": \"yyyy-MM-dd-----------------------\"}}]",
					   "codec[0].date-prefix.pattern", "expected a date pattern of at most 32 bytes");
	expect_codec_error("[{\"date-prefix\": {\"delimiter\": []}}]", "codec[0].date-prefix.delimiter",
					   "expected a string of at most 64 bytes");
	expect_codec_error("[{\"date-prefix\": {\"zone\": \"\"}}]", "codec[0].date-prefix.zone", ZONE_MSG);
	expect_codec_error("[{\"date-prefix\": {\"format\": \"yyyy\"}}]", "codec[0].date-prefix.format",
					   "unknown key; expected \"pattern\", \"delimiter\", \"source\" or \"zone\"");
}

static void
test_codec_limits_accepted(void **state)
{
	Arena		a;
	CosidCodec *c;
	char		json[512];

	(void) state;
	/* 64-byte prefix, 32-byte pattern, 200-byte function names. */
	c = parse_ok(&a, "[{\"prefix\": \"0123456789012345678901234567890123456789012345678901234567890123\"}]");
	assert_int_equal(strlen(c->items[0].text), 64);
	arena_free(&a);
	c = parse_ok(&a, "[{\"date-prefix\": {\"pattern\": \"yyyy-MM-dd----------------------\"}}]");
	assert_int_equal(c->items[0].pattern_len, 32);
	arena_free(&a);

	strcpy(json, "[{\"custom\": {\"encode\": \"");
	memset(json + 24, 'f', 200);
	strcpy(json + 24 + 200, "\", \"decode\": \"g\"}}]");
	c = parse_ok(&a, json);
	assert_int_equal(strlen(c->items[0].encode_fn), 200);
	arena_free(&a);
	strcpy(json, "[{\"custom\": {\"encode\": \"");
	memset(json + 24, 'f', 201);
	strcpy(json + 24 + 201, "\", \"decode\": \"g\"}}]");
	expect_codec_error(json, "codec[0].custom.encode",
					   "expected a non-empty string of at most 200 bytes");
}

/* ---------- JSON ---------- */

static void
test_json_syntax_errors(void **state)
{
	(void) state;
	expect_codec_error("", "codec", "invalid JSON at byte 0: unexpected end of input, expected a value");
	expect_codec_error("   ", "codec", "invalid JSON at byte 3: unexpected end of input, expected a value");
	expect_codec_error("[", "codec", "invalid JSON at byte 1: unexpected end of input, expected a value");
	expect_codec_error("[1,", "codec", "invalid JSON at byte 3: unexpected end of input, expected a value");
	expect_codec_error("[1 2]", "codec", "invalid JSON at byte 3: expected \",\" or \"]\"");
	expect_codec_error("[1,]", "codec", "invalid JSON at byte 3: expected a value");
	expect_codec_error("[] x", "codec", "invalid JSON at byte 3: unexpected data after the JSON value");
	expect_codec_error("[]]", "codec", "invalid JSON at byte 2: unexpected data after the JSON value");
	expect_codec_error("[],", "codec", "invalid JSON at byte 2: unexpected data after the JSON value");
	expect_codec_error("[][]", "codec", "invalid JSON at byte 2: unexpected data after the JSON value");
	expect_codec_error("{\"a\" 1}", "codec", "invalid JSON at byte 5: expected \":\" after an object key");
	expect_codec_error("{a: 1}", "codec", "invalid JSON at byte 1: expected a string as an object key");
	expect_codec_error("{\"a\": 1,}", "codec", "invalid JSON at byte 8: expected a string as an object key");
	expect_codec_error("{\"a\": 1 \"b\": 2}", "codec", "invalid JSON at byte 8: expected \",\" or \"}\"");
	expect_codec_error("[tru]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[nul]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[True]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[truex]", "codec", "invalid JSON at byte 5: expected \",\" or \"]\"");
	expect_codec_error("['a']", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[\"abc", "codec", "invalid JSON at byte 1: unterminated string");
	expect_codec_error("[\"abc\\\"]", "codec", "invalid JSON at byte 1: unterminated string");
	expect_codec_error("[\"a\\", "codec", "invalid JSON at byte 1: unterminated string");
	expect_codec_error("[\"a\\x\"]", "codec", "invalid JSON at byte 3: invalid escape in a string");
	expect_codec_error("[\"a\nb\"]", "codec", "invalid JSON at byte 3: control characters must be escaped in a string");
	expect_codec_error("[\"a\x01\"]", "codec", "invalid JSON at byte 3: control characters must be escaped in a string");
	expect_codec_error("\xef\xbb\xbf[]", "codec", "invalid JSON at byte 0: expected a value");
	/* Numbers. */
	expect_codec_error("[01]", "codec", "invalid JSON at byte 1: a number cannot have a leading zero");
	expect_codec_error("[-01]", "codec", "invalid JSON at byte 1: a number cannot have a leading zero");
	expect_codec_error("[-]", "codec", "invalid JSON at byte 2: expected a digit");
	expect_codec_error("[+1]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[1.]", "codec", "invalid JSON at byte 3: expected a digit after the decimal point");
	expect_codec_error("[.5]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[1e]", "codec", "invalid JSON at byte 3: expected a digit in the exponent");
	expect_codec_error("[1e+]", "codec", "invalid JSON at byte 4: expected a digit in the exponent");
	expect_codec_error("[NaN]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[Infinity]", "codec", "invalid JSON at byte 1: expected a value");
	expect_codec_error("[0x10]", "codec", "invalid JSON at byte 2: expected \",\" or \"]\"");
	/* Escapes. */
	expect_codec_error("[\"\\u12G4\"]", "codec", "invalid JSON at byte 2: expected four hex digits after \\u");
	expect_codec_error("[\"\\u12\"]", "codec", "invalid JSON at byte 2: expected four hex digits after \\u");
	expect_codec_error("[\"\\u0000\"]", "codec", "invalid JSON at byte 2: \\u0000 is not allowed in a string");
	expect_codec_error("[\"\\uD83D\"]", "codec", "invalid JSON at byte 2: a high surrogate without a low surrogate after it");
	expect_codec_error("[\"\\uD83Dx\"]", "codec", "invalid JSON at byte 2: a high surrogate without a low surrogate after it");
	expect_codec_error("[\"\\uD83D\\u0041\"]", "codec", "invalid JSON at byte 2: a high surrogate without a low surrogate after it");
	expect_codec_error("[\"\\uD83D\\uD83D\"]", "codec", "invalid JSON at byte 2: a high surrogate without a low surrogate after it");
	expect_codec_error("[\"\\uDE00\"]", "codec", "invalid JSON at byte 2: a low surrogate without a high surrogate before it");
	expect_codec_error("[\"ab\\uDE00\\uD83D\"]", "codec", "invalid JSON at byte 4: a low surrogate without a high surrogate before it");
	/* Keys are strings too. */
	expect_codec_error("[{\"\\u0000\": 1}]", "codec", "invalid JSON at byte 3: \\u0000 is not allowed in a string");
}

static void
test_json_embedded_nul(void **state)
{
	Arena		a;
	CosidCodec	c;
	char		path[MSGLEN];
	char		msg[MSGLEN];

	(void) state;
	arena_init(&a);
	assert_false(cosid_codec_parse("[]\0", 3, "codec", arena_alloc, &a, &c,
								   path, sizeof(path), msg, sizeof(msg)));
	assert_string_equal(path, "codec");
	assert_string_equal(msg, "invalid JSON at byte 2: unexpected data after the JSON value");
	arena_free(&a);
	assert_false(cosid_codec_parse("[\"a\0\"]", 5, "codec", arena_alloc, &a, &c,
								   path, sizeof(path), msg, sizeof(msg)));
	assert_string_equal(msg, "invalid JSON at byte 3: control characters must be escaped in a string");
	arena_free(&a);
	/* len, not the NUL, ends the text. */
	assert_true(cosid_codec_parse("[]garbage", 2, "codec", arena_alloc, &a, &c,
								  path, sizeof(path), msg, sizeof(msg)));
	assert_int_equal(c.nitems, 0);
	arena_free(&a);
	assert_false(cosid_codec_parse(NULL, 0, "codec", arena_alloc, &a, &c,
								   path, sizeof(path), msg, sizeof(msg)));
	assert_string_equal(msg, "invalid JSON at byte 0: unexpected end of input, expected a value");
	arena_free(&a);
}

static void
test_json_escapes(void **state)
{
	Arena		a;
	CosidCodec *c;

	(void) state;
	c = parse_ok(&a, "[{\"prefix\": \"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"}]");
	assert_string_equal(c->items[0].text, "a\"b\\c/d\be\ff\ng\rh\ti");
	arena_free(&a);
	c = parse_ok(&a, "[{\"prefix\": \"\\u0041\\u00e9\\u00E9\\u20AC\\uffff\\u0001\"}]");
	assert_string_equal(c->items[0].text, "A\xc3\xa9\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\x01");
	arena_free(&a);
	c = parse_ok(&a, "[{\"prefix\": \"\\uD83D\\uDE00|\\ud800\\udc00|\\uDBFF\\uDFFF\"}]");
	assert_string_equal(c->items[0].text, "\xf0\x9f\x98\x80|\xf0\x90\x80\x80|\xf4\x8f\xbf\xbf");
	arena_free(&a);
	/* Raw UTF-8 passes through. */
	c = parse_ok(&a, "[{\"prefix\": \"\xe2\x82\xac\xf0\x9f\x98\x80\"}]");
	assert_string_equal(c->items[0].text, "\xe2\x82\xac\xf0\x9f\x98\x80");
	arena_free(&a);
	/* Keys are unescaped before they are matched. */
	c = parse_ok(&a, "[{\"\\u0070refix\": \"x\"}]");
	assert_int_equal(c->items[0].kind, COSID_CODEC_PREFIX);
	arena_free(&a);
	/* White space everywhere it may be. */
	c = parse_ok(&a, " \t\r\n[ \t\r\n{ \"radix\" \n: \n{ \"radix\" : 36 , \"width\" : 5 } } \n] \n");
	assert_int_equal(c->items[0].radix.radix, 36);
	assert_int_equal(c->items[0].radix.width, 5);
	arena_free(&a);
	/* Numbers in places that do not matter still parse. */
	expect_codec_error("[{\"prefix\": \"a\"}, [-0, 1.5e-3, 2E+10, 123456789012345678901234567890]]", "codec[1]",
					   "expected an object with one key naming the item: " ITEMS);
	/* A 64-byte string of 2-byte characters is 128 bytes: too long. */
	expect_codec_error("[{\"prefix\": \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}]",
					   "codec[0].prefix", "expected a string of at most 64 bytes");
}

static void
test_json_depth(void **state)
{
	char		json[200];
	int			n = 0;

	(void) state;
	/* 32 nested arrays are fine JSON (then not an item). */
	for (int i = 0; i < 32; i++)
		json[n++] = '[';
	for (int i = 0; i < 32; i++)
		json[n++] = ']';
	json[n] = '\0';
	expect_codec_error(json, "codec[0]",
					   "expected an object with one key naming the item: " ITEMS);
	/* 33 are not. */
	n = 0;
	for (int i = 0; i < 33; i++)
		json[n++] = '[';
	for (int i = 0; i < 33; i++)
		json[n++] = ']';
	json[n] = '\0';
	expect_codec_error(json, "codec", "invalid JSON at byte 32: nested deeper than 32 levels");
	/* Objects count too: [ {"a": [ {"a": ... */
	n = 0;
	json[n++] = '[';
	for (int i = 0; i < 16; i++)
	{
		memcpy(json + n, "{\"a\":[", 6);
		n += 6;
	}
	json[n] = '\0';
	expect_codec_error(json, "codec", "invalid JSON at byte 96: nested deeper than 32 levels");
}

static void
test_json_duplicate_keys(void **state)
{
	char		json[1024];
	int			n;

	(void) state;
	expect_codec_error("[{\"radix\": {\"radix\": 62, \"radix\": 36}}]", "codec[0].radix.radix",
					   "duplicate key at byte 25");
	expect_codec_error("[{\"radix\": 62, \"radix\": 36}]", "codec[0].radix",
					   "duplicate key at byte 15");
	expect_codec_error("{\"a\": 1, \"a\": 2}", "codec.a", "duplicate key at byte 9");
	expect_codec_error("[{\"prefix\": \"a\"}, {\"grouped\": {\"value\": {\"radix\": {\"radix\": 2, \"width\": 3, \"width\": 4}}}}]",
					   "codec[1].grouped.value.radix.width", "duplicate key at byte 75");
	/* Equal after unescaping. */
	expect_codec_error("[{\"prefix\": \"a\", \"\\u0070refix\": \"b\"}]", "codec[0].prefix",
					   "duplicate key at byte 17");
	/* A key that differs only in length is not a duplicate. */
	expect_codec_error("[{\"prefix\": \"a\", \"prefix2\": \"b\"}]", "codec[0]",
					   "expected an object with one key naming the item: " ITEMS);

	/* A large object goes through the sorting path: k0..k19, then k7 again and k3. */
	n = sprintf(json, "[{\"prefix\": \"a\", \"x\": {");
	for (int i = 0; i < 20; i++)
		n += sprintf(json + n, "\"k%d\": %d, ", i, i);
	n += sprintf(json + n, "\"k7\": 0, \"k3\": 0}}]");
	expect_codec_error(json, "codec[0].x.k7", "duplicate key at byte 223");
	/* No duplicate among 40 keys: then the item's own errors. */
	n = sprintf(json, "[{\"x\": {");
	for (int i = 0; i < 40; i++)
		n += sprintf(json + n, "%s\"k%d\": %d", i ? ", " : "", i, i);
	sprintf(json + n, "}}]");
	expect_codec_error(json, "codec[0].x", "unknown codec item; expected " ITEMS);
}

static void
test_json_paths(void **state)
{
	Arena		a;
	CosidCodec	c;
	char		path[12];
	char		msg[10];
	char		big[MSGLEN];
	bool		ok;

	(void) state;
	/* Truncation keeps both strings terminated. */
	arena_init(&a);
	ok = cosid_codec_parse("[{\"date-prefix\": {\"source\": 1}}]", 32, "codec",
						   arena_alloc, &a, &c, path, sizeof(path), msg,
						   sizeof(msg));
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(path, "codec[0].da");
	assert_string_equal(msg, "expected ");

	/* A cut never splits a UTF-8 character. */
	ok = cosid_codec_parse("[{\"\xc3\xa9\xc3\xa9\": 1}]", 13, "codec", arena_alloc,
						   &a, &c, path, sizeof(path), msg, sizeof(msg));
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(path, "codec[0].\xc3\xa9");
	ok = cosid_codec_parse("[{\"\xc3\xa9\xc3\xa9\": 1}]", 13, "codec", arena_alloc,
						   &a, &c, path, 11, msg, sizeof(msg));
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(path, "codec[0].");
	ok = cosid_codec_parse("[{\"\xc3\xa9\xc3\xa9\": 1}]", 13, "codec", arena_alloc,
						   &a, &c, path, 10, msg, sizeof(msg));
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(path, "codec[0].");

	/* No prefix; NULL buffers. */
	ok = cosid_codec_parse("[{\"radix\": 1}]", 14, NULL, arena_alloc, &a, &c,
						   big, sizeof(big), NULL, 0);
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(big, "[0].radix");
	ok = cosid_codec_parse("[x]", 3, NULL, arena_alloc, &a, &c, big,
						   sizeof(big), NULL, 0);
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(big, "");
	ok = cosid_codec_parse("[{\"radix\": 1}]", 14, "codec", arena_alloc, &a, &c,
						   NULL, 0, NULL, 0);
	arena_free(&a);
	assert_false(ok);
	ok = cosid_codec_parse("{\"a\":1,\"a\":1}", 13, "codec", arena_alloc, &a, &c,
						   NULL, 0, NULL, 0);
	arena_free(&a);
	assert_false(ok);
	/* Another prefix. */
	ok = cosid_codec_parse("[{\"radix\": 1}]", 14, "$.codec", arena_alloc, &a,
						   &c, big, sizeof(big), NULL, 0);
	arena_free(&a);
	assert_false(ok);
	assert_string_equal(big, "$.codec[0].radix");
}

static void
test_json_out_of_memory(void **state)
{
	static const char *const lists[] = {
		"[{\"radix\": {\"radix\": 62, \"width\": 11}}, {\"prefix\": \"\\u00e9\"}]",
		"[{\"prefix\": \"a\", \"x\": {\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,"
		"\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":0,\"k11\":1,\"k12\":2,\"k13\":3,"
		"\"k14\":4,\"k15\":5,\"k16\":6}}]",
		"[{\"grouped\": {\"group\": \"year\"}}, {\"date-prefix\": {\"source\": \"now\"}}]",
	};

	(void) state;
	for (int l = 0; l < 3; l++)
	{
		int			needed = -1;

		/* Fail the k-th allocation for every k until the parse gets through. */
		for (int k = 0; k < 200 && needed < 0; k++)
		{
			Arena		a;
			CosidCodec	c;
			char		path[MSGLEN];
			char		msg[MSGLEN];
			bool		ok;
			int			calls;

			arena_init(&a);
			a.fail_after = k;
			ok = cosid_codec_parse(lists[l], strlen(lists[l]), "codec",
								   arena_alloc, &a, &c, path, sizeof(path),
								   msg, sizeof(msg));
			calls = a.calls;
			arena_free(&a);
			if (calls <= k)
			{
				/* It did not hit the failing allocation. */
				needed = k;
				if (l != 1)
					assert_true(ok);
				else
				{
					assert_false(ok);
					assert_string_equal(msg, "expected an object with one key naming the item: " ITEMS);
				}
				break;
			}
			assert_false(ok);
			assert_string_equal(path, "codec");
			assert_string_equal(msg, "out of memory");
		}
		assert_true(needed > 5);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_radix_widths),
		cmocka_unit_test(test_radix62_vectors),
		cmocka_unit_test(test_radix36_vectors),
		cmocka_unit_test(test_radix_other_bases),
		cmocka_unit_test(test_radix_small_max),
		cmocka_unit_test(test_radix62_lengths),
		cmocka_unit_test(test_radix_encode_errors),
		cmocka_unit_test(test_radix_syntax),
		cmocka_unit_test(test_radix_leading_zeros),
		cmocka_unit_test(test_radix_msg_buffers),
		cmocka_unit_test(test_radix_round_trip_and_order),
		cmocka_unit_test(test_date_pattern_check),
		cmocka_unit_test(test_date_format),
		cmocka_unit_test(test_date_parse),
		cmocka_unit_test(test_friendly_vectors),
		cmocka_unit_test(test_friendly_extremes),
		cmocka_unit_test(test_friendly_errors),
		cmocka_unit_test(test_friendly_unpadded_leading_zeros),
		cmocka_unit_test(test_friendly_round_trip),
		cmocka_unit_test(test_parts_radix_vectors),
		cmocka_unit_test(test_parts_radix_errors),
		cmocka_unit_test(test_parts_radix_sorts_like_id),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_group_impossible_dates),
		cmocka_unit_test(test_days_in_month),
		cmocka_unit_test(test_zone_offset_for_local),
		cmocka_unit_test(test_layout_ids_and_times),
		cmocka_unit_test(test_codec_kind_names),
		cmocka_unit_test(test_codec_radix_items),
		cmocka_unit_test(test_codec_friendly_items),
		cmocka_unit_test(test_codec_other_items),
		cmocka_unit_test(test_codec_list_errors),
		cmocka_unit_test(test_codec_radix_errors),
		cmocka_unit_test(test_codec_friendly_errors),
		cmocka_unit_test(test_codec_other_errors),
		cmocka_unit_test(test_codec_limits_accepted),
		cmocka_unit_test(test_json_syntax_errors),
		cmocka_unit_test(test_json_embedded_nul),
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_json_depth),
		cmocka_unit_test(test_json_duplicate_keys),
		cmocka_unit_test(test_json_paths),
		cmocka_unit_test(test_json_out_of_memory),
	};

	return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}

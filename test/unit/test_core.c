/*
 * test_core.c - cmocka unit tests for src/core/ulid.c (ULIDs and UUIDv7).
 *
 * Every expected value is written out literally, so each test fails when the
 * code under test computes something else.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "core/ulid.h"

#define SENTINEL_BYTE	0xA5
#define SENTINEL_POS	((size_t) 12345)

static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/* First public vector: 1712345678901 ms and these ten random bytes. */
static const uint64_t vec1_time = UINT64_C(1712345678901);
static const uint8_t vec1_rand[ULID_RAND_BYTES] = {
	12, 240, 88, 3, 199, 45, 6, 231, 128, 17
};
static const uint8_t vec1_bytes[ULID_BYTES] = {
	0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
	0x0C, 0xF0, 0x58, 0x03, 0xC7, 0x2D, 0x06, 0xE7, 0x80, 0x11
};
static const char vec1_text[] = "01HTQW311N1KR5G0Y75M3EF00H";

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

static void
xs_bytes(Xorshift *x, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t) (xs_next(x) >> 24);
}

static int
sign_of(int v)
{
	return (v > 0) - (v < 0);
}

static char
ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

static unsigned char
ascii_upper(unsigned char c)
{
	return (c >= 'a' && c <= 'z') ? (unsigned char) (c - 'a' + 'A') : c;
}

/* Format u and return it as a NUL-terminated string in buf. */
static char *
format_str(const uint8_t u[ULID_BYTES], char buf[ULID_TEXT_LEN + 1])
{
	ulid_format(u, buf);
	buf[ULID_TEXT_LEN] = '\0';
	return buf;
}

/*
 * Parse text of len bytes that must be rejected with want and errpos; the
 * out buffer must keep its sentinel bytes.
 */
static void
expect_reject(const char *text, size_t len, UlidParseResult want,
			  size_t want_pos)
{
	uint8_t		out[ULID_BYTES];
	uint8_t		untouched[ULID_BYTES];
	size_t		pos = SENTINEL_POS;

	memset(out, SENTINEL_BYTE, sizeof(out));
	memset(untouched, SENTINEL_BYTE, sizeof(untouched));
	assert_int_equal(ulid_parse(text, len, out, &pos), want);
	assert_int_equal(pos, want_pos);
	assert_memory_equal(out, untouched, ULID_BYTES);

	/* errpos may be NULL; the result must not change. */
	assert_int_equal(ulid_parse(text, len, out, NULL), want);
	assert_memory_equal(out, untouched, ULID_BYTES);
}

static void
expect_parse(const char *text, const uint8_t want[ULID_BYTES])
{
	uint8_t		out[ULID_BYTES];
	size_t		pos = SENTINEL_POS;

	memset(out, SENTINEL_BYTE, sizeof(out));
	assert_int_equal(ulid_parse(text, strlen(text), out, &pos), ULID_PARSE_OK);
	assert_memory_equal(out, want, ULID_BYTES);
}

/* ---------- public vectors ---------- */

static void
test_vector_known(void **state)
{
	uint8_t		u[ULID_BYTES];
	char		buf[ULID_TEXT_LEN + 1];

	(void) state;
	ulid_build(vec1_time, vec1_rand, u);
	assert_memory_equal(u, vec1_bytes, ULID_BYTES);
	assert_string_equal(format_str(u, buf), vec1_text);
	expect_parse(vec1_text, vec1_bytes);
}

static void
test_vector_spec_example(void **state)
{
	static const uint8_t zero_rand[ULID_RAND_BYTES] = {0};
	static const uint8_t want[ULID_BYTES] = {
		0x01, 0x56, 0x3D, 0xF3, 0x64, 0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
	};
	uint8_t		u[ULID_BYTES];
	char		buf[ULID_TEXT_LEN + 1];

	(void) state;
	ulid_build(UINT64_C(1469918176385), zero_rand, u);
	assert_memory_equal(u, want, ULID_BYTES);
	assert_string_equal(format_str(u, buf), "01ARYZ6S410000000000000000");
	expect_parse("01ARYZ6S410000000000000000", want);
}

static void
test_vector_max(void **state)
{
	uint8_t		ones[ULID_BYTES];
	char		buf[ULID_TEXT_LEN + 1];

	(void) state;
	memset(ones, 0xFF, sizeof(ones));
	expect_parse("7ZZZZZZZZZZZZZZZZZZZZZZZZZ", ones);
	assert_string_equal(format_str(ones, buf), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
	assert_int_equal(ulid_time_ms(ones), ULID_MAX_TIME);
}

static void
test_vector_zero(void **state)
{
	uint8_t		zero[ULID_BYTES];
	char		buf[ULID_TEXT_LEN + 1];

	(void) state;
	memset(zero, 0, sizeof(zero));
	expect_parse("00000000000000000000000000", zero);
	assert_string_equal(format_str(zero, buf), "00000000000000000000000000");
}

/* ---------- rejections ---------- */

static void
test_reject_overflow(void **state)
{
	(void) state;
	expect_reject("80000000000000000000000000", 26, ULID_PARSE_OVERFLOW, 0);
	expect_reject("ZZZZZZZZZZZZZZZZZZZZZZZZZZ", 26, ULID_PARSE_OVERFLOW, 0);
	expect_reject("g0000000000000000000000000", 26, ULID_PARSE_OVERFLOW, 0);
}

static void
test_reject_length(void **state)
{
	(void) state;
	expect_reject("0000000000000000000000000", 25, ULID_PARSE_LENGTH, 25);
	expect_reject("000000000000000000000000000", 27, ULID_PARSE_LENGTH, 27);
	expect_reject("", 0, ULID_PARSE_LENGTH, 0);
	/* The length is checked before the first character's range. */
	expect_reject("8000000000000000000000000", 25, ULID_PARSE_LENGTH, 25);
	expect_reject("800000000000000000000000000", 27, ULID_PARSE_LENGTH, 27);

	/* Characters are checked before the length. */
	expect_reject("UUUUUUUUUUUUUUUUUUUUUUUUU", 25, ULID_PARSE_CHARACTER, 0);
	expect_reject("00000000000000000000000000U", 27, ULID_PARSE_CHARACTER, 26);
	/* A UTF-8 e-acute as 26th character makes 27 bytes. */
	expect_reject("01HTQW311N1KR5G0Y75M3EF00\xC3\xA9", 27,
				  ULID_PARSE_CHARACTER, 25);
	expect_reject("0\n", 2, ULID_PARSE_CHARACTER, 1);
}

static void
test_reject_excluded_letters(void **state)
{
	static const char bad[] = "ILOUilou";

	(void) state;
	for (size_t k = 0; k < sizeof(bad) - 1; k++)
	{
		char		text[ULID_TEXT_LEN + 1];
		size_t		at = 1 + 3 * k;	/* 1, 4, ..., 22 */

		memcpy(text, vec1_text, sizeof(text));
		text[at] = bad[k];
		expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, at);

		/* Also in first and last position. */
		memcpy(text, vec1_text, sizeof(text));
		text[0] = bad[k];
		expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 0);
		memcpy(text, vec1_text, sizeof(text));
		text[ULID_TEXT_LEN - 1] = bad[k];
		expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 25);
	}
}

static void
test_reject_other_bytes(void **state)
{
	char		text[ULID_TEXT_LEN + 1];

	(void) state;
	memcpy(text, vec1_text, sizeof(text));
	text[7] = (char) 0xC3;
	expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 7);

	memcpy(text, vec1_text, sizeof(text));
	text[10] = '-';
	expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 10);

	memcpy(text, vec1_text, sizeof(text));
	text[13] = ' ';
	expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 13);

	/* An embedded NUL with an explicit length of 26. */
	memcpy(text, vec1_text, sizeof(text));
	text[19] = '\0';
	expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 19);

	/* The first bad character is the one reported. */
	memcpy(text, vec1_text, sizeof(text));
	text[5] = '!';
	text[3] = (char) 0xFF;
	expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 3);

	/* A bad first character is a character error, not an overflow. */
	memcpy(text, vec1_text, sizeof(text));
	text[0] = '@';
	expect_reject(text, ULID_TEXT_LEN, ULID_PARSE_CHARACTER, 0);
}

/* ---------- case ---------- */

static void
test_case_insensitive(void **state)
{
	char		lower[ULID_TEXT_LEN + 1];
	char		mixed[ULID_TEXT_LEN + 1];
	char		buf[ULID_TEXT_LEN + 1];
	uint8_t		ones[ULID_BYTES];

	(void) state;
	for (int i = 0; i <= ULID_TEXT_LEN; i++)
	{
		lower[i] = ascii_lower(vec1_text[i]);
		mixed[i] = (i % 2) ? lower[i] : vec1_text[i];
	}
	assert_string_equal(lower, "01htqw311n1kr5g0y75m3ef00h");
	expect_parse(lower, vec1_bytes);
	expect_parse(mixed, vec1_bytes);

	/* Formatting is upper case, whatever case was parsed. */
	assert_string_equal(format_str(vec1_bytes, buf), vec1_text);
	memset(ones, 0xFF, sizeof(ones));
	expect_parse("7zzzzzzzzzzzzzzzzzzzzzzzzz", ones);
	assert_string_equal(format_str(ones, buf), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
}

/* ---------- the alphabet ---------- */

static void
test_crockford_digits(void **state)
{
	(void) state;
	for (unsigned int v = 0; v < 32; v++)
	{
		char		d = crockford_digit(v);

		assert_int_equal(d, alphabet[v]);
		assert_int_equal(crockford_value((unsigned char) d), (int) v);
		assert_int_equal(crockford_value((unsigned char) ascii_lower(d)),
						 (int) v);
	}
}

static void
test_crockford_all_bytes(void **state)
{
	int			valid = 0;

	(void) state;
	for (int c = 0; c < 256; c++)
	{
		int			v = crockford_value((unsigned char) c);
		unsigned char up = ascii_upper((unsigned char) c);
		const char *hit = (c != 0) ? strchr(alphabet, up) : NULL;

		if (hit == NULL)
			assert_int_equal(v, -1);
		else
		{
			assert_int_equal(v, (int) (hit - alphabet));
			assert_int_equal((unsigned char) crockford_digit((unsigned int) v),
							 up);
			valid++;
		}
	}
	/* 32 digits, 22 of them letters with a lower-case form. */
	assert_int_equal(valid, 54);
}

/* ---------- round trips and ordering ---------- */

static void
check_round_trip(const uint8_t u[ULID_BYTES], char buf[ULID_TEXT_LEN + 1])
{
	uint8_t		back[ULID_BYTES];
	size_t		pos = SENTINEL_POS;

	format_str(u, buf);
	assert_true(buf[0] >= '0' && buf[0] <= '7');
	for (int k = 0; k < ULID_TEXT_LEN; k++)
		assert_non_null(strchr(alphabet, buf[k]));
	assert_int_equal(ulid_parse(buf, ULID_TEXT_LEN, back, &pos),
					 ULID_PARSE_OK);
	assert_int_equal(pos, SENTINEL_POS);
	assert_memory_equal(back, u, ULID_BYTES);
}

static void
test_round_trip_random(void **state)
{
	Xorshift	x = {UINT64_C(0x9E3779B97F4A7C15)};
	uint8_t		prev[ULID_BYTES];
	uint8_t		cur[ULID_BYTES];
	char		prev_text[ULID_TEXT_LEN + 1];
	char		cur_text[ULID_TEXT_LEN + 1];
	int			less = 0;
	int			greater = 0;

	(void) state;
	xs_bytes(&x, prev, ULID_BYTES);
	check_round_trip(prev, prev_text);
	for (int n = 0; n < 5000; n++)
	{
		int			byte_order;
		int			text_order;

		xs_bytes(&x, cur, ULID_BYTES);
		/* Sometimes share a prefix, so later bytes decide the order. */
		if (n % 4 == 0)
			memcpy(cur, prev, (size_t) (xs_next(&x) % ULID_BYTES));
		check_round_trip(cur, cur_text);

		byte_order = sign_of(memcmp(prev, cur, ULID_BYTES));
		text_order = sign_of(strcmp(prev_text, cur_text));
		assert_int_equal(text_order, byte_order);
		less += (byte_order < 0);
		greater += (byte_order > 0);

		memcpy(prev, cur, ULID_BYTES);
		memcpy(prev_text, cur_text, sizeof(cur_text));
	}
	/* The generator must have produced both orders. */
	assert_true(less > 1000 && greater > 1000);
}

static void
test_round_trip_single_bits(void **state)
{
	uint8_t		u[ULID_BYTES];
	uint8_t		v[ULID_BYTES];
	char		text[ULID_TEXT_LEN + 1];
	char		vtext[ULID_TEXT_LEN + 1];

	(void) state;
	for (int bit = 0; bit < 128; bit++)
	{
		int			k = 25 - bit / 5;	/* character holding this bit */

		memset(u, 0, sizeof(u));
		u[15 - bit / 8] = (uint8_t) (1u << (bit % 8));
		check_round_trip(u, text);
		/* Exactly one character is non-zero: the right one. */
		for (int j = 0; j < ULID_TEXT_LEN; j++)
			assert_int_equal(text[j],
							 j == k ? alphabet[1 << (bit % 5)] : '0');

		/* All bits except this one. */
		memset(v, 0xFF, sizeof(v));
		v[15 - bit / 8] ^= (uint8_t) (1u << (bit % 8));
		check_round_trip(v, vtext);
		assert_true(strcmp(vtext, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ") < 0);
	}
}

/* ---------- uuid text (ulid_parse_uuid, ulid_parse_input) ---------- */

/* vec1 as PostgreSQL's uuid_out writes it. */
static const char vec1_uuid[] = "018eafc1-8435-0cf0-5803-c72d06e78011";

/* The canonical uuid text of u, lower case, NUL-terminated. */
static char *
uuid_str(const uint8_t u[ULID_BYTES], char buf[ULID_UUID_TEXT_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	size_t		o = 0;

	for (int i = 0; i < ULID_BYTES; i++)
	{
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[o++] = '-';
		buf[o++] = hex[u[i] >> 4];
		buf[o++] = hex[u[i] & 15];
	}
	buf[o] = '\0';
	return buf;
}

/*
 * parse is ulid_parse_uuid or ulid_parse_input: reject text with want and
 * errpos, leaving out untouched, with and without errpos.
 */
typedef UlidParseResult (*ParseFn) (const char *, size_t, uint8_t *, size_t *);

static void
expect_reject_with(ParseFn parse, const char *text, size_t len,
				   UlidParseResult want, size_t want_pos)
{
	uint8_t		out[ULID_BYTES];
	uint8_t		untouched[ULID_BYTES];
	size_t		pos = SENTINEL_POS;

	memset(out, SENTINEL_BYTE, sizeof(out));
	memset(untouched, SENTINEL_BYTE, sizeof(untouched));
	assert_int_equal(parse(text, len, out, &pos), want);
	assert_int_equal(pos, want_pos);
	assert_memory_equal(out, untouched, ULID_BYTES);
	assert_int_equal(parse(text, len, out, NULL), want);
	assert_memory_equal(out, untouched, ULID_BYTES);
}

static void
expect_parse_with(ParseFn parse, const char *text, const uint8_t want[ULID_BYTES])
{
	uint8_t		out[ULID_BYTES];
	size_t		pos = SENTINEL_POS;

	memset(out, SENTINEL_BYTE, sizeof(out));
	assert_int_equal(parse(text, strlen(text), out, &pos), ULID_PARSE_OK);
	assert_int_equal(pos, SENTINEL_POS);
	assert_memory_equal(out, want, ULID_BYTES);
}

static void
test_uuid_vectors(void **state)
{
	uint8_t		zero[ULID_BYTES];
	uint8_t		ones[ULID_BYTES];
	char		buf[ULID_UUID_TEXT_LEN + 1];

	(void) state;
	memset(zero, 0, sizeof(zero));
	memset(ones, 0xFF, sizeof(ones));
	assert_string_equal(uuid_str(vec1_bytes, buf), vec1_uuid);

	expect_parse_with(ulid_parse_uuid, vec1_uuid, vec1_bytes);
	expect_parse_with(ulid_parse_input, vec1_uuid, vec1_bytes);
	/* either case, mixed */
	expect_parse_with(ulid_parse_input, "018EAFC1-8435-0CF0-5803-C72D06E78011", vec1_bytes);
	expect_parse_with(ulid_parse_input, "018eAfC1-8435-0Cf0-5803-c72D06e78011", vec1_bytes);
	expect_parse_with(ulid_parse_input, "00000000-0000-0000-0000-000000000000", zero);
	/* all 128 bits: the ULID 7ZZZZZZZZZZZZZZZZZZZZZZZZZ */
	expect_parse_with(ulid_parse_input, "ffffffff-ffff-ffff-ffff-ffffffffffff", ones);
	expect_parse_with(ulid_parse_input, "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", ones);

	/* ULID text reads as before */
	expect_parse_with(ulid_parse_input, vec1_text, vec1_bytes);
	expect_parse_with(ulid_parse_input, "01htqw311n1kr5g0y75m3ef00h", vec1_bytes);
	expect_parse_with(ulid_parse_input, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", ones);
}

static void
test_uuid_reject(void **state)
{
	char		text[ULID_UUID_TEXT_LEN + 1];

	(void) state;
	/* a hyphen moved: the first wrong byte is where the hyphen belongs */
	expect_reject_with(ulid_parse_input, "018eafc18-435-0cf0-5803-c72d06e78011", 36,
					   ULID_PARSE_UUID_HYPHEN, 8);
	expect_reject_with(ulid_parse_input, "018eafc1-84350-cf0-5803-c72d06e78011", 36,
					   ULID_PARSE_UUID_HYPHEN, 13);
	expect_reject_with(ulid_parse_input, "018eafc1-8435-0cf0-58035-c72d06e7801", 36,
					   ULID_PARSE_UUID_HYPHEN, 23);
	/* ... or the hyphen arrives early: a hyphen is not a hex digit */
	expect_reject_with(ulid_parse_input, "018eafc-18435-0cf0-5803-c72d06e78011", 36,
					   ULID_PARSE_UUID_HEX, 7);
	/* not hexadecimal: g, G, a Crockford letter, a space, a non-ASCII byte, NUL */
	expect_reject_with(ulid_parse_input, "018eafc1-8435-0cf0-5803-c72d06e7801g", 36,
					   ULID_PARSE_UUID_HEX, 35);
	expect_reject_with(ulid_parse_input, "G18eafc1-8435-0cf0-5803-c72d06e78011", 36,
					   ULID_PARSE_UUID_HEX, 0);
	expect_reject_with(ulid_parse_input, "018eafc1-8435-0cf0-58Z3-c72d06e78011", 36,
					   ULID_PARSE_UUID_HEX, 21);
	expect_reject_with(ulid_parse_input, " 18eafc1-8435-0cf0-5803-c72d06e78011", 36,
					   ULID_PARSE_UUID_HEX, 0);
	expect_reject_with(ulid_parse_input, "018eafc1-8435-0cf0-5803-c72d06e780\xC3\xA9", 36,
					   ULID_PARSE_UUID_HEX, 34);
	memcpy(text, vec1_uuid, sizeof(text));
	text[20] = '\0';
	expect_reject_with(ulid_parse_input, text, 36, ULID_PARSE_UUID_HEX, 20);
	/* 36 Crockford digits are not a uuid: the ninth is no hyphen */
	expect_reject_with(ulid_parse_input, "0123456789ABCDEFGHJKMNPQRSTVWXYZ0123", 36,
					   ULID_PARSE_UUID_HYPHEN, 8);
	expect_reject_with(ulid_parse_input, "01HTQW311N1KR5G0Y75M3EF00H0000000000", 36,
					   ULID_PARSE_UUID_HEX, 2);

	/* other lengths with a hyphen: a uuid written otherwise, a length error */
	expect_reject_with(ulid_parse_input, "018eafc1-8435-0cf0-5803-c72d06e7801", 35,
					   ULID_PARSE_LENGTH, 35);
	expect_reject_with(ulid_parse_input, "018eafc1-8435-0cf0-5803-c72d06e780111", 37,
					   ULID_PARSE_LENGTH, 37);
	expect_reject_with(ulid_parse_input, "{018eafc1-8435-0cf0-5803-c72d06e78011}", 38,
					   ULID_PARSE_LENGTH, 38);
	expect_reject_with(ulid_parse_input, " 018eafc1-8435-0cf0-5803-c72d06e78011", 37,
					   ULID_PARSE_LENGTH, 37);
	expect_reject_with(ulid_parse_input, "-", 1, ULID_PARSE_LENGTH, 1);
	/* 32 hex digits without hyphens: Crockford digits of the wrong length */
	expect_reject_with(ulid_parse_input, "018eafc184350cf05803c72d06e78011", 32,
					   ULID_PARSE_LENGTH, 32);
	/* 26 characters stay ULID text: a hyphen there is a bad character */
	expect_reject_with(ulid_parse_input, "01HTQW311N-KR5G0Y75M3EF00H", 26,
					   ULID_PARSE_CHARACTER, 10);
	/* and ULID errors of other lengths are as ulid_parse's */
	expect_reject_with(ulid_parse_input, "", 0, ULID_PARSE_LENGTH, 0);
	expect_reject_with(ulid_parse_input, "0000000000000000000000000", 25,
					   ULID_PARSE_LENGTH, 25);
	expect_reject_with(ulid_parse_input, "00000000000000000000000000U", 27,
					   ULID_PARSE_CHARACTER, 26);
	expect_reject_with(ulid_parse_input, "80000000000000000000000000", 26,
					   ULID_PARSE_OVERFLOW, 0);

	/* ulid_parse_uuid itself: characters before the length */
	expect_reject_with(ulid_parse_uuid, "018eafc1-8435-0cf0-5803-c72d06e7801", 35,
					   ULID_PARSE_LENGTH, 35);
	expect_reject_with(ulid_parse_uuid, "018eafc1-8435-0cf0-5803-c72d06e780111", 37,
					   ULID_PARSE_LENGTH, 37);
	expect_reject_with(ulid_parse_uuid, "018eafc1-8435-0cf0-5803-c72d06e780x", 35,
					   ULID_PARSE_UUID_HEX, 34);
	expect_reject_with(ulid_parse_uuid, "", 0, ULID_PARSE_LENGTH, 0);
	expect_reject_with(ulid_parse_uuid, vec1_text, 26, ULID_PARSE_UUID_HEX, 2);
}

/* Every byte value at every position of a uuid: accepted exactly where it belongs. */
static void
test_uuid_all_bytes(void **state)
{
	static const char hex[] = "0123456789abcdefABCDEF";
	int			accepted = 0;

	(void) state;
	for (size_t at = 0; at < ULID_UUID_TEXT_LEN; at++)
	{
		int			hyphen = (at == 8 || at == 13 || at == 18 || at == 23);

		for (int c = 0; c < 256; c++)
		{
			char		text[ULID_UUID_TEXT_LEN + 1];
			uint8_t		out[ULID_BYTES];
			size_t		pos = SENTINEL_POS;
			int			ok;
			UlidParseResult r;

			memcpy(text, vec1_uuid, sizeof(text));
			text[at] = (char) c;
			ok = hyphen ? (c == '-') : (c != 0 && strchr(hex, c) != NULL);
			r = ulid_parse_input(text, ULID_UUID_TEXT_LEN, out, &pos);
			if (ok)
			{
				assert_int_equal(r, ULID_PARSE_OK);
				accepted++;
			}
			else
			{
				assert_int_equal(r, hyphen ? ULID_PARSE_UUID_HYPHEN : ULID_PARSE_UUID_HEX);
				assert_int_equal(pos, at);
			}
		}
	}
	/* 32 hex places of 22 digits each, 4 hyphens */
	assert_int_equal(accepted, 32 * 22 + 4);
}

/* Random bytes: uuid text and ULID text of the same bytes read the same. */
static void
test_uuid_round_trip(void **state)
{
	Xorshift	x = {UINT64_C(0xD1B54A32D192ED03)};

	(void) state;
	for (int n = 0; n < 5000; n++)
	{
		uint8_t		u[ULID_BYTES];
		uint8_t		from_uuid[ULID_BYTES];
		uint8_t		from_ulid[ULID_BYTES];
		char		utext[ULID_UUID_TEXT_LEN + 1];
		char		ltext[ULID_TEXT_LEN + 1];

		xs_bytes(&x, u, ULID_BYTES);
		uuid_str(u, utext);
		if (n % 2)
		{
			for (int i = 0; utext[i]; i++)
				utext[i] = (char) ascii_upper((unsigned char) utext[i]);
		}
		format_str(u, ltext);
		assert_int_equal(ulid_parse_input(utext, ULID_UUID_TEXT_LEN, from_uuid, NULL),
						 ULID_PARSE_OK);
		assert_int_equal(ulid_parse_input(ltext, ULID_TEXT_LEN, from_ulid, NULL),
						 ULID_PARSE_OK);
		assert_memory_equal(from_uuid, u, ULID_BYTES);
		assert_memory_equal(from_ulid, u, ULID_BYTES);
	}
}

/* ---------- layout ---------- */

static void
test_time_ms(void **state)
{
	static const uint64_t times[] = {
		0, 1, UINT64_C(1712345678901), ULID_MAX_TIME
	};
	uint8_t		u[ULID_BYTES];

	(void) state;
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
	{
		ulid_build(times[i], vec1_rand, u);
		assert_int_equal(ulid_time_ms(u), times[i]);
		assert_memory_equal(u + 6, vec1_rand, ULID_RAND_BYTES);
	}

	/* Byte layout of the two ends. */
	ulid_build(1, vec1_rand, u);
	assert_int_equal(u[0] | u[1] | u[2] | u[3] | u[4], 0);
	assert_int_equal(u[5], 1);
	ulid_build(ULID_MAX_TIME, vec1_rand, u);
	for (int i = 0; i < 6; i++)
		assert_int_equal(u[i], 0xFF);
}

/* ---------- monotonic state machine ---------- */

static const uint8_t mono_r1[ULID_RAND_BYTES] = {
	0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0
};
static const uint8_t mono_r2[ULID_RAND_BYTES] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A
};

/* Call ulid_monotonic_next expecting OK, and check state == out. */
static void
mono_ok(uint8_t st[ULID_BYTES], uint64_t now,
		const uint8_t rnd[ULID_RAND_BYTES], const uint8_t want[ULID_BYTES])
{
	uint8_t		out[ULID_BYTES];

	memset(out, SENTINEL_BYTE, sizeof(out));
	assert_int_equal(ulid_monotonic_next(st, now, rnd, out), ULID_MONO_OK);
	assert_memory_equal(out, want, ULID_BYTES);
	assert_memory_equal(st, want, ULID_BYTES);
}

/* Expect a failure that changes neither the state nor out. */
static void
mono_fail(uint8_t st[ULID_BYTES], uint64_t now,
		  const uint8_t rnd[ULID_RAND_BYTES], UlidMonoResult want)
{
	uint8_t		out[ULID_BYTES];
	uint8_t		sentinel[ULID_BYTES];
	uint8_t		before[ULID_BYTES];

	memset(out, SENTINEL_BYTE, sizeof(out));
	memset(sentinel, SENTINEL_BYTE, sizeof(sentinel));
	memcpy(before, st, ULID_BYTES);
	assert_int_equal(ulid_monotonic_next(st, now, rnd, out), want);
	assert_memory_equal(st, before, ULID_BYTES);
	assert_memory_equal(out, sentinel, ULID_BYTES);
}

static void
test_mono_sequence_steps(void **state)
{
	uint8_t		st[ULID_BYTES] = {0};
	/* 1000 ms = 0x0003E8; 1001 = 0x0003E9 */
	static const uint8_t w1[ULID_BYTES] = {
		0, 0, 0, 0, 0x03, 0xE8,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0
	};
	static const uint8_t w2[ULID_BYTES] = {
		0, 0, 0, 0, 0x03, 0xE8,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA1
	};
	static const uint8_t w3[ULID_BYTES] = {
		0, 0, 0, 0, 0x03, 0xE8,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA2
	};
	static const uint8_t w4[ULID_BYTES] = {
		0, 0, 0, 0, 0x03, 0xE9,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A
	};

	(void) state;
	/* First call from the all-zero state: time and random as given. */
	mono_ok(st, 1000, mono_r1, w1);
	/* Same millisecond: plus one; the fresh random bytes are ignored. */
	mono_ok(st, 1000, mono_r2, w2);
	/* Clock went back: plus one, time stays 1000. */
	mono_ok(st, 999, mono_r2, w3);
	assert_int_equal(ulid_time_ms(st), 1000);
	/* Clock moved on: fresh random, new time. */
	mono_ok(st, 1001, mono_r2, w4);
}

static void
test_mono_carry(void **state)
{
	static const uint8_t r[ULID_RAND_BYTES] = {
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0xFF, 0xFF
	};
	static const uint8_t w1[ULID_BYTES] = {
		0, 0, 0, 0, 0x03, 0xE8,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x81, 0x00, 0x00
	};
	static const uint8_t w2[ULID_BYTES] = {
		0, 0, 0, 0, 0x03, 0xE8,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x81, 0x00, 0x01
	};
	/* Carry through nine bytes of the random part, up to its top byte. */
	static const uint8_t r_long[ULID_RAND_BYTES] = {
		0x7E, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
	};
	static const uint8_t w3[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
	};
	uint8_t		st[ULID_BYTES];

	(void) state;
	ulid_build(1000, r, st);
	mono_ok(st, 1000, mono_r1, w1);
	mono_ok(st, 1000, mono_r1, w2);

	ulid_build(vec1_time, r_long, st);
	mono_ok(st, vec1_time - 5, mono_r1, w3);
}

static void
test_mono_wait(void **state)
{
	static const uint8_t ones[ULID_RAND_BYTES] = {
		0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
	};
	/* 5001 ms = 0x001389 */
	static const uint8_t w[ULID_BYTES] = {
		0, 0, 0, 0, 0x13, 0x89,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0
	};
	uint8_t		st[ULID_BYTES];
	uint8_t		out[ULID_BYTES];

	(void) state;
	ulid_build(5000, ones, st);
	mono_fail(st, 5000, mono_r1, ULID_MONO_WAIT);
	mono_fail(st, 4000, mono_r1, ULID_MONO_WAIT);
	mono_ok(st, 5001, mono_r1, w);

	/* Reaching all ones by incrementing, then waiting. */
	ulid_build(7, ones, st);
	st[15] = 0xFE;
	assert_int_equal(ulid_monotonic_next(st, 7, mono_r1, out), ULID_MONO_OK);
	assert_int_equal(out[15], 0xFF);
	mono_fail(st, 7, mono_r1, ULID_MONO_WAIT);
}

static void
test_mono_time_range(void **state)
{
	static const uint8_t wmax[ULID_BYTES] = {
		0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0
	};
	uint8_t		st[ULID_BYTES] = {0};

	(void) state;
	mono_fail(st, ULID_MAX_TIME + 1, mono_r1, ULID_MONO_TIME_RANGE);
	mono_fail(st, UINT64_MAX, mono_r1, ULID_MONO_TIME_RANGE);
	/* The last millisecond is still valid. */
	mono_ok(st, ULID_MAX_TIME, mono_r1, wmax);
	mono_fail(st, ULID_MAX_TIME + 1, mono_r1, ULID_MONO_TIME_RANGE);
}

static void
test_mono_long_sequence(void **state)
{
	Xorshift	x = {UINT64_C(0x2545F4914F6CDD1D)};
	uint8_t		st[ULID_BYTES] = {0};
	uint8_t		prev[ULID_BYTES] = {0};
	uint8_t		out[ULID_BYTES];
	uint8_t		rnd[ULID_RAND_BYTES];
	uint64_t	now = UINT64_C(1712345678901);
	int			backs = 0;
	int			same = 0;
	int			waits = 0;

	(void) state;
	for (int n = 0; n < 100000; n++)
	{
		uint64_t	r = xs_next(&x);
		uint64_t	last_ms = ulid_time_ms(st);

		/* Mostly the same or next millisecond; sometimes jumps or goes back. */
		switch (r % 16)
		{
			case 0:
				now -= (r >> 8) % 50;
				backs++;
				break;
			case 1:
				now += (r >> 8) % 1000;
				break;
			case 2:
			case 3:
			case 4:
				now++;
				break;
			default:
				same++;
				break;
		}
		xs_bytes(&x, rnd, ULID_RAND_BYTES);
		/* Occasionally an all-ones random part, to reach WAIT. */
		if ((r >> 40) % 64 == 0)
			memset(rnd, 0xFF, ULID_RAND_BYTES);

		memset(out, SENTINEL_BYTE, sizeof(out));
		if (ulid_monotonic_next(st, now, rnd, out) == ULID_MONO_WAIT)
		{
			assert_true(now <= last_ms);
			assert_memory_equal(st, prev, ULID_BYTES);
			waits++;
			now = last_ms + 1;
			assert_int_equal(ulid_monotonic_next(st, now, rnd, out),
							 ULID_MONO_OK);
		}
		assert_true(memcmp(prev, out, ULID_BYTES) < 0);
		assert_memory_equal(st, out, ULID_BYTES);
		assert_int_equal(ulid_time_ms(out), now > last_ms ? now : last_ms);
		memcpy(prev, out, ULID_BYTES);
	}
	assert_true(backs > 1000 && same > 1000 && waits > 10);
}


/* ---------- UUID version 7 ---------- */

/* vec1's time and random bytes as a UUIDv7: version and variant bits set */
static const uint8_t vec1_uuid7[ULID_BYTES] = {
	0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
	0x7C, 0xF0, 0x98, 0x03, 0xC7, 0x2D, 0x06, 0xE7, 0x80, 0x11
};

static void
test_uuid7_build(void **state)
{
	uint8_t		out[ULID_BYTES];
	uint8_t		ones[UUID7_RAND_BYTES];
	uint8_t		zeros[UUID7_RAND_BYTES] = {0};

	(void) state;
	uuid7_build(vec1_time, vec1_rand, out);
	assert_memory_equal(out, vec1_uuid7, ULID_BYTES);
	assert_int_equal(ulid_time_ms(out), vec1_time);
	/* version 7 and variant 10 whatever the random bytes */
	memset(ones, 0xFF, sizeof(ones));
	uuid7_build(ULID_MAX_TIME, ones, out);
	assert_int_equal(out[6], 0x7F);
	assert_int_equal(out[8], 0xBF);
	assert_int_equal(out[0], 0xFF);
	assert_int_equal(out[5], 0xFF);
	uuid7_build(0, zeros, out);
	assert_int_equal(out[6], 0x70);
	assert_int_equal(out[8], 0x80);
	assert_int_equal(out[15], 0x00);
}

static void
test_uuid7_mono_steps(void **state)
{
	uint8_t		st[ULID_BYTES] = {0};
	uint8_t		out[ULID_BYTES];
	uint8_t		want[ULID_BYTES];

	(void) state;
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, vec1_uuid7, ULID_BYTES);
	assert_memory_equal(st, out, ULID_BYTES);
	/* same millisecond: plus one in the last byte */
	memcpy(want, vec1_uuid7, ULID_BYTES);
	want[15] = 0x12;
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, want, ULID_BYTES);
	/* the clock went back: still plus one, the time stays */
	want[15] = 0x13;
	assert_int_equal(uuid7_monotonic_next(st, vec1_time - 5000, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, want, ULID_BYTES);
	/* a later millisecond: fresh random part */
	assert_int_equal(uuid7_monotonic_next(st, vec1_time + 1, vec1_rand, out), ULID_MONO_OK);
	assert_int_equal(ulid_time_ms(out), vec1_time + 1);
	assert_memory_equal(out + 6, vec1_uuid7 + 6, ULID_BYTES - 6);
}

static void
test_uuid7_mono_carry(void **state)
{
	uint8_t		st[ULID_BYTES];
	uint8_t		out[ULID_BYTES];
	/* rand_b's low 56 bits all ones, its top 6 bits 0x2A */
	static const uint8_t before[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7C, 0xF0, 0xAA, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
	};
	static const uint8_t after[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7C, 0xF0, 0xAB, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
	};
	/* rand_b all ones: the carry goes into rand_a, over the variant bits */
	static const uint8_t before2[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7C, 0xF0, 0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
	};
	static const uint8_t after2[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7C, 0xF1, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
	};
	/* rand_a's low byte all ones too: into its top nibble, over the version */
	static const uint8_t before3[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7C, 0xFF, 0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
	};
	static const uint8_t after3[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7D, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
	};

	(void) state;
	memcpy(st, before, ULID_BYTES);
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, after, ULID_BYTES);
	memcpy(st, before2, ULID_BYTES);
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, after2, ULID_BYTES);
	memcpy(st, before3, ULID_BYTES);
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, after3, ULID_BYTES);
}

static void
test_uuid7_mono_wait_and_range(void **state)
{
	uint8_t		st[ULID_BYTES];
	uint8_t		out[ULID_BYTES];
	uint8_t		copy[ULID_BYTES];
	static const uint8_t full[ULID_BYTES] = {
		0x01, 0x8E, 0xAF, 0xC1, 0x84, 0x35,
		0x7F, 0xFF, 0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
	};

	(void) state;
	memcpy(st, full, ULID_BYTES);
	memset(out, SENTINEL_BYTE, sizeof(out));
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_WAIT);
	assert_memory_equal(st, full, ULID_BYTES);
	memcpy(copy, out, ULID_BYTES);
	for (int i = 0; i < ULID_BYTES; i++)
		assert_int_equal(copy[i], SENTINEL_BYTE);
	/* the next millisecond issues again */
	assert_int_equal(uuid7_monotonic_next(st, vec1_time + 1, vec1_rand, out), ULID_MONO_OK);
	assert_int_equal(ulid_time_ms(out), vec1_time + 1);
	assert_int_equal(uuid7_monotonic_next(st, ULID_MAX_TIME + 1, vec1_rand, out), ULID_MONO_TIME_RANGE);
}

/* 100,000 in one millisecond: strictly increasing, version and variant kept */
static void
test_uuid7_mono_long(void **state)
{
	uint8_t		st[ULID_BYTES] = {0};
	uint8_t		prev[ULID_BYTES];
	uint8_t		out[ULID_BYTES];

	(void) state;
	assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, prev), ULID_MONO_OK);
	for (int i = 0; i < 100000; i++)
	{
		assert_int_equal(uuid7_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
		assert_true(memcmp(out, prev, ULID_BYTES) > 0);
		assert_int_equal(out[6] >> 4, 7);
		assert_int_equal(out[8] >> 6, 2);
		memcpy(prev, out, ULID_BYTES);
	}
}


/* rnd NULL: only a new millisecond needs it, and says so */
static void
test_mono_need_random(void **state)
{
	uint8_t		st[ULID_BYTES] = {0};
	uint8_t		st7[ULID_BYTES] = {0};
	uint8_t		out[ULID_BYTES];
	uint8_t		before[ULID_BYTES];

	(void) state;
	assert_int_equal(ulid_monotonic_next(st, vec1_time, NULL, out), ULID_MONO_NEED_RANDOM);
	assert_int_equal(uuid7_monotonic_next(st7, vec1_time, NULL, out), ULID_MONO_NEED_RANDOM);
	assert_int_equal(ulid_monotonic_next(st, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_int_equal(uuid7_monotonic_next(st7, vec1_time, vec1_rand, out), ULID_MONO_OK);
	assert_memory_equal(out, vec1_uuid7, ULID_BYTES);
	/* the same millisecond needs none */
	assert_int_equal(ulid_monotonic_next(st, vec1_time, NULL, out), ULID_MONO_OK);
	assert_memory_equal(out, st, ULID_BYTES);
	assert_int_equal(uuid7_monotonic_next(st7, vec1_time, NULL, out), ULID_MONO_OK);
	assert_int_equal(out[15], 0x12);
	/* a later one does, and nothing changes */
	memcpy(before, st7, ULID_BYTES);
	assert_int_equal(uuid7_monotonic_next(st7, vec1_time + 1, NULL, out), ULID_MONO_NEED_RANDOM);
	assert_memory_equal(st7, before, ULID_BYTES);
}

/* ---------- after a restart with the clock behind ---------- */

/* A small PRNG (xorshift64*) for the random bytes a caller would draw. */
static void
draw_random(uint64_t *seed, uint8_t out[ULID_RAND_BYTES])
{
	for (int i = 0; i < ULID_RAND_BYTES; i++)
	{
		*seed ^= *seed >> 12;
		*seed ^= *seed << 25;
		*seed ^= *seed >> 27;
		out[i] = (uint8_t) ((*seed * UINT64_C(2685821657736338717)) >> 56);
	}
}

/*
 * One id as ulid_type.c makes it: without random bytes first, with freshly
 * drawn ones when the step asks for them.  Returns whether it drew.
 */
static int
mono_draw(int uuid7, uint8_t st[ULID_BYTES], uint64_t now, uint64_t *seed,
		  uint8_t drawn[ULID_RAND_BYTES], uint8_t out[ULID_BYTES])
{
	UlidMonoResult r = uuid7 ? uuid7_monotonic_next(st, now, NULL, out) :
		ulid_monotonic_next(st, now, NULL, out);

	if (r == ULID_MONO_OK)
		return 0;
	assert_int_equal(r, ULID_MONO_NEED_RANDOM);
	draw_random(seed, drawn);
	r = uuid7 ? uuid7_monotonic_next(st, now, drawn, out) :
		ulid_monotonic_next(st, now, drawn, out);
	assert_int_equal(r, ULID_MONO_OK);
	return 1;
}

/* Whether an id has a random bit set above its 16 lowest. */
static int
random_above_16(int uuid7, const uint8_t u[ULID_BYTES])
{
	int			bits = 0;

	if (uuid7)					/* not the version and variant bits */
		return ((u[6] & 0x0F) | u[7] | (u[8] & 0x3F) | u[9] | u[10] | u[11] | u[12] | u[13]) != 0;
	for (int b = 6; b < ULID_BYTES - 2; b++)
		bits |= u[b];
	return bits != 0;
}

/*
 * A restart with the clock 4 s behind: the state is the point to go on from
 * (the mark on disk, random part zero).  100 ids after it carry the mark's
 * time, increase strictly, start from freshly drawn random bits and count
 * up from them: not 1, 2, 3...  Two servers in that state (other draws)
 * issue no id alike.  Both formats.
 */
static void
check_restart_behind(int uuid7)
{
	const uint64_t mark = UINT64_C(1767225600000);
	const uint8_t zeros[ULID_RAND_BYTES] = {0};
	uint8_t		point[ULID_BYTES];
	uint8_t		st[ULID_BYTES];
	uint8_t		ids[2][100][ULID_BYTES];
	uint8_t		drawn[ULID_RAND_BYTES];
	uint64_t	seed[2] = {UINT64_C(0x9E3779B97F4A7C15), UINT64_C(0xD1B54A32D192ED03)};

	if (uuid7)
		uuid7_build(mark, zeros, point);
	else
		ulid_build(mark, zeros, point);
	for (int server = 0; server < 2; server++)
	{
		const uint8_t *prev = point;

		memcpy(st, point, ULID_BYTES);
		for (int k = 0; k < 100; k++)
		{
			uint8_t    *out = ids[server][k];
			int			drew = mono_draw(uuid7, st, mark - 4000, &seed[server], drawn, out);

			/* one draw, for the first id only */
			assert_int_equal(drew, k == 0);
			if (k == 0)
			{
				uint8_t		want[ULID_BYTES];

				if (uuid7)
					uuid7_build(mark, drawn, want);
				else
					ulid_build(mark, drawn, want);
				assert_memory_equal(out, want, ULID_BYTES);
			}
			assert_int_equal(ulid_time_ms(out), mark);
			assert_true(memcmp(out, prev, ULID_BYTES) > 0);
			if (uuid7)
			{
				assert_int_equal(out[6] >> 4, 7);
				assert_int_equal(out[8] >> 6, 2);
			}
			/* not a small integer: random bits above the low 16 */
			assert_true(random_above_16(uuid7, out));
			prev = out;
		}
	}
	/* the two servers' ids differ (their random starts do) */
	for (int k = 0; k < 100; k++)
		for (int j = 0; j < 100; j++)
			assert_true(memcmp(ids[0][k], ids[1][j], ULID_BYTES) != 0);
}

static void
test_mono_restart_behind(void **state)
{
	(void) state;
	check_restart_behind(0);
}

static void
test_uuid7_mono_restart_behind(void **state)
{
	(void) state;
	check_restart_behind(1);
}

/*
 * Random bytes that are all zero still give an id above the point (random
 * part 1); the clock past the point is a new millisecond as before.
 */
static void
test_mono_restart_edges(void **state)
{
	const uint64_t mark = 5000;
	const uint8_t zeros[ULID_RAND_BYTES] = {0};
	uint8_t		st[ULID_BYTES];
	uint8_t		out[ULID_BYTES];
	uint8_t		want[ULID_BYTES];

	(void) state;
	ulid_build(mark, zeros, st);
	assert_int_equal(ulid_monotonic_next(st, mark, zeros, out), ULID_MONO_OK);
	ulid_build(mark, zeros, want);
	want[15] = 1;
	assert_memory_equal(out, want, ULID_BYTES);
	uuid7_build(mark, zeros, st);
	assert_int_equal(uuid7_monotonic_next(st, mark - 1, zeros, out), ULID_MONO_OK);
	uuid7_build(mark, zeros, want);
	want[15] = 1;
	assert_memory_equal(out, want, ULID_BYTES);
	/* the clock past the point: its own millisecond, the drawn bytes */
	ulid_build(mark, zeros, st);
	assert_int_equal(ulid_monotonic_next(st, mark + 1, mono_r1, out), ULID_MONO_OK);
	ulid_build(mark + 1, mono_r1, want);
	assert_memory_equal(out, want, ULID_BYTES);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_known),
		cmocka_unit_test(test_vector_spec_example),
		cmocka_unit_test(test_vector_max),
		cmocka_unit_test(test_vector_zero),
		cmocka_unit_test(test_reject_overflow),
		cmocka_unit_test(test_reject_length),
		cmocka_unit_test(test_reject_excluded_letters),
		cmocka_unit_test(test_reject_other_bytes),
		cmocka_unit_test(test_case_insensitive),
		cmocka_unit_test(test_crockford_digits),
		cmocka_unit_test(test_crockford_all_bytes),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_round_trip_single_bits),
		cmocka_unit_test(test_uuid_vectors),
		cmocka_unit_test(test_uuid_reject),
		cmocka_unit_test(test_uuid_all_bytes),
		cmocka_unit_test(test_uuid_round_trip),
		cmocka_unit_test(test_time_ms),
		cmocka_unit_test(test_mono_sequence_steps),
		cmocka_unit_test(test_mono_carry),
		cmocka_unit_test(test_mono_wait),
		cmocka_unit_test(test_mono_time_range),
		cmocka_unit_test(test_mono_long_sequence),
		cmocka_unit_test(test_uuid7_build),
		cmocka_unit_test(test_uuid7_mono_steps),
		cmocka_unit_test(test_uuid7_mono_carry),
		cmocka_unit_test(test_uuid7_mono_wait_and_range),
		cmocka_unit_test(test_uuid7_mono_long),
		cmocka_unit_test(test_mono_need_random),
		cmocka_unit_test(test_mono_restart_behind),
		cmocka_unit_test(test_uuid7_mono_restart_behind),
		cmocka_unit_test(test_mono_restart_edges),
	};

	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}

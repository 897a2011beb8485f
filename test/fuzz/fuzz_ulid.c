/*
 * fuzz_ulid.c - libFuzzer harness for src/core/ulid.c.
 *
 * Every invariant violation calls abort(), which libFuzzer reports as a
 * crash with the input that caused it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ulid.h"
#include "fuzz.h"

#define SENTINEL_BYTE	0xA5
#define SENTINEL_POS	((size_t) -1)
#define MAX_MONO_STEPS	4096

static unsigned char
ascii_upper(unsigned char c)
{
	return (c >= 'a' && c <= 'z') ? (unsigned char) (c - 'a' + 'A') : c;
}

static int
sign_of(int v)
{
	return (v > 0) - (v < 0);
}

/* Parse len bytes and check every invariant of the result. */
static void
check_parse(const uint8_t *text, size_t len)
{
	uint8_t		out[ULID_BYTES];
	uint8_t		sentinel[ULID_BYTES];
	size_t		pos = SENTINEL_POS;
	size_t		first_bad = len;
	char		buf[ULID_TEXT_LEN];
	UlidParseResult r;

	for (size_t i = 0; i < len; i++)
	{
		if (cosid_crockford_value(text[i]) < 0)
		{
			first_bad = i;
			break;
		}
	}

	memset(out, SENTINEL_BYTE, sizeof(out));
	memset(sentinel, SENTINEL_BYTE, sizeof(sentinel));
	r = cosid_ulid_parse((const char *) text, len, out, &pos);

	switch (r)
	{
		case ULID_PARSE_OK:
			CHECK(len == ULID_TEXT_LEN);
			CHECK(first_bad == len);
			CHECK(cosid_crockford_value(text[0]) <= 7);
			CHECK(pos == SENTINEL_POS);
			cosid_ulid_format(out, buf);
			for (size_t i = 0; i < ULID_TEXT_LEN; i++)
				CHECK((unsigned char) buf[i] == ascii_upper(text[i]));
			break;
		case ULID_PARSE_CHARACTER:
			CHECK(pos < len);
			CHECK(pos == first_bad);
			break;
		case ULID_PARSE_LENGTH:
			CHECK(len != ULID_TEXT_LEN);
			CHECK(pos == len);
			CHECK(first_bad == len);
			break;
		case ULID_PARSE_OVERFLOW:
			CHECK(len == ULID_TEXT_LEN);
			CHECK(pos == 0);
			CHECK(first_bad == len);
			CHECK(cosid_crockford_value(text[0]) > 7);
			break;
		default:
			CHECK(!"unknown parse result");
	}
	if (r != ULID_PARSE_OK)
		CHECK(memcmp(out, sentinel, ULID_BYTES) == 0);

	/* A NULL errpos must give the same result. */
	CHECK(cosid_ulid_parse((const char *) text, len, out, NULL) == r);
}

static int
hex_digit(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * cosid_ulid_parse_input: uuid text at 36 bytes, a length error for other
 * hyphenated text, cosid_ulid_parse's answer for the rest.
 */
static void
check_parse_input(const uint8_t *text, size_t len)
{
	uint8_t		out[ULID_BYTES];
	uint8_t		ref[ULID_BYTES];
	uint8_t		sentinel[ULID_BYTES];
	size_t		pos = SENTINEL_POS;
	size_t		ref_pos = SENTINEL_POS;
	UlidParseResult r;

	memset(out, SENTINEL_BYTE, sizeof(out));
	memset(sentinel, SENTINEL_BYTE, sizeof(sentinel));
	r = cosid_ulid_parse_input((const char *) text, len, out, &pos);

	if (len == ULID_UUID_TEXT_LEN)
	{
		size_t		first_bad = len;

		for (size_t i = 0; i < len && first_bad == len; i++)
		{
			int			hyphen = (i == 8 || i == 13 || i == 18 || i == 23);

			if (hyphen ? text[i] != '-' : !hex_digit(text[i]))
				first_bad = i;
		}
		if (first_bad == len)
		{
			static const char hex[] = "0123456789abcdef";
			size_t		o = 0;

			CHECK(r == ULID_PARSE_OK);
			CHECK(pos == SENTINEL_POS);
			/* the bytes print back as the text, in lower case */
			for (int i = 0; i < ULID_BYTES; i++)
			{
				if (i == 4 || i == 6 || i == 8 || i == 10)
					CHECK(text[o++] == '-');
				CHECK((text[o] | 0x20) == hex[out[i] >> 4]);
				o++;
				CHECK((text[o] | 0x20) == hex[out[i] & 15]);
				o++;
			}
		}
		else
		{
			int			hyphen = (first_bad == 8 || first_bad == 13 ||
								  first_bad == 18 || first_bad == 23);

			CHECK(r == (hyphen ? ULID_PARSE_UUID_HYPHEN : ULID_PARSE_UUID_HEX));
			CHECK(pos == first_bad);
		}
	}
	else if (len != ULID_TEXT_LEN && memchr(text, '-', len) != NULL)
	{
		CHECK(r == ULID_PARSE_LENGTH);
		CHECK(pos == len);
	}
	else
	{
		CHECK(r == cosid_ulid_parse((const char *) text, len, ref, &ref_pos));
		CHECK(pos == ref_pos);
		if (r == ULID_PARSE_OK)
			CHECK(memcmp(out, ref, ULID_BYTES) == 0);
	}
	if (r != ULID_PARSE_OK)
		CHECK(memcmp(out, sentinel, ULID_BYTES) == 0);
	CHECK(cosid_ulid_parse_input((const char *) text, len, out, NULL) == r);
}

/* Any 16 bytes format to valid text that parses back to them. */
static void
check_format(const uint8_t u[ULID_BYTES], char text[ULID_TEXT_LEN])
{
	uint8_t		back[ULID_BYTES];
	size_t		pos = SENTINEL_POS;

	cosid_ulid_format(u, text);
	CHECK(text[0] >= '0' && text[0] <= '7');
	for (size_t i = 0; i < ULID_TEXT_LEN; i++)
	{
		int			v = cosid_crockford_value((unsigned char) text[i]);

		/* Upper-case digits only. */
		CHECK(v >= 0 && cosid_crockford_digit((unsigned int) v) == text[i]);
	}
	CHECK(cosid_ulid_parse(text, ULID_TEXT_LEN, back, &pos) == ULID_PARSE_OK);
	CHECK(pos == SENTINEL_POS);
	CHECK(memcmp(back, u, ULID_BYTES) == 0);
}

/* Whether a ULID's 80-bit part is zero. */
static int
rand_zero(const uint8_t *u)
{
	for (int i = 6; i < ULID_BYTES; i++)
		if (u[i] != 0)
			return 0;
	return 1;
}

/*
 * Drive the monotonic state machine: the state is the first 16 bytes (zero
 * padded), then each step takes two bytes, an opcode and a clock delta.
 */
static void
check_monotonic(const uint8_t *data, size_t size)
{
	uint8_t		st[ULID_BYTES] = {0};
	uint8_t		prev[ULID_BYTES];
	uint8_t		out[ULID_BYTES];
	uint8_t		expect[ULID_BYTES];
	uint8_t		rnd[ULID_RAND_BYTES];
	uint64_t	now;
	size_t		off;
	size_t		steps = 0;
	uint32_t	seed = 2166136261u;

	memcpy(st, data, size < ULID_BYTES ? size : ULID_BYTES);
	off = size < ULID_BYTES ? size : ULID_BYTES;
	now = cosid_ulid_time_ms(st);

	/* FNV-1a of the input seeds the random bytes. */
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 16777619u;

	while (off + 2 <= size && steps++ < MAX_MONO_STEPS)
	{
		uint8_t		op = data[off];
		uint64_t	delta = data[off + 1];
		uint64_t	last_ms = cosid_ulid_time_ms(st);
		UlidMonoResult r;

		off += 2;

		/* Clock: low two bits choose stay, forward, back or a long jump. */
		switch (op & 3)
		{
			case 0:
				break;
			case 1:
				now += delta;
				break;
			case 2:
				now = (now > delta) ? now - delta : 0;
				break;
			case 3:
				now += delta << (8 + (op >> 4));
				break;
		}

		/* Random: bit 2 picks all ones (to reach WAIT), else xorshift. */
		for (int i = 0; i < ULID_RAND_BYTES; i++)
		{
			seed ^= seed << 13;
			seed ^= seed >> 17;
			seed ^= seed << 5;
			rnd[i] = (op & 4) ? 0xFF : (uint8_t) seed;
		}

		memcpy(prev, st, ULID_BYTES);
		memset(out, SENTINEL_BYTE, sizeof(out));
		r = cosid_ulid_monotonic_next(st, now, rnd, out);

		if (now > ULID_MAX_TIME)
		{
			CHECK(r == ULID_MONO_TIME_RANGE);
			CHECK(memcmp(st, prev, ULID_BYTES) == 0);
			/* Bring the clock back in range for the next steps. */
			now = ULID_MAX_TIME - (op & 0x0F);
			continue;
		}

		if (now > last_ms)
		{
			CHECK(r == ULID_MONO_OK);
			cosid_ulid_build(now, rnd, expect);
		}
		else if (rand_zero(prev))
		{
			/*
			 * A last ULID whose 80-bit part is zero (the mark after a
			 * restart) is a point to go on from: fresh random bits at its
			 * time (never zero), not 1, 2, 3...
			 */
			CHECK(r == ULID_MONO_OK);
			cosid_ulid_build(last_ms, rnd, expect);
			if (rand_zero(expect))
				expect[ULID_BYTES - 1] = 1;
		}
		else
		{
			int			i;

			/* The expected successor: the 80-bit part plus one. */
			memcpy(expect, prev, ULID_BYTES);
			for (i = ULID_BYTES - 1; i >= 6 && expect[i] == 0xFF; i--)
				expect[i] = 0;
			if (i < 6)
			{
				CHECK(r == ULID_MONO_WAIT);
				CHECK(memcmp(st, prev, ULID_BYTES) == 0);
				for (int j = 0; j < ULID_BYTES; j++)
					CHECK(out[j] == SENTINEL_BYTE);
				continue;
			}
			CHECK(r == ULID_MONO_OK);
			expect[i]++;
		}
		CHECK(memcmp(out, expect, ULID_BYTES) == 0);
		CHECK(memcmp(st, out, ULID_BYTES) == 0);
		CHECK(memcmp(out, prev, ULID_BYTES) > 0);
		CHECK(cosid_ulid_time_ms(out) == (now > last_ms ? now : last_ms));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul;
	char		a[ULID_TEXT_LEN];
	char		b[ULID_TEXT_LEN];

	/* The input as is, with its explicit length. */
	check_parse(data, size);
	check_parse_input(data, size);

	/* As ulid_in sees it: a C string ends at the first NUL. */
	nul = memchr(data, '\0', size);
	if (nul != NULL)
	{
		check_parse(data, (size_t) (nul - data));
		check_parse_input(data, (size_t) (nul - data));
	}

	/* The first 16 bytes as a ULID; text order is byte order. */
	if (size >= ULID_BYTES)
		check_format(data, a);
	if (size >= 2 * ULID_BYTES)
	{
		check_format(data + ULID_BYTES, b);
		CHECK(sign_of(memcmp(data, data + ULID_BYTES, ULID_BYTES)) ==
			  sign_of(memcmp(a, b, ULID_TEXT_LEN)));
	}

	check_monotonic(data, size);
	return 0;
}

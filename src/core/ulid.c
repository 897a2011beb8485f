/*
 * ulid.c - ULID text, layout and monotonic state machine (no PostgreSQL).
 *
 * Owns and must not: see ulid.h.
 */
#include "ulid.h"
#include "text.h"

#include <stdbool.h>
#include <string.h>

static const char crockford_alphabet[32] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/* -1 for every byte that is not a digit; both cases map to the same value. */
static const int8_t crockford_table[256] = {
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,
	/* @ A   B   C   D   E   F   G   H   I   J   K   L   M   N   O */
	-1, 10, 11, 12, 13, 14, 15, 16, 17, -1, 18, 19, -1, 20, 21, -1,
	/* P Q   R   S   T   U   V   W   X   Y   Z */
	22, 23, 24, 25, 26, -1, 27, 28, 29, 30, 31, -1, -1, -1, -1, -1,
	-1, 10, 11, 12, 13, 14, 15, 16, 17, -1, 18, 19, -1, 20, 21, -1,
	22, 23, 24, 25, 26, -1, 27, 28, 29, 30, 31, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

int
crockford_value(unsigned char c)
{
	return crockford_table[c];
}

char
crockford_digit(unsigned int v)
{
	return crockford_alphabet[v & 31];
}

static inline uint64_t
load_be64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static inline void
store_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
	{
		p[i] = (uint8_t) v;
		v >>= 8;
	}
}

UlidParseResult
ulid_parse(const char *text, size_t len, uint8_t out[ULID_BYTES],
		   size_t *errpos)
{
	uint64_t	hi = 0;
	uint64_t	lo = 0;

	/*
	 * Characters first, so that text with a foreign (perhaps multibyte)
	 * character is reported as such rather than as a wrong length.
	 */
	for (size_t i = 0; i < len; i++)
	{
		int			d = crockford_table[(unsigned char) text[i]];

		if (d < 0)
		{
			if (errpos)
				*errpos = i;
			return ULID_PARSE_CHARACTER;
		}
		hi = (hi << 5) | (lo >> 59);
		lo = (lo << 5) | (uint64_t) d;
	}
	if (len != ULID_TEXT_LEN)
	{
		if (errpos)
			*errpos = len;
		return ULID_PARSE_LENGTH;
	}
	/* 130 bits of text for 128 of value: the top character holds 3 bits. */
	if (crockford_table[(unsigned char) text[0]] > 7)
	{
		if (errpos)
			*errpos = 0;
		return ULID_PARSE_OVERFLOW;
	}
	store_be64(out, hi);
	store_be64(out + 8, lo);
	return ULID_PARSE_OK;
}

static inline int
uuid_hyphen_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

UlidParseResult
ulid_parse_uuid(const char *text, size_t len, uint8_t out[ULID_BYTES],
				size_t *errpos)
{
	uint8_t		bytes[ULID_BYTES];
	size_t		nibble = 0;
	size_t		check = len < ULID_UUID_TEXT_LEN ? len : ULID_UUID_TEXT_LEN;

	/* As ulid_parse: a wrong character before a wrong length. */
	for (size_t i = 0; i < check; i++)
	{
		unsigned char c = (unsigned char) text[i];

		if (uuid_hyphen_at(i))
		{
			if (c != '-')
			{
				if (errpos)
					*errpos = i;
				return ULID_PARSE_UUID_HYPHEN;
			}
		}
		else
		{
			int			d = cosid_hex_value(c);

			if (d < 0)
			{
				if (errpos)
					*errpos = i;
				return ULID_PARSE_UUID_HEX;
			}
			if (nibble % 2 == 0)
				bytes[nibble / 2] = (uint8_t) (d << 4);
			else
				bytes[nibble / 2] |= (uint8_t) d;
			nibble++;
		}
	}
	if (len != ULID_UUID_TEXT_LEN)
	{
		if (errpos)
			*errpos = len;
		return ULID_PARSE_LENGTH;
	}
	memcpy(out, bytes, ULID_BYTES);
	return ULID_PARSE_OK;
}

UlidParseResult
ulid_parse_input(const char *text, size_t len, uint8_t out[ULID_BYTES],
				 size_t *errpos)
{
	if (len == ULID_UUID_TEXT_LEN)
		return ulid_parse_uuid(text, len, out, errpos);
	if (len != ULID_TEXT_LEN && memchr(text, '-', len) != NULL)
	{
		if (errpos)
			*errpos = len;
		return ULID_PARSE_LENGTH;
	}
	return ulid_parse(text, len, out, errpos);
}

void
ulid_format(const uint8_t u[ULID_BYTES], char out[ULID_TEXT_LEN])
{
	uint64_t	hi = load_be64(u);
	uint64_t	lo = load_be64(u + 8);

	for (int k = 0; k < ULID_TEXT_LEN; k++)
	{
		int			s = 5 * (ULID_TEXT_LEN - 1 - k);	/* 125 .. 0 */
		uint64_t	v;

		if (s >= 64)
			v = hi >> (s - 64);
		else if (s > 59)
			v = (lo >> s) | (hi << (64 - s));
		else
			v = lo >> s;
		out[k] = crockford_alphabet[v & 31];
	}
}

void
ulid_build(uint64_t unix_ms, const uint8_t rnd[ULID_RAND_BYTES],
		   uint8_t out[ULID_BYTES])
{
	for (int i = 5; i >= 0; i--)
	{
		out[i] = (uint8_t) unix_ms;
		unix_ms >>= 8;
	}
	memcpy(out + 6, rnd, ULID_RAND_BYTES);
}

uint64_t
ulid_time_ms(const uint8_t u[ULID_BYTES])
{
	uint64_t	t = 0;

	for (int i = 0; i < 6; i++)
		t = (t << 8) | u[i];
	return t;
}

/* Whether the 80-bit part of a ULID is zero. */
static bool
ulid_rand_zero(const uint8_t u[ULID_BYTES])
{
	for (int i = 6; i < ULID_BYTES; i++)
		if (u[i] != 0)
			return false;
	return true;
}

UlidMonoResult
ulid_monotonic_next(uint8_t last[ULID_BYTES], uint64_t now_ms,
					const uint8_t rnd[ULID_RAND_BYTES],
					uint8_t out[ULID_BYTES])
{
	uint64_t	last_ms = ulid_time_ms(last);
	int			i;

	if (now_ms > ULID_MAX_TIME)
		return ULID_MONO_TIME_RANGE;

	if (now_ms > last_ms)
	{
		if (rnd == NULL)
			return ULID_MONO_NEED_RANDOM;
		ulid_build(now_ms, rnd, last);
		memcpy(out, last, ULID_BYTES);
		return ULID_MONO_OK;
	}

	/*
	 * A last ULID whose 80-bit part is zero is a point to go on from, never
	 * issued (the mark after a restart): a fresh random part at its time,
	 * not 1, 2, 3...  Above zero, so above the point.
	 */
	if (ulid_rand_zero(last))
	{
		if (rnd == NULL)
			return ULID_MONO_NEED_RANDOM;
		ulid_build(last_ms, rnd, last);
		if (ulid_rand_zero(last))
			last[ULID_BYTES - 1] = 1;
		memcpy(out, last, ULID_BYTES);
		return ULID_MONO_OK;
	}

	/* Same millisecond or the clock went back: the 80-bit part plus one. */
	for (i = ULID_BYTES - 1; i >= 6; i--)
	{
		if (last[i] != 0xFF)
			break;
	}
	if (i < 6)
		return ULID_MONO_WAIT;	/* all ones: the increment would overflow */
	last[i]++;
	memset(last + i + 1, 0, ULID_BYTES - 1 - i);
	memcpy(out, last, ULID_BYTES);
	return ULID_MONO_OK;
}

/* ---------- UUID version 7 ---------- */

void
uuid7_build(uint64_t unix_ms, const uint8_t rnd[UUID7_RAND_BYTES],
			uint8_t out[ULID_BYTES])
{
	ulid_build(unix_ms, rnd, out);
	out[6] = (uint8_t) (0x70 | (out[6] & 0x0F));
	out[8] = (uint8_t) (0x80 | (out[8] & 0x3F));
}

/*
 * The bytes of the 74-bit counter, least significant first, with the mask
 * of the bits of each that count (the rest are version and variant).
 */
static const struct
{
	int			byte;
	uint8_t		mask;
}			uuid7_counter[] = {
	{15, 0xFF}, {14, 0xFF}, {13, 0xFF}, {12, 0xFF}, {11, 0xFF}, {10, 0xFF}, {9, 0xFF},
	{8, 0x3F}, {7, 0xFF}, {6, 0x0F}
};

/* Whether the 74 random bits of a UUIDv7 are zero. */
static bool
uuid7_rand_zero(const uint8_t u[ULID_BYTES])
{
	for (size_t i = 0; i < sizeof(uuid7_counter) / sizeof(uuid7_counter[0]); i++)
		if ((u[uuid7_counter[i].byte] & uuid7_counter[i].mask) != 0)
			return false;
	return true;
}

UlidMonoResult
uuid7_monotonic_next(uint8_t last[ULID_BYTES], uint64_t now_ms,
					 const uint8_t rnd[UUID7_RAND_BYTES],
					 uint8_t out[ULID_BYTES])
{
	size_t		i;
	size_t		n = sizeof(uuid7_counter) / sizeof(uuid7_counter[0]);

	if (now_ms > ULID_MAX_TIME)
		return ULID_MONO_TIME_RANGE;
	if (now_ms > ulid_time_ms(last))
	{
		if (rnd == NULL)
			return ULID_MONO_NEED_RANDOM;
		uuid7_build(now_ms, rnd, last);
		memcpy(out, last, ULID_BYTES);
		return ULID_MONO_OK;
	}

	/* a point to go on from (see ulid_monotonic_next): fresh random bits */
	if (uuid7_rand_zero(last))
	{
		if (rnd == NULL)
			return ULID_MONO_NEED_RANDOM;
		uuid7_build(ulid_time_ms(last), rnd, last);
		if (uuid7_rand_zero(last))
			last[ULID_BYTES - 1] = 1;
		memcpy(out, last, ULID_BYTES);
		return ULID_MONO_OK;
	}

	/* Same millisecond or the clock went back: the 74-bit part plus one. */
	for (i = 0; i < n; i++)
	{
		int			b = uuid7_counter[i].byte;
		uint8_t		m = uuid7_counter[i].mask;

		if ((last[b] & m) != m)
			break;
	}
	if (i == n)
		return ULID_MONO_WAIT;	/* all ones: the increment would overflow */
	last[uuid7_counter[i].byte]++;	/* no carry out of its mask's bits */
	for (size_t j = 0; j < i; j++)
		last[uuid7_counter[j].byte] &= (uint8_t) ~uuid7_counter[j].mask;
	memcpy(out, last, ULID_BYTES);
	return ULID_MONO_OK;
}

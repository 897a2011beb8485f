/*
 * text.h - what the files of src/core share about text (internal: the
 * PostgreSQL side never includes it): a message into the caller's buffer, a
 * byte as a message shows it, a cut that keeps UTF-8 characters whole, the
 * words and keys of a JSON document, fixed-width and decimal digits.
 *
 * Owns: the wording that more than one decoder uses ("character N (x) is
 * not a base-R digit"), and the one ASCII case folding and UTF-8 cut of
 * src/core.
 * Must not: include another header of src/core, or know radix settings,
 * layouts, dates, definitions or codec lists: it serves all of them.
 */
#ifndef COSID_CORE_TEXT_H
#define COSID_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* text into msg (msglen bytes, NUL-terminated); nothing when msg is NULL. */
extern void cosid_set_msg(char *msg, size_t msglen, const char *text);

/* A byte for a message: "x" when printable ASCII, else 0xNN. */
extern void cosid_describe_char(unsigned char c, char out[8]);

/*
 * "character N (x) is not a base-R digit" (N = pos + 1), with a hint for
 * lower case in radixes up to 36.
 */
extern void cosid_bad_digit_msg(char *msg, size_t msglen, size_t pos,
								unsigned char c, int radix);

/*
 * s[0..n) was cut from a longer UTF-8 text: n less the bytes of a last
 * character that lost some of its bytes (a stray byte counts as a whole
 * character).  Every cut of src/core goes through it.
 */
extern size_t cosid_utf8_trim(const char *s, size_t n);

/*
 * Whether s equals word, folding ASCII letters only (as pg_strcasecmp does
 * for the ASCII words compared here; no locale).  Both NUL-terminated.
 */
extern bool cosid_word_eq(const char *s, const char *word);

/* The index of key in a NULL-terminated list of keys, or -1. */
extern int	cosid_key_index(const char *key, const char *const *keys);

/*
 * Inline, being small and called once a field or a digit on the paths that
 * succeed.
 */

/* The largest value of `bits` bits: all ones (UINT64_MAX from 64 on). */
static inline uint64_t
cosid_max_of_bits(int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* An ASCII decimal digit. */
static inline bool
cosid_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exactly `width` digits: v modulo 10^width (negative values wrap). */
static inline void
cosid_put_fixed(char *buf, int v, int width)
{
	int			mod = width == 4 ? 10000 : width == 3 ? 1000 : 100;

	v %= mod;
	if (v < 0)
		v += mod;
	for (int i = width - 1; i >= 0; i--)
	{
		buf[i] = (char) ('0' + v % 10);
		v /= 10;
	}
}

/* Decimal digits s[0..n) (all digits, n <= 19) as a number. */
static inline uint64_t
cosid_read_decimal(const char *s, size_t n)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t) (s[i] - '0');
	return v;
}

/* The value of a hexadecimal digit (either case), -1 for any other byte. */
static inline int
cosid_hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif							/* COSID_CORE_TEXT_H */

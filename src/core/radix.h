/*
 * radix.h - radix text without PostgreSQL: a number as digits 0-9A-Za-z of
 * a base from 2 to 62, and back; and CosidDecodeResult, what every decoder
 * of src/core returns.
 *
 * Canonical forms.  Every encoder writes one text per value; the decoders
 * accept exactly that text, except that the unpadded forms (radix without
 * pad_start, friendly node and sequence without pad_start) also accept
 * leading zeros, as CosId's decoders do, up to the same width.  So a padded
 * decode re-encodes to the same text, an unpadded one to the text without
 * its leading zeros.
 *
 * Decoders check the characters first, then the length, then the ranges:
 * SYNTAX for the first two, RANGE only for well-formed text.  Character
 * positions in messages count from 1.
 *
 * Owns: CosidRadix and its checks, CosidDecodeResult, the alphabet, the
 * width of a number of bits in a radix, and the digit writers and readers
 * that friendly and parts text use (the last section).
 * Must not: know layouts, dates or codec lists (the codecs built on radix
 * text include this header, never the other way round).
 */
#ifndef COSID_CORE_RADIX_H
#define COSID_CORE_RADIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COSID_RADIX_MIN 2
#define COSID_RADIX_MAX 62

/*
 * Alphabet 0-9A-Za-z (ASCII order, so equal-width text sorts like the
 * number); bases up to 36 use 0-9A-Z, upper case only.
 */
typedef struct CosidRadix
{
	int			radix;			/* 2..62 */
	int			width;			/* maximum (and, padded, exact) length */
	bool		pad_start;		/* left-pad with '0' to width */
} CosidRadix;

/* Digits a value of `bits` bits (all ones) needs in a radix (1 for 0 bits;
 * -1 for a radix outside 2..62 or bits outside 0..64). */
extern int	cosid_radix_width_for_bits(int radix, int bits);

/* The default width: what INT64_MAX needs (11 for 62, 13 for 36, 19 for 10). */
extern int	cosid_radix_default_width(int radix);

typedef enum CosidDecodeResult
{
	COSID_DECODE_OK = 0,
	COSID_DECODE_SYNTAX,		/* malformed text: 22P02 */
	COSID_DECODE_RANGE			/* well-formed but does not fit: 22003 */
} CosidDecodeResult;

/*
 * Encode v (>= 0) into buf (>= width + 1 bytes, NUL-terminated); returns
 * the length, or -1 when v is negative or needs more than width digits.
 */
extern int	cosid_radix_encode(const CosidRadix *r, int64_t v, char *buf);

/*
 * Decode exactly len bytes.  SYNTAX: empty, a sign, a foreign or
 * out-of-radix digit, longer than width, or (pad_start) shorter than width;
 * RANGE: over max (INT64_MAX for a plain id).  msg gets a sentence saying
 * which.
 */
extern CosidDecodeResult cosid_radix_decode(const CosidRadix *r, const char *s,
											size_t len, uint64_t max,
											int64_t *v, char *msg, size_t msglen);

/* ---------- digits, for the other codecs of src/core ---------- */

/*
 * Write v in decimal, zero-padded to at least minwidth digits (negative
 * values get a '-' first).  Returns the length; at most 20 bytes plus the
 * padding, no NUL.
 */
extern int	cosid_put_decimal(char *buf, int64_t v, int minwidth);

/* Write u in the radix (2..62), zero-padded to minwidth; returns the
 * length, no NUL. */
extern int	cosid_put_radix(char *buf, uint64_t u, int radix, int minwidth);

/*
 * Digits s[0..n) of a radix, already checked, as a number; false when it
 * is over max.
 */
extern bool cosid_radix_value(const char *s, size_t n, int radix,
							  uint64_t max, uint64_t *out);

/* Index of the first byte that is not a digit of the radix, or n. */
extern size_t cosid_first_bad_digit(const char *s, size_t n, int radix);

#endif							/* COSID_CORE_RADIX_H */

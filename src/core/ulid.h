/*
 * ulid.h - ULIDs without PostgreSQL: Crockford base32 text, the 128-bit
 * layout and the monotonic state machine; and the same for RFC 9562 UUID
 * version 7, the other time-first 128-bit id (uuid7_*).
 *
 * A ULID is 16 bytes, big-endian: 48 bits of Unix milliseconds, then 80
 * random bits.  Its text is 26 Crockford base32 characters (0-9 A-Z without
 * I L O U); 26 * 5 = 130 bits, so the first character carries only 3 bits
 * and must be 0-7.
 *
 * Nothing here reads a clock or draws random bytes: the caller passes them
 * in, so every path is testable with injected values.
 *
 * Owns: ULID text (and the uuid text form it also reads), the layout, the
 * monotonic step.  Must not: read the clock, draw randomness or keep state
 * of its own (the caller holds the last ULID).
 */
#ifndef COSID_CORE_ULID_H
#define COSID_CORE_ULID_H

#include <stddef.h>
#include <stdint.h>

#define ULID_BYTES		16
#define ULID_TEXT_LEN	26
#define ULID_UUID_TEXT_LEN 36	/* 8-4-4-4-12 hexadecimal digits */
#define ULID_TIME_CHARS 10
#define ULID_RAND_BYTES 10
#define ULID_MAX_TIME	((UINT64_C(1) << 48) - 1)

typedef enum UlidParseResult
{
	ULID_PARSE_OK = 0,
	ULID_PARSE_LENGTH,			/* not 26 characters (nor 36, ulid_parse_input) */
	ULID_PARSE_CHARACTER,		/* a character outside Crockford base32 */
	ULID_PARSE_OVERFLOW,		/* first character above '7' */
	ULID_PARSE_UUID_HEX,		/* uuid text: not a hexadecimal digit */
	ULID_PARSE_UUID_HYPHEN		/* uuid text: not a hyphen where one belongs */
} UlidParseResult;

/*
 * Value of a Crockford base32 character (either case), or -1.  I, L, O and U
 * are not digits here: the ULID specification excludes them from its text.
 */
extern int	crockford_value(unsigned char c);

/* The digit for a value 0..31, upper case. */
extern char crockford_digit(unsigned int v);

/*
 * Parse text of len bytes into out.  Characters are checked before the
 * length, so the first byte that is not a digit is what gets reported.  On
 * failure *errpos (when not NULL) is the 0-based offset of the offending
 * byte, or the length found for ULID_PARSE_LENGTH.  out is written only on
 * success.
 */
extern UlidParseResult ulid_parse(const char *text, size_t len,
								  uint8_t out[ULID_BYTES], size_t *errpos);

/*
 * Parse the canonical text of a UUID, 36 bytes: 8-4-4-4-12 hexadecimal
 * digits (either case) separated by hyphens, into the same 16 bytes that
 * PostgreSQL's uuid holds.  Bytes are checked left to right: the first wrong
 * one is reported (ULID_PARSE_UUID_HYPHEN at offsets 8, 13, 18 and 23,
 * ULID_PARSE_UUID_HEX elsewhere), and only then a length other than 36
 * (ULID_PARSE_LENGTH, *errpos the length).  errpos and out as ulid_parse.
 */
extern UlidParseResult ulid_parse_uuid(const char *text, size_t len,
									   uint8_t out[ULID_BYTES], size_t *errpos);

/*
 * What the ulid type reads: ULID text, or the canonical text of a UUID.
 * Text of 36 bytes is read as a UUID (ulid_parse_uuid); text of another
 * length that holds a hyphen (never a Crockford digit) is ULID_PARSE_LENGTH,
 * since it is most likely a UUID written otherwise; anything else is read as
 * a ULID (ulid_parse).  errpos and out as ulid_parse.
 */
extern UlidParseResult ulid_parse_input(const char *text, size_t len,
										uint8_t out[ULID_BYTES], size_t *errpos);

/* Write the 26 characters of u (no terminating NUL). */
extern void ulid_format(const uint8_t u[ULID_BYTES], char out[ULID_TEXT_LEN]);

/* Build a ULID from a time (<= ULID_MAX_TIME) and 10 random bytes. */
extern void ulid_build(uint64_t unix_ms, const uint8_t rnd[ULID_RAND_BYTES],
					   uint8_t out[ULID_BYTES]);

/* The 48-bit millisecond time of a ULID. */
extern uint64_t ulid_time_ms(const uint8_t u[ULID_BYTES]);

/*
 * Monotonic generation.  The state is the last ULID issued (all zero before
 * the first).  Given the current time and fresh random bytes:
 *  - a time later than the last ULID's: fresh random part, new time;
 *  - the same millisecond, or a clock that went back: the last ULID with its
 *    80-bit part plus one (the time part stays that of the last ULID);
 *  - but a last ULID whose 80-bit part is zero is a point to go on from, not
 *    an id issued (the caller makes one of a time past every id issued
 *    before, as ulid_type.c does after a restart): in its millisecond or
 *    before, the next ULID has its time and a fresh random 80-bit part
 *    (never zero), and the ones after it count up from there.  So a clock
 *    behind the point still gives 80 random bits, not 1, 2, 3...;
 *  - when that increment would overflow 80 bits: ULID_MONO_WAIT, nothing
 *    issued; the caller waits until the clock passes ulid_time_ms(last) and
 *    tries again.
 * ULID_MONO_TIME_RANGE: the time is past the 48-bit end.
 * rnd may be NULL (the caller draws random bytes only when a new
 * millisecond needs them): then ULID_MONO_NEED_RANDOM where it would use
 * them, and the caller calls again with them.
 */
typedef enum UlidMonoResult
{
	ULID_MONO_OK = 0,
	ULID_MONO_WAIT,
	ULID_MONO_TIME_RANGE,
	ULID_MONO_NEED_RANDOM		/* rnd was NULL and a later millisecond needs
								 * fresh random bytes: nothing issued */
} UlidMonoResult;

extern UlidMonoResult ulid_monotonic_next(uint8_t last[ULID_BYTES],
										  uint64_t now_ms,
										  const uint8_t rnd[ULID_RAND_BYTES],
										  uint8_t out[ULID_BYTES]);

/*
 * UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, the version
 * (0111), 12 bits rand_a, the variant (10), 62 bits rand_b: 74 bits from
 * rnd, which the version and variant bits overwrite (the top nibble of
 * rnd[0], the top two bits of rnd[2]).
 */
#define UUID7_RAND_BYTES 10

extern void uuid7_build(uint64_t unix_ms, const uint8_t rnd[UUID7_RAND_BYTES],
						uint8_t out[ULID_BYTES]);

/*
 * Monotonic UUIDv7 (RFC 9562 section 6.2, method 2 with an increment of
 * one): as ulid_monotonic_next, the last UUID's 74 random bits plus one
 * within its millisecond (the version and variant bits stay), a fresh
 * random part in a later one, and after a point to go on from (74 random
 * bits zero: a fresh random part at its time).  The state is the last UUID
 * (all zero before the first).
 */
extern UlidMonoResult uuid7_monotonic_next(uint8_t last[ULID_BYTES],
										   uint64_t now_ms,
										   const uint8_t rnd[UUID7_RAND_BYTES],
										   uint8_t out[ULID_BYTES]);

#endif							/* COSID_CORE_ULID_H */

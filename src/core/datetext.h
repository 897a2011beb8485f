/*
 * datetext.h - friendly and date text without PostgreSQL: broken-down times
 * (CosidTm), Java-style date patterns, calendar checks, the offset of a
 * local time in a zone as java.time resolves it, and friendly text
 * (yyyyMMddHHmmssSSS-node-seq).
 *
 * Owns: CosidTm, the date-pattern fields and their ranges, the calendar
 * rules, friendly text.
 * Must not: read a clock or a time-zone database (PostgreSQL's business:
 * this code sees broken-down times, offsets and names only), or know codec
 * lists.
 */
#ifndef COSID_CORE_DATETEXT_H
#define COSID_CORE_DATETEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "radix.h"
#include "timegen.h"

/* ---------- broken-down time and date patterns ---------- */

typedef struct CosidTm
{
	int			year;			/* 1..9999 */
	int			month;			/* 1..12 */
	int			day;			/* 1..31 */
	int			hour;
	int			minute;
	int			second;
	int			millis;
} CosidTm;

/*
 * A Java-style date pattern: the letters yyyy yy MM dd HH mm ss SSS, and
 * literal characters that are not ASCII letters or digits.  Every field has
 * a fixed width, so the formatted length is fixed.  Returns that length, or
 * -1 with msg saying what is wrong (an unknown letter, an odd run of them).
 */
extern int	cosid_date_pattern_check(const char *pattern, char *msg, size_t msglen);

/* Format tm by pattern into buf (>= formatted length + 1); returns the length
 * (-1 and an empty buf for a pattern that fails the check). */
extern int	cosid_date_format(const char *pattern, const CosidTm *tm, char *buf);

/*
 * Parse exactly the pattern's length from s into tm (fields the pattern
 * lacks are left as given).  yy means 2000 + yy.  Checks field ranges (not
 * the day against the month: the caller's conversion does).  SYNTAX with
 * msg on failure.
 */
extern CosidDecodeResult cosid_date_parse(const char *pattern, const char *s,
										  size_t len, CosidTm *tm,
										  char *msg, size_t msglen);

/* Days in a month of the proleptic Gregorian calendar (0 outside 1..12). */
extern int	cosid_days_in_month(int year, int month);

/*
 * Whether year, month and day make a date of years 1..9999 (month and day
 * may be 1 where a caller has no such field); msg says which field is wrong
 * and its range: "day 31 is out of range for February 2026 (1 to 28)".
 */
extern bool cosid_date_valid(int year, int month, int day, char *msg,
							 size_t msglen);

/*
 * The UTC offset (seconds east) of a local time in a zone, resolved as
 * java.time does it (ZonedDateTime.ofLocal without a preferred offset, so
 * LocalDateTime.atZone and CosId): the zone's offset changes from
 * before_gmtoff to after_gmtoff at the instant boundary (Unix seconds), and
 * local is the local time in seconds as if it were UTC.  A local time that
 * is valid on one side only takes that side's offset; one that happens
 * twice (the clocks go back) takes the earlier instant, before_gmtoff; one
 * that never happens (the clocks go forward) moves forward by the gap,
 * which is before_gmtoff too.  PostgreSQL takes the later instant of a
 * repeated time instead.
 */
extern int64_t cosid_zone_offset_for_local(int64_t local, int64_t before_gmtoff,
										   int64_t boundary, int64_t after_gmtoff);

/* ---------- friendly text: yyyyMMddHHmmssSSS-node-seq ---------- */

/* Decimal digits of the largest value of a field of `bits` bits. */
extern int	cosid_decimal_width_for_bits(int bits);

/*
 * Format friendly text: the time (SSS only for millisecond units), then
 * node and sequence separated by '-', padded (pad_start) to the decimal
 * width of each field's maximum.  Returns the length written to buf
 * (>= 64 bytes).
 */
extern int	cosid_friendly_format(const CosidLayout *l, bool pad_start,
								  const CosidTm *tm, int64_t node, int64_t seq,
								  char *buf);

/*
 * Parse friendly text into tm (time fields), node and seq, checking each
 * part's form and range.  SYNTAX/RANGE with msg on failure.
 */
extern CosidDecodeResult cosid_friendly_parse(const CosidLayout *l, bool pad_start,
											  const char *s, size_t len,
											  CosidTm *tm, int64_t *node,
											  int64_t *seq, char *msg,
											  size_t msglen);

#endif							/* COSID_CORE_DATETEXT_H */

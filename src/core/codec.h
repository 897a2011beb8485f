/*
 * codec.h - CosId codecs without PostgreSQL: the pieces that turn an id into
 * text and back, and the parser of a codec list written in JSON.
 *
 * A codec is an ordered list, applied in the order written.  The first item
 * turns the number into text (radix, friendly, custom, parts-radix,
 * parts-friendly, grouped); without one the text is decimal.  Later items
 * wrap it (prefix, suffix, date-prefix).  Decoding runs the list backwards.
 *
 * Time zones and SQL functions are PostgreSQL's business: this code sees
 * broken-down times (CosidTm) and names only.  The caller runs the pipeline.
 */
#ifndef COSID_CORE_CODEC_H
#define COSID_CORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "timegen.h"

/* ---------- radix text ---------- */

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

/* ---------- a layout's ids and times ---------- */

/*
 * Whether a bigint is an id of a layout (<= 63 bits) whose ids carry
 * uncertainty_bits random low bits: 0 to 2^(total + uncertainty) - 1.
 */
extern bool cosid_layout_holds_id(const CosidLayout *l, int uncertainty_bits,
								  int64_t id);

/*
 * The Unix milliseconds of a time part (epoch + time * unit), false when
 * the time is negative or the instant is past max_ms (no overflow).
 */
extern bool cosid_layout_time_ms(const CosidLayout *l, int64_t time,
								 int64_t max_ms, int64_t *ms);

/*
 * The largest time part of the layout whose instant is at most max_ms: the
 * layout's max time if it ends before, -1 when even time 0 is later.
 */
extern int64_t cosid_layout_last_time(const CosidLayout *l, int64_t max_ms);

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

/* ---------- parts-radix text (cosid80) ---------- */

/*
 * Each part (time, node, seq) at the fixed width of its bit count in the
 * radix, concatenated, so text sorts like the id: base 62 for COSID_80 is
 * 8 + 4 + 3 = 15 characters.
 */
/* Encode returns the length, or -1 when a part is negative or over its bits. */
extern int	cosid_parts_radix_length(const CosidLayout *l, int radix);
extern int	cosid_parts_radix_encode(const CosidLayout *l, int radix,
									 int64_t time, int64_t node, int64_t seq,
									 char *buf);
extern CosidDecodeResult cosid_parts_radix_decode(const CosidLayout *l, int radix,
												  const char *s, size_t len,
												  int64_t *time, int64_t *node,
												  int64_t *seq, char *msg,
												  size_t msglen);

/* ---------- periodic segment numbers (grouped) ---------- */

/*
 * A periodic segment number is its period's date digits followed by a
 * fixed number of value digits: day yyyyMMdd * 10^10 + value, month
 * yyyyMM * 10^12 + value, year yyyy * 10^14 + value.  The decimal text shows
 * the period, numbers increase across periods, and each value restarts at 1.
 */
typedef enum CosidGroup
{
	COSID_GROUP_NONE = 0,
	COSID_GROUP_DAY,
	COSID_GROUP_MONTH,
	COSID_GROUP_YEAR
} CosidGroup;

/* 10^(value digits) of a group: 10^10, 10^12, 10^14. */
extern int64_t cosid_group_scale(CosidGroup g);

/* The period digits (yyyyMMdd, yyyyMM, yyyy) of a date. */
extern int64_t cosid_group_period(CosidGroup g, const CosidTm *tm);

/*
 * Whether period digits (yyyyMMdd, yyyyMM, yyyy) are a date of the group:
 * years 1..9999 and a day the month has (no 31 February).  msg says what is
 * wrong: "day 31 is out of range for February 2026 (1 to 28)".
 */
extern bool cosid_group_period_valid(CosidGroup g, int64_t period, char *msg,
									 size_t msglen);

/* Split a number into period digits and value; false when the period part
 * is not a valid date of the group (cosid_group_period_valid). */
extern bool cosid_group_split(CosidGroup g, int64_t id, int64_t *period,
							  int64_t *value);

/* The pattern the period is written with: "yyyyMMdd", "yyyyMM", "yyyy". */
extern const char *cosid_group_pattern(CosidGroup g);

/* ---------- codec lists ---------- */

typedef enum CosidCodecKind
{
	COSID_CODEC_RADIX,
	COSID_CODEC_FRIENDLY,
	COSID_CODEC_CUSTOM,
	COSID_CODEC_PARTS_RADIX,
	COSID_CODEC_PARTS_FRIENDLY,
	COSID_CODEC_GROUPED,
	COSID_CODEC_PREFIX,
	COSID_CODEC_SUFFIX,
	COSID_CODEC_DATE_PREFIX
} CosidCodecKind;

typedef enum CosidDateSource
{
	COSID_SOURCE_ID_TIME,
	COSID_SOURCE_NOW
} CosidDateSource;

/* One item.  Strings point into the parser's arena, NUL-terminated. */
typedef struct CosidCodecItem
{
	CosidCodecKind kind;
	CosidRadix	radix;			/* radix, parts-radix; grouped's value */
	bool		pad_start;		/* friendly, parts-friendly */
	const char *zone;			/* friendly, parts-friendly, date-prefix; NULL:
								 * UTC */
	bool		has_layout;		/* friendly (ad hoc): "layout" given */
	CosidPreset layout;			/* friendly (ad hoc) */
	const char *text;			/* prefix, suffix */
	const char *pattern;		/* date-prefix */
	int			pattern_len;	/* its formatted length */
	const char *delimiter;		/* date-prefix, grouped */
	bool		has_source;		/* date-prefix: "source" given */
	CosidDateSource source;		/* date-prefix */
	CosidGroup	group;			/* grouped (ad hoc): "group", default day */
	bool		value_is_radix; /* grouped: value item given (else decimal) */
	const char *encode_fn;		/* custom: "f(bigint)" */
	const char *decode_fn;		/* custom: "g(text)" */
} CosidCodecItem;

#define COSID_CODEC_MAX_ITEMS 16

typedef struct CosidCodec
{
	int			nitems;
	CosidCodecItem items[COSID_CODEC_MAX_ITEMS];
} CosidCodec;

/*
 * Parse a codec list from JSON text (an array of objects, each with one key
 * naming the item) and check each item on its own.  On failure returns
 * false with path set to the JSON path of the bad key ("codec[1].date-prefix
 * .source", using path_prefix for the list itself) and msg to what was
 * expected ("expected \"ID_TIME\" or \"NOW\"").  Strategy-dependent rules
 * (ID_TIME needs a time-based generator, parts-* needs cosid80, grouped
 * needs a periodic segment) are the caller's, with the items' indexes.
 */
extern bool cosid_codec_parse(const char *json, size_t len,
							  const char *path_prefix, CosidAlloc alloc,
							  void *alloc_ctx, CosidCodec *out,
							  char *path, size_t pathlen,
							  char *msg, size_t msglen);

/* The item's key as written in JSON ("date-prefix"); NULL for no kind. */
extern const char *cosid_codec_kind_name(CosidCodecKind k);

#endif							/* COSID_CORE_CODEC_H */

/*
 * datetext.c - date patterns, calendar checks and friendly text (no
 * PostgreSQL).  Friendly text is a fixed date pattern (yyyyMMddHHmmss, SSS
 * for millisecond layouts) with node and sequence in decimal; its time
 * fields are checked with the date patterns' ranges and messages.  The
 * canonical forms and the order of a decoder's checks are in radix.h.
 *
 * Owns: the date-pattern tokens, field names and ranges, month names, and
 * friendly text's form and messages.
 * Must not: convert times or resolve zones (the caller does, with
 * PostgreSQL), or know codec lists.
 */
#include "datetext.h"
#include "text.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ---------- date patterns ---------- */

typedef enum DateField
{
	DF_LITERAL = 0,
	DF_YEAR4,
	DF_YEAR2,
	DF_MONTH,
	DF_DAY,
	DF_HOUR,
	DF_MINUTE,
	DF_SECOND,
	DF_MILLIS
} DateField;

/* What a field fills in, for messages and the repeat check. */
static const char *const field_names[] = {
	[DF_LITERAL] = "literal",
	[DF_YEAR4] = "year",
	[DF_YEAR2] = "year",
	[DF_MONTH] = "month",
	[DF_DAY] = "day",
	[DF_HOUR] = "hour",
	[DF_MINUTE] = "minute",
	[DF_SECOND] = "second",
	[DF_MILLIS] = "millisecond",
};

#define PATTERN_FIELDS "expected yyyy, yy, MM, dd, HH, mm, ss or SSS"

/*
 * The token at pattern[i]: a field (its run length) or a literal byte.
 * False with msg for a letter or digit that is not a field.
 */
static bool
pattern_token(const char *pattern, size_t i, DateField *f, size_t *n,
			  char *msg, size_t msglen)
{
	unsigned char c = (unsigned char) pattern[i];
	size_t		run = 1;
	bool		letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');

	*f = DF_LITERAL;
	*n = 1;
	if (!letter && !cosid_is_digit((char) c))
		return true;
	while ((unsigned char) pattern[i + run] == c)
		run++;
	*n = run;
	switch (c)
	{
		case 'y':
			if (run == 4)
				*f = DF_YEAR4;
			else if (run == 2)
				*f = DF_YEAR2;
			break;
		case 'M':
			*f = run == 2 ? DF_MONTH : DF_LITERAL;
			break;
		case 'd':
			*f = run == 2 ? DF_DAY : DF_LITERAL;
			break;
		case 'H':
			*f = run == 2 ? DF_HOUR : DF_LITERAL;
			break;
		case 'm':
			*f = run == 2 ? DF_MINUTE : DF_LITERAL;
			break;
		case 's':
			*f = run == 2 ? DF_SECOND : DF_LITERAL;
			break;
		case 'S':
			*f = run == 3 ? DF_MILLIS : DF_LITERAL;
			break;
		default:
			break;
	}
	if (*f != DF_LITERAL)
		return true;
	if (msg != NULL && msglen > 0)
	{
		int			shown = run > 16 ? 16 : (int) run;

		if (letter)
			snprintf(msg, msglen, "\"%.*s%s\" is not a date field; " PATTERN_FIELDS,
					 shown, pattern + i, run > 16 ? "..." : "");
		else
			snprintf(msg, msglen,
					 "\"%.*s%s\" cannot be a literal: letters and digits are reserved for fields",
					 shown, pattern + i, run > 16 ? "..." : "");
	}
	return false;
}

int
cosid_date_pattern_check(const char *pattern, char *msg, size_t msglen)
{
	size_t		i = 0;
	unsigned	seen = 0;

	if (pattern == NULL || pattern[0] == '\0')
	{
		cosid_set_msg(msg, msglen, "the pattern is empty");
		return -1;
	}
	while (pattern[i] != '\0')
	{
		DateField	f;
		size_t		n;

		if (!pattern_token(pattern, i, &f, &n, msg, msglen))
			return -1;
		if (f != DF_LITERAL)
		{
			/* yyyy and yy both fill the year. */
			unsigned	bit = 1u << (f == DF_YEAR2 ? DF_YEAR4 : f);

			if (seen & bit)
			{
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen, "\"%.*s\" repeats the %s",
							 (int) n, pattern + i, field_names[f]);
				return -1;
			}
			seen |= bit;
		}
		i += n;
		if (i > (size_t) INT_MAX / 2)
		{
			cosid_set_msg(msg, msglen, "the pattern is too long");
			return -1;
		}
	}
	return (int) i;
}

/* The values a field may parse to (yy is 2000 + yy). */
static const struct
{
	int			lo;
	int			hi;
}			field_ranges[] = {
	[DF_LITERAL] = {0, 0},
	[DF_YEAR4] = {1, 9999},
	[DF_YEAR2] = {2000, 2099},
	[DF_MONTH] = {1, 12},
	[DF_DAY] = {1, 31},
	[DF_HOUR] = {0, 23},
	[DF_MINUTE] = {0, 59},
	[DF_SECOND] = {0, 59},
	[DF_MILLIS] = {0, 999},
};

/* The member of tm a field fills (never called for literals). */
static int *
tm_slot(CosidTm *tm, DateField f)
{
	switch (f)
	{
		case DF_YEAR4:
		case DF_YEAR2:
			return &tm->year;
		case DF_MONTH:
			return &tm->month;
		case DF_DAY:
			return &tm->day;
		case DF_HOUR:
			return &tm->hour;
		case DF_MINUTE:
			return &tm->minute;
		case DF_SECOND:
			return &tm->second;
		case DF_MILLIS:
		case DF_LITERAL:
			break;
	}
	return &tm->millis;
}

static int
tm_value(const CosidTm *tm, DateField f)
{
	CosidTm		copy = *tm;

	return *tm_slot(&copy, f);
}

/*
 * Each field is as wide as its letters (yyyy 4, yy 2, SSS 3, others 2), so
 * the text is as long as the pattern.  Values out of a field's digits wrap
 * (the caller passes a valid time).  -1 (and an empty buf) for a pattern
 * that fails cosid_date_pattern_check.
 */
int
cosid_date_format(const char *pattern, const CosidTm *tm, char *buf)
{
	size_t		i = 0;

	if (cosid_date_pattern_check(pattern, NULL, 0) < 0)
	{
		buf[0] = '\0';
		return -1;
	}
	while (pattern[i] != '\0')
	{
		DateField	f;
		size_t		n;

		(void) pattern_token(pattern, i, &f, &n, NULL, 0);
		if (f == DF_LITERAL)
			buf[i] = pattern[i];
		else
			cosid_put_fixed(buf + i, tm_value(tm, f), (int) n);
		i += n;
	}
	buf[i] = '\0';
	return (int) i;
}

CosidDecodeResult
cosid_date_parse(const char *pattern, const char *s, size_t len, CosidTm *tm,
				 char *msg, size_t msglen)
{
	int			plen = cosid_date_pattern_check(pattern, msg, msglen);
	CosidTm		t = *tm;
	size_t		i;

	if (plen < 0)
		return COSID_DECODE_SYNTAX;
	if (len != (size_t) plen)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "expected %d characters (%.40s), got %zu",
					 plen, pattern, len);
		return COSID_DECODE_SYNTAX;
	}

	/* Pass 1: the shape (digits where fields are, literals as written). */
	for (i = 0; i < len; i++)
	{
		DateField	f;
		size_t		n;
		char		d[8];
		char		p[8];

		(void) pattern_token(pattern, i, &f, &n, NULL, 0);
		if (f == DF_LITERAL)
		{
			if (s[i] != pattern[i])
			{
				cosid_describe_char((unsigned char) s[i], d);
				cosid_describe_char((unsigned char) pattern[i], p);
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen, "character %zu (%s) should be %s",
							 i + 1, d, p);
				return COSID_DECODE_SYNTAX;
			}
			continue;
		}
		for (size_t k = 0; k < n; k++)
		{
			if (!cosid_is_digit(s[i + k]))
			{
				cosid_describe_char((unsigned char) s[i + k], d);
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen,
							 "character %zu (%s) is not a digit of the %s",
							 i + k + 1, d, field_names[f]);
				return COSID_DECODE_SYNTAX;
			}
		}
		i += n - 1;
	}

	/* Pass 2: values and their ranges. */
	for (i = 0; i < len; i++)
	{
		DateField	f;
		size_t		n;
		int			v;

		(void) pattern_token(pattern, i, &f, &n, NULL, 0);
		if (f == DF_LITERAL)
			continue;
		v = (int) cosid_read_decimal(s + i, n);
		if (f == DF_YEAR2)
			v += 2000;
		if (v < field_ranges[f].lo || v > field_ranges[f].hi)
		{
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "%s %d is out of range (%d to %d)",
						 field_names[f], v, field_ranges[f].lo,
						 field_ranges[f].hi);
			return COSID_DECODE_SYNTAX;
		}
		*tm_slot(&t, f) = v;
		i += n - 1;
	}
	*tm = t;
	return COSID_DECODE_OK;
}

static const char *const month_names[] = {
	"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"
};

int
cosid_days_in_month(int year, int month)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	if (month < 1 || month > 12)
		return 0;
	return month == 2 && leap ? 29 : days[month - 1];
}

bool
cosid_date_valid(int year, int month, int day, char *msg, size_t msglen)
{
	int			ndays;

	if (year < 1 || year > 9999)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "year %d is out of range (1 to 9999)", year);
		return false;
	}
	if (month < 1 || month > 12)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "month %d is out of range (1 to 12)", month);
		return false;
	}
	ndays = cosid_days_in_month(year, month);
	if (day < 1 || day > 31)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "day %d is out of range (1 to 31)", day);
		return false;
	}
	if (day > ndays)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "day %d is out of range for %s %d (1 to %d)",
					 day, month_names[month - 1], year, ndays);
		return false;
	}
	return true;
}

int64_t
cosid_zone_offset_for_local(int64_t local, int64_t before_gmtoff,
							int64_t boundary, int64_t after_gmtoff)
{
	/* the instant local names on each side (offsets are under a day) */
	int64_t		before = local - before_gmtoff;
	int64_t		after = local - after_gmtoff;

	/*
	 * Both after the change: the later offset.  Both before it: the earlier
	 * one.  Otherwise the local time is repeated (before < boundary <=
	 * after) or skipped (after < boundary <= before), and java.time takes
	 * the offset before the change in both cases: the earlier of the two
	 * instants, or the local time moved forward by the gap (that is, read
	 * with the old offset).
	 */
	if (before >= boundary && after >= boundary)
		return after_gmtoff;
	return before_gmtoff;
}

/* ---------- friendly text ---------- */

int
cosid_decimal_width_for_bits(int bits)
{
	return cosid_radix_width_for_bits(10, bits);
}

static const char *
friendly_pattern(const CosidLayout *l)
{
	return l->unit_ms == 1000 ? "yyyyMMddHHmmss" : "yyyyMMddHHmmssSSS";
}

/* The fields of friendly_pattern, in order: yyyyMMddHHmmss then SSS. */
static const struct
{
	DateField	field;
	int			off;
	int			n;
}			friendly_fields[] = {
	{DF_YEAR4, 0, 4},
	{DF_MONTH, 4, 2},
	{DF_DAY, 6, 2},
	{DF_HOUR, 8, 2},
	{DF_MINUTE, 10, 2},
	{DF_SECOND, 12, 2},
	{DF_MILLIS, 14, 3},
};

int
cosid_friendly_format(const CosidLayout *l, bool pad_start, const CosidTm *tm,
					  int64_t node, int64_t seq, char *buf)
{
	int			n;
	int			nw = 1;
	int			sw = 1;

	if (pad_start && cosid_layout_bits_ok(l))
	{
		nw = cosid_decimal_width_for_bits(l->node_bits);
		sw = cosid_decimal_width_for_bits(l->seq_bits);
	}
	/* friendly_pattern(l), written directly: what cosid_date_format writes */
	cosid_put_fixed(buf, tm->year, 4);
	cosid_put_fixed(buf + 4, tm->month, 2);
	cosid_put_fixed(buf + 6, tm->day, 2);
	cosid_put_fixed(buf + 8, tm->hour, 2);
	cosid_put_fixed(buf + 10, tm->minute, 2);
	cosid_put_fixed(buf + 12, tm->second, 2);
	n = 14;
	if (l->unit_ms != 1000)
	{
		cosid_put_fixed(buf + 14, tm->millis, 3);
		n = 17;
	}
	buf[n++] = '-';
	n += cosid_put_decimal(buf + n, node, nw);
	buf[n++] = '-';
	n += cosid_put_decimal(buf + n, seq, sw);
	buf[n] = '\0';
	return n;
}

/* Length checks of a node or sequence part of friendly text. */
static bool
friendly_part_ok(const char *what, size_t n, int width, bool pad_start,
				 char *msg, size_t msglen)
{
	if (n == 0)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the %s is empty", what);
		return false;
	}
	if (pad_start && n != (size_t) width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "the %s has %zu digits; padded, it has exactly %d",
					 what, n, width);
		return false;
	}
	if (n > (size_t) width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the %s has %zu digits, more than %d",
					 what, n, width);
		return false;
	}
	return true;
}

CosidDecodeResult
cosid_friendly_parse(const CosidLayout *l, bool pad_start, const char *s,
					 size_t len, CosidTm *tm, int64_t *node, int64_t *seq,
					 char *msg, size_t msglen)
{
	const char *pattern;
	size_t		tlen;
	size_t		i;
	size_t		node_start;
	size_t		node_end;
	int			nw;
	int			sw;
	uint64_t	nv;
	uint64_t	sv;
	char		d[8];
	CosidTm		t;

	if (!cosid_layout_bits_ok(l) || l->node_bits > 62 || l->seq_bits > 62)
	{
		cosid_set_msg(msg, msglen, "invalid layout");
		return COSID_DECODE_SYNTAX;
	}
	pattern = friendly_pattern(l);
	tlen = strlen(pattern);
	nw = cosid_decimal_width_for_bits(l->node_bits);
	sw = cosid_decimal_width_for_bits(l->seq_bits);

	/* The time digits, then '-'. */
	for (i = 0; i < tlen && i < len; i++)
	{
		if (!cosid_is_digit(s[i]))
		{
			cosid_describe_char((unsigned char) s[i], d);
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen,
						 "character %zu (%s) is not a digit of the time; expected %s-node-sequence",
						 i + 1, d, pattern);
			return COSID_DECODE_SYNTAX;
		}
	}
	if (len <= tlen)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the text is too short; expected %s-node-sequence",
					 pattern);
		return COSID_DECODE_SYNTAX;
	}
	if (s[tlen] != '-')
	{
		cosid_describe_char((unsigned char) s[tlen], d);
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "character %zu (%s) should be \"-\"; expected %s-node-sequence",
					 tlen + 1, d, pattern);
		return COSID_DECODE_SYNTAX;
	}

	/* The node digits, then '-', then the sequence digits to the end. */
	node_start = tlen + 1;
	for (i = node_start; i < len && cosid_is_digit(s[i]); i++)
		;
	node_end = i;
	if (i == len)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "no \"-\" before the sequence; expected %s-node-sequence",
					 pattern);
		return COSID_DECODE_SYNTAX;
	}
	if (s[i] != '-')
	{
		cosid_describe_char((unsigned char) s[i], d);
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "character %zu (%s) is not a decimal digit",
					 i + 1, d);
		return COSID_DECODE_SYNTAX;
	}
	for (i = node_end + 1; i < len; i++)
	{
		if (!cosid_is_digit(s[i]))
		{
			cosid_describe_char((unsigned char) s[i], d);
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "character %zu (%s) is not a decimal digit",
						 i + 1, d);
			return COSID_DECODE_SYNTAX;
		}
	}
	if (!friendly_part_ok("node", node_end - node_start, nw, pad_start,
						  msg, msglen) ||
		!friendly_part_ok("sequence", len - node_end - 1, sw, pad_start,
						  msg, msglen))
		return COSID_DECODE_SYNTAX;

	/*
	 * The time fields' ranges, as cosid_date_parse checks them: the pattern
	 * is all fields, whose digits are checked above.
	 */
	memset(&t, 0, sizeof(t));
	for (int k = 0; k < (tlen == 17 ? 7 : 6); k++)
	{
		DateField	f = friendly_fields[k].field;
		int			v = (int) cosid_read_decimal(s + friendly_fields[k].off,
										   (size_t) friendly_fields[k].n);

		if (v < field_ranges[f].lo || v > field_ranges[f].hi)
		{
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "%s %d is out of range (%d to %d)",
						 field_names[f], v, field_ranges[f].lo,
						 field_ranges[f].hi);
			return COSID_DECODE_SYNTAX;
		}
		*tm_slot(&t, f) = v;
	}

	/* Widths are at most 19 digits here, so the values fit uint64. */
	nv = cosid_read_decimal(s + node_start, node_end - node_start);
	sv = cosid_read_decimal(s + node_end + 1, len - node_end - 1);
	if (nv > cosid_max_of_bits(l->node_bits))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "node %llu is out of range (at most %llu for %d bits)",
					 (unsigned long long) nv,
					 (unsigned long long) cosid_max_of_bits(l->node_bits),
					 l->node_bits);
		return COSID_DECODE_RANGE;
	}
	if (sv > cosid_max_of_bits(l->seq_bits))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "sequence %llu is out of range (at most %llu for %d bits)",
					 (unsigned long long) sv,
					 (unsigned long long) cosid_max_of_bits(l->seq_bits),
					 l->seq_bits);
		return COSID_DECODE_RANGE;
	}
	*tm = t;
	*node = (int64_t) nv;
	*seq = (int64_t) sv;
	return COSID_DECODE_OK;
}

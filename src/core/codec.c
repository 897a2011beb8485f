/*
 * codec.c - CosId codecs without PostgreSQL: radix, date patterns, friendly
 * and parts text, periodic segment numbers, and the codec-list parser.
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
 */
#include "codec.h"
#include "json.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char radix_alphabet[] =
"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* ---------- small helpers ---------- */

static void
set_msg(char *msg, size_t msglen, const char *text)
{
	if (msg != NULL && msglen > 0)
		snprintf(msg, msglen, "%s", text);
}

/* The value of an alphabet character (0..61), or -1. */
static inline int
digit_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 36;
	return -1;
}

/* A byte for a message: "x" when printable ASCII, else 0xNN. */
static void
describe_char(unsigned char c, char out[8])
{
	static const char hex[] = "0123456789ABCDEF";

	if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\')
	{
		out[0] = '"';
		out[1] = (char) c;
		out[2] = '"';
		out[3] = '\0';
	}
	else
	{
		out[0] = '0';
		out[1] = 'x';
		out[2] = hex[c >> 4];
		out[3] = hex[c & 15];
		out[4] = '\0';
	}
}

/* "character N (x) is not a base-R digit", with a hint for lower case. */
static void
bad_digit_msg(char *msg, size_t msglen, size_t pos, unsigned char c, int radix)
{
	char		d[8];

	if (msg == NULL || msglen == 0)
		return;
	describe_char(c, d);
	if (radix <= 36 && c >= 'a' && c <= 'z')
		snprintf(msg, msglen,
				 "character %zu (%s) is not a base-%d digit (upper case only)",
				 pos + 1, d, radix);
	else
		snprintf(msg, msglen, "character %zu (%s) is not a base-%d digit",
				 pos + 1, d, radix);
}

static inline uint64_t
max_of_bits(int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/*
 * Write v in decimal, zero-padded to at least minwidth digits (negative
 * values get a '-' first).  Returns the length; at most 20 bytes plus the
 * padding, no NUL.
 */
static int
put_decimal(char *buf, int64_t v, int minwidth)
{
	char		tmp[24];
	int			n = 0;
	int			len = 0;
	uint64_t	u;

	if (v < 0)
	{
		buf[len++] = '-';
		u = (uint64_t) 0 - (uint64_t) v;
	}
	else
		u = (uint64_t) v;
	do
	{
		tmp[n++] = (char) ('0' + u % 10);
		u /= 10;
	} while (u > 0);
	while (n < minwidth)
	{
		buf[len++] = '0';
		minwidth--;
	}
	while (n > 0)
		buf[len++] = tmp[--n];
	return len;
}

/* Exactly `width` digits: v modulo 10^width (negative values wrap). */
static void
put_fixed(char *buf, int v, int width)
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
static uint64_t
read_decimal(const char *s, size_t n)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t) (s[i] - '0');
	return v;
}

static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---------- radix text ---------- */

static bool
radix_valid(const CosidRadix *r)
{
	return r != NULL && r->radix >= COSID_RADIX_MIN &&
		r->radix <= COSID_RADIX_MAX && r->width >= 1 && r->width <= 64;
}

int
cosid_radix_width_for_bits(int radix, int bits)
{
	uint64_t	v;
	int			n = 1;

	if (radix < COSID_RADIX_MIN || radix > COSID_RADIX_MAX || bits < 0 ||
		bits > 64)
		return -1;
	v = max_of_bits(bits);
	while (v >= (uint64_t) radix)
	{
		v /= (uint64_t) radix;
		n++;
	}
	return n;
}

int
cosid_radix_default_width(int radix)
{
	return cosid_radix_width_for_bits(radix, 63);
}

/* Write u in the radix, zero-padded to minwidth; returns the length. */
static int
put_radix(char *buf, uint64_t u, int radix, int minwidth)
{
	char		tmp[64];
	int			n = 0;
	int			len = 0;

	do
	{
		tmp[n++] = radix_alphabet[u % (uint64_t) radix];
		u /= (uint64_t) radix;
	} while (u > 0);
	while (minwidth > n)
	{
		buf[len++] = '0';
		minwidth--;
	}
	while (n > 0)
		buf[len++] = tmp[--n];
	return len;
}

int
cosid_radix_encode(const CosidRadix *r, int64_t v, char *buf)
{
	uint64_t	u;
	int			n = 1;
	int			len;

	if (!radix_valid(r) || v < 0)
		return -1;
	for (u = (uint64_t) v; u >= (uint64_t) r->radix; u /= (uint64_t) r->radix)
		n++;
	if (n > r->width)
		return -1;
	len = put_radix(buf, (uint64_t) v, r->radix, r->pad_start ? r->width : 1);
	buf[len] = '\0';
	return len;
}

/*
 * Digits s[0..n) of a radix, already checked, as a number; false when it
 * is over max (the scan is exact: no intermediate overflow).
 */
static bool
radix_value(const char *s, size_t n, int radix, uint64_t max, uint64_t *out)
{
	uint64_t	acc = 0;

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	d = (uint64_t) digit_value((unsigned char) s[i]);

		if (d > max || acc > (max - d) / (uint64_t) radix)
			return false;
		acc = acc * (uint64_t) radix + d;
	}
	*out = acc;
	return true;
}

/* Index of the first byte that is not a digit of the radix, or n. */
static size_t
first_bad_digit(const char *s, size_t n, int radix)
{
	for (size_t i = 0; i < n; i++)
	{
		int			d = digit_value((unsigned char) s[i]);

		if (d < 0 || d >= radix)
			return i;
	}
	return n;
}

CosidDecodeResult
cosid_radix_decode(const CosidRadix *r, const char *s, size_t len,
				   uint64_t max, int64_t *v, char *msg, size_t msglen)
{
	size_t		bad;
	uint64_t	u;

	if (!radix_valid(r))
	{
		set_msg(msg, msglen, "invalid radix settings");
		return COSID_DECODE_SYNTAX;
	}
	if (len == 0)
	{
		set_msg(msg, msglen, "the text is empty");
		return COSID_DECODE_SYNTAX;
	}
	bad = first_bad_digit(s, len, r->radix);
	if (bad < len)
	{
		bad_digit_msg(msg, msglen, bad, (unsigned char) s[bad], r->radix);
		return COSID_DECODE_SYNTAX;
	}
	if (r->pad_start && len != (size_t) r->width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "expected exactly %d characters (padded), got %zu",
					 r->width, len);
		return COSID_DECODE_SYNTAX;
	}
	if (len > (size_t) r->width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "expected at most %d characters, got %zu",
					 r->width, len);
		return COSID_DECODE_SYNTAX;
	}
	if (max > (uint64_t) INT64_MAX)
		max = (uint64_t) INT64_MAX;
	if (!radix_value(s, len, r->radix, max, &u))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the value is out of range (at most %llu)",
					 (unsigned long long) max);
		return COSID_DECODE_RANGE;
	}
	*v = (int64_t) u;
	return COSID_DECODE_OK;
}

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
	if (!letter && !is_digit((char) c))
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
		set_msg(msg, msglen, "the pattern is empty");
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
			set_msg(msg, msglen, "the pattern is too long");
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
			put_fixed(buf + i, tm_value(tm, f), (int) n);
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
				describe_char((unsigned char) s[i], d);
				describe_char((unsigned char) pattern[i], p);
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen, "character %zu (%s) should be %s",
							 i + 1, d, p);
				return COSID_DECODE_SYNTAX;
			}
			continue;
		}
		for (size_t k = 0; k < n; k++)
		{
			if (!is_digit(s[i + k]))
			{
				describe_char((unsigned char) s[i + k], d);
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
		v = (int) read_decimal(s + i, n);
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

/* A layout's field widths are usable (bit counts 0..63). */
static bool
layout_bits_ok(const CosidLayout *l)
{
	return l != NULL && l->time_bits >= 0 && l->time_bits <= 63 &&
		l->node_bits >= 0 && l->node_bits <= 63 &&
		l->seq_bits >= 0 && l->seq_bits <= 63;
}

int
cosid_friendly_format(const CosidLayout *l, bool pad_start, const CosidTm *tm,
					  int64_t node, int64_t seq, char *buf)
{
	int			n;
	int			nw = 1;
	int			sw = 1;

	if (pad_start && layout_bits_ok(l))
	{
		nw = cosid_decimal_width_for_bits(l->node_bits);
		sw = cosid_decimal_width_for_bits(l->seq_bits);
	}
	n = cosid_date_format(friendly_pattern(l), tm, buf);
	buf[n++] = '-';
	n += put_decimal(buf + n, node, nw);
	buf[n++] = '-';
	n += put_decimal(buf + n, seq, sw);
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

	if (!layout_bits_ok(l) || l->node_bits > 62 || l->seq_bits > 62)
	{
		set_msg(msg, msglen, "invalid layout");
		return COSID_DECODE_SYNTAX;
	}
	pattern = friendly_pattern(l);
	tlen = strlen(pattern);
	nw = cosid_decimal_width_for_bits(l->node_bits);
	sw = cosid_decimal_width_for_bits(l->seq_bits);

	/* The time digits, then '-'. */
	for (i = 0; i < tlen && i < len; i++)
	{
		if (!is_digit(s[i]))
		{
			describe_char((unsigned char) s[i], d);
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
		describe_char((unsigned char) s[tlen], d);
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "character %zu (%s) should be \"-\"; expected %s-node-sequence",
					 tlen + 1, d, pattern);
		return COSID_DECODE_SYNTAX;
	}

	/* The node digits, then '-', then the sequence digits to the end. */
	node_start = tlen + 1;
	for (i = node_start; i < len && is_digit(s[i]); i++)
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
		describe_char((unsigned char) s[i], d);
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "character %zu (%s) is not a decimal digit",
					 i + 1, d);
		return COSID_DECODE_SYNTAX;
	}
	for (i = node_end + 1; i < len; i++)
	{
		if (!is_digit(s[i]))
		{
			describe_char((unsigned char) s[i], d);
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

	/* The time fields' ranges. */
	memset(&t, 0, sizeof(t));
	if (cosid_date_parse(pattern, s, tlen, &t, msg, msglen) != COSID_DECODE_OK)
		return COSID_DECODE_SYNTAX;

	/* Widths are at most 19 digits here, so the values fit uint64. */
	nv = read_decimal(s + node_start, node_end - node_start);
	sv = read_decimal(s + node_end + 1, len - node_end - 1);
	if (nv > max_of_bits(l->node_bits))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "node %llu is out of range (at most %llu for %d bits)",
					 (unsigned long long) nv,
					 (unsigned long long) max_of_bits(l->node_bits),
					 l->node_bits);
		return COSID_DECODE_RANGE;
	}
	if (sv > max_of_bits(l->seq_bits))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "sequence %llu is out of range (at most %llu for %d bits)",
					 (unsigned long long) sv,
					 (unsigned long long) max_of_bits(l->seq_bits),
					 l->seq_bits);
		return COSID_DECODE_RANGE;
	}
	*tm = t;
	*node = (int64_t) nv;
	*seq = (int64_t) sv;
	return COSID_DECODE_OK;
}

/* ---------- parts-radix text ---------- */

static bool
parts_widths(const CosidLayout *l, int radix, int w[3])
{
	if (!layout_bits_ok(l) || radix < COSID_RADIX_MIN || radix > COSID_RADIX_MAX)
		return false;
	w[0] = cosid_radix_width_for_bits(radix, l->time_bits);
	w[1] = cosid_radix_width_for_bits(radix, l->node_bits);
	w[2] = cosid_radix_width_for_bits(radix, l->seq_bits);
	return true;
}

int
cosid_parts_radix_length(const CosidLayout *l, int radix)
{
	int			w[3];

	if (!parts_widths(l, radix, w))
		return -1;
	return w[0] + w[1] + w[2];
}

/*
 * Returns the length, or -1 (buf untouched) when a part is negative or
 * over its bits, or the radix or layout is invalid.
 */
int
cosid_parts_radix_encode(const CosidLayout *l, int radix, int64_t time,
						 int64_t node, int64_t seq, char *buf)
{
	int			w[3];
	int			n = 0;

	if (!parts_widths(l, radix, w))
		return -1;
	if (time < 0 || (uint64_t) time > max_of_bits(l->time_bits) ||
		node < 0 || (uint64_t) node > max_of_bits(l->node_bits) ||
		seq < 0 || (uint64_t) seq > max_of_bits(l->seq_bits))
		return -1;
	n += put_radix(buf + n, (uint64_t) time, radix, w[0]);
	n += put_radix(buf + n, (uint64_t) node, radix, w[1]);
	n += put_radix(buf + n, (uint64_t) seq, radix, w[2]);
	buf[n] = '\0';
	return n;
}

CosidDecodeResult
cosid_parts_radix_decode(const CosidLayout *l, int radix, const char *s,
						 size_t len, int64_t *time, int64_t *node,
						 int64_t *seq, char *msg, size_t msglen)
{
	static const char *const part_names[3] = {"time", "node", "sequence"};
	int			w[3];
	int			bits[3];
	uint64_t	v[3];
	size_t		bad;
	size_t		off = 0;

	if (!parts_widths(l, radix, w))
	{
		set_msg(msg, msglen, "invalid layout or radix");
		return COSID_DECODE_SYNTAX;
	}
	bad = first_bad_digit(s, len, radix);
	if (bad < len)
	{
		bad_digit_msg(msg, msglen, bad, (unsigned char) s[bad], radix);
		return COSID_DECODE_SYNTAX;
	}
	if (len != (size_t) (w[0] + w[1] + w[2]))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "expected %d characters (%d time, %d node, %d sequence), got %zu",
					 w[0] + w[1] + w[2], w[0], w[1], w[2], len);
		return COSID_DECODE_SYNTAX;
	}
	bits[0] = l->time_bits;
	bits[1] = l->node_bits;
	bits[2] = l->seq_bits;
	for (int k = 0; k < 3; k++)
	{
		if (!radix_value(s + off, (size_t) w[k], radix, max_of_bits(bits[k]),
						 &v[k]))
		{
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "the %s part is out of range (more than %d bits)",
						 part_names[k], bits[k]);
			return COSID_DECODE_RANGE;
		}
		off += (size_t) w[k];
	}
	*time = (int64_t) v[0];
	*node = (int64_t) v[1];
	*seq = (int64_t) v[2];
	return COSID_DECODE_OK;
}

/* ---------- periodic segment numbers ---------- */

int64_t
cosid_group_scale(CosidGroup g)
{
	switch (g)
	{
		case COSID_GROUP_DAY:
			return INT64_C(10000000000);
		case COSID_GROUP_MONTH:
			return INT64_C(1000000000000);
		case COSID_GROUP_YEAR:
			return INT64_C(100000000000000);
		case COSID_GROUP_NONE:
			break;
	}
	return 0;
}

int64_t
cosid_group_period(CosidGroup g, const CosidTm *tm)
{
	switch (g)
	{
		case COSID_GROUP_DAY:
			return (int64_t) tm->year * 10000 + tm->month * 100 + tm->day;
		case COSID_GROUP_MONTH:
			return (int64_t) tm->year * 100 + tm->month;
		case COSID_GROUP_YEAR:
			return tm->year;
		case COSID_GROUP_NONE:
			break;
	}
	return 0;
}

bool
cosid_group_split(CosidGroup g, int64_t id, int64_t *period, int64_t *value)
{
	int64_t		scale = cosid_group_scale(g);
	int64_t		p;
	int64_t		y;
	int64_t		m = 1;
	int64_t		d = 1;

	if (scale == 0 || id < 0)
		return false;
	p = id / scale;
	switch (g)
	{
		case COSID_GROUP_DAY:
			y = p / 10000;
			m = p / 100 % 100;
			d = p % 100;
			break;
		case COSID_GROUP_MONTH:
			y = p / 100;
			m = p % 100;
			break;
		default:
			y = p;
			break;
	}
	if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31)
		return false;
	*period = p;
	*value = id % scale;
	return true;
}

const char *
cosid_group_pattern(CosidGroup g)
{
	switch (g)
	{
		case COSID_GROUP_DAY:
			return "yyyyMMdd";
		case COSID_GROUP_MONTH:
			return "yyyyMM";
		case COSID_GROUP_YEAR:
			return "yyyy";
		case COSID_GROUP_NONE:
			break;
	}
	return NULL;
}

/* ---------- codec lists ---------- */

static const char *const kind_names[] = {
	[COSID_CODEC_RADIX] = "radix",
	[COSID_CODEC_FRIENDLY] = "friendly",
	[COSID_CODEC_CUSTOM] = "custom",
	[COSID_CODEC_PARTS_RADIX] = "parts-radix",
	[COSID_CODEC_PARTS_FRIENDLY] = "parts-friendly",
	[COSID_CODEC_GROUPED] = "grouped",
	[COSID_CODEC_PREFIX] = "prefix",
	[COSID_CODEC_SUFFIX] = "suffix",
	[COSID_CODEC_DATE_PREFIX] = "date-prefix",
};

#define KIND_COUNT ((int) (sizeof(kind_names) / sizeof(kind_names[0])))
#define KIND_LIST "radix, friendly, custom, parts-radix, parts-friendly, " \
	"grouped, prefix, suffix or date-prefix"

#define MAX_AFFIX_BYTES		64
#define MAX_ZONE_BYTES		64
#define MAX_PATTERN_BYTES	32
#define MAX_FUNCTION_BYTES	200
#define MAX_SEGMENTS		8

const char *
cosid_codec_kind_name(CosidCodecKind k)
{
	return (unsigned) k < (unsigned) KIND_COUNT ? kind_names[k] : NULL;
}

/* Where the walk stands, for error paths: prefix[index].seg.seg... */
typedef struct CodecWalk
{
	const char *prefix;
	int			index;			/* -1: the list itself */
	int			nseg;
	const char *seg[MAX_SEGMENTS];
	CosidAlloc	alloc;
	void	   *alloc_ctx;
	char	   *path;
	size_t		pathlen;
	char	   *msg;
	size_t		msglen;
} CodecWalk;

static void
walk_push(CodecWalk *w, const char *seg)
{
	if (w->nseg < MAX_SEGMENTS)
		w->seg[w->nseg] = seg;
	w->nseg++;
}

static void
walk_pop(CodecWalk *w)
{
	w->nseg--;
}

/* Write the current path, and msg when text is not NULL; returns false. */
static bool
walk_fail(CodecWalk *w, const char *text)
{
	size_t		pos = 0;
	char		num[24];

	if (w->path != NULL && w->pathlen > 0)
		w->path[0] = '\0';
	if (w->prefix != NULL)
		cosid_buf_append(w->path, w->pathlen, &pos, w->prefix,
						 strlen(w->prefix));
	if (w->index >= 0)
	{
		int			n = snprintf(num, sizeof(num), "[%d]", w->index);

		cosid_buf_append(w->path, w->pathlen, &pos, num, (size_t) n);
	}
	for (int i = 0; i < w->nseg && i < MAX_SEGMENTS; i++)
	{
		cosid_buf_append(w->path, w->pathlen, &pos, ".", 1);
		cosid_buf_append(w->path, w->pathlen, &pos, w->seg[i],
						 strlen(w->seg[i]));
	}
	if (text != NULL)
		set_msg(w->msg, w->msglen, text);
	return false;
}

/*
 * A default string, copied into the caller's arena like every string the
 * parser returns.  NULL when that fails, with "out of memory" at the list's
 * path, as the JSON parser reports it.
 */
static const char *
walk_strdup(CodecWalk *w, const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *copy = w->alloc(w->alloc_ctx, n);

	if (copy == NULL)
	{
		CodecWalk	top = *w;

		top.index = -1;
		top.nseg = 0;
		walk_fail(&top, "out of memory");
		return NULL;
	}
	memcpy(copy, s, n);
	return copy;
}

/* Fail at the key `seg` below the current path. */
static bool
walk_fail_at(CodecWalk *w, const char *seg, const char *text)
{
	walk_push(w, seg);
	walk_fail(w, text);
	walk_pop(w);
	return false;
}

static bool
get_int(CodecWalk *w, const CosidJsonValue *v, int lo, int hi, int *out)
{
	if (v->type == COSID_JSON_NUMBER && v->int_fits &&
		v->integer >= lo && v->integer <= hi)
	{
		*out = (int) v->integer;
		return true;
	}
	if (w->msg != NULL && w->msglen > 0)
	{
		if (v->type == COSID_JSON_NUMBER && !v->is_integer)
			snprintf(w->msg, w->msglen,
					 "expected an integer from %d to %d, not a fraction or exponent",
					 lo, hi);
		else
			snprintf(w->msg, w->msglen, "expected an integer from %d to %d",
					 lo, hi);
	}
	return walk_fail(w, NULL);
}

static bool
get_bool(CodecWalk *w, const CosidJsonValue *v, bool *out)
{
	if (v->type == COSID_JSON_TRUE || v->type == COSID_JSON_FALSE)
	{
		*out = v->type == COSID_JSON_TRUE;
		return true;
	}
	return walk_fail(w, "expected true or false");
}

/* A string of min..max bytes (JSON strings never hold a NUL). */
static bool
get_string(CodecWalk *w, const CosidJsonValue *v, size_t min, size_t max,
		   const char **out)
{
	if (v->type == COSID_JSON_STRING && v->str_len >= min &&
		v->str_len <= max && strlen(v->str) == v->str_len)
	{
		*out = v->str;
		return true;
	}
	if (w->msg != NULL && w->msglen > 0)
	{
		if (min > 0)
			snprintf(w->msg, w->msglen,
					 "expected a non-empty string of at most %zu bytes", max);
		else
			snprintf(w->msg, w->msglen,
					 "expected a string of at most %zu bytes", max);
	}
	return walk_fail(w, NULL);
}

static bool
get_zone(CodecWalk *w, const CosidJsonValue *v, const char **out)
{
	if (v->type == COSID_JSON_STRING && v->str_len >= 1 &&
		v->str_len <= MAX_ZONE_BYTES)
	{
		bool		ok = true;

		for (size_t i = 0; i < v->str_len; i++)
			if ((unsigned char) v->str[i] <= 0x20 ||
				(unsigned char) v->str[i] >= 0x7F)
				ok = false;
		if (ok)
		{
			*out = v->str;
			return true;
		}
	}
	return walk_fail(w, "expected a time zone name: 1 to 64 printable ASCII characters without spaces");
}

/* ASCII case-insensitive equality with a lower-case word. */
static bool
equals_word(const CosidJsonValue *v, const char *word)
{
	size_t		n = strlen(word);

	if (v->type != COSID_JSON_STRING || v->str_len != n)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		char		c = v->str[i];

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if (c != word[i])
			return false;
	}
	return true;
}

/* Index of key in a NULL-terminated list, or -1. */
static int
key_index(const char *key, const char *const *keys)
{
	for (int i = 0; keys[i] != NULL; i++)
		if (strcmp(key, keys[i]) == 0)
			return i;
	return -1;
}

static bool
unknown_key(CodecWalk *w, const CosidJsonValue *m, const char *expected)
{
	walk_push(w, m->key);
	walk_fail(w, NULL);
	walk_pop(w);
	if (w->msg != NULL && w->msglen > 0)
		snprintf(w->msg, w->msglen, "unknown key; expected %s", expected);
	return false;
}

#define RADIX_RANGE_MSG "expected an integer from 2 to 62"

/*
 * A radix spec: a number (the radix) or an object with "radix" and, unless
 * parts, "width" and "pad-start".  The walk stands at the spec's key.
 */
static bool
parse_radix_spec(CodecWalk *w, const CosidJsonValue *v, bool parts,
				 CosidRadix *r)
{
	static const char *const keys[] = {"radix", "width", "pad-start", NULL};
	bool		has_radix = false;
	bool		has_width = false;

	r->pad_start = parts;
	if (v->type == COSID_JSON_NUMBER)
	{
		if (!get_int(w, v, COSID_RADIX_MIN, COSID_RADIX_MAX, &r->radix))
			return false;
		r->width = cosid_radix_default_width(r->radix);
		return true;
	}
	if (v->type != COSID_JSON_OBJECT)
		return walk_fail(w, RADIX_RANGE_MSG " or an object");

	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0 || (parts && k > 0))
			return unknown_key(w, m, parts ? "\"radix\"" :
							   "\"radix\", \"width\" or \"pad-start\"");
		walk_push(w, m->key);
		if (k == 0)
		{
			ok = get_int(w, m, COSID_RADIX_MIN, COSID_RADIX_MAX, &r->radix);
			has_radix = true;
		}
		else if (k == 1)
		{
			ok = get_int(w, m, 1, 64, &r->width);
			has_width = true;
		}
		else
			ok = get_bool(w, m, &r->pad_start);
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (!has_radix)
		return walk_fail_at(w, "radix", "missing; " RADIX_RANGE_MSG);
	if (!has_width)
		r->width = cosid_radix_default_width(r->radix);
	return true;
}

static bool
expect_object(CodecWalk *w, const CosidJsonValue *v)
{
	if (v->type == COSID_JSON_OBJECT)
		return true;
	return walk_fail(w, "expected an object");
}

/* friendly and parts-friendly: zone, pad-start and (friendly) layout. */
static bool
parse_friendly(CodecWalk *w, const CosidJsonValue *v, bool parts,
			   CosidCodecItem *it)
{
	static const char *const keys[] = {"zone", "pad-start", "layout", NULL};

	it->pad_start = true;
	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0 || (parts && k == 2))
			return unknown_key(w, m, parts ? "\"zone\" or \"pad-start\"" :
							   "\"zone\", \"pad-start\" or \"layout\"");
		walk_push(w, m->key);
		if (k == 0)
			ok = get_zone(w, m, &it->zone);
		else if (k == 1)
			ok = get_bool(w, m, &it->pad_start);
		else if (m->type != COSID_JSON_STRING ||
				 !cosid_preset_find(m->str, &it->layout))
		{
			char		list[160];
			size_t		pos = 0;

			list[0] = '\0';
			for (int p = 0; p < COSID_PRESET_COUNT; p++)
			{
				const char *name = cosid_preset_name((CosidPreset) p);

				if (p > 0)
					cosid_buf_append(list, sizeof(list), &pos,
									 p == COSID_PRESET_COUNT - 1 ? " or " : ", ",
									 p == COSID_PRESET_COUNT - 1 ? 4 : 2);
				cosid_buf_append(list, sizeof(list), &pos, name, strlen(name));
			}
			walk_fail(w, NULL);
			if (w->msg != NULL && w->msglen > 0)
				snprintf(w->msg, w->msglen, "expected a layout: %s", list);
			ok = false;
		}
		else
			it->has_layout = true;
		walk_pop(w);
		if (!ok)
			return false;
	}
	return true;
}

static bool
parse_custom(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	static const char *const keys[] = {"encode", "decode", NULL};

	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok;

		if (k < 0)
			return unknown_key(w, m, "\"encode\" and \"decode\"");
		walk_push(w, m->key);
		ok = get_string(w, m, 1, MAX_FUNCTION_BYTES,
						k == 0 ? &it->encode_fn : &it->decode_fn);
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (it->encode_fn == NULL)
		return walk_fail_at(w, "encode",
							"missing; expected a function such as \"f(bigint)\"");
	if (it->decode_fn == NULL)
		return walk_fail_at(w, "decode",
							"missing; expected a function such as \"g(text)\"");
	return true;
}

/* grouped's "value": {"radix": spec}. */
static bool
parse_grouped_value(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	bool		ok;

	if (v->type != COSID_JSON_OBJECT)
		return walk_fail(w, "expected an object {\"radix\": ...}");
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
		if (strcmp(m->key, "radix") != 0)
			return unknown_key(w, m, "\"radix\"");
	if (v->count != 1)
		return walk_fail(w, "expected an object {\"radix\": ...}");
	walk_push(w, "radix");
	ok = parse_radix_spec(w, v->first, false, &it->radix);
	walk_pop(w);
	it->value_is_radix = ok;
	return ok;
}

static bool
parse_grouped(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	static const char *const keys[] = {"delimiter", "value", "group", NULL};

	it->group = COSID_GROUP_DAY;
	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0)
			return unknown_key(w, m, "\"delimiter\", \"value\" or \"group\"");
		walk_push(w, m->key);
		if (k == 0)
			ok = get_string(w, m, 0, MAX_AFFIX_BYTES, &it->delimiter);
		else if (k == 1)
			ok = parse_grouped_value(w, m, it);
		else if (equals_word(m, "day"))
			it->group = COSID_GROUP_DAY;
		else if (equals_word(m, "month"))
			it->group = COSID_GROUP_MONTH;
		else if (equals_word(m, "year"))
			it->group = COSID_GROUP_YEAR;
		else
			ok = walk_fail(w, "expected \"day\", \"month\" or \"year\"");
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (it->delimiter == NULL && (it->delimiter = walk_strdup(w, "-")) == NULL)
		return false;
	return true;
}

static bool
parse_date_prefix(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	static const char *const keys[] = {"pattern", "delimiter", "source",
	"zone", NULL};

	it->pattern_len = 8;
	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0)
			return unknown_key(w, m,
							   "\"pattern\", \"delimiter\", \"source\" or \"zone\"");
		walk_push(w, m->key);
		if (k == 0)
		{
			if (m->type != COSID_JSON_STRING || m->str_len > MAX_PATTERN_BYTES)
				ok = walk_fail(w, "expected a date pattern of at most 32 bytes");
			else
			{
				it->pattern_len = cosid_date_pattern_check(m->str, w->msg,
														   w->msglen);
				if (it->pattern_len < 0)
					ok = walk_fail(w, NULL);
				else
					it->pattern = m->str;
			}
		}
		else if (k == 1)
			ok = get_string(w, m, 0, MAX_AFFIX_BYTES, &it->delimiter);
		else if (k == 2)
		{
			it->has_source = true;
			if (equals_word(m, "id_time"))
				it->source = COSID_SOURCE_ID_TIME;
			else if (equals_word(m, "now"))
				it->source = COSID_SOURCE_NOW;
			else
				ok = walk_fail(w, "expected \"ID_TIME\" or \"NOW\"");
		}
		else
			ok = get_zone(w, m, &it->zone);
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (it->pattern == NULL &&
		(it->pattern = walk_strdup(w, "yyyyMMdd")) == NULL)
		return false;
	if (it->delimiter == NULL && (it->delimiter = walk_strdup(w, "")) == NULL)
		return false;
	return true;
}

static bool
parse_item(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	const CosidJsonValue *m;
	int			k = -1;
	bool		ok;

	if (v->type != COSID_JSON_OBJECT || v->count != 1)
		return walk_fail(w, "expected an object with one key naming the item: "
						 KIND_LIST);
	m = v->first;
	for (int i = 0; i < KIND_COUNT; i++)
		if (strcmp(m->key, kind_names[i]) == 0)
			k = i;
	if (k < 0)
		return walk_fail_at(w, m->key, "unknown codec item; expected " KIND_LIST);

	it->kind = (CosidCodecKind) k;
	walk_push(w, m->key);
	if (k <= COSID_CODEC_GROUPED && w->index > 0)
		ok = walk_fail(w, "must be the first item: radix, friendly, custom, "
					   "parts-radix, parts-friendly and grouped turn the number into text");
	else
	{
		switch (it->kind)
		{
			case COSID_CODEC_RADIX:
				ok = parse_radix_spec(w, m, false, &it->radix);
				break;
			case COSID_CODEC_PARTS_RADIX:
				ok = parse_radix_spec(w, m, true, &it->radix);
				break;
			case COSID_CODEC_FRIENDLY:
				ok = parse_friendly(w, m, false, it);
				break;
			case COSID_CODEC_PARTS_FRIENDLY:
				ok = parse_friendly(w, m, true, it);
				break;
			case COSID_CODEC_CUSTOM:
				ok = parse_custom(w, m, it);
				break;
			case COSID_CODEC_GROUPED:
				ok = parse_grouped(w, m, it);
				break;
			case COSID_CODEC_PREFIX:
			case COSID_CODEC_SUFFIX:
				ok = get_string(w, m, 0, MAX_AFFIX_BYTES, &it->text);
				break;
			case COSID_CODEC_DATE_PREFIX:
				ok = parse_date_prefix(w, m, it);
				break;
			default:
				ok = false;
				break;
		}
	}
	walk_pop(w);
	return ok;
}

bool
cosid_codec_parse(const char *json, size_t len, const char *path_prefix,
				  CosidAlloc alloc, void *alloc_ctx, CosidCodec *out,
				  char *path, size_t pathlen, char *msg, size_t msglen)
{
	CosidJsonValue *root;
	CodecWalk	w;
	int			i = 0;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	w.prefix = path_prefix;
	w.index = -1;
	w.alloc = alloc;
	w.alloc_ctx = alloc_ctx;
	w.path = path;
	w.pathlen = pathlen;
	w.msg = msg;
	w.msglen = msglen;
	if (path != NULL && pathlen > 0)
		path[0] = '\0';
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';

	root = cosid_json_parse(json, len, alloc, alloc_ctx, path_prefix,
							path, pathlen, msg, msglen);
	if (root == NULL)
		return false;
	if (root->type != COSID_JSON_ARRAY)
		return walk_fail(&w, "expected an array of codec items");
	if (root->count > COSID_CODEC_MAX_ITEMS)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "expected at most %d items",
					 COSID_CODEC_MAX_ITEMS);
		return walk_fail(&w, NULL);
	}

	for (const CosidJsonValue *e = root->first; e != NULL; e = e->next, i++)
	{
		w.index = i;
		w.nseg = 0;
		if (!parse_item(&w, e, &out->items[i]))
			return false;
	}
	out->nitems = root->count;
	return true;
}

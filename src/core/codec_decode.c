/*
 * codec_decode.c - decoding text with a prepared codec list (no
 * PostgreSQL), stage by stage: the wrappers are taken off, outermost (last)
 * first; the converter (item 0, or decimal) reads what is left; a date
 * prefix of the id's time must then show that time.
 *
 * Owns: what text decodes (decimal digits only, no sign; a grouped period
 * that is a date) and the messages of text that does not.
 * Must not: allocate, or read past len.
 */
#include "codec_run.h"

#include <stdio.h>
#include <string.h>

/* What the wrappers leave and what they ask to check afterwards. */
typedef struct DecodeText
{
	const char *s;				/* the text left */
	size_t		len;
	bool		check_date[COSID_CODEC_MAX_ITEMS];
	CosidTm		date_tm[COSID_CODEC_MAX_ITEMS];
} DecodeText;

#define SYNTAX(i, ...) cosid_codec_fail(err, COSID_DECODE_SYNTAX, i, __VA_ARGS__)
#define RANGE(i, ...) cosid_codec_fail(err, COSID_DECODE_RANGE, i, __VA_ARGS__)

/* Decimal digits only, no sign, no more than max. */
static CosidDecodeResult
parse_decimal(const char *s, size_t len, uint64_t max, int64_t *v)
{
	uint64_t	x = 0;

	if (len == 0)
		return COSID_DECODE_SYNTAX;
	for (size_t i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return COSID_DECODE_SYNTAX;
		if (x > (max - (uint64_t) (s[i] - '0')) / 10)
		{
			/* keep checking the syntax before calling it a range error */
			for (size_t j = i; j < len; j++)
				if (s[j] < '0' || s[j] > '9')
					return COSID_DECODE_SYNTAX;
			return COSID_DECODE_RANGE;
		}
		x = x * 10 + (uint64_t) (s[i] - '0');
	}
	*v = (int64_t) x;
	return COSID_DECODE_OK;
}

/* SYNTAX or RANGE from a decoder of item i, with its message. */
static bool
fail_with(CosidDecodeResult r, int i, const char *msg, CosidCodecError *err)
{
	return cosid_codec_fail(err, r, i, "%s", msg);
}

/* ---------- the wrappers ---------- */

static bool
strip_date_prefix(const CosidCodecItem *it, int i, DecodeText *d,
				  CosidCodecError *err)
{
	size_t		n = strlen(it->delimiter);
	char		msg[256];

	if (d->len < (size_t) it->pattern_len + n)
		return SYNTAX(i, "expected a date of the form %s first", it->pattern);
	memset(&d->date_tm[i], 0, sizeof(CosidTm));
	d->date_tm[i].year = 1970;
	d->date_tm[i].month = d->date_tm[i].day = 1;
	if (cosid_date_parse(it->pattern, d->s, it->pattern_len, &d->date_tm[i],
						 msg, sizeof(msg)) != COSID_DECODE_OK)
		return fail_with(COSID_DECODE_SYNTAX, i, msg, err);
	if (memcmp(d->s + it->pattern_len, it->delimiter, n) != 0)
		return SYNTAX(i, "expected \"%s\" after the date", it->delimiter);
	d->check_date[i] = it->source == COSID_SOURCE_ID_TIME;
	d->s += it->pattern_len + n;
	d->len -= it->pattern_len + n;
	return true;
}

static bool
strip_wrapper(const CosidCodecItem *it, int i, DecodeText *d,
			  CosidCodecError *err)
{
	size_t		n;

	switch (it->kind)
	{
		case COSID_CODEC_PREFIX:
			n = strlen(it->text);
			if (d->len < n || memcmp(d->s, it->text, n) != 0)
				return SYNTAX(i, "the text does not start with \"%s\"", it->text);
			d->s += n;
			d->len -= n;
			return true;
		case COSID_CODEC_SUFFIX:
			n = strlen(it->text);
			if (d->len < n || memcmp(d->s + d->len - n, it->text, n) != 0)
				return SYNTAX(i, "the text does not end with \"%s\"", it->text);
			d->len -= n;
			return true;
		case COSID_CODEC_DATE_PREFIX:
			return strip_date_prefix(it, i, d, err);
		default:
			cosid_codec_fail_msg(err, NULL, "codec item %d cannot wrap", i);
			return false;
	}
}

/* ---------- the converter ---------- */

/* No converter: decimal digits (cosid80: a 128-bit value of the layout). */
static bool
decode_decimal(const CosidCodecPlan *p, const DecodeText *d, CosidId *id,
			   CosidCodecError *err)
{
	CosidDecodeResult r;

	if (id->wide)
	{
		uint64_t	hi,
					lo;
		int			bits = cosid_layout_total_bits(&p->target.layout);

		if (!cosid_u128_parse(d->s, d->len, &hi, &lo))
			return SYNTAX(-1, "Expected the decimal digits of an id.");
		if (bits >= 64 ? (hi >> (bits - 64)) != 0 : (hi != 0 || (lo >> bits) != 0))
			return RANGE(-1, "The number is larger than the generator's ids.");
		cosid_layout_unpack128(&p->target.layout, hi, lo, &id->time, &id->node, &id->seq);
		return true;
	}
	r = parse_decimal(d->s, d->len, p->max_id, &id->id);
	if (r == COSID_DECODE_SYNTAX)
		return SYNTAX(-1, "Expected the decimal digits of an id.");
	if (r == COSID_DECODE_RANGE)
		return RANGE(-1, "The number is larger than the generator's ids.");
	return true;
}

static bool
decode_friendly(const CosidCodecPlan *p, const CosidCodecItem *it,
				const DecodeText *d, CosidId *id, CosidCodecError *err)
{
	const CosidLayout *l = &p->target.layout;
	CosidTm		tm;
	int64_t		ms;
	int64_t		time;
	char		msg[256];
	CosidDecodeResult r;

	memset(&tm, 0, sizeof(tm));
	r = cosid_friendly_parse(l, it->pad_start, d->s, d->len, &tm, &id->node,
							 &id->seq, msg, sizeof(msg));
	if (r != COSID_DECODE_OK)
		return fail_with(r, 0, msg, err);
	if (!cosid_codec_from_local(p, 0, &tm, &ms, msg, sizeof(msg)))
		return fail_with(COSID_DECODE_SYNTAX, 0, msg, err);
	time = cosid_unit_of(l, ms);
	if (time < 0 || time > cosid_layout_max_time(l))
		return RANGE(0, "the time is outside the layout's range");
	id->time = time;
	if (!id->wide)
		id->id = cosid_layout_pack(l, time, id->node, id->seq);
	return true;
}

/* The period's digits at its pattern's width, the delimiter, the value. */
static bool
decode_grouped(const CosidCodecItem *it, const DecodeText *d, CosidId *id,
			   CosidCodecError *err)
{
	const char *pattern = cosid_group_pattern(it->group);
	size_t		plen = strlen(pattern);
	size_t		dlen = strlen(it->delimiter);
	uint64_t	max = (uint64_t) cosid_group_scale(it->group) - 1;
	int64_t		period;
	int64_t		value;
	char		msg[256];
	CosidDecodeResult r;

	if (d->len < plen + dlen ||
		parse_decimal(d->s, plen, INT64_MAX, &period) != COSID_DECODE_OK ||
		memcmp(d->s + plen, it->delimiter, dlen) != 0)
		return SYNTAX(0, "expected the period as %s, then \"%s\"", pattern, it->delimiter);
	if (!cosid_group_period_valid(it->group, period, msg, sizeof(msg)))
		return SYNTAX(0, "the period %.*s is not a date: %s", (int) plen, d->s, msg);
	if (it->value_is_radix)
		r = cosid_radix_decode(&it->radix, d->s + plen + dlen, d->len - plen - dlen,
							   max, &value, msg, sizeof(msg));
	else
	{
		r = parse_decimal(d->s + plen + dlen, d->len - plen - dlen, max, &value);
		snprintf(msg, sizeof(msg), "expected the value's decimal digits");
	}
	if (r == COSID_DECODE_SYNTAX)
		return fail_with(r, 0, msg, err);
	if (r == COSID_DECODE_RANGE)
		return RANGE(0, "the value does not fit its period");
	id->id = period * cosid_group_scale(it->group) + value;
	return true;
}

static bool
decode_converter(const CosidCodecPlan *p, const DecodeText *d, CosidId *id,
				 CosidCodecError *err)
{
	const CosidCodecItem *it = &p->codec.items[0];
	char		msg[256];
	CosidDecodeResult r;

	switch (it->kind)
	{
		case COSID_CODEC_RADIX:
			r = cosid_radix_decode(&it->radix, d->s, d->len, p->max_id, &id->id,
								   msg, sizeof(msg));
			return r == COSID_DECODE_OK || fail_with(r, 0, msg, err);
		case COSID_CODEC_FRIENDLY:
		case COSID_CODEC_PARTS_FRIENDLY:
			return decode_friendly(p, it, d, id, err);
		case COSID_CODEC_PARTS_RADIX:
			r = cosid_parts_radix_decode(&p->target.layout, it->radix.radix, d->s, d->len,
										 &id->time, &id->node, &id->seq, msg, sizeof(msg));
			return r == COSID_DECODE_OK || fail_with(r, 0, msg, err);
		case COSID_CODEC_GROUPED:
			return decode_grouped(it, d, id, err);
		case COSID_CODEC_CUSTOM:
			id->id = p->hooks->custom_decode(p->hooks_ctx, d->s, d->len);
			return true;
		default:
			return cosid_codec_fail_msg(err, NULL, "codec item 0 is not a converter");
	}
}

/* ---------- afterwards ---------- */

/* A date prefix from the id's time must show that time. */
static bool
check_dates(const CosidCodecPlan *p, int first, const DecodeText *d,
			const CosidId *id, CosidCodecError *err)
{
	for (int i = first; i < p->codec.nitems; i++)
	{
		const CosidCodecItem *it = &p->codec.items[i];
		CosidTm		tm;
		int64_t		ms;
		char		want[COSID_CODEC_MAX_PATTERN + 1];
		char		got[COSID_CODEC_MAX_PATTERN + 1];

		if (!d->check_date[i])
			continue;
		if (!cosid_codec_id_time_ms(p, id, &ms, err) ||
			!cosid_codec_to_local(p, i, ms, &tm, err))
			return false;
		cosid_date_format(it->pattern, &tm, want);
		cosid_date_format(it->pattern, &d->date_tm[i], got);
		if (strcmp(want, got) != 0)
			return SYNTAX(i, "the date %s is not the id's time (%s)", got, want);
	}
	return true;
}

/* The general way: txt[0..len) holds no NUL. */
static bool
decode_text(const CosidCodecPlan *p, const char *txt, size_t len, CosidId *id,
			CosidCodecError *err)
{
	DecodeText	d;
	int			first = cosid_codec_first_wrapper(&p->codec);

	memset(id, 0, sizeof(*id));
	id->wide = p->target.has_gen && p->target.wide;
	d.s = txt;
	d.len = len;
	for (int i = p->codec.nitems - 1; i >= first; i--)
	{
		d.check_date[i] = false;
		if (!strip_wrapper(&p->codec.items[i], i, &d, err))
			return false;
	}
	if (!(first == 0 ? decode_decimal(p, &d, id, err) : decode_converter(p, &d, id, err)))
		return false;
	return check_dates(p, first, &d, id, err);
}

/*
 * A list that is just a radix first tries the whole text: a NUL is never a
 * digit, so success means there was none, and anything else goes the
 * general way, which reports it.
 */
bool
cosid_codec_decode(const CosidCodecPlan *p, const char *text, size_t len,
				   CosidId *id, CosidCodecError *err)
{
	if (p->codec.nitems == 1 && p->codec.items[0].kind == COSID_CODEC_RADIX)
	{
		int64_t		v;

		if (__builtin_expect(cosid_radix_decode(&p->codec.items[0].radix, text, len,
												p->max_id, &v, NULL, 0) == COSID_DECODE_OK, 1))
		{
			memset(id, 0, sizeof(*id));
			id->wide = p->target.has_gen && p->target.wide;
			id->id = v;
			return true;
		}
	}
	return decode_text(p, text, cosid_codec_text_len(text, len), id, err);
}

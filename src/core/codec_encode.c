/*
 * codec_encode.c - encoding an id with a prepared codec list (no
 * PostgreSQL), stage by stage: the converter (item 0, or decimal when there
 * is none) writes the number's text; each wrapper adds text before (prefix,
 * date-prefix) or after (suffix) everything so far; the result is allocated
 * once, at its final size, and filled: the fronts of the wrappers from the
 * outermost (last) in, the converter's text, then the backs from the
 * innermost out.
 *
 * Owns: the order of the pieces and the messages of an id with no text.
 * Must not: allocate but through the caller's allocator, once.
 */
#include "codec_run.h"

#include <inttypes.h>
#include <string.h>

/* The pieces of one encoding, on the stack. */
typedef struct EncodeText
{
	char		buf[256];		/* the converter's text, when it writes it */
	const char *core;			/* the converter's text */
	size_t		core_len;
	const char *front[COSID_CODEC_MAX_ITEMS][2];
	size_t		front_len[COSID_CODEC_MAX_ITEMS][2];
	const char *back[COSID_CODEC_MAX_ITEMS];
	size_t		back_len[COSID_CODEC_MAX_ITEMS];
	char		dates[COSID_CODEC_MAX_ITEMS][COSID_CODEC_MAX_PATTERN + 1];
} EncodeText;

/* v in decimal (a '-' first when negative); returns the length, no NUL. */
static int
put_decimal(char *buf, int64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char		tmp[20];
	char	   *q = tmp + sizeof(tmp);
	int			len = 0;
	uint64_t	u = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

	/* eight digits at a time in 32 bits, then two at a time, as pg_lltoa() */
	while (u >= 100000000)
	{
		uint64_t	hi = u / 100000000;
		uint32_t	lo = (uint32_t) (u - hi * 100000000);

		u = hi;
		for (int k = 0; k < 4; k++)
		{
			q -= 2;
			memcpy(q, pairs + 2 * (lo % 100), 2);
			lo /= 100;
		}
	}
	while (u >= 100)
	{
		uint32_t	r = (uint32_t) (u % 100);

		u /= 100;
		q -= 2;
		memcpy(q, pairs + 2 * r, 2);
	}
	if (u >= 10)
	{
		q -= 2;
		memcpy(q, pairs + 2 * u, 2);
	}
	else
		*--q = (char) ('0' + u);
	if (v < 0)
		buf[len++] = '-';
	memcpy(buf + len, q, (size_t) (tmp + sizeof(tmp) - q));
	return len + (int) (tmp + sizeof(tmp) - q);
}

/* ---------- the converter ---------- */

static bool
encode_radix(const CosidCodecItem *it, int64_t v, EncodeText *t,
			 CosidCodecError *err)
{
	int			n = cosid_radix_encode(&it->radix, v, t->buf);

	if (n < 0)
		return cosid_codec_fail_msg(err, NULL, "id %" PRId64 " does not fit in %d base-%d digits",
									v, it->radix.width, it->radix.radix);
	t->core_len = (size_t) n;
	return true;
}

static bool
encode_friendly(const CosidCodecPlan *p, const CosidCodecItem *it,
				const CosidId *id, EncodeText *t, CosidCodecError *err)
{
	int64_t		time,
				node,
				seq,
				ms;
	CosidTm		tm;

	if (!cosid_codec_id_parts(p, id, &time, &node, &seq, err) ||
		!cosid_codec_time_ms(p, time, &ms, err) ||
		!cosid_codec_to_local(p, 0, ms, &tm, err))
		return false;
	t->core_len = (size_t) cosid_friendly_format(&p->target.layout, it->pad_start,
												 &tm, node, seq, t->buf);
	return true;
}

static void
encode_parts_radix(const CosidCodecPlan *p, const CosidCodecItem *it,
				   const CosidId *id, EncodeText *t)
{
	/* -1 (buf untouched) never happens for an id of the layout */
	t->buf[0] = '\0';
	cosid_parts_radix_encode(&p->target.layout, it->radix.radix, id->time,
							 id->node, id->seq, t->buf);
	t->core_len = strlen(t->buf);
}

/*
 * The period at its pattern's width (0002 for year 2), as decoding reads
 * it, the delimiter, then the value.
 */
static bool
encode_grouped(const CosidCodecItem *it, int64_t v, EncodeText *t,
			   CosidCodecError *err)
{
	int64_t		period;
	int64_t		value;
	size_t		dlen = strlen(it->delimiter);
	int			n;

	if (!cosid_group_split(it->group, v, &period, &value))
		return cosid_codec_fail_msg(err, NULL, "id %" PRId64 " does not hold a %s period", v,
									it->group == COSID_GROUP_DAY ? "day" :
									it->group == COSID_GROUP_MONTH ? "month" : "year");
	/* period (<= 20), delimiter (<= 64 bytes), value (<= 64 digits): fits */
	n = cosid_put_decimal(t->buf, period, (int) strlen(cosid_group_pattern(it->group)));
	memcpy(t->buf + n, it->delimiter, dlen);
	n += (int) dlen;
	if (it->value_is_radix)
	{
		int			vn = cosid_radix_encode(&it->radix, value, t->buf + n);

		if (vn < 0)
			return cosid_codec_fail_msg(err, NULL, "value %" PRId64 " does not fit in %d base-%d digits",
										value, it->radix.width, it->radix.radix);
		n += vn;
	}
	else
		n += put_decimal(t->buf + n, value);
	t->core_len = (size_t) n;
	return true;
}

/* No converter: the number in decimal (cosid80: its 128-bit value). */
static void
encode_decimal(const CosidCodecPlan *p, const CosidId *id, EncodeText *t)
{
	if (id->wide)
	{
		uint64_t	hi,
					lo;

		cosid_layout_pack128(&p->target.layout, id->time, id->node, id->seq, &hi, &lo);
		cosid_u128_decimal(hi, lo, t->buf);
		t->core_len = strlen(t->buf);
	}
	else
		t->core_len = (size_t) put_decimal(t->buf, id->id);
}

static bool
encode_converter(const CosidCodecPlan *p, const CosidId *id, EncodeText *t,
				 CosidCodecError *err)
{
	const CosidCodecItem *it = &p->codec.items[0];

	t->core = t->buf;
	if (cosid_codec_first_wrapper(&p->codec) == 0)
	{
		encode_decimal(p, id, t);
		return true;
	}
	switch (it->kind)
	{
		case COSID_CODEC_RADIX:
			return encode_radix(it, id->id, t, err);
		case COSID_CODEC_FRIENDLY:
		case COSID_CODEC_PARTS_FRIENDLY:
			return encode_friendly(p, it, id, t, err);
		case COSID_CODEC_PARTS_RADIX:
			encode_parts_radix(p, it, id, t);
			return true;
		case COSID_CODEC_GROUPED:
			return encode_grouped(it, id->id, t, err);
		case COSID_CODEC_CUSTOM:
			{
				const char *s;
				size_t		len;

				p->hooks->custom_encode(p->hooks_ctx, id->id, &s, &len);
				/* up to a NUL, as C strings had it */
				t->core = s;
				t->core_len = cosid_codec_text_len(s, len);
				return true;
			}
		default:
			return cosid_codec_fail_msg(err, NULL, "codec item 0 is not a converter");
	}
}

/* ---------- the wrappers ---------- */

/* Item i's pieces (errors in list order). */
static bool
encode_wrapper(const CosidCodecPlan *p, int i, const CosidId *id,
			   int64_t now_ms, EncodeText *t, CosidCodecError *err)
{
	const CosidCodecItem *it = &p->codec.items[i];
	CosidTm		tm;
	int64_t		ms = now_ms;
	int			n;

	t->front[i][0] = t->front[i][1] = t->back[i] = "";	/* never NULL: memcpy */
	t->front_len[i][0] = t->front_len[i][1] = t->back_len[i] = 0;
	switch (it->kind)
	{
		case COSID_CODEC_PREFIX:
			t->front[i][0] = it->text;
			t->front_len[i][0] = strlen(it->text);
			return true;
		case COSID_CODEC_SUFFIX:
			t->back[i] = it->text;
			t->back_len[i] = strlen(it->text);
			return true;
		case COSID_CODEC_DATE_PREFIX:
			if ((it->source == COSID_SOURCE_ID_TIME &&
				 !cosid_codec_id_time_ms(p, id, &ms, err)) ||
				!cosid_codec_to_local(p, i, ms, &tm, err))
				return false;
			/* as long as the pattern (at most COSID_CODEC_MAX_PATTERN) */
			n = cosid_date_format(it->pattern, &tm, t->dates[i]);
			t->front[i][0] = t->dates[i];
			t->front_len[i][0] = n < 0 ? 0 : (size_t) n;
			t->front[i][1] = it->delimiter;
			t->front_len[i][1] = strlen(it->delimiter);
			return true;
		default:
			return cosid_codec_fail_msg(err, NULL, "codec item %d cannot wrap", i);
	}
}

/* The text: fronts outermost first, the converter's, backs innermost first. */
static char *
assemble(const CosidCodecPlan *p, int first, const EncodeText *t, char *out)
{
	char	   *q = out;

	for (int i = p->codec.nitems - 1; i >= first; i--)
	{
		memcpy(q, t->front[i][0], t->front_len[i][0]);
		q += t->front_len[i][0];
		memcpy(q, t->front[i][1], t->front_len[i][1]);
		q += t->front_len[i][1];
	}
	memcpy(q, t->core, t->core_len);
	q += t->core_len;
	for (int i = first; i < p->codec.nitems; i++)
	{
		memcpy(q, t->back[i], t->back_len[i]);
		q += t->back_len[i];
	}
	return q;
}

int64_t
cosid_codec_encode(const CosidCodecPlan *p, const CosidId *id, int64_t now_ms,
				   CosidAlloc alloc, void *alloc_ctx, char **out,
				   CosidCodecError *err)
{
	EncodeText	t;
	int			first = cosid_codec_first_wrapper(&p->codec);
	size_t		total;

	if (!encode_converter(p, id, &t, err))
		return -1;
	total = t.core_len;
	for (int i = first; i < p->codec.nitems; i++)
	{
		if (!encode_wrapper(p, i, id, now_ms, &t, err))
			return -1;
		total += t.front_len[i][0] + t.front_len[i][1] + t.back_len[i];
	}
	*out = alloc(alloc_ctx, total > 0 ? total : 1);
	if (*out == NULL)
		return cosid_codec_fail_msg(err, NULL, "out of memory"), -1;
	(void) assemble(p, first, &t, *out);
	return (int64_t) total;
}

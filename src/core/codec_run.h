/*
 * codec_run.h - what the pipeline's files share (internal to src/core: the
 * PostgreSQL side includes codec.h only): an id's parts and time, local
 * times through the plan's zones, and the messages of a failure.
 *
 * Owns: the years text shows (1..9999) and their limit in milliseconds,
 * UTC without a time zone database, the wording of an id outside its
 * layout.
 * Must not: be included outside codec_run.c, codec_encode.c and
 * codec_decode.c.
 */
#ifndef COSID_CORE_CODEC_RUN_H
#define COSID_CORE_CODEC_RUN_H

#include "codec.h"

#include <string.h>

/*
 * Text forms show years 1 to 9999: any Unix millisecond beyond +-2^48
 * (about 8900 years from 1970) is outside that in every zone.
 */
#define COSID_TEXT_MS_LIMIT (INT64_C(1) << 48)

/* err as a failure of item (-1: none): detail formatted; returns false. */
extern bool cosid_codec_fail(CosidCodecError *err, CosidDecodeResult result,
							 int item, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

/* err as an encoding-style failure: a primary message, maybe a detail. */
extern bool cosid_codec_fail_msg(CosidCodecError *err, const char *detail,
								 const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* The local time of Unix milliseconds in item i's zone (NULL: UTC). */
extern bool cosid_codec_to_local_slow(const CosidCodecPlan *p, int i, int64_t ms,
									  CosidTm *out, CosidCodecError *err);

static inline bool
cosid_codec_to_local(const CosidCodecPlan *p, int i, int64_t ms, CosidTm *out,
					 CosidCodecError *err)
{
	/* a zone of the hooks, and a time text can show: the common case */
	if (p->zones[i] != NULL && ms >= -COSID_TEXT_MS_LIMIT && ms <= COSID_TEXT_MS_LIMIT &&
		p->hooks->to_local(p->hooks_ctx, p->zones[i], ms, out) &&
		out->year >= 1 && out->year <= 9999)
		return true;
	return cosid_codec_to_local_slow(p, i, ms, out, err);
}

/*
 * The instant (Unix ms) of a local time in item i's zone, resolved as
 * java.time does; false with msg when the fields are not a date.
 */
extern bool cosid_codec_from_local(const CosidCodecPlan *p, int i,
								   const CosidTm *tm, int64_t *ms,
								   char *msg, size_t msglen);

/* The failure of an id outside the layout (cosid_codec_id_parts). */
extern void cosid_codec_outside_layout(const CosidCodecPlan *p, const CosidId *id,
									   CosidCodecError *err);

/*
 * The id's parts (snowflake ids lose their uncertainty bits here); false
 * for a number outside the layout (negative, or bits above its time).
 */
static inline bool
cosid_codec_id_parts(const CosidCodecPlan *p, const CosidId *id,
					 int64_t *time, int64_t *node, int64_t *seq,
					 CosidCodecError *err)
{
	const CosidCodecTarget *t = &p->target;

	if (id->wide)
	{
		*time = id->time;
		*node = id->node;
		*seq = id->seq;
		return true;
	}
	if (!cosid_layout_holds_id(&t->layout, t->uncertainty_bits, id->id))
	{
		cosid_codec_outside_layout(p, id, err);
		return false;
	}
	cosid_layout_unpack(&t->layout, id->id >> t->uncertainty_bits, time, node, seq);
	return true;
}

/* The time of text forms out of range (years 1..9999). */
extern bool cosid_codec_time_out_of_range(CosidCodecError *err);

/* The Unix milliseconds of a time part, if a text form can show them. */
static inline bool
cosid_codec_time_ms(const CosidCodecPlan *p, int64_t time, int64_t *ms,
					CosidCodecError *err)
{
	return cosid_layout_time_ms(&p->target.layout, time, COSID_TEXT_MS_LIMIT, ms) ||
		cosid_codec_time_out_of_range(err);
}

/* The Unix milliseconds of the id's time (parts, then time). */
static inline bool
cosid_codec_id_time_ms(const CosidCodecPlan *p, const CosidId *id, int64_t *ms,
					   CosidCodecError *err)
{
	int64_t		time,
				node,
				seq;

	return cosid_codec_id_parts(p, id, &time, &node, &seq, err) &&
		cosid_codec_time_ms(p, time, ms, err);
}

/* Bytes of s[0..len) up to its first NUL, as a C string has it. */
static inline size_t
cosid_codec_text_len(const char *s, size_t len)
{
	const char *nul = len > 0 ? memchr(s, '\0', len) : NULL;

	return nul != NULL ? (size_t) (nul - s) : len;
}

/* The first item that converts the number (1), or none: decimal (0). */
static inline int
cosid_codec_first_wrapper(const CosidCodec *c)
{
	return c->nitems > 0 &&
		c->items[0].kind != COSID_CODEC_PREFIX &&
		c->items[0].kind != COSID_CODEC_SUFFIX &&
		c->items[0].kind != COSID_CODEC_DATE_PREFIX ? 1 : 0;
}

#endif							/* COSID_CORE_CODEC_RUN_H */

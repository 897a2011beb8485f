/*
 * codec_run.c - a codec list prepared for what it runs for (no
 * PostgreSQL): the rules of a generator's list and of an immutable one, the
 * defaults a generator gives its items, and what encoding and decoding
 * share (an id's parts and time, local times, failures).
 *
 * Owns: the rules and their messages (a segment number has no time, cosid80
 * ids need the parts forms, grouped needs a periodic segment generator,
 * which items an immutable list refuses and why), UTC arithmetic.
 * Must not: resolve zones or functions (the caller binds them between
 * items, through CosidCodecHooks when the list runs), or raise errors.
 */
#include "codec_run.h"
#include "json.h"
#include "text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------- paths and failures ---------- */

void
cosid_codec_item_path(const CosidCodec *codec, int i, const char *path_prefix,
					  const char *key, char *path, size_t pathlen)
{
	const char *kind = cosid_codec_kind_name(codec->items[i].kind);

	if (path == NULL || pathlen == 0)
		return;
	if (key != NULL)
		snprintf(path, pathlen, "%s[%d].%s.%s", path_prefix, i, kind, key);
	else
		snprintf(path, pathlen, "%s[%d].%s", path_prefix, i, kind);
}

/* A broken rule (or impure item) at item i's key; returns why. */
static CosidCodecRule rule_fail(CosidCodecRule why, const CosidCodec *codec, int i,
								const char *path_prefix, const char *key, char *path,
								size_t pathlen, char *msg, size_t msglen, const char *fmt,...)
			__attribute__((format(printf, 10, 11)));

static CosidCodecRule
rule_fail(CosidCodecRule why, const CosidCodec *codec, int i,
		  const char *path_prefix, const char *key, char *path,
		  size_t pathlen, char *msg, size_t msglen, const char *fmt,...)
{
	va_list		ap;

	cosid_codec_item_path(codec, i, path_prefix, key, path, pathlen);
	if (msg != NULL && msglen > 0)
	{
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return why;
}

#define BROKEN(key, ...) rule_fail(COSID_CODEC_RULE_BROKEN, &p->codec, i, \
		path_prefix, key, path, pathlen, msg, msglen, __VA_ARGS__)
#define IMPURE(key, ...) rule_fail(COSID_CODEC_RULE_IMPURE, codec, i, \
		path_prefix, key, path, pathlen, msg, msglen, __VA_ARGS__)

bool
cosid_codec_fail(CosidCodecError *err, CosidDecodeResult result, int item,
				 const char *fmt,...)
{
	va_list		ap;

	err->result = result;
	err->item = item;
	err->message[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
	return false;
}

bool
cosid_codec_fail_msg(CosidCodecError *err, const char *detail,
					 const char *fmt,...)
{
	va_list		ap;

	err->result = COSID_DECODE_RANGE;
	err->item = -1;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	snprintf(err->detail, sizeof(err->detail), "%s", detail ? detail : "");
	return false;
}

/* ---------- copies ---------- */

static bool
copy_string(const char **s, CosidAlloc alloc, void *alloc_ctx)
{
	size_t		n;
	char	   *copy;

	if (*s == NULL)
		return true;
	n = strlen(*s) + 1;
	if ((copy = alloc(alloc_ctx, n)) == NULL)
		return false;
	memcpy(copy, *s, n);
	*s = copy;
	return true;
}

bool
cosid_codec_copy_strings(CosidCodec *codec, CosidAlloc alloc, void *alloc_ctx)
{
	for (int i = 0; i < codec->nitems; i++)
	{
		CosidCodecItem *it = &codec->items[i];

		if (!copy_string(&it->zone, alloc, alloc_ctx) ||
			!copy_string(&it->text, alloc, alloc_ctx) ||
			!copy_string(&it->pattern, alloc, alloc_ctx) ||
			!copy_string(&it->delimiter, alloc, alloc_ctx) ||
			!copy_string(&it->encode_fn, alloc, alloc_ctx) ||
			!copy_string(&it->decode_fn, alloc, alloc_ctx))
			return false;
	}
	return true;
}

/* ---------- the rules ---------- */

/*
 * Whether a zone is UTC (absent, or "UTC" in any case, as PostgreSQL's
 * pg_tzset() reads it): the one zone whose rules are fixed by definition.
 * Every other name, "Etc/UTC" and "GMT" included, is a file of the time zone
 * database, which an update may change.
 */
static bool
zone_is_utc(const char *zone)
{
	return zone == NULL || cosid_word_eq(zone, "utc");
}

/*
 * Immutable lists: refuse the first item whose text depends on anything
 * but the input, in list order.  Decided item by item:
 *
 * - radix, prefix, suffix: the digits and strings of the list alone.
 * - grouped: arithmetic on the number and the Gregorian calendar (is the
 *   period a date); its group is the list's ("day" by default).
 * - friendly: the id's time as a local time in its zone; the layout is a
 *   preset, fixed in the code.  A zone's offsets and transitions come from
 *   the time zone database and change with it, so only UTC passes, and is
 *   computed without the database (leap seconds ignored, as PostgreSQL
 *   does).
 * - date-prefix: "NOW" (the default without a generator) is the clock;
 *   "ID_TIME" needs a generator's layout, which cosid_alter can change.
 * - custom: SQL functions named by text, resolved when the list is bound,
 *   through the caller's search_path and privileges; PostgreSQL records no
 *   dependency of an index on a function named inside a jsonb constant.
 *   An IMMUTABLE function of the user's goes straight into the expression.
 * - parts-radix, parts-friendly: only for cosid80 generators, refused ad
 *   hoc by the item rules (after parts-friendly's zone, as for friendly).
 */
static CosidCodecRule
check_immutable(const CosidCodec *codec, const char *path_prefix,
				char *path, size_t pathlen, char *msg, size_t msglen)
{
	for (int i = 0; i < codec->nitems; i++)
	{
		const CosidCodecItem *it = &codec->items[i];
		const char *kind = cosid_codec_kind_name(it->kind);

		switch (it->kind)
		{
			case COSID_CODEC_FRIENDLY:
			case COSID_CODEC_PARTS_FRIENDLY:
				if (!zone_is_utc(it->zone))
					return IMPURE("zone", "%s in time zone \"%s\" depends on that zone's rules, "
								  "which time zone data updates change; only UTC (the default) is fixed",
								  kind, it->zone);
				break;
			case COSID_CODEC_DATE_PREFIX:
				if (it->has_source && it->source == COSID_SOURCE_ID_TIME)
					return IMPURE("source", "date-prefix of source \"ID_TIME\" depends on a generator's layout, "
								  "which cosid_alter can change; an immutable list names no generator");
				return IMPURE(it->has_source ? "source" : NULL,
							  "date-prefix depends on the clock: it shows the date of \"NOW\" "
							  "(the default without a generator)");
			case COSID_CODEC_CUSTOM:
				return IMPURE(NULL, "custom depends on the functions its names find through the search_path "
							  "when the list is bound; call an IMMUTABLE function directly in the "
							  "expression instead");
			default:
				break;
		}
	}
	return COSID_CODEC_RULE_OK;
}

/* A segment number has no time, node or sequence to show. */
static CosidCodecRule
check_segment(CosidCodecPlan *p, const char *path_prefix, char *path,
			  size_t pathlen, char *msg, size_t msglen)
{
	for (int i = 0; i < p->codec.nitems; i++)
	{
		const CosidCodecItem *it = &p->codec.items[i];

		if (it->kind == COSID_CODEC_FRIENDLY || it->kind == COSID_CODEC_PARTS_RADIX ||
			it->kind == COSID_CODEC_PARTS_FRIENDLY)
			return BROKEN(NULL, "needs a time-based generator; a segment number has no time, node or sequence");
		if (it->kind == COSID_CODEC_DATE_PREFIX && it->has_source &&
			it->source == COSID_SOURCE_ID_TIME)
			return BROKEN("source", "\"ID_TIME\" needs a time-based generator; a segment number has no time");
	}
	return COSID_CODEC_RULE_OK;
}

CosidCodecRule
cosid_codec_prepare(CosidCodecPlan *p, const CosidCodec *codec,
					const CosidCodecTarget *target, bool immutable,
					const char *path_prefix, char *path, size_t pathlen,
					char *msg, size_t msglen)
{
	const CosidCodecTarget *t = target;
	CosidCodecRule r;
	int			bits;

	memset(p, 0, sizeof(*p));
	p->codec = *codec;
	p->target = *target;
	bits = cosid_layout_total_bits(&t->layout) + t->uncertainty_bits;
	p->max_id = !t->has_gen || !t->time_based || bits >= 63 ? (uint64_t) INT64_MAX :
		(UINT64_C(1) << bits) - 1;
	if (immutable &&
		(r = check_immutable(codec, path_prefix, path, pathlen, msg, msglen)) != COSID_CODEC_RULE_OK)
		return r;
	if (t->has_gen && !t->time_based)
		return check_segment(p, path_prefix, path, pathlen, msg, msglen);
	return COSID_CODEC_RULE_OK;
}

/* friendly: a generator's layout, or ad hoc the preset it names. */
static CosidCodecRule
prepare_friendly(CosidCodecPlan *p, int i, const char *path_prefix,
				 char *path, size_t pathlen, char *msg, size_t msglen)
{
	const CosidCodecItem *it = &p->codec.items[i];
	const CosidCodecTarget *t = &p->target;

	if (t->has_gen && t->uncertainty_bits > 0)
		return BROKEN(NULL, "not available with uncertainty-bits, whose random bits it would drop");
	if (t->has_gen && it->has_layout)
		return BROKEN("layout", "a generator's codec uses the generator's layout");
	if (!t->has_gen)
	{
		p->target.layout = cosid_preset_layout(it->has_layout ? it->layout :
											   COSID_PRESET_SNOWFLAKE_MS);
		if (cosid_layout_total_bits(&p->target.layout) > 63)
			return BROKEN("layout", "%s ids do not fit a bigint", cosid_preset_name(it->layout));
	}
	return COSID_CODEC_RULE_OK;
}

CosidCodecRule
cosid_codec_prepare_item(CosidCodecPlan *p, int i, const char *path_prefix,
						 char *path, size_t pathlen, char *msg, size_t msglen)
{
	CosidCodecItem *it = &p->codec.items[i];
	const CosidCodecTarget *t = &p->target;

	/* on a cosid80 generator, radix and friendly mean the parts forms */
	if (t->has_gen && t->wide)
	{
		if (it->kind == COSID_CODEC_RADIX)
			it->kind = COSID_CODEC_PARTS_RADIX;
		else if (it->kind == COSID_CODEC_FRIENDLY)
			it->kind = COSID_CODEC_PARTS_FRIENDLY;
	}
	switch (it->kind)
	{
		case COSID_CODEC_FRIENDLY:
			return prepare_friendly(p, i, path_prefix, path, pathlen, msg, msglen);
		case COSID_CODEC_PARTS_RADIX:
		case COSID_CODEC_PARTS_FRIENDLY:
			if (!t->has_gen || !t->wide)
				return BROKEN(NULL, "only for a generator of strategy \"cosid80\"");
			break;
		case COSID_CODEC_GROUPED:
			if (t->has_gen && (t->time_based || t->group == COSID_GROUP_NONE))
				return BROKEN(NULL, "only for a segment generator with a \"group\"");
			if (t->has_gen)
				it->group = t->group;	/* the generator's period */
			break;
		case COSID_CODEC_CUSTOM:
			if (t->has_gen && t->wide)
				return BROKEN(NULL, "not available for strategy \"cosid80\", whose ids do not fit a bigint");
			break;
		case COSID_CODEC_DATE_PREFIX:
			if (!it->has_source)
				it->source = t->has_gen && t->time_based ?
					COSID_SOURCE_ID_TIME : COSID_SOURCE_NOW;
			else if (it->source == COSID_SOURCE_ID_TIME && !t->has_gen)
				return BROKEN("source", "\"ID_TIME\" needs a time-based generator: use cosid_encode(name, id)");
			break;
		default:
			break;
	}
	return COSID_CODEC_RULE_OK;
}

bool
cosid_codec_uses_now(const CosidCodecPlan *p)
{
	for (int i = 0; i < p->codec.nitems; i++)
		if (p->codec.items[i].kind == COSID_CODEC_DATE_PREFIX &&
			p->codec.items[i].source != COSID_SOURCE_ID_TIME)
			return true;
	return false;
}

/* ---------- time ---------- */

/* Days from 1970-01-01 of a proleptic Gregorian date (any year). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* The date of days from 1970-01-01. */
static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t		era;
	int64_t		doe;
	int64_t		yoe;
	int64_t		doy;
	int64_t		mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* UTC by arithmetic alone (|ms| <= COSID_TEXT_MS_LIMIT). */
static void
utc_to_tm(int64_t ms, int64_t *year, CosidTm *out)
{
	int64_t		days = ms / 86400000;
	int64_t		rem = ms % 86400000;

	if (rem < 0)
	{
		rem += 86400000;
		days--;
	}
	civil_from_days(days, year, &out->month, &out->day);
	out->hour = (int) (rem / 3600000);
	out->minute = (int) (rem / 60000 % 60);
	out->second = (int) (rem / 1000 % 60);
	out->millis = (int) (rem % 1000);
}

bool
cosid_codec_time_out_of_range(CosidCodecError *err)
{
	return cosid_codec_fail_msg(err, "Text forms show years 1 to 9999.",
								"time of the id is out of range for its text form");
}

/* cosid_codec_to_local's other cases: UTC, and every failure. */
bool
cosid_codec_to_local_slow(const CosidCodecPlan *p, int i, int64_t ms, CosidTm *out,
						  CosidCodecError *err)
{
	const void *zone = p->zones[i];
	int64_t		year;

	if (ms < -COSID_TEXT_MS_LIMIT || ms > COSID_TEXT_MS_LIMIT)
		return cosid_codec_time_out_of_range(err);
	if (zone == NULL)
		utc_to_tm(ms, &year, out);
	else
	{
		if (!p->hooks->to_local(p->hooks_ctx, zone, ms, out))
			return cosid_codec_time_out_of_range(err);
		year = out->year;
	}
	if (year < 1 || year > 9999)
		return cosid_codec_time_out_of_range(err);
	out->year = (int) year;
	return true;
}

bool
cosid_codec_from_local(const CosidCodecPlan *p, int i, const CosidTm *tm,
					   int64_t *ms, char *msg, size_t msglen)
{
	int64_t		local;

	if (!cosid_date_valid(tm->year, tm->month, tm->day, msg, msglen))
		return false;
	local = days_from_civil(tm->year, tm->month, tm->day) * 86400 +
		tm->hour * 3600 + tm->minute * 60 + tm->second;
	if (p->zones[i] != NULL)
		local -= p->hooks->local_offset(p->hooks_ctx, p->zones[i], local);
	*ms = local * 1000 + tm->millis;
	return true;
}

/* ---------- an id's parts ---------- */

void
cosid_codec_outside_layout(const CosidCodecPlan *p, const CosidId *id,
						   CosidCodecError *err)
{
	const CosidCodecTarget *t = &p->target;
	const CosidCodecItem *it0 = &p->codec.items[0];
	char		detail[64];

	snprintf(detail, sizeof(detail), "Its ids are from 0 to 2^%d - 1.",
			 cosid_layout_total_bits(&t->layout) + t->uncertainty_bits);
	/* without a generator, the layout is the friendly item's (codec[0]) */
	if (t->has_gen)
		(void) cosid_codec_fail_msg(err, detail,
									"id %" PRId64 " is out of range for the generator's layout",
									id->id);
	else
		(void) cosid_codec_fail_msg(err, detail, "id %" PRId64 " is out of range for layout %s",
									id->id,
									cosid_preset_name(it0->has_layout ? it0->layout :
													  COSID_PRESET_SNOWFLAKE_MS));
}

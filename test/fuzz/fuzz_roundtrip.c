/*
 * fuzz_roundtrip.c - libFuzzer harness for the codec pipeline of src/core
 * (codec_run.c, codec_encode.c, codec_decode.c, through codec.c's parser):
 * encode -> decode round trips through every codec item.
 *
 * The input chooses what a list runs for (ad hoc, a snowflake generator of a
 * fuzzed layout with uncertainty bits, cosid80, a segment generator with or
 * without a group), whether it is immutable, a codec list written as JSON
 * (a converter: none (decimal), radix, friendly, parts-radix,
 * parts-friendly, grouped, custom; then wrappers: prefix, suffix,
 * date-prefix of any source and pattern; zones absent, UTC or a fixed
 * offset), and ids, both arbitrary and made of the target's own parts.
 * Checked:
 *   - a list the rules refuse says where and why;
 *   - every encoding either fails with a message or gives text of the length
 *     returned, allocated once;
 *   - decode(encode(id)) == id wherever the list is reversible: every list,
 *     for an id it encodes that is in the target's domain (0..max_id; parts
 *     within the layout; custom: any); decimal text of a negative id is the
 *     one text that does not decode (no sign), as before;
 *   - decoding the input's own bytes never crashes and fails with a message
 *     and an item of the list.
 * The hooks: a fixed UTC zone and fixed offsets (arithmetic written here,
 * independently of core's), and a fake custom function ("c" and the
 * decimal, and back).  Every violation calls abort().
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "fuzz.h"

/* ---------- the input ---------- */

typedef struct Input
{
	const uint8_t *p;
	size_t		n;
} Input;

static uint8_t
u8(Input *in)
{
	uint8_t		b = 0;

	if (in->n > 0)
	{
		b = *in->p++;
		in->n--;
	}
	return b;
}

static uint64_t
u64(Input *in)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | u8(in);
	return v;
}

/* A value in [lo, hi] (hi - lo < 2^63). */
static int64_t
range(Input *in, int64_t lo, int64_t hi)
{
	uint64_t	span = (uint64_t) (hi - lo) + 1;

	return lo + (int64_t) (span == 0 ? u64(in) : u64(in) % span);
}

/* ---------- JSON text ---------- */

typedef struct Json
{
	char		buf[8192];
	size_t		len;
} Json;

static void
put(Json *j, const char *s)
{
	size_t		n = strlen(s);

	if (j->len + n < sizeof(j->buf))
	{
		memcpy(j->buf + j->len, s, n);
		j->len += n;
		j->buf[j->len] = '\0';
	}
}

static void
putf(Json *j, const char *fmt, long long v)
{
	char		tmp[32];

	snprintf(tmp, sizeof(tmp), fmt, v);
	put(j, tmp);
}

/* A JSON string of up to max bytes of the input (escaped as needed). */
static void
put_fuzz_string(Json *j, Input *in, size_t max)
{
	size_t		n = u8(in) % (max + 1);

	put(j, "\"");
	for (size_t i = 0; i < n; i++)
	{
		uint8_t		c = u8(in);
		char		tmp[8];

		if (c == 0)
			c = 'a';			/* JSON strings hold no NUL here */
		if (c == '"' || c == '\\')
			snprintf(tmp, sizeof(tmp), "\\%c", c);
		else if (c < 0x20)
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
		else
			snprintf(tmp, sizeof(tmp), "%c", c);
		put(j, tmp);
	}
	put(j, "\"");
}

static const char *const zones[] = {NULL, "UTC", "utc", "Fixed/+0530", "Fixed/-0800", "Fixed/+1400"};

static void
put_zone(Json *j, Input *in, bool *first)
{
	const char *z = zones[u8(in) % 6];

	if (z == NULL)
		return;
	put(j, *first ? "" : ", ");
	put(j, "\"zone\": \"");
	put(j, z);
	put(j, "\"");
	*first = false;
}

static void
put_radix_spec(Json *j, Input *in)
{
	uint8_t		how = u8(in);

	if (how % 3 == 0)
	{
		putf(j, "%lld", 2 + u8(in) % 61);
		return;
	}
	putf(j, "{\"radix\": %lld", 2 + u8(in) % 61);
	if (how & 4)
		putf(j, ", \"width\": %lld", 1 + u8(in) % 64);
	if (how & 8)
		put(j, (how & 16) ? ", \"pad-start\": true" : ", \"pad-start\": false");
	put(j, "}");
}

static const char *const patterns[] = {
	"yyyyMMdd", "yyMMdd", "yyyy-MM-dd HH:mm:ss.SSS", "HHmmss", "dd/MM",
	"yyyyMMddHHmmssSSS", "SSS", "yyyy"
};

static void
put_pattern(Json *j, Input *in)
{
	uint8_t		how = u8(in);

	put(j, "\"pattern\": ");
	if (how < 200)
	{
		put(j, "\"");
		put(j, patterns[how % 8]);
		put(j, "\"");
	}
	else
	{
		static const char letters[] = "yMdHmsS-/:. ";
		size_t		n = 1 + u8(in) % 34;

		put(j, "\"");
		for (size_t i = 0; i < n; i++)
		{
			char		c[2] = {letters[u8(in) % 12], '\0'};

			put(j, c);
		}
		put(j, "\"");
	}
}

static void
put_friendly(Json *j, Input *in, bool parts)
{
	uint8_t		how = u8(in);
	bool		first = true;

	put(j, parts ? "{\"parts-friendly\": {" : "{\"friendly\": {");
	put_zone(j, in, &first);
	if (how & 1)
	{
		put(j, first ? "" : ", ");
		put(j, (how & 2) ? "\"pad-start\": true" : "\"pad-start\": false");
		first = false;
	}
	if (!parts && (how & 4))
	{
		put(j, first ? "\"layout\": \"" : ", \"layout\": \"");
		put(j, cosid_preset_name((CosidPreset) (u8(in) % COSID_PRESET_COUNT)));
		put(j, "\"");
	}
	put(j, "}}");
}

static void
put_converter(Json *j, Input *in)
{
	uint8_t		how;

	switch (u8(in) % 7)
	{
		case 0:
			return;				/* decimal */
		case 1:
			put(j, "{\"radix\": ");
			put_radix_spec(j, in);
			put(j, "}");
			break;
		case 2:
			put_friendly(j, in, false);
			break;
		case 3:
			putf(j, "{\"parts-radix\": {\"radix\": %lld}}", 2 + u8(in) % 61);
			break;
		case 4:
			put_friendly(j, in, true);
			break;
		case 5:
			how = u8(in);
			put(j, "{\"grouped\": {\"delimiter\": ");
			put_fuzz_string(j, in, (how & 1) ? 66 : 3);
			if (how & 2)
			{
				put(j, ", \"value\": {\"radix\": ");
				put_radix_spec(j, in);
				put(j, "}");
			}
			if (how & 4)
				put(j, (how & 8) ? ", \"group\": \"month\"" : ", \"group\": \"Year\"");
			put(j, "}}");
			break;
		default:
			put(j, "{\"custom\": {\"encode\": \"f(bigint)\", \"decode\": \"g(text)\"}}");
			break;
	}
	put(j, ", ");
}

static void
put_wrapper(Json *j, Input *in)
{
	uint8_t		how = u8(in);
	bool		first = false;

	switch (how % 3)
	{
		case 0:
			put(j, "{\"prefix\": ");
			put_fuzz_string(j, in, (how & 4) ? 66 : 6);
			put(j, "}");
			break;
		case 1:
			put(j, "{\"suffix\": ");
			put_fuzz_string(j, in, (how & 4) ? 66 : 6);
			put(j, "}");
			break;
		default:
			put(j, "{\"date-prefix\": {");
			put_pattern(j, in);
			if (how & 8)
			{
				put(j, ", \"delimiter\": ");
				put_fuzz_string(j, in, 4);
			}
			if (how & 16)
				put(j, (how & 32) ? ", \"source\": \"ID_TIME\"" : ", \"source\": \"now\"");
			put_zone(j, in, &first);
			put(j, "}}");
			break;
	}
}

static void
write_list(Json *j, Input *in)
{
	int			nwrappers = u8(in) % 5;

	j->len = 0;
	j->buf[0] = '\0';
	put(j, "[");
	put_converter(j, in);
	for (int i = 0; i < nwrappers; i++)
	{
		put_wrapper(j, in);
		put(j, ", ");
	}
	/* drop the last ", " */
	if (j->len >= 2 && j->buf[j->len - 2] == ',')
		j->len -= 2;
	j->buf[j->len] = '\0';
	put(j, "]");
}

/* ---------- the target ---------- */

static void
pick_target(Input *in, CosidCodecTarget *t)
{
	uint8_t		how = u8(in);

	memset(t, 0, sizeof(*t));
	switch (how % 4)
	{
		case 0:
			return;				/* ad hoc */
		case 1:
			t->has_gen = t->time_based = true;
			if (how & 4)
				t->layout = cosid_preset_layout((CosidPreset) (u8(in) % 4));
			else
			{
				/* a fuzzed layout of at most 63 bits */
				t->layout.epoch_ms = range(in, -INT64_C(100000000000000), INT64_C(100000000000000));
				t->layout.unit_ms = (how & 8) ? 1000 : 1;
				t->layout.time_bits = (int) range(in, 1, 61);
				t->layout.node_bits = (int) range(in, 0, 61 - t->layout.time_bits);
				t->layout.seq_bits = (int) range(in, 1, 63 - t->layout.time_bits - t->layout.node_bits);
				t->layout.seq_reset_threshold =
					cosid_default_seq_reset_threshold(t->layout.seq_bits);
				/* only what a definition may hold (an epoch on a whole second
				 * for a layout in seconds, ...) */
				if (cosid_layout_check(&t->layout, 63, NULL, 0) != NULL)
					t->layout = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
			}
			if (how & 16)
				t->uncertainty_bits = (int) range(in, 0, 63 - cosid_layout_total_bits(&t->layout));
			return;
		case 2:
			t->has_gen = t->time_based = t->wide = true;
			t->layout = cosid_preset_layout(COSID_PRESET_COSID_80);
			if (how & 4)
				t->layout.epoch_ms = range(in, 0, INT64_C(2000000000000));
			return;
		default:
			t->has_gen = true;
			t->group = (CosidGroup) (u8(in) % 4);
			return;
	}
}

/* ---------- the hooks ---------- */

typedef struct FakeZone
{
	int64_t		offset_s;		/* seconds east of UTC */
} FakeZone;

static const FakeZone zone_utc = {0};
static const FakeZone zone_ist = {5 * 3600 + 1800};
static const FakeZone zone_pst = {-8 * 3600};
static const FakeZone zone_lint = {14 * 3600};

static bool
is_fake_zone(const void *z)
{
	return z == &zone_utc || z == &zone_ist || z == &zone_pst || z == &zone_lint;
}

/* Civil date of days from 1970-01-01, by counting (an oracle of its own). */
static void
fake_civil(int64_t days, int64_t *y, int *m, int *d)
{
	int64_t		year = 1970;
	int64_t		cycles = days / 146097;	/* 400-year cycles */

	days -= cycles * 146097;
	year += cycles * 400;
	if (days < 0)
	{
		days += 146097;
		year -= 400;
	}
	for (;;)
	{
		int			len = cosid_days_in_month((int) (year % 400 + 2000), 2) == 29 ? 366 : 365;

		if (days < len)
			break;
		days -= len;
		year++;
	}
	for (*m = 1;; (*m)++)
	{
		int			dim = cosid_days_in_month((int) (year % 400 + 2000), *m);

		if (days < dim)
			break;
		days -= dim;
	}
	*d = (int) days + 1;
	*y = year;
}

static bool
fake_to_local(void *ctx, const void *zone, int64_t ms, CosidTm *out)
{
	int64_t		local;
	int64_t		days;
	int64_t		rem;
	int64_t		year;

	CHECK(ctx == (void *) &zone_utc && is_fake_zone(zone));
	local = ms + ((const FakeZone *) zone)->offset_s * 1000;
	days = local / 86400000;
	rem = local % 86400000;
	if (rem < 0)
	{
		rem += 86400000;
		days--;
	}
	fake_civil(days, &year, &out->month, &out->day);
	if (year < -100000 || year > 100000)
		return false;
	out->year = (int) year;
	out->hour = (int) (rem / 3600000);
	out->minute = (int) (rem / 60000 % 60);
	out->second = (int) (rem / 1000 % 60);
	out->millis = (int) (rem % 1000);
	return true;
}

static int64_t
fake_local_offset(void *ctx, const void *zone, int64_t local)
{
	(void) local;
	CHECK(ctx == (void *) &zone_utc && is_fake_zone(zone));
	return ((const FakeZone *) zone)->offset_s;
}

static char custom_buf[32];

static void
fake_custom_encode(void *ctx, int64_t id, const char **text, size_t *len)
{
	CHECK(ctx == (void *) &zone_utc);
	*len = (size_t) snprintf(custom_buf, sizeof(custom_buf), "c%" PRId64, id);
	*text = custom_buf;
}

static int64_t
fake_custom_decode(void *ctx, const char *text, size_t len)
{
	char		tmp[32];
	char	   *end;
	long long	v;

	CHECK(ctx == (void *) &zone_utc);
	CHECK(memchr(text, '\0', len) == NULL);
	if (len < 2 || len >= sizeof(tmp) || text[0] != 'c')
		return 0;
	memcpy(tmp, text + 1, len - 1);
	tmp[len - 1] = '\0';
	v = strtoll(tmp, &end, 10);
	return *end == '\0' ? (int64_t) v : 0;
}

static const CosidCodecHooks hooks = {
	fake_to_local, fake_local_offset, fake_custom_encode, fake_custom_decode
};

/* The zone a name binds to (immutable lists: UTC by arithmetic). */
static const void *
bind_zone(const char *name, bool immutable, bool arithmetic)
{
	if (name == NULL || strcmp(name, "UTC") == 0 || strcmp(name, "utc") == 0)
		return immutable || arithmetic ? NULL : &zone_utc;
	if (strcmp(name, "Fixed/+0530") == 0)
		return &zone_ist;
	if (strcmp(name, "Fixed/-0800") == 0)
		return &zone_pst;
	CHECK(strcmp(name, "Fixed/+1400") == 0);
	return &zone_lint;
}

/* ---------- memory ---------- */

typedef struct Arena
{
	void	   *blocks[256];
	int			n;
	int			calls;
} Arena;

static void *
arena_alloc(void *ctx, size_t size)
{
	Arena	   *a = ctx;
	void	   *p;

	a->calls++;
	if (a->n >= 256 || (p = malloc(size > 0 ? size : 1)) == NULL)
		return NULL;
	a->blocks[a->n++] = p;
	return p;
}

static void
arena_free(Arena *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->blocks[i]);
	a->n = 0;
	a->calls = 0;
}

/* ---------- the checks ---------- */

static void
check_error(const CosidCodecPlan *plan, const CosidCodecError *err)
{
	CHECK(err->result == COSID_DECODE_SYNTAX || err->result == COSID_DECODE_RANGE);
	CHECK(memchr(err->message, '\0', sizeof(err->message)) != NULL);
	CHECK(memchr(err->detail, '\0', sizeof(err->detail)) != NULL);
	CHECK(err->message[0] != '\0' || err->detail[0] != '\0');
	CHECK(err->item >= -1 && err->item < plan->codec.nitems);
}

/* An id made of the target's own parts (or any number). */
static void
pick_id(Input *in, const CosidCodecPlan *plan, CosidId *id, bool *in_domain)
{
	const CosidCodecTarget *t = &plan->target;
	const CosidLayout *l = &t->layout;
	uint8_t		how = u8(in);

	memset(id, 0, sizeof(*id));
	id->wide = t->has_gen && t->wide;
	if (id->wide)
	{
		id->time = (how & 1) ? (int64_t) u64(in) : range(in, 0, cosid_layout_max_time(l));
		id->node = (how & 1) ? (int64_t) u64(in) : range(in, 0, (INT64_C(1) << l->node_bits) - 1);
		id->seq = (how & 1) ? (int64_t) u64(in) : range(in, 0, cosid_layout_max_seq(l));
		*in_domain = (how & 1) == 0;
		return;
	}
	if ((how & 3) == 0 || (!t->time_based && t->group == COSID_GROUP_NONE &&
						   cosid_layout_total_bits(l) == 0))
		id->id = (int64_t) u64(in);
	else if (t->group != COSID_GROUP_NONE || (how & 3) == 1)
	{
		/* a periodic segment number: a date's digits and a value */
		CosidGroup	g = t->group != COSID_GROUP_NONE ? t->group : COSID_GROUP_DAY;
		CosidTm		tm = {(int) range(in, 1, 9999), (int) range(in, 1, 12), 1, 0, 0, 0, 0};

		tm.day = (int) range(in, 1, cosid_days_in_month(tm.year, tm.month));
		id->id = cosid_group_period(g, &tm) * cosid_group_scale(g) +
			range(in, 0, cosid_group_scale(g) - 1);
	}
	else
	{
		id->id = cosid_layout_pack(l, range(in, 0, cosid_layout_max_time(l)),
								   range(in, 0, (INT64_C(1) << l->node_bits) - 1),
								   range(in, 0, cosid_layout_max_seq(l)));
		if (t->uncertainty_bits > 0)
			id->id = (int64_t) ((uint64_t) id->id << t->uncertainty_bits |
								(u64(in) & ((UINT64_C(1) << t->uncertainty_bits) - 1)));
	}
	*in_domain = plan->codec.nitems > 0 && plan->codec.items[0].kind == COSID_CODEC_CUSTOM ?
		true : id->id >= 0 && (uint64_t) id->id <= plan->max_id;
}

/* for reports: the list being run */
static const char *current_list;

static void
report(const CosidCodecPlan *plan)
{
	const CosidLayout *l = &plan->target.layout;

	fprintf(stderr, "list %s; target gen=%d time=%d wide=%d group=%d layout epoch %" PRId64
			" unit %" PRId64 " bits %d/%d/%d uncertainty %d\n", current_list,
			plan->target.has_gen, plan->target.time_based, plan->target.wide,
			(int) plan->target.group, l->epoch_ms, l->unit_ms, l->time_bits, l->node_bits,
			l->seq_bits, plan->target.uncertainty_bits);
}

static void
round_trip(const CosidCodecPlan *plan, const CosidId *id, bool in_domain,
		   int64_t now_ms)
{
	Arena		a = {{0}, 0, 0};
	CosidCodecError err;
	CosidId		back;
	char	   *text = NULL;
	int64_t		n = cosid_codec_encode(plan, id, now_ms, arena_alloc, &a, &text, &err);

	if (n < 0)
	{
		check_error(plan, &err);
		CHECK(err.message[0] != '\0');
		CHECK(a.calls == 0);
		arena_free(&a);
		return;
	}
	CHECK(a.calls == 1 && text != NULL);
#ifdef ROUNDTRIP_STATS
	{
		static long counts[COSID_CODEC_MAX_ITEMS + 1][2];
		static long total;
		int			k = plan->codec.nitems > 0 ? (int) plan->codec.items[0].kind : 15;

		counts[k][in_domain]++;
		if (++total % 200000 == 0)
			for (int q = 0; q <= COSID_CODEC_MAX_ITEMS; q++)
				if (counts[q][0] + counts[q][1])
					fprintf(stderr, "kind %d: %ld checked, %ld not\n", q, counts[q][1], counts[q][0]);
	}
#endif
	/* parts-radix of parts outside the layout writes nothing */
	if (in_domain)
	{
		if (!cosid_codec_decode(plan, text, (size_t) n, &back, &err))
		{
			fprintf(stderr, "text \"%.*s\" of id %" PRId64 " (%" PRId64 ", %" PRId64 ", %" PRId64
					") does not decode: item %d: %s%s\n",
					(int) n, text, id->id, id->time, id->node, id->seq, err.item,
					err.message, err.detail);
			report(plan);
			abort();
		}
		CHECK(back.wide == id->wide);
		if (id->wide)
			CHECK(back.time == id->time && back.node == id->node && back.seq == id->seq);
		else if (back.id != id->id)
		{
			fprintf(stderr, "text \"%.*s\" of id %" PRId64 " decodes to %" PRId64 "\n",
					(int) n, text, id->id, back.id);
			report(plan);
			abort();
		}
	}
	arena_free(&a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Input		in = {data, size};
	CosidCodecTarget target;
	CosidCodec	codec;
	CosidCodecPlan plan;
	Arena		parse = {{0}, 0, 0};
	Json		j;
	char		path[256];
	char		msg[512];
	bool		immutable;
	bool		arithmetic;
	CosidCodecRule r;

	pick_target(&in, &target);
	immutable = !target.has_gen && (u8(&in) & 1);
	arithmetic = u8(&in) & 1;
	write_list(&j, &in);
	current_list = j.buf;
	if (!cosid_codec_parse(j.buf, j.len, "codec", arena_alloc, &parse, &codec,
						   path, sizeof(path), msg, sizeof(msg)))
	{
		CHECK(path[0] != '\0' && msg[0] != '\0');
		arena_free(&parse);
		return 0;
	}
	r = cosid_codec_prepare(&plan, &codec, &target, immutable, "codec",
							path, sizeof(path), msg, sizeof(msg));
	for (int i = 0; r == COSID_CODEC_RULE_OK && i < plan.codec.nitems; i++)
	{
		const CosidCodecItem *it = &plan.codec.items[i];

		r = cosid_codec_prepare_item(&plan, i, "codec", path, sizeof(path), msg, sizeof(msg));
		if (r == COSID_CODEC_RULE_OK &&
			(it->kind == COSID_CODEC_FRIENDLY || it->kind == COSID_CODEC_PARTS_FRIENDLY ||
			 it->kind == COSID_CODEC_DATE_PREFIX))
			plan.zones[i] = bind_zone(it->zone, immutable, arithmetic);
	}
	if (r != COSID_CODEC_RULE_OK)
	{
		CHECK(strncmp(path, "codec[", 6) == 0 && msg[0] != '\0');
		CHECK(r == COSID_CODEC_RULE_BROKEN || immutable);
		arena_free(&parse);
		return 0;
	}
	plan.hooks = &hooks;
	plan.hooks_ctx = (void *) &zone_utc;

	/* ids: round trips */
	for (int k = 0; k < 4 && in.n > 0; k++)
	{
		CosidId		id;
		bool		in_domain;

		pick_id(&in, &plan, &id, &in_domain);
		round_trip(&plan, &id, in_domain, range(&in, -INT64_C(300000000000000),
												INT64_C(300000000000000)));
	}

	/* what is left of the input, as text */
	{
		CosidId		id;
		CosidCodecError err;

		if (!cosid_codec_decode(&plan, (const char *) in.p, in.n, &id, &err))
			check_error(&plan, &err);
	}
	arena_free(&parse);
	return 0;
}

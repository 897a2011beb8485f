/*
 * fuzz_definition.c - libFuzzer harness for src/core/definition.c (and the
 * JSON reader under it).
 *
 * Owns: the invariants of cosid_definition_parse() on any input, checked
 * here independently of the code under test:
 *   - an accepted definition obeys every rule (its layout passes timegen's
 *     check, the strategy's limits hold, segment values are in range, no key
 *     of the other kind of generator was written, every key is known, the
 *     codec node is the input's own array);
 *   - written back as JSON with every key explicit, it parses to the same
 *     definition (the canonical form is a fixed point);
 *   - a refused one names a key that is in the text (or "definition", or
 *     "layout" for the bit total), with a message, and leaves *out alone;
 *   - buffers of the text's length + COSID_DEFINITION_TEXT_EXTRA never cut;
 *     smaller ones give a prefix of the same path and message, terminated;
 *   - memory that runs out after k allocations gives "out of memory" or the
 *     same answer as with all the memory; nothing leaks (ASan);
 *   - the hooks are asked only about strings of the text, zones under 64
 *     bytes.
 * Must not: depend on PostgreSQL.  Every violation calls abort().
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "core/definition.h"
#include "core/json.h"
#include "fuzz.h"

#define FILL		0xA5
#define MAX_BLOCKS	65536

/* ---------- memory ---------- */

typedef struct Tracker
{
	void	   *blocks[MAX_BLOCKS];
	size_t		n;
	long		fail_after;		/* -1: never */
	long		calls;
} Tracker;

/* keep: the first parse's answer and the JSON tree, until the input is done;
 * scratch: every other call, reset between them */
static Tracker keep;
static Tracker scratch;
static int	hook_ctx;

static void *
track_alloc(void *ctx, size_t size)
{
	Tracker    *t = ctx;
	void	   *p;

	t->calls++;
	if (t->fail_after >= 0 && t->calls > t->fail_after)
		return NULL;
	if (t->n >= MAX_BLOCKS)
		return NULL;
	p = malloc(size == 0 ? 1 : size);
	CHECK(p != NULL);
	memset(p, FILL, size);
	t->blocks[t->n++] = p;
	return p;
}

static void
track_reset(Tracker *t, long fail_after)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->blocks[i]);
	t->n = 0;
	t->calls = 0;
	t->fail_after = fail_after;
}

/* ---------- hooks: deterministic, and they check what they are asked ---------- */

static const uint8_t *cur_data;
static size_t cur_size;

/* A decoded JSON string has at most as many bytes as its text. */
static void
check_hook_string(const char *s)
{
	CHECK(s != NULL);
	CHECK(strlen(s) <= cur_size);
}

/* Strings starting with a digit are times: their length, in seconds. */
static bool
fuzz_parse_time(void *ctx, const char *text, int64_t *ms)
{
	CHECK(ctx == &hook_ctx);
	check_hook_string(text);
	if (text[0] < '0' || text[0] > '9')
		return false;
	*ms = (int64_t) strlen(text) * 1000;
	return true;
}

/* "UTC" and names of an even length exist. */
static bool
fuzz_zone_exists(void *ctx, const char *name)
{
	CHECK(ctx == &hook_ctx);
	check_hook_string(name);
	CHECK(strlen(name) < COSID_DEFINITION_ZONE_LEN);
	return strcmp(name, "UTC") == 0 || strlen(name) % 2 == 0;
}

static const CosidDefinitionHooks hooks = {&hook_ctx, fuzz_parse_time,
fuzz_zone_exists};

/* ---------- checks ---------- */

static const char *const known_keys[] = {
	"strategy", "layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "codec", "int", "uncertainty-bits",
	"step", "start", "group", "zone", "adopt-sequence", "distributor", "reserve", NULL
};
static const char *const time_keys[] = {
	"layout", "epoch", "unit", "time-bits", "node-bits", "seq-bits",
	"seq-reset-threshold", "clock-regression", "uncertainty-bits", NULL
};
static const char *const segment_keys[] = {
	"step", "start", "group", "zone", "adopt-sequence", "distributor", "reserve", NULL
};

static bool
in_list(const char *key, size_t len, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == len && memcmp(key, list[i], len) == 0)
			return true;
	return false;
}

/* The root object's member called key (len bytes), or NULL. */
static const CosidJsonValue *
member(const CosidJsonValue *obj, const char *key, size_t len)
{
	for (const CosidJsonValue *m = obj->first; m != NULL; m = m->next)
		if (m->key_len == len && memcmp(m->key, key, len) == 0)
			return m;
	return NULL;
}

/* path is a member's key, or starts with one followed by '.' or '['
 * (keys may hold those characters themselves) */
static bool
path_names_member(const CosidJsonValue *obj, const char *path)
{
	size_t		n = strlen(path);

	for (const CosidJsonValue *m = obj->first; m != NULL; m = m->next)
		if (m->key_len <= n && memcmp(m->key, path, m->key_len) == 0 &&
			(path[m->key_len] == '\0' || path[m->key_len] == '.' ||
			 path[m->key_len] == '['))
			return true;
	return false;
}

static void
check_accepted(const CosidDefinition *d, const CosidJsonValue *root,
			   const uint8_t *data, size_t size)
{
	int			total;

	CHECK(root != NULL && root->type == COSID_JSON_OBJECT);
	for (const CosidJsonValue *m = root->first; m != NULL; m = m->next)
	{
		CHECK(in_list(m->key, m->key_len, known_keys));
		if (d->strategy == COSID_STRATEGY_SEGMENT)
			CHECK(!in_list(m->key, m->key_len, time_keys));
		else
			CHECK(!in_list(m->key, m->key_len, segment_keys));
	}
	CHECK(d->policy.borrow_ms >= 0 && d->policy.borrow_ms <= 60000);
	CHECK(d->policy.wait_ms >= 0 && d->policy.wait_ms <= 60000);
	CHECK(memchr(d->zone, '\0', sizeof(d->zone)) != NULL);

	switch (d->strategy)
	{
		case COSID_STRATEGY_SEGMENT:
			{
				static const CosidLayout zero;

				CHECK(memcmp(&d->layout, &zero, sizeof(zero)) == 0);
				CHECK(d->step >= 1 && d->step <= 1000000000);
				CHECK(d->start >= 0 && d->start <= (INT64_C(1) << 62));
				CHECK(d->uncertainty_bits == 0);
				CHECK(d->group >= COSID_GROUP_NONE && d->group <= COSID_GROUP_YEAR);
				if (d->group != COSID_GROUP_NONE)
				{
					CHECK(d->start < cosid_group_scale(d->group));
					CHECK(d->adopt == NULL);
					CHECK(!d->int32);
				}
				if (d->int32)
					CHECK(d->start <= INT32_MAX);
				CHECK(strcmp(d->zone, "UTC") == 0 || strlen(d->zone) % 2 == 0);
				/* the lease store: a reserve, no adopted sequence; local: neither */
				if (d->distributor == COSID_DISTRIBUTOR_LEASE_STORE)
				{
					CHECK(d->adopt == NULL);
					CHECK(d->reserve >= 1 && d->reserve <= COSID_MAX_RESERVE);
					CHECK(member(root, "reserve", 7) != NULL ||
						  d->reserve == COSID_DEFAULT_RESERVE);
				}
				else
				{
					CHECK(d->distributor == COSID_DISTRIBUTOR_LOCAL);
					CHECK(d->reserve == 0 && member(root, "reserve", 7) == NULL);
				}
				break;
			}
		case COSID_STRATEGY_SNOWFLAKE:
		case COSID_STRATEGY_COSID80:
			{
				char		msg[256];
				int			max = d->strategy == COSID_STRATEGY_COSID80 ? 127 : 63;

				CHECK(cosid_layout_check(&d->layout, max, msg, sizeof(msg)) == NULL);
				total = cosid_layout_total_bits(&d->layout);
				CHECK(d->uncertainty_bits >= 0 && d->uncertainty_bits <= 62);
				if (d->strategy == COSID_STRATEGY_COSID80)
					CHECK(!d->int32 && d->uncertainty_bits == 0);
				else
					CHECK(total + d->uncertainty_bits <= 63);
				/* the segment values stay at their defaults */
				CHECK(d->step == 100 && d->start == 1);
				CHECK(d->group == COSID_GROUP_NONE && d->adopt == NULL);
				CHECK(strcmp(d->zone, "UTC") == 0);
				CHECK(d->distributor == COSID_DISTRIBUTOR_LOCAL && d->reserve == 0);
				break;
			}
		default:
			CHECK(!"unknown strategy");
	}

	if (d->adopt != NULL)
	{
		const CosidJsonValue *m = member(root, "adopt-sequence", 14);

		CHECK(m != NULL && m->type == COSID_JSON_STRING);
		CHECK(strcmp(m->str, d->adopt) == 0);
	}
	if (d->codec != NULL)
	{
		const CosidJsonValue *m = member(root, "codec", 5);

		CHECK(m != NULL && m->type == COSID_JSON_ARRAY);
		CHECK(d->codec->type == COSID_JSON_ARRAY && d->codec->count == m->count);
		CHECK(d->codec->offset == m->offset && d->codec->end == m->end && m->end <= size);
		CHECK(data[m->offset] == '[' && data[m->end - 1] == ']');
	}
	else
		CHECK(member(root, "codec", 5) == NULL);
}

/* ---------- writing a definition back ---------- */

typedef struct Out
{
	char	   *buf;
	size_t		len;
	size_t		cap;
} Out;

static void
out_mem(Out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap)
	{
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		CHECK(o->buf != NULL);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void
out_str(Out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void
out_int(Out *o, const char *key, int64_t v)
{
	char		tmp[64];

	snprintf(tmp, sizeof(tmp), ", \"%s\": %lld", key, (long long) v);
	out_str(o, tmp);
}

/* A JSON string: escapes for '"', '\\' and control characters. */
static void
out_json_string(Out *o, const char *s)
{
	out_str(o, "\"");
	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;
		char		tmp[8];

		if (c == '"' || c == '\\')
		{
			tmp[0] = '\\';
			tmp[1] = (char) c;
			out_mem(o, tmp, 2);
		}
		else if (c < 0x20)
		{
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			out_str(o, tmp);
		}
		else
			out_mem(o, (const char *) &c, 1);
	}
	out_str(o, "\"");
}

static void
write_definition(Out *o, const CosidDefinition *d, const uint8_t *text)
{
	static const char *const strategies[] = {"snowflake", "cosid80", "segment"};
	static const char *const groups[] = {NULL, "day", "month", "year"};

	out_str(o, "{\"strategy\": ");
	out_json_string(o, strategies[d->strategy]);
	out_str(o, d->int32 ? ", \"int\": true" : ", \"int\": false");
	if (d->codec != NULL)
	{
		out_str(o, ", \"codec\": ");
		out_mem(o, (const char *) text + d->codec->offset, d->codec->end - d->codec->offset);
	}
	if (d->strategy == COSID_STRATEGY_SEGMENT)
	{
		out_int(o, "step", d->step);
		out_int(o, "start", d->start);
		if (d->group != COSID_GROUP_NONE)
		{
			out_str(o, ", \"group\": ");
			out_json_string(o, groups[d->group]);
		}
		out_str(o, ", \"zone\": ");
		out_json_string(o, d->zone);
		if (d->adopt != NULL)
		{
			out_str(o, ", \"adopt-sequence\": ");
			out_json_string(o, d->adopt);
		}
		if (d->distributor == COSID_DISTRIBUTOR_LEASE_STORE)
		{
			out_str(o, ", \"distributor\": \"lease-store\"");
			out_int(o, "reserve", d->reserve);
		}
		else
			out_str(o, ", \"distributor\": \"local\"");
	}
	else
	{
		out_int(o, "epoch", d->layout.epoch_ms);
		out_str(o, d->layout.unit_ms == 1 ? ", \"unit\": \"ms\"" : ", \"unit\": \"s\"");
		out_int(o, "time-bits", d->layout.time_bits);
		out_int(o, "node-bits", d->layout.node_bits);
		out_int(o, "seq-bits", d->layout.seq_bits);
		out_int(o, "seq-reset-threshold", d->layout.seq_reset_threshold);
		out_str(o, ", \"clock-regression\": {\"borrow-up-to\": ");
		{
			char		tmp[64];

			snprintf(tmp, sizeof(tmp), "%lld, \"wait-up-to\": \"%lldms\"}",
					 (long long) d->policy.borrow_ms, (long long) d->policy.wait_ms);
			out_str(o, tmp);
		}
		out_int(o, "uncertainty-bits", d->uncertainty_bits);
	}
	out_str(o, "}");
}

static bool
same_string(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static void
check_same(const CosidDefinition *a, const uint8_t *a_text,
		   const CosidDefinition *b, const uint8_t *b_text)
{
	CHECK(a->strategy == b->strategy);
	CHECK(memcmp(&a->layout, &b->layout, sizeof(a->layout)) == 0);
	CHECK(a->policy.borrow_ms == b->policy.borrow_ms);
	CHECK(a->policy.wait_ms == b->policy.wait_ms);
	CHECK(a->int32 == b->int32);
	CHECK(a->uncertainty_bits == b->uncertainty_bits);
	CHECK(a->step == b->step && a->start == b->start && a->group == b->group);
	CHECK(strcmp(a->zone, b->zone) == 0);
	CHECK(same_string(a->adopt, b->adopt));
	CHECK(a->distributor == b->distributor && a->reserve == b->reserve);
	CHECK((a->codec == NULL) == (b->codec == NULL));
	if (a->codec != NULL)
		CHECK(a->codec->end - a->codec->offset == b->codec->end - b->codec->offset &&
			  memcmp(a_text + a->codec->offset, b_text + b->codec->offset,
					 a->codec->end - a->codec->offset) == 0);
}

/* ---------- the harness ---------- */

/* strlen within n bytes (strnlen is not C11) */
static size_t
bounded_len(const char *s, size_t n)
{
	const char *z = memchr(s, '\0', n);

	return z == NULL ? n : (size_t) (z - s);
}

static size_t
pick_len(uint8_t b)
{
	static const size_t sizes[] = {0, 1, 2, 5, 17, 40, 100};

	return sizes[b % 7];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t		big = size + COSID_DEFINITION_TEXT_EXTRA;
	size_t		huge = 2 * size + 4096;
	char	   *path = malloc(huge);
	char	   *msg = malloc(huge);
	char	   *path2 = malloc(huge);
	char	   *msg2 = malloc(huge);
	CosidDefinition def;
	CosidDefinition def2;
	CosidDefinition fill;
	const CosidJsonValue *root;
	char		jpath[64];
	char		jmsg[128];
	bool		ok;
	long		calls;

	CHECK(path && msg && path2 && msg2);
	cur_data = data;
	cur_size = size;
	memset(&fill, 0x5A, sizeof(fill));

	/* With buffers that are never too small */
	track_reset(&keep, -1);
	def = fill;
	memset(path, FILL, huge);
	memset(msg, FILL, huge);
	ok = cosid_definition_parse((const char *) data, size, &hooks, track_alloc,
								&keep, &def, path, huge, msg, huge);
	calls = keep.calls;
	CHECK(memchr(path, '\0', huge) != NULL && memchr(msg, '\0', huge) != NULL);
	CHECK(strlen(path) < big && strlen(msg) < big);

	/* the JSON on its own, for the oracles */
	root = cosid_json_parse((const char *) data, size, track_alloc, &keep,
							NULL, jpath, sizeof(jpath), jmsg, sizeof(jmsg));
	if (ok)
	{
		check_accepted(&def, root, data, size);
		CHECK(path[0] == '\0' && msg[0] == '\0');
	}
	else
	{
		CHECK(memcmp(&def, &fill, sizeof(def)) == 0);
		/* the path may be empty: the key "" */
		CHECK(msg[0] != '\0');
		if (root == NULL)
			CHECK(strcmp(path, "definition") == 0 ||
				  strncmp(msg, "duplicate key at byte ", 22) == 0);
		else if (root->type != COSID_JSON_OBJECT)
			CHECK(strcmp(path, "definition") == 0);
		else if (strcmp(path, "layout") != 0 &&
				 strcmp(msg, "out of memory") != 0)
			CHECK(path_names_member(root, path));
	}

	/* Buffers of the text's length + EXTRA: the same, uncut */
	track_reset(&scratch, -1);
	def2 = fill;
	CHECK(cosid_definition_parse((const char *) data, size, &hooks, track_alloc,
								 &scratch, &def2, path2, big, msg2, big) == ok);
	CHECK(strcmp(path, path2) == 0 && strcmp(msg, msg2) == 0);
	if (ok)
		check_same(&def, data, &def2, data);

	/* Small buffers: a prefix of the same, terminated */
	if (size > 0)
	{
		size_t		pl = pick_len(data[0]);
		size_t		ml = pick_len(data[size - 1]);

		track_reset(&scratch, -1);
		memset(path2, FILL, huge);
		memset(msg2, FILL, huge);
		CHECK(cosid_definition_parse((const char *) data, size, &hooks, track_alloc,
									 &scratch, &def2, pl ? path2 : NULL, pl,
									 ml ? msg2 : NULL, ml) == ok);
		if (pl > 0)
		{
			size_t		n = bounded_len(path2, pl);

			CHECK(n < pl && strncmp(path2, path, n) == 0);
			CHECK((unsigned char) path2[pl] == FILL);
		}
		if (ml > 0)
		{
			size_t		n = bounded_len(msg2, ml);

			CHECK(n < ml && strncmp(msg2, msg, n) == 0);
			CHECK((unsigned char) msg2[ml] == FILL);
		}
	}

	/* Memory that runs out part way */
	if (calls > 0 && size > 1)
	{
		long		k = (long) (data[1] % (unsigned long) (calls + 1));
		bool		ok2;

		track_reset(&scratch, k);
		def2 = fill;
		ok2 = cosid_definition_parse((const char *) data, size, &hooks,
									 track_alloc, &scratch, &def2, path2, big,
									 msg2, big);
		if (k >= calls)
			CHECK(ok2 == ok && strcmp(path2, path) == 0 && strcmp(msg2, msg) == 0);
		else if (ok2)
			CHECK(!"succeeded with less memory than it used");
		else if (strcmp(msg2, "out of memory") == 0)
		{
			CHECK(strcmp(path2, "definition") == 0);
			CHECK(memcmp(&def2, &fill, sizeof(def2)) == 0);
		}
		else
			CHECK(!ok && strcmp(path2, path) == 0 && strcmp(msg2, msg) == 0);
	}

	/* Written back with every key explicit: the same definition */
	if (ok)
	{
		Out			o = {NULL, 0, 0};
		char		p3[COSID_DEFINITION_TEXT_EXTRA];
		char		m3[COSID_DEFINITION_TEXT_EXTRA];
		CosidDefinition def3;
		CosidCodec	codec;

		write_definition(&o, &def, data);
		cur_data = (const uint8_t *) o.buf;
		cur_size = o.len;
		track_reset(&scratch, -1);
		if (!cosid_definition_parse(o.buf, o.len, &hooks, track_alloc, &scratch,
									&def3, p3, sizeof(p3), m3, sizeof(m3)))
		{
			fprintf(stderr, "written back: %s\nrefused: %s: %s\n", o.buf, p3, m3);
			abort();
		}
		check_same(&def, data, &def3, (const uint8_t *) o.buf);

		/* the codec node is what the codec parser reads (any answer) */
		if (def.codec != NULL)
			(void) cosid_codec_parse_node(def.codec, "codec",
										  track_alloc, &scratch, &codec, p3,
										  sizeof(p3), m3, sizeof(m3));
		free(o.buf);
	}

	track_reset(&keep, -1);
	track_reset(&scratch, -1);
	free(path);
	free(msg);
	free(path2);
	free(msg2);
	return 0;
}

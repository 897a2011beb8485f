/*
 * codec.c - the codec-list parser (no PostgreSQL): a JSON array of items
 * (json.c parses the text) checked item by item into a CosidCodec, with the
 * JSON path and what was expected for the first thing wrong.
 *
 * Owns: the items' names, keys, defaults and limits, and the walk that
 * names a path ("codec[1].date-prefix.source").
 * Must not: turn numbers into text (radix.c, datetext.c, parts.c and
 * grouped.c do), or apply rules that depend on a generator's strategy (the
 * caller does, with the items' indexes).
 */
#include "codec.h"
#include "json.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

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
#define MAX_PATTERN_BYTES	COSID_CODEC_MAX_PATTERN
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
		cosid_set_msg(w->msg, w->msglen, text);
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

/* A string that is word, ASCII case folded. */
static bool
equals_word(const CosidJsonValue *v, const char *word)
{
	return v->type == COSID_JSON_STRING && cosid_word_eq(v->str, word);
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
		int			k = cosid_key_index(m->key, keys);
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
		int			k = cosid_key_index(m->key, keys);
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
		int			k = cosid_key_index(m->key, keys);
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
		int			k = cosid_key_index(m->key, keys);
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
		int			k = cosid_key_index(m->key, keys);
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

/* The walk's state at the list itself, and cleared outputs. */
static void
walk_start(CodecWalk *w, const char *path_prefix, CosidAlloc alloc,
		   void *alloc_ctx, CosidCodec *out, char *path, size_t pathlen,
		   char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	memset(w, 0, sizeof(*w));
	w->prefix = path_prefix;
	w->index = -1;
	w->alloc = alloc;
	w->alloc_ctx = alloc_ctx;
	w->path = path;
	w->pathlen = pathlen;
	w->msg = msg;
	w->msglen = msglen;
	if (path != NULL && pathlen > 0)
		path[0] = '\0';
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
}

/* The list's array, item by item. */
static bool
walk_list(CodecWalk *w, const CosidJsonValue *root, CosidCodec *out)
{
	int			i = 0;

	if (root->type != COSID_JSON_ARRAY)
		return walk_fail(w, "expected an array of codec items");
	if (root->count > COSID_CODEC_MAX_ITEMS)
	{
		if (w->msg != NULL && w->msglen > 0)
			snprintf(w->msg, w->msglen, "expected at most %d items",
					 COSID_CODEC_MAX_ITEMS);
		return walk_fail(w, NULL);
	}

	for (const CosidJsonValue *e = root->first; e != NULL; e = e->next, i++)
	{
		w->index = i;
		w->nseg = 0;
		if (!parse_item(w, e, &out->items[i]))
			return false;
	}
	out->nitems = root->count;
	return true;
}

bool
cosid_codec_parse_node(const CosidJsonValue *root, const char *path_prefix,
					   CosidAlloc alloc, void *alloc_ctx, CosidCodec *out,
					   char *path, size_t pathlen, char *msg, size_t msglen)
{
	CodecWalk	w;

	walk_start(&w, path_prefix, alloc, alloc_ctx, out, path, pathlen, msg,
			   msglen);
	return walk_list(&w, root, out);
}

bool
cosid_codec_parse(const char *json, size_t len, const char *path_prefix,
				  CosidAlloc alloc, void *alloc_ctx, CosidCodec *out,
				  char *path, size_t pathlen, char *msg, size_t msglen)
{
	CosidJsonValue *root;
	CodecWalk	w;

	walk_start(&w, path_prefix, alloc, alloc_ctx, out, path, pathlen, msg,
			   msglen);
	root = cosid_json_parse(json, len, alloc, alloc_ctx, path_prefix,
							path, pathlen, msg, msglen);
	if (root == NULL)
		return false;
	return walk_list(&w, root, out);
}

/*
 * json.c - the one strict JSON parser of cosid (no PostgreSQL): definitions
 * (definition.c) and codec lists (codec.c) are read with it.
 *
 * Recursive descent over an explicit length; recursion is bounded by
 * COSID_JSON_MAX_DEPTH.  Every node and string comes from the caller's
 * allocator.  Duplicate keys are found with a quadratic scan for small
 * objects and a sort for large ones, so no input makes the check quadratic
 * in its size.
 *
 * Owns: the grammar and the tree.  Must not: know what the keys mean.
 */
#include "json.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects up to this many members are checked for duplicates pairwise. */
#define DUP_SCAN_MAX 16

/* Where the parser stands inside one container, for error paths. */
typedef struct JsonFrame
{
	bool		is_array;
	int			index;			/* array: the element's index */
	const char *key;			/* object: the member's key */
	size_t		key_len;
} JsonFrame;

typedef struct JsonParser
{
	const char *s;
	size_t		len;
	size_t		pos;
	CosidAlloc	alloc;
	void	   *alloc_ctx;
	int			depth;
	JsonFrame	frames[COSID_JSON_MAX_DEPTH];
	const char *path_prefix;
	char	   *path;
	size_t		pathlen;
	char	   *msg;
	size_t		msglen;
} JsonParser;

void
cosid_buf_append(char *buf, size_t size, size_t *pos, const char *s, size_t n)
{
	size_t		room;

	if (buf == NULL || size == 0 || *pos >= size)
		return;
	room = size - 1 - *pos;
	if (n > room)
	{
		/* Do not leave half a UTF-8 character at the end. */
		n = cosid_utf8_trim(s, room);
		memcpy(buf + *pos, s, n);
		buf[*pos + n] = '\0';
		/* Full: later pieces must not follow a cut one. */
		*pos = size;
		return;
	}
	memcpy(buf + *pos, s, n);
	*pos += n;
	buf[*pos] = '\0';
}

/* Set path to the prefix; returns its length. */
static size_t
set_path_prefix(JsonParser *p)
{
	size_t		pos = 0;

	if (p->path != NULL && p->pathlen > 0)
		p->path[0] = '\0';
	if (p->path_prefix != NULL)
		cosid_buf_append(p->path, p->pathlen, &pos, p->path_prefix,
						 strlen(p->path_prefix));
	return pos;
}

/* A syntax error at byte offset `at`: path is the prefix alone. */
static void
syntax_error(JsonParser *p, size_t at, const char *what)
{
	set_path_prefix(p);
	if (p->msg != NULL && p->msglen > 0)
		snprintf(p->msg, p->msglen, "invalid JSON at byte %zu: %s", at, what);
}

static void
out_of_memory(JsonParser *p)
{
	set_path_prefix(p);
	if (p->msg != NULL && p->msglen > 0)
		snprintf(p->msg, p->msglen, "out of memory");
}

static void *
parser_alloc(JsonParser *p, size_t size)
{
	void	   *m = p->alloc(p->alloc_ctx, size);

	if (m == NULL)
		out_of_memory(p);
	return m;
}

static CosidJsonValue *
new_value(JsonParser *p, CosidJsonType type, size_t offset)
{
	CosidJsonValue *v = parser_alloc(p, sizeof(CosidJsonValue));

	if (v == NULL)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->offset = offset;
	return v;
}

static void
skip_ws(JsonParser *p)
{
	while (p->pos < p->len)
	{
		char		c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

/* Four hex digits at p->s[at]; -1 when they are not there. */
static long
read_hex4(JsonParser *p, size_t at)
{
	long		v = 0;

	if (at > p->len || p->len - at < 4)
		return -1;
	for (int i = 0; i < 4; i++)
	{
		int			h = cosid_hex_value(p->s[at + i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t
put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80)
	{
		out[0] = (char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		out[0] = (char) (0xC0 | (cp >> 6));
		out[1] = (char) (0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000)
	{
		out[0] = (char) (0xE0 | (cp >> 12));
		out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char) (0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char) (0xF0 | (cp >> 18));
	out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char) (0x80 | (cp & 0x3F));
	return 4;
}

/*
 * A string starting at the opening quote.  The decoded text is never longer
 * than the raw text (an escape of 6 or 12 bytes gives at most 3 or 4), so
 * one allocation of the raw length is enough.
 */
static bool
parse_string(JsonParser *p, const char **out, size_t *out_len)
{
	size_t		start = p->pos + 1;
	size_t		end = start;
	char	   *buf;
	size_t		n = 0;

	/* Find the closing quote first, to size the buffer. */
	while (end < p->len && p->s[end] != '"')
	{
		if (p->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len)
	{
		syntax_error(p, p->pos, "unterminated string");
		return false;
	}

	buf = parser_alloc(p, end - start + 1);
	if (buf == NULL)
		return false;

	p->pos = start;
	while (p->pos < end)
	{
		unsigned char c = (unsigned char) p->s[p->pos];

		if (c < 0x20)
		{
			syntax_error(p, p->pos,
						 "control characters must be escaped in a string");
			return false;
		}
		if (c != '\\')
		{
			buf[n++] = (char) c;
			p->pos++;
			continue;
		}
		/* An escape: end > pos + 1 holds, as the scan above skipped it. */
		switch (p->s[p->pos + 1])
		{
			case '"':
				buf[n++] = '"';
				break;
			case '\\':
				buf[n++] = '\\';
				break;
			case '/':
				buf[n++] = '/';
				break;
			case 'b':
				buf[n++] = '\b';
				break;
			case 'f':
				buf[n++] = '\f';
				break;
			case 'n':
				buf[n++] = '\n';
				break;
			case 'r':
				buf[n++] = '\r';
				break;
			case 't':
				buf[n++] = '\t';
				break;
			case 'u':
				{
					long		cp = read_hex4(p, p->pos + 2);
					unsigned long full;

					if (cp < 0 || p->pos + 6 > end)
					{
						syntax_error(p, p->pos, "expected four hex digits after \\u");
						return false;
					}
					if (cp == 0)
					{
						syntax_error(p, p->pos, "\\u0000 is not allowed in a string");
						return false;
					}
					if (cp >= 0xDC00 && cp <= 0xDFFF)
					{
						syntax_error(p, p->pos,
									 "a low surrogate without a high surrogate before it");
						return false;
					}
					if (cp >= 0xD800 && cp <= 0xDBFF)
					{
						long		lo = -1;

						if (p->pos + 12 <= end && p->s[p->pos + 6] == '\\' &&
							p->s[p->pos + 7] == 'u')
							lo = read_hex4(p, p->pos + 8);
						if (lo < 0xDC00 || lo > 0xDFFF)
						{
							syntax_error(p, p->pos,
										 "a high surrogate without a low surrogate after it");
							return false;
						}
						full = 0x10000 + (((unsigned long) cp - 0xD800) << 10) +
							((unsigned long) lo - 0xDC00);
						n += put_utf8(buf + n, full);
						p->pos += 12;
						continue;
					}
					n += put_utf8(buf + n, (unsigned long) cp);
					p->pos += 6;
					continue;
				}
			default:
				syntax_error(p, p->pos, "invalid escape in a string");
				return false;
		}
		p->pos += 2;
	}
	buf[n] = '\0';
	p->pos = end + 1;
	*out = buf;
	*out_len = n;
	return true;
}

/* A number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static CosidJsonValue *
parse_number(JsonParser *p)
{
	size_t		start = p->pos;
	bool		neg = false;
	bool		overflow = false;
	uint64_t	mag = 0;
	CosidJsonValue *v;

	if (p->s[p->pos] == '-')
	{
		neg = true;
		p->pos++;
	}
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
	{
		syntax_error(p, p->pos, "expected a digit");
		return NULL;
	}
	if (p->s[p->pos] == '0')
	{
		p->pos++;
		if (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
		{
			syntax_error(p, start, "a number cannot have a leading zero");
			return NULL;
		}
	}
	else
	{
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
		{
			unsigned	d = (unsigned) (p->s[p->pos] - '0');

			if (mag > (UINT64_MAX - d) / 10)
				overflow = true;
			else
				mag = mag * 10 + d;
			p->pos++;
		}
	}

	v = new_value(p, COSID_JSON_NUMBER, start);
	if (v == NULL)
		return NULL;
	v->is_integer = true;

	if (p->pos < p->len && p->s[p->pos] == '.')
	{
		p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		{
			syntax_error(p, p->pos, "expected a digit after the decimal point");
			return NULL;
		}
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
		v->is_integer = false;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
	{
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		{
			syntax_error(p, p->pos, "expected a digit in the exponent");
			return NULL;
		}
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
		v->is_integer = false;
	}

	if (v->is_integer && !overflow)
	{
		if (!neg && mag <= (uint64_t) INT64_MAX)
		{
			v->int_fits = true;
			v->integer = (int64_t) mag;
		}
		else if (neg && mag <= (uint64_t) INT64_MAX + 1)
		{
			v->int_fits = true;
			v->integer = mag == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) mag;
		}
	}
	return v;
}

/* Render the path to the current object, then ".key", into p->path. */
static void
duplicate_error(JsonParser *p, const CosidJsonValue *dup)
{
	size_t		pos;
	char		num[24];

	pos = set_path_prefix(p);
	/* frames[0 .. depth-2] lead to this object (frames[depth-1] is its own). */
	for (int d = 0; d < p->depth - 1; d++)
	{
		if (p->frames[d].is_array)
		{
			int			n = snprintf(num, sizeof(num), "[%d]", p->frames[d].index);

			cosid_buf_append(p->path, p->pathlen, &pos, num, (size_t) n);
		}
		else
		{
			cosid_buf_append(p->path, p->pathlen, &pos, ".", 1);
			cosid_buf_append(p->path, p->pathlen, &pos, p->frames[d].key,
							 p->frames[d].key_len);
		}
	}
	cosid_buf_append(p->path, p->pathlen, &pos, ".", 1);
	cosid_buf_append(p->path, p->pathlen, &pos, dup->key, dup->key_len);
	if (p->msg != NULL && p->msglen > 0)
		snprintf(p->msg, p->msglen, "duplicate key at byte %zu", dup->key_offset);
}

static bool
same_key(const CosidJsonValue *a, const CosidJsonValue *b)
{
	return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static int
member_cmp(const void *x, const void *y)
{
	const CosidJsonValue *a = *(const CosidJsonValue *const *) x;
	const CosidJsonValue *b = *(const CosidJsonValue *const *) y;
	size_t		n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int			c = memcmp(a->key, b->key, n);

	if (c != 0)
		return c;
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	return a->key_offset < b->key_offset ? -1 : a->key_offset > b->key_offset;
}

/*
 * The member that repeats an earlier key and comes first in the text, or
 * NULL; *oom set when the sort's array could not be had.
 */
static const CosidJsonValue *
find_duplicate(JsonParser *p, const CosidJsonValue *obj, bool *oom)
{
	const CosidJsonValue **arr;
	const CosidJsonValue *best = NULL;
	int			i = 0;

	*oom = false;
	if (obj->count <= DUP_SCAN_MAX)
	{
		for (const CosidJsonValue *b = obj->first; b != NULL; b = b->next)
			for (const CosidJsonValue *a = obj->first; a != b; a = a->next)
				if (same_key(a, b))
					return b;
		return NULL;
	}

	arr = parser_alloc(p, sizeof(*arr) * (size_t) obj->count);
	if (arr == NULL)
	{
		*oom = true;
		return NULL;
	}
	for (const CosidJsonValue *m = obj->first; m != NULL; m = m->next)
		arr[i++] = m;
	qsort(arr, (size_t) obj->count, sizeof(*arr), member_cmp);
	for (i = 1; i < obj->count; i++)
	{
		if (same_key(arr[i - 1], arr[i]) &&
			(best == NULL || arr[i]->key_offset < best->key_offset))
			best = arr[i];
	}
	return best;
}

static CosidJsonValue *parse_value(JsonParser *p);

static CosidJsonValue *
parse_array(JsonParser *p)
{
	CosidJsonValue *arr = new_value(p, COSID_JSON_ARRAY, p->pos);
	CosidJsonValue **tail;
	JsonFrame  *f;

	if (arr == NULL)
		return NULL;
	tail = &arr->first;
	f = &p->frames[p->depth - 1];
	f->is_array = true;
	f->index = 0;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']')
	{
		p->pos++;
		return arr;
	}
	for (;;)
	{
		CosidJsonValue *e;

		f->index = arr->count;
		e = parse_value(p);
		if (e == NULL)
			return NULL;
		*tail = e;
		tail = &e->next;
		arr->count++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',')
		{
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == ']')
		{
			p->pos++;
			return arr;
		}
		syntax_error(p, p->pos, "expected \",\" or \"]\"");
		return NULL;
	}
}

static CosidJsonValue *
parse_object(JsonParser *p)
{
	CosidJsonValue *obj = new_value(p, COSID_JSON_OBJECT, p->pos);
	CosidJsonValue **tail;
	const CosidJsonValue *dup;
	JsonFrame  *f;
	bool		oom;

	if (obj == NULL)
		return NULL;
	tail = &obj->first;
	f = &p->frames[p->depth - 1];
	f->is_array = false;
	f->key = "";
	f->key_len = 0;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}')
	{
		p->pos++;
		return obj;
	}
	for (;;)
	{
		const char *key;
		size_t		key_len;
		size_t		key_offset;
		CosidJsonValue *e;

		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != '"')
		{
			syntax_error(p, p->pos, "expected a string as an object key");
			return NULL;
		}
		key_offset = p->pos;
		if (!parse_string(p, &key, &key_len))
			return NULL;
		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != ':')
		{
			syntax_error(p, p->pos, "expected \":\" after an object key");
			return NULL;
		}
		p->pos++;
		f->key = key;
		f->key_len = key_len;
		e = parse_value(p);
		if (e == NULL)
			return NULL;
		e->key = key;
		e->key_len = key_len;
		e->key_offset = key_offset;
		*tail = e;
		tail = &e->next;
		obj->count++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',')
		{
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == '}')
		{
			p->pos++;
			break;
		}
		syntax_error(p, p->pos, "expected \",\" or \"}\"");
		return NULL;
	}

	dup = find_duplicate(p, obj, &oom);
	if (oom)
		return NULL;
	if (dup != NULL)
	{
		duplicate_error(p, dup);
		return NULL;
	}
	return obj;
}

static bool
match_literal(JsonParser *p, const char *lit)
{
	size_t		n = strlen(lit);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0)
		return false;
	p->pos += n;
	return true;
}

static CosidJsonValue *
parse_value_here(JsonParser *p)
{
	CosidJsonValue *v;
	size_t		start;

	skip_ws(p);
	start = p->pos;
	if (p->pos >= p->len)
	{
		syntax_error(p, p->pos, "unexpected end of input, expected a value");
		return NULL;
	}
	switch (p->s[p->pos])
	{
		case '[':
		case '{':
			if (p->depth >= COSID_JSON_MAX_DEPTH)
			{
				syntax_error(p, p->pos, "nested deeper than 32 levels");
				return NULL;
			}
			p->depth++;
			v = p->s[p->pos] == '[' ? parse_array(p) : parse_object(p);
			p->depth--;
			return v;
		case '"':
			v = new_value(p, COSID_JSON_STRING, start);
			if (v == NULL || !parse_string(p, &v->str, &v->str_len))
				return NULL;
			return v;
		case 't':
			if (match_literal(p, "true"))
				return new_value(p, COSID_JSON_TRUE, start);
			break;
		case 'f':
			if (match_literal(p, "false"))
				return new_value(p, COSID_JSON_FALSE, start);
			break;
		case 'n':
			if (match_literal(p, "null"))
				return new_value(p, COSID_JSON_NULL, start);
			break;
		case '-':
		case '0':
		case '1':
		case '2':
		case '3':
		case '4':
		case '5':
		case '6':
		case '7':
		case '8':
		case '9':
			return parse_number(p);
		default:
			break;
	}
	syntax_error(p, start, "expected a value");
	return NULL;
}

/* A value, with the offset just past it. */
static CosidJsonValue *
parse_value(JsonParser *p)
{
	CosidJsonValue *v = parse_value_here(p);

	if (v != NULL)
		v->end = p->pos;
	return v;
}

CosidJsonValue *
cosid_json_parse(const char *text, size_t len, CosidAlloc alloc,
				 void *alloc_ctx, const char *path_prefix, char *path,
				 size_t pathlen, char *msg, size_t msglen)
{
	JsonParser	p;
	CosidJsonValue *v;

	memset(&p, 0, sizeof(p));
	p.s = text;
	p.len = text == NULL ? 0 : len;
	p.alloc = alloc;
	p.alloc_ctx = alloc_ctx;
	p.path_prefix = path_prefix;
	p.path = path;
	p.pathlen = pathlen;
	p.msg = msg;
	p.msglen = msglen;

	v = parse_value(&p);
	if (v == NULL)
		return NULL;
	skip_ws(&p);
	if (p.pos < p.len)
	{
		syntax_error(&p, p.pos, "unexpected data after the JSON value");
		return NULL;
	}
	return v;
}

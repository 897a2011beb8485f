/*
 * json.h - a small strict JSON parser for codec lists (internal to
 * src/core; no PostgreSQL).
 *
 * The whole text becomes a tree allocated through the caller's CosidAlloc;
 * nothing is freed here (the caller frees its arena at once).  Strict: RFC
 * 8259 grammar, nothing after the value but white space, nesting at most
 * COSID_JSON_MAX_DEPTH, no key twice in one object, no U+0000 in a string
 * (strings come out NUL-terminated), no raw control characters in strings.
 * Bytes from 0x80 up pass through unchecked: the caller's encoding rules
 * apply to them; \u escapes are written as UTF-8.
 *
 * Owns: CosidJsonValue, the JSON grammar and its messages, and
 * cosid_buf_append.
 * Must not: know codec lists (codec.c reads the tree), or include any
 * header of src/core but alloc.h.
 */
#ifndef COSID_CORE_JSON_H
#define COSID_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

#define COSID_JSON_MAX_DEPTH 32

typedef enum CosidJsonType
{
	COSID_JSON_NULL,
	COSID_JSON_FALSE,
	COSID_JSON_TRUE,
	COSID_JSON_NUMBER,
	COSID_JSON_STRING,
	COSID_JSON_ARRAY,
	COSID_JSON_OBJECT
} CosidJsonType;

typedef struct CosidJsonValue CosidJsonValue;

struct CosidJsonValue
{
	CosidJsonType type;
	size_t		offset;			/* byte offset of the value in the text */
	size_t		end;			/* byte offset just past the value: the
								 * value's text is [offset, end) */
	/* number */
	bool		is_integer;		/* no fraction and no exponent */
	bool		int_fits;		/* is_integer and within int64 */
	int64_t		integer;		/* the value when int_fits */
	/* string: decoded, NUL-terminated, no NUL inside */
	const char *str;
	size_t		str_len;
	/* array, object: children in order, linked through next */
	int			count;
	CosidJsonValue *first;
	/* as a child: the next sibling, and in an object the member's key */
	CosidJsonValue *next;
	const char *key;
	size_t		key_len;
	size_t		key_offset;
};

/*
 * Parse len bytes.  On failure returns NULL, with path set to path_prefix
 * followed by the JSON path of the offending key for a duplicate key (e.g.
 * "codec[0].radix.radix"), or to path_prefix alone otherwise, and msg
 * naming the byte offset (0-based) and what was expected there.
 */
extern CosidJsonValue *cosid_json_parse(const char *text, size_t len,
										CosidAlloc alloc, void *alloc_ctx,
										const char *path_prefix,
										char *path, size_t pathlen,
										char *msg, size_t msglen);

/*
 * Append n bytes of s to buf (size bytes, NUL-terminated) at *pos, cutting
 * on a UTF-8 character boundary when it does not fit.  After a cut the
 * buffer counts as full (*pos = size): later appends add nothing, so buf
 * always holds a prefix of everything appended.
 */
extern void cosid_buf_append(char *buf, size_t size, size_t *pos,
							 const char *s, size_t n);

#endif							/* COSID_CORE_JSON_H */

/*
 * codec.h - CosId codec lists without PostgreSQL: the parser of a codec
 * list written in JSON, its items and their kinds.
 *
 * A codec is an ordered list, applied in the order written.  The first item
 * turns the number into text (radix, friendly, custom, parts-radix,
 * parts-friendly, grouped); without one the text is decimal.  Later items
 * wrap it (prefix, suffix, date-prefix).  Decoding runs the list backwards.
 *
 * Time zones and SQL functions are PostgreSQL's business: this code sees
 * broken-down times (CosidTm) and names only.  The caller runs the pipeline.
 *
 * Each item's text lives in a header of its own, which this one includes,
 * so that the PostgreSQL side reaches every codec through it: radix.h (radix
 * text, and the canonical forms every decoder keeps), datetext.h (date
 * patterns and friendly text), parts.h (parts-radix text), grouped.h
 * (periodic segment numbers).
 *
 * Owns: CosidCodecKind, CosidCodecItem, CosidCodec, the items' JSON names,
 * keys, defaults and limits, and the paths and messages of a bad list.
 * Must not: run a pipeline, resolve zones or functions, or know strategies
 * (rules that depend on the generator are the caller's); turn numbers into
 * text (the item headers above do).
 */
#ifndef COSID_CORE_CODEC_H
#define COSID_CORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "datetext.h"
#include "grouped.h"
#include "parts.h"
#include "radix.h"
#include "timegen.h"

/* ---------- codec lists ---------- */

typedef enum CosidCodecKind
{
	COSID_CODEC_RADIX,
	COSID_CODEC_FRIENDLY,
	COSID_CODEC_CUSTOM,
	COSID_CODEC_PARTS_RADIX,
	COSID_CODEC_PARTS_FRIENDLY,
	COSID_CODEC_GROUPED,
	COSID_CODEC_PREFIX,
	COSID_CODEC_SUFFIX,
	COSID_CODEC_DATE_PREFIX
} CosidCodecKind;

typedef enum CosidDateSource
{
	COSID_SOURCE_ID_TIME,
	COSID_SOURCE_NOW
} CosidDateSource;

/* One item.  Strings point into the parser's arena, NUL-terminated. */
typedef struct CosidCodecItem
{
	CosidCodecKind kind;
	CosidRadix	radix;			/* radix, parts-radix; grouped's value */
	bool		pad_start;		/* friendly, parts-friendly */
	const char *zone;			/* friendly, parts-friendly, date-prefix; NULL:
								 * UTC */
	bool		has_layout;		/* friendly (ad hoc): "layout" given */
	CosidPreset layout;			/* friendly (ad hoc) */
	const char *text;			/* prefix, suffix */
	const char *pattern;		/* date-prefix */
	int			pattern_len;	/* its formatted length */
	const char *delimiter;		/* date-prefix, grouped */
	bool		has_source;		/* date-prefix: "source" given */
	CosidDateSource source;		/* date-prefix */
	CosidGroup	group;			/* grouped (ad hoc): "group", default day */
	bool		value_is_radix; /* grouped: value item given (else decimal) */
	const char *encode_fn;		/* custom: "f(bigint)" */
	const char *decode_fn;		/* custom: "g(text)" */
} CosidCodecItem;

#define COSID_CODEC_MAX_ITEMS 16

typedef struct CosidCodec
{
	int			nitems;
	CosidCodecItem items[COSID_CODEC_MAX_ITEMS];
} CosidCodec;


/*
 * Parse a codec list from JSON text (an array of objects, each with one key
 * naming the item) and check each item on its own.  On failure returns
 * false with path set to the JSON path of the bad key ("codec[1].date-prefix
 * .source", using path_prefix for the list itself) and msg to what was
 * expected ("expected \"ID_TIME\" or \"NOW\"").  Strategy-dependent rules
 * (ID_TIME needs a time-based generator, parts-* needs cosid80, grouped
 * needs a periodic segment) are the caller's, with the items' indexes.
 */
extern bool cosid_codec_parse(const char *json, size_t len,
							  const char *path_prefix, CosidAlloc alloc,
							  void *alloc_ctx, CosidCodec *out,
							  char *path, size_t pathlen,
							  char *msg, size_t msglen);

/* The item's key as written in JSON ("date-prefix"); NULL for no kind. */
extern const char *cosid_codec_kind_name(CosidCodecKind k);

#endif							/* COSID_CORE_CODEC_H */

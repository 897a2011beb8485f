/*
 * codec.h - CosId codec lists without PostgreSQL, the one codec API
 * (cosid_codec_*): a list's items and their kinds, its parser (codec.c),
 * its rules for what it runs for (codec_run.c) and the pipeline that
 * encodes and decodes with it (codec_encode.c, codec_decode.c).
 *
 * A codec is an ordered list, applied in the order written.  The first item
 * turns the number into text (radix, friendly, custom, parts-radix,
 * parts-friendly, grouped); without one the text is decimal.  Later items
 * wrap it (prefix, suffix, date-prefix).  Decoding runs the list backwards.
 *
 * A list is prepared for what it runs for (a generator's ids, or ad hoc),
 * then encodes ids into text and decodes text back.  Time zones and custom
 * functions are the caller's business (PostgreSQL's): this code asks its
 * hooks (CosidCodecHooks), as definition.h's parser does, and computes UTC
 * itself.
 *
 * Each item's text lives in a header of its own, which this one includes,
 * so that the PostgreSQL side reaches every codec through it: radix.h (radix
 * text, and the canonical forms every decoder keeps), datetext.h (date
 * patterns and friendly text), parts.h (parts-radix text), grouped.h
 * (periodic segment numbers).
 *
 * Owns: CosidCodecKind, CosidCodecItem, CosidCodec, the items' JSON names,
 * keys, defaults and limits, the paths and messages of a bad list; the
 * rules of a list for its target (CosidCodecTarget: which items a generator
 * or an immutable list may hold, the defaults a generator gives them); the
 * pipeline (CosidCodecPlan) and the messages of text that does not decode.
 * Must not: resolve zones or functions (the hooks do), know strategies by
 * name (the caller describes its generator as a CosidCodecTarget), raise
 * errors (every failure is returned with its message), or turn numbers into
 * text itself (the item headers above do).
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

/* The longest date-prefix pattern (bytes); its text is as long. */
#define COSID_CODEC_MAX_PATTERN 32

typedef struct CosidCodec
{
	int			nitems;
	CosidCodecItem items[COSID_CODEC_MAX_ITEMS];
} CosidCodec;


struct CosidJsonValue;

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

/*
 * The same from a parsed JSON value (json.h), such as a definition's
 * "codec" (definition.h keeps that node): the list is never parsed as text
 * twice.  Strings of *out point into root's strings or into alloc's memory.
 */
extern bool cosid_codec_parse_node(const struct CosidJsonValue *root,
								   const char *path_prefix, CosidAlloc alloc,
								   void *alloc_ctx, CosidCodec *out,
								   char *path, size_t pathlen,
								   char *msg, size_t msglen);

/*
 * Copy every string of codec into memory from alloc, so that the list
 * outlives what it was parsed from (a definition's node); false when alloc
 * fails.
 */
extern bool cosid_codec_copy_strings(CosidCodec *codec, CosidAlloc alloc,
									 void *alloc_ctx);

/* The item's key as written in JSON ("date-prefix"); NULL for no kind. */
extern const char *cosid_codec_kind_name(CosidCodecKind k);

/* ---------- what a list runs for, and its rules (codec_run.c) ---------- */

/*
 * A generator's side of a list, or none (ad hoc): what the rules and the
 * pipeline need of it, without knowing strategies by name.
 */
typedef struct CosidCodecTarget
{
	bool		has_gen;		/* a generator's list (else ad hoc) */
	bool		time_based;		/* its ids have a time (snowflake, cosid80) */
	bool		wide;			/* cosid80: ids are their parts, over 64 bits */
	CosidLayout layout;			/* time-based: the layout ids are made with */
	int			uncertainty_bits;
	CosidGroup	group;			/* segment: the period of its numbers, or NONE */
} CosidCodecTarget;

/*
 * What the pipeline cannot do itself.  ctx is the plan's hooks_ctx; zone is
 * the plan's zones[i] of the item (never NULL here: NULL is UTC, computed
 * without a hook).  A hook may leave by longjmp (PostgreSQL's ereport):
 * the pipeline holds nothing then but memory from the caller's allocator.
 */
typedef struct CosidCodecHooks
{
	/* The local time of Unix milliseconds in zone; false when it cannot be
	 * converted (the pipeline reports the time out of range). */
	bool		(*to_local) (void *ctx, const void *zone, int64_t ms, CosidTm *out);
	/* The UTC offset (seconds east) of a local time (seconds as if UTC)
	 * in zone, resolved as java.time does (cosid_zone_offset_for_local). */
	int64_t		(*local_offset) (void *ctx, const void *zone, int64_t local);
	/* custom: the text of id, *len bytes at *text (a NUL ends it) */
	void		(*custom_encode) (void *ctx, int64_t id, const char **text,
								  size_t *len);
	/* custom: the id of text[0..len) (no NUL in it) */
	int64_t		(*custom_decode) (void *ctx, const char *text, size_t len);
} CosidCodecHooks;

/* A list ready to run: prepared for its target, its zones bound. */
typedef struct CosidCodecPlan
{
	CosidCodec	codec;			/* as prepared: cosid80's radix is
								 * parts-radix, defaults filled in */
	CosidCodecTarget target;	/* layout: the generator's, or ad hoc
								 * friendly's preset */
	uint64_t	max_id;			/* the largest id decoding gives */
	const void *zones[COSID_CODEC_MAX_ITEMS];	/* the hooks' zone of each
												 * zoned item; NULL: UTC */
	const CosidCodecHooks *hooks;
	void	   *hooks_ctx;
} CosidCodecPlan;

/* Why a list cannot be prepared: a rule, or (immutable) an impure item. */
typedef enum CosidCodecRule
{
	COSID_CODEC_RULE_OK = 0,
	COSID_CODEC_RULE_BROKEN,	/* path: what is wrong with the item */
	COSID_CODEC_RULE_IMPURE		/* immutable: the item depends on more than
								 * its input */
} CosidCodecRule;

/*
 * Start preparing codec (copied into plan) for target: the checks of the
 * whole list, in order.  immutable: refuse, at the first such item, every
 * item whose text depends on anything but the id or the text (a zone other
 * than UTC, the clock, a generator's layout, SQL functions found by name).
 * Then the items one at a time, in list order (the caller binds each
 * item's zone and functions after its rules, so that errors come in list
 * order): cosid_codec_prepare_item.  path ("codec[1].date-prefix.source",
 * path_prefix first) and msg say what is wrong.
 */
extern CosidCodecRule cosid_codec_prepare(CosidCodecPlan *plan,
										  const CosidCodec *codec,
										  const CosidCodecTarget *target,
										  bool immutable,
										  const char *path_prefix,
										  char *path, size_t pathlen,
										  char *msg, size_t msglen);
extern CosidCodecRule cosid_codec_prepare_item(CosidCodecPlan *plan, int i,
											   const char *path_prefix,
											   char *path, size_t pathlen,
											   char *msg, size_t msglen);

/* The JSON path of item i's key (key NULL: the item): codec[1].friendly.zone */
extern void cosid_codec_item_path(const CosidCodec *codec, int i,
								  const char *path_prefix, const char *key,
								  char *path, size_t pathlen);

/* Whether encoding shows the current time (a date prefix of source NOW). */
extern bool cosid_codec_uses_now(const CosidCodecPlan *plan);

/* ---------- the pipeline (codec_encode.c, codec_decode.c) ---------- */

/* An id: a number, or for ids wider than 64 bits (cosid80) its parts. */
typedef struct CosidId
{
	bool		wide;
	int64_t		id;
	int64_t		time;
	int64_t		node;
	int64_t		seq;
} CosidId;

/*
 * What went wrong, for the caller to raise.  Decoding fills detail (the
 * text itself is the caller's to quote) and item; a failure that is not
 * about the text (the id's time out of range, an id outside the layout)
 * also fills message, as encoding always does.
 */
typedef struct CosidCodecError
{
	CosidDecodeResult result;	/* SYNTAX: malformed (22P02); RANGE: does not
								 * fit (22003) */
	int			item;			/* the item at fault, -1: the number itself
								 * or none */
	char		message[160];	/* the primary message, or "" */
	char		detail[384];	/* decoding: without "codec[i] (kind): " */
} CosidCodecError;

/*
 * Encode id; now_ms is the time a "NOW" date prefix shows.  The text goes
 * into memory from alloc, allocated once at its final size: *out, its
 * length returned.  -1 with *err filled when the id has no text (does not
 * fit the radix's width, the group's period, the layout, or the years
 * 1..9999 text shows).
 */
extern int64_t cosid_codec_encode(const CosidCodecPlan *plan, const CosidId *id,
								  int64_t now_ms, CosidAlloc alloc,
								  void *alloc_ctx, char **out,
								  CosidCodecError *err);

/*
 * Decode len bytes of text (a NUL ends it, as C strings did) into *id;
 * false with *err filled when it is malformed (SYNTAX) or out of range
 * (RANGE).
 */
extern bool cosid_codec_decode(const CosidCodecPlan *plan, const char *text,
							   size_t len, CosidId *id, CosidCodecError *err);

#endif							/* COSID_CORE_CODEC_H */

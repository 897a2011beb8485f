/*
 * definition.h - a generator definition (the JSON document cosid_define()
 * takes) parsed and validated into a plain struct, without PostgreSQL.
 *
 * Owns: every rule of a definition's keys, their defaults, ranges and
 * order of checks, and the "<path>: <message>" texts users see for a bad
 * key.  Reads the text with the one strict JSON reader (json.h).
 *
 * Must not: include PostgreSQL headers, read settings (the
 * cosid.machine_bits check is the caller's), look up catalogs or
 * sequences (adopt-sequence is returned as written), or bind the codec
 * list (returned as its parsed JSON node, for cosid_codec_parse_node and
 * the rules of codec.h, which the caller applies when it binds the list:
 * after its own checks, as before).  What core cannot know (whether a time string
 * is a valid time, whether a zone exists) it asks the caller's hooks.
 *
 * The PostgreSQL side passes JsonbToCString() of the stored jsonb: keys in
 * jsonb's order, no key twice, numbers as numeric_out writes them.  The
 * checks run in the text's key order, so on that input the first error
 * reported is the one PostgreSQL's jsonb walk reported before.
 */
#ifndef COSID_CORE_DEFINITION_H
#define COSID_CORE_DEFINITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "grouped.h"
#include "timegen.h"

typedef enum CosidStrategy
{
	COSID_STRATEGY_SNOWFLAKE,
	COSID_STRATEGY_COSID80,
	COSID_STRATEGY_SEGMENT
} CosidStrategy;

#define COSID_TIME_BASED(s) ((s) != COSID_STRATEGY_SEGMENT)

/* Where a segment generator's segments come from ("distributor"). */
typedef enum CosidDistributor
{
	COSID_DISTRIBUTOR_LOCAL,	/* "local": the backing sequence (default) */
	COSID_DISTRIBUTOR_LEASE_STORE	/* "lease-store": shared across servers */
} CosidDistributor;

/* "reserve": segments kept fetched ahead from the lease store. */
#define COSID_DEFAULT_RESERVE	10
#define COSID_MAX_RESERVE		1000

/* Bytes of a zone name with its NUL; a longer name is an unknown zone. */
#define COSID_DEFINITION_ZONE_LEN 64

/*
 * path and msg buffers of at least the text's length plus this many bytes
 * always hold the whole path and message (each holds at most one string
 * taken from the text); smaller ones are cut on a UTF-8 character boundary.
 */
#define COSID_DEFINITION_TEXT_EXTRA 512

/*
 * What only the caller can decide.  Each hook gets ctx and a NUL-terminated
 * string.  A NULL hook (or NULL hooks) refuses every string it would be
 * asked about.  A hook, like alloc, may leave by longjmp (PostgreSQL's
 * ereport): the parser holds nothing but memory from alloc.
 */
typedef struct CosidDefinitionHooks
{
	void	   *ctx;
	/* "epoch" given as a time: true with *ms (Unix milliseconds) for a
	 * valid, finite time */
	bool		(*parse_time) (void *ctx, const char *text, int64_t *ms);
	/* "zone": whether a zone of this name (under 64 bytes) exists */
	bool		(*zone_exists) (void *ctx, const char *name);
} CosidDefinitionHooks;

struct CosidJsonValue;

/* A parsed, validated definition. */
typedef struct CosidDefinition
{
	CosidStrategy strategy;
	/* time-based: the preset with the overrides, threshold resolved;
	 * segment: all zero */
	CosidLayout layout;
	CosidClockPolicy policy;	/* default 5 ms / 1 s; "FAIL" is 0 / 0 */
	bool		int32;			/* "int": ids must fit int4 */
	int			uncertainty_bits;
	/* segment generators */
	int64_t		step;			/* default 100 */
	int64_t		start;			/* default 1 */
	CosidGroup	group;			/* default none */
	char		zone[COSID_DEFINITION_ZONE_LEN];	/* default "UTC" */
	const char *adopt;			/* "adopt-sequence" as written, or NULL */
	CosidDistributor distributor;	/* default local */
	int			reserve;		/* lease-store: default COSID_DEFAULT_RESERVE;
								 * local: 0 */
	/* the "codec" list: its parsed JSON node (an array, in alloc's memory;
	 * cosid_codec_parse_node reads it), or NULL */
	const struct CosidJsonValue *codec;
} CosidDefinition;

/*
 * Parse and validate len bytes of JSON.  On success fills *out (strings in
 * memory from alloc) and returns true.  On failure returns false, leaves
 * *out alone, and sets path to the JSON path of the bad key ("time-bits",
 * "clock-regression.borrow-up-to"; "definition" for the document itself,
 * including JSON that is not well formed or memory that ran out) and msg to
 * what was expected and found.  path and msg may be NULL with length 0.
 */
extern bool cosid_definition_parse(const char *json, size_t len,
								   const CosidDefinitionHooks *hooks,
								   CosidAlloc alloc, void *alloc_ctx,
								   CosidDefinition *out,
								   char *path, size_t pathlen,
								   char *msg, size_t msglen);

#endif							/* COSID_CORE_DEFINITION_H */

/*
 * gendef.h - a generator's definition as the PostgreSQL side holds it: the
 * JSON parsed and validated by src/core/definition.c, plus what the catalog
 * adds (backing sequence, row version, owner, bound codec functions).
 *
 * Owns: CosidGenDef and turning a stored jsonb definition into one.  Must
 * not: read or write the catalog (catalog.c does), bind codecs
 * (codecbind.c) or touch shared memory.
 */
#ifndef COSID_GENDEF_H
#define COSID_GENDEF_H

#include "util.h"

#include "utils/jsonb.h"

#include "core/codec.h"
#include "core/definition.h"
#include "core/timegen.h"

/*
 * A parsed, validated generator definition: what the JSON says (core's
 * CosidDefinition, as cosid_definition_parse fills it) and what the catalog
 * adds.
 */
typedef struct CosidGenDef
{
	char		name[NAMEDATALEN];
	CosidDefinition spec;		/* strategy, layout, policy, int, uncertainty
								 * bits, segment keys, codec list */
	Oid			seqid;			/* the backing sequence (catalog) */
	bool		owns_sequence;	/* cosid made it (and drops it) */
	Oid			owner;			/* its owner: custom codec functions run as it */
	/*
	 * A custom codec item's encode and decode functions, fixed by OID when
	 * the generator was defined or altered (catalog column codec_functions,
	 * 1.3); InvalidOid when none were bound.  codec_by_name: the catalog
	 * predates that column (a database not yet updated from 1.2), so the
	 * stored names are looked up, under the same owner rule.
	 */
	Oid			codec_fns[2];
	bool		codec_by_name;
	char		counter_db[NAMEDATALEN];	/* lease-store segments: the database
											 * part of the shared counter's name,
											 * fixed at define ("": this one's) */
	int64		identity;		/* time-based: whose state (catalog; 0 for
								 * generators defined before 1.3) */
	bool		coordinator_only;	/* a Citus worker's copy of a segment
									 * generator whose sequence is the
									 * coordinator's: it encodes and decodes,
									 * never issues (citus.c) */
} CosidGenDef;

/*
 * Parse and validate a definition (22023, "invalid generator definition",
 * naming the JSON path).  check_machine_bits: refuse a layout whose node
 * bits cannot hold cosid.machine_bits (at definition time; at lookup time
 * the caller reports that differently).
 */
extern void cosid_gendef_parse(const char *name, Jsonb *config, CosidGenDef *def,
							   bool check_machine_bits);

/* "snowflake", "cosid80", "segment" (as the catalog stores them) and back. */
extern const char *cosid_strategy_name(CosidStrategy s);
extern CosidStrategy cosid_strategy_from_name(const char *s);

#endif							/* COSID_GENDEF_H */

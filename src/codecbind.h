/*
 * codecbind.h - codec lists on the PostgreSQL side (codecbind.c): a list
 * parsed, prepared and run by src/core/codec.h, bound to time zones, SQL
 * functions and maybe a generator.
 *
 * Owns: CosidCodecRt and the SQL-facing calls that run it (text in, text
 * out, errors raised).  Must not: look generators up (callers hand it a
 * definition) or be bound per row (callers cache the result).
 */
#ifndef COSID_CODECBIND_H
#define COSID_CODECBIND_H

#include "gendef.h"

#include "fmgr.h"
#include "pgtime.h"

/*
 * A codec list bound to zones, functions and (maybe) a generator: core's
 * plan (its zones are pg_tz *, its hooks this file's) and the functions.
 */
typedef struct CosidCodecRt
{
	CosidCodecPlan plan;
	FmgrInfo	encode_fn;		/* custom */
	FmgrInfo	decode_fn;
	int			custom_item;	/* the custom item's index, -1 if none */
	Oid			run_as;			/* custom functions run as this role under
								 * SECURITY_RESTRICTED_OPERATION (a
								 * generator's owner); InvalidOid: the caller */
} CosidCodecRt;
/*
 * How a list's custom functions are found: by the caller's search_path with
 * EXECUTE checked for the caller (a list being defined, or ad hoc), or for a
 * generator the functions fixed by OID when its codec was defined
 * (CosidGenDef.codec_fns), never by name again.  A generator's functions
 * must be owned by its owner or a superuser (42501), checked at every bind.
 */
typedef enum CosidBindMode
{
	COSID_BIND_CALLER,			/* ad hoc list: resolved and run as the caller */
	COSID_BIND_DEFINE,			/* cosid_define/alter: resolved as the caller
								 * (or gen->codec_fns kept by an alter), run
								 * as the owner */
	COSID_BIND_STORED,			/* a stored generator: gen->codec_fns, run as
								 * its owner; 55000 when dropped or unbound */
	COSID_BIND_IMMUTABLE		/* ad hoc list of cosid_encode_immutable and
								 * cosid_decode_immutable: only items whose
								 * text depends on the input alone */
} CosidBindMode;

/*
 * Parse and bind an ad hoc list given as JSON text of len bytes, or a
 * generator's list (its definition's "codec" node; none: decimal), into
 * cxt.  Errors are 22023 naming the JSON path: "invalid codec list" for an
 * ad hoc list, "invalid generator definition" for a generator's.
 *
 * COSID_BIND_IMMUTABLE (ad hoc) refuses, with the item's path and why,
 * every item whose text depends on anything but the id or the text: the
 * clock or a generator (date-prefix), a time zone's rules (friendly and
 * parts-friendly in a zone other than UTC), SQL functions found by name
 * (custom).  What it accepts gives the same text as COSID_BIND_CALLER; UTC
 * is then computed without the time zone database.
 */
extern CosidCodecRt *cosid_codecbind_adhoc(const char *json, size_t len,
										   CosidBindMode mode,
										   MemoryContext cxt);
extern CosidCodecRt *cosid_codecbind_generator(const CosidGenDef *gen,
											   CosidBindMode mode,
											   MemoryContext cxt);

/*
 * A definition's codec list with every custom function written
 * schema-qualified, as bound (COSID_BIND_DEFINE), for the catalog: the
 * names say what was bound; the catalog keeps the OIDs
 * (cosid_codecbind_functions).
 */
extern Jsonb *cosid_codecbind_qualify(Jsonb *config, const CosidCodecRt *rt);

/*
 * The bound custom functions (encode, decode) of a list, for the catalog's
 * codec_functions; false when it has no custom item.
 */
extern bool cosid_codecbind_functions(const CosidCodecRt *rt, Oid fns[2]);

/*
 * Encode an id; now_ms is the time a "NOW" date prefix shows.  Decode text
 * back (22P02 malformed, 22003 out of range).
 */
extern text *cosid_codecbind_encode(const CosidCodecRt *rt, const CosidId *id,
									int64 now_ms);
extern void cosid_codecbind_decode(const CosidCodecRt *rt, text *t, CosidId *id);

/*
 * v as the text of a radix item's settings (codec[0]), written straight
 * into the result: no copy.
 */
static inline text *
cosid_codecbind_radix_text(const CosidRadix *r, int64 v)
{
	int			width = r->width;
	text	   *result;
	int			n;

	/* cosid_radix_encode writes at most width digits and a NUL */
	result = (text *) palloc(VARHDRSZ + (width >= 1 && width <= 64 ? width : 64) + 1);
	n = cosid_radix_encode(r, v, VARDATA(result));
	if (unlikely(n < 0))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("id " INT64_FORMAT " does not fit in %d base-%d digits",
						v, r->width, r->radix)));
	SET_VARSIZE(result, VARHDRSZ + n);
	return result;
}

/* Whether the list shows the current time ("NOW" date prefix). */
extern bool cosid_codecbind_uses_now(const CosidCodecRt *rt);

#endif							/* COSID_CODECBIND_H */

/*
 * codecfuncs.c - the SQL functions cosid_encode and cosid_decode, with a
 * named generator's codec or an ad hoc codec list, and their IMMUTABLE
 * forms cosid_encode_immutable and cosid_decode_immutable (an ad hoc list
 * of items whose text depends on the input alone, for index expressions,
 * generated columns and CHECK constraints).
 *
 * Owns: the functions' argument handling and the per-call-site cache of an
 * ad hoc list (fn_extra), bound once, never per row.  Must not: parse, bind
 * or run codecs itself (codecbind.c binds them, core parses and runs them
 * and decides what an immutable list may hold) or issue ids.
 */
#include "codecbind.h"
#include "gencache.h"

#include "access/xact.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(cosid_encode_named);
PG_FUNCTION_INFO_V1(cosid_decode_named);
PG_FUNCTION_INFO_V1(cosid_encode_adhoc);
PG_FUNCTION_INFO_V1(cosid_decode_adhoc);
PG_FUNCTION_INFO_V1(cosid_encode_immutable);
PG_FUNCTION_INFO_V1(cosid_decode_immutable);

/* ---------- SQL: cosid_encode, cosid_decode ---------- */

/* "NOW" in cosid_encode: the statement's start, so the function is STABLE. */
static int64
statement_ms(void)
{
	return cosid_timestamptz_to_ms(GetCurrentStatementStartTimestamp());
}

/* statement_ms() when the codec shows NOW, else 0 (unused). */
static inline int64
codec_now_ms(const CosidCodecRt *rt)
{
	return cosid_codecbind_uses_now(rt) ? statement_ms() : 0;
}

/* A text argument, detoasted (packed header kept), as PG_GETARG_TEXT_PP. */
static inline text *
arg_text_pp(FunctionCallInfo fcinfo, int argno)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(argno));

	if (VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v))
		v = pg_detoast_datum_packed(v);
	return (text *) v;
}

/*
 * The call site's ad-hoc codec, re-bound only when the list changes.  When
 * the list is a constant of the call (a Const in the expression), it cannot
 * change, and once bound it is neither fetched nor compared again; if it is
 * just a radix, cosid_encode and cosid_decode go straight to it.
 */
typedef struct AdhocCache
{
	MemoryContext cxt;			/* the binding; reset when the list changes */
	bool		radix_only;		/* bound, list_const, and just a radix */
	CosidRadix	radix;			/* then a copy of its settings (codec[0]) */
	int			len;			/* 0: not bound (yet, or the bind failed) */
	char	   *bytes;
	CosidCodecRt *rt;
	bool		list_const;
} AdhocCache;

/* Whether argument argno of the call is a Const. */
static bool
arg_is_const(FmgrInfo *flinfo, int argno)
{
	Node	   *expr = flinfo->fn_expr;
	List	   *args;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	args = ((FuncExpr *) expr)->args;
	return argno < list_length(args) && IsA(list_nth(args, argno), Const);
}

static CosidCodecRt *
adhoc_codec(FunctionCallInfo fcinfo, int argno, CosidBindMode mode)
{
	AdhocCache *c = fcinfo->flinfo->fn_extra;
	Jsonb	   *list;
	int			len;
	char	   *json;

	if (likely(c != NULL && c->list_const && c->len != 0))
		return c->rt;
	list = PG_GETARG_JSONB_P(argno);
	len = VARSIZE(list);
	if (likely(c != NULL && c->len == len && memcmp(c->bytes, list, len) == 0))
		return c->rt;
	if (c == NULL)
	{
		c = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(AdhocCache));
		c->list_const = arg_is_const(fcinfo->flinfo, argno);
		c->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "cosid codec list",
									   ALLOCSET_SMALL_SIZES);
	}
	/* a list that differs from row to row keeps only the last binding */
	c->len = 0;
	c->radix_only = false;
	MemoryContextReset(c->cxt);
	json = JsonbToCString(NULL, &list->root, VARSIZE(list));
	c->rt = cosid_codecbind_adhoc(json, strlen(json), mode, c->cxt);
	pfree(json);
	c->bytes = MemoryContextAlloc(c->cxt, len);
	memcpy(c->bytes, list, len);
	c->len = len;
	if (c->list_const && c->rt->plan.codec.nitems == 1 &&
		c->rt->plan.codec.items[0].kind == COSID_CODEC_RADIX)
	{
		c->radix = c->rt->plan.codec.items[0].radix;
		c->radix_only = true;
	}
	return c->rt;
}

/* The call site's constant radix settings (see AdhocCache), or NULL. */
static inline const CosidRadix *
adhoc_radix(FunctionCallInfo fcinfo)
{
	AdhocCache *c = fcinfo->flinfo->fn_extra;

	return c != NULL && c->radix_only ? &c->radix : NULL;
}

/*
 * The general ways of cosid_encode and cosid_decode (ad hoc), apart from
 * the fast ones so that those stay lean (no locals to protect).  mode is
 * COSID_BIND_CALLER, or COSID_BIND_IMMUTABLE for the immutable forms, whose
 * lists never show NOW (codec_now_ms() is then 0, unused).
 */
static pg_noinline Datum
encode_adhoc_slow(FunctionCallInfo fcinfo, CosidBindMode mode)
{
	CosidCodecRt *rt = adhoc_codec(fcinfo, 1, mode);
	CosidId		id;

	memset(&id, 0, sizeof(id));
	id.id = PG_GETARG_INT64(0);
	PG_RETURN_TEXT_P(cosid_codecbind_encode(rt, &id, codec_now_ms(rt)));
}

static pg_noinline Datum
decode_adhoc_slow(FunctionCallInfo fcinfo, text *t, CosidBindMode mode)
{
	CosidId		id;

	cosid_codecbind_decode(adhoc_codec(fcinfo, 1, mode), t, &id);
	PG_RETURN_INT64(id.id);
}

static pg_attribute_always_inline Datum
encode_adhoc(FunctionCallInfo fcinfo, CosidBindMode mode)
{
	const CosidRadix *radix = adhoc_radix(fcinfo);

	/* what cosid_codecbind_encode does with just a radix */
	if (likely(radix != NULL))
		PG_RETURN_TEXT_P(cosid_codecbind_radix_text(radix, PG_GETARG_INT64(0)));
	return encode_adhoc_slow(fcinfo, mode);
}

static pg_attribute_always_inline Datum
decode_adhoc(FunctionCallInfo fcinfo, CosidBindMode mode)
{
	const CosidRadix *radix = adhoc_radix(fcinfo);
	text	   *t = arg_text_pp(fcinfo, 0);

	/*
	 * What cosid_codecbind_decode does first with just a radix (an ad-hoc list
	 * takes any bigint); anything but success goes its way, which reports.
	 */
	if (likely(radix != NULL))
	{
		int64		v;

		if (likely(cosid_radix_decode(radix, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
									  (uint64) PG_INT64_MAX, &v, NULL, 0) == COSID_DECODE_OK))
			PG_RETURN_INT64(v);
	}
	return decode_adhoc_slow(fcinfo, t, mode);
}

Datum
cosid_encode_adhoc(PG_FUNCTION_ARGS)
{
	return encode_adhoc(fcinfo, COSID_BIND_CALLER);
}

Datum
cosid_decode_adhoc(PG_FUNCTION_ARGS)
{
	return decode_adhoc(fcinfo, COSID_BIND_CALLER);
}

/*
 * The same with a list of pure items only (codecbind.c refuses the others
 * when the list is bound): the same text as cosid_encode and cosid_decode
 * with that list, from the id or the text alone, so IMMUTABLE.
 */
Datum
cosid_encode_immutable(PG_FUNCTION_ARGS)
{
	return encode_adhoc(fcinfo, COSID_BIND_IMMUTABLE);
}

Datum
cosid_decode_immutable(PG_FUNCTION_ARGS)
{
	return decode_adhoc(fcinfo, COSID_BIND_IMMUTABLE);
}

Datum
cosid_encode_named(PG_FUNCTION_ARGS)
{
	CosidGenCache *c = cosid_lookup(fcinfo, PG_GETARG_TEXT_PP(0), false);
	CosidId		id;

	memset(&id, 0, sizeof(id));
	id.id = PG_GETARG_INT64(1);
	if (c->def.spec.strategy == COSID_STRATEGY_COSID80)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("generator \"%s\" makes 80-bit ids, which do not fit a bigint", c->def.name),
				 errhint("Its ids are text already: cosid_next_text() gives them encoded.")));
	PG_RETURN_TEXT_P(cosid_codecbind_encode(c->codec, &id, codec_now_ms(c->codec)));
}

Datum
cosid_decode_named(PG_FUNCTION_ARGS)
{
	text	   *txt = PG_GETARG_TEXT_PP(1);
	CosidGenCache *c;
	CosidId		id;

	/*
	 * cosid_decode('text', '[...]') is this form (name, text): say so when
	 * the name is unknown and the "text" looks like a codec list.
	 */
	c = cosid_lookup_hinted(fcinfo, PG_GETARG_TEXT_PP(0), false,
							VARSIZE_ANY_EXHDR(txt) > 0 && *VARDATA_ANY(txt) == '[' ?
							"To decode with a codec list, call cosid_decode_with(txt, codec)." :
							NULL);

	if (c->def.spec.strategy == COSID_STRATEGY_COSID80)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("generator \"%s\" makes 80-bit ids, which do not fit a bigint", c->def.name),
				 errhint("Use cosid_unpack_text(name, text) to read them.")));
	cosid_codecbind_decode(c->codec, txt, &id);
	PG_RETURN_INT64(id.id);
}

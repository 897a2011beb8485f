/*
 * ulid_type.c - the ulid type: I/O, comparison (with itself and with uuid),
 * hashing, sort support, time conversions and the two generators; and the
 * two generators of version 7 uuids, with uuidv7_time().
 *
 * A ulid is 16 bytes passed by reference, laid out exactly as uuid is, so
 * ulid <-> uuid casts need no function.  Ordering is memcmp order, which for
 * a big-endian time-first value is creation order, and which is uuid's order
 * too: ulid and uuid compare with each other byte for byte, and hash alike.
 *
 * Owns: the type's functions, gen_ulid_monotonic()'s and
 * gen_uuidv7_monotonic()'s shared last ids and their mark file
 * (pg_cosid/ulid.state).
 * Must not: depend on generators, slots or the catalog.
 */
#include "ulid_type.h"
#include "random.h"
#include "upgrade.h"

#include "core/ulid.h"

#include "access/htup_details.h"
#include "common/hashfn.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/hyperloglog.h"
#include "libpq/pqformat.h"
#include "catalog/pg_type_d.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/sortsupport.h"
#include "utils/timestamp.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

/*
 * gen_ulid_monotonic()'s last ULID, shared (see ulid_type.h), and its mark:
 * no ULID of this server ever had a time at or above mark_ms, which is on
 * disk (pg_cosid/ulid.state) before any ULID uses a time below it.  After
 * a restart or a crash the last ULID starts as the mark, so every new one
 * sorts above every old one, whatever the clock says.
 */
typedef struct UlidShared
{
	slock_t		lock;			/* protects the fields below */
	bool		loaded;			/* the mark was read from its file */
	int64		mark_ms;
	uint8		last[ULID_BYTES];
	uint8		last_uuid7[ULID_BYTES];	/* gen_uuidv7_monotonic()'s, under
										 * the same mark */
} UlidShared;

static UlidShared *ulid_shared = NULL;
static LWLock *ulid_mark_lock = NULL;	/* held while the file is read or written */

#define ULID_STATE_FILE		COSID_STATE_DIR "/ulid.state"
#define ULID_STATE_TMP		COSID_STATE_DIR "/ulid.state.tmp"
#define ULID_STATE_MAGIC	"cosid ulid state 1"
/* the mark is set this far ahead of the time it is needed for ... */
#define ULID_MARK_LEAD_MS	1000
/* ... and moved on when a ULID comes this close to it */
#define ULID_MARK_RENEW_MS	500

typedef struct pg_ulid
{
	uint8		data[ULID_BYTES];
} pg_ulid;

/* a uuid argument is read as a ulid: the same 16 bytes */
StaticAssertDecl(sizeof(pg_uuid_t) == sizeof(pg_ulid),
				 "ulid and uuid must have the same representation");

#define DatumGetUlidP(X)	((pg_ulid *) DatumGetPointer(X))
#define PG_GETARG_ULID_P(n) DatumGetUlidP(PG_GETARG_DATUM(n))
#define PG_RETURN_ULID_P(x) PG_RETURN_POINTER(x)

PG_FUNCTION_INFO_V1(ulid_in);
PG_FUNCTION_INFO_V1(ulid_out);
PG_FUNCTION_INFO_V1(ulid_recv);
PG_FUNCTION_INFO_V1(ulid_send);
PG_FUNCTION_INFO_V1(ulid_eq);
PG_FUNCTION_INFO_V1(ulid_ne);
PG_FUNCTION_INFO_V1(ulid_lt);
PG_FUNCTION_INFO_V1(ulid_le);
PG_FUNCTION_INFO_V1(ulid_gt);
PG_FUNCTION_INFO_V1(ulid_ge);
PG_FUNCTION_INFO_V1(ulid_cmp);
PG_FUNCTION_INFO_V1(ulid_uuid_support);
PG_FUNCTION_INFO_V1(ulid_larger);
PG_FUNCTION_INFO_V1(ulid_smaller);
PG_FUNCTION_INFO_V1(ulid_sortsupport);
PG_FUNCTION_INFO_V1(ulid_hash);
PG_FUNCTION_INFO_V1(ulid_hash_extended);
PG_FUNCTION_INFO_V1(ulid_time);
PG_FUNCTION_INFO_V1(ulid_from_time);
PG_FUNCTION_INFO_V1(ulid_parts);
PG_FUNCTION_INFO_V1(gen_ulid);
PG_FUNCTION_INFO_V1(gen_ulid_monotonic);
PG_FUNCTION_INFO_V1(gen_uuidv7);
PG_FUNCTION_INFO_V1(gen_uuidv7_monotonic);
PG_FUNCTION_INFO_V1(uuidv7_time);

/* ---------- I/O ---------- */

/*
 * Input errors are soft on PostgreSQL 16 and later (pg_input_is_valid(),
 * COPY ... ON_ERROR), hard before (compat.h).
 */
#define ulid_input_error cosid_input_error

/* what every input error adds: the two forms ulid_in reads */
#define ulid_input_hint() \
	errhint("Write a ULID as 26 Crockford base32 characters, or a UUID as 36: 8-4-4-4-12 hexadecimal digits.")

/*
 * ULID text, or the canonical text of a uuid (the same 16 bytes as that
 * uuid); ulid_out always writes ULID text.
 */
Datum
ulid_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	pg_ulid    *result = palloc(sizeof(pg_ulid));
	size_t		len = strlen(str);
	size_t		pos = 0;

	switch (ulid_parse_input(str, len, result->data, &pos))
	{
		case ULID_PARSE_OK:
			break;
		case ULID_PARSE_LENGTH:
			ulid_input_error((errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							  errmsg("invalid input syntax for type %s: \"%s\"", "ulid", str),
							  errdetail("A ULID has %d characters and a UUID %d, not %d.",
										ULID_TEXT_LEN, ULID_UUID_TEXT_LEN,
										pg_mbstrlen_with_len(str, (int) len)),
							  ulid_input_hint()));
			break;
		case ULID_PARSE_CHARACTER:
			ulid_input_error((errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							  errmsg("invalid input syntax for type %s: \"%s\"", "ulid", str),
							  errdetail("Character %d, \"%.*s\", is not a Crockford base32 digit (0-9 and A-Z without I, L, O, U).",
										pg_mbstrlen_with_len(str, (int) pos) + 1,
										pg_mblen(str + pos), str + pos),
							  ulid_input_hint()));
			break;
		case ULID_PARSE_OVERFLOW:
			ulid_input_error((errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							  errmsg("invalid input syntax for type %s: \"%s\"", "ulid", str),
							  errdetail("The first character must be 0-7; a larger one overflows 128 bits."),
							  ulid_input_hint()));
			break;
		case ULID_PARSE_UUID_HEX:
			ulid_input_error((errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							  errmsg("invalid input syntax for type %s: \"%s\"", "ulid", str),
							  errdetail("Character %d, \"%.*s\", is not a hexadecimal digit.",
										pg_mbstrlen_with_len(str, (int) pos) + 1,
										pg_mblen(str + pos), str + pos),
							  ulid_input_hint()));
			break;
		case ULID_PARSE_UUID_HYPHEN:
			ulid_input_error((errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							  errmsg("invalid input syntax for type %s: \"%s\"", "ulid", str),
							  errdetail("Character %d, \"%.*s\", is not a hyphen: a UUID has them at characters 9, 14, 19 and 24.",
										pg_mbstrlen_with_len(str, (int) pos) + 1,
										pg_mblen(str + pos), str + pos),
							  ulid_input_hint()));
			break;
	}
	PG_RETURN_ULID_P(result);
}

Datum
ulid_out(PG_FUNCTION_ARGS)
{
	pg_ulid    *u = PG_GETARG_ULID_P(0);
	char	   *out = palloc(ULID_TEXT_LEN + 1);

	ulid_format(u->data, out);
	out[ULID_TEXT_LEN] = '\0';
	PG_RETURN_CSTRING(out);
}

Datum
ulid_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	pg_ulid    *u = palloc(sizeof(pg_ulid));

	memcpy(u->data, pq_getmsgbytes(buf, ULID_BYTES), ULID_BYTES);
	PG_RETURN_ULID_P(u);
}

Datum
ulid_send(PG_FUNCTION_ARGS)
{
	pg_ulid    *u = PG_GETARG_ULID_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (char *) u->data, ULID_BYTES);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ---------- comparison ---------- */

static inline int
ulid_internal_cmp(const pg_ulid *a, const pg_ulid *b)
{
	return memcmp(a->data, b->data, ULID_BYTES);
}

#define ULID_CMP_FN(name, op) \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(ulid_internal_cmp(PG_GETARG_ULID_P(0), \
									 PG_GETARG_ULID_P(1)) op 0); \
}

ULID_CMP_FN(ulid_eq, ==)
ULID_CMP_FN(ulid_ne, !=)
ULID_CMP_FN(ulid_lt, <)
ULID_CMP_FN(ulid_le, <=)
ULID_CMP_FN(ulid_gt, >)
ULID_CMP_FN(ulid_ge, >=)

Datum
ulid_cmp(PG_FUNCTION_ARGS)
{
	int			c = ulid_internal_cmp(PG_GETARG_ULID_P(0), PG_GETARG_ULID_P(1));

	PG_RETURN_INT32((c > 0) - (c < 0));
}

/*
 * ulid with uuid, either way round: the same bytes in the same order, so the
 * same comparison.  The cross-type members of ulid's btree and hash operator
 * families are SQL functions over the functions above (ulid_eq, ...,
 * ulid_cmp: sql/cosid--1.2.sql).
 */

/*
 * Planner support of the ulid/uuid comparisons: an index whose operator
 * family lacks the cross-type operator (core's uuid_ops on a uuid column,
 * ulid's BRIN family) still serves "key OP value" as "key OP' value", where
 * OP' is the same comparison on the key's own type and the value is
 * relabelled to that type (the same 16 bytes, no conversion).  The two are
 * equivalent, so the index condition is exact (not lossy).  <> is never an
 * index condition.  The comparison is the operator's function's, never its
 * name's; the rewritten operator must be in the index's family.
 */
typedef enum UlidCmpKind
{
	ULID_CMP_NONE,
	ULID_CMP_EQ,
	ULID_CMP_LT,
	ULID_CMP_LE,
	ULID_CMP_GT,
	ULID_CMP_GE
} UlidCmpKind;

/*
 * What the operator computes, from the function it calls: one of ours (the
 * support function is attached to them only, and only a superuser can
 * attach it), whatever the operator is named.  An operator is a name any
 * role can give to any function: "evil.<" over uuid_ulid_eq is an equality,
 * and an index condition rewritten from its name would return other rows
 * than the operator itself.
 */
static UlidCmpKind
ulid_cmp_kind(Oid opno)
{
	RegProcedure fn = get_opcode(opno);
	FmgrInfo	finfo;

	if (!OidIsValid(fn))
		return ULID_CMP_NONE;
	fmgr_info(fn, &finfo);
	if (finfo.fn_addr == ulid_eq)
		return ULID_CMP_EQ;
	if (finfo.fn_addr == ulid_lt)
		return ULID_CMP_LT;
	if (finfo.fn_addr == ulid_le)
		return ULID_CMP_LE;
	if (finfo.fn_addr == ulid_gt)
		return ULID_CMP_GT;
	if (finfo.fn_addr == ulid_ge)
		return ULID_CMP_GE;
	return ULID_CMP_NONE;
}

Datum
ulid_uuid_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestIndexCondition *req;
	OpExpr	   *clause;
	Node	   *key;
	Node	   *value;
	Oid			keytype;
	Oid			valuetype;
	UlidCmpKind kind;
	TypeCacheEntry *tce;
	Oid			opno = InvalidOid;

	if (!IsA(rawreq, SupportRequestIndexCondition))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestIndexCondition *) rawreq;
	if (!is_opclause(req->node) || req->indexarg < 0 || req->indexarg > 1)
		PG_RETURN_POINTER(NULL);
	clause = (OpExpr *) req->node;
	if (list_length(clause->args) != 2)
		PG_RETURN_POINTER(NULL);

	key = (Node *) list_nth(clause->args, req->indexarg);
	value = (Node *) list_nth(clause->args, 1 - req->indexarg);
	keytype = getBaseType(exprType(key));
	valuetype = getBaseType(exprType(value));
	/* one side ulid, the other uuid: what these operators take */
	if ((keytype == UUIDOID) == (valuetype == UUIDOID))
		PG_RETURN_POINTER(NULL);

	kind = ulid_cmp_kind(clause->opno);
	if (kind == ULID_CMP_NONE)
		PG_RETURN_POINTER(NULL);

	/* "value OP key" is "key OP-commuted value" */
	if (req->indexarg == 1)
	{
		if (kind == ULID_CMP_LT)
			kind = ULID_CMP_GT;
		else if (kind == ULID_CMP_GT)
			kind = ULID_CMP_LT;
		else if (kind == ULID_CMP_LE)
			kind = ULID_CMP_GE;
		else if (kind == ULID_CMP_GE)
			kind = ULID_CMP_LE;
	}

	/* the key type's own comparison: its default btree class's operators */
	tce = lookup_type_cache(keytype, TYPECACHE_EQ_OPR | TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	switch (kind)
	{
		case ULID_CMP_EQ:
			opno = tce->eq_opr;
			break;
		case ULID_CMP_LT:
			opno = tce->lt_opr;
			break;
		case ULID_CMP_GT:
			opno = tce->gt_opr;
			break;
		case ULID_CMP_LE:
			opno = OidIsValid(tce->gt_opr) ? get_negator(tce->gt_opr) : InvalidOid;
			break;
		case ULID_CMP_GE:
			opno = OidIsValid(tce->lt_opr) ? get_negator(tce->lt_opr) : InvalidOid;
			break;
		case ULID_CMP_NONE:
			break;
	}
	if (!OidIsValid(opno) || !op_in_opfamily(opno, req->opfamily))
		PG_RETURN_POINTER(NULL);

	req->lossy = false;
	value = (Node *) makeRelabelType((Expr *) value, keytype, -1, InvalidOid,
									 COERCE_IMPLICIT_CAST);
	PG_RETURN_POINTER(list_make1(make_opclause(opno, BOOLOID, false,
											   (Expr *) key, (Expr *) value,
											   InvalidOid, InvalidOid)));
}

Datum
ulid_larger(PG_FUNCTION_ARGS)
{
	pg_ulid    *a = PG_GETARG_ULID_P(0);
	pg_ulid    *b = PG_GETARG_ULID_P(1);

	PG_RETURN_ULID_P(ulid_internal_cmp(a, b) >= 0 ? a : b);
}

Datum
ulid_smaller(PG_FUNCTION_ARGS)
{
	pg_ulid    *a = PG_GETARG_ULID_P(0);
	pg_ulid    *b = PG_GETARG_ULID_P(1);

	PG_RETURN_ULID_P(ulid_internal_cmp(a, b) <= 0 ? a : b);
}

/* ---------- sort support (as core uuid: abbreviated keys) ---------- */

typedef struct UlidSortState
{
	int64		input_count;	/* non-null values seen */
	bool		estimating;		/* still estimating cardinality */
	hyperLogLogState abbr_card; /* cardinality of the abbreviated keys */
} UlidSortState;

static int
ulid_fast_cmp(Datum x, Datum y, SortSupport ssup)
{
	return ulid_internal_cmp(DatumGetUlidP(x), DatumGetUlidP(y));
}

/*
 * The abbreviated key is the first 8 bytes read big-endian: 48 bits of time
 * and 16 random bits, so ULIDs made apart in time never need the full key.
 */
static Datum
ulid_abbrev_convert(Datum original, SortSupport ssup)
{
	UlidSortState *st = ssup->ssup_extra;
	pg_ulid    *u = DatumGetUlidP(original);
	Datum		res;

	memcpy(&res, u->data, sizeof(Datum));
	st->input_count++;
	if (st->estimating)
	{
		uint32		tmp;

#if SIZEOF_DATUM == 8
		tmp = (uint32) res ^ (uint32) ((uint64) res >> 32);
#else
		tmp = (uint32) res;
#endif
		addHyperLogLog(&st->abbr_card, DatumGetUInt32(hash_uint32(tmp)));
	}
	return DatumBigEndianToNative(res);
}

static bool
ulid_abbrev_abort(int memtupcount, SortSupport ssup)
{
	UlidSortState *st = ssup->ssup_extra;
	double		abbr_card;

	if (memtupcount < 10000 || st->input_count < 10000 || !st->estimating)
		return false;

	abbr_card = estimateHyperLogLog(&st->abbr_card);

	/* Clearly worth it: stop counting, keep abbreviating. */
	if (abbr_card > 100000.0)
	{
		st->estimating = false;
		return false;
	}
	/* Fewer than one distinct key in 2000 rows: full comparisons are cheaper. */
	if (abbr_card < st->input_count / 2000.0 + 0.5)
		return true;
	return false;
}

Datum
ulid_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = ulid_fast_cmp;
	ssup->ssup_extra = NULL;

	if (ssup->abbreviate)
	{
		MemoryContext oldcontext = MemoryContextSwitchTo(ssup->ssup_cxt);
		UlidSortState *st = palloc(sizeof(UlidSortState));

		st->input_count = 0;
		st->estimating = true;
		initHyperLogLog(&st->abbr_card, 10);

		ssup->ssup_extra = st;
		ssup->abbrev_full_comparator = ssup->comparator;
		ssup->comparator = ssup_datum_unsigned_cmp;
		ssup->abbrev_converter = ulid_abbrev_convert;
		ssup->abbrev_abort = ulid_abbrev_abort;
		MemoryContextSwitchTo(oldcontext);
	}
	PG_RETURN_VOID();
}

/*
 * ---------- hashing ----------
 *
 * Exactly core's uuid_hash and uuid_hash_extended (hash_any of the 16
 * bytes): equal ulid and uuid values hash alike, as the cross-type = of
 * ulid's hash operator family requires.
 */

Datum
ulid_hash(PG_FUNCTION_ARGS)
{
	return hash_any(PG_GETARG_ULID_P(0)->data, ULID_BYTES);
}

Datum
ulid_hash_extended(PG_FUNCTION_ARGS)
{
	return hash_any_extended(PG_GETARG_ULID_P(0)->data, ULID_BYTES,
							 PG_GETARG_INT64(1));
}

/* ---------- time ---------- */

Datum
ulid_time(PG_FUNCTION_ARGS)
{
	pg_ulid    *u = PG_GETARG_ULID_P(0);
	int64		ms = (int64) ulid_time_ms(u->data);

	/* 48 bits of milliseconds end in the year 10889: always a timestamptz. */
	PG_RETURN_TIMESTAMPTZ(cosid_ms_to_timestamptz(ms));
}

Datum
ulid_from_time(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	static const uint8 zero[ULID_RAND_BYTES] = {0};
	pg_ulid    *u;
	int64		ms;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for type ulid"),
				 errdetail("A ULID holds a finite time from 1970-01-01 to 10889-08-02 UTC.")));

	/* the ULID of the millisecond the instant falls in (floor) */
	ms = cosid_timestamptz_to_ms(ts);
	if (ms < 0 || (uint64) ms > ULID_MAX_TIME)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for type ulid: \"%s\"",
						timestamptz_to_str(ts)),
				 errdetail("A ULID holds a finite time from 1970-01-01 to 10889-08-02 UTC.")));

	u = palloc(sizeof(pg_ulid));
	ulid_build((uint64) ms, zero, u->data);
	PG_RETURN_ULID_P(u);
}

Datum
ulid_parts(PG_FUNCTION_ARGS)
{
	pg_ulid    *u = PG_GETARG_ULID_P(0);
	TupleDesc	tupdesc;
	char		text[ULID_TEXT_LEN];
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	ulid_format(u->data, text);
	values[0] = PointerGetDatum(cstring_to_text_with_len(text, ULID_TIME_CHARS));
	values[1] = PointerGetDatum(cstring_to_text_with_len(text + ULID_TIME_CHARS,
														 ULID_TEXT_LEN - ULID_TIME_CHARS));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---------- generation ---------- */

static void
ulid_time_range_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("the clock is past the end of the ULID time range"),
			 errdetail("A ULID holds at most 2^48 - 1 milliseconds since 1970-01-01.")));
}

Datum
gen_ulid(PG_FUNCTION_ARGS)
{
	uint8		rnd[ULID_RAND_BYTES];
	uint64		now = cosid_now_ms();
	pg_ulid    *u;

	if (unlikely(now > ULID_MAX_TIME))
		ulid_time_range_error();
	cosid_random_bytes(rnd, ULID_RAND_BYTES);
	u = palloc(sizeof(pg_ulid));
	ulid_build(now, rnd, u->data);
	PG_RETURN_ULID_P(u);
}

/* ---------- the mark ---------- */

/* The mark in the file, 0 when there is none; a damaged file is an error. */
static int64
read_mark(void)
{
	FILE	   *f = AllocateFile(ULID_STATE_FILE, "r");
	char		line[128];
	bool		magic = false;
	int64		mark = -1;

	if (f == NULL)
	{
		if (errno == ENOENT)
			return 0;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", ULID_STATE_FILE)));
	}
	while (fgets(line, sizeof(line), f))
	{
		char	   *end;

		line[strcspn(line, "\r\n")] = '\0';
		if (strcmp(line, ULID_STATE_MAGIC) == 0)
			magic = true;
		else if (strncmp(line, "mark_ms=", 8) == 0)
		{
			errno = 0;
			mark = strtoi64(line + 8, &end, 10);
			if (*end != '\0' || errno != 0 || mark < 0 || mark > (int64) ULID_MAX_TIME)
				mark = -1;
		}
	}
	FreeFile(f);
	if (!magic || mark < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cosid ULID state file \"%s\" is damaged", ULID_STATE_FILE),
				 errdetail("Without it the time of the last monotonic ULID is unknown, so new ones could sort below old ones."),
				 errhint("Write a time past every ULID issued as mark_ms (Unix milliseconds) under the line \"%s\", or remove the file only if the clock is certainly past them.",
						 ULID_STATE_MAGIC)));
	return mark;
}

/*
 * First use since the server started: the last ULID becomes the mark of the
 * file (the 80-bit part zero, never issued), unless it is later already.
 * While the clock is behind the mark, the next ULID takes the mark's time
 * with a fresh random part (core/ulid.h: a point to go on from), then counts
 * up from it: random low bits still, and above every ULID issued before.
 */
static void
load_mark(void)
{
	/* after pg_upgrade, the old server's mark must be copied first */
	cosid_upgrade_check();
	LWLockAcquire(ulid_mark_lock, LW_EXCLUSIVE);
	if (!ulid_shared->loaded)
	{
		int64		mark = read_mark();
		uint8		zero[ULID_RAND_BYTES] = {0};

		SpinLockAcquire(&ulid_shared->lock);
		if ((int64) ulid_time_ms(ulid_shared->last) < mark)
			ulid_build((uint64) mark, zero, ulid_shared->last);
		if ((int64) ulid_time_ms(ulid_shared->last_uuid7) < mark)
			uuid7_build((uint64) mark, zero, ulid_shared->last_uuid7);
		ulid_shared->mark_ms = mark;
		ulid_shared->loaded = true;
		SpinLockRelease(&ulid_shared->lock);
	}
	LWLockRelease(ulid_mark_lock);
}

/*
 * Move the mark past a ULID of time t_ms, durably, unless it is far enough
 * ahead already.  wait: block for the lock (nothing may be issued until the
 * mark moves); otherwise leave it to whoever holds the lock.
 */
static void
extend_mark(int64 t_ms, bool wait)
{
	int64		mark;

	if (wait)
		LWLockAcquire(ulid_mark_lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(ulid_mark_lock, LW_EXCLUSIVE))
		return;
	SpinLockAcquire(&ulid_shared->lock);
	mark = ulid_shared->mark_ms;
	SpinLockRelease(&ulid_shared->lock);
	if (t_ms + ULID_MARK_RENEW_MS >= mark)
	{
		char		buf[128];
		int			len;

		mark = t_ms + ULID_MARK_LEAD_MS;
		len = snprintf(buf, sizeof(buf), "%s\nmark_ms=" INT64_FORMAT "\n", ULID_STATE_MAGIC, mark);
		cosid_ensure_state_dir();
		cosid_write_durably(ULID_STATE_FILE, ULID_STATE_TMP, buf, len);
		SpinLockAcquire(&ulid_shared->lock);
		ulid_shared->mark_ms = Max(ulid_shared->mark_ms, mark);
		SpinLockRelease(&ulid_shared->lock);
	}
	LWLockRelease(ulid_mark_lock);
}

/* One monotonic step of a 128-bit time-first id (ulid or UUIDv7). */
typedef UlidMonoResult (*MonoStep) (uint8_t last[ULID_BYTES], uint64_t now_ms,
									const uint8_t rnd[ULID_RAND_BYTES],
									uint8_t out[ULID_BYTES]);

/*
 * Strictly increasing across every backend and across restarts and crashes:
 * the time part is the clock's, or the last id's when the clock is behind
 * it (after a restart with the clock set back: the mark's), and the random
 * part goes on from the last one (step), or from a fresh random start after
 * a restart.  An id uses a time only below the mark on disk; the backend
 * that comes near it moves it on (once or twice a second under load, a small
 * file write), and others wait only if it falls behind.  last: the
 * generator's last id in shared memory.
 */
static void
monotonic_next(uint8 *last, MonoStep step, uint8 *out)
{
	uint8		rnd_buf[ULID_RAND_BYTES];
	uint8	   *rnd = NULL;		/* drawn only when a new millisecond needs it */

	for (;;)
	{
		uint64		now = cosid_now_ms();
		UlidMonoResult r = ULID_MONO_OK;
		int64		t;
		int64		last_ms;
		bool		loaded;
		bool		below;
		bool		near = false;

		SpinLockAcquire(&ulid_shared->lock);
		loaded = ulid_shared->loaded;
		last_ms = (int64) ulid_time_ms(last);
		t = Max((int64) now, last_ms);
		near = t + ULID_MARK_RENEW_MS >= ulid_shared->mark_ms;
		/*
		 * The common case, in the same millisecond (or the clock behind) and
		 * far from the mark: the last id plus one in its last byte, which
		 * both formats count in whole (step does the same, and the rest).
		 * A last byte of 0 goes to step: it may be the point to go on from
		 * after a restart (random part zero, see load_mark), which step
		 * gives a fresh random part.
		 */
		if (likely(loaded && !near && (int64) now <= last_ms &&
				   last[ULID_BYTES - 1] != 0xFF && last[ULID_BYTES - 1] != 0))
		{
			last[ULID_BYTES - 1]++;
			memcpy(out, last, ULID_BYTES);
			SpinLockRelease(&ulid_shared->lock);
			return;
		}
		below = t < ulid_shared->mark_ms;
		if (likely(loaded && below))
			r = step(last, now, rnd, out);
		SpinLockRelease(&ulid_shared->lock);

		if (unlikely(!loaded))
		{
			load_mark();
			continue;
		}
		if (unlikely(!below))
		{
			extend_mark(t, true);
			continue;
		}
		if (unlikely(near))
			extend_mark(t, false);
		if (likely(r == ULID_MONO_OK))
			return;
		if (r == ULID_MONO_NEED_RANDOM)
		{
			cosid_random_bytes(rnd_buf, ULID_RAND_BYTES);
			rnd = rnd_buf;
			continue;
		}
		if (r == ULID_MONO_TIME_RANGE)
			ulid_time_range_error();
		/* every id of one millisecond used: wait for the next one. */
		cosid_wait_1ms();
	}
}

Datum
gen_ulid_monotonic(PG_FUNCTION_ARGS)
{
	pg_ulid    *u;

	cosid_require_preload("gen_ulid_monotonic()");
	u = palloc(sizeof(pg_ulid));
	monotonic_next(ulid_shared->last, ulid_monotonic_next, u->data);
	PG_RETURN_ULID_P(u);
}

/* ---------- uuid version 7 ---------- */

/* gen_uuidv7()'s last uuid in this backend */
static uint8 backend_last_uuid7[ULID_BYTES];

/*
 * Increasing within a backend (RFC 9562 section 6.2, method 2): in a new
 * millisecond 74 fresh CSPRNG bits, within one the last uuid's plus one, as
 * PostgreSQL 18's uuidv7() is increasing within a backend (by a
 * sub-millisecond clock).  So a backend's inserts land at the right edge of a
 * primary key, which stays as compact as for a sequence; across backends
 * the order is the clock's, to the millisecond (gen_uuidv7_monotonic() for
 * one order across the server).
 */
Datum
gen_uuidv7(PG_FUNCTION_ARGS)
{
	uint8		rnd_buf[UUID7_RAND_BYTES];
	uint8	   *rnd = NULL;		/* drawn only when a new millisecond needs it */
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

	for (;;)
	{
		UlidMonoResult r = uuid7_monotonic_next(backend_last_uuid7, cosid_now_ms(), rnd, u->data);

		if (likely(r == ULID_MONO_OK))
			break;
		if (r == ULID_MONO_NEED_RANDOM)
		{
			cosid_random_bytes(rnd_buf, UUID7_RAND_BYTES);
			rnd = rnd_buf;
			continue;
		}
		if (r == ULID_MONO_TIME_RANGE)
			ulid_time_range_error();
		cosid_wait_1ms();
	}
	PG_RETURN_UUID_P(u);
}

Datum
gen_uuidv7_monotonic(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u;

	cosid_require_preload("gen_uuidv7_monotonic()");
	u = palloc(sizeof(pg_uuid_t));
	monotonic_next(ulid_shared->last_uuid7, uuid7_monotonic_next, u->data);
	PG_RETURN_UUID_P(u);
}

/*
 * The time of a uuid of version 7 (or 1), as PostgreSQL 18's
 * uuid_extract_timestamp() gives it: NULL for another variant than RFC
 * 9562's, or a version with no time.
 */
Datum
uuidv7_time(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = PG_GETARG_UUID_P(0);
	int			version = u->data[6] >> 4;

	if ((u->data[8] & 0xC0) != 0x80)
		PG_RETURN_NULL();
	if (version == 7)
		PG_RETURN_TIMESTAMPTZ(cosid_ms_to_timestamptz((int64) ulid_time_ms(u->data)));
	if (version == 1)
	{
		/* 100 ns units since 1582-10-15 (the Gregorian reform) */
		uint64		t = ((uint64) u->data[0] << 24) | ((uint64) u->data[1] << 16) |
			((uint64) u->data[2] << 8) | (uint64) u->data[3] |
			((uint64) u->data[4] << 40) | ((uint64) u->data[5] << 32) |
			((uint64) (u->data[6] & 0x0F) << 56) | ((uint64) u->data[7] << 48);
		int64		gregorian_to_pg_us = (int64) (POSTGRES_EPOCH_JDATE - 2299161) * SECS_PER_DAY * USECS_PER_SEC;

		PG_RETURN_TIMESTAMPTZ((TimestampTz) (t / 10) - gregorian_to_pg_us);
	}
	PG_RETURN_NULL();
}

Size
cosid_ulid_shmem_size(void)
{
	return MAXALIGN(sizeof(UlidShared));
}

void
cosid_ulid_shmem_request(void)
{
	RequestNamedLWLockTranche("cosid ulid", 1);
}

/* Called under AddinShmemInitLock. */
void
cosid_ulid_shmem_init(void)
{
	bool		found;

	ulid_shared = ShmemInitStruct("cosid ulid", sizeof(UlidShared), &found);
	if (!found)
	{
		memset(ulid_shared, 0, sizeof(UlidShared));
		SpinLockInit(&ulid_shared->lock);
	}
	ulid_mark_lock = &(GetNamedLWLockTranche("cosid ulid"))->lock;
}

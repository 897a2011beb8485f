/*
 * catalog.c - the generator catalog, cosid.generator (see catalog.h).
 *
 * The catalog table is not writable by ordinary roles: cosid_define() and
 * friends (ddl.c) check what the caller may do, then write as the catalog's
 * owner through cosid_catalog_exec(), constant SQL run under
 * SECURITY_RESTRICTED_OPERATION with a pinned search_path.  A generator's
 * plain read (its first call in a session) runs no SQL: an index scan of
 * the primary key in C (read_direct, util.c: cosid_row_by_key), with the
 * snapshot SPI would use.
 *
 * Owns: reading and writing rows, the statement trigger and transaction
 * callbacks that count changes.  Must not: build SQL text from a name, or
 * cache definitions (gencache.c does).
 */
#include "catalog.h"
#include "genstate.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "port/atomics.h"
#include "storage/shmem.h"
#include "common/hashfn.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(cosid_catalog_changed);

/*
 * The catalog's generations, one per slot: a generator of name n in
 * database d is stamped with slot cosid_catalog_slot(d, n)'s.  A
 * transaction that changed generators by name (cosid_define, cosid_alter,
 * cosid_drop) bumps the slots of those names when it commits; one that
 * changed the catalog otherwise (a restore's rows, the update's identities)
 * bumps every slot.  Two names that share a slot only make each other be
 * read again.  Lock-free: written with atomic adds, read by the hot path
 * without a lock (one read of its slot).
 */
pg_atomic_uint64 *cosid_catalog_generations = NULL;

/* Without shared memory (not preloaded): one slot that never changes. */
static pg_atomic_uint64 unshared_generation;

/*
 * This backend's own generations, per slot as the shared ones: bumped at
 * once when this backend changes a name (its own reads see the change
 * before it commits), and at a rollback.
 */
uint64		cosid_local_generations[COSID_CATALOG_SLOTS];

Size
cosid_catalog_shmem_size(void)
{
	return MAXALIGN(sizeof(pg_atomic_uint64) * COSID_CATALOG_SLOTS);
}

/* Called under AddinShmemInitLock. */
void
cosid_catalog_shmem_init(void)
{
	bool		found;

	cosid_catalog_generations = ShmemInitStruct("cosid catalog generations",
												sizeof(pg_atomic_uint64) * COSID_CATALOG_SLOTS,
												&found);
	if (!found)
		for (int i = 0; i < COSID_CATALOG_SLOTS; i++)
			pg_atomic_init_u64(&cosid_catalog_generations[i], 1);
}

int
cosid_catalog_slot(const char *name, int len)
{
	uint32		h = hash_bytes((const unsigned char *) name, len);

	h = hash_combine(h, hash_bytes_uint32((uint32) MyDatabaseId));
	return (int) (h & (COSID_CATALOG_SLOTS - 1));
}

pg_atomic_uint64 *
cosid_catalog_shared_slot(int slot)
{
	static bool initialised = false;

	if (cosid_catalog_generations != NULL)
		return &cosid_catalog_generations[slot];
	if (!initialised)
	{
		pg_atomic_init_u64(&unshared_generation, 0);
		initialised = true;
	}
	return &unshared_generation;
}

/* Every generator of this backend is read again before its next use. */
void
cosid_catalog_local_changed_all(void)
{
	for (int i = 0; i < COSID_CATALOG_SLOTS; i++)
		cosid_local_generations[i]++;
}

static Oid
catalog_relid(void)
{
	return RangeVarGetRelid(makeRangeVar("cosid", "generator", -1), NoLock, false);
}

void
cosid_catalog_check_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid generator name \"%s\"", name),
				 errdetail("A generator name has 1 to %d bytes.", NAMEDATALEN - 1)));
}

Oid
cosid_catalog_owner(void)
{
	return cosid_rel_owner(catalog_relid());
}

/*
 * The statements cosid_catalog_exec ran in this backend, prepared once and
 * kept (SPI_keepplan): a statement's text is the same at every call, so a
 * generator's define or first read does not parse and plan it again.  The
 * plan cache re-plans a kept plan when what it depends on changes (the
 * table dropped with the extension and made again, new columns, the
 * search_path pinned by cosid_begin_as_role), as it does for any prepared
 * statement.  A few dozen statements: a list.
 */
typedef struct CatalogPlan
{
	struct CatalogPlan *next;
	char	   *sql;
	int			nargs;
	Oid			argtypes[FUNC_MAX_ARGS];
	SPIPlanPtr	plan;
} CatalogPlan;

static CatalogPlan *catalog_plans = NULL;

/* The kept plan of sql (as the current role, SPI connected). */
static SPIPlanPtr
catalog_plan(const char *sql, int nargs, Oid *argtypes)
{
	CatalogPlan *p;
	SPIPlanPtr	plan;

	for (p = catalog_plans; p != NULL; p = p->next)
		if (p->nargs == nargs && strcmp(p->sql, sql) == 0 &&
			(nargs == 0 || memcmp(p->argtypes, argtypes, sizeof(Oid) * nargs) == 0))
			return p->plan;
	Assert(nargs <= FUNC_MAX_ARGS);
	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare a statement of cosid: %s",
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep a statement of cosid");
	p = MemoryContextAllocZero(TopMemoryContext, sizeof(CatalogPlan));
	p->sql = MemoryContextStrdup(TopMemoryContext, sql);
	p->nargs = nargs;
	if (nargs > 0)
		memcpy(p->argtypes, argtypes, sizeof(Oid) * nargs);
	p->plan = plan;
	p->next = catalog_plans;
	catalog_plans = p;
	return plan;
}

int
cosid_catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *values,
			 const char *nulls, bool read_only)
{
	CosidAsRole as;
	int			ret;

	cosid_begin_as_role(cosid_catalog_owner(), &as);
	ret = SPI_execute_plan(catalog_plan(sql, nargs, argtypes), values, nulls, read_only, 0);
	cosid_end_as_role(&as);
	return ret;
}

void
cosid_catalog_check_owner(const char *name, Oid owner)
{
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of generator \"%s\"", name),
				 errdetail("Generator \"%s\" is owned by role %s.", name,
						   GetUserNameFromId(owner, true) ? GetUserNameFromId(owner, true) : "(dropped)")));
}

void
cosid_unknown_generator(const char *name, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("generator \"%s\" does not exist", name),
			 hint ? errhint("%s", hint) :
			 errhint("Define it with cosid_define(); cosid.generators lists those of this database.")));
}


/* ---------- invalidation ---------- */

/*
 * Commit-time invalidation (see catalog.h).  changed_slots: the slots of
 * the names this transaction changed (in TopTransactionContext), or
 * changed_all when it changed the catalog otherwise.  A name changed in a
 * subtransaction that rolled back stays in the set: a slot bumped for
 * nothing only makes its generators be read again.
 */
bool		cosid_catalog_dirty = false;
static bool xact_callbacks_registered = false;
static Bitmapset *changed_slots = NULL;
static bool changed_all = false;

/* >0 while cosid writes a row of a name it registered (the statement trigger then adds nothing) */
static int	named_writes = 0;

static void
bump_changed(bool shared)
{
	int			i = -1;

	if (changed_all)
	{
		cosid_catalog_local_changed_all();
		if (shared && cosid_catalog_generations)
			for (i = 0; i < COSID_CATALOG_SLOTS; i++)
				pg_atomic_fetch_add_u64(&cosid_catalog_generations[i], 1);
		return;
	}
	while ((i = bms_next_member(changed_slots, i)) >= 0)
	{
		cosid_local_generations[i]++;
		if (shared && cosid_catalog_generations)
			pg_atomic_fetch_add_u64(&cosid_catalog_generations[i], 1);
	}
}

static void
end_of_changes(void)
{
	cosid_catalog_dirty = false;
	/* freed with TopTransactionContext */
	changed_slots = NULL;
	changed_all = false;
	named_writes = 0;
}

static void
cosid_xact_callback(XactEvent event, void *arg)
{
	if (!cosid_catalog_dirty)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot prepare a transaction that changed cosid generators")));
			break;
		case XACT_EVENT_PRE_COMMIT:
			/* what must be durable with the commit (an error aborts it) */
			cosid_gen_at_pre_commit();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			bump_changed(true);
			if (cosid_catalog_generations)
				cosid_gen_at_commit(true);
			end_of_changes();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			cosid_gen_at_commit(false);
			/* this backend read the changed rows: read them again as they were */
			bump_changed(false);
			end_of_changes();
			break;
		default:
			break;
	}
}

static void
cosid_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && cosid_catalog_dirty)
	{
		bump_changed(false);
		/* a named write cut short by an error */
		named_writes = 0;
	}
	if (event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB)
		cosid_gen_at_subxact(event == SUBXACT_EVENT_COMMIT_SUB, mySubid, parentSubid);
}

static void
register_callbacks(void)
{
	if (!xact_callbacks_registered)
	{
		RegisterXactCallback(cosid_xact_callback, NULL);
		RegisterSubXactCallback(cosid_subxact_callback, NULL);
		xact_callbacks_registered = true;
	}
	cosid_catalog_dirty = true;
}

void
cosid_catalog_changed_now(void)
{
	register_callbacks();
	changed_all = true;
	cosid_catalog_local_changed_all();
}

void
cosid_catalog_changed_name(const char *name)
{
	int			slot = cosid_catalog_slot(name, strlen(name));
	MemoryContext old;

	register_callbacks();
	old = MemoryContextSwitchTo(TopTransactionContext);
	changed_slots = bms_add_member(changed_slots, slot);
	MemoryContextSwitchTo(old);
	cosid_local_generations[slot]++;
}

int
cosid_catalog_write(const char *name, const char *sql, int nargs, Oid *argtypes,
					Datum *values, const char *nulls)
{
	int			ret;

	cosid_catalog_changed_name(name);
	named_writes++;
	ret = cosid_catalog_exec(sql, nargs, argtypes, values, nulls, false);
	named_writes--;
	/* after the write too: a read since the first bump was of the old row */
	cosid_catalog_changed_name(name);
	return ret;
}

/*
 * Statement trigger on cosid.generator: any change.  cosid's own writes of
 * a name (cosid_catalog_write) registered that name; any other (a
 * restore's rows, the update's) changes every generator.
 */
Datum
cosid_catalog_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "cosid_catalog_changed: not called as a trigger");
	if (named_writes == 0)
		cosid_catalog_changed_now();
	return PointerGetDatum(NULL);
}

void
cosid_catalog_check_sequence(const CosidGenDef *def)
{
	if (def->spec.strategy == COSID_STRATEGY_SEGMENT &&
		def->spec.distributor == COSID_DISTRIBUTOR_LOCAL && !OidIsValid(def->seqid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment generator \"%s\" has lost its backing sequence", def->name),
				 errhint("Drop the generator and define it again.")));
}

bool
cosid_catalog_is_1_3(void)
{
	/* the update adds codec_functions, identity and counter_database together */
	return get_attnum(catalog_relid(), "counter_database") != InvalidAttrNumber;
}

/* The row's columns (codec_functions: NULL before 1.3), by name. */
#define READ_COLUMNS \
	"SELECT strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, " \
	"seq_reset_threshold, owner::pg_catalog.oid, sequence::pg_catalog.oid, owns_sequence, "
#define READ_WHERE " FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1"

/*
 * [1.3's catalog][for update]: before 1.3 no codec_functions (NULL) and no
 * identity (0: a generator's state is its name's, as in 1.2).
 */
static const char *const read_sql[2][2] = {
	{READ_COLUMNS "NULL::pg_catalog.oid[], 0::pg_catalog.int8, NULL::pg_catalog.text" READ_WHERE,
	READ_COLUMNS "NULL::pg_catalog.oid[], 0::pg_catalog.int8, NULL::pg_catalog.text" READ_WHERE " FOR UPDATE"},
	{READ_COLUMNS "codec_functions, identity, counter_database" READ_WHERE,
	READ_COLUMNS "codec_functions, identity, counter_database" READ_WHERE " FOR UPDATE"},
};

/*
 * The columns read_sql selects, in its order, and their types in the table
 * (owner and sequence are regrole and regclass there, OIDs in read_sql);
 * from READ_FIRST_1_3 on: added by 1.3's update (all three, or none).
 */
#define READ_NCOLUMNS 14
#define READ_FIRST_1_3 11		/* codec_functions' index */
static const char *const read_names[READ_NCOLUMNS] = {
	"strategy", "config", "epoch_ms", "unit_ms", "time_bits", "node_bits", "seq_bits",
	"seq_reset_threshold", "owner", "sequence", "owns_sequence",
	"codec_functions", "identity", "counter_database",
};
static const Oid read_types[READ_NCOLUMNS] = {
	TEXTOID, JSONBOID, INT8OID, INT4OID, INT4OID, INT4OID, INT4OID,
	INT8OID, REGROLEOID, REGCLASSOID, BOOLOID,
	OIDARRAYOID, INT8OID, TEXTOID,
};

/*
 * The plain read (not FOR UPDATE) without SPI: the row by cosid.generator's
 * primary key, an index scan with the snapshot the statement would have had
 * (fresh: one taken now; else the active one), so it sees what read_sql
 * does: the rows this transaction wrote before, not those it deleted, and
 * no other transaction's uncommitted change.  SPI parses and plans
 * read_sql once a session, and looks up the catalog's owner and pins the
 * search_path for every read: most of a fresh session's first call.  It
 * runs no SQL, no user code (the index and texteq are built in) and looks
 * up no name the caller could place (cosid.generator is schema-qualified;
 * the index is the table's primary key, the columns its own by name).
 * Soft: nothing read (COSID_ROW_UNREAD) when the table is not as cosid made
 * it (a column missing or of another type, no primary key on name):
 * read_sql then.
 */
static const CosidRowRead read_direct = {
	.table = "generator",
	.key_column = "name",
	.ncolumns = READ_NCOLUMNS,
	.columns = read_names,
	.types = read_types,
	.nlater = READ_NCOLUMNS - READ_FIRST_1_3,
	.soft = true,
};

/*
 * A row's columns (in read_names' order) into *config and *stored.  Copies
 * what it keeps (config, detoasted: the snapshot the row was read with must
 * still be registered or active, unless they are copies already).  Before
 * 1.3 the last three are NULL.
 */
static void
decode_row(const Datum *values, const bool *nulls, bool v13, Jsonb **config, CosidGenDef *stored)
{
	char	   *strategy = TextDatumGetCString(values[0]);

	*config = DatumGetJsonbPCopy(values[1]);
	stored->spec.strategy = cosid_strategy_from_name(strategy);
	if (COSID_TIME_BASED(stored->spec.strategy))
	{
		stored->spec.layout.epoch_ms = DatumGetInt64(values[2]);
		stored->spec.layout.unit_ms = DatumGetInt32(values[3]);
		stored->spec.layout.time_bits = DatumGetInt32(values[4]);
		stored->spec.layout.node_bits = DatumGetInt32(values[5]);
		stored->spec.layout.seq_bits = DatumGetInt32(values[6]);
		stored->spec.layout.seq_reset_threshold = DatumGetInt64(values[7]);
	}
	stored->owner = DatumGetObjectId(values[8]);
	/* none: time-based, or segments from the lease store (callers check) */
	stored->seqid = nulls[9] ? InvalidOid : DatumGetObjectId(values[9]);
	stored->owns_sequence = !nulls[10] && DatumGetBool(values[10]);
	stored->codec_fns[0] = stored->codec_fns[1] = InvalidOid;
	stored->codec_by_name = !v13;
	if (!nulls[11])
	{
		Datum	   *fns;
		bool	   *fnnulls;
		int			n;

		deconstruct_array(DatumGetArrayTypeP(values[11]), OIDOID, sizeof(Oid), true, TYPALIGN_INT,
						  &fns, &fnnulls, &n);
		for (int i = 0; i < n && i < 2; i++)
			if (!fnnulls[i])
				stored->codec_fns[i] = DatumGetObjectId(fns[i]);
	}
	stored->identity = nulls[12] ? 0 : DatumGetInt64(values[12]);
	stored->counter_db[0] = '\0';
	if (!nulls[13])
		text_to_cstring_buffer(DatumGetTextPP(values[13]), stored->counter_db, NAMEDATALEN);
}

/*
 * A lookup for the hot path reads with a snapshot taken now (fresh), after
 * the caller read the shared generation, so a row it reads is never older
 * than the generation it is stamped with.  A plain read takes no SPI
 * (read_direct); FOR UPDATE locks the row through read_sql.
 */
void
cosid_catalog_read(const char *name, bool for_update, bool fresh, Jsonb **config,
		 CosidGenDef *stored, const char *hint)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	Datum		values[READ_NCOLUMNS];
	bool		nulls[READ_NCOLUMNS];
	int			ret;
	bool		v13;

	if (!for_update)
	{
		CosidRowRead read = read_direct;

		read.fresh = fresh;
		switch (cosid_row_by_key(&read, name, values, nulls, &v13))
		{
			case COSID_ROW_FOUND:
				decode_row(values, nulls, v13, config, stored);
				return;
			case COSID_ROW_NONE:
				cosid_unknown_generator(name, hint);
				break;
			case COSID_ROW_UNREAD:
				break;
		}
	}

	v13 = cosid_catalog_is_1_3();
	args[0] = CStringGetTextDatum(name);
	/* a parallel worker reads what its leader's snapshot shows */
	fresh = fresh && !IsInParallelMode();
	if (fresh)
		PushActiveSnapshot(GetLatestSnapshot());
	ret = cosid_catalog_exec(read_sql[v13 ? 1 : 0][for_update ? 1 : 0],
					   1, argtypes, args, NULL, !for_update);
	if (fresh)
		PopActiveSnapshot();
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	if (SPI_processed == 0)
		cosid_unknown_generator(name, hint);
	for (int i = 0; i < READ_NCOLUMNS; i++)
		values[i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &nulls[i]);
	decode_row(values, nulls, v13, config, stored);
}

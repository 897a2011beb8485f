/*
 * ddl.c - cosid_define, cosid_alter and cosid_drop: changing the generator
 * catalog, and the backing sequences of segment generators.
 *
 * Each function checks what the caller may do (CREATE on the database, the
 * generator's ownership, EXECUTE on custom codec functions, whose owner must
 * be the generator's or a superuser), validates the definition (gendef.c,
 * codecbind.c, genstate.c for the layout history of a name), then writes the
 * catalog as its owner (catalog.c), custom codec functions by OID.
 * Sequences are made and altered through core's C APIs on parse nodes, never
 * SQL text.  cosid_define costs about what CREATE SEQUENCE does (issue 29),
 * so its own writes and reads go without SQL where they can: its row by heap
 * and index insert when cosid.generator is as 1.4 makes it (what the
 * INSERT's constraints and triggers would check is checked here; any other
 * table, or a row a trigger takes, goes through the INSERT), the backing
 * sequence's SELECT grant as core's GRANT writes it, the name's rows read by
 * primary key (util.c: cosid_row_by_key).
 *
 * The row cosid_define inserts is built by named column numbers
 * (Anum_generator_*).  A name's history (cosid.generator_history) is
 * history.c's; what a restore may load, restore.c's, which applies the
 * rules of a define that this file exports (ddl.h).
 *
 * Owns: the rules of a change (what alter may not change, who may give this
 * database another database's identity).  Must not: issue ids, or keep
 * state across calls.
 */
#include "catalog.h"
#include "citus.h"
#include "codecbind.h"
#include "ddl.h"
#include "gendef.h"
#include "genstate.h"
#include "history.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "commands/dbcommands.h"
#include "commands/tablecmds.h"
#include "storage/lmgr.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/pg_am.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_trigger.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "utils/fmgrprotos.h"
#include "catalog/pg_database.h"
#include "catalog/pg_sequence.h"
#include "commands/sequence.h"
#include "common/md5.h"
#include "parser/parse_node.h"
#include "storage/bufmgr.h"
#include "utils/snapmgr.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(cosid_define);
PG_FUNCTION_INFO_V1(cosid_alter);
PG_FUNCTION_INFO_V1(cosid_drop);
PG_FUNCTION_INFO_V1(cosid_give_identities);

#define key_error(path, ...) cosid_invalid_key(false, path, __VA_ARGS__)

/*
 * The columns of cosid.generator that cosid_define writes, numbered as the
 * parameters of its INSERT ($1 is the name): Anum_-style constants, so that
 * the row is built by name, never by position.  They are not the table's
 * attribute numbers (the INSERT names its columns; 1.0's table has owner
 * last, and the update to 1.3 added codec_functions, identity and
 * counter_database).  A catalog from before 1.3 takes only the first
 * Natts_generator_1_2 columns.
 */
enum
{
	Anum_generator_name = 1,
	Anum_generator_strategy,
	Anum_generator_config,
	Anum_generator_epoch_ms,
	Anum_generator_unit_ms,
	Anum_generator_time_bits,
	Anum_generator_node_bits,
	Anum_generator_seq_bits,
	Anum_generator_seq_reset_threshold,
	Anum_generator_owner,
	Anum_generator_sequence,
	Anum_generator_owns_sequence,
	/* 1.3 */
	Anum_generator_codec_functions,
	Anum_generator_identity,
	Anum_generator_counter_database,
};
#define Natts_generator			Anum_generator_counter_database
#define Natts_generator_1_2		Anum_generator_owns_sequence

/*
 * Each column's name, its parameter's type, the cast its parameter gets in
 * VALUES, and its type in the table (what a direct insert checks).
 */
static const struct
{
	const char *name;
	Oid			type;
	const char *cast;
	Oid			column_type;
}			generator_columns[Natts_generator] = {
	[Anum_generator_name - 1] = {"name", TEXTOID, "", TEXTOID},
	[Anum_generator_strategy - 1] = {"strategy", TEXTOID, "", TEXTOID},
	[Anum_generator_config - 1] = {"config", JSONBOID, "", JSONBOID},
	[Anum_generator_epoch_ms - 1] = {"epoch_ms", INT8OID, "", INT8OID},
	[Anum_generator_unit_ms - 1] = {"unit_ms", INT4OID, "", INT4OID},
	[Anum_generator_time_bits - 1] = {"time_bits", INT4OID, "", INT4OID},
	[Anum_generator_node_bits - 1] = {"node_bits", INT4OID, "", INT4OID},
	[Anum_generator_seq_bits - 1] = {"seq_bits", INT4OID, "", INT4OID},
	[Anum_generator_seq_reset_threshold - 1] = {"seq_reset_threshold", INT8OID, "", INT8OID},
	[Anum_generator_owner - 1] = {"owner", OIDOID, "::pg_catalog.regrole", REGROLEOID},
	[Anum_generator_sequence - 1] = {"sequence", OIDOID, "::pg_catalog.regclass", REGCLASSOID},
	[Anum_generator_owns_sequence - 1] = {"owns_sequence", BOOLOID, "", BOOLOID},
	[Anum_generator_codec_functions - 1] = {"codec_functions", OIDARRAYOID, "", OIDARRAYOID},
	[Anum_generator_identity - 1] = {"identity", INT8OID, "", INT8OID},
	[Anum_generator_counter_database - 1] = {"counter_database", TEXTOID, "", TEXTOID},
};

/* A row of cosid.generator being built: every column null until set. */
typedef struct GeneratorRow
{
	Datum		values[Natts_generator];
	char		nulls[Natts_generator];
} GeneratorRow;

static void
row_init(GeneratorRow *row)
{
	memset(row->values, 0, sizeof(row->values));
	memset(row->nulls, 'n', sizeof(row->nulls));
}

static void
row_set(GeneratorRow *row, int attnum, Datum value)
{
	Assert(attnum >= 1 && attnum <= Natts_generator);
	row->values[attnum - 1] = value;
	row->nulls[attnum - 1] = ' ';
}

/* A time-based generator's layout columns (a segment generator's stay null). */
static void
row_set_layout(GeneratorRow *row, const CosidGenDef *def)
{
	if (!COSID_TIME_BASED(def->spec.strategy))
		return;
	row_set(row, Anum_generator_epoch_ms, Int64GetDatum(def->spec.layout.epoch_ms));
	row_set(row, Anum_generator_unit_ms, Int32GetDatum((int32) def->spec.layout.unit_ms));
	row_set(row, Anum_generator_time_bits, Int32GetDatum(def->spec.layout.time_bits));
	row_set(row, Anum_generator_node_bits, Int32GetDatum(def->spec.layout.node_bits));
	row_set(row, Anum_generator_seq_bits, Int32GetDatum(def->spec.layout.seq_bits));
	row_set(row, Anum_generator_seq_reset_threshold,
			Int64GetDatum(def->spec.layout.seq_reset_threshold));
}

/*
 * The triggers on INSERT into cosid.generator that a direct insert may leave
 * out, as 1.4 makes them: what each would do to a row cosid_define writes as
 * the catalog's owner is nothing, or done already.
 *   generator_changed        (statement) registers no name while cosid
 *                            writes one it registered: cosid_define
 *                            registers it (cosid_catalog_changed_name)
 *   generator_restore_check  returns the row as it is for the catalog's
 *                            owner (it checks a restore by another role)
 *   generator_bind_codec     only for a row its WHEN takes (codec_functions
 *                            set, or a custom codec item): such a row goes
 *                            through the INSERT, which fires it
 */
static const struct
{
	const char *trigger;
	const char *function;		/* in schema cosid */
	bool		row;
}			direct_insert_triggers[] = {
	{"generator_changed", "catalog_changed", false},
	{"generator_restore_check", "restore_check", true},
	{"generator_bind_codec", "generator_bind_codec", true},
};
/* 1.4's CHECK constraints of cosid.generator (row_meets_checks) */
static const char *const direct_insert_checks[] = {
	"generator_strategy_check", "generator_codec_functions_check",
	"generator_check1", "generator_sequence_check",
};

/* Whether generator_bind_codec's WHEN takes the row (true when unsure). */
static bool
row_binds_codec(GeneratorRow *row)
{
	LOCAL_FCINFO(fcinfo, 2);
	Datum		path;
	Datum		result;

	if (row->nulls[Anum_generator_codec_functions - 1] != 'n')
		return true;
	/* NEW.config @? '$.codec[*].custom', as the trigger's WHEN has it */
	path = DirectFunctionCall1(jsonpath_in, CStringGetDatum("$.codec[*].custom"));
	InitFunctionCallInfoData(*fcinfo, NULL, 2, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = row->values[Anum_generator_config - 1];
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = path;
	fcinfo->args[1].isnull = false;
	result = jsonb_path_exists_opr(fcinfo);
	return fcinfo->isnull || DatumGetBool(result);
}

/*
 * Whether the row meets 1.4's CHECK constraints of cosid.generator, which a
 * direct insert does not evaluate: false when it does not, or when it is not
 * sure (the INSERT then evaluates them).
 *   strategy IN ('snowflake', 'cosid80', 'segment')
 *   cardinality(codec_functions) = 2   (codec_functions is null here)
 *   (strategy = 'segment') = (epoch_ms IS NULL)
 *   (strategy = 'segment' AND coalesce(lower(config ->> 'distributor'),
 *    'local') <> 'lease-store') = (sequence IS NOT NULL)
 */
static bool
row_meets_checks(GeneratorRow *row)
{
	char	   *strategy = TextDatumGetCString(row->values[Anum_generator_strategy - 1]);
	bool		segment = strcmp(strategy, "segment") == 0;
	bool		local = true;
	Jsonb	   *config = DatumGetJsonbP(row->values[Anum_generator_config - 1]);
	JsonbValue	v;

	if (!segment && strcmp(strategy, "snowflake") != 0 && strcmp(strategy, "cosid80") != 0)
		return false;
	if (row->nulls[Anum_generator_codec_functions - 1] != 'n' ||
		segment != (row->nulls[Anum_generator_epoch_ms - 1] == 'n'))
		return false;
	if (JB_ROOT_IS_OBJECT(config) &&
		getKeyJsonValueFromContainer(&config->root, "distributor", strlen("distributor"), &v) != NULL &&
		v.type == jbvString)
	{
		/* lower() of ASCII letters is the same in every locale; not sure of others */
		for (int i = 0; i < v.val.string.len; i++)
			if (IS_HIGHBIT_SET(v.val.string.val[i]))
				return false;
		local = !(v.val.string.len == strlen("lease-store") &&
				  pg_strncasecmp(v.val.string.val, "lease-store", v.val.string.len) == 0);
	}
	return (segment && local) == (row->nulls[Anum_generator_sequence - 1] != 'n');
}

/*
 * Whether cosid.generator is as 1.4 makes it, so that the row can be
 * inserted directly: its columns (attnums[i]: column i + 1's attribute
 * number), its CHECK constraints (direct_insert_checks; the row meets
 * them), its triggers on INSERT (each of direct_insert_triggers, none
 * taking the row: generator_bind_codec with its WHEN, which 1.3's lacks),
 * no row security.  Else the INSERT does it.
 */
static bool
direct_insert_possible(Relation rel, GeneratorRow *row, AttrNumber *attnums)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Oid			nsp = RelationGetNamespace(rel);
	int			found = 0;

	/*
	 * a heap (simple_heap_insert writes heap pages), not a partition (its
	 * constraint is not checked here), no rules (the INSERT would fire them)
	 */
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
		rel->rd_rel->relispartition || rel->rd_rel->relhasrules || rel->rd_rules != NULL ||
		rel->rd_rel->relrowsecurity ||
		desc->constr == NULL || desc->constr->num_check != lengthof(direct_insert_checks) ||
		row_binds_codec(row) || !row_meets_checks(row))
		return false;
	for (int c = 0; c < desc->constr->num_check; c++)
	{
		size_t		k;

		for (k = 0; k < lengthof(direct_insert_checks); k++)
			if (strcmp(desc->constr->check[c].ccname, direct_insert_checks[k]) == 0)
				break;
		if (k == lengthof(direct_insert_checks))
			return false;
	}
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		int			i;

		if (att->attisdropped)
			continue;
		for (i = 0; i < Natts_generator; i++)
			if (strcmp(NameStr(att->attname), generator_columns[i].name) == 0)
				break;
		if (i == Natts_generator || att->atttypid != generator_columns[i].column_type ||
			att->attgenerated || att->attidentity ||
			(att->attnotnull && row->nulls[i] == 'n'))
			return false;
		attnums[i] = att->attnum;
		found++;
	}
	if (found != Natts_generator)
		return false;
	if (rel->trigdesc != NULL)
		for (int t = 0; t < rel->trigdesc->numtriggers; t++)
		{
			Trigger    *trig = &rel->trigdesc->triggers[t];
			size_t		k;

			if (!TRIGGER_FOR_INSERT(trig->tgtype))
				continue;
			for (k = 0; k < lengthof(direct_insert_triggers); k++)
				if (strcmp(trig->tgname, direct_insert_triggers[k].trigger) == 0)
					break;
			if (k == lengthof(direct_insert_triggers) ||
				TRIGGER_FOR_ROW(trig->tgtype) != direct_insert_triggers[k].row ||
				(strcmp(trig->tgname, "generator_bind_codec") == 0 && trig->tgqual == NULL) ||
				get_func_namespace(trig->tgfoid) != nsp ||
				strcmp(get_func_name(trig->tgfoid), direct_insert_triggers[k].function) != 0)
				return false;
		}
	return true;
}

/*
 * Insert the row into cosid.generator directly (heap and indexes), as
 * core writes a catalog row: no statement to plan, execute and fire
 * triggers for.  Its CHECK constraints are checked by row_meets_checks,
 * its primary key by the index.  false when the table or the row needs the
 * INSERT (direct_insert_possible), or the transaction cannot write (the
 * INSERT then says why).
 */
static bool
insert_generator_direct(const char *name, GeneratorRow *row)
{
	Relation	rel;
	AttrNumber	attnums[Natts_generator];
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	tup;
	ResultRelInfo *rri;
	TupleTableSlot *slot;

	if (XactReadOnly || IsInParallelMode())
		return false;
	rel = table_openrv(makeRangeVar("cosid", "generator", -1), RowExclusiveLock);
	if (!direct_insert_possible(rel, row, attnums))
	{
		table_close(rel, NoLock);
		return false;
	}
	rri = makeNode(ResultRelInfo);
	rri->ri_RangeTableIndex = 1;
	rri->ri_RelationDesc = rel;
	ExecOpenIndices(rri, false);
	for (int i = 0; i < rri->ri_NumIndices; i++)
	{
		IndexInfo  *ii = rri->ri_IndexRelationInfo[i];

		if (ii->ii_Expressions != NIL || ii->ii_Predicate != NIL || ii->ii_ExclusionOps != NULL ||
			!rri->ri_IndexRelationDescs[i]->rd_index->indimmediate)
		{
			ExecCloseIndices(rri);
			table_close(rel, NoLock);
			return false;
		}
	}

	values = palloc0(sizeof(Datum) * RelationGetDescr(rel)->natts);
	nulls = palloc(sizeof(bool) * RelationGetDescr(rel)->natts);
	memset(nulls, true, sizeof(bool) * RelationGetDescr(rel)->natts);
	for (int i = 0; i < Natts_generator; i++)
	{
		values[attnums[i] - 1] = row->values[i];
		nulls[attnums[i] - 1] = row->nulls[i] == 'n';
	}
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	cosid_catalog_changed_name(name);
	simple_heap_insert(rel, tup);

	/* its index entries, as core's CatalogIndexInsert makes them */
	slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);
	ExecStoreHeapTuple(tup, slot, false);
	for (int i = 0; i < rri->ri_NumIndices; i++)
	{
		Relation	index = rri->ri_IndexRelationDescs[i];
		Datum		ivalues[INDEX_MAX_KEYS];
		bool		inulls[INDEX_MAX_KEYS];

		if (!rri->ri_IndexRelationInfo[i]->ii_ReadyForInserts)
			continue;
		FormIndexDatum(rri->ri_IndexRelationInfo[i], slot, NULL, ivalues, inulls);
		index_insert(index, ivalues, inulls, &tup->t_self, rel,
					 index->rd_index->indisunique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, rri->ri_IndexRelationInfo[i]);
	}
	ExecDropSingleTupleTableSlot(slot);
	ExecCloseIndices(rri);
	table_close(rel, NoLock);
	/* after the write too, as cosid_catalog_write does */
	cosid_catalog_changed_name(name);
	/* the row is seen by what comes next (a cosid_next of the same statement) */
	CommandCounterIncrement();
	return true;
}

/*
 * INSERT the row's first ncols columns into cosid.generator (as the
 * catalog's owner, SPI connected), the statement made from
 * generator_columns: its text is the same at every call.  The whole row of
 * a catalog of 1.3 or later goes in directly when it can
 * (insert_generator_direct).
 */
static void
insert_generator(const char *name, GeneratorRow *row, int ncols)
{
	StringInfoData cols;
	StringInfoData params;
	Oid			argtypes[Natts_generator];

	Assert(ncols == Natts_generator || ncols == Natts_generator_1_2);
	if (ncols == Natts_generator && insert_generator_direct(name, row))
		return;
	initStringInfo(&cols);
	initStringInfo(&params);
	for (int i = 0; i < ncols; i++)
	{
		appendStringInfo(&cols, "%s%s", i > 0 ? ", " : "", generator_columns[i].name);
		appendStringInfo(&params, "%s$%d%s", i > 0 ? ", " : "", i + 1, generator_columns[i].cast);
		argtypes[i] = generator_columns[i].type;
	}
	if (cosid_catalog_write(name, psprintf("INSERT INTO cosid.generator (%s) VALUES (%s)", cols.data, params.data),
							ncols, argtypes, row->values, row->nulls) != SPI_OK_INSERT)
		elog(ERROR, "could not insert into cosid.generator");
}

/* An int8 option of CREATE/ALTER SEQUENCE, as a parse node. */
static DefElem *
int8_option(const char *name, int64 value)
{
	return makeDefElem(pstrdup(name), (Node *) makeFloat(psprintf(INT64_FORMAT, value)), -1);
}

/* The sequence's last_value and is_called, read as core's sequence.c does. */
static void
sequence_state(Oid relid, int64 *last_value, bool *is_called)
{
	Relation	rel = relation_open(relid, NoLock);
	Buffer		buf = ReadBuffer(rel, 0);
	Page		page;
	ItemId		lp;
	HeapTupleHeader th;
	Form_pg_sequence_data seq;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	lp = PageGetItemId(page, FirstOffsetNumber);
	if (!ItemIdIsNormal(lp))
		elog(ERROR, "sequence %u has no tuple", relid);
	th = (HeapTupleHeader) PageGetItem(page, lp);
	seq = (Form_pg_sequence_data) ((char *) th + th->t_hoff);
	*last_value = seq->last_value;
	*is_called = seq->is_called;
	UnlockReleaseBuffer(buf);
	relation_close(rel, NoLock);
}

/* A new generator's identity: random, never 0 (the generators of 1.2). */
static int64
new_identity(void)
{
	int64		ident = 0;

	while (ident == 0)
		if (!pg_strong_random(&ident, sizeof(ident)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a random generator identity")));
	return ident;
}

/* Whether the definition document sets key at its top level. */
static bool
config_sets(Jsonb *config, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	return findJsonbValueFromContainer(&config->root, JB_FOBJECT, &k) != NULL;
}

/*
 * ALTER SEQUENCE on a parse node (no SQL text): the sequence is named by the
 * schema and name its OID has now, and the caller holds a lock on it.
 */
static void
alter_sequence(Oid relid, List *options)
{
	AlterSeqStmt *stmt = makeNode(AlterSeqStmt);

	stmt->sequence = makeRangeVar(get_namespace_name(get_rel_namespace(relid)),
								  get_rel_name(relid), -1);
	stmt->options = options;
	stmt->missing_ok = false;
	(void) AlterSequence(make_parsestate(NULL), stmt);
	CommandCounterIncrement();
}

/* The name of the backing sequence cosid makes for a generator, in schema cosid. */
char *
cosid_ddl_backing_sequence_name(const char *name)
{
	char		hex[33];
	const char *errstr = NULL;

	if (!pg_md5_hash(name, strlen(name), hex, &errstr))
		elog(ERROR, "could not compute an MD5 hash: %s", errstr);
	return psprintf("segment_%s", hex);
}

/*
 * SELECT on a backing sequence cosid made, for the generator's owner and
 * pg_database_owner, so that they can pg_dump the database (reading it
 * neither advances nor sets it).  Run as the sequence's owner; a GRANT on a
 * parse node, its roles named as the catalog spells them now.  Inside
 * CREATE EXTENSION (another extension's script defining a generator), where
 * GRANT also records the sequence's initial privileges.
 */
static void
grant_select_stmt(Oid seqid, Oid owner)
{
	GrantStmt  *stmt = makeNode(GrantStmt);
	AccessPriv *priv = makeNode(AccessPriv);
	RoleSpec   *dbowner = makeNode(RoleSpec);

	priv->priv_name = pstrdup("select");
	dbowner->roletype = ROLESPEC_CSTRING;
	dbowner->rolename = pstrdup("pg_database_owner");
	dbowner->location = -1;
	stmt->is_grant = true;
	stmt->targtype = ACL_TARGET_OBJECT;
	stmt->objtype = OBJECT_SEQUENCE;
	stmt->objects = list_make1(makeRangeVar(get_namespace_name(get_rel_namespace(seqid)),
											get_rel_name(seqid), -1));
	stmt->privileges = list_make1(priv);
	stmt->grantees = list_make1(dbowner);
	if (owner != cosid_rel_owner(seqid))
	{
		RoleSpec   *role = makeNode(RoleSpec);

		role->roletype = ROLESPEC_CSTRING;
		role->rolename = GetUserNameFromId(owner, false);
		role->location = -1;
		stmt->grantees = lappend(stmt->grantees, role);
	}
	stmt->behavior = DROP_RESTRICT;
	ExecuteGrantStmt(stmt);
	CommandCounterIncrement();
}

/*
 * The same GRANT made directly, as core's GRANT makes it for a sequence
 * whose owner grants: the new sequence's privileges (its owner's defaults,
 * or what ALTER DEFAULT PRIVILEGES gave it) plus SELECT for
 * pg_database_owner, then for the generator's owner unless it owns the
 * sequence, granted by the sequence's owner; the role dependencies that
 * DROP ROLE and REASSIGN OWNED see.  No name is looked up, and the
 * sequence's relcache entry is rebuilt once, at the next command, not at
 * once.  Its pg_class row is visible (DefineRelation made it so).
 */
static void
grant_select(Oid seqid, Oid owner)
{
	Relation	pg_class;
	HeapTuple	tup;
	HeapTuple	newtup;
	Oid			seqowner;
	Datum		d;
	bool		isnull;
	Acl		   *old_acl;
	Acl		   *new_acl;
	Oid			grantees[2];
	int			ngrantees = 0;
	int			noldmembers;
	int			nnewmembers;
	Oid		   *oldmembers;
	Oid		   *newmembers;
	Datum		values[Natts_pg_class] = {0};
	bool		nulls[Natts_pg_class] = {0};
	bool		replace[Natts_pg_class] = {0};

	if (creating_extension)
	{
		grant_select_stmt(seqid, owner);
		return;
	}
	pg_class = table_open(RelationRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(seqid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", seqid);
	seqowner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	d = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relacl, &isnull);
	old_acl = isnull ? acldefault(OBJECT_SEQUENCE, seqowner) : DatumGetAclPCopy(d);
	noldmembers = aclmembers(old_acl, &oldmembers);

	grantees[ngrantees++] = ROLE_PG_DATABASE_OWNER;
	if (owner != seqowner)
		grantees[ngrantees++] = owner;
	new_acl = old_acl;
	for (int i = 0; i < ngrantees; i++)
	{
		AclItem		item;

		item.ai_grantee = grantees[i];
		item.ai_grantor = seqowner;
		ACLITEM_SET_PRIVS_GOPTIONS(item, ACL_SELECT, ACL_NO_RIGHTS);
		new_acl = aclupdate(new_acl, &item, ACL_MODECHG_ADD, seqowner, DROP_RESTRICT);
	}
	nnewmembers = aclmembers(new_acl, &newmembers);

	values[Anum_pg_class_relacl - 1] = PointerGetDatum(new_acl);
	replace[Anum_pg_class_relacl - 1] = true;
	newtup = heap_modify_tuple(tup, RelationGetDescr(pg_class), values, nulls, replace);
	CatalogTupleUpdate(pg_class, &newtup->t_self, newtup);
	updateAclDependencies(RelationRelationId, seqid, 0, seqowner,
						  noldmembers, oldmembers, nnewmembers, newmembers);
	InvokeObjectPostAlterHook(RelationRelationId, seqid, 0);
	table_close(pg_class, RowExclusiveLock);
}

/*
 * The generator other than name that seqid backs, or NULL (SPI connected).
 * Not read-only: in a restore, rows written earlier by the same COPY count.
 */
char *
cosid_ddl_sequence_backs(Oid seqid, const char *name)
{
	Oid			argtypes[2] = {OIDOID, TEXTOID};
	Datum		values[2] = {ObjectIdGetDatum(seqid), CStringGetTextDatum(name)};

	if (cosid_catalog_exec("SELECT name FROM cosid.generator "
						   "WHERE sequence::pg_catalog.oid OPERATOR(pg_catalog.=) $1 "
						   "AND name OPERATOR(pg_catalog.<>) $2",
						   2, argtypes, values, NULL, false) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	return SPI_processed > 0 ?
		SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
}

/*
 * The backing sequence of a segment generator.  Its value is the last number
 * of the last segment handed out, its increment the step, so nextval() gives
 * the end of the next segment: [value - step + 1, value].
 *
 * cosid makes one in schema cosid (as the catalog's owner, through
 * DefineSequence: no SQL text), named after the md5 of the generator's name.
 * A sequence to adopt (a bigserial's) must be the caller's, permanent and
 * logged; it is set to the step and to the last number it gave (or one below
 * its start), so that the generator continues it with no gap and no overlap.
 * The lock taken here (SHARE ROW EXCLUSIVE, as ALTER SEQUENCE's) keeps
 * nextval() out until the transaction ends.  floor: the first number the
 * generator may hand out (above what its name handed out before), or
 * PG_INT64_MIN when the name has no history.
 */
static Oid
segment_sequence(const CosidGenDef *def, int64 floor, bool *owns)
{
	Oid			relid;
	char	   *other;
	char		persistence;
	List	   *names;

	if (def->spec.adopt == NULL)
	{
		CreateSeqStmt *stmt = makeNode(CreateSeqStmt);
		ObjectAddress addr;
		CosidAsRole as;

		stmt->sequence = makeRangeVar("cosid", cosid_ddl_backing_sequence_name(def->name), -1);
		stmt->options = list_make3(int8_option("increment", def->spec.step),
								   int8_option("minvalue", 0),
								   int8_option("start", Max(def->spec.start, floor) + def->spec.step - 1));
		stmt->ownerId = InvalidOid;
		cosid_begin_as_role(cosid_catalog_owner(), &as);
		addr = DefineSequence(make_parsestate(NULL), stmt);
		CommandCounterIncrement();
		grant_select(addr.objectId, def->owner);
		cosid_end_as_role(&as);
		*owns = true;
		return addr.objectId;
	}

	*owns = false;
	/* the caller's own name lookup, as ALTER SEQUENCE would do it */
	names = cosid_qualified_name_list(def->spec.adopt);
	relid = RangeVarGetRelidExtended(makeRangeVarFromNameList(names),
									 ShareRowExclusiveLock, RVR_MISSING_OK,
									 RangeVarCallbackOwnsRelation, NULL);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_SEQUENCE)
		key_error("adopt-sequence", "\"%s\" is not a sequence", def->spec.adopt);
	persistence = get_rel_persistence(relid);
	if (persistence == RELPERSISTENCE_TEMP)
		key_error("adopt-sequence",
						"sequence \"%s\" is temporary; only a permanent sequence can back a generator (other sessions cannot see a temporary one)",
						def->spec.adopt);
	if (persistence != RELPERSISTENCE_PERMANENT)
		key_error("adopt-sequence",
						"sequence \"%s\" is unlogged; only a logged sequence can back a generator (a crash resets an unlogged one, so its numbers would return)",
						def->spec.adopt);

	other = cosid_ddl_sequence_backs(relid, def->name);
	if (other != NULL)
		key_error("adopt-sequence", "sequence \"%s\" already backs generator \"%s\"", def->spec.adopt, other);

	/* continue from the last number given (one below the start if none) */
	{
		HeapTuple	tp = SearchSysCache1(SEQRELID, ObjectIdGetDatum(relid));
		int64		inc;
		int64		min;
		int64		last;
		bool		is_called;

		if (!HeapTupleIsValid(tp))
			elog(ERROR, "cache lookup failed for sequence %u", relid);
		inc = ((Form_pg_sequence) GETSTRUCT(tp))->seqincrement;
		min = ((Form_pg_sequence) GETSTRUCT(tp))->seqmin;
		ReleaseSysCache(tp);
		if (inc < 0)
			key_error("adopt-sequence", "sequence \"%s\" descends; a segment generator counts up", def->spec.adopt);
		sequence_state(relid, &last, &is_called);
		if (!is_called)
			last--;
		/* never below what the name handed out before */
		if (floor != PG_INT64_MIN)
			last = Max(last, floor - 1);
		alter_sequence(relid, list_make2(int8_option("increment", def->spec.step),
										 int8_option("minvalue", Min(min, last))));
		DirectFunctionCall3(setval3_oid, ObjectIdGetDatum(relid), Int64GetDatum(last),
							BoolGetDatum(true));
	}
	return relid;
}

/*
 * The catalog's codec_functions of a bound codec: its custom item's encode
 * and decode functions, an oid[], or NULL (*null 'n') without one.
 */
static Datum
codec_functions_datum(const CosidCodecRt *rt, char *null)
{
	Oid			fns[2];
	Datum		d[2];

	*null = ' ';
	if (!cosid_codecbind_functions(rt, fns))
	{
		*null = 'n';
		return (Datum) 0;
	}
	d[0] = ObjectIdGetDatum(fns[0]);
	d[1] = ObjectIdGetDatum(fns[1]);
	return PointerGetDatum(construct_array(d, 2, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
}

/*
 * 42501 unless the current role may define a generator here: what CREATE
 * SCHEMA needs, the CREATE privilege on the database (a generator is a new
 * object of the database).
 */
static void
check_may_define(const char *name)
{
	if (cosid_database_aclcheck(MyDatabaseId, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to define generator \"%s\"", name),
				 errdetail("Defining a generator needs the CREATE privilege on database %s.",
						   get_database_name(MyDatabaseId))));
}

/* 42710 when a generator of this name exists. */
static void
check_new_name(const char *name)
{
	static const CosidRowRead generator_row = {.table = "generator", .key_column = "name"};

	if (cosid_row_by_key(&generator_row, name, NULL, NULL, NULL) == COSID_ROW_FOUND)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("generator \"%s\" already exists", name),
				 errhint("Use cosid_alter() to change it, or cosid_drop() first.")));
}

/*
 * A time-based generator's identity in a catalog of 1.2 (which has no
 * identity column): the name's state, as 1.2 keeps it (identity 0).
 */
static void
define_identity_1_2(const char *name, CosidGenDef *def)
{
	CosidGenDef old;
	bool		had = cosid_gen_name_identity(name, &old) && old.identity == 0;

	def->identity = 0;
	strlcpy(def->name, name, NAMEDATALEN);

	/*
	 * Once the update gave identity 0 of this name and layout an identity in
	 * another database, a generator of identity 0 issues with that one (the
	 * other database's copies not yet updated do): only a role that may copy
	 * that database's identity defines one.
	 */
	if (cosid_gen_zero_led_on(def))
	{
		Oid			db = cosid_gen_identity_owner(def);

		if (OidIsValid(db) && db != MyDatabaseId && !cosid_ddl_may_take_identity(def, db))
			cosid_ddl_identity_owner_error(def, db, NULL);
	}
	cosid_gen_define_name(def, had ? &old : NULL, 0);
}

/*
 * Whose state a time-based generator has: the identity its name had when it
 * was dropped in this database (its ids continue above what that issued),
 * else a new one, which no other database's generator has (a copy of this
 * database gets it with it).  With another layout than the old identity's,
 * cosid_gen_define_name gives it the new one, recorded with a floor above
 * what the old one may have issued.  v13: the catalog is 1.3's or later.
 */
static void
define_identity(const char *name, CosidGenDef *def, bool v13)
{
	int64		fresh = new_identity();

	def->identity = fresh;
	if (COSID_TIME_BASED(def->spec.strategy) && v13)
	{
		CosidGenDef old;
		bool		had = cosid_history_identity(name, &old) ||
			cosid_gen_name_identity(name, &old);

		if (had)
			def->identity = old.identity;
		cosid_gen_define_name(def, had ? &old : NULL, fresh);
	}
	else if (COSID_TIME_BASED(def->spec.strategy))
		define_identity_1_2(name, def);
}

/*
 * A segment generator starts above what its name handed out before it was
 * dropped (cosid.generator_history); a "start" written at or below that is
 * refused.  A local one's new sequence starts there; one from the lease
 * store (which needs no sequence: the store counts, and its counter outlives
 * a drop) gets it as its "start" in *config, which every fetch asks the
 * store to stay above.  A name whose numbers came from the lease store
 * cannot become local: only the store knows how far they went.  Returns the
 * first number the generator may hand out, or PG_INT64_MIN when the name has
 * no history.
 */
static int64
segment_floor(const char *name, const CosidGenDef *def, Jsonb **config)
{
	int64		last = 0;
	int64		floor;
	bool		from_store = false;

	if (!cosid_history_last(name, &last, &from_store))
		return PG_INT64_MIN;
	if (from_store && def->spec.distributor == COSID_DISTRIBUTOR_LOCAL)
		key_error("distributor",
				  "expected \"lease-store\": generators named \"%s\" in this database took numbers from the lease store, which only the store can continue above (cosid_drop(name, forget_history => true) forgets them)",
				  name);
	if (def->spec.group == COSID_GROUP_NONE && def->spec.adopt == NULL &&
		config_sets(*config, "start") && def->spec.start <= last)
		key_error("start",
				  "expected a number above " INT64_FORMAT ": generators named \"%s\" in this database handed out numbers up to " INT64_FORMAT " before they were dropped (cosid_drop(name, forget_history => true) forgets them)",
				  last, name, last);
	if (last > PG_INT64_MAX - def->spec.step)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("generators named \"%s\" in this database used up every number", name),
				 errdetail("They handed out numbers up to " INT64_FORMAT ".", last),
				 errhint("Define a generator of another name, or drop this one with forget_history => true.")));
	floor = last + 1;
	if (def->spec.distributor == COSID_DISTRIBUTOR_LEASE_STORE && def->spec.group == COSID_GROUP_NONE &&
		floor > def->spec.start)
		*config = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(*config),
													 DirectFunctionCall1(jsonb_in,
																		 CStringGetDatum(psprintf("{\"start\": " INT64_FORMAT "}", floor)))));
	return floor;
}

/*
 * The columns of a segment generator: its backing sequence (a local one's,
 * made or adopted now above floor) and, from the lease store, the shared
 * counter's database.  That counter is named after this database as it is
 * called now: a copy of the database, or the database renamed, keeps using
 * it (and no number it handed out comes again).
 */
static void
row_set_segment(GeneratorRow *row, const CosidGenDef *def, int64 floor)
{
	bool		owns = false;

	if (def->spec.distributor == COSID_DISTRIBUTOR_LOCAL)
		row_set(row, Anum_generator_sequence, ObjectIdGetDatum(segment_sequence(def, floor, &owns)));
	row_set(row, Anum_generator_owns_sequence, BoolGetDatum(owns));
	if (def->spec.distributor == COSID_DISTRIBUTOR_LEASE_STORE)
		row_set(row, Anum_generator_counter_database,
				CStringGetTextDatum(get_database_name(MyDatabaseId)));
}

Datum
cosid_define(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *config = PG_GETARG_JSONB_P(1);
	CosidGenDef def;
	CosidCodecRt *rt;
	GeneratorRow row;
	bool		v13;

	cosid_catalog_check_name(name);
	cosid_citus_refuse_on_worker("cosid_define", name);
	check_may_define(name);
	cosid_gendef_parse(name, config, &def, true);
	def.owner = GetUserId();
	rt = cosid_codecbind_generator(&def, COSID_BIND_DEFINE, CurrentMemoryContext);
	/* custom functions are kept as resolved now (by OID), whoever calls later */
	config = cosid_codecbind_qualify(config, rt);

	SPI_connect();
	check_new_name(name);
	v13 = cosid_catalog_is_1_3();
	define_identity(name, &def, v13);

	row_init(&row);
	row_set(&row, Anum_generator_name, CStringGetTextDatum(name));
	row_set(&row, Anum_generator_strategy, CStringGetTextDatum(cosid_strategy_name(def.spec.strategy)));
	row_set_layout(&row, &def);
	row_set(&row, Anum_generator_owner, ObjectIdGetDatum(GetUserId()));
	if (def.spec.strategy == COSID_STRATEGY_SEGMENT)
		row_set_segment(&row, &def, segment_floor(name, &def, &config));
	else
		row_set(&row, Anum_generator_owns_sequence, BoolGetDatum(false));
	row_set(&row, Anum_generator_config, JsonbPGetDatum(config));
	row_set(&row, Anum_generator_identity, Int64GetDatum(def.identity));
	row.values[Anum_generator_codec_functions - 1] =
		codec_functions_datum(rt, &row.nulls[Anum_generator_codec_functions - 1]);
	/* a catalog from before 1.3 has neither codec_functions (found by name) nor identity */
	insert_generator(name, &row, v13 ? Natts_generator : Natts_generator_1_2);
	/* on a Citus coordinator: to every node, in this transaction */
	cosid_citus_mirror(name);
	SPI_finish();
	cosid_catalog_changed_name(name);
	PG_RETURN_VOID();
}

/* What cosid_alter() must refuse: anything that could issue an id again. */
static void
check_alter(const char *name, const CosidGenDef *old, const CosidGenDef *new)
{
	const char *key = NULL;

	if (old->spec.strategy != new->spec.strategy)
		key = "strategy";
	else if (old->spec.strategy == COSID_STRATEGY_SEGMENT)
	{
		if (old->spec.start != new->spec.start)
			key = "start";
		else if (old->spec.group != new->spec.group)
			key = "group";
		else if (strcmp(old->spec.zone, new->spec.zone) != 0)
			key = "zone";
		else if ((old->spec.adopt == NULL) != (new->spec.adopt == NULL) ||
				 (old->spec.adopt && strcmp(old->spec.adopt, new->spec.adopt) != 0))
			key = "adopt-sequence";
		else if (old->spec.distributor != new->spec.distributor)
			key = "distributor";
		if (key)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot change the %s of segment generator \"%s\"", key, name),
					 errdetail("Changing where numbers start, their period, their sequence or their distributor could issue a number again."),
					 errhint("Define a new generator instead; cosid_alter() changes the step, reserve, codec and int.")));
		return;
	}
	else if (old->spec.layout.epoch_ms != new->spec.layout.epoch_ms)
		key = "epoch";
	else if (old->spec.layout.unit_ms != new->spec.layout.unit_ms)
		key = "unit";
	else if (old->spec.layout.time_bits != new->spec.layout.time_bits)
		key = "time-bits";
	else if (old->spec.layout.node_bits != new->spec.layout.node_bits)
		key = "node-bits";
	else if (old->spec.layout.seq_bits != new->spec.layout.seq_bits)
		key = "seq-bits";
	else if (old->spec.uncertainty_bits != new->spec.uncertainty_bits)
		key = "uncertainty-bits";
	if (key)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot change the %s of generator \"%s\"",
						strcmp(key, "strategy") == 0 ? "strategy" : "layout", name),
				 errdetail("At %s: the value differs.  Changing the strategy, epoch, unit, bit widths or uncertainty bits could issue an id again.",
						   key),
				 errhint("Define a new generator instead; cosid_alter() changes the codec, clock-regression, seq-reset-threshold and int.")));
}

Datum
cosid_alter(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *patch = PG_GETARG_JSONB_P(1);
	Jsonb	   *config;
	Jsonb	   *merged;
	CosidGenDef stored;
	CosidGenDef old;
	CosidGenDef new;
	CosidCodecRt *rt;
	Oid			argtypes[4] = {TEXTOID, JSONBOID, INT8OID, OIDARRAYOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	bool		v13;

	if (!JB_ROOT_IS_OBJECT(patch) || JB_ROOT_IS_SCALAR(patch))
		key_error("definition", "expected a JSON object of the keys to change");
	cosid_citus_refuse_on_worker("cosid_alter", name);

	SPI_connect();
	memset(&stored, 0, sizeof(stored));
	cosid_catalog_read(name, true, false, &config, &stored, NULL);
	cosid_catalog_check_owner(name, stored.owner);

	/* The patch replaces top-level keys; a key set to null goes back to its default. */
	merged = DatumGetJsonbP(DirectFunctionCall1(jsonb_strip_nulls,
												DirectFunctionCall2(jsonb_concat,
																	JsonbPGetDatum(config),
																	JsonbPGetDatum(patch))));
	cosid_gendef_parse(name, config, &old, false);
	cosid_gendef_parse(name, merged, &new, false);
	/* the stored layout is what ids were made with, whatever the presets say now */
	old.spec.layout = stored.spec.layout;
	old.spec.strategy = stored.spec.strategy;
	check_alter(name, &old, &new);
	/* the new codec is checked against the layout ids are made with */
	{
		int64		threshold = new.spec.layout.seq_reset_threshold;

		new.spec.layout = stored.spec.layout;
		new.spec.layout.seq_reset_threshold = threshold;
	}
	new.owner = stored.owner;
	/*
	 * A patch without "codec" keeps the functions the codec is bound to
	 * (checked again as at every bind); only a "codec" given here is
	 * resolved by name.
	 */
	if (!config_sets(patch, "codec"))
	{
		new.codec_fns[0] = stored.codec_fns[0];
		new.codec_fns[1] = stored.codec_fns[1];
	}
	rt = cosid_codecbind_generator(&new, COSID_BIND_DEFINE, CurrentMemoryContext);
	merged = cosid_codecbind_qualify(merged, rt);

	/*
	 * A new step: the sequence hands out segments of the new size from now
	 * on (segments from the lease store take it from the next fetch).
	 */
	old.seqid = stored.seqid;
	cosid_catalog_check_sequence(&old);
	if (new.spec.strategy == COSID_STRATEGY_SEGMENT && new.spec.step != old.spec.step &&
		old.spec.distributor == COSID_DISTRIBUTOR_LOCAL)
	{
		Oid			seqowner;
		CosidAsRole as;

		LockRelationOid(stored.seqid, ShareRowExclusiveLock);
		if (stored.owns_sequence)
		{
			/* cosid's own sequence: as the catalog's owner, who owns it */
			seqowner = cosid_rel_owner(stored.seqid);
			cosid_begin_as_role(seqowner, &as);
			alter_sequence(stored.seqid, list_make1(int8_option("increment", new.spec.step)));
			cosid_end_as_role(&as);
		}
		else
		{
			/* an adopted sequence: only by whoever owns it now */
			alter_sequence(stored.seqid, list_make1(int8_option("increment", new.spec.step)));
		}
	}

	values[0] = CStringGetTextDatum(name);
	values[1] = JsonbPGetDatum(merged);
	values[2] = Int64GetDatum(new.spec.layout.seq_reset_threshold);
	if (!COSID_TIME_BASED(new.spec.strategy))
		nulls[2] = 'n';
	values[3] = codec_functions_datum(rt, &nulls[3]);
	v13 = cosid_catalog_is_1_3();
	/* a segment generator keeps its entry: its segments came from the same sequence */
	if (cosid_catalog_write(name, v13 ?
							"UPDATE cosid.generator SET config = $2, seq_reset_threshold = $3, "
							"codec_functions = $4 "
							"WHERE name OPERATOR(pg_catalog.=) $1" :
							"UPDATE cosid.generator SET config = $2, seq_reset_threshold = $3 "
							"WHERE name OPERATOR(pg_catalog.=) $1",
							v13 ? 4 : 3, argtypes, values, nulls) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "could not update cosid.generator");
	cosid_citus_mirror(name);
	SPI_finish();
	cosid_catalog_changed_name(name);
	PG_RETURN_VOID();
}

Datum
cosid_drop(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		if_exists = PG_GETARG_BOOL(1);
	/* 1.2 declares two arguments; 1.3 adds forget_history */
	bool		forget = PG_NARGS() > 2 && PG_GETARG_BOOL(2);
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	Jsonb	   *config;
	CosidGenDef stored;

	cosid_citus_refuse_on_worker("cosid_drop", name);
	SPI_connect();
	if (if_exists)
	{
		if (cosid_catalog_exec("SELECT 1 FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1",
						 1, argtypes, values, NULL, true) != SPI_OK_SELECT)
			elog(ERROR, "could not read cosid.generator");
		if (SPI_processed == 0)
		{
			SPI_finish();
			ereport(NOTICE,
					(errmsg("generator \"%s\" does not exist, skipping", name)));
			PG_RETURN_VOID();
		}
	}
	memset(&stored, 0, sizeof(stored));
	cosid_catalog_read(name, true, false, &config, &stored, NULL);
	cosid_catalog_check_owner(name, stored.owner);

	/*
	 * The name's history: the last number its sequence gave, read with
	 * nextval kept out (fetches in other sessions wait for this transaction;
	 * when it commits they find the generator gone).  Defined again, the
	 * name continues above it.
	 */
	if (stored.spec.strategy == COSID_STRATEGY_SEGMENT && OidIsValid(stored.seqid))
	{
		int64		last = 0;
		bool		is_called;

		/* locked first: a sequence dropped meanwhile (with its table) is seen */
		LockRelationOid(stored.seqid, ShareRowExclusiveLock);
		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(stored.seqid)) &&
			get_rel_relkind(stored.seqid) == RELKIND_SEQUENCE)
		{
			sequence_state(stored.seqid, &last, &is_called);
			if (!is_called)
				last -= cosid_sequence_increment(stored.seqid);
		}
		cosid_history_write(name, last, false, forget);
	}
	else if (stored.spec.strategy == COSID_STRATEGY_SEGMENT)
		cosid_history_write(name, 0, true, forget);	/* its numbers: the store's */
	else if (forget)
		cosid_history_write(name, 0, false, true);
	else
	{
		/* time-based: its identity, for the name defined again */
		CosidGenDef parsed;

		cosid_gendef_parse(name, config, &parsed, false);
		strlcpy(stored.name, name, NAMEDATALEN);
		stored.spec.uncertainty_bits = parsed.spec.uncertainty_bits;
		cosid_history_write_identity(&stored);
	}
	/* whatever its strategy: the name's record in pg_cosid/names too, at commit */
	if (forget)
		cosid_gen_forget_name(name);
	if (cosid_catalog_write(name, "DELETE FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1",
							1, argtypes, values, NULL) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from cosid.generator");
	cosid_citus_mirror(name);
	SPI_finish();

	/* a sequence cosid made goes with it; an adopted one stays its owner's */
	if (stored.owns_sequence && get_rel_relkind(stored.seqid) == RELKIND_SEQUENCE &&
		get_rel_namespace(stored.seqid) == get_namespace_oid("cosid", false))
	{
		ObjectAddress seq;

		ObjectAddressSet(seq, RelationRelationId, stored.seqid);
		performDeletion(&seq, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	strlcpy(stored.name, name, NAMEDATALEN);
	cosid_gen_release_at_commit(&stored);
	cosid_catalog_changed_name(name);
	PG_RETURN_VOID();
}

/* The owner role of database dbid, or InvalidOid when it is gone. */
Oid
cosid_ddl_database_owner(Oid dbid)
{
	HeapTuple	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dbid));
	Oid			dba;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	dba = ((Form_pg_database) GETSTRUCT(tup))->datdba;
	ReleaseSysCache(tup);
	return dba;
}

/*
 * Whether the current role may give this database the identity of def,
 * which belongs to database db: as a superuser, or as a member of the
 * owner role of db or of another database that holds the identity (a copy
 * of db that defined the name again, or a database whose 1.2 generators
 * the update gave the identity their name's identity 0 led to: tenants
 * copied from one template before 1.3 share their names' identities).
 */
bool
cosid_ddl_may_take_identity(const CosidGenDef *def, Oid db)
{
	Oid			dba = cosid_ddl_database_owner(db);
	Oid		   *dbs;
	int			n;

	if (superuser() || !OidIsValid(dba) || has_privs_of_role(GetUserId(), dba))
		return true;
	/* identity 0 is held by every 1.2 database that defined the name: its owner's only */
	if (def->identity == 0)
		return false;
	n = cosid_gen_identity_holders(def, &dbs);
	for (int i = 0; i < n; i++)
	{
		Oid			holder = dbs[i] == MyDatabaseId ? InvalidOid : cosid_ddl_database_owner(dbs[i]);

		if (dbs[i] == MyDatabaseId || (OidIsValid(holder) && has_privs_of_role(GetUserId(), holder)))
			return true;
	}
	return false;
}

/*
 * 42501 for taking identity def->identity of database db into this one: a
 * restored row of table (NULL: cosid_define).
 */
void
cosid_ddl_identity_owner_error(const CosidGenDef *def, Oid db, const char *table)
{
	Oid			dba = cosid_ddl_database_owner(db);
	const char *dbname = get_database_name(db);
	const char *role = OidIsValid(dba) ? GetUserNameFromId(dba, true) : NULL;

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 table ?
			 errmsg("permission denied to restore a row of table cosid.%s for generator \"%s\"",
					table, def->name) :
			 errmsg("permission denied to define generator \"%s\"", def->name),
			 errdetail("Identity " INT64_FORMAT " of generator \"%s\" belongs to database \"%s\" on this server; a generator of this database that had it would share or disturb that database's generator.",
					   def->identity, def->name, dbname ? dbname : "?"),
			 table ?
			 errhint("Copy database \"%s\" as a superuser or as a member of its owner role %s, or define the generator in this database with cosid_define().",
					 dbname ? dbname : "?", role ? role : "?") :
			 errhint("Update cosid in this database (ALTER EXTENSION cosid UPDATE, as a superuser): its generators then get identities of their own.")));
}

/*
 * cosid.give_identities(), run once by the update to 1.4: every time-based
 * generator of identity 0 (defined before 1.3), and every dropped one in
 * cosid.generator_history, gets an identity of its own, recorded as this
 * database's with a floor above every id identity 0 of its name may have
 * issued (genstate.c: cosid_gen_give_identity).  Returns how many rows.
 */
Datum
cosid_give_identities(PG_FUNCTION_ARGS)
{
	static const char *const reads[2] = {
		"SELECT name, strategy, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, config "
		"FROM cosid.generator WHERE identity OPERATOR(pg_catalog.=) 0 "
		"AND strategy OPERATOR(pg_catalog.<>) 'segment' ORDER BY name",
		"SELECT name, strategy, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, uncertainty_bits "
		"FROM cosid.generator_history WHERE identity OPERATOR(pg_catalog.=) 0 "
		"AND (strategy OPERATOR(pg_catalog.=) 'snowflake' OR strategy OPERATOR(pg_catalog.=) 'cosid80') "
		"AND epoch_ms IS NOT NULL AND unit_ms IS NOT NULL "
		"AND time_bits IS NOT NULL AND node_bits IS NOT NULL AND seq_bits IS NOT NULL "
		"AND uncertainty_bits IS NOT NULL ORDER BY name"};
	static const char *const writes[2] = {
		"UPDATE cosid.generator SET identity = $2 WHERE name OPERATOR(pg_catalog.=) $1",
		"UPDATE cosid.generator_history SET identity = $2 WHERE name OPERATOR(pg_catalog.=) $1"};
	int			count = 0;

	if (!cosid_catalog_is_1_3())
		PG_RETURN_INT32(0);
	SPI_connect();
	for (int t = 0; t < 2; t++)
	{
		uint64		nrows;
		CosidGenDef *defs;

		if (cosid_catalog_exec(reads[t], 0, NULL, NULL, NULL, true) != SPI_OK_SELECT)
			elog(ERROR, "could not read cosid's generators");
		nrows = SPI_processed;
		defs = palloc0(sizeof(CosidGenDef) * Max(nrows, 1));
		for (uint64 i = 0; i < nrows; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			CosidGenDef *def = &defs[i];
			bool		isnull;
			char	   *name = TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull));

			if (t == 0)
				cosid_gendef_parse(name, DatumGetJsonbPCopy(SPI_getbinval(tup, desc, 8, &isnull)), def, false);
			else
			{
				def->spec.strategy = cosid_strategy_from_name(TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull)));
				def->spec.uncertainty_bits = DatumGetInt32(SPI_getbinval(tup, desc, 8, &isnull));
			}
			strlcpy(def->name, name, NAMEDATALEN);
			def->identity = 0;
			def->spec.layout.epoch_ms = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
			def->spec.layout.unit_ms = DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull));
			def->spec.layout.time_bits = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
			def->spec.layout.node_bits = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
			def->spec.layout.seq_bits = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
		}
		for (uint64 i = 0; i < nrows; i++)
		{
			Oid			argtypes[2] = {TEXTOID, INT8OID};
			Datum		values[2];

			if (!COSID_TIME_BASED(defs[i].spec.strategy))
				continue;
			values[0] = CStringGetTextDatum(defs[i].name);
			values[1] = Int64GetDatum(cosid_gen_give_identity(&defs[i], new_identity()));
			if (cosid_catalog_exec(writes[t], 2, argtypes, values, NULL, false) != SPI_OK_UPDATE)
				elog(ERROR, "could not give generator \"%s\" an identity", defs[i].name);
			count++;
		}
	}
	SPI_finish();
	if (count > 0)
		cosid_catalog_changed_now();
	PG_RETURN_INT32(count);
}

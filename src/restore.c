/*
 * restore.c - cosid.restore_check(), the trigger that decides what a
 * restore by the database's owner (not a superuser) may load into cosid's
 * tables: cosid.generator (1.3), cosid.generator_history (1.4), and the
 * lease store's cosid.lease and cosid.segment_counter.
 *
 * A row written by cosid itself (as the tables' owner) or by a superuser
 * passes.  A generator row must be one its restorer could have defined with
 * cosid_define: a valid definition, layout and codec, an owner whose
 * privileges the restorer has, a backing sequence of its own, a time-based
 * identity this database may take (ddl.c's rule: one of another database on
 * this server only through a copy a member of its owner role makes), and a
 * lease store counter of its own database.  A time-based history row must
 * have an identity this database may take and the layout it issues with.
 *
 * Owns: what a restored row may hold.  Must not: write a table or shared
 * state (a row is returned, its owner replaced at most), or issue ids.
 */
#include "catalog.h"
#include "codecbind.h"
#include "ddl.h"
#include "gendef.h"
#include "genstate.h"
#include "history.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/dbcommands.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(cosid_restore_check);

/* A column of a row of rel by name (the table's columns, whatever their order). */
static Datum
row_value(HeapTuple tup, TupleDesc desc, const char *column, bool *isnull)
{
	int			attnum = SPI_fnumber(desc, column);

	if (attnum <= 0)
		elog(ERROR, "cosid.generator has no column \"%s\"", column);
	return heap_getattr(tup, attnum, desc, isnull);
}

static int64
layout_column(HeapTuple tup, TupleDesc desc, const char *name, const char *column)
{
	bool		isnull;
	Datum		d = row_value(tup, desc, column, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot restore generator \"%s\"", name),
				 errdetail("Column %s is null; a time-based generator has its whole layout.", column)));
	return strcmp(column, "epoch_ms") == 0 || strcmp(column, "seq_reset_threshold") == 0 ?
		DatumGetInt64(d) : (int64) DatumGetInt32(d);
}

/*
 * A restored row (of cosid.generator or cosid.generator_history) with a
 * time-based identity: the identity belongs to the database that first
 * defined it or issued with it on this server (identity 0 too, per name),
 * and another database gets it only through a copy that a superuser or a
 * member of that database's owner role makes (CREATE DATABASE ... TEMPLATE,
 * or a dump restored).  42501 otherwise.  An identity this server does not
 * know, or whose database was dropped, is the restoring database's to take.
 */
static void
check_identity_owner(const CosidGenDef *def, const char *table)
{
	Oid			db = cosid_gen_identity_owner(def);

	if (!OidIsValid(db) || db == MyDatabaseId || cosid_ddl_may_take_identity(def, db))
		return;
	cosid_ddl_identity_owner_error(def, db, table);
}

/*
 * A restored row naming the lease store's counter of another database
 * (counter_database): its generator would draw from that database's
 * counter (and the store refuses its owner's generator after it: 42501).
 * Only a superuser, or a member of the owner role of the database of that
 * name on this server, restores one.
 */
static void
check_counter_database(HeapTuple tup, TupleDesc desc, const char *name)
{
	bool		isnull;
	Datum		d;
	char	   *counter;
	Oid			db;
	Oid			dba;

	if (SPI_fnumber(desc, "counter_database") <= 0)
		return;
	d = row_value(tup, desc, "counter_database", &isnull);
	if (isnull)
		return;
	counter = TextDatumGetCString(d);
	if (strcmp(counter, get_database_name(MyDatabaseId)) == 0 || superuser())
		return;
	db = get_database_oid(counter, true);
	dba = OidIsValid(db) ? cosid_ddl_database_owner(db) : InvalidOid;
	if (OidIsValid(dba) && has_privs_of_role(GetUserId(), dba))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to restore generator \"%s\"", name),
			 errdetail("Its column counter_database names the lease store's counters of database \"%s\"; only a superuser, or a member of that database's owner role, restores a generator that draws from another database's counter.",
					   counter),
			 errhint("Restore it as a superuser, or define the generator in this database with cosid_define().")));
}

/*
 * The owner of a restored generator row: a role whose privileges the
 * restoring role has, else the restoring role, with a warning (as
 * pg_restore --no-owner does with a table: the new one is the restorer's).
 * Returns the row, with its owner replaced when it was.
 */
static HeapTuple
restored_owner(HeapTuple tup, TupleDesc desc, const char *name, Oid *owner)
{
	bool		isnull;

	*owner = DatumGetObjectId(row_value(tup, desc, "owner", &isnull));
	if (!has_privs_of_role(GetUserId(), *owner))
	{
		int			attnum = SPI_fnumber(desc, "owner");
		Datum		value = ObjectIdGetDatum(GetUserId());
		bool		null = false;

		ereport(WARNING,
				(errcode(ERRCODE_WARNING_PRIVILEGE_NOT_GRANTED),
				 errmsg("generator \"%s\" is restored as owned by role %s", name,
						GetUserNameFromId(GetUserId(), false)),
				 errdetail("Its owner was role %s; a role other than a superuser cannot restore a generator as another role's.",
						   GetUserNameFromId(*owner, true) ? GetUserNameFromId(*owner, true) : "(dropped)")));
		*owner = GetUserId();
		tup = heap_modify_tuple_by_cols(tup, desc, 1, &attnum, &value, &null);
	}
	return tup;
}

/*
 * A restored time-based generator's layout columns, kept as dumped (ids
 * were made with them) in def: a valid layout, and its identity one this
 * database may have, with the layout its history on this server allows.
 */
static void
check_restored_layout(HeapTuple tup, TupleDesc desc, const char *name, CosidGenDef *def)
{
	char		msg[256];
	const char *bad;
	bool		isnull;

	def->spec.layout.epoch_ms = layout_column(tup, desc, name, "epoch_ms");
	def->spec.layout.unit_ms = (int) layout_column(tup, desc, name, "unit_ms");
	def->spec.layout.time_bits = (int) layout_column(tup, desc, name, "time_bits");
	def->spec.layout.node_bits = (int) layout_column(tup, desc, name, "node_bits");
	def->spec.layout.seq_bits = (int) layout_column(tup, desc, name, "seq_bits");
	def->spec.layout.seq_reset_threshold = layout_column(tup, desc, name, "seq_reset_threshold");
	bad = cosid_stored_layout_problem(def, msg, sizeof(msg));
	if (bad)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot restore generator \"%s\"", name),
				 errdetail("At %s: %s.", bad, msg)));

	/*
	 * Its identity is the dumped generator's: a copy shares its state (as a
	 * copy made with CREATE DATABASE TEMPLATE does), within what the
	 * identity's layout history on this server allows.
	 */
	if (cosid_catalog_is_1_3())
		def->identity = DatumGetInt64(row_value(tup, desc, "identity", &isnull));
	strlcpy(def->name, name, NAMEDATALEN);
	check_identity_owner(def, "generator");
	cosid_gen_check_define(def);
}

/*
 * A restored generator's backing sequence, if it has one: a permanent,
 * logged sequence that is its own (cosid's, named after it in schema cosid,
 * or one the restoring role owns), and that backs no other generator.
 */
static void
check_restored_sequence(HeapTuple tup, TupleDesc desc, const char *name)
{
	bool		isnull;
	Oid			seqid = DatumGetObjectId(row_value(tup, desc, "sequence", &isnull));
	bool		owns;
	char	   *other;

	if (isnull)
		seqid = InvalidOid;
	owns = DatumGetBool(row_value(tup, desc, "owns_sequence", &isnull));
	if (!OidIsValid(seqid))
	{
		if (owns)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot restore generator \"%s\"", name),
					 errdetail("Column owns_sequence is true but it has no sequence.")));
		return;
	}
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(seqid)) ||
		get_rel_relkind(seqid) != RELKIND_SEQUENCE ||
		get_rel_persistence(seqid) != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot restore generator \"%s\"", name),
				 errdetail("Its backing sequence (OID %u) is not a permanent, logged sequence.", seqid)));
	if (owns)
	{
		if (get_rel_namespace(seqid) != get_namespace_oid("cosid", false) ||
			strcmp(get_rel_name(seqid), cosid_ddl_backing_sequence_name(name)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to restore generator \"%s\"", name),
					 errdetail("Its backing sequence is marked as cosid's own, but is not cosid.%s.",
							   cosid_ddl_backing_sequence_name(name))));
	}
	else if (!has_privs_of_role(GetUserId(), cosid_rel_owner(seqid)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to restore generator \"%s\"", name),
				 errdetail("Its adopted sequence %s belongs to role %s; a role other than a superuser restores only generators whose adopted sequence it owns.",
						   get_rel_name(seqid), GetUserNameFromId(cosid_rel_owner(seqid), false))));
	SPI_connect();
	other = cosid_ddl_sequence_backs(seqid, name);
	if (other != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to restore generator \"%s\"", name),
				 errdetail("Its backing sequence already backs generator \"%s\".", other)));
	SPI_finish();
}

/*
 * A row of cosid.generator written by a role other than cosid and a
 * superuser: the database's owner restoring a dump.  It must be a generator
 * that role could have defined, with what cosid_define would have checked:
 * a valid definition and layout (a layout that the name's history on this
 * server allows), a codec its owner may use, and a backing sequence that is
 * its own: the one cosid names after it in schema cosid, or one the
 * restoring role owns; never one that backs another generator.  Its owner
 * must be a role whose privileges the restoring role has; any other owner
 * becomes the restoring role, with a warning.  The layout columns are kept
 * as dumped (ids were made with them), not recomputed from the definition.
 */
static HeapTuple
check_restored_generator(Relation rel, HeapTuple tup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;
	char	   *name;
	char	   *strategy;
	Jsonb	   *config;
	Oid			owner;
	CosidGenDef def;

	name = TextDatumGetCString(row_value(tup, desc, "name", &isnull));
	cosid_catalog_check_name(name);
	tup = restored_owner(tup, desc, name, &owner);

	config = DatumGetJsonbP(row_value(tup, desc, "config", &isnull));
	cosid_gendef_parse(name, config, &def, false);
	strategy = TextDatumGetCString(row_value(tup, desc, "strategy", &isnull));
	if (strcmp(strategy, cosid_strategy_name(def.spec.strategy)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot restore generator \"%s\"", name),
				 errdetail("Its strategy column is \"%s\", its definition's strategy \"%s\".",
						   strategy, cosid_strategy_name(def.spec.strategy))));
	def.owner = owner;
	if (COSID_TIME_BASED(def.spec.strategy))
		check_restored_layout(tup, desc, name, &def);
	check_counter_database(tup, desc, name);
	(void) cosid_codecbind_generator(&def, COSID_BIND_DEFINE, CurrentMemoryContext);
	check_restored_sequence(tup, desc, name);
	return tup;
}

/*
 * A row of cosid.generator_history written by a role other than cosid and a
 * superuser (a restore by the database's owner).  A time-based name's row
 * (an identity and its layout) makes the name, defined again, take that
 * identity: the identity must be one this database may have (as in a
 * generator row), and the layout must be the one it issues with on this
 * server.  A row without its whole layout is ignored by cosid_define (with
 * a warning), so it restores.
 */
static void
check_restored_history(Relation rel, HeapTuple tup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	static const char *const columns[] = {"identity", "strategy", "epoch_ms", "unit_ms",
	"time_bits", "node_bits", "seq_bits", "uncertainty_bits"};
	bool		isnull;
	char	   *name;
	char	   *strategy;
	CosidGenDef def;
	char		msg[256];

	name = TextDatumGetCString(row_value(tup, desc, "name", &isnull));
	cosid_catalog_check_name(name);
	for (size_t i = 0; i < lengthof(columns); i++)
	{
		(void) row_value(tup, desc, columns[i], &isnull);
		if (isnull)
			return;
	}
	strategy = TextDatumGetCString(row_value(tup, desc, "strategy", &isnull));
	if (strcmp(strategy, "snowflake") != 0 && strcmp(strategy, "cosid80") != 0)
		return;
	memset(&def, 0, sizeof(def));
	strlcpy(def.name, name, NAMEDATALEN);
	def.spec.strategy = cosid_strategy_from_name(strategy);
	def.identity = DatumGetInt64(row_value(tup, desc, "identity", &isnull));
	def.spec.layout.epoch_ms = DatumGetInt64(row_value(tup, desc, "epoch_ms", &isnull));
	def.spec.layout.unit_ms = DatumGetInt32(row_value(tup, desc, "unit_ms", &isnull));
	def.spec.layout.time_bits = DatumGetInt32(row_value(tup, desc, "time_bits", &isnull));
	def.spec.layout.node_bits = DatumGetInt32(row_value(tup, desc, "node_bits", &isnull));
	def.spec.layout.seq_bits = DatumGetInt32(row_value(tup, desc, "seq_bits", &isnull));
	def.spec.uncertainty_bits = DatumGetInt32(row_value(tup, desc, "uncertainty_bits", &isnull));
	if (cosid_stored_layout_problem(&def, msg, sizeof(msg)) != NULL)
		return;
	check_identity_owner(&def, "generator_history");
	cosid_gen_check_define(&def);
}

/*
 * cosid.restore_check(): BEFORE INSERT FOR EACH ROW on cosid.generator,
 * cosid.generator_history (1.4), cosid.lease and cosid.segment_counter.  cosid writes them as their owner
 * (cosid_define as the catalog's owner, the lease store's SECURITY DEFINER
 * functions), and a superuser may write anything: those pass.  INSERT is
 * granted to pg_database_owner alone, for pg_restore: a generator row is
 * checked as above; the lease store's tables take no row (a superuser
 * restores a lease store), though an empty one restores.
 */
Datum
cosid_restore_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	const char *relname;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		elog(ERROR, "cosid.restore_check() must be a BEFORE INSERT FOR EACH ROW trigger");
	rel = trigdata->tg_relation;
	relname = RelationGetRelationName(rel);
	/* cosid's tables only: it reads a generator row by its columns' types */
	if (RelationGetNamespace(rel) != get_namespace_oid("cosid", false) ||
		(strcmp(relname, "generator") != 0 && strcmp(relname, "lease") != 0 &&
		 strcmp(relname, "segment_counter") != 0 && strcmp(relname, "generator_history") != 0))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("cosid.restore_check() is a trigger of cosid's own tables only")));
	if (superuser() || has_privs_of_role(GetUserId(), cosid_rel_owner(RelationGetRelid(rel))))
		return PointerGetDatum(trigdata->tg_trigtuple);
	if (strcmp(relname, "generator_history") == 0)
	{
		check_restored_history(rel, trigdata->tg_trigtuple);
		return PointerGetDatum(trigdata->tg_trigtuple);
	}
	if (strcmp(relname, "generator") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to restore rows of table cosid.%s", relname),
				 errdetail("Only the lease store's functions and superusers write the lease store's tables."),
				 errhint("Restore a lease store's database as a superuser.")));
	return PointerGetDatum(check_restored_generator(rel, trigdata->tg_trigtuple));
}

/*
 * citus.c - generators as objects of a Citus cluster (see citus.h).
 *
 * The coordinator's generators reach the workers as rows of
 * cosid.citus_generator, a Citus reference table: cosid_define, cosid_alter
 * and cosid_drop write the name's row there in their own transaction, which
 * Citus writes to every node with two-phase commit (a rollback changes no
 * node; a node that fails fails the statement), and Citus copies reference
 * tables to a node added later before it places a shard there.  A worker
 * never writes its own cosid.generator for them (cosid refuses PREPARE
 * TRANSACTION of a change to it, and Citus's shard copy fires no trigger):
 * its lookups read its placement of the reference table, and a statement
 * trigger on the placements turns a committed change into an invalidation
 * message (carried by a prepared transaction to its COMMIT PREPARED) that
 * makes the node's backends read again (gencache.c).
 *
 * Chosen over sending cosid_define to each worker: Citus's SQL functions
 * that run a command on workers take SQL text (no parameters) and commit
 * apart from the coordinator's transaction, and its C functions are not
 * exported.  Citus is found by its catalogs (pg_dist_local_group,
 * pg_dist_partition, pg_dist_shard, pg_dist_node) and called through
 * create_reference_table() only: cosid.so loads without citus.so.
 *
 * Owns: the mirror and a worker's reading of it.  Must not: build SQL text
 * (statements here are constants with parameters), or write a worker's
 * cosid.generator.
 */
#include "citus.h"
#include "catalog.h"
#include "util.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(cosid_citus_changed);
PG_FUNCTION_INFO_V1(cosid_citus_sync);

static Oid	mirror_placement(Oid relid, bool read_only);

const char *const cosid_citus_worker_hint =
	"This node is a Citus worker: define it on the coordinator with cosid_define(), which makes it reach every node.";

CosidCitusRole
cosid_citus_role(void)
{
	Oid			relid;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	int32		group = 0;

	/* the table first: a syscache look-up, where the extension's is a scan */
	relid = get_relname_relid("pg_dist_local_group", PG_CATALOG_NAMESPACE);
	if (!OidIsValid(relid))
		return COSID_CITUS_NONE;
	if (!OidIsValid(get_extension_oid("citus", true)))
		return COSID_CITUS_NONE;
	rel = table_open(relid, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 1, RelationGetDescr(rel), &isnull);

		if (!isnull)
			group = DatumGetInt32(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return group == 0 ? COSID_CITUS_COORDINATOR : COSID_CITUS_WORKER;
}

void
cosid_citus_refuse_on_worker(const char *what, const char *name)
{
	if (cosid_citus_role() != COSID_CITUS_WORKER)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 name != NULL ?
			 errmsg("cannot change generator \"%s\" on a Citus worker", name) :
			 errmsg("cannot make this database's generators reach the Citus cluster from a worker"),
			 errdetail("The generators of a Citus cluster are the coordinator's: it makes every change reach every node."),
			 errhint("Call %s() on the coordinator.", what)));
}

/* cosid.citus_generator (1.3), or InvalidOid. */
static Oid
mirror_relid(void)
{
	Oid			nsp = get_namespace_oid("cosid", true);

	return OidIsValid(nsp) ? get_relname_relid("citus_generator", nsp) : InvalidOid;
}

/* Whether Citus knows the mirror as one of its tables (SPI connected). */
static bool
mirror_distributed(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	if (cosid_catalog_exec("SELECT 1 FROM pg_catalog.pg_dist_partition "
						   "WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
						   1, argtypes, values, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	return SPI_processed > 0;
}

/* Whether the cluster has a primary worker (SPI connected). */
static bool
cluster_has_worker(void)
{
	if (cosid_catalog_exec("SELECT 1 FROM pg_catalog.pg_dist_node "
						   "WHERE groupid OPERATOR(pg_catalog.<>) 0 AND isactive "
						   "AND noderole OPERATOR(pg_catalog.=) 'primary' LIMIT 1",
						   0, NULL, NULL, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_node");
	return SPI_processed > 0;
}

/*
 * Warn when a custom codec function of the generator is neither one Citus
 * created on every node (pg_dist_object) nor one that exists everywhere
 * anyway (an extension's, or pg_catalog's): a worker binds it by its name
 * and fails without it (SPI connected).  CREATE FUNCTION on the coordinator
 * reaches every node unless citus.enable_ddl_propagation was off or Citus
 * could not propagate it (a dependency on a local table).
 */
static void
warn_local_functions(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	/* not read-only: the row this transaction wrote must be seen */
	if (cosid_catalog_exec("SELECT pg_catalog.format('%I.%I(%s)', n.nspname, p.proname, "
						   "  pg_catalog.pg_get_function_identity_arguments(p.oid)) "
						   "FROM cosid.generator g, pg_catalog.unnest(g.codec_functions) f, "
						   "  pg_catalog.pg_proc p, pg_catalog.pg_namespace n "
						   "WHERE g.name OPERATOR(pg_catalog.=) $1 AND p.oid OPERATOR(pg_catalog.=) f "
						   "AND n.oid OPERATOR(pg_catalog.=) p.pronamespace "
						   "AND n.nspname OPERATOR(pg_catalog.<>) 'pg_catalog' "
						   "AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_object o "
						   "  WHERE o.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass "
						   "  AND o.objid OPERATOR(pg_catalog.=) f) "
						   "AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d "
						   "  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass "
						   "  AND d.objid OPERATOR(pg_catalog.=) f AND d.deptype OPERATOR(pg_catalog.=) 'e') "
						   "ORDER BY 1",
						   1, argtypes, values, NULL, false) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	for (uint64 i = 0; i < SPI_processed; i++)
		ereport(WARNING,
				(errmsg("custom codec function %s of generator \"%s\" is not on the Citus workers",
						SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1), name),
				 errdetail("Citus did not create it on every node (it was made with citus.enable_ddl_propagation off, "
						   "or depends on something Citus does not propagate): on a worker, cosid_encode, "
						   "cosid_decode and cosid_next of this generator fail."),
				 errhint("Run SELECT create_distributed_function('%s') on the coordinator, or create the "
						 "function on every node.",
						 SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1))));
}

/*
 * Write one name's row of cosid.generator into the mirror (which Citus
 * writes to every node): the row goes first, then what the catalog has now.
 * A segment generator with a sequence of this server issues on the
 * coordinator only (every node's own sequence would hand out the same
 * numbers): its row says so, so that a worker encodes and decodes with it
 * and refuses to issue, naming the reason.
 */
static void
mirror_one(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;

	if (cosid_catalog_exec("DELETE FROM cosid.citus_generator WHERE name OPERATOR(pg_catalog.=) $1",
						   1, argtypes, values, NULL, false) != SPI_OK_DELETE)
		elog(ERROR, "could not write cosid.citus_generator");
	if (cosid_catalog_exec("INSERT INTO cosid.citus_generator (name, strategy, config, epoch_ms, "
						   "unit_ms, time_bits, node_bits, seq_bits, seq_reset_threshold, owner, "
						   "identity, counter_database, coordinator_only) "
						   "SELECT name, strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, "
						   "seq_reset_threshold, pg_catalog.pg_get_userbyid(owner::pg_catalog.oid)::pg_catalog.text, "
						   "identity, counter_database, sequence IS NOT NULL "
						   "FROM cosid.generator WHERE name OPERATOR(pg_catalog.=) $1 "
						   "RETURNING coordinator_only",
						   1, argtypes, values, NULL, false) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not write cosid.citus_generator");
	if (SPI_processed == 0)
		return;
	if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		ereport(NOTICE,
				(errmsg("segment generator \"%s\" issues on the coordinator only", name),
				 errdetail("Its numbers come from a sequence of this server, which the workers do not share: "
						   "they encode and decode with it, and refuse to issue its numbers."),
				 errhint("Give it \"distributor\": \"lease-store\", or use a time-based generator, to issue on every node.")));
	warn_local_functions(name);
}

/*
 * Make this node's placement of the mirror go with the extension: Citus
 * places a reference table on the coordinator too, in schema cosid, and
 * without this a plain DROP EXTENSION cosid fails on it ("table
 * cosid.citus_generator_N depends on schema cosid").  An automatic
 * dependency drops it with the extension and leaves Citus free to drop it
 * alone (SPI connected).  The workers' placements need none: dropping the
 * extension drops the mirror, and Citus drops every placement with it
 * before it sends the DROP EXTENSION to the workers.
 */
static void
tie_placement(Oid relid)
{
	/* not read-only: the placement may have been made by this transaction */
	Oid			placement = mirror_placement(relid, false);
	Oid			ext = get_extension_oid("cosid", true);
	ObjectAddress dependent;
	ObjectAddress referenced;

	if (!OidIsValid(placement) || !OidIsValid(ext))
		return;
	ObjectAddressSet(dependent, RelationRelationId, placement);
	ObjectAddressSet(referenced, ExtensionRelationId, ext);
	(void) deleteDependencyRecordsForSpecific(RelationRelationId, placement, DEPENDENCY_AUTO,
											  ExtensionRelationId, ext);
	recordDependencyOn(&dependent, &referenced, DEPENDENCY_AUTO);
	CommandCounterIncrement();
}

/*
 * Make the mirror a reference table (SPI connected, as the catalog's owner,
 * who owns it) and write every generator into it.  The trigger that
 * invalidates the nodes' caches needs citus.enable_unsafe_triggers while
 * the table is distributed (only then; cosid_catalog_exec's GUC level takes
 * the setting back).  Returns how many generators it wrote.
 */
static int
mirror_all(Oid relid, bool distribute)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	List	   *names = NIL;
	ListCell   *lc;
	int			n = 0;

	if (distribute)
	{
		/* rows a plain table may hold (a restore) are not Citus's to copy */
		if (cosid_catalog_exec("DELETE FROM cosid.citus_generator", 0, NULL, NULL, NULL, false) != SPI_OK_DELETE)
			elog(ERROR, "could not write cosid.citus_generator");
		if (cosid_catalog_exec("SELECT pg_catalog.set_config('citus.enable_unsafe_triggers', 'on', true), "
							   "pg_catalog.create_reference_table($1::pg_catalog.regclass)",
							   1, argtypes, values, NULL, false) != SPI_OK_SELECT)
			elog(ERROR, "could not make cosid.citus_generator a reference table");
	}
	else if (cosid_catalog_exec("DELETE FROM cosid.citus_generator", 0, NULL, NULL, NULL, false) != SPI_OK_DELETE)
		elog(ERROR, "could not write cosid.citus_generator");
	/* not read-only: what this transaction wrote before must be seen */
	if (cosid_catalog_exec("SELECT name FROM cosid.generator ORDER BY name", 0, NULL, NULL, NULL, false) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator");
	for (uint64 i = 0; i < SPI_processed; i++)
		names = lappend(names, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	foreach(lc, names)
	{
		mirror_one((const char *) lfirst(lc));
		n++;
	}
	tie_placement(relid);
	return n;
}

void
cosid_citus_mirror(const char *name)
{
	Oid			relid;

	if (cosid_citus_role() != COSID_CITUS_COORDINATOR)
		return;
	relid = mirror_relid();
	if (!OidIsValid(relid))
		return;					/* a catalog from before 1.3 */
	if (mirror_distributed(relid))
		mirror_one(name);
	else if (cluster_has_worker())
		(void) mirror_all(relid, true);
}

Datum
cosid_citus_sync(PG_FUNCTION_ARGS)
{
	CosidCitusRole role = cosid_citus_role();
	Oid			relid = mirror_relid();
	int			n;

	if (role == COSID_CITUS_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("Citus is not installed in this database"),
				 errhint("CREATE EXTENSION citus and add the workers first.")));
	cosid_citus_refuse_on_worker("cosid_citus_sync", NULL);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cosid's catalog in this database is older than 1.3"),
				 errhint("ALTER EXTENSION cosid UPDATE first.")));
	SPI_connect();
	n = mirror_all(relid, !mirror_distributed(relid));
	SPI_finish();
	PG_RETURN_INT32(n);
}

/* ---------- a worker's copy ---------- */

/*
 * This node's placement of the mirror (SPI connected), or InvalidOid;
 * read_only: as of the statement's snapshot.
 */
static Oid
mirror_placement(Oid relid, bool read_only)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		isnull;
	int64		shardid;
	char		relname[NAMEDATALEN];
	Oid			placement;

	if (cosid_catalog_exec("SELECT shardid FROM pg_catalog.pg_dist_shard "
						   "WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
						   1, argtypes, values, NULL, read_only) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_shard");
	if (SPI_processed == 0)
		return InvalidOid;
	shardid = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	/* Citus names a shard after its table and shard id (a C lookup, no SQL) */
	snprintf(relname, sizeof(relname), "citus_generator_" INT64_FORMAT, shardid);
	placement = get_relname_relid(relname, get_rel_namespace(relid));
	if (!OidIsValid(placement))
		return InvalidOid;		/* not placed here yet */
	/*
	 * Citus makes the placement as the table's owner; a table of that name
	 * made by another role (CREATE on schema cosid, which a database's owner
	 * has for restores) is not the cluster's.
	 */
	if (get_rel_relkind(placement) != RELKIND_RELATION ||
		cosid_rel_owner(placement) != cosid_rel_owner(relid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table cosid.%s is not Citus's placement of cosid.citus_generator", relname),
				 errdetail("It is not a table owned by the owner of cosid.citus_generator."),
				 errhint("Drop it: Citus places the table itself.")));
	return placement;
}

static Datum
column(HeapTuple tup, Relation rel, const char *name, bool *isnull)
{
	AttrNumber	att = get_attnum(RelationGetRelid(rel), name);

	if (att == InvalidAttrNumber)
		elog(ERROR, "cosid.citus_generator has no column \"%s\"", name);
	return heap_getattr(tup, att, RelationGetDescr(rel), isnull);
}

bool
cosid_citus_read(const char *name, bool fresh, Jsonb **config, CosidGenDef *stored)
{
	Oid			relid = mirror_relid();
	Oid			placement;
	Relation	rel;
	SysScanDesc scan;
	Snapshot	snap;
	HeapTuple	tup;
	bool		found = false;

	if (!OidIsValid(relid))
		return false;
	placement = mirror_placement(relid, true);
	if (!OidIsValid(placement))
		return false;
	snap = RegisterSnapshot(fresh && !IsInParallelMode() ? GetLatestSnapshot() : GetTransactionSnapshot());
	rel = table_open(placement, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, snap, 0, NULL);
	while (!found && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		d = column(tup, rel, "name", &isnull);
		char	   *rolname;

		if (isnull || strcmp(TextDatumGetCString(d), name) != 0)
			continue;
		found = true;
		stored->spec.strategy = cosid_strategy_from_name(TextDatumGetCString(column(tup, rel, "strategy", &isnull)));
		*config = DatumGetJsonbPCopy(column(tup, rel, "config", &isnull));
		if (COSID_TIME_BASED(stored->spec.strategy))
		{
			stored->spec.layout.epoch_ms = DatumGetInt64(column(tup, rel, "epoch_ms", &isnull));
			stored->spec.layout.unit_ms = DatumGetInt32(column(tup, rel, "unit_ms", &isnull));
			stored->spec.layout.time_bits = DatumGetInt32(column(tup, rel, "time_bits", &isnull));
			stored->spec.layout.node_bits = DatumGetInt32(column(tup, rel, "node_bits", &isnull));
			stored->spec.layout.seq_bits = DatumGetInt32(column(tup, rel, "seq_bits", &isnull));
			stored->spec.layout.seq_reset_threshold = DatumGetInt64(column(tup, rel, "seq_reset_threshold", &isnull));
		}
		/* roles are the cluster's (Citus creates them on every node), OIDs the node's */
		rolname = TextDatumGetCString(column(tup, rel, "owner", &isnull));
		stored->owner = get_role_oid(rolname, true);
		if (!OidIsValid(stored->owner))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("role \"%s\", the owner of generator \"%s\", does not exist on this node",
							rolname, name),
					 errhint("Create the role on the coordinator: Citus creates it on every node.")));
		stored->seqid = InvalidOid;
		stored->owns_sequence = false;
		/* a custom codec's functions: by the qualified names the coordinator bound */
		stored->codec_fns[0] = stored->codec_fns[1] = InvalidOid;
		stored->codec_by_name = true;
		stored->coordinator_only = DatumGetBool(column(tup, rel, "coordinator_only", &isnull));
		stored->identity = DatumGetInt64(column(tup, rel, "identity", &isnull));
		d = column(tup, rel, "counter_database", &isnull);
		stored->counter_db[0] = '\0';
		if (!isnull)
			text_to_cstring_buffer(DatumGetTextPP(d), stored->counter_db, NAMEDATALEN);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	UnregisterSnapshot(snap);
	return found;
}

void
cosid_citus_refuse_issue(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("segment generator \"%s\" issues on the Citus coordinator only", name),
			 errdetail("Its numbers come from a sequence of the coordinator, which this node, a Citus worker, "
					   "does not share; a worker encodes and decodes with it but issues none of its numbers. "
					   "An INSERT ... SELECT between distributed tables evaluates a column's DEFAULT on the workers."),
			 errhint("Issue its numbers on the coordinator (INSERT ... VALUES, COPY, or an INSERT ... SELECT from a "
					 "local source), or define a generator with \"distributor\": \"lease-store\", or a time-based "
					 "one, to issue on every node.")));
}

/*
 * Statement trigger on the mirror and its placements: a change makes the
 * node's backends read their generators again once it commits (also a
 * prepared transaction's COMMIT PREPARED, which carries the message).
 */
Datum
cosid_citus_changed(PG_FUNCTION_ARGS)
{
	Oid			nsp;
	Oid			catalog;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "cosid_citus_changed: not called as a trigger");
	nsp = get_namespace_oid("cosid", false);
	catalog = get_relname_relid("generator", nsp);
	if (OidIsValid(catalog))
		CacheInvalidateRelcacheByRelid(catalog);
	return PointerGetDatum(NULL);
}

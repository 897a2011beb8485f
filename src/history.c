/*
 * history.c - the history of a generator name in a database,
 * cosid.generator_history (1.3): what cosid_drop records of a dropped
 * generator and cosid_define reads when the name is defined again.
 *
 * A segment generator's row keeps the last number its sequence handed out
 * and whether it took numbers from the lease store; a time-based one's keeps
 * its identity and layout.  Read and written through cosid_catalog_exec (as
 * the catalog's owner, SPI connected by the caller), but for a segment
 * define's read of its name's row (cosid_row_by_key); a database whose cosid
 * has no history table (a library newer than the extension's 1.2 SQL) reads
 * no history and writes none.
 *
 * Owns: the table's rows and what a row that cosid_drop did not write means
 * (ignored, with a warning); whether a stored time-based layout is a valid
 * one.  Must not: decide what a define or a restore may do with the history
 * (ddl.c and restore.c do), or touch shared state.
 */
#include "history.h"
#include "catalog.h"
#include "util.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"


/*
 * Whether this database's cosid has the history table (1.3 and later): a
 * library newer than the extension's SQL keeps 1.2's behaviour until
 * ALTER EXTENSION cosid UPDATE.
 */
static bool
history_exists(void)
{
	Oid			nsp = get_namespace_oid("cosid", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid("generator_history", nsp));
}

/*
 * The highest number segment generators of this name handed out from their
 * sequence in this database before they were dropped, and whether some took
 * numbers from the lease store, read by the table's primary key (every
 * segment define asks: no SQL); false when there is no history (none was
 * dropped, or it was forgotten).
 */
bool
cosid_history_last(const char *name, int64 *last, bool *from_store)
{
	static const char *const columns[2] = {"last_number", "lease_store"};
	static const Oid types[2] = {INT8OID, BOOLOID};
	static const CosidRowRead history_row = {
		.table = "generator_history", .key_column = "name",
		.ncolumns = 2, .columns = columns, .types = types,
	};
	Datum		values[2];
	bool		nulls[2];

	if (!history_exists())
		return false;
	if (cosid_row_by_key(&history_row, name, values, nulls, NULL) != COSID_ROW_FOUND)
		return false;
	*last = nulls[0] ? 0 : DatumGetInt64(values[0]);
	*from_store = !nulls[1] && DatumGetBool(values[1]);
	return true;
}

/*
 * Record (or raise) the name's last number, and whether the generator took
 * numbers from the lease store; forget: delete the name's history.
 */
void
cosid_history_write(const char *name, int64 last, bool from_store, bool forget)
{
	Oid			argtypes[3] = {TEXTOID, INT8OID, BOOLOID};
	Datum		values[3] = {CStringGetTextDatum(name), Int64GetDatum(last), BoolGetDatum(from_store)};

	if (!history_exists())
		return;
	if (forget)
	{
		if (cosid_catalog_exec("DELETE FROM cosid.generator_history WHERE name OPERATOR(pg_catalog.=) $1",
							   1, argtypes, values, NULL, false) != SPI_OK_DELETE)
			elog(ERROR, "could not write cosid.generator_history");
		return;
	}
	if (cosid_catalog_exec("INSERT INTO cosid.generator_history AS h (name, last_number, lease_store) "
						   "VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET "
						   "last_number = pg_catalog.int8larger(h.last_number, excluded.last_number), "
						   "lease_store = h.lease_store OR excluded.lease_store, "
						   "dropped_at = pg_catalog.now()",
						   3, argtypes, values, NULL, false) != SPI_OK_INSERT)
		elog(ERROR, "could not write cosid.generator_history");
}

/*
 * What is wrong with a stored time-based layout (a row not written by
 * cosid_define): the key at fault, with msg filled in, or NULL.
 */
const char *
cosid_stored_layout_problem(const CosidGenDef *def, char *msg, size_t msglen)
{
	const char *bad = cosid_layout_check(&def->spec.layout,
										 def->spec.strategy == COSID_STRATEGY_COSID80 ? 127 : 63,
										 msg, msglen);

	if (bad == NULL && (def->spec.uncertainty_bits < 0 || def->spec.uncertainty_bits > 63 ||
						(def->spec.strategy == COSID_STRATEGY_SNOWFLAKE &&
						 cosid_layout_total_bits(&def->spec.layout) + def->spec.uncertainty_bits > 63)))
	{
		bad = "uncertainty-bits";
		snprintf(msg, msglen, "the layout and its uncertainty bits take more than 63 bits");
	}
	return bad;
}

/*
 * A history row of a time-based name that cosid_drop did not write (written
 * directly, or restored so): not used, with a warning; the name gets a new
 * identity.
 */
static bool
history_damaged(const char *name, const char *why)
{
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ignoring the history of time-based generator name \"%s\": %s", name, why),
			 errdetail("A row of cosid.generator_history that cosid_drop() did not write says nothing about the ids the name issued."),
			 errhint("Delete the row from cosid.generator_history as the table's owner.")));
	return false;
}

/*
 * The identity a time-based generator of this name had when it was dropped,
 * and its definition then, as far as its ids go (strategy, layout and
 * uncertainty bits in *old; SPI connected); false when there is none
 * (never dropped here, a name of 1.2, or forgotten).
 */
bool
cosid_history_identity(const char *name, CosidGenDef *old)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	char	   *strategy;
	char		msg[256];

	if (!history_exists())
		return false;
	if (cosid_catalog_exec("SELECT identity, strategy, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, "
						   "uncertainty_bits FROM cosid.generator_history "
						   "WHERE name OPERATOR(pg_catalog.=) $1 AND identity IS NOT NULL",
						   1, argtypes, values, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read cosid.generator_history");
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	memset(old, 0, sizeof(*old));
	strlcpy(old->name, name, NAMEDATALEN);
	/* every column, or the row is not one cosid_drop wrote */
	for (int i = 1; i <= 8; i++)
	{
		(void) SPI_getbinval(tup, desc, i, &isnull);
		if (isnull)
			return history_damaged(name, "a column is null");
	}
	old->identity = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	strategy = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
	if (strcmp(strategy, "snowflake") != 0 && strcmp(strategy, "cosid80") != 0)
		return history_damaged(name, "its strategy is not a time-based one");
	old->spec.strategy = cosid_strategy_from_name(strategy);
	old->spec.layout.epoch_ms = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	old->spec.layout.unit_ms = DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull));
	old->spec.layout.time_bits = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
	old->spec.layout.node_bits = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
	old->spec.layout.seq_bits = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
	old->spec.uncertainty_bits = DatumGetInt32(SPI_getbinval(tup, desc, 8, &isnull));
	if (cosid_stored_layout_problem(old, msg, sizeof(msg)) != NULL)
		return history_damaged(name, "its layout is not a valid one");
	return true;
}

/*
 * Keep a dropped time-based generator's identity and layout in the name's
 * history: defined again, the name continues with its state (and, with
 * another layout, above every id the old one may have issued).
 */
void
cosid_history_write_identity(const CosidGenDef *def)
{
	Oid			argtypes[9] = {TEXTOID, INT8OID, TEXTOID, INT8OID, INT4OID,
	INT4OID, INT4OID, INT4OID, INT4OID};
	Datum		values[9];

	if (!history_exists())
		return;
	values[0] = CStringGetTextDatum(def->name);
	values[1] = Int64GetDatum(def->identity);
	values[2] = CStringGetTextDatum(cosid_strategy_name(def->spec.strategy));
	values[3] = Int64GetDatum(def->spec.layout.epoch_ms);
	values[4] = Int32GetDatum((int32) def->spec.layout.unit_ms);
	values[5] = Int32GetDatum(def->spec.layout.time_bits);
	values[6] = Int32GetDatum(def->spec.layout.node_bits);
	values[7] = Int32GetDatum(def->spec.layout.seq_bits);
	values[8] = Int32GetDatum(def->spec.uncertainty_bits);
	if (cosid_catalog_exec("INSERT INTO cosid.generator_history AS h (name, last_number, identity, strategy, "
						   "epoch_ms, unit_ms, time_bits, node_bits, seq_bits, uncertainty_bits) "
						   "VALUES ($1, 0, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (name) DO UPDATE SET "
						   "identity = excluded.identity, strategy = excluded.strategy, "
						   "epoch_ms = excluded.epoch_ms, unit_ms = excluded.unit_ms, "
						   "time_bits = excluded.time_bits, node_bits = excluded.node_bits, "
						   "seq_bits = excluded.seq_bits, uncertainty_bits = excluded.uncertainty_bits, "
						   "dropped_at = pg_catalog.now()",
						   9, argtypes, values, NULL, false) != SPI_OK_INSERT)
		elog(ERROR, "could not write cosid.generator_history");
}

/*
 * gendef.c - a generator's definition: the stored jsonb parsed and validated
 * by src/core/definition.c (every rule, default and message is there) into
 * a CosidGenDef (see gendef.h).
 *
 * Owns: what core cannot do (an epoch written as a time goes through
 * timestamptz_in, a zone must be one pg_tzset knows), the check against
 * cosid.machine_bits, and the strategies' catalog names.  Must not: check
 * anything core checks, read or write the catalog, bind codecs or touch
 * shared memory.
 */
#include "gendef.h"
#include "slot.h"

#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#define key_error(path, ...) cosid_invalid_key(false, path, __VA_ARGS__)

/* ---------- the hooks ---------- */

/*
 * "epoch" written as a time: what timestamptz_in takes, finite.  Its error
 * is caught and dropped: core reports "epoch: expected Unix milliseconds or
 * an ISO 8601 time ..." instead, as jbv_epoch() did.
 */
static bool
definition_parse_time(void *ctx, const char *text, int64_t *ms)
{
	TimestampTz ts = 0;
	bool		ok = true;
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		ts = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													 CStringGetDatum(text),
													 ObjectIdGetDatum(InvalidOid),
													 Int32GetDatum(-1)));
	}
	PG_CATCH();
	{
		/* replaced at once by core's own error */
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		ok = false;
	}
	PG_END_TRY();
	if (!ok || TIMESTAMP_NOT_FINITE(ts))
		return false;
	*ms = cosid_timestamptz_to_ms(ts);
	return true;
}

/* "zone": a zone PostgreSQL knows (core asks only about names < 64 bytes). */
static bool
definition_zone_exists(void *ctx, const char *name)
{
	return pg_tzset(name) != NULL;
}

static const CosidDefinitionHooks definition_hooks = {
	NULL, definition_parse_time, definition_zone_exists
};

/* ---------- the definition ---------- */

void
cosid_gendef_parse(const char *name, Jsonb *config, CosidGenDef *def,
				   bool check_machine_bits)
{
	char	   *json = JsonbToCString(NULL, &config->root, VARSIZE(config));
	size_t		len = strlen(json);
	size_t		buflen = len + COSID_DEFINITION_TEXT_EXTRA;
	char	   *path = palloc(buflen);
	char	   *msg = palloc(buflen);

	memset(def, 0, sizeof(*def));
	if (!cosid_definition_parse(json, len, &definition_hooks,
								cosid_core_alloc, CurrentMemoryContext, &def->spec,
								path, buflen, msg, buflen))
		key_error(path, "%s", msg);
	strlcpy(def->name, name, NAMEDATALEN);
	/* seqid, owns_sequence, owner: the catalog's, set by callers */

	if (check_machine_bits && COSID_TIME_BASED(def->spec.strategy) &&
		def->spec.layout.node_bits < cosid_machine_bits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid generator definition"),
				 errdetail("At node-bits: the layout has %d node bits, fewer than cosid.machine_bits (%d); every time-based layout must hold this server's slot.",
						   def->spec.layout.node_bits, cosid_machine_bits),
				 errhint("Use a layout with more node bits, or set cosid.machine_bits to %d or less.",
						 def->spec.layout.node_bits)));
	pfree(json);
	pfree(path);
	pfree(msg);
}

const char *
cosid_strategy_name(CosidStrategy s)
{
	return s == COSID_STRATEGY_COSID80 ? "cosid80" :
		s == COSID_STRATEGY_SEGMENT ? "segment" : "snowflake";
}

CosidStrategy
cosid_strategy_from_name(const char *s)
{
	return strcmp(s, "cosid80") == 0 ? COSID_STRATEGY_COSID80 :
		strcmp(s, "segment") == 0 ? COSID_STRATEGY_SEGMENT : COSID_STRATEGY_SNOWFLAKE;
}


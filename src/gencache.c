/*
 * gencache.c - finding a generator by name for the hot path: the backend's
 * resolved generators, and each call site's pointer to one (see gencache.h).
 *
 * A call site (fn_extra, or a slot the caller keeps) points to the backend's
 * CosidGenCache of a name; it is current while the catalog's shared and
 * local generations of its name's slot (catalog.h) are those it was read
 * at, so the hot path does no catalog lookup, and a change of another
 * generator (in this database or another) leaves it current.  Otherwise the row is read again (catalog.c), parsed
 * (gendef.c), its codec bound (codecbind.c) and, for a caller that issues,
 * its shared entry attached (genstate.c).
 *
 * Owns: the backend's generators.  Must not: change the catalog or issue.
 */
#include "gencache.h"
#include "catalog.h"
#include "citus.h"
#include "genstate.h"
#include "slot.h"

#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "catalog/namespace.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

CosidGenCache *
cosid_lookup(FunctionCallInfo fcinfo, text *name, bool need_entry)
{
	return cosid_lookup_hinted(fcinfo, name, need_entry, NULL);
}

CosidGenCache *
cosid_lookup_hinted(FunctionCallInfo fcinfo, text *name, bool need_entry,
					const char *hint)
{
	return cosid_lookup_in(&fcinfo->flinfo->fn_extra, name, need_entry, hint);
}

/*
 * Resolved generators of this backend, by name (a backend is in one
 * database).  A call site keeps a pointer to one of these, so a statement
 * planned anew (a DEFAULT in a one-row INSERT) finds its generator with a
 * hash lookup, not a catalog query.
 */
typedef struct BackendGenerator
{
	char		name[NAMEDATALEN];	/* hash key */
	CosidGenCache *cache;
} BackendGenerator;

static HTAB *backend_generators = NULL;

/* A local generation no slot reaches: a cache stamped with it is read again. */
#define NEVER_CURRENT PG_UINT64_MAX

/* Bumped by codec_functions_changed (fill() notices one during a bind). */
static uint64 codec_function_changes = 0;

/*
 * A function (pg_proc) or role (pg_authid) changed, here or in another
 * backend: a generator whose codec calls custom functions is read and bound
 * again before its next use, so the owner rule (codecbind.c) is checked
 * against the function's owner now: ALTER FUNCTION ... OWNER TO, or its
 * owner no longer a superuser, stops the codec in a backend that bound it
 * before as in one that binds it afresh.  (Function and role changes are
 * rare; the others' caches stay.)
 */
static void
codec_functions_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	HASH_SEQ_STATUS seq;
	BackendGenerator *bg;

	codec_function_changes++;
	if (backend_generators == NULL)
		return;
	hash_seq_init(&seq, backend_generators);
	while ((bg = hash_seq_search(&seq)) != NULL)
		if (bg->cache->codec != NULL && bg->cache->codec->custom_item >= 0)
			bg->cache->local_generation = NEVER_CURRENT;	/* read again */
}

/*
 * cosid.generator's OID as this backend last read a generator: on a Citus
 * node, a change of the coordinator's generators arrives as an invalidation
 * of its relcache entry (citus.c), which makes every generator of this
 * backend be read again (as the backend's own catalog changes do).
 */
static Oid	catalog_relid = InvalidOid;

static void
catalog_relcache_changed(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == catalog_relid)
		cosid_catalog_local_changed_all();
}

static CosidGenCache *
backend_generator(const char *name)
{
	BackendGenerator *bg;
	char		key[NAMEDATALEN];
	bool		found;

	if (backend_generators == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(BackendGenerator);
		backend_generators = hash_create("cosid generators of this backend", 16, &ctl,
										 HASH_ELEM | HASH_STRINGS);
		CacheRegisterSyscacheCallback(PROCOID, codec_functions_changed, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, codec_functions_changed, (Datum) 0);
		CacheRegisterRelcacheCallback(catalog_relcache_changed, (Datum) 0);
	}
	memset(key, 0, sizeof(key));
	strlcpy(key, name, NAMEDATALEN);
	bg = hash_search(backend_generators, key, HASH_ENTER, &found);
	if (!found)
	{
		int			slot = cosid_catalog_slot(name, strlen(name));

		bg->cache = MemoryContextAllocZero(TopMemoryContext, sizeof(CosidGenCache));
		bg->cache->cxt = AllocSetContextCreate(TopMemoryContext, "cosid generator",
											   ALLOCSET_SMALL_SIZES);
		bg->cache->shared_slot = cosid_catalog_shared_slot(slot);
		bg->cache->local_slot = &cosid_local_generations[slot];
	}
	return bg->cache;
}

/* c is current: its name's generations are those it was read at (one atomic read). */
static inline bool
cache_valid(const CosidGenCache *c, text *name, int len, bool need_entry)
{
	return c != NULL &&
		c->shared_generation == pg_atomic_read_u64(c->shared_slot) &&
		c->local_generation == *c->local_slot &&
		c->name_len == len &&
		memcmp(c->name, VARDATA_ANY(name), len) == 0 &&
		(c->entry != NULL || !need_entry);
}

/*
 * Read the generator cname into c (the catalog, with a fresh snapshot), bind
 * its codec and, when need_entry, attach its shared entry.
 */
static void
fill(CosidGenCache *c, const char *cname, bool need_entry, const char *hint)
{
	Jsonb	   *config;
	CosidGenDef stored;
	int			len = strlen(cname);
	uint64		changes = codec_function_changes;
	/*
	 * Taken first: a change that arrives while this reads makes it read
	 * again.  The shared generation is read before the row (a fresh
	 * snapshot), so the row is never older than the generation it is
	 * stamped with.
	 */
	uint64		generation = pg_atomic_read_u64(c->shared_slot);
	uint64		local_generation = *c->local_slot;

	c->name_len = 0;			/* invalid until filled in */
	c->entry = NULL;
	c->codec = NULL;
	MemoryContextReset(c->cxt);

	SPI_connect();
	if (!OidIsValid(catalog_relid))
		catalog_relid = get_relname_relid("generator", get_namespace_oid("cosid", false));
	memset(&stored, 0, sizeof(stored));
	/*
	 * A Citus worker issues with the coordinator's generators (citus.c);
	 * its own rows (from before it joined) only for names they lack.
	 */
	if (cosid_citus_role() == COSID_CITUS_WORKER && cosid_catalog_is_1_3())
	{
		if (!cosid_citus_read(cname, true, &config, &stored))
			cosid_catalog_read(cname, false, true, &config, &stored,
							   hint ? hint : cosid_citus_worker_hint);
	}
	else
		cosid_catalog_read(cname, false, true, &config, &stored, hint);
	cosid_gendef_parse(cname, config, &c->def, false);
	c->def.spec.strategy = stored.spec.strategy;
	c->def.spec.layout = stored.spec.layout;
	c->def.seqid = stored.seqid;
	c->def.owner = stored.owner;
	c->def.codec_fns[0] = stored.codec_fns[0];
	c->def.codec_fns[1] = stored.codec_fns[1];
	c->def.codec_by_name = stored.codec_by_name;
	c->def.identity = stored.identity;
	memcpy(c->def.counter_db, stored.counter_db, NAMEDATALEN);
	c->def.coordinator_only = stored.coordinator_only;
	c->def.spec.adopt = NULL;		/* parsed in SPI's memory: not kept */
	if (c->def.coordinator_only)
	{
		if (need_entry)
			cosid_citus_refuse_issue(cname);
	}
	else
		cosid_catalog_check_sequence(&c->def);
	c->group_zone = c->def.spec.group != COSID_GROUP_NONE ? pg_tzset(c->def.spec.zone) : NULL;
	/* bound into the cache's context before SPI frees what it was parsed in */
	c->codec = cosid_codecbind_generator(&c->def, COSID_BIND_STORED, c->cxt);
	c->def.spec.codec = NULL;
	SPI_finish();

	if (COSID_TIME_BASED(c->def.spec.strategy) && c->def.spec.layout.node_bits < cosid_machine_bits)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" has %d node bits, fewer than cosid.machine_bits (%d)",
						cname, c->def.spec.layout.node_bits, cosid_machine_bits),
				 errdetail("This server's slot does not fit the generator's layout."),
				 errhint("Set cosid.machine_bits to %d or less, or define a generator with more node bits.",
						 c->def.spec.layout.node_bits)));

	if (need_entry)
		c->entry = cosid_gen_attach(&c->def, &c->entry_tag);
	c->shared_generation = generation;
	/* a function or role changed while it was bound: bind again next time */
	c->local_generation = changes == codec_function_changes ? local_generation : NEVER_CURRENT;
	memcpy(c->name, cname, len);
	c->name_len = len;
}

CosidGenCache *
cosid_lookup_in(void **slot, text *name, bool need_entry, const char *hint)
{
	CosidGenCache *c = (CosidGenCache *) *slot;
	int			len = VARSIZE_ANY_EXHDR(name);
	char	   *cname;

	if (likely(cache_valid(c, name, len, need_entry)))
		return c;

	if (need_entry)
		cosid_require_preload("issuing ids");

	cname = text_to_cstring(name);
	if (len == 0 || len >= NAMEDATALEN)
		cosid_unknown_generator(cname, hint);

	/* another call site of this backend may have read it already */
	c = backend_generator(cname);
	*slot = c;
	if (cache_valid(c, name, len, need_entry))
		return c;

	fill(c, cname, need_entry, hint);
	return c;
}

/* The entry was freed or reused: attach again (entry and tag change together). */
void
cosid_gencache_reattach(CosidGenCache *c)
{
	uint64		tag;
	CosidGenEntry *e = cosid_gen_attach(&c->def, &tag);

	c->entry = e;
	c->entry_tag = tag;
}

/*
 * The entry was freed while a call was using it (its generator dropped, or
 * the entry reclaimed): read the generator again, as a new statement would,
 * and attach the entry its current definition has.  Attaching with the old
 * definition would give the generator a second live entry; a generator
 * dropped meanwhile is an error here, as in any later statement.
 */
void
cosid_gencache_refresh(CosidGenCache *c)
{
	char		cname[NAMEDATALEN];

	memcpy(cname, c->name, c->name_len);
	cname[c->name_len] = '\0';
	c->shared_generation = 0;
	fill(c, cname, true, NULL);
}

/*
 * genstate.c - the shared state of generators: which entry of shared memory
 * holds which generator, what the records of pg_cosid/names (names.c) mean
 * for a time-based identity (its layout, floor and database), and freeing
 * entries.
 *
 * Owns: cosid_gen_entries, their hash, retired_ms, cosid.max_generators, and
 * the rules of identities and layouts.
 * Must not: read the catalog (its callers hand it a parsed definition), or
 * issue ids (issue.c does, under each entry's spinlock), or do I/O itself
 * (names.c writes the records).
 *
 * Locking (see genstate.h and names.h): cosid_gen_hash_lock exclusive to
 * assign or free an entry (and for the pool of entries take_entry gives:
 * the free ones, the tombstones, the clock hand), shared to look an entry
 * up.  A time-based attach looks its identity's records up under the names
 * index lock only; identity 0 and an identity no database holds take the
 * names write lock before cosid_gen_hash_lock (their records are written
 * then), so nothing is written while the hash lock, which every generator's
 * first use in a backend takes, is held.  An entry's fields are read and
 * written under its spinlock; its tag changes (under both) whenever it is
 * freed or given to another generator.
 *
 * The uniqueness rule for a time-based generator: the server never issues
 * one of its ids twice, whatever was defined, dropped or restored.  Its
 * identity (cosid.generator.identity, random at definition, carried by
 * cosid.generator_history across a drop, 0 for generators defined before
 * 1.3) says which generator it is; copies of a database (template,
 * dump/restore) carry it, another database's generator of the same name
 * has its own.
 * - One entry per identity and name serves every database that has it, so
 *   copies of a database draw from one sequence.
 * - A freed entry stays as a tombstone of its identity, so its next entry
 *   starts above what it issued; a tombstone reused for another generator
 *   raises retired_ms, above which every new entry starts.  Across a
 *   restart the slot window does the same (a window starts at or after the
 *   previous durable end).
 * - An identity keeps its layout: a name dropped and defined again with
 *   another one (cosid_alter cannot change it) gets a new identity
 *   (cosid_gen_define_name), recorded in pg_cosid/names with a floor: every
 *   id the old identity could have issued up to now (the window end bounds
 *   what was issued); the new layout issues only above it, or is refused.
 *   The old identity's record is never rewritten for another layout, so
 *   copies of the database that keep the old definition are not bound by
 *   the change.  A row whose layout is not its identity's record (only a
 *   forged or damaged one) is refused.  Identity 0 (1.2's names) keeps
 *   1.2's rule: the layout of its first id after a change is recorded then.
 *   cosid_define also records the identity of the name in its database, so
 *   that the name defined again after DROP EXTENSION keeps it.
 *   pg_cosid/names (names.c) is appended to at those times only (nothing
 *   is written at a generator's first use, but for an identity no database
 *   holds), with at most cosid.max_generators changed layouts (records with
 *   a floor, kept for good) per database.
 * - An identity belongs to a database (1.4): the first that defined it or
 *   issued with it on this server (owner_db of its record; 1.4 gives every
 *   identity of an older log a record, owned by the database of its first
 *   live record), identity 0 per name.  ddl.c refuses a restored row of another
 *   database's identity unless a role that may copy that database restores
 *   it; every identity has a record of its layout (identity_record), so a
 *   row of another layout is refused also when the layout never changed.
 *   The update to 1.4 gives identity 0's generators identities of their
 *   own (cosid_gen_give_identity), and identity 0 of the name leads to it
 *   (successor) in databases not yet updated.
 * - Fair shares: when every entry is taken, a database holding fewer than
 *   its share (max-min fair over the databases holding entries: see
 *   unfair_entry) takes the least recently used entry of the database
 *   holding the most.
 *
 * State per server and identity was chosen over per-database state (copies
 * of a database would repeat each other's ids) and over per-name state
 * (1.2: one database could stop another's generator).  cosid_stats shows a
 * database the entries of the identities its catalog has.
 */
#include "genstate.h"
#include "names.h"
#include "slot.h"
#include "upgrade.h"

#include <unistd.h>

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/* An entry unused this long may be freed when every entry is taken. */
#define IDLE_MS		10000

int			cosid_max_generators = 1024;

CosidGenEntry *cosid_gen_entries = NULL;
LWLock	   *cosid_gen_hash_lock = NULL;

/* CosidGenKey -> index into cosid_gen_entries */
typedef struct CosidGenRef
{
	CosidGenKey key;			/* hash key: must be first */
	int			index;
} CosidGenRef;

static HTAB *gen_hash = NULL;

/* the end of the last unit of a tombstone reused for another name */
static pg_atomic_uint64 *retired_ms = NULL;

/*
 * Which entries take_entry may give, so that taking one costs the same
 * whatever cosid.max_generators is (all under cosid_gen_hash_lock,
 * exclusive): the free entries (neither in use nor tombstones) on a stack;
 * the tombstones in a list in the order they were made (through the
 * entries' tomb_prev/tomb_next), and in tomb_hash by key (a key has at most
 * one entry, in use or a tombstone); and the clock hand that take_entry
 * turns to find an entry idle for IDLE_MS.
 */
typedef struct EntryPool
{
	int			hand;
	int			tomb_head;		/* the oldest tombstone, or -1 */
	int			tomb_tail;		/* the newest, or -1 */
	int			nfree;
	int			free[FLEXIBLE_ARRAY_MEMBER];	/* the free entries */
} EntryPool;

static EntryPool *pool = NULL;
static HTAB *tomb_hash = NULL;

/* ---------- settings and shared memory ---------- */

void
cosid_genstate_define_settings(void)
{
	DefineCustomIntVariable("cosid.max_generators",
							"Generators (across all databases) whose state shared memory can hold.",
							NULL,
							&cosid_max_generators,
							1024, 16, 1000000,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	cosid_names_define_settings();
}

void
cosid_genstate_shmem_request(void)
{
	RequestNamedLWLockTranche("cosid", 1);
	cosid_names_shmem_request();
}

Size
cosid_genstate_shmem_size(void)
{
	return add_size(add_size(add_size(MAXALIGN(sizeof(pg_atomic_uint64)),
									  mul_size(cosid_max_generators, sizeof(CosidGenEntry))),
							 mul_size(2, hash_estimate_size(cosid_max_generators, sizeof(CosidGenRef)))),
					add_size(MAXALIGN(add_size(offsetof(EntryPool, free),
											   mul_size(cosid_max_generators, sizeof(int)))),
							 cosid_names_shmem_size()));
}

/* Called under AddinShmemInitLock. */
void
cosid_genstate_shmem_init(void)
{
	bool		found;
	HASHCTL		info;

	cosid_gen_hash_lock = &(GetNamedLWLockTranche("cosid"))[0].lock;
	cosid_issuer_lock(cosid_gen_hash_lock, "cosid_gen_hash_lock");
	retired_ms = ShmemInitStruct("cosid retired units", sizeof(pg_atomic_uint64), &found);
	if (!found)
		pg_atomic_init_u64(retired_ms, 0);
	cosid_gen_entries = ShmemInitStruct("cosid generator entries",
										mul_size(cosid_max_generators, sizeof(CosidGenEntry)),
										&found);
	if (!found)
	{
		memset(cosid_gen_entries, 0, mul_size(cosid_max_generators, sizeof(CosidGenEntry)));
		for (int i = 0; i < cosid_max_generators; i++)
			SpinLockInit(&cosid_gen_entries[i].mutex);
	}
	pool = ShmemInitStruct("cosid generator entry pool",
						   add_size(offsetof(EntryPool, free),
									mul_size(cosid_max_generators, sizeof(int))),
						   &found);
	if (!found)
	{
		pool->hand = 0;
		pool->tomb_head = pool->tomb_tail = -1;
		/* entry 0 on top */
		pool->nfree = cosid_max_generators;
		for (int i = 0; i < cosid_max_generators; i++)
			pool->free[i] = cosid_max_generators - 1 - i;
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(CosidGenKey);
	info.entrysize = sizeof(CosidGenRef);
	gen_hash = ShmemInitHash("cosid generators",
							 cosid_max_generators, cosid_max_generators,
							 &info, HASH_ELEM | HASH_BLOBS);
	tomb_hash = ShmemInitHash("cosid generator tombstones",
							  cosid_max_generators, cosid_max_generators,
							  &info, HASH_ELEM | HASH_BLOBS);
	cosid_names_shmem_init();
}

static void
make_key(const CosidGenDef *def, CosidGenKey *key)
{
	memset(key, 0, sizeof(*key));
	strlcpy(key->name, def->name, NAMEDATALEN);
	if (!COSID_TIME_BASED(def->spec.strategy))
	{
		key->dbid = MyDatabaseId;
		key->seqid = def->seqid;
	}
	else
		key->ident = def->identity;
}

/* ---------- identities and layouts (pg_cosid/names, names.c) ---------- */

/* The live record of kind for def's identity (COSID_NAME_LAYOUT) or its name in this database. */
static bool
names_find(int kind, const CosidGenDef *def, CosidNameRecord *out)
{
	return cosid_names_get(kind, MyDatabaseId, def->identity, def->name, out);
}

/*
 * The database identity ident of name belongs to: its record's owner, when
 * that database exists, else InvalidOid (no database has defined it or
 * issued with it on this server, or its database was dropped).
 */
static Oid
names_owner(int64 ident, const char *name)
{
	CosidNameRecord r;

	if (!cosid_names_get(COSID_NAME_LAYOUT, InvalidOid, ident, name, &r) ||
		!OidIsValid(r.owner_db))
		return InvalidOid;
	if (r.owner_db == MyDatabaseId ||
		SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(r.owner_db)))
		return r.owner_db;
	return InvalidOid;
}

/* The owner a new record of def's identity gets: its owner, else this database. */
static Oid
owner_for_record(const CosidGenDef *def)
{
	Oid			owner = names_owner(def->identity, def->name);

	return OidIsValid(owner) ? owner : MyDatabaseId;
}

/*
 * The record of the layout def's identity issues with (1.4: every identity
 * this server knows has one): false when the server has none.
 */
static bool
identity_record(const CosidGenDef *def, CosidNameRecord *rec)
{
	return names_find(COSID_NAME_LAYOUT, def, rec);
}

static void
record_set_layout(CosidNameRecord *r, const CosidGenDef *def)
{
	r->wide = def->spec.strategy == COSID_STRATEGY_COSID80;
	r->uncertainty_bits = def->spec.uncertainty_bits;
	r->layout = def->spec.layout;
	r->layout.seq_reset_threshold = 0;	/* may change; ids do not */
}

static bool
record_same_layout(const CosidNameRecord *r, const CosidGenDef *def)
{
	return r->wide == (def->spec.strategy == COSID_STRATEGY_COSID80) &&
		r->uncertainty_bits == def->spec.uncertainty_bits &&
		cosid_layout_same_ids(&r->layout, &def->spec.layout);
}

/* A new identity record for def, written by this database, with no floor (not yet durable). */
static void
new_identity_record(const CosidGenDef *def, Oid owner, CosidNameRecord *rec)
{
	memset(rec, 0, sizeof(*rec));
	strlcpy(rec->name, def->name, NAMEDATALEN);
	rec->kind = COSID_NAME_LAYOUT;
	rec->ident = def->identity;
	rec->db = MyDatabaseId;
	rec->floor = -1;
	rec->owner_db = owner;
	record_set_layout(rec, def);
}

/*
 * A new identity record of def with a floor (a changed layout; not yet
 * durable): refused when this database already has cosid.max_generators
 * of them, since they are never forgotten.
 */
static void
layout_record(const CosidGenDef *def, CosidNameRecord *rec)
{
	int			mine = cosid_names_kept_layouts(MyDatabaseId);

	if (mine >= cosid_max_generators)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("generator \"%s\" cannot take another layout: this database changed the layout of %d generators on this server",
						def->name, mine),
				 errdetail("pg_cosid/names keeps at most cosid.max_generators (%d) changed layouts per database.",
						   cosid_max_generators),
				 errhint("Define the generator with its earlier layout, or drop it with forget_history => true and define it again.")));
	new_identity_record(def, owner_for_record(def), rec);
}

/* The name's record in this database, naming def's identity and layout. */
static void
name_of_db_record(const CosidGenDef *def, Oid owner, CosidNameRecord *r)
{
	memset(r, 0, sizeof(*r));
	strlcpy(r->name, def->name, NAMEDATALEN);
	r->kind = COSID_NAME_OF_DB;
	r->db = MyDatabaseId;
	r->ident = def->identity;
	r->floor = -1;
	r->owner_db = owner;
	record_set_layout(r, def);
}

/*
 * The last millisecond any id of this server may have been issued at: the
 * durable window end (nothing is issued past it), or a little ahead of the
 * clock while no window is open.
 */
static int64
issued_bound_ms(void)
{
	int64		end = cosid_window_end();
	int64		soon = (int64) cosid_now_ms() + COSID_WINDOW_LEAD_MS;

	return Max(end, soon);
}

/* The highest id a layout can have issued up to bound_ms (-1: none). */
static int64
max_id_until(const CosidLayout *l, int ubits, int64 bound_ms)
{
	int64		t = cosid_unit_of(l, bound_ms);
	uint64		id;

	if (t < 0)
		return -1;
	if (t > cosid_layout_max_time(l))
		t = cosid_layout_max_time(l);
	id = (uint64) cosid_layout_pack(l, t, (INT64CONST(1) << l->node_bits) - 1,
									cosid_layout_max_seq(l));
	return (int64) ((id << ubits) | ((UINT64CONST(1) << ubits) - 1));
}

/*
 * The first unit of a layout whose ids are all above floor, or -1 when the
 * layout has no id above it.
 */
static int64
first_unit_above(const CosidLayout *l, int ubits, int64 floor)
{
	int64		t,
				node,
				seq;
	int			bits = cosid_layout_total_bits(l);

	if (floor < 0)
		return 0;
	if (bits < 63 && (floor >> ubits) >= (INT64CONST(1) << bits))
		return -1;
	cosid_layout_unpack(l, floor >> ubits, &t, &node, &seq);
	return t + 1 > cosid_layout_max_time(l) ? -1 : t + 1;
}

static const char *
layout_text(const CosidLayout *l, int ubits)
{
	return psprintf("epoch %s, unit %s, %d time, %d node, %d sequence and %d uncertainty bits",
					cosid_ms_text(l->epoch_ms),
					l->unit_ms == 1 ? "ms" : "s",
					l->time_bits, l->node_bits, l->seq_bits, ubits);
}

/*
 * The floor a name gets when def replaces the layout in rec: every id the
 * old layout may have issued.  Raises an error (with errcode code) when def
 * cannot issue above it now.
 */
static int64
floor_for_new_layout(const CosidNameRecord *rec, const CosidGenDef *def, int code)
{
	const CosidLayout *old = &rec->layout;
	int64		floor;
	int64		first;
	int64		now_unit = cosid_unit_of(&def->spec.layout, (int64) cosid_now_ms());

	/*
	 * Switching for real (at issue): the bound on what the old layout issued
	 * is the durable window end, so there must be one.  (Before it opens the
	 * clock may be behind an earlier run's end.)
	 */
	if (code == ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE &&
		cosid_window_end() == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" cannot take its new layout before this server's slot window is open",
						def->name),
				 errhint("Ids are issued as soon as the cosid slot worker has opened a window.")));

	if (rec->wide || def->spec.strategy == COSID_STRATEGY_COSID80)
		ereport(ERROR,
				(errcode(code),
				 errmsg("generator \"%s\" already issued ids with another layout on this server",
						def->name),
				 errdetail("Its earlier layout was %s. The parts of an 80-bit id cannot be ordered across layouts, so a cosid80 name keeps its layout.",
						   layout_text(old, rec->uncertainty_bits)),
				 errhint("Define it with its earlier layout, or use another name.")));
	floor = Max(rec->floor, max_id_until(old, rec->uncertainty_bits, issued_bound_ms()));
	first = first_unit_above(&def->spec.layout, def->spec.uncertainty_bits, floor);
	/* past the end of timestamps (a seconds unit with many time bits): never */
	if (first > (PG_INT64_MAX / 1000 - def->spec.layout.epoch_ms) / def->spec.layout.unit_ms / 1000)
		first = -1;
	if (first < 0 || first > now_unit)
		ereport(ERROR,
				(errcode(code),
				 errmsg("generator \"%s\" would issue ids that its name already issued on this server",
						def->name),
				 errdetail("With its earlier layout (%s) this server may have issued ids up to " INT64_FORMAT "; this layout's ids %s.",
						   layout_text(old, rec->uncertainty_bits), floor,
						   first < 0 ? "never reach above that" :
						   psprintf("reach above that only from %s",
									cosid_ms_text(cosid_unit_start_ms(&def->spec.layout, first)))),
				 errhint("Keep the earlier layout, choose an earlier epoch, or use another name.")));
	return floor;
}

/*
 * A row of identity def->identity (not 0) with another layout than the one
 * recorded for that identity: only a forged or damaged row has one, since a
 * generator's layout changes only when it is defined again, with a new
 * identity.  It is refused; the record is never rewritten for it.
 */
static void
identity_layout_error(const CosidNameRecord *rec, const CosidGenDef *def, int code)
{
	ereport(ERROR,
			(errcode(code),
			 errmsg("generator \"%s\" has another layout than its identity issued ids with on this server",
					def->name),
			 errdetail("Its identity issued ids with %s; its definition says %s. A generator takes another layout only when it is defined again, which gives it an identity of its own.",
					   layout_text(&rec->layout, rec->uncertainty_bits),
					   layout_text(&def->spec.layout, def->spec.uncertainty_bits)),
			 errhint("Drop the generator and define it again with the layout it needs.")));
}


void
cosid_gen_check_define(const CosidGenDef *def)
{
	CosidNameRecord rec;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return;
	if (!identity_record(def, &rec) || record_same_layout(&rec, def))
		return;
	if (def->identity != 0)
		identity_layout_error(&rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
	(void) floor_for_new_layout(&rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
}

Oid
cosid_gen_identity_owner(const CosidGenDef *def)
{
	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return InvalidOid;
	return names_owner(def->identity, def->name);
}

bool
cosid_gen_name_identity(const char *name, CosidGenDef *old)
{
	CosidNameRecord rec;

	if (!cosid_preloaded ||
		!cosid_names_get(COSID_NAME_OF_DB, MyDatabaseId, 0, name, &rec) || rec.forgotten)
		return false;
	memset(old, 0, sizeof(*old));
	strlcpy(old->name, name, NAMEDATALEN);
	old->identity = rec.ident;
	old->spec.strategy = rec.wide ? COSID_STRATEGY_COSID80 : COSID_STRATEGY_SNOWFLAKE;
	old->spec.uncertainty_bits = rec.uncertainty_bits;
	old->spec.layout = rec.layout;
	return true;
}

void
cosid_gen_define_name(CosidGenDef *def, const CosidGenDef *old, int64 fresh_identity)
{
	CosidNameRecord rec;
	CosidNameRecord recs[3];
	int			n = 0;
	bool		have;
	bool		changes;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return;
	cosid_names_lock();
	/* what the identity issued with: its record, else its dropped generator's */
	have = identity_record(def, &rec);
	/* a history row that says another layout than its identity's: refused */
	if (have && old != NULL && def->identity != 0 && !record_same_layout(&rec, old))
		identity_layout_error(&rec, old, ERRCODE_INVALID_PARAMETER_VALUE);
	if (!have && old != NULL)
	{
		/* the dropped generator's layout, recorded as its identity's first */
		new_identity_record(old, owner_for_record(old), &rec);
		recs[n++] = rec;
		have = true;
	}
	changes = have && !record_same_layout(&rec, def);
	if (changes && def->identity == 0 && fresh_identity == 0)
	{
		/*
		 * 1.2's catalog: the name keeps identity 0 and takes the layout at
		 * its first id (name_floor), as 1.2 did; the old one is kept.
		 */
		(void) floor_for_new_layout(&rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
	}
	else if (changes)
	{
		/*
		 * Another layout: the name gets a new identity, whose ids start above
		 * every id the old one may have issued up to now (its record, made
		 * before the first id).  The old identity's record stays as it is,
		 * so copies of the database that keep the old definition go on
		 * unhindered.
		 */
		int64		floor = floor_for_new_layout(&rec, def, ERRCODE_INVALID_PARAMETER_VALUE);

		def->identity = fresh_identity;
		layout_record(def, &recs[n]);
		recs[n++].floor = floor;
	}
	else if (!have)
	{
		/* a new identity: its record, and this database its owner */
		new_identity_record(def, owner_for_record(def), &recs[n++]);
	}
	else if (n == 0 && !OidIsValid(names_owner(def->identity, def->name)))
	{
		/* an identity whose database is gone: this one takes it, as a first issue would */
		rec.owner_db = MyDatabaseId;
		recs[n++] = rec;
	}
	/* the name's identity in this database, unless it is recorded already */
	if (!names_find(COSID_NAME_OF_DB, def, &rec) || rec.forgotten ||
		rec.ident != def->identity || !record_same_layout(&rec, def))
		name_of_db_record(def, owner_for_record(def), &recs[n++]);
	if (n > 0)
		cosid_names_append(recs, n);
	cosid_names_unlock();
}


/*
 * The floor of a time-based generator about to get an entry (not under
 * cosid_gen_hash_lock; the names write lock held for identity 0).  An
 * identity's layout is its record's; only an identity made for another
 * layout of its name (and 1.2's names, identity 0) has a floor.  A row
 * whose layout is not its identity's is refused (identity_layout_error);
 * only identity 0 takes another layout here, recording it durably before
 * its first id, as 1.2 did.
 */
static int64
name_floor(const CosidGenDef *def)
{
	CosidNameRecord rec;
	int64		floor;

	if (!identity_record(def, &rec))
		return -1;
	if (record_same_layout(&rec, def))
		return rec.floor;
	if (def->identity != 0)
		identity_layout_error(&rec, def, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	floor = floor_for_new_layout(&rec, def, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	record_set_layout(&rec, def);
	rec.floor = floor;
	rec.db = MyDatabaseId;
	if (!OidIsValid(rec.owner_db))
		rec.owner_db = owner_for_record(def);
	cosid_names_append(&rec, 1);
	return floor;
}

/*
 * Record that def's identity, which no database holds on this server,
 * belongs to this database, the first to issue with it (names write lock
 * held): its record names this database, and so does the name's record in
 * this database.
 */
static void
claim_identity(const CosidGenDef *def)
{
	CosidNameRecord recs[2];
	CosidNameRecord cur;

	if (identity_record(def, &recs[0]))
	{
		recs[0].owner_db = MyDatabaseId;
		recs[0].forgotten = 0;
	}
	else
		new_identity_record(def, MyDatabaseId, &recs[0]);
	if (names_find(COSID_NAME_OF_DB, def, &cur) && !cur.forgotten &&
		cur.ident == def->identity && record_same_layout(&cur, def))
		cosid_names_append(recs, 1);
	else
	{
		name_of_db_record(def, MyDatabaseId, &recs[1]);
		cosid_names_append(recs, 2);
	}
}

/* ---------- entries ---------- */

/* The end (exclusive, Unix ms) of the last unit a time-based entry issued. */
static int64
issued_end_ms(const CosidGenEntry *e)
{
	return e->state.last_unit >= 0 ?
		cosid_unit_start_ms(&e->layout, e->state.last_unit + 1) : 0;
}

/* Entry i becomes a tombstone of its key (lock held): the newest. */
static void
add_tombstone(int i)
{
	CosidGenEntry *e = &cosid_gen_entries[i];
	CosidGenRef *ref;
	bool		found;

	ref = hash_search(tomb_hash, &e->key, HASH_ENTER, &found);
	Assert(!found);
	ref->index = i;
	e->tomb_prev = pool->tomb_tail;
	e->tomb_next = -1;
	if (pool->tomb_tail >= 0)
		cosid_gen_entries[pool->tomb_tail].tomb_next = i;
	else
		pool->tomb_head = i;
	pool->tomb_tail = i;
}

/* Entry i is no longer a tombstone (lock held; the caller clears the flag). */
static void
remove_tombstone(int i)
{
	CosidGenEntry *e = &cosid_gen_entries[i];

	(void) hash_search(tomb_hash, &e->key, HASH_REMOVE, NULL);
	if (e->tomb_prev >= 0)
		cosid_gen_entries[e->tomb_prev].tomb_next = e->tomb_next;
	else
		pool->tomb_head = e->tomb_next;
	if (e->tomb_next >= 0)
		cosid_gen_entries[e->tomb_next].tomb_prev = e->tomb_prev;
	else
		pool->tomb_tail = e->tomb_prev;
	e->tomb_prev = e->tomb_next = -1;
}

/*
 * Free entry i (cosid_gen_hash_lock exclusive held).  A time-based entry stays as a
 * tombstone of its name: what it issued bounds where the name's next entry
 * starts, with no effect on other names.  Any other goes on the free stack.
 */
static void
free_entry(int i)
{
	CosidGenEntry *e = &cosid_gen_entries[i];
	CosidGenKey key;
	bool		tombstone;

	SpinLockAcquire(&e->mutex);
	key = e->key;
	e->in_use = false;
	e->tombstone = tombstone = e->time_based && e->state.last_unit >= 0;
	e->tag++;
	SpinLockRelease(&e->mutex);
	(void) hash_search(gen_hash, &key, HASH_REMOVE, NULL);
	if (tombstone)
		add_tombstone(i);
	else
	{
		Assert(pool->nfree < cosid_max_generators);
		pool->free[pool->nfree++] = i;
	}
}

/*
 * Reuse entry i for another name (lock held): a tombstone's end goes into
 * retired_ms, below which no new time-based entry starts.
 */
static void
clear_tombstone(int i)
{
	CosidGenEntry *e = &cosid_gen_entries[i];
	int64		end;
	uint64		cur;

	if (!e->tombstone)
		return;
	remove_tombstone(i);
	SpinLockAcquire(&e->mutex);
	end = issued_end_ms(e);
	e->tombstone = false;
	SpinLockRelease(&e->mutex);
	cur = pg_atomic_read_u64(retired_ms);
	while (cur < (uint64) end &&
		   !pg_atomic_compare_exchange_u64(retired_ms, &cur, (uint64) end))
		;
}

/* The tombstone of a time-based generator, or -1 (lock held). */
static int
find_tombstone(const CosidGenKey *key)
{
	CosidGenRef *ref = hash_search(tomb_hash, key, HASH_FIND, NULL);

	return ref != NULL ? ref->index : -1;
}

static int
int_cmp(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

/*
 * The least recently used entry of the database holding the most entries,
 * when this database holds fewer than its share of them (every entry in
 * use, lock held), else -1.  The share is a max-min fair one: the
 * databases holding entries, this one with one more, get what they hold up
 * to a level, and the level is what cosid.max_generators leaves over those
 * below it, split evenly.  A database that holds few entries (one issuing
 * now and then: a role of another database may issue with its generators)
 * leaves the rest to the others, so it never shrinks a share by more than
 * it holds.  *mine: this database's; *share: the level.
 */
static int
unfair_entry(int *mine, int *share)
{
	Oid		   *dbs = palloc(sizeof(Oid) * (cosid_max_generators + 1));
	int		   *held = palloc0(sizeof(int) * (cosid_max_generators + 1));
	int		   *wants = palloc(sizeof(int) * (cosid_max_generators + 1));
	int			ndbs = 0;
	int			top = -1;
	int			victim = -1;
	int64		victim_used = PG_INT64_MAX;
	int			left = cosid_max_generators;
	int			level = cosid_max_generators;

	dbs[ndbs++] = MyDatabaseId;
	for (int i = 0; i < cosid_max_generators; i++)
	{
		Oid			db = cosid_gen_entries[i].db;
		int			j;

		for (j = 0; j < ndbs && dbs[j] != db; j++)
			;
		if (j == ndbs)
			dbs[ndbs++] = db;
		held[j]++;
	}
	*mine = held[0];
	for (int j = 0; j < ndbs; j++)
		wants[j] = held[j] + (j == 0 ? 1 : 0);
	qsort(wants, ndbs, sizeof(int), int_cmp);
	for (int j = 0; j < ndbs; j++)
	{
		if (wants[j] > left / (ndbs - j))
		{
			level = left / (ndbs - j);
			break;
		}
		left -= wants[j];
	}
	*share = level;
	pfree(wants);
	if (held[0] >= level)
	{
		pfree(dbs);
		pfree(held);
		return -1;
	}
	for (int j = 1; j < ndbs; j++)
		if (top < 0 || held[j] > held[top])
			top = j;
	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];
		int64		used;

		if (e->db != dbs[top])
			continue;
		SpinLockAcquire(&e->mutex);
		used = e->last_used_ms;
		SpinLockRelease(&e->mutex);
		if (used < victim_used)
		{
			victim_used = used;
			victim = i;
		}
	}
	pfree(dbs);
	pfree(held);
	return victim;
}

/*
 * This database's next entry in clock order (every entry in use, lock
 * held), or -1 when it holds none.  Freeing it is safe while a backend is
 * using it: the entry's tag changes, and that backend attaches again.
 */
static int
own_entry(void)
{
	for (int n = 0; n < cosid_max_generators; n++)
	{
		int			i = pool->hand;

		pool->hand = (i + 1) % cosid_max_generators;
		if (cosid_gen_entries[i].in_use && cosid_gen_entries[i].db == MyDatabaseId)
			return i;
	}
	return -1;
}

/*
 * An entry to use (lock held): a free one, else the oldest tombstone, else
 * one idle for IDLE_MS (the next in clock order), else one of a database
 * above its share, else (this database holds its share) this database's
 * next in clock order, used lately or not: a database with more generators
 * in use than its share churns through its own entries (1.4; 1.3 failed
 * with 53200 until one had been idle for IDLE_MS), and never through
 * another's.  Constant time while entries are free, tombstones or mostly
 * idle (generators defined, used once and left alone churn through them);
 * a scan of every entry only when most were used in the last IDLE_MS.
 */
static int
take_entry(void)
{
	int64		now = (int64) cosid_now_ms();
	int			tomb = -1;
	int			mine = 0;
	int			share = cosid_max_generators;

	if (pool->nfree > 0)
		return pool->free[--pool->nfree];
	if (pool->tomb_head >= 0)
		tomb = pool->tomb_head;
	for (int n = 0; tomb < 0 && n < cosid_max_generators; n++)
	{
		int			i = pool->hand;
		CosidGenEntry *e = &cosid_gen_entries[i];
		int64		used;

		pool->hand = (i + 1) % cosid_max_generators;
		SpinLockAcquire(&e->mutex);
		used = e->last_used_ms;
		SpinLockRelease(&e->mutex);
		/* every entry not in use is free or a tombstone: none is left */
		if (e->in_use && now - used >= IDLE_MS)
			tomb = i;
	}
	if (tomb < 0)
		tomb = unfair_entry(&mine, &share);
	if (tomb < 0)
		tomb = own_entry();
	if (tomb >= 0)
	{
		if (cosid_gen_entries[tomb].in_use)
			free_entry(tomb);
		/* freed: a tombstone, or on the free stack (taken off again) */
		if (cosid_gen_entries[tomb].tombstone)
			clear_tombstone(tomb);
		else
		{
			Assert(pool->nfree > 0 && pool->free[pool->nfree - 1] == tomb);
			pool->nfree--;
		}
		return tomb;
	}
	LWLockRelease(cosid_gen_hash_lock);
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("too many cosid generators in use"),
			 errdetail("All %d entries (cosid.max_generators) hold generators used in the last %d seconds; this database holds %d of them, and its share is %d.",
					   cosid_max_generators, IDLE_MS / 1000, mine, share),
			 errhint("Raise cosid.max_generators and restart the server; the entries of dropped generators are freed when the drop commits.")));
	return -1;					/* keep the compiler quiet */
}

/*
 * Set up entry e for def (cosid_gen_hash_lock exclusive held).  name_end_ms: the
 * end of what the name's tombstone issued (0: none).
 */
static void
init_entry(CosidGenEntry *e, const CosidGenKey *key, const CosidGenDef *def,
		   int64 floor, int64 name_end_ms)
{
	int64		now = (int64) cosid_now_ms();

	SpinLockAcquire(&e->mutex);
	e->tag++;
	e->in_use = true;
	e->tombstone = false;
	e->key = *key;
	e->db = MyDatabaseId;
	e->time_based = COSID_TIME_BASED(def->spec.strategy);
	e->layout = def->spec.layout;
	e->uncertainty_bits = def->spec.uncertainty_bits;
	e->seqid = def->seqid;
	e->last_used_ms = now;
	e->seg_next = 1;
	e->seg_end = 0;
	e->seg_period = 0;
	e->nreserve = 0;
	e->fetched_end = PG_INT64_MIN;
	e->fetching = false;
	e->reserve_depth = 1;
	memset(&e->counts, 0, sizeof(e->counts));
	if (e->time_based)
	{
		/*
		 * Start as if the units up to the last one any earlier entry of this
		 * identity may have issued were used up: the end of what its
		 * tombstone issued, the end of what reused entries issued (a
		 * tombstone gone), and its floor; the window bounds what earlier
		 * runs of the server issued.  Nothing more: 1.3 also took the
		 * clock's unit as used up, so every new entry's first id waited for
		 * the next unit (about 1 ms a first call once entries churn).
		 */
		int64		end = Max(name_end_ms,
							  (int64) pg_atomic_read_u64(retired_ms));
		int64		last = end > 0 ? cosid_unit_of(&def->spec.layout, end - 1) : -1;

		if (floor >= 0 && def->spec.strategy != COSID_STRATEGY_COSID80)
			last = Max(last, first_unit_above(&def->spec.layout, def->spec.uncertainty_bits, floor) - 1);
		e->state.last_unit = last;
		e->state.seq = cosid_layout_max_seq(&def->spec.layout);
	}
	else
		e->state = (CosidTimeState) COSID_TIME_STATE_INIT;
	SpinLockRelease(&e->mutex);
}

static bool
entry_serves(CosidGenEntry *e, const CosidGenDef *def)
{
	return !COSID_TIME_BASED(def->spec.strategy) ||
		(cosid_layout_same_ids(&e->layout, &def->spec.layout) &&
		 e->uncertainty_bits == def->spec.uncertainty_bits);
}

/* The entry of key if it serves def, with its tag (lock held). */
static CosidGenEntry *
find_entry(const CosidGenKey *key, const CosidGenDef *def, uint64 *tag, int *index)
{
	CosidGenRef *ref = hash_search(gen_hash, key, HASH_FIND, NULL);
	CosidGenEntry *e;

	*index = -1;
	if (ref == NULL)
		return NULL;
	*index = ref->index;
	e = &cosid_gen_entries[ref->index];
	if (!entry_serves(e, def))
		return NULL;
	SpinLockAcquire(&e->mutex);
	*tag = e->tag;
	SpinLockRelease(&e->mutex);
	return e;
}

/*
 * *tag is written only on success: a caller that keeps its old entry after
 * an error must still see that entry's tag change.
 */
CosidGenEntry *
cosid_gen_attach(const CosidGenDef *def, uint64 *tag)
{
	CosidGenKey key;
	CosidGenEntry *e;
	CosidGenRef *ref;
	int			index;
	int			tomb = -1;
	int64		floor = -1;
	int64		name_end = 0;
	uint64		t = 0;
	bool		found;
	bool		locked = false;
	CosidGenDef mapped;

	make_key(def, &key);
	LWLockAcquire(cosid_gen_hash_lock, LW_SHARED);
	e = find_entry(&key, def, &t, &index);
	LWLockRelease(cosid_gen_hash_lock);
	if (e != NULL)
	{
		*tag = t;
		return e;
	}

	/*
	 * A time-based layout's floor (and a changed layout's record, before its
	 * first id).  Identity 0, whose layout may change at its first id, and an
	 * identity no database holds yet (claimed here) take the names write
	 * lock, before the hash lock, held until the entry is made, so entries of
	 * one name with two layouts are made one after the other, each above the
	 * other; any other identity only looks its records up (an identity's
	 * layout never changes: a row of another layout is refused).  An error
	 * releases the lock (LWLockReleaseAll at abort).
	 */
	if (COSID_TIME_BASED(def->spec.strategy))
	{
		if (def->identity == 0)
		{
			CosidNameRecord rec;

			cosid_names_lock();
			locked = true;
			/* a name of 1.2 that the update gave an identity: its state is that one's */
			if (names_find(COSID_NAME_LAYOUT, def, &rec) && rec.successor != 0 &&
				record_same_layout(&rec, def))
			{
				mapped = *def;
				mapped.identity = rec.successor;
				def = &mapped;
				make_key(def, &key);
			}
		}
		if (!OidIsValid(names_owner(def->identity, def->name)))
		{
			if (!locked)
				cosid_names_lock();
			locked = true;
			if (!OidIsValid(names_owner(def->identity, def->name)))
				claim_identity(def);
		}
		floor = name_floor(def);
	}
	LWLockAcquire(cosid_gen_hash_lock, LW_EXCLUSIVE);
	e = find_entry(&key, def, &t, &index);
	if (e != NULL)
	{
		LWLockRelease(cosid_gen_hash_lock);
		if (locked)
			cosid_names_unlock();
		*tag = t;
		return e;
	}
	if (index >= 0)
		free_entry(index);		/* the identity's entry had another layout */
	if (COSID_TIME_BASED(def->spec.strategy))
		tomb = find_tombstone(&key);
	if (tomb >= 0)
	{
		index = tomb;
		e = &cosid_gen_entries[index];
		remove_tombstone(index);
		SpinLockAcquire(&e->mutex);
		name_end = issued_end_ms(e);
		e->tombstone = false;
		SpinLockRelease(&e->mutex);
	}
	else
		index = take_entry();
	e = &cosid_gen_entries[index];
	init_entry(e, &key, def, floor, name_end);
	ref = hash_search(gen_hash, &key, HASH_ENTER, &found);
	Assert(!found);
	ref->index = index;
	SpinLockAcquire(&e->mutex);
	t = e->tag;
	SpinLockRelease(&e->mutex);
	LWLockRelease(cosid_gen_hash_lock);
	if (locked)
		cosid_names_unlock();
	*tag = t;
	return e;
}

bool
cosid_gen_zero_led_on(const CosidGenDef *def)
{
	CosidNameRecord rec;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return false;
	return names_find(COSID_NAME_LAYOUT, def, &rec) && rec.successor != 0 &&
		record_same_layout(&rec, def);
}

int
cosid_gen_identity_holders(const CosidGenDef *def, Oid **dbs)
{
	*dbs = NULL;
	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return 0;
	return cosid_names_holders(def->identity, def->name, dbs);
}

/*
 * What identity 0 of def's name may have issued in this run of the server:
 * the last unit of its entry or tombstone, freed now (its backends attach
 * again, to the new identity), as an id floor (-1: none).
 */
static int64
zero_entry_floor(const CosidGenDef *def)
{
	CosidGenKey key;
	CosidGenRef *ref;
	int			index;
	int64		end = 0;
	CosidLayout layout = def->spec.layout;
	int			ubits = def->spec.uncertainty_bits;

	make_key(def, &key);
	LWLockAcquire(cosid_gen_hash_lock, LW_EXCLUSIVE);
	ref = hash_search(gen_hash, &key, HASH_FIND, NULL);
	if (ref != NULL)
	{
		index = ref->index;
		free_entry(index);
	}
	else
		index = find_tombstone(&key);
	if (index >= 0)
	{
		CosidGenEntry *e = &cosid_gen_entries[index];

		SpinLockAcquire(&e->mutex);
		end = issued_end_ms(e);
		layout = e->layout;
		ubits = e->uncertainty_bits;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(cosid_gen_hash_lock);
	if (end > 0 && def->spec.strategy != COSID_STRATEGY_COSID80)
		return max_id_until(&layout, ubits, end - 1);
	return -1;
}

int64
cosid_gen_give_identity(const CosidGenDef *def, int64 fresh_identity)
{
	CosidNameRecord rec;
	CosidNameRecord recs[3];
	int			n = 0;
	bool		have;
	CosidGenDef named = *def;

	Assert(def->identity == 0);
	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return fresh_identity;
	cosid_names_lock();
	have = names_find(COSID_NAME_LAYOUT, def, &rec);
	if (have && rec.successor != 0 && record_same_layout(&rec, def))
	{
		/* a copy of a database updated before: the identity that one got */
		named.identity = rec.successor;
	}
	else
	{
		/*
		 * What identity 0 of this name may have issued: its record's floor
		 * (with another layout, every id it may have issued up to the
		 * window end), and, in this run of the server, its entry's.
		 * Earlier runs issued below this run's window.
		 */
		int64		floor = -1;

		if (have)
			floor = record_same_layout(&rec, def) ? rec.floor :
				floor_for_new_layout(&rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
		floor = Max(floor, zero_entry_floor(def));

		/* the new identity's record, with that floor (not a changed layout: no limit) */
		named.identity = fresh_identity;
		new_identity_record(&named, MyDatabaseId, &recs[n]);
		recs[n++].floor = floor;

		/* identity 0 of the name now leads to it, for this database's copies */
		if (!have)
		{
			new_identity_record(def, MyDatabaseId, &rec);
			rec.ident = 0;
		}
		rec.db = MyDatabaseId;
		record_set_layout(&rec, def);
		rec.successor = fresh_identity;
		recs[n++] = rec;
	}
	/* the name's identity in this database */
	name_of_db_record(&named, have && named.identity != fresh_identity ?
					  owner_for_record(&named) : MyDatabaseId, &recs[n++]);
	cosid_names_append(recs, n);
	cosid_names_unlock();
	return named.identity;
}

int
cosid_gen_stats(CosidGenWanted wanted, void *arg, CosidGenStats **out)
{
	/* allocated before the lock: at most every entry */
	CosidGenStats *stats = palloc(sizeof(CosidGenStats) * Max(cosid_max_generators, 1));
	int			n = 0;

	LWLockAcquire(cosid_gen_hash_lock, LW_SHARED);
	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];
		CosidGenStats *s = &stats[n];

		/* the key, layout and sequence change only under the hash lock */
		if (!e->in_use || !wanted(&e->key, e->time_based, arg))
			continue;
		s->key = e->key;
		s->time_based = e->time_based;
		s->layout = e->layout;
		s->seqid = e->seqid;
		SpinLockAcquire(&e->mutex);
		s->counts = e->counts;
		SpinLockRelease(&e->mutex);
		n++;
	}
	LWLockRelease(cosid_gen_hash_lock);
	if (n == 0)
	{
		pfree(stats);
		stats = NULL;
	}
	*out = stats;
	return n;
}

uint64
cosid_gen_issued_total(void)
{
	uint64		total = 0;

	LWLockAcquire(cosid_gen_hash_lock, LW_SHARED);
	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];

		if (!e->in_use)
			continue;
		SpinLockAcquire(&e->mutex);
		total += e->counts.issued;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(cosid_gen_hash_lock);
	return total;
}

/*
 * Where the next window may start (close_window): after the start of the
 * last unit any time-based entry issued, tombstones included, and after
 * what reused entries issued.  Caller holds no lock.
 */
int64
cosid_gen_issued_bound_ms(int64 start_ms)
{
	int64		next = start_ms;

	LWLockAcquire(cosid_gen_hash_lock, LW_SHARED);
	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];

		SpinLockAcquire(&e->mutex);
		if ((e->in_use || e->tombstone) && e->time_based && e->state.last_unit >= 0)
			next = Max(next, cosid_unit_start_ms(&e->layout, e->state.last_unit) + 1);
		SpinLockRelease(&e->mutex);
	}
	/* read under the lock: entries are reused only under it, exclusive */
	next = Max(next, (int64) pg_atomic_read_u64(retired_ms));
	LWLockRelease(cosid_gen_hash_lock);
	return next;
}

/* ---------- entries when a drop commits ---------- */

/*
 * An entry to free at commit, or a name whose history is forgotten (its
 * record in pg_cosid/names, written just before commit); in
 * TopTransactionContext.
 */
typedef struct PendingChange
{
	CosidGenKey key;
	bool		forget;
	SubTransactionId subid;		/* made in this subtransaction */
} PendingChange;

static List *pending = NIL;

/* A change for this transaction's end, in TopTransactionContext. */
static PendingChange *
add_pending(void)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	PendingChange *p = palloc0(sizeof(PendingChange));

	p->subid = GetCurrentSubTransactionId();
	pending = lappend(pending, p);
	MemoryContextSwitchTo(old);
	return p;
}

void
cosid_gen_release_at_commit(const CosidGenDef *def)
{
	if (cosid_preloaded)
		make_key(def, &add_pending()->key);
}

/* A subtransaction ends: its changes go to its parent, or are forgotten. */
void
cosid_gen_at_subxact(bool commit, SubTransactionId sub, SubTransactionId parent)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		PendingChange *p = lfirst(lc);

		if (p->subid != sub)
			continue;
		if (commit)
			p->subid = parent;
		else
			pending = foreach_delete_current(pending, lc);
	}
}

/* From the transaction callback: commit carries the changes out, abort forgets them. */
void
cosid_gen_at_commit(bool commit)
{
	ListCell   *lc;

	if (pending == NIL)
		return;
	if (commit)
	{
		LWLockAcquire(cosid_gen_hash_lock, LW_EXCLUSIVE);
		foreach(lc, pending)
		{
			PendingChange *p = lfirst(lc);
			CosidGenRef *ref = p->forget ? NULL :
				hash_search(gen_hash, &p->key, HASH_FIND, NULL);

			if (ref != NULL)
				free_entry(ref->index);
		}
		LWLockRelease(cosid_gen_hash_lock);
	}
	/* the list lives in TopTransactionContext, freed with the transaction */
	pending = NIL;
}

/* Write the forgotten record of name (the names write lock not held). */
static void
forget_name_now(const char *name)
{
	CosidNameRecord rec;

	CosidNameRecord recs[2];

	cosid_names_lock();
	if (cosid_names_get(COSID_NAME_OF_DB, MyDatabaseId, 0, name, &rec) && !rec.forgotten)
	{
		int			n = 0;

		rec.forgotten = 1;
		recs[n++] = rec;
		/* this database's identity of it goes first when cosid.max_names is full */
		if (cosid_names_get(COSID_NAME_LAYOUT, InvalidOid, rec.ident, name, &recs[n]) &&
			recs[n].owner_db == MyDatabaseId && !recs[n].forgotten)
			recs[n++].forgotten = 1;
		cosid_names_append(recs, n);
	}
	cosid_names_unlock();
}

void
cosid_gen_forget_name(const char *name)
{
	PendingChange *p;

	if (!cosid_preloaded)
		return;
	p = add_pending();
	strlcpy(p->key.name, name, NAMEDATALEN);
	p->forget = true;
}

void
cosid_gen_at_pre_commit(void)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		PendingChange *p = lfirst(lc);

		if (p->forget)
			forget_name_now(p->key.name);
	}
}

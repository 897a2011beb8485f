/*
 * genstate.c - the shared state of generators: which entry of shared memory
 * holds which generator, the durable record of the layout each time-based
 * name issues with, and freeing entries.
 *
 * Owns: cosid_gen_entries, their hash, retired_ms, cosid.max_generators and
 * pg_cosid/names.
 * Must not: read the catalog (its callers hand it a parsed definition), or
 * issue ids (issue.c does, under each entry's spinlock).
 *
 * Locking (see genstate.h): cosid_gen_hash_lock exclusive to assign or free
 * an entry (and for the pool of entries take_entry gives: the free ones, the
 * tombstones, the clock hand), shared to look an entry up.  names_lock guards pg_cosid/names
 * (exclusive to write it); a time-based entry is created under names_lock
 * and then cosid_gen_hash_lock, so the file is never written while the hash
 * lock, which every generator's first use in a backend takes, is held.  An
 * entry's fields are read and written under its spinlock; its tag changes
 * (under both) whenever it is freed or given to another generator.
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
 *   pg_cosid/names is a log appended to at those times only (nothing is
 *   written at a generator's first use), rewritten when most of it is
 *   superseded, with at most 4 x cosid.max_generators names and
 *   cosid.max_generators changed layouts per database (and 1.2's records,
 *   one per name, as identity 0).
 * - An identity belongs to a database (1.4): the first that defined it or
 *   issued with it on this server (owner_db of its first record in the
 *   log), identity 0 per name.  ddl.c refuses a restored row of another
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
 */
#include "genstate.h"
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

#define NAMES_FILE	COSID_STATE_DIR "/names"
#define NAMES_TMP	COSID_STATE_DIR "/names.tmp"
#define NAMES_MAGIC 0xC051D4A3u
#define NAMES_VERSION 4
#define NAMES_VERSION_1_3 3
#define NAMES_VERSION_1_2 2

/* An entry unused this long may be freed when every entry is taken. */
#define IDLE_MS		10000

int			cosid_max_generators = 1024;

CosidGenEntry *cosid_gen_entries = NULL;
LWLock	   *cosid_gen_hash_lock = NULL;

/* guards pg_cosid/names */
static LWLock *names_lock = NULL;

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

/*
 * pg_cosid/names: a log of fixed-size records, each with its checksum,
 * appended (and fsynced) one at a time; the last record of a key counts.
 * When most records are superseded the log is rewritten with the live ones
 * (compaction); a record torn by a crash while it was appended (never
 * acknowledged) ends the log and is dropped then.
 *
 * NAME_LAYOUT, key (ident, name): the layout an identity issues with, kept
 * once its layout changed (and 1.2's per-name records, identity 0), with
 * its floor.  db: the database that wrote it, for its share.
 * NAME_OF_DB, key (db, name): the identity and layout a name was last
 * defined with in a database, so a name defined again after its catalog
 * went (DROP EXTENSION cosid, a deleted row) keeps its identity; forgotten:
 * cosid_drop(..., forget_history => true).  A database keeps at most
 * NAMES_PER_DB of them (the oldest go at compaction).
 */
#define NAME_LAYOUT		1
#define NAME_OF_DB		2
#define NAMES_PER_DB	(4 * cosid_max_generators)

typedef struct NameRecord
{
	char		name[NAMEDATALEN];
	int32		kind;			/* NAME_LAYOUT or NAME_OF_DB */
	Oid			db;
	int64		ident;			/* 0: a name of 1.2 (identity 0) */
	int32		wide;			/* cosid80: ids are not bigints */
	int32		uncertainty_bits;
	CosidLayout layout;			/* seq_reset_threshold not kept (0) */
	int64		floor;			/* ids up to this one are never issued again
								 * (-1: none) */
	int32		forgotten;		/* NAME_OF_DB: the name starts over */
	Oid			owner_db;		/* 1.4: the database the identity belongs to
								 * (the first to issue with it or define it);
								 * InvalidOid: not known (1.2's records) */
	int64		successor;		/* 1.4, NAME_LAYOUT of identity 0: the
								 * identity the update gave the name (0:
								 * none) */
	pg_crc32c	crc;			/* of the bytes before it */
} NameRecord;

/* 1.3's record (format 3): 1.4's without owner_db and successor */
typedef struct NameRecord13
{
	char		name[NAMEDATALEN];
	int32		kind;
	Oid			db;
	int64		ident;
	int32		wide;
	int32		uncertainty_bits;
	CosidLayout layout;
	int64		floor;
	int32		forgotten;
	pg_crc32c	crc;
} NameRecord13;

/* 1.2's record: one per name ever issued, read as identity 0 */
typedef struct NameRecord12
{
	char		name[NAMEDATALEN];
	int32		wide;
	int32		uncertainty_bits;
	CosidLayout layout;
	int64		floor;
} NameRecord12;

/* 1.2's header: its records follow, one checksum for all */
typedef struct NamesHeader12
{
	uint32		magic;
	uint32		version;
	uint32		count;
	pg_crc32c	crc;
} NamesHeader12;

typedef struct NamesHeader
{
	uint32		magic;
	uint32		version;
} NamesHeader;

/* NAME_OF_DB records counted per database */
typedef struct NamesPerDb
{
	Oid			db;				/* hash key */
	int			count;
} NamesPerDb;

/* A record's key: (kind, ident, name) or (kind, db, name). */
typedef struct NameKey
{
	int32		kind;
	Oid			db;				/* NAME_OF_DB */
	int64		ident;			/* NAME_LAYOUT */
	char		name[NAMEDATALEN];
} NameKey;

/* The latest record of each key: its index in Names.all. */
typedef struct NameLatest
{
	NameKey		key;			/* hash key: must be first */
	int			index;
} NameLatest;

/*
 * The log as read: every record in log order (all), the latest of each key
 * (latest: the live ones), and how many the file holds.
 */
typedef struct Names
{
	NameRecord *all;
	int			nall;
	int			cap;
	HTAB	   *latest;
	int			in_file;
	bool		rewrite;		/* 1.2's format, or a torn tail: rewrite */
} Names;

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
}

void
cosid_genstate_shmem_request(void)
{
	RequestNamedLWLockTranche("cosid", 2);
}

Size
cosid_genstate_shmem_size(void)
{
	return add_size(add_size(add_size(MAXALIGN(sizeof(pg_atomic_uint64)),
									  mul_size(cosid_max_generators, sizeof(CosidGenEntry))),
							 mul_size(2, hash_estimate_size(cosid_max_generators, sizeof(CosidGenRef)))),
					MAXALIGN(add_size(offsetof(EntryPool, free),
									  mul_size(cosid_max_generators, sizeof(int)))));
}

/* Called under AddinShmemInitLock. */
void
cosid_genstate_shmem_init(void)
{
	bool		found;
	HASHCTL		info;

	cosid_gen_hash_lock = &(GetNamedLWLockTranche("cosid"))[0].lock;
	names_lock = &(GetNamedLWLockTranche("cosid"))[1].lock;
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

/* ---------- pg_cosid/names ---------- */

static void
names_error(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("cosid name registry \"%s\" is damaged: %s", NAMES_FILE, what),
			 errdetail("It records the identities and layouts time-based generators issued ids with on this server."),
			 errhint("Restore it from a backup of the data directory.")));
}

static void
record_key(const NameRecord *r, NameKey *key)
{
	memset(key, 0, sizeof(*key));
	key->kind = r->kind;
	if (r->kind == NAME_LAYOUT)
		key->ident = r->ident;
	else
		key->db = r->db;
	strlcpy(key->name, r->name, NAMEDATALEN);
}

static void
record_crc(NameRecord *r)
{
	INIT_CRC32C(r->crc);
	COMP_CRC32C(r->crc, r, offsetof(NameRecord, crc));
	FIN_CRC32C(r->crc);
}

static void
names_init(Names *n)
{
	HASHCTL		ctl;

	memset(n, 0, sizeof(*n));
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(NameKey);
	ctl.entrysize = sizeof(NameLatest);
	ctl.hcxt = CurrentMemoryContext;
	n->latest = hash_create("cosid names", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* Add r to the log as read: it becomes the live record of its key. */
static void
names_put(Names *n, const NameRecord *r)
{
	NameKey		key;
	NameLatest *l;

	if (n->nall == n->cap)
	{
		n->cap = Max(64, n->cap * 2);
		n->all = n->all ? repalloc(n->all, sizeof(NameRecord) * n->cap) :
			palloc(sizeof(NameRecord) * n->cap);
	}
	memcpy(&n->all[n->nall], r, sizeof(NameRecord));
	record_key(r, &key);
	l = hash_search(n->latest, &key, HASH_ENTER, NULL);
	l->index = n->nall++;
}

/* Whether all[i] is the live record of its key. */
static bool
names_live(Names *n, int i)
{
	NameKey		key;
	NameLatest *l;

	record_key(&n->all[i], &key);
	l = hash_search(n->latest, &key, HASH_FIND, NULL);
	return l != NULL && l->index == i;
}

static int
names_count(Names *n)
{
	return (int) hash_get_num_entries(n->latest);
}

/* 1.2's records (after its header): names of identity 0. */
static void
names_read_1_2(int fd, const NamesHeader12 *h, Names *n)
{
	Size		len = mul_size(h->count, sizeof(NameRecord12));
	NameRecord12 *old = palloc(Max(len, 1));
	pg_crc32c	crc;

	if (len > 0 && read(fd, old, len) != (ssize_t) len)
		names_error("short file");
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, old, len);
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, h->crc))
		names_error("checksum mismatch");
	for (uint32 i = 0; i < h->count; i++)
	{
		NameRecord	r;

		memset(&r, 0, sizeof(r));
		memcpy(r.name, old[i].name, NAMEDATALEN);
		r.kind = NAME_LAYOUT;
		r.wide = old[i].wide;
		r.uncertainty_bits = old[i].uncertainty_bits;
		r.layout = old[i].layout;
		r.floor = old[i].floor;
		record_crc(&r);
		names_put(n, &r);
	}
	n->in_file = n->nall;
	n->rewrite = true;
	pfree(old);
}

/*
 * The records of the log (after its header), in 1.4's format or in 1.3's
 * (format 3), which a rewrite turns into 1.4's: a 1.3 record's database
 * (the one that defined the name, or changed the identity's layout) is
 * taken as its identity's owner; where several records hold one identity,
 * the first in the log counts (names_owner).
 */
static void
names_read_log(int fd, bool v13, Names *n)
{
	union
	{
		NameRecord	r;
		NameRecord13 r13;
	}			buf;
	Size		size = v13 ? sizeof(NameRecord13) : sizeof(NameRecord);
	Size		crc_at = v13 ? offsetof(NameRecord13, crc) : offsetof(NameRecord, crc);
	ssize_t		got;

	while ((got = read(fd, &buf, size)) == (ssize_t) size)
	{
		pg_crc32c	crc;
		pg_crc32c	stored;
		NameRecord	r;

		INIT_CRC32C(crc);
		COMP_CRC32C(crc, &buf, crc_at);
		FIN_CRC32C(crc);
		memcpy(&stored, (char *) &buf + crc_at, sizeof(stored));
		if (!EQ_CRC32C(crc, stored))
		{
			/* torn while appended, if it is the last one */
			char		more;
			ssize_t		extra = read(fd, &more, 1);

			if (extra < 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read file \"%s\": %m", NAMES_FILE)));
			if (extra != 0)
				names_error("checksum mismatch");
			n->rewrite = true;
			return;
		}
		if (v13)
		{
			memset(&r, 0, sizeof(r));
			memcpy(r.name, buf.r13.name, NAMEDATALEN);
			r.kind = buf.r13.kind;
			r.db = buf.r13.db;
			r.ident = buf.r13.ident;
			r.wide = buf.r13.wide;
			r.uncertainty_bits = buf.r13.uncertainty_bits;
			r.layout = buf.r13.layout;
			r.floor = buf.r13.floor;
			r.forgotten = buf.r13.forgotten;
			r.owner_db = buf.r13.db;
			record_crc(&r);
		}
		else
			memcpy(&r, &buf.r, sizeof(r));
		n->in_file++;
		names_put(n, &r);
	}
	if (got < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", NAMES_FILE)));
	if (got > 0 || v13)
		n->rewrite = true;		/* a torn last record, or 1.3's format */
}

/*
 * Forget the oldest NAME_OF_DB records of a database beyond NAMES_PER_DB,
 * and, when the log is to be rewritten (compacting), those of databases
 * that no longer exist (pg_database is shared: any backend can tell).
 */
static void
names_trim(Names *n, bool compacting)
{
	HASHCTL		ctl;
	HTAB	   *per_db;

	if (n->nall == 0)
		return;
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(NamesPerDb);
	ctl.hcxt = CurrentMemoryContext;
	per_db = hash_create("cosid names per database", 16, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = n->nall - 1; i >= 0; i--)
	{
		NameRecord *r = &n->all[i];
		NamesPerDb *d;
		bool		found;
		NameKey		key;

		if (r->kind != NAME_OF_DB || !names_live(n, i))
			continue;
		d = hash_search(per_db, &r->db, HASH_ENTER, &found);
		if (!found)
			d->count = 0;
		if (++d->count <= NAMES_PER_DB &&
			!(compacting && !SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(r->db))))
			continue;
		record_key(r, &key);
		(void) hash_search(n->latest, &key, HASH_REMOVE, NULL);
	}
	hash_destroy(per_db);
}

/* The live records (none when there is no file); names_lock held. */
static void
names_read(Names *n)
{
	int			fd;
	NamesHeader12 h;

	/* after pg_upgrade, the old server's record must be copied first */
	cosid_upgrade_check();
	fd = OpenTransientFile(NAMES_FILE, O_RDONLY | PG_BINARY);
	names_init(n);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", NAMES_FILE)));
	}
	if (read(fd, &h, sizeof(NamesHeader)) != sizeof(NamesHeader))
		names_error("short header");
	if (h.magic != NAMES_MAGIC)
		names_error("unknown format");
	if (h.version == NAMES_VERSION_1_2)
	{
		char	   *rest = (char *) &h + sizeof(NamesHeader);

		if (read(fd, rest, sizeof(h) - sizeof(NamesHeader)) !=
			(ssize_t) (sizeof(h) - sizeof(NamesHeader)))
			names_error("short header");
		names_read_1_2(fd, &h, n);
	}
	else if (h.version == NAMES_VERSION || h.version == NAMES_VERSION_1_3)
		names_read_log(fd, h.version == NAMES_VERSION_1_3, n);
	else
		names_error("unknown format");
	CloseTransientFile(fd);

	/* a database's oldest names beyond its share are forgotten */
	names_trim(n, false);
}

/*
 * Make r durable (names_lock exclusive, n read under it): appended to the
 * log, or the log rewritten with the live records when most of it is
 * superseded (or it needs a rewrite).
 */
static void
names_append(Names *n, NameRecord *r)
{
	record_crc(r);
	names_put(n, r);
	if (n->rewrite || n->in_file == 0 || n->in_file + 1 > 2 * names_count(n) + 64)
	{
		NamesHeader h = {NAMES_MAGIC, NAMES_VERSION};
		char	   *buf;
		Size		len = sizeof(h);

		names_trim(n, true);
		buf = palloc(sizeof(h) + mul_size(names_count(n), sizeof(NameRecord)));
		memcpy(buf, &h, sizeof(h));
		for (int i = 0; i < n->nall; i++)
		{
			if (!names_live(n, i))
				continue;
			/* its checksum again, over the bytes written */
			record_crc(&n->all[i]);
			memcpy(buf + len, &n->all[i], sizeof(NameRecord));
			len += sizeof(NameRecord);
		}
		cosid_ensure_state_dir();
		cosid_write_durably(NAMES_FILE, NAMES_TMP, buf, len);
		pfree(buf);
		n->in_file = names_count(n);
		n->rewrite = false;
		return;
	}
	cosid_append_durably(NAMES_FILE, r, sizeof(*r));
	n->in_file++;
}

/* The live record of kind for def's identity (NAME_LAYOUT) or name in this database. */
static NameRecord *
names_find(Names *n, int kind, const CosidGenDef *def)
{
	NameKey		key;
	NameLatest *l;

	memset(&key, 0, sizeof(key));
	key.kind = kind;
	if (kind == NAME_LAYOUT)
		key.ident = def->identity;
	else
		key.db = MyDatabaseId;
	strlcpy(key.name, def->name, NAMEDATALEN);
	l = hash_search(n->latest, &key, HASH_FIND, NULL);
	return l ? &n->all[l->index] : NULL;
}

/*
 * The database identity ident of name belongs to: the owner_db of the first
 * live record of it in the log whose database still exists, else
 * InvalidOid (no database has defined it or issued with it on this server,
 * or its database was dropped).
 */
static Oid
names_owner(Names *n, int64 ident, const char *name)
{
	for (int i = 0; i < n->nall; i++)
	{
		NameRecord *r = &n->all[i];

		if (r->ident != ident || !OidIsValid(r->owner_db) ||
			strncmp(r->name, name, NAMEDATALEN) != 0 || !names_live(n, i))
			continue;
		if (r->owner_db == MyDatabaseId ||
			SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(r->owner_db)))
			return r->owner_db;
	}
	return InvalidOid;
}

/* The owner a new record of def's identity gets: its owner, else this database. */
static Oid
owner_for_record(Names *n, const CosidGenDef *def)
{
	Oid			owner = names_owner(n, def->identity, def->name);

	return OidIsValid(owner) ? owner : MyDatabaseId;
}

/*
 * The record of the layout def's identity issues with: its NAME_LAYOUT
 * record (an identity whose name changed its layout, 1.2's names), else,
 * for an identity of 1.3 or later, the first live NAME_OF_DB record of it
 * (the name's record in the database that defined it: an identity's layout
 * never changes).  NULL when the server has none.
 */
static NameRecord *
identity_record(Names *n, const CosidGenDef *def)
{
	NameRecord *rec = names_find(n, NAME_LAYOUT, def);

	if (rec != NULL || def->identity == 0)
		return rec;
	for (int i = 0; i < n->nall; i++)
	{
		NameRecord *r = &n->all[i];

		if (r->kind == NAME_OF_DB && r->ident == def->identity &&
			strncmp(r->name, def->name, NAMEDATALEN) == 0 && names_live(n, i))
			return r;
	}
	return NULL;
}

/*
 * A new NAME_LAYOUT record for def (not yet durable): refused when this
 * database already has cosid.max_generators of them.
 */
static void
layout_record(Names *n, const CosidGenDef *def, NameRecord *rec)
{
	int			mine = 0;

	for (int i = 0; i < n->nall; i++)
		mine += n->all[i].kind == NAME_LAYOUT && n->all[i].db == MyDatabaseId && names_live(n, i) ? 1 : 0;
	if (mine >= cosid_max_generators)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("generator \"%s\" cannot take another layout: this database changed the layout of %d generators on this server",
						def->name, mine),
				 errdetail("pg_cosid/names keeps at most cosid.max_generators (%d) changed layouts per database.",
						   cosid_max_generators),
				 errhint("Define the generator with its earlier layout, or drop it with forget_history => true and define it again.")));
	memset(rec, 0, sizeof(*rec));
	strlcpy(rec->name, def->name, NAMEDATALEN);
	rec->kind = NAME_LAYOUT;
	rec->ident = def->identity;
	rec->db = MyDatabaseId;
	rec->floor = -1;
	rec->owner_db = owner_for_record(n, def);
}

static void
record_set_layout(NameRecord *r, const CosidGenDef *def)
{
	r->wide = def->spec.strategy == COSID_STRATEGY_COSID80;
	r->uncertainty_bits = def->spec.uncertainty_bits;
	r->layout = def->spec.layout;
	r->layout.seq_reset_threshold = 0;	/* may change; ids do not */
}

static bool
record_same_layout(const NameRecord *r, const CosidGenDef *def)
{
	return r->wide == (def->spec.strategy == COSID_STRATEGY_COSID80) &&
		r->uncertainty_bits == def->spec.uncertainty_bits &&
		cosid_layout_same_ids(&r->layout, &def->spec.layout);
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
floor_for_new_layout(const NameRecord *rec, const CosidGenDef *def, int code)
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
identity_layout_error(const NameRecord *rec, const CosidGenDef *def, int code)
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
	Names		n;
	NameRecord *rec;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return;
	LWLockAcquire(names_lock, LW_SHARED);
	names_read(&n);
	LWLockRelease(names_lock);
	rec = identity_record(&n, def);
	if (rec == NULL || record_same_layout(rec, def))
		return;
	if (def->identity != 0)
		identity_layout_error(rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
	(void) floor_for_new_layout(rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
}

Oid
cosid_gen_identity_owner(const CosidGenDef *def)
{
	Names		n;
	Oid			owner;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return InvalidOid;
	LWLockAcquire(names_lock, LW_SHARED);
	names_read(&n);
	owner = names_owner(&n, def->identity, def->name);
	LWLockRelease(names_lock);
	return owner;
}

bool
cosid_gen_name_identity(const char *name, CosidGenDef *old)
{
	Names		n;
	NameRecord *rec;
	CosidGenDef key;

	if (!cosid_preloaded)
		return false;
	memset(&key, 0, sizeof(key));
	strlcpy(key.name, name, NAMEDATALEN);
	LWLockAcquire(names_lock, LW_SHARED);
	names_read(&n);
	LWLockRelease(names_lock);
	rec = names_find(&n, NAME_OF_DB, &key);
	if (rec == NULL || rec->forgotten)
		return false;
	memset(old, 0, sizeof(*old));
	strlcpy(old->name, name, NAMEDATALEN);
	old->identity = rec->ident;
	old->spec.strategy = rec->wide ? COSID_STRATEGY_COSID80 : COSID_STRATEGY_SNOWFLAKE;
	old->spec.uncertainty_bits = rec->uncertainty_bits;
	old->spec.layout = rec->layout;
	return true;
}

void
cosid_gen_define_name(CosidGenDef *def, const CosidGenDef *old, int64 fresh_identity)
{
	Names		n;
	NameRecord *rec;
	NameRecord	base;
	bool		changes;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return;
	LWLockAcquire(names_lock, LW_EXCLUSIVE);
	names_read(&n);
	/* what the identity issued with: its record, else its dropped generator's */
	rec = identity_record(&n, def);
	/* a history row that says another layout than its identity's: refused */
	if (rec != NULL && old != NULL && def->identity != 0 && !record_same_layout(rec, old))
		identity_layout_error(rec, old, ERRCODE_INVALID_PARAMETER_VALUE);
	if (rec == NULL && old != NULL)
	{
		memset(&base, 0, sizeof(base));
		record_set_layout(&base, old);
		base.floor = -1;
		rec = &base;
	}
	changes = rec != NULL && !record_same_layout(rec, def);
	if (changes && def->identity == 0 && fresh_identity == 0)
	{
		/*
		 * 1.2's catalog: the name keeps identity 0 and takes the layout at
		 * its first id (name_floor), as 1.2 did; keep the old one first.
		 */
		(void) floor_for_new_layout(rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
		if (rec == &base)
		{
			NameRecord	first;

			layout_record(&n, old, &first);
			record_set_layout(&first, old);
			names_append(&n, &first);
		}
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
		int64		floor = floor_for_new_layout(rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
		NameRecord	seeded;

		/*
		 * The old identity keeps a record of its own (its layout, its
		 * owner) once the name's record in this database names the new one.
		 */
		if (rec->kind != NAME_LAYOUT && def->identity != 0)
		{
			NameRecord	first;

			layout_record(&n, def, &first);
			first.wide = rec->wide;
			first.uncertainty_bits = rec->uncertainty_bits;
			first.layout = rec->layout;
			names_append(&n, &first);	/* rec may move */
		}
		def->identity = fresh_identity;
		layout_record(&n, def, &seeded);
		record_set_layout(&seeded, def);
		seeded.floor = floor;
		names_append(&n, &seeded);
	}
	/* the name's identity in this database, unless it is recorded already */
	rec = names_find(&n, NAME_OF_DB, def);
	if (rec == NULL || rec->forgotten || rec->ident != def->identity || !record_same_layout(rec, def))
	{
		NameRecord	r;

		memset(&r, 0, sizeof(r));
		strlcpy(r.name, def->name, NAMEDATALEN);
		r.kind = NAME_OF_DB;
		r.db = MyDatabaseId;
		r.ident = def->identity;
		r.floor = -1;
		r.owner_db = owner_for_record(&n, def);
		record_set_layout(&r, def);
		names_append(&n, &r);
	}
	LWLockRelease(names_lock);
}


/*
 * The floor of a time-based generator about to get an entry (caller holds
 * names_lock, exclusive for identity 0, n read under it; not
 * cosid_gen_hash_lock).  An identity's layout is its record's (see
 * identity_record); only an identity made for another layout of its name
 * (and 1.2's names, identity 0) has a floor.  A row whose layout is not its
 * identity's is refused (identity_layout_error); only identity 0 takes
 * another layout here, recording it durably before its first id, as 1.2
 * did.
 */
static int64
name_floor(Names *n, const CosidGenDef *def)
{
	NameRecord *rec;
	NameRecord	r;
	int64		floor;

	rec = identity_record(n, def);
	if (rec == NULL)
		return -1;
	if (record_same_layout(rec, def))
		return rec->kind == NAME_LAYOUT ? rec->floor : -1;
	if (def->identity != 0)
		identity_layout_error(rec, def, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	floor = floor_for_new_layout(rec, def, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	memcpy(&r, rec, sizeof(r));
	record_set_layout(&r, def);
	r.floor = floor;
	r.db = MyDatabaseId;
	if (!OidIsValid(r.owner_db))
		r.owner_db = owner_for_record(n, def);
	names_append(n, &r);
	return floor;
}

/*
 * Record that def's identity, which no database holds on this server,
 * belongs to this database, the first to issue with it (names_lock
 * exclusive): the name's record in this database names it.
 */
static void
claim_identity(Names *n, const CosidGenDef *def)
{
	NameRecord	r;

	memset(&r, 0, sizeof(r));
	strlcpy(r.name, def->name, NAMEDATALEN);
	r.kind = NAME_OF_DB;
	r.db = MyDatabaseId;
	r.ident = def->identity;
	r.floor = -1;
	r.owner_db = MyDatabaseId;
	record_set_layout(&r, def);
	names_append(n, &r);
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
 * An entry to use (lock held): a free one, else the oldest tombstone, else
 * one idle for IDLE_MS (the next in clock order), else one of a database
 * above its share.  Constant time while entries are free, tombstones or
 * mostly idle (generators defined, used once and left alone churn through
 * them); a scan of every entry only when most were used in the last
 * IDLE_MS.
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
		 * Start as if the unit before the first one allowed were used up: no
		 * earlier than the clock's unit (ids of it may have been issued by an
		 * earlier entry of this name), the end of what the name's earlier
		 * entry issued, the end of what reused entries issued, and the
		 * name's floor.
		 */
		int64		end = Max(name_end_ms,
							  (int64) pg_atomic_read_u64(retired_ms));
		int64		last = cosid_unit_of(&def->spec.layout, Max(now, end));

		if (end > now)
			last--;				/* an exclusive end: its unit is free */
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
	 * first id) under names_lock, taken before the hash lock and held until
	 * the entry is made, so entries of one identity with two layouts are
	 * made one after the other, each above the other.
	 */
	if (COSID_TIME_BASED(def->spec.strategy))
	{
		/*
		 * An error releases it (LWLockReleaseAll at abort).  Only identity 0
		 * and an identity no database holds yet write.
		 */
		LWLockMode	mode = def->identity == 0 ? LW_EXCLUSIVE : LW_SHARED;
		Names		n;

		for (;;)
		{
			LWLockAcquire(names_lock, mode);
			names_read(&n);
			if (def->identity == 0)
			{
				/* a name of 1.2 that the update gave an identity: its state is that one's */
				NameRecord *rec = names_find(&n, NAME_LAYOUT, def);

				if (rec != NULL && rec->successor != 0 && record_same_layout(rec, def))
				{
					mapped = *def;
					mapped.identity = rec->successor;
					def = &mapped;
					make_key(def, &key);
				}
			}
			if (mode == LW_EXCLUSIVE || OidIsValid(names_owner(&n, def->identity, def->name)))
				break;
			LWLockRelease(names_lock);
			mode = LW_EXCLUSIVE;
		}
		if (!OidIsValid(names_owner(&n, def->identity, def->name)))
			claim_identity(&n, def);
		floor = name_floor(&n, def);
	}
	LWLockAcquire(cosid_gen_hash_lock, LW_EXCLUSIVE);
	e = find_entry(&key, def, &t, &index);
	if (e != NULL)
	{
		LWLockRelease(cosid_gen_hash_lock);
		if (COSID_TIME_BASED(def->spec.strategy))
			LWLockRelease(names_lock);
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
	if (COSID_TIME_BASED(def->spec.strategy))
		LWLockRelease(names_lock);
	*tag = t;
	return e;
}

bool
cosid_gen_zero_led_on(const CosidGenDef *def)
{
	Names		n;
	NameRecord *rec;
	bool		led;

	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return false;
	LWLockAcquire(names_lock, LW_SHARED);
	names_read(&n);
	rec = names_find(&n, NAME_LAYOUT, def);
	led = rec != NULL && rec->successor != 0 && record_same_layout(rec, def);
	LWLockRelease(names_lock);
	return led;
}

int
cosid_gen_identity_holders(const CosidGenDef *def, Oid **dbs)
{
	Names		n;
	int			count = 0;

	*dbs = NULL;
	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return 0;
	LWLockAcquire(names_lock, LW_SHARED);
	names_read(&n);
	for (int i = 0; i < n.nall; i++)
	{
		NameRecord *r = &n.all[i];

		if (r->kind != NAME_OF_DB || r->ident != def->identity || r->forgotten ||
			strncmp(r->name, def->name, NAMEDATALEN) != 0 || !names_live(&n, i))
			continue;
		if (*dbs == NULL)
			*dbs = palloc(sizeof(Oid) * n.nall);
		(*dbs)[count++] = r->db;
	}
	LWLockRelease(names_lock);
	return count;
}

int64
cosid_gen_give_identity(const CosidGenDef *def, int64 fresh_identity)
{
	Names		n;
	NameRecord *rec;
	NameRecord	r;
	CosidGenKey key;
	CosidGenRef *ref;
	int			index = -1;
	int64		floor = -1;
	int64		end = 0;
	CosidLayout layout = def->spec.layout;
	int			ubits = def->spec.uncertainty_bits;
	CosidGenDef named = *def;

	Assert(def->identity == 0);
	if (!COSID_TIME_BASED(def->spec.strategy) || !cosid_preloaded)
		return fresh_identity;
	LWLockAcquire(names_lock, LW_EXCLUSIVE);
	names_read(&n);
	rec = names_find(&n, NAME_LAYOUT, def);
	if (rec != NULL && rec->successor != 0 && record_same_layout(rec, def))
	{
		/* a copy of a database updated before: the identity that one got */
		named.identity = rec->successor;
	}
	else
	{
		/*
		 * What identity 0 of this name may have issued: its record's floor
		 * (with another layout, every id it may have issued up to the
		 * window end), and, in this run of the server, the last unit of its
		 * entry or tombstone (freed now: its backends attach again, to the
		 * new identity).  Earlier runs issued below this run's window.
		 */
		if (rec != NULL)
			floor = record_same_layout(rec, def) ? rec->floor :
				floor_for_new_layout(rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
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
			floor = Max(floor, max_id_until(&layout, ubits, end - 1));

		/* the new identity's record, with that floor (not a changed layout: no limit) */
		named.identity = fresh_identity;
		memset(&r, 0, sizeof(r));
		strlcpy(r.name, def->name, NAMEDATALEN);
		r.kind = NAME_LAYOUT;
		r.ident = fresh_identity;
		r.db = MyDatabaseId;
		r.owner_db = MyDatabaseId;
		r.floor = floor;
		record_set_layout(&r, def);
		names_append(&n, &r);

		/* identity 0 of the name now leads to it, for this database's copies */
		rec = names_find(&n, NAME_LAYOUT, def);
		if (rec != NULL)
			memcpy(&r, rec, sizeof(r));
		else
		{
			memset(&r, 0, sizeof(r));
			strlcpy(r.name, def->name, NAMEDATALEN);
			r.kind = NAME_LAYOUT;
			r.floor = -1;
			r.owner_db = MyDatabaseId;
		}
		r.db = MyDatabaseId;
		record_set_layout(&r, def);
		r.successor = fresh_identity;
		names_append(&n, &r);
	}
	/* the name's identity in this database */
	memset(&r, 0, sizeof(r));
	strlcpy(r.name, def->name, NAMEDATALEN);
	r.kind = NAME_OF_DB;
	r.db = MyDatabaseId;
	r.ident = named.identity;
	r.floor = -1;
	r.owner_db = owner_for_record(&n, &named);
	record_set_layout(&r, def);
	names_append(&n, &r);
	LWLockRelease(names_lock);
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

/* Write the forgotten record of name (names_lock not held). */
static void
forget_name_now(const char *name)
{
	Names		n;
	NameRecord *rec;
	CosidGenDef key;

	memset(&key, 0, sizeof(key));
	strlcpy(key.name, name, NAMEDATALEN);
	LWLockAcquire(names_lock, LW_EXCLUSIVE);
	names_read(&n);
	rec = names_find(&n, NAME_OF_DB, &key);
	if (rec != NULL && !rec->forgotten)
	{
		NameRecord	r;

		memcpy(&r, rec, sizeof(r));
		r.forgotten = 1;
		names_append(&n, &r);
	}
	LWLockRelease(names_lock);
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

/*
 * names.c - pg_cosid/names: the durable log of time-based generators'
 * identities and layouts (names.h says what its records mean), and the
 * index of its live records in shared memory.
 *
 * Owns: pg_cosid/names and pg_cosid/names.next, the index, cosid.max_names.
 * Must not: decide what a record means to a generator (genstate.c does),
 * read the catalog (but whether a database still exists, pg_database being
 * shared), or do I/O under the index lock.
 *
 * The log is a file of fixed-size records, each with its checksum,
 * appended and fsynced a batch at a time; the last record of a key counts.
 * Every live record is in the index, a hash in shared memory of at most
 * cosid.max_names records, so a look-up costs the same with 10 or 100,000
 * names: no backend reads the file but the first after a start (or after
 * a failed write), which loads it.
 *
 * Compaction is incremental.  When the file holds more than twice the live
 * records (and 64 more), the appends go to pg_cosid/names.next (whose
 * header's epoch is the file's plus one), and each append first copies the
 * live ones among the next COMPACT_STEP records of the old file into it;
 * when none is left, names.next is renamed over names.  A crash in between
 * leaves both, read one after the other as one log (a copy is the same as
 * its original, and later than it).  A record torn by a crash while it was
 * appended (never acknowledged) ends the log; the log is then written anew
 * at load, as are the formats of 1.2 and 1.3 and 1.4's development format 4.
 *
 * The index holds every live record, up to cosid.max_names of them; when a
 * new key finds it full, the database holding the most records that can be
 * forgotten (a name's record in a database, or an identity's record with no
 * floor and no successor) forgets its oldest such record, a forgotten
 * name's first.  Nothing is written for it: the next load forgets the same
 * way, and compaction drops what the index no longer holds.  Records with a
 * floor or a successor are never forgotten (genstate.c bounds them per
 * database).  Records of a database that no longer exists are dropped when
 * compaction copies them.
 *
 * Why a log with an index (ARCHITECTURE.md, "Names and identities", has
 * the summary): what a time-based name keeps outside every catalog must
 * survive DROP EXTENSION, copies of the data directory and pg_upgrade
 * (upgrade.c's manifest lists names and names.next), cost the same at 10
 * and 100,000 generators, and never make an issuer wait for an fsync.  A
 * define appends its records in one write and one fsync; a generator's
 * first issue appends nothing unless its identity is new to the server.  A
 * record is durable before any backend can see it: the index changes after
 * the fsync.  A names.next whose epoch is not the file's plus one is stale
 * and ignored.  When the index is full, a database below its share of the
 * forgettable records is never the one that loses.  The older formats
 * (1.2's 2, 1.3's 3, 1.4's development format 4) are written anew as
 * format 5, and an identity that had no record of its own gets one, owned
 * by the database of its first live record.  Chosen over re-reading the
 * log in each backend (1.3: O(n) per first call and per define, and an
 * fsync under a lock that every time-based attach took) and over records
 * in a catalog table (not shared between databases, gone with DROP
 * EXTENSION).
 */
#include "names.h"
#include "upgrade.h"
#include "util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#define NAMES_FILE	COSID_STATE_DIR "/names"
#define NAMES_NEXT	COSID_STATE_DIR "/names.next"
#define NAMES_TMP	COSID_STATE_DIR "/names.tmp"
#define NAMES_MAGIC 0xC051D4A3u
#define NAMES_VERSION 5
#define NAMES_VERSION_4 4		/* 1.4's development format: no epoch */
#define NAMES_VERSION_1_3 3
#define NAMES_VERSION_1_2 2

/* records of the old file examined per append while compacting */
#define COMPACT_STEP 8
/* the most records one append writes: copies and up to 3 of its own */
#define MAX_BATCH	(COMPACT_STEP + 3)
/* room in the index beyond cosid.max_names, for the keys of one append */
#define INDEX_SLACK	MAX_BATCH

int			cosid_max_names = 65536;

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

/* formats 3 and 4 */
typedef struct NamesHeader4
{
	uint32		magic;
	uint32		version;
} NamesHeader4;

/* format 5: the epoch tells names.next (epoch + 1) from a stale one */
typedef struct NamesHeader
{
	uint32		magic;
	uint32		version;
	uint32		epoch;
	uint32		reserved;
} NamesHeader;

/*
 * An entry of the index: the record (its key is kind, db or ident, and
 * name: names_hash and names_match read only those) and where it is: the
 * epoch of its file and its place there.
 */
typedef struct NameEntry
{
	CosidNameRecord rec;		/* hash key: must be first */
	uint32		epoch;
	uint32		pos;
} NameEntry;

typedef struct NamesShared
{
	bool		loaded;			/* the index holds the log */
	uint32		epoch;			/* pg_cosid/names's */
	uint32		in_names;		/* records in it */
	bool		compacting;		/* appends go to names.next (epoch + 1) */
	uint32		in_next;		/* records in names.next */
	uint32		cursor;			/* the next record of names to examine */
	bool		exists;			/* pg_cosid/names does */
	bool		rewrite;		/* the log is to be written anew before the next append */
	bool		warned_full;
} NamesShared;

static NamesShared *names_shared = NULL;
static HTAB *names_index = NULL;
static LWLock *write_lock = NULL;
static LWLock *index_lock = NULL;

/* ---------- keys ---------- */

static bool
database_exists(Oid db)
{
	return db == MyDatabaseId ||
		SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(db));
}

static void
key_of(CosidNameRecord *key, int kind, Oid db, int64 ident, const char *name)
{
	memset(key, 0, sizeof(*key));
	key->kind = kind;
	if (kind == COSID_NAME_LAYOUT)
		key->ident = ident;
	else
		key->db = db;
	strlcpy(key->name, name, NAMEDATALEN);
}

static uint32
names_hash(const void *key, Size keysize)
{
	const CosidNameRecord *r = key;
	uint32		h = hash_bytes_uint32((uint32) r->kind);

	h = hash_combine(h, r->kind == COSID_NAME_LAYOUT ?
					 hash_bytes((const unsigned char *) &r->ident, sizeof(r->ident)) :
					 hash_bytes_uint32(r->db));
	return hash_combine(h, hash_bytes((const unsigned char *) r->name,
									  strnlen(r->name, NAMEDATALEN)));
}

static int
names_match(const void *key1, const void *key2, Size keysize)
{
	const CosidNameRecord *a = key1;
	const CosidNameRecord *b = key2;

	if (a->kind != b->kind)
		return 1;
	if (a->kind == COSID_NAME_LAYOUT ? a->ident != b->ident : a->db != b->db)
		return 1;
	return strncmp(a->name, b->name, NAMEDATALEN);
}

static HTAB *
names_hash_create(const char *what, long size, bool shared)
{
	HASHCTL		ctl;
	int			flags = HASH_ELEM | HASH_FUNCTION | HASH_COMPARE;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(CosidNameRecord);
	ctl.entrysize = shared ? sizeof(NameEntry) : sizeof(NameEntry);
	ctl.hash = names_hash;
	ctl.match = names_match;
	if (shared)
		return ShmemInitHash(what, size, size, &ctl, flags);
	ctl.hcxt = CurrentMemoryContext;
	return hash_create(what, size, &ctl, flags | HASH_CONTEXT);
}

static void
record_crc(CosidNameRecord *r)
{
	INIT_CRC32C(r->crc);
	COMP_CRC32C(r->crc, r, offsetof(CosidNameRecord, crc));
	FIN_CRC32C(r->crc);
}

/* Whether r is an identity's record with no floor and no successor (nothing but its owner and layout). */
static bool
plain_identity(const CosidNameRecord *r)
{
	return r->kind == COSID_NAME_LAYOUT && r->ident != 0 && r->floor < 0 && r->successor == 0;
}

/*
 * Whether r may be forgotten when the index is full: a name's record in a
 * database (it keeps only the name's identity across DROP EXTENSION), and
 * then an identity's record without a floor (it says which database the
 * identity belongs to: forgotten, another database could take the identity,
 * so those go last, and only from the database holding the most records).
 */
static bool
forgettable(const CosidNameRecord *r)
{
	return r->kind == COSID_NAME_OF_DB || plain_identity(r);
}

/* The database a record counts against when the index is full. */
static Oid
record_db(const CosidNameRecord *r)
{
	return r->kind == COSID_NAME_LAYOUT && OidIsValid(r->owner_db) ? r->owner_db : r->db;
}

/* Whether compaction leaves r out: a forgotten name, or a record of a database that no longer exists. */
static bool
dropped_at_compaction(const CosidNameRecord *r)
{
	if (r->kind == COSID_NAME_OF_DB)
		return r->forgotten || !database_exists(r->db);
	return plain_identity(r) && OidIsValid(r->owner_db) && !database_exists(r->owner_db);
}

/* ---------- settings and shared memory ---------- */

void
cosid_names_define_settings(void)
{
	DefineCustomIntVariable("cosid.max_names",
							"Records of time-based generators' names and identities that shared memory can hold.",
							"Each time-based generator needs two (its identity's and its name's in its database).",
							&cosid_max_names,
							65536, 32, 10000000,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
}

void
cosid_names_shmem_request(void)
{
	RequestNamedLWLockTranche("cosid names", 2);
}

Size
cosid_names_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(NamesShared)),
					hash_estimate_size(cosid_max_names + INDEX_SLACK, sizeof(NameEntry)));
}

/* Called under AddinShmemInitLock. */
void
cosid_names_shmem_init(void)
{
	bool		found;

	write_lock = &(GetNamedLWLockTranche("cosid names"))[0].lock;
	index_lock = &(GetNamedLWLockTranche("cosid names"))[1].lock;
	cosid_issuer_lock(index_lock, "the names index lock");
	names_shared = ShmemInitStruct("cosid names", sizeof(NamesShared), &found);
	if (!found)
		memset(names_shared, 0, sizeof(NamesShared));
	names_index = names_hash_create("cosid names index", cosid_max_names + INDEX_SLACK, true);
}

/* ---------- reading the log (at load) ---------- */

static void
names_error(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("cosid name registry \"%s\" is damaged: %s", NAMES_FILE, what),
			 errdetail("It records the identities and layouts time-based generators issued ids with on this server."),
			 errhint("Restore it from a backup of the data directory.")));
}

/* The log as read: every record in log order, with its place, and the latest of each key. */
typedef struct Loaded
{
	NameEntry  *all;
	int			nall;
	int			cap;
	HTAB	   *latest;			/* NameEntry whose pos is its index in all */
	bool		rewrite;		/* an old format, a torn tail: write it anew */
} Loaded;

static void
loaded_put(Loaded *l, const CosidNameRecord *r, uint32 epoch, uint32 pos)
{
	NameEntry  *e;

	if (l->nall == l->cap)
	{
		l->cap = Max(64, l->cap * 2);
		l->all = l->all ? repalloc_huge(l->all, sizeof(NameEntry) * l->cap) :
			palloc_extended(sizeof(NameEntry) * l->cap, MCXT_ALLOC_HUGE);
	}
	l->all[l->nall].rec = *r;
	l->all[l->nall].epoch = epoch;
	l->all[l->nall].pos = pos;
	e = hash_search(l->latest, r, HASH_ENTER, NULL);
	e->rec = *r;
	e->epoch = 0;
	e->pos = l->nall++;
}

static bool
loaded_live(Loaded *l, int i)
{
	NameEntry  *e = hash_search(l->latest, &l->all[i].rec, HASH_FIND, NULL);

	return e != NULL && e->pos == (uint32) i;
}

static void
read_exact(int fd, void *buf, Size len, const char *what)
{
	if (len > 0 && read(fd, buf, len) != (ssize_t) len)
		names_error(what);
}

/* 1.2's records (after its header): names of identity 0. */
static void
read_1_2(int fd, const NamesHeader12 *h, Loaded *l)
{
	Size		len = mul_size(h->count, sizeof(NameRecord12));
	NameRecord12 *old = palloc_extended(Max(len, 1), MCXT_ALLOC_HUGE);
	pg_crc32c	crc;

	read_exact(fd, old, len, "short file");
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, old, len);
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, h->crc))
		names_error("checksum mismatch");
	for (uint32 i = 0; i < h->count; i++)
	{
		CosidNameRecord r;

		memset(&r, 0, sizeof(r));
		memcpy(r.name, old[i].name, NAMEDATALEN);
		r.kind = COSID_NAME_LAYOUT;
		r.wide = old[i].wide;
		r.uncertainty_bits = old[i].uncertainty_bits;
		r.layout = old[i].layout;
		r.floor = old[i].floor;
		r.successor = 0;
		loaded_put(l, &r, 0, i);
	}
	l->rewrite = true;
	pfree(old);
}

/*
 * The records of a log file after its header, in format 5 or 4 or in 1.3's
 * (format 3: a record's database, the one that defined the name or changed
 * the identity's layout, is taken as its identity's owner).  last: the last
 * file of the log, whose last record may be torn.
 */
static void
read_records(int fd, const char *path, bool v13, uint32 epoch, bool last, Loaded *l)
{
	union
	{
		CosidNameRecord r;
		NameRecord13 r13;
	}			buf;
	Size		size = v13 ? sizeof(NameRecord13) : sizeof(CosidNameRecord);
	Size		crc_at = v13 ? offsetof(NameRecord13, crc) : offsetof(CosidNameRecord, crc);
	ssize_t		got;
	uint32		pos = 0;

	while ((got = read(fd, &buf, size)) == (ssize_t) size)
	{
		pg_crc32c	crc;
		pg_crc32c	stored;
		CosidNameRecord r;

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
						 errmsg("could not read file \"%s\": %m", path)));
			/*
			 * An append writes a batch (at most MAX_BATCH records) with one
			 * write: a crash may tear any of them, and none was acknowledged.
			 */
			if (extra < 0 || !last)
				names_error("checksum mismatch");
			if (extra != 0)
			{
				struct stat st;
				off_t		at = lseek(fd, 0, SEEK_CUR) - 1 - (off_t) size;

				if (fstat(fd, &st) != 0 || st.st_size - at > (off_t) (MAX_BATCH * size))
					names_error("checksum mismatch");
			}
			l->rewrite = true;
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
		}
		else
			memcpy(&r, &buf.r, sizeof(r));
		loaded_put(l, &r, epoch, pos++);
	}
	if (got < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", path)));
	if (got > 0)
	{
		if (!last)
			names_error("short record");
		l->rewrite = true;		/* a torn last record */
	}
}

static int
open_log(const char *path)
{
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);

	if (fd < 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	return fd;
}

/*
 * names.next, when it continues names (epoch + 1); a stale one (left by a
 * crash after the log was written anew) is ignored and removed.
 */
static void
read_next(uint32 epoch, Loaded *l, bool *had_next)
{
	int			fd = open_log(NAMES_NEXT);
	NamesHeader h;

	*had_next = fd >= 0;
	if (fd < 0)
		return;
	/* (its header is written by a rename: it is whole or not there) */
	if (read(fd, &h, sizeof(h)) != sizeof(h) || h.magic != NAMES_MAGIC || h.version != NAMES_VERSION)
		names_error("names.next has no valid header");
	if (h.epoch != epoch + 1)
	{
		/* left by a crash after the log was written anew: nothing of it counts */
		CloseTransientFile(fd);
		l->rewrite = true;
		return;
	}
	read_records(fd, NAMES_NEXT, false, epoch + 1, true, l);
	CloseTransientFile(fd);
}

/* Read the log into l; *epoch is names' (0 before format 5). */
static void
read_log(Loaded *l, uint32 *epoch, bool *had_next, bool *exists)
{
	int			fd;
	NamesHeader12 h;

	*epoch = 0;
	*had_next = false;
	*exists = false;
	fd = open_log(NAMES_FILE);
	if (fd < 0)
	{
		/* no log: a names.next without it is stale (removed by the first append) */
		*had_next = access(NAMES_NEXT, F_OK) == 0;
		return;
	}
	*exists = true;
	read_exact(fd, &h, sizeof(NamesHeader4), "short header");
	if (h.magic != NAMES_MAGIC)
		names_error("unknown format");
	if (h.version == NAMES_VERSION_1_2)
	{
		read_exact(fd, (char *) &h + sizeof(NamesHeader4),
				   sizeof(h) - sizeof(NamesHeader4), "short header");
		read_1_2(fd, &h, l);
	}
	else if (h.version == NAMES_VERSION_4 || h.version == NAMES_VERSION_1_3)
	{
		read_records(fd, NAMES_FILE, h.version == NAMES_VERSION_1_3, 0, true, l);
		l->rewrite = true;
	}
	else if (h.version == NAMES_VERSION)
	{
		NamesHeader h5;

		memcpy(&h5, &h, sizeof(NamesHeader4));
		read_exact(fd, (char *) &h5 + sizeof(NamesHeader4),
				   sizeof(h5) - sizeof(NamesHeader4), "short header");
		*epoch = h5.epoch;
		read_records(fd, NAMES_FILE, false, h5.epoch, access(NAMES_NEXT, F_OK) != 0, l);
		CloseTransientFile(fd);
		read_next(h5.epoch, l, had_next);
		return;
	}
	else
		names_error("unknown format");
	CloseTransientFile(fd);
	*had_next = access(NAMES_NEXT, F_OK) == 0;
}

/*
 * Before 1.4's format 5, an identity had a record of its own only once its
 * layout changed (and 1.2's names, identity 0, one without an owner);
 * otherwise its name's record in the database that defined it stood for
 * it, and the identity belonged to the database of the first live record
 * of it in the log whose database exists.  Give every identity a record of
 * its own with that owner, and that owner to a record whose owner is not
 * known or gone; l->rewrite when anything changed.
 */
static void
add_identity_records(Loaded *l)
{
	HTAB	   *owners = names_hash_create("cosid names owners", 64, false);
	int			n = l->nall;

	/* the owner of each identity: its first live record with a database that exists */
	for (int i = 0; i < n; i++)
	{
		CosidNameRecord key;
		NameEntry  *o;
		bool		found;
		CosidNameRecord *r = &l->all[i].rec;

		if (!loaded_live(l, i))
			continue;
		key_of(&key, COSID_NAME_LAYOUT, InvalidOid, r->ident, r->name);
		o = hash_search(owners, &key, HASH_ENTER, &found);
		if (!found)
			o->rec.owner_db = InvalidOid;
		if (!OidIsValid(o->rec.owner_db) && OidIsValid(r->owner_db) &&
			database_exists(r->owner_db))
			o->rec.owner_db = r->owner_db;
	}
	for (int i = 0; i < n; i++)
	{
		CosidNameRecord key;
		CosidNameRecord id;
		NameEntry  *o;
		NameEntry  *have;
		CosidNameRecord *r = &l->all[i].rec;

		if (r->kind != COSID_NAME_OF_DB || !loaded_live(l, i))
			continue;
		key_of(&key, COSID_NAME_LAYOUT, InvalidOid, r->ident, r->name);
		o = hash_search(owners, &key, HASH_FIND, NULL);
		have = hash_search(l->latest, &key, HASH_FIND, NULL);
		if (have != NULL)
		{
			CosidNameRecord *idr = &l->all[have->pos].rec;

			/* its record, whose owner is not known (1.2) or gone */
			if (o != NULL && OidIsValid(o->rec.owner_db) && idr->owner_db != o->rec.owner_db &&
				(!OidIsValid(idr->owner_db) || !database_exists(idr->owner_db)))
			{
				id = *idr;
				id.owner_db = o->rec.owner_db;
				loaded_put(l, &id, 0, 0);
				l->rewrite = true;
			}
			continue;
		}
		id = key;
		id.db = r->db;
		id.wide = r->wide;
		id.uncertainty_bits = r->uncertainty_bits;
		id.layout = r->layout;
		id.floor = -1;
		id.owner_db = o && OidIsValid(o->rec.owner_db) ? o->rec.owner_db : r->owner_db;
		loaded_put(l, &id, 0, 0);
		l->rewrite = true;
	}
	hash_destroy(owners);
}

/* ---------- forgetting when full ---------- */

typedef struct Forgettable
{
	Oid			db;
	int			rank;			/* 0: a forgotten name or its identity, 1: a name, 2: an identity */
	uint64		age;			/* (epoch, pos): older first */
	NameEntry  *entry;
} Forgettable;

typedef struct DbCount
{
	Oid			db;				/* hash key */
	int			count;
	int			next;			/* its first candidate not yet taken */
	int			end;
} DbCount;

static int
forgettable_cmp(const void *a, const void *b)
{
	const Forgettable *x = a;
	const Forgettable *y = b;

	if (x->db != y->db)
		return x->db < y->db ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->age < y->age ? -1 : x->age > y->age ? 1 : 0;
}

/*
 * The k records to forget (palloc'd keys), each from the database holding
 * the most records at the time (so that a database within its share of
 * cosid.max_names never loses one to another's): its forgotten names' and
 * their identities' first, then its names', then its identities' without a
 * floor, oldest first; fewer when there are not so many.
 * Keys in skip (those an append is about to write) are not chosen.  The
 * index is stable (write lock held, or not yet shared).
 */
static int
choose_forgotten(HTAB *index, int k, HTAB *skip, CosidNameRecord **out)
{
	HASH_SEQ_STATUS seq;
	NameEntry  *e;
	long		n = hash_get_num_entries(index);
	Forgettable *c = palloc_extended(sizeof(Forgettable) * Max(n, 1), MCXT_ALLOC_HUGE);
	int			nc = 0;
	int			taken = 0;
	HASHCTL		ctl;
	HTAB	   *dbs;
	DbCount    *d;

	hash_seq_init(&seq, index);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (!forgettable(&e->rec))
			continue;
		if (skip != NULL && hash_search(skip, &e->rec, HASH_FIND, NULL) != NULL)
			continue;
		c[nc].db = record_db(&e->rec);
		c[nc].rank = e->rec.forgotten ? 0 : e->rec.kind == COSID_NAME_LAYOUT ? 2 : 1;
		c[nc].age = ((uint64) e->epoch << 32) | e->pos;
		c[nc++].entry = e;
	}
	qsort(c, nc, sizeof(Forgettable), forgettable_cmp);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(DbCount);
	ctl.hcxt = CurrentMemoryContext;
	dbs = hash_create("cosid names per database", 16, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	/* every record counts against its database; the candidates are runs of c */
	hash_seq_init(&seq, index);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Oid			db = record_db(&e->rec);
		bool		found;

		d = hash_search(dbs, &db, HASH_ENTER, &found);
		if (!found)
		{
			d->count = 0;
			d->next = d->end = 0;
		}
		d->count++;
	}
	for (int i = 0; i < nc; i++)
	{
		d = hash_search(dbs, &c[i].db, HASH_FIND, NULL);
		if (d->end == 0)
			d->next = i;
		d->end = i + 1;
	}
	*out = palloc(sizeof(CosidNameRecord) * Max(k, 1));
	while (taken < k)
	{
		DbCount    *most = NULL;

		hash_seq_init(&seq, dbs);
		while ((d = hash_seq_search(&seq)) != NULL)
			if (d->next < d->end && (most == NULL || d->count > most->count))
				most = d;
		if (most == NULL)
			break;
		(*out)[taken++] = c[most->next++].entry->rec;
		most->count--;
	}
	hash_destroy(dbs);
	pfree(c);
	return taken;
}

static void
warn_full(int forgotten)
{
	if (names_shared->warned_full)
		return;
	names_shared->warned_full = true;
	ereport(LOG,
			(errmsg("cosid.max_names (%d) is full: %d records of names in databases were forgotten",
					cosid_max_names, forgotten),
			 errdetail("A time-based name whose record is forgotten gets a new identity when it is defined again after DROP EXTENSION."),
			 errhint("Raise cosid.max_names to at least twice the number of time-based generators on this server.")));
}

/* ---------- writing ---------- */

static void
write_header(const char *path, const char *tmp, uint32 epoch, const CosidNameRecord *recs, int n)
{
	NamesHeader h = {NAMES_MAGIC, NAMES_VERSION, epoch, 0};
	Size		len = add_size(sizeof(h), mul_size(n, sizeof(CosidNameRecord)));
	char	   *buf = palloc_extended(len, MCXT_ALLOC_HUGE);

	memcpy(buf, &h, sizeof(h));
	if (n > 0)
		memcpy(buf + sizeof(h), recs, mul_size(n, sizeof(CosidNameRecord)));
	cosid_ensure_state_dir();
	cosid_write_durably(path, tmp, buf, len);
	pfree(buf);
}

/*
 * Load the log into the index (write lock held): at the first use after a
 * start, or after a write failed.  The log is written anew when it is in
 * an older format or its tail was torn.
 */
static void
names_load(void)
{
	Loaded		l;
	uint32		epoch;
	bool		had_next;
	bool		exists;
	HTAB	   *live;
	CosidNameRecord *forget = NULL;
	int			nforget = 0;
	int			nlive;
	HASH_SEQ_STATUS seq;
	NameEntry  *e;

	/* after pg_upgrade, the old server's record must be copied first */
	cosid_upgrade_check();
	memset(&l, 0, sizeof(l));
	l.latest = names_hash_create("cosid names as read", 1024, false);
	read_log(&l, &epoch, &had_next, &exists);
	add_identity_records(&l);
	live = l.latest;
	nlive = (int) hash_get_num_entries(live);
	if (nlive > cosid_max_names)
	{
		nforget = choose_forgotten(live, nlive - cosid_max_names, NULL, &forget);
		for (int i = 0; i < nforget; i++)
			(void) hash_search(live, &forget[i], HASH_REMOVE, NULL);
		warn_full(nforget);
		if (hash_get_num_entries(live) > cosid_max_names)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("cosid.max_names (%d) cannot hold the %ld records of pg_cosid/names that must be kept",
							cosid_max_names, hash_get_num_entries(live)),
					 errhint("Raise cosid.max_names and restart the server.")));
	}
	/*
	 * An older format, a torn record or a stale names.next: the log is written
	 * anew before the next append (rewrite_log), not here, so that reading
	 * never depends on a write.
	 */
	/* the index: every live record, where it is */
	LWLockAcquire(index_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, names_index);
	while ((e = hash_seq_search(&seq)) != NULL)
		(void) hash_search(names_index, &e->rec, HASH_REMOVE, NULL);
	names_shared->in_names = 0;
	names_shared->in_next = 0;
	for (int i = 0; i < l.nall; i++)
	{
		NameEntry  *to;

		if (l.all[i].epoch == epoch)
			names_shared->in_names = Max(names_shared->in_names, l.all[i].pos + 1);
		else if (l.all[i].epoch == epoch + 1)
			names_shared->in_next = Max(names_shared->in_next, l.all[i].pos + 1);
		if (!loaded_live(&l, i))
			continue;
		to = hash_search(names_index, &l.all[i].rec, HASH_ENTER_NULL, NULL);
		if (to == NULL)
			elog(ERROR, "cosid names index is out of shared memory");
		*to = l.all[i];
	}
	names_shared->epoch = epoch;
	names_shared->compacting = had_next && !l.rewrite;
	names_shared->cursor = 0;
	names_shared->exists = exists;
	names_shared->rewrite = l.rewrite;
	names_shared->loaded = true;
	LWLockRelease(index_lock);
	hash_destroy(l.latest);
	if (l.all)
		pfree(l.all);
}

/* Load the index if it is not (write lock held by the caller or taken here). */
static void
ensure_loaded(void)
{
	bool		held = LWLockHeldByMe(write_lock);

	if (!held)
		LWLockAcquire(write_lock, LW_EXCLUSIVE);
	if (!names_shared->loaded)
		names_load();
	if (!held)
		LWLockRelease(write_lock);
}

bool
cosid_names_get(int kind, Oid db, int64 ident, const char *name, CosidNameRecord *out)
{
	CosidNameRecord key;
	bool		held = LWLockHeldByMe(write_lock);

	key_of(&key, kind, db, ident, name);
	for (;;)
	{
		NameEntry  *e;

		/* the index changes only under both locks: the writer reads it as it is */
		if (!held)
			LWLockAcquire(index_lock, LW_SHARED);
		if (names_shared->loaded)
		{
			e = hash_search(names_index, &key, HASH_FIND, NULL);
			if (e != NULL)
				*out = e->rec;
			if (!held)
				LWLockRelease(index_lock);
			return e != NULL;
		}
		if (!held)
			LWLockRelease(index_lock);
		ensure_loaded();
	}
}

void
cosid_names_lock(void)
{
	LWLockAcquire(write_lock, LW_EXCLUSIVE);
	if (!names_shared->loaded)
		names_load();
}

void
cosid_names_unlock(void)
{
	LWLockRelease(write_lock);
}

/* Start compaction: names.next, empty, with the next epoch. */
static void
begin_compaction(void)
{
	write_header(NAMES_NEXT, NAMES_TMP, names_shared->epoch + 1, NULL, 0);
	names_shared->compacting = true;
	names_shared->in_next = 0;
	names_shared->cursor = 0;
}

/*
 * The live records among the next COMPACT_STEP of names (compacting) into
 * copies (they go to names.next), and those of databases gone into gone.
 */
static int
compaction_step(CosidNameRecord *copies, CosidNameRecord *gone, int *ngone, int *examined)
{
	int			fd = open_log(NAMES_FILE);
	int			n = 0;
	off_t		at;
	CosidNameRecord r;

	*ngone = 0;
	*examined = 0;
	if (fd < 0)
		names_error("the file is gone while it is compacted");
	at = sizeof(NamesHeader) + (off_t) names_shared->cursor * sizeof(CosidNameRecord);
	while (*examined < COMPACT_STEP &&
		   names_shared->cursor + *examined < names_shared->in_names)
	{
		NameEntry  *e;

		if (pg_pread(fd, &r, sizeof(r), at) != (ssize_t) sizeof(r))
			names_error("short record");
		at += sizeof(r);
		e = hash_search(names_index, &r, HASH_FIND, NULL);
		if (e != NULL && e->epoch == names_shared->epoch &&
			e->pos == names_shared->cursor + *examined)
		{
			/*
			 * A forgotten name's record says what no record says (the name
			 * starts over): its older records are dead, or in names before
			 * it until the rename.
			 */
			if (dropped_at_compaction(&e->rec))
				gone[(*ngone)++] = e->rec;
			else
				copies[n++] = e->rec;
		}
		(*examined)++;
	}
	CloseTransientFile(fd);
	return n;
}

/* Append len bytes to path and fsync it. */
static void
append_records(const char *path, const CosidNameRecord *recs, int n)
{
	cosid_append_durably(path, recs, mul_size(n, sizeof(CosidNameRecord)));
}

static void
index_put(const CosidNameRecord *r, uint32 epoch, uint32 pos)
{
	NameEntry  *e = hash_search(names_index, r, HASH_ENTER_NULL, NULL);

	if (e == NULL)
		elog(ERROR, "cosid names index is out of shared memory");
	e->rec = *r;
	e->epoch = epoch;
	e->pos = pos;
}

/* How many of recs[0..n) have a key the index lacks. */
static int
new_keys(const CosidNameRecord *recs, int n)
{
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		bool		dup = false;

		for (int j = 0; j < i; j++)
			dup |= names_match(&recs[i], &recs[j], 0) == 0;
		if (!dup && hash_search(names_index, &recs[i], HASH_FIND, NULL) == NULL)
			k++;
	}
	return k;
}

/* A set of keys (for choose_forgotten's skip). */
static HTAB *
key_set(const CosidNameRecord *a, int na, const CosidNameRecord *b, int nb)
{
	HTAB	   *set = names_hash_create("cosid names being written", Max(na + nb, 8), false);

	for (int i = 0; i < na; i++)
		(void) hash_search(set, &a[i], HASH_ENTER, NULL);
	for (int i = 0; i < nb; i++)
		(void) hash_search(set, &b[i], HASH_ENTER, NULL);
	return set;
}

/*
 * Write the index's live records as a new log (the write lock held): once
 * after a load that found an older format, a torn record or a stale
 * names.next, before the first append.
 */
static void
rewrite_log(void)
{
	HASH_SEQ_STATUS seq;
	NameEntry  *e;
	long		n = hash_get_num_entries(names_index);
	CosidNameRecord *out = palloc_extended(sizeof(CosidNameRecord) * Max(n, 1), MCXT_ALLOC_HUGE);
	uint32		epoch = names_shared->epoch + 2;	/* a names.next beside it is stale */
	int			nout = 0;

	hash_seq_init(&seq, names_index);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		out[nout] = e->rec;
		record_crc(&out[nout++]);
	}
	write_header(NAMES_FILE, NAMES_TMP, epoch, out, nout);
	if (unlink(NAMES_NEXT) != 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", NAMES_NEXT)));
	LWLockAcquire(index_lock, LW_EXCLUSIVE);
	for (int i = 0; i < nout; i++)
	{
		e = hash_search(names_index, &out[i], HASH_FIND, NULL);
		e->epoch = epoch;
		e->pos = i;
	}
	names_shared->epoch = epoch;
	names_shared->in_names = nout;
	names_shared->in_next = 0;
	names_shared->compacting = false;
	names_shared->cursor = 0;
	names_shared->exists = true;
	names_shared->rewrite = false;
	LWLockRelease(index_lock);
	pfree(out);
}

/*
 * The appending itself (write lock held, index loaded): names.next begun
 * when compaction is due, the copies of a compaction step and recs written
 * with one fsync, then the index and the counters.  An error after the
 * write leaves the index to be loaded again (names_load), since the file
 * then holds more than the index says.
 */
static void
append_locked(CosidNameRecord *recs, int n)
{
	CosidNameRecord *buf = palloc(sizeof(CosidNameRecord) * (n + COMPACT_STEP));
	CosidNameRecord gone[COMPACT_STEP];
	CosidNameRecord *forget = NULL;
	int			ngone = 0;
	int			examined = 0;
	int			ncopies = 0;
	int			nforget = 0;
	int			room;
	uint32		epoch;
	uint32		first;

	if (names_shared->rewrite || !names_shared->exists)
		rewrite_log();
	if (!names_shared->compacting &&
		names_shared->in_names > 2 * (uint32) hash_get_num_entries(names_index) + 64)
		begin_compaction();
	if (names_shared->compacting)
		ncopies = compaction_step(buf, gone, &ngone, &examined);
	memcpy(buf + ncopies, recs, sizeof(CosidNameRecord) * n);

	/* room for new keys: names' records of the database holding the most go first */
	room = cosid_max_names - (int) hash_get_num_entries(names_index) + ngone - new_keys(recs, n);
	if (room < 0)
	{
		HTAB	   *skip = key_set(buf, ncopies + n, gone, ngone);

		/* a batch, so that the pass over the index is made once in many appends */
		nforget = choose_forgotten(names_index, Max(-room, cosid_max_names / 64), skip, &forget);
		hash_destroy(skip);
		if (nforget < -room)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("cosid.max_names (%d) is full of the records of time-based generators' identities",
							cosid_max_names),
					 errdetail("An identity's record is kept while its database exists: it says which database the identity belongs to."),
					 errhint("Raise cosid.max_names (two records for each time-based generator) and restart the server.")));
	}

	PG_TRY();
	{
		append_records(names_shared->compacting ? NAMES_NEXT : NAMES_FILE, buf, ncopies + n);
		epoch = names_shared->epoch + (names_shared->compacting ? 1 : 0);
		first = names_shared->compacting ? names_shared->in_next : names_shared->in_names;
		LWLockAcquire(index_lock, LW_EXCLUSIVE);
		for (int i = 0; i < nforget; i++)
			(void) hash_search(names_index, &forget[i], HASH_REMOVE, NULL);
		for (int i = 0; i < ngone; i++)
			(void) hash_search(names_index, &gone[i], HASH_REMOVE, NULL);
		for (int i = 0; i < ncopies + n; i++)
			index_put(&buf[i], epoch, first + i);
		if (!names_shared->compacting)
			names_shared->in_names += n;
		else
		{
			names_shared->in_next += ncopies + n;
			names_shared->cursor += examined;
		}
		LWLockRelease(index_lock);
		if (names_shared->compacting && names_shared->cursor >= names_shared->in_names)
		{
			/* every live record of names is in names.next: it is the log now */
			cosid_rename_durably(NAMES_NEXT, NAMES_FILE);
			LWLockAcquire(index_lock, LW_EXCLUSIVE);
			names_shared->epoch++;
			names_shared->in_names = names_shared->in_next;
			names_shared->in_next = 0;
			names_shared->compacting = false;
			LWLockRelease(index_lock);
		}
	}
	PG_CATCH();
	{
		/* (an error releases the index lock too, at abort) */
		names_shared->loaded = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (nforget > 0)
		warn_full(nforget);
	pfree(buf);
	if (forget)
		pfree(forget);
}

void
cosid_names_append(CosidNameRecord *recs, int n)
{
	Assert(LWLockHeldByMeInMode(write_lock, LW_EXCLUSIVE));
	ensure_loaded();
	for (int i = 0; i < n; i++)
		record_crc(&recs[i]);
	append_locked(recs, n);
}

int
cosid_names_kept_layouts(Oid db)
{
	HASH_SEQ_STATUS seq;
	NameEntry  *e;
	int			count = 0;
	bool		held = LWLockHeldByMe(write_lock);

	ensure_loaded();
	if (!held)
		LWLockAcquire(index_lock, LW_SHARED);
	hash_seq_init(&seq, names_index);
	while ((e = hash_seq_search(&seq)) != NULL)
		count += e->rec.kind == COSID_NAME_LAYOUT && e->rec.db == db &&
			(e->rec.floor >= 0 || e->rec.successor != 0);
	if (!held)
		LWLockRelease(index_lock);
	return count;
}

int
cosid_names_holders(int64 ident, const char *name, Oid **dbs)
{
	HASH_SEQ_STATUS seq;
	NameEntry  *e;
	int			count = 0;
	long		n;
	bool		held = LWLockHeldByMe(write_lock);

	*dbs = NULL;
	ensure_loaded();
	if (!held)
		LWLockAcquire(index_lock, LW_SHARED);
	n = hash_get_num_entries(names_index);
	hash_seq_init(&seq, names_index);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->rec.kind != COSID_NAME_OF_DB || e->rec.ident != ident || e->rec.forgotten ||
			strncmp(e->rec.name, name, NAMEDATALEN) != 0)
			continue;
		if (*dbs == NULL)
			*dbs = palloc(sizeof(Oid) * Max(n, 1));
		(*dbs)[count++] = e->rec.db;
	}
	if (!held)
		LWLockRelease(index_lock);
	return count;
}

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
 * an entry and to read or write pg_cosid/names; shared to look an entry up.  An
 * entry's fields are read and written under its spinlock; its tag changes
 * (under both) whenever it is freed or given to another generator.
 *
 * The uniqueness rule for a time-based name: the server never issues one of
 * its ids twice, whatever was defined, dropped or restored in any database.
 * - One entry per name serves every database, so copies of a database
 *   draw from one sequence.
 * - A freed entry stays as a tombstone of its name, so the name's next
 *   entry starts above what it issued; a tombstone reused for another name
 *   raises retired_ms, above which every new entry starts.  Across a restart the slot window does the
 *   same (a window starts at or after the previous durable end).
 * - pg_cosid/names records the layout of each name before its first id.  A
 *   name given another layout gets a floor: every id its old layout could
 *   have issued up to now (the window end bounds what was issued), and the
 *   new layout issues only above it, or is refused.
 */
#include "genstate.h"
#include "slot.h"

#include <unistd.h>

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#define NAMES_FILE	COSID_STATE_DIR "/names"
#define NAMES_TMP	COSID_STATE_DIR "/names.tmp"
#define NAMES_MAGIC 0xC051D4A3u
#define NAMES_VERSION 2

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

/* What pg_cosid/names keeps of a time-based name (fixed size, on disk). */
typedef struct NameRecord
{
	char		name[NAMEDATALEN];
	int32		wide;			/* cosid80: ids are not bigints */
	int32		uncertainty_bits;
	CosidLayout layout;			/* seq_reset_threshold not kept (0) */
	int64		floor;			/* ids up to this one are never issued again
								 * (-1: none) */
} NameRecord;

typedef struct NamesHeader
{
	uint32		magic;
	uint32		version;
	uint32		count;
	pg_crc32c	crc;			/* of the records */
} NamesHeader;

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
	RequestNamedLWLockTranche("cosid", 1);
}

Size
cosid_genstate_shmem_size(void)
{
	return add_size(add_size(MAXALIGN(sizeof(pg_atomic_uint64)),
							 mul_size(cosid_max_generators, sizeof(CosidGenEntry))),
					hash_estimate_size(cosid_max_generators, sizeof(CosidGenRef)));
}

/* Called under AddinShmemInitLock. */
void
cosid_genstate_shmem_init(void)
{
	bool		found;
	HASHCTL		info;

	cosid_gen_hash_lock = &(GetNamedLWLockTranche("cosid"))->lock;
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
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(CosidGenKey);
	info.entrysize = sizeof(CosidGenRef);
	gen_hash = ShmemInitHash("cosid generators",
							 cosid_max_generators, cosid_max_generators,
							 &info, HASH_ELEM | HASH_BLOBS);
}

static void
make_key(const CosidGenDef *def, CosidGenKey *key)
{
	memset(key, 0, sizeof(*key));
	strlcpy(key->name, def->name, NAMEDATALEN);
	if (!COSID_TIME_BASED(def->strategy))
	{
		key->dbid = MyDatabaseId;
		key->seqid = def->seqid;
	}
}

/* ---------- pg_cosid/names ---------- */

static void
names_error(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("cosid name registry \"%s\" is damaged: %s", NAMES_FILE, what),
			 errdetail("It records the layout each time-based generator name issued ids with on this server."),
			 errhint("Restore it from a backup of the data directory.")));
}

/* Every record (palloc'd) and their count; none when there is no file. */
static NameRecord *
names_read(int *count)
{
	int			fd = OpenTransientFile(NAMES_FILE, O_RDONLY | PG_BINARY);
	NamesHeader h;
	NameRecord *recs;
	Size		len;
	pg_crc32c	crc;

	*count = 0;
	if (fd < 0)
	{
		if (errno == ENOENT)
			return NULL;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", NAMES_FILE)));
	}
	if (read(fd, &h, sizeof(h)) != sizeof(h))
		names_error("short header");
	if (h.magic != NAMES_MAGIC || h.version != NAMES_VERSION)
		names_error("unknown format");
	len = mul_size(h.count, sizeof(NameRecord));
	recs = palloc(Max(len, 1));
	if (len > 0 && read(fd, recs, len) != (ssize_t) len)
		names_error("short file");
	CloseTransientFile(fd);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, recs, len);
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, h.crc))
		names_error("checksum mismatch");
	*count = (int) h.count;
	return recs;
}

/* Write every record durably: temporary file, fsync, atomic rename. */
static void
names_write(const NameRecord *recs, int count)
{
	NamesHeader h;
	Size		len = mul_size(count, sizeof(NameRecord));
	char	   *buf;

	cosid_ensure_state_dir();
	h.magic = NAMES_MAGIC;
	h.version = NAMES_VERSION;
	h.count = (uint32) count;
	INIT_CRC32C(h.crc);
	COMP_CRC32C(h.crc, recs, len);
	FIN_CRC32C(h.crc);
	buf = palloc(sizeof(h) + len);
	memcpy(buf, &h, sizeof(h));
	if (len > 0)
		memcpy(buf + sizeof(h), recs, len);
	cosid_write_durably(NAMES_FILE, NAMES_TMP, buf, sizeof(h) + len);
	pfree(buf);
}

static NameRecord *
names_find(NameRecord *recs, int count, const char *name)
{
	for (int i = 0; i < count; i++)
		if (strncmp(recs[i].name, name, NAMEDATALEN) == 0)
			return &recs[i];
	return NULL;
}

static void
record_set_layout(NameRecord *r, const CosidGenDef *def)
{
	r->wide = def->strategy == COSID_STRATEGY_COSID80;
	r->uncertainty_bits = def->uncertainty_bits;
	r->layout = def->layout;
	r->layout.seq_reset_threshold = 0;	/* may change; ids do not */
}

static bool
record_same_layout(const NameRecord *r, const CosidGenDef *def)
{
	return r->wide == (def->strategy == COSID_STRATEGY_COSID80) &&
		r->uncertainty_bits == def->uncertainty_bits &&
		cosid_layout_same_ids(&r->layout, &def->layout);
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
	int64		now_unit = cosid_unit_of(&def->layout, (int64) cosid_now_ms());

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

	floor = Max(rec->floor, max_id_until(old, rec->uncertainty_bits, issued_bound_ms()));

	if (rec->wide || def->strategy == COSID_STRATEGY_COSID80)
		ereport(ERROR,
				(errcode(code),
				 errmsg("generator \"%s\" already issued ids with another layout on this server",
						def->name),
				 errdetail("Its earlier layout was %s. The parts of an 80-bit id cannot be ordered across layouts, so a cosid80 name keeps its layout.",
						   layout_text(old, rec->uncertainty_bits)),
				 errhint("Define it with its earlier layout, or use another name.")));
	first = first_unit_above(&def->layout, def->uncertainty_bits, floor);
	/* past the end of timestamps (a seconds unit with many time bits): never */
	if (first > (PG_INT64_MAX / 1000 - def->layout.epoch_ms) / def->layout.unit_ms / 1000)
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
									cosid_ms_text(cosid_unit_start_ms(&def->layout, first)))),
				 errhint("Keep the earlier layout, choose an earlier epoch, or use another name.")));
	return floor;
}

void
cosid_gen_check_define(const CosidGenDef *def)
{
	NameRecord *recs;
	NameRecord *rec;
	int			count;

	if (!COSID_TIME_BASED(def->strategy) || !cosid_preloaded)
		return;
	LWLockAcquire(cosid_gen_hash_lock, LW_SHARED);
	recs = names_read(&count);
	LWLockRelease(cosid_gen_hash_lock);
	rec = names_find(recs, count, def->name);
	if (rec != NULL && !record_same_layout(rec, def))
		(void) floor_for_new_layout(rec, def, ERRCODE_INVALID_PARAMETER_VALUE);
}

/*
 * The floor of a time-based name about to get an entry: records its layout
 * durably first if it is new or changed (caller holds cosid_gen_hash_lock
 * exclusive).
 */
static int64
name_floor(const CosidGenDef *def)
{
	int			count;
	NameRecord *recs = names_read(&count);
	NameRecord *rec = names_find(recs, count, def->name);
	int64		floor;

	if (rec != NULL && record_same_layout(rec, def))
		return rec->floor;
	if (rec == NULL)
	{
		recs = recs ? repalloc(recs, sizeof(NameRecord) * (count + 1)) :
			palloc(sizeof(NameRecord));
		rec = &recs[count++];
		memset(rec, 0, sizeof(*rec));
		strlcpy(rec->name, def->name, NAMEDATALEN);
		floor = -1;
	}
	else
		floor = floor_for_new_layout(rec, def, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	record_set_layout(rec, def);
	rec->floor = floor;
	names_write(recs, count);
	return floor;
}

/* ---------- entries ---------- */

/* The end (exclusive, Unix ms) of the last unit a time-based entry issued. */
static int64
issued_end_ms(const CosidGenEntry *e)
{
	return e->state.last_unit >= 0 ?
		cosid_unit_start_ms(&e->layout, e->state.last_unit + 1) : 0;
}

/*
 * Free entry i (cosid_gen_hash_lock exclusive held).  A time-based entry stays as a
 * tombstone of its name: what it issued bounds where the name's next entry
 * starts, with no effect on other names.
 */
static void
free_entry(int i)
{
	CosidGenEntry *e = &cosid_gen_entries[i];
	CosidGenKey key;

	SpinLockAcquire(&e->mutex);
	key = e->key;
	e->in_use = false;
	e->tombstone = e->time_based && e->state.last_unit >= 0;
	e->tag++;
	SpinLockRelease(&e->mutex);
	(void) hash_search(gen_hash, &key, HASH_REMOVE, NULL);
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
	SpinLockAcquire(&e->mutex);
	end = issued_end_ms(e);
	e->tombstone = false;
	SpinLockRelease(&e->mutex);
	cur = pg_atomic_read_u64(retired_ms);
	while (cur < (uint64) end &&
		   !pg_atomic_compare_exchange_u64(retired_ms, &cur, (uint64) end))
		;
}

/* The tombstone of a time-based name, or -1 (lock held). */
static int
find_tombstone(const char *name)
{
	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];

		if (e->tombstone && strncmp(e->key.name, name, NAMEDATALEN) == 0)
			return i;
	}
	return -1;
}

/*
 * An entry to use (lock held): one never used, else the oldest tombstone,
 * else the longest idle one.
 */
static int
take_entry(void)
{
	int64		now = (int64) cosid_now_ms();
	int			idle = -1;
	int64		idle_since = PG_INT64_MAX;
	int			tomb = -1;
	int64		tomb_since = PG_INT64_MAX;
	int			time_based = 0;

	for (int i = 0; i < cosid_max_generators; i++)
	{
		CosidGenEntry *e = &cosid_gen_entries[i];
		int64		used;

		SpinLockAcquire(&e->mutex);
		used = e->last_used_ms;
		SpinLockRelease(&e->mutex);
		if (!e->in_use)
		{
			if (!e->tombstone)
				return i;
			if (used < tomb_since)
			{
				tomb_since = used;
				tomb = i;
			}
			continue;
		}
		time_based += e->time_based ? 1 : 0;
		if (used < idle_since)
		{
			idle_since = used;
			idle = i;
		}
	}
	if (tomb < 0 && idle >= 0 && now - idle_since >= IDLE_MS)
	{
		free_entry(idle);
		tomb = idle;
	}
	if (tomb >= 0)
	{
		clear_tombstone(tomb);
		return tomb;
	}
	LWLockRelease(cosid_gen_hash_lock);
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("too many cosid generators in use"),
			 errdetail("All %d entries (cosid.max_generators) hold generators used in the last %d seconds: %d time-based, %d segment.",
					   cosid_max_generators, IDLE_MS / 1000, time_based,
					   cosid_max_generators - time_based),
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
	e->time_based = COSID_TIME_BASED(def->strategy);
	e->layout = def->layout;
	e->uncertainty_bits = def->uncertainty_bits;
	e->seqid = def->seqid;
	e->last_used_ms = now;
	e->seg_next = 1;
	e->seg_end = 0;
	e->seg_period = 0;
	e->nreserve = 0;
	e->fetched_end = PG_INT64_MIN;
	e->fetching = false;
	e->reserve_depth = 1;
	e->issued = e->seq_waits = e->clock_borrows = 0;
	e->clock_waits = e->clock_failures = 0;
	e->segment_fetches = e->segment_waits = 0;
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
		int64		last = cosid_unit_of(&def->layout, Max(now, end));

		if (end > now)
			last--;				/* an exclusive end: its unit is free */
		if (floor >= 0 && def->strategy != COSID_STRATEGY_COSID80)
			last = Max(last, first_unit_above(&def->layout, def->uncertainty_bits, floor) - 1);
		e->state.last_unit = last;
		e->state.seq = cosid_layout_max_seq(&def->layout);
	}
	else
		e->state = (CosidTimeState) COSID_TIME_STATE_INIT;
	SpinLockRelease(&e->mutex);
}

static bool
entry_serves(CosidGenEntry *e, const CosidGenDef *def)
{
	return !COSID_TIME_BASED(def->strategy) ||
		(cosid_layout_same_ids(&e->layout, &def->layout) &&
		 e->uncertainty_bits == def->uncertainty_bits);
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

	make_key(def, &key);
	LWLockAcquire(cosid_gen_hash_lock, LW_SHARED);
	e = find_entry(&key, def, &t, &index);
	LWLockRelease(cosid_gen_hash_lock);
	if (e != NULL)
	{
		*tag = t;
		return e;
	}

	LWLockAcquire(cosid_gen_hash_lock, LW_EXCLUSIVE);
	e = find_entry(&key, def, &t, &index);
	if (e != NULL)
	{
		LWLockRelease(cosid_gen_hash_lock);
		*tag = t;
		return e;
	}
	/* the layout is recorded (and checked) before the first id */
	if (COSID_TIME_BASED(def->strategy))
		floor = name_floor(def);
	if (index >= 0)
		free_entry(index);		/* the name's entry had another layout */
	if (COSID_TIME_BASED(def->strategy))
		tomb = find_tombstone(def->name);
	if (tomb >= 0)
	{
		index = tomb;
		e = &cosid_gen_entries[index];
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
	*tag = t;
	return e;
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
		total += e->issued;
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

/* An entry to free at commit; in TopTransactionContext. */
typedef struct PendingChange
{
	CosidGenKey key;
	SubTransactionId subid;		/* made in this subtransaction */
} PendingChange;

static List *pending = NIL;

void
cosid_gen_release_at_commit(const CosidGenDef *def)
{
	MemoryContext old;
	PendingChange *p;

	if (!cosid_preloaded)
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc(sizeof(PendingChange));
	make_key(def, &p->key);
	p->subid = GetCurrentSubTransactionId();
	pending = lappend(pending, p);
	MemoryContextSwitchTo(old);
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
			CosidGenRef *ref = hash_search(gen_hash, &p->key, HASH_FIND, NULL);

			if (ref != NULL)
				free_entry(ref->index);
		}
		LWLockRelease(cosid_gen_hash_lock);
	}
	/* the list lives in TopTransactionContext, freed with the transaction */
	pending = NIL;
}

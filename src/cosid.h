/*
 * cosid.h - what the PostgreSQL side of cosid shares between its files.
 *
 * Shared memory (created only when cosid is in shared_preload_libraries)
 * holds three things, each with its own rule:
 *
 * 1. gen_ulid_monotonic()'s last ULID (ulid_last), read and written by any
 *    backend only under ulid_lock, a spinlock held for a compare and a
 *    16-byte copy.
 *
 * 2. The slot window (window_start_ms, window_end_ms, slot_state), written
 *    only by the slot worker and read by every backend without a lock (64-bit
 *    atomics).  The worker makes a new end durable before it stores it, so a
 *    backend never issues past a durable end.  At shutdown the worker stores
 *    end 0 (closing the window) before it reads each generator's last unit,
 *    so nothing is issued after the time it records.
 *
 * 3. Per-generator state (CosidGenEntry), in a fixed array of
 *    cosid.max_generators entries found through a hash keyed by CosidGenKey.
 *    gen_hash_lock (exclusive) guards the hash and the assignment of entries:
 *    an entry is given to a generator, or freed, only under it.  Everything
 *    else in an entry is read and written under the entry's own spinlock, for
 *    one short critical section per call (check the tag and the window,
 *    advance the sequence, count); every wait happens after it is released.
 *    An entry's spinlock is initialised once at start-up and the entry never
 *    moves, so a backend may keep a pointer to it; the entry's tag changes
 *    whenever it is freed or given to another generator, and a backend that
 *    finds another tag than the one it attached with looks the generator up
 *    again (genstate.c).
 *
 *    The state of a time-based generator belongs to the server and its name
 *    (not to a database), so copies of a database share it.  A name's layout
 *    is recorded durably in pg_cosid/names before its first id; a name given
 *    another layout must issue above everything the old one could have
 *    issued (genstate.c).  A freed time-based entry stays a tombstone of its
 *    name (the name's next entry starts above it); retired_ms is the end of
 *    the last unit issued by a tombstone whose entry went to another name
 *    (atomic max), below which no new entry starts.
 *
 * config_generation is bumped (atomically) when a transaction that changed
 * the generator catalog commits; backends compare it with the value their
 * cached definitions were read at, so the hot path does no catalog lookup.
 *
 * When cosid is not preloaded, cosid_shared is NULL and everything that needs
 * it raises 55000 with a hint naming shared_preload_libraries.
 */
#ifndef COSID_H
#define COSID_H

#include "postgres.h"

#include "compat.h"

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "pgtime.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"

#include "core/codec.h"
#include "core/timegen.h"
#include "core/ulid.h"

/* ---------- settings (cosid.c) ---------- */

extern int	cosid_machine_bits;
extern char *cosid_slot_setting;
extern char *cosid_namespace;
extern int	cosid_max_generators;
extern char *cosid_debug_now;
extern char *cosid_lease_store;
extern int	cosid_lease_ttl;
extern char *cosid_instance_id;
extern bool cosid_promote_above_replayed;

/* How far ahead of the clock the worker keeps the window end, and when it
 * extends it (ms). */
#define COSID_WINDOW_LEAD_MS	1000
#define COSID_WINDOW_RENEW_MS	700

/*
 * The worker extends the window while ids are being issued (or were in the
 * last COSID_WINDOW_IDLE_MS); an idle server lets it lapse, so it writes no
 * WAL, and the first call after that asks the worker (window_wanted and its
 * latch) and waits a moment for a new end.
 */
#define COSID_WINDOW_IDLE_MS	60000

/* ---------- shared memory ---------- */

typedef enum CosidSlotState
{
	COSID_SLOT_STARTING = 0,	/* no window yet */
	COSID_SLOT_ACTIVE,			/* window open */
	COSID_SLOT_CLOSED,			/* shutting down: window closed for good */
	COSID_SLOT_RECOVERY			/* manual slot, server in recovery: no window
								 * until it ends (promotion) */
} CosidSlotState;

/*
 * Whose state an entry holds.  Time-based generators: the name alone (dbid,
 * seqid and xmin 0), per server.  Segment generators: the database, the
 * backing sequence and the version of the catalog row (its xmin), so a
 * generator dropped and defined again, or altered, gets fresh state and never
 * hands out a number it cached for its previous definition.
 */
typedef struct CosidGenKey
{
	Oid			dbid;
	Oid			seqid;
	TransactionId xmin;
	char		name[NAMEDATALEN];
} CosidGenKey;

typedef struct CosidGenEntry
{
	slock_t		mutex;			/* protects everything below */
	uint64		tag;			/* changes when the entry is freed or reused */
	bool		in_use;
	bool		tombstone;		/* freed, time-based: keeps its name's last
								 * unit until the entry is reused */
	CosidGenKey key;
	bool		time_based;
	CosidLayout layout;			/* time-based: the layout ids are made with */
	int			uncertainty_bits;
	Oid			seqid;			/* segment generators: the backing sequence */
	int64		last_used_ms;	/* for reclaiming idle entries when full */
	CosidTimeState state;		/* time-based generators */

	/*
	 * Segment generators: the current segment [seg_next, seg_end] and the
	 * numbers fetched ahead [pre_start, pre_end] (empty when start > end; one
	 * or more consecutive segments), each with its period (groups).  One
	 * backend at a time fetches (fetching): it clears the flag itself, also
	 * when it fails or exits (generate.c).
	 */
	int64		seg_next;
	int64		seg_end;
	int64		seg_period;
	int64		pre_start;
	int64		pre_end;
	int64		pre_period;
	bool		fetching;
	int			reserve_depth;	/* segments to keep fetched ahead (1..16):
								 * doubled whenever a backend had to wait */

	uint64		issued;
	uint64		seq_waits;
	uint64		clock_borrows;
	uint64		clock_waits;
	uint64		clock_failures;
	uint64		segment_fetches;
	uint64		segment_waits;
} CosidGenEntry;

typedef struct CosidShared
{
	slock_t		ulid_lock;		/* protects ulid_last */
	uint8		ulid_last[ULID_BYTES];	/* last ULID of gen_ulid_monotonic() */

	pg_atomic_uint64 window_start_ms;	/* written by the worker only */
	pg_atomic_uint64 window_end_ms; /* written by the worker only */
	pg_atomic_uint32 slot_state;	/* CosidSlotState, worker only */
	int			slot;			/* set once by the worker before ACTIVE */
	pg_atomic_uint64 window_renewals;	/* durable window extensions */
	pg_atomic_uint32 window_wanted;	/* a backend found the window lapsed */
	Latch	   *worker_latch;	/* the slot worker's, set once it runs */

	pg_atomic_uint64 config_generation;

	LWLock	   *gen_hash_lock;	/* protects the hash and entry assignment */
	pg_atomic_uint64 retired_ms;	/* see 3. above */

	/* lease mode: the store's state for cosid_slot(), worker writes */
	slock_t		lease_lock;		/* protects the four fields below */
	bool		store_connected;
	int64		last_renewal_ms;
	char		last_error[256];
	char		instance[256];
	pg_atomic_uint64 renewal_failures;
} CosidShared;

extern CosidShared *cosid_shared;
extern HTAB *cosid_gen_hash;	/* CosidGenKey -> index into cosid_gen_entries */
extern CosidGenEntry *cosid_gen_entries;	/* cosid.max_generators of them */

typedef struct CosidGenRef
{
	CosidGenKey key;			/* hash key: must be first */
	int			index;
} CosidGenRef;

/*
 * Raise 22023 for a bad key of a generator definition or codec list: the
 * message is "<JSON path>: <what was expected>".
 */
COSID_NORETURN_BEFORE extern void cosid_key_error(const char *path, const char *fmt,...)
			pg_attribute_printf(2, 3) COSID_NORETURN_AFTER;

/* Raise 55000 unless cosid was loaded by shared_preload_libraries. */
extern void cosid_require_preload(const char *what);

/* Fill dst with n CSPRNG bytes from this backend's block (random.c). */
extern void cosid_random_bytes(uint8 *dst, size_t n);

/* Wall-clock Unix milliseconds. */
extern uint64 cosid_now_ms(void);

/* Sleep about one millisecond, interruptibly (never inside a lock). */
extern void cosid_wait_1ms(void);

/* Wait until the wall clock reaches target_ms, interruptibly. */
extern void cosid_wait_until_ms(int64 target_ms);

/* Unix milliseconds <-> timestamptz. */
extern TimestampTz cosid_ms_to_timestamptz(int64 ms);
extern int64 cosid_timestamptz_to_ms(TimestampTz ts);

/* ---------- generators (catalog.c) ---------- */

typedef enum CosidStrategy
{
	COSID_STRATEGY_SNOWFLAKE,
	COSID_STRATEGY_COSID80,
	COSID_STRATEGY_SEGMENT
} CosidStrategy;

#define COSID_TIME_BASED(s) ((s) != COSID_STRATEGY_SEGMENT)

/* A parsed, validated generator definition. */
typedef struct CosidGenDef
{
	char		name[NAMEDATALEN];
	CosidStrategy strategy;
	CosidLayout layout;
	CosidClockPolicy policy;
	bool		int32;			/* "int": ids must fit int4 */
	int			uncertainty_bits;
	Jsonb	   *codec;			/* the "codec" list, NULL when none */
	/* segment generators */
	int64		step;
	int64		start;
	CosidGroup	group;
	char		zone[64];		/* the group's zone */
	char	   *adopt;			/* "adopt-sequence" as written, or NULL */
	Oid			seqid;			/* the backing sequence (catalog) */
	bool		owns_sequence;	/* cosid made it (and drops it) */
	TransactionId row_xmin;		/* the version of its catalog row */
	Oid			owner;			/* its owner: custom codec functions run as it */
} CosidGenDef;

/* ---------- codecs (codec.c) ---------- */

/* An id: a number, or for ids wider than a bigint (cosid80) its parts. */
typedef struct CosidId
{
	bool		wide;
	int64		id;
	int64		time;
	int64		node;
	int64		seq;
} CosidId;

/* A codec list bound to zones, functions and (maybe) a generator. */
typedef struct CosidCodecRt
{
	CosidCodec	codec;
	pg_tz	   *zones[COSID_CODEC_MAX_ITEMS];
	FmgrInfo	encode_fn;		/* custom */
	FmgrInfo	decode_fn;
	int			custom_item;	/* the custom item's index, -1 if none */
	Oid			run_as;			/* custom functions run as this role under
								 * SECURITY_RESTRICTED_OPERATION (a
								 * generator's owner); InvalidOid: the caller */
	bool		has_gen;		/* bound to a generator (else ad hoc) */
	CosidStrategy strategy;
	CosidLayout layout;			/* the generator's, or friendly's ad hoc */
	int			uncertainty_bits;
} CosidCodecRt;

/*
 * How a list's custom functions are found: by the caller's search_path with
 * EXECUTE checked for the caller (a list being defined, or ad hoc), or as
 * stored for a generator (schema-qualified when it was defined), whatever
 * the caller's search_path.
 */
typedef enum CosidBindMode
{
	COSID_BIND_CALLER,			/* ad hoc list: resolved and run as the caller */
	COSID_BIND_DEFINE,			/* cosid_define/alter: resolved as the caller,
								 * run as the owner */
	COSID_BIND_STORED			/* a stored generator: run as its owner */
} CosidBindMode;

/* Parse and bind a list (NULL: none, decimal); errors name the JSON path. */
extern CosidCodecRt *cosid_codec_bind(Jsonb *list, const CosidGenDef *gen,
									  CosidBindMode mode, MemoryContext cxt);

/*
 * A definition's codec list with every custom function written
 * schema-qualified, as bound (COSID_BIND_DEFINE), for the catalog.
 */
extern Jsonb *cosid_codec_qualify(Jsonb *config, const CosidCodecRt *rt);

/*
 * Encode an id; now_ms is the time a "NOW" date prefix shows.  Decode text
 * back (22P02 malformed, 22003 out of range).
 */
extern text *cosid_codec_encode(const CosidCodecRt *rt, const CosidId *id,
								int64 now_ms);
extern void cosid_codec_decode(const CosidCodecRt *rt, text *t, CosidId *id);

/*
 * A generator as the hot path sees it: the definition and its shared entry,
 * cached per call site in fn_extra.
 */
typedef struct CosidGenCache
{
	uint64		shared_generation;
	uint64		local_generation;
	MemoryContext cxt;			/* what the definition owns; reset on re-read */
	CosidGenDef def;
	CosidCodecRt *codec;		/* the generator's codec, bound */
	pg_tz	   *group_zone;		/* segment groups: the zone of their periods */
	CosidGenEntry *entry;		/* NULL when not preloaded */
	uint64		entry_tag;		/* the entry's tag when attached */
	int			name_len;
	char		name[NAMEDATALEN];
} CosidGenCache;

extern uint64 cosid_local_generation;

/*
 * The generator named by the text argument, from the call site's cache when
 * it is current.  need_entry: the caller issues ids (needs shared state).
 */
extern CosidGenCache *cosid_lookup(FunctionCallInfo fcinfo, text *name,
								   bool need_entry);
/* The same, with the hint an unknown name's error gives. */
extern CosidGenCache *cosid_lookup_hinted(FunctionCallInfo fcinfo, text *name,
										  bool need_entry, const char *hint);
/*
 * The same, keeping the pointer in *slot instead of fn_extra.  Resolved
 * generators belong to the backend (one per name), call sites point to them.
 */
extern CosidGenCache *cosid_lookup_in(void **slot, text *name, bool need_entry,
									  const char *hint);

/* ---------- shared generator state (genstate.c) ---------- */

extern Size cosid_genstate_shmem_size(void);
extern void cosid_genstate_shmem_init(void);

/* The generator's shared entry, created on first use; *tag as attached. */
extern CosidGenEntry *cosid_gen_attach(const CosidGenDef *def, uint64 *tag);

/*
 * For cosid_define(): raise 22023 when a time-based definition would issue
 * ids below those its name may already have issued on this server.
 */
extern void cosid_gen_check_define(const CosidGenDef *def);

/*
 * Once this transaction commits: free the entry of a generator (dropped), or
 * move a segment generator's entry to the new version of its row (altered).
 */
extern void cosid_gen_release_at_commit(const CosidGenDef *def);
extern void cosid_gen_rekey_at_commit(const CosidGenDef *def, TransactionId new_xmin);
extern void cosid_gen_at_commit(bool commit);
extern void cosid_gen_at_subxact(bool commit, SubTransactionId sub, SubTransactionId parent);

/* Ids issued by every entry in use (for telling whether the window is used). */
extern uint64 cosid_gen_issued_total(void);

/* Where the next slot window may start: see cosid_close_window(). */
extern int64 cosid_gen_issued_bound_ms(int64 start_ms);

/*
 * Become role for work done on the caller's behalf, the way core runs an
 * index expression or refreshes a materialized view: a restricted security
 * context and search_path = pg_catalog, pg_temp, so nothing the caller
 * defined (functions, operators, temporary relations) can be reached.
 * end_as_role() undoes it; an error undoes it too (transaction abort).
 */
typedef struct CosidAsRole
{
	Oid			save_uid;
	int			save_ctx;
	int			save_nestlevel;
} CosidAsRole;

extern void cosid_begin_as_role(Oid role, CosidAsRole *as);
extern Oid	cosid_rel_owner(Oid relid);

/* Write a file durably: tmp, fsync, atomic rename to path (ERROR on failure). */
extern void cosid_write_durably(const char *path, const char *tmp, const void *data, size_t len);
extern void cosid_end_as_role(CosidAsRole *as);

/* ---------- issuing (generate.c) ---------- */

/* Hooks of the issuing code (statement end); called by _PG_init when preloaded. */
extern void cosid_issue_init(void);

/* ---------- the window in the WAL (wal.c) ---------- */

/* The custom WAL resource manager's id (see README, "Replicas and failover"). */
#define COSID_RMGR_ID	199

extern void cosid_wal_init(void);

/* Write a slot's new window end to the WAL and flush it (not in recovery). */
extern void cosid_wal_log_window(int slot, int64 end_ms);

/*
 * The highest window end replayed from the WAL for a slot of a namespace
 * (slot -1: any slot), 0 if none.
 */
extern int64 cosid_wal_replayed_end(int slot, const char *namespace);

/* ---------- the slot worker (worker.c) ---------- */

extern void cosid_register_worker(void);
extern int	cosid_manual_slot(void);
extern bool cosid_lease_mode(void);
PGDLLEXPORT void cosid_worker_main(Datum arg);

/* shared by both modes of the worker (worker.c) */
extern bool cosid_worker_stopping(void);
extern void cosid_worker_clear_stop_for_exit(void);
extern void cosid_worker_reload(void);
extern void cosid_worker_sleep(int ms);
extern void cosid_open_window(int slot, int64 start_ms, int64 end_ms);
extern void cosid_extend_window(int64 end_ms);
extern void cosid_raise_window_start(int64 start_ms);
extern bool cosid_wait_for_recovery_end(void);
extern bool cosid_window_in_demand(void);
extern void cosid_request_window(void);
extern int64 cosid_close_window(int64 start_ms, bool for_good);

/* lease mode (lease.c) */
extern void cosid_lease_main(void);

#endif							/* COSID_H */

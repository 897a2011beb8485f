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
 * 3. Per-generator state (CosidGenEntry, in a hash keyed by database and
 *    name).  Entries are added under gen_hash_lock (exclusive) and looked up
 *    under it (shared); they are never removed while the server runs, so a
 *    backend may keep a pointer to one.  An entry's fields are read and
 *    written only under its own spinlock, for one short critical section per
 *    id (check the window, advance the sequence, count); every wait happens
 *    after it is released.
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

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "pgtime.h"
#include "port/atomics.h"
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

/* How far ahead of the clock the worker keeps the window end, and when it
 * extends it (ms). */
#define COSID_WINDOW_LEAD_MS	1000
#define COSID_WINDOW_RENEW_MS	700

/* ---------- shared memory ---------- */

typedef enum CosidSlotState
{
	COSID_SLOT_STARTING = 0,	/* no window yet */
	COSID_SLOT_ACTIVE,			/* window open */
	COSID_SLOT_CLOSED			/* shutting down: window closed for good */
} CosidSlotState;

/*
 * A generator's state belongs to its name *and* layout: a generator dropped
 * and defined again with the same layout carries on where it was, one with
 * another layout gets state of its own, so sessions that still see the old
 * definition (an older snapshot) never disturb the new one's sequence.
 */
typedef struct CosidGenKey
{
	Oid			dbid;
	uint32		layout_hash;	/* of the layout's fields */
	char		name[NAMEDATALEN];
} CosidGenKey;

typedef struct CosidGenEntry
{
	CosidGenKey key;			/* hash key: must be first */
	CosidLayout layout;			/* constant once the entry exists (its
								 * threshold is the first definition's) */
	Oid			seqid;			/* segment generators: the backing sequence */
	slock_t		mutex;			/* protects everything below */
	CosidTimeState state;		/* time-based generators */

	/*
	 * Segment generators: the current segment [seg_next, seg_end] and the
	 * numbers fetched ahead [pre_start, pre_end] (empty when start > end; one
	 * or more consecutive segments), each with its period (groups).  One
	 * backend at a time fetches (fetching, fetcher).
	 */
	int64		seg_next;
	int64		seg_end;
	int64		seg_period;
	int64		pre_start;
	int64		pre_end;
	int64		pre_period;
	bool		fetching;
	int			fetcher;		/* pid of the fetching backend */
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

	pg_atomic_uint64 config_generation;

	LWLock	   *gen_hash_lock;	/* protects the hash's structure */

	/* lease mode: the store's state for cosid_slot(), worker writes */
	slock_t		lease_lock;		/* protects the four fields below */
	bool		store_connected;
	int64		last_renewal_ms;
	char		last_error[256];
	char		instance[256];
	pg_atomic_uint64 renewal_failures;
} CosidShared;

extern CosidShared *cosid_shared;
extern HTAB *cosid_gen_hash;

/*
 * Raise 22023 for a bad key of a generator definition or codec list: the
 * message is "<JSON path>: <what was expected>".
 */
extern void cosid_key_error(const char *path, const char *fmt,...)
			pg_attribute_printf(2, 3) pg_attribute_noreturn();

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
	bool		has_gen;		/* bound to a generator (else ad hoc) */
	CosidStrategy strategy;
	CosidLayout layout;			/* the generator's, or friendly's ad hoc */
	int			uncertainty_bits;
} CosidCodecRt;

/* Parse and bind a list (NULL: none, decimal); errors name the JSON path. */
extern CosidCodecRt *cosid_codec_bind(Jsonb *list, const CosidGenDef *gen,
									  MemoryContext cxt);

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
extern int64 cosid_close_window(int64 start_ms, bool for_good);

/* lease mode (lease.c) */
extern void cosid_lease_main(void);

#endif							/* COSID_H */

/*
 * timegen.h - layouts and the time-based generator's state machine (CosId
 * 5.0 "Layout", "TimeBasedGenerator", "Clock regression"), no PostgreSQL.
 *
 * An id is, from the high bits down: time since the epoch in the layout's
 * unit, the node (this server's slot), the sequence.  The caller reads the
 * clock and passes it in, holds whatever lock guards the state, and does any
 * waiting this code asks for after releasing it.
 *
 * Owns: CosidLayout and the presets, packing parts into ids, which ids and
 * times a layout holds, and the generator's state machine.
 * Must not: read a clock, sleep or take a lock (the caller does), or write
 * an id as text (the codec headers do).
 */
#ifndef COSID_CORE_TIMEGEN_H
#define COSID_CORE_TIMEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct CosidLayout
{
	int64_t		epoch_ms;		/* Unix milliseconds of time 0 */
	int64_t		unit_ms;		/* 1 (ms) or 1000 (s) */
	int			time_bits;
	int			node_bits;
	int			seq_bits;
	int64_t		seq_reset_threshold;
} CosidLayout;

typedef enum CosidPreset
{
	COSID_PRESET_SNOWFLAKE_MS,
	COSID_PRESET_SNOWFLAKE_S,
	COSID_PRESET_JS_SAFE_MS,
	COSID_PRESET_JS_SAFE_S,
	COSID_PRESET_COSID_80,
	COSID_PRESET_COUNT
} CosidPreset;

#define COSID_SNOWFLAKE_EPOCH_MS INT64_C(1577203200000)	/* 2019-12-24T16:00Z */

/* The preset's name ("SNOWFLAKE_MS", ...); NULL past the end. */
extern const char *cosid_preset_name(CosidPreset p);

/* Find a preset by name (case-insensitive); false when unknown. */
extern bool cosid_preset_find(const char *name, CosidPreset *p);

/* The preset's layout, threshold at its default. */
extern CosidLayout cosid_preset_layout(CosidPreset p);

/* 2^(seq_bits - 1) - 1: a new unit restarts a sequence that reached it. */
extern int64_t cosid_default_seq_reset_threshold(int seq_bits);

/*
 * Check a layout against the seed's rules; max_total_bits is 63 for ids that
 * must fit a bigint, larger for cosid80.  On failure returns the JSON key at
 * fault and writes what was expected into msg.
 */
extern const char *cosid_layout_check(const CosidLayout *l, int max_total_bits,
									  char *msg, size_t msglen);

static inline int
cosid_layout_total_bits(const CosidLayout *l)
{
	return l->time_bits + l->node_bits + l->seq_bits;
}

static inline int64_t
cosid_layout_max_time(const CosidLayout *l)
{
	return (int64_t) ((UINT64_C(1) << l->time_bits) - 1);
}

static inline int64_t
cosid_layout_max_seq(const CosidLayout *l)
{
	return (int64_t) ((UINT64_C(1) << l->seq_bits) - 1);
}

/*
 * Whether two layouts give ids the same meaning: epoch, unit and bit widths.
 * The reset threshold only shapes which sequence comes next, so a generator
 * may change it and keep its state.
 */
static inline bool
cosid_layout_same_ids(const CosidLayout *a, const CosidLayout *b)
{
	return a->epoch_ms == b->epoch_ms && a->unit_ms == b->unit_ms &&
		a->time_bits == b->time_bits && a->node_bits == b->node_bits &&
		a->seq_bits == b->seq_bits;
}

/* Pack parts into an id of at most 63 bits (no range checks). */
static inline int64_t
cosid_layout_pack(const CosidLayout *l, int64_t time, int64_t node, int64_t seq)
{
	return (int64_t) (((uint64_t) time << (l->node_bits + l->seq_bits)) |
					  ((uint64_t) node << l->seq_bits) | (uint64_t) seq);
}

static inline void
cosid_layout_unpack(const CosidLayout *l, int64_t id, int64_t *time,
					int64_t *node, int64_t *seq)
{
	uint64_t	u = (uint64_t) id;

	*seq = (int64_t) (u & ((UINT64_C(1) << l->seq_bits) - 1));
	*node = (int64_t) ((u >> l->seq_bits) & ((UINT64_C(1) << l->node_bits) - 1));
	*time = (int64_t) (u >> (l->seq_bits + l->node_bits));
}

/* The layout unit a wall-clock time falls in (floor), and its start. */
static inline int64_t
cosid_unit_of(const CosidLayout *l, int64_t now_ms)
{
	int64_t		d = now_ms - l->epoch_ms;

	return d >= 0 ? d / l->unit_ms : -((-d + l->unit_ms - 1) / l->unit_ms);
}

static inline int64_t
cosid_unit_start_ms(const CosidLayout *l, int64_t unit)
{
	return l->epoch_ms + unit * l->unit_ms;
}

/* Pack parts of any layout (up to 127 bits) into the value hi:lo, and back. */
extern void cosid_layout_pack128(const CosidLayout *l, int64_t time,
								 int64_t node, int64_t seq,
								 uint64_t *hi, uint64_t *lo);
extern void cosid_layout_unpack128(const CosidLayout *l, uint64_t hi,
								   uint64_t lo, int64_t *time, int64_t *node,
								   int64_t *seq);

/* ---------- a layout's ids and times ---------- */

/*
 * Whether a bigint is an id of a layout (<= 63 bits) whose ids carry
 * uncertainty_bits random low bits: 0 to 2^(total + uncertainty) - 1.
 */
extern bool cosid_layout_holds_id(const CosidLayout *l, int uncertainty_bits,
								  int64_t id);

/*
 * The Unix milliseconds of a time part (epoch + time * unit), false when
 * the time is negative or the instant is past max_ms (no overflow).
 */
extern bool cosid_layout_time_ms(const CosidLayout *l, int64_t time,
								 int64_t max_ms, int64_t *ms);

/*
 * The largest time part of the layout whose instant is at most max_ms: the
 * layout's max time if it ends before, -1 when even time 0 is later.
 */
extern int64_t cosid_layout_last_time(const CosidLayout *l, int64_t max_ms);

/* A layout's field widths are usable (bit counts 0..63). */
static inline bool
cosid_layout_bits_ok(const CosidLayout *l)
{
	return l != NULL && l->time_bits >= 0 && l->time_bits <= 63 &&
		l->node_bits >= 0 && l->node_bits <= 63 &&
		l->seq_bits >= 0 && l->seq_bits <= 63;
}

/* Clock regression policy: borrow up to, wait up to (ms); FAIL is 0/0. */
typedef struct CosidClockPolicy
{
	int64_t		borrow_ms;
	int64_t		wait_ms;
} CosidClockPolicy;

#define COSID_DEFAULT_BORROW_MS 5
#define COSID_DEFAULT_WAIT_MS	1000

/*
 * A generator's state, shared by every caller.  last_unit is the unit of the
 * last id issued (-1: none yet), seq its sequence.
 */
typedef struct CosidTimeState
{
	int64_t		last_unit;
	int64_t		seq;
} CosidTimeState;

#define COSID_TIME_STATE_INIT {-1, 0}

/*
 * The slot window: a unit may be issued when its start is at or after
 * start_ms and the clock is before end_ms.  Right after a restart start_ms
 * may lie ahead of a correct clock by the window's lead; open_wait_ms is how
 * long a caller may wait for it (at least the clock policy's wait).
 */
typedef struct CosidWindow
{
	int64_t		start_ms;
	int64_t		end_ms;
	int64_t		open_wait_ms;
} CosidWindow;

typedef enum CosidNextResult
{
	COSID_NEXT_OK,				/* *unit and *seq hold the id's parts */
	COSID_NEXT_BORROWED,		/* as OK, on the last unit: the clock is behind it */
	COSID_NEXT_WAIT_SEQUENCE,	/* sequence exhausted: retry at *wait_until_ms */
	COSID_NEXT_WAIT_CLOCK,		/* clock went back within the wait policy */
	COSID_NEXT_WAIT_WINDOW,		/* clock before the window start, within the
								 * wait policy (or window not open yet) */
	COSID_NEXT_CLOCK_BACKWARDS, /* clock went back beyond the policy */
	COSID_NEXT_BEFORE_WINDOW,	/* clock before the window start beyond policy */
	COSID_NEXT_WINDOW_ENDED,	/* now >= window end */
	COSID_NEXT_TIME_OVERFLOW,	/* past the layout's last unit */
	COSID_NEXT_BEFORE_EPOCH		/* clock before the layout's epoch */
} CosidNextResult;

/*
 * One step of the generator: the id for now_ms, or what stops it.  State
 * changes only for OK and BORROWED.  For the WAIT results *wait_until_ms is
 * the wall-clock time to retry at; for CLOCK_BACKWARDS and BEFORE_WINDOW it
 * is how far behind the clock is (ms).
 */
extern CosidNextResult cosid_time_next(const CosidLayout *l,
									   const CosidClockPolicy *policy,
									   const CosidWindow *w,
									   CosidTimeState *st, int64_t now_ms,
									   int64_t *unit, int64_t *seq,
									   int64_t *wait_until_ms);

/*
 * Reserve up to n consecutive ids of one unit (for bulk calls): their
 * sequences are *first_seq, *first_seq + 1, ...  Returns how many (0 when the
 * first step did not give OK or BORROWED, with *res saying why, as for
 * cosid_time_next; n = 0 reserves nothing and gives OK).  It writes nothing
 * per id, so a caller holding a lock writes the ids out after releasing it.
 */
extern size_t cosid_time_next_many(const CosidLayout *l,
								   const CosidClockPolicy *policy,
								   const CosidWindow *w, CosidTimeState *st,
								   int64_t now_ms, size_t n, int64_t *first_seq,
								   int64_t *unit, CosidNextResult *res,
								   int64_t *wait_until_ms);

/*
 * Parse a duration: a whole number of "us", "ms", "s", "m" or "h" ("5ms",
 * "1s"), into milliseconds (us rounded up).  False when malformed or huge.
 */
extern bool cosid_parse_duration_ms(const char *s, int64_t *ms);

/* Unsigned decimal of the 128-bit value hi:lo into buf (>= 40 bytes). */
extern void cosid_u128_decimal(uint64_t hi, uint64_t lo, char *buf);

/* Parse unsigned decimal into hi:lo; false when malformed or over 128 bits. */
extern bool cosid_u128_parse(const char *s, size_t len, uint64_t *hi, uint64_t *lo);

#endif							/* COSID_CORE_TIMEGEN_H */

/*
 * timegen.c - layouts and the time-based generator (no PostgreSQL).
 *
 * Owns: the presets' table, the layout check, 128-bit packing, a layout's
 * ids and times, the generator's steps, durations and 128-bit decimals.
 * Must not: read a clock or wait (the caller passes now and waits), or
 * depend on another file of src/core.
 */
#include "timegen.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct
{
	const char *name;
	CosidLayout layout;
}			presets[COSID_PRESET_COUNT] = {
	[COSID_PRESET_SNOWFLAKE_MS] = {"SNOWFLAKE_MS", {COSID_SNOWFLAKE_EPOCH_MS, 1, 41, 10, 12, 0}},
	[COSID_PRESET_SNOWFLAKE_S] = {"SNOWFLAKE_S", {COSID_SNOWFLAKE_EPOCH_MS, 1000, 31, 10, 22, 0}},
	[COSID_PRESET_JS_SAFE_MS] = {"JS_SAFE_MS", {COSID_SNOWFLAKE_EPOCH_MS, 1, 41, 3, 9, 0}},
	[COSID_PRESET_JS_SAFE_S] = {"JS_SAFE_S", {COSID_SNOWFLAKE_EPOCH_MS, 1000, 31, 3, 19, 0}},
	[COSID_PRESET_COSID_80] = {"COSID_80", {0, 1, 44, 20, 16, 0}},
};

const char *
cosid_preset_name(CosidPreset p)
{
	return (unsigned) p < COSID_PRESET_COUNT ? presets[p].name : NULL;
}

bool
cosid_preset_find(const char *name, CosidPreset *p)
{
	for (int i = 0; i < COSID_PRESET_COUNT; i++)
	{
		if (strcasecmp(name, presets[i].name) == 0)
		{
			*p = (CosidPreset) i;
			return true;
		}
	}
	return false;
}

int64_t
cosid_default_seq_reset_threshold(int seq_bits)
{
	return (int64_t) ((UINT64_C(1) << (seq_bits - 1)) - 1);
}

CosidLayout
cosid_preset_layout(CosidPreset p)
{
	CosidLayout l = presets[p].layout;

	l.seq_reset_threshold = cosid_default_seq_reset_threshold(l.seq_bits);
	return l;
}

const char *
cosid_layout_check(const CosidLayout *l, int max_total_bits, char *msg,
				   size_t msglen)
{
	if (l->unit_ms != 1 && l->unit_ms != 1000)
	{
		snprintf(msg, msglen, "expected \"ms\" or \"s\"");
		return "unit";
	}
	if (l->epoch_ms < 0 || l->epoch_ms > (INT64_C(1) << 47))
	{
		snprintf(msg, msglen, "expected Unix milliseconds from 0 to 2^47 or an ISO 8601 time");
		return "epoch";
	}
	if (l->unit_ms == 1000 && l->epoch_ms % 1000 != 0)
	{
		snprintf(msg, msglen, "a layout in seconds needs an epoch on a whole second");
		return "epoch";
	}
	if (l->time_bits < 1 || l->time_bits > 63)
	{
		snprintf(msg, msglen, "expected an integer from 1 to 63");
		return "time-bits";
	}
	if (l->node_bits < 0 || l->node_bits > 31)
	{
		snprintf(msg, msglen, "expected an integer from 0 to 31");
		return "node-bits";
	}
	if (l->seq_bits < 1 || l->seq_bits > 62)
	{
		snprintf(msg, msglen, "expected an integer from 1 to 62");
		return "seq-bits";
	}
	if (cosid_layout_total_bits(l) > max_total_bits)
	{
		snprintf(msg, msglen,
				 "time-bits + node-bits + seq-bits is %d; at most %d fit this strategy",
				 cosid_layout_total_bits(l), max_total_bits);
		return "layout";
	}
	if (l->seq_reset_threshold < 0 || l->seq_reset_threshold > cosid_layout_max_seq(l))
	{
		snprintf(msg, msglen, "expected an integer from 0 to %lld (the largest sequence)",
				 (long long) cosid_layout_max_seq(l));
		return "seq-reset-threshold";
	}
	return NULL;
}

static void
shl128(uint64_t *hi, uint64_t *lo, int n)
{
	if (n == 0)
		return;
	if (n >= 64)
	{
		*hi = *lo << (n - 64);
		*lo = 0;
	}
	else
	{
		*hi = (*hi << n) | (*lo >> (64 - n));
		*lo <<= n;
	}
}

static void
shr128(uint64_t *hi, uint64_t *lo, int n)
{
	if (n == 0)
		return;
	if (n >= 64)
	{
		*lo = *hi >> (n - 64);
		*hi = 0;
	}
	else
	{
		*lo = (*lo >> n) | (*hi << (64 - n));
		*hi >>= n;
	}
}

void
cosid_layout_pack128(const CosidLayout *l, int64_t time, int64_t node,
					 int64_t seq, uint64_t *hi, uint64_t *lo)
{
	*hi = 0;
	*lo = (uint64_t) time;
	shl128(hi, lo, l->node_bits);
	*lo |= (uint64_t) node;
	shl128(hi, lo, l->seq_bits);
	*lo |= (uint64_t) seq;
}

void
cosid_layout_unpack128(const CosidLayout *l, uint64_t hi, uint64_t lo,
					   int64_t *time, int64_t *node, int64_t *seq)
{
	*seq = (int64_t) (lo & ((UINT64_C(1) << l->seq_bits) - 1));
	shr128(&hi, &lo, l->seq_bits);
	*node = (int64_t) (lo & ((UINT64_C(1) << l->node_bits) - 1));
	shr128(&hi, &lo, l->node_bits);
	*time = (int64_t) (lo & ((UINT64_C(1) << l->time_bits) - 1));
}

/* ---------- a layout's ids and times ---------- */

bool
cosid_layout_holds_id(const CosidLayout *l, int uncertainty_bits, int64_t id)
{
	int			bits = cosid_layout_total_bits(l) + uncertainty_bits;

	if (id < 0)
		return false;
	return bits >= 63 || ((uint64_t) id >> bits) == 0;
}

bool
cosid_layout_time_ms(const CosidLayout *l, int64_t time, int64_t max_ms,
					 int64_t *ms)
{
	if (time < 0 || time > cosid_layout_last_time(l, max_ms))
		return false;
	*ms = l->epoch_ms + time * l->unit_ms;
	return true;
}

int64_t
cosid_layout_last_time(const CosidLayout *l, int64_t max_ms)
{
	int64_t		last;

	if (l->unit_ms <= 0 || max_ms < l->epoch_ms)
		return -1;
	/* epoch_ms >= 0 (the layout check), so the difference cannot overflow */
	last = (max_ms - l->epoch_ms) / l->unit_ms;
	return last < cosid_layout_max_time(l) ? last : cosid_layout_max_time(l);
}

/* The first unit that starts at or after t. */
static int64_t
first_unit_from(const CosidLayout *l, int64_t t)
{
	int64_t		u = cosid_unit_of(l, t);

	if (cosid_unit_start_ms(l, u) < t)
		u++;
	return u;
}

CosidNextResult
cosid_time_next(const CosidLayout *l, const CosidClockPolicy *policy,
				const CosidWindow *w, CosidTimeState *st, int64_t now_ms,
				int64_t *unit, int64_t *seq, int64_t *wait_until_ms)
{
	int64_t		max_seq = cosid_layout_max_seq(l);
	int64_t		now_unit;
	int64_t		next;

	if (now_ms >= w->end_ms)
		return COSID_NEXT_WINDOW_ENDED;

	now_unit = cosid_unit_of(l, now_ms);

	/* The clock went back behind the last unit issued. */
	if (st->last_unit >= 0 && now_unit < st->last_unit)
	{
		int64_t		behind = cosid_unit_start_ms(l, st->last_unit) - now_ms;

		if (behind <= policy->borrow_ms)
		{
			next = (st->seq + 1) & max_seq;
			if (next != 0)
			{
				st->seq = next;
				*unit = st->last_unit;
				*seq = next;
				return COSID_NEXT_BORROWED;
			}
			/* the borrowed unit is used up: wait for the one after it */
			*wait_until_ms = cosid_unit_start_ms(l, st->last_unit + 1);
			return COSID_NEXT_WAIT_CLOCK;
		}
		if (behind <= policy->wait_ms)
		{
			*wait_until_ms = cosid_unit_start_ms(l, st->last_unit);
			return COSID_NEXT_WAIT_CLOCK;
		}
		*wait_until_ms = behind;
		return COSID_NEXT_CLOCK_BACKWARDS;
	}

	if (now_unit < 0)
		return COSID_NEXT_BEFORE_EPOCH;
	if (now_unit > cosid_layout_max_time(l))
		return COSID_NEXT_TIME_OVERFLOW;

	/* Only units that start inside the window: none of them can be the
	 * previous holder's. */
	if (cosid_unit_start_ms(l, now_unit) < w->start_ms)
	{
		int64_t		open = cosid_unit_start_ms(l, first_unit_from(l, w->start_ms));
		int64_t		limit = w->open_wait_ms > policy->wait_ms ?
			w->open_wait_ms : policy->wait_ms;

		if (open - now_ms <= limit)
		{
			*wait_until_ms = open;
			return COSID_NEXT_WAIT_WINDOW;
		}
		*wait_until_ms = open - now_ms;
		return COSID_NEXT_BEFORE_WINDOW;
	}

	if (now_unit > st->last_unit)
	{
		/* a new unit: the sequence carries on unless it reached the threshold */
		if (st->seq >= l->seq_reset_threshold)
			st->seq = 0;
		next = (st->seq + 1) & max_seq;
		st->last_unit = now_unit;
	}
	else
	{
		next = (st->seq + 1) & max_seq;
		if (next == 0)
		{
			*wait_until_ms = cosid_unit_start_ms(l, now_unit + 1);
			return COSID_NEXT_WAIT_SEQUENCE;
		}
	}
	st->seq = next;
	*unit = st->last_unit;
	*seq = next;
	return COSID_NEXT_OK;
}

size_t
cosid_time_next_many(const CosidLayout *l, const CosidClockPolicy *policy,
					 const CosidWindow *w, CosidTimeState *st, int64_t now_ms,
					 size_t n, int64_t *first_seq, int64_t *unit,
					 CosidNextResult *res, int64_t *wait_until_ms)
{
	int64_t		max_seq = cosid_layout_max_seq(l);
	uint64_t	room;
	size_t		got;

	if (n == 0)
	{
		*res = COSID_NEXT_OK;
		return 0;
	}
	*res = cosid_time_next(l, policy, w, st, now_ms, unit, first_seq, wait_until_ms);
	if (*res != COSID_NEXT_OK && *res != COSID_NEXT_BORROWED)
		return 0;
	/* the rest of the unit, as long as the sequence lasts */
	room = (uint64_t) (max_seq - *first_seq);
	got = (uint64_t) (n - 1) < room ? n : (size_t) room + 1;
	st->seq = *first_seq + (int64_t) (got - 1);
	return got;
}

bool
cosid_parse_duration_ms(const char *s, int64_t *ms)
{
	int64_t		v = 0;
	const char *p = s;

	if (!isdigit((unsigned char) *p))
		return false;
	while (isdigit((unsigned char) *p))
	{
		if (v > INT64_C(100000000000))	/* far beyond any sensible duration */
			return false;
		v = v * 10 + (*p++ - '0');
	}
	if (strcasecmp(p, "ms") == 0)
		*ms = v;
	else if (strcasecmp(p, "s") == 0)
		*ms = v * 1000;
	else if (strcasecmp(p, "m") == 0)
		*ms = v * 60000;
	else if (strcasecmp(p, "h") == 0)
		*ms = v * 3600000;
	else if (strcasecmp(p, "us") == 0)
		*ms = (v + 999) / 1000;
	else
		return false;
	return true;
}

void
cosid_u128_decimal(uint64_t hi, uint64_t lo, char *buf)
{
	uint32_t	limb[4] = {(uint32_t) (hi >> 32), (uint32_t) hi,
	(uint32_t) (lo >> 32), (uint32_t) lo};
	char		tmp[48];
	int			n = 0;

	do
	{
		uint64_t	rem = 0;
		bool		zero = true;

		for (int i = 0; i < 4; i++)
		{
			uint64_t	cur = (rem << 32) | limb[i];

			limb[i] = (uint32_t) (cur / 10);
			rem = cur % 10;
			if (limb[i])
				zero = false;
		}
		tmp[n++] = (char) ('0' + rem);
		if (zero)
			break;
	} while (1);
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

bool
cosid_u128_parse(const char *s, size_t len, uint64_t *hi, uint64_t *lo)
{
	uint64_t	h = 0;
	uint64_t	l = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
	{
		uint64_t	d;
		uint64_t	l_hi;
		uint64_t	l_lo;
		uint64_t	carry;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (uint64_t) (s[i] - '0');
		/* (h:l) * 10 + d, refusing to pass 2^128 - 1 */
		if (h > UINT64_MAX / 10)
			return false;
		l_hi = (l >> 32) * 10;
		l_lo = (l & 0xFFFFFFFFu) * 10 + d;
		carry = (l_hi >> 32) + (((l_hi & 0xFFFFFFFFu) + (l_lo >> 32)) >> 32);
		l = (l_hi << 32) + l_lo;
		if (h * 10 > UINT64_MAX - carry)
			return false;
		h = h * 10 + carry;
	}
	*hi = h;
	*lo = l;
	return true;
}

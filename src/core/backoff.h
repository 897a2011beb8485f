/*
 * backoff.h - how cosid waits after a failure of something outside the
 * process (the lease store), and how often it says so in the log.
 *
 * One scheme for every caller: the slot worker's lease source and the
 * segment fetches of every backend.  After the n-th consecutive failure the
 * next try waits between half and all of COSID_BACKOFF_MIN_MS << (n - 1),
 * at most COSID_BACKOFF_MAX_MS, at a random point the caller draws (1.4:
 * "equal jitter"; before, the whole delay): when a lease store fails over,
 * a fleet of servers lose it at the same moment, and without jitter their
 * retries would arrive at it together, every time; a success starts over.  A failure is worth a log
 * line only when the count of consecutive failures is a power of two, and
 * that line tells how many were not reported since the last one: a store
 * that fails for an hour gives about a dozen lines, never one per try.
 *
 * Pure (no PostgreSQL headers): the clock is a parameter, and it must be a
 * monotonic one (the glue passes cosid_monotonic_ms()): on the wall clock,
 * a clock set back 10 s would put the next try 10 s late, and one set
 * forward would skip the wait.  Callers that share one CosidBackoff between
 * processes hold their own lock around it (CLOCK_MONOTONIC is the same in
 * every process).
 *
 * Owns: the delays and the reporting rule.  Must not: sleep, log or read the
 * clock itself.
 */
#ifndef COSID_CORE_BACKOFF_H
#define COSID_CORE_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#define COSID_BACKOFF_MIN_MS	100
#define COSID_BACKOFF_MAX_MS	2000

typedef struct CosidBackoff
{
	uint32_t	failures;		/* consecutive failures; 0: the last try
								 * worked (or none was made) */
	uint32_t	unreported;		/* failures since the last reported one */
	int64_t		retry_at_ms;	/* no try before this while failing (the
								 * caller's monotonic clock) */
} CosidBackoff;

/* What one failure means for the caller. */
typedef struct CosidBackoffStep
{
	int32_t		delay_ms;		/* wait this long before the next try */
	bool		report;			/* log this failure */
	uint32_t	repeats;		/* with report: failures not reported
								 * since the last line */
} CosidBackoffStep;

/* A zeroed CosidBackoff is a fresh one; this makes one so. */
extern void cosid_backoff_init(CosidBackoff *b);

/*
 * Record a failure at now_ms.  random is a uniformly drawn 32-bit number
 * (the glue: pg_prng_uint32): the wait is cosid_backoff_jitter of the
 * failure's delay, UINT32_MAX giving all of it.
 */
extern CosidBackoffStep cosid_backoff_failed(CosidBackoff *b, int64_t now_ms,
											 uint32_t random);

/*
 * Record a success: the number of consecutive failures it ends (0 when the
 * last try had worked too), so the caller can say the trouble is over.
 */
extern uint32_t cosid_backoff_succeeded(CosidBackoff *b);

/* Whether a try is due at now_ms (no back-off is running). */
extern bool cosid_backoff_may_try(const CosidBackoff *b, int64_t now_ms);

/* The longest wait after the n-th consecutive failure (n >= 1). */
extern int32_t cosid_backoff_delay_ms(uint32_t failures);

/*
 * A wait of delay_ms jittered by random: delay_ms - delay_ms / 2 plus
 * random's share of delay_ms / 2, so between half and all of delay_ms
 * (random 0: the half; UINT32_MAX: all of it).
 */
extern int32_t cosid_backoff_jitter(int32_t delay_ms, uint32_t random);

#endif							/* COSID_CORE_BACKOFF_H */

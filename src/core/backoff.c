/*
 * backoff.c - the back-off and log-rate rule of backoff.h.
 *
 * Owns: arithmetic only.  Must not: include PostgreSQL headers.
 */
#include "core/backoff.h"

#include <string.h>

void
cosid_backoff_init(CosidBackoff *b)
{
	memset(b, 0, sizeof(*b));
}

int32_t
cosid_backoff_delay_ms(uint32_t failures)
{
	uint32_t	shift = failures > 0 ? failures - 1 : 0;
	int64_t		delay;

	/* COSID_BACKOFF_MIN_MS << 5 is past the maximum already */
	if (shift > 5)
		shift = 5;
	delay = (int64_t) COSID_BACKOFF_MIN_MS << shift;
	return (int32_t) (delay < COSID_BACKOFF_MAX_MS ? delay : COSID_BACKOFF_MAX_MS);
}

int32_t
cosid_backoff_jitter(int32_t delay_ms, uint32_t random)
{
	int64_t		half = delay_ms / 2;

	if (delay_ms <= 0)
		return 0;
	/* at most half * UINT32_MAX: no overflow in 64 bits */
	return (int32_t) (delay_ms - half + (half * (int64_t) random) / UINT32_MAX);
}

CosidBackoffStep
cosid_backoff_failed(CosidBackoff *b, int64_t now_ms, uint32_t random)
{
	CosidBackoffStep step;

	if (b->failures < UINT32_MAX)
		b->failures++;
	step.delay_ms = cosid_backoff_jitter(cosid_backoff_delay_ms(b->failures), random);
	b->retry_at_ms = now_ms + step.delay_ms;
	/* a power of two: 1, 2, 4, 8, ... */
	step.report = (b->failures & (b->failures - 1)) == 0;
	if (step.report)
	{
		step.repeats = b->unreported;
		b->unreported = 0;
	}
	else
	{
		step.repeats = 0;
		b->unreported++;
	}
	return step;
}

uint32_t
cosid_backoff_succeeded(CosidBackoff *b)
{
	uint32_t	ended = b->failures;

	b->failures = 0;
	b->unreported = 0;
	b->retry_at_ms = 0;
	return ended;
}

bool
cosid_backoff_may_try(const CosidBackoff *b, int64_t now_ms)
{
	return b->failures == 0 || now_ms >= b->retry_at_ms;
}

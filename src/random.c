/*
 * random.c - CSPRNG bytes drawn in blocks, per backend.
 *
 * pg_strong_random() costs about a microsecond a call whatever the size, so
 * drawing 10 bytes per ULID would make it nearly all of gen_ulid()'s cost.
 * Each backend instead keeps a block it refills from pg_strong_random() and
 * hands out bytes from it, each byte once.  The block is tagged with the pid
 * that filled it: a process forked after filling it (none is today, but a
 * preloaded library cannot know) discards it rather than repeat its bytes.
 *
 * Owns: the block.  Must not: be used for anything but values handed out
 * once (a byte is zeroed as it is handed out).
 */
#include "random.h"

#include "miscadmin.h"

#define RANDOM_BLOCK 4096

static uint8 random_block[RANDOM_BLOCK];
static size_t random_pos = RANDOM_BLOCK;
static int	random_owner = 0;

void
cosid_random_bytes(uint8 *dst, size_t n)
{
	Assert(n <= RANDOM_BLOCK);

	if (unlikely(random_owner != MyProcPid || RANDOM_BLOCK - random_pos < n))
	{
		if (!pg_strong_random(random_block, RANDOM_BLOCK))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		random_pos = 0;
		random_owner = MyProcPid;
	}
	memcpy(dst, random_block + random_pos, n);
	/* Nothing of a handed-out value stays behind in this process. */
	memset(random_block + random_pos, 0, n);
	random_pos += n;
}

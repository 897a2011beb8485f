/*
 * segment.h - issuing the numbers of segment generators (segment.c).
 * Its top comment in segment.c says what the module owns and must not do.
 */
#ifndef COSID_SEGMENT_H
#define COSID_SEGMENT_H

#include "gencache.h"

/* cosid.debug_now: for tests, the time periods are taken from. */
extern char *cosid_debug_now;

extern void cosid_segment_define_settings(void);

/* In the postmaster (_PG_init): what backends inherit rather than load (the UTC zone). */
extern void cosid_segment_preload(void);

/* The lease store's state as segment fetches saw it (shared memory). */
extern Size cosid_segment_shmem_size(void);
extern void cosid_segment_shmem_init(void);

/*
 * Hand out up to n (>= 1) numbers of a segment generator into out; returns
 * how many (at least one).
 */
extern size_t cosid_segment_issue(CosidGenCache *c, size_t n, int64 *out);

#endif							/* COSID_SEGMENT_H */

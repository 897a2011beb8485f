/*
 * random.h - CSPRNG bytes drawn in blocks, per backend (random.c): the
 * only source of randomness of ULIDs and uncertainty bits.
 * Its top comment in random.c says what the module owns and must not do.
 */
#ifndef COSID_RANDOM_H
#define COSID_RANDOM_H

#include "util.h"

/* Fill dst with n (at most 4096) CSPRNG bytes from this backend's block. */
extern void cosid_random_bytes(uint8 *dst, size_t n);

#endif							/* COSID_RANDOM_H */

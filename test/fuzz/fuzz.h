/*
 * fuzz.h - what every libFuzzer target of test/fuzz/ shares: the entry point
 * libFuzzer calls, and CHECK, an invariant that aborts (a finding) when it
 * does not hold, in any build.
 */
#ifndef COSID_FUZZ_H
#define COSID_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", \
					__FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

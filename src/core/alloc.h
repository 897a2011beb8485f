/*
 * alloc.h - where src/core gets memory for what it returns: the caller's
 * allocator (no PostgreSQL).
 *
 * Owns: the CosidAlloc type, shared by the JSON parser and the codec-list
 * parser.
 * Must not: allocate or free anything itself, or include another header of
 * src/core (the headers that take an allocator include this one).
 */
#ifndef COSID_CORE_ALLOC_H
#define COSID_CORE_ALLOC_H

#include <stddef.h>

/* Where the parser gets memory: the caller frees it all at once. */
typedef void *(*CosidAlloc) (void *ctx, size_t size);

#endif							/* COSID_CORE_ALLOC_H */

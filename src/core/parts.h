/*
 * parts.h - parts-radix text without PostgreSQL: an id of a layout (cosid80
 * above all, whose ids are wider than a bigint) as its time, node and
 * sequence parts, each in a fixed number of radix digits.
 *
 * Owns: the parts' order, widths and messages.
 * Must not: pack or unpack ids (the layout does, timegen.h), or know codec
 * lists.
 */
#ifndef COSID_CORE_PARTS_H
#define COSID_CORE_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "radix.h"
#include "timegen.h"

/* ---------- parts-radix text (cosid80) ---------- */

/*
 * Each part (time, node, seq) at the fixed width of its bit count in the
 * radix, concatenated, so text sorts like the id: base 62 for COSID_80 is
 * 8 + 4 + 3 = 15 characters.
 */
/* Encode returns the length, or -1 when a part is negative or over its bits. */
extern int	cosid_parts_radix_length(const CosidLayout *l, int radix);
extern int	cosid_parts_radix_encode(const CosidLayout *l, int radix,
									 int64_t time, int64_t node, int64_t seq,
									 char *buf);
extern CosidDecodeResult cosid_parts_radix_decode(const CosidLayout *l, int radix,
												  const char *s, size_t len,
												  int64_t *time, int64_t *node,
												  int64_t *seq, char *msg,
												  size_t msglen);

#endif							/* COSID_CORE_PARTS_H */

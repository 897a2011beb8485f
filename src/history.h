/*
 * history.h - the history of a generator name in a database,
 * cosid.generator_history (history.c).
 *
 * Owns: reading and writing the table's rows (SPI connected, as the
 * catalog's owner).  Must not: decide what a define or a restore does with
 * them (ddl.c, restore.c).
 */
#ifndef COSID_HISTORY_H
#define COSID_HISTORY_H

#include "gendef.h"

/*
 * The highest number segment generators of name handed out before they
 * were dropped, and whether some took numbers from the lease store; false
 * when there is no history.
 */
extern bool cosid_history_last(const char *name, int64 *last, bool *from_store);

/* Record (or raise) the name's last number and from_store; forget: delete its history. */
extern void cosid_history_write(const char *name, int64 last, bool from_store, bool forget);

/*
 * The identity, strategy, layout and uncertainty bits a time-based
 * generator of name had when it was dropped, in *old; false when there are
 * none (or the row is damaged: with a warning).
 */
extern bool cosid_history_identity(const char *name, CosidGenDef *old);

/* Keep a dropped time-based generator's identity and layout in its name's history. */
extern void cosid_history_write_identity(const CosidGenDef *def);

/*
 * What is wrong with a stored time-based layout (a row not written by
 * cosid_define): the key at fault, with msg filled in, or NULL.
 */
extern const char *cosid_stored_layout_problem(const CosidGenDef *def, char *msg, size_t msglen);

#endif							/* COSID_HISTORY_H */

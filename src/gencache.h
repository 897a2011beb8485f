/*
 * gencache.h - a generator as the hot path sees it, found by name
 * (gencache.c).
 */
#ifndef COSID_GENCACHE_H
#define COSID_GENCACHE_H

#include "codecbind.h"
#include "genstate.h"

#include "fmgr.h"
#include "port/atomics.h"
#include "pgtime.h"

/*
 * A generator as the hot path sees it: the definition, its bound codec and
 * its shared entry.  One per name and backend; call sites point to it.
 */
typedef struct CosidGenCache
{
	/* its name's generations (catalog.h), and what they were when it was read */
	pg_atomic_uint64 *shared_slot;
	uint64	   *local_slot;
	uint64		shared_generation;
	uint64		local_generation;
	MemoryContext cxt;			/* what the definition owns; reset on re-read */
	CosidGenDef def;
	CosidCodecRt *codec;		/* the generator's codec, bound */
	pg_tz	   *group_zone;		/* segment groups: the zone of their periods */
	CosidGenEntry *entry;		/* NULL when not preloaded */
	uint64		entry_tag;		/* the entry's tag when attached */
	int			name_len;
	char		name[NAMEDATALEN];
} CosidGenCache;

/*
 * The generator named by the text argument, from the call site's pointer
 * (fn_extra) when it is current.  need_entry: the caller issues ids (needs
 * shared state).
 */
extern CosidGenCache *cosid_lookup(FunctionCallInfo fcinfo, text *name,
								   bool need_entry);
/* The same, with the hint an unknown name's error gives. */
extern CosidGenCache *cosid_lookup_hinted(FunctionCallInfo fcinfo, text *name,
										  bool need_entry, const char *hint);
/* The same, keeping the pointer in *slot instead of fn_extra. */
extern CosidGenCache *cosid_lookup_in(void **slot, text *name, bool need_entry,
									  const char *hint);

/* The call site found its entry freed or reused: attach it again. */
extern void cosid_gencache_reattach(CosidGenCache *c);

/* The same, reading the generator's definition again first (segment.c). */
extern void cosid_gencache_refresh(CosidGenCache *c);

#endif							/* COSID_GENCACHE_H */

/*
 * citus.h - generators as objects of a Citus cluster (citus.c).
 *
 * Owns: whether this database is a Citus coordinator or worker (Citus's
 * catalogs, read through C APIs: cosid never links against Citus), the
 * mirror of the coordinator's generators (cosid.citus_generator, a Citus
 * reference table) and reading a worker's copy of it.  Must not: call Citus
 * through anything but its SQL functions and catalogs, or build SQL text.
 */
#ifndef COSID_CITUS_H
#define COSID_CITUS_H

#include "gendef.h"

#include "utils/jsonb.h"

typedef enum CosidCitusRole
{
	COSID_CITUS_NONE,			/* no Citus in this database */
	COSID_CITUS_COORDINATOR,	/* Citus, group 0 */
	COSID_CITUS_WORKER			/* Citus, another group: a worker */
} CosidCitusRole;

/* What this database is in a Citus cluster (in a transaction). */
extern CosidCitusRole cosid_citus_role(void);

/*
 * 0A000 on a Citus worker: what (cosid_define, ...) belongs on the
 * coordinator; name: the generator it would change, NULL for all of them.
 */
extern void cosid_citus_refuse_on_worker(const char *what, const char *name);

/*
 * On a coordinator whose generators reach the workers: write the name's
 * row of cosid.generator (or its absence) into the reference table, in this
 * transaction (SPI connected).  Makes the table a reference table first when
 * it is not one yet and the cluster has a worker.
 */
extern void cosid_citus_mirror(const char *name);

/*
 * On a worker: the generator's row as the coordinator wrote it, read from
 * this node's placement of the reference table; false when it has none.
 */
extern bool cosid_citus_read(const char *name, bool fresh, Jsonb **config,
							 CosidGenDef *stored);

/* The hint of "generator ... does not exist" on a worker. */
extern const char *const cosid_citus_worker_hint;

/*
 * 55000 on a worker asked to issue from a segment generator whose numbers
 * come from a sequence of the coordinator (stored->coordinator_only).
 */
COSID_NORETURN_BEFORE extern void cosid_citus_refuse_issue(const char *name) COSID_NORETURN_AFTER;

#endif

/*
 * worker.h - the slot worker (worker.c), registered at start-up.
 * Its top comment in worker.c says what the module owns and must not do.
 */
#ifndef COSID_WORKER_H
#define COSID_WORKER_H

#include "util.h"

#include "fmgr.h"

extern void cosid_register_worker(void);
PGDLLEXPORT void cosid_worker_main(Datum arg);

#endif							/* COSID_WORKER_H */

/*
 * issue.h - issuing ids (issue.c): what other modules may call.
 * Its top comment in issue.c says what the module owns and must not do.
 */
#ifndef COSID_ISSUE_H
#define COSID_ISSUE_H

#include "gencache.h"

/* Hooks of the issuing code (statement end); called by _PG_init when preloaded. */
extern void cosid_issue_init(void);

/* 42809 for a generator whose ids do not fit a bigint, hinting instead. */
extern void cosid_check_not_cosid80(CosidGenCache *c, const char *instead);

#endif							/* COSID_ISSUE_H */

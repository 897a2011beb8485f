/*
 * grouped.h - periodic segment numbers without PostgreSQL: a number that
 * is its period's date digits followed by a value, for the "grouped" codec
 * and for periodic segment generators.
 *
 * Owns: CosidGroup, each group's scale, period digits and pattern.
 * Must not: issue numbers (the segment generator does, on the PostgreSQL
 * side), write text (the caller formats the period with datetext.h's
 * patterns), or know codec lists.
 */
#ifndef COSID_CORE_GROUPED_H
#define COSID_CORE_GROUPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datetext.h"

/* ---------- periodic segment numbers (grouped) ---------- */

/*
 * A periodic segment number is its period's date digits followed by a
 * fixed number of value digits: day yyyyMMdd * 10^10 + value, month
 * yyyyMM * 10^12 + value, year yyyy * 10^14 + value.  The decimal text shows
 * the period, numbers increase across periods, and each value restarts at 1.
 */
typedef enum CosidGroup
{
	COSID_GROUP_NONE = 0,
	COSID_GROUP_DAY,
	COSID_GROUP_MONTH,
	COSID_GROUP_YEAR
} CosidGroup;

/* 10^(value digits) of a group: 10^10, 10^12, 10^14. */
extern int64_t cosid_group_scale(CosidGroup g);

/* The period digits (yyyyMMdd, yyyyMM, yyyy) of a date. */
extern int64_t cosid_group_period(CosidGroup g, const CosidTm *tm);

/*
 * Whether period digits (yyyyMMdd, yyyyMM, yyyy) are a date of the group:
 * years 1..9999 and a day the month has (no 31 February).  msg says what is
 * wrong: "day 31 is out of range for February 2026 (1 to 28)".
 */
extern bool cosid_group_period_valid(CosidGroup g, int64_t period, char *msg,
									 size_t msglen);

/* Split a number into period digits and value; false when the period part
 * is not a valid date of the group (cosid_group_period_valid). */
extern bool cosid_group_split(CosidGroup g, int64_t id, int64_t *period,
							  int64_t *value);

/* The pattern the period is written with: "yyyyMMdd", "yyyyMM", "yyyy". */
extern const char *cosid_group_pattern(CosidGroup g);

#endif							/* COSID_CORE_GROUPED_H */

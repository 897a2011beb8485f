/*
 * grouped.c - periodic segment numbers (no PostgreSQL): the arithmetic of
 * period digits and values, and the check that a period is a date.
 *
 * Owns: the groups' scales (10^10, 10^12, 10^14) and patterns.
 * Must not: judge dates itself (datetext.c's cosid_date_valid does, with
 * its messages), or know codec lists.
 */
#include "grouped.h"
#include "text.h"

#include <limits.h>

/* ---------- periodic segment numbers ---------- */

int64_t
cosid_group_scale(CosidGroup g)
{
	switch (g)
	{
		case COSID_GROUP_DAY:
			return INT64_C(10000000000);
		case COSID_GROUP_MONTH:
			return INT64_C(1000000000000);
		case COSID_GROUP_YEAR:
			return INT64_C(100000000000000);
		case COSID_GROUP_NONE:
			break;
	}
	return 0;
}

int64_t
cosid_group_period(CosidGroup g, const CosidTm *tm)
{
	switch (g)
	{
		case COSID_GROUP_DAY:
			return (int64_t) tm->year * 10000 + tm->month * 100 + tm->day;
		case COSID_GROUP_MONTH:
			return (int64_t) tm->year * 100 + tm->month;
		case COSID_GROUP_YEAR:
			return tm->year;
		case COSID_GROUP_NONE:
			break;
	}
	return 0;
}

bool
cosid_group_period_valid(CosidGroup g, int64_t period, char *msg, size_t msglen)
{
	int64_t		y;
	int64_t		m = 1;
	int64_t		d = 1;

	switch (g)
	{
		case COSID_GROUP_DAY:
			y = period / 10000;
			m = period / 100 % 100;
			d = period % 100;
			break;
		case COSID_GROUP_MONTH:
			y = period / 100;
			m = period % 100;
			break;
		case COSID_GROUP_YEAR:
			y = period;
			break;
		default:
			cosid_set_msg(msg, msglen, "no period");
			return false;
	}
	if (period < 0)
	{
		cosid_set_msg(msg, msglen, "the period is negative");
		return false;
	}
	/* an int for the message; anything past 9999 is refused anyway */
	if (y > INT_MAX)
		y = INT_MAX;
	return cosid_date_valid((int) y, (int) m, (int) d, msg, msglen);
}

bool
cosid_group_split(CosidGroup g, int64_t id, int64_t *period, int64_t *value)
{
	int64_t		scale = cosid_group_scale(g);

	if (scale == 0 || id < 0 || !cosid_group_period_valid(g, id / scale, NULL, 0))
		return false;
	*period = id / scale;
	*value = id % scale;
	return true;
}

const char *
cosid_group_pattern(CosidGroup g)
{
	switch (g)
	{
		case COSID_GROUP_DAY:
			return "yyyyMMdd";
		case COSID_GROUP_MONTH:
			return "yyyyMM";
		case COSID_GROUP_YEAR:
			return "yyyy";
		case COSID_GROUP_NONE:
			break;
	}
	return NULL;
}

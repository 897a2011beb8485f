/*
 * fuzz_codec.c - libFuzzer harness for the codecs of src/core (radix.c,
 * datetext.c, parts.c, grouped.c, codec.c) and json.c.
 *
 * Every decoder sees the input, and each result is checked against an
 * oracle written here independently of the code under test:
 *   - radix: SYNTAX exactly when the characters or the length are wrong,
 *     RANGE exactly when the value (compared as digit strings, which sort
 *     like numbers in this alphabet) is over max; OK text re-encodes to
 *     itself (padded) or to itself without leading zeros (unpadded);
 *   - friendly, parts-radix, date patterns: OK text formats back to itself
 *     (friendly unpadded: node and sequence without leading zeros);
 *   - group split: the parts rebuild the id and the period is a date;
 *   - values derived from the input survive encode then decode, and padded
 *     text sorts like the numbers;
 *   - the codec-list parser: any input, a tracking allocator (everything is
 *     freed after each input), an allocator that fails after k calls, and
 *     the invariants of a parsed list.
 * Messages and paths are always NUL-terminated inside their buffers.
 *
 * Every invariant violation calls abort(), which libFuzzer reports as a
 * crash with the input that caused it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "core/json.h"
#include "fuzz.h"

#define FILL		0xA5
#define MSGBUF		300
#define MAX_BLOCKS	65536

static const char alphabet[] =
"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* ---------- helpers ---------- */

static int
oracle_digit(unsigned char c, int radix)
{
	const char *p;

	if (c == '\0')
		return -1;
	p = memchr(alphabet, c, 62);
	if (p == NULL || p - alphabet >= radix)
		return -1;
	return (int) (p - alphabet);
}

/* The message sizes tried, picked by a byte of the input. */
static size_t
pick_msglen(uint8_t b)
{
	static const size_t sizes[] = {0, 1, 2, 9, 40, MSGBUF};

	return sizes[b % 6];
}

/* msg must hold a NUL within msglen and, unless tiny, say something. */
static void
check_msg(const char *msg, size_t msglen)
{
	if (msglen == 0)
		return;
	CHECK(memchr(msg, '\0', msglen) != NULL);
	if (msglen > 1)
		CHECK(msg[0] != '\0');
}

static int
sign_of(int64_t v)
{
	return (v > 0) - (v < 0);
}

/* A 64-bit value from the input at off (zero padded). */
static uint64_t
load64(const uint8_t *data, size_t size, size_t off)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < 8; i++)
		v = (v << 8) | (off + i < size ? data[off + i] : 0);
	return v;
}

/* Encode u in a radix with no width limit, unpadded (oracle side). */
static size_t
oracle_encode(uint64_t u, int radix, char *buf)
{
	char		tmp[70];
	size_t		n = 0;
	size_t		len = 0;

	do
	{
		tmp[n++] = alphabet[u % (uint64_t) radix];
		u /= (uint64_t) radix;
	} while (u > 0);
	while (n > 0)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

/* ---------- radix ---------- */

static void
check_radix_decode(int radix, int width, bool pad, const uint8_t *s,
				   size_t len, uint64_t max, uint8_t mb)
{
	CosidRadix	r = {radix, width, pad};
	size_t		msglen = pick_msglen(mb);
	char		msg[MSGBUF];
	char		maxtext[70];
	char		back[80];
	int64_t		v = -12345;
	bool		syntax_ok = len > 0;
	size_t		lead = 0;
	const char *stripped;
	size_t		slen;
	size_t		mlen;
	bool		over;
	uint64_t	effmax = max > (uint64_t) INT64_MAX ? (uint64_t) INT64_MAX : max;
	CosidDecodeResult res;

	for (size_t i = 0; i < len && syntax_ok; i++)
		if (oracle_digit(s[i], radix) < 0)
			syntax_ok = false;
	if (pad ? len != (size_t) width : len > (size_t) width)
		syntax_ok = false;

	memset(msg, FILL, sizeof(msg));
	res = cosid_radix_decode(&r, (const char *) s, len, max, &v,
							 msglen ? msg : NULL, msglen);
	if (!syntax_ok)
	{
		CHECK(res == COSID_DECODE_SYNTAX);
		CHECK(v == -12345);
		check_msg(msg, msglen);
		return;
	}

	while (lead + 1 < len && s[lead] == '0')
		lead++;
	stripped = (const char *) s + lead;
	slen = len - lead;
	mlen = oracle_encode(effmax, radix, maxtext);
	over = slen > mlen || (slen == mlen && memcmp(stripped, maxtext, slen) > 0);
	if (over)
	{
		CHECK(res == COSID_DECODE_RANGE);
		CHECK(v == -12345);
		check_msg(msg, msglen);
		return;
	}
	CHECK(res == COSID_DECODE_OK);
	CHECK(v >= 0 && (uint64_t) v <= effmax);
	/* Re-encode: the canonical text. */
	CHECK(cosid_radix_encode(&r, v, back) == (int) (pad ? len : slen));
	if (pad)
		CHECK(memcmp(back, s, len) == 0);
	else
		CHECK(memcmp(back, stripped, slen) == 0);
}

static void
check_radix_round_trip(int radix, int width, uint64_t a, uint64_t b)
{
	CosidRadix	rp = {radix, width, true};
	CosidRadix	ru = {radix, width, false};
	char		ta[80];
	char		tb[80];
	char		tu[80];
	char		o[70];
	int64_t		va = (int64_t) (a >> 1);
	int64_t		vb = (int64_t) (b >> 1);
	int64_t		back = -1;
	size_t		need = oracle_encode((uint64_t) va, radix, o);
	int			la = cosid_radix_encode(&rp, va, ta);
	int			lb;
	int			lu = cosid_radix_encode(&ru, va, tu);

	if (need > (size_t) width)
	{
		CHECK(la == -1);
		CHECK(lu == -1);
	}
	else
	{
		CHECK(la == width);
		CHECK(lu == (int) need);
		CHECK(strcmp(tu, o) == 0);
		CHECK(memcmp(ta + (width - lu), tu, (size_t) lu + 1) == 0);
		CHECK(cosid_radix_decode(&rp, ta, (size_t) la, (uint64_t) INT64_MAX,
								 &back, NULL, 0) == COSID_DECODE_OK);
		CHECK(back == va);
		CHECK(cosid_radix_decode(&ru, tu, (size_t) lu, (uint64_t) INT64_MAX,
								 &back, NULL, 0) == COSID_DECODE_OK);
		CHECK(back == va);
		lb = cosid_radix_encode(&rp, vb, tb);
		if (lb == width)
		{
			int			c = memcmp(ta, tb, (size_t) width);

			CHECK(sign_of(c) == sign_of((va > vb) - (va < vb)));
		}
	}
	CHECK(cosid_radix_encode(&rp, -1 - va, ta) == -1);
}

static void
fuzz_radix(const uint8_t *data, size_t size)
{
	static const struct
	{
		int			radix;
		int			width;
		bool		pad;
	}			configs[] = {
		{62, 11, false}, {62, 11, true}, {36, 13, false}, {36, 13, true},
		{10, 19, false}, {16, 16, true}, {2, 63, false}, {2, 64, false},
		{62, 4, false}, {62, 4, true}, {58, 64, true}, {37, 1, false},
	};
	uint8_t		mb = size > 0 ? data[size - 1] : 0;
	uint64_t	a = load64(data, size, 0);
	uint64_t	b = load64(data, size, 8);

	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
	{
		check_radix_decode(configs[i].radix, configs[i].width, configs[i].pad,
						   data, size, (uint64_t) INT64_MAX, mb);
		check_radix_round_trip(configs[i].radix, configs[i].width, a, b);
		/* Shorter values too: shift by an input-chosen amount. */
		check_radix_round_trip(configs[i].radix, configs[i].width,
							   a >> (b % 64), b >> (a % 64));
	}
	/* Settings and max from the first bytes, text after them. */
	if (size >= 3)
	{
		int			radix = 2 + data[0] % 61;
		int			width = 1 + data[1] % 64;
		bool		pad = (data[0] & 0x80) != 0;
		uint64_t	max = (data[2] & 1) ? UINT64_MAX : (a >> (data[2] % 64));

		check_radix_decode(radix, width, pad, data + 3, size - 3, max, mb);
		check_radix_round_trip(radix, width, b, a);
	}
}

/* ---------- date patterns ---------- */

static bool
tm_valid(const CosidTm *tm)
{
	return tm->year >= 1 && tm->year <= 9999 && tm->month >= 1 &&
		tm->month <= 12 && tm->day >= 1 && tm->day <= 31 && tm->hour >= 0 &&
		tm->hour <= 23 && tm->minute >= 0 && tm->minute <= 59 &&
		tm->second >= 0 && tm->second <= 59 && tm->millis >= 0 &&
		tm->millis <= 999;
}

static CosidTm
derive_tm(const uint8_t *data, size_t size, size_t off)
{
	uint64_t	x = load64(data, size, off);
	CosidTm		tm;

	tm.year = 2000 + (int) (x % 100);
	x /= 100;
	tm.month = 1 + (int) (x % 12);
	x /= 12;
	tm.day = 1 + (int) (x % 31);
	x /= 31;
	tm.hour = (int) (x % 24);
	x /= 24;
	tm.minute = (int) (x % 60);
	x /= 60;
	tm.second = (int) (x % 60);
	x /= 60;
	tm.millis = (int) (x % 1000);
	return tm;
}

static void
check_date(const char *pattern, const uint8_t *s, size_t len, const CosidTm *seed,
		   uint8_t mb)
{
	char		msg[MSGBUF];
	char		buf[80];
	size_t		msglen = pick_msglen(mb);
	int			plen = cosid_date_pattern_check(pattern, NULL, 0);
	CosidTm		tm = *seed;
	CosidTm		back;
	CosidDecodeResult res;

	memset(msg, FILL, sizeof(msg));
	res = cosid_date_parse(pattern, (const char *) s, len, &tm,
						   msglen ? msg : NULL, msglen);
	if (plen < 0 || len != (size_t) plen)
		CHECK(res == COSID_DECODE_SYNTAX);
	if (res != COSID_DECODE_OK)
	{
		CHECK(res == COSID_DECODE_SYNTAX);
		CHECK(memcmp(&tm, seed, sizeof(tm)) == 0);
		check_msg(msg, msglen);
	}
	else
	{
		/* Canonical: the fields format back to the text. */
		CHECK(plen >= 0 && (size_t) plen == strlen(pattern));
		CHECK(tm_valid(&tm));
		CHECK(cosid_date_format(pattern, &tm, buf) == plen);
		CHECK(memcmp(buf, s, len) == 0);
	}

	/* A valid time formats and parses back. */
	if (plen >= 0 && plen < 64)
	{
		CHECK(cosid_date_format(pattern, seed, buf) == plen);
		CHECK(buf[plen] == '\0');
		back = *seed;
		CHECK(cosid_date_parse(pattern, buf, (size_t) plen, &back, NULL, 0) ==
			  COSID_DECODE_OK);
		CHECK(memcmp(&back, seed, sizeof(back)) == 0);
	}
}

static void
fuzz_dates(const uint8_t *data, size_t size)
{
	static const char *const patterns[] = {
		"yyyyMMdd", "yyMMdd", "yyyy-MM-dd HH:mm:ss.SSS", "HHmmss", "ddMMyyyy",
		"yyyyMMddHHmmssSSS", "'yy'", "SSS",
	};
	CosidTm		seed = derive_tm(data, size, 0);
	uint8_t		mb = size > 0 ? data[0] : 0;
	const uint8_t *nl;
	char		pattern[72];
	char		msg[MSGBUF];
	int			plen;

	CHECK(tm_valid(&seed));
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		check_date(patterns[i], data, size, &seed, mb);

	/* "pattern\ntext": the pattern from the input. */
	nl = memchr(data, '\n', size);
	if (nl != NULL && (size_t) (nl - data) < sizeof(pattern))
	{
		size_t		n = (size_t) (nl - data);

		memcpy(pattern, data, n);
		pattern[n] = '\0';
		memset(msg, FILL, sizeof(msg));
		plen = cosid_date_pattern_check(pattern, msg, sizeof(msg));
		if (plen >= 0)
			CHECK((size_t) plen == strlen(pattern));
		else
			check_msg(msg, sizeof(msg));
		check_date(pattern, nl + 1, size - n - 1, &seed, mb);
	}
}

/* ---------- friendly ---------- */

/* Strip leading zeros of node and sequence: what an unpadded format writes. */
static size_t
friendly_canonical(const uint8_t *s, size_t len, size_t tlen, char *out)
{
	size_t		n = 0;
	size_t		i = 0;

	memcpy(out, s, tlen + 1);
	n = tlen + 1;
	i = tlen + 1;
	for (int part = 0; part < 2; part++)
	{
		size_t		start = i;
		size_t		end = i;

		while (end < len && s[end] != '-')
			end++;
		while (start + 1 < end && s[start] == '0')
			start++;
		memcpy(out + n, s + start, end - start);
		n += end - start;
		if (part == 0)
			out[n++] = '-';
		i = end + 1;
	}
	return n;
}

static void
check_friendly(const CosidLayout *l, bool pad, const uint8_t *s, size_t len,
			   uint8_t mb)
{
	char		msg[MSGBUF];
	char		buf[64];
	char		canon[128];
	size_t		msglen = pick_msglen(mb);
	size_t		tlen = l->unit_ms == 1000 ? 14 : 17;
	CosidTm		tm = {1, 2, 3, 4, 5, 6, 7};
	int64_t		node = -12345;
	int64_t		seq = -12345;
	CosidDecodeResult res;
	int			n;

	memset(msg, FILL, sizeof(msg));
	res = cosid_friendly_parse(l, pad, (const char *) s, len, &tm, &node, &seq,
							   msglen ? msg : NULL, msglen);
	if (res != COSID_DECODE_OK)
	{
		CHECK(res == COSID_DECODE_SYNTAX || res == COSID_DECODE_RANGE);
		CHECK(node == -12345 && seq == -12345 && tm.year == 1);
		check_msg(msg, msglen);
		return;
	}
	CHECK(len < sizeof(canon));
	CHECK(tm_valid(&tm));
	if (tlen == 14)
		CHECK(tm.millis == 0);
	CHECK(node >= 0 && (uint64_t) node <= (UINT64_C(1) << l->node_bits) - 1);
	CHECK(seq >= 0 && (uint64_t) seq <= (UINT64_C(1) << l->seq_bits) - 1);
	n = cosid_friendly_format(l, pad, &tm, node, seq, buf);
	CHECK(n > 0 && (size_t) n < sizeof(buf) && buf[n] == '\0');
	if (pad)
		CHECK((size_t) n == len && memcmp(buf, s, len) == 0);
	else
	{
		size_t		c = friendly_canonical(s, len, tlen, canon);

		CHECK((size_t) n == c && memcmp(buf, canon, c) == 0);
	}
}

static void
check_friendly_round_trip(const CosidLayout *l, bool pad, const CosidTm *seed,
						  uint64_t x)
{
	CosidTm		tm = *seed;
	CosidTm		back;
	int64_t		node = (int64_t) (x & ((UINT64_C(1) << l->node_bits) - 1));
	int64_t		seq = (int64_t) ((x >> 20) & ((UINT64_C(1) << l->seq_bits) - 1));
	int64_t		n2;
	int64_t		s2;
	char		buf[64];
	int			n;

	if (l->unit_ms == 1000)
		tm.millis = 0;
	n = cosid_friendly_format(l, pad, &tm, node, seq, buf);
	CHECK(n > 0 && (size_t) n == strlen(buf));
	CHECK(cosid_friendly_parse(l, pad, buf, (size_t) n, &back, &n2, &s2, NULL, 0)
		  == COSID_DECODE_OK);
	CHECK(memcmp(&back, &tm, sizeof(tm)) == 0);
	CHECK(n2 == node && s2 == seq);
}

static void
fuzz_friendly(const uint8_t *data, size_t size)
{
	CosidLayout layouts[5];
	CosidTm		seed = derive_tm(data, size, 1);
	uint64_t	x = load64(data, size, 9);
	uint8_t		mb = size > 0 ? data[size / 2] : 0;

	layouts[0] = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	layouts[1] = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_S);
	layouts[2] = cosid_preset_layout(COSID_PRESET_JS_SAFE_MS);
	layouts[3] = cosid_preset_layout(COSID_PRESET_COSID_80);
	layouts[4] = layouts[0];
	layouts[4].node_bits = 0;
	layouts[4].seq_bits = 62;
	layouts[4].time_bits = 1;
	for (int i = 0; i < 5; i++)
	{
		for (int pad = 0; pad < 2; pad++)
		{
			check_friendly(&layouts[i], pad, data, size, mb);
			check_friendly_round_trip(&layouts[i], pad, &seed, x);
		}
	}
}

/* ---------- parts-radix ---------- */

static void
check_parts(const CosidLayout *l, int radix, const uint8_t *s, size_t len,
			uint8_t mb)
{
	char		msg[MSGBUF];
	char		buf[200];
	size_t		msglen = pick_msglen(mb);
	int			total = cosid_parts_radix_length(l, radix);
	int64_t		t = -12345;
	int64_t		n = -12345;
	int64_t		q = -12345;
	CosidDecodeResult res;

	CHECK(total > 0 && total < (int) sizeof(buf));
	memset(msg, FILL, sizeof(msg));
	res = cosid_parts_radix_decode(l, radix, (const char *) s, len, &t, &n, &q,
								   msglen ? msg : NULL, msglen);
	if (len != (size_t) total)
		CHECK(res == COSID_DECODE_SYNTAX);
	if (res != COSID_DECODE_OK)
	{
		CHECK(res == COSID_DECODE_SYNTAX || res == COSID_DECODE_RANGE);
		CHECK(t == -12345 && n == -12345 && q == -12345);
		check_msg(msg, msglen);
		if (res == COSID_DECODE_RANGE)
			for (size_t i = 0; i < len; i++)
				CHECK(oracle_digit(s[i], radix) >= 0);
		return;
	}
	CHECK(cosid_parts_radix_encode(l, radix, t, n, q, buf) == total);
	CHECK(memcmp(buf, s, len) == 0);
}

static void
check_parts_round_trip(const CosidLayout *l, int radix, uint64_t a, uint64_t b)
{
	uint64_t	tm = (UINT64_C(1) << l->time_bits) - 1;
	uint64_t	nm = (UINT64_C(1) << l->node_bits) - 1;
	uint64_t	sm = (UINT64_C(1) << l->seq_bits) - 1;
	int64_t		t1 = (int64_t) (a & tm);
	int64_t		n1 = (int64_t) ((a >> 44) & nm);
	int64_t		s1 = (int64_t) (b & sm);
	int64_t		t2 = (b & 0x100) ? t1 : (int64_t) ((b >> 9) & tm);
	int64_t		n2 = (b & 0x200) ? n1 : (int64_t) ((a >> 7) & nm);
	int64_t		s2 = (int64_t) ((b >> 30) & sm);
	int64_t		bt;
	int64_t		bn;
	int64_t		bs;
	char		x[200];
	char		y[200];
	int			len = cosid_parts_radix_length(l, radix);
	int			c;
	int			want;

	CHECK(cosid_parts_radix_encode(l, radix, t1, n1, s1, x) == len);
	CHECK(cosid_parts_radix_encode(l, radix, t2, n2, s2, y) == len);
	CHECK(cosid_parts_radix_decode(l, radix, x, (size_t) len, &bt, &bn, &bs,
								   NULL, 0) == COSID_DECODE_OK);
	CHECK(bt == t1 && bn == n1 && bs == s1);
	c = memcmp(x, y, (size_t) len);
	want = t1 != t2 ? (t1 > t2 ? 1 : -1) : n1 != n2 ? (n1 > n2 ? 1 : -1) :
		s1 != s2 ? (s1 > s2 ? 1 : -1) : 0;
	CHECK(sign_of(c) == want);
	/* Out-of-range parts are refused (time_bits < 63 here). */
	CHECK(cosid_parts_radix_encode(l, radix, (int64_t) tm + 1, 0, 0, x) == -1);
	CHECK(cosid_parts_radix_encode(l, radix, 0, (int64_t) nm + 1, 0, x) == -1);
	CHECK(cosid_parts_radix_encode(l, radix, 0, 0, -1 - s1, x) == -1);
}

static void
fuzz_parts(const uint8_t *data, size_t size)
{
	static const int radixes[] = {62, 36, 10, 2};
	CosidLayout c80 = cosid_preset_layout(COSID_PRESET_COSID_80);
	CosidLayout ms = cosid_preset_layout(COSID_PRESET_SNOWFLAKE_MS);
	uint64_t	a = load64(data, size, 2);
	uint64_t	b = load64(data, size, 10);
	uint8_t		mb = size > 1 ? data[1] : 0;

	for (int i = 0; i < 4; i++)
	{
		check_parts(&c80, radixes[i], data, size, mb);
		check_parts_round_trip(&c80, radixes[i], a, b);
	}
	check_parts(&ms, 62, data, size, mb);
	check_parts_round_trip(&ms, 62, a, b);
}

/* ---------- groups ---------- */

static void
fuzz_groups(const uint8_t *data, size_t size)
{
	static const CosidGroup groups[] = {COSID_GROUP_DAY, COSID_GROUP_MONTH,
	COSID_GROUP_YEAR};
	int64_t		ids[3];

	ids[0] = (int64_t) load64(data, size, 0);
	ids[1] = (int64_t) (load64(data, size, 0) >> 1);
	/* A decimal id read from the text, as a grouped decode would. */
	ids[2] = 0;
	for (size_t i = 0; i < size && i < 18 && data[i] >= '0' && data[i] <= '9'; i++)
		ids[2] = ids[2] * 10 + (data[i] - '0');

	for (int g = 0; g < 3; g++)
	{
		for (int k = 0; k < 3; k++)
		{
			int64_t		id = ids[k];
			int64_t		scale = cosid_group_scale(groups[g]);
			int64_t		p = -12345;
			int64_t		v = -12345;
			int64_t		q = id >= 0 ? id / scale : -1;
			int			y;
			int			m = 1;
			int			d = 1;
			bool		valid;
			CosidTm		tm = {1, 1, 1, 0, 0, 0, 0};

			if (groups[g] == COSID_GROUP_DAY)
			{
				y = (int) (q / 10000);
				m = (int) (q / 100 % 100);
				d = (int) (q % 100);
			}
			else if (groups[g] == COSID_GROUP_MONTH)
			{
				y = (int) (q / 100);
				m = (int) (q % 100);
			}
			else
				y = (int) q;
			valid = id >= 0 && q <= 99999999 && y >= 1 && y <= 9999 &&
				m >= 1 && m <= 12 && d >= 1 && d <= 31;
			/* no 31 April, 30 February, 29 February of a common year */
			if (valid && (d > 30 && (m == 4 || m == 6 || m == 9 || m == 11)))
				valid = false;
			if (valid && m == 2 &&
				d > ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28))
				valid = false;
			CHECK(cosid_group_split(groups[g], id, &p, &v) == valid);
			if (!valid)
			{
				CHECK(p == -12345 && v == -12345);
				continue;
			}
			CHECK(p == q && v >= 0 && v < scale);
			CHECK(p * scale + v == id);
			tm.year = y;
			tm.month = m;
			tm.day = d;
			CHECK(cosid_group_period(groups[g], &tm) == p);
			CHECK(strlen(cosid_group_pattern(groups[g])) ==
				  (size_t) (groups[g] == COSID_GROUP_DAY ? 8 :
							groups[g] == COSID_GROUP_MONTH ? 6 : 4));
		}
	}
}

/* ---------- codec lists and JSON ---------- */

typedef struct Tracker
{
	void	   *blocks[MAX_BLOCKS];
	size_t		n;
	long		fail_after;		/* -1: never */
	long		calls;
} Tracker;

static Tracker tracker;

static void *
track_alloc(void *ctx, size_t size)
{
	Tracker    *t = ctx;
	void	   *p;

	t->calls++;
	if (t->fail_after >= 0 && t->calls > t->fail_after)
		return NULL;
	if (t->n >= MAX_BLOCKS)
		return NULL;
	p = malloc(size == 0 ? 1 : size);
	CHECK(p != NULL);
	/* Garbage, so code that trusts fresh memory to be zero is caught. */
	memset(p, FILL, size);
	t->blocks[t->n++] = p;
	return p;
}

static void
track_reset(Tracker *t, long fail_after)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->blocks[i]);
	t->n = 0;
	t->calls = 0;
	t->fail_after = fail_after;
}

static bool
zone_ok(const char *z)
{
	size_t		n;

	if (z == NULL)
		return true;
	n = strlen(z);
	if (n < 1 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char) z[i] <= 0x20 || (unsigned char) z[i] >= 0x7F)
			return false;
	return true;
}

static bool
radix_ok(const CosidRadix *r)
{
	return r->radix >= 2 && r->radix <= 62 && r->width >= 1 && r->width <= 64;
}

static void
check_codec(const CosidCodec *c)
{
	CHECK(c->nitems >= 0 && c->nitems <= COSID_CODEC_MAX_ITEMS);
	for (int i = 0; i < c->nitems; i++)
	{
		const CosidCodecItem *it = &c->items[i];
		char		msg[MSGBUF];

		CHECK(cosid_codec_kind_name(it->kind) != NULL);
		if (i > 0)
			CHECK(it->kind >= COSID_CODEC_PREFIX);
		CHECK(zone_ok(it->zone));
		CHECK(it->kind == COSID_CODEC_GROUPED ?
			  it->group != COSID_GROUP_NONE : it->group == COSID_GROUP_NONE);
		switch (it->kind)
		{
			case COSID_CODEC_RADIX:
			case COSID_CODEC_PARTS_RADIX:
				CHECK(radix_ok(&it->radix));
				CHECK(it->zone == NULL);
				break;
			case COSID_CODEC_FRIENDLY:
			case COSID_CODEC_PARTS_FRIENDLY:
				if (it->has_layout)
					CHECK(cosid_preset_name(it->layout) != NULL);
				CHECK(it->kind == COSID_CODEC_FRIENDLY || !it->has_layout);
				break;
			case COSID_CODEC_CUSTOM:
				CHECK(it->encode_fn != NULL && it->decode_fn != NULL);
				CHECK(strlen(it->encode_fn) >= 1 && strlen(it->encode_fn) <= 200);
				CHECK(strlen(it->decode_fn) >= 1 && strlen(it->decode_fn) <= 200);
				break;
			case COSID_CODEC_GROUPED:
				CHECK(it->delimiter != NULL && strlen(it->delimiter) <= 64);
				CHECK(!it->value_is_radix || radix_ok(&it->radix));
				CHECK(cosid_group_scale(it->group) > 0);
				break;
			case COSID_CODEC_PREFIX:
			case COSID_CODEC_SUFFIX:
				CHECK(it->text != NULL && strlen(it->text) <= 64);
				break;
			case COSID_CODEC_DATE_PREFIX:
				CHECK(it->pattern != NULL && strlen(it->pattern) <= 32);
				CHECK(cosid_date_pattern_check(it->pattern, msg, sizeof(msg)) ==
					  it->pattern_len);
				CHECK(it->pattern_len == (int) strlen(it->pattern));
				CHECK(it->delimiter != NULL && strlen(it->delimiter) <= 64);
				CHECK(!it->has_source || it->source == COSID_SOURCE_ID_TIME ||
					  it->source == COSID_SOURCE_NOW);
				break;
		}
	}
}

/* Walk a JSON tree: counts match the lists, strings are what they claim. */
static void
check_json_tree(const CosidJsonValue *v, int depth, size_t size)
{
	int			n = 0;

	CHECK(depth <= COSID_JSON_MAX_DEPTH);
	CHECK(v->offset < size);
	switch (v->type)
	{
		case COSID_JSON_STRING:
			CHECK(v->str != NULL && strlen(v->str) == v->str_len);
			break;
		case COSID_JSON_NUMBER:
			CHECK(!v->int_fits || v->is_integer);
			break;
		case COSID_JSON_ARRAY:
		case COSID_JSON_OBJECT:
			for (const CosidJsonValue *e = v->first; e != NULL; e = e->next)
			{
				if (v->type == COSID_JSON_OBJECT)
				{
					CHECK(e->key != NULL && strlen(e->key) == e->key_len);
					/* No key twice. */
					for (const CosidJsonValue *f = v->first; f != e; f = f->next)
						CHECK(f->key_len != e->key_len ||
							  memcmp(f->key, e->key, e->key_len) != 0);
				}
				check_json_tree(e, depth + 1, size);
				n++;
			}
			CHECK(n == v->count);
			break;
		default:
			break;
	}
}

static void
fuzz_codec_list(const uint8_t *data, size_t size)
{
	static CosidCodec codec;
	char		path[MSGBUF];
	char		msg[MSGBUF];
	size_t		pathlen = size > 0 ? pick_msglen(data[0]) : MSGBUF;
	size_t		msglen = size > 1 ? pick_msglen(data[1]) : MSGBUF;
	CosidJsonValue *root;
	bool		json_ok;
	bool		json_array;
	bool		ok;
	long		calls;

	/* The JSON parser on its own. */
	track_reset(&tracker, -1);
	memset(path, FILL, sizeof(path));
	memset(msg, FILL, sizeof(msg));
	root = cosid_json_parse((const char *) data, size, track_alloc, &tracker,
							"j", path, sizeof(path), msg, sizeof(msg));
	json_ok = root != NULL;
	json_array = json_ok && root->type == COSID_JSON_ARRAY;
	if (json_ok)
		check_json_tree(root, 0, size);
	else
	{
		CHECK(memchr(path, '\0', sizeof(path)) != NULL);
		CHECK(memchr(msg, '\0', sizeof(msg)) != NULL);
		CHECK(path[0] == 'j');
		CHECK(msg[0] != '\0');
	}

	/* The codec parser, full buffers. */
	track_reset(&tracker, -1);
	memset(path, FILL, sizeof(path));
	memset(msg, FILL, sizeof(msg));
	ok = cosid_codec_parse((const char *) data, size, "codec", track_alloc,
						   &tracker, &codec, path, sizeof(path), msg,
						   sizeof(msg));
	calls = tracker.calls;
	CHECK(!ok || json_array);
	if (ok)
		check_codec(&codec);
	else
	{
		CHECK(memchr(path, '\0', sizeof(path)) != NULL);
		CHECK(memchr(msg, '\0', sizeof(msg)) != NULL);
		CHECK(strncmp(path, "codec", 5) == 0);
		CHECK(msg[0] != '\0');
		/* Syntax errors are exactly the JSON parser's. */
		CHECK(!json_ok == (strncmp(msg, "invalid JSON", 12) == 0 ||
								 strncmp(msg, "duplicate key", 13) == 0));
	}

	/* Small buffers and no buffers: same answer, terminated strings. */
	track_reset(&tracker, -1);
	memset(path, FILL, sizeof(path));
	memset(msg, FILL, sizeof(msg));
	CHECK(cosid_codec_parse((const char *) data, size, "codec", track_alloc,
							&tracker, &codec, pathlen ? path : NULL, pathlen,
							msglen ? msg : NULL, msglen) == ok);
	if (pathlen > 0)
		CHECK(memchr(path, '\0', pathlen) != NULL);
	if (msglen > 0)
		CHECK(memchr(msg, '\0', msglen) != NULL);

	/* Running out of memory part way: a clean failure, never a crash. */
	if (calls > 0 && size > 2)
	{
		long		k = (long) (data[2] % (unsigned long) calls);

		track_reset(&tracker, k);
		memset(msg, FILL, sizeof(msg));
		CHECK(!cosid_codec_parse((const char *) data, size, "codec",
								 track_alloc, &tracker, &codec, path,
								 sizeof(path), msg, sizeof(msg)));
		CHECK(strcmp(msg, "out of memory") == 0);
	}
	track_reset(&tracker, -1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_radix(data, size);
	fuzz_dates(data, size);
	fuzz_friendly(data, size);
	fuzz_parts(data, size);
	fuzz_groups(data, size);
	fuzz_codec_list(data, size);
	return 0;
}

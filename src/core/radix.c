/*
 * radix.c - radix text (no PostgreSQL): the digits of a number in a base
 * from 2 to 62, written and read fast: tables of digit pairs, radix-62 text
 * written by chunks at places its length gives (no loop), the common
 * radixes (62, 36, 10) inlined with a constant radix so that every division
 * is a multiplication, and a one-pass scan that checks and sums digits.
 * The canonical forms and the order of a decoder's checks are in radix.h.
 *
 * Owns: the alphabet and its tables, the digit writers, counters and scans,
 * cosid_radix_encode/decode, and the digit helpers of radix.h's last
 * section.
 * Must not: know layouts, dates or codec lists; the digit code stays in
 * this one file, so that the constant radixes keep being inlined.
 */
#include "radix.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

static const char radix_alphabet[] =
"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/*
 * Two digits at a time: pairsN[v] is v (< N*N) as two base-N digits.  Rows
 * are spelled with macros: PAIR_ROWn(c) is c followed by each of the first
 * n digits.
 */
#define PAIR(a, b) {a, b}
#define PAIR_ROW10(c) \
	PAIR(c, '0'), PAIR(c, '1'), PAIR(c, '2'), PAIR(c, '3'), PAIR(c, '4'), \
	PAIR(c, '5'), PAIR(c, '6'), PAIR(c, '7'), PAIR(c, '8'), PAIR(c, '9')
#define PAIR_ROW36(c) PAIR_ROW10(c), \
	PAIR(c, 'A'), PAIR(c, 'B'), PAIR(c, 'C'), PAIR(c, 'D'), PAIR(c, 'E'), \
	PAIR(c, 'F'), PAIR(c, 'G'), PAIR(c, 'H'), PAIR(c, 'I'), PAIR(c, 'J'), \
	PAIR(c, 'K'), PAIR(c, 'L'), PAIR(c, 'M'), PAIR(c, 'N'), PAIR(c, 'O'), \
	PAIR(c, 'P'), PAIR(c, 'Q'), PAIR(c, 'R'), PAIR(c, 'S'), PAIR(c, 'T'), \
	PAIR(c, 'U'), PAIR(c, 'V'), PAIR(c, 'W'), PAIR(c, 'X'), PAIR(c, 'Y'), \
	PAIR(c, 'Z')
#define PAIR_ROW62(c) PAIR_ROW36(c), \
	PAIR(c, 'a'), PAIR(c, 'b'), PAIR(c, 'c'), PAIR(c, 'd'), PAIR(c, 'e'), \
	PAIR(c, 'f'), PAIR(c, 'g'), PAIR(c, 'h'), PAIR(c, 'i'), PAIR(c, 'j'), \
	PAIR(c, 'k'), PAIR(c, 'l'), PAIR(c, 'm'), PAIR(c, 'n'), PAIR(c, 'o'), \
	PAIR(c, 'p'), PAIR(c, 'q'), PAIR(c, 'r'), PAIR(c, 's'), PAIR(c, 't'), \
	PAIR(c, 'u'), PAIR(c, 'v'), PAIR(c, 'w'), PAIR(c, 'x'), PAIR(c, 'y'), \
	PAIR(c, 'z')

static const char pairs10[10 * 10][2] = {
	PAIR_ROW10('0'), PAIR_ROW10('1'), PAIR_ROW10('2'), PAIR_ROW10('3'),
	PAIR_ROW10('4'), PAIR_ROW10('5'), PAIR_ROW10('6'), PAIR_ROW10('7'),
	PAIR_ROW10('8'), PAIR_ROW10('9')
};

static const char pairs36[36 * 36][2] = {
	PAIR_ROW36('0'), PAIR_ROW36('1'), PAIR_ROW36('2'), PAIR_ROW36('3'),
	PAIR_ROW36('4'), PAIR_ROW36('5'), PAIR_ROW36('6'), PAIR_ROW36('7'),
	PAIR_ROW36('8'), PAIR_ROW36('9'), PAIR_ROW36('A'), PAIR_ROW36('B'),
	PAIR_ROW36('C'), PAIR_ROW36('D'), PAIR_ROW36('E'), PAIR_ROW36('F'),
	PAIR_ROW36('G'), PAIR_ROW36('H'), PAIR_ROW36('I'), PAIR_ROW36('J'),
	PAIR_ROW36('K'), PAIR_ROW36('L'), PAIR_ROW36('M'), PAIR_ROW36('N'),
	PAIR_ROW36('O'), PAIR_ROW36('P'), PAIR_ROW36('Q'), PAIR_ROW36('R'),
	PAIR_ROW36('S'), PAIR_ROW36('T'), PAIR_ROW36('U'), PAIR_ROW36('V'),
	PAIR_ROW36('W'), PAIR_ROW36('X'), PAIR_ROW36('Y'), PAIR_ROW36('Z')
};

static const char pairs62[62 * 62][2] = {
	PAIR_ROW62('0'), PAIR_ROW62('1'), PAIR_ROW62('2'), PAIR_ROW62('3'),
	PAIR_ROW62('4'), PAIR_ROW62('5'), PAIR_ROW62('6'), PAIR_ROW62('7'),
	PAIR_ROW62('8'), PAIR_ROW62('9'), PAIR_ROW62('A'), PAIR_ROW62('B'),
	PAIR_ROW62('C'), PAIR_ROW62('D'), PAIR_ROW62('E'), PAIR_ROW62('F'),
	PAIR_ROW62('G'), PAIR_ROW62('H'), PAIR_ROW62('I'), PAIR_ROW62('J'),
	PAIR_ROW62('K'), PAIR_ROW62('L'), PAIR_ROW62('M'), PAIR_ROW62('N'),
	PAIR_ROW62('O'), PAIR_ROW62('P'), PAIR_ROW62('Q'), PAIR_ROW62('R'),
	PAIR_ROW62('S'), PAIR_ROW62('T'), PAIR_ROW62('U'), PAIR_ROW62('V'),
	PAIR_ROW62('W'), PAIR_ROW62('X'), PAIR_ROW62('Y'), PAIR_ROW62('Z'),
	PAIR_ROW62('a'), PAIR_ROW62('b'), PAIR_ROW62('c'), PAIR_ROW62('d'),
	PAIR_ROW62('e'), PAIR_ROW62('f'), PAIR_ROW62('g'), PAIR_ROW62('h'),
	PAIR_ROW62('i'), PAIR_ROW62('j'), PAIR_ROW62('k'), PAIR_ROW62('l'),
	PAIR_ROW62('m'), PAIR_ROW62('n'), PAIR_ROW62('o'), PAIR_ROW62('p'),
	PAIR_ROW62('q'), PAIR_ROW62('r'), PAIR_ROW62('s'), PAIR_ROW62('t'),
	PAIR_ROW62('u'), PAIR_ROW62('v'), PAIR_ROW62('w'), PAIR_ROW62('x'),
	PAIR_ROW62('y'), PAIR_ROW62('z')
};

/*
 * Each byte's value as a digit of the alphabet (0..61), or 255 for a byte
 * that is not in it: one load instead of three range tests, and a single
 * unsigned comparison (value < radix) to tell a digit of the radix.
 */
static const unsigned char digit_values[256] = {
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 255, 255, 255, 255, 255, 255,
	255, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
	25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 255, 255, 255, 255, 255,
	255, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
	51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255
};

/* ---------- radix text ---------- */

static bool
radix_valid(const CosidRadix *r)
{
	return r != NULL && r->radix >= COSID_RADIX_MIN &&
		r->radix <= COSID_RADIX_MAX && r->width >= 1 && r->width <= 64;
}

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#define LIKELY(x) __builtin_expect((x) != 0, 1)
#else
#define ALWAYS_INLINE inline
#define NOINLINE
#define LIKELY(x) (x)
#endif

/*
 * The digits of u in a radix, written backwards to end just before `end`;
 * returns how many (at least 1).  Inlined with a constant radix (see
 * radix_digits_any), so every division is a multiplication.  Chunks of k digits
 * (radix_k = radix^k < 2^32) are split off with one 64-bit division and
 * written with 32-bit arithmetic: a chunk's digits wait only on its chunk,
 * not on the digits before them.
 */
static ALWAYS_INLINE int
radix_digits_const(uint64_t u, uint32_t radix, int k, uint32_t radix_k,
				   char *end)
{
	char	   *p = end;
	uint32_t	r;

	while (u >= radix_k)
	{
		uint64_t	q = u / radix_k;

		r = (uint32_t) (u - q * radix_k);
		for (int i = 0; i < k; i++)
		{
			*--p = radix_alphabet[r % radix];
			r /= radix;
		}
		u = q;
	}
	r = (uint32_t) u;
	do
	{
		*--p = radix_alphabet[r % radix];
		r /= radix;
	} while (r > 0);
	return (int) (end - p);
}

/*
 * radix_digits_const by table, two digits a step: fewer and shorter steps.
 * Chunks of four digits (radix^4 < 2^32) are split off with one 64-bit
 * division (a multiplication, the radix being constant) and cut into two
 * pairs with 32-bit arithmetic.
 */
static ALWAYS_INLINE int
radix_digits_pairs(uint64_t u, uint32_t radix, const char (*pairs)[2], char *end)
{
	const uint32_t radix2 = radix * radix;
	const uint32_t radix4 = radix2 * radix2;
	char	   *p = end;
	uint32_t	r;
	uint32_t	hi;

	while (u >= radix4)
	{
		uint64_t	q = u / radix4;

		r = (uint32_t) (u - q * radix4);
		hi = r / radix2;
		p -= 4;
		memcpy(p, pairs[hi], 2);
		memcpy(p + 2, pairs[r - hi * radix2], 2);
		u = q;
	}
	r = (uint32_t) u;
	if (r >= radix2)
	{
		hi = r / radix2;
		p -= 2;
		memcpy(p, pairs[r - hi * radix2], 2);
		r = hi;
	}
	if (r >= radix)
	{
		p -= 2;
		memcpy(p, pairs[r], 2);
	}
	else
		*--p = radix_alphabet[r];
	return (int) (end - p);
}

/* The digits of u in any radix (not inlined: the uncommon radixes). */
static int
radix_digits_any(uint64_t u, int radix, char *end)
{
	char	   *p = end;

	switch (radix)
	{
		case 16:
			return radix_digits_const(u, 16, 7, UINT32_C(268435456), end);
		case 32:
			return radix_digits_const(u, 32, 6, UINT32_C(1073741824), end);
		case 58:
			return radix_digits_const(u, 58, 5, UINT32_C(656356768), end);
		case 8:
			return radix_digits_const(u, 8, 10, UINT32_C(1073741824), end);
		case 2:
			return radix_digits_const(u, 2, 31, UINT32_C(2147483648), end);
		default:
			break;
	}
	do
	{
		*--p = radix_alphabet[u % (uint64_t) radix];
		u /= (uint64_t) radix;
	} while (u > 0);
	return (int) (end - p);
}

/*
 * The digits of u in any radix 2..62, written backwards to end just before
 * `end`; returns how many.  Inlined, so that a constant radix picks its
 * code at compile time.
 */
static ALWAYS_INLINE int
radix_digits(uint64_t u, int radix, char *end)
{
	switch (radix)
	{
		case 62:
			return radix_digits_pairs(u, 62, pairs62, end);
		case 36:
			return radix_digits_pairs(u, 36, pairs36, end);
		case 10:
			return radix_digits_pairs(u, 10, pairs10, end);
		default:
			return radix_digits_any(u, radix, end);
	}
}

/*
 * radix^1, radix^2, ... up to the last below 2^64, then UINT64_MAX (see
 * count_digits).
 */
static const uint64_t powers10[20] = {
	UINT64_C(10), UINT64_C(100), UINT64_C(1000),
	UINT64_C(10000), UINT64_C(100000), UINT64_C(1000000),
	UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
	UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
	UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
	UINT64_C(10000000000000000), UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000), UINT64_MAX
};

static const uint64_t powers36[13] = {
	UINT64_C(36), UINT64_C(1296), UINT64_C(46656),
	UINT64_C(1679616), UINT64_C(60466176), UINT64_C(2176782336),
	UINT64_C(78364164096), UINT64_C(2821109907456), UINT64_C(101559956668416),
	UINT64_C(3656158440062976), UINT64_C(131621703842267136), UINT64_C(4738381338321616896),
	UINT64_MAX
};

static const uint64_t powers62[11] = {
	UINT64_C(62), UINT64_C(3844), UINT64_C(238328),
	UINT64_C(14776336), UINT64_C(916132832), UINT64_C(56800235584),
	UINT64_C(3521614606208), UINT64_C(218340105584896), UINT64_C(13537086546263552),
	UINT64_C(839299365868340224), UINT64_MAX
};

/*
 * The digits of u (< 2^63) without dividing or looping.  With 2^b <= u <
 * 2^(b+1), 2^b has d = (b * m >> 16) + 1 digits (m = 2^16 / log2(radix),
 * rounded down: exact for every b < 64), and u has d, or d + 1 when u >=
 * radix^d = powers[d - 1].  The UINT64_MAX entries stand for powers of
 * 2^64 or more, which no u < 2^63 reaches.
 */
static ALWAYS_INLINE int
count_digits(uint64_t u, uint32_t m, const uint64_t *powers)
{
	int			b = 63 - __builtin_clzll(u | 1);
	int			d = (int) (((uint32_t) b * m) >> 16) + 1;

	return d + (u >= powers[d - 1]);
}

/* How many digits u has in a radix (not inlined: the uncommon radixes). */
static int
radix_length_any(uint64_t u, int radix)
{
	uint64_t	p = (uint64_t) radix;
	int			n = 1;

	for (; u >= p; n++)
	{
		if (__builtin_mul_overflow(p, (uint64_t) radix, &p))
			return n + 1;		/* radix^(n+1) > 2^64 > u */
	}
	return n;
}

/* How many digits u has in the radix (1 for 0); inlined like radix_digits. */
static ALWAYS_INLINE int
radix_length(uint64_t u, int radix)
{
	if (u > (uint64_t) INT64_MAX)
		return radix_length_any(u, radix);
	switch (radix)
	{
		case 62:
			return count_digits(u, 11006, powers62);
		case 36:
			return count_digits(u, 12676, powers36);
		case 10:
			return count_digits(u, 19728, powers10);
		default:
			return radix_length_any(u, radix);
	}
}

int
cosid_radix_width_for_bits(int radix, int bits)
{
	if (radix < COSID_RADIX_MIN || radix > COSID_RADIX_MAX || bits < 0 ||
		bits > 64)
		return -1;
	return radix_length(cosid_max_of_bits(bits), radix);
}

int
cosid_radix_default_width(int radix)
{
	return cosid_radix_width_for_bits(radix, 63);
}

/*
 * Write v in decimal, zero-padded to at least minwidth digits (negative
 * values get a '-' first).  Returns the length; at most 20 bytes plus the
 * padding, no NUL.
 */
int
cosid_put_decimal(char *buf, int64_t v, int minwidth)
{
	int			len = 0;
	int			n;
	uint64_t	u;

	if (v < 0)
	{
		buf[len++] = '-';
		u = (uint64_t) 0 - (uint64_t) v;
	}
	else
		u = (uint64_t) v;
	n = radix_length(u, 10);
	if (minwidth > n)
	{
		memset(buf + len, '0', (size_t) (minwidth - n));
		len += minwidth - n;
	}
	radix_digits(u, 10, buf + len + n);
	return len + n;
}

/* Write u in the radix, zero-padded to minwidth; returns the length. */
int
cosid_put_radix(char *buf, uint64_t u, int radix, int minwidth)
{
	int			n = radix_length(u, radix);
	int			len = minwidth > n ? minwidth : n;

	/*
	 * Straight into buf: digits written elsewhere and copied would be read
	 * back with wide loads over narrow stores, which stalls.
	 */
	if (len > n)
		memset(buf, '0', (size_t) (len - n));
	radix_digits(u, radix, buf + len);
	return len;
}

/* cosid_radix_encode's work, inlined for each common radix. */
static ALWAYS_INLINE int
radix_encode_in(const CosidRadix *r, int radix, uint64_t u, char *buf)
{
	int			n = radix_length(u, radix);
	int			len;

	if (n > r->width)
		return -1;
	len = r->pad_start ? r->width : n;
	if (len > n)
		memset(buf, '0', (size_t) (len - n));
	radix_digits(u, radix, buf + len);
	buf[len] = '\0';
	return len;
}

/* The same for the uncommon radixes. */
static int
radix_encode_any(const CosidRadix *r, uint64_t u, char *buf)
{
	int			n = radix_length_any(u, r->radix);
	int			len;

	if (n > r->width)
		return -1;
	len = r->pad_start ? r->width : n;
	if (len > n)
		memset(buf, '0', (size_t) (len - n));
	radix_digits_any(u, r->radix, buf + len);
	buf[len] = '\0';
	return len;
}

/*
 * Radix 62 by chunks, for every value (u < 2^63 < 62^11) and width, but
 * padded text over 11 digits.  Two divisions by 62^4 (multiplications) split
 * u into chunks of 3, 4 and 4 digits (top, mid, low), each written as digit
 * pairs at places known from the text's length alone: the chunks below the
 * first one are written whole, zeros included, the first with as many
 * digits as the text has left for it.  No loop, and no count of digits
 * before the digits: the length is the width when padded, else it comes
 * from the first chunk that is not zero.  Returns -1, having written
 * nothing, when u needs more than width digits, or -2 for padded text over
 * 11 digits (the general way); otherwise it writes what the general way
 * writes (test_radix62_lengths).
 */
#define R62_2 UINT32_C(3844)
#define R62_3 UINT32_C(238328)
#define R62_4 UINT32_C(14776336)

/* How many digits c < 62^4 has (1 for 0). */
static ALWAYS_INLINE int
radix62_chunk_length(uint32_t c)
{
	return c >= R62_3 ? 4 : c >= R62_2 ? 3 : c >= 62 ? 2 : 1;
}

/* c < 62^k as exactly k digits (1..4), leading zeros included. */
static ALWAYS_INLINE void
radix62_put_chunk(char *p, uint32_t c, int k)
{
	uint32_t	hi = c / R62_2;
	uint32_t	lo = c - hi * R62_2;

	switch (k)
	{
		case 4:
			memcpy(p, pairs62[hi], 2);
			memcpy(p + 2, pairs62[lo], 2);
			break;
		case 3:
			p[0] = radix_alphabet[hi];
			memcpy(p + 1, pairs62[lo], 2);
			break;
		case 2:
			memcpy(p, pairs62[lo], 2);
			break;
		default:
			p[0] = radix_alphabet[lo];
			break;
	}
}

static ALWAYS_INLINE int
radix62_chunks(const CosidRadix *r, uint64_t u, char *buf)
{
	uint64_t	q1 = u / R62_4;
	uint32_t	low = (uint32_t) (u - q1 * R62_4);
	uint32_t	top = (uint32_t) (q1 / R62_4);
	uint32_t	mid = (uint32_t) (q1 - (uint64_t) top * R62_4);
	int			len;

	if (r->pad_start)
	{
		len = r->width;
		if (len > 11)
			return -2;
		/* powers62[len - 1] = 62^len */
		if (u >= powers62[len - 1])
			return -1;
	}
	else
	{
		len = top > 0 ? 8 + radix62_chunk_length(top) :
			mid > 0 ? 4 + radix62_chunk_length(mid) : radix62_chunk_length(low);
		if (len > r->width)
			return -1;
	}
	if (len > 8)
	{
		radix62_put_chunk(buf, top, len - 8);
		radix62_put_chunk(buf + len - 8, mid, 4);
		radix62_put_chunk(buf + len - 4, low, 4);
	}
	else if (len > 4)
	{
		radix62_put_chunk(buf, mid, len - 4);
		radix62_put_chunk(buf + len - 4, low, 4);
	}
	else
		radix62_put_chunk(buf, low, len);
	buf[len] = '\0';
	return len;
}

/* cosid_radix_encode the general way: every radix, length and width. */
static NOINLINE int
radix_encode_general(const CosidRadix *r, int64_t v, char *buf)
{
	if (!radix_valid(r) || v < 0)
		return -1;
	switch (r->radix)
	{
		case 62:
			return radix_encode_in(r, 62, (uint64_t) v, buf);
		case 36:
			return radix_encode_in(r, 36, (uint64_t) v, buf);
		case 10:
			return radix_encode_in(r, 10, (uint64_t) v, buf);
		default:
			return radix_encode_any(r, (uint64_t) v, buf);
	}
}

/*
 * Radix 62 by chunks (radix62_chunks), with no call; every other radix, and
 * padded radix-62 text over 11 digits, the general way, in a call of its
 * own so that this path saves few registers.
 */
int
cosid_radix_encode(const CosidRadix *r, int64_t v, char *buf)
{
	if (LIKELY(r != NULL && r->radix == 62 && v >= 0 &&
			   r->width >= 1 && r->width <= 64))
	{
		int			n = radix62_chunks(r, (uint64_t) v, buf);

		if (LIKELY(n != -2))
			return n;
	}
	return radix_encode_general(r, v, buf);
}

/*
 * How many digits of each radix never overflow 64 bits: the largest k with
 * radix^k <= 2^64 (64 for base 2, 12 for 36, 10 for 62).
 */
static const unsigned char radix_safe_digits[COSID_RADIX_MAX + 1] = {
	0, 0, 64, 40, 32, 27, 24, 22, 21, 20, 19, 18, 17, 17, 16, 16,
	16, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 13, 13, 13, 12,
	12, 12, 12, 12, 12, 12, 12, 12, 12, 11, 11, 11, 11, 11, 11, 11,
	11, 11, 11, 11, 11, 11, 11, 11, 11, 10, 10, 10, 10, 10, 10
};

typedef enum RadixScan
{
	SCAN_OK,
	SCAN_BAD_DIGIT,				/* a byte that is not a digit of the radix */
	SCAN_OVER					/* all digits, but the value is over max */
} RadixScan;

/*
 * Bytes s[0..n) as digits of a radix, in one pass: whether each is a digit,
 * and the value, exactly.  The first radix_safe_digits[radix] digits cannot
 * overflow and are summed two at a time (the pairs do not wait on each
 * other); any more are added with overflow checks.  The value only grows
 * digit by digit, so "over max at the end, or overflowed" is "over max at
 * some digit".
 */
static RadixScan
radix_scan(const char *s, size_t n, int radix, uint64_t max, uint64_t *out)
{
	const unsigned char *u = (const unsigned char *) s;
	uint64_t	r = (uint64_t) radix;
	uint64_t	r2 = r * r;
	size_t		fast = radix_safe_digits[radix];
	uint64_t	acc = 0;
	bool		bad = false;
	bool		over = false;
	size_t		i = 0;

	if (fast > n)
		fast = n;
	if (fast & 1)
	{
		acc = digit_values[u[0]];
		bad = acc >= r;
		i = 1;
	}
	for (; i < fast; i += 2)
	{
		uint64_t	d0 = digit_values[u[i]];
		uint64_t	d1 = digit_values[u[i + 1]];

		bad |= (d0 >= r) | (d1 >= r);
		acc = acc * r2 + (d0 * r + d1);
	}
	for (; i < n; i++)
	{
		uint64_t	d = digit_values[u[i]];

		bad |= d >= r;
		if (!over && (__builtin_mul_overflow(acc, r, &acc) ||
					  __builtin_add_overflow(acc, d, &acc)))
			over = true;
	}
	if (bad)
		return SCAN_BAD_DIGIT;
	if (over || acc > max)
		return SCAN_OVER;
	*out = acc;
	return SCAN_OK;
}

/*
 * Digits s[0..n) of a radix, already checked, as a number; false when it
 * is over max.
 */
bool
cosid_radix_value(const char *s, size_t n, int radix, uint64_t max, uint64_t *out)
{
	return radix_scan(s, n, radix, max, out) == SCAN_OK;
}

/* Index of the first byte that is not a digit of the radix, or n. */
size_t
cosid_first_bad_digit(const char *s, size_t n, int radix)
{
	const unsigned char *u = (const unsigned char *) s;

	for (size_t i = 0; i < n; i++)
	{
		if (digit_values[u[i]] >= radix)
			return i;
	}
	return n;
}

CosidDecodeResult
cosid_radix_decode(const CosidRadix *r, const char *s, size_t len,
				   uint64_t max, int64_t *v, char *msg, size_t msglen)
{
	uint64_t	u = 0;
	RadixScan	scan;

	if (!radix_valid(r))
	{
		cosid_set_msg(msg, msglen, "invalid radix settings");
		return COSID_DECODE_SYNTAX;
	}
	if (len == 0)
	{
		cosid_set_msg(msg, msglen, "the text is empty");
		return COSID_DECODE_SYNTAX;
	}
	if (max > (uint64_t) INT64_MAX)
		max = (uint64_t) INT64_MAX;

	/* one pass; the checks below keep their order: digits, length, range */
	scan = radix_scan(s, len, r->radix, max, &u);
	if (scan == SCAN_BAD_DIGIT)
	{
		size_t		bad = cosid_first_bad_digit(s, len, r->radix);

		cosid_bad_digit_msg(msg, msglen, bad, (unsigned char) s[bad], r->radix);
		return COSID_DECODE_SYNTAX;
	}
	if (r->pad_start && len != (size_t) r->width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "expected exactly %d characters (padded), got %zu",
					 r->width, len);
		return COSID_DECODE_SYNTAX;
	}
	if (len > (size_t) r->width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "expected at most %d characters, got %zu",
					 r->width, len);
		return COSID_DECODE_SYNTAX;
	}
	if (scan == SCAN_OVER)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the value is out of range (at most %llu)",
					 (unsigned long long) max);
		return COSID_DECODE_RANGE;
	}
	*v = (int64_t) u;
	return COSID_DECODE_OK;
}

/*
 * codec.c - CosId codecs without PostgreSQL: radix, date patterns, friendly
 * and parts text, periodic segment numbers, and the codec-list parser.
 *
 * Canonical forms.  Every encoder writes one text per value; the decoders
 * accept exactly that text, except that the unpadded forms (radix without
 * pad_start, friendly node and sequence without pad_start) also accept
 * leading zeros, as CosId's decoders do, up to the same width.  So a padded
 * decode re-encodes to the same text, an unpadded one to the text without
 * its leading zeros.
 *
 * Decoders check the characters first, then the length, then the ranges:
 * SYNTAX for the first two, RANGE only for well-formed text.  Character
 * positions in messages count from 1.
 */
#include "codec.h"
#include "json.h"

#include <limits.h>
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

/* ---------- small helpers ---------- */

static void
set_msg(char *msg, size_t msglen, const char *text)
{
	if (msg != NULL && msglen > 0)
		snprintf(msg, msglen, "%s", text);
}

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

/* A byte for a message: "x" when printable ASCII, else 0xNN. */
static void
describe_char(unsigned char c, char out[8])
{
	static const char hex[] = "0123456789ABCDEF";

	if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\')
	{
		out[0] = '"';
		out[1] = (char) c;
		out[2] = '"';
		out[3] = '\0';
	}
	else
	{
		out[0] = '0';
		out[1] = 'x';
		out[2] = hex[c >> 4];
		out[3] = hex[c & 15];
		out[4] = '\0';
	}
}

/* "character N (x) is not a base-R digit", with a hint for lower case. */
static void
bad_digit_msg(char *msg, size_t msglen, size_t pos, unsigned char c, int radix)
{
	char		d[8];

	if (msg == NULL || msglen == 0)
		return;
	describe_char(c, d);
	if (radix <= 36 && c >= 'a' && c <= 'z')
		snprintf(msg, msglen,
				 "character %zu (%s) is not a base-%d digit (upper case only)",
				 pos + 1, d, radix);
	else
		snprintf(msg, msglen, "character %zu (%s) is not a base-%d digit",
				 pos + 1, d, radix);
}

static inline uint64_t
max_of_bits(int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* Exactly `width` digits: v modulo 10^width (negative values wrap). */
static void
put_fixed(char *buf, int v, int width)
{
	int			mod = width == 4 ? 10000 : width == 3 ? 1000 : 100;

	v %= mod;
	if (v < 0)
		v += mod;
	for (int i = width - 1; i >= 0; i--)
	{
		buf[i] = (char) ('0' + v % 10);
		v /= 10;
	}
}

/* Decimal digits s[0..n) (all digits, n <= 19) as a number. */
static uint64_t
read_decimal(const char *s, size_t n)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t) (s[i] - '0');
	return v;
}

static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---------- radix text ---------- */

static bool
radix_valid(const CosidRadix *r)
{
	return r != NULL && r->radix >= COSID_RADIX_MIN &&
		r->radix <= COSID_RADIX_MAX && r->width >= 1 && r->width <= 64;
}

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
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
	return radix_length(max_of_bits(bits), radix);
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
static int
put_decimal(char *buf, int64_t v, int minwidth)
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
static int
put_radix(char *buf, uint64_t u, int radix, int minwidth)
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

int
cosid_radix_encode(const CosidRadix *r, int64_t v, char *buf)
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
static bool
radix_value(const char *s, size_t n, int radix, uint64_t max, uint64_t *out)
{
	return radix_scan(s, n, radix, max, out) == SCAN_OK;
}

/* Index of the first byte that is not a digit of the radix, or n. */
static size_t
first_bad_digit(const char *s, size_t n, int radix)
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
		set_msg(msg, msglen, "invalid radix settings");
		return COSID_DECODE_SYNTAX;
	}
	if (len == 0)
	{
		set_msg(msg, msglen, "the text is empty");
		return COSID_DECODE_SYNTAX;
	}
	if (max > (uint64_t) INT64_MAX)
		max = (uint64_t) INT64_MAX;

	/* one pass; the checks below keep their order: digits, length, range */
	scan = radix_scan(s, len, r->radix, max, &u);
	if (scan == SCAN_BAD_DIGIT)
	{
		size_t		bad = first_bad_digit(s, len, r->radix);

		bad_digit_msg(msg, msglen, bad, (unsigned char) s[bad], r->radix);
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

/* ---------- date patterns ---------- */

typedef enum DateField
{
	DF_LITERAL = 0,
	DF_YEAR4,
	DF_YEAR2,
	DF_MONTH,
	DF_DAY,
	DF_HOUR,
	DF_MINUTE,
	DF_SECOND,
	DF_MILLIS
} DateField;

/* What a field fills in, for messages and the repeat check. */
static const char *const field_names[] = {
	[DF_LITERAL] = "literal",
	[DF_YEAR4] = "year",
	[DF_YEAR2] = "year",
	[DF_MONTH] = "month",
	[DF_DAY] = "day",
	[DF_HOUR] = "hour",
	[DF_MINUTE] = "minute",
	[DF_SECOND] = "second",
	[DF_MILLIS] = "millisecond",
};

#define PATTERN_FIELDS "expected yyyy, yy, MM, dd, HH, mm, ss or SSS"

/*
 * The token at pattern[i]: a field (its run length) or a literal byte.
 * False with msg for a letter or digit that is not a field.
 */
static bool
pattern_token(const char *pattern, size_t i, DateField *f, size_t *n,
			  char *msg, size_t msglen)
{
	unsigned char c = (unsigned char) pattern[i];
	size_t		run = 1;
	bool		letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');

	*f = DF_LITERAL;
	*n = 1;
	if (!letter && !is_digit((char) c))
		return true;
	while ((unsigned char) pattern[i + run] == c)
		run++;
	*n = run;
	switch (c)
	{
		case 'y':
			if (run == 4)
				*f = DF_YEAR4;
			else if (run == 2)
				*f = DF_YEAR2;
			break;
		case 'M':
			*f = run == 2 ? DF_MONTH : DF_LITERAL;
			break;
		case 'd':
			*f = run == 2 ? DF_DAY : DF_LITERAL;
			break;
		case 'H':
			*f = run == 2 ? DF_HOUR : DF_LITERAL;
			break;
		case 'm':
			*f = run == 2 ? DF_MINUTE : DF_LITERAL;
			break;
		case 's':
			*f = run == 2 ? DF_SECOND : DF_LITERAL;
			break;
		case 'S':
			*f = run == 3 ? DF_MILLIS : DF_LITERAL;
			break;
		default:
			break;
	}
	if (*f != DF_LITERAL)
		return true;
	if (msg != NULL && msglen > 0)
	{
		int			shown = run > 16 ? 16 : (int) run;

		if (letter)
			snprintf(msg, msglen, "\"%.*s%s\" is not a date field; " PATTERN_FIELDS,
					 shown, pattern + i, run > 16 ? "..." : "");
		else
			snprintf(msg, msglen,
					 "\"%.*s%s\" cannot be a literal: letters and digits are reserved for fields",
					 shown, pattern + i, run > 16 ? "..." : "");
	}
	return false;
}

int
cosid_date_pattern_check(const char *pattern, char *msg, size_t msglen)
{
	size_t		i = 0;
	unsigned	seen = 0;

	if (pattern == NULL || pattern[0] == '\0')
	{
		set_msg(msg, msglen, "the pattern is empty");
		return -1;
	}
	while (pattern[i] != '\0')
	{
		DateField	f;
		size_t		n;

		if (!pattern_token(pattern, i, &f, &n, msg, msglen))
			return -1;
		if (f != DF_LITERAL)
		{
			/* yyyy and yy both fill the year. */
			unsigned	bit = 1u << (f == DF_YEAR2 ? DF_YEAR4 : f);

			if (seen & bit)
			{
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen, "\"%.*s\" repeats the %s",
							 (int) n, pattern + i, field_names[f]);
				return -1;
			}
			seen |= bit;
		}
		i += n;
		if (i > (size_t) INT_MAX / 2)
		{
			set_msg(msg, msglen, "the pattern is too long");
			return -1;
		}
	}
	return (int) i;
}

/* The values a field may parse to (yy is 2000 + yy). */
static const struct
{
	int			lo;
	int			hi;
}			field_ranges[] = {
	[DF_LITERAL] = {0, 0},
	[DF_YEAR4] = {1, 9999},
	[DF_YEAR2] = {2000, 2099},
	[DF_MONTH] = {1, 12},
	[DF_DAY] = {1, 31},
	[DF_HOUR] = {0, 23},
	[DF_MINUTE] = {0, 59},
	[DF_SECOND] = {0, 59},
	[DF_MILLIS] = {0, 999},
};

/* The member of tm a field fills (never called for literals). */
static int *
tm_slot(CosidTm *tm, DateField f)
{
	switch (f)
	{
		case DF_YEAR4:
		case DF_YEAR2:
			return &tm->year;
		case DF_MONTH:
			return &tm->month;
		case DF_DAY:
			return &tm->day;
		case DF_HOUR:
			return &tm->hour;
		case DF_MINUTE:
			return &tm->minute;
		case DF_SECOND:
			return &tm->second;
		case DF_MILLIS:
		case DF_LITERAL:
			break;
	}
	return &tm->millis;
}

static int
tm_value(const CosidTm *tm, DateField f)
{
	CosidTm		copy = *tm;

	return *tm_slot(&copy, f);
}

/*
 * Each field is as wide as its letters (yyyy 4, yy 2, SSS 3, others 2), so
 * the text is as long as the pattern.  Values out of a field's digits wrap
 * (the caller passes a valid time).  -1 (and an empty buf) for a pattern
 * that fails cosid_date_pattern_check.
 */
int
cosid_date_format(const char *pattern, const CosidTm *tm, char *buf)
{
	size_t		i = 0;

	if (cosid_date_pattern_check(pattern, NULL, 0) < 0)
	{
		buf[0] = '\0';
		return -1;
	}
	while (pattern[i] != '\0')
	{
		DateField	f;
		size_t		n;

		(void) pattern_token(pattern, i, &f, &n, NULL, 0);
		if (f == DF_LITERAL)
			buf[i] = pattern[i];
		else
			put_fixed(buf + i, tm_value(tm, f), (int) n);
		i += n;
	}
	buf[i] = '\0';
	return (int) i;
}

CosidDecodeResult
cosid_date_parse(const char *pattern, const char *s, size_t len, CosidTm *tm,
				 char *msg, size_t msglen)
{
	int			plen = cosid_date_pattern_check(pattern, msg, msglen);
	CosidTm		t = *tm;
	size_t		i;

	if (plen < 0)
		return COSID_DECODE_SYNTAX;
	if (len != (size_t) plen)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "expected %d characters (%.40s), got %zu",
					 plen, pattern, len);
		return COSID_DECODE_SYNTAX;
	}

	/* Pass 1: the shape (digits where fields are, literals as written). */
	for (i = 0; i < len; i++)
	{
		DateField	f;
		size_t		n;
		char		d[8];
		char		p[8];

		(void) pattern_token(pattern, i, &f, &n, NULL, 0);
		if (f == DF_LITERAL)
		{
			if (s[i] != pattern[i])
			{
				describe_char((unsigned char) s[i], d);
				describe_char((unsigned char) pattern[i], p);
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen, "character %zu (%s) should be %s",
							 i + 1, d, p);
				return COSID_DECODE_SYNTAX;
			}
			continue;
		}
		for (size_t k = 0; k < n; k++)
		{
			if (!is_digit(s[i + k]))
			{
				describe_char((unsigned char) s[i + k], d);
				if (msg != NULL && msglen > 0)
					snprintf(msg, msglen,
							 "character %zu (%s) is not a digit of the %s",
							 i + k + 1, d, field_names[f]);
				return COSID_DECODE_SYNTAX;
			}
		}
		i += n - 1;
	}

	/* Pass 2: values and their ranges. */
	for (i = 0; i < len; i++)
	{
		DateField	f;
		size_t		n;
		int			v;

		(void) pattern_token(pattern, i, &f, &n, NULL, 0);
		if (f == DF_LITERAL)
			continue;
		v = (int) read_decimal(s + i, n);
		if (f == DF_YEAR2)
			v += 2000;
		if (v < field_ranges[f].lo || v > field_ranges[f].hi)
		{
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "%s %d is out of range (%d to %d)",
						 field_names[f], v, field_ranges[f].lo,
						 field_ranges[f].hi);
			return COSID_DECODE_SYNTAX;
		}
		*tm_slot(&t, f) = v;
		i += n - 1;
	}
	*tm = t;
	return COSID_DECODE_OK;
}

static const char *const month_names[] = {
	"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"
};

int
cosid_days_in_month(int year, int month)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	if (month < 1 || month > 12)
		return 0;
	return month == 2 && leap ? 29 : days[month - 1];
}

bool
cosid_date_valid(int year, int month, int day, char *msg, size_t msglen)
{
	int			ndays;

	if (year < 1 || year > 9999)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "year %d is out of range (1 to 9999)", year);
		return false;
	}
	if (month < 1 || month > 12)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "month %d is out of range (1 to 12)", month);
		return false;
	}
	ndays = cosid_days_in_month(year, month);
	if (day < 1 || day > 31)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "day %d is out of range (1 to 31)", day);
		return false;
	}
	if (day > ndays)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "day %d is out of range for %s %d (1 to %d)",
					 day, month_names[month - 1], year, ndays);
		return false;
	}
	return true;
}

int64_t
cosid_zone_offset_for_local(int64_t local, int64_t before_gmtoff,
							int64_t boundary, int64_t after_gmtoff)
{
	/* the instant local names on each side (offsets are under a day) */
	int64_t		before = local - before_gmtoff;
	int64_t		after = local - after_gmtoff;

	/*
	 * Both after the change: the later offset.  Both before it: the earlier
	 * one.  Otherwise the local time is repeated (before < boundary <=
	 * after) or skipped (after < boundary <= before), and java.time takes
	 * the offset before the change in both cases: the earlier of the two
	 * instants, or the local time moved forward by the gap (that is, read
	 * with the old offset).
	 */
	if (before >= boundary && after >= boundary)
		return after_gmtoff;
	return before_gmtoff;
}

/* ---------- a layout's ids and times ---------- */

bool
cosid_layout_holds_id(const CosidLayout *l, int uncertainty_bits, int64_t id)
{
	int			bits = cosid_layout_total_bits(l) + uncertainty_bits;

	if (id < 0)
		return false;
	return bits >= 63 || ((uint64_t) id >> bits) == 0;
}

bool
cosid_layout_time_ms(const CosidLayout *l, int64_t time, int64_t max_ms,
					 int64_t *ms)
{
	if (time < 0 || time > cosid_layout_last_time(l, max_ms))
		return false;
	*ms = l->epoch_ms + time * l->unit_ms;
	return true;
}

int64_t
cosid_layout_last_time(const CosidLayout *l, int64_t max_ms)
{
	int64_t		last;

	if (l->unit_ms <= 0 || max_ms < l->epoch_ms)
		return -1;
	/* epoch_ms >= 0 (the layout check), so the difference cannot overflow */
	last = (max_ms - l->epoch_ms) / l->unit_ms;
	return last < cosid_layout_max_time(l) ? last : cosid_layout_max_time(l);
}

/* ---------- friendly text ---------- */

int
cosid_decimal_width_for_bits(int bits)
{
	return cosid_radix_width_for_bits(10, bits);
}

static const char *
friendly_pattern(const CosidLayout *l)
{
	return l->unit_ms == 1000 ? "yyyyMMddHHmmss" : "yyyyMMddHHmmssSSS";
}

/* The fields of friendly_pattern, in order: yyyyMMddHHmmss then SSS. */
static const struct
{
	DateField	field;
	int			off;
	int			n;
}			friendly_fields[] = {
	{DF_YEAR4, 0, 4},
	{DF_MONTH, 4, 2},
	{DF_DAY, 6, 2},
	{DF_HOUR, 8, 2},
	{DF_MINUTE, 10, 2},
	{DF_SECOND, 12, 2},
	{DF_MILLIS, 14, 3},
};

/* A layout's field widths are usable (bit counts 0..63). */
static bool
layout_bits_ok(const CosidLayout *l)
{
	return l != NULL && l->time_bits >= 0 && l->time_bits <= 63 &&
		l->node_bits >= 0 && l->node_bits <= 63 &&
		l->seq_bits >= 0 && l->seq_bits <= 63;
}

int
cosid_friendly_format(const CosidLayout *l, bool pad_start, const CosidTm *tm,
					  int64_t node, int64_t seq, char *buf)
{
	int			n;
	int			nw = 1;
	int			sw = 1;

	if (pad_start && layout_bits_ok(l))
	{
		nw = cosid_decimal_width_for_bits(l->node_bits);
		sw = cosid_decimal_width_for_bits(l->seq_bits);
	}
	/* friendly_pattern(l), written directly: what cosid_date_format writes */
	put_fixed(buf, tm->year, 4);
	put_fixed(buf + 4, tm->month, 2);
	put_fixed(buf + 6, tm->day, 2);
	put_fixed(buf + 8, tm->hour, 2);
	put_fixed(buf + 10, tm->minute, 2);
	put_fixed(buf + 12, tm->second, 2);
	n = 14;
	if (l->unit_ms != 1000)
	{
		put_fixed(buf + 14, tm->millis, 3);
		n = 17;
	}
	buf[n++] = '-';
	n += put_decimal(buf + n, node, nw);
	buf[n++] = '-';
	n += put_decimal(buf + n, seq, sw);
	buf[n] = '\0';
	return n;
}

/* Length checks of a node or sequence part of friendly text. */
static bool
friendly_part_ok(const char *what, size_t n, int width, bool pad_start,
				 char *msg, size_t msglen)
{
	if (n == 0)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the %s is empty", what);
		return false;
	}
	if (pad_start && n != (size_t) width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "the %s has %zu digits; padded, it has exactly %d",
					 what, n, width);
		return false;
	}
	if (n > (size_t) width)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the %s has %zu digits, more than %d",
					 what, n, width);
		return false;
	}
	return true;
}

CosidDecodeResult
cosid_friendly_parse(const CosidLayout *l, bool pad_start, const char *s,
					 size_t len, CosidTm *tm, int64_t *node, int64_t *seq,
					 char *msg, size_t msglen)
{
	const char *pattern;
	size_t		tlen;
	size_t		i;
	size_t		node_start;
	size_t		node_end;
	int			nw;
	int			sw;
	uint64_t	nv;
	uint64_t	sv;
	char		d[8];
	CosidTm		t;

	if (!layout_bits_ok(l) || l->node_bits > 62 || l->seq_bits > 62)
	{
		set_msg(msg, msglen, "invalid layout");
		return COSID_DECODE_SYNTAX;
	}
	pattern = friendly_pattern(l);
	tlen = strlen(pattern);
	nw = cosid_decimal_width_for_bits(l->node_bits);
	sw = cosid_decimal_width_for_bits(l->seq_bits);

	/* The time digits, then '-'. */
	for (i = 0; i < tlen && i < len; i++)
	{
		if (!is_digit(s[i]))
		{
			describe_char((unsigned char) s[i], d);
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen,
						 "character %zu (%s) is not a digit of the time; expected %s-node-sequence",
						 i + 1, d, pattern);
			return COSID_DECODE_SYNTAX;
		}
	}
	if (len <= tlen)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "the text is too short; expected %s-node-sequence",
					 pattern);
		return COSID_DECODE_SYNTAX;
	}
	if (s[tlen] != '-')
	{
		describe_char((unsigned char) s[tlen], d);
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "character %zu (%s) should be \"-\"; expected %s-node-sequence",
					 tlen + 1, d, pattern);
		return COSID_DECODE_SYNTAX;
	}

	/* The node digits, then '-', then the sequence digits to the end. */
	node_start = tlen + 1;
	for (i = node_start; i < len && is_digit(s[i]); i++)
		;
	node_end = i;
	if (i == len)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "no \"-\" before the sequence; expected %s-node-sequence",
					 pattern);
		return COSID_DECODE_SYNTAX;
	}
	if (s[i] != '-')
	{
		describe_char((unsigned char) s[i], d);
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "character %zu (%s) is not a decimal digit",
					 i + 1, d);
		return COSID_DECODE_SYNTAX;
	}
	for (i = node_end + 1; i < len; i++)
	{
		if (!is_digit(s[i]))
		{
			describe_char((unsigned char) s[i], d);
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "character %zu (%s) is not a decimal digit",
						 i + 1, d);
			return COSID_DECODE_SYNTAX;
		}
	}
	if (!friendly_part_ok("node", node_end - node_start, nw, pad_start,
						  msg, msglen) ||
		!friendly_part_ok("sequence", len - node_end - 1, sw, pad_start,
						  msg, msglen))
		return COSID_DECODE_SYNTAX;

	/*
	 * The time fields' ranges, as cosid_date_parse checks them: the pattern
	 * is all fields, whose digits are checked above.
	 */
	memset(&t, 0, sizeof(t));
	for (int k = 0; k < (tlen == 17 ? 7 : 6); k++)
	{
		DateField	f = friendly_fields[k].field;
		int			v = (int) read_decimal(s + friendly_fields[k].off,
										   (size_t) friendly_fields[k].n);

		if (v < field_ranges[f].lo || v > field_ranges[f].hi)
		{
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "%s %d is out of range (%d to %d)",
						 field_names[f], v, field_ranges[f].lo,
						 field_ranges[f].hi);
			return COSID_DECODE_SYNTAX;
		}
		*tm_slot(&t, f) = v;
	}

	/* Widths are at most 19 digits here, so the values fit uint64. */
	nv = read_decimal(s + node_start, node_end - node_start);
	sv = read_decimal(s + node_end + 1, len - node_end - 1);
	if (nv > max_of_bits(l->node_bits))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "node %llu is out of range (at most %llu for %d bits)",
					 (unsigned long long) nv,
					 (unsigned long long) max_of_bits(l->node_bits),
					 l->node_bits);
		return COSID_DECODE_RANGE;
	}
	if (sv > max_of_bits(l->seq_bits))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "sequence %llu is out of range (at most %llu for %d bits)",
					 (unsigned long long) sv,
					 (unsigned long long) max_of_bits(l->seq_bits),
					 l->seq_bits);
		return COSID_DECODE_RANGE;
	}
	*tm = t;
	*node = (int64_t) nv;
	*seq = (int64_t) sv;
	return COSID_DECODE_OK;
}

/* ---------- parts-radix text ---------- */

static bool
parts_widths(const CosidLayout *l, int radix, int w[3])
{
	if (!layout_bits_ok(l) || radix < COSID_RADIX_MIN || radix > COSID_RADIX_MAX)
		return false;
	w[0] = cosid_radix_width_for_bits(radix, l->time_bits);
	w[1] = cosid_radix_width_for_bits(radix, l->node_bits);
	w[2] = cosid_radix_width_for_bits(radix, l->seq_bits);
	return true;
}

int
cosid_parts_radix_length(const CosidLayout *l, int radix)
{
	int			w[3];

	if (!parts_widths(l, radix, w))
		return -1;
	return w[0] + w[1] + w[2];
}

/*
 * Returns the length, or -1 (buf untouched) when a part is negative or
 * over its bits, or the radix or layout is invalid.
 */
int
cosid_parts_radix_encode(const CosidLayout *l, int radix, int64_t time,
						 int64_t node, int64_t seq, char *buf)
{
	int			w[3];
	int			n = 0;

	if (!parts_widths(l, radix, w))
		return -1;
	if (time < 0 || (uint64_t) time > max_of_bits(l->time_bits) ||
		node < 0 || (uint64_t) node > max_of_bits(l->node_bits) ||
		seq < 0 || (uint64_t) seq > max_of_bits(l->seq_bits))
		return -1;
	n += put_radix(buf + n, (uint64_t) time, radix, w[0]);
	n += put_radix(buf + n, (uint64_t) node, radix, w[1]);
	n += put_radix(buf + n, (uint64_t) seq, radix, w[2]);
	buf[n] = '\0';
	return n;
}

CosidDecodeResult
cosid_parts_radix_decode(const CosidLayout *l, int radix, const char *s,
						 size_t len, int64_t *time, int64_t *node,
						 int64_t *seq, char *msg, size_t msglen)
{
	static const char *const part_names[3] = {"time", "node", "sequence"};
	int			w[3];
	int			bits[3];
	uint64_t	v[3];
	size_t		bad;
	size_t		off = 0;

	if (!parts_widths(l, radix, w))
	{
		set_msg(msg, msglen, "invalid layout or radix");
		return COSID_DECODE_SYNTAX;
	}
	bad = first_bad_digit(s, len, radix);
	if (bad < len)
	{
		bad_digit_msg(msg, msglen, bad, (unsigned char) s[bad], radix);
		return COSID_DECODE_SYNTAX;
	}
	if (len != (size_t) (w[0] + w[1] + w[2]))
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen,
					 "expected %d characters (%d time, %d node, %d sequence), got %zu",
					 w[0] + w[1] + w[2], w[0], w[1], w[2], len);
		return COSID_DECODE_SYNTAX;
	}
	bits[0] = l->time_bits;
	bits[1] = l->node_bits;
	bits[2] = l->seq_bits;
	for (int k = 0; k < 3; k++)
	{
		if (!radix_value(s + off, (size_t) w[k], radix, max_of_bits(bits[k]),
						 &v[k]))
		{
			if (msg != NULL && msglen > 0)
				snprintf(msg, msglen, "the %s part is out of range (more than %d bits)",
						 part_names[k], bits[k]);
			return COSID_DECODE_RANGE;
		}
		off += (size_t) w[k];
	}
	*time = (int64_t) v[0];
	*node = (int64_t) v[1];
	*seq = (int64_t) v[2];
	return COSID_DECODE_OK;
}

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
			set_msg(msg, msglen, "no period");
			return false;
	}
	if (period < 0)
	{
		set_msg(msg, msglen, "the period is negative");
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

/* ---------- codec lists ---------- */

static const char *const kind_names[] = {
	[COSID_CODEC_RADIX] = "radix",
	[COSID_CODEC_FRIENDLY] = "friendly",
	[COSID_CODEC_CUSTOM] = "custom",
	[COSID_CODEC_PARTS_RADIX] = "parts-radix",
	[COSID_CODEC_PARTS_FRIENDLY] = "parts-friendly",
	[COSID_CODEC_GROUPED] = "grouped",
	[COSID_CODEC_PREFIX] = "prefix",
	[COSID_CODEC_SUFFIX] = "suffix",
	[COSID_CODEC_DATE_PREFIX] = "date-prefix",
};

#define KIND_COUNT ((int) (sizeof(kind_names) / sizeof(kind_names[0])))
#define KIND_LIST "radix, friendly, custom, parts-radix, parts-friendly, " \
	"grouped, prefix, suffix or date-prefix"

#define MAX_AFFIX_BYTES		64
#define MAX_ZONE_BYTES		64
#define MAX_PATTERN_BYTES	32
#define MAX_FUNCTION_BYTES	200
#define MAX_SEGMENTS		8

const char *
cosid_codec_kind_name(CosidCodecKind k)
{
	return (unsigned) k < (unsigned) KIND_COUNT ? kind_names[k] : NULL;
}

/* Where the walk stands, for error paths: prefix[index].seg.seg... */
typedef struct CodecWalk
{
	const char *prefix;
	int			index;			/* -1: the list itself */
	int			nseg;
	const char *seg[MAX_SEGMENTS];
	CosidAlloc	alloc;
	void	   *alloc_ctx;
	char	   *path;
	size_t		pathlen;
	char	   *msg;
	size_t		msglen;
} CodecWalk;

static void
walk_push(CodecWalk *w, const char *seg)
{
	if (w->nseg < MAX_SEGMENTS)
		w->seg[w->nseg] = seg;
	w->nseg++;
}

static void
walk_pop(CodecWalk *w)
{
	w->nseg--;
}

/* Write the current path, and msg when text is not NULL; returns false. */
static bool
walk_fail(CodecWalk *w, const char *text)
{
	size_t		pos = 0;
	char		num[24];

	if (w->path != NULL && w->pathlen > 0)
		w->path[0] = '\0';
	if (w->prefix != NULL)
		cosid_buf_append(w->path, w->pathlen, &pos, w->prefix,
						 strlen(w->prefix));
	if (w->index >= 0)
	{
		int			n = snprintf(num, sizeof(num), "[%d]", w->index);

		cosid_buf_append(w->path, w->pathlen, &pos, num, (size_t) n);
	}
	for (int i = 0; i < w->nseg && i < MAX_SEGMENTS; i++)
	{
		cosid_buf_append(w->path, w->pathlen, &pos, ".", 1);
		cosid_buf_append(w->path, w->pathlen, &pos, w->seg[i],
						 strlen(w->seg[i]));
	}
	if (text != NULL)
		set_msg(w->msg, w->msglen, text);
	return false;
}

/*
 * A default string, copied into the caller's arena like every string the
 * parser returns.  NULL when that fails, with "out of memory" at the list's
 * path, as the JSON parser reports it.
 */
static const char *
walk_strdup(CodecWalk *w, const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *copy = w->alloc(w->alloc_ctx, n);

	if (copy == NULL)
	{
		CodecWalk	top = *w;

		top.index = -1;
		top.nseg = 0;
		walk_fail(&top, "out of memory");
		return NULL;
	}
	memcpy(copy, s, n);
	return copy;
}

/* Fail at the key `seg` below the current path. */
static bool
walk_fail_at(CodecWalk *w, const char *seg, const char *text)
{
	walk_push(w, seg);
	walk_fail(w, text);
	walk_pop(w);
	return false;
}

static bool
get_int(CodecWalk *w, const CosidJsonValue *v, int lo, int hi, int *out)
{
	if (v->type == COSID_JSON_NUMBER && v->int_fits &&
		v->integer >= lo && v->integer <= hi)
	{
		*out = (int) v->integer;
		return true;
	}
	if (w->msg != NULL && w->msglen > 0)
	{
		if (v->type == COSID_JSON_NUMBER && !v->is_integer)
			snprintf(w->msg, w->msglen,
					 "expected an integer from %d to %d, not a fraction or exponent",
					 lo, hi);
		else
			snprintf(w->msg, w->msglen, "expected an integer from %d to %d",
					 lo, hi);
	}
	return walk_fail(w, NULL);
}

static bool
get_bool(CodecWalk *w, const CosidJsonValue *v, bool *out)
{
	if (v->type == COSID_JSON_TRUE || v->type == COSID_JSON_FALSE)
	{
		*out = v->type == COSID_JSON_TRUE;
		return true;
	}
	return walk_fail(w, "expected true or false");
}

/* A string of min..max bytes (JSON strings never hold a NUL). */
static bool
get_string(CodecWalk *w, const CosidJsonValue *v, size_t min, size_t max,
		   const char **out)
{
	if (v->type == COSID_JSON_STRING && v->str_len >= min &&
		v->str_len <= max && strlen(v->str) == v->str_len)
	{
		*out = v->str;
		return true;
	}
	if (w->msg != NULL && w->msglen > 0)
	{
		if (min > 0)
			snprintf(w->msg, w->msglen,
					 "expected a non-empty string of at most %zu bytes", max);
		else
			snprintf(w->msg, w->msglen,
					 "expected a string of at most %zu bytes", max);
	}
	return walk_fail(w, NULL);
}

static bool
get_zone(CodecWalk *w, const CosidJsonValue *v, const char **out)
{
	if (v->type == COSID_JSON_STRING && v->str_len >= 1 &&
		v->str_len <= MAX_ZONE_BYTES)
	{
		bool		ok = true;

		for (size_t i = 0; i < v->str_len; i++)
			if ((unsigned char) v->str[i] <= 0x20 ||
				(unsigned char) v->str[i] >= 0x7F)
				ok = false;
		if (ok)
		{
			*out = v->str;
			return true;
		}
	}
	return walk_fail(w, "expected a time zone name: 1 to 64 printable ASCII characters without spaces");
}

/* ASCII case-insensitive equality with a lower-case word. */
static bool
equals_word(const CosidJsonValue *v, const char *word)
{
	size_t		n = strlen(word);

	if (v->type != COSID_JSON_STRING || v->str_len != n)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		char		c = v->str[i];

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if (c != word[i])
			return false;
	}
	return true;
}

/* Index of key in a NULL-terminated list, or -1. */
static int
key_index(const char *key, const char *const *keys)
{
	for (int i = 0; keys[i] != NULL; i++)
		if (strcmp(key, keys[i]) == 0)
			return i;
	return -1;
}

static bool
unknown_key(CodecWalk *w, const CosidJsonValue *m, const char *expected)
{
	walk_push(w, m->key);
	walk_fail(w, NULL);
	walk_pop(w);
	if (w->msg != NULL && w->msglen > 0)
		snprintf(w->msg, w->msglen, "unknown key; expected %s", expected);
	return false;
}

#define RADIX_RANGE_MSG "expected an integer from 2 to 62"

/*
 * A radix spec: a number (the radix) or an object with "radix" and, unless
 * parts, "width" and "pad-start".  The walk stands at the spec's key.
 */
static bool
parse_radix_spec(CodecWalk *w, const CosidJsonValue *v, bool parts,
				 CosidRadix *r)
{
	static const char *const keys[] = {"radix", "width", "pad-start", NULL};
	bool		has_radix = false;
	bool		has_width = false;

	r->pad_start = parts;
	if (v->type == COSID_JSON_NUMBER)
	{
		if (!get_int(w, v, COSID_RADIX_MIN, COSID_RADIX_MAX, &r->radix))
			return false;
		r->width = cosid_radix_default_width(r->radix);
		return true;
	}
	if (v->type != COSID_JSON_OBJECT)
		return walk_fail(w, RADIX_RANGE_MSG " or an object");

	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0 || (parts && k > 0))
			return unknown_key(w, m, parts ? "\"radix\"" :
							   "\"radix\", \"width\" or \"pad-start\"");
		walk_push(w, m->key);
		if (k == 0)
		{
			ok = get_int(w, m, COSID_RADIX_MIN, COSID_RADIX_MAX, &r->radix);
			has_radix = true;
		}
		else if (k == 1)
		{
			ok = get_int(w, m, 1, 64, &r->width);
			has_width = true;
		}
		else
			ok = get_bool(w, m, &r->pad_start);
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (!has_radix)
		return walk_fail_at(w, "radix", "missing; " RADIX_RANGE_MSG);
	if (!has_width)
		r->width = cosid_radix_default_width(r->radix);
	return true;
}

static bool
expect_object(CodecWalk *w, const CosidJsonValue *v)
{
	if (v->type == COSID_JSON_OBJECT)
		return true;
	return walk_fail(w, "expected an object");
}

/* friendly and parts-friendly: zone, pad-start and (friendly) layout. */
static bool
parse_friendly(CodecWalk *w, const CosidJsonValue *v, bool parts,
			   CosidCodecItem *it)
{
	static const char *const keys[] = {"zone", "pad-start", "layout", NULL};

	it->pad_start = true;
	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0 || (parts && k == 2))
			return unknown_key(w, m, parts ? "\"zone\" or \"pad-start\"" :
							   "\"zone\", \"pad-start\" or \"layout\"");
		walk_push(w, m->key);
		if (k == 0)
			ok = get_zone(w, m, &it->zone);
		else if (k == 1)
			ok = get_bool(w, m, &it->pad_start);
		else if (m->type != COSID_JSON_STRING ||
				 !cosid_preset_find(m->str, &it->layout))
		{
			char		list[160];
			size_t		pos = 0;

			list[0] = '\0';
			for (int p = 0; p < COSID_PRESET_COUNT; p++)
			{
				const char *name = cosid_preset_name((CosidPreset) p);

				if (p > 0)
					cosid_buf_append(list, sizeof(list), &pos,
									 p == COSID_PRESET_COUNT - 1 ? " or " : ", ",
									 p == COSID_PRESET_COUNT - 1 ? 4 : 2);
				cosid_buf_append(list, sizeof(list), &pos, name, strlen(name));
			}
			walk_fail(w, NULL);
			if (w->msg != NULL && w->msglen > 0)
				snprintf(w->msg, w->msglen, "expected a layout: %s", list);
			ok = false;
		}
		else
			it->has_layout = true;
		walk_pop(w);
		if (!ok)
			return false;
	}
	return true;
}

static bool
parse_custom(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	static const char *const keys[] = {"encode", "decode", NULL};

	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok;

		if (k < 0)
			return unknown_key(w, m, "\"encode\" and \"decode\"");
		walk_push(w, m->key);
		ok = get_string(w, m, 1, MAX_FUNCTION_BYTES,
						k == 0 ? &it->encode_fn : &it->decode_fn);
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (it->encode_fn == NULL)
		return walk_fail_at(w, "encode",
							"missing; expected a function such as \"f(bigint)\"");
	if (it->decode_fn == NULL)
		return walk_fail_at(w, "decode",
							"missing; expected a function such as \"g(text)\"");
	return true;
}

/* grouped's "value": {"radix": spec}. */
static bool
parse_grouped_value(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	bool		ok;

	if (v->type != COSID_JSON_OBJECT)
		return walk_fail(w, "expected an object {\"radix\": ...}");
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
		if (strcmp(m->key, "radix") != 0)
			return unknown_key(w, m, "\"radix\"");
	if (v->count != 1)
		return walk_fail(w, "expected an object {\"radix\": ...}");
	walk_push(w, "radix");
	ok = parse_radix_spec(w, v->first, false, &it->radix);
	walk_pop(w);
	it->value_is_radix = ok;
	return ok;
}

static bool
parse_grouped(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	static const char *const keys[] = {"delimiter", "value", "group", NULL};

	it->group = COSID_GROUP_DAY;
	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0)
			return unknown_key(w, m, "\"delimiter\", \"value\" or \"group\"");
		walk_push(w, m->key);
		if (k == 0)
			ok = get_string(w, m, 0, MAX_AFFIX_BYTES, &it->delimiter);
		else if (k == 1)
			ok = parse_grouped_value(w, m, it);
		else if (equals_word(m, "day"))
			it->group = COSID_GROUP_DAY;
		else if (equals_word(m, "month"))
			it->group = COSID_GROUP_MONTH;
		else if (equals_word(m, "year"))
			it->group = COSID_GROUP_YEAR;
		else
			ok = walk_fail(w, "expected \"day\", \"month\" or \"year\"");
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (it->delimiter == NULL && (it->delimiter = walk_strdup(w, "-")) == NULL)
		return false;
	return true;
}

static bool
parse_date_prefix(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	static const char *const keys[] = {"pattern", "delimiter", "source",
	"zone", NULL};

	it->pattern_len = 8;
	if (!expect_object(w, v))
		return false;
	for (const CosidJsonValue *m = v->first; m != NULL; m = m->next)
	{
		int			k = key_index(m->key, keys);
		bool		ok = true;

		if (k < 0)
			return unknown_key(w, m,
							   "\"pattern\", \"delimiter\", \"source\" or \"zone\"");
		walk_push(w, m->key);
		if (k == 0)
		{
			if (m->type != COSID_JSON_STRING || m->str_len > MAX_PATTERN_BYTES)
				ok = walk_fail(w, "expected a date pattern of at most 32 bytes");
			else
			{
				it->pattern_len = cosid_date_pattern_check(m->str, w->msg,
														   w->msglen);
				if (it->pattern_len < 0)
					ok = walk_fail(w, NULL);
				else
					it->pattern = m->str;
			}
		}
		else if (k == 1)
			ok = get_string(w, m, 0, MAX_AFFIX_BYTES, &it->delimiter);
		else if (k == 2)
		{
			it->has_source = true;
			if (equals_word(m, "id_time"))
				it->source = COSID_SOURCE_ID_TIME;
			else if (equals_word(m, "now"))
				it->source = COSID_SOURCE_NOW;
			else
				ok = walk_fail(w, "expected \"ID_TIME\" or \"NOW\"");
		}
		else
			ok = get_zone(w, m, &it->zone);
		walk_pop(w);
		if (!ok)
			return false;
	}
	if (it->pattern == NULL &&
		(it->pattern = walk_strdup(w, "yyyyMMdd")) == NULL)
		return false;
	if (it->delimiter == NULL && (it->delimiter = walk_strdup(w, "")) == NULL)
		return false;
	return true;
}

static bool
parse_item(CodecWalk *w, const CosidJsonValue *v, CosidCodecItem *it)
{
	const CosidJsonValue *m;
	int			k = -1;
	bool		ok;

	if (v->type != COSID_JSON_OBJECT || v->count != 1)
		return walk_fail(w, "expected an object with one key naming the item: "
						 KIND_LIST);
	m = v->first;
	for (int i = 0; i < KIND_COUNT; i++)
		if (strcmp(m->key, kind_names[i]) == 0)
			k = i;
	if (k < 0)
		return walk_fail_at(w, m->key, "unknown codec item; expected " KIND_LIST);

	it->kind = (CosidCodecKind) k;
	walk_push(w, m->key);
	if (k <= COSID_CODEC_GROUPED && w->index > 0)
		ok = walk_fail(w, "must be the first item: radix, friendly, custom, "
					   "parts-radix, parts-friendly and grouped turn the number into text");
	else
	{
		switch (it->kind)
		{
			case COSID_CODEC_RADIX:
				ok = parse_radix_spec(w, m, false, &it->radix);
				break;
			case COSID_CODEC_PARTS_RADIX:
				ok = parse_radix_spec(w, m, true, &it->radix);
				break;
			case COSID_CODEC_FRIENDLY:
				ok = parse_friendly(w, m, false, it);
				break;
			case COSID_CODEC_PARTS_FRIENDLY:
				ok = parse_friendly(w, m, true, it);
				break;
			case COSID_CODEC_CUSTOM:
				ok = parse_custom(w, m, it);
				break;
			case COSID_CODEC_GROUPED:
				ok = parse_grouped(w, m, it);
				break;
			case COSID_CODEC_PREFIX:
			case COSID_CODEC_SUFFIX:
				ok = get_string(w, m, 0, MAX_AFFIX_BYTES, &it->text);
				break;
			case COSID_CODEC_DATE_PREFIX:
				ok = parse_date_prefix(w, m, it);
				break;
			default:
				ok = false;
				break;
		}
	}
	walk_pop(w);
	return ok;
}

bool
cosid_codec_parse(const char *json, size_t len, const char *path_prefix,
				  CosidAlloc alloc, void *alloc_ctx, CosidCodec *out,
				  char *path, size_t pathlen, char *msg, size_t msglen)
{
	CosidJsonValue *root;
	CodecWalk	w;
	int			i = 0;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	w.prefix = path_prefix;
	w.index = -1;
	w.alloc = alloc;
	w.alloc_ctx = alloc_ctx;
	w.path = path;
	w.pathlen = pathlen;
	w.msg = msg;
	w.msglen = msglen;
	if (path != NULL && pathlen > 0)
		path[0] = '\0';
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';

	root = cosid_json_parse(json, len, alloc, alloc_ctx, path_prefix,
							path, pathlen, msg, msglen);
	if (root == NULL)
		return false;
	if (root->type != COSID_JSON_ARRAY)
		return walk_fail(&w, "expected an array of codec items");
	if (root->count > COSID_CODEC_MAX_ITEMS)
	{
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "expected at most %d items",
					 COSID_CODEC_MAX_ITEMS);
		return walk_fail(&w, NULL);
	}

	for (const CosidJsonValue *e = root->first; e != NULL; e = e->next, i++)
	{
		w.index = i;
		w.nseg = 0;
		if (!parse_item(&w, e, &out->items[i]))
			return false;
	}
	out->nitems = root->count;
	return true;
}

/*
 * parts.c - parts-radix text (no PostgreSQL): three fixed-width radix
 * numbers, concatenated, with radix.c's digit helpers.  The canonical forms
 * and the order of a decoder's checks are in radix.h.
 *
 * Owns: the parts' widths, and parts-radix encode and decode.
 * Must not: write or read digits itself (radix.c does), or know codec
 * lists.
 */
#include "parts.h"
#include "text.h"

#include <stdio.h>

/* ---------- parts-radix text ---------- */

static bool
parts_widths(const CosidLayout *l, int radix, int w[3])
{
	if (!cosid_layout_bits_ok(l) || radix < COSID_RADIX_MIN || radix > COSID_RADIX_MAX)
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
	if (time < 0 || (uint64_t) time > cosid_max_of_bits(l->time_bits) ||
		node < 0 || (uint64_t) node > cosid_max_of_bits(l->node_bits) ||
		seq < 0 || (uint64_t) seq > cosid_max_of_bits(l->seq_bits))
		return -1;
	n += cosid_put_radix(buf + n, (uint64_t) time, radix, w[0]);
	n += cosid_put_radix(buf + n, (uint64_t) node, radix, w[1]);
	n += cosid_put_radix(buf + n, (uint64_t) seq, radix, w[2]);
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
		cosid_set_msg(msg, msglen, "invalid layout or radix");
		return COSID_DECODE_SYNTAX;
	}
	bad = cosid_first_bad_digit(s, len, radix);
	if (bad < len)
	{
		cosid_bad_digit_msg(msg, msglen, bad, (unsigned char) s[bad], radix);
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
		if (!cosid_radix_value(s + off, (size_t) w[k], radix, cosid_max_of_bits(bits[k]),
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

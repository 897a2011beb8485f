/*
 * text.c - the helpers of text.h (no PostgreSQL): messages and digits that
 * the codec files of src/core share.
 *
 * Owns: those helpers, and nothing else.
 * Must not: keep state, or depend on another file of src/core.
 */
#include "text.h"

#include <stdio.h>

void
cosid_set_msg(char *msg, size_t msglen, const char *text)
{
	if (msg != NULL && msglen > 0)
		snprintf(msg, msglen, "%s", text);
}

/* A byte for a message: "x" when printable ASCII, else 0xNN. */
void
cosid_describe_char(unsigned char c, char out[8])
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
void
cosid_bad_digit_msg(char *msg, size_t msglen, size_t pos, unsigned char c, int radix)
{
	char		d[8];

	if (msg == NULL || msglen == 0)
		return;
	cosid_describe_char(c, d);
	if (radix <= 36 && c >= 'a' && c <= 'z')
		snprintf(msg, msglen,
				 "character %zu (%s) is not a base-%d digit (upper case only)",
				 pos + 1, d, radix);
	else
		snprintf(msg, msglen, "character %zu (%s) is not a base-%d digit",
				 pos + 1, d, radix);
}

/*
 * text.c - the helpers of text.h (no PostgreSQL): messages, digits, words,
 * keys and UTF-8 cuts that the files of src/core share.
 *
 * Owns: those helpers, and nothing else.
 * Must not: keep state, or depend on another file of src/core.
 */
#include "text.h"

#include <stdio.h>
#include <string.h>

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

/* Bytes of the UTF-8 character a lead byte starts (1 for a stray byte). */
static size_t
utf8_len(unsigned char c)
{
	if (c >= 0xF0 && c <= 0xF7)
		return 4;
	if (c >= 0xE0)
		return c <= 0xEF ? 3 : 1;
	if (c >= 0xC0)
		return 2;
	return 1;
}

size_t
cosid_utf8_trim(const char *s, size_t n)
{
	size_t		last;

	if (n == 0)
		return 0;
	/* back to the lead byte of the last character */
	last = n - 1;
	while (last > 0 && ((unsigned char) s[last] & 0xC0) == 0x80)
		last--;
	return utf8_len((unsigned char) s[last]) > n - last ? last : n;
}

bool
cosid_word_eq(const char *s, const char *word)
{
	for (;; s++, word++)
	{
		unsigned char a = (unsigned char) *s;
		unsigned char b = (unsigned char) *word;

		if (a >= 'A' && a <= 'Z')
			a = (unsigned char) (a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (unsigned char) (b - 'A' + 'a');
		if (a != b)
			return false;
		if (a == '\0')
			return true;
	}
}

int
cosid_key_index(const char *key, const char *const *keys)
{
	for (int i = 0; keys[i] != NULL; i++)
		if (strcmp(key, keys[i]) == 0)
			return i;
	return -1;
}

/*
 * formats/utf8.c - names as valid UTF-8 for the formats that require it
 * (JSON, XML/SVG, protobuf strings, CTF strings read as UTF-8): process
 * and thread names are whatever bytes a program gave prctl(PR_SET_NAME),
 * and function names whatever its symbol table holds (formats/formats.h).
 *
 * Well-formed is RFC 3629's definition (Unicode's Table 3-7): no overlong
 * forms, no surrogates, nothing above U+10FFFF.  A byte that does not begin
 * a well-formed sequence becomes the text "\xNN" (two lower-case hex
 * digits), as `ps` and systemd show such names: readable, and the bytes can
 * be told apart.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

size_t fmt_utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80
			       ? 4
			       : 0;
	}
	return 0;
}

const char *fmt_utf8(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, o = 0;

	for (;;) { /* the common case: already valid, no copy */
		if (!*p)
			return s;
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (!(n = fmt_utf8_seq(p)))
			break;
		p += n;
	}
	if (!len)
		return "";
	for (p = (const unsigned char *)s; *p;) {
		n = fmt_utf8_seq(p);
		if (n) {
			if (o + n >= len)
				break;
			memcpy(buf + o, p, n);
			o += n;
			p += n;
			continue;
		}
		if (o + 4 >= len)
			break;
		buf[o++] = '\\';
		buf[o++] = 'x';
		buf[o++] = "0123456789abcdef"[*p >> 4];
		buf[o++] = "0123456789abcdef"[*p & 15];
		p++;
	}
	buf[o] = 0;
	return buf;
}

const char *fmt_utf8_any(const char *s, char *small, size_t len, char **heap)
{
	const char *v = fmt_utf8(s, small, len);
	size_t need;

	*heap = NULL;
	if (v == s || (need = strlen(s) * 4 + 1) <= len)
		return v;
	*heap = malloc(need); /* repaired, and too long for @small */
	return *heap ? fmt_utf8(s, *heap, need) : v;
}

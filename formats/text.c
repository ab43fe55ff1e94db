/*
 * formats/text.c - numbers for text output without printf: decimal and hex
 * integers for the hot loops of print, kd and export, and microseconds with
 * three decimals as kd, addr2sym and graph show times (formats/formats.h).
 */
#include <inttypes.h>
#include <string.h>

#include "formats/formats.h"

/* The decimal digits of @v at the end of @t[20]; returns where they start. */
static inline int digits(char t[20], uint64_t v)
{
	int i = 20;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return i;
}

char *fmt_u64_to(char *p, uint64_t v)
{
	char t[20];
	int i = digits(t, v);

	memcpy(p, t + i, (size_t)(20 - i));
	return p + 20 - i;
}

char *fmt_hex_to(char *p, uint64_t v)
{
	char t[16];
	int i = 16;

	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*p++ = '0';
	*p++ = 'x';
	memcpy(p, t + i, (size_t)(16 - i));
	return p + 16 - i;
}

void fmt_put_u64(FILE *out, uint64_t v)
{
	char t[20];
	int i = digits(t, v);

	fwrite_unlocked(t + i, 1, (size_t)(20 - i), out);
}

void fmt_put_hex(FILE *out, uint64_t v)
{
	char t[18];

	fwrite_unlocked(t, 1, (size_t)(fmt_hex_to(t, v) - t), out);
}

const char *fmt_us(int64_t ns, int whole, char *buf, size_t len)
{
	uint64_t u = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	char t[32], *p = t;

	if (ns < 0)
		*p++ = '-';
	p = fmt_u64_to(p, u / 1000);
	if (!whole) {
		unsigned f = (unsigned)(u % 1000);

		*p++ = '.';
		*p++ = (char)('0' + f / 100);
		*p++ = (char)('0' + f / 10 % 10);
		*p++ = (char)('0' + f % 10);
	}
	*p = '\0';
	if (len) {
		size_t n = (size_t)(p - t) < len ? (size_t)(p - t) : len - 1;

		memcpy(buf, t, n);
		buf[n] = '\0';
	}
	return buf;
}

void fmt_line_pad(struct fmt_line *l, const char *s, int width)
{
	static const char spaces[] = "                                ";
	size_t n = strlen(s), w = (size_t)(width < 0 ? -(int64_t)width : width), pad = n < w ? w - n : 0;

	for (size_t k; width > 0 && pad; pad -= k)
		fmt_line_put(l, spaces, k = pad < sizeof(spaces) - 1 ? pad : sizeof(spaces) - 1);
	fmt_line_put(l, s, n);
	for (size_t k; width < 0 && pad; pad -= k)
		fmt_line_put(l, spaces, k = pad < sizeof(spaces) - 1 ? pad : sizeof(spaces) - 1);
}

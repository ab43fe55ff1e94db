/*
 * formats/text.c - numbers for text output without printf: decimal and hex
 * integers for the hot loops of print, kd and export, and microseconds with
 * three decimals as kd, addr2sym and graph show times (formats/formats.h).
 */
#include <inttypes.h>

#include "formats/formats.h"

void fmt_put_u64(FILE *out, uint64_t v)
{
	char t[24];
	int i = 24;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(t + i, 1, (size_t)(24 - i), out);
}

void fmt_put_hex(FILE *out, uint64_t v)
{
	char t[24];
	int i = 24;

	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	t[--i] = 'x';
	t[--i] = '0';
	fwrite_unlocked(t + i, 1, (size_t)(24 - i), out);
}

const char *fmt_us(int64_t ns, int whole, char *buf, size_t len)
{
	uint64_t u = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";

	if (whole)
		snprintf(buf, len, "%s%" PRIu64, sign, u / 1000);
	else
		snprintf(buf, len, "%s%" PRIu64 ".%03u", sign, u / 1000, (unsigned)(u % 1000));
	return buf;
}

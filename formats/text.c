/*
 * formats/text.c - numbers for text output without printf: decimal and hex
 * integers for the hot loops of print, kd and export, and microseconds with
 * three decimals as kd, addr2sym and graph show times (formats/formats.h).
 */
#include <inttypes.h>
#include <string.h>

#include "formats/formats.h"

/* "00" .. "99": two digits a division */
static const char pairs[201] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

/* The number of decimal digits of @v (1..20). */
static inline int ndigits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12; /* log10(2) ~ 1233 / 4096 */

	return v ? t - (v < pow10[t]) + 1 : 1;
}

/* The decimal digits of @v, written backwards so that they end at @e. */
static inline void digits_before(char *e, uint64_t v)
{
	uint32_t w;

	for (; v >= 100000000; v /= 100000000) { /* 8 digits at a time in 32-bit arithmetic */
		w = (uint32_t)(v % 100000000);
		for (int k = 0; k < 4; k++, w /= 100) {
			e -= 2;
			memcpy(e, pairs + 2 * (w % 100), 2);
		}
	}
	for (w = (uint32_t)v; w >= 100; w /= 100) {
		e -= 2;
		memcpy(e, pairs + 2 * (w % 100), 2);
	}
	if (w >= 10)
		memcpy(e - 2, pairs + 2 * w, 2);
	else
		e[-1] = (char)('0' + w);
}

char *fmt_u64_to(char *p, uint64_t v)
{
	char *e = p + ndigits(v);

	digits_before(e, v);
	return e;
}

/* "00" .. "ff": a byte a step */
static const char hexpairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

char *fmt_hex_to(char *p, uint64_t v)
{
	int n = (64 - __builtin_clzll(v | 1) + 3) / 4; /* hex digits, at least 1 */
	char *e;

	*p++ = '0';
	*p++ = 'x';
	e = p + n;
	for (; v >= 16; v >>= 8) {
		e -= 2;
		memcpy(e, hexpairs + 2 * (v & 255), 2);
	}
	if (e > p)
		e[-1] = "0123456789abcdef"[v];
	return p + n;
}

void fmt_put_u64(FILE *out, uint64_t v)
{
	char t[20];

	fwrite_unlocked(t, 1, (size_t)(fmt_u64_to(t, v) - t), out);
}

void fmt_put_hex(FILE *out, uint64_t v)
{
	char t[18];

	fwrite_unlocked(t, 1, (size_t)(fmt_hex_to(t, v) - t), out);
}

char *fmt_rjust_to(char *p, const char *s, size_t n, size_t width)
{
	for (; n < width; width--)
		*p++ = ' ';
	memcpy(p, s, n);
	return p + n;
}

char *fmt_us_to(char *p, int64_t ns, int whole)
{
	uint64_t u = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

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
	return p;
}

const char *fmt_us(int64_t ns, int whole, char *buf, size_t len)
{
	char t[32], *p = fmt_us_to(t, ns, whole);

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

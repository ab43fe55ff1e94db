/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/text.c - bounded text building without libc (see text.h).
 */
#include "text.h"

void kft_buf_init(struct kft_buf *b, char *p, kt_u32 size)
{
	b->p = p;
	b->size = size;
	b->len = 0;
	if (size)
		p[0] = '\0';
}

void kft_buf_char(struct kft_buf *b, char c)
{
	if (b->size && b->len < b->size - 1) {
		b->p[b->len] = c;
		b->p[b->len + 1] = '\0';
	}
	b->len++;
}

void kft_buf_mem(struct kft_buf *b, const char *s, kt_u32 n)
{
	for (kt_u32 i = 0; i < n; i++)
		kft_buf_char(b, s[i]);
}

void kft_buf_str(struct kft_buf *b, const char *s)
{
	while (*s)
		kft_buf_char(b, *s++);
}

void kft_buf_u64(struct kft_buf *b, kt_u64 v)
{
	char d[20];
	int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		kft_buf_char(b, d[--n]);
}

void kft_buf_hex(struct kft_buf *b, kt_u64 v)
{
	static const char digits[] = "0123456789abcdef";
	char d[16];
	int n = 0;

	do {
		d[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	kft_buf_str(b, "0x");
	while (n)
		kft_buf_char(b, d[--n]);
}

void kft_buf_quote(struct kft_buf *b, const char *s, kt_u32 n)
{
	kt_u32 i, max = n > 32 ? 32 : n;

	kft_buf_char(b, '\'');
	for (i = 0; i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		kft_buf_char(b, (c < 0x20 || c == 0x7f) ? '?' : (char)c);
	}
	if (n > max)
		kft_buf_str(b, "...");
	kft_buf_char(b, '\'');
}

kt_u32 kft_strlen(const char *s)
{
	kt_u32 n = 0;

	while (s[n])
		n++;
	return n;
}

int kft_memeq(const char *a, const char *b, kt_u32 n)
{
	for (kt_u32 i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

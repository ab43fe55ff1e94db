/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/text.h - bounded text building for the freestanding KFT engine.
 *
 * The engine formats error messages, configurations and status reports
 * without libc (no snprintf in the kernel-shared core).  A struct kft_buf
 * appends into a caller's buffer, always NUL-terminates, truncates
 * silently, and counts the length the whole text would need, so callers
 * get snprintf's contract: result >= size means truncated.
 */
#ifndef KFT_TEXT_H
#define KFT_TEXT_H

#include "kft.h"

struct kft_buf {
	char *p;
	kt_u32 size; /* bytes of @p, NUL included */
	kt_u32 len;  /* length the text needs so far (may exceed size - 1) */
};

/* Start building into @p (@size bytes; @size 0 only counts). */
void kft_buf_init(struct kft_buf *b, char *p, kt_u32 size);
void kft_buf_char(struct kft_buf *b, char c);
void kft_buf_mem(struct kft_buf *b, const char *s, kt_u32 n);
void kft_buf_str(struct kft_buf *b, const char *s);
void kft_buf_u64(struct kft_buf *b, kt_u64 v);     /* decimal */
void kft_buf_hex(struct kft_buf *b, kt_u64 v);     /* 0x..., lowercase */
/* A quoted excerpt of input: at most 32 bytes, non-printable bytes as '?'. */
void kft_buf_quote(struct kft_buf *b, const char *s, kt_u32 n);

/* Byte-wise string helpers (no libc). */
kt_u32 kft_strlen(const char *s);
int kft_memeq(const char *a, const char *b, kt_u32 n);

#endif /* KFT_TEXT_H */

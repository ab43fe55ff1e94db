/*
 * tests/reader_zframe.c - the compressed frames' codec (reader/zframe.c):
 * sub-buffers of random records of every class, thread streams and shared
 * ones (context words, a reservation marker that stops the column
 * transform), an empty one and one of random bytes, go through kz_frame()
 * and come back byte for byte from kz_decode(); the checks refuse what a
 * damaged frame says; a flipped byte of compressed data is an error
 * (zstd's checksum), never other records.
 */
#include <stdlib.h>
#include <string.h>

#include "reader/zframe.h"
#include "tap.h"

#define BS 65536u

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A closed sub-buffer of @nrec-ish records at @sb (BS bytes); returns records not internal. */
static uint32_t fill(uint8_t *sb, uint64_t seq, int ctx, int marker, uint32_t want)
{
	struct ktrace_subbuf *h = (struct ktrace_subbuf *)sb;
	uint64_t off = KTRACE_SUBBUF_HDR_SIZE, ts = (1ull << 40) - 5000 + seq * 777; /* wraps */
	uint32_t n = 0;

	memset(sb, 0, BS);
	h->magic = KTRACE_SUBBUF_MAGIC;
	h->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	h->flags = KTRACE_SBF_CLOSED | (ctx ? KTRACE_SBF_CTX | KTRACE_SBF_ORDERED : 0);
	h->seq = seq;
	h->first_ts = ts;
	for (uint32_t i = 0; i < want; i++) {
		static const unsigned cls[] = { KTRACE_CLASS_CALL, KTRACE_CLASS_CALL, KTRACE_CLASS_CALL,
						KTRACE_CLASS_LOG2, KTRACE_CLASS_LOG4,
						KTRACE_CLASS_INTERNAL, KTRACE_CLASS_KEVENT };
		unsigned c = cls[next() % 7];
		unsigned words = c == KTRACE_CLASS_CALL ? 1 + (next() % 8 == 0)
			       : c == KTRACE_CLASS_KEVENT ? 1 + (unsigned)(next() % 6)
			       : c == KTRACE_CLASS_INTERNAL ? 1 : 2;
		uint64_t len = 8 + 8 * (uint64_t)ctx + 8 * (uint64_t)words, w;

		if (off + len > BS)
			break;
		ts += next() % 3000;
		w = (ts & KTRACE_TS_MASK) | (uint64_t)words << 40 | (uint64_t)c << 44 |
		    (next() % 700) << 48;
		if (marker && i == want / 2)
			w = KTRACE_REC_TS(ts) | (uint64_t)words << 40 | 0xffffull << 48; /* class 0 */
		memcpy(sb + off, &w, 8);
		for (unsigned k = 0; k < ctx + words; k++) {
			uint64_t v = (next() % 50000) | (next() % 4) << 40 | (uint64_t)(next() % 9) << 32;

			memcpy(sb + off + 8 + 8 * k, &v, 8);
		}
		off += len;
		n += c != KTRACE_CLASS_INTERNAL;
	}
	h->used = (uint32_t)(off - KTRACE_SUBBUF_HDR_SIZE);
	h->nrec = ctx ? 0 : n;
	h->last_ts = ts;
	return n;
}

int main(void)
{
	static uint8_t sbs[6][BS], out[BS];
	const struct ktrace_subbuf *sb[6];
	uint32_t rec[6];
	struct kz_enc *z = kz_enc_new(1, BS, 16);
	struct kz_dec *d = kz_dec_new(BS);
	const struct ktrace_zframe *f;
	const uint8_t *frame;
	uint8_t *copy;
	size_t len;
	char why[160];
	int all = 1;

	plan(16);
	ok(z && d, "encoder and decoder made");
	rec[0] = fill(sbs[0], 10, 0, 0, 3000);             /* thread stream */
	rec[1] = fill(sbs[1], 11, 1, 0, 2000);             /* shared stream */
	rec[2] = fill(sbs[2], 12, 1, 1, 2000);             /* shared, with a marker */
	rec[3] = fill(sbs[3], 13, 0, 0, 0);                /* empty */
	rec[4] = fill(sbs[4], 14, 0, 0, 100);              /* then random bytes as records */
	for (size_t i = KTRACE_SUBBUF_HDR_SIZE; i < BS; i++)
		sbs[4][i] = (uint8_t)next();
	((struct ktrace_subbuf *)sbs[4])->used = BS - KTRACE_SUBBUF_HDR_SIZE;
	rec[5] = fill(sbs[5], 15, 0, 0, 100000);           /* full */
	for (int i = 0; i < 6; i++)
		sb[i] = (const struct ktrace_subbuf *)sbs[i];
	len = kz_frame(z, sb, rec, 6, &frame);
	f = (const struct ktrace_zframe *)frame;
	ok(len && len % 4096 == 0 && (uintptr_t)frame % 4096 == 0,
	   "a frame of 6 sub-buffers: %zu bytes, aligned for O_DIRECT", len);
	ok(!kz_check_frame(f, len, why, sizeof(why)) && f->nsub == 6, "its header checks");
	ok(kz_check_frame(f, len - 4096, why, sizeof(why)) != NULL, "cut short, it does not: %s", why);
	for (int i = 0; i < 6; i++) {
		const struct ktrace_zentry *e = (const void *)(frame + f->hdr_size + i * f->entry_size);
		const char *bad = kz_check_entry(e, f->len, BS, why, sizeof(why));

		if (bad || kz_decode(d, e, frame + e->zoff, out, why, sizeof(why)) ||
		    memcmp(out, sbs[i] + KTRACE_SUBBUF_HDR_SIZE, sb[i]->used) ||
		    memcmp(&e->hdr, sb[i], sizeof(e->hdr)) || e->records != rec[i]) {
			diag("sub-buffer %d: %s", i, bad ? bad : why);
			all = 0;
		}
		if (i == 0)
			ok(e->xform == KTRACE_ZXFORM_SPLIT && e->codec == KTRACE_ZCODEC_ZSTD &&
				   e->zlen < sb[0]->used,
			   "thread stream: columns and zstd, %u -> %u bytes", sb[0]->used, e->zlen);
		if (i == 1)
			ok(e->xform == KTRACE_ZXFORM_SPLIT, "shared stream (context words): columns");
		if (i == 2)
			ok(e->xform == KTRACE_ZXFORM_NONE && e->codec == KTRACE_ZCODEC_ZSTD,
			   "a reservation marker: no columns, zstd alone");
		if (i == 3)
			ok(e->zlen == 0, "empty sub-buffer: no data");
		if (i == 4)
			ok(e->codec == KTRACE_ZCODEC_STORED && e->zlen == sb[4]->used,
			   "random bytes: stored as they were");
	}
	ok(all, "every sub-buffer decodes to its records byte for byte, header and count kept");

	/* damage: a copy of the frame with one byte of sub-buffer 0's data flipped */
	copy = malloc(len);
	memcpy(copy, frame, len);
	{
		struct ktrace_zentry *e = (void *)(copy + f->hdr_size);

		copy[e->zoff + e->zlen / 2] ^= 0x40;
		ok(kz_decode(d, e, copy + e->zoff, out, why, sizeof(why)) < 0,
		   "a flipped byte of compressed data is an error: %s", why);
		e->zoff = (uint32_t)len - 8;
		ok(kz_check_entry(e, f->len, BS, why, sizeof(why)) != NULL,
		   "data said to lie past the frame's end: %s", why);
		e->zoff = f->hdr_size;
		e->hdr.used = BS; /* header + used > the sub-buffer size */
		ok(kz_check_entry(e, f->len, BS, why, sizeof(why)) != NULL, "used too large: %s", why);
		e->hdr.used = sb[0]->used;
		e->codec = 7;
		ok(kz_check_entry(e, f->len, BS, why, sizeof(why)) != NULL, "unknown codec: %s", why);
		e = (void *)(copy + f->hdr_size + f->entry_size); /* sub-buffer 1: wrong column count */
		e->nhdr += 1;
		ok(kz_decode(d, e, copy + e->zoff, out, why, sizeof(why)) < 0,
		   "a column count that does not rebuild the records: %s", why);
	}
	free(copy);
	ok(kz_enc_new(99, BS, 16) == NULL && kz_enc_new(1, BS, KTRACE_ZFRAME_MAX + 1) == NULL,
	   "an encoder is refused a level or a batch out of range");
	kz_enc_free(z);
	kz_dec_free(d);
	return done_testing();
}

/*
 * reader/zframe.c - compressed frames (reader/zframe.h): sub-buffers split
 * into columns and compressed with zstd by the consumer, decompressed and
 * rebuilt by the readers.
 *
 * Why columns: a thread stream of the function tracer is 16-byte CALL
 * records, a header word (40 bits of time, class, call site) and a word of
 * duration, depth and call site.  Interleaved, zstd finds few repeats;
 * with the header words together and their times made differences, and
 * the other words cut into 32-bit halves (durations apart from call sites
 * and depths), the demo trace compresses to 1.7 bytes a call at level 1
 * instead of 4.3 (docs/PERFORMANCE.md "Big traces").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "reader/zframe.h"

#define ALIGN KTRACE_ZFRAME_ALIGN
#define HDR KTRACE_SUBBUF_HDR_SIZE

struct kz_enc {
	ZSTD_CCtx *cctx;
	uint32_t bs;
	unsigned maxn;
	uint8_t *frame;  /* ALIGN-aligned, cap bytes */
	size_t cap;
	uint8_t *cols;   /* the columns of one sub-buffer, bs bytes */
};

struct kz_dec {
	ZSTD_DCtx *dctx;
	uint32_t room;
	uint8_t *cols;   /* room bytes */
};

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Records @p (@used bytes, context words if @ctx) as columns at @out
 * (@used bytes).  Return: the number of records, or 0 if they do not parse
 * to exactly @used bytes (a reservation marker, a torn record: stored
 * as they are).
 */
static uint32_t split(const uint8_t *p, uint32_t used, int ctx, uint8_t *out, uint16_t *depth_min)
{
	uint64_t off = 0, prev = 0;
	uint32_t n = 0, m, j = 0;
	unsigned dmin = 65535;
	uint8_t *lo, *hi;

	while (off < used) {
		uint64_t h;

		if (used - off < 8)
			return 0;
		h = get64(p + off);
		if (!KTRACE_REC_CLASS(h))
			return 0;
		off += 8 + 8 * (uint64_t)ctx + 8 * (uint64_t)KTRACE_REC_WORDS(h);
		if (off > used)
			return 0;
		n++;
	}
	m = used / 8 - n;
	lo = out + 8 * (size_t)n;
	hi = lo + 4 * (size_t)m;
	off = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = get64(p + off), ts = KTRACE_REC_TS(h);
		unsigned k = (unsigned)ctx + KTRACE_REC_WORDS(h);

		put64(out + 8 * (size_t)i, (h & ~KTRACE_TS_MASK) | ((ts - prev) & KTRACE_TS_MASK));
		prev = ts;
		off += 8;
		if (KTRACE_REC_CLASS(h) == KTRACE_CLASS_CALL && k && !ctx &&
		    KTRACE_CALL_DEPTH(get64(p + off)) < dmin)
			dmin = KTRACE_CALL_DEPTH(get64(p + off));
		for (unsigned w = 0; w < k; w++, j++, off += 8) {
			uint64_t v = get64(p + off);

			put32(lo + 4 * (size_t)j, (uint32_t)v);
			put32(hi + 4 * (size_t)j, (uint32_t)(v >> 32));
		}
	}
	*depth_min = (uint16_t)(dmin < 65535 ? dmin + 1 : 0);
	return n;
}

/* The inverse of split(): @n records from columns @in (@used bytes) to @out.  0 or -1. */
static int unsplit(const uint8_t *in, uint32_t used, uint32_t n, int ctx, uint8_t *out)
{
	uint64_t prev = 0, off = 0;
	uint32_t m, j = 0;
	const uint8_t *lo, *hi;

	if ((uint64_t)n * 8 > used || used % 8)
		return -1;
	m = used / 8 - n;
	lo = in + 8 * (size_t)n;
	hi = lo + 4 * (size_t)m;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = get64(in + 8 * (size_t)i), ts = (prev + h) & KTRACE_TS_MASK;
		unsigned k = (unsigned)ctx + KTRACE_REC_WORDS(h);

		if (!KTRACE_REC_CLASS(h) || k > m - j)
			return -1;
		prev = ts;
		put64(out + off, (h & ~KTRACE_TS_MASK) | ts);
		off += 8;
		for (unsigned w = 0; w < k; w++, j++, off += 8)
			put64(out + off, (uint64_t)get32(lo + 4 * (size_t)j) |
						 (uint64_t)get32(hi + 4 * (size_t)j) << 32);
	}
	return j == m ? 0 : -1;
}

static size_t round_up(size_t v)
{
	return (v + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

struct kz_enc *kz_enc_new(int level, uint32_t bs, unsigned maxn)
{
	struct kz_enc *z;

	if (bs <= HDR || !maxn || maxn > KTRACE_ZFRAME_MAX || level < KZ_LEVEL_MIN ||
	    level > KZ_LEVEL_MAX || !(z = calloc(1, sizeof(*z))))
		return NULL;
	z->bs = bs;
	z->maxn = maxn;
	z->cap = round_up(KTRACE_ZFRAME_HDR_SIZE + (size_t)maxn * KTRACE_ZENTRY_SIZE +
			  (size_t)maxn * ZSTD_compressBound(bs));
	z->cctx = ZSTD_createCCtx();
	z->cols = malloc(bs);
	if (!z->cctx || !z->cols || posix_memalign((void **)&z->frame, ALIGN, z->cap) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1))) {
		kz_enc_free(z);
		return NULL;
	}
	return z;
}

void kz_enc_free(struct kz_enc *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->cols);
	free(z->frame);
	free(z);
}

size_t kz_frame(struct kz_enc *z, const struct ktrace_subbuf *const *sb, const uint32_t *records,
		unsigned n, const uint8_t **out)
{
	struct ktrace_zframe *f = (struct ktrace_zframe *)z->frame;
	size_t pos = KTRACE_ZFRAME_HDR_SIZE + (size_t)n * KTRACE_ZENTRY_SIZE, len;
	uint64_t total = 0;

	if (!n || n > z->maxn)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		struct ktrace_zentry *e = (struct ktrace_zentry *)(z->frame + KTRACE_ZFRAME_HDR_SIZE +
								   (size_t)i * KTRACE_ZENTRY_SIZE);
		const uint8_t *rec = (const uint8_t *)sb[i] + HDR;
		uint32_t used = sb[i]->used;
		const uint8_t *src = rec;
		size_t c = 0;

		if (sb[i]->hdr_size != HDR || used > z->bs - HDR || used % 8)
			return 0;
		memset(e, 0, sizeof(*e));
		memcpy(&e->hdr, sb[i], sizeof(e->hdr));
		e->records = records[i];
		e->zoff = (uint32_t)pos;
		total += HDR + used;
		if (!used)
			continue;
		e->nhdr = split(rec, used, (sb[i]->flags & KTRACE_SBF_CTX) != 0, z->cols, &e->depth_min);
		if (e->nhdr) {
			e->xform = KTRACE_ZXFORM_SPLIT;
			src = z->cols;
		}
		c = ZSTD_compress2(z->cctx, z->frame + pos, z->cap - pos, src, used);
		if (ZSTD_isError(c))
			return 0;
		if (c >= used) { /* incompressible: stored as it was */
			memcpy(z->frame + pos, rec, used);
			c = used;
			e->nhdr = 0;
			e->xform = KTRACE_ZXFORM_NONE;
		} else {
			e->codec = KTRACE_ZCODEC_ZSTD;
		}
		e->zlen = (uint32_t)c;
		pos += c;
	}
	len = round_up(pos);
	memset(z->frame + pos, 0, len - pos);
	memset(f, 0, sizeof(*f));
	f->magic = KTRACE_ZFRAME_MAGIC;
	f->hdr_size = KTRACE_ZFRAME_HDR_SIZE;
	f->entry_size = KTRACE_ZENTRY_SIZE;
	f->nsub = n;
	f->version = 1;
	f->len = len;
	f->raw = total;
	*out = z->frame;
	return len;
}

const char *kz_check_frame(const struct ktrace_zframe *f, uint64_t left, char *buf, size_t len)
{
	if (f->magic != KTRACE_ZFRAME_MAGIC)
		snprintf(buf, len, "bad frame magic 0x%08x", f->magic);
	else if (f->hdr_size < KTRACE_ZFRAME_HDR_SIZE || f->hdr_size % 8)
		snprintf(buf, len, "bad frame hdr_size %u", f->hdr_size);
	else if (f->entry_size < KTRACE_ZENTRY_SIZE || f->entry_size % 8)
		snprintf(buf, len, "bad frame entry_size %u", f->entry_size);
	else if (!f->nsub || f->nsub > KTRACE_ZFRAME_MAX)
		snprintf(buf, len, "bad frame nsub %u (1..%u)", f->nsub, KTRACE_ZFRAME_MAX);
	else if (!f->len || f->len % ALIGN ||
		 f->len < f->hdr_size + (uint64_t)f->nsub * f->entry_size)
		snprintf(buf, len, "bad frame len %llu", (unsigned long long)f->len);
	else if (f->len > left)
		snprintf(buf, len, "truncated frame: %llu bytes, the file has %llu from its start",
			 (unsigned long long)f->len, (unsigned long long)left);
	else
		return NULL;
	return buf;
}

const char *kz_check_entry(const struct ktrace_zentry *e, uint64_t flen, uint64_t room, char *buf,
			   size_t len)
{
	const struct ktrace_subbuf *h = &e->hdr;

	if (h->magic != KTRACE_SUBBUF_MAGIC)
		snprintf(buf, len, "bad sub-buffer magic 0x%08x", h->magic);
	else if (h->hdr_size != HDR)
		snprintf(buf, len, "bad sub-buffer hdr_size %u in a frame", h->hdr_size);
	else if (h->used % 8 || (uint64_t)HDR + h->used > room)
		snprintf(buf, len, "sub-buffer used %u does not fit in %llu bytes", h->used,
			 (unsigned long long)room);
	else if (e->codec > KTRACE_ZCODEC_ZSTD || e->xform > KTRACE_ZXFORM_SPLIT ||
		 (e->codec == KTRACE_ZCODEC_STORED && (e->xform || e->zlen != h->used)))
		snprintf(buf, len, "bad frame entry codec %u transform %u", e->codec, e->xform);
	else if ((uint64_t)e->zoff + e->zlen > flen || (e->zlen && e->zoff < KTRACE_ZFRAME_HDR_SIZE))
		snprintf(buf, len, "frame entry data at %u (%u bytes) outside the frame of %llu bytes",
			 e->zoff, e->zlen, (unsigned long long)flen);
	else if (h->used && !e->zlen)
		snprintf(buf, len, "frame entry without data for %u bytes of records", h->used);
	else
		return NULL;
	return buf;
}

struct kz_dec *kz_dec_new(uint32_t room)
{
	struct kz_dec *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->room = room;
	d->dctx = ZSTD_createDCtx();
	d->cols = malloc(room ? room : 1);
	if (!d->dctx || !d->cols) {
		kz_dec_free(d);
		return NULL;
	}
	return d;
}

void kz_dec_free(struct kz_dec *d)
{
	if (!d)
		return;
	ZSTD_freeDCtx(d->dctx);
	free(d->cols);
	free(d);
}

int kz_decode(struct kz_dec *d, const struct ktrace_zentry *e, const uint8_t *src, uint8_t *out,
	      char *why, size_t len)
{
	uint32_t used = e->hdr.used;
	uint8_t *dst = e->xform == KTRACE_ZXFORM_SPLIT ? d->cols : out;
	size_t r;

	if (used > d->room) {
		snprintf(why, len, "sub-buffer of %u bytes: larger than the stream's %u", used, d->room);
		return -1;
	}
	if (e->codec == KTRACE_ZCODEC_STORED) {
		memcpy(out, src, used);
		return 0;
	}
	r = ZSTD_decompressDCtx(d->dctx, dst, used, src, e->zlen);
	if (ZSTD_isError(r)) {
		snprintf(why, len, "compressed sub-buffer seq %llu: %s",
			 (unsigned long long)e->hdr.seq, ZSTD_getErrorName(r));
		return -1;
	}
	if (r != used) {
		snprintf(why, len, "compressed sub-buffer seq %llu: %zu bytes, used says %u",
			 (unsigned long long)e->hdr.seq, r, used);
		return -1;
	}
	if (e->xform == KTRACE_ZXFORM_SPLIT &&
	    unsplit(d->cols, used, e->nhdr, (e->hdr.flags & KTRACE_SBF_CTX) != 0, out) < 0) {
		snprintf(why, len, "compressed sub-buffer seq %llu: its columns do not make %u records",
			 (unsigned long long)e->hdr.seq, e->nhdr);
		return -1;
	}
	return 0;
}

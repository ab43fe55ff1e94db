/*
 * reader/zframe.h - the codec of compressed frames (include/ktrace/format.h,
 * struct ktrace_zframe; docs/FORMAT.md "Compressed frames"): the consumer
 * encodes batches of sub-buffers with it, the readers decode one
 * sub-buffer at a time.  Built into libktrace-reader.a and
 * libktrace-consumer.a.  Over libzstd (RFC 8878); the column transform
 * (KTRACE_ZXFORM_SPLIT) is ours.
 *
 * Thread safety: an encoder or a decoder is used by one thread at a time;
 * distinct ones are independent.  Not async-signal-safe (they allocate
 * when created).
 */
#ifndef KTRACE_READER_ZFRAME_H
#define KTRACE_READER_ZFRAME_H

#include <stddef.h>
#include <stdint.h>

#include <ktrace/format.h>

/* zstd's level range that `--compress=zstd:LEVEL` accepts (negative: faster). */
#define KZ_LEVEL_MIN (-7)
#define KZ_LEVEL_MAX 19
#define KZ_LEVEL_DEFAULT 1

struct kz_enc;

/**
 * kz_enc_new() - an encoder for frames of up to @maxn (1..KTRACE_ZFRAME_MAX)
 * sub-buffers of at most @bs bytes each (header included), at zstd level
 * @level.  Return: the encoder, or NULL (out of memory; bad arguments).
 */
struct kz_enc *kz_enc_new(int level, uint32_t bs, unsigned maxn);
void kz_enc_free(struct kz_enc *z);

/**
 * kz_frame() - compress sub-buffers @sb[0..@n) (each a header with CLOSED
 * and `used` final, followed by its `used` bytes of records; @records[i]
 * its records, internal ones not counted) into one frame.  A sub-buffer
 * whose records parse is split into columns first; one that zstd cannot
 * shrink is stored.
 * Return: the frame's length in bytes (a multiple of 4096) with *@out its
 * bytes (4096-aligned, owned by @z until the next call), or 0 (@n out of
 * range, a header that does not fit @bs, a zstd error).  The header's
 * `raw` says the bytes the sub-buffers had (sum of 64 + used).
 */
size_t kz_frame(struct kz_enc *z, const struct ktrace_subbuf *const *sb, const uint32_t *records,
		unsigned n, const uint8_t **out);

/**
 * kz_check_frame() - is @f (whose file has @left bytes from its start) a
 * frame header a reader can walk?  Checks magic, sizes, nsub and that the
 * frame and its entries fit.
 * Return: NULL, or what is wrong (in @buf of @len bytes).
 */
const char *kz_check_frame(const struct ktrace_zframe *f, uint64_t left, char *buf, size_t len);

/**
 * kz_check_entry() - is entry @e (of a frame of @flen bytes, for
 * sub-buffers of at most @room bytes) decodable as far as its fields say?
 * Checks the header's magic, hdr_size 64, used, and that codec, transform
 * and data lie within the frame.  Return: NULL or what is wrong (in @buf).
 */
const char *kz_check_entry(const struct ktrace_zentry *e, uint64_t flen, uint64_t room, char *buf,
			   size_t len);

struct kz_dec;

/** kz_dec_new() - a decoder for sub-buffers of at most @room bytes.  NULL: no memory. */
struct kz_dec *kz_dec_new(uint32_t room);
void kz_dec_free(struct kz_dec *d);

/**
 * kz_decode() - the records of entry @e (checked by kz_check_entry()),
 * whose data @src (e->zlen bytes) the caller found at e->zoff, into
 * @out (e->hdr.used bytes; at most the decoder's room).
 * Return: 0, or -1 with what is wrong in @why (@len bytes): zstd's error
 * (a checksum mismatch: corrupt data), a size that is not `used`, columns
 * that do not rebuild records.
 */
int kz_decode(struct kz_dec *d, const struct ktrace_zentry *e, const uint8_t *src, uint8_t *out,
	      char *why, size_t len);

#endif

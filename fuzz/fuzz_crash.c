/*
 * fuzz/fuzz_crash.c - libFuzzer target for the crash region parser of
 * `ktrace read --crash` (kclient/crash_parse.c, compiled in here: it has
 * no library dependency).  The input is a region image.  When its first
 * byte is odd the target first makes the header and channel checks and
 * every sub-buffer header check right (the region size set to the input's
 * length), so the fuzzer gets past them to the geometry and the record
 * walk; otherwise the image is parsed as it is.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kclient/crash_parse.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Make the checks of @img right, as the module would have written them. */
static void fix_checks(unsigned char *img, size_t len)
{
	struct ktrace_crash_hdr h;

	if (len < KTRACE_CRASH_HDR_SIZE)
		return;
	put64(img, KTRACE_CRASH_MAGIC);
	put64(img + offsetof(struct ktrace_crash_hdr, region_size), len);
	memcpy(&h, img, sizeof(h));
	if (h.nchan > KTRACE_CRASH_MAX_CHAN || h.chan_size != KTRACE_CRASH_CHAN_SIZE ||
	    h.chan_off < sizeof(h) || h.chan_off + (uint64_t)h.nchan * h.chan_size > KTRACE_CRASH_HDR_SIZE)
		goto header;
	for (unsigned i = 0; i < h.nchan; i++) {
		unsigned char *p = img + h.chan_off + (size_t)i * h.chan_size;
		struct ktrace_crash_chan e;

		put64(p + offsetof(struct ktrace_crash_chan, check),
		      ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 3, p,
						    offsetof(struct ktrace_crash_chan, check))));
		memcpy(&e, p, sizeof(e));
		if (e.subbuf_size < 4096 || e.subbuf_size > 65536 || (e.subbuf_size & (e.subbuf_size - 1)) ||
		    e.nrings > 64 || e.subbuf_nr > 4096 ||
		    e.subbuf_nr < 2 || e.nrings < 1 || e.ring_off > len ||
		    (uint64_t)e.nrings * e.subbuf_nr * e.subbuf_size > len - e.ring_off)
			continue;
		for (uint64_t s = 0; s < (uint64_t)e.nrings * e.subbuf_nr; s++) {
			unsigned char *sp = img + e.ring_off + s * e.subbuf_size;
			struct ktrace_subbuf sb;
			uint64_t w[5];
			uint32_t c;

			memcpy(&sb, sp, sizeof(sb));
			w[0] = (uint64_t)sb.magic | ((uint64_t)sb.hdr_size << 32) |
			       ((uint64_t)(sb.flags & ~KTRACE_SBF_CLOSED) << 48);
			w[1] = sb.seq;
			w[2] = sb.first_ts;
			w[3] = sb.first_ns;
			w[4] = (uint64_t)sb.cpu | ((uint64_t)sb.stream << 16);
			c = (uint32_t)ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 6, w, 5));
			memcpy(sp + offsetof(struct ktrace_subbuf, commit), &c, 4);
		}
	}
header:
	put64(img + offsetof(struct ktrace_crash_hdr, check),
	      ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 1, img,
					    offsetof(struct ktrace_crash_hdr, check))));
}

static int count_emit(void *arg, const void *subbuf, size_t len)
{
	const struct ktrace_subbuf *h = subbuf;

	/* what ktrace read would write: a whole header and its records */
	if (len < sizeof(*h) || h->used != len - sizeof(*h))
		abort();
	*(size_t *)arg += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kcr_region *r;
	unsigned char *img;
	char err[256];
	size_t bytes = 0;

	if (size < 1 || size > (1u << 20))
		return 0;
	img = malloc(size - 1 ? size - 1 : 1);
	r = malloc(sizeof(*r));
	memcpy(img, data + 1, size - 1);
	if (data[0] & 1)
		fix_checks(img, size - 1);
	if (kcr_open(img, size - 1, r, err, sizeof(err)) == 0) {
		for (unsigned c = 0; c < r->nchan; c++)
			for (unsigned k = 0; k < r->chan[c].nrings && k < 64; k++) {
				struct kcr_stats st = { 0 };

				kcr_ring(r, c, k, count_emit, &bytes, &st);
			}
	}
	free(r);
	free(img);
	return 0;
}

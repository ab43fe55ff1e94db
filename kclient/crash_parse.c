/*
 * kclient/crash_parse.c - the checks and the conversion of a ktrace.ko
 * crash region image (docs/FORMAT.md "Crash region"; API in
 * kclient/kclient.h: kcr_open(), kcr_ring()).  Pure: no I/O, no global
 * state, so the fuzz target fuzz/fuzz_crash.c compiles it in alone;
 * kclient/crash.c does the files of `ktrace read --crash`.
 *
 * Everything the image says is checked before it is used: the header and
 * channel checks, every offset and size against the image, each
 * sub-buffer header's check and slot, each record's check word.  A
 * sub-buffer whose header fails is skipped and counted (bad_subbufs); the
 * first record whose check fails ends its sub-buffer and is counted as
 * torn, in the `lost` field of the sub-buffer written for it, so the loss
 * shows in `ktrace print` like any other.  Records are never shown unless
 * their check word matches.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktrace/format.h"
#include "kclient/kclient.h"

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Fold @bytes (a multiple of 8) of @p as little-endian words. */
static uint64_t fold_bytes(uint64_t h, const unsigned char *p, size_t bytes)
{
	for (size_t i = 0; i + 8 <= bytes; i += 8)
		h = ktrace_crash_mix(h, rd64(p + i));
	return h;
}

static uint64_t cat_check(const unsigned char *text, uint64_t len)
{
	uint64_t h = ktrace_crash_mix(KTRACE_CRASH_SEED ^ 4, len);

	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t w = 0;

		memcpy(&w, text + i, len - i < 8 ? (size_t)(len - i) : 8);
		h = ktrace_crash_mix(h, w);
	}
	return ktrace_crash_final(h);
}

/*
 * kcr_check_hdr - the header page of image @img (@len bytes) into *@h,
 * checked: size, magic, version, check word, region size, channel table.
 * Returns 0, or -1 with @err (@errlen bytes) set.
 */
static int kcr_check_hdr(const unsigned char *img, size_t len, struct ktrace_crash_hdr *h, char *err,
			 size_t errlen)
{
	if (len < KTRACE_CRASH_HDR_SIZE) {
		snprintf(err, errlen, "%zu bytes: too small for a crash region (header page %u)", len,
			 KTRACE_CRASH_HDR_SIZE);
		return -1;
	}
	memcpy(h, img, sizeof(*h));
	if (h->magic != KTRACE_CRASH_MAGIC) {
		snprintf(err, errlen, "offset 0: bad magic 0x%016" PRIx64 ": not a ktrace crash region",
			 (uint64_t)h->magic);
		return -1;
	}
	if (h->version != KTRACE_CRASH_VERSION || h->hdr_size != KTRACE_CRASH_HDR_SIZE) {
		snprintf(err, errlen, "offset 8: version %u, header size %u (expected %u, %u)", h->version,
			 h->hdr_size, KTRACE_CRASH_VERSION, KTRACE_CRASH_HDR_SIZE);
		return -1;
	}
	if (h->check != ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 1, img,
						       offsetof(struct ktrace_crash_hdr, check)))) {
		snprintf(err, errlen, "offset %zu: the header check fails: damaged header",
			 offsetof(struct ktrace_crash_hdr, check));
		return -1;
	}
	if (h->region_size != len) {
		snprintf(err, errlen, "the header says %" PRIu64 " bytes, the image has %zu: truncated or not a whole region",
			 (uint64_t)h->region_size, len);
		return -1;
	}
	if (h->nchan > KTRACE_CRASH_MAX_CHAN || h->chan_size != KTRACE_CRASH_CHAN_SIZE ||
	    h->chan_off < sizeof(*h) ||
	    (uint64_t)h->chan_off + (uint64_t)h->nchan * h->chan_size > KTRACE_CRASH_HDR_SIZE) {
		snprintf(err, errlen, "offset 72: bad channel table (%u entries of %u bytes at %u)", h->nchan,
			 h->chan_size, h->chan_off);
		return -1;
	}
	return 0;
}

/*
 * kcr_hdr_info - what the checked header @h of @img tells into @r: boot
 * id, creation times, and the panic record and the note where their own
 * checks pass (else left zero).
 */
static void kcr_hdr_info(struct kcr_region *r, const unsigned char *img, const struct ktrace_crash_hdr *h)
{
	uint64_t w[3];

	memcpy(r->boot_id, h->boot_id, 16);
	r->created_ns = h->created_ns;
	r->realtime_ns = h->realtime_ns;
	w[0] = h->panic_ns;
	w[1] = h->panic_cpu | ((uint64_t)h->panic_src << 32);
	w[2] = h->stop_ns;
	if (h->panic_ns && h->panic_check == ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 2, w, 3))) {
		r->panic_ns = h->panic_ns;
		r->panic_cpu = h->panic_cpu;
		r->panic_src = h->panic_src;
		r->stop_ns = h->stop_ns;
	}
	if (h->note_check &&
	    h->note_check == ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 5,
							    img + offsetof(struct ktrace_crash_hdr, note),
							    KTRACE_CRASH_NOTE_MAX))) {
		memcpy(r->note, h->note, KTRACE_CRASH_NOTE_MAX);
		r->note[KTRACE_CRASH_NOTE_MAX - 1] = '\0';
	}
}

/*
 * kcr_chan_add - channel entry @i of header @h, checked (check word,
 * geometry inside the region), appended to r->chan: its name made safe
 * as a file name, its catalog if its check passes.  Returns 0, or -1 with
 * @err (@errlen bytes) set.
 */
static int kcr_chan_add(struct kcr_region *r, const struct ktrace_crash_hdr *h, unsigned i, char *err,
			size_t errlen)
{
	const unsigned char *img = r->img, *p = img + h->chan_off + (size_t)i * h->chan_size;
	size_t len = r->len;
	struct ktrace_crash_chan e;
	struct kcr_chan *c = &r->chan[r->nchan];
	uint64_t ring_bytes;

	memcpy(&e, p, sizeof(e));
	if (e.check != ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 3, p,
						      offsetof(struct ktrace_crash_chan, check)))) {
		snprintf(err, errlen, "channel %u (offset %zu): the check fails: damaged entry", i,
			 (size_t)h->chan_off + (size_t)i * h->chan_size);
		return -1;
	}
	ring_bytes = (uint64_t)e.subbuf_size * e.subbuf_nr;
	if (e.subbuf_size < 4096 || e.subbuf_size > (1u << 20) || (e.subbuf_size & (e.subbuf_size - 1)) ||
	    e.subbuf_nr < 2 || e.nrings < 1 || e.nrings > 65536 || e.ring_off > len ||
	    ring_bytes > len || (uint64_t)e.nrings * ring_bytes > len - e.ring_off ||
	    e.cat_off > len || e.cat_cap > len - e.cat_off) {
		snprintf(err, errlen, "channel %u: geometry outside the region (rings %u x %u x %u at %" PRIu64 ")",
			 i, e.nrings, e.subbuf_nr, e.subbuf_size, (uint64_t)e.ring_off);
		return -1;
	}
	memcpy(c->name, e.name, sizeof(e.name));
	c->name[sizeof(c->name) - 1] = '\0';
	for (char *s = c->name; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '/')
			*s = '_';
	if (!c->name[0])
		strcpy(c->name, "_");
	c->flags = e.flags;
	c->nrings = e.nrings;
	c->subbuf_size = e.subbuf_size;
	c->subbuf_nr = e.subbuf_nr;
	c->ring_off = e.ring_off;
	c->start_ns = e.start_ns;
	if (e.cat_len && e.cat_len <= e.cat_cap &&
	    e.cat_check == cat_check(img + e.cat_off, e.cat_len)) {
		c->catalog = (const char *)img + e.cat_off;
		c->catalog_len = (size_t)e.cat_len;
	}
	r->nchan++;
	return 0;
}

int kcr_open(const unsigned char *img, size_t len, struct kcr_region *r, char *err, size_t errlen)
{
	struct ktrace_crash_hdr h;

	memset(r, 0, sizeof(*r));
	r->img = img;
	r->len = len;
	if (kcr_check_hdr(img, len, &h, err, errlen) < 0)
		return -1;
	kcr_hdr_info(r, img, &h);
	for (unsigned i = 0; i < h.nchan; i++)
		if (kcr_chan_add(r, &h, i, err, errlen) < 0)
			return -1;
	return 0;
}

struct slot {
	uint64_t seq;
	uint32_t idx;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The full time of a 40-bit stamp: nearest to @ref. */
static uint64_t full_ts(uint64_t ref, uint64_t ts40)
{
	int64_t d = (int64_t)((ts40 - ref) << (64 - KTRACE_TS_BITS)) >> (64 - KTRACE_TS_BITS);

	return ref + (uint64_t)d;
}

/*
 * kcr_slots - the sub-buffers of ring @ring of channel @c (at @base) whose
 * headers pass their checks, into @slots (c->subbuf_nr entries) by slot;
 * empty and bad ones counted in @st.  Returns how many.
 */
static uint32_t kcr_slots(const struct kcr_chan *c, const unsigned char *base, unsigned ring,
			  struct slot *slots, struct kcr_stats *st)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->subbuf_nr; i++) {
		const unsigned char *p = base + (size_t)i * c->subbuf_size;
		struct ktrace_subbuf h;
		uint64_t w[5];

		memcpy(&h, p, sizeof(h));
		if (h.magic == 0) {
			st->empty_subbufs++;
			continue;
		}
		w[0] = (uint64_t)h.magic | ((uint64_t)h.hdr_size << 32) |
		       ((uint64_t)(h.flags & ~KTRACE_SBF_CLOSED) << 48);
		w[1] = h.seq;
		w[2] = h.first_ts;
		w[3] = h.first_ns;
		w[4] = (uint64_t)h.cpu | ((uint64_t)h.stream << 16);
		if (h.magic != KTRACE_SUBBUF_MAGIC || h.hdr_size != KTRACE_SUBBUF_HDR_SIZE ||
		    !(h.flags & KTRACE_SBF_CHECKED) || h.seq % c->subbuf_nr != i || h.stream != ring ||
		    h.commit != (uint32_t)ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 6, w, 5))) {
			st->bad_subbufs++;
			continue;
		}
		slots[n].seq = h.seq;
		slots[n].idx = i;
		n++;
	}
	return n;
}

/*
 * kcr_records - copy the records of sub-buffer @p (header @h; channel @c,
 * @ctx: records carry a context word) whose check words match, without
 * them, into @out after its header, up to the first that fails (*@torn =
 * 1) or the end.  *@nrec: how many, *@last: the last one's full stamp.
 * Returns the bytes of @out used, header included.
 */
static uint32_t kcr_records(const struct kcr_chan *c, int ctx, const unsigned char *p,
			    const struct ktrace_subbuf *h, unsigned char *out, uint32_t *nrec, uint32_t *torn,
			    uint64_t *last)
{
	uint32_t off = KTRACE_SUBBUF_HDR_SIZE, o = KTRACE_SUBBUF_HDR_SIZE;
	uint64_t seqmix = ktrace_crash_mix(KTRACE_CRASH_SEED ^ 7, h->seq);

	while (off + 8 <= c->subbuf_size) {
		uint64_t hw = rd64(p + off), ck;
		uint32_t nw;

		if (hw == 0)
			break; /* the end: the writer zeroed the rest */
		nw = 1 + (ctx ? 1 : 0) + KTRACE_REC_WORDS(hw);
		if (KTRACE_REC_CLASS(hw) == KTRACE_CLASS_INVALID ||
		    (uint64_t)off + 8ull * nw + 8 > c->subbuf_size) {
			*torn = 1;
			break;
		}
		ck = ktrace_crash_mix(seqmix, off);
		for (uint32_t j = 0; j < nw; j++)
			ck = ktrace_crash_mix(ck, rd64(p + off + 8 * j));
		if (rd64(p + off + 8ull * nw) != ktrace_crash_final(ck)) {
			*torn = 1; /* stopped inside it: never shown */
			break;
		}
		memcpy(out + o, p + off, 8ull * nw);
		o += 8 * nw;
		off += 8 * (nw + 1);
		(*nrec)++;
		*last = full_ts(h->first_ts, KTRACE_REC_TS(hw));
	}
	return o;
}

/*
 * kcr_subbuf - sub-buffer @p of channel @c (@ctx: records carry a context
 * word) converted into @out (c->subbuf_size bytes): a closed sub-buffer
 * of its checked records, a torn one counted as lost; totals into @st.
 * Returns the bytes of @out used.
 */
static uint32_t kcr_subbuf(const struct kcr_chan *c, int ctx, const unsigned char *p, unsigned char *out,
			   struct kcr_stats *st)
{
	struct ktrace_subbuf h, oh;
	uint32_t o, nrec = 0, torn = 0;
	uint64_t last = 0;

	memcpy(&h, p, sizeof(h));
	o = kcr_records(c, ctx, p, &h, out, &nrec, &torn, &last);
	memset(&oh, 0, sizeof(oh));
	oh.magic = KTRACE_SUBBUF_MAGIC;
	oh.hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	oh.flags = (uint16_t)((h.flags & KTRACE_SBF_CTX) | KTRACE_SBF_CLOSED);
	oh.seq = h.seq;
	oh.first_ts = h.first_ts;
	oh.first_ns = h.first_ns;
	oh.last_ts = last;
	oh.used = o - KTRACE_SUBBUF_HDR_SIZE;
	oh.lost = torn;
	oh.nrec = ctx ? 0 : nrec;
	oh.cpu = h.cpu;
	oh.stream = h.stream;
	memcpy(out, &oh, sizeof(oh));
	st->subbufs++;
	st->records += nrec;
	st->torn += torn;
	if (nrec && last > st->last_ns)
		st->last_ns = last;
	if (nrec && (!st->first_ns || h.first_ts < st->first_ns))
		st->first_ns = h.first_ts;
	return o;
}

int kcr_ring(const struct kcr_region *r, unsigned ch, unsigned ring, kcr_emit_fn emit, void *arg,
	     struct kcr_stats *st)
{
	const struct kcr_chan *c = &r->chan[ch];
	const unsigned char *base = r->img + c->ring_off + (size_t)ring * c->subbuf_size * c->subbuf_nr;
	int ctx = (c->flags & KTRACE_GLOBAL_CHANNEL) != 0;
	struct slot *slots = malloc(sizeof(*slots) * c->subbuf_nr);
	unsigned char *out = malloc(c->subbuf_size);
	uint32_t n;
	int rc = 0;

	if (!slots || !out) {
		free(slots);
		free(out);
		return -1;
	}
	n = kcr_slots(c, base, ring, slots, st);
	qsort(slots, n, sizeof(*slots), slot_cmp);
	for (uint32_t k = 0; k < n && rc == 0; k++) {
		uint32_t o = kcr_subbuf(c, ctx, base + (size_t)slots[k].idx * c->subbuf_size, out, st);

		if (emit && emit(arg, out, o) < 0)
			rc = -1;
	}
	free(slots);
	free(out);
	return rc;
}

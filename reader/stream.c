/*
 * reader/stream.c - one stream file: the index of its sub-buffers and the
 * cursor that turns them into records and gaps.
 *
 * Index (at open).  Fixed layout: the header of every ring slot is read; an
 * all-zero magic is a slot never written, a valid header must also sit in
 * slot seq % buf_nr.  A corrupt slot is given the sequence number it must
 * have held (the one of the newest lap, [max_seq - buf_nr + 1, max_seq],
 * that maps to the slot) so it is reported where it belongs and is not also
 * counted as overwritten.  Packed layout: headers are walked back to back;
 * after a bad one the walk resynchronises on the next 8-byte aligned valid
 * header.  Slots layout (`ktrace record`'s consumer): the same walk with a
 * step of buf_size bytes per sub-buffer.  Every valid header contributes its (first_ts, first_ns)
 * calibration pair.
 *
 * Cursor.  For each sub-buffer in order the cursor may produce: an
 * OVERWRITTEN gap (sequence numbers missing before it), a CORRUPT gap (bad
 * header), its records, a CORRUPT gap (bad record, truncated file), a LOST
 * gap (its `lost` count); after the last one a DROPPED gap for what the
 * control file's `dropped` counter adds to the sub-buffers' `lost` counts.
 * A sub-buffer whose records parse but do not number its header's `nrec`
 * (check_nrec()), and a fixed-layout stream file that is empty, are
 * reported as errors: records are missing and nothing else would say so.
 * Records are decoded one at a time straight from the mapping and checked
 * as they go, so a live trace changing under the reader yields at worst a
 * reported error, never an out-of-bounds read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <ktrace/lkst.h>

#include "reader/internal.h"
#include "reader/zframe.h"

#define HDR KTRACE_SUBBUF_HDR_SIZE

static void get_hdr(const struct ktr_stream *s, uint64_t off, struct ktrace_subbuf *h)
{
	memcpy(h, s->f.p + off, sizeof(*h));
}

/* NULL if header @h can describe a sub-buffer of at most @room bytes. */
static const char *check_hdr(const struct ktrace_subbuf *h, uint64_t room, char *buf, size_t len)
{
	if (h->magic != KTRACE_SUBBUF_MAGIC)
		snprintf(buf, len, "bad sub-buffer magic 0x%08x", h->magic);
	else if (h->hdr_size < HDR || h->hdr_size % 8 || h->hdr_size > room)
		snprintf(buf, len, "bad sub-buffer hdr_size %u", h->hdr_size);
	else if ((uint64_t)h->hdr_size + h->used > room)
		snprintf(buf, len, "sub-buffer used %u does not fit in %llu bytes after a %u-byte header",
			 h->used, (unsigned long long)(room - h->hdr_size), h->hdr_size);
	else if (h->used % 8)
		snprintf(buf, len, "sub-buffer used %u is not a multiple of 8", h->used);
	else
		return NULL;
	return buf;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static struct ktr_sb *push_sb(struct ktr_stream *s, size_t *cap)
{
	if (s->nsb == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		struct ktr_sb *n = realloc(s->sb, ncap * sizeof(*n));

		if (!n)
			return NULL;
		s->sb = n;
		*cap = ncap;
	}
	memset(&s->sb[s->nsb], 0, sizeof(s->sb[0]));
	return &s->sb[s->nsb++];
}

static int cmp_sb(const void *a, const void *b)
{
	const struct ktr_sb *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void index_fixed(struct ktr_trace *t, struct ktr_stream *s)
{
	uint64_t bs = s->info.buf_size, nr = s->info.buf_nr, size = s->f.size;
	uint64_t nslots = (size + bs - 1) / bs, max = 0, wstart;
	size_t cap = 0;
	int have_valid = 0;
	char why[160];

	if (size < bs * nr)
		ktr_diag(t, 1, "%s: offset %llu: truncated: file has %llu bytes, expected %llu x %llu",
			 s->f.path, (unsigned long long)size, (unsigned long long)size,
			 (unsigned long long)nr, (unsigned long long)bs);
	if (nslots > nr)
		nslots = nr;
	for (uint64_t k = 0; k < nslots; k++) {
		uint64_t off = k * bs;
		struct ktrace_subbuf h;
		const char *bad;
		struct ktr_sb *e;

		if (off + HDR > size) {
			if (!all_zero(s->f.p + off, size - off) && (e = push_sb(s, &cap))) {
				e->off = off;
				e->seq = k;
				e->corrupt = 1;
				e->why = strdup("truncated sub-buffer header");
			}
			break;
		}
		get_hdr(s, off, &h);
		if (h.magic == 0)
			continue; /* never written */
		bad = check_hdr(&h, bs, why, sizeof(why));
		if (!bad && h.seq % nr != k) {
			snprintf(why, sizeof(why), "sub-buffer seq %llu does not belong in ring slot %llu",
				 (unsigned long long)h.seq, (unsigned long long)k);
			bad = why;
		}
		if (!(e = push_sb(s, &cap)))
			return;
		e->off = off;
		if (bad) {
			ktr_diag(t, 1, "%s: offset %llu: %s", s->f.path, (unsigned long long)off, bad);
			e->corrupt = 1;
			e->seq = k; /* fixed below */
			e->why = strdup(bad);
			continue;
		}
		e->seq = h.seq;
		if (!have_valid || h.seq > max)
			max = h.seq;
		have_valid = 1;
		ktr_add_pair(t, h.first_ts, h.first_ns);
	}
	/* A corrupt slot held the sequence number of the newest lap that maps to it. */
	wstart = have_valid && max >= nr - 1 ? max - (nr - 1) : 0;
	for (size_t i = 0; i < s->nsb; i++) {
		struct ktr_sb *e = &s->sb[i];
		uint64_t k = e->off / bs;

		if (e->corrupt && have_valid)
			e->seq = wstart + (k + nr - wstart % nr) % nr;
	}
	if (s->nsb > 1)
		qsort(s->sb, s->nsb, sizeof(*s->sb), cmp_sb);
}

/*
 * Slots layout: the entries of frame @f at file offset @off (its header
 * checked) into the index.  An entry that cannot be decoded as its fields
 * say is a corrupt sub-buffer; the data itself is checked when read.
 * Return: 0, or -1 (out of memory).
 */
static int index_frame(struct ktr_trace *t, struct ktr_stream *s, uint64_t off,
		       const struct ktrace_zframe *f, size_t *cap, uint64_t *next_seq)
{
	char why[160];

	for (uint32_t i = 0; i < f->nsub; i++) {
		uint64_t at = off + f->hdr_size + (uint64_t)i * f->entry_size;
		struct ktrace_zentry z;
		struct ktr_sb *e;
		const char *bad;

		memcpy(&z, s->f.p + at, sizeof(z));
		bad = kz_check_entry(&z, f->len, s->room, why, sizeof(why));
		if (!(e = push_sb(s, cap)))
			return -1;
		e->framed = 1;
		e->hoff = at;
		e->off = 0;
		if (bad) {
			ktr_diag(t, 1, "%s: offset %llu: %s", s->f.path, (unsigned long long)at, bad);
			e->seq = *next_seq;
			e->corrupt = 1;
			e->why = strdup(bad);
			continue;
		}
		e->seq = z.hdr.seq;
		e->zdata = off + z.zoff;
		e->depth_min = z.depth_min;
		*next_seq = z.hdr.seq + 1;
		ktr_add_pair(t, z.hdr.first_ts, z.hdr.first_ns);
	}
	return 0;
}

static void index_packed(struct ktr_trace *t, struct ktr_stream *s)
{
	uint64_t off = 0, size = s->f.size, next_seq = 0;
	uint64_t step = s->stride ? KTRACE_ZFRAME_ALIGN : 8; /* resynchronising after a bad header */
	size_t cap = 0;
	int framed = 0; /* a frame seen: units are no longer a slot apart */
	uint64_t dropped = 0; /* pages below it given back (see ktr_stream_index()) */
	char why[160];

	while (off + HDR <= size) {
		struct ktrace_subbuf h;
		const char *bad;
		struct ktr_sb *e;

		if (s->f.mapped && off - dropped >= ((uint64_t)64 << 20)) {
			madvise((void *)(s->f.p + dropped), (size_t)((off & ~(uint64_t)4095) - dropped),
				MADV_DONTNEED);
			dropped = off & ~(uint64_t)4095;
		}

		get_hdr(s, off, &h);
		if (s->stride && h.magic == KTRACE_ZFRAME_MAGIC && off % KTRACE_ZFRAME_ALIGN == 0) {
			struct ktrace_zframe f;

			memcpy(&f, s->f.p + off, sizeof(f));
			framed = 1;
			if (!(bad = kz_check_frame(&f, size - off, why, sizeof(why)))) {
				if (index_frame(t, s, off, &f, &cap, &next_seq) < 0)
					return;
				off += f.len;
				continue;
			}
		} else {
			bad = check_hdr(&h, s->room, why, sizeof(why));
		}
		if (!bad) {
			if (!(e = push_sb(s, &cap)))
				return;
			e->off = off;
			e->seq = h.seq;
			next_seq = h.seq + 1;
			ktr_add_pair(t, h.first_ts, h.first_ns);
			off += s->stride ? s->stride : ((uint64_t)h.hdr_size + h.used + 7) & ~(uint64_t)7;
			continue;
		}
		if (all_zero(s->f.p + off, (s->stride && !framed && off + s->stride < size ? off + s->stride
											   : size) - off)) {
			if (!s->stride || framed || off + s->stride >= size)
				return; /* zero padding at the end */
			off += s->stride; /* an empty slot */
			continue;
		}
		ktr_diag(t, 1, "%s: offset %llu: %s", s->f.path, (unsigned long long)off, bad);
		if (!(e = push_sb(s, &cap)))
			return;
		e->off = off;
		e->seq = next_seq;
		e->corrupt = 1;
		e->why = strdup(bad);
		if (s->stride && !framed) { /* slots: the next header is a slot further */
			off += s->stride;
			continue;
		}
		/* packed, or slots among frames: the next valid header or frame */
		for (off += step; off + HDR <= size; off += step) {
			struct ktrace_zframe f;

			get_hdr(s, off, &h);
			if (h.magic == KTRACE_SUBBUF_MAGIC && !check_hdr(&h, s->room, why, sizeof(why)))
				break;
			memcpy(&f, s->f.p + off, sizeof(f));
			if (framed && !kz_check_frame(&f, size - off, why, sizeof(why)))
				break;
		}
	}
	if (off < size && !all_zero(s->f.p + off, size - off)) {
		struct ktr_sb *e = push_sb(s, &cap);

		ktr_diag(t, 1, "%s: offset %llu: truncated sub-buffer header (%llu bytes)", s->f.path,
			 (unsigned long long)off, (unsigned long long)(size - off));
		if (e) {
			e->off = off;
			e->seq = next_seq;
			e->corrupt = 1;
			e->why = strdup("truncated sub-buffer header");
		}
	}
}

/**
 * ktr_stream_index() - build the sub-buffer index of @s (geometry in
 * s->info and s->packed, file mapped) and reset its cursor.
 */
void ktr_stream_index(struct ktr_trace *t, struct ktr_stream *s)
{
	if (s->f.exists && !s->f.size && !s->packed) {
		/* allocated in full at setup: empty means cut (a packed stream
		 * of a CPU without events is legitimately empty) */
		if (s->info.buf_size && s->info.buf_nr)
			ktr_diag(t, 1, "%s: offset 0: empty stream file (%u sub-buffer%s of %u bytes expected)",
				 s->f.path, s->info.buf_nr, s->info.buf_nr == 1 ? "" : "s", s->info.buf_size);
		else
			ktr_diag(t, 1, "%s: offset 0: empty stream file", s->f.path);
	}
	s->d = s->f.p;
	s->dsize = s->f.size;
	s->zloaded = 0;
	if (s->f.p) {
		if (s->packed)
			index_packed(t, s);
		else
			index_fixed(t, s);
	}
	/* the headers were read page by page, and the kernel mapped the
	 * cached pages around each (fault-around): a trace of 2 GB would
	 * start with 400 MB mapped that the cursor gets to much later */
	if (s->f.mapped && s->f.size >= 4096)
		madvise((void *)s->f.p, s->f.size & ~(size_t)4095, MADV_DONTNEED);
	s->info.nsubbufs = s->nsb;
	ktr_stream_reset(s);
}

/** ktr_stream_reset() - rewind the cursor of @s to its first sub-buffer. */
void ktr_stream_reset(struct ktr_stream *s)
{
	s->cur = 0;
	s->phase = PH_GAP;
	s->have_prev = 0;
	s->prev_seq = 0;
	s->lost_sum = 0;
	s->got = 0;
	s->last_raw = 0;
	s->la_valid = 0;
	s->cache_tid = 0;
	s->cache_pid = 0;
	s->bad = 0;
	s->trunc = 0;
}

/*
 * Drop the pages of a finished sub-buffer from the mapping (they stay in
 * the page cache and come back on a rewind), so reading a trace costs a few
 * sub-buffers of memory however large it is.
 */
static void release(struct ktr_stream *s, const struct ktr_sb *e)
{
	uint64_t page = 4096, start, end;

	if (!s->f.mapped || !e || (e->corrupt && s->packed))
		return;
	if (e->framed) {
		/* from its entry to the end of its data, and the 128 KiB before:
		 * reading this frame's header made the kernel map the cached pages
		 * around it (fault-around, 64 KiB), the previous frame's tail too.
		 * What the index reads again comes back from the page cache. */
		struct ktrace_zentry z;

		if (e->corrupt)
			return;
		memcpy(&z, s->f.p + e->hoff, sizeof(z));
		start = e->hoff & ~(page - 1);
		start = start > 131072 ? start - 131072 : 0;
		end = e->zdata + z.zlen;
	} else {
		start = (e->off + page - 1) & ~(page - 1); /* whole pages only: the */
		end = s->packed || !s->room ? s->pos : e->off + s->room; /* neighbours stay */
	}
	end &= ~(page - 1);
	if (end > s->f.size)
		end = s->f.size & ~(page - 1);
	if (end > start)
		madvise((void *)(s->f.p + start), (size_t)(end - start), MADV_DONTNEED);
}

/*
 * The file offset a message about offset @off of the records' view names:
 * itself, or in a framed sub-buffer (decompressed) its entry's.
 */
static unsigned long long file_off(const struct ktr_stream *s, uint64_t off)
{
	return s->cur < s->nsb && s->sb[s->cur].framed ? s->sb[s->cur].hoff : off;
}

/* The full raw time of 40-bit stamp @ts40 near @first (signed difference). */
static uint64_t ext_ts(uint64_t first, uint64_t ts40)
{
	uint64_t d = (ts40 - first) & KTRACE_TS_MASK;

	if (d & ((uint64_t)1 << (KTRACE_TS_BITS - 1)))
		d |= ~KTRACE_TS_MASK;
	return first + d;
}

/*
 * Make the records of index entry @i readable at s->d + e->off: the file's
 * mapping, or for a framed sub-buffer its header and records decompressed
 * into s->zbuf (kept while the cursor is in it).  Return: 0, or -1 with
 * the entry made corrupt (said; the cursor shows a CORRUPT gap).
 */
static int load(struct ktr_trace *t, struct ktr_stream *s, size_t i)
{
	struct ktr_sb *e = &s->sb[i];
	struct ktrace_zentry z;
	char why[160];

	if (!e->framed) {
		s->d = s->f.p;
		s->dsize = s->f.size;
		return 0;
	}
	memcpy(&z, s->f.p + e->hoff, sizeof(z));
	s->dsize = HDR + z.hdr.used;
	if (s->zloaded == i + 1) {
		s->d = s->zbuf;
		return 0;
	}
	s->zloaded = 0;
	if (s->zcap < s->dsize) {
		uint8_t *n = realloc(s->zbuf, s->dsize);

		if (!n)
			goto fail_nomem;
		s->zbuf = n;
		s->zcap = s->dsize;
	}
	if (!t->zdec || t->zdec_room < z.hdr.used) {
		kz_dec_free(t->zdec);
		t->zdec_room = z.hdr.used > s->info.buf_size ? z.hdr.used : s->info.buf_size;
		if (!(t->zdec = kz_dec_new(t->zdec_room)))
			goto fail_nomem;
	}
	memcpy(s->zbuf, &z.hdr, HDR);
	if (kz_decode(t->zdec, &z, s->f.p + e->zdata, s->zbuf + HDR, why, sizeof(why)) < 0)
		goto fail;
	s->zloaded = i + 1;
	s->d = s->zbuf;
	return 0;
fail_nomem:
	snprintf(why, sizeof(why), "compressed sub-buffer seq %llu: out of memory",
		 (unsigned long long)e->seq);
fail:
	ktr_diag(t, 1, "%s: offset %llu: %s", s->f.path, (unsigned long long)e->hoff, why);
	e->corrupt = 1;
	e->why = strdup(why);
	s->d = s->f.p;
	s->dsize = s->f.size;
	return -1;
}

/*
 * The time a gap before sub-buffer @i is shown at: its first record's, or
 * its first_ts; the gap is attributed to that sub-buffer's CPU and thread.
 */
static uint64_t time_before(struct ktr_trace *t, struct ktr_stream *s, size_t i)
{
	for (; i < s->nsb; i++) {
		const struct ktr_sb *e = &s->sb[i];
		struct ktrace_subbuf h;
		uint64_t raw, rec = e->off + HDR;

		if (e->corrupt || load(t, s, i) < 0)
			continue;
		get_hdr(s, ktr_sb_hdr(e), &h);
		raw = h.first_ts;
		rec = e->off + h.hdr_size;
		s->cpu = h.cpu == 0xffff ? -1 : h.cpu;
		s->tid = h.tid;
		if (rec + 8 <= s->dsize) {
			uint64_t w = ktr_le64(s->d + rec);

			if (KTRACE_REC_CLASS(w) && ext_ts(h.first_ts, KTRACE_REC_TS(w)) < raw)
				raw = ext_ts(h.first_ts, KTRACE_REC_TS(w));
		}
		return raw;
	}
	return s->last_raw;
}

static uint32_t pid_of(struct ktr_trace *t, struct ktr_stream *s, uint32_t tid)
{
	uint32_t pid = 0;

	if (!tid)
		return 0;
	if (tid == s->cache_tid)
		return s->cache_pid;
	if (!ktr_thread(t, tid, &pid, NULL)) {
		if (s->info.have_ctl && s->info.owner == tid)
			pid = s->info.pid;
		else if (s->info.kind != KTRACE_STREAM_CPU)
			pid = t->info.pid;
	}
	s->cache_tid = tid;
	s->cache_pid = pid;
	return pid;
}

static void fill_common(struct ktr_trace *t, struct ktr_stream *s, struct ktr_rec *r,
			uint64_t raw)
{
	memset(r, 0, offsetof(struct ktr_rec, w));
	r->stream = s->info.index;
	r->raw = raw;
	r->ns = ktr_raw_to_ns_hint(t, raw, &s->calib_hint);
	r->cpu = s->cpu;
	r->tid = s->tid;
	r->pid = pid_of(t, s, s->tid);
	r->file = NULL;
	r->what = NULL;
	r->gap = 0;
	r->count = 0;
	r->until_ns = 0;
	s->last_raw = raw;
}

/* ns of the first record of the first valid index entry from @i on (0: none). */
static uint64_t next_ns(struct ktr_trace *t, const struct ktr_stream *s, size_t i)
{
	for (; i < s->nsb; i++) {
		struct ktrace_subbuf h;

		if (s->sb[i].corrupt)
			continue;
		get_hdr(s, ktr_sb_hdr(&s->sb[i]), &h);
		return ktr_raw_to_ns(t, h.first_ts);
	}
	return 0;
}

static void make_gap(struct ktr_trace *t, struct ktr_stream *s, struct ktr_rec *r, enum ktr_gap g,
		     uint64_t count, uint64_t raw)
{
	fill_common(t, s, r, raw);
	r->kind = KTR_GAP;
	r->gap = g;
	r->count = count;
	r->file = s->f.path;
}

/* Set up the record range of the current (valid) sub-buffer. */
/* The cursor's state from sub-buffer @e's header @h: its flags, times, CPU, thread, losses. */
static void take_hdr(struct ktr_stream *s, const struct ktr_sb *e, const struct ktrace_subbuf *h)
{
	s->hdr_size = h->hdr_size;
	s->flags = h->flags;
	s->first_ts = h->first_ts;
	s->cpu = h->cpu == 0xffff ? -1 : h->cpu;
	s->tid = h->tid;
	s->lost = h->lost;
	s->lost_sum += h->lost;
	s->pos = e->off + h->hdr_size;
}

static void start_subbuf(struct ktr_trace *t, struct ktr_stream *s)
{
	const struct ktr_sb *e = &s->sb[s->cur];
	const uint8_t *nrec;
	struct ktrace_subbuf h;
	uint64_t extent, size = s->dsize;

	/* nrec before used (acquire): a live writer stores them in the other
	 * order (runtime.h), so nrec can exceed the records found by the one
	 * record being written, never by more.  (A caller's buffer given to
	 * ktr_open_mem() may be unaligned; it is not being written.) */
	nrec = s->f.p + ktr_sb_hdr(e) + offsetof(struct ktrace_subbuf, nrec);
	if ((uintptr_t)nrec % sizeof(uint32_t) == 0)
		s->nrec = __atomic_load_n((const uint32_t *)nrec, __ATOMIC_ACQUIRE);
	else
		memcpy(&s->nrec, nrec, sizeof(s->nrec));
	s->found = 0;
	get_hdr(s, ktr_sb_hdr(e), &h);
	take_hdr(s, e, &h);
	extent = h.used;
	s->open_shared = (h.flags & KTRACE_SBF_CTX) != 0;
	s->scan_tail = 0;
	if (s->open_shared && !(h.flags & KTRACE_SBF_CLOSED) &&
	    (s->info.kind == KTRACE_STREAM_SHARED || s->info.kind == 0)) {
		/*
		 * A shared sub-buffer of a ring (its writers set `used` when it
		 * is closed, CLOSED never): below the head's sequence number it
		 * is closed and `used` is its extent; at the head's it is open
		 * and its extent is the head's offset (`used` is then left over
		 * from the ring's previous lap).  Without the control file, the
		 * newest one is taken as open and read up to the first record
		 * that is not of this lap (KTRACE_SBF_ORDERED) or not written.
		 */
		uint64_t room = s->room - h.hdr_size;

		if (s->info.have_ctl && !s->packed && s->info.buf_size) {
			uint64_t hseq = s->info.head / s->info.buf_size, ho = s->info.head % s->info.buf_size;

			if (h.seq == hseq)
				extent = ho >= h.hdr_size ? ho - h.hdr_size : 0;
		} else if (s->cur + 1 == s->nsb) {
			extent = room;
			s->scan_tail = 1;
		}
		if (extent > room)
			extent = room;
	}
	s->end = s->pos + extent;
	s->trunc = 0;
	s->bad = 0;
	if (s->end > size) {
		ktr_diag(t, 1, "%s: offset %llu: truncated: sub-buffer seq %llu needs %llu bytes, the file ends at %llu",
			 s->f.path, (unsigned long long)ktr_sb_hdr(e), (unsigned long long)h.seq,
			 (unsigned long long)(h.hdr_size + extent), (unsigned long long)size);
		s->end = s->pos > size ? s->pos : size;
		s->trunc = 1;
		s->bad = 1;
		s->bad_off = file_off(s, size);
		snprintf(s->what, sizeof(s->what), "truncated sub-buffer (seq %llu)",
			 (unsigned long long)h.seq);
	}
}

size_t ktr_subbuf_count(const struct ktr_trace *t, unsigned si)
{
	return si < t->nstreams ? t->streams[si].nsb : 0;
}

int ktr_subbuf_at(const struct ktr_trace *t, unsigned si, size_t i, struct ktr_subbuf_info *out)
{
	const struct ktr_stream *s;
	const struct ktr_sb *e;
	struct ktrace_subbuf h;

	if (si >= t->nstreams || i >= t->streams[si].nsb)
		return 0;
	s = &t->streams[si];
	e = &s->sb[i];
	memset(out, 0, sizeof(*out));
	out->seq = e->seq;
	out->depth_min = -1;
	if (e->corrupt) {
		out->corrupt = 1;
		return 1;
	}
	get_hdr(s, ktr_sb_hdr(e), &h);
	out->first_ns = h.first_ns;
	out->last_ns = h.last_ts ? ktr_raw_to_ns(t, h.last_ts) : 0;
	out->records = h.nrec;
	out->lost = h.lost;
	out->tid = h.tid;
	out->flags = h.flags;
	if (e->framed && e->depth_min)
		out->depth_min = e->depth_min - 1;
	return 1;
}

void ktr_set_window(struct ktr_trace *t, uint64_t from_ns, uint64_t to_ns)
{
	t->win = from_ns > 0 || to_ns < UINT64_MAX;
	t->win_from = from_ns;
	t->win_to = to_ns;
}

uint64_t ktr_window_skipped(const struct ktr_trace *t)
{
	return t->win_skipped;
}

/*
 * Sub-buffer @e outside the window (ktr_set_window()), judged by its
 * header alone: set up as if its records had been read (their count, its
 * losses, the last record's time for the gaps after it).  Return: 1 if
 * skipped.
 */
static int skip_outside(struct ktr_trace *t, struct ktr_stream *s, const struct ktr_sb *e)
{
	struct ktrace_subbuf h, p;

	get_hdr(s, ktr_sb_hdr(e), &h);
	if ((h.flags & KTRACE_SBF_CTX) || !(h.flags & KTRACE_SBF_CLOSED) || !h.used)
		return 0;
	if (ktr_raw_to_ns(t, h.last_ts) >= t->win_from) {
		/* its records come after the previous sub-buffer's last one */
		const struct ktr_sb *pe = e > s->sb ? e - 1 : NULL;

		if (!pe || pe->corrupt || t->win_to == UINT64_MAX)
			return 0;
		get_hdr(s, ktr_sb_hdr(pe), &p);
		if ((p.flags & KTRACE_SBF_CTX) || !p.used || ktr_raw_to_ns(t, p.last_ts) <= t->win_to)
			return 0;
	}
	take_hdr(s, e, &h);
	s->nrec = s->found = h.nrec;
	s->last_raw = h.last_ts;
	s->end = s->pos;
	s->trunc = s->bad = 0;
	t->win_skipped++;
	return 1;
}

/* Mark a bad record at @off: report it; the rest of the sub-buffer is skipped. */
static void __attribute__((format(printf, 4, 5)))
bad_record(struct ktr_trace *t, struct ktr_stream *s, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->what, sizeof(s->what), fmt, ap);
	va_end(ap);
	ktr_diag(t, 1, "%s: offset %llu: %s", s->f.path, file_off(s, off), s->what);
	s->bad = 1;
	s->trunc = 0;
	s->bad_off = file_off(s, off);
}

/* Decode the next record of the current sub-buffer.  1: *r is a record, 0: no more. */
/*
 * Shared sub-buffers (context words): does a run of well-formed records
 * start at @from and go on to @end, or for 16 records?  Well-formed: a
 * known class (or a reservation marker), fits, and in an ORDERED
 * sub-buffer stamped at or after first_ts and in order.  How the reader
 * finds the next record after one torn by its writer's death.
 */
static int chain_ok(const struct ktr_stream *s, uint64_t from, uint64_t end)
{
	uint64_t prev = s->first_ts;
	int ordered = (s->flags & KTRACE_SBF_ORDERED) != 0;

	for (unsigned n = 0; n < 16 && from < end; n++) {
		uint64_t h, len;

		if (end - from < 16)
			return 0;
		h = ktr_le64(s->d + from);
		if (KTRACE_REC_IS_RESERVED(h)) {
			from += 16 + 8 * (uint64_t)KTRACE_REC_WORDS(h);
			continue;
		}
		if (!KTRACE_REC_CLASS(h) || KTRACE_REC_CLASS(h) > KTRACE_CLASS_KEVENT)
			return 0;
		len = 16 + 8 * (uint64_t)KTRACE_REC_WORDS(h);
		if (len > end - from)
			return 0;
		if (ordered) {
			uint64_t raw = ext_ts(s->first_ts, KTRACE_REC_TS(h));

			if (raw < prev)
				return 0;
			prev = raw;
		}
		from += len;
	}
	return 1;
}

/*
 * In a shared sub-buffer, the record at @off is not one of this lap: a
 * reservation its writer died in before marking it, or (reading up to a
 * sub-buffer's end) the rest of an earlier lap.  Find the next record of
 * this lap; the skipped bytes are one lost record.  Return: 1 with *@r a
 * LOST gap and the cursor moved past it, 0 if nothing of this lap follows
 * (the cursor is at the end).
 */
static int resync(struct ktr_trace *t, struct ktr_stream *s, uint64_t off, struct ktr_rec *r)
{
	for (uint64_t at = off + 8; at + 16 <= s->end; at += 8) {
		if (!chain_ok(s, at, s->end))
			continue;
		ktr_diag(t, 0, "%s: offset %llu: a record torn by the death of its writer: %llu bytes skipped to the next record",
			 s->f.path, file_off(s, off), (unsigned long long)(at - off));
		s->pos = at;
		s->found++; /* it was a record (nrec, where kept, counts it) */
		make_gap(t, s, r, KTR_GAP_LOST, 1, s->last_raw ? s->last_raw : s->first_ts);
		return 1;
	}
	if (!s->scan_tail && !all_zero(s->d + off, s->end - off))
		ktr_diag(t, 0, "%s: offset %llu: a record torn by the death of its writer: the last %llu bytes of the sub-buffer skipped",
			 s->f.path, file_off(s, off), (unsigned long long)(s->end - off));
	s->pos = s->end;
	return 0;
}

static int next_record(struct ktr_trace *t, struct ktr_stream *s, struct ktr_rec *r)
{
	const uint8_t *p = s->d;

	while (s->pos < s->end) {
		uint64_t off = s->pos, left = s->end - s->pos, h, len, raw;
		unsigned ctx = (s->flags & KTRACE_SBF_CTX) ? 1 : 0, words, cls;

		if (left < 8) {
			if (!s->trunc)
				bad_record(t, s, off, "partial record header (%llu bytes)",
					   (unsigned long long)left);
			return 0;
		}
		h = ktr_le64(p + off);
		cls = KTRACE_REC_CLASS(h);
		if (ctx && KTRACE_REC_IS_RESERVED(h) && 16 + 8 * (uint64_t)KTRACE_REC_WORDS(h) <= left) {
			/* A reserved record its writer never finished (it died): one record lost. */
			s->pos += 16 + 8 * (uint64_t)KTRACE_REC_WORDS(h);
			s->found++;
			make_gap(t, s, r, KTR_GAP_LOST, 1, s->last_raw ? s->last_raw : s->first_ts);
			return 1;
		}
		if (ctx && (cls == KTRACE_CLASS_INVALID ||
			    ((s->flags & KTRACE_SBF_ORDERED) &&
			     ext_ts(s->first_ts, KTRACE_REC_TS(h)) < s->first_ts))) {
			/* Not a record of this lap: skip to the next one. */
			if (s->scan_tail && all_zero(p + off, left)) {
				s->pos = s->end;
				return 0;
			}
			return resync(t, s, off, r);
		}
		if (cls == KTRACE_CLASS_INVALID) {
			bad_record(t, s, off, "invalid record header 0x%016llx",
				   (unsigned long long)h);
			return 0;
		}
		words = KTRACE_REC_WORDS(h);
		len = 8 + 8 * (uint64_t)ctx + 8 * (uint64_t)words;
		if (len > left) {
			if (!s->trunc)
				bad_record(t, s, off,
					   "record of %llu bytes runs past the end of the sub-buffer (%llu bytes left)",
					   (unsigned long long)len, (unsigned long long)left);
			return 0;
		}
		s->pos += len;
		raw = ext_ts(s->first_ts, KTRACE_REC_TS(h));
		if (ctx) {
			uint64_t c = ktr_le64(p + off + 8);

			s->tid = KTRACE_CTX_TID(c);
			s->cpu = KTRACE_CTX_CPU(c) == 0xffff ? -1 : (int)KTRACE_CTX_CPU(c);
		}
		if (cls == KTRACE_CLASS_INTERNAL && KTRACE_REC_ID(h) == KTRACE_INT_CPU && words >= 1) {
			uint64_t w = ktr_le64(p + off + 8 + 8 * ctx);
			uint32_t cpu = (uint32_t)w;

			s->cpu = cpu >= 0xffff ? -1 : (int)cpu;
			if (w >> 32)
				s->tid = (uint32_t)(w >> 32);
			continue;
		}
		fill_common(t, s, r, raw);
		s->found += cls != KTRACE_CLASS_INTERNAL;
		r->kind = KTR_RECORD;
		r->offset = off;
		r->depth = ctx ? KTRACE_CTX_DEPTH(ktr_le64(p + off + 8)) : 0;
		r->cls = cls;
		r->id = KTRACE_REC_ID(h);
		r->nwords = words;
		for (unsigned i = 0; i < words; i++)
			r->w[i] = ktr_le64(p + off + 8 + 8 * ctx + 8 * i);
		if (cls == KTRACE_CLASS_KEVENT && words >= 1) {
			/* word 0 names the task (include/ktrace/lkst.h): pid | tgid << 32 */
			r->tid = KTRACE_KEVENT_TID(r->w[0]);
			r->pid = KTRACE_KEVENT_TGID(r->w[0]);
			if (!r->pid && r->tid)
				ktr_thread(t, r->tid, &r->pid, NULL);
		}
		return 1;
	}
	return 0;
}

/*
 * The records of the current sub-buffer (@e) parsed: do they number its
 * header's nrec?  Not counted in shared streams (nrec 0 with CTX).  A
 * closed sub-buffer must match exactly; an open one may hold one record
 * less (being written) or more (written since nrec was read).
 */
static void check_nrec(struct ktr_trace *t, struct ktr_stream *s, const struct ktr_sb *e)
{
	uint64_t bytes = s->end - (e->off + s->hdr_size);

	if (s->bad || s->nrec == s->found || (!s->nrec && (s->flags & KTRACE_SBF_CTX)))
		return;
	if (!(s->flags & KTRACE_SBF_CLOSED) && (s->found > s->nrec || s->nrec == s->found + 1))
		return;
	snprintf(s->what, sizeof(s->what),
		 "sub-buffer seq %llu: nrec says %u records, its %llu bytes of records hold %u",
		 (unsigned long long)e->seq, s->nrec, (unsigned long long)bytes, s->found);
	ktr_diag(t, 1, "%s: offset %llu: %s", s->f.path, file_off(s, e->off), s->what);
	s->bad = 1;
	s->bad_off = file_off(s, e->off);
}

static int stream_next(struct ktr_trace *t, struct ktr_stream *s, struct ktr_rec *r);

int ktr_stream_next(struct ktr_trace *t, unsigned si, struct ktr_rec *r)
{
	return si < t->nstreams ? stream_next(t, &t->streams[si], r) : 0;
}

static int stream_next(struct ktr_trace *t, struct ktr_stream *s, struct ktr_rec *r)
{
	for (;;) {
		struct ktr_sb *e = s->cur < s->nsb ? &s->sb[s->cur] : NULL;

		switch (s->phase) {
		case PH_GAP: {
			uint64_t expect = s->have_prev ? s->prev_seq + 1 : s->seq_base;

			if (!e) {
				s->phase = PH_DROPPED;
				break;
			}
			s->phase = PH_START;
			if (e->seq > expect) {
				make_gap(t, s, r, KTR_GAP_OVERWRITTEN, e->seq - expect,
					 time_before(t, s, s->cur));
				r->until_ns = next_ns(t, s, s->cur);
				return 1;
			}
			break;
		}
		case PH_START:
			if (!s->have_prev || e->seq > s->prev_seq)
				s->prev_seq = e->seq;
			s->have_prev = 1;
			if (t->win && !s->peek && !e->corrupt && skip_outside(t, s, e)) {
				s->phase = PH_TAIL;
				break;
			}
			if (!e->corrupt)
				load(t, s, s->cur);
			if (e->corrupt) {
				s->phase = PH_NEXT;
				make_gap(t, s, r, KTR_GAP_CORRUPT, 0,
					 s->last_raw ? s->last_raw : time_before(t, s, s->cur));
				r->offset = ktr_sb_hdr(e);
				r->what = e->why ? e->why : "corrupt sub-buffer header";
				return 1;
			}
			start_subbuf(t, s);
			s->phase = PH_RECORDS;
			break;
		case PH_RECORDS:
			if (next_record(t, s, r))
				return 1;
			s->phase = PH_TAIL;
			break;
		case PH_TAIL:
			s->phase = PH_LOST;
			s->got += s->found;
			check_nrec(t, s, e);
			if (s->bad) {
				s->bad = 0;
				make_gap(t, s, r, KTR_GAP_CORRUPT, 0, s->last_raw);
				r->offset = s->bad_off;
				r->what = s->what;
				return 1;
			}
			break;
		case PH_LOST:
			s->phase = PH_NEXT;
			if (s->lost) {
				make_gap(t, s, r, KTR_GAP_LOST, s->lost, s->last_raw);
				r->until_ns = next_ns(t, s, s->cur + 1);
				return 1;
			}
			break;
		case PH_NEXT:
			release(s, e);
			s->cur++;
			s->phase = PH_GAP;
			break;
		case PH_DROPPED:
			s->phase = PH_MISSING;
			if (s->info.have_ctl && s->info.dropped > s->lost_sum) {
				make_gap(t, s, r, KTR_GAP_DROPPED, s->info.dropped - s->lost_sum,
					 s->last_raw);
				return 1;
			}
			break;
		case PH_MISSING:
			/* the file lost records after the consumer wrote them (truncated) */
			s->phase = PH_END;
			if (s->have_want && s->want_records > s->got) {
				make_gap(t, s, r, KTR_GAP_LOST, s->want_records - s->got, s->last_raw);
				return 1;
			}
			break;
		default:
			return 0;
		}
	}
}

static size_t stream_calls(struct ktr_trace *t, struct ktr_stream *s, struct ktr_call *c, size_t max,
			   uint64_t lim, int incl, uint64_t *last_off);

size_t ktr_stream_calls(struct ktr_trace *t, unsigned si, struct ktr_call *c, size_t max, uint64_t lim,
			int incl, uint64_t *last_off)
{
	return stream_calls(t, &t->streams[si], c, max, lim, incl, last_off);
}

static size_t stream_calls(struct ktr_trace *t, struct ktr_stream *s, struct ktr_call *c, size_t max,
			   uint64_t lim, int incl, uint64_t *last_off)
{
	const uint8_t *p = s->d;
	uint32_t pid;
	size_t n = 0;

	if (s->phase != PH_RECORDS || (s->flags & KTRACE_SBF_CTX))
		return 0;
	pid = pid_of(t, s, s->tid);
	/* next_record()'s steps for a record without a context word, when it is a whole CALL record */
	while (n < max && s->pos < s->end && s->end - s->pos >= 16) {
		uint64_t off = s->pos, h = ktr_le64(p + off), len, raw, w[4];
		unsigned words = KTRACE_REC_WORDS(h);

		len = 8 + 8 * (uint64_t)words;
		if (KTRACE_REC_CLASS(h) != KTRACE_CLASS_CALL || !words || len > s->end - off)
			break;
		raw = ext_ts(s->first_ts, KTRACE_REC_TS(h));
		if (raw > lim || (raw == lim && !incl))
			break;
		for (unsigned i = 0; i < words && i < 4; i++)
			w[i] = ktr_le64(p + off + 8 + 8 * i);
		c[n].tid = s->tid;
		c[n].pid = pid;
		c[n].cpu = s->cpu;
		ktr_call_fill(t, &c[n], KTRACE_REC_ID(h), w, words, raw, ktr_ns_at(t, raw, &s->calib_hint));
		s->pos += len;
		s->found++;
		s->last_raw = raw;
		*last_off = off;
		n++;
	}
	return n;
}

struct ktr_peek {
	struct ktr_stream s; /* a copy of the stream's state, with a buffer of its own */
	size_t nsb;          /* the stream's sub-buffers */
};

struct ktr_peek *ktr_peek_new(struct ktr_trace *t, unsigned si)
{
	struct ktr_peek *p;

	if (si >= t->nstreams || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->s = t->streams[si];
	p->nsb = p->s.nsb;
	p->s.peek = 1;
	p->s.zbuf = NULL;
	p->s.zcap = 0;
	p->s.zloaded = 0;
	p->s.info.have_ctl = 0; /* no end-of-stream gaps: the stream's own cursor reports them */
	p->s.have_want = 0;
	return p;
}

size_t ktr_peek_calls(struct ktr_trace *t, struct ktr_peek *p, size_t j, struct ktr_call *c, size_t max)
{
	struct ktr_stream *s = &p->s;
	struct ktr_rec r;
	uint64_t off;
	size_t n = 0;

	if (j >= p->nsb)
		return 0;
	s->nsb = j + 1; /* the cursor ends with sub-buffer j */
	s->cur = j;
	s->phase = PH_START;
	s->have_prev = 0;
	s->bad = s->trunc = 0;
	while (n < max) {
		size_t k = s->phase == PH_RECORDS ? stream_calls(t, s, c + n, max - n, UINT64_MAX, 1, &off) : 0;

		if (k) {
			n += k;
			continue;
		}
		if (!stream_next(t, s, &r))
			break;
		if (r.kind == KTR_RECORD && ktr_call_decode(t, &r, &c[n]))
			n++;
	}
	s->nsb = p->nsb;
	return n;
}

void ktr_peek_free(struct ktr_peek *p)
{
	if (p)
		free(p->s.zbuf);
	free(p);
}

/**
 * ktr_guess_fixed() - guess the geometry of a fixed-layout stream file
 * when neither metadata nor control file gives it.  Valid headers must sit
 * at multiples of the sub-buffer size, so the size is the largest power of
 * two dividing every offset (of a multiple of 4096) holding a valid header;
 * the guess is then checked: every slot header must be valid or zero.
 * Return: 0 with *@bs and *@nr set, -1 if the file does not look fixed.
 */
int ktr_guess_fixed(const struct ktr_stream *s, uint32_t *bs, uint32_t *nr)
{
	uint64_t size = s->f.size, g = 0, b;
	struct ktrace_subbuf h;
	char why[160];

	if (size < HDR)
		return -1;
	for (uint64_t off = 4096; off + HDR <= size; off += 4096) {
		get_hdr(s, off, &h);
		if (!check_hdr(&h, KTRACE_MAX_BUF_SIZE_GUESS, why, sizeof(why))) {
			uint64_t a = g ? g : off, c = off;

			while (c) { /* gcd */
				uint64_t r = a % c;

				a = c;
				c = r;
			}
			g = a;
		}
	}
	if (g) {
		b = g & (~g + 1);
	} else {
		uint64_t span = HDR;

		get_hdr(s, 0, &h);
		if (!check_hdr(&h, KTRACE_MAX_BUF_SIZE_GUESS, why, sizeof(why)))
			span = (uint64_t)h.hdr_size + h.used;
		for (b = 4096; b < span; b *= 2)
			;
	}
	if (b > KTRACE_MAX_BUF_SIZE_GUESS)
		return -1;
	for (uint64_t off = 0; off + HDR <= size; off += b) {
		get_hdr(s, off, &h);
		if (h.magic && check_hdr(&h, b, why, sizeof(why)))
			return -1;
	}
	*bs = (uint32_t)b;
	*nr = (uint32_t)((size + b - 1) / b);
	return 0;
}

/*
 * kclient/crash.c - `ktrace read --crash`: turn a crash region of
 * ktrace.ko (debugfs ktrace/crash/image after a panic and a reboot, or a
 * copy of it) into a normal trace directory: DST/cpuN (layout packed),
 * metadata, dropped.  The region's format is the "crash region" block of
 * include/ktrace/format.h (docs/FORMAT.md, "Crash region"); the module's
 * half is kmod/ktrace_crash.c.
 *
 * Everything the image says is checked before it is used: the header and
 * channel checks, every offset and size against the image, each
 * sub-buffer header's check and slot, each record's check word.  A
 * sub-buffer whose header fails is skipped and counted (bad-subbufs); the
 * first record whose check fails ends its sub-buffer and is counted as
 * torn, in the `lost` field of the sub-buffer written for it, so the loss
 * shows in `ktrace print` like any other.  Records are never shown unless
 * their check word matches.
 *
 * kcr_open() and kcr_ring() are pure (no I/O) for the fuzz target
 * (fuzz/fuzz_crash.c); read_crash() does the files.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ktrace/format.h"
#include "kclient/internal.h"
#include "kclient/kclient.h"
#include "lib/safefile.h"

#define CMD "read"

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

int kcr_open(const unsigned char *img, size_t len, struct kcr_region *r, char *err, size_t errlen)
{
	struct ktrace_crash_hdr h;
	uint64_t w[3];

	memset(r, 0, sizeof(*r));
	r->img = img;
	r->len = len;
	if (len < KTRACE_CRASH_HDR_SIZE) {
		snprintf(err, errlen, "%zu bytes: too small for a crash region (header page %u)", len,
			 KTRACE_CRASH_HDR_SIZE);
		return -1;
	}
	memcpy(&h, img, sizeof(h));
	if (h.magic != KTRACE_CRASH_MAGIC) {
		snprintf(err, errlen, "offset 0: bad magic 0x%016" PRIx64 ": not a ktrace crash region",
			 (uint64_t)h.magic);
		return -1;
	}
	if (h.version != KTRACE_CRASH_VERSION || h.hdr_size != KTRACE_CRASH_HDR_SIZE) {
		snprintf(err, errlen, "offset 8: version %u, header size %u (expected %u, %u)", h.version,
			 h.hdr_size, KTRACE_CRASH_VERSION, KTRACE_CRASH_HDR_SIZE);
		return -1;
	}
	if (h.check != ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 1, img,
						      offsetof(struct ktrace_crash_hdr, check)))) {
		snprintf(err, errlen, "offset %zu: the header check fails: damaged header",
			 offsetof(struct ktrace_crash_hdr, check));
		return -1;
	}
	if (h.region_size != len) {
		snprintf(err, errlen, "the header says %" PRIu64 " bytes, the image has %zu: truncated or not a whole region",
			 (uint64_t)h.region_size, len);
		return -1;
	}
	if (h.nchan > KTRACE_CRASH_MAX_CHAN || h.chan_size != KTRACE_CRASH_CHAN_SIZE ||
	    h.chan_off < sizeof(h) || (uint64_t)h.chan_off + (uint64_t)h.nchan * h.chan_size > KTRACE_CRASH_HDR_SIZE) {
		snprintf(err, errlen, "offset 72: bad channel table (%u entries of %u bytes at %u)", h.nchan,
			 h.chan_size, h.chan_off);
		return -1;
	}
	memcpy(r->boot_id, h.boot_id, 16);
	r->created_ns = h.created_ns;
	r->realtime_ns = h.realtime_ns;
	w[0] = h.panic_ns;
	w[1] = h.panic_cpu | ((uint64_t)h.panic_src << 32);
	w[2] = h.stop_ns;
	if (h.panic_ns && h.panic_check == ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 2, w, 3))) {
		r->panic_ns = h.panic_ns;
		r->panic_cpu = h.panic_cpu;
		r->panic_src = h.panic_src;
		r->stop_ns = h.stop_ns;
	}
	if (h.note_check &&
	    h.note_check == ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 5,
							   img + offsetof(struct ktrace_crash_hdr, note),
							   KTRACE_CRASH_NOTE_MAX))) {
		memcpy(r->note, h.note, KTRACE_CRASH_NOTE_MAX);
		r->note[KTRACE_CRASH_NOTE_MAX - 1] = '\0';
	}
	for (unsigned i = 0; i < h.nchan; i++) {
		const unsigned char *p = img + h.chan_off + (size_t)i * h.chan_size;
		struct ktrace_crash_chan e;
		struct kcr_chan *c = &r->chan[r->nchan];
		uint64_t ring_bytes;

		memcpy(&e, p, sizeof(e));
		if (e.check != ktrace_crash_final(fold_bytes(KTRACE_CRASH_SEED ^ 3, p,
							      offsetof(struct ktrace_crash_chan, check)))) {
			snprintf(err, errlen, "channel %u (offset %zu): the check fails: damaged entry", i,
				 (size_t)h.chan_off + (size_t)i * h.chan_size);
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
	}
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

int kcr_ring(const struct kcr_region *r, unsigned ch, unsigned ring, kcr_emit_fn emit, void *arg,
	     struct kcr_stats *st)
{
	const struct kcr_chan *c = &r->chan[ch];
	const unsigned char *base = r->img + c->ring_off + (size_t)ring * c->subbuf_size * c->subbuf_nr;
	int ctx = (c->flags & KTRACE_GLOBAL_CHANNEL) != 0;
	struct slot *slots = malloc(sizeof(*slots) * c->subbuf_nr);
	unsigned char *out = malloc(c->subbuf_size);
	uint32_t n = 0;
	int rc = 0;

	if (!slots || !out) {
		free(slots);
		free(out);
		return -1;
	}
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
	qsort(slots, n, sizeof(*slots), slot_cmp);
	for (uint32_t k = 0; k < n && rc == 0; k++) {
		const unsigned char *p = base + (size_t)slots[k].idx * c->subbuf_size;
		struct ktrace_subbuf h, oh;
		uint32_t off = KTRACE_SUBBUF_HDR_SIZE, o = KTRACE_SUBBUF_HDR_SIZE, nrec = 0, torn = 0;
		uint64_t seqmix, last = 0;

		memcpy(&h, p, sizeof(h));
		seqmix = ktrace_crash_mix(KTRACE_CRASH_SEED ^ 7, h.seq);
		while (off + 8 <= c->subbuf_size) {
			uint64_t hw = rd64(p + off), ck;
			uint32_t nw;

			if (hw == 0)
				break; /* the end: the writer zeroed the rest */
			nw = 1 + (ctx ? 1 : 0) + KTRACE_REC_WORDS(hw);
			if (KTRACE_REC_CLASS(hw) == KTRACE_CLASS_INVALID ||
			    (uint64_t)off + 8ull * nw + 8 > c->subbuf_size) {
				torn = 1;
				break;
			}
			ck = ktrace_crash_mix(seqmix, off);
			for (uint32_t j = 0; j < nw; j++)
				ck = ktrace_crash_mix(ck, rd64(p + off + 8 * j));
			if (rd64(p + off + 8ull * nw) != ktrace_crash_final(ck)) {
				torn = 1; /* stopped inside it: never shown */
				break;
			}
			memcpy(out + o, p + off, 8ull * nw);
			o += 8 * nw;
			off += 8 * (nw + 1);
			nrec++;
			last = full_ts(h.first_ts, KTRACE_REC_TS(hw));
		}
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
		if (emit && emit(arg, out, o) < 0)
			rc = -1;
	}
	free(slots);
	free(out);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

struct emit_ctx {
	int fd;
	const char *dst;
	unsigned idx;
	int failed;
};

static int emit_file(void *arg, const void *buf, size_t len)
{
	static const unsigned char zeros[8];
	struct emit_ctx *e = arg;
	size_t pad = (8 - len % 8) % 8;
	const char *p = buf;

	while (len) {
		ssize_t w = write(e->fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			kcl_error(CMD, "%s/cpu%u: write: %s", e->dst, e->idx, strerror(w < 0 ? errno : ENOSPC));
			e->failed = 1;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	if (pad && write(e->fd, zeros, pad) != (ssize_t)pad) {
		kcl_error(CMD, "%s/cpu%u: write: %s", e->dst, e->idx, strerror(errno));
		e->failed = 1;
		return -1;
	}
	return 0;
}

/* Read the image: SRC itself, or SRC/image when SRC is a directory. */
static unsigned char *load_image(const char *src, size_t *len)
{
	char path[4200];
	struct stat st;
	int fd;
	unsigned char *img;

	snprintf(path, sizeof(path), "%s", src);
	if (stat(src, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(path, sizeof(path), "%s/image", src);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kcl_error(CMD, "%s: %s%s", path, strerror(errno),
			  errno == EACCES ? " (the crash region is root-only)" : "");
		return NULL;
	}
	img = (unsigned char *)kcl_slurp_fd(fd, len, (size_t)1 << 34);
	if (!img)
		kcl_error(CMD, "%s: %s", path, strerror(errno ? errno : EFBIG));
	close(fd);
	return img;
}

static void hex_id(char *out, const unsigned char *id)
{
	static const char hx[] = "0123456789abcdef";
	int o = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hx[id[i] >> 4];
		out[o++] = hx[id[i] & 15];
	}
	out[o] = '\0';
}

int read_crash(const char *src, const char *dst, const char *channel, struct kcr_stats *total)
{
	struct kcr_region *r = malloc(sizeof(*r));
	unsigned char *img;
	size_t len = 0;
	char err[512], id[40];
	const struct kcr_chan *c = NULL;
	unsigned ch = 0, withdata = 0, nstreams = 0, *streams = NULL;
	char *meta = NULL;
	size_t mlen = 0;
	FILE *f = NULL;
	int rc = 1, dfd;

	memset(total, 0, sizeof(*total));
	if (!r) {
		kcl_error(CMD, "out of memory");
		return 1;
	}
	img = load_image(src, &len);
	if (!img)
		goto out;
	if (kcr_open(img, len, r, err, sizeof(err))) {
		kcl_error(CMD, "%s: %s", src, err);
		goto out;
	}
	for (unsigned i = 0; i < r->nchan; i++) {
		struct kcr_stats s = { 0 };

		if (channel && !strcmp(channel, r->chan[i].name)) {
			ch = i;
			c = &r->chan[i];
		}
		for (unsigned k = 0; k < r->chan[i].nrings; k++)
			kcr_ring(r, i, k, NULL, NULL, &s);
		if (s.records && !channel) {
			withdata++;
			ch = i;
		}
	}
	if (channel && !c) {
		kcl_error(CMD, "%s: no channel '%s' in the crash region (it has:%s%s%s%s)", src, channel,
			  r->nchan > 0 ? " " : " none", r->nchan > 0 ? r->chan[0].name : "",
			  r->nchan > 1 ? " " : "", r->nchan > 1 ? r->chan[1].name : "");
		goto out;
	}
	if (!channel) {
		if (withdata > 1) {
			kcl_error(CMD, "%s: several channels hold records: choose one with --channel NAME (%s, %s%s)",
				  src, r->chan[0].name, r->chan[1].name, r->nchan > 2 ? ", ..." : "");
			goto out;
		}
		if (withdata == 0 && r->nchan == 0) {
			kcl_error(CMD, "%s: the crash region has no channel (no flight channel was armed)", src);
			goto out;
		}
	}
	c = &r->chan[ch];

	snprintf(err, sizeof(err), "%s/control", dst);
	if (access(err, F_OK) == 0) {
		kcl_error(CMD, "%s: DST holds a user-space trace; choose another directory", err);
		goto out;
	}
	dfd = ksf_dir_open(dst, KSF_CREATE | KSF_TRACE | KSF_CLEAR, err, sizeof(err));
	if (dfd < 0) {
		kcl_error(CMD, "%s", err);
		goto out;
	}
	close(dfd);
	streams = calloc(c->nrings, sizeof(*streams));
	if (!streams) {
		kcl_error(CMD, "out of memory");
		goto out;
	}
	for (unsigned k = 0; k < c->nrings; k++) {
		struct kcr_stats s = { 0 };
		struct emit_ctx e = { .dst = dst, .idx = k };
		char name[32];

		kcr_ring(r, ch, k, NULL, NULL, &s);
		if (!s.subbufs && (nstreams || k + 1 < c->nrings))
			continue; /* nothing of this CPU (keep at least one stream) */
		snprintf(name, sizeof(name), "cpu%u", k);
		e.fd = ksf_create(dst, name, O_WRONLY);
		if (e.fd < 0) {
			kcl_error(CMD, "%s/%s: cannot create: %s", dst, name, strerror(-e.fd));
			goto out;
		}
		memset(&s, 0, sizeof(s));
		if (kcr_ring(r, ch, k, emit_file, &e, &s) < 0 && !e.failed)
			kcl_error(CMD, "out of memory");
		if (close(e.fd) < 0 || e.failed) {
			if (!e.failed)
				kcl_error(CMD, "%s/%s: %s", dst, name, strerror(errno));
			goto out;
		}
		streams[nstreams++] = k;
		total->subbufs += s.subbufs;
		total->records += s.records;
		total->torn += s.torn;
		total->bad_subbufs += s.bad_subbufs;
		total->empty_subbufs += s.empty_subbufs;
		if (s.last_ns > total->last_ns)
			total->last_ns = s.last_ns;
		if (s.first_ns && (!total->first_ns || s.first_ns < total->first_ns))
			total->first_ns = s.first_ns;
	}
	total->panic_ns = r->panic_ns;
	total->stop_ns = r->stop_ns;

	f = open_memstream(&meta, &mlen);
	if (!f) {
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		goto out;
	}
	hex_id(id, r->boot_id);
	fprintf(f, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	fprintf(f, "# recovered from the crash region %s by ktrace read --crash\n", src);
	fprintf(f, "clock mono\n");
	/* The raw clock is CLOCK_MONOTONIC of the crashed boot: identity pairs. */
	fprintf(f, "calib %" PRIu64 " %" PRIu64 "\n", r->created_ns, r->created_ns);
	{
		uint64_t end = r->panic_ns > total->last_ns ? r->panic_ns : total->last_ns;

		if (end <= r->created_ns)
			end = r->created_ns + 1000000000ull;
		fprintf(f, "calib %" PRIu64 " %" PRIu64 "\n", end, end);
	}
	kcl_md_machine(f, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "channel %s\n", c->name);
	fprintf(f, "mode flight\n");
	fprintf(f, "scope %s\n", (c->flags & KTRACE_GLOBAL_CHANNEL) ? "global" : "cpu");
	fprintf(f, "buf-size %u\nbuf-nr %u\nlayout packed\n", c->subbuf_size, c->subbuf_nr);
	for (unsigned i = 0; i < nstreams; i++)
		fprintf(f, "stream %u %s cpu%u\n", streams[i],
			(c->flags & KTRACE_GLOBAL_CHANNEL) ? "shared" : "cpu", streams[i]);
	fprintf(f, "created-ns %" PRIu64 "\n", r->created_ns);
	fprintf(f, "realtime-ns %" PRIu64 "\n", r->realtime_ns + r->created_ns);
	fprintf(f, "crash-boot-id %s\n", id);
	fprintf(f, "crash-panic-ns %" PRIu64 "\n", r->panic_ns);
	if (r->panic_ns)
		fprintf(f, "crash-panic-cpu %u\ncrash-panic-stamp %s\ncrash-stop-ns %" PRIu64 "\n",
			r->panic_cpu, r->panic_src == KTRACE_CRASH_PANIC_ENTRY ? "entry" : "notifier",
			r->stop_ns);
	fprintf(f, "crash-last-ns %" PRIu64 "\n", total->last_ns);
	fprintf(f, "crash-torn %" PRIu64 "\n", total->torn);
	fprintf(f, "crash-bad-subbufs %" PRIu64 "\n", total->bad_subbufs);
	if (r->note[0]) {
		fprintf(f, "crash-note ");
		for (const char *s = r->note; *s; s++)
			fputc(*s >= ' ' && *s <= '~' ? *s : '?', f);
		fputc('\n', f);
	}
	if (c->catalog) {
		const char *p = c->catalog, *end = c->catalog + c->catalog_len;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

			if ((l > 5 && !strncmp(p, "func ", 5)) || (l > 6 && !strncmp(p, "event ", 6)) ||
			    (l > 12 && !strncmp(p, "unavailable ", 12))) {
				int ok = 1;

				for (size_t i = 0; i < l; i++)
					ok &= p[i] >= ' ' && p[i] <= '~';
				if (ok)
					fprintf(f, "%.*s\n", (int)l, p);
			}
			p += l + 1;
		}
	} else {
		fprintf(f, "# the channel's catalogue was not in the region: names of static events unknown\n");
	}
	if (fclose(f) != 0) {
		f = NULL;
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		goto out;
	}
	f = NULL;
	if ((dfd = ksf_replace(dst, "metadata", meta, mlen)) < 0) {
		kcl_error(CMD, "%s/metadata: cannot write: %s", dst, strerror(-dfd));
		goto out;
	}
	snprintf(err, sizeof(err), "%" PRIu64 "\n", total->torn);
	if ((dfd = ksf_replace(dst, "dropped", err, strlen(err))) < 0) {
		kcl_error(CMD, "%s/dropped: cannot write: %s", dst, strerror(-dfd));
		goto out;
	}
	rc = 0;
out:
	free(meta);
	free(streams);
	free(img);
	free(r);
	return rc;
}

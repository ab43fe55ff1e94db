/*
 * tests/walk.h - an independent, minimal walker of a trace directory for
 * the runtime's tests: it checks the writer against docs/FORMAT.md
 * directly, without the reader library, so a bug shared by writer and
 * reader cannot hide.  Header-only, test use only (no bounds checking
 * beyond what a well-formed trace needs; asserts instead).  Compressed
 * frames are decoded here too, with libzstd and the column transform as
 * docs/FORMAT.md states it, not with reader/zframe.c.
 */
#ifndef KTRACE_TESTS_WALK_H
#define KTRACE_TESTS_WALK_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include <ktrace/format.h>

struct walk_rec {
	unsigned stream;
	uint64_t seq;
	uint64_t hdr;
	uint64_t ctx; /* 0 if the sub-buffer has no context word */
	const uint64_t *payload;
};

struct walk_stats {
	uint64_t records;  /* non-internal records */
	uint64_t internal; /* internal records */
	uint64_t dropped, overwritten, written;
	uint64_t bad;      /* structural errors found */
	uint64_t bytes;    /* committed record bytes */
};

static void *walk_map(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	struct stat st;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	p = *len ? mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0) : NULL;
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static int walk_cmp_seq(const void *a, const void *b)
{
	uint64_t x = (*(const struct ktrace_subbuf *const *)a)->seq;
	uint64_t y = (*(const struct ktrace_subbuf *const *)b)->seq;

	return x < y ? -1 : x > y;
}

/* Does trace @dir say `layout slots` (written by `ktrace record`'s consumer)? */
static int walk_slots(const char *dir)
{
	size_t len;
	char *m = walk_map(dir, "metadata", &len), *text;
	int slots = 0;

	if (!m)
		return 0;
	text = malloc(len + 2);
	text[0] = '\n';
	memcpy(text + 1, m, len);
	text[len + 1] = 0;
	slots = strstr(text, "\nlayout slots\n") != NULL;
	free(text);
	munmap(m, len);
	return slots;
}

/*
 * Entry @e of a compressed frame at @frame, rebuilt as a slot would hold
 * it (header, then records) into @out (@bs bytes; @cols: @bs bytes of
 * scratch), straight from docs/FORMAT.md ("Compressed frames": zstd, then
 * the columns put back).  Return: 0, or -1 if it does not decode.
 */
static int walk_unframe(const uint8_t *frame, const struct ktrace_zentry *e, uint32_t bs,
			uint8_t *out, uint8_t *cols)
{
	uint32_t used = e->hdr.used;
	unsigned ctx = (e->hdr.flags & KTRACE_SBF_CTX) ? 1 : 0;

	memcpy(out, &e->hdr, sizeof(e->hdr));
	if (KTRACE_SUBBUF_HDR_SIZE + (size_t)used > bs)
		return -1;
	if (e->codec == KTRACE_ZCODEC_STORED)
		memcpy(out + KTRACE_SUBBUF_HDR_SIZE, frame + e->zoff, used);
	else if (ZSTD_decompress(e->xform ? cols : out + KTRACE_SUBBUF_HDR_SIZE, used,
				 frame + e->zoff, e->zlen) != used)
		return -1;
	if (e->xform == KTRACE_ZXFORM_SPLIT) {
		/* nhdr header words (time deltas), then the other words' low halves, then high */
		uint64_t *rec = (uint64_t *)(out + KTRACE_SUBBUF_HDR_SIZE), prev = 0;
		const uint64_t *hw = (const uint64_t *)cols;
		const uint32_t *lo = (const uint32_t *)(cols + 8 * (size_t)e->nhdr);
		size_t m = used / 8 - e->nhdr, j = 0, k = 0;

		for (uint32_t i = 0; i < e->nhdr; i++) {
			uint64_t h = hw[i], ts = (prev + (h & KTRACE_TS_MASK)) & KTRACE_TS_MASK;

			prev = ts;
			rec[k++] = (h & ~KTRACE_TS_MASK) | ts;
			for (unsigned w = 0; w < ctx + KTRACE_REC_WORDS(h); w++, j++) {
				if (j >= m)
					return -1;
				rec[k++] = lo[j] | (uint64_t)lo[m + j] << 32;
			}
		}
		if (j != m)
			return -1;
	}
	return 0;
}

/* The records of sub-buffer @sb (@used bytes of them) of stream @s, counted and passed to @fn. */
static void walk_subbuf(const struct ktrace_subbuf *sb, uint32_t used, unsigned s,
			struct walk_stats *ws, void (*fn)(const struct walk_rec *, void *), void *arg)
{
	size_t ctxw = (sb->flags & KTRACE_SBF_CTX) ? 8 : 0;
	const uint8_t *p = (const uint8_t *)sb + KTRACE_SUBBUF_HDR_SIZE, *end = p + used;

	while (p < end) {
		struct walk_rec r;
		uint64_t h = *(const uint64_t *)p;
		size_t rl = 8 + ctxw + 8 * (size_t)KTRACE_REC_WORDS(h);

		if (!KTRACE_REC_CLASS(h) || p + rl > end) {
			ws->bad++;
			break;
		}
		ws->bytes += rl;
		if (KTRACE_REC_CLASS(h) == KTRACE_CLASS_INTERNAL) {
			ws->internal++;
		} else {
			ws->records++;
			r.stream = s;
			r.seq = sb->seq;
			r.hdr = h;
			r.ctx = ctxw ? *(const uint64_t *)(p + 8) : 0;
			r.payload = (const uint64_t *)(p + 8 + ctxw);
			if (fn)
				fn(&r, arg);
		}
		p += rl;
	}
}

/*
 * Slots layout (`ktrace record`'s consumer): stream file @base (@len
 * bytes) of stream @s holds units at multiples of 4096 bytes, in sequence
 * order: slots of buf_size bytes, each final (CLOSED, `used` exact), and
 * compressed frames of such sub-buffers.
 */
static void walk_slots_file(const struct ktrace_control *ctl, const uint8_t *base, size_t len,
			    unsigned s, struct walk_stats *ws,
			    void (*fn)(const struct walk_rec *, void *), void *arg)
{
	uint32_t bs = ctl->buf_size;
	uint8_t *out = malloc(bs), *cols = malloc(bs);
	uint64_t prev = 0;
	int have = 0;

	for (size_t off = 0; off + KTRACE_SUBBUF_HDR_SIZE <= len;) {
		const struct ktrace_zframe *f = (const void *)(base + off);
		const struct ktrace_subbuf *sb = (const void *)(base + off);
		uint32_t nsub = 1;

		if (f->magic == KTRACE_ZFRAME_MAGIC) {
			if (!f->len || f->len % 4096 || off + f->len > len ||
			    f->hdr_size + (uint64_t)f->nsub * f->entry_size > f->len) {
				ws->bad++;
				break;
			}
			nsub = f->nsub;
		} else if (sb->magic != KTRACE_SUBBUF_MAGIC) {
			ws->bad++;
			off += bs;
			continue;
		}
		for (uint32_t k = 0; k < nsub; k++) {
			if (f->magic == KTRACE_ZFRAME_MAGIC) {
				const struct ktrace_zentry *e = (const void *)(base + off + f->hdr_size +
									       k * f->entry_size);

				if (walk_unframe(base + off, e, bs, out, cols) < 0) {
					ws->bad++;
					continue;
				}
				sb = (const struct ktrace_subbuf *)out;
			}
			if (!(sb->flags & KTRACE_SBF_CLOSED) || (have && sb->seq <= prev) ||
			    KTRACE_SUBBUF_HDR_SIZE + (size_t)sb->used > bs) {
				ws->bad++;
				continue;
			}
			prev = sb->seq;
			have = 1;
			walk_subbuf(sb, sb->used, s, ws, fn, arg);
		}
		off += f->magic == KTRACE_ZFRAME_MAGIC ? f->len : bs;
	}
	free(out);
	free(cols);
}

/*
 * Walk every record of trace @dir in stream order (sub-buffers by seq),
 * calling @fn for non-internal ones.  Returns the counters.  Fixed layout:
 * every traceN is buf_nr ring slots; slots layout: walk_slots_file().
 */
static struct walk_stats walk_trace(const char *dir, void (*fn)(const struct walk_rec *, void *),
				    void *arg)
{
	struct walk_stats ws = { 0 };
	size_t clen;
	const struct ktrace_control *ctl = walk_map(dir, "control", &clen);
	int slots = walk_slots(dir);

	if (!ctl || ctl->magic != KTRACE_CONTROL_MAGIC) {
		ws.bad++;
		return ws;
	}
	for (unsigned s = 0; s < ctl->nstreams; s++) {
		const struct ktrace_stream_ctl *sc =
			(const struct ktrace_stream_ctl *)((const char *)ctl + ctl->streams_off) + s;
		char name[32];
		size_t len;
		const uint8_t *base;
		const struct ktrace_subbuf **sbs;
		unsigned n = 0;

		ws.dropped += sc->dropped;
		ws.overwritten += sc->overwritten;
		ws.written += sc->written;
		snprintf(name, sizeof(name), "trace%u", s);
		base = walk_map(dir, name, &len);
		if (slots && !base)
			continue; /* a stream no thread wrote to */
		if (!base || (slots ? len % 4096 : len != (size_t)ctl->buf_size * ctl->buf_nr)) {
			ws.bad++;
			continue;
		}
		if (slots) {
			walk_slots_file(ctl, base, len, s, &ws, fn, arg);
			munmap((void *)base, len);
			continue;
		}
		sbs = calloc(ctl->buf_nr, sizeof(*sbs));
		for (unsigned i = 0; i < ctl->buf_nr; i++) {
			const struct ktrace_subbuf *sb =
				(const void *)(base + (size_t)i * ctl->buf_size);

			if (sb->magic == KTRACE_SUBBUF_MAGIC)
				sbs[n++] = sb;
		}
		qsort(sbs, n, sizeof(*sbs), walk_cmp_seq);
		for (unsigned i = 0; i < n; i++) {
			const struct ktrace_subbuf *sb = sbs[i];
			uint32_t used = sb->used;

			if (sb->seq % ctl->buf_nr != (uint64_t)(((const uint8_t *)sb - base) / ctl->buf_size))
				ws.bad++;
			/* Shared streams: a sub-buffer is closed when its commit count
			 * is complete for its lap; the open one ends at head. */
			if (sb->flags & KTRACE_SBF_CTX) {
				uint32_t full = (uint32_t)((sb->seq / ctl->buf_nr + 1) *
							   (uint64_t)(ctl->buf_size - KTRACE_SUBBUF_HDR_SIZE));

				if (sb->commit != full &&
				    (sc->head >> __builtin_ctz(ctl->buf_size)) == sb->seq)
					used = (uint32_t)((sc->head & (ctl->buf_size - 1)) -
							  KTRACE_SUBBUF_HDR_SIZE);
			}
			if (KTRACE_SUBBUF_HDR_SIZE + (size_t)used > ctl->buf_size) {
				ws.bad++;
				continue;
			}
			walk_subbuf(sb, used, s, &ws, fn, arg);
		}
		free(sbs);
		munmap((void *)base, len);
	}
	munmap((void *)ctl, clen);
	return ws;
}

static char walk_tmp[4096];
static pid_t walk_tmp_owner;

static void walk_rmtmp(void)
{
	char cmd[4200];

	if (getpid() != walk_tmp_owner || getenv("KTRACE_KEEP"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", walk_tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", walk_tmp);
}

/*
 * A fresh, empty scratch directory for a test (under $TMPDIR or /tmp),
 * removed at exit unless KTRACE_KEEP is set.  One per test program.
 */
static char *walk_tmpdir(const char *tag)
{
	const char *t = getenv("TMPDIR");

	snprintf(walk_tmp, sizeof(walk_tmp), "%s/ktrace-test-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	if (!mkdtemp(walk_tmp)) {
		perror("mkdtemp");
		exit(1);
	}
	walk_tmp_owner = getpid();
	atexit(walk_rmtmp);
	return walk_tmp;
}

#endif

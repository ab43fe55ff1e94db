/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_ktrace.c - cost per event of ktrace_log2() (include/ktrace/
 * ktrace.h), enabled and disabled, and its bytes per event on disk.
 *
 * Variants (each thread logs EVENTS records per repetition):
 *
 *   ktrace-discard             discard mode, per-thread streams sized so that
 *                              nothing drops: a fresh channel per repetition
 *                              (set up and mapped by ktrace_setup before the
 *                              timed loop; cleaned up after it)
 *   ktrace-flight              flight-recorder mode with the default ring
 *                              (16 x 64 KiB per thread), which wraps ~240
 *                              times per repetition; one channel for all
 *   ktrace-global              flight mode, one shared stream for every
 *                              thread (KTRACE_GLOBAL_CHANNEL: CAS reserve,
 *                              a context word per record), default ring
 *   ktrace-stopped             channel set up but not started, event enabled
 *   ktrace-disabled-event      channel running, the event disabled with
 *                              ktrace_event_enable()
 *   ktrace-disabled-nochannel  no channel at all (the enable map is zero)
 *
 * Bytes per event: after ktrace_cleanup() the program reads every
 * sub-buffer of every traceN file of the trace directory (ktrace/format.h),
 * walks its committed `used` bytes and divides them by the event records
 * found (internal records count as bytes, not as events); the note
 * column gives the same with the 64-byte sub-buffer headers counted, and
 * dropped/overwritten counts from ktrace_get_stats().  Any drop in discard
 * mode, or a record that landed in the shared stream of a per-thread
 * channel, is reported in the note (it would make the number unfair).
 *
 * Usage: bench_ktrace [-n EVENTS] [-r REPS] [-w WARMUP] [-t THREADS] [-d DIR] VARIANT...
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#define FUNC 1
#define EVENT KT_EVENT_USER

enum kind { DISCARD, FLIGHT, GLOBAL, STOPPED, DIS_EVENT, DIS_NOCHAN };

/* What the sub-buffer headers of a trace directory say. */
struct disk_usage {
	uint64_t used;     /* committed record bytes */
	uint64_t nrec;     /* records (events, internal records not counted) */
	uint64_t subbufs;  /* sub-buffers with a valid magic */
	uint64_t ctx_recs; /* records in KTRACE_SBF_CTX (shared stream) sub-buffers */
	uint64_t shared_recs;
};

struct kt_ctx {
	enum kind kind;
	const char *dir;
	const char *name;
	int nthreads;
	uint64_t events;
	struct ktrace_channel *ch;
	struct disk_usage du;
	struct ktrace_stats st;
	uint64_t expected; /* records logged while a channel was running */
};

/*
 * Count the records of one sub-buffer by walking its @bytes committed bytes
 * (shared streams do not keep nrec).  Internal records are bytes but not
 * events.
 */
static void walk_subbuf(const uint8_t *sb, uint32_t bytes, struct disk_usage *du)
{
	const struct ktrace_subbuf *h = (const struct ktrace_subbuf *)sb;
	const uint8_t *p = sb + h->hdr_size, *end = p + bytes;
	size_t ctx = (h->flags & KTRACE_SBF_CTX) ? 8 : 0;

	while (p + 8 <= end) {
		uint64_t w;

		memcpy(&w, p, 8);
		if (!KTRACE_REC_CLASS(w))
			break;
		p += 8 + ctx + 8 * (size_t)KTRACE_REC_WORDS(w);
		if (KTRACE_REC_CLASS(w) != KTRACE_CLASS_INTERNAL) {
			du->nrec++;
			du->ctx_recs += ctx != 0;
		}
	}
	du->used += bytes;
}

/* Read every sub-buffer of trace dir @path into @du (added). */
static int scan_trace(const char *path, struct disk_usage *du)
{
	struct ktrace_control c;
	int dfd = open(path, O_RDONLY | O_DIRECTORY);
	int cfd = dfd < 0 ? -1 : openat(dfd, "control", O_RDONLY);
	uint8_t *buf = NULL;

	if (cfd < 0 || pread(cfd, &c, sizeof(c), 0) != (ssize_t)sizeof(c) ||
	    c.magic != KTRACE_CONTROL_MAGIC || !(buf = malloc(c.buf_size))) {
		fprintf(stderr, "bench_ktrace: %s/control: cannot read the control header\n", path);
		if (cfd >= 0)
			close(cfd);
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	for (uint32_t s = 0; s < c.nstreams; s++) {
		struct ktrace_stream_ctl sc;
		unsigned shift = (unsigned)__builtin_ctz(c.buf_size);
		char name[32];
		int fd;

		if (pread(cfd, &sc, sizeof(sc), (off_t)c.streams_off + (off_t)s * sizeof(sc)) !=
		    (ssize_t)sizeof(sc))
			memset(&sc, 0, sizeof(sc));
		snprintf(name, sizeof(name), "trace%u", s);
		fd = openat(dfd, name, O_RDONLY);
		if (fd < 0)
			continue;
		for (uint32_t k = 0; k < c.buf_nr; k++) {
			struct ktrace_subbuf *sb = (struct ktrace_subbuf *)buf;
			uint64_t before = du->nrec;
			uint32_t bytes;

			if (pread(fd, buf, c.buf_size, (off_t)k * c.buf_size) != (ssize_t)c.buf_size ||
			    sb->magic != KTRACE_SUBBUF_MAGIC || sb->hdr_size < sizeof(*sb) ||
			    sb->hdr_size >= c.buf_size)
				continue;
			bytes = sb->used;
			/* The open sub-buffer of a shared stream: bounded by head. */
			if (sc.kind == KTRACE_STREAM_SHARED && !bytes && sc.head >> shift == sb->seq)
				bytes = (uint32_t)(sc.head & (c.buf_size - 1)) - sb->hdr_size;
			if (bytes > c.buf_size - sb->hdr_size)
				bytes = c.buf_size - sb->hdr_size;
			walk_subbuf(buf, bytes, du);
			du->subbufs++;
			if (sc.kind == KTRACE_STREAM_SHARED)
				du->shared_recs += du->nrec - before;
		}
		close(fd);
	}
	free(buf);
	close(cfd);
	close(dfd);
	return 0;
}

/* Remove a (flat) trace directory so repetitions do not fill the disk. */
static void rm_trace(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	if (rmdir(path))
		fprintf(stderr, "bench_ktrace: could not remove %s\n", path);
}

static struct ktrace_channel *make_channel(struct kt_ctx *c, uint32_t buf_size, uint32_t buf_nr,
					   uint32_t flags, int start)
{
	struct ktrace_options o = {
		.root = c->dir, .name = c->name, .buf_size = buf_size, .buf_nr = buf_nr,
		.flags = flags, .nthreads = (uint32_t)c->nthreads, .start = start,
	};
	struct ktrace_channel *ch = ktrace_setup_opts(&o);

	if (!ch) {
		fprintf(stderr, "bench_ktrace: ktrace_setup: %s\n", ktrace_error());
		exit(1);
	}
	ktrace_set_default(ch); /* the first channel only is the default by itself */
	return ch;
}

/* Stop and finalise the channel, then read what it left on disk. */
static void close_channel(struct kt_ctx *c)
{
	struct ktrace_stats st;
	char path[4096];

	if (!c->ch)
		return;
	ktrace_stop(c->ch);
	ktrace_get_stats(c->ch, &st);
	c->st.written += st.written;
	c->st.dropped += st.dropped;
	c->st.overwritten += st.overwritten;
	snprintf(path, sizeof(path), "%s", ktrace_dir(c->ch));
	ktrace_cleanup(c->ch);
	c->ch = NULL;
	scan_trace(path, &c->du);
	rm_trace(path);
}

/* Discard mode: buffers that hold one repetition with room to spare. */
static int kt_prepare(void *ctx, int rep)
{
	struct kt_ctx *c = ctx;
	const uint32_t bs = 16u << 20;
	uint64_t per_sb = (bs - KTRACE_SUBBUF_HDR_SIZE) / 24;

	if (c->kind != DISCARD)
		return 0;
	close_channel(c);
	c->ch = make_channel(c, bs, (uint32_t)((c->events + per_sb - 1) / per_sb + 2), 0, 1);
	c->expected += c->events * (uint64_t)c->nthreads;
	return 0;
}

static void kt_run(void *ctx, int tidx, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		ktrace_log2(FUNC, EVENT, i, n - i);
}

static void kt_setup_variant(struct kt_ctx *c, int reps_total)
{
	switch (c->kind) {
	case DISCARD:
		break; /* per repetition, in kt_prepare() */
	case FLIGHT:
		c->ch = make_channel(c, 0, 0, KTRACE_FLIGHT_CHANNEL, 1);
		c->expected = c->events * (uint64_t)c->nthreads * (uint64_t)reps_total;
		break;
	case GLOBAL:
		c->ch = make_channel(c, 0, 0, KTRACE_FLIGHT_CHANNEL | KTRACE_GLOBAL_CHANNEL, 1);
		c->expected = c->events * (uint64_t)c->nthreads * (uint64_t)reps_total;
		break;
	case STOPPED:
		c->ch = make_channel(c, 0, 0, KTRACE_FLIGHT_CHANNEL, 0);
		break;
	case DIS_EVENT:
		c->ch = make_channel(c, 0, 0, KTRACE_FLIGHT_CHANNEL, 1);
		if (ktrace_event_enable(FUNC, EVENT, 0) < 0) {
			fprintf(stderr, "bench_ktrace: ktrace_event_enable failed\n");
			exit(1);
		}
		break;
	case DIS_NOCHAN:
		ktrace_set_default(NULL);
		break;
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum kind kind;
	} variants[] = {
		{ "ktrace-discard", DISCARD },
		{ "ktrace-flight", FLIGHT },
		{ "ktrace-global", GLOBAL },
		{ "ktrace-stopped", STOPPED },
		{ "ktrace-disabled-event", DIS_EVENT },
		{ "ktrace-disabled-nochannel", DIS_NOCHAN },
	};
	const size_t nvar = sizeof(variants) / sizeof(variants[0]);
	struct bench_opts o;
	int first = bench_parse_args(argc, argv, &o,
				     "ktrace-discard|ktrace-flight|ktrace-global|ktrace-stopped|"
				     "ktrace-disabled-event|ktrace-disabled-nochannel...");

	if (first < 0)
		return 2;
	for (int a = first; a < argc; a++) {
		struct kt_ctx c = { .dir = o.dir, .nthreads = o.threads, .events = o.events };
		struct bench_spec s = {
			.nthreads = o.threads, .reps = o.reps, .warmup = o.warmup, .events = o.events,
			.ctx = &c, .prepare = kt_prepare, .run = kt_run,
		};
		struct bench_result r;
		char note[256] = "";
		double bpe = -1;
		size_t v;
		int err;

		for (v = 0; v < nvar; v++)
			if (!strcmp(argv[a], variants[v].name))
				break;
		if (v == nvar) {
			fprintf(stderr, "bench_ktrace: unknown variant '%s'\n", argv[a]);
			return 2;
		}
		c.kind = variants[v].kind;
		c.name = variants[v].name;
		s.name = variants[v].name;
		kt_setup_variant(&c, o.reps + o.warmup);
		err = bench_run(&s, &r);
		if (err) {
			fprintf(stderr, "bench_ktrace: %s: %s\n", s.name, strerror(-err));
			return 1;
		}
		close_channel(&c);
		if (c.du.nrec) {
			int n;

			bpe = (double)c.du.used / (double)c.du.nrec;
			n = snprintf(note, sizeof(note), "with-headers=%.2f,records=%llu,dropped=%llu",
				     (double)(c.du.used + KTRACE_SUBBUF_HDR_SIZE * c.du.subbufs) /
					     (double)c.du.nrec,
				     (unsigned long long)c.du.nrec, (unsigned long long)c.st.dropped);
			if (c.st.overwritten)
				n += snprintf(note + n, sizeof(note) - (size_t)n, ",overwritten=%llu",
					      (unsigned long long)c.st.overwritten);
			if (c.kind != GLOBAL && c.du.shared_recs)
				n += snprintf(note + n, sizeof(note) - (size_t)n,
					      ",IN-SHARED-STREAM=%llu",
					      (unsigned long long)c.du.shared_recs);
			if (c.st.written + c.st.dropped != c.expected)
				snprintf(note + n, sizeof(note) - (size_t)n,
					 ",ACCOUNTING-MISMATCH(written+dropped=%llu,logged=%llu)",
					 (unsigned long long)(c.st.written + c.st.dropped),
					 (unsigned long long)c.expected);
		}
		bench_print(&s, &r, bpe, note);
	}
	return 0;
}

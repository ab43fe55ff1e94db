/*
 * kclient/relay.c - `ktrace read` for a kernel channel: copy the relay
 * files of a ktrace.ko channel (debugfs ROOT/NAME/trace0..N) into a trace
 * directory (DST/cpu0..N + metadata), as seed 000's klog did.
 *
 * The contract with the module (kmod/ktrace_chan.c has the writer's half)
 * is relay's "mmap mode":
 *
 *  - Each relay file is mapped read-only.  Sub-buffer seq sits in ring slot
 *    seq % buf_nr and starts with its struct ktrace_subbuf; the module sets
 *    KTRACE_SBF_CLOSED in a header once nothing will write that sub-buffer
 *    again (at the switch to the next one, or when the channel is
 *    stopped), and from then on hdr_size + used bytes are final.
 *  - The reader copies the next expected seq once it is CLOSED, exactly
 *    hdr_size + used bytes (never the padding), checks that the slot still
 *    holds that seq, and appends it to DST/cpuN.  So the output is a
 *    sequence of whole sub-buffers in seq order ("layout packed" in
 *    docs/FORMAT.md), each padded to 8 bytes.
 *  - One reader at a time: the reader holds an exclusive flock() on SRC
 *    from before it reads SRC/info to the end; a second `ktrace read` of
 *    the channel is refused ("another ktrace read is copying this channel").
 *  - After each pass it writes "STREAM NEXT_SEQ" to SRC/consumed; the
 *    module hands that to relay (relay_subbufs_consumed()), which lets a
 *    discard-mode writer reuse those slots.  relay's read() is not used:
 *    it consumes whatever it returns, including a sub-buffer still being
 *    written, and in discard mode it can skip a sub-buffer when it runs
 *    while a writer finds the buffer full.  Each sub-buffer is still
 *    drained exactly once: a later `ktrace read` starts where this one
 *    stopped (the `next` position in SRC/info).
 *  - Where to start comes from SRC/info: the reader position (next),
 *    relay's consumed count, and the current seq (a flight recorder only
 *    still has the last buf_nr sub-buffers).
 *  - Drops: the module counts each refused record in the stream's dropped
 *    counter and in the `lost` field of the sub-buffer it follows.  A
 *    sub-buffer copied while records were still being refused after it
 *    has a smaller `lost`; at the end the reader adds the difference to
 *    the last sub-buffer it wrote, so the stream's lost total equals the
 *    module's dropped count.
 *  - The end: the state file shows "stop" only after the module has closed
 *    every current sub-buffer, so the last pass after it copies
 *    everything.  If the channel disappears (module unloaded), relay marks
 *    the open files finalized (poll() reports POLLERR) after the module
 *    closed the sub-buffers; the reader then makes its last pass.
 *
 * A flight-recorder channel is read once it is stopped (its writer
 * overwrites sub-buffers whether or not they were copied).
 *
 * Everything here is plain libc, so the VM test helper links this file
 * with only kclient/report.c and lib/safefile.c (kmod/tests/kthelper.c).
 * Errors go through kcl_error() (kclient/report.c) as command "read".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ktrace/format.h"
#include "kclient/internal.h"
#include "lib/safefile.h"

#define CMD "read"
#define RR_MAX_STREAMS 1024
#define RR_MIN_BUF_SIZE 4096u
#define RR_MAX_BUF_SIZE (64u * 1024u * 1024u)
#define RR_MAX_BUF_NR 65536u
#define RR_POLL_MS 100
#define RR_GONE_POLLS 50 /* state unreadable this many polls: give up */

struct rr_stream_info {
	unsigned idx;
	uint64_t written, dropped, overwritten;
	uint64_t produced, consumed, next, current;
};

/* What the channel's info file says (kmod/ktrace_fs.c writes it). */
struct rr_info {
	char name[128];
	int running, flight, global;
	uint32_t buf_size, buf_nr;
	uint64_t written, dropped, overwritten, created_ns, start_ns;
	unsigned nstreams;
	struct rr_stream_info s[RR_MAX_STREAMS];
};

struct rr_stream {
	unsigned idx;                 /* N of traceN and cpuN */
	int fd, out;
	const unsigned char *map;
	size_t map_len;
	uint64_t next;                /* seq of the next sub-buffer to copy */
	uint64_t told;                /* last value written to SRC/consumed */
	uint64_t base;                /* seq earlier `ktrace read`s had copied up to */
	uint64_t dropped0;            /* drops those reads accounted for (see rr_fix_lost()) */
	uint64_t out_off;             /* bytes written to DST/cpuN */
	int64_t last_hdr_off;         /* where the last header went, -1 none */
	uint64_t lost_sum, nsub, nrec;
	int failed, reported_corrupt;
};

static volatile sig_atomic_t rr_stop_signal;

static void rr_on_signal(int sig)
{
	(void)sig;
	rr_stop_signal = 1;
}

/* Read a small text file into @buf (NUL-terminated).  Return length or -errno. */
static ssize_t rr_slurp(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	int fd = ksf_read_open(NULL, path, 0); /* a regular file, not through a link: never a FIFO */

	if (fd < 0)
		return fd;
	while (len + 1 < cap) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return (ssize_t)len;
}

static int rr_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* state file: 1 running, 0 stopped, -1 gone (module unloaded, channel removed). */
static int rr_read_state(const char *src)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "%s/state", src);
	if (rr_slurp(path, buf, sizeof(buf)) < 0)
		return -1;
	return strncmp(buf, "start", 5) == 0;
}

/* Parse SRC/info.  Return 0, or -1 with a message. */
static int rr_read_info(const char *src, struct rr_info *in, int quiet)
{
	char path[PATH_MAX];
	char *text, *line, *save = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/info", src);
	text = malloc(256 * 1024);
	if (!text) {
		kcl_error(CMD, "%s: out of memory", path);
		return -1;
	}
	n = rr_slurp(path, text, 256 * 1024);
	if (n < 0) {
		if (!quiet)
			kcl_error(CMD, "%s: %s%s", path, strerror((int)-n),
				  -n == EACCES ? " (kernel channels are root-only)" : "");
		free(text);
		return -1;
	}
	memset(in, 0, sizeof(*in));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char word[32];
		unsigned long long v;

		if (sscanf(line, "name %127s", in->name) == 1)
			continue;
		if (sscanf(line, "state %31s", word) == 1) {
			in->running = !strcmp(word, "start");
		} else if (sscanf(line, "mode %31s", word) == 1) {
			in->flight = !strcmp(word, "flight");
		} else if (sscanf(line, "scope %31s", word) == 1) {
			in->global = !strcmp(word, "global");
		} else if (sscanf(line, "buf-size %llu", &v) == 1) {
			in->buf_size = (uint32_t)v;
		} else if (sscanf(line, "buf-nr %llu", &v) == 1) {
			in->buf_nr = (uint32_t)v;
		} else if (sscanf(line, "written %llu", &v) == 1) {
			in->written = v;
		} else if (sscanf(line, "dropped %llu", &v) == 1) {
			in->dropped = v;
		} else if (sscanf(line, "overwritten %llu", &v) == 1) {
			in->overwritten = v;
		} else if (sscanf(line, "created-ns %llu", &v) == 1) {
			in->created_ns = v;
		} else if (sscanf(line, "start-ns %llu", &v) == 1) {
			in->start_ns = v;
		} else if (!strncmp(line, "stream ", 7) && in->nstreams < RR_MAX_STREAMS) {
			struct rr_stream_info *s = &in->s[in->nstreams];
			unsigned long long w, d, o, p, c, nx, cur;
			unsigned idx;

			if (sscanf(line,
				   "stream %u written %llu dropped %llu overwritten %llu produced %llu consumed %llu next %llu current %llu",
				   &idx, &w, &d, &o, &p, &c, &nx, &cur) != 8) {
				kcl_error(CMD, "%s: cannot parse line '%s'", path, line);
				free(text);
				return -1;
			}
			s->idx = idx;
			s->written = w;
			s->dropped = d;
			s->overwritten = o;
			s->produced = p;
			s->consumed = c;
			s->next = nx;
			s->current = cur;
			in->nstreams++;
		}
	}
	free(text);
	if (in->buf_size < RR_MIN_BUF_SIZE || (in->buf_size & (in->buf_size - 1)) || in->buf_nr < 2 ||
	    in->nstreams == 0) {
		kcl_error(CMD, "%s: not a ktrace.ko channel (no geometry or streams)", path);
		return -1;
	}
	return 0;
}

static int rr_write_value(const char *src, const char *file, unsigned v)
{
	char path[PATH_MAX], buf[32];
	int fd, len, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", src, file);
	len = snprintf(buf, sizeof(buf), "%u\n", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret) {
		kcl_error(CMD, "%s: cannot set %u: %s%s", path, v, strerror(-ret),
			  ret == -EBUSY ? " (the channel is running: stop it first)" : "");
	}
	return ret;
}

/* -b/-n: klog's geometry options, through the buf_size and buf_nr files. */
static int rr_set_geometry(const char *src, struct rr_info *in, unsigned size, unsigned nr)
{
	uint32_t want_size = size ? size : in->buf_size;
	uint32_t want_nr = nr ? nr : in->buf_nr;

	if (want_size == in->buf_size && want_nr == in->buf_nr)
		return 0;
	/* Shrink first so the intermediate geometry stays within limits. */
	if ((uint64_t)want_size * in->buf_nr > (uint64_t)in->buf_size * want_nr) {
		if (want_nr != in->buf_nr && rr_write_value(src, "buf_nr", want_nr))
			return -1;
		if (want_size != in->buf_size && rr_write_value(src, "buf_size", want_size))
			return -1;
	} else {
		if (want_size != in->buf_size && rr_write_value(src, "buf_size", want_size))
			return -1;
		if (want_nr != in->buf_nr && rr_write_value(src, "buf_nr", want_nr))
			return -1;
	}
	return rr_read_info(src, in, 0);
}

static int rr_write_atomic(const char *dst, const char *name, const char *text, size_t len)
{
	int ret = ksf_replace(dst, name, text, len);

	if (ret)
		kcl_error(CMD, "%s/%s: cannot write: %s", dst, name, strerror(-ret));
	return ret;
}

/*
 * The catalogue (`func` and `event` lines of SRC/catalog), kept from the
 * last successful read: at the end the channel may be gone.
 */
static char *rr_catalog;

static void rr_load_catalog(const char *src)
{
	char path[PATH_MAX], *cat = malloc(256 * 1024);

	snprintf(path, sizeof(path), "%s/catalog", src);
	if (cat && rr_slurp(path, cat, 256 * 1024) >= 0) {
		free(rr_catalog);
		rr_catalog = cat;
	} else {
		free(cat);
	}
}

/*
 * DST/metadata per docs/FORMAT.md; the catalogue (`func`, `event` and, for
 * the LKST channel, `unavailable` lines) comes from SRC/catalog.
 */
static int rr_write_metadata(const char *src, const char *dst, const struct rr_info *in,
			     const struct rr_stream *st, unsigned n, uint64_t calib0)
{
	uint64_t mono = kcl_now_ns(CLOCK_MONOTONIC), real = kcl_now_ns(CLOCK_REALTIME);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f) {
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		return -ENOMEM;
	}
	fprintf(f, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	fprintf(f, "# copied from %s by ktrace read\n", src);
	fprintf(f, "clock mono\n");
	fprintf(f, "calib %llu %llu\n", (unsigned long long)calib0, (unsigned long long)calib0);
	fprintf(f, "calib %llu %llu\n", (unsigned long long)mono, (unsigned long long)mono);
	kcl_md_machine(f, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "channel %s\n", in->name[0] ? in->name : "kernel");
	fprintf(f, "mode %s\n", in->flight ? "flight" : "discard");
	fprintf(f, "scope %s\n", in->global ? "global" : "cpu");
	fprintf(f, "buf-size %u\n", in->buf_size);
	fprintf(f, "buf-nr %u\n", in->buf_nr);
	fprintf(f, "layout packed\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "stream %u %s cpu%u\n", st[i].idx, in->global ? "shared" : "cpu", st[i].idx);
	/* the sub-buffers before these were copied by an earlier read, not lost */
	for (unsigned i = 0; i < n; i++)
		if (st[i].base)
			fprintf(f, "seq-base %u %llu\n", st[i].idx, (unsigned long long)st[i].base);
	if (in->created_ns) {
		fprintf(f, "created-ns %llu\n", (unsigned long long)in->created_ns);
		fprintf(f, "realtime-ns %llu\n",
		       (unsigned long long)(real - (mono - in->created_ns)));
	}
	rr_load_catalog(src);
	if (rr_catalog) {
		char *cat = strdup(rr_catalog), *line, *save = NULL;

		for (line = cat ? strtok_r(cat, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save))
			if (!strncmp(line, "func ", 5) || !strncmp(line, "event ", 6) ||
			    !strncmp(line, "unavailable ", 12)) /* LKST events this kernel lacks */
				fprintf(f, "%s\n", line);
		free(cat);
	}
	if (fclose(f) != 0) {
		free(buf);
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		return -ENOMEM;
	}
	ret = rr_write_atomic(dst, "metadata", buf, len);
	free(buf);
	return ret;
}

/* Do the records of a sub-buffer copy parse to exactly its `used` bytes? */
static int rr_records_ok(const unsigned char *sb, uint32_t hdr_size, uint32_t used, int ctx)
{
	uint32_t off = hdr_size, end = hdr_size + used;

	while (off < end) {
		uint64_t h;

		if (end - off < 8)
			return 0;
		memcpy(&h, sb + off, 8);
		if (KTRACE_REC_CLASS(h) == KTRACE_CLASS_INVALID)
			return 0;
		off += 8 * (1 + (ctx ? 1 : 0) + KTRACE_REC_WORDS(h));
	}
	return off == end;
}

/* Tell the module which sub-buffers of @s are copied (SRC/consumed). */
static int rr_tell_consumed(const char *src, struct rr_stream *s)
{
	char path[PATH_MAX], buf[64];
	int fd, len, ret = 0;

	if (s->next == s->told)
		return 0;
	snprintf(path, sizeof(path), "%s/consumed", src);
	len = snprintf(buf, sizeof(buf), "%u %llu\n", s->idx, (unsigned long long)s->next);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret == 0)
		s->told = s->next;
	else if (ret != -ENOENT && ret != -ENODEV && ret != -EIO && ret != -ENXIO)
		/* (ENOENT etc.: the channel is going away, nothing to free;
		 * ENXIO: debugfs refuses to open files of a module being removed) */
		kcl_error(CMD, "%s: cannot report sub-buffers of trace%u up to seq %llu as copied: %s", path,
			  s->idx, (unsigned long long)s->next, strerror(-ret));
	return ret;
}

/*
 * Copy every sub-buffer of @s that is final.  Return how many were
 * copied, or -1 on an output error (already reported).
 */
static int rr_drain(const char *src, const char *dst, struct rr_stream *s,
		    const struct rr_info *in, unsigned char *copy)
{
	static const unsigned char zeros[8];
	int copied = 0;

	while (!s->failed) {
		const struct ktrace_subbuf *h =
			(const void *)(s->map + (size_t)(s->next % in->buf_nr) * in->buf_size);
		struct ktrace_subbuf hc;
		uint32_t hdr_size, used, total;
		size_t pad;
		int ret;

		if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) != KTRACE_SUBBUF_MAGIC ||
		    __atomic_load_n(&h->seq, __ATOMIC_RELAXED) != s->next ||
		    !(__atomic_load_n(&h->flags, __ATOMIC_ACQUIRE) & KTRACE_SBF_CLOSED))
			break; /* not written yet, or still open */
		hdr_size = __atomic_load_n(&h->hdr_size, __ATOMIC_RELAXED);
		used = __atomic_load_n(&h->used, __ATOMIC_RELAXED);
		total = hdr_size + used;
		if (hdr_size < KTRACE_SUBBUF_HDR_SIZE || (uint64_t)hdr_size + used > in->buf_size) {
			kcl_error(CMD, "%s/trace%u: sub-buffer seq %llu has a bad header (hdr_size %u, used %u)",
				  src, s->idx, (unsigned long long)s->next, hdr_size, used);
			s->failed = 1;
			break;
		}
		memcpy(copy, h, total);
		if (__atomic_load_n(&h->seq, __ATOMIC_ACQUIRE) != s->next) {
			kcl_error(CMD, "%s/trace%u: sub-buffer seq %llu was overwritten while being copied (skipped)",
				  src, s->idx, (unsigned long long)s->next);
			s->next++;
			continue;
		}
		memcpy(&hc, copy, sizeof(hc));
		if (!rr_records_ok(copy, hdr_size, used, hc.flags & KTRACE_SBF_CTX) &&
		    !s->reported_corrupt) {
			kcl_error(CMD, "%s/trace%u: records of sub-buffer seq %llu do not parse to its %u bytes (copied anyway)",
				  src, s->idx, (unsigned long long)s->next, used);
			s->reported_corrupt = 1;
		}

		pad = (8 - total % 8) % 8;
		ret = rr_write_all(s->out, copy, total);
		if (!ret && pad)
			ret = rr_write_all(s->out, zeros, pad);
		if (ret) {
			kcl_error(CMD, "%s/cpu%u: write at offset %llu: %s", dst, s->idx,
				  (unsigned long long)s->out_off, strerror(-ret));
			s->failed = 1;
			return -1;
		}
		s->last_hdr_off = (int64_t)s->out_off;
		s->out_off += total + pad;
		s->lost_sum += hc.lost;
		s->nsub++;
		s->nrec += hc.nrec;
		s->next++;
		copied++;
	}
	if (copied)
		rr_tell_consumed(src, s);
	return copied;
}

/* Where to start copying @s (see the header comment). */
static void rr_start_position(struct rr_stream *s, const struct rr_stream_info *si,
			      const struct rr_info *in)
{
	uint64_t oldest = si->current + 1 >= in->buf_nr ? si->current + 1 - in->buf_nr : 0;

	s->next = si->next;
	if (s->next < si->consumed)
		s->next = si->consumed; /* someone read() the relay file */
	if (s->next < oldest)
		s->next = oldest; /* overwritten by a flight recorder */
	s->told = si->next;
	s->base = si->next;
	/*
	 * A channel read before and stopped since: the drops so far are in
	 * the sub-buffers (and the fix-up) that read copied, not in this copy.
	 * (Read before but still running: not known; none subtracted.)
	 */
	s->dropped0 = si->next && !in->running ? si->dropped : 0;
}

/*
 * Sub-buffers a stopped channel still holds that no reader copied: per
 * stream that wrote records, those from where a reader would start
 * (rr_start_position()) to the current one.
 */
static uint64_t rr_unread(const struct rr_info *in)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < in->nstreams; i++) {
		struct rr_stream s;

		if (!in->s[i].written)
			continue;
		rr_start_position(&s, &in->s[i], in);
		if (s.next <= in->s[i].current)
			n += in->s[i].current - s.next + 1;
	}
	return n;
}

/* 1 if every relay file is finalized (its channel was closed). */
static int rr_all_finalized(struct pollfd *pfd, unsigned n)
{
	if (n == 0 || poll(pfd, n, 0) < 0)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (!(pfd[i].revents & POLLERR))
			return 0;
	return 1;
}

/* Patch the last header of each stream so its lost total matches dropped. */
static void rr_fix_lost(const char *dst, struct rr_stream *st, unsigned n, const struct rr_info *fin)
{
	for (unsigned i = 0; i < n; i++) {
		struct rr_stream *s = &st[i];
		struct ktrace_subbuf h;
		uint64_t dropped = 0;

		for (unsigned j = 0; j < fin->nstreams; j++)
			if (fin->s[j].idx == s->idx)
				dropped = fin->s[j].dropped;
		dropped = dropped > s->dropped0 ? dropped - s->dropped0 : 0;
		if (dropped <= s->lost_sum || s->last_hdr_off < 0 || s->failed)
			continue;
		if (pread(s->out, &h, sizeof(h), s->last_hdr_off) != (ssize_t)sizeof(h))
			continue;
		h.lost += (uint32_t)(dropped - s->lost_sum);
		if (pwrite(s->out, &h, sizeof(h), s->last_hdr_off) != (ssize_t)sizeof(h))
			kcl_error(CMD, "%s/cpu%u: cannot update lost count: %s", dst, s->idx, strerror(errno));
		else
			s->lost_sum = dropped;
	}
}

/* One `ktrace read` of a channel: what its steps share. */
struct rr_run {
	const char *src, *dst;
	struct rr_info *in, *fin; /* SRC/info at the start; read again later */
	struct rr_stream *st;
	struct pollfd *pfd;
	unsigned char *copy; /* one sub-buffer */
	unsigned n;          /* streams opened (or being opened: cleaned up too) */
	uint64_t calib0;
	int lockfd;          /* SRC, flock()ed: the channel's one reader (rr_claim()) */
};

/* -b and -n (0: keep).  Return: 0, or 2 (usage error, reported). */
static int rr_check_args(unsigned subbuf_size, unsigned n_subbufs)
{
	if (subbuf_size && (subbuf_size < RR_MIN_BUF_SIZE || subbuf_size > RR_MAX_BUF_SIZE ||
			    (subbuf_size & (subbuf_size - 1)))) {
		kcl_error(CMD, "-b %u: the sub-buffer size must be a power of two from %u to %u", subbuf_size,
			  RR_MIN_BUF_SIZE, RR_MAX_BUF_SIZE);
		return 2;
	}
	if (n_subbufs && (n_subbufs < 2 || n_subbufs > RR_MAX_BUF_NR)) {
		kcl_error(CMD, "-n %u: the number of sub-buffers must be from 2 to %u", n_subbufs, RR_MAX_BUF_NR);
		return 2;
	}
	return 0;
}

/*
 * Become the channel's one reader: an exclusive flock() on the channel's
 * directory SRC, held to the end (two `ktrace read`s at once each copied
 * part of the sub-buffers and both exited 0).  The directory, not a file
 * of the module: an open debugfs file would keep ktrace.ko from being
 * unloaded while it is read.  Return: 0, or -1 (reported).
 */
static int rr_claim(struct rr_run *r)
{
	r->lockfd = open(r->src, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (r->lockfd < 0) {
		kcl_error(CMD, "%s: %s", r->src, strerror(errno));
		return -1;
	}
	if (flock(r->lockfd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		kcl_error(CMD, "%s: another ktrace read is copying this channel (one reader at a time)", r->src);
	else
		kcl_error(CMD, "%s: flock: %s", r->src, strerror(errno));
	return -1;
}

/*
 * The channel's info and geometry (-b/-n applied), and DST created or
 * cleared as a trace directory.  Return: 0, -1 (reported).
 */
static int rr_prepare(struct rr_run *r, unsigned subbuf_size, unsigned n_subbufs)
{
	struct rr_info *in = r->in;
	char path[PATH_MAX], msg[512];
	struct stat sb;
	int dfd;

	if (rr_claim(r) || rr_read_info(r->src, in, 0))
		return -1;
	/*
	 * New buffers replace the old ones: never over records nobody read
	 * (a stopped channel keeps them until they are copied).
	 */
	if (!in->running && ((subbuf_size && subbuf_size != in->buf_size) ||
			     (n_subbufs && n_subbufs != in->buf_nr)) && rr_unread(in)) {
		kcl_error(CMD, "%s: the channel holds %llu sub-buffers of records not read yet, which -b/-n "
			       "would discard: copy them first (ktrace read %s DIR), then resize",
			  r->src, (unsigned long long)rr_unread(in), r->src);
		return -1;
	}
	if (rr_set_geometry(r->src, in, subbuf_size, n_subbufs))
		return -1;

	snprintf(path, sizeof(path), "%s/control", r->dst);
	if (stat(path, &sb) == 0) {
		kcl_error(CMD, "%s: DST holds a user-space trace; choose another directory", path);
		return -1;
	}
	dfd = ksf_dir_open(r->dst, KSF_CREATE | KSF_TRACE | KSF_CLEAR, msg, sizeof(msg));
	if (dfd < 0) {
		kcl_error(CMD, "%s", msg);
		return -1;
	}
	close(dfd);
	return 0;
}

/* Stream @s (index @idx): SRC/traceN mapped, DST/cpuN created.  Return: 0, -1 (reported). */
static int rr_open_stream(struct rr_run *r, struct rr_stream *s, unsigned idx)
{
	char path[PATH_MAX];

	s->idx = idx;
	s->out = s->fd = -1;
	s->last_hdr_off = -1;
	s->map = MAP_FAILED;
	snprintf(path, sizeof(path), "%s/trace%u", r->src, s->idx);
	s->fd = ksf_read_open(NULL, path, 0); /* never a link, FIFO or device (/dev/zero) */
	if (s->fd < 0) {
		kcl_error(CMD, "%s: %s", path, ksf_read_why(s->fd));
		return -1;
	}
	s->map_len = (size_t)r->in->buf_size * r->in->buf_nr;
	s->map = mmap(NULL, s->map_len, PROT_READ, MAP_SHARED, s->fd, 0);
	if (s->map == MAP_FAILED) {
		kcl_error(CMD, "%s: mmap of %zu bytes: %s", path, s->map_len, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "cpu%u", s->idx);
	s->out = ksf_create(r->dst, path, O_RDWR);
	if (s->out < 0) {
		kcl_error(CMD, "%s/%s: cannot create: %s", r->dst, path, strerror(-s->out));
		return -1;
	}
	return 0;
}

/* Every stream opened, with its poll entry.  Return: 0, -1 (reported). */
static int rr_open_streams(struct rr_run *r)
{
	r->st = calloc(r->in->nstreams, sizeof(*r->st));
	r->pfd = calloc(r->in->nstreams, sizeof(*r->pfd));
	r->copy = malloc(r->in->buf_size);
	if (!r->st || !r->pfd || !r->copy) {
		kcl_error(CMD, "out of memory");
		return -1;
	}
	for (r->n = 0; r->n < r->in->nstreams; r->n++) {
		if (rr_open_stream(r, &r->st[r->n], r->in->s[r->n].idx) < 0) {
			r->n++; /* closed with the others */
			return -1;
		}
		r->pfd[r->n].fd = r->st[r->n].fd;
		r->pfd[r->n].events = POLLIN;
	}
	return 0;
}

/*
 * Started before the channel (klog's order: reader first, then
 * tracing): a stopped channel holding nothing unread is waited for
 * until it starts, or until it has run (started and stopped again
 * between two looks: its start time changed), instead of ending with
 * an empty copy.
 */
static void rr_wait_start(struct rr_run *r)
{
	int gone_polls = 0;

	if (r->in->running || rr_unread(r->in))
		return;
	fprintf(stderr, "ktrace read: %s is stopped and holds no unread record: waiting for it to "
			"start (echo start > %s/state; Ctrl-C ends)\n", r->src, r->src);
	while (!rr_stop_signal) {
		int state = rr_read_state(r->src);

		if (state == 1 || (state == 0 && rr_read_info(r->src, r->fin, 1) == 0 &&
				   (r->fin->start_ns != r->in->start_ns || rr_unread(r->fin))))
			break;
		if (state < 0 && (rr_all_finalized(r->pfd, r->n) || ++gone_polls > RR_GONE_POLLS))
			break;
		poll(NULL, 0, RR_POLL_MS);
	}
}

/*
 * A flight recorder is read once it stopped (or went away), from the
 * positions it stopped at.  Return: 0, -1 interrupted before it stopped
 * (reported).
 */
static int rr_wait_flight(struct rr_run *r)
{
	int waited = 0, gone_polls = 0;

	while (r->in->flight && !rr_stop_signal) {
		int state = rr_read_state(r->src);

		if (state == 0 ||
		    (state < 0 && (rr_all_finalized(r->pfd, r->n) || ++gone_polls > RR_GONE_POLLS)))
			break;
		if (state == 1 && !waited++)
			fprintf(stderr, "ktrace read: %s is a flight recorder: waiting for it to stop "
					"(echo stop > %s/state)\n", r->src, r->src);
		poll(NULL, 0, RR_POLL_MS);
	}
	if (r->in->flight && rr_stop_signal && rr_read_state(r->src) == 1) {
		kcl_error(CMD, "%s: interrupted before the flight recorder stopped: nothing read", r->src);
		return -1;
	}
	/* A stopped flight recorder's positions are the ones that count. */
	if (r->in->flight && rr_read_info(r->src, r->fin, 1) == 0 && r->fin->nstreams == r->n)
		memcpy(r->in->s, r->fin->s, r->n * sizeof(r->in->s[0]));
	return 0;
}

/* Copy until the channel stops or goes away (or a signal).  Return: 0, 1 (reported). */
static int rr_copy(struct rr_run *r)
{
	int rc = 0, gone_polls = 0;

	for (;;) {
		int state = rr_read_state(r->src), progress = 0, closed = 0;

		/* Gone: relay finalizes the files after the module closed them. */
		if (state < 0)
			closed = rr_all_finalized(r->pfd, r->n);
		for (unsigned i = 0; i < r->n; i++) {
			int c = rr_drain(r->src, r->dst, &r->st[i], r->in, r->copy);

			if (c < 0)
				rc = 1;
			else
				progress += c;
		}
		if (progress)
			continue;
		if (rr_stop_signal || state == 0 || closed)
			break;
		if (state < 0 && ++gone_polls > RR_GONE_POLLS) {
			kcl_error(CMD, "%s/state: unreadable, and the channel's relay files are still open; giving up",
				  r->src);
			rc = 1;
			break;
		}
		if (poll(r->pfd, r->n, RR_POLL_MS) > 0)
			poll(NULL, 0, 10); /* relay is ready but the next one may still be open */
	}
	return rc;
}

/* The end: lost counts fixed up, DST/dropped, the metadata again.  Return: 0, 1 (reported). */
static int rr_finish(struct rr_run *r)
{
	char text[32];
	uint64_t lost = 0;
	int rc = 0;

	if (rr_read_state(r->src) == 0 && rr_read_info(r->src, r->fin, 1) == 0)
		rr_fix_lost(r->dst, r->st, r->n, r->fin);
	for (unsigned i = 0; i < r->n; i++)
		if (r->st[i].failed)
			rc = 1;
	for (unsigned i = 0; i < r->n; i++)
		lost += r->st[i].lost_sum;
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)lost);
	if (rr_write_atomic(r->dst, "dropped", text, strlen(text)))
		rc = 1;
	if (rr_write_metadata(r->src, r->dst, r->in, r->st, r->n, r->calib0))
		rc = 1;
	return rc;
}

/* Unmap and close every stream opened; a failed close of DST/cpuN fails @rc 0.  Return: rc. */
static int rr_close_streams(struct rr_run *r, int rc)
{
	for (unsigned i = 0; i < r->n; i++) {
		struct rr_stream *s = &r->st[i];

		if (s->map != MAP_FAILED && s->map)
			munmap((void *)s->map, s->map_len);
		if (s->fd >= 0)
			close(s->fd);
		if (s->out >= 0 && close(s->out) && rc == 0) {
			kcl_error(CMD, "%s/cpu%u: %s", r->dst, s->idx, strerror(errno));
			rc = 1;
		}
	}
	return rc;
}

/* Open, wait, copy and finish, with SIGINT and SIGTERM ending the copy.  Return: 0, 1. */
static int rr_read_streams(struct rr_run *r)
{
	struct sigaction sa, old_int, old_term;
	int rc = 1;

	if (rr_open_streams(r) < 0)
		return 1;
	r->calib0 = kcl_now_ns(CLOCK_MONOTONIC);
	if (rr_write_metadata(r->src, r->dst, r->in, r->st, r->n, r->calib0))
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rr_on_signal;
	sigemptyset(&sa.sa_mask);
	rr_stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rr_wait_start(r);
	if (rr_wait_flight(r) == 0) {
		for (unsigned i = 0; i < r->n; i++)
			rr_start_position(&r->st[i], &r->in->s[i], r->in);
		rc = rr_copy(r);
		if (rr_finish(r))
			rc = 1;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

int read_relay(const char *src, const char *dst, unsigned subbuf_size, unsigned n_subbufs)
{
	struct rr_run r = { .src = src, .dst = dst, .lockfd = -1 };
	int rc = rr_check_args(subbuf_size, n_subbufs);

	if (rc)
		return rc;
	r.in = malloc(sizeof(*r.in));
	r.fin = malloc(sizeof(*r.fin));
	if (!r.in || !r.fin) {
		kcl_error(CMD, "out of memory");
		free(r.in);
		free(r.fin);
		return 1;
	}
	rc = 1;
	if (rr_prepare(&r, subbuf_size, n_subbufs) == 0)
		rc = rr_close_streams(&r, rr_read_streams(&r));
	if (r.lockfd >= 0)
		close(r.lockfd);
	free(rr_catalog);
	rr_catalog = NULL;
	free(r.copy);
	free(r.pfd);
	free(r.st);
	free(r.in);
	free(r.fin);
	return rc;
}

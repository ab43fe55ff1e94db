/*
 * consumer/consumer.c - draining a session's rings into trace directories
 * (API and overview in consumer/consumer.h; the rings and the session file
 * in lib/session.h; the writers' side of the protocol in lib/runtime.h).
 *
 * For every channel the session lists, the consumer maps DIR/control (the
 * stream table: each stream's head, its ring's offset in the session, and
 * `consumed`, which only the consumer writes) and each stream's ring.  A
 * sub-buffer is copied when it is complete:
 *
 *   thread stream:  its sequence number is below the head's (the writer
 *                   opened a newer one), or it is flagged CLOSED (the
 *                   writer detached: thread exit);
 *   shared stream:  below the head's and its commit count is full for its
 *                   lap (every writer that reserved space in it committed),
 *                   and its header is initialised.
 *
 * then `consumed` advances (release), which lets the writers reuse the slot.
 * In the final drain (writers gone) the open and partly committed ones are
 * copied too, their extent taken from `used` (thread streams) or the head
 * (shared streams), so that a record committed before a crash is never lost.
 * Flight-recorder channels are copied only in the final drain: the newest
 * buf_nr sub-buffers of each stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "consumer/internal.h"
#include "lib/runtime.h"
#include "lib/safefile.h"
#include "reader/zframe.h"

#define KC_BATCH 16 /* sub-buffers per write (and per frame) */

void kc_error(struct kc_session *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ktrace %s: ", s->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	s->stats.errors++;
}

static void snerr(char *err, size_t len, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void snerr(char *err, size_t len, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, len, "ktrace %s: ", cmd);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Map the header and tables of session file @fd; check them if @check. */
static int kc_map(struct kc_session *s)
{
	void *p = mmap(NULL, KT_SESSION_DATA_OFF, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	s->hdr = p;
	s->chan = (struct kt_session_chan *)((char *)p + KT_SESSION_CHAN_OFF);
	s->stack = (struct kt_session_stack *)((char *)p + KT_SESSION_STACK_OFF);
	s->chans = calloc(KT_SESSION_NCHAN, sizeof(*s->chans));
	if (!s->chans)
		return -ENOMEM;
	kt_calib_pair(&s->calib_raw, &s->calib_ns);
	s->no_direct = getenv("KTRACE_NO_DIRECT") != NULL;
	s->zon = 1; /* frames, as `ktrace record` writes by default (read --recover too) */
	s->zlevel = KZ_LEVEL_DEFAULT;
	return 0;
}

static void kc_free(struct kc_session *s)
{
	if (!s)
		return;
	if (s->hdr)
		munmap(s->hdr, KT_SESSION_DATA_OFF);
	if (s->fd >= 0)
		close(s->fd);
	free(s->chans);
	free(s);
}

int kc_write_text(struct kc_session *s, struct kc_chan *c, const char *name, const char *text)
{
	int rc = ksf_replace_at(c->dirfd, name, text, strlen(text));

	if ((rc == -ENOSPC || rc == -EDQUOT) && kc_make_room(s, c, strlen(text) + 4096))
		rc = ksf_replace_at(c->dirfd, name, text, strlen(text)); /* the disk was full */
	if (rc < 0)
		kc_error(s, "%s/%s: cannot write: %s", c->dir, name, strerror(-rc));
	return rc;
}

struct kc_session *kc_create(const char *dir, int flight, const char *cmd, char *err, size_t len)
{
	struct kc_session *s = calloc(1, sizeof(*s));
	const char *base = "/dev/shm";
	struct stat st;
	char text[PATH_MAX + 32];
	int dirfd, rc;

	if (!s) {
		snerr(err, len, cmd, "out of memory");
		return NULL;
	}
	s->fd = -1;
	s->cmd = cmd;
	if (strlen(dir) >= sizeof(s->hdr->dir)) {
		snerr(err, len, cmd, "%s: path too long", dir);
		goto fail;
	}
	if (stat(base, &st) < 0 || !S_ISDIR(st.st_mode)) {
		base = getenv("TMPDIR");
		if (!base || !*base)
			base = "/tmp";
	}
	snprintf(s->path, sizeof(s->path), "%s/ktrace-%u-XXXXXX", base, (unsigned)geteuid());
	s->fd = mkostemp(s->path, O_CLOEXEC);
	if (s->fd < 0) {
		snerr(err, len, cmd, "%s: cannot create the session file: %s", s->path, strerror(errno));
		goto fail;
	}
	if (ftruncate(s->fd, (off_t)KT_SESSION_DATA_OFF) < 0 || (rc = kc_map(s)) < 0) {
		snerr(err, len, cmd, "%s: cannot set the session up: %s", s->path, strerror(errno));
		unlink(s->path);
		goto fail;
	}
	s->hdr->version = KT_SESSION_VERSION;
	s->hdr->hdr_size = sizeof(*s->hdr);
	s->hdr->consumer = (uint32_t)getpid();
	s->hdr->flags = flight ? KT_SESSION_FLIGHT : 0;
	if (kc_hold(s) == 0)
		s->hdr->flags |= KT_SESSION_LOCKED;
	s->hdr->size = KT_SESSION_DATA_OFF;
	s->hdr->start_ns = s->calib_ns;
	s->hdr->start_raw = s->calib_raw;
	memcpy(s->hdr->dir, dir, strlen(dir) + 1);
	__atomic_store_n(&s->hdr->magic, KT_SESSION_MAGIC, __ATOMIC_RELEASE);

	/* DIR/session: where `ktrace read --recover DIR` finds it. */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	snprintf(text, sizeof(text), "%s\nconsumer %u\n", s->path, (unsigned)getpid());
	rc = dirfd < 0 ? -errno : ksf_replace_at(dirfd, "session", text, strlen(text));
	if (dirfd >= 0)
		close(dirfd);
	if (rc < 0) {
		snerr(err, len, cmd, "%s/session: cannot write: %s", dir, strerror(-rc));
		unlink(s->path);
		goto fail;
	}
	return s;
fail:
	kc_free(s);
	return NULL;
}

int kc_hold(struct kc_session *s)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	return fcntl(s->fd, F_OFD_SETLK, &fl) < 0 ? -errno : 0;
}

struct kc_session *kc_open(const char *dir, const char *cmd, char *err, size_t len)
{
	struct kc_session *s = calloc(1, sizeof(*s));
	struct stat st;
	int dirfd = -1, fd;
	ssize_t n;
	char *nl;

	if (!s) {
		snerr(err, len, cmd, "out of memory");
		return NULL;
	}
	s->fd = -1;
	s->cmd = cmd;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* never through a link, never a FIFO or device (lib/safefile.h) */
	fd = dirfd < 0 ? -errno : ksf_read_open(dir, "session", 0);
	if (fd < 0) {
		if (fd == -ENOENT)
			snerr(err, len, cmd, "%s/session: %s (nothing to recover: the recording ended normally, "
				       "or this is not a trace directory of `ktrace record`)",
			      dir, strerror(ENOENT));
		else
			snerr(err, len, cmd, "%s/session: %s", dir, ksf_read_why(fd));
		goto fail;
	}
	n = read(fd, s->path, sizeof(s->path) - 1);
	close(fd);
	if (n <= 0 || !(nl = memchr(s->path, '\n', (size_t)n))) {
		snerr(err, len, cmd, "%s/session: not a session path", dir);
		goto fail;
	}
	*nl = 0;
	/* the path DIR/session names: a regular file (looked at before it is
	 * opened: a device is never opened), not a link, never blocking */
	if (lstat(s->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snerr(err, len, cmd, "%s: not a session file of this user", s->path);
		goto fail;
	}
	s->fd = open(s->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (s->fd < 0) {
		snerr(err, len, cmd, "%s: %s (the session named in %s/session is gone)", s->path,
		      strerror(errno), dir);
		goto fail;
	}
	if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < KT_SESSION_DATA_OFF) {
		snerr(err, len, cmd, "%s: not a session file of this user", s->path);
		goto fail;
	}
	if (kc_map(s) < 0) {
		snerr(err, len, cmd, "%s: cannot map: %s", s->path, strerror(errno));
		goto fail;
	}
	if (__atomic_load_n(&s->hdr->magic, __ATOMIC_ACQUIRE) != KT_SESSION_MAGIC ||
	    s->hdr->version != KT_SESSION_VERSION) {
		snerr(err, len, cmd, "%s: not a ktrace session (magic 0x%08x, version %u)", s->path,
		      s->hdr->magic, (unsigned)s->hdr->version);
		goto fail;
	}
	close(dirfd);
	return s;
fail:
	if (dirfd >= 0)
		close(dirfd);
	kc_free(s);
	return NULL;
}

const char *kc_path(const struct kc_session *s)
{
	return s->path;
}

void kc_set_throttle(struct kc_session *s, unsigned us)
{
	s->throttle_us = us;
}

void kc_set_compress(struct kc_session *s, int on, int level)
{
	s->zon = on != 0;
	s->zlevel = level;
}

void kc_set_block(struct kc_session *s, uint64_t ns)
{
	__atomic_store_n(&s->hdr->block_ns, ns, __ATOMIC_RELAXED);
}

const struct kc_stats *kc_stats(struct kc_session *s)
{
	s->stats.losses = s->losses;
	s->stats.waited_ns = __atomic_load_n(&s->hdr->waited_ns, __ATOMIC_RELAXED);
	s->stats.waits = __atomic_load_n(&s->hdr->waits, __ATOMIC_RELAXED);
	s->stats.timeouts = __atomic_load_n(&s->hdr->timeouts, __ATOMIC_RELAXED);
	return &s->stats;
}

/* ---- channels ---------------------------------------------------------- */

int kc_chan_open(struct kc_session *s, unsigned idx)
{
	struct kc_chan *c = &s->chans[idx];
	struct kt_session_chan *e = &s->chan[idx];
	struct ktrace_control *ctl;
	struct stat st;
	void *p;
	int fd;

	if (c->state)
		return c->state > 0 ? 0 : -1;
	c->state = -1;
	c->dir = e->dir;
	c->dirfd = open(e->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0 || fstat(c->dirfd, &st) < 0 || st.st_uid != geteuid()) {
		kc_error(s, "%s: %s", e->dir, c->dirfd < 0 ? strerror(errno) : "not owned by this user");
		return -1;
	}
	fd = openat(c->dirfd, "control", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < 4096) {
		kc_error(s, "%s/control: %s", e->dir, fd < 0 ? strerror(errno) : "too short");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		kc_error(s, "%s/control: cannot map: %s", e->dir, strerror(errno));
		return -1;
	}
	ctl = p;
	c->ctl = ctl;
	c->ctl_len = (size_t)st.st_size;
	c->bs = ctl->buf_size;
	c->nr = ctl->buf_nr;
	c->nstreams = ctl->nstreams;
	c->flags = ctl->flags;
	if (ctl->magic != KTRACE_CONTROL_MAGIC || c->bs < 4096 || c->bs > (1u << 30) ||
	    (c->bs & (c->bs - 1)) || c->nr < 2 || !c->nstreams || c->nstreams > 65536 ||
	    ctl->streams_off < 64 ||
	    (uint64_t)ctl->streams_off + (uint64_t)c->nstreams * 64 > c->ctl_len) {
		kc_error(s, "%s/control: not a valid control file", e->dir);
		return -1;
	}
	c->shift = (uint32_t)__builtin_ctz(c->bs);
	c->sctl = (struct ktrace_stream_ctl *)((uint8_t *)p + ctl->streams_off);
	c->st = calloc(c->nstreams, sizeof(*c->st));
	if (!c->st) {
		kc_error(s, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < c->nstreams; i++)
		c->st[i].fd = -1;
	c->state = 1;
	s->stats.channels++;
	return 0;
}

static void chan_close(struct kc_session *s, unsigned idx)
{
	struct kc_chan *c = &s->chans[idx];

	for (uint32_t i = 0; c->st && i < c->nstreams; i++) {
		if (c->st[i].fd >= 0)
			close(c->st[i].fd);
		if (c->st[i].ring)
			munmap((void *)c->st[i].ring, (size_t)c->bs * c->nr);
		free(c->st[i].units);
	}
	free(c->st);
	c->st = NULL;
	kz_enc_free(c->zenc);
	c->zenc = NULL;
	if (c->ctl)
		munmap(c->ctl, c->ctl_len);
	c->ctl = NULL;
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
	c->state = 2;
}

static uint64_t subbuf_records(const struct kc_chan *c, unsigned i, const struct ktrace_subbuf *h);

/* Note a unit (slot or frame) written at file offset @off (for kc_make_room()). */
static void push_unit(struct kc_stream *k, uint64_t off)
{
	if (k->nunits == k->capunits) {
		size_t n = k->capunits ? 2 * k->capunits : 64;
		uint64_t *u = realloc(k->units, n * sizeof(*u));

		if (!u)
			return; /* kc_make_room() then frees less */
		k->units = u;
		k->capunits = n;
	}
	k->units[k->nunits++] = off;
}

/* A unit of a stream file, as read_unit() found it. */
struct kc_unit {
	uint64_t len, nsub, records, first_seq, last_seq;
};

/* Bytes read_unit() needs: a slot, or a frame's header and entries. */
static size_t unit_buf_size(const struct kc_chan *c)
{
	size_t z = KTRACE_ZFRAME_HDR_SIZE + KTRACE_ZFRAME_MAX * KTRACE_ZENTRY_SIZE;

	z = (z + 4095) & ~(size_t)4095;
	return c->bs > z ? c->bs : z;
}

/*
 * The unit at offset @off of stream @i's file @fd of @size bytes: a slot
 * (buf-size bytes) or a frame, read into @buf (unit_buf_size() bytes,
 * 4096-aligned: @fd may be O_DIRECT).  Return: its length in bytes with
 * *@u filled, or 0 if no whole valid unit starts there.
 */
static uint64_t read_unit(const struct kc_chan *c, unsigned i, int fd, uint8_t *buf, uint64_t off,
			  uint64_t size, struct kc_unit *u)
{
	const struct ktrace_subbuf *h = (const struct ktrace_subbuf *)buf;
	const struct ktrace_zframe *f = (const struct ktrace_zframe *)buf;
	size_t want = unit_buf_size(c);
	ssize_t got;
	char why[160];

	if (off >= size)
		return 0;
	if (want > size - off)
		want = (size_t)((size - off + 4095) & ~(uint64_t)4095);
	got = pread(fd, buf, want, (off_t)off);
	if (got < (ssize_t)sizeof(*f))
		return 0;
	memset(u, 0, sizeof(*u));
	if (h->magic == KTRACE_SUBBUF_MAGIC) {
		if ((uint64_t)got < c->bs || h->hdr_size < 64 || h->used > c->bs - 64)
			return 0;
		u->nsub = 1;
		u->records = subbuf_records(c, i, h);
		u->first_seq = u->last_seq = h->seq;
		return u->len = c->bs;
	}
	if (kz_check_frame(f, size - off, why, sizeof(why)) ||
	    (uint64_t)got < f->hdr_size + (uint64_t)f->nsub * f->entry_size)
		return 0;
	for (uint32_t k = 0; k < f->nsub; k++) {
		const struct ktrace_zentry *e = (const struct ktrace_zentry *)(buf + f->hdr_size +
									     (size_t)k * f->entry_size);

		if (e->hdr.magic != KTRACE_SUBBUF_MAGIC)
			return 0;
		if (!k)
			u->first_seq = e->hdr.seq;
		if (e->hdr.seq > u->last_seq)
			u->last_seq = e->hdr.seq;
		u->records += e->records;
	}
	u->nsub = f->nsub;
	return u->len = f->len;
}

/*
 * The end of the valid part of stream @i's file @fd (recovery): after the
 * last unit whose sub-buffers' sequence numbers are all below @consumed;
 * the units and records before it are counted into the stream's totals.
 */
static uint64_t valid_end(struct kc_chan *c, unsigned i, int fd, uint64_t consumed,
			  uint64_t *next_seq)
{
	struct kc_stream *k = &c->st[i];
	uint64_t off = 0, len;
	struct kc_unit u;
	struct stat st;
	uint8_t *buf;

	*next_seq = 0;
	if (fstat(fd, &st) < 0 || posix_memalign((void **)&buf, 4096, unit_buf_size(c)))
		return 0;
	while ((len = read_unit(c, i, fd, buf, off, (uint64_t)st.st_size, &u)) &&
	       u.last_seq < consumed) {
		*next_seq = u.last_seq + 1;
		k->subbufs += u.nsub;
		k->records += u.records;
		push_unit(k, off);
		off += len;
	}
	free(buf);
	return off;
}

/*
 * DIR/traceN, opened on the stream's first sub-buffer: O_DIRECT where the
 * filesystem takes it (whole page-aligned slots go from the ring to the
 * disk without a page-cache copy, which costs several times more CPU).
 */
static int stream_file(struct kc_session *s, struct kc_chan *c, unsigned i)
{
	struct kc_stream *k = &c->st[i];
	char name[32];

	if (k->fd >= 0)
		return 0;
	snprintf(name, sizeof(name), "trace%u", i);
	k->fd = ksf_create_at(c->dirfd, name, O_RDWR); /* read back by kc_make_room() */
	if (k->fd == -EEXIST) {
		/* Recovery: continue what the dead consumer wrote. */
		k->fd = ksf_open_at(c->dirfd, name, O_RDWR);
		if (k->fd >= 0) {
			uint64_t consumed = __atomic_load_n(&c->sctl[i].consumed, __ATOMIC_ACQUIRE);

			k->fsize = valid_end(c, i, k->fd, consumed, &k->next_seq);
			if (ftruncate(k->fd, (off_t)k->fsize) < 0) {
				int e = errno;

				close(k->fd);
				k->fd = -e;
			}
		}
	}
	if (k->fd < 0) {
		if (!k->werr) { /* reported once, like a write that fails */
			k->werr = -k->fd;
			if (!s->werr_said++) {
				kc_error(s, "%s/%s: cannot create: %s", c->dir, name, strerror(-k->fd));
				s->stats.werr = k->werr;
				s->stats.werr_dir = c->dir;
				s->stats.werr_stream = i;
			}
		}
		k->fd = -1;
		return -1;
	}
	k->direct = !s->no_direct && fcntl(k->fd, F_SETFL, O_DIRECT) == 0;
	return 0;
}

/*
 * Write @len bytes (@iov, @n of them) at the end of stream @i's file.  The
 * first failure of a stream (a full disk: a short write) is reported once
 * (k->werr); the caller counts what was not written.
 * Return: bytes written, 0..@len.
 */
static size_t put(struct kc_session *s, struct kc_chan *c, unsigned i, const struct iovec *iov,
		  int n, size_t len)
{
	struct kc_stream *k = &c->st[i];
	ssize_t w;

	if (stream_file(s, c, i) < 0)
		return 0;
	w = pwritev(k->fd, iov, n, (off_t)k->fsize);
	if (w < 0 && errno == EINVAL && k->direct) {
		/* the filesystem refused this direct write after all: buffered from now on */
		k->direct = 0;
		fcntl(k->fd, F_SETFL, 0);
		w = pwritev(k->fd, iov, n, (off_t)k->fsize);
	}
	if (w == (ssize_t)len)
		return len;
	if (!k->werr) {
		int e = w >= 0 ? ENOSPC : errno; /* a short write: the disk is full */

		k->werr = e;
		if (!s->werr_said++) { /* once: the summary names it again with the count */
			kc_error(s, "%s/trace%u: cannot write: %s (what is not written is counted "
				    "as dropped)", c->dir, i, strerror(e));
			s->stats.werr = e;
			s->stats.werr_dir = c->dir;
			s->stats.werr_stream = i;
		}
	}
	return w > 0 ? (size_t)w : 0;
}

/* Bookkeeping of a unit of @len bytes holding @nsub sub-buffers written at the file's end. */
static void wrote_unit(struct kc_session *s, struct kc_chan *c, unsigned i, uint64_t len,
		       unsigned nsub)
{
	struct kc_stream *k = &c->st[i];

	push_unit(k, k->fsize);
	k->fsize += len;
	s->stats.bytes += len;
	s->stats.raw_bytes += (uint64_t)nsub * c->bs;
}

/*
 * Write @n whole slots (@iov) at the end of stream @i's file.  A short
 * write (a full disk) keeps the whole slots it wrote.
 * Return: slots written, 0..@n.
 */
static int write_slots(struct kc_session *s, struct kc_chan *c, unsigned i, struct iovec *iov,
		       int n)
{
	size_t w = put(s, c, i, iov, n, (size_t)n * c->bs);
	int done = (int)(w / c->bs);

	for (int b = 0; b < done; b++)
		wrote_unit(s, c, i, c->bs, 1);
	if (done < n && c->st[i].fd >= 0 && ftruncate(c->st[i].fd, (off_t)c->st[i].fsize) < 0) {
		/* the reader reports the torn tail */
	}
	return done;
}

/*
 * Write sub-buffers @iov[0..@n) (closed, at most KC_BATCH) at the end of
 * stream @i's file: one compressed frame (kc_set_compress()), or slots.
 * A frame is written whole or not at all.  Return: sub-buffers written.
 */
static int write_units(struct kc_session *s, struct kc_chan *c, unsigned i, struct iovec *iov,
		       int n)
{
	const struct ktrace_subbuf *sb[KC_BATCH];
	uint32_t records[KC_BATCH];
	const uint8_t *out;
	struct iovec v;
	size_t len;

	if (!s->zon || n > KC_BATCH)
		return write_slots(s, c, i, iov, n);
	if (!c->zenc && !(c->zenc = kz_enc_new(s->zlevel, c->bs, KC_BATCH))) {
		kc_error(s, "%s: cannot set up zstd level %d (out of memory): writing uncompressed",
			 c->dir, s->zlevel);
		s->zon = 0;
		return write_slots(s, c, i, iov, n);
	}
	for (int b = 0; b < n; b++) {
		sb[b] = iov[b].iov_base;
		records[b] = (uint32_t)subbuf_records(c, i, sb[b]);
	}
	len = kz_frame(c->zenc, sb, records, (unsigned)n, &out);
	if (!len) /* a header the encoder refuses (never one the consumer closed) */
		return write_slots(s, c, i, iov, n);
	v.iov_base = (void *)out;
	v.iov_len = len;
	if (put(s, c, i, &v, 1, len) != len) {
		if (c->st[i].fd >= 0 && ftruncate(c->st[i].fd, (off_t)c->st[i].fsize) < 0) {
			/* the reader reports the torn frame */
		}
		return 0;
	}
	wrote_unit(s, c, i, len, (unsigned)n);
	return n;
}

uint64_t kc_count_records(const uint8_t *p, uint64_t len, int ctx)
{
	uint64_t n = 0, off = 0;

	while (off + 8 <= len) {
		uint64_t h;

		memcpy(&h, p + off, 8);
		if (!KTRACE_REC_CLASS(h))
			break;
		off += 8 + (ctx ? 8 : 0) + 8 * (uint64_t)KTRACE_REC_WORDS(h);
		n += KTRACE_REC_CLASS(h) != KTRACE_CLASS_INTERNAL;
	}
	return n;
}

/* Records of sub-buffer (header) @h of stream @i, internal ones not counted. */
static uint64_t subbuf_records(const struct kc_chan *c, unsigned i, const struct ktrace_subbuf *h)
{
	if (c->sctl[i].kind == KTRACE_STREAM_SHARED || !h->nrec)
		return kc_count_records((const uint8_t *)h + KTRACE_SUBBUF_HDR_SIZE,
				     h->used <= c->bs - KTRACE_SUBBUF_HDR_SIZE ? h->used
									: c->bs - KTRACE_SUBBUF_HDR_SIZE,
				     (h->flags & KTRACE_SBF_CTX) != 0);
	return h->nrec;
}

/* Sub-buffer (header) @h of stream @i could not be written: its records counted. */
static void not_written(struct kc_chan *c, unsigned i, const struct ktrace_subbuf *h)
{
	c->st[i].unwritten += subbuf_records(c, i, h);
	c->st[i].unwritten_subbufs++;
}

int kc_append(struct kc_session *s, struct kc_chan *c, unsigned i, const void *buf, size_t len)
{
	struct iovec iov;
	void *slot;
	int rc;

	if (len > c->bs || posix_memalign(&slot, 4096, c->bs))
		return -1;
	memcpy(slot, buf, len);
	memset((char *)slot + len, 0, c->bs - len);
	iov.iov_base = slot;
	iov.iov_len = c->bs;
	rc = write_units(s, c, i, &iov, 1) == 1 ? 0 : -1;
	if (rc < 0) {
		/* a second try after making room (the disk is full) */
		if (kc_make_room(s, c, c->bs) && write_units(s, c, i, &iov, 1) == 1)
			rc = 0;
	}
	if (rc == 0) {
		c->st[i].subbufs++;
		c->st[i].records += subbuf_records(c, i, slot);
	} else {
		not_written(c, i, slot);
	}
	free(slot);
	return rc;
}

/*
 * Remove the newest unit (slot or frame) of the stream of @c with the most
 * bytes written (not the shared stream's appended unfinished calls first:
 * any stream): its records are counted as not written.
 * Return: bytes freed (0: none).
 */
static uint64_t drop_newest_unit(struct kc_session *s, struct kc_chan *c)
{
	unsigned best = ~0u;
	uint64_t most = 0, at, freed;
	struct kc_stream *k;
	struct kc_unit u;
	uint8_t *buf;

	for (uint32_t i = 0; c->st && i < c->nstreams; i++)
		if (c->st[i].fd >= 0 && c->st[i].nunits && c->st[i].fsize > most) {
			most = c->st[i].fsize;
			best = i;
		}
	if (best == ~0u || posix_memalign((void **)&buf, 4096, unit_buf_size(c)))
		return 0;
	k = &c->st[best];
	at = k->units[k->nunits - 1];
	if (!read_unit(c, best, k->fd, buf, at, k->fsize, &u) || ftruncate(k->fd, (off_t)at) < 0) {
		free(buf);
		return 0;
	}
	free(buf);
	freed = k->fsize - at;
	k->fsize = at;
	k->nunits--;
	k->unwritten += u.records;
	k->unwritten_subbufs += u.nsub;
	if (u.last_seq + 1 == k->next_seq)
		k->next_seq = u.first_seq; /* an append reuses their numbers: no gap */
	k->subbufs -= u.nsub <= k->subbufs ? u.nsub : k->subbufs;
	k->records -= u.records <= k->records ? u.records : k->records;
	s->stats.records -= u.records <= s->stats.records ? u.records : s->stats.records;
	s->stats.subbufs -= u.nsub <= s->stats.subbufs ? u.nsub : s->stats.subbufs;
	s->stats.raw_bytes -= u.nsub * c->bs <= s->stats.raw_bytes ? u.nsub * c->bs : s->stats.raw_bytes;
	return freed;
}

uint64_t kc_make_room(struct kc_session *s, struct kc_chan *c, uint64_t need)
{
	uint64_t freed = 0, f;

	while (freed < need + 65536 && (f = drop_newest_unit(s, c)))
		freed += f;
	if (freed)
		s->stats.bytes -= freed <= s->stats.bytes ? freed : s->stats.bytes;
	return freed;
}

uint64_t kc_ns(const struct kc_session *s, uint64_t raw)
{
	uint64_t r1, n1;
	double rate;

	kt_calib_pair(&r1, &n1);
	rate = r1 > s->calib_raw ? (double)(n1 - s->calib_ns) / (double)(r1 - s->calib_raw) : 1.0;
	return n1 - (uint64_t)((double)(int64_t)(r1 - raw) * rate);
}

static void note_loss(struct kc_session *s, struct kc_chan *c, unsigned i, uint64_t to_ns)
{
	struct kc_stream *k = &c->st[i];

	if (!k->pend)
		return;
	if (s->stats.nlosses < KC_MAX_LOSSES) {
		struct kc_loss *l = &s->losses[s->stats.nlosses];

		l->dir = c->dir;
		l->stream = i;
		l->count = k->pend;
		l->from_ns = k->pend_from;
		l->to_ns = to_ns;
	}
	s->stats.nlosses++;
	k->pend = 0;
}

/*
 * Is sub-buffer @seq of stream @i ready to be copied (complete, or anyway
 * if @final)?  If so, its ring header is made the file's: `used` final,
 * CLOSED set (a complete slot has no writer until `consumed` passes it),
 * and in the final drain the stale bytes after `used` are cleared.
 * Return: 1 ready, 0 not yet, -1 nothing to copy (never initialised, or
 * empty): skip it.
 */
static int ready(struct kc_chan *c, unsigned i, uint64_t seq, uint64_t head, int final)
{
	struct kc_stream *k = &c->st[i];
	struct ktrace_subbuf *sb = (struct ktrace_subbuf *)(k->ring + (seq % c->nr) * c->bs);
	uint64_t room = c->bs - KTRACE_SUBBUF_HDR_SIZE, hseq = head >> c->shift, extent;
	int init = __atomic_load_n(&sb->magic, __ATOMIC_ACQUIRE) == KTRACE_SUBBUF_MAGIC &&
		   __atomic_load_n(&sb->seq, __ATOMIC_RELAXED) == seq;

	if (c->sctl[i].kind == KTRACE_STREAM_SHARED) {
		uint32_t commit = __atomic_load_n(&sb->commit, __ATOMIC_ACQUIRE);

		if (!final && (seq >= hseq || commit != (uint32_t)((seq / c->nr + 1) * room) || !init))
			return 0;
		extent = seq < hseq ? __atomic_load_n(&sb->used, __ATOMIC_RELAXED)
				    : (head & (c->bs - 1)) - KTRACE_SUBBUF_HDR_SIZE;
	} else {
		uint16_t flags = __atomic_load_n(&sb->flags, __ATOMIC_ACQUIRE);

		if (!final && seq >= hseq && !(init && (flags & KTRACE_SBF_CLOSED)))
			return 0;
		extent = __atomic_load_n(&sb->used, __ATOMIC_RELAXED);
	}
	if (!init)
		return -1; /* never initialised (a writer died opening it): nothing to keep */
	if (extent > room)
		extent = room;
	extent &= ~(uint64_t)7;
	if (!extent && !sb->lost && !sb->nrec)
		return -1;
	if (final) {
		sb->used = (uint32_t)extent;
		memset((uint8_t *)sb + KTRACE_SUBBUF_HDR_SIZE + extent, 0, room - extent);
	}
	__atomic_fetch_or(&sb->flags, KTRACE_SBF_CLOSED, __ATOMIC_RELAXED);
	return 1;
}

/* Bookkeeping of a slot written: stats, drops and their time range. */
static void copied(struct kc_session *s, struct kc_chan *c, unsigned i, uint64_t seq)
{
	struct kc_stream *k = &c->st[i];
	const struct ktrace_subbuf *h = (const struct ktrace_subbuf *)(k->ring + (seq % c->nr) * c->bs);
	int shared = c->sctl[i].kind == KTRACE_STREAM_SHARED;

	note_loss(s, c, i, h->first_ns);
	if (h->lost) {
		k->pend += h->lost;
		k->pend_from = h->last_ts ? kc_ns(s, h->last_ts) : h->first_ns;
		k->lost += h->lost;
	}
	k->next_seq = seq + 1;
	s->stats.subbufs++;
	k->subbufs++;
	{
		uint64_t n = shared ? kc_count_records((const uint8_t *)h + KTRACE_SUBBUF_HDR_SIZE,
						    h->used, 1)
				    : h->nrec;

		s->stats.records += n;
		k->records += n;
	}
}

uint8_t *kc_ring(struct kc_session *s, struct kc_chan *c, unsigned i)
{
	struct kc_stream *k = &c->st[i];
	uint64_t ring;

	if (k->ring)
		return k->ring;
	ring = __atomic_load_n(&c->sctl[i].ring, __ATOMIC_ACQUIRE);
	if (!ring)
		return NULL;
	k->ring = mmap(NULL, (size_t)c->bs * c->nr, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
		       (off_t)ring);
	if (k->ring == MAP_FAILED) {
		k->ring = NULL;
		kc_error(s, "%s: stream %u: cannot map its ring: %s", c->dir, i, strerror(errno));
	}
	return k->ring;
}

/* Copy what stream @i of @c has ready.  Return: sub-buffers copied. */
static uint64_t drain_stream(struct kc_session *s, struct kc_chan *c, unsigned i, int final)
{
	struct ktrace_stream_ctl *sc = &c->sctl[i];
	struct kc_stream *k = &c->st[i];
	struct iovec iov[KC_BATCH];
	uint64_t head, hseq, seq, first, n = 0;
	int nb = 0, stop = 0;

	if (!kc_ring(s, c, i))
		return 0;
	if (k->werr && !final) {
		s->unwritable++; /* its file cannot be written: the writers drop and count */
		return 0;
	}
	head = __atomic_load_n(&sc->head, __ATOMIC_ACQUIRE);
	if (!head)
		return 0;
	hseq = head >> c->shift;
	seq = first = __atomic_load_n(&sc->consumed, __ATOMIC_RELAXED);
	if (final && (c->flags & KTRACE_FLIGHT_CHANNEL) && hseq + 1 > c->nr && seq < hseq + 1 - c->nr)
		seq = first = hseq + 1 - c->nr; /* the older ones were overwritten */
	while (!stop) {
		int r = seq <= hseq && nb < KC_BATCH ? ready(c, i, seq, head, final) : 0;

		if (r > 0) {
			iov[nb].iov_base = k->ring + (seq % c->nr) * c->bs;
			iov[nb].iov_len = c->bs;
			nb++;
			seq++;
			continue;
		}
		/* flush the batch [first, first + nb) */
		if (nb) {
			int w = write_units(s, c, i, iov, nb);

			for (int b = 0; b < w; b++)
				copied(s, c, i, first + (uint64_t)b);
			n += (uint64_t)w;
			if (w < nb && !final) {
				/* cannot write: the stream is no longer consumed, so its
				 * writers drop and count; the rest waits for the final drain */
				__atomic_store_n(&sc->consumed, first + (uint64_t)w, __ATOMIC_RELEASE);
				s->unwritable++;
				return n;
			}
			for (int b = w; b < nb; b++) /* final: counted, never skipped silently */
				not_written(c, i, (const struct ktrace_subbuf *)iov[b].iov_base);
			if (s->throttle_us) {
				struct timespec ts = { 0, (long)s->throttle_us * 1000 };

				nanosleep(&ts, NULL);
			}
		}
		if (r < 0)
			seq++; /* nothing to copy in it */
		else if (seq > hseq || nb < KC_BATCH)
			stop = 1;
		nb = 0;
		first = seq;
		__atomic_store_n(&sc->consumed, seq, __ATOMIC_RELEASE);
	}
	return n;
}

/* Append @text to DIR/metadata.  Return: 0, or -errno (nothing appended). */
static int append_meta(struct kc_chan *c, const char *text)
{
	size_t len = strlen(text);
	int fd = openat(c->dirfd, "metadata", O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC), rc = 0;
	struct stat st;
	ssize_t w;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	w = write(fd, text, len);
	if (w != (ssize_t)len) {
		rc = w < 0 ? -errno : -ENOSPC;
		if (ftruncate(fd, st.st_size) < 0) {
			/* a torn last line: the reader reports it */
		}
	}
	close(fd);
	return rc;
}

/*
 * Appended to DIR/metadata once the writers are gone: a (raw,
 * CLOCK_MONOTONIC) pair, which with the pairs the runtime took at setup
 * gives the raw clock's rate over the whole run, whenever the program
 * ended; and a `stream-written` line per stream file, what the consumer
 * wrote to it (docs/FORMAT.md), so that readers see a file cut short.
 */
static void append_end(struct kc_session *s, struct kc_chan *c, int retry)
{
	size_t cap = 64 + (size_t)c->nstreams * 80, n = 0;
	char *text = malloc(cap);
	uint64_t raw, ns;

	if (!text) {
		kc_error(s, "out of memory");
		return;
	}
	text[0] = 0;
	kt_calib_pair(&raw, &ns);
	if (strcmp(kt_clock_name(), "tsc") == 0)
		n += (size_t)snprintf(text + n, cap - n, "calib %llu %llu\n", (unsigned long long)raw,
				      (unsigned long long)ns);
	for (uint32_t i = 0; i < c->nstreams; i++) {
		struct kc_stream *k = &c->st[i];

		if (k->fd < 0)
			continue;
		n += (size_t)snprintf(text + n, cap - n, "stream-written %u trace%u %llu %llu\n", i, i,
				      (unsigned long long)k->fsize, (unsigned long long)k->records);
	}
	if (n) {
		int rc = append_meta(c, text);

		if (rc == -ENOSPC || rc == -EDQUOT) {
			free(text);
			if (retry && kc_make_room(s, c, cap + 4096)) {
				append_end(s, c, 0); /* the lines again: a stream file is shorter now */
				return;
			}
			text = NULL;
		}
		if (rc < 0 && rc != -ENOENT) /* no metadata: the reader calibrates from the headers */
			kc_error(s, "%s/metadata: cannot append: %s", c->dir, strerror(-rc));
	}
	free(text);
}

int kc_write_callsites(struct kc_session *s, struct kc_chan *c, uint64_t off, int dirfd)
{
	size_t hlen = sizeof(struct ktrace_callsites), len;
	struct ktrace_callsites *h, *copy;
	uint64_t n;
	int rc;

	h = mmap(NULL, hlen, PROT_READ, MAP_SHARED, s->fd, (off_t)off);
	if (h == MAP_FAILED)
		return -errno;
	n = __atomic_load_n(&h->count, __ATOMIC_ACQUIRE);
	if (h->magic != KTRACE_CALLSITES_MAGIC || h->entry_size != sizeof(struct ktrace_callsite)) {
		munmap(h, hlen);
		kc_error(s, "%s: the call-site table in the session is damaged", c->dir);
		return -EINVAL;
	}
	if (n > h->capacity)
		n = h->capacity;
	munmap(h, hlen);
	len = hlen + (size_t)n * sizeof(struct ktrace_callsite);
	h = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, (off_t)off);
	if (h == MAP_FAILED)
		return -errno;
	/* a copy: the table may still grow (a dump while the program runs) */
	copy = malloc(len);
	if (!copy) {
		munmap(h, len);
		kc_error(s, "out of memory");
		return -ENOMEM;
	}
	memcpy(copy, h, len);
	munmap(h, len);
	copy->capacity = n; /* the file holds the entries handed out, no more */
	rc = ksf_replace_at(dirfd, "callsites", copy, len);
	if ((rc == -ENOSPC || rc == -EDQUOT) && dirfd == c->dirfd && kc_make_room(s, c, len + 4096))
		rc = ksf_replace_at(dirfd, "callsites", copy, len); /* without it no call is named */
	if (rc < 0)
		kc_error(s, "%s/callsites: cannot write: %s", c->dir, strerror(-rc));
	free(copy);
	return rc;
}

/* Final: the channel's drop counters into the stats, the open ranges closed. */
static void chan_done(struct kc_session *s, unsigned idx)
{
	struct kc_chan *c = &s->chans[idx];
	uint64_t cs = __atomic_load_n(&s->chan[idx].callsites, __ATOMIC_ACQUIRE);
	uint64_t added = 0;
	struct statvfs v;
	int full = 0;

	for (uint32_t i = 0; i < c->nstreams; i++)
		full |= c->st[i].werr == ENOSPC || c->st[i].werr == EDQUOT;
	if (full) {
		/* the disk is full: room for the call-site table and the text
		 * files first (without them no record can be read), taken from
		 * the newest records, which are counted as not written */
		uint64_t need = 65536;

		if (cs) {
			struct ktrace_callsites *h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, s->fd,
							  (off_t)cs);

			if (h != MAP_FAILED) {
				need += (h->count < h->capacity ? h->count : h->capacity) *
					sizeof(struct ktrace_callsite);
				munmap(h, sizeof(*h));
			}
		}
		if (fstatvfs(c->dirfd, &v) < 0 || (uint64_t)v.f_bavail * v.f_frsize < need)
			kc_make_room(s, c, need); /* (not when space was freed since) */
	}
	if (cs)
		kc_write_callsites(s, c, cs, c->dirfd);
	for (uint32_t i = 0; i < c->nstreams; i++) {
		struct kc_stream *k = &c->st[i];

		/* a stream whose records were all dropped still gets its file
		 * (empty), so that readers know the stream and count its drops */
		if (k->fd < 0 && __atomic_load_n(&c->sctl[i].dropped, __ATOMIC_RELAXED) + k->unwritten)
			stream_file(s, c, i);
	}
	append_end(s, c, 1);
	for (uint32_t i = 0; i < c->nstreams; i++) {
		struct kc_stream *k = &c->st[i];
		uint64_t d;

		/* records that reached the ring but not the disk: the stream's
		 * `dropped` counter gets them, so every reader counts them */
		if (k->unwritten > k->added) {
			__atomic_fetch_add(&c->sctl[i].dropped, k->unwritten - k->added, __ATOMIC_RELAXED);
			added += k->unwritten - k->added;
			k->added = k->unwritten;
		}
		s->stats.unwritten += k->unwritten;
		d = __atomic_load_n(&c->sctl[i].dropped, __ATOMIC_RELAXED);
		if (d && !__atomic_load_n(&c->sctl[i].ring, __ATOMIC_RELAXED))
			s->stats.noring += d; /* its writers never had a ring: not the consumer's delay */

		note_loss(s, c, i, 0);
		s->stats.dropped += d;
		s->stats.overwritten += __atomic_load_n(&c->sctl[i].overwritten, __ATOMIC_RELAXED);
		if (d > k->lost) { /* drops no sub-buffer could carry (a new owner, a full ring) */
			k->pend = d - k->lost;
			k->pend_from = 0;
			note_loss(s, c, i, 0);
		}
	}
	if (added) { /* DIR/dropped mirrors the counters; so does the KFT status */
		kc_kft_unwritten(s, c, added);
	}
	if (added) {
		char text[32];
		uint64_t sum = 0;

		for (uint32_t i = 0; i < c->nstreams; i++)
			sum += __atomic_load_n(&c->sctl[i].dropped, __ATOMIC_RELAXED);
		snprintf(text, sizeof(text), "%llu\n", (unsigned long long)sum);
		kc_write_text(s, c, "dropped", text);
	}
}

uint64_t kc_drain(struct kc_session *s, int final)
{
	uint32_t nchan = __atomic_load_n(&s->hdr->nchan, __ATOMIC_ACQUIRE);
	uint64_t n = 0;

	s->wake_seen = __atomic_load_n(&s->hdr->wake, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&s->hdr->beat, 1, __ATOMIC_RELAXED); /* alive, not stuck */
	s->unwritable = 0;
	if (nchan > KT_SESSION_NCHAN)
		nchan = KT_SESSION_NCHAN;
	for (uint32_t idx = 0; idx < nchan; idx++) {
		uint32_t state = __atomic_load_n(&s->chan[idx].state, __ATOMIC_ACQUIRE);
		struct kc_chan *c = &s->chans[idx];
		int last;

		if (state == KT_CHAN_FREE || state == KT_CHAN_SETUP || state == KT_CHAN_DRAINED ||
		    c->state == 2)
			continue;
		if (kc_chan_open(s, idx) < 0)
			continue;
		/* A channel cleaned up (ENDED) has no writers left: drain it whole. */
		last = final || state == KT_CHAN_ENDED;
		if (!last && ((c->flags & KTRACE_FLIGHT_CHANNEL) ||
			      (s->hdr->flags & KT_SESSION_FLIGHT)))
			continue;
		for (uint32_t i = 0; i < c->nstreams; i++)
			n += drain_stream(s, c, i, last);
		if (state == KT_CHAN_ENDED) {
			chan_done(s, idx);
			chan_close(s, idx);
			__atomic_store_n(&s->chan[idx].state, KT_CHAN_DRAINED, __ATOMIC_RELEASE);
		}
	}
	/* a stream no longer copied (its file cannot be written): writers must
	 * not wait for it; else writers wait again once something was copied */
	if (s->unwritable)
		__atomic_store_n(&s->hdr->stalled, 1, __ATOMIC_RELAXED);
	else if (n)
		__atomic_store_n(&s->hdr->stalled, 0, __ATOMIC_RELAXED);
	return n;
}

void kc_wait(struct kc_session *s, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
	uint32_t w = s->wake_seen;

	__atomic_store_n(&s->hdr->sleeping, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->hdr->wake, __ATOMIC_SEQ_CST) == w)
		syscall(SYS_futex, &s->hdr->wake, FUTEX_WAIT, w, &ts, NULL, 0);
	__atomic_store_n(&s->hdr->sleeping, 0, __ATOMIC_SEQ_CST);
}

void kc_kick(struct kc_session *s)
{
	__atomic_fetch_add(&s->hdr->wake, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &s->hdr->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void kc_consume(struct kc_session *s, int (*done)(void *arg), void *arg)
{
	for (;;) {
		kc_drain(s, 0);
		if (done(arg))
			return;
		kc_wait(s, 20);
	}
}

void kc_report(struct kc_session *s, const char *cmd)
{
	const struct kc_stats *st = kc_stats(s);
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "ktrace %s: %llu records, %.1f MB in %llu sub-buffers; consumer CPU %.2f s, "
			"peak memory %.1f MiB\n",
		cmd, (unsigned long long)st->records, (double)st->bytes / 1e6,
		(unsigned long long)st->subbufs,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
			((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6,
		(double)ru.ru_maxrss / 1024);
	if (st->bytes && st->raw_bytes && s->zon)
		fprintf(stderr, "ktrace %s: compressed (zstd level %d): %.1f MB as %.1f MB of sub-buffers, "
				"%.2f bytes a record\n",
			cmd, s->zlevel, (double)st->bytes / 1e6, (double)st->raw_bytes / 1e6,
			st->records ? (double)st->bytes / (double)st->records : 0.0);
	if (st->waits || st->timeouts)
		fprintf(stderr, "ktrace %s: the program waited %.3f ms for the consumer, %llu times%s\n",
			cmd, (double)st->waited_ns / 1e6, (unsigned long long)(st->waits + st->timeouts),
			st->timeouts ? " (some in vain: records were dropped)" : "");
	if (st->dropped && st->werr)
		fprintf(stderr, "ktrace %s: %llu records dropped: %s/trace%u could not be written (%s): "
				"%llu of them reached the rings, the writers could not store the rest\n",
			cmd, (unsigned long long)st->dropped, st->werr_dir, st->werr_stream,
			strerror(st->werr), (unsigned long long)st->unwritten);
	else if (st->dropped && st->noring == st->dropped)
		fprintf(stderr, "ktrace %s: %llu records dropped: the program's runtime could not set up "
				"its rings in the session (/dev/shm full, or the session file closed)\n",
			cmd, (unsigned long long)st->dropped);
	else if (st->dropped)
		fprintf(stderr, "ktrace %s: %llu records dropped: the consumer fell behind the writers "
				"(larger rings: record -n, -b; a longer --block-timeout, or none)\n",
			cmd, (unsigned long long)st->dropped);
	for (unsigned i = 0; i < st->nlosses && i < KC_MAX_LOSSES; i++) {
		const struct kc_loss *l = &st->losses[i];

		fprintf(stderr, "ktrace %s:   %llu dropped in %s/trace%u", cmd,
			(unsigned long long)l->count, l->dir, l->stream);
		if (l->from_ns && l->to_ns)
			fprintf(stderr, " between %.6f and %.6f s\n", (double)l->from_ns / 1e9,
				(double)l->to_ns / 1e9);
		else if (l->from_ns)
			fprintf(stderr, " after %.6f s\n", (double)l->from_ns / 1e9);
		else
			fputc('\n', stderr);
	}
	if (st->nlosses > KC_MAX_LOSSES)
		fprintf(stderr, "ktrace %s:   ... %u ranges in all (ktrace print shows each)\n", cmd,
			st->nlosses);
	if (st->unfinished)
		fprintf(stderr, "ktrace %s: %llu calls were open when their thread died: recorded as "
				"unfinished\n",
			cmd, (unsigned long long)st->unfinished);
	if (st->detach_unfinished)
		fprintf(stderr, "ktrace %s: %llu calls were open at the detach: recorded as unfinished\n",
			cmd, (unsigned long long)st->detach_unfinished);
}

/* Count @pid into @seen (distinct pids, at most 64 remembered) if it runs. */
static void count_pid(uint32_t pid, uint32_t *seen, unsigned *n)
{
	for (unsigned i = 0; i < *n && i < 64; i++)
		if (seen[i] == pid)
			return;
	if (!kt_pid_alive(pid))
		return;
	if (*n < 64)
		seen[*n] = pid;
	(*n)++;
}

unsigned kc_alive(struct kc_session *s)
{
	uint32_t nchan = __atomic_load_n(&s->hdr->nchan, __ATOMIC_ACQUIRE);
	uint32_t nstack = __atomic_load_n(&s->hdr->nstack, __ATOMIC_ACQUIRE);
	uint32_t seen[64];
	unsigned n = 0;

	for (uint32_t i = 0; i < nchan && i < KT_SESSION_NCHAN; i++)
		if (s->chan[i].state == KT_CHAN_LIVE)
			count_pid(s->chan[i].pid, seen, &n);
	for (uint32_t i = 0; i < nstack && i < KT_SESSION_NSTACK; i++)
		if (s->stack[i].state == KT_STACK_USED)
			count_pid(s->stack[i].pid, seen, &n);
	return n;
}

void kc_chans_done(struct kc_session *s)
{
	uint32_t nchan = __atomic_load_n(&s->hdr->nchan, __ATOMIC_ACQUIRE);

	for (uint32_t idx = 0; idx < nchan && idx < KT_SESSION_NCHAN; idx++) {
		if (s->chans[idx].state != 1)
			continue;
		chan_done(s, idx);
		chan_close(s, idx);
		__atomic_store_n(&s->chan[idx].state, KT_CHAN_DRAINED, __ATOMIC_RELEASE);
	}
}

void kc_close(struct kc_session *s, int remove)
{
	if (!s)
		return;
	for (uint32_t idx = 0; idx < KT_SESSION_NCHAN; idx++)
		if (s->chans && s->chans[idx].state == 1)
			chan_close(s, idx);
	if (remove) {
		int dirfd = open(s->hdr->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dirfd >= 0) {
			unlinkat(dirfd, "session", 0);
			close(dirfd);
		}
		unlink(s->path);
	}
	kc_free(s);
}

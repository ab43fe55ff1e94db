/*
 * lib/channel.c - channels: the user-space version of seed 003's
 * trace_setup / trace_start / trace_stop / trace_cleanup / trace_running.
 *
 * ktrace_setup() creates the trace directory root/name with
 *   control       the shared control page, stream table and enable map
 *   trace0..N     the streams, each buf_nr * buf_size bytes
 *   metadata, state, dropped, threads
 * allocating every file in full (posix_fallocate), mapping it MAP_SHARED and
 * pre-faulting it for writing, so that running out of disk is an error here
 * and never a SIGBUS later, and records do not page-fault (the shared
 * stream of a channel with thread streams: its first two sub-buffers).
 *
 * Streamed channels.  Under a consumer (`ktrace record`, $KTRACE_SESSION,
 * lib/session.h) the streams are rings in the session's shared memory
 * instead: the shared stream's ring is allocated here, a thread stream's
 * when a thread first claims it (kt_stream_map()), nothing for streams no
 * thread uses; the consumer copies each full sub-buffer to DIR/traceN
 * (packed layout) and the trace directory holds no ring at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"
#include "safefile.h"
#include "session.h"

/* Thread streams of a streamed channel: rings cost nothing until claimed. */
#define KT_STREAMED_SLOTS 256u

struct ktrace_channel *kt_default;
static const uint8_t kt_zero_map[KTRACE_ENABLE_MAP_SIZE];
KT_EXPORT const volatile uint8_t *ktrace__enabled = kt_zero_map;
static uint64_t kt_next_key = 1;

struct kt_stream *kt_shared_stream(struct ktrace_channel *ch)
{
	return &ch->streams[ch->nstreams - 1];
}

/*
 * Map stream @s of a streamed channel into this process, allocating its
 * ring in the session first if no process has yet.  Thread streams: only
 * the stream's owner calls it (a thread that claimed the slot), and the
 * ring's slots are allocated as the writer first reaches them
 * (kt_ring_ready()), so a thread that writes little costs little.  The
 * shared stream: any writer may call it, at its first record (a signal
 * handler's, or a thread's beyond the slots); the whole ring is allocated
 * at once, since writers may enter a sub-buffer before its opener could
 * prepare it, and two racing allocators agree by compare-and-swap on the
 * stream's `ring` (the loser's region stays unused in the session).
 * Async-signal-safe (fallocate, mmap).
 * Return: 0, or -errno (the session or /dev/shm is full: the caller
 * writes elsewhere or drops).
 */
int kt_stream_map(struct ktrace_channel *ch, struct kt_stream *s)
{
	uint64_t len = (uint64_t)ch->buf_size * ch->buf_nr, off, first;
	int shared = s->kind == KTRACE_STREAM_SHARED;
	uint8_t *p, *none = NULL;
	int rc;

	if (__atomic_load_n(&s->base, __ATOMIC_ACQUIRE))
		return 0;
	if (!ch->sess)
		return -ENOENT;
	first = shared ? len : (uint64_t)ch->buf_size * (ch->buf_nr < 2 ? ch->buf_nr : 2);
	off = __atomic_load_n(&s->ctl->ring, __ATOMIC_ACQUIRE);
	if (!off) {
		uint64_t zero = 0;

		rc = kt_session_alloc(ch->sess, len, first, &off);
		if (rc < 0)
			return rc;
		if (!__atomic_compare_exchange_n(&s->ctl->ring, &zero, off, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			off = zero; /* another writer allocated it first */
	}
	/* Pre-fault two sub-buffers; the shared stream faults in the rest (rarely used). */
	p = kt_session_map(ch->sess, off, len, 2 * (uint64_t)ch->buf_size);
	if (!p)
		return -errno;
	if (!__atomic_compare_exchange_n(&s->base, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		munmap(p, len); /* another thread of this process mapped it */
	else
		s->ready = shared ? ch->buf_nr : (uint32_t)(first / ch->buf_size);
	return 0;
}

/*
 * Make slot @slot of thread stream @s's ring usable by this process before
 * its writer enters it, and the next one too, so the writer never faults
 * on the hot path: allocated in /dev/shm (a full one is an error here,
 * not a SIGBUS) and pre-faulted.  Slots are reached in order in the first
 * lap; a stream's next owner in another process starts at any slot, so
 * everything up to it is prepared then.  Return: 0 or -errno.
 */
int kt_ring_ready(struct ktrace_channel *ch, struct kt_stream *s, uint32_t slot)
{
	uint32_t want = slot + 2 < ch->buf_nr ? slot + 2 : ch->buf_nr;
	uint64_t from = (uint64_t)s->ready * ch->buf_size, len;
	int rc;

	if (want <= s->ready)
		return 0;
	len = (uint64_t)(want - s->ready) * ch->buf_size;
	rc = kt_session_commit(ch->sess, __atomic_load_n(&s->ctl->ring, __ATOMIC_RELAXED) + from, len);
	if (rc < 0)
		return rc;
	if (madvise(s->base + from, len, MADV_POPULATE_WRITE))
		for (uint64_t o = 0; o < len; o += 4096)
			((volatile uint8_t *)s->base)[from + o] = 0;
	s->ready = want;
	return 0;
}

/*
 * Make @dir an empty trace directory: create it (and its parents, 0700), or
 * clear an old trace in it.  A directory holding anything else is refused
 * (EEXIST), so a typo in root/name never deletes a user's files; so are a
 * symbolic link and another user's directory (lib/safefile.h).
 */
int kt_prepare_dir(const char *dir, int prepared)
{
	char msg[512];
	int fd = ksf_dir_open(dir, prepared ? KSF_TRACE : KSF_CREATE | KSF_TRACE | KSF_CLEAR, msg,
			      sizeof(msg));

	if (fd < 0) {
		kt_seterr(-fd, "ktrace: %s", msg);
		return fd;
	}
	close(fd);
	return 0;
}

/*
 * Create dir/name of @size bytes, allocated in full, and map it shared;
 * pre-fault its first @prefault bytes for writing.
 */
static void *kt_map_new(const char *dir, const char *name, size_t size, size_t prefault)
{
	char path[PATH_MAX];
	void *p;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = ksf_create(dir, name, O_RDWR);
	if (fd < 0) {
		kt_seterr(-fd, "ktrace: %s: cannot create: %s", path, strerror(-fd));
		return NULL;
	}
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err) {
		close(fd);
		ksf_unlink(dir, name);
		kt_seterr(err, "ktrace: %s: cannot allocate %zu bytes: %s", path, size, strerror(err));
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		kt_seterr(err, "ktrace: %s: cannot map %zu bytes: %s", path, size, strerror(err));
		return NULL;
	}
	/*
	 * Pre-fault for writing: MAP_POPULATE maps shared file pages read-only,
	 * and the first store to each page would then take a write fault on the
	 * hot path (~4.6 ns per record measured).  Older kernels (< 5.14) lack
	 * MADV_POPULATE_WRITE: touch every page instead.
	 */
	if (prefault > size)
		prefault = size;
	if (prefault && madvise(p, prefault, MADV_POPULATE_WRITE))
		for (size_t off = 0; off < prefault; off += 4096)
			((volatile uint8_t *)p)[off] = 0;
	return p;
}

static int kt_check_opts(const struct ktrace_options *o, uint32_t *buf_size, uint32_t *buf_nr)
{
	*buf_size = o->buf_size ? o->buf_size : KTRACE_DEFAULT_BUF_SIZE;
	*buf_nr = o->buf_nr ? o->buf_nr : KTRACE_DEFAULT_BUF_NR;
	if (!o->root || !*o->root || !o->name || !*o->name || strchr(o->name, '/') ||
	    !strcmp(o->name, ".") || !strcmp(o->name, "..")) {
		kt_seterr(EINVAL, "ktrace: setup: root and name must be set; name is one path component");
		return -EINVAL;
	}
	if (*buf_size < KTRACE_MIN_BUF_SIZE || *buf_size > KTRACE_MAX_BUF_SIZE ||
	    (*buf_size & (*buf_size - 1))) {
		kt_seterr(EINVAL, "ktrace: setup: buf_size %u is not a power of two in [%u, %u]",
			  *buf_size, KTRACE_MIN_BUF_SIZE, KTRACE_MAX_BUF_SIZE);
		return -EINVAL;
	}
	if (*buf_nr < 2 || (uint64_t)*buf_nr * *buf_size > (1ull << 40)) {
		kt_seterr(EINVAL, "ktrace: setup: buf_nr %u must be >= 2 and the stream at most 1 TiB",
			  *buf_nr);
		return -EINVAL;
	}
	if (o->flags & ~(KTRACE_GLOBAL_CHANNEL | KTRACE_FLIGHT_CHANNEL | KTRACE_DISABLE_STATE)) {
		kt_seterr(EINVAL, "ktrace: setup: unknown flags 0x%x", o->flags);
		return -EINVAL;
	}
	return 0;
}

static void kt_channel_free(struct ktrace_channel *ch)
{
	if (!ch)
		return;
	if (ch->streams) {
		for (uint32_t i = 0; i < ch->nstreams; i++)
			if (ch->streams[i].base)
				munmap(ch->streams[i].base, (size_t)ch->buf_size * ch->buf_nr);
		kt_free(ch->streams);
	}
	if (ch->ctl)
		munmap(ch->ctl, ch->ctl_len);
	for (int i = 0; i < 256; i++)
		kt_free(ch->funcs[i]);
	for (size_t i = 0; i < ch->nevents; i++) {
		struct ktrace_event_desc *d = &ch->events[i].d;

		kt_free((char *)d->name);
		kt_free((char *)d->category);
		for (int a = 0; a < 4; a++)
			kt_free((char *)d->args[a]);
	}
	kt_free(ch->events);
	kt_free(ch->root);
	kt_free(ch->name);
	kt_free(ch->dir);
	pthread_mutex_destroy(&ch->lock);
	kt_free(ch);
}

/*
 * DIR/state and DIR/dropped as the channel is now, each rewritten only if
 * it changed since the last call: a short-lived traced image used to
 * replace them 8 times between setup and exit (each a new file, renamed
 * into place), now 4.  Called under ch->lock (or before the channel is
 * published).  Return: 0, or -1 with the error set (a file not written).
 */
static int kt_write_state_files(struct ktrace_channel *ch)
{
	struct ktrace_stats st;
	int running = kt_running(ch) ? 1 : 0, first = ch->state_file < 0;
	char buf[32];

	ktrace_get_stats(ch, &st);
	if ((first || running != ch->state_file) &&
	    kt_write_file(ch->dir, "state", running ? "start\n" : "stop\n") < 0)
		return -1;
	if (first || st.dropped != ch->dropped_file) {
		snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)st.dropped);
		if (kt_write_file(ch->dir, "dropped", buf) < 0) {
			ch->state_file = -1; /* both again next time */
			return -1;
		}
	}
	ch->state_file = running;
	ch->dropped_file = st.dropped;
	return 0;
}

/*
 * kt_setup() in steps.  Each step does one thing to the channel being built;
 * a step that fails has set the error (kt_seterr()) and returns -1, and
 * kt_setup() unwinds the whole channel (kt_channel_free()).
 */

/*
 * kt_thread_streams - how many thread streams a channel of @o gets (@sess:
 * the consumer's session, or NULL).  Returns the count into *@nthreads and
 * 0, or -EINVAL (error set) above 4096.
 */
static int kt_thread_streams(const struct ktrace_options *o, const struct kt_session *sess,
			     uint32_t *nthreads)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	*nthreads = o->nthreads ? o->nthreads
				: sess ? KT_STREAMED_SLOTS : (uint32_t)(ncpu > 2 ? 2 * ncpu : 4);
	if (o->flags & KTRACE_GLOBAL_CHANNEL)
		*nthreads = 0;
	if (*nthreads > 4096) {
		kt_seterr(EINVAL, "ktrace: setup: %u thread streams is more than 4096", *nthreads);
		return -EINVAL;
	}
	return 0;
}

/*
 * kt_channel_alloc - a new channel's memory with its geometry (@buf_size
 * bytes per sub-buffer, @buf_nr of them per stream, @nthreads thread
 * streams and the shared one), nothing created on disk yet.  Returns the
 * channel, or NULL (error set) out of memory.
 */
static struct ktrace_channel *kt_channel_alloc(const struct ktrace_options *o,
					       struct kt_session *sess, uint32_t buf_size,
					       uint32_t buf_nr, uint32_t nthreads)
{
	struct ktrace_channel *ch = kt_calloc(1, sizeof(*ch));

	if (!ch) {
		kt_seterr(ENOMEM, "ktrace: setup: out of memory");
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->buf_size = buf_size;
	ch->buf_nr = buf_nr;
	ch->shift = (uint32_t)__builtin_ctz(buf_size);
	ch->flags = o->flags;
	ch->nthreads = nthreads;
	ch->nstreams = nthreads + 1;
	ch->pid = getpid();
	ch->sess = sess;
	ch->sess_idx = -1;
	return ch;
}

/*
 * kt_channel_dir - name the channel's directory root/name and prepare it
 * (KT_SETUP_PREPARED in @flags: the consumer made it, keep what is
 * there).  Returns 0, or -1 with the error set.
 */
static int kt_channel_dir(struct ktrace_channel *ch, const struct ktrace_options *o,
			  unsigned flags)
{
	ch->root = kt_strdup(o->root);
	ch->name = kt_strdup(o->name);
	if (ch->root && ch->name &&
	    (ch->dir = kt_malloc(strlen(o->root) + strlen(o->name) + 2)) != NULL)
		sprintf(ch->dir, "%s/%s", o->root, o->name);
	if (!ch->dir) {
		kt_seterr(ENOMEM, "ktrace: setup: out of memory");
		return -1;
	}
	if (kt_prepare_dir(ch->dir, flags & KT_SETUP_PREPARED) < 0)
		return -1;
	return 0;
}

/*
 * kt_channel_register - under a consumer, register the channel's directory
 * with the session (ch->sess_idx is then its slot there); nothing alone.
 * Returns 0, or -1 with the error set.
 */
static int kt_channel_register(struct ktrace_channel *ch)
{
	char real[PATH_MAX];
	int err;

	if (!ch->sess)
		return 0;
	err = realpath(ch->dir, real) ? kt_session_chan_add(ch->sess, real, ch->flags, 0) : -errno;
	if (err < 0) {
		kt_seterr(-err, "ktrace: %s: cannot register with the consumer: %s", ch->dir,
			  strerror(-err));
		return -1;
	}
	ch->sess_idx = err;
	return 0;
}

/*
 * kt_control_map - create and fill the control file: header page, stream
 * table, enable map (page aligned; every event enabled), state stopped.
 * Returns 0, or -1 with the error set.
 */
static int kt_control_map(struct ktrace_channel *ch)
{
	size_t table_off = 4096, enable_off;

	enable_off = (table_off + (size_t)ch->nstreams * sizeof(struct ktrace_stream_ctl) + 4095) &
		     ~(size_t)4095;
	ch->ctl_len = enable_off + KTRACE_ENABLE_MAP_SIZE;
	ch->ctl = kt_map_new(ch->dir, "control", ch->ctl_len, ch->ctl_len);
	if (!ch->ctl)
		return -1;
	ch->ctl->version = KTRACE_FORMAT_VERSION;
	ch->ctl->hdr_size = sizeof(struct ktrace_control);
	ch->ctl->state = KTRACE_STATE_STOPPED;
	ch->ctl->flags = ch->flags;
	ch->ctl->buf_size = ch->buf_size;
	ch->ctl->buf_nr = ch->buf_nr;
	ch->ctl->nstreams = ch->nstreams;
	ch->ctl->streams_off = (uint32_t)table_off;
	ch->ctl->enable_off = (uint32_t)enable_off;
	ch->ctl->owner_pid = (uint32_t)ch->pid;
	ch->enable = (uint8_t *)ch->ctl + enable_off;
	memset(ch->enable, 1, KTRACE_ENABLE_MAP_SIZE);
	return 0;
}

/*
 * kt_streams_map - the streams: trace0..N mapped from the directory, or,
 * under a consumer, rings in the session allocated when first claimed
 * (a global channel's one stream at once).  The control file must be
 * mapped.  Returns 0, or -1 with the error set.
 */
static int kt_streams_map(struct ktrace_channel *ch)
{
	size_t stream_bytes = (size_t)ch->buf_size * ch->buf_nr;
	uint32_t nthreads = ch->nthreads;
	int err;

	ch->streams = kt_calloc(ch->nstreams, sizeof(*ch->streams));
	if (!ch->streams) {
		kt_seterr(ENOMEM, "ktrace: setup: out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < ch->nstreams; i++) {
		struct kt_stream *s = &ch->streams[i];
		char name[32];

		snprintf(name, sizeof(name), "trace%u", i);
		s->index = i;
		s->kind = i < nthreads ? KTRACE_STREAM_THREAD : KTRACE_STREAM_SHARED;
		s->ctl = (struct ktrace_stream_ctl *)((uint8_t *)ch->ctl + ch->ctl->streams_off) + i;
		s->ctl->kind = s->kind;
		if (ch->sess) {
			/*
			 * A thread stream gets its ring when a thread claims it,
			 * the shared stream at its first record: beside thread
			 * streams it only takes signal handlers nested in a
			 * write and threads beyond the slots.  A global channel
			 * has nothing else: allocate it now.
			 */
			if (!nthreads && (err = kt_stream_map(ch, s)) < 0) {
				kt_seterr(-err, "ktrace: %s: cannot allocate a ring of %zu bytes in the session: %s",
					  ch->dir, stream_bytes, strerror(-err));
				return -1;
			}
			continue;
		}
		/*
		 * Beside thread streams, the shared stream only takes signal
		 * handlers nested in a write and threads beyond the slots:
		 * pre-faulting all of it would cost as much as a thread stream
		 * (seconds per GiB) for pages that are mostly never written.
		 * Its first two sub-buffers are pre-faulted; the rest is
		 * faulted in when first written (allocated all the same).
		 */
		s->base = kt_map_new(ch->dir, name, stream_bytes,
				     s->kind == KTRACE_STREAM_SHARED && nthreads ?
					     2 * (size_t)ch->buf_size : stream_bytes);
		if (!s->base)
			return -1;
	}
	return 0;
}

/*
 * kt_channel_calibrate - the channel's creation times and its first two
 * clock calibration pairs; busy-waits up to 2 ms.  Cannot fail.
 */
static void kt_channel_calibrate(struct ktrace_channel *ch)
{
	struct kt_session *sess = ch->sess;

	ch->created_ns = kt_mono_ns();
	ch->realtime_ns = kt_realtime_ns();
	/*
	 * Two calibration pairs at least 1 ms apart give the clock's rate
	 * (the KFT engine's time filters and triggers need it at once) even
	 * if the program dies before any other pair is taken.  Alone, a
	 * channel takes two 2 ms apart; under a session the first is the
	 * consumer's, taken before the program was started (fork, exec and
	 * the loader take about that long, so this rarely waits), and the
	 * consumer appends a last one when the program has ended.
	 */
	if (sess && sess->hdr->start_raw) {
		unsigned n = ch->ncalib++;

		ch->calib[n][0] = sess->hdr->start_raw;
		ch->calib[n][1] = sess->hdr->start_ns;
		while (kt_mono_ns() - sess->hdr->start_ns < 1000000)
			;
		kt_add_calib(ch);
	} else {
		uint64_t t0 = kt_mono_ns();

		kt_add_calib(ch);
		while (kt_mono_ns() - t0 < 2000000)
			;
		kt_add_calib(ch);
	}
}

/*
 * kt_channel_files - the directory's text files: metadata, state (stop),
 * dropped (0), threads (empty).  Returns 0, or -1 with the error set.
 */
static int kt_channel_files(struct ktrace_channel *ch)
{
	if (kt_metadata_write(ch) < 0)
		return -1;
	ch->state_file = -1;
	if (kt_write_state_files(ch) < 0 || kt_write_file(ch->dir, "threads", "") < 0)
		return -1;
	return 0;
}

/*
 * kt_channel_publish - make the channel visible: the control file's magic
 * (readers wait for it), a key, the process's list of live channels.
 * Returns 0, or -1 with the error set (64 channels already live).
 */
static int kt_channel_publish(struct ktrace_channel *ch)
{
	__atomic_store_n(&ch->ctl->magic, KTRACE_CONTROL_MAGIC, __ATOMIC_RELEASE);
	ch->key = __atomic_fetch_add(&kt_next_key, 1, __ATOMIC_RELAXED);
	if (kt_live_add(ch) < 0) {
		kt_seterr(EMFILE, "ktrace: setup: more than 64 channels in one process");
		return -1;
	}
	return 0;
}

/*
 * kt_setup - create the channel @o describes (see the top of this file);
 * @flags: KT_SETUP_*.  Returns the channel, or NULL with the error set
 * (kt_seterr()) and errno as the failing step left it.
 */
struct ktrace_channel *kt_setup(const struct ktrace_options *o, unsigned flags)
{
	struct ktrace_channel *ch;
	struct kt_session *sess = kt_session();
	uint32_t buf_size, buf_nr, nthreads;
	int err;

	kt_thread_init();
	if (kt_check_opts(o, &buf_size, &buf_nr) || kt_thread_streams(o, sess, &nthreads))
		return NULL;
	ch = kt_channel_alloc(o, sess, buf_size, buf_nr, nthreads);
	if (!ch)
		return NULL;
	if (kt_channel_dir(ch, o, flags) || kt_channel_register(ch) || kt_control_map(ch) ||
	    kt_streams_map(ch))
		goto fail;
	kt_channel_calibrate(ch);
	if (kt_channel_files(ch) || kt_channel_publish(ch))
		goto fail;
	if (sess)
		kt_session_chan_state(sess, ch->sess_idx, KT_CHAN_LIVE);
	if (!kt_default)
		ktrace_set_default(ch);
	if (o->start)
		ktrace_start(ch);
	return ch;

fail:
	err = errno;
	if (ch->sess && ch->sess_idx >= 0)
		kt_session_chan_state(ch->sess, ch->sess_idx, KT_CHAN_DRAINED);
	kt_channel_free(ch);
	errno = err;
	return NULL;
}

KT_EXPORT struct ktrace_channel *ktrace_setup_opts(const struct ktrace_options *o)
{
	return kt_setup(o, 0);
}

KT_EXPORT struct ktrace_channel *ktrace_setup(const char *root, const char *name,
					      uint32_t buf_size, uint32_t buf_nr, uint32_t flags)
{
	struct ktrace_options o = {
		.root = root, .name = name, .buf_size = buf_size, .buf_nr = buf_nr, .flags = flags,
	};

	return ktrace_setup_opts(&o);
}

static int kt_set_state(struct ktrace_channel *ch, uint32_t state)
{
	if (!ch || !ch->ctl)
		return -EPERM;
	if (state == KTRACE_STATE_RUNNING)
		ch->ctl->start_ns = kt_mono_ns();
	else
		ch->ctl->stop_ns = kt_mono_ns();
	__atomic_store_n(&ch->ctl->state, state, __ATOMIC_RELEASE);
	pthread_mutex_lock(&ch->lock);
	kt_add_calib(ch);
	kt_write_state_files(ch);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

KT_EXPORT int ktrace_start(struct ktrace_channel *ch)
{
	return kt_set_state(ch, KTRACE_STATE_RUNNING);
}

KT_EXPORT int ktrace_stop(struct ktrace_channel *ch)
{
	return kt_set_state(ch, KTRACE_STATE_STOPPED);
}

KT_EXPORT int ktrace_running(const struct ktrace_channel *ch)
{
	return ch && ch->ctl && kt_running(ch);
}

KT_EXPORT const char *ktrace_dir(const struct ktrace_channel *ch)
{
	return ch ? ch->dir : NULL;
}

KT_EXPORT void ktrace_set_default(struct ktrace_channel *ch)
{
	__atomic_store_n(&kt_default, ch, __ATOMIC_RELEASE);
	__atomic_store_n(&ktrace__enabled, ch ? ch->enable : kt_zero_map, __ATOMIC_RELEASE);
}

KT_EXPORT int ktrace_get_stats(struct ktrace_channel *ch, struct ktrace_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < ch->nstreams; i++) {
		struct kt_stream *s = &ch->streams[i];
		uint64_t head = __atomic_load_n(&s->ctl->head, __ATOMIC_ACQUIRE);

		st->written += __atomic_load_n(&s->ctl->written, __ATOMIC_RELAXED);
		st->dropped += __atomic_load_n(&s->ctl->dropped, __ATOMIC_RELAXED);
		st->overwritten += __atomic_load_n(&s->ctl->overwritten, __ATOMIC_RELAXED);
		/* An open thread sub-buffer's records are counted at close. */
		if (s->kind == KTRACE_STREAM_THREAD && head &&
		    __atomic_load_n(&s->base, __ATOMIC_ACQUIRE)) {
			struct ktrace_subbuf *sb = kt_subbuf(ch, s, head >> ch->shift);

			if (!(sb->flags & KTRACE_SBF_CLOSED))
				st->written += sb->nrec;
		}
	}
	return 0;
}

/* Unmap @ch's rings, keeping the structure and its control page (kt_channel_retire()). */
static void kt_channel_unmap_rings(struct ktrace_channel *ch)
{
	for (uint32_t i = 0; ch->streams && i < ch->nstreams; i++)
		if (ch->streams[i].base) {
			munmap(ch->streams[i].base, (size_t)ch->buf_size * ch->buf_nr);
			ch->streams[i].base = NULL;
		}
}

/* ktrace_cleanup()'s work; @release frees what the channel holds (under kt_live's lock). */
static void kt_channel_end(struct ktrace_channel *ch, void (*release)(struct ktrace_channel *))
{
	if (kt_default == ch)
		ktrace_set_default(NULL);
	ktrace_stop(ch);
	if (kt_tls.key == ch->key)
		kt_thread_detach();
	pthread_mutex_lock(&ch->lock);
	kt_metadata_write(ch);
	kt_write_state_files(ch);
	pthread_mutex_unlock(&ch->lock);
	if (ch->sess)
		kt_session_chan_state(ch->sess, ch->sess_idx, KT_CHAN_ENDED);
	else
		for (uint32_t i = 0; i < ch->nstreams; i++)
			msync(ch->streams[i].base, (size_t)ch->buf_size * ch->buf_nr, MS_ASYNC);
	kt_live_del(ch, release);
}

void kt_channel_retire(struct ktrace_channel *ch)
{
	if (ch)
		kt_channel_end(ch, kt_channel_unmap_rings);
}

KT_EXPORT void ktrace_cleanup(struct ktrace_channel *ch)
{
	if (ch)
		kt_channel_end(ch, kt_channel_free);
}

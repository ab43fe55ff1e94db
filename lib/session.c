/*
 * lib/session.c - the runtime's side of the session file (lib/session.h):
 * attach to the session named by $KTRACE_SESSION, hand out regions of it
 * (rings, shadow stacks), register channels, wake the consumer.
 *
 * The consumer (`ktrace record`, consumer/consumer.c) creates the file and
 * drains it; this side only allocates and writes.  Allocation is an atomic
 * add on the header's size word, so processes sharing the session (forked
 * children) never take a lock; fallocate() then reserves the pages in
 * /dev/shm so that a full tmpfs is an error here, not a SIGBUS later.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "session.h"

static struct kt_session kt_sess = { .fd = -1 };
static struct kt_session *kt_sess_p;
static pthread_once_t kt_sess_once = PTHREAD_ONCE_INIT;

static void kt_session_attach(void)
{
	const char *path = kt_env(KT_SESSION_ENV);
	struct stat st;
	void *p;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ktrace: %s: cannot open the session: %s (recording to files)\n", path,
			strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < KT_SESSION_DATA_OFF) {
		fprintf(stderr, "ktrace: %s: not a session file of this user (recording to files)\n",
			path);
		close(fd);
		return;
	}
	p = mmap(NULL, KT_SESSION_DATA_OFF, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ktrace: %s: cannot map the session: %s (recording to files)\n", path,
			strerror(errno));
		close(fd);
		return;
	}
	kt_sess.hdr = p;
	if (__atomic_load_n(&kt_sess.hdr->magic, __ATOMIC_ACQUIRE) != KT_SESSION_MAGIC ||
	    kt_sess.hdr->version != KT_SESSION_VERSION) {
		fprintf(stderr, "ktrace: %s: not a ktrace session (version %u; recording to files)\n",
			path, (unsigned)kt_sess.hdr->version);
		munmap(p, KT_SESSION_DATA_OFF);
		close(fd);
		return;
	}
	kt_sess.fd = fd;
	kt_sess.dev = (uint64_t)st.st_dev;
	kt_sess.ino = (uint64_t)st.st_ino;
	if (strlen(path) < sizeof(kt_sess.path))
		memcpy(kt_sess.path, path, strlen(path) + 1);
	kt_sess.chan = (struct kt_session_chan *)((char *)p + KT_SESSION_CHAN_OFF);
	kt_sess.stack = (struct kt_session_stack *)((char *)p + KT_SESSION_STACK_OFF);
	kt_sess_p = &kt_sess;
}

void kt_session_reset(void)
{
	struct stat st;

	if (kt_sess_p) {
		munmap(kt_sess.hdr, KT_SESSION_DATA_OFF);
		/* the descriptor, if it is still the session's (the program may have reused it) */
		if (kt_sess.fd >= 0 && fstat(kt_sess.fd, &st) == 0 &&
		    (uint64_t)st.st_dev == kt_sess.dev && (uint64_t)st.st_ino == kt_sess.ino)
			close(kt_sess.fd);
	}
	memset(&kt_sess, 0, sizeof(kt_sess));
	kt_sess.fd = -1;
	kt_sess_p = NULL;
	kt_sess_once = (pthread_once_t)PTHREAD_ONCE_INIT;
}

struct kt_session *kt_session(void)
{
	pthread_once(&kt_sess_once, kt_session_attach);
	return kt_sess_p;
}

/*
 * The session file's descriptor, checked before each use (slow paths only:
 * ring and stack allocation): a program may close every descriptor it did
 * not open (close_range, a daemon's loop up to 1024) and even get the same
 * number back for a file of its own, which must never be extended or
 * mapped.  If the descriptor is no longer the session's, the file is opened
 * again by its path (the old number is the program's now: never closed
 * here).  Return: the descriptor, or -errno.
 */
static int kt_session_fd(struct kt_session *s)
{
	int fd = __atomic_load_n(&s->fd, __ATOMIC_ACQUIRE), nfd;
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == s->dev &&
	    (uint64_t)st.st_ino == s->ino)
		return fd;
	if (!s->path[0])
		return -EBADF;
	nfd = open(s->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (nfd < 0)
		return -errno;
	if (fstat(nfd, &st) < 0 || (uint64_t)st.st_dev != s->dev || (uint64_t)st.st_ino != s->ino) {
		close(nfd);
		return -ESTALE; /* another file by that name: not the session */
	}
	if (!__atomic_compare_exchange_n(&s->fd, &fd, nfd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		close(nfd); /* another thread opened it again first */
		return fd;
	}
	return nfd;
}

int kt_session_commit(struct kt_session *s, uint64_t off, uint64_t len)
{
	int fd = kt_session_fd(s), err;

	if (fd < 0)
		return fd;
	err = posix_fallocate(fd, (off_t)off, (off_t)len);
	return err ? -err : 0;
}

int kt_session_alloc(struct kt_session *s, uint64_t len, uint64_t commit, uint64_t *off)
{
	uint64_t at;
	int rc;

	len = (len + KT_SESSION_PAGE - 1) & ~(uint64_t)(KT_SESSION_PAGE - 1);
	at = __atomic_fetch_add(&s->hdr->size, len, __ATOMIC_RELAXED);
	if (at < KT_SESSION_DATA_OFF || at + len > KT_SESSION_LIMIT || at + len < at)
		return -ENOSPC;
	if (commit) {
		rc = kt_session_commit(s, at, commit < len ? commit : len);
		if (rc)
			return rc;
	}
	*off = at;
	return 0;
}

void *kt_session_map(struct kt_session *s, uint64_t off, uint64_t len, uint64_t prefault)
{
	int fd = kt_session_fd(s);
	void *p;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	if (prefault > len)
		prefault = len;
	if (prefault && madvise(p, prefault, MADV_POPULATE_WRITE))
		for (uint64_t o = 0; o < prefault; o += KT_SESSION_PAGE)
			((volatile uint8_t *)p)[o] = 0;
	return p;
}

int kt_session_chan_add(struct kt_session *s, const char *dir, uint32_t flags, int kft)
{
	size_t len = strlen(dir);
	uint32_t idx;
	struct kt_session_chan *c;

	if (len >= sizeof(c->dir))
		return -ENAMETOOLONG;
	idx = __atomic_fetch_add(&s->hdr->nchan, 1, __ATOMIC_RELAXED);
	if (idx >= KT_SESSION_NCHAN)
		return -ENOSPC;
	c = &s->chan[idx];
	c->pid = (uint32_t)getpid();
	c->flags = flags;
	c->kft = (uint32_t)kft;
	memcpy(c->dir, dir, len + 1);
	__atomic_store_n(&c->state, KT_CHAN_SETUP, __ATOMIC_RELEASE);
	return (int)idx;
}

void kt_session_chan_state(struct kt_session *s, int idx, uint32_t state)
{
	if (idx >= 0 && (uint32_t)idx < KT_SESSION_NCHAN)
		__atomic_store_n(&s->chan[idx].state, state, __ATOMIC_RELEASE);
	kt_session_wake(s);
}

void kt_session_wake(struct kt_session *s)
{
	__atomic_fetch_add(&s->hdr->wake, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->hdr->sleeping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &s->hdr->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/*
 * Is the session's consumer alive?  Only a consumer that took its lock
 * (KT_SESSION_LOCKED) can be told dead: the kernel drops an OFD lock when
 * the last descriptor of its open file goes, i.e. when the consumer
 * exits or is killed (a zombie holds none, and a reused pid none either).
 * Async-signal-safe.
 */
static int consumer_alive(struct kt_session *s)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	int fd;

	if (!(__atomic_load_n(&s->hdr->flags, __ATOMIC_RELAXED) & KT_SESSION_LOCKED))
		return 1;
	fd = kt_session_fd(s);
	if (fd < 0 || fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return 1; /* cannot tell: the heartbeat decides */
	return fl.l_type != F_UNLCK;
}

int kt_session_wait(struct kt_session *s, const uint64_t *consumed, uint64_t need, uint32_t nr)
{
	uint64_t limit = __atomic_load_n(&s->hdr->block_ns, __ATOMIC_RELAXED), t0, t, beat_t, check_t;
	uint32_t beat = __atomic_load_n(&s->hdr->beat, __ATOMIC_RELAXED);
	long nap = 20000;

	if (!limit || __atomic_load_n(&s->hdr->stalled, __ATOMIC_RELAXED))
		return 0;
	kt_session_wake(s);
	t0 = t = beat_t = check_t = kt_mono_ns();
	while (__atomic_load_n(consumed, __ATOMIC_ACQUIRE) + nr <= need) {
		struct timespec ts = { 0, nap };
		int give_up = limit != KT_BLOCK_LIVE ? t - t0 >= limit
						     : __atomic_load_n(&s->hdr->stalled, __ATOMIC_RELAXED);

		if (limit == KT_BLOCK_LIVE && t - check_t >= 16000000) {
			uint32_t b = __atomic_load_n(&s->hdr->beat, __ATOMIC_RELAXED);

			check_t = t;
			if (b != beat) {
				beat = b;
				beat_t = t;
			}
			give_up = give_up || t - beat_t >= KT_CONSUMER_STUCK_NS || !consumer_alive(s);
		}
		if (give_up) {
			__atomic_store_n(&s->hdr->stalled, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&s->hdr->timeouts, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&s->hdr->waited_ns, t - t0, __ATOMIC_RELAXED);
			return 0;
		}
		nanosleep(&ts, NULL);
		if (nap < 1000000)
			nap *= 2;
		t = kt_mono_ns();
	}
	__atomic_fetch_add(&s->hdr->waits, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->hdr->waited_ns, kt_mono_ns() - t0, __ATOMIC_RELAXED);
	return 1;
}

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
	const char *path = getenv(KT_SESSION_ENV);
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
	kt_sess.chan = (struct kt_session_chan *)((char *)p + KT_SESSION_CHAN_OFF);
	kt_sess.stack = (struct kt_session_stack *)((char *)p + KT_SESSION_STACK_OFF);
	kt_sess_p = &kt_sess;
}

struct kt_session *kt_session(void)
{
	pthread_once(&kt_sess_once, kt_session_attach);
	return kt_sess_p;
}

int kt_session_commit(struct kt_session *s, uint64_t off, uint64_t len)
{
	int err = posix_fallocate(s->fd, (off_t)off, (off_t)len);

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
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, (off_t)off);

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

int kt_session_wait(struct kt_session *s, const uint64_t *consumed, uint64_t need, uint32_t nr)
{
	uint64_t limit = __atomic_load_n(&s->hdr->block_ns, __ATOMIC_RELAXED), t0, t;
	long nap = 20000;

	if (!limit || __atomic_load_n(&s->hdr->stalled, __ATOMIC_RELAXED))
		return 0;
	kt_session_wake(s);
	t0 = t = kt_mono_ns();
	while (__atomic_load_n(consumed, __ATOMIC_ACQUIRE) + nr <= need) {
		struct timespec ts = { 0, nap };

		if (t - t0 >= limit) {
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

/*
 * lib/stream_thread.c - per-thread streams: slot ownership, the slow path
 * of kt_write() (first record, sub-buffer switch, CPU change, buffer full)
 * and thread exit / fork handling.
 *
 * The protocol is described in lib/runtime.h; the fast path is kt_write()
 * there.  Everything here runs at most once per sub-buffer, per CPU
 * migration or per thread, never per record.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "session.h"

__thread struct kt_tls kt_tls __attribute__((tls_model("initial-exec")));
pid_t kt_pid;

static pthread_key_t kt_exit_key;
static pthread_once_t kt_once = PTHREAD_ONCE_INIT;
/*
 * The channels alive in this process.  A thread that exits after its
 * channel was cleaned up must not touch the unmapped slot: thread exit
 * looks its channel up here, under the lock ktrace_cleanup() holds while
 * it unmaps.
 */
static pthread_mutex_t kt_live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ktrace_channel *kt_live[64];

int kt_live_add(struct ktrace_channel *ch)
{
	int rc = -EMFILE;

	pthread_mutex_lock(&kt_live_lock);
	for (int i = 0; i < 64; i++)
		if (!kt_live[i]) {
			kt_live[i] = ch;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&kt_live_lock);
	return rc;
}

/* Remove @ch and run @fn(@ch) under the lock (cleanup unmaps there). */
void kt_live_del(struct ktrace_channel *ch, void (*fn)(struct ktrace_channel *))
{
	pthread_mutex_lock(&kt_live_lock);
	for (int i = 0; i < 64; i++)
		if (kt_live[i] == ch)
			kt_live[i] = NULL;
	fn(ch);
	pthread_mutex_unlock(&kt_live_lock);
}

static int kt_is_live(const struct ktrace_channel *ch, uint64_t key)
{
	for (int i = 0; i < 64; i++)
		if (kt_live[i] == ch && ch->key == key)
			return 1;
	return 0;
}

static void kt_tls_reset(struct kt_tls *t)
{
	unsigned depth = t->depth;

	memset(t, 0, sizeof(*t));
	t->depth = depth;
}

/*
 * Initialise a sub-buffer header.  The magic is cleared first and stored
 * last (release), so a reader, a crash, or a shared-stream writer that
 * checks "magic set and seq == mine" never sees the new sequence number
 * with the old contents.
 *
 * Shared streams (@flags has KTRACE_SBF_CTX): `used` is left alone.  It
 * belongs to whoever closes the sub-buffer, which may happen before this
 * initialisation finishes (lib/stream_shared.c); readers tell a closed
 * shared sub-buffer by its commit count, not by its flags.
 */
void kt_open_subbuf(struct ktrace_subbuf *sb, uint32_t index, uint64_t seq, uint32_t tid,
		    unsigned flags, const uint64_t *pair)
{
	uint64_t raw, ns;

	/*
	 * Atomics, as shared-stream writers read these concurrently.  Release
	 * stores keep "magic = 0" ahead of each field (free on x86, and
	 * expressible without a fence, which gcc's TSan does not support).
	 */
	__atomic_store_n(&sb->magic, 0, __ATOMIC_RELAXED);
	if (!(flags & KTRACE_SBF_CTX))
		__atomic_store_n(&sb->used, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sb->nrec, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sb->lost, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sb->last_ts, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sb->seq, seq, __ATOMIC_RELEASE);
	if (pair) {
		raw = pair[0];
		ns = pair[1];
	} else {
		kt_calib_pair(&raw, &ns);
	}
	__atomic_store_n(&sb->first_ts, raw, __ATOMIC_RELEASE);
	sb->first_ns = ns;
	sb->tid = tid;
	sb->cpu = (uint16_t)kt_cpu_slow();
	sb->stream = (uint16_t)index;
	sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	__atomic_store_n(&sb->flags, (uint16_t)flags, __ATOMIC_RELAXED);
	__atomic_store_n(&sb->magic, KTRACE_SUBBUF_MAGIC, __ATOMIC_RELEASE);
}

/*
 * Records in a complete sub-buffer (flight-mode overwrite accounting).  The
 * caller may lose the race to reuse it and discard the count, so another
 * writer may be writing here meanwhile: loads are relaxed atomics.
 */
uint64_t kt_count_records(const struct ktrace_subbuf *sb, uint32_t used)
{
	const uint8_t *p = (const uint8_t *)sb + KTRACE_SUBBUF_HDR_SIZE;
	const uint8_t *end = p + (used < 1u << 30 ? used : 0);
	size_t ctx = (__atomic_load_n(&sb->flags, __ATOMIC_RELAXED) & KTRACE_SBF_CTX) ? 8 : 0;
	uint64_t n = 0;

	while (p + 8 <= end) {
		uint64_t h = __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);

		if (!KTRACE_REC_CLASS(h) && !KTRACE_REC_IS_RESERVED(h))
			break;
		p += 8 + ctx + 8 * (size_t)KTRACE_REC_WORDS(h);
		n += KTRACE_REC_CLASS(h) && KTRACE_REC_CLASS(h) != KTRACE_CLASS_INTERNAL;
	}
	return n;
}

static void kt_close_current(struct kt_tls *t)
{
	if (!t->started)
		return;
	__atomic_fetch_or(&t->sb->flags, KTRACE_SBF_CLOSED, __ATOMIC_RELAXED);
	__atomic_store_n(&t->st->ctl->written, t->st->ctl->written + t->nrec, __ATOMIC_RELAXED);
	t->nrec = 0;
	t->started = 0;
}

/*
 * Open the thread's next sub-buffer (the first, the next in the ring, or
 * the oldest in flight mode).  Return: 0, -ENOSPC when a discard-mode
 * stream is exhausted (t->full is set, t->sb stays the last sub-buffer),
 * or -ENOBUFS when a streamed ring is full because the consumer has not
 * copied the slot yet: the current sub-buffer then stays open, with the
 * cursor at its end so that every record comes back here until the
 * consumer catches up (the drops are counted in its `lost`).
 */
static int kt_thread_switch(struct ktrace_channel *ch, struct kt_tls *t, uint64_t ts)
{
	struct kt_stream *st = t->st;
	struct ktrace_subbuf *sb;
	uint64_t nseq = t->started ? t->seq + 1 : t->seq;

	if (kt_streaming(ch) &&
	    nseq >= __atomic_load_n(&st->ctl->consumed, __ATOMIC_ACQUIRE) + ch->buf_nr) {
		/*
		 * The ring is full: the consumer is behind.  Wait for it (for
		 * at most the session's block_ns, once per episode: a thread
		 * already dropping does not wait again until the ring frees),
		 * else drop.  The first time, wake it.
		 */
		if (t->dropping || !kt_session_wait(ch->sess, &st->ctl->consumed, nseq, ch->buf_nr)) {
			if (!t->dropping)
				kt_session_wake(ch->sess);
			t->dropping = 1;
			if (t->started)
				t->pos = t->end;
			return -ENOBUFS;
		}
	}
	t->dropping = 0;
	if (ch->sess && kt_ring_ready(ch, st, (uint32_t)(nseq % ch->buf_nr)) < 0) {
		if (t->started)
			t->pos = t->end; /* /dev/shm is full: drop until it is not */
		return -ENOBUFS;
	}
	kt_close_current(t);
	if (!ch->sess && !(ch->flags & KTRACE_FLIGHT_CHANNEL) && nseq >= ch->buf_nr) {
		t->full = 1;
		t->pos = t->end = NULL;
		return -ENOSPC;
	}
	sb = kt_subbuf(ch, st, nseq);
	if (nseq >= ch->buf_nr && sb->magic == KTRACE_SUBBUF_MAGIC)
		__atomic_store_n(&st->ctl->overwritten, st->ctl->overwritten + sb->nrec,
				 __ATOMIC_RELAXED);
	kt_open_subbuf(sb, st->index, nseq, t->tid, 0, NULL);
	__atomic_store_n(&st->ctl->head, (nseq << ch->shift) | KTRACE_SUBBUF_HDR_SIZE,
			 __ATOMIC_RELEASE);
	t->sb = sb;
	t->seq = nseq;
	t->started = 1;
	t->nrec = 0;
	t->base = sb->first_ts;
	t->pos = (uint8_t *)sb + KTRACE_SUBBUF_HDR_SIZE;
	t->end = (uint8_t *)sb + ch->buf_size;
	t->cpu = kt_cpu();
	/*
	 * Sub-buffer nseq - 1 is ready.  Wake the consumer when half the ring
	 * is: it then writes them in one request (large direct writes are
	 * several times faster than one per sub-buffer), and the other half
	 * is left to absorb its latency.  It also looks every 20 ms by itself.
	 */
	if (kt_streaming(ch) &&
	    nseq - __atomic_load_n(&st->ctl->consumed, __ATOMIC_RELAXED) >= (ch->buf_nr + 1) / 2)
		kt_session_wake(ch->sess);
	return 0;
}

/* Give the calling thread's slot back (thread exit, channel change). */
void kt_thread_detach(void)
{
	struct kt_tls *t = &kt_tls;

	if (!t->key)
		return;
	if (t->st) {
		pthread_mutex_lock(&kt_live_lock);
		if (kt_is_live(t->ch, t->key)) {
			int was_open = t->started;

			kt_close_current(t);
			__atomic_store_n(&t->st->ctl->owner, 0, __ATOMIC_RELEASE);
			if (was_open && kt_streaming(t->ch))
				kt_session_wake(t->ch->sess);
		}
		pthread_mutex_unlock(&kt_live_lock);
	}
	kt_tls_reset(t);
}

void kt_thread_forget(void)
{
	kt_tls_reset(&kt_tls);
}

static void kt_exit_destructor(void *arg)
{
	(void)arg;
	kt_thread_detach();
}

/* fork(): the child must not write to the parent's slot. */
static void kt_atfork_child(void)
{
	__atomic_store_n(&kt_pid, getpid(), __ATOMIC_RELAXED);
	pthread_mutex_init(&kt_live_lock, NULL);
	kt_tls_reset(&kt_tls);
}

static void kt_atexit(void)
{
	kt_thread_detach();
}

static void kt_init_once(void)
{
	kt_pid = getpid();
	pthread_key_create(&kt_exit_key, kt_exit_destructor);
	pthread_atfork(NULL, NULL, kt_atfork_child);
	atexit(kt_atexit);
}

void kt_thread_init(void)
{
	pthread_once(&kt_once, kt_init_once);
}

/* First record of this thread in @ch: claim a free slot, if any. */
static void kt_thread_attach(struct kt_tls *t, struct ktrace_channel *ch)
{
	uint32_t tid;

	if (t->key)
		kt_thread_detach();
	tid = kt_gettid();
	t->key = ch->key;
	t->cpu_id = kt_cpu_ptr();
	t->ch = ch;
	t->tid = tid;
	pthread_setspecific(kt_exit_key, (void *)1);
	for (uint32_t i = 0; i < ch->nthreads; i++) {
		struct kt_stream *s = &ch->streams[i];
		uint32_t free_owner = 0;

		if (__atomic_load_n(&s->ctl->owner, __ATOMIC_RELAXED) != 0)
			continue;
		if (__atomic_compare_exchange_n(&s->ctl->owner, &free_owner, tid, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			uint64_t head = __atomic_load_n(&s->ctl->head, __ATOMIC_ACQUIRE);

			if (ch->sess && kt_stream_map(ch, s) < 0) {
				/* No ring for it (session or /dev/shm full): the shared stream. */
				__atomic_store_n(&s->ctl->owner, 0, __ATOMIC_RELEASE);
				break;
			}
			s->ctl->pid = (uint32_t)getpid();
			t->st = s;
			t->seq = head ? (head >> ch->shift) + 1 : 0;
			break;
		}
	}
	kt_append_thread(ch, tid);
}

int kt_write_slow(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
		  const uint64_t *payload, unsigned words, unsigned depth)
{
	struct kt_tls *t = &kt_tls;
	size_t len = 8 + 8 * (size_t)words;
	unsigned cpu;
	int rc;

	if (depth > 0)
		return kt_shared_write(ch, ts, cls, id, payload, words, depth);
	if (t->key != ch->key)
		kt_thread_attach(t, ch);
	if (!t->st)
		return kt_shared_write(ch, ts, cls, id, payload, words, 0);
	if (t->full) {
		rc = -ENOSPC;
		goto drop;
	}

	cpu = kt_cpu();
	if (!t->started || t->pos + len + (cpu != t->cpu ? 16 : 0) > t->end ||
	    ts - t->base + KTRACE_TS_WINDOW >= 2 * KTRACE_TS_WINDOW) {
		rc = kt_thread_switch(ch, t, ts);
		if (rc < 0)
			goto drop;
	} else if (cpu != t->cpu) {
		uint64_t w = (uint64_t)cpu | ((uint64_t)t->tid << 32);

		kt_put(t, ts, KTRACE_CLASS_INTERNAL, KTRACE_INT_CPU, &w, 1);
		t->cpu = cpu;
	}
	kt_put(t, ts, cls, id, payload, words);
	return 0;

drop:
	__atomic_store_n(&t->st->ctl->dropped, t->st->ctl->dropped + 1, __ATOMIC_RELAXED);
	if (t->sb)
		t->sb->lost++;
	return rc;
}

/*
 * consumer/unfinished.c - the end of a session: the calls that were open
 * in threads that died (crash, SIGKILL, threads still inside calls when
 * exit() ended them) written as unfinished calls, and the channels of dead
 * processes marked stopped.
 *
 * Every function-tracer thread under a consumer keeps its shadow stack in
 * the session file (lib/kft_shadow.c), listed with its tid and pid.  A
 * thread that ends normally reports its open calls itself and frees its
 * entry; an entry still in use when its process is gone belongs to a
 * thread that died with the calls on its stack.  Those frames (from the
 * bottom up to the first popped one, whose `sp` is 0) are handed to the
 * KFT engine as the thread itself would have at its end
 * (kft_unfinished(): the run's window, funclist and ints filters,
 * logentries), counted in the thread's own counter block, and the
 * approved ones are written as CALL records flagged unfinished, each with
 * the thread's id in its context word, in one sub-buffer appended to the
 * channel's shared stream file (docs/FORMAT.md, "Function call records").
 * Their duration runs to the moment the run stopped (a normal exit stops
 * it) or, for a run still running, to the consumer's clock when it saw
 * the program end.  `ktrace record -p` does the same for the live threads
 * of a process it detaches from (kc_detached()), while they are stopped:
 * their open calls are written as unfinished, ending at the detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer/internal.h"
#include "lib/kft_rt.h"
#include "lib/runtime.h"


/* DIR/kft of channel @c, mapped read-write (NULL if it has none). */
static struct kft_file *map_kft(struct kc_chan *c, size_t *len)
{
	struct stat st;
	struct kft_file *f;
	void *p;
	int fd = openat(c->dirfd, KFT_FILE_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof(struct kft_file)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	f = p;
	if (f->magic != KFT_FILE_MAGIC || f->nblocks > 65536 ||
	    (uint64_t)f->run_off + sizeof(struct kft_run) > (uint64_t)st.st_size ||
	    (uint64_t)f->blocks_off + (uint64_t)f->nblocks * sizeof(struct kft_counters) >
		    (uint64_t)st.st_size ||
	    (uint64_t)f->owners_off + (uint64_t)f->nblocks * 4 > (uint64_t)st.st_size) {
		munmap(p, (size_t)st.st_size);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return f;
}

#define KFT_RUN(f) ((struct kft_run *)((char *)(f) + (f)->run_off))
#define KFT_BLOCKS(f) ((struct kft_counters *)((char *)(f) + (f)->blocks_off))
#define KFT_OWNERS(f) ((uint32_t *)((char *)(f) + (f)->owners_off))

/* The counter block of thread @tid (it never released it), or a free one. */
static struct kft_counters *thread_block(struct kft_file *f, uint32_t tid,
					 struct kft_counters *spare)
{
	uint32_t *own = KFT_OWNERS(f);

	for (uint32_t i = 0; i < f->nblocks; i++)
		if (__atomic_load_n(&own[i], __ATOMIC_ACQUIRE) == tid)
			return &KFT_BLOCKS(f)[i];
	for (uint32_t i = 0; i < f->nblocks; i++) {
		uint32_t free_ = 0;

		if (__atomic_compare_exchange_n(&own[i], &free_, tid ? tid : 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return &KFT_BLOCKS(f)[i];
	}
	return spare;
}

struct unf_buf {
	uint8_t *p;
	size_t len, cap;
	unsigned n;
};

static int buf_put(struct unf_buf *b, const uint64_t *w, unsigned nw)
{
	size_t need = b->len + 8 * (size_t)nw;

	if (need > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 65536;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, w, 8 * (size_t)nw);
	b->len += 8 * (size_t)nw;
	return 0;
}

/*
 * Append the records @recs (@len bytes, each with a context word) to the
 * shared stream of @c, in sub-buffers of at most buf_size bytes stamped
 * @raw (and @ns, CLOCK_MONOTONIC).
 */
static int append_records(struct kc_session *s, struct kc_chan *c, const uint8_t *recs, size_t len,
			  uint64_t raw, uint64_t ns)
{
	unsigned i = c->nstreams - 1;
	struct kc_stream *k = &c->st[i];
	size_t room = c->bs - KTRACE_SUBBUF_HDR_SIZE, off = 0;
	uint8_t *sb = malloc(c->bs);

	if (!sb) {
		for (uint64_t hw; off < len; off += 16 + 8 * (size_t)KTRACE_REC_WORDS(hw)) {
			memcpy(&hw, recs + off, 8);
			k->unwritten++; /* counted, not lost silently */
		}
		return -1;
	}
	while (off < len) {
		struct ktrace_subbuf h;
		size_t used = 0;
		unsigned n = 0;
		uint64_t hw;

		/* whole records: a context word, header, payload */
		while (off + used < len) {
			size_t rl;

			memcpy(&hw, recs + off + used, 8);
			rl = 16 + 8 * (size_t)KTRACE_REC_WORDS(hw);
			if (used + rl > room)
				break;
			used += rl;
			n++;
		}
		memset(&h, 0, sizeof(h));
		h.magic = KTRACE_SUBBUF_MAGIC;
		h.hdr_size = KTRACE_SUBBUF_HDR_SIZE;
		h.flags = KTRACE_SBF_CTX | KTRACE_SBF_CLOSED;
		h.seq = k->next_seq;
		h.first_ts = raw;
		h.first_ns = ns;
		h.last_ts = raw;
		h.used = (uint32_t)used;
		h.nrec = n;
		h.cpu = 0xffff;
		h.stream = (uint16_t)i;
		memcpy(sb, &h, sizeof(h));
		memcpy(sb + sizeof(h), recs + off, used);
		if (kc_append(s, c, i, sb, sizeof(h) + used) < 0) {
			/* kc_append() counted this sub-buffer's records as not
			 * written; the ones after it are not written either */
			for (off += used; off < len; off += 16 + 8 * (size_t)KTRACE_REC_WORDS(hw)) {
				memcpy(&hw, recs + off, 8);
				k->unwritten++;
			}
			free(sb);
			return -1;
		}
		k->next_seq++;
		off += used;
	}
	free(sb);
	return 0;
}

/* The open frames of dead stack entry @e, reported through the engine. */
static int report_stack(struct kc_session *s, struct kt_session_stack *e, uint64_t dead_raw)
{
	struct kc_chan *c;
	struct kft_file *f;
	struct kft_run *run;
	struct kft_thread kt;
	struct kft_counters spare;
	struct unf_buf b = { 0 };
	const struct kft_frame *fr;
	size_t kft_len = 0, map_len;
	uint64_t now = dead_raw, cap = e->cap;
	unsigned state, n = 0;
	int mode, rc = 0;
	void *map;

	if (e->chan >= KT_SESSION_NCHAN || kc_chan_open(s, e->chan) < 0 || !e->off ||
	    cap > e->max || e->max > KT_STACK_MAX)
		return 0;
	c = &s->chans[e->chan];
	if (c->state != 1 || !(f = map_kft(c, &kft_len)))
		return 0;
	map_len = 4096 + (size_t)cap * sizeof(struct kft_frame);
	map = mmap(NULL, map_len, PROT_READ, MAP_SHARED, s->fd, (off_t)e->off);
	if (map == MAP_FAILED) {
		munmap(f, kft_len);
		return 0;
	}
	fr = (const struct kft_frame *)((const char *)map + 4096);
	while (n < cap && fr[n].sp)
		n++;

	run = KFT_RUN(f);
	memset(&kt, 0, sizeof(kt));
	memset(&spare, 0, sizeof(spare));
	kt.c = thread_block(f, e->tid, &spare);
	kft_thread_sync(run, &kt, now);
	state = KFT_EPOCH_STATE(kt.epoch);
	if (state == KFT_STATE_RUNNING) {
		mode = KFT_UNF_SKIP;
	} else if (state == KFT_STATE_STOPPED && run->run_stop >= run->run_start && run->run_start) {
		/* The run was stopped (a normal exit stops it) before this thread saw it. */
		mode = KFT_UNF_FLUSH;
		kt.flush_from = run->run_start;
		kt.flush_until = run->run_stop;
		if (run->run_stop < now)
			now = run->run_stop;
	} else {
		n = 0;
		mode = 0;
	}
	for (unsigned i = n; i-- > 0;) {
		struct kft_frame fc = fr[i];
		uint64_t w[6];
		unsigned words, res;

		if (fc.t > now || (fc.flags & KFT_FRAME_DONE))
			continue; /* entered after the run's end, or reported by the thread at the stop */
		res = kft_unfinished(run, &kt, fc.fn, fc.t, KFT_FRAME_SIG(&fc), fc.flags, mode, now);
		if (!res)
			continue;
		words = kft_call_words(&fc, i, res, now, w + 2);
		w[0] = KTRACE_REC_HDR(now, KTRACE_CLASS_CALL, words, KTRACE_CALL_ID(fc.idx));
		w[1] = KTRACE_CTX(e->tid, 0xffff, KFT_FRAME_SIG(&fc));
		if (buf_put(&b, w, 2 + words) < 0) {
			rc = -1;
			break;
		}
		b.n++;
	}
	if (b.n && append_records(s, c, b.p, b.len, now, kc_ns(s, now)) < 0)
		rc = -1;
	if (!rc)
		s->stats.unfinished += b.n;
	free(b.p);
	munmap(map, map_len);
	munmap(f, kft_len);
	return rc;
}

/* Mark channel @c of a dead process stopped: control state, text mirrors, KFT run, status. */
static void stop_dead(struct kc_session *s, struct kc_chan *c, uint64_t now, uint64_t now_ns)
{
	struct kft_file *f;
	size_t kft_len = 0;
	char text[32];
	uint64_t dropped = 0;

	if (__atomic_load_n(&c->ctl->state, __ATOMIC_ACQUIRE) == KTRACE_STATE_RUNNING) {
		c->ctl->stop_ns = now_ns;
		__atomic_store_n(&c->ctl->state, KTRACE_STATE_STOPPED, __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < c->nstreams; i++)
			dropped += c->sctl[i].dropped;
		kc_write_text(s, c, "state", "stop\n");
		snprintf(text, sizeof(text), "%llu\n", (unsigned long long)dropped);
		kc_write_text(s, c, "dropped", text);
	}
	f = map_kft(c, &kft_len);
	if (!f)
		return;
	{
		struct kft_run *run = KFT_RUN(f);
		static char buf[65536];
		size_t n;

		kft_stop(run, KFT_REASON_END, 0, now);
		n = kft_status_text(f, run, KFT_BLOCKS(f), buf, sizeof(buf));
		buf[n] = 0;
		kc_write_text(s, c, KFT_STATUS_NAME, buf);
	}
	munmap(f, kft_len);
}

void kc_kft_unwritten(struct kc_session *s, struct kc_chan *c, uint64_t n)
{
	struct kft_file *f;
	size_t kft_len = 0;

	if (!n || !(f = map_kft(c, &kft_len)))
		return;
	if (f->nblocks) {
		/* the sums over the blocks are what the status shows (mod 2^64) */
		struct kft_counters *b = KFT_BLOCKS(f);
		static char buf[65536];
		size_t len;

		__atomic_fetch_sub(&b[0].kept, n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&b[0].lost, n, __ATOMIC_RELAXED);
		len = kft_status_text(f, KFT_RUN(f), b, buf, sizeof(buf));
		buf[len] = 0;
		kc_write_text(s, c, KFT_STATUS_NAME, buf);
	}
	munmap(f, kft_len);
}

/* The shadow stacks still in use, of dead processes (or all of them, @all), reported. */
static void report_stacks(struct kc_session *s, uint64_t now, int all)
{
	uint32_t nstack = __atomic_load_n(&s->hdr->nstack, __ATOMIC_ACQUIRE);

	for (uint32_t j = 0; j < nstack && j < KT_SESSION_NSTACK; j++) {
		struct kt_session_stack *e = &s->stack[j];

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != KT_STACK_USED ||
		    (!all && kt_pid_alive(e->pid)))
			continue;
		report_stack(s, e, now);
		__atomic_store_n(&e->state, KT_STACK_FREE, __ATOMIC_RELEASE);
	}
}

int kc_detached(struct kc_session *s, uint64_t now)
{
	unsigned errors = s->stats.errors;
	uint64_t before = s->stats.unfinished;

	kc_drain(s, 1);
	report_stacks(s, now ? now : kt_clock(), 1);
	s->stats.detach_unfinished += s->stats.unfinished - before;
	s->stats.unfinished = before;
	return s->stats.errors != errors ? -1 : 0;
}

int kc_finish(struct kc_session *s, uint64_t now)
{
	uint32_t nchan = __atomic_load_n(&s->hdr->nchan, __ATOMIC_ACQUIRE);
	unsigned errors = s->stats.errors;
	uint64_t ns;

	if (!now)
		now = kt_clock();
	ns = kc_ns(s, now);
	report_stacks(s, now, 0);
	for (uint32_t idx = 0; idx < nchan && idx < KT_SESSION_NCHAN; idx++) {
		struct kc_chan *c = &s->chans[idx];

		if (c->state == 1 && !kt_pid_alive(s->chan[idx].pid))
			stop_dead(s, c, now, ns);
	}
	kc_chans_done(s);
	return s->stats.errors != errors ? -1 : 0;
}

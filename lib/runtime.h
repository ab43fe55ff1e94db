/*
 * lib/runtime.h - internals of libktrace shared by the files of lib/ (not installed).
 *
 * The writer protocol
 * ===================
 *
 * This comment is the one place where the protocol is explained; the files
 * that implement it (channel.c, stream_thread.c, stream_shared.c,
 * session.c, and on the consumer's side consumer/consumer.c) refer here.
 *
 * Streams and rings.  A channel owns N+1 streams: N thread streams (slots)
 * and one shared stream (with KTRACE_GLOBAL_CHANNEL, only the shared
 * stream).  Each stream is a ring of buf_nr sub-buffers of buf_size bytes;
 * sub-buffer number seq lives in ring slot seq % buf_nr.  Where the ring
 * lives depends on who reads it:
 *
 *   - on its own (ktrace_setup() in a program not under a consumer): the
 *     ring is the file DIR/traceN, allocated in full and pre-faulted at
 *     setup, mapped MAP_SHARED, so a committed record is in the page cache
 *     at once and survives the death of the process ("fixed" layout);
 *
 *   - streamed (under `ktrace record`, $KTRACE_SESSION): the ring is a
 *     region of the session file in /dev/shm (lib/session.h), allocated
 *     for a thread stream when a thread first claims it and one slot ahead
 *     of the writer as it goes (kt_ring_ready()), for the shared stream at
 *     its first record.  The consumer copies each complete sub-buffer to
 *     DIR/traceN ("slots" layout) and then advances the stream's
 *     `consumed` in the control file; a writer may reopen ring slot s of
 *     sequence number seq only when seq < consumed + buf_nr.  The session
 *     outlives the program, so committed records survive its death too.
 *
 * Thread streams: lock-free by ownership.  A thread claims a free slot with
 * one compare-and-swap on the slot's owner word (first record of the
 * thread), and from then on is the only writer of that stream, so writing a
 * record is plain stores: the record's words, then the sub-buffer header's
 * nrec and last_ts, then `used` with release order (the commit).  The write
 * cursor lives in thread-local storage (struct kt_tls).  Opening the next
 * sub-buffer flags the old one CLOSED and publishes the new head (release):
 * from then on the old one is final and the consumer may copy it.  A
 * thread releases its slot when it exits (pthread key destructor) or at
 * exit(), closing its sub-buffer; the next owner continues the stream in a
 * new one.
 *
 * Signal handlers.  Each logging call increments the thread's nesting depth
 * on entry and restores it on return; a signal handler interrupting the
 * call sees depth > 0.  The increment need not be atomic: a handler always
 * returns the depth to the value it found, so the interrupted
 * read-modify-write stores the right value.  A handler at depth > 0 does not
 * touch the interrupted thread stream: it writes to the shared stream, whose
 * reservation is a compare-and-swap and therefore re-entrant.  So neither
 * record is torn or lost (lost only if the shared stream itself is full).
 *
 * Shared stream: reserve/commit as in LTTng's and relay's lock-free
 * buffers.  head = (seq << log2(buf_size)) | offset, advanced by CAS.
 *
 *   reserve   load head; read the clock (ordered: lfence; rdtsc; lfence,
 *             kt_clock_ordered()); CAS head to head + len.  A CAS that
 *             succeeds had no other reservation between its load and
 *             itself, so stamps follow the order of the stream.  A CALL
 *             record's duration is stretched to that stamp (its exit).
 *   switch    the writer whose CAS moves head into sub-buffer seq + 1
 *             takes a (raw, CLOCK_MONOTONIC) pair first; the raw value is
 *             its record's stamp and the new sub-buffer's first_ts, so no
 *             record of this lap is stamped below first_ts (the header
 *             says so: KTRACE_SBF_ORDERED) and anything older in the slot
 *             is left over from an earlier lap.  It then closes seq (stores
 *             `used`, adds the unused tail to seq's commit count as
 *             padding) and initialises the new header, leaving `used`
 *             (the closer's) alone: the two never write the same field.
 *   write     store a reservation marker first (KTRACE_REC_RESERVED: the
 *             record's length and the writer's tid), then the context word
 *             (tid, cpu, signal depth) and payload, then the real header
 *             with release order;
 *   commit    add len to the slot's cumulative `commit` (release).  Slot s
 *             of lap L is complete when commit == (L + 1) * (buf_size - 64)
 *             (mod 2^32).
 *
 * A complete slot may be reused (flight mode) or copied (streamed).  A
 * writer preempted inside its record delays that; a writer that died
 * there (SIGKILL of its process) would delay it for good.  In flight
 * mode, a writer that needs the slot looks (every 1 ms) at the torn
 * records' markers: if no thread named there lives, it takes the slot
 * back (sets its commit count complete; the markers stay, and readers
 * skip torn records by their length and count them lost); a torn record
 * without a marker (its writer died between its CAS and its first store)
 * makes the slot wait 1 s, and only once a process that wrote to the
 * stream has died (the control file lists them): while all live, every
 * torn record's writer is alive and will finish.  A writer stalled past
 * that finds its lap's commit count already full when it resumes and
 * drops its record instead of writing into the next lap.  Until a slot
 * comes back, records are dropped and counted.
 *
 * Full rings.  Discard mode on its own: when a stream has used all buf_nr
 * sub-buffers the writer stores nothing more and counts drops in the
 * stream's `dropped` counter (control file) and the last sub-buffer's
 * `lost`.  Flight mode: the oldest sub-buffer is reopened with the next
 * sequence number and its records are added to `overwritten`.  Streamed:
 * the writer waits for the consumer, polling `consumed` for at most the
 * session's block_ns (kt_session_wait(); by default as long as the
 * consumer holds its lock on the session file and its heartbeat moves),
 * then drops and counts; its current sub-buffer stays open (its `lost`
 * grows) until the ring frees.
 * The consumer is woken (futex on the session's wake word, only if it
 * sleeps) when half a ring is ready, when a ring is full, and at each
 * shared sub-buffer switch.
 *
 * Time: records hold 40 bits of the raw clock; a writer opens a new
 * sub-buffer when a record would lie KTRACE_TS_WINDOW or more away from the
 * sub-buffer's first_ts (either side), and on the way takes a (raw,
 * CLOCK_MONOTONIC) calibration pair for the header.
 */
#ifndef KTRACE_LIB_RUNTIME_H
#define KTRACE_LIB_RUNTIME_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>
#include <sys/types.h>

#include <ktrace/ktrace.h>

/*
 * libktrace's own heap (lib/util.c): glibc's allocator itself
 * (__libc_malloc and the rest), never the program's.  A program may define
 * malloc/free (a bump allocator, one that counts its calls, one that is
 * broken where the program never calls it) and must see none of
 * libktrace's allocations; libc's own (open_memstream, fdopendir, the
 * demangler's) still go to the program's malloc and are given back with
 * free().  Memory from these goes back through kt_free() only.  ASan builds
 * use malloc, so that ASan checks libktrace's heap too.  Thread-safe as
 * malloc; not async-signal-safe.
 */
void *kt_malloc(size_t n);
void *kt_calloc(size_t n, size_t size);
void *kt_realloc(void *p, size_t n);
void kt_free(void *p);
char *kt_strdup(const char *s);
/*
 * kt_setenv() - setenv(@name, @value, 1) without the program's malloc
 * (setenv(3) allocates through it): the "NAME=VALUE" string and, for a new
 * variable, a longer copy of the environ array come from kt_malloc() and
 * are never freed (a few per process image).  Not thread-safe, as
 * setenv(3).  Return: 0 or -ENOMEM.
 */
int kt_setenv(const char *name, const char *value);
/*
 * kt_env() - the runtime's getenv(): the value of @name in the settings
 * kt_env_use() installed (a process libktrace was loaded into by `ktrace
 * record -p`, lib/kft_attach.h: its environment is not ours to read or
 * change), else getenv(@name).  NULL if unset.
 * kt_env_use() - @text ("NAME=VALUE\0"... ended by an empty string,
 * copied; NULL: back to the environment).  Return: 0 or -ENOMEM.  Neither is thread-safe.
 */
const char *kt_env(const char *name);
/*
 * kt_channel_retire() - ktrace_cleanup() for a channel some thread may
 * still hold a pointer to (a process `ktrace record -p` detaches from,
 * lib/kft_attach.c): stopped, its files written, its session slot ended
 * and its rings unmapped, but the structure and its control page (whose
 * state says STOPPED to any late writer) stay.  Not thread-safe with
 * writers of @ch: call when none is inside a write.
 * kt_session_reset() - forget the session (unmap, close): the next
 * kt_session() opens the one kt_env() names then.  Same condition.
 */
void kt_channel_retire(struct ktrace_channel *ch);
void kt_session_reset(void);
int kt_env_use(const char *text);

/*
 * A text built in memory from kt_malloc() (open_memstream() would take the
 * program's malloc): kt_outf() appends printf-style; on failure @oom is set
 * and later calls do nothing.  @buf is NUL-terminated once anything was
 * written; give it back with kt_free().  Not thread-safe (one owner).
 */
struct kt_out {
	char *buf;
	size_t len, cap;
	int oom;
};
void kt_outf(struct kt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define KT_EXPORT __attribute__((visibility("default")))
#define KT_LIKELY(x) __builtin_expect(!!(x), 1)
#define KT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KT_BARRIER() __asm__ __volatile__("" ::: "memory")

/* One stream as seen by this process. */
struct kt_stream {
	uint8_t *base;                /* mapping of traceN, or of the stream's ring in the
				       * session (NULL until this process maps it) */
	struct ktrace_stream_ctl *ctl; /* its entry in the control file */
	uint32_t index;
	uint32_t kind; /* enum ktrace_stream_kind */
	uint32_t ready; /* streamed: ring slots [0, ready) allocated and pre-faulted here */
};

struct kt_event {
	struct ktrace_event_desc d; /* strings owned (strdup) */
};

struct kt_session;

/* A channel (struct ktrace_channel is opaque in the public header). */
struct ktrace_channel {
	uint64_t key; /* unique per channel in this process, never reused */
	struct kt_session *sess; /* streamed: rings in the session file (lib/session.h) */
	int sess_idx;            /* its entry in the session's channel table */
	struct ktrace_control *ctl;
	uint8_t *enable; /* the control file's enable map */
	size_t ctl_len;
	uint32_t buf_size, buf_nr, shift, flags;
	uint32_t nthreads; /* thread slots: streams[0 .. nthreads-1] */
	uint32_t nstreams; /* nthreads + 1 (the shared stream is last) */
	struct kt_stream *streams;
	char *root, *name, *dir;

	/* Not on the hot path: catalogue, calibration, metadata. */
	pthread_mutex_t lock;
	char *funcs[256];
	struct kt_event *events;
	size_t nevents;
	uint64_t calib[32][2]; /* (raw, mono ns) pairs; [0],[1] from setup */
	unsigned ncalib;
	pid_t pid;
	pid_t writer_pid; /* this process is in the control file's writers table (stream_shared.c) */
	uint64_t created_ns, realtime_ns;
	/* what DIR/state and DIR/dropped hold (kt_write_state_files() rewrites a changed one only) */
	int state_file;        /* -1 none yet, else kt_running() when written */
	uint64_t dropped_file; /* valid once state_file >= 0 */
};

/* Per-thread writer state for the thread's current channel. */
struct kt_tls {
	uint64_t key;          /* key of the channel this state belongs to, 0 = none */
	uint8_t *pos, *end;    /* write cursor and end of the current sub-buffer */
	struct ktrace_subbuf *sb;
	uint64_t base;         /* sb->first_ts */
	uint32_t cpu;          /* CPU of the last record */
	uint32_t nrec;         /* records in sb */
	unsigned depth;        /* nesting of logging calls (signal handlers) */
	uint32_t tid;
	const uint32_t *cpu_id; /* kt_cpu()'s source, set with key (kt_cpu_ptr()) */
	struct ktrace_channel *ch;
	struct kt_stream *st;  /* the claimed slot, NULL = use the shared stream */
	uint64_t seq;          /* seq of sb */
	int started;           /* sb is valid */
	int full;              /* discard mode: stream exhausted */
	int dropping;          /* streamed: the ring is full and waiting did not help */
};

extern __thread struct kt_tls kt_tls __attribute__((tls_model("initial-exec")));
/* getpid() of this process, kept up to date across fork (stream_thread.c). */
extern pid_t kt_pid;
extern struct ktrace_channel *kt_default;

/* clock.c */
uint64_t kt_clock(void);                /* raw clock (TSC or mono ns) */
uint64_t kt_mono_ns(void);              /* CLOCK_MONOTONIC in ns */
uint64_t kt_realtime_ns(void);
void kt_calib_pair(uint64_t *raw, uint64_t *ns); /* a tight (raw, ns) pair */
const char *kt_clock_name(void);        /* "tsc" or "mono" */
unsigned kt_cpu_slow(void);             /* sched_getcpu(), or 0xffff */
uint32_t kt_gettid(void);
/* Does process or thread @pid exist (kill(pid, 0): EPERM means it does)?
 * 0 for pid 0.  Async-signal-safe; errno may change. */
int kt_pid_alive(uint32_t pid);

/*
 * kt_cpu() - the CPU the calling thread runs on, from the rseq area glibc
 * registers for every thread (one TLS load), or ~0u without rseq.  May be
 * stale by the time it returns (the thread can migrate); async-signal-safe.
 * kt_cpu_ptr() is where it reads it: the calling thread's own address.
 */
static inline const uint32_t *kt_cpu_ptr(void)
{
	static const uint32_t none = ~0u;

	if (!__rseq_size)
		return &none;
	return &((const struct rseq *)((const char *)__builtin_thread_pointer() + __rseq_offset))
			->cpu_id;
}

static inline unsigned kt_cpu(void)
{
	return __atomic_load_n(kt_cpu_ptr(), __ATOMIC_RELAXED);
}

/*
 * kt_clock_ordered() - kt_clock() read in program order: neither before
 * the loads that precede it nor after the stores that follow it (rdtsc
 * alone is not ordered: measured here, 1.7 us of stamps out of order
 * between two CPUs without the fences).  The shared stream's
 * reservation reads its stamps with it, so that stamps follow the order
 * of the stream.  A few ns more than kt_clock().
 */
static inline uint64_t kt_clock_ordered(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return kt_clock();
#endif
}

/* util.c */
void kt_seterr(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kt_write_file(const char *dir, const char *name, const char *text);
void kt_append_thread(struct ktrace_channel *ch, uint32_t tid);

/* metadata.c */
int kt_metadata_write(struct ktrace_channel *ch);
void kt_add_calib(struct ktrace_channel *ch);

/* stream_thread.c */
int kt_write_slow(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
		  const uint64_t *payload, unsigned words, unsigned depth);
void kt_thread_detach(void);
/*
 * kt_thread_forget() - drop the calling thread's writer state without
 * giving its slot back: a vfork() child, whose state is its parent's
 * (lib/kft_hooks.c), claims a slot of its own at its first record.
 */
void kt_thread_forget(void);
int kt_live_add(struct ktrace_channel *ch);
void kt_live_del(struct ktrace_channel *ch, void (*fn)(struct ktrace_channel *));
void kt_thread_init(void);
/* @pair: the (raw, ns) pair for first_ts/first_ns, or NULL to take one now. */
void kt_open_subbuf(struct ktrace_subbuf *sb, uint32_t index, uint64_t seq, uint32_t tid,
		    unsigned flags, const uint64_t *pair);
uint64_t kt_count_records(const struct ktrace_subbuf *sb, uint32_t used);

/* stream_shared.c */
int kt_shared_write(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
		    const uint64_t *payload, unsigned words, unsigned depth);

/* channel.c */
struct kt_stream *kt_shared_stream(struct ktrace_channel *ch);
int kt_stream_map(struct ktrace_channel *ch, struct kt_stream *s);
int kt_ring_ready(struct ktrace_channel *ch, struct kt_stream *s, uint32_t slot);
/*
 * kt_prepare_dir() - make @dir a trace directory of ours: created, or an
 * empty one or an old trace (removed) that this user owns, never a link
 * (lib/safefile.h); with @prepared, one the consumer made: kept as it is.
 * Return: 0 or -errno (ktrace_error() set).
 */
int kt_prepare_dir(const char *dir, int prepared);

/* Flags of kt_setup(). */
#define KT_SETUP_PREPARED 0x1u /* the directory was prepared by the consumer: keep what is there */
struct ktrace_channel *kt_setup(const struct ktrace_options *o, unsigned flags);

/* A streamed, non-flight channel: the consumer copies sub-buffers as they fill. */
static inline int kt_streaming(const struct ktrace_channel *ch)
{
	return ch->sess && !(ch->flags & KTRACE_FLIGHT_CHANNEL);
}

static inline struct ktrace_subbuf *kt_subbuf(const struct ktrace_channel *ch,
					      const struct kt_stream *st, uint64_t seq)
{
	return (struct ktrace_subbuf *)(st->base + (size_t)(seq % ch->buf_nr) * ch->buf_size);
}

/*
 * kt_put() - append one record at the thread's cursor and commit it: the
 * record's words, then nrec and last_ts, then `used` with release order.
 * The caller has checked that it fits.  INTERNAL records are not counted.
 */
static inline void kt_put(struct kt_tls *t, uint64_t ts, unsigned cls, unsigned id,
			  const uint64_t *payload, unsigned words)
{
	uint64_t *r = (uint64_t *)t->pos;
	struct ktrace_subbuf *sb = t->sb;

	r[0] = KTRACE_REC_HDR(ts, cls, words, id);
	for (unsigned i = 0; i < words; i++)
		r[1 + i] = payload[i];
	t->pos += 8 + 8 * (size_t)words;
	if (cls != KTRACE_CLASS_INTERNAL)
		sb->nrec = ++t->nrec;
	sb->last_ts = ts;
	__atomic_store_n(&sb->used, (uint32_t)(t->pos - (uint8_t *)sb - KTRACE_SUBBUF_HDR_SIZE),
			 __ATOMIC_RELEASE);
}

/*
 * kt_fits() - may a record of @len bytes stamped @ts go into the calling
 * thread's current sub-buffer as it is: the thread's state belongs to @ch,
 * the record fits, @ts is within the sub-buffer's timestamp window, and
 * the thread still runs on the sub-buffer's CPU.
 */
static inline int kt_fits(const struct kt_tls *t, const struct ktrace_channel *ch, uint64_t ts,
			  size_t len)
{
	return t->key == ch->key && t->pos + len <= t->end &&
	       ts - t->base + KTRACE_TS_WINDOW < 2 * KTRACE_TS_WINDOW &&
	       __atomic_load_n(t->cpu_id, __ATOMIC_RELAXED) == t->cpu;
}

/*
 * kt_put_fast() - kt_write()'s fast path alone, for hooks that keep calls
 * off their own fast path: store the record and return 1 if the calling
 * thread is not inside another write and kt_fits(); otherwise write
 * nothing and return 0 (use kt_write() then).  Same safety as kt_write():
 * the nesting depth is raised before kt_fits() looks at the cursor, so a
 * signal handler that writes in between goes to the shared stream instead
 * of moving the cursor under the check.
 */
static inline int kt_put_fast(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
			      const uint64_t *payload, unsigned words)
{
	struct kt_tls *t = &kt_tls;
	int ok;

	if (KT_UNLIKELY(t->depth))
		return 0;
	t->depth = 1;
	KT_BARRIER();
	ok = kt_fits(t, ch, ts, 8 + 8 * (size_t)words);
	if (KT_LIKELY(ok))
		kt_put(t, ts, cls, id, payload, words);
	KT_BARRIER();
	t->depth = 0;
	return ok;
}

/**
 * kt_write() - write one record of @words payload words to @ch from the
 * calling thread; the hot path of every producer (static events, KFT).
 * @ts:      raw clock (kt_clock()) to stamp the record with; must not go
 *           backwards within a thread.
 * @cls, @id: record class and id (format.h).
 * @payload: @words 64-bit words (at most KTRACE_MAX_WORDS).
 *
 * Lock-free, async-signal-safe, no syscall and no allocation on the fast
 * path (a thread's first record claims a slot; a sub-buffer switch reads
 * CLOCK_MONOTONIC through the vDSO).
 * Return: 0 stored, -ENOSPC dropped (counted), -EAGAIN channel stopped.
 */
static inline int kt_write(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
			   const uint64_t *payload, unsigned words)
{
	struct kt_tls *t = &kt_tls;
	unsigned depth = t->depth++;
	size_t len = 8 + 8 * (size_t)words;
	int rc = 0;

	KT_BARRIER();
	if (KT_LIKELY(depth == 0 && kt_fits(t, ch, ts, len))) {
		kt_put(t, ts, cls, id, payload, words);
	} else {
		rc = kt_write_slow(ch, ts, cls, id, payload, words, depth);
	}
	KT_BARRIER();
	t->depth = depth;
	return rc;
}

static inline int kt_running(const struct ktrace_channel *ch)
{
	return __atomic_load_n(&ch->ctl->state, __ATOMIC_RELAXED) == KTRACE_STATE_RUNNING;
}

#endif

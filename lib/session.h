/*
 * lib/session.h - the session file: shared memory between traced programs
 * and the consumer that streams their records to disk (`ktrace record`).
 *
 * Under `ktrace record` the rings of sub-buffers do not live in the trace
 * directory's files but in one shared-memory file, the session, created by
 * the consumer (the `ktrace record` process) in /dev/shm with an
 * unpredictable name and mode 0600, and named to the program by the
 * environment variable KTRACE_SESSION.  Every process of the run (the
 * program, its forked children, exec()ed images) maps it; the consumer
 * maps it too and moves each full sub-buffer to the trace directory as it
 * fills (consumer/consumer.c).  Memory therefore stays bounded: a ring is
 * reused as soon as the consumer has copied it.  docs/FORMAT.md, "The
 * session file", is the prose version of this header; the writer protocol
 * over these rings is explained in lib/runtime.h.
 *
 * Layout (offsets in bytes, host byte order, the machine's page size 4096):
 *
 *   0                     struct kt_session_hdr (one page)
 *   KT_SESSION_CHAN_OFF   KT_SESSION_NCHAN struct kt_session_chan (4 KiB each)
 *   KT_SESSION_STACK_OFF  KT_SESSION_NSTACK struct kt_session_stack (64 B each)
 *   KT_SESSION_DATA_OFF   regions handed out by kt_session_alloc(): rings of
 *                         sub-buffers (a channel stream each) and shadow
 *                         stacks of the function tracer (a thread each)
 *
 * Nothing is allocated for a thread that never traces: a thread stream's
 * ring is allocated when a thread first claims that stream, a shadow stack
 * when a thread first enters a traced function, and a region is reused by
 * the next thread once its owner has exited.  Regions are allocated in the
 * file (fallocate) and pre-faulted before use, so a full /dev/shm is an
 * error at allocation, never a SIGBUS in the program.
 *
 * The file outlives every process that maps it until the consumer unlinks
 * it at the end of a run, so records committed to a ring survive the death
 * of the program (SIGKILL included), and what a dead consumer had not
 * drained can be recovered (`ktrace read --recover DIR`).
 */
#ifndef KTRACE_LIB_SESSION_H
#define KTRACE_LIB_SESSION_H

#include <stdint.h>

#define KT_SESSION_ENV "KTRACE_SESSION"
#define KT_SESSION_MAGIC 0x5353544bu /* "KTSS" */
#define KT_SESSION_VERSION 1u
#define KT_SESSION_PAGE 4096u

#define KT_SESSION_NCHAN 1024u   /* channels (trace directories) per session */
#define KT_SESSION_NSTACK 16384u /* shadow stacks (tracing threads at once) */
#define KT_SESSION_CHAN_OFF ((uint64_t)KT_SESSION_PAGE)
#define KT_SESSION_STACK_OFF (KT_SESSION_CHAN_OFF + (uint64_t)KT_SESSION_NCHAN * 4096u)
#define KT_SESSION_DATA_OFF (KT_SESSION_STACK_OFF + (uint64_t)KT_SESSION_NSTACK * 64u)
#define KT_SESSION_LIMIT (1ull << 40) /* the file never grows beyond 1 TiB */

/* kt_session_hdr.flags */
#define KT_SESSION_FLIGHT 0x1u /* flight recorder: the consumer drains at the end only */
#define KT_SESSION_LOCKED 0x2u /* the consumer holds an OFD lock on the file's byte 0 while it lives */

/* block_ns: wait as long as the consumer lives and is not stuck (the default) */
#define KT_BLOCK_LIVE UINT64_MAX
/* a live consumer whose heartbeat has not moved for this long is stuck (ns) */
#define KT_CONSUMER_STUCK_NS 5000000000ull

/**
 * struct kt_session_hdr - page 0 of the session file.
 * @magic, @version, @hdr_size: KT_SESSION_MAGIC, KT_SESSION_VERSION, 4096.
 * @consumer:  pid of the consumer that created the file.
 * @flags:     KT_SESSION_*.
 * @size:      bytes of the file handed out so far (atomic add; page multiple).
 * @wake:      futex word: a writer increments it after it closed a
 *             sub-buffer (made one available to the consumer) and
 *             FUTEX_WAKEs the consumer if @sleeping.
 * @sleeping:  nonzero while the consumer waits on @wake.
 * @nchan:     channel entries handed out (the consumer scans [0, nchan)).
 * @nstack:    shadow-stack entries handed out.
 * @start_ns:  CLOCK_MONOTONIC when the consumer created the session.
 * @start_raw: the trace clock (kt_clock()) read with @start_ns, a
 *             calibration pair: a channel set up at least 1 ms later
 *             takes its rate from this pair and its own (lib/channel.c),
 *             without waiting 2 ms for a second pair of its own.
 * @block_ns:  how long a writer that finds its ring full waits for the
 *             consumer before it drops records (0: it drops at once;
 *             KT_BLOCK_LIVE, the default: as long as the consumer lives,
 *             i.e. holds its lock (KT_SESSION_LOCKED), and its @beat
 *             moved in the last KT_CONSUMER_STUCK_NS); set by the
 *             consumer (`ktrace record --block-timeout`).
 * @waited_ns, @waits: time writers spent waiting for the consumer, and how
 *             many times they had to (atomic adds; reported at the end).
 * @timeouts:  waits that ended with the ring still full (records dropped).
 * @stalled:   set by a writer whose wait timed out, or by the consumer
 *             while a stream's file cannot be written (a full disk: it
 *             stops copying that stream); cleared by the consumer when it
 *             copies something and no stream is left uncopied: while set,
 *             writers drop at once (a dead consumer costs one timeout, not
 *             one per record).
 * @beat:      the consumer's heartbeat: incremented at every pass over
 *             the rings (at least every 20 ms while it consumes).
 * @dir:       the trace directory of `ktrace record -o` (NUL-terminated).
 */
struct kt_session_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t hdr_size;
	uint32_t consumer;
	uint32_t flags;
	uint64_t size;
	uint32_t wake;
	uint32_t sleeping;
	uint32_t nchan;
	uint32_t nstack;
	uint64_t start_ns;
	uint64_t block_ns;
	uint64_t waited_ns;
	uint64_t waits;
	uint64_t timeouts;
	uint32_t stalled;
	uint32_t beat;
	uint64_t start_raw;
	uint64_t reserved[4];
	char dir[3968];
};

_Static_assert(sizeof(struct kt_session_hdr) == 4096, "session header is one page");

/* kt_session_chan.state */
enum kt_chan_state {
	KT_CHAN_FREE = 0,    /* unused (entries are claimed in order, never freed) */
	KT_CHAN_SETUP = 1,   /* claimed; dir not complete yet */
	KT_CHAN_LIVE = 2,    /* the consumer may open dir/control and drain it */
	KT_CHAN_ENDED = 3,   /* ktrace_cleanup() ran: the consumer drains it a last time */
	KT_CHAN_DRAINED = 4, /* the consumer copied everything; nothing to do */
};

/**
 * struct kt_session_chan - one channel of the session (4096 bytes).
 * @state:  enum kt_chan_state (release store; the consumer loads acquire).
 * @pid:    process that set the channel up.
 * @flags:  its KTRACE_*_CHANNEL flags.
 * @kft:    1 if it is a function-tracer run (DIR/kft and DIR/callsites).
 * @callsites: offset of the function tracer's call-site table in the
 *          session (0: none, or it is DIR/callsites): a struct
 *          ktrace_callsites and its entries, which the consumer writes to
 *          DIR/callsites when the program has ended.
 * @dir:    absolute path of its trace directory (holds `control`, where
 *          each stream's ring offset and consumer position are).
 */
struct kt_session_chan {
	uint32_t state;
	uint32_t pid;
	uint32_t flags;
	uint32_t kft;
	uint64_t callsites;
	uint64_t reserved[1];
	char dir[4064];
};

_Static_assert(sizeof(struct kt_session_chan) == 4096, "session channel entry is 4 KiB");

/* kt_session_stack.state */
enum kt_stack_state {
	KT_STACK_FREE = 0, /* may be claimed (its region, if any, is reused) */
	KT_STACK_USED = 1, /* a live thread's shadow stack */
};

/**
 * struct kt_session_stack - a function-tracer thread's shadow stack (64 B).
 * @state: enum kt_stack_state, claimed by compare-and-swap.
 * @tid, @pid: the owning thread and its process.
 * @chan:  the channel entry of the run the thread traces into.
 * @off:   offset of the region: one page whose last 48 bytes are the
 *         sentinel frame, then the frames (struct kft_frame, 48 bytes).
 * @cap:   frames the region has allocated (grows by KT_STACK_CHUNK).
 * @max:   frames the region has room for.
 *
 * The frames of a live call have a nonzero `sp`; the hooks clear `sp`
 * when they pop a frame, so after the process died the open calls are the
 * frames from 0 up to the first with sp == 0 (consumer/consumer.c reports
 * them as unfinished).
 */
struct kt_session_stack {
	uint32_t state;
	uint32_t tid;
	uint32_t pid;
	uint32_t chan;
	uint64_t off;
	uint64_t cap;
	uint64_t max;
	uint64_t reserved[3];
};

_Static_assert(sizeof(struct kt_session_stack) == 64, "session stack entry is 64 bytes");

#define KT_STACK_CHUNK 8192u    /* frames allocated at a time (384 KiB) */
#define KT_STACK_MAX (1u << 20) /* frames per thread at most (48 MiB) */

/* ---- the runtime's side (lib/session.c) -------------------------------- */

/** struct kt_session - this process's view of its session. */
struct kt_session {
	int fd;                       /* the session file; see kt_session_fd() */
	uint64_t dev, ino;            /* its identity: the program may close or reuse fd */
	char path[256];               /* $KTRACE_SESSION, to open it again */
	struct kt_session_hdr *hdr;   /* header + tables, mapped shared */
	struct kt_session_chan *chan; /* KT_SESSION_NCHAN entries */
	struct kt_session_stack *stack; /* KT_SESSION_NSTACK entries */
};

/**
 * kt_session() - the session this process records into, attached on first
 * use from $KTRACE_SESSION (opened without following links, and only if
 * this user owns it); NULL when the program does not run under a consumer.
 * Not async-signal-safe on its first call (channel setup calls it first).
 */
struct kt_session *kt_session(void);

/**
 * kt_session_alloc() - hand out @len bytes (a page multiple) of the file
 * and allocate the first @commit of them (fallocate), so that touching
 * them cannot SIGBUS.  Lock-free (atomic add on hdr->size); regions are
 * never returned to the file.
 * Return: 0 with *@off set, -ENOSPC (session or /dev/shm full), -errno.
 */
int kt_session_alloc(struct kt_session *s, uint64_t len, uint64_t commit, uint64_t *off);

/**
 * kt_session_commit() - allocate bytes [@off, @off + @len) of a region
 * handed out earlier.  Return: 0 or -errno (ENOSPC: /dev/shm is full).
 */
int kt_session_commit(struct kt_session *s, uint64_t off, uint64_t len);

/**
 * kt_session_map() - map bytes [@off, @off + @len) of the file shared,
 * read-write, and pre-fault the first @prefault bytes for writing.
 * Return: the address, or NULL with errno set.
 */
void *kt_session_map(struct kt_session *s, uint64_t off, uint64_t len, uint64_t prefault);

/**
 * kt_session_chan_add() - register a channel whose trace directory is
 * @dir (absolute; the consumer opens @dir/control once the entry is LIVE).
 * Return: the entry index, or -ENOSPC (table full) / -ENAMETOOLONG.
 */
int kt_session_chan_add(struct kt_session *s, const char *dir, uint32_t flags, int kft);

/** kt_session_chan_state() - publish entry @idx's new state (enum kt_chan_state). */
void kt_session_chan_state(struct kt_session *s, int idx, uint32_t state);

/**
 * kt_session_wait() - a writer found the ring whose consumer position is
 * at @consumed full: wait until it moves past @need - buf_nr (i.e.
 * *@consumed + @nr > @need), polling with growing sleeps (20 us to 1 ms),
 * for at most hdr->block_ns (KT_BLOCK_LIVE: while the consumer lives and
 * is not stuck; checked every 16 ms with fcntl(F_OFD_GETLK) on the
 * session file and the heartbeat).  Async-signal-safe (nanosleep, fcntl).
 * Return: 1 the slot is free now, 0 it is not (the caller drops).
 */
int kt_session_wait(struct kt_session *s, const uint64_t *consumed, uint64_t need, uint32_t nr);

/**
 * kt_session_wake() - tell the consumer a sub-buffer was closed: one
 * atomic add on a shared word, and a FUTEX_WAKE only if the consumer
 * sleeps.  Async-signal-safe; called once per sub-buffer, never per record.
 */
void kt_session_wake(struct kt_session *s);

#endif

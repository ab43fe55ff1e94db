/*
 * consumer/consumer.h - the consumer of a session: moves the records that
 * traced programs write into shared-memory rings (lib/session.h) to their
 * trace directories, as LTTng's consumer daemon and uftrace's recorder do.
 *
 * `ktrace record` creates a session (kc_create()), starts the program with
 * $KTRACE_SESSION naming it, and calls kc_drain() whenever kc_wait()
 * returns, until the program has ended; then kc_drain(final = 1) copies
 * what is left in the rings (the open sub-buffers too, so every record
 * committed before a crash or SIGKILL is kept), kc_finish() writes the
 * calls that were still open in dead threads as unfinished, and
 * kc_close() removes the session file.  `ktrace read --recover DIR` does
 * the same with kc_open() on the session a dead consumer left behind
 * (DIR/session names it).
 *
 * Output: each stream of each channel becomes DIR/traceN (the channel's
 * trace directory), sub-buffers appended in sequence order ("packed"
 * layout, docs/FORMAT.md), each `hdr_size + used` bytes with the CLOSED
 * flag set.  A sub-buffer is copied once it is complete (a thread stream's
 * writer moved on; a shared stream's commit count is full), then the
 * stream's `consumed` position in DIR/control advances and the writers
 * may reuse its ring slot.  Writes use pwritev() from the ring straight
 * into the page cache (one copy); docs/PERFORMANCE.md has its cost.
 *
 * Thread safety: one thread drives a kc_session.  Errors are reported on
 * stderr as one line "ktrace CMD: FILE: what" and counted (a stream file
 * that cannot be written is reported once per session); a stream whose
 * file cannot be written stops being consumed, so its writers drop (and
 * count) records instead of losing them silently, and the records its ring
 * still holds at the end are counted too (kc_stats()'s @unwritten, added to
 * the stream's `dropped` counter).  On a full disk the newest slots written
 * make room for the call-site table and the text files (counted the same
 * way).  DIR/metadata gets a `stream-written` line per stream file.
 */
#ifndef KTRACE_CONSUMER_H
#define KTRACE_CONSUMER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct kc_session;

/**
 * struct kc_loss - records a writer dropped because the consumer was
 * behind (or a ring could not be allocated), in one stream.
 * @dir:        trace directory of the channel.
 * @stream:     the stream (N of traceN).
 * @count:      records dropped.
 * @from_ns, @to_ns: CLOCK_MONOTONIC ns between which they were dropped
 *              (the last kept record before, the first kept after; @to_ns
 *              0 if nothing was kept after).
 */
struct kc_loss {
	const char *dir;
	unsigned stream;
	uint64_t count;
	uint64_t from_ns, to_ns;
};

/**
 * struct kc_stats - what a consumer did.
 * @subbufs, @bytes: sub-buffers copied and bytes written (headers included).
 * @records:    records in them (not counting the runtime's internal ones).
 * @dropped:    records the writers dropped (sum of the streams' counters).
 * @overwritten: records lost to flight-recorder overwrite.
 * @unfinished: open calls of dead threads written as unfinished.
 * @detach_unfinished: open calls of live threads at a detach (kc_detached()),
 *              written as unfinished (not in @unfinished).
 * @waited_ns, @waits, @timeouts: how long writers waited for the consumer
 *              (kc_set_block()), how often, how often in vain.
 * @channels:   trace directories written.
 * @errors:     files that could not be written.
 * @unwritten:  of @dropped, records the writers committed but the consumer
 *              could not write (a full disk); added to their streams'
 *              `dropped` counters, so readers count them too.
 * @noring:    of @dropped, records of streams that never got a ring (the
 *              runtime could not allocate or map it): not the consumer's delay.
 * @werr, @werr_dir, @werr_stream: the first stream file that could not be
 *              written: errno (0: none), trace directory, stream.
 * @losses, @nlosses: the drop ranges (at most 64 kept; @nlosses counts all).
 */
struct kc_stats {
	uint64_t subbufs, bytes, records, dropped, overwritten, unfinished, unwritten, noring;
	uint64_t raw_bytes; /* what the written sub-buffers take as slots (bytes: bs each) */
	uint64_t detach_unfinished;
	int werr;
	const char *werr_dir;
	unsigned werr_stream;
	uint64_t waited_ns, waits, timeouts;
	unsigned channels, errors;
	const struct kc_loss *losses;
	unsigned nlosses;
};

/**
 * kc_create() - create a session for a run whose trace directory is @dir
 * (absolute): /dev/shm/ktrace-UID-XXXXXX (mkostemp: unpredictable name,
 * O_EXCL, mode 0600; $TMPDIR when /dev/shm is missing), header written,
 * and DIR/session naming it (for kc_open() after a crash of the consumer);
 * kc_hold() taken, so writers whose ring is full wait while it lives.
 * @flight: the channels are flight recorders; copy only at the end.
 * @cmd:    the command name for messages ("record").
 * Return: the session, or NULL with a one-line reason in @err.
 */
struct kc_session *kc_create(const char *dir, int flight, const char *cmd, char *err, size_t len);

/**
 * kc_open() - attach to the session a consumer left behind: @path is
 * read from DIR/session.  The file must be a regular file owned by this
 * user (not a link).  Return: the session, or NULL with @err set.
 */
struct kc_session *kc_open(const char *dir, const char *cmd, char *err, size_t len);

/**
 * kc_hold() - become the consumer writers wait for: an OFD write lock on
 * byte 0 of the session file, held until this process closes the file or
 * dies (kernel-dropped, so a killed consumer never hangs the program: its
 * writers see the lock gone within 16 ms and drop, counted; lib/session.c).
 * Return: 0, or -errno from fcntl(F_OFD_SETLK) (-EAGAIN: another consumer
 * holds it).
 */
int kc_hold(struct kc_session *s);

/** kc_path() - the session file's path (for $KTRACE_SESSION). */
const char *kc_path(const struct kc_session *s);

/**
 * kc_drain() - copy every complete sub-buffer of every channel to its
 * trace directory; with @final also the open ones and the partly
 * committed ones (the writers are gone), after which the channels are
 * done.  Return: sub-buffers copied (0: nothing to do now).
 */
uint64_t kc_drain(struct kc_session *s, int final);

/**
 * kc_wait() - sleep until a writer closes a sub-buffer or @timeout_ms
 * passes (FUTEX_WAIT on the session's wake word; writers FUTEX_WAKE only
 * when the consumer sleeps).  Returns at once if a sub-buffer was closed
 * since the last kc_drain() began.
 */
void kc_wait(struct kc_session *s, int timeout_ms);

/**
 * kc_kick() - end a kc_wait() now, or make the next one return at once
 * (bumps the wake word and wakes it).  For a SIGCHLD handler: a signal
 * that lands between kc_consume()'s test and its sleep would otherwise
 * leave the consumer asleep for the whole timeout.  Async-signal-safe.
 */
void kc_kick(struct kc_session *s);

/**
 * kc_consume() - the consumer's loop: kc_drain() whenever a writer closes
 * a sub-buffer (kc_wait(), at least every 20 ms) until @done(@arg)
 * returns nonzero (the program ended).  The final drain is the caller's.
 */
void kc_consume(struct kc_session *s, int (*done)(void *arg), void *arg);

/**
 * kc_report() - print what the consumer did on stderr, each line prefixed
 * "ktrace CMD: ": records and bytes written, its own CPU time and peak
 * memory (resident, shared rings included), records dropped and the time
 * ranges they were dropped in, calls reported unfinished.
 */
void kc_report(struct kc_session *s, const char *cmd);

/**
 * kc_alive() - number of processes of the session still running (the
 * processes that set channels up or trace threads), for kc_open() users
 * who must wait for the program before the final drain.
 */
unsigned kc_alive(struct kc_session *s);

/**
 * kc_finish() - after kc_drain(s, 1), when every writer is gone: for each
 * thread of a function-tracer run that died without reporting its open
 * calls (crash, SIGKILL, a thread still inside calls at exit()), write
 * those calls as unfinished CALL records (the KFT engine decides which,
 * as for a thread that ends) stamped @now (raw clock) or, for a run
 * already stopped, its stop time; then mark runs and channels whose
 * process died as stopped (state, dropped, kft-status files).
 * Return: 0, or -1 if something could not be written (reported).
 */
int kc_finish(struct kc_session *s, uint64_t now);

/**
 * struct kc_snapshot - what kc_snapshot() wrote.
 * @n:        the N of the dump directories "CHANDIR.dump-N".
 * @channels: channels dumped (each to its own directory).
 * @subbufs, @records, @bytes: sub-buffers written (records in them, not
 *            counting the runtime's internal ones; bytes, headers included).
 * @skipped:  sub-buffers left out because a writer was reusing them while
 *            they were copied (their records are overwritten anyway).
 * @overwritten: records the flight recorders had overwritten before the
 *            dump (the streams' counters), so not in it.
 * @dir:      the first channel's dump directory (absolute).
 */
struct kc_snapshot {
	unsigned n, channels;
	uint64_t subbufs, records, bytes, skipped, overwritten;
	char dir[PATH_MAX];
};

/**
 * kc_snapshot() - the flight recorder's dump (seed 003) while the program
 * runs: copy what the rings of every flight-recorder channel of the
 * session hold now into a new trace directory beside the channel's,
 * CHANDIR.dump-N (N the first number free for all of them, mode 0700),
 * that every reader opens as it would the trace at the end: the newest
 * sub-buffers of each stream, the call-site table, metadata (with a
 * calibration pair and `stream-written` lines), control, kft and the
 * other text files as they are now.  The writers are neither stopped nor
 * slowed: each sub-buffer is copied, then its header is read again, and a
 * copy whose sequence number changed meanwhile (the writer reused the
 * slot) is left out (@out->skipped); a shared stream's sub-buffer is
 * copied only when every reservation in it is committed.  Calls still
 * open are not in a dump (the function tracer writes a call when it
 * returns).  Any number of dumps may be taken, by the consumer
 * (`ktrace record`, SIGUSR2) or by another process that kc_open()ed the
 * session (`ktrace ctl DIR dump`); neither changes the session.
 * Return: 0 and *@out; -EINVAL the session records no flight-recorder
 * channel (its trace directories are the trace: nothing to dump);
 * -ENOENT no channel is live; another -errno after a one-line message
 * (the directory of the failing channel is removed).
 */
int kc_snapshot(struct kc_session *s, struct kc_snapshot *out);

/**
 * kc_detached() - `ktrace record -p` detaching: the run is stopped and
 * every thread of the process is stopped outside libktrace (nothing
 * writes), so this is the final drain (kc_drain(s, 1)), and the calls
 * open in every thread's shadow stack, live threads included, are
 * written as unfinished as kc_finish() writes a dead thread's (those the
 * thread reported itself at the stop are skipped).  The caller then
 * retires the run, drains once more and calls kc_finish().
 * Return: 0, or -1 if something could not be written (reported).
 */
int kc_detached(struct kc_session *s, uint64_t now);

/** kc_stats() - the counts so far (valid until kc_close()). */
const struct kc_stats *kc_stats(struct kc_session *s);

/**
 * kc_close() - unmap and close everything; with @remove, unlink the
 * session file and DIR/session (a normal end leaves nothing in /dev/shm).
 */
void kc_close(struct kc_session *s, int remove);

/**
 * kc_set_block() - how long a writer that finds its ring full waits for
 * the consumer before dropping records: @ns nanoseconds per episode (0:
 * never wait; KT_BLOCK_LIVE, lib/session.h: while this consumer lives and
 * copies, see kc_hold()).  A writer whose wait runs out drops records, and writers
 * stop waiting until the consumer copies something again.
 */
void kc_set_block(struct kc_session *s, uint64_t ns);

/**
 * kc_set_compress() - with @on, write the sub-buffers in compressed frames
 * (include/ktrace/format.h, struct ktrace_zframe): each batch of up to 16
 * ready sub-buffers of a stream becomes one frame, each sub-buffer split
 * into columns and compressed with zstd at @level (KZ_LEVEL_MIN..
 * KZ_LEVEL_MAX, reader/zframe.h), on the consumer's thread; without:
 * slots of buf-size bytes.  A session created or opened (kc_create(),
 * kc_open(): `read --recover`) writes frames at level 1 until told
 * otherwise.  A file a dead consumer began gets the new units after its
 * own: readers take both kinds in one file.
 */
void kc_set_compress(struct kc_session *s, int on, int level);

/** kc_set_throttle() - testing aid: sleep @us microseconds after each sub-buffer copied. */
void kc_set_throttle(struct kc_session *s, unsigned us);

#endif

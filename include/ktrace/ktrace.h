/* SPDX-License-Identifier: MIT */
/*
 * ktrace/ktrace.h - the application API of libktrace.
 *
 * Two layers:
 *
 *  1. Channels (seed 003, "a generic tracing API"): ktrace_setup() creates a
 *     trace directory root/name with pre-allocated, MAP_SHARED stream files;
 *     ktrace_start()/ktrace_stop() switch it on and off; ktrace_cleanup()
 *     finalises it.  Per-thread streams (the default) or one global stream
 *     (KTRACE_GLOBAL_CHANNEL); discard mode (the default: a full stream stops
 *     storing and counts `dropped`) or flight-recorder mode
 *     (KTRACE_FLIGHT_CHANNEL: the oldest sub-buffer is overwritten).
 *
 *  2. Static events (seed 000, klog's ktrace): ktrace_log2() and
 *     ktrace_log4() write one record to the default channel.  Each 16-bit
 *     event id (function id << 8 | event code) can be enabled or disabled at
 *     run time; a disabled event costs one load and one predictable branch.
 *
 * Thread safety: every function may be called from any thread.  The logging
 * functions are also async-signal-safe: a signal handler that logs while the
 * interrupted code is in the middle of logging corrupts and loses neither
 * record.  The channel management functions (setup, start, stop, cleanup,
 * catalogue) are not async-signal-safe.
 *
 * Crash safety: a record is committed when the logging call returns; from
 * then on it is in the page cache of a file in the trace directory and
 * survives kill -9, SIGSEGV or abort() of the process.
 *
 * Errors: functions returning int return 0 or a negative errno; functions
 * returning a pointer return NULL and set errno.  ktrace_error() returns a
 * one-line message naming the file and the operation that failed.
 */
#ifndef KTRACE_KTRACE_H
#define KTRACE_KTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <ktrace/format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seed 003's flag names are the format's (see ktrace/format.h):
 * KTRACE_GLOBAL_CHANNEL, KTRACE_FLIGHT_CHANNEL, KTRACE_DISABLE_STATE. */

/* Defaults used when ktrace_setup() is given 0 for a size. */
#define KTRACE_DEFAULT_BUF_SIZE (64u * 1024u) /* bytes per sub-buffer */
#define KTRACE_DEFAULT_BUF_NR 16u             /* sub-buffers per stream */
#define KTRACE_MIN_BUF_SIZE 4096u
#define KTRACE_MAX_BUF_SIZE (64u * 1024u * 1024u)

struct ktrace_channel;

/**
 * struct ktrace_options - everything ktrace_setup_opts() can set.
 * @root:     parent directory of the trace (created if missing, mode 0700).
 * @name:     trace directory name inside @root (created, mode 0700; an
 *            existing trace directory of the same name is replaced).
 * @buf_size: bytes per sub-buffer, a power of two in
 *            [KTRACE_MIN_BUF_SIZE, KTRACE_MAX_BUF_SIZE]; 0 = default.
 * @buf_nr:   sub-buffers per stream, >= 2; 0 = default.
 * @flags:    KTRACE_GLOBAL_CHANNEL | KTRACE_FLIGHT_CHANNEL |
 *            KTRACE_DISABLE_STATE.
 * @nthreads: number of per-thread stream slots (ignored with
 *            KTRACE_GLOBAL_CHANNEL); 0 = 2 x online CPUs, at least 4.
 *            A thread that finds no free slot writes to the shared stream.
 * @start:    nonzero: start tracing at once (as if ktrace_start()).
 */
struct ktrace_options {
	const char *root;
	const char *name;
	uint32_t buf_size;
	uint32_t buf_nr;
	uint32_t flags;
	uint32_t nthreads;
	int start;
};

/**
 * ktrace_setup() - create a channel and its trace directory root/name.
 * @root:     parent directory (seed 003: the debugfs root directory name).
 * @name:     channel/trace directory name.
 * @buf_size: bytes per sub-buffer (power of two, 4 KiB..64 MiB; 0 = 64 KiB).
 * @buf_nr:   sub-buffers per stream (>= 2; 0 = 16).
 * @flags:    KTRACE_GLOBAL_CHANNEL, KTRACE_FLIGHT_CHANNEL, KTRACE_DISABLE_STATE.
 *
 * Allocates every stream file in full (posix_fallocate), so a full disk is
 * reported here, never later as SIGBUS.  The channel is created stopped.
 * The first channel set up becomes the default channel of ktrace_log2().
 *
 * Return: the channel, or NULL with errno set (EINVAL bad size or flags,
 * ENOSPC disk full, EACCES/EROFS unwritable root, ...) and ktrace_error()
 * describing it.
 */
struct ktrace_channel *ktrace_setup(const char *root, const char *name, uint32_t buf_size,
				    uint32_t buf_nr, uint32_t flags);

/** ktrace_setup_opts() - ktrace_setup() with every option; see struct ktrace_options. */
struct ktrace_channel *ktrace_setup_opts(const struct ktrace_options *opts);

/**
 * ktrace_start() - start recording (state "start").
 * Return: 0, or -EPERM if the channel was cleaned up.
 */
int ktrace_start(struct ktrace_channel *ch);

/**
 * ktrace_stop() - stop recording (state "stop"); records already committed
 * stay.  Writers in the middle of a record finish it.
 * Return: 0, or -EPERM if the channel was cleaned up.
 */
int ktrace_stop(struct ktrace_channel *ch);

/**
 * ktrace_running() - 1 if the channel records now, 0 if not.
 * Reads the control page, so it sees `ktrace ctl` changes.  Async-signal-safe.
 */
int ktrace_running(const struct ktrace_channel *ch);

/**
 * ktrace_cleanup() - stop, finalise the metadata (final clock calibration,
 * memory maps, catalogue), flush and unmap everything, free @ch.  The trace
 * directory stays for the tools.  Other threads must have stopped logging
 * to this channel.  If @ch is the default channel, logging becomes a no-op.
 */
void ktrace_cleanup(struct ktrace_channel *ch);

/** ktrace_dir() - the trace directory path of @ch (valid until cleanup). */
const char *ktrace_dir(const struct ktrace_channel *ch);

/**
 * ktrace_error() - the last error of the calling thread, one line naming
 * the file and the failing operation ("" if none).
 */
const char *ktrace_error(void);

/**
 * ktrace_set_default() - make @ch the channel ktrace_log2()/ktrace_log4()
 * write to (NULL: none; logging becomes a disabled branch).
 */
void ktrace_set_default(struct ktrace_channel *ch);

/**
 * struct ktrace_stats - counters of a channel, summed over its streams.
 * @written:     records committed and still in the buffers or already
 *               overwritten (i.e. attempted minus dropped).
 * @dropped:     records refused (discard mode full, nesting too deep).
 * @overwritten: records lost to flight-recorder overwrite.
 */
struct ktrace_stats {
	uint64_t written;
	uint64_t dropped;
	uint64_t overwritten;
};

/**
 * ktrace_get_stats() - read the counters of @ch into @st.  Exact once the
 * writers are quiescent (after ktrace_stop() and joining them); while they
 * run, a value can lag by the records of one sub-buffer.
 * Return: 0.
 */
int ktrace_get_stats(struct ktrace_channel *ch, struct ktrace_stats *st);

/* ------------------------------------------------------------------ */
/* Static events (seed 000)                                            */
/* ------------------------------------------------------------------ */

/* Event codes of klog's function entry/exit events; user codes from 16. */
#define KT_EVENT_ENTRY 1
#define KT_EVENT_EXIT 2
#define KT_EVENT_USER 16

/*
 * Declaring function ids, in the spirit of klog's KT_FUNC_* enumerator:
 *
 *   #define MY_FUNCS(X) X(parse_request) X(send_reply)
 *   enum { MY_FUNCS(KTRACE_FUNC_ENUM) };      // KT_FUNC_parse_request = 0, ...
 *   static const char *my_funcs[] = { MY_FUNCS(KTRACE_FUNC_NAME) };
 *   ktrace_catalog_funcs(ch, my_funcs, 2);
 */
#define KTRACE_FUNC_ENUM(name) KT_FUNC_##name,
#define KTRACE_FUNC_NAME(name) #name,

/**
 * struct ktrace_event_desc - one catalogue entry.
 * @func, @event: the id pair given to ktrace_log2()/ktrace_log4().
 * @name:     event name printed by the tools (no spaces).
 * @category: a group name ("sched", "io", ...; no spaces), NULL = "default".
 * @args:     argument names (2 used by log2, 4 by log4), NULL = a, b, c, d.
 * @is_log4:  nonzero if logged with ktrace_log4() (u32 arguments).
 */
struct ktrace_event_desc {
	uint8_t func;
	uint8_t event;
	const char *name;
	const char *category;
	const char *args[4];
	int is_log4;
};

/**
 * ktrace_catalog_add() - declare @n events of @ch so the tools print names.
 * May be called any time before ktrace_cleanup(); rewrites the metadata.
 * Return: 0, -EINVAL (a name with spaces or empty), -errno writing metadata.
 */
int ktrace_catalog_add(struct ktrace_channel *ch, const struct ktrace_event_desc *ev, size_t n);

/**
 * ktrace_catalog_funcs() - name function ids 0..n-1 (KT_FUNC_*).  Entry and
 * exit events of a named function print as NAME:entry and NAME:exit.
 * Return: 0, -EINVAL (n > 256 or a bad name), -errno writing metadata.
 */
int ktrace_catalog_funcs(struct ktrace_channel *ch, const char *const *names, size_t n);

/**
 * ktrace_event_enable() - enable (@on != 0) or disable event (@func,
 * @event) of the default channel; @event < 0 means every event of @func,
 * @func < 0 every event.  Takes effect for the next logging call on every
 * thread.  Also possible from outside: `ktrace ctl DIR enable|disable`.
 * Return: 0, -ENODEV if there is no default channel.
 */
int ktrace_event_enable(int func, int event, int on);

/* The enable map of the default channel (a zero map when there is none).
 * Internal to the inline fast path below. */
extern const volatile uint8_t *ktrace__enabled;
void ktrace__log2(uint16_t id, uint64_t u1, uint64_t u2);
void ktrace__log4(uint16_t id, uint32_t u1, uint32_t u2, uint32_t u3, uint32_t u4);

/**
 * ktrace_log2() - log event (@func, @event) with two 64-bit values to the
 * default channel (seed 000).  One 24-byte record.  About one load and one
 * branch when the event is disabled or there is no default channel.
 * Thread-safe, async-signal-safe, lock-free, no syscall, no allocation
 * (except the first record of a thread, which claims a stream slot).
 */
static inline void ktrace_log2(uint8_t func, uint8_t event, uint64_t u1, uint64_t u2)
{
	uint16_t id = KTRACE_EVENT_ID(func, event);

	if (__builtin_expect(ktrace__enabled[id] != 0, 0))
		ktrace__log2(id, u1, u2);
}

/** ktrace_log4() - as ktrace_log2() with four 32-bit values (24 bytes). */
static inline void ktrace_log4(uint8_t func, uint8_t event, uint32_t u1, uint32_t u2, uint32_t u3,
			       uint32_t u4)
{
	uint16_t id = KTRACE_EVENT_ID(func, event);

	if (__builtin_expect(ktrace__enabled[id] != 0, 0))
		ktrace__log4(id, u1, u2, u3, u4);
}

/**
 * ktrace_now() - the raw clock value the runtime stamps records with (TSC
 * ticks on x86-64, CLOCK_MONOTONIC ns elsewhere).  Convert differences with
 * the calibration in the metadata; the tools print nanoseconds.
 */
uint64_t ktrace_now(void);

#ifdef __cplusplus
}
#endif

#endif /* KTRACE_KTRACE_H */

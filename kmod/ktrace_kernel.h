/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace_kernel.h - the kernel API of ktrace.ko, for other kernel modules.
 *
 * Two layers, the kernel twins of include/ktrace/ktrace.h:
 *
 *  1. Channels (seed 003, "a generic tracing API"): trace_setup() creates a
 *     relay channel and its debugfs directory root/name/ with the control
 *     files state, dropped, info, buf_size, buf_nr, catalog and the relay
 *     files trace0..traceN; trace_start()/trace_stop() switch it on and off,
 *     trace_running() tells, trace_cleanup() removes it.  Records are
 *     written with trace_log2(), trace_log4() or trace_record() in the
 *     on-disk format of include/ktrace/format.h, so every ktrace tool reads
 *     the output of `ktrace read`.
 *
 *  2. Static events (seed 000, klog's ktrace): ktrace_log2() and
 *     ktrace_log4() write one record to the module's default channel,
 *     debugfs ktrace/default/.
 *
 * Contexts.  The record writers may be called from any context: process,
 * softirq, hardirq, with or without locks held, including from tracepoint
 * probes on the scheduler.  In NMI context they store nothing and count
 * the record as dropped (relay's reservation is not NMI-reentrant); a
 * writer that interrupts itself (a probe hit inside the writer) is
 * refused the same way.  The channel management functions sleep: process
 * context only, never with spinlocks held or in atomic context.
 *
 * Symbol names: trace_setup, trace_start, trace_stop, trace_cleanup,
 * trace_running, trace_log2, trace_log4, trace_record, trace_catalog_func,
 * trace_catalog_event, ktrace_log2, ktrace_log4, ktrace_default_channel and
 * ktrace_catalog_func were checked against Debian's 6.1 Module.symvers and
 * kernel headers, where none of them exists.
 */
#ifndef KTRACE_KERNEL_H
#define KTRACE_KERNEL_H

#include <linux/types.h>
#include "ktrace/format.h"

/* Channel flags of trace_setup(), seed 003's names (values of format.h). */
#define TRACE_GLOBAL_CHANNEL KTRACE_GLOBAL_CHANNEL /* one buffer for all CPUs */
#define TRACE_FLIGHT_CHANNEL KTRACE_FLIGHT_CHANNEL /* overwrite the oldest */
#define TRACE_DISABLE_STATE KTRACE_DISABLE_STATE   /* state file read-only */

/* Geometry limits and defaults (bytes, sub-buffers). */
#define TRACE_DEFAULT_BUF_SIZE (64u * 1024u)
#define TRACE_DEFAULT_BUF_NR 16u
#define TRACE_MIN_BUF_SIZE 4096u
#define TRACE_MAX_BUF_SIZE (64u * 1024u * 1024u)
#define TRACE_MAX_BUF_NR 65536u
#define TRACE_MAX_STREAM_BYTES (256u * 1024u * 1024u) /* per CPU */

/* Event codes of klog's function entry/exit events (as in ktrace.h). */
#define KT_EVENT_ENTRY 1
#define KT_EVENT_EXIT 2
#define KT_EVENT_USER 16

struct trace_info;

/**
 * trace_setup() - create a channel: relay buffers and debugfs root/name/.
 * @root:     debugfs directory under the debugfs mount (created on first
 *            use, shared by the channels of that root; must not be a
 *            directory some other code created).
 * @name:     channel directory inside @root.
 * @buf_size: bytes per sub-buffer: a power of two in
 *            [TRACE_MIN_BUF_SIZE, TRACE_MAX_BUF_SIZE]; 0 means
 *            TRACE_DEFAULT_BUF_SIZE.
 * @buf_nr:   sub-buffers per CPU (per channel with TRACE_GLOBAL_CHANNEL),
 *            2..TRACE_MAX_BUF_NR; 0 means TRACE_DEFAULT_BUF_NR.  The
 *            product must not exceed TRACE_MAX_STREAM_BYTES.
 * @flags:    TRACE_GLOBAL_CHANNEL (one stream trace0 shared by every CPU;
 *            writers serialised by an interrupt-safe spinlock; every record
 *            then carries a context word: pid, CPU, context depth),
 *            TRACE_FLIGHT_CHANNEL (flight recorder: the oldest sub-buffer
 *            is overwritten and counted as overwritten; default: discard,
 *            a full buffer refuses records and counts them as dropped),
 *            TRACE_DISABLE_STATE (the state file is read-only, mode 0400;
 *            only the owning module starts and stops the channel).
 *
 * The channel is created stopped.  Every file is root-only: control files
 * 0600 (writable) or 0400, relay files 0400.
 *
 * Context: process, may sleep.
 * Return: the channel, or an ERR_PTR(): -EINVAL (bad size, count, flags or
 * name), -EEXIST (root/name exists, or @root belongs to someone else),
 * -ENOMEM, -ENODEV (debugfs unavailable).  Check with IS_ERR().
 */
struct trace_info *trace_setup(const char *root, const char *name, u32 buf_size, u32 buf_nr,
			       u32 flags);

/**
 * trace_start() - start recording (state "start").
 * @trace: a channel from trace_setup().
 *
 * A sub-buffer that was closed by trace_stop() is not appended to: the
 * first record after a restart opens a new sub-buffer.
 * Context: process, may sleep.
 * Return: 0, or -ENODEV if the channel has no relay buffers (a failed
 * resize) or is being cleaned up.
 */
int trace_start(struct trace_info *trace);

/**
 * trace_stop() - stop recording (state "stop").
 * @trace: a channel from trace_setup().
 *
 * Waits (synchronize_rcu()) until every writer that saw the channel
 * running has finished its record, then marks each CPU's current
 * sub-buffer KTRACE_SBF_CLOSED so a reader may copy it.  No sub-buffer is
 * switched, so a flight recorder loses nothing by being stopped.
 * Context: process, may sleep.
 * Return: 0, or -ENODEV while the channel is being cleaned up.
 */
int trace_stop(struct trace_info *trace);

/**
 * trace_running() - whether @trace records now.
 * Context: any (one load, no lock).
 * Return: 1 if started, 0 if stopped.
 */
int trace_running(const struct trace_info *trace);

/**
 * trace_cleanup() - stop @trace and remove it: relay buffers, debugfs
 * files, the root directory when its last channel goes.  A reader that
 * still has a relay file open (or mapped) keeps its buffer until it closes
 * it.  The caller must first make sure nothing writes to @trace any more
 * (unregister its probes, stop its timers and threads); the channel itself
 * may still be running.
 * Context: process, may sleep.
 */
void trace_cleanup(struct trace_info *trace);

/**
 * trace_record() - write one record of any class to @trace.
 * @trace: the channel.
 * @cls:   record class, KTRACE_CLASS_* (1..15; 0 is invalid).
 * @id:    16-bit record id (meaning depends on the class).
 * @words: @nwords payload words (u64, written as they are).
 * @nwords: 0..KTRACE_MAX_WORDS.
 *
 * The record is 8 bytes of header (40-bit timestamp of
 * ktime_get_mono_fast_ns(), i.e. CLOCK_MONOTONIC ns), 8 bytes of context
 * word on TRACE_GLOBAL_CHANNEL channels, and 8 * @nwords bytes of payload.
 * Context: any; see the header comment for NMI.  Lock-free on per-CPU
 * channels (interrupts are disabled for the few instructions of the
 * reservation and copy), a raw spinlock on global channels.
 * Return: 0 if stored; -ENODATA if the channel is stopped; -ENOSPC if the
 * buffer is full (discard mode), -EBUSY in NMI context or when nested in
 * another write on this CPU: both counted in dropped; -EINVAL for a bad
 * @cls or @nwords (not counted).
 */
int trace_record(struct trace_info *trace, unsigned int cls, u16 id, const u64 *words,
		 unsigned int nwords);

/**
 * trace_log2() - log static event (@func, @event) with two u64 values
 * to @trace: class KTRACE_CLASS_LOG2, id = (@func << 8) | @event, 24 bytes
 * on a per-CPU channel.  Context and return as trace_record().
 */
int trace_log2(struct trace_info *trace, u8 func, u8 event, u64 u1, u64 u2);

/**
 * trace_log4() - as trace_log2() with four u32 values (class LOG4, @u1 in
 * the low half of the first payload word).
 */
int trace_log4(struct trace_info *trace, u8 func, u8 event, u32 u1, u32 u2, u32 u3, u32 u4);

/**
 * trace_catalog_func() - name function id @func of @trace for the tools
 * (the `func ID NAME` metadata line that `ktrace read` copies from the
 * catalog file).  Entry and exit events of a named function print as
 * NAME:entry and NAME:exit.  A later call for the same id replaces the
 * name.
 * Context: process, may sleep.
 * Return: 0, -EINVAL (empty name, whitespace, longer than 63 bytes),
 * -ENOMEM.
 */
int trace_catalog_func(struct trace_info *trace, u8 func, const char *name);

/**
 * trace_catalog_event() - declare event (@func, @event) of @trace: its
 * @name, @category (NULL = "default") and argument names @args (comma
 * separated, NULL = "-"), logged with trace_log4() if @is_log4 else
 * trace_log2().  Becomes an `event` metadata line.
 * Context: process, may sleep.
 * Return: 0, -EINVAL (a field empty or with whitespace), -ENOSPC (more than
 * 256 events), -ENOMEM.
 */
int trace_catalog_event(struct trace_info *trace, u8 func, u8 event, const char *name,
			const char *category, const char *args, bool is_log4);

/**
 * ktrace_default_channel() - the module's default channel (debugfs
 * ktrace/default, per-CPU; its geometry and flags come from the module
 * parameters buf_size, buf_nr and flags).  Valid while ktrace.ko is
 * loaded, which a module calling it guarantees.
 */
struct trace_info *ktrace_default_channel(void);

/**
 * ktrace_log2() - seed 000's static event: log (@func, @event, @u1, @u2)
 * to the default channel when it runs.  One 24-byte record.
 * Context: any (see the header comment for NMI); when the channel is
 * stopped the cost is a call, one load and a branch.
 */
void ktrace_log2(u8 func, u8 event, u64 u1, u64 u2);

/** ktrace_log4() - as ktrace_log2() with four u32 values (24 bytes). */
void ktrace_log4(u8 func, u8 event, u32 u1, u32 u2, u32 u3, u32 u4);

/**
 * ktrace_catalog_func() - trace_catalog_func() on the default channel.
 */
int ktrace_catalog_func(u8 func, const char *name);

#endif /* KTRACE_KERNEL_H */

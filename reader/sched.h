/*
 * reader/sched.h - task scheduling states from kernel events: LKST's
 * "process trace" (seed 001: running / ready / blocked per process, from
 * PROCESS_CONTEXTSWITCH and PROCESS_WAKEUP) and per-thread off-CPU time.
 *
 * Part of libktrace-reader.a; used by `ktrace timeline`, `ktrace export`
 * and `ktrace kd` (off-CPU time of calls).  Fed the records of a trace in
 * time order (ktr_next(): application and kernel sub-trace merged), it
 * follows every task (kernel pid = thread id; the idle task, pid 0, is not
 * followed):
 *
 *   PROCESS_CONTEXTSWITCH prev_pid, next_pid, prev_state at T on CPU c:
 *       next_pid   -> running (on c) at T
 *       prev_pid   -> ready at T if prev_state says runnable (0, or the
 *                     kernel's "preempted" bit 0x100 alone: `R`, `R+`),
 *                     dead if it says exiting (`X`, `Z`), else blocked
 *                     (sleeping `S`, disk `D`, stopped `T`, ...)
 *   PROCESS_WAKEUP / PROCESS_WAKEUP_NEW pid at T:
 *       pid        -> ready at T, unless it is running already
 *   any other event in task P's context (word 0) at T on CPU c:
 *       P          -> running on c at T, if it was not: its switch-in was
 *                     not traced (kernels leave some out: this project's
 *                     VMs skip many switches from the idle task), so it is
 *                     placed at the task's first own event, microseconds late
 *
 * Before a task's first event its state is unknown and nothing is reported
 * for that time.  A CPU runs one task at a time: when a CPU switches away
 * from a task other than the one it last switched to, that task's own
 * switch-out was not recorded (lost, or not traced by this kernel) and its
 * state is unknown from then on; so is every task's after a kernel gap
 * (lost or overwritten records).  Intervals are reported as they close,
 * zero-length ones not at all; ktr_sched_finish() closes the open ones.
 *
 * Off-CPU time: with KTR_SCHED_OFFCPU, each followed thread also keeps its
 * off-CPU intervals (switched out at A, in again at B; ready or blocked)
 * with running sums, so the off-CPU time inside any [start, end] of that
 * thread is answered by two binary searches (ktr_sched_offcpu()).  Memory
 * is 48 bytes per context switch of the followed threads; a filter
 * (ktr_sched_follow()) keeps it to the threads a tool cares about.
 *
 * Thread safety: one struct ktr_sched per thread of the caller.
 */
#ifndef KTRACE_READER_SCHED_H
#define KTRACE_READER_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "reader/reader.h"

enum ktr_task_state {
	KTR_TASK_UNKNOWN = 0,
	KTR_TASK_RUNNING = 1, /* on a CPU */
	KTR_TASK_READY = 2,   /* runnable, waiting for a CPU (preempted or woken) */
	KTR_TASK_BLOCKED = 3, /* sleeping: waits for an event, I/O, a lock, a signal */
	KTR_TASK_DEAD = 4,    /* exited */
};

/** ktr_task_state_name() - "running", "ready", "blocked", "dead", "unknown". */
const char *ktr_task_state_name(enum ktr_task_state s);

/**
 * struct ktr_sched_iv - one interval of a task in one state.
 * @tid, @pid:   the task (kernel pid) and its process (tgid, 0 if unknown).
 * @state:       KTR_TASK_RUNNING, READY or BLOCKED.
 * @start_ns, @end_ns: [start, end) in CLOCK_MONOTONIC ns.
 * @cpu:         RUNNING: the CPU it ran on; READY/BLOCKED: the CPU it
 *               left (-1 if unknown).
 * @prev_state:  READY/BLOCKED: the sched_switch prev_state that began it
 *               (the kernel's TASK_REPORT bits), 0 for a wakeup.
 * @waker:       READY after a wakeup: the task that woke it (0 unknown).
 */
struct ktr_sched_iv {
	uint32_t tid, pid;
	enum ktr_task_state state;
	uint64_t start_ns, end_ns;
	int cpu;
	uint64_t prev_state;
	uint32_t waker;
};

typedef void (*ktr_sched_fn)(void *arg, const struct ktr_sched_iv *iv);

struct ktr_sched;

#define KTR_SCHED_OFFCPU 0x1u /* keep off-CPU intervals for ktr_sched_offcpu() */

/**
 * ktr_sched_new() - a state follower.  @fn (may be NULL) is called for
 * every closed interval, in the order they close.  @flags: KTR_SCHED_*.
 * Return: the follower, or NULL (ENOMEM).
 */
struct ktr_sched *ktr_sched_new(unsigned flags, ktr_sched_fn fn, void *arg);

/**
 * ktr_sched_follow() - restrict the followed tasks: @want(@arg, tid, pid)
 * returning 0 skips a task (decided at its first event; pid may be 0 when
 * unknown).  NULL follows every task (the default).
 */
void ktr_sched_follow(struct ktr_sched *s, int (*want)(void *arg, uint32_t tid, uint32_t pid),
		      void *arg);

/**
 * ktr_sched_feed() - give the next record of @t (in ktr_next() order).
 * Records that are not context switches or wakeups (or gaps) are ignored;
 * a LOST/OVERWRITTEN gap in a kernel stream makes every task's state
 * unknown from there until its next event (intervals never span a gap).
 * Return: 1 if @r changed a state, else 0.
 */
int ktr_sched_feed(struct ktr_sched *s, const struct ktr_trace *t, const struct ktr_rec *r);

/** ktr_sched_finish() - close every open interval at @end_ns (call once, at the end). */
void ktr_sched_finish(struct ktr_sched *s, uint64_t end_ns);

/**
 * ktr_sched_offcpu() - off-CPU time of thread @tid within [@a, @b] (ns),
 * from the intervals seen so far (KTR_SCHED_OFFCPU).  An interval still
 * open (switched out, not yet back) counts up to @b.
 * @nswitch: (may be NULL) number of switch-outs inside [a, b].
 * @blocked: (may be NULL) the part of the result spent blocked, from a
 *           sleeping switch-out to the wakeup (the rest was ready: preempted,
 *           or woken and waiting for a CPU).
 * Return: ns off CPU; 0 for an unknown thread.
 */
uint64_t ktr_sched_offcpu(const struct ktr_sched *s, uint32_t tid, uint64_t a, uint64_t b,
			  uint64_t *nswitch, uint64_t *blocked);

/**
 * struct ktr_offcpu - one off-CPU interval of a thread, for
 * ktr_sched_offcpu_each(): switched out at @out_ns (on @cpu_out, with
 * @prev_state) and in again at @in_ns (on @cpu_in; UINT64_MAX and -1 while
 * still out).  @blocked: 1 if it went to sleep, 0 if it was preempted;
 * @wake_ns: when a sleeping thread was woken (= @out_ns if preempted,
 * UINT64_MAX if not yet).
 */
struct ktr_offcpu {
	uint64_t out_ns, in_ns, wake_ns;
	uint64_t prev_state;
	int cpu_out, cpu_in;
	int blocked;
};

/**
 * ktr_sched_offcpu_each() - call @fn for each off-CPU interval of @tid that
 * overlaps [@a, @b], oldest first.  Return: intervals reported.
 */
size_t ktr_sched_offcpu_each(const struct ktr_sched *s, uint32_t tid, uint64_t a, uint64_t b,
			     void (*fn)(void *arg, const struct ktr_offcpu *o), void *arg);

/** ktr_sched_state() - the current state of @tid (KTR_TASK_UNKNOWN if never seen). */
enum ktr_task_state ktr_sched_state(const struct ktr_sched *s, uint32_t tid);

/** ktr_sched_switches() - context switches seen so far (all tasks). */
uint64_t ktr_sched_switches(const struct ktr_sched *s);

/** ktr_sched_free() - free @s (NULL allowed). */
void ktr_sched_free(struct ktr_sched *s);

#endif

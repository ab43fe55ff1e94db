/* SPDX-License-Identifier: MIT */
/*
 * bench/harness.h - the measuring loop shared by every benchmark program.
 *
 * A benchmark variant is a function that logs @n events from one thread.
 * The harness runs it on @nthreads threads pinned to CPUs 0..nthreads-1,
 * released together by a barrier, first for untimed warm-up repetitions,
 * then for @reps timed ones.  Each thread times its own loop with its CPU
 * time (CLOCK_THREAD_CPUTIME_ID: user + kernel time of that thread, so page
 * faults count but time the thread spent preempted by other processes on a
 * shared machine does not) and with CLOCK_MONOTONIC (wall time).  One
 * repetition's value is the mean over the threads of (ns / events), i.e.
 * what one logging call costs a thread while the other threads log too.
 * The result is the median, minimum and maximum of the CPU-time values over
 * the timed repetitions, and the median of the wall-time values.
 *
 * Output: one tab-separated line per variant on stdout, read by bench/run.sh:
 *
 *   result <variant> <threads> <median_ns> <min_ns> <max_ns> <reps>
 *          <events_per_thread> <bytes_per_event|-> <note|-> <wall_median_ns>
 *
 * Not part of libktrace; no ktrace dependency, so the floor and LTTng
 * programs link without the runtime.
 */
#ifndef KTRACE_BENCH_HARNESS_H
#define KTRACE_BENCH_HARNESS_H

#include <stdint.h>

#define BENCH_MAX_THREADS 32
#define BENCH_MAX_REPS 64

/**
 * struct bench_spec - one variant to measure.
 * @name:        variant name printed in the result line (no spaces).
 * @nthreads:    writer threads, 1..BENCH_MAX_THREADS (pinned to CPU i % ncpu).
 * @reps:        timed repetitions (1..BENCH_MAX_REPS).
 * @warmup:      untimed repetitions run first.
 * @events:      events per thread per repetition.
 * @ctx:         passed to every callback.
 * @prepare:     main thread, before each repetition (warm-up included),
 *               untimed; @rep < 0 for warm-up.  Return 0 or -errno.
 * @finish:      main thread, after each repetition, untimed.
 * @thread_init: each worker thread, before the start barrier, untimed
 *               (pre-fault buffers, claim slots).
 * @run:         the timed loop: log @n events from thread @tidx.
 */
struct bench_spec {
	const char *name;
	int nthreads;
	int reps;
	int warmup;
	uint64_t events;
	void *ctx;
	int (*prepare)(void *ctx, int rep);
	void (*finish)(void *ctx, int rep);
	void (*thread_init)(void *ctx, int tidx);
	void (*run)(void *ctx, int tidx, uint64_t n);
};

/**
 * struct bench_result - ns per event of one variant.
 * @median, @min, @max: thread CPU time over the timed repetitions, in ns per
 *                      event per thread.
 * @wall_median:        the same median in wall-clock time.
 * @per_rep:            the CPU-time value of each timed repetition.
 */
struct bench_result {
	double median;
	double min;
	double max;
	double wall_median;
	int reps;
	double per_rep[BENCH_MAX_REPS];
};

/**
 * bench_run() - measure @s into @r.  Threads are created for each
 * repetition (so a variant may replace its channel between repetitions).
 * Return: 0, or the negative errno of a failed prepare or thread creation.
 */
int bench_run(const struct bench_spec *s, struct bench_result *r);

/**
 * bench_print() - print the result line of @s/@r; @bytes_per_event < 0
 * prints "-"; @note may be NULL.
 */
void bench_print(const struct bench_spec *s, const struct bench_result *r, double bytes_per_event,
		 const char *note);

/** bench_pin() - pin the calling thread to @cpu modulo the online CPUs. */
int bench_pin(int cpu);

/**
 * struct bench_opts - the options every benchmark program takes:
 * -n EVENTS per thread per repetition (default 10000000), -r REPS timed
 * repetitions (7), -w WARMUP untimed ones (1), -t THREADS (1), -d DIR a
 * scratch directory for trace files (default ".").
 */
struct bench_opts {
	uint64_t events;
	int reps;
	int warmup;
	int threads;
	const char *dir;
};

/**
 * bench_parse_args() - fill @o from argv.  Return the index of the first
 * variant argument, or -1 after printing a one-line error and the usage
 * (with @usage_tail naming the variants) to stderr.
 */
int bench_parse_args(int argc, char **argv, struct bench_opts *o, const char *usage_tail);

/* Keep the compiler from merging, moving or deleting stores across it. */
#define bench_barrier() __asm__ __volatile__("" ::: "memory")

#endif /* KTRACE_BENCH_HARNESS_H */

/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_lttng.c - cost of one LTTng-UST tracepoint with two u64
 * fields (lttng_tp.h), the peer ktrace_log2() is compared with.
 *
 * The program only fires the tracepoint; bench/run.sh sets the scene with
 * the lttng command (a normal session, a snapshot session, or none) and
 * passes the matching variant name, which is printed in the result line:
 *
 *   lttng-session    a session records ktbench:ev (consumer writes to disk)
 *   lttng-snapshot   a snapshot (flight recorder) session records it
 *   lttng-disabled   compiled in, no session: the tracepoint is disabled
 *
 * The variant name is checked against lttng_ust_tracepoint_enabled() so a
 * session that failed to attach is an error, not a fast number.  The
 * total number of events fired is printed to stderr as "fired N" for the
 * bytes-per-event computation.
 *
 * Usage: bench_lttng [-n EVENTS] [-r REPS] [-w WARMUP] [-t THREADS] VARIANT
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lttng_tp.h"

static void lttng_run(void *ctx, int tidx, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		lttng_ust_tracepoint(ktbench, ev, i, n - i);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int first = bench_parse_args(argc, argv, &o, "lttng-session|lttng-snapshot|lttng-disabled");
	int want_on, on, tries;

	if (first < 0)
		return 2;
	if (!strcmp(argv[first], "lttng-disabled"))
		want_on = 0;
	else if (!strcmp(argv[first], "lttng-session") || !strcmp(argv[first], "lttng-snapshot"))
		want_on = 1;
	else {
		fprintf(stderr, "bench_lttng: unknown variant '%s'\n", argv[first]);
		return 2;
	}
	/* Registration with lttng-sessiond happens in a constructor, which
	 * waits up to LTTNG_UST_REGISTER_TIMEOUT; give the enablement a
	 * moment to arrive anyway. */
	for (tries = 0; (on = !!lttng_ust_tracepoint_enabled(ktbench, ev)) != want_on && tries < 50;
	     tries++)
		usleep(100000);
	if (on != want_on) {
		fprintf(stderr, "bench_lttng: %s: tracepoint ktbench:ev is %s\n", argv[first],
			on ? "enabled (a session is active)" : "not enabled (no session attached)");
		return 1;
	}

	struct bench_spec s = {
		.name = argv[first], .nthreads = o.threads, .reps = o.reps, .warmup = o.warmup,
		.events = o.events, .run = lttng_run,
	};
	struct bench_result r;
	int err = bench_run(&s, &r);

	if (err) {
		fprintf(stderr, "bench_lttng: %s: %s\n", s.name, strerror(-err));
		return 1;
	}
	bench_print(&s, &r, -1, NULL);
	fprintf(stderr, "fired %llu\n",
		(unsigned long long)o.events * (uint64_t)o.threads * (uint64_t)(o.reps + o.warmup));
	return 0;
}

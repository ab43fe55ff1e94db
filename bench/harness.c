/* SPDX-License-Identifier: MIT */
/*
 * bench/harness.c - pinned worker threads, a start barrier, per-thread
 * CLOCK_MONOTONIC timing and median/min/max over repetitions (see
 * harness.h for the method and the output line).
 */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct worker {
	const struct bench_spec *s;
	pthread_barrier_t *start;
	int tidx;
	double cpu_ns, wall_ns;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_pin(int cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (ncpu < 1)
		ncpu = 1;
	CPU_ZERO(&set);
	CPU_SET(cpu % ncpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct bench_spec *s = w->s;
	uint64_t c0, c1, t0, t1;

	bench_pin(w->tidx);
	if (s->thread_init)
		s->thread_init(s->ctx, w->tidx);
	pthread_barrier_wait(w->start);
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->run(s->ctx, w->tidx, s->events);
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = clock_ns(CLOCK_MONOTONIC);
	w->cpu_ns = (double)(c1 - c0);
	w->wall_ns = (double)(t1 - t0);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void stats(const double *v, int n, double *median, double *min, double *max)
{
	double sorted[BENCH_MAX_REPS];

	memcpy(sorted, v, sizeof(double) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(double), cmp_double);
	*min = sorted[0];
	*max = sorted[n - 1];
	*median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* One repetition: fresh pinned threads, released together. */
static int run_once(const struct bench_spec *s, double *cpu_per_event, double *wall_per_event)
{
	struct worker w[BENCH_MAX_THREADS];
	pthread_t th[BENCH_MAX_THREADS];
	pthread_barrier_t start;
	double cpu = 0, wall = 0;
	int i, err;

	pthread_barrier_init(&start, NULL, (unsigned)s->nthreads);
	for (i = 0; i < s->nthreads; i++) {
		w[i] = (struct worker){ .s = s, .start = &start, .tidx = i };
		err = pthread_create(&th[i], NULL, worker_main, &w[i]);
		if (err) {
			fprintf(stderr, "bench: %s: pthread_create: %s\n", s->name, strerror(err));
			exit(1); /* the started workers wait on the barrier forever */
		}
	}
	for (i = 0; i < s->nthreads; i++) {
		pthread_join(th[i], NULL);
		cpu += w[i].cpu_ns / (double)s->events;
		wall += w[i].wall_ns / (double)s->events;
	}
	pthread_barrier_destroy(&start);
	*cpu_per_event = cpu / s->nthreads;
	*wall_per_event = wall / s->nthreads;
	return 0;
}

int bench_run(const struct bench_spec *s, struct bench_result *r)
{
	double wall[BENCH_MAX_REPS], dummy;
	int rep, err, n = s->reps;

	if (s->nthreads < 1 || s->nthreads > BENCH_MAX_THREADS || n < 1 || n > BENCH_MAX_REPS ||
	    s->events == 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	for (rep = -s->warmup; rep < n; rep++) {
		double v, vw;

		if (s->prepare) {
			err = s->prepare(s->ctx, rep);
			if (err)
				return err;
		}
		err = run_once(s, &v, &vw);
		if (s->finish)
			s->finish(s->ctx, rep);
		if (err)
			return err;
		if (rep >= 0) {
			r->per_rep[rep] = v;
			wall[rep] = vw;
		}
	}
	r->reps = n;
	stats(r->per_rep, n, &r->median, &r->min, &r->max);
	stats(wall, n, &r->wall_median, &dummy, &dummy);
	return 0;
}

void bench_print(const struct bench_spec *s, const struct bench_result *r, double bytes_per_event,
		 const char *note)
{
	char bpe[32] = "-";

	if (bytes_per_event >= 0)
		snprintf(bpe, sizeof(bpe), "%.2f", bytes_per_event);
	printf("result\t%s\t%d\t%.3f\t%.3f\t%.3f\t%d\t%llu\t%s\t%s\t%.3f\n", s->name, s->nthreads,
	       r->median, r->min, r->max, r->reps, (unsigned long long)s->events, bpe,
	       note && *note ? note : "-", r->wall_median);
	fprintf(stderr, "  %-28s %dT  median %7.3f ns/event  (min %.3f, max %.3f; wall %.3f; reps:",
		s->name, s->nthreads, r->median, r->min, r->max, r->wall_median);
	for (int i = 0; i < r->reps; i++)
		fprintf(stderr, " %.2f", r->per_rep[i]);
	fprintf(stderr, ")\n");
	fflush(stdout);
}

static void usage(const char *prog, const char *tail)
{
	fprintf(stderr,
		"usage: %s [-n EVENTS] [-r REPS] [-w WARMUP] [-t THREADS] [-d DIR] %s\n"
		"  -n EVENTS  events per thread per repetition (default 10000000)\n"
		"  -r REPS    timed repetitions (default 7, at most %d)\n"
		"  -w WARMUP  untimed repetitions first (default 1)\n"
		"  -t THREADS writer threads, pinned to CPUs 0.. (default 1, at most %d)\n"
		"  -d DIR     scratch directory for trace files (default .)\n",
		prog, tail, BENCH_MAX_REPS, BENCH_MAX_THREADS);
}

int bench_parse_args(int argc, char **argv, struct bench_opts *o, const char *usage_tail)
{
	int c;
	char *end;
	long long v;

	*o = (struct bench_opts){ .events = 10000000, .reps = 7, .warmup = 1, .threads = 1, .dir = "." };
	while ((c = getopt(argc, argv, "n:r:w:t:d:h")) != -1) {
		if (c == 'd') {
			o->dir = optarg;
			continue;
		}
		if (c == 'h' || c == '?') {
			usage(argv[0], usage_tail);
			return -1;
		}
		errno = 0;
		v = strtoll(optarg, &end, 10);
		if (errno || *end || v < 0 || (c != 'w' && v == 0) ||
		    (c == 'r' && v > BENCH_MAX_REPS) || (c == 't' && v > BENCH_MAX_THREADS)) {
			fprintf(stderr, "%s: option -%c: bad value '%s'\n", argv[0], c, optarg);
			usage(argv[0], usage_tail);
			return -1;
		}
		switch (c) {
		case 'n': o->events = (uint64_t)v; break;
		case 'r': o->reps = (int)v; break;
		case 'w': o->warmup = (int)v; break;
		case 't': o->threads = (int)v; break;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no variant given\n", argv[0]);
		usage(argv[0], usage_tail);
		return -1;
	}
	return optind;
}

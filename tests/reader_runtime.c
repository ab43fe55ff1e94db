/*
 * tests/reader_runtime.c - the reader on traces written by the real
 * runtime (libktrace): writer and reader must agree on every record.
 *
 * Per-thread and global channels, two writer threads, discard and flight
 * modes.  Checks: every record comes back once with its values, thread id,
 * pid and catalogue name; each thread's records in order; timestamps in
 * CLOCK_MONOTONIC within the logging window (a correctness check of the
 * TSC calibration with a generous margin, not a speed measurement); gaps
 * that account for the runtime's dropped and overwritten counters.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "tap.h"
#include "mktrace.h"
#include "reader/reader.h"

#define N 3000
#define MARGIN_NS 2000000ull /* 2 ms: interpolation error is far below */

static uint32_t tids[2];
static pthread_barrier_t bar;
static unsigned long nlog = N;

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *writer(void *arg)
{
	uintptr_t k = (uintptr_t)arg;

	tids[k] = (uint32_t)gettid();
	pthread_barrier_wait(&bar);
	for (uint64_t i = 0; i < nlog; i++)
		ktrace_log2(0, KT_EVENT_USER, i, k);
	pthread_barrier_wait(&bar); /* keep the slot until both are done */
	return NULL;
}

/* Log with two threads into a new channel; return its stats. */
static struct ktrace_channel *record(const char *name, uint32_t size, uint32_t nr, uint32_t flags,
				     uint64_t *t0, uint64_t *t1)
{
	static const char *funcs[] = { "work" };
	struct ktrace_event_desc ev = { 0, KT_EVENT_USER, "step", "test", { "i", "who" }, 0 };
	struct ktrace_channel *ch = ktrace_setup(mk_path(""), name, size, nr, flags);
	pthread_t th[2];

	if (!ch)
		bail_out("ktrace_setup: %s", ktrace_error());
	ktrace_set_default(ch);
	ktrace_catalog_funcs(ch, funcs, 1);
	ktrace_catalog_add(ch, &ev, 1);
	ktrace_start(ch);
	pthread_barrier_init(&bar, NULL, 2);
	*t0 = mono();
	for (uintptr_t k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, writer, (void *)k);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	*t1 = mono();
	pthread_barrier_destroy(&bar);
	return ch;
}

struct seen {
	uint64_t recs[2], next[2], gaps_lost, gaps_dropped, gaps_over, bad, out_of_window;
	uint64_t first[2], last[2];
};

static void read_back(const char *dir, uint64_t t0, uint64_t t1, struct seen *s)
{
	struct ktr_trace *t = ktr_open(dir);
	struct ktr_rec r;
	char name[64];
	const char *m;

	memset(s, 0, sizeof(*s));
	s->first[0] = s->first[1] = UINT64_MAX;
	while (ktr_next(t, &r)) {
		uint64_t k;

		if (r.kind == KTR_GAP) {
			if (r.gap == KTR_GAP_LOST)
				s->gaps_lost += r.count;
			else if (r.gap == KTR_GAP_DROPPED)
				s->gaps_dropped += r.count;
			else if (r.gap == KTR_GAP_OVERWRITTEN)
				s->gaps_over += r.count;
			else
				s->bad++;
			continue;
		}
		k = r.w[1];
		if (k > 1 || r.tid != tids[k] || r.pid != (uint32_t)getpid() ||
		    strcmp(ktr_rec_name(t, &r, name, sizeof(name)), "step") ||
		    (s->recs[k] && r.w[0] != s->next[k])) {
			s->bad++;
			continue;
		}
		if (r.ns + MARGIN_NS < t0 || r.ns > t1 + MARGIN_NS)
			s->out_of_window++;
		if (s->first[k] == UINT64_MAX)
			s->first[k] = r.w[0];
		s->last[k] = r.w[0];
		s->next[k] = r.w[0] + 1;
		s->recs[k]++;
	}
	while ((m = ktr_diag_next(t))) {
		diag("reader: %s", m);
		s->bad++;
	}
	ktr_close(t);
}

int main(void)
{
	struct ktrace_channel *ch;
	struct ktrace_stats st;
	struct seen s;
	uint64_t t0, t1;
	char dir[600];

	/* per-thread streams, everything fits */
	ch = record("thread", 65536, 8, 0, &t0, &t1);
	snprintf(dir, sizeof(dir), "%s", ktrace_dir(ch));
	ktrace_cleanup(ch);
	read_back(dir, t0, t1, &s);
	ok(s.recs[0] == N && s.recs[1] == N, "per-thread: every record of both threads (%llu, %llu)",
	   (unsigned long long)s.recs[0], (unsigned long long)s.recs[1]);
	is_int(s.bad, 0, "per-thread: values, tids, pid, names and order all right");
	is_int(s.out_of_window, 0, "per-thread: times inside the logging window");

	/* the global channel: one shared stream with context words */
	ch = record("global", 65536, 8, KTRACE_GLOBAL_CHANNEL, &t0, &t1);
	snprintf(dir, sizeof(dir), "%s", ktrace_dir(ch));
	ktrace_cleanup(ch);
	read_back(dir, t0, t1, &s);
	ok(s.recs[0] == N && s.recs[1] == N, "global: every record of both threads (%llu, %llu)",
	   (unsigned long long)s.recs[0], (unsigned long long)s.recs[1]);
	is_int(s.bad, 0, "global: values, tids from context words, order");
	is_int(s.out_of_window, 0, "global: times inside the logging window");

	/* discard mode, too small: lost/dropped gaps account for the drops */
	ch = record("discard", 4096, 4, 0, &t0, &t1);
	ktrace_stop(ch);
	ktrace_get_stats(ch, &st);
	snprintf(dir, sizeof(dir), "%s", ktrace_dir(ch));
	read_back(dir, t0, t1, &s); /* read while the channel still exists */
	ktrace_cleanup(ch);
	is_int(s.recs[0] + s.recs[1], st.written, "discard: records read = written");
	is_int(s.gaps_lost + s.gaps_dropped, st.dropped, "discard: gaps add up to dropped");
	ok(s.first[0] == 0 && s.first[1] == 0, "discard: the oldest records are kept");
	is_int(s.bad, 0, "discard: no bad records");

	/* flight mode: the newest records are kept */
	ch = record("flight", 4096, 4, KTRACE_FLIGHT_CHANNEL, &t0, &t1);
	ktrace_stop(ch);
	ktrace_get_stats(ch, &st);
	snprintf(dir, sizeof(dir), "%s", ktrace_dir(ch));
	ktrace_cleanup(ch);
	read_back(dir, t0, t1, &s);
	is_int(s.recs[0] + s.recs[1], st.written - st.overwritten, "flight: records read = written - overwritten");
	ok(s.last[0] == N - 1 && s.last[1] == N - 1, "flight: the newest records are kept");
	ok(s.gaps_over > 0, "flight: overwritten sub-buffers shown (%llu)", (unsigned long long)s.gaps_over);
	is_int(s.bad, 0, "flight: no bad records");

	mk_cleanup();
	return done_testing();
}

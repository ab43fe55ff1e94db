/*
 * tests/channel_accounting.c - discard and flight-recorder semantics with
 * exact accounting under 1, 2 and 4 writer threads, for per-thread
 * streams, the global channel, and per-thread channels with fewer slots
 * than threads (the extra threads use the shared stream).
 *
 * Each record carries (thread << 40 | index) and a check word, so the test
 * sees torn or interleaved records, duplicates, and which records were
 * kept.  It asserts: written + dropped = attempted; the records read back
 * = written - overwritten; discard keeps each thread's oldest records
 * (a prefix), flight keeps the newest (a suffix; in a shared stream, a
 * suffix but for the records dropped while a sub-buffer was busy).
 */
#include <pthread.h>
#include <stdint.h>

#include <ktrace/ktrace.h>

#include "tap.h"
#include "walk.h"

#define CHECK 0x9e3779b97f4a7c15ull
#define MAXT 4
#define PER_THREAD 6000

struct run {
	int nthreads;
	pthread_barrier_t bar;
	uint8_t *seen[MAXT];
	uint64_t bad_payload, dup, wrong_id;
};

static struct run R;
static const char *root;

static void *writer(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;

	pthread_barrier_wait(&R.bar);
	for (uint64_t i = 0; i < PER_THREAD; i++) {
		uint64_t a = (t << 40) | i;

		ktrace_log2(1, KT_EVENT_USER, a, a ^ CHECK);
	}
	/* Stay alive until all are done: an exiting thread frees its slot and
	 * a later thread would continue (and in flight mode overwrite) its
	 * stream; tests/channel_slots.c covers that. */
	pthread_barrier_wait(&R.bar);
	return NULL;
}

static void on_rec(const struct walk_rec *r, void *arg)
{
	uint64_t a = r->payload[0], t = a >> 40, i = a & ((1ull << 40) - 1);

	(void)arg;
	if (KTRACE_REC_CLASS(r->hdr) != KTRACE_CLASS_LOG2 ||
	    KTRACE_REC_ID(r->hdr) != KTRACE_EVENT_ID(1, KT_EVENT_USER)) {
		R.wrong_id++;
		return;
	}
	if (r->payload[1] != (a ^ CHECK) || t >= (uint64_t)R.nthreads || i >= PER_THREAD) {
		R.bad_payload++;
		return;
	}
	if (R.seen[t][i]++)
		R.dup++;
}

/* Are the seen records of thread t a prefix (want_suffix=0) or suffix? */
static int contiguous(int t, int want_suffix)
{
	int i = 0, n = PER_THREAD;

	if (want_suffix) {
		while (i < n && !R.seen[t][i])
			i++;
		while (i < n && R.seen[t][i])
			i++;
		return i == n;
	}
	while (i < n && R.seen[t][i])
		i++;
	while (i < n && !R.seen[t][i])
		i++;
	return i == n;
}

static void run(const char *scope, uint32_t flags, uint32_t slots, int nthreads)
{
	char name[64];
	struct ktrace_options o = {
		.root = root, .name = name, .buf_size = 4096, .buf_nr = 4,
		.flags = flags, .nthreads = slots, .start = 1,
	};
	struct ktrace_channel *ch;
	struct ktrace_stats st;
	struct walk_stats ws;
	pthread_t th[MAXT];
	uint64_t attempted = (uint64_t)nthreads * PER_THREAD;
	int flight = !!(flags & KTRACE_FLIGHT_CHANNEL), shape_ok = 1;

	snprintf(name, sizeof(name), "%s-%s-%d", scope, flight ? "flight" : "discard", nthreads);
	memset(&R, 0, sizeof(R));
	R.nthreads = nthreads;
	for (int t = 0; t < nthreads; t++)
		R.seen[t] = calloc(PER_THREAD, 1);
	ch = ktrace_setup_opts(&o);
	if (!ch)
		bail_out("setup: %s", ktrace_error());
	pthread_barrier_init(&R.bar, NULL, (unsigned)nthreads);
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t);
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	ktrace_stop(ch);
	ktrace_get_stats(ch, &st);

	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", root, name);
	ws = walk_trace(path, on_rec, NULL);

	is_int(st.written + st.dropped, attempted, "%s: written + dropped = attempted", name);
	is_int(ws.records, st.written - st.overwritten, "%s: records read back = written - overwritten",
	       name);
	ok(ws.bad == 0 && R.bad_payload == 0 && R.wrong_id == 0 && R.dup == 0,
	   "%s: no torn, corrupt or duplicate record (bad %llu, payload %llu, id %llu, dup %llu)",
	   name, (unsigned long long)ws.bad, (unsigned long long)R.bad_payload,
	   (unsigned long long)R.wrong_id, (unsigned long long)R.dup);
	ok(flight ? st.overwritten > 0 : st.dropped > 0, "%s: the buffer %s (dropped %llu, overwritten %llu)",
	   name, flight ? "wrapped" : "filled", (unsigned long long)st.dropped,
	   (unsigned long long)st.overwritten);
	/* Thread streams keep the newest of every thread; a shared stream
	 * keeps the newest of the stream, which may all be one thread's.  In
	 * a shared flight stream a writer drops while the sub-buffer it would
	 * take is still being written by another thread, so its kept records
	 * may have holes: at most one missing record per record dropped. */
	if (flight && strcmp(scope, "thread")) {
		uint64_t holes = 0;

		for (int t = 0; t < nthreads; t++) {
			int i = 0;

			while (i < PER_THREAD && !R.seen[t][i])
				i++;
			for (; i < PER_THREAD; i++)
				holes += !R.seen[t][i];
		}
		shape_ok = holes <= st.dropped;
		if (holes)
			diag("%s: %llu holes among the kept records, %llu dropped", name,
			     (unsigned long long)holes, (unsigned long long)st.dropped);
	} else {
		for (int t = 0; t < nthreads; t++)
			shape_ok &= contiguous(t, flight);
	}
	if (flight && !strcmp(scope, "thread"))
		for (int t = 0; t < nthreads; t++)
			shape_ok &= R.seen[t][PER_THREAD - 1] == 1;
	if (!shape_ok)
		for (int t = 0; t < nthreads; t++) {
			int runs = 0;
			for (int i = 0; i < PER_THREAD; i++)
				if (R.seen[t][i] && (i == 0 || !R.seen[t][i - 1])) {
					int j = i;
					while (j < PER_THREAD && R.seen[t][j])
						j++;
					if (runs++ < 6)
						diag("  thread %d keeps [%d, %d)", t, i, j);
				}
		}
	ok(shape_ok, "%s: each thread's kept records are its %s ones%s", name,
	   flight ? "newest" : "oldest", flight && strcmp(scope, "thread") ? " (but for drops)" : "");
	ktrace_cleanup(ch);
	for (int t = 0; t < nthreads; t++)
		free(R.seen[t]);
	pthread_barrier_destroy(&R.bar);
}

int main(void)
{
	static const int counts[] = { 1, 2, 4 };

	root = walk_tmpdir("acct");

	for (int f = 0; f < 2; f++) {
		uint32_t mode = f ? KTRACE_FLIGHT_CHANNEL : 0;

		for (int i = 0; i < 3; i++) {
			run("thread", mode, 8, counts[i]);
			run("global", mode | KTRACE_GLOBAL_CHANNEL, 0, counts[i]);
			run("fewslots", mode, 1, counts[i]);
		}
	}
	return done_testing();
}

/*
 * tests/shared_stream.c - the shared stream's protocol (lib/stream_shared.c,
 * issue 12 items 2 to 5): global channels, where every thread and process
 * writes through one reservation.
 *
 *   - stamps in stream order: 4 and 8 threads on a global channel; every
 *     record of the stream is stamped at or after the one before it;
 *   - flight mode, one writer, 4 KiB x 4: exactly the newest records are
 *     read back, the newest of all last, nothing left over from an earlier
 *     lap of the ring;
 *   - writers killed inside their records (20 trials): forked children log
 *     to a global flight channel and are SIGKILLed at random moments; the
 *     parent then keeps logging: its newest records are all kept, in order,
 *     none stale, the dead writers' sub-buffers taken back, every record
 *     after a torn one read.
 *
 * Records carry (writer, sequence number) as their arguments, so what must
 * be there is known without ktrace's code; traces are checked with
 * tests/walk.h (an independent walker) and read with the reader library.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "reader/reader.h"
#include "tap.h"
#include "walk.h"

static char *root;

/* ---- order ----------------------------------------------------------- */

struct order {
	uint64_t last_seq, last_ts, backwards, records;
	int have;
};

static void check_order(const struct walk_rec *r, void *arg)
{
	struct order *o = arg;
	/* full stamp from 40 bits: records of one sub-buffer are within 2^38 of each other */
	uint64_t ts = KTRACE_REC_TS(r->hdr);

	if (o->have && ((ts - o->last_ts) & KTRACE_TS_MASK) >> 39)
		o->backwards++; /* negative 40-bit difference */
	o->have = 1;
	o->last_seq = r->seq;
	o->last_ts = ts;
	o->records++;
}

#define PER_THREAD 100000

static void *log_thread(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < PER_THREAD; i++)
		ktrace_log2(3, KT_EVENT_USER, t, i);
	return NULL;
}

static void test_order(unsigned nthreads)
{
	char name[32];
	struct ktrace_channel *ch;
	pthread_t th[8];
	struct order o = { 0 };
	struct walk_stats ws;
	char dir[4200];

	snprintf(name, sizeof(name), "order%u", nthreads);
	ch = ktrace_setup(root, name, 64 * 1024, 64, KTRACE_GLOBAL_CHANNEL);
	if (!ch) {
		ok(0, "setup: %s", ktrace_error());
		return;
	}
	ktrace_start(ch);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, log_thread, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	ktrace_cleanup(ch);
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	ws = walk_trace(dir, check_order, &o);
	ok(o.backwards == 0 && ws.bad == 0 && o.records + ws.dropped == (uint64_t)nthreads * PER_THREAD,
	   "%u threads on a global channel: %llu records + %llu dropped, %llu stamped before the one ahead of them",
	   nthreads, (unsigned long long)o.records, (unsigned long long)ws.dropped,
	   (unsigned long long)o.backwards);
}

/* ---- flight, one writer ---------------------------------------------------- */

static void test_flight_newest(void)
{
	struct ktrace_channel *ch = ktrace_setup(root, "flight1", 4096, 4, KTRACE_GLOBAL_CHANNEL |
								       KTRACE_FLIGHT_CHANNEL);
	struct ktrace_stats st;
	struct ktr_trace *t;
	struct ktr_rec r;
	char dir[4200];
	uint64_t n = 0, first = 0, last = 0, holes = 0;

	ktrace_start(ch);
	for (uint64_t i = 0; i < 1005; i++)
		ktrace_log2(3, KT_EVENT_USER, i, 0);
	ktrace_get_stats(ch, &st);
	ktrace_cleanup(ch);
	snprintf(dir, sizeof(dir), "%s/flight1", root);
	t = ktr_open(dir);
	while (ktr_next(t, &r)) {
		if (r.kind != KTR_RECORD)
			continue;
		if (n && r.w[0] != last + 1)
			holes++;
		if (!n)
			first = r.w[0];
		last = r.w[0];
		n++;
	}
	ok(n == 1005 - st.overwritten && last == 1004 && first == 1005 - n && holes == 0 &&
		   ktr_error_count(t) == 0,
	   "flight, 4 KiB x 4, 1005 records, %llu overwritten: the newest %llu read back, %llu to %llu, none stale or missing",
	   (unsigned long long)st.overwritten, (unsigned long long)n, (unsigned long long)first,
	   (unsigned long long)last);
	ktr_close(t);
}

/* ---- writers killed inside records ------------------------------------------ */

#define PARENT_AFTER 20000 /* the parent's records after the kills: several laps of the ring */

struct kill_check {
	uint64_t parent_last, parent_n, parent_holes, child_backwards;
	uint64_t child_last[4];
	int have_parent;
};

static void kill_rec(const struct walk_rec *r, void *arg)
{
	struct kill_check *k = arg;
	uint64_t who = r->payload[0], seq = r->payload[1];

	if (KTRACE_REC_CLASS(r->hdr) != KTRACE_CLASS_LOG2)
		return;
	if (who == 99) {
		if (k->have_parent && seq != k->parent_last + 1)
			k->parent_holes++;
		if (k->have_parent && seq <= k->parent_last)
			k->child_backwards++; /* an old record among newer ones */
		k->have_parent = 1;
		k->parent_last = seq;
		k->parent_n++;
	} else if (who < 4) {
		if (k->child_last[who] && seq <= k->child_last[who])
			k->child_backwards++;
		k->child_last[who] = seq;
	}
}

static int kill_trial(int trial)
{
	char name[32], dir[4200];
	struct ktrace_channel *ch;
	struct kill_check k = { 0 };
	struct order o = { 0 };
	struct walk_stats ws;
	struct ktr_trace *t;
	struct ktr_rec r;
	pid_t kids[4];
	uint64_t written = 0;
	int good;

	snprintf(name, sizeof(name), "kill%d", trial);
	ch = ktrace_setup(root, name, 4096, 8, KTRACE_GLOBAL_CHANNEL | KTRACE_FLIGHT_CHANNEL);
	if (!ch)
		return 0;
	ktrace_start(ch);
	for (int c = 0; c < 4; c++) {
		kids[c] = fork();
		if (kids[c] == 0) {
			for (uint64_t i = 1;; i++)
				ktrace_log2(3, KT_EVENT_USER, (uint64_t)c, i);
		}
	}
	{
		struct timespec ts = { 0, (long)(1000000 + rand() % 20000000) };

		nanosleep(&ts, NULL);
	}
	for (int c = 0; c < 4; c++)
		kill(kids[c], SIGKILL);
	for (int c = 0; c < 4; c++)
		waitpid(kids[c], NULL, 0);
	/*
	 * The parent goes on until its records are no longer dropped (the dead
	 * writers' sub-buffers taken back: at once when they are named, after
	 * 1 s for a writer killed before it could mark its reservation), and
	 * for at least PARENT_AFTER records.
	 */
	{
		struct timespec t0, t1;
		struct ktrace_stats a, b;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			ktrace_get_stats(ch, &a);
			for (int i = 0; i < 1000; i++)
				ktrace_log2(3, KT_EVENT_USER, 99, ++written);
			ktrace_get_stats(ch, &b);
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while ((written < PARENT_AFTER || b.dropped != a.dropped) && t1.tv_sec - t0.tv_sec < 5);
		if (b.dropped != a.dropped)
			diag("trial %d: still dropping after 5 s", trial);
	}
	ktrace_cleanup(ch);
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	ws = walk_trace(dir, kill_rec, &k);
	walk_trace(dir, check_order, &o);
	t = ktr_open(dir);
	while (ktr_next(t, &r))
		;
	/*
	 * The ring holds 8 x 4 KiB (about 1100 records): after at least
	 * PARENT_AFTER records of its own, only the parent's newest are
	 * there, the last one written last; a dead writer's sub-buffer, taken back, costs at
	 * most a few of the parent's records (dropped and counted).
	 */
	good = k.parent_last == written && k.parent_n > 500 && k.child_backwards == 0 &&
	       o.backwards == 0 && k.parent_holes <= ws.dropped && ktr_error_count(t) == 0;
	if (!good)
		diag("trial %d: parent last %llu of %llu, kept %llu, holes %llu, dropped %llu, old among new %llu, "
		     "stamps backwards %llu, walker errors %llu, reader errors %lu",
		     trial, (unsigned long long)k.parent_last, (unsigned long long)written,
		     (unsigned long long)k.parent_n,
		     (unsigned long long)k.parent_holes, (unsigned long long)ws.dropped,
		     (unsigned long long)k.child_backwards, (unsigned long long)o.backwards,
		     (unsigned long long)ws.bad, ktr_error_count(t));
	ktr_close(t);
	return good;
}

static void test_killed_writers(void)
{
	int good = 0;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int i = 0; i < 20; i++)
		good += kill_trial(i);
	is_int(good, 20,
	       "flight global channel, writers SIGKILLed inside records (20 trials): the newest records kept, "
	       "in order, none stale");
}

int main(void)
{
	root = walk_tmpdir("shared");
	test_order(4);
	test_order(8);
	test_flight_newest();
	test_killed_writers();
	return done_testing();
}

/*
 * tests/reader_callsort.c - the call sorter (reader/callsort.c) against
 * qsort(): random call trees of several threads, their calls in exit order
 * (callees before callers, as CALL records come), with gaps, equal times
 * and, in some trials, calls whose times contradict their nesting; sorted
 * in memory and through temporary files (a small memory budget), by
 * thread then entry time then depth, and by entry time.  The expected
 * order is computed here, by qsort() on the documented keys with the
 * insertion order as the last one (the sort is stable), not by the
 * sorter's code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"
#include "tests/tap.h"

#define MAXN 200000

struct item {
	struct ktr_callent e;
	uint32_t pid, tid; /* the thread's ids */
	uint32_t seq;      /* insertion order */
};

static struct item items[MAXN];
static size_t nitems;
static int order;
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One thread's calls in exit order: a random tree below depth @depth from time *@now. */
static void tree(uint32_t pid, uint32_t tid, unsigned depth, uint64_t *now, int contradict)
{
	uint64_t entry = *now;
	unsigned kids = depth < 12 ? (unsigned)(rnd() % (depth < 3 ? 6 : 3)) : 0;

	*now += rnd() % 3; /* equal times now and then */
	for (unsigned i = 0; i < kids && nitems < MAXN - 1; i++)
		tree(pid, tid, depth + 1, now, contradict);
	*now += rnd() % 4;
	if (nitems >= MAXN)
		return;
	{
		struct item *it = &items[nitems];

		memset(it, 0, sizeof(*it));
		it->e.entry_ns = entry;
		if (contradict && rnd() % 50 == 0) /* a time that contradicts the nesting */
			it->e.entry_ns = entry + 5 + rnd() % 100;
		it->e.dur_ns = *now - entry;
		it->e.local_ns = rnd() % 1000;
		it->e.key = (uint32_t)(rnd() % 100);
		it->e.depth = (uint16_t)depth;
		it->e.cpu = (uint32_t)(rnd() % 4);
		if (rnd() % 200 == 0) { /* a gap in the thread */
			it->e.flags = KTR_CALLENT_GAP;
			it->e.depth = 0;
		}
		it->pid = pid;
		it->tid = tid;
		it->seq = (uint32_t)nitems++;
	}
}

static int cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	uint64_t kx, ky;

	if (order == KTR_SORT_THREAD) {
		kx = (uint64_t)x->pid << 32 | x->tid;
		ky = (uint64_t)y->pid << 32 | y->tid;
		if (kx != ky)
			return kx < ky ? -1 : 1;
		if (x->e.entry_ns != y->e.entry_ns)
			return x->e.entry_ns < y->e.entry_ns ? -1 : 1;
		if (x->e.depth != y->e.depth)
			return x->e.depth < y->e.depth ? -1 : 1;
	} else {
		if (x->e.entry_ns != y->e.entry_ns)
			return x->e.entry_ns < y->e.entry_ns ? -1 : 1;
		if (x->e.depth != y->e.depth)
			return x->e.depth < y->e.depth ? -1 : 1;
		if (x->e.thread != y->e.thread)
			return x->e.thread < y->e.thread ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Build the calls of @nthreads threads, interleaved in time as a merged trace gives them. */
static void build(unsigned nthreads, int contradict)
{
	static struct item tmp[MAXN];
	uint64_t now[16];
	size_t start[17], pos[16], n = 0;

	nitems = 0;
	for (unsigned t = 0; t < nthreads; t++) {
		start[t] = nitems;
		now[t] = 1000 + rnd() % 50;
		/* pids and tids not in order of appearance */
		while (nitems < MAXN / nthreads * (t + 1) - 2000)
			tree(100 + (t * 7) % 3, 5000 - t * 13, 0, &now[t], contradict);
	}
	start[nthreads] = nitems;
	/* interleave the threads' sequences at random, keeping each one's order */
	for (unsigned t = 0; t < nthreads; t++)
		pos[t] = start[t];
	while (n < nitems) {
		unsigned t = (unsigned)(rnd() % nthreads);

		if (pos[t] == start[t + 1])
			continue;
		tmp[n] = items[pos[t]++];
		tmp[n].seq = (uint32_t)n;
		n++;
	}
	memcpy(items, tmp, nitems * sizeof(items[0]));
}

static void trial(const char *what, unsigned nthreads, int contradict, int ord, size_t mem)
{
	struct ktr_callsort *s = ktr_callsort_new(mem, ord);
	static struct item want[MAXN];
	struct ktr_callent got;
	size_t i = 0, bad = SIZE_MAX;
	int rc;

	order = ord;
	build(nthreads, contradict);
	for (size_t k = 0; k < nitems; k++) {
		items[k].e.thread = ktr_callsort_thread(s, items[k].pid, items[k].tid);
		if (ktr_callsort_add(s, &items[k].e) < 0)
			bail_out("ktr_callsort_add failed");
	}
	memcpy(want, items, nitems * sizeof(items[0]));
	qsort(want, nitems, sizeof(want[0]), cmp);
	while ((rc = ktr_callsort_next(s, &got)) > 0) {
		if (i < nitems && bad == SIZE_MAX && memcmp(&got, &want[i].e, sizeof(got)))
			bad = i;
		i++;
	}
	ok(rc == 0 && i == nitems && bad == SIZE_MAX,
	   "%s: %zu calls of %u threads in the order qsort() gives (%zu runs; first difference at %zd)", what,
	   nitems, nthreads, ktr_callsort_runs(s), bad == SIZE_MAX ? (ssize_t)-1 : (ssize_t)bad);
	ktr_callsort_free(s);
}

int main(void)
{
	plan(8);
	trial("by thread, in memory", 1, 0, KTR_SORT_THREAD, 64u << 20);
	trial("by thread, 4 threads, in memory", 4, 0, KTR_SORT_THREAD, 64u << 20);
	trial("by thread, 4 threads, through files", 4, 0, KTR_SORT_THREAD, 256u << 10);
	trial("by thread, times that contradict the nesting, in memory", 3, 1, KTR_SORT_THREAD, 64u << 20);
	trial("by thread, times that contradict the nesting, through files", 3, 1, KTR_SORT_THREAD,
	      256u << 10);
	trial("by entry time, 4 threads, in memory", 4, 0, KTR_SORT_ENTRY, 64u << 20);
	trial("by entry time, 4 threads, through files", 4, 0, KTR_SORT_ENTRY, 256u << 10);
	trial("by thread, 16 threads, through files", 16, 0, KTR_SORT_THREAD, 1u << 20);
	return done_testing();
}

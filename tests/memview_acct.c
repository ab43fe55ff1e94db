/*
 * tests/memview_acct.c - the pfn -> owner accounting of `ktrace memview`
 * (analysis/memview.c) on a crafted kernel-only trace (built in memory,
 * read through the reader with ktr_open_mem(), as tests/kernel_merge.c
 * does): intervals of 1 ms, three processes.
 *
 *   t=0.1 ms  A (pid 100, thread 101) allocates pfn 1000, order 2 (4 pages)
 *   t=0.2 ms  B (pid 200) allocates pfn 2000, order 0
 *   t=1.1 ms  kswapd-like C (pid 300) frees pfn 1000 order 1 (A's 1000-1001)
 *   t=1.2 ms  C frees pfn 5000, order 1: never allocated in the trace
 *   t=2.1 ms  A frees pfn 1002 order 0 itself
 *   t=2.2 ms  B allocates pfn 1003 while A still owns it (a lost free)
 *   t=2.3 ms  a failed allocation (pfn -1) and an event of order 30
 *   t=3.5 ms  the last record
 *
 * Expected (worked out by hand from the list above): A allocated 4,
 * freed 4 (2 by C, 1 itself, 1 reowned by B), peak 4, held per interval
 * 4,2,0,0; B allocated 2, held 1,1,2,2; C holds nothing but has 2
 * untracked frees; totals untracked 2, failed 1, reowned 1, bad 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/format.h>
#include <ktrace/lkst.h>

#include "reader/reader.h"
#include "tap.h"

/* The unit under test, compiled in (tests link only the reader library). */
#include "../analysis/map64.c"
#include "../analysis/memview.c"

static uint8_t data[8192];
static size_t len, hdr;
static uint32_t nrec;

static void rec(uint64_t ns, unsigned id, uint32_t tid, uint32_t pid, uint64_t pfn, uint64_t order)
{
	uint64_t w[4] = { tid | (uint64_t)pid << 32, pfn, order, 0xcc0 };
	unsigned n = id == KTRACE_LKST_MEM_PAGE_ALLOC ? 4 : 3;
	uint64_t hw = KTRACE_REC_HDR(ns, KTRACE_CLASS_KEVENT, n, id);

	memcpy(data + len, &hw, 8);
	memcpy(data + len + 8, w, 8 * n);
	len += 8 + 8 * n;
	nrec++;
}

static const char meta[] =
	"ktrace-format 1\nclock mono\nchannel kernel\nscope cpu\nlayout packed\n"
	"buf-size 8192\nstream 0 cpu cpu0\n"
	"event 64 kevent MEM_PAGE_ALLOC memory pfn,order,gfp_flags\n"
	"event 65 kevent MEM_PAGE_FREE memory pfn,order\n"
	"thread 101 100 procA\nthread 200 200 procB\nthread 300 300 kswapd0\n";

#define US 1000ull
#define T0 1000000ull

static const struct ka_mv_proc *proc(const struct ka_memview *m, uint32_t pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static void series(const struct ka_mv_proc *p, size_t n, char *buf, size_t blen)
{
	size_t o = 0;

	buf[0] = 0;
	for (size_t k = 0; k < n && p; k++)
		o += (size_t)snprintf(buf + o, blen - o, "%s%llu", k ? "," : "",
				      (unsigned long long)p->held[k]);
}

int main(void)
{
	struct ktrace_subbuf h;
	struct ka_memview m;
	struct ktr_trace *t;
	struct ktr_rec r;
	const struct ka_mv_proc *a, *b, *c;
	char s[256];
	uint64_t last = 0;
	int first = 1, fed = 0;

	hdr = 0;
	len = KTRACE_SUBBUF_HDR_SIZE;
	rec(T0 + 100 * US, KTRACE_LKST_MEM_PAGE_ALLOC, 101, 100, 1000, 2);
	rec(T0 + 200 * US, KTRACE_LKST_MEM_PAGE_ALLOC, 200, 200, 2000, 0);
	rec(T0 + 1100 * US, KTRACE_LKST_MEM_PAGE_FREE, 300, 300, 1000, 1);
	rec(T0 + 1200 * US, KTRACE_LKST_MEM_PAGE_FREE, 300, 300, 5000, 1);
	rec(T0 + 2100 * US, KTRACE_LKST_MEM_PAGE_FREE, 101, 100, 1002, 0);
	rec(T0 + 2200 * US, KTRACE_LKST_MEM_PAGE_ALLOC, 200, 200, 1003, 0);
	rec(T0 + 2300 * US, KTRACE_LKST_MEM_PAGE_ALLOC, 200, 200, UINT64_MAX, 0);
	rec(T0 + 2300 * US, KTRACE_LKST_MEM_PAGE_FREE, 200, 200, 7000, 30);
	rec(T0 + 3500 * US, KTRACE_LKST_MEM_PAGE_ALLOC, 300, 300, 9000, 0);
	memset(&h, 0, sizeof(h));
	h.magic = KTRACE_SUBBUF_MAGIC;
	h.hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	h.flags = KTRACE_SBF_CLOSED;
	h.first_ts = T0 + 100 * US;
	h.used = (uint32_t)(len - KTRACE_SUBBUF_HDR_SIZE);
	h.nrec = nrec;
	memcpy(data + hdr, &h, sizeof(h));

	{
		struct ktr_memfile files[] = {
			{ "kernel/metadata", meta, sizeof(meta) - 1 },
			{ "kernel/cpu0", data, len },
		};

		t = ktr_open_mem("mv", files, 2);
		ok(t != NULL, "a crafted kernel-only trace with page events opens");
		if (!t)
			return done_testing();
		memset(&m, 0, sizeof(m));
		m.interval_ns = 1000 * US;
		while (ktr_next(t, &r)) {
			if (first) {
				m.first_ns = r.ns - 100 * US; /* interval 0 starts at T0 */
				first = 0;
			}
			last = r.ns;
			fed += ka_memview_feed(&m, &r) == 1;
		}
		is_int((int)ktr_error_count(t), 0, "the reader finds no error");
		ktr_close(t);
	}
	is_int(fed, 7, "7 events counted (a failed allocation and an order-30 event are not)");
	is_int(ka_memview_finish(&m, last), 0, "ka_memview_finish");
	is_int((int)m.nint, 4, "4 intervals of 1 ms");
	a = proc(&m, 100);
	b = proc(&m, 200);
	c = proc(&m, 300);
	ok(a && b && c, "three processes, by tgid (A's thread 101 counts for pid 100)");
	if (!a || !b || !c)
		return done_testing();
	is_int((int)a->total_alloc, 4, "A allocated 4 pages (order 2)");
	is_int((int)a->total_freed, 4, "A's 4 pages were all freed");
	is_int((int)a->freed_by_others, 2, "2 of them by another process (C)");
	is_int((int)a->peak, 4, "A's peak: 4 pages");
	is_int((int)a->cur, 0, "A holds nothing at the end");
	series(a, m.nint, s, sizeof(s));
	is_str(s, "4,2,0,0", "A's held pages at each interval's end");
	is_int((int)a->freed[1], 2, "C's free lowered A's count in interval 1");
	is_int((int)b->total_alloc, 2, "B allocated 2 pages");
	series(b, m.nint, s, sizeof(s));
	is_str(s, "1,1,2,2", "B's held pages (it took over page 1003 in interval 2)");
	is_int((int)c->untracked, 2, "C freed 2 pages allocated before the trace: counted apart");
	is_int((int)c->total_freed, 0, "... not as frees of C's own pages");
	series(c, m.nint, s, sizeof(s));
	is_str(s, "0,0,0,1", "C's count never went negative (its one allocation at 3.5 ms)");
	is_int((int)m.untracked, 2, "untracked frees in total: 2 pages");
	is_int((int)m.failed, 1, "failed allocations: 1");
	is_int((int)m.reowned, 1, "pages allocated again while owned: 1");
	is_int((int)m.bad, 1, "bad events (order 30): 1");
	ka_memview_free(&m);
	ok(m.procs == NULL && m.nprocs == 0, "ka_memview_free leaves it empty");
	return done_testing();
}

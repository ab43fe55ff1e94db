/*
 * analysis/memview.c - physical pages per process over time (`ktrace
 * memview`, LKST's Memory Allocation Viewer): pfn -> owner accounting of
 * the MEM_PAGE_ALLOC / MEM_PAGE_FREE kernel events.  API and rules in
 * analysis/analysis.h ("physical pages per process over time").
 *
 * Each page of an allocation (2^order from pfn) is entered in a hash map
 * pfn -> owning process; a free looks each page up, lowers its owner's
 * count in the free's interval and marks it KA_MV_NOBODY (the map never
 * shrinks: 24 bytes per page ever seen).  Per process, pages allocated and
 * freed are kept per interval; held pages at each interval's end are the
 * running sum, computed by ka_memview_finish().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/format.h>
#include <ktrace/lkst.h>

#include "analysis/analysis.h"
#include "reader/reader.h"

/*
 * The buddy allocator's largest order is 10 (MAX_ORDER - 1 in 6.1,
 * MAX_PAGE_ORDER since 6.8: 4 MiB blocks on x86-64); a larger one is a
 * corrupt event, and refusing it bounds what one record can cost here
 * (1024 map entries).
 */
#define MAX_ORDER_SEEN 10

/* The index of process @pid (created on first sight), or -1 (ENOMEM). */
static long proc_index(struct ka_memview *m, uint32_t pid, uint32_t tid)
{
	long i = ka_map64_get(&m->proc_of, pid);

	if (i >= 0)
		return i;
	if (m->nprocs == m->pcap) {
		size_t cap = m->pcap ? 2 * m->pcap : 16;
		struct ka_mv_proc *n = realloc(m->procs, cap * sizeof(*n));

		if (!n)
			return -1;
		m->procs = n;
		m->pcap = cap;
	}
	if (ka_map64_put(&m->proc_of, pid, (uint32_t)m->nprocs) < 0)
		return -1;
	memset(&m->procs[m->nprocs], 0, sizeof(m->procs[0]));
	m->procs[m->nprocs].pid = pid;
	m->procs[m->nprocs].tid = tid;
	return (long)m->nprocs++;
}

/* Make @p's arrays hold interval @k.  Return: 0 or -1 (ENOMEM). */
static int proc_grow(struct ka_mv_proc *p, size_t k)
{
	size_t cap;
	uint64_t *a, *f, *h;

	if (k < p->cap)
		return 0;
	cap = p->cap ? p->cap : 16;
	while (cap <= k)
		cap *= 2;
	a = realloc(p->alloc, cap * sizeof(*a));
	if (a)
		p->alloc = a;
	f = realloc(p->freed, cap * sizeof(*f));
	if (f)
		p->freed = f;
	h = realloc(p->held, cap * sizeof(*h));
	if (h)
		p->held = h;
	if (!a || !f || !h)
		return -1;
	memset(a + p->cap, 0, (cap - p->cap) * sizeof(*a));
	memset(f + p->cap, 0, (cap - p->cap) * sizeof(*f));
	memset(h + p->cap, 0, (cap - p->cap) * sizeof(*h));
	p->cap = cap;
	return 0;
}

/* The interval holding time @ns (0 for times before first_ns). */
static size_t interval_of(const struct ka_memview *m, uint64_t ns)
{
	return ns > m->first_ns ? (size_t)((ns - m->first_ns) / m->interval_ns) : 0;
}

/* Note running out of memory.  Return: -ENOMEM. */
static int oom(struct ka_memview *m)
{
	m->oom = 1;
	return -ENOMEM;
}

int ka_memview_page(struct ka_memview *m, uint64_t ns, int alloc, uint32_t tid, uint32_t pid,
		    uint64_t pfn, unsigned order)
{
	size_t k = interval_of(m, ns);
	uint64_t n = 1ull << (order <= MAX_ORDER_SEEN ? order : 0);
	long me;

	if (order > MAX_ORDER_SEEN) {
		m->bad++;
		return 0;
	}
	if (alloc && pfn == UINT64_MAX) {
		m->failed++;
		return 0;
	}
	m->events++;
	if (k + 1 > m->nint)
		m->nint = k + 1;
	me = proc_index(m, pid ? pid : tid, tid);
	if (me < 0 || proc_grow(&m->procs[me], k) < 0)
		return oom(m);
	for (uint64_t i = 0; i < n; i++) {
		long o = ka_map64_get(&m->owner, pfn + i);
		struct ka_mv_proc *p;

		if (o >= 0 && o != KA_MV_NOBODY) {
			/* an owned page: freed, or allocated again (a free was lost) */
			p = &m->procs[o];
			if (proc_grow(p, k) < 0)
				return oom(m);
			p->freed[k]++;
			p->total_freed++;
			p->cur--;
			if (alloc)
				m->reowned++;
			else if (o != me)
				p->freed_by_others++;
		} else if (!alloc) {
			m->untracked++;
			m->procs[me].untracked++;
		}
		if (ka_map64_put(&m->owner, pfn + i, alloc ? (uint32_t)me : KA_MV_NOBODY) < 0)
			return oom(m);
		if (alloc) {
			p = &m->procs[me];
			p->alloc[k]++;
			p->total_alloc++;
			if (++p->cur > p->peak) {
				p->peak = p->cur;
				p->peak_ns = ns;
			}
		}
	}
	return 0;
}

int ka_memview_feed(struct ka_memview *m, const struct ktr_rec *r)
{
	int alloc;

	if (r->kind != KTR_RECORD || r->cls != KTRACE_CLASS_KEVENT)
		return 0;
	if (r->id == KTRACE_LKST_MEM_PAGE_ALLOC)
		alloc = 1;
	else if (r->id == KTRACE_LKST_MEM_PAGE_FREE)
		alloc = 0;
	else
		return 0;
	if (r->nwords < 3) {
		m->bad++;
		return 0;
	}
	if (r->w[2] > MAX_ORDER_SEEN) {
		m->bad++;
		return 0;
	}
	if (alloc && r->w[1] == UINT64_MAX) {
		m->failed++;
		return 0;
	}
	/* word 0: pid | tgid << 32; the reader's r->pid also knows thread lines */
	return ka_memview_page(m, r->ns, alloc, (uint32_t)r->w[0],
			       KTRACE_KEVENT_TGID(r->w[0]) ? KTRACE_KEVENT_TGID(r->w[0]) : r->pid, r->w[1],
			       (unsigned)r->w[2]) < 0 ? -ENOMEM : 1;
}

int ka_memview_finish(struct ka_memview *m, uint64_t last_ns)
{
	size_t k = interval_of(m, last_ns);

	if (k + 1 > m->nint)
		m->nint = k + 1;
	for (size_t i = 0; i < m->nprocs; i++) {
		struct ka_mv_proc *p = &m->procs[i];
		uint64_t h = 0;

		if (proc_grow(p, m->nint - 1) < 0)
			return oom(m);
		for (size_t j = 0; j < m->nint; j++) {
			h += p->alloc[j] - p->freed[j];
			p->held[j] = h;
		}
	}
	return 0;
}

void ka_memview_free(struct ka_memview *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		free(m->procs[i].alloc);
		free(m->procs[i].freed);
		free(m->procs[i].held);
	}
	free(m->procs);
	ka_map64_free(&m->proc_of);
	ka_map64_free(&m->owner);
	memset(m, 0, sizeof(*m));
}

/*
 * reader/outer.c - a function's total time counted once through recursion
 * (ktrace kd's Time, as uftrace's report counts it): the sum of the
 * durations of its OUTERMOST active calls, so fib(20)'s Time is the time
 * of the outer fib call, never more than its caller's or its thread's.
 *
 * Calls arrive in record order: per thread by exit time, every callee
 * before its caller.  So a call cannot know yet whether a call of the same
 * function will turn out to contain it; instead, when a call C of function
 * F arrives, the calls of F nested in C (which were counted when they
 * arrived) are taken back: ktr_outer_add() returns C's duration minus the
 * durations of the outermost F calls inside C.  Summed over all calls of
 * F that is exactly the sum over its outermost calls.
 *
 * Per (thread, function) the builder keeps the calls of F not yet known
 * to be nested in another F call ("items"), in exit order; calls of one
 * thread are nested or disjoint, so the items nested in C are the newest
 * ones with an entry at or after C's entry.  Memory: items are merged
 * when no future call can contain one without the other.  A call's future
 * containers are its still open ancestors, and with records carrying the
 * call's true depth on the shadow stack these are known: if the records
 * that arrived since call I include one at depth j, I's ancestor at depth
 * j (and every deeper one) has returned (two calls at one depth of one
 * thread are disjoint), whether or not it was recorded.  So I's open
 * ancestors are those at depths below m(I) = min(I's depth, depths of the
 * records since), and two items with the same m have the same open
 * ancestors: they are merged into one (entry = the earlier, durations
 * added).  Hence at most one item per depth (once equal m() values are
 * merged: a record of another function can make them equal).  m() is
 * answered from a per-thread monotonic stack of (record number, depth):
 * O(log depth) per query, O(depth) memory.
 *
 * Exact when a call left out of the trace has no recorded callee, as with
 * a mintime filter (tests/reader_outer.c).  A funclist filter that leaves
 * out a caller P1 of F and records a later F call P2 at P1's depth may
 * merge an F under P1 with an F under P2 (nothing shows P1 returned), and
 * P2 then counts without taking the one under it back.
 *
 * Not thread-safe (one builder per reader).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

struct oitem {
	uint64_t entry; /* earliest member's entry, ns */
	uint64_t sum;   /* the members' durations, ns */
	uint64_t seq;   /* record number of the newest member */
	uint32_t depth; /* the newest member's depth */
	uint32_t dmin;  /* the shallowest member's depth */
};

struct omono {
	uint64_t seq;
	uint32_t depth;
};

struct othread {
	uint64_t id; /* pid << 32 | tid */
	uint32_t ord;
	int used;
	uint64_t seq;       /* records of the thread so far */
	struct omono *ms;   /* monotonic stack: seq and depth both increasing */
	size_t nms, capms;
};

/*
 * One (thread, function) list: a 64-byte slot of the table, holding its
 * first item itself (most lists hold one: kd finds the call's list and
 * item in one cache line), more items on the heap.
 */
struct olist {
	uint32_t tkey; /* the thread's ordinal */
	uint32_t used;
	uint32_t n, cap; /* items; room (1: the inline one) */
	uint64_t fkey;
	struct oitem *heap; /* cap > 1: the items */
	struct oitem in;
};

_Static_assert(sizeof(struct olist) == 64, "a list is one cache line");

static struct oitem *items(struct olist *l)
{
	return l->cap > 1 ? l->heap : &l->in;
}

struct ktr_outer {
	struct othread *thr;
	size_t nthr, capthr;
	struct othread *last;
	struct olist *lists;
	size_t nlists, caplists;
};

struct ktr_outer *ktr_outer_new(void)
{
	return calloc(1, sizeof(struct ktr_outer));
}

void ktr_outer_free(struct ktr_outer *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->capthr; i++)
		free(o->thr[i].ms);
	for (size_t i = 0; i < o->caplists; i++)
		free(o->lists[i].heap);
	free(o->thr);
	free(o->lists);
	free(o);
}

size_t ktr_outer_items(const struct ktr_outer *o)
{
	size_t n = 0;

	for (size_t i = 0; i < o->caplists; i++)
		n += o->lists[i].n;
	return n;
}

static size_t mix(uint64_t a, uint64_t b, size_t mask)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b + 0x632be59bd9b4e019ull + (a << 6));

	h *= 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 31)) & mask;
}

static struct othread *thread_of(struct ktr_outer *o, uint64_t id)
{
	size_t i, mask;

	if (o->last && o->last->id == id)
		return o->last;
	if ((o->nthr + 1) * 2 > o->capthr) {
		size_t cap = o->capthr ? 2 * o->capthr : 64;
		struct othread *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < o->capthr; k++) {
			if (!o->thr[k].used)
				continue;
			for (i = mix(o->thr[k].id, 0, cap - 1); n[i].used; i = (i + 1) & (cap - 1))
				;
			n[i] = o->thr[k];
		}
		free(o->thr);
		o->thr = n;
		o->capthr = cap;
	}
	mask = o->capthr - 1;
	for (i = mix(id, 0, mask); o->thr[i].used; i = (i + 1) & mask)
		if (o->thr[i].id == id)
			return o->last = &o->thr[i];
	o->thr[i].used = 1;
	o->thr[i].id = id;
	o->thr[i].ord = (uint32_t)o->nthr++;
	return o->last = &o->thr[i];
}

static struct olist *list_of(struct ktr_outer *o, uint32_t ord, uint64_t fkey)
{
	size_t i, mask;

	if ((o->nlists + 1) * 2 > o->caplists) {
		size_t cap = o->caplists ? 2 * o->caplists : 1024;
		struct olist *n = aligned_alloc(64, cap * sizeof(*n));

		if (!n)
			return NULL;
		memset(n, 0, cap * sizeof(*n));
		for (size_t k = 0; k < o->caplists; k++) {
			if (!o->lists[k].used)
				continue;
			for (i = mix(o->lists[k].tkey, o->lists[k].fkey, cap - 1); n[i].used;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = o->lists[k];
		}
		free(o->lists);
		o->lists = n;
		o->caplists = cap;
	}
	mask = o->caplists - 1;
	for (i = mix(ord, fkey, mask); o->lists[i].used; i = (i + 1) & mask)
		if (o->lists[i].tkey == ord && o->lists[i].fkey == fkey)
			return &o->lists[i];
	o->lists[i].used = 1;
	o->lists[i].tkey = ord;
	o->lists[i].fkey = fkey;
	o->lists[i].cap = 1;
	o->nlists++;
	return &o->lists[i];
}

void ktr_outer_prefetch(const struct ktr_outer *o, const struct ktr_call *c, uint64_t key)
{
	const struct othread *t = o->last;

	if (t && o->caplists && t->id == ((uint64_t)c->pid << 32 | c->tid))
		__builtin_prefetch(&o->lists[mix(t->ord, key, o->caplists - 1)]);
}

/* The least depth of the thread's records numbered after @seq (UINT32_MAX: none). */
static uint32_t min_depth_since(const struct othread *t, uint64_t seq)
{
	size_t lo = 0, hi = t->nms;

	/* the items asked about are mostly recent: a few steps from the top first */
	for (int k = 0; k < 4 && hi > 0 && t->ms[hi - 1].seq > seq; k++)
		hi--;
	if (hi == 0 || t->ms[hi - 1].seq <= seq)
		return hi < t->nms ? t->ms[hi].depth : UINT32_MAX;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ms[mid].seq > seq)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < t->nms ? t->ms[lo].depth : UINT32_MAX;
}

static uint32_t m_of(const struct othread *t, const struct oitem *it)
{
	uint32_t m = min_depth_since(t, it->seq);

	return m < it->depth ? m : it->depth;
}

/* Merge the list's newest item into the one before it. */
static void merge_last(struct olist *l)
{
	struct oitem *a = &items(l)[l->n - 2], *b = &items(l)[l->n - 1];

	if (b->entry < a->entry)
		a->entry = b->entry;
	if (b->dmin < a->dmin)
		a->dmin = b->dmin;
	a->sum += b->sum;
	a->seq = b->seq;
	a->depth = b->depth;
	l->n--;
}

uint64_t ktr_outer_add(struct ktr_outer *o, const struct ktr_call *c, uint64_t key)
{
	struct othread *t = thread_of(o, (uint64_t)c->pid << 32 | c->tid);
	struct olist *l;
	struct oitem *it;
	uint64_t nested = 0;
	uint32_t mlast = UINT32_MAX; /* m() of the item before the new one, once known */

	if (!t)
		return c->dur_ns;
	/* this record in the thread's monotonic stack */
	t->seq++;
	while (t->nms && t->ms[t->nms - 1].depth >= c->depth)
		t->nms--;
	if (t->nms == t->capms) {
		size_t cap = t->capms ? 2 * t->capms : 64;
		struct omono *n = realloc(t->ms, cap * sizeof(*n));

		if (!n)
			return c->dur_ns;
		t->ms = n;
		t->capms = cap;
	}
	t->ms[t->nms].seq = t->seq;
	t->ms[t->nms].depth = c->depth;
	t->nms++;

	l = list_of(o, t->ord, key);
	if (!l)
		return c->dur_ns;
	it = items(l);
	while (l->n && it[l->n - 1].entry >= c->entry_ns && it[l->n - 1].dmin > c->depth)
		nested += it[--l->n].sum;
	if (l->n == l->cap) {
		uint32_t cap = l->cap > 1 ? 2 * l->cap : 4;
		struct oitem *n = realloc(l->cap > 1 ? l->heap : NULL, cap * sizeof(*n));

		if (!n) /* the call stays uncounted as a container: never negative */
			return c->dur_ns > nested ? c->dur_ns - nested : 0;
		if (l->cap == 1)
			n[0] = l->in;
		l->heap = it = n;
		l->cap = cap;
	}
	/* the items' m() never decreases from older to newer, and a record
	 * of another function at depth d lowers every m() >= d to d: since
	 * this list's last call, its newest items may have come to share
	 * one m(); merge them first, or a function called once per call of
	 * its caller would keep an item per caller's call (memory as long
	 * as the trace) */
	if (l->n) {
		uint32_t m = m_of(t, &it[l->n - 1]); /* a merged item keeps the newer one's m() */

		while (l->n >= 2 && m_of(t, &it[l->n - 2]) == m)
			merge_last(l);
		mlast = m;
	}
	it[l->n].entry = c->entry_ns;
	it[l->n].sum = c->dur_ns;
	it[l->n].seq = t->seq;
	it[l->n].depth = it[l->n].dmin = c->depth;
	l->n++;
	/* merge with older items that have the same open ancestors (the
	 * first one's m() is known from above) */
	while (l->n >= 2) {
		if (mlast == UINT32_MAX)
			mlast = m_of(t, &it[l->n - 2]);
		if (mlast != c->depth)
			break;
		merge_last(l);
		mlast = UINT32_MAX;
	}
	return c->dur_ns > nested ? c->dur_ns - nested : 0;
}

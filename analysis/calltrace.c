/*
 * analysis/calltrace.c - the nested call traces of `ktrace kd -c` (KFT's
 * kd, seed 002): the calls of a profile, sorted by entry time
 * (reader/callsort.c), walked thread by thread (or interlaced in time)
 * with each call's nesting level, the signal-handler sections around the
 * calls a handler made (kd marked interrupts this way), the gaps where
 * records were lost, and, with kernel events, every time the thread left
 * the CPU inside its calls, at the level where it happened (API in
 * analysis/analysis.h).  The caller formats what it is told.
 *
 * The level of a call is the number of recorded calls of its thread that
 * are still open around it: a stack of (entry, exit, depth) per thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "reader/sched.h"

struct open_call {
	uint64_t entry, exit;
	unsigned depth;
};

/* Per-thread state of the walk. */
struct tstate {
	struct open_call *st;
	size_t n, cap;
	unsigned sig;
	unsigned base[16]; /* level where the section of signal nesting i began */
	uint64_t cursor;   /* context switches before this time are reported */
	uint64_t max_exit; /* the latest exit of the thread's calls so far */
	int used;
};

struct walk {
	struct ktr_callsort *s;
	struct ktr_sched *sched;
	const struct ka_ct_ops *ops;
	void *arg;
	struct tstate *ts;
	size_t nts;
	uint32_t cur; /* the thread whose lines came last, UINT32_MAX: none */
	int several, interlace;
};

/* A switch-out of the thread being flushed, at the level of its calls still open. */
struct swctx {
	struct walk *w;
	struct tstate *t;
	uint64_t from, to;
	uint32_t tid;
};

static void on_offcpu(void *arg, const struct ktr_offcpu *o)
{
	struct swctx *x = arg;
	struct tstate *t = x->t;

	if (o->out_ns < x->from || o->out_ns >= x->to)
		return;
	while (t->n && t->st[t->n - 1].exit <= o->out_ns)
		t->n--;
	x->w->ops->offcpu(x->w->arg, o, x->tid, (unsigned)t->n);
}

/* Report the switch-outs of thread @ord in [its cursor, @to). */
static void flush_switches(struct walk *w, uint32_t ord, uint64_t to)
{
	struct swctx x = { w, &w->ts[ord], w->ts[ord].cursor, to, 0 };
	uint32_t pid = 0;

	if (!w->sched || to <= w->ts[ord].cursor)
		return;
	ktr_callsort_thread_ids(w->s, ord, &pid, &x.tid);
	ktr_sched_offcpu_each(w->sched, x.tid, x.from, to - 1, on_offcpu, &x);
	w->ts[ord].cursor = to;
}

static void thread(struct walk *w, uint32_t ord)
{
	uint32_t pid = 0, tid = 0;

	ktr_callsort_thread_ids(w->s, ord, &pid, &tid);
	w->ops->thread(w->arg, pid, tid);
}

/* Thread @ord has switch-outs in [its cursor, @to): say so, then them. */
static void switches_until(struct walk *w, uint32_t ord, uint64_t to, int label)
{
	uint32_t pid = 0, tid = 0;
	uint64_t n = 0;

	if (!w->ts[ord].used || to <= w->ts[ord].cursor)
		return;
	ktr_callsort_thread_ids(w->s, ord, &pid, &tid);
	ktr_sched_offcpu(w->sched, tid, w->ts[ord].cursor, to - 1, &n, NULL);
	if (!n)
		return;
	if (label && ord != w->cur)
		thread(w, ord);
	w->cur = ord;
	flush_switches(w, ord, to);
}

/*
 * Bring thread @t's signal-handler sections to nesting @sig: an end for
 * each one left, a start for each one entered (which begins at level @level).
 */
static void section_mark(struct walk *w, struct tstate *t, unsigned sig, unsigned level)
{
	while (t->sig > sig) {
		t->sig--;
		w->ops->section(w->arg, 0);
	}
	while (t->sig < sig && t->sig < 15) {
		t->sig++;
		t->base[t->sig] = level;
		w->ops->section(w->arg, 1);
	}
}

/* The switch-outs before call @e, where they happened. */
static void switches_before(struct walk *w, const struct ktr_callent *e)
{
	struct tstate *t = &w->ts[e->thread];

	/* the previous thread's, to its end; with -i every thread's so far */
	if (!w->interlace && w->cur != UINT32_MAX && w->cur != e->thread)
		flush_switches(w, w->cur, w->ts[w->cur].max_exit);
	for (uint32_t i = 0; w->interlace && i < w->nts; i++)
		if (i != e->thread)
			switches_until(w, i, e->entry_ns, 1);
	if (!t->used)
		t->cursor = e->entry_ns;
	if (w->cur == e->thread)
		flush_switches(w, e->thread, e->entry_ns);
	if (e->entry_ns + e->dur_ns > t->max_exit)
		t->max_exit = e->entry_ns + e->dur_ns;
	t->used = 1;
}

/* Call @e's level and the marks before its name; pushes it. */
static unsigned place(struct walk *w, const struct ktr_callent *e)
{
	struct tstate *t = &w->ts[e->thread];
	unsigned level;

	while (t->n) {
		const struct open_call *a = &t->st[t->n - 1];

		if (a->entry <= e->entry_ns && e->entry_ns + e->dur_ns <= a->exit && a->depth < e->depth)
			break;
		t->n--;
	}
	level = (unsigned)t->n;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		struct open_call *n = realloc(t->st, cap * sizeof(*n));

		if (n) {
			t->st = n;
			t->cap = cap;
		}
	}
	if (t->n < t->cap)
		t->st[t->n++] = (struct open_call){ e->entry_ns, e->entry_ns + e->dur_ns, e->depth };
	/*
	 * A call at a section's own nesting that no call of the section
	 * contains (its level is back at the section's base) began another
	 * handler invocation: end the section, start a new one.
	 */
	if (e->sig && t->sig == e->sig && level <= t->base[t->sig])
		section_mark(w, t, e->sig - 1, level);
	section_mark(w, t, e->sig, level);
	return e->sig ? level - (level >= t->base[t->sig] ? t->base[t->sig] : level) : level;
}

static int sorter_next(void *src, struct ktr_callent *e)
{
	return ktr_callsort_next(src, e);
}

int ka_calltrace_walk(struct ktr_callsort *s, struct ktr_sched *sched, int interlace,
		      const struct ka_ct_ops *ops, void *arg)
{
	return ka_calltrace_walk_from(s, sorter_next, s, sched, interlace, ops, arg);
}

int ka_calltrace_walk_from(struct ktr_callsort *s, int (*next)(void *src, struct ktr_callent *e), void *src,
			   struct ktr_sched *sched, int interlace, const struct ka_ct_ops *ops, void *arg)
{
	struct walk w = { s, sched, ops, arg, NULL, 0, UINT32_MAX, 0, interlace };
	struct ktr_callent e;
	uint32_t p, t;
	int rc;

	w.several = ktr_callsort_thread_ids(s, 1, &p, &t);
	while ((rc = next(src, &e)) > 0) {
		uint32_t pid = 0, tid = 0;

		if (e.thread >= w.nts) {
			size_t n = e.thread + 16;
			struct tstate *nt = realloc(w.ts, n * sizeof(*nt));

			if (!nt) {
				rc = -ENOMEM;
				break;
			}
			memset(nt + w.nts, 0, (n - w.nts) * sizeof(*nt));
			w.ts = nt;
			w.nts = n;
		}
		if (sched && !(e.flags & KTR_CALLENT_GAP))
			switches_before(&w, &e);
		if (!interlace && w.cur != UINT32_MAX && w.cur != e.thread && w.cur < w.nts)
			section_mark(&w, &w.ts[w.cur], 0, 0); /* the previous thread's sections end */
		if (w.several && e.thread != w.cur) {
			thread(&w, e.thread);
			if (sched && !(e.flags & KTR_CALLENT_GAP))
				flush_switches(&w, e.thread, e.entry_ns);
		}
		w.cur = e.thread;
		if (e.flags & KTR_CALLENT_GAP) {
			ops->gap(arg, e.key, e.local_ns);
			continue;
		}
		{
			unsigned marks = place(&w, &e);

			ktr_callsort_thread_ids(s, e.thread, &pid, &tid);
			if (ops->call(arg, &e, tid, marks) < 0)
				break;
		}
	}
	/* the switches inside the last calls */
	for (uint32_t i = 0; sched && rc >= 0 && i < w.nts; i++)
		switches_until(&w, i, w.ts[i].max_exit, w.several);
	for (size_t i = 0; i < w.nts; i++) {
		section_mark(&w, &w.ts[i], 0, 0); /* sections still open at the end */
		free(w.ts[i].st);
	}
	free(w.ts);
	return rc < 0 ? rc : 0;
}

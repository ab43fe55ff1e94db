/*
 * reader/preorder.c - a function trace's calls in entry order, streamed:
 * what the call sorter (reader/callsort.c) gives after reading the whole
 * trace, thread by thread (KTR_SORT_THREAD, kd -c) or all threads by
 * entry time (KTR_SORT_ENTRY, addr2sym and the exports: each thread's
 * windows merged by a heap), given window by window as the trace is read,
 * so that the first line comes at once and nothing is sorted on disk
 * (issue 29).
 *
 * A call's record is written when it returns, so a caller's comes after
 * its callees'.  Cut a thread's stream at each sub-buffer b that holds a
 * call, at the time B_b its first call returned.  The calls entered in
 * [B_b, B_b') (b' the next such sub-buffer) are
 *   - the calls of sub-buffer b entered at or after B_b, and
 *   - the calls still open at B_b' that were entered after B_b: the
 *     "chain" at b' (calls entered before B_b' whose records lie in b' or
 *     later) less the chain at b;
 * so each window is sorted alone (in memory), and the windows follow one
 * another.  The chain at b' is the chain at b less the calls that returned
 * before b', plus the new calls found by looking ahead: a call at depth d
 * open at B_b' returns before any call that begins after B_b' at depth d
 * or less (one shadow stack), so its record is the first call record at
 * depth <= d from sub-buffer b' on, if that record's call began before
 * B_b'.  The compressed frames' depth_min (docs/FORMAT.md) says which
 * sub-buffers can hold such a record: one is decompressed per look-up,
 * and a few decoded sub-buffers are kept.
 *
 * A stream whose slot passed from one thread to another (a thread ended,
 * a process forked) is read as one part per thread.  Only for traces
 * where this is exact (ktr_preorder_new()): compressed thread streams,
 * with no gap of any kind, no kernel events, no calls in the shared
 * stream, no ucontext switches.  Checked as it goes: a call of sub-buffer
 * b entered before B_b that the chain did not have is an error (-EPROTO),
 * never a silent misorder.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

#define NCACHE 4 /* decoded sub-buffers kept per stream */

struct dsb {
	size_t j;          /* sub-buffer index; SIZE_MAX: empty slot */
	size_t n;
	struct ktr_call *c;
	uint64_t used;     /* LRU stamp */
};

struct member {
	struct ktr_call c;
	size_t j, pos;     /* where its record is: sub-buffer, call index there */
};

/* A thread's part of a stream: the sub-buffers [lo, hi) it wrote (a slot passes to another thread when one ends). */
struct pstream {
	unsigned si;
	uint32_t pid, tid;
	uint64_t first_ns;
	size_t lo, hi;
	int *dmin;         /* per sub-buffer from lo: smallest call depth; -1 unknown, INT_MAX none */
	struct ktr_peek *peek;
	struct dsb cache[NCACHE];
	struct member *chain, *next; /* calls open at the boundary, by depth; the next chain */
	size_t nchain, nnext, cap;
	size_t b;          /* the boundary's sub-buffer; SIZE_MAX: not started */
	uint64_t bns;      /* B_b: when the boundary's first call returned */
	int done;
	/* KTR_SORT_ENTRY: the threads merged by entry time */
	struct ktr_callsort *win; /* this part's windows */
	struct ktr_callent head;  /* its next entry, while it is in the heap */
	uint32_t ord;             /* its thread's ordinal in the caller's sorter */
	uint64_t first_exit;      /* its first call's return, and stream: the numbering */
};

struct ktr_preorder {
	struct ktr_trace *t;
	struct ktr_callsort *s;
	uint32_t (*key)(void *arg, const struct ktr_call *c);
	void *arg;
	struct pstream *ps;
	size_t nps, capps, cur;
	size_t maxcalls;   /* calls a sub-buffer can hold */
	uint64_t stamp;
	int err;
	int entry;         /* @s is KTR_SORT_ENTRY: merge the parts */
	struct pstream **heap; /* entry: the parts with a head, least first */
	size_t nheap;
};

/* Does @t qualify?  0, or -ENOTSUP. */
static int eligible(struct ktr_trace *t)
{
	if (t->sub || t->kernel_only || !t->nstreams || (t->ctl.flags & KTRACE_CTL_UCONTEXT))
		return -ENOTSUP;
	for (unsigned i = 0; i < t->nstreams; i++) {
		const struct ktr_stream *s = &t->streams[i];

		if ((s->info.have_ctl && s->info.dropped) || ktr_stream_cut(s))
			return -ENOTSUP;
		for (size_t j = 0; j < s->nsb; j++) {
			struct ktr_subbuf_info in;

			ktr_subbuf_at(t, i, j, &in);
			if (in.corrupt || !s->sb[j].framed || in.lost || (in.flags & KTRACE_SBF_CTX) ||
			    s->sb[j].seq != s->seq_base + j || !in.tid)
				return -ENOTSUP;
		}
	}
	return 0;
}

/* The calls of sub-buffer @j of @ps (one of the last NCACHE decoded).  NULL: no memory. */
static const struct dsb *decode(struct ktr_preorder *p, struct pstream *ps, size_t j)
{
	struct dsb *d = &ps->cache[0];

	for (int k = 0; k < NCACHE; k++) {
		if (ps->cache[k].j == j) {
			ps->cache[k].used = ++p->stamp;
			return &ps->cache[k];
		}
		if (ps->cache[k].used < d->used)
			d = &ps->cache[k];
	}
	if (!d->c && !(d->c = malloc(p->maxcalls * sizeof(*d->c))))
		return NULL;
	d->n = ktr_peek_calls(p->t, ps->peek, j, d->c, p->maxcalls);
	d->j = j;
	d->used = ++p->stamp;
	if (ps->dmin[j - ps->lo] < 0) { /* the index did not say: now it is known */
		int m = INT_MAX;

		for (size_t i = 0; i < d->n; i++)
			if ((int)d->c[i].depth < m)
				m = (int)d->c[i].depth;
		ps->dmin[j - ps->lo] = m;
	}
	return d;
}

/* Give back @ps's decoded sub-buffers (a stream done, or not begun). */
static void drop_cache(struct pstream *ps)
{
	for (int k = 0; k < NCACHE; k++) {
		free(ps->cache[k].c);
		ps->cache[k].c = NULL;
		ps->cache[k].j = SIZE_MAX;
		ps->cache[k].used = 0;
	}
}

/* The first sub-buffer from @j on that holds a call (@ps->hi: none), or SIZE_MAX (no memory). */
static size_t next_with_calls(struct ktr_preorder *p, struct pstream *ps, size_t j)
{
	for (; j < ps->hi; j++) {
		if (ps->dmin[j - ps->lo] < 0 && !decode(p, ps, j))
			return SIZE_MAX;
		if (ps->dmin[j - ps->lo] != INT_MAX)
			return j;
	}
	return ps->hi;
}

/*
 * The first call at depth @d or less at or after position (*@j, *@pos),
 * into *@m; the position moves to it.  Return: 1 found, 0 none, -ENOMEM.
 */
static int first_at_most(struct ktr_preorder *p, struct pstream *ps, size_t *j, size_t *pos, unsigned d,
			 struct member *m)
{
	for (; *j < ps->hi; (*j)++, *pos = 0) {
		const struct dsb *x;

		if (ps->dmin[*j - ps->lo] >= 0 && ps->dmin[*j - ps->lo] > (int)d)
			continue;
		if (!(x = decode(p, ps, *j)))
			return -ENOMEM;
		for (; *pos < x->n; (*pos)++)
			if (x->c[*pos].depth <= d) {
				m->c = x->c[*pos];
				m->j = *j;
				m->pos = *pos;
				return 1;
			}
	}
	return 0;
}

static int push_next(struct pstream *ps, const struct member *m)
{
	if (ps->nnext == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		struct member *a = realloc(ps->chain, cap * sizeof(*a)), *b;

		if (!a)
			return -ENOMEM;
		ps->chain = a;
		if (!(b = realloc(ps->next, cap * sizeof(*b))))
			return -ENOMEM;
		ps->next = b;
		ps->cap = cap;
	}
	ps->next[ps->nnext++] = *m;
	return 0;
}

/* Call @c into the current window.  0 or -errno. */
static int add(struct ktr_preorder *p, struct pstream *ps, const struct ktr_call *c)
{
	uint32_t key = p->key ? p->key(p->arg, c) : c->key;

	return key == UINT32_MAX ? -ENOMEM : ktr_callsort_add_call(ps->win ? ps->win : p->s, c, key, 0);
}

/*
 * The chain at boundary @b, whose first call is @first: from the deepest
 * depth down, a member of the current chain whose record lies in @b or
 * later is still open; at the other depths, the first call at that depth
 * or less from @b on, if it is at that depth and began before @first
 * returned.  Those positions only grow as the depth falls (a shallower
 * call returns later), so one forward scan finds them all.  The calls
 * that were not in the chain go to the sorter, deepest (earliest record)
 * first; with @check, each must have begun after the current boundary.
 */
static int next_chain(struct ktr_preorder *p, struct pstream *ps, size_t b, const struct ktr_call *first,
		      int check)
{
	size_t j = b, pos = 0, k = ps->nchain;
	int rc;

	ps->nnext = 0;
	for (unsigned d = first->depth + 1; d-- > 0;) {
		struct member m;

		while (k && ps->chain[k - 1].c.depth > d)
			k--;
		if (k && ps->chain[k - 1].c.depth == d && ps->chain[k - 1].j >= b) { /* still open */
			m = ps->chain[--k];
			j = m.j;
			pos = m.pos;
		} else {
			if ((rc = first_at_most(p, ps, &j, &pos, d, &m)) < 0)
				return rc;
			if (!rc)
				break; /* nothing at depth d or less: none open below */
			if (m.c.depth != d || m.c.entry_ns >= first->exit_ns)
				continue; /* no call of depth d open (or it was not kept) */
			if (check && m.c.entry_ns < ps->bns)
				return -EPROTO; /* open at the current boundary, yet not in its chain */
			if ((rc = add(p, ps, &m.c)) < 0)
				return rc;
		}
		if ((rc = push_next(ps, &m)) < 0)
			return rc;
	}
	/* the next chain, by depth */
	for (size_t i = 0; i < ps->nnext; i++)
		ps->chain[i] = ps->next[ps->nnext - 1 - i];
	ps->nchain = ps->nnext;
	return 0;
}

/*
 * Move @ps to its next boundary, the first sub-buffer from @from with a
 * call (none: done), and its chain (next_chain(), @check).  0 or -errno.
 */
static int advance(struct ktr_preorder *p, struct pstream *ps, size_t from, int check)
{
	const struct dsb *a;
	struct ktr_call first;
	size_t b = next_with_calls(p, ps, from);
	int rc;

	if (b == SIZE_MAX)
		return -ENOMEM;
	if (b == ps->hi) {
		ps->done = 1;
		return 0;
	}
	if (!(a = decode(p, ps, b)))
		return -ENOMEM;
	first = a->c[0]; /* (the look-ahead may evict a) */
	if ((rc = next_chain(p, ps, b, &first, check)) < 0)
		return rc;
	ps->b = b;
	ps->bns = first.exit_ns;
	return 0;
}

/*
 * The next window of @ps into the sorter: at the start, the calls open at
 * the first boundary; then window b, its calls entered from B_b on and
 * those still open at the next boundary.  0, or -errno.
 */
static int fill(struct ktr_preorder *p, struct pstream *ps)
{
	const struct dsb *a;
	size_t in_chain = 0, before = 0;
	int rc;

	if (ps->b == SIZE_MAX)
		return advance(p, ps, ps->lo, 0);
	if (!(a = decode(p, ps, ps->b)))
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		if (a->c[i].entry_ns < ps->bns) {
			before++;
			continue;
		}
		if ((rc = add(p, ps, &a->c[i])) < 0)
			return rc;
	}
	for (size_t i = 0; i < ps->nchain; i++)
		in_chain += ps->chain[i].j == ps->b;
	if (before != in_chain)
		return -EPROTO; /* calls that began before the boundary but were not open at it */
	return advance(p, ps, ps->b + 1, 1);
}

static int start_merge(struct ktr_preorder *p);

/* Parts by their first call's return, then stream (ktr_next()'s order). */
static int cmp_first(const void *x, const void *y)
{
	const struct pstream *a = x, *b = y;

	if (a->first_exit != b->first_exit)
		return a->first_exit < b->first_exit ? -1 : 1;
	return a->si < b->si ? -1 : a->si > b->si;
}

/* Streams by process and thread id (the sorter's order), equal ids by time. */
static int cmp_ps(const void *x, const void *y)
{
	const struct pstream *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->first_ns < b->first_ns ? -1 : a->first_ns > b->first_ns;
}

struct ktr_preorder *ktr_preorder_new(struct ktr_trace *t, struct ktr_callsort *s,
				      int (*want_task)(void *arg, uint32_t pid, uint32_t tid),
				      uint32_t (*key)(void *arg, const struct ktr_call *c), void *arg)
{
	struct ktr_preorder *p;
	int rc = eligible(t);

	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p))))
		goto nomem;
	p->t = t;
	p->s = s;
	p->key = key;
	p->arg = arg;
	for (unsigned i = 0; i < t->nstreams; i++) {
		uint32_t tid = 0; /* the last sub-buffer's (eligible() saw no 0) */

		if (t->streams[i].info.buf_size / 16 > p->maxcalls)
			p->maxcalls = t->streams[i].info.buf_size / 16;
		for (size_t j = 0; j < t->streams[i].nsb; j++) { /* a part per run of one thread id */
			struct ktr_subbuf_info a;

			ktr_subbuf_at(t, i, j, &a);
			if (a.tid == tid)
				continue;
			tid = a.tid;
			if (p->nps == p->capps) {
				size_t cap = p->capps ? 2 * p->capps : 16;
				struct pstream *n = realloc(p->ps, cap * sizeof(*n));

				if (!n)
					goto nomem;
				memset(n + p->nps, 0, (cap - p->nps) * sizeof(*n));
				p->ps = n;
				p->capps = cap;
			}
			p->ps[p->nps].si = i;
			p->ps[p->nps].lo = j;
			p->ps[p->nps].tid = a.tid;
			p->ps[p->nps].first_ns = a.first_ns;
			if (p->nps && p->ps[p->nps - 1].si == i)
				p->ps[p->nps - 1].hi = j;
			p->ps[p->nps++].hi = t->streams[i].nsb;
		}
	}
	for (size_t i = 0; i < p->nps; i++) {
		struct pstream *ps = &p->ps[i];
		const struct dsb *d;
		size_t b;

		ps->b = SIZE_MAX;
		ktr_thread(t, ps->tid, &ps->pid, NULL);
		for (int k = 0; k < NCACHE; k++)
			ps->cache[k].j = SIZE_MAX;
		if (!(ps->dmin = malloc((ps->hi - ps->lo) * sizeof(*ps->dmin))) ||
		    !(ps->peek = ktr_peek_new(t, ps->si)))
			goto nomem;
		for (size_t j = ps->lo; j < ps->hi; j++) {
			struct ktr_subbuf_info in;

			ktr_subbuf_at(t, ps->si, j, &in);
			ps->dmin[j - ps->lo] = in.depth_min;
		}
		if (want_task && !want_task(arg, ps->pid, ps->tid)) {
			ps->done = 1;
			continue;
		}
		if ((b = next_with_calls(p, ps, ps->lo)) == SIZE_MAX)
			goto nomem;
		if (b == ps->hi) {
			ps->done = 1;
			continue;
		}
		if (!(d = decode(p, ps, b)))
			goto nomem;
		ps->pid = d->c[0].pid; /* as the calls have it */
		ps->first_exit = d->c[0].exit_ns;
		drop_cache(ps);
	}
	p->entry = ktr_callsort_order(s) == KTR_SORT_ENTRY;
	/*
	 * The threads with calls, numbered before the first window (the
	 * sorter's "several"): as ktr_next() meets their first calls (the
	 * sorter's tie-break among threads), then for output by thread id.
	 */
	if (p->nps)
		qsort(p->ps, p->nps, sizeof(*p->ps), cmp_first);
	for (size_t i = 0; i < p->nps; i++)
		if (!p->ps[i].done)
			p->ps[i].ord = ktr_callsort_thread(s, p->ps[i].pid, p->ps[i].tid);
	if (p->nps)
		qsort(p->ps, p->nps, sizeof(*p->ps), cmp_ps);
	if (p->entry && start_merge(p) < 0)
		goto nomem;
	return p;
nomem:
	ktr_preorder_free(p);
	errno = ENOMEM;
	return NULL;
}

/* Part @ps's next entry into its head.  1, 0 (no more), or -errno. */
static int next_head(struct ktr_preorder *p, struct pstream *ps)
{
	int rc;

	for (;;) {
		if ((rc = ktr_callsort_next(ps->win, &ps->head)) != 0) {
			ps->head.thread = ps->ord;
			return rc;
		}
		if (ps->done) {
			drop_cache(ps);
			return 0;
		}
		ktr_callsort_reset(ps->win);
		if ((rc = fill(p, ps)) < 0)
			return rc;
	}
}

/* Head of @a before head of @b: the entry sorter's order (entry, depth, thread). */
static int head_less(const struct pstream *a, const struct pstream *b)
{
	const struct ktr_callent *x = &a->head, *y = &b->head;

	if (x->entry_ns != y->entry_ns)
		return x->entry_ns < y->entry_ns;
	if (x->depth != y->depth)
		return x->depth < y->depth;
	return x->thread < y->thread;
}

static void sift_down(struct ktr_preorder *p, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < p->nheap && head_less(p->heap[l], p->heap[m]))
			m = l;
		if (l + 1 < p->nheap && head_less(p->heap[l + 1], p->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		struct pstream *t = p->heap[i];

		p->heap[i] = p->heap[m];
		p->heap[m] = t;
		i = m;
	}
}

/* KTR_SORT_ENTRY: a sorter per part with calls (small: a window each), their heads in a heap. */
static int start_merge(struct ktr_preorder *p)
{
	if (!(p->heap = calloc(p->nps ? p->nps : 1, sizeof(*p->heap))))
		return -ENOMEM;
	for (size_t i = 0; i < p->nps; i++) {
		struct pstream *ps = &p->ps[i];
		int rc;

		if (ps->done)
			continue;
		if (!(ps->win = ktr_callsort_new(4u << 20, KTR_SORT_THREAD)))
			return -ENOMEM;
		if ((rc = next_head(p, ps)) < 0) {
			p->err = rc;
			return 0;
		}
		if (rc)
			p->heap[p->nheap++] = ps;
	}
	for (size_t i = p->nheap / 2; i-- > 0;)
		sift_down(p, i);
	return 0;
}

/* KTR_SORT_ENTRY: the least head of the parts. */
static int merge_next(struct ktr_preorder *p, struct ktr_callent *e)
{
	struct pstream *ps;
	int rc;

	if (p->err)
		return p->err;
	if (!p->nheap)
		return 0;
	ps = p->heap[0];
	*e = ps->head;
	if ((rc = next_head(p, ps)) < 0)
		return p->err = rc;
	if (!rc)
		p->heap[0] = p->heap[--p->nheap];
	sift_down(p, 0);
	return 1;
}

int ktr_preorder_next(struct ktr_preorder *p, struct ktr_callent *e)
{
	int rc;

	if (p->entry)
		return merge_next(p, e);
	for (;;) {
		if (p->err)
			return p->err;
		if ((rc = ktr_callsort_next(p->s, e)) != 0)
			return rc;
		while (p->cur < p->nps && p->ps[p->cur].done)
			p->cur++;
		if (p->cur == p->nps)
			return 0;
		ktr_callsort_reset(p->s);
		if ((rc = fill(p, &p->ps[p->cur])) < 0)
			return p->err = rc;
		if (p->ps[p->cur].done)
			drop_cache(&p->ps[p->cur]);
	}
}

void ktr_preorder_free(struct ktr_preorder *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nps; i++) {
		struct pstream *ps = &p->ps[i];

		free(ps->dmin);
		ktr_peek_free(ps->peek);
		drop_cache(ps);
		free(ps->chain);
		free(ps->next);
		ktr_callsort_free(ps->win);
	}
	free(p->ps);
	free(p->heap);
	free(p);
}

/*
 * analysis/locks.c - `ktrace locks`: lock misuse and lock times from the
 * lock events of `ktrace record --locks` (include/ktrace/locks.h) and the
 * kernel's contention events (API in analysis/analysis.h).
 *
 * A model of who holds what, driven by the records in time order:
 *   acquire   (before the call)  the thread's acquisition under way; if
 *             it already holds the lock (not recursive, not read after
 *             read): a double acquire; unless a try: an edge held -> this
 *             lock in the lock-order graph for every lock it holds
 *   acquired  the lock is pushed on the thread's held list; wait time
 *   failed    nothing held
 *   release   popped from the thread's held list (hold time); if the
 *             thread does not hold it: a bad release, and whoever holds it
 *             loses it
 *   cond_wait release, then acquired of the mutex (not counted as wait)
 *   thread_exit  every lock still held: held at exit
 * At the end the graph's two-lock cycles are the inversions, reported as
 * lockdep and TSan do: A then B in one place, B then A in another, even
 * if no deadlock happened.  Cycles of three and four locks are searched
 * too, from each cycle's smallest lock through larger ones only (so each
 * is found once), within a bounded number of steps.
 *
 * Kernel contention (LOCK_CONTENTION_BEGIN/END, per task): a wait from
 * begin to the end of the same lock id; nested waits (a spinlock's inside
 * an rwsem's slow path) are a small stack per task, and a mutex's second
 * begin (optimistic spinning, then sleeping) continues the first wait.
 *
 * Every finding is kept once per distinct (kind, locks, sites); later
 * sightings count.  Memory: per thread its held locks, per edge, per
 * (lock, site), per finding; ka_map64 indexes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>
#include <ktrace/locks.h>

#include "analysis/analysis.h"

struct kl_held {
	uint64_t lock, site, ns;
	unsigned flags; /* KTRACE_LOCK_F_* */
	int rd;
};

struct kl_thread {
	uint32_t tid;
	struct kl_held *held;
	size_t nheld, cap;
	uint64_t want_lock, want_site, want_ns; /* the acquisition under way */
	int want, exited;
	long double_f; /* the finding of the acquisition under way, if a double acquire, else -1 */
	/* kernel: contentions under way, nested (a spinlock's inside an
	 * rwsem's slow path): begin pushes, end pops its lock's */
	struct {
		uint64_t ns, lock;
		unsigned flags;
	} kw[8];
	unsigned nkw;
};

struct kl_edge {
	uint64_t a, b;
	uint64_t site_a, site_b; /* where a was held from, where b was acquired */
	uint32_t tid;
};

struct ka_locks {
	const struct ktr_trace *t;
	signed char ours[256]; /* event code -> 1 lock event, 0 not, -1 unknown yet */
	struct kl_thread *th;
	size_t nth, capth;
	struct ka_map64 thmap;
	struct kl_edge *edge;
	size_t nedge, capedge;
	struct ka_map64 edgemap; /* hash(a, b) -> edge */
	struct ka_lock_stat *st;
	size_t nst, capst;
	struct ka_map64 stmap; /* hash(lock, site, kernel) -> stat */
	struct ka_lock_finding *f;
	size_t nf, capf;
	struct ka_map64 fmap;
	uint64_t napp, nkernel, ngaps;
	unsigned kop[KTRACE_LOCK_OP_MAX + 1], kflags[KTRACE_LOCK_OP_MAX + 1];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* Grow *@v (elements of @size) to hold @n + 1. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

struct ka_locks *ka_locks_new(const struct ktr_trace *t)
{
	struct ka_locks *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->t = t;
	memset(l->ours, -1, sizeof(l->ours));
#define KL_OPS(op, name, kind, flags) l->kop[op] = kind, l->kflags[op] = flags;
	KTRACE_LOCK_OPS(KL_OPS)
#undef KL_OPS
	return l;
}

static struct kl_thread *thread_of(struct ka_locks *l, uint32_t tid)
{
	long i = ka_map64_get(&l->thmap, tid);

	if (i >= 0)
		return &l->th[i];
	if (grow((void **)&l->th, &l->capth, l->nth, sizeof(*l->th)) < 0 ||
	    ka_map64_put(&l->thmap, tid, (uint32_t)l->nth) < 0)
		return NULL;
	memset(&l->th[l->nth], 0, sizeof(l->th[0]));
	l->th[l->nth].tid = tid;
	l->th[l->nth].double_f = -1;
	return &l->th[l->nth++];
}

/* The entry of (@a, @b, @c) in a table of elements found by @same, else a new one (NULL: ENOMEM). */
static long find_or_add(struct ka_map64 *m, uint64_t h, size_t *n, int (*same)(void *, size_t),
			void *arg, int *added)
{
	for (;; h++) {
		long i = ka_map64_get(m, h);

		if (i < 0) {
			if (ka_map64_put(m, h, (uint32_t)*n) < 0)
				return -1;
			*added = 1;
			return (long)(*n)++;
		}
		if (same(arg, (size_t)i)) {
			*added = 0;
			return i;
		}
	}
}

struct kl_key {
	struct ka_locks *l;
	uint64_t a, b, c, d;
	int kind;
};

static int same_stat(void *arg, size_t i)
{
	struct kl_key *k = arg;
	const struct ka_lock_stat *s = &k->l->st[i];

	return s->lock == k->a && s->site == k->b && s->kernel == k->kind;
}

static struct ka_lock_stat *stat_of(struct ka_locks *l, uint64_t lock, uint64_t site, int kernel)
{
	struct kl_key k = { l, lock, site, 0, 0, kernel };
	int added;
	long i;

	if (grow((void **)&l->st, &l->capst, l->nst, sizeof(*l->st)) < 0)
		return NULL;
	i = find_or_add(&l->stmap, mix(mix(lock, site), (uint64_t)kernel), &l->nst, same_stat, &k, &added);
	if (i < 0)
		return NULL;
	if (added) {
		memset(&l->st[i], 0, sizeof(l->st[0]));
		l->st[i].lock = lock;
		l->st[i].site = site;
		l->st[i].kernel = kernel;
	}
	return &l->st[i];
}

static int same_edge(void *arg, size_t i)
{
	struct kl_key *k = arg;

	return k->l->edge[i].a == k->a && k->l->edge[i].b == k->b;
}

static int add_edge(struct ka_locks *l, const struct kl_held *h, uint64_t b, uint64_t site_b, uint32_t tid)
{
	struct kl_key k = { l, h->lock, b, 0, 0, 0 };
	int added;
	long i;

	if (grow((void **)&l->edge, &l->capedge, l->nedge, sizeof(*l->edge)) < 0)
		return -ENOMEM;
	i = find_or_add(&l->edgemap, mix(h->lock, b), &l->nedge, same_edge, &k, &added);
	if (i < 0)
		return -ENOMEM;
	if (added)
		l->edge[i] = (struct kl_edge){ h->lock, b, h->site, site_b, tid };
	return 0;
}

static long edge_find(struct ka_locks *l, uint64_t a, uint64_t b)
{
	for (uint64_t h = mix(a, b);; h++) {
		long i = ka_map64_get(&l->edgemap, h);

		if (i < 0 || (l->edge[i].a == a && l->edge[i].b == b))
			return i;
	}
}

static int same_finding(void *arg, size_t i)
{
	struct kl_key *k = arg;
	const struct ka_lock_finding *f = &k->l->f[i];

	return (int)f->kind == k->kind && f->lock == k->a && f->lock2 == k->b && f->site == k->c &&
	       f->site2 == k->d;
}

/* Record finding @nf once per (kind, locks, the first two sites).  Return: its index, or -ENOMEM. */
static long finding(struct ka_locks *l, const struct ka_lock_finding *nf)
{
	struct kl_key k = { l, nf->lock, nf->lock2, nf->site, nf->site2, (int)nf->kind };
	int added;
	long i;

	if (grow((void **)&l->f, &l->capf, l->nf, sizeof(*l->f)) < 0)
		return -ENOMEM;
	i = find_or_add(&l->fmap,
			mix(mix(mix(mix(nf->kind, nf->lock), nf->lock2), nf->site), nf->site2), &l->nf,
			same_finding, &k, &added);
	if (i < 0)
		return -ENOMEM;
	if (added) {
		l->f[i] = *nf;
		l->f[i].count = 0;
	}
	l->f[i].count++;
	return i;
}

/* The most recent entry of @lock in @th's held list, or -1. */
static long held_find(const struct kl_thread *th, uint64_t lock)
{
	for (size_t i = th->nheld; i-- > 0;)
		if (th->held[i].lock == lock)
			return (long)i;
	return -1;
}

static void held_remove(struct kl_thread *th, size_t i)
{
	memmove(&th->held[i], &th->held[i + 1], (th->nheld - i - 1) * sizeof(th->held[0]));
	th->nheld--;
}

static int on_acquire(struct ka_locks *l, struct kl_thread *th, unsigned op, uint64_t lock,
		      uint64_t site, uint64_t ns)
{
	unsigned flags = l->kflags[op];
	int rd = l->kop[op] == KTRACE_LOCK_K_RDLOCK;
	long i = held_find(th, lock);

	th->want = 1;
	th->want_lock = lock;
	th->want_site = site;
	th->want_ns = ns;
	th->double_f = -1;
	if (i >= 0 && !(flags & KTRACE_LOCK_F_RECURSIVE) && !(rd && th->held[i].rd)) {
		struct ka_lock_finding f = { .kind = KA_LOCK_DOUBLE, .lock = lock, .tid = th->tid,
					     .site = site, .site2 = th->held[i].site, .ns = ns };

		th->double_f = finding(l, &f);
		if (th->double_f < 0)
			return -ENOMEM;
	}
	if (flags & KTRACE_LOCK_F_TRY)
		return 0; /* a try never waits: no ordering */
	for (size_t k = 0; k < th->nheld; k++) {
		if (th->held[k].lock == lock || (rd && th->held[k].rd))
			continue;
		if (add_edge(l, &th->held[k], lock, site, th->tid) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int on_acquired(struct ka_locks *l, struct kl_thread *th, unsigned op, uint64_t lock,
		       uint64_t site, uint64_t ns, int wait)
{
	struct kl_held *h;

	{
		struct ka_lock_stat *s = stat_of(l, lock, site, 0);

		if (!s)
			return -ENOMEM;
		s->acquired++;
		if (wait && th->want && th->want_lock == lock) {
			uint64_t w = ns > th->want_ns ? ns - th->want_ns : 0;

			s->wait_total += w;
			if (w > s->wait_max)
				s->wait_max = w;
		}
	}
	th->want = 0;
	if (!wait) {
		/* cond_wait's re-acquisition: ordered after the locks held */
		for (size_t k = 0; k < th->nheld; k++)
			if (th->held[k].lock != lock && add_edge(l, &th->held[k], lock, site, th->tid) < 0)
				return -ENOMEM;
	}
	if (grow((void **)&th->held, &th->cap, th->nheld, sizeof(*th->held)) < 0)
		return -ENOMEM;
	h = &th->held[th->nheld++];
	h->lock = lock;
	h->site = site;
	h->ns = ns;
	h->flags = l->kflags[op];
	h->rd = l->kop[op] == KTRACE_LOCK_K_RDLOCK;
	return 0;
}

static int on_release(struct ka_locks *l, struct kl_thread *th, uint64_t lock, uint64_t site,
		      uint64_t ns)
{
	long i = held_find(th, lock);
	struct ka_lock_finding f = { .kind = KA_LOCK_BAD_RELEASE, .lock = lock, .tid = th->tid,
				     .site = site, .ns = ns };

	if (i >= 0) {
		struct kl_held *h = &th->held[i];
		struct ka_lock_stat *s = stat_of(l, lock, h->site, 0);
		uint64_t d = ns > h->ns ? ns - h->ns : 0;

		if (!s)
			return -ENOMEM;
		s->hold_total += d;
		if (d > s->hold_max)
			s->hold_max = d;
		held_remove(th, (size_t)i);
		return 0;
	}
	/* not ours: whose? */
	for (size_t t = 0; t < l->nth; t++) {
		struct kl_thread *o = &l->th[t];
		long k = o == th ? -1 : held_find(o, lock);

		if (k >= 0) {
			f.tid2 = o->tid;
			f.site2 = o->held[k].site;
			held_remove(o, (size_t)k);
			break;
		}
	}
	return finding(l, &f) < 0 ? -ENOMEM : 0;
}

static int on_exit_(struct ka_locks *l, struct kl_thread *th, uint64_t site, uint64_t ns)
{
	for (size_t i = 0; i < th->nheld; i++) {
		struct ka_lock_finding f = { .kind = KA_LOCK_HELD_AT_EXIT, .lock = th->held[i].lock,
					     .tid = th->tid, .site = site, .site2 = th->held[i].site,
					     .ns = ns };

		if (finding(l, &f) < 0)
			return -ENOMEM;
	}
	th->nheld = 0;
	th->want = 0;
	th->exited = 1;
	return 0;
}

/* Is event code @code of our function id a lock event (catalogue category "locks")? */
static int is_ours(struct ka_locks *l, unsigned id)
{
	unsigned code = KTRACE_EVENT_CODE(id);

	if (l->ours[code] < 0) {
		const struct ktr_event *e = ktr_event_find(l->t, KTRACE_CLASS_LOG2, id);
		unsigned op = KTRACE_LOCK_OP(code);

		l->ours[code] = e && e->category && !strcmp(e->category, "locks") && op >= 1 &&
				op <= KTRACE_LOCK_OP_MAX;
	}
	return l->ours[code];
}

static int feed_kernel(struct ka_locks *l, const struct ktr_rec *r)
{
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS], lock = 0;
	unsigned n = ktr_rec_args(l->t, r, names, vals);
	struct kl_thread *th = thread_of(l, r->tid);

	if (!th)
		return -ENOMEM;
	unsigned flags = 0;

	for (unsigned i = 0; i < n; i++) {
		if (names[i] && !strcmp(names[i], "lock_addr"))
			lock = vals[i];
		else if (names[i] && !strcmp(names[i], "flags"))
			flags = (unsigned)vals[i];
	}
	l->nkernel++;
	if (r->id == KTRACE_LKST_LOCK_CONTENTION_BEGIN) {
		unsigned k;

		/* a mutex begins twice (optimistic spin, then sleep) and ends
		 * once: the wait runs from the first begin */
		for (k = 0; k < th->nkw; k++)
			if (th->kw[k].lock == lock) {
				th->kw[k].flags |= flags;
				return 0;
			}
		k = th->nkw < 8 ? th->nkw++ : 7; /* deeper: the innermost replaced */
		th->kw[k].ns = r->ns;
		th->kw[k].lock = lock;
		th->kw[k].flags = flags;
	} else if (th->nkw) {
		unsigned k = th->nkw - 1;
		struct ka_lock_stat *s;
		uint64_t w;

		while (k > 0 && th->kw[k].lock != lock) /* the end of an outer one: inner ones lost */
			k--;
		if (th->kw[k].lock != lock)
			k = th->nkw - 1;
		s = stat_of(l, th->kw[k].lock, 0, 1);
		w = r->ns > th->kw[k].ns ? r->ns - th->kw[k].ns : 0;
		if (!s)
			return -ENOMEM;
		s->kflags |= th->kw[k].flags;
		th->nkw = k;
		s->acquired++;
		s->wait_total += w;
		if (w > s->wait_max)
			s->wait_max = w;
	}
	return 0;
}

int ka_locks_feed(struct ka_locks *l, const struct ktr_rec *r)
{
	struct kl_thread *th;
	unsigned code, op, phase;
	uint64_t lock, site;

	if (r->kind == KTR_GAP) {
		l->ngaps++;
		return 0;
	}
	if (r->cls == KTRACE_CLASS_KEVENT &&
	    (r->id == KTRACE_LKST_LOCK_CONTENTION_BEGIN || r->id == KTRACE_LKST_LOCK_CONTENTION_END))
		return feed_kernel(l, r);
	if (r->cls != KTRACE_CLASS_LOG2 || KTRACE_EVENT_FUNC(r->id) != KTRACE_LOCKS_FUNC ||
	    r->nwords < 2 || !is_ours(l, r->id))
		return 0;
	code = KTRACE_EVENT_CODE(r->id);
	op = KTRACE_LOCK_OP(code);
	phase = KTRACE_LOCK_PHASE(code);
	lock = r->w[0];
	site = KTRACE_LOCK_SITE(r->w[1]);
	th = thread_of(l, r->tid);
	if (!th)
		return -ENOMEM;
	l->napp++;
	switch (l->kop[op]) {
	case KTRACE_LOCK_K_LOCK:
	case KTRACE_LOCK_K_RDLOCK:
		if (phase == KTRACE_LOCK_ACQUIRE)
			return on_acquire(l, th, op, lock, site, r->ns);
		if (phase == KTRACE_LOCK_ACQUIRED)
			return on_acquired(l, th, op, lock, site, r->ns, 1);
		if (phase == KTRACE_LOCK_FAILED) {
			/* the error of a double acquisition: EBUSY, EDEADLK */
			if (th->want && th->want_lock == lock && th->double_f >= 0 &&
			    !l->f[th->double_f].err)
				l->f[th->double_f].err = KTRACE_LOCK_ERR(r->w[1]);
			th->want = 0;
		}
		return 0;
	case KTRACE_LOCK_K_UNLOCK:
		return phase == KTRACE_LOCK_RELEASE ? on_release(l, th, lock, site, r->ns) : 0;
	case KTRACE_LOCK_K_WAIT:
		if (phase == KTRACE_LOCK_RELEASE)
			return on_release(l, th, lock, site, r->ns);
		if (phase == KTRACE_LOCK_ACQUIRED)
			return on_acquired(l, th, 1 /* mutex_lock */, lock, site, r->ns, 0);
		return 0;
	case KTRACE_LOCK_K_EXIT:
		return on_exit_(l, th, site, r->ns);
	default:
		return 0;
	}
}

static int cmp_stat(const void *a, const void *b)
{
	const struct ka_lock_stat *x = a, *y = b;

	if (x->hold_max != y->hold_max)
		return x->hold_max < y->hold_max ? 1 : -1;
	if (x->wait_max != y->wait_max)
		return x->wait_max < y->wait_max ? 1 : -1;
	return x->lock < y->lock ? -1 : x->lock > y->lock;
}

int ka_locks_edge(const struct ka_locks *l, uint32_t i, struct ka_lock_edge *e)
{
	if (i >= l->nedge)
		return -1;
	*e = (struct ka_lock_edge){ l->edge[i].a, l->edge[i].b, l->edge[i].site_a, l->edge[i].site_b,
				    l->edge[i].tid };
	return 0;
}

/* Edges sorted by their first lock, for the cycle search. */
struct kl_adj {
	uint32_t *by_a; /* edge indices sorted by edge.a */
	struct ka_map64 first; /* lock -> first position in by_a */
	const struct kl_edge *edge;
	size_t n;
	uint64_t steps;
};

static int cmp_edge_a(const void *x, const void *y, void *arg)
{
	const struct kl_edge *edge = arg;
	uint64_t a = edge[*(const uint32_t *)x].a, b = edge[*(const uint32_t *)y].a;

	return a < b ? -1 : a > b;
}

#define KL_CYCLE_MAX 4            /* locks in the longest cycle searched */
#define KL_CYCLE_STEPS 4000000ull /* edges looked at in all, at most */
#define KL_CYCLE_FINDINGS 1000    /* cycles reported, at most */

/* Paths from @path[@depth - 1]'s lock through locks above @start back to @start. */
static int cycles_from(struct ka_locks *l, struct kl_adj *g, uint64_t start, uint32_t *path,
		       unsigned depth, unsigned *found)
{
	uint64_t at = g->edge[path[depth - 1]].b;
	long p = ka_map64_get(&g->first, at);

	if (p < 0)
		return 0;
	for (size_t k = (size_t)p; k < g->n && g->edge[g->by_a[k]].a == at; k++) {
		const struct kl_edge *e = &g->edge[g->by_a[k]];
		int seen = 0;

		if (++g->steps > KL_CYCLE_STEPS || *found >= KL_CYCLE_FINDINGS)
			return 0;
		if (e->b == start) {
			if (depth + 1 >= 3) { /* two-lock cycles are the inversions */
				struct ka_lock_finding f = { .kind = KA_LOCK_CYCLE, .lock = start,
							     .tid = g->edge[path[0]].tid };

				for (unsigned i = 0; i < depth; i++)
					f.cycle[i] = path[i];
				f.cycle[depth] = g->by_a[k];
				f.ncycle = depth + 1;
				/* one finding per cycle: its sites as the key */
				f.site = g->edge[path[0]].site_b;
				f.site2 = e->site_b;
				f.lock2 = g->edge[path[1]].b;
				if (finding(l, &f) < 0)
					return -ENOMEM;
				(*found)++;
			}
			continue;
		}
		if (e->b < start || depth + 1 >= KL_CYCLE_MAX)
			continue;
		for (unsigned i = 0; i < depth; i++)
			seen |= g->edge[path[i]].a == e->b;
		if (seen)
			continue;
		path[depth] = g->by_a[k];
		if (cycles_from(l, g, start, path, depth + 1, found) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int find_cycles(struct ka_locks *l)
{
	struct kl_adj g = { NULL, { NULL, NULL, 0, 0 }, l->edge, l->nedge, 0 };
	uint32_t path[KL_CYCLE_MAX];
	unsigned found = 0;
	int rc = 0;

	if (l->nedge < 3)
		return 0;
	g.by_a = malloc(l->nedge * sizeof(*g.by_a));
	if (!g.by_a)
		return -ENOMEM;
	for (size_t i = 0; i < l->nedge; i++)
		g.by_a[i] = (uint32_t)i;
	qsort_r(g.by_a, l->nedge, sizeof(*g.by_a), cmp_edge_a, l->edge);
	for (size_t k = l->nedge; k-- > 0;)
		if (ka_map64_put(&g.first, l->edge[g.by_a[k]].a, (uint32_t)k) < 0) {
			rc = -ENOMEM;
			goto out;
		}
	for (size_t i = 0; i < l->nedge && !rc; i++) {
		if (l->edge[i].b <= l->edge[i].a)
			continue; /* start at each cycle's smallest lock */
		path[0] = (uint32_t)i;
		rc = cycles_from(l, &g, l->edge[i].a, path, 1, &found);
	}
out:
	free(g.by_a);
	ka_map64_free(&g.first);
	return rc;
}

int ka_locks_end(struct ka_locks *l)
{
	/* inversions: A -> B and B -> A, each pair once (A < B) */
	for (size_t i = 0; i < l->nedge; i++) {
		const struct kl_edge *e = &l->edge[i];
		long j;

		if (e->a >= e->b)
			continue;
		j = edge_find(l, e->b, e->a);
		if (j >= 0) {
			const struct kl_edge *o = &l->edge[j];
			struct ka_lock_finding f = {
				.kind = KA_LOCK_INVERSION, .lock = e->a, .lock2 = e->b, .tid = e->tid,
				.tid2 = o->tid, .site = e->site_b, .site2 = e->site_a,
				.site3 = o->site_b, .site4 = o->site_a,
			};

			if (finding(l, &f) < 0)
				return -ENOMEM;
		}
	}
	if (find_cycles(l) < 0)
		return -ENOMEM;
	for (size_t t = 0; t < l->nth; t++) {
		struct kl_thread *th = &l->th[t];

		for (size_t i = 0; i < th->nheld; i++) {
			struct ka_lock_finding f = { .kind = KA_LOCK_HELD_AT_END, .lock = th->held[i].lock,
						     .tid = th->tid, .site2 = th->held[i].site,
						     .ns = th->held[i].ns };

			if (finding(l, &f) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

const struct ka_lock_finding *ka_locks_findings(const struct ka_locks *l, size_t *n)
{
	*n = l->nf;
	return l->f;
}

const struct ka_lock_stat *ka_locks_stats(struct ka_locks *l, size_t *n)
{
	/* the index no longer matches once sorted */
	ka_map64_free(&l->stmap);
	if (l->nst)
		qsort(l->st, l->nst, sizeof(*l->st), cmp_stat);
	*n = l->nst;
	return l->st;
}

void ka_locks_counts(const struct ka_locks *l, uint64_t *app, uint64_t *kernel, uint64_t *gaps)
{
	*app = l->napp;
	*kernel = l->nkernel;
	*gaps = l->ngaps;
}

void ka_locks_free(struct ka_locks *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nth; i++)
		free(l->th[i].held);
	free(l->th);
	free(l->edge);
	free(l->st);
	free(l->f);
	ka_map64_free(&l->thmap);
	ka_map64_free(&l->edgemap);
	ka_map64_free(&l->stmap);
	ka_map64_free(&l->fmap);
	free(l);
}

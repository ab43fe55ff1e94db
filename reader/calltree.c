/*
 * reader/calltree.c - call trees from CALL records, for self ("local")
 * times and caller/callee edges (ktrace kd).
 *
 * CALL records are written when calls return, so a thread's records come
 * in exit order: a post-order walk of its call tree, every callee before
 * its caller.  Each thread keeps a stack of "pending" calls: completed
 * calls whose caller has not come yet, in exit order.  Calls of one thread
 * are either nested or disjoint in time, so when a call C (entry E,
 * depth d) arrives, the pending calls it contains are exactly the top of
 * the stack down to the first one that is not deeper than d or entered
 * before E.  Those are C's children - its nearest recorded descendants -
 * whatever a filter dropped in between: C's local time is its duration
 * minus theirs.  C then becomes pending itself.
 *
 * Memory: in a complete tree the stack holds the finished children of the
 * currently open calls, which can be millions (main calling a function in
 * a loop).  When a thread's stack passes PEND_MAX entries, runs of
 * adjacent entries of the same depth are merged into groups that keep
 * their total, count and per-key sums.  Adjacent same-depth entries are
 * siblings whenever their parents were recorded, so this is exact for
 * complete traces; with filtered traces it can attribute a group to an
 * ancestor of only some of its members.  If merging siblings is not
 * enough (many depths interleaved), the oldest entries are merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

#define PEND_MAX 4096

struct grp_ent {
	uintptr_t key;
	uint64_t ns, count;
};

/*
 * Per-key sums of a merged group of pending calls: an open-addressing
 * table of @cap (a power of two) slots; a slot with count 0 is empty.
 */
struct grp {
	size_t n, cap;
	struct grp_ent e[];
};

struct pend {
	uint64_t entry; /* entry of the earliest member */
	uint64_t ns;    /* total duration */
	uint64_t count;
	uintptr_t key;  /* single call: its key */
	struct grp *g;  /* group: per-key sums (NULL for a single call) */
	uint32_t depth; /* smallest member depth */
};

struct thr {
	uint64_t id; /* pid << 32 | tid; 0 = empty slot with used == 0 */
	int used;
	struct pend *p;
	size_t n, cap;
};

struct ktr_ctree {
	struct thr *thr;
	size_t nthr, capthr;
	struct thr *last;
};

struct ktr_ctree *ktr_ctree_new(void)
{
	return calloc(1, sizeof(struct ktr_ctree));
}

void ktr_ctree_free(struct ktr_ctree *ct)
{
	if (!ct)
		return;
	for (size_t i = 0; i < ct->capthr; i++) {
		struct thr *t = &ct->thr[i];

		for (size_t k = 0; k < t->n; k++)
			free(t->p[k].g);
		free(t->p);
	}
	free(ct->thr);
	free(ct);
}

size_t ktr_ctree_threads(const struct ktr_ctree *ct)
{
	return ct->nthr;
}

static size_t hash_id(uint64_t id, size_t mask)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

static struct thr *thread_of(struct ktr_ctree *ct, uint64_t id)
{
	size_t mask, i;

	if (ct->last && ct->last->id == id)
		return ct->last;
	if ((ct->nthr + 1) * 2 > ct->capthr) {
		size_t cap = ct->capthr ? 2 * ct->capthr : 64;
		struct thr *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < ct->capthr; k++) {
			size_t j;

			if (!ct->thr[k].used)
				continue;
			for (j = hash_id(ct->thr[k].id, cap - 1); n[j].used; j = (j + 1) & (cap - 1))
				;
			n[j] = ct->thr[k];
		}
		free(ct->thr);
		ct->thr = n;
		ct->capthr = cap;
	}
	mask = ct->capthr - 1;
	for (i = hash_id(id, mask); ct->thr[i].used; i = (i + 1) & mask)
		if (ct->thr[i].id == id)
			return ct->last = &ct->thr[i];
	ct->thr[i].used = 1;
	ct->thr[i].id = id;
	ct->nthr++;
	return ct->last = &ct->thr[i];
}

static size_t grp_slot(uintptr_t key, size_t cap)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 23) & (cap - 1);
}

/* Add @ns/@count under @key to group *@gp (created when NULL).  Return: 0 or -ENOMEM. */
static int grp_add(struct grp **gp, uintptr_t key, uint64_t ns, uint64_t count)
{
	struct grp *g = *gp;
	size_t i;

	if (!count)
		count = 1; /* count 0 marks empty slots; a pending entry is >= 1 call */
	if (!g || (g->n + 1) * 2 > g->cap) {
		size_t cap = g ? 2 * g->cap : 8;
		struct grp *n = calloc(1, sizeof(*n) + cap * sizeof(n->e[0]));

		if (!n)
			return -ENOMEM;
		n->cap = cap;
		for (size_t k = 0; g && k < g->cap; k++) {
			if (!g->e[k].count)
				continue;
			for (i = grp_slot(g->e[k].key, cap); n->e[i].count; i = (i + 1) & (cap - 1))
				;
			n->e[i] = g->e[k];
			n->n++;
		}
		free(g);
		*gp = g = n;
	}
	for (i = grp_slot(key, g->cap); g->e[i].count; i = (i + 1) & (g->cap - 1))
		if (g->e[i].key == key) {
			g->e[i].ns += ns;
			g->e[i].count += count;
			return 0;
		}
	g->e[i].key = key;
	g->e[i].ns = ns;
	g->e[i].count = count;
	g->n++;
	return 0;
}

/* Merge pending entry @b (exited later) into @a. */
static void merge(struct pend *a, struct pend *b)
{
	if (!a->g) {
		if (grp_add(&a->g, a->key, a->ns, a->count) < 0)
			return; /* out of memory: keep the totals only */
	}
	if (b->g) {
		for (size_t i = 0; i < b->g->cap; i++)
			if (b->g->e[i].count)
				grp_add(&a->g, b->g->e[i].key, b->g->e[i].ns, b->g->e[i].count);
		free(b->g);
		b->g = NULL;
	} else {
		grp_add(&a->g, b->key, b->ns, b->count);
	}
	if (b->entry < a->entry)
		a->entry = b->entry;
	if (b->depth < a->depth)
		a->depth = b->depth;
	a->ns += b->ns;
	a->count += b->count;
}

/* Bound the pending stack of @t (see the file comment). */
static void compact(struct thr *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (n && t->p[n - 1].depth == t->p[i].depth && t->p[i].depth != UINT32_MAX)
			merge(&t->p[n - 1], &t->p[i]);
		else
			t->p[n++] = t->p[i];
	}
	t->n = n;
	if (t->n > PEND_MAX / 2) {
		size_t excess = t->n - PEND_MAX / 4, k;

		/* the oldest excess + 1 entries become one */
		for (k = 1; k <= excess; k++)
			merge(&t->p[0], &t->p[k]);
		memmove(&t->p[1], &t->p[excess + 1], (t->n - excess - 1) * sizeof(t->p[0]));
		t->n -= excess;
	}
}

uint64_t ktr_ctree_add(struct ktr_ctree *ct, const struct ktr_call *c, uintptr_t key,
		       ktr_child_fn fn, void *arg)
{
	struct thr *t = thread_of(ct, (uint64_t)c->pid << 32 | c->tid);
	uint64_t children = 0;
	struct pend *p;

	if (!t)
		return c->dur_ns;
	while (t->n) {
		p = &t->p[t->n - 1];
		if (p->depth <= c->depth || p->entry < c->entry_ns)
			break;
		children += p->ns;
		if (fn) {
			if (p->g)
				for (size_t i = 0; i < p->g->cap; i++) {
					if (p->g->e[i].count)
						fn(arg, key, p->g->e[i].key, p->g->e[i].ns,
						   p->g->e[i].count);
				}
			else
				fn(arg, key, p->key, p->ns, p->count);
		}
		free(p->g);
		t->n--;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct pend *n;

		if (cap > PEND_MAX + 1)
			cap = PEND_MAX + 1;
		if (t->n == cap) {
			compact(t);
		} else if ((n = realloc(t->p, cap * sizeof(*n)))) {
			t->p = n;
			t->cap = cap;
		} else {
			compact(t);
		}
	}
	if (t->n < t->cap) {
		p = &t->p[t->n++];
		p->entry = c->entry_ns;
		p->ns = c->dur_ns;
		p->count = 1;
		p->key = key;
		p->g = NULL;
		p->depth = c->depth;
	}
	return children < c->dur_ns ? c->dur_ns - children : 0;
}

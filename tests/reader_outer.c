/*
 * tests/reader_outer.c - kd's Time column (reader/outer.c: a function's
 * time counted once through recursion) against a brute-force count, and
 * the builder's memory against its bound.
 *
 * Random call trees are generated per thread (recursive functions, some
 * calls left out as a mintime filter leaves them out), fed to
 * ktr_outer_add() in record order (by exit time, callees before callers,
 * threads interleaved), and each function's total is compared with the
 * sum over its recorded calls that have no recorded ancestor of the same
 * function, found by walking the generator's own stack.  Then the shape
 * that made kd's memory grow with the trace (issue 29: a function called
 * once per call of its caller, 197M calls of the SQLite demo held 3 GB):
 * ktr_outer_items() must stay within one item per depth.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "reader/reader.h"

#define NFN 6
#define MAXDEPTH 12

struct gcall {
	struct ktr_call c;
	unsigned fn;
	long parent; /* index of the caller, -1 for a thread's outermost */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct gen {
	struct gcall *v;  /* calls in entry order */
	size_t n, cap;
	size_t *exits;    /* their indexes in exit (record) order */
	size_t nexits;
	uint32_t tid;
};

/* One call of @fn at @depth entering at @t under @parent; its callees first.  Return: its exit time. */
static uint64_t gen_call(struct gen *g, unsigned fn, unsigned depth, long parent, uint64_t t)
{
	unsigned kids = depth + 1 < MAXDEPTH ? rnd(depth < 3 ? 4 : 3) : 0;
	size_t me;
	struct gcall *c;

	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		g->exits = realloc(g->exits, g->cap * sizeof(*g->exits));
		if (!g->v || !g->exits)
			bail_out("out of memory");
	}
	me = g->n++;
	g->v[me].fn = fn;
	g->v[me].parent = parent;
	g->v[me].c.entry_ns = t;
	t += 1 + rnd(5);
	for (unsigned k = 0; k < kids; k++)
		t = gen_call(g, rnd(NFN), depth + 1, (long)me, t) + rnd(3);
	t += 1 + rnd(5);
	c = &g->v[me];
	c->c.exit_ns = t;
	c->c.dur_ns = t - c->c.entry_ns;
	c->c.tid = c->c.pid = g->tid;
	c->c.depth = depth;
	g->exits[g->nexits++] = me;
	return t;
}

/* Recorded as a mintime filter records: a call left out leaves out its callees (they are shorter). */
static int recorded(const struct gcall *c, uint64_t mintime)
{
	return c->c.dur_ns >= mintime;
}

/* The brute force: @c is recorded and no recorded caller of it is a call of its function. */
static int outermost(const struct gen *g, const struct gcall *c, uint64_t mintime)
{
	if (!recorded(c, mintime))
		return 0;
	for (long p = c->parent; p >= 0; p = g->v[p].parent)
		if (g->v[p].fn == c->fn && recorded(&g->v[p], mintime))
			return 0;
	return 1;
}

static void test_random(uint64_t mintime)
{
	struct gen g[2] = { { .tid = 100 }, { .tid = 200 } };
	struct ktr_outer *o = ktr_outer_new();
	uint64_t got[NFN] = { 0 }, want[NFN] = { 0 };
	size_t i[2] = { 0, 0 }, max_items = 0, ncalls = 0, nleft = 0;
	int same = 1;

	for (int k = 0; k < 2; k++) {
		uint64_t t = 1000 * (uint64_t)k;

		for (int top = 0; top < 400; top++)
			t = gen_call(&g[k], rnd(NFN), 0, -1, t) + 7;
		for (size_t j = 0; j < g[k].n; j++)
			if (outermost(&g[k], &g[k].v[j], mintime))
				want[g[k].v[j].fn] += g[k].v[j].c.dur_ns;
	}
	/* record order: each thread's calls by exit, threads interleaved by exit time */
	while (i[0] < g[0].nexits || i[1] < g[1].nexits) {
		int k = i[1] >= g[1].nexits ||
				(i[0] < g[0].nexits &&
				 g[0].v[g[0].exits[i[0]]].c.exit_ns <= g[1].v[g[1].exits[i[1]]].c.exit_ns) ? 0 : 1;
		const struct gcall *c = &g[k].v[g[k].exits[i[k]++]];
		size_t items;

		if (!recorded(c, mintime)) {
			nleft++;
			continue;
		}
		got[c->fn] += ktr_outer_add(o, &c->c, c->fn);
		items = ktr_outer_items(o);
		if (items > max_items)
			max_items = items;
		ncalls++;
	}
	for (unsigned f = 0; f < NFN; f++)
		if (got[f] != want[f]) {
			diag("function %u: %llu, brute force %llu", f, (unsigned long long)got[f],
			     (unsigned long long)want[f]);
			same = 0;
		}
	ok(ncalls > 5000 && (!mintime || nleft > ncalls / 10),
	   "random trees, mintime %llu: %zu calls recorded in 2 threads, %zu left out",
	   (unsigned long long)mintime, ncalls, nleft);
	ok(same, "  every function's time is the sum of its outermost recorded calls");
	ok(max_items <= 2 * NFN * MAXDEPTH, "  at most one item per depth of each (thread, function): %zu held at most",
	   max_items);
	ktr_outer_free(o);
	free(g[0].v);
	free(g[1].v);
	free(g[0].exits);
	free(g[1].exits);
}

/* main (0) -> 100000 x caller (1) -> f (2): f's items must not pile up per caller's call. */
static void test_bounded(void)
{
	struct ktr_outer *o = ktr_outer_new();
	struct ktr_call c = { .tid = 1, .pid = 1 };
	uint64_t t = 0, total_f = 0, total_caller = 0;
	size_t max_items = 0;
	const unsigned n = 100000;

	for (unsigned i = 0; i < n; i++) {
		uint64_t entry = t;

		c.entry_ns = t + 1;
		c.exit_ns = t + 3;
		c.dur_ns = 2;
		c.depth = 2;
		total_f += ktr_outer_add(o, &c, 2);
		t += 5;
		c.entry_ns = entry;
		c.exit_ns = t;
		c.dur_ns = t - entry;
		c.depth = 1;
		total_caller += ktr_outer_add(o, &c, 1);
		if (ktr_outer_items(o) > max_items)
			max_items = ktr_outer_items(o);
	}
	c.entry_ns = 0;
	c.exit_ns = t + 1;
	c.dur_ns = t + 1;
	c.depth = 0;
	is_int(ktr_outer_add(o, &c, 0), t + 1, "main: its whole duration");
	is_int(total_f, 2ull * n, "f: %u calls of 2 ns", n);
	is_int(total_caller, 5ull * n, "caller: %u calls of 5 ns", n);
	ok(max_items <= 4, "%u calls of f under %u calls of its caller: %zu items held at most (one per caller call before issue 29)",
	   n, n, max_items);
	ktr_outer_free(o);
}

int main(void)
{
	test_random(0);
	test_random(12);
	test_bounded();
	return done_testing();
}

/*
 * cli/cmd_graph.c - `ktrace graph [options] FUNC [DIR]`, as `uftrace
 * graph`: the call graph below a function, aggregated over all its calls
 * by call path, with calls, total and self time per path.
 *
 * Calls are put in entry order per thread (reader/callsort.c, bounded
 * memory); a per-thread stack of open calls finds each call's caller.  A
 * call of FUNC with no FUNC around it starts (or adds to) the graph's
 * root; every call inside it is added under its caller's node, one node
 * per path (function names along the way), so a recursive FUNC appears as
 * a deeper path.  Self time is the call's duration minus its recorded
 * callees' (reader/calltree.c).
 *
 * Exit status: 0, 1 the trace has errors or FUNC was never called, 2
 * usage error.
 */
#include <errno.h>
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "formats/formats.h"
#include "analysis/analysis.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"

#define CMD "graph"

struct node {
	const char *name;
	uint32_t parent, child, next; /* UINT32_MAX: none */
	uint64_t calls, total, self;
};

struct graph {
	struct node *n;
	size_t len, cap;
};

struct open_call {
	uint64_t end;
	uint32_t node; /* UINT32_MAX: outside FUNC */
	unsigned depth;
};

struct graph_opts {
	struct cli_select sel;
	const char *func, *dir;
};

/* graph has the selection and output options only. */
static const struct cli_opt opts[] = {
	CLI_OPT_INCLUDE(cli_select_opts),
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

/* What `ktrace graph` works with, from opening the trace to the end. */
struct graph_run {
	struct graph_opts *o;
	struct ktr_trace *t;
	struct ka_names *names;
	struct ktr_ctree *ct;
	struct ktr_callsort *cs;
	struct graph g;
	struct open_call *st; /* the open calls of the current thread */
	size_t nst, capst;
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace graph [options] FUNC [DIR]\n"
		"\n"
		"The call graph below FUNC, as uftrace graph shows it: every call path that\n"
		"starts at FUNC, aggregated over all of FUNC's calls, with how many calls\n"
		"took it, their total time and their self time (without the recorded\n"
		"callees).  Times in microseconds; DIR defaults to ./ktrace.data.\n",
	.opts = opts,
	.tail =
		"Exit status: 0, 1 the trace has errors or FUNC was not called, 2 usage\n"
		"error.  See ktrace-graph(1).\n",
};

static uint32_t node_child(struct graph *g, uint32_t parent, const char *name)
{
	uint32_t i = parent == UINT32_MAX ? (g->len ? 0 : UINT32_MAX) : g->n[parent].child;
	struct node *nd;

	if (parent == UINT32_MAX && g->len)
		return 0; /* the root */
	for (; i != UINT32_MAX; i = g->n[i].next)
		if (!strcmp(g->n[i].name, name))
			return i;
	if (g->len == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 256;
		struct node *n = realloc(g->n, cap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		g->n = n;
		g->cap = cap;
	}
	nd = &g->n[g->len];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->child = UINT32_MAX;
	nd->next = UINT32_MAX;
	if (parent != UINT32_MAX) {
		nd->next = g->n[parent].child;
		g->n[parent].child = (uint32_t)g->len;
	}
	return (uint32_t)g->len++;
}


/* Print @i and its children (largest total first), @prefix the tree drawing so far. */
static void print_node(FILE *out, struct graph *g, uint32_t i, char *prefix, size_t plen, int last,
		       int root)
{
	char t[32], s[32];
	uint32_t kids[4096];
	size_t nk = 0;

	fmt_us((int64_t)(g->n[i].total), 0, t, sizeof(t));
	fmt_us((int64_t)(g->n[i].self), 0, s, sizeof(s));
	fprintf(out, "%12s %12s %8" PRIu64 " : %s%s%s%s%s\n", t, s, g->n[i].calls, prefix,
		root ? "" : "+-", cli_c_bold(), g->n[i].name, cli_c_reset());
	for (uint32_t c = g->n[i].child; c != UINT32_MAX && nk < 4096; c = g->n[c].next)
		kids[nk++] = c;
	/* largest total first (insertion sort: few children) */
	for (size_t a = 1; a < nk; a++)
		for (size_t b = a; b > 0 && g->n[kids[b]].total > g->n[kids[b - 1]].total; b--) {
			uint32_t x = kids[b];

			kids[b] = kids[b - 1];
			kids[b - 1] = x;
		}
	if (plen + 4 >= 4096)
		return;
	if (!root) {
		memcpy(prefix + plen, last ? "  " : "| ", 3);
		plen += 2;
	}
	for (size_t k = 0; k < nk; k++)
		print_node(out, g, kids[k], prefix, plen, k + 1 == nk, 0);
	prefix[plen - (root ? 0 : 2)] = 0;
}

/* The options, then FUNC and DIR.  Return: CLI_OPTS_GO, or the exit status. */
static int parse_options(struct graph_opts *o, int argc, char **argv)
{
	int rc = cli_opts_parse(&cmd_opts, argc, argv, &o->sel, NULL, NULL);

	if (rc != CLI_OPTS_GO)
		return rc;
	if (optind >= argc) {
		cli_error(CMD, "missing FUNC (see ktrace graph --help)");
		return 2;
	}
	o->func = argv[optind];
	o->dir = cli_select_dir(CMD, argc, argv, optind + 1);
	return o->dir ? CLI_OPTS_GO : 2;
}

/* Hand every selected call of the trace to the sorter, by thread.  Return: 0, or -errno. */
static int graph_read(struct graph_run *gr)
{
	struct ktr_rec r;
	int rc;

	while (ktr_next(gr->t, &r)) {
		struct ktr_call call;
		const char *name;

		cli_diags(CMD, gr->t);
		if (r.kind != KTR_RECORD || r.cls != KTRACE_CLASS_CALL ||
		    !ktr_call_decode(gr->t, &r, &call) || !cli_select_call(&gr->o->sel, &call))
			continue;
		name = ka_names_call(gr->names, &call);
		(void)name; /* named now, so the cache knows the key below */
		if ((rc = ktr_callsort_add_call(gr->cs, &call, call.key,
						ktr_ctree_add(gr->ct, &call, 0, NULL, NULL))) < 0)
			return rc;
	}
	cli_diags(CMD, gr->t);
	return 0;
}

/* Open call @e (ending at @end, in graph node @node) on the stack.  Return: 0, or -ENOMEM. */
static int stack_push(struct graph_run *gr, const struct ktr_callent *e, uint64_t end, uint32_t node)
{
	if (gr->nst == gr->capst) {
		size_t cap = gr->capst ? 2 * gr->capst : 64;
		struct open_call *n = realloc(gr->st, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		gr->st = n;
		gr->capst = cap;
	}
	gr->st[gr->nst].end = end;
	gr->st[gr->nst].node = node;
	gr->st[gr->nst].depth = e->depth;
	gr->nst++;
	return 0;
}

/*
 * The calls in entry order per thread: each call's caller is the innermost
 * open call around it; a call inside FUNC (or FUNC outside any) adds to its
 * path's node.  Return: 0, or -errno.
 */
static int graph_build(struct graph_run *gr)
{
	struct ktr_callent e;
	uint32_t cur = UINT32_MAX;
	int rc;

	while ((rc = ktr_callsort_next(gr->cs, &e)) > 0) {
		uint64_t end = e.entry_ns + e.dur_ns;
		struct ktr_call by_key = { .key = e.key };
		const char *name = ka_names_call(gr->names, &by_key); /* cached when read */
		struct open_call *st = gr->st;
		uint32_t node = UINT32_MAX;

		if (e.thread != cur) {
			gr->nst = 0;
			cur = e.thread;
		}
		while (gr->nst && !(e.entry_ns <= st[gr->nst - 1].end && end <= st[gr->nst - 1].end &&
				    e.depth > st[gr->nst - 1].depth))
			gr->nst--;
		if (gr->nst && st[gr->nst - 1].node != UINT32_MAX)
			node = node_child(&gr->g, st[gr->nst - 1].node, name);
		else if (!strcmp(name, gr->o->func))
			node = node_child(&gr->g, UINT32_MAX, name);
		if (node != UINT32_MAX) {
			gr->g.n[node].calls++;
			gr->g.n[node].total += e.dur_ns;
			gr->g.n[node].self += e.local_ns;
		}
		if ((rc = stack_push(gr, &e, end, node)) < 0)
			return rc;
	}
	return rc;
}

/* The graph below FUNC, or why there is none.  Return: 0, or 1. */
static int graph_print(struct graph_run *gr)
{
	char prefix[4096] = "";

	if (!gr->g.len) {
		cli_error(CMD, "%s: no recorded call of '%s'%s", ktr_dir(gr->t), gr->o->func,
			  gr->o->sel.demangle ? " (C++ names are demangled: geo::Rect::area() const)" : "");
		return 1;
	}
	cli_pager_start();
	printf("# Function call graph of '%s' (%s)\n", gr->o->func, ktr_dir(gr->t));
	printf("%s#  TOTAL (us)    SELF (us)    CALLS : FUNCTION%s\n", cli_c_bold(), cli_c_reset());
	print_node(stdout, &gr->g, 0, prefix, 0, 1, 1);
	return 0;
}

/* Read the calls, order them, build the graph, print it.  Return: the exit status, or -errno. */
static int graph_run(struct graph_run *gr)
{
	int rc;

	gr->t = cli_select_open(&gr->o->sel, CMD, gr->o->dir);
	if (!gr->t)
		return 1;
	cli_diags(CMD, gr->t);
	gr->names = ka_names_new(gr->t, gr->o->sel.demangle);
	gr->ct = ktr_ctree_new();
	gr->cs = ktr_callsort_new(0, KTR_SORT_THREAD);
	if (!gr->names || !gr->ct || !gr->cs)
		return -ENOMEM;
	if ((rc = graph_read(gr)) < 0 || (rc = graph_build(gr)) < 0)
		return rc;
	if ((rc = graph_print(gr)) != 0)
		return rc;
	return ktr_error_count(gr->t) ? 1 : 0;
}

/* `ktrace graph`: options, the graph, the exit status. */
static int run(int argc, char **argv)
{
	struct graph_opts o;
	struct graph_run gr = { .o = &o };
	int rc;

	cli_select_init(&o.sel);
	rc = parse_options(&o, argc, argv);
	if (rc == CLI_OPTS_GO)
		rc = graph_run(&gr);
	if (rc < 0) {
		cli_error(CMD, "ordering the calls: %s", strerror(-rc));
		rc = 1;
	}
	free(gr.g.n);
	free(gr.st);
	ktr_callsort_free(gr.cs);
	ktr_ctree_free(gr.ct);
	ka_names_free(gr.names);
	ktr_close(gr.t);
	cli_select_free(&o.sel);
	return rc;
}

KTRACE_COMMAND_OPTS(graph, "call graph below a function: calls, total and self time per path (uftrace graph)",
		    run, cmd_opts);

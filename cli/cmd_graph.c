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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
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

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace graph [options] FUNC [DIR]\n"
		"\n"
		"The call graph below FUNC, as uftrace graph shows it: every call path that\n"
		"starts at FUNC, aggregated over all of FUNC's calls, with how many calls\n"
		"took it, their total time and their self time (without the recorded\n"
		"callees).  Times in microseconds; DIR defaults to ./ktrace.data.\n"
		"\n"
		CLI_SELECT_HELP
		CLI_OUTPUT_HELP
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0, 1 the trace has errors or FUNC was not called, 2 usage\n"
		"error.  See ktrace-graph(1).\n");
}

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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' }, CLI_SELECT_LONGOPTS, CLI_OUTPUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_select sel;
	struct ktr_trace *t = NULL;
	struct ka_names *names = NULL;
	struct ktr_ctree *ct = NULL;
	struct ktr_callsort *cs = NULL;
	struct graph g = { NULL, 0, 0 };
	struct open_call *st = NULL;
	size_t nst = 0, capst = 0;
	uint32_t cur = UINT32_MAX;
	const char *func, *dir;
	struct ktr_rec r;
	struct ktr_callent e;
	int c, rc = 0, taken;

	cli_select_init(&sel);
	while ((c = getopt_long(argc, argv, ":p:h", opts, NULL)) != -1) {
		if ((taken = cli_select_option(&sel, CMD, c, optarg)) != 0 ||
		    (taken = cli_output_option(CMD, c, optarg)) != 0) {
			if (taken < 0)
				return 2;
			continue;
		}
		if (c == 'h') {
			help(stdout);
			return 0;
		}
		return cli_bad_option(CMD, c, argc, argv);
	}
	if (optind >= argc) {
		cli_error(CMD, "missing FUNC (see ktrace graph --help)");
		return 2;
	}
	func = argv[optind];
	dir = cli_select_dir(CMD, argc, argv, optind + 1);
	if (!dir)
		return 2;
	t = cli_select_open(&sel, CMD, dir);
	if (!t)
		return 1;
	cli_diags(CMD, t);
	names = ka_names_new(t, sel.demangle);
	ct = ktr_ctree_new();
	cs = ktr_callsort_new(0, KTR_SORT_THREAD);
	if (!names || !ct || !cs) {
		rc = -ENOMEM;
		goto out;
	}
	while (ktr_next(t, &r)) {
		struct ktr_call call;
		const char *name;

		cli_diags(CMD, t);
		if (r.kind != KTR_RECORD || r.cls != KTRACE_CLASS_CALL || !ktr_call_decode(t, &r, &call) ||
		    !cli_select_call(&sel, &call))
			continue;
		name = ka_names_call(names, &call);
		(void)name; /* named now, so the cache knows the key below */
		if ((rc = ktr_callsort_add_call(cs, &call, call.key, ktr_ctree_add(ct, &call, 0, NULL, NULL))) < 0)
			goto out;
	}
	cli_diags(CMD, t);
	while ((rc = ktr_callsort_next(cs, &e)) > 0) {
		uint64_t end = e.entry_ns + e.dur_ns;
		struct ktr_call by_key = { .key = e.key };
		const char *name = ka_names_call(names, &by_key); /* cached when read */
		uint32_t node = UINT32_MAX;

		if (e.thread != cur) {
			nst = 0;
			cur = e.thread;
		}
		while (nst && !(e.entry_ns <= st[nst - 1].end && end <= st[nst - 1].end &&
				e.depth > st[nst - 1].depth))
			nst--;
		if (nst && st[nst - 1].node != UINT32_MAX)
			node = node_child(&g, st[nst - 1].node, name);
		else if (!strcmp(name, func))
			node = node_child(&g, UINT32_MAX, name);
		if (node != UINT32_MAX) {
			g.n[node].calls++;
			g.n[node].total += e.dur_ns;
			g.n[node].self += e.local_ns;
		}
		if (nst == capst) {
			size_t cap = capst ? 2 * capst : 64;
			struct open_call *n = realloc(st, cap * sizeof(*n));

			if (!n) {
				rc = -ENOMEM;
				goto out;
			}
			st = n;
			capst = cap;
		}
		st[nst].end = end;
		st[nst].node = node;
		st[nst].depth = e.depth;
		nst++;
	}
	if (rc < 0)
		goto out;
	if (!g.len) {
		cli_error(CMD, "%s: no recorded call of '%s'%s", ktr_dir(t), func,
			  sel.demangle ? " (C++ names are demangled: geo::Rect::area() const)" : "");
		rc = 1;
		goto out;
	}
	{
		char prefix[4096] = "";

		cli_pager_start();
		printf("# Function call graph of '%s' (%s)\n", func, ktr_dir(t));
		printf("%s#  TOTAL (us)    SELF (us)    CALLS : FUNCTION%s\n", cli_c_bold(), cli_c_reset());
		print_node(stdout, &g, 0, prefix, 0, 1, 1);
	}
	if (ktr_error_count(t))
		rc = 1;
out:
	if (rc < 0) {
		cli_error(CMD, "ordering the calls: %s", strerror(-rc));
		rc = 1;
	}
	free(g.n);
	free(st);
	ktr_callsort_free(cs);
	ktr_ctree_free(ct);
	ka_names_free(names);
	ktr_close(t);
	cli_select_free(&sel);
	return rc;
}

KTRACE_COMMAND(graph, "call graph below a function: calls, total and self time per path (uftrace graph)",
	       run, help);

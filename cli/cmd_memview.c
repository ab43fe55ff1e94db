/*
 * cli/cmd_memview.c - `ktrace memview [options] [DIR]`: LKST's Memory
 * Allocation Viewer: the physical pages each process holds over time, from
 * the MEM_PAGE_ALLOC / MEM_PAGE_FREE kernel events of a trace (`ktrace
 * record --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE`, or the module's LKST
 * tracer with those events in its maskset).  Pages are attributed to the
 * process that allocated them, also when another task frees them
 * (analysis/memview.c).  Output: a table of totals per process and one of
 * allocated / freed / held pages per process and interval (-i, 1 s by
 * default), or with --svg an SVG plot of held pages per interval, one
 * polyline per process (the -n with the highest peak).
 *
 * Pages are the x86-64 page size, 4 KiB (the events give page frame
 * numbers and orders, no size).  Exit status: 0; 1 the trace has errors
 * (everything readable was used), holds no page event, or the output
 * failed; 2 usage error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/select.h"
#include "formats/formats.h"
#include "reader/reader.h"

#define CMD "memview"
#define PAGE_KIB 4

enum { OPT_SVG = CLI_OPT_LONG };

struct memview_opts {
	uint64_t interval_ns; /* -i */
	uint64_t top;         /* -n, 0: all */
	struct ka_ids pids;   /* -p */
	const char *svg;
	int width; /* -w */
	const char *dir;
};

/* cli_opt_fn: -i, -n, -p, -w. */
static int take_option(void *arg, int key, const char *val)
{
	struct memview_opts *o = arg;
	uint64_t v;

	switch (key) {
	case 'i':
		if (cli_parse_u64(val, &v) < 0 || v < 1 || v > 86400000) {
			cli_error(CMD, "option '--interval' needs 1..86400000 ms, not '%s'", val);
			return 2;
		}
		o->interval_ns = v * 1000000ull;
		return 0;
	case 'n':
		if (cli_parse_u64(val, &o->top) < 0 || o->top > 1000000) {
			cli_error(CMD, "option '--top' needs a count 0..1000000, not '%s'", val);
			return 2;
		}
		return 0;
	case 'p':
		if (cli_idlist_parse(val, UINT32_MAX, &o->pids) < 0) {
			cli_error(CMD, "option '--pid' needs comma-separated pids, not '%s'", val);
			return 2;
		}
		return 0;
	default: /* -w */
		if (cli_parse_u64(val, &v) < 0 || v < 300 || v > 100000) {
			cli_error(CMD, "option '--width' needs 300..100000 pixels, not '%s'", val);
			return 2;
		}
		o->width = (int)v;
		return 0;
	}
}

static const struct cli_opt opts[] = {
	CLI_OPT("interval", 'i', "MS", "interval length in ms (default 1000)"),
	CLI_OPT("top", 'n', "N", "show the N processes with the highest peak\n(default 10; 0 = all)"),
	CLI_OPT("pid", 'p', "LIST", "show these processes only (comma-separated pids)"),
	CLI_OPT_STRING("svg", OPT_SVG, "FILE", struct memview_opts, svg,
		       "draw an SVG plot instead (- for standard output): held\n"
		       "pages at each interval's end, a polyline per process"),
	CLI_OPT("width", 'w', "PX", "picture width (default 1000)"),
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace memview [options] [DIR]\n"
		"\n"
		"Show the physical pages each process holds over time (LKST's memory\n"
		"allocation viewer), from the page allocation and free events of a trace\n"
		"recorded with `ktrace record --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE` (or the\n"
		"module's LKST tracer).  A page counts for the process that allocated it until\n"
		"it is freed, by whichever task; frees of pages allocated before the trace\n"
		"are counted apart (untracked).  Pages are 4 KiB.  DIR defaults to\n"
		"./ktrace.data.\n",
	.opts = opts,
	.tail =
		"Exit status: 0, 1 the trace has errors or no page events, or the output\n"
		"failed, 2 usage error.  See ktrace-memview(1).\n",
};

/* processes by descending peak, then pid */
static int cmp_peak(const void *a, const void *b)
{
	const struct ka_mv_proc *x = *(const struct ka_mv_proc *const *)a;
	const struct ka_mv_proc *y = *(const struct ka_mv_proc *const *)b;

	if (x->peak != y->peak)
		return x->peak < y->peak ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * A process's name: the traced program's own (metadata `comm`: the kernel
 * side may have named it before its exec, after the recorder), else the
 * kernel sub-trace's thread name of the pid, else of the allocating thread.
 */
static const char *proc_name(struct ktr_trace *t, const struct ka_mv_proc *p)
{
	const struct ktr_info *in = ktr_info(t);
	const char *c;

	if (in->pid && in->pid == p->pid && in->comm && in->comm[0])
		return in->comm;
	c = ka_comm(t, p->pid);

	return strcmp(c, "?") ? c : ka_comm(t, p->tid);
}

/*
 * The two tables of the text output (man page): totals of the @n processes
 * of @v, then their non-empty intervals.  Names made valid UTF-8.
 */
static void print_text(FILE *out, struct ktr_trace *t, const struct ka_memview *m,
		       struct ka_mv_proc **v, size_t n)
{
	fprintf(out, "# ktrace memview %s: %" PRIu64 " page events, interval %.3f s, "
		     "pages of %d KiB\n", ktr_dir(t), m->events, m->interval_ns / 1e9, PAGE_KIB);
	fprintf(out, "# untracked frees (allocated before the trace) %" PRIu64 " pages, failed "
		     "allocations %" PRIu64 ", re-allocated while owned %" PRIu64 ", bad events %" PRIu64
		     "\n", m->untracked, m->failed, m->reowned, m->bad);
	fprintf(out, "%8s %-16s %10s %10s %10s %10s %10s %10s %10s\n", "pid", "comm", "allocated",
		"freed", "by-others", "untracked", "held", "peak", "peak-KiB");
	for (size_t i = 0; i < n; i++) {
		const struct ka_mv_proc *p = v[i];
		char buf[64];
		const char *name = fmt_utf8(proc_name(t, p), buf, sizeof(buf));
		fprintf(out, "%8" PRIu32 " %-16s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
			     " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			p->pid, name, p->total_alloc, p->total_freed, p->freed_by_others, p->untracked,
			p->cur, p->peak, p->peak * PAGE_KIB);
	}
	fprintf(out, "\n# per interval: allocated and freed pages in it, held at its end\n");
	fprintf(out, "%9s %8s %-16s %10s %10s %10s %12s\n", "t(s)", "pid", "comm", "alloc", "freed",
		"held", "held-KiB");
	for (size_t i = 0; i < n; i++) {
		const struct ka_mv_proc *p = v[i];
		char buf[64];
		const char *name = fmt_utf8(proc_name(t, p), buf, sizeof(buf));
		for (size_t k = 0; k < m->nint; k++) {
			if (!p->alloc[k] && !p->freed[k] && !p->held[k])
				continue;
			fprintf(out, "%9.3f %8" PRIu32 " %-16s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
				     " %12" PRIu64 "\n",
				(double)(k * m->interval_ns) / 1e9, p->pid, name, p->alloc[k], p->freed[k],
				p->held[k], p->held[k] * PAGE_KIB);
		}
	}
}

/* ColorBrewer's Paired, darker hues first: a line colour per shown process */
static const char *const line_colour[] = { "#1f78b4", "#e31a1c", "#33a02c", "#ff7f00", "#6a3d9a",
					   "#b15928", "#a6cee3", "#fb9a99", "#b2df8a", "#fdbf6f",
					   "#cab2d6", "#808080" };

/*
 * The plot: title, y axis in KiB (grid), x axis in s, a polyline per
 * process through (interval end, held pages) points, a legend line per
 * process "comm pid: peak N KiB".  Each polyline has class "proc" and a
 * data-pid attribute (tests and scripts find it).
 */
static int write_svg(const char *file, struct ktr_trace *t, const struct ka_memview *m,
		     struct ka_mv_proc **v, size_t n, int width)
{
	const double left = 90, right = 20, top = 40, plot_h = 360;
	double plot_w = width - left - right, height = top + plot_h + 50 + 16.0 * (double)n + 10;
	double span = (double)m->nint * m->interval_ns / 1e9, ymax = 0, ystep, xstep;
	struct cli_out o;
	char title[4200];
	FILE *out;

	if (cli_out_open(CMD, &o, file))
		return 1;
	out = o.f;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < m->nint; k++)
			if (v[i]->held[k] * (double)PAGE_KIB > ymax)
				ymax = v[i]->held[k] * (double)PAGE_KIB;
	if (ymax <= 0)
		ymax = PAGE_KIB;
	if (span <= 0)
		span = 1;
	snprintf(title, sizeof(title), "ktrace memview %s", ktr_dir(t));
	fmt_svg_begin(out, width, height, title);
	fprintf(out, "<text x=\"%.0f\" y=\"18\" font-size=\"13\" font-weight=\"bold\">Pages held per "
		     "process: ", left);
	fmt_xml_text(out, ktr_dir(t));
	fprintf(out, " (interval %.3f s)</text>\n", m->interval_ns / 1e9);
	ystep = fmt_tick_step(ymax, 6);
	fprintf(out, "<g class=\"axis-y\">\n");
	for (double y = 0; y <= ymax * 1.0001; y += ystep) {
		double py = top + plot_h - plot_h * y / ymax;

		fprintf(out, "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>"
			     "<text x=\"%.0f\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n",
			left, py, left + plot_w, py, left - 6, py + 4, y);
	}
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">KiB</text>\n</g>\n", left - 6,
		top - 8);
	xstep = fmt_tick_step(span, 10);
	fprintf(out, "<g class=\"axis-x\">\n");
	for (double x = 0; x <= span * 1.0001; x += xstep)
		fprintf(out, "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n",
			left + plot_w * x / span, top + plot_h + 16, x);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time (s)</text>\n</g>\n",
		left + plot_w / 2, top + plot_h + 32);
	fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
		     "stroke=\"#999999\"/>\n", left, top, plot_w, plot_h);
	for (size_t i = 0; i < n; i++) {
		const struct ka_mv_proc *p = v[i];
		const char *colour = line_colour[i % (sizeof(line_colour) / sizeof(line_colour[0]))];
		double ly = top + plot_h + 50 + 16.0 * (double)i;

		fprintf(out, "<polyline class=\"proc\" data-pid=\"%" PRIu32 "\" fill=\"none\" "
			     "stroke=\"%s\" stroke-width=\"1.5\" points=\"%.2f,%.2f",
			p->pid, colour, left, top + plot_h);
		for (size_t k = 0; k < m->nint; k++)
			fprintf(out, " %.2f,%.2f", left + plot_w * (double)(k + 1) * m->interval_ns / 1e9 / span,
				top + plot_h - plot_h * (double)p->held[k] * PAGE_KIB / ymax);
		fprintf(out, "\"><title>");
		fmt_xml_text(out, proc_name(t, p));
		fprintf(out, " %" PRIu32 "</title></polyline>\n", p->pid);
		fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"3\" fill=\"%s\"/>"
			     "<text x=\"%.0f\" y=\"%.0f\">", left, ly - 4, colour, left + 20, ly);
		fmt_xml_text(out, proc_name(t, p));
		fprintf(out, " %" PRIu32 ": peak %" PRIu64 " KiB, allocated %" PRIu64 " KiB, freed %" PRIu64
			     " KiB</text>\n", p->pid, p->peak * PAGE_KIB, p->total_alloc * PAGE_KIB,
			p->total_freed * PAGE_KIB);
	}
	fmt_svg_end(out);
	return cli_out_close(CMD, &o);
}

/* Count the page events of @t into @m: one pass over the records. */
static void memview_read(struct ktr_trace *t, struct ka_memview *m)
{
	struct ka_progress *prog = ka_progress_start(t, CMD, 0);
	uint64_t last = 0;
	int have_first = 0;
	struct ktr_rec r;

	while (ktr_next(t, &r)) {
		ka_progress_rec(prog, &r);
		cli_diags(CMD, t);
		if (!have_first) {
			m->first_ns = r.ns;
			have_first = 1;
		}
		if (r.ns > last)
			last = r.ns;
		if (ka_memview_feed(m, &r) < 0 && m->oom == 1) {
			cli_error(CMD, "out of memory: page counts are incomplete");
			m->oom = 2;
		}
	}
	ka_progress_end(prog);
	cli_diags(CMD, t);
	if (ka_memview_finish(m, last) < 0)
		cli_error(CMD, "out of memory: page counts are incomplete");
}

/*
 * The processes to show: those of --pid (all without it), by descending
 * peak, the first --top.  Return: the array (*@n of them), or NULL (out of
 * memory, printed).
 */
static struct ka_mv_proc **shown_procs(struct ka_memview *m, const struct memview_opts *o, size_t *n)
{
	struct ka_mv_proc **shown = calloc(m->nprocs ? m->nprocs : 1, sizeof(*shown));

	*n = 0;
	if (!shown) {
		cli_error(CMD, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < m->nprocs; i++)
		if (!o->pids.n || ka_ids_has(&o->pids, m->procs[i].pid))
			shown[(*n)++] = &m->procs[i];
	qsort(shown, *n, sizeof(*shown), cmp_peak);
	if (o->top && *n > o->top)
		*n = (size_t)o->top;
	return shown;
}

/* The tables or the plot of the processes shown.  Return: the exit status. */
static int memview_report(struct ktr_trace *t, struct ka_memview *m, const struct memview_opts *o)
{
	struct ka_mv_proc **shown;
	size_t nshown;
	int rc = 0;

	if (!m->events) {
		cli_error(CMD, "%s: no page allocation or free events (record with `ktrace record "
			       "--kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE`)", ktr_dir(t));
		return 1;
	}
	shown = shown_procs(m, o, &nshown);
	if (!shown)
		return 1;
	if (o->svg) {
		rc = write_svg(o->svg, t, m, shown, nshown, o->width);
	} else {
		cli_pager_start();
		print_text(stdout, t, m, shown, nshown);
	}
	if (!rc && (ktr_error_count(t) || m->oom))
		rc = 1;
	free(shown);
	return rc;
}

/* `ktrace memview`: options, one pass over the records, the output. */
static int run(int argc, char **argv)
{
	struct memview_opts o = { .interval_ns = 1000000000ull, .top = 10, .width = 1000 };
	struct cli_select sel;
	struct ka_memview m;
	struct ktr_trace *t = NULL;
	int rc = cli_opts_parse_dir(&cmd_opts, argc, argv, NULL, take_option, &o, &o.dir);

	memset(&m, 0, sizeof(m));
	m.interval_ns = o.interval_ns;
	if (rc == CLI_OPTS_GO) {
		cli_select_init(&sel);
		t = cli_select_open(&sel, CMD, o.dir);
		cli_select_free(&sel);
		rc = t ? 0 : 1;
	}
	if (t) {
		cli_diags(CMD, t);
		memview_read(t, &m);
		rc = memview_report(t, &m, &o);
	}
	ka_memview_free(&m);
	cli_idlist_free(&o.pids);
	ktr_close(t);
	return rc;
}

KTRACE_COMMAND_OPTS(memview, "physical pages held per process over time, from page alloc/free events",
		    run, cmd_opts);

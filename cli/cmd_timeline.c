/*
 * cli/cmd_timeline.c - `ktrace timeline [options] DIR`: the process-state
 * timeline of seed 001's "process trace": per task, when it was running
 * (on a CPU), ready (runnable, waiting for one) and blocked (sleeping),
 * from the PROCESS_CONTEXTSWITCH and PROCESS_WAKEUP kernel events of the
 * trace (tracefs via `ktrace record --kernel`, or the module's LKST tracer:
 * the same KEVENT records), as text or as an SVG picture with a lane per
 * task; --mark FUNC draws the calls of a function (CALL records of the
 * application trace, same CLOCK_MONOTONIC time base) on the same lanes.
 * Above the tasks, a lane per CPU shows which of them ran there; both
 * show per-CPU time in the text form.  A task is "comm pid/tid", or "comm
 * tid" for a main thread or a task whose process is unknown.
 *
 * The states come from reader/sched.c; the tasks shown from analysis/tasks.c
 * (the traced program and its children by default).  Intervals of the
 * shown tasks are kept in memory (about 40 bytes each) to lay the picture
 * out; the records themselves are streamed.
 *
 * Exit status: 0, 1 the trace has errors (everything readable was still
 * used) or the output cannot be written, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "formats/formats.h"
#include "analysis/analysis.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"
#include "reader/sched.h"

#define CMD "timeline"
#define MAX_MARKS 8

struct iv {
	uint64_t start, end;
	int16_t cpu;
	uint8_t state; /* KTR_TASK_* ; or 100 + mark index for a call */
};

struct lane {
	uint32_t tid, pid;
	struct iv *v;
	size_t n, cap;
	uint64_t sum[5];
	uint64_t switches; /* times it left a CPU: its context switches as prev_pid */
	uint64_t nmarks;
};

struct timeline_opts {
	int summary; /* -s */
	int all;     /* -a */
	int width;   /* -w */
	const char *svg;
	const char *marks[MAX_MARKS]; /* -m */
	int nmarks;
	struct cli_select sel; /* its time range clips the intervals */
	const char *dir;
};

/* The state of `ktrace timeline`: the lanes and what fills them. */
struct tl {
	struct timeline_opts o;
	struct ktr_trace *t;
	struct lane *lanes;
	size_t nlanes, cap;
	struct ka_map64 lane_of; /* tid -> lane index */
	uint64_t first, last;
	int have_first;
	int oom;
	struct ka_tasks *tasks;  /* the tasks shown */
	struct ka_names *names;  /* with --mark: the calls' names */
	struct ktr_sched *sched; /* the states of the tasks */
	uint64_t kevents;
};

#define STR_(x) #x
#define STR(x) STR_(x)

enum { OPT_SVG = CLI_OPT_LONG };

/* cli_opt_fn: -w, -m. */
static int take_option(void *arg, int key, const char *val)
{
	struct timeline_opts *o = arg;
	uint64_t v;

	if (key == 'm') {
		if (o->nmarks == MAX_MARKS) {
			cli_error(CMD, "option '--mark': at most %d functions", MAX_MARKS);
			return 2;
		}
		o->marks[o->nmarks++] = val;
		return 0;
	}
	if (cli_parse_u64(val, &v) < 0 || v < 300 || v > 100000) { /* -w */
		cli_error(CMD, "option '--width' needs 300..100000 pixels, not '%s'", val);
		return 2;
	}
	o->width = (int)v;
	return 0;
}

static const struct cli_opt opts[] = {
	CLI_OPT_FLAG("summary", 's', struct timeline_opts, summary,
		     "one line per task: time in each state, switches (how\n"
		     "often it left a CPU)"),
	CLI_OPT_STRING("svg", OPT_SVG, "FILE", struct timeline_opts, svg,
		       "draw an SVG picture instead (- for standard output):\n"
		       "a lane per task, colours per state, time axis in ms"),
	CLI_OPT("width", 'w', "PX", "picture width (default 1200)"),
	CLI_OPT("mark", 'm', "FUNC", "mark the calls of function FUNC (a name, or an\n"
				     "address 0x...) on its thread's lane (repeatable, " STR(MAX_MARKS) ")"),
	CLI_OPT_FLAG("all", 'a', struct timeline_opts, all, "every task, not only the program's"),
	CLI_OPT_INCLUDE(cli_select_opts),
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace timeline [options] [DIR]\n"
		"\n"
		"Show when each task was running, ready (runnable, waiting for a CPU) or blocked\n"
		"(sleeping), from the context switches and wakeups of a trace recorded with\n"
		"`ktrace record --kernel` (or the module's LKST tracer): LKST's process trace.\n"
		"By default the traced program and the processes and threads it started;\n"
		"every task for a kernel-only trace.  Times are ms from the first record.\n"
		"DIR defaults to ./ktrace.data.\n",
	.opts = opts,
	.tail =
		"Exit status: 0, 1 the trace has errors (all that was readable is shown) or\n"
		"the output failed, 2 usage error.  See ktrace-timeline(1).\n",
};

static struct lane *lane_get(struct tl *s, uint32_t tid, uint32_t pid)
{
	long i = ka_map64_get(&s->lane_of, tid);

	if (i >= 0) {
		struct lane *l = &s->lanes[i];

		if (!l->pid)
			l->pid = pid;
		return l;
	}
	if (s->nlanes == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct lane *n = realloc(s->lanes, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->lanes = n;
		s->cap = cap;
	}
	if (ka_map64_put(&s->lane_of, tid, (uint32_t)s->nlanes) < 0)
		return NULL;
	memset(&s->lanes[s->nlanes], 0, sizeof(s->lanes[0]));
	s->lanes[s->nlanes].tid = tid;
	s->lanes[s->nlanes].pid = pid;
	return &s->lanes[s->nlanes++];
}

static void lane_add(struct tl *s, struct lane *l, uint64_t start, uint64_t end, int cpu, int state)
{
	struct iv *v;

	if (start < s->o.sel.from)
		start = s->o.sel.from;
	if (end > s->o.sel.to)
		end = s->o.sel.to;
	if (start >= end && !(start == end && start >= s->o.sel.from && end <= s->o.sel.to))
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct iv *n = realloc(l->v, cap * sizeof(*n));

		if (!n) {
			s->oom = 1;
			return;
		}
		l->v = n;
		l->cap = cap;
	}
	v = &l->v[l->n++];
	v->start = start;
	v->end = end;
	v->cpu = (int16_t)cpu;
	v->state = (uint8_t)state;
}

static void on_interval(void *arg, const struct ktr_sched_iv *iv)
{
	struct tl *s = arg;
	struct lane *l = lane_get(s, iv->tid, iv->pid);

	if (!l) {
		s->oom = 1;
		return;
	}
	size_t before = l->n;

	lane_add(s, l, iv->start_ns, iv->end_ns, iv->cpu, iv->state);
	if (l->n == before)
		return; /* outside --time-range */
	if (iv->state < 5)
		l->sum[iv->state] += l->v[l->n - 1].end - l->v[l->n - 1].start;
}

/* Index of the mark @name matches, or -1. */
static int mark_of(const struct tl *s, const char *name, uint64_t func)
{
	for (int i = 0; i < s->o.nmarks; i++) {
		uint64_t a;

		if (!strcmp(s->o.marks[i], name))
			return i;
		if (cli_parse_u64(s->o.marks[i], &a) == 0 && a == func && func)
			return i;
	}
	return -1;
}

static int cmp_iv(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->state >= 100) - (y->state >= 100);
}

static int cmp_lane(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;
	uint32_t px = x->pid ? x->pid : x->tid, py = y->pid ? y->pid : y->tid;

	if (px != py)
		return px < py ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static double ms(const struct tl *s, uint64_t ns)
{
	return ns >= s->first ? (ns - s->first) / 1e6 : -((s->first - ns) / 1e6);
}

/*
 * A task's label: "comm pid/tid", or "comm tid" for a process's main
 * thread or when its process is unknown (no placeholder pid 0).
 */
static const char *task_label(const struct tl *s, const struct lane *l, char *buf, size_t len)
{
	if (l->pid && l->pid != l->tid)
		snprintf(buf, len, "%s %" PRIu32 "/%" PRIu32, ka_comm(s->t, l->tid), l->pid, l->tid);
	else
		snprintf(buf, len, "%s %" PRIu32, ka_comm(s->t, l->tid), l->tid);
	return buf;
}

/* The highest CPU a shown task ran on, or -1. */
static int max_cpu(const struct tl *s)
{
	int m = -1;

	for (size_t i = 0; i < s->nlanes; i++)
		for (size_t k = 0; k < s->lanes[i].n; k++)
			if (s->lanes[i].v[k].state == KTR_TASK_RUNNING && s->lanes[i].v[k].cpu > m)
				m = s->lanes[i].v[k].cpu;
	return m;
}

/* Per CPU: how long the shown tasks ran there and how many of them did. */
static void print_cpus(FILE *out, const struct tl *s)
{
	int ncpu = max_cpu(s) + 1;

	for (int c = 0; c < ncpu; c++) {
		uint64_t busy = 0;
		size_t tasks = 0;

		for (size_t i = 0; i < s->nlanes; i++) {
			uint64_t t = 0;

			for (size_t k = 0; k < s->lanes[i].n; k++) {
				const struct iv *v = &s->lanes[i].v[k];

				if (v->state == KTR_TASK_RUNNING && v->cpu == c)
					t += v->end - v->start;
			}
			busy += t;
			tasks += t > 0;
		}
		fprintf(out, "cpu %d: the tasks shown ran %.3f ms (%.1f%%), %zu task%s\n", c, busy / 1e6,
			s->last > s->first ? 100.0 * (double)busy / (double)(s->last - s->first) : 0.0,
			tasks, tasks == 1 ? "" : "s");
	}
}

static void print_text(FILE *out, const struct tl *s, int summary)
{
	fprintf(out, "# ktrace timeline %s: %zu task%s, %.3f ms from %" PRIu64 " ns (CLOCK_MONOTONIC)\n",
		ktr_dir(s->t), s->nlanes, s->nlanes == 1 ? "" : "s", (s->last - s->first) / 1e6,
		s->first);
	if (!summary)
		fprintf(out, "# per task: start and end in ms from then, duration in us, state, CPU\n");
	print_cpus(out, s);
	for (size_t i = 0; i < s->nlanes; i++) {
		const struct lane *l = &s->lanes[i];
		char id[32];

		if (l->pid && l->pid != l->tid)
			snprintf(id, sizeof(id), "%" PRIu32 "/%" PRIu32, l->pid, l->tid);
		else
			snprintf(id, sizeof(id), "%" PRIu32, l->tid);
		fprintf(out, "%stask %s %s: running %.3f ms, ready %.3f ms, blocked %.3f ms, "
			     "%" PRIu64 " switch%s",
			summary ? "" : "\n", id, ka_comm(s->t, l->tid),
			l->sum[KTR_TASK_RUNNING] / 1e6, l->sum[KTR_TASK_READY] / 1e6,
			l->sum[KTR_TASK_BLOCKED] / 1e6, l->switches, l->switches == 1 ? "" : "es");
		if (l->nmarks)
			fprintf(out, ", %" PRIu64 " marked call%s", l->nmarks, l->nmarks == 1 ? "" : "s");
		fputc('\n', out);
		if (summary)
			continue;
		for (size_t k = 0; k < l->n; k++) {
			const struct iv *v = &l->v[k];

			fprintf(out, "  %12.6f %12.6f %12.3f  ", ms(s, v->start), ms(s, v->end),
				(v->end - v->start) / 1e3);
			if (v->state >= 100)
				fprintf(out, "call %s\n", s->o.marks[v->state - 100]);
			else if (v->cpu >= 0)
				fprintf(out, "%-8s %3d\n", ktr_task_state_name(v->state), v->cpu);
			else
				fprintf(out, "%-8s   -\n", ktr_task_state_name(v->state));
		}
	}
}

/* ---- SVG -------------------------------------------------------------------- */

static const char *const state_colour[] = { "#cccccc", "#2ca02c", "#ff9f1c", "#4a78b5", "#000000" };
static const char *const mark_colour[MAX_MARKS] = { "#d62728", "#9467bd", "#8c564b", "#e377c2",
						    "#17becf", "#bcbd22", "#7f7f7f", "#1f1f1f" };

/*
 * A task's colour on the CPU lanes: ColorBrewer's Set3, pastel hues that
 * differ from the states' and the marks' colours.
 */
static const char *task_colour(uint32_t tid)
{
	static const char *const c[] = { "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
					 "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd" };

	return c[(tid * 2654435761u >> 16) % (sizeof(c) / sizeof(c[0]))];
}

/* The time axis: tick labels in ms at @y (above the lanes and below them). */
static void axis_labels(FILE *out, double left, double plot, double span, double step, double y)
{
	for (double t = 0; t <= span * 1.0001; t += step)
		fprintf(out, "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n",
			left + plot * t / span, y, t);
}

/* Where things go in the picture: the shared measures of write_svg()'s parts. */
struct svg_geo {
	double left, plot, span; /* the plot's left edge and width in px, its span in ms */
	double top, lane_h, bar_h, gap;
	double tasks_y, bottom; /* where the task lanes start, where the lanes end */
	double step;            /* between ticks, in ms */
	int ncpu, width;
};

static double svg_x(const struct svg_geo *g, const struct tl *s, uint64_t ns)
{
	return g->left + g->plot * ms(s, ns) / g->span;
}

/* The title, and the time axis on top: grid lines, labels in ms. */
static void svg_top(FILE *out, const struct tl *s, const struct svg_geo *g)
{
	fprintf(out, "<text x=\"%.0f\" y=\"18\" font-size=\"13\" font-weight=\"bold\">Process states: ",
		g->left);
	fmt_xml_text(out, ktr_dir(s->t));
	fprintf(out, " (%.3f ms)</text>\n", g->span);
	for (double t = 0; t <= g->span * 1.0001; t += g->step) {
		double x = g->left + g->plot * t / g->span;

		fprintf(out, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#e0e0e0\"/>\n",
			x, g->top - 4, x, g->bottom);
	}
	fprintf(out, "<g class=\"axis-top\">\n");
	axis_labels(out, g->left, g->plot, g->span, g->step, g->top - 8);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">time (ms)</text>\n</g>\n",
		g->left - 6, g->top - 8);
}

/* CPU @c's lane: what ran there, a colour per task, its name as the tooltip. */
static void svg_cpu_lane(FILE *out, const struct tl *s, const struct svg_geo *g, int c)
{
	double y = g->top + g->lane_h * c, bar_y = y + (g->lane_h - g->bar_h) / 2;
	char label[128];

	fprintf(out, "<g class=\"cpu\">\n<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">CPU %d</text>\n",
		g->left - 6, y + g->lane_h / 2 + 4, c);
	for (size_t i = 0; i < s->nlanes; i++) {
		const struct lane *l = &s->lanes[i];
		struct fmt_svg_bar p = { 0, 0, 0 };
		const char *colour = task_colour(l->tid);
		int any = 0;

		for (size_t k = 0; k < l->n; k++) {
			const struct iv *v = &l->v[k];

			if (v->state != KTR_TASK_RUNNING || v->cpu != c)
				continue;
			if (!any) {
				fprintf(out, "<g><title>");
				fmt_xml_text(out, task_label(s, l, label, sizeof(label)));
				fprintf(out, "</title>\n");
				any = 1;
			}
			fmt_svg_bar_add(out, &p, svg_x(g, s, v->start), svg_x(g, s, v->end), bar_y, g->bar_h,
					colour);
		}
		if (any) {
			fmt_svg_bar_flush(out, &p, bar_y, g->bar_h, colour);
			fprintf(out, "</g>\n");
		}
	}
	fprintf(out, "</g>\n");
}

/* Task lane @i: its label, its states, its marked calls (a bracket over the bar, with a tooltip). */
static void svg_task_lane(FILE *out, const struct tl *s, const struct svg_geo *g, size_t i)
{
	const struct lane *l = &s->lanes[i];
	double y = g->tasks_y + g->lane_h * (double)i, bar_y = y + (g->lane_h - g->bar_h) / 2;
	struct fmt_svg_bar p[5] = { { 0, 0, 0 } };
	char label[128];

	fprintf(out, "<g class=\"task\">\n<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", g->left - 6,
		y + g->lane_h / 2 + 4);
	fmt_xml_text(out, task_label(s, l, label, sizeof(label)));
	fprintf(out, "</text>\n");
	for (size_t k = 0; k < l->n; k++) {
		const struct iv *v = &l->v[k];

		if (v->state >= 100 || v->state > 4)
			continue;
		fmt_svg_bar_add(out, &p[v->state], svg_x(g, s, v->start), svg_x(g, s, v->end), bar_y,
				g->bar_h, state_colour[v->state]);
	}
	for (int st = 0; st < 5; st++)
		fmt_svg_bar_flush(out, &p[st], bar_y, g->bar_h, state_colour[st]);
	for (size_t k = 0; k < l->n; k++) {
		const struct iv *v = &l->v[k];
		double x0 = svg_x(g, s, v->start), x1 = svg_x(g, s, v->end);

		if (v->state < 100)
			continue;
		fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"4\" fill=\"%s\">"
			     "<title>",
			x0, y + 1, x1 - x0 < 1 ? 1 : x1 - x0, mark_colour[v->state - 100]);
		fmt_xml_text(out, s->o.marks[v->state - 100]);
		fprintf(out, " %.3f ms</title></rect>\n", (v->end - v->start) / 1e6);
	}
	fprintf(out, "</g>\n");
}

/* The time axis below the lanes, then the legend: the states, the marks, the CPU lanes. */
static void svg_bottom(FILE *out, const struct tl *s, const struct svg_geo *g)
{
	static const int order[] = { KTR_TASK_RUNNING, KTR_TASK_READY, KTR_TASK_BLOCKED };
	double y = g->bottom + 44, x = g->left;

	fprintf(out, "<g class=\"axis-bottom\">\n");
	axis_labels(out, g->left, g->plot, g->span, g->step, g->bottom + 14);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time (ms)</text>\n</g>\n",
		g->left + g->plot / 2, g->bottom + 28);
	for (int i = 0; i < 3; i++, x += 110) {
		fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"10\" fill=\"%s\"/>"
			     "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
			x, y, state_colour[order[i]], x + 18, y + 9, ktr_task_state_name(order[i]));
	}
	for (int i = 0; i < s->o.nmarks; i++, x += 160) {
		fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
			     "<text x=\"%.0f\" y=\"%.0f\">calls of ",
			x, y + 3, mark_colour[i], x + 18, y + 9);
		fmt_xml_text(out, s->o.marks[i]);
		fprintf(out, "</text>\n");
	}
	if (g->ncpu)
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">CPU lanes: a colour per task (its name "
			     "in the tooltip)</text>\n",
			x, y + 9);
}

/*
 * The picture, top to bottom: the title; the time axis (ms); a lane per CPU
 * showing which of the shown tasks ran there (a colour per task, its name
 * as the tooltip); a lane per task with its states and marked calls; the
 * time axis again; the legend.  Grid lines cross all lanes.
 */
static int write_svg(const char *file, const struct tl *s, int width)
{
	struct svg_geo g = { .left = 200, .top = 52, .lane_h = 22, .bar_h = 14, .gap = 12,
			     .width = width };
	struct cli_out o;
	char title[4200];

	g.plot = width - g.left - 20;
	g.span = (s->last - s->first) / 1e6;
	g.ncpu = max_cpu(s) + 1;
	g.tasks_y = g.top + g.lane_h * g.ncpu + (g.ncpu ? g.gap : 0);
	g.bottom = g.tasks_y + g.lane_h * (double)s->nlanes;
	if (cli_out_open(CMD, &o, file))
		return 1;
	if (g.span <= 0)
		g.span = 1e-3;
	g.step = fmt_tick_step(g.span, 10);
	snprintf(title, sizeof(title), "ktrace timeline %s", ktr_dir(s->t));
	fmt_svg_begin(o.f, width, g.bottom + 70, title);
	svg_top(o.f, s, &g);
	for (int c = 0; c < g.ncpu; c++)
		svg_cpu_lane(o.f, s, &g, c);
	if (g.ncpu)
		fprintf(o.f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999999\"/>\n",
			g.tasks_y - g.gap / 2, width, g.tasks_y - g.gap / 2);
	for (size_t i = 0; i < s->nlanes; i++)
		svg_task_lane(o.f, s, &g, i);
	svg_bottom(o.f, s, &g);
	fmt_svg_end(o.f);
	return cli_out_close(CMD, &o);
}

/* Open the trace and what reads it: the tasks shown, their states, the marked calls' names. */
static int timeline_open(struct tl *s)
{
	s->t = cli_select_open(&s->o.sel, CMD, s->o.dir);
	if (!s->t)
		return 1;
	cli_diags(CMD, s->t);
	s->tasks = ka_tasks_new(s->t, s->o.all, &s->o.sel.pids, &s->o.sel.tids);
	s->sched = ktr_sched_new(0, on_interval, s);
	if (s->o.nmarks)
		s->names = ka_names_new(s->t, s->o.sel.demangle);
	if (!s->tasks || !s->sched || (s->o.nmarks && !s->names)) {
		cli_error(CMD, "out of memory");
		return 1;
	}
	ktr_sched_follow(s->sched, ka_tasks_want, s->tasks);
	return 0;
}

/* A call of a marked function on its thread's lane. */
static void timeline_mark(struct tl *s, const struct ktr_rec *r)
{
	struct ktr_call call;
	struct lane *l;
	int m;

	if (!ktr_call_decode(s->t, r, &call) || !cli_select_call(&s->o.sel, &call) ||
	    (m = mark_of(s, ka_names_call(s->names, &call), call.func)) < 0)
		return;
	l = lane_get(s, call.tid, call.pid);
	if (l) {
		lane_add(s, l, call.entry_ns, call.exit_ns, call.cpu, 100 + m);
		l->nmarks++;
	}
}

/* One record: the time span, the switches, the states, the marked calls. */
static void timeline_feed(struct tl *s, const struct ktr_rec *r)
{
	if (!s->have_first) {
		s->first = r->ns;
		s->have_first = 1;
	}
	if (r->ns > s->last)
		s->last = r->ns;
	if (r->kind == KTR_RECORD && r->cls == KTRACE_CLASS_KEVENT) {
		s->kevents++;
		/*
		 * A switch is the task leaving a CPU (preempted, to
		 * sleep, at exit): its context switches.  Not its
		 * intervals: a sleep is two, blocked then ready.
		 */
		if (r->id == KTRACE_LKST_PROCESS_CONTEXTSWITCH && r->nwords >= 2 && r->w[1] &&
		    r->ns >= s->o.sel.from && r->ns <= s->o.sel.to) {
			struct lane *l = lane_get(s, (uint32_t)r->w[1], 0);

			if (l)
				l->switches++;
		}
	}
	ka_tasks_feed(s->tasks, r);
	ktr_sched_feed(s->sched, s->t, r);
	if (s->o.nmarks && r->kind == KTR_RECORD && r->cls == KTRACE_CLASS_CALL)
		timeline_mark(s, r);
}

/* One pass over the records, then what is missing said. */
static void timeline_read(struct tl *s)
{
	struct ka_progress *prog = ka_progress_start(s->t, CMD, 0);
	struct ktr_rec r;

	while (ktr_next(s->t, &r)) {
		ka_progress_rec(prog, &r);
		cli_diags(CMD, s->t);
		timeline_feed(s, &r);
	}
	ka_progress_end(prog);
	ktr_sched_finish(s->sched, s->last);
	cli_diags(CMD, s->t);
	if (!s->kevents)
		cli_error(CMD, "%s: no kernel events (record with `ktrace record --kernel`); "
			       "nothing to show but marked calls", ktr_dir(s->t));
	if (s->oom)
		cli_error(CMD, "out of memory: some intervals are missing");
}

/* The lanes laid out: empty ones gone, sorted by task and by time, the span clipped to --time-range. */
static void timeline_layout(struct tl *s)
{
	size_t n = 0;

	/* lanes without any interval (filtered tasks never get one) go */
	for (size_t i = 0; i < s->nlanes; i++) {
		if (s->lanes[i].n)
			s->lanes[n++] = s->lanes[i];
		else
			free(s->lanes[i].v);
	}
	s->nlanes = n;
	if (s->nlanes)
		qsort(s->lanes, s->nlanes, sizeof(*s->lanes), cmp_lane);
	for (size_t i = 0; i < s->nlanes; i++)
		qsort(s->lanes[i].v, s->lanes[i].n, sizeof(struct iv), cmp_iv);
	if (s->o.sel.from > s->first)
		s->first = s->o.sel.from;
	if (s->o.sel.to < s->last)
		s->last = s->o.sel.to;
}

static void timeline_free(struct tl *s)
{
	for (size_t i = 0; i < s->nlanes; i++)
		free(s->lanes[i].v);
	free(s->lanes);
	ka_map64_free(&s->lane_of);
	ktr_sched_free(s->sched);
	ka_tasks_free(s->tasks);
	ka_names_free(s->names);
	cli_select_free(&s->o.sel);
	ktr_close(s->t);
}

/* `ktrace timeline`: options, one pass over the records, the text or the picture. */
static int run(int argc, char **argv)
{
	struct tl s;
	int rc;

	memset(&s, 0, sizeof(s));
	s.o.width = 1200;
	cli_select_init(&s.o.sel);
	rc = cli_opts_parse_dir(&cmd_opts, argc, argv, &s.o.sel, take_option, &s.o, &s.o.dir);
	if (rc != CLI_OPTS_GO) {
		cli_select_free(&s.o.sel);
		return rc;
	}
	rc = timeline_open(&s);
	if (!rc) {
		timeline_read(&s);
		timeline_layout(&s);
		if (s.o.svg) {
			rc = write_svg(s.o.svg, &s, s.o.width);
		} else {
			cli_pager_start();
			print_text(stdout, &s, s.o.summary);
		}
		if (!rc && (ktr_error_count(s.t) || s.oom))
			rc = 1;
	}
	timeline_free(&s);
	return rc;
}

KTRACE_COMMAND_OPTS(timeline, "per-task running/ready/blocked timeline from kernel events, text or SVG",
		    run, cmd_opts);

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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "cli/cli.h"
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

struct tl {
	struct ktr_trace *t;
	struct lane *lanes;
	size_t nlanes, cap;
	struct ka_map64 lane_of; /* tid -> lane index */
	const char *marks[MAX_MARKS];
	int nmarks;
	uint64_t first, last;
	int have_first;
	int oom;
	struct cli_select sel; /* its time range clips the intervals */
};

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace timeline [options] [DIR]\n"
		"\n"
		"Show when each task was running, ready (runnable, waiting for a CPU) or blocked\n"
		"(sleeping), from the context switches and wakeups of a trace recorded with\n"
		"`ktrace record --kernel` (or the module's LKST tracer): LKST's process trace.\n"
		"By default the traced program and the processes and threads it started;\n"
		"every task for a kernel-only trace.  Times are ms from the first record.\n"
		"DIR defaults to ./ktrace.data.\n"
		"\n"
		"  -s, --summary         one line per task: time in each state, switches (how\n"
		"                        often it left a CPU)\n"
		"      --svg FILE        draw an SVG picture instead (- for standard output):\n"
		"                        a lane per task, colours per state, time axis in ms\n"
		"  -w, --width PX        picture width (default 1200)\n"
		"  -m, --mark FUNC       mark the calls of function FUNC (a name, or an\n"
		"                        address 0x...) on its thread's lane (repeatable, %d)\n"
		"  -a, --all             every task, not only the program's\n"
		CLI_SELECT_HELP
		CLI_OUTPUT_HELP
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0, 1 the trace has errors (all that was readable is shown) or\n"
		"the output failed, 2 usage error.  See ktrace-timeline(1).\n",
		MAX_MARKS);
}

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

	if (start < s->sel.from)
		start = s->sel.from;
	if (end > s->sel.to)
		end = s->sel.to;
	if (start >= end && !(start == end && start >= s->sel.from && end <= s->sel.to))
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
	for (int i = 0; i < s->nmarks; i++) {
		uint64_t a;

		if (!strcmp(s->marks[i], name))
			return i;
		if (cli_parse_u64(s->marks[i], &a) == 0 && a == func && func)
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
				fprintf(out, "call %s\n", s->marks[v->state - 100]);
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

/*
 * The picture, top to bottom: the title; the time axis (ms); a lane per CPU
 * showing which of the shown tasks ran there (a colour per task, its name
 * as the tooltip); a lane per task with its states and marked calls; the
 * time axis again; the legend.  Grid lines cross all lanes.
 */
static int write_svg(const char *file, const struct tl *s, int width)
{
	const double left = 200, right = 20, top = 52, lane_h = 22, bar_h = 14, gap = 12;
	double plot = width - left - right, span = (s->last - s->first) / 1e6, step;
	int ncpu = max_cpu(s) + 1;
	double tasks_y = top + lane_h * ncpu + (ncpu ? gap : 0);
	double bottom = tasks_y + lane_h * (double)s->nlanes;
	double height = bottom + 70;
	struct cli_out o;
	char title[4200], label[128];
	FILE *out;

	if (cli_out_open(CMD, &o, file))
		return 1;
	out = o.f;
	if (span <= 0)
		span = 1e-3;
	snprintf(title, sizeof(title), "ktrace timeline %s", ktr_dir(s->t));
	fmt_svg_begin(out, width, height, title);
	fprintf(out, "<text x=\"%.0f\" y=\"18\" font-size=\"13\" font-weight=\"bold\">Process states: ",
		left);
	fmt_xml_text(out, ktr_dir(s->t));
	fprintf(out, " (%.3f ms)</text>\n", span);
	/* time axis: grid lines, labels in ms above and below the lanes */
	step = fmt_tick_step(span, 10);
	for (double t = 0; t <= span * 1.0001; t += step) {
		double x = left + plot * t / span;

		fprintf(out, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#e0e0e0\"/>\n",
			x, top - 4, x, bottom);
	}
	fprintf(out, "<g class=\"axis-top\">\n");
	axis_labels(out, left, plot, span, step, top - 8);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">time (ms)</text>\n</g>\n",
		left - 6, top - 8);
	/* CPU lanes: what ran where */
	for (int c = 0; c < ncpu; c++) {
		double y = top + lane_h * c;

		fprintf(out, "<g class=\"cpu\">\n<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">CPU %d</text>\n",
			left - 6, y + lane_h / 2 + 4, c);
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
				fmt_svg_bar_add(out, &p, left + plot * ms(s, v->start) / span,
						left + plot * ms(s, v->end) / span, y + (lane_h - bar_h) / 2, bar_h,
						colour);
			}
			if (any) {
				fmt_svg_bar_flush(out, &p, y + (lane_h - bar_h) / 2, bar_h, colour);
				fprintf(out, "</g>\n");
			}
		}
		fprintf(out, "</g>\n");
	}
	if (ncpu)
		fprintf(out, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999999\"/>\n",
			tasks_y - gap / 2, width, tasks_y - gap / 2);
	for (size_t i = 0; i < s->nlanes; i++) {
		const struct lane *l = &s->lanes[i];
		double y = tasks_y + lane_h * (double)i;
		struct fmt_svg_bar p[5] = { { 0, 0, 0 } };

		fprintf(out, "<g class=\"task\">\n<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", left - 6,
			y + lane_h / 2 + 4);
		fmt_xml_text(out, task_label(s, l, label, sizeof(label)));
		fprintf(out, "</text>\n");
		for (size_t k = 0; k < l->n; k++) {
			const struct iv *v = &l->v[k];
			double x0 = left + plot * ms(s, v->start) / span, x1 = left + plot * ms(s, v->end) / span;

			if (v->state >= 100 || v->state > 4)
				continue;
			fmt_svg_bar_add(out, &p[v->state], x0, x1, y + (lane_h - bar_h) / 2, bar_h,
				 state_colour[v->state]);
		}
		for (int st = 0; st < 5; st++)
			fmt_svg_bar_flush(out, &p[st], y + (lane_h - bar_h) / 2, bar_h, state_colour[st]);
		/* marked calls: a bracket over the bar, with a tooltip */
		for (size_t k = 0; k < l->n; k++) {
			const struct iv *v = &l->v[k];
			double x0 = left + plot * ms(s, v->start) / span, x1 = left + plot * ms(s, v->end) / span;

			if (v->state < 100)
				continue;
			fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"4\" fill=\"%s\">"
				     "<title>",
				x0, y + 1, x1 - x0 < 1 ? 1 : x1 - x0, mark_colour[v->state - 100]);
			fmt_xml_text(out, s->marks[v->state - 100]);
			fprintf(out, " %.3f ms</title></rect>\n", (v->end - v->start) / 1e6);
		}
		fprintf(out, "</g>\n");
	}
	fprintf(out, "<g class=\"axis-bottom\">\n");
	axis_labels(out, left, plot, span, step, bottom + 14);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time (ms)</text>\n</g>\n",
		left + plot / 2, bottom + 28);
	/* legend */
	{
		double y = bottom + 44, x = left;
		static const int order[] = { KTR_TASK_RUNNING, KTR_TASK_READY, KTR_TASK_BLOCKED };

		for (int i = 0; i < 3; i++, x += 110) {
			fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"10\" fill=\"%s\"/>"
				     "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
				x, y, state_colour[order[i]], x + 18, y + 9, ktr_task_state_name(order[i]));
		}
		for (int i = 0; i < s->nmarks; i++, x += 160) {
			fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
				     "<text x=\"%.0f\" y=\"%.0f\">calls of ",
				x, y + 3, mark_colour[i], x + 18, y + 9);
			fmt_xml_text(out, s->marks[i]);
			fprintf(out, "</text>\n");
		}
		if (ncpu)
			fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">CPU lanes: a colour per task (its name "
				     "in the tooltip)</text>\n",
				x, y + 9);
	}
	fmt_svg_end(out);
	return cli_out_close(CMD, &o);
}

static int run(int argc, char **argv)
{
	enum { OPT_SVG = CLI_OPT_SELECT_END };
	static const struct option opts[] = {
		{ "summary", no_argument, NULL, 's' }, { "svg", required_argument, NULL, OPT_SVG },
		{ "width", required_argument, NULL, 'w' },  { "mark", required_argument, NULL, 'm' },
		{ "all", no_argument, NULL, 'a' },          { "help", no_argument, NULL, 'h' },
		CLI_SELECT_LONGOPTS, CLI_OUTPUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *svg = NULL, *dir;
	int summary = 0, all = 0, width = 1200, c, rc = 0, r2;
	struct tl s;
	struct ka_tasks *tasks = NULL;
	struct ka_names *names = NULL;
	struct ktr_sched *sched = NULL;
	struct ka_progress *prog;
	struct ktr_rec r;
	uint64_t v, kevents = 0;

	memset(&s, 0, sizeof(s));
	cli_select_init(&s.sel);
	while ((c = getopt_long(argc, argv, ":sw:m:ap:h", opts, NULL)) != -1) {
		if ((r2 = cli_select_option(&s.sel, CMD, c, optarg)) != 0 ||
		    (r2 = cli_output_option(CMD, c, optarg)) != 0) {
			if (r2 < 0)
				return 2;
			continue;
		}
		switch (c) {
		case 's':
			summary = 1;
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		case 'w':
			if (cli_parse_u64(optarg, &v) < 0 || v < 300 || v > 100000) {
				cli_error(CMD, "option '--width' needs 300..100000 pixels, not '%s'", optarg);
				return 2;
			}
			width = (int)v;
			break;
		case 'm':
			if (s.nmarks == MAX_MARKS) {
				cli_error(CMD, "option '--mark': at most %d functions", MAX_MARKS);
				return 2;
			}
			s.marks[s.nmarks++] = optarg;
			break;
		case 'a':
			all = 1;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	s.t = cli_select_open(&s.sel, CMD, dir);
	if (!s.t)
		return 1;
	cli_diags(CMD, s.t);
	tasks = ka_tasks_new(s.t, all, &s.sel.pids, &s.sel.tids);
	sched = ktr_sched_new(0, on_interval, &s);
	if (s.nmarks)
		names = ka_names_new(s.t, s.sel.demangle);
	if (!tasks || !sched || (s.nmarks && !names)) {
		cli_error(CMD, "out of memory");
		rc = 1;
		goto out;
	}
	ktr_sched_follow(sched, ka_tasks_want, tasks);
	prog = ka_progress_start(s.t, CMD, 0);
	while (ktr_next(s.t, &r)) {
		ka_progress_rec(prog, &r);
		cli_diags(CMD, s.t);
		if (!s.have_first) {
			s.first = r.ns;
			s.have_first = 1;
		}
		if (r.ns > s.last)
			s.last = r.ns;
		if (r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_KEVENT) {
			kevents++;
			/*
			 * A switch is the task leaving a CPU (preempted, to
			 * sleep, at exit): its context switches.  Not its
			 * intervals: a sleep is two, blocked then ready.
			 */
			if (r.id == KTRACE_LKST_PROCESS_CONTEXTSWITCH && r.nwords >= 2 && r.w[1] &&
			    r.ns >= s.sel.from && r.ns <= s.sel.to) {
				struct lane *l = lane_get(&s, (uint32_t)r.w[1], 0);

				if (l)
					l->switches++;
			}
		}
		ka_tasks_feed(tasks, &r);
		ktr_sched_feed(sched, s.t, &r);
		if (s.nmarks && r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_CALL) {
			struct ktr_call call;
			int m;

			if (ktr_call_decode(s.t, &r, &call) && cli_select_call(&s.sel, &call) &&
			    (m = mark_of(&s, ka_names_call(names, &call), call.func)) >= 0) {
				struct lane *l = lane_get(&s, call.tid, call.pid);

				if (l) {
					lane_add(&s, l, call.entry_ns, call.exit_ns, call.cpu, 100 + m);
					l->nmarks++;
				}
			}
		}
	}
	ka_progress_end(prog);
	ktr_sched_finish(sched, s.last);
	cli_diags(CMD, s.t);
	if (!kevents)
		cli_error(CMD, "%s: no kernel events (record with `ktrace record --kernel`); "
			       "nothing to show but marked calls", ktr_dir(s.t));
	if (s.oom)
		cli_error(CMD, "out of memory: some intervals are missing");
	{
		/* lanes without any interval (filtered tasks never get one) go */
		size_t n = 0;

		for (size_t i = 0; i < s.nlanes; i++) {
			if (s.lanes[i].n)
				s.lanes[n++] = s.lanes[i];
			else
				free(s.lanes[i].v);
		}
		s.nlanes = n;
	}
	if (s.nlanes)
		qsort(s.lanes, s.nlanes, sizeof(*s.lanes), cmp_lane);
	for (size_t i = 0; i < s.nlanes; i++)
		qsort(s.lanes[i].v, s.lanes[i].n, sizeof(struct iv), cmp_iv);
	if (s.sel.from > s.first)
		s.first = s.sel.from;
	if (s.sel.to < s.last)
		s.last = s.sel.to;
	if (svg) {
		rc = write_svg(svg, &s, width);
	} else {
		cli_pager_start();
		print_text(stdout, &s, summary);
	}
	if (!rc && (ktr_error_count(s.t) || s.oom))
		rc = 1;
out:
	for (size_t i = 0; i < s.nlanes; i++)
		free(s.lanes[i].v);
	free(s.lanes);
	ka_map64_free(&s.lane_of);
	ktr_sched_free(sched);
	ka_tasks_free(tasks);
	ka_names_free(names);
	cli_select_free(&s.sel);
	ktr_close(s.t);
	return rc;
}

KTRACE_COMMAND(timeline, "per-task running/ready/blocked timeline from kernel events, text or SVG",
	       run, help);

/*
 * cli/cmd_export.c - `ktrace export DIR --format=perfetto|chrome|folded|csv|trace.dat
 * [-o FILE]`: a trace (application and kernel sub-trace merged by time) in
 * formats other tools read:
 *
 *   chrome, perfetto  Chrome trace-event JSON ("JSON Object Format"; opens in
 *                     ui.perfetto.dev and chrome://tracing): function calls
 *                     as complete events ("ph":"X") on their thread with the
 *                     function's name, static events as instants (or B/E
 *                     for klog's entry/exit codes), the kernel as a process
 *                     "kernel" with a thread per CPU carrying what ran there
 *                     (X slices named after the task, from context switches)
 *                     and every kernel event as an instant with its
 *                     arguments; process and thread names as "M" metadata;
 *                     gaps as global instants.
 *   folded            folded stacks for flame graphs (flamegraph.pl,
 *                     speedscope, inferno): "THREAD;caller;...;callee N" per
 *                     line, N the self time in ns of that stack; stacks are
 *                     rebuilt from the CALL records' entry times, durations
 *                     and depths.
 *   csv               one row per record: time_ns, dur_ns, cpu, pid, tid,
 *                     comm, category, name, args ("k=v;k=v").
 *   trace.dat         trace-cmd's file (`trace-cmd report`, KernelShark) of
 *                     the kernel sub-trace's raw ftrace copy, every
 *                     tracepoint with all its fields; written by
 *                     kclient/tracedat.c (libtracecmd); needs -o FILE (the
 *                     writer seeks); the application's calls are not in it.
 *
 * Memory is bounded however large the trace: JSON and CSV stream record by
 * record (metadata events for threads are written when a thread is first
 * seen); folded sorts the calls with the reader's external sort (runs
 * spill to temporary files) and aggregates at most 1M distinct stacks at a
 * time (a stack may then appear on several lines; flame-graph tools sum
 * them).  Long exports show progress on a terminal (analysis/progress.c).
 *
 * Exit status: 0, 1 the trace has errors (everything readable was
 * exported) or the output failed, 2 usage error.
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
#include "kclient/kclient.h"
#include "reader/reader.h"
#include "reader/sched.h"

#define CMD "export"
#define KPID 1000000000u /* the kernel's pseudo process in JSON; CPU n is KPID + 1 + n */

enum fmt { F_NONE, F_JSON, F_FOLDED, F_CSV, F_TRACEDAT };

struct ex {
	struct ktr_trace *t;
	struct cli_select sel;
	FILE *out;
	struct ka_names *names;
	struct fmt_te te; /* JSON */
	int no_kernel;
	/* threads and CPUs whose names were written (JSON) */
	uint64_t *seen;
	size_t nseen, capseen;
	uint64_t events;
};

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace export --format=FORMAT [options] [DIR]\n"
		"\n"
		"Write the trace in DIR (with its kernel events, merged by time) for other tools:\n"
		"  perfetto, chrome   Chrome trace-event JSON: open it in ui.perfetto.dev or\n"
		"                     chrome://tracing.  Function calls are slices on their\n"
		"                     thread, the kernel is a process with a track per CPU\n"
		"                     (what ran there, and every kernel event as an instant)\n"
		"  folded             folded stacks (\"thread;caller;callee self_ns\") for\n"
		"                     flamegraph.pl, speedscope or inferno\n"
		"  csv                one row per record with a header line: time_ns, dur_ns,\n"
		"                     self_ns, cpu, pid, tid, comm, category, name, args (the\n"
		"                     columns of kd -c --format=csv)\n"
		"  trace.dat          trace-cmd's trace.dat (version 6) of the kernel events\n"
		"                     (`ktrace record --kernel`, every tracepoint and field):\n"
		"                     trace-cmd report FILE, KernelShark; needs -o FILE\n"
		"DIR defaults to ./ktrace.data.\n"
		"\n"
		"      --format FORMAT    one of the above (required)\n"
		"  -o, --output FILE      write to FILE, mode 0600 (a temporary renamed into\n"
		"                         place; default, or -: standard output)\n"
		"  -K, --no-kernel        leave the kernel events out\n"
		CLI_SELECT_HELP
		"  -h, --help             this text\n"
		"\n"
		"Large traces stream out in bounded memory; a terminal shows progress.\n"
		"Exit status: 0, 1 the trace has errors (all readable records were exported)\n"
		"or the output failed, 2 usage error.  See ktrace-export(1).\n");
}

/* ---- JSON (trace events: formats/json.c) ---------------------------------------- */

/* 1 if @key (pid << 32 | tid, + 1 so that 0 means empty) was seen; adds it. */
static int seen(struct ex *x, uint64_t key)
{
	size_t i;

	key++;
	if ((x->nseen + 1) * 2 > x->capseen) {
		size_t cap = x->capseen ? 2 * x->capseen : 256;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return 1;
		for (size_t k = 0; k < x->capseen; k++) {
			if (!x->seen[k])
				continue;
			for (i = (size_t)(x->seen[k] * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1); n[i];
			     i = (i + 1) & (cap - 1))
				;
			n[i] = x->seen[k];
		}
		free(x->seen);
		x->seen = n;
		x->capseen = cap;
	}
	for (i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (x->capseen - 1); x->seen[i];
	     i = (i + 1) & (x->capseen - 1))
		if (x->seen[i] == key)
			return 1;
	x->seen[i] = key;
	x->nseen++;
	return 0;
}

/* Name a thread (and its process) the first time it is used. */
static void json_thread(struct ex *x, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;

	if (seen(x, key))
		return;
	if (!seen(x, (uint64_t)pid << 32 | 0xffffffffu)) {
		fmt_te_meta(&x->te, "process_name", pid, pid, pid == KPID ? "kernel" : ka_comm(x->t, pid));
		if (pid == KPID)
			fmt_te_sort_index(&x->te, KPID, -1);
	}
	if (pid == KPID) {
		char name[32];

		if (tid == KPID)
			snprintf(name, sizeof(name), "CPU ?");
		else
			snprintf(name, sizeof(name), "CPU %u", tid - KPID - 1);
		fmt_te_meta(&x->te, "thread_name", pid, tid, name);
	} else {
		fmt_te_meta(&x->te, "thread_name", pid, tid, ka_comm(x->t, tid));
	}
}

static uint32_t cpu_tid(int cpu)
{
	return cpu >= 0 ? KPID + 1 + (uint32_t)cpu : KPID;
}

/* A record's arguments by name; with @with_task its task too (kernel events). */
static void json_args(struct ex *x, const struct ktr_rec *r, int with_task)
{
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS];
	unsigned n = ktr_rec_args(x->t, r, names, vals);

	for (unsigned i = 0; i < n; i++)
		fmt_te_arg_value(&x->te, names[i], vals[i]);
	if (with_task) {
		/* the task the event happened in (its own arguments may name others) */
		fmt_te_arg_u64(&x->te, "task_pid", r->pid);
		fmt_te_arg_u64(&x->te, "task_tid", r->tid);
		fmt_te_arg_str(&x->te, "task_comm", ka_comm(x->t, r->tid));
	}
	fmt_te_end_event(&x->te);
}

/* A running interval of a task on a CPU (reader/sched.c): a slice on that CPU's track. */
static void json_running(void *arg, const struct ktr_sched_iv *iv)
{
	struct ex *x = arg;
	char name[64];

	if (iv->state != KTR_TASK_RUNNING)
		return;
	json_thread(x, KPID, cpu_tid(iv->cpu));
	snprintf(name, sizeof(name), "%s %" PRIu32, ka_comm(x->t, iv->tid), iv->tid);
	fmt_te_event(&x->te, name, "sched", "X", NULL, iv->start_ns, iv->end_ns - iv->start_ns, KPID,
		     cpu_tid(iv->cpu));
	fmt_te_arg_u64(&x->te, "pid", iv->pid);
	fmt_te_arg_u64(&x->te, "tid", iv->tid);
	fmt_te_end_event(&x->te);
}

static void json_gap(struct ex *x, const struct ktr_rec *r)
{
	char name[64];
	int kernel = r->stream >= KTR_KERNEL_STREAM;

	fmt_te_event(&x->te, ktr_rec_name(x->t, r, name, sizeof(name)), "ktrace", "i", "g", r->ns, 0,
		     kernel ? KPID : r->pid, kernel ? cpu_tid(r->cpu) : r->tid);
	fmt_te_arg_u64(&x->te, "count", r->count);
	fmt_te_arg_u64(&x->te, "stream", r->stream);
	if (r->what)
		fmt_te_arg_str(&x->te, "what", r->what);
	fmt_te_end_event(&x->te);
}

static void json_call(struct ex *x, const struct ktr_call *c)
{
	json_thread(x, c->pid, c->tid);
	fmt_te_event(&x->te, ka_names_call(x->names, c), "call", "X", NULL, c->entry_ns, c->dur_ns,
		     c->pid, c->tid);
	fmt_te_arg_u64(&x->te, "depth", c->depth);
	if (c->cpu >= 0)
		fmt_te_arg_u64(&x->te, "cpu", (uint64_t)c->cpu);
	if (c->sig)
		fmt_te_arg_u64(&x->te, "signal_depth", c->sig);
	if (c->flags & KTRACE_CALLF_UNFINISHED)
		fmt_te_arg_true(&x->te, "unfinished");
	if (c->func)
		fmt_te_arg_hex(&x->te, "func", c->func);
	fmt_te_end_event(&x->te);
}

static void json_record(struct ex *x, const struct ktr_rec *r)
{
	char name[128];
	const char *ph = "i";

	if (r->kind == KTR_GAP) {
		json_gap(x, r);
		return;
	}
	if (r->cls == KTRACE_CLASS_CALL) {
		struct ktr_call c;

		if (ktr_call_decode(x->t, r, &c) && cli_select_call(&x->sel, &c))
			json_call(x, &c);
		return;
	}
	ktr_rec_name(x->t, r, name, sizeof(name));
	if (r->cls == KTRACE_CLASS_KEVENT) {
		json_thread(x, KPID, cpu_tid(r->cpu));
		fmt_te_event(&x->te, name, ktr_rec_category(x->t, r), "i", "t", r->ns, 0, KPID,
			     cpu_tid(r->cpu));
		json_args(x, r, 1);
		return;
	}
	/* static events (LOG2/LOG4) and unknown classes: on their thread */
	if (r->cls == KTRACE_CLASS_LOG2 || r->cls == KTRACE_CLASS_LOG4) {
		unsigned code = KTRACE_EVENT_CODE(r->id), func = KTRACE_EVENT_FUNC(r->id);
		const char *fn = ktr_func_name(x->t, func);

		if (code == 1 || code == 2) {
			ph = code == 1 ? "B" : "E";
			if (fn)
				snprintf(name, sizeof(name), "%s", fn);
			else
				snprintf(name, sizeof(name), "F%u", func);
		}
	}
	json_thread(x, r->pid, r->tid);
	fmt_te_event(&x->te, name, ktr_rec_category(x->t, r), ph, ph[0] == 'i' ? "t" : NULL, r->ns, 0,
		     r->pid, r->tid);
	json_args(x, r, 0);
}

static int export_json(struct ex *x)
{
	struct ktr_sched *sched = x->no_kernel ? NULL : ktr_sched_new(0, json_running, x);
	struct ka_progress *prog = ka_progress_start(x->t, CMD, x->out == stdout);
	const struct ktr_info *in = ktr_info(x->t);
	const char *kv[] = { "generator", "ktrace " KTRACE_VERSION, "clock", "CLOCK_MONOTONIC", "host",
			     in->host, "kernel", in->kernel, "trace", ktr_dir(x->t) };
	struct ktr_rec r;
	uint64_t last = 0;

	fmt_te_begin(&x->te, x->out);
	while (ktr_next(x->t, &r)) {
		ka_progress_rec(prog, &r);
		cli_diags(CMD, x->t);
		if (r.ns > last)
			last = r.ns;
		if (x->no_kernel && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT))
			continue;
		if (sched)
			ktr_sched_feed(sched, x->t, &r);
		if (r.cls != KTRACE_CLASS_CALL && !cli_select_rec(&x->sel, &r))
			continue;
		json_record(x, &r);
		x->events++;
		if (ferror(x->out))
			break;
	}
	if (sched) {
		ktr_sched_finish(sched, last);
		ktr_sched_free(sched);
	}
	ka_progress_end(prog);
	fmt_te_end(&x->te, kv, 5);
	return 0;
}

/* ---- CSV -------------------------------------------------------------------- */

static int export_csv(struct ex *x)
{
	struct ka_progress *prog = ka_progress_start(x->t, CMD, x->out == stdout);
	struct ka_rows *rows = ka_rows_new(x->t, x->names, 0);
	struct ktr_rec r;

	if (!rows)
		return -ENOMEM;
	fputs(FMT_ROW_HEADER "\n", x->out);
	while (ktr_next(x->t, &r)) {
		struct fmt_row row;
		struct ktr_call c;
		int kind;

		ka_progress_rec(prog, &r);
		cli_diags(CMD, x->t);
		if (x->no_kernel && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT))
			continue;
		kind = ka_rows_of(rows, &r, &row, &c);
		if (kind == KA_ROW_NONE || (kind == KA_ROW_CALL && !cli_select_call(&x->sel, &c)) ||
		    (kind == KA_ROW_EVENT && !cli_select_rec(&x->sel, &r)))
			continue;
		fmt_row_csv(x->out, &row);
		x->events++;
		if (ferror(x->out))
			break;
	}
	ka_progress_end(prog);
	ka_rows_free(rows);
	return 0;
}

/* ---- folded stacks (analysis/folded.c) ---------------------------------------- */

static void fold_line(void *arg, const char *path, uint64_t ns)
{
	fprintf(arg, "%s %" PRIu64 "\n", path, ns);
}

static int want_call(void *arg, const struct ktr_call *c)
{
	return cli_select_call(arg, c);
}

static int export_folded(struct ex *x)
{
	struct ka_folded_opts fo = { want_call, &x->sel, x->names, CMD };
	int rc = ka_folded(x->t, &fo, fold_line, x->out, &x->events);

	if (rc < 0)
		cli_error(CMD, "folding the calls: %s (temporary files in $TMPDIR or /tmp)", strerror(-rc));
	return rc < 0;
}

/* ---- trace.dat (kclient/tracedat.c) ------------------------------------------- */

static int export_tracedat(const char *dir, const char *outfile)
{
	struct krec_tracedat_info info;
	struct cli_out o;
	char msg[1024];

	if (!outfile || !strcmp(outfile, "-")) {
		cli_error(CMD, "--format=trace.dat needs -o FILE (the file is written with seeks, not to a pipe)");
		return 2;
	}
	if (cli_out_open(CMD, &o, outfile))
		return 1;
	if (krec_tracedat_write(dir, fileno(o.f), &info, msg, sizeof(msg)) < 0) {
		cli_error(CMD, "%s", msg);
		cli_out_abort(&o);
		return 1;
	}
	return cli_out_close(CMD, &o);
}

static int run(int argc, char **argv)
{
	enum { OPT_FORMAT = CLI_OPT_SELECT_END };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT }, { "output", required_argument, NULL, 'o' },
		{ "no-kernel", no_argument, NULL, 'K' },    { "help", no_argument, NULL, 'h' },
		CLI_SELECT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *outfile = NULL, *dir;
	struct cli_out o;
	enum fmt fmt = F_NONE;
	struct ex x;
	int c, rc = 0, r;

	memset(&x, 0, sizeof(x));
	cli_select_init(&x.sel);
	while ((c = getopt_long(argc, argv, ":o:Kp:h", opts, NULL)) != -1) {
		if ((r = cli_select_option(&x.sel, CMD, c, optarg)) != 0) {
			if (r < 0)
				return 2;
			continue;
		}
		switch (c) {
		case OPT_FORMAT:
			if (!strcmp(optarg, "perfetto") || !strcmp(optarg, "chrome") ||
			    !strcmp(optarg, "json"))
				fmt = F_JSON;
			else if (!strcmp(optarg, "folded"))
				fmt = F_FOLDED;
			else if (!strcmp(optarg, "csv"))
				fmt = F_CSV;
			else if (!strcmp(optarg, "trace.dat") || !strcmp(optarg, "tracedat"))
				fmt = F_TRACEDAT;
			else {
				cli_error(CMD, "option '--format': unknown format '%s' (perfetto, chrome, "
					       "folded, csv or trace.dat)", optarg);
				return 2;
			}
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'K':
			x.no_kernel = 1;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	if (fmt == F_NONE) {
		cli_error(CMD, "missing --format (perfetto, chrome, folded, csv or trace.dat; see ktrace export --help)");
		return 2;
	}
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	if (fmt == F_TRACEDAT)
		return export_tracedat(dir, outfile);
	x.t = cli_select_open(&x.sel, CMD, dir);
	if (!x.t)
		return 1;
	cli_diags(CMD, x.t);
	x.names = ka_names_new(x.t, x.sel.demangle);
	if (!x.names) {
		cli_error(CMD, "out of memory");
		ktr_close(x.t);
		return 1;
	}
	if (cli_out_open(CMD, &o, outfile)) {
		rc = 1;
		goto out;
	}
	x.out = o.f;
	if (fmt == F_JSON)
		rc = export_json(&x);
	else if (fmt == F_CSV)
		rc = export_csv(&x);
	else
		rc = export_folded(&x);
	cli_diags(CMD, x.t);
	if (rc < 0) {
		cli_error(CMD, "out of memory");
		rc = 1;
	}
	if (cli_out_close(CMD, &o))
		rc = 1;
	if (!rc && ktr_error_count(x.t))
		rc = 1;
out:
	ka_names_free(x.names);
	free(x.seen);
	ktr_close(x.t);
	cli_select_free(&x.sel);
	return rc;
}

KTRACE_COMMAND(export, "export a trace as Perfetto/Chrome JSON, folded stacks or CSV", run, help);

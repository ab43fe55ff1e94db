/*
 * cli/cmd_kd.c - `ktrace kd [options] DIR`: KFT's kd ("KFT dump", seed 002)
 * for function traces: per function the number of calls, total time,
 * average and local (self) time, sorted by time; or (-c) the nested call
 * traces, with signal-handler sections marked as kd marked interrupts.
 *
 * The options and the table are here, the call traces' output in
 * cli/kd_calls.c; the profile is analysis/profile.c
 * (one pass over the trace, memory per function and per open call), the
 * call traces analysis/calltrace.c over reader/callsort.c (calls in entry
 * order, sorted in bounded memory).  With kernel events in the trace,
 * field o is the time a function's thread was off CPU during its calls,
 * Local becomes on-CPU self time, and -c shows each switch-out inside the
 * calls, at its nesting level.
 *
 * Times are microseconds, with three decimals (ns resolution) unless -u
 * asks for KFT's whole microseconds.  Exit status: 0, 1 the trace had
 * errors (everything readable was used) or output failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/kd.h"
#include "formats/formats.h"
#include "analysis/analysis.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"
#include "reader/sched.h"

#define CMD "kd"
#define FIELD_LETTERS "Fctalsxmno"

enum { OPT_SORTMEM = CLI_OPT_LONG, OPT_FORMAT };

static const struct cli_opt opts[] = {
	CLI_OPT_TEXT("Table:"),
	CLI_OPT("top", 'n', "N", "only the N most time-consuming functions"),
	CLI_OPT("time", 't', "USECS", "only functions whose total time is above USECS"),
	CLI_OPT("fields", 'f', "FIELDS", "columns by letter (default Fctal, Fctalo with kernel\n"
					 "events):\n"
					 "  F function   c count     t total time\n"
					 "  a average    l local (self) time; on-CPU only\n"
					 "               when the trace has context switches\n"
					 "  s sub-time (in callees)  x longest call\n"
					 "  m the most time-consuming child function\n"
					 "  n how many times m was called by the function\n"
					 "  o off-CPU time: the thread was scheduled out\n"
					 "    during the calls (`ktrace record --kernel`)"),
	CLI_OPT("sort", 's', "FIELD", "sort by a field letter: t (default), l, a, c, s, x,\n"
				      "or F (by name)"),
	CLI_OPT_TEXT(""),
	CLI_OPT_TEXT("Call traces:"),
	CLI_OPT_FLAG("calls", 'c', struct kopts, calls, "nested call traces ('|' per level; signal-handler\n"
				    "sections between '!!!! start' and '!!!! end', '!'\n"
				    "per level), one thread after another"),
	CLI_OPT_FLAG("long", 'l', struct kopts, longfmt, "with -c: timing data (Entry, Duration, Local)\n"
				   "(with kernel events, -c also shows every switch-out\n"
				   "inside the calls: how long, blocked or preempted)"),
	CLI_OPT_FLAG("interlace", 'i', struct kopts, interlace, "with -c: all threads interlaced in time order,\n"
					"thread switches marked"),
	CLI_OPT("sort-mem", OPT_SORTMEM, "BYTES", "-c: sort the calls in this much memory (default 64M;\n"
							 "K, M, G) instead of streaming them"),
	CLI_OPT_TEXT(""),
	CLI_OPT_TEXT("Both:"),
	CLI_OPT("format", OPT_FORMAT, "FORMAT", "text (default), csv or json: the table with every\n"
						"field, or with -c one row per call (the columns of\n"
						"ktrace export --format=csv); times in ns"),
	CLI_OPT_INCLUDE(cli_select_opts),
	CLI_OPT_FLAG("usec", 'u', struct kopts, usec, "whole microseconds, as KFT printed them"),
	CLI_OPT_FLAG("verbose", 'v', struct kopts, verbose, "reading statistics on stderr"),
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace kd [options] [DIR]\n"
		"\n"
		"KFT's kd for a function trace (ktrace record): where the time goes.  Per\n"
		"function: calls, total time, average and local time (total minus the time\n"
		"in the functions it called), sorted by time; or the nested call traces.\n"
		"Times are in microseconds; DIR defaults to ./ktrace.data.  Time counts a\n"
		"recursive function once (its outermost calls), Average is per call.\n",
	.opts = opts,
	.tail =
		"A call whose exit was not seen (unfinished) counts with the time until its\n"
		"record was written.  Exit status: 0, 1 the trace has errors (all readable\n"
		"calls were used) or output failed, 2 usage error.  See ktrace-kd(1).\n",
};

static int want_call(void *arg, const struct ktr_call *c)
{
	return cli_select_call(arg, c);
}


/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

static const char *header_of(char c)
{
	switch (c) {
	case 'F': return "Function";
	case 'c': return "Count";
	case 't': return "Time";
	case 'a': return "Average";
	case 'l': return "Local";
	case 's': return "Sub-time";
	case 'x': return "Max";
	case 'm': return "Max-child";
	case 'n': return "Child-count";
	case 'o': return "Off-CPU";
	default: return "?";
	}
}

/* Seed widths: Function 25, Count 5, times 8. */
static int min_width(char c)
{
	return c == 'F' ? 25 : c == 'c' ? 5 : c == 'm' ? 25 : (int)strlen(header_of(c)) > 8 ? (int)strlen(header_of(c)) : 8;
}

static const char *cell(const struct kd *k, const struct ka_fn *f, char c, char *buf, size_t len)
{
	switch (c) {
	case 'F': return f->name ? f->name : "?";
	case 'm': return f->have_best ? k->p->fns[f->best].name : "-";
	case 'c':
	case 'n':
		snprintf(buf, len, "%" PRIu64, ka_fn_field(f, c));
		return buf;
	default:
		return kd_us(&k->o, (int64_t)ka_fn_field(f, c), buf, len);
	}
}

/*
 * The table as CSV or JSON: every field, times in ns (docs/READING.md
 * lists the columns).
 */
static int write_table_rows(struct kd *k, FILE *out, struct ka_fn **rows, size_t nrows)
{
	static const char *const cols[] = { "name", "count", "total_ns", "average_ns", "self_ns",
					    "sub_ns", "max_ns", "unfinished", "top_child",
					    "top_child_calls", "offcpu_ns" };
	size_t ncols = sizeof(cols) / sizeof(cols[0]) - (k->p->offcpu ? 0 : 1);
	struct fmt_json *j = NULL;
	int rc;

	if (k->o.format == FMT_CSV) {
		for (size_t c = 0; c < ncols; c++)
			fprintf(out, "%s%s", c ? "," : "", cols[c]);
		fputc('\n', out);
	} else {
		if (!(j = fmt_json_new(out)))
			return -ENOMEM;
		fmt_json_map(j);
		fmt_json_str(j, "functions");
		fmt_json_array(j);
	}
	for (size_t i = 0; i < nrows && !ferror(out); i++) {
		const struct ka_fn *f = rows[i];
		uint64_t v[] = { f->count, f->time, ka_fn_field(f, 'a'), f->local, ka_fn_field(f, 's'),
				 f->max, f->unfinished };
		const char *child = f->have_best ? k->p->fns[f->best].name : "";

		if (k->o.format == FMT_CSV) {
			fmt_csv_str(out, f->name ? f->name : "?");
			for (size_t c = 0; c < sizeof(v) / sizeof(v[0]); c++)
				fprintf(out, ",%" PRIu64, v[c]);
			fputc(',', out);
			fmt_csv_str(out, child);
			fprintf(out, ",%" PRIu64, f->have_best ? f->best_count : 0);
			if (k->p->offcpu)
				fprintf(out, ",%" PRIu64, f->off);
			fputc('\n', out);
			continue;
		}
		fmt_json_newline(j);
		fmt_json_map(j);
		fmt_json_str(j, "name");
		fmt_json_str(j, f->name ? f->name : "?");
		for (size_t c = 0; c < sizeof(v) / sizeof(v[0]); c++) {
			fmt_json_str(j, cols[c + 1]);
			fmt_json_u64(j, v[c]);
		}
		fmt_json_str(j, "top_child");
		if (f->have_best)
			fmt_json_str(j, child);
		else
			fmt_json_null(j);
		fmt_json_str(j, "top_child_calls");
		fmt_json_u64(j, f->have_best ? f->best_count : 0);
		if (k->p->offcpu) {
			fmt_json_str(j, "offcpu_ns");
			fmt_json_u64(j, f->off);
		}
		fmt_json_end_map(j);
	}
	if (!j)
		return 0;
	fmt_json_newline(j);
	fmt_json_end_array(j);
	fmt_json_end_map(j);
	rc = fmt_json_free(j); /* flushes: the newline comes after */
	fputc('\n', out);
	return rc;
}

/* One line of the text table: the cells of @row, or the headers (@row NULL). */
static void table_line(struct kd *k, FILE *out, const struct ka_fn *row, const int *w)
{
	const char *fl = k->o.fields;
	size_t nf = strlen(fl);
	char buf[64];

	for (size_t j = 0; j < nf; j++) {
		int left = fl[j] == 'F' || fl[j] == 'm';
		const char *s = row ? cell(k, row, fl[j], buf, sizeof(buf)) : header_of(fl[j]);

		if (left && j == nf - 1) /* no trailing blanks */
			fprintf(out, "%s%s", j ? " " : "", s);
		else
			fprintf(out, "%s%*s", j ? " " : "", left ? -w[j] : w[j], s);
	}
}

static int print_table(struct kd *k, FILE *out)
{
	const char *fl = k->o.fields;
	size_t nf = strlen(fl), nrows = 0;
	struct ka_fn **rows;
	int *w = calloc(nf, sizeof(*w));
	char buf[64];

	ka_profile_best(k->p); /* the m and n fields (edges collected if asked for) */
	rows = ka_profile_sort(k->p, k->o.sort, k->o.have_min ? &k->o.min_ns : NULL, &nrows);
	if (!rows || !w) {
		free(rows);
		free(w);
		return -ENOMEM;
	}
	if (k->o.top >= 0 && (size_t)k->o.top < nrows)
		nrows = (size_t)k->o.top;
	if (k->o.format != FMT_TEXT) {
		int rc = write_table_rows(k, out, rows, nrows);

		free(rows);
		free(w);
		return rc;
	}
	for (size_t j = 0; j < nf; j++) {
		w[j] = min_width(fl[j]);
		for (size_t i = 0; i < nrows; i++) {
			int l = (int)strlen(cell(k, rows[i], fl[j], buf, sizeof(buf)));

			if ((fl[j] == 'F' || fl[j] == 'm') && l > 60)
				l = 60; /* longer names overflow their column */
			if (l > w[j])
				w[j] = l;
		}
	}
	fputs(cli_c_bold(), out);
	table_line(k, out, NULL, w);
	fprintf(out, "%s\n", cli_c_reset());
	for (size_t j = 0; j < nf; j++) {
		fputs(j ? " " : "", out);
		for (int d = 0; d < w[j]; d++)
			fputc('-', out);
	}
	fputc('\n', out);
	for (size_t i = 0; i < nrows && !ferror(out); i++) {
		table_line(k, out, rows[i], w);
		fputc('\n', out);
	}
	free(rows);
	free(w);
	return 0;
}

/* ------------------------------------------------------------------ */

static int check_fields(const char *f)
{
	if (!*f)
		return -1;
	for (; *f; f++)
		if (!strchr(FIELD_LETTERS, *f))
			return -1;
	return 0;
}

/* cli_opt_fn: the options of kd that take a value. */
static int take_option(void *arg, int key, const char *val)
{
	struct kopts *o = arg;
	uint64_t v;

	switch (key) {
	case 'n':
		if (cli_parse_u64(val, &v) < 0 || v > (uint64_t)1 << 40) {
			cli_error(CMD, "option '-n': '%s' is not a number of functions", val);
			return 2;
		}
		o->top = (long)v;
		return 0;
	case 't':
		if (cli_parse_time(val, 1000, &o->min_ns) < 0) {
			cli_error(CMD, "option '-t': '%s' is not a time (microseconds, or with a unit: "
				       "250us, 1.5ms, 2s)", val);
			return 2;
		}
		o->have_min = 1;
		return 0;
	case 'f':
		if (check_fields(val) < 0) {
			cli_error(CMD, "option '-f': '%s': fields are letters of %s (see ktrace kd --help)",
				  val, FIELD_LETTERS);
			return 2;
		}
		o->fields = val;
		o->fields_given = 1;
		return 0;
	case 's':
		if (strlen(val) != 1 || !strchr("Fctalsxo", val[0])) {
			cli_error(CMD, "option '-s': '%s': sort by one of F c t a l s x o", val);
			return 2;
		}
		o->sort = val[0];
		return 0;
	case OPT_FORMAT:
		if (!strcmp(val, "text"))
			o->format = FMT_TEXT;
		else if (!strcmp(val, "csv"))
			o->format = FMT_CSV;
		else if (!strcmp(val, "json"))
			o->format = FMT_JSON;
		else {
			cli_error(CMD, "option '--format': '%s' is not text, csv or json", val);
			return 2;
		}
		return 0;
	default: /* --sort-mem */
		return cli_parse_sort_mem(CMD, val, &o->sort_mem);
	}
}

/* The options and DIR into @o.  Return: CLI_OPTS_GO, or the exit status. */
static int parse_options(struct kopts *o, int argc, char **argv)
{
	int rc;

	cli_select_init(&o->sel);
	o->top = -1;
	o->fields = "Fctal";
	o->sort = 't';
	rc = cli_opts_parse(&cmd_opts, argc, argv, &o->sel, take_option, o);
	if (rc != CLI_OPTS_GO)
		return rc;
	if ((o->longfmt || o->interlace) && !o->calls) {
		cli_error(CMD, "options '-l' and '-i' go with '-c' (call traces)");
		return 2;
	}
	o->dir = cli_select_dir(CMD, argc, argv, optind);
	return o->dir ? CLI_OPTS_GO : 2;
}

/* What `ktrace kd` works with, besides struct kd. */
struct kd_run {
	struct kd k;
	struct ktr_syms *syms;
	struct ktr_callsort *sorter; /* -c: the calls in entry order */
	struct ktr_preorder *pre;    /* -c streamed: the sorter fed window by window */
	struct timespec t0;          /* -v: when it started */
};

/* ktr_preorder_new()'s key: the profile's function index (named at once, for the lines). */
static uint32_t pre_key(void *arg, const struct ktr_call *c)
{
	struct kd_run *r = arg;
	long fi = ka_profile_fn(r->k.p, c, r->syms);

	return fi < 0 ? UINT32_MAX : (uint32_t)fi;
}

static int pre_task(void *arg, uint32_t pid, uint32_t tid)
{
	return cli_select_task(&((struct kd_run *)arg)->k.o.sel, pid, tid);
}

/*
 * kd -c as plain nested text, without --time-range or --sort-mem: its
 * calls streamed in entry order (ktr_preorder_new(); the first line comes
 * at once), where the trace allows; else (ENOTSUP) sorted after the
 * profile is read.  Return: 0, or -errno.
 */
static int kd_stream(struct kd_run *r)
{
	const struct kopts *o = &r->k.o;
	struct ktr_callsort *s;
	uint32_t pid, tid;
	int err;

	if (!o->calls || o->longfmt || o->interlace || o->format != FMT_TEXT || o->sort_mem ||
	    o->sel.from || o->sel.to != UINT64_MAX)
		return 0;
	if (!(s = ktr_callsort_new(16u << 20, KTR_SORT_THREAD))) /* windows of a sub-buffer's calls */
		return -ENOMEM;
	r->pre = ktr_preorder_new(r->k.t, s, o->sel.tids.n || o->sel.pids.n ? pre_task : NULL, pre_key, r);
	if (!r->pre || !ktr_callsort_thread_ids(s, 0, &pid, &tid)) { /* (no call: say so as the profile would) */
		err = r->pre ? ENOTSUP : errno;
		ktr_preorder_free(r->pre);
		ktr_callsort_free(s);
		r->pre = NULL;
		return err == ENOTSUP ? 0 : -err;
	}
	ktr_callsort_free(r->sorter);
	r->sorter = s;
	if (o->verbose)
		fprintf(stderr, "ktrace kd: the calls streamed in entry order, sub-buffer by sub-buffer\n");
	return 0;
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Open the trace, its symbols, the sorter (-c), the profile.  Return: 0, 1 (printed), or -errno. */
static int kd_open(struct kd_run *r)
{
	struct kopts *o = &r->k.o;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	r->k.t = cli_select_open(&o->sel, CMD, o->dir);
	if (!r->k.t)
		return 1;
	cli_select_window(&o->sel, r->k.t);
	cli_diags(CMD, r->k.t);
	r->syms = cli_select_syms(&o->sel, r->k.t);
	if (o->calls) {
		r->sorter = ktr_callsort_new(o->sort_mem, o->interlace ? KTR_SORT_ENTRY : KTR_SORT_THREAD);
		if (!r->sorter || (rc = kd_stream(r)) < 0)
			return rc < 0 ? rc : -ENOMEM;
	}
	{
		struct ka_profile_opts po = {
			.edges = !o->calls && (o->format != FMT_TEXT || strpbrk(o->fields, "mn")),
			.all_tasks = o->sel.tids.n || o->sel.pids.n,
			.want_call = cli_select_everything(&o->sel) ? NULL : want_call,
			.want_task = cli_select_task, .arg = &o->sel,
			.sorter = r->sorter, .cmd = CMD,
		};

		r->k.p = ka_profile_new(r->k.t, &po);
	}
	if (!r->syms || !r->k.p)
		return -ENOMEM;
	return 0;
}

/* Read the profile; say why there is nothing, or what is missing (-v: how fast).  Return: 0, 1, or -errno. */
static int kd_read(struct kd_run *r)
{
	struct ka_profile *p = r->k.p;
	int rc;

	if (r->pre)
		return 0; /* kd_print() reads as it prints */
	rc = ka_profile_read(p);

	cli_diags(CMD, r->k.t);
	if (rc < 0)
		return rc;
	if (!p->calls) {
		/* not an empty table: say why there is nothing */
		cli_no_calls(CMD, r->k.t, r->k.o.dir, p->call_records);
		return 1;
	}
	if (p->offcpu && !r->k.o.fields_given)
		r->k.o.fields = "Fctalo";
	if (p->klost)
		cli_error(CMD, "warning: %" PRIu64 " kernel records lost: off-CPU times may be short",
			  p->klost);
	if (r->k.o.verbose) {
		double s = since(&r->t0);
		char skipped[80] = "";

		if (ktr_window_skipped(r->k.t))
			snprintf(skipped, sizeof(skipped), "; %" PRIu64 " sub-buffers outside --time-range skipped",
				 ktr_window_skipped(r->k.t));

		fprintf(stderr,
			"ktrace kd: %" PRIu64 " records, %" PRIu64 " calls of %zu functions read in %.3f s (%.1f M records/s)%s%s%s\n",
			p->records, p->calls, p->nfns, s, s > 0 ? (double)p->records / s / 1e6 : 0.0,
			r->sorter && ktr_callsort_runs(r->sorter) ? ", sorted on disk" : "",
			p->lost || p->overwritten ? "" : "; no record lost", skipped);
	}
	return 0;
}

/* The table, or the call traces (-c).  Return: 0, or a negative errno. */
static int kd_print(struct kd_run *r, FILE *out)
{
	int rc;

	ka_profile_name(r->k.p, r->syms);
	cli_diags(CMD, r->k.t);
	cli_pager_start();
	if (r->k.o.calls)
		rc = kd_print_calls(&r->k, out, r->sorter, r->pre);
	else
		rc = print_table(&r->k, out);
	cli_diags(CMD, r->k.t);
	if (r->k.o.verbose)
		fprintf(stderr, "ktrace kd: done in %.3f s\n", since(&r->t0));
	return rc;
}

/* The errors and losses of the run said; its exit status. */
static int kd_end(struct kd_run *r, int rc)
{
	if (rc < 0)
		rc = cli_calls_failed(CMD, r->k.o.calls, rc);
	if (r->k.p && (r->k.p->lost || r->k.p->overwritten)) {
		cli_error(CMD, "warning: %" PRIu64 " records lost or dropped and %" PRIu64
			       " sub-buffers overwritten: counts and times are lower bounds",
			  r->k.p->lost, r->k.p->overwritten);
		cli_losses(CMD, r->k.t);
	}
	if (!rc && ktr_error_count(r->k.t))
		rc = 1;
	return rc;
}

/* `ktrace kd`: options, the profile, the table or the call traces. */
static int run(int argc, char **argv)
{
	struct kd_run r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse_options(&r.k.o, argc, argv);
	if (rc != CLI_OPTS_GO)
		return rc;
	rc = kd_open(&r);
	if (!rc)
		rc = kd_read(&r);
	if (!rc)
		rc = kd_print(&r, stdout);
	rc = kd_end(&r, rc);
	ka_profile_free(r.k.p);
	cli_select_free(&r.k.o.sel);
	ktr_preorder_free(r.pre);
	ktr_callsort_free(r.sorter);
	ktr_syms_free(r.syms);
	ktr_close(r.k.t);
	return rc;
}

KTRACE_COMMAND_OPTS(kd, "function trace report: time per function, call traces (KFT's kd)", run, cmd_opts);

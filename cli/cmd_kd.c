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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/kd.h"
#include "formats/formats.h"
#include "analysis/analysis.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"
#include "reader/sched.h"

#define CMD "kd"
#define FIELD_LETTERS "Fctalsxmno"

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace kd [options] [DIR]\n"
		"\n"
		"KFT's kd for a function trace (ktrace record): where the time goes.  Per\n"
		"function: calls, total time, average and local time (total minus the time\n"
		"in the functions it called), sorted by time; or the nested call traces.\n"
		"Times are in microseconds; DIR defaults to ./ktrace.data.  Time counts a\n"
		"recursive function once (its outermost calls), Average is per call.\n"
		"\n"
		"Table:\n"
		"  -n, --top N            only the N most time-consuming functions\n"
		"  -t, --time USECS       only functions whose total time is above USECS\n"
		"  -f, --fields FIELDS    columns by letter (default Fctal, Fctalo with kernel\n"
		"                         events):\n"
		"                           F function   c count     t total time\n"
		"                           a average    l local (self) time; on-CPU only\n"
		"                                        when the trace has context switches\n"
		"                           s sub-time (in callees)  x longest call\n"
		"                           m the most time-consuming child function\n"
		"                           n how many times m was called by the function\n"
		"                           o off-CPU time: the thread was scheduled out\n"
		"                             during the calls (`ktrace record --kernel`)\n"
		"  -s, --sort FIELD       sort by a field letter: t (default), l, a, c, s, x,\n"
		"                         or F (by name)\n"
		"\n"
		"Call traces:\n"
		"  -c, --calls            nested call traces ('|' per level; signal-handler\n"
		"                         sections between '!!!! start' and '!!!! end', '!'\n"
		"                         per level), one thread after another\n"
		"  -l, --long             with -c: timing data (Entry, Duration, Local)\n"
		"                         (with kernel events, -c also shows every switch-out\n"
		"                         inside the calls: how long, blocked or preempted)\n"
		"  -i, --interlace        with -c: all threads interlaced in time order,\n"
		"                         thread switches marked\n"
		"      --sort-mem BYTES   memory for ordering calls (default 64M; K, M, G)\n"
		"\n"
		"Both:\n"
		"      --format FORMAT    text (default), csv or json: the table with every\n"
		"                         field, or with -c one row per call (the columns of\n"
		"                         ktrace export --format=csv); times in ns\n"
		CLI_SELECT_HELP
		"  -u, --usec             whole microseconds, as KFT printed them\n"
		"  -v, --verbose          reading statistics on stderr\n"
		CLI_OUTPUT_HELP
		"  -h, --help             this text\n"
		"\n"
		"A call whose exit was not seen (unfinished) counts with the time until its\n"
		"record was written.  Exit status: 0, 1 the trace has errors (all readable\n"
		"calls were used) or output failed, 2 usage error.  See ktrace-kd(1).\n");
}

static int want_call(void *arg, const struct ktr_call *c)
{
	return cli_select_call(arg, c);
}

static int want_task(void *arg, uint32_t pid, uint32_t tid)
{
	const struct cli_select *s = arg;

	return ka_ids_has(&s->tids, tid) && ka_ids_has(&s->pids, pid);
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

static int run(int argc, char **argv)
{
	enum { OPT_SORTMEM = CLI_OPT_SELECT_END, OPT_FORMAT };
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },    { "time", required_argument, NULL, 't' },
		{ "fields", required_argument, NULL, 'f' }, { "sort", required_argument, NULL, 's' },
		{ "calls", no_argument, NULL, 'c' },        { "long", no_argument, NULL, 'l' },
		{ "interlace", no_argument, NULL, 'i' },    { "usec", no_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
		{ "sort-mem", required_argument, NULL, OPT_SORTMEM },
		{ "format", required_argument, NULL, OPT_FORMAT },
		CLI_SELECT_LONGOPTS, CLI_OUTPUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct kd k;
	struct ka_profile *p;
	struct ktr_syms *syms = NULL;
	struct ktr_callsort *sorter = NULL;
	struct timespec t0, t1;
	FILE *out = stdout;
	const char *dir;
	int c, rc = 0, fields_given = 0;
	uint64_t v;

	memset(&k, 0, sizeof(k));
	cli_select_init(&k.o.sel);
	k.o.top = -1;
	k.o.fields = "Fctal";
	k.o.sort = 't';
	while ((c = getopt_long(argc, argv, ":n:t:f:s:cliuvp:h", opts, NULL)) != -1) {
		int taken = cli_select_option(&k.o.sel, CMD, c, optarg);

		if (!taken)
			taken = cli_output_option(CMD, c, optarg);
		if (taken < 0)
			return 2;
		if (taken)
			continue;
		switch (c) {
		case 'n':
			if (cli_parse_u64(optarg, &v) < 0 || v > (uint64_t)1 << 40) {
				cli_error(CMD, "option '-n': '%s' is not a number of functions", optarg);
				return 2;
			}
			k.o.top = (long)v;
			break;
		case 't':
			if (cli_parse_time(optarg, 1000, &k.o.min_ns) < 0) {
				cli_error(CMD, "option '-t': '%s' is not a time (microseconds, or with a unit: "
					       "250us, 1.5ms, 2s)", optarg);
				return 2;
			}
			k.o.have_min = 1;
			break;
		case 'f':
			if (check_fields(optarg) < 0) {
				cli_error(CMD, "option '-f': '%s': fields are letters of %s (see ktrace kd --help)",
					  optarg, FIELD_LETTERS);
				return 2;
			}
			k.o.fields = optarg;
			fields_given = 1;
			break;
		case 's':
			if (strlen(optarg) != 1 || !strchr("Fctalsxo", optarg[0])) {
				cli_error(CMD, "option '-s': '%s': sort by one of F c t a l s x o", optarg);
				return 2;
			}
			k.o.sort = optarg[0];
			break;
		case 'c': k.o.calls = 1; break;
		case 'l': k.o.longfmt = 1; break;
		case 'i': k.o.interlace = 1; break;
		case 'u': k.o.usec = 1; break;
		case 'v': k.o.verbose = 1; break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				k.o.format = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				k.o.format = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				k.o.format = FMT_JSON;
			else {
				cli_error(CMD, "option '--format': '%s' is not text, csv or json", optarg);
				return 2;
			}
			break;
		case OPT_SORTMEM:
		{
			uint64_t size;

			if (cli_parse_size(optarg, &size) < 0 || size < 4096 || size > SIZE_MAX) {
				cli_error(CMD, "option '--sort-mem': '%s' is not a size of 4K or more", optarg);
				return 2;
			}
			k.o.sort_mem = (size_t)size;
			break;
		}
		case 'h':
			help(stdout);
			return 0;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	if ((k.o.longfmt || k.o.interlace) && !k.o.calls) {
		cli_error(CMD, "options '-l' and '-i' go with '-c' (call traces)");
		return 2;
	}
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	k.t = cli_select_open(&k.o.sel, CMD, dir);
	if (!k.t)
		return 1;
	cli_diags(CMD, k.t);
	syms = cli_select_syms(&k.o.sel, k.t);
	if (k.o.calls) {
		sorter = ktr_callsort_new(k.o.sort_mem,
					  k.o.interlace ? KTR_SORT_ENTRY : KTR_SORT_THREAD);
		if (!sorter) {
			rc = -ENOMEM;
			goto done;
		}
	}
	{
		struct ka_profile_opts po = {
			.edges = !k.o.calls && (k.o.format != FMT_TEXT || strpbrk(k.o.fields, "mn")),
			.all_tasks = k.o.sel.tids.n || k.o.sel.pids.n,
			.want_call = want_call, .want_task = want_task, .arg = &k.o.sel,
			.sorter = sorter, .cmd = CMD,
		};

		k.p = ka_profile_new(k.t, &po);
	}
	if (!syms || !k.p) {
		rc = -ENOMEM;
		goto done;
	}
	rc = ka_profile_read(k.p);
	cli_diags(CMD, k.t);
	if (rc < 0)
		goto done;
	p = k.p;
	if (!p->calls) {
		/* not an empty table: say why there is nothing */
		cli_no_calls(CMD, argv[optind], p->call_records);
		rc = 1;
		goto done;
	}
	if (p->offcpu && !fields_given)
		k.o.fields = "Fctalo";
	if (p->klost)
		cli_error(CMD, "warning: %" PRIu64 " kernel records lost: off-CPU times may be short",
			  p->klost);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (k.o.verbose) {
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

		fprintf(stderr,
			"ktrace kd: %" PRIu64 " records, %" PRIu64 " calls of %zu functions read in %.3f s (%.1f M records/s)%s%s\n",
			p->records, p->calls, p->nfns, s, s > 0 ? (double)p->records / s / 1e6 : 0.0,
			sorter && ktr_callsort_runs(sorter) ? ", sorted on disk" : "",
			p->lost || p->overwritten ? "" : "; no record lost");
	}
	ka_profile_name(p, syms);
	cli_diags(CMD, k.t);
	cli_pager_start();
	if (k.o.calls)
		rc = kd_print_calls(&k, out, sorter);
	else
		rc = print_table(&k, out);
	cli_diags(CMD, k.t);
	if (k.o.verbose) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fprintf(stderr, "ktrace kd: done in %.3f s\n",
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
done:
	if (rc < 0) {
		const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

		if (k.o.calls)
			cli_error(CMD, "ordering the calls (temporary files in %s; see --sort-mem): %s",
				  tmpdir, strerror(-rc));
		else
			cli_error(CMD, "reading the trace: %s", strerror(-rc));
		rc = 1;
	}
	if (k.p && (k.p->lost || k.p->overwritten)) {
		cli_error(CMD, "warning: %" PRIu64 " records lost or dropped and %" PRIu64
			       " sub-buffers overwritten: counts and times are lower bounds",
			  k.p->lost, k.p->overwritten);
		cli_losses(CMD, k.t);
	}
	if (!rc && ktr_error_count(k.t))
		rc = 1;
	ka_profile_free(k.p);
	cli_select_free(&k.o.sel);
	ktr_callsort_free(sorter);
	ktr_syms_free(syms);
	ktr_close(k.t);
	return rc;
}

KTRACE_COMMAND(kd, "function trace report: time per function, call traces (KFT's kd)", run, help);

/*
 * cli/cmd_info.c - `ktrace info [DIR]`, as `uftrace info`: what a trace is
 * before reading it: the command line, host, kernel, CPUs, when it started
 * and how long it lasted, the threads, how many calls and records were
 * written, everything lost (with the reason: lost, overwritten, dropped,
 * corrupt, and the run's own counters from DIR/kft-status), and the
 * configuration.
 *
 * The records are read once (ktr_next()) to count them and find the
 * first and last time; nothing is kept per record.
 *
 * Exit status: 0, 1 the trace has errors (reported on stderr), 2 usage
 * error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"

#define CMD "info"

static const struct cli_opt opts[] = {
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace info [DIR]\n"
		"\n"
		"Describe the trace in DIR (default ./ktrace.data), as uftrace info does: the\n"
		"recorded command line, host, kernel, CPUs, start time and duration, threads,\n"
		"calls and records written, what was lost and why (records lost, sub-buffers\n"
		"overwritten, records dropped, corrupt data, and the run's filter and loss\n"
		"counters), and the function tracer's configuration.\n",
	.opts = opts,
	.tail =
		"Exit status: 0, 1 the trace has errors (reported on stderr), 2 usage error.\n"
		"See ktrace-info(1).\n",
};

/* What one pass over the records counted. */
struct info_counts {
	uint64_t first, last; /* the earliest and latest time */
	uint64_t records, calls, unfinished, events, kevents;
	uint64_t gaps[5]; /* by KTR_GAP_*: records, sub-buffers, corrupt areas */
};

/* The value of metadata key @key (the rest of its last line) into @buf, or NULL. */
static const char *meta_value(const char *dir, const char *key, char *buf, size_t len)
{
	char line[8192];
	size_t kl = strlen(key);
	const char *found = NULL;
	FILE *f = cli_fopen_in(dir, "metadata", NULL); /* a refusal was said by ktr_open() */

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			snprintf(buf, len, "%.*s", (int)strcspn(line + kl + 1, "\n"), line + kl + 1);
			found = buf;
		}
	fclose(f);
	return found;
}

static void row(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void row(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("# %s%-16s%s: ", cli_c_bold(), key, cli_c_reset());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Count the records of @t into @n: one pass, nothing kept per record. */
static void info_count(struct ktr_trace *t, struct info_counts *n)
{
	struct ktr_rec r;

	memset(n, 0, sizeof(*n));
	n->first = UINT64_MAX;
	while (ktr_next(t, &r)) {
		struct ktr_call call;

		cli_diags(CMD, t);
		if (r.kind == KTR_GAP) {
			n->gaps[r.gap < 5 ? r.gap : 0] += r.gap == KTR_GAP_CORRUPT ? 1 : r.count;
			continue;
		}
		n->records++;
		if (r.ns < n->first)
			n->first = r.ns;
		if (r.ns > n->last)
			n->last = r.ns;
		if (r.cls == KTRACE_CLASS_CALL && ktr_call_decode(t, &r, &call)) {
			n->calls++;
			n->unfinished += (call.flags & KTRACE_CALLF_UNFINISHED) != 0;
			if (call.entry_ns < n->first)
				n->first = call.entry_ns;
		} else if (r.cls == KTRACE_CLASS_KEVENT) {
			n->kevents++;
		} else {
			n->events++;
		}
	}
	cli_diags(CMD, t);
}

/* The rows of the machine and the program: cmdline to started. */
static void print_origin(const char *dir, const struct ktr_info *in)
{
	char buf[8192];

	printf("# ktrace information of %s\n# ==========================\n", dir);
	row("cmdline", "%s", meta_value(dir, "cmdline", buf, sizeof(buf)) ? buf : "(not recorded)");
	if (in->pid)
		row("program", "%s (pid %" PRIu32 ")", in->comm[0] ? in->comm : "?", in->pid);
	else
		row("program", "none (a kernel trace)");
	row("hostname", "%s", in->host[0] ? in->host : "?");
	row("kernel", "%s%s%s", in->kernel[0] ? in->kernel : "?", in->machine[0] ? " " : "",
	    in->machine);
	row("cpus", "%u online", in->cpus);
	if (in->realtime_ns) {
		time_t s = (time_t)(in->realtime_ns / 1000000000u);
		struct tm tm;
		char when[64];

		localtime_r(&s, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
		row("started", "%s", when);
	}
}

/* The threads row and up to 32 of them. */
static void print_threads(struct ktr_trace *t)
{
	uint32_t tid, pid;
	const char *comm;
	size_t nthreads = 0;

	for (size_t i = 0; ktr_thread_at(t, i, &tid, &pid, &comm); i++)
		nthreads++;
	row("threads", "%zu", nthreads);
	for (size_t i = 0; ktr_thread_at(t, i, &tid, &pid, &comm) && i < 32; i++)
		printf("#   %7" PRIu32 " %7" PRIu32 " %s\n", pid, tid, comm && *comm ? comm : "?");
	if (nthreads > 32)
		printf("#   ... and %zu more\n", nthreads - 32);
}

/* The rows of what was recorded: duration, threads, records, calls, events, lost. */
static void print_contents(struct ktr_trace *t, const struct ktr_info *in, const struct info_counts *n)
{
	const uint64_t *gaps = n->gaps;

	if (n->records)
		row("duration", "%.6f s (first to last record)", (double)(n->last - n->first) / 1e9);
	print_threads(t);
	if (in->packed == 2) /* ktrace record's consumer copied the rings */
		row("records", "%" PRIu64 " in %u streams (%s, rings of %" PRIu32 " x %" PRIu32 " bytes)",
		    n->records, in->nstreams, in->flight ? "flight recorder" : "streamed", in->buf_nr,
		    in->buf_size);
	else if (in->packed)
		row("records", "%" PRIu64 " in %u streams (%s mode, packed sub-buffers of %" PRIu32 " bytes)",
		    n->records, in->nstreams, in->flight ? "flight" : "discard", in->buf_size);
	else
		row("records", "%" PRIu64 " in %u streams (%s mode, %" PRIu32 " x %" PRIu32 " bytes per stream)",
		    n->records, in->nstreams, in->flight ? "flight" : "discard", in->buf_nr, in->buf_size);
	row("calls", "%" PRIu64 " (%" PRIu64 " unfinished)", n->calls, n->unfinished);
	if (n->events || n->kevents)
		row("events", "%" PRIu64 " static, %" PRIu64 " kernel", n->events, n->kevents);
	row("lost", "%s%" PRIu64 " records lost, %" PRIu64 " sub-buffers overwritten, %" PRIu64
	    " records dropped, %" PRIu64 " corrupt areas%s",
	    gaps[1] || gaps[2] || gaps[3] || gaps[4] ? cli_c_red() : "", gaps[KTR_GAP_LOST],
	    gaps[KTR_GAP_OVERWRITTEN], gaps[KTR_GAP_DROPPED], gaps[KTR_GAP_CORRUPT], cli_c_reset());
}

/* The run's counters and configuration, from DIR/kft-status (if there is one). */
static void print_kft_status(const char *dir)
{
	FILE *f = cli_fopen_in(dir, "kft-status", NULL); /* a refusal was said by ktr_open() */
	char buf[8192];
	int in_cfg = 0;

	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		if (in_cfg) {
			printf("#   %s\n", buf);
			continue;
		}
		if (!strncmp(buf, "configuration text:", 19)) {
			row("config", "(the function tracer's run)");
			in_cfg = 1;
		} else if (!strncmp(buf, "error: ", 7) || !strncmp(buf, "entries ", 8) ||
			   !strncmp(buf, "started: ", 9) || !strncmp(buf, "stopped: ", 9) ||
			   !strncmp(buf, "exits without entry: ", 21)) {
			char *colon = strchr(buf, ':');
			char key[64];

			*colon = 0;
			snprintf(key, sizeof(key), "%s%.40s", buf[0] == 's' ? "run " : "", buf);
			row(key, "%s", colon + 2);
		}
	}
	fclose(f);
}

/* `ktrace info`: count the records, then describe the trace. */
static int run(int argc, char **argv)
{
	struct cli_select sel;
	struct info_counts n;
	struct ktr_trace *t;
	const char *dir;
	int rc;

	cli_select_init(&sel);
	rc = cli_opts_parse_dir(&cmd_opts, argc, argv, NULL, NULL, NULL, &dir);
	if (rc != CLI_OPTS_GO)
		return rc;
	t = cli_select_open(&sel, CMD, dir);
	if (!t)
		return 1;
	cli_diags(CMD, t);
	info_count(t, &n);
	cli_pager_start();
	print_origin(dir, ktr_info(t));
	print_contents(t, ktr_info(t), &n);
	print_kft_status(dir);
	rc = ktr_error_count(t) ? 1 : 0;
	ktr_close(t);
	cli_select_free(&sel);
	return rc;
}

KTRACE_COMMAND_OPTS(info, "what a trace holds: command, host, duration, threads, losses (uftrace info)",
		    run, cmd_opts);

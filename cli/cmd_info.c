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
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"

#define CMD "info"

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace info [DIR]\n"
		"\n"
		"Describe the trace in DIR (default ./ktrace.data), as uftrace info does: the\n"
		"recorded command line, host, kernel, CPUs, start time and duration, threads,\n"
		"calls and records written, what was lost and why (records lost, sub-buffers\n"
		"overwritten, records dropped, corrupt data, and the run's filter and loss\n"
		"counters), and the function tracer's configuration.\n"
		"\n"
		CLI_OUTPUT_HELP
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0, 1 the trace has errors (reported on stderr), 2 usage error.\n"
		"See ktrace-info(1).\n");
}

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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' }, CLI_OUTPUT_LONGOPTS, { NULL, 0, NULL, 0 },
	};
	struct cli_select sel;
	struct ktr_trace *t;
	const struct ktr_info *in;
	struct ktr_rec r;
	uint64_t first = UINT64_MAX, last = 0, records = 0, calls = 0, unfinished = 0, events = 0,
		 kevents = 0, gaps[5] = { 0 };
	char buf[8192];
	const char *dir;
	uint32_t tid, pid;
	const char *comm;
	size_t nthreads = 0;
	int c, taken;
	FILE *f;

	cli_select_init(&sel);
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((taken = cli_output_option(CMD, c, optarg)) != 0) {
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
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	t = cli_select_open(&sel, CMD, dir);
	if (!t)
		return 1;
	cli_diags(CMD, t);
	while (ktr_next(t, &r)) {
		struct ktr_call call;

		cli_diags(CMD, t);
		if (r.kind == KTR_GAP) {
			gaps[r.gap < 5 ? r.gap : 0] += r.gap == KTR_GAP_CORRUPT ? 1 : r.count;
			continue;
		}
		records++;
		if (r.ns < first)
			first = r.ns;
		if (r.ns > last)
			last = r.ns;
		if (r.cls == KTRACE_CLASS_CALL && ktr_call_decode(t, &r, &call)) {
			calls++;
			unfinished += (call.flags & KTRACE_CALLF_UNFINISHED) != 0;
			if (call.entry_ns < first)
				first = call.entry_ns;
		} else if (r.cls == KTRACE_CLASS_KEVENT) {
			kevents++;
		} else {
			events++;
		}
	}
	cli_diags(CMD, t);
	in = ktr_info(t);
	cli_pager_start();
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
	if (records)
		row("duration", "%.6f s (first to last record)", (double)(last - first) / 1e9);
	for (size_t i = 0; ktr_thread_at(t, i, &tid, &pid, &comm); i++)
		nthreads++;
	row("threads", "%zu", nthreads);
	for (size_t i = 0; ktr_thread_at(t, i, &tid, &pid, &comm) && i < 32; i++)
		printf("#   %7" PRIu32 " %7" PRIu32 " %s\n", pid, tid, comm && *comm ? comm : "?");
	if (nthreads > 32)
		printf("#   ... and %zu more\n", nthreads - 32);
	if (in->packed == 2) /* ktrace record's consumer copied the rings */
		row("records", "%" PRIu64 " in %u streams (%s, rings of %" PRIu32 " x %" PRIu32 " bytes)",
		    records, in->nstreams, in->flight ? "flight recorder" : "streamed", in->buf_nr,
		    in->buf_size);
	else if (in->packed)
		row("records", "%" PRIu64 " in %u streams (%s mode, packed sub-buffers of %" PRIu32 " bytes)",
		    records, in->nstreams, in->flight ? "flight" : "discard", in->buf_size);
	else
		row("records", "%" PRIu64 " in %u streams (%s mode, %" PRIu32 " x %" PRIu32 " bytes per stream)",
		    records, in->nstreams, in->flight ? "flight" : "discard", in->buf_nr, in->buf_size);
	row("calls", "%" PRIu64 " (%" PRIu64 " unfinished)", calls, unfinished);
	if (events || kevents)
		row("events", "%" PRIu64 " static, %" PRIu64 " kernel", events, kevents);
	row("lost", "%s%" PRIu64 " records lost, %" PRIu64 " sub-buffers overwritten, %" PRIu64
	    " records dropped, %" PRIu64 " corrupt areas%s",
	    gaps[1] || gaps[2] || gaps[3] || gaps[4] ? cli_c_red() : "", gaps[KTR_GAP_LOST],
	    gaps[KTR_GAP_OVERWRITTEN], gaps[KTR_GAP_DROPPED], gaps[KTR_GAP_CORRUPT], cli_c_reset());
	f = cli_fopen_in(dir, "kft-status", NULL); /* a refusal was said by ktr_open() */
	if (f) {
		int in_cfg = 0;

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
	c = ktr_error_count(t) ? 1 : 0;
	ktr_close(t);
	cli_select_free(&sel);
	return c;
}

KTRACE_COMMAND(info, "what a trace holds: command, host, duration, threads, losses (uftrace info)",
	       run, help);

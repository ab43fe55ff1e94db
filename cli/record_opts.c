/*
 * cli/record_opts.c - `ktrace record`'s -F/-N/-D/-t/-T as KFT
 * configuration text (KTRACE_CONFIG_TEXT), the environment record gives
 * the program, and the outcome it reports (cli/record_opts.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/record_opts.h"
#include "cli/select.h"
#include "kft/config.h"

#define CMD "record"

/*
 * Append one statement line "STMT  # -X ARG" (control characters of ARG
 * shown as '?', so the comment stays on its line).  Return: 0, or -1
 * after saying why (an argument over 1000 bytes, or no memory).
 */
static int append(struct rec_opts *o, int opt, const char *arg, const char *fmt, ...)
{
	char stmt[1200], line[2600];
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(stmt, sizeof(stmt), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(stmt))
		n = snprintf(line, sizeof(line), "%s  # -%c %s", stmt, opt, arg);
	else
		n = -1;
	if (n < 0 || (size_t)n + 1 >= sizeof(line)) {
		cli_error(CMD, "option '-%c': the argument is too long (%zu bytes)", opt, strlen(arg));
		return -1;
	}
	for (char *c = strchr(line, '#'); *c; c++) /* the comment stays on its line */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	line[n++] = '\n';
	line[n] = 0;
	p = realloc(o->text, o->len + (size_t)n + 1);
	if (!p) {
		cli_error(CMD, "option '-%c': out of memory", opt);
		return -1;
	}
	memcpy(p + o->len, line, (size_t)n + 1);
	o->text = p;
	o->len += (size_t)n;
	return 0;
}

/* A function word the KFT language takes (kft/config.c): no blank,
 * control character or '#'; starting with a digit, a nonzero address of
 * 0x and 1 to 16 hex digits. */
static int func_ok(const char *f)
{
	size_t n = strlen(f);

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)f[i] <= 0x20 || f[i] == 0x7f || f[i] == '#')
			return 0;
	if (*f >= '0' && *f <= '9')
		return !strncmp(f, "0x", 2) && n > 2 && n <= 18 &&
		       strspn(f + 2, "0123456789abcdefABCDEF") == n - 2 && strtoull(f, NULL, 16) != 0;
	return n > 0;
}

int rec_opts_add(struct rec_opts *o, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'F':
	case 'N':
		if (!func_ok(arg)) {
			cli_error(CMD, "option '-%c': '%s' is not a function name, pattern or 0x address",
				  opt, arg);
			return -1;
		}
		return append(o, opt, arg, "filter %s %s fend", opt == 'F' ? "funclist" : "notrace", arg);
	case 'D':
		if (cli_parse_u64(arg, &v) < 0 || v < 1 || v > 65535) {
			cli_error(CMD, "option '-D': '%s' is not a depth of 1 to 65535", arg);
			return -1;
		}
		if (o->have_depth++) {
			cli_error(CMD, "option '-D' given twice");
			return -1;
		}
		return append(o, opt, arg, "filter depth %llu", (unsigned long long)v);
	case 't':
		if (cli_parse_time(arg, 1000, &v) < 0 || v % 1000) {
			cli_error(CMD, "option '-t': '%s' is not a time in whole microseconds (100us, 1.5ms, "
				       "2s; a bare number is microseconds)", arg);
			return -1;
		}
		if (o->have_time++) {
			cli_error(CMD, "option '-t' given twice");
			return -1;
		}
		return append(o, opt, arg, "filter mintime %llu", (unsigned long long)(v / 1000));
	case 'T': {
		const char *at = strrchr(arg, '@');
		char fn[1024];
		int on;

		if (!at || at == arg || (size_t)(at - arg) >= sizeof(fn)) {
			cli_error(CMD, "option '-T': '%s' is not FUNC@trace-on or FUNC@trace-off", arg);
			return -1;
		}
		if (!strcmp(at + 1, "trace-on") || !strcmp(at + 1, "trace_on"))
			on = 1;
		else if (!strcmp(at + 1, "trace-off") || !strcmp(at + 1, "trace_off"))
			on = 0;
		else {
			cli_error(CMD, "option '-T': unknown action '%s' (trace-on or trace-off)", at + 1);
			return -1;
		}
		snprintf(fn, sizeof(fn), "%.*s", (int)(at - arg), arg);
		if (!func_ok(fn)) {
			cli_error(CMD, "option '-T': '%s' is not a function name, pattern or 0x address", fn);
			return -1;
		}
		if (on ? o->have_start++ : o->have_stop++) {
			cli_error(CMD, "option '-T': a second %s trigger (one start, one stop)",
				  on ? "trace-on" : "trace-off");
			return -1;
		}
		return append(o, opt, arg, "trigger %s entry %s", on ? "start" : "stop", fn);
	}
	default:
		return -1;
	}
}

void rec_opts_free(struct rec_opts *o)
{
	free(o->text);
	o->text = NULL;
	o->len = 0;
}

/* Accept every name and pattern: only the syntax is checked before the program runs. */
static int any_name(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	(void)arg;
	(void)name;
	(void)len;
	*addr = 1;
	return 0;
}

static int any_pattern(void *arg, const char *pat, kt_u32 len, kt_u64 *addrs, kt_u32 max)
{
	(void)arg;
	(void)pat;
	(void)len;
	if (max)
		addrs[0] = 1;
	return 1;
}

int rec_opts_check(const struct rec_opts *o, const char *config_path, const char *config_text,
		   size_t config_len)
{
	static struct kft_config a, b; /* 4 KiB each: not on the stack */
	struct kft_names names = { any_name, any_pattern, NULL, 0 };
	struct kft_error err;
	char msg[600];

	kft_config_init(&a);
	if (config_text && kft_config_parse_names(&a, config_text, config_len, &names, &err) < 0) {
		kft_error_format(msg, sizeof(msg), config_path, &err);
		cli_error(CMD, "%s", msg);
		return -1;
	}
	if (!o->text)
		return 0;
	if (kft_config_parse_names(&b, o->text, o->len, &names, &err) < 0) {
		/* the generated line names its option after '#' */
		const char *line = o->text, *opt;

		for (kt_u32 l = 1; l < err.line && strchr(line, '\n'); l++)
			line = strchr(line, '\n') + 1;
		opt = strchr(line, '#');
		opt = opt ? opt + 2 : "?";
		cli_error(CMD, "option '%.*s': %s", (int)strcspn(opt, "\n"), opt, err.msg);
		return -1;
	}
	if (kft_config_merge(&a, &b, &err) < 0) {
		cli_error(CMD, "%s and the options: %s", config_path ? config_path : "the configuration",
			  err.msg);
		return -1;
	}
	return 0;
}

/* ---- what record tells the program, what it reports -------------------------- */

int rec_report_open(struct rec_report *r)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		r->rd = r->wr = -1;
		return -errno;
	}
	r->rd = fds[0];
	r->wr = fds[1];
	return 0;
}

void rec_report_child(struct rec_report *r, const struct rec_opts *opts)
{
	struct timespec ts;
	struct stat st;
	char buf[64];

	if (r->wr >= 0 && fstat(r->wr, &st) == 0 && fcntl(r->wr, F_SETFD, 0) == 0) {
		snprintf(buf, sizeof(buf), "%d,%lu", r->wr, (unsigned long)st.st_ino);
		setenv("KTRACE_REPORT_FD", buf, 1);
	} else {
		unsetenv("KTRACE_REPORT_FD");
	}
	if (opts->text)
		setenv("KTRACE_CONFIG_TEXT", opts->text, 1);
	else
		unsetenv("KTRACE_CONFIG_TEXT");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "%llu",
		 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	setenv("KTRACE_EXEC_NS", buf, 1);
}

void rec_report_parent(struct rec_report *r)
{
	if (r->wr >= 0)
		close(r->wr);
	r->wr = -1;
}

/* Print the interesting lines of DIR/kft-status; *@error its error line. Return: writers, or -1. */
static int summarise(const char *dir, int quiet, char *error, size_t len)
{
	char path[4200], line[512];
	int writers = -1;
	FILE *f;

	error[0] = 0;
	snprintf(path, sizeof(path), "%s/kft-status", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		static const char *const keys[] = { "state:", "started:", "stopped:", "entries kept:",
						    "entries unfinished:", "entries filtered:",
						    "entries lost:", "calls too deep:",
						    "entries missed in signal handlers:" };

		if (strncmp(line, "writers: ", 9) == 0)
			writers = atoi(line + 9);
		if (strncmp(line, "error: ", 7) == 0)
			snprintf(error, len, "%.*s", (int)strcspn(line + 7, "\n"), line + 7);
		if (strncmp(line, "configuration text:", 19) == 0)
			break;
		if (quiet)
			continue;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fprintf(stderr, "ktrace record: %s", line);
	}
	fclose(f);
	return writers;
}

/*
 * How many functions the run patched at start (DIR/kft-dynpatch's
 * "patched:" line, lib/kft_dynpatch.c).  Return: the number, or -1 when
 * the run patched nothing at run time (no such file).
 */
static long dynpatched(const char *dir)
{
	char path[4200], line[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kft-dynpatch", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "patched: ", 9))
			n = atol(line + 9);
	fclose(f);
	return n;
}

/*
 * Append "cmdline ARGS" to DIR/metadata (after the program's runtime last
 * rewrote it), for ktrace info: arguments joined by blanks, those holding a
 * blank, a quote or a backslash single-quoted as a shell would need them.
 */
static void record_cmdline(const char *dir, char **argv)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	f = fopen(path, "r+");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	fputs("cmdline", f);
	for (char **a = argv; *a; a++) {
		fputc(' ', f);
		if (**a && !strpbrk(*a, " \t'\"\\$`\n")) {
			fputs(*a, f);
			continue;
		}
		fputc('\'', f);
		for (const char *c = *a; *c; c++) {
			if (*c == '\'')
				fputs("'\\''", f);
			else if (*c == '\n')
				fputc(' ', f);
			else
				fputc(*c, f);
		}
		fputc('\'', f);
	}
	fputc('\n', f);
	fclose(f);
}

int rec_outcome(struct rec_report *r, const char *dir, char **argv, int status, int kernel,
		int quiet)
{
	const char *prog = argv[0];
	char said[1200] = "", error[512], why[1400];
	int writers;
	long patched; /* functions patched at run time (DIR/kft-dynpatch), -1: none was tried */
	ssize_t n = r->rd >= 0 ? read(r->rd, said, sizeof(said) - 1) : -1;

	if (r->rd >= 0)
		close(r->rd);
	r->rd = -1;
	said[n > 0 ? n : 0] = 0;
	said[strcspn(said, "\n")] = 0;
	/* the reason first: the summary of a run that did not happen says nothing */
	writers = summarise(dir, 1, error, sizeof(error));
	patched = writers == 0 ? dynpatched(dir) : -1;
	why[0] = 0;
	if (said[0])
		snprintf(why, sizeof(why), "%s", said);
	else if (error[0])
		snprintf(why, sizeof(why), "%s", error);
	else if (kernel & REC_TRACED)
		; /* records reached the consumer: traced, whatever the status file says */
	else if (writers < 0 && WIFSIGNALED(status))
		snprintf(why, sizeof(why), "it was killed by signal %d (%s) before it started the tracer",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (writers < 0)
		snprintf(why, sizeof(why), "it never started the tracer (%s/kft-status is missing: a "
					   "static binary, a setuid program, or LD_PRELOAD removed?)", dir);
	else if (writers == 0 && patched == 0)
		snprintf(why, sizeof(why), "no function was patched (-P/-U chose none, or none could "
					   "be: see %s/kft-dynpatch)", dir);
	else if (writers == 0 && patched > 0)
		snprintf(why, sizeof(why), "none of the %ld functions patched at start ran (see "
					   "%s/kft-dynpatch)", patched, dir);
	else if (writers == 0)
		snprintf(why, sizeof(why), "no instrumented function ran: was it built with "
					   "-finstrument-functions, -pg or -fpatchable-function-entry?");
	if (why[0] && !kernel) {
		cli_error(CMD, "%s was not traced: %s", prog, why);
		/* a program that died on its own: its status; else ktrace's failure */
		return writers < 0 && WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	}
	record_cmdline(dir, argv);
	if (why[0] && writers == 0 && !said[0] && !error[0] && (kernel & REC_SAID_NO_HOOKS))
		; /* the build line said so before the run */
	else if (why[0])
		cli_error(CMD, "warning: %s's calls were not traced: %s (its other events are recorded: "
			       "lock events with --locks, kernel events in %s/kernel, its own channels where it set them up)",
			  prog, why, dir);
	else if (!quiet)
		summarise(dir, 0, error, sizeof(error));
	if (!quiet) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "ktrace record: %s killed by signal %d; trace in %s\n", prog,
				WTERMSIG(status), dir);
		else
			fprintf(stderr, "ktrace record: %s exited with status %d; trace in %s\n", prog,
				WEXITSTATUS(status), dir);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

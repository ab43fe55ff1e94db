/*
 * cli/cmd_record.c - `ktrace record [-c CONFIG] [-o DIR] -- PROG ARGS...`:
 * run a program built with -finstrument-functions under the function
 * tracer (KFT, seed 002) and write its calls to a trace directory.
 *
 * The program gets libktrace.so through LD_PRELOAD; its constructor
 * (lib/kft_setup.c) reads the environment set here (KTRACE_RECORD_DIR,
 * KTRACE_CONFIG, KTRACE_BUF_SIZE, KTRACE_BUF_NR, KTRACE_FLIGHT,
 * KTRACE_THREADS), sets the channel up and starts a static run, as KFT's
 * boot-time run started from kftstatic.conf.  The configuration is checked
 * here first, so a syntax error is reported with its line and column before
 * anything runs; names are resolved inside the program (an unknown name is
 * reported there, and the program then runs untraced).
 *
 * While it runs, `ktrace kft DIR status` shows the run; afterwards
 * DIR/kft-status holds the final status, summarised here.
 *
 * With --kernel[=MASKSET], kernel events (LKST catalogue) are recorded
 * through tracefs while the program runs, into DIR/kernel
 * (cli/tracefs_rec.c); without a program, the whole system until Ctrl-C.
 *
 * Exit status: the program's (128 + signal if it was killed); 1 if the
 * configuration is bad or the program cannot be started; 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/tracefs_rec.h"
#include "lib/safefile.h"
#include "kft/config.h"

#define CMD "record"

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace record [OPTIONS] [--] PROG [ARGS...]\n"
		"       ktrace record --kernel[=MASKSET] [-o DIR]    (whole system until Ctrl-C)\n"
		"\n"
		"Run PROG, built with -finstrument-functions, under the function tracer (KFT)\n"
		"and record its calls in a trace directory: one record per completed call\n"
		"with entry time, duration, function, call site, thread and depth.\n"
		"libktrace.so is preloaded (LD_PRELOAD); PROG needs no other change.\n"
		"\n"
		"  -c, --config FILE     KFT configuration: triggers, filters, watches,\n"
		"                        logentries, autorepeat (see docs/KFT-CONFIG.md);\n"
		"                        default: record every call from the start\n"
		"  -o, --output DIR      trace directory (default ktrace.data): created, or yours\n"
		"                        holding an earlier trace (replaced); not a link\n"
		"  -b, --buf-size BYTES  sub-buffer size, a power of two (default 256K;\n"
		"                        K and M suffixes)\n"
		"  -n, --buf-nr N        sub-buffers per thread stream (default 64)\n"
		"  -f, --flight          flight-recorder mode: keep the newest calls instead\n"
		"                        of stopping when the buffer is full\n"
		"  -t, --threads N       thread streams (default 2 x CPUs); more threads\n"
		"                        share one stream\n"
		"  -q, --quiet           no summary at the end\n"
		"      --kernel[=MASKSET]  also record kernel events through tracefs (root):\n"
		"                        MASKSET is RDEFAULT (default: context switches,\n"
		"                        wakeups, syscalls, irqs, faults, signals, fork/exit),\n"
		"                        RALL, RNOTHING, or a comma list of LKST mnemonics\n"
		"                        and categories; written to DIR/kernel\n"
		"      --kernel-buffer SIZE  kernel ring buffer per CPU (default 4M)\n"
		"  -h, --help            this text\n"
		"\n"
		"While PROG runs: ktrace kft DIR status|start|stop|prime|load FILE.\n"
		"Afterwards: ktrace kd DIR, ktrace addr2sym DIR, ktrace print DIR.\n"
		"\n"
		"Exit status: PROG's (128 + signal number if it was killed), 1 bad\n"
		"configuration or PROG cannot be run, 2 usage error.  See ktrace-record(1).\n");
}

/* Accept every name: only the syntax is checked before the program runs. */
static int any_name(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	(void)arg;
	(void)name;
	(void)len;
	*addr = 1;
	return 0;
}

static int check_config(const char *path)
{
	struct kft_config *cfg = calloc(1, sizeof(*cfg));
	struct kft_error err;
	char *text = NULL, msg[512];
	size_t len = 0, cap = 0;
	FILE *f;
	int rc = 0;

	if (!cfg) {
		cli_error(CMD, "out of memory");
		return -1;
	}
	f = fopen(path, "r");
	if (!f) {
		cli_error(CMD, "%s: cannot read: %s", path, strerror(errno));
		free(cfg);
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *p = cap >= (1u << 20) ? NULL : realloc(text, cap ? cap * 2 : 4096);

			if (!p) {
				cli_error(CMD, "%s: larger than 1 MiB", path);
				rc = -1;
				break;
			}
			text = p;
			cap = cap ? cap * 2 : 4096;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f)) {
				cli_error(CMD, "%s: cannot read: %s", path, strerror(errno));
				rc = -1;
			}
			break;
		}
	}
	fclose(f);
	if (rc == 0 && kft_config_parse(cfg, text ? text : "", len, any_name, NULL, &err) < 0) {
		kft_error_format(msg, sizeof(msg), path, &err);
		cli_error(CMD, "%s", msg);
		rc = -1;
	}
	free(text);
	free(cfg);
	return rc;
}

/* libktrace.so.0 beside the ktrace binary, or in ../lib; KTRACE_LIB overrides. */
static int find_lib(char *out, size_t size)
{
	const char *env = getenv("KTRACE_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;
	static const char *const rel[] = { "libktrace.so.0", "../lib/libktrace.so.0" };

	if (env && *env) {
		if (access(env, R_OK) != 0)
			return -1;
		snprintf(out, size, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char path[PATH_MAX + 64], real[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", exe, rel[i]);
		if (access(path, R_OK) == 0 && realpath(path, real)) {
			snprintf(out, size, "%s", real);
			return 0;
		}
	}
	return -1;
}

/* An absolute form of @path (which need not exist yet). */
static int absolute(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX];

	if (path[0] == '/') {
		snprintf(out, size, "%s", path);
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	if ((size_t)snprintf(out, size, "%s/%s", cwd, path) >= size)
		return -1;
	return 0;
}

/* Print the interesting lines of DIR/kft-status. Return: threads seen, or -1. */
static int summarise(const char *dir, int quiet)
{
	char path[PATH_MAX + 32], line[512];
	int writers = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kft-status", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		static const char *const keys[] = { "error:", "state:", "started:", "stopped:",
						    "entries kept:", "entries unfinished:",
						    "entries filtered:", "entries lost:",
						    "entries missed in signal handlers:" };

		if (strncmp(line, "writers: ", 9) == 0)
			writers = atoi(line + 9);
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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "output", required_argument, NULL, 'o' },
		{ "buf-size", required_argument, NULL, 'b' }, { "buf-nr", required_argument, NULL, 'n' },
		{ "flight", no_argument, NULL, 'f' },        { "threads", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },         { "help", no_argument, NULL, 'h' },
		{ "kernel", optional_argument, NULL, 'K' },  { "kernel-buffer", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *out = "ktrace.data", *bufsize = NULL, *bufnr = NULL,
		   *threads = NULL;
	char lib[PATH_MAX], dir[PATH_MAX], cfg_abs[PATH_MAX], preload[2 * PATH_MAX + 2];
	int flight = 0, quiet = 0, c, status, writers, kernel = 0;
	struct krec_opts kopts = { NULL, 0, 0 };
	struct krec *krec = NULL;
	uint64_t v;
	pid_t pid;
	struct sigaction ign, old_int, old_quit;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, "+:c:o:b:n:ft:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'b':
			bufsize = optarg;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &v) < 0 || v < 2 || v > 1u << 20) {
				cli_error(CMD, "option '-n' needs a number of sub-buffers >= 2, not '%s'",
					  optarg);
				return 2;
			}
			bufnr = optarg;
			break;
		case 'f':
			flight = 1;
			break;
		case 't':
			if (cli_parse_u64(optarg, &v) < 0 || v < 1 || v > 4096) {
				cli_error(CMD, "option '-t' needs a number of threads 1..4096, not '%s'",
					  optarg);
				return 2;
			}
			threads = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			help(stdout);
			return 0;
		case 'K': {
			uint8_t sel[KTRACE_LKST_MAX_ID];
			char err[256];

			if (krec_parse_maskset(optarg, sel, err, sizeof(err)) < 0) {
				cli_error(CMD, "option '--kernel': %s", err);
				return 2;
			}
			kernel = 1;
			kopts.maskset = optarg;
			break;
		}
		case 'B': {
			uint64_t b;

			if (cli_parse_size(optarg, &b) < 0 || (b >>= 10) < 64 || b > (1ull << 21)) {
				cli_error(CMD, "option '--kernel-buffer' needs a size from 64K to 2G, not '%s'",
					  optarg);
				return 2;
			}
			kopts.buf_kb = (unsigned)b;
			break;
		}
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	if (optind >= argc && kernel) {
		if (absolute(out, dir, sizeof(dir)) < 0) {
			cli_error(CMD, "%s: path too long", out);
			return 1;
		}
		kopts.progress = !quiet;
		return krec_record_system(dir, &kopts, quiet);
	}
	if (optind >= argc) {
		cli_error(CMD, "no program to run (see ktrace record --help)");
		return 2;
	}
	if (bufsize) {
		uint64_t b;

		if (cli_parse_size(bufsize, &b) < 0 || b < 4096 || b > (64ull << 20) || (b & (b - 1))) {
			cli_error(CMD, "option '-b' needs a power of two from 4K to 64M, not '%s'",
				  bufsize);
			return 2;
		}
	}
	if (config && check_config(config) < 0)
		return 1;
	if (find_lib(lib, sizeof(lib)) < 0) {
		cli_error(CMD, "cannot find libktrace.so.0 beside the ktrace binary or in ../lib "
			       "(set KTRACE_LIB)");
		return 1;
	}
	if (absolute(out, dir, sizeof(dir)) < 0 || (config && absolute(config, cfg_abs, sizeof(cfg_abs)) < 0)) {
		cli_error(CMD, "%s: path too long", out);
		return 1;
	}
	/* yours, not a link, empty or an old trace (lib/safefile.h): checked here,
	 * so a refusal stops the command before the program runs */
	if (cli_trace_dir(CMD, dir, KSF_CREATE | KSF_TRACE | KSF_CLEAR) < 0)
		return 1;
	{
		/* The user's preloads first: a sanitizer runtime must lead the list. */
		const char *old = getenv("LD_PRELOAD");

		snprintf(preload, sizeof(preload), "%s%s%s", old ? old : "", old && *old ? ":" : "", lib);
	}

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	krec = krec_begin_program(dir, kernel ? &kopts : NULL, argv[optind]);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_error(CMD, "fork: %s", strerror(errno));
		krec_end_program(krec, dir, 0, quiet);
		return 1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		setenv("LD_PRELOAD", preload, 1);
		setenv("KTRACE_RECORD_DIR", dir, 1);
		unsetenv("KTRACE_RECORD_IMAGE");
		if (config)
			setenv("KTRACE_CONFIG", cfg_abs, 1);
		else
			unsetenv("KTRACE_CONFIG");
		if (bufsize)
			setenv("KTRACE_BUF_SIZE", bufsize, 1);
		if (bufnr)
			setenv("KTRACE_BUF_NR", bufnr, 1);
		if (flight)
			setenv("KTRACE_FLIGHT", "1", 1);
		if (threads)
			setenv("KTRACE_THREADS", threads, 1);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "ktrace record: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			cli_error(CMD, "waitpid: %s", strerror(errno));
			return 1;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && access(dir, F_OK) != 0) {
		krec_end_program(krec, dir, 0, quiet);
		return 1; /* exec failed: already reported */
	}
	writers = summarise(dir, quiet);
	kernel = krec != NULL; /* kernel events were recorded: PROG need not be instrumented */
	krec_end_program(krec, dir, 1, quiet);
	if (!quiet) {
		if (writers == 0 && !kernel)
			fprintf(stderr, "ktrace record: no traced call was seen: was %s built with "
					"-finstrument-functions?\n", argv[optind]);
		else if (writers < 0 && !kernel)
			fprintf(stderr, "ktrace record: %s/kft-status is missing: the program did not "
					"start the tracer (static binary, or setuid?)\n", dir);
		if (WIFSIGNALED(status))
			fprintf(stderr, "ktrace record: %s killed by signal %d; trace in %s\n",
				argv[optind], WTERMSIG(status), dir);
		else
			fprintf(stderr, "ktrace record: %s exited with status %d; trace in %s\n",
				argv[optind], WEXITSTATUS(status), dir);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

KTRACE_COMMAND(record, "run a -finstrument-functions program under the function tracer", run, help);

/*
 * cli/cmd_record.c - `ktrace record [-F FUNC] [-t TIME] [--config FILE] [-o DIR] -- PROG ARGS...`:
 * run a program built with -finstrument-functions under the function
 * tracer (KFT, seed 002) and write its calls to a trace directory.
 *
 * The program gets libktrace.so through LD_PRELOAD, after the shim
 * libktrace-record.so (its sigaction/signal, lib/preload/signal.c); the
 * library's constructor
 * (lib/kft_setup.c) reads the environment set here (KTRACE_RECORD_DIR,
 * KTRACE_CONFIG, KTRACE_BUF_SIZE, KTRACE_BUF_NR, KTRACE_FLIGHT,
 * KTRACE_THREADS; and from cli/record_opts.c KTRACE_CONFIG_TEXT, the
 * uftrace-style -F/-N/-D/-t/-T as KFT statements, KTRACE_EXEC_NS and
 * KTRACE_REPORT_FD), sets the channel up and starts a static run, as KFT's
 * boot-time run started from kftstatic.conf.  The configuration and the
 * options are checked here first, so a syntax error is reported with its
 * line and column (or option) before anything runs; names are resolved
 * inside the program (an unknown name is reported back through the pipe,
 * once, and record exits 1: nothing was traced).
 *
 * This process is the consumer (consumer/consumer.h): it creates the
 * session (KTRACE_SESSION, shared memory in /dev/shm) in which every
 * thread of the program writes a small ring of sub-buffers, and copies
 * each sub-buffer to DIR as it fills, so a trace is as long as the disk
 * allows while memory stays bounded.  A writer that finds its ring full
 * waits for it as long as it lives and copies (--block-timeout bounds
 * the wait), then drops records, counted with the time ranges.  When the program has ended, however it ended, and every
 * process it started with it (record is their child subreaper: orphans and
 * daemons included, see child_ended(); --wait or Ctrl-C bounds that wait),
 * it copies what is left in the rings and writes the calls still open in
 * dead threads as unfinished.  With --flight the rings are flight recorders,
 * copied at the end only.
 *
 * While it runs, `ktrace kft DIR status` shows the run; afterwards
 * DIR/kft-status holds the final status, summarised here.
 *
 * With --kernel[=MASKSET], kernel events (LKST catalogue) are recorded
 * through tracefs while the program runs, into DIR/kernel
 * (kclient/tracefs_record.c); without a program, the whole system until Ctrl-C.
 * -e SYS:NAME (repeatable) enables more tracepoints, kept in the raw copy
 * DIR/kernel/ftrace only; an unknown one is a usage error (exit 2).
 *
 * With --locks, libktrace-locks.so is preloaded too (lib/preload/locks.c):
 * the program's pthread lock calls become lock events (include/ktrace/locks.h)
 * for `ktrace locks DIR`; PROG need not be instrumented then.
 *
 * Exit status: the program's (128 + signal if it was killed); 1 if the
 * configuration is bad, the program cannot be started or was not traced;
 * 2 usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/record_attach.h"
#include "cli/record_opts.h"
#include "cli/select.h"
#include "consumer/consumer.h"
#include "kclient/kclient.h"
#include "lib/runtime.h"
#include "lib/safefile.h"
#include "lib/session.h"
#include "reader/zframe.h"

#define CMD "record"

/* One `ktrace record` of a program: its options, then what the steps of run() set up. */
struct record {
	/* options */
	struct rec_opts ro;  /* -F -N -D -t -T, as KFT statements (cli/record_opts.c) */
	struct rec_patch patch; /* -P -U, as KTRACE_PATCH's rules (cli/record_patch.c) */
	const char *config, *out, *bufsize, *bufnr, *threads;
	int flight, quiet, locks, nolibcall, kernel;
	uint64_t block_ns, wait_ns; /* --block-timeout; --wait (~0: until they exit) */
	int zon, zlevel;            /* --compress */
	pid_t attach;               /* -p: a running process (cli/record_attach.c) */
	uint64_t duration_ns;       /* --duration (0: until Ctrl-C or its end) */
	struct krec_opts kopts;
	const char *events[64]; /* -e: pointers into argv */
	char **cmd;             /* PROG and its arguments */
	/* the run */
	int libcall, untraceable;
	char lib[PATH_MAX], dir[PATH_MAX], cfg_abs[PATH_MAX], preload[4 * PATH_MAX + 96];
	struct rec_report rep;
	struct krec *krec;
	struct kc_session *sess;
	struct sigaction old_int, old_quit, old_chld, old_usr2;
};

enum { OPT_CONFIG = CLI_OPT_LONG, OPT_FLIGHT, OPT_THREADS, OPT_BLOCK, OPT_LOCKS, OPT_NOLIBCALL, OPT_WAIT,
       OPT_KERNEL, OPT_KBUF, OPT_DURATION, OPT_LIB, OPT_COMPRESS };

static const struct cli_opt opts[] = {
	CLI_OPT_TEXT("What to keep (as uftrace's options; FUNC may be a pattern: 'btree*'):"),
	CLI_OPT("filter", 'F', "FUNC", "only calls of FUNC (repeatable): filter funclist"),
	CLI_OPT("notrace", 'N', "FUNC", "never calls of FUNC (repeatable): filter notrace"),
	CLI_OPT("depth", 'D', "N", "only calls less than N deep (1: the outermost)"),
	CLI_OPT("time-filter", 't', "TIME", "only calls lasting TIME or more: 100us, 1.5ms, 2s\n"
					     "(a bare number is microseconds): filter mintime"),
	CLI_OPT("trigger", 'T', "FUNC@trace-on|trace-off",
		"start (stop) recording when FUNC is entered"),
	CLI_OPT("patch", 'P', "FUNC[@LIB]",
		"patch FUNC's entry at start (repeatable; '.': every\n"
		"function): for programs and libraries (@LIB: libz,\n"
		"libz.so.1) built without hooks; default: every\n"
		"function of PROG when it has none"),
	CLI_OPT("unpatch", 'U', "FUNC[@LIB]", "do not patch FUNC (repeatable; '.': none)"),
	CLI_OPT("lib", OPT_LIB, "LIB", "patch every function of the shared library LIB\n"
				       "(repeatable): -P '.@LIB'"),
	CLI_OPT_STRING("config", OPT_CONFIG, "FILE", struct record, config,
		       "a KFT configuration: triggers, filters, watches,\n"
		       "logentries, autorepeat (docs/KFT-CONFIG.md); the\n"
		       "options above add to it; default: every call"),
	CLI_OPT_TEXT(""),
	CLI_OPT_TEXT("Where and how:"),
	CLI_OPT_STRING("output", 'o', "DIR", struct record, out,
		       "trace directory (default ktrace.data): created, or yours\n"
		       "holding an earlier trace (replaced); not a link"),
	CLI_OPT_STRING("buf-size", 'b', "BYTES", struct record, bufsize,
		       "sub-buffer size, a power of two (default 256K;\nK and M suffixes)"),
	CLI_OPT("buf-nr", 'n', "N", "sub-buffers in each thread's ring (default 32;\n"
				    "with --flight 64): every call is kept, the ring\n"
				    "is copied to DIR as it fills"),
	CLI_OPT_FLAG("flight", OPT_FLIGHT, struct record, flight,
		     "flight recorder: keep only the newest calls, in\n"
		     "the rings (written to DIR when PROG ends)"),
	CLI_OPT("block-timeout", OPT_BLOCK, "TIME",
		"when a thread's ring is full (the consumer is\n"
		"behind), wait up to TIME for it before dropping\n"
		"records (default: as long as the consumer runs\n"
		"and copies; 0: drop at once)"),
	CLI_OPT("compress", OPT_COMPRESS, "zstd[:LEVEL]|none",
		"how the consumer writes DIR's streams: zstd\n"
		"frames (default, level 1; LEVEL -7..19, lower is\n"
		"faster) or none (16 bytes a call); readers take both"),
	CLI_OPT("threads", OPT_THREADS, "N", "thread streams (default 2 x CPUs); more threads\n"
					      "share one stream"),
	CLI_OPT_FLAG("no-libcall", OPT_NOLIBCALL, struct record, nolibcall,
		     "do not record the program's calls into shared\n"
		     "libraries (recorded by default, as uftrace does)"),
	CLI_OPT("wait", OPT_WAIT, "TIME",
		"after PROG exits, wait at most TIME (10s, 500ms; 0:\n"
		"not at all) for the processes it left running\n"
		"(daemons, orphaned children); default: until they\n"
		"exit, or Ctrl-C, which stops the waiting (the count\n"
		"of those still running is reported)"),
	CLI_OPT("pid", 'p', "PID",
		"attach to the running process PID instead of\n"
		"running PROG (x86-64): its functions are patched\n"
		"(or its compiled hooks bound) while it runs, and\n"
		"undone at the end; it runs on as it was"),
	CLI_OPT("duration", OPT_DURATION, "TIME",
		"with -p: stop recording after TIME (10s, 500ms);\n"
		"default: at Ctrl-C or when PID ends"),
	CLI_OPT_FLAG("quiet", 'q', struct record, quiet, "no summary at the end"),
	CLI_OPT("kernel", OPT_KERNEL, "[=MASKSET]",
		"also record kernel events through tracefs (root):\n"
		"MASKSET is RDEFAULT (default: context switches,\n"
		"wakeups, syscalls, irqs, faults, signals, fork/exit),\n"
		"RALL, RNOTHING, or a comma list of LKST mnemonics\n"
		"and categories (hook: the tracefs hooks of\n"
		"ktrace lkst --tracefs hook add); written to DIR/kernel"),
	CLI_OPT("kernel-buffer", OPT_KBUF, "SIZE", "kernel ring buffer per CPU (default 4M)"),
	CLI_OPT("event", 'e', "SYS:NAME",
		"with --kernel: also enable this tracepoint (repeatable;\n"
		"'block:*', 'sched' = 'sched:*'); every event is kept\n"
		"raw in DIR/kernel/ftrace for `ktrace export\n"
		"--format=trace.dat` (trace-cmd, KernelShark)"),
	CLI_OPT_FLAG("locks", OPT_LOCKS, struct record, locks,
		     "also record PROG's pthread mutex, rwlock, spinlock and\n"
		     "condition-variable calls (libktrace-locks.so) for\n"
		     "`ktrace locks DIR`; PROG need not be instrumented"),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace record [OPTIONS] [--] PROG [ARGS...]\n"
		"       ktrace record [OPTIONS] -p PID [--duration TIME]   (a running process)\n"
		"       ktrace record --kernel[=MASKSET] [-e SYS:NAME]... [-o DIR]   (whole system until Ctrl-C)\n"
		"\n"
		"Run PROG, built with -finstrument-functions, -pg or -pg -mfentry, under the\n"
		"function tracer (KFT) and record its calls in a trace directory: one record\n"
		"per completed call\n"
		"with entry time, duration, function, call site, thread and depth.\n"
		"libktrace.so and libktrace-record.so are preloaded (LD_PRELOAD); PROG needs\n"
		"no other change.  First it says in one line how PROG was built (from its\n"
		"ELF symbols) and what it will do, or which flag would make it traceable.\n",
	.opts = opts,
	.tail =
		"While PROG runs: ktrace kft DIR status|start|stop|prime|load FILE.\n"
		"Afterwards: ktrace info, kd, graph FUNC, addr2sym, print (DIR: ktrace.data).\n"
		"\n"
		"Exit status: PROG's (128 + signal number if it was killed); 1 PROG could not\n"
		"be traced (the reason is printed once), a bad configuration or option, or\n"
		"PROG cannot be run; 2 usage error.  See ktrace-record(1).\n",
	.in_order = 1,
};

/* Read a configuration FILE (at most 1 MiB).  Return: its text (malloc'ed) or NULL after an error. */
static char *read_config(const char *path, size_t *len)
{
	size_t cap = 0;
	char *text = NULL;
	FILE *f = fopen(path, "r");

	*len = 0;
	if (!f) {
		cli_error(CMD, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t n;

		if (*len == cap) {
			char *p = cap >= (1u << 20) ? NULL : realloc(text, cap ? cap * 2 : 4096);

			if (!p) {
				cli_error(CMD, "%s: larger than 1 MiB", path);
				free(text);
				fclose(f);
				return NULL;
			}
			text = p;
			cap = cap ? cap * 2 : 4096;
		}
		n = fread(text + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0) {
			if (ferror(f)) {
				cli_error(CMD, "%s: cannot read: %s", path, strerror(errno));
				free(text);
				fclose(f);
				return NULL;
			}
			break;
		}
	}
	fclose(f);
	return text;
}

/* libktrace.so.0 beside the ktrace binary, or in ../lib; KTRACE_LIB overrides. */
static int find_lib(char *out, size_t size)
{
	static const char *const rel[] = { "libktrace.so.0", "../lib/libktrace.so.0" };

	return cli_find_beside("KTRACE_LIB", rel, sizeof(rel) / sizeof(rel[0]), out, size);
}

/* SIGCHLD ends the consumer's wait, so the end is seen at once. */
static struct kc_session *volatile kick_sess;
static const char *rec_dir; /* its trace directory, for messages */

static void on_child(int sig)
{
	(void)sig;
	if (kick_sess)
		kc_kick(kick_sess);
}

/*
 * kc_consume()'s test: has the program ended, and every process it started?
 *
 * `record` is the child subreaper of the program (PR_SET_CHILD_SUBREAPER):
 * a process the program leaves behind (a child that outlives it, a daemon
 * that forked twice and whose parent exited) is reparented to `record`,
 * not to init, so waitpid(-1) sees every process of the run, race-free: a
 * child forked just before its parent's exit is one of them from the
 * start.  Every one holds the session's rings (the mapping is inherited
 * at fork and mapped again by an exec()ed image), so the run is over when
 * none is left (ECHILD).  Each is reaped here; the program's own status
 * is kept.  After the program exited, the waiting for the others ends
 * early at --wait TIME or at Ctrl-C (SIGINT), and they are counted.
 */
struct child {
	pid_t pid;
	int status, err, exited;
	uint64_t wait_ns;  /* --wait: ~0 forever */
	uint64_t until_ns; /* when the waiting ends (0: not yet waiting) */
	unsigned left;     /* processes still running when the waiting ended */
	int quiet;
	const char *prog;
};

static volatile sig_atomic_t stop_waiting;

static void on_interrupt(int sig)
{
	(void)sig;
	stop_waiting = 1;
	if (kick_sess)
		kc_kick(kick_sess);
}

/* SIGUSR2: a flight recorder's dump, taken in the consumer's loop (take_dump()). */
static volatile sig_atomic_t dump_wanted;

static void on_dump(int sig)
{
	(void)sig;
	dump_wanted = 1;
	if (kick_sess)
		kc_kick(kick_sess);
}

/* From kc_consume()'s test: the dump SIGUSR2 asked for, if it did. */
static void take_dump(void)
{
	if (!dump_wanted || !kick_sess)
		return;
	dump_wanted = 0;
	cli_dump(CMD, kick_sess, rec_dir, stderr, "ktrace " CMD ": dump: ");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The number of living descendants of this process (from /proc/PID/stat: ppid). */
static unsigned count_descendants(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t *pid = NULL, *ppid = NULL;
	size_t n = 0, cap = 0;
	unsigned count = 0;
	char *mine = NULL;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[300], buf[512], *rp;
		int fd;
		ssize_t r;
		long pp;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		rp = strrchr(buf, ')');
		/* ") S PPID": state, then the parent; zombies are gone already for our purpose */
		if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X' ||
		    sscanf(rp + 3, "%ld", &pp) != 1)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			pid_t *a = realloc(pid, nc * sizeof(*a)), *b;

			if (!a)
				break;
			pid = a;
			b = realloc(ppid, nc * sizeof(*b));
			if (!b)
				break;
			ppid = b;
			cap = nc;
		}
		pid[n] = (pid_t)atol(de->d_name);
		ppid[n] = (pid_t)pp;
		n++;
	}
	closedir(d);
	/* mark descendants: repeat until no new one is found */
	mine = calloc(n ? n : 1, 1);
	if (mine) {
		int more = 1;
		pid_t self = getpid();

		while (more) {
			more = 0;
			for (size_t i = 0; i < n; i++) {
				if (mine[i])
					continue;
				if (ppid[i] == self) {
					mine[i] = 1;
				} else {
					for (size_t j = 0; j < n; j++)
						if (mine[j] && pid[j] == ppid[i]) {
							mine[i] = 1;
							break;
						}
				}
				if (mine[i]) {
					count++;
					more = 1;
				}
			}
		}
	}
	free(mine);
	free(pid);
	free(ppid);
	return count;
}

static int child_ended(void *arg)
{
	struct child *c = arg;

	take_dump();
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG);

		if (r > 0) {
			if (r == c->pid) {
				c->status = st;
				c->exited = 1;
			}
			continue;
		}
		if (r == 0)
			break; /* some still run */
		if (errno == EINTR)
			continue;
		if (errno != ECHILD || !c->exited)
			c->err = errno;
		return 1; /* none left (or an error) */
	}
	if (!c->exited)
		return 0;
	if (!c->until_ns) {
		/* the program exited; the processes it left are still running */
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_interrupt; /* no SA_RESTART */
		sigaction(SIGINT, &sa, NULL);
		c->until_ns = c->wait_ns == ~(uint64_t)0 ? ~(uint64_t)0 : mono_ns() + c->wait_ns;
		if (!c->quiet && c->wait_ns) {
			unsigned n = count_descendants();

			fprintf(stderr, "ktrace record: %s exited; waiting for the %u process%s it "
					"left running%s\n",
				c->prog, n, n == 1 ? "" : "es",
				c->wait_ns == ~(uint64_t)0 ? " (Ctrl-C stops waiting)" : "");
		}
	}
	if (stop_waiting || mono_ns() >= c->until_ns) {
		c->left = count_descendants();
		return 1;
	}
	return 0;
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

/* @name's path in libktrace.so.0's directory @lib, into @out.  Return: 0,
 * or -1 when it is not there (said on stderr). */
static int beside(const char *lib, const char *name, char *out, size_t size)
{
	const char *slash = strrchr(lib, '/');

	snprintf(out, size, "%.*s%s", slash ? (int)(slash + 1 - lib) : 0, lib, name);
	if (access(out, R_OK) != 0) {
		cli_error(CMD, "cannot find %s beside %s", out, lib);
		return -1;
	}
	return 0;
}

/* cli_opt_fn: the options that are not stored by the table itself. */
static int take_option(void *ctx, int key, const char *arg)
{
	struct record *r = ctx;
	uint64_t v;

	switch (key) {
	case 'F':
	case 'N':
	case 'D':
	case 't':
	case 'T':
		return rec_opts_add(&r->ro, key, arg) < 0 ? 2 : 0;
	case 'P':
	case 'U':
		return rec_patch_add(&r->patch, key, arg) < 0 ? 2 : 0;
	case OPT_LIB: {
		char rule[512];

		if (!*arg || strchr(arg, '@') || strlen(arg) > sizeof(rule) - 3) {
			cli_error(CMD, "option '--lib' needs a library's file name (libz, libz.so.1), "
				       "not '%s'", arg);
			return 2;
		}
		snprintf(rule, sizeof(rule), ".@%s", arg);
		return rec_patch_add(&r->patch, 'P', rule) < 0 ? 2 : 0;
	}
	case 'n':
		if (cli_parse_u64(arg, &v) < 0 || v < 2 || v > 1u << 20) {
			cli_error(CMD, "option '-n' needs a number of sub-buffers >= 2, not '%s'", arg);
			return 2;
		}
		r->bufnr = arg;
		return 0;
	case OPT_THREADS:
		if (cli_parse_u64(arg, &v) < 0 || v < 1 || v > 4096) {
			cli_error(CMD, "option '--threads' needs a number of threads 1..4096, not '%s'",
				  arg);
			return 2;
		}
		r->threads = arg;
		return 0;
	case 'p':
		if (cli_parse_u64(arg, &v) < 0 || v < 1 || v > 4194304) { /* PID_MAX_LIMIT */
			cli_error(CMD, "option '-p' needs a process id, not '%s'", arg);
			return 2;
		}
		r->attach = (pid_t)v;
		return 0;
	case OPT_DURATION:
		if (cli_parse_time(arg, 1000000, &r->duration_ns) < 0 || !r->duration_ns) {
			cli_error(CMD, "option '--duration' needs a time such as 10s or 500ms, not '%s'",
				  arg);
			return 2;
		}
		return 0;
	case OPT_WAIT:
		if (cli_parse_time(arg, 1000000, &r->wait_ns) < 0) {
			cli_error(CMD, "option '--wait' needs a time such as 10s, 500ms or 0, not '%s'",
				  arg);
			return 2;
		}
		return 0;
	case OPT_BLOCK:
		if (cli_parse_time(arg, 1000000, &r->block_ns) < 0) {
			cli_error(CMD, "option '--block-timeout' needs a time such as 100ms, 2s or 0, "
				       "not '%s'", arg);
			return 2;
		}
		return 0;
	case OPT_COMPRESS: {
		char *end;
		long lv = KZ_LEVEL_DEFAULT;

		if (!strcmp(arg, "none")) {
			r->zon = 0;
			return 0;
		}
		if (strncmp(arg, "zstd", 4) || (arg[4] && arg[4] != ':') ||
		    (arg[4] == ':' && ((lv = strtol(arg + 5, &end, 10)), end == arg + 5 || *end ||
				       lv < KZ_LEVEL_MIN || lv > KZ_LEVEL_MAX))) {
			cli_error(CMD, "option '--compress' needs zstd, zstd:LEVEL (LEVEL %d..%d) or none, "
				       "not '%s'", KZ_LEVEL_MIN, KZ_LEVEL_MAX, arg);
			return 2;
		}
		r->zon = 1;
		r->zlevel = (int)lv;
		return 0;
	}
	case OPT_KERNEL: {
		uint8_t sel[KTRACE_LKST_MAX_ID];
		char err[256];

		if (krec_parse_maskset(arg, sel, err, sizeof(err)) < 0) {
			cli_error(CMD, "option '--kernel': %s", err);
			return 2;
		}
		r->kernel = 1;
		r->kopts.maskset = arg;
		return 0;
	}
	case 'e':
		if (r->kopts.nevents == sizeof(r->events) / sizeof(r->events[0])) {
			cli_error(CMD, "option '-e': at most %zu (use patterns: 'block:*')",
				  sizeof(r->events) / sizeof(r->events[0]));
			return 2;
		}
		r->events[r->kopts.nevents++] = arg;
		r->kopts.events = r->events;
		return 0;
	case OPT_KBUF:
		if (cli_parse_size(arg, &v) < 0 || (v >>= 10) < 64 || v > (1ull << 21)) {
			cli_error(CMD, "option '--kernel-buffer' needs a size from 64K to 2G, not '%s'",
				  arg);
			return 2;
		}
		r->kopts.buf_kb = (unsigned)v;
		return 0;
	default:
		return 2;
	}
}

/* -p's companions: no PROG, --duration only with -p, no --kernel or --locks.  Return: 0 or 2. */
static int attach_options(struct record *r, int argc)
{
	const char *bad = !r->attach ? "option '--duration' needs -p PID"
			  : optind < argc ? "-p PID attaches to a running process: no PROG to run"
			  : r->kernel ? "-p PID with --kernel is not supported yet"
			  : r->locks ? "-p PID with --locks is not supported (the lock wrappers must be "
				       "preloaded)"
				     : NULL;

	if (bad)
		cli_error(CMD, "%s", bad);
	return bad ? 2 : 0;
}

/* -e needs --kernel and must name tracepoints.  Return: 0, or 2 after one line. */
static int check_events(struct record *r)
{
	char msg[512];

	if (!r->kopts.nevents)
		return 0;
	if (!r->kernel) {
		cli_error(CMD, "option '-e' needs --kernel (kernel tracepoints are recorded with it)");
		return 2;
	}
	if (krec_check_events(r->kopts.events, r->kopts.nevents, msg, sizeof(msg)) < 0) {
		cli_error(CMD, "option '-e': %s", msg);
		return 2;
	}
	return 0;
}

/*
 * The checks of a program's recording: -b's size, the configuration's
 * syntax and the options' (rec_opts_check()), where libktrace is.
 * Return: 0, or the exit status after one line.
 */
static int check_program_options(struct record *r)
{
	char *cfg_text = NULL;
	size_t cfg_len = 0;
	uint64_t b;
	int c;

	if (r->bufsize && (cli_parse_size(r->bufsize, &b) < 0 || b < 4096 || b > (64ull << 20) ||
			   (b & (b - 1)))) {
		cli_error(CMD, "option '-b' needs a power of two from 4K to 64M, not '%s'", r->bufsize);
		return 2;
	}
	if (r->config && !(cfg_text = read_config(r->config, &cfg_len)))
		return 1;
	c = rec_opts_check(&r->ro, r->config, cfg_text, cfg_len);
	free(cfg_text);
	if (c < 0)
		return 1;
	if (find_lib(r->lib, sizeof(r->lib)) < 0) {
		cli_error(CMD, "cannot find libktrace.so.0 beside the ktrace binary or in ../lib "
			       "(set KTRACE_LIB)");
		return 1;
	}
	return 0;
}

/*
 * DIR made absolute (the program may change directories) and made ready:
 * not the directory of a recording whose consumer died, yours, not a
 * link, empty or an old trace (lib/safefile.h), cleared here, so a
 * refusal stops the command before the program runs; the program's
 * runtime then uses it as it is (it holds DIR/session).
 * Return: 0, or 1 after one line.
 */
static int prepare_dir(struct record *r)
{
	char probe[PATH_MAX + 16];

	if (absolute(r->out, r->dir, sizeof(r->dir)) < 0 ||
	    (r->config && absolute(r->config, r->cfg_abs, sizeof(r->cfg_abs)) < 0)) {
		cli_error(CMD, "%s: path too long", r->out);
		return 1;
	}
	snprintf(probe, sizeof(probe), "%s/session", r->dir);
	if (access(probe, F_OK) == 0) {
		cli_error(CMD, "%s holds a recording whose consumer died (%s): run `ktrace read "
			       "--recover %s` to keep it, or remove the directory",
			  r->dir, probe, r->dir);
		return 1;
	}
	return cli_trace_dir(CMD, r->dir, KSF_CREATE | KSF_TRACE | KSF_CLEAR) < 0 ? 1 : 0;
}

/* Hooks a program may be built with, and what keeps a program from being patched. */
#define REC_HOOKS (REC_BUILD_INST | REC_BUILD_MCOUNT | REC_BUILD_FENTRY | REC_BUILD_PATCHABLE | \
		   REC_BUILD_MCOUNTLOC)
#define REC_UNPATCHABLE (REC_BUILD_STATIC | REC_BUILD_OTHERARCH | REC_BUILD_NOFILE | REC_BUILD_NOTELF)

/*
 * How PROG was built (cli/record_detect.c): a program without hooks gets
 * every function patched at start unless a -P names some (cli/record_patch.c).
 * Then, unless --quiet, one line saying how it is traced and whether its
 * library calls are (lib/kft_plt.c, cli/record_libcall.c); a program
 * that cannot be run is reported when it is run.  Sets @r->untraceable
 * when its own calls cannot be traced.  Return: 0, or 2 (out of memory).
 */
static int detect_build(struct record *r)
{
	char path[PATH_MAX], line[PATH_MAX + 512];
	unsigned b = rec_detect(r->cmd[0], path, sizeof(path));
	int ok, nlib, plain = !(b & (REC_HOOKS | REC_UNPATCHABLE));

	if (plain && !r->patch.main_plus && rec_patch_add(&r->patch, 'P', ".") < 0)
		return 2;
	if ((b & REC_HOOKS) && r->patch.main_plus && !r->quiet)
		cli_error(CMD, "warning: %s has hooks of its own: -P applies to libraries only "
			       "(FUNC@LIB)", r->cmd[0]);
	/* quiet: no line, and no planning of the patches for it (the run does that);
	 * attached (-p): the line comes from the run (record_attached()) */
	if ((b & REC_BUILD_NOFILE) || ((r->quiet || r->attach) && plain))
		return 0;
	if (plain) {
		struct rec_patch_scan ps;

		rec_patch_scan(path, r->patch.spec, &ps);
		ok = rec_patch_line(r->cmd[0], &ps, line, sizeof(line));
	} else {
		ok = rec_detect_line(b, r->cmd[0], line, sizeof(line));
	}
	r->untraceable = !ok;
	if (r->quiet || (r->attach && ok)) /* attached: record_attached() says what it did */
		return 0;
	nlib = ok && r->libcall ? rec_detect_libcalls(path) : -1;
	if (nlib > 0)
		fprintf(stderr, "ktrace record: %s + %d library functions through the PLT%s\n", line,
			nlib,
			(b & (REC_BUILD_INST | REC_BUILD_MCOUNT | REC_BUILD_FENTRY)) || plain
				? ""
				: " when all are patched (no -F/funclist)");
	else
		fprintf(stderr, "ktrace record: %s\n", line);
	return 0;
}

/*
 * LD_PRELOAD for PROG: the user's preloads first (a sanitizer runtime must
 * lead the list), libktrace-record.so.0 (sigaction/signal for KFT's
 * interrupt context, lib/preload/signal.c), with --locks
 * libktrace-locks.so.0 (before libktrace.so.0: its pthread_exit wraps
 * libktrace's), then libktrace.so.0, all from libktrace's directory.
 * Return: 0, or 1 when one is missing (said).
 */
static int make_preload(struct record *r)
{
	const char *old = getenv("LD_PRELOAD");
	char shim[PATH_MAX + 32], lk[PATH_MAX + 32];

	if (beside(r->lib, "libktrace-record.so.0", shim, sizeof(shim)) < 0)
		return 1;
	if (r->locks && beside(r->lib, "libktrace-locks.so.0", lk, sizeof(lk)) < 0)
		return 1;
	snprintf(r->preload, sizeof(r->preload), "%s%s%s:%s%s%s", old ? old : "",
		 old && *old ? ":" : "", shim, r->locks ? lk : "", r->locks ? ":" : "", r->lib);
	return 0;
}

/* In the child: the environment lib/kft_setup.c reads, then exec PROG.  Does not return. */
static void exec_program(struct record *r)
{
	sigaction(SIGINT, &r->old_int, NULL);
	sigaction(SIGQUIT, &r->old_quit, NULL);
	sigaction(SIGCHLD, &r->old_chld, NULL);
	sigaction(SIGUSR2, &r->old_usr2, NULL);
	setenv("LD_PRELOAD", r->preload, 1);
	setenv("KTRACE_SESSION", kc_path(r->sess), 1);
	setenv("KTRACE_RECORD_DIR", r->dir, 1);
	unsetenv("KTRACE_RECORD_IMAGE");
	if (r->config)
		setenv("KTRACE_CONFIG", r->cfg_abs, 1);
	else
		unsetenv("KTRACE_CONFIG");
	if (r->bufsize)
		setenv("KTRACE_BUF_SIZE", r->bufsize, 1);
	if (r->bufnr)
		setenv("KTRACE_BUF_NR", r->bufnr, 1);
	if (r->flight)
		setenv("KTRACE_FLIGHT", "1", 1);
	if (r->threads)
		setenv("KTRACE_THREADS", r->threads, 1);
	if (!r->libcall) /* library calls (lib/kft_plt.c) */
		setenv("KTRACE_LIBCALL", "0", 1);
	if (r->patch.spec) /* run-time patching (lib/kft_dynpatch.c) */
		setenv("KTRACE_PATCH", r->patch.spec, 1);
	else
		unsetenv("KTRACE_PATCH");
	rec_report_child(&r->rep, &r->ro);
	execvp(r->cmd[0], r->cmd);
	fprintf(stderr, "ktrace record: cannot run %s: %s\n", r->cmd[0], strerror(errno));
	_exit(127);
}

/*
 * The session (the consumer's side, consumer/consumer.h) and the kernel
 * recording if asked; record becomes the child subreaper of what PROG
 * starts.  Return: 0, or 1 after one line.
 */
static int start_session(struct record *r)
{
	struct sigaction ign;
	char err[PATH_MAX + 256];
	const char *delay = getenv("KTRACE_TEST_CONSUMER_DELAY_US");

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &r->old_int);
	sigaction(SIGQUIT, &ign, &r->old_quit);
	ign.sa_handler = on_child; /* no SA_RESTART */
	sigaction(SIGCHLD, &ign, &r->old_chld);
	/* SIGUSR2: a dump of the flight recorder; kept to the end (a late one does nothing) */
	ign.sa_handler = on_dump;
	sigaction(SIGUSR2, &ign, &r->old_usr2);
	r->krec = krec_begin_program(r->dir, r->kernel ? &r->kopts : NULL, r->cmd[0]);
	r->sess = kc_create(r->dir, r->flight, CMD, err, sizeof(err));
	if (!r->sess) {
		fprintf(stderr, "%s\n", err);
		krec_end_program(r->krec, r->dir, 0, r->quiet);
		return 1;
	}
	if (delay) /* testing aid: a consumer slowed on purpose */
		kc_set_throttle(r->sess, (unsigned)atoi(delay));
	kc_set_block(r->sess, r->block_ns);
	kc_set_compress(r->sess, r->zon, r->zlevel);
	kick_sess = r->sess;
	rec_dir = r->dir;
	rec_report_open(&r->rep);
	/* processes the program leaves behind are reparented here (child_ended()) */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 && !r->quiet)
		cli_error(CMD, "warning: prctl(PR_SET_CHILD_SUBREAPER): %s: processes that outlive "
			       "their parent may be missed", strerror(errno));
	stop_waiting = 0;
	return 0;
}

/*
 * The consumer: copy full sub-buffers until PROG (@pid) and every process
 * it started have ended, then what is left.  *@status: PROG's wait status.
 * Return: 0, or 1 after one line (the session closed).
 */
static int consume(struct record *r, pid_t pid, int *status)
{
	struct child ch = { pid, 0, 0, 0, r->wait_ns, 0, 0, r->quiet, r->cmd[0] };
	uint64_t end;

	kc_consume(r->sess, child_ended, &ch);
	kick_sess = NULL;
	signal(SIGINT, SIG_IGN); /* (restored below) */
	if (ch.left)
		fprintf(stderr, "ktrace record: warning: stopped waiting for the processes %s left "
				"running: %u still run; what they record from now on is not in the "
				"trace\n",
			r->cmd[0], ch.left);
	if (ch.err) {
		cli_error(CMD, "waitpid: %s", strerror(ch.err));
		kc_close(r->sess, 0);
		return 1;
	}
	*status = ch.status;
	end = kt_clock();
	kc_drain(r->sess, 1);
	kc_finish(r->sess, end);
	sigaction(SIGINT, &r->old_int, NULL);
	sigaction(SIGQUIT, &r->old_quit, NULL);
	sigaction(SIGCHLD, &r->old_chld, NULL);
	return 0;
}

/* After the run: the summary, the kernel recording's end, the exit status (rec_outcome()). */
static int finish(struct record *r, int status)
{
	const struct kc_stats *st = kc_stats(r->sess);
	int other, traced;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !st->channels) {
		kc_close(r->sess, 1);
		krec_end_program(r->krec, r->dir, 0, r->quiet);
		return 1; /* exec failed: already reported */
	}
	if (!r->quiet) {
		struct rusage ru;

		kc_report(r->sess, CMD);
		getrusage(RUSAGE_CHILDREN, &ru);
		fprintf(stderr, "ktrace record: %s: CPU %.2f s, peak memory %.1f MiB\n", r->cmd[0],
			(double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
				((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6,
			(double)ru.ru_maxrss / 1024);
	}
	/* Kernel events, or a channel the program set up itself: PROG need not be instrumented. */
	other = r->krec != NULL || st->channels > 1 || r->locks;
	traced = st->records || st->dropped || st->unfinished ? REC_TRACED : 0;
	kc_close(r->sess, 1);
	krec_end_program(r->krec, r->dir, 1, r->quiet);
	return rec_outcome(&r->rep, r->dir, r->cmd, status,
			   (other ? REC_OTHER_EVENTS | (r->untraceable ? REC_SAID_NO_HOOKS : 0) : 0) |
				   traced,
			   r->quiet);
}

/* ---- -p PID: a running process (cli/record_attach.c) ---- */

/*
 * The program of process @r->attach, as PROG for detect_build(): its
 * executable's path (@exe).  A process of another user is refused, but
 * for root, who becomes that user (rec_attach_become()): its libktrace
 * must be able to open the session and the trace directory.
 * Return: 0, or 1 after one line.
 */
static int attach_target(struct record *r, char *exe, size_t size, char **argv1)
{
	char path[64], line[4096];
	unsigned long uid[4] = { 0 }, gid[4] = { 0 };
	gid_t groups[256];
	int ngroups = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)r->attach);
	f = fopen(path, "re");
	if (!f) {
		cli_error(CMD, "process %d: %s", (int)r->attach,
			  errno == ENOENT ? "no such process" : strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "Uid: %lu %lu %lu %lu", &uid[0], &uid[1], &uid[2], &uid[3]);
		sscanf(line, "Gid: %lu %lu %lu %lu", &gid[0], &gid[1], &gid[2], &gid[3]);
		if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (unsigned long g; ngroups < 256 && (g = strtoul(p, &end, 10), end != p);
			     p = end)
				groups[ngroups++] = (gid_t)g;
		}
	}
	fclose(f);
	if (uid[1] != (unsigned long)geteuid()) {
		char err[256];

		if (geteuid() != 0) {
			cli_error(CMD, "process %d runs as user %lu: attaching to another user's process "
				       "needs root; or run `ktrace record -p` as that user",
				  (int)r->attach, uid[1]);
			return 1;
		}
		/* root: record as the process's owner, whose libktrace writes the session */
		if (rec_attach_become((uid_t)uid[1], (gid_t)gid[1], groups, ngroups, err,
				      sizeof(err)) < 0) {
			cli_error(CMD, "%s", err);
			return 1;
		}
		if (!r->quiet)
			fprintf(stderr, "ktrace record: process %d runs as user %lu: recording as that "
					"user (the trace in %s is that user's)\n",
				(int)r->attach, uid[1], r->out);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)r->attach);
	n = readlink(path, exe, size - 1);
	if (n <= 0) {
		cli_error(CMD, "process %d: %s: %s", (int)r->attach, path, strerror(errno));
		return 1;
	}
	exe[n] = '\0';
	argv1[0] = exe;
	argv1[1] = NULL;
	r->cmd = argv1;
	r->libcall = 0; /* library calls are not hooked in a running process (yet) */
	return 0;
}

/* The settings a started program finds in its environment, "NAME=VALUE\0"... "\0". */
static size_t attach_settings(struct record *r, char *buf, size_t size)
{
	const char *kv[][2] = {
		{ "KTRACE_SESSION", kc_path(r->sess) },
		{ "KTRACE_RECORD_DIR", r->dir },
		{ "KTRACE_CONFIG", r->config ? r->cfg_abs : NULL },
		{ "KTRACE_CONFIG_TEXT", r->ro.text },
		{ "KTRACE_PATCH", r->patch.spec },
		{ "KTRACE_BUF_SIZE", r->bufsize },
		{ "KTRACE_BUF_NR", r->bufnr },
		{ "KTRACE_FLIGHT", r->flight ? "1" : NULL },
		{ "KTRACE_THREADS", r->threads },
		{ "KTRACE_LIBCALL", "0" },
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		int k;

		if (!kv[i][1])
			continue;
		k = snprintf(buf + n, size - n, "%s=%s", kv[i][0], kv[i][1]);
		if (k < 0 || (size_t)k + 2 > size - n)
			return 0;
		n += (size_t)k + 1;
	}
	buf[n++] = '\0';
	return n;
}

struct attached {
	pid_t pid;
	uint64_t until_ns; /* ~0: no --duration */
	int gone;
};

/* kc_consume()'s test while attached: Ctrl-C, --duration over, or the process ended. */
static int attach_ended(void *arg)
{
	struct attached *a = arg;
	char path[64], buf[512], *rp;
	int fd;
	ssize_t n;

	take_dump();
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)a->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	rp = strrchr(buf, ')');
	if (n <= 0 || !rp || rp[2] == 'Z' || rp[2] == 'X') {
		a->gone = 1;
		return 1;
	}
	return stop_waiting || mono_ns() >= a->until_ns;
}

/* While record -p lets the threads run between two tries: make room in their rings. */
static void attach_idle(void *arg)
{
	kc_drain(arg, 0);
}

/* At the detach, every thread stopped and the run too: the last records, the open calls. */
static void attach_stopped(void *arg)
{
	kc_detached(arg, kt_clock());
}

/*
 * `ktrace record -p PID`: attach, consume until Ctrl-C, --duration or the
 * process's end, detach.  Return: the exit status (0: recorded and
 * detached; 1 after one line).
 */
static int record_attached(struct record *r)
{
	static char settings[16384];
	struct rec_attach a = { r->attach, r->lib, settings, 0, attach_idle, attach_stopped, r->sess };
	struct attached at = { r->attach, r->duration_ns ? mono_ns() + r->duration_ns : ~(uint64_t)0, 0 };
	struct rec_attach_result res;
	struct rec_attach_state *st;
	struct sigaction sa, old_term, old_hup;
	sigset_t crit, prev;
	char err[1024];
	int rc = 0;

	/* never leave the process stopped or half patched: no signal ends record meanwhile */
	sigemptyset(&crit);
	sigaddset(&crit, SIGINT);
	sigaddset(&crit, SIGTERM);
	sigaddset(&crit, SIGHUP);
	sigaddset(&crit, SIGQUIT);
	sigprocmask(SIG_BLOCK, &crit, &prev);
	a.len = attach_settings(r, settings, sizeof(settings));
	st = a.len ? rec_attach_start(&a, &res, err, sizeof(err)) : NULL;
	if (!st) {
		sigprocmask(SIG_SETMASK, &prev, NULL);
		cli_error(CMD, "%s", a.len ? err : "settings too long");
		kick_sess = NULL;
		kc_close(r->sess, 1);
		return 1;
	}
	if (!r->quiet) {
		char what[256];

		if (res.hooks)
			snprintf(what, sizeof(what), "its compiled hooks bound to libktrace's (%u GOT "
						     "slots)", res.hooks);
		else
			snprintf(what, sizeof(what), "%u functions patched", res.patched);
		if (res.inside)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 ", %u left alone (a thread was inside their first bytes)", res.inside);
		if (res.adopted)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 ", %u calls open in them followed from now (shown unfinished)",
				 res.adopted);
		if (res.taken_over)
			fprintf(stderr, "ktrace record: process %d: the attach of a ktrace record that "
					"died was undone first\n", (int)r->attach);
		fprintf(stderr, "ktrace record: attached to process %d (%u threads): %s; %s\n",
			(int)r->attach, res.threads, what,
			r->duration_ns ? "recording for --duration" : "Ctrl-C ends the recording");
	}
	/* Ctrl-C, SIGTERM, SIGHUP: detach cleanly */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt; /* no SA_RESTART */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	sigprocmask(SIG_SETMASK, &prev, NULL);
	kc_consume(r->sess, attach_ended, &at);
	kick_sess = NULL;
	sigprocmask(SIG_BLOCK, &crit, NULL);
	if (!at.gone && rec_attach_stop(st, err, sizeof(err)) < 0) {
		cli_error(CMD, "%s", err);
		rc = 1;
	}
	rec_attach_free(st);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigprocmask(SIG_SETMASK, &prev, NULL);
	kc_drain(r->sess, 1);
	kc_finish(r->sess, kt_clock());
	sigaction(SIGINT, &r->old_int, NULL);
	sigaction(SIGQUIT, &r->old_quit, NULL);
	sigaction(SIGCHLD, &r->old_chld, NULL);
	if (!r->quiet) {
		kc_report(r->sess, CMD);
		fprintf(stderr, "ktrace record: %s process %d; trace in %s\n",
			at.gone ? "recorded until the end of" : rc ? "could not detach cleanly from"
								 : "detached from",
			(int)r->attach, r->dir);
	}
	kc_close(r->sess, 1);
	return rc;
}

/* `ktrace record`: options, checks, the build line, the session, PROG, the consumer, the outcome. */
static int run(int argc, char **argv)
{
	static struct record rec; /* large: not on the stack */
	static char exe[PATH_MAX];
	char *argv1[2];
	struct record *r = &rec;
	int rc, status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->out = "ktrace.data";
	r->block_ns = KT_BLOCK_LIVE; /* every call kept: wait while the consumer lives */
	r->zon = 1;                  /* zstd frames: a third of the bytes (docs/PERFORMANCE.md) */
	r->zlevel = KZ_LEVEL_DEFAULT;
	r->wait_ns = ~(uint64_t)0;
	r->rep = (struct rec_report){ -1, -1 };
	/* library calls: on unless --no-libcall or KTRACE_LIBCALL=0 (the runtime's knob) */
	r->libcall = !getenv("KTRACE_LIBCALL") || strcmp(getenv("KTRACE_LIBCALL"), "0") != 0;
	rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, take_option, r);
	if (rc != CLI_OPTS_GO || (rc = check_events(r)) != 0)
		goto out;
	r->libcall = r->libcall && !r->nolibcall;
	if (optind >= argc && r->kernel) {
		/* the whole system until Ctrl-C */
		if (absolute(r->out, r->dir, sizeof(r->dir)) < 0) {
			cli_error(CMD, "%s: path too long", r->out);
			rc = 1;
			goto out;
		}
		r->kopts.progress = !r->quiet;
		rc = krec_record_system(r->dir, &r->kopts, r->quiet);
		goto out;
	}
	if (r->attach || r->duration_ns) {
		rc = attach_options(r, argc);
		if (!rc)
			rc = attach_target(r, exe, sizeof(exe), argv1);
	} else if (optind >= argc) {
		cli_error(CMD, "no program to run (see ktrace record --help)");
		rc = 2;
	} else {
		r->cmd = argv + optind;
	}
	if (!rc)
		rc = check_program_options(r);
	if (!rc)
		rc = prepare_dir(r);
	if (!rc)
		rc = detect_build(r);
	if (!rc)
		rc = make_preload(r);
	if (!rc)
		rc = start_session(r);
	if (rc)
		goto out;
	if (r->attach) {
		rc = record_attached(r);
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_error(CMD, "fork: %s", strerror(errno));
		kick_sess = NULL;
		kc_close(r->sess, 1);
		krec_end_program(r->krec, r->dir, 0, r->quiet);
		rc = 1;
		goto out;
	}
	if (pid == 0)
		exec_program(r);
	rec_report_parent(&r->rep);
	rec_opts_free(&r->ro);
	rec_patch_free(&r->patch);
	krec_program_pid(r->krec, pid);
	return consume(r, pid, &status) ? 1 : finish(r, status);
out:
	rec_opts_free(&r->ro);
	rec_patch_free(&r->patch);
	return rc;
}

KTRACE_COMMAND_OPTS(record, "run a program under the function tracer (-finstrument-functions, -pg, patchable builds)", run, cmd_opts);

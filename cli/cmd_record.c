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
 * waits for it (--block-timeout), then drops records, counted with the
 * time ranges.  When the program has ended, however it ended, and every
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
#include <getopt.h>
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
#include "cli/record_opts.h"
#include "cli/select.h"
#include "consumer/consumer.h"
#include "kclient/kclient.h"
#include "lib/runtime.h"
#include "lib/safefile.h"

#define CMD "record"

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace record [OPTIONS] [--] PROG [ARGS...]\n"
		"       ktrace record --kernel[=MASKSET] [-e SYS:NAME]... [-o DIR]   (whole system until Ctrl-C)\n"
		"\n"
		"Run PROG, built with -finstrument-functions, -pg or -pg -mfentry, under the\n"
		"function tracer (KFT) and record its calls in a trace directory: one record\n"
		"per completed call\n"
		"with entry time, duration, function, call site, thread and depth.\n"
		"libktrace.so and libktrace-record.so are preloaded (LD_PRELOAD); PROG needs\n"
		"no other change.  First it says in one line how PROG was built (from its\n"
		"ELF symbols) and what it will do, or which flag would make it traceable.\n"
		"\n"
		"What to keep (as uftrace's options; FUNC may be a pattern: 'btree*'):\n"
		"  -F, --filter FUNC     only calls of FUNC (repeatable): filter funclist\n"
		"  -N, --notrace FUNC    never calls of FUNC (repeatable): filter notrace\n"
		"  -D, --depth N         only calls less than N deep (1: the outermost)\n"
		"  -t, --time-filter TIME  only calls lasting TIME or more: 100us, 1.5ms, 2s\n"
		"                        (a bare number is microseconds): filter mintime\n"
		"  -T, --trigger FUNC@trace-on|trace-off\n"
		"                        start (stop) recording when FUNC is entered\n"
		"      --config FILE     a KFT configuration: triggers, filters, watches,\n"
		"                        logentries, autorepeat (docs/KFT-CONFIG.md); the\n"
		"                        options above add to it; default: every call\n"
		"\n"
		"Where and how:\n"
		"  -o, --output DIR      trace directory (default ktrace.data): created, or yours\n"
		"                        holding an earlier trace (replaced); not a link\n"
		"  -b, --buf-size BYTES  sub-buffer size, a power of two (default 256K;\n"
		"                        K and M suffixes)\n"
		"  -n, --buf-nr N        sub-buffers in each thread's ring (default 32;\n"
		"                        with --flight 64): every call is kept, the ring\n"
		"                        is copied to DIR as it fills\n"
		"      --flight          flight recorder: keep only the newest calls, in\n"
		"                        the rings (written to DIR when PROG ends)\n"
		"      --block-timeout TIME  when a thread's ring is full (the consumer is\n"
		"                        behind), wait up to TIME for it before dropping\n"
		"                        records (default 100ms; 0: drop at once)\n"
		"      --threads N       thread streams (default 2 x CPUs); more threads\n"
		"                        share one stream\n"
		"      --no-libcall      do not record the program's calls into shared\n"
		"                        libraries (recorded by default, as uftrace does)\n"
		"      --wait TIME       after PROG exits, wait at most TIME (10s, 500ms; 0:\n"
		"                        not at all) for the processes it left running\n"
		"                        (daemons, orphaned children); default: until they\n"
		"                        exit, or Ctrl-C, which stops the waiting (the count\n"
		"                        of those still running is reported)\n"
		"  -q, --quiet           no summary at the end\n"
		"      --kernel[=MASKSET]  also record kernel events through tracefs (root):\n"
		"                        MASKSET is RDEFAULT (default: context switches,\n"
		"                        wakeups, syscalls, irqs, faults, signals, fork/exit),\n"
		"                        RALL, RNOTHING, or a comma list of LKST mnemonics\n"
		"                        and categories (hook: the tracefs hooks of\n"
		"                        ktrace lkst --tracefs hook add); written to DIR/kernel\n"
		"      --kernel-buffer SIZE  kernel ring buffer per CPU (default 4M)\n"
		"  -e, --event SYS:NAME  with --kernel: also enable this tracepoint (repeatable;\n"
		"                        'block:*', 'sched' = 'sched:*'); every event is kept\n"
		"                        raw in DIR/kernel/ftrace for `ktrace export\n"
		"                        --format=trace.dat` (trace-cmd, KernelShark)\n"
		"      --locks           also record PROG's pthread mutex, rwlock, spinlock and\n"
		"                        condition-variable calls (libktrace-locks.so) for\n"
		"                        `ktrace locks DIR`; PROG need not be instrumented\n"
		"  -h, --help            this text\n"
		"\n"
		"While PROG runs: ktrace kft DIR status|start|stop|prime|load FILE.\n"
		"Afterwards: ktrace info, kd, graph FUNC, addr2sym, print (DIR: ktrace.data).\n"
		"\n"
		"Exit status: PROG's (128 + signal number if it was killed); 1 PROG could not\n"
		"be traced (the reason is printed once), a bad configuration or option, or\n"
		"PROG cannot be run; 2 usage error.  See ktrace-record(1).\n");
}

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

/* SIGCHLD ends the consumer's wait, so the end is seen at once. */
static struct kc_session *volatile kick_sess;

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

static int run(int argc, char **argv)
{
	enum { OPT_CONFIG = 0x1000, OPT_FLIGHT, OPT_THREADS, OPT_BLOCK, OPT_LOCKS, OPT_NOLIBCALL, OPT_WAIT };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG }, { "output", required_argument, NULL, 'o' },
		{ "buf-size", required_argument, NULL, 'b' }, { "buf-nr", required_argument, NULL, 'n' },
		{ "flight", no_argument, NULL, OPT_FLIGHT }, { "threads", required_argument, NULL, OPT_THREADS },
		{ "quiet", no_argument, NULL, 'q' },         { "help", no_argument, NULL, 'h' },
		{ "kernel", optional_argument, NULL, 'K' },  { "kernel-buffer", required_argument, NULL, 'B' },
		{ "filter", required_argument, NULL, 'F' },  { "notrace", required_argument, NULL, 'N' },
		{ "depth", required_argument, NULL, 'D' },   { "time-filter", required_argument, NULL, 't' },
		{ "trigger", required_argument, NULL, 'T' },
		{ "block-timeout", required_argument, NULL, OPT_BLOCK },
		{ "event", required_argument, NULL, 'e' },
		{ "locks", no_argument, NULL, OPT_LOCKS },
		{ "no-libcall", no_argument, NULL, OPT_NOLIBCALL },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_opts ro = { NULL, 0, 0, 0, 0, 0 };
	struct rec_report rep = { -1, -1 };
	char *cfg_text = NULL;
	size_t cfg_len = 0;
	const char *config = NULL, *out = "ktrace.data", *bufsize = NULL, *bufnr = NULL,
		   *threads = NULL;
	char lib[PATH_MAX], dir[PATH_MAX], cfg_abs[PATH_MAX], preload[4 * PATH_MAX + 96];
	int flight = 0, quiet = 0, c, status, kernel = 0, locks = 0, libcall, untraceable = 0, traced;
	struct krec_opts kopts = { NULL, 0, 0, NULL, 0 };
	static const char *events[64]; /* -e: pointers into argv */
	struct krec *krec = NULL;
	uint64_t v, end, block_ns = 100000000, /* 100 ms */
		 wait_ns = ~(uint64_t)0;      /* --wait: until they exit */
	pid_t pid;
	struct sigaction ign, old_int, old_quit, old_chld;
	struct kc_session *sess;

	/* library calls: on unless --no-libcall or KTRACE_LIBCALL=0 (the runtime's knob) */
	libcall = !getenv("KTRACE_LIBCALL") || strcmp(getenv("KTRACE_LIBCALL"), "0") != 0;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, "+:o:b:n:qhF:N:D:t:T:e:", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
		case 'N':
		case 'D':
		case 't':
		case 'T':
			if (rec_opts_add(&ro, c, optarg) < 0) {
				rec_opts_free(&ro);
				return 2;
			}
			break;
		case OPT_CONFIG:
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
		case OPT_FLIGHT:
			flight = 1;
			break;
		case OPT_NOLIBCALL:
			libcall = 0;
			break;
		case OPT_THREADS:
			if (cli_parse_u64(optarg, &v) < 0 || v < 1 || v > 4096) {
				cli_error(CMD, "option '--threads' needs a number of threads 1..4096, not '%s'",
					  optarg);
				return 2;
			}
			threads = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_LOCKS:
			locks = 1;
			break;
		case OPT_WAIT:
			if (cli_parse_time(optarg, 1000000, &wait_ns) < 0) {
				cli_error(CMD, "option '--wait' needs a time such as 10s, 500ms or 0, not '%s'",
					  optarg);
				return 2;
			}
			break;
		case OPT_BLOCK:
			if (cli_parse_time(optarg, 1000000, &block_ns) < 0) {
				cli_error(CMD, "option '--block-timeout' needs a time such as 100ms, 2s or 0, not '%s'",
					  optarg);
				return 2;
			}
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
		case 'e':
			if (kopts.nevents == sizeof(events) / sizeof(events[0])) {
				cli_error(CMD, "option '-e': at most %zu (use patterns: 'block:*')",
					  sizeof(events) / sizeof(events[0]));
				return 2;
			}
			events[kopts.nevents++] = optarg;
			kopts.events = events;
			break;
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
	if (kopts.nevents) {
		char msg[512];

		if (!kernel) {
			cli_error(CMD, "option '-e' needs --kernel (kernel tracepoints are recorded with it)");
			return 2;
		}
		if (krec_check_events(kopts.events, kopts.nevents, msg, sizeof(msg)) < 0) {
			cli_error(CMD, "option '-e': %s", msg);
			return 2;
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
	if (config && !(cfg_text = read_config(config, &cfg_len)))
		return 1;
	c = rec_opts_check(&ro, config, cfg_text, cfg_len);
	free(cfg_text);
	if (c < 0) {
		rec_opts_free(&ro);
		return 1;
	}
	if (find_lib(lib, sizeof(lib)) < 0) {
		cli_error(CMD, "cannot find libktrace.so.0 beside the ktrace binary or in ../lib "
			       "(set KTRACE_LIB)");
		return 1;
	}
	if (absolute(out, dir, sizeof(dir)) < 0 || (config && absolute(config, cfg_abs, sizeof(cfg_abs)) < 0)) {
		cli_error(CMD, "%s: path too long", out);
		return 1;
	}
	{
		char probe[PATH_MAX + 16];

		snprintf(probe, sizeof(probe), "%s/session", dir);
		if (access(probe, F_OK) == 0) {
			cli_error(CMD, "%s holds a recording whose consumer died (%s): run `ktrace read "
				       "--recover %s` to keep it, or remove the directory",
				  dir, probe, dir);
			return 1;
		}
	}
	/* yours, not a link, empty or an old trace (lib/safefile.h): checked and
	 * cleared here, so a refusal stops the command before the program runs;
	 * the program's runtime then uses it as it is (it holds DIR/session) */
	if (cli_trace_dir(CMD, dir, KSF_CREATE | KSF_TRACE | KSF_CLEAR) < 0)
		return 1;
	if (!quiet) {
		/* how the program was built, in one line (cli/record_detect.c),
		 * once the options and DIR are accepted */
		char path[PATH_MAX], line[PATH_MAX + 256];

		unsigned b = rec_detect(argv[optind], path, sizeof(path));

		/* (a program that cannot be run is reported when it is run) */
		if (!(b & REC_BUILD_NOFILE)) {
			int ok = rec_detect_line(b, argv[optind], line, sizeof(line)), nlib;

			untraceable = !ok;

			/* library calls (lib/kft_plt.c, cli/record_libcall.c) */
			nlib = ok && libcall ? rec_detect_libcalls(path) : -1;
			if (nlib > 0)
				fprintf(stderr, "ktrace record: %s + %d library functions through the PLT%s\n",
					line, nlib,
					(b & (REC_BUILD_INST | REC_BUILD_MCOUNT | REC_BUILD_FENTRY)) ? ""
					 : " when all are patched (no -F/funclist)");
			else
				fprintf(stderr, "ktrace record: %s\n", line);
		}
	}
	{
		/* The user's preloads first: a sanitizer runtime must lead the list. */
		const char *old = getenv("LD_PRELOAD");

		char shim[PATH_MAX + 32], lk[PATH_MAX + 32];

		/* libktrace-record.so.0 (sigaction/signal for KFT's interrupt
		 * context, lib/preload/signal.c) lives beside libktrace.so.0 */
		if (beside(lib, "libktrace-record.so.0", shim, sizeof(shim)) < 0)
			return 1;
		snprintf(preload, sizeof(preload), "%s%s%s:%s", old ? old : "", old && *old ? ":" : "", shim, lib);
		if (locks) {
			/* libktrace-locks.so.0 too, before libktrace.so.0 (its
			 * pthread_exit wraps libktrace's) */
			if (beside(lib, "libktrace-locks.so.0", lk, sizeof(lk)) < 0)
				return 1;
			snprintf(preload, sizeof(preload), "%s%s%s:%s:%s", old ? old : "",
				 old && *old ? ":" : "", shim, lk, lib);
		}
	}
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	ign.sa_handler = on_child; /* no SA_RESTART */
	sigaction(SIGCHLD, &ign, &old_chld);
	krec = krec_begin_program(dir, kernel ? &kopts : NULL, argv[optind]);
	{
		char err[PATH_MAX + 256];
		const char *delay = getenv("KTRACE_TEST_CONSUMER_DELAY_US");

		sess = kc_create(dir, flight, CMD, err, sizeof(err));
		if (!sess) {
			fprintf(stderr, "%s\n", err);
			krec_end_program(krec, dir, 0, quiet);
			return 1;
		}
		if (delay) /* testing aid: a consumer slowed on purpose */
			kc_set_throttle(sess, (unsigned)atoi(delay));
		kc_set_block(sess, block_ns);
		kick_sess = sess;
	}
	rec_report_open(&rep);
	/* processes the program leaves behind are reparented here (child_ended()) */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 && !quiet)
		cli_error(CMD, "warning: prctl(PR_SET_CHILD_SUBREAPER): %s: processes that outlive "
			       "their parent may be missed", strerror(errno));
	stop_waiting = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_error(CMD, "fork: %s", strerror(errno));
		kick_sess = NULL;
		kc_close(sess, 1);
		krec_end_program(krec, dir, 0, quiet);
		return 1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGCHLD, &old_chld, NULL);
		setenv("LD_PRELOAD", preload, 1);
		setenv("KTRACE_SESSION", kc_path(sess), 1);
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
		if (!libcall) /* library calls (lib/kft_plt.c) */
			setenv("KTRACE_LIBCALL", "0", 1);
		rec_report_child(&rep, &ro);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "ktrace record: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	rec_report_parent(&rep);
	rec_opts_free(&ro);
	krec_program_pid(krec, pid);
	/* The consumer: copy full sub-buffers until the program ends. */
	{
		struct child ch = { pid, 0, 0, 0, wait_ns, 0, 0, quiet, argv[optind] };

		kc_consume(sess, child_ended, &ch);
		kick_sess = NULL;
		signal(SIGINT, SIG_IGN); /* (restored below) */
		if (ch.left)
			fprintf(stderr, "ktrace record: warning: stopped waiting for the processes %s "
					"left running: %u still run; what they record from now on is not "
					"in the trace\n",
				argv[optind], ch.left);
		if (ch.err) {
			cli_error(CMD, "waitpid: %s", strerror(ch.err));
			kc_close(sess, 0);
			return 1;
		}
		status = ch.status;
	}
	end = kt_clock();
	kc_drain(sess, 1);
	kc_finish(sess, end);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !kc_stats(sess)->channels) {
		kc_close(sess, 1);
		krec_end_program(krec, dir, 0, quiet);
		return 1; /* exec failed: already reported */
	}
	if (!quiet) {
		struct rusage ru;

		kc_report(sess, CMD);
		getrusage(RUSAGE_CHILDREN, &ru);
		fprintf(stderr, "ktrace record: %s: CPU %.2f s, peak memory %.1f MiB\n", argv[optind],
			(double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
				((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6,
			(double)ru.ru_maxrss / 1024);
	}
	/* Kernel events, or a channel the program set up itself: PROG need not be instrumented. */
	kernel = krec != NULL || kc_stats(sess)->channels > 1 || locks;
	{
		const struct kc_stats *st = kc_stats(sess);

		traced = st->records || st->dropped || st->unfinished ? REC_TRACED : 0;
	}
	kc_close(sess, 1);
	krec_end_program(krec, dir, 1, quiet);
	return rec_outcome(&rep, dir, argv + optind, status,
			   (kernel ? REC_OTHER_EVENTS | (untraceable ? REC_SAID_NO_HOOKS : 0) : 0) | traced,
			   quiet);
}

KTRACE_COMMAND(record, "run a program under the function tracer (-finstrument-functions, -pg, patchable builds)", run, help);

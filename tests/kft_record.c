/*
 * tests/kft_record.c - the function tracer end to end: `ktrace record` on a
 * program built with -finstrument-functions (tests/kft/calltree.c, compiled
 * here with cc), each trigger and filter, signal handlers, threads,
 * longjmp, fork, exit inside calls, stack watches and bad configurations.
 *
 * Records are read back with the reader library and decoded by hand from
 * the CALL layout (docs/FORMAT.md, "Function call records") and the
 * trace's callsites file; the program writes its functions' addresses to a
 * file (KFT_SYMS) so records can be named without a symbolizer.
 *
 * Nothing here asserts a duration: the program's slow() spins 20 ms and the
 * time thresholds are far from it (10 ms, 5 ms, or 200 ms into a 300 ms
 * spin), so only the order of magnitude matters.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reader/reader.h"
#include "tap.h"
#include "sanitizers.h"

static char tmp[256], prog[512], ktrace[512];

struct call {
	char name[32];
	uint64_t fn, site, exit_raw, dur;
	unsigned depth, sig, flags, words;
	uint32_t tid, pid;
};

static struct call calls[4096];
static int ncalls;
static struct {
	uint64_t addr;
	char name[32];
} syms[64];
static int nsyms;

static void load_syms(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[128];

	nsyms = 0;
	if (!f)
		return;
	while (nsyms < 64 && fgets(line, sizeof(line), f)) {
		unsigned long long a;

		if (sscanf(line, "%llx %31s", &a, syms[nsyms].name) == 2)
			syms[nsyms++].addr = a;
	}
	fclose(f);
}

static const char *sym_name(uint64_t addr)
{
	for (int i = 0; i < nsyms; i++)
		if (syms[i].addr == addr)
			return syms[i].name;
	return "?";
}

static uint64_t sym_addr(const char *name)
{
	for (int i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name))
			return syms[i].addr;
	return 0;
}

/* Run `ktrace record` with CONFIG text (NULL: none) on calltree MODE. Return: exit status. */
static int record(const char *config, const char *args, const char *extra)
{
	char cmd[8192], cfg[300] = "";

	if (config) {
		FILE *f;

		snprintf(cfg, sizeof(cfg), "%s/kft.conf", tmp);
		f = fopen(cfg, "w");
		if (!f)
			bail_out("cannot write %s", cfg);
		fputs(config, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd),
		 "cd %s && KFT_SYMS=%s/syms %s record -q -b 64K -n 16 -o %s/trace %s%s %s -- %s %s "
		 "2>%s/stderr",
		 tmp, tmp, ktrace, tmp, config ? "--config " : "", cfg, extra ? extra : "", prog, args, tmp);
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *name)
{
	static char buf[16384];
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Read back every CALL record of the last trace, in merged time order. */
static void load_calls(void)
{
	char path[512];
	struct ktr_trace *t;
	struct ktr_rec r;
	const struct ktrace_callsites *cs = NULL;
	const struct ktrace_callsite *ent = NULL;
	size_t cs_size = 0;
	int fd;

	ncalls = 0;
	snprintf(path, sizeof(path), "%s/syms", tmp);
	load_syms(path);
	snprintf(path, sizeof(path), "%s/trace/callsites", tmp);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		struct stat sb;

		if (fstat(fd, &sb) == 0 && sb.st_size >= 64) {
			cs_size = (size_t)sb.st_size;
			cs = mmap(NULL, cs_size, PROT_READ, MAP_SHARED, fd, 0);
			if (cs == MAP_FAILED)
				cs = NULL;
			else
				ent = (const struct ktrace_callsite *)((const char *)cs + cs->hdr_size);
		}
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/trace", tmp);
	t = ktr_open(path);
	while (t && ncalls < 4096 && ktr_next(t, &r) == 1) {
		struct call *c;
		uint32_t idx;

		if (r.kind != KTR_RECORD || r.cls != KTRACE_CLASS_CALL)
			continue;
		c = &calls[ncalls++];
		memset(c, 0, sizeof(*c));
		idx = KTRACE_CALL_SITE(r.id, r.w[0]);
		c->words = r.nwords;
		c->dur = KTRACE_CALL_DUR_LO(r.w[0]) | (r.nwords >= 2 ? r.w[1] << 32 : 0);
		c->depth = KTRACE_CALL_DEPTH(r.w[0]);
		c->sig = KTRACE_CALL_SIG(r.w[0]);
		c->flags = KTRACE_CALL_FLAGS(r.w[0]);
		c->exit_raw = r.raw;
		c->tid = r.tid;
		c->pid = r.pid;
		if (idx == KTRACE_CALLSITE_NONE && r.nwords >= 4) {
			c->fn = r.w[2];
			c->site = r.w[3];
		} else if (cs && idx < cs->capacity && 64 + (idx + 1) * 16 <= cs_size) {
			c->fn = ent[idx].func;
			c->site = ent[idx].site;
		}
		snprintf(c->name, sizeof(c->name), "%s", sym_name(c->fn));
	}
	ktr_close(t);
	if (cs)
		munmap((void *)cs, cs_size);
}

/* "name[depth][U][W][!]" of every call, exit order. */
static const char *list(void)
{
	static char buf[8192];
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < ncalls && n < sizeof(buf) - 64; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s%u%s%s%s", i ? " " : "",
				      calls[i].name, calls[i].depth,
				      calls[i].flags & KTRACE_CALLF_UNFINISHED ? "U" : "",
				      calls[i].flags & KTRACE_CALLF_WATCH ? "W" : "",
				      calls[i].sig ? "!" : "");
	return buf;
}

static int count(const char *name)
{
	int n = 0;

	for (int i = 0; i < ncalls; i++)
		n += !strcmp(calls[i].name, name);
	return n;
}

static void test_tree(void)
{
	int ok16 = 1;

	is_int(record(NULL, "tree", NULL), 0, "record: every call of the tree");
	load_calls();
	is_str(list(), "fast4 slow3 fast3 fast3 fast3 outer2 run_tree1 main0",
	       "each completed call once, in exit order, with its depth");
	for (int i = 0; i < ncalls; i++)
		ok16 &= calls[i].words == 1;
	ok(ok16 && ncalls == 8, "every call is one 16-byte record (header + 1 word)");
	{
		uint64_t rt = sym_addr("run_tree");
		int k;

		for (k = 0; k < ncalls && strcmp(calls[k].name, "outer"); k++)
			;
		ok(k < ncalls && calls[k].site > rt && calls[k].site - rt < 64,
		   "outer's call site lies in run_tree (run_tree+0x%llx)",
		   k < ncalls ? (unsigned long long)(calls[k].site - rt) : 0ull);
		for (k = 0; k < ncalls && strcmp(calls[k].name, "slow"); k++)
			;
		ok(k < ncalls && calls[k].dur > 0 && calls[ncalls - 1].dur > calls[k].dur,
		   "durations nest: main lasts longer than slow");
	}
	ok(strstr(slurp("trace/kft-status"), "stopped: ") &&
		   strstr(slurp("trace/kft-status"), "by program end\n") &&
		   strstr(slurp("trace/kft-status"), "entries kept: 8\n"),
	   "kft-status: stopped at program end, 8 kept");
}

static void test_filters(void)
{
	record("filter mintime 10000\n", "tree", NULL);
	load_calls();
	is_str(list(), "slow3 outer2 run_tree1 main0", "mintime 10 ms: the 20 ms call and its callers");
	ok(strstr(slurp("trace/kft-status"), "entries filtered: 4 (ints 0, funclist 0, mintime 4, maxtime 0)") != NULL,
	   "mintime counted 4 filtered calls");

	record("filter maxtime 10000\n", "tree", NULL);
	load_calls();
	is_str(list(), "fast4 fast3 fast3 fast3", "maxtime 10 ms: only the short calls");

	record("filter funclist slow fast fend\n", "tree", NULL);
	load_calls();
	is_str(list(), "fast4 slow3 fast3 fast3 fast3", "funclist by names (resolved in the program)");
	ok(strstr(slurp("trace/kft-status"),
		  "entries filtered: 3 (ints 0, funclist 3, mintime 0, maxtime 0)") != NULL,
	   "funclist: the 3 unlisted calls counted as filtered (dropped at their entry, untimed)");
	record("filter noints\nfilter funclist fast fend\n", "signal", NULL);
	load_calls();
	is_str(list(), "fast2", "noints and funclist: the thread's fast only");
	ok(strstr(slurp("trace/kft-status"),
		  "entries filtered: 5 (ints 3, funclist 2, mintime 0, maxtime 0)") != NULL,
	   "noints counts the handler's calls, listed or not; funclist the thread's unlisted");

	record("filter onlyints\n", "signal", NULL);
	load_calls();
	is_str(list(), "fast3! in_handler2! handler1!", "onlyints: the signal handler's calls, marked");
	is_int(record("filter noints\n", "signal", NULL), 0, "the sigaction wrapper is invisible to the program");
	load_calls();
	is_str(list(), "fast2 slow1 main0", "noints: the handler's calls dropped");

	record("logentries 2\n", "tree", NULL);
	load_calls();
	is_str(list(), "fast4 slow3", "logentries 2: two records");
	ok(strstr(slurp("trace/kft-status"), "stopped: ") && strstr(slurp("trace/kft-status"), "by logentries\n"),
	   "stopped by logentries");
}

static void test_triggers(void)
{
	record("trigger start entry outer\ntrigger stop exit outer\n", "tree", NULL);
	load_calls();
	is_str(list(), "fast4 slow3 fast3 fast3 fast3 outer2", "start entry / stop exit outer: outer's subtree");

	record("trigger stop entry slow\n", "tree", NULL);
	load_calls();
	is_str(list(), "slow3U outer2U run_tree1U main0U",
	       "stop entry slow: the open calls, unfinished (KFT's Delta 0)");

	record("trigger start exit slow\n", "tree", NULL);
	load_calls();
	is_str(list(), "fast3 fast3 fast3", "start exit slow: calls entered afterwards");

	record("trigger start entry fast\ntrigger stop exit fast\nautorepeat\n", "tree", NULL);
	load_calls();
	is_str(list(), "fast4 fast3 fast3 fast3", "autorepeat: every fast, one run each");
	ok(strstr(slurp("trace/kft-status"), "run: 4\n") != NULL, "four runs");

	record("trigger start entry run_tree\ntrigger stop time 5000\n", "tree", NULL);
	load_calls();
	is_str(list(), "slow3U outer2U run_tree1U",
	       "stop time 5 ms after run_tree: slow (20 ms) was open at the stop");
	ok(strstr(slurp("trace/kft-status"), "by time\n") != NULL, "stopped by time");

	record("trigger start time 200000\n", "late", NULL);
	load_calls();
	is_str(list(), "fast4 slow3 fast3 fast3 fast3 outer2 run_tree1",
	       "start time 200 ms (main spins 300 ms first): all but main, entered before it");
	ok(strstr(slurp("trace/kft-status"), "started: 200000 us by time\n") != NULL,
	   "started at the trigger time");
}

static void test_contexts(void)
{
	uint32_t tids[8];
	int ntid = 0, complete = 1;

	is_int(record(NULL, "threads 4", NULL), 0, "four threads");
	load_calls();
	for (int i = 0; i < ncalls; i++) {
		int k;

		for (k = 0; k < ntid && tids[k] != calls[i].tid; k++)
			;
		if (k == ntid && ntid < 8)
			tids[ntid++] = calls[i].tid;
	}
	is_int(ntid, 5, "calls from 5 threads (main and 4 workers)");
	for (int k = 0; k < ntid; k++) {
		int w = 0, f = 0;

		for (int i = 0; i < ncalls; i++) {
			if (calls[i].tid != tids[k])
				continue;
			if (!strcmp(calls[i].name, "worker"))
				w += calls[i].depth == 0;
			if (!strcmp(calls[i].name, "fast"))
				f += calls[i].depth == 1;
		}
		if (!(w == 1 && f == 100) && !(w == 0 && f == 0))
			complete = 0;
	}
	ok(complete && count("worker") == 4 && count("fast") == 400,
	   "every thread's calls are complete: worker at depth 0, 100 fast at depth 1");

	record(NULL, "longjmp", NULL);
	load_calls();
	is_str(list(), "deeper3U deep2U fast2 jumper1 fast1 main0",
	       "longjmp: the skipped calls are unfinished, the rest complete");

	record(NULL, "inline", NULL);
	load_calls();
	is_str(list(), "fast3 inlined2 fast3 inlined2 inliner1 main0",
	       "a call inlined into its caller is not mistaken for a longjmp");

	record(NULL, "exit", NULL);
	load_calls();
	is_str(list(), "fast3 exit_inside2U exiter1U main0U", "exit() inside calls: the open calls unfinished");

	is_int(record(NULL, "fork", NULL), 0, "fork");
	load_calls();
	{
		uint32_t cpid = 0, ppid = 0;

		for (int i = 0; i < ncalls; i++) {
			if (!strcmp(calls[i].name, "child_work"))
				cpid = calls[i].pid;
			if (!strcmp(calls[i].name, "parent_work"))
				ppid = calls[i].pid;
		}
		ok(count("child_work") == 1 && count("parent_work") == 1 && cpid && ppid && cpid != ppid,
		   "the forked child's calls are in the trace, with its own pid (%u, parent %u)", cpid, ppid);
	}

	record("watch stack 100000000\nfilter mintime 1000000\n", "recurse 20", NULL);
	load_calls();
	{
		int all_w = ncalls == 21;

		for (int i = 0; i < ncalls; i++)
			all_w &= (calls[i].flags & KTRACE_CALLF_WATCH) != 0;
		ok(all_w, "stack watch: every call kept despite mintime, marked watch (%d calls)", ncalls);
	}
	ok(strstr(slurp("trace/kft-status"), "lowest stack: ") &&
		   !strstr(slurp("trace/kft-status"), "lowest stack: -"),
	   "status shows the lowest stack seen");
}

/* Run a shell command; return its exit status and keep its stdout in tmp/out. */
static int sh(const char *fmt, const char *arg)
{
	char cmd[4096], line[1024];
	int st;

	snprintf(line, sizeof(line), fmt, arg);
	snprintf(cmd, sizeof(cmd), "cd %s && %s >%s/out 2>%s/err", tmp, line, tmp, tmp);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The number after "KEY: " in the last trace's kft-status, or -1. */
static long long status_num(const char *key)
{
	const char *text = slurp("trace/kft-status"), *p = strstr(text, key);

	return p && p[strlen(key)] == ':' ? strtoll(p + strlen(key) + 1, NULL, 10) : -1;
}

/*
 * Calls made by signal handlers that interrupted a hook cannot be traced;
 * each must be counted.  The program counts the calls its handler made
 * (independently of ktrace): those recorded plus those counted as missed
 * must be all of them.
 */
static void test_signal_storm(void)
{
	long long made, missed;
	int kept;

	is_int(record("filter funclist sig_leaf fend\n", "sigstorm 3000", NULL), 0,
	       "sigstorm: 3000 signals while main is mostly inside the hooks");
	load_calls();
	made = strtoll(slurp("made"), NULL, 10);
	missed = status_num("entries missed in signal handlers");
	kept = count("sig_leaf");
	is_int((int)made, 3000, "the handler made 3000 calls (its own count)");
	ok(missed > 0, "some interrupted a hook: %lld counted as missed (%d recorded)", missed, kept);
	is_int((int)(kept + missed), (int)made, "recorded + missed = made: no call vanishes uncounted");
	ok(sh("%s kd trace", ktrace) == 0 &&
		   strstr(slurp("err"), "/kft: warning: ") &&
		   strstr(slurp("err"), " made by signal handlers that interrupted a hook were not recorded"),
	   "kd reports the missed calls on stderr");
	sh("%s print trace", ktrace);
	ok(strstr(slurp("err"), " made by signal handlers that interrupted a hook were not recorded") != NULL,
	   "print reports them too");
	sh("%s record -o trace --config kft.conf -- ./calltree sigstorm 300", ktrace);
	ok(strstr(slurp("err"), "ktrace record: entries missed in signal handlers: ") != NULL,
	   "record's summary shows the count");
}

/* The dynamic run: drive a running program with `ktrace kft DIR ...`. */
static void test_dynamic(void)
{
	char cmd[4096], path[512];
	pid_t pid;
	int st, waited = 0;

	snprintf(path, sizeof(path), "%s/go", tmp);
	unlink(path);
	snprintf(cmd, sizeof(cmd), "%s/never.conf", tmp);
	{
		FILE *f = fopen(cmd, "w");

		if (!f)
			bail_out("cannot write %s", cmd);
		fputs("trigger start time 100000000\n", f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "cd %s && exec %s record -q -b 64K -n 16 --config never.conf -o %s/dyn -- %s loop %s",
		 tmp, ktrace, tmp, prog, path);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* Wait for the program to set its run up (no timing: poll for the file). */
	snprintf(cmd, sizeof(cmd), "%s/dyn/kft-status", tmp);
	while (access(cmd, R_OK) != 0 && waited++ < 3000)
		usleep(10000);
	ok(access(cmd, R_OK) == 0, "dynamic: the program's run is up");

	is_int(sh("%s kft dyn status", ktrace), 0, "kft status");
	ok(strstr(slurp("out"), "state: primed\n") && strstr(slurp("out"), "trigger start time 100000000"),
	   "primed, waiting for its start time");
	is_int(sh("%s kft dyn start", ktrace), 0, "kft start");
	sh("%s kft dyn", ktrace);
	ok(strstr(slurp("out"), "state: running\n") && strstr(slurp("out"), "by command\n"),
	   "running, started by command");
	{
		FILE *f;

		snprintf(path, sizeof(path), "%s/slow.conf", tmp);
		f = fopen(path, "w");
		fputs("filter funclist slow fend\nprime\n", f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/bad.conf", tmp);
		f = fopen(path, "w");
		fputs("filter mintime 10\ntrigger start entry no_such\n", f);
		fclose(f);
	}
	is_int(sh("%s kft dyn load slow.conf", ktrace), 0, "kft load: a name resolved in the live program");
	sh("%s kft dyn", ktrace);
	ok(strstr(slurp("out"), "state: running\n") && strstr(slurp("out"), "filter funclist slow fend\n"),
	   "new configuration running, funclist shown by name");
	is_int(sh("%s kft dyn load bad.conf", ktrace), 1, "kft load of a bad configuration fails");
	ok(strstr(slurp("err"), "bad.conf:2:21: unknown function 'no_such'") != NULL,
	   "with line:column");
	sh("%s kft dyn", ktrace);
	ok(strstr(slurp("out"), "state: running\n") != NULL, "and the run goes on");
	is_int(sh("%s kft dyn stop", ktrace), 0, "kft stop");
	is_int(sh("%s kft dyn stop", ktrace), 1, "stopping a stopped run is refused");
	ok(strstr(slurp("err"), "the run is stopped: cannot stop") != NULL, "saying why");
	is_int(sh("%s kft dyn frobnicate", ktrace), 2, "unknown command: usage error");
	is_int(sh("%s kft nosuchdir", ktrace), 1, "missing trace: error");

	snprintf(path, sizeof(path), "%s/go", tmp);
	close(open(path, O_WRONLY | O_CREAT, 0600));
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the program ran to its end");
	sh("%s kft dyn", ktrace);
	ok(strstr(slurp("out"), "(ended)") && strstr(slurp("out"), "stopped: ") &&
		   strstr(slurp("out"), "by command\n") && strstr(slurp("out"), "funclist "),
	   "status after the end: stopped by command, funclist counted");
}

static void test_bad_configs(void)
{
	is_int(record("filter mintime 500\nfrobnicate\n", "tree", NULL), 1, "syntax error: not run");
	ok(strstr(slurp("stderr"), "kft.conf:2:1: unknown keyword 'frobnicate'") != NULL,
	   "syntax error reported with line:column");
	is_int(record("filter funclist fast\n", "tree", NULL), 1, "missing fend refused");
	ok(strstr(slurp("stderr"), "kft.conf:2:1: expected 'fend' to close the funclist begun at 1:8") != NULL,
	   "missing fend reported with line:column");
	is_int(record("trigger start entry no_such_function\n", "tree", NULL), 1,
	       "unknown function: the program runs untraced, record exits 1");
	ok(strstr(slurp("stderr"), "was not traced: ") &&
		   strstr(slurp("stderr"), "kft.conf:1:21: unknown function 'no_such_function'\n") &&
		   !strstr(slurp("stderr"), "ktrace: ktrace:"),
	   "unknown function reported once with line:column");
	load_calls();
	is_int(ncalls, 0, "and nothing was traced");
	ok(strstr(slurp("trace/kft-status"), "error: ") != NULL, "kft-status names the error");
	is_int(record(NULL, "tree", "-b 1000"), 2, "bad option value: usage error");
}

int main(void)
{
	/* the programs' own calls: library calls (on by default) are tests/kft_plt.sh's */
	setenv("KTRACE_LIBCALL", "0", 1);
	const char *build = getenv("KTRACE_BUILD"), *src = getenv("KTRACE_SRC");
	char cmd[2048];

	if (!build || !src)
		bail_out("KTRACE_BUILD and KTRACE_SRC must be set (run through make test)");
	snprintf(tmp, sizeof(tmp), "/tmp/kft_record.XXXXXX");
	if (!mkdtemp(tmp))
		bail_out("mkdtemp: %s", strerror(errno));
	snprintf(prog, sizeof(prog), "%s/calltree", tmp);
	snprintf(ktrace, sizeof(ktrace), "%s/ktrace", build);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -finstrument-functions -pthread -o %s %s/tests/kft/calltree.c",
		 prog, src);
	if (system(cmd) != 0)
		bail_out("cannot compile tests/kft/calltree.c with cc -finstrument-functions");
	preload_sanitizers(build);

	test_tree();
	test_filters();
	test_triggers();
	test_contexts();
	test_signal_storm();
	test_dynamic();
	test_bad_configs();

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (!tap_failed)
		system(cmd);
	else
		diag("traces left in %s", tmp);
	return done_testing();
}

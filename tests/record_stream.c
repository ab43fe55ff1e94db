/*
 * tests/record_stream.c - the streaming recorder (issue 10): `ktrace record`
 * as the consumer of rings in /dev/shm (consumer/consumer.h).
 *
 *   - a run of 100M calls kept whole with rings of 1 MiB;
 *   - a consumer slowed on purpose: with --block-timeout=0 the records it
 *     could not take are dropped, written + dropped = attempted exactly, and
 *     the drops are shown; by default the writers wait for it instead;
 *   - SIGKILL of the program at 20 random moments: every call the program
 *     saw return is in the trace, and the calls open at the kill are there
 *     as unfinished;
 *   - SIGSEGV and abort() at depth 100: the 101 open calls are unfinished;
 *   - a recursion 100000 deep (beyond the old 65536-frame shadow stack):
 *     every call kept, none lost uncounted;
 *   - the engine's clock rate: `-t 1ms` keeps 2500 us calls and drops
 *     400 us ones, and the run's stop time fits the wall time;
 *   - SIGKILL of `ktrace record` itself, then `ktrace read --recover`;
 *   - a stopped consumer makes the program wait, a killed one lets it end;
 *   - flight mode keeps the newest calls, logentries still caps a run, a
 *     program's own channel (ktrace_setup) is streamed too;
 *   - nothing is left in /dev/shm (of this test's sessions: the program
 *     logs each, so recordings by others on the machine do not count).
 *
 * The expected numbers come from the traced program (tests/kft/stream.c:
 * N calls of leaf(), a shared counter of the calls that returned) and the
 * traces are read by tests/walk.h, an independent walker of the format,
 * with the call-site table decoded here: not by ktrace's reader.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "sanitizers.h"
#include "walk.h"

static char *tmp;
static char prog[4200], ktrace[4200], example[4200];
static uint64_t a_leaf, a_loop, a_deep, a_main;

/* Counts of one trace, by function. */
struct counts {
	uint64_t leaf, loop, deep, main, other;
	uint64_t unf_leaf, unf_loop, unf_deep, unf_main; /* flagged unfinished */
	uint64_t deep_depth_max;                         /* of unfinished deep() */
	const struct ktrace_callsite *cs;
	uint64_t ncs;
};

static void count_rec(const struct walk_rec *r, void *arg)
{
	struct counts *c = arg;
	uint64_t w0 = r->payload[0], fn = 0;
	uint32_t site;
	int unf;

	if (KTRACE_REC_CLASS(r->hdr) != KTRACE_CLASS_CALL) {
		c->other++;
		return;
	}
	site = KTRACE_CALL_SITE(KTRACE_REC_ID(r->hdr), w0);
	if (site == KTRACE_CALLSITE_NONE)
		fn = r->payload[2];
	else if (site < c->ncs)
		fn = c->cs[site].func;
	unf = (KTRACE_CALL_FLAGS(w0) & KTRACE_CALLF_UNFINISHED) != 0;
	if (fn == a_leaf) {
		c->leaf++;
		c->unf_leaf += unf;
	} else if (fn == a_loop) {
		c->loop++;
		c->unf_loop += unf;
	} else if (fn == a_deep) {
		c->deep++;
		c->unf_deep += unf;
		if (unf && KTRACE_CALL_DEPTH(w0) > c->deep_depth_max)
			c->deep_depth_max = KTRACE_CALL_DEPTH(w0);
	} else if (fn == a_main) {
		c->main++;
		c->unf_main += unf;
	} else {
		c->other++;
	}
}

static struct walk_stats count(const char *dir, struct counts *c)
{
	size_t len = 0;
	const struct ktrace_callsites *h = walk_map(dir, "callsites", &len);
	struct walk_stats ws;

	memset(c, 0, sizeof(*c));
	if (h && len >= 64 && h->magic == KTRACE_CALLSITES_MAGIC) {
		c->cs = (const struct ktrace_callsite *)((const char *)h + h->hdr_size);
		c->ncs = (len - h->hdr_size) / sizeof(*c->cs);
	}
	ws = walk_trace(dir, count_rec, c);
	if (h)
		munmap((void *)h, len);
	return ws;
}

/* Run argv (NULL-terminated) with @env ("NAME=VALUE" or NULL); stderr to @err. */
static pid_t spawn(char *const argv[], const char *env, const char *err)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_WRONLY);

		dup2(nul, 1);
		dup2(fd, 2);
		if (env)
			putenv((char *)env);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int runv(char *const argv[], const char *env, const char *err)
{
	return wait_status(spawn(argv, env, err));
}

static uint64_t read_counter(const char *path)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &v, 8, 0) != 8)
			v = 0;
		close(fd);
	}
	return v;
}

/*
 * The session files (/dev/shm) of this test's runs that still exist: the
 * program logs its own (tests/kft/stream.c, STREAM_SESSION_LOG), so other
 * users of ktrace on the machine do not count (a residue check).
 */
static char session_log[4200];

static int sessions_left(void)
{
	char line[4200];
	FILE *f = fopen(session_log, "r");
	int n = 0, logged = 0;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		logged++;
		if (line[0] && access(line, F_OK) == 0) {
			diag("left behind: %s", line);
			n++;
		}
	}
	if (f)
		fclose(f);
	if (!logged)
		diag("%s: no session logged: the check would prove nothing", session_log);
	return logged ? n : -1;
}

static int file_has(const char *path, const char *needle)
{
	char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, needle) != NULL;
}

/* The first lines of @path as diagnostics (what a failed check saw). */
static void diag_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	for (int i = 0; f && i < 8 && fgets(line, sizeof(line), f); i++) {
		line[strcspn(line, "\n")] = 0;
		diag("  %s: %s", path, line);
	}
	if (f)
		fclose(f);
}

/* The number after "@field: " in DIR/kft-status (~0 if absent). */
static uint64_t status_num(const char *dir, const char *field)
{
	char path[4400], line[256];
	size_t n = strlen(field);
	uint64_t v = ~0ull;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kft-status", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%llu", (unsigned long long *)&v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static uint64_t status_lost(const char *dir)
{
	return status_num(dir, "entries lost");
}

static pid_t child_of(pid_t parent)
{
	char path[64], buf[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	for (int tries = 0; tries < 2000; tries++) {
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			return (pid_t)atoi(buf);
		}
		usleep(1000);
	}
	return -1;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void load_syms(void)
{
	char err[4300], line[128], *argv[] = { prog, "calls", "0", NULL };
	FILE *f;

	snprintf(err, sizeof(err), "%s/syms", tmp);
	runv(argv, "KFT_SYMS=1", err);
	f = fopen(err, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[32];
		void *p;

		if (sscanf(line, "%31s %p", name, &p) != 2)
			continue;
		if (!strcmp(name, "leaf"))
			a_leaf = (uint64_t)(uintptr_t)p;
		else if (!strcmp(name, "loop"))
			a_loop = (uint64_t)(uintptr_t)p;
		else if (!strcmp(name, "deep"))
			a_deep = (uint64_t)(uintptr_t)p;
		else if (!strcmp(name, "main"))
			a_main = (uint64_t)(uintptr_t)p;
	}
	if (f)
		fclose(f);
}

static void test_long_run(void)
{
	char dir[4200], err[4300];
	/* The default: a writer whose ring is full waits as long as the
	 * consumer lives (1.6 GB written on a shared CI disk can stall one
	 * write for more than 100 ms, the default before issue 29).  What
	 * this run checks is that small rings lose nothing; the waiting is
	 * checked with the slowed and the stopped consumer below. */
	char *argv[] = { ktrace, "record", "-q", "-b", "64K", "-n", "16", "-o", dir,
			 "--", prog, "calls", "100000000", "64", NULL };
	struct counts c;
	struct walk_stats ws;
	int rc;

	snprintf(dir, sizeof(dir), "%s/long", tmp);
	snprintf(err, sizeof(err), "%s/long.err", tmp);
	rc = runv(argv, NULL, err);
	is_int(rc, 0, "100M calls with 1 MiB rings (16 x 64 KiB): record exits 0");
	ws = count(dir, &c);
	ok(c.leaf == 100000000 && c.loop == 1 && c.main == 1,
	   "every call kept: leaf %llu of 100000000, loop %llu, main %llu",
	   (unsigned long long)c.leaf, (unsigned long long)c.loop, (unsigned long long)c.main);
	ok(ws.dropped == 0 && ws.bad == 0 && c.unf_leaf + c.unf_loop + c.unf_main == 0,
	   "nothing dropped (%llu), no structural error (%llu), nothing unfinished",
	   (unsigned long long)ws.dropped, (unsigned long long)ws.bad);
	is_int(sessions_left(), 0, "nothing left in /dev/shm");
	snprintf(err, sizeof(err), "%s/session", dir);
	ok(access(err, F_OK) != 0, "DIR/session removed at the end");
	snprintf(err, sizeof(err), "rm -rf '%s'", dir);
	if (system(err) != 0)
		diag("could not remove %s", dir);
}

static void test_slow_consumer(void)
{
	char dir[4200], err[4300], out[4300], cmd[16384];
	char *argv[] = { ktrace, "record", "--block-timeout=0", "-b", "16K", "-n", "4", "-o", dir, "--",
			 prog, "calls", "2000000", NULL };
	char *bargv[] = { ktrace, "record", "-b", "16K", "-n", "4", "-o", dir, "--", prog, "calls",
			  "300000", NULL };
	struct counts c;
	struct walk_stats ws;
	uint64_t kept, lost;
	int rc;

	snprintf(dir, sizeof(dir), "%s/slow", tmp);
	snprintf(err, sizeof(err), "%s/slow.err", tmp);
	rc = runv(argv, "KTRACE_TEST_CONSUMER_DELAY_US=3000", err);
	is_int(rc, 0, "slowed consumer: record exits 0");
	ws = count(dir, &c);
	kept = c.leaf + c.loop + c.main;
	ok(ws.dropped > 0 && kept + ws.dropped == 2000002,
	   "written %llu + dropped %llu = attempted 2000002", (unsigned long long)kept,
	   (unsigned long long)ws.dropped);
	lost = status_lost(dir);
	ok(lost == ws.dropped, "kft-status counts them as lost (%llu)", (unsigned long long)lost);
	ok(file_has(err, " records dropped: the consumer fell behind") && file_has(err, " between "),
	   "record's summary says how many were dropped and between which times");
	snprintf(out, sizeof(out), "%s/slow.kd", tmp);
	snprintf(cmd, sizeof(cmd), "'%s' kd -n 3 '%s' > '%s' 2>&1", ktrace, dir, out);
	rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "%llu records lost or dropped", (unsigned long long)ws.dropped);
	ok(file_has(out, cmd), "kd warns about the %llu records dropped", (unsigned long long)ws.dropped);
	snprintf(cmd, sizeof(cmd),
		 "'%s' print '%s' 2>/dev/null | awk '$4 == \"[lost]\" { n += $5 } END { print n + 0 }' > '%s'",
		 ktrace, dir, out);
	rc = system(cmd);
	{
		FILE *f = fopen(out, "r");
		unsigned long long n = 0;

		if (f && fscanf(f, "%llu", &n) != 1)
			n = 0;
		if (f)
			fclose(f);
		ok(rc == 0 && n == ws.dropped, "print shows them as [lost] where they were (%llu)", n);
	}

	/* The default: the writers wait for the slow consumer instead. */
	snprintf(err, sizeof(err), "%s/block.err", tmp);
	rc = runv(bargv, "KTRACE_TEST_CONSUMER_DELAY_US=3000", err);
	ws = count(dir, &c);
	ok(rc == 0 && c.leaf == 300000 && ws.dropped == 0,
	   "by default the writers wait for a slow consumer: %llu of 300000 calls kept, %llu dropped",
	   (unsigned long long)c.leaf, (unsigned long long)ws.dropped);
	ok(file_has(err, "the program waited "), "record's summary says how long the program waited");
}

/* SIGKILL of the program after @ms: the committed calls and the open ones. */
static int kill_trial(int trial, unsigned ms)
{
	char dir[4200], ctr[4200], err[4300], kd[4300], cmd[20000];
	char *argv[] = { ktrace, "record", "-q", "-o", dir, "--", prog, "calls", "4000000000", "0", ctr,
			 NULL };
	struct counts c;
	struct walk_stats ws;
	pid_t rec, child;
	uint64_t done;
	int rc, good;

	snprintf(dir, sizeof(dir), "%s/kill%d", tmp, trial);
	snprintf(ctr, sizeof(ctr), "%s/kill%d.ctr", tmp, trial);
	snprintf(err, sizeof(err), "%s/kill%d.err", tmp, trial);
	snprintf(kd, sizeof(kd), "%s.kd", dir);
	rec = spawn(argv, NULL, err);
	child = child_of(rec);
	/* a random moment of the calls: after the first returned (a loaded machine starts slowly) */
	for (int i = 0; i < 5000 && child > 0 && !read_counter(ctr); i++)
		sleep_ms(1);
	sleep_ms(ms);
	if (child > 0)
		kill(child, SIGKILL);
	rc = wait_status(rec);
	done = read_counter(ctr);
	ws = count(dir, &c);
	/*
	 * A call the program saw return was committed, or dropped and counted
	 * (the consumer was behind): leaf + dropped is the counter, or one
	 * more (killed between a commit and the counter's update).
	 */
	good = rc == 128 + SIGKILL && done > 0 && c.leaf + ws.dropped >= done &&
	       c.leaf + ws.dropped <= done + 1 && c.unf_main == 1 && c.unf_loop == 1 && c.main == 1 &&
	       c.loop == 1 && ws.bad == 0;
	/*
	 * What a user sees: the call path at the kill, at the top of kd -c's
	 * table (its warnings, such as a record torn by the kill, go to stderr).
	 */
	snprintf(cmd, sizeof(cmd), "'%s' kd -c '%s' 2>'%s.err' | head -n 4 > '%s'", ktrace, dir, kd, kd);
	if (system(cmd) != 0 || !file_has(kd, "main [unfinished]\n") ||
	    !file_has(kd, "loop [unfinished]\n")) {
		diag("trial %d: kd -c does not begin with main and loop unfinished", trial);
		diag_file(kd);
		snprintf(cmd, sizeof(cmd), "%s.err", kd);
		diag_file(cmd);
		good = 0;
	}
	if (!good)
		diag("trial %d (%u ms): status %d, counter %llu, leaf %llu (unfinished %llu), dropped %llu, "
		     "loop %llu/%llu, main %llu/%llu, bad %llu",
		     trial, ms, rc, (unsigned long long)done, (unsigned long long)c.leaf,
		     (unsigned long long)c.unf_leaf, (unsigned long long)ws.dropped,
		     (unsigned long long)c.loop, (unsigned long long)c.unf_loop,
		     (unsigned long long)c.main, (unsigned long long)c.unf_main,
		     (unsigned long long)ws.bad);
	snprintf(err, sizeof(err), "rm -rf '%s'", dir);
	if (system(err) != 0)
		diag("could not remove %s", dir);
	return good;
}

static void test_kill_program(void)
{
	int good = 0;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int i = 0; i < 20; i++)
		good += kill_trial(i, 20 + (unsigned)(rand() % 200));
	is_int(good, 20, "SIGKILL at random moments: every returned call kept, main and loop unfinished, "
			 "and kd -c shows them so (20 trials)");
	is_int(sessions_left(), 0, "nothing left in /dev/shm after the kills");
}

static void test_crash(const char *how, int sig)
{
	char dir[4200], err[4300], out[4300], cmd[16384];
	char *argv[] = { ktrace, "record", "-q", "-o", dir, "--", prog, (char *)how, "100", NULL };
	struct counts c;
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, how);
	snprintf(err, sizeof(err), "%s/%s.err", tmp, how);
	rc = runv(argv, NULL, err);
	is_int(rc, 128 + sig, "%s at depth 100: record exits with the program's status", how);
	count(dir, &c);
	ok(c.deep == 100 && c.unf_deep == 100 && c.deep_depth_max == 100 && c.main == 1 &&
		   c.unf_main == 1,
	   "%s: the 101 calls open at the crash are unfinished (deep %llu/%llu, deepest at depth %llu, main %llu)",
	   how, (unsigned long long)c.unf_deep, (unsigned long long)c.deep,
	   (unsigned long long)c.deep_depth_max, (unsigned long long)c.unf_main);
	snprintf(out, sizeof(out), "%s/%s.kd", tmp, how);
	snprintf(cmd, sizeof(cmd), "'%s' kd -c '%s' > '%s' 2>&1", ktrace, dir, out);
	rc = system(cmd);
	ok(rc == 0 && file_has(out, "deep"), "%s: kd -c shows the call path", how);
}

/* Issue 12: calls deeper than the old 65536-frame shadow stack were lost uncounted. */
static void test_deep(void)
{
	char dir[4200], err[4300], status[4400];
	char *argv[] = { ktrace, "record", "-q", "-o", dir, "--", prog, "recurse", "100000", NULL };
	struct counts c;
	struct walk_stats ws;
	int rc;

	snprintf(dir, sizeof(dir), "%s/deep", tmp);
	snprintf(err, sizeof(err), "%s/deep.err", tmp);
	rc = runv(argv, NULL, err);
	ws = count(dir, &c);
	snprintf(status, sizeof(status), "%s/kft-status", dir);
	ok(rc == 0 && c.deep == 100000 && c.main == 1 && c.unf_deep == 0 && ws.dropped == 0 &&
		   file_has(status, "calls too deep: 0\n") && file_has(status, "entries lost: 0\n"),
	   "a recursion 100000 deep: every call kept (%llu of 100000), none lost or too deep",
	   (unsigned long long)c.deep);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The KFT engine's clock rate under a session.  A streamed channel once
 * took it from two calibration pairs microseconds apart: times came out
 * 2.6x too long, and `-t 1ms` kept 400 us calls.  Expected answers from
 * the program's own busy loops (CLOCK_MONOTONIC) and the test's clock.
 */
static void test_clock_rate(void)
{
	char dir[4200], err[4300], line[128], fn[16];
	char *argv[] = { ktrace, "record", "-q", "-t", "1ms", "-o", dir, "--", prog, "timed", "10", "400", "2500", NULL };
	struct counts c;
	uint64_t t0, wall_us, stop_us, want_min[2] = { 0, 0 }, want_max[2] = { 0, 0 };
	unsigned long long us;
	FILE *f;
	int rc;

	snprintf(dir, sizeof(dir), "%s/timed", tmp);
	snprintf(err, sizeof(err), "%s/timed.err", tmp);
	t0 = mono_ns();
	rc = runv(argv, NULL, err);
	wall_us = (mono_ns() - t0) / 1000;
	count(dir, &c);
	stop_us = status_num(dir, "stopped");
	/*
	 * The calls -t 1ms must keep, from what the program measured: the
	 * hooks' duration of a call lies between what the program measured
	 * inside its body (INNER) and around the call (OUTER), whatever the
	 * load.  So a call with INNER over 1000 us is surely kept, one with
	 * OUTER under 1000 us surely not (each figure is truncated to whole
	 * us from two reads: the true value lies within 1 us of it).
	 */
	f = fopen(err, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long inner;

		if (sscanf(line, "timed %15s %llu %llu", fn, &us, &inner) == 3) {
			int i = !strcmp(fn, "deep");

			want_min[i] += inner > 1000;
			want_max[i] += us >= 1000;
		}
	}
	if (f)
		fclose(f);
	ok(rc == 0 && want_min[1] == 10 && c.deep >= want_min[1] && c.deep <= want_max[1] &&
		   c.leaf >= want_min[0] && c.leaf <= want_max[0] && c.main == 1,
	   "-t 1ms keeps the calls over 1 ms: 2500 us calls %llu (want %llu-%llu), 400 us calls %llu (want "
	   "%llu-%llu, more than 0 only if the program was preempted: from its own measures)",
	   (unsigned long long)c.deep, (unsigned long long)want_min[1], (unsigned long long)want_max[1],
	   (unsigned long long)c.leaf, (unsigned long long)want_min[0], (unsigned long long)want_max[0]);
	ok(stop_us >= 29000 && stop_us <= wall_us,
	   "the run's stop time, %llu us after exec, lies between the program's busy time (29000 us) "
	   "and record's wall time (%llu us)",
	   (unsigned long long)stop_us, (unsigned long long)wall_us);
}

static void test_kill_recorder(void)
{
	char dir[4200], ctr[4200], err[4300], session[4300];
	char *argv[] = { ktrace, "record", "-o", dir, "--", prog, "calls", "30000000", "0", ctr, NULL };
	char *rargv[] = { ktrace, "read", "--recover", dir, NULL };
	struct counts c;
	struct walk_stats ws;
	pid_t rec;
	int rc;

	snprintf(dir, sizeof(dir), "%s/reckill", tmp);
	snprintf(ctr, sizeof(ctr), "%s/reckill.ctr", tmp);
	snprintf(err, sizeof(err), "%s/reckill.err", tmp);
	rec = spawn(argv, NULL, err);
	child_of(rec);
	sleep_ms(150);
	kill(rec, SIGKILL);
	wait_status(rec);
	snprintf(session, sizeof(session), "%s/session", dir);
	ok(access(session, F_OK) == 0, "ktrace record killed: DIR/session names its session");
	rc = runv(rargv, NULL, err);
	is_int(rc, 0, "ktrace read --recover waits for the program and copies the rings");
	ws = count(dir, &c);
	ok(c.leaf + ws.dropped == 30000000 && c.loop == 1 && c.main == 1 && ws.bad == 0,
	   "every committed call recovered: leaf %llu + dropped %llu = 30000000",
	   (unsigned long long)c.leaf, (unsigned long long)ws.dropped);
	ok(access(session, F_OK) != 0 && sessions_left() == 0,
	   "after the recovery nothing is left (DIR/session, /dev/shm)");
}

/*
 * The default wait (issue 29: every call kept): a stopped consumer makes
 * the program wait, not drop; a killed one (its lock gone) lets it run on
 * and drop, counted, never hang.
 */
static void test_dead_consumer(void)
{
	char dir[4200], ctr[4200], err[4300];
	char *argv[] = { ktrace, "record", "-q", "-b", "16K", "-n", "4", "-o", dir, "--", prog, "calls",
			 "30000000", "0", ctr, NULL };
	char *rargv[] = { ktrace, "read", "-q", "--recover", dir, NULL };
	struct counts c;
	struct walk_stats ws;
	uint64_t c1, c2, end = 0;
	pid_t rec, child;
	int i;

	snprintf(dir, sizeof(dir), "%s/stopped", tmp);
	snprintf(ctr, sizeof(ctr), "%s/stopped.ctr", tmp);
	snprintf(err, sizeof(err), "%s/stopped.err", tmp);
	rec = spawn(argv, NULL, err);
	child = child_of(rec);
	for (i = 0; i < 5000 && child > 0 && !read_counter(ctr); i++)
		sleep_ms(1);
	kill(rec, SIGSTOP);
	sleep_ms(1000);
	c1 = read_counter(ctr);
	sleep_ms(1000);
	c2 = read_counter(ctr);
	/* 4 x 16 KiB rings hold 4096 calls of 16 bytes: the program gets that far, no further */
	ok(c1 > 0 && c1 < 30000000 && c2 - c1 <= 4096,
	   "consumer stopped: the program waits for it (%llu calls returned, %llu more in the next second)",
	   (unsigned long long)c1, (unsigned long long)(c2 - c1));
	kill(rec, SIGKILL);
	wait_status(rec);
	for (i = 0; i < 30000 && (end = read_counter(ctr)) < 30000000; i++)
		sleep_ms(1);
	is_int(end, 30000000, "consumer killed: the program runs to its end (no hang)");
	for (i = 0; i < 5000 && child > 0 && kill(child, 0) == 0; i++)
		sleep_ms(1);
	is_int(runv(rargv, NULL, err), 0, "ktrace read --recover copies the rings");
	ws = count(dir, &c);
	ok(ws.dropped > 0 && c.leaf + c.loop + c.main + ws.dropped == 30000002 && ws.bad == 0,
	   "  every call kept or counted dropped: %llu + dropped %llu = 30000002 (leaf, loop, main)",
	   (unsigned long long)(c.leaf + c.loop + c.main), (unsigned long long)ws.dropped);
	ok(sessions_left() == 0, "  nothing left in /dev/shm");
}

static void test_flight_and_limits(void)
{
	char dir[4200], cfg[4200], err[4300];
	char *fargv[] = { ktrace, "record", "-q", "--flight", "-b", "4K", "-n", "4", "-o", dir, "--", prog,
			  "calls", "100000", NULL };
	char *largv[] = { ktrace, "record", "-q", "--config", cfg, "-o", dir, "--", prog, "calls", "100000",
			  NULL };
	struct counts c;
	struct walk_stats ws;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/flight", tmp);
	snprintf(err, sizeof(err), "%s/flight.err", tmp);
	is_int(runv(fargv, NULL, err), 0, "flight mode: record exits 0");
	ws = count(dir, &c);
	ok(c.leaf < 100000 && c.main == 1 && c.loop == 1 &&
		   c.leaf + c.loop + c.main + ws.overwritten == 100002,
	   "flight mode keeps the newest calls: %llu kept + %llu overwritten = 100002",
	   (unsigned long long)(c.leaf + c.loop + c.main), (unsigned long long)ws.overwritten);

	snprintf(cfg, sizeof(cfg), "%s/limit.kft", tmp);
	f = fopen(cfg, "w");
	fputs("logentries 1000\n", f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/limit", tmp);
	is_int(runv(largv, NULL, err), 0, "logentries 1000: record exits 0");
	ws = count(dir, &c);
	ok(c.leaf + c.loop + c.main == 1000 && ws.dropped == 0,
	   "logentries still caps the run: %llu entries", (unsigned long long)(c.leaf + c.loop + c.main));
}

static void test_api_channel(void)
{
	char dir[4200], out[4200], err[4300], sub[4300];
	char *argv[] = { ktrace, "record", "-q", "-o", dir, "--", example, "-t", "3", "-n", "1000", out,
			 NULL };
	struct walk_stats ws;

	snprintf(dir, sizeof(dir), "%s/api", tmp);
	snprintf(out, sizeof(out), "%s/apiout", tmp);
	snprintf(err, sizeof(err), "%s/api.err", tmp);
	is_int(runv(argv, NULL, err), 0, "a program using ktrace_setup under record: exits 0");
	snprintf(sub, sizeof(sub), "%s/threads", out);
	ws = walk_trace(sub, NULL, NULL);
	ok(walk_slots(sub) && ws.records == 3 * 1000 * 7 && ws.bad == 0 && ws.dropped == 0,
	   "its channel is streamed too: %llu of 21000 records (3 threads x 1000 requests x 7 events)",
	   (unsigned long long)ws.records);
}

int main(void)
{
	/* the programs' own calls: library calls (on by default) are tests/kft_plt.sh's */
	setenv("KTRACE_LIBCALL", "0", 1);
	const char *build = getenv("KTRACE_BUILD"), *src = getenv("KTRACE_SRC");
	char cmd[9000];

	if (!build || !src) {
		printf("Bail out! KTRACE_BUILD and KTRACE_SRC must be set (make test does)\n");
		return 1;
	}
	tmp = walk_tmpdir("stream");
	snprintf(session_log, sizeof(session_log), "%s/sessions.log", tmp);
	setenv("STREAM_SESSION_LOG", session_log, 1);
	snprintf(prog, sizeof(prog), "%s/stream", tmp);
	snprintf(ktrace, sizeof(ktrace), "%s/ktrace", build);
	snprintf(example, sizeof(example), "%s/examples/threads", build);
	snprintf(cmd, sizeof(cmd), "cc -O1 -no-pie -fno-pie -finstrument-functions -o '%s' '%s/tests/kft/stream.c'",
		 prog, src);
	if (system(cmd) != 0) {
		printf("Bail out! cannot compile tests/kft/stream.c\n");
		return 1;
	}
	preload_sanitizers(build);
	load_syms();
	if (!a_leaf || !a_loop || !a_deep || !a_main) {
		printf("Bail out! the test program did not print its functions' addresses\n");
		return 1;
	}
	test_long_run();
	test_slow_consumer();
	test_kill_program();
	test_crash("segv", SIGSEGV);
	test_crash("abort", SIGABRT);
	test_deep();
	test_clock_rate();
	test_kill_recorder();
	test_dead_consumer();
	test_flight_and_limits();
	test_api_channel();
	return done_testing();
}

/*
 * tests/kft_analysis.c - `ktrace addr2sym`, `ktrace kd` and `ktrace print`
 * on real function traces: programs compiled here with
 * -finstrument-functions (tests/kft/calltree.c; tests/kft/sleepy.c with the
 * shared library tests/kft/kftlib.c) and recorded with `ktrace record`.
 *
 * Checks: names of functions of a PIE executable and of a shared library
 * and their call sites; local time exact (it adds up to the root's time,
 * and equals total minus the children listed by addr2sym), also when a
 * funclist filter dropped the intermediate callers; signal-handler
 * sections in kd -c; a stripped binary and a binary rebuilt after the
 * trace (warnings, addresses); kd -c sorted through temporary files; the
 * CALL records in ktrace print.  Times are only checked loosely (a 20 ms
 * sleep lasts at least 20 ms).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "sanitizers.h"

static char tmp[256], ktrace[512];
static char out[1 << 20], err[1 << 16];

static int run(const char *fmt, ...)
{
	char cmd[4096], path[600];
	va_list ap;
	int st;
	FILE *f;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 600, fmt, ap);
	va_end(ap);
	n = strlen(cmd);
	snprintf(cmd + n, sizeof(cmd) - n, " >%s/out 2>%s/err", tmp, tmp);
	st = system(cmd);
	snprintf(path, sizeof(path), "%s/out", tmp);
	f = fopen(path, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = 0;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/err", tmp);
	f = fopen(path, "r");
	n = f ? fread(err, 1, sizeof(err) - 1, f) : 0;
	err[n] = 0;
	if (f)
		fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void must(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		bail_out("failed: %s", cmd);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* "123.456" microseconds as ns; UINT64_MAX if not a number. */
static uint64_t ns_of(const char *s)
{
	unsigned long long a, b;

	if (sscanf(s, "%llu.%3llu", &a, &b) != 2)
		return UINT64_MAX;
	return a * 1000 + b;
}

/* Column @col (0 = name) of the kd table line of @fn. */
static const char *column(const char *s, const char *fn, int col)
{
	static char buf[128];
	size_t fl = strlen(fn);

	buf[0] = 0;
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, fn, fl) == 0 && p[fl] == ' ') {
			const char *q = p;

			for (int c = 0; c <= col; c++) {
				size_t n;

				while (*q == ' ')
					q++;
				n = strcspn(q, " \n");
				snprintf(buf, sizeof(buf), "%.*s", (int)n, q);
				q += n;
			}
			return buf;
		}
	}
	return buf;
}

/*
 * Sum of the Delta column of addr2sym lines (in @s) whose Function is @fn
 * and whose Called At starts with @caller ("" = any).  *@n counts them.
 */
static uint64_t deltas(const char *s, const char *fn, const char *caller, int *n)
{
	uint64_t sum = 0;

	*n = 0;
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char e[32], d[32], pid[32], f[256], at[256];

		if (sscanf(p, "%31s %31s %31s %255s %255s", e, d, pid, f, at) != 5 || strcmp(f, fn) ||
		    ns_of(d) == UINT64_MAX || strncmp(at, caller, strlen(caller)))
			continue;
		sum += ns_of(d);
		(*n)++;
	}
	return sum;
}

static void record(const char *trace, const char *config, const char *cmd)
{
	if (config) {
		char path[600];
		FILE *f;

		snprintf(path, sizeof(path), "%s/kft.conf", tmp);
		f = fopen(path, "w");
		if (!f)
			bail_out("%s: %s", path, strerror(errno));
		fputs(config, f);
		fclose(f);
	}
	must("cd %s && %s record -q -b 64K -n 16 -o %s %s%s -- %s 2>%s/record.err", tmp, ktrace, trace,
	     config ? "--config " : "", config ? "kft.conf" : "", cmd, tmp);
}

static void test_tree(void)
{
	uint64_t sum = 0, outer, slow, fasts;
	int n;
	static const char *const fns[] = { "main", "run_tree", "outer", "slow", "fast" };

	record("tree", NULL, "./calltree tree");
	is_int(run("%s kd %s/tree", ktrace, tmp), 0, "kd on a recorded trace");
	is_str(err, "", "no warnings");
	ok(strstr(out, "Function                  Count") && !strcmp(column(out, "fast", 1), "4") &&
		   !strcmp(column(out, "main", 1), "1"),
	   "PIE function names and counts");
	for (size_t i = 0; i < 5; i++)
		sum += ns_of(column(out, fns[i], 4));
	is_int(sum, ns_of(column(out, "main", 2)), "local times add up to main's total time, to the ns");
	ok(ns_of(column(out, "slow", 2)) >= 20000000, "slow (spins 20 ms) lasts at least 20 ms");
	outer = ns_of(column(out, "outer", 2));
	slow = ns_of(column(out, "slow", 2));
	is_int(run("%s addr2sym %s/tree", ktrace, tmp), 0, "addr2sym on it");
	fasts = deltas(out, "fast", "outer+", &n);
	is_int(n, 3, "addr2sym: 3 calls of fast from outer");
	is_str(err, "", "addr2sym: nothing on stderr");
	run("%s kd %s/tree", ktrace, tmp);
	is_int(ns_of(column(out, "outer", 4)), outer - slow - fasts,
	       "outer's local = its time - slow - the 3 fast it called");
	run("%s addr2sym %s/tree", ktrace, tmp);
	ok(strstr(out, "Logging started at ") && strstr(out, "Number of entries after filters = 8\n"),
	   "addr2sym header from the run's status");
	ok(strstr(out, "   main   __libc_start_call_main+0x") || strstr(out, "   main   __libc_start_main+0x") ||
		   strstr(out, "   main   [libc.so.6]+0x"),
	   "main called from libc");
	ok(strstr(out, "   run_tree   main+0x") && strstr(out, "   outer   run_tree+0x") &&
		   strstr(out, "   slow   outer+0x") && strstr(out, "   fast   slow+0x"),
	   "Called At names the caller with the return address offset");
	run("%s addr2sym -l %s/tree", ktrace, tmp);
	ok(strstr(out, "calltree.c:") != NULL, "addr2sym -l: source lines from DWARF");

	/* ktrace print names CALL records */
	is_int(run("%s print %s/tree", ktrace, tmp), 0, "print");
	ok(strstr(out, " slow ") && strstr(out, " entry=") && strstr(out, " dur=") &&
		   strstr(out, " depth=3 at=outer+0x"),
	   "print: function name, entry, duration, depth, call site");
	run("%s print -j %s/tree", ktrace, tmp);
	ok(strstr(out, "{\"name\":\"outer\",\"cat\":\"call\",\"ph\":\"X\"") != NULL,
	   "print -j: calls as complete events");
	is_int(run("%s kd -v %s/tree", ktrace, tmp), 0, "kd -v");
	ok(strstr(err, " records, 8 calls of 5 functions read in ") && strstr(err, "records/s"),
	   "kd -v: reading statistics");
}

static void test_filtered(void)
{
	uint64_t fasts;
	int n;

	/* outer's children slow and run_tree's are not recorded: fast's are outer's descendants */
	record("funclist", "filter funclist fast outer fend\n", "./calltree tree");
	run("%s addr2sym -H %s/funclist", ktrace, tmp);
	fasts = deltas(out, "fast", "", &n);
	is_int(n, 4, "funclist: 4 fast recorded");
	run("%s kd %s/funclist", ktrace, tmp);
	is_int(ns_of(column(out, "outer", 4)), ns_of(column(out, "outer", 2)) - fasts,
	       "funclist: outer's local = its time - its 4 recorded descendants");
	run("%s kd -c %s/funclist", ktrace, tmp);
	ok(strstr(out, " outer\n") && strstr(out, " |  fast\n") && !strstr(out, "|  |"),
	   "kd -c: the fast calls are outer's children");
}

static void test_signal(void)
{
	record("signal", NULL, "./calltree signal");
	is_int(run("%s kd -c %s/signal", ktrace, tmp), 0, "kd -c on a trace with a signal handler");
	ok(strstr(out, "----------- !!!! start --------------\n") &&
		   strstr(out, " handler\n") && strstr(out, " !  in_handler\n") &&
		   strstr(out, " !  !  fast\n") && strstr(out, "----------- !!!! end ----------------\n") &&
		   strstr(out, "|  slow\n"),
	   "the handler section is marked as kd marked interrupts");
}

static void test_sleepy(void)
{
	uint64_t parent, child, plocal;

	record("t-sleepy", NULL, "./sleepy");
	is_int(run("%s kd %s/t-sleepy", ktrace, tmp), 0, "kd on the program with a shared library");
	parent = ns_of(column(out, "parent", 2));
	child = ns_of(column(out, "child", 2));
	plocal = ns_of(column(out, "parent", 4));
	ok(parent >= 30000000 && parent != UINT64_MAX, "parent (20 ms + child) lasts >= 30 ms");
	ok(child >= 10000000 && child != UINT64_MAX, "child (10 ms) lasts >= 10 ms");
	ok(plocal >= 20000000 && plocal == parent - child, "parent's local time = time - child, >= 20 ms");
	ok(!strcmp(column(out, "lib_work", 1), "1") && !strcmp(column(out, "lib_helper", 1), "1"),
	   "functions of the shared library are named");
	run("%s addr2sym -H %s/t-sleepy", ktrace, tmp);
	ok(strstr(out, "   lib_work   main+0x") && strstr(out, "   lib_helper   lib_work+0x"),
	   "addr2sym: library function called from main, and within the library");
	run("%s kd -f Fcm %s/t-sleepy", ktrace, tmp);
	ok(strstr(out, "parent") && !strcmp(column(out, "parent", 2), "child") &&
		   !strcmp(column(out, "main", 2), "parent"),
	   "kd -f m: main's most time-consuming child is parent, parent's is child");
}

static void test_binaries(void)
{
	/* stripped */
	must("cd %s && strip -o calltree.s calltree", tmp);
	record("stripped", NULL, "./calltree.s tree");
	is_int(run("%s addr2sym -H %s/stripped", ktrace, tmp), 0, "addr2sym on a stripped binary");
	ok(strstr(out, "[calltree.s]+0x") && !strstr(out, " run_tree "), "addresses printed as [file]+0xoffset");
	ok(count_lines(err) == 1 && strstr(err, "calltree.s: warning: no symbol table"),
	   "one warning naming the file");
	run("cd %s && %s addr2sym -H -m calltree %s/stripped", tmp, ktrace, tmp);
	ok(strstr(out, "   run_tree   main+0x") && !strstr(out, "[calltree.s]") && !err[0],
	   "-m FILE: the symbols of the unstripped build (same build id)");

	/* rebuilt after the trace was taken */
	record("rebuilt", NULL, "./calltree2 tree");
	must("cd %s && cc -O2 -g -DREBUILT=1 -finstrument-functions -pthread -o calltree2 %s/tests/kft/calltree.c",
	     tmp, getenv("KTRACE_SRC"));
	is_int(run("%s kd %s/rebuilt", ktrace, tmp), 0, "kd on a trace whose binary changed");
	ok(strstr(out, "[calltree2]+0x") && !strstr(out, "run_tree"), "its addresses are printed");
	ok(count_lines(err) == 1 && strstr(err, "calltree2: warning: build id ") &&
		   strstr(err, "differs from the trace's"),
	   "one warning: the build id differs");
}

static void test_threads(void)
{
	static char whole[1 << 20];

	record("threads", NULL, "./calltree threads 4");
	is_int(run("%s kd -c -l %s/threads", ktrace, tmp), 0, "kd -c on 5 threads");
	snprintf(whole, sizeof(whole), "%s", out);
	ok(count_lines(out) == 2 + 5 + 1 + 4 * 101, "one section per thread, every call (%d lines)",
	   count_lines(out));
	run("%s kd -c -l --sort-mem 8K %s/threads", ktrace, tmp);
	ok(!strcmp(whole, out), "the same when sorted through temporary files");
	run("%s kd -c -i %s/threads", ktrace, tmp);
	ok(strstr(out, "----------- switch to thread ") != NULL, "kd -c -i: thread switches marked");
	run("%s kd -n 1 %s/threads", ktrace, tmp);
	ok(count_lines(out) == 3, "kd -n 1");
}

int main(void)
{
	/* the programs' own calls: library calls (on by default) are tests/kft_plt.sh's */
	setenv("KTRACE_LIBCALL", "0", 1);
	const char *build = getenv("KTRACE_BUILD"), *src = getenv("KTRACE_SRC");

	if (!build || !src)
		bail_out("KTRACE_BUILD and KTRACE_SRC must be set (run through make test)");
	preload_sanitizers(build);
	snprintf(tmp, sizeof(tmp), "%s/kft_analysis.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		bail_out("mkdtemp: %s", strerror(errno));
	snprintf(ktrace, sizeof(ktrace), "%s/ktrace", build);
	must("cd %s && cc -O1 -g -finstrument-functions -pthread -o calltree %s/tests/kft/calltree.c && "
	     "cp calltree calltree2 && "
	     "cc -O1 -g -fPIC -shared -finstrument-functions -o libkftlib.so %s/tests/kft/kftlib.c && "
	     "cc -O1 -g -finstrument-functions -o sleepy %s/tests/kft/sleepy.c -L. -lkftlib -Wl,-rpath,%s",
	     tmp, src, src, src, tmp);

	test_tree();
	test_filtered();
	test_signal();
	test_sleepy();
	test_binaries();
	test_threads();

	if (!tap_failed) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd) != 0)
			diag("cleanup of %s failed", tmp);
	} else {
		diag("traces left in %s", tmp);
	}
	return done_testing();
}

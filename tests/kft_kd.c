/*
 * tests/kft_kd.c - `ktrace kd` and `ktrace addr2sym` on synthetic function
 * traces with a known answer: every duration is chosen, so counts, total,
 * average and local times, the most time-consuming child (-f m n), the
 * call traces (-c, -l, -i, signal-handler sections, unfinished calls) and
 * the listing are compared with exact expected text.
 *
 * The trace directories are written here (docs/FORMAT.md: metadata with
 * `clock mono` so raw times are ns, thread streams with CALL records in
 * exit order, the callsites file).  Function addresses are those of
 * tests/kft/calltree.c compiled at test time (-O0 -g, read with nm), placed
 * at a PIE load bias by a `map` line, so the names come from the real
 * symbolizer.  The same synthetic trace pointing at a stripped copy, at a
 * file with another build id and at a missing file checks the warnings
 * and the [file]+0xoffset fallback; damaged callsites files check the
 * one-line errors.  A second trace with 10000 calls under one parent
 * checks that bounding the call-tree builder's memory keeps local times
 * exact, and that sorting calls through temporary files (--sort-mem)
 * changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktrace/format.h"
#include "tap.h"

#define BIAS 0x555555554000ull
#define ORIGIN 1000000ull /* created-ns: Entry times count from here */
#define US 1000ull

static char tmp[256], ktrace[512], prog[512];
static char out[1 << 20], err[1 << 16];

struct sym {
	const char *name;
	uint64_t addr;
};

static struct sym syms[] = {
	{ "main", 0 },    { "run_tree", 0 }, { "outer", 0 },   { "slow", 0 },
	{ "fast", 0 },    { "worker", 0 },   { "handler", 0 }, { "in_handler", 0 },
	{ "deep", 0 },
};
#define NSYMS (sizeof(syms) / sizeof(syms[0]))

static uint64_t addr_of(const char *name)
{
	for (size_t i = 0; i < NSYMS; i++)
		if (!strcmp(syms[i].name, name))
			return syms[i].addr;
	bail_out("no symbol %s", name);
	return 0;
}

static void load_syms(void)
{
	char cmd[1024], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", prog);
	p = popen(cmd, "r");
	if (!p)
		bail_out("nm: %s", strerror(errno));
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		for (size_t i = 0; i < NSYMS; i++)
			if (!strcmp(syms[i].name, name))
				syms[i].addr = BIAS + a;
	}
	pclose(p);
	for (size_t i = 0; i < NSYMS; i++)
		if (!syms[i].addr)
			bail_out("nm found no %s in %s", syms[i].name, prog);
}

/* ------------------------------------------------------------------ */
/* Writing a trace                                                     */
/* ------------------------------------------------------------------ */

struct site {
	const char *fn, *caller;
	unsigned off; /* return address = caller + off */
};

struct call {
	unsigned stream;
	unsigned site; /* index into the callsites table */
	uint64_t entry_us_x1000, dur; /* entry relative to ORIGIN, both in ns */
	unsigned depth, sig, flags;
};

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, n) != (ssize_t)n)
		bail_out("writing %s: %s", path, strerror(errno));
	close(fd);
}

/*
 * A trace in @dir: @nstreams thread streams (tids 100, 101, ... of process
 * 100) holding @calls in the given order (exit order per stream), the
 * call-site table @sites, and a map line for @mapfile with build id @id.
 */
static void write_trace(const char *dir, unsigned nstreams, const struct call *calls, size_t ncalls,
			const struct site *sites, size_t nsites, const char *mapfile, const char *id)
{
	size_t bufsize = 1u << 20;
	char meta[4096], threads[256];
	size_t n = 0, tn = 0;
	uint8_t *cs;
	size_t cslen = 64 + 16 * (nsites + 4);

	mkdir(dir, 0700);
	n += (size_t)snprintf(meta + n, sizeof(meta) - n,
			      "ktrace-format 1\nclock mono\nhost test\npid 100\ncomm synth\nchannel synth\n"
			      "mode discard\nscope thread\nbuf-size %zu\nbuf-nr 1\nlayout fixed\n"
			      "created-ns %llu\n",
			      bufsize, (unsigned long long)ORIGIN);
	for (unsigned s = 0; s < nstreams; s++) {
		n += (size_t)snprintf(meta + n, sizeof(meta) - n, "stream %u thread trace%u\n", s, s);
		tn += (size_t)snprintf(threads + tn, sizeof(threads) - tn, "%u 100 synth\n", 100 + s);
	}
	n += (size_t)snprintf(meta + n, sizeof(meta) - n, "map %llx %llx 0 %s %s\n",
			      (unsigned long long)BIAS, (unsigned long long)BIAS + 0x100000, id, mapfile);
	write_file(dir, "metadata", meta, n);
	write_file(dir, "threads", threads, tn);

	for (unsigned s = 0; s < nstreams; s++) {
		uint8_t *buf = calloc(1, bufsize);
		struct ktrace_subbuf *h = (struct ktrace_subbuf *)buf;
		uint64_t *w = (uint64_t *)(buf + 64), first = 0, last = 0;
		size_t used = 0;
		uint32_t nrec = 0;
		char name[32];
		int have = 0;

		for (size_t i = 0; i < ncalls; i++) {
			const struct call *c = &calls[i];
			uint64_t exit = ORIGIN + c->entry_us_x1000 + c->dur;

			if (c->stream != s)
				continue;
			if (!have)
				first = exit;
			have = 1;
			last = exit;
			w[0] = KTRACE_REC_HDR(exit, KTRACE_CLASS_CALL, 1, KTRACE_CALL_ID(c->site));
			w[1] = KTRACE_CALL_W0(c->dur, c->site, c->depth, c->sig, c->flags);
			w += 2;
			used += 16;
			nrec++;
		}
		h->magic = KTRACE_SUBBUF_MAGIC;
		h->hdr_size = 64;
		h->flags = KTRACE_SBF_CLOSED;
		h->seq = 0;
		h->first_ts = first;
		h->first_ns = first;
		h->last_ts = last;
		h->used = (uint32_t)used;
		h->nrec = nrec;
		h->tid = 100 + s;
		h->cpu = (uint16_t)s;
		h->stream = (uint16_t)s;
		snprintf(name, sizeof(name), "trace%u", s);
		write_file(dir, name, buf, bufsize);
		free(buf);
	}

	cs = calloc(1, cslen);
	{
		struct ktrace_callsites *ch = (struct ktrace_callsites *)cs;
		struct ktrace_callsite *e = (struct ktrace_callsite *)(cs + 64);

		ch->magic = KTRACE_CALLSITES_MAGIC;
		ch->version = KTRACE_CALLSITES_VERSION;
		ch->hdr_size = 64;
		ch->entry_size = 16;
		ch->capacity = nsites + 4;
		ch->count = nsites;
		for (size_t i = 0; i < nsites; i++) {
			e[i].func = addr_of(sites[i].fn);
			e[i].site = addr_of(sites[i].caller) + sites[i].off;
		}
	}
	write_file(dir, "callsites", cs, cslen);
	free(cs);
}

/* Run a shell command line; its stdout in out[], stderr in err[].  Return: exit status. */
static int run(const char *fmt, ...)
{
	char cmd[4096], path[600];
	va_list ap;
	int st;
	FILE *f;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd + 0, sizeof(cmd) - 600, fmt, ap);
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

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ------------------------------------------------------------------ */
/* The known tree                                                      */
/* ------------------------------------------------------------------ */

/*
 * Thread 100:  main 10+1000 > run_tree 20+900 > outer 30+800 > slow 40+500
 *              > fast 100+50; outer > fast 600+20, fast 700+30;
 *              run_tree > fast 850+10                         (us: entry+dur)
 * Thread 101:  worker 50+300 > fast 60+10, handler 150+50 (signal) >
 *              in_handler 160+20; worker > fast 250+10; deep 500+40
 *              (unfinished)
 */
static const struct site sites[] = {
	{ "main", "main", 0x4 },      { "run_tree", "main", 0x8 },  { "outer", "run_tree", 0x8 },
	{ "slow", "outer", 0x8 },     { "fast", "slow", 0x8 },      { "fast", "outer", 0xc },
	{ "fast", "run_tree", 0xc },  { "fast", "worker", 0x8 },    { "handler", "worker", 0xc },
	{ "in_handler", "handler", 0x8 }, { "worker", "main", 0xc }, { "deep", "main", 0x10 },
};

#define C(st, site, e, d, depth, sig, fl) { st, site, (e) * US, (d) * US, depth, sig, fl }
static const struct call calls[] = {
	/* stream 0 = thread 100, exit order */
	C(0, 4, 100, 50, 4, 0, 0),   /* fast in slow */
	C(0, 3, 40, 500, 3, 0, 0),   /* slow */
	C(0, 5, 600, 20, 3, 0, 0),   /* fast in outer */
	C(0, 5, 700, 30, 3, 0, 0),   /* fast in outer */
	C(0, 2, 30, 800, 2, 0, 0),   /* outer */
	C(0, 6, 850, 10, 2, 0, 0),   /* fast in run_tree */
	C(0, 1, 20, 900, 1, 0, 0),   /* run_tree */
	C(0, 0, 10, 1000, 0, 0, 0),  /* main */
	/* stream 1 = thread 101 */
	C(1, 7, 60, 10, 1, 0, 0),    /* fast in worker */
	C(1, 9, 160, 20, 2, 1, 0),   /* in_handler, in a signal handler */
	C(1, 8, 150, 50, 1, 1, 0),   /* handler */
	C(1, 7, 250, 10, 1, 0, 0),   /* fast in worker */
	C(1, 10, 50, 300, 0, 0, 0),  /* worker */
	C(1, 11, 500, 40, 0, 0, KTRACE_CALLF_UNFINISHED), /* deep, exit not seen */
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))
#define NSITES (sizeof(sites) / sizeof(sites[0]))

static const char table[] =
	"Function                  Count     Time  Average    Local\n"
	"------------------------- ----- -------- -------- --------\n"
	"main                          1 1000.000 1000.000  100.000\n"
	"run_tree                      1  900.000  900.000   90.000\n"
	"outer                         1  800.000  800.000  250.000\n"
	"slow                          1  500.000  500.000  450.000\n"
	"worker                        1  300.000  300.000  230.000\n"
	"fast                          6  130.000   21.666  130.000\n"
	"handler                       1   50.000   50.000   30.000\n"
	"deep                          1   40.000   40.000   40.000\n"
	"in_handler                    1   20.000   20.000   20.000\n";

static const char fields[] =
	"Function                  Count  Average     Time    Local Max-child                 Child-count\n"
	"------------------------- ----- -------- -------- -------- ------------------------- -----------\n"
	"main                          1 1000.000 1000.000  100.000 run_tree                            1\n"
	"run_tree                      1  900.000  900.000   90.000 outer                               1\n"
	"outer                         1  800.000  800.000  250.000 slow                                1\n"
	"slow                          1  500.000  500.000  450.000 fast                                1\n"
	"worker                        1  300.000  300.000  230.000 handler                             1\n"
	"fast                          6   21.666  130.000  130.000 -                                   0\n"
	"handler                       1   50.000   50.000   30.000 in_handler                          1\n"
	"deep                          1   40.000   40.000   40.000 -                                   0\n"
	"in_handler                    1   20.000   20.000   20.000 -                                   0\n";

static const char calltrace[] =
	"    Pid    Trace\n"
	"------- ---------------------------------\n"
	"----------- thread 100 (synth, process 100) --------------\n"
	"    100 main\n"
	"    100 |  run_tree\n"
	"    100 |  |  outer\n"
	"    100 |  |  |  slow\n"
	"    100 |  |  |  |  fast\n"
	"    100 |  |  |  fast\n"
	"    100 |  |  |  fast\n"
	"    100 |  |  fast\n"
	"----------- thread 101 (synth, process 100) --------------\n"
	"    101 worker\n"
	"    101 |  fast\n"
	"----------- !!!! start --------------\n"
	"    101 handler\n"
	"    101 !  in_handler\n"
	"----------- !!!! end ----------------\n"
	"    101 |  fast\n"
	"    101 deep [unfinished]\n";

static const char calltrace_l[] =
	" Entry        Duration    Local          Pid    Trace\n"
	"------------ ----------- ----------- ------- ---------------------------------\n"
	"----------- thread 100 (synth, process 100) --------------\n"
	"      10.000    1000.000     100.000     100 main\n"
	"      20.000     900.000      90.000     100 |  run_tree\n"
	"      30.000     800.000     250.000     100 |  |  outer\n"
	"      40.000     500.000     450.000     100 |  |  |  slow\n"
	"     100.000      50.000      50.000     100 |  |  |  |  fast\n"
	"     600.000      20.000      20.000     100 |  |  |  fast\n"
	"     700.000      30.000      30.000     100 |  |  |  fast\n"
	"     850.000      10.000      10.000     100 |  |  fast\n"
	"----------- thread 101 (synth, process 100) --------------\n"
	"      50.000     300.000     230.000     101 worker\n"
	"      60.000      10.000      10.000     101 |  fast\n"
	"----------- !!!! start --------------\n"
	"     150.000      50.000      30.000     101 handler\n"
	"     160.000      20.000      20.000     101 !  in_handler\n"
	"----------- !!!! end ----------------\n"
	"     250.000      10.000      10.000     101 |  fast\n"
	"     500.000      40.000      40.000     101 deep [unfinished]\n";

static const char calltrace_i[] =
	"    Pid    Trace\n"
	"------- ---------------------------------\n"
	"----------- switch to thread 100 (synth, process 100) --------------\n"
	"    100 main\n"
	"    100 |  run_tree\n"
	"    100 |  |  outer\n"
	"    100 |  |  |  slow\n"
	"----------- switch to thread 101 (synth, process 100) --------------\n"
	"    101 worker\n"
	"    101 |  fast\n"
	"----------- switch to thread 100 (synth, process 100) --------------\n"
	"    100 |  |  |  |  fast\n"
	"----------- switch to thread 101 (synth, process 100) --------------\n"
	"----------- !!!! start --------------\n"
	"    101 handler\n"
	"    101 !  in_handler\n"
	"----------- !!!! end ----------------\n"
	"    101 |  fast\n"
	"    101 deep [unfinished]\n"
	"----------- switch to thread 100 (synth, process 100) --------------\n"
	"    100 |  |  |  fast\n"
	"    100 |  |  |  fast\n"
	"    100 |  |  fast\n";

static const char listing[] =
	" Entry         Delta          PID                    Function   Called At\n"
	"-----------   -----------   -----   -------------------------   --------------------------\n"
	"     10.000      1000.000     100                        main   main+0x4\n"
	"     20.000       900.000     100                    run_tree   main+0x8\n"
	"     30.000       800.000     100                       outer   run_tree+0x8\n"
	"     40.000       500.000     100                        slow   outer+0x8\n"
	"     50.000       300.000     101                      worker   main+0xc\n"
	"     60.000        10.000     101                        fast   worker+0x8\n"
	"    100.000        50.000     100                        fast   slow+0x8\n"
	"    150.000        50.000     101                     handler   worker+0xc\n"
	"    160.000        20.000     101                  in_handler   handler+0x8\n"
	"    250.000        10.000     101                        fast   worker+0x8\n"
	"    500.000             0     101                        deep   main+0x10\n"
	"    600.000        20.000     100                        fast   outer+0xc\n"
	"    700.000        30.000     100                        fast   outer+0xc\n"
	"    850.000        10.000     100                        fast   run_tree+0xc\n";

/* Column @col (0 = the name) of the table line of function @fn in @s, or "". */
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

/* The first @n lines of @s. */
static const char *head(const char *s, int n)
{
	static char buf[1 << 16];
	const char *p = s;

	for (int i = 0; i < n && p && *p; i++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	snprintf(buf, sizeof(buf), "%.*s", p ? (int)(p - s) : (int)strlen(s), s);
	return buf;
}

static void test_known_tree(void)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/syn", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog, "-");

	is_int(run("%s kd %s", ktrace, dir), 0, "kd: exit 0");
	is_str(out, table, "kd: Count, Time, Average and exact Local (total minus children), sorted by time");
	is_str(err, "", "kd: nothing on stderr");

	run("%s kd -n 3 %s", ktrace, dir);
	is_str(out, head(table, 5), "kd -n 3: the three most time-consuming functions");
	run("%s kd -t 300 %s", ktrace, dir);
	is_str(out, head(table, 6), "kd -t 300: functions above 300 us (worker's 300 is not above)");
	run("%s kd -t 299.5 -n 100 %s", ktrace, dir);
	is_str(out, head(table, 7), "kd -t 299.5: worker included");
	is_int(run("%s kd -f Fcatlmn %s", ktrace, dir), 0, "kd -f Fcatlmn");
	is_str(out, fields, "kd -f Fcatlmn: average before time; each function's most time-consuming child and its calls");
	run("%s kd -s l -f Fl -n 2 %s", ktrace, dir);
	is_str(out,
	       "Function                     Local\n"
	       "------------------------- --------\n"
	       "slow                       450.000\n"
	       "outer                      250.000\n",
	       "kd -s l: sorted by local time");
	run("%s kd -u -f Fcta -n 1 %s", ktrace, dir);
	is_str(out,
	       "Function                  Count     Time  Average\n"
	       "------------------------- ----- -------- --------\n"
	       "main                          1     1000     1000\n",
	       "kd -u: whole microseconds as KFT printed them");
	run("%s kd --tid 101 %s", ktrace, dir);
	ok(strstr(out, "worker ") && !strstr(out, "main ") && strstr(out, "fast                          2"),
	   "kd --tid 101: only that thread's calls");

	is_int(run("%s kd -c %s", ktrace, dir), 0, "kd -c");
	is_str(out, calltrace, "kd -c: nested call traces per thread, '|' per level, signal section marked with '!'");
	run("%s kd -c -l %s", ktrace, dir);
	is_str(out, calltrace_l, "kd -c -l: Entry, Duration, Local per call");
	run("%s kd -c -i %s", ktrace, dir);
	is_str(out, calltrace_i, "kd -c -i: threads interlaced by entry time, switches marked");
	run("%s kd -c -l -i --sort-mem 4K %s", ktrace, dir);
	ok(count_lines(out) == 23 && strstr(out, "     600.000      20.000      20.000     100 |  |  |  fast\n"),
	   "kd -c -l -i with a tiny sort buffer");

	is_int(run("%s addr2sym %s", ktrace, dir), 0, "addr2sym: exit 0");
	is_str(out, listing, "addr2sym: Entry, Delta, PID, Function, Called At in entry order; unfinished Delta 0");
	run("%s addr2sym --unsorted %s", ktrace, dir);
	ok(count_lines(out) == 16 && strstr(out, "     60.000        10.000     101                        fast   worker+0x8\n") ==
						out + strlen(head(listing, 2)),
	   "addr2sym -u: exit order, the first call to end first");
	run("%s addr2sym -l %s", ktrace, dir);
	ok(strstr(out, "Source") && strstr(out, "run_tree+0x8                 calltree.c:"),
	   "addr2sym -l: source file:line of each call site");
	run("%s addr2sym --usec --tid 100 %s", ktrace, dir);
	ok(strstr(out, "      10       1000     100                        main   main+0x4\n") &&
		   !strstr(out, " 101 "),
	   "addr2sym --usec --tid: whole microseconds, one thread");

	/* bad usage */
	is_int(run("%s kd -f Fq %s", ktrace, dir), 2, "kd -f with an unknown letter: usage error");
	ok(strstr(err, "option '-f': 'Fq'") != NULL, "naming the option and value");
	is_int(run("%s kd -x %s", ktrace, dir), 2, "kd: unknown option");
	is_int(run("%s kd -l %s", ktrace, dir), 2, "kd -l without -c: usage error");
	is_int(run("cd / && %s kd", ktrace), 1, "kd without a directory reads ./ktrace.data: none in /");
	is_int(run("%s kd %s/none", ktrace, tmp), 1, "kd on a missing directory: error");
	is_int(run("%s kd -h", ktrace), 0, "kd -h");
	ok(strstr(out, "-c, --calls") && strstr(out, "m the most time-consuming child"),
	   "kd -h explains the options and field letters");
	is_int(run("%s addr2sym --bogus %s", ktrace, dir), 2, "addr2sym: unknown option");
}

static void test_symbol_problems(void)
{
	char dir[512], copy[512];

	/* a stripped copy of the program */
	snprintf(copy, sizeof(copy), "%s/calltree.stripped", tmp);
	if (run("strip -o %s %s", copy, prog) != 0)
		bail_out("strip failed");
	snprintf(dir, sizeof(dir), "%s/stripped", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, copy, "-");
	is_int(run("%s addr2sym -H %s", ktrace, dir), 0, "stripped binary: still exit 0");
	{
		char want[256];

		snprintf(want, sizeof(want), "[calltree.stripped]+0x%llx   [calltree.stripped]+0x%llx\n",
			 (unsigned long long)(addr_of("main") - BIAS),
			 (unsigned long long)(addr_of("main") - BIAS + 4));
		ok(strstr(out, want) != NULL, "stripped: addresses printed as [file]+0xoffset (%s)", want);
	}
	ok(count_lines(err) == 1 && strstr(err, "calltree.stripped: warning: no symbol table (stripped"),
	   "stripped: one warning naming the file");
	run("%s kd %s", ktrace, dir);
	ok(strstr(out, "[calltree.stripped]+0x") && count_lines(err) == 1, "kd on the stripped binary: the same");

	/* -m: the symbols from another copy of the same build */
	run("%s addr2sym -H -m %s %s", ktrace, prog, dir);
	ok(strstr(out, "   main   main+0x4") && !strstr(out, "[calltree"), "addr2sym -m FILE: symbols from FILE");

	/* a file that changed since the trace was taken */
	snprintf(dir, sizeof(dir), "%s/changed", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog,
		    "00112233445566778899aabbccddeeff00112233");
	is_int(run("%s addr2sym -H %s", ktrace, dir), 0, "changed build id: exit 0");
	ok(strstr(out, "[calltree]+0x") && !strstr(out, " main "), "changed build id: addresses, no names");
	ok(count_lines(err) == 1 && strstr(err, "calltree: warning: build id ") &&
		   strstr(err, "differs from the trace's 00112233445566778899aabbccddeeff00112233"),
	   "changed build id: one warning naming the file and both ids");

	/* the file is gone */
	snprintf(dir, sizeof(dir), "%s/gone", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, "/nonexistent/calltree", "-");
	is_int(run("%s kd %s", ktrace, dir), 0, "missing file: exit 0");
	ok(strstr(out, "[calltree]+0x") && count_lines(err) == 1 &&
		   strstr(err, "/nonexistent/calltree: warning: No such file or directory"),
	   "missing file: one warning, addresses");
}

static void test_bad_callsites(void)
{
	char dir[512], path[600];
	int fd;
	uint64_t zero[2] = { 0, 0 };

	/* truncated: entries 8.. are gone */
	snprintf(dir, sizeof(dir), "%s/trunc", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog, "-");
	snprintf(path, sizeof(path), "%s/callsites", dir);
	if (truncate(path, 64 + 16 * 8) != 0)
		bail_out("truncate: %s", strerror(errno));
	is_int(run("%s addr2sym -H %s", ktrace, dir), 1, "truncated callsites: exit 1");
	ok(count_lines(err) == 1 &&
		   strstr(err, "/callsites: offset 192: truncated: entries 8..11 of the 12 in use are missing"),
	   "one error with file and offset");
	ok(count_lines(out) == 16 && strstr(out, "   outer   run_tree+0x8\n") &&
		   strstr(out, "                           ?   ?\n"),
	   "every call still printed; those of the lost entries as ?");
	is_int(run("%s kd %s", ktrace, dir), 1, "kd on it: exit 1");
	ok(strstr(out, "main                          1 1000.000 1000.000  100.000") && strstr(out, "\n?  "),
	   "kd still reports everything, unknown functions as ?");

	/* an entry never written (func 0) */
	snprintf(dir, sizeof(dir), "%s/hole", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog, "-");
	snprintf(path, sizeof(path), "%s/callsites", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, zero, 16, 64 + 16 * 2) != 16)
		bail_out("pwrite: %s", strerror(errno));
	close(fd);
	is_int(run("%s addr2sym -H %s", ktrace, dir), 1, "invalid entry: exit 1");
	ok(count_lines(err) == 1 && strstr(err, "/callsites: offset 96: call-site entry 2 is not valid"),
	   "one error naming the entry's offset");
	ok(count_lines(out) == 16, "all calls printed");

	/* a bad header */
	snprintf(dir, sizeof(dir), "%s/magic", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog, "-");
	snprintf(path, sizeof(path), "%s/callsites", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, "XXXX", 4, 0) != 4)
		bail_out("pwrite: %s", strerror(errno));
	close(fd);
	is_int(run("%s kd -c %s", ktrace, dir), 1, "bad callsites magic: exit 1");
	ok(count_lines(err) == 1 && strstr(err, "/callsites: offset 0: bad magic 0x58585858"),
	   "one error with file and offset");
	ok(count_lines(out) == 20 && strstr(out, "    100 |  |  |  |  ?\n"), "the call trace is still printed");

	/* no callsites file at all */
	unlink(path);
	is_int(run("%s kd %s", ktrace, dir), 1, "missing callsites: exit 1");
	ok(count_lines(err) == 1 && strstr(err, "/callsites: missing"), "said once");
}

/* Store @v at byte @off of DIR/NAME. */
static void poke32(const char *dir, const char *name, off_t off, uint32_t v)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, &v, 4, off) != 4)
		bail_out("pwrite %s: %s", path, strerror(errno));
	close(fd);
}

/*
 * Records that are missing with nothing else saying so (issue 12, item 6):
 * a sub-buffer whose header counts more records (nrec) than its `used`
 * bytes hold, an empty stream file, a trace without calls.  Every reader
 * must name the file and offset and exit 1; kd must not print an empty
 * table.  The expected counts come from this file's own calls[] table.
 */
static void test_missing_records(void)
{
	const char *cmds[] = { "kd", "kd -c", "addr2sym", "print", "export --format=csv -o /dev/null" };
	char dir[512], want[1200];
	unsigned n0 = 0;
	int all = 1;

	for (size_t i = 0; i < NCALLS; i++)
		n0 += calls[i].stream == 0;
	snprintf(dir, sizeof(dir), "%s/nrec", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog, "-");
	poke32(dir, "trace0", 48, n0 + 252); /* nrec */
	snprintf(want, sizeof(want), "/trace0: offset 0: sub-buffer seq 0: nrec says %u records, its %u bytes of records hold %u\n",
		 n0 + 252, 16 * n0, n0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int rc = run("%s %s %s", ktrace, cmds[i], dir);

		if (rc != 1 || count_lines(err) != 1 || !strstr(err, want)) {
			diag("%s: exit %d, stderr: %s", cmds[i], rc, err);
			all = 0;
		}
	}
	ok(all, "nrec above the records found: kd, kd -c, addr2sym, print, export each exit 1 with one line naming file and offset");
	is_int(run("%s kd %s", ktrace, dir), 1, "kd: exit 1");
	ok(strstr(out, "main ") != NULL, "kd: the records that are there are still reported");

	/* used 0 while nrec says there are records, in both streams: no call left */
	poke32(dir, "trace0", 48, n0);
	poke32(dir, "trace0", 40, 0); /* used */
	poke32(dir, "trace1", 40, 0);
	is_int(run("%s kd %s", ktrace, dir), 1, "used 0 with nrec > 0 everywhere: kd exit 1");
	snprintf(want, sizeof(want), "/trace0: offset 0: sub-buffer seq 0: nrec says %u records, its 0 bytes of records hold 0\n", n0);
	ok(strstr(err, want) && strstr(err, "/trace1: offset 0: sub-buffer seq 0: nrec says ") &&
		   strstr(err, ": no function calls to report: the trace holds no CALL record") &&
		   count_lines(err) == 3,
	   "... both sub-buffers named, then: no calls to report");
	is_str(out, "", "... and no empty table");
	is_int(run("%s addr2sym -H %s", ktrace, dir), 1, "addr2sym on it: exit 1");
	ok(strstr(err, ": no function calls to report") != NULL, "... says so too");

	/* an empty stream file */
	snprintf(dir, sizeof(dir), "%s/empty", tmp);
	write_trace(dir, 2, calls, NCALLS, sites, NSITES, prog, "-");
	snprintf(want, sizeof(want), "%s/trace1", dir);
	if (truncate(want, 0) != 0)
		bail_out("truncate: %s", strerror(errno));
	is_int(run("%s kd %s", ktrace, dir), 1, "an empty stream file: kd exit 1");
	ok(count_lines(err) == 1 && strstr(err, "/trace1: offset 0: empty stream file (1 sub-buffer of 1048576 bytes expected)\n"),
	   "... one line naming it: %s", err);
	is_int(run("%s print %s", ktrace, dir), 1, "... print exit 1");

	/* selection that matches nothing, and a trace without CALL records */
	snprintf(dir, sizeof(dir), "%s/syn", tmp);
	is_int(run("%s kd --tid 999 %s", ktrace, dir), 1, "kd --tid matching nothing: exit 1");
	snprintf(want, sizeof(want), ": none of its %u function calls is selected (--tid, --pid, --time-range)\n",
		 (unsigned)NCALLS);
	ok(strstr(err, want) && !out[0], "... says so, no empty table: %s", err);
	snprintf(dir, sizeof(dir), "%s/log2", tmp);
	snprintf(want, sizeof(want), "%s/tests/helpers/mktrace -s 1 -r 10 %s >/dev/null", getenv("KTRACE_BUILD"), dir);
	if (system(want) != 0)
		bail_out("mktrace failed");
	is_int(run("%s kd %s", ktrace, dir), 1, "kd on a trace of static events only: exit 1");
	ok(count_lines(err) == 1 && strstr(err, ": no function calls to report: the trace holds no CALL record") && !out[0],
	   "... one line saying so: %s", err);
}

/*
 * 10000 calls of fast under one main (and 100 of slow > fast below them):
 * far more than the builder keeps pending before merging siblings.
 */
static void test_wide(void)
{
	static struct call wide[20300];
	static const struct site ws[] = {
		{ "main", "main", 4 }, { "fast", "main", 8 }, { "slow", "main", 0xc }, { "fast", "slow", 8 },
	};
	char dir[512];
	size_t n = 0;
	uint64_t t = 100, children = 0;

	for (int i = 0; i < 10000; i++) {
		wide[n++] = (struct call){ 0, 1, t * US, 3 * US + (uint64_t)(i % 7), 1, 0, 0 };
		children += 3 * US + (uint64_t)(i % 7);
		t += 5;
		if (i % 100 == 0) {
			wide[n++] = (struct call){ 0, 3, (t + 1) * US, 1 * US, 2, 0, 0 };
			wide[n++] = (struct call){ 0, 2, t * US, 3 * US, 1, 0, 0 };
			children += 3 * US;
			t += 5;
		}
	}
	wide[n++] = (struct call){ 0, 0, 50 * US, t * US, 0, 0, 0 };
	snprintf(dir, sizeof(dir), "%s/wide", tmp);
	write_trace(dir, 1, wide, n, ws, 4, prog, "-");
	run("%s kd -f Flc %s", ktrace, dir);
	{
		char want[64];
		uint64_t local = t * US - children;

		snprintf(want, sizeof(want), "%llu.%03llu", (unsigned long long)(local / 1000),
			 (unsigned long long)(local % 1000));
		is_str(column(out, "main", 1), want, "10000 siblings: main's local time exact");
		is_str(column(out, "slow", 1), "200.000",
		       "slow's local time exact (3 us minus its 1 us child, 100 times)");
		is_str(column(out, "fast", 2), "10100", "fast counted 10100 times");
	}
	run("%s kd -c -l %s", ktrace, dir);
	{
		static char whole[1 << 20];

		snprintf(whole, sizeof(whole), "%s", out);
		run("%s kd -c -l --sort-mem 16K %s", ktrace, dir);
		ok(strcmp(whole, out) == 0 && count_lines(out) == 10000 + 200 + 1 + 2,
		   "kd -c sorted through temporary files gives the same %d lines", count_lines(out));
	}
}

/*
 * Filtered traces: fast's first call was made by an unrecorded function
 * (depth 1 missing), its second by outer; main gets the orphan and outer.
 */
static void test_orphans(void)
{
	static const struct site os[] = { { "main", "main", 4 }, { "fast", "slow", 8 }, { "outer", "main", 8 },
					  { "fast", "outer", 8 } };
	static const struct call oc[] = {
		{ 0, 1, 10 * US, 5 * US, 2, 0, 0 },   /* fast, its caller (depth 1) not recorded */
		{ 0, 3, 30 * US, 5 * US, 2, 0, 0 },   /* fast in outer */
		{ 0, 2, 25 * US, 20 * US, 1, 0, 0 },  /* outer */
		{ 0, 0, 1 * US, 100 * US, 0, 0, 0 },  /* main */
	};
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/orphans", tmp);
	write_trace(dir, 1, oc, 4, os, 4, prog, "-");
	run("%s kd -f Flm %s", ktrace, dir);
	is_str(out,
	       "Function                     Local Max-child\n"
	       "------------------------- -------- -------------------------\n"
	       "main                        75.000 outer\n"
	       "outer                       15.000 fast\n"
	       "fast                        10.000 -\n",
	       "a call's children are its nearest recorded descendants: main gets the orphan fast");
	run("%s kd -c %s", ktrace, dir);
	ok(strstr(out, "    100 main\n    100 |  fast\n    100 |  outer\n    100 |  |  fast\n") != NULL,
	   "kd -c: the orphan one level below main");
}

/* A kernel function trace: addresses outside every map, named from DIR/kallsyms. */
static void test_kallsyms(void)
{
	static const struct site ks[] = { { "main", "main", 0 }, { "main", "main", 0 } };
	static const struct call kc[] = {
		{ 0, 1, 20 * US, 5 * US, 1, 0, 0 }, /* copy_process */
		{ 0, 0, 10 * US, 30 * US, 0, 0, 0 }, /* do_fork */
	};
	static const uint64_t ent[4] = { 0xffffffff81002000ull, 0xffffffff81001020ull,
					 0xffffffff81001000ull, 0xffffffff81003010ull };
	static const char kallsyms[] = "ffffffff81001000 T do_fork\n"
				       "ffffffff81002000 t copy_process\n"
				       "ffffffff81003000 T other\t[ext4]\n"
				       "0000000000000000 T zero\n";
	char dir[512], path[600];
	int fd;

	snprintf(dir, sizeof(dir), "%s/kern", tmp);
	write_trace(dir, 1, kc, 2, ks, 2, prog, "-");
	snprintf(path, sizeof(path), "%s/callsites", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, ent, sizeof(ent), 64) != (ssize_t)sizeof(ent))
		bail_out("pwrite: %s", strerror(errno));
	close(fd);
	write_file(dir, "kallsyms", kallsyms, sizeof(kallsyms) - 1);
	is_int(run("%s addr2sym -H %s", ktrace, dir), 0, "kernel addresses: exit 0");
	ok(strstr(out, "     do_fork   other+0x10\n") && strstr(out, "copy_process   do_fork+0x20\n") &&
		   !err[0],
	   "kernel functions and call sites named from DIR/kallsyms");
}

int main(void)
{
	const char *build = getenv("KTRACE_BUILD"), *src = getenv("KTRACE_SRC");
	char cmd[2048];

	if (!build || !src)
		bail_out("KTRACE_BUILD and KTRACE_SRC must be set (run through make test)");
	snprintf(tmp, sizeof(tmp), "%s/kft_kd.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		bail_out("mkdtemp: %s", strerror(errno));
	snprintf(ktrace, sizeof(ktrace), "%s/ktrace", build);
	snprintf(prog, sizeof(prog), "%s/calltree", tmp);
	snprintf(cmd, sizeof(cmd), "cc -O0 -g -pthread -o %s %s/tests/kft/calltree.c", prog, src);
	if (system(cmd) != 0)
		bail_out("cannot compile tests/kft/calltree.c");
	load_syms();

	test_known_tree();
	test_symbol_problems();
	test_bad_callsites();
	test_wide();
	test_orphans();
	test_kallsyms();
	test_missing_records();

	if (!tap_failed) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd) != 0)
			diag("cleanup of %s failed", tmp);
	} else {
		diag("traces left in %s", tmp);
	}
	return done_testing();
}

/*
 * tests/kft_config.c - the KFT configuration parser (kft/config.c).
 *
 * Every statement of seed 002's Appendix A, the seed's sample
 * configurations as written, the printer's round trip, and every error
 * class with its line:column and message.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "kft/config.h"
#include "tap.h"

/* A tiny symbol table for the resolver. */
static const struct {
	const char *name;
	kt_u64 addr;
} syms[] = {
	{ "start_kernel", 0xc0008000 }, { "to_userspace", 0xc0009000 }, { "do_fork", 0xc001d804 },
	{ "sys_read", 0xc0020000 },     { "schedule", 0xc02cb754 },     { "mem_init", 0xc0010000 },
	{ "main", 0x401136 },           { "a", 0x1000 },                { "b", 0x2000 },
	{ "_ZN3foo3barEv", 0x3000 },
};

static int resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	int *calls = arg;

	if (calls)
		(*calls)++;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (strlen(syms[i].name) == len && memcmp(syms[i].name, name, len) == 0) {
			*addr = syms[i].addr;
			return 0;
		}
	return -KFT_ENOENT;
}

static struct kft_config cfg;
static struct kft_error err;

static int parse(const char *text)
{
	return kft_config_parse(&cfg, text, strlen(text), resolve, NULL, &err);
}

static void parses(const char *text, const char *what)
{
	int rc = parse(text);

	if (!ok(rc == 0, "parses: %s", what))
		diag("  %u:%u: %s", err.line, err.col, err.msg);
}

/* The error case: position and full message. */
static void refuses(const char *text, unsigned line, unsigned col, const char *msg)
{
	int rc = parse(text);

	ok(rc == -KFT_EINVAL && err.line == line && err.col == col && strcmp(err.msg, msg) == 0,
	   "refused at %u:%u: %s", line, col, msg);
	if (rc != -KFT_EINVAL || err.line != line || err.col != col || strcmp(err.msg, msg) != 0)
		diag("  got rc %d at %u:%u: %s", rc, err.line, err.col, err.msg);
}

static void test_statements(void)
{
	parses("trigger start entry start_kernel\n", "trigger start entry NAME");
	is_int(cfg.start.kind, KFT_TRIG_ENTRY, "start kind entry");
	is_int(cfg.start.arg, 0xc0008000, "start function resolved");
	is_int(cfg.stop.kind, KFT_TRIG_NONE, "no stop trigger");

	parses("trigger stop exit do_fork", "trigger stop exit NAME (no final newline)");
	is_int(cfg.stop.kind, KFT_TRIG_EXIT, "stop kind exit");
	is_int(cfg.stop.arg, 0xc001d804, "stop function");

	parses("trigger start time 10000000\ntrigger stop time 5000\n", "time triggers");
	is_int(cfg.start.kind, KFT_TRIG_TIME, "start kind time");
	is_int(cfg.start.arg, 10000000, "start time us");
	is_int(cfg.stop.kind, KFT_TRIG_TIME, "stop kind time");
	is_int(cfg.stop.arg, 5000, "stop time us");

	parses("trigger start entry 0xc001d804\n", "function by 0x address");
	is_int(cfg.start.arg, 0xc001d804, "address parsed");
	parses("trigger start entry 0XFFFFFFFF81000000\n", "upper-case 64-bit address");
	is_int(cfg.start.arg, 0xffffffff81000000ull, "64-bit address parsed");

	parses("filter mintime 100\nfilter maxtime 5000000\n", "mintime and maxtime");
	ok((cfg.flags & (KFT_CF_MINTIME | KFT_CF_MAXTIME)) == (KFT_CF_MINTIME | KFT_CF_MAXTIME),
	   "time filter flags");
	is_int(cfg.mintime_us, 100, "mintime value");
	is_int(cfg.maxtime_us, 5000000, "maxtime value");

	parses("filter maxtime 0\n", "maxtime 0 (no bound)");
	ok((cfg.flags & KFT_CF_MAXTIME) && cfg.maxtime_us == 0, "maxtime 0 kept as given");

	parses("filter noints\n", "noints");
	ok(cfg.flags & KFT_CF_NOINTS, "noints flag");
	parses("filter onlyints\n", "onlyints");
	ok(cfg.flags & KFT_CF_ONLYINTS, "onlyints flag");

	parses("filter funclist do_fork sys_read fend\n", "funclist by names");
	is_int(cfg.nfuncs, 2, "two functions");
	ok(cfg.funcs[0] == 0xc001d804 && cfg.funcs[1] == 0xc0020000, "funclist addresses in order");
	parses("filter funclist a\n  b # comment\n  0x5000\nfend\nfilter funclist main fend\n",
	       "funclist over lines, twice");
	is_int(cfg.nfuncs, 4, "funclists accumulate");
	is_int(cfg.funcs[2], 0x5000, "address in funclist");
	parses("filter funclist _ZN3foo3barEv fend", "mangled C++ name");

	parses("watch stack 4096\n", "watch stack");
	ok(cfg.watch == KFT_WATCH_STACK && cfg.watch_threshold == 4096, "stack watch threshold");
	parses("watch worst-stack 8192\n", "watch worst-stack");
	ok(cfg.watch == KFT_WATCH_WORST_STACK && cfg.watch_threshold == 8192, "worst-stack threshold");

	parses("logentries 500\n", "logentries");
	ok(cfg.logentries == 500 && (cfg.flags & KFT_CF_LOGENTRIES), "logentries value");
	parses("autorepeat\n", "autorepeat");
	ok(cfg.flags & KFT_CF_AUTOREPEAT, "autorepeat flag");
	parses("prime\n", "prime");
	ok(cfg.flags & KFT_CF_PRIME, "prime flag");

	parses("new\nbegin\n  trigger start entry main\nend\n", "new begin ... end");
	ok((cfg.flags & (KFT_CF_NEW | KFT_CF_BLOCK)) == (KFT_CF_NEW | KFT_CF_BLOCK), "new and block flags");
	parses("begin filter noints end", "a block on one line");
	parses("new trigger start entry main", "new without a block");
	parses("", "empty text");
	ok(cfg.flags == 0 && cfg.start.kind == KFT_TRIG_NONE, "empty text is an empty configuration");
	parses("# only a comment\n\n   \t\n", "comments and blank lines");
	parses("trigger start entry main\r\nfilter noints\r\n", "CRLF line ends");
	parses("filter mintime 5#no space before the comment\n", "comment right after a word");
	is_int(cfg.mintime_us, 5, "number before the comment");
}

/* The seed's sample configurations (Appendix A and the body), as written. */
static void test_seed_samples(void)
{
	parses("  trigger start entry start_kernel\n"
	       "  trigger stop entry to_userspace\n"
	       "  filter mintime 500\n",
	       "seed: bootup sample");
	ok(cfg.start.arg == 0xc0008000 && cfg.stop.kind == KFT_TRIG_ENTRY &&
		   cfg.stop.arg == 0xc0009000 && cfg.mintime_us == 500,
	   "bootup sample values");

	parses("  trigger start entry start_kernel\n"
	       "  trigger stop exit to_userspace\n"
	       "  filter mintime 500\n"
	       "  filter maxtime 0\n"
	       "  filter noints\n",
	       "seed: functions over 500 us during bootup, no interrupts");

	parses("  trigger start entry 0xc001d804\n"
	       "  trigger stop time 5000000\n"
	       "  filter mintime 500\n"
	       "  filter maxtime 0\n"
	       "  filter noints\n",
	       "seed: 5 seconds after the next fork");
	ok(cfg.start.arg == 0xc001d804 && cfg.stop.kind == KFT_TRIG_TIME && cfg.stop.arg == 5000000,
	   "fork sample values");

	parses("  trigger start entry do_fork\n"
	       "  trigger stop exit do_fork\n"
	       "  filter mintime 10\n"
	       "  filter maxtime 400\n"
	       "  filter noints\n"
	       "  logentries 500\n",
	       "seed: short routines called by do_fork, small log");
	ok(cfg.mintime_us == 10 && cfg.maxtime_us == 400 && cfg.logentries == 500, "do_fork sample values");

	parses("  trigger start time 5000000\n"
	       "  trigger stop time 5000\n"
	       "  filter onlyints\n",
	       "seed: interrupts for 5 ms, 5 s after booting");

	parses("  trigger start time 10000000\n"
	       "  filter funclist schedule fend\n",
	       "seed: schedule after 10 s (kftstatic.conf version)");
	ok(cfg.nfuncs == 1 && cfg.funcs[0] == 0xc02cb754, "schedule resolved");

	is_int(kft_config_parse(&cfg,
				"  trigger start time 10000000\n  filter funclist 0xc02cb754 fend\n",
				strlen("  trigger start time 10000000\n  filter funclist 0xc02cb754 fend\n"),
				NULL, NULL, &err),
	       0, "seed: /proc/kft version parses without a resolver");

	parses("trigger start entry do_fork\ntrigger stop exit do_fork\n", "seed: kd -c do_fork trace");
	parses("trigger start entry mem_init\ntrigger stop exit mem_init\n", "seed: watching mem_init()");
}

static void test_errors(void)
{
	refuses("filter mintime 500\nfrobnicate\n", 2, 1,
		"unknown keyword 'frobnicate': expected trigger, filter, watch, logentries, autorepeat or prime");
	refuses("begin\nfrobnicate\nend\n", 2, 1,
		"unknown keyword 'frobnicate': expected trigger, filter, watch, logentries, autorepeat, prime or end");
	refuses("filter funclist a b\ntrigger start entry a\n", 2, 1,
		"expected 'fend' before 'trigger' (funclist begun at 1:8)");
	refuses("filter funclist a b\n", 2, 1, "expected 'fend' to close the funclist begun at 1:8");
	refuses("filter funclist fend\n", 1, 17, "expected at least one function before 'fend'");
	refuses("filter noints\nend\n", 2, 1, "'end' without 'begin'");
	refuses("begin\nfilter noints\n", 3, 1, "expected 'end' to close the block begun at 1:1");
	refuses("trigger stop time 5ms\n", 1, 19,
		"expected a time in microseconds after 'time', found '5ms'");
	refuses("# kft.conf\n\nfilter mintime abc\n", 3, 16,
		"expected a time in microseconds after 'mintime', found 'abc'");
	refuses("filter mintime\nfilter noints\n", 1, 15,
		"expected a time in microseconds after 'mintime'");
	refuses("filter mintime", 1, 15, "expected a time in microseconds after 'mintime'");
	refuses("filter mintime -5\n", 1, 16, "expected a time in microseconds after 'mintime', found '-5'");
	refuses("filter mintime 99999999999999999999\n", 1, 16,
		"number '99999999999999999999' is too large");
	refuses("trigger start entry nosuch_function\n", 1, 21, "unknown function 'nosuch_function'");
	refuses("filter funclist a nosuch b fend\n", 1, 19, "unknown function 'nosuch'");
	refuses("trigger start entry\nfilter noints\n", 1, 20,
		"expected a function name or 0x address after 'entry'");
	refuses("trigger start entry 12345\n", 1, 21,
		"expected a function name or 0x address after 'entry', found '12345'");
	refuses("trigger start exit filter\n", 1, 20,
		"expected a function name or 0x address after 'exit', found 'filter'");
	refuses("trigger start entry 0xzz\n", 1, 21,
		"bad address '0xzz': expected 0x and 1 to 16 hex digits");
	refuses("trigger start entry 0x\n", 1, 21, "bad address '0x': expected 0x and 1 to 16 hex digits");
	refuses("trigger start entry 0x12345678123456789\n", 1, 21,
		"bad address '0x12345678123456789': expected 0x and 1 to 16 hex digits");
	refuses("trigger start entry 0x0\n", 1, 21, "function address 0x0 is not valid");
	refuses("trigger begin entry main\n", 1, 9, "expected 'start' or 'stop' after 'trigger', found 'begin'");
	refuses("trigger\nstart entry main\n", 1, 8, "expected 'start' or 'stop' after 'trigger'");
	refuses("trigger start at main\n", 1, 15,
		"expected 'entry', 'exit' or 'time' after 'start', found 'at'");
	refuses("trigger start entry main\ntrigger start time 5\n", 2, 1,
		"duplicate 'trigger start' (the first is at 1:1)");
	refuses("filter bogus\n", 1, 8,
		"expected mintime, maxtime, noints, onlyints, funclist, notrace or depth after 'filter', found 'bogus'");
	refuses("filter noints\nfilter onlyints\n", 2, 8, "'onlyints' contradicts 'noints' at 1:8");
	refuses("filter mintime 500\nfilter maxtime 400\n", 2, 8,
		"mintime 500 is greater than maxtime 400: no call could be kept");
	refuses("filter mintime 1\nfilter mintime 2\n", 2, 8,
		"duplicate 'filter mintime' (the first is at 1:8)");
	refuses("watch heap 5\n", 1, 7, "expected 'stack' or 'worst-stack' after 'watch', found 'heap'");
	refuses("watch stack\n", 1, 12, "expected a number of bytes after 'stack'");
	refuses("logentries 0\n", 1, 12, "logentries must be at least 1");
	refuses("logentries many\n", 1, 12, "expected a number of entries after 'logentries', found 'many'");
	refuses("autorepeat\nautorepeat\n", 2, 1, "duplicate 'autorepeat' (the first is at 1:1)");
	refuses("filter noints\nnew\n", 2, 1, "'new' must be the first word of a configuration");
	refuses("filter noints\nbegin\nend\n", 2, 1, "'begin' must come before every statement");
	refuses("begin\nbegin\n", 2, 1, "'begin' inside the block begun at 1:1");
	refuses("begin end filter noints\n", 1, 11, "expected nothing after 'end', found 'filter'");
	refuses("fend\n", 1, 1, "'fend' without 'filter funclist' or 'filter notrace'");
	refuses("filter noints\n\x01\n", 2, 1, "unexpected control character 0x1");
	ok(kft_config_parse(&cfg, "filter mintime 5\0\n", 18, resolve, NULL, &err) == -KFT_EINVAL &&
		   err.line == 1 && err.col == 17 && strcmp(err.msg, "unexpected control character 0x0") == 0,
	   "refused at 1:17: a NUL byte");

	/* Long words are quoted short. */
	refuses("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 1, 1,
		"unknown keyword 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...': expected trigger, filter, watch, "
		"logentries, autorepeat or prime");

	/* Without a resolver names are refused (KFT: /proc/kft takes addresses). */
	ok(kft_config_parse(&cfg, "trigger start entry main", 24, NULL, NULL, &err) == -KFT_EINVAL &&
		   err.line == 1 && err.col == 21 &&
		   strcmp(err.msg, "function name 'main' cannot be resolved here: give its 0x address") == 0,
	   "no resolver: names refused with position");

	/* A failed parse leaves an empty configuration. */
	parse("filter noints\nlogentries x\n");
	ok(cfg.flags == 0, "failed parse resets the configuration");

	/* Too many functions. */
	{
		static char big[16384];
		size_t n = 0;

		n += (size_t)sprintf(big + n, "filter funclist");
		for (unsigned i = 0; i <= KFT_FUNCLIST_MAX; i++)
			n += (size_t)sprintf(big + n, " 0x%x", 0x1000 + i);
		sprintf(big + n, " fend\n");
		ok(parse(big) == -KFT_EINVAL && strstr(err.msg, "too many functions") != NULL && err.line == 1,
		   "funclist longer than %u refused", KFT_FUNCLIST_MAX);
	}

	/* The resolver is not called after the first error. */
	{
		int calls = 0;
		const char *t = "filter bogus\ntrigger start entry main\n";

		kft_config_parse(&cfg, t, strlen(t), resolve, &calls, &err);
		is_int(calls, 0, "parsing stops at the first error");
	}
}

static void test_format(void)
{
	char buf[4096], out[256];
	struct kft_config again;
	const char *full = "new\nbegin\n"
			   "trigger start entry do_fork\n"
			   "trigger stop time 5000\n"
			   "filter mintime 10\nfilter maxtime 400\nfilter onlyints\n"
			   "filter funclist a b 0x7000 fend\n"
			   "watch worst-stack 8192\nlogentries 500\nautorepeat\nprime\nend\n";
	kt_u32 n;

	parses(full, "a configuration using every statement");
	n = kft_config_format(&cfg, buf, sizeof(buf), "  ", NULL, NULL);
	ok(n < sizeof(buf) && strlen(buf) == n, "formatted length matches");
	is_str(buf,
	       "new\nbegin\n"
	       "  trigger start entry 0xc001d804\n"
	       "  trigger stop time 5000\n"
	       "  filter mintime 10\n  filter maxtime 400\n  filter onlyints\n"
	       "  filter funclist 0x1000 0x2000 0x7000 fend\n"
	       "  watch worst-stack 8192\n  logentries 500\n  autorepeat\n  prime\nend\n",
	       "formatted as addresses (sym2addr form)");
	ok(kft_config_parse(&again, buf, n, NULL, NULL, &err) == 0 &&
		   memcmp(&again, &cfg, sizeof(cfg)) == 0,
	   "the address form parses back to the same configuration without a resolver");

	n = kft_config_format(&cfg, buf, 16, "", NULL, NULL);
	ok(n > 16 && strlen(buf) == 15, "truncated output reports the full length");

	err.line = 3;
	err.col = 8;
	strcpy(err.msg, "expected a number after 'mintime'");
	kft_error_format(out, sizeof(out), "kft.conf", &err);
	is_str(out, "kft.conf:3:8: expected a number after 'mintime'", "error formatted as FILE:LINE:COL");
	kft_error_format(out, sizeof(out), NULL, &err);
	is_str(out, "3:8: expected a number after 'mintime'", "error without a file name");
}

/* A glob over the same table, with fnmatch(3). */
static int glob(void *arg, const char *pat, kt_u32 len, kt_u64 *addrs, kt_u32 max)
{
	char p[64];
	int n = 0;

	(void)arg;
	snprintf(p, sizeof(p), "%.*s", (int)len, pat);
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (fnmatch(p, syms[i].name, 0) == 0) {
			if ((kt_u32)n < max)
				addrs[n] = syms[i].addr;
			n++;
		}
	return n;
}

static int parse_globs(const char *text)
{
	struct kft_names names = { resolve, glob, NULL, 0 };

	return kft_config_parse_names(&cfg, text, strlen(text), &names, &err);
}

/* filter notrace, filter depth, patterns, combining two configurations. */
static void test_extensions(void)
{
	struct kft_config a, b;
	char buf[4096];

	parses("filter notrace do_fork schedule fend\nfilter depth 3\n", "notrace list and depth");
	ok(cfg.nnotrace == 2 && cfg.notrace_fns[0] == 0xc001d804 && cfg.notrace_fns[1] == 0xc02cb754 &&
		   (cfg.flags & KFT_CF_NOTRACE) && !(cfg.flags & KFT_CF_FUNCLIST),
	   "notrace addresses, not a funclist");
	ok(cfg.max_depth == 3 && (cfg.flags & KFT_CF_DEPTH), "depth 3");
	kft_config_format(&cfg, buf, sizeof(buf), "", NULL, NULL);
	ok(strstr(buf, "filter notrace 0xc001d804 0xc02cb754 fend\n") && strstr(buf, "filter depth 3\n"),
	   "printed back");
	refuses("filter depth 0\n", 1, 14, "depth must be 1 to 65535");
	refuses("filter depth 2\nfilter depth 3\n", 2, 8, "duplicate 'filter depth' (the first is at 1:8)");
	refuses("filter notrace do_fork\n", 2, 1, "expected 'fend' to close the notrace list begun at 1:8");
	refuses("filter funclist s* fend\n", 1, 17,
		"function pattern 's*' cannot be resolved here: name the functions");

	/* a caller whose log is allocated whole (the kernel module) bounds logentries */
	{
		struct kft_names lim = { resolve, NULL, NULL, 1048576 };
		const char *big = "filter mintime 5\nlogentries 99999999999\n";

		is_int(kft_config_parse_names(&cfg, big, strlen(big), &lim, &err), -KFT_EINVAL,
		       "logentries 99999999999 over a 1048576-entry log: refused");
		ok(err.line == 2 && err.col == 12 &&
			   !strcmp(err.msg, "logentries 99999999999 is more than the log can hold (at most 1048576 entries)"),
		   "  at 2:12, saying the limit (got %u:%u: %s)", err.line, err.col, err.msg);
		is_int(kft_config_parse_names(&cfg, "logentries 1048576", 18, &lim, &err), 0,
		       "logentries 1048576: accepted");
		is_int(parse("logentries 99999999999\n"), 0, "without a limit (user space): accepted");
		ok(cfg.logentries == 99999999999ull, "  as 99999999999");
	}
	is_int(parse_globs("filter funclist s* fend\n"), 0, "a pattern in a funclist");
	ok(cfg.nfuncs == 3 && cfg.funcs[0] == 0xc0008000 && cfg.funcs[1] == 0xc0020000 &&
		   cfg.funcs[2] == 0xc02cb754,
	   "every match: start_kernel, sys_read, schedule");
	is_int(parse_globs("trigger start entry do_f*\n"), 0, "a pattern matching one function in a trigger");
	is_int(cfg.start.arg, 0xc001d804, "its address");
	is_int(parse_globs("trigger start entry s*\n"), -KFT_EINVAL, "a pattern matching three in a trigger");
	is_str(err.msg, "pattern 's*' matches 3 functions: a trigger needs exactly one", "says so");
	is_int(parse_globs("filter notrace zz* fend\n"), -KFT_EINVAL, "a pattern matching nothing");
	is_str(err.msg, "no function matches 'zz*'", "says so");

	parse("filter funclist a fend\nfilter mintime 5\ntrigger start entry main\n");
	a = cfg;
	parse("filter funclist b fend\nfilter depth 4\ntrigger stop exit do_fork\n");
	b = cfg;
	is_int(kft_config_merge(&a, &b, &err), 0, "merge: lists add up, other statements join");
	ok(a.nfuncs == 2 && a.funcs[1] == 0x2000 && a.max_depth == 4 && a.stop.arg == 0xc001d804 &&
		   a.start.arg == 0x401136 && a.mintime_us == 5,
	   "the merged configuration has both");
	parse("filter mintime 7\n");
	b = cfg;
	is_int(kft_config_merge(&a, &b, &err), -KFT_EINVAL, "merge: mintime twice");
	is_str(err.msg, "'filter mintime' given twice", "says which");
	is_int(a.mintime_us, 5, "the destination is unchanged");
	parse("filter maxtime 2\n");
	b = cfg;
	is_int(kft_config_merge(&a, &b, &err), -KFT_EINVAL, "merge: maxtime below mintime");
}

int main(void)
{
	test_statements();
	test_extensions();
	test_seed_samples();
	test_errors();
	test_format();
	return done_testing();
}

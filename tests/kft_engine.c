/*
 * tests/kft_engine.c - the KFT run engine (kft/engine.c) on synthetic call
 * sequences with known times.
 *
 * A small simulator plays the part of the hooks: it keeps a shadow stack,
 * calls kft_entry()/kft_exit() with times we choose, honours KFT_MARK and
 * KFT_FLUSH, and collects the records the engine approves.  The clock is
 * in microseconds (raw_per_sec = 1000000), so configuration times are raw
 * times.  The standard program is this call tree:
 *
 *   main   1000..2000  (1000 us)
 *     a    1010..1100  (90)
 *       b  1020..1030  (10)
 *       b  1040..1045  (5)
 *     c    1200..1700  (500)
 *       b  1300..1310  (10)
 *       d  1400..1450  (50, inside a signal handler)
 *     a    1800..1900  (100)
 *       b  1810..1811  (1)
 */
#include <stdio.h>
#include <string.h>

#include "kft/engine.h"
#include "tap.h"

enum { MAIN = 0x100, A = 0x200, B = 0x300, C = 0x400, D = 0x500 };

struct rec {
	kt_u64 fn, entry, exit;
	unsigned flags, depth, sig;
};

struct frame {
	kt_u64 fn, t, stack_left;
	unsigned flags, sig;
};

struct sim {
	struct kft_run *r;
	struct kft_counters c;
	struct kft_thread t;
	struct frame st[64];
	int depth;
	unsigned sig;
	struct rec recs[256];
	int nrec;
	int room; /* records the "buffer" still takes (-1: unlimited) */
};

static struct kft_run run;

static void sim_init(struct sim *s, struct kft_run *r)
{
	memset(s, 0, sizeof(*s));
	s->r = r;
	s->t.c = &s->c;
	s->room = -1;
}

/* Write a record the engine approved (the hooks' kt_write()). */
static void emit(struct sim *s, unsigned rec, const struct frame *f, int depth, kt_u64 now)
{
	if (!(rec & KFT_REC))
		return;
	if (s->room == 0) {
		kft_lost(s->r, &s->t, rec, now);
		return;
	}
	if (s->room > 0)
		s->room--;
	s->recs[s->nrec++] = (struct rec){ f->fn, f->t, now, KFT_REC_FLAGS(rec), (unsigned)depth, f->sig };
}

static void handle(struct sim *s, unsigned res, kt_u64 now)
{
	if (res & KFT_MARK)
		for (int i = s->depth - 1; i >= 0 && !(s->st[i].flags & KFT_FRAME_WATCH); i--)
			s->st[i].flags |= KFT_FRAME_WATCH;
	if (res & KFT_FLUSH)
		for (int i = s->depth - 1; i >= 0 && s->st[i].t >= kft_flush_from(&s->t); i--) {
			struct frame *f = &s->st[i];

			emit(s, kft_unfinished(s->r, &s->t, f->fn, f->t, f->sig, f->flags, KFT_UNF_FLUSH, now),
			     f, i, now);
			f->flags |= KFT_FRAME_DONE;
		}
}

static void enter(struct sim *s, kt_u64 fn, kt_u64 now, kt_u64 stack_left)
{
	struct frame *f = &s->st[s->depth++];

	unsigned fl;

	*f = (struct frame){ fn, now, stack_left, 0, s->sig };
	handle(s, kft_entry(s->r, &s->t, fn, now, stack_left), now);
	/* as the hooks do: funclist, notrace and depth may drop it untimed */
	fl = kft_entry_filter(s->r, &s->t, fn, (unsigned)(s->depth - 1));
	if (fl & KFT_FRAME_UNLISTED)
		f->t = 0;
	f->flags |= fl;
}

static void leave(struct sim *s, kt_u64 fn, kt_u64 now)
{
	struct frame f = s->st[--s->depth];
	unsigned res;

	if (f.fn != fn)
		bail_out("simulator: exit of %#llx does not match %#llx", (unsigned long long)fn,
			 (unsigned long long)f.fn);
	if (f.flags & KFT_FRAME_UNLISTED) {
		kft_exit_unlisted(s->r, &s->t, fn, f.sig, (unsigned)s->depth);
		return;
	}
	res = kft_exit(s->r, &s->t, fn, f.t, now, f.sig, f.flags);
	emit(s, res, &f, s->depth, now);
	handle(s, res & ~KFT_MARK, now);
}

/* The standard program; stack_left shrinks with depth (8000, 7000, ...). */
static void program(struct sim *s)
{
	enter(s, MAIN, 1000, 8000);
	enter(s, A, 1010, 7000);
	enter(s, B, 1020, 6000);
	leave(s, B, 1030);
	enter(s, B, 1040, 6000);
	leave(s, B, 1045);
	leave(s, A, 1100);
	enter(s, C, 1200, 7000);
	enter(s, B, 1300, 6000);
	leave(s, B, 1310);
	s->sig = 1;
	enter(s, D, 1400, 5000);
	leave(s, D, 1450);
	s->sig = 0;
	leave(s, C, 1700);
	enter(s, A, 1800, 7000);
	enter(s, B, 1810, 6000);
	leave(s, B, 1811);
	leave(s, A, 1900);
	leave(s, MAIN, 2000);
}

static struct kft_status status(struct sim *s)
{
	struct kft_status st;

	kft_status_begin(s->r, &st);
	kft_status_add(&st, &s->c);
	return st;
}

static int parse_load(const char *text, kt_u64 now)
{
	struct kft_config cfg;
	struct kft_error err;

	kft_run_init(&run, 1000000, 0);
	if (kft_config_parse(&cfg, text, strlen(text), NULL, NULL, &err) < 0) {
		diag("config error %u:%u: %s", err.line, err.col, err.msg);
		return -1;
	}
	return kft_load(&run, &cfg, now);
}

/* Run the standard program under @text; return the simulator. */
static struct sim *play(const char *text)
{
	static struct sim s;

	if (parse_load(text, 500) < 0)
		bail_out("cannot load %s", text);
	sim_init(&s, &run);
	program(&s);
	return &s;
}

/* "fn@entry-exit[U][W]" of every record, space separated. */
static const char *list(struct sim *s)
{
	static char buf[4096];
	size_t n = 0;
	const char *names = "?mabcd";

	buf[0] = '\0';
	for (int i = 0; i < s->nrec; i++) {
		struct rec *r = &s->recs[i];

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%c%llu-%llu%s%s", i ? " " : "",
				      names[r->fn >> 8], (unsigned long long)r->entry,
				      (unsigned long long)r->exit,
				      (r->flags & KTRACE_CALLF_UNFINISHED) ? "U" : "",
				      (r->flags & KTRACE_CALLF_WATCH) ? "W" : "");
	}
	return buf;
}

static void test_states(void)
{
	struct sim *s;
	struct kft_status st;

	/* Nothing configured: nothing recorded, commands refused. */
	kft_run_init(&run, 1000000, 0);
	{
		static struct sim u;

		sim_init(&u, &run);
		program(&u);
		is_int(u.nrec, 0, "unconfigured: nothing recorded");
		is_int(kft_command(&run, KFT_CMD_PRIME, 10), -KFT_EBUSY, "unconfigured: prime refused");
		is_int(kft_command(&run, KFT_CMD_START, 10), -KFT_EBUSY, "unconfigured: start refused");
		is_int(kft_command(&run, 99, 10), -KFT_EINVAL, "unknown command refused");
	}

	/* Loaded, not primed. */
	s = play("trigger start entry 0x400\n");
	is_int(s->nrec, 0, "configured but not primed: nothing recorded");
	st = status(s);
	is_int(st.state, KFT_STATE_CONFIGURED, "state configured");
	is_int(kft_command(&run, KFT_CMD_STOP, 10), -KFT_EBUSY, "stop refused when only configured");

	/* Prime without a start trigger: runs at once. */
	s = play("prime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100 b1300-1310 d1400-1450 c1200-1700 b1810-1811 "
			"a1800-1900 m1000-2000",
	       "no triggers: every call, in exit order, with entry and exit times");
	st = status(s);
	is_int(st.state, KFT_STATE_RUNNING, "still running at the end");
	is_int(st.start_reason, KFT_REASON_PRIME, "start reason prime");
	is_int(st.start_time, 500, "start time is the prime time");
	is_int(st.kept, 9, "kept counts every record");
	is_int(kft_command(&run, KFT_CMD_PRIME, 3000), -KFT_EBUSY, "prime refused while running");
	is_int(kft_command(&run, KFT_CMD_STOP, 3000), 0, "stop command");
	st = status(s);
	ok(st.state == KFT_STATE_STOPPED && st.stop_reason == KFT_REASON_COMMAND && st.stop_time == 3000,
	   "stopped by command at 3000");
	is_int(kft_command(&run, KFT_CMD_PRIME, 3100), 0, "re-prime after stop");
	is_int(status(s).state, KFT_STATE_RUNNING, "re-primed run without trigger starts");
	is_int(status(s).run, 2, "second run");
}

static void test_triggers(void)
{
	struct sim *s;
	struct kft_status st;

	s = play("trigger start entry 0x400\nprime\n");
	is_str(list(s), "b1300-1310 d1400-1450 c1200-1700 b1810-1811 a1800-1900",
	       "start entry c: c's subtree and later, not main (entered before)");
	st = status(s);
	ok(st.start_reason == KFT_REASON_ENTRY && st.start_by == C && st.start_time == 1200,
	   "started by entry to c at 1200");

	s = play("trigger start exit 0x400\nprime\n");
	is_str(list(s), "b1810-1811 a1800-1900", "start exit c: calls entered after c returned");
	st = status(s);
	ok(st.start_reason == KFT_REASON_EXIT && st.start_by == C && st.start_time == 1700,
	   "started by exit from c at 1700");

	s = play("trigger stop entry 0x400\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100 c1200-1200U m1000-1200U",
	       "stop entry c: earlier calls, then c and main unfinished (KFT's Delta 0)");
	st = status(s);
	ok(st.state == KFT_STATE_STOPPED && st.stop_reason == KFT_REASON_ENTRY && st.stop_by == C &&
		   st.stop_time == 1200,
	   "stopped by entry to c at 1200");
	is_int(st.unfinished, 2, "two unfinished entries");
	is_int(st.kept, 5, "unfinished entries count as kept");

	s = play("trigger stop exit 0x400\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100 b1300-1310 d1400-1450 c1200-1700 m1000-1700U",
	       "stop exit c: c recorded, main unfinished");
	st = status(s);
	ok(st.stop_reason == KFT_REASON_EXIT && st.stop_time == 1700, "stopped by exit from c at 1700");

	s = play("trigger start entry 0x200\ntrigger stop exit 0x200\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100", "start entry a, stop exit a: first a only (do_fork sample)");
	is_int(status(s).state, KFT_STATE_STOPPED, "stopped after the first a");

	s = play("trigger start entry 0x200\ntrigger stop exit 0x200\nautorepeat\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100 b1810-1811 a1800-1900",
	       "autorepeat: both a subtrees");
	st = status(s);
	ok(st.state == KFT_STATE_PRIMED && st.run == 2, "autorepeat re-primed after two runs");

	s = play("trigger start time 1150\nprime\n");
	is_str(list(s), "b1300-1310 d1400-1450 c1200-1700 b1810-1811 a1800-1900",
	       "start time 1150 us: calls entered from 1150");
	st = status(s);
	ok(st.start_reason == KFT_REASON_TIME && st.start_time == 1150, "start time is the trigger time");

	s = play("trigger start entry 0x400\ntrigger stop time 250\nprime\n");
	is_str(list(s), "b1300-1310 d1400-1450U c1200-1450U",
	       "stop time 250 us after c's entry: stops at 1450 when d returns; d and c open then, unfinished");
	st = status(s);
	ok(st.stop_reason == KFT_REASON_TIME && st.stop_time == 1450, "stopped by time at 1450");

	s = play("trigger stop time 100\nautorepeat\nprime\n");
	st = status(s);
	ok(st.run > 5, "autorepeat with a stop time and no start trigger: consecutive runs (%u)", st.run);
}

static void test_filters(void)
{
	struct sim *s;
	struct kft_status st;

	s = play("filter mintime 10\nprime\n");
	is_str(list(s), "b1020-1030 a1010-1100 b1300-1310 d1400-1450 c1200-1700 a1800-1900 m1000-2000",
	       "mintime 10: 10 us kept, 5 and 1 us dropped");
	st = status(s);
	ok(st.filtered[KFT_FILTER_MINTIME] == 2 && st.filtered_total == 2, "mintime filtered 2");

	s = play("filter maxtime 90\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100 b1300-1310 d1400-1450 b1810-1811",
	       "maxtime 90: 90 us kept, longer dropped");
	is_int(status(s).filtered[KFT_FILTER_MAXTIME], 3, "maxtime filtered 3");

	s = play("filter mintime 10\nfilter maxtime 100\nprime\n");
	is_str(list(s), "b1020-1030 a1010-1100 b1300-1310 d1400-1450 a1800-1900", "mintime 10 and maxtime 100");

	s = play("filter maxtime 0\nprime\n");
	is_int(s->nrec, 9, "maxtime 0: no upper bound");

	s = play("filter funclist 0x300 0x400 fend\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 b1300-1310 c1200-1700 b1810-1811", "funclist b c");
	is_int(status(s).filtered[KFT_FILTER_FUNCLIST], 4, "funclist filtered 4");

	s = play("filter notrace 0x300 fend\nprime\n");
	is_str(list(s), "a1010-1100 d1400-1450 c1200-1700 a1800-1900 m1000-2000", "notrace b");
	is_int(status(s).filtered[KFT_FILTER_NOTRACE], 4, "notrace filtered 4");

	s = play("filter depth 2\nprime\n");
	is_str(list(s), "a1010-1100 c1200-1700 a1800-1900 m1000-2000", "depth 2: main and its callees");
	is_int(status(s).filtered[KFT_FILTER_DEPTH], 5, "depth filtered 5");

	s = play("filter depth 2\nwatch stack 10\nprime\n");
	is_str(list(s), "a1010-1100 c1200-1700 a1800-1900 m1000-2000",
	       "depth 2 with a watch (deep calls timed, dropped at their exit)");
	is_int(status(s).filtered[KFT_FILTER_DEPTH], 5, "depth filtered 5 at the exit");

	s = play("filter noints\nprime\n");
	ok(strstr(list(s), "d") == NULL && s->nrec == 8, "noints: the signal handler's call dropped");
	is_int(status(s).filtered[KFT_FILTER_INTS], 1, "ints filtered 1");

	s = play("filter onlyints\nprime\n");
	is_str(list(s), "d1400-1450", "onlyints: only the signal handler's call");
	is_int(status(s).filtered[KFT_FILTER_INTS], 8, "ints filtered 8");

	s = play("filter mintime 10\nfilter funclist 0x300 fend\nprime\n");
	st = status(s);
	ok(st.filtered[KFT_FILTER_FUNCLIST] == 5 && st.filtered[KFT_FILTER_MINTIME] == 2 && st.kept == 2,
	   "a call counts under the first filter that drops it");

	s = play("filter mintime 10\ntrigger stop entry 0x400\nprime\n");
	is_str(list(s), "b1020-1030 a1010-1100 c1200-1200U m1000-1200U",
	       "unfinished entries ignore time filters (seed: start_kernel with Delta 0)");
}

static void test_logentries_and_full(void)
{
	struct sim *s;
	struct kft_status st;

	s = play("logentries 3\nprime\n");
	is_str(list(s), "b1020-1030 b1040-1045 a1010-1100", "logentries 3: three records");
	st = status(s);
	ok(st.state == KFT_STATE_STOPPED && st.stop_reason == KFT_REASON_LOGENTRIES, "stopped by logentries");
	ok(st.kept == 3 && st.pool == 0, "kept 3, pool empty");

	s = play("logentries 4\nfilter mintime 10\nprime\n");
	is_str(list(s), "b1020-1030 a1010-1100 b1300-1310 d1400-1450", "logentries counts kept entries only");

	/* Buffer exhaustion: the "buffer" takes 2 records. */
	if (parse_load("prime\n", 500) < 0)
		bail_out("load");
	{
		static struct sim f;

		sim_init(&f, &run);
		f.room = 2;
		program(&f);
		is_int(f.nrec, 2, "buffer full after 2 records");
		st = status(&f);
		ok(st.state == KFT_STATE_STOPPED && st.stop_reason == KFT_REASON_FULL,
		   "buffer exhaustion stops the run");
		/* The third call, then main reported unfinished at the stop: both refused. */
		ok(st.lost == 2 && st.kept == 2, "records refused by the full buffer counted as lost, kept 2");
		if (st.lost != 2 || st.kept != 2)
			diag("lost %llu kept %llu", (unsigned long long)st.lost, (unsigned long long)st.kept);
	}
}

static void test_commands_and_flush(void)
{
	static struct sim s;
	struct kft_status st;

	/* A run started and stopped by command while the program runs. */
	if (parse_load("trigger start entry 0x999\n", 500) < 0)
		bail_out("load");
	sim_init(&s, &run);
	enter(&s, MAIN, 1000, 8000);
	enter(&s, C, 1200, 7000);
	is_int(kft_command(&run, KFT_CMD_START, 1250), 0, "start command (configured, not primed)");
	enter(&s, B, 1300, 6000);
	is_int(kft_command(&run, KFT_CMD_STOP, 1305), 0, "stop command");
	leave(&s, B, 1310);
	leave(&s, C, 1700);
	leave(&s, MAIN, 2000);
	is_str(list(&s), "b1300-1310U", "only the call open at the stop and entered after the start, unfinished");
	st = status(&s);
	ok(st.start_reason == KFT_REASON_COMMAND && st.stop_reason == KFT_REASON_COMMAND,
	   "start and stop reasons: command");

	/* Loading a new configuration stops the run and restarts the counters. */
	if (parse_load("prime\n", 500) < 0)
		bail_out("load");
	sim_init(&s, &run);
	program(&s);
	{
		struct kft_config cfg;

		kft_config_init(&cfg);
		cfg.flags = KFT_CF_MINTIME;
		cfg.mintime_us = 1;
		is_int(kft_load(&run, &cfg, 2100), 0, "load while running");
		st = status(&s);
		ok(st.state == KFT_STATE_CONFIGURED && st.gen == 3 && st.kept == 0 && st.writers == 0,
		   "new generation: configured, old counters not summed");
		enter(&s, MAIN, 2200, 8000);
		st = status(&s);
		ok(st.writers == 1 && st.kept == 0, "the writer reset its counters when it saw the new generation");
		if (st.writers != 1 || st.kept != 0)
			diag("writers %u kept %llu", st.writers, (unsigned long long)st.kept);
		cfg.nfuncs = KFT_FUNCLIST_MAX + 1;
		is_int(kft_load(&run, &cfg, 2300), -KFT_EINVAL, "an inconsistent configuration is refused");
	}
}

static void test_two_writers(void)
{
	static struct sim s1, s2;
	struct kft_status st;

	if (parse_load("trigger stop entry 0x400\nprime\n", 500) < 0)
		bail_out("load");
	sim_init(&s1, &run);
	sim_init(&s2, &run);
	enter(&s1, MAIN, 1000, 8000);
	enter(&s2, A, 1005, 8000);
	enter(&s2, B, 1100, 7000);
	leave(&s2, B, 1150);
	enter(&s1, C, 1200, 7000); /* stops the run */
	is_str(list(&s1), "c1200-1200U m1000-1200U", "writer 1 flushes its frames at the stop");
	leave(&s2, A, 1300);       /* writer 2 learns of the stop here */
	is_str(list(&s2), "b1100-1150 a1005-1300U", "writer 2 reports its open call as unfinished");
	kft_status_begin(&run, &st);
	kft_status_add(&st, &s1.c);
	kft_status_add(&st, &s2.c);
	ok(st.writers == 2 && st.kept == 4 && st.unfinished == 3, "status sums both writers");
	ok(kft_idle(&s1.t), "stopped run with no trigger left: idle (no clock needed)");
}

static void test_watches(void)
{
	struct sim *s;
	struct kft_status st;

	/* stack watch below 5500 bytes left: d (5000) fires, marking main, c, d. */
	s = play("watch stack 5500\nfilter mintime 100000\nprime\n");
	is_str(list(s), "d1400-1450W c1200-1700W m1000-2000W",
	       "stack watch: the call stack at the low point is kept whatever the filters");
	st = status(s);
	ok(st.marks == 1 && st.lowest_stack == 5000, "fired once, lowest stack 5000");

	/* worst-stack from 6500: fires at the first b (6000), then only below that. */
	s = play("watch worst-stack 6500\nfilter mintime 100000\nprime\n");
	is_str(list(s), "b1020-1030W a1010-1100W d1400-1450W c1200-1700W m1000-2000W",
	       "worst-stack: each new low marks its stack");
	st = status(s);
	ok(st.marks == 2 && st.watch_threshold == 5000, "fired twice, threshold lowered to 5000");
}

static void test_skip(void)
{
	static struct sim s;

	/* A longjmp from b back into main: a and b never return. */
	if (parse_load("prime\n", 500) < 0)
		bail_out("load");
	sim_init(&s, &run);
	enter(&s, MAIN, 1000, 8000);
	enter(&s, A, 1010, 7000);
	enter(&s, B, 1020, 6000);
	while (s.depth > 1) {
		struct frame *f = &s.st[--s.depth];

		if (f->t >= kft_open_from(&s.t))
			emit(&s, kft_unfinished(&run, &s.t, f->fn, f->t, f->sig, f->flags, KFT_UNF_SKIP, 1500),
			     f, s.depth, 1500);
	}
	leave(&s, MAIN, 2000);
	is_str(list(&s), "b1020-1500U a1010-1500U m1000-2000", "frames skipped by longjmp are unfinished");
}

static void test_clock_and_status(void)
{
	struct kft_run r;
	struct kft_status st;
	char buf[2048];

	kft_run_init(&r, 2596000000ull, 0);
	is_int(kft_us_to_raw(&r, 500), 1298000, "500 us at 2.596 GHz");
	is_int(kft_us_to_raw(&r, 10000000), 25960000000ull, "10 s at 2.596 GHz");
	ok(kft_raw_to_ns(&r, 2596) >= 999 && kft_raw_to_ns(&r, 2596) <= 1000, "2596 ticks ~ 1000 ns");
	is_int(kft_us_to_raw(&r, ~0ull), ~0ull, "conversion saturates");
	kft_run_init(&r, 1000000000ull, 0);
	is_int(kft_us_to_raw(&r, 7), 7000, "ns clock: exact");
	is_int(kft_mul_shift(~0ull, 1ull << 32, 32), ~0ull, "mul_shift keeps the high half");

	if (parse_load("trigger start entry 0x400\ntrigger stop entry 0x500\nfilter mintime 10\nprime\n", 500) < 0)
		bail_out("load");
	{
		static struct sim s;

		sim_init(&s, &run);
		program(&s);
		kft_status_begin(&run, &st);
		kft_status_add(&st, &s.c);
	}
	kft_status_format(&run, &st, buf, sizeof(buf), NULL, NULL);
	ok(strstr(buf, "state: stopped\n") && strstr(buf, "started: 1200 us by entry to 0x400\n") &&
		   strstr(buf, "stopped: 1400 us by entry to 0x500\n") &&
		   strstr(buf, "entries kept: 3\n") &&
		   strstr(buf, "entries filtered: 0 (ints 0, funclist 0, mintime 0, maxtime 0)\n") &&
		   strstr(buf, "  trigger start entry 0x400\n"),
	   "status text (as cat /proc/kft)");
	if (!strstr(buf, "state: stopped"))
		diag("%s", buf);
	ok(kft_status_format(&run, &st, buf, 10, NULL, NULL) > 10 && strlen(buf) == 9,
	   "status text truncates safely");
}

int main(void)
{
	test_states();
	test_triggers();
	test_filters();
	test_logentries_and_full();
	test_commands_and_flush();
	test_two_writers();
	test_watches();
	test_skip();
	test_clock_and_status();
	return done_testing();
}

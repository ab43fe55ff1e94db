/*
 * tests/signal_nesting.c - a signal handler that logs while its thread is
 * in the middle of a logging call corrupts and loses neither record.
 *
 * Part 1 is deterministic: it puts the thread in "inside a logging call"
 * state (the runtime's nesting depth, white-box) and logs, as a handler
 * would: the record must go to the shared stream with depth 1 in its
 * context word.  Part 2 is the real thing: the thread logs in a loop while
 * a 20 us timer of its own (SIGEV_THREAD_ID, so the kernel interrupts this
 * very thread wherever it is) raises SIGUSR1, whose handler logs too.  Every record
 * of both must be read back exactly once and untorn, and some handler
 * records must have really interrupted a write (depth > 0).
 */
#include <errno.h>
#include <sys/syscall.h>
#include <signal.h>
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "../lib/runtime.h"
#include "tap.h"
#include "walk.h"

#define MAIN_N 4000000 /* at most; the loop stops after WANT_NESTED interruptions */
#define WANT_NESTED 200
#define SIG_MAX 40000
#define CHECK 0x5555aaaa5555aaaaull

static volatile uint32_t sig_count, sig_nested;
static uint8_t *seen_main, *seen_sig;
static uint64_t bad, nested_in_shared, sig_in_shared, main_n;

static void handler(int sig)
{
	uint32_t n = sig_count;

	(void)sig;
	if (n >= SIG_MAX)
		return;
	if (kt_tls.depth > 0)
		sig_nested++;
	ktrace_log2(3, KT_EVENT_USER + 1, n, n ^ CHECK);
	sig_count = n + 1;
}

/* A timer that sends SIGUSR1 to the calling thread every 20 us. */
static timer_t start_timer(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1 };
	struct itimerspec its = { .it_interval = { 0, 20000 }, .it_value = { 0, 20000 } };
	timer_t tm;

	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) || timer_settime(tm, 0, &its, NULL))
		bail_out("timer: %s", strerror(errno));
	return tm;
}

static void on_rec(const struct walk_rec *r, void *arg)
{
	uint64_t a = r->payload[0];
	unsigned ev = KTRACE_EVENT_CODE(KTRACE_REC_ID(r->hdr));

	(void)arg;
	if (ev == KT_EVENT_USER && a < main_n && r->payload[1] == ~a) {
		seen_main[a]++;
	} else if (ev == KT_EVENT_USER + 1 && a < SIG_MAX && r->payload[1] == (a ^ CHECK)) {
		seen_sig[a]++;
		if (r->ctx) {
			sig_in_shared++;
			if (KTRACE_CTX_DEPTH(r->ctx) > 0)
				nested_in_shared++;
		}
	} else if (ev == KT_EVENT_USER + 2 && r->ctx && KTRACE_CTX_DEPTH(r->ctx) == 1) {
		nested_in_shared += 1000000; /* part 1's marker */
	} else {
		bad++;
	}
}

int main(void)
{
	const char *root = walk_tmpdir("signal");
	/* 128 MiB per stream: room for MAIN_N records of 24 bytes. */
	struct ktrace_options o = { .root = root, .name = "sig", .buf_size = 1 << 20,
				    .buf_nr = 128, .nthreads = 1 };
	struct ktrace_channel *ch = ktrace_setup_opts(&o);
	struct ktrace_stats st;
	struct walk_stats ws;
	timer_t tm;
	char dir[4200];
	uint64_t missing = 0, dup = 0;

	if (!ch)
		bail_out("setup: %s", ktrace_error());
	plan(6);
	ktrace_start(ch);

	/* Part 1: a record written "inside" another goes to the shared stream. */
	kt_tls.depth = 1;
	ktrace_log2(3, KT_EVENT_USER + 2, 1, 2);
	kt_tls.depth = 0;

	/* Part 2: real signals. */
	signal(SIGUSR1, handler);
	tm = start_timer();
	/* Log until enough signals have landed inside a logging call. */
	for (main_n = 0; main_n < MAIN_N && sig_nested < WANT_NESTED; main_n++)
		ktrace_log2(3, KT_EVENT_USER, main_n, ~main_n);
	timer_delete(tm);
	signal(SIGUSR1, SIG_IGN);
	ktrace_stop(ch);
	ktrace_get_stats(ch, &st);

	seen_main = calloc(MAIN_N, 1);
	seen_sig = calloc(SIG_MAX, 1);
	snprintf(dir, sizeof(dir), "%s/sig", root);
	ws = walk_trace(dir, on_rec, NULL);
	for (uint32_t i = 0; i < main_n; i++) {
		missing += !seen_main[i];
		dup += seen_main[i] > 1;
	}
	for (uint32_t i = 0; i < sig_count; i++) {
		missing += !seen_sig[i];
		dup += seen_sig[i] > 1;
	}
	diag("%llu records, %u handler records, %u of them interrupted a logging call",
	     (unsigned long long)main_n, sig_count, sig_nested);
	ok(nested_in_shared >= 1000000, "a nested record goes to the shared stream with depth 1");
	is_int(st.dropped, 0, "nothing dropped");
	ok(ws.bad == 0 && bad == 0, "no torn or corrupt record (structure %llu, payload %llu)",
	   (unsigned long long)ws.bad, (unsigned long long)bad);
	ok(missing == 0 && dup == 0, "every record read back exactly once (missing %llu, dup %llu)",
	   (unsigned long long)missing, (unsigned long long)dup);
	ok(sig_nested > 0, "signals really interrupted logging calls (%u times)", sig_nested);
	is_int(nested_in_shared - 1000000, sig_nested,
	       "each interrupting handler record is in the shared stream with depth > 0");
	ktrace_cleanup(ch);
	return done_testing();
}

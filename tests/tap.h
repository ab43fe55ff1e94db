/*
 * tests/tap.h - a minimal Test Anything Protocol producer for the C tests.
 *
 * Header-only so each test is one file.  Output goes to stdout, diagnostics
 * to stderr as "# ..." lines; prove(1) reads both.  Usage:
 *
 *     plan(3);                  or  nothing, and done_testing() at the end
 *     ok(x == 1, "x is one");
 *     is_int(got, 4, "four");
 *     is_str(s, "abc", "abc");
 *     return done_testing();    exit status: 0 if every test passed
 *
 * Not thread-safe: call from one thread.
 */
#ifndef KTRACE_TESTS_TAP_H
#define KTRACE_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_run, tap_failed, tap_planned = -1;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}

#define is_int(got, want, ...)                                                          \
	do {                                                                            \
		long long g_ = (long long)(got), w_ = (long long)(want);                \
		if (!ok(g_ == w_, __VA_ARGS__))                                         \
			diag("  got %lld, expected %lld (%s:%d)", g_, w_, __FILE__, __LINE__); \
	} while (0)

#define is_str(got, want, ...)                                                           \
	do {                                                                             \
		const char *g_ = (got), *w_ = (want);                                    \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                   \
			diag("  got '%s', expected '%s' (%s:%d)", g_ ? g_ : "(null)",    \
			     w_ ? w_ : "(null)", __FILE__, __LINE__);                    \
	} while (0)

/* Abort the whole test program with a Bail out! line. */
static inline void bail_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(255);
}

static inline int done_testing(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_run);
	else if (tap_planned != tap_run)
		diag("planned %d tests but ran %d", tap_planned, tap_run);
	fflush(stdout);
	return tap_failed || (tap_planned >= 0 && tap_planned != tap_run);
}

#endif

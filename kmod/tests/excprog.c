/*
 * kmod/tests/excprog.c - raises user-mode exceptions for the VM test of
 * EXCEPTION_ENTRY/EXIT (kmod/tests/suite_exc.sh, kmod/lkst_exc.c):
 *
 *   excprog N [ud]
 *
 * N times each, in this order: int3 (vector 3, SIGTRAP caught), an integer
 * divide by zero (vector 0, SIGFPE caught, the faulting idiv skipped by
 * siglongjmp), and a read of an address that is never mapped (vector 14,
 * SIGSEGV caught); with "ud" also N ud2 (invalid opcode, vector 6, SIGILL
 * caught; for the tracefs test, tests/kernel_exc.sh).  Prints "pid P" and, at the end, "int3 N", "de N",
 * "pf N" (and "ud N") (the signals each handler saw) on stdout.  Statically linked for
 * the guest.  Exit 0 if every signal came, 1 otherwise.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile sig_atomic_t got[32];

/* async-signal-safe: counts and jumps back (SIGTRAP returns normally) */
static void on_sig(int sig)
{
	got[sig]++;
	if (sig != SIGTRAP)
		siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int ud = argc > 2 && !strcmp(argv[2], "ud");
	struct sigaction sa;
	volatile int zero = 0, sink = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		__asm__ volatile("int3");
	/* volatile: the counters live across siglongjmp */
	for (volatile int i = 0; i < n; i++)
		if (!sigsetjmp(env, 1))
			sink += 100 / zero;
	for (volatile int i = 0; i < n; i++)
		if (!sigsetjmp(env, 1))
			sink += *(volatile int *)(unsigned long)(0x10 + 8 * i);
	for (volatile int i = 0; ud && i < n; i++)
		if (!sigsetjmp(env, 1))
			__asm__ volatile("ud2");
	printf("int3 %d\nde %d\npf %d\n", (int)got[SIGTRAP], (int)got[SIGFPE], (int)got[SIGSEGV]);
	if (ud)
		printf("ud %d\n", (int)got[SIGILL]);
	return got[SIGTRAP] == n && got[SIGFPE] == n && got[SIGSEGV] == n &&
			       (!ud || got[SIGILL] == n) ? 0 : 1;
}

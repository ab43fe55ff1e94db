/*
 * kmod/tests/excprog.c - raises user-mode exceptions for the VM test of
 * EXCEPTION_ENTRY/EXIT (kmod/tests/suite_exc.sh, kmod/lkst_exc.c):
 *
 *   excprog N [ud] [ss]
 *
 * N times each, in this order: int3 (vector 3, SIGTRAP caught), an integer
 * divide by zero (vector 0, SIGFPE caught, the faulting idiv skipped by
 * siglongjmp), and a read of an address that is never mapped (vector 14,
 * SIGSEGV caught); with "ud" also N ud2 (invalid opcode, vector 6, SIGILL
 * caught; for the tracefs test, tests/kernel_exc.sh); with "ss" also N
 * single steps (vector 1: popf sets the trap flag, the nop after it traps;
 * the SIGTRAP handler clears TF in the interrupted context).  Prints "pid
 * P" and, at the end, "int3 N", "de N", "pf N" (and "ud N", "ss N") (the
 * signals each handler saw) on stdout.  Statically linked for
 * the guest.  Exit 0 if every signal came, 1 otherwise.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile sig_atomic_t got[32], steps;

/* async-signal-safe: counts and jumps back (SIGTRAP returns normally) */
static void on_sig(int sig)
{
	got[sig]++;
	if (sig != SIGTRAP)
		siglongjmp(env, 1);
}

/* SIGTRAP: a single step if the trap flag (0x100) was set; clear it */
static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)si;
	if (uc->uc_mcontext.gregs[REG_EFL] & 0x100) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100L;
		steps++;
	} else {
		got[sig]++;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	volatile int ud = 0, ss = 0; /* volatile: live across siglongjmp */
	struct sigaction sa;
	volatile int zero = 0, sink = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_NODEFER;
	for (int i = 2; i < argc; i++) {
		ud |= !strcmp(argv[i], "ud");
		ss |= !strcmp(argv[i], "ss");
	}
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
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
	for (int i = 0; ss && i < n; i++)
		__asm__ volatile("pushf\n\torq $0x100, (%%rsp)\n\tpopf\n\tnop" ::: "cc", "memory");
	printf("int3 %d\nde %d\npf %d\n", (int)got[SIGTRAP], (int)got[SIGFPE], (int)got[SIGSEGV]);
	if (ud)
		printf("ud %d\n", (int)got[SIGILL]);
	if (ss)
		printf("ss %d\n", (int)steps);
	return got[SIGTRAP] == n && got[SIGFPE] == n && got[SIGSEGV] == n &&
			       (!ud || got[SIGILL] == n) && (!ss || steps == n) ? 0 : 1;
}

/*
 * bench/kft/count_mcount.c - count the calls of a -pg program (x86_64):
 * a preloadable mcount() that only increments a counter, printed to stderr
 * as "kft-calls: N" at exit.  bench/kft/run.sh uses it (untimed) for the
 * number of calls the -pg build of the workload makes, the divisor of
 * uftrace's "ns per call".
 *
 * gcc -pg calls mcount right after the prologue with the function's
 * arguments still in registers, so mcount must not touch them: it is
 * written in assembly and changes only the flags and one memory word.
 * Single-threaded programs only (the increment is not atomic, and the
 * count is then exact).
 */
#include <stdio.h>

unsigned long long kft_mcount_calls __attribute__((visibility("hidden")));

__asm__(".text\n"
	".globl mcount\n"
	".type mcount, @function\n"
	"mcount:\n"
	"\tincq kft_mcount_calls(%rip)\n"
	"\tret\n"
	".size mcount, .-mcount\n");

static void __attribute__((destructor)) report(void)
{
	fprintf(stderr, "kft-calls: %llu\n", kft_mcount_calls);
}

/*
 * kmod/bench/sysloop.c - the syscall-heavy workload of the kernel
 * benchmark (kmod/bench/bench_lkst.sh): one process makes N getppid(2)
 * system calls (not cached by libc, no work in the kernel), so each call
 * is one sys_enter and one sys_exit event.  Linked statically for the VM.
 *
 *   sysloop [-n CALLS] [-c CPU]
 *
 * Prints "calls N ns_per_call X" (CLOCK_MONOTONIC wall time / calls).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long calls = 100000;
	int cpu = 0, opt;
	struct timespec a, b;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:c:")) != -1) {
		if (opt == 'n')
			calls = atol(optarg);
		else if (opt == 'c')
			cpu = atoi(optarg);
		else {
			fprintf(stderr, "usage: sysloop [-n CALLS] [-c CPU]\n");
			return 2;
		}
	}
	if (calls <= 0) {
		fprintf(stderr, "sysloop: -n must be positive\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "sysloop: sched_setaffinity(%d): %s (not pinned)\n", cpu, strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < calls; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("calls %ld ns_per_call %.0f\n", calls,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / calls);
	return 0;
}

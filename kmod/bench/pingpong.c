/*
 * kmod/bench/pingpong.c - the workload of the kernel benchmark: two
 * processes pinned to one CPU bounce a byte through two pipes, so every
 * round trip is two context switches (two sched_switch events), as in
 * lmbench's lat_ctx.  Linked statically for the test VM.
 *
 *   pingpong [-n ROUNDS] [-c CPU]
 *
 * Prints "rounds N ns_per_round X" (CLOCK_MONOTONIC wall time / rounds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void xfer(int rfd, int wfd, long rounds, int first)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++) {
		if (first && write(wfd, &c, 1) != 1)
			exit(1);
		if (read(rfd, &c, 1) != 1)
			exit(1);
		if (!first && write(wfd, &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	long rounds = 10000;
	int cpu = 0, opt, p1[2], p2[2];
	struct timespec a, b;
	cpu_set_t set;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:c:")) != -1) {
		if (opt == 'n')
			rounds = atol(optarg);
		else if (opt == 'c')
			cpu = atoi(optarg);
		else {
			fprintf(stderr, "usage: pingpong [-n ROUNDS] [-c CPU]\n");
			return 2;
		}
	}
	if (rounds <= 0) {
		fprintf(stderr, "pingpong: -n must be positive\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "pingpong: sched_setaffinity(%d): %s (not pinned)\n", cpu, strerror(errno));
	if (pipe(p1) || pipe(p2)) {
		perror("pingpong: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (pid == 0) {
		xfer(p1[0], p2[1], rounds, 0);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	xfer(p2[0], p1[1], rounds, 1);
	clock_gettime(CLOCK_MONOTONIC, &b);
	waitpid(pid, NULL, 0);
	printf("rounds %ld ns_per_round %.0f\n", rounds,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / rounds);
	return 0;
}

/*
 * bench/kernel/pingpong.c - the load of the kernel-event benchmark: a
 * parent and a forked child pass a byte back and forth through two pipes,
 * N round trips (default 200000).  Every round trip is two writes, two
 * reads, two wakeups and two context switches on each side: a load made of
 * exactly the kernel events the LKST default maskset records.
 *
 *   pingpong [N]    prints "N round trips in S s"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int a[2], b[2], st;
	struct timespec t0, t1;
	char c = 'x';
	pid_t p;

	if (n <= 0 || pipe(a) || pipe(b))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = fork();
	if (p < 0)
		return 2;
	if (p == 0) {
		for (long i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(3);
		_exit(0);
	}
	for (long i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 3;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
		return 3;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%ld round trips in %.3f s\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}

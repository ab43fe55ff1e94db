/*
 * bench/startup/chain.c - the start-up benchmark's process chain
 * (bench/startup/run.sh): `chain N` forks a child that execs `chain N-1`
 * and waits for it, so `chain 100` starts 100 short processes one after
 * the other, each a new image a tracer must set up and tear down.  Exit
 * status 0 when the whole chain ran, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int __attribute__((noinline)) next(int n)
{
	return n - 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, st;
	char arg[16];
	pid_t pid;

	if (n <= 0)
		return 0;
	snprintf(arg, sizeof(arg), "%d", next(n));
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], arg, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st) ? 1 : 0;
}

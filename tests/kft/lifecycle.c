/*
 * tests/kft/lifecycle.c - process life cycle under the function tracer
 * (tests/kft_lifecycle.sh): `lifecycle MODE`.
 *
 *   fork     the child calls child_work() (leaf twice), getpid(), leaf()
 *            and returns from main(); the parent waits, then leaf()
 *   orphan   the parent returns at once; the child sleeps 200 ms, then
 *            child_work() and leaf(): it outlives its parent
 *   daemon   daemon(1, 1): the parent exits inside it; the daemon sleeps
 *            200 ms, then child_work()
 *   double   a double fork: the child forks a grandchild and returns from
 *            main() at once, the parent waits for the child and returns;
 *            the grandchild (reparented) sleeps 200 ms, then child_work()
 *   forkexec fork(); the child calls leaf(), then exec()s this program with
 *            "exec"; the parent waits, then leaf()
 *   vfork    vfork(); the child exec()s this program with "exec" (which
 *            calls leaf() and returns); the parent waits, then leaf()
 *   threadexec  a thread calls child_work() and exec()s this program with
 *            "exec" while the main thread waits in pthread_join() (which
 *            never returns: the exec ends it)
 *   linger   a daemon that stays: daemon(1, 1), its pid written to
 *            ./linger.pid, then it sleeps 30 s (the test kills it)
 *   exec     (the image vfork runs) leaf()
 *
 * No function here makes a tail call (each uses its callee's result), so
 * -O2 builds keep every call a call.  The parent prints "done MODE" and
 * exits 0; the other processes print nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int leaf(int x)
{
	static volatile int s;

	s += x;
	return s + 1;
}

__attribute__((noinline)) int child_work(int x)
{
	int r = leaf(x);

	r += leaf(x + 1);
	return r + 1;
}

static volatile int sink;
static char *self;

__attribute__((noinline)) void *exec_thread(void *arg)
{
	sink = child_work(3);
	execl(self, self, "exec", (char *)0);
	return arg; /* the exec failed */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	pid_t p;

	if (!strcmp(mode, "exec")) {
		sink = leaf(7);
		return 0;
	}
	sink = leaf(0);
	self = argv[0];
	if (!strcmp(mode, "threadexec")) {
		pthread_t t;

		if (pthread_create(&t, NULL, exec_thread, NULL))
			return 1;
		pthread_join(t, NULL);
		return 1; /* the exec failed */
	} else if (!strcmp(mode, "fork")) {
		p = fork();
		if (p == 0) {
			sink = child_work(2);
			sink = (int)getpid();
			sink = leaf(1);
			return 0;
		}
		waitpid(p, 0, 0);
		sink = leaf(4);
	} else if (!strcmp(mode, "orphan")) {
		p = fork();
		if (p == 0) {
			usleep(200000);
			sink = child_work(2);
			sink = leaf(1);
			return 0;
		}
	} else if (!strcmp(mode, "daemon") || !strcmp(mode, "linger")) {
		if (daemon(1, 1) < 0)
			return 1;
		if (!strcmp(mode, "linger")) {
			FILE *f = fopen("linger.pid", "w");

			if (f) {
				fprintf(f, "%d\n", (int)getpid());
				fclose(f);
			}
			sleep(30);
			return 0;
		}
		usleep(200000);
		sink = child_work(2);
		return 0;
	} else if (!strcmp(mode, "double")) {
		p = fork();
		if (p == 0) {
			if (fork() == 0) {
				usleep(200000);
				sink = child_work(2);
				return 0;
			}
			sink = leaf(1);
			return 0;
		}
		waitpid(p, 0, 0);
		sink = leaf(4);
	} else if (!strcmp(mode, "forkexec")) {
		p = fork();
		if (p == 0) {
			sink = leaf(1);
			execl(argv[0], argv[0], "exec", (char *)0);
			_exit(127);
		}
		waitpid(p, 0, 0);
		sink = leaf(4);
	} else if (!strcmp(mode, "vfork")) {
		p = vfork();
		if (p == 0) {
			execl(argv[0], argv[0], "exec", (char *)0);
			_exit(127);
		}
		waitpid(p, 0, 0);
		sink = leaf(4);
	} else {
		return 2;
	}
	printf("done %s\n", mode);
	return 0;
}

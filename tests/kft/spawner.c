/*
 * tests/kft/spawner.c - starts instrumented children with an environment
 * of its own (tests/kft_spawn.sh): each way a program can pass an explicit
 * envp, the child being this program again ("child N": calls leaf() N
 * times and prints "child N").  The environment given is {"SPAWNER=1"}
 * only, or that plus LD_PRELOAD=/nonexistent-preload.so (a program's own
 * LD_PRELOAD, which must stay) for "spawn-preload".
 *
 *   spawner posix_spawn | posix_spawnp | execve | execle | execvpe |
 *           fexecve | vfork | spawn-preload | vfork-work | vfork-exit |
 *           vfork-fail
 *
 * The parent calls parent_work() once and prints "parent"; its exit status
 * is 0 when the child exited 0.  The vfork-* ways do work in the vfork()
 * child first, child_prep() (leaf() twice and getppid()), then: execve
 * (vfork-work), _exit(0) without an exec (vfork-exit), an execve that
 * fails and _exit(0) (vfork-fail); the parent calls parent_work() again
 * once the child is done.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void leaf(void)
{
	sink++;
}

__attribute__((noinline)) void parent_work(void)
{
	sink++;
}

/* in a vfork() child: instrumented calls and a library call, nothing shared changed */
__attribute__((noinline)) void child_prep(void)
{
	leaf();
	leaf();
	if (getppid() <= 0)
		_exit(6);
}

int main(int argc, char **argv)
{
	char self[4096], *env[] = { "SPAWNER=1", NULL, NULL };
	char *cargv[] = { "spawner", "child", "3", NULL };
	const char *how = argc > 1 ? argv[1] : "";
	ssize_t k;
	pid_t pid;
	int st = 0;

	if (!strcmp(how, "child")) {
		int n = argc > 2 ? atoi(argv[2]) : 0;

		for (int i = 0; i < n; i++)
			leaf();
		printf("child %d\n", n);
		return getenv("SPAWNER") ? 0 : 4; /* its environment was the one given */
	}
	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k <= 0)
		return 3;
	self[k] = '\0';
	parent_work();
	printf("parent\n");
	fflush(stdout);
	if (!strcmp(how, "spawn-preload"))
		env[1] = "LD_PRELOAD=/nonexistent-preload.so";
	if (!strcmp(how, "posix_spawn") || !strcmp(how, "spawn-preload")) {
		if (posix_spawn(&pid, self, NULL, NULL, cargv, env))
			return 3;
	} else if (!strcmp(how, "posix_spawnp")) {
		if (posix_spawnp(&pid, self, NULL, NULL, cargv, env))
			return 3;
	} else if (!strncmp(how, "vfork-", 6)) {
		pid = vfork();
		if (pid == 0) {
			child_prep();
			if (!strcmp(how, "vfork-work"))
				execve(self, cargv, env);
			else if (!strcmp(how, "vfork-fail"))
				execve("/nonexistent/spawner", cargv, env);
			_exit(strcmp(how, "vfork-work") ? 0 : 127);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid)
			parent_work();
		else
			return 3;
	} else if (!strcmp(how, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execve(self, cargv, env);
			_exit(127);
		}
	} else {
		pid = fork();
		if (pid == 0) {
			if (!strcmp(how, "execve"))
				execve(self, cargv, env);
			else if (!strcmp(how, "execle"))
				execle(self, "spawner", "child", "3", (char *)NULL, env);
			else if (!strcmp(how, "execvpe"))
				execvpe(self, cargv, env);
			else if (!strcmp(how, "fexecve"))
				fexecve(open(self, O_RDONLY | O_CLOEXEC), cargv, env);
			_exit(127);
		}
	}
	if (strncmp(how, "vfork-", 6) && (pid < 0 || waitpid(pid, &st, 0) != pid))
		return 3;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}

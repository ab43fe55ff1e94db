/*
 * tests/kft/forkexec.c - fork + exec under the function tracer
 * (tests/kft_pg.sh, tests/kft_patch.sh): main() forks; the child calls
 * leaf(1) in child_side() and execs itself with "exec", whose image calls
 * leaf(2) and leaf(3) and prints "exec'd"; the parent waits and calls
 * leaf(4).  Each process's trace must show exactly its own calls.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) int leaf(int x) { static volatile int s; s += x; return x + 1; }
__attribute__((noinline)) int child_side(char **argv)
{
	leaf(1);
	execl(argv[0], argv[0], "exec", (char *)0);
	return 1;
}
int main(int argc, char **argv)
{
	pid_t p;

	if (argc > 1) {
		leaf(2);
		leaf(3);
		printf("exec'd\n");
		return 0;
	}
	p = fork();
	if (p == 0)
		return child_side(argv);
	waitpid(p, 0, 0);
	leaf(4);
	return 0;
}

/*
 * tests/kernel/syscalls.c - a program for tests/kernel_syscalls.sh, built
 * WITHOUT -finstrument-functions: it makes 37 getppid and 23 getpgid
 * system calls through syscall(2) (no libc caching), then prints its pid.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 37; i++)
		syscall(SYS_getppid);
	for (int i = 0; i < 23; i++)
		syscall(SYS_getpgid, 0);
	printf("%d\n", (int)getpid());
	return 0;
}

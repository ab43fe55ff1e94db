/*
 * tests/kernel/kprog.c - the program the kernel-event tests trace with
 * `ktrace record --kernel` (tests/kernel_record.sh compiles it with
 * -finstrument-functions): it sleeps, does file I/O and forks, each in a
 * function of its own, so its CALL records and its kernel events
 * (nanosleep's context switches, the write and fsync syscalls, the fork)
 * can be matched on one time line.
 *
 *   kprog FILE   sleep_50ms(), do_io(FILE), do_fork(), then exit 0
 *
 * It prints nothing; everything is checked in the trace.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One nanosleep of 50 ms: the thread blocks, so it is switched out. */
void __attribute__((noinline)) sleep_50ms(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Write 64 KiB to FILE, fsync it, read it back. */
void __attribute__((noinline)) do_io(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		exit(3);
	memset(buf, 'k', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fsync(fd) != 0 ||
	    pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		exit(4);
	close(fd);
}

/* The child's work: a short sleep, so it is switched out too. */
void __attribute__((noinline)) child_work(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

void __attribute__((noinline)) do_fork(void)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		child_work();
		_exit(0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		exit(5);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	sleep_50ms();
	do_io(argv[1]);
	do_fork();
	return 0;
}

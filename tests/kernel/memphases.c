/*
 * tests/kernel/memphases.c - the traced program of tests/memview.sh: three
 * phases of about 1 s each, so that `ktrace memview` must show them:
 *
 *   memphases MIB
 *
 *   1. grow: mmap MIB MiB of private anonymous memory (no huge pages) and
 *      write one byte per 4 KiB page, in 50 steps 20 ms apart;
 *   2. hold: sleep 1 s;
 *   3. free: munmap it all, then sleep 1 s.
 *
 * Prints "pid P" on stdout.  Exit 0, or 1 if the memory cannot be mapped.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64, len = mib << 20, pages = len / 4096;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int step = 0; step < 50; step++) {
		for (size_t i = pages * step / 50; i < pages * (step + 1) / 50; i++)
			p[i * 4096] = 1;
		sleep_ms(20);
	}
	sleep_ms(1000);
	munmap((void *)p, len);
	sleep_ms(1000);
	return 0;
}

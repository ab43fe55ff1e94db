/*
 * tests/kft/stream.c - the program the streaming recorder's tests trace
 * (tests/record_stream.c compiles it with -finstrument-functions).
 *
 *   stream calls N [SPIN] [COUNTER]
 *       main() -> loop() -> N x leaf(SPIN); leaf spins SPIN iterations (default 0).
 *       With COUNTER (a file), the number of leaf() calls that have returned
 *       is stored in it (a shared mapping) after each one: a side channel that
 *       tells the test how many calls were committed when the program was
 *       killed.  Exit 0.
 *   stream segv DEPTH
 *       main() -> deep(DEPTH) -> deep(DEPTH - 1) -> ... -> deep(1), which
 *       writes through a NULL pointer: SIGSEGV with DEPTH + 1 calls open.
 *   stream abort DEPTH
 *       the same, ending in abort().
 *   stream recurse DEPTH
 *       main() -> deep(DEPTH) -> ... -> deep(1), which returns: DEPTH + 1
 *       calls, all finished (their frames fit the default 8 MiB C stack).
 *   stream timed N SHORT_US LONG_US
 *       N times: leaf() busy for SHORT_US, then deep(1) busy for LONG_US
 *       (CLOCK_MONOTONIC), for the time filters (-t) and the clock rate;
 *       prints "timed leaf|deep OUTER INNER" with what each call took
 *       in us, measured around it (OUTER: the hooks and any preemption
 *       included) and inside it (INNER: from the body's first clock read
 *       to its last, no hook included).
 *
 * The functions' addresses are printed on stderr as "NAME 0xADDR" lines
 * when KFT_SYMS is set, so the test can name records without a symbolizer;
 * with STREAM_SESSION_LOG=FILE, the run's session file (KTRACE_SESSION) is
 * appended to FILE, so the test can check that exactly it was removed.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

static volatile uint64_t *counter;
static volatile unsigned sink;
static int crash_abort, timed;
static unsigned long_us;

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Spin for US microseconds of CLOCK_MONOTONIC; returns how long it spun
 * (us, from its first clock read to its last: more if it was preempted). */
static uint64_t busy_us(unsigned us)
{
	uint64_t t0 = mono_us(), t;

	while ((t = mono_us()) - t0 < us)
		sink++;
	return t - t0;
}

static uint64_t inner_us; /* `timed`: what the last busy_us() inside a call spun */

void __attribute__((noinline)) leaf(unsigned spin)
{
	if (timed) {
		inner_us = busy_us(spin);
		return;
	}
	for (unsigned i = 0; i < spin; i++)
		sink += i;
}

void __attribute__((noinline)) loop(uint64_t n, unsigned spin)
{
	for (uint64_t i = 0; i < n; i++) {
		leaf(spin);
		if (counter)
			*counter = i + 1;
	}
}

void __attribute__((noinline)) deep(unsigned depth)
{
	if (depth > 1) {
		deep(depth - 1);
		sink++;
		return;
	}
	if (crash_abort)
		abort();
	if (long_us) {
		inner_us = busy_us(long_us); /* `timed` */
		return;
	}
	if (sink)
		return; /* `recurse` */
	*(volatile int *)(uintptr_t)sink = 1; /* sink is 0: SIGSEGV */
}

int main(int argc, char **argv)
{
	if (getenv("STREAM_SESSION_LOG") && getenv("KTRACE_SESSION")) {
		/* the session this run writes to, for the test's residue check */
		int fd = open(getenv("STREAM_SESSION_LOG"), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dprintf(fd, "%s\n", getenv("KTRACE_SESSION"));
			close(fd);
		}
	}
	if (getenv("KFT_SYMS"))
		fprintf(stderr, "leaf %p\nloop %p\ndeep %p\nmain %p\n", (void *)leaf, (void *)loop,
			(void *)deep, (void *)main);
	if (argc >= 3 && !strcmp(argv[1], "calls")) {
		uint64_t n = strtoull(argv[2], NULL, 0);
		unsigned spin = argc >= 4 ? (unsigned)strtoul(argv[3], NULL, 0) : 0;

		if (argc >= 5) {
			int fd = open(argv[4], O_RDWR | O_CREAT, 0600);

			if (fd < 0 || ftruncate(fd, 8) < 0)
				return 3;
			counter = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (counter == MAP_FAILED)
				return 3;
			close(fd);
		}
		loop(n, spin);
		return 0;
	}
	if (argc >= 3 && (!strcmp(argv[1], "segv") || !strcmp(argv[1], "abort"))) {
		crash_abort = !strcmp(argv[1], "abort");
		deep((unsigned)strtoul(argv[2], NULL, 0));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "recurse")) {
		sink = 1; /* deep(1) returns instead of faulting */
		deep((unsigned)strtoul(argv[2], NULL, 0));
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "timed")) {
		unsigned long n = strtoul(argv[2], NULL, 0), short_us = strtoul(argv[3], NULL, 0);

		timed = 1;
		long_us = (unsigned)strtoul(argv[4], NULL, 0);
		for (unsigned long i = 0; i < n; i++) {
			uint64_t t0 = mono_us(), t1, t2, in_leaf;

			leaf((unsigned)short_us);
			t1 = mono_us();
			in_leaf = inner_us;
			deep(1);
			t2 = mono_us();
			/* what each call took, measured around it (preemption and the
			 * hooks included) and inside it (neither hook included) */
			fprintf(stderr, "timed leaf %llu %llu\ntimed deep %llu %llu\n", (unsigned long long)(t1 - t0),
				(unsigned long long)in_leaf, (unsigned long long)(t2 - t1),
				(unsigned long long)inner_us);
		}
		return 0;
	}
	fprintf(stderr, "usage: stream calls N [SPIN] [COUNTER] | segv DEPTH | abort DEPTH | recurse DEPTH"
			" | timed N SHORT_US LONG_US\n");
	return 2;
}

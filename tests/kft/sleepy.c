/*
 * tests/kft/sleepy.c - an instrumented program with known sleeps for the
 * analysis tests (tests/kft_analysis.c compiles it with
 * -finstrument-functions and links it with tests/kft/kftlib.c built as a
 * shared library):
 *
 *   main -> parent (sleeps 20 ms) -> child (sleeps 10 ms)
 *   main -> lib_work (in libkftlib.so) -> lib_helper
 *
 * So parent lasts at least 30 ms of which at least 20 ms are its own,
 * child at least 10 ms; lib_work shows that functions of shared libraries
 * are named.
 */
#include <time.h>

#define NOINLINE __attribute__((noinline))

int lib_work(int n);

static __attribute__((no_instrument_function)) void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

NOINLINE void child(void)
{
	sleep_ms(10);
}

NOINLINE void parent(void)
{
	sleep_ms(20);
	child();
}

int main(void)
{
	parent();
	return lib_work(3) == 9 ? 0 : 1;
}

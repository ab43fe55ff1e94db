/*
 * tests/kft/kftlib.c - a small instrumented shared library for the
 * analysis tests (tests/kft_analysis.c builds it as libkftlib.so with
 * -finstrument-functions -fPIC, and tests/kft/sleepy.c calls lib_work):
 * its functions must be named by addr2sym and kd from the library's own
 * symbols at its load address.
 */
#define NOINLINE __attribute__((noinline))

static volatile int lib_sink;

NOINLINE int lib_helper(int x)
{
	lib_sink += x;
	return x * x;
}

NOINLINE int lib_work(int n)
{
	return lib_helper(n);
}

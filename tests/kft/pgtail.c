/*
 * tests/kft/pgtail.c - tail calls, for tests/kft_pg.sh: built with -O2, gcc
 * turns the calls in return position into jumps (sibling calls) in a -pg
 * build, while a -finstrument-functions build makes real calls (its exit
 * hook runs after the callee returns).  The trace must show the same calls
 * and the same nesting either way.
 *
 *   main -> hop x3 -> leaf (hop jumps to leaf)
 *   main -> walk(20) -> walk(19) -> ... -> walk(0): each jumps to the next
 *           through a function pointer, so not made a loop: 21 calls
 *
 * It prints the results, which must not change under the tracer.
 */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile int sink;

NOINLINE int leaf(int x)
{
	sink += x;
	return x * 2;
}

NOINLINE int hop(int x)
{
	sink++;
	return leaf(x + 1);
}

int walk(int n);
static int (*volatile again)(int) = walk;

NOINLINE int walk(int n)
{
	sink++;
	if (n <= 0)
		return 7;
	return again(n - 1);
}

int main(void)
{
	int a = hop(1) + hop(2) + hop(3);

	printf("hop %d walk %d\n", a, walk(20));
	return 0;
}

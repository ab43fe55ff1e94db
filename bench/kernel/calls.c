/*
 * bench/kernel/calls.c - a program that makes many function calls, for the
 * export benchmark: built with -finstrument-functions and run under
 * `ktrace record`, it writes N CALL records (default 100 million): a loop
 * calling leaf() and, every 8th time, mid() -> leaf(), so traces hold
 * nested calls of three depths.
 *
 *   calls [N]
 */
#include <stdlib.h>

static volatile unsigned long sink;

void __attribute__((noinline)) leaf(unsigned long i)
{
	sink += i;
}

void __attribute__((noinline)) mid(unsigned long i)
{
	leaf(i);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000000ul, made = 1;

	for (unsigned long i = 0; made < n; i++) {
		if (i % 8 == 7) {
			mid(i);
			made += 2;
		} else {
			leaf(i);
			made++;
		}
	}
	return 0;
}

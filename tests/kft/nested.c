/*
 * tests/kft/nested.c - GCC nested functions for tests/kft_pg.sh: under
 * -pg -mfentry GCC saves the static chain around the hook ("push %r10;
 * call __fentry__; pop %r10"), so the return address is not where the
 * hook looks for other functions.  The program prints what add() computed
 * from its enclosing frame (k): "23" only if the static chain survived.
 *
 *   main -> outer -> apply x2 -> add.0 (nested, reads outer's k)
 */
#include <stdio.h>

static __attribute__((noinline)) int apply(int (*f)(int), int v)
{
	return f(v);
}

__attribute__((noinline)) int outer(int k)
{
	int add(int x)
	{
		return x + k;
	}
	return apply(add, 1) + apply(add, 2);
}

int main(void)
{
	printf("%d\n", outer(10));
	return 0;
}

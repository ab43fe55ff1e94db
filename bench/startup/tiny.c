/*
 * bench/startup/tiny.c - the start-up benchmark's program (bench/startup/run.sh):
 * as small as a traced program gets, one call below main(), so what is
 * measured is what a tracer costs a program that does nothing.
 */
int __attribute__((noinline)) tiny(int x)
{
	return x + 1;
}

int main(void)
{
	return tiny(-1);
}

/*
 * tests/kft/shapes.c - an instrumented program whose call structure is
 * known in closed form, for tests/kft_report.sh:
 *
 *   shapes fib N      main -> compute -> fib(N): fib calls itself, 2 F(N+1) - 1 calls
 *   shapes mutual N   main -> compute -> even(N) -> odd(N-1) -> even(...) ... (N+1 calls)
 *   shapes signals N  main -> work, interrupted N times by a SIGALRM handler that
 *                     calls handler_work (N separate handler invocations)
 *
 * It prints its own counts ("fib 21891"), counted by the program itself,
 * so the test compares ktrace's numbers with the program's, not ktrace's.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile long count_fib, count_even, count_odd, count_handler;
static volatile sig_atomic_t fired;

__attribute__((noinline)) long fib(int n)
{
	count_fib++;
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) int odd(int n);

__attribute__((noinline)) int even(int n)
{
	count_even++;
	return n == 0 ? 1 : odd(n - 1);
}

__attribute__((noinline)) int odd(int n)
{
	count_odd++;
	return n == 0 ? 0 : even(n - 1);
}

__attribute__((noinline)) void handler_work(void)
{
	count_handler++;
}

__attribute__((noinline)) void on_alarm(int sig)
{
	(void)sig;
	handler_work();
	fired++;
}

__attribute__((noinline)) void work(int n)
{
	while (fired < n)
		; /* spin until the handler ran n times */
}

__attribute__((noinline)) long compute(const char *what, int n)
{
	if (!strcmp(what, "fib"))
		return fib(n);
	return even(n);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10;

	if (argc > 1 && !strcmp(argv[1], "signals")) {
		struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
		work(n);
		it.it_value.tv_usec = it.it_interval.tv_usec = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		printf("handler_work %ld\n", count_handler);
		return 0;
	}
	compute(argc > 1 ? argv[1] : "fib", n);
	printf("fib %ld\neven %ld\nodd %ld\n", count_fib, count_even, count_odd);
	return 0;
}

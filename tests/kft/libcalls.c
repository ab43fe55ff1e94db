/*
 * tests/kft/libcalls.c - a program that calls shared-library functions a
 * known number of times, for the library-call tracer (tests/kft_plt.sh,
 * lib/kft_plt.c).  Built with -finstrument-functions, -pg or
 * -pg -mfentry (also -fno-plt).
 *
 * main: N rounds of malloc, memcpy, strlen, free (N = argv[1], default
 * 100), then T threads (argv[2], default 3), each M rounds (argv[3],
 * default 50) of pthread_mutex_lock/unlock around malloc+free, joined;
 * then qsort (whose comparator is a traced function of the program).
 * At the end it prints the counts it made, "name count" per line, sorted,
 * as the test's independent answer (printf/puts calls after the
 * counting are not in the list: the test ignores them).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 50;
static volatile size_t sink;

static __attribute__((noinline)) void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&mu);
		char *p = malloc(32);
		sink += (size_t)p;
		free(p);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static __attribute__((noinline)) int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int nt = argc > 2 ? atoi(argv[2]) : 3;
	char src[64] = "library calls are traced";
	volatile size_t len = sizeof(src); /* not inlined: a call */
	pthread_t th[16];
	int v[8] = { 5, 3, 7, 1, 8, 2, 6, 4 };

	if (argc > 3)
		rounds = atoi(argv[3]);
	if (nt > 16)
		nt = 16;
	for (int i = 0; i < n; i++) {
		char *p = malloc(64);
		memcpy(p, src, len);
		sink += strlen(p);
		free(p);
	}
	for (int i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	qsort(v, 8, sizeof(v[0]), cmp);
	printf("free %d\nmalloc %d\nmemcpy %d\npthread_create %d\npthread_join %d\n"
	       "pthread_mutex_lock %d\npthread_mutex_unlock %d\nqsort 1\nstrlen %d\n",
	       n + nt * rounds, n + nt * rounds, n, nt, nt, nt * rounds, nt * rounds, n);
	return v[0] == 1 ? 0 : 1;
}

/*
 * bench/locks/lockloop.c - the cost of one pthread_mutex_lock/unlock pair
 * (uncontended, one thread), for bench/locks/run.sh: N pairs timed with
 * CLOCK_MONOTONIC, "ns_per_pair X" on stdout.  Under `ktrace record
 * --locks` each pair writes three lock events (acquire, acquired,
 * release).  Usage: lockloop [N] (default 1000000).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	double t0, t1;

	for (unsigned long i = 0; i < 10000; i++) { /* warm up: PLT, first events */
		pthread_mutex_lock(&m);
		sink++;
		pthread_mutex_unlock(&m);
	}
	t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		sink++;
		pthread_mutex_unlock(&m);
	}
	t1 = now_ns();
	printf("ns_per_pair %.2f\n", (t1 - t0) / (double)n);
	return 0;
}

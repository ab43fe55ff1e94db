/*
 * tests/kft/attach.c - a multi-threaded program to attach to
 * (tests/record_attach.sh): THREADS workers (default 3) wait on a
 * condition variable; each line on stdin is a command:
 *
 *   run N    every worker does N rounds: round() calls step() 10 times,
 *            step() calls leaf() twice; when all are done the program
 *            prints "done rounds=R step=S leaf=L sum=X" with the calls it
 *            counted for this command and a checksum of the results (the
 *            same for the same N, traced or not)
 *   spin MS  the workers call round() in a loop for MS milliseconds (calls
 *            in flight at any moment); prints "spun sum=X rounds=R" where
 *            X is checked against the rounds (each round adds the same)
 *   entry    prints the first 16 bytes of round, step and leaf in hex (to
 *            see that an attach left the code as it was)
 *   quit     exits 0
 *
 * Built without hooks (plain -O2): `ktrace record -p` patches it.  The
 * counts are the program's own, independent of the tracer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static unsigned long gen, finished, want, spin_ms;
static unsigned long n_round, n_step, n_leaf, sum;
static int nthreads;

__attribute__((noipa)) unsigned long leaf(unsigned long x)
{
	__atomic_fetch_add(&n_leaf, 1, __ATOMIC_RELAXED);
	return x * 2654435761u ^ (x >> 13);
}

__attribute__((noipa)) unsigned long step(unsigned long x)
{
	__atomic_fetch_add(&n_step, 1, __ATOMIC_RELAXED);
	return leaf(x) + leaf(x + 1);
}

__attribute__((noipa)) unsigned long round_(unsigned long seed)
{
	unsigned long s = 0;

	__atomic_fetch_add(&n_round, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 10; i++)
		s += step(seed * 10 + (unsigned long)i);
	return s;
}

static unsigned long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000 + (unsigned long)ts.tv_nsec / 1000000;
}

static void *worker(void *arg)
{
	unsigned long seen = 0;

	(void)arg;
	for (;;) {
		unsigned long n, ms, s = 0;

		pthread_mutex_lock(&mu);
		while (gen == seen)
			pthread_cond_wait(&cv, &mu);
		seen = gen;
		n = want;
		ms = spin_ms;
		pthread_mutex_unlock(&mu);
		if (ms) {
			unsigned long end = ms_now() + ms;

			while (ms_now() < end)
				s += round_(7);
		} else {
			for (unsigned long r = 0; r < n; r++)
				s += round_(r);
		}
		pthread_mutex_lock(&mu);
		sum += s;
		if (++finished == (unsigned long)nthreads)
			pthread_cond_signal(&done_cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void command(unsigned long n, unsigned long ms)
{
	pthread_mutex_lock(&mu);
	n_round = n_step = n_leaf = sum = finished = 0;
	want = n;
	spin_ms = ms;
	gen++;
	pthread_cond_broadcast(&cv);
	while (finished < (unsigned long)nthreads)
		pthread_cond_wait(&done_cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void entry_bytes(const char *name, const void *fn)
{
	const unsigned char *p = fn;

	printf("%s", name);
	for (int i = 0; i < 16; i++)
		printf(" %02x", p[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	char line[128];

	nthreads = argc > 1 ? atoi(argv[1]) : 3;
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long n;

		if (sscanf(line, "run %lu", &n) == 1) {
			command(n, 0);
			printf("done rounds=%lu step=%lu leaf=%lu sum=%lu\n", n_round, n_step, n_leaf, sum);
		} else if (sscanf(line, "spin %lu", &n) == 1) {
			unsigned long r7 = round_(7);

			command(0, n);
			printf("spun ok=%d rounds=%lu\n", sum == n_round * r7 && n_round > 0, n_round);
		} else if (!strncmp(line, "entry", 5)) {
			entry_bytes("round", (const void *)round_);
			entry_bytes("step", (const void *)step);
			entry_bytes("leaf", (const void *)leaf);
		} else if (!strncmp(line, "quit", 4)) {
			return 0;
		}
		fflush(stdout);
	}
	return 0;
}

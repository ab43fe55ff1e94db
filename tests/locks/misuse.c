/*
 * tests/locks/misuse.c - planted lock misuse for tests/cli_locks.sh, one
 * kind per mode (argv[1]), so `ktrace locks` must report exactly one
 * finding whose call sites are in the functions named here:
 *
 *   order   lock-order inversion: take_ab() locks lock_a then lock_b in one
 *           thread; after it is joined, take_ba() locks lock_b then lock_a
 *           in another (no deadlock can happen: they never overlap)
 *   cycle   lock-order cycle of three locks: take_ab() (lock_a, lock_b),
 *           take_bc() (lock_b, lock_c), take_ca() (lock_c, lock_a), each in
 *           a thread of its own, one after the other
 *   unlock  unlock by non-holder: hold_w() (a thread) locks lock_w, then
 *           main's unlock_other() unlocks it (glibc's normal mutexes allow
 *           it), barriers ordering the two
 *   double  double acquire: take_d() locks lock_d, retake_d() trylocks it
 *           (EBUSY: with pthread_mutex_lock it would deadlock)
 *   errchk  double acquire of an error-checking mutex: take_e(), then
 *           retake_e() locks it again (EDEADLK)
 *   exit    held at thread exit: hold_and_exit() locks lock_x and calls
 *           pthread_exit()
 *   clean   a thread pool: a queue under a mutex and condition variables,
 *           a rwlock read by every worker and written by main, a spinlock,
 *           a recursive mutex taken twice, trylocks that may fail: nothing
 *           to report
 *
 * Build: cc -O1 -g -pthread (no instrumentation needed).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_w = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_d = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_e;
pthread_mutex_t lock_x = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static volatile int sink;

NOINLINE void *take_ab(void *arg)
{
	pthread_mutex_lock(&lock_a);
	pthread_mutex_lock(&lock_b);
	sink++;
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return arg;
}

NOINLINE void *take_ba(void *arg)
{
	pthread_mutex_lock(&lock_b);
	pthread_mutex_lock(&lock_a);
	sink++;
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return arg;
}

NOINLINE void *take_bc(void *arg)
{
	pthread_mutex_lock(&lock_b);
	pthread_mutex_lock(&lock_c);
	sink++;
	pthread_mutex_unlock(&lock_c);
	pthread_mutex_unlock(&lock_b);
	return arg;
}

NOINLINE void *take_ca(void *arg)
{
	pthread_mutex_lock(&lock_c);
	pthread_mutex_lock(&lock_a);
	sink++;
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_c);
	return arg;
}

NOINLINE void *hold_w(void *arg)
{
	pthread_mutex_lock(&lock_w);
	pthread_barrier_wait(&bar); /* main unlocks it now */
	pthread_barrier_wait(&bar);
	return arg;
}

NOINLINE void unlock_other(void)
{
	pthread_mutex_unlock(&lock_w);
}

NOINLINE void take_d(void)
{
	pthread_mutex_lock(&lock_d);
}

NOINLINE int retake_d(void)
{
	return pthread_mutex_trylock(&lock_d);
}

NOINLINE void take_e(void)
{
	pthread_mutex_lock(&lock_e);
}

NOINLINE int retake_e(void)
{
	return pthread_mutex_lock(&lock_e);
}

NOINLINE void *hold_and_exit(void *arg)
{
	pthread_mutex_lock(&lock_x);
	pthread_exit(arg);
}

/* ---- the clean pool ---- */
#define NWORK 4
#define NJOBS 200
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER, qdone = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_mutex_t rec;
static int queue, done, stop;
static long total;

static void *worker(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&qlock);
		while (!queue && !stop)
			pthread_cond_wait(&qcond, &qlock);
		if (!queue && stop) {
			pthread_mutex_unlock(&qlock);
			break;
		}
		queue--;
		pthread_mutex_unlock(&qlock);
		pthread_rwlock_rdlock(&table);
		pthread_spin_lock(&spin);
		total++;
		pthread_spin_unlock(&spin);
		pthread_rwlock_unlock(&table);
		pthread_mutex_lock(&rec);
		pthread_mutex_lock(&rec);
		pthread_mutex_unlock(&rec);
		pthread_mutex_unlock(&rec);
		if (pthread_mutex_trylock(&qlock) == 0)
			pthread_mutex_unlock(&qlock);
		pthread_mutex_lock(&qlock);
		done++;
		pthread_cond_signal(&qdone);
		pthread_mutex_unlock(&qlock);
	}
	return arg;
}

static int clean(void)
{
	pthread_t th[NWORK];
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < NWORK; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int j = 0; j < NJOBS; j++) {
		pthread_mutex_lock(&qlock);
		queue++;
		pthread_cond_signal(&qcond);
		pthread_mutex_unlock(&qlock);
		if (j % 50 == 0) {
			pthread_rwlock_wrlock(&table);
			sink++;
			pthread_rwlock_unlock(&table);
		}
	}
	pthread_mutex_lock(&qlock);
	while (done < NJOBS)
		pthread_cond_wait(&qdone, &qlock);
	stop = 1;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	for (int i = 0; i < NWORK; i++)
		pthread_join(th[i], NULL);
	return total == NJOBS ? 0 : 1;
}

int main(int argc, char **argv)
{
	pthread_t t;
	const char *m = argc > 1 ? argv[1] : "clean";

	if (!strcmp(m, "order")) {
		pthread_create(&t, NULL, take_ab, NULL);
		pthread_join(t, NULL);
		pthread_create(&t, NULL, take_ba, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(m, "cycle")) {
		void *(*fn[3])(void *) = { take_ab, take_bc, take_ca };

		for (int i = 0; i < 3; i++) {
			pthread_create(&t, NULL, fn[i], NULL);
			pthread_join(t, NULL);
		}
	} else if (!strcmp(m, "unlock")) {
		pthread_barrier_init(&bar, NULL, 2);
		pthread_create(&t, NULL, hold_w, NULL);
		pthread_barrier_wait(&bar);
		unlock_other();
		pthread_barrier_wait(&bar);
		pthread_join(t, NULL);
	} else if (!strcmp(m, "double")) {
		take_d();
		if (retake_d() == 0)
			return 1;
		pthread_mutex_unlock(&lock_d);
	} else if (!strcmp(m, "errchk")) {
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&lock_e, &a);
		take_e();
		if (retake_e() == 0)
			return 1;
		pthread_mutex_unlock(&lock_e);
	} else if (!strcmp(m, "exit")) {
		pthread_create(&t, NULL, hold_and_exit, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(m, "clean")) {
		return clean();
	} else {
		fprintf(stderr, "misuse: unknown mode %s\n", m);
		return 2;
	}
	return 0;
}

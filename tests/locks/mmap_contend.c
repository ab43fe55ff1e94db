/*
 * tests/locks/mmap_contend.c - kernel lock contention for tests/cli_locks.sh:
 * four threads map, touch and unmap memory 20000 times each, so they
 * contend for their process' mmap_lock (an rwsem) and the page-table
 * spinlocks: lock:contention_begin/end events.  Each thread prints "PID
 * TID" (its getpid() and gettid()) first: the test's own list of the
 * program's threads.  Build: cc -O1 -pthread.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static void *work(void *arg)
{
	printf("%d %d\n", (int)getpid(), (int)gettid());
	for (int i = 0; i < 20000; i++) {
		char *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return NULL;
		p[0] = 1;
		munmap(p, 1 << 16);
	}
	return arg;
}

int main(void)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

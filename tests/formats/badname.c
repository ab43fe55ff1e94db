/*
 * tests/formats/badname.c - a traced program whose process and thread
 * names are not UTF-8, for the tests that read ktrace's exports with a
 * third-party parser (JSON, CSV, XML, protobuf, CTF, trace.dat).
 *
 * Build with -finstrument-functions -pthread and run under `ktrace
 * record`: the main thread names itself "bad\xff\xfe\x80name" (comm is at
 * most 15 bytes), starts one thread that names itself "thr\xc3\x28\xff"
 * (a truncated 2-byte sequence, then a byte never valid in UTF-8); each
 * calls work() 100 (main) and 50 (thread) times, so a test knows how many
 * calls each name must carry.  Exit status 0.
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

__attribute__((noinline)) int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += i;
	return s;
}

static void *thread_main(void *arg)
{
	prctl(PR_SET_NAME, "thr\xc3\x28\xff");
	usleep(1000);
	for (int i = 0; i < 50; i++)
		work(i);
	return arg;
}

int main(void)
{
	pthread_t t;

	prctl(PR_SET_NAME, "bad\xff\xfe\x80name");
	usleep(1000);
	if (pthread_create(&t, NULL, thread_main, NULL))
		return 1;
	for (int i = 0; i < 100; i++)
		work(i);
	pthread_join(t, NULL);
	return 0;
}

/*
 * tests/kft/pgexec.c - a -pg program whose thread exec()s a CPU-bound
 * shell loop (tests/kft_pg.sh).  glibc's gmon arms ITIMER_PROF at start
 * (__monstartup from gcrt1.o); the timer survives exec() and kills the new
 * program with SIGPROF once it has run 10 ms.  Prints whether the timer
 * is armed, then the shell prints "exec-done"; exit status 0 from the
 * shell (1 if exec failed).
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

static void *th(void *a)
{
	(void)a;
	execl("/bin/sh", "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done; echo exec-done",
	      (char *)0);
	return NULL;
}

int main(void)
{
	struct itimerval it;
	pthread_t t;

	getitimer(ITIMER_PROF, &it);
	printf("itimer_prof %s\n", it.it_interval.tv_sec || it.it_interval.tv_usec ? "armed" : "off");
	fflush(stdout);
	pthread_create(&t, NULL, th, NULL);
	pthread_join(t, NULL);
	return 1;
}

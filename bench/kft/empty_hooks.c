/*
 * bench/kft/empty_hooks.c - the "instrumentation only" baseline of
 * bench/kft/run.sh: empty __cyg_profile_func_enter/exit, preloaded
 * (LD_PRELOAD) into a -finstrument-functions program the same way
 * `ktrace record` preloads libktrace.so, so the program pays the calls
 * through the PLT and nothing else.
 *
 * Built with -DKFT_COUNT it counts the calls instead (the entries seen by
 * each thread, summed at exit and printed to stderr as
 * "kft-calls: N"): that untimed run tells how many instrumented calls the
 * workload makes, the divisor of "ns per call".  Thread-safe (per-thread
 * counters, added atomically when a thread ends); not async-signal-safe
 * at exit, which does not matter for a benchmark.
 */
#include <pthread.h>
#include <stdio.h>

#define HOOK __attribute__((visibility("default"), no_instrument_function))
#define LOCAL __attribute__((no_instrument_function))

#ifdef KFT_COUNT
static unsigned long long total;
static __thread unsigned long long calls;
static pthread_key_t key;

static void LOCAL thread_done(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&total, calls, __ATOMIC_RELAXED);
	calls = 0;
}

static void LOCAL __attribute__((constructor)) count_init(void)
{
	pthread_key_create(&key, thread_done);
}

static void LOCAL __attribute__((destructor)) count_fini(void)
{
	thread_done(NULL);
	fprintf(stderr, "kft-calls: %llu\n", total);
}

HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn;
	(void)site;
	if (!calls++)
		pthread_setspecific(key, &key);
}
#else
HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn;
	(void)site;
}
#endif

HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}

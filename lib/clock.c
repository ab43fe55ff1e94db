/*
 * lib/clock.c - the one clock of the user-space runtime.
 *
 * Records are stamped with a raw counter that costs a few ns to read: the
 * TSC (rdtsc) on x86-64, CLOCK_MONOTONIC nanoseconds elsewhere.  The trace
 * keeps (raw, CLOCK_MONOTONIC ns) calibration pairs (metadata and every
 * sub-buffer header) so that the tools print CLOCK_MONOTONIC nanoseconds,
 * the clock tracefs calls "mono" and the kernel module uses: application
 * and kernel events then share one timeline (design decision 2).
 *
 * The current CPU is read from the thread's rseq area, which glibc (2.35+)
 * registers for every thread and the kernel keeps up to date: one load.
 * The thread-id and process-alive helpers (kt_gettid(), kt_pid_alive())
 * live here too.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

KT_EXPORT uint64_t ktrace_now(void)
{
	return kt_clock();
}

const char *kt_clock_name(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return "tsc";
#else
	return "mono";
#endif
}

uint64_t kt_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return kt_mono_ns();
#endif
}

uint64_t kt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t kt_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A calibration pair: the raw clock read on both sides of clock_gettime(),
 * keeping the tightest of a few tries, and its midpoint.  Async-signal-safe.
 */
void kt_calib_pair(uint64_t *raw, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t a = kt_clock();
		uint64_t n = kt_mono_ns();
		uint64_t b = kt_clock();

		if (b - a < best) {
			best = b - a;
			*raw = a + (b - a) / 2;
			*ns = n;
		}
	}
}

unsigned kt_cpu_slow(void)
{
	unsigned c = kt_cpu();

	if (c < 0xffff)
		return c;
	int r = sched_getcpu();

	return r < 0 ? 0xffff : (unsigned)r;
}

uint32_t kt_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

int kt_pid_alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/*
 * lib/kft_stack.c - the calling thread's stack, for `watch stack` and
 * `watch worst-stack`: bytes left = stack size - bytes used, bytes used
 * counted from the thread's stack BASE, where its first frame began, as
 * the kernel counts from the base of a task's stack.
 *
 * Why the base and not the stack mapping: the kernel places the main
 * thread's first frame at a random offset below the top of its [stack]
 * mapping (up to 8 KiB, plus the size of argv and the environment), so
 * "stack pointer minus mapping start" moves by kilobytes from run to run
 * and a threshold fires on every call in one run and never in the next.
 * The main thread's base is glibc's __libc_stack_end (the stack pointer
 * at _start); another thread's is the top of the stack pthread gave it.
 * Its size is RLIMIT_STACK for the main thread (glibc's own figure is
 * rounded to the page around the base, so it moves too), else what
 * pthread_getattr_np() reports (not called for the main thread with a
 * finite RLIMIT_STACK: it reads /proc/self/maps with the program's malloc).
 *
 * Called once per thread, from the hooks' thread start (not on a hot path).
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kft_rt.h"

extern void *__libc_stack_end;

void kft_stack_bounds(uint64_t *lo, uint64_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	*lo = *hi = 0;
	if (getpid() == (pid_t)syscall(SYS_gettid) && __libc_stack_end) {
		struct rlimit rl;
		uint64_t top = (uint64_t)(uintptr_t)__libc_stack_end;

		/* the main thread: no pthread_getattr_np(), which reads
		 * /proc/self/maps with the program's malloc and calloc */
		if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur < top) {
			*hi = top;
			*lo = top - rl.rlim_cur;
			return;
		}
	}
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		uint64_t top = (uint64_t)(uintptr_t)addr + size;

		struct rlimit rl;

		if (getpid() == (pid_t)syscall(SYS_gettid) && __libc_stack_end &&
		    (uint64_t)(uintptr_t)__libc_stack_end < top) {
			top = (uint64_t)(uintptr_t)__libc_stack_end; /* the main thread's base */
			if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
			    rl.rlim_cur < top)
				size = (size_t)rl.rlim_cur;
		}
		*hi = top;
		*lo = top - size;
	}
	pthread_attr_destroy(&attr);
}

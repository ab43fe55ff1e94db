/*
 * bench/kft/floor_hooks.c - the "floor" row of bench/kft/run.sh: the least
 * a function tracer that times every call with the TSC can do, preloaded
 * (LD_PRELOAD) like libktrace.so.  The entry hook pushes (function, call
 * site, rdtsc) onto a per-thread shadow stack; the exit hook pops it, reads
 * rdtsc again and stores 16 bytes (exit time, duration) into a per-thread
 * 8 MiB ring, overwritten in a loop.  No call-site table, no filters, no
 * triggers, no signal or longjmp handling, no record header, nothing kept
 * after the run: a yardstick for what ktrace's hooks add to the clock reads.
 *
 * Not async-signal-safe (a handler's calls can interleave with a push);
 * a shadow stack deeper than 4096 frames is not timed.  x86_64 only.
 */
#include <stdint.h>
#include <stdlib.h>

#define HOOK __attribute__((visibility("default"), no_instrument_function))
#define LOCAL __attribute__((no_instrument_function))

#define FRAMES 4096u
#define RING_WORDS (1u << 20) /* 8 MiB */

struct frame {
	uint64_t fn, site, t;
};

static __thread struct frame stack[FRAMES] __attribute__((tls_model("initial-exec")));
static __thread unsigned depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t *ring __attribute__((tls_model("initial-exec")));
static __thread uint64_t pos __attribute__((tls_model("initial-exec")));

static inline LOCAL uint64_t tsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	unsigned d = depth;

	if (d >= FRAMES)
		return;
	stack[d].fn = (uint64_t)(uintptr_t)fn;
	stack[d].site = (uint64_t)(uintptr_t)site;
	stack[d].t = tsc();
	depth = d + 1;
}

HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	unsigned d = depth;
	uint64_t now, *p;

	(void)site;
	if (!d)
		return;
	now = tsc();
	depth = --d;
	if (stack[d].fn != (uint64_t)(uintptr_t)fn)
		return;
	if (!ring) {
		ring = calloc(RING_WORDS, sizeof(*ring));
		if (!ring)
			return;
	}
	p = ring + (pos & (RING_WORDS - 2));
	p[0] = now;
	p[1] = now - stack[d].t;
	pos += 2;
}

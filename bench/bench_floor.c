/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_floor.c - the floor: what writing one 24-byte record costs at
 * best, with no tracer at all.
 *
 * Each thread writes records shaped like ktrace's LOG2 record (header word
 * with a 40-bit timestamp, two u64 arguments) into its own array:
 *
 *   floor-store             no timestamp, pre-faulted array (store cost only)
 *   floor-rdtsc             rdtsc + store, pre-faulted array (the floor the
 *                           issue's targets are relative to)
 *   floor-rdtsc-firsttouch  rdtsc + store into a fresh, untouched mapping
 *                           (every 4 KiB page faults once, in the loop)
 *   floor-rdtsc-ring        rdtsc + store into a 1.5 MiB ring that wraps
 *
 * Arrays are anonymous mappings with MADV_NOHUGEPAGE so that page faults
 * and TLB reach match the 4 KiB pages of ktrace's file mappings.
 *
 * Usage: bench_floor [-n EVENTS] [-r REPS] [-w WARMUP] [-t THREADS] VARIANT...
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include <ktrace/format.h>

struct rec {
	uint64_t hdr, a, b;
};

enum kind { STORE, RDTSC, FIRSTTOUCH, RING };

#define RING_RECS 65536u /* 1.5 MiB of 24-byte records */

struct floor_ctx {
	enum kind kind;
	uint64_t events;
	struct rec *buf[BENCH_MAX_THREADS];
	size_t len[BENCH_MAX_THREADS];
	uint64_t sink;
};

static struct rec *map_records(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("bench_floor: mmap");
		exit(1);
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static void unmap_all(struct floor_ctx *c)
{
	for (int i = 0; i < BENCH_MAX_THREADS; i++) {
		if (c->buf[i])
			munmap(c->buf[i], c->len[i]);
		c->buf[i] = NULL;
	}
}

/* First touch: a fresh mapping per repetition, never written before the loop. */
static int floor_prepare(void *ctx, int rep)
{
	struct floor_ctx *c = ctx;

	if (c->kind == FIRSTTOUCH)
		unmap_all(c);
	return 0;
}

static void floor_thread_init(void *ctx, int tidx)
{
	struct floor_ctx *c = ctx;
	size_t len = (c->kind == RING ? RING_RECS : c->events) * sizeof(struct rec);

	if (c->buf[tidx])
		return;
	c->buf[tidx] = map_records(len);
	c->len[tidx] = len;
	if (c->kind != FIRSTTOUCH)
		memset(c->buf[tidx], 1, len); /* pre-fault */
}

#define HDR(ts) KTRACE_REC_HDR((ts), KTRACE_CLASS_LOG2, 2, 0x0110)

static __attribute__((noinline)) void loop_store(struct rec *r, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		r[i].hdr = HDR(i);
		r[i].a = i;
		r[i].b = n - i;
		bench_barrier();
	}
}

static __attribute__((noinline)) void loop_rdtsc(struct rec *r, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		r[i].hdr = HDR(__rdtsc());
		r[i].a = i;
		r[i].b = n - i;
		bench_barrier();
	}
}

static __attribute__((noinline)) void loop_ring(struct rec *r, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct rec *p = &r[i & (RING_RECS - 1)];

		p->hdr = HDR(__rdtsc());
		p->a = i;
		p->b = n - i;
		bench_barrier();
	}
}

static void floor_run(void *ctx, int tidx, uint64_t n)
{
	struct floor_ctx *c = ctx;
	struct rec *r = c->buf[tidx];

	switch (c->kind) {
	case STORE: loop_store(r, n); break;
	case RDTSC:
	case FIRSTTOUCH: loop_rdtsc(r, n); break;
	case RING: loop_ring(r, n); break;
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum kind kind;
	} variants[] = {
		{ "floor-store", STORE },
		{ "floor-rdtsc", RDTSC },
		{ "floor-rdtsc-firsttouch", FIRSTTOUCH },
		{ "floor-rdtsc-ring", RING },
	};
	struct bench_opts o;
	int first = bench_parse_args(argc, argv, &o,
				     "floor-store|floor-rdtsc|floor-rdtsc-firsttouch|floor-rdtsc-ring...");

	if (first < 0)
		return 2;
	for (int a = first; a < argc; a++) {
		struct floor_ctx c = { .events = o.events };
		struct bench_spec s = {
			.nthreads = o.threads, .reps = o.reps, .warmup = o.warmup, .events = o.events,
			.ctx = &c, .prepare = floor_prepare, .thread_init = floor_thread_init,
			.run = floor_run,
		};
		struct bench_result r;
		size_t v;
		int err;

		for (v = 0; v < sizeof(variants) / sizeof(variants[0]); v++)
			if (!strcmp(argv[a], variants[v].name))
				break;
		if (v == sizeof(variants) / sizeof(variants[0])) {
			fprintf(stderr, "bench_floor: unknown variant '%s'\n", argv[a]);
			return 2;
		}
		c.kind = variants[v].kind;
		s.name = variants[v].name;
		err = bench_run(&s, &r);
		if (err) {
			fprintf(stderr, "bench_floor: %s: %s\n", s.name, strerror(-err));
			return 1;
		}
		bench_print(&s, &r, (double)sizeof(struct rec), NULL);
		unmap_all(&c);
	}
	return 0;
}

/*
 * lib/kft_callsites.c - the call-site table of a trace: DIR/callsites.
 *
 * A CALL record names its (function, call site) pair by a 24-bit index
 * into this table (docs/FORMAT.md, "Function call records"), which keeps a
 * call at 16 bytes.  The entries live in a file of the trace directory,
 * allocated in full at setup (a full disk shows then, never as SIGBUS) and
 * mapped MAP_SHARED: they survive a crash of the program, are never
 * overwritten in flight-recorder mode, and forked children share them.
 *
 * Lookup goes through an open-addressing hash index (2 slots per entry) in
 * anonymous shared memory, also inherited by forked children.  Insertion is
 * lock-free: claim an index with an atomic add on the file's `count`,
 * write the entry (site, then func with release order), then publish it by
 * compare-and-swap of an empty index slot.  Two threads inserting the same
 * pair at once may both claim an index; the loser uses the winner's, and
 * its own entry stays a harmless duplicate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft_rt.h"
#include "safefile.h"

#define KFT_PROBES 64

int kft_callsites_create(struct kft_global *g)
{
	size_t size = sizeof(struct ktrace_callsites) + (size_t)KFT_CALLSITES_CAP * 16;
	size_t islots = (size_t)KFT_CALLSITES_CAP * 2;
	void *p, *ix;
	int fd, err;

	fd = ksf_create(g->dir, KFT_CALLSITES_NAME, O_RDWR);
	if (fd < 0)
		return fd;
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err) {
		close(fd);
		ksf_unlink(g->dir, KFT_CALLSITES_NAME);
		return -err;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -err;
	ix = mmap(NULL, islots * sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (ix == MAP_FAILED) {
		err = errno;
		munmap(p, size);
		return -err;
	}
	g->cs = p;
	g->cs_ent = (struct ktrace_callsite *)((char *)p + sizeof(struct ktrace_callsites));
	g->cs_cap = KFT_CALLSITES_CAP;
	g->cs_mask = (uint32_t)islots - 1;
	g->cs->version = KTRACE_CALLSITES_VERSION;
	g->cs->hdr_size = sizeof(struct ktrace_callsites);
	g->cs->entry_size = sizeof(struct ktrace_callsite);
	g->cs->capacity = KFT_CALLSITES_CAP;
	__atomic_store_n(&g->cs->magic, KTRACE_CALLSITES_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&g->cs_index, (uint32_t *)ix, __ATOMIC_RELEASE);
	return 0;
}

uint32_t kft_callsite_insert(struct kft_global *g, uint64_t fn, uint64_t site, uint32_t h)
{
	uint32_t mine = 0; /* index + 1 claimed by this call, 0 = none yet */

	for (unsigned probe = 0; probe < KFT_PROBES; probe++, h++) {
		uint32_t *slot = &g->cs_index[h & g->cs_mask];
		uint32_t v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

		if (v) {
			const struct ktrace_callsite *e = &g->cs_ent[v - 1];

			if (__atomic_load_n(&e->func, __ATOMIC_ACQUIRE) == fn && e->site == site)
				return v - 1;
			continue;
		}
		if (!mine) {
			uint64_t idx = __atomic_fetch_add(&g->cs->count, 1, __ATOMIC_RELAXED);

			if (idx >= g->cs_cap)
				return KTRACE_CALLSITE_NONE;
			g->cs_ent[idx].site = site;
			__atomic_store_n(&g->cs_ent[idx].func, fn, __ATOMIC_RELEASE);
			mine = (uint32_t)idx + 1;
		}
		if (__atomic_compare_exchange_n(slot, &v, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return mine - 1;
		/* Someone filled the slot first: is it our pair? */
		if (g->cs_ent[v - 1].func == fn && g->cs_ent[v - 1].site == site)
			return v - 1;
	}
	/* Index too crowded here: the entry (if claimed) stays unindexed but valid. */
	return mine ? mine - 1 : KTRACE_CALLSITE_NONE;
}

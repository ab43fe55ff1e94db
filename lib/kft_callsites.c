/*
 * lib/kft_callsites.c - the call-site table of a trace: DIR/callsites.
 *
 * A CALL record names its (function, call site) pair by a 24-bit index
 * into this table (docs/FORMAT.md, "Function call records"), which keeps a
 * call at 16 bytes.  The entries live in a file of the trace directory,
 * mapped MAP_SHARED: they survive a crash of the program, are never
 * overwritten in flight-recorder mode, and forked children share them.
 * The file has its full size from the start but its blocks are allocated
 * KFT_CS_CHUNK entries at a time as indexes are handed out, by pre-faulting
 * them for writing (MADV_POPULATE_WRITE: a full disk is an error there,
 * never a SIGBUS): most programs use a few thousand of the 262144 entries,
 * and allocating 4 MiB per trace cost a millisecond and a half of setup.
 * Under `ktrace record` the table is in the session's shared memory and
 * the consumer writes the file (cs_in_session()).
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
#include "session.h"

#define KFT_PROBES 64
#define KFT_CS_CHUNK 4096u /* entries allocated at a time (64 KiB) */

/*
 * Make sure entry @idx has its storage: pre-fault its chunk for writing
 * (and every chunk before it this process has not touched yet).
 * Async-signal-safe.  Return: 0, or -1 (the disk is full).
 */
static int cs_ready(struct kft_global *g, uint64_t idx)
{
	uint64_t have = __atomic_load_n(&g->cs_ready, __ATOMIC_ACQUIRE), want;
	uint8_t *from, *to;

	if (idx < have)
		return 0;
	want = (idx / KFT_CS_CHUNK + 1) * KFT_CS_CHUNK;
	if (want > g->cs_cap)
		want = g->cs_cap;
	from = (uint8_t *)&g->cs_ent[have] - ((uintptr_t)&g->cs_ent[have] & 4095);
	to = (uint8_t *)&g->cs_ent[want];
	/* In the session: allocate the pages first (the file grows by fallocate). */
	if (g->cs_off && kt_session_commit(g->ch->sess, g->cs_off + (uint64_t)(from - (uint8_t *)g->cs),
					   (uint64_t)(to - from)) < 0)
		return -1;
	if (madvise(from, (size_t)(to - from), MADV_POPULATE_WRITE) < 0)
		return -1;
	while (have < want &&
	       !__atomic_compare_exchange_n(&g->cs_ready, &have, want, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
	return 0;
}

/*
 * Under a consumer the table lives in the session instead (lib/session.h),
 * where pages cost less to allocate than file blocks; its offset is in
 * the channel's session entry and the consumer writes DIR/callsites when
 * the program has ended (however it ended).  Return: the mapping, or NULL.
 */
static void *cs_in_session(struct kft_global *g, size_t size)
{
	struct kt_session *s = g->ch->sess;
	uint64_t off;
	void *p;

	if (kt_session_alloc(s, size, 0, &off) < 0)
		return NULL;
	p = kt_session_map(s, off, size, 0);
	if (!p)
		return NULL;
	g->cs_off = off;
	s->chan[g->ch->sess_idx].callsites = off;
	return p;
}

int kft_callsites_create(struct kft_global *g)
{
	size_t size = sizeof(struct ktrace_callsites) + (size_t)KFT_CALLSITES_CAP * 16;
	size_t islots = (size_t)KFT_CALLSITES_CAP * 2;
	void *p, *ix;
	int fd, err, in_session = 0;

	if (g->ch->sess && (p = cs_in_session(g, size)) != NULL) {
		in_session = 1;
		goto mapped;
	}
	fd = ksf_create(g->dir, KFT_CALLSITES_NAME, O_RDWR);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)size) < 0) {
		err = errno;
		close(fd);
		ksf_unlink(g->dir, KFT_CALLSITES_NAME);
		return -err;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -err;
mapped:
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
	g->cs_ready = 0;
	if (cs_ready(g, 0) < 0) { /* the header and the first chunk: the disk is full */
		munmap(p, size);
		munmap(ix, islots * sizeof(uint32_t));
		if (!in_session)
			ksf_unlink(g->dir, KFT_CALLSITES_NAME);
		return -ENOSPC;
	}
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

			if (idx >= g->cs_cap || cs_ready(g, idx) < 0)
				return KTRACE_CALLSITE_NONE; /* full, or no disk for it: addresses inline */
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

/*
 * lib/kft_shadow.c - where a thread's shadow stack (lib/kft_hooks.c) lives.
 *
 * Under a consumer (`ktrace record`, lib/session.h) the shadow stack is a
 * region of the session's shared memory, listed in the session's stack
 * table with the thread's tid and pid.  It outlives the process, so when a
 * program dies with calls open (SIGSEGV, abort(), SIGKILL, or other threads
 * still inside calls when exit() ends them) the consumer reads the open
 * frames back and writes them as unfinished calls (consumer/unfinished.c):
 * the call path at a crash is in the trace.  The hooks mark a popped frame
 * by clearing its `sp`, so the open frames are those from 0 up to the first
 * with sp == 0.  The region holds KT_STACK_MAX frames of address space and
 * is allocated KT_STACK_CHUNK frames at a time as the stack deepens, so a
 * full /dev/shm shows as calls counted "too deep", never as a SIGBUS.
 *
 * Without a consumer it is private anonymous memory of KT_STACK_MAX frames,
 * reserved without backing (MAP_NORESERVE) and touched as it deepens.
 *
 * Either way a region starts with one page whose last 48 bytes hold the
 * sentinel frame stack[-1] (fn 0, sp ~0) the hooks compare against.
 *
 * Invariant the consumer relies on: above the top frame, sp is 0.  Pops
 * clear it; a region starts zero (new pages, or pages of an ended
 * thread given back with MADV_REMOVE); a forked child copies its frames
 * into a zero region.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft_rt.h"
#include "session.h"

#define KFT_STACK_HDR 4096u
#define KFT_STACK_PREFAULT (64u * 1024u)

static size_t region_len(void)
{
	return KFT_STACK_HDR + (size_t)KT_STACK_MAX * sizeof(struct kft_frame);
}

static void set_frames(struct kft_shadow *st, void *p, size_t len, uint32_t cap)
{
	st->map = p;
	st->map_len = len;
	st->frames = (struct kft_frame *)((char *)p + KFT_STACK_HDR);
	st->frames[-1].fn = 0;
	st->frames[-1].sp = ~(uint64_t)0;
	st->cap = cap;
}

/* A free entry of the session's stack table (or a new one), claimed. */
static struct kt_session_stack *claim_entry(struct kt_session *s)
{
	uint32_t n = __atomic_load_n(&s->hdr->nstack, __ATOMIC_ACQUIRE), idx;

	for (uint32_t i = 0; i < n && i < KT_SESSION_NSTACK; i++) {
		uint32_t free_ = KT_STACK_FREE;

		if (__atomic_load_n(&s->stack[i].state, __ATOMIC_RELAXED) == KT_STACK_FREE &&
		    __atomic_compare_exchange_n(&s->stack[i].state, &free_, KT_STACK_USED, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return &s->stack[i];
	}
	idx = __atomic_fetch_add(&s->hdr->nstack, 1, __ATOMIC_ACQ_REL);
	if (idx >= KT_SESSION_NSTACK)
		return NULL;
	__atomic_store_n(&s->stack[idx].state, KT_STACK_USED, __ATOMIC_RELAXED);
	return &s->stack[idx];
}

static int alloc_session(struct kft_global *g, struct kft_shadow *st)
{
	struct kt_session *s = g->ch->sess;
	struct kt_session_stack *e = claim_entry(s);
	size_t len = region_len();
	void *p;
	int rc;

	if (!e)
		return -ENOSPC;
	if (e->off) {
		/* A region of a thread that ended: its pages were released (zero). */
		rc = kt_session_commit(s, e->off, KFT_STACK_HDR + e->cap * sizeof(struct kft_frame));
		if (rc < 0) {
			__atomic_store_n(&e->state, KT_STACK_FREE, __ATOMIC_RELEASE);
			return rc;
		}
	} else {
		uint64_t off;

		rc = kt_session_alloc(s, len, KFT_STACK_HDR + (uint64_t)KT_STACK_CHUNK *
								 sizeof(struct kft_frame), &off);
		if (rc < 0) {
			__atomic_store_n(&e->state, KT_STACK_FREE, __ATOMIC_RELEASE);
			return rc;
		}
		e->off = off;
		e->cap = KT_STACK_CHUNK;
		e->max = KT_STACK_MAX;
	}
	p = kt_session_map(s, e->off, len, KFT_STACK_PREFAULT);
	if (!p) {
		rc = -errno;
		__atomic_store_n(&e->state, KT_STACK_FREE, __ATOMIC_RELEASE);
		return rc;
	}
	set_frames(st, p, len, (uint32_t)e->cap);
	st->entry = e;
	e->tid = kt_gettid();
	e->pid = (uint32_t)getpid();
	e->chan = (uint32_t)g->ch->sess_idx;
	__atomic_store_n(&e->state, KT_STACK_USED, __ATOMIC_RELEASE);
	return 0;
}

int kft_shadow_alloc(struct kft_global *g, struct kft_shadow *st)
{
	size_t len = region_len();
	void *p;

	memset(st, 0, sizeof(*st));
	if (g->ch->sess && alloc_session(g, st) == 0)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	set_frames(st, p, len, KT_STACK_MAX);
	return 0;
}

int kft_shadow_grow(struct kft_global *g, struct kft_shadow *st)
{
	struct kt_session_stack *e = st->entry;
	uint64_t more;
	int rc;

	if (!e || e->cap >= e->max)
		return -ENOSPC;
	more = e->max - e->cap < KT_STACK_CHUNK ? e->max - e->cap : KT_STACK_CHUNK;
	rc = kt_session_commit(g->ch->sess,
			       e->off + KFT_STACK_HDR + e->cap * sizeof(struct kft_frame),
			       more * sizeof(struct kft_frame));
	if (rc < 0)
		return rc;
	e->cap += more;
	st->cap = (uint32_t)e->cap;
	return 0;
}

void kft_shadow_free(struct kft_shadow *st)
{
	if (st->entry) {
		/*
		 * Give the pages back to /dev/shm: they read as zero afterwards,
		 * so the next owner finds no stale frame (every sp is 0).
		 */
		madvise(st->map, KFT_STACK_HDR + st->entry->cap * sizeof(struct kft_frame), MADV_REMOVE);
		__atomic_store_n(&st->entry->state, KT_STACK_FREE, __ATOMIC_RELEASE);
	}
	if (st->map)
		munmap(st->map, st->map_len);
	memset(st, 0, sizeof(*st));
}

int kft_shadow_fork(struct kft_global *g, struct kft_shadow *st, unsigned depth,
		    const struct kft_frame *from)
{
	struct kft_shadow old = *st, mine;
	int rc;

	if (!old.entry)
		return 0; /* private memory: fork copied it */
	rc = kft_shadow_alloc(g, &mine);
	while (rc == 0 && mine.cap < depth && kft_shadow_grow(g, &mine) == 0)
		;
	if (rc < 0 || mine.cap < depth) {
		if (rc == 0)
			kft_shadow_free(&mine);
		return rc < 0 ? rc : -ENOSPC;
	}
	memcpy(mine.frames, from ? from : old.frames, (size_t)depth * sizeof(struct kft_frame));
	if (depth < mine.cap)
		mine.frames[depth].sp = 0;
	munmap(old.map, old.map_len); /* the parent's region stays the parent's */
	*st = mine;
	return 0;
}

/*
 * lib/kft_hooks.c - the -finstrument-functions hooks: KFT for programs.
 *
 * gcc and clang call __cyg_profile_func_enter(this_fn, call_site) after a
 * function's prologue and __cyg_profile_func_exit() before its epilogue
 * (also when an exception unwinds through it).  libktrace provides both;
 * the library itself is compiled without instrumentation.  glibc has empty
 * versions, so an instrumented program links without libktrace and gets
 * these through LD_PRELOAD (`ktrace record`), or links with -lktrace.
 *
 * Each thread keeps a shadow stack of open calls (function, call site,
 * entry time, stack pointer, flags).  The entry hook pushes a frame and
 * asks the engine (kft/engine.h) about triggers and watches; the exit hook
 * pops it and asks whether the completed call is kept: if so it writes one
 * 16-byte CALL record (docs/FORMAT.md, "Function call records") stamped
 * with the exit time.  So a call a filter drops costs no write.
 *
 * Calls whose exit is never seen:
 *  - longjmp/siglongjmp: an entry whose stack pointer is at or above the top
 *    frame's (entry hooks are called after the prologue, so their stack
 *    pointers order the frames), or the exit of a function below the top of
 *    the shadow stack, shows that frames were abandoned; they are reported
 *    as unfinished.  Except a function inlined into the top frame's: its
 *    hooks run in the top frame with its stack pointer and call site
 *    (inlined_in_top());
 *  - the run stops while calls are open (KFT_FLUSH): reported unfinished,
 *    as KFT's Delta 0;
 *  - the thread or the program ends inside calls: reported unfinished.
 *
 * Re-entrance: a hook sets the thread's busy flag; a signal handler that
 * interrupts a hook runs its own calls untraced (both its entries and its
 * exits see the flag, so the shadow stack stays balanced).  A handler that
 * interrupts traced code between hooks pushes onto the same shadow stack;
 * kft_signal.c tells how deep in handlers each call is.
 *
 * Hot path: no lock, no syscall, no allocation.  A thread's first call maps
 * its shadow stack and claims a counter block (once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft_rt.h"

#define KFT_STACK_FRAMES 65536u
#define KFT_HOOK __attribute__((no_instrument_function))

struct kft_tls {
	struct kft_frame *stack;
	uint32_t depth;    /* frames on the shadow stack */
	uint32_t cap;
	uint32_t overflow; /* calls not pushed because the stack was full */
	uint32_t busy;     /* inside a hook */
	int state;         /* 0 not started, 1 tracing, -1 never again */
	uint64_t stack_lo, stack_hi; /* the thread's stack, for watches */
	struct kft_counters *own;    /* counters if no shared block was free */
	void *map;
	size_t map_len;
	struct kft_thread t;
};

static __thread struct kft_tls kft_tls __attribute__((tls_model("initial-exec")));

static inline uint64_t hook_sp(void)
{
	return (uint64_t)(uintptr_t)__builtin_frame_address(0);
}

unsigned kft_shadow_depth(void)
{
	return kft_tls.depth;
}

/* Map the shadow stack, claim counters, learn the stack bounds. */
static int thread_start(struct kft_tls *t)
{
	size_t len = 256 + (size_t)KFT_STACK_FRAMES * sizeof(struct kft_frame);
	pthread_attr_t attr;
	void *p;

	if (t->state < 0)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		t->state = -1;
		return 0;
	}
	t->map = p;
	t->map_len = len;
	t->own = p;
	t->stack = (struct kft_frame *)((char *)p + 256);
	t->cap = KFT_STACK_FRAMES;
	t->depth = t->overflow = 0;
	t->t.c = kft_claim_block(kt_gettid());
	if (!t->t.c)
		t->t.c = t->own;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;

		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			t->stack_lo = (uint64_t)(uintptr_t)addr;
			t->stack_hi = t->stack_lo + size;
		}
		pthread_attr_destroy(&attr);
	}
	kft_hooks_thread_started();
	__atomic_store_n(&kft_shadow_depth_fn, kft_shadow_depth, __ATOMIC_RELAXED);
	t->state = 1;
	return 1;
}

static inline uint64_t stack_left(const struct kft_tls *t, uint64_t sp)
{
	return sp >= t->stack_lo && sp < t->stack_hi ? sp - t->stack_lo : ~(uint64_t)0;
}

/* Write the CALL record of frame @f (at shadow depth @depth) approved as @res. */
static void write_call(struct kft_global *g, struct kft_tls *t, const struct kft_frame *f,
		       unsigned depth, unsigned res, uint64_t now)
{
	uint64_t dur = now - f->t, w[4];
	uint32_t idx = kft_callsite(g, f->fn, f->site);
	unsigned words = (dur >> 32) ? KTRACE_CALL_WORDS_LONG : KTRACE_CALL_WORDS;
	int rc;

	w[0] = KTRACE_CALL_W0(dur, idx, depth, f->sig, KFT_REC_FLAGS(res));
	w[1] = dur >> 32;
	if (KT_UNLIKELY(idx == KTRACE_CALLSITE_NONE)) {
		words = KTRACE_CALL_WORDS_ADDR;
		w[2] = f->fn;
		w[3] = f->site;
	}
	if (KT_UNLIKELY(!kt_running(g->ch))) {
		kft_unkeep(&t->t, res);
		return;
	}
	rc = kt_write(g->ch, now, KTRACE_CLASS_CALL, KTRACE_CALL_ID(idx), w, words);
	if (KT_UNLIKELY(rc)) {
		if (rc == -ENOSPC)
			kft_lost(g->run, &t->t, res, now);
		else
			kft_unkeep(&t->t, res);
	}
}

/* Frames at @keep and above will never see their exit (SKIP). */
static void skip_frames(struct kft_global *g, struct kft_tls *t, unsigned keep)
{
	uint64_t now = kft_clock(), from = kft_open_from(&t->t);

	for (unsigned i = t->depth; i-- > keep;) {
		struct kft_frame *f = &t->stack[i];

		if (f->t && f->t >= from) {
			unsigned rec = kft_unfinished(g->run, &t->t, f->fn, f->t, f->sig, f->flags,
						      KFT_UNF_SKIP, now);

			if (rec)
				write_call(g, t, f, i, rec, now);
		}
	}
	t->depth = keep;
}

/* The run ended: report the frames it contained (KFT_FLUSH). */
static void flush_frames(struct kft_global *g, struct kft_tls *t, uint64_t now)
{
	uint64_t from = kft_flush_from(&t->t);

	for (unsigned i = t->depth; i-- > 0;) {
		struct kft_frame *f = &t->stack[i];
		unsigned rec;

		if (!f->t)
			continue; /* pushed untimed since the stop */
		if (f->t < from)
			break;
		rec = kft_unfinished(g->run, &t->t, f->fn, f->t, f->sig, f->flags, KFT_UNF_FLUSH, now);
		if (rec)
			write_call(g, t, f, i, rec, now);
		f->flags |= KFT_FRAME_DONE;
	}
}

static void mark_frames(struct kft_tls *t)
{
	for (unsigned i = t->depth; i-- > 0 && !(t->stack[i].flags & KFT_FRAME_WATCH);)
		t->stack[i].flags |= KFT_FRAME_WATCH;
}

/*
 * An entry whose stack pointer is at or above the top frame's: that frame's
 * stack is gone (a live callee's frame always lies below its caller's), so
 * it and any other such frames were abandoned by a longjmp.
 */
static void drop_dead(struct kft_global *g, struct kft_tls *t, uint64_t sp)
{
	unsigned base = kft_sig_base(), lim = base < t->depth ? base : 0, keep = t->depth;

	while (keep > lim && t->stack[keep - 1].sp <= sp)
		keep--;
	if (keep == t->depth)
		return;
	skip_frames(g, t, keep);
	kft_sig_unwound(keep);
}

/*
 * A function inlined into the top frame's function: gcc calls the hooks
 * for it from the top frame's own body, so with the same stack pointer and
 * the same call site (the top frame's return address), but another
 * function.  That is a new, live frame, not a sign of a longjmp (after a
 * longjmp, a new call has a lower stack pointer, or repeats the dead
 * frame's function and call site).
 */
static inline int inlined_in_top(const struct kft_tls *t, uint64_t sp, void *fn, void *site)
{
	const struct kft_frame *top = &t->stack[t->depth - 1];

	return top->sp == sp && top->site == (uint64_t)(uintptr_t)site &&
	       top->fn != (uint64_t)(uintptr_t)fn;
}

/*
 * The exit of a frame below the top: find it; frames above were skipped.
 * The exit hook's stack pointer cannot tell frames apart (gcc may call it
 * as a tail call, after the epilogue), so the match is by function and
 * call site, the topmost one.
 */
static struct kft_frame *unwind(struct kft_global *g, struct kft_tls *t, uint64_t fn,
				uint64_t site)
{
	int k;

	for (k = (int)t->depth - 1; k >= 0; k--)
		if (t->stack[k].fn == fn && t->stack[k].site == site)
			break;
	if (k < 0)
		return NULL;
	skip_frames(g, t, (unsigned)k + 1);
	kft_sig_unwound((unsigned)k);
	return &t->stack[k];
}

static void after_engine(struct kft_global *g, struct kft_tls *t, unsigned res, uint64_t now,
			 uint64_t e0)
{
	if (res & KFT_MARK)
		mark_frames(t);
	if (res & KFT_FLUSH)
		flush_frames(g, t, now ? now : kft_clock());
	if (t->t.epoch != e0)
		kft_write_status(0);
}

KT_EXPORT KFT_HOOK void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;
	struct kft_frame *f;
	uint64_t sp, now, e0;
	unsigned res;

	if (KT_UNLIKELY(!g) || t->busy)
		return;
	t->busy = 1;
	KT_BARRIER();
	if (KT_UNLIKELY(t->state != 1) && !thread_start(t))
		goto out;
	sp = hook_sp();
	if (KT_UNLIKELY(t->depth && sp >= t->stack[t->depth - 1].sp) && t->depth != kft_sig_base() &&
	    !inlined_in_top(t, sp, this_fn, call_site))
		drop_dead(g, t, sp);
	if (KT_UNLIKELY(t->depth >= t->cap)) {
		t->overflow++;
		goto out;
	}
	now = kft_idle(&t->t) ? 0 : kft_clock();
	f = &t->stack[t->depth++];
	f->fn = (uint64_t)(uintptr_t)this_fn;
	f->site = (uint64_t)(uintptr_t)call_site;
	f->t = now;
	f->sp = sp;
	f->flags = 0;
	f->sig = kft_sig_nest;
	e0 = t->t.epoch;
	res = kft_entry(g->run, &t->t, f->fn, now, stack_left(t, sp));
	if (KT_UNLIKELY(res || t->t.epoch != e0))
		after_engine(g, t, res, now, e0);
out:
	KT_BARRIER();
	t->busy = 0;
}

KT_EXPORT KFT_HOOK void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;
	uint64_t fn = (uint64_t)(uintptr_t)this_fn, site = (uint64_t)(uintptr_t)call_site;
	uint64_t now, e0;
	struct kft_frame *f;
	unsigned res;

	if (KT_UNLIKELY(!g) || t->busy || t->state != 1)
		return;
	t->busy = 1;
	KT_BARRIER();
	if (KT_UNLIKELY(t->overflow)) {
		t->overflow--;
		goto out;
	}
	if (KT_UNLIKELY(!t->depth)) {
		kft_unmatched(&t->t);
		goto out;
	}
	f = &t->stack[t->depth - 1];
	if (KT_UNLIKELY(f->fn != fn || f->site != site)) {
		f = unwind(g, t, fn, site);
		if (!f) {
			kft_unmatched(&t->t);
			goto out;
		}
	}
	t->depth--;
	now = (kft_idle(&t->t) && !f->t) ? 0 : kft_clock();
	e0 = t->t.epoch;
	res = kft_exit(g->run, &t->t, fn, f->t, now, f->sig, f->flags);
	if (res & KFT_REC)
		write_call(g, t, f, t->depth, res, now);
	if (KT_UNLIKELY((res & ~(KFT_REC | 0xfu)) || t->t.epoch != e0))
		after_engine(g, t, res & ~KFT_MARK, now, e0);
out:
	KT_BARRIER();
	t->busy = 0;
}

void kft_thread_end(void)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;

	if (!g || t->state != 1 || t->busy)
		return;
	t->busy = 1;
	KT_BARRIER();
	skip_frames(g, t, 0);
	if (t->t.c != t->own)
		kft_release_block(t->t.c);
	t->t.c = NULL;
	t->state = -1;
	munmap(t->map, t->map_len);
	t->map = NULL;
	t->stack = NULL;
	KT_BARRIER();
	t->busy = 0;
}

void kft_hooks_atfork_child(void)
{
	struct kft_tls *t = &kft_tls;

	/* The parent's counter block stays the parent's. */
	if (t->state == 1 && t->t.c != t->own) {
		struct kft_counters *c = kft_claim_block(kt_gettid());

		t->t.c = c ? c : t->own;
	}
}

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
 * call-site index, entry time, stack pointer, flags).  The entry hook
 * pushes a frame and asks the engine (kft/engine.h) about triggers and
 * watches; the exit hook pops it and asks whether the completed call is
 * kept: if so it writes one 16-byte CALL record (docs/FORMAT.md, "Function
 * call records") stamped with the exit time.  So a call a filter drops
 * costs no write.
 *
 * Speed.  The two clock reads (rdtsc, ~9.5 ns each on the project's AMD
 * guests) are most of a call's cost, and work that does not wait for
 * them overlaps with them.  So each hook has a fast path that calls
 * nothing (the slow cases leave by tail calls to KFT_COLD functions, so
 * no register is saved), tested by one per-thread word (the gate); the
 * call-site index is looked up at entry, where it overlaps with the
 * clock read, and the record's word 0 is prepared there; time filters
 * are tested inline (kft_exit_inline()); the record goes in with
 * kt_put_fast().  docs/PERFORMANCE.md, "Function tracing (KFT) on
 * SQLite", has the measurements.
 *
 * Calls whose exit is never seen:
 *  - longjmp/siglongjmp: the program's own setjmp and longjmp calls are
 *    told to the hooks through its PLT (lib/kft_plt.c): setjmp's depth is
 *    remembered by jmp_buf (kft_hooks_setjmp()), and a longjmp to it ends
 *    the frames above at once (kft_hooks_longjmp()).  Otherwise (a jump
 *    inside a library, a jmp_buf forgotten) an entry whose stack pointer
 *    is at or above the top frame's (entry hooks are called after the
 *    prologue, so their stack pointers order the frames), or the exit of a
 *    function below the top of the shadow stack, shows that frames were
 *    abandoned; they are reported as unfinished.  Except a function inlined into the top frame's: its
 *    hooks run in the top frame with its stack pointer and call site
 *    (inlined_in_top());
 *  - ucontext: swapcontext()/setcontext()/makecontext() are told to the
 *    hooks through the PLT too (kft_hooks_swapcontext()): each context
 *    keeps its own frames, put aside (shadow stack and -pg return stack)
 *    while another runs; a context first entered nests on its resumer's
 *    frames, which the stack-position checks leave alone (ctx_base);
 *  - the run stops while calls are open (KFT_FLUSH): reported unfinished,
 *    as KFT's Delta 0;
 *  - the thread or the program ends inside calls: reported unfinished.
 *
 * Re-entrance: a hook sets KFT_GATE_BUSY; a signal handler that
 * interrupts a hook runs its own calls untraced (both its entries and its
 * exits see the bit, so the shadow stack stays balanced); while the run
 * records, each such call is counted at its entry (missed_in_hook(),
 * kft-status "entries missed in signal handlers").  A handler that
 * interrupts traced code between hooks pushes onto the same shadow stack;
 * kft_signal.c tells how deep in handlers each call is.
 *
 * Hot path: no lock, no syscall, no allocation.  A thread's first call maps
 * its shadow stack and claims a counter block (once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft_rt.h"

#define KFT_HOOK __attribute__((no_instrument_function))
#define KFT_COLD __attribute__((noinline, cold, no_instrument_function))

/*
 * The gate: while it is 0, both hooks take their fast path (push, clock,
 * pop, clock, engine's inline test, write).  Any bit sends a hook to its
 * slow path, which handles the case and recomputes the gate (gate_open()).
 * KFT_GATE_ENGINE only concerns entries.
 */
#define KFT_GATE_OFF 1u      /* the thread does not trace (not yet, or never again) */
#define KFT_GATE_OVERFLOW 2u /* calls were not pushed: the shadow stack was full */
#define KFT_GATE_BUSY 4u     /* inside a hook: a signal handler's calls go untraced */
#define KFT_GATE_ENGINE 8u   /* entries need the engine (triggers, watches, idle run) */
#define KFT_GATE_VFORK 16u   /* vfork() was called: are we its child? (in_vfork_child()) */

#define KFT_JMP_N 8 /* jmp_bufs remembered per thread (kft_hooks_setjmp()) */
#define KFT_CTX_N 16        /* ucontexts followed per thread (kft_hooks_swapcontext()) */
#define KFT_CTX_FRAMES 1024 /* frames (and -pg entries) a context can put aside */

/*
 * A context of the thread (ucontext, lib/kft_plt.c): running ones form a
 * chain (the thread's first context, then each one switched to from the
 * one below, whose frames it nests on), the others have their frames put
 * aside until a switch brings them back on top of the chain.
 */
struct kft_ctx {
	uint64_t uc;        /* the ucontext_t it is known by (0: slot free) */
	uint32_t base;      /* on the chain: shadow depth where its frames begin */
	uint32_t pgbase;    /* and -pg return-stack depth */
	uint32_t nf, npg;   /* put aside: frames, -pg entries */
	uint32_t on_chain;
	struct kft_frame *f; /* KFT_CTX_FRAMES frames, then as many -pg entries (mmap) */
};

struct kft_ctxs {
	struct kft_ctx c[KFT_CTX_N];
	uint8_t chain[KFT_CTX_N];
	uint32_t n; /* contexts on the chain */
};

#define KFT_CTX_BYTES ((size_t)KFT_CTX_FRAMES * (sizeof(struct kft_frame) + KFT_PG_ENT_SIZE))

struct kft_tls {
	uint32_t gate;     /* KFT_GATE_* */
	uint32_t depth;    /* frames on the shadow stack */
	struct kft_frame *stack; /* stack[-1] is a sentinel: fn 0, sp ~0 */
	struct kft_run *run;     /* kft_g->run and kft_g, once started */
	struct kft_global *g;
	const uint32_t *ch_state; /* &kft_g->ch->ctl->state (kt_running()) */
	uint32_t cap;
	uint32_t overflow; /* calls not pushed because the stack was full */
	int state;         /* 0 not started, 1 tracing, -1 never again */
	uint32_t vfork;    /* vfork() called, and not known since to run in the parent */
	uint64_t stack_lo, stack_hi; /* the thread's stack, for watches */
	struct kft_shadow mem;        /* where the shadow stack lives (kft_shadow.c) */
	struct kft_thread t;
	struct kft_counters own;     /* counters if no shared block was free */
	struct {
		uint64_t env;   /* a jmp_buf given to setjmp() */
		uint32_t depth; /* the shadow depth then */
	} jmp[KFT_JMP_N];
	uint32_t jmp_next; /* the entry replaced next */
	struct kft_frame *fork_snap; /* the open frames while fork() runs (atfork) */
	size_t fork_snap_len;
	struct kft_ctxs *ctx; /* ucontexts (mmap, at the first switch) */
	uint32_t ctx_base;    /* shadow depth where the running context's frames begin */
};

static __thread struct kft_tls kft_tls
	__attribute__((tls_model("initial-exec"))) = { .gate = KFT_GATE_OFF };

/*
 * The hook's stack pointer: read where the entry hook starts, so the
 * same for every entry at a given stack depth of the program; it orders
 * the frames (a callee's lies below its caller's).  Frames hold it
 * shifted left by KFT_SP_SHIFT (kft_rt.h), so the -pg hooks can place
 * tail-called frames between two byte addresses.
 */
static inline uint64_t hook_sp(void)
{
#if defined(__x86_64__)
	uint64_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp << KFT_SP_SHIFT;
#else
	return (uint64_t)(uintptr_t)__builtin_frame_address(0) << KFT_SP_SHIFT;
#endif
}

unsigned kft_shadow_depth(void)
{
	return kft_tls.depth;
}

/* End of a slow path: let the fast paths in again if nothing stands in their way. */
static void gate_open(struct kft_tls *t)
{
	uint32_t gate = 0;

	if (t->state != 1)
		gate |= KFT_GATE_OFF;
	else if (t->t.entry_checks || kft_idle(&t->t))
		gate |= KFT_GATE_ENGINE;
	if (t->overflow)
		gate |= KFT_GATE_OVERFLOW;
	if (t->vfork)
		gate |= KFT_GATE_VFORK;
	KT_BARRIER();
	t->gate = gate;
}

/*
 * The thread joins @g's run with an empty shadow stack: its counters
 * block claimed, the engine's view to be synced at this entry.  Also when a
 * new run is set up in the process (`ktrace record -p` attached again,
 * lib/kft_attach.c): the thread leaves the stopped one, whose calls still
 * open are not recorded in the new one (their exits find no frame).
 */
static KFT_COLD void thread_join(struct kft_global *g, struct kft_tls *t)
{
	t->depth = t->overflow = 0;
	t->g = g;
	t->run = g->run;
	t->ch_state = &g->ch->ctl->state;
	memset(&t->t, 0, sizeof(t->t)); /* never synced: no view of an earlier run's state */
	t->t.c = kft_claim_block(kt_gettid());
	if (!t->t.c)
		t->t.c = &t->own;
}

/*
 * A new run since this thread last traced (`ktrace record -p` attached
 * again): its shadow stack moves to the new run's session, where that
 * run's consumer finds the calls open at its detach or at the thread's
 * death.  The old region is only unmapped: its session is gone (its
 * consumer closed it, its entry table is no longer mapped), and no frame
 * of it is needed (thread_join() starts from an empty stack; calls in
 * flight return through the -pg return stack, kft_pg.c).
 */
static KFT_COLD void thread_rejoin(struct kft_global *g, struct kft_tls *t)
{
	struct kft_shadow old = t->mem;

	if (old.entry && g->ch->sess && kft_shadow_alloc(g, &t->mem) == 0) {
		t->stack = t->mem.frames;
		t->cap = t->mem.cap;
		if (old.map)
			munmap(old.map, old.map_len);
	} else {
		t->mem = old;
	}
	thread_join(g, t);
}

/* Set up the shadow stack, join the run, learn the stack bounds. */
static int thread_start(struct kft_global *g, struct kft_tls *t)
{
	if (t->state < 0)
		return 0;
	if (kft_shadow_alloc(g, &t->mem) < 0) {
		t->state = -1;
		return 0;
	}
	t->stack = t->mem.frames;
	t->cap = t->mem.cap;
	thread_join(g, t);
	kft_stack_bounds(&t->stack_lo, &t->stack_hi); /* from the thread's base (kft_stack.c) */
	kft_hooks_thread_started();
	__atomic_store_n(&kft_shadow_depth_fn, kft_shadow_depth, __ATOMIC_RELAXED);
	t->state = 1;
	return 1;
}

static inline uint64_t stack_left(const struct kft_tls *t, uint64_t sp)
{
	sp >>= KFT_SP_SHIFT;
	return sp >= t->stack_lo && sp < t->stack_hi ? sp - t->stack_lo : ~(uint64_t)0;
}

/* Write the CALL record of frame @f (at shadow depth @depth) approved as @res. */
static KFT_COLD void write_call(struct kft_global *g, struct kft_tls *t, const struct kft_frame *f,
		       unsigned depth, unsigned res, uint64_t now)
{
	uint64_t w[4];
	unsigned words = kft_call_words(f, depth, res, now, w);
	int rc;

	if (KT_UNLIKELY(!kt_running(g->ch))) {
		kft_unkeep(&t->t, res);
		return;
	}
	rc = kt_write(g->ch, now, KTRACE_CLASS_CALL, KTRACE_CALL_ID(f->idx), w, words);
	if (KT_UNLIKELY(rc)) {
		if (rc == -ENOSPC) /* the buffer is exhausted: the run stops, as KFT's did */
			kft_lost(g->run, &t->t, res, now);
		else if (rc == -ENOBUFS) /* the consumer is behind: counted, the run goes on */
			kft_dropped(&t->t, res);
		else
			kft_unkeep(&t->t, res);
	}
}

/*
 * The common CALL record of frame @f approved as plain KFT_REC (16
 * bytes: a duration below 2^32 raw units, a call site already in the
 * index's first slot) written without a call, for the exit hook's fast
 * path.  Return: 1 written, 0 nothing done (use write_call()).
 */
static inline int put_call(struct kft_tls *t, const struct kft_frame *f, uint64_t now)
{
	uint64_t dur = now - f->t, w0 = f->w0 | (uint32_t)dur;

	if (KT_UNLIKELY((dur >> 32) || f->idx == KTRACE_CALLSITE_NONE ||
			__atomic_load_n(t->ch_state, __ATOMIC_RELAXED) != KTRACE_STATE_RUNNING))
		return 0;
	return kt_put_fast(t->g->ch, now, KTRACE_CLASS_CALL, KTRACE_CALL_ID(f->idx), &w0,
			   KTRACE_CALL_WORDS);
}

/* Frames at @keep and above will never see their exit (SKIP). */
static void skip_frames(struct kft_global *g, struct kft_tls *t, unsigned keep)
{
	uint64_t now = kft_clock(), from = kft_open_from(&t->t);

	for (unsigned i = t->depth; i-- > keep;) {
		struct kft_frame *f = &t->stack[i];

		if (f->t && f->t >= from) {
			unsigned rec = kft_unfinished(g->run, &t->t, f->fn, f->t, KFT_FRAME_SIG(f), f->flags,
						      KFT_UNF_SKIP, now);

			if (rec)
				write_call(g, t, f, i, rec, now);
		}
		f->sp = 0; /* popped (kft_shadow.c) */
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
		rec = kft_unfinished(g->run, &t->t, f->fn, f->t, KFT_FRAME_SIG(f), f->flags, KFT_UNF_FLUSH, now);
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

	/* a ucontext's frames lie on its own stack: those below it are not compared */
	if (t->ctx_base <= t->depth && lim < t->ctx_base)
		lim = t->ctx_base;

	while (keep > lim && t->stack[keep - 1].sp <= sp)
		keep--;
	if (keep == t->depth)
		return;
	skip_frames(g, t, keep);
	kft_sig_unwound(keep);
}

/* kft_rt.h: -pg return-stack entries found dead (exception, longjmp). */
void kft_hooks_pg_dead(uint64_t sp)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;

	if (!g || t->state != 1 || !t->depth || (t->gate & (KFT_GATE_BUSY | KFT_GATE_VFORK)) ||
	    t->stack[t->depth - 1].sp > sp)
		return;
	t->gate |= KFT_GATE_BUSY;
	KT_BARRIER();
	drop_dead(g, t, sp);
	gate_open(t);
}

/*
 * A function inlined into the top frame's function: gcc calls the hooks
 * for it from the top frame's own body, so with the same stack pointer and
 * the same call site (the top frame's return address), but another
 * function.  That is a new, live frame, not a sign of a longjmp (after a
 * longjmp, a new call has a lower stack pointer, or repeats the dead
 * frame's function and call site).
 */
static inline int inlined_in_top(const struct kft_frame *top, uint64_t sp, uint64_t fn,
				 uint64_t site)
{
	return top->sp == sp && top->site == site && top->fn != fn;
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

/* Fill frame @f, at shadow depth @depth, all but its entry time. */
static inline void frame_init(struct kft_frame *f, uint64_t fn, uint64_t site, uint64_t sp,
			      uint32_t idx, unsigned depth)
{
	f->fn = fn;
	f->site = site;
	f->sp = sp;
	f->idx = idx;
	f->w0 = KTRACE_CALL_W0(0, idx, depth, kft_sig_nest, 0);
	f->flags = 0;
}

/* The engine's part of an entry pushed with time @now. */
static void entry_engine(struct kft_tls *t, uint64_t fn, uint64_t now, uint64_t sp)
{
	uint64_t e0 = t->t.epoch;
	unsigned res = kft_entry(t->run, &t->t, fn, now, stack_left(t, sp));

	if (res || t->t.epoch != e0)
		after_engine(t->g, t, res, now, e0);
}

/* What the engine decided at an exit (@res), the run's epoch before (@e0). */
static void exit_engine_done(struct kft_tls *t, struct kft_frame *f, unsigned depth,
			     unsigned res, uint64_t now, uint64_t e0)
{
	if (res & KFT_REC)
		write_call(t->g, t, f, depth, res, now);
	if ((res & ~(KFT_REC | 0xfu)) || t->t.epoch != e0)
		after_engine(t->g, t, res & ~KFT_MARK, now, e0);
}

/*
 * The exit of a frame kft_entry_filter() dropped at its entry: counted as
 * filtered if the run is still the one it was entered in (else it is
 * simply gone, as a frame entered before a run starts).
 */
static inline void exit_unlisted(struct kft_tls *t, const struct kft_frame *f)
{
	if (__atomic_load_n(&t->run->epoch, __ATOMIC_RELAXED) == t->t.epoch)
		kft_exit_unlisted(t->run, &t->t, f->fn, KFT_FRAME_SIG(f), (unsigned)(f - t->stack));
}

/*
 * A call made by a signal handler that interrupted a hook (KFT_GATE_BUSY
 * set): the hook's frames are half updated, so the call cannot be traced;
 * while the run records it is counted (once, at its entry; an atomic add,
 * since handlers nest).  Frames of a thread without counters yet (a handler
 * inside the thread's very first hook) cannot be counted.
 */
static KFT_COLD void missed_in_hook(struct kft_tls *t)
{
	struct kft_counters *c = t->t.c;

	if (t->state == 1 && c &&
	    KFT_EPOCH_STATE(__atomic_load_n(&t->run->epoch, __ATOMIC_RELAXED)) == KFT_STATE_RUNNING)
		__atomic_fetch_add(&c->sigmissed, 1, __ATOMIC_RELAXED);
}

/*
 * After vfork() (kft_hooks_vfork()) the child runs in the parent's memory,
 * on its stack, with this thread's state (this TLS block, its shadow stack
 * and -pg return stack): it must change none of it, or the parent finds
 * the child's calls (exec*(), _exit()) on its own stack (the child's
 * calls are not traced: it can only exec or _exit).  The parent is
 * suspended until the child has exec()ed or exited, so the first hook
 * that runs in the parent's pid afterwards ends the question (one getpid()
 * per vfork()).  Return: 1 in the child (the hook does nothing), 0 in the
 * parent (cleared; the caller recomputes the gate).
 */
static KFT_COLD int in_vfork_child(struct kft_tls *t)
{
	if (kt_pid && getpid() != kt_pid)
		return 1;
	t->vfork = 0;
	return 0;
}

void kft_hooks_setjmp(uint64_t env)
{
	struct kft_tls *t = &kft_tls;
	unsigned i;

	if (t->state != 1 || (t->gate & (KFT_GATE_BUSY | KFT_GATE_VFORK)))
		return;
	for (i = 0; i < KFT_JMP_N && t->jmp[i].env != env; i++)
		;
	if (i == KFT_JMP_N) {
		i = t->jmp_next++ % KFT_JMP_N;
		t->jmp[i].env = env;
	}
	t->jmp[i].depth = t->depth;
}

/*
 * longjmp() to a jmp_buf whose setjmp() was seen at shadow depth d: the
 * frames at d and above will never return.  Without this the hooks find
 * out only at the next entry whose stack pointer is at or above the dead
 * top frame's (drop_dead()), and a call whose frame lies lower, or a
 * library call (placed under the top frame, kft_plt_hook_sp()), would
 * nest in a dead frame.
 */
void kft_hooks_longjmp(uint64_t env)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;
	unsigned i, keep;

	if (!g || t->state != 1 || (t->gate & (KFT_GATE_BUSY | KFT_GATE_VFORK)))
		return;
	for (i = 0; i < KFT_JMP_N && t->jmp[i].env != env; i++)
		;
	if (i == KFT_JMP_N || (keep = t->jmp[i].depth) >= t->depth)
		return;
	t->gate |= KFT_GATE_BUSY;
	KT_BARRIER();
	skip_frames(g, t, keep);
	kft_sig_unwound(keep);
	gate_open(t);
}

/* Saved frames @f[0..@n) will never run again: reported unfinished, as skip_frames(). */
static void report_saved(struct kft_global *g, struct kft_tls *t, struct kft_frame *f, unsigned n)
{
	uint64_t now = kft_clock(), from = kft_open_from(&t->t);

	for (unsigned i = n; i-- > 0;) {
		if (f[i].t && f[i].t >= from) {
			unsigned rec = kft_unfinished(g->run, &t->t, f[i].fn, f[i].t, KFT_FRAME_SIG(&f[i]),
						      f[i].flags, KFT_UNF_SKIP, now);

			if (rec)
				write_call(g, t, &f[i], KTRACE_CALL_DEPTH(f[i].w0), rec, now);
		}
	}
}

/* The thread's context table, mapped at its first switch.  NULL: no memory. */
static struct kft_ctxs *ctx_table(struct kft_tls *t)
{
	void *m;

	if (t->ctx)
		return t->ctx;
	m = mmap(NULL, sizeof(struct kft_ctxs), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	t->ctx = m; /* zero: no context, none on the chain */
	return t->ctx;
}

static struct kft_ctx *ctx_top(struct kft_ctxs *x)
{
	return &x->c[x->chain[x->n - 1]];
}

/* A free slot for a context known by @uc, not on the chain.  NULL: none. */
static struct kft_ctx *ctx_new(struct kft_ctxs *x, uint64_t uc)
{
	for (unsigned i = 0; i < KFT_CTX_N; i++) {
		struct kft_ctx *c = &x->c[i];

		if (!c->uc && !c->on_chain) {
			c->uc = uc;
			c->nf = c->npg = 0;
			return c;
		}
	}
	return NULL;
}

/* Forget context @c, not on the chain: its frames put aside never run again. */
static void ctx_free(struct kft_global *g, struct kft_tls *t, struct kft_ctx *c)
{
	if (c->nf)
		report_saved(g, t, c->f, c->nf);
	c->nf = c->npg = 0; /* -pg entries dropped: their frames are gone with the context */
	c->uc = 0;
}

static void ctx_set_base(struct kft_tls *t)
{
	t->ctx_base = t->ctx && t->ctx->n ? ctx_top(t->ctx)->base : 0;
}

/*
 * Take the top context @c off the chain: its frames (shadow depth
 * c->base up, -pg entries c->pgbase up) are put aside in its buffer
 * (@abandon: reported unfinished and dropped instead, the slot freed).
 */
static void ctx_pop(struct kft_global *g, struct kft_tls *t, struct kft_ctx *c, int abandon)
{
	unsigned n = t->depth > c->base ? t->depth - c->base : 0;
	int npg;

	if (!abandon && !c->f) {
		void *m = mmap(NULL, KFT_CTX_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m != MAP_FAILED)
			c->f = m;
	}
	if (abandon || !c->f || n > KFT_CTX_FRAMES) {
		if (n)
			skip_frames(g, t, c->base); /* counted as unfinished */
		n = 0;
	} else if (n) {
		memcpy(c->f, &t->stack[c->base], (size_t)n * sizeof(struct kft_frame));
		for (unsigned i = c->base; i < t->depth; i++)
			t->stack[i].sp = 0; /* popped (kft_shadow.c) */
		t->depth = c->base;
	}
	c->nf = n;
	if (abandon)
		npg = kft_pg_ctx_save(NULL, c->pgbase, 0); /* dropped */
	else if (c->f)
		npg = kft_pg_ctx_save((char *)c->f + (size_t)KFT_CTX_FRAMES * sizeof(struct kft_frame),
				      c->pgbase, KFT_CTX_FRAMES);
	else
		npg = -1;
	c->npg = npg > 0 ? (unsigned)npg : 0; /* -1: too many, left where they are */
	if (c->base < t->depth) /* not above the base: the context ended (uc_link) */
		t->depth = c->base;
	kft_sig_unwound(t->depth);
	c->on_chain = 0;
	if (abandon) {
		c->nf = c->npg = 0;
		c->uc = 0;
	}
}

/* Put context @c, off the chain, on top of it: its frames put aside come back. */
static void ctx_push(struct kft_global *g, struct kft_tls *t, struct kft_ctx *c)
{
	struct kft_ctxs *x = t->ctx;

	c->base = t->depth;
	c->pgbase = kft_pg_ctx_depth();
	c->on_chain = 1;
	x->chain[x->n++] = (uint8_t)(c - x->c);
	while (t->depth + c->nf > t->cap && kft_shadow_grow(g, &t->mem) == 0)
		t->cap = t->mem.cap;
	if (t->depth + c->nf > t->cap) {
		report_saved(g, t, c->f, c->nf); /* too deep now */
	} else {
		for (unsigned i = 0; i < c->nf; i++) {
			struct kft_frame *f = &t->stack[t->depth + i];
			unsigned d = t->depth + i;

			*f = c->f[i];
			f->w0 = (f->w0 & ~(0xffffull << 40)) | ((uint64_t)(d > 0xffff ? 0xffff : d) << 40);
		}
		t->depth += c->nf;
	}
	if (c->npg)
		kft_pg_ctx_restore((char *)c->f + (size_t)KFT_CTX_FRAMES * sizeof(struct kft_frame),
				   c->npg);
	c->nf = c->npg = 0;
}

/*
 * Switch the thread's shadow stack to the context known by @ucp (see
 * kft_rt.h); @abandon: the running context's frames are dead.  Return: 1
 * done, 0 @ucp is no context seen here (nothing done).
 */
static int ctx_switch(struct kft_global *g, struct kft_tls *t, uint64_t ucp, int abandon,
		      int fresh_ok)
{
	struct kft_ctxs *x = t->ctx;
	struct kft_ctx *c = NULL;
	int j;

	for (j = (int)x->n - 2; j >= 0 && x->c[x->chain[j]].uc != ucp; j--)
		;
	if (j >= 0) { /* back to a context below: those above it stop */
		while ((int)x->n > j + 1) {
			ctx_pop(g, t, ctx_top(x), abandon); /* the running one: abandoned? */
			abandon = 0;
			x->n--;
		}
		return 1;
	}
	if (ctx_top(x)->uc == ucp && !abandon)
		return 1; /* to itself */
	for (unsigned i = 0; i < KFT_CTX_N && !c; i++)
		if (x->c[i].uc == ucp && !x->c[i].on_chain)
			c = &x->c[i];
	if (!c && !fresh_ok)
		return 0;
	if (!c && !(c = ctx_new(x, ucp)))
		return 1; /* no slot: not followed (the stack-position checks apply) */
	if (abandon) {
		ctx_pop(g, t, ctx_top(x), 1);
		x->n--;
	} else if (x->n >= KFT_CTX_N) {
		return 1;
	}
	ctx_push(g, t, c);
	return 1;
}

/*
 * The chain as the thread runs now, the running context known by @oucp
 * (0: not named).  Return: the table, NULL if none can be had.
 */
static struct kft_ctxs *ctx_begin(struct kft_global *g, struct kft_tls *t, uint64_t oucp)
{
	struct kft_ctxs *x = ctx_table(t);
	struct kft_ctx *top;

	if (!x)
		return NULL;
	if (g->ch && g->ch->ctl && !(__atomic_load_n(&g->ch->ctl->flags, __ATOMIC_RELAXED) & KTRACE_CTL_UCONTEXT))
		__atomic_fetch_or(&g->ch->ctl->flags, KTRACE_CTL_UCONTEXT, __ATOMIC_RELAXED);
	if (!x->n) { /* the thread's own context: base 0 */
		top = ctx_new(x, oucp);
		if (!top)
			return NULL;
		top->base = top->pgbase = 0;
		top->on_chain = 1;
		x->chain[x->n++] = (uint8_t)(top - x->c);
	}
	/* contexts that ended by returning (uc_link): the running one lies below */
	while (x->n > 1 && ctx_top(x)->base > t->depth) {
		ctx_top(x)->on_chain = 0;
		ctx_top(x)->uc = 0;
		x->n--;
	}
	if (!oucp)
		return x;
	top = ctx_top(x);
	for (unsigned i = 0; i < KFT_CTX_N; i++) {
		struct kft_ctx *c = &x->c[i];

		if (c == top || c->uc != oucp)
			continue;
		if (c->on_chain)
			c->uc = 0; /* the name now belongs to the running context */
		else
			ctx_free(g, t, c); /* overwritten by this save: never resumed */
	}
	top->uc = oucp;
	return x;
}

/* Enter a context switch: 1 if the hooks may act (BUSY set). */
static int ctx_enter(struct kft_global *g, struct kft_tls *t)
{
	if (!g || t->state != 1 || (t->gate & (KFT_GATE_BUSY | KFT_GATE_VFORK)))
		return 0;
	t->gate |= KFT_GATE_BUSY;
	KT_BARRIER();
	return 1;
}

void kft_hooks_swapcontext(uint64_t oucp, uint64_t ucp)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;

	if (!ctx_enter(g, t))
		return;
	if (ucp && ucp != oucp && ctx_begin(g, t, oucp))
		ctx_switch(g, t, ucp, 0, 1);
	ctx_set_base(t);
	gate_open(t);
}

void kft_hooks_setcontext(uint64_t ucp)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;
	int done = 0;

	if (!ctx_enter(g, t))
		return;
	/* a context seen at a switch; else a getcontext() of this one (a longjmp) */
	if (t->ctx && ctx_begin(g, t, 0))
		done = ctx_switch(g, t, ucp, 1, 0);
	ctx_set_base(t);
	gate_open(t);
	if (!done)
		kft_hooks_longjmp(ucp);
}

void kft_hooks_makecontext(uint64_t ucp)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;

	if (!ctx_enter(g, t))
		return;
	for (unsigned i = 0; i < KFT_JMP_N; i++)
		if (t->jmp[i].env == ucp)
			t->jmp[i].env = 0; /* its getcontext() is no longer a place to go back to */
	for (unsigned i = 0; t->ctx && i < KFT_CTX_N; i++)
		if (t->ctx->c[i].uc == ucp && !t->ctx->c[i].on_chain)
			ctx_free(g, t, &t->ctx->c[i]);
	gate_open(t);
}

void kft_hooks_vfork(void)
{
	struct kft_tls *t = &kft_tls;

	t->vfork = 1;
	KT_BARRIER();
	t->gate |= KFT_GATE_VFORK;
}

/*
 * vfork.  The child runs in the parent's memory and TLS, on the parent's
 * stack below the vfork() caller's frame, until it execs or exits; the
 * thread that called vfork() waits meanwhile (other threads run on).  So
 * that the child's calls are recorded, under its own tid, as uftrace
 * records them, and the parent finds everything as it left it:
 *   - before vfork() (kft_hooks_vfork_enter()), the call is entered (its
 *     frame pushed; no record yet) and the thread's state is put aside in
 *     a page of its own: the hooks' state (this TLS block), the writer's
 *     (kt_tls), the -pg return stack's depth and the vfork() frame, which
 *     the child's next call will overwrite; vfork() then runs from
 *     kft_vfork_call (lib/kft_pg_entry.S), which keeps nothing on the
 *     stack across it (the child overwrites it) and calls:
 *   - in the child, kft_hooks_vfork_return(0): the writer state is dropped
 *     without giving the parent's slot back (kt_thread_forget()), so the
 *     child's first record claims a stream of its own; it returns from
 *     vfork() on the parent's open frames (recorded there, as a forked
 *     child's return is) and goes on traced: its calls nest above the
 *     parent's frames, which it never pops (returning from vfork()'s
 *     caller is undefined), and the -pg entries it pushes lie above the
 *     parent's;
 *   - in the parent, kft_hooks_vfork_return(pid): the calls the child left
 *     open (its exec*(), which never returned) are written as unfinished in
 *     the child's stream, which is then given back as at a thread exit
 *     (kt_thread_detach() on the child's writer state: its last sub-buffer
 *     closed, the slot freed); the state put aside comes back, and the
 *     parent's own return is recorded.
 * A vfork() the stub cannot take (the thread does not trace, no memory for
 * the page, a vfork child's own vfork()) falls back to kft_hooks_vfork():
 * the child is not traced.
 */
struct kft_vfork {
	struct kft_tls k;     /* the thread's hook state after the entry */
	struct kt_tls w;      /* and its writer state */
	struct kft_frame top; /* the vfork() frame */
	uint32_t base;        /* shadow depth before the entry: the child's frames lie above */
	uint32_t pg_depth;    /* -pg return stack depth */
	uint64_t ret;         /* vfork()'s return address */
	uint64_t fn;          /* recorded as (0: not recorded) */
	int active;           /* between enter and the parent's return */
	int child;            /* the child ran (its writer state is in kt_tls) */
};

static __thread struct kft_vfork *kft_vf __attribute__((tls_model("initial-exec")));

int kft_hooks_vfork_enter(const uint64_t *slot, uint64_t fn)
{
	struct kft_tls *t = &kft_tls;
	struct kft_vfork *v = kft_vf;

	if (t->state != 1 || (t->gate & KFT_GATE_BUSY) || t->vfork || (v && v->active))
		return 0;
	if (!v) {
		v = mmap(NULL, sizeof(*v), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v == MAP_FAILED)
			return 0;
		kft_vf = v;
	}
	v->ret = *slot;
	v->fn = fn;
	v->base = t->depth;
	if (fn)
		kft_pg_hook_enter(fn, v->ret, kft_plt_hook_sp((uint64_t)(uintptr_t)slot));
	v->k = *t;
	v->w = kt_tls;
	if (t->depth > v->base && t->stack)
		v->top = t->stack[v->base];
	v->pg_depth = kft_pg_ctx_depth();
	v->child = 0;
	KT_BARRIER();
	v->active = 1;
	return 1;
}

uint64_t kft_hooks_vfork_return(int pid)
{
	struct kft_tls *t = &kft_tls;
	struct kft_vfork *v = kft_vf;

	if (pid == 0) {
		v->child = 1;
		KT_BARRIER();
		kt_thread_forget();
	} else {
		struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);

		t->gate |= KFT_GATE_BUSY; /* a signal handler's calls: untraced until restored */
		KT_BARRIER();
		if (v->child) {
			/* what the child left open (its exec*()): unfinished, in its stream */
			if (g && t->state == 1 && t->stack && t->depth > v->base)
				skip_frames(g, t, v->base);
			kt_thread_detach(); /* the child's stream */
		}
		kt_tls = v->w;
		for (uint32_t i = v->base; t->stack && i < t->depth && i < t->cap; i++)
			t->stack[i].sp = 0; /* popped (kft_shadow.c) */
		if (v->k.depth > v->base && v->k.stack)
			v->k.stack[v->base] = v->top;
		kft_pg_ctx_save(NULL, v->pg_depth, 0); /* the child's -pg entries */
		*t = v->k;
		KT_BARRIER();
		v->active = 0;
	}
	if (v->fn)
		kft_pg_hook_exit(v->fn, v->ret);
	return v->ret;
}

/*
 * The entry hook's slow path: the first call of a thread, a stack pointer
 * at or above the top frame's (longjmp, signal handler on another stack),
 * a full shadow stack, an engine that must see the entry, a run that
 * changed state, or a nested call from a signal handler (ignored).
 */
static KFT_COLD void enter_slow(struct kft_tls *t, uint64_t fn, uint64_t site, uint64_t sp)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_frame *f;
	uint64_t now;

	if (KT_UNLIKELY(!g))
		return;
	if (KT_UNLIKELY(t->vfork) && in_vfork_child(t))
		return;
	if (t->gate & KFT_GATE_BUSY) {
		missed_in_hook(t);
		return;
	}
	t->gate |= KFT_GATE_BUSY;
	KT_BARRIER();
	if (t->state != 1 && !thread_start(g, t))
		goto out;
	if (KT_UNLIKELY(t->g != g))
		thread_rejoin(g, t); /* a new run since (record -p attached again) */
	if (t->depth && sp >= t->stack[t->depth - 1].sp && t->depth != kft_sig_base() &&
	    t->depth != t->ctx_base && !inlined_in_top(&t->stack[t->depth - 1], sp, fn, site))
		drop_dead(g, t, sp);
	if (t->depth >= t->cap) {
		if (kft_shadow_grow(g, &t->mem) == 0) {
			t->cap = t->mem.cap;
		} else {
			/* Deeper than the shadow stack: not traced, counted. */
			t->overflow++;
			t->t.c->deep++;
			goto out;
		}
	}
	f = &t->stack[t->depth];
	frame_init(f, fn, site, sp, kft_callsite(g, fn, site), t->depth);
	f->t = now = kft_idle(&t->t) ? 0 : kft_clock();
	t->depth++;
	entry_engine(t, fn, now, sp);
	/* filter depth, as the engine sees the run now (dropped at the exit) */
	if (t->t.entry_filter && t->depth - 1 >= t->t.max_depth)
		t->stack[t->depth - 1].flags |= KFT_FRAME_DEEP;
out:
	gate_open(t);
}

/* A time trigger is due at this entry (pushed with time @now). */
static KFT_COLD void enter_deadline(struct kft_tls *t, uint64_t fn, uint64_t now, uint64_t sp)
{
	entry_engine(t, fn, now, sp);
	gate_open(t);
}

/*
 * The entry hook's body, for (@fn, @site) at stack position @sp: inlined
 * into __cyg_profile_func_enter() and kft_pg_hook_enter().
 */
static inline __attribute__((always_inline)) void hook_enter(uint64_t fn, uint64_t site,
							     uint64_t sp)
{
	struct kft_tls *t = &kft_tls;
	uint64_t now;
	struct kft_frame *top, *f;
	uint32_t idx;
	unsigned d;

	if (KT_UNLIKELY(t->gate)) {
		enter_slow(t, fn, site, sp);
		return;
	}
	d = t->depth;
	top = t->stack + d - 1; /* the sentinel if d == 0 */
	idx = kft_callsite_find(t->g, fn, site);
	if (KT_UNLIKELY(d >= t->cap || (sp >= top->sp && !inlined_in_top(top, sp, fn, site)) ||
			idx == KTRACE_CALLSITE_NONE ||
			__atomic_load_n(&t->run->epoch, __ATOMIC_RELAXED) != t->t.epoch)) {
		enter_slow(t, fn, site, sp);
		return;
	}
	t->gate = KFT_GATE_BUSY;
	KT_BARRIER();
	f = top + 1;
	frame_init(f, fn, site, sp, idx, d);
	if (KT_UNLIKELY((f->flags = kft_entry_filter(t->run, &t->t, fn, d)) & KFT_FRAME_UNLISTED)) {
		/* Funclist, notrace or depth drop it: no clock at either end. */
		f->t = 0;
		t->depth = d + 1;
		KT_BARRIER();
		t->gate = 0;
		return;
	}
	now = kft_clock();
	f->t = now;
	t->depth = d + 1;
	if (KT_UNLIKELY(now >= t->t.deadline)) {
		enter_deadline(t, fn, now, sp);
		return;
	}
	KT_BARRIER();
	t->gate = 0;
}

/*
 * The exit hook's slow path: not tracing, calls not pushed (overflow), an
 * exit that is not the top frame's (longjmp, exception), a run that
 * changed state, or a nested call from a signal handler.
 */
static KFT_COLD void exit_slow(struct kft_tls *t, uint64_t fn, uint64_t site)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	uint64_t now, e0;
	struct kft_frame *f;
	unsigned res;

	if (KT_UNLIKELY(t->vfork) && in_vfork_child(t))
		return;
	if (KT_UNLIKELY(!g) || (t->gate & KFT_GATE_BUSY) || t->state != 1)
		return;
	t->gate |= KFT_GATE_BUSY;
	KT_BARRIER();
	if (t->overflow) {
		t->overflow--;
		goto out;
	}
	if (!t->depth) {
		kft_unmatched(&t->t);
		goto out;
	}
	f = &t->stack[t->depth - 1];
	if (f->fn != fn || f->site != site) {
		f = unwind(g, t, fn, site);
		if (!f) {
			kft_unmatched(&t->t);
			goto out;
		}
	}
	t->depth--;
	f->sp = 0;
	if (f->flags & KFT_FRAME_UNLISTED) {
		exit_unlisted(t, f);
		goto out;
	}
	now = (kft_idle(&t->t) && !f->t) ? 0 : kft_clock();
	e0 = t->t.epoch;
	res = kft_exit(t->run, &t->t, fn, f->t, now, KFT_FRAME_SIG(f), f->flags);
	exit_engine_done(t, f, t->depth, res, now, e0);
out:
	gate_open(t);
}

/* The rest of an exit after the clock read, when the engine needs a call. */
static KFT_COLD void exit_engine(struct kft_tls *t, struct kft_frame *f, unsigned depth,
				 uint64_t now, uint64_t e0)
{
	unsigned res = kft_exit_slow(t->run, &t->t, f->fn, f->t, now, KFT_FRAME_SIG(f), f->flags);

	exit_engine_done(t, f, depth, res, now, e0);
	gate_open(t);
}

/* The record of a kept call did not fit put_call(): the general write. */
static KFT_COLD void exit_write(struct kft_tls *t, struct kft_frame *f, unsigned depth,
				uint64_t now, uint64_t e0)
{
	write_call(t->g, t, f, depth, KFT_REC, now);
	if (t->t.epoch != e0) /* the buffer filled up: the run stopped */
		after_engine(t->g, t, 0, now, e0);
	gate_open(t);
}

/*
 * The fast path calls nothing (slow cases leave by tail calls), so it
 * needs no callee-saved registers.
 */
static inline __attribute__((always_inline)) void hook_exit(uint64_t fn, uint64_t site)
{
	struct kft_tls *t = &kft_tls;
	uint64_t now, e;
	struct kft_frame *f;
	uint32_t gate = t->gate;
	unsigned d;
	int keep;

	if (KT_UNLIKELY(gate & ~KFT_GATE_ENGINE)) {
		exit_slow(t, fn, site);
		return;
	}
	d = t->depth;
	f = t->stack + d - 1; /* the sentinel (fn 0) if d == 0 */
	if (KT_UNLIKELY(f->fn != fn || f->site != site)) {
		exit_slow(t, fn, site);
		return;
	}
	t->gate = gate | KFT_GATE_BUSY;
	KT_BARRIER();
	if (KT_UNLIKELY(f->flags & KFT_FRAME_UNLISTED)) {
		t->depth = d - 1;
		f->sp = 0;
		exit_unlisted(t, f);
		KT_BARRIER();
		t->gate = gate;
		return;
	}
	now = kft_clock();
	t->depth = d - 1;
	f->sp = 0; /* popped: the consumer's view of open calls (kft_shadow.c) */
	e = t->t.epoch; /* before the engine's resync, for exit_engine() */
	keep = kft_exit_inline(&t->t, __atomic_load_n(&t->run->epoch, __ATOMIC_RELAXED), f->t, now,
			       f->flags);
	if (KT_UNLIKELY(keep < 0)) {
		exit_engine(t, f, d - 1, now, e);
		return;
	}
	if (keep && KT_UNLIKELY(!put_call(t, f, now))) {
		exit_write(t, f, d - 1, now, e);
		return;
	}
	KT_BARRIER();
	t->gate = gate;
}

KT_EXPORT KFT_HOOK void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	hook_enter((uint64_t)(uintptr_t)this_fn, (uint64_t)(uintptr_t)call_site, hook_sp());
}

KT_EXPORT KFT_HOOK void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	hook_exit((uint64_t)(uintptr_t)this_fn, (uint64_t)(uintptr_t)call_site);
}

/*
 * The -pg hooks (lib/kft_pg.c) enter through here: @sp is the address of
 * the return-address slot shifted as hook_sp()'s, which orders frames as
 * hook_sp() does.
 */
KFT_HOOK int kft_pg_hook_enter(uint64_t fn, uint64_t site, uint64_t sp)
{
	hook_enter(fn, site, sp);
	return kft_tls.state == 1 && !kft_tls.vfork; /* a vfork child diverts nothing */
}

KFT_HOOK void kft_pg_hook_exit(uint64_t fn, uint64_t site)
{
	hook_exit(fn, site);
}

/* kft_rt.h */
KFT_HOOK uint64_t kft_plt_hook_sp(uint64_t slot)
{
	struct kft_tls *t = &kft_tls;
	uint64_t sp = slot << KFT_SP_SHIFT, top;

	if (t->state != 1 || !t->depth || !t->stack)
		return sp;
	top = t->stack[t->depth - 1].sp;
	if (top && top <= sp && sp - top < (4096ull << KFT_SP_SHIFT))
		return top - 1;
	return sp;
}

/* kft_rt.h */
KFT_HOOK void kft_hooks_flag_top(uint64_t fn, unsigned flags)
{
	struct kft_tls *t = &kft_tls;

	if (t->state == 1 && t->depth && t->stack[t->depth - 1].fn == fn)
		t->stack[t->depth - 1].flags |= flags;
}

/* A -pg entry from a signal handler that interrupted a -pg hook: counted, untraced. */
KFT_COLD void kft_pg_hook_missed(void)
{
	missed_in_hook(&kft_tls);
}

void kft_thread_end(void)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	struct kft_tls *t = &kft_tls;

	if (!g || t->state != 1 || (t->gate & KFT_GATE_BUSY))
		return;
	t->gate |= KFT_GATE_BUSY;
	KT_BARRIER();
	skip_frames(g, t, 0);
	if (t->ctx) { /* contexts put aside: their frames never return either */
		for (unsigned i = 0; i < KFT_CTX_N; i++) {
			struct kft_ctx *c = &t->ctx->c[i];

			if (!c->on_chain && c->uc)
				ctx_free(g, t, c);
			if (c->f)
				munmap(c->f, KFT_CTX_BYTES);
		}
		munmap(t->ctx, sizeof(struct kft_ctxs));
		t->ctx = NULL;
		t->ctx_base = 0;
	}
	if (t->t.c != &t->own)
		kft_release_block(t->t.c);
	t->t.c = NULL;
	t->state = -1;
	kft_shadow_free(&t->mem);
	t->stack = NULL;
	if (kft_vf && !kft_vf->active) {
		munmap(kft_vf, sizeof(*kft_vf));
		kft_vf = NULL;
	}
	gate_open(t);
}

void kft_hooks_atfork_prepare(void)
{
	struct kft_tls *t = &kft_tls;
	size_t len;
	void *p;

	/*
	 * Private memory is copied by fork itself.  A shadow stack in the
	 * session is shared: the parent pops and pushes frames as soon as
	 * fork() returns, possibly before the child has copied them.
	 */
	if (t->state != 1 || !t->mem.entry || !t->depth || !t->stack)
		return;
	len = (size_t)t->depth * sizeof(struct kft_frame);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return; /* the child copies the live frames: right unless the parent is quick */
	memcpy(p, t->stack, len);
	t->fork_snap = p;
	t->fork_snap_len = len;
}

void kft_hooks_atfork_parent(void)
{
	struct kft_tls *t = &kft_tls;

	if (t->fork_snap)
		munmap(t->fork_snap, t->fork_snap_len);
	t->fork_snap = NULL;
	t->fork_snap_len = 0;
}

void kft_hooks_atfork_child(void)
{
	struct kft_tls *t = &kft_tls;
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	int rc;

	if (t->state != 1 || !g) {
		kft_hooks_atfork_parent();
		return;
	}
	/* The parent's counter block stays the parent's. */
	if (t->t.c != &t->own) {
		struct kft_counters *c = kft_claim_block(kt_gettid());

		t->t.c = c ? c : &t->own;
	}
	/* So does a shadow stack in the session: the child copies its frames. */
	rc = kft_shadow_fork(g, &t->mem, t->depth, t->fork_snap);
	kft_hooks_atfork_parent(); /* the snapshot, copied */
	if (rc < 0) {
		t->state = -1; /* no memory for it: the child runs untraced */
		t->depth = 0;
		gate_open(t);
		return;
	}
	t->stack = t->mem.frames;
	t->cap = t->mem.cap;
	/*
	 * The open calls were entered by the parent: the child returns from
	 * them too (from fork(), from main() ...), and those returns are
	 * recorded in the child's thread, as uftrace shows them; but a child
	 * that ends inside them does not report them as unfinished: they are
	 * the parent's calls (kft_unfinished() skips inherited frames).
	 */
	for (unsigned i = 0; i < t->depth; i++)
		t->stack[i].flags |= KFT_FRAME_INHERITED;
}

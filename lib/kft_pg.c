/*
 * lib/kft_pg.c - KFT for programs built with -pg or -pg -mfentry (x86-64).
 *
 * gcc -pg calls mcount after each function's prologue, -pg -mfentry
 * calls __fentry__ before it; neither calls anything at the exit.  libktrace
 * provides both (lib/kft_pg_entry.S; glibc has its own, which LD_PRELOAD or
 * -lktrace overrides).  The entry hook kft_pg_enter() finds the function's
 * address from its own return address, enters the call through the same
 * hook body as __cyg_profile_func_enter() (kft_pg_hook_enter(): shadow
 * stack, engine, triggers and filters alike), saves the real return
 * address on a per-thread return stack and puts the exit trampoline
 * kft_pg_return there instead.  When the function returns, the trampoline
 * calls kft_pg_exit(), which pops the return stack, exits the call through
 * __cyg_profile_func_exit()'s body (the same 16-byte CALL record) and
 * gives the real return address back.  The call site of a record is the
 * real return address, as for -finstrument-functions.
 *
 * Entries of the return stack: real return address, the slot it was read
 * from (orders frames: a callee's lies below its caller's), function,
 * call site.  A live entry's slot holds kft_pg_return.
 *
 * Cases:
 *  - not tracing (no run set up, or the thread stopped for good): the
 *    return address is left alone, so the function costs one call;
 *  - tail call: a function jumped to from a traced one finds kft_pg_return
 *    in its slot already; it is entered as nested in the jumping one (as
 *    with -finstrument-functions, where no tail call is made), its real
 *    return address is the trampoline, so both exits are seen (a function
 *    that tail-calls itself too, up to 4095 deep at one slot);
 *  - longjmp: abandoned entries never see their trampoline.  An entry
 *    whose slot lies at or below a new call's and no longer holds
 *    kft_pg_return is dead, popped at the next entry; the exit finds its
 *    entry by its slot and pops any dead one above.  The shadow stack finds
 *    out about its frames itself (kft_hooks.c) and reports them unfinished;
 *  - C++ exceptions: the unwinder reads return addresses to find callers,
 *    so _Unwind_RaiseException() and _Unwind_Resume_or_Rethrow() are
 *    wrapped: the real return addresses go back in place before unwinding,
 *    and __cxa_begin_catch() (the handler found) drops the unwound entries
 *    and diverts the remaining ones again.  Unwound entries found dead (at
 *    a cleanup pad's next entry, or by __cxa_begin_catch()) are told to
 *    the shadow stack (kft_hooks_pg_dead()).  The unwound calls are reported
 *    unfinished (-finstrument-functions sees their exits: its counts are
 *    the same, flags differ).  pthread_exit() is wrapped the same way.
 *    Cancellation (pthread_cancel()) unwinds from inside glibc, which
 *    cannot be wrapped: it stops at the first diverted frame and ends the
 *    thread there (C cleanup handlers run; C++ destructors of traced
 *    frames do not);
 *  - signals: a handler's calls nest on the same stacks; a handler that
 *    interrupts a -pg hook runs its calls untraced (counted, as
 *    kft_hooks.c does);
 *  - GCC nested functions under -mfentry save %r10 around the hook call
 *    (pg_fentry_r10()): their return address is one word higher;
 *  - fork: the child has a copy of the return stack (private memory);
 *    exec: a fresh process;
 *  - gmon (gprof): __monstartup(), _mcleanup() and moncontrol() are no-ops
 *    here, so its profiling timer never runs (SIGPROF after an exec).
 *
 * Thread-safety: per-thread state only; the hooks are async-signal-safe.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft_rt.h"

#if defined(__x86_64__)

#define PG_HOOK __attribute__((no_instrument_function))
#define PG_CAP (1u << 20) /* return-stack entries per thread (virtual: 32 MiB) */

struct pg_ent {
	uint64_t ret;  /* the real return address */
	uint64_t slot; /* where it lives on the program's stack */
	uint64_t fn, site;
	uint64_t sp;   /* the frame's stack position for the shadow stack (<< KFT_SP_SHIFT) */
	uint64_t tramp; /* the exit trampoline put in the slot (TRAMP or TRAMP_ALL) */
};

struct pg_tls {
	struct pg_ent *e;
	uint32_t depth;
	uint32_t busy;  /* inside a -pg hook */
	uint32_t in_eh; /* return addresses put back for an exception */
	int state;      /* 0 no memory yet, 1 ready, -1 never (thread ended, no memory) */
};

static __thread struct pg_tls pg_tls __attribute__((tls_model("initial-exec")));

extern char kft_pg_return[], kft_dyn_return[];
uint64_t kft_pg_exit(uint64_t sp);
void kft_pg_enter(uint64_t *slot, uint64_t self, int fentry);

#define TRAMP ((uint64_t)(uintptr_t)kft_pg_return)
/* the exit trampoline of functions patched at run time: every register kept */
#define TRAMP_ALL ((uint64_t)(uintptr_t)kft_dyn_return)

/* Is @v one of the exit trampolines (a diverted return address)? */
static inline int is_tramp(uint64_t v)
{
	return v == TRAMP || v == TRAMP_ALL;
}

/*
 * Functions already found by a search back (pg_fn()), by the hook's return
 * address: one word each, (return address << 16) | distance back to the
 * function, so entries are written and read whole, without a lock (a lost
 * race costs another search).  Shared by the threads; a fork copies it.
 */
#define PG_FNCACHE (1u << 16)
static uint64_t *pg_fncache;

static pthread_key_t pg_key;
static pthread_once_t pg_once = PTHREAD_ONCE_INIT;

/* Thread exit: its diverted frames have returned or will never return. */
static void pg_thread_end(void *arg)
{
	struct pg_tls *p = &pg_tls;

	(void)arg;
	if (p->e)
		munmap(p->e, (size_t)PG_CAP * sizeof(struct pg_ent));
	p->e = NULL;
	p->depth = 0;
	p->state = -1;
}

static void pg_once_init(void)
{
	void *c = mmap(NULL, PG_FNCACHE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c != MAP_FAILED)
		__atomic_store_n(&pg_fncache, (uint64_t *)c, __ATOMIC_RELAXED);
	if (pthread_key_create(&pg_key, pg_thread_end) != 0)
		pg_key = (pthread_key_t)-1;
}

static __attribute__((noinline, cold)) int pg_start(struct pg_tls *p)
{
	void *m;

	if (p->state < 0)
		return 0;
	m = mmap(NULL, (size_t)PG_CAP * sizeof(struct pg_ent), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		p->state = -1;
		return 0;
	}
	pthread_once(&pg_once, pg_once_init);
	if (pg_key != (pthread_key_t)-1)
		pthread_setspecific(pg_key, p);
	p->e = m;
	p->state = 1;
	return 1;
}

/*
 * The address of the traced function of the hook call at @c (the call
 * instruction).  __fentry__ is its first instruction, after an endbr64 if
 * any.  mcount comes after the prologue, which begins with "push %rbp;
 * mov %rsp,%rbp" (-pg keeps the frame pointer) and may save registers and
 * reserve the frame before the call: searched back from the call, at most
 * PG_SCAN bytes.  Not found: the call's own address (inside the function,
 * which still names it).
 */
#define PG_SCAN 256
static uint64_t pg_scan(const uint8_t *c, int fentry)
{
	const uint8_t *p = c;
	uint32_t w;

	if (!fentry) {
		for (p = c - 4; p > c - PG_SCAN; p--) {
			memcpy(&w, p, 4);
			if (w == 0xe5894855u || w == 0xec8b4855u) /* 55 48 89 e5, 55 48 8b ec */
				break;
		}
		if (p <= c - PG_SCAN)
			return (uint64_t)(uintptr_t)c;
	}
	memcpy(&w, p - 4, 4);
	if (w == 0xfa1e0ff3u) /* f3 0f 1e fa: endbr64 */
		p -= 4;
	return (uint64_t)(uintptr_t)p;
}

/*
 * GCC's nested functions built with -pg -mfentry keep their static chain
 * (%r10) across the hook: "push %r10; call __fentry__; pop %r10" (41 52,
 * the call, 41 5a).  Their return address is then one word above where
 * __fentry__ looks for it, and the function begins 2 bytes before the
 * call.  @r: __fentry__'s return address.  Reads at most 8 bytes before
 * it, inside the function (or its padding), as pg_scan() does.
 */
static inline int pg_fentry_r10(const uint8_t *r)
{
	return r[0] == 0x41 && r[1] == 0x5a &&
	       ((r[-5] == 0xe8 && r[-7] == 0x41 && r[-6] == 0x52) ||
		(r[-6] == 0xff && r[-5] == 0x15 && r[-8] == 0x41 && r[-7] == 0x52));
}

/* The traced function's address from the hook's return address @r. */
static inline uint64_t pg_fn(uint64_t r, int fentry)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)r, *c;
	uint32_t h = (uint32_t)((r * 0x9e3779b97f4a7c15ull) >> 48);
	uint64_t *cache = __atomic_load_n(&pg_fncache, __ATOMIC_RELAXED), v, fn;

	if (KT_LIKELY(cache)) {
		v = __atomic_load_n(&cache[h], __ATOMIC_RELAXED);
		if (KT_LIKELY((v >> 16) == r))
			return r - (v & 0xffff);
	}
	/* back over the call: 5 bytes (call rel32) or 6 (call *mcount@GOTPCREL(%rip)) */
	if (p[-5] == 0xe8)
		c = p - 5;
	else if (p[-6] == 0xff && p[-5] == 0x15)
		c = p - 6;
	else
		return r;
	if (!fentry) {
		uint32_t w;

		memcpy(&w, c - 4, 4);
		if (w != 0xe5894855u) {
			fn = pg_scan(c, 0);
			if (cache && r < (1ull << 48) && r - fn < 0x10000)
				__atomic_store_n(&cache[h], (r << 16) | (r - fn), __ATOMIC_RELAXED);
			return fn;
		}
		c -= 4;
	} else if (pg_fentry_r10(p)) {
		c -= 2; /* push %r10 */
	}
	return pg_scan(c, 1);
}

PG_HOOK void kft_pg_enter(uint64_t *slot, uint64_t self, int fentry)
{
	struct pg_tls *p = &pg_tls;
	uint64_t s = (uint64_t)(uintptr_t)slot, ret, site, fn, sp;
	struct pg_ent *e;

	if (KT_UNLIKELY(p->busy)) {
		kft_pg_hook_missed();
		return;
	}
	if (KT_UNLIKELY(!__atomic_load_n(&kft_g, __ATOMIC_RELAXED)))
		return;
	p->busy = 1;
	KT_BARRIER();
	if (KT_UNLIKELY(p->state != 1) && !pg_start(p))
		goto out;
	if (fentry == 1 && KT_UNLIKELY(pg_fentry_r10((const uint8_t *)(uintptr_t)self))) {
		slot++; /* a nested function: its saved %r10 lies in between */
		s += 8;
	}
	/* dead entries: at or below this slot, no longer diverted */
	sp = 0;
	while (p->depth) {
		e = &p->e[p->depth - 1];
		if (e->slot > s || is_tramp(*(const uint64_t *)(uintptr_t)e->slot))
			break;
		sp = e->sp;
		p->depth--;
	}
	if (KT_UNLIKELY(sp))
		kft_hooks_pg_dead(sp); /* and their frames on the shadow stack */
	ret = *slot;
	sp = s << KFT_SP_SHIFT;
	if (is_tramp(ret)) {
		/*
		 * A tail call from the traced function whose slot this is:
		 * nested in it, one unit below it for the shadow stack (which
		 * orders frames by stack position, in 1/256 bytes), less than
		 * 16 bytes below the slot (the tail-called function's own
		 * callees' slots are 16 or more below): 4095 deep at most; a
		 * deeper chain of tail calls at one slot shows as frames left
		 * unfinished.
		 */
		if (KT_UNLIKELY(!p->depth || p->e[p->depth - 1].slot != s))
			goto out; /* not ours: leave it */
		site = p->e[p->depth - 1].site;
		sp = p->e[p->depth - 1].sp;
		if (sp > ((s - 16) << KFT_SP_SHIFT) + 1)
			sp--;
	} else {
		site = ret;
		if (fentry == KFT_PG_LIBCALL)
			sp = kft_plt_hook_sp(s);
	}
	if (KT_UNLIKELY(p->depth >= PG_CAP))
		goto out;
	fn = fentry >= KFT_PG_LIBCALL ? self : pg_fn(self, fentry);
	if (!kft_pg_hook_enter(fn, site, sp))
		goto out;
	e = &p->e[p->depth];
	e->ret = ret;
	e->slot = s;
	e->fn = fn;
	e->site = site;
	e->sp = sp;
	/* a patched function's callers need every register back (so does a
	 * frame whose slot holds that trampoline already: a tail call) */
	e->tramp = fentry == KFT_PG_PATCHED || ret == TRAMP_ALL ? TRAMP_ALL : TRAMP;
	p->depth++;
	*slot = e->tramp;
out:
	KT_BARRIER();
	p->busy = 0;
}

/* kft_rt.h */
PG_HOOK void kft_pg_adopt(uint64_t slot, uint64_t fn)
{
	uint32_t depth = pg_tls.state == 1 ? pg_tls.depth : 0;

	kft_pg_enter((uint64_t *)(uintptr_t)slot, fn, KFT_PG_PATCHED);
	if (pg_tls.state == 1 && pg_tls.depth > depth)
		kft_hooks_flag_top(fn, KFT_FRAME_UNSEEN);
}

/* kft_rt.h: the return stack follows ucontext switches (kft_hooks.c). */
PG_HOOK unsigned kft_pg_ctx_depth(void)
{
	return pg_tls.state == 1 ? pg_tls.depth : 0;
}

PG_HOOK int kft_pg_ctx_save(void *buf, unsigned from, unsigned max)
{
	struct pg_tls *p = &pg_tls;
	unsigned n;

	if (p->state != 1 || p->depth <= from)
		return 0;
	n = p->depth - from;
	if (buf && n > max)
		return -1;
	p->busy = 1;
	KT_BARRIER();
	if (buf)
		memcpy(buf, &p->e[from], (size_t)n * sizeof(struct pg_ent));
	p->depth = from;
	KT_BARRIER();
	p->busy = 0;
	return (int)n;
}

PG_HOOK void kft_pg_ctx_restore(const void *buf, unsigned n)
{
	struct pg_tls *p = &pg_tls;

	if (!n || (p->state != 1 && !pg_start(p)) || p->depth + n > PG_CAP)
		return;
	p->busy = 1;
	KT_BARRIER();
	memcpy(&p->e[p->depth], buf, (size_t)n * sizeof(struct pg_ent));
	p->depth += n;
	KT_BARRIER();
	p->busy = 0;
}

_Static_assert(sizeof(struct pg_ent) == KFT_PG_ENT_SIZE, "KFT_PG_ENT_SIZE");

static __attribute__((noinline, cold, noreturn)) void pg_lost(uint64_t sp)
{
	static const char msg[] = "ktrace: -pg exit trampoline reached with no saved return "
				  "address; aborting\n";

	(void)sp;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		abort();
	abort();
}

/* @sp: the stack pointer after the traced function's ret.  Returns where to go. */
PG_HOOK uint64_t kft_pg_exit(uint64_t sp)
{
	struct pg_tls *p = &pg_tls;
	uint64_t s = sp - 8, ret;
	uint32_t busy = p->busy;
	struct pg_ent *e;
	unsigned k = p->depth;

	p->busy = 1;
	KT_BARRIER();
	while (k && p->e[k - 1].slot != s)
		k--;
	if (KT_UNLIKELY(!k))
		pg_lost(sp);
	e = &p->e[k - 1];
	ret = e->ret; /* before busy is cleared: a handler may reuse the entry */
	p->depth = k - 1;
	if (!busy)
		kft_pg_hook_exit(e->fn, e->site);
	KT_BARRIER();
	p->busy = busy;
	return ret;
}

/*
 * Before unwinding from a frame whose stack pointer is @lo: keep the live
 * entries (a chain of slots rising from @lo, equal only under a tail
 * call, each still holding kft_pg_return), drop the rest, and put the real
 * return addresses back, innermost first (so a tail call's outer entry
 * writes last).
 */
static void pg_restore(uint64_t lo)
{
	struct pg_tls *p = &pg_tls;
	uint64_t prev = lo;
	int tail = 0, first = 1;
	unsigned n = 0;

	if (p->state != 1 || !p->depth)
		return;
	p->busy = 1;
	KT_BARRIER();
	/* mark the entries that are not part of the live chain (slot 0) */
	for (unsigned i = p->depth; i-- > 0;) {
		struct pg_ent *e = &p->e[i];

		if (!is_tramp(*(const uint64_t *)(uintptr_t)e->slot) || e->slot < prev ||
		    (e->slot == prev && !first && !tail)) {
			e->slot = 0;
			continue;
		}
		first = 0;
		prev = e->slot;
		tail = is_tramp(e->ret);
	}
	for (unsigned i = p->depth; i-- > 0;)
		if (p->e[i].slot)
			*(uint64_t *)(uintptr_t)p->e[i].slot = p->e[i].ret;
	for (unsigned i = 0; i < p->depth; i++)
		if (p->e[i].slot)
			p->e[n++] = p->e[i];
	p->depth = n;
	p->in_eh = 1;
	KT_BARRIER();
	p->busy = 0;
}

/* A handler was found in the frame whose stack pointer is @lo: divert the frames above again. */
static void pg_rearm(uint64_t lo)
{
	struct pg_tls *p = &pg_tls;
	uint64_t dead = 0;

	if (p->state != 1 || !p->in_eh)
		return;
	p->busy = 1;
	KT_BARRIER();
	while (p->depth && p->e[p->depth - 1].slot < lo)
		dead = p->e[--p->depth].sp;
	if (dead)
		kft_hooks_pg_dead(dead); /* the shadow stack's frames of the unwound calls */
	for (unsigned i = 0; i < p->depth; i++)
		*(uint64_t *)(uintptr_t)p->e[i].slot = p->e[i].tramp;
	p->in_eh = 0;
	KT_BARRIER();
	p->busy = 0;
}

/* The Itanium C++ ABI's unwinder entry points (libgcc_s), wrapped. */
struct _Unwind_Exception;
typedef int (*pg_unwind_fn)(struct _Unwind_Exception *);
typedef void *(*pg_catch_fn)(void *);

/*
 * The definition of @name after libktrace's (dlsym RTLD_NEXT), looked up
 * once into *@slot (threads racing store the same value); abort() if there
 * is none: a program that unwinds or exits threads has one.
 */
static PG_HOOK void *pg_next(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		if (!f)
			abort();
		__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	}
	return f;
}

/*
 * glibc's gmon (gprof) profiling, which -pg programs start from gcrt1.o
 * (__monstartup(), then atexit(_mcleanup)), is off where libktrace is
 * loaded, as uftrace's libmcount does: its mcount is libktrace's, so gmon
 * would count nothing, and its ITIMER_PROF timer survives exec(): a
 * program exec()ed by a -pg program then dies of SIGPROF, having no
 * handler.  No gmon.out is written.
 */
KT_EXPORT PG_HOOK void __monstartup(unsigned long lowpc, unsigned long highpc)
{
	(void)lowpc;
	(void)highpc;
}

KT_EXPORT PG_HOOK void _mcleanup(void)
{
}

KT_EXPORT PG_HOOK void moncontrol(int mode)
{
	(void)mode;
}

KT_EXPORT PG_HOOK __attribute__((noinline)) int _Unwind_RaiseException(struct _Unwind_Exception *x)
{
	static void *real;
	pg_unwind_fn f = (pg_unwind_fn)pg_next(&real, "_Unwind_RaiseException");
	int rc;

	pg_restore((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	rc = f(x);
	/* no handler: back to the caller (std::terminate, as a rule) */
	pg_rearm((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	return rc;
}

KT_EXPORT PG_HOOK __attribute__((noinline)) int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *x)
{
	static void *real;
	pg_unwind_fn f = (pg_unwind_fn)pg_next(&real, "_Unwind_Resume_or_Rethrow");
	int rc;

	pg_restore((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	rc = f(x);
	pg_rearm((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	return rc;
}

/*
 * pthread_exit() unwinds the thread's stack (glibc: a forced unwind, which
 * runs C++ destructors and cleanup handlers): the real return addresses go
 * back first.  The thread's traced calls never return.
 */
KT_EXPORT PG_HOOK __attribute__((noinline, noreturn)) void pthread_exit(void *v)
{
	static void *real;
	void (*f)(void *) = (void (*)(void *))pg_next(&real, "pthread_exit");

	pg_restore((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	f(v);
	abort();
}

KT_EXPORT PG_HOOK __attribute__((noinline)) void *__cxa_begin_catch(void *x)
{
	static void *real;
	pg_catch_fn f = (pg_catch_fn)pg_next(&real, "__cxa_begin_catch");

	/* the catching frame's stack pointer: where this call's return address ends */
	pg_rearm((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
	return f(x);
}

/**
 * ktrace__call_site() - the real return address behind @ret: where the
 * function the calling thread is in was called from, when @ret is the
 * exit trampoline that kft_pg_enter() put in its place (a -pg function or
 * a hooked library call: the entry on top of the thread's return stack);
 * else @ret.  For libktrace-locks.so's call sites (lib/preload/locks.c).
 * Async-signal-safe (per-thread state, no lock).
 */
KT_EXPORT PG_HOOK uintptr_t ktrace__call_site(uintptr_t ret)
{
	struct pg_tls *p = &pg_tls;

	if (!is_tramp(ret) || !p->depth)
		return ret;
	return (uintptr_t)p->e[p->depth - 1].ret;
}

#else

unsigned kft_pg_ctx_depth(void)
{
	return 0;
}

int kft_pg_ctx_save(void *buf, unsigned from, unsigned max)
{
	(void)buf, (void)from, (void)max;
	return 0;
}

void kft_pg_ctx_restore(const void *buf, unsigned n)
{
	(void)buf, (void)n;
}

KT_EXPORT uintptr_t ktrace__call_site(uintptr_t ret)
{
	return ret;
}

#endif /* __x86_64__ */

/*
 * lib/kft_rt.h - internals of the function tracer in libktrace (KFT for
 * programs built with -finstrument-functions), shared by lib/kft_*.c.
 *
 * Pieces:
 *   kft_hooks.c      __cyg_profile_func_enter/exit: per-thread shadow
 *                    stacks, the engine's verdicts, CALL records
 *   kft_pg.c, kft_pg_entry.S    mcount/__fentry__ (-pg builds): the return address
 *                    diverted to an exit trampoline, then the same hooks
 *   kft_patch.c      patchable builds: entry NOPs patched at start into calls
 *                    to kft_pg_entry.S's __fentry__ path
 *   kft_signal.c     sigaction()/signal() wrappers that count signal-handler
 *                    nesting ("interrupt context" for noints/onlyints)
 *   kft_callsites.c  the (function, call site) table, file DIR/callsites
 *   kft_setup.c      static and dynamic runs: environment, channel, the
 *                    shared file DIR/kft, configuration loading with ELF
 *                    symbol names, the DIR/kft-status text, exit and exec
 *
 * The shared file DIR/kft (kft/runfile.h) is mapped MAP_SHARED by the
 * traced program, its forked children and `ktrace kft DIR ...`, which
 * drives the run through the same engine functions (kft/engine.h).
 */
#ifndef KTRACE_LIB_KFT_RT_H
#define KTRACE_LIB_KFT_RT_H

#include <signal.h>
#include <stdint.h>

#include "kft/runfile.h"
#include "runtime.h"

#define KFT_NBLOCKS 1024u          /* counter blocks: writers (threads) at once */
#define KFT_CALLSITES_CAP 262144u  /* (function, call site) pairs per trace */

/* Everything the hooks need, set up once per process (kft_setup.c). */
struct kft_global {
	struct ktrace_channel *ch;
	struct kft_file *file;
	struct kft_run *run;
	struct kft_counters *blocks;
	uint32_t *owners;
	size_t file_size;
	struct ktrace_callsites *cs;     /* DIR/callsites mapping */
	struct ktrace_callsite *cs_ent;  /* its entries */
	uint32_t *cs_index;              /* hash index (shared anonymous memory);
					  * one empty slot if there is no table */
	uint32_t cs_mask;                /* index slots - 1 */
	uint32_t cs_cap;
	uint64_t cs_ready;               /* entries [0, cs_ready) have storage in this process */
	uint64_t cs_off;                 /* the table's offset in the session, 0: DIR/callsites */
	int owner;                       /* this process set the trace up */
	char dir[4096];
};

/* NULL until a run is set up; read by every hook. */
extern struct kft_global *kft_g;

/*
 * Frames' stack positions are stack addresses shifted left this much:
 * room for the -pg hooks' tail-called frames, which share their caller's
 * return-address slot, between two byte addresses (lib/kft_pg.c).
 */
#define KFT_SP_SHIFT 8

/* One shadow-stack frame. */
struct kft_frame {
	uint64_t fn;    /* this_fn */
	uint64_t site;  /* call_site */
	uint64_t t;     /* raw clock at entry (0: not timed) */
	uint64_t sp;    /* stack pointer at the entry hook << KFT_SP_SHIFT (0: popped) */
	uint64_t w0;    /* the CALL record's word 0 as far as known at entry:
			 * call-site index bits 16..23, depth, signal nesting */
	uint32_t flags; /* KFT_FRAME_* */
	uint32_t idx;   /* call-site index (KTRACE_CALLSITE_NONE: none) */
};

/* Signal-handler nesting of frame @f at its entry (saturated at 15). */
#define KFT_FRAME_SIG(f) KTRACE_CALL_SIG((f)->w0)

/*
 * kft_call_words() - the payload of the CALL record of frame @f at shadow
 * depth @depth, approved as @res (KFT_REC | KTRACE_CALLF_*), ending at raw
 * time @now: 1, 2 or 4 words into @w (docs/FORMAT.md, "Function call
 * records").  Returns the number of words.
 */
static inline unsigned kft_call_words(const struct kft_frame *f, unsigned depth, unsigned res,
				      uint64_t now, uint64_t w[4])
{
	uint64_t dur = now - f->t;
	unsigned words = (dur >> 32) ? KTRACE_CALL_WORDS_LONG : KTRACE_CALL_WORDS;

	w[0] = KTRACE_CALL_W0(dur, f->idx, depth, KFT_FRAME_SIG(f), KFT_REC_FLAGS(res));
	w[1] = dur >> 32;
	if (f->idx == KTRACE_CALLSITE_NONE) {
		words = KTRACE_CALL_WORDS_ADDR;
		w[2] = f->fn;
		w[3] = f->site;
	}
	return words;
}

struct kt_session_stack;

/*
 * struct kft_shadow - a thread's shadow stack memory (lib/kft_shadow.c):
 * @frames (frames[-1] is the sentinel), @cap frames usable now, the
 * mapping, and its entry in the session's stack table (NULL: private).
 */
struct kft_shadow {
	struct kft_frame *frames;
	uint32_t cap;
	void *map;
	size_t map_len;
	struct kt_session_stack *entry;
};

/* kft_shadow.c: allocate (session or private), deepen, give back, copy at fork. */
int kft_shadow_alloc(struct kft_global *g, struct kft_shadow *st);
int kft_shadow_grow(struct kft_global *g, struct kft_shadow *st);
void kft_shadow_free(struct kft_shadow *st);
/*
 * kft_shadow_fork() - in a forked child: give the thread a shadow stack of
 * its own holding @depth frames copied from @from (the parent's frames as
 * they were at the fork: kft_hooks.c snapshots them, since a shadow stack
 * in the session is shared memory the parent keeps changing).  Private
 * memory is left as fork copied it.  Return: 0 or -errno (no room).
 */
int kft_shadow_fork(struct kft_global *g, struct kft_shadow *st, unsigned depth,
		    const struct kft_frame *from);

/* The runtime's raw clock (kt_clock()), inlined for the hooks: two reads per call. */
static inline uint64_t kft_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return kt_clock();
#endif
}

/* kft_callsites.c */
int kft_callsites_create(struct kft_global *g);
uint32_t kft_callsite_insert(struct kft_global *g, uint64_t fn, uint64_t site, uint32_t h);

static inline uint32_t kft_callsite_hash(uint64_t fn, uint64_t site)
{
	/* Code addresses differ in their low ~24 bits: one multiply mixes them up. */
	return (uint32_t)(((fn ^ (site << 20)) * 0x9e3779b97f4a7c15ull) >> 32);
}

/*
 * kft_callsite_find() - the index of (@fn, @site) without insertion: the index
 * if the pair sits in its first slot, else KTRACE_CALLSITE_NONE (then
 * call kft_callsite()).  No call, for the exit hook's fast path.
 */
static inline uint32_t kft_callsite_find(const struct kft_global *g, uint64_t fn, uint64_t site)
{
	uint32_t h = kft_callsite_hash(fn, site), v;

	v = __atomic_load_n(&g->cs_index[h & g->cs_mask], __ATOMIC_ACQUIRE);
	if (KT_LIKELY(v && g->cs_ent[v - 1].func == fn && g->cs_ent[v - 1].site == site))
		return v - 1;
	return KTRACE_CALLSITE_NONE;
}

/**
 * kft_callsite() - the call-site index of (@fn, @site), entering the pair
 * in DIR/callsites the first time.  Lock-free, async-signal-safe; a lookup
 * is one hash, one index load and one entry compare.
 * Return: the index, or KTRACE_CALLSITE_NONE (table full or missing).
 */
static inline uint32_t kft_callsite(struct kft_global *g, uint64_t fn, uint64_t site)
{
	uint32_t v = kft_callsite_find(g, fn, site);

	if (KT_LIKELY(v != KTRACE_CALLSITE_NONE) || !g->cs)
		return v;
	return kft_callsite_insert(g, fn, site, kft_callsite_hash(fn, site));
}

/* kft_signal.c: signal-handler nesting of the calling thread. */
extern __thread unsigned kft_sig_nest __attribute__((tls_model("initial-exec")));
/* kft_shadow_depth(), once a thread traces (NULL before: no hooks linked). */
extern unsigned (*kft_shadow_depth_fn)(void);
/* The shadow-stack depth when the innermost active handler began (or ~0u). */
unsigned kft_sig_base(void);
/* The hooks found the stack unwound below @depth: handlers entered above it are gone (siglongjmp). */
void kft_sig_unwound(unsigned depth);
/*
 * sigaction() and signal() with the handler nesting counted: what the
 * preloaded shim libktrace-record.so (lib/preload/signal.c) makes the
 * program's calls; exported from libktrace.so for it alone, not an API.
 */
int ktrace_rt_sigaction(int sig, const struct sigaction *act, struct sigaction *oact);
sighandler_t ktrace_rt_signal(int sig, sighandler_t handler);

/* kft_hooks.c */
unsigned kft_shadow_depth(void); /* frames on the calling thread's shadow stack */
void kft_thread_end(void);       /* report its open frames as unfinished, stop tracing it */
/*
 * fork() of a tracing thread (pthread_atfork handlers, lib/kft_setup.c):
 * prepare snapshots the thread's open frames (mmap: not async-signal-safe,
 * as fork's handlers are not), parent drops the snapshot, child takes a
 * shadow stack of its own from it and marks the frames inherited (their
 * returns in the child are recorded there, as uftrace does; they are never
 * reported unfinished by the child).
 */
/*
 * vfork() (lib/kft_plt.c; kft_hooks.c "vfork" has the design).  The child
 * runs in this thread's memory, with its TLS, until it execs or exits,
 * while the thread waits.
 *
 * kft_hooks_vfork_enter() - the program calls vfork(), whose return
 * address is at @slot, its address to record @fn (0: not recorded, library
 * calls off): enters the call and puts the thread's state aside (a page,
 * mmap()ed once per thread).  Return: 1 if the caller is to run vfork()
 * through kft_vfork_call (lib/kft_pg_entry.S), which calls
 * kft_hooks_vfork_return() in the child and again in the parent; 0 if it
 * must not (the thread does not trace, no memory, a vfork child's own
 * vfork()): then kft_hooks_vfork(), and the child is not traced.
 * kft_hooks_vfork_return() - vfork() returned @pid in this process.  In
 * the child (0): a stream of its own, on the parent's open frames, and the
 * return from vfork() recorded there; in the parent (or on failure): the
 * child's stream given back as at a thread exit, the thread's state put
 * back, its own return recorded.  Return: vfork()'s return address.
 * kft_hooks_vfork() - hooks in this thread change nothing until one finds
 * itself back in the parent's pid.  All three async-signal-safe.
 */
int kft_hooks_vfork_enter(const uint64_t *slot, uint64_t fn);
uint64_t kft_hooks_vfork_return(int pid);
void kft_hooks_vfork(void);
/*
 * kft_hooks_setjmp() - the program calls a setjmp() on jmp_buf @env:
 * remember the thread's shadow depth for it (a few per thread, the
 * oldest forgotten).  kft_hooks_longjmp() - it calls a longjmp() to @env:
 * the frames above that depth are abandoned, reported unfinished now, so
 * the calls that follow are not nested in them (an unknown @env: nothing,
 * the hooks find out at the next entry, kft_hooks.c).  Async-signal-safe;
 * no lock, no syscall.
 */
void kft_hooks_setjmp(uint64_t env);
void kft_hooks_longjmp(uint64_t env);
/*
 * ucontext (lib/kft_plt.c tells the hooks before the real call runs):
 * kft_hooks_swapcontext() - swapcontext(@oucp, @ucp): the calling
 * context's open frames (shadow stack and -pg return stack) are put
 * aside under @oucp, and the frames put aside under @ucp come back (or,
 * for a context never seen, its calls nest under the caller's frames);
 * kft_hooks_setcontext() - setcontext(@ucp): the same, the calling
 * context's frames abandoned (reported unfinished); a @ucp that is no
 * switched context is a longjmp to a getcontext() (kft_hooks_setjmp());
 * kft_hooks_makecontext() - makecontext(@ucp): what was put aside under
 * @ucp will never run again (reported unfinished).  Per thread; the first
 * switch of a thread maps its table (mmap), a context's first save maps
 * room for KFT_CTX_FRAMES frames: one syscall each, never in a hook.
 * Frames a context cannot save (more than KFT_CTX_FRAMES, no memory, more
 * than KFT_CTX_N contexts) are reported unfinished; -pg return addresses
 * that cannot be saved stay where they are (the hooks' stack-position
 * checks then apply, as before).  Not async-signal-safe (nor is
 * swapcontext()).
 */
void kft_hooks_swapcontext(uint64_t oucp, uint64_t ucp);
/*
 * kft_hooks_pg_dead() - the -pg return stack (lib/kft_pg.c) found entries
 * dead, the outermost at stack position @sp (<< KFT_SP_SHIFT): frames
 * on top of the shadow stack at or below it are dead too (an exception
 * unwound them: a cleanup pad's calls, or the handler, run in a frame
 * above), reported unfinished now, so the calls that follow do not nest
 * in them.  No syscall, no lock; per thread.
 */
void kft_hooks_pg_dead(uint64_t sp);
void kft_hooks_setcontext(uint64_t ucp);
void kft_hooks_makecontext(uint64_t ucp);
/*
 * The -pg return stack under a context switch (lib/kft_pg.c):
 * kft_pg_ctx_depth() - its depth; kft_pg_ctx_save() - move the entries
 * from @from up into @buf (KFT_PG_ENT_SIZE bytes each), at most @max:
 * the number moved, -1 if more (nothing done); @buf NULL: dropped; kft_pg_ctx_restore() -
 * push @n entries back from @buf.  Per thread; no syscall except a
 * thread's first restore (its return stack mapped).
 */
#define KFT_PG_ENT_SIZE 48
unsigned kft_pg_ctx_depth(void);
int kft_pg_ctx_save(void *buf, unsigned from, unsigned max);
void kft_pg_ctx_restore(const void *buf, unsigned n);
void kft_hooks_atfork_prepare(void);
void kft_hooks_atfork_parent(void);
void kft_hooks_atfork_child(void);
/*
 * The entry and exit hooks' bodies for the -pg hooks (lib/kft_pg.c): @sp
 * is the address of the traced call's return-address slot.
 * kft_pg_hook_enter() returns 1 if the thread traces (then exactly one
 * kft_pg_hook_exit() of the same (@fn, @site) is expected, unless a
 * longjmp or an exception abandons the frame), 0 if not (no exit call).
 */
int kft_pg_hook_enter(uint64_t fn, uint64_t site, uint64_t sp);
void kft_pg_hook_exit(uint64_t fn, uint64_t site);
void kft_pg_hook_missed(void); /* an entry lost inside a -pg hook (signal), counted */
/*
 * kft_plt_hook_sp() - the stack position (as kft_pg_hook_enter()'s @sp) of
 * a library call whose return-address slot is at @slot: @slot shifted, or
 * one unit below the calling thread's top frame when that frame's own
 * position lies less than 4 KiB below the slot (a -finstrument-functions
 * caller, whose entry hook ran from the calling function's body), so the
 * call nests in its caller.  Calling thread only; async-signal-safe.
 */
uint64_t kft_plt_hook_sp(uint64_t slot);

/*
 * kft_pg.c: the -pg entry hook.  @fentry: 0 mcount, 1 __fentry__ (@self:
 * the hook's return address), KFT_PG_LIBCALL a library call through the
 * PLT (lib/kft_plt.c; @self: the function's address as recorded),
 * KFT_PG_PATCHED a function patched at run time (lib/kft_dynpatch.c;
 * @self: its address).  @slot: the call's return-address slot, diverted
 * to kft_pg_return if traced.
 */
#define KFT_PG_LIBCALL 2
#define KFT_PG_PATCHED 3
void kft_pg_enter(uint64_t *slot, uint64_t self, int fentry);
/*
 * kft_pg_adopt() - a call of function @fn the calling thread is already
 * inside (open when `ktrace record -p` attached; lib/kft_attach.c), whose
 * return-address slot is @slot: entered now as a patched function's call,
 * its return diverted, its frame flagged KFT_FRAME_UNSEEN.  Calling thread
 * only; calls must be adopted outermost first.
 */
void kft_pg_adopt(uint64_t slot, uint64_t fn);
/* kft_hooks.c: flag the calling thread's top frame, if it is @fn's, with @flags. */
void kft_hooks_flag_top(uint64_t fn, unsigned flags);

/*
 * kft_plt.c: library calls of the main program through its PLT/GOT.
 * kft_plt_setup() hooks them (from kft_ctor(), once the run is set up;
 * with KTRACE_LIBCALL=0, @special_only: only vfork and the setjmp and
 * longjmp families, which are told to the hooks and never recorded),
 * for a program whose own calls are all traced:
 * it imports a function-tracing hook, or @patched (kft_patch_apply()
 * patched every entry of a patchable build).  Return: the number of
 * functions hooked, or a negative errno, nothing hooked: -ENOENT no
 * dynamic section (static program), -EXDEV libktrace linked into the
 * program, -ENOTSUP neither of the above, -ENOEXEC unusable dynamic section,
 * -ENOMEM, or mprotect()'s error.  Not thread-safe: before main().
 */
int kft_plt_setup(int patched, int special_only);
/*
 * kft_plt_attach_hooks() - in a process `ktrace record -p` attached to
 * (lib/kft_attach.h): list, as writes for record to make, the main
 * program's GOT slots of the entry hooks it imports
 * (__cyg_profile_func_enter/exit, mcount, __fentry__: bound to libc's
 * no-op ones) pointed at libktrace's, so that its compiled hooks trace it.
 * Return: the slots listed, or -ENOENT.  Not thread-safe (the attach
 * thread only).
 */
int kft_plt_attach_hooks(void);

/* kft_names.c: function names of the program (configuration loading, before main) */
struct kft_resolver;
/* The objects loaded now, their symbol tables opened lazily.  NULL: ENOMEM. */
struct kft_resolver *kft_resolver_open(void);
void kft_resolver_close(struct kft_resolver *r);
/* kft_resolve_fn and kft_glob_fn (kft/config.h) over a struct kft_resolver. */
int kft_resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr);
int kft_glob(void *arg, const char *pat, kt_u32 len, kt_u64 *addrs, kt_u32 max);
/* The objects (main program first; 0 without libelf), object @i's path and load bias. */
unsigned kft_resolver_nobj(const struct kft_resolver *r);
const char *kft_resolver_obj(const struct kft_resolver *r, unsigned i, uint64_t *bias);
/*
 * kft_obj_section() - the link-time address (add the bias) and size in
 * bytes of object @i's allocated section @name.  Return: 0, -1 no such
 * section, not loaded (SHF_ALLOC), or no readable ELF file.
 */
int kft_obj_section(struct kft_resolver *r, unsigned i, const char *name, uint64_t *addr,
		    uint64_t *size);
/*
 * kft_obj_funcs() - @fn(name, run-time address, size in bytes, @arg) per
 * defined function symbol of object @i (.symtab, else .dynsym), until @fn
 * returns non-zero.  Return: 0, @fn's non-zero value, or -1 (no ELF file).
 */
typedef int kft_sym_fn(const char *name, uint64_t addr, uint64_t size, void *arg);
int kft_obj_funcs(struct kft_resolver *r, unsigned i, kft_sym_fn *fn, void *arg);
/*
 * kft_obj_imports() - does object @i's .dynsym hold an undefined symbol
 * (a function it imports) whose name @match accepts?  Return: 1, 0, or
 * -1 (no ELF file).
 */
int kft_obj_imports(struct kft_resolver *r, unsigned i, int (*match)(const char *name));
/* Does symbol @s match the shell pattern @pat, by itself, demangled, or without parameters? */
int kft_sym_match(const struct kft_resolver *r, const char *pat, const char *s);

/*
 * kft_patch.c: patchable builds (-fpatchable-function-entry, -mnop-mcount)
 * patched at program start.  kft_patch_apply() rewrites the entry NOPs of
 * the functions @cfg selects (its funclist and trigger functions; all
 * when it has no funclist) into calls to the -mfentry hook, in every
 * object @r lists, writes DIR/kft-patch (@dir) and says on stderr when
 * sites were skipped.  Constructor only, before the program's threads.
 * Return: 1 if it patched every site it could (no funclist), else 0.
 */
struct kft_config;
int kft_patch_apply(const struct kft_config *cfg, struct kft_resolver *r, const char *dir);

/*
 * kft_patch.c, shared with kft_dynpatch.c: an object's segments, memory
 * within rel32 reach of its text, its text made writable for a while.
 * Constructor only, before the program's threads.
 */
#define KFT_TEXT_SEGS 8
struct kft_text {
	uint64_t bias;
	int found;
	unsigned nseg, nload;
	struct {
		uint64_t lo, hi; /* run-time addresses [lo, hi) */
		int prot;        /* PROT_* from p_flags */
	} seg[KFT_TEXT_SEGS];    /* executable PT_LOAD segments */
	struct {
		uint64_t lo, hi;
	} load[KFT_TEXT_SEGS];   /* readable PT_LOAD segments */
};
/* Fill @o for the object loaded at @bias (dl_iterate_phdr()).  Return: 0, -1 not loaded. */
int kft_text_find(struct kft_text *o, uint64_t bias);
/* The executable segment of @o holding [@a, @a + @len), or -1. */
int kft_text_seg(const struct kft_text *o, uint64_t a, uint64_t len);
/*
 * kft_text_near() - map @len bytes (rounded up to pages) read-write where
 * "jmp/call rel32" from any address in [@lo, @hi] reaches all of them
 * (MAP_FIXED_NOREPLACE, searched upward from @hi, then downward from
 * @lo, 1 GiB each way).  Return: the address, or 0 (none free in reach).
 */
uint64_t kft_text_near(uint64_t lo, uint64_t hi, size_t len);
/* Make the pages of [@lo, @hi) read-write (never writable and executable at once).  Return: 0, -1. */
int kft_text_writable(uint64_t lo, uint64_t hi);
/* Give the pages of [@lo, @hi) segment @seg's protection back. */
void kft_text_restore(const struct kft_text *o, int seg, uint64_t lo, uint64_t hi);
/* A growable array of addresses (kt_malloc()ed @v; zeroed: empty). */
struct kft_addrs {
	uint64_t *v;
	size_t n, cap;
};
/* Append @x, growing by doubling.  Return: 0, -1 out of memory (@a unchanged). */
int kft_addrs_push(struct kft_addrs *a, uint64_t x);
/* Sort and drop duplicates. */
void kft_addrs_sort(struct kft_addrs *a);
/* Is @x in the sorted @a? */
int kft_addrs_has(const struct kft_addrs *a, uint64_t x);
/*
 * kft_patch_selection() - the functions @cfg's funclist (-F) names and
 * its triggers' functions, sorted, appended to @sel.  Return: 1, or 0
 * when @cfg has no funclist (every function is selected; @sel untouched).
 */
int kft_patch_selection(const struct kft_config *cfg, struct kft_addrs *sel);

/*
 * kft_dynpatch.c: functions of programs and libraries built without hooks
 * patched at program start (`ktrace record -P/-U`, KTRACE_PATCH).
 * kft_dyn_apply() patches the functions KTRACE_PATCH selects (and @cfg's
 * funclist keeps, if it has one), writes DIR/kft-dynpatch (@dir), says on
 * stderr when some could not be.  Constructor only, before the program's
 * threads.  Return: 1 if the main program's functions were patched with
 * no funclist (its library calls are then traced too), else 0.
 */
int kft_dyn_apply(const struct kft_config *cfg, struct kft_resolver *r, const char *dir);
/* Was the function at @addr patched by kft_dyn_apply()?  (After it; any thread.) */
int kft_dyn_patched(uint64_t addr);

/* kft_start.c: what ktrace record passes besides the configuration */
/*
 * The raw clock of the program's start (exec) from KTRACE_EXEC_NS, given
 * the raw clock @raw_now read with @ns_now (CLOCK_MONOTONIC) and the raw
 * rate; @raw_now when the variable is absent or implausible.
 */
uint64_t kft_exec_origin(uint64_t raw_now, uint64_t ns_now, uint64_t raw_per_sec);
/* Say, once, why the program runs untraced (to ktrace record, else stderr). */
void kft_report_untraced(const char *msg);
/* kft_attach.c: the reason, while kft_attach_start() runs (the first one kept). */
void kft_attach_error(const char *msg);

/* kft_stack.c: the calling thread's stack [*lo, *hi), *hi its base (0, 0: unknown) */
void kft_stack_bounds(uint64_t *lo, uint64_t *hi);

/* kft_setup.c */
/* Set the run up from kt_env()'s settings (the constructor, kft_attach_start()): 0 or -1. */
int kft_begin(void);
/* Claim a counter block for the calling thread (NULL if none is free). */
struct kft_counters *kft_claim_block(uint32_t tid);
void kft_release_block(struct kft_counters *c);
/* A thread began tracing: arrange for kft_thread_end() at its exit. */
void kft_hooks_thread_started(void);
/* Rewrite DIR/kft-status if the run changed since it was last written. */
void kft_write_status(int force);
/*
 * kft_status_text() - the text of DIR/kft-status ("pid: N", the
 * configuration error if any, then kft_status_format()) for the run
 * @run of @file with its counter blocks @blocks, into @b (NUL-terminated).
 * Return: its length.
 */
size_t kft_status_text(const struct kft_file *file, struct kft_run *run,
		       const struct kft_counters *blocks, char *b, size_t size);

#endif /* KTRACE_LIB_KFT_RT_H */

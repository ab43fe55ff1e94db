/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/engine.h - the KFT run engine: state machine, triggers, filters,
 * watches and status counters (seed 002, "Initiating a KFT run").
 *
 * The engine decides; the caller (lib/kft_hooks.c in user space, the
 * module in the kernel) keeps the shadow stack, reads the clock and writes
 * the records.  At every function entry the caller pushes a frame and calls
 * kft_entry(); at every exit it pops the frame and calls kft_exit(), which
 * says whether the completed call is recorded.  Deciding at exit is what
 * lets `filter mintime` cost no write for short calls.
 *
 * The run state machine (KFT's, with its names):
 *
 *   UNCONFIGURED --load--> CONFIGURED --prime--> PRIMED --start trigger--> RUNNING
 *                                                  ^    (or no start trigger)  |
 *                                                  |                           | stop trigger,
 *                                   autorepeat ----+                           | command, buffer
 *                                   (stop trigger only)                        | full, logentries
 *                                                                              v
 *                                        prime / start command <---------- STOPPED
 *
 * `start` and `stop` commands force the transitions, as `echo start >
 * /proc/kft` did.  Loading a configuration stops any run and begins a new
 * configuration generation (counters restart from zero).
 *
 * Sharing.  struct kft_run holds no pointers, so it may live in memory
 * shared by several processes (a MAP_SHARED file in the trace directory)
 * and be driven both by the traced program and by `ktrace ctl`.  Its state,
 * run number and configuration generation form one 64-bit "epoch" word
 * changed only by compare-and-swap.  Each writer (thread, or CPU in the
 * kernel) has a struct kft_thread with a private copy of the epoch: the fast
 * paths compare the two and fall into the slow path when anything changed,
 * so the common case is one shared load, a few compares and one increment
 * of a counter owned by the writer (struct kft_counters, single writer,
 * summed by kft_status_add()).
 *
 * Time.  The engine works in the caller's raw clock units (TSC ticks in
 * user space, ns in the kernel).  Configurations speak microseconds;
 * kft_run_init() is told the clock rate and converts with integer
 * multiply/shift (no floating point).  A run that a start trigger or
 * command begins records calls that ENTER at or after the start; frames
 * still open when the run stops are reported once, as unfinished
 * (KFT's "Delta 0": the exit was not seen), through the FLUSH protocol
 * below.
 *
 * Thread/signal safety: kft_entry(), kft_exit(), kft_unfinished() and
 * kft_lost() are lock-free, allocation-free and async-signal-safe for a
 * given struct kft_thread as long as a signal handler using the same
 * kft_thread does not interrupt them (the hooks guarantee that by not
 * re-entering while inside one).  Commands (kft_load(), kft_command()) may
 * run from any thread or process, concurrently with the hooks, but not
 * concurrently with each other on the same run.
 */
#ifndef KFT_ENGINE_H
#define KFT_ENGINE_H

#include "config.h"

/* Run states (struct kft_status.state, the epoch's low byte). */
enum kft_state {
	KFT_STATE_UNCONFIGURED = 0,
	KFT_STATE_CONFIGURED = 1, /* loaded, waiting to be primed */
	KFT_STATE_PRIMED = 2,     /* waiting for the start trigger */
	KFT_STATE_RUNNING = 3,    /* recording */
	KFT_STATE_STOPPED = 4,    /* stopped; data kept */
	KFT_STATE_BUSY = 5,       /* a transition is being written (transient) */
};

/* Why a run started or stopped. */
enum kft_reason {
	KFT_REASON_NONE = 0,
	KFT_REASON_ENTRY = 1,      /* trigger on entry to a function */
	KFT_REASON_EXIT = 2,       /* trigger on exit from a function */
	KFT_REASON_TIME = 3,       /* time trigger */
	KFT_REASON_PRIME = 4,      /* start: primed without a start trigger */
	KFT_REASON_COMMAND = 5,    /* control command (ktrace ctl, kft_command) */
	KFT_REASON_FULL = 6,       /* stop: the trace buffer was exhausted */
	KFT_REASON_LOGENTRIES = 7, /* stop: logentries records were kept */
	KFT_REASON_LOAD = 8,       /* stop: a new configuration was loaded */
	KFT_REASON_END = 9,        /* stop: the traced program ended */
};

/* Filters, in the order a call is tested (it counts under the first that drops it). */
enum kft_filter {
	KFT_FILTER_INTS = 0,     /* noints / onlyints */
	KFT_FILTER_FUNCLIST = 1, /* not in the funclist */
	KFT_FILTER_MINTIME = 2,  /* shorter than mintime */
	KFT_FILTER_MAXTIME = 3,  /* longer than maxtime */
	KFT_FILTER_NOTRACE = 4,  /* in the notrace list (tested after funclist) */
	KFT_FILTER_DEPTH = 5,    /* deeper than filter depth (tested after notrace) */
	KFT_NFILTERS = 6,
};

/* Control commands for kft_command(). */
enum kft_cmd {
	KFT_CMD_PRIME = 1, /* CONFIGURED or STOPPED -> PRIMED (-> RUNNING if no start trigger) */
	KFT_CMD_START = 2, /* CONFIGURED, PRIMED or STOPPED -> RUNNING */
	KFT_CMD_STOP = 3,  /* PRIMED or RUNNING -> STOPPED */
};

/* The epoch word: state (bits 0..7), run number (8..39), generation (40..63). */
#define KFT_EPOCH(gen, run, st) \
	(((kt_u64)(gen) << 40) | (((kt_u64)(run) & 0xffffffffu) << 8) | ((kt_u64)(st) & 0xff))
#define KFT_EPOCH_STATE(e) ((unsigned)((e) & 0xff))
#define KFT_EPOCH_RUN(e) ((kt_u32)((e) >> 8))
#define KFT_EPOCH_GEN(e) ((kt_u32)((e) >> 40))

/* struct kft_run.checks: what the configuration asks the hooks to test. */
#define KFT_CHK_START_ENTRY 0x001u
#define KFT_CHK_START_EXIT 0x002u
#define KFT_CHK_START_TIME 0x004u
#define KFT_CHK_STOP_ENTRY 0x008u
#define KFT_CHK_STOP_EXIT 0x010u
#define KFT_CHK_STOP_TIME 0x020u
#define KFT_CHK_WATCH 0x040u
#define KFT_CHK_FILTER 0x080u
#define KFT_CHK_LOGENTRIES 0x100u

/*
 * Results.  kft_exit() and kft_unfinished() return 0 (do not record) or
 * KFT_REC | flags, where flags (the low 4 bits) are the KTRACE_CALLF_* bits
 * for the record.  kft_entry() and kft_exit() may also return:
 *   KFT_MARK   a stack watch fired: set KFT_FRAME_WATCH on every open frame
 *              of this thread (they are then kept whatever the filters say);
 *   KFT_FLUSH  the run this thread recorded in has ended: report each open
 *              frame entered at or after kft_flush_from(t) through
 *              kft_unfinished() (top of the stack first) and mark it
 *              KFT_FRAME_DONE.  With kft_exit(), do this after writing the
 *              returning call's own record.
 */
#define KFT_REC 0x100u
#define KFT_MARK 0x200u
#define KFT_FLUSH 0x400u
#define KFT_REC_FLAGS(r) ((r) & 0xfu)

/* Frame flags the caller keeps in its shadow stack and passes back. */
#define KFT_FRAME_WATCH KTRACE_CALLF_WATCH /* marked by a stack watch */
#define KFT_FRAME_UNSEEN KTRACE_CALLF_UNFINISHED /* entered before the trace began (a call
					    * open when `ktrace record -p` attached): its
					    * record is flagged unfinished */
#define KFT_FRAME_DONE 0x80u               /* already reported (unfinished) */
#define KFT_FRAME_UNLISTED 0x100u          /* dropped at entry by kft_entry_filter(), untimed */
#define KFT_FRAME_DEEP 0x200u              /* deeper than filter depth: dropped at exit */
#define KFT_FRAME_INHERITED 0x400u         /* a forked child's copy of its parent's open call:
					    * recorded if the child returns from it, never
					    * reported unfinished by the child */

#define KFT_RUN_MAGIC 0x4e55524bu /* "KRUN" */
#define KFT_RUN_VERSION 1u

/**
 * struct kft_run - one trace run: loaded configuration, state, status.
 * Plain data without pointers: may live in shared memory.  Initialise with
 * kft_run_init(); read the status with kft_status_begin()/kft_status_add().
 * Fields are written only by the engine.
 */
struct kft_run {
	kt_u32 magic;   /* KFT_RUN_MAGIC */
	kt_u32 version; /* KFT_RUN_VERSION */
	kt_u32 size;    /* sizeof(struct kft_run) */
	kt_u32 checks;  /* KFT_CHK_* of the loaded configuration */
	kt_u64 epoch;   /* KFT_EPOCH(gen, run, state), changed by CAS only */

	/* From the configuration, in raw clock units. */
	kt_u64 start_fn, stop_fn; /* entry/exit trigger functions */
	kt_u64 start_at;          /* time start trigger: raw clock */
	kt_u64 stop_after;        /* time stop trigger: raw units after the start */
	kt_u64 mintime, maxtime;  /* raw units; maxtime 0 = no bound */
	kt_u64 watch_threshold;   /* bytes of stack left; worst-stack lowers it */
	kt_u64 pool;              /* logentries not yet handed to writers */

	/* The current (or last) run. */
	kt_u64 run_start;   /* raw clock of the start */
	kt_u64 stop_at;     /* run_start + stop_after, or ~0 */
	kt_u64 run_stop;    /* raw clock of the stop, 0 while running */
	kt_u64 start_by;    /* function whose entry/exit started it (0 = none) */
	kt_u64 stop_by;     /* function whose entry/exit stopped it */
	kt_u32 start_reason, stop_reason; /* enum kft_reason */
	kt_u64 lowest_stack;  /* least stack left seen by a watch (~0 = none) */
	kt_u64 spill_lost;    /* records lost by writers without own counters */

	/* Clock: raw = us * us_mult >> 24; ns = raw * ns_mult >> 32. */
	kt_u64 us_mult;
	kt_u64 ns_mult;
	kt_u64 origin; /* raw clock of time 0 for `trigger start time` */

	/* The configuration as loaded (funclist sorted ascending). */
	struct kft_config cfg;
};

/**
 * struct kft_counters - one writer's counts (single writer: plain stores;
 * readers sum them and tolerate a value being a moment old).  Counts of
 * another configuration generation (@gen) are ignored by the sum and reset
 * by the writer when it sees the new generation.
 */
struct kft_counters {
	kt_u64 gen;
	kt_u64 kept;       /* records kept (unfinished included) */
	kt_u64 unfinished; /* of which exit not seen */
	kt_u64 lost;       /* records the trace buffer refused */
	kt_u64 unmatched;  /* exits whose entry was not on the shadow stack */
	kt_u64 marks;      /* times a stack watch fired */
	kt_u64 lowest_stack; /* least stack left seen (~0 = none) */
	kt_u64 filtered[KFT_NFILTERS];
	kt_u64 deep;       /* calls not traced: deeper than the shadow stack */
	kt_u64 sigmissed;  /* calls of signal handlers that interrupted a hook:
			    * not traced (user space; atomic adds, handlers nest) */
	kt_u64 pad[1]; /* 128 bytes: writers' blocks never share a cache line */
};

_Static_assert(sizeof(struct kft_counters) == 128, "counter block is 128 bytes");

/**
 * struct kft_thread - a writer's private view of the run (one per thread,
 * or per CPU in the kernel).  Zero it, then set @c; everything else is
 * managed by the engine.
 */
struct kft_thread {
	struct kft_counters *c; /* this writer's counters (caller-owned) */
	kt_u64 epoch;           /* last epoch seen (0: never synced) */
	kt_u64 run_start;       /* start of the run seen running */
	kt_u64 flush_from;      /* KFT_FLUSH window: frames entered in */
	kt_u64 flush_until;     /* [flush_from, flush_until] were in the ended run */
	kt_u64 deadline;        /* raw time of the next time trigger (~0 none) */
	kt_u64 credits;         /* logentries reserved from the pool */
	kt_u32 entry_checks;    /* KFT_CHK_* relevant at entry in this state */
	kt_u32 exit_checks;     /* KFT_CHK_* relevant at exit in this state */
	kt_u64 min_dur;         /* time filters tested inline by kft_exit(): keep */
	kt_u64 max_dur;         /* calls with min_dur <= duration <= max_dur (raw) */
	kt_u32 skip_unlisted;   /* kft_entry_filter() may drop calls at their entry, untimed */
	kt_u32 entry_filter;    /* kft_entry_filter() has something to test */
	kt_u32 max_depth;       /* filter depth while running (~0: none) */
};

/**
 * kft_run_init() - initialise @r (state UNCONFIGURED).
 * @raw_per_sec: raw clock units per second (TSC Hz, or 1000000000 for ns),
 *               at most 2^40.
 * @origin:      raw clock value of time 0 for `trigger start time` (program
 *               start in user space, 0 = boot in the kernel).
 */
void kft_run_init(struct kft_run *r, kt_u64 raw_per_sec, kt_u64 origin);

/**
 * kft_load() - load @cfg into @r: stop a run in progress (reason LOAD),
 * start a new generation in state CONFIGURED, and prime it if @cfg says
 * `prime`.  @now: raw clock.
 * Return: 0, or -KFT_EINVAL if @cfg is inconsistent (nfuncs too large, a
 * trigger kind out of range), leaving @r unchanged.
 */
int kft_load(struct kft_run *r, const struct kft_config *cfg, kt_u64 now);

/**
 * kft_command() - a control command (enum kft_cmd) at raw time @now.
 * Return: 0, -KFT_EBUSY if the state does not allow it (e.g. prime when
 * RUNNING, anything when UNCONFIGURED), -KFT_EINVAL for an unknown command.
 */
int kft_command(struct kft_run *r, int cmd, kt_u64 now);

/**
 * kft_stop() - stop a PRIMED or RUNNING run for @reason (enum kft_reason)
 * at raw time @now; @fn names the function for trigger reasons.  A trigger
 * reason with `autorepeat` re-primes instead.
 * Return: 0 if this call stopped it, -KFT_EBUSY if it was not running.
 */
int kft_stop(struct kft_run *r, unsigned reason, kt_u64 fn, kt_u64 now);

/* Slow paths of the inline functions below (do not call directly). */
unsigned kft_entry_slow(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 now,
			kt_u64 stack_left);
unsigned kft_exit_slow(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 t_entry,
		       kt_u64 now, unsigned sig, unsigned fflags);

/**
 * kft_entry() - a function was entered (after its frame was pushed).
 * @fn:         the function's address.
 * @now:        raw clock, the frame's entry time.
 * @stack_left: bytes of stack left below the stack pointer (for watches;
 *              pass ~0 if unknown).
 * Return: 0 or KFT_MARK / KFT_FLUSH (see above).
 */
static inline unsigned kft_entry(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 now,
				 kt_u64 stack_left)
{
	if (KFT_LIKELY(KFT_LOAD(&r->epoch) == t->epoch && now < t->deadline && !t->entry_checks))
		return 0;
	return kft_entry_slow(r, t, fn, now, stack_left);
}

/* Is @fn among the first @n (at most KFT_FUNCLIST_MAX) of the sorted @v? */
static inline int kft_in_sorted(const kt_u64 *v, kt_u32 n, kt_u64 fn)
{
	kt_u32 lo = 0, hi = n < KFT_FUNCLIST_MAX ? n : KFT_FUNCLIST_MAX;

	while (lo < hi) {
		kt_u32 mid = lo + (hi - lo) / 2;

		if (v[mid] == fn)
			return 1;
		if (v[mid] < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/** kft_listed() - is @fn in the loaded funclist (binary search, sorted list)? */
static inline int kft_listed(const struct kft_run *r, kt_u64 fn)
{
	return kft_in_sorted(r->cfg.funcs, r->cfg.nfuncs, fn);
}

/** kft_notraced() - is @fn in the loaded notrace list (binary search, sorted list)? */
static inline int kft_notraced(const struct kft_run *r, kt_u64 fn)
{
	return (r->cfg.flags & KFT_CF_NOTRACE) && kft_in_sorted(r->cfg.notrace_fns, r->cfg.nnotrace, fn);
}

/**
 * kft_entry_filter() - what the filters that need no time (funclist,
 * notrace, depth) say about a call of @fn entered now at shadow-stack
 * depth @depth by a writer in sync with the run.
 * Return: 0 (nothing yet: decided at the exit); KFT_FRAME_UNLISTED: drop
 * it at its entry, untimed (the run is running with such a filter and
 * nothing else needs the call's times: no time trigger pending, no stack
 * watch; the caller pushes the frame untimed, reads no clock at either
 * end and calls kft_exit_unlisted() at the exit if the run is still the
 * same, else kft_exit() with entry time 0, which drops it); or
 * KFT_FRAME_DEEP: deeper than `filter depth` while times are needed: time
 * it and keep the flag on the frame, kft_exit() drops it.  So a filtered
 * call costs no clock read when the run allows it.
 */
static inline unsigned kft_entry_filter(const struct kft_run *r, const struct kft_thread *t,
					kt_u64 fn, unsigned depth)
{
	if (KFT_LIKELY(!t->entry_filter))
		return 0;
	if (depth >= t->max_depth)
		return t->skip_unlisted ? KFT_FRAME_UNLISTED : KFT_FRAME_DEEP;
	if (t->skip_unlisted &&
	    (((r->cfg.flags & KFT_CF_FUNCLIST) && !kft_listed(r, fn)) || kft_notraced(r, fn)))
		return KFT_FRAME_UNLISTED;
	return 0;
}

/**
 * kft_ints_drop() - does noints/onlyints drop a call made at
 * signal-handler nesting @sig (0 = thread context)?  The first test of
 * every filter decision.
 */
static inline int kft_ints_drop(const struct kft_run *r, unsigned sig)
{
	kt_u32 cf = r->cfg.flags;

	return ((cf & KFT_CF_NOINTS) && sig) || ((cf & KFT_CF_ONLYINTS) && !sig);
}

/**
 * kft_exit_unlisted() - count the exit of a call of @fn that
 * kft_entry_filter() dropped at depth @depth, as the filter that drops it
 * first: noints/onlyints by @sig (its signal-handler nesting), the
 * funclist, the notrace list, else the depth.
 */
static inline void kft_exit_unlisted(const struct kft_run *r, struct kft_thread *t, kt_u64 fn,
				     unsigned sig, unsigned depth)
{
	unsigned f = KFT_FILTER_DEPTH;

	if (kft_ints_drop(r, sig))
		f = KFT_FILTER_INTS;
	else if ((r->cfg.flags & KFT_CF_FUNCLIST) && !kft_listed(r, fn))
		f = KFT_FILTER_FUNCLIST;
	else if (kft_notraced(r, fn))
		f = KFT_FILTER_NOTRACE;
	(void)depth;
	t->c->filtered[f]++;
}

/**
 * kft_exit_inline() - the part of kft_exit() that needs no call, for
 * callers that keep their fast path free of calls: the writer's view is
 * in sync with the run's epoch @e (just loaded), no trigger is due, no
 * check but the time filters applies, the frame has no flags.
 * Return: 1 record the call (counted as kept), 0 do not (counted if a
 * filter dropped it), -1 call kft_exit_slow() with the same arguments.
 */
static inline int kft_exit_inline(struct kft_thread *t, kt_u64 e, kt_u64 t_entry, kt_u64 now,
				  unsigned fflags)
{
	kt_u64 dur;

	if (KFT_UNLIKELY(e != t->epoch || now >= t->deadline || t->exit_checks || fflags))
		return -1;
	if (KFT_EPOCH_STATE(e) != KFT_STATE_RUNNING || t_entry < t->run_start)
		return 0;
	dur = now - t_entry;
	if (dur < t->min_dur) {
		t->c->filtered[KFT_FILTER_MINTIME]++;
		return 0;
	}
	if (dur > t->max_dur) {
		t->c->filtered[KFT_FILTER_MAXTIME]++;
		return 0;
	}
	t->c->kept++;
	return 1;
}

/**
 * kft_exit() - a function returns (its frame popped).
 * @fn:      the function's address.
 * @t_entry: raw clock at its entry.
 * @now:     raw clock now (the record's timestamp).
 * @sig:     signal-handler nesting of the call (0 = thread context).
 * @fflags:  the frame's KFT_FRAME_* flags.
 * Return: 0, or KFT_REC | KTRACE_CALLF_* to record the call; possibly
 * with KFT_FLUSH.  A KFT_REC result has been counted as kept: if the
 * write then fails, call kft_lost().
 */
static inline unsigned kft_exit(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 t_entry,
				kt_u64 now, unsigned sig, unsigned fflags)
{
	int keep = kft_exit_inline(t, KFT_LOAD(&r->epoch), t_entry, now, fflags);

	if (KFT_LIKELY(keep >= 0))
		return keep ? KFT_REC : 0;
	return kft_exit_slow(r, t, fn, t_entry, now, sig, fflags);
}

/* Modes of kft_unfinished(). */
#define KFT_UNF_FLUSH 1 /* the run ended (KFT_FLUSH): frames inside the run's window */
#define KFT_UNF_SKIP 2  /* the run goes on; the exit will never be seen (longjmp,
			 * exception, thread or program end) */

/**
 * kft_unfinished() - decide whether an open frame whose exit will not be
 * seen is recorded as unfinished (KTRACE_CALLF_UNFINISHED; the record's
 * duration is then the time from entry to the record).  @mode KFT_UNF_FLUSH
 * after a KFT_FLUSH result: walk the shadow stack from the top and stop at
 * the first frame entered before kft_flush_from(t).  KFT_UNF_SKIP for
 * frames a longjmp or an exception skipped, or that are open when a thread
 * or the program ends: stop at the first frame before kft_open_from(t).
 * Funclist and ints filters apply, time filters do not (the duration is
 * unknown); logentries applies.
 * Return: 0 or KFT_REC | KTRACE_CALLF_UNFINISHED [| KTRACE_CALLF_WATCH].
 */
unsigned kft_unfinished(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 t_entry,
			unsigned sig, unsigned fflags, int mode, kt_u64 now);

/** kft_flush_from() - frames entered before this are outside a KFT_FLUSH. */
static inline kt_u64 kft_flush_from(const struct kft_thread *t)
{
	return t->flush_from;
}

/**
 * kft_open_from() - frames entered before this are outside a KFT_UNF_SKIP:
 * the start of the run if this writer sees it running, else ~0 (none).
 */
static inline kt_u64 kft_open_from(const struct kft_thread *t)
{
	return KFT_EPOCH_STATE(t->epoch) == KFT_STATE_RUNNING ? t->run_start : ~(kt_u64)0;
}

/**
 * kft_lost() - the record approved as @rec (a kft_exit()/kft_unfinished()
 * result) could not be written because the trace buffer is exhausted
 * (-ENOSPC).  Moves it from "kept" to "lost" and stops the run with reason
 * FULL, as KFT stopped when its log buffer ran out.
 */
void kft_lost(struct kft_run *r, struct kft_thread *t, unsigned rec, kt_u64 now);

/**
 * kft_dropped() - the record approved as @rec could not be written because
 * a streamed ring was full (the consumer was behind, -ENOBUFS): moves it
 * from "kept" to "lost"; the run goes on.
 */
static inline void kft_dropped(struct kft_thread *t, unsigned rec)
{
	t->c->kept--;
	if (rec & KTRACE_CALLF_UNFINISHED)
		t->c->unfinished--;
	t->c->lost++;
}

/**
 * kft_thread_sync() - bring writer view @t up to date with @r, as the
 * hooks' slow paths do by themselves; for code acting for a writer that
 * is gone (the consumer reporting a dead thread's open calls with
 * kft_unfinished()).  A zeroed @t with its counters set starts fresh.
 * Return: 0 or KFT_FLUSH (as kft_entry()).
 */
unsigned kft_thread_sync(struct kft_run *r, struct kft_thread *t, kt_u64 now);

/**
 * kft_unkeep() - the record approved as @rec was not written for another
 * reason (the channel itself is stopped): uncount it.
 */
static inline void kft_unkeep(struct kft_thread *t, unsigned rec)
{
	t->c->kept--;
	if (rec & KTRACE_CALLF_UNFINISHED)
		t->c->unfinished--;
}

/** kft_unmatched() - count an exit whose entry was not on the shadow stack. */
static inline void kft_unmatched(struct kft_thread *t)
{
	t->c->unmatched++;
}

/**
 * kft_idle() - nonzero if this writer's run needs no clock at all right
 * now: not running, no trigger to test.  The hooks may then pass 0 as
 * @now (and as the frame's entry time) instead of reading the clock; a
 * frame entered with time 0 is never recorded.
 */
static inline int kft_idle(const struct kft_thread *t)
{
	return KFT_EPOCH_STATE(t->epoch) != KFT_STATE_RUNNING && !t->entry_checks &&
	       !t->exit_checks && t->deadline == ~(kt_u64)0;
}

/* ---- status ------------------------------------------------------------ */

/**
 * struct kft_status - a snapshot of a run, as `cat /proc/kft` showed it.
 * Times are raw clock values; kft_raw_to_ns() converts.
 */
struct kft_status {
	kt_u32 state, run, gen;
	kt_u32 start_reason, stop_reason;
	kt_u64 start_by, stop_by;
	kt_u64 start_time, stop_time; /* raw; 0 = not yet */
	kt_u64 kept, unfinished, lost, unmatched, marks, deep;
	kt_u64 sigmissed;    /* calls missed in signal handlers (struct kft_counters) */
	kt_u64 filtered[KFT_NFILTERS];
	kt_u64 filtered_total;
	kt_u64 lowest_stack; /* ~0 = not measured */
	kt_u64 watch_threshold;
	kt_u64 logentries, pool;
	kt_u32 writers;      /* counter blocks summed */
};

/** kft_status_begin() - start a snapshot of @r into @st (counters zero). */
void kft_status_begin(const struct kft_run *r, struct kft_status *st);
/** kft_status_add() - add one writer's counters (ignored if of another generation). */
void kft_status_add(struct kft_status *st, const struct kft_counters *c);

/** kft_state_name() - "configured", "primed", ... (never NULL). */
const char *kft_state_name(unsigned state);
/** kft_reason_name() - "entry", "exit", "time", "command", ... (never NULL). */
const char *kft_reason_name(unsigned reason);
/** kft_filter_name() - "ints", "funclist", "mintime", "maxtime". */
const char *kft_filter_name(unsigned filter);

/**
 * kft_status_format() - the status as text, one "key: value" per line,
 * followed by the configuration (kft_config_format()).  Times print in
 * microseconds since the time origin; @name (may be NULL) names functions.
 * Return: the length the text needs (snprintf contract; @buf NUL-terminated).
 */
kt_u32 kft_status_format(const struct kft_run *r, const struct kft_status *st, char *buf,
			 kt_u32 size, kft_name_fn name, void *arg);

/* ---- clock ------------------------------------------------------------- */

/** kft_mul_shift() - (a * mult) >> shift with a 128-bit intermediate (saturating). */
kt_u64 kft_mul_shift(kt_u64 a, kt_u64 mult, unsigned shift);
/** kft_us_to_raw() - microseconds to raw clock units of @r (saturating). */
kt_u64 kft_us_to_raw(const struct kft_run *r, kt_u64 us);
/** kft_raw_to_ns() - raw clock units of @r to nanoseconds. */
kt_u64 kft_raw_to_ns(const struct kft_run *r, kt_u64 raw);

#endif /* KFT_ENGINE_H */

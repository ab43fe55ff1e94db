/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/engine.c - the KFT run engine (see engine.h for the model).
 *
 * Transitions.  Every state change goes through the epoch word: a
 * transition first swaps the current state for BUSY (compare-and-swap,
 * so exactly one thread or process wins a race between, say, two threads
 * reaching the stop trigger), then writes the run fields (start time,
 * reasons, ...), then publishes the new state with a release store.  A
 * writer that sees BUSY treats the run as not recording and looks again
 * at its next event; a trigger that finds BUSY gives up (someone else is
 * already changing the state).  Commands wait for BUSY to clear.
 *
 * Writers cache the epoch and, derived from it, which checks matter in
 * the current state and the next time deadline (struct kft_thread), so
 * the inline fast paths in engine.h need one shared load; whenever the
 * epoch moved, kft_sync() refreshes the cache, resets counters of an old
 * generation, and reports KFT_FLUSH when the run this writer was
 * recording in has ended.
 */
#include "engine.h"
#include "text.h"

#define US_SHIFT 24
#define NS_SHIFT 32
#define NONE (~(kt_u64)0)
#define BUSY_SPINS (1u << 22) /* commands: how long to wait for a transition */

/* ---- clock ------------------------------------------------------------- */

kt_u64 kft_mul_shift(kt_u64 a, kt_u64 mult, unsigned shift)
{
	kt_u64 al = a & 0xffffffffu, ah = a >> 32;
	kt_u64 ml = mult & 0xffffffffu, mh = mult >> 32;
	kt_u64 ll = al * ml, lh = al * mh, hl = ah * ml, hh = ah * mh;
	kt_u64 mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	kt_u64 lo = (ll & 0xffffffffu) | (mid << 32);
	kt_u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	if (shift == 0)
		return hi ? NONE : lo;
	if (shift >= 64)
		return hi >> (shift - 64);
	if (hi >> shift)
		return NONE;
	return (hi << (64 - shift)) | (lo >> shift);
}

kt_u64 kft_us_to_raw(const struct kft_run *r, kt_u64 us)
{
	return kft_mul_shift(us, r->us_mult, US_SHIFT);
}

kt_u64 kft_raw_to_ns(const struct kft_run *r, kt_u64 raw)
{
	return kft_mul_shift(raw, r->ns_mult, NS_SHIFT);
}

static kt_u64 sat_add(kt_u64 a, kt_u64 b)
{
	return a + b < a ? NONE : a + b;
}

static void zero(void *p, kt_u64 n)
{
	unsigned char *c = (unsigned char *)p;

	for (kt_u64 i = 0; i < n; i++)
		c[i] = 0;
}

static void atomic_min(kt_u64 *p, kt_u64 v)
{
	kt_u64 cur = KFT_LOAD(p);

	while (v < cur && !KFT_CAS(p, &cur, v))
		;
}

void kft_run_init(struct kft_run *r, kt_u64 raw_per_sec, kt_u64 origin)
{
	if (raw_per_sec == 0)
		raw_per_sec = 1000000000u;
	zero(r, sizeof(*r));
	r->magic = KFT_RUN_MAGIC;
	r->version = KFT_RUN_VERSION;
	r->size = (kt_u32)sizeof(*r);
	r->us_mult = ((raw_per_sec / 1000000u) << US_SHIFT) +
		     ((raw_per_sec % 1000000u) << US_SHIFT) / 1000000u;
	r->ns_mult = (1000000000ull << NS_SHIFT) / raw_per_sec;
	r->origin = origin;
	r->lowest_stack = NONE;
	r->stop_at = NONE;
	r->watch_threshold = 0;
	/* Generation 1, so a zeroed struct kft_thread never matches it. */
	KFT_STORE_REL(&r->epoch, KFT_EPOCH(1, 0, KFT_STATE_UNCONFIGURED));
}

/* ---- transitions ------------------------------------------------------- */

/*
 * Swap a state in @from_mask (bits 1 << state) for BUSY.  @wait: spin while
 * another transition is in flight (commands) instead of giving up
 * (triggers).  Return: 0 with *old set, or -KFT_EBUSY.
 */
static int begin_transition(struct kft_run *r, unsigned from_mask, int wait, kt_u64 *old)
{
	kt_u64 e = KFT_LOAD_ACQ(&r->epoch);
	kt_u32 spins = 0;

	for (;;) {
		unsigned st = KFT_EPOCH_STATE(e);

		if (st == KFT_STATE_BUSY) {
			/* A writer that died mid-transition must not wedge commands. */
			if (!wait)
				return -KFT_EBUSY;
			if (++spins < BUSY_SPINS) {
				e = KFT_LOAD_ACQ(&r->epoch);
				continue;
			}
			st = KFT_STATE_STOPPED;
		}
		if (st > KFT_STATE_STOPPED || !(from_mask & (1u << st)))
			return -KFT_EBUSY;
		if (KFT_CAS(&r->epoch, &e, (e & ~(kt_u64)0xff) | KFT_STATE_BUSY)) {
			*old = (e & ~(kt_u64)0xff) | st;
			return 0;
		}
	}
}

#define M(s) (1u << KFT_STATE_##s)

/* Start a run at raw time @at (BUSY already held by the caller: @old). */
static void publish_start(struct kft_run *r, kt_u64 old, unsigned reason, kt_u64 fn, kt_u64 at)
{
	if (at == 0)
		at = 1; /* entry time 0 means "not timed" */
	r->run_start = at;
	r->stop_at = (r->checks & KFT_CHK_STOP_TIME) ? sat_add(at, r->stop_after) : NONE;
	r->run_stop = 0;
	r->start_reason = reason;
	r->start_by = fn;
	r->stop_reason = KFT_REASON_NONE;
	r->stop_by = 0;
	KFT_STORE_REL(&r->epoch, KFT_EPOCH(KFT_EPOCH_GEN(old), KFT_EPOCH_RUN(old) + 1,
					   KFT_STATE_RUNNING));
}

static int do_start(struct kft_run *r, unsigned from_mask, int wait, unsigned reason, kt_u64 fn,
		    kt_u64 at)
{
	kt_u64 old;

	if (begin_transition(r, from_mask, wait, &old) < 0)
		return -KFT_EBUSY;
	publish_start(r, old, reason, fn, at);
	return 0;
}

static int is_trigger(unsigned reason)
{
	return reason == KFT_REASON_ENTRY || reason == KFT_REASON_EXIT ||
	       reason == KFT_REASON_TIME;
}

static int do_stop(struct kft_run *r, unsigned from_mask, int wait, unsigned reason, kt_u64 fn,
		   kt_u64 at)
{
	kt_u64 old;
	unsigned next = KFT_STATE_STOPPED;

	if (begin_transition(r, from_mask, wait, &old) < 0)
		return -KFT_EBUSY;
	if (KFT_EPOCH_STATE(old) == KFT_STATE_RUNNING) {
		r->run_stop = at ? at : 1;
		if ((r->cfg.flags & KFT_CF_AUTOREPEAT) && is_trigger(reason))
			next = KFT_STATE_PRIMED;
	}
	r->stop_reason = reason;
	r->stop_by = fn;
	if (next == KFT_STATE_PRIMED && r->cfg.start.kind == KFT_TRIG_NONE) {
		/* Re-primed with no start trigger: the next run begins at once. */
		publish_start(r, old, KFT_REASON_PRIME, 0, at + 1);
		/* publish_start cleared the stop fields of the new run. */
		return 0;
	}
	KFT_STORE_REL(&r->epoch, KFT_EPOCH(KFT_EPOCH_GEN(old), KFT_EPOCH_RUN(old), next));
	return 0;
}

int kft_stop(struct kft_run *r, unsigned reason, kt_u64 fn, kt_u64 now)
{
	return do_stop(r, M(PRIMED) | M(RUNNING), !is_trigger(reason), reason, fn, now);
}

static int do_prime(struct kft_run *r, kt_u64 now)
{
	kt_u64 old;

	if (begin_transition(r, M(CONFIGURED) | M(STOPPED), 1, &old) < 0)
		return -KFT_EBUSY;
	if (r->cfg.start.kind == KFT_TRIG_NONE) {
		publish_start(r, old, KFT_REASON_PRIME, 0, now);
		return 0;
	}
	KFT_STORE_REL(&r->epoch, KFT_EPOCH(KFT_EPOCH_GEN(old), KFT_EPOCH_RUN(old), KFT_STATE_PRIMED));
	return 0;
}

int kft_command(struct kft_run *r, int cmd, kt_u64 now)
{
	switch (cmd) {
	case KFT_CMD_PRIME:
		return do_prime(r, now);
	case KFT_CMD_START:
		return do_start(r, M(CONFIGURED) | M(PRIMED) | M(STOPPED), 1, KFT_REASON_COMMAND, 0, now);
	case KFT_CMD_STOP:
		return do_stop(r, M(PRIMED) | M(RUNNING), 1, KFT_REASON_COMMAND, 0, now);
	default:
		return -KFT_EINVAL;
	}
}

/* Insertion sort: at most KFT_FUNCLIST_MAX entries, done once per load. */
static void sort_funcs(kt_u64 *f, kt_u32 n)
{
	for (kt_u32 i = 1; i < n; i++) {
		kt_u64 v = f[i];
		kt_u32 j = i;

		while (j > 0 && f[j - 1] > v) {
			f[j] = f[j - 1];
			j--;
		}
		f[j] = v;
	}
}

int kft_load(struct kft_run *r, const struct kft_config *cfg, kt_u64 now)
{
	kt_u64 old;
	kt_u32 checks = 0;

	if (cfg->nfuncs > KFT_FUNCLIST_MAX || cfg->nnotrace > KFT_FUNCLIST_MAX ||
	    cfg->start.kind > KFT_TRIG_TIME ||
	    cfg->stop.kind > KFT_TRIG_TIME || cfg->watch > KFT_WATCH_WORST_STACK ||
	    ((cfg->flags & KFT_CF_NOINTS) && (cfg->flags & KFT_CF_ONLYINTS)))
		return -KFT_EINVAL;
	if (begin_transition(r, M(UNCONFIGURED) | M(CONFIGURED) | M(PRIMED) | M(RUNNING) | M(STOPPED),
			     1, &old) < 0)
		return -KFT_EBUSY;

	r->cfg = *cfg;
	sort_funcs(r->cfg.funcs, r->cfg.nfuncs);
	sort_funcs(r->cfg.notrace_fns, r->cfg.nnotrace);

	r->start_fn = r->stop_fn = 0;
	r->start_at = NONE;
	r->stop_after = NONE;
	switch (cfg->start.kind) {
	case KFT_TRIG_ENTRY:
		checks |= KFT_CHK_START_ENTRY;
		r->start_fn = cfg->start.arg;
		break;
	case KFT_TRIG_EXIT:
		checks |= KFT_CHK_START_EXIT;
		r->start_fn = cfg->start.arg;
		break;
	case KFT_TRIG_TIME:
		checks |= KFT_CHK_START_TIME;
		r->start_at = sat_add(r->origin, kft_us_to_raw(r, cfg->start.arg));
		if (r->start_at == 0)
			r->start_at = 1;
		break;
	}
	switch (cfg->stop.kind) {
	case KFT_TRIG_ENTRY:
		checks |= KFT_CHK_STOP_ENTRY;
		r->stop_fn = cfg->stop.arg;
		break;
	case KFT_TRIG_EXIT:
		checks |= KFT_CHK_STOP_EXIT;
		r->stop_fn = cfg->stop.arg;
		break;
	case KFT_TRIG_TIME:
		checks |= KFT_CHK_STOP_TIME;
		r->stop_after = kft_us_to_raw(r, cfg->stop.arg);
		break;
	}
	r->mintime = (cfg->flags & KFT_CF_MINTIME) ? kft_us_to_raw(r, cfg->mintime_us) : 0;
	r->maxtime = (cfg->flags & KFT_CF_MAXTIME) ? kft_us_to_raw(r, cfg->maxtime_us) : 0;
	if (r->mintime || r->maxtime ||
	    (cfg->flags & (KFT_CF_NOINTS | KFT_CF_ONLYINTS | KFT_CF_FUNCLIST | KFT_CF_NOTRACE |
			   KFT_CF_DEPTH)))
		checks |= KFT_CHK_FILTER;
	if (cfg->watch != KFT_WATCH_NONE)
		checks |= KFT_CHK_WATCH;
	r->watch_threshold = cfg->watch != KFT_WATCH_NONE ? cfg->watch_threshold : 0;
	if (cfg->logentries) {
		checks |= KFT_CHK_LOGENTRIES;
		r->pool = cfg->logentries;
	} else {
		r->pool = 0;
	}
	r->checks = checks;

	r->run_start = 0;
	r->stop_at = NONE;
	r->run_stop = KFT_EPOCH_STATE(old) == KFT_STATE_RUNNING ? (now ? now : 1) : 0;
	r->start_reason = KFT_REASON_NONE;
	r->start_by = 0;
	r->stop_reason = KFT_EPOCH_STATE(old) == KFT_STATE_RUNNING ? KFT_REASON_LOAD : KFT_REASON_NONE;
	r->stop_by = 0;
	r->lowest_stack = NONE;
	r->spill_lost = 0;
	KFT_STORE_REL(&r->epoch,
		      KFT_EPOCH((KFT_EPOCH_GEN(old) + 1) & 0xffffffu, 0, KFT_STATE_CONFIGURED));
	if (cfg->flags & KFT_CF_PRIME)
		do_prime(r, now);
	return 0;
}

/* ---- the writer's view ------------------------------------------------- */

/* Refresh @t from epoch @e (loaded with acquire); @now bounds a flush window. */
static unsigned kft_sync(struct kft_run *r, struct kft_thread *t, kt_u64 e, kt_u64 now)
{
	struct kft_counters *c = t->c;
	kt_u64 old = t->epoch;
	kt_u32 checks = KFT_LOAD(&r->checks);
	unsigned res = 0, st = KFT_EPOCH_STATE(e);

	if (c->gen != (kt_u64)KFT_EPOCH_GEN(e) + 1) {
		zero(c, sizeof(*c));
		c->lowest_stack = NONE;
		c->gen = (kt_u64)KFT_EPOCH_GEN(e) + 1;
		t->credits = 0;
	} else if (KFT_EPOCH_GEN(old) != KFT_EPOCH_GEN(e)) {
		t->credits = 0;
	}
	if (KFT_EPOCH_STATE(old) == KFT_STATE_RUNNING &&
	    (st != KFT_STATE_RUNNING || (e >> 8) != (old >> 8))) {
		/* The run this writer recorded in has ended. */
		kt_u64 until = KFT_LOAD(&r->run_stop);

		if (until < t->run_start || until == 0)
			until = now;
		if (st == KFT_STATE_RUNNING) {
			kt_u64 next = KFT_LOAD(&r->run_start);

			if (next && next - 1 < until)
				until = next - 1;
		}
		t->flush_from = t->run_start;
		t->flush_until = until;
		res |= KFT_FLUSH;
	}
	t->epoch = e;
	t->deadline = NONE;
	t->entry_checks = t->exit_checks = 0;
	t->min_dur = 0;
	t->max_dur = NONE;
	t->skip_unlisted = 0;
	t->entry_filter = 0;
	t->max_depth = ~(kt_u32)0;
	if (st == KFT_STATE_RUNNING) {
		t->run_start = KFT_LOAD(&r->run_start);
		t->entry_checks = checks & (KFT_CHK_STOP_ENTRY | KFT_CHK_WATCH);
		t->exit_checks = checks & (KFT_CHK_STOP_EXIT | KFT_CHK_FILTER | KFT_CHK_LOGENTRIES);
		if ((checks & KFT_CHK_FILTER) &&
		    !(r->cfg.flags & (KFT_CF_NOINTS | KFT_CF_ONLYINTS | KFT_CF_FUNCLIST | KFT_CF_NOTRACE))) {
			/* Time filters only: kft_exit() tests them inline. */
			if (r->cfg.flags & KFT_CF_MINTIME)
				t->min_dur = r->mintime;
			if (r->maxtime)
				t->max_dur = r->maxtime;
			t->exit_checks &= ~KFT_CHK_FILTER;
		}
		if (checks & KFT_CHK_STOP_TIME)
			t->deadline = KFT_LOAD(&r->stop_at);
		/* Calls the funclist, notrace or depth drop go at their entry, untimed. */
		if ((r->cfg.flags & (KFT_CF_FUNCLIST | KFT_CF_NOTRACE | KFT_CF_DEPTH)) &&
		    t->deadline == NONE && !(checks & KFT_CHK_WATCH))
			t->skip_unlisted = 1;
		if (r->cfg.flags & KFT_CF_DEPTH)
			t->max_depth = r->cfg.max_depth;
		t->entry_filter = t->skip_unlisted || (r->cfg.flags & KFT_CF_DEPTH);
	} else if (st == KFT_STATE_PRIMED) {
		t->entry_checks = checks & KFT_CHK_START_ENTRY;
		t->exit_checks = checks & KFT_CHK_START_EXIT;
		if (checks & KFT_CHK_START_TIME)
			t->deadline = r->start_at;
	}
	/* BUSY: nothing to test; the final store changes the epoch again. */
	return res;
}

static unsigned resync(struct kft_run *r, struct kft_thread *t, kt_u64 now)
{
	kt_u64 e = KFT_LOAD_ACQ(&r->epoch);

	return e != t->epoch ? kft_sync(r, t, e, now) : 0;
}

unsigned kft_thread_sync(struct kft_run *r, struct kft_thread *t, kt_u64 now)
{
	return resync(r, t, now);
}

/*
 * The filter that drops the call, or -1.  @timed: apply the time filters;
 * @fflags: the frame's flags (KFT_FRAME_DEEP: deeper than filter depth).
 */
static int filtered_by(const struct kft_run *r, kt_u64 fn, kt_u64 dur, unsigned sig, int timed,
		       unsigned fflags)
{
	kt_u32 cf = r->cfg.flags;

	if (kft_ints_drop(r, sig))
		return KFT_FILTER_INTS;
	if ((cf & KFT_CF_FUNCLIST) && !kft_listed(r, fn))
		return KFT_FILTER_FUNCLIST;
	if (kft_notraced(r, fn))
		return KFT_FILTER_NOTRACE;
	if (fflags & KFT_FRAME_DEEP)
		return KFT_FILTER_DEPTH;
	if (timed) {
		if ((cf & KFT_CF_MINTIME) && dur < r->mintime)
			return KFT_FILTER_MINTIME;
		if (r->maxtime && dur > r->maxtime)
			return KFT_FILTER_MAXTIME;
	}
	return -1;
}

/*
 * Take one log entry from the pool (logentries).  Writers reserve a few at
 * a time to keep the shared counter off the hot path, one at a time near
 * the end so a single writer fills the log exactly.  An empty pool stops
 * the run (reason LOGENTRIES).
 */
static int take_credit(struct kft_run *r, struct kft_thread *t, kt_u64 now)
{
	kt_u64 pool, take;

	if (t->credits) {
		t->credits--;
		return 1;
	}
	pool = KFT_LOAD(&r->pool);
	for (;;) {
		if (pool == 0) {
			do_stop(r, M(RUNNING), 0, KFT_REASON_LOGENTRIES, 0, now);
			return 0;
		}
		take = pool > 4096 ? 64 : 1;
		if (KFT_CAS(&r->pool, &pool, pool - take)) {
			t->credits = take - 1;
			return 1;
		}
	}
}

static unsigned watch(struct kft_run *r, struct kft_thread *t, kt_u64 stack_left)
{
	struct kft_counters *c = t->c;

	if (stack_left < c->lowest_stack) {
		c->lowest_stack = stack_left;
		atomic_min(&r->lowest_stack, stack_left);
	}
	if (stack_left >= KFT_LOAD(&r->watch_threshold))
		return 0;
	c->marks++;
	if (r->cfg.watch == KFT_WATCH_WORST_STACK)
		atomic_min(&r->watch_threshold, stack_left);
	return KFT_MARK;
}

unsigned kft_entry_slow(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 now,
			kt_u64 stack_left)
{
	unsigned res = resync(r, t, now);
	int started = 0;

	if (KFT_EPOCH_STATE(t->epoch) == KFT_STATE_PRIMED) {
		if (now >= t->deadline)
			started = do_start(r, M(PRIMED), 0, KFT_REASON_TIME, 0, r->start_at) == 0;
		else if ((t->entry_checks & KFT_CHK_START_ENTRY) && fn == r->start_fn)
			started = do_start(r, M(PRIMED), 0, KFT_REASON_ENTRY, fn, now) == 0;
		res |= resync(r, t, now);
	}
	if (KFT_EPOCH_STATE(t->epoch) != KFT_STATE_RUNNING)
		return res;
	if (!started && now >= t->deadline) {
		do_stop(r, M(RUNNING), 0, KFT_REASON_TIME, 0, t->deadline);
		return res | resync(r, t, now);
	}
	if (!started && (t->entry_checks & KFT_CHK_STOP_ENTRY) && fn == r->stop_fn) {
		do_stop(r, M(RUNNING), 0, KFT_REASON_ENTRY, fn, now);
		return res | resync(r, t, now);
	}
	if (t->entry_checks & KFT_CHK_WATCH)
		res |= watch(r, t, stack_left);
	return res;
}

/* Whether a completed call is kept, counting the verdict. */
static unsigned decide(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 t_entry,
		       kt_u64 now, unsigned sig, unsigned fflags)
{
	struct kft_counters *c = t->c;
	kt_u32 checks = KFT_LOAD(&r->checks);

	if ((fflags & KFT_FRAME_DONE) || t_entry == 0)
		return 0;
	if (!(fflags & KFT_FRAME_WATCH)) {
		int f;

		if (t_entry < t->run_start)
			return 0;
		f = (checks & KFT_CHK_FILTER) ? filtered_by(r, fn, now - t_entry, sig, 1, fflags) : -1;
		if (f >= 0) {
			c->filtered[f]++;
			return 0;
		}
	}
	if ((checks & KFT_CHK_LOGENTRIES) && !take_credit(r, t, now))
		return 0;
	c->kept++;
	return KFT_REC | (fflags & (KFT_FRAME_WATCH | KFT_FRAME_UNSEEN));
}

unsigned kft_exit_slow(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 t_entry,
		       kt_u64 now, unsigned sig, unsigned fflags)
{
	unsigned res = resync(r, t, now), rec = 0;

	/*
	 * If the run ended since this writer's last event, the returning call
	 * was open at the stop: it is reported like the other open frames.
	 */
	if (res & KFT_FLUSH)
		rec = kft_unfinished(r, t, fn, t_entry, sig, fflags, KFT_UNF_FLUSH, now);
	if (KFT_EPOCH_STATE(t->epoch) == KFT_STATE_PRIMED) {
		/* The returning call began before any start: never recorded. */
		if (now >= t->deadline)
			do_start(r, M(PRIMED), 0, KFT_REASON_TIME, 0, r->start_at);
		else if ((t->exit_checks & KFT_CHK_START_EXIT) && fn == r->start_fn)
			do_start(r, M(PRIMED), 0, KFT_REASON_EXIT, fn, now);
		return res | rec | resync(r, t, now);
	}
	if (KFT_EPOCH_STATE(t->epoch) != KFT_STATE_RUNNING)
		return res | rec;
	if (now >= t->deadline) {
		/* The stop time passed while the call ran: it was open at the stop. */
		do_stop(r, M(RUNNING), 0, KFT_REASON_TIME, 0, t->deadline);
		res |= resync(r, t, now);
		if (!rec && (res & KFT_FLUSH))
			rec = kft_unfinished(r, t, fn, t_entry, sig, fflags, KFT_UNF_FLUSH, now);
		return res | rec;
	}
	if (!rec)
		rec = decide(r, t, fn, t_entry, now, sig, fflags);
	if ((t->exit_checks & KFT_CHK_STOP_EXIT) && fn == r->stop_fn) {
		do_stop(r, M(RUNNING), 0, KFT_REASON_EXIT, fn, now);
		res |= resync(r, t, now);
	}
	return res | rec;
}

unsigned kft_unfinished(struct kft_run *r, struct kft_thread *t, kt_u64 fn, kt_u64 t_entry,
			unsigned sig, unsigned fflags, int mode, kt_u64 now)
{
	struct kft_counters *c = t->c;
	kt_u32 checks = KFT_LOAD(&r->checks);
	int f;

	if ((fflags & (KFT_FRAME_DONE | KFT_FRAME_INHERITED)) || t_entry == 0)
		return 0;
	if (mode == KFT_UNF_FLUSH) {
		if (t_entry < t->flush_from || t_entry > t->flush_until)
			return 0;
	} else if (mode == KFT_UNF_SKIP) {
		if (t_entry < kft_open_from(t))
			return 0;
	} else {
		return 0;
	}
	f = (checks & KFT_CHK_FILTER) ? filtered_by(r, fn, 0, sig, 0, fflags) : -1;
	if (f >= 0 && !(fflags & KFT_FRAME_WATCH)) {
		c->filtered[f]++;
		return 0;
	}
	if ((checks & KFT_CHK_LOGENTRIES) && !take_credit(r, t, now))
		return 0;
	c->kept++;
	c->unfinished++;
	return KFT_REC | KTRACE_CALLF_UNFINISHED | (fflags & KFT_FRAME_WATCH);
}

void kft_lost(struct kft_run *r, struct kft_thread *t, unsigned rec, kt_u64 now)
{
	kft_unkeep(t, rec);
	t->c->lost++;
	do_stop(r, M(RUNNING), 0, KFT_REASON_FULL, 0, now);
}

/* ---- status ------------------------------------------------------------ */

void kft_status_begin(const struct kft_run *r, struct kft_status *st)
{
	kt_u64 e = KFT_LOAD_ACQ(&r->epoch);

	zero(st, sizeof(*st));
	st->state = KFT_EPOCH_STATE(e);
	st->run = KFT_EPOCH_RUN(e);
	st->gen = KFT_EPOCH_GEN(e);
	st->start_reason = r->start_reason;
	st->stop_reason = r->stop_reason;
	st->start_by = r->start_by;
	st->stop_by = r->stop_by;
	st->start_time = r->run_start;
	st->stop_time = r->run_stop;
	st->lowest_stack = KFT_LOAD(&r->lowest_stack);
	st->watch_threshold = KFT_LOAD(&r->watch_threshold);
	st->logentries = r->cfg.logentries;
	st->pool = KFT_LOAD(&r->pool);
	st->lost = KFT_LOAD(&r->spill_lost);
}

void kft_status_add(struct kft_status *st, const struct kft_counters *c)
{
	if (KFT_LOAD(&c->gen) != (kt_u64)st->gen + 1)
		return;
	st->writers++;
	st->kept += KFT_LOAD(&c->kept);
	st->unfinished += KFT_LOAD(&c->unfinished);
	st->lost += KFT_LOAD(&c->lost);
	st->unmatched += KFT_LOAD(&c->unmatched);
	st->marks += KFT_LOAD(&c->marks);
	st->deep += KFT_LOAD(&c->deep);
	st->sigmissed += KFT_LOAD(&c->sigmissed);
	for (unsigned i = 0; i < KFT_NFILTERS; i++) {
		kt_u64 v = KFT_LOAD(&c->filtered[i]);

		st->filtered[i] += v;
		st->filtered_total += v;
	}
}

const char *kft_state_name(unsigned state)
{
	static const char *const names[] = { "unconfigured", "configured", "primed",
					     "running", "stopped", "busy" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "invalid";
}

const char *kft_reason_name(unsigned reason)
{
	static const char *const names[] = { "none", "entry", "exit", "time", "prime",
					     "command", "buffer full", "logentries", "new configuration",
					     "program end" };

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "invalid";
}

const char *kft_filter_name(unsigned filter)
{
	static const char *const names[] = { "ints", "funclist", "mintime", "maxtime", "notrace",
					     "depth" };

	return filter < KFT_NFILTERS ? names[filter] : "invalid";
}

/* "<us> us" since the time origin, rounded (or the raw value if before it). */
static void put_time(struct kft_buf *b, const struct kft_run *r, kt_u64 raw)
{
	if (raw >= r->origin) {
		kft_buf_u64(b, (kft_raw_to_ns(r, raw - r->origin) + 500u) / 1000u);
		kft_buf_str(b, " us");
	} else {
		kft_buf_str(b, "raw ");
		kft_buf_u64(b, raw);
	}
}

static void put_fn(struct kft_buf *b, kt_u64 fn, kft_name_fn name, void *arg)
{
	char tmp[128];

	if (name && name(arg, fn, tmp, sizeof(tmp)) > 0) {
		tmp[sizeof(tmp) - 1] = '\0';
		kft_buf_str(b, tmp);
	} else {
		kft_buf_hex(b, fn);
	}
}

static void put_event(struct kft_buf *b, const struct kft_run *r, const char *what, kt_u64 time,
		      unsigned reason, kt_u64 fn, kft_name_fn name, void *arg)
{
	kft_buf_str(b, what);
	if (!time) {
		kft_buf_str(b, "-\n");
		return;
	}
	put_time(b, r, time);
	kft_buf_str(b, " by ");
	if (reason == KFT_REASON_ENTRY || reason == KFT_REASON_EXIT) {
		kft_buf_str(b, reason == KFT_REASON_ENTRY ? "entry to " : "exit from ");
		put_fn(b, fn, name, arg);
	} else {
		kft_buf_str(b, kft_reason_name(reason));
	}
	kft_buf_char(b, '\n');
}

kt_u32 kft_status_format(const struct kft_run *r, const struct kft_status *st, char *buf,
			 kt_u32 size, kft_name_fn name, void *arg)
{
	struct kft_buf b;
	kt_u32 n;

	kft_buf_init(&b, buf, size);
	kft_buf_str(&b, "state: ");
	kft_buf_str(&b, kft_state_name(st->state));
	kft_buf_str(&b, "\nrun: ");
	kft_buf_u64(&b, st->run);
	kft_buf_str(&b, "\nconfiguration: ");
	kft_buf_u64(&b, st->gen);
	kft_buf_char(&b, '\n');
	put_event(&b, r, "started: ", st->start_time, st->start_reason, st->start_by, name, arg);
	if (st->state == KFT_STATE_RUNNING && !st->stop_time)
		kft_buf_str(&b, "stopped: -\n");
	else
		put_event(&b, r, "stopped: ", st->stop_time, st->stop_reason, st->stop_by, name, arg);
	kft_buf_str(&b, "entries kept: ");
	kft_buf_u64(&b, st->kept);
	kft_buf_str(&b, "\nentries unfinished: ");
	kft_buf_u64(&b, st->unfinished);
	kft_buf_str(&b, "\nentries filtered: ");
	kft_buf_u64(&b, st->filtered_total);
	for (unsigned i = 0; i < KFT_NFILTERS; i++) {
		/* notrace and depth only when configured or counted (older status readers) */
		if ((i == KFT_FILTER_NOTRACE && !(r->cfg.flags & KFT_CF_NOTRACE) && !st->filtered[i]) ||
		    (i == KFT_FILTER_DEPTH && !(r->cfg.flags & KFT_CF_DEPTH) && !st->filtered[i]))
			continue;
		kft_buf_str(&b, i ? ", " : " (");
		kft_buf_str(&b, kft_filter_name(i));
		kft_buf_char(&b, ' ');
		kft_buf_u64(&b, st->filtered[i]);
	}
	kft_buf_str(&b, ")\nentries lost: ");
	kft_buf_u64(&b, st->lost);
	kft_buf_str(&b, "\ncalls too deep: ");
	kft_buf_u64(&b, st->deep);
	kft_buf_str(&b, "\nentries missed in signal handlers: ");
	kft_buf_u64(&b, st->sigmissed);
	kft_buf_str(&b, "\nexits without entry: ");
	kft_buf_u64(&b, st->unmatched);
	kft_buf_str(&b, "\nlogentries: ");
	if (st->logentries) {
		kft_buf_u64(&b, st->logentries);
		kft_buf_str(&b, " (");
		kft_buf_u64(&b, st->pool);
		kft_buf_str(&b, " not handed out)");
	} else {
		kft_buf_str(&b, "unbounded");
	}
	kft_buf_str(&b, "\nstack watch: ");
	if (r->cfg.watch == KFT_WATCH_NONE) {
		kft_buf_str(&b, "none\nlowest stack: -\n");
	} else {
		kft_buf_str(&b, r->cfg.watch == KFT_WATCH_WORST_STACK ? "worst-stack, threshold "
								     : "stack, threshold ");
		kft_buf_u64(&b, st->watch_threshold);
		kft_buf_str(&b, " bytes, fired ");
		kft_buf_u64(&b, st->marks);
		kft_buf_str(&b, " times\nlowest stack: ");
		if (st->lowest_stack == NONE) {
			kft_buf_str(&b, "-\n");
		} else {
			kft_buf_u64(&b, st->lowest_stack);
			kft_buf_str(&b, " bytes left\n");
		}
	}
	kft_buf_str(&b, "writers: ");
	kft_buf_u64(&b, st->writers);
	kft_buf_char(&b, '\n');
	if (st->state == KFT_STATE_UNCONFIGURED)
		return b.len;
	kft_buf_str(&b, "configuration text:\n");
	n = b.len < size ? b.len : (size ? size - 1 : 0);
	return b.len + kft_config_format(&r->cfg, buf + n, size - n, "  ", name, arg);
}

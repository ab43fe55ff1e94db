/*
 * reader/sched.c - task scheduling states and off-CPU time from context
 * switches and wakeups (API and state rules in reader/sched.h).
 *
 * One hash table maps a kernel pid (thread id) to its task: current state,
 * since when, on which CPU, and (KTR_SCHED_OFFCPU) its off-CPU intervals in
 * time order with running sums of their lengths, so the off-CPU time in any
 * window is G(end) - G(start) for the cumulative function G, found by binary
 * search.  Arguments are taken by position from the catalogue's layout
 * (include/ktrace/lkst.h): CONTEXTSWITCH prev_pid, next_pid, prev_state;
 * WAKEUP pid, target_cpu.
 */
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "reader/sched.h"

/* sched_switch prev_state: TASK_REPORT bits; 0x100 = preempted (TASK_REPORT_MAX) */
#define PS_MASK 0xffu
#define PS_DEAD 0x30u /* EXIT_DEAD 0x10, EXIT_ZOMBIE 0x20 */

struct ivl {
	uint64_t out, in;    /* in = UINT64_MAX while still out */
	uint64_t wake;       /* blocked until here, then ready (= out if preempted;
			      * UINT64_MAX: not woken yet) */
	uint64_t cum, bcum;  /* off / blocked time of the earlier intervals */
	uint64_t prev_state;
	int16_t cpu_out, cpu_in;
	uint8_t blocked;
};

struct stask {
	uint32_t tid, pid;
	uint8_t state, follow; /* follow: 0 undecided, 1 yes, 2 no */
	int cpu;
	uint64_t since, prev_state;
	uint32_t waker;
	struct ivl *iv;
	size_t niv, capiv;
};

struct ktr_sched {
	unsigned flags;
	ktr_sched_fn fn;
	void *arg;
	int (*want)(void *, uint32_t, uint32_t);
	void *want_arg;
	struct stask *tasks;
	size_t ntasks, captasks;
	uint32_t *hash; /* index + 1, 0 = empty */
	size_t hsize;   /* power of two */
	uint64_t switches;
	uint32_t *oncpu; /* the task each CPU last switched to */
	size_t ncpu;
};

const char *ktr_task_state_name(enum ktr_task_state s)
{
	switch (s) {
	case KTR_TASK_RUNNING:
		return "running";
	case KTR_TASK_READY:
		return "ready";
	case KTR_TASK_BLOCKED:
		return "blocked";
	case KTR_TASK_DEAD:
		return "dead";
	default:
		return "unknown";
	}
}

struct ktr_sched *ktr_sched_new(unsigned flags, ktr_sched_fn fn, void *arg)
{
	struct ktr_sched *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->flags = flags;
	s->fn = fn;
	s->arg = arg;
	return s;
}

void ktr_sched_follow(struct ktr_sched *s, int (*want)(void *, uint32_t, uint32_t), void *arg)
{
	s->want = want;
	s->want_arg = arg;
}

static size_t slot(const struct ktr_sched *s, uint32_t tid)
{
	return (size_t)(tid * 2654435761u) & (s->hsize - 1);
}

static struct stask *find(const struct ktr_sched *s, uint32_t tid)
{
	if (!s->hsize)
		return NULL;
	for (size_t i = slot(s, tid);; i = (i + 1) & (s->hsize - 1)) {
		uint32_t h = s->hash[i];

		if (!h)
			return NULL;
		if (s->tasks[h - 1].tid == tid)
			return &s->tasks[h - 1];
	}
}

static int rehash(struct ktr_sched *s, size_t size)
{
	uint32_t *h = calloc(size, sizeof(*h));

	if (!h)
		return -1;
	free(s->hash);
	s->hash = h;
	s->hsize = size;
	for (size_t k = 0; k < s->ntasks; k++) {
		size_t i = slot(s, s->tasks[k].tid);

		while (h[i])
			i = (i + 1) & (size - 1);
		h[i] = (uint32_t)(k + 1);
	}
	return 0;
}

/* The task @tid, created (state unknown) if new; NULL if out of memory. */
static struct stask *get(struct ktr_sched *s, uint32_t tid)
{
	struct stask *t = find(s, tid);
	size_t i;

	if (t)
		return t;
	if (s->ntasks == s->captasks) {
		size_t cap = s->captasks ? 2 * s->captasks : 256;
		struct stask *n = realloc(s->tasks, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->tasks = n;
		s->captasks = cap;
	}
	if ((s->ntasks + 1) * 2 > s->hsize && rehash(s, s->hsize ? 2 * s->hsize : 512) < 0)
		return NULL;
	t = &s->tasks[s->ntasks];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->cpu = -1;
	for (i = slot(s, tid); s->hash[i]; i = (i + 1) & (s->hsize - 1))
		;
	s->hash[i] = (uint32_t)(++s->ntasks);
	return t;
}

/*
 * Is @t selected (ktr_sched_follow())?  Decided once its process is known;
 * a "no" while it is not stays undecided: a task first met as the next
 * task of a switch has no process yet (kernel traces have no thread lines
 * for it), which its own events (word 0's tgid) give a moment later.
 */
static int followed(struct ktr_sched *s, struct stask *t)
{
	if (!t->follow) {
		int yes = !s->want || s->want(s->want_arg, t->tid, t->pid);

		if (yes || t->pid)
			t->follow = yes ? 1 : 2;
		return yes;
	}
	return t->follow == 1;
}

static void emit(struct ktr_sched *s, const struct stask *t, uint64_t end)
{
	struct ktr_sched_iv iv;

	if (!s->fn || t->state < KTR_TASK_RUNNING || t->state > KTR_TASK_BLOCKED || end <= t->since)
		return; /* zero-length intervals say nothing */
	memset(&iv, 0, sizeof(iv));
	iv.tid = t->tid;
	iv.pid = t->pid;
	iv.state = (enum ktr_task_state)t->state;
	iv.start_ns = t->since;
	iv.end_ns = end;
	iv.cpu = t->cpu;
	iv.prev_state = t->prev_state;
	iv.waker = t->waker;
	s->fn(s->arg, &iv);
}

/* Off-CPU bookkeeping: the task left its CPU at @ns. */
static void off_begin(struct ktr_sched *s, struct stask *t, uint64_t ns, int cpu, uint64_t ps,
		      int blocked)
{
	struct ivl *v;
	uint64_t cum = 0, bcum = 0;

	if (!(s->flags & KTR_SCHED_OFFCPU))
		return;
	if (t->niv) {
		const struct ivl *p = &t->iv[t->niv - 1];

		if (p->in == UINT64_MAX)
			return; /* still out (a lost switch-in): keep the older start */
		cum = p->cum + (p->in - p->out);
		bcum = p->bcum + (p->wake - p->out);
	}
	if (t->niv == t->capiv) {
		size_t cap = t->capiv ? 2 * t->capiv : 16;
		struct ivl *n = realloc(t->iv, cap * sizeof(*n));

		if (!n)
			return;
		t->iv = n;
		t->capiv = cap;
	}
	v = &t->iv[t->niv++];
	v->out = ns;
	v->in = UINT64_MAX;
	v->wake = blocked ? UINT64_MAX : ns;
	v->cum = cum;
	v->bcum = bcum;
	v->prev_state = ps;
	v->cpu_out = (int16_t)cpu;
	v->cpu_in = -1;
	v->blocked = (uint8_t)blocked;
}

static void off_end(struct ktr_sched *s, struct stask *t, uint64_t ns, int cpu)
{
	struct ivl *v;

	if (!(s->flags & KTR_SCHED_OFFCPU) || !t->niv)
		return;
	v = &t->iv[t->niv - 1];
	if (v->in != UINT64_MAX)
		return;
	v->in = ns < v->out ? v->out : ns;
	if (v->wake > v->in)
		v->wake = v->in; /* the wakeup was not seen */
	v->cpu_in = (int16_t)cpu;
}

/* The task, off CPU and blocked, was woken at @ns: from now it is waiting for a CPU. */
static void off_wake(struct ktr_sched *s, struct stask *t, uint64_t ns)
{
	struct ivl *v;

	if (!(s->flags & KTR_SCHED_OFFCPU) || !t->niv)
		return;
	v = &t->iv[t->niv - 1];
	if (v->in == UINT64_MAX && v->wake == UINT64_MAX)
		v->wake = ns < v->out ? v->out : ns;
}

/* Move @t to @state at @ns (closing its previous interval). */
static void move(struct ktr_sched *s, struct stask *t, int state, uint64_t ns, int cpu,
		 uint64_t ps, uint32_t waker)
{
	if (t->state != KTR_TASK_UNKNOWN && ns >= t->since)
		emit(s, t, ns);
	t->state = (uint8_t)state;
	t->since = ns;
	t->cpu = cpu;
	t->prev_state = ps;
	t->waker = waker;
}

static uint32_t pid_of(const struct ktr_trace *tr, uint32_t tid, uint32_t known)
{
	uint32_t pid = known;

	if (!pid && tid)
		ktr_thread(tr, tid, &pid, NULL);
	return pid;
}

/*
 * A CPU runs one task at a time: if the task this CPU last switched to is
 * not the one switching out now, its own switch-out was not recorded (lost,
 * or a kernel that does not trace that task); its state is unknown from now.
 */
static void check_cpu(struct ktr_sched *s, const struct ktr_rec *r, uint32_t prev, uint32_t next)
{
	/* (also for any event in task T's context, with prev = next = T) */
	struct stask *t;
	size_t c;

	if (r->cpu < 0)
		return;
	c = (size_t)r->cpu;
	if (c >= s->ncpu) {
		size_t n = c + 1 > 2 * s->ncpu ? c + 1 : 2 * s->ncpu;
		uint32_t *v = realloc(s->oncpu, n * sizeof(*v));

		if (!v)
			return;
		memset(v + s->ncpu, 0, (n - s->ncpu) * sizeof(*v));
		s->oncpu = v;
		s->ncpu = n;
	}
	if (s->oncpu[c] && s->oncpu[c] != prev && (t = find(s, s->oncpu[c])) &&
	    t->state == KTR_TASK_RUNNING && t->cpu == r->cpu) {
		if (t->follow == 1)
			emit(s, t, r->ns);
		t->state = KTR_TASK_UNKNOWN;
	}
	s->oncpu[c] = next;
}

static void forget_all(struct ktr_sched *s, uint64_t ns)
{
	for (size_t i = 0; i < s->ntasks; i++) {
		struct stask *t = &s->tasks[i];

		if (t->state == KTR_TASK_UNKNOWN || t->state == KTR_TASK_DEAD)
			continue;
		if (t->follow == 1)
			emit(s, t, ns);
		t->state = KTR_TASK_UNKNOWN;
	}
}

/*
 * An event in task @r->tid's context (word 0) shows that task on that CPU.
 * Some kernels do not trace every switch (this project's VMs leave out many
 * switches from the idle task): a task found running without its switch-in
 * is running from its first own event, a few microseconds late.
 */
static int seen_running(struct ktr_sched *s, const struct ktr_trace *tr, const struct ktr_rec *r)
{
	struct stask *t;

	if (!r->tid || r->cpu < 0)
		return 0;
	check_cpu(s, r, r->tid, r->tid);
	if (!(t = get(s, r->tid)))
		return 0;
	if (t->state == KTR_TASK_DEAD) { /* the pid was reused */
		t->pid = 0;
		t->follow = 0;
	}
	if (!t->pid)
		t->pid = pid_of(tr, r->tid, r->pid);
	if (!followed(s, t) || (t->state == KTR_TASK_RUNNING && t->cpu == r->cpu))
		return 0;
	move(s, t, KTR_TASK_RUNNING, r->ns, r->cpu, 0, 0);
	off_end(s, t, r->ns, r->cpu);
	return 1;
}

int ktr_sched_feed(struct ktr_sched *s, const struct ktr_trace *tr, const struct ktr_rec *r)
{
	struct stask *t;

	if (r->kind == KTR_GAP) {
		const struct ktr_info *in = ktr_info(tr);

		if ((r->gap == KTR_GAP_LOST || r->gap == KTR_GAP_OVERWRITTEN ||
		     r->gap == KTR_GAP_CORRUPT) &&
		    (r->stream >= KTR_KERNEL_STREAM || !strcmp(in->scope, "cpu"))) {
			forget_all(s, r->ns);
			return 1;
		}
		return 0;
	}
	if (r->cls != KTRACE_CLASS_KEVENT)
		return 0;
	if (r->id != KTRACE_LKST_PROCESS_CONTEXTSWITCH && seen_running(s, tr, r) &&
	    r->id != KTRACE_LKST_PROCESS_WAKEUP && r->id != KTRACE_LKST_PROCESS_WAKEUP_NEW)
		return 1;
	switch (r->id) {
	case KTRACE_LKST_PROCESS_CONTEXTSWITCH: {
		uint32_t prev, next;
		uint64_t ps;
		int st;

		if (r->nwords < 4)
			return 0;
		prev = (uint32_t)r->w[1];
		next = (uint32_t)r->w[2];
		ps = r->w[3];
		s->switches++;
		check_cpu(s, r, prev, next);
		if (prev && (t = get(s, prev))) {
			if (!t->pid)
				t->pid = pid_of(tr, prev, prev == r->tid ? r->pid : 0);
			if (followed(s, t)) {
				if ((ps & PS_MASK) == 0)
					st = KTR_TASK_READY;
				else if (ps & PS_DEAD)
					st = KTR_TASK_DEAD;
				else
					st = KTR_TASK_BLOCKED;
				move(s, t, st, r->ns, r->cpu, ps, 0);
				if (st != KTR_TASK_DEAD)
					off_begin(s, t, r->ns, r->cpu, ps, st == KTR_TASK_BLOCKED);
			}
		}
		if (next && (t = get(s, next))) {
			if (t->state == KTR_TASK_DEAD) { /* the pid was reused */
				t->pid = 0;
				t->follow = 0;
			}
			if (!t->pid)
				t->pid = pid_of(tr, next, 0);
			if (followed(s, t)) {
				move(s, t, KTR_TASK_RUNNING, r->ns, r->cpu, 0, 0);
				off_end(s, t, r->ns, r->cpu);
			}
		}
		return 1;
	}
	case KTRACE_LKST_PROCESS_WAKEUP:
	case KTRACE_LKST_PROCESS_WAKEUP_NEW: {
		uint32_t pid;

		if (r->nwords < 2)
			return 0;
		pid = (uint32_t)r->w[1];
		if (!pid || !(t = get(s, pid)))
			return 0;
		if (!t->pid)
			t->pid = pid_of(tr, pid, 0);
		if (!followed(s, t) || t->state == KTR_TASK_RUNNING || t->state == KTR_TASK_READY)
			return 0;
		move(s, t, KTR_TASK_READY, r->ns, t->cpu, 0, r->tid);
		off_wake(s, t, r->ns);
		return 1;
	}
	default:
		return 0;
	}
}

void ktr_sched_finish(struct ktr_sched *s, uint64_t end_ns)
{
	for (size_t i = 0; i < s->ntasks; i++) {
		struct stask *t = &s->tasks[i];

		if (t->follow == 1 && t->state != KTR_TASK_UNKNOWN && t->state != KTR_TASK_DEAD)
			emit(s, t, end_ns > t->since ? end_ns : t->since);
		t->state = KTR_TASK_UNKNOWN;
	}
}

/* Intervals with out <= x: the count (binary search). */
static size_t upto(const struct stask *t, uint64_t x)
{
	size_t lo = 0, hi = t->niv;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->iv[mid].out <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* G(x): off-CPU (or blocked, @blk) time before @x. */
static uint64_t cumulative(const struct stask *t, uint64_t x, int blk)
{
	size_t n = upto(t, x);
	const struct ivl *v;
	uint64_t end;

	if (!n)
		return 0;
	v = &t->iv[n - 1];
	end = x < v->in ? x : v->in;
	if (blk)
		return v->bcum + ((end < v->wake ? end : v->wake) - v->out);
	return v->cum + (end - v->out);
}

uint64_t ktr_sched_offcpu(const struct ktr_sched *s, uint32_t tid, uint64_t a, uint64_t b,
			  uint64_t *nswitch, uint64_t *blocked)
{
	const struct stask *t = find(s, tid);
	uint64_t off;

	if (nswitch)
		*nswitch = 0;
	if (blocked)
		*blocked = 0;
	if (!t || !t->niv || b < a)
		return 0;
	off = cumulative(t, b, 0) - cumulative(t, a, 0);
	if (blocked)
		*blocked = cumulative(t, b, 1) - cumulative(t, a, 1);
	if (nswitch) {
		size_t lo = a ? upto(t, a - 1) : 0; /* out < a */

		*nswitch = upto(t, b) - lo;
	}
	return off;
}

size_t ktr_sched_offcpu_each(const struct ktr_sched *s, uint32_t tid, uint64_t a, uint64_t b,
			     void (*fn)(void *arg, const struct ktr_offcpu *o), void *arg)
{
	const struct stask *t = find(s, tid);
	size_t n = 0, i;

	if (!t || !t->niv || b < a)
		return 0;
	/* the first interval that may overlap: the last with out <= a, or the next */
	i = upto(t, a);
	if (i)
		i--;
	for (; i < t->niv && t->iv[i].out <= b; i++) {
		const struct ivl *v = &t->iv[i];
		struct ktr_offcpu o;

		if (v->in < a)
			continue;
		o.out_ns = v->out;
		o.in_ns = v->in;
		o.wake_ns = v->wake;
		o.prev_state = v->prev_state;
		o.cpu_out = v->cpu_out;
		o.cpu_in = v->cpu_in;
		o.blocked = v->blocked;
		fn(arg, &o);
		n++;
	}
	return n;
}

enum ktr_task_state ktr_sched_state(const struct ktr_sched *s, uint32_t tid)
{
	const struct stask *t = find(s, tid);

	return t ? (enum ktr_task_state)t->state : KTR_TASK_UNKNOWN;
}

uint64_t ktr_sched_switches(const struct ktr_sched *s)
{
	return s->switches;
}

void ktr_sched_free(struct ktr_sched *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntasks; i++)
		free(s->tasks[i].iv);
	free(s->tasks);
	free(s->hash);
	free(s->oncpu);
	free(s);
}

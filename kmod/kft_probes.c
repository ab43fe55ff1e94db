// SPDX-License-Identifier: GPL-2.0
/*
 * kft_probes.c - KFT in the kernel (seed 002): function entry and exit with
 * duration through kretprobes, driven by the KFT engine of kft/.
 *
 * KFT instrumented every kernel function with gcc's -finstrument-functions.
 * A module cannot, so here a configuration probes the functions it names:
 * its trigger functions and its funclist, each with a kretprobe whose entry
 * handler plays __cyg_profile_func_enter and whose return handler plays
 * __cyg_profile_func_exit (lib/kft_hooks.c is the user-space counterpart).
 * A trace of every function is the job of the kernel's function_graph
 * tracer: `ktrace kft --tracefs`.
 *
 * The engine (kft/engine.h) decides; this file feeds it.  Its writers are
 * the CPUs: one struct kft_thread + counter block per CPU, used with
 * interrupts disabled (kprobes do not nest on a CPU; a busy flag guards
 * the rest), plus one for the hrtimer that fires time triggers, so a run
 * with `trigger start time` or `trigger stop time` changes state on time
 * even when no probed function runs.
 *
 * Entry handler: timestamp (ktime_get_mono_fast_ns(): CLOCK_MONOTONIC, the
 * same on every CPU, so a task may migrate between entry and exit), the
 * context (0 task, 1 softirq, 2 hardirq: noints/onlyints), the depth (how
 * many probed calls of this configuration the task has open: its rethook
 * shadow stack, current->rethooks, is walked) and the stack left below the
 * stack pointer at entry (the task's kernel stack; unknown on irq stacks)
 * for the stack watches.  When a watch fires (KFT_MARK) every open probed
 * call of the task is marked, through the same walk.  If the engine says
 * the run needs nothing from this call (idle), no return hook is set.
 *
 * Return handler: the engine decides whether the completed call is kept
 * (filters, logentries, triggers on exit); if so one 48-byte entry goes to
 * the session's log (a reservation by atomic increment, no lock), its
 * timestamp stored last with release semantics.  A call that was open
 * when its run stopped is kept once, flagged unfinished, even when its
 * CPU learned about the stop earlier (the engine's flush protocol assumes
 * one shadow stack per writer; here each call reports itself).
 *
 * Loading a configuration (kft_load_text(), process context, kft_mutex):
 * the parser resolves each function name by registering a disabled
 * kretprobe on it (kallsyms_lookup_name is not exported; the probe is
 * needed anyway), 0x addresses are probed after the parse (a kretprobe is
 * refused unless the address is a function entry), and the log is
 * allocated.  Any failure unregisters what was registered and leaves the
 * current session untouched.  Then: publish the new session, wait for
 * handlers of the old one (synchronize_rcu: handlers run with interrupts
 * off and check their session first), kft_load(), enable the new probes,
 * unregister the old ones.
 *
 * Hot path: no lock, no allocation, no sleep; kprobes' own costs aside.
 */
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include "kft_internal.h"

static unsigned int kft_log = KFT_LOG_DEFAULT;
module_param(kft_log, uint, 0400);
MODULE_PARM_DESC(kft_log, "KFT: log entries of a configuration without logentries (default 65536)");

static unsigned int kft_maxactive = 256;
module_param(kft_maxactive, uint, 0400);
MODULE_PARM_DESC(kft_maxactive,
		 "KFT: calls of one probed function open at once (kretprobe maxactive, 1..4096)");

/* One writer of the engine: a CPU. */
struct kft_cpu {
	struct kft_counters c; /* first: 128-byte aligned block */
	struct kft_thread t;
	int busy;
};

/* Per-call data of a kretprobe instance. */
struct kft_frame {
	u64 t;     /* entry time (never 0 once set) */
	u64 epoch; /* the run this CPU saw at entry if the call may be kept, else 0 */
	u16 depth;
	u8 sig;
	u8 flags;  /* KFT_FRAME_* */
};

DEFINE_MUTEX(kft_mutex);

static struct kft_run kft_run;
static struct kft_cpu __percpu *kft_cpus;
static struct kft_counters kft_tc;  /* the time-trigger timer's counters */
static struct kft_thread kft_tt;    /* and its view of the run */
static struct kft_sess __rcu *kft_cur;
static struct hrtimer kft_timer;
static struct irq_work kft_work;
static bool kft_dying;
static char kft_error[256];         /* the last refused write, "" if none */
static char kft_symbuf[KSYM_SYMBOL_LEN]; /* under kft_mutex */

/* ---- time triggers ----------------------------------------------------- */

/* The next time trigger of the run in its current state, 0 if none. */
static u64 kft_deadline(void)
{
	u64 e = KFT_LOAD_ACQ(&kft_run.epoch);
	u32 checks = KFT_LOAD(&kft_run.checks);
	u64 d = 0;

	if (KFT_EPOCH_STATE(e) == KFT_STATE_PRIMED && (checks & KFT_CHK_START_TIME))
		d = KFT_LOAD(&kft_run.start_at);
	else if (KFT_EPOCH_STATE(e) == KFT_STATE_RUNNING && (checks & KFT_CHK_STOP_TIME))
		d = KFT_LOAD(&kft_run.stop_at);
	return d > (u64)KTIME_MAX ? 0 : d;
}

/* Arm (or cancel) the timer for the run's next time trigger. */
static void kft_arm(void)
{
	u64 d;

	if (READ_ONCE(kft_dying))
		return;
	d = kft_deadline();
	if (d)
		hrtimer_start(&kft_timer, ns_to_ktime(d), HRTIMER_MODE_ABS);
	else
		hrtimer_try_to_cancel(&kft_timer);
}

static void kft_work_fn(struct irq_work *w)
{
	kft_arm();
}

/* A handler saw the run change state: re-arm the timer (hard irq, later). */
static void kft_poke(void)
{
	if (!READ_ONCE(kft_dying) && (KFT_LOAD(&kft_run.checks) &
				      (KFT_CHK_START_TIME | KFT_CHK_STOP_TIME)))
		irq_work_queue(&kft_work);
}

/*
 * The timer fires a time trigger through the engine, as a writer whose
 * events are "now".  If nothing changed (a transition was in flight), it
 * looks again 1 ms later instead of spinning in hard irq context.
 */
static enum hrtimer_restart kft_timer_fn(struct hrtimer *timer)
{
	u64 now = ktime_get_mono_fast_ns(), exp = ktime_to_ns(hrtimer_get_expires(timer)), d;

	if (now < exp)
		now = exp;
	kft_entry(&kft_run, &kft_tt, 0, now, ~0ULL);
	d = kft_deadline();
	if (!d || READ_ONCE(kft_dying))
		return HRTIMER_NORESTART;
	if (d <= now)
		d = now + NSEC_PER_MSEC;
	hrtimer_set_expires(timer, ns_to_ktime(d));
	return HRTIMER_RESTART;
}

/* ---- the handlers ------------------------------------------------------ */

static inline unsigned int kft_context(void)
{
	if (in_hardirq())
		return 2;
	if (in_serving_softirq())
		return 1;
	return 0;
}

/* Bytes of the task's kernel stack left below @regs' stack pointer. */
static inline u64 kft_stack_left(struct pt_regs *regs)
{
	unsigned long base = (unsigned long)task_stack_page(current);
	unsigned long sp = kernel_stack_pointer(regs);

	if (sp >= base && sp < base + THREAD_SIZE)
		return sp - base;
	return ~0ULL; /* on an irq stack: not measured */
}

/*
 * Count (and with @mark, mark for a stack watch) the calls of session @s
 * the current task has open: its rethook nodes that belong to our probes.
 * Only the task itself (or an interrupt on its CPU, with ours disabled)
 * changes the list, so walking it with interrupts off is safe.
 */
static unsigned int kft_walk(struct kft_sess *s, bool mark)
{
	unsigned int d = 0;
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	struct llist_node *n;

	for (n = current->rethooks.first; n; n = n->next) {
		struct rethook_node *rn = llist_entry(n, struct rethook_node, llist);
		void *data = rn->rethook ? rn->rethook->data : NULL;

		if (data < (void *)s->probes || data >= (void *)(s->probes + s->nprobes))
			continue;
		d++;
		if (mark) {
			struct kretprobe_instance *ri =
				container_of(rn, struct kretprobe_instance, node);

			((struct kft_frame *)ri->data)->flags |= KFT_FRAME_WATCH;
		}
	}
#endif
	return d > 0xffff ? 0xffff : d;
}

static int kft_entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kft_probe *p = container_of(get_kretprobe(ri), struct kft_probe, rp);
	struct kft_frame *f = (struct kft_frame *)ri->data;
	struct kft_sess *s = p->sess;
	struct kft_cpu *c;
	unsigned long flags;
	unsigned int res;
	int ret = 1; /* no return hook */
	u64 e0;

	if (in_nmi())
		return 1;
	local_irq_save(flags);
	if (s != rcu_access_pointer(kft_cur))
		goto out;
	c = this_cpu_ptr(kft_cpus);
	if (c->busy)
		goto out;
	c->busy = 1;
	f->t = ktime_get_mono_fast_ns() ?: 1;
	f->flags = 0;
	f->sig = kft_context();
	f->depth = kft_walk(s, false);
	e0 = c->t.epoch;
	res = kft_entry(&kft_run, &c->t, p->fn, f->t, kft_stack_left(regs));
	if (res & KFT_MARK) {
		kft_walk(s, true);
		f->flags |= KFT_FRAME_WATCH;
	}
	/* KFT_FLUSH is not needed: each open call reports itself at its exit. */
	f->epoch = (KFT_EPOCH_STATE(c->t.epoch) == KFT_STATE_RUNNING && f->t >= c->t.run_start) ?
		   c->t.epoch : 0;
	if (c->t.epoch != e0)
		kft_poke();
	if (!kft_idle(&c->t) || f->epoch)
		ret = 0;
	c->busy = 0;
out:
	local_irq_restore(flags);
	return ret;
}

/*
 * The call of @f was open when its run stopped, and this CPU learned about
 * the stop before: report it as unfinished through the engine (which
 * applies the ints and funclist filters and logentries, and counts it),
 * with a flush window of exactly this call.
 */
static unsigned int kft_open_at_stop(struct kft_cpu *c, struct kft_probe *p,
				     struct kft_frame *f, u64 now)
{
	u64 from = c->t.flush_from, until = c->t.flush_until;
	unsigned int rec;

	c->t.flush_from = f->t;
	c->t.flush_until = f->t;
	rec = kft_unfinished(&kft_run, &c->t, p->fn, f->t, f->sig, f->flags, KFT_UNF_FLUSH, now);
	c->t.flush_from = from;
	c->t.flush_until = until;
	return rec;
}

/* Write the log entry of an approved call (@res: KFT_REC | KTRACE_CALLF_*). */
static void kft_log_call(struct kft_sess *s, struct kft_cpu *c, struct kft_probe *p,
			 struct kft_frame *f, struct kretprobe_instance *ri, u64 now,
			 unsigned int res)
{
	u64 i = (u64)atomic64_inc_return(&s->next) - 1;
	struct kft_ent *e;

	if (i >= s->cap) {
		/* KFT's log is not circular: a full log stops the run. */
		atomic64_inc(&s->lost);
		kft_lost(&kft_run, &c->t, res, now);
		return;
	}
	e = &s->log[i];
	e->dur = now - f->t;
	e->fn = p->fn;
	e->site = get_kretprobe_retaddr(ri);
	e->pid = current->pid;
	e->cpu = raw_smp_processor_id();
	e->depth = f->depth;
	e->sig = f->sig;
	e->flags = KFT_REC_FLAGS(res);
	smp_store_release(&e->ts, now);
}

static int kft_ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kft_probe *p = container_of(get_kretprobe(ri), struct kft_probe, rp);
	struct kft_frame *f = (struct kft_frame *)ri->data;
	struct kft_sess *s = p->sess;
	struct kft_cpu *c;
	unsigned long flags;
	unsigned int res;
	u64 now, e0, cur;

	local_irq_save(flags);
	if (s != rcu_access_pointer(kft_cur))
		goto out;
	c = this_cpu_ptr(kft_cpus);
	if (c->busy)
		goto out;
	c->busy = 1;
	now = ktime_get_mono_fast_ns();
	if (now < f->t)
		now = f->t;
	e0 = c->t.epoch;
	res = kft_exit(&kft_run, &c->t, p->fn, f->t, now, f->sig, f->flags);
	if (!(res & KFT_REC) && f->epoch && e0 != f->epoch) {
		cur = KFT_LOAD_ACQ(&kft_run.epoch);
		if (KFT_EPOCH_GEN(cur) == KFT_EPOCH_GEN(f->epoch) &&
		    ((cur >> 8) != (f->epoch >> 8) || KFT_EPOCH_STATE(cur) != KFT_STATE_RUNNING))
			res |= kft_open_at_stop(c, p, f, now);
	}
	if (res & KFT_REC)
		kft_log_call(s, c, p, f, ri, now, res);
	if (c->t.epoch != e0)
		kft_poke();
	c->busy = 0;
out:
	local_irq_restore(flags);
	return 0;
}

/* ---- sessions ---------------------------------------------------------- */

/* "name+0xoff/0xsize [mod]" of @addr into kft_symbuf; the offset in *@off. */
static const char *kft_sym(unsigned long addr, unsigned long *off)
{
	char *p;

	sprint_symbol(kft_symbuf, addr);
	*off = 0;
	p = strstr(kft_symbuf, "+0x");
	if (kft_symbuf[0] == '0' && kft_symbuf[1] == 'x')
		return NULL; /* no symbol */
	if (p && sscanf(p, "+%lx/", off) != 1)
		*off = 0;
	return kft_symbuf;
}

/* kft_name_fn for the status: "name" or "name+0xoff" (kft_mutex held). */
static kt_u32 kft_name(void *arg, kt_u64 addr, char *buf, kt_u32 size)
{
	unsigned long off;
	const char *s = kft_sym((unsigned long)addr, &off);
	char *end;

	if (!s || !size)
		return 0;
	end = strchr(kft_symbuf, off ? '/' : '+');
	if (end)
		*end = '\0';
	return strscpy(buf, kft_symbuf, size) < 0 ? size - 1 : strlen(buf);
}

static int kft_register(struct kft_sess *s, struct kft_probe *p)
{
	int ret;

	p->sess = s;
	p->rp.kp.flags = KPROBE_FLAG_DISABLED;
	p->rp.handler = kft_ret_handler;
	p->rp.entry_handler = kft_entry_handler;
	p->rp.data_size = sizeof(struct kft_frame);
	p->rp.maxactive = clamp_t(unsigned int, kft_maxactive, 1, 4096);
	ret = register_kretprobe(&p->rp);
	if (ret)
		return ret;
	p->registered = true;
	if (!p->fn) {
		/* Named: the function's start (a probe may sit after an ENDBR). */
		unsigned long off, addr = (unsigned long)p->rp.kp.addr;

		p->fn = kft_sym(addr, &off) ? addr - off : addr;
	}
	return 0;
}

/* Why a kretprobe could not be registered, for the status's error line. */
static const char *kft_probe_why(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such function";
	case -EINVAL:
		return "not a function entry kprobes may use (blacklisted, notrace or not an entry)";
	case -EILSEQ:
		return "not at an instruction boundary";
	case -EEXIST:
		return "already probed";
	case -ENOMEM:
		return "out of memory";
	case -ENOSPC:
		return "too many functions";
	default:
		return "refused by kprobes";
	}
}

/* The parser's resolver context. */
struct kft_build {
	struct kft_sess *s;
	int err;        /* why the last name failed */
	char name[64];  /* that name (truncated) */
};

/* kft_resolve_fn: a name becomes the address of a (disabled) kretprobe. */
static int kft_resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	struct kft_build *b = arg;
	struct kft_sess *s = b->s;
	struct kft_probe *p;
	unsigned int i;
	int ret;

	strscpy(b->name, name, min_t(size_t, len + 1, sizeof(b->name)));
	b->err = -ENOENT;
	if (len == 0 || len >= KSYM_NAME_LEN)
		return -ENOENT;
	for (i = 0; i < s->nprobes; i++) {
		const char *n = s->probes[i].name;

		if (n && !strncmp(n, name, len) && n[len] == '\0') {
			*addr = s->probes[i].fn;
			return 0;
		}
	}
	if (s->nprobes >= KFT_PROBES_MAX) {
		b->err = -ENOSPC;
		return -ENOSPC;
	}
	p = &s->probes[s->nprobes];
	p->name = kstrndup(name, len, GFP_KERNEL);
	if (!p->name) {
		b->err = -ENOMEM;
		return -ENOMEM;
	}
	p->rp.kp.symbol_name = p->name;
	ret = kft_register(s, p);
	if (ret) {
		kfree(p->name);
		memset(p, 0, sizeof(*p));
		b->err = ret;
		return ret;
	}
	s->nprobes++;
	*addr = p->fn;
	b->err = 0;
	return 0;
}

/* Probe @fn, given as a 0x address, unless a probe already has it. */
static int kft_probe_addr(struct kft_sess *s, u64 fn)
{
	struct kft_probe *p;
	unsigned int i;
	int ret;

	for (i = 0; i < s->nprobes; i++)
		if (s->probes[i].fn == fn)
			return 0;
	if (s->nprobes >= KFT_PROBES_MAX)
		return -ENOSPC;
	p = &s->probes[s->nprobes];
	p->fn = fn;
	p->rp.kp.addr = (kprobe_opcode_t *)(unsigned long)fn;
	ret = kft_register(s, p);
	if (ret) {
		memset(p, 0, sizeof(*p));
		return ret;
	}
	s->nprobes++;
	return 0;
}

/* Probe every function of the parsed configuration not probed by name. */
static int kft_probe_addrs(struct kft_sess *s, char *msg, size_t size)
{
	const struct kft_config *cfg = s->cfg;
	unsigned int i, n = min_t(u32, cfg->nfuncs, KFT_FUNCLIST_MAX);
	int ret = 0;
	u64 fn = 0;

	for (i = 0; i < n + 2 && !ret; i++) {
		const struct kft_trigger *t = i == 0 ? &cfg->start : &cfg->stop;

		if (i < 2 && t->kind != KFT_TRIG_ENTRY && t->kind != KFT_TRIG_EXIT)
			continue;
		fn = i < 2 ? t->arg : cfg->funcs[i - 2];
		ret = kft_probe_addr(s, fn);
	}
	if (!ret)
		return 0;
	scnprintf(msg, size, "function 0x%llx: cannot probe it: %s (error %d)", (unsigned long long)fn,
		  kft_probe_why(ret), ret);
	return ret == -ENOMEM ? -ENOMEM : -EINVAL;
}

static void kft_sess_free(struct kft_sess *s)
{
	struct kretprobe **rps;
	unsigned int i, n = 0;

	if (!s)
		return;
	rps = kmalloc_array(s->nprobes ?: 1, sizeof(*rps), GFP_KERNEL);
	for (i = 0; i < s->nprobes; i++) {
		if (!s->probes[i].registered)
			continue;
		if (rps)
			rps[n++] = &s->probes[i].rp;
		else
			unregister_kretprobe(&s->probes[i].rp);
	}
	if (rps && n)
		unregister_kretprobes(rps, n); /* one synchronize_rcu() for all */
	kfree(rps);
	for (i = 0; i < s->nprobes; i++)
		kfree(s->probes[i].name);
	kfree(s->probes);
	kvfree(s->log);
	kvfree(s->sites);
	kvfree(s->index);
	kvfree(s->cfg);
	kfree(s);
}

static struct kft_sess *kft_sess_alloc(void)
{
	struct kft_sess *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	s->cfg = kvzalloc(sizeof(*s->cfg), GFP_KERNEL);
	s->probes = kcalloc(KFT_PROBES_MAX, sizeof(*s->probes), GFP_KERNEL);
	if (!s->cfg || !s->probes) {
		kft_sess_free(s);
		return NULL;
	}
	atomic64_set(&s->next, 0);
	atomic64_set(&s->lost, 0);
	return s;
}

static u64 kft_now(void)
{
	return ktime_get_mono_fast_ns();
}

int kft_load_text(const char *text, size_t len, char *msg, size_t size)
{
	struct kft_build b = { 0 };
	struct kft_names names = { 0 };
	struct kft_error err;
	struct kft_sess *s, *old;
	struct kft_config *cfg;
	unsigned int i;
	int ret;

	msg[0] = '\0';
	s = kft_sess_alloc();
	if (!s) {
		strscpy(msg, "out of memory", size);
		return -ENOMEM;
	}
	cfg = s->cfg;
	b.s = s;
	mutex_lock(&kft_mutex);
	/* the log is allocated whole: a logentries beyond it is refused */
	names.resolve = kft_resolve;
	names.arg = &b;
	names.max_logentries = KFT_LOG_MAX;
	if (kft_config_parse_names(cfg, text, len, &names, &err) < 0) {
		if (b.err && b.err != -ENOENT && !strncmp(err.msg, "unknown function", 16)) {
			scnprintf(msg, size, "%u:%u: cannot probe function '%s': %s (error %d)",
				  err.line, err.col, b.name, kft_probe_why(b.err), b.err);
			ret = b.err == -ENOMEM ? -ENOMEM : -EINVAL;
		} else {
			kft_error_format(msg, size, NULL, &err);
			ret = -EINVAL;
		}
		goto fail;
	}
	/* Functions given as 0x addresses: probe them too. */
	ret = kft_probe_addrs(s, msg, size);
	if (ret)
		goto fail;
	s->cap = (cfg->flags & KFT_CF_LOGENTRIES) ? cfg->logentries : kft_log;
	s->cap = clamp_t(u64, s->cap, 1, KFT_LOG_MAX);
	s->log = vzalloc(array_size(s->cap, sizeof(*s->log)));
	if (!s->log) {
		scnprintf(msg, size, "cannot allocate a log of %llu entries", s->cap);
		ret = -ENOMEM;
		goto fail;
	}

	/* The new session replaces the old one. */
	old = rcu_dereference_protected(kft_cur, lockdep_is_held(&kft_mutex));
	rcu_assign_pointer(kft_cur, s);
	synchronize_rcu(); /* no handler of the old session is inside the engine */
	ret = kft_load(&kft_run, cfg, kft_now());
	if (ret < 0) {
		/* The parser's checks make this impossible; keep the run as it was. */
		scnprintf(msg, size, "the engine refused the configuration (error %d)", ret);
		ret = -EINVAL;
	} else {
		for (i = 0; i < s->nprobes; i++)
			enable_kretprobe(&s->probes[i].rp);
	}
	kft_arm();
	kft_error[0] = '\0';
	if (ret)
		strscpy(kft_error, msg, sizeof(kft_error));
	mutex_unlock(&kft_mutex);
	kft_sess_free(old);
	return ret;

fail:
	strscpy(kft_error, msg, sizeof(kft_error));
	mutex_unlock(&kft_mutex);
	kft_sess_free(s);
	return ret;
}

int kft_run_command(int cmd)
{
	static const char *const names[] = { "", "prime", "start", "stop" };
	u64 e;
	int ret;

	mutex_lock(&kft_mutex);
	ret = kft_command(&kft_run, cmd, kft_now());
	if (ret < 0) {
		e = KFT_LOAD_ACQ(&kft_run.epoch);
		scnprintf(kft_error, sizeof(kft_error), "%s: the run is %s: cannot %s",
			  names[cmd], kft_state_name(KFT_EPOCH_STATE(e)), names[cmd]);
		ret = -EBUSY;
	} else {
		kft_error[0] = '\0';
	}
	kft_arm();
	mutex_unlock(&kft_mutex);
	return ret;
}

/* ---- status ------------------------------------------------------------ */

size_t kft_status_text(char *buf, size_t size)
{
	struct kft_sess *s = rcu_dereference_protected(kft_cur, lockdep_is_held(&kft_mutex));
	struct kft_status st;
	unsigned long missed = 0;
	unsigned int i, cpu;
	size_t n = 0;
	kt_u32 need;

	lockdep_assert_held(&kft_mutex);
	n += scnprintf(buf + n, size - n,
		       "tracer: kretprobes on the configured functions (entry, exit, duration); every function: ktrace kft --tracefs\n");
	for (i = 0; s && i < s->nprobes; i++)
		missed += s->probes[i].rp.nmissed + s->probes[i].rp.kp.nmissed;
	n += scnprintf(buf + n, size - n, "probes: %u (calls missed %lu)\n", s ? s->nprobes : 0,
		       missed);
	for (i = 0; s && i < s->nprobes; i++) {
		struct kft_probe *p = &s->probes[i];
		char name[128];

		if (!kft_name(NULL, p->fn, name, sizeof(name)))
			strscpy(name, "?", sizeof(name));
		n += scnprintf(buf + n, size - n, "probe: %s 0x%llx missed %lu\n", name,
			       (unsigned long long)p->fn,
			       (unsigned long)p->rp.nmissed + p->rp.kp.nmissed);
	}
	if (s)
		n += scnprintf(buf + n, size - n, "log: %llu of %llu entries, %lld lost, %u call sites\n",
			       min_t(u64, atomic64_read(&s->next), s->cap), s->cap,
			       atomic64_read(&s->lost), s->nsites);
	else
		n += scnprintf(buf + n, size - n, "log: -\n");
	n += scnprintf(buf + n, size - n, "error: %s\n", kft_error[0] ? kft_error : "-");
	kft_status_begin(&kft_run, &st);
	for_each_possible_cpu(cpu)
		kft_status_add(&st, &per_cpu_ptr(kft_cpus, cpu)->c);
	kft_status_add(&st, &kft_tc);
	if (n >= size - 1)
		return n;
	need = kft_status_format(&kft_run, &st, buf + n, size - n, kft_name, NULL);
	return min_t(size_t, n + need, size - 1);
}

/* ---- /proc/kft_data and /proc/kft_callsites ---------------------------- */

static int kft_cmp_ts(const void *a, const void *b)
{
	u64 x = ((const struct kft_ent *)a)->ts, y = ((const struct kft_ent *)b)->ts;

	return x < y ? -1 : x > y;
}

static u32 kft_site_hash(u64 fn, u64 site)
{
	u64 x = fn ^ (site * 0x9e3779b97f4a7c15ULL);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (u32)(x >> 32);
}

/* Grow the callsites table of @s to hold at least one more pair. */
static int kft_sites_grow(struct kft_sess *s)
{
	u32 cap = s->capsites ? 2 * s->capsites : 256, slots = 2 * cap, i;
	struct kft_site *sites;
	u32 *index;

	if (cap > KTRACE_CALLSITE_NONE)
		return -ENOSPC;
	sites = kvmalloc_array(cap, sizeof(*sites), GFP_KERNEL);
	index = kvcalloc(slots, sizeof(*index), GFP_KERNEL);
	if (!sites || !index) {
		kvfree(sites);
		kvfree(index);
		return -ENOMEM;
	}
	if (s->nsites)
		memcpy(sites, s->sites, s->nsites * sizeof(*sites));
	for (i = 0; i < s->nsites; i++) {
		u32 h = kft_site_hash(sites[i].func, sites[i].site) & (slots - 1);

		while (index[h])
			h = (h + 1) & (slots - 1);
		index[h] = i + 1;
	}
	kvfree(s->sites);
	kvfree(s->index);
	s->sites = sites;
	s->index = index;
	s->capsites = cap;
	s->index_mask = slots - 1;
	return 0;
}

/* The call-site index of (@fn, @site), entering it; KTRACE_CALLSITE_NONE if full. */
static u32 kft_site_index(struct kft_sess *s, u64 fn, u64 site)
{
	u32 h;

	if (s->index) {
		for (h = kft_site_hash(fn, site) & s->index_mask; s->index[h];
		     h = (h + 1) & s->index_mask) {
			struct kft_site *e = &s->sites[s->index[h] - 1];

			if (e->func == fn && e->site == site)
				return s->index[h] - 1;
		}
	}
	if (s->nsites + 1 >= KTRACE_CALLSITE_NONE)
		return KTRACE_CALLSITE_NONE;
	if ((s->nsites + 1) * 2 > s->capsites && kft_sites_grow(s))
		return KTRACE_CALLSITE_NONE;
	h = kft_site_hash(fn, site) & s->index_mask;
	while (s->index[h])
		h = (h + 1) & s->index_mask;
	s->sites[s->nsites].func = fn;
	s->sites[s->nsites].site = site;
	s->index[h] = ++s->nsites;
	return s->nsites - 1;
}

/* The sub-buffer being laid out by kft_emit(). */
struct kft_emit_sb {
	size_t off;     /* of its header in the image */
	u64 first_ts, last_ts, seq;
	u32 used, nrec;
	bool open;
};

static void kft_emit_close(u8 *out, const struct kft_emit_sb *c, u64 lost)
{
	struct ktrace_subbuf *sb;

	if (!out || !c->open)
		return;
	sb = (struct ktrace_subbuf *)(out + c->off);
	memset(sb, 0, sizeof(*sb));
	sb->magic = KTRACE_SUBBUF_MAGIC;
	sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	sb->flags = KTRACE_SBF_CTX | KTRACE_SBF_CLOSED;
	sb->seq = c->seq;
	sb->first_ts = c->first_ts;
	sb->first_ns = c->first_ts; /* the raw clock is CLOCK_MONOTONIC ns */
	sb->last_ts = c->last_ts;
	sb->used = c->used;
	sb->lost = (u32)min_t(u64, lost, U32_MAX);
	sb->nrec = c->nrec;
	sb->cpu = 0xffff;
}

/*
 * Lay @n entries, sorted by time, out as one shared stream in packed
 * layout (docs/FORMAT.md): sub-buffers of at most KFT_DATA_SUBBUF bytes,
 * flags CTX | CLOSED; a record is its header word, a context word (pid,
 * CPU, context) and the CALL payload.  Records the full log refused
 * (@lost) are counted in the last sub-buffer.  With @out NULL only the
 * length is computed.  Return: the image's length in bytes.
 */
static size_t kft_emit(const struct kft_ent *ents, const u32 *idx, size_t n, u64 lost, u8 *out)
{
	struct kft_emit_sb c = { 0 };
	size_t len = 0, i;

	for (i = 0; i < n; i++) {
		const struct kft_ent *e = &ents[i];
		unsigned int words = KTRACE_CALL_WORDS;
		size_t need;

		if (idx[i] == KTRACE_CALLSITE_NONE)
			words = KTRACE_CALL_WORDS_ADDR;
		else if (e->dur >> 32)
			words = KTRACE_CALL_WORDS_LONG;
		need = 8 * (2 + words);
		if (!c.open || KTRACE_SUBBUF_HDR_SIZE + c.used + need > KFT_DATA_SUBBUF ||
		    e->ts - c.first_ts >= (KTRACE_TS_WINDOW >> 1)) {
			if (c.open) {
				kft_emit_close(out, &c, 0);
				c.seq++;
			}
			c.open = true;
			c.off = len;
			c.first_ts = e->ts;
			c.used = 0;
			c.nrec = 0;
			len += KTRACE_SUBBUF_HDR_SIZE;
		}
		if (out) {
			u64 *w = (u64 *)(out + len);

			w[0] = KTRACE_REC_HDR(e->ts, KTRACE_CLASS_CALL, words, KTRACE_CALL_ID(idx[i]));
			w[1] = KTRACE_CTX(e->pid, e->cpu, e->sig);
			w[2] = KTRACE_CALL_W0(e->dur, idx[i], e->depth, e->sig, e->flags);
			if (words >= KTRACE_CALL_WORDS_LONG)
				w[3] = e->dur >> 32;
			if (words >= KTRACE_CALL_WORDS_ADDR) {
				w[4] = e->fn;
				w[5] = e->site;
			}
		}
		c.used += need;
		c.nrec++;
		c.last_ts = e->ts;
		len += need;
	}
	if (!c.open && lost) {
		/* Nothing kept, yet records were refused: an empty sub-buffer says so. */
		c.open = true;
		c.off = len;
		c.first_ts = c.last_ts = kft_now();
		len += KTRACE_SUBBUF_HDR_SIZE;
	}
	kft_emit_close(out, &c, lost);
	return len;
}

int kft_data_image(void **img, size_t *len)
{
	struct kft_sess *s;
	struct kft_ent *ents = NULL;
	u32 *idx = NULL;
	size_t n, m = 0, i, size;
	u64 lost;
	u8 *out;
	int ret = 0;

	*img = NULL;
	*len = 0;
	mutex_lock(&kft_mutex);
	s = rcu_dereference_protected(kft_cur, lockdep_is_held(&kft_mutex));
	if (!s)
		goto unlock;
	n = min_t(u64, atomic64_read(&s->next), s->cap);
	lost = atomic64_read(&s->lost);
	if (!n && !lost)
		goto unlock;
	ents = kvmalloc_array(n ?: 1, sizeof(*ents), GFP_KERNEL);
	idx = kvmalloc_array(n ?: 1, sizeof(*idx), GFP_KERNEL);
	if (!ents || !idx) {
		ret = -ENOMEM;
		goto unlock;
	}
	for (i = 0; i < n; i++) {
		u64 ts = smp_load_acquire(&s->log[i].ts);

		if (!ts)
			continue; /* being written: a later read has it */
		ents[m] = s->log[i];
		ents[m].ts = ts;
		m++;
	}
	sort(ents, m, sizeof(*ents), kft_cmp_ts, NULL);
	for (i = 0; i < m; i++)
		idx[i] = kft_site_index(s, ents[i].fn, ents[i].site);
	size = kft_emit(ents, idx, m, lost, NULL);
	out = kvzalloc(size ?: 1, GFP_KERNEL);
	if (!out) {
		ret = -ENOMEM;
		goto unlock;
	}
	kft_emit(ents, idx, m, lost, out);
	*img = out;
	*len = size;
unlock:
	mutex_unlock(&kft_mutex);
	kvfree(ents);
	kvfree(idx);
	return ret;
}

int kft_callsites_image(void **img, size_t *len)
{
	struct ktrace_callsites *h;
	struct kft_sess *s;
	size_t size;
	u32 n;

	mutex_lock(&kft_mutex);
	s = rcu_dereference_protected(kft_cur, lockdep_is_held(&kft_mutex));
	n = s ? s->nsites : 0;
	size = sizeof(*h) + (size_t)n * sizeof(struct ktrace_callsite);
	h = kvzalloc(size, GFP_KERNEL);
	if (!h) {
		mutex_unlock(&kft_mutex);
		return -ENOMEM;
	}
	h->magic = KTRACE_CALLSITES_MAGIC;
	h->version = KTRACE_CALLSITES_VERSION;
	h->hdr_size = sizeof(*h);
	h->entry_size = sizeof(struct ktrace_callsite);
	h->capacity = n;
	h->count = n;
	if (n)
		memcpy(h + 1, s->sites, (size_t)n * sizeof(struct kft_site));
	mutex_unlock(&kft_mutex);
	*img = h;
	*len = size;
	return 0;
}

/* ---- module setup ------------------------------------------------------ */

int kft_core_init(void)
{
	int cpu;

	BUILD_BUG_ON(sizeof(struct kft_site) != sizeof(struct ktrace_callsite));
	kft_cpus = alloc_percpu(struct kft_cpu);
	if (!kft_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct kft_cpu *c = per_cpu_ptr(kft_cpus, cpu);

		c->t.c = &c->c;
	}
	kft_tt.c = &kft_tc;
	/* Raw clock: ns of CLOCK_MONOTONIC; time 0 (trigger start time) is boot. */
	kft_run_init(&kft_run, NSEC_PER_SEC, 0);
	hrtimer_init(&kft_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	kft_timer.function = kft_timer_fn;
	init_irq_work(&kft_work, kft_work_fn);
	WRITE_ONCE(kft_dying, false);
	return 0;
}

void kft_core_exit(void)
{
	struct kft_sess *s;

	mutex_lock(&kft_mutex);
	WRITE_ONCE(kft_dying, true);
	s = rcu_dereference_protected(kft_cur, lockdep_is_held(&kft_mutex));
	RCU_INIT_POINTER(kft_cur, NULL);
	mutex_unlock(&kft_mutex);
	synchronize_rcu();
	/* Probes off first (their handlers may queue the irq_work), then the timer. */
	kft_sess_free(s);
	irq_work_sync(&kft_work);
	hrtimer_cancel(&kft_timer);
	irq_work_sync(&kft_work);
	free_percpu(kft_cpus);
	kft_cpus = NULL;
}

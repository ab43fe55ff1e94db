// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_events.c - LKST's event set on today's kernel: one probe per
 * tracepoint of the catalogue (include/ktrace/lkst.h), found by name at
 * load time, registered and unregistered by lkst_maskset.c.
 *
 * The __tracepoint_* symbols are not exported to modules, so every
 * built-in tracepoint is visited once with for_each_kernel_tracepoint()
 * and matched by name.  A catalogue event whose tracepoint this kernel
 * lacks (tasklet_hi_entry since 6.0, ipi_entry on x86, LKST's wait-queue
 * hooks that never became tracepoints) stays unavailable: it is listed as
 * such in ktrace/lkst/events and in the trace metadata (`unavailable`
 * lines), and masksets may name it without effect.
 *
 * Each probe below is written by hand from the TP_PROTO of Linux 6.1
 * (include/trace/events/ and arch/x86/include/asm/trace/ of the headers),
 * and the compiler checks it against the kernel's own declaration:
 * kt_lkst_check_types() passes every probe to the tracepoint's
 * check_trace_callback_type_NAME(), which only accepts a function of the
 * exact prototype.  A probe extracts the catalogue's arguments the way the
 * tracepoint's TP_fast_assign does for ftrace (so both backends of
 * `ktrace record --kernel` agree), with three deliberate differences:
 * page fault addresses and ips that are kernel addresses are recorded as 0
 * (no kernel layout in a trace), MEM_CACHE_ALLOC's bytes_alloc is the
 * cache's object size (struct kmem_cache is private to mm/ in 6.1; only
 * kmem_cache_size() is exported), and nothing else is read through a
 * pointer that ftrace does not read.
 *
 * A probe runs in the tracepoint's context with preemption disabled; it
 * looks up the current maskset's handler for its event first and returns
 * at once for NOTHING, then fills a struct ktrace_kevent on its stack
 * and hands it to the handler (DEFAULT: ktrace_lkst_log()).
 */
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/blktrace_api.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/syscall.h>

#include <trace/events/block.h>
#include <trace/events/ipi.h>
#include <trace/events/irq.h>
#include <trace/events/kmem.h>
#include <trace/events/lock.h>
#include <trace/events/mce.h>
#include <trace/events/net.h>
#include <trace/events/nmi.h>
#include <trace/events/sched.h>
#include <trace/events/signal.h>
#include <trace/events/syscalls.h>
#include <trace/events/task.h>
#include <trace/events/timer.h>
#include <trace/events/workqueue.h>
#include <asm/trace/exceptions.h>

#include "lkst_internal.h"

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

/* KT_NARGS_PROCESS_CONTEXTSWITCH = 3, ...: the catalogue's argument counts */
#define KT_NARGS_(id, mn, cat, sys, tp, n, args, prim) KT_NARGS_##mn = (n),
enum { KTRACE_LKST_EVENTS(KT_NARGS_) };
#undef KT_NARGS_

#define KT_EV_(id_, mn, cat, sys, tp, n, args_, prim) \
	{ .id = (id_), .nargs = (n), .primary = (prim), .name = #mn, .category = #cat, \
	  .system = sys, .tp_name = tp, .args = args_ },
struct kt_lkst_ev kt_lkst_events[] = { KTRACE_LKST_EVENTS(KT_EV_) };
#undef KT_EV_
const unsigned int kt_lkst_nevents = ARRAY_SIZE(kt_lkst_events);

static struct kt_lkst_ev *kt_by_id[KTRACE_LKST_MAX_ID];

/**
 * kt_lkst_ev_by_id() - the catalogue entry of event type @id, or NULL.
 */
struct kt_lkst_ev *kt_lkst_ev_by_id(unsigned int id)
{
	return id < KTRACE_LKST_MAX_ID ? READ_ONCE(kt_by_id[id]) : NULL;
}

/**
 * kt_lkst_ev_set() - enter (or with @e NULL remove) event @id: the hooks
 * (lkst_hooks.c) come and go.  Context: kt_lkst_lock held.
 */
void kt_lkst_ev_set(unsigned int id, struct kt_lkst_ev *e)
{
	if (id < KTRACE_LKST_MAX_ID)
		WRITE_ONCE(kt_by_id[id], e);
}

/**
 * kt_lkst_ev_by_name() - the entry whose mnemonic is @name (any case).
 */
struct kt_lkst_ev *kt_lkst_ev_by_name(const char *name)
{
	struct kt_lkst_ev *e;
	unsigned int i;

	kt_lkst_for_each_ev(e, i)
		if (!strcasecmp(e->name, name))
			return e;
	return NULL;
}

const char *ktrace_lkst_event_name(unsigned int id)
{
	struct kt_lkst_ev *e = kt_lkst_ev_by_id(id);

	return e ? e->name : NULL;
}
EXPORT_SYMBOL_GPL(ktrace_lkst_event_name);

/** kt_lkst_ev_available() - the event has a tracepoint and a probe here. */
bool kt_lkst_ev_available(const struct kt_lkst_ev *e)
{
	return e->hook || e->enable || (e->tp && e->probe);
}

/**
 * kt_lkst_ev_reason() - why @e is unavailable, for the `unavailable`
 * metadata line and the events file (@buf of @len bytes).
 */
const char *kt_lkst_ev_reason(const struct kt_lkst_ev *e, char *buf, size_t len)
{
	if (e->how && !e->enable)
		snprintf(buf, len, "%s", e->how);
	else if (e->enable)
		snprintf(buf, len, "available");
	else if (!e->tp_name[0])
		snprintf(buf, len, "no tracepoint for this hook in Linux");
	else if (!e->tp)
		snprintf(buf, len, "no tracepoint %s:%s in this kernel", e->system, e->tp_name);
	else if (!e->probe)
		snprintf(buf, len, "no probe for %s:%s in this module", e->system, e->tp_name);
	else
		snprintf(buf, len, "available");
	return buf;
}

/* ------------------------------------------------------------------ */
/* Probe helpers                                                       */
/* ------------------------------------------------------------------ */

#define KT_S(x) ((u64)(s64)(x)) /* signed argument, sign-extended */
#define KT_U(x) ((u64)(x))      /* unsigned argument, zero-extended */


/* A kernel address becomes 0: traces show nothing of the kernel's layout. */
static __always_inline u64 kt_user_addr(unsigned long a)
{
	return a < TASK_SIZE_MAX ? a : 0;
}


/*
 * KT_EMIT(MNEMONIC, args...) - the body of a probe: look up the handler,
 * and unless it is NOTHING evaluate the arguments (only then: they may
 * dereference the tracepoint's pointers) and dispatch.  The number of
 * arguments must be the catalogue's (checked at compile time).
 */
#define KT_EMIT(mn, ...)							\
	do {									\
		u8 h_ = kt_handler_for(KTRACE_LKST_##mn);			\
		struct ktrace_kevent ev_;					\
									\
		BUILD_BUG_ON(ARRAY_SIZE(((u64[]){ __VA_ARGS__ })) !=		\
			     KT_NARGS_##mn);					\
		if (h_ == KTRACE_LKST_HANDLER_NOTHING)				\
			break;							\
		{								\
			const u64 a_[] = { __VA_ARGS__ };			\
									\
			memcpy(&ev_.w[1], a_, sizeof(a_));			\
		}								\
		ev_.id = KTRACE_LKST_##mn;					\
		ev_.nargs = KT_NARGS_##mn;					\
		ev_.w[0] = kt_self();						\
		kt_lkst_dispatch(h_, &ev_);					\
	} while (0)

/* The same for an event without arguments. */
#define KT_EMIT0(mn)								\
	do {									\
		u8 h_ = kt_handler_for(KTRACE_LKST_##mn);			\
		struct ktrace_kevent ev_;					\
									\
		BUILD_BUG_ON(KT_NARGS_##mn != 0);				\
		if (h_ == KTRACE_LKST_HANDLER_NOTHING)				\
			break;							\
		ev_.id = KTRACE_LKST_##mn;					\
		ev_.nargs = 0;							\
		ev_.w[0] = kt_self();						\
		kt_lkst_dispatch(h_, &ev_);					\
	} while (0)

/* prev_state as sched_switch's TP_fast_assign reports it (6.1) */
static __always_inline unsigned int kt_switch_state(bool preempt, unsigned int prev_state,
						    struct task_struct *p)
{
	unsigned int state;

	if (preempt)
		return TASK_REPORT_MAX;
	state = __task_state_index(prev_state, p->exit_state);
	return state ? (1 << (state - 1)) : state;
}

/* signal errno and code, as TP_STORE_SIGINFO does */
static __always_inline int kt_si_errno(struct kernel_siginfo *info)
{
	if (info == SEND_SIG_NOINFO || info == SEND_SIG_PRIV)
		return 0;
	return info->si_errno;
}

static __always_inline int kt_si_code(struct kernel_siginfo *info)
{
	if (info == SEND_SIG_NOINFO)
		return SI_USER;
	if (info == SEND_SIG_PRIV)
		return SI_KERNEL;
	return info->si_code;
}

static __always_inline u64 kt_rq_dev(struct request *rq)
{
	return rq->q->disk ? KT_U(disk_devt(rq->q->disk)) : 0;
}

/* ------------------------------------------------------------------ */
/* The probes (TP_PROTO of Linux 6.1)                                  */
/* ------------------------------------------------------------------ */

/* process management */

static void kt_p_sched_switch(void *data, bool preempt, struct task_struct *prev,
			      struct task_struct *next, unsigned int prev_state)
{
	KT_EMIT(PROCESS_CONTEXTSWITCH, KT_S(prev->pid), KT_S(next->pid),
		KT_U(kt_switch_state(preempt, prev_state, prev)));
}

/*
 * PROCESS_COMM (lkst.h): name @p unless this CPU named the same pid with
 * the same comm in its current sub-buffer.  The names seen are a small
 * direct-mapped table per CPU, emptied when the sub-buffer changes; a
 * collision only names a task once more.  The comm is copied as the
 * kernel's sched_switch event does (no task_lock in the scheduler).
 */
#define KT_COMM_SLOTS 64
struct kt_comm_seen {
	u64 seq;
	u32 pid[KT_COMM_SLOTS];
	u32 sum[KT_COMM_SLOTS];
};
static DEFINE_PER_CPU(struct kt_comm_seen, kt_comm_seen);

static __always_inline void kt_name_task(struct kt_comm_seen *seen, struct task_struct *p)
{
	u64 w[2] = { 0, 0 };
	unsigned int slot = p->pid % KT_COMM_SLOTS;
	u32 sum;

	if (!p->pid) /* the idle task */
		return;
	memcpy(w, p->comm, min(sizeof(w), sizeof(p->comm)));
	sum = (u32)(w[0] ^ (w[0] >> 32) ^ w[1] ^ (w[1] >> 32)) | 1;
	if (seen->pid[slot] == p->pid && seen->sum[slot] == sum)
		return;
	seen->pid[slot] = p->pid;
	seen->sum[slot] = sum;
	KT_EMIT(PROCESS_COMM, KT_S(p->pid), KT_S(p->tgid), w[0], w[1]);
}

static void kt_p_task_comm(void *data, bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state)
{
	struct kt_comm_seen *seen = this_cpu_ptr(&kt_comm_seen);
	struct trace_info *t = READ_ONCE(kt_lkst_chan);
	u64 seq = t ? kt_subbuf_seq(t) : U64_MAX;

	if (seen->seq != seq) {
		memset(seen, 0, sizeof(*seen));
		seen->seq = seq;
	}
	kt_name_task(seen, prev);
	kt_name_task(seen, next);
}

static void kt_p_sched_wakeup(void *data, struct task_struct *p)
{
	KT_EMIT(PROCESS_WAKEUP, KT_S(p->pid), KT_U(task_cpu(p)));
}

static void kt_p_signal_generate(void *data, int sig, struct kernel_siginfo *info,
				 struct task_struct *task, int group, int result)
{
	KT_EMIT(PROCESS_SIGSEND, KT_S(sig), KT_S(task->pid), KT_S(result));
}

static void kt_p_task_newtask(void *data, struct task_struct *task, unsigned long clone_flags)
{
	KT_EMIT(PROCESS_LTHREADGEN, KT_S(task->pid), KT_U(clone_flags));
}

static void kt_p_sched_process_fork(void *data, struct task_struct *parent,
				    struct task_struct *child)
{
	KT_EMIT(PROCESS_FORK, KT_S(parent->pid), KT_S(child->pid));
}

static void kt_p_sched_process_exec(void *data, struct task_struct *p, pid_t old_pid,
				    struct linux_binprm *bprm)
{
	KT_EMIT(PROCESS_EXEC, KT_S(p->pid), KT_S(old_pid));
}

static void kt_p_sched_process_exit(void *data, struct task_struct *p)
{
	KT_EMIT(PROCESS_EXIT, KT_S(p->pid), KT_S(p->prio));
}

static void kt_p_sched_wakeup_new(void *data, struct task_struct *p)
{
	KT_EMIT(PROCESS_WAKEUP_NEW, KT_S(p->pid), KT_U(task_cpu(p)));
}

static void kt_p_signal_deliver(void *data, int sig, struct kernel_siginfo *info,
				struct k_sigaction *ka)
{
	KT_EMIT(PROCESS_SIGDELIVER, KT_S(sig), KT_S(kt_si_errno(info)), KT_S(kt_si_code(info)));
}

/* interrupts */

static void kt_p_irq_handler_entry(void *data, int irq, struct irqaction *action)
{
	KT_EMIT(INT_HARDWARE_ENTRY, KT_S(irq));
}

static void kt_p_irq_handler_exit(void *data, int irq, struct irqaction *action, int ret)
{
	KT_EMIT(INT_HARDWARE_EXIT, KT_S(irq), KT_S(ret));
}

/* tasklet_hi_entry/exit: gone since 6.0 (tasklet_entry/exit cover both) */

static void kt_p_tasklet_entry(void *data, struct tasklet_struct *t, void *func)
{
	KT_EMIT0(INT_TASKLET_ENTRY);
}

static void kt_p_tasklet_exit(void *data, struct tasklet_struct *t, void *func)
{
	KT_EMIT0(INT_TASKLET_EXIT);
}

static void kt_p_softirq_entry(void *data, unsigned int vec_nr)
{
	KT_EMIT(INT_SOFTIRQ_ENTRY, KT_U(vec_nr));
}

static void kt_p_softirq_exit(void *data, unsigned int vec_nr)
{
	KT_EMIT(INT_SOFTIRQ_EXIT, KT_U(vec_nr));
}

static void kt_p_softirq_raise(void *data, unsigned int vec_nr)
{
	KT_EMIT(INT_SOFTIRQ_RAISE, KT_U(vec_nr));
}

/* ipi_entry/exit exist on ARM only; the probes are here for such kernels. */
static void kt_p_ipi_entry(void *data, const char *reason)
{
	KT_EMIT0(INT_IPI_ENTRY);
}

static void kt_p_ipi_exit(void *data, const char *reason)
{
	KT_EMIT0(INT_IPI_EXIT);
}

/* exceptions */

static void kt_p_page_fault_user(void *data, unsigned long address, struct pt_regs *regs,
				 unsigned long error_code)
{
	KT_EMIT(EXCEPTION_PAGEFAULT_USER, kt_user_addr(address), kt_user_addr(regs->ip),
		KT_U(error_code));
}

static void kt_p_page_fault_kernel(void *data, unsigned long address, struct pt_regs *regs,
				   unsigned long error_code)
{
	KT_EMIT(EXCEPTION_PAGEFAULT_KERNEL, kt_user_addr(address), kt_user_addr(regs->ip),
		KT_U(error_code));
}

static void kt_p_nmi_handler(void *data, void *handler, s64 delta_ns, int handled)
{
	KT_EMIT(EXCEPTION_NMI, KT_S(delta_ns), KT_S(handled));
}

static void kt_p_mce_record(void *data, struct mce *m)
{
	KT_EMIT(EXCEPTION_MCE, KT_U(m->mcgstatus), KT_U(m->status));
}

/* system calls */

static void kt_p_sys_enter(void *data, struct pt_regs *regs, long id)
{
	unsigned long args[6];

	/* only when recorded: syscall_get_arguments() reads six registers */
	if (kt_handler_for(KTRACE_LKST_SYSCALL_ENTRY) == KTRACE_LKST_HANDLER_NOTHING)
		return;
	syscall_get_arguments(current, regs, args);
	KT_EMIT(SYSCALL_ENTRY, KT_S(id), KT_U(args[0]), KT_U(args[1]), KT_U(args[2]));
}

static void kt_p_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	KT_EMIT(SYSCALL_EXIT, KT_S(syscall_get_nr(current, regs)), KT_S(ret));
}

/* memory management */

static void kt_p_mm_page_alloc(void *data, struct page *page, unsigned int order,
			       gfp_t gfp_flags, int migratetype)
{
	KT_EMIT(MEM_PAGE_ALLOC, page ? KT_U(page_to_pfn(page)) : KT_U(-1UL), KT_U(order),
		KT_U((__force unsigned long)gfp_flags));
}

static void kt_p_mm_page_free(void *data, struct page *page, unsigned int order)
{
	KT_EMIT(MEM_PAGE_FREE, KT_U(page_to_pfn(page)), KT_U(order));
}

static void kt_p_kmalloc(void *data, unsigned long call_site, const void *ptr, size_t bytes_req,
			 size_t bytes_alloc, gfp_t gfp_flags, int node)
{
	KT_EMIT(MEM_KMALLOC, KT_U(bytes_req), KT_U(bytes_alloc),
		KT_U((__force unsigned long)gfp_flags));
}

static void kt_p_kfree(void *data, unsigned long call_site, const void *ptr)
{
	KT_EMIT0(MEM_KFREE);
}

static void kt_p_kmem_cache_alloc(void *data, unsigned long call_site, const void *ptr,
				  struct kmem_cache *s, gfp_t gfp_flags, int node)
{
	KT_EMIT(MEM_CACHE_ALLOC, KT_U(kmem_cache_size(s)), KT_U(kmem_cache_size(s)),
		KT_U((__force unsigned long)gfp_flags));
}

static void kt_p_kmem_cache_free(void *data, unsigned long call_site, const void *ptr,
				 const struct kmem_cache *s)
{
	KT_EMIT0(MEM_CACHE_FREE);
}

/* network */

static void kt_p_net_dev_xmit(void *data, struct sk_buff *skb, int rc, struct net_device *dev,
			      unsigned int skb_len)
{
	KT_EMIT(NET_DEV_XMIT, KT_U(skb_len), KT_S(rc));
}

static void kt_p_netif_receive_skb(void *data, struct sk_buff *skb)
{
	KT_EMIT(NET_RECEIVE_SKB, KT_U(skb->len));
}

/* locks */

/*
 * A lock's id in a trace: a keyed hash of its address (lkst.h: no kernel
 * address in a trace), the key random, drawn when the first probe is
 * registered (process context), so the same lock has the same id for the
 * module's lifetime.
 */
static siphash_key_t kt_lock_key;
static bool kt_lock_key_set;

static __always_inline u64 kt_lock_id(const void *lock)
{
	return siphash_1u64((u64)(unsigned long)lock, &kt_lock_key);
}

static void kt_p_contention_begin(void *data, void *lock, unsigned int flags)
{
	KT_EMIT(LOCK_CONTENTION_BEGIN, KT_U(flags), kt_lock_id(lock));
}

static void kt_p_contention_end(void *data, void *lock, int ret)
{
	KT_EMIT(LOCK_CONTENTION_END, KT_S(ret), kt_lock_id(lock));
}

/* timers */

static void kt_p_timer_expire_entry(void *data, struct timer_list *timer, unsigned long baseclk)
{
	KT_EMIT(TIMER_EXPIRE_ENTRY, KT_U(baseclk));
}

static void kt_p_timer_expire_exit(void *data, struct timer_list *timer)
{
	KT_EMIT0(TIMER_EXPIRE_EXIT);
}

static void kt_p_hrtimer_expire_entry(void *data, struct hrtimer *hrtimer, ktime_t *now)
{
	KT_EMIT(HRTIMER_EXPIRE_ENTRY, KT_S(*now));
}

static void kt_p_hrtimer_expire_exit(void *data, struct hrtimer *hrtimer)
{
	KT_EMIT0(HRTIMER_EXPIRE_EXIT);
}

/* workqueues */

static void kt_p_workqueue_execute_start(void *data, struct work_struct *work)
{
	KT_EMIT0(WORKQUEUE_EXECUTE_START);
}

static void kt_p_workqueue_execute_end(void *data, struct work_struct *work,
				       work_func_t function)
{
	KT_EMIT0(WORKQUEUE_EXECUTE_END);
}

/* block I/O */

static void kt_p_block_rq_issue(void *data, struct request *rq)
{
	KT_EMIT(BLOCK_RQ_ISSUE, kt_rq_dev(rq), KT_U(blk_rq_trace_sector(rq)),
		KT_U(blk_rq_trace_nr_sectors(rq)), KT_U(blk_rq_bytes(rq)));
}

static void kt_p_block_rq_complete(void *data, struct request *rq, blk_status_t error,
				   unsigned int nr_bytes)
{
	KT_EMIT(BLOCK_RQ_COMPLETE, kt_rq_dev(rq), KT_U(blk_rq_pos(rq)), KT_U(nr_bytes >> 9),
		KT_S(blk_status_to_errno(error)));
}

/* ------------------------------------------------------------------ */
/* Binding probes to events                                            */
/* ------------------------------------------------------------------ */

/*
 * Every probe, with its event and the tracepoint it is written for (which
 * must be the catalogue's: checked at load).
 */
static const struct {
	u16 id;
	const char *tp_name;
	void *probe;
} kt_probes[] = {
#define KT_PROBE(mn, tp) { KTRACE_LKST_##mn, #tp, (void *)kt_p_##tp }
	KT_PROBE(PROCESS_CONTEXTSWITCH, sched_switch),
	KT_PROBE(PROCESS_WAKEUP, sched_wakeup),
	KT_PROBE(PROCESS_SIGSEND, signal_generate),
	KT_PROBE(PROCESS_LTHREADGEN, task_newtask),
	KT_PROBE(PROCESS_FORK, sched_process_fork),
	KT_PROBE(PROCESS_EXEC, sched_process_exec),
	KT_PROBE(PROCESS_EXIT, sched_process_exit),
	KT_PROBE(PROCESS_WAKEUP_NEW, sched_wakeup_new),
	KT_PROBE(PROCESS_SIGDELIVER, signal_deliver),
	{ KTRACE_LKST_PROCESS_COMM, "sched_switch", (void *)kt_p_task_comm }, /* a second probe on it */
	KT_PROBE(INT_HARDWARE_ENTRY, irq_handler_entry),
	KT_PROBE(INT_HARDWARE_EXIT, irq_handler_exit),
	KT_PROBE(INT_TASKLET_ENTRY, tasklet_entry),
	KT_PROBE(INT_TASKLET_EXIT, tasklet_exit),
	KT_PROBE(INT_SOFTIRQ_ENTRY, softirq_entry),
	KT_PROBE(INT_SOFTIRQ_EXIT, softirq_exit),
	KT_PROBE(INT_SOFTIRQ_RAISE, softirq_raise),
	KT_PROBE(INT_IPI_ENTRY, ipi_entry),
	KT_PROBE(INT_IPI_EXIT, ipi_exit),
	KT_PROBE(EXCEPTION_PAGEFAULT_USER, page_fault_user),
	KT_PROBE(EXCEPTION_PAGEFAULT_KERNEL, page_fault_kernel),
	KT_PROBE(EXCEPTION_NMI, nmi_handler),
	KT_PROBE(EXCEPTION_MCE, mce_record),
	KT_PROBE(SYSCALL_ENTRY, sys_enter),
	KT_PROBE(SYSCALL_EXIT, sys_exit),
	KT_PROBE(MEM_PAGE_ALLOC, mm_page_alloc),
	KT_PROBE(MEM_PAGE_FREE, mm_page_free),
	KT_PROBE(MEM_KMALLOC, kmalloc),
	KT_PROBE(MEM_KFREE, kfree),
	KT_PROBE(MEM_CACHE_ALLOC, kmem_cache_alloc),
	KT_PROBE(MEM_CACHE_FREE, kmem_cache_free),
	KT_PROBE(NET_DEV_XMIT, net_dev_xmit),
	KT_PROBE(NET_RECEIVE_SKB, netif_receive_skb),
	KT_PROBE(LOCK_CONTENTION_BEGIN, contention_begin),
	KT_PROBE(LOCK_CONTENTION_END, contention_end),
	KT_PROBE(TIMER_EXPIRE_ENTRY, timer_expire_entry),
	KT_PROBE(TIMER_EXPIRE_EXIT, timer_expire_exit),
	KT_PROBE(HRTIMER_EXPIRE_ENTRY, hrtimer_expire_entry),
	KT_PROBE(HRTIMER_EXPIRE_EXIT, hrtimer_expire_exit),
	KT_PROBE(WORKQUEUE_EXECUTE_START, workqueue_execute_start),
	KT_PROBE(WORKQUEUE_EXECUTE_END, workqueue_execute_end),
	KT_PROBE(BLOCK_RQ_ISSUE, block_rq_issue),
	KT_PROBE(BLOCK_RQ_COMPLETE, block_rq_complete),
#undef KT_PROBE
};

/*
 * The compile-time check: check_trace_callback_type_NAME() (declared by
 * the kernel's DECLARE_TRACE for each tracepoint) only takes a function
 * of the tracepoint's exact prototype.  Nothing is generated.
 */
static void __maybe_unused kt_lkst_check_types(void)
{
#define KT_CHECK(tp) check_trace_callback_type_##tp(kt_p_##tp)
	KT_CHECK(sched_switch);
	check_trace_callback_type_sched_switch(kt_p_task_comm);
	KT_CHECK(sched_wakeup);
	KT_CHECK(signal_generate);
	KT_CHECK(task_newtask);
	KT_CHECK(sched_process_fork);
	KT_CHECK(sched_process_exec);
	KT_CHECK(sched_process_exit);
	KT_CHECK(sched_wakeup_new);
	KT_CHECK(signal_deliver);
	KT_CHECK(irq_handler_entry);
	KT_CHECK(irq_handler_exit);
	KT_CHECK(tasklet_entry);
	KT_CHECK(tasklet_exit);
	KT_CHECK(softirq_entry);
	KT_CHECK(softirq_exit);
	KT_CHECK(softirq_raise);
	KT_CHECK(ipi_entry);
	KT_CHECK(ipi_exit);
	KT_CHECK(page_fault_user);
	KT_CHECK(page_fault_kernel);
	KT_CHECK(nmi_handler);
	KT_CHECK(mce_record);
	KT_CHECK(sys_enter);
	KT_CHECK(sys_exit);
	KT_CHECK(mm_page_alloc);
	KT_CHECK(mm_page_free);
	KT_CHECK(kmalloc);
	KT_CHECK(kfree);
	KT_CHECK(kmem_cache_alloc);
	KT_CHECK(kmem_cache_free);
	KT_CHECK(net_dev_xmit);
	KT_CHECK(netif_receive_skb);
	KT_CHECK(contention_begin);
	KT_CHECK(contention_end);
	KT_CHECK(timer_expire_entry);
	KT_CHECK(timer_expire_exit);
	KT_CHECK(hrtimer_expire_entry);
	KT_CHECK(hrtimer_expire_exit);
	KT_CHECK(workqueue_execute_start);
	KT_CHECK(workqueue_execute_end);
	KT_CHECK(block_rq_issue);
	KT_CHECK(block_rq_complete);
#undef KT_CHECK
}

static void kt_lkst_match_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < kt_lkst_nevents; i++) {
		struct kt_lkst_ev *e = &kt_lkst_events[i];

		if (e->tp_name[0] && !strcmp(e->tp_name, tp->name))
			e->tp = tp;
	}
}

/**
 * kt_lkst_find_tracepoints() - index the catalogue, attach the probes and
 * find each event's tracepoint among the kernel's built-in ones.  Called
 * once at load, before anything can register a probe.
 */
void kt_lkst_find_tracepoints(void)
{
	unsigned int i, j;

	for (i = 0; i < kt_lkst_nevents; i++) {
		struct kt_lkst_ev *e = &kt_lkst_events[i];

		kt_by_id[e->id] = e;
		for (j = 0; j < ARRAY_SIZE(kt_probes); j++)
			if (kt_probes[j].id == e->id && !strcmp(kt_probes[j].tp_name, e->tp_name))
				e->probe = kt_probes[j].probe;
	}
	for_each_kernel_tracepoint(kt_lkst_match_tp, NULL);
}

/**
 * kt_lkst_probe_register() - attach @e's probe to its tracepoint.
 * Return: 0, -ENODEV (unavailable), or tracepoint_probe_register()'s
 * error (-ENOMEM).  Context: process, kt_lkst_lock held.
 */
int kt_lkst_probe_register(struct kt_lkst_ev *e)
{
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	if (e->registered)
		return 0;
	if (!kt_lkst_ev_available(e))
		return -ENODEV;
	if (!kt_lock_key_set) {
		get_random_bytes(&kt_lock_key, sizeof(kt_lock_key));
		kt_lock_key_set = true;
	}
	if (e->hook) {
		ret = kt_lkst_hook_enable(e);
		if (ret)
			return ret;
		e->registered = true;
		return 0;
	}
	if (e->enable) {
		ret = e->enable(e);
		if (ret)
			return ret;
		e->registered = true;
		return 0;
	}
	ret = tracepoint_probe_register(e->tp, e->probe, NULL);
	if (ret)
		return ret;
	e->registered = true;
	return 0;
}

/**
 * kt_lkst_probe_unregister() - detach @e's probe.  The caller waits with
 * tracepoint_synchronize_unregister() before relying on it not running.
 * Context: process, kt_lkst_lock held.
 */
void kt_lkst_probe_unregister(struct kt_lkst_ev *e)
{
	lockdep_assert_held(&kt_lkst_lock);
	if (!e->registered)
		return;
	e->registered = false;
	if (e->hook) {
		kt_lkst_hook_disable(e);
		return;
	}
	if (e->enable) {
		e->disable(e);
		return;
	}
	/* Cannot fail since 5.11: on -ENOMEM the probe becomes a stub. */
	tracepoint_probe_unregister(e->tp, e->probe, NULL);
}

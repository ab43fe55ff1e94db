// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_exc.c - LKST's exception entry and exit events (EXCEPTION_ENTRY
 * 0x20 "vector,error_code,ip", EXCEPTION_EXIT 0x21 "vector"; the seed's
 * exception hooks) on x86-64, where no tracepoint covers the traps and the
 * IDT entry functions (exc_*) are noinstr: neither kprobes nor ftrace may
 * touch them.  The catalogue names them system "ktrace" (provided by this
 * module, no kernel tracepoint); docs/KMOD-DESIGN.md "Exceptions" lists what
 * is covered on Debian's 6.1.
 *
 * Entry, three sources, enabled together:
 *   - the die notifier chain (register_die_notifier()): the trap handlers
 *     call notify_die() before acting, with the trap number; DIE_TRAP
 *     (do_error_trap: divide error 0, overflow 4, bounds 5, invalid opcode
 *     6, coprocessor segment overrun 9, invalid TSS 10, segment not present
 *     11, stack segment 12, alignment check 17; math_error in the kernel),
 *     DIE_INT3 (int3, vector 3, user and kernel; not the kernel's own
 *     breakpoints: kprobes and text_poke claim theirs first, and uprobes'
 *     notifier stops the chain for a uprobe's), DIE_DEBUG (vector 1, error code
 *     DR6: kt_exc_err()),
 *     DIE_GPF (general protection in the kernel: 6.1 sends a user-mode #GP
 *     to gp_user_force_sig_segv() without the chain, so those are missed);
 *     DIE_NMI and the oops notifications are left out (EXCEPTION_NMI covers
 *     NMIs);
 *   - the page fault tracepoints exceptions:page_fault_user and
 *     page_fault_kernel (vector 14, error code, ip; their own events
 *     EXCEPTION_PAGEFAULT_USER/KERNEL carry the address).
 * Exit: kretprobes on the out-of-line trap handlers this kernel has
 * (kt_exc_exits[]: do_int3_user, do_error_trap, math_error), registered
 * disabled at load when register_kretprobe() accepts them (a function
 * inlined into its noinstr caller, or on the kprobe blacklist, is
 * refused), enabled while EXCEPTION_EXIT is armed.  Page faults have no
 * exit: every function between exc_page_fault and the return is noinstr,
 * NOKPROBE or shared with non-fault callers (handle_mm_fault: GUP).  With
 * none registered EXCEPTION_EXIT is unavailable, its reason saying so.
 *
 * Context: the notifier runs in the trap's context (interrupts possibly
 * off, maybe in the kernel), the kretprobe handlers in a kprobe's; both
 * disable preemption around kt_handler_for() and the dispatch, as a
 * tracepoint probe has it.  Enabling and disabling: process context,
 * kt_lkst_lock held (kt_lkst_probe_register/unregister).
 */
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <asm/trapnr.h>
#include <asm/trace/exceptions.h>

#include "lkst_internal.h"

/* A kernel address becomes 0: traces show nothing of the kernel's layout. */
static __always_inline u64 kt_exc_uaddr(unsigned long a)
{
	return a < TASK_SIZE_MAX ? a : 0;
}

/*
 * kt_exc_err() - the error code of die notification @val: DR6 for DIE_DEBUG,
 * else @err, and never a kernel address.  Since 5.10 notify_debug() passes
 * DIE_DEBUG's err as a pointer to the trap handler's copy of DR6 (bits
 * flipped to positive polarity: DR_STEP 0x4000 for a single step, DR_TRAP0..3
 * for a hardware breakpoint), which later notifiers may clear bits of; our
 * notifier runs first (priority INT_MAX) and reads it without faulting
 * (get_kernel_nofault(); 0 if the read fails).  Context: the trap's.
 */
static u64 kt_exc_err(unsigned long val, long err)
{
	unsigned long dr6;

	if (val == DIE_DEBUG && (unsigned long)err >= TASK_SIZE_MAX)
		return get_kernel_nofault(dr6, (unsigned long *)err) ? 0 : dr6;
	return kt_exc_uaddr(err);
}

/* Emit event @id with @nargs of @a0..@a2 if the current maskset wants it. */
static void kt_exc_emit(unsigned int id, unsigned int nargs, u64 a0, u64 a1, u64 a2)
{
	struct ktrace_kevent ev;
	u8 h;

	preempt_disable_notrace();
	h = kt_handler_for(id);
	if (h != KTRACE_LKST_HANDLER_NOTHING) {
		ev.id = id;
		ev.nargs = nargs;
		ev.w[0] = kt_self();
		ev.w[1] = a0;
		ev.w[2] = a1;
		ev.w[3] = a2;
		kt_lkst_dispatch(h, &ev);
	}
	preempt_enable_notrace();
}

/* ------------------------------------------------------------------ */
/* Entry                                                               */
/* ------------------------------------------------------------------ */

/*
 * kt_exc_die() - the die notifier: EXCEPTION_ENTRY for DIE_TRAP (its
 * trapnr), DIE_INT3 (3), DIE_DEBUG (1), DIE_GPF (13); other notifications
 * are not exceptions of interest.  Context: the trap's (interrupts maybe
 * off, user or kernel mode).  Return: NOTIFY_DONE always (never changes
 * how the trap is handled).
 */
static int kt_exc_die(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *a = data;
	long vec;

	switch (val) {
	case DIE_TRAP:
		vec = a->trapnr;
		break;
	case DIE_INT3:
		vec = X86_TRAP_BP;
		break;
	case DIE_DEBUG:
		vec = X86_TRAP_DB;
		break;
	case DIE_GPF:
		vec = X86_TRAP_GP;
		break;
	default:
		return NOTIFY_DONE;
	}
	kt_exc_emit(KTRACE_LKST_EXCEPTION_ENTRY, 3, (u64)vec, kt_exc_err(val, a->err),
		    a->regs ? kt_exc_uaddr(a->regs->ip) : 0);
	return NOTIFY_DONE;
}
NOKPROBE_SYMBOL(kt_exc_die);

static struct notifier_block kt_exc_nb = {
	.notifier_call = kt_exc_die,
	.priority = INT_MAX, /* before anyone who might stop the chain */
};

/* Page fault tracepoint probes (TP_PROTO of 6.1): EXCEPTION_ENTRY vector 14. */
static void kt_exc_pf_user(void *data, unsigned long address, struct pt_regs *regs,
			   unsigned long error_code)
{
	kt_exc_emit(KTRACE_LKST_EXCEPTION_ENTRY, 3, X86_TRAP_PF, error_code,
		    kt_exc_uaddr(regs->ip));
}

static void kt_exc_pf_kernel(void *data, unsigned long address, struct pt_regs *regs,
			     unsigned long error_code)
{
	kt_exc_emit(KTRACE_LKST_EXCEPTION_ENTRY, 3, X86_TRAP_PF, error_code,
		    kt_exc_uaddr(regs->ip));
}

/* Compile-time check of the probes against the tracepoints' prototypes. */
static void __maybe_unused kt_exc_check_types(void)
{
	check_trace_callback_type_page_fault_user(kt_exc_pf_user);
	check_trace_callback_type_page_fault_kernel(kt_exc_pf_kernel);
}

/* The page fault tracepoints, as lkst_events.c found them (or NULL). */
static struct tracepoint *kt_exc_tp(unsigned int id)
{
	struct kt_lkst_ev *e = kt_lkst_ev_by_id(id);

	return e ? e->tp : NULL;
}

/*
 * kt_exc_entry_enable() - register the die notifier and the two page fault
 * probes.  Context: process, kt_lkst_lock held.  Return: 0 or the first
 * registration's error (what was registered is undone).
 */
static int kt_exc_entry_enable(struct kt_lkst_ev *e)
{
	struct tracepoint *tu = kt_exc_tp(KTRACE_LKST_EXCEPTION_PAGEFAULT_USER);
	struct tracepoint *tk = kt_exc_tp(KTRACE_LKST_EXCEPTION_PAGEFAULT_KERNEL);
	int ret;

	ret = register_die_notifier(&kt_exc_nb);
	if (ret)
		return ret;
	ret = tu ? tracepoint_probe_register(tu, kt_exc_pf_user, NULL) : 0;
	if (ret)
		goto err_die;
	ret = tk ? tracepoint_probe_register(tk, kt_exc_pf_kernel, NULL) : 0;
	if (ret)
		goto err_user;
	return 0;
err_user:
	if (tu)
		tracepoint_probe_unregister(tu, kt_exc_pf_user, NULL);
err_die:
	unregister_die_notifier(&kt_exc_nb);
	return ret;
}

/*
 * kt_exc_entry_disable() - unregister them; unregister_die_notifier()
 * waits for running notifiers, the caller for the tracepoint probes.
 */
static void kt_exc_entry_disable(struct kt_lkst_ev *e)
{
	struct tracepoint *tu = kt_exc_tp(KTRACE_LKST_EXCEPTION_PAGEFAULT_USER);
	struct tracepoint *tk = kt_exc_tp(KTRACE_LKST_EXCEPTION_PAGEFAULT_KERNEL);

	if (tk)
		tracepoint_probe_unregister(tk, kt_exc_pf_kernel, NULL);
	if (tu)
		tracepoint_probe_unregister(tu, kt_exc_pf_user, NULL);
	unregister_die_notifier(&kt_exc_nb); /* synchronize_rcu() */
}

/* ------------------------------------------------------------------ */
/* Exit                                                                */
/* ------------------------------------------------------------------ */

/*
 * The vector at entry, kept in the kretprobe instance: -1 = the fixed
 * vector of the function, else taken from an argument register.
 */
static int kt_exc_ret_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
static int kt_exc_ret(struct kretprobe_instance *ri, struct pt_regs *regs);

struct kt_exc_exit {
	const char *sym;
	int vector;     /* fixed vector, or -1: from @argreg */
	int argreg;     /* 4: %rcx (4th argument), 2: %rsi (2nd) */
	bool ok;        /* registered (disabled until armed) */
	struct kretprobe rp;
};

#define KT_EXC_EXIT(s, v, r)						\
	{ .sym = s, .vector = v, .argreg = r,				\
	  .rp = { .kp.symbol_name = s, .kp.flags = KPROBE_FLAG_DISABLED,	\
		  .entry_handler = kt_exc_ret_entry, .handler = kt_exc_ret,	\
		  .data_size = sizeof(u64), .maxactive = 64 } }

static struct kt_exc_exit kt_exc_exits[] = {
	/* do_int3_user(regs) */
	KT_EXC_EXIT("do_int3_user", X86_TRAP_BP, 0),
	/* do_error_trap(regs, error_code, str, trapnr, signr, sicode, addr) */
	KT_EXC_EXIT("do_error_trap", -1, 4),
	/* math_error(regs, trapnr) */
	KT_EXC_EXIT("math_error", -1, 2),
};

/*
 * kt_exc_ret_entry() - at a trap handler's entry: keep its vector in the
 * instance (fixed, or the trap number argument).  Context: kprobe.
 * Return: 0 (always follow the return).
 */
static int kt_exc_ret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kt_exc_exit *x = container_of(get_kretprobe(ri), struct kt_exc_exit, rp);
	u64 *vec = (u64 *)ri->data;

	if (x->vector >= 0)
		*vec = x->vector;
	else
		*vec = x->argreg == 4 ? (u32)regs->cx : (u32)regs->si;
	return 0;
}
NOKPROBE_SYMBOL(kt_exc_ret_entry);

/* kt_exc_ret() - at its return: EXCEPTION_EXIT with that vector.  Return: 0. */
static int kt_exc_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kt_exc_emit(KTRACE_LKST_EXCEPTION_EXIT, 1, *(u64 *)ri->data, 0, 0);
	return 0;
}
NOKPROBE_SYMBOL(kt_exc_ret);

/* Enable / disable the registered exit kretprobes (kt_lkst_lock held; never fails). */
static int kt_exc_exit_enable(struct kt_lkst_ev *e)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kt_exc_exits); i++)
		if (kt_exc_exits[i].ok)
			enable_kretprobe(&kt_exc_exits[i].rp);
	return 0;
}

static void kt_exc_exit_disable(struct kt_lkst_ev *e)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kt_exc_exits); i++)
		if (kt_exc_exits[i].ok)
			disable_kretprobe(&kt_exc_exits[i].rp);
}

/* "exits: do_error_trap math_error" for the events' reason */
static char kt_exc_found[96];

/**
 * kt_lkst_exc_init() - attach the exception events to the catalogue:
 * EXCEPTION_ENTRY always (the die chain exists on every x86 kernel),
 * EXCEPTION_EXIT if at least one kretprobe of kt_exc_exits[] registers.
 * Context: module init, after kt_lkst_find_tracepoints() (the page fault
 * tracepoints), before any arming.  Never fails: what is missing stays
 * unavailable.
 */
void kt_lkst_exc_init(void)
{
	struct kt_lkst_ev *en = kt_lkst_ev_by_id(KTRACE_LKST_EXCEPTION_ENTRY);
	struct kt_lkst_ev *ex = kt_lkst_ev_by_id(KTRACE_LKST_EXCEPTION_EXIT);
	size_t n = 0;
	unsigned int i;

	if (en) {
		en->enable = kt_exc_entry_enable;
		en->disable = kt_exc_entry_disable;
	}
	n = scnprintf(kt_exc_found, sizeof(kt_exc_found), "kretprobes on");
	for (i = 0; i < ARRAY_SIZE(kt_exc_exits); i++) {
		struct kt_exc_exit *x = &kt_exc_exits[i];
		int ret = register_kretprobe(&x->rp);

		x->ok = !ret;
		if (x->ok)
			n += scnprintf(kt_exc_found + n, sizeof(kt_exc_found) - n, " %s", x->sym);
		else
			pr_debug("ktrace: lkst: no exception exit on %s (%d)\n", x->sym, ret);
		if (x->ok && ex) {
			ex->enable = kt_exc_exit_enable;
			ex->disable = kt_exc_exit_disable;
		}
	}
	if (ex)
		ex->how = ex->enable ? kt_exc_found :
			"no probe-able trap handler (do_int3_user, do_error_trap, math_error) in this kernel";
	if (en)
		en->how = "die notifier chain and the page fault tracepoints";
}

/**
 * kt_lkst_exc_exit() - unregister the kretprobes (waits for running
 * handlers).  Context: module exit, every event disarmed.
 */
void kt_lkst_exc_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kt_exc_exits); i++)
		if (kt_exc_exits[i].ok) {
			unregister_kretprobe(&kt_exc_exits[i].rp);
			kt_exc_exits[i].ok = false;
		}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bench/ktrace_bench_mod.c - ktrace_bench.ko: a probe on the sched_switch
 * tracepoint that logs every context switch with ktrace_log2() into
 * ktrace.ko's default channel, the "ktrace" configuration of the kernel
 * benchmark (kmod/bench/run-bench.sh, docs/PERFORMANCE.md).
 *
 * The tracepoint is found by name with for_each_kernel_tracepoint(), as
 * the __tracepoint_* symbols are not exported to modules.  Each event is
 * one LOG2 record (24 bytes): func 2, event 1, u1 = prev pid | next pid
 * << 32, u2 = prev_state.  Not installed; built by `make -C kmod extra`.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "ktrace_kernel.h"

enum { KT_FUNC_sched = 2 };
enum { KT_EVENT_switch = 1 };

static struct tracepoint *ktb_tp;

static void ktb_probe(void *data, bool preempt, struct task_struct *prev,
		      struct task_struct *next, unsigned int prev_state)
{
	ktrace_log2(KT_FUNC_sched, KT_EVENT_switch,
		    (u64)(u32)prev->pid | ((u64)(u32)next->pid << 32), prev_state);
}

static void ktb_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		ktb_tp = tp;
}

static int __init ktb_init(void)
{
	int ret;

	for_each_kernel_tracepoint(ktb_find, NULL);
	if (!ktb_tp)
		return -ENOENT;
	trace_catalog_func(ktrace_default_channel(), KT_FUNC_sched, "sched");
	trace_catalog_event(ktrace_default_channel(), KT_FUNC_sched, KT_EVENT_switch,
			    "sched_switch", "sched", "pids,prev_state", false);
	ret = tracepoint_probe_register(ktb_tp, ktb_probe, NULL);
	return ret;
}

static void __exit ktb_exit(void)
{
	tracepoint_probe_unregister(ktb_tp, ktb_probe, NULL);
	tracepoint_synchronize_unregister();
}

module_init(ktb_init);
module_exit(ktb_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrace benchmark: sched_switch probe feeding ktrace_log2");

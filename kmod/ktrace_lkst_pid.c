// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace_lkst_pid.c - a sample extended event handler for ktrace.ko's LKST
 * tracer (seed 001: "adding extended event handler like device driver").
 *
 * The handler "pid_switch" keeps only the context switches of one task:
 * a PROCESS_CONTEXTSWITCH event whose prev_pid or next_pid is the module
 * parameter `pid` is written to the LKST channel (ktrace_lkst_log(), what
 * DEFAULT does); every other event handed to it is counted and dropped.
 *
 *   insmod ktrace_lkst_pid.ko pid=1234
 *   ktrace lkst read -m 0 | ktrace lkst write -m 4       # null maskset
 *   ktrace lkst config -m 4 PROCESS_CONTEXTSWITCH pid_switch
 *   ktrace lkst set -m 4
 *   ktrace lkst start; ...; ktrace lkst stop
 *
 * Module parameters: pid (0600: may be changed while tracing; 0 keeps
 * nothing), handler_id (0400: the id wanted, 0 = the lowest free one).
 * /sys/module/ktrace_lkst_pid/parameters/kept and skipped (0400) count
 * the events kept and dropped.
 *
 * The handler runs in the scheduler's tracepoint, under the runqueue
 * lock: it only compares, counts with atomics and calls ktrace_lkst_log(),
 * which is all a handler may do there (kmod/ktrace_lkst.h).
 */
#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "ktrace_lkst.h"

static int pid;
module_param(pid, int, 0600);
MODULE_PARM_DESC(pid, "keep the context switches of this pid (0: none)");

static int handler_id;
module_param(handler_id, int, 0400);
MODULE_PARM_DESC(handler_id, "handler id wanted (2..254; 0: the lowest free one)");

static atomic64_t kept, skipped;

static int kp_get_counter(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read((atomic64_t *)kp->arg));
}

static const struct kernel_param_ops kp_counter_ops = {
	.get = kp_get_counter,
};
module_param_cb(kept, &kp_counter_ops, &kept, 0400);
MODULE_PARM_DESC(kept, "context switches of pid written (read-only)");
module_param_cb(skipped, &kp_counter_ops, &skipped, 0400);
MODULE_PARM_DESC(skipped, "events handed to the handler and dropped (read-only)");

static void kp_handle(const struct ktrace_kevent *ev, void *priv)
{
	int want = READ_ONCE(pid);

	if (ev->id == KTRACE_LKST_PROCESS_CONTEXTSWITCH && want > 0 &&
	    ((s64)ev->w[1] == want || (s64)ev->w[2] == want)) {
		atomic64_inc(&kept);
		ktrace_lkst_log(ev);
		return;
	}
	atomic64_inc(&skipped);
}

static struct ktrace_lkst_handler kp_handler = {
	.name = "pid_switch",
	.fn = kp_handle,
};

static int __init kp_init(void)
{
	int ret;

	kp_handler.id = handler_id;
	ret = ktrace_lkst_register_handler(&kp_handler);
	if (ret < 0)
		return ret;
	pr_info("ktrace_lkst_pid: handler pid_switch has id %d, pid %d\n", ret, pid);
	return 0;
}

static void __exit kp_exit(void)
{
	/* disconnects it from every maskset and waits for running calls */
	ktrace_lkst_unregister_handler(&kp_handler);
	pr_info("ktrace_lkst_pid: kept %lld, skipped %lld\n", (long long)atomic64_read(&kept),
		(long long)atomic64_read(&skipped));
}

module_init(kp_init);
module_exit(kp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrace LKST sample handler: keep the context switches of one pid");

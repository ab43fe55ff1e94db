// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace_sample.c - the example of seed 000, as a module: a timer calls
 * ktrace_sample_work() every period_ms milliseconds (softirq context); the
 * function logs an entry event with its start time and an exit event with
 * its duration through ktrace_log2(), into ktrace.ko's default channel.
 *
 *   insmod ktrace.ko && insmod ktrace_sample.ko period_ms=10
 *   echo start > /sys/kernel/debug/ktrace/default/state
 *   ktrace read /sys/kernel/debug/ktrace/default out   # Ctrl-C or stop
 *   ktrace print out     # ktrace_sample_work:entry / :exit lines
 *
 * Events: func KT_FUNC_ktrace_sample_work (named in the catalogue),
 *   KT_EVENT_ENTRY  u1 = start time (ns, CLOCK_MONOTONIC), u2 = call number
 *   KT_EVENT_EXIT   u1 = duration (ns), u2 = checksum of the work (so the
 *                   work is not optimised away)
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include "ktrace_kernel.h"

/* Function ids of this module, klog's KT_FUNC_* enumerator. */
enum { KT_FUNC_ktrace_sample_work = 1 };

static unsigned int period_ms = 10;
module_param(period_ms, uint, 0400);
MODULE_PARM_DESC(period_ms, "timer period in milliseconds (1..10000)");

static struct timer_list kts_timer;
static bool kts_stopping;
static u64 kts_calls;
static u32 kts_data[256];

/* The traced function: a little work whose length varies per call. */
static noinline u64 ktrace_sample_work(u64 call)
{
	u64 start = ktime_get_mono_fast_ns();
	unsigned int i, rounds = 1 + (call % 8);
	u64 sum = 0;

	ktrace_log2(KT_FUNC_ktrace_sample_work, KT_EVENT_ENTRY, start, call);
	while (rounds--)
		for (i = 0; i < ARRAY_SIZE(kts_data); i++)
			sum = sum * 31 + (kts_data[i] ^ (u32)call);
	ktrace_log2(KT_FUNC_ktrace_sample_work, KT_EVENT_EXIT,
		    ktime_get_mono_fast_ns() - start, sum);
	return sum;
}

static void kts_tick(struct timer_list *tl)
{
	ktrace_sample_work(kts_calls++);
	if (!READ_ONCE(kts_stopping))
		mod_timer(&kts_timer, jiffies + msecs_to_jiffies(period_ms));
}

static int __init kts_init(void)
{
	unsigned int i;
	int ret;

	if (period_ms < 1 || period_ms > 10000)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(kts_data); i++)
		kts_data[i] = i * 2654435761u;
	ret = ktrace_catalog_func(KT_FUNC_ktrace_sample_work, "ktrace_sample_work");
	if (ret)
		return ret;
	timer_setup(&kts_timer, kts_tick, 0);
	mod_timer(&kts_timer, jiffies + msecs_to_jiffies(period_ms));
	return 0;
}

static void __exit kts_exit(void)
{
	/* 6.1 has no timer_shutdown_sync(): stop the re-arming first. */
	WRITE_ONCE(kts_stopping, true);
	del_timer_sync(&kts_timer);
}

module_init(kts_init);
module_exit(kts_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrace sample: entry/exit with duration of a timer-driven function");

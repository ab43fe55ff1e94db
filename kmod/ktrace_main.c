// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace_main.c - module setup of ktrace.ko and seed 000's static events.
 *
 * At load the module creates its default channel, debugfs ktrace/default/
 * (stopped; geometry and flags from the module parameters below), which
 * ktrace_log2() and ktrace_log4() write to, as klog's ktrace did into its
 * one relay channel.  `ktrace read [-b SIZE -n N]` resizes it through its
 * buf_size and buf_nr files and copies it out.
 *
 * Module parameters (read-only once loaded, /sys/module/ktrace/parameters,
 * mode 0400):
 *   buf_size  bytes per sub-buffer of the default channel (power of two,
 *             4096..64 MiB; default 65536)
 *   buf_nr    sub-buffers per CPU (2..65536; default 16)
 *   flags     TRACE_* flags of the default channel: 1 global, 2 flight
 *             recorder, 4 state file read-only (default 0)
 */
#include <linux/err.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "ktrace_internal.h"
#include "kft_internal.h"
#include "lkst_internal.h" /* LKST tracer: kt_lkst_init/exit */

static unsigned int buf_size = TRACE_DEFAULT_BUF_SIZE;
module_param(buf_size, uint, 0400);
MODULE_PARM_DESC(buf_size, "default channel: bytes per sub-buffer (power of two)");

static unsigned int buf_nr = TRACE_DEFAULT_BUF_NR;
module_param(buf_nr, uint, 0400);
MODULE_PARM_DESC(buf_nr, "default channel: sub-buffers per CPU");

static unsigned int flags;
module_param(flags, uint, 0400);
MODULE_PARM_DESC(flags, "default channel: 1 global, 2 flight recorder, 4 no state control");

static struct trace_info *kt_default;

struct trace_info *ktrace_default_channel(void)
{
	return kt_default;
}
EXPORT_SYMBOL_GPL(ktrace_default_channel);

void ktrace_log2(u8 func, u8 event, u64 u1, u64 u2)
{
	if (READ_ONCE(kt_default->running))
		trace_log2(kt_default, func, event, u1, u2);
}
EXPORT_SYMBOL_GPL(ktrace_log2);

void ktrace_log4(u8 func, u8 event, u32 u1, u32 u2, u32 u3, u32 u4)
{
	if (READ_ONCE(kt_default->running))
		trace_log4(kt_default, func, event, u1, u2, u3, u4);
}
EXPORT_SYMBOL_GPL(ktrace_log4);

int ktrace_catalog_func(u8 func, const char *name)
{
	return trace_catalog_func(kt_default, func, name);
}
EXPORT_SYMBOL_GPL(ktrace_catalog_func);

static int __init kt_init(void)
{
	struct trace_info *t;
	int ret;

	t = trace_setup("ktrace", "default", buf_size, buf_nr, flags);
	if (IS_ERR(t)) {
		pr_err("ktrace: cannot create ktrace/default (buf_size %u buf_nr %u flags %u): %ld\n",
		       buf_size, buf_nr, flags, PTR_ERR(t));
		return PTR_ERR(t);
	}
	kt_default = t;

	/* LKST: kernel events, handlers, masksets (lkst_*.c) */
	ret = kt_lkst_init();
	if (ret) {
		trace_cleanup(kt_default);
		kt_default = NULL;
		return ret;
	}

	/* KFT: /proc/kft, /proc/kft_data, /proc/kft_callsites (kft_*.c) */
	ret = kt_kft_init();
	if (ret) {
		kt_lkst_exit();
		trace_cleanup(kt_default);
		kt_default = NULL;
		return ret;
	}

	/* Crash extraction: crash_mem= (ktrace_crash.c), after the channels */
	ret = kt_crash_init();
	if (ret) {
		kt_kft_exit();
		kt_lkst_exit();
		trace_cleanup(kt_default);
		kt_default = NULL;
		return ret;
	}
	return 0;
}

static void __exit kt_exit(void)
{
	kt_kft_exit();  /* KFT: /proc files removed, probes off */
	kt_lkst_exit(); /* LKST: probes off, ktrace/lkst removed */
	trace_cleanup(kt_default);
	kt_default = NULL;
	kt_crash_exit(); /* after the channels: they no longer write */
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ktrace authors");
MODULE_DESCRIPTION("ktrace: relay channels (trace_setup API) and static events ktrace_log2/4");
MODULE_VERSION("0.1.0");

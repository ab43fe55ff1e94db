// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_main.c - setup of ktrace.ko's LKST tracer (seed 001): the LKST
 * channel debugfs ktrace/lkst/ (per-CPU relay buffers, the event buffers
 * of LKST), the event table, the system masksets and the control files
 * (user-placed hooks: lkst_hooks.c).
 *
 * Module parameters (0400, fixed at load), for the LKST channel:
 *   lkst_buf_size  bytes per sub-buffer (power of two; default 262144)
 *   lkst_buf_nr    sub-buffers per CPU (default 16)
 *   lkst_flags     TRACE_* flags: 2 = flight recorder, LKST's ring
 *                  buffers (default 0: discard when full, for `ktrace read`)
 *
 * Tracing starts and stops with the channel's state file (`echo start >
 * /sys/kernel/debug/ktrace/lkst/state`, `ktrace lkst start`); probes are
 * attached only while it runs (lkst_maskset.c).
 */
#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include "lkst_internal.h"

static unsigned int lkst_buf_size = 256 * 1024;
module_param(lkst_buf_size, uint, 0400);
MODULE_PARM_DESC(lkst_buf_size, "LKST channel: bytes per sub-buffer (power of two)");

static unsigned int lkst_buf_nr = 16;
module_param(lkst_buf_nr, uint, 0400);
MODULE_PARM_DESC(lkst_buf_nr, "LKST channel: sub-buffers per CPU");

static unsigned int lkst_flags;
module_param(lkst_flags, uint, 0400);
MODULE_PARM_DESC(lkst_flags, "LKST channel: 2 flight recorder (overwrite the oldest)");

DEFINE_MUTEX(kt_lkst_lock);
struct trace_info *kt_lkst_chan __read_mostly;
bool kt_lkst_dead;
char *kt_lkst_catalog; /* the channel's catalog_extra */

/**
 * kt_lkst_catalog_refresh() - rebuild the catalogue text (the hooks
 * changed) and give it to the channel.  Context: the LKST channel's mutex
 * and kt_lkst_lock held.  Return: 0, or -ENOMEM (the old text stays).
 */
int kt_lkst_catalog_refresh(void)
{
	struct trace_info *t = kt_lkst_chan;
	char *s, *old = kt_lkst_catalog;

	lockdep_assert_held(&t->mutex);
	lockdep_assert_held(&kt_lkst_lock);
	s = kt_lkst_catalog_text();
	if (!s)
		return -ENOMEM;
	t->catalog_extra = s;
	kt_lkst_catalog = s;
	kfree(old);
	return 0;
}

/**
 * kt_lkst_init() - set the tracer up (stopped, RDEFAULT current).
 * Context: module init.  Return: 0 or a negative errno.
 */
int kt_lkst_init(void)
{
	struct trace_info *t;
	int ret;

	if (lkst_flags & ~TRACE_FLIGHT_CHANNEL) {
		pr_err("ktrace-lkst: lkst_flags %u: only 2 (flight recorder) is allowed\n",
		       lkst_flags);
		return -EINVAL;
	}
	kt_lkst_pcpu = alloc_percpu(struct kt_lkst_pcpu);
	if (!kt_lkst_pcpu)
		return -ENOMEM;
	kt_lkst_find_tracepoints();
	kt_lkst_exc_init(); /* before the masksets: RALL = every available event */
	ret = kt_lkst_masksets_init();
	if (ret)
		goto err_pcpu;
	kt_lkst_catalog = kt_lkst_catalog_text();
	if (!kt_lkst_catalog) {
		ret = -ENOMEM;
		goto err_ms;
	}
	t = trace_setup("ktrace", "lkst", lkst_buf_size, lkst_buf_nr, lkst_flags);
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		pr_err("ktrace-lkst: cannot create ktrace/lkst (buf_size %u buf_nr %u): %d\n",
		       lkst_buf_size, lkst_buf_nr, ret);
		goto err_cat;
	}
	ret = kt_lkst_create_files(t);
	if (ret) {
		trace_cleanup(t);
		goto err_cat;
	}
	/* the channel must be known before a start can attach a probe */
	WRITE_ONCE(kt_lkst_chan, t);
	mutex_lock(&t->mutex);
	t->catalog_extra = kt_lkst_catalog;
	t->state_hook = kt_lkst_state_hook;
	mutex_unlock(&t->mutex);
	return 0;

err_cat:
	kfree(kt_lkst_catalog);
err_ms:
	kt_lkst_masksets_free();
err_pcpu:
	kt_lkst_exc_exit();
	free_percpu(kt_lkst_pcpu);
	return ret;
}

/**
 * kt_lkst_exit() - remove the tracer.  Extended handlers are gone already
 * (their modules depend on ktrace.ko).  Context: module exit.
 *
 * Readers come first: the channel is stopped (writers see it stopped at
 * once; a probe still attached returns from trace_record() with -ENODATA)
 * and its relay files are closed, so a `ktrace read` sees them finalized
 * and finishes, before the slow part: detaching up to 40 probes patches
 * kernel code 40 times, seconds on an emulated CPU, while the control files
 * already refuse to open (ENXIO: the module is going) and a reader cannot
 * learn anything else.  The channel structure itself lives until every
 * probe is gone.
 */
void kt_lkst_exit(void)
{
	struct trace_info *t = kt_lkst_chan;

	mutex_lock(&kt_lkst_lock);
	kt_lkst_dead = true; /* the state hook does nothing from now on */
	mutex_unlock(&kt_lkst_lock);

	mutex_lock(&t->mutex);
	kt_stop_locked(t);
	if (t->rchan)
		kt_close_relay(t);
	mutex_unlock(&t->mutex);

	mutex_lock(&kt_lkst_lock);
	kt_lkst_disarm();
	kt_lkst_hooks_remove_all(); /* unregister_kprobe() each */
	mutex_unlock(&kt_lkst_lock);
	kt_lkst_exc_exit(); /* the exception exits' kretprobes */
	/* removes the control files and frees the channel */
	trace_cleanup(t);
	kt_lkst_chan = NULL;
	kt_lkst_masksets_free();
	kfree(kt_lkst_catalog);
	free_percpu(kt_lkst_pcpu);
}

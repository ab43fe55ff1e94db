// SPDX-License-Identifier: GPL-2.0
/*
 * tests/ktrace_test_mod.c - ktrace_test.ko, the load generator of the VM
 * test suite (kmod/tests/suite.sh).  Not installed; built by `make -C kmod
 * extra`.
 *
 * At load it sets up channel ktrace_test/NAME with trace_setup() (module
 * parameters name, global, flight, disable_state, buf_size, buf_nr) and the control
 * directory debugfs ktrace_test_ctl/:
 *
 *   run     write N: on every online CPU, three writers log N records each
 *           with trace_log2(): a bound kthread (process context), a timer
 *           (softirq) and a hard-irq hrtimer; returns when all are done
 *   loop    write 1: the same writers log without end; 0: stop them
 *   result  counts over the writers since the last `run` or `loop 1`:
 *           attempted (stored + refused), written, dropped, idle (calls
 *           made while the channel was stopped)
 *
 * Record layout (LOG2, func 1, event = writer kind 1 thread, 2 softirq,
 * 3 hardirq): u1 = writer id << 32 | attempt number, u2 = the CPU the
 * record was written on.  Writer id = cpu * 4 + kind.  The checker
 * (tests/kthelper.c) verifies from this that no record is lost, doubled,
 * reordered or written to the wrong CPU's stream.
 */
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include "ktrace_kernel.h"

static char *name = "t";
module_param(name, charp, 0400);
static bool global;
module_param(global, bool, 0400);
static bool flight;
module_param(flight, bool, 0400);
static bool disable_state;
module_param(disable_state, bool, 0400);
static unsigned int buf_size = 65536;
module_param(buf_size, uint, 0400);
static unsigned int buf_nr = 16;
module_param(buf_nr, uint, 0400);

enum { KIND_THREAD = 1, KIND_SOFTIRQ = 2, KIND_HARDIRQ = 3, NKIND = 4 };
#define TM_SOFT_BATCH 64
#define TM_HARD_BATCH 16
#define TM_HARD_PERIOD_NS 20000

struct tm_writer {
	unsigned int cpu, kind;
	u64 seq;          /* next attempt number */
	u64 quota;        /* attempts to make; U64_MAX = until stopped */
	u64 ok, refused, idle;
	struct completion done;
};

struct tm_cpu {
	struct tm_writer w[NKIND];
	struct task_struct *task;
	struct timer_list timer;
	struct hrtimer hrtimer;
};

static struct trace_info *tm_trace;
static struct tm_cpu *tm_cpus;
static unsigned int tm_ncpus;
static struct dentry *tm_dir;
static DEFINE_MUTEX(tm_lock);
static bool tm_looping;
static bool tm_stop;

static void tm_log(struct tm_writer *w)
{
	int ret;

	ret = trace_log2(tm_trace, 1, w->kind, ((u64)(w->cpu * 4 + w->kind) << 32) | (u32)w->seq,
			 raw_smp_processor_id());
	if (ret == -ENODATA) {
		w->idle++;
		return;
	}
	w->seq++;
	if (ret == 0)
		w->ok++;
	else
		w->refused++;
}

static bool tm_more(struct tm_writer *w)
{
	return !READ_ONCE(tm_stop) && w->seq + w->idle < w->quota;
}

static void tm_soft(struct timer_list *tl)
{
	struct tm_cpu *c = from_timer(c, tl, timer);
	struct tm_writer *w = &c->w[KIND_SOFTIRQ];
	int i;

	for (i = 0; i < TM_SOFT_BATCH && tm_more(w); i++)
		tm_log(w);
	if (tm_more(w))
		mod_timer(&c->timer, jiffies + 1);
	else
		complete(&w->done);
}

static enum hrtimer_restart tm_hard(struct hrtimer *ht)
{
	struct tm_cpu *c = container_of(ht, struct tm_cpu, hrtimer);
	struct tm_writer *w = &c->w[KIND_HARDIRQ];
	int i;

	for (i = 0; i < TM_HARD_BATCH && tm_more(w); i++)
		tm_log(w);
	if (tm_more(w)) {
		hrtimer_forward_now(ht, ns_to_ktime(TM_HARD_PERIOD_NS));
		return HRTIMER_RESTART;
	}
	complete(&w->done);
	return HRTIMER_NORESTART;
}

/* The per-CPU kthread: arms its CPU's timers, then writes itself. */
static int tm_thread(void *arg)
{
	struct tm_cpu *c = arg;
	struct tm_writer *w = &c->w[KIND_THREAD];
	unsigned int n = 0;

	c->timer.expires = jiffies + 1;
	add_timer_on(&c->timer, c->w[0].cpu);
	hrtimer_start(&c->hrtimer, ns_to_ktime(TM_HARD_PERIOD_NS), HRTIMER_MODE_REL_PINNED_HARD);
	while (tm_more(w)) {
		tm_log(w);
		if (++n % 64 == 0)
			cond_resched();
	}
	complete(&w->done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* Start every writer with @quota attempts (U64_MAX: until tm_halt()). */
static int tm_launch(u64 quota)
{
	unsigned int i, k;

	WRITE_ONCE(tm_stop, false);
	for (i = 0; i < tm_ncpus; i++) {
		struct tm_cpu *c = &tm_cpus[i];

		c->task = NULL;
		for (k = 1; k < NKIND; k++) {
			struct tm_writer *w = &c->w[k];

			w->seq = w->ok = w->refused = w->idle = 0;
			w->quota = quota;
			reinit_completion(&w->done);
		}
	}
	for (i = 0; i < tm_ncpus; i++) {
		struct tm_cpu *c = &tm_cpus[i];

		if (!cpu_online(i)) {
			for (k = 1; k < NKIND; k++)
				complete(&c->w[k].done);
			continue;
		}
		c->task = kthread_create_on_cpu(tm_thread, c, i, "ktrace_test/%u");
		if (IS_ERR(c->task)) {
			c->task = NULL;
			for (k = 1; k < NKIND; k++)
				complete(&c->w[k].done);
			continue;
		}
		wake_up_process(c->task);
	}
	return 0;
}

/* Wait for every writer, then reap the threads. */
static void tm_wait(void)
{
	unsigned int i, k;

	for (i = 0; i < tm_ncpus; i++)
		for (k = 1; k < NKIND; k++)
			wait_for_completion(&tm_cpus[i].w[k].done);
	for (i = 0; i < tm_ncpus; i++) {
		if (tm_cpus[i].task)
			kthread_stop(tm_cpus[i].task);
		tm_cpus[i].task = NULL;
	}
}

static void tm_halt(void)
{
	WRITE_ONCE(tm_stop, true);
	tm_wait();
}

static int tm_get_u64(const char __user *ubuf, size_t count, u64 *v)
{
	char kbuf[24];

	if (count == 0 || count >= sizeof(kbuf))
		return -EINVAL;
	if (copy_from_user(kbuf, ubuf, count))
		return -EFAULT;
	kbuf[count] = '\0';
	return kstrtou64(strim(kbuf), 10, v);
}

static ssize_t tm_run_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	u64 n;
	int ret;

	ret = tm_get_u64(ubuf, count, &n);
	if (ret)
		return ret;
	if (n == 0 || n > (1u << 30))
		return -EINVAL;
	mutex_lock(&tm_lock);
	if (tm_looping) {
		mutex_unlock(&tm_lock);
		return -EBUSY;
	}
	tm_launch(n);
	tm_wait();
	mutex_unlock(&tm_lock);
	return count;
}

static ssize_t tm_loop_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	u64 on;
	int ret;

	ret = tm_get_u64(ubuf, count, &on);
	if (ret)
		return ret;
	if (on > 1)
		return -EINVAL;
	mutex_lock(&tm_lock);
	if (on && !tm_looping) {
		tm_launch(U64_MAX);
		tm_looping = true;
	} else if (!on && tm_looping) {
		tm_halt();
		tm_looping = false;
	}
	mutex_unlock(&tm_lock);
	return count;
}

static ssize_t tm_result_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	u64 ok = 0, refused = 0, idle = 0;
	unsigned int i, k;
	char kbuf[160];
	int n;

	for (i = 0; i < tm_ncpus; i++)
		for (k = 1; k < NKIND; k++) {
			ok += READ_ONCE(tm_cpus[i].w[k].ok);
			refused += READ_ONCE(tm_cpus[i].w[k].refused);
			idle += READ_ONCE(tm_cpus[i].w[k].idle);
		}
	n = scnprintf(kbuf, sizeof(kbuf), "attempted %llu\nwritten %llu\ndropped %llu\nidle %llu\n",
		      ok + refused, ok, refused, idle);
	return simple_read_from_buffer(ubuf, count, ppos, kbuf, n);
}

static const struct file_operations tm_run_fops = {
	.owner = THIS_MODULE,
	.write = tm_run_write,
};

static const struct file_operations tm_loop_fops = {
	.owner = THIS_MODULE,
	.write = tm_loop_write,
};

static const struct file_operations tm_result_fops = {
	.owner = THIS_MODULE,
	.read = tm_result_read,
};

static int __init tm_init(void)
{
	u32 flags = (global ? TRACE_GLOBAL_CHANNEL : 0) | (flight ? TRACE_FLIGHT_CHANNEL : 0) |
		    (disable_state ? TRACE_DISABLE_STATE : 0);
	unsigned int i, k;

	tm_ncpus = nr_cpu_ids;
	tm_cpus = kcalloc(tm_ncpus, sizeof(*tm_cpus), GFP_KERNEL);
	if (!tm_cpus)
		return -ENOMEM;
	for (i = 0; i < tm_ncpus; i++) {
		struct tm_cpu *c = &tm_cpus[i];

		for (k = 0; k < NKIND; k++) {
			c->w[k].cpu = i;
			c->w[k].kind = k;
			init_completion(&c->w[k].done);
		}
		timer_setup(&c->timer, tm_soft, TIMER_PINNED);
		hrtimer_init(&c->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		c->hrtimer.function = tm_hard;
	}
	tm_trace = trace_setup("ktrace_test", name, buf_size, buf_nr, flags);
	if (IS_ERR(tm_trace)) {
		kfree(tm_cpus);
		return PTR_ERR(tm_trace);
	}
	trace_catalog_func(tm_trace, 1, "ktrace_test_writer");
	trace_catalog_event(tm_trace, 1, KIND_THREAD, "test_thread", "test", "id_seq,cpu", false);
	trace_catalog_event(tm_trace, 1, KIND_SOFTIRQ, "test_softirq", "test", "id_seq,cpu", false);
	trace_catalog_event(tm_trace, 1, KIND_HARDIRQ, "test_hardirq", "test", "id_seq,cpu", false);

	tm_dir = debugfs_create_dir("ktrace_test_ctl", NULL);
	debugfs_create_file("run", 0200, tm_dir, NULL, &tm_run_fops);
	debugfs_create_file("loop", 0200, tm_dir, NULL, &tm_loop_fops);
	debugfs_create_file("result", 0400, tm_dir, NULL, &tm_result_fops);
	return 0;
}

static void __exit tm_exit(void)
{
	unsigned int i;

	debugfs_remove(tm_dir);
	mutex_lock(&tm_lock);
	if (tm_looping)
		tm_halt();
	tm_looping = false;
	mutex_unlock(&tm_lock);
	for (i = 0; i < tm_ncpus; i++) {
		del_timer_sync(&tm_cpus[i].timer);
		hrtimer_cancel(&tm_cpus[i].hrtimer);
	}
	/* Cleaned up while running: trace_cleanup() stops it itself. */
	trace_cleanup(tm_trace);
	kfree(tm_cpus);
}

module_init(tm_init);
module_exit(tm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrace test load generator (VM test suite only)");

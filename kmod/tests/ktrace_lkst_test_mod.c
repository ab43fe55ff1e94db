// SPDX-License-Identifier: GPL-2.0
/*
 * tests/ktrace_lkst_test_mod.c - ktrace_lkst_test.ko: raises the kernel
 * events of the LKST catalogue that an idle busybox VM does not raise by
 * itself, for the VM suite (kmod/tests/suite_lkst.sh).  Not installed;
 * built by `make -C kmod extra`.
 *
 * debugfs ktrace_lkst_test/ctl (0600), one command per write, each
 * returning when its events have happened:
 *
 *   nmi N      N NMIs to the current CPU (a self IPI with the NMI vector,
 *              as the kernel's NMI backtrace does); a local NMI handler of
 *              this module claims them, so nothing is reported as an
 *              unknown NMI                           -> EXCEPTION_NMI
 *   mce        logs one corrected, software-made machine check record
 *              with mce_log() (what mce-inject's software injection
 *              does): bank 0, status VAL only, no address -> EXCEPTION_MCE
 *   tasklet N  N normal and N high-priority tasklets    -> INT_TASKLET_*
 *   contend N  two kthreads per online CPU take one mutex N times each,
 *              holding it 20 us; they start while this command holds it
 *              for 50 ms, so they contend for sure -> LOCK_CONTENTION_*
 *   work N     N work items on the system workqueue  -> WORKQUEUE_*
 *   timer N    N timer_list expiries, one jiffy apart -> TIMER_EXPIRE_*
 *
 * Writes: EINVAL for anything else; the command's own error otherwise.
 * Kernel messages of this module start with "ktrace_lkst_test:".
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/apic.h>
#include <asm/mce.h>
#include <asm/nmi.h>

static struct dentry *lt_dir;
static DEFINE_MUTEX(lt_lock);

/* ---------------------------------------------------------------- nmi */

static atomic_t lt_nmi_pending = ATOMIC_INIT(0);
static atomic_t lt_nmi_seen = ATOMIC_INIT(0);

static int lt_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (atomic_add_unless(&lt_nmi_pending, -1, 0)) {
		atomic_inc(&lt_nmi_seen);
		return NMI_HANDLED;
	}
	return NMI_DONE;
}

static int lt_nmi(unsigned int n)
{
	unsigned int i, j;

	atomic_set(&lt_nmi_seen, 0);
	for (i = 0; i < n; i++) {
		preempt_disable();
		atomic_inc(&lt_nmi_pending);
		apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
		preempt_enable();
		for (j = 0; j < 1000 && atomic_read(&lt_nmi_pending); j++)
			udelay(100);
	}
	if (atomic_read(&lt_nmi_pending)) {
		atomic_set(&lt_nmi_pending, 0);
		return -ETIMEDOUT;
	}
	return atomic_read(&lt_nmi_seen) == n ? 0 : -EIO;
}

/* ---------------------------------------------------------------- mce */

static int lt_mce(void)
{
	struct mce m;

	memset(&m, 0, sizeof(m));
	m.status = MCI_STATUS_VAL; /* corrected, no address, no misc */
	m.bank = 0;
	m.cpu = m.extcpu = raw_smp_processor_id();
	m.cpuvendor = boot_cpu_data.x86_vendor;
	m.cpuid = cpuid_eax(1);
	m.time = ktime_get_real_seconds();
	m.apicid = cpu_data(m.extcpu).initial_apicid;
	mce_log(&m);
	/* mce_log() defers to irq_work and then a work item */
	msleep(200);
	return 0;
}

/* ------------------------------------------------------------ tasklet */

static atomic_t lt_tasklets;
static DECLARE_COMPLETION(lt_tasklet_done);

static void lt_tasklet_fn(struct tasklet_struct *t)
{
	if (atomic_dec_and_test(&lt_tasklets))
		complete(&lt_tasklet_done);
}

static DECLARE_TASKLET(lt_tasklet, lt_tasklet_fn);
static DECLARE_TASKLET(lt_tasklet_hi, lt_tasklet_fn);

static int lt_tasklet_run(unsigned int n)
{
	unsigned int i;

	/* one of each per round: a tasklet scheduled twice runs once */
	for (i = 0; i < n; i++) {
		reinit_completion(&lt_tasklet_done);
		atomic_set(&lt_tasklets, 2);
		tasklet_schedule(&lt_tasklet);
		tasklet_hi_schedule(&lt_tasklet_hi);
		if (!wait_for_completion_timeout(&lt_tasklet_done, 5 * HZ))
			return -ETIMEDOUT;
	}
	return 0;
}

/* ------------------------------------------------------------ contend */

static DEFINE_MUTEX(lt_contended);

struct lt_worker {
	unsigned int n;
	struct completion done;
};

static int lt_contend_fn(void *arg)
{
	struct lt_worker *w = arg;
	unsigned int i;

	for (i = 0; i < w->n; i++) {
		mutex_lock(&lt_contended);
		udelay(20);
		mutex_unlock(&lt_contended);
		if (i % 16 == 0)
			cond_resched();
	}
	complete(&w->done);
	return 0;
}

static int lt_contend(unsigned int n)
{
	unsigned int nw = 2 * num_online_cpus(), i, started = 0;
	struct lt_worker *w;
	struct task_struct *t;
	int ret = 0;

	w = kcalloc(nw, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	/*
	 * Hold the mutex while the workers start and sleep with it: whatever
	 * the scheduler (or a single-threaded emulator) does, their first
	 * mutex_lock() must take the slow path, so contention is certain
	 * rather than left to how their critical sections happen to overlap.
	 */
	mutex_lock(&lt_contended);
	for (i = 0; i < nw; i++) {
		w[i].n = n;
		init_completion(&w[i].done);
		t = kthread_run(lt_contend_fn, &w[i], "lkst_contend/%u", i);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		started++;
	}
	msleep(50);
	mutex_unlock(&lt_contended);
	for (i = 0; i < started; i++)
		wait_for_completion(&w[i].done);
	kfree(w);
	return ret;
}

/* --------------------------------------------------------------- work */

static atomic_t lt_works;
static DECLARE_COMPLETION(lt_work_done);

static void lt_work_fn(struct work_struct *work)
{
	if (atomic_dec_and_test(&lt_works))
		complete(&lt_work_done);
}

static DECLARE_WORK(lt_work, lt_work_fn);

static int lt_work_run(unsigned int n)
{
	unsigned int i;

	reinit_completion(&lt_work_done);
	atomic_set(&lt_works, n);
	for (i = 0; i < n; i++) {
		queue_work(system_wq, &lt_work);
		flush_work(&lt_work);
	}
	return wait_for_completion_timeout(&lt_work_done, 5 * HZ) ? 0 : -ETIMEDOUT;
}

/* -------------------------------------------------------------- timer */

static atomic_t lt_timers;
static DECLARE_COMPLETION(lt_timer_done);
static struct timer_list lt_timer;

static void lt_timer_fn(struct timer_list *t)
{
	if (atomic_dec_and_test(&lt_timers))
		complete(&lt_timer_done);
	else
		mod_timer(&lt_timer, jiffies + 1);
}

static int lt_timer_run(unsigned int n)
{
	int ret;

	reinit_completion(&lt_timer_done);
	atomic_set(&lt_timers, n);
	mod_timer(&lt_timer, jiffies + 1);
	ret = wait_for_completion_timeout(&lt_timer_done, 10 * HZ) ? 0 : -ETIMEDOUT;
	del_timer_sync(&lt_timer);
	return ret;
}

/* ---------------------------------------------------------------- ctl */

static ssize_t lt_ctl_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	char buf[32], cmd[16];
	unsigned int n = 1;
	int ret, k;

	if (*ppos || count == 0 || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	k = sscanf(buf, "%15s %u", cmd, &n);
	if (k < 1 || n == 0 || n > 100000)
		return -EINVAL;

	mutex_lock(&lt_lock);
	if (!strcmp(cmd, "nmi"))
		ret = lt_nmi(n);
	else if (!strcmp(cmd, "mce"))
		ret = lt_mce();
	else if (!strcmp(cmd, "tasklet"))
		ret = lt_tasklet_run(n);
	else if (!strcmp(cmd, "contend"))
		ret = lt_contend(n);
	else if (!strcmp(cmd, "work"))
		ret = lt_work_run(n);
	else if (!strcmp(cmd, "timer"))
		ret = lt_timer_run(n);
	else
		ret = -EINVAL;
	mutex_unlock(&lt_lock);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static const struct file_operations lt_ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = lt_ctl_write,
	.llseek = default_llseek,
};

static int __init lt_init(void)
{
	int ret;

	timer_setup(&lt_timer, lt_timer_fn, 0);
	ret = register_nmi_handler(NMI_LOCAL, lt_nmi_handler, 0, "ktrace_lkst_test");
	if (ret)
		return ret;
	lt_dir = debugfs_create_dir("ktrace_lkst_test", NULL);
	debugfs_create_file("ctl", 0600, lt_dir, NULL, &lt_ctl_fops);
	return 0;
}

static void __exit lt_exit(void)
{
	debugfs_remove(lt_dir);
	unregister_nmi_handler(NMI_LOCAL, "ktrace_lkst_test");
	tasklet_kill(&lt_tasklet);
	tasklet_kill(&lt_tasklet_hi);
	flush_work(&lt_work);
	del_timer_sync(&lt_timer);
}

module_init(lt_init);
module_exit(lt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrace VM tests: raise the LKST events an idle VM lacks");

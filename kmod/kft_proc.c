// SPDX-License-Identifier: GPL-2.0
/*
 * kft_proc.c - the /proc files of KFT in the kernel, as seed 002 had them.
 *
 *   /proc/kft            0600  read: the status (state, start and stop with
 *                              reason and time, entries kept / unfinished /
 *                              filtered per filter / lost, probes, log use,
 *                              the last refused write, the configuration);
 *                              write: a command or a configuration
 *   /proc/kft_data       0400  the log, in ktrace's trace format: one shared
 *                              stream of CALL records in packed layout
 *                              (docs/FORMAT.md), i.e. the file cpu0 of a
 *                              trace directory (`ktrace kft --kernel extract`)
 *   /proc/kft_callsites  0400  the call-site table those records index (the
 *                              trace directory's `callsites` file)
 *
 * A write to /proc/kft is one unit, at most 64 KiB: the single word
 * `prime`, `start` or `stop` (blanks and newlines around it allowed) is a
 * command; anything else is a configuration in the language of
 * docs/KFT-CONFIG.md (kft/config.c parses it, function names or 0x
 * addresses).  A configuration that does not parse, names a function that
 * does not exist or cannot be probed fails with EINVAL and changes nothing;
 * a command the run's state refuses fails with EBUSY.  Either way the
 * reason is on the status's `error:` line.
 *
 * /proc/kft_data and /proc/kft_callsites are snapshots taken at open():
 * read the data first (it enters new call sites in the table), then the
 * call sites.  Reading while a run records is allowed; a later open sees
 * the newer entries.  Both support read_iter, so sendfile()/splice (busybox
 * cat) work.
 *
 * Boot-time runs (seed 002's static mode): the module parameter kft_boot
 * holds a configuration, statements separated by ';' (`ktrace kft --boot
 * --kernel CONFIG` prints it as ktrace.kft_boot="..." for the kernel
 * command line, where modprobe finds it).  The module loads it and primes
 * the run in its init, so loading ktrace.ko from the initramfs starts the
 * run; a refused configuration is logged and left on the `error:` line,
 * and the module loads anyway.
 */
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/moduleparam.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include "kft_internal.h"

static struct proc_dir_entry *kft_pde, *kft_data_pde, *kft_sites_pde;

/* ---- /proc/kft ---------------------------------------------------------- */

static int kft_status_show(struct seq_file *m, void *v)
{
	char *buf = kvmalloc(KFT_STATUS_MAX, GFP_KERNEL);
	size_t len;

	if (!buf)
		return -ENOMEM;
	mutex_lock(&kft_mutex);
	len = kft_status_text(buf, KFT_STATUS_MAX);
	mutex_unlock(&kft_mutex);
	seq_write(m, buf, len);
	kvfree(buf);
	return 0;
}

static int kft_status_open(struct inode *inode, struct file *file)
{
	return single_open_size(file, kft_status_show, NULL, KFT_STATUS_MAX);
}

/* The command in @s (@len bytes) if it is exactly one command word, else 0. */
static int kft_command_word(const char *s, size_t len)
{
	static const char *const words[] = { "prime", "start", "stop" };
	static const int cmds[] = { KFT_CMD_PRIME, KFT_CMD_START, KFT_CMD_STOP };
	size_t i;

	while (len && isspace(*s)) {
		s++;
		len--;
	}
	while (len && isspace(s[len - 1]))
		len--;
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (len == strlen(words[i]) && !memcmp(s, words[i], len))
			return cmds[i];
	return 0;
}

static ssize_t kft_status_write(struct file *file, const char __user *ubuf, size_t len,
				loff_t *ppos)
{
	char msg[256];
	char *buf;
	int cmd, ret;

	if (!len)
		return 0;
	if (len > KFT_TEXT_MAX)
		return -EINVAL;
	buf = kvmalloc(len + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, ubuf, len)) {
		kvfree(buf);
		return -EFAULT;
	}
	buf[len] = '\0';
	cmd = kft_command_word(buf, len);
	if (cmd)
		ret = kft_run_command(cmd);
	else
		ret = kft_load_text(buf, len, msg, sizeof(msg));
	kvfree(buf);
	return ret < 0 ? ret : (ssize_t)len;
}

static const struct proc_ops kft_status_ops = {
	.proc_open = kft_status_open,
	.proc_read_iter = seq_read_iter,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = kft_status_write,
};

/* ---- /proc/kft_data, /proc/kft_callsites --------------------------------- */

struct kft_img {
	void *p;
	size_t len;
};

static int kft_img_open(struct file *file, int (*make)(void **, size_t *))
{
	struct kft_img *img = kzalloc(sizeof(*img), GFP_KERNEL);
	int ret;

	if (!img)
		return -ENOMEM;
	ret = make(&img->p, &img->len);
	if (ret) {
		kfree(img);
		return ret;
	}
	file->private_data = img;
	return 0;
}

static int kft_data_open(struct inode *inode, struct file *file)
{
	return kft_img_open(file, kft_data_image);
}

static int kft_sites_open(struct inode *inode, struct file *file)
{
	return kft_img_open(file, kft_callsites_image);
}

static ssize_t kft_img_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct kft_img *img = iocb->ki_filp->private_data;
	loff_t pos = iocb->ki_pos;
	size_t want, n;

	if (pos < 0)
		return -EINVAL;
	if ((size_t)pos >= img->len)
		return 0;
	want = min_t(size_t, img->len - pos, iov_iter_count(to));
	n = copy_to_iter((char *)img->p + pos, want, to);
	if (!n && want)
		return -EFAULT;
	iocb->ki_pos += n;
	return n;
}

static int kft_img_release(struct inode *inode, struct file *file)
{
	struct kft_img *img = file->private_data;

	kvfree(img->p);
	kfree(img);
	return 0;
}

static const struct proc_ops kft_data_ops = {
	.proc_open = kft_data_open,
	.proc_read_iter = kft_img_read_iter,
	.proc_lseek = default_llseek,
	.proc_release = kft_img_release,
};

static const struct proc_ops kft_sites_ops = {
	.proc_open = kft_sites_open,
	.proc_read_iter = kft_img_read_iter,
	.proc_lseek = default_llseek,
	.proc_release = kft_img_release,
};

static void kft_proc_exit(void);

static int kft_proc_init(void)
{
	kft_pde = proc_create("kft", 0600, NULL, &kft_status_ops);
	kft_data_pde = proc_create("kft_data", 0400, NULL, &kft_data_ops);
	kft_sites_pde = proc_create("kft_callsites", 0400, NULL, &kft_sites_ops);
	if (!kft_pde || !kft_data_pde || !kft_sites_pde) {
		kft_proc_exit();
		return -ENOMEM;
	}
	return 0;
}

static void kft_proc_exit(void)
{
	/* proc_remove() waits for readers and writers inside our operations. */
	proc_remove(kft_sites_pde);
	proc_remove(kft_data_pde);
	proc_remove(kft_pde);
	kft_sites_pde = kft_data_pde = kft_pde = NULL;
}

/* ---- boot-time runs: the kft_boot parameter ---------------------------- */

static char *kft_boot;
module_param(kft_boot, charp, 0400);
MODULE_PARM_DESC(kft_boot,
		 "KFT: a configuration loaded and primed at module load, statements separated by ';' (ktrace kft --boot --kernel)");

/**
 * kft_boot_run() - load the kft_boot configuration, if any, and prime the
 * run (unless the configuration primes itself with a `prime` statement).
 * Errors are logged and kept on /proc/kft's `error:` line; the module
 * loads anyway.  Process context, at module init.
 */
static void kft_boot_run(void)
{
	char msg[256], *text, *line, *p;
	bool primes = false;
	size_t len;
	int ret;

	if (!kft_boot || !*kft_boot)
		return;
	text = kstrdup(kft_boot, GFP_KERNEL);
	if (!text) {
		pr_warn("ktrace: kft_boot: out of memory\n");
		return;
	}
	len = strlen(text);
	for (p = text; *p; p++)
		if (*p == ';')
			*p = '\n';
	ret = kft_load_text(text, len, msg, sizeof(msg));
	/* a `prime` statement of its own: kft_load_text() primed the run */
	for (p = text; !ret && (line = strsep(&p, "\n"));)
		if (!strcmp(strim(line), "prime"))
			primes = true;
	if (!ret && !primes)
		ret = kft_run_command(KFT_CMD_PRIME);
	if (ret)
		pr_warn("ktrace: kft_boot: configuration refused: %s (error %d)\n",
			msg[0] ? msg : "prime failed", ret);
	else
		pr_info("ktrace: kft_boot: configuration loaded and primed\n");
	kfree(text);
}

int kt_kft_init(void)
{
	int ret = kft_core_init();

	if (ret)
		return ret;
	ret = kft_proc_init();
	if (ret)
		kft_core_exit();
	else
		kft_boot_run();
	return ret;
}

void kt_kft_exit(void)
{
	/* The files first: no write can load a configuration after this. */
	kft_proc_exit();
	kft_core_exit();
}

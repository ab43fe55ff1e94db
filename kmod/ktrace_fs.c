// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace_fs.c - the debugfs side of a channel: the shared root
 * directories, the control files of root/name/ and the catalogue.
 *
 *   state     0600  "start" or "stop"; write start/stop (0400 and -EPERM
 *                   on write with TRACE_DISABLE_STATE)
 *   dropped   0400  records refused so far (buffer full, NMI, nesting)
 *   info      0400  "key value" lines: geometry, mode, counters, and one
 *                   `stream` line per relay file with its counters, relay's
 *                   produced/consumed counts, the reader's position (next)
 *                   and the current sub-buffer's seq, where `ktrace read`
 *                   starts from
 *   buf_size  0600  bytes per sub-buffer; writing resizes a stopped channel
 *   buf_nr    0600  sub-buffers per stream; same
 *   consumed  0600  write "STREAM SEQ": the reader copied every sub-buffer
 *                   of stream STREAM below sequence number SEQ (relay's
 *                   mmap-mode protocol; frees them for a discard-mode
 *                   writer).  SEQ may not go back.
 *   catalog   0400  `func` and `event` lines for the trace metadata
 *   trace0..N 0400  the relay buffers (created by ktrace_chan.c)
 *
 * Every write takes the whole value in one write() of at most 31 bytes
 * (an optional trailing newline is allowed); anything else is -EINVAL and
 * changes nothing.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "ktrace_internal.h"

/* ------------------------------------------------------------------ */
/* Root directories shared by channels                                 */
/* ------------------------------------------------------------------ */

struct kt_root {
	struct list_head list;
	struct dentry *dentry;
	unsigned int refs;
	char name[KT_NAME_MAX];
};

static LIST_HEAD(kt_roots);
static DEFINE_MUTEX(kt_roots_lock);

/**
 * kt_root_get() - find or create debugfs directory @name for a channel.
 * @name:  directory name under the debugfs mount.
 * @rootp: out: the shared root, for kt_root_put().
 * Return: its dentry, or ERR_PTR(-EEXIST) if debugfs already has @name
 * and it is not ours, -ENOMEM, -ENODEV.
 */
struct dentry *kt_root_get(const char *name, struct kt_root **rootp)
{
	struct kt_root *r;
	struct dentry *d;

	mutex_lock(&kt_roots_lock);
	list_for_each_entry(r, &kt_roots, list) {
		if (!strcmp(r->name, name)) {
			r->refs++;
			goto found;
		}
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		mutex_unlock(&kt_roots_lock);
		return ERR_PTR(-ENOMEM);
	}
	d = debugfs_create_dir(name, NULL);
	if (IS_ERR(d)) {
		kfree(r);
		mutex_unlock(&kt_roots_lock);
		return d;
	}
	strscpy(r->name, name, sizeof(r->name));
	r->dentry = d;
	r->refs = 1;
	list_add(&r->list, &kt_roots);
found:
	*rootp = r;
	mutex_unlock(&kt_roots_lock);
	return r->dentry;
}

/**
 * kt_root_put() - drop a channel's reference; the last one removes it.
 * @r: the root from kt_root_get().
 */
void kt_root_put(struct kt_root *r)
{
	mutex_lock(&kt_roots_lock);
	if (--r->refs == 0) {
		list_del(&r->list);
		debugfs_remove(r->dentry);
		kfree(r);
	}
	mutex_unlock(&kt_roots_lock);
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

#define KT_WRITE_MAX 32

/* Copy a small user write into @kbuf, strip one trailing newline. */
static int kt_get_user_value(char *kbuf, const char __user *ubuf, size_t count, loff_t *ppos)
{
	if (*ppos != 0 || count == 0 || count >= KT_WRITE_MAX)
		return -EINVAL;
	if (copy_from_user(kbuf, ubuf, count))
		return -EFAULT;
	kbuf[count] = '\0';
	if (kbuf[count - 1] == '\n')
		kbuf[--count] = '\0';
	/* Empty, or a NUL inside the value. */
	if (count == 0 || strlen(kbuf) != count)
		return -EINVAL;
	return 0;
}

/* ------------------------------------------------------------------ */
/* state                                                               */
/* ------------------------------------------------------------------ */

static ssize_t kt_state_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct trace_info *t = f->private_data;
	const char *s;

	/*
	 * Under the mutex: "stop" is only shown once trace_stop() has waited
	 * for the writers and closed the current sub-buffers, so a reader
	 * that sees it can copy everything.
	 */
	mutex_lock(&t->mutex);
	s = t->running ? "start\n" : "stop\n";
	mutex_unlock(&t->mutex);
	return simple_read_from_buffer(ubuf, count, ppos, s, strlen(s));
}

static ssize_t kt_state_write(struct file *f, const char __user *ubuf, size_t count,
			      loff_t *ppos)
{
	struct trace_info *t = f->private_data;
	char kbuf[KT_WRITE_MAX];
	int start, ret;

	ret = kt_get_user_value(kbuf, ubuf, count, ppos);
	if (ret)
		return ret;
	if (!strcmp(kbuf, "start"))
		start = 1;
	else if (!strcmp(kbuf, "stop"))
		start = 0;
	else
		return -EINVAL;
	if (t->flags & TRACE_DISABLE_STATE)
		return -EPERM;

	mutex_lock(&t->mutex);
	if (t->dead)
		ret = -ENODEV;
	else if (start)
		ret = kt_start_locked(t);
	else
		kt_stop_locked(t);
	mutex_unlock(&t->mutex);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static const struct file_operations kt_state_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_state_read,
	.write = kt_state_write,
	.llseek = default_llseek,
};

/* ------------------------------------------------------------------ */
/* dropped                                                             */
/* ------------------------------------------------------------------ */

static ssize_t kt_dropped_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct trace_info *t = f->private_data;
	char kbuf[32];
	int n;

	n = scnprintf(kbuf, sizeof(kbuf), "%llu\n", kt_total_dropped(t));
	return simple_read_from_buffer(ubuf, count, ppos, kbuf, n);
}

static const struct file_operations kt_dropped_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_dropped_read,
	.llseek = default_llseek,
};

/* ------------------------------------------------------------------ */
/* buf_size, buf_nr                                                    */
/* ------------------------------------------------------------------ */

static ssize_t kt_geom_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos,
			    bool nr)
{
	struct trace_info *t = f->private_data;
	char kbuf[16];
	int n;

	n = scnprintf(kbuf, sizeof(kbuf), "%u\n", nr ? READ_ONCE(t->buf_nr) : READ_ONCE(t->buf_size));
	return simple_read_from_buffer(ubuf, count, ppos, kbuf, n);
}

static ssize_t kt_geom_write(struct file *f, const char __user *ubuf, size_t count,
			     loff_t *ppos, bool nr)
{
	struct trace_info *t = f->private_data;
	char kbuf[KT_WRITE_MAX];
	unsigned int v;
	int ret;

	ret = kt_get_user_value(kbuf, ubuf, count, ppos);
	if (ret)
		return ret;
	/* Plain decimal digits only: no sign, 0x, spaces or second newline. */
	if (strspn(kbuf, "0123456789") != strlen(kbuf) || kstrtouint(kbuf, 10, &v))
		return -EINVAL;

	mutex_lock(&t->mutex);
	ret = nr ? kt_resize(t, t->buf_size, v) : kt_resize(t, v, t->buf_nr);
	mutex_unlock(&t->mutex);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static ssize_t kt_size_read(struct file *f, char __user *u, size_t c, loff_t *p)
{
	return kt_geom_read(f, u, c, p, false);
}

static ssize_t kt_size_write(struct file *f, const char __user *u, size_t c, loff_t *p)
{
	return kt_geom_write(f, u, c, p, false);
}

static ssize_t kt_nr_read(struct file *f, char __user *u, size_t c, loff_t *p)
{
	return kt_geom_read(f, u, c, p, true);
}

static ssize_t kt_nr_write(struct file *f, const char __user *u, size_t c, loff_t *p)
{
	return kt_geom_write(f, u, c, p, true);
}

static const struct file_operations kt_size_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_size_read,
	.write = kt_size_write,
	.llseek = default_llseek,
};

static const struct file_operations kt_nr_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_nr_read,
	.write = kt_nr_write,
	.llseek = default_llseek,
};

/* ------------------------------------------------------------------ */
/* consumed                                                            */
/* ------------------------------------------------------------------ */

static ssize_t kt_consumed_write(struct file *f, const char __user *ubuf, size_t count,
				 loff_t *ppos)
{
	struct trace_info *t = f->private_data;
	char kbuf[KT_WRITE_MAX], *sp;
	unsigned int stream;
	u64 seq;
	int ret;

	ret = kt_get_user_value(kbuf, ubuf, count, ppos);
	if (ret)
		return ret;
	/* Exactly "DIGITS SPACE DIGITS". */
	sp = strchr(kbuf, ' ');
	if (!sp || sp == kbuf)
		return -EINVAL;
	*sp++ = '\0';
	if (strspn(kbuf, "0123456789") != strlen(kbuf) || strspn(sp, "0123456789") != strlen(sp) ||
	    !*sp || kstrtouint(kbuf, 10, &stream) || kstrtou64(sp, 10, &seq))
		return -EINVAL;

	mutex_lock(&t->mutex);
	ret = kt_consume(t, stream, seq);
	mutex_unlock(&t->mutex);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static const struct file_operations kt_consumed_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kt_consumed_write,
	.llseek = default_llseek,
};

/* ------------------------------------------------------------------ */
/* info and catalog: text built at open, read with seq-like semantics  */
/* ------------------------------------------------------------------ */

struct kt_text {
	size_t len;
	char buf[];
};

/* Room for the info and catalog text: fixed lines + a line per CPU/event. */
static size_t kt_text_size(void)
{
	return 8192 + 192 * (size_t)(nr_cpu_ids + KT_MAX_EVENTS + 256);
}

static int kt_text_release(struct inode *inode, struct file *f)
{
	kvfree(f->private_data);
	return 0;
}

static ssize_t kt_text_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct kt_text *txt = f->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, txt->buf, txt->len);
}

__printf(3, 4) static void kt_text_add(struct kt_text *txt, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (txt->len >= cap)
		return;
	va_start(ap, fmt);
	txt->len += vscnprintf(txt->buf + txt->len, cap - txt->len, fmt, ap);
	va_end(ap);
}

static void kt_info_fill(struct trace_info *t, struct kt_text *txt, size_t cap)
{
	struct rchan *chan = t->rchan;
	u64 w, d, o;
	int cpu;

	kt_stats(t, -1, &w, &d, &o);
	kt_text_add(txt, cap, "name %s\nstate %s\nmode %s\nscope %s\n", t->name,
		    t->running ? "start" : "stop",
		    (t->flags & TRACE_FLIGHT_CHANNEL) ? "flight" : "discard",
		    (t->flags & TRACE_GLOBAL_CHANNEL) ? "global" : "cpu");
	kt_text_add(txt, cap, "buf-size %u\nbuf-nr %u\nflags %u\n", t->buf_size, t->buf_nr,
		    t->flags);
	kt_text_add(txt, cap, "written %llu\ndropped %llu\noverwritten %llu\n", w, d, o);
	kt_text_add(txt, cap, "nmi-dropped %lld\n", (long long)atomic64_read(&t->nmi_dropped));
	kt_text_add(txt, cap, "created-ns %llu\nstart-ns %llu\nstop-ns %llu\n", t->created_ns,
		    t->start_ns, t->stop_ns);
	if (!chan)
		return;
	/*
	 * One line per relay file: index, counters (a global channel's one
	 * stream has all of them, NMI refusals included), relay's counts of
	 * sub-buffers produced and consumed, the reader's position and the
	 * seq of the sub-buffer being written.
	 */
	for_each_possible_cpu(cpu) {
		struct rchan_buf *buf = *per_cpu_ptr(chan->buf, cpu);
		struct ktrace_subbuf *sb;

		if (!buf)
			continue;
		if (t->flags & TRACE_GLOBAL_CHANNEL)
			kt_stats(t, -1, &w, &d, &o);
		else
			kt_stats(t, cpu, &w, &d, &o);
		sb = READ_ONCE(buf->data);
		kt_text_add(txt, cap,
			    "stream %u written %llu dropped %llu overwritten %llu produced %zu consumed %zu next %llu current %llu\n",
			    buf->cpu, w, d, o, READ_ONCE(buf->subbufs_produced),
			    READ_ONCE(buf->subbufs_consumed),
			    READ_ONCE(per_cpu_ptr(t->pcpu, (t->flags & TRACE_GLOBAL_CHANNEL) ? 0 : cpu)->rd_next),
			    READ_ONCE(sb->seq));
		if (t->flags & TRACE_GLOBAL_CHANNEL)
			break;
	}
}

static void kt_catalog_fill(struct trace_info *t, struct kt_text *txt, size_t cap)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t->funcs); i++)
		if (t->funcs[i])
			kt_text_add(txt, cap, "func %u %s\n", i, t->funcs[i]);
	for (i = 0; i < t->nevents; i++) {
		struct kt_event *e = &t->events[i];

		kt_text_add(txt, cap, "event %u %s %s %s %s\n", e->id, e->is_log4 ? "log4" : "log2",
			    e->name, e->category, e->args);
	}
	if (t->catalog_extra) /* the LKST channel's kevent/unavailable lines */
		kt_text_add(txt, cap, "%s", t->catalog_extra);
}

/**
 * kt_catalog_text() - the text of @t's catalog file, for the crash region.
 * @t:   the channel (mutex held).
 * @len: out: bytes of text.
 * Return: a kvmalloc()ed buffer (kvfree() it), or NULL.
 */
char *kt_catalog_text(struct trace_info *t, size_t *len)
{
	size_t cap = kt_text_size() - sizeof(struct kt_text);
	struct kt_text *txt = kvzalloc(kt_text_size(), GFP_KERNEL);

	lockdep_assert_held(&t->mutex);
	if (!txt)
		return NULL;
	kt_catalog_fill(t, txt, cap);
	*len = txt->len;
	memmove(txt, txt->buf, txt->len);
	return (char *)txt;
}

static int kt_text_open(struct inode *inode, struct file *f,
			void (*fill)(struct trace_info *, struct kt_text *, size_t))
{
	struct trace_info *t = inode->i_private;
	size_t cap = kt_text_size() - sizeof(struct kt_text);
	struct kt_text *txt;

	txt = kvzalloc(kt_text_size(), GFP_KERNEL);
	if (!txt)
		return -ENOMEM;
	mutex_lock(&t->mutex);
	if (t->dead) {
		mutex_unlock(&t->mutex);
		kvfree(txt);
		return -ENODEV;
	}
	fill(t, txt, cap);
	mutex_unlock(&t->mutex);
	f->private_data = txt;
	return 0;
}

static int kt_info_open(struct inode *inode, struct file *f)
{
	return kt_text_open(inode, f, kt_info_fill);
}

static int kt_catalog_open(struct inode *inode, struct file *f)
{
	return kt_text_open(inode, f, kt_catalog_fill);
}

static const struct file_operations kt_info_fops = {
	.owner = THIS_MODULE,
	.open = kt_info_open,
	.read = kt_text_read,
	.release = kt_text_release,
	.llseek = default_llseek,
};

static const struct file_operations kt_catalog_fops = {
	.owner = THIS_MODULE,
	.open = kt_catalog_open,
	.read = kt_text_read,
	.release = kt_text_release,
	.llseek = default_llseek,
};

/**
 * kt_create_files() - the control files of @t in t->dir.
 * @t: the channel.
 * Return: 0 or a negative errno.
 */
int kt_create_files(struct trace_info *t)
{
	umode_t state_mode = (t->flags & TRACE_DISABLE_STATE) ? 0400 : 0600;
	struct dentry *d;

	d = debugfs_create_file("state", state_mode, t->dir, t, &kt_state_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("dropped", 0400, t->dir, t, &kt_dropped_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("info", 0400, t->dir, t, &kt_info_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("buf_size", 0600, t->dir, t, &kt_size_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("buf_nr", 0600, t->dir, t, &kt_nr_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("consumed", 0600, t->dir, t, &kt_consumed_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = debugfs_create_file("catalog", 0400, t->dir, t, &kt_catalog_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Catalogue                                                           */
/* ------------------------------------------------------------------ */

static bool kt_valid_word(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, KT_NAME_MAX);
	if (n == 0 || n >= KT_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

int trace_catalog_func(struct trace_info *trace, u8 func, const char *name)
{
	char *copy;

	if (!kt_valid_word(name))
		return -EINVAL;
	copy = kstrdup(name, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	mutex_lock(&trace->mutex);
	kfree(trace->funcs[func]);
	trace->funcs[func] = copy;
	mutex_unlock(&trace->mutex);
	return 0;
}
EXPORT_SYMBOL_GPL(trace_catalog_func);

int trace_catalog_event(struct trace_info *trace, u8 func, u8 event, const char *name,
			const char *category, const char *args, bool is_log4)
{
	struct kt_event e = { .id = KTRACE_EVENT_ID(func, event), .is_log4 = is_log4 };
	unsigned int i;
	int ret = 0;

	if (!category)
		category = "default";
	if (!args)
		args = "-";
	if (!kt_valid_word(name) || !kt_valid_word(category) || !kt_valid_word(args))
		return -EINVAL;
	e.name = kstrdup(name, GFP_KERNEL);
	e.category = kstrdup(category, GFP_KERNEL);
	e.args = kstrdup(args, GFP_KERNEL);
	if (!e.name || !e.category || !e.args) {
		ret = -ENOMEM;
		goto free;
	}

	mutex_lock(&trace->mutex);
	for (i = 0; i < trace->nevents; i++) {
		if (trace->events[i].id == e.id) {
			swap(trace->events[i], e); /* replace; free the old one */
			goto unlock;
		}
	}
	if (!trace->events) {
		trace->events = kcalloc(KT_MAX_EVENTS, sizeof(*trace->events), GFP_KERNEL);
		if (!trace->events) {
			ret = -ENOMEM;
			goto unlock;
		}
	}
	if (trace->nevents >= KT_MAX_EVENTS) {
		ret = -ENOSPC;
		goto unlock;
	}
	trace->events[trace->nevents++] = e;
	mutex_unlock(&trace->mutex);
	return 0;
unlock:
	mutex_unlock(&trace->mutex);
free:
	kfree(e.name);
	kfree(e.category);
	kfree(e.args);
	return ret;
}
EXPORT_SYMBOL_GPL(trace_catalog_event);

// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_fs.c - the debugfs control files of the LKST tracer, next to the
 * LKST channel's own files in ktrace/lkst/ (state, info, trace0..N, ...):
 *
 *   events    0400  one line per catalogue event:
 *                   ID NAME CATEGORY SYSTEM:TRACEPOINT STATUS PROBE HANDLER
 *                   HITS WRITTEN DROPPED
 *                   ID in hex (0x01), STATUS available or unavailable,
 *                   PROBE on/off (attached now), HANDLER the current
 *                   maskset's handler id, counters since the last start:
 *                   HITS events handed to a handler, WRITTEN records stored
 *                   by ktrace_lkst_log(), DROPPED records it was refused
 *   handlers  0400  "ID NAME CALLS" per handler: 1 DEFAULT, 255 NOTHING and
 *                   the registered extended handlers
 *   masksets  0600  read: every maskset, "maskset ID NAME system|user
 *                   [current]" followed by its entries "0xEV HANDLER" (only
 *                   events not connected to NOTHING);
 *                   write, one command per write() (at most 16 KiB):
 *                     write N [NAME]\n EVENT HANDLER\n ...   create or
 *                                replace user maskset N (3..63) with
 *                                exactly these entries (none: a null
 *                                maskset)
 *                     config N EVENT HANDLER   change one entry
 *                     set N                    make N current, on the fly
 *                     delete N                 remove user maskset N
 *                   N is an id or a maskset name, EVENT an event id
 *                   (decimal, or hex with 0x) or mnemonic, HANDLER an id
 *                   or name (DEFAULT, NOTHING, an extended handler).
 *                   Errors: EINVAL (syntax), ENOENT (unknown maskset,
 *                   event or handler), EPERM (a system maskset), EBUSY
 *                   (deleting the current one), EEXIST (name taken); a
 *                   failed command changes nothing.
 *   current   0600  "ID NAME" of the current maskset; write an id or name
 *                   to switch (as "set")
 *   hooks     0600  user-placed hooks: list, `add`, `del` (lkst_hooks.c)
 *
 * The text the LKST channel's `catalog` file adds for the trace metadata
 * (an `event ID kevent NAME CATEGORY ARGS` line per available event, an
 * `unavailable ID NAME REASON` line per other one, an `event ID kevent
 * FUNC+OFFSET hook ARGS` line per hook) is built here at load and again
 * whenever the hooks change (kt_lkst_catalog_refresh()).
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "lkst_internal.h"

#define KT_LKST_CMD_MAX (16 * 1024)

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

/* A whole decimal number, or hex with 0x (lkst_internal.h). */
int kt_parse_num(const char *s, unsigned int *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!s[2] || strspn(s + 2, "0123456789abcdefABCDEF") != strlen(s + 2))
			return -EINVAL;
		return kstrtouint(s + 2, 16, v);
	}
	if (!s[0] || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	return kstrtouint(s, 10, v);
}

/* Event token: a catalogue id or mnemonic.  Return: id, -EINVAL, -ENOENT. */
static int kt_parse_event(const char *s)
{
	struct kt_lkst_ev *e;
	unsigned int v;

	if (isdigit(s[0])) {
		if (kt_parse_num(s, &v))
			return -EINVAL;
		e = kt_lkst_ev_by_id(v);
	} else {
		e = kt_lkst_ev_by_name(s);
	}
	return e ? e->id : -ENOENT;
}

/* Handler token: an id or name.  Return: id, -EINVAL, -ENOENT. */
static int kt_parse_handler(const char *s)
{
	unsigned int v;

	if (isdigit(s[0])) {
		if (kt_parse_num(s, &v))
			return -EINVAL;
		if (v == 0 || v > 255 || !kt_lkst_handler_name(v))
			return -ENOENT;
		return v;
	}
	return kt_lkst_handler_by_name(s);
}

/* Maskset token: an id (need not exist) or an existing maskset's name. */
static int kt_parse_maskset(const char *s)
{
	unsigned int v;

	if (isdigit(s[0])) {
		if (kt_parse_num(s, &v))
			return -EINVAL;
		return v < KT_LKST_NR_MASKSETS ? (int)v : -EINVAL;
	}
	return kt_lkst_maskset_by_name(s);
}

static bool kt_valid_maskset_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= KTRACE_LKST_NAME_MAX || isdigit(s[0]))
		return false;
	for (; *s; s++)
		if (!isalnum(*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* Split @line into at most @max space/tab separated tokens. */
static int kt_tokens(char *line, char **tok, int max)
{
	int n = 0;
	char *t;

	while ((t = strsep(&line, " \t")) != NULL) {
		if (!*t)
			continue;
		if (n == max)
			return -EINVAL;
		tok[n++] = t;
	}
	return n;
}

/* "write N [NAME]" followed by entry lines in @rest (may be NULL). */
static int kt_cmd_write(char **tok, int n, char *rest)
{
	u8 *handler;
	char *line, *t[3];
	int id, ev, h, k, ret;

	if (n < 2 || n > 3)
		return -EINVAL;
	id = kt_parse_maskset(tok[1]);
	if (id < 0)
		return id;
	if (n == 3 && !kt_valid_maskset_name(tok[2]))
		return -EINVAL;
	handler = kmalloc(KTRACE_LKST_MAX_ID, GFP_KERNEL);
	if (!handler)
		return -ENOMEM;
	memset(handler, KTRACE_LKST_HANDLER_NOTHING, KTRACE_LKST_MAX_ID);
	while ((line = strsep(&rest, "\n")) != NULL) {
		k = kt_tokens(line, t, 2);
		if (k == 0)
			continue;
		if (k != 2) {
			ret = -EINVAL;
			goto out;
		}
		ev = kt_parse_event(t[0]);
		h = kt_parse_handler(t[1]);
		if (ev < 0 || h < 0) {
			ret = ev < 0 ? ev : h;
			goto out;
		}
		handler[ev] = h;
	}
	ret = kt_lkst_maskset_write(id, n == 3 ? tok[2] : NULL, handler);
out:
	kfree(handler);
	return ret;
}

static int kt_run_command(char *buf)
{
	char *rest = buf, *first, *tok[5];
	int n, id, ev, h;

	first = strsep(&rest, "\n");
	n = kt_tokens(first, tok, ARRAY_SIZE(tok));
	if (n <= 0)
		return -EINVAL;
	if (!strcmp(tok[0], "write"))
		return kt_cmd_write(tok, n, rest);
	/* one-line commands: nothing may follow but the final newline */
	if (rest && *rest)
		return -EINVAL;
	if (!strcmp(tok[0], "config")) {
		if (n != 4)
			return -EINVAL;
		id = kt_parse_maskset(tok[1]);
		ev = kt_parse_event(tok[2]);
		h = kt_parse_handler(tok[3]);
		if (id < 0 || ev < 0 || h < 0)
			return id < 0 ? id : ev < 0 ? ev : h;
		return kt_lkst_maskset_config(id, ev, h);
	}
	if (!strcmp(tok[0], "set") || !strcmp(tok[0], "delete")) {
		if (n != 2)
			return -EINVAL;
		id = kt_parse_maskset(tok[1]);
		if (id < 0)
			return id;
		return tok[0][0] == 's' ? kt_lkst_maskset_set(id) : kt_lkst_maskset_delete(id);
	}
	return -EINVAL;
}

/* Copy a whole command from user space (one write(), offset 0). */
static char *kt_get_command(const char __user *ubuf, size_t count, loff_t *ppos, size_t max)
{
	char *buf;

	if (*ppos != 0 || count == 0 || count > max)
		return ERR_PTR(-EINVAL);
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return buf;
	if (strlen(buf) != count) { /* a NUL inside */
		kfree(buf);
		return ERR_PTR(-EINVAL);
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* events, handlers                                                    */
/* ------------------------------------------------------------------ */

static int kt_events_show(struct seq_file *m, void *v)
{
	const struct kt_maskset *cur;
	struct kt_lkst_ev *e;
	unsigned int i;

	seq_puts(m, "# id name category tracepoint status probe handler hits written dropped\n");
	mutex_lock(&kt_lkst_lock);
	cur = kt_lkst_maskset(kt_lkst_current_id());
	kt_lkst_for_each_ev(e, i) {
		u64 hits, written, dropped;

		kt_lkst_counters(e->id, &hits, &written, &dropped);
		seq_printf(m, "0x%02x %s %s %s%s%s %s %s %u %llu %llu %llu\n", e->id, e->name,
			   e->category, e->tp_name[0] ? e->system : "-", e->tp_name[0] ? ":" : "",
			   e->tp_name, kt_lkst_ev_available(e) ? "available" : "unavailable",
			   e->registered ? "on" : "off", cur ? cur->handler[e->id] : 255, hits,
			   written, dropped);
	}
	mutex_unlock(&kt_lkst_lock);
	return 0;
}

static int kt_handlers_show(struct seq_file *m, void *v)
{
	unsigned int i;

	seq_puts(m, "# id name calls\n");
	mutex_lock(&kt_lkst_lock);
	for (i = 1; i < 256; i++) {
		const char *name = kt_lkst_handler_name(i);

		if (name)
			seq_printf(m, "%u %s %llu\n", i, name, kt_lkst_handler_calls(i));
	}
	mutex_unlock(&kt_lkst_lock);
	return 0;
}

static int kt_events_open(struct inode *inode, struct file *f)
{
	return single_open(f, kt_events_show, inode->i_private);
}

static int kt_handlers_open(struct inode *inode, struct file *f)
{
	return single_open(f, kt_handlers_show, inode->i_private);
}

static const struct file_operations kt_events_fops = {
	.owner = THIS_MODULE,
	.open = kt_events_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static const struct file_operations kt_handlers_fops = {
	.owner = THIS_MODULE,
	.open = kt_handlers_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ------------------------------------------------------------------ */
/* masksets                                                            */
/* ------------------------------------------------------------------ */

static int kt_masksets_show(struct seq_file *m, void *v)
{
	unsigned int i, j;
	int cur;

	mutex_lock(&kt_lkst_lock);
	cur = kt_lkst_current_id();
	for (i = 0; i < KT_LKST_NR_MASKSETS; i++) {
		const struct kt_maskset *ms = kt_lkst_maskset(i);

		if (!ms)
			continue;
		seq_printf(m, "maskset %u %s %s%s\n", i, ms->name, ms->system ? "system" : "user",
			   (int)i == cur ? " current" : "");
		for (j = 0; j < KTRACE_LKST_MAX_ID; j++)
			if (ms->handler[j] != KTRACE_LKST_HANDLER_NOTHING)
				seq_printf(m, "0x%02x %u\n", j, ms->handler[j]);
	}
	mutex_unlock(&kt_lkst_lock);
	return 0;
}

static int kt_masksets_open(struct inode *inode, struct file *f)
{
	return single_open(f, kt_masksets_show, inode->i_private);
}

static ssize_t kt_masksets_write(struct file *f, const char __user *ubuf, size_t count,
				 loff_t *ppos)
{
	char *buf;
	int ret;

	buf = kt_get_command(ubuf, count, ppos, KT_LKST_CMD_MAX);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&kt_lkst_lock);
	ret = kt_lkst_dead ? -ENODEV : kt_run_command(buf);
	mutex_unlock(&kt_lkst_lock);
	kfree(buf);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static const struct file_operations kt_masksets_fops = {
	.owner = THIS_MODULE,
	.open = kt_masksets_open,
	.read = seq_read,
	.write = kt_masksets_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ------------------------------------------------------------------ */
/* current                                                             */
/* ------------------------------------------------------------------ */

static int kt_current_show(struct seq_file *m, void *v)
{
	const struct kt_maskset *ms;
	int id;

	mutex_lock(&kt_lkst_lock);
	id = kt_lkst_current_id();
	ms = kt_lkst_maskset(id);
	seq_printf(m, "%d %s\n", id, ms ? ms->name : "-");
	mutex_unlock(&kt_lkst_lock);
	return 0;
}

static int kt_current_open(struct inode *inode, struct file *f)
{
	return single_open(f, kt_current_show, inode->i_private);
}

static ssize_t kt_current_write(struct file *f, const char __user *ubuf, size_t count,
				loff_t *ppos)
{
	char *buf, *v;
	size_t len;
	int ret, id;

	buf = kt_get_command(ubuf, count, ppos, 31);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	v = buf;
	len = strlen(v);
	if (len && v[len - 1] == '\n')
		v[--len] = '\0';
	mutex_lock(&kt_lkst_lock);
	if (kt_lkst_dead) {
		ret = -ENODEV;
	} else if (!len || strpbrk(v, " \t\n")) {
		ret = -EINVAL;
	} else {
		id = kt_parse_maskset(v);
		ret = id < 0 ? id : kt_lkst_maskset_set(id);
	}
	mutex_unlock(&kt_lkst_lock);
	kfree(buf);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static const struct file_operations kt_current_fops = {
	.owner = THIS_MODULE,
	.open = kt_current_open,
	.read = seq_read,
	.write = kt_current_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ------------------------------------------------------------------ */
/* hooks (lkst_hooks.c)                                                */
/* ------------------------------------------------------------------ */

static int kt_hooks_show(struct seq_file *m, void *v)
{
	mutex_lock(&kt_lkst_lock);
	kt_lkst_hooks_show(m);
	mutex_unlock(&kt_lkst_lock);
	return 0;
}

static int kt_hooks_open(struct inode *inode, struct file *f)
{
	return single_open(f, kt_hooks_show, inode->i_private);
}

/*
 * A hook changes the catalogue, which the channel's `catalog` file reads
 * under the channel's mutex: take it first (the lock order of
 * lkst_internal.h), then kt_lkst_lock.
 */
static ssize_t kt_hooks_write(struct file *f, const char __user *ubuf, size_t count,
			      loff_t *ppos)
{
	struct trace_info *t = kt_lkst_chan;
	char *buf;
	int ret;

	buf = kt_get_command(ubuf, count, ppos, 512);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&t->mutex);
	mutex_lock(&kt_lkst_lock);
	if (kt_lkst_dead || t->dead) {
		ret = -ENODEV;
	} else {
		ret = kt_lkst_hooks_command(buf);
		if (!ret)
			kt_lkst_catalog_refresh(); /* -ENOMEM: the old one stays */
	}
	mutex_unlock(&kt_lkst_lock);
	mutex_unlock(&t->mutex);
	kfree(buf);
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

static const struct file_operations kt_hooks_fops = {
	.owner = THIS_MODULE,
	.open = kt_hooks_open,
	.read = seq_read,
	.write = kt_hooks_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

/**
 * kt_lkst_create_files() - the LKST files in the channel directory of @t.
 * Return: 0 or a negative errno.
 */
int kt_lkst_create_files(struct trace_info *t)
{
	static const struct {
		const char *name;
		umode_t mode;
		const struct file_operations *fops;
	} files[] = {
		{ "events", 0400, &kt_events_fops },
		{ "handlers", 0400, &kt_handlers_fops },
		{ "masksets", 0600, &kt_masksets_fops },
		{ "current", 0600, &kt_current_fops },
		{ "hooks", 0600, &kt_hooks_fops },
	};
	struct dentry *d;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		d = debugfs_create_file(files[i].name, files[i].mode, t->dir, NULL, files[i].fops);
		if (IS_ERR(d))
			return PTR_ERR(d);
	}
	return 0;
}

/**
 * kt_lkst_catalog_text() - the metadata lines of the event catalogue on
 * this kernel and of the hooks (kmalloc'ed; NULL on -ENOMEM).  After
 * kt_lkst_find_tracepoints(); kt_lkst_lock held once hooks may exist.
 */
char *kt_lkst_catalog_text(void)
{
	/* hooks: "event 255 kevent FUNC+OFFSET hook a1,a2,a3,a4", < 200 bytes */
	size_t cap = 160 * kt_lkst_nevents +
		     200 * (KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST + 1) + 1;
	size_t len = 0;
	char *s = kmalloc(cap, GFP_KERNEL), reason[96];
	unsigned int i;

	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < kt_lkst_nevents; i++) {
		const struct kt_lkst_ev *e = &kt_lkst_events[i];

		if (kt_lkst_ev_available(e))
			len += scnprintf(s + len, cap - len, "event %u kevent %s %s %s\n", e->id,
					 e->name, e->category, e->args[0] ? e->args : "-");
		else
			len += scnprintf(s + len, cap - len, "unavailable %u %s %s\n", e->id,
					 e->name, kt_lkst_ev_reason(e, reason, sizeof(reason)));
	}
	kt_lkst_hooks_catalog(s, len, cap);
	return s;
}

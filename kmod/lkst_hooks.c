// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_hooks.c - LKST's user-placed hooks ("place hooks in arbitrary kernel
 * source code locations", seed 001) on today's kernels: an event on any
 * kernel function, FUNC+OFFSET, through a kprobe, with an id in the user
 * range of the catalogue (KTRACE_LKST_HOOK_FIRST..LAST, include/ktrace/
 * lkst.h), handled by handlers and masksets exactly like the tracepoint
 * events of lkst_events.c.
 *
 * debugfs ktrace/lkst/hooks (0600):
 *   read   "# id name function offset args probe state hits missed", then
 *          one line per hook: ID (hex) NAME (FUNC+OFFSET) FUNC OFFSET ARGS
 *          ("-" for none) PROBE (ftrace: an ftrace-based kprobe at the
 *          function's entry; kprobe: a breakpoint, which the kprobe
 *          optimizer may turn into a jump, shown as [OPTIMIZED] in
 *          debugfs kprobes/list: the optimized probe is the kprobes core's
 *          own aggregate, out of a module's sight; - for a deleted hook)
 *          STATE (on: enabled now; off; deleted: removed,
 *          still named in the catalogue until the next start) HITS (events
 *          handed to a handler since the last start) MISSED (the kprobe's
 *          nmissed: hits it could not handle because another kprobe was
 *          running on that CPU)
 *   write  one command per write():
 *            add ID|auto FUNC[+OFFSET] [ARGS]   ARGS = a1..a6 comma-separated,
 *                                               at most 4, or "-"
 *            del ID|NAME
 *          Errors: EINVAL (syntax), EBUSY (the id is taken), EEXIST (a hook
 *          on FUNC+OFFSET exists), ENOSPC (no free id), ERANGE (OFFSET is
 *          not inside FUNC), and register_kprobe()'s refusals: ENOENT (no
 *          such symbol), EPERM (the kernel forbids a probe there: kprobe
 *          blacklist, noinstr or entry code, not kernel text; the kernel
 *          says EINVAL, which here means syntax), EILSEQ (not an
 *          instruction boundary, or inside the ftrace call at the entry).
 *
 * Life of a hook.  `add` registers a kprobe on symbol_name + offset,
 * disabled (kallsyms_lookup_name is not exported; register_kprobe()
 * resolves the name and checks the location), checks with sprint_symbol()
 * that the address is still inside FUNC, enters the event (id, name,
 * category "hook", args) into the event table, and connects it to DEFAULT
 * in RALL.  Like every probe of LKST it is enabled only while the tracer
 * runs and the current maskset connects it to a handler (lkst_maskset.c:
 * enable_kprobe()/disable_kprobe() in place of tracepoint_probe_register()
 * and unregister).  `del` makes every maskset's entry NOTHING, disables the
 * kprobe and unregisters it (unregister_kprobe() waits until no CPU runs
 * the handler), then frees it.  The deleted hook's name stays in the
 * catalogue until the next start, so a trace read across the deletion
 * still names its records; `auto` prefers ids never used since then.
 * Unloading ktrace.ko removes every hook after the tracer stopped.
 *
 * The pre-handler does what a tracepoint probe does: the current maskset's
 * handler for the id, NOTHING returns at once, else a struct ktrace_kevent
 * (word 0 pid | tgid << 32, then the arguments asked for, read with
 * regs_get_kernel_argument(): the function's arguments at its entry; at
 * another offset, whatever those registers hold there) goes to
 * kt_lkst_dispatch().  An argument in the kernel's half of the address
 * space is recorded as 0 with its hidden bit set in word 0 (a trace shows
 * nothing of the kernel's layout, lkst.h; readers print "hidden"), except
 * -4095..-1 (error codes); so a kernel pointer argument reads hidden, and
 * so would a 64-bit negative number below -4095.  Anything below the
 * kernel's half stays, LLONG_MAX (vfs_fsync_range's end) included.
 * Context: a kprobe's, preemption disabled.  A hook at
 * a function's entry is an ftrace-based kprobe (CONFIG_KPROBES_ON_FTRACE)
 * and runs in the traced code's context; a hook elsewhere is a breakpoint,
 * whose handler runs in the int3 exception, which x86 enters as an NMI:
 * there the relay channel refuses the record (counted as dropped, as for
 * EXCEPTION_NMI), until the kprobe optimizer turns the breakpoint into a
 * jump (CONFIG_OPTPROBES, some milliseconds after enabling, when the
 * instructions allow it; the VM suite checks both cases at
 * shmem_file_llseek+5).  The `hooks` file shows ftrace or kprobe, debugfs
 * kprobes/list whether a kprobe is [OPTIMIZED].
 */
#include <linux/ctype.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "lkst_internal.h"

#define KT_HOOK_NR (KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST + 1)
#define KT_HOOK_SYM_MAX 128    /* function name + NUL */
#define KT_HOOK_NAME_MAX 144   /* FUNC+OFFSET + NUL */
#define KT_HOOK_OFF_MAX 0xfffff
#define KT_HOOK_NREGARGS 6     /* a1..a6 */

enum kt_hook_state { KT_HOOK_ACTIVE = 1, KT_HOOK_DELETED };

struct kt_lkst_hook {
	struct kprobe kp;
	struct kt_lkst_ev ev;      /* its entry in the event table */
	enum kt_hook_state state;
	u8 id;
	u8 nargs;
	u8 argn[KTRACE_LKST_HOOK_MAX_ARGS]; /* 0-based argument numbers */
	unsigned int offset;
	char sym[KT_HOOK_SYM_MAX];
	char name[KT_HOOK_NAME_MAX];
	char args[4 * KTRACE_LKST_HOOK_MAX_ARGS]; /* "a1,a2" or "" */
};

/* by id - KTRACE_LKST_HOOK_FIRST; kt_lkst_lock */
static struct kt_lkst_hook *kt_hooks[KT_HOOK_NR];

static struct kt_lkst_hook *kt_hook_at(unsigned int id)
{
	return KTRACE_LKST_IS_HOOK(id) ? kt_hooks[id - KTRACE_LKST_HOOK_FIRST] : NULL;
}

/* ------------------------------------------------------------------ */
/* The kprobe handler                                                  */
/* ------------------------------------------------------------------ */

static int kt_hook_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kt_lkst_hook *hk = container_of(kp, struct kt_lkst_hook, kp);
	u8 h = kt_handler_for(hk->id);
	struct ktrace_kevent ev;
	u64 hidden = 0;
	unsigned int i;

	if (h == KTRACE_LKST_HANDLER_NOTHING)
		return 0;
	ev.id = hk->id;
	ev.nargs = hk->nargs;
	ev.w[0] = kt_self();
	for (i = 0; i < hk->nargs; i++) {
		unsigned long v = regs_get_kernel_argument(regs, hk->argn[i]);

		/* no kernel address in a trace (lkst.h): 0, marked hidden;
		 * error codes and the rest of the user half stay */
		if (kt_kernel_half(v) && !IS_ERR_VALUE(v)) {
			v = 0;
			hidden |= KTRACE_KEVENT_HIDE(i);
		}
		ev.w[1 + i] = v;
	}
	ev.w[0] |= hidden;
	kt_lkst_dispatch(h, &ev);
	return 0; /* go on with the probed instruction */
}

/**
 * kt_lkst_hook_enable() - enable @e's kprobe (what registering a
 * tracepoint probe is for the catalogue's events).  Context: kt_lkst_lock.
 * Return: 0 or enable_kprobe()'s error.
 */
int kt_lkst_hook_enable(struct kt_lkst_ev *e)
{
	return enable_kprobe(&e->hook->kp);
}

/**
 * kt_lkst_hook_disable() - disable @e's kprobe; the caller waits (RCU)
 * before relying on the handler not running.  Context: kt_lkst_lock.
 */
void kt_lkst_hook_disable(struct kt_lkst_ev *e)
{
	disable_kprobe(&e->hook->kp);
}

/* ------------------------------------------------------------------ */
/* Adding and removing                                                 */
/* ------------------------------------------------------------------ */

/* "a1,a3" -> argn[] (0-based); "-" none.  Return: count or -EINVAL. */
static int kt_hook_parse_args(const char *s, u8 *argn)
{
	unsigned int n = 0, i;

	if (!strcmp(s, "-"))
		return 0;
	for (;;) {
		if (s[0] != 'a' || s[1] < '1' || s[1] > '0' + KT_HOOK_NREGARGS ||
		    (s[2] && s[2] != ','))
			return -EINVAL;
		if (n == KTRACE_LKST_HOOK_MAX_ARGS)
			return -EINVAL;
		for (i = 0; i < n; i++)
			if (argn[i] == s[1] - '1')
				return -EINVAL;
		argn[n++] = s[1] - '1';
		if (!s[2])
			return n;
		s += 3;
	}
}

/* Is @addr, found by kprobes for @hk, at hk->offset inside hk->sym? */
static bool kt_hook_inside(const struct kt_lkst_hook *hk)
{
	char buf[KSYM_SYMBOL_LEN], *plus;
	unsigned long off, size;

	sprint_symbol(buf, (unsigned long)hk->kp.addr); /* "name+0x10/0x80 [mod]" */
	plus = strrchr(buf, '+');
	if (!plus)
		return false;
	if (sscanf(plus, "+%lx/%lx", &off, &size) != 2)
		return false;
	return off == hk->offset && off < size;
}

static void kt_hook_reset_counters(unsigned int id)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(&per_cpu_ptr(kt_lkst_pcpu, cpu)->ev[id], 0, sizeof(struct kt_lkst_count));
}

/* Free slot for `auto`: never used since the last start first. */
static int kt_hook_free_id(void)
{
	unsigned int i;

	for (i = 0; i < KT_HOOK_NR; i++)
		if (!kt_hooks[i])
			return KTRACE_LKST_HOOK_FIRST + i;
	for (i = 0; i < KT_HOOK_NR; i++)
		if (kt_hooks[i]->state == KT_HOOK_DELETED)
			return KTRACE_LKST_HOOK_FIRST + i;
	return -ENOSPC;
}

/* "add ID|auto FUNC[+OFFSET] [ARGS]" */
static int kt_hook_add(char **tok, int n)
{
	struct kt_lkst_hook *hk, *old;
	unsigned int id, off = 0, i;
	char *plus;
	int ret, nargs = 0;

	if (n < 3 || n > 4)
		return -EINVAL;
	if (!strcmp(tok[1], "auto")) {
		ret = kt_hook_free_id();
		if (ret < 0)
			return ret;
		id = ret;
	} else if (kt_parse_num(tok[1], &id) || !KTRACE_LKST_IS_HOOK(id)) {
		return -EINVAL;
	}
	hk = kzalloc(sizeof(*hk), GFP_KERNEL);
	if (!hk)
		return -ENOMEM;
	plus = strchr(tok[2], '+');
	if (plus) {
		*plus = '\0';
		if (kt_parse_num(plus + 1, &off) || off > KT_HOOK_OFF_MAX) {
			ret = -EINVAL;
			goto err_free;
		}
	}
	if (!tok[2][0] || strlen(tok[2]) >= KT_HOOK_SYM_MAX ||
	    strspn(tok[2], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.") !=
		    strlen(tok[2]) || isdigit(tok[2][0])) {
		ret = -EINVAL;
		goto err_free;
	}
	if (n == 4) {
		nargs = kt_hook_parse_args(tok[3], hk->argn);
		if (nargs < 0) {
			ret = nargs;
			goto err_free;
		}
	}
	strscpy(hk->sym, tok[2], sizeof(hk->sym));
	snprintf(hk->name, sizeof(hk->name), "%s+%u", hk->sym, off);
	for (i = 0; i < (unsigned int)nargs; i++)
		snprintf(hk->args + strlen(hk->args), sizeof(hk->args) - strlen(hk->args),
			 "%sa%u", i ? "," : "", hk->argn[i] + 1);
	hk->id = id;
	hk->nargs = nargs;
	hk->offset = off;

	old = kt_hook_at(id);
	if (old && old->state == KT_HOOK_ACTIVE) {
		ret = -EBUSY;
		goto err_free;
	}
	for (i = 0; i < KT_HOOK_NR; i++)
		if (kt_hooks[i] && kt_hooks[i]->state == KT_HOOK_ACTIVE &&
		    !strcmp(kt_hooks[i]->name, hk->name)) {
			ret = -EEXIST;
			goto err_free;
		}

	hk->kp.symbol_name = hk->sym;
	hk->kp.offset = off;
	hk->kp.pre_handler = kt_hook_pre;
	hk->kp.flags = KPROBE_FLAG_DISABLED;
	ret = register_kprobe(&hk->kp);
	if (ret) {
		/* register_kprobe() says EINVAL for a forbidden place */
		if (ret == -EINVAL)
			ret = -EPERM;
		goto err_free;
	}
	if (!kt_hook_inside(hk)) {
		ret = -ERANGE;
		goto err_unreg;
	}

	hk->ev.id = id;
	hk->ev.nargs = nargs;
	hk->ev.name = hk->name;
	hk->ev.category = "hook";
	hk->ev.system = "kprobe";
	hk->ev.tp_name = hk->name;
	hk->ev.args = hk->args;
	hk->ev.hook = hk;
	hk->state = KT_HOOK_ACTIVE;
	kt_hook_reset_counters(id);
	kt_lkst_ev_set(id, &hk->ev);
	ret = kt_lkst_event_added(id);
	if (ret) {
		kt_lkst_event_removed(id);
		kt_lkst_ev_set(id, NULL);
		goto err_unreg;
	}
	kt_hooks[id - KTRACE_LKST_HOOK_FIRST] = hk;
	kfree(old); /* a deleted hook's name: replaced */
	return 0;

err_unreg:
	unregister_kprobe(&hk->kp);
err_free:
	kfree(hk);
	return ret;
}

/* Remove active hook @hk: no CPU runs its handler afterwards. */
static void kt_hook_remove(struct kt_lkst_hook *hk)
{
	kt_lkst_event_removed(hk->id); /* masksets NOTHING, probe disabled */
	kt_lkst_ev_set(hk->id, NULL);
	unregister_kprobe(&hk->kp);    /* waits for running handlers */
	hk->ev.registered = false;
	hk->state = KT_HOOK_DELETED;
}

/* "del ID|NAME" */
static int kt_hook_del(char **tok, int n)
{
	struct kt_lkst_hook *hk = NULL;
	unsigned int id, i;

	if (n != 2)
		return -EINVAL;
	if (isdigit(tok[1][0])) {
		if (kt_parse_num(tok[1], &id) || !KTRACE_LKST_IS_HOOK(id))
			return -EINVAL;
		hk = kt_hook_at(id);
	} else {
		for (i = 0; i < KT_HOOK_NR; i++)
			if (kt_hooks[i] && kt_hooks[i]->state == KT_HOOK_ACTIVE &&
			    !strcmp(kt_hooks[i]->name, tok[1]))
				hk = kt_hooks[i];
	}
	if (!hk || hk->state != KT_HOOK_ACTIVE)
		return -ENOENT;
	kt_hook_remove(hk);
	return 0;
}

/**
 * kt_lkst_hooks_command() - run one command written to ktrace/lkst/hooks
 * (@buf, NUL-terminated, at most one trailing newline).  The caller
 * refreshes the catalogue afterwards.
 * Context: process, the LKST channel's mutex and kt_lkst_lock held.
 * Return: 0 or a negative errno (see the top of the file).
 */
int kt_lkst_hooks_command(char *buf)
{
	char *tok[5], *t, *line = buf;
	size_t len = strlen(buf);
	int n = 0;

	lockdep_assert_held(&kt_lkst_lock);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (strchr(buf, '\n'))
		return -EINVAL;
	while ((t = strsep(&line, " \t")) != NULL) {
		if (!*t)
			continue;
		if (n == ARRAY_SIZE(tok))
			return -EINVAL;
		tok[n++] = t;
	}
	if (n == 0)
		return -EINVAL;
	if (!strcmp(tok[0], "add"))
		return kt_hook_add(tok, n);
	if (!strcmp(tok[0], "del"))
		return kt_hook_del(tok, n);
	return -EINVAL;
}

/**
 * kt_lkst_hooks_retire() - forget the deleted hooks (at start: their
 * names leave the catalogue).  Context: kt_lkst_lock held.
 */
void kt_lkst_hooks_retire(void)
{
	unsigned int i;

	lockdep_assert_held(&kt_lkst_lock);
	for (i = 0; i < KT_HOOK_NR; i++) {
		if (kt_hooks[i] && kt_hooks[i]->state == KT_HOOK_DELETED) {
			kfree(kt_hooks[i]);
			kt_hooks[i] = NULL;
		}
	}
}

/**
 * kt_lkst_hooks_remove_all() - at unload, after the tracer stopped and its
 * probes are disabled: unregister and free every hook.
 * Context: kt_lkst_lock held.
 */
void kt_lkst_hooks_remove_all(void)
{
	unsigned int i;

	lockdep_assert_held(&kt_lkst_lock);
	for (i = 0; i < KT_HOOK_NR; i++) {
		if (kt_hooks[i] && kt_hooks[i]->state == KT_HOOK_ACTIVE)
			kt_hook_remove(kt_hooks[i]);
	}
	kt_lkst_hooks_retire();
}

/* ------------------------------------------------------------------ */
/* Listing                                                             */
/* ------------------------------------------------------------------ */

/**
 * kt_lkst_hooks_show() - the text of ktrace/lkst/hooks (see the top).
 * Context: kt_lkst_lock held.
 */
void kt_lkst_hooks_show(struct seq_file *m)
{
	unsigned int i;

	seq_puts(m, "# id name function offset args probe state hits missed\n");
	for (i = 0; i < KT_HOOK_NR; i++) {
		const struct kt_lkst_hook *hk = kt_hooks[i];
		const char *probe = "-", *state = "deleted";
		u64 hits = 0, written, dropped;

		if (!hk)
			continue;
		if (hk->state == KT_HOOK_ACTIVE) {
			unsigned int fl = READ_ONCE(hk->kp.flags);

			probe = fl & KPROBE_FLAG_FTRACE ? "ftrace" : "kprobe";
			state = hk->ev.registered ? "on" : "off";
			kt_lkst_counters(hk->id, &hits, &written, &dropped);
		}
		seq_printf(m, "0x%02x %s %s %u %s %s %s %llu %lu\n", hk->id, hk->name, hk->sym,
			   hk->offset, hk->args[0] ? hk->args : "-", probe, state, hits,
			   hk->state == KT_HOOK_ACTIVE ? hk->kp.nmissed : 0UL);
	}
}

/**
 * kt_lkst_hooks_catalog() - append the hooks' metadata lines, `event ID
 * kevent FUNC+OFFSET hook ARGS`, active and deleted-since-the-last-start
 * ones, to @s (@len used of @cap).  Return: the new length.
 * Context: kt_lkst_lock held.
 */
size_t kt_lkst_hooks_catalog(char *s, size_t len, size_t cap)
{
	unsigned int i;

	for (i = 0; i < KT_HOOK_NR; i++) {
		const struct kt_lkst_hook *hk = kt_hooks[i];

		if (hk)
			len += scnprintf(s + len, cap - len, "event %u kevent %s hook %s\n", hk->id,
					 hk->name, hk->args[0] ? hk->args : "-");
	}
	return len;
}

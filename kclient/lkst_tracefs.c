/*
 * kclient/lkst_tracefs.c - LKST's user-placed hooks on the tracefs backend
 * (`ktrace lkst --tracefs hook add|list|del`): each hook is a kprobe event
 * of group ktrace_lkst named lkst_hook_XX (XX = its id in hex, 0xc0..0xff,
 * include/ktrace/lkst.h), made, listed and removed with libtracefs's
 * dynamic event API (tracefs_kprobe_alloc, tracefs_dynevent_*).  Arguments
 * a1..a6 are fetched from the registers that carry a function's first six
 * arguments on x86-64 (%di %si %dx %cx %r8 %r9; 6.1's kprobe events have
 * no $argN), as u64 fields named a1..a6.  `ktrace record --kernel=hook` (or
 * RALL) records them as KEVENT records with the hook's id
 * (kclient/tracefs_record.c, krec_hook_defs()).
 *
 * The kprobe events are the kernel's, global and persistent: they outlive
 * ktrace (like the module's hooks outlive `ktrace lkst`) until deleted.
 * Hits and misses are kprobe_profile's (since the event was made).
 * API in kclient/kclient.h (kcl_lkst_tf_*).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include <ktrace/lkst.h>

#include "kclient/internal.h"

#define CMD "lkst"

/* "lkst_hook_c0" -> 0xc0, or -1 */
static int hook_id(const char *event)
{
	unsigned v;
	char end;

	if (!event || sscanf(event, "lkst_hook_%2x%c", &v, &end) != 1 || !KTRACE_LKST_IS_HOOK(v) ||
	    strlen(event) != 12)
		return -1;
	return (int)v;
}

/* "a1=%di:u64 a3=%dx:u64" -> "a1,a3" ("-" for none) */
static void args_of(const char *format, char *out, size_t len)
{
	size_t n = 0;

	snprintf(out, len, "-");
	for (const char *p = format ? format : ""; *p;) {
		size_t l;

		p += strspn(p, " \t");
		l = strcspn(p, " \t");
		if (l >= 3 && p[0] == 'a' && p[1] >= '1' && p[1] <= '6' && p[2] == '=' && n + 4 < len)
			n += (size_t)snprintf(out + n, len - n, "%s%.2s", n ? "," : "", p);
		p += l;
	}
}

/* hits and misses of event @name from kprobe_profile's text @prof */
static void profile_of(const char *prof, const char *name, unsigned long long *hits,
		       unsigned long long *missed)
{
	size_t nl = strlen(name);

	*hits = *missed = 0;
	for (const char *p = prof; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *q = p + strspn(p, " ");

		if (!strncmp(q, name, nl) && (q[nl] == ' ' || q[nl] == '\t')) {
			sscanf(q + nl, "%llu %llu", hits, missed);
			return;
		}
	}
}

int kcl_lkst_tf_hooks(struct kcl_lkst_hook **out, size_t *n)
{
	struct tracefs_dynevent **evs;
	struct kcl_lkst_hook *v;
	char *prof;

	*out = NULL;
	*n = 0;
	if (!tracefs_tracing_dir()) {
		kcl_error(CMD, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return -1;
	}
	if (!tracefs_file_exists(NULL, "kprobe_events")) {
		kcl_error(CMD, "%s/kprobe_events: this kernel has no kprobe events (CONFIG_KPROBE_EVENTS)",
			  tracefs_tracing_dir());
		return -1;
	}
	v = calloc(KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST + 1, sizeof(*v));
	if (!v) {
		kcl_error(CMD, "out of memory");
		return -1;
	}
	errno = 0;
	evs = tracefs_dynevent_get_all(TRACEFS_DYNEVENT_KPROBE, KCL_LKST_TF_GROUP);
	prof = evs ? tracefs_instance_file_read(NULL, "kprobe_profile", NULL) : NULL;
	for (size_t i = 0; evs && evs[i]; i++) {
		char *sys = NULL, *ev = NULL, *prefix = NULL, *addr = NULL, *fmt = NULL;
		struct kcl_lkst_hook *h = &v[*n];
		int id;

		tracefs_dynevent_info(evs[i], &sys, &ev, &prefix, &addr, &fmt);
		id = hook_id(ev);
		if (id >= 0 && addr && *n <= KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST) {
			const char *plus = strrchr(addr, '+');

			h->id = (unsigned)id;
			snprintf(h->name, sizeof(h->name), "%s%s", addr, plus ? "" : "+0");
			snprintf(h->func, sizeof(h->func), "%.*s",
				 (int)(plus ? (size_t)(plus - addr) : strlen(addr)), addr);
			h->offset = plus ? (unsigned)strtoul(plus + 1, NULL, 0) : 0;
			args_of(fmt, h->args, sizeof(h->args));
			snprintf(h->probe, sizeof(h->probe), "tracefs");
			snprintf(h->state, sizeof(h->state), "%s", KCL_LKST_TF_GROUP);
			profile_of(prof, ev, &h->hits, &h->missed);
			(*n)++;
		}
		free(sys);
		free(ev);
		free(prefix);
		free(addr);
		free(fmt);
	}
	free(prof);
	tracefs_dynevent_list_free(evs);
	*out = v;
	return 0;
}

/* the last line of tracefs's error_log, for a refusal's message */
void kcl_tf_last_error(char *why, size_t len)
{
	char *e = tracefs_error_last(NULL), *p;

	/* "[  23.7] trace_kprobe: error: Invalid probed address or symbol\n
	 *   Command: ...\n   ^\n": the reason */
	p = e ? strstr(e, "error: ") : NULL;
	p = p ? p + 7 : e;
	snprintf(why, len, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
	free(e);
}

int kcl_lkst_tf_hook_add(int id, const char *func, unsigned off, const unsigned char *argn,
			 int nargs, char *why, size_t whylen)
{
	static const char *const regs[6] = { "%di", "%si", "%dx", "%cx", "%r8", "%r9" };
	struct kcl_lkst_hook *v;
	struct tracefs_dynevent *kp;
	char ev[32], addr[192], fmt[128] = "";
	size_t n, fl = 0;
	int ret;

	why[0] = '\0';
#if !defined(__x86_64__)
	if (nargs > 0) {
		snprintf(why, whylen, "arguments need x86-64 (its argument registers)");
		return -EOPNOTSUPP;
	}
#endif
	if (kcl_lkst_tf_hooks(&v, &n) < 0)
		return -ENODEV;
	snprintf(addr, sizeof(addr), "%s+%u", func, off);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, addr)) {
			free(v);
			return -EEXIST;
		}
		if (id >= 0 && v[i].id == (unsigned)id) {
			free(v);
			return -EBUSY;
		}
	}
	if (id < 0) {
		for (id = KTRACE_LKST_HOOK_FIRST; id <= KTRACE_LKST_HOOK_LAST; id++) {
			size_t i;

			for (i = 0; i < n && v[i].id != (unsigned)id; i++)
				;
			if (i == n)
				break;
		}
	}
	free(v);
	if (id > KTRACE_LKST_HOOK_LAST)
		return -ENOSPC;
	for (int i = 0; i < nargs && argn[i] < 6; i++)
		fl += (size_t)snprintf(fmt + fl, sizeof(fmt) - fl, "%sa%d=%s:u64", i ? " " : "",
				       argn[i] + 1, regs[argn[i]]);
	snprintf(ev, sizeof(ev), "lkst_hook_%02x", (unsigned)id);
	kp = tracefs_kprobe_alloc(KCL_LKST_TF_GROUP, ev, addr, fmt[0] ? fmt : NULL);
	if (!kp)
		return -ENOMEM;
	errno = 0;
	ret = tracefs_dynevent_create(kp);
	if (ret < 0) {
		ret = errno ? -errno : -EINVAL;
		kcl_tf_last_error(why, whylen);
	} else {
		ret = id;
	}
	tracefs_dynevent_free(kp);
	return ret;
}

int kcl_lkst_tf_hook_del(int id, char *why, size_t whylen)
{
	struct tracefs_dynevent *kp;
	char ev[32];
	int ret = 0;

	why[0] = '\0';
	snprintf(ev, sizeof(ev), "lkst_hook_%02x", (unsigned)id);
	kp = tracefs_dynevent_get(TRACEFS_DYNEVENT_KPROBE, KCL_LKST_TF_GROUP, ev);
	if (!kp)
		return -ENOENT;
	errno = 0;
	if (tracefs_dynevent_destroy(kp, false) < 0) {
		ret = errno ? -errno : -EBUSY;
		kcl_tf_last_error(why, whylen);
	}
	tracefs_dynevent_free(kp);
	return ret;
}

int krec_hook_defs(const uint8_t *sel, struct lkst_def *defs, char (*names)[160],
		   char (*args)[32], char (*events)[32])
{
	struct kcl_lkst_hook *v;
	size_t n;
	int k = 0;

	if (kcl_lkst_tf_hooks(&v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct lkst_def *d = &defs[k];

		if (!sel[v[i].id])
			continue;
		snprintf(names[k], 160, "%s", v[i].name);
		snprintf(args[k], 32, "%s", strcmp(v[i].args, "-") ? v[i].args : "");
		snprintf(events[k], 32, "lkst_hook_%02x", v[i].id);
		d->id = v[i].id;
		d->mn = names[k];
		d->cat = "hook";
		d->sys = KCL_LKST_TF_GROUP;
		d->tp = events[k];
		d->args = args[k];
		d->nargs = 0;
		for (const char *p = args[k]; *p; p++)
			d->nargs += *p == 'a';
		d->primary = 0;
		k++;
	}
	free(v);
	return k;
}

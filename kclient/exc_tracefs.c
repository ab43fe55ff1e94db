/*
 * kclient/exc_tracefs.c - LKST's EXCEPTION_ENTRY (0x20 "vector,error_code,
 * ip", include/ktrace/lkst.h) on the tracefs backend of `ktrace record
 * --kernel` (kclient/tracefs_record.c), as far as kprobe events reach.
 *
 * The module (kmod/lkst_exc.c) hooks the die notifier chain, which kprobe
 * events cannot reach; the IDT entry functions exc_* are noinstr.  What a
 * kprobe event can probe is the out-of-line trap handler they call, with
 * the x86-64 argument registers (6.1's kprobe events have no $argN):
 *
 *   do_error_trap(regs, error_code, str, trapnr, signr, sicode, addr)
 *     vector=%cx error_code=%si ip=+128(%di)   (pt_regs->ip: 16th word)
 *     divide error 0, overflow 4, bounds 5, invalid opcode 6, coprocessor
 *     segment overrun 9, invalid TSS 10, segment not present 11, stack
 *     segment 12, alignment check 17 - user and kernel mode, as the die
 *     chain's DIE_TRAP that do_error_trap() sends
 *   do_int3_user(regs)   (int3 in user mode; inlined on Debian's 6.1)
 *     vector=3 error_code=0 ip=+128(%di)
 *   do_trap(trapnr, signr, str, regs, error_code, sicode, addr), filtered
 *     on vector == 3 in the instance (do_error_trap() calls it too), when
 *     do_int3_user is not probe-able (6.1 puts do_trap on the kprobe
 *     blacklist)
 *
 * Each is a kprobe event of group KREC_EXC_GROUP named after the probe and
 * ktrace's pid ("ktrace_exc/trap_1234"), so two recordings never share one,
 * made (libtracefs's dynamic event API) before the recording reads the
 * event formats and deleted when it ends (krec_exc_destroy(), after the
 * instance that enabled them is gone: an enabled kprobe event cannot be
 * deleted), on a fatal signal (krec_exc_emergency()), or by the next
 * recording when ktrace was killed (krec_exc_remove_stale()).
 *
 * Page faults (vector 14) come from the page fault tracepoints, as in the
 * module: tracefs_record.c writes an EXCEPTION_ENTRY beside each
 * exceptions:page_fault_user/kernel event.  Not covered (the die chain's
 * other sources): debug (1), kernel #GP (13), kernel x87/SIMD errors;
 * EXCEPTION_EXIT stays unavailable: a kretprobe event cannot read the
 * trap number at the return on 6.1 (no $argN in return probes before
 * 6.9), and do_error_trap's return could not be told from its vector.
 *
 * Not thread-safe: one recording per process (as tracefs_record.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "kclient/internal.h"

struct exc_probe {
	const char *fn;     /* kernel function */
	const char *prefix; /* event name prefix; the event is PREFIX_PID */
	const char *fetch;  /* kprobe fetch args: the catalogue's fields */
	const char *filter; /* the instance's filter, or NULL */
	const char *vectors;
	int unless;         /* not made if probe @unless was made (-1: always) */
};

static const struct exc_probe probes[] = {
	{ "do_error_trap", "trap", "vector=%cx:u64 error_code=%si:u64 ip=+128(%di):u64", NULL,
	  "0 4 5 6 9 10 11 12 17", -1 },
	{ "do_int3_user", "int3", "vector=\\3:u64 error_code=\\0:u64 ip=+128(%di):u64", NULL, "3", -1 },
	{ "do_trap", "int3t", "vector=%di:u32 error_code=%r8:u64 ip=+128(%cx):u64", "vector==3", "3",
	  1 },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static int made[NPROBES];
static char names[NPROBES][48];
/* "-:ktrace_exc/trap_1234\n..." for krec_exc_emergency() */
static char del_text[NPROBES * 64];
static char kprobe_file[512];

int krec_exc_create(char *why, size_t whylen)
{
	size_t wl = 0;
	int n = 0;

	why[0] = '\0';
	memset(made, 0, sizeof(made));
	del_text[0] = '\0';
	if (!tracefs_file_exists(NULL, "kprobe_events")) {
		snprintf(why, whylen, "no kprobe events on this kernel (CONFIG_KPROBE_EVENTS)");
		return 0;
	}
	{
		char *p = tracefs_get_tracing_file("kprobe_events");

		snprintf(kprobe_file, sizeof(kprobe_file), "%s", p ? p : "");
		tracefs_put_tracing_file(p);
	}
	for (size_t i = 0; i < NPROBES; i++) {
		const struct exc_probe *p = &probes[i];
		struct tracefs_dynevent *kp;
		char err[160];

		if (p->unless >= 0 && made[p->unless])
			continue;
		snprintf(names[i], sizeof(names[i]), "%s_%d", p->prefix, (int)getpid());
		kp = tracefs_kprobe_alloc(KREC_EXC_GROUP, names[i], p->fn, p->fetch);
		if (!kp)
			continue;
		errno = 0;
		if (tracefs_dynevent_create(kp) == 0) {
			size_t l = strlen(del_text);

			made[i] = 1;
			n++;
			snprintf(del_text + l, sizeof(del_text) - l, "-:%s/%s\n", KREC_EXC_GROUP, names[i]);
		} else {
			kcl_tf_last_error(err, sizeof(err));
			if (wl < whylen)
				wl += (size_t)snprintf(why + wl, whylen - wl, "%s%s: %s", wl ? "; " : "",
						       p->fn, err[0] ? err : strerror(errno ? errno : EINVAL));
		}
		tracefs_dynevent_free(kp);
	}
	return n;
}

const char *krec_exc_event(unsigned i, const char **filter, const char **vectors)
{
	if (i >= NPROBES || !made[i])
		return NULL;
	*filter = probes[i].filter;
	*vectors = probes[i].vectors;
	return names[i];
}

unsigned krec_exc_nprobes(void)
{
	return NPROBES;
}

void krec_exc_destroy(void)
{
	for (size_t i = 0; i < NPROBES; i++) {
		struct tracefs_dynevent *kp;

		if (!made[i])
			continue;
		kp = tracefs_dynevent_get(TRACEFS_DYNEVENT_KPROBE, KREC_EXC_GROUP, names[i]);
		if (kp) {
			if (tracefs_dynevent_destroy(kp, false) < 0) {
				char err[160];

				kcl_tf_last_error(err, sizeof(err));
				kcl_error("record", "cannot delete the kprobe event %s/%s: %s", KREC_EXC_GROUP,
					  names[i], err[0] ? err : strerror(errno ? errno : EBUSY));
			}
			tracefs_dynevent_free(kp);
		}
		made[i] = 0;
	}
	del_text[0] = '\0';
}

void krec_exc_emergency(void)
{
	int fd;

	if (!del_text[0] || !kprobe_file[0])
		return;
	fd = open(kprobe_file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	for (char *p = del_text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl || write(fd, p, (size_t)(nl - p + 1)) < 0)
			break; /* one command per write(2) */
	}
	close(fd);
	del_text[0] = '\0';
}

int krec_exc_remove_stale(void)
{
	struct tracefs_dynevent **evs;
	int n = 0;

	if (!tracefs_file_exists(NULL, "kprobe_events"))
		return 0;
	evs = tracefs_dynevent_get_all(TRACEFS_DYNEVENT_KPROBE, KREC_EXC_GROUP);
	for (size_t i = 0; evs && evs[i]; i++) {
		char *sys = NULL, *ev = NULL;
		const char *us;
		long pid;
		char *end;

		tracefs_dynevent_info(evs[i], &sys, &ev, NULL, NULL, NULL);
		us = ev ? strrchr(ev, '_') : NULL;
		pid = us ? strtol(us + 1, &end, 10) : 0;
		if (us && !*end && pid > 0 && pid != getpid() && kill((pid_t)pid, 0) < 0 &&
		    errno == ESRCH && tracefs_dynevent_destroy(evs[i], false) == 0)
			n++;
		free(sys);
		free(ev);
	}
	tracefs_dynevent_list_free(evs);
	return n;
}

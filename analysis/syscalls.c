/*
 * analysis/syscalls.c - system call names for the kernel's syscall events
 * (LKST's SYSCALL_ENTRY/SYSCALL_EXIT, from raw_syscalls:sys_enter/sys_exit,
 * whose first argument, payload word 1 after the task word, is the
 * call's number), from libaudit's tables for
 * the machine the trace was recorded on (its metadata `machine`, uname's
 * name such as x86_64 or aarch64), so a trace read on another architecture
 * still gets the recording machine's names.  See ka_syscall_name() in
 * analysis/analysis.h.
 *
 * libaudit is loaded (dlopen) the first time a syscall event asks for a
 * name: every other command starts without mapping it and libcap-ng (its
 * dependency).  Without libaudit.so.1 on the machine, calls keep their
 * numbers.
 */
#include <dlfcn.h>
#include <libaudit.h>
#include <pthread.h>
#include <string.h>

#include <ktrace/format.h>
#include <ktrace/lkst.h>

#include "analysis/analysis.h"

static __typeof__(audit_syscall_to_name) *to_name;
static __typeof__(audit_name_to_machine) *to_machine;
static pthread_once_t audit_once = PTHREAD_ONCE_INIT;

static void audit_load(void)
{
	void *h = dlopen("libaudit.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	to_machine = (__typeof__(to_machine))dlsym(h, "audit_name_to_machine");
	to_name = (__typeof__(to_name))dlsym(h, "audit_syscall_to_name");
	if (!to_machine || !to_name)
		to_machine = NULL;
}

const char *ka_syscall_name(const struct ktr_trace *t, const struct ktr_rec *r)
{
	const struct ktr_trace *k = ktr_kernel(t);
	const char *machine;

	if (r->kind != KTR_RECORD || r->cls != KTRACE_CLASS_KEVENT || r->nwords < 2 ||
	    (r->id != KTRACE_LKST_SYSCALL_ENTRY && r->id != KTRACE_LKST_SYSCALL_EXIT) ||
	    r->w[1] > 0xffff)
		return NULL;
	machine = ktr_info(t)->machine;
	if ((!machine || !*machine) && k)
		machine = ktr_info(k)->machine;
	if (!machine || !*machine)
		return NULL;
	pthread_once(&audit_once, audit_load);
	if (!to_machine)
		return NULL;
	return to_name((int)r->w[1], to_machine(machine));
}

/*
 * analysis/syscalls.c - system call names for the kernel's syscall events
 * (LKST's SYSCALL_ENTRY/SYSCALL_EXIT, from raw_syscalls:sys_enter/sys_exit,
 * whose first argument, payload word 1 after the task word, is the
 * call's number), from libaudit's tables for
 * the machine the trace was recorded on (its metadata `machine`, uname's
 * name such as x86_64 or aarch64), so a trace read on another architecture
 * still gets the recording machine's names.  See ka_syscall_name() in
 * analysis/analysis.h.
 */
#include <libaudit.h>
#include <string.h>

#include <ktrace/format.h>
#include <ktrace/lkst.h>

#include "analysis/analysis.h"

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
	return audit_syscall_to_name((int)r->w[1], audit_name_to_machine(machine));
}

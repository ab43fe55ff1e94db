/*
 * lib/preload/dl.c - part of libktrace-record.so, the shim `ktrace record`
 * preloads: the program's dlopen() and dlclose() tell libktrace
 * (ktrace_rt_dl_note(), lib/metadata.c) before they run, and dlclose()
 * again after, so that the trace's metadata says which object was loaded
 * at which address when (`map-gen` lines, docs/FORMAT.md): the readers
 * then name the functions of a library dlclose()d before the end, and tell
 * it from another loaded later at the same address.
 *
 * dlopen() finds the object that called it from its return address (for
 * $ORIGIN, DT_RUNPATH and the namespace), so its wrapper must not be a
 * frame of its own: on x86-64 it is a few instructions that save the
 * argument registers, call the note, restore them and jump to the real
 * dlopen (found with dlsym(RTLD_NEXT) in the constructor), leaving the
 * caller's return address in place.  Other machines get no dlopen()
 * wrapper (loads are then seen at dlclose() and at the metadata rewrites).
 * dlclose() does not care who calls it: a C wrapper.
 *
 * Thread and signal safety: as dlopen()/dlclose() (not async-signal-safe).
 */
#include <dlfcn.h>
#include <stddef.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

void ktrace_rt_dl_note(void); /* libktrace.so (lib/metadata.c) */

typedef int (*dl_close_fn)(void *);

void *ktrace_dl_real_dlopen; /* read by the assembly below */
static dl_close_fn dl_real_close;

__attribute__((constructor)) static void dl_init(void)
{
	ktrace_dl_real_dlopen = dlsym(RTLD_NEXT, "dlopen");
	dl_real_close = (dl_close_fn)(void (*)(void))dlsym(RTLD_NEXT, "dlclose");
}

#if defined(__x86_64__)
/*
 * dlopen(file, mode): %rdi and %rsi kept across the note (two pushes and
 * an 8-byte pad keep %rsp 16-byte aligned at the call), then a jump, so
 * the real dlopen sees its caller's return address.
 */
__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call ktrace_rt_dl_note@PLT\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	movq ktrace_dl_real_dlopen@GOTPCREL(%rip), %rax\n"
	"	jmpq *(%rax)\n"
	"	.cfi_endproc\n"
	".size dlopen, .-dlopen\n");
#endif

/* dlclose(): noted before (what was loaded since) and after (what it unloaded). */
SHIM_EXPORT int dlclose(void *handle)
{
	int rc;

	ktrace_rt_dl_note();
	if (!dl_real_close)
		return -1;
	rc = dl_real_close(handle);
	ktrace_rt_dl_note();
	return rc;
}

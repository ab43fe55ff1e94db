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
 * dlopen (found with dlsym(RTLD_NEXT) on first use), leaving the
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

static void *dl_real_open;
static dl_close_fn dl_real_close;

/*
 * The note, then the real dlopen's address for the assembly below to jump
 * to.  Found on first use, not in a constructor: libktrace.so's own
 * constructor (which this shim's runs after) may dlopen() libelf.
 */
__attribute__((visibility("hidden"))) void *ktrace_dl_open_note(void);
void *ktrace_dl_open_note(void)
{
	void *real = __atomic_load_n(&dl_real_open, __ATOMIC_ACQUIRE);

	if (!real) {
		real = dlsym(RTLD_NEXT, "dlopen");
		__atomic_store_n(&dl_real_open, real, __ATOMIC_RELEASE);
	}
	ktrace_rt_dl_note();
	return real;
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
	"	call ktrace_dl_open_note\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmpq *%rax\n"
	"	.cfi_endproc\n"
	".size dlopen, .-dlopen\n");
#endif

/* dlclose(): noted before (what was loaded since) and after (what it unloaded). */
SHIM_EXPORT int dlclose(void *handle)
{
	dl_close_fn real = __atomic_load_n(&dl_real_close, __ATOMIC_ACQUIRE);
	int rc;

	if (!real) {
		real = (dl_close_fn)(void (*)(void))dlsym(RTLD_NEXT, "dlclose");
		__atomic_store_n(&dl_real_close, real, __ATOMIC_RELEASE);
	}
	ktrace_rt_dl_note();
	if (!real)
		return -1;
	rc = real(handle);
	ktrace_rt_dl_note();
	return rc;
}

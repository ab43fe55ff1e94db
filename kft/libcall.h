/*
 * kft/libcall.h - which library functions the library-call tracer
 * (lib/kft_plt.c) leaves alone, shared with `ktrace record`'s build
 * detection (cli/record_detect.c), which counts the hooked ones.
 *
 * A hooked call's return address is diverted to libktrace's exit
 * trampoline, so a function that never returns normally, returns twice,
 * looks at its caller's return address, or unwinds or switches stacks is
 * not hooked (uftrace's libmcount/plthook.c skips the same kind):
 *   setjmp family, vfork, getcontext: they return twice, the second time
 *     to a return address that no longer holds the trampoline's entry
 *     (vfork is recorded all the same, through a stub of its own:
 *     lib/kft_plt.c, kft_vfork_call);
 *   longjmp family, exit family, abort, pthread_exit, setcontext,
 *     swapcontext, __libc_start_main, __stack_chk_fail, __assert_fail,
 *     __cxa_throw, __cxa_rethrow, _Unwind_*: they never return normally
 *     (or unwind through the caller);
 *   dlsym, dlvsym, dlopen, dlmopen: they find the calling object from
 *     their return address;
 *   the -pg / -finstrument-functions hooks themselves, __cxa_begin_catch
 *     and __cxa_end_catch, __gxx_personality_v0, __tls_get_addr;
 *   _mcleanup: -pg's exit handler, whose GOT slot gcrt1.o passes to
 *     atexit() (with -fno-plt, it would be hooked as a call from libc).
 * Calls into libktrace itself are not hooked either (lib/kft_plt.c checks
 * the resolved address).
 */
#ifndef KTRACE_KFT_LIBCALL_H
#define KTRACE_KFT_LIBCALL_H

#include <string.h>

/*
 * kft_hook_name() - 1 if @name is an entry hook a program built for a
 * function tracer imports (-finstrument-functions: __cyg_profile_func_enter,
 * -pg: mcount or _mcount, -pg -mfentry: __fentry__): such an object is
 * traced through its own hooks, never patched or PLT-hooked as a plain
 * one (lib/kft_plt.c, lib/kft_dynpatch.c).  Pure; thread-safe.
 */
static inline int kft_hook_name(const char *name)
{
	return !strcmp(name, "__cyg_profile_func_enter") || !strcmp(name, "mcount") ||
	       !strcmp(name, "_mcount") || !strcmp(name, "__fentry__");
}

/*
 * kft_libcall_skip() - 1 if a call to the function named @name (an ELF
 * symbol name, no version) is not to be hooked, 0 if it may be.
 * Pure; thread-safe.
 */
static inline int kft_libcall_skip(const char *name)
{
	static const char *const skip[] = {
		"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "savectx", "getcontext",
		"vfork", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "setcontext",
		"swapcontext", "makecontext", "exit", "_exit", "_Exit", "quick_exit", "abort",
		"pthread_exit", "__libc_start_main", "__stack_chk_fail", "__assert_fail",
		"__cxa_throw", "__cxa_rethrow", "__cxa_begin_catch", "__cxa_end_catch",
		"__cxa_finalize", "__gxx_personality_v0", "__tls_get_addr", "dlsym", "dlvsym",
		"dlopen", "dlmopen", "mcount", "_mcount", "__fentry__", "__gnu_mcount_nc",
		"__cyg_profile_func_enter", "__cyg_profile_func_exit", "_mcleanup",
	};

	if (!strncmp(name, "_Unwind_", 8) || !strncmp(name, "ktrace_", 7))
		return 1;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(name, skip[i]))
			return 1;
	return 0;
}

/*
 * kft_libcall_always_plt() - 1 if compilers call @name through a PLT slot
 * even in a program built with -fno-plt (gcc's -pg and stack protector,
 * C++ static constructors, Rust: uftrace's list), so that a program whose
 * PLT slots are all such functions is taken for a -fno-plt build, whose
 * other calls read GOT (R_X86_64_GLOB_DAT) slots.  Pure; thread-safe.
 */
static inline int kft_libcall_always_plt(const char *name)
{
	return !strcmp(name, "__stack_chk_fail") || !strcmp(name, "__monstartup") ||
	       !strcmp(name, "__cxa_atexit") || !strcmp(name, "__tls_get_addr") ||
	       !strcmp(name, "_Unwind_Resume");
}

#endif /* KTRACE_KFT_LIBCALL_H */

/*
 * lib/preload/signal.c - libktrace-record.so, the shim `ktrace record`
 * preloads beside libktrace.so: the program's sigaction() and signal()
 * become libktrace's ktrace_rt_sigaction() and ktrace_rt_signal()
 * (lib/kft_signal.c), which install a trampoline that counts signal-handler
 * nesting for KFT's interrupt context (`filter noints`/`onlyints`, kd's
 * "!!!!" sections).  Kept out of libktrace.so so that a program linking the
 * library keeps libc's sigaction and signal; only a traced run gets these.
 *
 * Linked against libktrace.so.0 (DT_NEEDED), which `ktrace record`
 * preloads by its full path.  Thread and async-signal safety: as
 * ktrace_rt_sigaction(), i.e. as libc's sigaction().
 */
#include <signal.h>

#include "lib/kft_rt.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return ktrace_rt_sigaction(sig, act, oact);
}

SHIM_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return ktrace_rt_signal(sig, handler);
}

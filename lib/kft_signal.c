/*
 * lib/kft_signal.c - signal-handler nesting for the function tracer.
 *
 * KFT's `filter noints` / `filter onlyints` and kd's interrupt sections
 * need to know whether a call ran in "interrupt context".  In a program
 * that is a signal handler.  Under `ktrace record` the program's sigaction()
 * and signal() are interposed by the preloaded shim libktrace-record.so
 * (lib/preload/signal.c), which calls ktrace_rt_sigaction() and
 * ktrace_rt_signal() here; libktrace itself never defines sigaction or
 * signal, so a program that links it keeps libc's.  A handler the program
 * installs is recorded in a table and the kernel is given a trampoline
 * instead, which counts the nesting in thread-local storage around the real
 * handler.  Asking for the current disposition returns the program's own
 * handler, so the program sees no difference.  Without the shim (a program
 * linked with libktrace and run on its own) signal handlers are not told
 * apart: `filter noints`/`onlyints` then see no interrupt context.
 *
 * A handler that leaves by siglongjmp() never returns to the trampoline;
 * the hooks notice the unwound shadow stack and call kft_sig_unwound(),
 * which forgets the handlers whose frames are gone.
 *
 * Async-signal-safe: the trampoline touches only thread-local counters.
 * sigaction() and signal() are as thread-safe as libc's (the table entry is
 * stored atomically before the kernel is told).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "kft_rt.h"

#define KFT_SIG_MAX 16 /* nesting levels whose base depth is remembered */

__thread unsigned kft_sig_nest __attribute__((tls_model("initial-exec")));
static __thread unsigned kft_sig_bases[KFT_SIG_MAX] __attribute__((tls_model("initial-exec")));

/* The program's handlers (sa_handler or sa_sigaction) and their flags. */
static void *kft_user_handler[_NSIG];
static int kft_user_flags[_NSIG];

/* Set by the hooks when a thread starts tracing (a function pointer: the
 * wrappers also work in a process whose hooks never ran). */
unsigned (*kft_shadow_depth_fn)(void);

/* glibc's own sigaction under its internal name: never an interposer's */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

unsigned kft_sig_base(void)
{
	unsigned n = kft_sig_nest;

	if (!n)
		return ~0u;
	return kft_sig_bases[(n <= KFT_SIG_MAX ? n : KFT_SIG_MAX) - 1];
}

void kft_sig_unwound(unsigned idx)
{
	while (kft_sig_nest > 0 && kft_sig_nest <= KFT_SIG_MAX &&
	       kft_sig_bases[kft_sig_nest - 1] > idx)
		kft_sig_nest--;
}

static void kft_trampoline(int sig, siginfo_t *info, void *uc)
{
	unsigned n = kft_sig_nest;
	void *h = sig > 0 && sig < _NSIG ? __atomic_load_n(&kft_user_handler[sig], __ATOMIC_ACQUIRE)
					 : NULL;
	int flags = sig > 0 && sig < _NSIG ? kft_user_flags[sig] : 0;
	int saved = errno;

	if (n < KFT_SIG_MAX) {
		unsigned (*depth)(void) = __atomic_load_n(&kft_shadow_depth_fn, __ATOMIC_RELAXED);

		kft_sig_bases[n] = depth ? depth() : 0;
	}
	kft_sig_nest = n + 1;
	errno = saved;
	if (h && h != (void *)SIG_IGN && h != (void *)SIG_DFL) {
		if (flags & SA_SIGINFO)
			((void (*)(int, siginfo_t *, void *))h)(sig, info, uc);
		else
			((void (*)(int))h)(sig);
	}
	kft_sig_nest = n;
}

/* The program's view of a disposition the kernel holds as @k. */
static void kft_user_view(int sig, struct sigaction *k)
{
	if (!(k->sa_flags & SA_SIGINFO) || k->sa_sigaction != kft_trampoline)
		return;
	if (kft_user_flags[sig] & SA_SIGINFO) {
		k->sa_sigaction = (void (*)(int, siginfo_t *, void *))kft_user_handler[sig];
	} else {
		k->sa_flags &= ~SA_SIGINFO;
		k->sa_handler = (void (*)(int))kft_user_handler[sig];
	}
}

KT_EXPORT int ktrace_rt_sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct sigaction k;
	int rc;

	if (!act || sig <= 0 || sig >= _NSIG) {
		rc = __sigaction(sig, act, oact);
		if (rc == 0 && oact && sig > 0 && sig < _NSIG)
			kft_user_view(sig, oact);
		return rc;
	}
	k = *act;
	if (act->sa_handler != SIG_IGN && act->sa_handler != SIG_DFL) {
		void *h = (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction
						       : (void *)act->sa_handler;
		int oflags = kft_user_flags[sig];
		void *oh = kft_user_handler[sig];

		kft_user_flags[sig] = act->sa_flags;
		__atomic_store_n(&kft_user_handler[sig], h, __ATOMIC_RELEASE);
		k.sa_flags |= SA_SIGINFO;
		k.sa_sigaction = kft_trampoline;
		rc = __sigaction(sig, &k, oact);
		if (rc == 0 && oact) {
			/* The old disposition, as the program had set it. */
			if ((oact->sa_flags & SA_SIGINFO) && oact->sa_sigaction == kft_trampoline) {
				if (oflags & SA_SIGINFO) {
					oact->sa_sigaction = (void (*)(int, siginfo_t *, void *))oh;
				} else {
					oact->sa_flags &= ~SA_SIGINFO;
					oact->sa_handler = (void (*)(int))oh;
				}
			}
		}
		return rc;
	}
	rc = __sigaction(sig, act, oact);
	if (rc == 0 && oact)
		kft_user_view(sig, oact);
	return rc;
}

/* signal(): BSD semantics as glibc's (SA_RESTART, handler stays installed). */
KT_EXPORT sighandler_t ktrace_rt_signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	if (sig > 0 && sig < _NSIG)
		sigaddset(&act.sa_mask, sig);
	if (ktrace_rt_sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

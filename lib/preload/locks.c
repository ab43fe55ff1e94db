/*
 * lib/preload/locks.c - libktrace-locks.so, preloaded by `ktrace record
 * --locks` (only then: without the option the program calls libc's
 * functions directly and pays nothing): the program's pthread mutex,
 * rwlock, spinlock and condition-variable calls, and pthread_exit, are
 * wrapped to write the lock events of include/ktrace/locks.h, then call
 * the next definition (libc's, found once with dlsym(RTLD_NEXT) and
 * cached; the condition variables' by version, GLIBC_2.3.2, as dlsym
 * alone may return the old ABI's).
 *
 * Cost: a static event each (ktrace_log2(): one enable-map byte, a clock
 * read, a record written with plain stores in the thread's stream): two
 * per acquisition (acquire before, acquired/failed after), one per
 * release.  No lock, no syscall, no allocation on this path, except the
 * first event of a thread (its stream slot; its thread-exit key).
 * libktrace's own lock calls are not recorded (their call site is in its
 * text: one compare), nor re-entry (a per-thread flag), nor anything
 * before this library's constructor ran (the constructors of libraries
 * that run before it, libktrace's among them).
 *
 * A thread's end is an event too (thread_exit): from pthread_exit() with
 * its call site, or from a thread-specific-data destructor (site 0) for a
 * thread that returns from its start routine.  The main thread's exit()
 * writes none.
 *
 * Thread safety and async-signal safety: as the functions wrapped.
 * Linked against libktrace.so.0 (ktrace__log2, the catalogue).
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ktrace/ktrace.h>
#include <ktrace/locks.h>

#define SHIM_EXPORT __attribute__((visibility("default")))
#define KL_TLS __thread __attribute__((tls_model("initial-exec")))

int ktrace__locks_catalog(void);
uintptr_t ktrace__call_site(uintptr_t ret);

enum {
#define KL_ENUM(op, name, kind, flags) KL_##name = op,
	KTRACE_LOCK_OPS(KL_ENUM)
#undef KL_ENUM
};

static KL_TLS int kl_busy;     /* inside an event (libktrace's own locks) */
static KL_TLS int kl_state;    /* 0 new thread, 1 exit key set, 2 exit written */
/* libktrace.so's text: calls from there are not recorded; until the
 * constructor has run, every address is "there" */
static uintptr_t kl_lo, kl_len = UINTPTR_MAX;
static pthread_key_t kl_key;
static int kl_key_ok;

/* The next definition of @name (RTLD_NEXT), cached in *@slot; abort if none. */
static void *kl_next(void **slot, const char *name, const char *version)
{
	void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (__builtin_expect(p != NULL, 1))
		return p;
	p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p) {
		static const char msg[] = "ktrace: libktrace-locks.so: no next definition of a pthread function\n";

		(void)!fwrite(msg, 1, sizeof(msg) - 1, stderr);
		abort();
	}
	__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	return p;
}

#define KL_NEXT(type, name, ver)                                                             \
	({                                                                                   \
		static void *slot_;                                                          \
		(type)kl_next(&slot_, #name, ver);                                           \
	})

static void kl_exit_key(void *arg);

/* First event of a thread: arrange for its thread_exit event. */
static __attribute__((noinline)) void kl_thread_start(void)
{
	kl_state = 1;
	if (__atomic_load_n(&kl_key_ok, __ATOMIC_ACQUIRE))
		pthread_setspecific(kl_key, (void *)1);
}

/* One lock event; @err (failed: the error number) goes in bits 48..63 of the site word. */
static inline __attribute__((always_inline)) void kl_event_err(unsigned op, unsigned phase,
								const void *lock, const void *site,
								int err)
{
	if (__builtin_expect(kl_busy || (uintptr_t)site - kl_lo < kl_len, 0))
		return;
	kl_busy = 1;
	if (__builtin_expect(kl_state == 0, 0))
		kl_thread_start();
	ktrace_log2(KTRACE_LOCKS_FUNC, (uint8_t)KTRACE_LOCK_CODE(op, phase), (uintptr_t)lock,
		    (uintptr_t)site | (uint64_t)(err & 0xffff) << 48);
	kl_busy = 0;
}

static inline __attribute__((always_inline)) void kl_event(unsigned op, unsigned phase,
							    const void *lock, const void *site)
{
	kl_event_err(op, phase, lock, site, 0);
}

/* After an acquiring call that returned @r: acquired, or failed with error @r. */
static inline __attribute__((always_inline)) void kl_result(unsigned op, int r, const void *lock,
							     const void *site)
{
	kl_event_err(op, r ? KTRACE_LOCK_FAILED : KTRACE_LOCK_ACQUIRED, lock, site, r);
}

static void kl_exit_key(void *arg)
{
	(void)arg;
	if (kl_state != 2) {
		kl_state = 2;
		kl_event(KL_thread_exit, 0, NULL, NULL);
	}
}

/* glibc's mutex kind (the public __data.__kind, PTHREAD_MUTEX_KIND_MASK_NP = 3). */
static inline int kl_recursive(const pthread_mutex_t *m)
{
	return (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP;
}

/*
 * The call site: the return address, unless a library-call hook of
 * libktrace (lib/kft_plt.c, on by default) made it its exit trampoline;
 * then the real one, from the hook's return stack (ktrace__call_site()).
 * Else the call would pass for libktrace's own and not be recorded.
 */
#define KL_SITE ((const void *)ktrace__call_site((uintptr_t)__builtin_return_address(0)))

/* ---- mutexes ------------------------------------------------------------- */

SHIM_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	int (*next)(pthread_mutex_t *) = KL_NEXT(int (*)(pthread_mutex_t *), pthread_mutex_lock, NULL);
	unsigned op = kl_recursive(m) ? KL_rmutex_lock : KL_mutex_lock;
	int r;

	kl_event(op, KTRACE_LOCK_ACQUIRE, m, KL_SITE);
	r = next(m);
	kl_result(op, r, m, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int (*next)(pthread_mutex_t *) = KL_NEXT(int (*)(pthread_mutex_t *), pthread_mutex_trylock, NULL);
	unsigned op = kl_recursive(m) ? KL_rmutex_trylock : KL_mutex_trylock;
	int r;

	kl_event(op, KTRACE_LOCK_ACQUIRE, m, KL_SITE);
	r = next(m);
	kl_result(op, r, m, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	int (*next)(pthread_mutex_t *, const struct timespec *) =
		KL_NEXT(int (*)(pthread_mutex_t *, const struct timespec *), pthread_mutex_timedlock, NULL);
	unsigned op = kl_recursive(m) ? KL_rmutex_timedlock : KL_mutex_timedlock;
	int r;

	kl_event(op, KTRACE_LOCK_ACQUIRE, m, KL_SITE);
	r = next(m, t);
	kl_result(op, r, m, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int (*next)(pthread_mutex_t *) = KL_NEXT(int (*)(pthread_mutex_t *), pthread_mutex_unlock, NULL);

	kl_event(kl_recursive(m) ? KL_rmutex_unlock : KL_mutex_unlock, KTRACE_LOCK_RELEASE, m, KL_SITE);
	return next(m);
}

/* ---- rwlocks ------------------------------------------------------------- */

#define KL_RW(fn, op)                                                                        \
	SHIM_EXPORT int fn(pthread_rwlock_t *l)                                              \
	{                                                                                    \
		int (*next)(pthread_rwlock_t *) = KL_NEXT(int (*)(pthread_rwlock_t *), fn, NULL); \
		int r;                                                                       \
                                                                                             \
		kl_event(op, KTRACE_LOCK_ACQUIRE, l, KL_SITE);                               \
		r = next(l);                                                                 \
		kl_result(op, r, l, KL_SITE);     \
		return r;                                                                    \
	}
#define KL_RW_TIMED(fn, op)                                                                  \
	SHIM_EXPORT int fn(pthread_rwlock_t *l, const struct timespec *t)                    \
	{                                                                                    \
		int (*next)(pthread_rwlock_t *, const struct timespec *) =                   \
			KL_NEXT(int (*)(pthread_rwlock_t *, const struct timespec *), fn, NULL); \
		int r;                                                                       \
                                                                                             \
		kl_event(op, KTRACE_LOCK_ACQUIRE, l, KL_SITE);                               \
		r = next(l, t);                                                              \
		kl_result(op, r, l, KL_SITE);     \
		return r;                                                                    \
	}

KL_RW(pthread_rwlock_rdlock, KL_rwlock_rdlock)
KL_RW(pthread_rwlock_tryrdlock, KL_rwlock_tryrdlock)
KL_RW(pthread_rwlock_wrlock, KL_rwlock_wrlock)
KL_RW(pthread_rwlock_trywrlock, KL_rwlock_trywrlock)
KL_RW_TIMED(pthread_rwlock_timedrdlock, KL_rwlock_timedrdlock)
KL_RW_TIMED(pthread_rwlock_timedwrlock, KL_rwlock_timedwrlock)

SHIM_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	int (*next)(pthread_rwlock_t *) = KL_NEXT(int (*)(pthread_rwlock_t *), pthread_rwlock_unlock, NULL);

	kl_event(KL_rwlock_unlock, KTRACE_LOCK_RELEASE, l, KL_SITE);
	return next(l);
}

/* ---- spinlocks ----------------------------------------------------------- */

SHIM_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	int (*next)(pthread_spinlock_t *) = KL_NEXT(int (*)(pthread_spinlock_t *), pthread_spin_lock, NULL);
	int r;

	kl_event(KL_spin_lock, KTRACE_LOCK_ACQUIRE, (const void *)l, KL_SITE);
	r = next(l);
	kl_result(KL_spin_lock, r, (const void *)l, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	int (*next)(pthread_spinlock_t *) = KL_NEXT(int (*)(pthread_spinlock_t *), pthread_spin_trylock, NULL);
	int r;

	kl_event(KL_spin_trylock, KTRACE_LOCK_ACQUIRE, (const void *)l, KL_SITE);
	r = next(l);
	kl_result(KL_spin_trylock, r, (const void *)l, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	int (*next)(pthread_spinlock_t *) = KL_NEXT(int (*)(pthread_spinlock_t *), pthread_spin_unlock, NULL);

	kl_event(KL_spin_unlock, KTRACE_LOCK_RELEASE, (const void *)l, KL_SITE);
	return next(l);
}

/* ---- condition variables ------------------------------------------------- */

SHIM_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int (*next)(pthread_cond_t *, pthread_mutex_t *) =
		KL_NEXT(int (*)(pthread_cond_t *, pthread_mutex_t *), pthread_cond_wait, "GLIBC_2.3.2");
	int r;

	kl_event(KL_cond_wait, KTRACE_LOCK_RELEASE, m, KL_SITE);
	r = next(c, m);
	kl_result(KL_cond_wait, r, m, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	int (*next)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *) =
		KL_NEXT(int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *),
			pthread_cond_timedwait, "GLIBC_2.3.2");
	int r;

	kl_event(KL_cond_timedwait, KTRACE_LOCK_RELEASE, m, KL_SITE);
	r = next(c, m, t);
	/* ETIMEDOUT: the mutex is held again all the same */
	kl_result(KL_cond_timedwait, r == ETIMEDOUT ? 0 : r, m, KL_SITE);
	return r;
}

SHIM_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	int (*next)(pthread_cond_t *) = KL_NEXT(int (*)(pthread_cond_t *), pthread_cond_signal, "GLIBC_2.3.2");

	kl_event(KL_cond_signal, 0, c, KL_SITE);
	return next(c);
}

SHIM_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	int (*next)(pthread_cond_t *) = KL_NEXT(int (*)(pthread_cond_t *), pthread_cond_broadcast, "GLIBC_2.3.2");

	kl_event(KL_cond_broadcast, 0, c, KL_SITE);
	return next(c);
}

/* ---- thread end ---------------------------------------------------------- */

SHIM_EXPORT void pthread_exit(void *ret)
{
	void (*next)(void *) = KL_NEXT(void (*)(void *), pthread_exit, NULL);

	if (kl_state != 2) {
		kl_state = 2;
		kl_event(KL_thread_exit, 0, NULL, KL_SITE);
	}
	next(ret);
	__builtin_unreachable();
}

/* dl_iterate_phdr(): the executable segment holding *@arg. */
static int kl_find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t *r = arg, a = r[0];

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a - lo < ph->p_memsz) {
			r[1] = lo;
			r[2] = ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void kl_ctor(void)
{
	uintptr_t r[3] = { (uintptr_t)&ktrace__log2, 0, 0 };

	dl_iterate_phdr(kl_find_text, r);
	if (pthread_key_create(&kl_key, kl_exit_key) == 0)
		__atomic_store_n(&kl_key_ok, 1, __ATOMIC_RELEASE);
	ktrace__locks_catalog();
	/* from now on: everything but libktrace's own calls */
	__atomic_store_n(&kl_lo, r[1], __ATOMIC_RELAXED);
	__atomic_store_n(&kl_len, r[2], __ATOMIC_RELEASE);
}

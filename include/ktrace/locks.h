/* SPDX-License-Identifier: MIT */
/*
 * ktrace/locks.h - the lock events of `ktrace record --locks`: what
 * libktrace-locks.so (lib/preload/locks.c) writes around the program's
 * pthread mutex, rwlock, spinlock and condition-variable calls, and what
 * `ktrace locks` (analysis/locks.c) reads back.
 *
 * They are ordinary static events (class KTRACE_CLASS_LOG2, 24 bytes, as
 * ktrace_log2()): function id KTRACE_LOCKS_FUNC, event code
 * (op << 2) | phase, and two words:
 *   w[0] "lock"  the address of the pthread object (for cond_signal and
 *                cond_broadcast the condition variable's; 0 for
 *                thread_exit)
 *   w[1] "site"  the call site: the return address of the call, i.e. the
 *                instruction after the call in the caller (0 for the
 *                thread_exit of a thread returning from its start routine);
 *                in a failed event ("site_err") bits 0..47 are the site and
 *                bits 48..63 the error number the call returned (EBUSY,
 *                ETIMEDOUT, EDEADLK, ...): KTRACE_LOCK_SITE(), KTRACE_LOCK_ERR()
 * Their catalogue (category "locks", names "OP:PHASE", e.g.
 * "mutex_lock:acquired") is in the trace's metadata, so `ktrace print`
 * names them and `ktrace ctl DIR disable 'locks:*'` switches them off.
 *
 * Phases:
 *   acquire   before the call: the thread wants the lock (cond_wait: none)
 *   acquired  after it: the thread holds the lock (cond_wait/timedwait:
 *             the mutex, re-acquired, also after a timeout)
 *   failed    after it: a try/timed call, or an error-checking mutex,
 *             returned an error; the lock is not held
 *   release   before an unlock, or before a cond_wait releases the mutex
 * Recursive mutexes (PTHREAD_MUTEX_RECURSIVE) have their own ops (rmutex_*)
 * so that the analysis knows a second acquisition by the holder is legal.
 *
 * Freestanding: an X-macro, expanded by each user.
 */
#ifndef KTRACE_LOCKS_H
#define KTRACE_LOCKS_H

/* The function id of the lock events (user programs' ids: pick another). */
#define KTRACE_LOCKS_FUNC 0xfd

#define KTRACE_LOCK_ACQUIRE 0
#define KTRACE_LOCK_ACQUIRED 1
#define KTRACE_LOCK_FAILED 2
#define KTRACE_LOCK_RELEASE 3

/* What an op does (the analysis' view). */
#define KTRACE_LOCK_K_LOCK 1   /* exclusive acquisition */
#define KTRACE_LOCK_K_RDLOCK 2 /* shared (read) acquisition */
#define KTRACE_LOCK_K_UNLOCK 3 /* release */
#define KTRACE_LOCK_K_WAIT 4   /* cond wait: releases, then re-acquires the mutex */
#define KTRACE_LOCK_K_SIGNAL 5 /* cond signal/broadcast: no lock changes hands */
#define KTRACE_LOCK_K_EXIT 6   /* the thread ends (pthread_exit or return) */

/* Op flags. */
#define KTRACE_LOCK_F_TRY 1u       /* never blocks: no lock-order edge */
#define KTRACE_LOCK_F_RECURSIVE 2u /* the holder may acquire it again */
#define KTRACE_LOCK_F_RWLOCK 4u
#define KTRACE_LOCK_F_SPIN 8u

/* clang-format off */
/* X(op, name, kind, flags) */
#define KTRACE_LOCK_OPS(X) \
	X(1, mutex_lock, KTRACE_LOCK_K_LOCK, 0) \
	X(2, mutex_trylock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_TRY) \
	X(3, mutex_timedlock, KTRACE_LOCK_K_LOCK, 0) \
	X(4, mutex_unlock, KTRACE_LOCK_K_UNLOCK, 0) \
	X(5, rmutex_lock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_RECURSIVE) \
	X(6, rmutex_trylock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_RECURSIVE | KTRACE_LOCK_F_TRY) \
	X(7, rmutex_timedlock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_RECURSIVE) \
	X(8, rmutex_unlock, KTRACE_LOCK_K_UNLOCK, KTRACE_LOCK_F_RECURSIVE) \
	X(9, rwlock_rdlock, KTRACE_LOCK_K_RDLOCK, KTRACE_LOCK_F_RWLOCK) \
	X(10, rwlock_tryrdlock, KTRACE_LOCK_K_RDLOCK, KTRACE_LOCK_F_RWLOCK | KTRACE_LOCK_F_TRY) \
	X(11, rwlock_timedrdlock, KTRACE_LOCK_K_RDLOCK, KTRACE_LOCK_F_RWLOCK) \
	X(12, rwlock_wrlock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_RWLOCK) \
	X(13, rwlock_trywrlock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_RWLOCK | KTRACE_LOCK_F_TRY) \
	X(14, rwlock_timedwrlock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_RWLOCK) \
	X(15, rwlock_unlock, KTRACE_LOCK_K_UNLOCK, KTRACE_LOCK_F_RWLOCK) \
	X(16, spin_lock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_SPIN) \
	X(17, spin_trylock, KTRACE_LOCK_K_LOCK, KTRACE_LOCK_F_SPIN | KTRACE_LOCK_F_TRY) \
	X(18, spin_unlock, KTRACE_LOCK_K_UNLOCK, KTRACE_LOCK_F_SPIN) \
	X(19, cond_wait, KTRACE_LOCK_K_WAIT, 0) \
	X(20, cond_timedwait, KTRACE_LOCK_K_WAIT, 0) \
	X(21, cond_signal, KTRACE_LOCK_K_SIGNAL, 0) \
	X(22, cond_broadcast, KTRACE_LOCK_K_SIGNAL, 0) \
	X(23, thread_exit, KTRACE_LOCK_K_EXIT, 0)
/* clang-format on */

#define KTRACE_LOCK_OP_MAX 23

/* The event code of (op, phase) and back. */
#define KTRACE_LOCK_CODE(op, phase) ((unsigned)(((op) << 2) | (phase)))
#define KTRACE_LOCK_OP(code) ((unsigned)((code) >> 2) & 0x3f)
#define KTRACE_LOCK_PHASE(code) ((unsigned)(code) & 3)

/* The site and (failed events) the error number of word 1. */
#define KTRACE_LOCK_SITE(w1) ((w1) & 0xffffffffffffull)
#define KTRACE_LOCK_ERR(w1) ((unsigned)((w1) >> 48))

#endif /* KTRACE_LOCKS_H */

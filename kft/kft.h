/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/kft.h - what every file of the freestanding KFT engine shares.
 *
 * The KFT engine (the kft/ sources) is compiled twice: into libktrace for programs
 * built with -finstrument-functions, and into the kernel module.  So it
 * uses no libc, no floating point and no allocation: fixed-width types from
 * <ktrace/format.h>, compiler builtins for atomics, and memory handed in by
 * the caller.  This header supplies the few portable pieces the engine
 * needs: NULL, branch hints, atomics and error numbers.
 *
 * Atomics are GCC/Clang __atomic builtins, which both user space and the
 * kernel (x86-64, arm64) compile to plain instructions.  The engine only
 * needs relaxed/acquire loads, release stores, a 64-bit compare-and-swap
 * and a 64-bit minimum.
 */
#ifndef KFT_KFT_H
#define KFT_KFT_H

#include <ktrace/format.h>

#ifndef NULL
#define NULL ((void *)0)
#endif

#define KFT_LIKELY(x) __builtin_expect(!!(x), 1)
#define KFT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define KFT_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define KFT_LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define KFT_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define KFT_STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* Compare-and-swap; on failure *expected is updated. Returns nonzero on success. */
#define KFT_CAS(p, expected, desired)                                                   \
	__atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL, \
				    __ATOMIC_ACQUIRE)

/*
 * Error numbers returned (negated) by the engine.  They are Linux's errno
 * values, so user space and the kernel can pass them on unchanged.
 */
#define KFT_EINVAL 22 /* bad argument or configuration */
#define KFT_EBUSY 16  /* the command does not apply in the current state */
#define KFT_ENOENT 2  /* unknown function name (resolver) */
#define KFT_ENOSPC 28 /* a table is full */

#endif /* KFT_KFT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * kft_lib_text.c - compiles the bounded text builder of the KFT
 * engine (kft/text.c) into ktrace.ko.  The file is the one libktrace
 * compiles for programs: freestanding C, no libc, no floating point, no
 * allocation (kft/kft.h), so /proc/kft and `ktrace kft` share one
 * implementation.  Kbuild finds kft/ in the source tree (../kft) or, in a
 * DKMS copy, next to this file.
 */
#include "kft/text.c"

/*
 * kclient/internal.h - what the files of libktrace-kclient share and
 * nothing else may use: the error reporting behind kcl_set_report(),
 * whole-file reading, the clock.
 * Only files in kclient/ include it; the library's API is kclient.h.
 */
#ifndef KTRACE_KCLIENT_INTERNAL_H
#define KTRACE_KCLIENT_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "kclient/kclient.h"

/**
 * kcl_error() - report an error of the ktrace command @cmd ("record",
 * "read", "kft", "lkst"): the message formatted from @fmt (cut at 4095
 * bytes) goes to the kcl_set_report() hook.  Not async-signal-safe (never
 * call it in a signal handler or between fork() and exec()).
 */
void kcl_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * kcl_slurp() - read the whole file @path (also a /proc or debugfs file,
 * whose size is 0) into a malloc'ed buffer, NUL-terminated after its
 * *@len bytes (kclient/slurp.c).
 * @max: the most bytes accepted; a longer file fails with EFBIG.
 * Return: the buffer, or NULL with errno set (*@len then holds the bytes
 * read before a read error).  Thread-safe.
 */
char *kcl_slurp(const char *path, size_t *len, size_t max);

/** kcl_slurp_fd() - the same from an open descriptor @fd (not closed). */
char *kcl_slurp_fd(int fd, size_t *len, size_t max);

/** kcl_now_ns() - the clock @c in ns. */
static inline uint64_t kcl_now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif

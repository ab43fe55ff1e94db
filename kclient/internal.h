/*
 * kclient/internal.h - what the files of libktrace-kclient share and
 * nothing else may use: the error reporting behind kcl_set_report().
 * Only files in kclient/ include it; the library's API is kclient.h.
 */
#ifndef KTRACE_KCLIENT_INTERNAL_H
#define KTRACE_KCLIENT_INTERNAL_H

#include "kclient/kclient.h"

/**
 * kcl_error() - report an error of the ktrace command @cmd ("record",
 * "read", "kft", "lkst"): the message formatted from @fmt (cut at 4095
 * bytes) goes to the kcl_set_report() hook.  Not async-signal-safe (never
 * call it in a signal handler or between fork() and exec()).
 */
void kcl_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

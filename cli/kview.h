/*
 * cli/kview.h - what the views of a merged application + kernel trace share
 * (`ktrace timeline`, `ktrace export`): which tasks to show, and function
 * names for CALL records.
 *
 * Task selection.  By default a view shows the traced program: the process
 * whose trace it is (metadata `pid`) and every process and thread it forked
 * (PROCESS_FORK events, followed as the records go by); a trace with no
 * program (kernel only) shows every task.  --all shows every task; -p/-t
 * lists pick processes (tgids) and threads.  The idle task (pid 0) is never
 * a task here.
 *
 * Function names.  A CALL record names its function by address; names come
 * from the trace's memory maps through the reader's symbolizer (elfutils),
 * cached per call-site key, "0xADDR" when unknown.
 *
 * Not thread-safe; memory: one entry per selected process and per distinct
 * call site.
 */
#ifndef KTRACE_CLI_KVIEW_H
#define KTRACE_CLI_KVIEW_H

#include <stdint.h>

#include "cli/cli.h"
#include "reader/reader.h"

struct kv_tasks;

/**
 * kv_tasks_new() - the task selection for trace @t: @all, or the
 * processes @pids and threads @tids (either may be empty), else the
 * program and its descendants (see above).  Return: NULL on ENOMEM.
 */
struct kv_tasks *kv_tasks_new(const struct ktr_trace *t, int all, const struct cli_idlist *pids,
			      const struct cli_idlist *tids);
/** kv_tasks_feed() - follow forks: call for every record, in order. */
void kv_tasks_feed(struct kv_tasks *k, const struct ktr_rec *r);
/** kv_tasks_want() - 1 if task @tid of process @pid (0 = unknown) is shown (ktr_sched_follow()). */
int kv_tasks_want(void *k, uint32_t tid, uint32_t pid);
/** kv_tasks_free() - free @k (NULL allowed). */
void kv_tasks_free(struct kv_tasks *k);

struct kv_names;

/**
 * kv_names_new() - a name cache for the CALL records of @t, C++ names
 * demangled when @demangle.  NULL on ENOMEM.
 */
struct kv_names *kv_names_new(struct ktr_trace *t, int demangle);
/** kv_names_call() - the function name of call @c (owned by the cache). */
const char *kv_names_call(struct kv_names *n, const struct ktr_call *c);
/** kv_names_free() - free @n (NULL allowed). */
void kv_names_free(struct kv_names *n);

/** kv_comm() - the name of task @tid ("?" if unknown; owned by @t). */
const char *kv_comm(const struct ktr_trace *t, uint32_t tid);

#endif

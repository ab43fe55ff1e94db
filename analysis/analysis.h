/*
 * analysis/analysis.h - the analysis shared by ktrace's reading commands
 * (libktrace-analysis.a): which tasks a view shows, the names of functions
 * and tasks, the progress line of long reads.  It works on the reader's
 * records (reader/reader.h) and knows nothing of options or output
 * formats: cli/ turns options into its arguments, formats/ writes what it
 * computes.
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
 * Progress: a progress line for long reads and exports: on a
 * terminal (stderr is a tty) a line "ktrace CMD: 42% 12.3M records,
 * 4.1M records/s" is redrawn at most twice a second; when stderr is not a
 * terminal (piped, redirected, tests) nothing is printed at all, nor when
 * the command's own output goes to that terminal.
 *
 * Progress is measured in bytes: the sum of the trace's stream file sizes
 * (application streams and the kernel sub-trace's) against the byte offset
 * of the latest record of each stream, so it is exact for one stream and
 * close for a merge.  The per-record cost is a counter increment and, every
 * 65536 records, a clock read.
 *
 * Not thread-safe: one user per object; one progress line per process at a
 * time.  Memory: one entry per selected process and per distinct call site.
 */
#ifndef KTRACE_ANALYSIS_H
#define KTRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "reader/reader.h"

/**
 * struct ka_ids - a set of process or thread ids, as `--tid 12,15` gives
 * (cli_idlist_parse()); an empty set selects every id.
 */
struct ka_ids {
	uint64_t *v;
	size_t n;
};

/** ka_ids_has() - 1 if @x is in @l or @l is empty, else 0. */
int ka_ids_has(const struct ka_ids *l, uint64_t x);

/* ---- tasks (analysis/tasks.c) ------------------------------------------------- */

struct ka_tasks;

/**
 * ka_tasks_new() - the task selection for trace @t: @all, or the
 * processes @pids and threads @tids (either may be empty), else the
 * program and its descendants (see above).  Return: NULL on ENOMEM.
 */
struct ka_tasks *ka_tasks_new(const struct ktr_trace *t, int all, const struct ka_ids *pids,
			      const struct ka_ids *tids);
/** ka_tasks_feed() - follow forks: call for every record, in order. */
void ka_tasks_feed(struct ka_tasks *k, const struct ktr_rec *r);
/** ka_tasks_want() - 1 if task @tid of process @pid (0 = unknown) is shown (ktr_sched_follow()). */
int ka_tasks_want(void *k, uint32_t tid, uint32_t pid);
/** ka_tasks_free() - free @k (NULL allowed). */
void ka_tasks_free(struct ka_tasks *k);

/* ---- names (analysis/names.c) ------------------------------------------------- */

struct ka_names;

/**
 * ka_names_new() - a name cache for the CALL records of @t, C++ names
 * demangled when @demangle.  NULL on ENOMEM.
 */
struct ka_names *ka_names_new(struct ktr_trace *t, int demangle);
/** ka_names_call() - the function name of call @c (owned by the cache). */
const char *ka_names_call(struct ka_names *n, const struct ktr_call *c);
/** ka_names_free() - free @n (NULL allowed). */
void ka_names_free(struct ka_names *n);

/** ka_comm() - the name of task @tid ("?" if unknown; owned by @t). */
const char *ka_comm(const struct ktr_trace *t, uint32_t tid);

/* ---- progress (analysis/progress.c) ------------------------------------------- */

struct ka_progress;

/**
 * ka_progress_start() - begin a progress line for reading @t in command
 * @cmd; @to_stdout: the command writes its output to standard output while
 * reading (then a terminal there means no progress line).
 * KTRACE_PROGRESS=1 in the environment forces it on (one line per update
 * and a final "100%" line; for tests), KTRACE_PROGRESS=0 off.
 * Return: the progress state, or NULL when it is off (all functions accept
 * NULL).
 */
struct ka_progress *ka_progress_start(const struct ktr_trace *t, const char *cmd, int to_stdout);

/** ka_progress_rec() - account record @r (call for every record or gap). */
void ka_progress_rec(struct ka_progress *p, const struct ktr_rec *r);

/** ka_progress_end() - erase the line (or end it) and free @p. */
void ka_progress_end(struct ka_progress *p);

#endif

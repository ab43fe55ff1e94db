/*
 * cli/progress.h - a progress line for long reads and exports: on a
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
 * Not thread-safe; one progress line per process at a time.
 */
#ifndef KTRACE_CLI_PROGRESS_H
#define KTRACE_CLI_PROGRESS_H

#include <stdint.h>

#include "reader/reader.h"

struct cli_progress;

/**
 * cli_progress_start() - begin a progress line for reading @t in command
 * @cmd; @to_stdout: the command writes its output to standard output while
 * reading (then a terminal there means no progress line).
 * KTRACE_PROGRESS=1 in the environment forces it on (one line per update
 * and a final "100%" line; for tests), KTRACE_PROGRESS=0 off.
 * Return: the progress state, or NULL when it is off (all functions accept
 * NULL).
 */
struct cli_progress *cli_progress_start(const struct ktr_trace *t, const char *cmd, int to_stdout);

/** cli_progress_rec() - account record @r (call for every record or gap). */
void cli_progress_rec(struct cli_progress *p, const struct ktr_rec *r);

/** cli_progress_end() - erase the line (or end it) and free @p. */
void cli_progress_end(struct cli_progress *p);

#endif

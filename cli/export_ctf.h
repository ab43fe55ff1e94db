/*
 * cli/export_ctf.h - `ktrace export --format=ctf`: a trace as a CTF 1.8
 * trace directory, written by libbabeltrace2's sink.ctf.fs component
 * (cli/export_ctf.c).  Kept out of formats/ because it needs libbabeltrace2,
 * which the fuzz build does not link.
 */
#ifndef KTRACE_CLI_EXPORT_CTF_H
#define KTRACE_CLI_EXPORT_CTF_H

#include <stdint.h>

struct ktr_trace;
struct ka_names;
struct cli_select;

/**
 * export_ctf() - write trace @t (application and kernel records merged on
 * CLOCK_MONOTONIC) as a CTF 1.8 trace in the directory @outdir.
 * @names:     names the calls (ka_names_call()).
 * @sel:       the thread/process/time selection (cli/select.h).
 * @no_kernel: leave the kernel records out.
 * @events:    receives the number of CTF events written (entry and exit of
 *             a call count as two).
 * @outdir is created with mode 0700 (with its missing parents) or, if it
 * exists, must be an empty directory owned by the caller and not a
 * symbolic link (lib/safefile.h).  Reads @t twice (ktr_rewind()): the
 * first pass sorts the calls by entry time (ktr_callsort_*(), bounded
 * memory), the second merges them with the other records.  Errors are
 * reported with cli_error(CMD, ...).  Not thread-safe (libbabeltrace2's
 * per-thread error state).
 * Return: 0, or 1 after an error was reported (output incomplete).
 */
int export_ctf(struct ktr_trace *t, struct ka_names *names, const struct cli_select *sel,
	       int no_kernel, const char *outdir, uint64_t *events);

#endif

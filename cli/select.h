/*
 * cli/select.h - what every reading subcommand (print, kd, graph,
 * addr2sym, export, timeline, info) shares: which trace, which part of it,
 * how names look (cli/select.c).
 *
 *   DIR              the trace directory; ./ktrace.data when none is given
 *                    (uftrace's habit with uftrace.data)
 *   -p, --pid LIST   only these processes (comma-separated ids)
 *   --tid LIST       only these threads
 *   --time-range START~END
 *                    only what lies in [START, END]: a call counts when it
 *                    begins at or after START and ends at or before END, any
 *                    other record when its time does; either bound may be
 *                    left out ("~5ms", "2s~").  A bound with a unit (ns,
 *                    us, ms, s, m; decimals allowed: 1.5ms) counts from the
 *                    trace's time origin (the program's start for function
 *                    traces, as the Entry columns do); a bare integer is a
 *                    CLOCK_MONOTONIC time in ns, as `ktrace print` shows it
 *   --no-demangle    C++ names as the symbol table spells them
 *
 * Usage in a subcommand: CLI_OPT_INCLUDE(cli_select_opts) in its option
 * table and its struct cli_select to cli_opts_parse() (cli/options.h).
 */
#ifndef KTRACE_CLI_SELECT_H
#define KTRACE_CLI_SELECT_H

#include <stdint.h>

#include "cli/cli.h"
#include "analysis/analysis.h"
#include "reader/reader.h"

/* Long-option keys (above every short option and CLI_OPT_LONG + 0xeff). */
enum {
	CLI_OPT_TID = 0x1000,
	CLI_OPT_PID,
	CLI_OPT_RANGE,
	CLI_OPT_NO_DEMANGLE,
	CLI_OPT_SELECT_END, /* first value free for the subcommand */
};

/**
 * struct cli_select - the selection of a reading subcommand.
 * @tids, @pids:   empty = every thread / process.
 * @from, @to:     the time range in CLOCK_MONOTONIC ns after
 *                 cli_select_open() (0 and UINT64_MAX without one).
 * @demangle:      1 (default) or 0 (--no-demangle).
 */
struct cli_select {
	struct ka_ids tids, pids;
	uint64_t from, to;
	int from_rel, to_rel; /* bounds given with a unit: relative to the origin */
	int demangle;
};

/** cli_select_init() - everything selected, names demangled. */
void cli_select_init(struct cli_select *s);

/**
 * cli_select_option() - take option @opt (as getopt_long() returned it)
 * with @arg if it is one of the selection's.
 * Return: 1 taken, 0 not a selection option, -1 bad value (the error is
 * printed, naming @cmd and the option: exit with status 2).
 */
int cli_select_option(struct cli_select *s, const char *cmd, int opt, const char *arg);

/**
 * cli_select_dir() - the trace directory of the command line: the one
 * argument left at @optind, or "ktrace.data" when none is left.
 * Return: the directory, or NULL after printing "unexpected argument"
 * (exit with status 2).
 */
const char *cli_select_dir(const char *cmd, int argc, char **argv, int optind);

/**
 * cli_select_open() - open trace @dir (ktr_open()) and turn relative
 * time bounds into CLOCK_MONOTONIC ns from its time origin.  Prints
 * "ktrace CMD: DIR: what" when the directory cannot be opened or does not
 * exist.  Return: the trace, or NULL (exit with status 1).
 */
struct ktr_trace *cli_select_open(struct cli_select *s, const char *cmd, const char *dir);

/**
 * cli_select_task() - 1 if thread @tid of process @pid is selected (--tid,
 * --pid); @sel is the struct cli_select (a want_task callback's shape).
 */
int cli_select_task(void *sel, uint32_t pid, uint32_t tid);

/**
 * cli_select_window() - let the reader of @t skip the sub-buffers outside
 * --time-range (ktr_set_window()): for tools that use only the records and
 * calls cli_select_rec() and cli_select_call() select.
 */
void cli_select_window(const struct cli_select *s, struct ktr_trace *t);

/** cli_select_syms() - a symbolizer for @t with the selection's demangling (NULL: ENOMEM). */
struct ktr_syms *cli_select_syms(const struct cli_select *s, struct ktr_trace *t);

/**
 * cli_select_everything() - 1 if @s selects every task at every time (no
 * --tid, --pid or --time-range given): callers may then skip
 * cli_select_call() (a few ns a call on traces of hundreds of millions).
 */
int cli_select_everything(const struct cli_select *s);

/** cli_select_call() - 1 if call @c is selected (thread, process, inside the range). */
int cli_select_call(const struct cli_select *s, const struct ktr_call *c);

/**
 * cli_select_rec() - 1 if record @r is selected: its thread, process and
 * time.  Gaps are always selected (missing data is never hidden).
 */
int cli_select_rec(const struct cli_select *s, const struct ktr_rec *r);

/** cli_select_free() - release the lists. */
void cli_select_free(struct cli_select *s);

/**
 * cli_parse_time() - a time such as "100us", "1.5ms", "2s", "250ns", "3m"
 * into ns.  @bare_unit_ns: what a number without a unit counts in (1000
 * for microseconds, 0 to require a unit).
 * Return: 0, or -1 (not a time, unknown unit, overflow).
 */
int cli_parse_time(const char *s, uint64_t bare_unit_ns, uint64_t *ns);

/**
 * cli_parse_range() - "START~END" (either side may be empty, not both)
 * into @from/@to in ns; *@from_rel / *@to_rel say whether a bound had a
 * unit (relative to the trace's origin) or was a bare CLOCK_MONOTONIC ns
 * value.  Return: 0, or -1 (syntax, START > END for bounds of one kind).
 */
int cli_parse_range(const char *s, uint64_t *from, int *from_rel, uint64_t *to, int *to_rel);

#endif

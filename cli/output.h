/*
 * cli/output.h - where a subcommand's output goes, as git and perf do it
 * (cli/output.c):
 *
 *  - a pager when standard output is a terminal: $KTRACE_PAGER, else
 *    $PAGER, else `less` with LESS=FRX (quit if one screen, keep colours,
 *    leave the screen as it is); an empty value or "cat" means none, and
 *    so do `ktrace --no-pager CMD` and the subcommands' --no-pager;
 *  - colour when the output is a terminal (or the pager it started),
 *    never when piped or written to a file; `--color=always|never|auto`
 *    and NO_COLOR (any value) decide otherwise;
 *  - "-" as a file name means standard output (`-o -`, `--svg -`);
 *  - the end: standard output is flushed and closed and its errors
 *    (a full disk, a closed pipe, /dev/full) are reported as one line with
 *    a non-zero exit status; the pager is waited for.
 *
 * Single-threaded use; the state is process-wide (one output per command).
 */
#ifndef KTRACE_CLI_OUTPUT_H
#define KTRACE_CLI_OUTPUT_H

#include <stdio.h>

/* Colour choices. */
enum cli_when { CLI_AUTO = -1, CLI_NEVER = 0, CLI_ALWAYS = 1 };

/*
 * Keys of the long options the reading subcommands accept for this: their
 * table, cli_output_opts[], is in cli/options.h (see cli_output_option()).
 */
enum { CLI_OPT_NO_PAGER = 0x1100, CLI_OPT_COLOR };

/**
 * cli_output_option() - take --no-pager / --color[=WHEN] (a command's, or
 * ktrace's own before the command: @cmd NULL).
 * Return: 1 taken, 0 not one of these, -1 bad value (printed; exit 2).
 */
int cli_output_option(const char *cmd, int opt, const char *arg);

/** cli_output_color_default() - the colour choice before any subcommand option. */
void cli_output_color_default(enum cli_when when);

/**
 * cli_pager_start() - page standard output if it is a terminal and paging
 * is not turned off.  Call once, before the first output.  Failing to
 * start the pager is not an error: output goes to the terminal.
 */
void cli_pager_start(void);

/** cli_color() - 1 if the output should carry colours (decided on first call). */
int cli_color(void);

/* Colour escapes: "" when cli_color() is 0. */
const char *cli_c_bold(void);
const char *cli_c_red(void);
const char *cli_c_yellow(void);
const char *cli_c_magenta(void);
const char *cli_c_reset(void);

/**
 * cli_output_end() - at the end of a subcommand: flush and close standard
 * output, wait for the pager, report a write error as "ktrace CMD: writing
 * standard output: REASON".  A pager that quit early (EPIPE) is not an
 * error.  Return: @rc, or 1 if @rc was 0 and standard output failed.
 */
int cli_output_end(const char *cmd, int rc);

#endif

/*
 * cli/cli.h - what the `ktrace` subcommands share: the command table entry,
 * option-error helpers and small file utilities (cli/cli_util.c).
 *
 * A subcommand is one file cli/cmd_NAME.c whose options are a table of
 * cli/options.h (its --help made from that table), and that ends with
 *
 *     KTRACE_COMMAND_OPTS(NAME, "one-line summary", run_fn, cmd_opts);
 *
 * The macro places a struct ktrace_cmd in the "ktrace_cmds" linker section;
 * cli/ktrace.c finds every entry through the linker's __start_/__stop_
 * symbols, so adding a subcommand needs no edit of the dispatcher (the
 * Makefile links every cli object file directly, never through an archive,
 * so no entry is dropped).
 */
#ifndef KTRACE_CLI_H
#define KTRACE_CLI_H

#include <stdint.h>
#include <stdio.h>

#ifndef KTRACE_VERSION
#define KTRACE_VERSION "0.1.0"
#endif

/**
 * struct ktrace_cmd - one subcommand.
 * @name:    as typed after `ktrace`.
 * @summary: one line for `ktrace --help`.
 * @run:     runs it; argv[0] is @name, getopt state is reset.  Returns the
 *           exit status: 0 success, 1 failure (errors in the data, I/O),
 *           2 usage error.
 * @opts:    its option table and help text (cli/options.h): --help and
 *           `ktrace help NAME` print cli_opts_help() of it.
 */
struct cli_cmd_opts;
struct ktrace_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	const struct cli_cmd_opts *opts;
};

#define KTRACE_COMMAND_OPTS(name_, summary_, run_, opts_)                               \
	static const struct ktrace_cmd ktrace_cmd_##name_                               \
		__attribute__((used, section("ktrace_cmds"), aligned(sizeof(void *)))) = { \
			#name_, summary_, run_, &(opts_)                                 \
		}

/** cli_find_command() - the subcommand called @name, or NULL. */
const struct ktrace_cmd *cli_find_command(const char *name);

/* Usage and runtime errors: "ktrace CMD: message" on stderr, one line
 * (control characters in the message are shown as '?'; at most 4 KiB). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * cli_kernel_tasks() - name the tasks of the kernel trace in @dst (a
 * ktrace.ko channel's copy, a kernel KFT log) in @dst/threads as "TID PID
 * COMM": those its PROCESS_COMM records name, then every other thread id
 * its records carry without a process or a name, looked up in @procdir
 * ("/proc", on the machine the trace was recorded on, right after the
 * copy; NULL: none, as for a crash region) /TID/status (tasks gone are
 * left out) (cli/kernel_tasks.c).  Return: 0, or -1 (the trace cannot be opened, or
 * the file written: one line on stderr as @cmd).
 */
int cli_kernel_tasks(const char *cmd, const char *dst, const char *procdir);

struct ktr_trace;
/* Print the reader's pending diagnostics of @t (ktr_diag_next()), one
 * cli_error() line each. */
void cli_diags(const char *cmd, struct ktr_trace *t);

/**
 * cli_check_trace() - refuse a hostile trace directory before reading it
 * outside the reader (read, read --recover, ctl): every file of @dir (and
 * of @dir/kernel) named like a trace file must be a regular file, not a
 * link, FIFO or device (ksf_trace_check(), lib/safefile.h).
 * Return: 0, or 1 after one line per such file on stderr as @cmd
 * ("DIR/NAME: is a symbolic link: not following it").
 */
int cli_check_trace(const char *cmd, const char *dir);

/**
 * cli_fopen_in() - fopen(@dir/@name, "r") through ksf_read_open() (never
 * a link, only a regular file, O_NONBLOCK).  Return: the stream, or NULL
 * with *@err (if not NULL) the -errno; nothing is printed (ktr_open() has
 * said it for the trace's own files).
 */
FILE *cli_fopen_in(const char *dir, const char *name, int *err);

/**
 * cli_bad_option() - report the option getopt_long() just rejected, as one
 * line naming it: "unknown option '--foo'", "option '-n' needs a value".
 * @cmd: the command ("ktrace CMD: ..."), or NULL for ktrace's own options.
 * @c: what getopt_long() returned: '?' or ':' (short options must start
 *     with ':' so a missing value is told apart; cli_getopt_reset() sets
 *     opterr = 0).
 * Return: 2, the exit status of usage errors.
 */
int cli_bad_option(const char *cmd, int c, int argc, char **argv);

/**
 * cli_parse_u64() - parse a whole decimal or 0x-hex number.
 * Return: 0, or -1 (not a number, trailing garbage, overflow).
 */
int cli_parse_u64(const char *s, uint64_t *v);

/**
 * cli_find_beside() - a file that ships with the ktrace binary: the path
 * in environment variable @env if it is set (it must be readable), else
 * the first of @rel[@n] (paths relative to the binary's directory, from
 * /proc/self/exe: "libktrace.so.0", "../lib/libktrace.so.0") that is
 * readable, resolved by realpath(3) into @out (@size bytes).
 * Return: 0, or -1 (none found).
 */
int cli_find_beside(const char *env, const char *const *rel, size_t n, char *out, size_t size);

struct fmt_plugin;

/**
 * cli_export_plugin() - the exporters of ktrace-export.so (formats/plugin.h),
 * loaded on the first call (dlopen) from beside the binary or from
 * ../lib/ktrace ($KTRACE_EXPORT_PLUGIN overrides).  Not thread-safe.
 * Return: the plugin's table, or NULL (reported as "ktrace @cmd: ...").
 */
const struct fmt_plugin *cli_export_plugin(const char *cmd);

/**
 * cli_write_file_atomic() - replace DIR/NAME by @text in an existing trace
 * directory (whoever owns it: `ktrace ctl`, `ktrace kft`): write a
 * temporary with an unpredictable name (mode 0600), then rename(2) it over
 * NAME (ksf_replace_at()), so a reader sees the old or the new contents,
 * never a mix, and a link named NAME is replaced, never written through.
 * Return: 0, or -errno (the temporary removed).
 */
int cli_write_file_atomic(const char *dir, const char *name, const char *text);

/**
 * cli_no_calls() - `kd` and `addr2sym` found nothing to report in trace
 * @t (directory @dir): say why, in one line (no CALL record at all, or
 * @call_records calls none of which passed --tid/--pid/--time-range, or
 * none read because --time-range skipped every sub-buffer).  The caller
 * then exits 1.
 */
void cli_no_calls(const char *cmd, const struct ktr_trace *t, const char *dir, uint64_t call_records);

/**
 * cli_calls_failed() - `kd` and `addr2sym` could not read the trace
 * (-@err), or, @sorting, order its calls: say so in one line, naming the
 * directory of the sorter's temporary files ($TMPDIR, else /tmp).
 * Return: 1, the exit status.
 */
int cli_calls_failed(const char *cmd, int sorting, int err);

/**
 * cli_parse_sort_mem() - the value of --sort-mem: a size of 4K or more
 * (cli_parse_size()) into *@bytes.  Return: 0, or 2 after one line
 * "ktrace CMD: option '--sort-mem': 'X' is not a size of 4K or more".
 */
int cli_parse_sort_mem(const char *cmd, const char *arg, size_t *bytes);

/**
 * cli_trace_dir() - prepare the directory @dir to receive a trace:
 * ksf_dir_open(@dir, @flags) (lib/safefile.h: created 0700, or an existing
 * directory of yours that is not a symbolic link; KSF_TRACE: empty or
 * holding a trace; KSF_CLEAR: that trace removed).
 * Return: 0, or -1 with one line "ktrace CMD: DIR: why" printed.
 */
int cli_trace_dir(const char *cmd, const char *dir, unsigned flags);

/**
 * struct cli_out - an output file named by the user (`export -o`,
 * `timeline --svg`), being written.  @f: where to write.
 */
struct cli_out {
	FILE *f;
	const char *path;
	int dirfd;         /* the directory holding it; -1: written in place */
	char tmp[256];     /* the temporary, renamed to @name at the end */
	char name[256];
};

/**
 * cli_out_open() - start writing the file @path (NULL or "-": standard
 * output).  A regular file is written to a temporary (mode 0600, an
 * unpredictable name, in the same directory) that cli_out_close() renames
 * over @path, so no existing file is ever written through; a device or FIFO
 * is written in place; a symbolic link or a directory is refused.  Links
 * among the leading components are followed only if root or the caller owns
 * them (ksf_parent_open()).
 * Return: 0, or 1 with one line "ktrace CMD: PATH: what" printed.
 */
int cli_out_open(const char *cmd, struct cli_out *o, const char *path);

/**
 * cli_out_close() - flush and close @o; the file takes its name unless a
 * write failed (then the temporary is removed and @path left as it was).
 * Return: 0, or 1 with one line printed.
 */
int cli_out_close(const char *cmd, struct cli_out *o);

/**
 * cli_out_abort() - close @o after a failure that was already reported:
 * the temporary is removed and @path left as it was (standard output or a
 * device is just flushed).
 */
void cli_out_abort(struct cli_out *o);

/**
 * cli_parse_size() - parse a size in bytes: a decimal or 0x-hex number with
 * an optional binary suffix K, M or G (either case).  Range checks are the
 * caller's.  Return: 0, or -1 (not a size, a sign, trailing garbage,
 * overflow).
 */
int cli_parse_size(const char *s, uint64_t *bytes);



/**
 * cli_idlist_parse() - append the comma-separated numbers of @arg (decimal
 * or 0x-hex, each at most @max) to @l (an id set of analysis/analysis.h).
 * Return: 0, or -1 (not a number, too large, empty, out of memory).
 */
struct ka_ids;
int cli_idlist_parse(const char *arg, uint64_t max, struct ka_ids *l);


/** cli_idlist_free() - release @l's memory and empty it. */
void cli_idlist_free(struct ka_ids *l);

/**
 * cli_getopt_reset() - make getopt_long() start over on a new argv
 * (subcommands parse argv after the dispatcher did).
 */
void cli_getopt_reset(void);

struct kc_session;
/**
 * cli_dump() - a flight recorder's dump (kc_snapshot()) of session @s,
 * whose trace directory is @dir, and one line on @out starting with
 * @prefix: where it went and what it holds (`ktrace ctl DIR dump`, SIGUSR2
 * to `ktrace record`; cli/cmd_ctl.c).  Return: 0, or 1 after a one-line
 * error.  Not async-signal-safe.
 */
int cli_dump(const char *cmd, struct kc_session *s, const char *dir, FILE *out, const char *prefix);

struct ktr_trace;
/**
 * cli_losses() - after a warning about missing records, say where they
 * are missing: up to 5 lines "ktrace CMD:   N records lost in stream S
 * between A and B s" (CLOCK_MONOTONIC seconds, ktr_losses()), then how
 * many more stretches there are.  On stderr.
 */
void cli_losses(const char *cmd, const struct ktr_trace *t);

#endif

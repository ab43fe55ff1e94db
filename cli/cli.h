/*
 * cli/cli.h - what the `ktrace` subcommands share: the command table entry,
 * option-error helpers and small file utilities (cli/cli_util.c).
 *
 * A subcommand is one file cli/cmd_NAME.c that ends with
 *
 *     KTRACE_COMMAND(NAME, "one-line summary", run_fn, help_fn);
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
 * @help:    prints the full usage text to @out.
 */
struct ktrace_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *out);
};

#define KTRACE_COMMAND(name_, summary_, run_, help_)                                    \
	static const struct ktrace_cmd ktrace_cmd_##name_                               \
		__attribute__((used, section("ktrace_cmds"), aligned(sizeof(void *)))) = { \
			#name_, summary_, run_, help_                                   \
		}

/** cli_find_command() - the subcommand called @name, or NULL. */
const struct ktrace_cmd *cli_find_command(const char *name);

/* Usage and runtime errors: "ktrace CMD: message" on stderr, one line. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * cli_bad_option() - report the option getopt_long() just rejected, as one
 * line naming it: "unknown option '--foo'", "option '-n' needs a value".
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
 * cli_write_file_atomic() - replace DIR/NAME by @text: write DIR/.NAME.tmpPID
 * (mode 0600), then rename(2) over NAME, so a reader sees the old or the
 * new contents, never a mix.  Return: 0, or -errno (the temp file removed).
 */
int cli_write_file_atomic(const char *dir, const char *name, const char *text);

/**
 * cli_parse_size() - parse a size in bytes: a decimal or 0x-hex number with
 * an optional binary suffix K, M or G (either case).  Range checks are the
 * caller's.  Return: 0, or -1 (not a size, a sign, trailing garbage,
 * overflow).
 */
int cli_parse_size(const char *s, uint64_t *bytes);

/** cli_csv_str() - write @s as one CSV field, quoted when it holds a comma, quote or line break. */
void cli_csv_str(FILE *out, const char *s);

/** cli_json_str() - write @s as a JSON string literal (quotes, escapes, \uXXXX controls). */
void cli_json_str(FILE *out, const char *s);

/**
 * struct cli_idlist - the numbers of an option such as `--tid 12,15`.
 * An empty list selects everything.
 */
struct cli_idlist {
	uint64_t *v;
	size_t n;
};

/**
 * cli_idlist_parse() - append the comma-separated numbers of @arg (decimal
 * or 0x-hex, each at most @max) to @l.
 * Return: 0, or -1 (not a number, too large, empty, out of memory).
 */
int cli_idlist_parse(const char *arg, uint64_t max, struct cli_idlist *l);

/** cli_idlist_has() - 1 if @x is in @l or @l is empty, else 0. */
int cli_idlist_has(const struct cli_idlist *l, uint64_t x);

/** cli_idlist_free() - release @l's memory and empty it. */
void cli_idlist_free(struct cli_idlist *l);

/**
 * cli_getopt_reset() - make getopt_long() start over on a new argv
 * (subcommands parse argv after the dispatcher did).
 */
void cli_getopt_reset(void);

struct ktr_trace;
/**
 * cli_losses() - after a warning about missing records, say where they
 * are missing: up to 5 lines "ktrace CMD:   N records lost in stream S
 * between A and B s" (CLOCK_MONOTONIC seconds, ktr_losses()), then how
 * many more stretches there are.  On stderr.
 */
void cli_losses(const char *cmd, const struct ktr_trace *t);

#endif

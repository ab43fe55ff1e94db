/*
 * cli/options.h - how a subcommand declares its options: one table of
 * {long name, key (short letter), argument name, help text} from which
 * both the parser (getopt_long() underneath) and the `--help` lines are
 * made, so the two cannot drift apart (cli/options.c).
 *
 *     static const struct cli_opt opts[] = {
 *             CLI_OPT("top", 'n', "N", "rows of the table (default 20; 0: all)"),
 *             CLI_OPT("svg", OPT_SVG, "FILE", "draw an SVG picture instead"),
 *             CLI_OPT_INCLUDE(cli_select_opts),   -p --tid --time-range --no-demangle
 *             CLI_OPT_INCLUDE(cli_output_opts),   --no-pager --color
 *             CLI_OPT_END,
 *     };
 *     static const struct cli_cmd_opts cmd_opts = {
 *             "locks", "usage: ktrace locks [--top N] [DIR]\n\n...\n", opts,
 *             "Exit status: ...\n",
 *     };
 *     ...
 *     rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, take_option, &o);
 *     KTRACE_COMMAND_OPTS(locks, "summary", run, cmd_opts);
 *
 * Every command has -h, --help (the parser prints the help and the command
 * exits 0), listed last: a table declares neither 'h' nor "help".
 * The help lines have one format for every command: "  -n, --top N" (or
 * "      --svg FILE" without a short letter), its text after 25 characters
 * (on the next line when the option is longer; struct cli_cmd_opts'
 * help_column says otherwise), each further line of the text there too.
 */
#ifndef KTRACE_CLI_OPTIONS_H
#define KTRACE_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

struct cli_select;

/**
 * struct cli_opt - one entry of a command's option table.
 * @name:    the long name without "--"; NULL for a text line, an include
 *           or the end.
 * @key:     what the parser hands over for it: the short letter (a
 *           printable ASCII character, usable as -@key too), or a value of
 *           CLI_OPT_LONG or more for an option that has no short form.
 * @arg:     NULL: no argument; "N", "FILE": a required one (shown as
 *           "--name N"); "[=WHEN]": an optional one, shown as written and
 *           given only as --name=VALUE.
 * @help:    its help text, lines separated by '\n' (no final newline);
 *           NULL: not listed (an alias such as --colour).  For a text line
 *           (@name NULL), the line(s) printed as they are: a heading or "".
 * @include: with @name NULL: the entries of this table stand here.
 * @store:   0: the option goes to the command's handler (cli_opt_fn);
 *           else 1 + the offset in the handler's struct (@ctx) where the
 *           parser keeps it itself: 1 in an int for an option without
 *           argument, the argument in a const char * (CLI_OPT_FLAG(),
 *           CLI_OPT_STRING(): the member's type is checked when compiled).
 */
struct cli_opt {
	const char *name;
	int key;
	const char *arg;
	const char *help;
	const struct cli_opt *include;
	size_t store;
};

/* Keys of long-only options start here (above every short letter). */
#define CLI_OPT_LONG 0x100

#define CLI_OPT(name_, key_, arg_, help_) { name_, key_, arg_, help_, NULL, 0 }
#define CLI_OPT_TEXT(text_) { NULL, 0, NULL, text_, NULL, 0 }
#define CLI_OPT_INCLUDE(table_) { NULL, 0, NULL, NULL, table_, 0 }
#define CLI_OPT_END { NULL, 0, NULL, NULL, NULL, 0 }
/* An option without argument that sets the int member @member_ of @type_ to 1. */
#define CLI_OPT_FLAG(name_, key_, type_, member_, help_) \
	{ name_, key_, NULL, help_, NULL, CLI_OPT_STORE_(type_, member_, int) }
/* An option whose argument goes to the const char * member @member_ of @type_. */
#define CLI_OPT_STRING(name_, key_, arg_, type_, member_, help_) \
	{ name_, key_, arg_, help_, NULL, CLI_OPT_STORE_(type_, member_, const char *) }
/* 1 + offsetof(), a compile error (a negative array size) if the member is not of @mtype_. */
#define CLI_OPT_STORE_(type_, member_, mtype_)                                                \
	(1 + offsetof(type_, member_) +                                                       \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((type_ *)0)->member_), mtype_) \
				 ? 1 : -1]))

/**
 * struct cli_cmd_opts - what a command's --help prints and its parser
 * takes: @usage (the usage line and the description), a blank line, the
 * option lines of @opts and --help's, a blank line, @tail (the exit
 * statuses); @opts NULL: the command has no option but --help (its
 * operands say what to do: ctl, kft).  @cmd names the command in errors;
 * @in_order set stops the options at the first operand (getopt's '+': a
 * command line follows, `ktrace kft`'s sub-commands); @help_column, where
 * the option texts start if not at the usual 25 characters (a command
 * with long option names).
 */
struct cli_cmd_opts {
	const char *cmd;
	const char *usage;
	const struct cli_opt *opts;
	const char *tail;
	int in_order;
	int help_column;
};

/* cli_opts_parse()'s result when the command goes on. */
#define CLI_OPTS_GO (-1)

/**
 * cli_opt_fn - a command's handler of its own options: @key and @arg (NULL
 * for an option without one) as declared in its table.  Return: 0 taken,
 * or the exit status to end the command with (2 after printing a one-line
 * "ktrace CMD: option '--top' needs ..." through cli_error()).
 */
typedef int cli_opt_fn(void *ctx, int key, const char *arg);

/**
 * cli_opts_parse() - parse the options of @argv (argv[0] is the command)
 * by @c's table, with getopt_long() after cli_getopt_reset().
 * Each option is taken by, in turn: --help (the help on standard output), the output options (cli_output_option()), @sel's
 * selection options if @sel is not NULL (cli_select_option()), the
 * parser itself for an entry with @store (into @ctx), else @take with
 * @ctx (NULL: the table has no such option).  An unknown option, or one without its value, is one line by
 * cli_bad_option().
 * Return: CLI_OPTS_GO, the operands then start at argv[optind]; or the
 * exit status to end the command with: 0 after --help, 2 after a usage
 * error (printed), or what @take returned.
 * Not reentrant: getopt_long()'s state is process-wide (one parse at a
 * time, on one thread); the tables are constant and may be shared.
 */
int cli_opts_parse(const struct cli_cmd_opts *c, int argc, char **argv, struct cli_select *sel,
		   cli_opt_fn *take, void *ctx);

/**
 * cli_opts_parse_dir() - cli_opts_parse(), then the operand of a reading
 * command: the trace directory (cli_select_dir(): the one argument left,
 * ./ktrace.data when none is) into *@dir.
 * Return: as cli_opts_parse(); 2 after an unexpected second operand.
 */
int cli_opts_parse_dir(const struct cli_cmd_opts *c, int argc, char **argv, struct cli_select *sel,
		       cli_opt_fn *take, void *ctx, const char **dir);

/**
 * cli_opts_help() - print @c's whole help to @out: @c->usage, one line
 * (or more) per listed option in the format above, @c->tail (struct
 * cli_cmd_opts).  Safe from
 * any thread (only @out is written).
 */
void cli_opts_help(FILE *out, const struct cli_cmd_opts *c);

/* The options every reading command may include: cli/select.c, cli/output.c. */
extern const struct cli_opt cli_select_opts[];
extern const struct cli_opt cli_output_opts[];

#endif

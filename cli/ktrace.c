/*
 * cli/ktrace.c - the `ktrace` command: a git-style dispatcher.
 *
 *   ktrace [--version] [--help] [--no-pager] [--color[=WHEN]] COMMAND [ARGS]
 *   ktrace help [COMMAND]
 *
 * When the subcommand returns, standard output is flushed and closed
 * here (cli/output.c): a write error (full disk, /dev/full) is one line
 * on stderr and exit status 1, for every subcommand alike.
 * Subcommands live in cli/cmd_NAME.c and register themselves with
 * KTRACE_COMMAND_OPTS() (cli/cli.h); this file finds them in the "ktrace_cmds"
 * linker section.  Exit status: the subcommand's, or 2 for a usage error
 * here (unknown command or option), with a one-line message.  The
 * kernel clients (kclient/) report their errors through cli_error() too,
 * so every message of every subcommand has the same form.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"
#include "kclient/kclient.h"

extern const struct ktrace_cmd __start_ktrace_cmds[] __attribute__((weak));
extern const struct ktrace_cmd __stop_ktrace_cmds[] __attribute__((weak));

const struct ktrace_cmd *cli_find_command(const char *name)
{
	for (const struct ktrace_cmd *c = __start_ktrace_cmds; c < __stop_ktrace_cmds; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* kcl_report_fn: kclient's errors as the command's own ("ktrace CMD: msg"). */
static void kclient_report(const char *cmd, const char *msg)
{
	cli_error(cmd, "%s", msg);
}

static int cmp_cmd(const void *a, const void *b)
{
	return strcmp((*(const struct ktrace_cmd *const *)a)->name,
		      (*(const struct ktrace_cmd *const *)b)->name);
}

static void usage(FILE *out)
{
	size_t n = (size_t)(__stop_ktrace_cmds - __start_ktrace_cmds);
	const struct ktrace_cmd **v = calloc(n ? n : 1, sizeof(*v));

	fprintf(out, "usage: ktrace [--version] [--help] [--no-pager] [--color[=WHEN]] COMMAND [ARGS]\n\n"
		     "ktrace records and reads traces of the Linux kernel and of programs.\n\n"
		     "Commands:\n");
	for (size_t i = 0; v && i < n; i++)
		v[i] = &__start_ktrace_cmds[i];
	if (v)
		qsort(v, n, sizeof(*v), cmp_cmd);
	for (size_t i = 0; v && i < n; i++)
		fprintf(out, "  %-10s %s\n", v[i]->name, v[i]->summary);
	fprintf(out, "\n'ktrace help COMMAND' or 'ktrace COMMAND --help' shows a command's options;\n"
		     "man ktrace-COMMAND has the details.\n");
	free(v);
}

static int help_cmd(int argc, char **argv)
{
	const struct ktrace_cmd *c;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	c = cli_find_command(argv[1]);
	if (!c) {
		cli_error(NULL, "no help for '%s': not a ktrace command (see ktrace --help)", argv[1]);
		return 2;
	}
	cli_opts_help(stdout, c->opts);
	return 0;
}

/*
 * main() - ktrace's own options, then the command.  They are not a table
 * of cli/options.h: --help is the list of commands (found at run time,
 * usage()), and -h, -V end ktrace at once through cli_output_end(), where
 * cli_opts_parse() would print a fixed text and go on.  --no-pager and
 * --color are cli_output_opts[]'s, taken by cli_output_option().
 */
int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "no-pager", no_argument, NULL, CLI_OPT_NO_PAGER },
		{ "color", optional_argument, NULL, CLI_OPT_COLOR },
		{ "colour", optional_argument, NULL, CLI_OPT_COLOR },
		{ NULL, 0, NULL, 0 },
	};
	const struct ktrace_cmd *c;
	int opt, rc;

	kcl_set_report(kclient_report);
	cli_getopt_reset();
	/* '+': stop at the first non-option, the command name */
	while ((opt = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return cli_output_end(NULL, 0);
		}
		if (opt == 'V') {
			printf("ktrace %s\n", KTRACE_VERSION);
			return cli_output_end("--version", 0);
		}
		rc = cli_output_option(NULL, opt, optarg);
		if (rc < 0)
			return 2;
		if (!rc)
			return cli_bad_option(NULL, opt, argc, argv);
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[optind], "help") == 0)
		return cli_output_end("help", help_cmd(argc - optind, argv + optind));
	c = cli_find_command(argv[optind]);
	if (!c) {
		cli_error(NULL, "'%s' is not a ktrace command (see ktrace --help)", argv[optind]);
		return 2;
	}
	argv += optind;
	argc -= optind;
	cli_getopt_reset();
	/* every subcommand's output is checked here: a full disk is an error */
	return cli_output_end(c->name, c->run(argc, argv));
}

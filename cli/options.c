/*
 * cli/options.c - a command's option table made into getopt_long()'s
 * arguments and into its --help lines (cli/options.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/select.h"

/* Options of one command at the most, its included tables counted. */
#define MAX_OPTS 96
/* Where the help text of an option starts (struct cli_cmd_opts' help_column). */
#define HELP_COLUMN 25

/* getopt_long()'s arguments, made from a table. */
struct getopt_args {
	struct option longopts[MAX_OPTS + 1];
	char shortopts[3 * MAX_OPTS + 3];
	size_t nlong, nshort;
};

/* Every command's last option, added to each table. */
static const struct cli_opt help_opt[] = {
	CLI_OPT("help", 'h', NULL, "this text"),
	CLI_OPT_END,
};

static int is_short(int key)
{
	return key > ' ' && key < 0x7f;
}

/* Add the options of @t (and of the tables it includes) to @g.  Return: 0, or -1 (too many). */
static int add_table(struct getopt_args *g, const struct cli_opt *t)
{
	for (; t->name || t->include || t->help; t++) {
		int has_arg = !t->arg ? no_argument : t->arg[0] == '[' ? optional_argument
								    : required_argument;

		if (!t->name) {
			if (t->include && add_table(g, t->include) < 0)
				return -1;
			continue;
		}
		if (g->nlong == MAX_OPTS)
			return -1;
		g->longopts[g->nlong++] = (struct option){ t->name, has_arg, NULL, t->key };
		if (!is_short(t->key) || strchr(g->shortopts, t->key))
			continue; /* long only, or an alias of a short option already there */
		g->shortopts[g->nshort++] = (char)t->key;
		if (has_arg != no_argument)
			g->shortopts[g->nshort++] = ':';
		if (has_arg == optional_argument)
			g->shortopts[g->nshort++] = ':';
	}
	return 0;
}

static int getopt_args(struct getopt_args *g, const struct cli_cmd_opts *c)
{
	memset(g, 0, sizeof(*g));
	/* '+': stop at the first operand; ':': tell a missing value apart */
	if (c->in_order)
		g->shortopts[g->nshort++] = '+';
	g->shortopts[g->nshort++] = ':';
	return c->opts && add_table(g, c->opts) < 0 ? -1 : add_table(g, help_opt);
}

/* The entry of @t (or of a table it includes; NULL: none) whose key is @key, or NULL. */
static const struct cli_opt *find_key(const struct cli_opt *t, int key)
{
	for (; t && (t->name || t->include || t->help); t++) {
		const struct cli_opt *o = t->include ? find_key(t->include, key) : NULL;

		if (o)
			return o;
		if (t->name && t->key == key)
			return t;
	}
	return NULL;
}

/* Keep option @o's value where its table says, in @ctx. */
static void store(void *ctx, const struct cli_opt *o, const char *arg)
{
	char *at = (char *)ctx + o->store - 1;

	if (o->arg)
		*(const char **)(void *)at = arg;
	else
		*(int *)(void *)at = 1;
}

int cli_opts_parse(const struct cli_cmd_opts *c, int argc, char **argv, struct cli_select *sel,
		   cli_opt_fn *take, void *ctx)
{
	const struct cli_opt *opt;
	struct getopt_args g;
	int key, rc;

	if (getopt_args(&g, c) < 0) {
		cli_error(c->cmd, "more than %d options (a bug: MAX_OPTS in cli/options.c)", MAX_OPTS);
		return 2;
	}
	cli_getopt_reset();
	while ((key = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		if (key == '?' || key == ':')
			return cli_bad_option(c->cmd, key, argc, argv);
		if (key == 'h') {
			cli_opts_help(stdout, c);
			return 0;
		}
		rc = cli_output_option(c->cmd, key, optarg);
		if (!rc && sel)
			rc = cli_select_option(sel, c->cmd, key, optarg);
		if (rc < 0)
			return 2;
		if (rc)
			continue;
		opt = find_key(c->opts, key);
		if (opt && opt->store)
			store(ctx, opt, optarg);
		else if (take && (rc = take(ctx, key, optarg)) != 0)
			return rc;
	}
	return CLI_OPTS_GO;
}

int cli_opts_parse_dir(const struct cli_cmd_opts *c, int argc, char **argv, struct cli_select *sel,
		       cli_opt_fn *take, void *ctx, const char **dir)
{
	int rc = cli_opts_parse(c, argc, argv, sel, take, ctx);

	if (rc != CLI_OPTS_GO)
		return rc;
	*dir = cli_select_dir(c->cmd, argc, argv, optind);
	return *dir ? CLI_OPTS_GO : 2;
}

/* "  -n, --top N" or "      --svg FILE" into @buf. */
static void option_left(const struct cli_opt *o, char *buf, size_t len)
{
	int n = is_short(o->key) ? snprintf(buf, len, "  -%c, --%s", o->key, o->name)
				 : snprintf(buf, len, "      --%s", o->name);

	if (o->arg && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s%s", o->arg[0] == '[' ? "" : " ", o->arg);
}

/* One option's lines: the left part, then its text from @column on. */
static void option_help(FILE *out, const struct cli_opt *o, int column)
{
	char left[128];
	const char *p = o->help;
	int col;

	option_left(o, left, sizeof(left));
	col = fprintf(out, "%s", left);
	if (col > column - 2) {
		fputc('\n', out);
		col = 0;
	}
	for (;;) {
		size_t n = strcspn(p, "\n");

		fprintf(out, "%*s%.*s\n", column - col, "", (int)n, p);
		if (!p[n])
			break;
		p += n + 1;
		col = 0;
	}
}

static void table_help(FILE *out, const struct cli_opt *t, int column)
{
	for (; t->name || t->include || t->help; t++) {
		if (t->include)
			table_help(out, t->include, column);
		else if (!t->name)
			fprintf(out, "%s\n", t->help);
		else if (t->help)
			option_help(out, t, column);
	}
}

void cli_opts_help(FILE *out, const struct cli_cmd_opts *c)
{
	int column = c->help_column ? c->help_column : HELP_COLUMN;

	fprintf(out, "%s\n", c->usage);
	if (c->opts)
		table_help(out, c->opts, column);
	table_help(out, help_opt, column);
	fprintf(out, "\n%s", c->tail);
}

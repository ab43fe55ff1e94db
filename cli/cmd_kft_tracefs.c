/*
 * cli/cmd_kft_tracefs.c - `ktrace kft --tracefs`, the function_graph mode
 * of `ktrace kft` (cli/cmd_kft.c hands its argv over): a KFT configuration
 * run over every kernel function by the kernel's own function_graph
 * tracer.
 *
 *   ktrace kft --tracefs [-c CONFIG] [-o DIR] [-b KB] [-d SECONDS] [-- COMMAND...]
 *
 * This file parses the options and prints the summary; the run itself
 * (tracefs set-up and restore, the configuration mapped onto tracefs and
 * applied again to the calls read, the trace directory) is
 * kft_fgraph_run(), kclient/kft_tracefs.c.
 */
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_kft.h"
#include "cli/options.h"
#include "kclient/kclient.h"

#define CMD "kft"

/* -c, of both the run and extract (into struct kft_fgraph_opts). */
static const struct cli_opt config_opt[] = {
	CLI_OPT_STRING("config", 'c', "FILE", struct kft_fgraph_opts, config,
		       "the configuration (docs/KFT-CONFIG.md); none: every\n"
		       "function from now on"),
	CLI_OPT_END,
};

/* `ktrace kft --tracefs`'s options (-b and -d through take_option()). */
static const struct cli_opt opts[] = {
	CLI_OPT_INCLUDE(config_opt),
	CLI_OPT_STRING("output", 'o', "DIR", struct kft_fgraph_opts, dir,
		       "trace directory (default ktrace.data)"),
	CLI_OPT("buffer", 'b', "KB",
		"ring buffer per CPU in KiB (default 4096); a full\n"
		"buffer loses the later calls, as KFT's log did"),
	CLI_OPT("duration", 'd', "SEC", "stop after SEC seconds (decimals allowed)"),
	CLI_OPT_END,
};

/* --tracefs's usage and description, for the run's help and extract's. */
static const char usage[] =
	"usage: ktrace kft --tracefs [-c CONFIG] [-o DIR] [-b KB] [-d SECONDS] [--] [COMMAND [ARG...]]\n"
	"       ktrace kft --tracefs extract [-c CONFIG] DST\n"
	"\n"
	"Run a KFT configuration over every kernel function with the kernel's\n"
	"function_graph tracer (tracefs) and write the calls as a trace directory that\n"
	"ktrace kd, addr2sym and print read.  mintime becomes tracing_thresh, funclist\n"
	"set_ftrace_filter, noints funcgraph-irqs 0, function triggers kprobe events\n"
	"with traceon/traceoff triggers, start entry F + stop exit F set_graph_function\n"
	"F.  The whole system is traced; tracing stops when COMMAND ends, after\n"
	"SECONDS, at a stop trigger, or on Ctrl-C.\n";

/* What follows the options in both helps: extract, the needs, the exit status. */
static const char tail[] =
	"extract: write the calls of a boot-time run (the parameters of ktrace kft\n"
	"--boot) to DST: switches tracing off, reads the ring buffer, applies the\n"
	"configuration (-c CONFIG, else the one on the kernel command line), then\n"
	"sets current_tracer to nop and removes the boot run's settings.\n"
	"\n"
	"Needs root, tracefs and a kernel with function_graph (CONFIG_FUNCTION_GRAPH_TRACER);\n"
	"without it, ktrace kft --kernel probes chosen functions with ktrace.ko.\n"
	"Exit status: 0 done, 1 error (bad configuration: FILE:LINE:COL: message;\n"
	"no function_graph; tracefs busy), 2 usage error.\n";

/* What `ktrace kft --tracefs --help` prints and its parser takes (cli/options.h). */
static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD, .usage = usage, .opts = opts, .tail = tail, .in_order = 1,
};

/* The same for `ktrace kft --tracefs extract`: its one option, -c. */
static const struct cli_cmd_opts extract_cmd_opts = {
	.cmd = CMD, .usage = usage, .opts = config_opt, .tail = tail, .in_order = 1,
};

/* `ktrace kft --tracefs extract [-c CONFIG] DST`: a boot-time run's trace. */
static int extract(int argc, char **argv)
{
	struct kft_fgraph_opts o = { 0 };
	struct kft_fgraph_stats st;
	int rc = cli_opts_parse(&extract_cmd_opts, argc, argv, NULL, NULL, &o);

	if (rc != CLI_OPTS_GO)
		return rc;
	if (optind + 1 != argc) {
		cli_error(CMD, optind >= argc ? "extract needs a destination directory"
					      : "extract: unexpected argument '%s'",
			  argv[argc - 1]);
		return 2;
	}
	o.dir = argv[optind];
	if (kft_fgraph_extract(&o, &st) < 0)
		return 1;
	printf("%s: %zu calls kept of %zu read (%" PRIu64 " lost)\n", o.dir, st.kept, st.read, st.lost);
	return 0;
}

int kft_opt_buf_kb(const char *arg, unsigned *kb)
{
	uint64_t v;

	if (cli_parse_u64(arg, &v) < 0 || v < 64 || v > (1u << 22)) {
		cli_error(CMD, "-b: '%s' is not a size in KiB (64..4194304)", arg);
		return -1;
	}
	*kb = (unsigned)v;
	return 0;
}

/* cli_opt_fn: -b and -d of the run into struct kft_fgraph_opts.  Return: 0, or 2 (reported). */
static int take_option(void *arg, int key, const char *val)
{
	struct kft_fgraph_opts *o = arg;
	char *end;
	double d;

	if (key == 'b')
		return kft_opt_buf_kb(val, &o->buf_kb) < 0 ? 2 : 0;
	d = strtod(val, &end);
	if (*end || !(d > 0) || d > 1e6) {
		cli_error(CMD, "-d: '%s' is not a number of seconds", val);
		return 2;
	}
	o->duration_ns = (uint64_t)(d * 1e9);
	return 0;
}

int kft_run_tracefs(int argc, char **argv)
{
	struct kft_fgraph_opts o = { .dir = "ktrace.data", .buf_kb = 4096 };
	struct kft_fgraph_stats st;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "extract"))
		return extract(argc - 1, argv + 1);
	rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, take_option, &o);
	if (rc != CLI_OPTS_GO)
		return rc;
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	o.argv = optind < argc ? argv + optind : NULL;
	if (kft_fgraph_run(&o, &st) < 0)
		return 1;
	printf("%s: %zu calls kept of %zu read (%" PRIu64 " lost)\n", o.dir, st.kept, st.read, st.lost);
	return 0;
}

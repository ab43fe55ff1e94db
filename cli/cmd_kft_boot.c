/*
 * cli/cmd_kft_boot.c - `ktrace kft --boot`, boot-time KFT (seed 002's
 * static mode; cli/cmd_kft.c hands its argv over): print the kernel
 * command-line parameters that run a KFT configuration from boot.
 *
 *   ktrace kft --boot [--tracefs | --kernel] [-m SYSTEM.MAP] [-b KB] CONFIG
 *
 * The translation is kft_boot_params(), kclient/kft_boot.c; after the boot,
 * `ktrace kft --tracefs extract DST` (or `--kernel extract DST`) writes the
 * trace directory.
 */
#include <getopt.h> /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_kft.h"
#include "cli/options.h"
#include "kclient/kclient.h"

#define CMD "kft"

/* Keys of --boot's long-only options. */
enum { OPT_TRACEFS = CLI_OPT_LONG, OPT_KERNEL };

/* cli_opt_fn: --tracefs, -b into struct kft_boot_opts (--kernel and -m the parser keeps itself). */
static int take_option(void *arg, int key, const char *val)
{
	struct kft_boot_opts *o = arg;

	if (key == OPT_TRACEFS)
		o->module = 0;
	else if (kft_opt_buf_kb(val, &o->buf_kb) < 0)
		return 2;
	return 0;
}

/* `ktrace kft --boot`'s options. */
static const struct cli_opt opts[] = {
	CLI_OPT("tracefs", OPT_TRACEFS, NULL,
		"(default) the kernel's function_graph tracer from\n"
		"boot: ftrace=function_graph, mintime ->\n"
		"tracing_thresh, funclist -> ftrace_filter, noints ->\n"
		"nofuncgraph-irqs, logentries -> trace_buf_size,\n"
		"trigger functions -> kprobe_event= (applied at\n"
		"extract), the configuration in " KFT_BOOT_CONFIG_PARAM "=;\n"
		"'trigger start entry start_kernel' means from the\n"
		"moment function_graph starts at boot"),
	CLI_OPT_FLAG("kernel", OPT_KERNEL, struct kft_boot_opts, module,
		     "ktrace.ko: " KFT_BOOT_MODULE_PARAM "=, loaded and primed when\n"
		     "the module loads (from the initramfs)"),
	CLI_OPT_STRING("symbols", 'm', "FILE", struct kft_boot_opts, symbols,
		       "the booted kernel's System.map (default\n"
		       "/proc/kallsyms): names are checked there and 0x\n"
		       "addresses named"),
	CLI_OPT("buffer", 'b', "KB",
		"ring buffer per CPU in KiB (default: logentries x 96\n"
		"bytes, at least 1024; 4096 without logentries)"),
	CLI_OPT_END,
};

/* What `ktrace kft --boot --help` prints and its parser takes (cli/options.h). */
static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace kft --boot [--tracefs | --kernel] [-m SYSTEM.MAP] [-b KB] CONFIG\n"
		"\n"
		"Print the kernel command-line parameters that run the KFT configuration\n"
		"CONFIG from boot (seed 002's static mode); add them to the boot loader's\n"
		"kernel command line (e.g. GRUB_CMDLINE_LINUX in /etc/default/grub).  After\n"
		"the boot, ktrace kft --tracefs extract DST (or --kernel extract DST) writes\n"
		"the trace that ktrace kd and addr2sym read.\n",
	.opts = opts,
	.tail =
		"Exit status: 0 printed, 1 CONFIG refused (FILE:LINE: what cannot be run from\n"
		"boot), 2 usage error.  See docs/KMOD.md, \"Boot-time tracing\".\n",
	.in_order = 1,
};

int kft_run_boot(int argc, char **argv)
{
	struct kft_boot_opts o = { 0 };
	char *line;
	int rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, take_option, &o);

	if (rc != CLI_OPTS_GO)
		return rc;
	if (optind >= argc) {
		cli_error(CMD, "--boot needs a configuration file (see ktrace kft --boot --help)");
		return 2;
	}
	if (optind + 1 < argc) {
		cli_error(CMD, "unexpected argument '%s'", argv[optind + 1]);
		return 2;
	}
	o.config = argv[optind];
	line = kft_boot_params(&o);
	if (!line)
		return 1;
	printf("%s\n", line);
	free(line);
	return 0;
}

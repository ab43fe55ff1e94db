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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_kft.h"
#include "kclient/kclient.h"

#define CMD "kft"

void kft_help_boot(FILE *out)
{
	fprintf(out,
		"usage: ktrace kft --boot [--tracefs | --kernel] [-m SYSTEM.MAP] [-b KB] CONFIG\n"
		"\n"
		"Print the kernel command-line parameters that run the KFT configuration\n"
		"CONFIG from boot (seed 002's static mode); add them to the boot loader's\n"
		"kernel command line (e.g. GRUB_CMDLINE_LINUX in /etc/default/grub).  After\n"
		"the boot, ktrace kft --tracefs extract DST (or --kernel extract DST) writes\n"
		"the trace that ktrace kd and addr2sym read.\n"
		"\n"
		"  --tracefs            (default) the kernel's function_graph tracer from boot:\n"
		"                       ftrace=function_graph, mintime -> tracing_thresh,\n"
		"                       funclist -> ftrace_filter, noints -> nofuncgraph-irqs,\n"
		"                       logentries -> trace_buf_size, trigger functions ->\n"
		"                       kprobe_event= (applied at extract), the configuration\n"
		"                       in " KFT_BOOT_CONFIG_PARAM "=; 'trigger start entry start_kernel'\n"
		"                       means from the moment function_graph starts at boot\n"
		"  --kernel             ktrace.ko: " KFT_BOOT_MODULE_PARAM "=, loaded and primed when\n"
		"                       the module loads (from the initramfs)\n"
		"  -m, --symbols FILE   the booted kernel's System.map (default /proc/kallsyms):\n"
		"                       names are checked there and 0x addresses named\n"
		"  -b, --buffer KB      ring buffer per CPU in KiB (default: logentries x 96\n"
		"                       bytes, at least 1024; 4096 without logentries)\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 printed, 1 CONFIG refused (FILE:LINE: what cannot be run from\n"
		"boot), 2 usage error.  See docs/KMOD.md, \"Boot-time tracing\".\n");
}

int kft_run_boot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },      { "symbols", required_argument, NULL, 'm' },
		{ "buffer", required_argument, NULL, 'b' }, { "tracefs", no_argument, NULL, 'T' },
		{ "kernel", no_argument, NULL, 'K' },     { NULL, 0, NULL, 0 },
	};
	struct kft_boot_opts o = { 0 };
	char *line;
	int c;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, "+:hm:b:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			kft_help_boot(stdout);
			return 0;
		case 'm':
			o.symbols = optarg;
			break;
		case 'b':
			if (kft_opt_buf_kb(optarg, &o.buf_kb) < 0)
				return 2;
			break;
		case 'T':
			o.module = 0;
			break;
		case 'K':
			o.module = 1;
			break;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
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

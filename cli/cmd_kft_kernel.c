/*
 * cli/cmd_kft_kernel.c - `ktrace kft --kernel`, the kernel mode of `ktrace
 * kft` (cli/cmd_kft.c hands its argv over): KFT in the kernel (seed 002's
 * /proc/kft) driven from the command line.
 *
 *   ktrace kft --kernel [status]          cat /proc/kft
 *   ktrace kft --kernel load FILE|-       write a configuration (one write)
 *   ktrace kft --kernel prime|start|stop  write a command
 *   ktrace kft --kernel extract DST       copy the log into trace directory DST
 *
 * This file parses the options and prints; the /proc/kft client is
 * kclient/kft_proc.c.  --proc DIR reads DIR/kft... instead of
 * /proc/kft... (tests).
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

/* The command line of `ktrace kft --kernel`, parsed. */
struct kernel_opts {
	const char *map;  /* -m: System.map for extract (NULL: /proc/kallsyms) */
	const char *proc; /* --proc: where the kft files are ("/proc") */
};

/* `ktrace kft --kernel`'s options, all kept by the parser in struct kernel_opts. */
static const struct cli_opt opts[] = {
	CLI_OPT_STRING("system-map", 'm', "FILE", struct kernel_opts, map,
		       "symbols for extract from FILE instead of\n"
		       "/proc/kallsyms (addresses must match: no KASLR offset)"),
	CLI_OPT_STRING("proc", CLI_OPT_LONG, "DIR", struct kernel_opts, proc,
		       "the kft files are in DIR instead of /proc"),
	CLI_OPT_END,
};

/* What `ktrace kft --kernel --help` prints and its parser takes (cli/options.h). */
static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace kft --kernel [--proc DIR] [status]\n"
		"       ktrace kft --kernel [--proc DIR] load FILE|-\n"
		"       ktrace kft --kernel [--proc DIR] prime|start|stop\n"
		"       ktrace kft --kernel [--proc DIR] [-m SYSTEM.MAP] extract DST\n"
		"\n"
		"Drive KFT in the kernel (ktrace.ko's /proc/kft, seed 002): the configured\n"
		"functions (triggers and funclist) are probed with kretprobes, entry and exit\n"
		"with duration.  For every kernel function use ktrace kft --tracefs.\n"
		"\n"
		"  status        the run's state, probes, log use, counters, configuration\n"
		"  load FILE     load a configuration (docs/KFT-CONFIG.md; - reads stdin);\n"
		"                function names or 0x addresses; a bad one is refused and\n"
		"                the loaded configuration stays\n"
		"  prime         arm the run: it starts at its start trigger (at once if none)\n"
		"  start, stop   start or stop recording now\n"
		"  extract DST   copy the log (/proc/kft_data), its call sites, the status\n"
		"                and the kernel's function symbols into trace directory DST\n"
		"                (ktrace kd, addr2sym and print read it)\n",
	.opts = opts,
	.tail =
		"Exit status: 0 done, 1 refused (bad configuration: FILE:LINE:COL: message;\n"
		"a command the run's state refuses; module not loaded), 2 usage error.\n",
	.in_order = 1,
};

int kft_run_kernel(int argc, char **argv)
{
	struct kernel_opts o = { .proc = "/proc" };
	const char *what, *map, *proc;
	int need, rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, NULL, &o);

	if (rc != CLI_OPTS_GO)
		return rc;
	map = o.map;
	proc = o.proc;
	what = optind < argc ? argv[optind++] : "status";
	need = !strcmp(what, "load") || !strcmp(what, "extract");
	if (strcmp(what, "status") && strcmp(what, "prime") && strcmp(what, "start") &&
	    strcmp(what, "stop") && !need) {
		cli_error(CMD, "unknown command '%s': expected status, load, prime, start, stop or extract (see ktrace kft --kernel --help)",
			  what);
		return 2;
	}
	if (need && optind >= argc) {
		cli_error(CMD, "%s needs %s", what, strcmp(what, "load") ? "a trace directory" : "a configuration file (or -)");
		return 2;
	}
	if (optind + need < argc) {
		cli_error(CMD, "unexpected argument '%s'", argv[optind + need]);
		return 2;
	}
	if (map && strcmp(what, "extract")) {
		cli_error(CMD, "-m applies to extract only");
		return 2;
	}
	if (!strcmp(what, "status")) {
		size_t len;
		char *s = kft_proc_status(proc, &len);

		if (!s)
			return 1;
		fwrite(s, 1, len, stdout);
		free(s);
		return 0;
	}
	if (!strcmp(what, "load"))
		return kft_proc_load(proc, argv[optind]) < 0;
	if (!strcmp(what, "extract")) {
		struct kft_proc_extract_stats st;

		if (kft_proc_extract(proc, argv[optind], map, &st) < 0)
			return 1;
		/* the calls' threads named from --proc (/proc): PROC/TID/status */
		cli_kernel_tasks(CMD, argv[optind], proc);
		printf("%s: %zu bytes of calls, %zu call sites\n", argv[optind], st.bytes, st.callsites);
		return 0;
	}
	return kft_proc_command(proc, what) < 0;
}

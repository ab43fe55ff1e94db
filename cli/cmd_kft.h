/*
 * cli/cmd_kft.h - the kernel modes of `ktrace kft`, which cli/cmd_kft.c
 * hands its argv to when the first argument is --kernel or --tracefs:
 * cli/cmd_kft_kernel.c (ktrace.ko's /proc/kft) and cli/cmd_kft_tracefs.c
 * (the kernel's function_graph tracer).  argv[0] is "--kernel" or
 * "--tracefs".  Return: the exit status (0 done, 1 failed, 2 usage error).
 * Each mode's options and --help are a table of cli/options.h in its file.
 */
#ifndef KTRACE_CLI_CMD_KFT_H
#define KTRACE_CLI_CMD_KFT_H

int kft_run_kernel(int argc, char **argv);
int kft_run_tracefs(int argc, char **argv);

/*
 * kft_opt_buf_kb() - the -b option of --tracefs and --boot: the ring
 * buffer per CPU, 64..4194304 KiB, into *@kb.  Return: 0, or -1 with the
 * usage error printed.
 */
int kft_opt_buf_kb(const char *arg, unsigned *kb);

/* `ktrace kft --boot` (cli/cmd_kft_boot.c): boot-time runs. */
int kft_run_boot(int argc, char **argv);

#endif

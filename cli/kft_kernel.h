/*
 * cli/kft_kernel.h - KFT for the kernel in the `ktrace kft` command:
 *
 *   ktrace kft --kernel ...   drives ktrace.ko's /proc/kft and copies
 *                             /proc/kft_data into a trace directory
 *                             (cli/kft_kernel.c)
 *   ktrace kft --tracefs ...  runs a KFT configuration on the kernel's own
 *                             function_graph tracer (cli/kft_tracefs.c)
 *
 * cli/cmd_kft.c hands its argv over when the first argument is --kernel or
 * --tracefs.  Both write the same kind of trace directory: one shared
 * stream cpu0 of CALL records (docs/FORMAT.md, packed layout, clock mono),
 * callsites, kft-status, metadata, and a copy of the kernel's function
 * symbols (file `kallsyms`, docs/FORMAT.md "Kernel traces") so that kd,
 * addr2sym and print can name kernel addresses later and elsewhere.
 */
#ifndef KTRACE_CLI_KFT_KERNEL_H
#define KTRACE_CLI_KFT_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Entry points; argv[0] is "--kernel" / "--tracefs".  Return: exit status. */
int kft_kernel_main(int argc, char **argv);
int kft_tracefs_main(int argc, char **argv);
void kft_kernel_help(FILE *out);
void kft_tracefs_help(FILE *out);

/* ---- trace directory helpers (cli/kft_kernel.c) ------------------------ */

/**
 * kft_kdir_create() - create trace directory @dst (mode 0700); an existing
 * directory is reused if it is empty or holds an earlier kernel KFT trace
 * (its files are then replaced with ksf_replace()), and if it is yours and
 * not a symbolic link (lib/safefile.h).
 * Return: 0, or -1 with a message printed.
 */
int kft_kdir_create(const char *dst);

/**
 * kft_kdir_symbols() - copy the function symbols (types t, T, w, W) of
 * @kallsyms (a /proc/kallsyms or System.map file) to DST/kallsyms.
 * Return: 1 copied, 0 not usable (addresses hidden: a warning was printed),
 * -1 error (printed).
 */
int kft_kdir_symbols(const char *dst, const char *kallsyms);

/**
 * kft_ksyms_filter() - copy the function symbol lines (types t, T, w, W) of
 * a /proc/kallsyms or System.map text @in (@len bytes, need not end in a
 * newline or be NUL-terminated) to @out (at least @len + 1 bytes), each
 * ending in '\n'; other and malformed lines are dropped.  *@kept counts
 * the lines copied, *@nonzero those with a nonzero address (0 everywhere:
 * the addresses were hidden).  Pure, no allocation (cli/kft_ksyms.c).
 * Return: the bytes written to @out.
 */
size_t kft_ksyms_filter(const char *in, size_t len, char *out, size_t *kept, size_t *nonzero);

/**
 * kft_kdir_metadata() - write DST/metadata for a KFT kernel trace: format
 * version, clock mono (identity calibration), host, kernel, CPUs, one
 * shared packed stream cpu0 with @buf_size-byte sub-buffers, time origin
 * boot (created-ns 0), a comment naming DIR/kallsyms if @have_syms, and a
 * `thread TID PID COMM` line per task now listed in @procdir.  @source names where the data
 * came from (a comment).  Return: 0, or -1 (printed).
 */
int kft_kdir_metadata(const char *dst, const char *source, uint32_t buf_size, int have_syms,
		      const char *procdir);

#endif

/*
 * kclient/tracecmd_output.h - the few functions of libtracecmd's writer
 * that kclient/tracedat.c uses to write a trace-cmd trace.dat.
 *
 * libtracecmd (Debian: libtracecmd1, libtracecmd-dev 3.1.6, library
 * version 1.3.1) exports these functions but declares them only in
 * trace-cmd's private header, which is not installed.  The prototypes below
 * are copied from trace-cmd 3.1.6 (tag trace-cmd-v3.1.6, commit 0a68daed),
 * lib/trace-cmd/include/private/trace-cmd-private.h, and their behaviour is
 * read from lib/trace-cmd/trace-output.c of the same version; both files
 * are LGPL-2.1 (SPDX: LGPL-2.1), Copyright (C) 2008, 2009, 2010 Red Hat Inc,
 * Steven Rostedt.  The Makefile builds kclient/tracedat.c against them only
 * when `pkg-config --modversion libtracecmd` says 1.3.x: another version
 * may have changed them, and then `ktrace export --format=trace.dat` says
 * it was left out.
 *
 * Only what kclient/tracedat.c calls is declared here.
 */
#ifndef KTRACE_KCLIENT_TRACECMD_OUTPUT_H
#define KTRACE_KCLIENT_TRACECMD_OUTPUT_H

#include <stdbool.h>

struct tracecmd_output;

/* trace-cmd-private.h: the events tracecmd_output_write_headers() copies
 * ("SYS/NAME" globs; NULL list: every events/SYS/NAME/format). */
struct tracecmd_event_list {
	struct tracecmd_event_list *next;
	const char *glob;
};

/* A handle writing to @fd (closed by tracecmd_output_close()); its page size is taken
 * from the live tracefs's events/header_page, else getpagesize(). */
struct tracecmd_output *tracecmd_output_create_fd(int fd);
/* No "CPU0 data recorded at offset=..." lines on stderr. */
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
/* File format version, 6 or 7 (before anything is written). */
int tracecmd_output_set_version(struct tracecmd_output *handle, int file_version);
/* Read events/, printk_formats, saved_cmdlines and trace_clock from @tracing_dir
 * instead of the live tracefs. */
int tracecmd_output_set_trace_dir(struct tracecmd_output *handle, const char *tracing_dir);
/* Take kernel symbols from @kallsyms instead of /proc/kallsyms (a missing file: none). */
int tracecmd_output_set_kallsyms(struct tracecmd_output *handle, const char *kallsyms);
/* Write the file's header, header_page/header_event, the ftrace and event formats,
 * kallsyms and printk_formats.  Return: 0 or -1. */
int tracecmd_output_write_headers(struct tracecmd_output *handle, struct tracecmd_event_list *list);
/* Write saved_cmdlines (of the trace dir).  Return: 0 or -1. */
int tracecmd_write_cmdlines(struct tracecmd_output *handle);
/* Write the CPU count, options, and the "flyrecord" section: the contents of the @cpus
 * files, each page-aligned in the output (v6 also writes the trace_clock).  Return: 0 or -1. */
int tracecmd_append_cpu_data(struct tracecmd_output *handle, int cpus, char *const *cpu_data_files);
/* Flush, close the handle's fd, free it. */
void tracecmd_output_close(struct tracecmd_output *handle);

#endif

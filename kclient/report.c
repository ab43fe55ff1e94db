/*
 * kclient/report.c - where the error messages of libktrace-kclient go:
 * kcl_error() formats one and hands it to the hook that kcl_set_report()
 * installed (cli/ktrace.c installs cli_error()), or prints it on stderr.
 * Plain libc, so kclient/relay.c still builds with this file alone.
 */
#include <stdarg.h>
#include <stdio.h>

#include "kclient/internal.h"

/* "ktrace CMD: MSG" on stderr, one line whatever the message holds. */
static void kcl_default_report(const char *cmd, const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "ktrace%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	for (const char *c = msg; *c; c++)
		fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, stderr);
	fputc('\n', stderr);
}

static kcl_report_fn kcl_report = kcl_default_report;

void kcl_set_report(kcl_report_fn fn)
{
	kcl_report = fn ? fn : kcl_default_report;
}

void kcl_error(const char *cmd, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kcl_report(cmd, msg);
}

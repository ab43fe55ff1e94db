/*
 * cli/kd.h - what the two files of `ktrace kd` share: its options and
 * state (cli/cmd_kd.c parses and prints the table, cli/kd_calls.c prints
 * the call traces of -c).
 */
#ifndef KTRACE_CLI_KD_H
#define KTRACE_CLI_KD_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "cli/select.h"
#include "formats/formats.h"
#include "reader/reader.h"

enum kd_format { FMT_TEXT, FMT_CSV, FMT_JSON };

struct kopts {
	long top;           /* -n, -1 = all */
	uint64_t min_ns;    /* -t */
	int have_min;
	const char *fields; /* -f */
	int fields_given;
	char sort;          /* -s */
	int calls, longfmt, interlace, usec, verbose;
	enum kd_format format;
	size_t sort_mem;
	struct cli_select sel;
	const char *dir;
};

struct kd {
	struct kopts o;
	struct ktr_trace *t;
	struct ka_profile *p;
	FILE *out;
	uint64_t origin; /* -c -l: Entry times count from it */
	int we, wd;      /* -c -l: column widths */
	struct fmt_json *json; /* --format=json (formats/formats.h) */
	/* -c's lines (kd_calls.c): the last thread's "%7u " and how many lines so far */
	uint32_t line_tid;
	char line_tidstr[16];
	size_t line_tidlen;
	uint64_t lines;
};

/* Microseconds of @ns: "123.456", or "123" with -u (fmt_us()). */
static inline const char *kd_us(const struct kopts *o, int64_t ns, char *buf, size_t len)
{
	return fmt_us(ns, o->usec, buf, len);
}

/**
 * kd_print_calls() - kd -c: the calls of sorter @s in entry order on
 * @out, as nested text traces (k->o.longfmt adds Entry, Duration and Local
 * in microseconds; k->o.interlace mixes the threads in time order) or as
 * CSV/JSON rows of formats/formats.h (times in ns).  k->p must be the
 * trace's profile (names, switch-outs).  With @pre (plain text only), the
 * calls come from it as it reads the trace (ktr_preorder_next()).
 * Return: 0, or a negative errno of the sorter (-1 on an output error).
 */
int kd_print_calls(struct kd *k, FILE *out, struct ktr_callsort *s, struct ktr_preorder *pre);

#endif

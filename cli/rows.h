/*
 * cli/rows.h - the one row schema of ktrace's CSV and JSON outputs
 * (cli/rows.c), shared by `ktrace export --format=csv` (one row per
 * record) and `ktrace kd -c --format=csv|json` (one row per call), so a
 * script written for one reads the other:
 *
 *   time_ns    CLOCK_MONOTONIC ns: a call's entry, another record's time
 *   dur_ns     a call's duration (empty for other records)
 *   self_ns    a call's self (local) time: duration minus its recorded
 *              callees' (empty for other records)
 *   cpu        the CPU, empty when unknown
 *   pid, tid   process and thread ids
 *   comm       the thread's name
 *   category   "call", an event's category, or "ktrace" for gaps
 *   name       the function (demangled) or event name
 *   args       "key=value;key=value" (calls: depth, sig, flags, ...)
 *
 * CSV: a header line with those names, RFC 4180 quoting (cli_csv_str()).
 * JSON: one object per row with the same keys, numbers as numbers, empty
 * fields as null (python3's json module reads it).  The per-function
 * table of `kd --format` uses the same conventions (snake_case, _ns for
 * nanoseconds); docs/READING.md lists every column.
 *
 * The writers use the unlocked stdio calls: one thread writes.
 */
#ifndef KTRACE_CLI_ROWS_H
#define KTRACE_CLI_ROWS_H

#include <stdint.h>
#include <stdio.h>

#define CLI_ROW_HEADER "time_ns,dur_ns,self_ns,cpu,pid,tid,comm,category,name,args"

/**
 * struct cli_row - one row.  @dur_ns and @self_ns < 0 and @cpu < 0 mean
 * empty; strings must not be NULL.
 */
struct cli_row {
	uint64_t time_ns;
	int64_t dur_ns, self_ns;
	int cpu;
	uint32_t pid, tid;
	const char *comm, *category, *name, *args;
};

/** cli_row_csv() - write @r as one CSV line. */
void cli_row_csv(FILE *out, const struct cli_row *r);

/** cli_row_json() - write @r as one JSON object (no separator, no newline). */
void cli_row_json(FILE *out, const struct cli_row *r);

/** cli_put_u64() - @v in decimal, fast (no printf). */
void cli_put_u64(FILE *out, uint64_t v);

/** cli_put_hex() - @v as 0x-hex, fast. */
void cli_put_hex(FILE *out, uint64_t v);

#endif

/*
 * formats/csv.c - CSV: RFC 4180 fields, and the rows of the schema that
 * `kd --format=csv` and `export --format=csv` share (formats/formats.h);
 * fields are valid UTF-8 (fmt_utf8()), as pandas and python's csv expect.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

void fmt_csv_str(FILE *out, const char *s)
{
	char small[1024], *heap;

	s = fmt_utf8_any(s, small, sizeof(small), &heap);
	if (!strpbrk(s, ",\"\r\n")) {
		fputs_unlocked(s, out);
	} else {
		putc_unlocked('"', out);
		for (const char *p = s; *p; p++) {
			if (*p == '"')
				putc_unlocked('"', out);
			putc_unlocked(*p, out);
		}
		putc_unlocked('"', out);
	}
	free(heap);
}

/* A number column, empty for a negative value (none). */
static void num(FILE *out, int64_t v)
{
	if (v >= 0)
		fmt_put_u64(out, (uint64_t)v);
	putc_unlocked(',', out);
}

void fmt_row_csv(FILE *out, const struct fmt_row *r)
{
	if (r->time_ns < 0)
		putc_unlocked('-', out);
	fmt_put_u64(out, r->time_ns < 0 ? -(uint64_t)r->time_ns : (uint64_t)r->time_ns);
	putc_unlocked(',', out);
	num(out, r->dur_ns);
	num(out, r->self_ns);
	num(out, r->cpu);
	num(out, r->pid);
	num(out, r->tid);
	fmt_csv_str(out, r->comm);
	putc_unlocked(',', out);
	fmt_csv_str(out, r->category);
	putc_unlocked(',', out);
	fmt_csv_str(out, r->name);
	putc_unlocked(',', out);
	fmt_csv_str(out, r->args);
	putc_unlocked('\n', out);
}

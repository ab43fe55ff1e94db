/*
 * formats/csv.c - CSV: RFC 4180 fields, and the rows of the schema that
 * `kd --format=csv` and `export --format=csv` share (formats/formats.h);
 * fields are valid UTF-8 (fmt_utf8()), as pandas and python's csv expect.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

/* Bytes that a CSV field can hold as they are: printable ASCII but ',' and '"'. */
static const unsigned char plain[256] = { [0x20 ... 0x21] = 1, [0x23 ... 0x2b] = 1, [0x2d ... 0x7e] = 1 };

/* @s as one CSV field, added to line @l. */
static void csv_str(struct fmt_line *l, const char *s)
{
	char small[1024], *heap;
	const unsigned char *p = (const unsigned char *)s;

	while (plain[*p]) /* the common case: plain ASCII, as it is */
		p++;
	if (!*p) {
		fmt_line_put(l, s, (size_t)(p - (const unsigned char *)s));
		return;
	}
	s = fmt_utf8_any(s, small, sizeof(small), &heap);
	if (!strpbrk(s, ",\"\r\n")) {
		fmt_line_put(l, s, strlen(s));
	} else {
		fmt_line_put(l, "\"", 1);
		for (const char *q = s, *e; *q; q = e + 1) {
			e = strchr(q, '"');
			fmt_line_put(l, q, e ? (size_t)(e + 1 - q) : strlen(q)); /* '"' doubled */
			if (!e)
				break;
			fmt_line_put(l, "\"", 1);
		}
		fmt_line_put(l, "\"", 1);
	}
	free(heap);
}

void fmt_csv_str(FILE *out, const char *s)
{
	struct fmt_line l;

	l.out = out;
	l.n = 0;
	csv_str(&l, s);
	fwrite_unlocked(l.b, 1, l.n, out);
}

/* A number column, empty for a negative value (none). */
static char *num(char *p, int64_t v)
{
	if (v >= 0)
		p = fmt_u64_to(p, (uint64_t)v);
	*p++ = ',';
	return p;
}

void fmt_row_csv(FILE *out, const struct fmt_row *r)
{
	char nums[128], *p = nums;
	struct fmt_line l;

	if (r->time_ns < 0)
		*p++ = '-';
	p = fmt_u64_to(p, r->time_ns < 0 ? -(uint64_t)r->time_ns : (uint64_t)r->time_ns);
	*p++ = ',';
	p = num(p, r->dur_ns);
	p = num(p, r->self_ns);
	p = num(p, r->cpu);
	p = num(p, r->pid);
	p = num(p, r->tid);
	l.out = out;
	l.n = 0;
	fmt_line_put(&l, nums, (size_t)(p - nums));
	csv_str(&l, r->comm);
	fmt_line_put(&l, ",", 1);
	csv_str(&l, r->category);
	fmt_line_put(&l, ",", 1);
	csv_str(&l, r->name);
	fmt_line_put(&l, ",", 1);
	csv_str(&l, r->args);
	fmt_line_end(&l);
}

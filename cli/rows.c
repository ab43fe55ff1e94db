/*
 * cli/rows.c - CSV and JSON rows of the shared schema (cli/rows.h).
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/rows.h"

void cli_put_u64(FILE *out, uint64_t v)
{
	char t[24];
	int i = 24;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(t + i, 1, (size_t)(24 - i), out);
}

void cli_put_hex(FILE *out, uint64_t v)
{
	char t[24];
	int i = 24;

	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	t[--i] = 'x';
	t[--i] = '0';
	fwrite_unlocked(t + i, 1, (size_t)(24 - i), out);
}

void cli_row_csv(FILE *out, const struct cli_row *r)
{
	cli_put_u64(out, r->time_ns);
	putc_unlocked(',', out);
	if (r->dur_ns >= 0)
		cli_put_u64(out, (uint64_t)r->dur_ns);
	putc_unlocked(',', out);
	if (r->self_ns >= 0)
		cli_put_u64(out, (uint64_t)r->self_ns);
	putc_unlocked(',', out);
	if (r->cpu >= 0)
		cli_put_u64(out, (uint64_t)r->cpu);
	putc_unlocked(',', out);
	cli_put_u64(out, r->pid);
	putc_unlocked(',', out);
	cli_put_u64(out, r->tid);
	putc_unlocked(',', out);
	cli_csv_str(out, r->comm);
	putc_unlocked(',', out);
	cli_csv_str(out, r->category);
	putc_unlocked(',', out);
	cli_csv_str(out, r->name);
	putc_unlocked(',', out);
	cli_csv_str(out, r->args);
	putc_unlocked('\n', out);
}

static void json_num(FILE *out, const char *key, int64_t v)
{
	fputs_unlocked(key, out);
	if (v < 0)
		fputs_unlocked("null", out);
	else
		cli_put_u64(out, (uint64_t)v);
}

void cli_row_json(FILE *out, const struct cli_row *r)
{
	json_num(out, "{\"time_ns\":", (int64_t)r->time_ns);
	json_num(out, ",\"dur_ns\":", r->dur_ns);
	json_num(out, ",\"self_ns\":", r->self_ns);
	json_num(out, ",\"cpu\":", r->cpu);
	json_num(out, ",\"pid\":", r->pid);
	json_num(out, ",\"tid\":", r->tid);
	fputs_unlocked(",\"comm\":", out);
	cli_json_str(out, r->comm);
	fputs_unlocked(",\"category\":", out);
	cli_json_str(out, r->category);
	fputs_unlocked(",\"name\":", out);
	cli_json_str(out, r->name);
	fputs_unlocked(",\"args\":", out);
	cli_json_str(out, r->args);
	putc_unlocked('}', out);
}

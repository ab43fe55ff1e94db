/*
 * tests/formats/gen.c - drives the writers of formats/ for
 * tests/formats_writers.sh: OUT/te.json (a Chrome trace-event document),
 * OUT/rows.csv and OUT/rows.json (the shared row schema), and
 * OUT/strings.hex, the test strings as hex bytes, one per line, which the
 * test's Python decodes without any of ktrace's code.
 *
 *   gen OUT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

#define NSTR 7

static char s_long[3000], s_key[400];
static const char *str[NSTR] = {
	"plain_function",
	"quote\" and backslash\\ and slash/",
	"ctrl \x01\x02\t\n\r\x1f\x7f end",
	"utf-8: \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
	"csv, comma and \"quotes\"",
	s_long,
	"",
};

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	struct fmt_te w = { 0 };
	FILE *f;

	if (argc != 2)
		return 2;
	/* longer than the writers' stack buffers, with escapes spread over it */
	for (size_t i = 0; i < sizeof(s_long) - 1; i++)
		s_long[i] = i % 97 == 3 ? '"' : i % 89 == 5 ? '\n' : (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(s_key) - 1; i++)
		s_key[i] = i % 50 == 7 ? '\\' : (char)('A' + i % 26);

	f = open_out(argv[1], "strings.hex");
	for (int i = 0; i < NSTR; i++) {
		for (const unsigned char *p = (const unsigned char *)str[i]; *p; p++)
			fprintf(f, "%02x", *p);
		fputc('\n', f);
	}
	for (const unsigned char *p = (const unsigned char *)s_key; *p; p++)
		fprintf(f, "%02x", *p);
	fputc('\n', f);
	fclose(f);

	/* events i = 0..NSTR-1: name str[i], cat str[i+1], arg key str[i+2] */
	f = open_out(argv[1], "te.json");
	fmt_te_begin(&w, f);
	for (int i = 0; i < NSTR; i++) {
		fmt_te_event(&w, str[i], str[(i + 1) % NSTR], i % 2 ? "X" : "i", i % 2 ? NULL : "t",
			     1000000ull * (unsigned)i + 1234, 5678, 10 + (unsigned)i, 20 + (unsigned)i);
		fmt_te_arg_u64(&w, "n", (uint64_t)i);
		fmt_te_arg_value(&w, str[(i + 2) % NSTR][0] ? str[(i + 2) % NSTR] : "empty",
				 i == NSTR - 1 ? UINT64_MAX : (1ull << 53));
		fmt_te_arg_hex(&w, "addr", 0xdeadbeefull);
		fmt_te_arg_str(&w, s_key, str[i]);
		fmt_te_arg_true(&w, "flag");
		fmt_te_end_event(&w);
	}
	w.relative = 1;
	w.t0 = 2000;
	fmt_te_event(&w, "before", NULL, "i", "g", 1500, 0, 1, 1);
	/* the same key three times: made unique */
	fmt_te_arg_u64(&w, "pid", 1);
	fmt_te_arg_u64(&w, "pid", 2);
	fmt_te_arg_str(&w, "pid", "three");
	fmt_te_end_event(&w);
	fmt_te_meta(&w, "thread_name", 1, 2, str[1]);
	{
		const char *kv[] = { "generator", str[2], "long", str[5] };

		fmt_te_end(&w, kv, 2);
	}
	fclose(f);

	/* rows i: comm str[i], category str[i+1], name str[i+2], args str[i+3] */
	for (int j = 0; j < 2; j++) {
		f = open_out(argv[1], j ? "rows.json" : "rows.csv");
		if (j)
			fputs("{\"calls\":[", f);
		else
			fputs(FMT_ROW_HEADER "\n", f);
		for (int i = 0; i < NSTR; i++) {
			struct fmt_row r = { i == NSTR - 1 ? -1234 : INT64_MAX - i, i % 3 ? 100 + i : -1, i % 2 ? 7 : -1,
					     i, 1000 + i, 2000 + i, str[i], str[(i + 1) % NSTR],
					     str[(i + 2) % NSTR], str[(i + 3) % NSTR] };

			if (j) {
				fputs(i ? ",\n" : "\n", f);
				fmt_row_json(f, &r);
			} else {
				fmt_row_csv(f, &r);
			}
		}
		if (j)
			fputs("\n]}\n", f);
		fclose(f);
	}
	return 0;
}

/*
 * tests/formats/gen.c - drives the writers of formats/ for
 * tests/formats_writers.sh: OUT/te.json (a Chrome trace-event document),
 * OUT/rows.csv and OUT/rows.json (the shared row schema), and
 * OUT/strings.hex, the test strings as hex bytes, one per line, which the
 * test's Python decodes without any of ktrace's code; OUT/bad.json,
 * OUT/badrows.json and OUT/bad.svg carry the byte strings of OUT/bad.hex,
 * which are not UTF-8, as names, and bad.json an exit ("E") whose entry
 * is not in the trace; OUT/nums.txt numbers at the edges of the
 * converters (powers of 2 and 10, and their neighbours, and pseudo-random
 * ones) as printf's "%llu", then fmt_u64_to()'s, fmt_hex_to()'s and
 * fmt_put_u64()'s text of the same value.
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

#define NBAD 7
static const char *bad[NBAD] = {
	"bad\xff\xfe\x80name",         /* bytes never valid */
	"thr\xc3\x28\xff",               /* a lead byte without its continuation */
	"surrogate \xed\xa0\x80",        /* U+D800 */
	"overlong \xc0\xaf \xe0\x80\xaf", /* '/' in two and three bytes */
	"above \xf4\x90\x80\x80",       /* U+110000 */
	"cut \xe2\x82",                 /* a sequence cut by the end */
	"ok \xc3\xa9 \xf0\x9f\x94\xa5 <&>", /* valid, with XML specials */
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

		if (fmt_te_end(&w, kv, 2))
			return 1;
	}
	fclose(f);

	/* rows i: comm str[i], category str[i+1], name str[i+2], args str[i+3] */
	for (int j = 0; j < 2; j++) {
		struct fmt_json *js = NULL;

		f = open_out(argv[1], j ? "rows.json" : "rows.csv");
		if (j) {
			js = fmt_json_new(f);
			fmt_json_map(js);
			fmt_json_str(js, "calls");
			fmt_json_array(js);
		} else {
			fputs(FMT_ROW_HEADER "\n", f);
		}
		for (int i = 0; i < NSTR; i++) {
			struct fmt_row r = { i == NSTR - 1 ? -1234 : INT64_MAX - i, i % 3 ? 100 + i : -1, i % 2 ? 7 : -1,
					     i, 1000 + i, 2000 + i, str[i], str[(i + 1) % NSTR],
					     str[(i + 2) % NSTR], str[(i + 3) % NSTR] };

			if (j)
				fmt_row_json(js, &r);
			else
				fmt_row_csv(f, &r);
		}
		if (j) {
			fmt_json_end_array(js);
			fmt_json_end_map(js);
			if (fmt_json_free(js))
				return 1;
		}
		fclose(f);
	}
	/* names that are not UTF-8 */
	f = open_out(argv[1], "bad.hex");
	for (int i = 0; i < NBAD; i++) {
		for (const unsigned char *p = (const unsigned char *)bad[i]; *p; p++)
			fprintf(f, "%02x", *p);
		fputc('\n', f);
	}
	fclose(f);
	f = open_out(argv[1], "bad.json");
	memset(&w, 0, sizeof(w));
	fmt_te_begin(&w, f);
	for (int i = 0; i < NBAD; i++) {
		fmt_te_meta(&w, "thread_name", 1, 100 + (unsigned)i, bad[i]);
		fmt_te_event(&w, bad[i], bad[(i + 1) % NBAD], "i", "t", 1000, 0, 1, 100 + (unsigned)i);
		fmt_te_arg_str(&w, bad[(i + 2) % NBAD], bad[(i + 3) % NBAD]);
		fmt_te_end_event(&w);
	}
	/* thread 7: first seen at 2 us; an E with no B at 9 us, then a B/E pair */
	fmt_te_event(&w, "first", NULL, "i", "t", 2000, 0, 1, 7);
	fmt_te_end_event(&w);
	fmt_te_event(&w, "lost_entry", NULL, "E", NULL, 9000, 0, 1, 7);
	fmt_te_end_event(&w);
	fmt_te_event(&w, "pair", NULL, "B", NULL, 10000, 0, 1, 7);
	fmt_te_end_event(&w);
	fmt_te_event(&w, "pair", NULL, "E", NULL, 11000, 0, 1, 7);
	fmt_te_end_event(&w);
	if (fmt_te_end(&w, NULL, 0))
		return 1;
	fclose(f);
	f = open_out(argv[1], "badrows.json");
	{
		struct fmt_json *js = fmt_json_new(f);

		fmt_json_array(js);
		for (int i = 0; i < NBAD; i++) {
			struct fmt_row r = { i, -1, -1, -1, 1, 1, bad[i], bad[(i + 1) % NBAD],
					     bad[(i + 2) % NBAD], bad[(i + 3) % NBAD] };

			fmt_row_json(js, &r);
		}
		fmt_json_end_array(js);
		if (fmt_json_free(js))
			return 1;
	}
	fclose(f);
	f = open_out(argv[1], "bad.svg");
	fmt_svg_begin(f, 100, 100, bad[0]);
	for (int i = 0; i < NBAD; i++) {
		fputs("<text>", f);
		fmt_xml_text(f, bad[i]);
		fputs("</text>\n", f);
	}
	fmt_svg_end(f);
	fclose(f);
	f = open_out(argv[1], "nums.txt");
	{
		uint64_t x = 88172645463325252ull;

		for (int i = 0; i < 2000; i++) {
			uint64_t v, p10 = 1;
			char d[24], h[24];

			if (i < 64 * 3) { /* 2^k - 1, 2^k, 2^k + 1 */
				v = (1ull << (i / 3)) + (uint64_t)(i % 3) - 1;
			} else if (i < 64 * 3 + 20 * 3) { /* 10^k - 1, 10^k, 10^k + 1 */
				for (int k = 0; k < (i - 64 * 3) / 3; k++)
					p10 *= 10;
				v = p10 + (uint64_t)((i - 64 * 3) % 3) - 1;
			} else {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				v = x >> (x & 63);
			}
			if (i == 0)
				v = UINT64_MAX;
			*fmt_u64_to(d, v) = 0;
			*fmt_hex_to(h, v) = 0;
			fprintf(f, "%" PRIu64 " %s %s ", v, d, h);
			fmt_put_u64(f, v);
			fputc('\n', f);
		}
	}
	fclose(f);
	return 0;
}

/*
 * formats/json.c - JSON: strings, the rows of the shared schema as objects,
 * and the Chrome trace-event document that `print --json` and `export
 * --format=chrome` write (formats/formats.h).  The trace-event format:
 * "Trace Event Format" (Google, the JSON Object Format with traceEvents,
 * displayTimeUnit and otherData), read by ui.perfetto.dev, chrome://tracing
 * and speedscope.
 */
#include <string.h>

#include "formats/formats.h"

/* ,"key":number or null for a negative value; @key carries its punctuation. */
static void num(FILE *out, const char *key, int64_t v)
{
	fputs_unlocked(key, out);
	if (v < 0)
		fputs_unlocked("null", out);
	else
		fmt_put_u64(out, (uint64_t)v);
}

void fmt_row_json(FILE *out, const struct fmt_row *r)
{
	fputs_unlocked("{\"time_ns\":", out);
	if (r->time_ns < 0)
		putc_unlocked('-', out);
	fmt_put_u64(out, r->time_ns < 0 ? -(uint64_t)r->time_ns : (uint64_t)r->time_ns);
	num(out, ",\"dur_ns\":", r->dur_ns);
	num(out, ",\"self_ns\":", r->self_ns);
	num(out, ",\"cpu\":", r->cpu);
	num(out, ",\"pid\":", r->pid);
	num(out, ",\"tid\":", r->tid);
	fputs_unlocked(",\"comm\":", out);
	fmt_json_str(out, r->comm);
	fputs_unlocked(",\"category\":", out);
	fmt_json_str(out, r->category);
	fputs_unlocked(",\"name\":", out);
	fmt_json_str(out, r->name);
	fputs_unlocked(",\"args\":", out);
	fmt_json_str(out, r->args);
	putc_unlocked('}', out);
}

/* ---- trace events ------------------------------------------------------------ */

/* Microseconds with three decimals, signed, into @p (24 bytes); returns the end. */
static char *us_to(char *p, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	unsigned f = (unsigned)(u % 1000);

	if (ns < 0)
		*p++ = '-';
	p = fmt_u64_to(p, u / 1000);
	*p++ = '.';
	*p++ = (char)('0' + f / 100);
	*p++ = (char)('0' + f / 10 % 10);
	*p++ = (char)('0' + f % 10);
	return p;
}

static void sep(struct fmt_te *w)
{
	fputs_unlocked(w->first_event ? "\n" : ",\n", w->out);
	w->first_event = 0;
}

/*
 * JSON strings are escaped into buffers: every event and argument is built
 * in a stack buffer and written with one fwrite (stdio's per-call cost,
 * not the formatting, dominated exports).
 *
 * esc_some() - escape bytes of *@s into @p until the string ends or fewer
 * than 8 bytes (the longest escape, 6, and a closing quote) are left before
 * @end; *@s moves past what was escaped.  Return: the new end of @p.
 */
static char *esc_some(char *p, const char *end, const char **s)
{
	static const char hex[] = "0123456789abcdef";
	const char *q = *s;

	for (; *q && end - p >= 8; q++) {
		unsigned char c = (unsigned char)*q;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			p = stpcpy(p, "\\u00");
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		} else {
			*p++ = (char)c;
		}
	}
	*s = q;
	return p;
}

/*
 * str_to() - @s as a quoted JSON string at @p in buffer @b, whose strings
 * must stay below @end; when it does not fit, what @b holds is written to
 * @out and the buffer starts over.  Return: the new end of the buffer.
 */
static char *str_to(FILE *out, char *b, char *p, const char *end, const char *s)
{
	*p++ = '"';
	for (p = esc_some(p, end, &s); *s; p = esc_some(b, end, &s))
		fwrite_unlocked(b, 1, (size_t)(p - b), out);
	*p++ = '"';
	return p;
}

void fmt_json_str(FILE *out, const char *s)
{
	char b[512], *p = str_to(out, b, b, b + sizeof(b), s);

	fwrite_unlocked(b, 1, (size_t)(p - b), out);
}

void fmt_te_begin(struct fmt_te *w, FILE *out)
{
	w->out = out;
	w->first_event = 1;
	fputs_unlocked("{\"traceEvents\":[", out);
}

void fmt_te_event(struct fmt_te *w, const char *name, const char *cat, const char *ph,
		  const char *scope, uint64_t ts_ns, uint64_t dur_ns, uint32_t pid, uint32_t tid)
{
	/* room after @end for the fixed parts and the numbers (< 200 bytes) */
	char b[768], *p = b, *end = b + sizeof(b) - 256;

	p = stpcpy(p, w->first_event ? "\n{\"name\":" : ",\n{\"name\":");
	w->first_event = 0;
	p = str_to(w->out, b, p, end, name);
	if (cat) {
		p = stpcpy(p, ",\"cat\":");
		p = str_to(w->out, b, p, end, cat);
	}
	/* @ph and @scope are the format's one-letter codes */
	p = stpcpy(p, ",\"ph\":\"");
	p = mempcpy(p, ph, strnlen(ph, 2));
	*p++ = '"';
	if (scope) {
		p = stpcpy(p, ",\"s\":\"");
		p = mempcpy(p, scope, strnlen(scope, 2));
		*p++ = '"';
	}
	p = us_to(stpcpy(p, ",\"ts\":"), w->relative ? (int64_t)(ts_ns - (uint64_t)w->t0) : (int64_t)ts_ns);
	if (ph[0] == 'X')
		p = us_to(stpcpy(p, ",\"dur\":"), (int64_t)dur_ns);
	p = fmt_u64_to(stpcpy(p, ",\"pid\":"), pid);
	p = fmt_u64_to(stpcpy(p, ",\"tid\":"), tid);
	p = stpcpy(p, ",\"args\":{");
	fwrite_unlocked(b, 1, (size_t)(p - b), w->out);
	w->first_arg = 1;
	w->nkeys = 0;
}

/*
 * ',"KEY":' (no comma before the first argument) into @b, KEY made unique
 * in the event ("KEY#N" for the N-th use); returns the end.
 */
static char *key_to(struct fmt_te *w, char *b, char *end, const char *k)
{
	char *p = b, dup[320];
	unsigned n = 1;

	for (unsigned i = 0; i < w->nkeys; i++)
		n += !strcmp(w->keys[i], k);
	if (w->nkeys < sizeof(w->keys) / sizeof(w->keys[0]))
		w->keys[w->nkeys++] = k;
	if (n > 1) {
		snprintf(dup, sizeof(dup), "%.300s#%u", k, n);
		k = dup;
	}
	if (!w->first_arg)
		*p++ = ',';
	w->first_arg = 0;
	p = str_to(w->out, b, p, end, k);
	*p++ = ':';
	return p;
}

void fmt_te_arg_u64(struct fmt_te *w, const char *k, uint64_t v)
{
	char b[256], *p = key_to(w, b, b + sizeof(b) - 32, k);

	p = fmt_u64_to(p, v);
	fwrite_unlocked(b, 1, (size_t)(p - b), w->out);
}

void fmt_te_arg_hex(struct fmt_te *w, const char *k, uint64_t v)
{
	char b[256], *p = key_to(w, b, b + sizeof(b) - 32, k);

	*p++ = '"';
	p = fmt_hex_to(p, v);
	*p++ = '"';
	fwrite_unlocked(b, 1, (size_t)(p - b), w->out);
}

void fmt_te_arg_value(struct fmt_te *w, const char *k, uint64_t v)
{
	if (w->hex || v > (1ull << 53)) /* beyond a double's exact integers */
		fmt_te_arg_hex(w, k, v);
	else
		fmt_te_arg_u64(w, k, v);
}

void fmt_te_arg_str(struct fmt_te *w, const char *k, const char *s)
{
	char b[256], *p = key_to(w, b, b + sizeof(b) - 32, k);

	p = str_to(w->out, b, p, b + sizeof(b) - 8, s);
	fwrite_unlocked(b, 1, (size_t)(p - b), w->out);
}

void fmt_te_arg_true(struct fmt_te *w, const char *k)
{
	char b[256], *p = key_to(w, b, b + sizeof(b) - 32, k);

	p = stpcpy(p, "true");
	fwrite_unlocked(b, 1, (size_t)(p - b), w->out);
}

void fmt_te_end_event(struct fmt_te *w)
{
	fputs_unlocked("}}", w->out);
}

void fmt_te_meta(struct fmt_te *w, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	FILE *out = w->out;

	sep(w);
	fputs_unlocked("{\"name\":", out);
	fmt_json_str(out, what);
	fputs_unlocked(",\"ph\":\"M\",\"pid\":", out);
	fmt_put_u64(out, pid);
	fputs_unlocked(",\"tid\":", out);
	fmt_put_u64(out, tid);
	fputs_unlocked(",\"args\":{\"name\":", out);
	fmt_json_str(out, name);
	fputs_unlocked("}}", out);
}

void fmt_te_sort_index(struct fmt_te *w, uint32_t pid, int index)
{
	sep(w);
	fprintf(w->out, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"sort_index\":%d}}",
		pid, pid, index);
}

void fmt_te_end(struct fmt_te *w, const char *const *kv, size_t n)
{
	fputs_unlocked("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{", w->out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc_unlocked(',', w->out);
		fmt_json_str(w->out, kv[2 * i]);
		putc_unlocked(':', w->out);
		fmt_json_str(w->out, kv[2 * i + 1]);
	}
	fputs_unlocked("}}\n", w->out);
}

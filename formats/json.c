/*
 * formats/json.c - JSON: strings, the rows of the shared schema as objects,
 * and the Chrome trace-event document that `print --json` and `export
 * --format=chrome` write (formats/formats.h).  The trace-event format:
 * "Trace Event Format" (Google, the JSON Object Format with traceEvents,
 * displayTimeUnit and otherData), read by ui.perfetto.dev, chrome://tracing
 * and speedscope.
 */
#include "formats/formats.h"

void fmt_json_str(FILE *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	putc_unlocked('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			putc_unlocked('\\', out);
			putc_unlocked((char)c, out);
		} else if (c < 0x20 || c == 0x7f) {
			fputs_unlocked("\\u00", out);
			putc_unlocked(hex[c >> 4], out);
			putc_unlocked(hex[c & 15], out);
		} else {
			putc_unlocked((char)c, out);
		}
	}
	putc_unlocked('"', out);
}

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
	fmt_put_u64(out, r->time_ns);
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

/* Microseconds with three decimals, signed. */
static void us(FILE *out, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	unsigned f = (unsigned)(u % 1000);

	if (ns < 0)
		putc_unlocked('-', out);
	fmt_put_u64(out, u / 1000);
	putc_unlocked('.', out);
	putc_unlocked((char)('0' + f / 100), out);
	putc_unlocked((char)('0' + f / 10 % 10), out);
	putc_unlocked((char)('0' + f % 10), out);
}

static void sep(struct fmt_te *w)
{
	fputs_unlocked(w->first_event ? "\n" : ",\n", w->out);
	w->first_event = 0;
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
	FILE *out = w->out;

	sep(w);
	fputs_unlocked("{\"name\":", out);
	fmt_json_str(out, name);
	if (cat) {
		fputs_unlocked(",\"cat\":", out);
		fmt_json_str(out, cat);
	}
	fputs_unlocked(",\"ph\":\"", out);
	fputs_unlocked(ph, out);
	putc_unlocked('"', out);
	if (scope) {
		fputs_unlocked(",\"s\":\"", out);
		fputs_unlocked(scope, out);
		putc_unlocked('"', out);
	}
	fputs_unlocked(",\"ts\":", out);
	us(out, w->relative ? (int64_t)(ts_ns - (uint64_t)w->t0) : (int64_t)ts_ns);
	if (ph[0] == 'X') {
		fputs_unlocked(",\"dur\":", out);
		us(out, (int64_t)dur_ns);
	}
	fputs_unlocked(",\"pid\":", out);
	fmt_put_u64(out, pid);
	fputs_unlocked(",\"tid\":", out);
	fmt_put_u64(out, tid);
	fputs_unlocked(",\"args\":{", out);
	w->first_arg = 1;
}

static void key(struct fmt_te *w, const char *k)
{
	if (!w->first_arg)
		putc_unlocked(',', w->out);
	w->first_arg = 0;
	fmt_json_str(w->out, k);
	putc_unlocked(':', w->out);
}

void fmt_te_arg_u64(struct fmt_te *w, const char *k, uint64_t v)
{
	key(w, k);
	fmt_put_u64(w->out, v);
}

void fmt_te_arg_hex(struct fmt_te *w, const char *k, uint64_t v)
{
	key(w, k);
	putc_unlocked('"', w->out);
	fmt_put_hex(w->out, v);
	putc_unlocked('"', w->out);
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
	key(w, k);
	fmt_json_str(w->out, s);
}

void fmt_te_arg_true(struct fmt_te *w, const char *k)
{
	key(w, k);
	fputs_unlocked("true", w->out);
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

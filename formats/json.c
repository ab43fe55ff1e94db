/*
 * formats/json.c - every JSON document ktrace writes (formats/formats.h):
 * `kd --format=json` (the function table, and the calls of -c), `print
 * --json` and `export --format=chrome` (Chrome trace events).
 *
 * The generator is yajl's (yajl_gen, Debian libyajl): it places commas and
 * colons, escapes strings, refuses a document that is not well formed, and
 * with yajl_gen_validate_utf8 refuses a string that is not UTF-8.  Names
 * reach it through fmt_utf8() first, since a process may call itself any
 * bytes; so every document is valid UTF-8 JSON whatever the trace holds.
 *
 * Output goes through a 64 KiB buffer of ours (yajl's print callback
 * copies into it; one fwrite per full buffer), since yajl calls its
 * callback several times per value.  Numbers are formatted without printf
 * (fmt_u64_to) and handed to yajl_gen_number().  One event per line: the
 * print callback starts a new line before the next value after
 * fmt_json_newline() (whitespace between tokens is insignificant).
 *
 * The trace-event layer (fmt_te_*) is the "Trace Event Format" (Google,
 * the JSON Object Format: traceEvents, displayTimeUnit, otherData), read by
 * ui.perfetto.dev, chrome://tracing and speedscope.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "formats/formats.h"

struct fmt_json {
	yajl_gen g;
	FILE *out;
	int status;  /* the first yajl_gen_status that was not ok */
	int newline; /* start a line before the next value */
	size_t n;
	char buf[65536];
};

static void flush(struct fmt_json *j)
{
	if (j->n)
		fwrite_unlocked(j->buf, 1, j->n, j->out);
	j->n = 0;
}

/* yajl's print callback: into the buffer (a line break first, if asked). */
static void print_cb(void *ctx, const char *s, size_t len)
{
	struct fmt_json *j = ctx;
	char *d;

	if (__builtin_expect(j->newline, 0) && !(len == 1 && s[0] == ',')) {
		j->newline = 0;
		if (j->n == sizeof(j->buf))
			flush(j);
		j->buf[j->n++] = '\n';
	}
	if (__builtin_expect(j->n + len > sizeof(j->buf), 0)) {
		flush(j);
		if (len > sizeof(j->buf)) {
			fwrite_unlocked(s, 1, len, j->out);
			return;
		}
	}
	d = j->buf + j->n;
	j->n += len;
	if (len > 16) {
		memcpy(d, s, len);
		return;
	}
	while (len--) /* most tokens are a few bytes: no call */
		*d++ = *s++;
}

struct fmt_json *fmt_json_new(FILE *out)
{
	struct fmt_json *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->out = out;
	j->g = yajl_gen_alloc(NULL);
	if (!j->g) {
		free(j);
		return NULL;
	}
	yajl_gen_config(j->g, yajl_gen_print_callback, print_cb, j);
	yajl_gen_config(j->g, yajl_gen_validate_utf8, 1);
	return j;
}

int fmt_json_free(struct fmt_json *j)
{
	int rc;

	if (!j)
		return 0;
	flush(j);
	rc = j->status ? -EINVAL : 0;
	yajl_gen_free(j->g);
	free(j);
	return rc;
}

static void check(struct fmt_json *j, yajl_gen_status st)
{
	if (st != yajl_gen_status_ok && !j->status)
		j->status = (int)st;
}

void fmt_json_newline(struct fmt_json *j)
{
	j->newline = 1;
}

void fmt_json_map(struct fmt_json *j)
{
	check(j, yajl_gen_map_open(j->g));
}

void fmt_json_end_map(struct fmt_json *j)
{
	check(j, yajl_gen_map_close(j->g));
}

void fmt_json_array(struct fmt_json *j)
{
	check(j, yajl_gen_array_open(j->g));
}

void fmt_json_end_array(struct fmt_json *j)
{
	check(j, yajl_gen_array_close(j->g));
}

/* Whether the @n bytes at @s are all ASCII (then they are UTF-8 as they are). */
static int ascii(const char *s, size_t n)
{
	uint64_t hi = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		hi |= w;
	}
	for (; i < n; i++)
		hi |= (unsigned char)s[i];
	return !(hi & 0x8080808080808080ull);
}

void fmt_json_str(struct fmt_json *j, const char *s)
{
	char small[1024], *heap;
	size_t n = strlen(s);
	const char *v;

	if (ascii(s, n)) {
		check(j, yajl_gen_string(j->g, (const unsigned char *)s, n));
		return;
	}
	v = fmt_utf8_any(s, small, sizeof(small), &heap);
	check(j, yajl_gen_string(j->g, (const unsigned char *)v, strlen(v)));
	free(heap);
}

/* A string the code spells (keys, codes): ASCII, its length known. */
#define LIT(j, s) check((j), yajl_gen_string((j)->g, (const unsigned char *)(s), sizeof(s) - 1))

void fmt_json_number(struct fmt_json *j, const char *text, size_t len)
{
	check(j, yajl_gen_number(j->g, text, len));
}

void fmt_json_u64(struct fmt_json *j, uint64_t v)
{
	char b[20];

	fmt_json_number(j, b, (size_t)(fmt_u64_to(b, v) - b));
}

void fmt_json_i64(struct fmt_json *j, int64_t v)
{
	char b[21], *p = b;

	if (v < 0)
		*p++ = '-';
	p = fmt_u64_to(p, v < 0 ? -(uint64_t)v : (uint64_t)v);
	fmt_json_number(j, b, (size_t)(p - b));
}

void fmt_json_null(struct fmt_json *j)
{
	check(j, yajl_gen_null(j->g));
}

void fmt_json_bool(struct fmt_json *j, int v)
{
	check(j, yajl_gen_bool(j->g, v));
}

/* ---- rows --------------------------------------------------------------------- */

/* "key": v, or null for a negative value. */
static void opt_num(struct fmt_json *j, const char *key, int64_t v)
{
	check(j, yajl_gen_string(j->g, (const unsigned char *)key, strlen(key)));
	if (v < 0)
		fmt_json_null(j);
	else
		fmt_json_u64(j, (uint64_t)v);
}

void fmt_row_json(struct fmt_json *j, const struct fmt_row *r)
{
	fmt_json_newline(j);
	fmt_json_map(j);
	LIT(j, "time_ns");
	fmt_json_i64(j, r->time_ns);
	opt_num(j, "dur_ns", r->dur_ns);
	opt_num(j, "self_ns", r->self_ns);
	opt_num(j, "cpu", r->cpu);
	opt_num(j, "pid", r->pid);
	opt_num(j, "tid", r->tid);
	LIT(j, "comm");
	fmt_json_str(j, r->comm);
	LIT(j, "category");
	fmt_json_str(j, r->category);
	LIT(j, "name");
	fmt_json_str(j, r->name);
	LIT(j, "args");
	fmt_json_str(j, r->args);
	fmt_json_end_map(j);
}

/* ---- trace events ------------------------------------------------------------ */

/*
 * The threads' slice state, for B/E pairing: a hash table of (pid, tid)
 * -> the earliest time written for that thread and how many "B" slices
 * are open on it.
 */
struct te_thread {
	uint64_t key; /* pid << 32 | tid, + 1 (0: empty) */
	uint64_t first_ns;
	uint64_t open;
};

static struct te_thread *te_thread(struct fmt_te *w, uint32_t pid, uint32_t tid, uint64_t ts)
{
	uint64_t key = ((uint64_t)pid << 32 | tid) + 1;
	size_t i, mask;

	if ((w->nthreads + 1) * 2 > w->capthreads) {
		size_t cap = w->capthreads ? 2 * w->capthreads : 64;
		struct te_thread *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < w->capthreads; k++) {
			if (!w->threads[k].key)
				continue;
			for (i = (size_t)(w->threads[k].key * 0x9e3779b97f4a7c15ull >> 32) & (cap - 1);
			     n[i].key; i = (i + 1) & (cap - 1))
				;
			n[i] = w->threads[k];
		}
		free(w->threads);
		w->threads = n;
		w->capthreads = cap;
	}
	mask = w->capthreads - 1;
	for (i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 32) & mask; w->threads[i].key; i = (i + 1) & mask)
		if (w->threads[i].key == key) {
			if (ts < w->threads[i].first_ns)
				w->threads[i].first_ns = ts;
			return &w->threads[i];
		}
	w->threads[i].key = key;
	w->threads[i].first_ns = ts;
	w->threads[i].open = 0;
	w->nthreads++;
	return &w->threads[i];
}

int fmt_te_begin(struct fmt_te *w, FILE *out)
{
	w->j = fmt_json_new(out);
	if (!w->j)
		return -ENOMEM;
	fmt_json_map(w->j);
	LIT(w->j, "traceEvents");
	fmt_json_array(w->j);
	return 0;
}

/* Microseconds with three decimals, signed. */
static void us(struct fmt_json *j, int64_t ns)
{
	char b[24], *p = b;
	uint64_t u = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	unsigned f = (unsigned)(u % 1000);

	if (ns < 0)
		*p++ = '-';
	p = fmt_u64_to(p, u / 1000);
	*p++ = '.';
	*p++ = (char)('0' + f / 100);
	*p++ = (char)('0' + f / 10 % 10);
	*p++ = (char)('0' + f % 10);
	fmt_json_number(j, b, (size_t)(p - b));
}

static void ts(struct fmt_te *w, uint64_t ns)
{
	us(w->j, w->relative ? (int64_t)(ns - (uint64_t)w->t0) : (int64_t)ns);
}

/* The one-letter codes of the format ("X", "i", "t"...) as strings. */
static void code(struct fmt_json *j, const char *key, const char *c)
{
	check(j, yajl_gen_string(j->g, (const unsigned char *)key, strlen(key)));
	check(j, yajl_gen_string(j->g, (const unsigned char *)c, 1));
}

/* An event's last members: "pid":P,"tid":T,"args":{  (the caller writes the arguments) */
static void ids_args(struct fmt_json *j, uint32_t pid, uint32_t tid)
{
	LIT(j, "pid");
	fmt_json_u64(j, pid);
	LIT(j, "tid");
	fmt_json_u64(j, tid);
	LIT(j, "args");
	fmt_json_map(j);
}

void fmt_te_event(struct fmt_te *w, const char *name, const char *cat, const char *ph,
		  const char *scope, uint64_t ts_ns, uint64_t dur_ns, uint32_t pid, uint32_t tid)
{
	struct fmt_json *j = w->j;
	struct te_thread *th = te_thread(w, pid, tid, ts_ns);
	int lost_begin = 0;

	if (th && ph[0] == 'B') {
		th->open++;
	} else if (th && ph[0] == 'E') {
		if (th->open) {
			th->open--;
		} else { /* its B is not in the trace: a slice from the thread's first event */
			lost_begin = 1;
			ph = "X";
			scope = NULL;
			dur_ns = ts_ns - th->first_ns;
			ts_ns = th->first_ns;
			w->begins_lost++;
		}
	}
	fmt_json_newline(j);
	fmt_json_map(j);
	LIT(j, "name");
	fmt_json_str(j, name);
	if (cat) {
		LIT(j, "cat");
		fmt_json_str(j, cat);
	}
	code(j, "ph", ph);
	if (scope)
		code(j, "s", scope);
	LIT(j, "ts");
	ts(w, ts_ns);
	if (ph[0] == 'X') {
		LIT(j, "dur");
		us(j, (int64_t)dur_ns);
	}
	ids_args(j, pid, tid);
	w->nkeys = 0;
	if (lost_begin)
		fmt_te_arg_true(w, "begin_lost");
}

/* "KEY": made unique in the event ("KEY#N" for the N-th use). */
static void key(struct fmt_te *w, const char *k)
{
	char dup[320];
	unsigned n = 1;

	for (unsigned i = 0; i < w->nkeys; i++)
		n += !strcmp(w->keys[i], k);
	if (w->nkeys < sizeof(w->keys) / sizeof(w->keys[0]))
		w->keys[w->nkeys++] = k;
	if (n > 1) {
		snprintf(dup, sizeof(dup), "%.300s#%u", k, n);
		k = dup;
	}
	fmt_json_str(w->j, k);
}

void fmt_te_arg_u64(struct fmt_te *w, const char *k, uint64_t v)
{
	key(w, k);
	fmt_json_u64(w->j, v);
}

void fmt_te_arg_hex(struct fmt_te *w, const char *k, uint64_t v)
{
	char b[19];

	key(w, k);
	*fmt_hex_to(b, v) = 0;
	fmt_json_str(w->j, b);
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
	fmt_json_str(w->j, s);
}

void fmt_te_args(struct fmt_te *w, const char *const *names, const uint64_t *vals, unsigned n,
		 unsigned hidden)
{
	for (unsigned i = 0; i < n; i++) {
		if (hidden & (1u << i)) /* a kernel address (include/ktrace/lkst.h) */
			fmt_te_arg_str(w, names[i], "hidden");
		else
			fmt_te_arg_value(w, names[i], vals[i]);
	}
}

void fmt_te_arg_true(struct fmt_te *w, const char *k)
{
	key(w, k);
	fmt_json_bool(w->j, 1);
}

void fmt_te_end_event(struct fmt_te *w)
{
	fmt_json_end_map(w->j);
	fmt_json_end_map(w->j);
}

/* {"name":WHAT,"ph":"M","pid":P,"tid":T,"args":{KEY: ...  (the caller writes the value) */
static void meta(struct fmt_te *w, const char *what, uint32_t pid, uint32_t tid, const char *k)
{
	struct fmt_json *j = w->j;

	fmt_json_newline(j);
	fmt_json_map(j);
	LIT(j, "name");
	fmt_json_str(j, what);
	code(j, "ph", "M");
	ids_args(j, pid, tid);
	fmt_json_str(j, k);
}

void fmt_te_meta(struct fmt_te *w, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	meta(w, what, pid, tid, "name");
	fmt_json_str(w->j, name);
	fmt_te_end_event(w);
}

void fmt_te_sort_index(struct fmt_te *w, uint32_t pid, int index)
{
	meta(w, "process_sort_index", pid, pid, "sort_index");
	fmt_json_i64(w->j, index);
	fmt_te_end_event(w);
}

int fmt_te_end(struct fmt_te *w, const char *const *kv, size_t n)
{
	struct fmt_json *j = w->j;
	int rc;

	fmt_json_newline(j);
	fmt_json_end_array(j);
	LIT(j, "displayTimeUnit");
	LIT(j, "ns");
	LIT(j, "otherData");
	fmt_json_map(j);
	for (size_t i = 0; i < n; i++) {
		fmt_json_str(j, kv[2 * i]);
		fmt_json_str(j, kv[2 * i + 1]);
	}
	if (w->begins_lost) {
		LIT(j, "begins_lost");
		fmt_json_u64(j, w->begins_lost);
	}
	fmt_json_end_map(j);
	fmt_json_end_map(j);
	print_cb(j, "\n", 1);
	rc = fmt_json_free(j);
	w->j = NULL;
	free(w->threads);
	w->threads = NULL;
	w->nthreads = w->capthreads = 0;
	return rc;
}

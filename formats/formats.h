/*
 * formats/formats.h - the writers of ktrace's output formats, one place per
 * format, used by every command that writes it (libktrace-formats.a):
 *
 *   text   numbers without printf (hot loops of print, kd, export),
 *          microseconds with three decimals as kd and addr2sym show them;
 *   CSV    RFC 4180 quoting, and the one row schema that `kd --format=csv`
 *          and `export --format=csv` share (fmt_row);
 *   JSON   string escaping, the same rows as JSON objects, and the Chrome
 *          trace-event document ("JSON Object Format") that `print --json`
 *          and `export --format=chrome` write (struct fmt_te);
 *   SVG    XML escaping, the document frame, bars whose touching intervals
 *          are merged into one rectangle, axis steps (`timeline --svg`).
 *
 * The writers know nothing of traces: they take numbers and strings (the
 * commands and analysis/ turn records into those).  Every function writes
 * to a stdio stream the caller owns and checks (ferror() at the end, as
 * cli/output.c does for standard output); none allocates.  Not
 * thread-safe per stream (the *_unlocked stdio calls are used); no
 * function is async-signal-safe.
 */
#ifndef KTRACE_FORMATS_H
#define KTRACE_FORMATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- text (formats/text.c) ------------------------------------------------- */

/** fmt_put_u64() - @v in decimal, without printf (3x faster in hot loops). */
void fmt_put_u64(FILE *out, uint64_t v);

/** fmt_put_hex() - @v as "0x" and lower-case hex digits. */
void fmt_put_hex(FILE *out, uint64_t v);

/**
 * fmt_u64_to(), fmt_hex_to() - the same into the buffer at @p, which must
 * have room for 20 (decimal) or 18 (hex) bytes; no NUL is written.
 * Return: the end of what was written.
 */
char *fmt_u64_to(char *p, uint64_t v);
char *fmt_hex_to(char *p, uint64_t v);

/**
 * fmt_us() - @ns as microseconds into @buf (@len bytes): "123.456", or the
 * whole microseconds "123" if @whole (KFT's `-u`).  A negative @ns gets a
 * '-'.  Return: @buf.
 */
const char *fmt_us(int64_t ns, int whole, char *buf, size_t len);

/* ---- UTF-8 (formats/utf8.c) ------------------------------------------------ */

/**
 * fmt_utf8_seq() - the length (1-4 bytes) of the well-formed UTF-8
 * sequence (RFC 3629) that begins at @s, or 0 if none does.  Reads at most
 * up to the first byte that breaks the sequence, so a NUL ends it safely.
 */
size_t fmt_utf8_seq(const unsigned char *s);

/**
 * fmt_utf8() - @s (NUL-terminated bytes) as valid UTF-8: @s itself if it
 * is (no copy), else a copy in @buf (@len bytes, truncated at a character
 * boundary, NUL-terminated) where every byte that begins no well-formed
 * sequence is the four characters "\xNN".  Process names are any bytes
 * (prctl(PR_SET_NAME)); JSON, XML and protobuf strings must be UTF-8.
 * Return: @s or @buf ("" if @len is 0).
 */
const char *fmt_utf8(const char *s, char *buf, size_t len);

/* ---- CSV (formats/csv.c) --------------------------------------------------- */

/** fmt_csv_str() - @s as one CSV field: quoted (and '"' doubled) if it holds , " CR or LF. */
void fmt_csv_str(FILE *out, const char *s);

/**
 * struct fmt_row - one row of the schema shared by `kd --format=csv|json`
 * (one row per call with -c) and `export --format=csv`: FMT_ROW_HEADER.
 * @time_ns:  CLOCK_MONOTONIC ns (a call's entry).
 * @dur_ns, @self_ns: ns, or -1 for none (an event).
 * @cpu:      CPU number, or -1 if unknown.
 * @pid, @tid: process and thread ids.
 * @comm, @category, @name, @args: strings ("" for none); @args is
 *            "key=value;key=value".
 */
struct fmt_row {
	int64_t time_ns; /* ns; negative only for times relative to a later origin (print -C -r) */
	int64_t dur_ns, self_ns;
	int cpu;
	uint32_t pid, tid;
	const char *comm, *category, *name, *args;
};

#define FMT_ROW_HEADER "time_ns,dur_ns,self_ns,cpu,pid,tid,comm,category,name,args"

/** fmt_row_csv() - @r as one CSV line (FMT_ROW_HEADER's columns; empty for -1). */
void fmt_row_csv(FILE *out, const struct fmt_row *r);

/* ---- JSON (formats/json.c) ------------------------------------------------- */

/** fmt_json_str() - @s as a JSON string: '"' and '\' escaped, control bytes as \u00XX. */
void fmt_json_str(FILE *out, const char *s);

/** fmt_row_json() - @r as one JSON object (no separator, no newline); null for -1. */
void fmt_row_json(FILE *out, const struct fmt_row *r);

/**
 * struct fmt_te - a Chrome trace-event document being written: {"traceEvents":
 * [ event, ... ], ...}.  Times ("ts", "dur") are microseconds with three
 * decimals, as the format wants.
 * @out:      the stream.
 * @t0:       with @relative, "ts" is written relative to it (may be negative).
 * @hex:      argument values as "0x..." strings (print -x).
 * The rest is the writer's state.
 */
struct fmt_te {
	FILE *out;
	int64_t t0;
	int relative, hex;
	int first_event, first_arg;
	/* the current event's argument keys, kept unique (fmt_te_arg_*) */
	const char *keys[16];
	unsigned nkeys;
};

/** fmt_te_begin() - '{"traceEvents":[' on @out; @w's options stay as set. */
void fmt_te_begin(struct fmt_te *w, FILE *out);

/**
 * fmt_te_event() - start an event: '{"name":N,"cat":C,"ph":P' plus the
 * instant scope '"s":S' if @scope is not NULL ("t" thread, "g" global),
 * '"ts":T' (@ts_ns, see @relative), '"dur":D' if @ph is "X", '"pid":P,
 * "tid":T'.  Then its arguments (fmt_te_arg_*) and fmt_te_end_event().
 * @cat may be NULL (no "cat").
 */
void fmt_te_event(struct fmt_te *w, const char *name, const char *cat, const char *ph,
		  const char *scope, uint64_t ts_ns, uint64_t dur_ns, uint32_t pid, uint32_t tid);

/*
 * Argument keys are unique within an event, as JSON readers need: a key
 * already used by one of the event's first 16 arguments is written as
 * "KEY#2", "KEY#3", ... (a record whose catalogue repeats a name, or whose
 * argument is named like a key the caller adds).
 */
/** fmt_te_arg_u64() - one argument, an exact number. */
void fmt_te_arg_u64(struct fmt_te *w, const char *key, uint64_t v);

/**
 * fmt_te_arg_value() - one argument, a record's value: a number, or a
 * "0x..." string if @hex is set or @v is beyond a double's exact integers
 * (2^53), where a JSON reader would round it.
 */
void fmt_te_arg_value(struct fmt_te *w, const char *key, uint64_t v);

/** fmt_te_arg_hex() - one argument as a "0x..." string (addresses). */
void fmt_te_arg_hex(struct fmt_te *w, const char *key, uint64_t v);

/** fmt_te_arg_str() - one argument, a string. */
void fmt_te_arg_str(struct fmt_te *w, const char *key, const char *s);

/** fmt_te_arg_true() - one argument, the literal true. */
void fmt_te_arg_true(struct fmt_te *w, const char *key);

/** fmt_te_end_event() - close the event's arguments ('"args":{...}}'). */
void fmt_te_end_event(struct fmt_te *w);

/**
 * fmt_te_meta() - a metadata ("ph":"M") event @what ("process_name",
 * "thread_name") naming @pid/@tid @name.
 */
void fmt_te_meta(struct fmt_te *w, const char *what, uint32_t pid, uint32_t tid, const char *name);

/** fmt_te_sort_index() - a "process_sort_index" metadata event for @pid. */
void fmt_te_sort_index(struct fmt_te *w, uint32_t pid, int index);

/**
 * fmt_te_end() - close the event list and write '"displayTimeUnit":"ns",
 * "otherData":{K:V,...}}' with the @n (key, value) string pairs of @kv
 * (kv[2i], kv[2i+1]), then a newline.
 */
void fmt_te_end(struct fmt_te *w, const char *const *kv, size_t n);

/* ---- SVG (formats/svg.c) --------------------------------------------------- */

/** fmt_xml_text() - @s as XML character data: < > & " escaped, control bytes dropped. */
void fmt_xml_text(FILE *out, const char *s);

/**
 * fmt_svg_begin() - the XML declaration, the <svg> element (@width x
 * @height px, sans-serif 11 px), a <title> ("@title") and a white
 * background.  fmt_svg_end() closes it.
 */
void fmt_svg_begin(FILE *out, int width, double height, const char *title);
void fmt_svg_end(FILE *out);

/**
 * struct fmt_svg_bar - a pending rectangle of one colour on one row:
 * intervals that touch (within half a pixel) are drawn as one, so a row
 * costs at most about one rectangle per pixel column per colour.  Zero it
 * to start; fmt_svg_bar_flush() draws what is pending.
 */
struct fmt_svg_bar {
	double x0, x1;
	int on;
};

/** fmt_svg_bar_add() - add [@x0, @x1] px at @y, @h px high, @colour ("#rrggbb"). */
void fmt_svg_bar_add(FILE *out, struct fmt_svg_bar *b, double x0, double x1, double y, double h,
		     const char *colour);
void fmt_svg_bar_flush(FILE *out, struct fmt_svg_bar *b, double y, double h, const char *colour);

/** fmt_tick_step() - an axis step of 1, 2 or 5 x 10^k giving about @n ticks over @span. */
double fmt_tick_step(double span, int n);

#endif

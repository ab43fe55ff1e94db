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
 *   Perfetto  Perfetto's native protobuf trace (`export --format=perfetto`,
 *          struct fmt_pf; protobuf-c, messages in third_party/perfetto/).
 *
 * The writers know nothing of traces: they take numbers and strings (the
 * commands and analysis/ turn records into those).  Every function writes
 * to a stdio stream the caller owns and checks (ferror() at the end, as
 * cli/output.c does for standard output); none allocates, except the
 * Perfetto writer (its packet buffer and its interned strings).  Not
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

/* ---- Perfetto protobuf trace (formats/perfetto.c) ------------------------------- */

/*
 * The document is a perfetto.protos.Trace (protos/perfetto/trace/trace.proto
 * upstream; ui.perfetto.dev and trace_processor read it): a series of
 * TracePacket, each written as soon as it is made.  Times are
 * CLOCK_MONOTONIC ns.  Events are TrackEvents on tracks the caller
 * declares first (fmt_pf_process/thread/track, each with a caller-chosen
 * uuid, unique in the document, never 0), on a sequence (struct
 * fmt_pf_seq) whose timestamps should not decrease: within a sequence
 * times are written as deltas, names interned.  A time earlier than the
 * sequence's last is still written, absolute (counted in @unordered).
 * Scheduling is ftrace's (fmt_pf_sched_*).  Every string is written as
 * valid UTF-8 (fmt_utf8(); names beyond 1 KiB, string arguments beyond
 * 512 bytes are truncated).  Not thread-safe; one writer per stream.
 */
struct fmt_pf_tab;

/**
 * struct fmt_pf_seq - one packet sequence (trusted_packet_sequence_id
 * @id, not 0, unique per document) with its incremental state: the last
 * timestamp and the interned event names, categories and argument names.
 * fmt_pf_seq_init() before use, fmt_pf_seq_free() after.
 */
struct fmt_pf_seq {
	uint32_t id;
	int started;
	uint64_t last_ns;
	struct fmt_pf_tab *names, *cats, *keys;
};

/**
 * struct fmt_pf - a Perfetto trace being written.
 * @out:       the stream.
 * @packets, @bytes: packets written and their bytes (with the framing).
 * @unordered: events written with a time before their sequence's last.
 * @enomem:    set when memory ran out (a packet was lost, or a string was
 *             written inline instead of interned); fmt_pf_end() reports it.
 */
struct fmt_pf {
	FILE *out;
	uint8_t *buf;
	size_t cap;
	uint64_t packets, bytes, unordered;
	int enomem;
};

/* TrackEvent types (TrackEvent.Type) */
#define FMT_PF_SLICE_BEGIN 1
#define FMT_PF_SLICE_END 2
#define FMT_PF_INSTANT 3

#define FMT_PF_MAX_ARGS 16 /* arguments of one event (more are left out) */

/** An event's argument (a DebugAnnotation): @name and a value of @kind. */
struct fmt_pf_arg {
	const char *name;
	enum { FMT_PF_UINT, FMT_PF_PTR, FMT_PF_BOOL, FMT_PF_STR } kind;
	uint64_t u;    /* UINT (uint_value), PTR (pointer_value, shown hex), BOOL (0/1) */
	const char *s; /* STR */
};

/**
 * fmt_pf_begin() - start a document on @out: a ClockSnapshot that makes
 * CLOCK_MONOTONIC the trace clock, with BOOTTIME equal to it at @mono_ns
 * (ktrace records one clock; ftrace events are read as BOOTTIME) and, if
 * @realtime_ns is not 0, CLOCK_REALTIME @realtime_ns at the same moment.
 * Return: 0, -ENOMEM.
 */
int fmt_pf_begin(struct fmt_pf *w, FILE *out, uint64_t mono_ns, uint64_t realtime_ns);

/** fmt_pf_seq_init() - a sequence numbered @id; fmt_pf_seq_free() frees its interned names. */
void fmt_pf_seq_init(struct fmt_pf_seq *s, uint32_t id);
void fmt_pf_seq_free(struct fmt_pf_seq *s);

/** fmt_pf_process() - a process track @uuid (ProcessDescriptor: @pid, @name). */
void fmt_pf_process(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint32_t pid,
		    const char *name);

/** fmt_pf_thread() - a thread track @uuid (ThreadDescriptor: @pid, @tid, @name). */
void fmt_pf_thread(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint32_t pid, uint32_t tid,
		   const char *name);

/** fmt_pf_track() - a named track @uuid, under track @parent (0: at the top). */
void fmt_pf_track(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint64_t parent,
		  const char *name);

/**
 * fmt_pf_event() - a TrackEvent of @type (FMT_PF_*) at @ts_ns on track
 * @track, named @name (NULL: none, as slice ends need), in category @cat
 * (NULL: none), with @nargs arguments (at most FMT_PF_MAX_ARGS).  Slice
 * begins and ends on a track must nest (Perfetto closes the innermost
 * open slice at an end).
 */
void fmt_pf_event(struct fmt_pf *w, struct fmt_pf_seq *s, int type, uint64_t ts_ns, uint64_t track,
		  const char *name, const char *cat, const struct fmt_pf_arg *args, unsigned nargs);

/**
 * fmt_pf_sched_switch() - an ftrace sched_switch on @cpu at @ts_ns, in its
 * own FtraceEventBundle, on packet sequence @seq (no state): @prev_pid
 * (named @prev_comm) left the CPU in @prev_state (the kernel's TASK_REPORT
 * bits, as the tracepoint has them), @next_pid (@next_comm) runs.
 */
void fmt_pf_sched_switch(struct fmt_pf *w, uint32_t seq, int cpu, uint64_t ts_ns,
			 const char *prev_comm, uint32_t prev_pid, uint64_t prev_state,
			 const char *next_comm, uint32_t next_pid);

/** fmt_pf_sched_wakeup() - an ftrace sched_wakeup of @pid (@comm) by @cur_pid on @cpu. */
void fmt_pf_sched_wakeup(struct fmt_pf *w, uint32_t seq, int cpu, uint64_t ts_ns, uint32_t cur_pid,
			 const char *comm, uint32_t pid);

/** fmt_pf_end() - free the writer's buffer.  Return: 0, or -ENOMEM if @enomem was set. */
int fmt_pf_end(struct fmt_pf *w);

#endif

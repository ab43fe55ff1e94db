/*
 * formats/formats.h - the writers of ktrace's output formats, one place per
 * format, used by every command that writes it (libktrace-formats.a):
 *
 *   text   numbers without printf (hot loops of print, kd, export),
 *          microseconds with three decimals as kd and addr2sym show them;
 *   CSV    RFC 4180 quoting, and the one row schema that `kd --format=csv`
 *          and `export --format=csv` share (fmt_row);
 *   UTF-8  names made valid UTF-8 for the formats that require it;
 *   JSON   every JSON document, with yajl's generator: the same rows as
 *          JSON objects, and the Chrome trace-event document ("JSON
 *          Object Format") that `print --json` and `export
 *          --format=chrome` write (struct fmt_te);
 *   SVG    XML escaping, the document frame, bars whose touching intervals
 *          are merged into one rectangle, axis steps (`timeline --svg`).
 *   Perfetto  Perfetto's native protobuf trace (`export --format=perfetto`,
 *          struct fmt_pf; protobuf-c, messages in third_party/perfetto/).
 *   CTF    a CTF 1.8 trace directory (`export --format=ctf`, struct
 *          fmt_ctf; libbabeltrace2's sink.ctf.fs; not in the fuzz build).
 *
 * The writers know nothing of traces: they take numbers and strings (the
 * commands and analysis/ turn records into those).  Every function writes
 * to a stdio stream the caller owns and checks (ferror() at the end, as
 * cli/output.c does for standard output), except the CTF writer's, which
 * write a directory through libbabeltrace2; the JSON writer allocates its
 * generator and buffer, the Perfetto writer its packet buffer and its
 * interned strings, the CTF writer its babeltrace2 graph and the trace
 * directory, and a name longer than 255 bytes that is not UTF-8 is
 * repaired in allocated memory (fmt_utf8_any()).  Not
 * thread-safe per stream (the *_unlocked stdio calls are used); no
 * function is async-signal-safe.
 */
#ifndef KTRACE_FORMATS_H
#define KTRACE_FORMATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
/**
 * fmt_rjust_to() - @s (@n bytes) at @p right-justified in @width columns,
 * as printf's "%*s" (room for the larger of the two).  Return: the end.
 */
char *fmt_rjust_to(char *p, const char *s, size_t n, size_t width);

/** fmt_us_to() - the same at @p (room for 25 bytes), no NUL.  Return: the end of what was written. */
char *fmt_us_to(char *p, int64_t ns, int whole);

/**
 * struct fmt_line - a text line assembled in @b and written to @out with
 * one fwrite_unlocked() (kd -c and addr2sym print a line per call: printf
 * and a call per piece were most of their time).  A piece that does not
 * fit flushes what is there first; a longer one is written directly, so
 * any line goes out whole.  Set @out and @n = 0; fmt_line_put() and
 * fmt_line_pad() add to it, fmt_line_end() ends it with '\n' and writes
 * it.  Not locking @out: one thread writes it.
 */
struct fmt_line {
	FILE *out;
	size_t n;
	char b[1024];
};

static inline void fmt_line_put(struct fmt_line *l, const char *s, size_t n)
{
	if (n > sizeof(l->b) - l->n) {
		fwrite_unlocked(l->b, 1, l->n, l->out);
		l->n = 0;
		if (n > sizeof(l->b)) {
			fwrite_unlocked(s, 1, n, l->out);
			return;
		}
	}
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

/** fmt_line_pad() - @s as printf's "%*s" writes it with @width (negative: left-justified). */
void fmt_line_pad(struct fmt_line *l, const char *s, int width);

static inline void fmt_line_end(struct fmt_line *l)
{
	fmt_line_put(l, "\n", 1);
	fwrite_unlocked(l->b, 1, l->n, l->out);
	l->n = 0;
}

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

/**
 * fmt_utf8_any() - fmt_utf8() without truncation: into @small (@len bytes)
 * when the repaired name fits, else into memory it allocates and returns
 * in *@heap, which the caller frees (NULL when none was needed; on ENOMEM
 * the name is truncated to @small instead).
 */
const char *fmt_utf8_any(const char *s, char *small, size_t len, char **heap);

/* ---- CSV (formats/csv.c) --------------------------------------------------- */

/**
 * fmt_csv_str() - @s as one CSV field: valid UTF-8 (fmt_utf8()), quoted
 * (and '"' doubled) if it holds , " CR or LF.
 */
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

/*
 * struct fmt_json - a JSON document being written with yajl's generator
 * (libyajl): well-formed by construction (yajl places the separators and
 * refuses a value where none may go) and valid UTF-8 (every string passes
 * fmt_utf8(), and yajl validates it).  Every function below appends one
 * token; the first error is remembered and returned by fmt_json_free().
 * Not thread-safe; allocates only in fmt_json_new() and for a repaired
 * string longer than 255 bytes.
 */
struct fmt_json;

/** fmt_json_new() - a document on @out (buffered: fmt_json_free() flushes). NULL: no memory. */
struct fmt_json *fmt_json_new(FILE *out);

/**
 * fmt_json_free() - flush what is buffered to the stream and free @j.
 * Return: 0, or -EINVAL if a token was refused (a programming error: the
 * document is then cut where it went wrong).  The stream's own errors are
 * the caller's (ferror()).
 */
int fmt_json_free(struct fmt_json *j);

/** fmt_json_map(), fmt_json_end_map(), fmt_json_array(), fmt_json_end_array() - { } [ ]. */
void fmt_json_map(struct fmt_json *j);
void fmt_json_end_map(struct fmt_json *j);
void fmt_json_array(struct fmt_json *j);
void fmt_json_end_array(struct fmt_json *j);

/** fmt_json_str() - a string (or a key, inside a map): made valid UTF-8 by fmt_utf8(). */
void fmt_json_str(struct fmt_json *j, const char *s);

/** fmt_json_u64(), fmt_json_i64() - an exact integer (no rounding through a double). */
void fmt_json_u64(struct fmt_json *j, uint64_t v);
void fmt_json_i64(struct fmt_json *j, int64_t v);

/** fmt_json_number() - a number already formatted as JSON (@len bytes of @text). */
void fmt_json_number(struct fmt_json *j, const char *text, size_t len);

/** fmt_json_null(), fmt_json_bool() - the literals. */
void fmt_json_null(struct fmt_json *j);
void fmt_json_bool(struct fmt_json *j, int v);

/** fmt_json_newline() - start a new line before the next value (one record per line). */
void fmt_json_newline(struct fmt_json *j);

/** fmt_row_json() - @r as one JSON object on a line of its own; null for -1. */
void fmt_row_json(struct fmt_json *j, const struct fmt_row *r);

/**
 * struct fmt_te - a Chrome trace-event document being written: {"traceEvents":
 * [ event, ... ], ...}, with fmt_json underneath.  Times ("ts", "dur") are
 * microseconds with three decimals, as the format wants.
 * @t0:       with @relative, "ts" is written relative to it (may be negative).
 * @hex:      argument values as "0x..." strings (print -x).
 * @begins_lost: "E" events whose "B" is not in the trace (see fmt_te_event()).
 * The rest is the writer's state; zero the struct before fmt_te_begin().
 */
struct fmt_te {
	struct fmt_json *j;
	int64_t t0;
	int relative, hex;
	uint64_t begins_lost;
	/* the current event's argument keys, kept unique (fmt_te_arg_*) */
	const char *keys[16];
	unsigned nkeys;
	/* per thread: earliest time written, open "B" slices */
	struct te_thread *threads;
	size_t nthreads, capthreads;
};

/** fmt_te_begin() - '{"traceEvents":[' on @out.  Return: 0, -ENOMEM. */
int fmt_te_begin(struct fmt_te *w, FILE *out);

/**
 * fmt_te_event() - start an event: '{"name":N,"cat":C,"ph":P' plus the
 * instant scope '"s":S' if @scope is not NULL ("t" thread, "g" global),
 * '"ts":T' (@ts_ns, see @relative), '"dur":D' if @ph is "X", '"pid":P,
 * "tid":T'.  Then its arguments (fmt_te_arg_*) and fmt_te_end_event().
 * @cat may be NULL (no "cat").
 *
 * "B" and "E" are paired per thread.  An "E" with no open "B" (a flight
 * recorder overwrote the entry) is written as a complete "X" slice from
 * the earliest time written for that thread to @ts_ns, with the argument
 * "begin_lost": true, and counted in @begins_lost: the function was
 * running since before the thread's first record, so everything written
 * for the thread meanwhile nests inside it, and viewers do not drop it.
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

/**
 * fmt_te_args() - a record's @n arguments @names / @vals (ktr_rec_args()):
 * each by fmt_te_arg_value(), except those whose bit is set in @hidden
 * (ktr_rec_hidden(): kernel addresses the producer wrote as 0), written as
 * the string "hidden".
 */
void fmt_te_args(struct fmt_te *w, const char *const *names, const uint64_t *vals, unsigned n,
		 unsigned hidden);

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
 * (kv[2i], kv[2i+1]) and "begins_lost" if any, then a newline; frees the
 * writer's state.  Return: fmt_json_free()'s.
 */
int fmt_te_end(struct fmt_te *w, const char *const *kv, size_t n);

/* ---- SVG (formats/svg.c) --------------------------------------------------- */

/**
 * fmt_xml_text() - @s as XML 1.0 character data: < > & " escaped, control
 * bytes dropped, bytes that are not UTF-8 (and U+FFFE, U+FFFF) written as
 * the text "\xNN" as fmt_utf8() does, so the document stays well formed.
 */
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

/* ---- CTF (formats/ctf.c) --------------------------------------------------------- */

/*
 * A CTF 1.8 trace directory written by libbabeltrace2's sink.ctf.fs
 * component (`export --format=ctf`; formats/ctf.c says which events and
 * fields).  babeltrace2 pulls the events: the caller hands them over one
 * at a time, in time order, from its fmt_ctf_next_fn while fmt_ctf_run()
 * runs.  Errors are reported, one line each, through the caller's
 * fmt_ctf_report_fn.  Not thread-safe (libbabeltrace2's per-thread error
 * state).  The fuzz build leaves this writer out (it does not link
 * libbabeltrace2).
 */
struct fmt_ctf;

#define FMT_CTF_MAX_FIELDS 16 /* fields of an event class of fmt_ctf_event_class() */

/** The kinds of event (struct fmt_ctf_ev @type). */
enum fmt_ctf_type {
	FMT_CTF_ENTRY, /* lttng_ust_cyg_profile:func_entry, a function call's entry */
	FMT_CTF_EXIT,  /* lttng_ust_cyg_profile:func_exit */
	FMT_CTF_LOST,  /* ktrace:lost, a gap */
	FMT_CTF_EVENT, /* an event of class @cls (fmt_ctf_event_class()) */
};

/**
 * struct fmt_ctf_ev - one event.
 * @kernel:   on the stream of kernel CPU @cpu ("kernel-cpuN"), else on the
 *            stream of application thread @thread ("thread-@thread_tid").
 * @thread:   the thread's ordinal (0, 1, ...: the caller numbers threads).
 * @ns:       CLOCK_MONOTONIC ns.
 * @cpu, @pid, @tid, @comm: the event's context (@cpu -1: unknown; for a
 *            kernel event the task it happened in).
 * @addr, @call_site, @depth: a call's (ENTRY, EXIT); @name: ENTRY's function;
 *            @duration_ns, @unfinished: EXIT's.
 * @kind, @count, @stream, @until_ns, @what: a gap's (LOST; @what may be NULL).
 * @cls, @args, @nargs: EVENT's class and its @nargs field values.
 * The strings and @args stay valid until the next call of the
 * fmt_ctf_next_fn that filled the event.
 */
struct fmt_ctf_ev {
	enum fmt_ctf_type type;
	int kernel;
	uint32_t thread, thread_tid;
	uint64_t ns;
	int cpu;
	uint32_t pid, tid;
	const char *comm;
	uint64_t addr, call_site, duration_ns;
	uint32_t depth;
	int unfinished;
	const char *name;
	const char *kind, *what;
	uint64_t count, stream, until_ns;
	int cls;
	const uint64_t *args;
	unsigned nargs;
};

/** The trace's description, in the trace's environment and clock. */
struct fmt_ctf_trace {
	uint64_t created_ns, realtime_ns; /* the same instant; realtime_ns 0: unknown */
	const char *host, *kernel, *dir, *version;
};

/* fmt_ctf_report_fn - report error @msg (one line, without a newline). */
typedef void fmt_ctf_report_fn(void *arg, const char *msg);

/*
 * fmt_ctf_next_fn - the next event into *@ev.  Return: 1, 0 at the end, -1
 * after an error told with fmt_ctf_fail().
 */
typedef int fmt_ctf_next_fn(void *arg, struct fmt_ctf_ev *ev);

/**
 * fmt_ctf_open() - start a CTF trace in the directory @outdir: created
 * with mode 0700 (with its missing parents) or, if it exists, an empty
 * directory owned by the caller and not a symbolic link (lib/safefile.h);
 * the trace is written beside it and moved into place by fmt_ctf_close().
 * Errors go to @report(@arg, ...).  @outdir must stay valid until
 * fmt_ctf_close().  Return: the writer, or NULL (reported).
 */
struct fmt_ctf *fmt_ctf_open(const char *outdir, fmt_ctf_report_fn *report, void *arg);

/**
 * fmt_ctf_connect() - the babeltrace2 graph: the system's sink.ctf.fs and
 * a source of the events @next(@arg, ...) gives, for the trace @tr (kept
 * until fmt_ctf_close()).  Return: 0, or -1 (reported).
 */
int fmt_ctf_connect(struct fmt_ctf *w, const struct fmt_ctf_trace *tr, fmt_ctf_next_fn *next, void *arg);

/**
 * fmt_ctf_event_class() - declare an event class named @name (made valid
 * UTF-8) with @n uint64 fields named @fields (made TSDL identifiers, a
 * repeated one _2, _3 ...; @n at most FMT_CTF_MAX_FIELDS).  Only while
 * fmt_ctf_run() runs (from the fmt_ctf_next_fn).  Return: the class, for
 * struct fmt_ctf_ev @cls, or -1 (no memory).
 */
int fmt_ctf_event_class(struct fmt_ctf *w, const char *name, const char *const *fields, unsigned n);

/** fmt_ctf_fail() - the fmt_ctf_next_fn's error (printf @fmt): the first one is reported. */
void fmt_ctf_fail(struct fmt_ctf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** fmt_ctf_run() - write every event of the fmt_ctf_next_fn.  Return: 0, or -1 (reported). */
int fmt_ctf_run(struct fmt_ctf *w);

/**
 * fmt_ctf_close() - finish the trace and free @w: with @ok, the trace is
 * moved onto the output directory if it holds an event (else "nothing to
 * export" is reported); without, or on error, what was written is
 * removed.  *@events: the events written.  Return: 0, or 1 (reported).
 */
int fmt_ctf_close(struct fmt_ctf *w, int ok, uint64_t *events);

#endif

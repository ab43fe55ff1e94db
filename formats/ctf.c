/*
 * formats/ctf.c - the CTF writer (`ktrace export --format=ctf -o OUTDIR`):
 * events as a CTF 1.8 trace (https://diamon.org/ctf/v1.8.3/) that
 * babeltrace2 and Trace Compass read.
 *
 * The CTF itself (TSDL metadata, binary packets) is written by
 * libbabeltrace2: this file builds a babeltrace2 graph in process, a source
 * component class of our own ("ktrace", created with
 * bt_component_class_source_create(); its message iterator turns the
 * caller's events, pulled one at a time through its fmt_ctf_next_fn, into
 * babeltrace2 trace-IR messages) connected to the system's sink.ctf.fs
 * component (the `ctf` plugin, found with bt_plugin_find()), which is what
 * `babeltrace2 --output-format=ctf` uses.  Like the other writers it knows
 * nothing of traces (cli/cmd_export.c turns records into struct
 * fmt_ctf_ev); it is kept out of the fuzz build, which does not link
 * libbabeltrace2 (fuzz/Makefile).
 *
 * The trace IR (docs/READING.md, "export --format=ctf", says the same):
 *   - one trace class, one stream class, one clock class "monotonic"
 *     (1 GHz: CLOCK_MONOTONIC ns; its offset is the trace's realtime minus
 *     monotonic at creation, when known, so viewers show wall-clock time;
 *     babeltrace2 --clock-cycles prints the monotonic ns themselves);
 *   - one stream per application thread ("thread-TID") and one per CPU for
 *     the kernel records ("kernel-cpuN"); the stream file names are those;
 *   - an event common context {cpu_id (int32, -1 unknown), vpid, vtid
 *     (uint32), procname (string: the task's name made valid UTF-8 with
 *     fmt_utf8(), an invalid byte becomes the text \xNN)}: for a kernel
 *     event the task it happened in;
 *   - a function call is two events, as LTTng-UST's
 *     liblttng-ust-cyg-profile writes them, so that Trace Compass's
 *     call-stack view of LTTng-UST traces applies:
 *       lttng_ust_cyg_profile:func_entry {addr, call_site (hex uint64),
 *                                         depth (uint32), name (string)}
 *       lttng_ust_cyg_profile:func_exit  {addr, call_site, depth,
 *                                         duration_ns (uint64),
 *                                         unfinished (bool: the call had
 *                                         not returned when the trace
 *                                         ended)}
 *     and the trace environment says domain = "ust" (what Trace Compass
 *     checks to open a trace as LTTng-UST) and tracer_name = "ktrace";
 *   - any other event is an event of a class the caller declares
 *     (fmt_ctf_event_class(): a name and uint64 fields, their names made
 *     TSDL identifiers: other characters become '_', a repeated name gets
 *     _2, _3...).  Event classes are created during the iteration
 *     (babeltrace2 allows adding event classes to a frozen stream class;
 *     sink.ctf.fs writes the metadata when it finishes);
 *   - a gap (records lost, overwritten, dropped, corrupt) is an event
 *     ktrace:lost {kind (string), count, stream, until_ns (uint64), what
 *     (string)}.  Not CTF's discarded-events counter: sink.ctf.fs can only
 *     write those between packets whose begin/end times frame the loss
 *     (babeltrace2-sink.ctf.fs(7)), which per-thread records merged from
 *     many ktrace streams do not give.
 *
 * babeltrace2 requires the messages of an iterator in time order: the
 * caller's events must come in that order.
 *
 * Memory: one event class per distinct event, one stream per thread and
 * CPU.  sink.ctf.fs keeps a file open per stream (and cuts packets of
 * 4 MiB).  The output directory is created or checked with lib/safefile.c.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "formats/formats.h"
#include "lib/safefile.h"

struct ctf_stream {
	bt_stream *s;
	int begun;
};

/*
 * The output directory.  sink.ctf.fs with assume-single-trace creates the
 * trace directory itself (g_mkdir_with_parents(), mode 0755) and refuses one
 * that exists, so it writes into "trace" inside a staging directory of
 * ours, ".OUTDIR.<16 hex digits>" (mode 0700, random name from
 * getrandom(2)) next to OUTDIR; when it is done the files are made 0600,
 * the directory 0700, and it is renamed onto OUTDIR, which ksf_dir_open()
 * created or checked beforehand (ours, not a link, then found empty):
 * rename(2) replaces an empty directory.  On failure the staging directory
 * is removed.
 */
struct outdir {
	int parent, stage;              /* O_PATH parent of OUTDIR; the staging directory */
	char buf[4096], *last;          /* ksf_parent_open()'s scratch; OUTDIR's last component */
	char stage_name[300];           /* ".LAST.<hex>" */
	char sink_path[4400];           /* what sink.ctf.fs gets: DIRNAME/.LAST.<hex>/trace */
};

struct fmt_ctf {
	const char *path; /* OUTDIR as given */
	struct outdir od;
	fmt_ctf_report_fn *report;
	void *report_arg;
	const struct fmt_ctf_trace *tr;
	fmt_ctf_next_fn *next;
	void *next_arg;

	/* the graph */
	const bt_plugin *plugin;
	bt_message_iterator_class *itc;
	bt_component_class_source *src_cls;
	bt_graph *g;
	bt_value *params;

	/* the trace IR */
	bt_self_component *comp;
	bt_trace_class *tc;
	bt_stream_class *sc;
	bt_clock_class *cc;
	bt_trace *trace;
	bt_event_class *ec_entry, *ec_exit, *ec_lost;
	bt_event_class **ecs; /* the classes of fmt_ctf_event_class() */
	size_t necs, capecs;
	/* streams: application threads by ordinal; kernel CPUs by cpu + 1 */
	struct ctf_stream *th, *kc;
	size_t nth, nkc;

	/* the iteration */
	struct fmt_ctf_ev ev;
	int have_ev, evs_done;
	size_t ending; /* stream end messages: next stream to end (th then kc) */
	int done;

	uint64_t events;
	char err[512]; /* our own or the caller's error, if any */
};

/* ---- helpers -------------------------------------------------------------------- */

/* Report @fmt through the caller's report function. */
static void report(struct fmt_ctf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(struct fmt_ctf *w, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->report(w->report_arg, msg);
}

void fmt_ctf_fail(struct fmt_ctf *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

/* @s as a TSDL identifier ([A-Za-z_][A-Za-z0-9_]*) into @buf. */
static void ident(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && *s != '_' && i + 1 < len)
		buf[i++] = '_';
	for (; *s && i + 1 < len; s++)
		buf[i++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '_')
				   ? *s
				   : '_';
	buf[i] = 0;
}

static bt_field_class *u64_fc(struct fmt_ctf *w, int hex)
{
	bt_field_class *fc = bt_field_class_integer_unsigned_create(w->tc);

	if (fc && hex)
		bt_field_class_integer_set_preferred_display_base(
			fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
	return fc;
}

/* Append member @name of class @fc (its reference is dropped) to @st. */
static int add_member(bt_field_class *st, const char *name, bt_field_class *fc)
{
	int rc;

	if (!fc)
		return -1;
	rc = bt_field_class_structure_append_member(st, name, fc) ==
			     BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK
		     ? 0
		     : -1;
	bt_field_class_put_ref(fc);
	return rc;
}

enum { FC_U64, FC_HEX, FC_U32, FC_S32, FC_STR, FC_BOOL };

static bt_field_class *make_fc(struct fmt_ctf *w, int type)
{
	bt_field_class *fc = NULL;

	switch (type) {
	case FC_U64:
		return u64_fc(w, 0);
	case FC_HEX:
		return u64_fc(w, 1);
	case FC_U32:
		fc = bt_field_class_integer_unsigned_create(w->tc);
		if (fc)
			bt_field_class_integer_set_field_value_range(fc, 32);
		return fc;
	case FC_S32:
		fc = bt_field_class_integer_signed_create(w->tc);
		if (fc)
			bt_field_class_integer_set_field_value_range(fc, 32);
		return fc;
	case FC_STR:
		return bt_field_class_string_create(w->tc);
	default:
		return bt_field_class_bool_create(w->tc);
	}
}

struct member {
	const char *name;
	int type;
};

/* A structure field class of @n members. */
static bt_field_class *make_struct(struct fmt_ctf *w, const struct member *m, size_t n)
{
	bt_field_class *st = bt_field_class_structure_create(w->tc);

	if (!st)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (add_member(st, m[i].name, make_fc(w, m[i].type)) < 0) {
			bt_field_class_put_ref(st);
			return NULL;
		}
	return st;
}

/* An event class named @name with payload @payload (reference dropped). */
static bt_event_class *make_ec(struct fmt_ctf *w, const char *name, bt_field_class *payload)
{
	bt_event_class *ec = payload ? bt_event_class_create(w->sc) : NULL;

	if (ec && (bt_event_class_set_name(ec, name) != BT_EVENT_CLASS_SET_NAME_STATUS_OK ||
		   bt_event_class_set_payload_field_class(ec, payload) !=
			   BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK)) {
		bt_event_class_put_ref(ec);
		ec = NULL;
	}
	if (payload)
		bt_field_class_put_ref(payload);
	return ec;
}

/* ---- the trace IR ------------------------------------------------------------- */

/* The clock class: CLOCK_MONOTONIC ns, offset to the Unix epoch when known. */
static int make_clock(struct fmt_ctf *w)
{
	const struct fmt_ctf_trace *tr = w->tr;

	w->cc = bt_clock_class_create(w->comp);
	if (!w->cc)
		return -1;
	bt_clock_class_set_name(w->cc, "monotonic");
	bt_clock_class_set_description(w->cc, "CLOCK_MONOTONIC");
	bt_clock_class_set_frequency(w->cc, 1000000000u);
	if (tr->realtime_ns > tr->created_ns) {
		uint64_t off = tr->realtime_ns - tr->created_ns;

		bt_clock_class_set_offset(w->cc, (int64_t)(off / 1000000000u), off % 1000000000u);
		bt_clock_class_set_origin_is_unix_epoch(w->cc, BT_TRUE);
	} else {
		bt_clock_class_set_origin_is_unix_epoch(w->cc, BT_FALSE);
	}
	return 0;
}

/* The stream class "ktrace" on the clock, with the event common context. */
static int make_stream_class(struct fmt_ctf *w)
{
	static const struct member ctx[] = { { "cpu_id", FC_S32 },
					     { "vpid", FC_U32 },
					     { "vtid", FC_U32 },
					     { "procname", FC_STR } };
	bt_field_class *cctx;
	int rc = 0;

	w->sc = bt_stream_class_create(w->tc);
	if (!w->sc || bt_stream_class_set_default_clock_class(w->sc, w->cc) !=
			      BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK)
		return -1;
	bt_stream_class_set_name(w->sc, "ktrace");
	cctx = make_struct(w, ctx, 4);
	if (!cctx)
		return -1;
	if (bt_stream_class_set_event_common_context_field_class(w->sc, cctx) !=
	    BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK)
		rc = -1;
	bt_field_class_put_ref(cctx);
	return rc;
}

static int make_classes(struct fmt_ctf *w)
{
	static const struct member entry[] = {
		{ "addr", FC_HEX }, { "call_site", FC_HEX }, { "depth", FC_U32 }, { "name", FC_STR }
	};
	static const struct member exitm[] = { { "addr", FC_HEX },
					       { "call_site", FC_HEX },
					       { "depth", FC_U32 },
					       { "duration_ns", FC_U64 },
					       { "unfinished", FC_BOOL } };
	static const struct member lost[] = { { "kind", FC_STR },
					      { "count", FC_U64 },
					      { "stream", FC_U64 },
					      { "until_ns", FC_U64 },
					      { "what", FC_STR } };

	w->tc = bt_trace_class_create(w->comp);
	if (!w->tc || make_clock(w) < 0 || make_stream_class(w) < 0)
		return -1;
	w->ec_entry = make_ec(w, "lttng_ust_cyg_profile:func_entry", make_struct(w, entry, 4));
	w->ec_exit = make_ec(w, "lttng_ust_cyg_profile:func_exit", make_struct(w, exitm, 5));
	w->ec_lost = make_ec(w, "ktrace:lost", make_struct(w, lost, 5));
	return w->ec_entry && w->ec_exit && w->ec_lost ? 0 : -1;
}

/* Field @a's name in @fname: @names[@a] as a TSDL identifier, a repeated one with _2, _3 ... */
static void field_name(const char *const *names, unsigned a, char fname[][80])
{
	ident(names[a], fname[a], 64);
	for (unsigned b = 0, dup = 1; b < a; b++)
		if (!strcmp(fname[a], fname[b])) {
			char base[64];

			snprintf(base, sizeof(base), "%.60s", fname[a]);
			snprintf(fname[a], sizeof(fname[a]), "%s_%u", base, ++dup);
			b = (unsigned)-1; /* check again from the first */
		}
}

int fmt_ctf_event_class(struct fmt_ctf *w, const char *name, const char *const *fields, unsigned n)
{
	char fname[FMT_CTF_MAX_FIELDS][80], ubuf[256];
	bt_field_class *st;
	bt_event_class *ec;

	if (n > FMT_CTF_MAX_FIELDS)
		return -1;
	if (w->necs == w->capecs) {
		size_t cap = w->capecs ? 2 * w->capecs : 64;
		bt_event_class **v = realloc(w->ecs, cap * sizeof(*v));

		if (!v)
			return -1;
		w->ecs = v;
		w->capecs = cap;
	}
	st = bt_field_class_structure_create(w->tc);
	if (!st)
		return -1;
	for (unsigned a = 0; a < n; a++) {
		field_name(fields, a, fname);
		if (add_member(st, fname[a], u64_fc(w, 0)) < 0) {
			bt_field_class_put_ref(st);
			return -1;
		}
	}
	ec = make_ec(w, fmt_utf8(name, ubuf, sizeof(ubuf)), st);
	if (!ec)
		return -1;
	w->ecs[w->necs] = ec;
	return (int)w->necs++;
}

/* Slot @i of the stream table *@v (grown as needed), or NULL. */
static struct ctf_stream *slot(struct ctf_stream **v, size_t *n, size_t i)
{
	if (i >= *n) {
		size_t cap = *n ? *n : 16;
		struct ctf_stream *p;

		while (cap <= i)
			cap *= 2;
		p = realloc(*v, cap * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + *n, 0, (cap - *n) * sizeof(*p));
		*v = p;
		*n = cap;
	}
	return &(*v)[i];
}

/* The stream of event @e: its application thread's or its kernel CPU's. */
static struct ctf_stream *stream_of(struct fmt_ctf *w, const struct fmt_ctf_ev *e)
{
	int cpu = e->cpu < 0 ? -1 : e->cpu;
	struct ctf_stream *s = !e->kernel ? slot(&w->th, &w->nth, e->thread)
					  : slot(&w->kc, &w->nkc, (size_t)(cpu + 1));
	char name[64];

	if (!s || s->s)
		return s;
	s->s = bt_stream_create(w->sc, w->trace);
	if (!s->s)
		return NULL;
	if (!e->kernel)
		snprintf(name, sizeof(name), "thread-%" PRIu32, e->thread_tid);
	else if (cpu >= 0)
		snprintf(name, sizeof(name), "kernel-cpu%d", cpu);
	else
		snprintf(name, sizeof(name), "kernel-cpu-unknown");
	bt_stream_set_name(s->s, name);
	return s;
}

/* ---- messages ------------------------------------------------------------------ */

static void set_u(bt_field *st, uint64_t i, uint64_t v)
{
	bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(st, i), v);
}

static int set_s(bt_field *st, uint64_t i, const char *s)
{
	return bt_field_string_set_value(bt_field_structure_borrow_member_field_by_index(st, i), s) ==
			       BT_FIELD_STRING_SET_VALUE_STATUS_OK
		       ? 0
		       : -1;
}

/*
 * A message for event @e of class @ec at its time on its stream (after the
 * stream's beginning message if not sent yet: needs 2 slots then) into
 * @msgs[*@count]; the payload structure into *@payload.  Return: 1 made,
 * 0 no room (the stream beginning may have been sent), -1 error.
 */
static int event_msg(struct fmt_ctf *w, bt_self_message_iterator *it, const struct fmt_ctf_ev *e,
		     bt_event_class *ec, bt_message_array_const msgs, uint64_t cap, uint64_t *count,
		     bt_field **payload)
{
	struct ctf_stream *s = stream_of(w, e);
	char ubuf[256];
	bt_message *m;
	bt_event *ev;
	bt_field *ctx;

	if (!s || !ec)
		return -1;
	if (!s->begun) {
		if (*count >= cap)
			return 0;
		m = bt_message_stream_beginning_create(it, s->s);
		if (!m)
			return -1;
		msgs[(*count)++] = m;
		s->begun = 1;
	}
	if (*count >= cap)
		return 0;
	m = bt_message_event_create_with_default_clock_snapshot(it, ec, s->s, e->ns);
	if (!m)
		return -1;
	ev = bt_message_event_borrow_event(m);
	ctx = bt_event_borrow_common_context_field(ev);
	bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 0), e->cpu);
	set_u(ctx, 1, e->pid);
	set_u(ctx, 2, e->tid);
	if (set_s(ctx, 3, fmt_utf8(e->comm, ubuf, sizeof(ubuf))) < 0) {
		bt_message_put_ref(m);
		return -1;
	}
	*payload = bt_event_borrow_payload_field(ev);
	msgs[(*count)++] = m;
	w->events++;
	return 1;
}

/* The event class of @e. */
static bt_event_class *class_of(struct fmt_ctf *w, const struct fmt_ctf_ev *e)
{
	switch (e->type) {
	case FMT_CTF_ENTRY:
		return w->ec_entry;
	case FMT_CTF_EXIT:
		return w->ec_exit;
	case FMT_CTF_LOST:
		return w->ec_lost;
	default:
		return e->cls >= 0 && (size_t)e->cls < w->necs ? w->ecs[e->cls] : NULL;
	}
}

/* Event @e as a message.  Return as event_msg(). */
static int emit(struct fmt_ctf *w, bt_self_message_iterator *it, const struct fmt_ctf_ev *e,
		bt_message_array_const msgs, uint64_t cap, uint64_t *count)
{
	char ubuf[512];
	bt_field *p;
	int rc = event_msg(w, it, e, class_of(w, e), msgs, cap, count, &p);

	if (rc <= 0)
		return rc;
	switch (e->type) {
	case FMT_CTF_ENTRY:
	case FMT_CTF_EXIT:
		set_u(p, 0, e->addr);
		set_u(p, 1, e->call_site);
		set_u(p, 2, e->depth);
		if (e->type == FMT_CTF_ENTRY)
			return set_s(p, 3, fmt_utf8(e->name, ubuf, sizeof(ubuf))) < 0 ? -1 : 1;
		set_u(p, 3, e->duration_ns);
		bt_field_bool_set_value(bt_field_structure_borrow_member_field_by_index(p, 4),
					e->unfinished ? BT_TRUE : BT_FALSE);
		return 1;
	case FMT_CTF_LOST:
		set_s(p, 0, e->kind);
		set_u(p, 1, e->count);
		set_u(p, 2, e->stream);
		set_u(p, 3, e->until_ns);
		return set_s(p, 4, e->what ? fmt_utf8(e->what, ubuf, 256) : "") < 0 ? -1 : 1;
	default:
		for (unsigned i = 0; i < e->nargs; i++)
			set_u(p, i, e->args[i]);
		return 1;
	}
}

/* ---- the source component ---------------------------------------------------------- */

/* Stream end messages for every stream begun; 1 when all are out. */
static int end_streams(struct fmt_ctf *w, bt_self_message_iterator *it, bt_message_array_const msgs,
		       uint64_t cap, uint64_t *count)
{
	while (*count < cap) {
		struct ctf_stream *s;
		bt_message *m;

		if (w->ending < w->nth)
			s = &w->th[w->ending];
		else if (w->ending < w->nth + w->nkc)
			s = &w->kc[w->ending - w->nth];
		else
			return 1;
		w->ending++;
		if (!s->s || !s->begun)
			continue;
		m = bt_message_stream_end_create(it, s->s);
		if (!m)
			return -1;
		msgs[(*count)++] = m;
	}
	return 0;
}
/*
 * The next messages: the caller's events in its order (one kept pending
 * while there is no room for it), then the stream ends.
 */
static bt_message_iterator_class_next_method_status
src_next(bt_self_message_iterator *it, bt_message_array_const msgs, uint64_t cap, uint64_t *count)
{
	struct fmt_ctf *w = bt_self_message_iterator_get_data(it);
	int rc;

	*count = 0;
	if (w->done)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
	while (*count < cap) {
		if (!w->have_ev && !w->evs_done) {
			rc = w->next(w->next_arg, &w->ev);
			if (rc < 0)
				goto fail; /* the caller said why (fmt_ctf_fail()) */
			w->have_ev = rc > 0;
			w->evs_done = rc == 0;
		}
		if (w->evs_done) {
			rc = end_streams(w, it, msgs, cap, count);
			if (rc < 0)
				goto nomem;
			if (rc > 0 && !*count) {
				w->done = 1;
				return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
			}
			break;
		}
		rc = emit(w, it, &w->ev, msgs, cap, count);
		if (rc < 0)
			goto nomem;
		if (rc == 0)
			break; /* no room left */
		w->have_ev = 0;
	}
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
nomem:
	fmt_ctf_fail(w, "making a babeltrace2 event: out of memory");
fail:
	for (uint64_t i = 0; i < *count; i++)
		bt_message_put_ref(msgs[i]);
	*count = 0;
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
}

static bt_message_iterator_class_initialize_method_status
src_iter_init(bt_self_message_iterator *it, bt_self_message_iterator_configuration *conf,
	      bt_self_component_port_output *port)
{
	struct fmt_ctf *w = bt_self_component_get_data(bt_self_message_iterator_borrow_component(it));
	const struct fmt_ctf_trace *tr = w->tr;
	char ubuf[1024];

	w->trace = bt_trace_create(w->tc);
	if (!w->trace)
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	bt_trace_set_name(w->trace, "ktrace");
	/* "domain": what Trace Compass looks at to open a trace as LTTng-UST */
	bt_trace_set_environment_entry_string(w->trace, "domain", "ust");
	bt_trace_set_environment_entry_string(w->trace, "tracer_name", "ktrace");
	bt_trace_set_environment_entry_string(w->trace, "tracer_version", tr->version);
	bt_trace_set_environment_entry_string(w->trace, "ktrace_clock", "CLOCK_MONOTONIC");
	bt_trace_set_environment_entry_string(w->trace, "hostname", fmt_utf8(tr->host, ubuf, sizeof(ubuf)));
	bt_trace_set_environment_entry_string(w->trace, "kernel_release",
					      fmt_utf8(tr->kernel, ubuf, sizeof(ubuf)));
	bt_trace_set_environment_entry_string(w->trace, "ktrace_dir",
					      fmt_utf8(tr->dir, ubuf, sizeof(ubuf)));
	bt_self_message_iterator_set_data(it, w);
	return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_initialize_method_status
src_init(bt_self_component_source *self, bt_self_component_source_configuration *conf,
	 const bt_value *params, void *data)
{
	struct fmt_ctf *w = data;

	w->comp = bt_self_component_source_as_self_component(self);
	bt_self_component_set_data(w->comp, w);
	if (make_classes(w) < 0)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	if (bt_self_component_source_add_output_port(self, "out", NULL, NULL) !=
	    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

/* ---- the graph ---------------------------------------------------------------------- */

/* Report libbabeltrace2's error of this thread (its causes, innermost first). */
static void bt_report(struct fmt_ctf *w, const char *what)
{
	const bt_error *e = bt_current_thread_take_error();
	uint64_t n = e ? bt_error_get_cause_count(e) : 0;

	if (!n) {
		report(w, "%s failed (libbabeltrace2 gave no reason)", what);
	} else {
		for (uint64_t i = n; i-- > 0;) {
			const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
			char line[512], *nl;

			snprintf(line, sizeof(line), "%s", bt_error_cause_get_message(c));
			while ((nl = strchr(line, '\n')))
				*nl = ' ';
			report(w, "%s: %s: %s", what, bt_error_cause_get_module_name(c), line);
		}
	}
	if (e)
		bt_error_release(e);
}

static int out_dir(struct fmt_ctf *w, struct outdir *o, const char *path)
{
	char msg[512], dirname[3800];
	const char *last, *slash;
	int fd = ksf_dir_open(path, KSF_CREATE, msg, sizeof(msg)), dfd;
	DIR *d;
	struct dirent *de;
	uint64_t rnd = 0;
	size_t dl;

	o->parent = o->stage = -1;
	if (fd < 0) {
		report(w, "%s", msg);
		return -1;
	}
	dfd = dup(fd);
	close(fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		report(w, "%s: %s", path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			report(w, "%s: not empty (holds '%s'): give a new or empty directory", path,
				  de->d_name);
			closedir(d);
			return -1;
		}
	closedir(d);
	o->parent = ksf_parent_open(path, o->buf, &last, msg, sizeof(msg));
	if (o->parent < 0) {
		report(w, "%s", msg);
		return -1;
	}
	o->last = (char *)last;
	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		report(w, "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(o->stage_name, sizeof(o->stage_name), ".%.200s.%016" PRIx64, last, rnd);
	if (mkdirat(o->parent, o->stage_name, 0700) < 0 ||
	    (o->stage = openat(o->parent, o->stage_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		report(w, "%s: creating the staging directory %s: %s", path, o->stage_name,
			  strerror(errno));
		return -1;
	}
	/* the path of OUTDIR's parent as given */
	dl = strlen(path);
	while (dl > 1 && path[dl - 1] == '/')
		dl--;
	snprintf(dirname, sizeof(dirname), "%.*s", (int)dl, path);
	slash = strrchr(dirname, '/');
	if (!slash)
		snprintf(dirname, sizeof(dirname), ".");
	else if (slash == dirname)
		dirname[1] = 0;
	else
		dirname[slash - dirname] = 0;
	snprintf(o->sink_path, sizeof(o->sink_path), "%.3800s/%.300s/trace", dirname, o->stage_name);
	return 0;
}

/* Remove the staging directory and what sink.ctf.fs put in it (flat files). */
static void out_dir_drop(struct outdir *o)
{
	int fd;
	DIR *d;
	struct dirent *de;

	if (o->stage < 0)
		goto parent;
	fd = openat(o->stage, "trace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (d = fdopendir(fd))) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(fd, de->d_name, 0);
		closedir(d);
	} else if (fd >= 0) {
		close(fd);
	}
	unlinkat(o->stage, "trace", AT_REMOVEDIR);
	close(o->stage);
	o->stage = -1;
	unlinkat(o->parent, o->stage_name, AT_REMOVEDIR);
parent:
	if (o->parent >= 0)
		close(o->parent);
	o->parent = -1;
}

/* Modes 0600/0700, then rename the trace onto OUTDIR.  Return: 0 or -1 (reported). */
static int out_dir_commit(struct fmt_ctf *w, struct outdir *o, const char *path)
{
	int fd = openat(o->stage, "trace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		report(w, "%s: sink.ctf.fs wrote no trace (%s)", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			fchmodat(fd, de->d_name, 0600, 0);
	fchmod(fd, 0700);
	closedir(d);
	if (renameat(o->stage, "trace", o->parent, o->last) < 0) {
		report(w, "%s: moving the trace into place: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the writer ---------------------------------------------------------------- */

struct fmt_ctf *fmt_ctf_open(const char *outdir, fmt_ctf_report_fn *fn, void *arg)
{
	struct fmt_ctf *w = calloc(1, sizeof(*w));

	if (!w) {
		fn(arg, "out of memory");
		return NULL;
	}
	w->path = outdir;
	w->report = fn;
	w->report_arg = arg;
	if (out_dir(w, &w->od, outdir) < 0) {
		out_dir_drop(&w->od);
		free(w);
		return NULL;
	}
	return w;
}

/* sink.ctf.fs's component class, from the system's 'ctf' plugin.  Return: 0, -1 reported. */
static int find_sink(struct fmt_ctf *w, const bt_component_class_sink **sink_cls)
{
	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &w->plugin) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    !(*sink_cls = bt_plugin_borrow_sink_component_class_by_name_const(w->plugin, "fs"))) {
		report(w, "babeltrace2's 'ctf' plugin (sink.ctf.fs) not found: install "
			  "libbabeltrace2-0 (Debian) or set BABELTRACE_PLUGIN_PATH");
		return -1;
	}
	return 0;
}

/* Our source component class, sink.ctf.fs's parameters, an empty graph.  Return: 0, -1 reported. */
static int make_graph(struct fmt_ctf *w)
{
	w->itc = bt_message_iterator_class_create(src_next);
	w->src_cls = w->itc ? bt_component_class_source_create("ktrace", w->itc) : NULL;
	w->params = bt_value_map_create();
	w->g = bt_graph_create(0);
	if (!w->src_cls || !w->params || !w->g ||
	    bt_message_iterator_class_set_initialize_method(w->itc, src_iter_init) !=
		    BT_MESSAGE_ITERATOR_CLASS_SET_METHOD_STATUS_OK ||
	    bt_component_class_source_set_initialize_method(w->src_cls, src_init) !=
		    BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
	    bt_value_map_insert_string_entry(w->params, "path", w->od.sink_path) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
	    bt_value_map_insert_bool_entry(w->params, "assume-single-trace", BT_TRUE) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
	    bt_value_map_insert_bool_entry(w->params, "quiet", BT_TRUE) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		report(w, "out of memory");
		return -1;
	}
	return 0;
}

/* The source and sink.ctf.fs in the graph, connected.  Return: 0, -1 reported. */
static int add_components(struct fmt_ctf *w, const bt_component_class_sink *sink_cls)
{
	const bt_component_source *src;
	const bt_component_sink *sink;

	if (bt_graph_add_source_component_with_initialize_method_data(
		    w->g, w->src_cls, "ktrace", NULL, w, BT_LOGGING_LEVEL_ERROR, &src) !=
	    BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		bt_report(w, "creating the source component");
		return -1;
	}
	if (bt_graph_add_sink_component(w->g, sink_cls, "ctf-fs", w->params, BT_LOGGING_LEVEL_ERROR,
					&sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		bt_report(w, "creating sink.ctf.fs");
		return -1;
	}
	if (bt_graph_connect_ports(w->g, bt_component_source_borrow_output_port_by_index_const(src, 0),
				   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
				   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		bt_report(w, "connecting the source to sink.ctf.fs");
		return -1;
	}
	return 0;
}

int fmt_ctf_connect(struct fmt_ctf *w, const struct fmt_ctf_trace *tr, fmt_ctf_next_fn *next, void *arg)
{
	const bt_component_class_sink *sink_cls;

	w->tr = tr;
	w->next = next;
	w->next_arg = arg;
	if (find_sink(w, &sink_cls) < 0 || make_graph(w) < 0 || add_components(w, sink_cls) < 0)
		return -1;
	return 0;
}

int fmt_ctf_run(struct fmt_ctf *w)
{
	bt_graph_run_status st;

	do
		st = bt_graph_run(w->g);
	while (st == BT_GRAPH_RUN_STATUS_AGAIN);
	if (st == BT_GRAPH_RUN_STATUS_OK)
		return 0;
	if (w->err[0]) {
		bt_current_thread_clear_error();
		report(w, "%s: %s", w->path, w->err);
	} else {
		bt_report(w, w->path);
	}
	return -1;
}

/* Drop every reference of the trace IR and the graph's classes. */
static void put_refs(struct fmt_ctf *w)
{
	for (size_t i = 0; i < w->nth; i++)
		bt_stream_put_ref(w->th[i].s);
	for (size_t i = 0; i < w->nkc; i++)
		bt_stream_put_ref(w->kc[i].s);
	for (size_t i = 0; i < w->necs; i++)
		bt_event_class_put_ref(w->ecs[i]);
	free(w->th);
	free(w->kc);
	free(w->ecs);
	bt_event_class_put_ref(w->ec_entry);
	bt_event_class_put_ref(w->ec_exit);
	bt_event_class_put_ref(w->ec_lost);
	bt_stream_class_put_ref(w->sc);
	bt_clock_class_put_ref(w->cc);
	bt_trace_class_put_ref(w->tc);
	bt_value_put_ref(w->params);
	bt_component_class_source_put_ref(w->src_cls);
	bt_message_iterator_class_put_ref(w->itc);
	bt_plugin_put_ref(w->plugin);
}

int fmt_ctf_close(struct fmt_ctf *w, int ok, uint64_t *events)
{
	int rc = ok ? 0 : 1;

	/* the graph first: sink.ctf.fs writes the metadata file when it is destroyed */
	bt_graph_put_ref(w->g);
	bt_trace_put_ref(w->trace);
	w->trace = NULL;
	if (!rc && !w->events) {
		report(w, "%s: nothing to export (no records selected): no CTF trace written", w->path);
		rc = 1;
	}
	if (!rc && out_dir_commit(w, &w->od, w->path) < 0)
		rc = 1;
	out_dir_drop(&w->od);
	put_refs(w);
	*events = w->events;
	free(w);
	return rc;
}

/*
 * cli/export_ctf.c - `ktrace export --format=ctf -o OUTDIR`: a trace as a
 * CTF 1.8 trace (https://diamon.org/ctf/v1.8.3/) that babeltrace2 and
 * Trace Compass read.
 *
 * The CTF itself (TSDL metadata, binary packets) is written by
 * libbabeltrace2: this file builds a babeltrace2 graph in process, a source
 * component class of our own ("ktrace", created with
 * bt_component_class_source_create(); its message iterator turns ktrace
 * records into babeltrace2 trace-IR messages) connected to the system's
 * sink.ctf.fs component (the `ctf` plugin, found with bt_plugin_find()),
 * which is what `babeltrace2 --output-format=ctf` uses.
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
 *   - a function call (CALL record) is two events, as LTTng-UST's
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
 *   - a static or kernel event is an event of a class per distinct (record
 *     class, id, number of arguments), named as ktrace names it
 *     (ktr_rec_name()), its payload the arguments (ktr_rec_args()) as
 *     uint64 fields (names made TSDL identifiers: other characters become
 *     '_', a repeated name gets _2, _3...).  Event classes are created when
 *     first seen, during the iteration (babeltrace2 allows adding event
 *     classes to a frozen stream class; sink.ctf.fs writes the metadata
 *     when it finishes);
 *   - a gap (records lost, overwritten, dropped, corrupt) is an event
 *     ktrace:lost {kind (string), count, stream, until_ns (uint64), what
 *     (string)}.  Not CTF's discarded-events counter: sink.ctf.fs can only
 *     write those between packets whose begin/end times frame the loss
 *     (babeltrace2-sink.ctf.fs(7)), which per-thread records merged from
 *     many ktrace streams do not give.
 *
 * Order: babeltrace2 requires the messages of an iterator in time order.
 * CALL records come when a call returns, with its entry time: the first
 * pass over the trace sorts the calls by entry time (ktr_callsort_*(),
 * bounded memory, temporary files beyond 64 MiB); the second merges three
 * ordered sources: the other records (ktr_next() skipping calls), the
 * sorted calls' entries, and a heap of the exits of the calls entered so
 * far (at most the open calls).  At one instant: an exit at the same or a
 * greater depth than a call entering, then entries, then records, then the
 * other exits.
 *
 * Memory: the sorter (64 MiB), the heap of open calls, one event class per
 * distinct event, one stream per thread and CPU.  sink.ctf.fs keeps a file
 * open per stream (and cuts packets of 4 MiB).
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

#include "cli/cli.h"
#include "cli/export_ctf.h"
#include "cli/select.h"
#include "analysis/analysis.h"
#include "formats/formats.h"
#include "lib/safefile.h"
#include "reader/reader.h"

#define CMD "export"

struct ctf_stream {
	bt_stream *s;
	int begun;
};

struct ctf {
	struct ktr_trace *t;
	struct ka_names *names;
	const struct cli_select *sel;
	int no_kernel;
	struct ktr_callsort *cs;

	bt_self_component *comp;
	bt_trace_class *tc;
	bt_stream_class *sc;
	bt_clock_class *cc;
	bt_trace *trace;
	bt_event_class *ec_entry, *ec_exit, *ec_lost;
	/* the dynamic event classes: (record class, id, argument count) -> index in ecs */
	struct ka_map64 ec_of;
	bt_event_class **ecs;
	size_t necs, capecs;
	/* streams: application threads by callsort thread ordinal; kernel CPUs by cpu + 1 */
	struct ctf_stream *th, *kc;
	size_t nth, nkc;

	/* the merge */
	struct ka_progress *prog;
	struct ktr_rec rec;
	int have_rec, recs_done;
	struct ktr_callent call;
	int have_call, calls_done;
	struct ktr_exits exits; /* the calls entered, their exits still to come */
	size_t ending; /* stream end messages: next stream to end (th then kc) */
	int done;

	uint64_t events;
	char err[512]; /* our own error, if any */
};

/* ---- helpers -------------------------------------------------------------------- */

static void ctf_fail(struct ctf *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ctf_fail(struct ctf *x, const char *fmt, ...)
{
	va_list ap;

	if (x->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(x->err, sizeof(x->err), fmt, ap);
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

static bt_field_class *u64_fc(struct ctf *x, int hex)
{
	bt_field_class *fc = bt_field_class_integer_unsigned_create(x->tc);

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

static bt_field_class *make_fc(struct ctf *x, int type)
{
	bt_field_class *fc = NULL;

	switch (type) {
	case FC_U64:
		return u64_fc(x, 0);
	case FC_HEX:
		return u64_fc(x, 1);
	case FC_U32:
		fc = bt_field_class_integer_unsigned_create(x->tc);
		if (fc)
			bt_field_class_integer_set_field_value_range(fc, 32);
		return fc;
	case FC_S32:
		fc = bt_field_class_integer_signed_create(x->tc);
		if (fc)
			bt_field_class_integer_set_field_value_range(fc, 32);
		return fc;
	case FC_STR:
		return bt_field_class_string_create(x->tc);
	default:
		return bt_field_class_bool_create(x->tc);
	}
}

struct member {
	const char *name;
	int type;
};

/* A structure field class of @n members. */
static bt_field_class *make_struct(struct ctf *x, const struct member *m, size_t n)
{
	bt_field_class *st = bt_field_class_structure_create(x->tc);

	if (!st)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (add_member(st, m[i].name, make_fc(x, m[i].type)) < 0) {
			bt_field_class_put_ref(st);
			return NULL;
		}
	return st;
}

/* An event class named @name with payload @payload (reference dropped). */
static bt_event_class *make_ec(struct ctf *x, const char *name, bt_field_class *payload)
{
	bt_event_class *ec = payload ? bt_event_class_create(x->sc) : NULL;

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

static int make_classes(struct ctf *x)
{
	static const struct member ctx[] = { { "cpu_id", FC_S32 },
					     { "vpid", FC_U32 },
					     { "vtid", FC_U32 },
					     { "procname", FC_STR } };
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
	const struct ktr_info *in = ktr_info(x->t);
	bt_field_class *cctx;

	x->tc = bt_trace_class_create(x->comp);
	x->cc = bt_clock_class_create(x->comp);
	if (!x->tc || !x->cc)
		return -1;
	bt_clock_class_set_name(x->cc, "monotonic");
	bt_clock_class_set_description(x->cc, "CLOCK_MONOTONIC");
	bt_clock_class_set_frequency(x->cc, 1000000000u);
	if (in->realtime_ns > in->created_ns) {
		uint64_t off = in->realtime_ns - in->created_ns;

		bt_clock_class_set_offset(x->cc, (int64_t)(off / 1000000000u), off % 1000000000u);
		bt_clock_class_set_origin_is_unix_epoch(x->cc, BT_TRUE);
	} else {
		bt_clock_class_set_origin_is_unix_epoch(x->cc, BT_FALSE);
	}
	x->sc = bt_stream_class_create(x->tc);
	if (!x->sc || bt_stream_class_set_default_clock_class(x->sc, x->cc) !=
			      BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK)
		return -1;
	bt_stream_class_set_name(x->sc, "ktrace");
	cctx = make_struct(x, ctx, 4);
	if (!cctx)
		return -1;
	if (bt_stream_class_set_event_common_context_field_class(x->sc, cctx) !=
	    BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK) {
		bt_field_class_put_ref(cctx);
		return -1;
	}
	bt_field_class_put_ref(cctx);
	x->ec_entry = make_ec(x, "lttng_ust_cyg_profile:func_entry", make_struct(x, entry, 4));
	x->ec_exit = make_ec(x, "lttng_ust_cyg_profile:func_exit", make_struct(x, exitm, 5));
	x->ec_lost = make_ec(x, "ktrace:lost", make_struct(x, lost, 5));
	return x->ec_entry && x->ec_exit && x->ec_lost ? 0 : -1;
}

/* The event class of record @r (created on first sight), or NULL. */
static bt_event_class *rec_class(struct ctf *x, const struct ktr_rec *r, const char **names,
				 unsigned n)
{
	uint64_t key = (uint64_t)r->cls << 24 | (uint64_t)(r->id & 0xffff) << 8 | n;
	long known = ka_map64_get(&x->ec_of, key);
	char name[256], fname[KTRACE_MAX_WORDS][80], ubuf[256];
	bt_field_class *st;
	bt_event_class *ec;

	if (known >= 0)
		return x->ecs[known];
	if (x->necs == x->capecs) {
		size_t cap = x->capecs ? 2 * x->capecs : 64;
		bt_event_class **v = realloc(x->ecs, cap * sizeof(*v));

		if (!v)
			return NULL;
		x->ecs = v;
		x->capecs = cap;
	}
	st = bt_field_class_structure_create(x->tc);
	if (!st)
		return NULL;
	for (unsigned a = 0; a < n; a++) {
		ident(names[a], fname[a], 64);
		/* a repeated name gets _2, _3 ... */
		for (unsigned b = 0, dup = 1; b < a; b++)
			if (!strcmp(fname[a], fname[b])) {
				char base[64];

				snprintf(base, sizeof(base), "%.60s", fname[a]);
				snprintf(fname[a], sizeof(fname[a]), "%s_%u", base, ++dup);
				b = (unsigned)-1; /* check again from the first */
			}
		if (add_member(st, fname[a], u64_fc(x, 0)) < 0) {
			bt_field_class_put_ref(st);
			return NULL;
		}
	}
	ktr_rec_name(x->t, r, name, sizeof(name));
	ec = make_ec(x, fmt_utf8(name, ubuf, sizeof(ubuf)), st);
	if (!ec)
		return NULL;
	if (ka_map64_put(&x->ec_of, key, (uint32_t)x->necs) < 0) {
		bt_event_class_put_ref(ec);
		return NULL;
	}
	x->ecs[x->necs++] = ec;
	return ec;
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

/* The stream of application thread ordinal @ord or of kernel CPU @cpu (@ord < 0). */
static struct ctf_stream *stream_of(struct ctf *x, long ord, int cpu)
{
	struct ctf_stream *s = ord >= 0 ? slot(&x->th, &x->nth, (size_t)ord)
					: slot(&x->kc, &x->nkc, (size_t)(cpu + 1));
	char name[64];

	if (!s || s->s)
		return s;
	s->s = bt_stream_create(x->sc, x->trace);
	if (!s->s)
		return NULL;
	if (ord >= 0) {
		uint32_t pid = 0, tid = 0;

		ktr_callsort_thread_ids(x->cs, (uint32_t)ord, &pid, &tid);
		snprintf(name, sizeof(name), "thread-%" PRIu32, tid);
	} else if (cpu >= 0) {
		snprintf(name, sizeof(name), "kernel-cpu%d", cpu);
	} else {
		snprintf(name, sizeof(name), "kernel-cpu-unknown");
	}
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
 * An event message of class @ec at @ns on stream @s (after its beginning
 * message if not sent yet: needs 2 slots then) into @msgs[*@count]; the
 * payload structure into *@payload.  Return: 1 made, 0 no room (the stream
 * beginning may have been sent), -1 error.
 */
static int event_msg(struct ctf *x, bt_self_message_iterator *it, struct ctf_stream *s,
		     bt_event_class *ec, uint64_t ns, int cpu, uint32_t pid, uint32_t tid,
		     bt_message_array_const msgs, uint64_t cap, uint64_t *count, bt_field **payload)
{
	char ubuf[256];
	bt_message *m;
	bt_event *e;
	bt_field *ctx;

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
	m = bt_message_event_create_with_default_clock_snapshot(it, ec, s->s, ns);
	if (!m)
		return -1;
	e = bt_message_event_borrow_event(m);
	ctx = bt_event_borrow_common_context_field(e);
	bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 0), cpu);
	set_u(ctx, 1, pid);
	set_u(ctx, 2, tid);
	if (set_s(ctx, 3, fmt_utf8(ka_comm(x->t, tid), ubuf, sizeof(ubuf))) < 0) {
		bt_message_put_ref(m);
		return -1;
	}
	*payload = bt_event_borrow_payload_field(e);
	msgs[(*count)++] = m;
	x->events++;
	return 1;
}

static const char *gap_kind(enum ktr_gap g)
{
	switch (g) {
	case KTR_GAP_LOST:
		return "lost";
	case KTR_GAP_OVERWRITTEN:
		return "overwritten";
	case KTR_GAP_DROPPED:
		return "dropped";
	case KTR_GAP_CORRUPT:
		return "corrupt";
	}
	return "?";
}

/* Record @r (not a call) as a message.  Return as event_msg(). */
static int rec_msg(struct ctf *x, bt_self_message_iterator *it, const struct ktr_rec *r,
		   bt_message_array_const msgs, uint64_t cap, uint64_t *count)
{
	int kernel = r->stream >= KTR_KERNEL_STREAM || r->cls == KTRACE_CLASS_KEVENT;
	long ord = kernel ? -1 : (long)ktr_callsort_thread(x->cs, r->pid, r->tid);
	struct ctf_stream *s = stream_of(x, ord, r->cpu < 0 ? -1 : r->cpu);
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS];
	unsigned n = 0;
	bt_event_class *ec;
	bt_field *p;
	int rc;

	if (!s)
		return -1;
	if (r->kind == KTR_GAP) {
		ec = x->ec_lost;
	} else {
		n = ktr_rec_args(x->t, r, names, vals);
		ec = rec_class(x, r, names, n);
	}
	if (!ec)
		return -1;
	rc = event_msg(x, it, s, ec, r->ns, r->cpu, r->pid, r->tid, msgs, cap, count, &p);
	if (rc <= 0)
		return rc;
	if (r->kind == KTR_GAP) {
		char ubuf[256];

		set_s(p, 0, gap_kind(r->gap));
		set_u(p, 1, r->count);
		set_u(p, 2, r->stream);
		set_u(p, 3, r->until_ns);
		return set_s(p, 4, r->what ? fmt_utf8(r->what, ubuf, sizeof(ubuf)) : "") < 0 ? -1 : 1;
	}
	for (unsigned i = 0; i < n; i++)
		set_u(p, i, vals[i]);
	return 1;
}

/* The entry (@pe NULL: x->call) or exit (@pe) of a call.  Return as event_msg(). */
static int call_msg(struct ctf *x, bt_self_message_iterator *it, const struct ktr_callent *pe,
		    bt_message_array_const msgs, uint64_t cap, uint64_t *count)
{
	const struct ktr_callent *ce = pe ? pe : &x->call;
	uint32_t thread = ce->thread, key = ce->key;
	int cpu = ce->cpu == 0xffffffffu ? -1 : (int)ce->cpu;
	struct ctf_stream *s = stream_of(x, thread, 0);
	struct ktr_call c;
	bt_field *p;
	int rc;

	if (!s)
		return -1;
	memset(&c, 0, sizeof(c));
	c.key = key;
	ktr_callsort_thread_ids(x->cs, thread, &c.pid, &c.tid);
	ktr_call_key_addrs(x->t, key, &c.func, &c.site);
	rc = event_msg(x, it, s, pe ? x->ec_exit : x->ec_entry, ce->entry_ns + (pe ? ce->dur_ns : 0), cpu,
		       c.pid, c.tid, msgs, cap, count, &p);
	if (rc <= 0)
		return rc;
	set_u(p, 0, c.func);
	set_u(p, 1, c.site);
	set_u(p, 2, ce->depth);
	if (pe) {
		set_u(p, 3, ce->dur_ns);
		bt_field_bool_set_value(bt_field_structure_borrow_member_field_by_index(p, 4),
					(ce->flags & KTRACE_CALLF_UNFINISHED) ? BT_TRUE : BT_FALSE);
		return 1;
	} else {
		char ubuf[512];

		c.cpu = cpu;
		return set_s(p, 3, fmt_utf8(ka_names_call(x->names, &c), ubuf, sizeof(ubuf))) < 0 ? -1
												      : 1;
	}
}

/* ---- the source component ---------------------------------------------------------- */

/* Fill x->rec with the next non-call record to export (x->recs_done at the end). */
static void next_rec(struct ctf *x)
{
	struct ktr_rec *r = &x->rec;

	while (!x->have_rec && !x->recs_done) {
		if (!ktr_next(x->t, r)) {
			x->recs_done = 1;
			break;
		}
		ka_progress_rec(x->prog, r);
		while (ktr_diag_next(x->t)) /* reported in the first pass */
			;
		if (r->kind == KTR_RECORD && r->cls == KTRACE_CLASS_CALL)
			continue;
		if (x->no_kernel && (r->stream >= KTR_KERNEL_STREAM || r->cls == KTRACE_CLASS_KEVENT))
			continue;
		if (!cli_select_rec(x->sel, r))
			continue;
		x->have_rec = 1;
	}
}

static int next_call(struct ctf *x)
{
	int rc;

	if (x->have_call || x->calls_done)
		return 0;
	rc = ktr_callsort_next(x->cs, &x->call);
	if (rc < 0) {
		ctf_fail(x, "reading the sorted calls back: %s", strerror(-rc));
		return -1;
	}
	if (rc == 0)
		x->calls_done = 1;
	else
		x->have_call = 1;
	return 0;
}

/* Stream end messages for every stream begun; 1 when all are out. */
static int end_streams(struct ctf *x, bt_self_message_iterator *it, bt_message_array_const msgs,
		       uint64_t cap, uint64_t *count)
{
	while (*count < cap) {
		struct ctf_stream *s;
		bt_message *m;

		if (x->ending < x->nth)
			s = &x->th[x->ending];
		else if (x->ending < x->nth + x->nkc)
			s = &x->kc[x->ending - x->nth];
		else
			return 1;
		x->ending++;
		if (!s->s || !s->begun)
			continue;
		m = bt_message_stream_end_create(it, s->s);
		if (!m)
			return -1;
		msgs[(*count)++] = m;
	}
	return 0;
}

static bt_message_iterator_class_next_method_status
src_next(bt_self_message_iterator *it, bt_message_array_const msgs, uint64_t cap, uint64_t *count)
{
	struct ctf *x = bt_self_message_iterator_get_data(it);
	int rc = 1;

	*count = 0;
	if (x->done)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
	while (*count < cap) {
		const struct ktr_callent *top;
		int pick; /* 0 record, 1 entry, 2 exit */
		uint64_t t, top_exit;

		next_rec(x);
		if (next_call(x) < 0)
			goto fail;
		top = ktr_exits_top(&x->exits);
		top_exit = top ? top->entry_ns + top->dur_ns : 0;
		if (!x->have_rec && !x->have_call && !top) {
			rc = end_streams(x, it, msgs, cap, count);
			if (rc < 0)
				goto fail;
			if (rc > 0 && !*count) {
				x->done = 1;
				return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
			}
			break;
		}
		/* the earliest; at one instant: exits at a depth >= an entry's, entries, records, exits */
		t = UINT64_MAX;
		if (x->have_rec)
			t = x->rec.ns;
		if (x->have_call && x->call.entry_ns < t)
			t = x->call.entry_ns;
		if (top && top_exit < t)
			t = top_exit;
		if (top && top_exit == t &&
		    !(x->have_call && x->call.entry_ns == t && x->call.depth > top->depth))
			pick = 2;
		else if (x->have_call && x->call.entry_ns == t)
			pick = 1;
		else
			pick = 0;
		if (pick == 2) {
			rc = call_msg(x, it, top, msgs, cap, count);
			if (rc > 0)
				ktr_exits_pop(&x->exits);
		} else if (pick == 1) {
			if (x->call.flags & KTR_CALLENT_GAP) { /* not ours; never added */
				x->have_call = 0;
				continue;
			}
			rc = call_msg(x, it, NULL, msgs, cap, count);
			if (rc > 0) {
				if (ktr_exits_push(&x->exits, &x->call) < 0) {
					ctf_fail(x, "out of memory");
					goto fail;
				}
				x->have_call = 0;
			}
		} else {
			rc = rec_msg(x, it, &x->rec, msgs, cap, count);
			if (rc > 0)
				x->have_rec = 0;
		}
		if (rc < 0) {
			ctf_fail(x, "making a babeltrace2 event: out of memory");
			goto fail;
		}
		if (rc == 0)
			break; /* no room left */
	}
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
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
	struct ctf *x = bt_self_component_get_data(bt_self_message_iterator_borrow_component(it));
	const struct ktr_info *in = ktr_info(x->t);
	char ubuf[1024];

	x->trace = bt_trace_create(x->tc);
	if (!x->trace)
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	bt_trace_set_name(x->trace, "ktrace");
	/* "domain": what Trace Compass looks at to open a trace as LTTng-UST */
	bt_trace_set_environment_entry_string(x->trace, "domain", "ust");
	bt_trace_set_environment_entry_string(x->trace, "tracer_name", "ktrace");
	bt_trace_set_environment_entry_string(x->trace, "tracer_version", KTRACE_VERSION);
	bt_trace_set_environment_entry_string(x->trace, "ktrace_clock", "CLOCK_MONOTONIC");
	bt_trace_set_environment_entry_string(x->trace, "hostname", fmt_utf8(in->host, ubuf, sizeof(ubuf)));
	bt_trace_set_environment_entry_string(x->trace, "kernel_release",
					      fmt_utf8(in->kernel, ubuf, sizeof(ubuf)));
	bt_trace_set_environment_entry_string(x->trace, "ktrace_dir",
					      fmt_utf8(ktr_dir(x->t), ubuf, sizeof(ubuf)));
	bt_self_message_iterator_set_data(it, x);
	return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_initialize_method_status
src_init(bt_self_component_source *self, bt_self_component_source_configuration *conf,
	 const bt_value *params, void *data)
{
	struct ctf *x = data;

	x->comp = bt_self_component_source_as_self_component(self);
	bt_self_component_set_data(x->comp, x);
	if (make_classes(x) < 0)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	if (bt_self_component_source_add_output_port(self, "out", NULL, NULL) !=
	    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

/* ---- the graph ---------------------------------------------------------------------- */

/* Report libbabeltrace2's error of this thread (its causes, innermost first). */
static void bt_report(const char *what)
{
	const bt_error *e = bt_current_thread_take_error();
	uint64_t n = e ? bt_error_get_cause_count(e) : 0;

	if (!n) {
		cli_error(CMD, "%s failed (libbabeltrace2 gave no reason)", what);
	} else {
		for (uint64_t i = n; i-- > 0;) {
			const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
			char line[512], *nl;

			snprintf(line, sizeof(line), "%s", bt_error_cause_get_message(c));
			while ((nl = strchr(line, '\n')))
				*nl = ' ';
			cli_error(CMD, "%s: %s: %s", what, bt_error_cause_get_module_name(c), line);
		}
	}
	if (e)
		bt_error_release(e);
}

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

static int out_dir(struct outdir *o, const char *path)
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
		cli_error(CMD, "%s", msg);
		return -1;
	}
	dfd = dup(fd);
	close(fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		cli_error(CMD, "%s: %s", path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			cli_error(CMD, "%s: not empty (holds '%s'): give a new or empty directory", path,
				  de->d_name);
			closedir(d);
			return -1;
		}
	closedir(d);
	o->parent = ksf_parent_open(path, o->buf, &last, msg, sizeof(msg));
	if (o->parent < 0) {
		cli_error(CMD, "%s", msg);
		return -1;
	}
	o->last = (char *)last;
	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		cli_error(CMD, "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(o->stage_name, sizeof(o->stage_name), ".%.200s.%016" PRIx64, last, rnd);
	if (mkdirat(o->parent, o->stage_name, 0700) < 0 ||
	    (o->stage = openat(o->parent, o->stage_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		cli_error(CMD, "%s: creating the staging directory %s: %s", path, o->stage_name,
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
static int out_dir_commit(struct outdir *o, const char *path)
{
	int fd = openat(o->stage, "trace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		cli_error(CMD, "%s: sink.ctf.fs wrote no trace (%s)", path, strerror(errno));
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
		cli_error(CMD, "%s: moving the trace into place: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* First pass: every selected call into the sorter, by entry time. */
static int sort_calls(struct ctf *x)
{
	struct ka_progress *prog = ka_progress_start(x->t, CMD, 0);
	struct ktr_rec r;
	int rc = 0;

	while (ktr_next(x->t, &r)) {
		struct ktr_call c;

		ka_progress_rec(prog, &r);
		cli_diags(CMD, x->t);
		if (r.kind != KTR_RECORD || r.cls != KTRACE_CLASS_CALL)
			continue;
		if (!ktr_call_decode(x->t, &r, &c) || !cli_select_call(x->sel, &c))
			continue;
		if ((rc = ktr_callsort_add_call(x->cs, &c, c.key, 0)) < 0) {
			cli_error(CMD, "sorting the calls: %s (temporary files in $TMPDIR or /tmp)",
				  strerror(-rc));
			break;
		}
	}
	cli_diags(CMD, x->t);
	ka_progress_end(prog);
	return rc < 0 ? -1 : 0;
}

int export_ctf(struct ktr_trace *t, struct ka_names *names, const struct cli_select *sel,
	       int no_kernel, const char *outdir, uint64_t *events)
{
	struct ctf x;
	struct outdir od;
	const bt_plugin *plugin = NULL;
	const bt_component_class_sink *sink_cls;
	bt_message_iterator_class *itc = NULL;
	bt_component_class_source *src_cls = NULL;
	bt_graph *g = NULL;
	bt_value *params = NULL;
	const bt_component_source *src;
	const bt_component_sink *sink;
	bt_graph_run_status st;
	int rc = 1;

	memset(&x, 0, sizeof(x));
	x.t = t;
	x.names = names;
	x.sel = sel;
	x.no_kernel = no_kernel;
	if (out_dir(&od, outdir) < 0) {
		out_dir_drop(&od);
		return 1;
	}
	x.cs = ktr_callsort_new(0, KTR_SORT_ENTRY);
	if (!x.cs) {
		cli_error(CMD, "out of memory");
		out_dir_drop(&od);
		return 1;
	}
	if (sort_calls(&x) < 0)
		goto out;
	ktr_rewind(t);

	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &plugin) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    !(sink_cls = bt_plugin_borrow_sink_component_class_by_name_const(plugin, "fs"))) {
		cli_error(CMD, "babeltrace2's 'ctf' plugin (sink.ctf.fs) not found: install "
			       "libbabeltrace2-0 (Debian) or set BABELTRACE_PLUGIN_PATH");
		goto out;
	}
	itc = bt_message_iterator_class_create(src_next);
	src_cls = itc ? bt_component_class_source_create("ktrace", itc) : NULL;
	params = bt_value_map_create();
	g = bt_graph_create(0);
	if (!src_cls || !params || !g ||
	    bt_message_iterator_class_set_initialize_method(itc, src_iter_init) !=
		    BT_MESSAGE_ITERATOR_CLASS_SET_METHOD_STATUS_OK ||
	    bt_component_class_source_set_initialize_method(src_cls, src_init) !=
		    BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
	    bt_value_map_insert_string_entry(params, "path", od.sink_path) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
	    bt_value_map_insert_bool_entry(params, "assume-single-trace", BT_TRUE) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
	    bt_value_map_insert_bool_entry(params, "quiet", BT_TRUE) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		cli_error(CMD, "out of memory");
		goto out;
	}
	if (bt_graph_add_source_component_with_initialize_method_data(
		    g, src_cls, "ktrace", NULL, &x, BT_LOGGING_LEVEL_ERROR, &src) !=
	    BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		bt_report("creating the source component");
		goto out;
	}
	if (bt_graph_add_sink_component(g, sink_cls, "ctf-fs", params, BT_LOGGING_LEVEL_ERROR,
					&sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		bt_report("creating sink.ctf.fs");
		goto out;
	}
	if (bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(src, 0),
				   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
				   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		bt_report("connecting the source to sink.ctf.fs");
		goto out;
	}
	x.prog = ka_progress_start(t, CMD, 0);
	do
		st = bt_graph_run(g);
	while (st == BT_GRAPH_RUN_STATUS_AGAIN);
	ka_progress_end(x.prog);
	x.prog = NULL;
	if (st != BT_GRAPH_RUN_STATUS_OK) {
		if (x.err[0]) {
			bt_current_thread_clear_error();
			cli_error(CMD, "%s: %s", outdir, x.err);
		} else {
			bt_report(outdir);
		}
		goto out;
	}
	rc = 0;
out:
	/* the graph first: sink.ctf.fs writes the metadata file when it is destroyed */
	bt_graph_put_ref(g);
	bt_trace_put_ref(x.trace);
	x.trace = NULL;
	if (!rc && !x.events) {
		cli_error(CMD, "%s: nothing to export (no records selected): no CTF trace written", outdir);
		rc = 1;
	}
	if (!rc && out_dir_commit(&od, outdir) < 0)
		rc = 1;
	out_dir_drop(&od);
	for (size_t i = 0; i < x.nth; i++)
		bt_stream_put_ref(x.th[i].s);
	for (size_t i = 0; i < x.nkc; i++)
		bt_stream_put_ref(x.kc[i].s);
	for (size_t i = 0; i < x.necs; i++)
		bt_event_class_put_ref(x.ecs[i]);
	free(x.th);
	free(x.kc);
	free(x.ecs);
	ka_map64_free(&x.ec_of);
	ktr_exits_free(&x.exits);
	bt_event_class_put_ref(x.ec_entry);
	bt_event_class_put_ref(x.ec_exit);
	bt_event_class_put_ref(x.ec_lost);
	bt_trace_put_ref(x.trace);
	bt_stream_class_put_ref(x.sc);
	bt_clock_class_put_ref(x.cc);
	bt_trace_class_put_ref(x.tc);
	bt_value_put_ref(params);
	bt_component_class_source_put_ref(src_cls);
	bt_message_iterator_class_put_ref(itc);
	bt_plugin_put_ref(plugin);
	ka_progress_end(x.prog);
	ktr_callsort_free(x.cs);
	*events = x.events;
	return rc;
}

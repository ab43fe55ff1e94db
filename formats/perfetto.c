/*
 * formats/perfetto.c - Perfetto's native trace format (a protobuf
 * `perfetto.protos.Trace`: a sequence of TracePacket), streamed packet by
 * packet, for `ktrace export --format=perfetto` (formats/formats.h,
 * struct fmt_pf).
 *
 * The messages are upstream Perfetto's (a subset vendored in
 * third_party/perfetto/, same names and field numbers), compiled to C by
 * protoc-c at build time and packed with protobuf-c.  Each packet is a
 * stack-built message packed into one reusable buffer and written as one
 * `Trace.packet` field (tag 0x0a, varint length, bytes): memory does not
 * grow with the trace, and nothing is allocated per event (only per new
 * interned string).
 *
 * What the packets use of Perfetto's format (docs: perfetto.dev/docs/
 * reference/trace-packet-proto, .../instrumentation/track-events):
 *   - a first ClockSnapshot declares CLOCK_MONOTONIC the trace's clock
 *     (primary_trace_clock) and BOOTTIME equal to it (ftrace events are
 *     read as BOOTTIME), with REALTIME when the trace knows it;
 *   - each TrackEvent sequence (trusted_packet_sequence_id) starts with
 *     SEQ_INCREMENTAL_STATE_CLEARED and TracePacketDefaults naming a
 *     sequence-scoped incremental clock (id 64, as Perfetto's SDK does), and
 *     a ClockSnapshot tying it to MONOTONIC: later packets carry the delta
 *     to the sequence's previous timestamp (1-3 bytes instead of 6-9);
 *   - event names, categories and argument names are interned per sequence
 *     (InternedData EventName, EventCategory, DebugAnnotationName) in the
 *     packet that first uses them, so a repeated event costs a small iid;
 *   - scheduling is ftrace's own: FtraceEventBundle with sched_switch and
 *     sched_wakeup events, from which Perfetto draws its CPU lanes and
 *     thread states.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "formats/formats.h"
#include "protos/perfetto/trace/trace_packet.pb-c.h"

#define CLOCK_INCREMENTAL 64 /* sequence-scoped clock ids are 64..127 */
#define NAME_MAX_BYTES 1024  /* a name longer than this (after \xNN escapes) is truncated */

/* ---- interning: a string -> iid table, one per kind per sequence ------------- */

struct fmt_pf_tab {
	struct ent {
		char *s; /* the caller's string as given (the key) */
		uint64_t iid;
	} *v;
	size_t n, size;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/*
 * The iid of @s in *@tp, or 0 if new: then *@iid is the iid to intern it
 * under (it is in the table from now on).  -1 (as uint64) if out of memory.
 */
static uint64_t intern(struct fmt_pf_tab **tp, const char *s, uint64_t *iid)
{
	struct fmt_pf_tab *t = *tp;
	size_t i;

	if (!t && !(t = *tp = calloc(1, sizeof(*t))))
		return UINT64_MAX;
	if ((t->n + 1) * 2 > t->size) {
		size_t size = t->size ? 2 * t->size : 64;
		struct ent *v = calloc(size, sizeof(*v));

		if (!v)
			return UINT64_MAX;
		for (size_t k = 0; k < t->size; k++) {
			if (!t->v[k].s)
				continue;
			for (i = hash_str(t->v[k].s) & (size - 1); v[i].s; i = (i + 1) & (size - 1))
				;
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->size = size;
	}
	for (i = hash_str(s) & (t->size - 1); t->v[i].s; i = (i + 1) & (t->size - 1))
		if (!strcmp(t->v[i].s, s))
			return t->v[i].iid;
	if (!(t->v[i].s = strdup(s)))
		return UINT64_MAX;
	t->v[i].iid = *iid = ++t->n;
	return 0;
}

static void tab_free(struct fmt_pf_tab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->size; i++)
		free(t->v[i].s);
	free(t->v);
	free(t);
}

/* ---- packets ------------------------------------------------------------------- */

/* Pack @p and write it as one Trace.packet field. */
static void put_packet(struct fmt_pf *w, Perfetto__Protos__TracePacket *p)
{
	size_t n = protobuf_c_message_get_packed_size(&p->base), h = 0;
	unsigned char hdr[11];
	size_t v = n;

	if (n > w->cap) {
		size_t cap = n < 4096 ? 4096 : 2 * n;
		uint8_t *b = realloc(w->buf, cap);

		if (!b) {
			w->enomem = 1;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	protobuf_c_message_pack(&p->base, w->buf);
	hdr[h++] = 0x0a; /* field 1 (packet), wire type 2 (length-delimited) */
	do {
		hdr[h++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	fwrite_unlocked(hdr, 1, h, w->out);
	fwrite_unlocked(w->buf, 1, n, w->out);
	w->packets++;
	w->bytes += h + n;
}

static void set_seq(Perfetto__Protos__TracePacket *p, uint32_t id)
{
	p->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	p->trusted_packet_sequence_id = id;
}

/* A valid UTF-8 copy of @s in @buf (or @s itself); NULL stays NULL. */
static char *utf8(const char *s, char *buf)
{
	return s ? (char *)fmt_utf8(s, buf, NAME_MAX_BYTES) : NULL;
}

int fmt_pf_begin(struct fmt_pf *w, FILE *out, uint64_t mono_ns, uint64_t realtime_ns)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[3], *cp[3];
	static const uint32_t ids[3] = { PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC,
					 PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME,
					 PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME };

	memset(w, 0, sizeof(*w));
	w->out = out;
	for (int i = 0; i < 3; i++) {
		perfetto__protos__clock_snapshot__clock__init(&c[i]);
		c[i].has_clock_id = c[i].has_timestamp = 1;
		c[i].clock_id = ids[i];
		c[i].timestamp = i == 2 ? realtime_ns : mono_ns;
		cp[i] = &c[i];
	}
	cs.n_clocks = realtime_ns ? 3 : 2;
	cs.clocks = cp;
	cs.has_primary_trace_clock = 1;
	cs.primary_trace_clock = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &cs;
	p.has_timestamp = 1;
	p.timestamp = mono_ns;
	p.has_timestamp_clock_id = 1;
	p.timestamp_clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
	put_packet(w, &p);
	return w->enomem ? -ENOMEM : 0;
}

void fmt_pf_seq_init(struct fmt_pf_seq *s, uint32_t id)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
}

void fmt_pf_seq_free(struct fmt_pf_seq *s)
{
	tab_free(s->names);
	tab_free(s->cats);
	tab_free(s->keys);
	s->names = s->cats = s->keys = NULL;
}

/*
 * The sequence's first packets: incremental state cleared, the incremental
 * clock as default, and its snapshot against MONOTONIC at @ts.
 */
static void seq_start(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t ts)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TracePacketDefaults d = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[2], *cp[2] = { &c[0], &c[1] };

	set_seq(&p, s->id);
	p.has_sequence_flags = 1;
	p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	d.has_timestamp_clock_id = 1;
	d.timestamp_clock_id = CLOCK_INCREMENTAL;
	p.trace_packet_defaults = &d;
	put_packet(w, &p);

	perfetto__protos__trace_packet__init(&p);
	set_seq(&p, s->id);
	p.has_sequence_flags = 1;
	p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	p.has_timestamp = 1;
	p.timestamp = ts;
	p.has_timestamp_clock_id = 1;
	p.timestamp_clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
	for (int i = 0; i < 2; i++) {
		perfetto__protos__clock_snapshot__clock__init(&c[i]);
		c[i].has_clock_id = c[i].has_timestamp = 1;
		c[i].timestamp = ts;
	}
	c[0].clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
	c[1].clock_id = CLOCK_INCREMENTAL;
	c[1].has_is_incremental = 1;
	c[1].is_incremental = 1;
	cs.n_clocks = 2;
	cs.clocks = cp;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &cs;
	put_packet(w, &p);
	s->started = 1;
	s->last_ns = ts;
}

/* A TrackDescriptor packet (on @s, which needs no incremental state for it). */
static void put_track(struct fmt_pf *w, struct fmt_pf_seq *s, Perfetto__Protos__TrackDescriptor *td)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	set_seq(&p, s->id);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	p.track_descriptor = td;
	put_packet(w, &p);
}

void fmt_pf_process(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint32_t pid,
		    const char *name)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	char buf[NAME_MAX_BYTES];

	td.has_uuid = 1;
	td.uuid = uuid;
	pd.has_pid = 1;
	pd.pid = (int32_t)pid;
	pd.process_name = utf8(name, buf);
	td.process = &pd;
	put_track(w, s, &td);
}

void fmt_pf_thread(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint32_t pid, uint32_t tid,
		   const char *name)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thr = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	char buf[NAME_MAX_BYTES];

	td.has_uuid = 1;
	td.uuid = uuid;
	thr.has_pid = thr.has_tid = 1;
	thr.pid = (int32_t)pid;
	thr.tid = tid;
	thr.thread_name = utf8(name, buf);
	td.thread = &thr;
	put_track(w, s, &td);
}

void fmt_pf_track(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint64_t parent,
		  const char *name)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	char buf[NAME_MAX_BYTES];

	td.has_uuid = 1;
	td.uuid = uuid;
	if (parent) {
		td.has_parent_uuid = 1;
		td.parent_uuid = parent;
	}
	td.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
	td.name = utf8(name, buf);
	put_track(w, s, &td);
}

/*
 * fmt_pf_event() in steps: each fills part of the one TracePacket it writes
 * (the strings go into the caller's buffers, which outlive put_packet());
 * a step that interns a new string adds it to @in and returns 1, else 0.
 */

/*
 * ev_packet - @p as a track event packet on sequence @s at @ts_ns (ns of
 * CLOCK_MONOTONIC): a delta on the incremental clock, or absolute with
 * the clock named when out of order on @s (counted in w->unordered).
 */
static void ev_packet(struct fmt_pf *w, struct fmt_pf_seq *s, Perfetto__Protos__TracePacket *p,
		      uint64_t ts_ns)
{
	set_seq(p, s->id);
	p->has_sequence_flags = 1;
	p->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	p->has_timestamp = 1;
	if (ts_ns >= s->last_ns) {
		p->timestamp = ts_ns - s->last_ns; /* on the incremental clock (the default) */
		s->last_ns = ts_ns;
	} else { /* out of order on this sequence: absolute, the clock named */
		p->timestamp = ts_ns;
		p->has_timestamp_clock_id = 1;
		p->timestamp_clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
		w->unordered++;
	}
}

/*
 * ev_name - the event's @name into @te: its interned id (a new one
 * through @en, @enp into @in; UTF-8 in @nbuf), or inline out of memory
 * (w->enomem).  Returns 1 if interned now, else 0.
 */
static int ev_name(struct fmt_pf *w, struct fmt_pf_seq *s, Perfetto__Protos__TrackEvent *te,
		   Perfetto__Protos__InternedData *in, Perfetto__Protos__EventName *en,
		   Perfetto__Protos__EventName **enp, char *nbuf, const char *name)
{
	uint64_t new_iid, iid = intern(&s->names, name, &new_iid);
	int interned = 0;

	if (iid == UINT64_MAX) { /* out of memory: the name inline */
		w->enomem = 1;
		te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
		te->name = utf8(name, nbuf);
		return 0;
	}
	if (!iid) {
		en->has_iid = 1;
		en->iid = iid = new_iid;
		en->name = utf8(name, nbuf);
		in->n_event_names = 1;
		in->event_names = enp;
		interned = 1;
	}
	te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
	te->name_iid = iid;
	return interned;
}

/*
 * ev_category - the event's category @cat into @te as its interned id
 * (*@cat_iid; a new one through @ec, @ecp into @in, UTF-8 in @cbuf);
 * left out of memory (w->enomem).  Returns 1 if interned now, else 0.
 */
static int ev_category(struct fmt_pf *w, struct fmt_pf_seq *s, Perfetto__Protos__TrackEvent *te,
		       Perfetto__Protos__InternedData *in, Perfetto__Protos__EventCategory *ec,
		       Perfetto__Protos__EventCategory **ecp, char *cbuf, const char *cat, uint64_t *cat_iid)
{
	uint64_t new_iid;
	int interned = 0;

	*cat_iid = intern(&s->cats, cat, &new_iid);
	if (*cat_iid == UINT64_MAX) {
		w->enomem = 1;
		return 0;
	}
	if (!*cat_iid) {
		ec->has_iid = 1;
		ec->iid = *cat_iid = new_iid;
		ec->name = utf8(cat, cbuf);
		in->n_event_categories = 1;
		in->event_categories = ecp;
		interned = 1;
	}
	te->n_category_iids = 1;
	te->category_iids = cat_iid;
	return interned;
}

/* ev_arg_value - argument @a's value into @d (a string as UTF-8 in @vbuf, @vlen bytes). */
static void ev_arg_value(Perfetto__Protos__DebugAnnotation *d, const struct fmt_pf_arg *a, char *vbuf,
			 size_t vlen)
{
	switch (a->kind) {
	case FMT_PF_UINT:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
		d->uint_value = a->u;
		break;
	case FMT_PF_PTR:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE;
		d->pointer_value = a->u;
		break;
	case FMT_PF_BOOL:
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
		d->bool_value = a->u != 0;
		break;
	default: /* FMT_PF_STR */
		d->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
		d->string_value = (char *)fmt_utf8(a->s ? a->s : "", vbuf, vlen);
		break;
	}
}

/*
 * ev_arg_name - argument @a's name into @d: its interned id (a new one
 * appended to @in through the free entries of @dn, @dnp; UTF-8 in @sbuf,
 * @slen bytes), or inline out of memory (w->enomem).  Returns 1 if
 * interned now, else 0.
 */
static int ev_arg_name(struct fmt_pf *w, struct fmt_pf_seq *s, Perfetto__Protos__DebugAnnotation *d,
		       Perfetto__Protos__InternedData *in, Perfetto__Protos__DebugAnnotationName *dn,
		       Perfetto__Protos__DebugAnnotationName **dnp, const struct fmt_pf_arg *a, char *sbuf,
		       size_t slen)
{
	uint64_t new_iid, iid = intern(&s->keys, a->name, &new_iid);
	int interned = 0;

	if (iid == UINT64_MAX) {
		w->enomem = 1;
		d->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
		d->name = (char *)fmt_utf8(a->name, sbuf, slen);
		return 0;
	}
	if (!iid) {
		Perfetto__Protos__DebugAnnotationName *n = &dn[in->n_debug_annotation_names];

		perfetto__protos__debug_annotation_name__init(n);
		n->has_iid = 1;
		n->iid = iid = new_iid;
		n->name = (char *)fmt_utf8(a->name, sbuf, slen);
		dnp[in->n_debug_annotation_names] = n;
		in->n_debug_annotation_names++;
		in->debug_annotation_names = dnp;
		interned = 1;
	}
	d->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
	d->name_iid = iid;
	return interned;
}

void fmt_pf_event(struct fmt_pf *w, struct fmt_pf_seq *s, int type, uint64_t ts_ns, uint64_t track,
		  const char *name, const char *cat, const struct fmt_pf_arg *args, unsigned nargs)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT, *enp = &en;
	Perfetto__Protos__EventCategory ec = PERFETTO__PROTOS__EVENT_CATEGORY__INIT, *ecp = &ec;
	Perfetto__Protos__DebugAnnotation da[FMT_PF_MAX_ARGS], *dap[FMT_PF_MAX_ARGS];
	Perfetto__Protos__DebugAnnotationName dn[FMT_PF_MAX_ARGS], *dnp[FMT_PF_MAX_ARGS];
	char nbuf[NAME_MAX_BYTES], cbuf[NAME_MAX_BYTES], sbuf[FMT_PF_MAX_ARGS][256];
	char vbuf[FMT_PF_MAX_ARGS][512]; /* string values (longer ones are truncated) */
	uint64_t cat_iid;
	int interned = 0;

	if (!s->started)
		seq_start(w, s, ts_ns);
	ev_packet(w, s, &p, ts_ns);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	p.track_event = &te;
	te.has_type = 1;
	te.type = (Perfetto__Protos__TrackEvent__Type)type;
	te.has_track_uuid = 1;
	te.track_uuid = track;
	if (name)
		interned |= ev_name(w, s, &te, &in, &en, &enp, nbuf, name);
	if (cat)
		interned |= ev_category(w, s, &te, &in, &ec, &ecp, cbuf, cat, &cat_iid);
	if (nargs > FMT_PF_MAX_ARGS)
		nargs = FMT_PF_MAX_ARGS;
	for (unsigned i = 0; i < nargs; i++) {
		perfetto__protos__debug_annotation__init(&da[i]);
		dap[i] = &da[i];
		interned |= ev_arg_name(w, s, &da[i], &in, dn, dnp, &args[i], sbuf[i], sizeof(sbuf[i]));
		ev_arg_value(&da[i], &args[i], vbuf[i], sizeof(vbuf[i]));
	}
	te.n_debug_annotations = nargs;
	te.debug_annotations = dap;
	if (interned)
		p.interned_data = &in;
	put_packet(w, &p);
}

/* One ftrace event in a bundle of its own, for CPU @cpu. */
static void put_ftrace(struct fmt_pf *w, uint32_t seq, int cpu, Perfetto__Protos__FtraceEvent *ev)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceEventBundle b = PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;

	set_seq(&p, seq);
	b.has_cpu = 1;
	b.cpu = cpu >= 0 ? (uint32_t)cpu : 0;
	b.n_event = 1;
	b.event = &ev;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p.ftrace_events = &b;
	put_packet(w, &p);
}

void fmt_pf_sched_switch(struct fmt_pf *w, uint32_t seq, int cpu, uint64_t ts_ns,
			 const char *prev_comm, uint32_t prev_pid, uint64_t prev_state,
			 const char *next_comm, uint32_t next_pid)
{
	Perfetto__Protos__FtraceEvent ev = PERFETTO__PROTOS__FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedSwitchFtraceEvent sw = PERFETTO__PROTOS__SCHED_SWITCH_FTRACE_EVENT__INIT;
	char pbuf[NAME_MAX_BYTES], nbuf[NAME_MAX_BYTES];

	ev.has_timestamp = ev.has_pid = 1;
	ev.timestamp = ts_ns;
	ev.pid = prev_pid;
	sw.prev_comm = utf8(prev_comm, pbuf);
	sw.has_prev_pid = sw.has_prev_state = sw.has_next_pid = 1;
	sw.prev_pid = (int32_t)prev_pid;
	sw.prev_state = (int64_t)prev_state;
	sw.next_comm = utf8(next_comm, nbuf);
	sw.next_pid = (int32_t)next_pid;
	ev.event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH;
	ev.sched_switch = &sw;
	put_ftrace(w, seq, cpu, &ev);
}

void fmt_pf_sched_wakeup(struct fmt_pf *w, uint32_t seq, int cpu, uint64_t ts_ns, uint32_t cur_pid,
			 const char *comm, uint32_t pid)
{
	Perfetto__Protos__FtraceEvent ev = PERFETTO__PROTOS__FTRACE_EVENT__INIT;
	Perfetto__Protos__SchedWakeupFtraceEvent wk = PERFETTO__PROTOS__SCHED_WAKEUP_FTRACE_EVENT__INIT;
	char buf[NAME_MAX_BYTES];

	ev.has_timestamp = ev.has_pid = 1;
	ev.timestamp = ts_ns;
	ev.pid = cur_pid;
	wk.comm = utf8(comm, buf);
	wk.has_pid = wk.has_success = 1;
	wk.pid = (int32_t)pid;
	wk.success = 1;
	ev.event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKEUP;
	ev.sched_wakeup = &wk;
	put_ftrace(w, seq, cpu, &ev);
}

int fmt_pf_end(struct fmt_pf *w)
{
	int rc = w->enomem ? -ENOMEM : 0;

	free(w->buf);
	w->buf = NULL;
	w->cap = 0;
	return rc;
}

/*
 * reader/names.c - names for records, arguments and threads, and event
 * specifications ("NAME", "FUNC:entry", "FUNC:*", "0x102", "all").
 *
 * Naming rule (docs/FORMAT.md, end of "The metadata file"): the catalogue
 * entry of the id; else, for a named function, NAME:entry, NAME:exit or
 * NAME:N (klog's KT_EVENT_ENTRY/EXIT codes 1 and 2); else F<func>:E<event>.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "reader/internal.h"

static const char *const word_names[KTRACE_MAX_WORDS] = {
	"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7",
	"w8", "w9", "w10", "w11", "w12", "w13", "w14",
};
static const char *const abcd[4] = { "a", "b", "c", "d" };

static unsigned group(unsigned cls)
{
	return cls == KTRACE_CLASS_LOG4 ? KTRACE_CLASS_LOG2 : cls;
}

const struct ktr_event *ktr_event_find(const struct ktr_trace *t, unsigned cls, unsigned id)
{
	size_t lo = 0, hi = t->nevents;
	unsigned g = group(cls);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ktr_event *e = &t->events[mid];
		unsigned eg = group(e->cls);

		if (eg == g && e->id == id)
			return e;
		if (eg < g || (eg == g && e->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return t->sub ? ktr_event_find(t->sub, cls, id) : NULL; /* DIR/kernel's catalogue */
}

const struct ktr_event *ktr_event_at(const struct ktr_trace *t, size_t i)
{
	if (i < t->nevents)
		return &t->events[i];
	return t->sub ? ktr_event_at(t->sub, i - t->nevents) : NULL;
}

const char *ktr_func_name(const struct ktr_trace *t, unsigned func)
{
	return func < 256 ? t->funcs[func] : NULL;
}

static const char *gap_name(enum ktr_gap g)
{
	switch (g) {
	case KTR_GAP_LOST:
		return "[lost]";
	case KTR_GAP_OVERWRITTEN:
		return "[overwritten]";
	case KTR_GAP_DROPPED:
		return "[dropped]";
	default:
		return "[corrupt]";
	}
}

/* The name of static event @id (LOG2/LOG4 id space) into @buf. */
static const char *event_name(const struct ktr_trace *t, unsigned id, char *buf, size_t len)
{
	const struct ktr_event *e = ktr_event_find(t, KTRACE_CLASS_LOG2, id);
	unsigned func = KTRACE_EVENT_FUNC(id), code = KTRACE_EVENT_CODE(id);
	const char *fn = ktr_func_name(t, func);

	if (e)
		snprintf(buf, len, "%s", e->name);
	else if (fn && code == 1)
		snprintf(buf, len, "%s:entry", fn);
	else if (fn && code == 2)
		snprintf(buf, len, "%s:exit", fn);
	else if (fn)
		snprintf(buf, len, "%s:%u", fn, code);
	else
		snprintf(buf, len, "F%u:E%u", func, code);
	return buf;
}

/* The (func, site) pair of CALL record @r without reporting anything. */
static void call_addrs(const struct ktr_trace *t, const struct ktr_rec *r, uint64_t *func,
		       uint64_t *site)
{
	uint32_t idx = KTRACE_CALL_SITE(r->id, r->w[0]);

	*func = *site = 0;
	if (idx == KTRACE_CALLSITE_NONE) {
		if (r->nwords >= 4) {
			*func = r->w[2];
			*site = r->w[3];
		}
	} else {
		ktr_callsite(t, idx, func, site);
	}
}

/* CALL records without a symbolizer: "call:0xFUNC" ("call:?" if unknown). */
static void call_name(const struct ktr_trace *t, const struct ktr_rec *r, char *buf, size_t len)
{
	uint64_t func, site;

	call_addrs(t, r, &func, &site);
	if (func)
		snprintf(buf, len, "call:0x%llx", (unsigned long long)func);
	else
		snprintf(buf, len, "call:?");
}

const char *ktr_rec_name(const struct ktr_trace *t, const struct ktr_rec *r, char *buf, size_t len)
{
	const struct ktr_event *e;

	if (!len)
		return buf;
	if (r->kind == KTR_GAP)
		snprintf(buf, len, "%s", gap_name(r->gap));
	else if (r->cls == KTRACE_CLASS_LOG2 || r->cls == KTRACE_CLASS_LOG4)
		event_name(t, r->id, buf, len);
	else if (r->cls == KTRACE_CLASS_CALL && r->nwords >= 1)
		call_name(t, r, buf, len);
	else if ((e = ktr_event_find(t, r->cls, r->id)) && r->cls == KTRACE_CLASS_KEVENT)
		snprintf(buf, len, "%s", e->name);
	else
		snprintf(buf, len, "class %u id %u", r->cls, r->id);
	return buf;
}

const char *ktr_rec_category(const struct ktr_trace *t, const struct ktr_rec *r)
{
	const struct ktr_event *e;

	if (r->kind == KTR_GAP)
		return "ktrace";
	if (r->cls == KTRACE_CLASS_CALL)
		return "call";
	if (r->cls == KTRACE_CLASS_LOG2 || r->cls == KTRACE_CLASS_LOG4 ||
	    r->cls == KTRACE_CLASS_KEVENT) {
		e = ktr_event_find(t, r->cls, r->id);
		return e && e->category ? e->category : "default";
	}
	return "unknown";
}

unsigned ktr_rec_args(const struct ktr_trace *t, const struct ktr_rec *r, const char **names,
		      uint64_t *vals)
{
	const struct ktr_event *e;
	unsigned n = 0, nw = r->nwords;

	if (r->kind == KTR_GAP)
		return 0;
	if (r->cls == KTRACE_CLASS_CALL && nw >= 1) {
		/* decoded: entry and duration in ns, depth, signal nesting, flags, addresses */
		static const char *const cn[] = { "entry", "dur", "depth", "sig", "flags", "func", "site" };
		uint64_t w0 = r->w[0], dur = KTRACE_CALL_DUR_LO(w0) | (nw >= 2 ? r->w[1] << 32 : 0);
		uint64_t entry = dur <= r->raw ? ktr_raw_to_ns(t, r->raw - dur) : 0;

		if (entry > r->ns)
			entry = r->ns;
		vals[0] = entry;
		vals[1] = r->ns - entry;
		vals[2] = KTRACE_CALL_DEPTH(w0);
		vals[3] = KTRACE_CALL_SIG(w0);
		vals[4] = KTRACE_CALL_FLAGS(w0);
		call_addrs(t, r, &vals[5], &vals[6]);
		for (unsigned i = 0; i < 7; i++)
			names[i] = cn[i];
		return 7;
	}
	if (nw > KTRACE_MAX_WORDS)
		nw = KTRACE_MAX_WORDS;
	e = (r->cls == KTRACE_CLASS_LOG2 || r->cls == KTRACE_CLASS_LOG4 ||
	     r->cls == KTRACE_CLASS_KEVENT) ? ktr_event_find(t, r->cls, r->id) : NULL;
	if (r->cls == KTRACE_CLASS_LOG4) {
		/* u32 a, b, c, d: a in the low half of word 0 */
		unsigned split = nw < 2 ? nw : 2;

		for (unsigned i = 0; i < 2 * split; i++) {
			names[n] = e && i < e->nargs && e->args[i][0] ? e->args[i] : abcd[i];
			vals[n++] = (uint32_t)(r->w[i / 2] >> (32 * (i % 2)));
		}
		for (unsigned i = split; i < nw && n < KTRACE_MAX_WORDS; i++) {
			names[n] = word_names[i];
			vals[n++] = r->w[i];
		}
		return n;
	}
	if (r->cls == KTRACE_CLASS_KEVENT && nw >= 1) {
		/* word 0 is the task (ktr_rec tid/pid, lkst.h); the arguments follow */
		for (unsigned i = 1; i < nw; i++) {
			names[n] = e && i - 1 < e->nargs && e->args[i - 1][0] ? e->args[i - 1]
									   : word_names[i];
			vals[n++] = r->w[i];
		}
		return n;
	}
	for (unsigned i = 0; i < nw; i++) {
		if (e && i < e->nargs && e->args[i][0])
			names[n] = e->args[i];
		else if (r->cls == KTRACE_CLASS_LOG2 && i < 2)
			names[n] = abcd[i];
		else
			names[n] = word_names[i];
		vals[n++] = r->w[i];
	}
	return n;
}

unsigned ktr_rec_hidden(const struct ktr_rec *r)
{
	if (r->kind == KTR_GAP || r->cls != KTRACE_CLASS_KEVENT || r->nwords < 1)
		return 0;
	return KTRACE_KEVENT_HIDDEN(r->w[0]);
}

char *ktr_rec_comm(const struct ktr_rec *r, char *buf, size_t len)
{
	char b[17];

	if (r->kind == KTR_GAP || r->cls != KTRACE_CLASS_KEVENT || r->id != KTRACE_LKST_PROCESS_COMM ||
	    r->nwords < 5 || !len)
		return NULL;
	for (unsigned i = 0; i < 16; i++) {
		unsigned char ch = (unsigned char)(r->w[3 + i / 8] >> (8 * (i % 8)));

		b[i] = (char)(ch && (ch <= 0x20 || ch >= 0x7f) ? '?' : ch);
	}
	b[16] = 0;
	snprintf(buf, len, "%s", b[0] ? b : "?");
	return buf;
}

int ktr_thread(const struct ktr_trace *t, uint32_t tid, uint32_t *pid, const char **comm)
{
	size_t lo = 0, hi = t->nthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ktr_thread_ent *e = &t->threads[mid];

		if (e->tid == tid) {
			if (pid)
				*pid = e->pid;
			if (comm)
				*comm = e->comm;
			return 1;
		}
		if (e->tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return t->sub ? ktr_thread(t->sub, tid, pid, comm) : 0; /* tasks DIR/kernel saw */
}

int ktr_thread_at(const struct ktr_trace *t, size_t i, uint32_t *tid, uint32_t *pid,
		  const char **comm)
{
	if (i >= t->nthreads)
		return t->sub ? ktr_thread_at(t->sub, i - t->nthreads, tid, pid, comm) : 0;
	if (tid)
		*tid = t->threads[i].tid;
	if (pid)
		*pid = t->threads[i].pid;
	if (comm)
		*comm = t->threads[i].comm;
	return 1;
}

/* A number, or a letter @prefix then a number ("F3", "E16"); -1 if neither. */
static long num_or_prefixed(const char *s, size_t len, char prefix, unsigned long max)
{
	uint64_t v;

	if (len > 1 && (s[0] == prefix || s[0] == prefix + 32)) {
		s++;
		len--;
	}
	if (ktr_parse_u64(s, len, &v) || v > max)
		return -1;
	return (long)v;
}

int ktr_resolve_events(const struct ktr_trace *t, const char *spec, uint8_t *map)
{
	const char *colon;
	int n = 0;
	uint64_t v;

	if (!spec || !*spec)
		return -EINVAL;
	if (strcmp(spec, "all") == 0 || strcmp(spec, "*") == 0) {
		memset(map, 1, 65536);
		return 65536;
	}
	for (size_t i = 0; i < t->nevents; i++) {
		const struct ktr_event *e = &t->events[i];

		if (group(e->cls) == KTRACE_CLASS_LOG2 && strcmp(e->name, spec) == 0) {
			map[e->id & 0xffff] = 1;
			n++;
		}
	}
	if (n)
		return n;
	if (ktr_parse_u64(spec, strlen(spec), &v) == 0) {
		if (v > 65535)
			return -EINVAL;
		map[v] = 1;
		return 1;
	}
	colon = strrchr(spec, ':');
	if (colon) {
		size_t flen = (size_t)(colon - spec);
		const char *ev = colon + 1;
		long func = -1, code;

		for (unsigned f = 0; f < 256; f++)
			if (t->funcs[f] && strlen(t->funcs[f]) == flen &&
			    memcmp(t->funcs[f], spec, flen) == 0) {
				func = f;
				break;
			}
		if (func < 0)
			func = num_or_prefixed(spec, flen, 'F', 255);
		if (func < 0)
			return -EINVAL;
		if (strcmp(ev, "*") == 0) {
			for (unsigned c = 0; c < 256; c++)
				map[KTRACE_EVENT_ID((unsigned)func, c)] = 1;
			return 256;
		}
		if (strcmp(ev, "entry") == 0)
			code = 1;
		else if (strcmp(ev, "exit") == 0)
			code = 2;
		else
			code = num_or_prefixed(ev, strlen(ev), 'E', 255);
		if (code < 0)
			return -EINVAL;
		map[KTRACE_EVENT_ID((unsigned)func, (unsigned)code)] = 1;
		return 1;
	}
	return -EINVAL;
}

/*
 * cli/cmd_print.c - `ktrace print [options] DIR`: every record of a trace,
 * all streams merged by time, as text (one line per record), CSV with a
 * header (-C, like LKST's `lkstbuf print -C`) or Chrome/Perfetto
 * trace-event JSON (--json, opens in ui.perfetto.dev and chrome://tracing).
 *
 * Function call records (KFT) are named by their function's symbol and
 * show entry time, duration, depth and call site (a complete "X" event in
 * JSON).  Gaps (lost records, overwritten sub-buffers, dropped records,
 * corrupt or truncated data) are printed where they happened, as their own line, CSV
 * row or instant event; the reader's diagnostics go to stderr as they come.
 * Exit status: 0 clean, 1 the trace had errors (everything readable was
 * printed) or stdout failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "formats/formats.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"

#define CMD "print"

struct popts {
	struct ktr_syms *syms; /* names of CALL records' functions, made on first use */
	struct ka_names *names; /* -C: the rows' names and rows (analysis/rows.c), on first use */
	struct ka_rows *rows;
	int csv, json, relative, hex;
	struct cli_select sel;
	struct ka_ids cpus;
	const char *specs[64];
	int nspecs;
	uint8_t *evmap; /* 65536 bytes when --event was given */
	int64_t t0;
	int have_t0;
	struct fmt_te te; /* --json */
	const char *dir;
	struct keytext **keytext; /* text: per call-site key (call_text()) */
	size_t nkeytext;
	struct { /* text: the last call's " CPU PID/TID" columns */
		int cpu;
		uint32_t pid, tid;
		uint8_t len;
		char s[48];
	} who;
};

/* A call's texts: " NAME" padded as print_text()'s "%-22s", then " at=SITE" ("" if none). */
struct keytext {
	uint16_t nlen, alen;
	char s[];
};

enum { OPT_CPU = CLI_OPT_LONG };

/* cli_opt_fn: --cpu, -e. */
static int take_option(void *arg, int key, const char *val)
{
	struct popts *o = arg;

	if (key == OPT_CPU) {
		if (cli_idlist_parse(val, UINT32_MAX, &o->cpus) < 0) {
			cli_error(CMD, "option '--cpu': '%s' is not a list of numbers", val);
			return 2;
		}
		return 0;
	}
	if (o->nspecs == 64) { /* -e */
		cli_error(CMD, "option '--event': at most 64 of them");
		return 2;
	}
	o->specs[o->nspecs++] = val;
	return 0;
}

static const struct cli_opt opts[] = {
	CLI_OPT_TEXT("Output:"),
	CLI_OPT_FLAG("csv", 'C', struct popts, csv, "CSV with a header line"),
	CLI_OPT_FLAG("json", 'j', struct popts, json, "Chrome/Perfetto trace-event JSON"),
	CLI_OPT_FLAG("relative", 'r', struct popts, relative, "times in ns since the first record"),
	CLI_OPT_FLAG("hex", 'x', struct popts, hex, "arguments in hexadecimal"),
	CLI_OPT_TEXT(""),
	CLI_OPT_TEXT("Filters (records only; gaps are always shown):"),
	CLI_OPT_INCLUDE(cli_select_opts),
	CLI_OPT("cpu", OPT_CPU, "LIST", "only these CPUs"),
	CLI_OPT("event", 'e', "SPEC", "only these events (repeatable): a name from the\n"
				      "catalogue, FUNC:entry, FUNC:exit, FUNC:N, FUNC:*,\n"
				      "a numeric id, or all"),
	CLI_OPT_TEXT(""),
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace print [options] [DIR]\n"
		"\n"
		"Print the records of the trace in DIR, every stream merged by time: one line\n"
		"per record with the time (ns of CLOCK_MONOTONIC), CPU, PID/TID, event name and\n"
		"arguments by name.  Lost, overwritten, dropped and corrupt data is shown where\n"
		"it happened; problems with the trace are reported on stderr.  DIR defaults\n"
		"to ./ktrace.data.\n",
	.opts = opts,
	.tail =
		"Exit status: 0 clean, 1 the trace has errors (all readable records were\n"
		"printed) or output failed, 2 usage error.  See ktrace-print(1).\n",
};

/* The options and DIR into @o.  Return: CLI_OPTS_GO, or the exit status. */
static int parse_options(struct popts *o, int argc, char **argv)
{
	int rc = cli_opts_parse(&cmd_opts, argc, argv, &o->sel, take_option, o);

	if (rc != CLI_OPTS_GO)
		return rc;
	if (o->csv && o->json) {
		cli_error(CMD, "options '--csv' and '--json' exclude each other");
		return 2;
	}
	o->dir = cli_select_dir(CMD, argc, argv, optind);
	return o->dir ? CLI_OPTS_GO : 2;
}

static int wanted(struct ktr_trace *t, const struct popts *o, const struct ktr_rec *r)
{
	struct ktr_call c;

	if (r->kind == KTR_GAP)
		return 1;
	if (r->cls == KTRACE_CLASS_CALL && ktr_call_decode(t, r, &c)) {
		if (!cli_select_call(&o->sel, &c))
			return 0;
	} else if (!cli_select_rec(&o->sel, r)) {
		return 0;
	}
	if (o->cpus.n && (r->cpu < 0 || !ka_ids_has(&o->cpus, (uint64_t)r->cpu)))
		return 0;
	if (o->evmap) {
		if (r->cls != KTRACE_CLASS_LOG2 && r->cls != KTRACE_CLASS_LOG4)
			return 0;
		if (!o->evmap[r->id & 0xffff])
			return 0;
	}
	return 1;
}

/* The time column: ns, or signed ns since the first item with -r. */
static void put_time(FILE *out, const struct popts *o, const struct ktr_rec *r, int width)
{
	if (o->relative)
		fprintf(out, "%*" PRId64, width, (int64_t)r->ns - o->t0);
	else
		fprintf(out, "%*" PRIu64, width, r->ns);
}

static void gap_text(const struct ktr_trace *t, const struct ktr_rec *r, char *buf, size_t len)
{
	const char *file = r->file ? strrchr(r->file, '/') : NULL;

	file = file ? file + 1 : r->file ? r->file : "?";
	switch (r->gap) {
	case KTR_GAP_LOST:
		snprintf(buf, len, "%" PRIu64 " record%s lost", r->count, r->count == 1 ? "" : "s");
		if (r->until_ns > r->ns)
			snprintf(buf + strlen(buf), len - strlen(buf), " in the next %.1f us",
				 (double)(r->until_ns - r->ns) / 1e3);
		break;
	case KTR_GAP_OVERWRITTEN:
		snprintf(buf, len, "%" PRIu64 " sub-buffer%s %s (stream %u)", r->count,
			 r->count == 1 ? "" : "s",
			 ktr_info(t)->flight ? "overwritten" : "missing", r->stream);
		break;
	case KTR_GAP_DROPPED:
		snprintf(buf, len, "%" PRIu64 " record%s dropped (stream %u full)", r->count,
			 r->count == 1 ? "" : "s", r->stream);
		break;
	default:
		snprintf(buf, len, "%s offset %" PRIu64 ": %s", file, r->offset,
			 r->what ? r->what : "corrupt data");
		break;
	}
}

static void put_value(FILE *out, const struct popts *o, uint64_t v)
{
	if (o->hex)
		fprintf(out, "0x%" PRIx64, v);
	else
		fprintf(out, "%" PRIu64, v);
}

/*
 * The name of record @r: for a CALL record the function's symbol
 * (reader/symbols.c, from the trace's maps), else ktr_rec_name().
 */
static const char *rec_name(const struct ktr_trace *t, const struct popts *o,
			    const struct ktr_rec *r, char *buf, size_t len)
{
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS];
	struct ktr_sym sym;

	if (r->kind != KTR_RECORD || r->cls != KTRACE_CLASS_CALL || !o->syms ||
	    ktr_rec_args(t, r, names, vals) < 7 || !vals[5])
		return ktr_rec_name(t, r, buf, len);
	ktr_sym_lookup_at(o->syms, vals[5], vals[0], 0, &sym); /* the load of the call's time */
	return ktr_sym_format(&sym, 1, buf, len);
}

/* A CALL record's fields: entry and duration (ns), depth, signal nesting, flags, call site. */
static void print_call_args(FILE *out, const struct ktr_trace *t, const struct popts *o,
			    const struct ktr_rec *r)
{
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS];
	struct ktr_sym sym;
	char site[256];

	ktr_rec_args(t, r, names, vals);
	fputs(" entry=", out);
	if (o->relative)
		fprintf(out, "%" PRId64, (int64_t)vals[0] - o->t0);
	else
		fprintf(out, "%" PRIu64, vals[0]);
	fprintf(out, " dur=%" PRIu64 " depth=%" PRIu64, vals[1], vals[2]);
	if (vals[3])
		fprintf(out, " sig=%" PRIu64, vals[3]);
	if (vals[4] & KTRACE_CALLF_UNFINISHED)
		fputs(" unfinished", out);
	if (vals[4] & KTRACE_CALLF_WATCH)
		fputs(" watch", out);
	if (vals[6] && o->syms)
		fprintf(out, " at=%s",
			ktr_sym_format(ktr_sym_lookup_at(o->syms, vals[6], vals[0], KTR_SYM_RETADDR, &sym),
				       2, site, sizeof(site)));
	else if (vals[6])
		fprintf(out, " at=0x%" PRIx64, vals[6]);
	fputc('\n', out);
}

static void print_text(FILE *out, const struct ktr_trace *t, const struct popts *o,
		       const struct ktr_rec *r)
{
	char name[128], pidtid[32];
	const char *names[KTRACE_MAX_WORDS], *sys;
	uint64_t vals[KTRACE_MAX_WORDS];
	unsigned n, hidden;

	put_time(out, o, r, 16);
	if (r->cpu >= 0)
		fprintf(out, " %3d", r->cpu);
	else
		fputs("   -", out);
	if (!r->pid && r->tid) /* a task whose process is not known (kernel channels) */
		snprintf(pidtid, sizeof(pidtid), "?/%" PRIu32, r->tid);
	else
		snprintf(pidtid, sizeof(pidtid), "%" PRIu32 "/%" PRIu32, r->pid, r->tid);
	fprintf(out, " %13s %-22s", pidtid, rec_name(t, o, r, name, sizeof(name)));
	if (r->kind == KTR_RECORD && r->cls == KTRACE_CLASS_CALL && r->nwords >= 1) {
		print_call_args(out, t, o, r);
		return;
	}
	if (r->kind == KTR_GAP) {
		char text[256];

		gap_text(t, r, text, sizeof(text));
		fprintf(out, " %s%s%s\n", cli_c_red(), text, cli_c_reset());
		return;
	}
	if (ktr_rec_comm(r, name, sizeof(name))) { /* a task's name: the comm as text */
		fprintf(out, " pid=%" PRIu32 " tgid=%" PRIu32 " comm=%s\n", (uint32_t)r->w[1], (uint32_t)r->w[2], name);
		return;
	}
	n = ktr_rec_args(t, r, names, vals);
	hidden = ktr_rec_hidden(r);
	for (unsigned i = 0; i < n; i++) {
		fprintf(out, " %s=", names[i]);
		if (hidden & (1u << i))
			fputs("hidden", out); /* a kernel address (lkst.h) */
		else
			put_value(out, o, vals[i]);
	}
	if ((sys = ka_syscall_name(t, r)))
		fprintf(out, " syscall=%s", sys);
	if (r->depth)
		fprintf(out, " (signal depth %u)", r->depth);
	fputc('\n', out);
}

/*
 * One record as a row of the schema export --format=csv and kd -c
 * --format=csv share (analysis/rows.c); -r makes time_ns relative.
 */
static struct ka_rows *csv_rows(struct ktr_trace *t, struct popts *o)
{
	if (!o->rows) {
		o->names = ka_names_new(t, o->sel.demangle);
		o->rows = o->names ? ka_rows_new(t, o->names, o->hex) : NULL;
		if (!o->rows) {
			cli_error(CMD, "out of memory");
			exit(1);
		}
	}
	return o->rows;
}

static void print_csv(FILE *out, struct ktr_trace *t, struct popts *o, const struct ktr_rec *r)
{
	struct fmt_row row;
	struct ktr_call c;

	if (ka_rows_of(csv_rows(t, o), r, &row, &c) == KA_ROW_NONE)
		return;
	if (o->relative)
		row.time_ns -= o->t0;
	fmt_row_csv(out, &row);
}

/*
 * Runs of calls (ktr_next_calls(), a ~20x faster path for the hundreds of
 * millions of CALL records of a function trace): the same lines as
 * print_text() and print_csv() write of each call's record, a text line
 * assembled without printf in one buffer (its pieces are bounded) and
 * written once, the function's name and call site formatted once per
 * call-site key.
 */

/* call @c's struct keytext into @k (@len bytes of room after it). */
static struct keytext *call_text_make(struct popts *o, const struct ktr_call *c, struct keytext *k,
				      size_t len)
{
	char name[512], site[256];
	struct ktr_sym sym;
	int n;

	if (c->func)
		ktr_sym_format(ktr_sym_lookup_at(o->syms, c->func, c->entry_ns, 0, &sym), 1, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "call:?");
	n = snprintf(k->s, len, " %-22s", name);
	k->nlen = (uint16_t)(n < (int)len ? n : (int)len - 1);
	k->alen = 0;
	if (c->site) {
		ktr_sym_format(ktr_sym_lookup_at(o->syms, c->site, c->entry_ns, KTR_SYM_RETADDR, &sym), 2,
			       site, sizeof(site));
		n = snprintf(k->s + k->nlen, len - k->nlen, " at=%s", site);
		k->alen = (uint16_t)(n < (int)(len - k->nlen) ? n : (int)(len - k->nlen) - 1);
	}
	return k;
}

/*
 * The texts of call @c's key, made on first use (@k: room for a key that
 * is not kept: extra keys of inline addresses, no memory).  The
 * symbolizer resolves tagged addresses in their load, so a key's texts
 * do not depend on the call's time.
 */
static const struct keytext *call_text(struct popts *o, const struct ktr_call *c, struct keytext *k,
				       size_t len)
{
	struct keytext *kept;
	size_t n;

	if (c->key < o->nkeytext && o->keytext[c->key])
		return o->keytext[c->key];
	call_text_make(o, c, k, len);
	if (c->key >= KTR_CALL_KEY_EXTRA)
		return k;
	if (c->key >= o->nkeytext) {
		size_t nn = o->nkeytext ? o->nkeytext : 1024;
		struct keytext **v;

		while (nn <= c->key)
			nn *= 2;
		if (!(v = realloc(o->keytext, nn * sizeof(*v))))
			return k;
		memset(v + o->nkeytext, 0, (nn - o->nkeytext) * sizeof(*v));
		o->keytext = v;
		o->nkeytext = nn;
	}
	n = sizeof(*k) + k->nlen + k->alen;
	if ((kept = malloc(n)))
		o->keytext[c->key] = memcpy(kept, k, n);
	return k;
}

/* A number of print's time columns at @p (-r: signed, since the first record). */
static char *time_to(char *p, const struct popts *o, uint64_t ns)
{
	int64_t v = (int64_t)ns - o->t0;

	if (!o->relative)
		return fmt_u64_to(p, ns);
	if (v < 0) {
		*p++ = '-';
		return fmt_u64_to(p, -(uint64_t)v);
	}
	return fmt_u64_to(p, (uint64_t)v);
}

/* The " CPU PID/TID" columns of call @c (print_text()'s), kept while they do not change. */
static const char *call_who(struct popts *o, const struct ktr_call *c)
{
	char num[24], *w = o->who.s, *p = num;

	if (c->cpu == o->who.cpu && c->pid == o->who.pid && c->tid == o->who.tid && o->who.len)
		return o->who.s;
	*w++ = ' ';
	if (c->cpu >= 0)
		w = fmt_rjust_to(w, num, (size_t)(fmt_u64_to(num, (unsigned)c->cpu) - num), 3);
	else
		w = stpcpy(w, "  -");
	*w++ = ' ';
	if (!c->pid && c->tid) /* "%13s" of PID/TID */
		*p++ = '?';
	else
		p = fmt_u64_to(p, c->pid);
	*p++ = '/';
	p = fmt_u64_to(p, c->tid);
	w = fmt_rjust_to(w, num, (size_t)(p - num), 13);
	o->who.len = (uint8_t)(w - o->who.s);
	o->who.cpu = c->cpu;
	o->who.pid = c->pid;
	o->who.tid = c->tid;
	return o->who.s;
}

/* print_text() of call @c's record, assembled in one buffer and written once. */
static void print_call_text(FILE *out, struct popts *o, const struct ktr_call *c)
{
	union {
		struct keytext k;
		char room[1024];
	} tmp;
	const struct keytext *k = call_text(o, c, &tmp.k, sizeof(tmp) - sizeof(tmp.k));
	const char *who = call_who(o, c);
	char line[1280], num[24], *p;

	p = fmt_rjust_to(line, num, (size_t)(time_to(num, o, c->exit_ns) - num), 16);
	p = (char *)memcpy(p, who, sizeof(o->who.s)) + o->who.len; /* (a constant size copies faster) */
	p = (char *)memcpy(p, k->s, k->nlen) + k->nlen;
	p = time_to(stpcpy(p, " entry="), o, c->entry_ns);
	p = fmt_u64_to(stpcpy(p, " dur="), c->dur_ns);
	p = fmt_u64_to(stpcpy(p, " depth="), c->depth);
	if (c->sig)
		p = fmt_u64_to(stpcpy(p, " sig="), c->sig);
	if (c->flags & KTRACE_CALLF_UNFINISHED)
		p = stpcpy(p, " unfinished");
	if (c->flags & KTRACE_CALLF_WATCH)
		p = stpcpy(p, " watch");
	p = (char *)memcpy(p, k->s + k->nlen, k->alen) + k->alen;
	*p++ = '\n';
	fwrite_unlocked(line, 1, (size_t)(p - line), out);
}

/* print_csv() of call @c's record. */
static void print_call_csv(FILE *out, struct ktr_trace *t, struct popts *o, const struct ktr_call *c)
{
	struct fmt_row row;

	ka_rows_call(csv_rows(t, o), c, &row);
	if (o->relative)
		row.time_ns -= o->t0;
	fmt_row_csv(out, &row);
}

/*
 * The calls ktr_next_calls() has next, printed; 0 when the next record
 * is not such a call (the caller takes it with ktr_next()).
 */
static size_t print_calls(struct ktr_trace *t, struct popts *o, FILE *out)
{
	struct ktr_call c[256];
	uint64_t off;
	unsigned stream;
	size_t n = ktr_next_calls(t, c, 256, &stream, &off);
	int all = cli_select_everything(&o->sel) && !o->cpus.n;

	if (n && !o->have_t0) {
		o->t0 = (int64_t)c[0].exit_ns;
		o->have_t0 = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!all && (!cli_select_call(&o->sel, &c[i]) ||
			     (o->cpus.n && (c[i].cpu < 0 || !ka_ids_has(&o->cpus, (uint64_t)c[i].cpu)))))
			continue;
		if (o->csv)
			print_call_csv(out, t, o, &c[i]);
		else
			print_call_text(out, o, &c[i]);
	}
	return n;
}

/* One record as a trace event (formats/json.c writes the document). */
static void print_json(const struct ktr_trace *t, struct popts *o, const struct ktr_rec *r)
{
	struct fmt_te *w = &o->te;
	char name[128];
	const char *names[KTRACE_MAX_WORDS], *ph = "i", *sys;
	uint64_t vals[KTRACE_MAX_WORDS];
	unsigned n;

	w->t0 = o->t0;
	if (r->kind == KTR_GAP) {
		char text[256];

		gap_text(t, r, text, sizeof(text));
		fmt_te_event(w, ktr_rec_name(t, r, name, sizeof(name)), "ktrace", "i", "g", r->ns, 0,
			     r->pid, r->tid);
		fmt_te_arg_str(w, "what", text);
		if (r->gap != KTR_GAP_CORRUPT)
			fmt_te_arg_u64(w, "count", r->count);
		fmt_te_arg_u64(w, "stream", r->stream);
		fmt_te_end_event(w);
		return;
	}
	rec_name(t, o, r, name, sizeof(name));
	n = ktr_rec_args(t, r, names, vals);
	if (r->cls == KTRACE_CLASS_CALL && r->nwords >= 1) {
		/*
		 * A complete ("X") event: ts = entry, dur = duration.  Only
		 * arguments that are the same on every call of a function and
		 * the exceptions: flame-graph importers (speedscope) tell
		 * frames apart by name and arguments, so a depth or CPU here
		 * would split one function into many frames.
		 */
		fmt_te_event(w, name, "call", "X", NULL, vals[0], vals[1], r->pid, r->tid);
		if (vals[3])
			fmt_te_arg_u64(w, "signal_depth", vals[3]);
		if (vals[4] & KTRACE_CALLF_UNFINISHED)
			fmt_te_arg_true(w, "unfinished");
		fmt_te_end_event(w);
		return;
	}
	switch (ka_static_slice(t, r, name, sizeof(name))) {
	case 'B': ph = "B"; break;
	case 'E': ph = "E"; break;
	}
	fmt_te_event(w, name, ktr_rec_category(t, r), ph, ph[0] == 'i' ? "t" : NULL, r->ns, 0, r->pid,
		     r->tid);
	fmt_te_args(w, names, vals, n, ktr_rec_hidden(r));
	if ((sys = ka_syscall_name(t, r)))
		fmt_te_arg_str(w, "syscall", sys);
	if (ph[0] == 'i') { /* not on slices: see the calls above */
		if (r->cpu >= 0)
			fmt_te_arg_u64(w, "cpu", (uint64_t)r->cpu);
		if (r->depth)
			fmt_te_arg_u64(w, "signal_depth", r->depth);
	}
	fmt_te_end_event(w);
}

/* The document's start: process_name / thread_name for every known thread. */
static int json_header(FILE *out, const struct ktr_trace *t, struct popts *o)
{
	const struct ktr_info *in = ktr_info(t);
	uint32_t tid, pid;
	const char *comm;

	o->te.relative = o->relative;
	o->te.hex = o->hex;
	if (fmt_te_begin(&o->te, out))
		return -ENOMEM;
	if (in->pid)
		fmt_te_meta(&o->te, "process_name", in->pid, in->pid, in->comm[0] ? in->comm : "?");
	for (size_t i = 0; ktr_thread_at(t, i, &tid, &pid, &comm); i++)
		fmt_te_meta(&o->te, "thread_name", pid, tid, comm);
	return 0;
}

static int json_footer(const struct ktr_trace *t, struct popts *o)
{
	const struct ktr_info *in = ktr_info(t);
	const char *kv[] = { "generator", "ktrace " KTRACE_VERSION, "clock", "CLOCK_MONOTONIC",
			     "host",      in->host,                 "channel", in->channel };

	return fmt_te_end(&o->te, kv, 4);
}

/* The events of --event, in the map of their ids.  Return: 0, or 2 (printed). */
static int resolve_events(struct ktr_trace *t, struct popts *o)
{
	if (!o->nspecs)
		return 0;
	o->evmap = calloc(1, 65536);
	for (int i = 0; o->evmap && i < o->nspecs; i++)
		if (ktr_resolve_events(t, o->specs[i], o->evmap) < 0) {
			cli_error(CMD, "option '--event': no event '%s' in %s/metadata", o->specs[i],
				  ktr_dir(t));
			return 2;
		}
	return 0;
}

/* Every selected record, in the chosen form. */
static void print_records(struct ktr_trace *t, struct popts *o, FILE *out)
{
	struct ktr_rec r;
	/* runs of calls: where every call is printed the same way (text needs names) */
	int runs = !o->json && !o->evmap && (o->csv || (o->syms = cli_select_syms(&o->sel, t)));

	for (;;) {
		if (runs && print_calls(t, o, out)) {
			cli_diags(CMD, t);
			if (ferror(out))
				break;
			continue;
		}
		if (!ktr_next(t, &r))
			break;
		cli_diags(CMD, t);
		if (!o->have_t0) {
			o->t0 = (int64_t)r.ns;
			o->have_t0 = 1;
		}
		if (!wanted(t, o, &r))
			continue;
		/* text and JSON name calls here; -C's rows have their own names (print_csv) */
		if (!o->csv && !o->syms && r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_CALL)
			o->syms = cli_select_syms(&o->sel, t);
		if (o->json)
			print_json(t, o, &r);
		else if (o->csv)
			print_csv(out, t, o, &r);
		else
			print_text(out, t, o, &r);
		if (ferror(out))
			break;
	}
	cli_diags(CMD, t);
}

/* The document: header, records, footer.  Return: the exit status. */
static int print_trace(struct ktr_trace *t, struct popts *o, FILE *out)
{
	int rc = 0;

	cli_diags(CMD, t);
	cli_pager_start();
	if (o->json && json_header(out, t, o)) {
		cli_error(CMD, "out of memory");
		return 1;
	} else if (o->csv)
		fputs(FMT_ROW_HEADER "\n", out);
	print_records(t, o, out);
	if (o->json && json_footer(t, o)) {
		cli_error(CMD, "--json: the JSON generator refused the document (a bug: please report)");
		rc = 1;
	}
	if (ktr_error_count(t))
		rc = 1;
	return rc;
}

/* `ktrace print`: options, the records. */
static int run(int argc, char **argv)
{
	struct popts o;
	struct ktr_trace *t = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	cli_select_init(&o.sel);
	rc = parse_options(&o, argc, argv);
	if (rc != CLI_OPTS_GO)
		return rc;
	t = cli_select_open(&o.sel, CMD, o.dir);
	if (!t)
		return 1;
	cli_select_window(&o.sel, t);
	rc = resolve_events(t, &o);
	if (!rc)
		rc = print_trace(t, &o, stdout);
	ktr_syms_free(o.syms);
	for (size_t i = 0; i < o.nkeytext; i++)
		free(o.keytext[i]);
	free(o.keytext);
	ka_rows_free(o.rows);
	ka_names_free(o.names);
	free(o.evmap);
	cli_select_free(&o.sel);
	cli_idlist_free(&o.cpus);
	ktr_close(t);
	return rc;
}

KTRACE_COMMAND_OPTS(print, "print a trace's records as text, CSV or Chrome/Perfetto JSON", run, cmd_opts);

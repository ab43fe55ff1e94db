/*
 * cli/cmd_kd.c - `ktrace kd [options] DIR`: KFT's kd ("KFT dump", seed 002)
 * for function traces: per function the number of calls, total time,
 * average and local (self) time, sorted by time; or (-c) the nested call
 * traces, with signal-handler sections marked as kd marked interrupts.
 *
 * The trace is read once, in record order (by exit time per thread).
 * reader/calltree.c rebuilds each thread's call tree on the fly, giving
 * every call its local time (duration minus its children's durations) and
 * the caller -> callee edges that fields m and n need.  The table needs
 * memory per function and per open call only, so it works on traces of
 * any length.  Call traces list calls in entry order, which needs a sort:
 * reader/callsort.c sorts them in bounded memory (temporary files when
 * there are many), then levels are rebuilt from entry/exit times.
 *
 * With kernel events in the trace (`ktrace record --kernel`: DIR/kernel,
 * merged by time), reader/sched.c follows the program's threads through
 * their context switches: field o is the time a function's thread was off
 * CPU during its calls, Local becomes on-CPU self time (the seed's KFT
 * caveat: time scheduled out no longer counts as the function's own), and
 * -c shows each switch-out inside the calls, at its nesting level.
 *
 * Times are microseconds, with three decimals (ns resolution) unless -u
 * asks for KFT's whole microseconds.  Exit status: 0, 1 the trace had
 * errors (everything readable was used) or output failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "formats/formats.h"
#include "analysis/analysis.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"
#include "reader/sched.h"

#define CMD "kd"
#define FIELD_LETTERS "Fctalsxmno"

enum kd_format { FMT_TEXT, FMT_CSV, FMT_JSON };

struct kopts {
	long top;           /* -n, -1 = all */
	uint64_t min_ns;    /* -t */
	int have_min;
	const char *fields; /* -f */
	char sort;          /* -s */
	int calls, longfmt, interlace, usec, verbose;
	enum kd_format format;
	size_t sort_mem;
	struct cli_select sel;
};

/* Per-function statistics. */
struct fn {
	uint64_t addr;      /* function address, 0 = unknown */
	uint64_t count, time, local, max, unfinished;
	uint64_t sum;       /* every call's duration (time counts recursion once) */
	uint64_t wlocal, off; /* wall-clock local time; off-CPU time during the calls */
	char *name;
	uint32_t best;      /* most time-consuming child (fn index), if have_best */
	uint64_t best_ns, best_count;
	int have_best;
};

/* Open-addressing map from a 64-bit key to a 32-bit value. */
struct map64 {
	uint64_t *k;
	uint32_t *v; /* value + 1, 0 = empty */
	size_t n, cap;
};

struct edge {
	uint32_t parent, child;
	uint64_t ns, count;
};

struct kd {
	struct kopts o;
	struct ktr_trace *t;
	struct ktr_syms *syms;
	struct fn *fns;
	size_t nfns, capfns;
	struct map64 by_key, by_addr, by_edge;
	struct edge *edges;
	size_t nedges, capedges;
	int want_edges;
	uint64_t lost, overwritten, corrupt, calls, records;
	uint64_t call_records; /* CALL records decoded, before --tid/--pid */
	/* kernel context switches (reader/sched.c), when the trace has them */
	struct ktr_sched *sched;
	struct ka_tasks *tasks;
	int offcpu;        /* switches were seen: o and on-CPU Local apply */
	struct ktr_ctree *ct_on; /* call trees over on-CPU durations */
	uint64_t klost;    /* kernel records lost */
};

static void help(FILE *out)
{
	fprintf(out,
		"usage: ktrace kd [options] [DIR]\n"
		"\n"
		"KFT's kd for a function trace (ktrace record): where the time goes.  Per\n"
		"function: calls, total time, average and local time (total minus the time\n"
		"in the functions it called), sorted by time; or the nested call traces.\n"
		"Times are in microseconds; DIR defaults to ./ktrace.data.  Time counts a\n"
		"recursive function once (its outermost calls), Average is per call.\n"
		"\n"
		"Table:\n"
		"  -n, --top N            only the N most time-consuming functions\n"
		"  -t, --time USECS       only functions whose total time is above USECS\n"
		"  -f, --fields FIELDS    columns by letter (default Fctal, Fctalo with kernel\n"
		"                         events):\n"
		"                           F function   c count     t total time\n"
		"                           a average    l local (self) time; on-CPU only\n"
		"                                        when the trace has context switches\n"
		"                           s sub-time (in callees)  x longest call\n"
		"                           m the most time-consuming child function\n"
		"                           n how many times m was called by the function\n"
		"                           o off-CPU time: the thread was scheduled out\n"
		"                             during the calls (`ktrace record --kernel`)\n"
		"  -s, --sort FIELD       sort by a field letter: t (default), l, a, c, s, x,\n"
		"                         or F (by name)\n"
		"\n"
		"Call traces:\n"
		"  -c, --calls            nested call traces ('|' per level; signal-handler\n"
		"                         sections between '!!!! start' and '!!!! end', '!'\n"
		"                         per level), one thread after another\n"
		"  -l, --long             with -c: timing data (Entry, Duration, Local)\n"
		"                         (with kernel events, -c also shows every switch-out\n"
		"                         inside the calls: how long, blocked or preempted)\n"
		"  -i, --interlace        with -c: all threads interlaced in time order,\n"
		"                         thread switches marked\n"
		"      --sort-mem BYTES   memory for ordering calls (default 64M; K, M, G)\n"
		"\n"
		"Both:\n"
		"      --format FORMAT    text (default), csv or json: the table with every\n"
		"                         field, or with -c one row per call (the columns of\n"
		"                         ktrace export --format=csv); times in ns\n"
		CLI_SELECT_HELP
		"  -u, --usec             whole microseconds, as KFT printed them\n"
		"  -v, --verbose          reading statistics on stderr\n"
		CLI_OUTPUT_HELP
		"  -h, --help             this text\n"
		"\n"
		"A call whose exit was not seen (unfinished) counts with the time until its\n"
		"record was written.  Exit status: 0, 1 the trace has errors (all readable\n"
		"calls were used) or output failed, 2 usage error.  See ktrace-kd(1).\n");
}

/* ------------------------------------------------------------------ */
/* Small containers                                                    */
/* ------------------------------------------------------------------ */

static size_t hash64(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

/* The value of @k, or -1. */
static long map_get(const struct map64 *m, uint64_t k)
{
	if (!m->cap)
		return -1;
	for (size_t i = hash64(k, m->cap - 1); m->v[i]; i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k)
			return (long)m->v[i] - 1;
	return -1;
}

/* Set @k to @v.  Return: 0 or -ENOMEM. */
static int map_put(struct map64 *m, uint64_t k, uint32_t v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 1024;
		uint64_t *nk = malloc(cap * sizeof(*nk));
		uint32_t *nv = calloc(cap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->v[j])
				continue;
			for (i = hash64(m->k[j], cap - 1); nv[i]; i = (i + 1) & (cap - 1))
				;
			nk[i] = m->k[j];
			nv[i] = m->v[j];
		}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = cap;
	}
	for (i = hash64(k, m->cap - 1); m->v[i]; i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k) {
			m->v[i] = v + 1;
			return 0;
		}
	m->k[i] = k;
	m->v[i] = v + 1;
	m->n++;
	return 0;
}

static void map_free(struct map64 *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Microseconds of @ns: "123.456", or "123" with -u. */
static const char *us(const struct kopts *o, uint64_t ns, char *buf, size_t len)
{
	return fmt_us((int64_t)ns, o->usec, buf, len);
}

/* A signed time relative to the origin, in microseconds. */
static const char *us_rel(const struct kopts *o, uint64_t ns, uint64_t origin, char *buf,
			  size_t len)
{
	return fmt_us((int64_t)(ns - origin), o->usec, buf, len);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/* The fn index of call @c (by its key, then by its function address). */
static long fn_of(struct kd *k, const struct ktr_call *c)
{
	long i = map_get(&k->by_key, c->key);
	struct fn *f;

	if (i >= 0)
		return i;
	i = map_get(&k->by_addr, c->func);
	if (i < 0) {
		if (k->nfns == k->capfns) {
			size_t cap = k->capfns ? 2 * k->capfns : 256;
			struct fn *n = realloc(k->fns, cap * sizeof(*n));

			if (!n)
				return -1;
			k->fns = n;
			k->capfns = cap;
		}
		f = &k->fns[k->nfns];
		memset(f, 0, sizeof(*f));
		f->addr = c->func;
		i = (long)k->nfns++;
		if (map_put(&k->by_addr, c->func, (uint32_t)i) < 0)
			return -1;
	}
	if (map_put(&k->by_key, c->key, (uint32_t)i) < 0)
		return -1;
	return i;
}

static void on_child(void *arg, uintptr_t parent, uintptr_t child, uint64_t ns, uint64_t count)
{
	struct kd *k = arg;
	uint64_t key = (uint64_t)parent << 32 | (uint32_t)child;
	long i = map_get(&k->by_edge, key);

	if (i < 0) {
		if (k->nedges == k->capedges) {
			size_t cap = k->capedges ? 2 * k->capedges : 1024;
			struct edge *n = realloc(k->edges, cap * sizeof(*n));

			if (!n)
				return;
			k->edges = n;
			k->capedges = cap;
		}
		i = (long)k->nedges;
		if (map_put(&k->by_edge, key, (uint32_t)i) < 0)
			return;
		k->edges[i].parent = (uint32_t)parent;
		k->edges[i].child = (uint32_t)child;
		k->edges[i].ns = 0;
		k->edges[i].count = 0;
		k->nedges++;
	}
	k->edges[i].ns += ns;
	k->edges[i].count += count;
}

/* Read every record: statistics, and the calls into @sorter for -c.  Return: 0 or -errno. */
static int read_trace(struct kd *k, struct ktr_callsort *sorter)
{
	struct ktr_ctree *ct = ktr_ctree_new();
	struct ktr_outer *outer = ktr_outer_new();
	struct ka_progress *prog = ka_progress_start(k->t, CMD, 0);
	struct ktr_rec r;
	struct ktr_call c;
	int rc = 0;

	k->ct_on = ktr_ctree_new();
	if (!ct || !k->ct_on || !outer) {
		ka_progress_end(prog);
		ktr_ctree_free(ct);
		ktr_outer_free(outer);
		return -ENOMEM;
	}
	while (ktr_next(k->t, &r)) {
		long fi;
		uint64_t local, off = 0;
		struct fn *f;

		k->records++;
		ka_progress_rec(prog, &r);
		if (k->sched && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT)) {
			/* a kernel event: only the context switches matter here */
			ka_tasks_feed(k->tasks, &r);
			ktr_sched_feed(k->sched, k->t, &r);
			if (r.kind == KTR_GAP && r.gap != KTR_GAP_CORRUPT)
				k->klost += r.count;
			continue;
		}
		if (r.kind == KTR_GAP) {
			if (r.gap == KTR_GAP_OVERWRITTEN)
				k->overwritten += r.count;
			else if (r.gap == KTR_GAP_CORRUPT)
				k->corrupt++;
			else
				k->lost += r.count;
			if (sorter && ka_ids_has(&k->o.sel.tids, r.tid) && ka_ids_has(&k->o.sel.pids, r.pid)) {
				struct ktr_callent e = { 0 };

				e.entry_ns = r.ns;
				e.flags = KTR_CALLENT_GAP;
				e.key = r.gap;
				e.local_ns = r.count;
				e.thread = ktr_callsort_thread(sorter, r.pid, r.tid);
				e.cpu = (uint32_t)r.cpu;
				if ((rc = ktr_callsort_add(sorter, &e)) < 0)
					break;
			}
			continue;
		}
		if (!ktr_call_decode(k->t, &r, &c))
			continue;
		k->call_records++;
		if (!cli_select_call(&k->o.sel, &c))
			continue;
		k->calls++;
		fi = fn_of(k, &c);
		if (fi < 0) {
			rc = -ENOMEM;
			break;
		}
		local = ktr_ctree_add(ct, &c, (uintptr_t)fi, k->want_edges ? on_child : NULL, k);
		f = &k->fns[fi];
		f->wlocal += local;
		if (k->sched && ktr_sched_switches(k->sched)) {
			/* on-CPU local time: the same call tree over on-CPU durations */
			struct ktr_call on = c;

			k->offcpu = 1;
			off = ktr_sched_offcpu(k->sched, c.tid, c.entry_ns, c.exit_ns, NULL, NULL);
			on.dur_ns = off < c.dur_ns ? c.dur_ns - off : 0;
			local = ktr_ctree_add(k->ct_on, &on, (uintptr_t)fi, NULL, NULL);
			f->off += off;
		}
		f->count++;
		f->time += ktr_outer_add(outer, &c, (uint64_t)fi);
		f->sum += c.dur_ns;
		f->local += local;
		if (c.dur_ns > f->max)
			f->max = c.dur_ns;
		if (c.flags & KTRACE_CALLF_UNFINISHED)
			f->unfinished++;
		if (sorter) {
			struct ktr_callent e;

			e.entry_ns = c.entry_ns;
			e.dur_ns = c.dur_ns;
			e.local_ns = local;
			e.key = (uint32_t)fi;
			e.thread = ktr_callsort_thread(sorter, c.pid, c.tid);
			e.depth = (uint16_t)(c.depth > 0xffff ? 0xffff : c.depth);
			e.sig = (uint8_t)c.sig;
			e.flags = (uint8_t)c.flags;
			e.cpu = (uint32_t)c.cpu;
			if ((rc = ktr_callsort_add(sorter, &e)) < 0)
				break;
		}
		if ((k->records & 0xffff) == 0)
			cli_diags(CMD, k->t);
	}
	ka_progress_end(prog);
	cli_diags(CMD, k->t);
	ktr_ctree_free(ct);
	ktr_outer_free(outer);
	ktr_ctree_free(k->ct_on);
	k->ct_on = NULL;
	return rc;
}

/* Names for every function, from the symbolizer. */
static void name_functions(struct kd *k)
{
	char buf[512];

	for (size_t i = 0; i < k->nfns; i++) {
		struct fn *f = &k->fns[i];
		struct ktr_sym s;

		if (!f->addr) {
			f->name = strdup("?");
			continue;
		}
		ktr_sym_lookup(k->syms, f->addr, 0, &s);
		f->name = strdup(ktr_sym_format(&s, 1, buf, sizeof(buf)));
	}
	cli_diags(CMD, k->t);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

static uint64_t field_value(const struct fn *f, char c)
{
	switch (c) {
	case 'c': return f->count;
	case 't': return f->time;
	case 'a': return f->count ? f->sum / f->count : 0;
	case 'l': return f->local;
	case 's': return f->time > f->wlocal ? f->time - f->wlocal : 0;
	case 'o': return f->off;
	case 'x': return f->max;
	case 'n': return f->have_best ? f->best_count : 0;
	default: return 0;
	}
}

static char sort_key;

static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = *(const struct fn *const *)a, *y = *(const struct fn *const *)b;
	uint64_t vx, vy;

	if (sort_key == 'F') {
		int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");

		if (c)
			return c;
		return x->addr < y->addr ? -1 : x->addr > y->addr;
	}
	vx = field_value(x, sort_key);
	vy = field_value(y, sort_key);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->time != y->time)
		return x->time > y->time ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static const char *header_of(char c)
{
	switch (c) {
	case 'F': return "Function";
	case 'c': return "Count";
	case 't': return "Time";
	case 'a': return "Average";
	case 'l': return "Local";
	case 's': return "Sub-time";
	case 'x': return "Max";
	case 'm': return "Max-child";
	case 'n': return "Child-count";
	case 'o': return "Off-CPU";
	default: return "?";
	}
}

/* Seed widths: Function 25, Count 5, times 8. */
static int min_width(char c)
{
	return c == 'F' ? 25 : c == 'c' ? 5 : c == 'm' ? 25 : (int)strlen(header_of(c)) > 8 ? (int)strlen(header_of(c)) : 8;
}

static const char *cell(const struct kd *k, const struct fn *f, char c, char *buf, size_t len)
{
	switch (c) {
	case 'F': return f->name ? f->name : "?";
	case 'm': return f->have_best ? k->fns[f->best].name : "-";
	case 'c':
	case 'n':
		snprintf(buf, len, "%" PRIu64, field_value(f, c));
		return buf;
	default:
		return us(&k->o, field_value(f, c), buf, len);
	}
}

/*
 * The table as CSV or JSON: every field, times in ns, the conventions of
 * cli/rows.h (docs/READING.md lists the columns).
 */
static void write_table_rows(struct kd *k, FILE *out, struct fn **rows, size_t nrows)
{
	static const char *const cols[] = { "name", "count", "total_ns", "average_ns", "self_ns",
					    "sub_ns", "max_ns", "unfinished", "top_child",
					    "top_child_calls", "offcpu_ns" };
	size_t ncols = sizeof(cols) / sizeof(cols[0]) - (k->offcpu ? 0 : 1);

	if (k->o.format == FMT_CSV) {
		for (size_t j = 0; j < ncols; j++)
			fprintf(out, "%s%s", j ? "," : "", cols[j]);
		fputc('\n', out);
	} else {
		fputs("{\"functions\":[", out);
	}
	for (size_t i = 0; i < nrows && !ferror(out); i++) {
		const struct fn *f = rows[i];
		uint64_t v[] = { f->count, f->time, field_value(f, 'a'), f->local, field_value(f, 's'),
				 f->max, f->unfinished };
		const char *child = f->have_best ? k->fns[f->best].name : "";

		if (k->o.format == FMT_CSV) {
			fmt_csv_str(out, f->name ? f->name : "?");
			for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
				fprintf(out, ",%" PRIu64, v[j]);
			fputc(',', out);
			fmt_csv_str(out, child);
			fprintf(out, ",%" PRIu64, f->have_best ? f->best_count : 0);
			if (k->offcpu)
				fprintf(out, ",%" PRIu64, f->off);
			fputc('\n', out);
			continue;
		}
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		fmt_json_str(out, f->name ? f->name : "?");
		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
			fprintf(out, ",\"%s\":%" PRIu64, cols[j + 1], v[j]);
		fputs(",\"top_child\":", out);
		if (f->have_best)
			fmt_json_str(out, child);
		else
			fputs("null", out);
		fprintf(out, ",\"top_child_calls\":%" PRIu64, f->have_best ? f->best_count : 0);
		if (k->offcpu)
			fprintf(out, ",\"offcpu_ns\":%" PRIu64, f->off);
		fputc('}', out);
	}
	if (k->o.format == FMT_JSON)
		fputs("\n]}\n", out);
}

static int print_table(struct kd *k, FILE *out)
{
	const char *fl = k->o.fields;
	size_t nf = strlen(fl), nrows = 0;
	struct fn **rows = malloc((k->nfns ? k->nfns : 1) * sizeof(*rows));
	int *w = calloc(nf, sizeof(*w));
	char buf[64];

	if (!rows || !w) {
		free(rows);
		free(w);
		return -ENOMEM;
	}
	if (k->want_edges) {
		for (size_t i = 0; i < k->nedges; i++) {
			const struct edge *e = &k->edges[i];
			struct fn *p = &k->fns[e->parent];

			if (!p->have_best || e->ns > p->best_ns ||
			    (e->ns == p->best_ns && e->count > p->best_count)) {
				p->have_best = 1;
				p->best = e->child;
				p->best_ns = e->ns;
				p->best_count = e->count;
			}
		}
	}
	for (size_t i = 0; i < k->nfns; i++)
		if (!k->o.have_min || k->fns[i].time > k->o.min_ns)
			rows[nrows++] = &k->fns[i];
	sort_key = k->o.sort;
	qsort(rows, nrows, sizeof(*rows), cmp_fn);
	if (k->o.top >= 0 && (size_t)k->o.top < nrows)
		nrows = (size_t)k->o.top;
	if (k->o.format != FMT_TEXT) {
		write_table_rows(k, out, rows, nrows);
		free(rows);
		free(w);
		return 0;
	}
	for (size_t j = 0; j < nf; j++) {
		w[j] = min_width(fl[j]);
		for (size_t i = 0; i < nrows; i++) {
			int l = (int)strlen(cell(k, rows[i], fl[j], buf, sizeof(buf)));

			if ((fl[j] == 'F' || fl[j] == 'm') && l > 60)
				l = 60; /* longer names overflow their column */
			if (l > w[j])
				w[j] = l;
		}
	}
	fputs(cli_c_bold(), out);
	for (size_t j = 0; j < nf; j++) {
		int left = fl[j] == 'F' || fl[j] == 'm';

		if (left && j == nf - 1) /* no trailing blanks */
			fprintf(out, "%s%s", j ? " " : "", header_of(fl[j]));
		else
			fprintf(out, "%s%*s", j ? " " : "", left ? -w[j] : w[j], header_of(fl[j]));
	}
	fprintf(out, "%s\n", cli_c_reset());
	for (size_t j = 0; j < nf; j++) {
		fputs(j ? " " : "", out);
		for (int d = 0; d < w[j]; d++)
			fputc('-', out);
	}
	fputc('\n', out);
	for (size_t i = 0; i < nrows && !ferror(out); i++) {
		for (size_t j = 0; j < nf; j++) {
			int left = fl[j] == 'F' || fl[j] == 'm';
			const char *s = cell(k, rows[i], fl[j], buf, sizeof(buf));

			if (left && j == nf - 1)
				fprintf(out, "%s%s", j ? " " : "", s);
			else
				fprintf(out, "%s%*s", j ? " " : "", left ? -w[j] : w[j], s);
		}
		fputc('\n', out);
	}
	free(rows);
	free(w);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Call traces                                                         */
/* ------------------------------------------------------------------ */

struct open_call {
	uint64_t entry, exit;
	unsigned depth;
};

/* Per-thread state while printing call traces. */
struct tstate {
	struct open_call *st;
	size_t n, cap;
	unsigned sig;
	unsigned base[16]; /* level where the section of signal nesting i began */
	uint64_t cursor;   /* context switches before this time are printed */
	uint64_t max_exit; /* the latest exit of the thread's calls so far */
	int used;
};

/* Printing the context switches of one thread among its calls (-c). */
struct swprint {
	struct kd *k;
	FILE *out;
	struct tstate *t;
	uint64_t from, to, origin;
	uint32_t tid;
	int we, wd;
};

static void print_switch(void *arg, const struct ktr_offcpu *o)
{
	struct swprint *x = arg;
	struct tstate *t = x->t;
	char b1[32], b2[32], b3[32];

	if (o->out_ns < x->from || o->out_ns >= x->to)
		return;
	/* its level: the calls still open when the thread left the CPU */
	while (t->n && t->st[t->n - 1].exit <= o->out_ns)
		t->n--;
	if (x->k->o.longfmt)
		fprintf(x->out, "%*s %*s %*s ", x->we,
			us_rel(&x->k->o, o->out_ns, x->origin, b1, sizeof(b1)), x->wd,
			o->in_ns == UINT64_MAX ? "-" : us(&x->k->o, o->in_ns - o->out_ns, b2, sizeof(b2)),
			x->wd, "");
	fprintf(x->out, "%7" PRIu32 " ", x->tid);
	for (size_t i = 0; i < t->n; i++)
		fputs("|  ", x->out);
	if (o->in_ns == UINT64_MAX) {
		fprintf(x->out, "<off CPU: %s, not back by the end of the trace>\n",
			o->blocked ? "blocked" : "preempted");
		return;
	}
	fprintf(x->out, "<off CPU %s us: %s", us(&x->k->o, o->in_ns - o->out_ns, b1, sizeof(b1)),
		o->blocked ? "blocked" : "preempted");
	if (o->blocked && o->wake_ns < o->in_ns)
		fprintf(x->out, ", woken after %s us", us(&x->k->o, o->wake_ns - o->out_ns, b3, sizeof(b3)));
	fprintf(x->out, ", CPU %d -> %d>\n", o->cpu_out, o->cpu_in);
}

/* Print the switch-outs of thread @ord in [its cursor, @to). */
static void flush_switches(struct kd *k, FILE *out, struct ktr_callsort *s, struct tstate *ts,
			   uint32_t ord, uint64_t to, int we, int wd, uint64_t origin)
{
	struct swprint x = { k, out, &ts[ord], ts[ord].cursor, to, origin, 0, we, wd };
	uint32_t pid = 0;

	if (!k->offcpu || to <= ts[ord].cursor)
		return;
	ktr_callsort_thread_ids(s, ord, &pid, &x.tid);
	ktr_sched_offcpu_each(k->sched, x.tid, x.from, to - 1, print_switch, &x);
	ts[ord].cursor = to;
}

static const char *gap_words(unsigned gap, uint64_t count, char *buf, size_t len)
{
	switch (gap) {
	case KTR_GAP_LOST:
		snprintf(buf, len, "%" PRIu64 " record%s lost", count, count == 1 ? "" : "s");
		break;
	case KTR_GAP_OVERWRITTEN:
		snprintf(buf, len, "%" PRIu64 " sub-buffer%s overwritten", count, count == 1 ? "" : "s");
		break;
	case KTR_GAP_DROPPED:
		snprintf(buf, len, "%" PRIu64 " record%s dropped", count, count == 1 ? "" : "s");
		break;
	default:
		snprintf(buf, len, "corrupt data skipped");
		break;
	}
	return buf;
}

static void thread_line(struct kd *k, FILE *out, struct ktr_callsort *s, uint32_t ord,
			const char *what)
{
	uint32_t pid = 0, tid = 0;
	const char *comm = NULL;

	ktr_callsort_thread_ids(s, ord, &pid, &tid);
	ktr_thread(k->t, tid, NULL, &comm);
	fprintf(out, "----------- %s %" PRIu32 " (%s, process %" PRIu32 ") --------------\n", what, tid,
		comm && *comm ? comm : "?", pid);
}

/*
 * Bring thread @t's signal-handler sections to nesting @sig: "!!!! end"
 * for each one left, "!!!! start" for each one entered (which begins at
 * call level @level).
 */
static void section_mark(FILE *out, struct tstate *t, unsigned sig, unsigned level)
{
	while (t->sig > sig) {
		t->sig--;
		fprintf(out, "%s----------- !!!! end ----------------%s\n", cli_c_magenta(), cli_c_reset());
	}
	while (t->sig < sig && t->sig < 15) {
		t->sig++;
		t->base[t->sig] = level;
		fprintf(out, "%s----------- !!!! start --------------%s\n", cli_c_magenta(), cli_c_reset());
	}
}

/* A call (or gap) of the sorter as a row of cli/rows.h (kd -c --format=csv|json). */
static void call_row(struct kd *k, FILE *out, struct ktr_callsort *s, const struct ktr_callent *e,
		     int first)
{
	char args[96], name[96];
	uint32_t pid = 0, tid = 0;
	struct fmt_row row;

	ktr_callsort_thread_ids(s, e->thread, &pid, &tid);
	row.time_ns = e->entry_ns;
	row.cpu = e->cpu == UINT32_MAX ? -1 : (int)e->cpu;
	row.pid = pid;
	row.tid = tid;
	row.comm = ka_comm(k->t, tid);
	row.args = args;
	if (e->flags & KTR_CALLENT_GAP) {
		snprintf(name, sizeof(name), "[%s]", e->key == KTR_GAP_LOST ? "lost" :
			 e->key == KTR_GAP_OVERWRITTEN ? "overwritten" :
			 e->key == KTR_GAP_DROPPED ? "dropped" : "corrupt");
		snprintf(args, sizeof(args), "count=%" PRIu64, e->local_ns);
		row.dur_ns = row.self_ns = -1;
		row.category = "ktrace";
		row.name = name;
	} else {
		snprintf(args, sizeof(args), "depth=%u;sig=%u;flags=%u", e->depth, e->sig, e->flags);
		row.dur_ns = (int64_t)e->dur_ns;
		row.self_ns = (int64_t)e->local_ns;
		row.category = "call";
		row.name = e->key < k->nfns && k->fns[e->key].name ? k->fns[e->key].name : "?";
	}
	if (k->o.format == FMT_CSV) {
		fmt_row_csv(out, &row);
	} else {
		fputs(first ? "\n" : ",\n", out);
		fmt_row_json(out, &row);
	}
}

static int print_calls(struct kd *k, FILE *out, struct ktr_callsort *s)
{
	struct tstate *ts = NULL;
	size_t nts = 0;
	struct ktr_callent e;
	uint64_t origin = ktr_time_origin(k->t);
	uint32_t cur = UINT32_MAX, tmp_pid, tmp_tid;
	int rc, several = ktr_callsort_thread_ids(s, 1, &tmp_pid, &tmp_tid);
	int we = k->o.usec ? 10 : 12, wd = k->o.usec ? 10 : 11;

	if (k->o.format != FMT_TEXT) {
		int first = 1;

		fputs(k->o.format == FMT_CSV ? FMT_ROW_HEADER "\n" : "{\"calls\":[", out);
		while ((rc = ktr_callsort_next(s, &e)) > 0 && !ferror(out)) {
			call_row(k, out, s, &e, first);
			first = 0;
		}
		if (k->o.format == FMT_JSON)
			fputs("\n]}\n", out);
		return rc < 0 ? rc : 0;
	}
	if (k->o.longfmt) {
		fprintf(out, "%*s %*s %*s %7s %s\n", -we, " Entry", -wd, " Duration", -wd, " Local",
			"Pid", "   Trace");
		fprintf(out, "%.*s %.*s %.*s ------- ---------------------------------\n", we,
			"------------", wd, "------------", wd, "------------");
	} else {
		fprintf(out, "%7s %s\n", "Pid", "   Trace");
		fprintf(out, "------- ---------------------------------\n");
	}
	while ((rc = ktr_callsort_next(s, &e)) > 0) {
		struct tstate *t;
		unsigned level, marks;
		char b1[32], b2[32], b3[32];
		uint32_t pid = 0, tid = 0;

		if (e.thread >= nts) {
			size_t n = e.thread + 16;
			struct tstate *nt = realloc(ts, n * sizeof(*nt));

			if (!nt) {
				rc = -ENOMEM;
				break;
			}
			memset(nt + nts, 0, (n - nts) * sizeof(*nt));
			ts = nt;
			nts = n;
		}
		t = &ts[e.thread];
		if (k->offcpu && !(e.flags & KTR_CALLENT_GAP)) {
			/* context switches before this call, where they happened: the
			 * previous thread's to its end; with -i every thread's so far */
			if (!k->o.interlace && cur != UINT32_MAX && cur != e.thread)
				flush_switches(k, out, s, ts, cur, ts[cur].max_exit, we, wd, origin);
			for (uint32_t i = 0; k->o.interlace && i < nts; i++) {
				uint32_t p = 0, id = 0;
				uint64_t nsw = 0;

				if (!ts[i].used || i == e.thread || e.entry_ns <= ts[i].cursor)
					continue;
				ktr_callsort_thread_ids(s, i, &p, &id);
				ktr_sched_offcpu(k->sched, id, ts[i].cursor, e.entry_ns - 1, &nsw, NULL);
				if (!nsw)
					continue;
				if (i != cur)
					thread_line(k, out, s, i, "switch to thread");
				cur = i;
				flush_switches(k, out, s, ts, i, e.entry_ns, we, wd, origin);
			}
			if (!t->used)
				t->cursor = e.entry_ns;
			if (cur == e.thread)
				flush_switches(k, out, s, ts, e.thread, e.entry_ns, we, wd, origin);
			if (e.entry_ns + e.dur_ns > t->max_exit)
				t->max_exit = e.entry_ns + e.dur_ns;
			t->used = 1;
		}
		if (!k->o.interlace && cur != UINT32_MAX && cur != e.thread && cur < nts)
			section_mark(out, &ts[cur], 0, 0); /* the previous thread's sections end */
		if (several && e.thread != cur)
			thread_line(k, out, s, e.thread, k->o.interlace ? "switch to thread" : "thread");
		if (k->offcpu && several && e.thread != cur && !(e.flags & KTR_CALLENT_GAP))
			flush_switches(k, out, s, ts, e.thread, e.entry_ns, we, wd, origin);
		cur = e.thread;
		if (e.flags & KTR_CALLENT_GAP) {
			char g[96];

			fprintf(out, "%s----------- %s --------------%s\n", cli_c_red(),
				gap_words(e.key, e.local_ns, g, sizeof(g)), cli_c_reset());
			continue;
		}
		/* level: recorded calls of this thread that are open around this one */
		while (t->n) {
			const struct open_call *a = &t->st[t->n - 1];

			if (a->entry <= e.entry_ns && e.entry_ns + e.dur_ns <= a->exit && a->depth < e.depth)
				break;
			t->n--;
		}
		level = (unsigned)t->n;
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 32;
			struct open_call *n = realloc(t->st, cap * sizeof(*n));

			if (n) {
				t->st = n;
				t->cap = cap;
			}
		}
		if (t->n < t->cap) {
			t->st[t->n].entry = e.entry_ns;
			t->st[t->n].exit = e.entry_ns + e.dur_ns;
			t->st[t->n].depth = e.depth;
			t->n++;
		}
		/*
		 * Signal-handler sections, marked as kd marked interrupts.  A
		 * call at the section's own nesting that no call of the section
		 * contains (its level is back at the section's base) began
		 * another handler invocation: end the section, start a new one.
		 */
		if (e.sig && t->sig == e.sig && level <= t->base[t->sig])
			section_mark(out, t, e.sig - 1, level);
		section_mark(out, t, e.sig, level);
		marks = e.sig ? level - (level >= t->base[t->sig] ? t->base[t->sig] : level) : level;
		ktr_callsort_thread_ids(s, e.thread, &pid, &tid);
		if (k->o.longfmt)
			fprintf(out, "%*s %*s %*s ", we, us_rel(&k->o, e.entry_ns, origin, b1, sizeof(b1)),
				wd, us(&k->o, e.dur_ns, b2, sizeof(b2)), wd,
				us(&k->o, e.local_ns, b3, sizeof(b3)));
		fprintf(out, "%7" PRIu32 " ", tid);
		for (unsigned i = 0; i < marks; i++)
			fputs(e.sig ? "!  " : "|  ", out);
		fputs(e.key < k->nfns && k->fns[e.key].name ? k->fns[e.key].name : "?", out);
		if (e.flags & KTRACE_CALLF_UNFINISHED)
			fputs(" [unfinished]", out);
		if (e.flags & KTRACE_CALLF_WATCH)
			fputs(" [watch]", out);
		fputc('\n', out);
		if (ferror(out))
			break;
	}
	/* the switches inside the last calls */
	for (uint32_t i = 0; k->offcpu && rc >= 0 && i < nts; i++) {
		uint32_t p = 0, id = 0;
		uint64_t nsw = 0;

		if (!ts[i].used || ts[i].max_exit <= ts[i].cursor)
			continue;
		ktr_callsort_thread_ids(s, i, &p, &id);
		ktr_sched_offcpu(k->sched, id, ts[i].cursor, ts[i].max_exit - 1, &nsw, NULL);
		if (!nsw)
			continue;
		if (several && i != cur)
			thread_line(k, out, s, i, k->o.interlace ? "switch to thread" : "thread");
		cur = i;
		flush_switches(k, out, s, ts, i, ts[i].max_exit, we, wd, origin);
	}
	for (size_t i = 0; i < nts; i++) {
		section_mark(out, &ts[i], 0, 0); /* sections still open at the end */
		free(ts[i].st);
	}
	free(ts);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ */

static int check_fields(const char *f)
{
	if (!*f)
		return -1;
	for (; *f; f++)
		if (!strchr(FIELD_LETTERS, *f))
			return -1;
	return 0;
}

static int run(int argc, char **argv)
{
	enum { OPT_SORTMEM = CLI_OPT_SELECT_END, OPT_FORMAT };
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },    { "time", required_argument, NULL, 't' },
		{ "fields", required_argument, NULL, 'f' }, { "sort", required_argument, NULL, 's' },
		{ "calls", no_argument, NULL, 'c' },        { "long", no_argument, NULL, 'l' },
		{ "interlace", no_argument, NULL, 'i' },    { "usec", no_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
		{ "sort-mem", required_argument, NULL, OPT_SORTMEM },
		{ "format", required_argument, NULL, OPT_FORMAT },
		CLI_SELECT_LONGOPTS, CLI_OUTPUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct kd k;
	struct ktr_callsort *sorter = NULL;
	struct timespec t0, t1;
	FILE *out = stdout;
	const char *dir;
	int c, rc = 0, fields_given = 0;
	uint64_t v;

	memset(&k, 0, sizeof(k));
	cli_select_init(&k.o.sel);
	k.o.top = -1;
	k.o.fields = "Fctal";
	k.o.sort = 't';
	while ((c = getopt_long(argc, argv, ":n:t:f:s:cliuvp:h", opts, NULL)) != -1) {
		int taken = cli_select_option(&k.o.sel, CMD, c, optarg);

		if (!taken)
			taken = cli_output_option(CMD, c, optarg);
		if (taken < 0)
			return 2;
		if (taken)
			continue;
		switch (c) {
		case 'n':
			if (cli_parse_u64(optarg, &v) < 0 || v > (uint64_t)1 << 40) {
				cli_error(CMD, "option '-n': '%s' is not a number of functions", optarg);
				return 2;
			}
			k.o.top = (long)v;
			break;
		case 't':
			if (cli_parse_time(optarg, 1000, &k.o.min_ns) < 0) {
				cli_error(CMD, "option '-t': '%s' is not a time (microseconds, or with a unit: "
					       "250us, 1.5ms, 2s)", optarg);
				return 2;
			}
			k.o.have_min = 1;
			break;
		case 'f':
			if (check_fields(optarg) < 0) {
				cli_error(CMD, "option '-f': '%s': fields are letters of %s (see ktrace kd --help)",
					  optarg, FIELD_LETTERS);
				return 2;
			}
			k.o.fields = optarg;
			fields_given = 1;
			break;
		case 's':
			if (strlen(optarg) != 1 || !strchr("Fctalsxo", optarg[0])) {
				cli_error(CMD, "option '-s': '%s': sort by one of F c t a l s x o", optarg);
				return 2;
			}
			k.o.sort = optarg[0];
			break;
		case 'c': k.o.calls = 1; break;
		case 'l': k.o.longfmt = 1; break;
		case 'i': k.o.interlace = 1; break;
		case 'u': k.o.usec = 1; break;
		case 'v': k.o.verbose = 1; break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				k.o.format = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				k.o.format = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				k.o.format = FMT_JSON;
			else {
				cli_error(CMD, "option '--format': '%s' is not text, csv or json", optarg);
				return 2;
			}
			break;
		case OPT_SORTMEM:
		{
			uint64_t size;

			if (cli_parse_size(optarg, &size) < 0 || size < 4096 || size > SIZE_MAX) {
				cli_error(CMD, "option '--sort-mem': '%s' is not a size of 4K or more", optarg);
				return 2;
			}
			k.o.sort_mem = (size_t)size;
			break;
		}
		case 'h':
			help(stdout);
			return 0;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	if ((k.o.longfmt || k.o.interlace) && !k.o.calls) {
		cli_error(CMD, "options '-l' and '-i' go with '-c' (call traces)");
		return 2;
	}
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	k.want_edges = !k.o.calls && (k.o.format != FMT_TEXT || strchr(k.o.fields, 'm') ||
				      strchr(k.o.fields, 'n'));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	k.t = cli_select_open(&k.o.sel, CMD, dir);
	if (!k.t)
		return 1;
	cli_diags(CMD, k.t);
	k.syms = cli_select_syms(&k.o.sel, k.t);
	if (ktr_kernel(k.t)) {
		/* follow the program's threads through their context switches */
		k.tasks = ka_tasks_new(k.t, k.o.sel.tids.n || k.o.sel.pids.n, NULL, NULL);
		k.sched = k.tasks ? ktr_sched_new(KTR_SCHED_OFFCPU, NULL, NULL) : NULL;
		if (k.sched)
			ktr_sched_follow(k.sched, ka_tasks_want, k.tasks);
	}
	if (k.o.calls) {
		sorter = ktr_callsort_new(k.o.sort_mem,
					  k.o.interlace ? KTR_SORT_ENTRY : KTR_SORT_THREAD);
		if (!sorter) {
			rc = -ENOMEM;
			goto done;
		}
	}
	if (!k.syms) {
		rc = -ENOMEM;
		goto done;
	}
	rc = read_trace(&k, sorter);
	if (rc < 0)
		goto done;
	if (!k.calls) {
		/* not an empty table: say why there is nothing */
		cli_diags(CMD, k.t);
		cli_no_calls(CMD, argv[optind], k.call_records);
		rc = 1;
		goto done;
	}
	if (k.offcpu && !fields_given)
		k.o.fields = "Fctalo";
	if (k.klost)
		cli_error(CMD, "warning: %" PRIu64 " kernel records lost: off-CPU times may be short",
			  k.klost);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (k.o.verbose) {
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

		fprintf(stderr,
			"ktrace kd: %" PRIu64 " records, %" PRIu64 " calls of %zu functions read in %.3f s (%.1f M records/s)%s%s\n",
			k.records, k.calls, k.nfns, s, s > 0 ? (double)k.records / s / 1e6 : 0.0,
			sorter && ktr_callsort_runs(sorter) ? ", sorted on disk" : "",
			k.lost || k.overwritten ? "" : "; no record lost");
	}
	name_functions(&k);
	cli_pager_start();
	if (k.o.calls)
		rc = print_calls(&k, out, sorter);
	else
		rc = print_table(&k, out);
	cli_diags(CMD, k.t);
	if (k.o.verbose) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fprintf(stderr, "ktrace kd: done in %.3f s\n",
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
done:
	if (rc < 0) {
		const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

		if (k.o.calls)
			cli_error(CMD, "ordering the calls (temporary files in %s; see --sort-mem): %s",
				  tmpdir, strerror(-rc));
		else
			cli_error(CMD, "reading the trace: %s", strerror(-rc));
		rc = 1;
	}
	if (k.lost || k.overwritten) {
		cli_error(CMD, "warning: %" PRIu64 " records lost or dropped and %" PRIu64
			       " sub-buffers overwritten: counts and times are lower bounds",
			  k.lost, k.overwritten);
		cli_losses(CMD, k.t);
	}
	if (!rc && ktr_error_count(k.t))
		rc = 1;
	for (size_t i = 0; i < k.nfns; i++)
		free(k.fns[i].name);
	free(k.fns);
	free(k.edges);
	map_free(&k.by_key);
	map_free(&k.by_addr);
	map_free(&k.by_edge);
	cli_select_free(&k.o.sel);
	ktr_callsort_free(sorter);
	ktr_syms_free(k.syms);
	ktr_sched_free(k.sched);
	ka_tasks_free(k.tasks);
	ktr_close(k.t);
	return rc;
}

KTRACE_COMMAND(kd, "function trace report: time per function, call traces (KFT's kd)", run, help);

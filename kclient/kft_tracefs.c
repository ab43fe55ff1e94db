/*
 * kclient/kft_tracefs.c - a KFT run over every kernel function, through
 * the kernel's own function_graph tracer (tracefs, libtracefs and
 * libtraceevent), for kernels without ktrace.ko or when kretprobes on a few
 * functions are not enough (seed 002's "all functions" traces, e.g. its
 * do_fork call tree): kft_fgraph_run() in kclient/kclient.h, what
 *
 *   ktrace kft --tracefs [-c CONFIG] [-o DIR] [-b KB] [-d SECONDS] [-- COMMAND...]
 *
 * runs (cli/cmd_kft_tracefs.c parses that command line).
 *
 * The configuration (docs/KFT-CONFIG.md, parsed by kft/config.c with names
 * from /proc/kallsyms) is mapped onto tracefs, in the top-level instance
 * (function_graph runs nowhere else on 6.1):
 *
 *   filter mintime U         tracing_thresh = U: only exits of calls lasting
 *                            U us or more are written (function_graph's own
 *                            duration filter)
 *   filter funclist F.. fend set_ftrace_filter: only those functions
 *   filter noints            options/funcgraph-irqs = 0
 *   trigger start entry F    a kprobe event ktrace_kft/start on F whose
 *     + trigger stop exit F  trigger `traceon` switches tracing on; with a
 *                            stop on exit of the same F, set_graph_function F
 *                            instead: F's call tree (the seed's do_fork trace)
 *   trigger start exit F     a kretprobe event with `traceon`
 *   trigger stop entry|exit G  a k(ret)probe event ktrace_kft/stop whose
 *                            trigger `traceoff` (run after the event is
 *                            written) switches tracing off
 *   trigger start|stop time  ktrace switches tracing on at the start time
 *                            (us since boot) and off stop-time us later
 *   autorepeat               the triggers fire every time (no count)
 *   watch stack|worst-stack  refused: needs /proc/kft (ktrace kft --kernel)
 *
 * The ring buffer does not overwrite (KFT's log stops when full; events
 * that did not fit are counted as lost).  Tracing ends with COMMAND, after
 * -d SECONDS, at a stop trigger (no autorepeat), or on SIGINT/SIGTERM.  Then
 * the function_graph exit events (funcgraph_exit: function, depth,
 * calltime, rettime) and the trigger events are read with libtracefs and
 * libtraceevent, and the configuration is applied once more exactly:
 * calls entered before the start (or after a stop) that the kernel still
 * wrote, calls outside F's call tree (same task, within F's call), maxtime,
 * onlyints (the record's hardirq/softirq flags), mintime in ns,
 * logentries.  Each kept call becomes one CALL record (docs/FORMAT.md):
 * exit time = the event's timestamp (trace_clock mono, so CLOCK_MONOTONIC),
 * duration = rettime - calltime (trace_clock_local) at mono's rate
 * (mono_durations()), depth = function_graph's depth, context
 * 0 task / 1 softirq / 2 hardirq; the call site is not known (site 0).
 *
 * Everything the run changed in tracefs (tracer, clock, thresh, filters,
 * options, buffer size, tracing_on, the ktrace_kft events) is put back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include <ktrace/format.h>

#include "kclient/internal.h"
#include "lib/safefile.h"
#include "kft/config.h"

#define CMD "kft"
#define SUBBUF 65536u
#define FLAG_NMI 0x40 /* TRACE_FLAG_NMI of the kernel's trace entry flags */
#define KSYS "ktrace_kft"

/* ---- kernel symbols (struct kft_ksyms, kclient/internal.h) ----------- */

static int ksym_cmp(const void *a, const void *b)
{
	const struct kft_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int kft_ksyms_load(struct kft_ksyms *s, const char *path)
{
	FILE *f = fopen(path, "re");
	char line[1024];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char type, name[512];
		unsigned long long a;

		if (sscanf(line, "%llx %c %511s", &a, &type, name) != 3 || !strchr("tTwW", type))
			continue;
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 65536;
			struct kft_ksym *p = realloc(s->v, cap * sizeof(*p));

			if (!p)
				break;
			s->v = p;
			s->cap = cap;
		}
		s->v[s->n].addr = a;
		s->v[s->n].name = strdup(name);
		if (s->v[s->n].name)
			s->n++;
	}
	fclose(f);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), ksym_cmp);
	return 0;
}

void kft_ksyms_free(struct kft_ksyms *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const char *kft_ksym_name(const struct kft_ksyms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].addr == addr ? s->v[lo].name : NULL;
}

int kft_ksym_resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	const struct kft_ksyms *s = arg;

	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->v[i].name, name, len) && s->v[i].name[len] == '\0' && s->v[i].addr) {
			*addr = s->v[i].addr;
			return 0;
		}
	return -ENOENT;
}

/* ---- tracefs state ----------------------------------------------------- */

/* A tracefs file and what it held before the run ("" = not saved). */
struct saved {
	const char *file;
	char *old;
};

static struct saved saved[] = {
	{ "current_tracer", NULL },  { "tracing_on", NULL },         { "trace_clock", NULL },
	{ "tracing_thresh", NULL },  { "buffer_size_kb", NULL },     { "options/overwrite", NULL },
	{ "options/funcgraph-irqs", NULL }, { "set_graph_function", NULL }, { "set_ftrace_filter", NULL },
};

static struct tracefs_dynevent *ev_start, *ev_stop;
static char trig_start[64], trig_stop[96];
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static int tf_write(const char *file, const char *val)
{
	return tracefs_instance_file_write(NULL, file, val) < 0 ? -1 : 0;
}

static int is_list(const char *file)
{
	return !strcmp(file, "set_graph_function") || !strcmp(file, "set_ftrace_filter");
}

/*
 * The current value of a tracefs file: the first line; for trace_clock the
 * selected clock ("[mono]"); for the function lists the whole text.
 */
static char *tf_value(const char *file)
{
	char *s = tracefs_instance_file_read(NULL, file, NULL), *b, *e;

	if (!s || is_list(file))
		return s;
	b = strchr(s, '[');
	e = b ? strchr(b, ']') : NULL;
	if (b && e && !strcmp(file, "trace_clock")) {
		memmove(s, b + 1, (size_t)(e - b - 1));
		s[e - b - 1] = '\0';
	}
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* Write a list of functions (one write each, as ftrace parses them). */
static void restore_list(const char *file, const char *list)
{
	char *copy = strdup(list ? list : ""), *line, *save = NULL;

	tracefs_instance_file_clear(NULL, file);
	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		if (line[0] != '#' && !strchr(line, ':'))
			tracefs_instance_file_append(NULL, file, line);
	free(copy);
}

static void tf_restore(void)
{
	tracefs_trace_off(NULL);
	if (trig_start[0] && ev_start) {
		char undo[80];

		snprintf(undo, sizeof(undo), "!%s", trig_start);
		tracefs_event_file_write(NULL, KSYS, "start", "trigger", undo);
	}
	if (trig_stop[0] && ev_stop) {
		char undo[112];

		snprintf(undo, sizeof(undo), "!%s", trig_stop);
		tracefs_event_file_write(NULL, KSYS, "stop", "trigger", undo);
	}
	if (ev_start) {
		tracefs_event_disable(NULL, KSYS, "start");
		tracefs_dynevent_destroy(ev_start, true);
		tracefs_dynevent_free(ev_start);
		ev_start = NULL;
	}
	if (ev_stop) {
		tracefs_event_disable(NULL, KSYS, "stop");
		tracefs_dynevent_destroy(ev_stop, true);
		tracefs_dynevent_free(ev_stop);
		ev_stop = NULL;
	}
	trig_start[0] = trig_stop[0] = '\0';
	/*
	 * The tracer first: emptying set_ftrace_filter while function_graph is
	 * still the tracer would make ftrace patch every function in the kernel
	 * (seconds to minutes) only to unpatch them again.
	 */
	if (saved[0].old) {
		tf_write(saved[0].file, saved[0].old);
		free(saved[0].old);
		saved[0].old = NULL;
	}
	for (size_t i = sizeof(saved) / sizeof(saved[0]); i-- > 0;) {
		if (!saved[i].old || !strcmp(saved[i].file, "tracing_on"))
			continue;
		if (is_list(saved[i].file))
			restore_list(saved[i].file, saved[i].old);
		else
			tf_write(saved[i].file, saved[i].old);
		free(saved[i].old);
		saved[i].old = NULL;
	}
	/* tracing_on last, so the restored tracer does not record our clean-up. */
	if (saved[1].old) {
		tf_write("tracing_on", saved[1].old);
		free(saved[1].old);
		saved[1].old = NULL;
	}
}

/* ---- the collected events ---------------------------------------------- */

struct call {
	uint64_t exit, dur, fn;
	uint64_t ret; /* rettime: trace_clock_local() ns at the return (mono_durations()) */
	uint32_t pid;
	uint16_t cpu, depth;
	uint8_t sig;
};

struct mark {
	uint64_t ts;
	uint32_t pid;
	int stop; /* 0 start, 1 stop */
};

struct coll {
	struct call *c;
	size_t n, cap;
	struct mark *m;
	size_t nm, capm;
	int ev_exit, ev_start, ev_stop; /* event ids, -1 if absent */
	struct tep_format_field *f_func, *f_depth, *f_call, *f_ret;
	int oom;
};

/* Double the array *@p of *@cap @size-byte elements (@first when empty). Return 0 or -1. */
static int grow(void **p, size_t *cap, size_t size, size_t first)
{
	size_t n = *cap ? 2 * *cap : first;
	void *q = realloc(*p, n * size);

	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static int collect(struct tep_event *ev, struct tep_record *rec, int cpu, void *arg)
{
	struct coll *co = arg;
	unsigned long long func, depth, calltime, rettime;
	int flags;

	if (ev->id == co->ev_start || ev->id == co->ev_stop) {
		if (co->nm == co->capm && grow((void **)&co->m, &co->capm, sizeof(*co->m), 64) < 0) {
			co->oom = 1;
			return 0;
		}
		co->m[co->nm].ts = rec->ts;
		co->m[co->nm].pid = (uint32_t)tep_data_pid(ev->tep, rec);
		co->m[co->nm].stop = ev->id == co->ev_stop;
		co->nm++;
		return 0;
	}
	if (ev->id != co->ev_exit)
		return 0;
	if (tep_read_number_field(co->f_func, rec->data, &func) ||
	    tep_read_number_field(co->f_depth, rec->data, &depth) ||
	    tep_read_number_field(co->f_call, rec->data, &calltime) ||
	    tep_read_number_field(co->f_ret, rec->data, &rettime))
		return 0;
	if (co->n == co->cap && grow((void **)&co->c, &co->cap, sizeof(*co->c), 65536) < 0) {
		co->oom = 1;
		return 0;
	}
	flags = tep_data_flags(ev->tep, rec);
	co->c[co->n] = (struct call){
		.exit = rec->ts,
		.dur = rettime > calltime ? rettime - calltime : 0, /* local clock: mono_durations() */
		.ret = rettime,
		.fn = func,
		.pid = (uint32_t)tep_data_pid(ev->tep, rec),
		.cpu = (uint16_t)cpu,
		.depth = (uint16_t)((int)depth < 0 ? 0 : depth > 0xffff ? 0xffff : depth),
		.sig = (flags & (TRACE_FLAG_HARDIRQ | FLAG_NMI)) ? 2 : (flags & TRACE_FLAG_SOFTIRQ) ? 1 : 0,
	};
	co->n++;
	return 0;
}

/*
 * mono_durations() - the durations of @c[0..@n) in CLOCK_MONOTONIC ns.
 * funcgraph_exit's calltime and rettime come from trace_clock_local()
 * (sched_clock: the TSC scaled by its boot-time calibration) and the
 * event's time stamp from the ring buffer's clock (mono), and where the
 * calibration is off the two run at different rates: a call's entry,
 * exit - (rettime - calltime), then mixed the clocks, and a call of tens
 * of seconds seemed to start before the run (or before boot) and was
 * dropped.  Every event gives one pair (rettime, time stamp) taken at the
 * same moment, so mono's rate against local is the slope through the
 * earliest and the latest pair; each duration is scaled by it, and each
 * entry is anchored at its own exit (a TCG guest measured mono at 0.996
 * of local's rate: a 14 s call's entry came 56 ms early, before the start
 * mark).  Pairs less than 100 ms apart, or a slope that is not positive,
 * leave the durations as they are.  mintime and maxtime then apply to the
 * converted durations: a call the kernel's tracing_thresh kept may fall
 * under mintime by the rates' difference.
 * Return: the rate applied (1.0: none).
 */
static double mono_durations(struct call *c, size_t n)
{
	size_t lo = 0, hi = 0;
	double rate = 1.0;

	for (size_t i = 1; i < n; i++) {
		if (c[i].ret < c[lo].ret)
			lo = i;
		if (c[i].ret > c[hi].ret)
			hi = i;
	}
	if (n > 1 && c[hi].ret - c[lo].ret >= 100000000ull && c[hi].exit > c[lo].exit)
		rate = (double)(c[hi].exit - c[lo].exit) / (double)(c[hi].ret - c[lo].ret);
	for (size_t i = 0; i < n; i++) {
		double d = (double)c[i].dur * rate;

		c[i].dur = d >= (double)c[i].exit ? c[i].exit : (uint64_t)(d + 0.5);
	}
	return rate;
}

static int call_cmp(const void *a, const void *b)
{
	const struct call *x = a, *y = b;

	return x->exit < y->exit ? -1 : x->exit > y->exit;
}

static int mark_cmp(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* ---- applying the configuration --------------------------------------- */

enum { D_OUTSIDE, D_INTS, D_FUNCLIST, D_MINTIME, D_MAXTIME, D_LOGENTRIES, D_NOTRACE, D_DEPTH, D_N };
static const char *const drop_names[D_N] = { "outside the run", "ints", "funclist", "mintime",
					     "maxtime", "logentries", "notrace", "depth" };

/* A call of the graph function F: its task and [entry, exit]. */
struct window {
	uint64_t lo, hi;
	uint32_t pid;
};

struct run {
	const struct kft_config *cfg;
	struct window *win;   /* autorepeat in graph mode: every call of F, by entry */
	size_t nwin;
	int graph;            /* set_graph_function start_fn */
	uint64_t on_ns;       /* when ktrace switched tracing on (0: a trigger did) */
	uint64_t stop_after;  /* ns, stop time trigger (0 none) */
	uint64_t drops[D_N];
	uint64_t kept;
	uint64_t start_ns, stop_ns;
};

static int win_cmp(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Is [lo, hi] of task @pid inside a call of F?  (Looks at the 64 nearest.) */
static int in_window(const struct run *r, uint32_t pid, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = r->nwin;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (r->win[mid].lo <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t k = 0; a > 0 && k < 64; a--, k++)
		if (r->win[a - 1].pid == pid && r->win[a - 1].hi >= hi)
			return 1;
	return 0;
}

static int in_list(const kt_u64 *list, uint32_t n, uint64_t fn)
{
	for (uint32_t i = 0; i < n; i++)
		if (list[i] == fn)
			return 1;
	return 0;
}

/* Where apply() is in the run: graph mode's first call of F, the marks' state. */
struct apply_state {
	struct window first;  /* graph mode: the first call of F (if have_first) */
	int have_first;
	size_t mi;            /* the next mark */
	int open;             /* the run is on */
	uint64_t start;       /* ns, when it was last switched on */
	uint64_t stop_at;     /* ns, when the stop time trigger ends it (0: never) */
};

/*
 * apply_graph_windows - graph mode: the calls of F that bound the run into
 * @st->first (the first call) and, with autorepeat, r->win (every call,
 * by entry; NULL out of memory: nothing is kept).  Sets r->start_ns and
 * r->stop_ns to the first call's entry and exit.
 */
static void apply_graph_windows(struct run *r, const struct call *c, size_t n, struct apply_state *st)
{
	const struct kft_config *cfg = r->cfg;

	if (cfg->flags & KFT_CF_AUTOREPEAT) {
		r->win = calloc(n ? n : 1, sizeof(*r->win));
		for (size_t i = 0; r->win && i < n; i++)
			if (c[i].fn == cfg->start.arg)
				r->win[r->nwin++] = (struct window){ c[i].exit - c[i].dur, c[i].exit, c[i].pid };
		if (r->win)
			qsort(r->win, r->nwin, sizeof(*r->win), win_cmp);
	}
	/* F's call tree: the first call of F (every one with autorepeat). */
	for (size_t i = 0; i < n && !st->have_first; i++)
		if (c[i].fn == cfg->start.arg) {
			st->first = (struct window){ c[i].exit - c[i].dur, c[i].exit, c[i].pid };
			st->have_first = 1;
		}
	if (st->have_first) {
		r->start_ns = st->first.lo;
		r->stop_ns = st->first.hi;
	}
}

/* apply_in_graph - graph mode: is call @x inside F's call tree?  1 yes, 0 no. */
static int apply_in_graph(const struct run *r, const struct apply_state *st, const struct call *x)
{
	uint64_t entry = x->exit - x->dur;

	if (r->cfg->flags & KFT_CF_AUTOREPEAT)
		return in_window(r, x->pid, entry, x->exit);
	return st->have_first && x->pid == st->first.pid && entry >= st->first.lo &&
	       x->exit <= st->first.hi;
}

/*
 * apply_in_run - trigger mode: is call @x inside the run?  Marks @m[0..@nm)
 * up to its exit (trigger events) and ktrace's own on/off switch open and
 * close the run (@st; r->start_ns, r->stop_ns record the first start and a
 * stop).  1 yes, 0 no.
 */
static int apply_in_run(struct run *r, struct apply_state *st, const struct call *x,
			const struct mark *m, size_t nm)
{
	const struct kft_config *cfg = r->cfg;
	uint64_t entry = x->exit - x->dur;

	while (st->mi < nm && m[st->mi].ts <= x->exit) {
		if (!m[st->mi].stop) {
			if (!st->open || (cfg->flags & KFT_CF_AUTOREPEAT)) {
				st->start = m[st->mi].ts;
				st->stop_at = r->stop_after ? st->start + r->stop_after : 0;
				if (!r->start_ns)
					r->start_ns = st->start;
			}
			st->open = 1;
		} else if (st->open) {
			st->open = 0;
			r->stop_ns = m[st->mi].ts;
		}
		st->mi++;
	}
	if (!st->open)
		return 0;
	if (entry < st->start) {
		/* The start trigger's own call enters just before its event. */
		return cfg->start.kind == KFT_TRIG_ENTRY && x->fn == cfg->start.arg &&
		       st->start - entry < 100000;
	}
	if (st->stop_at && x->exit > st->stop_at) {
		if (!r->stop_ns)
			r->stop_ns = st->stop_at;
		return 0;
	}
	return 1;
}

/*
 * apply_filter - the configuration's filters on call @x of the run, @kept
 * calls kept so far: the D_* reason it is dropped for, or -1 to keep it.
 */
static int apply_filter(const struct kft_config *cfg, const struct call *x, size_t kept)
{
	if (((cfg->flags & KFT_CF_NOINTS) && x->sig) || ((cfg->flags & KFT_CF_ONLYINTS) && !x->sig))
		return D_INTS;
	if ((cfg->flags & KFT_CF_FUNCLIST) && !in_list(cfg->funcs, cfg->nfuncs, x->fn))
		return D_FUNCLIST;
	if ((cfg->flags & KFT_CF_NOTRACE) && in_list(cfg->notrace_fns, cfg->nnotrace, x->fn))
		return D_NOTRACE;
	if ((cfg->flags & KFT_CF_DEPTH) && x->depth >= cfg->max_depth)
		return D_DEPTH;
	if ((cfg->flags & KFT_CF_MINTIME) && x->dur < cfg->mintime_us * 1000)
		return D_MINTIME;
	if ((cfg->flags & KFT_CF_MAXTIME) && cfg->maxtime_us && x->dur > cfg->maxtime_us * 1000)
		return D_MAXTIME;
	if (cfg->logentries && kept >= cfg->logentries)
		return D_LOGENTRIES;
	return -1;
}

/*
 * Keep the calls the configuration keeps, in place; returns how many.  The
 * calls are sorted by exit time, the marks by time.  Counts the drops by
 * reason in r->drops, the kept calls in r->kept.
 */
static size_t apply(struct run *r, struct call *c, size_t n, const struct mark *m, size_t nm)
{
	struct apply_state st = { .open = r->on_ns != 0, .start = r->on_ns,
				  .stop_at = r->on_ns && r->stop_after ? r->on_ns + r->stop_after : 0 };
	size_t out = 0;

	if (r->graph)
		apply_graph_windows(r, c, n, &st);
	for (size_t i = 0; i < n; i++) {
		struct call *x = &c[i];
		int drop;

		if (!(r->graph ? apply_in_graph(r, &st, x) : apply_in_run(r, &st, x, m, nm)))
			drop = D_OUTSIDE;
		else
			drop = apply_filter(r->cfg, x, out);
		if (drop >= 0) {
			r->drops[drop]++;
			continue;
		}
		c[out++] = *x;
	}
	r->kept = out;
	free(r->win);
	r->win = NULL;
	if (!r->start_ns)
		r->start_ns = r->on_ns;
	return out;
}

/* ---- output ------------------------------------------------------------ */

struct sites {
	struct ktrace_callsite *v;
	uint32_t n, cap;
};

static uint32_t site_index(struct sites *s, uint64_t fn)
{
	/* Few distinct functions per trace: a sorted search would do; linear with a memo. */
	static uint32_t last;

	if (last < s->n && s->v[last].func == fn)
		return last;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].func == fn)
			return last = i;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 1024;
		struct ktrace_callsite *p;

		if (cap >= KTRACE_CALLSITE_NONE)
			return KTRACE_CALLSITE_NONE;
		p = realloc(s->v, cap * sizeof(*p));
		if (!p)
			return KTRACE_CALLSITE_NONE;
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n].func = fn;
	s->v[s->n].site = 0;
	return last = s->n++;
}

/* One shared packed stream of CALL records, as /proc/kft_data has it. */
static int write_stream(const char *dst, const struct call *c, size_t n, uint64_t lost,
			struct sites *sites)
{
	size_t cap = (n + 1) * 64 + (n / 100 + 2) * 64, len = 0, hdr = 0;
	uint8_t *buf = calloc(1, cap);
	struct ktrace_subbuf *sb = NULL;
	uint64_t seq = 0;
	int rc;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx = site_index(sites, c[i].fn);
		unsigned words = idx == KTRACE_CALLSITE_NONE ? KTRACE_CALL_WORDS_ADDR
				 : (c[i].dur >> 32)           ? KTRACE_CALL_WORDS_LONG
							      : KTRACE_CALL_WORDS;
		size_t need = 8 * (2 + words);
		uint64_t w[6] = { 0 };
		int new_sb = !sb || KTRACE_SUBBUF_HDR_SIZE + sb->used + need > SUBBUF ||
			     c[i].exit - sb->first_ts >= (KTRACE_TS_WINDOW >> 1);

		/* room for the record, and a sub-buffer header before it if one starts */
		if (len + need + (new_sb ? KTRACE_SUBBUF_HDR_SIZE : 0) > cap) {
			uint8_t *p = realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			memset(p + cap, 0, cap);
			buf = p;
			cap *= 2;
			sb = sb ? (struct ktrace_subbuf *)(buf + hdr) : NULL;
		}
		if (new_sb) {
			hdr = len;
			sb = (struct ktrace_subbuf *)(buf + hdr);
			sb->magic = KTRACE_SUBBUF_MAGIC;
			sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
			sb->flags = KTRACE_SBF_CTX | KTRACE_SBF_CLOSED;
			sb->seq = seq++;
			sb->first_ts = sb->first_ns = c[i].exit;
			sb->cpu = 0xffff;
			len += KTRACE_SUBBUF_HDR_SIZE;
		}
		w[0] = KTRACE_REC_HDR(c[i].exit, KTRACE_CLASS_CALL, words, KTRACE_CALL_ID(idx));
		w[1] = KTRACE_CTX(c[i].pid, c[i].cpu, c[i].sig);
		w[2] = KTRACE_CALL_W0(c[i].dur, idx, c[i].depth, c[i].sig, 0);
		w[3] = c[i].dur >> 32;
		w[4] = c[i].fn;
		w[5] = 0;
		memcpy(buf + len, w, need);
		len += need;
		sb->used += (uint32_t)need;
		sb->nrec++;
		sb->last_ts = c[i].exit;
	}
	if (lost) {
		if (!sb) {
			uint64_t now;
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
			sb = (struct ktrace_subbuf *)buf;
			sb->magic = KTRACE_SUBBUF_MAGIC;
			sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
			sb->flags = KTRACE_SBF_CTX | KTRACE_SBF_CLOSED;
			sb->first_ts = sb->first_ns = sb->last_ts = now;
			sb->cpu = 0xffff;
			len = KTRACE_SUBBUF_HDR_SIZE;
		}
		sb->lost = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
	}
	rc = ksf_replace(dst, "cpu0", buf, len);
	free(buf);
	return rc;
}

static int write_sites(const char *dst, const struct sites *s)
{
	size_t len = sizeof(struct ktrace_callsites) + (size_t)s->n * sizeof(struct ktrace_callsite);
	struct ktrace_callsites *h = calloc(1, len);
	int rc;

	if (!h)
		return -ENOMEM;
	h->magic = KTRACE_CALLSITES_MAGIC;
	h->version = KTRACE_CALLSITES_VERSION;
	h->hdr_size = sizeof(*h);
	h->entry_size = sizeof(struct ktrace_callsite);
	h->capacity = h->count = s->n;
	if (s->n)
		memcpy(h + 1, s->v, (size_t)s->n * sizeof(*s->v));
	rc = ksf_replace(dst, "callsites", h, len);
	free(h);
	return rc;
}

/* Events the ring buffer could not take (non-overwrite mode: "dropped events"). */
static uint64_t lost_events(void)
{
	uint64_t sum = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	for (long cpu = 0; cpu < ncpu; cpu++) {
		char file[64], *s, *p;

		snprintf(file, sizeof(file), "per_cpu/cpu%ld/stats", cpu);
		s = tracefs_instance_file_read(NULL, file, NULL);
		if (!s)
			continue;
		p = strstr(s, "dropped events:");
		if (p)
			sum += strtoull(p + 15, NULL, 10);
		p = strstr(s, "overrun:");
		if (p)
			sum += strtoull(p + 8, NULL, 10);
		free(s);
	}
	return sum;
}

/* Create the trigger event @ev (start/stop) on @fn (@exit: a kretprobe). */
static struct tracefs_dynevent *marker(const char *ev, const char *fn, int exit, const char *trig,
				       char *trig_saved, size_t tsz)
{
	struct tracefs_dynevent *d = exit ? tracefs_kretprobe_alloc(KSYS, ev, fn, NULL, 0)
					  : tracefs_kprobe_alloc(KSYS, ev, fn, NULL);

	if (!d)
		return NULL;
	if (tracefs_dynevent_create(d) < 0) {
		kcl_error(CMD, "cannot create kprobe event %s/%s on %s: %s (another ktrace kft --tracefs running?)",
			  KSYS, ev, fn, strerror(errno));
		tracefs_dynevent_free(d);
		return NULL;
	}
	if (tracefs_event_enable(NULL, KSYS, ev) < 0 ||
	    tracefs_event_file_write(NULL, KSYS, ev, "trigger", trig) < 0) {
		kcl_error(CMD, "cannot set trigger '%s' on %s/%s: %s", trig, KSYS, ev, strerror(errno));
		tracefs_event_disable(NULL, KSYS, ev);
		tracefs_dynevent_destroy(d, true);
		tracefs_dynevent_free(d);
		return NULL;
	}
	snprintf(trig_saved, tsz, "%s", trig);
	return d;
}

/*
 * Has kprobe_events a line that, from its character @skip on, is @want
 * (@exact) or starts with it?  kprobe_line("p:ktrace_kft/stop free_initmem",
 * 0, 1) finds that definition; kprobe_line("ktrace_kft/stop ", 2, 0) any
 * p: or r: event of that name.
 */
static int kprobe_line(const char *want, size_t skip, int exact)
{
	char *t = tracefs_instance_file_read(NULL, "kprobe_events", NULL), *p = t;
	size_t l = strlen(want);
	int found = 0;

	while (p && *p && !found) {
		const char *q = strcspn(p, "\n") > skip ? p + skip : "";

		found = !strncmp(q, want, l) && (!exact || q[l] == '\n' || q[l] == '\0');
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	free(t);
	return found;
}

/*
 * Remove the trigger events of an earlier run that was killed before it
 * could clean up, or of a boot (kprobe_event=).  Only called once
 * current_tracer is nop, so no other `ktrace kft --tracefs` is running.
 * An event whose tracefs directory the kernel did not create (the 6.1
 * boot-time race of text_marks()) is still listed in kprobe_events: it
 * is disabled through set_event and deleted from there too.
 */
static void remove_stale_events(void)
{
	static const char *const evs[] = { "start", "stop" };

	for (int i = 0; i < 2; i++) {
		char del[64], name[64];

		snprintf(name, sizeof(name), "%s/%s ", KSYS, evs[i]);
		if (tracefs_event_file_exists(NULL, KSYS, evs[i], "enable")) {
			tracefs_event_disable(NULL, KSYS, evs[i]);
			tracefs_event_file_write(NULL, KSYS, evs[i], "trigger", "!traceon");
			tracefs_event_file_write(NULL, KSYS, evs[i], "trigger", "!traceoff");
		} else if (kprobe_line(name, 2, 0)) {
			/* kprobe_event= enabled it at boot: an enabled event
			 * cannot be deleted, and set_event reaches it without
			 * its directory */
			char off[64];

			snprintf(off, sizeof(off), "!%s:%s", KSYS, evs[i]);
			tracefs_instance_file_append(NULL, "set_event", off);
		} else {
			continue;
		}
		snprintf(del, sizeof(del), "-:%s/%s", KSYS, evs[i]);
		tracefs_instance_file_append(NULL, "kprobe_events", del);
	}
}

static int add_filter(const char *file, const char *name)
{
	if (tracefs_instance_file_append(NULL, file, name) < 0) {
		kcl_error(CMD, "%s: ftrace cannot trace function '%s' (not in available_filter_functions)",
			  file, name);
		return -1;
	}
	return 0;
}

/*
 * The kernel function a function trigger (@what: "start" or "stop") names,
 * in *@name (NULL for a time trigger or none).  Return: 0, or -1 if the
 * address starts no kernel function (reported).
 */
static int trigger_function(const struct kft_ksyms *syms, const struct kft_trigger *t, const char *what,
			    const char *cfg_path, const char **name)
{
	if (t->kind != KFT_TRIG_ENTRY && t->kind != KFT_TRIG_EXIT)
		return 0;
	*name = kft_ksym_name(syms, t->arg);
	if (*name)
		return 0;
	kcl_error(CMD, "%s: %s function 0x%" PRIx64 " is no kernel function start", cfg_path, what,
		  (uint64_t)t->arg);
	return -1;
}

/*
 * Read the top instance's ring buffer (trace_pipe_raw: consumed) into @co:
 * the funcgraph_exit events, and the ktrace_kft start/stop trigger events
 * when @want_start / @want_stop.  *@tep is the caller's to tep_free().
 * Return: 0, or -1 (reported).
 */
static int read_events(struct coll *co, int want_start, int want_stop, struct tep_handle **tep)
{
	static const char *const systems[] = { "ftrace", KSYS, NULL };
	struct tep_event *e;
	double rate;

	*tep = tracefs_local_events_system(NULL, systems);
	e = *tep ? tep_find_event_by_name(*tep, "ftrace", "funcgraph_exit") : NULL;
	if (!e || !(co->f_func = tep_find_field(e, "func")) || !(co->f_depth = tep_find_field(e, "depth")) ||
	    !(co->f_call = tep_find_field(e, "calltime")) || !(co->f_ret = tep_find_field(e, "rettime"))) {
		kcl_error(CMD, "events/ftrace/funcgraph_exit/format: not found or not understood");
		return -1;
	}
	co->ev_exit = e->id;
	if (want_start && (e = tep_find_event_by_name(*tep, KSYS, "start")))
		co->ev_start = e->id;
	if (want_stop && (e = tep_find_event_by_name(*tep, KSYS, "stop")))
		co->ev_stop = e->id;
	if (tracefs_iterate_raw_events(*tep, NULL, NULL, 0, collect, co) < 0) {
		kcl_error(CMD, "reading the ring buffer (trace_pipe_raw): %s", strerror(errno));
		return -1;
	}
	rate = mono_durations(co->c, co->n);
	if (rate < 0.999 || rate > 1.001) /* beyond NTP's slew: say so */
		kcl_error(CMD, "note: function_graph's clock (trace_clock_local) ran at %.4f times CLOCK_MONOTONIC's rate: durations converted",
			  1.0 / rate);
	return 0;
}

/*
 * Apply @cfg (run state @r) to the calls in @co and write trace directory
 * @dst: kft-status (tracer @tracer), cpu0, callsites, kallsyms (copied from
 * @kallsyms), metadata.  Return: 0 and *@stats, or -1 (reported).
 */
static int write_trace(const char *dst, const struct kft_config *cfg, struct run *r, struct coll *co,
		       uint64_t lost, const char *tracer, const char *kallsyms, struct kft_fgraph_stats *stats)
{
	struct sites sites = { 0 };
	size_t kept;
	int st, rc = -1;

	if (co->oom)
		kcl_error(CMD, "warning: out of memory: only %zu calls were read", co->n);
	qsort(co->c, co->n, sizeof(*co->c), call_cmp);
	qsort(co->m, co->nm, sizeof(*co->m), mark_cmp);
	kept = apply(r, co->c, co->n, co->m, co->nm);
	{
		struct text_buf {
			char b[4096];
		} tb;
		int n = snprintf(tb.b, sizeof(tb.b),
				 "tracer: %s\n"
				 "calls read: %zu\n"
				 "trigger events: %zu\n"
				 "entries kept: %zu\n"
				 "entries lost: %" PRIu64 " (ring buffer full)\n"
				 "entries filtered:",
				 tracer, co->n, co->nm, kept, lost);

		for (int i = 0; i < D_N && n > 0 && (size_t)n < sizeof(tb.b); i++)
			n += snprintf(tb.b + n, sizeof(tb.b) - (size_t)n, "%s %s %" PRIu64, i ? "," : "",
				      drop_names[i], r->drops[i]);
		if (n > 0 && (size_t)n < sizeof(tb.b))
			n += snprintf(tb.b + n, sizeof(tb.b) - (size_t)n,
				      "\nstarted: %" PRIu64 " us\nstopped: %" PRIu64 " us\nconfiguration text:\n",
				      r->start_ns / 1000, r->stop_ns / 1000);
		if (n > 0 && (size_t)n < sizeof(tb.b))
			kft_config_format(cfg, tb.b + n, (kt_u32)(sizeof(tb.b) - (size_t)n), "  ", NULL, NULL);
		if ((st = ksf_replace(dst, "kft-status", tb.b, strlen(tb.b))) < 0)
			kcl_error(CMD, "%s/kft-status: %s", dst, strerror(-st));
	}
	if ((st = write_stream(dst, co->c, kept, lost, &sites)) < 0 || (st = write_sites(dst, &sites)) < 0) {
		kcl_error(CMD, "%s: cannot write: %s", dst, strerror(-st));
		goto out;
	}
	st = kft_kdir_symbols(dst, kallsyms);
	if (st < 0 || kft_kdir_metadata(dst, "tracefs function_graph", SUBBUF, st > 0, "/proc") < 0)
		goto out;
	stats->read = co->n;
	stats->kept = kept;
	stats->lost = lost;
	rc = 0;
out:
	free(sites.v);
	return rc;
}

/*
 * The configuration at @cfg_path (NULL: none) into @cfg, with kernel names
 * from @syms (loaded here); its start and stop functions into *@fstart and
 * *@fstop; the run @r set up from it.  Return: 0, -1 (reported).
 */
static int fg_config(const char *cfg_path, struct kft_config *cfg, struct kft_ksyms *syms, struct run *r,
		     const char **fstart, const char **fstop)
{
	if (kft_ksyms_load(syms, "/proc/kallsyms") < 0 || !syms->n) {
		kcl_error(CMD, "/proc/kallsyms: %s", syms->n ? strerror(errno) : "no function symbols");
		return -1;
	}
	kft_config_init(cfg);
	if (cfg_path) {
		struct kft_error err;
		size_t len = 0;
		char *text = kcl_slurp(cfg_path, &len, 65536), msg[400];

		if (!text) {
			kcl_error(CMD, "%s: %s", cfg_path,
				  errno == EFBIG ? "larger than 64 KiB" : strerror(errno));
			return -1;
		}
		if (kft_config_parse(cfg, text, len, kft_ksym_resolve, syms, &err) < 0) {
			kft_error_format(msg, sizeof(msg), cfg_path, &err);
			kcl_error(CMD, "%s", msg);
			free(text);
			return -1;
		}
		free(text);
	}
	if (cfg->watch != KFT_WATCH_NONE) {
		kcl_error(CMD, "%s: watch %s needs the stack pointer at each entry, which function_graph does not record: use ktrace kft --kernel",
			  cfg_path, cfg->watch == KFT_WATCH_STACK ? "stack" : "worst-stack");
		return -1;
	}
	if (trigger_function(syms, &cfg->start, "start", cfg_path, fstart) < 0 ||
	    trigger_function(syms, &cfg->stop, "stop", cfg_path, fstop) < 0)
		return -1;
	r->cfg = cfg;
	r->graph = cfg->start.kind == KFT_TRIG_ENTRY && cfg->stop.kind == KFT_TRIG_EXIT &&
		   cfg->start.arg == cfg->stop.arg;
	if (cfg->stop.kind == KFT_TRIG_TIME)
		r->stop_after = cfg->stop.arg * 1000;
	return 0;
}

/* tracefs: present, with function_graph, not in use.  Return: 0, -1 (reported). */
static int fg_check_tracefs(void)
{
	char *tracers, *cur;

	if (!tracefs_tracing_dir()) {
		kcl_error(CMD, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return -1;
	}
	tracers = tracefs_instance_file_read(NULL, "available_tracers", NULL);
	if (!tracers || !strstr(tracers, "function_graph")) {
		kcl_error(CMD, "%s: this kernel has no function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER); ktrace kft --kernel probes chosen functions with ktrace.ko",
			  tracers ? "available_tracers" : strerror(errno));
		free(tracers);
		return -1;
	}
	free(tracers);
	cur = tf_value("current_tracer");
	if (!cur || strcmp(cur, "nop")) {
		kcl_error(CMD, "tracefs is busy: current_tracer is '%s' (set it to nop first)", cur ? cur : "?");
		free(cur);
		return -1;
	}
	free(cur);
	return 0;
}

/* Trigger events after the tracer: their probes then run first at entry.  Return: 0, -1. */
static int fg_triggers(const struct kft_config *cfg, const struct run *r, const char *fstart,
		       const char *fstop)
{
	if (fstart && !r->graph) {
		ev_start = marker("start", fstart, cfg->start.kind == KFT_TRIG_EXIT,
				  (cfg->flags & KFT_CF_AUTOREPEAT) ? "traceon" : "traceon:1", trig_start,
				  sizeof(trig_start));
		if (!ev_start)
			return -1;
	}
	if (fstop && !r->graph) {
		/* A condition makes traceoff run after the event is written. */
		ev_stop = marker("stop", fstop, cfg->stop.kind == KFT_TRIG_EXIT,
				 (cfg->flags & KFT_CF_AUTOREPEAT) ? "traceoff if common_pid >= 0"
								  : "traceoff:1 if common_pid >= 0",
				 trig_stop, sizeof(trig_stop));
		if (!ev_stop)
			return -1;
	}
	return 0;
}

/*
 * The run set up with tracing off: clock, buffer, threshold, interrupts,
 * the graph and function filters, the tracer, then the trigger events.
 * Return: 0, -1 (reported).
 */
static int fg_setup(const struct kft_fgraph_opts *o, const struct kft_config *cfg, const struct kft_ksyms *syms,
		    const struct run *r, const char *fstart, const char *fstop)
{
	char num[32];

	snprintf(num, sizeof(num), "%u", o->buf_kb ? o->buf_kb : 4096);
	if (tf_write("trace_clock", "mono") < 0 || tf_write("buffer_size_kb", num) < 0 ||
	    tf_write("options/overwrite", "0") < 0) {
		kcl_error(CMD, "cannot set trace_clock mono, buffer_size_kb %s and overwrite 0: %s", num,
			  strerror(errno));
		return -1;
	}
	snprintf(num, sizeof(num), "%" PRIu64, (cfg->flags & KFT_CF_MINTIME) ? (uint64_t)cfg->mintime_us : 0);
	if (tf_write("tracing_thresh", num) < 0) {
		kcl_error(CMD, "tracing_thresh %s: %s", num, strerror(errno));
		return -1;
	}
	tf_write("options/funcgraph-irqs", (cfg->flags & KFT_CF_NOINTS) ? "0" : "1");
	tracefs_instance_file_clear(NULL, "set_graph_function");
	tracefs_instance_file_clear(NULL, "set_ftrace_filter");
	if (r->graph && add_filter("set_graph_function", fstart) < 0)
		return -1;
	for (uint32_t i = 0; i < cfg->nfuncs; i++) {
		const char *name = kft_ksym_name(syms, cfg->funcs[i]);

		if (!name) {
			kcl_error(CMD, "%s: funclist function 0x%" PRIx64 " is no kernel function start",
				  o->config, (uint64_t)cfg->funcs[i]);
			return -1;
		}
		if (add_filter("set_ftrace_filter", name) < 0)
			return -1;
	}
	if (r->graph && cfg->nfuncs && add_filter("set_ftrace_filter", fstart) < 0)
		return -1;
	if (tracefs_tracer_set(NULL, TRACEFS_TRACER_FUNCTION_GRAPH) < 0) {
		kcl_error(CMD, "current_tracer function_graph: %s", strerror(errno));
		return -1;
	}
	tracefs_instance_file_clear(NULL, "trace");
	return fg_triggers(cfg, r, fstart, fstop);
}

/* Without a start event: tracing on now (after a start time, if any). */
static void fg_start_now(const struct kft_config *cfg, struct run *r)
{
	if (cfg->start.kind == KFT_TRIG_TIME) {
		uint64_t at = cfg->start.arg * 1000;

		while (!stop_signal && kcl_now_ns(CLOCK_MONOTONIC) < at) {
			uint64_t left = at - kcl_now_ns(CLOCK_MONOTONIC);
			struct timespec ts = { 0, (long)(left > 10000000 ? 10000000 : left) };

			nanosleep(&ts, NULL);
		}
	}
	r->on_ns = kcl_now_ns(CLOCK_MONOTONIC);
	tracefs_trace_on(NULL);
}

/* The program of @argv started, into *@child.  Return: 0, -1 (reported). */
static int fg_spawn(char *const *argv, pid_t *child)
{
	*child = fork();
	if (*child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		/* not kcl_error(): the hook may flush stdio buffers the parent owns */
		fprintf(stderr, "ktrace kft: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (*child < 0) {
		kcl_error(CMD, "fork: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Wait until the run ends: a signal, the program's exit, the duration,
 * the stop time, or a stop trigger switching tracing off for good; then
 * tracing off and the program (if still running) ended.
 */
static void fg_wait(const struct kft_fgraph_opts *o, const struct kft_config *cfg, const struct run *r,
		    pid_t child, int seen_on, uint64_t deadline)
{
	int st;

	while (!stop_signal) {
		struct timespec ts = { 0, 10000000 };
		int on = tracefs_trace_is_on(NULL);

		if (child && waitpid(child, &st, WNOHANG) == child) {
			child = 0;
			break;
		}
		if (deadline && kcl_now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		if (on > 0 && !seen_on) {
			seen_on = 1;
			if (r->stop_after && !(cfg->flags & KFT_CF_AUTOREPEAT))
				deadline = kcl_now_ns(CLOCK_MONOTONIC) + r->stop_after + 10000000;
		}
		if (seen_on && r->stop_after && r->on_ns && !(cfg->flags & KFT_CF_AUTOREPEAT) &&
		    kcl_now_ns(CLOCK_MONOTONIC) >= r->on_ns + r->stop_after)
			break;
		/* A stop trigger switched tracing off for good. */
		if (seen_on && on == 0 && !(cfg->flags & KFT_CF_AUTOREPEAT) && !child && !o->duration_ns)
			break;
		nanosleep(&ts, NULL);
	}
	tracefs_trace_off(NULL);
	if (child) {
		kill(child, SIGTERM);
		waitpid(child, &st, 0);
	}
}

/* Trace: tracing on (or left to the start event), the program, the wait.  Return: 0, -1 (reported). */
static int fg_trace(const struct kft_fgraph_opts *o, const struct kft_config *cfg, struct run *r)
{
	uint64_t deadline = 0;
	pid_t child = 0;
	int seen_on = 0;

	if (!ev_start) {
		fg_start_now(cfg, r);
		seen_on = 1;
	}
	if (o->duration_ns)
		deadline = kcl_now_ns(CLOCK_MONOTONIC) + o->duration_ns;
	if (o->argv && o->argv[0] && fg_spawn(o->argv, &child) < 0)
		return -1;
	fg_wait(o, cfg, r, child, seen_on, deadline);
	return 0;
}

int kft_fgraph_run(const struct kft_fgraph_opts *o, struct kft_fgraph_stats *stats)
{
	static struct kft_config cfg;
	struct kft_ksyms syms = { 0 };
	struct coll co = { .ev_exit = -1, .ev_start = -1, .ev_stop = -1 };
	struct run r = { 0 };
	struct tep_handle *tep = NULL;
	const char *fstart = NULL, *fstop = NULL;
	int rc = -1;

	if (fg_config(o->config, &cfg, &syms, &r, &fstart, &fstop) < 0 || fg_check_tracefs() < 0 ||
	    kft_kdir_create(o->dir) < 0)
		goto out;
	remove_stale_events();

	/* Save what we change, then set the run up with tracing off. */
	for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++)
		saved[i].old = tf_value(saved[i].file);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	tracefs_trace_off(NULL);
	if (fg_setup(o, &cfg, &syms, &r, fstart, fstop) < 0 || fg_trace(o, &cfg, &r) < 0 ||
	    read_events(&co, ev_start != NULL, ev_stop != NULL, &tep) < 0) {
		tf_restore();
		goto out;
	}
	/* What the ring buffer held is read: tracefs as it was, then the trace written. */
	{
		uint64_t lost = lost_events();

		tf_restore();
		if (write_trace(o->dir, &cfg, &r, &co, lost, "function_graph (ktrace kft --tracefs)",
				"/proc/kallsyms", stats) < 0)
			goto out;
	}
	rc = 0;
out:
	if (tep)
		tep_free(tep);
	free(co.c);
	free(co.m);
	kft_ksyms_free(&syms);
	return rc;
}

/* ---- a boot-time run (ktrace kft --boot) ------------------------------- */

/*
 * Without autorepeat a trigger fires once: keep the first start mark and
 * the first stop mark after it (after boot if the start is no event).
 */
static void first_marks(struct coll *co, int start_is_mark)
{
	size_t out = 0;
	int have_start = !start_is_mark, have_stop = 0;

	for (size_t i = 0; i < co->nm; i++) {
		if (!co->m[i].stop && !have_start) {
			have_start = 1;
			co->m[out++] = co->m[i];
		} else if (co->m[i].stop && have_start && !have_stop) {
			have_stop = 1;
			co->m[out++] = co->m[i];
		}
	}
	co->nm = out;
}

/* After the extraction: function_graph off, the boot run's settings removed. */
static void boot_reset(void)
{
	tracefs_trace_off(NULL);
	tf_write("current_tracer", "nop"); /* first: see tf_restore() */
	tf_write("tracing_thresh", "0");
	tracefs_instance_file_clear(NULL, "set_graph_function");
	tracefs_instance_file_clear(NULL, "set_ftrace_filter");
	tracefs_instance_file_clear(NULL, "set_ftrace_notrace");
	tf_write("max_graph_depth", "0");
	tf_write("options/funcgraph-irqs", "1");
	tf_write("options/overwrite", "1");
	remove_stale_events();
	tracefs_trace_on(NULL);
}

/*
 * The marks of trigger event @ev on function @fn from the `trace` text
 * (read, not consumed), for a kprobe event that a boot defined but whose
 * events/ktrace_kft/EV directory the kernel did not create, so that its
 * raw records cannot be decoded: on 6.1 kprobe_event= races with the
 * asynchronous set-up of tracefs's event directories (seen about once in
 * three boots in the test VM).  The text has microseconds: the mark is
 * placed at the end of its microsecond.  Return: 0, or -1.
 */
static int text_marks(struct coll *co, const char *ev, const char *fn, int stop)
{
	char *txt, *line, *save = NULL, pat[600];
	int rc = 0;

	if (!fn)
		return -1;
	snprintf(pat, sizeof(pat), "/* %s: (%s+0x", ev, fn);
	tf_write("options/funcgraph-abstime", "1");
	txt = tracefs_instance_file_read(NULL, "trace", NULL);
	tf_write("options/funcgraph-abstime", "0");
	if (!txt)
		return -1;
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long sec, usec;

		if (!strstr(line, pat) || sscanf(line, " %llu.%6llu", &sec, &usec) != 2)
			continue;
		if (co->nm == co->capm && grow((void **)&co->m, &co->capm, sizeof(*co->m), 64) < 0) {
			rc = -1;
			break;
		}
		co->m[co->nm++] = (struct mark){ .ts = sec * 1000000000ull + usec * 1000 + 999, .stop = stop };
	}
	free(txt);
	return rc;
}

/*
 * extract_config - the run's configuration into @cfg (names from @syms,
 * loaded here from /proc/kallsyms): the file o->config, else the one the
 * boot parameters carry (an empty configuration if none); *@label names
 * it in messages.  Refuses watch.  Returns 0, or -1 (reported).
 */
static int extract_config(const struct kft_fgraph_opts *o, struct kft_config *cfg, struct kft_ksyms *syms,
			  const char **label)
{
	static char text[65536];
	size_t len = 0;

	if (kft_ksyms_load(syms, "/proc/kallsyms") < 0 || !syms->n) {
		kcl_error(CMD, "/proc/kallsyms: %s", syms->n ? strerror(errno) : "no function symbols");
		return -1;
	}
	kft_config_init(cfg);
	if (o->config) {
		char *t = kcl_slurp(o->config, &len, sizeof(text) - 1);

		if (!t) {
			kcl_error(CMD, "%s: %s", o->config, errno == EFBIG ? "larger than 64 KiB" : strerror(errno));
			return -1;
		}
		memcpy(text, t, len + 1);
		free(t);
	} else {
		char *cl = kcl_slurp("/proc/cmdline", &len, 8192);
		int f = cl ? kft_boot_config_text(cl, KFT_BOOT_CONFIG_PARAM, text, sizeof(text)) : 0;

		free(cl);
		*label = "/proc/cmdline (" KFT_BOOT_CONFIG_PARAM ")";
		len = f > 0 ? strlen(text) : 0;
	}
	if (len) {
		struct kft_error err;
		char msg[400];

		if (kft_config_parse(cfg, text, len, kft_ksym_resolve, syms, &err) < 0) {
			kft_error_format(msg, sizeof(msg), *label, &err);
			kcl_error(CMD, "%s", msg);
			return -1;
		}
	}
	if (cfg->watch != KFT_WATCH_NONE) {
		kcl_error(CMD, "%s: watch needs the stack pointer, which function_graph does not record", *label);
		return -1;
	}
	return 0;
}

/*
 * extract_tracefs - is there a boot-time function_graph run?  Switches
 * tracing off and warns of a clock other than mono; *@cur, *@clk: the
 * tracer's and clock's values (the caller frees them).  Returns 0, or -1
 * (reported).
 */
static int extract_tracefs(char **cur, char **clk)
{
	if (!tracefs_tracing_dir()) {
		kcl_error(CMD, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return -1;
	}
	*cur = tf_value("current_tracer");
	if (!*cur || strcmp(*cur, "function_graph")) {
		kcl_error(CMD, "no boot-time run to extract: current_tracer is '%s', not function_graph (boot with the parameters ktrace kft --boot prints)",
			  *cur ? *cur : "?");
		return -1;
	}
	tracefs_trace_off(NULL);
	*clk = tf_value("trace_clock");
	if (*clk && strcmp(*clk, "mono"))
		kcl_error(CMD, "warning: trace_clock is %s, not mono: times are not CLOCK_MONOTONIC (boot with trace_clock=mono)",
			  *clk);
	return 0;
}

/*
 * extract_plan - the run as the configuration describes it, from boot:
 * @r's start (on_ns), graph mode and stop time; which trigger events
 * (*@want_start, *@want_stop) open and close it.
 */
static void extract_plan(const struct kft_config *cfg, struct kft_ksyms *syms, struct run *r,
			 int *want_start, int *want_stop)
{
	kt_u64 sk = 0;

	kft_ksym_resolve(syms, "start_kernel", 12, &sk);
	r->cfg = cfg;
	if (cfg->start.kind == KFT_TRIG_ENTRY && cfg->start.arg == sk)
		r->on_ns = 1; /* from boot: whatever function_graph recorded */
	else if (cfg->start.kind == KFT_TRIG_TIME)
		r->on_ns = cfg->start.arg ? cfg->start.arg * 1000 : 1;
	else if (cfg->start.kind == KFT_TRIG_NONE)
		r->on_ns = 1;
	else
		*want_start = 1;
	r->graph = *want_start && cfg->start.kind == KFT_TRIG_ENTRY && cfg->stop.kind == KFT_TRIG_EXIT &&
		   cfg->start.arg == cfg->stop.arg;
	if (r->graph)
		*want_start = 0;
	else
		*want_stop = cfg->stop.kind == KFT_TRIG_ENTRY || cfg->stop.kind == KFT_TRIG_EXIT;
	if (cfg->stop.kind == KFT_TRIG_TIME)
		r->stop_after = cfg->stop.arg * 1000;
}

/*
 * extract_text_triggers - a wanted trigger event (*@want_start,
 * *@want_stop) whose events/ directory the boot did not create: its marks
 * read from the trace text into @co instead (text_marks()), and it is no
 * longer wanted from the raw events.  Returns 0, or -1 (reported).
 */
static int extract_text_triggers(struct coll *co, const struct kft_config *cfg, const struct kft_ksyms *syms,
				 const char *label, int *want_start, int *want_stop)
{
	for (int i = 0; i < 2; i++) {
		const char *ev = i ? "stop" : "start";
		const struct kft_trigger *t = i ? &cfg->stop : &cfg->start;
		char def[600];

		if (!(i ? *want_stop : *want_start) || tracefs_event_file_exists(NULL, KSYS, ev, "enable"))
			continue;
		/* Defined but without its tracefs directory: read its marks from the text. */
		snprintf(def, sizeof(def), "%c:%s/%s %s", t->kind == KFT_TRIG_EXIT ? 'r' : 'p', KSYS, ev,
			 kft_ksym_name(syms, t->arg) ? kft_ksym_name(syms, t->arg) : "?");
		if (!kprobe_line(def, 0, 1) || text_marks(co, ev, kft_ksym_name(syms, t->arg), i) < 0) {
			kcl_error(CMD, "%s: the boot created no kprobe event %s/%s for the %s trigger (kprobe_event= refused the function? see dmesg)",
				  label, KSYS, ev, ev);
			return -1;
		}
		kcl_error(CMD, "warning: tracefs has no events/%s/%s directory (a 6.1 boot-time race): the %s trigger's time is read from the trace text, to the microsecond",
			  KSYS, ev, ev);
		if (i)
			*want_stop = 0;
		else
			*want_start = 0;
	}
	return 0;
}

/* kft_fgraph_extract - see kclient/kclient.h: the steps above, in order. */
int kft_fgraph_extract(const struct kft_fgraph_opts *o, struct kft_fgraph_stats *stats)
{
	static struct kft_config cfg;
	const char *label = o->config;
	struct kft_ksyms syms = { 0 };
	struct coll co = { .ev_exit = -1, .ev_start = -1, .ev_stop = -1 };
	struct run r = { 0 };
	struct tep_handle *tep = NULL;
	char *cur = NULL, *clk = NULL;
	int rc = -1, want_start = 0, want_stop = 0;

	if (extract_config(o, &cfg, &syms, &label) < 0 || extract_tracefs(&cur, &clk) < 0 ||
	    kft_kdir_create(o->dir) < 0)
		goto out;
	extract_plan(&cfg, &syms, &r, &want_start, &want_stop);
	if (extract_text_triggers(&co, &cfg, &syms, label, &want_start, &want_stop) < 0 ||
	    read_events(&co, want_start, want_stop, &tep) < 0)
		goto out;
	qsort(co.m, co.nm, sizeof(*co.m), mark_cmp);
	if (!(cfg.flags & KFT_CF_AUTOREPEAT))
		first_marks(&co, want_start);
	if (write_trace(o->dir, &cfg, &r, &co, lost_events(), "function_graph from boot (ktrace kft --boot; --tracefs extract)",
			"/proc/kallsyms", stats) < 0)
		goto out;
	boot_reset();
	rc = 0;
out:
	if (tep)
		tep_free(tep);
	free(cur);
	free(clk);
	free(co.c);
	free(co.m);
	kft_ksyms_free(&syms);
	return rc;
}

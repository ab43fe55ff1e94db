/*
 * cli/cmd_export.c - `ktrace export DIR --format=perfetto|chrome|folded|csv|ctf|trace.dat
 * [-o FILE]`: a trace (application and kernel sub-trace merged by time) in
 * formats other tools read:
 *
 *   perfetto          Perfetto's protobuf trace (formats/perfetto.c): calls
 *                     as slice begin/end on their thread's track, written
 *                     after the other records in entry order (the reader's
 *                     external sort; the pending ends in a heap) so slices
 *                     nest and each packet sequence's times only grow;
 *                     static events as instants (klog entry/exit as
 *                     slices); context switches and wakeups as ftrace
 *                     sched_switch/sched_wakeup (Perfetto's CPU lanes),
 *                     other kernel events as instants on per-CPU tracks;
 *                     gaps as instants on a track of their own.
 *   chrome, json      Chrome trace-event JSON ("JSON Object Format"; opens in
 *                     ui.perfetto.dev and chrome://tracing): function calls
 *                     as complete events ("ph":"X") on their thread with the
 *                     function's name, static events as instants (or B/E
 *                     for klog's entry/exit codes), the kernel as a process
 *                     "kernel" with a thread per CPU carrying what ran there
 *                     (X slices named after the task, from context switches)
 *                     and every kernel event as an instant with its
 *                     arguments; process and thread names as "M" metadata;
 *                     gaps as global instants.
 *   folded            folded stacks for flame graphs (flamegraph.pl,
 *                     speedscope, inferno): "THREAD;caller;...;callee N" per
 *                     line, N the self time in ns of that stack; stacks are
 *                     rebuilt from the CALL records' entry times, durations
 *                     and depths.
 *   csv               one row per record: time_ns, dur_ns, cpu, pid, tid,
 *                     comm, category, name, args ("k=v;k=v").
 *   ctf               a CTF 1.8 trace directory (-o OUTDIR, required) for
 *                     babeltrace2 and Trace Compass, written by
 *                     libbabeltrace2's sink.ctf.fs (formats/ctf.c: calls
 *                     as LTTng-UST func_entry/func_exit events, every other
 *                     record as an event of its own class, gaps as
 *                     ktrace:lost events).
 *   trace.dat         trace-cmd's file (`trace-cmd report`, KernelShark) of
 *                     the kernel sub-trace's raw ftrace copy, every
 *                     tracepoint with all its fields; written by
 *                     kclient/tracedat.c (libtracecmd); needs -o FILE (the
 *                     writer seeks); the application's calls are not in it.
 *
 * Memory is bounded however large the trace: JSON and CSV stream record by
 * record (metadata events for threads are written when a thread is first
 * seen); perfetto streams packet by packet and sorts the calls as folded
 * does; folded sorts the calls with the reader's external sort (runs
 * spill to temporary files) and aggregates at most 1M distinct stacks at a
 * time (a stack may then appear on several lines; flame-graph tools sum
 * them).  Long exports show progress on a terminal (analysis/progress.c).
 *
 * CTF reads the trace twice (calls sorted by entry time first, bounded
 * memory; see export_ctf()).
 *
 * Exit status: 0, 1 the trace has errors (everything readable was
 * exported) or the output failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "formats/formats.h"
#include "formats/plugin.h"
#include "analysis/analysis.h"
#include "cli/output.h"
#include "cli/select.h"
#include "kclient/kclient.h"
#include "reader/reader.h"
#include "reader/sched.h"

/* The exporters of ktrace-export.so (Perfetto, CTF, trace.dat), loaded by run() when one is asked for. */
static const struct fmt_plugin *fx;

#define CMD "export"
#define KPID 1000000000u /* the kernel's pseudo process in JSON; CPU n is KPID + 1 + n */

enum fmt { F_NONE, F_JSON, F_FOLDED, F_CSV, F_CTF, F_PERFETTO, F_TRACEDAT };

struct ex {
	struct ktr_trace *t;
	struct cli_select sel;
	FILE *out;
	struct ka_names *names;
	struct fmt_te te; /* JSON */
	int no_kernel;
	size_t sort_mem;      /* --sort-mem: sort the calls in this much memory (0: default, streamed where possible) */
	struct ka_map64 seen; /* threads and CPUs whose names were written (JSON) */
	uint64_t events;
};

/* ---- JSON (trace events: formats/json.c) ---------------------------------------- */

/* 1 if @key (pid << 32 | tid) was seen (or there is no memory to tell); adds it. */
static int seen(struct ex *x, uint64_t key)
{
	return ka_map64_get(&x->seen, key) >= 0 || ka_map64_put(&x->seen, key, 0) < 0;
}

/* Name a thread (and its process) the first time it is used. */
static void json_thread(struct ex *x, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;

	if (seen(x, key))
		return;
	if (!seen(x, (uint64_t)pid << 32 | 0xffffffffu)) {
		fmt_te_meta(&x->te, "process_name", pid, pid, pid == KPID ? "kernel" : ka_comm(x->t, pid));
		if (pid == KPID)
			fmt_te_sort_index(&x->te, KPID, -1);
	}
	if (pid == KPID) {
		char name[32];

		if (tid == KPID)
			snprintf(name, sizeof(name), "CPU ?");
		else
			snprintf(name, sizeof(name), "CPU %u", tid - KPID - 1);
		fmt_te_meta(&x->te, "thread_name", pid, tid, name);
	} else {
		fmt_te_meta(&x->te, "thread_name", pid, tid, ka_comm(x->t, tid));
	}
}

static uint32_t cpu_tid(int cpu)
{
	return cpu >= 0 ? KPID + 1 + (uint32_t)cpu : KPID;
}

/* A record's arguments by name; with @with_task its task too (kernel events). */
static void json_args(struct ex *x, const struct ktr_rec *r, int with_task)
{
	const char *names[KTRACE_MAX_WORDS], *sys;
	uint64_t vals[KTRACE_MAX_WORDS];
	unsigned n = ktr_rec_args(x->t, r, names, vals);

	fmt_te_args(&x->te, names, vals, n, ktr_rec_hidden(r));
	if ((sys = ka_syscall_name(x->t, r)))
		fmt_te_arg_str(&x->te, "syscall", sys);
	if (with_task) {
		/* the task the event happened in (its own arguments may name others) */
		fmt_te_arg_u64(&x->te, "task_pid", r->pid);
		fmt_te_arg_u64(&x->te, "task_tid", r->tid);
		fmt_te_arg_str(&x->te, "task_comm", ka_comm(x->t, r->tid));
	}
	fmt_te_end_event(&x->te);
}

/* A running interval of a task on a CPU (reader/sched.c): a slice on that CPU's track. */
static void json_running(void *arg, const struct ktr_sched_iv *iv)
{
	struct ex *x = arg;
	char name[64];

	if (iv->state != KTR_TASK_RUNNING)
		return;
	json_thread(x, KPID, cpu_tid(iv->cpu));
	snprintf(name, sizeof(name), "%s %" PRIu32, ka_comm(x->t, iv->tid), iv->tid);
	fmt_te_event(&x->te, name, "sched", "X", NULL, iv->start_ns, iv->end_ns - iv->start_ns, KPID,
		     cpu_tid(iv->cpu));
	fmt_te_arg_u64(&x->te, "pid", iv->pid);
	fmt_te_arg_u64(&x->te, "tid", iv->tid);
	fmt_te_end_event(&x->te);
}

static void json_gap(struct ex *x, const struct ktr_rec *r)
{
	char name[64];
	int kernel = r->stream >= KTR_KERNEL_STREAM;

	fmt_te_event(&x->te, ktr_rec_name(x->t, r, name, sizeof(name)), "ktrace", "i", "g", r->ns, 0,
		     kernel ? KPID : r->pid, kernel ? cpu_tid(r->cpu) : r->tid);
	fmt_te_arg_u64(&x->te, "count", r->count);
	fmt_te_arg_u64(&x->te, "stream", r->stream);
	if (r->what)
		fmt_te_arg_str(&x->te, "what", r->what);
	fmt_te_end_event(&x->te);
}

static void json_call(struct ex *x, const struct ktr_call *c)
{
	json_thread(x, c->pid, c->tid);
	/*
	 * Only arguments that are the same on every call of a function, and
	 * the exceptions: flame-graph importers (speedscope) tell frames
	 * apart by name and arguments, so a depth or CPU here would split
	 * one function into many frames (the nesting shows the depth).
	 */
	fmt_te_event(&x->te, ka_names_call(x->names, c), "call", "X", NULL, c->entry_ns, c->dur_ns,
		     c->pid, c->tid);
	if (c->sig)
		fmt_te_arg_u64(&x->te, "signal_depth", c->sig);
	if (c->flags & KTRACE_CALLF_UNFINISHED)
		fmt_te_arg_true(&x->te, "unfinished");
	if (c->func)
		fmt_te_arg_hex(&x->te, "func", c->func);
	fmt_te_end_event(&x->te);
}

static void json_record(struct ex *x, const struct ktr_rec *r)
{
	char name[128];
	const char *ph = "i";

	if (r->kind == KTR_GAP) {
		json_gap(x, r);
		return;
	}
	if (r->cls == KTRACE_CLASS_CALL) {
		struct ktr_call c;

		if (ktr_call_decode(x->t, r, &c) && cli_select_call(&x->sel, &c))
			json_call(x, &c);
		return;
	}
	ktr_rec_name(x->t, r, name, sizeof(name));
	if (r->cls == KTRACE_CLASS_KEVENT) {
		json_thread(x, KPID, cpu_tid(r->cpu));
		fmt_te_event(&x->te, name, ktr_rec_category(x->t, r), "i", "t", r->ns, 0, KPID,
			     cpu_tid(r->cpu));
		json_args(x, r, 1);
		return;
	}
	/* static events (LOG2/LOG4) and unknown classes: on their thread */
	switch (ka_static_slice(x->t, r, name, sizeof(name))) {
	case 'B': ph = "B"; break;
	case 'E': ph = "E"; break;
	}
	json_thread(x, r->pid, r->tid);
	fmt_te_event(&x->te, name, ktr_rec_category(x->t, r), ph, ph[0] == 'i' ? "t" : NULL, r->ns, 0,
		     r->pid, r->tid);
	json_args(x, r, 0);
}

static int export_json(struct ex *x)
{
	struct ktr_sched *sched = x->no_kernel ? NULL : ktr_sched_new(0, json_running, x);
	struct ka_progress *prog = ka_progress_start(x->t, CMD, x->out == stdout);
	const struct ktr_info *in = ktr_info(x->t);
	const char *kv[] = { "generator", "ktrace " KTRACE_VERSION, "clock", "CLOCK_MONOTONIC", "host",
			     in->host, "kernel", in->kernel, "trace", ktr_dir(x->t) };
	struct ktr_rec r;
	uint64_t last = 0;

	if (fmt_te_begin(&x->te, x->out)) {
		ktr_sched_free(sched);
		ka_progress_end(prog);
		return -ENOMEM;
	}
	while (ktr_next(x->t, &r)) {
		ka_progress_rec(prog, &r);
		cli_diags(CMD, x->t);
		if (r.ns > last)
			last = r.ns;
		if (x->no_kernel && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT))
			continue;
		if (sched)
			ktr_sched_feed(sched, x->t, &r);
		if (r.cls != KTRACE_CLASS_CALL && !cli_select_rec(&x->sel, &r))
			continue;
		json_record(x, &r);
		x->events++;
		if (ferror(x->out))
			break;
	}
	if (sched) {
		ktr_sched_finish(sched, last);
		ktr_sched_free(sched);
	}
	ka_progress_end(prog);
	if (fmt_te_end(&x->te, kv, 5)) {
		cli_error(CMD, "the JSON generator refused the document (a bug: please report)");
		return 1;
	}
	return 0;
}

/* ---- Perfetto protobuf (formats/perfetto.c) ---------------------------------- */

/*
 * Packet sequences: application and kernel events in record order, calls
 * in entry order (rebuilt after the records with the reader's external
 * sort), ftrace scheduling events.  Each is in time order.
 */
#define PF_SEQ_EVENTS 1
#define PF_SEQ_CALLS 2
#define PF_SEQ_FTRACE 3

struct pf {
	struct ex *x;
	struct fmt_pf w;
	struct fmt_pf_seq ev, calls;
	struct ka_map64 tracks; /* track uuids by key (pid << 32 | tid) */
	uint64_t next_uuid;
	uint64_t *ord_uuid; /* call sorter's thread ordinal -> track uuid (0: none yet) */
	size_t nord;
	struct ktr_exits exits; /* the calls whose slice end is still to write */
	int enomem;
};

/* *@uuid: the uuid of track @key.  Return: 1 if it was known, 0 if new (to declare). */
static int pf_uuid(struct pf *p, uint64_t key, uint64_t *uuid)
{
	long v = ka_map64_get(&p->tracks, key);

	if (v >= 0) {
		*uuid = (uint64_t)v;
		return 1;
	}
	if (ka_map64_put(&p->tracks, key, (uint32_t)(p->next_uuid + 1)) < 0) {
		p->enomem = 1;
		*uuid = UINT64_MAX - 1; /* one shared track: still a valid trace */
		return 1;
	}
	*uuid = ++p->next_uuid;
	return 0;
}

/* The track of thread @tid of process @pid, declared (with its process) on first use. */
static uint64_t pf_thread(struct pf *p, struct fmt_pf_seq *s, uint32_t pid, uint32_t tid)
{
	uint64_t uuid, puuid;

	if (pf_uuid(p, (uint64_t)pid << 32 | tid, &uuid))
		return uuid;
	if (!pf_uuid(p, (uint64_t)pid << 32 | 0xffffffffu, &puuid))
		fx->pf_process(&p->w, s, puuid, pid, ka_comm(p->x->t, pid));
	fx->pf_thread(&p->w, s, uuid, pid, tid, ka_comm(p->x->t, tid));
	return uuid;
}

/* The kernel's track for CPU @cpu (-1: unknown), under a "kernel" track. */
static uint64_t pf_cpu(struct pf *p, int cpu)
{
	uint64_t uuid, root;
	char name[32];

	if (pf_uuid(p, (uint64_t)KPID << 32 | cpu_tid(cpu), &uuid))
		return uuid;
	if (!pf_uuid(p, (uint64_t)KPID << 32 | KPID, &root))
		fx->pf_track(&p->w, &p->ev, root, 0, "kernel");
	if (cpu >= 0)
		snprintf(name, sizeof(name), "CPU %d", cpu);
	else
		snprintf(name, sizeof(name), "CPU ?");
	fx->pf_track(&p->w, &p->ev, uuid, root, name);
	return uuid;
}

/* A record's arguments; with @task the task it happened in (kernel events). */
static unsigned pf_args(struct pf *p, const struct ktr_rec *r, int task, struct fmt_pf_arg *a)
{
	const char *names[KTRACE_MAX_WORDS], *sys;
	uint64_t vals[KTRACE_MAX_WORDS];
	unsigned n = ktr_rec_args(p->x->t, r, names, vals), k = 0;

	for (unsigned i = 0; i < n && k < FMT_PF_MAX_ARGS - 4; i++)
		a[k++] = ktr_rec_hidden(r) & (1u << i) /* a kernel address (lkst.h) */
				 ? (struct fmt_pf_arg){ names[i], FMT_PF_STR, 0, "hidden" }
				 : (struct fmt_pf_arg){ names[i], FMT_PF_UINT, vals[i], NULL };
	if ((sys = ka_syscall_name(p->x->t, r)))
		a[k++] = (struct fmt_pf_arg){ "syscall", FMT_PF_STR, 0, sys };
	if (task) {
		a[k++] = (struct fmt_pf_arg){ "task_pid", FMT_PF_UINT, r->pid, NULL };
		a[k++] = (struct fmt_pf_arg){ "task_tid", FMT_PF_UINT, r->tid, NULL };
		a[k++] = (struct fmt_pf_arg){ "task_comm", FMT_PF_STR, 0, ka_comm(p->x->t, r->tid) };
	}
	return k;
}

/* A record other than a call: an event on its sequence. */
static void pf_record(struct pf *p, const struct ktr_rec *r)
{
	struct ktr_trace *t = p->x->t;
	struct fmt_pf_arg a[FMT_PF_MAX_ARGS];
	char name[128];
	int type = FMT_PF_INSTANT;
	unsigned n;

	if (r->kind == KTR_GAP) {
		uint64_t uuid;

		if (!pf_uuid(p, (uint64_t)KPID << 32, &uuid))
			fx->pf_track(&p->w, &p->ev, uuid, 0, "ktrace gaps");
		n = 0;
		a[n++] = (struct fmt_pf_arg){ "count", FMT_PF_UINT, r->count, NULL };
		a[n++] = (struct fmt_pf_arg){ "stream", FMT_PF_UINT, r->stream, NULL };
		if (r->what)
			a[n++] = (struct fmt_pf_arg){ "what", FMT_PF_STR, 0, r->what };
		fx->pf_event(&p->w, &p->ev, FMT_PF_INSTANT, r->ns, uuid, ktr_rec_name(t, r, name, sizeof(name)),
			     "ktrace", a, n);
		return;
	}
	if (r->cls == KTRACE_CLASS_KEVENT) {
		if (r->id == KTRACE_LKST_PROCESS_CONTEXTSWITCH && r->nwords >= 4) {
			uint32_t prev = (uint32_t)r->w[1], next = (uint32_t)r->w[2];

			fx->pf_sched_switch(&p->w, PF_SEQ_FTRACE, r->cpu, r->ns, ka_comm(t, prev), prev,
					    r->w[3], ka_comm(t, next), next);
			return;
		}
		if ((r->id == KTRACE_LKST_PROCESS_WAKEUP || r->id == KTRACE_LKST_PROCESS_WAKEUP_NEW) &&
		    r->nwords >= 2) {
			fx->pf_sched_wakeup(&p->w, PF_SEQ_FTRACE, r->cpu, r->ns, r->tid,
					    ka_comm(t, (uint32_t)r->w[1]), (uint32_t)r->w[1]);
			return;
		}
		n = pf_args(p, r, 1, a);
		fx->pf_event(&p->w, &p->ev, FMT_PF_INSTANT, r->ns, pf_cpu(p, r->cpu),
			     ktr_rec_name(t, r, name, sizeof(name)), ktr_rec_category(t, r), a, n);
		return;
	}
	/* static events (LOG2/LOG4; klog's entry/exit codes 1/2 as slices) and unknown classes */
	ktr_rec_name(t, r, name, sizeof(name));
	if (r->cls == KTRACE_CLASS_LOG2 || r->cls == KTRACE_CLASS_LOG4) {
		unsigned code = KTRACE_EVENT_CODE(r->id), func = KTRACE_EVENT_FUNC(r->id);
		const char *fn = ktr_func_name(t, func);

		if (code == 1 || code == 2) {
			type = code == 1 ? FMT_PF_SLICE_BEGIN : FMT_PF_SLICE_END;
			if (fn)
				snprintf(name, sizeof(name), "%s", fn);
			else
				snprintf(name, sizeof(name), "F%u", func);
		}
	}
	n = pf_args(p, r, 0, a);
	fx->pf_event(&p->w, &p->ev, type, r->ns, pf_thread(p, &p->ev, r->pid, r->tid),
		     type == FMT_PF_SLICE_END ? NULL : name, ktr_rec_category(t, r), a, n);
}

/* Write the earliest pending slice end. */
static void pf_pop(struct pf *p)
{
	const struct ktr_callent *e = ktr_exits_top(&p->exits);

	fx->pf_event(&p->w, &p->calls, FMT_PF_SLICE_END, e->entry_ns + e->dur_ns, p->ord_uuid[e->thread],
		     NULL, NULL, NULL, 0);
	ktr_exits_pop(&p->exits);
}

/*
 * The calls, sorted by entry time (callers first): each a slice begin on
 * its thread's track, its end written when no later-entered call is left
 * before it, so every track's slices nest and every time only grows.
 */
static int pf_calls(struct pf *p, struct ktr_callsort *cs, struct ktr_preorder *pre)
{
	struct ktr_callent e;
	int rc;

	while ((rc = pre ? ktr_preorder_next(pre, &e) : ktr_callsort_next(cs, &e)) > 0) {
		const struct ktr_callent *top;
		struct fmt_pf_arg a[2];
		struct ktr_call c;
		unsigned n = 0;

		if (e.thread >= p->nord) {
			size_t nord = e.thread + 256;
			uint64_t *o = realloc(p->ord_uuid, nord * sizeof(*o));

			if (!o)
				return -ENOMEM;
			memset(o + p->nord, 0, (nord - p->nord) * sizeof(*o));
			p->ord_uuid = o;
			p->nord = nord;
		}
		if (!p->ord_uuid[e.thread]) {
			uint32_t pid = 0, tid = 0;

			ktr_callsort_thread_ids(cs, e.thread, &pid, &tid);
			p->ord_uuid[e.thread] = pf_thread(p, &p->calls, pid, tid);
		}
		while ((top = ktr_exits_top(&p->exits)) && top->entry_ns + top->dur_ns <= e.entry_ns)
			pf_pop(p);
		memset(&c, 0, sizeof(c));
		c.key = e.key;
		ktr_call_key_addrs(p->x->t, e.key, &c.func, &c.site);
		if (e.sig)
			a[n++] = (struct fmt_pf_arg){ "signal_depth", FMT_PF_UINT, e.sig, NULL };
		if (e.flags & KTRACE_CALLF_UNFINISHED)
			a[n++] = (struct fmt_pf_arg){ "unfinished", FMT_PF_BOOL, 1, NULL };
		fx->pf_event(&p->w, &p->calls, FMT_PF_SLICE_BEGIN, e.entry_ns, p->ord_uuid[e.thread],
			     ka_names_call(p->x->names, &c), NULL, a, n);
		if (ktr_exits_push(&p->exits, &e) < 0)
			return -ENOMEM;
		p->x->events += pre != NULL;
		if (ferror(p->x->out))
			return 0;
	}
	while (p->exits.n)
		pf_pop(p);
	return rc;
}

/*
 * The calls streamed in entry order (ktr_preorder_new(): the threads'
 * windows merged) through @cs, without --time-range; NULL (sorted
 * instead) where the trace does not allow it.
 */
static struct ktr_preorder *calls_stream(struct ex *x, struct ktr_callsort *cs)
{
	const struct cli_select *sel = &x->sel;

	if (!cs || x->sort_mem || sel->from || sel->to != UINT64_MAX)
		return NULL;
	return ktr_preorder_new(x->t, cs, sel->tids.n || sel->pids.n ? cli_select_task : NULL, NULL, (void *)sel);
}

static int export_perfetto(struct ex *x)
{
	struct ka_progress *prog = ka_progress_start(x->t, CMD, x->out == stdout);
	struct ktr_callsort *cs = ktr_callsort_new(x->sort_mem, KTR_SORT_ENTRY);
	struct ktr_preorder *pre = calls_stream(x, cs); /* the calls, if streamed */
	const struct ktr_info *in = ktr_info(x->t);
	struct ktr_call run[256];
	struct pf p;
	struct ktr_rec r;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	p.x = x;
	fx->pf_seq_init(&p.ev, PF_SEQ_EVENTS);
	fx->pf_seq_init(&p.calls, PF_SEQ_CALLS);
	if (!cs || fx->pf_begin(&p.w, x->out, in->created_ns, in->created_ns ? in->realtime_ns : 0)) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		unsigned stream;
		uint64_t off;
		size_t n = pre ? ktr_next_calls(x->t, run, 256, &stream, &off) : 0;

		if (n) { /* calls streamed later: passed over in runs */
			ka_progress_recs(prog, stream, off, n);
			continue;
		}
		if (!ktr_next(x->t, &r))
			break;
		ka_progress_rec(prog, &r);
		cli_diags(CMD, x->t);
		if (x->no_kernel && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT))
			continue;
		if (r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_CALL) {
			struct ktr_call c;

			if (pre || !ktr_call_decode(x->t, &r, &c) || !cli_select_call(&x->sel, &c))
				continue;
			if ((rc = ktr_callsort_add_call(cs, &c, c.key, 0)) < 0) {
				cli_error(CMD, "sorting the calls: %s (temporary files in $TMPDIR or /tmp)",
					  strerror(-rc));
				rc = 1;
				goto out;
			}
			x->events++;
			continue;
		}
		if (!cli_select_rec(&x->sel, &r))
			continue;
		pf_record(&p, &r);
		x->events++;
		if (ferror(x->out))
			break;
	}
	ka_progress_end(prog);
	prog = NULL;
	if (!ferror(x->out) && (rc = pf_calls(&p, cs, pre)) < 0 && rc != -ENOMEM)
		rc = cli_calls_failed(CMD, 1, rc);
out:
	ka_progress_end(prog);
	if (fx->pf_end(&p.w) < 0 || p.enomem)
		rc = -ENOMEM;
	fx->pf_seq_free(&p.ev);
	fx->pf_seq_free(&p.calls);
	ktr_preorder_free(pre);
	ktr_callsort_free(cs);
	ka_map64_free(&p.tracks);
	free(p.ord_uuid);
	ktr_exits_free(&p.exits);
	return rc;
}

/* ---- CSV -------------------------------------------------------------------- */

static int export_csv(struct ex *x)
{
	struct ka_progress *prog = ka_progress_start(x->t, CMD, x->out == stdout);
	struct ka_rows *rows = ka_rows_new(x->t, x->names, 0);
	struct ktr_call cs[256];
	struct fmt_row row;
	struct ktr_rec r;

	if (!rows)
		return -ENOMEM;
	fputs(FMT_ROW_HEADER "\n", x->out);
	for (;;) {
		struct ktr_call c;
		unsigned stream;
		uint64_t off;
		size_t n = ktr_next_calls(x->t, cs, 256, &stream, &off);
		int kind;

		if (n) { /* a run of calls (~2.5x faster than a record at a time) */
			ka_progress_recs(prog, stream, off, n);
			cli_diags(CMD, x->t);
			for (size_t i = 0; i < n && !(x->no_kernel && stream >= KTR_KERNEL_STREAM); i++) {
				ka_rows_call(rows, &cs[i], &row);
				if (!cli_select_call(&x->sel, &cs[i]))
					continue;
				fmt_row_csv(x->out, &row);
				x->events++;
			}
			if (ferror(x->out))
				break;
			continue;
		}
		if (!ktr_next(x->t, &r))
			break;
		ka_progress_rec(prog, &r);
		cli_diags(CMD, x->t);
		if (x->no_kernel && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT))
			continue;
		kind = ka_rows_of(rows, &r, &row, &c);
		if (kind == KA_ROW_NONE || (kind == KA_ROW_CALL && !cli_select_call(&x->sel, &c)) ||
		    (kind == KA_ROW_EVENT && !cli_select_rec(&x->sel, &r)))
			continue;
		fmt_row_csv(x->out, &row);
		x->events++;
		if (ferror(x->out))
			break;
	}
	ka_progress_end(prog);
	ka_rows_free(rows);
	return 0;
}

/* ---- folded stacks (analysis/folded.c) ---------------------------------------- */

static void fold_line(void *arg, const char *path, uint64_t ns)
{
	fprintf(arg, "%s %" PRIu64 "\n", path, ns);
}

static int want_call(void *arg, const struct ktr_call *c)
{
	return cli_select_call(arg, c);
}

static int export_folded(struct ex *x)
{
	struct ka_folded_opts fo = { want_call, &x->sel, x->names, CMD };
	int rc = ka_folded(x->t, &fo, fold_line, x->out, &x->events);

	if (rc < 0)
		cli_error(CMD, "folding the calls: %s (temporary files in $TMPDIR or /tmp)", strerror(-rc));
	return rc < 0;
}

/* ---- CTF (formats/ctf.c) ------------------------------------------------------ */

/*
 * babeltrace2 pulls the events in time order.  CALL records come when a
 * call returns, with its entry time: they are streamed in entry order
 * (calls_stream()) where the trace allows, else a first pass over the
 * trace sorts them by entry time (ktr_callsort_*(), bounded memory,
 * temporary files beyond 64 MiB); then a pass merges three ordered sources: the other
 * records (ktr_next() skipping calls), the sorted calls' entries, and a
 * heap of the exits of the calls entered so far (at most the open calls).
 * At one instant: an exit at the same or a greater depth than a call
 * entering, then entries, then records, then the other exits.
 */
struct ctfx {
	struct ex *x;
	struct fmt_ctf *w;
	struct ktr_callsort *cs;
	struct ktr_preorder *pre; /* the calls streamed in entry order (else sorted first) */
	struct ka_progress *prog;
	struct ka_map64 cls_of; /* (record class, id, argument count) -> fx->ctf_event_class() */
	struct ktr_rec rec;
	int have_rec, recs_done;
	struct ktr_callent call;
	int have_call, calls_done;
	struct ktr_exits exits; /* the calls entered, their exits still to come */
	uint64_t vals[KTRACE_MAX_WORDS];
};

/* The writer's errors: after the progress line is gone. */
static void ctf_report(void *arg, const char *msg)
{
	struct ctfx *c = arg;

	ka_progress_end(c->prog);
	c->prog = NULL;
	cli_error(CMD, "%s", msg);
}

/* First pass: every selected call into the sorter, by entry time. */
static int ctf_sort_calls(struct ctfx *c)
{
	struct ktr_trace *t = c->x->t;
	struct ka_progress *prog = ka_progress_start(t, CMD, 0);
	struct ktr_rec r;
	int rc = 0;

	while (ktr_next(t, &r)) {
		struct ktr_call call;

		ka_progress_rec(prog, &r);
		cli_diags(CMD, t);
		if (r.kind != KTR_RECORD || r.cls != KTRACE_CLASS_CALL)
			continue;
		if (!ktr_call_decode(t, &r, &call) || !cli_select_call(&c->x->sel, &call))
			continue;
		if ((rc = ktr_callsort_add_call(c->cs, &call, call.key, 0)) < 0) {
			cli_error(CMD, "sorting the calls: %s (temporary files in $TMPDIR or /tmp)",
				  strerror(-rc));
			break;
		}
	}
	cli_diags(CMD, t);
	ka_progress_end(prog);
	return rc < 0 ? -1 : 0;
}

/* Fill c->rec with the next non-call record to export (c->recs_done at the end). */
static void ctf_next_rec(struct ctfx *c)
{
	struct ktr_rec *r = &c->rec;

	while (!c->have_rec && !c->recs_done) {
		if (!ktr_next(c->x->t, r)) {
			c->recs_done = 1;
			break;
		}
		ka_progress_rec(c->prog, r);
		if (c->pre) /* no first pass */
			cli_diags(CMD, c->x->t);
		while (ktr_diag_next(c->x->t)) /* reported in the first pass */
			;
		if (r->kind == KTR_RECORD && r->cls == KTRACE_CLASS_CALL)
			continue;
		if (c->x->no_kernel && (r->stream >= KTR_KERNEL_STREAM || r->cls == KTRACE_CLASS_KEVENT))
			continue;
		if (!cli_select_rec(&c->x->sel, r))
			continue;
		c->have_rec = 1;
	}
}

/* Fill c->call with the next call by entry time (c->calls_done at the end). */
static int ctf_next_call(struct ctfx *c)
{
	int rc;

	if (c->have_call || c->calls_done)
		return 0;
	rc = c->pre ? ktr_preorder_next(c->pre, &c->call) : ktr_callsort_next(c->cs, &c->call);
	if (rc == -EPROTO) {
		fx->ctf_fail(c->w, "the calls do not nest as one stack per thread, so they cannot be streamed "
				   "in entry order: --sort-mem sorts them instead");
		return -1;
	}
	if (rc < 0) {
		fx->ctf_fail(c->w, "reading the sorted calls back: %s", strerror(-rc));
		return -1;
	}
	if (rc == 0)
		c->calls_done = 1;
	else
		c->have_call = 1;
	return 0;
}

/* The entry (!@exit) or exit of call @ce as event @ev. */
static void ctf_call(struct ctfx *c, const struct ktr_callent *ce, int exit, struct fmt_ctf_ev *ev)
{
	struct ktr_call call;

	memset(ev, 0, sizeof(*ev));
	memset(&call, 0, sizeof(call));
	call.key = ce->key;
	ktr_callsort_thread_ids(c->cs, ce->thread, &call.pid, &call.tid);
	ktr_call_key_addrs(c->x->t, ce->key, &call.func, &call.site);
	call.cpu = ce->cpu == 0xffffffffu ? -1 : (int)ce->cpu;
	ev->type = exit ? FMT_CTF_EXIT : FMT_CTF_ENTRY;
	ev->thread = ce->thread;
	ev->thread_tid = call.tid;
	ev->ns = ce->entry_ns + (exit ? ce->dur_ns : 0);
	ev->cpu = call.cpu;
	ev->pid = call.pid;
	ev->tid = call.tid;
	ev->comm = ka_comm(c->x->t, call.tid);
	ev->addr = call.func;
	ev->call_site = call.site;
	ev->depth = ce->depth;
	ev->duration_ns = ce->dur_ns;
	ev->unfinished = (ce->flags & KTRACE_CALLF_UNFINISHED) != 0;
	if (!exit)
		ev->name = ka_names_call(c->x->names, &call);
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

/* The event class of record @r with @n arguments named @names (declared on first sight), or -1. */
static int ctf_class(struct ctfx *c, const struct ktr_rec *r, const char **names, unsigned n)
{
	uint64_t key = (uint64_t)r->cls << 24 | (uint64_t)(r->id & 0xffff) << 8 | n;
	long known = ka_map64_get(&c->cls_of, key);
	char name[256];
	int cls;

	if (known >= 0)
		return (int)known;
	ktr_rec_name(c->x->t, r, name, sizeof(name));
	cls = fx->ctf_event_class(c->w, name, names, n);
	if (cls < 0 || ka_map64_put(&c->cls_of, key, (uint32_t)cls) < 0)
		return -1;
	return cls;
}

/* Record @r (not a call) as event @ev.  Return: 1, -1 error (told). */
static int ctf_rec(struct ctfx *c, const struct ktr_rec *r, struct fmt_ctf_ev *ev)
{
	const char *names[KTRACE_MAX_WORDS];

	memset(ev, 0, sizeof(*ev));
	ev->kernel = r->stream >= KTR_KERNEL_STREAM || r->cls == KTRACE_CLASS_KEVENT;
	if (!ev->kernel) {
		ev->thread = ktr_callsort_thread(c->cs, r->pid, r->tid);
		ktr_callsort_thread_ids(c->cs, ev->thread, &(uint32_t){ 0 }, &ev->thread_tid);
	}
	ev->ns = r->ns;
	ev->cpu = r->cpu;
	ev->pid = r->pid;
	ev->tid = r->tid;
	ev->comm = ka_comm(c->x->t, r->tid);
	if (r->kind == KTR_GAP) {
		ev->type = FMT_CTF_LOST;
		ev->kind = gap_kind(r->gap);
		ev->count = r->count;
		ev->stream = r->stream;
		ev->until_ns = r->until_ns;
		ev->what = r->what;
		return 1;
	}
	ev->type = FMT_CTF_EVENT;
	ev->nargs = ktr_rec_args(c->x->t, r, names, c->vals);
	ev->args = c->vals;
	ev->cls = ctf_class(c, r, names, ev->nargs);
	if (ev->cls < 0) {
		fx->ctf_fail(c->w, "making a babeltrace2 event: out of memory");
		return -1;
	}
	return 1;
}

/* fmt_ctf_next_fn: the earliest of the records, the calls' entries and their exits. */
static int ctf_next(void *arg, struct fmt_ctf_ev *ev)
{
	struct ctfx *c = arg;

	for (;;) {
		const struct ktr_callent *top;
		uint64_t t, top_exit;

		ctf_next_rec(c);
		if (ctf_next_call(c) < 0)
			return -1;
		top = ktr_exits_top(&c->exits);
		top_exit = top ? top->entry_ns + top->dur_ns : 0;
		if (!c->have_rec && !c->have_call && !top)
			return 0;
		t = UINT64_MAX;
		if (c->have_rec)
			t = c->rec.ns;
		if (c->have_call && c->call.entry_ns < t)
			t = c->call.entry_ns;
		if (top && top_exit < t)
			t = top_exit;
		if (top && top_exit == t &&
		    !(c->have_call && c->call.entry_ns == t && c->call.depth > top->depth)) {
			ctf_call(c, top, 1, ev);
			ktr_exits_pop(&c->exits);
			return 1;
		}
		if (c->have_call && c->call.entry_ns == t) {
			c->have_call = 0;
			if (c->call.flags & KTR_CALLENT_GAP) /* not ours; never added */
				continue;
			ctf_call(c, &c->call, 0, ev);
			if (ktr_exits_push(&c->exits, &c->call) < 0) {
				fx->ctf_fail(c->w, "out of memory");
				return -1;
			}
			return 1;
		}
		c->have_rec = 0;
		return ctf_rec(c, &c->rec, ev);
	}
}

/*
 * export_ctf() - the trace as a CTF trace in the directory @outdir (see
 * fx->ctf_open()).  Return: 0, or 1 after an error was reported (output
 * incomplete).
 */
static int export_ctf(struct ex *x, const char *outdir)
{
	const struct ktr_info *in = ktr_info(x->t);
	struct fmt_ctf_trace tr = { in->created_ns, in->realtime_ns, in->host, in->kernel,
				    ktr_dir(x->t), KTRACE_VERSION };
	struct ctfx c;
	int ok, rc;

	memset(&c, 0, sizeof(c));
	c.x = x;
	c.w = fx->ctf_open(outdir, ctf_report, &c);
	if (!c.w)
		return 1;
	c.cs = ktr_callsort_new(x->sort_mem, KTR_SORT_ENTRY);
	if (!c.cs)
		cli_error(CMD, "out of memory");
	c.pre = calls_stream(x, c.cs);
	ok = c.cs && (c.pre || ctf_sort_calls(&c) == 0);
	if (ok) {
		ktr_rewind(x->t);
		ok = fx->ctf_connect(c.w, &tr, ctf_next, &c) == 0;
	}
	if (ok) {
		c.prog = ka_progress_start(x->t, CMD, 0);
		ok = fx->ctf_run(c.w) == 0;
		ka_progress_end(c.prog);
		c.prog = NULL;
	}
	rc = fx->ctf_close(c.w, ok, &x->events);
	ka_map64_free(&c.cls_of);
	ktr_exits_free(&c.exits);
	ktr_preorder_free(c.pre);
	ktr_callsort_free(c.cs);
	return rc;
}

/* ---- trace.dat (kclient/tracedat.c) ------------------------------------------- */

static int export_tracedat(const char *dir, const char *outfile)
{
	struct krec_tracedat_info info;
	struct cli_out o;
	char msg[1024];

	if (!outfile || !strcmp(outfile, "-")) {
		cli_error(CMD, "--format=trace.dat needs -o FILE (the file is written with seeks, not to a pipe)");
		return 2;
	}
	if (cli_out_open(CMD, &o, outfile))
		return 1;
	if (fx->tracedat_write(dir, fileno(o.f), &info, msg, sizeof(msg)) < 0) {
		cli_error(CMD, "%s", msg);
		cli_out_abort(&o);
		return 1;
	}
	return cli_out_close(CMD, &o);
}

/* ---- the command ---------------------------------------------------------------- */

/* The command line, parsed. */
struct export_opts {
	enum fmt fmt;
	const char *outfile; /* -o (NULL: standard output) */
	int no_kernel;       /* -K */
	size_t sort_mem;     /* --sort-mem */
	const char *dir;     /* the trace */
};

/* --format's names. */
static const struct {
	const char *name;
	enum fmt fmt;
} formats[] = {
	{ "perfetto", F_PERFETTO }, { "chrome", F_JSON }, { "json", F_JSON },         { "folded", F_FOLDED },
	{ "csv", F_CSV },           { "ctf", F_CTF },     { "trace.dat", F_TRACEDAT }, { "tracedat", F_TRACEDAT },
};

enum { OPT_SORTMEM = CLI_OPT_LONG + 1 };

/* cli_opt_fn: --format, its name into struct export_opts' fmt; --sort-mem.  Return: 0, or 2 (reported). */
static int take_option(void *arg, int key, const char *val)
{
	struct export_opts *eo = arg;

	if (key == OPT_SORTMEM)
		return cli_parse_sort_mem(CMD, val, &eo->sort_mem);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(val, formats[i].name)) {
			eo->fmt = formats[i].fmt;
			return 0;
		}
	cli_error(CMD, "option '--format': unknown format '%s' (perfetto, chrome, "
		       "folded, csv, ctf or trace.dat)", val);
	return 2;
}

/* export's options; -o and -K go straight into struct export_opts. */
static const struct cli_opt opts[] = {
	CLI_OPT("format", CLI_OPT_LONG, "FORMAT", "one of the above (required)"),
	CLI_OPT_STRING("output", 'o', "FILE", struct export_opts, outfile,
		       "write to FILE, mode 0600 (a temporary renamed into\n"
		       "place; default, or -: standard output); ctf: the\n"
		       "directory OUTDIR"),
	CLI_OPT_FLAG("no-kernel", 'K', struct export_opts, no_kernel, "leave the kernel events out"),
	CLI_OPT("sort-mem", OPT_SORTMEM, "BYTES", "sort the calls in this much memory (default 64M)\n"
						 "instead of streaming them (perfetto, ctf)"),
	CLI_OPT_INCLUDE(cli_select_opts),
	CLI_OPT_END,
};

/* What `ktrace export --help` prints and its parser takes (cli/options.h). */
static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace export --format=FORMAT [options] [DIR]\n"
		"\n"
		"Write the trace in DIR (with its kernel events, merged by time) for other tools:\n"
		"  perfetto           Perfetto's protobuf trace (ui.perfetto.dev, trace_processor):\n"
		"                     calls as slices on their thread, static events as\n"
		"                     instants, context switches as ftrace sched_switch\n"
		"                     (CPU tracks), other kernel events as instants per CPU\n"
		"  chrome, json       Chrome trace-event JSON: open it in ui.perfetto.dev or\n"
		"                     chrome://tracing.  Function calls are slices on their\n"
		"                     thread, the kernel is a process with a track per CPU\n"
		"                     (what ran there, and every kernel event as an instant)\n"
		"  folded             folded stacks (\"thread;caller;callee self_ns\") for\n"
		"                     flamegraph.pl, speedscope or inferno\n"
		"  csv                one row per record with a header line: time_ns, dur_ns,\n"
		"                     self_ns, cpu, pid, tid, comm, category, name, args (the\n"
		"                     columns of kd -c --format=csv)\n"
		"  ctf                a CTF 1.8 trace in the directory -o OUTDIR (required; created\n"
		"                     mode 0700, or empty) for babeltrace2 and Trace Compass: calls\n"
		"                     as LTTng-UST func_entry/func_exit events, one stream per\n"
		"                     thread and per kernel CPU, gaps as ktrace:lost events\n"
		"  trace.dat          trace-cmd's trace.dat (version 6) of the kernel events\n"
		"                     (`ktrace record --kernel`, every tracepoint and field):\n"
		"                     trace-cmd report FILE, KernelShark; needs -o FILE\n"
		"DIR defaults to ./ktrace.data.\n",
	.opts = opts,
	.tail =
		"Large traces stream out in bounded memory; a terminal shows progress.\n"
		"Exit status: 0, 1 the trace has errors (all readable records were exported)\n"
		"or the output failed, 2 usage error.  See ktrace-export(1).\n",
};

/*
 * parse_options - the command line into @eo and @sel, checked: a format,
 * an output directory for ctf, the trace directory.  Returns CLI_OPTS_GO
 * to go on, else the exit status (0 after --help, 2 usage error,
 * reported).
 */
static int parse_options(int argc, char **argv, struct cli_select *sel, struct export_opts *eo)
{
	int rc = cli_opts_parse(&cmd_opts, argc, argv, sel, take_option, eo);

	if (rc != CLI_OPTS_GO)
		return rc;
	if (eo->fmt == F_NONE) {
		cli_error(CMD, "missing --format (perfetto, chrome, folded, csv, ctf or trace.dat; see ktrace export --help)");
		return 2;
	}
	if (eo->fmt == F_CTF && (!eo->outfile || !strcmp(eo->outfile, "-"))) {
		cli_error(CMD, "--format=ctf writes a directory: give it with -o OUTDIR");
		return 2;
	}
	eo->dir = cli_select_dir(CMD, argc, argv, optind);
	return eo->dir ? CLI_OPTS_GO : 2;
}

/*
 * export_stream - export the open trace @x as @fmt (JSON, Perfetto, CSV or
 * folded) to @outfile (NULL or "-": standard output).  Returns the exit
 * status: 0, or 1 (out of memory, the output failed, the trace has errors).
 */
static int export_stream(struct ex *x, enum fmt fmt, const char *outfile)
{
	struct cli_out o;
	int rc;

	if (cli_out_open(CMD, &o, outfile))
		return 1;
	x->out = o.f;
	if (fmt == F_JSON)
		rc = export_json(x);
	else if (fmt == F_PERFETTO)
		rc = export_perfetto(x);
	else if (fmt == F_CSV)
		rc = export_csv(x);
	else
		rc = export_folded(x);
	cli_diags(CMD, x->t);
	if (rc < 0) {
		cli_error(CMD, "out of memory");
		rc = 1;
	}
	if (cli_out_close(CMD, &o))
		rc = 1;
	if (!rc && ktr_error_count(x->t))
		rc = 1;
	return rc;
}

static int run(int argc, char **argv)
{
	struct export_opts eo = { .fmt = F_NONE };
	struct ex x;
	int rc;

	memset(&x, 0, sizeof(x));
	cli_select_init(&x.sel);
	rc = parse_options(argc, argv, &x.sel, &eo);
	if (rc != CLI_OPTS_GO)
		return rc;
	x.no_kernel = eo.no_kernel;
	x.sort_mem = eo.sort_mem;
	if ((eo.fmt == F_PERFETTO || eo.fmt == F_CTF || eo.fmt == F_TRACEDAT) && !(fx = cli_export_plugin(CMD)))
		return 1;
	if (eo.fmt == F_TRACEDAT)
		return export_tracedat(eo.dir, eo.outfile);
	x.t = cli_select_open(&x.sel, CMD, eo.dir);
	if (!x.t)
		return 1;
	cli_diags(CMD, x.t);
	x.names = ka_names_new(x.t, x.sel.demangle);
	if (!x.names) {
		cli_error(CMD, "out of memory");
		ktr_close(x.t);
		return 1;
	}
	if (eo.fmt == F_CTF) {
		rc = export_ctf(&x, eo.outfile);
		cli_diags(CMD, x.t);
		if (!rc && ktr_error_count(x.t))
			rc = 1;
	} else {
		rc = export_stream(&x, eo.fmt, eo.outfile);
	}
	ka_names_free(x.names);
	ka_map64_free(&x.seen);
	ktr_close(x.t);
	cli_select_free(&x.sel);
	return rc;
}

KTRACE_COMMAND_OPTS(export, "export a trace as Perfetto protobuf, Chrome JSON, folded stacks, CSV, CTF or trace.dat",
		    run, cmd_opts);

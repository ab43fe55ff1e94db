/*
 * cli/kd_calls.c - the output of `ktrace kd -c`: nested call traces as KFT's
 * kd printed them ('|' per level, signal-handler sections between "!!!!
 * start" and "!!!! end"), with -l the Entry, Duration and Local columns,
 * the switch-outs inside the calls when the trace has kernel events, and
 * the gaps where records were lost; or one CSV/JSON row per call.  The
 * walk is analysis/calltrace.c, which calls back here for each line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kd.h"
#include "cli/output.h"
#include "reader/sched.h"

/* ------------------------------------------------------------------ */
/* Call traces (-c): the lines analysis/calltrace.c reports            */
/* ------------------------------------------------------------------ */

static void ct_thread(void *arg, uint32_t pid, uint32_t tid)
{
	struct kd *k = arg;

	fprintf(k->out, "----------- %s %" PRIu32 " (%s, process %" PRIu32 ") --------------\n",
		k->o.interlace ? "switch to thread" : "thread", tid, ka_comm(k->t, tid), pid);
}

static void ct_section(void *arg, int start)
{
	struct kd *k = arg;

	fprintf(k->out, "%s----------- !!!! %s%s\n", cli_c_magenta(),
		start ? "start --------------" : "end ----------------", cli_c_reset());
}

static void ct_gap(void *arg, unsigned gap, uint64_t count)
{
	struct kd *k = arg;
	const char *s = count == 1 ? "" : "s";

	fprintf(k->out, "%s----------- ", cli_c_red());
	switch (gap) {
	case KTR_GAP_LOST: fprintf(k->out, "%" PRIu64 " record%s lost", count, s); break;
	case KTR_GAP_OVERWRITTEN: fprintf(k->out, "%" PRIu64 " sub-buffer%s overwritten", count, s); break;
	case KTR_GAP_DROPPED: fprintf(k->out, "%" PRIu64 " record%s dropped", count, s); break;
	default: fputs("corrupt data skipped", k->out); break;
	}
	fprintf(k->out, " --------------%s\n", cli_c_reset());
}

/*
 * The text of one call, as one line of struct fmt_line (kd -c prints
 * ~200M of them), the thread's number formatted once per thread; the
 * output's error state looked at every 4096 lines (and by the caller at
 * the end).
 */
static int ct_call(void *arg, const struct ktr_callent *e, uint32_t tid, unsigned marks)
{
	static const char bars[] = "|  |  |  |  |  |  |  |  |  |  |  |  |  |  |  |  ";
	static const char bangs[] = "!  !  !  !  !  !  !  !  !  !  !  !  !  !  !  !  ";
	struct kd *k = arg;
	const char *name = e->key < k->p->nfns && k->p->fns[e->key].name ? k->p->fns[e->key].name : "?";
	const char *mark = e->sig ? bangs : bars;
	struct fmt_line l;

	l.out = k->out;
	l.n = 0;
	if (k->o.longfmt) {
		char b1[32], b2[32], b3[32];

		fmt_line_pad(&l, kd_us(&k->o, (int64_t)(e->entry_ns - k->origin), b1, sizeof(b1)), k->we);
		fmt_line_put(&l, " ", 1);
		fmt_line_pad(&l, kd_us(&k->o, (int64_t)e->dur_ns, b2, sizeof(b2)), k->wd);
		fmt_line_put(&l, " ", 1);
		fmt_line_pad(&l, kd_us(&k->o, (int64_t)e->local_ns, b3, sizeof(b3)), k->wd);
		fmt_line_put(&l, " ", 1);
	}
	if (tid != k->line_tid || !k->line_tidlen) {
		k->line_tid = tid;
		k->line_tidlen = (size_t)snprintf(k->line_tidstr, sizeof(k->line_tidstr), "%7" PRIu32 " ", tid);
	}
	fmt_line_put(&l, k->line_tidstr, k->line_tidlen);
	for (unsigned left = marks, n; left; left -= n) {
		n = left < (sizeof(bars) - 1) / 3 ? left : (sizeof(bars) - 1) / 3;
		fmt_line_put(&l, mark, 3 * n);
	}
	fmt_line_put(&l, name, strlen(name));
	if (e->flags & KTRACE_CALLF_UNFINISHED)
		fmt_line_put(&l, " [unfinished]", 13);
	if (e->flags & KTRACE_CALLF_WATCH)
		fmt_line_put(&l, " [watch]", 8);
	fmt_line_end(&l);
	return ++k->lines % 4096 || !ferror(k->out) ? 0 : -1;
}

static void ct_offcpu(void *arg, const struct ktr_offcpu *o, uint32_t tid, unsigned level)
{
	struct kd *k = arg;
	char b1[32], b2[32], b3[32];

	if (k->o.longfmt)
		fprintf(k->out, "%*s %*s %*s ", k->we, kd_us(&k->o, (int64_t)(o->out_ns - k->origin), b1, sizeof(b1)),
			k->wd, o->in_ns == UINT64_MAX ? "-" : kd_us(&k->o, (int64_t)(o->in_ns - o->out_ns), b2, sizeof(b2)),
			k->wd, "");
	fprintf(k->out, "%7" PRIu32 " ", tid);
	for (unsigned i = 0; i < level; i++)
		fputs("|  ", k->out);
	if (o->in_ns == UINT64_MAX) {
		fprintf(k->out, "<off CPU: %s, not back by the end of the trace>\n",
			o->blocked ? "blocked" : "preempted");
		return;
	}
	fprintf(k->out, "<off CPU %s us: %s", kd_us(&k->o, (int64_t)(o->in_ns - o->out_ns), b1, sizeof(b1)),
		o->blocked ? "blocked" : "preempted");
	if (o->blocked && o->wake_ns < o->in_ns)
		fprintf(k->out, ", woken after %s us", kd_us(&k->o, (int64_t)(o->wake_ns - o->out_ns), b3, sizeof(b3)));
	fprintf(k->out, ", CPU %d -> %d>\n", o->cpu_out, o->cpu_in);
}

/* A call (or gap) of the sorter as a row of formats/formats.h (kd -c --format=csv|json). */
static void call_row(struct kd *k, FILE *out, struct ktr_callsort *s, const struct ktr_callent *e)
{
	char args[96], name[96];
	uint32_t pid = 0, tid = 0;
	struct fmt_row row;

	ktr_callsort_thread_ids(s, e->thread, &pid, &tid);
	row.time_ns = (int64_t)e->entry_ns;
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
		row.name = e->key < k->p->nfns && k->p->fns[e->key].name ? k->p->fns[e->key].name : "?";
	}
	if (k->o.format == FMT_CSV)
		fmt_row_csv(out, &row);
	else
		fmt_row_json(k->json, &row);
}

static int pre_next(void *src, struct ktr_callent *e)
{
	return ktr_preorder_next(src, e);
}

int kd_print_calls(struct kd *k, FILE *out, struct ktr_callsort *s, struct ktr_preorder *pre)
{
	static const struct ka_ct_ops ops = { ct_thread, ct_section, ct_gap, ct_call, ct_offcpu };
	struct ktr_callent e;
	int rc;

	k->out = out;
	if (k->o.format == FMT_CSV) {
		fputs(FMT_ROW_HEADER "\n", out);
		while ((rc = ktr_callsort_next(s, &e)) > 0 && !ferror(out))
			call_row(k, out, s, &e);
		return rc < 0 ? rc : 0;
	}
	if (k->o.format == FMT_JSON) { /* {"calls":[ row, ... ]} */
		int jrc;

		if (!(k->json = fmt_json_new(out)))
			return -ENOMEM;
		fmt_json_map(k->json);
		fmt_json_str(k->json, "calls");
		fmt_json_array(k->json);
		while ((rc = ktr_callsort_next(s, &e)) > 0 && !ferror(out))
			call_row(k, out, s, &e);
		fmt_json_newline(k->json);
		fmt_json_end_array(k->json);
		fmt_json_end_map(k->json);
		jrc = fmt_json_free(k->json);
		k->json = NULL;
		fputc('\n', out);
		return rc < 0 ? rc : jrc;
	}
	k->origin = ktr_time_origin(k->t);
	k->we = k->o.usec ? 10 : 12;
	k->wd = k->o.usec ? 10 : 11;
	if (k->o.longfmt) {
		fprintf(out, "%*s %*s %*s %7s %s\n", -k->we, " Entry", -k->wd, " Duration", -k->wd,
			" Local", "Pid", "   Trace");
		fprintf(out, "%.*s %.*s %.*s ------- ---------------------------------\n", k->we,
			"------------", k->wd, "------------", k->wd, "------------");
	} else {
		fprintf(out, "%7s %s\n", "Pid", "   Trace");
		fprintf(out, "------- ---------------------------------\n");
	}
	if (pre)
		return ka_calltrace_walk_from(s, pre_next, pre, NULL, 0, &ops, k);
	return ka_calltrace_walk(s, ka_profile_sched(k->p), k->o.interlace, &ops, k);
}

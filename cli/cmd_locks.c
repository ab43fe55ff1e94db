/*
 * cli/cmd_locks.c - `ktrace locks [--top N] [DIR]`: lock misuse and lock
 * times of a trace recorded with `ktrace record --locks` (and, for the
 * kernel, --kernel with the lock category), as a checker: lock-order
 * inversions (potential deadlocks), releases by a thread that does not
 * hold the lock, double acquisitions, locks held at thread exit, each
 * reported once with both call sites named (function+offset and
 * file:line, the reader's elfutils symbolizer); then the longest hold and
 * wait times per lock and call site.  What it computes is
 * analysis/locks.c.
 *
 * Exit status: 0 no misuse, 3 misuse found, 1 the trace cannot be read or
 * holds no lock events, 2 usage error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/select.h"
#include "formats/formats.h"

#define CMD "locks"

struct locks_opts {
	uint64_t top; /* -n: rows of the times table, 0: all */
	int all;      /* -a: kernel contention of every task */
	const char *dir;
};

/* cli_opt_fn: -n. */
static int take_option(void *arg, int key, const char *val)
{
	struct locks_opts *o = arg;

	if (cli_parse_u64(val, &o->top) < 0) {
		cli_error(CMD, "option '--top' needs a number, not '%s'", val);
		return 2;
	}
	return 0;
}

static const struct cli_opt opts[] = {
	CLI_OPT("top", 'n', "N", "rows of the times table (default 20; 0: all)"),
	CLI_OPT_FLAG("all", 'a', struct locks_opts, all,
		     "kernel contention of every task (default: the\nprogram's)"),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace locks [--top N] [DIR]\n"
		"\n"
		"Check the lock operations of a trace recorded with `ktrace record --locks`\n"
		"(pthread mutexes, rwlocks, spinlocks, condition variables) and report, each\n"
		"once, with both call sites (function+offset, file:line):\n"
		"  lock-order inversion   A then B in one place, B then A in another: a\n"
		"                         potential deadlock, even if none happened (and\n"
		"                         cycles of three or four locks)\n"
		"  unlock by non-holder   a lock released by a thread that does not hold it\n"
		"  double acquire         a non-recursive lock acquired again by its holder\n"
		"  held at thread exit    a lock still held when its thread ended\n"
		"(notes, not misuse: locks still held when the trace ended).  Then the\n"
		"longest hold and wait times per lock and call site, and for the kernel the\n"
		"wait times of its contention events (--kernel=lock).  DIR: ktrace.data.\n",
	.opts = opts,
	.tail =
		"Exit status: 0 no misuse found, 3 misuse found, 1 the trace cannot be read or\n"
		"has no lock events, 2 usage error.  See ktrace-locks(1).\n",
};

/* "func+0xOFF (file.c:12)" or "0xADDR" for call site @site (a return address). */
static const char *site_name(struct ktr_syms *syms, uint64_t site, char *buf, size_t len)
{
	struct ktr_sym s;
	char name[512];
	size_t n;

	if (!site) {
		snprintf(buf, len, "(returned from its start routine)");
		return buf;
	}
	ktr_sym_lookup(syms, site, KTR_SYM_RETADDR | KTR_SYM_LINES, &s);
	ktr_sym_format(&s, 2, name, sizeof(name));
	n = (size_t)snprintf(buf, len, "%s", name);
	if (s.src && n < len) {
		const char *base = strrchr(s.src, '/');

		snprintf(buf + n, len - n, " (%s:%u)", base ? base + 1 : s.src, s.line);
	}
	return buf;
}

/* "NAME (0xADDR)" for a static lock, "0xADDR" for others. */
static const char *lock_name(struct ktr_syms *syms, uint64_t lock, int kernel, char *buf, size_t len)
{
	struct ktr_sym s;

	if (kernel) {
		/* contention_begin's flags: 1 SPIN, 2 READ, 4 WRITE, 8 RT (an
		 * rt_mutex: PREEMPT_RT's mutex and spinlock_t; with READ or WRITE
		 * its rwsem and rwlock_t), 32 MUTEX */
		const char *kind = kernel & 32 ? "mutex"
				   : kernel & 8 ? (kernel & 6 ? "rt-rwlock" : "rt-mutex")
				   : kernel & 1 ? (kernel & 6 ? "rwlock" : "spinlock")
				   : kernel & 6 ? "rwsem" : "lock";

		if (lock)
			snprintf(buf, len, "kernel %s #%016" PRIx64, kind, lock);
		else
			snprintf(buf, len, "kernel %s (no id)", kind);
		return buf;
	}
	ktr_sym_lookup(syms, lock, 0, &s);
	if (s.name && !s.offset)
		snprintf(buf, len, "%s (0x%" PRIx64 ")", s.name, lock);
	else
		snprintf(buf, len, "0x%" PRIx64, lock);
	return buf;
}

static const char *thread_name(const struct ktr_trace *t, uint32_t tid, char *buf, size_t len)
{
	const char *comm = ka_comm(t, tid);

	snprintf(buf, len, "thread %u%s%s%s", tid, comm && *comm ? " (" : "", comm ? comm : "",
		 comm && *comm ? ")" : "");
	return buf;
}

/* A time in ns as "123 ns", "12.3 us", "1.23 ms", "1.23 s". */
static const char *dur(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	return buf;
}

static void print_finding(struct ktr_trace *t, struct ktr_syms *syms, const struct ka_locks *l,
			  const struct ka_lock_finding *f)
{
	char a[600], b[600], l1[300], l2[300], t1[200], t2[200];
	char times[64] = "";

	if (f->count > 1)
		snprintf(times, sizeof(times), " (%" PRIu64 " times)", f->count);
	lock_name(syms, f->lock, 0, l1, sizeof(l1));
	thread_name(t, f->tid, t1, sizeof(t1));
	switch (f->kind) {
	case KA_LOCK_INVERSION:
		lock_name(syms, f->lock2, 0, l2, sizeof(l2));
		printf("lock-order inversion (potential deadlock): %s and %s\n", l1, l2);
		printf("  %s acquired %s at %s\n", t1, l2, site_name(syms, f->site, a, sizeof(a)));
		printf("    while holding %s acquired at %s\n", l1, site_name(syms, f->site2, b, sizeof(b)));
		thread_name(t, f->tid2, t2, sizeof(t2));
		printf("  %s acquired %s at %s\n", t2, l1, site_name(syms, f->site3, a, sizeof(a)));
		printf("    while holding %s acquired at %s\n", l2, site_name(syms, f->site4, b, sizeof(b)));
		break;
	case KA_LOCK_BAD_RELEASE:
		printf("unlock by non-holder: %s%s\n", l1, times);
		printf("  released by %s at %s\n", t1, site_name(syms, f->site, a, sizeof(a)));
		if (f->tid2)
			printf("  held by %s, acquired at %s\n", thread_name(t, f->tid2, t2, sizeof(t2)),
			       site_name(syms, f->site2, b, sizeof(b)));
		else
			printf("  held by no thread\n");
		break;
	case KA_LOCK_DOUBLE:
		printf("double acquire: %s%s\n", l1, times);
		printf("  %s acquired it again at %s", t1, site_name(syms, f->site, a, sizeof(a)));
		if (f->err) {
			const char *en = f->err < 4096 ? strerrorname_np((int)f->err) : NULL;

			printf(": %s", en ? en : "error");
			if (!en)
				printf(" %u", f->err);
		}
		printf("\n");
		printf("  already holding it, acquired at %s\n", site_name(syms, f->site2, b, sizeof(b)));
		break;
	case KA_LOCK_HELD_AT_EXIT:
		printf("held at thread exit: %s%s\n", l1, times);
		printf("  %s ended at %s\n", t1, site_name(syms, f->site, a, sizeof(a)));
		printf("  holding it, acquired at %s\n", site_name(syms, f->site2, b, sizeof(b)));
		break;
	case KA_LOCK_CYCLE: {
		struct ka_lock_edge e;

		printf("lock-order cycle (potential deadlock) of %u locks:", f->ncycle);
		for (unsigned i = 0; i < f->ncycle; i++)
			if (ka_locks_edge(l, f->cycle[i], &e) == 0)
				printf(" %s ->", lock_name(syms, e.a, 0, l1, sizeof(l1)));
		printf(" %s\n", lock_name(syms, f->lock, 0, l1, sizeof(l1)));
		for (unsigned i = 0; i < f->ncycle; i++) {
			if (ka_locks_edge(l, f->cycle[i], &e) < 0)
				continue;
			lock_name(syms, e.a, 0, l1, sizeof(l1));
			lock_name(syms, e.b, 0, l2, sizeof(l2));
			printf("  %s acquired %s at %s\n", thread_name(t, e.tid, t2, sizeof(t2)), l2,
			       site_name(syms, e.site_b, a, sizeof(a)));
			printf("    while holding %s acquired at %s\n", l1, site_name(syms, e.site_a, b, sizeof(b)));
		}
		break;
	}
	case KA_LOCK_HELD_AT_END:
		printf("note: held at the end of the trace: %s by %s, acquired at %s\n", l1, t1,
		       site_name(syms, f->site2, b, sizeof(b)));
		break;
	}
}

/* What `ktrace locks` works with, between opening the trace and the end. */
struct locks_run {
	const struct locks_opts *o;
	struct ktr_trace *t;
	struct ktr_syms *syms;
	struct ka_locks *l;
	struct ka_tasks *tasks;
	uint64_t napp, nkernel, ngaps; /* ka_locks_counts() */
};

/* Open the trace and the state of the checker.  Return: 0, or 1 (printed). */
static int locks_open(struct locks_run *lr)
{
	const char *dir = lr->o->dir;

	lr->t = ktr_open(dir);
	if (!lr->t) {
		cli_error(CMD, "%s: out of memory", dir);
		return 1;
	}
	cli_diags(CMD, lr->t);
	lr->l = ka_locks_new(lr->t);
	lr->syms = ktr_syms_new(lr->t);
	lr->tasks = ka_tasks_new(lr->t, lr->o->all, NULL, NULL);
	if (!lr->l || !lr->syms || !lr->tasks) {
		cli_error(CMD, "%s: out of memory", dir);
		return 1;
	}
	return 0;
}

/*
 * Feed every lock event (and the kernel's of the tasks shown) to the
 * checker.  Return: 0, or 1 (printed: out of memory, no lock event).
 */
static int locks_read(struct locks_run *lr)
{
	struct ktr_rec r;
	int rc = 0;

	while (ktr_next(lr->t, &r)) {
		cli_diags(CMD, lr->t);
		ka_tasks_feed(lr->tasks, &r);
		/* kernel events: the program's tasks only (or --all) */
		if (r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_KEVENT &&
		    !ka_tasks_want(lr->tasks, r.tid, r.pid))
			continue;
		if (ka_locks_feed(lr->l, &r) < 0) {
			cli_error(CMD, "%s: out of memory", lr->o->dir);
			rc = 1;
			break;
		}
	}
	cli_diags(CMD, lr->t);
	if (!rc && ka_locks_end(lr->l) < 0) {
		cli_error(CMD, "%s: out of memory", lr->o->dir);
		rc = 1;
	}
	ka_locks_counts(lr->l, &lr->napp, &lr->nkernel, &lr->ngaps);
	if (!rc && !lr->napp && !lr->nkernel) {
		cli_error(CMD, "%s: no lock events (record with `ktrace record --locks`, or "
			       "--kernel=lock for the kernel's contention events)", lr->o->dir);
		rc = 1;
	}
	return rc;
}

/*
 * The findings, misuse first (inversions among it), the notes after, then
 * their count.  Return: how many are misuse.
 */
static uint64_t print_findings(struct locks_run *lr)
{
	size_t nf;
	const struct ka_lock_finding *f = ka_locks_findings(lr->l, &nf);
	uint64_t misuse = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nf; i++) {
			if ((f[i].kind == KA_LOCK_HELD_AT_END) != pass)
				continue;
			misuse += f[i].kind != KA_LOCK_HELD_AT_END;
			print_finding(lr->t, lr->syms, lr->l, &f[i]);
		}
	printf("%s%" PRIu64 " misuse finding%s (%" PRIu64 " lock events", nf ? "\n" : "", misuse,
	       misuse == 1 ? "" : "s", lr->napp);
	if (lr->nkernel)
		printf(", %" PRIu64 " kernel contention events", lr->nkernel);
	printf(")\n");
	if (lr->ngaps) {
		cli_error(CMD, "warning: %s: records are missing (%" PRIu64
			       " gaps): the findings may be incomplete or wrong",
			  lr->o->dir, lr->ngaps);
		cli_losses(CMD, lr->t);
	}
	return misuse;
}

/* The times table: the longest hold and wait times per lock and call site (--top rows). */
static void print_times(struct locks_run *lr)
{
	size_t nst;
	const struct ka_lock_stat *st = ka_locks_stats(lr->l, &nst);
	uint64_t top = lr->o->top;
	char w1[32], w2[32], h1[32], h2[32], ln[300], sn[600];

	if (!nst)
		return;
	printf("\n%-10s %-10s %-10s %-10s %8s  %-30s %s\n", "hold max", "hold avg", "wait max",
	       "wait avg", "count", "lock", "acquired at");
	for (size_t i = 0; i < nst && (!top || i < top); i++) {
		const struct ka_lock_stat *s = &st[i];
		uint64_t n = s->acquired ? s->acquired : 1;

		printf("%-10s %-10s %-10s %-10s %8" PRIu64 "  %-30s %s\n",
		       s->kernel ? "-" : dur(s->hold_max, h1, sizeof(h1)),
		       s->kernel ? "-" : dur(s->hold_total / n, h2, sizeof(h2)),
		       dur(s->wait_max, w1, sizeof(w1)), dur(s->wait_total / n, w2, sizeof(w2)),
		       s->acquired, lock_name(lr->syms, s->lock, s->kernel ? (int)(s->kflags | 0x100) : 0, ln, sizeof(ln)),
		       s->kernel ? "(kernel contention)" : site_name(lr->syms, s->site, sn, sizeof(sn)));
	}
	if (top && nst > top)
		printf("(%zu more; --top 0 shows all)\n", nst - (size_t)top);
}

/* `ktrace locks`: options, one pass over the records, the findings, the times. */
static int run(int argc, char **argv)
{
	struct locks_opts o = { .top = 20 };
	struct locks_run lr = { .o = &o };
	int rc = cli_opts_parse_dir(&cmd_opts, argc, argv, NULL, take_option, &o, &o.dir);
	uint64_t misuse;

	if (rc != CLI_OPTS_GO)
		return rc;
	rc = locks_open(&lr);
	if (!rc)
		rc = locks_read(&lr);
	if (!rc) {
		misuse = print_findings(&lr);
		print_times(&lr);
		if (ktr_error_count(lr.t))
			rc = 1;
		else if (misuse)
			rc = 3;
	}
	ka_locks_free(lr.l);
	ktr_syms_free(lr.syms);
	ka_tasks_free(lr.tasks);
	ktr_close(lr.t);
	return rc;
}

KTRACE_COMMAND_OPTS(locks, "lock misuse (inversions, bad unlocks, double locks, held at exit) and lock times", run, cmd_opts);

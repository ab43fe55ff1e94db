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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/select.h"
#include "formats/formats.h"

#define CMD "locks"

static void help(FILE *out)
{
	fprintf(out,
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
		"wait times of its contention events (--kernel=lock).  DIR: ktrace.data.\n"
		"\n"
		"  -n, --top N   rows of the times table (default 20; 0: all)\n"
		"  -a, --all     kernel contention of every task (default: the program's)\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 no misuse found, 3 misuse found, 1 the trace cannot be read or\n"
		"has no lock events, 2 usage error.  See ktrace-locks(1).\n");
}

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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ktr_trace *t;
	struct ktr_syms *syms;
	struct ka_locks *l;
	struct ktr_rec r;
	const struct ka_lock_finding *f;
	const struct ka_lock_stat *st;
	uint64_t top = 20, napp, nkernel, ngaps, misuse = 0;
	struct ka_tasks *tasks = NULL;
	int all = 0;
	size_t nf, nst;
	const char *dir;
	int c, rc = 0;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":n:ah", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (cli_parse_u64(optarg, &top) < 0) {
				cli_error(CMD, "option '--top' needs a number, not '%s'", optarg);
				return 2;
			}
			break;
		case 'a':
			all = 1;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	t = ktr_open(dir);
	if (!t) {
		cli_error(CMD, "%s: out of memory", dir);
		return 1;
	}
	cli_diags(CMD, t);
	l = ka_locks_new(t);
	syms = ktr_syms_new(t);
	tasks = ka_tasks_new(t, all, NULL, NULL);
	if (!l || !syms || !tasks) {
		cli_error(CMD, "%s: out of memory", dir);
		ka_locks_free(l);
		ktr_syms_free(syms);
		ka_tasks_free(tasks);
		ktr_close(t);
		return 1;
	}
	while (ktr_next(t, &r)) {
		cli_diags(CMD, t);
		ka_tasks_feed(tasks, &r);
		/* kernel events: the program's tasks only (or --all) */
		if (r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_KEVENT && !ka_tasks_want(tasks, r.tid, r.pid))
			continue;
		if (ka_locks_feed(l, &r) < 0) {
			cli_error(CMD, "%s: out of memory", dir);
			rc = 1;
			break;
		}
	}
	cli_diags(CMD, t);
	if (!rc && ka_locks_end(l) < 0) {
		cli_error(CMD, "%s: out of memory", dir);
		rc = 1;
	}
	ka_locks_counts(l, &napp, &nkernel, &ngaps);
	if (!rc && !napp && !nkernel) {
		cli_error(CMD, "%s: no lock events (record with `ktrace record --locks`, or "
			       "--kernel=lock for the kernel's contention events)", dir);
		rc = 1;
	}
	if (!rc) {
		f = ka_locks_findings(l, &nf);
		/* misuse first, inversions among it; the notes after */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < nf; i++) {
				if ((f[i].kind == KA_LOCK_HELD_AT_END) != pass)
					continue;
				misuse += f[i].kind != KA_LOCK_HELD_AT_END;
				print_finding(t, syms, l, &f[i]);
			}
		printf("%s%" PRIu64 " misuse finding%s (%" PRIu64 " lock events", nf ? "\n" : "", misuse,
		       misuse == 1 ? "" : "s", napp);
		if (nkernel)
			printf(", %" PRIu64 " kernel contention events", nkernel);
		printf(")\n");
		if (ngaps) {
			cli_error(CMD, "warning: %s: records are missing (%" PRIu64
				       " gaps): the findings may be incomplete or wrong",
				  dir, ngaps);
			cli_losses(CMD, t);
		}
		st = ka_locks_stats(l, &nst);
		if (nst) {
			char w1[32], w2[32], h1[32], h2[32], ln[300], sn[600];

			printf("\n%-10s %-10s %-10s %-10s %8s  %-30s %s\n", "hold max", "hold avg", "wait max",
			       "wait avg", "count", "lock", "acquired at");
			for (size_t i = 0; i < nst && (!top || i < top); i++) {
				const struct ka_lock_stat *s = &st[i];
				uint64_t n = s->acquired ? s->acquired : 1;

				printf("%-10s %-10s %-10s %-10s %8" PRIu64 "  %-30s %s\n",
				       s->kernel ? "-" : dur(s->hold_max, h1, sizeof(h1)),
				       s->kernel ? "-" : dur(s->hold_total / n, h2, sizeof(h2)),
				       dur(s->wait_max, w1, sizeof(w1)), dur(s->wait_total / n, w2, sizeof(w2)),
				       s->acquired, lock_name(syms, s->lock, s->kernel ? (int)(s->kflags | 0x100) : 0, ln, sizeof(ln)),
				       s->kernel ? "(kernel contention)" : site_name(syms, s->site, sn, sizeof(sn)));
			}
			if (top && nst > top)
				printf("(%zu more; --top 0 shows all)\n", nst - (size_t)top);
		}
		if (ktr_error_count(t))
			rc = 1;
		else if (misuse)
			rc = 3;
	}
	ka_locks_free(l);
	ktr_syms_free(syms);
	ka_tasks_free(tasks);
	ktr_close(t);
	return rc;
}

KTRACE_COMMAND(locks, "lock misuse (inversions, bad unlocks, double locks, held at exit) and lock times", run, help);

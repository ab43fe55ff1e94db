/*
 * analysis/tasks.c - which tasks a view of a merged application + kernel
 * trace shows (timeline, export, kd with kernel events): the traced program
 * and the processes it forked, or the --pid/--tid lists, or every task
 * (API in analysis/analysis.h).
 */
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "analysis/analysis.h"

struct ka_tasks {
	int all;
	const struct ktr_trace *t;
	const struct ka_ids *pids, *tids;
	uint32_t *procs; /* the program's processes (tgids) */
	size_t nprocs, cap;
};

static int has_proc(const struct ka_tasks *k, uint32_t pid)
{
	for (size_t i = 0; i < k->nprocs; i++)
		if (k->procs[i] == pid)
			return 1;
	return 0;
}

static void add_proc(struct ka_tasks *k, uint32_t pid)
{
	if (!pid || has_proc(k, pid))
		return;
	if (k->nprocs == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;
		uint32_t *n = realloc(k->procs, cap * sizeof(*n));

		if (!n)
			return;
		k->procs = n;
		k->cap = cap;
	}
	k->procs[k->nprocs++] = pid;
}

struct ka_tasks *ka_tasks_new(const struct ktr_trace *t, int all, const struct ka_ids *pids,
			      const struct ka_ids *tids)
{
	struct ka_tasks *k = calloc(1, sizeof(*k));
	const struct ktr_trace *kern = ktr_kernel(t);
	const struct ktr_info *in = ktr_info(t);

	if (!k)
		return NULL;
	k->t = t;
	k->pids = pids;
	k->tids = tids;
	k->all = all;
	if (all || (pids && pids->n) || (tids && tids->n))
		return k;
	/* the program: the application trace's process (not the kernel
	 * sub-trace's `pid`, which is ktrace's own, in a kernel-only trace) */
	if (in->pid && !(kern && !strcmp(in->channel, "kernel") && in->pid == ktr_info(kern)->pid))
		add_proc(k, in->pid);
	if (!k->nprocs)
		k->all = 1;
	return k;
}

void ka_tasks_feed(struct ka_tasks *k, const struct ktr_rec *r)
{
	if (!k || k->all || r->kind != KTR_RECORD || r->cls != KTRACE_CLASS_KEVENT ||
	    r->id != KTRACE_LKST_PROCESS_FORK || r->nwords < 3)
		return;
	/* PROCESS_FORK parent_pid, child_pid, in the parent's context */
	if (has_proc(k, r->pid) || has_proc(k, (uint32_t)r->w[1]) || has_proc(k, r->tid))
		add_proc(k, (uint32_t)r->w[2]);
}

int ka_tasks_want(void *arg, uint32_t tid, uint32_t pid)
{
	struct ka_tasks *k = arg;

	if (!tid)
		return 0;
	if (k->all)
		return 1;
	if ((k->pids && k->pids->n) || (k->tids && k->tids->n))
		/* an empty list selects nothing here: the other one made the choice */
		return (k->pids && k->pids->n && ka_ids_has(k->pids, pid)) ||
		       (k->tids && k->tids->n && ka_ids_has(k->tids, tid));
	return has_proc(k, pid) || has_proc(k, tid);
}

void ka_tasks_free(struct ka_tasks *k)
{
	if (!k)
		return;
	free(k->procs);
	free(k);
}


int ka_ids_has(const struct ka_ids *l, uint64_t x)
{
	if (!l->n)
		return 1;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == x)
			return 1;
	return 0;
}

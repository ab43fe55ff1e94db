/*
 * cli/kview.c - task selection and function names for the views of a
 * merged application + kernel trace (API in cli/kview.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/lkst.h>

#include "cli/cli.h"
#include "cli/kview.h"

/* ---- tasks ---------------------------------------------------------------- */

struct kv_tasks {
	int all;
	const struct ktr_trace *t;
	const struct cli_idlist *pids, *tids;
	uint32_t *procs; /* the program's processes (tgids) */
	size_t nprocs, cap;
};

static int has_proc(const struct kv_tasks *k, uint32_t pid)
{
	for (size_t i = 0; i < k->nprocs; i++)
		if (k->procs[i] == pid)
			return 1;
	return 0;
}

static void add_proc(struct kv_tasks *k, uint32_t pid)
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

struct kv_tasks *kv_tasks_new(const struct ktr_trace *t, int all, const struct cli_idlist *pids,
			      const struct cli_idlist *tids)
{
	struct kv_tasks *k = calloc(1, sizeof(*k));
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

void kv_tasks_feed(struct kv_tasks *k, const struct ktr_rec *r)
{
	if (!k || k->all || r->kind != KTR_RECORD || r->cls != KTRACE_CLASS_KEVENT ||
	    r->id != KTRACE_LKST_PROCESS_FORK || r->nwords < 3)
		return;
	/* PROCESS_FORK parent_pid, child_pid, in the parent's context */
	if (has_proc(k, r->pid) || has_proc(k, (uint32_t)r->w[1]) || has_proc(k, r->tid))
		add_proc(k, (uint32_t)r->w[2]);
}

int kv_tasks_want(void *arg, uint32_t tid, uint32_t pid)
{
	struct kv_tasks *k = arg;

	if (!tid)
		return 0;
	if (k->all)
		return 1;
	if ((k->pids && k->pids->n) || (k->tids && k->tids->n))
		/* an empty list selects nothing here: the other one made the choice */
		return (k->pids && k->pids->n && cli_idlist_has(k->pids, pid)) ||
		       (k->tids && k->tids->n && cli_idlist_has(k->tids, tid));
	return has_proc(k, pid) || has_proc(k, tid);
}

void kv_tasks_free(struct kv_tasks *k)
{
	if (!k)
		return;
	free(k->procs);
	free(k);
}

/* ---- function names -------------------------------------------------------- */

struct kv_name {
	uint32_t key;
	char *name;
};

struct kv_names {
	struct ktr_trace *t;
	struct ktr_syms *syms;
	struct kv_name *v; /* open addressing, key + name; name NULL = empty */
	size_t size, n;
};

struct kv_names *kv_names_new(struct ktr_trace *t, int demangle)
{
	struct kv_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->t = t;
	n->syms = ktr_syms_new(t);
	if (n->syms)
		ktr_syms_set_demangle(n->syms, demangle);
	return n;
}

static size_t nslot(const struct kv_names *n, uint32_t key)
{
	return (size_t)(key * 2654435761u) & (n->size - 1);
}

static int grow(struct kv_names *n)
{
	size_t size = n->size ? 2 * n->size : 1024;
	struct kv_name *v = calloc(size, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < n->size; i++) {
		size_t j;

		if (!n->v[i].name)
			continue;
		for (j = (size_t)(n->v[i].key * 2654435761u) & (size - 1); v[j].name;
		     j = (j + 1) & (size - 1))
			;
		v[j] = n->v[i];
	}
	free(n->v);
	n->v = v;
	n->size = size;
	return 0;
}

const char *kv_names_call(struct kv_names *n, const struct ktr_call *c)
{
	char buf[512];
	struct ktr_sym sym;
	size_t i;

	if (n->size)
		for (i = nslot(n, c->key); n->v[i].name; i = (i + 1) & (n->size - 1))
			if (n->v[i].key == c->key)
				return n->v[i].name;
	if (!c->func)
		snprintf(buf, sizeof(buf), "?");
	else if (n->syms)
		ktr_sym_format(ktr_sym_lookup(n->syms, c->func, 0, &sym), 0, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, c->func);
	if ((n->n + 1) * 2 > n->size && grow(n) < 0)
		return "?";
	for (i = nslot(n, c->key); n->v[i].name; i = (i + 1) & (n->size - 1))
		;
	n->v[i].key = c->key;
	n->v[i].name = strdup(buf);
	if (!n->v[i].name)
		return "?";
	n->n++;
	return n->v[i].name;
}

void kv_names_free(struct kv_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->size; i++)
		free(n->v[i].name);
	free(n->v);
	ktr_syms_free(n->syms);
	free(n);
}

const char *kv_comm(const struct ktr_trace *t, uint32_t tid)
{
	const char *comm = NULL;

	if (tid == 0)
		return "idle";
	if (ktr_thread(t, tid, NULL, &comm) && comm && *comm)
		return comm;
	return "?";
}

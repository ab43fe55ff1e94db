/*
 * analysis/profile.c - where the time went, per function: the statistics
 * of `ktrace kd`'s table (KFT's kd, seed 002), read from a function trace
 * in one pass (API in analysis/analysis.h).
 *
 * The trace is read once, in record order (by exit time per thread).
 * reader/calltree.c rebuilds each thread's call tree on the fly, giving
 * every call its local time (duration minus its children's durations) and
 * the caller -> callee edges of the "most time-consuming child" fields;
 * reader/outer.c counts a recursive function's time once (its outermost
 * active calls).  Memory is per function and per open call, so traces of
 * any length work.  Calls are also handed to a sorter for kd -c (calls in
 * entry order), with the gaps of the selected threads.
 *
 * With kernel events in the trace (`ktrace record --kernel`: DIR/kernel,
 * merged by time), reader/sched.c follows the program's threads through
 * their context switches: a function's off-CPU time is the time its
 * thread was scheduled out during its calls, and local time becomes
 * on-CPU self time (the seed's KFT caveat: time scheduled out no longer
 * counts as the function's own).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "reader/sched.h"

struct edge {
	uint32_t parent, child;
	uint64_t ns, count;
};

struct ka_profile_priv {
	struct ka_profile_opts o;
	struct ktr_trace *t;
	size_t capfns;
	struct ka_map64 by_key, by_addr, by_edge;
	uint32_t *key_fi; /* fn index + 1 of call-site keys < KTR_CALL_KEY_EXTRA (0: not seen) */
	size_t nkey_fi;
	struct edge *edges;
	size_t nedges, capedges;
	struct ktr_sched *sched;
	struct ka_tasks *tasks;
};

struct ka_profile *ka_profile_new(struct ktr_trace *t, const struct ka_profile_opts *o)
{
	struct ka_profile *p = calloc(1, sizeof(*p));
	struct ka_profile_priv *q = calloc(1, sizeof(*q));

	if (!p || !q) {
		free(p);
		free(q);
		return NULL;
	}
	p->priv = q;
	q->o = *o;
	q->t = t;
	if (ktr_kernel(t)) {
		/* follow the program's threads through their context switches */
		q->tasks = ka_tasks_new(t, o->all_tasks, NULL, NULL);
		q->sched = q->tasks ? ktr_sched_new(KTR_SCHED_OFFCPU, NULL, NULL) : NULL;
		if (!q->sched) {
			ka_profile_free(p);
			return NULL;
		}
		ktr_sched_follow(q->sched, ka_tasks_want, q->tasks);
	}
	return p;
}

struct ktr_sched *ka_profile_sched(const struct ka_profile *p)
{
	return p->offcpu ? p->priv->sched : NULL;
}

/* The fn index of key @key, or -1 if not seen (a direct table for call-site indexes: kd looks one up per call). */
static long key_get(const struct ka_profile_priv *q, uint32_t key)
{
	if (key < q->nkey_fi)
		return (long)q->key_fi[key] - 1;
	return key < KTR_CALL_KEY_EXTRA ? -1 : ka_map64_get(&q->by_key, key);
}

static int key_put(struct ka_profile_priv *q, uint32_t key, uint32_t fi)
{
	if (key >= KTR_CALL_KEY_EXTRA)
		return ka_map64_put(&q->by_key, key, fi);
	if (key >= q->nkey_fi) {
		size_t n = q->nkey_fi ? 2 * q->nkey_fi : 4096;
		uint32_t *v;

		while (n <= key)
			n *= 2;
		if (!(v = realloc(q->key_fi, n * sizeof(*v))))
			return -1;
		memset(v + q->nkey_fi, 0, (n - q->nkey_fi) * sizeof(*v));
		q->key_fi = v;
		q->nkey_fi = n;
	}
	q->key_fi[key] = fi + 1;
	return 0;
}

/* The fn index of call @c (by its key, then by its function address). */
static long fn_of(struct ka_profile *p, const struct ktr_call *c)
{
	struct ka_profile_priv *q = p->priv;
	long i = key_get(q, c->key);

	if (i >= 0)
		return i;
	i = ka_map64_get(&q->by_addr, c->func);
	if (i < 0) {
		if (p->nfns == q->capfns) {
			size_t cap = q->capfns ? 2 * q->capfns : 256;
			struct ka_fn *n = realloc(p->fns, cap * sizeof(*n));

			if (!n)
				return -1;
			p->fns = n;
			q->capfns = cap;
		}
		memset(&p->fns[p->nfns], 0, sizeof(p->fns[0]));
		p->fns[p->nfns].addr = c->func;
		i = (long)p->nfns++;
		if (ka_map64_put(&q->by_addr, c->func, (uint32_t)i) < 0)
			return -1;
	}
	if (key_put(q, c->key, (uint32_t)i) < 0)
		return -1;
	return i;
}

static void on_child(void *arg, uintptr_t parent, uintptr_t child, uint64_t ns, uint64_t count)
{
	struct ka_profile_priv *q = arg;
	uint64_t key = (uint64_t)parent << 32 | (uint32_t)child;
	long i = ka_map64_get(&q->by_edge, key);

	if (i < 0) {
		if (q->nedges == q->capedges) {
			size_t cap = q->capedges ? 2 * q->capedges : 1024;
			struct edge *n = realloc(q->edges, cap * sizeof(*n));

			if (!n)
				return;
			q->edges = n;
			q->capedges = cap;
		}
		i = (long)q->nedges;
		if (ka_map64_put(&q->by_edge, key, (uint32_t)i) < 0)
			return;
		q->edges[i] = (struct edge){ (uint32_t)parent, (uint32_t)child, 0, 0 };
		q->nedges++;
	}
	q->edges[i].ns += ns;
	q->edges[i].count += count;
}

/* A gap of a selected thread, in the sorter (kd -c shows it where it was). */
static int sort_gap(struct ka_profile_priv *q, const struct ktr_rec *r)
{
	struct ktr_callent e = { 0 };

	if (!q->o.sorter || !q->o.want_task || !q->o.want_task(q->o.arg, r->pid, r->tid))
		return 0;
	e.entry_ns = r->ns;
	e.flags = KTR_CALLENT_GAP;
	e.key = r->gap;
	e.local_ns = r->count;
	e.thread = ktr_callsort_thread(q->o.sorter, r->pid, r->tid);
	e.cpu = (uint32_t)r->cpu;
	return ktr_callsort_add(q->o.sorter, &e);
}

static int sort_call(struct ka_profile_priv *q, const struct ktr_call *c, uint64_t local, long fi)
{
	if (!q->o.sorter)
		return 0;
	return ktr_callsort_add_call(q->o.sorter, c, (uint32_t)fi, local);
}

/* One call's statistics (the analysis half of ka_profile_read()); its local time *@pre if not NULL (computed by the pipeline's reader). */
static int count_call(struct ka_profile *p, struct ktr_ctree *ct, struct ktr_ctree *ct_on,
		      struct ktr_outer *outer, const struct ktr_call *c, const uint64_t *pre)
{
	struct ka_profile_priv *q = p->priv;
	uint64_t local, off = 0;
	struct ka_fn *f;
	long fi;

	p->calls++;
	fi = fn_of(p, c);
	if (fi < 0)
		return -ENOMEM;
	local = pre ? *pre : ktr_ctree_add(ct, c, (uintptr_t)fi, q->o.edges ? on_child : NULL, q);
	f = &p->fns[fi];
	f->wlocal += local;
	if (q->sched && ktr_sched_switches(q->sched)) {
		/* on-CPU local time: the same call tree over on-CPU durations */
		struct ktr_call on = *c;

		p->offcpu = 1;
		off = ktr_sched_offcpu(q->sched, c->tid, c->entry_ns, c->exit_ns, NULL, NULL);
		on.dur_ns = off < c->dur_ns ? c->dur_ns - off : 0;
		local = ktr_ctree_add(ct_on, &on, (uintptr_t)fi, NULL, NULL);
		f->off += off;
	}
	f->count++;
	f->time += ktr_outer_add(outer, c, (uint64_t)fi);
	f->sum += c->dur_ns;
	f->local += local;
	if (c->dur_ns > f->max)
		f->max = c->dur_ns;
	if (c->flags & KTRACE_CALLF_UNFINISHED)
		f->unfinished++;
	return sort_call(q, c, local, fi);
}

/* Record @r decoded into *@c if it is a CALL record (counted in *@call_records) that the selection keeps. */
static int selected_call(struct ka_profile_priv *q, const struct ktr_rec *r, struct ktr_call *c,
			 uint64_t *call_records)
{
	if (!ktr_call_decode(q->t, r, c))
		return 0;
	(*call_records)++;
	return !q->o.want_call || q->o.want_call(q->o.arg, c);
}

/* A gap of the application's streams: counted, and handed to the sorter. */
static int count_gap(struct ka_profile *p, const struct ktr_rec *r)
{
	if (r->gap == KTR_GAP_OVERWRITTEN)
		p->overwritten += r->count;
	else if (r->gap == KTR_GAP_CORRUPT)
		p->corrupt++;
	else
		p->lost += r->count;
	return sort_gap(p->priv, r);
}

/*
 * The two-thread pipeline (traces without kernel events): a reader thread
 * decodes records into batches of calls (ktr_next_calls() for runs of
 * calls, ktr_next() and ktr_call_decode() between them, the selection)
 * and, unless caller/callee edges are asked for, their local times (call
 * trees); the caller's thread counts them (outer time, the statistics,
 * the sorter): about half of the work each.  NBATCH batches of up to BATCH
 * calls circulate: the reader fills a free one, the counter empties a full
 * one, handing them over under one mutex per batch, not per record.  The
 * rare gaps travel beside the calls (gap i comes before call at[i]; a
 * batch closes early when NGAP gaps fill it), so a batch is 80 bytes a
 * call and the batches in flight stay in the caches.  The order of the
 * items is the records' order, so the result is the single-thread one's.
 */
#define BATCH 2048
#define NBATCH 6
#define NGAP 64
#define AHEAD 8 /* count_batch() prefetches this many calls ahead */

struct pbatch {
	struct ktr_call c[BATCH];
	uint64_t local[BATCH]; /* local times, when the reader computed them (local_done) */
	struct ktr_rec gap[NGAP];
	uint32_t at[NGAP];
	size_t n, ngap;
	int local_done;
};

struct pipe {
	struct ka_profile *p;
	struct ka_progress *prog;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pbatch *b[NBATCH];
	unsigned head, tail; /* batches filled (reader), emptied (counter); mod 2^32 */
	int done, stop;      /* the reader reached the end; the counter gave up */
	uint64_t records, call_records;
	struct ktr_ctree *ct; /* the reader's call trees (local times), without edges */
};

/*
 * Fill batch @b from the trace: runs of calls straight from
 * ktr_next_calls(), and the record after each run (a gap, another record,
 * the first call of a sub-buffer) from ktr_next().  Return: 1 at the end
 * of the trace.
 */
static int fill_batch(struct pipe *pp, struct pbatch *b)
{
	struct ka_profile_priv *q = pp->p->priv;
	struct ktr_rec r;

	b->n = b->ngap = 0;
	while (b->n < BATCH && b->ngap < NGAP) {
		uint64_t off = 0;
		unsigned stream = 0;
		size_t n = ktr_next_calls(q->t, &b->c[b->n], BATCH - b->n, &stream, &off);

		if (n) {
			size_t kept = b->n;

			pp->records += n;
			pp->call_records += n;
			ka_progress_recs(pp->prog, stream, off, n);
			if (!q->o.want_call)
				kept += n;
			for (size_t k = b->n; q->o.want_call && k < b->n + n; k++) /* the selection, in place */
				if (q->o.want_call(q->o.arg, &b->c[k]))
					b->c[kept++] = b->c[k];
			b->n = kept;
			continue;
		}
		if (!ktr_next(q->t, &r))
			return 1;
		pp->records++;
		ka_progress_rec(pp->prog, &r);
		if (r.kind == KTR_GAP) {
			b->at[b->ngap] = (uint32_t)b->n;
			b->gap[b->ngap++] = r;
		} else if (selected_call(q, &r, &b->c[b->n], &pp->call_records)) {
			b->n++;
		}
	}
	return 0;
}

/* Count batch @b.  Return: 0 or a negative errno. */
static int count_batch(struct ka_profile *p, struct ktr_ctree *ct, struct ktr_ctree *ct_on,
		       struct ktr_outer *outer, const struct pbatch *b)
{
	struct ka_profile_priv *q = p->priv;
	size_t g = 0;
	int rc = 0;

	for (size_t k = 0; !rc && k < b->n; k++) {
		if (k + AHEAD < b->n) { /* the state of a later call, from memory meanwhile */
			long fi = key_get(q, b->c[k + AHEAD].key);

			if (fi >= 0) {
				__builtin_prefetch(&p->fns[fi]);
				ktr_outer_prefetch(outer, &b->c[k + AHEAD], (uint64_t)fi);
			}
		}
		while (!rc && g < b->ngap && b->at[g] == k)
			rc = count_gap(p, &b->gap[g++]);
		if (!rc)
			rc = count_call(p, ct, ct_on, outer, &b->c[k], b->local_done ? &b->local[k] : NULL);
	}
	while (!rc && g < b->ngap)
		rc = count_gap(p, &b->gap[g++]);
	return rc;
}

static void *pipe_reader(void *arg)
{
	struct pipe *pp = arg;
	int end = 0;

	while (!end) {
		unsigned slot;

		pthread_mutex_lock(&pp->mu);
		while (pp->head - pp->tail == NBATCH && !pp->stop)
			pthread_cond_wait(&pp->cv, &pp->mu);
		slot = pp->head % NBATCH;
		end = pp->stop;
		pthread_mutex_unlock(&pp->mu);
		if (end)
			pp->b[slot]->n = pp->b[slot]->ngap = 0;
		else
			end = fill_batch(pp, pp->b[slot]);
		/* local times here, where there is time to spare: the counter has the rest */
		pp->b[slot]->local_done = pp->ct != NULL;
		for (size_t k = 0; pp->ct && k < pp->b[slot]->n; k++)
			pp->b[slot]->local[k] = ktr_ctree_add(pp->ct, &pp->b[slot]->c[k], 0, NULL, NULL);
		pthread_mutex_lock(&pp->mu);
		pp->head++;
		pp->done = end;
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
	}
	return NULL;
}

/* ka_profile_read() over the pipeline.  Return: as ka_profile_read(); 1: no thread could start. */
static int read_piped(struct ka_profile *p, struct ktr_ctree *ct, struct ktr_ctree *ct_on,
		      struct ktr_outer *outer, struct ka_progress *prog)
{
	struct pipe pp = { .p = p, .prog = prog };
	pthread_t th;
	int rc = 0;

	for (unsigned i = 0; i < NBATCH; i++)
		if (!(pp.b[i] = malloc(sizeof(struct pbatch)))) {
			for (unsigned k = 0; k < i; k++)
				free(pp.b[k]);
			return 1;
		}
	pthread_mutex_init(&pp.mu, NULL);
	pthread_cond_init(&pp.cv, NULL);
	if (!p->priv->o.edges)
		pp.ct = ktr_ctree_new(); /* NULL: the counter's ct does it */
	if (pthread_create(&th, NULL, pipe_reader, &pp) != 0) {
		rc = 1;
		goto out;
	}
	for (;;) {
		unsigned slot;

		pthread_mutex_lock(&pp.mu);
		while (pp.head == pp.tail && !pp.done)
			pthread_cond_wait(&pp.cv, &pp.mu);
		if (pp.head == pp.tail) { /* done, all emptied */
			pthread_mutex_unlock(&pp.mu);
			break;
		}
		slot = pp.tail % NBATCH;
		pthread_mutex_unlock(&pp.mu);
		rc = count_batch(p, ct, ct_on, outer, pp.b[slot]);
		pthread_mutex_lock(&pp.mu);
		pp.tail++;
		if (rc)
			pp.stop = 1;
		pthread_cond_broadcast(&pp.cv);
		pthread_mutex_unlock(&pp.mu);
		if (rc)
			break;
	}
	pthread_join(th, NULL);
	p->records += pp.records;
	p->call_records += pp.call_records;
out:
	ktr_ctree_free(pp.ct);
	pthread_mutex_destroy(&pp.mu);
	pthread_cond_destroy(&pp.cv);
	for (unsigned i = 0; i < NBATCH; i++)
		free(pp.b[i]);
	return rc;
}

/* ka_profile_read() on the caller's thread (kernel events, or $KTRACE_ONE_THREAD). */
static int read_one(struct ka_profile *p, struct ktr_ctree *ct, struct ktr_ctree *ct_on,
		    struct ktr_outer *outer, struct ka_progress *prog)
{
	struct ka_profile_priv *q = p->priv;
	struct ktr_rec r;
	struct ktr_call c;
	int rc = 0;

	while (!rc && ktr_next(q->t, &r)) {
		p->records++;
		ka_progress_rec(prog, &r);
		if (q->sched && (r.stream >= KTR_KERNEL_STREAM || r.cls == KTRACE_CLASS_KEVENT)) {
			/* a kernel event: only the context switches matter here */
			ka_tasks_feed(q->tasks, &r);
			ktr_sched_feed(q->sched, q->t, &r);
			if (r.kind == KTR_GAP && r.gap != KTR_GAP_CORRUPT)
				p->klost += r.count;
			continue;
		}
		if (r.kind == KTR_GAP)
			rc = count_gap(p, &r);
		else if (selected_call(q, &r, &c, &p->call_records))
			rc = count_call(p, ct, ct_on, outer, &c, NULL);
	}
	return rc;
}

int ka_profile_read(struct ka_profile *p)
{
	struct ka_profile_priv *q = p->priv;
	struct ktr_ctree *ct = ktr_ctree_new(), *ct_on = ktr_ctree_new();
	struct ktr_outer *outer = ktr_outer_new();
	struct ka_progress *prog = ka_progress_start(q->t, q->o.cmd, 0);
	int rc = -ENOMEM;

	/* kernel events need the trace in the counting half: one thread then */
	if (ct && ct_on && outer) {
		rc = q->sched || getenv("KTRACE_ONE_THREAD") ? 1 : read_piped(p, ct, ct_on, outer, prog);
		if (rc == 1) /* (also when no thread could start) */
			rc = read_one(p, ct, ct_on, outer, prog);
	}
	ka_progress_end(prog);
	ktr_ctree_free(ct);
	ktr_ctree_free(ct_on);
	ktr_outer_free(outer);
	return rc;
}

/* Function @f's name, if it has none yet (NULL when out of memory: shown as "?"). */
static void fn_name(struct ka_fn *f, struct ktr_syms *syms)
{
	char buf[512];
	struct ktr_sym s;

	if (f->name)
		return;
	if (!f->addr) {
		f->name = strdup("?");
		return;
	}
	ktr_sym_lookup(syms, f->addr, 0, &s);
	f->name = strdup(ktr_sym_format(&s, 1, buf, sizeof(buf)));
}

void ka_profile_name(struct ka_profile *p, struct ktr_syms *syms)
{
	for (size_t i = 0; i < p->nfns; i++)
		fn_name(&p->fns[i], syms);
}

long ka_profile_fn(struct ka_profile *p, const struct ktr_call *c, struct ktr_syms *syms)
{
	long fi = fn_of(p, c);

	if (fi >= 0)
		fn_name(&p->fns[fi], syms);
	return fi;
}

void ka_profile_best(struct ka_profile *p)
{
	struct ka_profile_priv *q = p->priv;

	for (size_t i = 0; i < q->nedges; i++) {
		const struct edge *e = &q->edges[i];
		struct ka_fn *f = &p->fns[e->parent];

		if (!f->have_best || e->ns > f->best_ns || (e->ns == f->best_ns && e->count > f->best_count)) {
			f->have_best = 1;
			f->best = e->child;
			f->best_ns = e->ns;
			f->best_count = e->count;
		}
	}
}

uint64_t ka_fn_field(const struct ka_fn *f, char field)
{
	switch (field) {
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

static char sort_key; /* qsort() has no argument: set by ka_profile_sort() */

static int cmp_fn(const void *a, const void *b)
{
	const struct ka_fn *x = *(const struct ka_fn *const *)a, *y = *(const struct ka_fn *const *)b;
	uint64_t vx, vy;

	if (sort_key == 'F') {
		int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");

		if (c)
			return c;
		return x->addr < y->addr ? -1 : x->addr > y->addr;
	}
	vx = ka_fn_field(x, sort_key);
	vy = ka_fn_field(y, sort_key);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->time != y->time)
		return x->time > y->time ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

struct ka_fn **ka_profile_sort(struct ka_profile *p, char key, const uint64_t *min_time, size_t *n)
{
	struct ka_fn **rows = malloc((p->nfns ? p->nfns : 1) * sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < p->nfns; i++)
		if (!min_time || p->fns[i].time > *min_time)
			rows[(*n)++] = &p->fns[i];
	sort_key = key;
	qsort(rows, *n, sizeof(*rows), cmp_fn);
	return rows;
}

void ka_profile_free(struct ka_profile *p)
{
	struct ka_profile_priv *q;

	if (!p)
		return;
	q = p->priv;
	for (size_t i = 0; i < p->nfns; i++)
		free(p->fns[i].name);
	free(p->fns);
	if (q) {
		free(q->edges);
		free(q->key_fi);
		ka_map64_free(&q->by_key);
		ka_map64_free(&q->by_addr);
		ka_map64_free(&q->by_edge);
		ktr_sched_free(q->sched);
		ka_tasks_free(q->tasks);
		free(q);
	}
	free(p);
}

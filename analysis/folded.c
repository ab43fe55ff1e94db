/*
 * analysis/folded.c - folded stacks, the input of flamegraph.pl (Brendan
 * Gregg's FlameGraph) and speedscope: one line "thread;f1;f2;...;fn NS"
 * per distinct call path, NS the self time spent in fn on that path (API
 * in analysis/analysis.h).
 *
 * Calls are sorted by thread and entry time (reader/callsort.c, bounded
 * memory), the stack of each thread is rebuilt from entry/exit times and
 * depths, and equal paths are summed in a hash table of at most
 * FOLD_MAX paths (beyond it, what is there is written out and counting
 * starts over: flamegraph.pl sums repeated lines, so the graph is the same).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

#define FOLD_MAX 1000000u

struct fold_ent {
	char *path;
	uint64_t ns;
	uint64_t hash;
};

struct fold {
	struct fold_ent *v;
	size_t size, n;
	void (*emit)(void *arg, const char *path, uint64_t ns);
	void *arg;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void fold_flush(struct fold *f)
{
	for (size_t i = 0; i < f->size; i++) {
		if (!f->v[i].path)
			continue;
		f->emit(f->arg, f->v[i].path, f->v[i].ns);
		free(f->v[i].path);
		f->v[i].path = NULL;
	}
	f->n = 0;
}

static void fold_add(struct fold *f, const char *path, uint64_t ns)
{
	uint64_t h = fnv(path);
	size_t i;

	if (!ns)
		return;
	if (!f->size) {
		f->size = 1u << 16;
		f->v = calloc(f->size, sizeof(*f->v));
		if (!f->v) {
			f->size = 0;
			f->emit(f->arg, path, ns);
			return;
		}
	}
	for (i = h & (f->size - 1); f->v[i].path; i = (i + 1) & (f->size - 1))
		if (f->v[i].hash == h && !strcmp(f->v[i].path, path)) {
			f->v[i].ns += ns;
			return;
		}
	if ((f->n + 1) * 2 > f->size) {
		size_t size = f->size * 2;
		struct fold_ent *v = size <= 2 * FOLD_MAX ? calloc(size, sizeof(*v)) : NULL;

		if (!v) {
			fold_flush(f); /* bounded: write what we have and start over */
		} else {
			for (size_t k = 0; k < f->size; k++) {
				size_t j;

				if (!f->v[k].path)
					continue;
				for (j = f->v[k].hash & (size - 1); v[j].path; j = (j + 1) & (size - 1))
					;
				v[j] = f->v[k];
			}
			free(f->v);
			f->v = v;
			f->size = size;
		}
		for (i = h & (f->size - 1); f->v[i].path; i = (i + 1) & (f->size - 1))
			;
	}
	f->v[i].path = strdup(path);
	if (!f->v[i].path) {
		f->emit(f->arg, path, ns);
		return;
	}
	f->v[i].hash = h;
	f->v[i].ns = ns;
	f->n++;
}

/* A frame name for a folded line: ';' separates frames, so it becomes ':'. */
static void frame(char *dst, size_t len, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < len && name[i]; i++)
		dst[i] = name[i] == ';' ? ':' : name[i] == '\n' ? ' ' : name[i];
	dst[i] = 0;
}

struct fstack {
	uint64_t end;
	unsigned depth;
	size_t len; /* path length before this frame */
};

/* The current thread's call path: its text and the stack of frames it is made of. */
struct fpath {
	char *path;          /* "thread;f1;...;fn", @plen bytes, @pcap allocated */
	size_t plen, pcap;
	struct fstack *st;   /* the frames, @nst of @capst */
	size_t nst, capst;
	uint32_t cur_thread; /* the callsort's thread index (UINT32_MAX: none yet) */
};

/* fpath_reserve - room for @need bytes in p->path.  Returns 0 or -ENOMEM. */
static int fpath_reserve(struct fpath *p, size_t need)
{
	char *n;

	if (need <= p->pcap)
		return 0;
	n = realloc(p->path, need + 4096);
	if (!n)
		return -ENOMEM;
	p->path = n;
	p->pcap = need + 4096;
	return 0;
}

/*
 * fpath_thread - start the path of thread @thread (a callsort thread index
 * of @cs): its name, no frames.  Returns 0 or -ENOMEM.
 */
static int fpath_thread(struct fpath *p, struct ktr_trace *t, struct ktr_callsort *cs, uint32_t thread)
{
	uint32_t pid = 0, tid = 0;
	char fr[512];

	ktr_callsort_thread_ids(cs, thread, &pid, &tid);
	p->cur_thread = thread;
	p->nst = 0;
	frame(fr, sizeof(fr), ka_comm(t, tid));
	p->plen = strlen(fr);
	if (fpath_reserve(p, p->plen + 1) < 0)
		return -ENOMEM;
	memcpy(p->path, fr, p->plen + 1);
	return 0;
}

/*
 * fpath_push - call @e of the current thread (the next by entry time):
 * the frames it is not inside are popped, its own pushed, its name
 * (through @o->names) appended to the path.  Returns 0 or -ENOMEM.
 */
static int fpath_push(struct fpath *p, struct ktr_trace *t, const struct ka_folded_opts *o,
		      const struct ktr_callent *e)
{
	struct ktr_call c;
	char fr[512];

	while (p->nst && (p->st[p->nst - 1].end <= e->entry_ns || p->st[p->nst - 1].depth >= e->depth)) {
		p->plen = p->st[p->nst - 1].len;
		p->nst--;
	}
	memset(&c, 0, sizeof(c));
	c.key = e->key;
	ktr_call_key_addrs(t, e->key, &c.func, &c.site);
	frame(fr, sizeof(fr), ka_names_call(o->names, &c));
	if (fpath_reserve(p, p->plen + 1 + strlen(fr) + 1) < 0)
		return -ENOMEM;
	if (p->nst == p->capst) {
		size_t cap = p->capst ? 2 * p->capst : 64;
		struct fstack *n = realloc(p->st, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->st = n;
		p->capst = cap;
	}
	p->st[p->nst].end = e->entry_ns + e->dur_ns;
	p->st[p->nst].depth = e->depth;
	p->st[p->nst].len = p->plen;
	p->nst++;
	p->path[p->plen] = ';';
	strcpy(p->path + p->plen + 1, fr);
	p->plen = strlen(p->path);
	return 0;
}

/*
 * fold_collect - every CALL record of @t that @o wants, into @ct and the
 * sort @cs (by thread, then entry time); counted in *@calls, progress on
 * @prog.  Returns 0 or a negative errno.
 */
static int fold_collect(struct ktr_trace *t, const struct ka_folded_opts *o, struct ktr_ctree *ct,
			struct ktr_callsort *cs, struct ka_progress *prog, uint64_t *calls)
{
	struct ktr_rec r;
	int rc;

	while (ktr_next(t, &r)) {
		struct ktr_call c;

		ka_progress_rec(prog, &r);
		if (r.kind != KTR_RECORD || r.cls != KTRACE_CLASS_CALL || !ktr_call_decode(t, &r, &c) ||
		    (o->want_call && !o->want_call(o->arg, &c)))
			continue;
		if ((rc = ktr_callsort_add_call(cs, &c, c.key, ktr_ctree_add(ct, &c, c.key, NULL, NULL))) < 0)
			return rc;
		(*calls)++;
	}
	return 0;
}

int ka_folded(struct ktr_trace *t, const struct ka_folded_opts *o,
	      void (*emit)(void *arg, const char *path, uint64_t ns), void *arg, uint64_t *calls)
{
	struct ktr_ctree *ct = ktr_ctree_new();
	struct ktr_callsort *cs = ktr_callsort_new(0, KTR_SORT_THREAD);
	struct ka_progress *prog = ka_progress_start(t, o->cmd, 0);
	struct fold f = { NULL, 0, 0, emit, arg };
	struct fpath p = { .cur_thread = UINT32_MAX };
	struct ktr_callent e;
	int rc = 0;

	if (!ct || !cs) {
		rc = -ENOMEM;
		goto out;
	}
	rc = fold_collect(t, o, ct, cs, prog, calls);
	if (rc < 0)
		goto out;
	ka_progress_end(prog);
	prog = NULL;
	/* calls by thread, then entry time: rebuild each stack with a stack of frames */
	while ((rc = ktr_callsort_next(cs, &e)) > 0) {
		if ((e.thread != p.cur_thread && fpath_thread(&p, t, cs, e.thread) < 0) ||
		    fpath_push(&p, t, o, &e) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		fold_add(&f, p.path, e.local_ns);
	}
	fold_flush(&f);
out:
	ka_progress_end(prog);
	free(f.v);
	free(p.st);
	free(p.path);
	ktr_ctree_free(ct);
	ktr_callsort_free(cs);
	return rc < 0 ? rc : 0;
}

/*
 * analysis/names.c - names for the views: a cache of function names of
 * CALL records by call-site key (the reader's elfutils symbolizer, C++
 * demangled on request), and task names (API in analysis/analysis.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

struct ka_name {
	uint32_t key;
	char *name;
};

struct ka_names {
	struct ktr_trace *t;
	struct ktr_syms *syms;
	struct ka_name *v; /* open addressing, key + name; name NULL = empty */
	size_t size, n;
};

struct ka_names *ka_names_new(struct ktr_trace *t, int demangle)
{
	struct ka_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->t = t;
	n->syms = ktr_syms_new(t);
	if (n->syms)
		ktr_syms_set_demangle(n->syms, demangle);
	return n;
}

static size_t nslot(const struct ka_names *n, uint32_t key)
{
	return (size_t)(key * 2654435761u) & (n->size - 1);
}

static int grow(struct ka_names *n)
{
	size_t size = n->size ? 2 * n->size : 1024;
	struct ka_name *v = calloc(size, sizeof(*v));

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

const char *ka_names_call(struct ka_names *n, const struct ktr_call *c)
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

void ka_names_free(struct ka_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->size; i++)
		free(n->v[i].name);
	free(n->v);
	ktr_syms_free(n->syms);
	free(n);
}

const char *ka_comm(const struct ktr_trace *t, uint32_t tid)
{
	const char *comm = NULL;

	if (tid == 0)
		return "idle";
	if (ktr_thread(t, tid, NULL, &comm) && comm && *comm)
		return comm;
	return "?";
}

int ka_static_slice(const struct ktr_trace *t, const struct ktr_rec *r, char *name, size_t len)
{
	unsigned code = KTRACE_EVENT_CODE(r->id), func = KTRACE_EVENT_FUNC(r->id);
	const char *fn;

	if (r->kind != KTR_RECORD || (r->cls != KTRACE_CLASS_LOG2 && r->cls != KTRACE_CLASS_LOG4) ||
	    (code != 1 && code != 2))
		return 0;
	fn = ktr_func_name(t, func);
	if (fn)
		snprintf(name, len, "%s", fn);
	else
		snprintf(name, len, "F%u", func);
	return code == 1 ? 'B' : 'E';
}

/*
 * analysis/rows.c - a trace's records as rows of the schema that every CSV
 * and JSON row writer shares (struct fmt_row, formats/formats.h; the
 * columns in docs/READING.md): a call with its entry time, duration and
 * self time, an event with its arguments as "name=value;...", a gap with
 * its count and stream.  `ktrace export --format=csv` and `ktrace print -C`
 * both write these rows (API in analysis/analysis.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "formats/formats.h"

struct ka_rows {
	struct ktr_trace *t;
	struct ka_names *names;
	struct ktr_ctree *ct; /* every call, for self times */
	int hex;
	char name[128], args[1024];
};

struct ka_rows *ka_rows_new(struct ktr_trace *t, struct ka_names *names, int hex)
{
	struct ka_rows *x = calloc(1, sizeof(*x));

	if (!x || !(x->ct = ktr_ctree_new())) {
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	x->t = t;
	x->names = names;
	x->hex = hex;
	return x;
}

void ka_rows_free(struct ka_rows *x)
{
	if (!x)
		return;
	ktr_ctree_free(x->ct);
	free(x);
}

/* "depth=D;sig=S;flags=F;func=0xF;site=0xS" without printf (every call). */
static void call_args(char *p, const struct ktr_call *c)
{
	p = fmt_u64_to(stpcpy(p, "depth="), c->depth);
	p = fmt_u64_to(stpcpy(p, ";sig="), c->sig);
	p = fmt_u64_to(stpcpy(p, ";flags="), c->flags);
	p = fmt_hex_to(stpcpy(p, ";func="), c->func);
	p = fmt_hex_to(stpcpy(p, ";site="), c->site);
	*p = 0;
}

int ka_rows_call(struct ka_rows *x, const struct ktr_call *c, struct fmt_row *row)
{
	*row = (struct fmt_row){ (int64_t)c->entry_ns, (int64_t)c->dur_ns,
				 (int64_t)ktr_ctree_add(x->ct, c, 0, NULL, NULL), c->cpu, c->pid, c->tid,
				 ka_comm(x->t, c->tid), "call", ka_names_call(x->names, c), x->args };
	call_args(x->args, c);
	return KA_ROW_CALL;
}

int ka_rows_of(struct ka_rows *x, const struct ktr_rec *r, struct fmt_row *row, struct ktr_call *c)
{
	*row = (struct fmt_row){ (int64_t)r->ns, -1, -1, r->cpu, r->pid, r->tid, "", "", x->name, x->args };
	x->args[0] = 0;
	if (r->kind == KTR_GAP) {
		ktr_rec_name(x->t, r, x->name, sizeof(x->name));
		snprintf(x->args, sizeof(x->args), "count=%" PRIu64 ";stream=%u%s%s", r->count, r->stream,
			 r->what ? ";what=" : "", r->what ? r->what : "");
		row->category = "ktrace";
		return KA_ROW_GAP;
	}
	if (r->cls == KTRACE_CLASS_CALL)
		return ktr_call_decode(x->t, r, c) ? ka_rows_call(x, c, row) : KA_ROW_NONE;
	{
		const char *names[KTRACE_MAX_WORDS], *sys;
		uint64_t vals[KTRACE_MAX_WORDS];
		unsigned n = ktr_rec_args(x->t, r, names, vals);
		size_t len = 0;

		ktr_rec_name(x->t, r, x->name, sizeof(x->name));
		for (unsigned i = 0; i < n && len < sizeof(x->args) - 64; i++) {
			if (ktr_rec_hidden(r) & (1u << i)) /* a kernel address (lkst.h) */
				len += (size_t)snprintf(x->args + len, sizeof(x->args) - len, "%s%s=hidden",
							i ? ";" : "", names[i]);
			else
				len += (size_t)snprintf(x->args + len, sizeof(x->args) - len,
							x->hex ? "%s%s=0x%" PRIx64 : "%s%s=%" PRIu64,
							i ? ";" : "", names[i], vals[i]);
		}
		if ((sys = ka_syscall_name(x->t, r)))
			snprintf(x->args + len, sizeof(x->args) - len, ";syscall=%s", sys);
		row->comm = ka_comm(x->t, r->tid);
		row->category = ktr_rec_category(x->t, r);
	}
	return KA_ROW_EVENT;
}

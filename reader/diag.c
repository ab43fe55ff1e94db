/*
 * reader/diag.c - the reader's diagnostics: one-line messages queued in a
 * small ring until the tool takes them with ktr_diag_next().
 *
 * The ring is bounded (KTR_DIAG_MAX messages) so a badly damaged trace read
 * by a caller that never drains (the fuzz target) cannot grow memory; the
 * overflow is counted and announced once when the caller drains again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "reader/internal.h"

/*
 * ktr_diag() - queue a message; @error != 0 counts it as an error (the
 * tools then exit 1).  Message shape: "FILE: offset N: what" or
 * "FILE:LINE: what".  Out of memory silently drops the text, not the count.
 */
void ktr_diag(struct ktr_trace *t, int error, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	if (error)
		t->nerr++;
	if (t->dcount == KTR_DIAG_MAX) {
		t->suppressed++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg) {
		t->suppressed++;
		return;
	}
	t->diag[(t->dhead + t->dcount) % KTR_DIAG_MAX] = msg;
	t->dcount++;
}

const char *ktr_diag_next(struct ktr_trace *t)
{
	free(t->dlast);
	t->dlast = NULL;
	if (t->dcount) {
		t->dlast = t->diag[t->dhead];
		t->diag[t->dhead] = NULL;
		t->dhead = (t->dhead + 1) % KTR_DIAG_MAX;
		t->dcount--;
		return t->dlast;
	}
	if (t->suppressed) {
		if (asprintf(&t->dlast, "%s: ... %lu more diagnostics suppressed", t->dir,
			     t->suppressed) < 0)
			t->dlast = NULL;
		t->suppressed = 0;
		return t->dlast;
	}
	return t->sub ? ktr_diag_next(t->sub) : NULL; /* then DIR/kernel's (kernel.c) */
}

unsigned long ktr_error_count(const struct ktr_trace *t)
{
	return t->nerr + (t->sub ? ktr_error_count(t->sub) : 0);
}

/* Free every queued message (ktr_close()). */
void ktr_diag_free(struct ktr_trace *t)
{
	while (t->dcount) {
		free(t->diag[t->dhead]);
		t->dhead = (t->dhead + 1) % KTR_DIAG_MAX;
		t->dcount--;
	}
	free(t->dlast);
	t->dlast = NULL;
}

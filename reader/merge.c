/*
 * reader/merge.c - all streams of a trace merged by time.
 *
 * Each stream's cursor keeps one look-ahead item (record or gap); a binary
 * min-heap of stream positions keyed by (raw time, stream position) picks
 * the earliest.  Memory is one item per stream; each item costs O(log n)
 * for n streams.  Raw times of different streams are comparable (one clock
 * per trace), and the raw-to-ns conversion is monotonic, so ordering by raw
 * time is ordering by CLOCK_MONOTONIC.
 */
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static int before(const struct ktr_trace *t, unsigned a, unsigned b)
{
	const struct ktr_rec *x = &t->streams[a].la, *y = &t->streams[b].la;

	if (x->raw != y->raw)
		return x->raw < y->raw;
	return a < b;
}

static void sift_down(struct ktr_trace *t, unsigned i)
{
	unsigned *h = t->heap, n = t->nheap;

	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i, tmp;

		if (l < n && before(t, h[l], h[m]))
			m = l;
		if (r < n && before(t, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void sift_up(struct ktr_trace *t, unsigned i)
{
	unsigned *h = t->heap;

	while (i) {
		unsigned p = (i - 1) / 2, tmp;

		if (!before(t, h[i], h[p]))
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

static int merge_init(struct ktr_trace *t)
{
	free(t->heap);
	t->heap = calloc(t->nstreams ? t->nstreams : 1, sizeof(*t->heap));
	t->nheap = 0;
	if (!t->heap)
		return -1;
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct ktr_stream *s = &t->streams[i];

		s->la_valid = ktr_stream_next(t, i, &s->la);
		if (s->la_valid) {
			t->heap[t->nheap++] = i;
			sift_up(t, t->nheap - 1);
		}
	}
	t->merge_ready = 1;
	return 0;
}

/* ktr_merge_next() - ktr_next() over this trace's own streams (kernel.c adds DIR/kernel). */
int ktr_merge_next(struct ktr_trace *t, struct ktr_rec *r)
{
	struct ktr_stream *s;
	unsigned i;

	if (!t->merge_ready && merge_init(t) < 0)
		return 0;
	if (!t->nheap)
		return 0;
	i = t->heap[0];
	s = &t->streams[i];
	if (t->nstreams == 1 && !s->la_valid) {
		/* one stream: no look-ahead needed, read straight into @r (a
		 * record is ~240 bytes: the copy was a tenth of a call's cost) */
		if (!ktr_stream_next(t, i, r))
			t->nheap = 0;
		return t->nheap != 0;
	}
	*r = s->la;
	if (r->what) {
		strncpy(t->what, r->what, sizeof(t->what) - 1);
		t->what[sizeof(t->what) - 1] = 0;
		r->what = t->what;
	}
	if (t->nstreams == 1) {
		s->la_valid = 0; /* read into @r from now on */
		return 1;
	}
	s->la_valid = ktr_stream_next(t, i, &s->la);
	if (!s->la_valid)
		t->heap[0] = t->heap[--t->nheap];
	if (t->nheap)
		sift_down(t, 0);
	return 1;
}

size_t ktr_next_calls(struct ktr_trace *t, struct ktr_call *c, size_t max, unsigned *stream,
		      uint64_t *offset)
{
	struct ktr_stream *s;
	uint64_t lim = UINT64_MAX;
	unsigned i, j;
	int incl = 1;
	size_t n;

	if (t->sub || !max || t->no_runs || (!t->merge_ready && merge_init(t) < 0) || !t->nheap)
		return 0;
	i = t->heap[0];
	s = &t->streams[i];
	*stream = s->info.index;
	if (t->nstreams == 1)
		return s->la_valid ? 0 : ktr_stream_calls(t, i, c, max, lim, incl, offset);
	/* the earliest stream's look-ahead, if a call, then its records up to
	 * the next stream's look-ahead: the order of ktr_merge_next() */
	if (s->la.kind != KTR_RECORD || s->la.cls != KTRACE_CLASS_CALL || s->la.what ||
	    !ktr_call_decode(t, &s->la, &c[0]))
		return 0;
	*offset = s->la.offset;
	if (t->nheap > 1) {
		j = t->nheap > 2 && before(t, t->heap[2], t->heap[1]) ? t->heap[2] : t->heap[1];
		lim = t->streams[j].la.raw;
		incl = i < j;
	}
	n = 1 + ktr_stream_calls(t, i, c + 1, max - 1, lim, incl, offset);
	s->la_valid = ktr_stream_next(t, i, &s->la);
	if (!s->la_valid)
		t->heap[0] = t->heap[--t->nheap];
	if (t->nheap)
		sift_down(t, 0);
	return n;
}

void ktr_rewind(struct ktr_trace *t)
{
	for (unsigned i = 0; i < t->nstreams; i++)
		ktr_stream_reset(&t->streams[i]);
	t->merge_ready = 0;
	t->nheap = 0;
	ktr_sub_rewind(t);
}

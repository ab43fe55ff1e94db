/*
 * reader/losses.c - where a trace is missing records, from its index alone:
 * each sub-buffer's `lost` count (a writer could not store records after
 * it: a full buffer, or the consumer of `ktrace record` was behind),
 * sequence numbers missing between sub-buffers (flight-recorder overwrite),
 * and drops the control file counts beyond those.  Every stretch is given
 * the time range it covers: from the last record before it to the first
 * one after it, in CLOCK_MONOTONIC ns.  The tools print these ranges
 * (ktr_losses()), so a profile with holes in it says where they are.
 */
#include <string.h>

#include "reader/internal.h"

/* Raw time of the first record of index entry @e of @s (its first_ts if none). */
static uint64_t first_raw(const struct ktr_stream *s, const struct ktr_sb *e)
{
	struct ktrace_subbuf h;

	memcpy(&h, s->f.p + ktr_sb_hdr(e), sizeof(h));
	return h.first_ts;
}

static void add(struct ktr_loss *out, size_t max, size_t *n, uint64_t *total,
		const struct ktr_trace *t, unsigned stream, enum ktr_gap gap, uint64_t count,
		uint64_t from_raw, uint64_t to_raw, int have_to)
{
	if (!count)
		return;
	if (*n < max) {
		struct ktr_loss *l = &out[*n];

		l->stream = stream;
		l->gap = gap;
		l->count = count;
		l->from_ns = from_raw ? ktr_raw_to_ns(t, from_raw) : 0;
		l->to_ns = have_to ? ktr_raw_to_ns(t, to_raw) : 0;
	}
	(*n)++;
	if (gap != KTR_GAP_OVERWRITTEN)
		*total += count;
}

static void stream_losses(const struct ktr_trace *t, const struct ktr_stream *s,
			  struct ktr_loss *out, size_t max, size_t *n, uint64_t *total)
{
	uint64_t last = 0, lost_sum = 0, expect = s->seq_base;
	int have_prev = 0;

	for (size_t i = 0; i < s->nsb; i++) {
		const struct ktr_sb *e = &s->sb[i];
		struct ktrace_subbuf h;

		if (!s->f.p)
			continue;
		if (e->corrupt) { /* shown where it is (a CORRUPT gap), not as overwritten */
			if (e->seq + 1 > expect)
				expect = e->seq + 1;
			continue;
		}
		memcpy(&h, s->f.p + ktr_sb_hdr(e), sizeof(h));
		if (e->seq > expect && (have_prev || e->seq > 0))
			add(out, max, n, total, t, s->info.index, KTR_GAP_OVERWRITTEN, e->seq - expect,
			    last, h.first_ts, 1);
		expect = e->seq + 1;
		have_prev = 1;
		last = h.last_ts ? h.last_ts : h.first_ts;
		if (h.lost) {
			const struct ktr_sb *next = NULL;

			for (size_t k = i + 1; k < s->nsb && !next; k++)
				if (!s->sb[k].corrupt)
					next = &s->sb[k];
			add(out, max, n, total, t, s->info.index, KTR_GAP_LOST, h.lost, last,
			    next ? first_raw(s, next) : 0, next != NULL);
			lost_sum += h.lost;
		}
	}
	if (s->info.have_ctl && s->info.dropped > lost_sum)
		add(out, max, n, total, t, s->info.index, KTR_GAP_DROPPED, s->info.dropped - lost_sum,
		    last, 0, 0);
}

size_t ktr_losses(const struct ktr_trace *t, struct ktr_loss *out, size_t max, uint64_t *records)
{
	uint64_t total = 0;
	size_t n = 0;

	for (unsigned i = 0; i < t->nstreams; i++)
		stream_losses(t, &t->streams[i], out, max, &n, &total);
	if (t->sub) {
		uint64_t sub_total = 0;
		size_t k = ktr_losses(t->sub, n < max ? out + n : NULL, n < max ? max - n : 0, &sub_total);

		n += k;
		total += sub_total;
	}
	if (records)
		*records = total;
	return n;
}

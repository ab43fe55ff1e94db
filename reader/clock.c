/*
 * reader/clock.c - raw timestamps to CLOCK_MONOTONIC nanoseconds
 * (docs/FORMAT.md, "Clock").
 *
 * `clock mono` traces are already in nanoseconds.  `clock tsc` traces are
 * converted through calibration pairs (raw, ns): the metadata's `calib`
 * lines plus every valid sub-buffer header's (first_ts, first_ns).  Sorted
 * by raw value, a raw time is interpolated linearly between the two pairs
 * around it and extrapolated with the nearest segment's slope outside.
 *
 * Pairs from sub-buffer headers are read a few nanoseconds apart by the
 * writer, so two pairs close together can disagree; a pair whose ns does
 * not increase with raw is dropped, which keeps the conversion monotonic
 * (a merged trace never goes back in time).
 */
#include <stdint.h>
#include <stdlib.h>

#include "reader/internal.h"

/* ktr_add_pair() - add a calibration pair (ns 0 means "unknown": ignored). */
void ktr_add_pair(struct ktr_trace *t, uint64_t raw, uint64_t ns)
{
	if (!ns)
		return;
	if (t->ncalib == t->capcalib) {
		size_t cap = t->capcalib ? 2 * t->capcalib : 64;
		struct ktr_pair *n = realloc(t->calib, cap * sizeof(*n));

		if (!n)
			return;
		t->calib = n;
		t->capcalib = cap;
	}
	t->calib[t->ncalib].raw = raw;
	t->calib[t->ncalib].ns = ns;
	t->ncalib++;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct ktr_pair *x = a, *y = b;

	if (x->raw != y->raw)
		return x->raw < y->raw ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/*
 * ktr_calib_finish() - sort the pairs by raw value and keep the longest
 * subsequence whose ns strictly increase (an O(n log n) longest increasing
 * subsequence), so one bad pair (a damaged header, a writer preempted
 * between its two clock reads) costs that pair, not the calibration.  Warn
 * when fewer than two pairs remain for a TSC trace.
 */
void ktr_calib_finish(struct ktr_trace *t)
{
	size_t n = 0, len = 0, *tail = NULL, *prev = NULL;
	struct ktr_pair *c = t->calib;

	if (t->ncalib > 1)
		qsort(c, t->ncalib, sizeof(*c), cmp_pair);
	/* equal raw values: keep the first */
	for (size_t i = 0; i < t->ncalib; i++)
		if (!n || c[i].raw != c[n - 1].raw)
			c[n++] = c[i];
	if (n > 1) {
		tail = malloc(n * sizeof(*tail)); /* tail[k]: index ending the best run of k+1 */
		prev = malloc(n * sizeof(*prev));
	}
	if (tail && prev) {
		for (size_t i = 0; i < n; i++) {
			size_t lo = 0, hi = len;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (c[tail[mid]].ns < c[i].ns)
					lo = mid + 1;
				else
					hi = mid;
			}
			prev[i] = lo ? tail[lo - 1] : SIZE_MAX;
			tail[lo] = i;
			if (lo == len)
				len++;
		}
		/* the run's indexes, oldest first, into tail[]; then compact
		 * (tail[k] >= k and increasing, so c[tail[k]] is still unread) */
		for (size_t k = len, i = tail[len - 1]; k > 0; k--, i = prev[i])
			tail[k - 1] = i;
		for (size_t k = 0; k < len; k++)
			c[k] = c[tail[k]];
		n = len;
	}
	free(tail);
	free(prev);
	t->ncalib = n;
	t->info.ncalib = (unsigned)n;
	free(t->slope);
	t->slope = n > 1 ? malloc((n - 1) * sizeof(*t->slope)) : NULL;
	for (size_t i = 0; t->slope && i + 1 < n; i++) {
		struct ktr_slope *s = &t->slope[i];
		uint64_t dn = c[i + 1].ns - c[i].ns;

		s->dr = c[i + 1].raw - c[i].raw; /* > 0: raw values are distinct */
		s->whole = dn / s->dr;
		s->frac = dn % s->dr;
		s->recip = (uint64_t)(((unsigned __int128)s->frac << 64) / s->dr);
	}
	if (t->info.clock_tsc && n < 2 && t->nstreams)
		ktr_diag(t, 0, "%s: warning: %s calibration pair%s; times assume 1 tick = 1 ns%s",
			 t->dir, n ? "only one" : "no", n ? "" : "s",
			 n ? " from it" : " (raw values printed)");
}

/* ns at @raw on the line through pairs @a and @b (signed, may be < 0). */
static __int128 line(const struct ktr_pair *a, const struct ktr_pair *b, uint64_t raw)
{
	__int128 dr = (__int128)b->raw - a->raw, dn = (__int128)b->ns - a->ns;
	__int128 dx = (__int128)raw - a->raw;
	const __int128 big = (__int128)1 << 62;

	if (dr == 0)
		return a->ns;
	if (dx >= 0 && dx < ((__int128)1 << 32) && dn >= 0 && dn < ((__int128)1 << 32) && dr > 0)
		return (__int128)a->ns + (__int128)((uint64_t)dx * (uint64_t)dn / (uint64_t)dr);

	if (dx > big || dx < -big || dn > big) { /* only absurd values: avoid overflow */
		long double v = (long double)dx * (long double)dn / (long double)dr;

		if (v > 1e30L)
			v = 1e30L;
		if (v < -1e30L)
			v = -1e30L;
		return (__int128)a->ns + (__int128)v;
	}
	return (__int128)a->ns + dx * dn / dr;
}

/* ns at @raw on the line through pairs @i and @i + 1. */
static __int128 segment(const struct ktr_trace *t, size_t i, uint64_t raw)
{
	__int128 v = t->slope ? ktr_line_fast(t, i, raw) : -1;

	return v >= 0 ? v : line(&t->calib[i], &t->calib[i + 1], raw);
}

/*
 * ktr_raw_to_ns_hint() - ktr_raw_to_ns() remembering in *@hint the
 * calibration segment it used: consecutive times of one stream mostly fall
 * in the same segment, which then costs no binary search.  The result is
 * the same as ktr_raw_to_ns()'s; *@hint may hold any value (SIZE_MAX: none).
 */
uint64_t ktr_raw_to_ns_hint(const struct ktr_trace *t, uint64_t raw, size_t *hint)
{
	const struct ktr_pair *c = t->calib;
	size_t n = t->ncalib, lo, hi;
	__int128 v;

	if (!t->info.clock_tsc || n == 0)
		return raw;
	if (n == 1) {
		v = (__int128)c[0].ns + ((__int128)raw - c[0].raw);
	} else if (raw <= c[0].raw) {
		v = line(&c[0], &c[1], raw);
	} else if (raw >= c[n - 1].raw) {
		v = segment(t, n - 2, raw);
	} else if (*hint < n - 1 && c[*hint].raw < raw && raw <= c[*hint + 1].raw) {
		v = segment(t, *hint, raw);
	} else {
		/* c[lo].raw < raw <= c[hi].raw */
		lo = 0;
		hi = n - 1;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (c[mid].raw < raw)
				lo = mid;
			else
				hi = mid;
		}
		*hint = lo;
		v = segment(t, lo, raw);
	}
	if (v < 0)
		return 0;
	if (v > (__int128)UINT64_MAX)
		return UINT64_MAX;
	return (uint64_t)v;
}

uint64_t ktr_raw_to_ns(const struct ktr_trace *t, uint64_t raw)
{
	size_t hint = SIZE_MAX;

	return ktr_raw_to_ns_hint(t, raw, &hint);
}

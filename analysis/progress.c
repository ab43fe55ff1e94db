/*
 * analysis/progress.c - the progress line of long reads and exports (API in
 * analysis/analysis.h).  Stream positions are kept in a small table indexed by
 * the stream's position in the trace (application streams first, then the
 * kernel sub-trace's), found from ktr_rec.stream by a lookup table.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"

#define CHECK_EVERY 65536u

struct pstream {
	unsigned index; /* ktr_rec.stream */
	uint64_t size, pos;
};

struct ka_progress {
	const char *cmd;
	struct pstream *s;
	unsigned n;
	uint64_t total, recs;
	unsigned count;
	double t0, last;
	int shown, tty, forced;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add_streams(struct ka_progress *p, const struct ktr_trace *t)
{
	for (unsigned i = 0; i < ktr_info(t)->nstreams; i++) {
		const struct ktr_stream_info *si = ktr_stream(t, i);
		struct pstream *n;
		struct stat st;

		if (!si || stat(si->path, &st) < 0)
			continue;
		n = realloc(p->s, (p->n + 1) * sizeof(*n));
		if (!n)
			return;
		p->s = n;
		n[p->n].index = si->index;
		n[p->n].size = (uint64_t)st.st_size;
		n[p->n].pos = 0;
		p->total += (uint64_t)st.st_size;
		p->n++;
	}
}

struct ka_progress *ka_progress_start(const struct ktr_trace *t, const char *cmd, int to_stdout)
{
	const char *env = getenv("KTRACE_PROGRESS");
	struct ka_progress *p;

	if (env && *env == '0')
		return NULL;
	if (!(env && *env == '1') && (!isatty(2) || (to_stdout && isatty(1))))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cmd = cmd;
	add_streams(p, t);
	if (ktr_kernel(t))
		add_streams(p, ktr_kernel(t));
	p->t0 = p->last = now();
	p->tty = isatty(2);
	p->forced = env && *env == '1';
	return p;
}

static void show(struct ka_progress *p, double t)
{
	uint64_t done = 0;
	double rate = t > p->t0 ? p->recs / (t - p->t0) : 0;

	for (unsigned i = 0; i < p->n; i++)
		done += p->s[i].pos;
	fprintf(stderr, "%sktrace %s: %3.0f%% %.1fM records, %.1fM records/s%s",
		p->tty ? "\r" : "", p->cmd, p->total ? 100.0 * done / p->total : 0.0, p->recs / 1e6,
		rate / 1e6, p->tty ? "  " : "\n");
	p->shown = 1;
}

void ka_progress_recs(struct ka_progress *p, unsigned stream, uint64_t offset, uint64_t n)
{
	double t;

	if (!p)
		return;
	p->recs += n;
	for (unsigned i = 0; i < p->n; i++)
		if (p->s[i].index == stream) {
			if (offset > p->s[i].pos)
				p->s[i].pos = offset < p->s[i].size ? offset : p->s[i].size;
			break;
		}
	p->count += (unsigned)n;
	if (p->count < CHECK_EVERY)
		return;
	p->count = 0;
	t = now();
	if (t - p->last >= 0.5) {
		p->last = t;
		show(p, t);
	}
}

void ka_progress_rec(struct ka_progress *p, const struct ktr_rec *r)
{
	/* a gap is counted, without a position */
	ka_progress_recs(p, r->kind == KTR_RECORD ? r->stream : UINT_MAX, r->offset, 1);
}

void ka_progress_end(struct ka_progress *p)
{
	if (!p)
		return;
	if (p->forced && !p->tty) {
		for (unsigned i = 0; i < p->n; i++)
			p->s[i].pos = p->s[i].size;
		show(p, now());
	}
	if (p->shown && p->tty)
		fprintf(stderr, "\r%*s\r", 72, "");
	free(p->s);
	free(p);
}

/*
 * reader/kernel.c - the kernel sub-trace: DIR/kernel, written by
 * `ktrace record --kernel` (kclient/tracefs_record.c) beside a program's
 * own trace, merged with it into one timeline (docs/FORMAT.md, "The kernel sub-trace").
 *
 * When DIR/kernel/metadata exists, ktr_open() opens DIR/kernel as a trace of
 * its own (clock mono, per-CPU streams of KEVENT records) and ktr_next()
 * returns the records of both by CLOCK_MONOTONIC nanoseconds: a two-way merge
 * of the application trace's own k-way merge and the sub-trace's, with one
 * look-ahead record each (ties go to the application's record).  The two raw
 * clocks differ (TSC and ns), so the merge compares ns, which both convert to.
 *
 * The sub-trace's streams are numbered from KTR_KERNEL_STREAM (its cpuN is
 * stream KTR_KERNEL_STREAM + N) so a record's stream never collides with the
 * application's; ktr_info()->nstreams and ktr_stream() count the
 * application's streams only, ktr_kernel() gives the sub-trace itself.
 * Names (catalogue, threads), diagnostics and error counts fall through to
 * the sub-trace where the application's trace has nothing.
 *
 * A directory holding only kernel/ (`ktrace record --kernel` without a
 * program) is a valid trace: its info is the sub-trace's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

/*
 * ktr_sub_open() - open DIR/kernel into t->sub when it exists (not for a
 * sub-trace itself: no nesting).  In-memory traces (ktr_open_mem()) give it
 * as files named "kernel/NAME".
 */
void ktr_sub_open(struct ktr_trace *t)
{
	if (t->is_sub || ktr_file_refused(t, "kernel") || !ktr_file_exists(t, "kernel/metadata"))
		return;
	if (t->mfiles) {
		size_t n = 0;

		t->sub_mfiles = calloc(t->nmfiles ? t->nmfiles : 1, sizeof(*t->sub_mfiles));
		if (!t->sub_mfiles)
			return;
		for (size_t i = 0; i < t->nmfiles; i++)
			if (t->mfiles[i].name && !strncmp(t->mfiles[i].name, "kernel/", 7) &&
			    t->mfiles[i].name[7]) {
				t->sub_mfiles[n] = t->mfiles[i];
				t->sub_mfiles[n++].name += 7;
			}
		t->sub = ktr_open_sub(t->dir, t->sub_mfiles, n);
	} else {
		t->sub = ktr_open_sub(t->dir, NULL, 0);
	}
	if (!t->sub)
		return;
	for (unsigned i = 0; i < t->sub->nstreams; i++)
		t->sub->streams[i].info.index = KTR_KERNEL_STREAM + t->sub->streams[i].index;
	if (t->kernel_only) {
		unsigned n = t->info.nstreams;

		t->info = t->sub->info;
		t->info.nstreams = n;
	}
}

const struct ktr_trace *ktr_kernel(const struct ktr_trace *t)
{
	return t->sub;
}

int ktr_next(struct ktr_trace *t, struct ktr_rec *r)
{
	int pick;

	if (!t->sub)
		return ktr_merge_next(t, r);
	/* 0: refill, 1: valid, 2: exhausted */
	if (t->la_state[0] == 0)
		t->la_state[0] = ktr_merge_next(t, &t->la2[0]) ? 1 : 2;
	if (t->la_state[1] == 0)
		t->la_state[1] = ktr_next(t->sub, &t->la2[1]) ? 1 : 2;
	if (t->la_state[0] == 1 && t->la_state[1] == 1)
		pick = t->la2[1].ns < t->la2[0].ns;
	else if (t->la_state[0] == 1)
		pick = 0;
	else if (t->la_state[1] == 1)
		pick = 1;
	else
		return 0;
	*r = t->la2[pick];
	t->la_state[pick] = 0;
	return 1;
}

/* ktr_sub_rewind() - restart the merge with the sub-trace (ktr_rewind()). */
void ktr_sub_rewind(struct ktr_trace *t)
{
	t->la_state[0] = t->la_state[1] = 0;
	if (t->sub)
		ktr_rewind(t->sub);
}

/* ktr_sub_close() - close the sub-trace (ktr_close()). */
void ktr_sub_close(struct ktr_trace *t)
{
	ktr_close(t->sub);
	t->sub = NULL;
	free(t->sub_mfiles);
	t->sub_mfiles = NULL;
}

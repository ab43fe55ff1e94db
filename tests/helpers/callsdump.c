/*
 * tests/helpers/callsdump.c - every call and other record of a trace, one
 * line each, read two ways (tests/reader_bulk.sh):
 *
 *   callsdump slow DIR   ktr_next() and ktr_call_decode() for each record
 *   callsdump bulk DIR   ktr_next_calls() for runs of calls, ktr_next() for
 *                        whatever comes between them
 *
 * The two outputs must be identical: ktr_next_calls() promises the calls,
 * field for field and in order, that the record-at-a-time path gives.
 * bulk prints on stderr how many calls came in runs ("bulk N of M").
 *
 *   callsdump depths DIR  per sub-buffer of each stream (ktr_subbuf_at()):
 *                        "S STREAM I DEPTH_MIN MIN", the index's smallest
 *                        call depth and the one its records have (-1: none),
 *                        its records told apart by their count
 *   callsdump window FROM TO DIR   the records ktr_next() gives with the
 *                        window [FROM, TO] ns set (ktr_set_window()), and on
 *                        stderr "skipped N": the sub-buffers it skipped
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

static void put_call(const struct ktr_call *c)
{
	printf("C %" PRIu32 " %" PRIu32 " %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIx64 " %" PRIx64
	       " %" PRIu32 " %" PRIu32 " %u %u %u\n",
	       c->tid, c->pid, c->cpu, c->entry_ns, c->exit_ns, c->dur_ns, c->dur_raw, c->func, c->site, c->key,
	       c->index, c->depth, c->sig, c->flags);
}

/* One record of ktr_next(): a call, or what it is. */
static void put_rec(struct ktr_trace *t, const struct ktr_rec *r)
{
	struct ktr_call c;

	if (ktr_call_decode(t, r, &c)) {
		put_call(&c);
		return;
	}
	printf("R %d %u %" PRIu64 " %u %u %u %u %d %" PRIu64 "\n", (int)r->kind, r->stream, r->ns, r->tid, r->cls,
	       r->id, r->nwords, (int)r->gap, r->count);
}

int main(int argc, char **argv)
{
	struct ktr_trace *t;
	struct ktr_call c[333]; /* not a power of two: runs end anywhere */
	struct ktr_rec r;
	uint64_t bulk = 0, calls = 0;

	if (argc == 3 && !strcmp(argv[1], "depths")) {
		if (!(t = ktr_open(argv[2]))) {
			perror(argv[2]);
			return 1;
		}
		for (unsigned s = 0; s < ktr_info(t)->nstreams; s++)
			for (size_t i = 0; i < ktr_subbuf_count(t, s); i++) {
				struct ktr_subbuf_info in;
				int min = -1;

				ktr_subbuf_at(t, s, i, &in);
				for (uint32_t left = in.records; left && ktr_stream_next(t, s, &r);) {
					if (r.kind != KTR_RECORD)
						continue;
					left--;
					if (r.cls == KTRACE_CLASS_CALL && r.nwords >= 1 &&
					    (min < 0 || (int)KTRACE_CALL_DEPTH(r.w[0]) < min))
						min = (int)KTRACE_CALL_DEPTH(r.w[0]);
				}
				printf("S %u %zu %d %d\n", s, i, in.depth_min, min);
			}
		ktr_close(t);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 5 && !strcmp(argv[1], "window")) {
		if (!(t = ktr_open(argv[4]))) {
			perror(argv[4]);
			return 1;
		}
		ktr_set_window(t, strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
		while (ktr_next(t, &r))
			put_rec(t, &r);
		fprintf(stderr, "skipped %" PRIu64 "\n", ktr_window_skipped(t));
		ktr_close(t);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc != 3 || (strcmp(argv[1], "slow") && strcmp(argv[1], "bulk"))) {
		fprintf(stderr, "usage: callsdump slow|bulk DIR, or callsdump window FROM TO DIR\n");
		return 2;
	}
	if (!(t = ktr_open(argv[2]))) {
		perror(argv[2]);
		return 1;
	}
	for (;;) {
		if (argv[1][0] == 'b') {
			unsigned stream;
			uint64_t off;
			size_t n = ktr_next_calls(t, c, sizeof(c) / sizeof(c[0]), &stream, &off);

			for (size_t i = 0; i < n; i++)
				put_call(&c[i]);
			bulk += n;
			calls += n;
			if (n)
				continue;
		}
		if (!ktr_next(t, &r))
			break;
		calls += r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_CALL;
		put_rec(t, &r);
	}
	if (argv[1][0] == 'b')
		fprintf(stderr, "bulk %" PRIu64 " of %" PRIu64 "\n", bulk, calls);
	ktr_close(t);
	return fflush(stdout) ? 1 : 0;
}

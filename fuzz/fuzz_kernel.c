/*
 * fuzz/fuzz_kernel.c - libFuzzer target for the kernel sub-trace: an
 * application trace with a DIR/kernel beside it (reader/kernel.c: the
 * second open, the two-way merge by ns, names and diagnostics falling
 * through), KEVENT decoding (word 0 task, arguments after it) and the
 * scheduling-state follower built on them (reader/sched.c: intervals,
 * off-CPU sums and their queries), all from one input buffer.
 *
 * Input: sections of one byte naming the file (index into kfiles[], modulo
 * its size), a 3-byte little-endian length and that many bytes, as
 * fuzz_reader's format (fuzz/fuzz_reader.h) with this target's file list.
 * fuzz/seed_fuzz_kernel.sh writes seeds.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"
#include "reader/sched.h"

static const char *const kfiles[] = {
	"metadata", "trace0", "threads", "kernel/metadata", "kernel/cpu0", "kernel/cpu1", "kernel/threads",
};
#define NK (sizeof(kfiles) / sizeof(kfiles[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t sink;

static void on_iv(void *arg, const struct ktr_sched_iv *iv)
{
	(void)arg;
	sink += iv->end_ns - iv->start_ns + iv->tid;
}

static void on_off(void *arg, const struct ktr_offcpu *o)
{
	(void)arg;
	sink += o->out_ns ^ o->in_ns ^ o->wake_ns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ktr_memfile files[NK];
	int seen[NK] = { 0 };
	size_t n = 0, off = 0;
	struct ktr_trace *t;
	struct ktr_sched *s;
	struct ktr_rec r;
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS], first = 0, last = 0, nsw, blk;
	uint32_t tids[8] = { 0 };
	unsigned ntids = 0;
	char name[128];

	while (off + 4 <= size) {
		unsigned f = data[off] % NK;
		size_t len = data[off + 1] | (size_t)data[off + 2] << 8 | (size_t)data[off + 3] << 16;

		off += 4;
		if (len > size - off)
			len = size - off;
		if (!seen[f]) {
			seen[f] = 1;
			files[n].name = kfiles[f];
			files[n].data = data + off;
			files[n].size = len;
			n++;
		}
		off += len;
	}
	t = ktr_open_mem("fuzz", files, n);
	if (!t)
		return 0;
	s = ktr_sched_new(KTR_SCHED_OFFCPU, on_iv, NULL);
	while (s && ktr_next(t, &r)) {
		unsigned k = ktr_rec_args(t, &r, names, vals);

		for (unsigned i = 0; i < k; i++)
			sink += strlen(names[i]) + vals[i];
		sink += strlen(ktr_rec_name(t, &r, name, sizeof(name))) + strlen(ktr_rec_category(t, &r));
		sink += ktr_rec_hidden(&r) + (ktr_rec_comm(&r, name, sizeof(name)) ? strlen(name) : 0);
		if (!first)
			first = r.ns;
		last = r.ns;
		ktr_sched_feed(s, t, &r);
		if (r.kind == KTR_RECORD && r.tid && ntids < 8)
			tids[ntids++] = r.tid;
		while (ktr_diag_next(t))
			;
	}
	if (s) {
		for (unsigned i = 0; i < ntids; i++) {
			sink += ktr_sched_offcpu(s, tids[i], first, last, &nsw, &blk) + nsw + blk;
			sink += ktr_sched_offcpu(s, tids[i], last, first, NULL, NULL);
			sink += ktr_sched_offcpu_each(s, tids[i], first, last, on_off, NULL);
			sink += ktr_sched_state(s, tids[i]);
		}
		ktr_sched_finish(s, last);
		ktr_sched_free(s);
	}
	ktr_rewind(t);
	while (ktr_next(t, &r))
		sink += r.ns;
	if (ktr_kernel(t))
		sink += ktr_info(ktr_kernel(t))->nstreams;
	while (ktr_diag_next(t))
		;
	sink += ktr_error_count(t);
	ktr_close(t);
	return 0;
}

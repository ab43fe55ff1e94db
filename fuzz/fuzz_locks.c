/*
 * fuzz/fuzz_locks.c - libFuzzer target for `ktrace locks`' analysis
 * (analysis/locks.c): a trace with lock events (LOG2, function 0xfd, the
 * catalogue's category "locks") in two thread streams and a kernel
 * sub-trace with contention events, all from one input buffer, fed to
 * ka_locks_*() as the command does; findings and the sorted times table
 * are read back.  Catches what arbitrary event orders do to the model
 * (releases of locks never taken, unmatched contention ends, huge
 * nesting, ids of unknown ops).
 *
 * Input: sections of one byte naming the file (index into lfiles[], modulo
 * its size), a 3-byte little-endian length and that many bytes, as
 * fuzz_reader's format (fuzz/fuzz_reader.h) with this target's file list.
 * fuzz/seed_fuzz_locks.sh writes seeds.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "reader/reader.h"

static const char *const lfiles[] = {
	"metadata", "trace0", "trace1", "threads", "kernel/metadata", "kernel/cpu0",
};
#define NL (sizeof(lfiles) / sizeof(lfiles[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ktr_memfile files[NL];
	int seen[NL] = { 0 };
	size_t n = 0, off = 0, nf, nst;
	struct ktr_trace *t;
	struct ka_locks *l;
	struct ktr_rec r;
	const struct ka_lock_finding *f;
	const struct ka_lock_stat *st;
	uint64_t a, k, g;

	while (off + 4 <= size) {
		unsigned i = data[off] % NL;
		size_t len = data[off + 1] | (size_t)data[off + 2] << 8 | (size_t)data[off + 3] << 16;

		off += 4;
		if (len > size - off)
			len = size - off;
		if (!seen[i]) {
			seen[i] = 1;
			files[n].name = lfiles[i];
			files[n].data = data + off;
			files[n].size = len;
			n++;
		}
		off += len;
	}
	t = ktr_open_mem("fuzz", files, n);
	if (!t)
		return 0;
	l = ka_locks_new(t);
	if (l) {
		while (ktr_next(t, &r))
			if (ka_locks_feed(l, &r) < 0)
				break;
		ka_locks_end(l);
		f = ka_locks_findings(l, &nf);
		for (size_t i = 0; i < nf; i++)
			sink += f[i].lock ^ f[i].site ^ f[i].site2 ^ f[i].count;
		st = ka_locks_stats(l, &nst);
		for (size_t i = 0; i < nst; i++)
			sink += st[i].hold_max + st[i].wait_total;
		ka_locks_counts(l, &a, &k, &g);
		sink += a + k + g;
	}
	ka_locks_free(l);
	while (ktr_diag_next(t))
		;
	ktr_close(t);
	return 0;
}

/*
 * fuzz/fuzz_reader.c - libFuzzer target for the trace reader: metadata and
 * threads parsing, control-file validation, sub-buffer indexing and record
 * decoding, the merge, a --time-range window (ktr_set_window()), the
 * calls streamed in entry order (ktr_preorder_next()), and naming, all
 * from one input buffer
 * (fuzz/fuzz_reader.h describes its format) through ktr_open_mem().
 * The metadata's size bounds are checked too: fuzz/Makefile builds the
 * reader with KTR_MAX_STREAMS and KTR_MAX_MAPS of 64, and whatever the
 * input, no more streams, map or map-gen lines than that may come out
 * (abort() otherwise), and ktr_map_pick() gives map-gen lines only;
 * seed_fuzz_reader.sh gives seeds with more lines than that.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_reader.h"
#include "reader/internal.h" /* KTR_MAX_STREAMS, KTR_MAX_MAPS */
#include "reader/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ktr_memfile files[FUZZ_NFILES];
	int seen[FUZZ_NFILES] = { 0 };
	size_t n = 0, off = 0;
	struct ktr_trace *t;
	struct ktr_rec r;
	static uint8_t map[65536];
	char name[128];
	const char *names[KTRACE_MAX_WORDS];
	uint64_t vals[KTRACE_MAX_WORDS], sum = 0, lo = UINT64_MAX, hi = 0;

	while (off + 4 <= size) {
		unsigned f = data[off] % FUZZ_NFILES;
		size_t len = data[off + 1] | (size_t)data[off + 2] << 8 | (size_t)data[off + 3] << 16;

		off += 4;
		if (len > size - off)
			len = size - off;
		if (!seen[f]) {
			seen[f] = 1;
			files[n].name = fuzz_files[f];
			files[n].data = data + off;
			files[n].size = len;
			n++;
		}
		off += len;
	}
	t = ktr_open_mem("fuzz", files, n);
	if (!t)
		return 0;
	/* the bounds hold whatever the metadata says (stream files: 8 at most here) */
	if (ktr_info(t)->nstreams > KTR_MAX_STREAMS || ktr_map_at(t, 2 * KTR_MAX_MAPS) != NULL)
		abort();
	for (size_t i = 0, gen = 0; ktr_map_at(t, i); i++) /* as many map-gen lines */
		if (ktr_map_at(t, i)->timed && ++gen > KTR_MAX_MAPS)
			abort();
	ktr_syms_free(ktr_syms_new(t)); /* the map lines grouped into objects (no file opened) */
	for (size_t i = 0; i < 4 && ktr_map_at(t, i); i++) { /* loads picked by time */
		const struct ktr_map *m = ktr_map_at(t, i);
		int amb;
		size_t p = ktr_map_pick(t, m->start, m->load_ns + 1, &amb);

		if (p != SIZE_MAX && (!ktr_map_at(t, p) || !ktr_map_at(t, p)->timed))
			abort();
		sum += p + (size_t)amb + ktr_map_pick(t, m->end, UINT64_MAX, NULL);
	}
	while (ktr_next(t, &r)) {
		unsigned k = ktr_rec_args(t, &r, names, vals);
		struct ktr_call c;

		if (ktr_call_decode(t, &r, &c))
			sum += c.func + c.site + c.key;

		ktr_rec_name(t, &r, name, sizeof(name));
		sum += strlen(ktr_rec_category(t, &r)) + strlen(name) + r.ns;
		lo = r.ns < lo ? r.ns : lo;
		hi = r.ns > hi ? r.ns : hi;
		for (unsigned i = 0; i < k; i++)
			sum += strlen(names[i]) + vals[i];
		while (ktr_diag_next(t))
			;
	}
	ktr_rewind(t); /* the middle third of the records' times, the rest skipped by headers */
	ktr_set_window(t, lo + (hi - lo) / 3, hi - (hi - lo) / 3);
	while (ktr_next(t, &r))
		sum += r.ns;
	while (ktr_diag_next(t))
		;
	{ /* the calls in entry order, streamed where the trace allows (reader/preorder.c) */
		struct ktr_callsort *cs = ktr_callsort_new(1u << 20, KTR_SORT_THREAD);
		struct ktr_preorder *pre = cs ? ktr_preorder_new(t, cs, NULL, NULL, NULL) : NULL;
		struct ktr_callent e;

		for (int i = 0; pre && i < 100000 && ktr_preorder_next(pre, &e) > 0; i++)
			sum += e.entry_ns + e.depth;
		ktr_preorder_free(pre);
		ktr_callsort_free(cs);
		while (ktr_diag_next(t))
			;
	}
	ktr_rewind(t);
	for (unsigned s = 0; s < ktr_info(t)->nstreams && s < 2; s++)
		while (ktr_stream_next(t, s, &r))
			sum += r.raw;
	ktr_resolve_events(t, "parse:*", map);
	ktr_resolve_events(t, "request", map);
	ktr_resolve_events(t, "F1:E17", map);
	for (size_t i = 0; i < 2; i++) {
		uint32_t tid, pid;
		const char *comm;

		if (ktr_thread_at(t, i, &tid, &pid, &comm))
			sum += strlen(comm) + pid;
	}
	while (ktr_diag_next(t))
		;
	ktr_close(t);
	return sum == 42 ? 0 : 0; /* sum keeps the calls from being optimised away */
}

/*
 * fuzz/fuzz_callsites.c - libFuzzer target for the reader's function-call
 * side: the `callsites` file parser (reader/calls.c: header checks,
 * truncation, invalid entries), the KFT run header read for the time
 * origin (DIR/kft), the kernel symbol file (DIR/kallsyms, reader/symbols.c),
 * CALL record decoding (index split between header id
 * and payload, long durations, inline addresses, depth/signal/flags), the
 * call-tree builder (reader/calltree.c) and the call sorter
 * (reader/callsort.c).
 *
 * Input: byte 0 = number of CALL records (at most 96), byte 1 = options
 * (bit 0: a valid DIR/kft with the origin taken from the input, bit 1: a
 * DIR/kft of raw input bytes, bit 2: sort by thread, bit 3: a DIR/kallsyms
 * of input bytes and symbol lookups of every call), then 16 bytes per record (u16 id, u64
 * payload word 0, u32 time step, u8 extra words, u8 unused), then the
 * callsites file: whatever is left.  The records go into one valid
 * sub-buffer of trace0, so the fuzzer spends its time on the call parts.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kft/runfile.h"
#include "reader/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char meta[] = "ktrace-format 1\nclock mono\nbuf-size 65536\nbuf-nr 1\n"
			   "created-ns 1000\nstream 0 thread trace0\n"
			   "map 1000 2000 0 - /nonexistent/prog\n";

static uint64_t get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void on_child(void *arg, uintptr_t parent, uintptr_t child, uint64_t ns, uint64_t count)
{
	*(uint64_t *)arg += parent + child + ns + count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t stream[65536];
	static uint8_t kft[256 + sizeof(struct kft_run)] __attribute__((aligned(64))); /* file header, run */
	struct ktr_memfile files[5];
	struct ktr_syms *syms;
	size_t nfiles = 0, nrec, off = 2, used = 0;
	unsigned opts;
	uint64_t ts = 1u << 20, sum = 0;
	struct ktrace_subbuf *h = (struct ktrace_subbuf *)stream;
	struct ktr_trace *t;
	struct ktr_ctree *ct;
	struct ktr_callsort *cs;
	struct ktr_rec r;
	struct ktr_call c;
	struct ktr_callent e;

	if (size < 2)
		return 0;
	nrec = data[0] % 97;
	opts = data[1];
	memset(stream, 0, sizeof(stream));
	for (size_t i = 0; i < nrec && off + 16 <= size; i++, off += 16) {
		const uint8_t *p = data + off;
		unsigned extra = p[14] & 3, words = 1 + extra;
		uint64_t *rec = (uint64_t *)(stream + KTRACE_SUBBUF_HDR_SIZE + used);

		ts += get(p + 10, 4) & 0xffffff;
		rec[0] = KTRACE_REC_HDR(ts, KTRACE_CLASS_CALL, words, get(p, 2));
		rec[1] = get(p + 2, 8);
		for (unsigned k = 0; k < extra; k++)
			rec[2 + k] = get(p + 2 + k, 8) * (k + 3); /* dur_hi, func, site */
		used += 8 * (1 + words);
	}
	h->magic = KTRACE_SUBBUF_MAGIC;
	h->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	h->flags = KTRACE_SBF_CLOSED;
	h->first_ts = 1u << 20;
	h->first_ns = 0;
	h->last_ts = ts;
	h->used = (uint32_t)used;
	h->nrec = (uint32_t)((off - 2) / 16); /* the records written above */
	h->tid = 7;
	h->cpu = 0;
	files[nfiles++] = (struct ktr_memfile){ "metadata", meta, sizeof(meta) - 1 };
	files[nfiles++] = (struct ktr_memfile){ "trace0", stream, sizeof(stream) };
	if (opts & 1) {
		struct kft_file *kf = (struct kft_file *)kft;
		struct kft_run *run = (struct kft_run *)(kft + 256);

		memset(kft, 0, sizeof(kft));
		kf->magic = KFT_FILE_MAGIC;
		kf->run_off = 256;
		run->magic = KFT_RUN_MAGIC;
		run->origin = off + 8 <= size ? get(data + off, 8) : 5;
		off = off + 8 <= size ? off + 8 : size;
		files[nfiles++] = (struct ktr_memfile){ "kft", kft, 256 + sizeof(*run) };
	} else if (opts & 2) {
		size_t n = size - off < 512 ? size - off : 512;

		files[nfiles++] = (struct ktr_memfile){ "kft", data + off, n };
		off += n / 2;
	}
	if (opts & 8) {
		size_t n = size - off < 300 ? size - off : 300;

		files[nfiles++] = (struct ktr_memfile){ "kallsyms", data + off, n };
		off += n / 3;
	}
	files[nfiles++] = (struct ktr_memfile){ "callsites", data + off, size - off };

	t = ktr_open_mem("fuzz", files, nfiles);
	if (!t)
		return 0;
	ct = ktr_ctree_new();
	cs = ktr_callsort_new(4096, opts & 4 ? KTR_SORT_THREAD : KTR_SORT_ENTRY);
	syms = opts & 8 ? ktr_syms_new(t) : NULL;
	sum += ktr_time_origin(t);
	while (ktr_next(t, &r)) {
		const char *names[KTRACE_MAX_WORDS];
		uint64_t vals[KTRACE_MAX_WORDS], f, s;
		char name[128];
		unsigned n = ktr_rec_args(t, &r, names, vals);

		for (unsigned i = 0; i < n; i++)
			sum += vals[i] + strlen(names[i]);
		sum += strlen(ktr_rec_name(t, &r, name, sizeof(name)));
		if (!ktr_call_decode(t, &r, &c))
			continue;
		if (c.entry_ns > c.exit_ns || c.dur_ns != c.exit_ns - c.entry_ns)
			abort();
		if (ktr_call_key_addrs(t, c.key, &f, &s) && (f != c.func || s != c.site))
			abort();
		if (syms) {
			struct ktr_sym sym;

			ktr_sym_format(ktr_sym_lookup(syms, c.func, 0, &sym), 1, name, sizeof(name));
			sum += strlen(name);
			ktr_sym_format(ktr_sym_lookup(syms, c.site, KTR_SYM_RETADDR, &sym), 2, name,
				       sizeof(name));
			sum += strlen(name);
		}
		e.entry_ns = c.entry_ns;
		e.dur_ns = c.dur_ns;
		e.local_ns = ct ? ktr_ctree_add(ct, &c, c.key, on_child, &sum) : 0;
		if (e.local_ns > c.dur_ns)
			abort();
		e.key = c.key;
		e.thread = cs ? ktr_callsort_thread(cs, c.pid, c.tid) : 0;
		e.depth = (uint16_t)c.depth;
		e.sig = (uint8_t)c.sig;
		e.flags = (uint8_t)c.flags;
		e.cpu = 0;
		if (cs)
			ktr_callsort_add(cs, &e);
	}
	if (cs) {
		uint64_t last = 0;
		int first = 1;

		while (ktr_callsort_next(cs, &e) > 0) {
			if (!(opts & 4) && !first && e.entry_ns < last)
				abort(); /* out of order */
			last = e.entry_ns;
			first = 0;
			sum += e.key;
		}
	}
	while (ktr_diag_next(t))
		;
	ktr_syms_free(syms);
	ktr_callsort_free(cs);
	ktr_ctree_free(ct);
	ktr_close(t);
	return sum == 42 ? 0 : 0;
}

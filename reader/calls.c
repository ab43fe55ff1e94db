/*
 * reader/calls.c - function call records (class CALL, written by the KFT
 * function tracer) and the trace's call-site table, the `callsites` file
 * (docs/FORMAT.md, "Function call records" and "The call-site table").
 *
 * The table is validated once, when the trace is opened: header (magic,
 * version, hdr_size, entry_size, capacity) and length.  Each problem is one
 * diagnostic "DIR/callsites: offset N: what"; records naming entries that
 * are missing or were never written are still decoded, with unknown
 * function and call site, and each such entry is reported once.  A
 * version newer than this reader's is reported and read as far as the
 * version-1 fields go (FORMAT.md, "Compatibility").
 *
 * The time origin of function traces is the KFT run's (DIR/kft, the
 * struct kft_run `origin` field, kft/runfile.h): trigger times and the
 * run's status count from it.  Without that file it is the metadata's
 * created-ns.  The same file's counter blocks tell which calls the writer
 * could not record at all (made by signal handlers that interrupted a
 * hook): they are reported as a warning, so every tool shows the loss.
 *
 * CALL records that carry their addresses inline (index 0xffffff, the
 * writer's table was full) get a key from a small interning table here, so
 * tools can name every call by one 32-bit key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kft/runfile.h"
#include "reader/internal.h"

#define CS_MAX_ENTRY_SIZE 4096u

static uint64_t kft_file_load(struct ktr_trace *t);

/*
 * ktr_callsites_load() - map and check DIR/callsites (called by ktr_open();
 * a missing file is not an error until a CALL record needs it).
 */
void ktr_callsites_load(struct ktr_trace *t)
{
	struct ktrace_callsites h;
	struct ktr_file *f = &t->cs;
	uint64_t need;

	t->cs_state = -1;
	t->origin_ns = kft_file_load(t);
	if (ktr_file_open(t, f, "callsites", 1) < 0)
		return;
	if (f->size < sizeof(h)) {
		ktr_diag(t, 1, "%s: offset 0: truncated: %zu bytes, the header alone is %zu; call sites unknown",
			 f->path, f->size, sizeof(h));
		return;
	}
	memcpy(&h, f->p, sizeof(h));
	if (h.magic != KTRACE_CALLSITES_MAGIC) {
		ktr_diag(t, 1, "%s: offset 0: bad magic 0x%08x (expected 0x%08x); call sites unknown",
			 f->path, h.magic, KTRACE_CALLSITES_MAGIC);
		return;
	}
	if (h.version == 0) {
		ktr_diag(t, 1, "%s: offset 4: bad version 0; call sites unknown", f->path);
		return;
	}
	if (h.version > KTRACE_CALLSITES_VERSION)
		ktr_diag(t, 1, "%s: offset 4: version %u is newer than this reader's %u; reading what it can",
			 f->path, h.version, KTRACE_CALLSITES_VERSION);
	if (h.hdr_size < sizeof(h) || h.hdr_size % 8 || h.hdr_size > f->size) {
		ktr_diag(t, 1, "%s: offset 6: bad hdr_size %u; call sites unknown", f->path, h.hdr_size);
		return;
	}
	if (h.entry_size < sizeof(struct ktrace_callsite) || h.entry_size % 8 ||
	    h.entry_size > CS_MAX_ENTRY_SIZE) {
		ktr_diag(t, 1, "%s: offset 8: bad entry_size %u; call sites unknown", f->path,
			 h.entry_size);
		return;
	}
	if (h.capacity > (1u << KTRACE_CALLSITE_BITS)) {
		ktr_diag(t, 1, "%s: offset 16: capacity %llu exceeds the 24-bit index space; using %u",
			 f->path, (unsigned long long)h.capacity, 1u << KTRACE_CALLSITE_BITS);
		h.capacity = 1u << KTRACE_CALLSITE_BITS;
	}
	t->cs_hdr = h.hdr_size;
	t->cs_esize = h.entry_size;
	t->cs_cap = h.capacity;
	t->cs_count = h.count < h.capacity ? h.count : h.capacity;
	t->cs_avail = (f->size - h.hdr_size) / h.entry_size;
	if (t->cs_avail > t->cs_cap)
		t->cs_avail = t->cs_cap;
	need = t->cs_hdr + t->cs_count * t->cs_esize;
	if (t->cs_avail < t->cs_count)
		ktr_diag(t, 1, "%s: offset %llu: truncated: entries %llu..%llu of the %llu in use are missing (the file ends at %zu, needs %llu)",
			 f->path, (unsigned long long)(t->cs_hdr + t->cs_avail * t->cs_esize),
			 (unsigned long long)t->cs_avail, (unsigned long long)t->cs_count - 1,
			 (unsigned long long)t->cs_count, f->size, (unsigned long long)need);
	t->cs_reported = calloc((size_t)(t->cs_cap + 7) / 8 + 1, 1);
	t->cs_state = 1;
}

/* ktr_calls_free() - unmap the table and free the interning (ktr_close()). */
void ktr_calls_free(struct ktr_trace *t)
{
	ktr_file_close(&t->cs);
	free(t->cs_reported);
	free(t->xpairs);
	free(t->xhash);
	t->cs_reported = NULL;
	t->xpairs = NULL;
	t->xhash = NULL;
}

int ktr_callsite(const struct ktr_trace *t, uint32_t index, uint64_t *func, uint64_t *site)
{
	const uint8_t *p;

	*func = *site = 0;
	if (t->cs_state != 1 || index >= t->cs_avail)
		return 0;
	p = t->cs.p + t->cs_hdr + (uint64_t)index * t->cs_esize;
	*func = ktr_le64(p);
	*site = ktr_le64(p + 8);
	if (!*func) {
		*site = 0;
		return 0;
	}
	return 1;
}

/* Report, once per index, why call-site @index of a record is unknown. */
static void bad_index(struct ktr_trace *t, uint32_t index)
{
	const char *path = t->cs.path ? t->cs.path : t->dir;

	if (t->cs_state != 1) {
		if (!t->cs_far_reported && !t->cs.exists && !ktr_file_refused(t, "callsites")) {
			t->cs_far_reported = 1;
			ktr_diag(t, 1, "%s/callsites: missing; the functions of call records are unknown",
				 t->dir);
		}
		return; /* an unusable table was reported when it was loaded */
	}
	if (index >= t->cs_cap) {
		if (!t->cs_far_reported) {
			t->cs_far_reported = 1;
			ktr_diag(t, 1, "%s: call-site index %u is beyond the table's %llu entries (corrupt record)",
				 path, index, (unsigned long long)t->cs_cap);
		}
		return;
	}
	if (t->cs_reported && (t->cs_reported[index / 8] & (1u << (index % 8))))
		return;
	if (t->cs_reported)
		t->cs_reported[index / 8] |= (uint8_t)(1u << (index % 8));
	if (index >= t->cs_avail)
		return; /* inside the truncation reported at load */
	ktr_diag(t, 1, "%s: offset %llu: call-site entry %u is not valid (never written); its calls are shown unknown",
		 path, (unsigned long long)(t->cs_hdr + (uint64_t)index * t->cs_esize), index);
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/* The key of an inline (func, site) pair; KTR_CALL_KEY_NONE if out of memory. */
static uint32_t intern(struct ktr_trace *t, uint64_t func, uint64_t site)
{
	size_t mask, i;

	if (t->nxpairs * 2 >= t->xhash_size) {
		size_t size = t->xhash_size ? 2 * t->xhash_size : 256;
		uint32_t *h;

		if (t->nxpairs >= 0xfe000000u - KTR_CALL_KEY_EXTRA)
			return KTR_CALL_KEY_NONE;
		h = calloc(size, sizeof(*h));
		if (!h)
			return KTR_CALL_KEY_NONE;
		for (size_t k = 0; k < t->nxpairs; k++) {
			size_t j = mix(t->xpairs[k].func, t->xpairs[k].site) & (size - 1);

			while (h[j])
				j = (j + 1) & (size - 1);
			h[j] = (uint32_t)k + 1;
		}
		free(t->xhash);
		t->xhash = h;
		t->xhash_size = size;
	}
	mask = t->xhash_size - 1;
	for (i = mix(func, site) & mask; t->xhash[i]; i = (i + 1) & mask) {
		const struct ktr_pair2 *p = &t->xpairs[t->xhash[i] - 1];

		if (p->func == func && p->site == site)
			return KTR_CALL_KEY_EXTRA + t->xhash[i] - 1;
	}
	if (t->nxpairs == t->capxpairs) {
		size_t cap = t->capxpairs ? 2 * t->capxpairs : 64;
		struct ktr_pair2 *n = realloc(t->xpairs, cap * sizeof(*n));

		if (!n)
			return KTR_CALL_KEY_NONE;
		t->xpairs = n;
		t->capxpairs = cap;
	}
	t->xpairs[t->nxpairs].func = func;
	t->xpairs[t->nxpairs].site = site;
	t->xhash[i] = (uint32_t)++t->nxpairs;
	return KTR_CALL_KEY_EXTRA + (uint32_t)t->nxpairs - 1;
}

int ktr_call_key_addrs(const struct ktr_trace *t, uint32_t key, uint64_t *func, uint64_t *site)
{
	*func = *site = 0;
	if (key == KTR_CALL_KEY_NONE)
		return 0;
	if (key >= KTR_CALL_KEY_EXTRA) {
		if (key - KTR_CALL_KEY_EXTRA >= t->nxpairs)
			return 0;
		*func = t->xpairs[key - KTR_CALL_KEY_EXTRA].func;
		*site = t->xpairs[key - KTR_CALL_KEY_EXTRA].site;
		return 1;
	}
	return ktr_callsite(t, key, func, site);
}

/*
 * @addr tagged with its load generation (KTR_ADDR_GEN()) when objects
 * loaded at different times covered it (map-gen lines); else @addr.  The
 * addresses known to be unambiguous are remembered (direct-mapped), so a
 * trace without such reuse pays a probe per call.
 */
static uint64_t gen_tag(struct ktr_trace *t, uint64_t addr, uint64_t ns)
{
	size_t i, h;
	int amb = 0;

	if (!t->nmapgen || !addr || KTR_ADDR_GEN(addr))
		return addr;
	h = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 54); /* 1024 slots */
	if (t->gplain[h] == addr)
		return addr;
	i = ktr_map_pick(t, addr, ns, &amb);
	if (i == SIZE_MAX || !amb || i + 1 >= (1u << (64 - KTR_ADDR_GEN_SHIFT))) {
		t->gplain[h] = addr;
		return addr;
	}
	return addr | (uint64_t)(i + 1) << KTR_ADDR_GEN_SHIFT;
}

/* The call's addresses tagged by load generation, and its key for them. */
static void call_gens(struct ktr_trace *t, struct ktr_call *c)
{
	uint64_t f = gen_tag(t, c->func, c->entry_ns), s = gen_tag(t, c->site, c->entry_ns);

	if (f == c->func && s == c->site)
		return;
	c->func = f;
	c->site = s;
	c->key = intern(t, f, s);
}

void ktr_call_fill(struct ktr_trace *t, struct ktr_call *c, unsigned id, const uint64_t *w,
		   unsigned nwords, uint64_t raw, uint64_t ns)
{
	uint64_t w0 = w[0], entry_raw;

	c->index = KTRACE_CALL_SITE(id, w0);
	c->dur_raw = KTRACE_CALL_DUR_LO(w0) | (nwords >= 2 ? w[1] << 32 : 0);
	c->depth = KTRACE_CALL_DEPTH(w0);
	c->sig = KTRACE_CALL_SIG(w0);
	c->flags = KTRACE_CALL_FLAGS(w0);
	c->exit_ns = ns;
	entry_raw = c->dur_raw <= raw ? raw - c->dur_raw : 0;
	c->entry_ns = entry_raw == raw ? ns : ktr_ns_at(t, entry_raw, &t->call_hint);
	if (c->entry_ns > c->exit_ns)
		c->entry_ns = c->exit_ns;
	c->dur_ns = c->exit_ns - c->entry_ns;
	c->func = c->site = 0;
	if (c->index == KTRACE_CALLSITE_NONE) {
		if (nwords >= 4 && w[2]) {
			c->func = w[2];
			c->site = w[3];
			c->key = intern(t, c->func, c->site);
			call_gens(t, c);
		} else {
			c->key = KTR_CALL_KEY_NONE;
		}
		return;
	}
	if (ktr_callsite(t, c->index, &c->func, &c->site)) {
		c->key = c->index;
		if (!t->nmapgen || (t->cs_plain && t->cs_plain[c->index]))
			return; /* known plain: no look-up per call */
		call_gens(t, c);
		if (c->key == c->index) { /* both addresses plain, at any time */
			if (!t->cs_plain)
				t->cs_plain = calloc(t->cs_avail, 1);
			if (t->cs_plain)
				t->cs_plain[c->index] = 1;
		}
	} else {
		c->key = KTR_CALL_KEY_NONE; /* (ktr_callsite() left func and site 0) */
		bad_index(t, c->index);
	}
}

int ktr_call_decode(struct ktr_trace *t, const struct ktr_rec *r, struct ktr_call *c)
{
	if (r->kind != KTR_RECORD || r->cls != KTRACE_CLASS_CALL)
		return 0;
	if (r->nwords < 1) {
		if (!t->cs_short_reported) {
			const struct ktr_stream_info *si = NULL;

			for (unsigned i = 0; i < t->nstreams; i++)
				if (t->streams[i].info.index == r->stream)
					si = &t->streams[i].info;
			t->cs_short_reported = 1;
			ktr_diag(t, 1, "%s: offset %llu: call record without its payload word (skipped)",
				 si ? si->path : t->dir, (unsigned long long)r->offset);
		}
		return 0;
	}
	c->tid = r->tid;
	c->pid = r->pid;
	c->cpu = r->cpu;
	ktr_call_fill(t, c, r->id, r->w, r->nwords, r->raw, r->ns);
	return 1;
}

/*
 * Sum the `sigmissed` counters of the blocks of the run's configuration
 * generation (as kft_status_add() does), checking every offset against the
 * file's @size.
 */
static uint64_t kft_sigmissed(const struct ktr_file *f, const struct kft_file *h,
			      const struct kft_run *r)
{
	uint64_t sum = 0, want = KFT_EPOCH_GEN(r->epoch) + 1ull;

	if (h->blocks_off > f->size || h->blocks_off % 8 ||
	    (f->size - h->blocks_off) / sizeof(struct kft_counters) < h->nblocks)
		return 0;
	for (uint32_t i = 0; i < h->nblocks; i++) {
		struct kft_counters c;

		memcpy(&c, f->p + h->blocks_off + (size_t)i * sizeof(c), sizeof(c));
		if (c.gen == want)
			sum += c.sigmissed;
	}
	return sum;
}

/*
 * DIR/kft: the KFT run's time origin, in ns (0 if there is none), and a
 * warning for the calls the writer missed.
 */
static uint64_t kft_file_load(struct ktr_trace *t)
{
	struct ktr_file f;
	struct kft_file h;
	struct kft_run r;
	uint64_t ns = 0, missed = 0;

	if (ktr_file_open(t, &f, KFT_FILE_NAME, 1) < 0) {
		ktr_file_close(&f);
		return 0;
	}
	if (f.size >= sizeof(h)) {
		memcpy(&h, f.p, sizeof(h));
		if (h.magic == KFT_FILE_MAGIC && h.run_off <= f.size && f.size - h.run_off >= sizeof(r)) {
			memcpy(&r, f.p + h.run_off, sizeof(r));
			if (r.magic == KFT_RUN_MAGIC && r.origin)
				ns = ktr_raw_to_ns(t, r.origin);
			if (r.magic == KFT_RUN_MAGIC)
				missed = kft_sigmissed(&f, &h, &r);
		}
	}
	if (!ns)
		ktr_diag(t, 0, "%s: warning: no KFT run header; times count from the trace's creation",
			 f.path);
	if (missed)
		ktr_diag(t, 0, "%s: warning: %llu call%s made by signal handlers that interrupted a hook "
			       "were not recorded (kft-status: entries missed in signal handlers)",
			 f.path, (unsigned long long)missed, missed == 1 ? "" : "s");
	ktr_file_close(&f);
	return ns;
}

uint64_t ktr_time_origin(const struct ktr_trace *t)
{
	return t->origin_ns ? t->origin_ns : t->info.created_ns;
}

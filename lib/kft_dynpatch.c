/*
 * lib/kft_dynpatch.c - programs and libraries built without function
 * hooks, traced by patching their functions' entries at program start
 * (x86-64), as uftrace's `record -P` does: `ktrace record -- /usr/bin/jq`.
 *
 * What is patched: the functions the rules of KTRACE_PATCH select
 * (lib/kft_patchrules.h: `ktrace record -P PATTERN[@LIB] -U PATTERN[@LIB]`,
 * and "+." when the program has no hooks of its own, cli/record_patch.c),
 * patterns matched as kft_sym_match() does (the symbol, demangled, or
 * demangled without parameters), and, when the configuration has a
 * funclist (-F), only those the funclist or a trigger names.  Functions are the object's symbols (.symtab, else .dynsym) of type
 * FUNC with a size; the start-up code the compiler adds (_start, _init,
 * frame_dummy, ...) is left alone.  Never patched: objects with hooks of
 * their own (they import __cyg_profile_func_enter, mcount or __fentry__,
 * or have patchable entries: lib/kft_patch.c), libktrace's, the dynamic
 * loader.
 *
 * How: each function gets a slot in a trampoline area mapped within rel32
 * reach of its object's text (kft_text_near()):
 *     +0   .quad  the function's address
 *     +8   call   *kft_dyn_entry (through the area's first word)
 *     +14  the function's first instructions, moved (lib/kft_reloc.c),
 *          then jmp back to the first instruction left in place
 * and its first instructions (after endbr64) become "jmp slot+8", the
 * rest of the moved bytes int3.  kft_dyn_entry (lib/kft_pg_entry.S) finds
 * the function 14 bytes before its return address and enters the -pg
 * hook (kft_pg_enter(), KFT_PG_PATCHED), which diverts the function's
 * return address to the exit trampoline: from there on a patched
 * function is traced exactly as a -pg -mfentry one (lib/kft_pg.c:
 * filters, triggers, longjmp, exceptions, signals, fork).  A function
 * that cannot be moved (kft_reloc_entry()) is left alone and counted
 * with its reason.
 *
 * Safety: this runs in libktrace's constructor, which LD_PRELOAD makes
 * run before the program's own constructors and main(): the program has
 * no threads yet, and none of the functions patched is running (only the
 * dynamic loader's, which are never patched, are on the stack); the text
 * is made writable (never writable and executable at once) while the
 * jumps are written and then restored, and the trampolines are complete
 * and executable before the first jump to them is written.  A library
 * loaded before libktrace that starts a thread in its constructor which
 * runs a function being patched would break this; none of the usual ones
 * does.  Objects loaded later with dlopen() are not patched.  In a
 * process `ktrace record -p` attached to (lib/kft_attach.h), threads run:
 * the trampolines are filled here, but the entries are only listed
 * (dyn_list()), and record writes them with every thread stopped, leaving
 * alone a function a thread is stopped inside.
 *
 * Results: DIR/kft-dynpatch ("key: value" counts, then one "skipped:
 * NAME: reason" line per function left alone), and one line on stderr
 * when something the program's file did not predict (no decoder, no
 * memory in reach, mprotect() refused) kept functions from being patched.
 *
 * Thread-safety: constructor only, not thread-safe, not async-signal-safe
 * (allocates, dlopen()s Zydis, mprotect()s the program's text).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft/config.h"
#include "kft/libcall.h"
#include "kft_attach.h"
#include "kft_patchrules.h"
#include "kft_reloc.h"
#include "kft_rt.h"
#include "safefile.h"

#define KFT_DYNPATCH_FILE "kft-dynpatch"

#if defined(__x86_64__)

extern char kft_dyn_entry[];

/* A trampoline area: the entry's address, then one slot per function. */
#define DYN_HEAD 16
#define DYN_SLOT 80 /* 8 + 6 + KFT_RELOC_MAX, rounded */
/* Where a slot's moved instructions start, and its call. */
#define DYN_CALL 8
#define DYN_CODE 14

_Static_assert(DYN_CODE + KFT_RELOC_MAX <= DYN_SLOT, "a slot holds the moved instructions");

/* The functions patched, sorted (kft_dyn_patched()); written before main(), then read only. */
static struct kft_addrs dyn_patched_fns;

/* Counts of one start (DIR/kft-dynpatch). */
struct dyn_stats {
	uint64_t selected, patched, why[KFT_RELOC_NR];
	uint64_t failed;      /* no trampoline memory in reach, mprotect() refused */
	uint64_t hooked_objs; /* objects left alone: hooks of their own */
};

/* A function chosen for patching. */
struct dyn_fn {
	const char *name; /* the symbol, valid while the resolver is open */
	uint64_t addr, size;
	int why;          /* enum kft_reloc_err, -1 while not tried */
	struct kft_reloc rel;
};

/* What one object's walk collects. */
struct dyn_obj {
	const struct kft_patch_rule *rules[KFT_PATCH_RULES_MAX];
	unsigned nrules;
	struct kft_resolver *r;
	const struct kft_addrs *sel; /* NULL: no funclist */
	struct dyn_fn *f;
	size_t n, cap;
	int oom;
};

/* Objects never patched: libktrace's own, the dynamic loader. */
static int never_patched(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libktrace", 9) || !strncmp(base, "ld-linux", 8) ||
	       !strncmp(base, "ld64.so", 7);
}

/* Has object @i hooks of its own (compiled, or patchable entries)? */
static int has_own_hooks(struct kft_resolver *r, unsigned i)
{
	uint64_t a, n;

	if (kft_obj_imports(r, i, kft_hook_name) == 1)
		return 1;
	return kft_obj_section(r, i, "__patchable_function_entries", &a, &n) == 0 ||
	       kft_obj_section(r, i, "__mcount_loc", &a, &n) == 0;
}

/* kft_patch_selects()'s matcher: the resolver's (mangled, demangled, without parameters). */
static int dyn_match(void *arg, const char *pat, const char *name)
{
	return kft_sym_match(arg, pat, name);
}

/* kft_obj_funcs() callback: keep the function if the rules select it.  1 (stop): out of memory. */
static int dyn_collect(const char *name, uint64_t addr, uint64_t size, void *arg)
{
	struct dyn_obj *d = arg;

	if (!size || kft_patch_startup_code(name) || (d->sel && !kft_addrs_has(d->sel, addr)) ||
	    !kft_patch_selects(d->rules, d->nrules, name, dyn_match, d->r))
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct dyn_fn *f = kt_realloc(d->f, cap * sizeof(*f));

		if (!f) {
			d->oom = 1;
			return 1;
		}
		d->f = f;
		d->cap = cap;
	}
	d->f[d->n++] = (struct dyn_fn){ .name = name, .addr = addr, .size = size, .why = -1 };
	return 0;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct dyn_fn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sort by address, one entry per address (aliases), only functions inside the text. */
static void dyn_unique(struct dyn_obj *d, const struct kft_text *o)
{
	size_t n = 0;

	if (d->n)
		qsort(d->f, d->n, sizeof(*d->f), cmp_fn);
	for (size_t i = 0; i < d->n; i++) {
		if (kft_text_seg(o, d->f[i].addr, d->f[i].size) < 0)
			continue;
		if (n && d->f[n - 1].addr == d->f[i].addr)
			continue;
		d->f[n++] = d->f[i];
	}
	d->n = n;
}

/*
 * Fill the trampoline area @t (read-write) for the functions of @d: each
 * slot holds its function's address, the call to the entry and the moved
 * instructions.  Reasons into @st.
 */
static void dyn_fill(struct dyn_obj *d, uint64_t t, struct dyn_stats *st)
{
	uint64_t entry = (uint64_t)(uintptr_t)kft_dyn_entry;

	memcpy((void *)(uintptr_t)t, &entry, 8);
	for (size_t k = 0; k < d->n; k++) {
		struct dyn_fn *f = &d->f[k];
		uint8_t *slot = (uint8_t *)(uintptr_t)(t + DYN_HEAD + k * DYN_SLOT);
		int32_t disp = (int32_t)(int64_t)(t - (uint64_t)(uintptr_t)(slot + DYN_CODE));

		f->why = kft_reloc_entry((const uint8_t *)(uintptr_t)f->addr, f->size, f->addr,
					 (uint64_t)(uintptr_t)(slot + DYN_CODE), &f->rel);
		st->why[f->why]++;
		if (f->why != KFT_RELOC_OK)
			continue;
		memcpy(slot, &f->addr, 8);
		slot[DYN_CALL] = 0xff; /* call *disp32(%rip) */
		slot[DYN_CALL + 1] = 0x15;
		memcpy(slot + DYN_CALL + 2, &disp, 4);
		memcpy(slot + DYN_CODE, f->rel.out, f->rel.out_len);
	}
}

/* The bytes of @f's entry when patched to jump to @to: jmp rel32, int3s (@len of them in all). */
static void dyn_jump(const struct dyn_fn *f, uint64_t to, uint8_t *out)
{
	int32_t rel = (int32_t)(int64_t)(to - (f->addr + f->rel.start + 5));

	memset(out + 5, 0xcc, f->rel.len - 5); /* int3: never run */
	out[0] = 0xe9;
	memcpy(out + 1, &rel, 4);
}

/*
 * Attached to a running process (lib/kft_attach.h): list the writes of
 * functions [@a, @b) of @d for `ktrace record -p`, which makes them with
 * every thread stopped; they count as patched (a function a thread is
 * stopped in is left alone there, and said by record).
 */
static void dyn_list(struct dyn_obj *d, size_t a, size_t b, uint64_t t, struct dyn_stats *st)
{
	for (size_t k = a; k < b; k++) {
		struct dyn_fn *f = &d->f[k];
		uint8_t bytes[16];

		if (f->why != KFT_RELOC_OK)
			continue;
		dyn_jump(f, t + DYN_HEAD + k * DYN_SLOT + DYN_CALL, bytes);
		if (f->rel.len > sizeof(bytes) ||
		    kft_attach_add_write(f->addr + f->rel.start, bytes, f->rel.len, KFT_WRITE_ENTRY) < 0) {
			st->failed++;
			st->why[KFT_RELOC_OK]--;
			f->why = -1;
			continue;
		}
		st->patched++;
		kft_addrs_push(&dyn_patched_fns, f->addr);
	}
}

/* Write the jumps of the functions of @d that could be moved, segment by segment. */
static void dyn_write(struct dyn_obj *d, const struct kft_text *o, uint64_t t, struct dyn_stats *st)
{
	for (size_t a = 0, b; a < d->n; a = b) {
		int seg = kft_text_seg(o, d->f[a].addr, d->f[a].size);
		uint64_t lo = d->f[a].addr, hi;

		for (b = a + 1; b < d->n && kft_text_seg(o, d->f[b].addr, d->f[b].size) == seg; b++)
			;
		hi = d->f[b - 1].addr + d->f[b - 1].size;
		if (kft_attaching()) {
			dyn_list(d, a, b, t, st); /* `record -p` writes them, every thread stopped */
			continue;
		}
		if (kft_text_writable(lo, hi) != 0) {
			for (size_t k = a; k < b; k++)
				if (d->f[k].why == KFT_RELOC_OK) {
					st->failed++;
					st->why[KFT_RELOC_OK]--;
					d->f[k].why = -1;
				}
			continue;
		}
		for (size_t k = a; k < b; k++) {
			struct dyn_fn *f = &d->f[k];

			if (f->why != KFT_RELOC_OK)
				continue;
			dyn_jump(f, t + DYN_HEAD + k * DYN_SLOT + DYN_CALL,
				 (uint8_t *)(uintptr_t)(f->addr + f->rel.start));
			st->patched++;
			kft_addrs_push(&dyn_patched_fns, f->addr);
		}
		kft_text_restore(o, seg, lo, hi);
	}
}

/* Object @i of @r: select its functions by @rules (@nrules) and @sel, move their entries, patch. */
static int dyn_object(struct kft_resolver *r, unsigned i, const struct kft_patch_rule *rules,
		      unsigned nrules, const struct kft_addrs *sel, struct dyn_stats *st,
		      struct dyn_obj *d)
{
	struct kft_text o;
	uint64_t bias, t;
	size_t len;
	const char *path = kft_resolver_obj(r, i, &bias);

	memset(d, 0, sizeof(*d));
	d->r = r;
	d->sel = sel;
	for (unsigned k = 0; k < nrules; k++)
		if (path && kft_patch_lib_matches(rules[k].lib, path, i == 0))
			d->rules[d->nrules++] = &rules[k];
	if (!d->nrules || !path || never_patched(path) || kft_text_find(&o, bias) < 0)
		return 0;
	if (has_own_hooks(r, i)) {
		st->hooked_objs++;
		return 0;
	}
	/* the main program's own calls are all there are to patch, even none
	 * (stripped): its library calls are traced (kft_plt.c) */
	if (kft_obj_funcs(r, i, dyn_collect, d) < 0 || d->oom)
		return 0;
	dyn_unique(d, &o);
	st->selected += d->n;
	if (!d->n)
		return i == 0 && !sel;
	len = DYN_HEAD + d->n * DYN_SLOT;
	t = kft_text_near(d->f[0].addr, d->f[d->n - 1].addr + d->f[d->n - 1].size, len);
	if (!t) {
		st->failed += d->n;
		return 0;
	}
	dyn_fill(d, t, st);
	if (mprotect((void *)(uintptr_t)t, len, PROT_READ | PROT_EXEC) != 0) {
		st->failed += st->why[KFT_RELOC_OK];
		st->why[KFT_RELOC_OK] = 0;
		return 0;
	}
	dyn_write(d, &o, t, st);
	return i == 0 && !sel;
}

/* DIR/kft-dynpatch: the counts, then the functions left alone and why. */
static void dyn_report(const char *dir, const struct dyn_stats *st, const struct dyn_obj *objs,
		       unsigned nobj)
{
	size_t cap = 4096, n = 0;
	char *text = kt_malloc(cap);

	if (!text || !dir)
		goto out;
	n += (size_t)snprintf(text, cap, "selected: %llu\npatched: %llu\nfailed: %llu\n",
			      (unsigned long long)st->selected, (unsigned long long)st->patched,
			      (unsigned long long)st->failed);
	for (int k = KFT_RELOC_NODECODER; k < KFT_RELOC_NR && n < cap; k++)
		n += (size_t)snprintf(text + n, cap - n, "%s: %llu\n", kft_reloc_reason[k],
				      (unsigned long long)st->why[k]);
	if (n < cap)
		n += (size_t)snprintf(text + n, cap - n, "objects with hooks of their own: %llu\n",
				      (unsigned long long)st->hooked_objs);
	for (unsigned i = 0; i < nobj; i++)
		for (size_t k = 0; k < objs[i].n; k++) {
			const struct dyn_fn *f = &objs[i].f[k];
			size_t need = strlen(f->name) + 128;

			if (f->why == KFT_RELOC_OK)
				continue;
			if (n + need > cap) {
				char *more = kt_realloc(text, cap * 2 + need);

				if (!more)
					goto write;
				text = more;
				cap = cap * 2 + need;
			}
			n += (size_t)snprintf(text + n, cap - n, "skipped: %s: %s\n", f->name,
					      f->why < 0 ? "could not be written"
							 : kft_reloc_reason[f->why]);
		}
write:
	ksf_replace(dir, KFT_DYNPATCH_FILE, text, n < cap ? n : cap - 1);
out:
	kt_free(text);
}

int kft_dyn_apply(const struct kft_config *cfg, struct kft_resolver *r, const char *dir)
{
	const char *env = kt_env("KTRACE_PATCH");
	struct kft_patch_rule rules[KFT_PATCH_RULES_MAX];
	struct kft_resolver *own = NULL;
	struct dyn_stats st = { 0 };
	struct kft_addrs sel = { 0 };
	struct dyn_obj *objs = NULL;
	unsigned nrules, nobj = 0;
	char *spec;
	int all = 0, use_sel;

	if (!env || !*env || !(spec = kt_malloc(strlen(env) + 1)))
		return 0;
	strcpy(spec, env);
	nrules = kft_patch_rules_parse(spec, rules, KFT_PATCH_RULES_MAX);
	if (!nrules)
		goto out;
	use_sel = kft_patch_selection(cfg, &sel);
	if (kft_reloc_load() < 0) {
		fprintf(stderr, "ktrace: run-time patching needs libZydis.so.4 (Debian: apt install "
				"libzydis4): functions not patched, their calls are not traced\n");
		goto out;
	}
	if (!r)
		r = own = kft_resolver_open();
	if (!r)
		goto out;
	nobj = kft_resolver_nobj(r);
	objs = kt_calloc(nobj ? nobj : 1, sizeof(*objs));
	if (!objs)
		goto out;
	for (unsigned i = 0; i < nobj; i++)
		all |= dyn_object(r, i, rules, nrules, use_sel ? &sel : NULL, &st, &objs[i]);
	kft_addrs_sort(&dyn_patched_fns);
	dyn_report(dir, &st, objs, nobj);
	if (st.failed)
		fprintf(stderr, "ktrace: run-time patching: %llu of %llu functions could not be "
				"patched (no memory in reach, or the text could not be made "
				"writable); their calls are not traced (see %s/%s)\n",
			(unsigned long long)st.failed, (unsigned long long)st.selected,
			dir ? dir : ".", KFT_DYNPATCH_FILE);
out:
	for (unsigned i = 0; objs && i < nobj; i++)
		kt_free(objs[i].f);
	kt_free(objs);
	kft_resolver_close(own);
	kt_free(sel.v);
	kt_free(spec);
	return all;
}

int kft_dyn_patched(uint64_t addr)
{
	return kft_addrs_has(&dyn_patched_fns, addr);
}

#else /* !__x86_64__ */

int kft_dyn_patched(uint64_t addr)
{
	(void)addr;
	return 0;
}

int kft_dyn_apply(const struct kft_config *cfg, struct kft_resolver *r, const char *dir)
{
	(void)cfg;
	(void)r;
	(void)dir;
	if (kt_env("KTRACE_PATCH"))
		fprintf(stderr, "ktrace: run-time patching is x86-64 only: functions not patched\n");
	return 0;
}

#endif

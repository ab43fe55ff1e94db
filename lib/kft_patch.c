/*
 * lib/kft_patch.c - KFT for patchable builds (x86-64): programs built with
 * -fpatchable-function-entry=N (N >= 5, M = 0) or -pg -mfentry -mnop-mcount
 * -mrecord-mcount, whose functions begin with a NOP that does nothing
 * until it is patched.  At program start, in libktrace's constructor,
 * the 5 bytes at the entry of each selected function are rewritten into
 * "call rel32" to a trampoline that jumps to the -mfentry hook
 * (kft_pg_fentry, lib/kft_pg_entry.S).  A call at the function's first
 * instruction leaves the same stack as gcc's "call __fentry__": the -pg
 * -mfentry machinery of lib/kft_pg.c (entry hook, return stack, exit
 * trampoline, longjmp, exceptions, signals) does the rest unchanged.
 *
 * First the objects' section names are read with pread(): a program
 * without these sections returns at once (no libelf loaded).
 *
 * Sites: the addresses in the __patchable_function_entries section
 * (-fpatchable-function-entry) and in __mcount_loc (-mrecord-mcount) of
 * every object loaded at start, read from memory (the dynamic loader has
 * relocated them: PIE and shared objects alike).  A site is patched only if
 *   - it lies in one of the object's executable segments,
 *   - it is a function symbol's address, or 4 past one that begins with
 *     endbr64 (-fcf-protection): with -fpatchable-function-entry=N,M and
 *     M > 0 the site lies before the function, where no call executes it;
 *     such sites are refused ("not at a function entry"),
 *   - the function is selected: the configuration's funclist (-F) and its
 *     trigger functions, or every function when there is no funclist;
 *   - its 5 bytes are "0f 1f 44 00 xx" (nopl disp8(%rax,%rax,1): gcc's
 *     -mnop-mcount, clang's -fpatchable-function-entry=5)
 *     or five 0x90 (-fpatchable-function-entry; with N > 5 the other NOPs
 *     stay and execute after the call returns).  Anything else is skipped
 *     and counted ("not a NOP", e.g. N < 5), except a call (e8: a -pg
 *     -mfentry -mrecord-mcount build, whose __fentry__ calls are there).
 * Unselected functions are not touched: they cost nothing.
 *
 * The trampoline: rel32 reaches +-2 GiB, libktrace is further, so one
 * page per object is mapped near its text (MAP_FIXED_NOREPLACE, searched
 * upward from the end of the text, then downward from its start), holding
 * "jmp *0(%rip); .quad kft_pg_fentry".  The jump keeps the stack picture.
 *
 * Writing: the text pages holding the sites are made PROT_READ|PROT_WRITE
 * (never writable and executable at once), the calls written, and the
 * segment's own protection restored; x86 needs no instruction-cache flush.
 *
 * Safety: this runs in libktrace's constructor, which `ktrace record`'s
 * LD_PRELOAD makes run before the program's own constructors and main():
 * the program has no threads yet, nothing executes the text while it is
 * writable or half-written.  (A library loaded before libktrace that
 * starts a thread in its constructor and calls into the program's text
 * at once would break this; none of the usual ones does.)  Objects loaded
 * later with dlopen() are not patched.  In a running process that
 * `ktrace record -p` attached to, the calls are listed, not written
 * (patch_write()): record writes them with every thread stopped.
 *
 * Results: DIR/kft-patch (one "key: value" per line: sites, patched, not
 * selected, not a NOP, not at a function entry, failed), and one line on
 * stderr when sites were skipped or could not be patched.
 *
 * Thread-safety: constructor only, not thread-safe, not async-signal-safe
 * (allocates, mprotect()s the program's text).
 */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft/config.h"
#include "kft_attach.h"
#include "kft_rt.h"
#include "safefile.h"

#define KFT_PATCH_FILE "kft-patch"

/* Counts of one start (DIR/kft-patch). */
struct patch_stats {
	uint64_t sites;     /* distinct sites in the sections */
	uint64_t patched;
	uint64_t unselected; /* not in the funclist */
	uint64_t not_nop;   /* bytes at the site are not a 5-byte NOP */
	uint64_t not_entry; /* not at a function's entry (M > 0, outside the text) */
	uint64_t failed;    /* no trampoline in reach, or mprotect() refused */
	uint64_t calls;     /* already a call (-pg -mfentry -mrecord-mcount): its hook is there */
};

#if defined(__x86_64__)

extern char kft_pg_fentry[];

/*
 * dl_iterate_phdr() callback: fill @arg (a struct kft_text) from the
 * object loaded at its bias.  Return: 1 (stop) once found, else 0.
 */
static int text_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kft_text *o = arg;

	(void)size;
	if (info->dlpi_addr != o->bias)
		return 0;
	for (unsigned k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && o->nload < KFT_TEXT_SEGS) {
			o->load[o->nload].lo = info->dlpi_addr + ph->p_vaddr;
			o->load[o->nload].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			o->nload++;
		}
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || o->nseg >= KFT_TEXT_SEGS)
			continue;
		o->seg[o->nseg].lo = info->dlpi_addr + ph->p_vaddr;
		o->seg[o->nseg].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		o->seg[o->nseg].prot = ((ph->p_flags & PF_R) ? PROT_READ : 0) |
				       ((ph->p_flags & PF_W) ? PROT_WRITE : 0) | PROT_EXEC;
		o->nseg++;
	}
	o->found = 1;
	return 1;
}

int kft_text_find(struct kft_text *o, uint64_t bias)
{
	memset(o, 0, sizeof(*o));
	o->bias = bias;
	dl_iterate_phdr(text_find_cb, o);
	return o->found ? 0 : -1;
}

int kft_addrs_push(struct kft_addrs *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		uint64_t *v = kt_realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* qsort()/bsearch() order of uint64_t. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void kft_addrs_sort(struct kft_addrs *a)
{
	size_t n = 0;

	if (!a->n)
		return;
	qsort(a->v, a->n, sizeof(*a->v), cmp_u64);
	for (size_t i = 0; i < a->n; i++)
		if (!n || a->v[n - 1] != a->v[i])
			a->v[n++] = a->v[i];
	a->n = n;
}

int kft_addrs_has(const struct kft_addrs *a, uint64_t x)
{
	return a->n && bsearch(&x, a->v, a->n, sizeof(*a->v), cmp_u64) != NULL;
}

/* kft_obj_funcs() callback: the address into @arg (a struct kft_addrs); 1 (stop): out of memory. */
static int collect_fn(const char *name, uint64_t addr, uint64_t size, void *arg)
{
	(void)name;
	(void)size;
	return kft_addrs_push(arg, addr) < 0 ? 1 : 0;
}

/* nopl disp8(%rax,%rax,1): gcc writes disp8 0, clang 8 */
static const uint8_t nop5[4] = { 0x0f, 0x1f, 0x44, 0x00 };
static const uint8_t nop1x5[5] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

int kft_text_seg(const struct kft_text *o, uint64_t a, uint64_t len)
{
	for (unsigned k = 0; k < o->nseg; k++)
		if (a >= o->seg[k].lo && a + len <= o->seg[k].hi)
			return (int)k;
	return -1;
}

/* Is a rel32 call at any site in [@lo, @hi] to @t in reach? */
static int in_reach(uint64_t t, uint64_t lo, uint64_t hi)
{
	int64_t d1 = (int64_t)(t - (lo + 5)), d2 = (int64_t)(t - (hi + 5));

	return d1 >= INT32_MIN && d1 <= INT32_MAX && d2 >= INT32_MIN && d2 <= INT32_MAX;
}

uint64_t kft_text_near(uint64_t lo, uint64_t hi, size_t len)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), step = 1u << 20;

	len = (len + pg - 1) & ~(pg - 1);
	for (int down = 0; down < 2; down++) {
		for (uint64_t off = 0; off < (1ull << 30); off += step) {
			uint64_t want = down ? (lo & ~(pg - 1)) - len - off
					     : ((hi + pg) & ~(pg - 1)) + off;
			void *p;

			if (down && (lo & ~(pg - 1)) < len + off + (1u << 16))
				break;
			p = mmap((void *)(uintptr_t)want, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if (!in_reach((uint64_t)(uintptr_t)p, lo, hi) ||
			    !in_reach((uint64_t)(uintptr_t)p + len, lo, hi)) {
				munmap(p, len);
				continue;
			}
			return (uint64_t)(uintptr_t)p;
		}
	}
	return 0;
}

/*
 * A trampoline page within rel32 reach of every site in [@lo, @hi]:
 * "jmp *0(%rip)" then kft_pg_fentry's address, read-execute.
 * Return: its address, or 0 if no free page in reach could be mapped.
 */
static uint64_t tramp_near(uint64_t lo, uint64_t hi)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), t = kft_text_near(lo, hi, pg);
	uint8_t code[14] = { 0xff, 0x25, 0, 0, 0, 0 };
	uint64_t target = (uint64_t)(uintptr_t)kft_pg_fentry;

	if (!t)
		return 0;
	memcpy(code + 6, &target, 8);
	memcpy((void *)(uintptr_t)t, code, sizeof(code));
	if (mprotect((void *)(uintptr_t)t, pg, PROT_READ | PROT_EXEC) != 0) {
		munmap((void *)(uintptr_t)t, pg);
		return 0;
	}
	return t;
}

int kft_text_writable(uint64_t lo, uint64_t hi)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t self = (uint64_t)(uintptr_t)kft_text_writable;
	int rw = PROT_READ | PROT_WRITE;

	lo &= ~(pg - 1);
	hi = (hi + pg - 1) & ~(pg - 1);
	/* never the case for a program's text, but do not pull the rug from under us */
	if (self >= lo && self < hi)
		rw |= PROT_EXEC;
	return mprotect((void *)(uintptr_t)lo, hi - lo, rw) == 0 ? 0 : -1;
}

void kft_text_restore(const struct kft_text *o, int seg, uint64_t lo, uint64_t hi)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	lo &= ~(pg - 1);
	hi = (hi + pg - 1) & ~(pg - 1);
	mprotect((void *)(uintptr_t)lo, hi - lo, o->seg[seg].prot);
}

/*
 * Write the calls to @t at the sites @s[0..n) of segment @seg of @o; counts
 * into @st.  Attached to a running process (lib/kft_attach.h), the writes
 * are listed instead, for `ktrace record -p` to make with every thread
 * stopped (a thread stopped inside a five-0x90 NOP is waited out there).
 */
static void patch_write(const struct kft_text *o, int seg, const uint64_t *s, size_t n,
			uint64_t t, struct patch_stats *st)
{
	if (kft_attaching()) {
		for (size_t i = 0; i < n; i++) {
			uint8_t call[5] = { 0xe8 };
			int32_t rel = (int32_t)(int64_t)(t - (s[i] + 5));

			memcpy(call + 1, &rel, 4);
			if (kft_attach_add_write(s[i], call, 5, KFT_WRITE_ENTRY) < 0)
				st->failed++;
			else
				st->patched++;
		}
		return;
	}
	if (kft_text_writable(s[0], s[n - 1] + 5) != 0) {
		st->failed += n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t call[5] = { 0xe8 };
		int32_t rel = (int32_t)(int64_t)(t - (s[i] + 5));

		memcpy(call + 1, &rel, 4);
		memcpy((void *)(uintptr_t)s[i], call, 5);
	}
	st->patched += n;
	kft_text_restore(o, seg, s[0], s[n - 1] + 5);
}

/* Object @i of @r: find, select, check and patch its sites. */
static void patch_object(struct kft_resolver *r, unsigned i, const struct kft_addrs *sel,
			 struct patch_stats *st)
{
	static const char *const sections[] = { "__patchable_function_entries", "__mcount_loc" };
	struct kft_addrs sites = { 0 }, fns = { 0 }, ok = { 0 };
	struct kft_text o;
	uint64_t bias, t;

	if (!kft_resolver_obj(r, i, &bias))
		return;
	kft_text_find(&o, bias);
	for (unsigned k = 0; k < 2; k++) {
		uint64_t addr, size;
		int mapped = 0;

		if (kft_obj_section(r, i, sections[k], &addr, &size) < 0)
			continue;
		/* the file must describe the memory: the section inside a readable segment */
		for (unsigned m = 0; m < o.nload; m++)
			if (bias + addr >= o.load[m].lo && bias + addr + size <= o.load[m].hi &&
			    bias + addr + size >= bias + addr)
				mapped = 1;
		if (!mapped)
			continue;
		for (uint64_t off = 0; off + 8 <= size; off += 8) {
			uint64_t v;

			memcpy(&v, (const void *)(uintptr_t)(bias + addr + off), 8);
			if (kft_addrs_push(&sites, v) < 0)
				goto out;
		}
	}
	if (!sites.n)
		goto out;
	kft_addrs_sort(&sites);
	st->sites += sites.n;
	if (kft_obj_funcs(r, i, collect_fn, &fns) < 0 || !o.found) {
		st->not_entry += sites.n;
		goto out;
	}
	kft_addrs_sort(&fns);
	for (size_t k = 0; k < sites.n; k++) {
		uint64_t s = sites.v[k], fn;

		if (kft_text_seg(&o, s, 5) < 0) {
			st->not_entry++;
			continue;
		}
		if (kft_addrs_has(&fns, s))
			fn = s;
		else if (s >= 4 && kft_text_seg(&o, s - 4, 9) >= 0 && kft_addrs_has(&fns, s - 4) &&
			 !memcmp((const void *)(uintptr_t)(s - 4), endbr64, 4))
			fn = s - 4;
		else {
			st->not_entry++;
			continue;
		}
		if (sel && !kft_addrs_has(sel, fn)) {
			st->unselected++;
			continue;
		}
		if (*(const uint8_t *)(uintptr_t)s == 0xe8) {
			st->calls++;
			continue;
		}
		if (memcmp((const void *)(uintptr_t)s, nop5, 4) &&
		    memcmp((const void *)(uintptr_t)s, nop1x5, 5)) {
			st->not_nop++;
			continue;
		}
		if (kft_addrs_push(&ok, s) < 0) {
			st->failed++;
			continue;
		}
	}
	if (!ok.n)
		goto out;
	t = tramp_near(ok.v[0], ok.v[ok.n - 1]);
	if (!t) {
		st->failed += ok.n;
		goto out;
	}
	/* per segment: the sites are sorted, a segment's are contiguous */
	for (size_t a = 0, b; a < ok.n; a = b) {
		int seg = kft_text_seg(&o, ok.v[a], 5);

		for (b = a + 1; b < ok.n && kft_text_seg(&o, ok.v[b], 5) == seg; b++)
			;
		patch_write(&o, seg, ok.v + a, b - a, t, st);
	}
out:
	kt_free(sites.v);
	kt_free(fns.v);
	kt_free(ok.v);
}

/*
 * Does the ELF file @path have a section named __patchable_function_entries
 * or __mcount_loc?  Read with pread() (section headers and their names
 * only), so that a program without them does not pay for libelf.
 * Return: 1 yes, 0 no or unreadable.
 */
static int has_patch_sections(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL, str;
	char *names = NULL;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
	    !eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	sh = kt_malloc((size_t)eh.e_shnum * sizeof(*sh));
	if (!sh || pread(fd, sh, (size_t)eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
			   (ssize_t)((size_t)eh.e_shnum * sizeof(*sh)))
		goto out;
	str = sh[eh.e_shstrndx];
	if (!str.sh_size || str.sh_size > (64u << 20) || !(names = kt_malloc(str.sh_size + 1)) ||
	    pread(fd, names, str.sh_size, (off_t)str.sh_offset) != (ssize_t)str.sh_size)
		goto out;
	names[str.sh_size] = '\0';
	for (unsigned k = 0; k < eh.e_shnum && !found; k++)
		if (sh[k].sh_name < str.sh_size &&
		    (!strcmp(names + sh[k].sh_name, "__patchable_function_entries") ||
		     !strcmp(names + sh[k].sh_name, "__mcount_loc")))
			found = 1;
out:
	kt_free(names);
	kt_free(sh);
	close(fd);
	return found;
}

/* dl_iterate_phdr() callback: set *@arg if the object's file has a patchable-entry section. */
static int any_patch_sections(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *path = info->dlpi_name;
	int *first = (int *)arg + 1;

	(void)size;
	if (!path || !*path) {
		if (!*first)
			return 0; /* the vDSO */
		path = "/proc/self/exe";
	}
	*first = 0;
	if (has_patch_sections(path))
		*(int *)arg = 1;
	return *(int *)arg;
}

int kft_patch_selection(const struct kft_config *cfg, struct kft_addrs *sel)
{
	if (!cfg || !(cfg->flags & KFT_CF_FUNCLIST))
		return 0;
	for (kt_u32 k = 0; k < cfg->nfuncs && k < KFT_FUNCLIST_MAX; k++)
		kft_addrs_push(sel, cfg->funcs[k]);
	/* the triggers' functions must enter the hooks to fire */
	if (cfg->start.kind == KFT_TRIG_ENTRY || cfg->start.kind == KFT_TRIG_EXIT)
		kft_addrs_push(sel, cfg->start.arg);
	if (cfg->stop.kind == KFT_TRIG_ENTRY || cfg->stop.kind == KFT_TRIG_EXIT)
		kft_addrs_push(sel, cfg->stop.arg);
	kft_addrs_sort(sel);
	return 1;
}

/*
 * kft_patch_apply() - see kft_rt.h.  @cfg NULL or without a funclist:
 * every site; @r NULL: a resolver of its own is opened and closed.  No
 * error return: what could not be done is counted (DIR/kft-patch, stderr).
 */
int kft_patch_apply(const struct kft_config *cfg, struct kft_resolver *r, const char *dir)
{
	struct kft_resolver *own = NULL;
	struct patch_stats st = { 0 };
	struct kft_addrs sel = { 0 };
	int use_sel = cfg && (cfg->flags & KFT_CF_FUNCLIST);
	char text[512];
	int n;

	{
		int found[2] = { 0, 1 }; /* found, next object is the first */

		dl_iterate_phdr(any_patch_sections, found);
		if (!found[0])
			return 0;
	}
	if (use_sel)
		kft_patch_selection(cfg, &sel);
	if (!r)
		r = own = kft_resolver_open();
	if (!r)
		goto out;
	for (unsigned i = 0; i < kft_resolver_nobj(r); i++)
		patch_object(r, i, use_sel ? &sel : NULL, &st);
	if (!st.sites || st.calls == st.sites)
		goto out;
	n = snprintf(text, sizeof(text),
		     "sites: %llu\npatched: %llu\nnot selected: %llu\nnot a nop: %llu\n"
		     "not at a function entry: %llu\nfailed: %llu\n",
		     (unsigned long long)st.sites, (unsigned long long)st.patched,
		     (unsigned long long)st.unselected, (unsigned long long)st.not_nop,
		     (unsigned long long)st.not_entry, (unsigned long long)st.failed);
	if (dir && n > 0)
		ksf_replace(dir, KFT_PATCH_FILE, text, (size_t)n);
	if (st.not_nop || st.not_entry || st.failed)
		fprintf(stderr,
			"ktrace: patchable entries: %llu of %llu sites not patched (%llu not a 5-byte "
			"NOP, %llu not at a function entry, %llu failed); their calls are not traced "
			"(see %s/%s)\n",
			(unsigned long long)(st.not_nop + st.not_entry + st.failed),
			(unsigned long long)st.sites, (unsigned long long)st.not_nop,
			(unsigned long long)st.not_entry, (unsigned long long)st.failed,
			dir ? dir : ".", KFT_PATCH_FILE);
out:
	kft_resolver_close(own);
	kt_free(sel.v);
	return st.patched && !use_sel;
}

#else /* !__x86_64__ */

int kft_patch_apply(const struct kft_config *cfg, struct kft_resolver *r, const char *dir)
{
	(void)cfg;
	(void)r;
	(void)dir;
	return 0;
}

#endif

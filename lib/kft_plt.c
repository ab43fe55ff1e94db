/*
 * lib/kft_plt.c - library calls of the main program (x86-64): calls from
 * the program into shared libraries (malloc, memcpy, pthread_create, ...)
 * recorded as CALL records like the program's own functions, as uftrace
 * does by default.
 *
 * Mechanism (PLT/GOT hooking, as uftrace's libmcount/plthook.c; an
 * LD_AUDIT library cannot be used, it lives in its own namespace without
 * libktrace's per-thread state): kft_plt_setup(), called by kft_ctor()
 * before main(), walks the main program's dynamic section: each
 * R_X86_64_JUMP_SLOT relocation of .rela.plt names a function the program
 * calls through its PLT (with -fno-plt, when the program has no PLT
 * slot but a few, the R_X86_64_GLOB_DAT ones of undefined functions, which
 * the calls read directly).  Each slot of the GOT then gets a stub of its
 * own (generated, 32 bytes: endbr64; movabs $slot_info, %r11; jmp
 * *kft_plt_entry) in place of the real function, which is resolved first
 * (the slot's value if it already points outside the program: BIND_NOW or
 * RELRO; else dlvsym()/dlsym() with the symbol's version).  The common
 * entry kft_plt_entry (lib/kft_pg_entry.S) saves the argument registers
 * and calls kft_plt_enter(), which enters the call through the -pg entry
 * hook (kft_pg_enter(), KFT_PG_LIBCALL): the same shadow stack, engine,
 * triggers and filters, the real return address saved on kft_pg.c's
 * return stack and replaced by its exit trampoline, so longjmp, C++
 * exceptions, signals and fork are handled as for -pg functions.  Then it
 * jumps to the real function with the registers as they were.
 *
 * The recorded function address is the address of the call's GOT slot
 * (in the program's data, mapped, listed in the trace's maps): the
 * readers (reader/symbols.c) name it after the relocation's symbol, i.e.
 * the name the program called ("malloc", not "__libc_malloc"; "memcpy",
 * not the IFUNC's "__memmove_avx_unaligned_erms").  The call site is the
 * real return address, in the program.
 *
 * Only programs built with function hooks (-finstrument-functions, -pg)
 * imported from a shared object get it (an uninstrumented program's calls
 * are not traced at all, as uftrace needs -pg for its library calls).
 * Not hooked: the functions kft/libcall.h lists (never return normally,
 * return twice, look at their return address; but vfork(), the setjmp and
 * the longjmp families get stubs that tell the hooks, see PLT_VFORK below,
 * and vfork() is recorded, in the parent and in the child, through a stub
 * of its own: kft_vfork_call), functions libktrace itself
 * defines (its hooks and wrappers), everything when libktrace is linked
 * into the program statically (libktrace's own library calls would go
 * through the program's PLT then), calls from shared libraries to others,
 * objects loaded by dlopen().  Library calls made by libktrace go through
 * libktrace.so's own PLT: not traced.
 *
 * Thread-safety: setup before main() (single-threaded); the hooks are
 * per-thread and async-signal-safe as the -pg ones.  A fork keeps the
 * hooks (private copies); exec starts afresh.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kft/libcall.h"
#include "kft_attach.h"
#include "kft_rt.h"

#if defined(__x86_64__)

/* What a stub hands the common entry in %r11: read-only after setup. */
struct kft_plt_slot {
	uint64_t real; /* the function's address */
	uint64_t fn;   /* the address recorded: the GOT slot's */
	uint64_t kind; /* PLT_CALL, or a function only told to the hooks, not recorded */
};

/*
 * Kinds of slots.  Functions that return twice or never return normally
 * are not recorded (kft/libcall.h), but three of them are told to the
 * hooks, even with library calls off (kft_plt_setup(@special_only)):
 * vfork() (the child shares this memory: it runs through kft_vfork_call,
 * kft_hooks_vfork_enter(), and is recorded as a library call when they are
 * on), the setjmp
 * family (the thread's depth is remembered by jmp_buf: kft_hooks_setjmp())
 * and the longjmp family (the frames above that depth were abandoned:
 * kft_hooks_longjmp()); and ucontext: getcontext() as a setjmp,
 * swapcontext(), setcontext() and makecontext() (the shadow stack and the
 * -pg return stack follow the context: kft_hooks_swapcontext()).
 */
enum { PLT_CALL, PLT_VFORK, PLT_SETJMP, PLT_LONGJMP, PLT_SWAPCTX, PLT_SETCTX, PLT_MKCTX };

static int plt_kind(const char *name)
{
	static const char *const setjmps[] = { "setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp",
					       "getcontext" };
	static const char *const longjmps[] = { "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk" };

	if (!strcmp(name, "vfork"))
		return PLT_VFORK;
	if (!strcmp(name, "swapcontext"))
		return PLT_SWAPCTX;
	if (!strcmp(name, "setcontext"))
		return PLT_SETCTX;
	if (!strcmp(name, "makecontext"))
		return PLT_MKCTX;
	for (size_t i = 0; i < sizeof(setjmps) / sizeof(setjmps[0]); i++)
		if (!strcmp(name, setjmps[i]))
			return PLT_SETJMP;
	for (size_t i = 0; i < sizeof(longjmps) / sizeof(longjmps[0]); i++)
		if (!strcmp(name, longjmps[i]))
			return PLT_LONGJMP;
	return PLT_CALL;
}

#define PLT_STUB 32 /* bytes per stub */

extern char kft_plt_entry[];
extern char kft_vfork_call[];
/* vfork()'s address, for kft_vfork_call (lib/kft_pg_entry.S): one per process */
__attribute__((visibility("hidden"))) uint64_t kft_vfork_real;
/* library calls are recorded (kft_plt_setup() without @special_only) */
static int plt_libcalls;
uint64_t kft_plt_enter(uint64_t *ret_slot, const struct kft_plt_slot *s, uint64_t arg0,
		       uint64_t arg1);

/*
 * kft_plt_enter() - called by kft_plt_entry with @ret_slot the address of
 * the library call's return address on the stack, @s the hooked slot and
 * @arg0, @arg1 the call's first two arguments:
 * enters the call (kft_pg_enter(): recorded, return address diverted, or
 * left alone if the thread does not trace).  Return: the address to jump
 * to (the real function).  Async-signal-safe.
 */
__attribute__((no_instrument_function)) uint64_t kft_plt_enter(uint64_t *ret_slot,
							       const struct kft_plt_slot *s,
							       uint64_t arg0, uint64_t arg1)
{
	if (KT_UNLIKELY(s->kind != PLT_CALL)) {
		/* not diverted, not recorded: told to the hooks */
		if (s->kind == PLT_VFORK) {
			if (kft_hooks_vfork_enter(ret_slot, plt_libcalls ? s->fn : 0)) {
				kft_vfork_real = s->real;
				return (uint64_t)(uintptr_t)kft_vfork_call;
			}
			kft_hooks_vfork(); /* the child shares this memory: hooks keep out */
		} else if (s->kind == PLT_SETJMP)
			kft_hooks_setjmp(arg0); /* arg0: the jmp_buf (getcontext: the ucontext_t) */
		else if (s->kind == PLT_LONGJMP)
			kft_hooks_longjmp(arg0);
		else if (s->kind == PLT_SWAPCTX)
			kft_hooks_swapcontext(arg0, arg1); /* oucp, ucp */
		else if (s->kind == PLT_SETCTX)
			kft_hooks_setcontext(arg0);
		else
			kft_hooks_makecontext(arg0);
		return s->real;
	}
	kft_pg_enter(ret_slot, s->fn, KFT_PG_LIBCALL);
	return s->real;
}

/* The main program's dynamic linking information (runtime addresses). */
struct plt_prog {
	uint64_t base;               /* load bias */
	const ElfW(Dyn) *dyn;
	uint64_t lo, hi;             /* its PT_LOAD segments' extent */
	uint64_t relro, relro_end;   /* PT_GNU_RELRO, page-rounded (0, 0: none) */
	int found;
};

static int plt_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct plt_prog *p = arg;
	long pg = sysconf(_SC_PAGESIZE);

	(void)size;
	/* the first object is the main program */
	p->base = info->dlpi_addr;
	p->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_DYNAMIC)
			p->dyn = (const ElfW(Dyn) *)(uintptr_t)a;
		else if (ph->p_type == PT_LOAD) {
			if (a < p->lo)
				p->lo = a;
			if (a + ph->p_memsz > p->hi)
				p->hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_RELRO) {
			p->relro = a & ~(uint64_t)(pg - 1);
			p->relro_end = (a + ph->p_memsz + pg - 1) & ~(uint64_t)(pg - 1);
		}
	}
	p->found = 1;
	return 1;
}

/* A dynamic-section pointer: already relocated by ld.so, or a link-time address. */
static uint64_t plt_ptr(const struct plt_prog *p, uint64_t v)
{
	return v && v < p->base ? v + p->base : v;
}

/* The version (GLIBC_2.14, ...) a program's undefined symbol @i needs, or NULL. */
static const char *plt_version(const struct plt_prog *p, const ElfW(Half) *versym,
			       const ElfW(Verneed) *vn, uint64_t nvn, const char *str, uint64_t i)
{
	ElfW(Half) v;

	if (!versym || !vn)
		return NULL;
	v = versym[i] & 0x7fff;
	if (v < 2)
		return NULL;
	(void)p;
	for (uint64_t k = 0; k < nvn; k++) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);

		for (unsigned j = 0; j < vn->vn_cnt; j++) {
			if (a->vna_other == v)
				return str + a->vna_name;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			break;
		vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
	}
	return NULL;
}

/* One relocation to hook. */
/* What kft_plt_setup() reads of the program's dynamic section (run-time addresses). */
struct plt_dyn {
	const ElfW(Rela) *jmprel, *rela; /* .rela.plt, .rela.dyn */
	uint64_t pltsz, relasz, relaent;  /* their sizes, in bytes; a Rela's */
	const ElfW(Sym) *symtab;
	const char *str;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *vn;
	uint64_t nvn;
};

struct plt_todo {
	uint64_t *got;
	uint64_t real;
	const char *name;
	int kind;
};

/*
 * 1 if code addresses @a and @b lie in the same loaded object (0 if
 * unknown).  glibc >= 2.35's _dl_find_object() answers from a sorted
 * table; dladdr() also searches the object's symbols for the nearest one
 * (linear: it was 4% of a short traced process's CPU, one pair per PLT
 * slot).
 */
static int plt_same_object(const void *a, const void *b)
{
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
	struct dl_find_object x, y;

	if (_dl_find_object((void *)a, &x) || _dl_find_object((void *)b, &y))
		return 0;
	return x.dlfo_link_map == y.dlfo_link_map;
#else
	Dl_info x, y;

	if (!dladdr(a, &x) || !dladdr(b, &y))
		return 0;
	return x.dli_fbase == y.dli_fbase;
#endif
}

/* 1 if @a lies in libktrace's own object. */
static int plt_in_self(uint64_t a)
{
	return plt_same_object((const void *)(uintptr_t)kft_plt_enter, (const void *)(uintptr_t)a);
}

/*
 * Look at relocation @r: if it is a hookable call slot (@type) of an
 * undefined function, resolve the function into @t.  Return: 1 to hook,
 * 0 not.
 */
static int plt_consider(const struct plt_prog *p, const struct plt_dyn *y, const ElfW(Rela) *r,
			unsigned type, int special_only, struct plt_todo *t)
{
	const ElfW(Sym) *symtab = y->symtab;
	const char *str = y->str;
	uint64_t si = ELF64_R_SYM(r->r_info), cur;
	const ElfW(Sym) *sym;
	const char *name, *ver;
	void *f, *d;

	if (ELF64_R_TYPE(r->r_info) != type || !si)
		return 0;
	sym = &symtab[si];
	if (sym->st_shndx != SHN_UNDEF ||
	    (type == R_X86_64_GLOB_DAT && ELF64_ST_TYPE(sym->st_info) != STT_FUNC))
		return 0;
	name = str + sym->st_name;
	if (!*name)
		return 0;
	t->kind = plt_kind(name); /* a few of the skipped ones only tell the hooks */
	if (t->kind == PLT_CALL && (special_only || kft_libcall_skip(name)))
		return 0;
	t->name = name;
	t->got = (uint64_t *)(uintptr_t)(p->base + r->r_offset);
	cur = *t->got;
	if (cur && (cur < p->lo || cur >= p->hi)) {
		t->real = cur; /* resolved already (BIND_NOW, or GLOB_DAT) */
	} else {
		/*
		 * The version the program asked for (memcpy@GLIBC_2.2.5 is not
		 * memcpy@@GLIBC_2.14), unless an object earlier in the lookup
		 * scope defines the name unversioned (a preloaded interposer:
		 * sanitizers, libktrace-record.so), which ld.so would bind.
		 */
		ver = plt_version(p, y->versym, y->vn, y->nvn, str, si);
		f = ver ? dlvsym(RTLD_DEFAULT, name, ver) : NULL;
		d = dlsym(RTLD_DEFAULT, name);
		if (!f || (d && !plt_same_object(f, d)))
			f = d;
		if (!f)
			return 0; /* weak and undefined, or not found: left alone */
		t->real = (uint64_t)(uintptr_t)f;
	}
	/* calls into libktrace are its hooks, not the program's calls; but
	 * gcrt1's __monstartup is the program's, whose body libktrace makes a
	 * no-op (lib/kft_pg.c): recorded, as uftrace records it */
	if (plt_in_self(t->real) && strcmp(name, "__monstartup"))
		return 0;
	/* a library function patched at run time (`record -P f@lib`) records
	 * its own calls: hooking its slot too would record each call twice */
	if (kft_dyn_patched(t->real))
		return 0;
	return 1;
}

/*
 * 1 if one of the @n relocations at @r imports a function-tracing hook
 * (__cyg_profile_func_enter, mcount, _mcount, __fentry__): the program is
 * instrumented and gets its hooks from a shared object (libktrace.so).
 */
static int plt_instrumented(const ElfW(Rela) *r, uint64_t n, const ElfW(Sym) *symtab,
			    const char *str)
{
	for (uint64_t i = 0; r && i < n; i++) {
		const char *name = str + symtab[ELF64_R_SYM(r[i].r_info)].st_name;

		if (ELF64_R_SYM(r[i].r_info) && kft_hook_name(name))
			return 1;
	}
	return 0;
}

/* Write the stub for @s at @code. */
static void plt_stub(uint8_t *code, const struct kft_plt_slot *s)
{
	uint64_t v = (uint64_t)(uintptr_t)s, e = (uint64_t)(uintptr_t)kft_plt_entry;
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 }; /* jmp *0(%rip) */

	memset(code, 0xcc, PLT_STUB);
	memcpy(code, endbr, 4);
	code[4] = 0x49; /* movabs $v, %r11 */
	code[5] = 0xbb;
	memcpy(code + 6, &v, 8);
	memcpy(code + 14, jmp, 6);
	memcpy(code + 20, &e, 8);
}

/* Fill @y from @p's dynamic section.  Return: 0, or -ENOEXEC (no symbols, or odd Rela entries). */
static int plt_dyn_read(const struct plt_prog *p, struct plt_dyn *y)
{
	memset(y, 0, sizeof(*y));
	y->relaent = sizeof(ElfW(Rela));
	for (const ElfW(Dyn) *d = p->dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL: y->jmprel = (const void *)(uintptr_t)plt_ptr(p, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: y->pltsz = d->d_un.d_val; break;
		case DT_RELA: y->rela = (const void *)(uintptr_t)plt_ptr(p, d->d_un.d_ptr); break;
		case DT_RELASZ: y->relasz = d->d_un.d_val; break;
		case DT_RELAENT: y->relaent = d->d_un.d_val; break;
		case DT_SYMTAB: y->symtab = (const void *)(uintptr_t)plt_ptr(p, d->d_un.d_ptr); break;
		case DT_STRTAB: y->str = (const void *)(uintptr_t)plt_ptr(p, d->d_un.d_ptr); break;
		case DT_VERSYM: y->versym = (const void *)(uintptr_t)plt_ptr(p, d->d_un.d_ptr); break;
		case DT_VERNEED: y->vn = (const void *)(uintptr_t)plt_ptr(p, d->d_un.d_ptr); break;
		case DT_VERNEEDNUM: y->nvn = d->d_un.d_val; break;
		default: break;
		}
	}
	return y->symtab && y->str && y->relaent == sizeof(ElfW(Rela)) ? 0 : -ENOEXEC;
}

/*
 * The slots to hook, into @todo (room for every relocation): the PLT's
 * (R_X86_64_JUMP_SLOT), or with -fno-plt (no PLT slot but the compiler's
 * own) the GLOB_DAT ones of undefined functions, which calls read
 * directly.  Return: how many.
 */
static uint64_t plt_collect(const struct plt_prog *p, const struct plt_dyn *y, int special_only,
			    struct plt_todo *todo)
{
	uint64_t n = 0, i, npl = y->pltsz / sizeof(ElfW(Rela)), nrel = y->relasz / sizeof(ElfW(Rela));
	int plt = 0;

	for (i = 0; y->jmprel && i < npl; i++)
		if (plt_consider(p, y, &y->jmprel[i], R_X86_64_JUMP_SLOT, special_only, &todo[n]))
			plt += !kft_libcall_always_plt(todo[n++].name);
	if (!plt && y->rela && (!special_only || !y->pltsz))
		for (i = 0; i < nrel; i++)
			n += (uint64_t)plt_consider(p, y, &y->rela[i], R_X86_64_GLOB_DAT, special_only,
						    &todo[n]);
	return n;
}

/*
 * Point the @n GOT slots of @todo at generated stubs (read-only slot
 * infos and read-execute code, mapped apart), making RELRO writable for
 * the moment if a slot lies there.  Return: the number hooked, or
 * -errno (nothing hooked).
 */
static int plt_install(const struct plt_prog *p, const struct plt_todo *todo, uint64_t n)
{
	size_t slots_len = ((size_t)n * sizeof(struct kft_plt_slot) + 4095) & ~(size_t)4095;
	size_t code_len = ((size_t)n * PLT_STUB + 4095) & ~(size_t)4095;
	struct kft_plt_slot *slots;
	uint8_t *code;
	uint64_t i, k = 0;
	int relro_rw = 0, e;

	slots = mmap(NULL, slots_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	code = mmap(NULL, code_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED || code == MAP_FAILED) {
		e = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		slots[i].real = todo[i].real;
		slots[i].fn = (uint64_t)(uintptr_t)todo[i].got;
		slots[i].kind = (uint64_t)todo[i].kind;
		plt_stub(code + i * PLT_STUB, &slots[i]);
	}
	if (mprotect(slots, slots_len, PROT_READ) < 0 ||
	    mprotect(code, code_len, PROT_READ | PROT_EXEC) < 0) {
		e = -errno;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		uint64_t a = (uint64_t)(uintptr_t)todo[i].got;

		if (a >= p->relro && a < p->relro_end && !relro_rw) {
			if (mprotect((void *)(uintptr_t)p->relro, p->relro_end - p->relro,
				     PROT_READ | PROT_WRITE) < 0)
				continue; /* left alone */
			relro_rw = 1;
		}
		__atomic_store_n(todo[i].got, (uint64_t)(uintptr_t)(code + i * PLT_STUB),
				 __ATOMIC_RELEASE);
		k++;
	}
	if (relro_rw)
		mprotect((void *)(uintptr_t)p->relro, p->relro_end - p->relro, PROT_READ);
	return (int)k;
fail:
	if (slots != MAP_FAILED)
		munmap(slots, slots_len);
	if (code != MAP_FAILED)
		munmap(code, code_len);
	return e;
}

int kft_plt_setup(int patched, int special_only)
{
	struct plt_prog p;
	struct plt_dyn y;
	struct plt_todo *todo;
	size_t nrel;
	uint64_t n;
	int rc;

	plt_libcalls = !special_only;
	memset(&p, 0, sizeof(p));
	dl_iterate_phdr(plt_phdr_cb, &p);
	if (!p.found || !p.dyn)
		return -ENOENT; /* static program */
	/* libktrace linked in: its own calls would go through these slots */
	if ((uint64_t)(uintptr_t)kft_plt_enter >= p.lo && (uint64_t)(uintptr_t)kft_plt_enter < p.hi)
		return -EXDEV;
	if (plt_dyn_read(&p, &y) < 0)
		return -ENOEXEC;
	nrel = (size_t)(y.pltsz / sizeof(ElfW(Rela)) + y.relasz / sizeof(ElfW(Rela)));
	if (!nrel)
		return 0;
	/* as uftrace: the library calls of programs whose own calls are traced */
	if (!patched && !plt_instrumented(y.jmprel, y.pltsz / sizeof(ElfW(Rela)), y.symtab, y.str) &&
	    !plt_instrumented(y.rela, y.relasz / sizeof(ElfW(Rela)), y.symtab, y.str))
		return -ENOTSUP;
	todo = kt_calloc(nrel, sizeof(*todo));
	if (!todo)
		return -ENOMEM;
	n = plt_collect(&p, &y, special_only, todo);
	rc = n ? plt_install(&p, todo, n) : 0;
	kt_free(todo);
	return rc;
}

int kft_plt_attach_hooks(void)
{
	struct plt_prog p;
	struct plt_dyn y;
	Dl_info self;
	void *h;
	int n = 0;

	memset(&p, 0, sizeof(p));
	dl_iterate_phdr(plt_phdr_cb, &p);
	if (!p.found || !p.dyn || plt_dyn_read(&p, &y) < 0)
		return 0;
	/* libktrace's own hooks, by its handle: the global scope finds libc's no-op ones first */
	if (!dladdr((void *)(uintptr_t)kft_plt_attach_hooks, &self) ||
	    !(h = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD)))
		return -ENOENT;
	for (int pass = 0; pass < 2; pass++) {
		const ElfW(Rela) *r = pass ? y.rela : y.jmprel;
		uint64_t nr = (pass ? y.relasz : y.pltsz) / sizeof(ElfW(Rela));

		for (uint64_t i = 0; r && i < nr; i++) {
			uint32_t type = ELF64_R_TYPE(r[i].r_info), sym = ELF64_R_SYM(r[i].r_info);
			const char *name = y.str + y.symtab[sym].st_name;
			uint64_t own;

			if (!sym || (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    (!kft_hook_name(name) && strcmp(name, "__cyg_profile_func_exit")) ||
			    !(own = (uint64_t)(uintptr_t)dlsym(h, name)))
				continue;
			if (kft_attach_add_write(p.base + r[i].r_offset, (const uint8_t *)&own, 8, KFT_WRITE_HOOK) == 0)
				n++;
		}
	}
	dlclose(h);
	return n;
}

#else /* !__x86_64__ */

int kft_plt_attach_hooks(void)
{
	return 0;
}

int kft_plt_setup(int patched, int special_only)
{
	(void)patched;
	(void)special_only;
	return -ENOSYS;
}

#endif

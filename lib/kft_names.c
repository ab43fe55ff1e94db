/*
 * lib/kft_names.c - function names of the traced program to addresses, for
 * the configuration a static run loads at program start (KTRACE_CONFIG,
 * KTRACE_CONFIG_TEXT): exact names (kft_resolve()) and shell patterns
 * (kft_glob(), `ktrace record -F 'sqlite3Btree*'`).
 *
 * Names are looked up in the ELF symbol tables (.symtab, else .dynsym) of
 * every object loaded at that moment, main program first, read with
 * elfutils' libelf, which is loaded with dlopen() so that libktrace itself
 * does not depend on it; without libelf only exported symbols (dlsym)
 * resolve and patterns match nothing.  A pattern matches a C++ function by
 * its mangled name, its demangled name, or its demangled name without the
 * parameters (`geo::Rect::*`), demangled with the C++ runtime's
 * __cxa_demangle() when the program has one loaded (any C++ program).
 *
 * Runs in the program's constructor, before main(): not thread-safe, not
 * async-signal-safe; allocates.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kft_debugfile.h"
#include "kft_rt.h"

struct kft_elf_api {
	void *lib;
	unsigned (*version)(unsigned);
	Elf *(*begin)(int, Elf_Cmd, Elf *);
	int (*end)(Elf *);
	Elf_Scn *(*nextscn)(Elf *, Elf_Scn *);
	GElf_Shdr *(*getshdr)(Elf_Scn *, GElf_Shdr *);
	Elf_Data *(*getdata)(Elf_Scn *, Elf_Data *);
	GElf_Sym *(*getsym)(Elf_Data *, int, GElf_Sym *);
	char *(*strptr)(Elf *, size_t, size_t);
	int (*getshdrstrndx)(Elf *, size_t *); /* optional: kft_obj_section() only */
};

#define KFT_MAX_OBJS 512

struct kft_resolver {
	struct kft_elf_api api;
	int have_api;
	unsigned nobj;
	char *(*demangle)(const char *, char *, size_t *, int *); /* __cxa_demangle or NULL */
	struct {
		char path[PATH_MAX];
		uint64_t bias;
		int fd;
		Elf *elf;
		int tried;
		int dfd;    /* its separate debug file (lib/kft_debugfile.h), or -1 */
		Elf *delf;
		int dtried;
	} obj[KFT_MAX_OBJS];
};

static int kft_elf_load(struct kft_elf_api *a)
{
	a->lib = dlopen("libelf.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!a->lib)
		return -1;
	*(void **)&a->version = dlsym(a->lib, "elf_version");
	*(void **)&a->begin = dlsym(a->lib, "elf_begin");
	*(void **)&a->end = dlsym(a->lib, "elf_end");
	*(void **)&a->nextscn = dlsym(a->lib, "elf_nextscn");
	*(void **)&a->getshdr = dlsym(a->lib, "gelf_getshdr");
	*(void **)&a->getdata = dlsym(a->lib, "elf_getdata");
	*(void **)&a->getsym = dlsym(a->lib, "gelf_getsym");
	*(void **)&a->strptr = dlsym(a->lib, "elf_strptr");
	*(void **)&a->getshdrstrndx = dlsym(a->lib, "elf_getshdrstrndx");
	if (!a->version || !a->begin || !a->end || !a->nextscn || !a->getshdr || !a->getdata ||
	    !a->getsym || !a->strptr || a->version(EV_CURRENT) == EV_NONE) {
		dlclose(a->lib);
		a->lib = NULL;
		return -1;
	}
	return 0;
}

static int kft_collect_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kft_resolver *r = arg;
	const char *path = info->dlpi_name;

	(void)size;
	if (r->nobj >= KFT_MAX_OBJS)
		return 1;
	if (!path || !*path) {
		if (r->nobj != 0)
			return 0; /* the vDSO has no file */
		path = "/proc/self/exe";
	}
	snprintf(r->obj[r->nobj].path, PATH_MAX, "%s", path);
	r->obj[r->nobj].bias = info->dlpi_addr;
	r->obj[r->nobj].fd = -1;
	r->obj[r->nobj].dfd = -1;
	r->nobj++;
	return 0;
}

struct kft_resolver *kft_resolver_open(void)
{
	struct kft_resolver *r = kt_calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->have_api = kft_elf_load(&r->api) == 0;
	*(void **)&r->demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	dl_iterate_phdr(kft_collect_obj, r);
	return r;
}

void kft_resolver_close(struct kft_resolver *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->nobj; i++) {
		if (r->obj[i].elf)
			r->api.end(r->obj[i].elf);
		if (r->obj[i].fd >= 0)
			close(r->obj[i].fd);
		if (r->obj[i].delf)
			r->api.end(r->obj[i].delf);
		if (r->obj[i].dfd >= 0)
			close(r->obj[i].dfd);
	}
	if (r->api.lib)
		dlclose(r->api.lib);
	kt_free(r);
}

/* Opens object @i's ELF file if not yet tried; its Elf handle or NULL. */
static Elf *kft_obj_elf(struct kft_resolver *r, unsigned i)
{
	if (!r->have_api || i >= r->nobj)
		return NULL;
	if (!r->obj[i].tried) {
		r->obj[i].tried = 1;
		r->obj[i].fd = open(r->obj[i].path, O_RDONLY | O_CLOEXEC);
		if (r->obj[i].fd >= 0)
			r->obj[i].elf = r->api.begin(r->obj[i].fd, ELF_C_READ, NULL);
	}
	return r->obj[i].elf;
}

/* The data of @elf's first section of type @type (and name @name, if not NULL), or NULL. */
static Elf_Data *kft_elf_section(struct kft_elf_api *a, Elf *elf, unsigned type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (name && (!a->getshdrstrndx || a->getshdrstrndx(elf, &shstrndx) != 0))
		return NULL;
	while ((scn = a->nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *s;

		if (!a->getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		if (!name || ((s = a->strptr(elf, shstrndx, sh.sh_name)) && !strcmp(s, name)))
			return a->getdata(scn, NULL);
	}
	return NULL;
}

/* @elf's build id into *@id (pointing into its data); its length, 0 if none. */
static size_t kft_elf_build_id(struct kft_elf_api *a, Elf *elf, const unsigned char **id)
{
	Elf_Scn *scn = NULL;

	while ((scn = a->nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (a->getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && (d = a->getdata(scn, NULL)) &&
		    d->d_buf && (n = kft_note_build_id(d->d_buf, d->d_size, id)) != 0)
			return n;
	}
	return 0;
}

/*
 * Object @i's separate debug file (a stripped object's .symtab is there),
 * opened if not yet tried: its Elf handle, or NULL if it has none or the
 * one found is another build's.
 */
static Elf *kft_obj_debug_elf(struct kft_resolver *r, unsigned i)
{
	struct kft_elf_api *a = &r->api;
	Elf *elf = kft_obj_elf(r, i);
	const unsigned char *id = NULL, *did = NULL;
	const char *link = NULL;
	Elf_Data *d;
	size_t idlen;

	if (!elf || r->obj[i].dtried)
		return r->obj[i].delf;
	r->obj[i].dtried = 1;
	idlen = kft_elf_build_id(a, elf, &id);
	d = kft_elf_section(a, elf, SHT_PROGBITS, ".gnu_debuglink");
	if (d && d->d_buf && d->d_size > 4 && memchr(d->d_buf, 0, d->d_size))
		link = d->d_buf;
	r->obj[i].dfd = kft_debugfile_open(r->obj[i].path, id, idlen, link);
	if (r->obj[i].dfd < 0)
		return NULL;
	r->obj[i].delf = a->begin(r->obj[i].dfd, ELF_C_READ, NULL);
	if (r->obj[i].delf && idlen &&
	    (kft_elf_build_id(a, r->obj[i].delf, &did) != idlen || memcmp(id, did, idlen))) {
		a->end(r->obj[i].delf); /* another build's debug file: its addresses are not ours */
		r->obj[i].delf = NULL;
	}
	return r->obj[i].delf;
}

/*
 * Call @fn(name, address, size, arg) for each defined function symbol of
 * @elf's first symbol table of type @type until it returns nonzero.
 * Return: what @fn returned last, or 0; *@found set if @elf has the table.
 */
static int kft_table_syms(struct kft_resolver *r, unsigned i, Elf *elf, unsigned type,
			  kft_sym_fn *fn, void *arg, int *found)
{
	struct kft_elf_api *a = &r->api;
	Elf_Scn *scn = NULL;

	while ((scn = a->nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!a->getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		*found = 1;
		if (!(d = a->getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *s;
			int rc;

			if (!a->getsym(d, (int)k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			s = a->strptr(elf, sh.sh_link, sym.st_name);
			if (s && (rc = fn(s, r->obj[i].bias + sym.st_value, sym.st_size, arg)) != 0)
				return rc;
		}
	}
	return 0;
}

/*
 * Call @fn(name, address, size, arg) for each defined function symbol of
 * object @i until it returns nonzero: its .symtab, else its debug file's,
 * else its .dynsym (a .symtab is complete: .dynsym adds nothing to it).
 * Return: what @fn returned last, or -1 if the object has no readable ELF.
 */
static int kft_each_sym(struct kft_resolver *r, unsigned i, kft_sym_fn *fn, void *arg)
{
	Elf *elf = kft_obj_elf(r, i), *delf;
	int found = 0, rc;

	if (!elf)
		return -1;
	rc = kft_table_syms(r, i, elf, SHT_SYMTAB, fn, arg, &found);
	if (!found && (delf = kft_obj_debug_elf(r, i)) != NULL)
		rc = kft_table_syms(r, i, delf, SHT_SYMTAB, fn, arg, &found);
	if (!found)
		rc = kft_table_syms(r, i, elf, SHT_DYNSYM, fn, arg, &found);
	return rc;
}

struct exact {
	const char *name;
	uint32_t len;
	uint64_t addr;
};

static int match_exact(const char *s, uint64_t addr, uint64_t size, void *arg)
{
	struct exact *e = arg;

	if (strncmp(s, e->name, e->len) == 0 && s[e->len] == '\0') {
		e->addr = addr;
		return 1;
	}
	return 0;
}

int kft_resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	struct kft_resolver *r = arg;
	struct exact e = { name, len, 0 };
	char buf[1024];
	void *p;

	if (r->have_api)
		for (unsigned i = 0; i < r->nobj; i++)
			if (kft_each_sym(r, i, match_exact, &e) == 1) {
				*addr = e.addr;
				return 0;
			}
	if (len >= sizeof(buf))
		return -ENOENT;
	memcpy(buf, name, len);
	buf[len] = '\0';
	p = dlsym(RTLD_DEFAULT, buf);
	if (!p)
		return -ENOENT;
	*addr = (kt_u64)(uintptr_t)p;
	return 0;
}

struct globbing {
	struct kft_resolver *r;
	char pat[1024];
	kt_u64 *addrs;
	kt_u32 max, n;
};

/* kft_rt.h: does @s match @pat by itself, demangled, or demangled without parameters? */
int kft_sym_match(const struct kft_resolver *r, const char *pat, const char *s)
{
	char *d;
	int hit;

	if (fnmatch(pat, s, 0) == 0)
		return 1;
	if (!r->demangle || s[0] != '_' || s[1] != 'Z')
		return 0;
	d = r->demangle(s, NULL, NULL, NULL);
	if (!d)
		return 0;
	hit = fnmatch(pat, d, 0) == 0;
	if (!hit) {
		char *paren = strchr(d, '(');

		if (paren) {
			*paren = '\0';
			hit = fnmatch(pat, d, 0) == 0;
		}
	}
	free(d);
	return hit;
}

static int match_glob(const char *s, uint64_t addr, uint64_t size, void *arg)
{
	struct globbing *g = arg;
	kt_u32 stored = g->n < g->max ? g->n : g->max;

	(void)size;
	if (!kft_sym_match(g->r, g->pat, s))
		return 0;
	for (kt_u32 k = 0; k < stored; k++)
		if (g->addrs[k] == addr)
			return 0; /* an alias of a function already found */
	if (g->n < g->max)
		g->addrs[g->n] = addr;
	g->n++;
	return 0;
}

int kft_glob(void *arg, const char *pat, kt_u32 len, kt_u64 *addrs, kt_u32 max)
{
	struct kft_resolver *r = arg;
	struct globbing g;

	if (len >= sizeof(g.pat))
		return -ENAMETOOLONG;
	g.r = r;
	memcpy(g.pat, pat, len);
	g.pat[len] = '\0';
	g.addrs = addrs;
	g.max = max;
	g.n = 0;
	for (unsigned i = 0; r->have_api && i < r->nobj; i++)
		kft_each_sym(r, i, match_glob, &g);
	return (int)(g.n > 0x7fffffffu ? 0x7fffffffu : g.n);
}

/* ---- objects, sections and function symbols, for lib/kft_patch.c ---- */

unsigned kft_resolver_nobj(const struct kft_resolver *r)
{
	return r->have_api ? r->nobj : 0;
}

const char *kft_resolver_obj(const struct kft_resolver *r, unsigned i, uint64_t *bias)
{
	if (i >= r->nobj)
		return NULL;
	*bias = r->obj[i].bias;
	return r->obj[i].path;
}

int kft_obj_section(struct kft_resolver *r, unsigned i, const char *name, uint64_t *addr,
		    uint64_t *size)
{
	struct kft_elf_api *a = &r->api;
	Elf *elf = kft_obj_elf(r, i);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || !a->getshdrstrndx || a->getshdrstrndx(elf, &shstrndx) != 0)
		return -1;
	while ((scn = a->nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *s;

		if (!a->getshdr(scn, &sh))
			continue;
		s = a->strptr(elf, shstrndx, sh.sh_name);
		if (s && !strcmp(s, name)) {
			if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS)
				return -1;
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return 0;
		}
	}
	return -1;
}

int kft_obj_funcs(struct kft_resolver *r, unsigned i, kft_sym_fn *fn, void *arg)
{
	if (!r->have_api || i >= r->nobj)
		return -1;
	return kft_each_sym(r, i, fn, arg);
}

int kft_obj_imports(struct kft_resolver *r, unsigned i, int (*match)(const char *name))
{
	struct kft_elf_api *a = &r->api;
	Elf *elf = kft_obj_elf(r, i);
	Elf_Scn *scn = NULL;

	if (!elf)
		return -1;
	while ((scn = a->nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!a->getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = a->getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *s;

			if (a->getsym(d, (int)k, &sym) && sym.st_shndx == SHN_UNDEF &&
			    (s = a->strptr(elf, sh.sh_link, sym.st_name)) && match(s))
				return 1;
		}
	}
	return 0;
}

/*
 * reader/symbols.c - addresses of a trace to function names, source lines
 * and inlined frames, with elfutils: libelf for the build id and program
 * headers of each object, libdwfl for symbol tables, DWARF line tables and
 * scopes (and for finding separate debug files).
 *
 * The address space is the one the metadata's `map START END OFFSET
 * BUILDID PATH` lines describe (lib/metadata.c writes one per PT_LOAD
 * segment of every loaded object, from dl_iterate_phdr()).  Objects are
 * opened lazily, on the first address that falls in them; an object is
 * reported to libdwfl at its load bias (segment start minus the p_vaddr of
 * the program header with the recorded file offset), which places PIE
 * executables and shared libraries where the traced process had them.
 *
 * An object's file is opened with ksf_read_open(KSF_FOLLOW): a link is
 * followed, but the file reached must be a regular file (a FIFO, device or
 * directory is refused before it is opened, so a planted path cannot hang
 * the reader or make it read a device).
 * An object whose file is missing, is not ELF, or has another build id
 * than the recorded one is not used: its addresses are shown as
 * "[NAME]+0xOFF" (file offset), and one warning names the file.  A
 * stripped object (no .symtab, no debug file) is used for what its
 * dynamic symbols say, with one warning when a function address in it has
 * no symbol.  Addresses outside every map (kernel function traces) are
 * named from DIR/kallsyms when the trace has one.  The address of a GOT
 * slot of a library function (how lib/kft_plt.c records a library call)
 * is named after the relocation's symbol: the name the program called
 * ("malloc", not the alias "__libc_malloc" or an IFUNC's implementation),
 * as uftrace names library calls.  Results are cached per
 * (address, flags).  C++ and Rust names are demangled (reader/demangle.c)
 * unless ktr_syms_set_demangle() turned it off.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/safefile.h"
#include "reader/internal.h"

enum { MOD_UNTRIED = 0, MOD_OK = 1, MOD_UNUSABLE = 2 };

struct sym_mod {
	const char *path;    /* as recorded (owned by the trace) */
	const char *buildid; /* recorded, "" if none */
	const char *modname; /* base name of path */
	char *file;          /* ktr_syms_set_file() override, or NULL */
	int state;
	int stripped;        /* no .symtab and no separate debug file */
	int warned;
	Dwfl_Module *dm;
	Dwfl *own;           /* its own Dwfl (traces with map-gen lines), or NULL: s->dwfl's */
	size_t first_seg;    /* a segment of this object (for the bias) */
	struct got_ent *got; /* its GOT slots of library functions, by address */
	size_t ngot, gotcap;
	uint64_t gotbias;    /* load bias while got_load() runs */
	int got_done;
};

/*
 * A GOT slot of a library function the object calls: lib/kft_plt.c records
 * a library call with its slot's address as the function.
 */
struct got_ent {
	uint64_t addr;    /* where the slot was in the traced process */
	const char *name; /* the relocation's symbol (in libelf's data) */
};

struct sym_seg {
	uint64_t start, end, offset;
	unsigned mod;
};

struct sym_cache {
	uint64_t addr;
	unsigned flags; /* 0 = empty slot; stored as flags | 0x100 */
	struct ktr_sym sym;
};

/* A kernel function symbol from DIR/kallsyms. */
struct ksym {
	uint64_t addr;
	const char *name; /* points into ktext */
};

struct ktr_syms {
	struct ktr_trace *t;
	char *ktext;          /* DIR/kallsyms, names NUL-terminated in place */
	struct ksym *ksyms;   /* sorted by address */
	size_t nksyms;
	Dwfl *dwfl;
	struct sym_mod *mods;
	size_t nmods;
	struct sym_seg *segs; /* sorted by start */
	size_t nsegs;
	unsigned *modof;      /* per map line: its object */
	size_t *nextmap;      /* per map line: the object's next line, SIZE_MAX at the end */
	struct sym_cache *cache;
	size_t ncache, capcache;
	struct ktr_demangler *dm; /* NULL: names as the symbol tables spell them */
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static int cmp_seg(const void *a, const void *b)
{
	const struct sym_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name; /* file order */
}

/*
 * DIR/kallsyms (`ktrace kft --kernel extract` writes it): kernel function
 * symbols as /proc/kallsyms prints them, "ADDR TYPE NAME [MODULE]", for
 * addresses of kernel function traces, which no map line covers.  Lines
 * that do not parse, non-text symbols and zero addresses are skipped.
 */
static void load_kallsyms(struct ktr_syms *s)
{
	struct ktr_file f;
	size_t n = 0, cap = 0;

	if (ktr_file_open(s->t, &f, "kallsyms", 1) < 0 || !f.size) {
		ktr_file_close(&f);
		return;
	}
	s->ktext = malloc(f.size + 1);
	if (s->ktext) {
		memcpy(s->ktext, f.p, f.size);
		s->ktext[f.size] = 0;
	}
	ktr_file_close(&f);
	for (char *line = s->ktext, *next; line && *line; line = next) {
		uint64_t a = 0;
		char *p = line, *name;
		int digits = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		for (; digits < 16; p++, digits++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
				: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;

			if (d < 0)
				break;
			a = a << 4 | (uint64_t)d;
		}
		if (!digits || !a || p[0] != ' ' || !p[1] || !strchr("tTwW", p[1]) || p[2] != ' ' || !p[3])
			continue;
		name = p + 3;
		name[strcspn(name, " \t")] = 0;
		if (!*name)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 4096;
			struct ksym *k = realloc(s->ksyms, ncap * sizeof(*k));

			if (!k)
				break;
			s->ksyms = k;
			cap = ncap;
		}
		s->ksyms[n].addr = a;
		s->ksyms[n].name = name;
		n++;
	}
	s->nksyms = n;
	if (n > 1)
		qsort(s->ksyms, n, sizeof(*s->ksyms), cmp_ksym);
}

/* The kernel symbol containing @addr (up to the next symbol, 64 kB after the last). */
static void kernel_sym(const struct ktr_syms *s, uint64_t addr, uint64_t pc, struct ktr_sym *out)
{
	size_t lo = 0, hi = s->nksyms;

	while (lo < hi) { /* first symbol above pc */
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	lo--;
	while (lo > 0 && s->ksyms[lo - 1].addr == s->ksyms[lo].addr)
		lo--; /* the first name at that address */
	if (pc - s->ksyms[lo].addr >= (hi < s->nksyms ? s->ksyms[hi].addr - s->ksyms[lo].addr : 65536))
		return;
	out->name = s->ksyms[lo].name;
	out->offset = addr - s->ksyms[lo].addr;
}

/* Map indexes ordered by (path, build id, line): one object's lines together. */
static int cmp_map_idx(const void *a, const void *b, void *arg)
{
	const struct ktr_map_ent *maps = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(maps[x].m.path, maps[y].m.path);

	if (!c)
		c = strcmp(maps[x].m.buildid, maps[y].m.buildid);
	if (!c && maps[x].m.load_ns != maps[y].m.load_ns)
		c = maps[x].m.load_ns < maps[y].m.load_ns ? -1 : 1;
	return c ? c : (x < y ? -1 : x > y);
}

/* Lines @x and @y are the same object (and, for map-gen lines, the same load of it). */
static int same_obj(const struct ktr_map *x, const struct ktr_map *y)
{
	return !strcmp(x->path, y->path) && !strcmp(x->buildid, y->buildid) &&
	       x->load_ns == y->load_ns;
}

struct ktr_syms *ktr_syms_new(struct ktr_trace *t)
{
	struct ktr_syms *s = calloc(1, sizeof(*s));
	size_t n = t->nmaps, m = 0, *idx = NULL, *first = NULL;
	int timed = t->nmapgen > 0; /* map-gen lines describe every load: `map` lines are not used */

	if (!s)
		goto nomem;
	s->t = t;
	s->dm = ktr_demangler_new(); /* demangled names by default */
	elf_version(EV_CURRENT);
	s->mods = calloc(n ? n : 1, sizeof(*s->mods));
	s->segs = calloc(n ? n : 1, sizeof(*s->segs));
	s->modof = calloc(n ? n : 1, sizeof(*s->modof));
	s->nextmap = calloc(n ? n : 1, sizeof(*s->nextmap));
	idx = malloc((n ? n : 1) * sizeof(*idx));
	first = malloc((n ? n : 1) * sizeof(*first));
	if (!s->mods || !s->segs || !s->modof || !s->nextmap || !idx || !first)
		goto nomem;
	/*
	 * One object per (path, build id), numbered in the order of their first
	 * line (the program's first): sorted once, O(n log n), not a search of
	 * the objects per line.  nextmap[] chains each object's lines.
	 */
	for (size_t i = 0; i < n; i++) {
		s->nextmap[i] = SIZE_MAX;
		s->modof[i] = UINT_MAX;
		if (t->maps[i].m.timed == timed)
			idx[m++] = i;
	}
	qsort_r(idx, m, sizeof(*idx), cmp_map_idx, t->maps);
	for (size_t j = 0; j < m; j++) {
		size_t i = idx[j];

		first[i] = j && same_obj(&t->maps[idx[j - 1]].m, &t->maps[i].m) ? first[idx[j - 1]] : i;
		if (first[i] != i)
			s->nextmap[idx[j - 1]] = i;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ktr_map *m = &t->maps[i].m;
		size_t k;

		if (m->timed != timed)
			continue;
		if (first[i] == i) {
			const char *slash = strrchr(m->path, '/');

			k = s->nmods++;
			s->mods[k].path = m->path;
			s->mods[k].buildid = m->buildid;
			s->mods[k].modname = slash && slash[1] ? slash + 1 : m->path;
			s->mods[k].first_seg = i;
		} else {
			k = s->modof[first[i]];
		}
		s->modof[i] = (unsigned)k;
		s->segs[s->nsegs].start = m->start;
		s->segs[s->nsegs].end = m->end;
		s->segs[s->nsegs].offset = m->offset;
		s->segs[s->nsegs].mod = (unsigned)k;
		s->nsegs++;
	}
	free(idx);
	free(first);
	idx = first = NULL;
	qsort(s->segs, s->nsegs, sizeof(*s->segs), cmp_seg);
	load_kallsyms(s);
	return s;
nomem:
	free(idx);
	free(first);
	ktr_syms_free(s);
	errno = ENOMEM;
	return NULL;
}

int ktr_syms_set_file(struct ktr_syms *s, const char *path, const char *file)
{
	int rc = -ENOENT;

	for (size_t k = 0; k < s->nmods; k++) { /* every load of the object */
		struct sym_mod *m = &s->mods[k];

		if (path ? strcmp(m->path, path) != 0 : k != 0)
			continue;
		free(m->file);
		m->file = strdup(file);
		if (!m->file)
			return -ENOMEM;
		m->state = MOD_UNTRIED;
		rc = 0;
	}
	return rc;
}

void ktr_syms_free(struct ktr_syms *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t k = 0; s->mods && k < s->nmods; k++) {
		if (s->mods[k].own)
			dwfl_end(s->mods[k].own);
		free(s->mods[k].file);
		free(s->mods[k].got);
	}
	free(s->mods);
	free(s->segs);
	free(s->modof);
	free(s->nextmap);
	free(s->cache);
	ktr_demangler_free(s->dm);
	free(s->ksyms);
	free(s->ktext);
	free(s);
}

/* One warning per object: "FILE: warning: WHAT; addresses in it are printed as [NAME]+0xOFFSET". */
static void warn(struct ktr_syms *s, struct sym_mod *m, const char *what)
{
	const char *file = m->file ? m->file : m->path;

	if (m->warned)
		return;
	m->warned = 1;
	ktr_diag(s->t, 0, "%s: warning: %s; addresses in it are printed as [%s]+0xOFFSET", file, what,
		 m->modname);
}

static void hex(const unsigned char *p, size_t n, char *out, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 3 <= len; i++, k += 2) {
		static const char d[] = "0123456789abcdef";

		out[k] = d[p[i] >> 4];
		out[k + 1] = d[p[i] & 15];
	}
	out[k] = 0;
}

/*
 * mod_check_elf - is @elf (object @m) an ELF file whose build id is the one
 * the trace recorded (if it recorded one)?  Its header into *@eh.
 * Returns 0, or -1 with a warning.
 */
static int mod_check_elf(struct ktr_syms *s, struct sym_mod *m, Elf *elf, GElf_Ehdr *eh)
{
	const void *id = NULL;
	char idhex[2 * 64 + 1] = "";
	ssize_t idlen;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, eh)) {
		warn(s, m, "not an ELF file");
		return -1;
	}
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen > 0)
		hex(id, (size_t)idlen, idhex, sizeof(idhex));
	if (m->buildid[0] && strcmp(idhex, m->buildid) != 0) {
		char why[400];

		snprintf(why, sizeof(why), "build id %s differs from the trace's %.128s (the file changed since the trace was taken)",
			 idhex[0] ? idhex : "(none)", m->buildid);
		warn(s, m, why);
		return -1;
	}
	return 0;
}

/*
 * mod_bias - object @m's load bias (bytes, into *@bias): a PT_LOAD program
 * header of @elf at the file offset of one of its map lines; 0 for an
 * ET_EXEC (@eh).  Returns 0, or -1 with a warning if no header matches.
 */
static int mod_bias(struct ktr_syms *s, struct sym_mod *m, Elf *elf, const GElf_Ehdr *eh, uint64_t *bias)
{
	size_t nph = 0;
	int matched = 0;

	/* this object's map lines only (nextmap[]): linear in the lines overall */
	for (size_t i = m->first_seg; i != SIZE_MAX && i < s->t->nmaps && !matched; i = s->nextmap[i]) {
		const struct ktr_map *mp = &s->t->maps[i].m;

		if (elf_getphdrnum(elf, &nph) < 0)
			break;
		for (size_t k = 0; k < nph; k++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_offset == mp->offset) {
				*bias = mp->start - ph.p_vaddr;
				matched = 1;
				break;
			}
		}
	}
	if (eh->e_type == ET_EXEC) {
		*bias = 0;
	} else if (!matched) {
		warn(s, m, "its program headers do not match the trace's map lines");
		return -1;
	}
	return 0;
}

/* elf_has_symtab - does @elf have a .symtab (SHT_SYMTAB) section?  1 yes, 0 no. */
static int elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	int has = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			has = 1;
	}
	return has;
}

/*
 * mod_report - report object @m (@file, open as @fd, loaded at @bias) to
 * libdwfl: the shared Dwfl, or one of its own.  Returns 0 (libdwfl owns
 * @fd now), or -1 with a warning (@fd is still the caller's).
 */
static int mod_report(struct ktr_syms *s, struct sym_mod *m, const char *file, int fd, uint64_t bias)
{
	/*
	 * With map-gen lines, objects loaded in turn at the same address would
	 * overlap in one Dwfl (libdwfl refuses that): each load gets a Dwfl of
	 * its own then.
	 */
	if (s->t->nmapgen) {
		m->own = dwfl_begin(&callbacks);
		if (!m->own) {
			warn(s, m, dwfl_errmsg(-1));
			return -1;
		}
		dwfl_report_begin(m->own);
		m->dm = dwfl_report_elf(m->own, m->modname, file, fd, bias, true);
		dwfl_report_end(m->own, NULL, NULL);
	} else {
		if (!s->dwfl) {
			s->dwfl = dwfl_begin(&callbacks);
			if (!s->dwfl) {
				warn(s, m, dwfl_errmsg(-1));
				return -1;
			}
		}
		dwfl_report_begin_add(s->dwfl);
		m->dm = dwfl_report_elf(s->dwfl, m->modname, file, fd, bias, true);
		dwfl_report_end(s->dwfl, NULL, NULL);
	}
	if (!m->dm) {
		warn(s, m, dwfl_errmsg(-1));
		return -1;
	}
	return 0;
}

/*
 * Open object @m: check its build id, find its load bias, report it to
 * libdwfl.  On any problem the object becomes unusable, with a warning.
 */
static void mod_open(struct ktr_syms *s, struct sym_mod *m)
{
	const char *file = m->file ? m->file : m->path;
	int fd, has_symtab;
	Elf *elf;
	GElf_Ehdr eh;
	uint64_t bias = 0;

	m->state = MOD_UNUSABLE;
	if (!m->file && !strchr(file, '/')) { /* linux-vdso.so.1 and the like */
		warn(s, m, "no file to read symbols from");
		return;
	}
	/* a link is followed (libraries are reached through some), but only to a
	 * regular file, opened O_NONBLOCK: a map path naming a FIFO or a device
	 * (itself or through a link) is refused before it is opened */
	fd = ksf_read_open(NULL, file, KSF_FOLLOW);
	if (fd < 0) {
		warn(s, m, ksf_read_why(fd));
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (mod_check_elf(s, m, elf, &eh) < 0 || mod_bias(s, m, elf, &eh, &bias) < 0)
		goto fail;
	has_symtab = elf_has_symtab(elf);
	elf_end(elf);
	elf = NULL;
	if (mod_report(s, m, file, fd, bias) < 0)
		goto fail;
	fd = -1; /* libdwfl owns it now */
	m->state = MOD_OK;
	if (!has_symtab) {
		const char *debugfile = NULL;
		Dwarf_Addr b;

		dwfl_module_getdwarf(m->dm, &b); /* looks for a separate debug file */
		dwfl_module_info(m->dm, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
		m->stripped = debugfile == NULL;
	}
	return;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static const struct sym_seg *find_seg(const struct ktr_syms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nsegs;

	while (lo < hi) { /* first segment starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (s->segs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < s->segs[lo - 1].end ? &s->segs[lo - 1] : NULL;
}

/* The name of a DWARF subprogram or inlined instance (following its origin). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	if (!n && dwarf_attr_integrate(die, DW_AT_linkage_name, &a))
		n = dwarf_formstring(&a);
	return n ? n : "?";
}

static void inline_frames(struct ktr_syms *s, struct sym_mod *m, uint64_t pc, struct ktr_sym *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(m->dm, pc, &bias), *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n;

	if (!cu)
		return;
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	if (n <= 0)
		return;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	for (int i = 0; i < n && out->ninline < KTR_SYM_MAX_INLINE; i++) {
		struct ktr_inline_frame *f;
		Dwarf_Attribute a;
		Dwarf_Word w;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		f = &out->inl[out->ninline++];
		f->name = ktr_demangle(s->dm, die_name(&scopes[i]));
		f->call_src = NULL;
		f->call_line = 0;
		if (files && dwarf_attr(&scopes[i], DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
		    w < nfiles)
			f->call_src = dwarf_filesrc(files, w, NULL, NULL);
		if (dwarf_attr(&scopes[i], DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
			f->call_line = (unsigned)w;
	}
	free(scopes);
}

/* qsort/bsearch order of struct got_ent: by address. */
static int cmp_got(const void *a, const void *b)
{
	const struct got_ent *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

size_t ktr_elf_libcall_slots(struct Elf *elf, unsigned type,
			     int (*fn)(const char *name, uint64_t slot, void *arg), void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t n = 0;

	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, lsh;
		Elf_Scn *ls;
		Elf_Data *rd, *sd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		ls = elf_getscn(elf, sh.sh_link);
		if (!ls || !gelf_getshdr(ls, &lsh) || lsh.sh_type != SHT_DYNSYM)
			continue;
		rd = elf_getdata(scn, NULL);
		sd = elf_getdata(ls, NULL);
		if (!rd || !sd)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;

			if (!gelf_getrela(rd, (int)i, &r))
				break;
			if (GELF_R_TYPE(r.r_info) != type || !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    sym.st_shndx != SHN_UNDEF ||
			    (type == R_X86_64_GLOB_DAT && GELF_ST_TYPE(sym.st_info) != STT_FUNC))
				continue;
			name = elf_strptr(elf, lsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			n++;
			if (fn(name, r.r_offset, arg))
				return n;
		}
	}
	return n;
}

/* ktr_elf_libcall_slots() callback: one slot into @arg's module (-1: no memory). */
static int got_add(const char *name, uint64_t slot, void *arg)
{
	struct sym_mod *m = arg;

	if (m->ngot == m->gotcap) {
		size_t cap = m->gotcap ? 2 * m->gotcap : 64;
		struct got_ent *n = realloc(m->got, cap * sizeof(*n));

		if (!n)
			return -1;
		m->got = n;
		m->gotcap = cap;
	}
	m->got[m->ngot].addr = slot + m->gotbias;
	m->got[m->ngot++].name = name;
	return 0;
}

/*
 * The GOT slots of @m's library calls (ktr_elf_libcall_slots(): the PLT's,
 * and a -fno-plt build's), at the module's load bias, sorted.  Built on
 * first use; none on other machines or without memory.
 */
static void got_load(struct sym_mod *m)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(m->dm, &bias);

	m->got_done = 1;
	if (!elf)
		return;
	m->gotbias = bias;
	ktr_elf_libcall_slots(elf, R_X86_64_JUMP_SLOT, got_add, m);
	ktr_elf_libcall_slots(elf, R_X86_64_GLOB_DAT, got_add, m);
	if (m->ngot)
		qsort(m->got, m->ngot, sizeof(*m->got), cmp_got);
}

/* The library function whose GOT slot in @m is at @addr, or NULL. */
static const char *got_name(struct sym_mod *m, uint64_t addr)
{
	struct got_ent key = { addr, NULL }, *e;

	if (!m->got_done)
		got_load(m);
	if (!m->ngot)
		return NULL;
	e = bsearch(&key, m->got, m->ngot, sizeof(*m->got), cmp_got);
	return e ? e->name : NULL;
}

/*
 * With map-gen lines: the segment of the load that @addr (tagged by
 * ktr_call_decode() with its map-gen line, or plain: the latest load
 * covering it) is in, built into *@tmp; *@addr loses its tag.
 */
static const struct sym_seg *find_gen_seg(struct ktr_syms *s, uint64_t *addr, struct sym_seg *tmp)
{
	uint64_t gen = KTR_ADDR_GEN(*addr), a = KTR_ADDR_PLAIN(*addr);
	size_t i = SIZE_MAX;
	const struct ktr_map *m;

	if (gen && gen <= s->t->nmaps && s->t->maps[gen - 1].m.timed &&
	    a >= s->t->maps[gen - 1].m.start && a < s->t->maps[gen - 1].m.end) {
		i = (size_t)gen - 1;
	} else {
		/* untagged, or not a tag of this trace: an address as it is (a
		 * kernel address, a user address above 2^47) */
		a = *addr;
		i = ktr_map_pick(s->t, a, UINT64_MAX, NULL);
	}
	if (i == SIZE_MAX || s->modof[i] == UINT_MAX)
		return NULL;
	m = &s->t->maps[i].m;
	*addr = a;
	tmp->start = m->start;
	tmp->end = m->end;
	tmp->offset = m->offset;
	tmp->mod = s->modof[i];
	return tmp;
}

static void resolve(struct ktr_syms *s, uint64_t addr, unsigned flags, struct ktr_sym *out)
{
	struct sym_seg tmp;
	const struct sym_seg *seg = s->t->nmapgen ? find_gen_seg(s, &addr, &tmp) : find_seg(s, addr);
	struct sym_mod *m;
	uint64_t pc = (flags & KTR_SYM_RETADDR) && addr ? addr - 1 : addr;
	GElf_Off off = 0;
	GElf_Sym es;
	const char *name;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	if (!seg) {
		if (s->nksyms)
			kernel_sym(s, addr, pc, out);
		return;
	}
	m = &s->mods[seg->mod];
	out->module = m->path;
	out->modname = m->modname;
	out->modoff = addr - seg->start + seg->offset;
	if (m->state == MOD_UNTRIED)
		mod_open(s, m);
	if (m->state != MOD_OK)
		return;
	/* a library call (lib/kft_plt.c): the GOT slot names the function called */
	name = pc == addr ? got_name(m, addr) : NULL;
	if (name) {
		out->name = ktr_demangle(s->dm, name);
		out->offset = 0;
		return;
	}
	name = dwfl_module_addrinfo(m->dm, pc, &off, &es, NULL, NULL, NULL);
	if (name && *name) {
		out->name = ktr_demangle(s->dm, name);
		out->offset = off + (pc != addr);
	} else if (!(flags & KTR_SYM_RETADDR) && m->stripped) {
		warn(s, m, "no symbol table (stripped, no debug file found)");
	}
	if (flags & KTR_SYM_LINES) {
		Dwfl_Line *l = dwfl_module_getsrc(m->dm, pc);
		int line = 0;

		if (l) {
			out->src = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
			out->line = line > 0 ? (unsigned)line : 0;
		}
	}
	if (flags & KTR_SYM_INLINE)
		inline_frames(s, m, pc, out);
}

static size_t slot_of(uint64_t addr, unsigned flags, size_t mask)
{
	uint64_t h = (addr ^ ((uint64_t)flags << 59)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & mask;
}

const struct ktr_sym *ktr_sym_lookup(struct ktr_syms *s, uint64_t addr, unsigned flags,
				     struct ktr_sym *out)
{
	size_t mask, i;

	flags &= KTR_SYM_RETADDR | KTR_SYM_LINES | KTR_SYM_INLINE;
	if (s->ncache * 2 >= s->capcache) {
		size_t cap = s->capcache ? 2 * s->capcache : 1024;
		struct sym_cache *n = calloc(cap, sizeof(*n));

		if (n) {
			for (size_t k = 0; k < s->capcache; k++) {
				struct sym_cache *e = &s->cache[k];
				size_t j;

				if (!e->flags)
					continue;
				for (j = slot_of(e->addr, e->flags, cap - 1); n[j].flags; j = (j + 1) & (cap - 1))
					;
				n[j] = *e;
			}
			free(s->cache);
			s->cache = n;
			s->capcache = cap;
		}
	}
	if (!s->capcache) {
		resolve(s, addr, flags, out);
		return out;
	}
	mask = s->capcache - 1;
	for (i = slot_of(addr, flags | 0x100, mask); s->cache[i].flags; i = (i + 1) & mask)
		if (s->cache[i].addr == addr && s->cache[i].flags == (flags | 0x100)) {
			*out = s->cache[i].sym;
			return out;
		}
	resolve(s, addr, flags, out);
	if (s->ncache * 2 < s->capcache) {
		s->cache[i].addr = addr;
		s->cache[i].flags = flags | 0x100;
		s->cache[i].sym = *out;
		s->ncache++;
	}
	return out;
}

const struct ktr_sym *ktr_sym_lookup_at(struct ktr_syms *s, uint64_t addr, uint64_t ns,
					unsigned flags, struct ktr_sym *out)
{
	if (s->t->nmapgen && addr && !KTR_ADDR_GEN(addr)) {
		int amb = 0;
		size_t i = ktr_map_pick(s->t, addr, ns, &amb);

		if (i != SIZE_MAX && amb && i + 1 < (1u << (64 - KTR_ADDR_GEN_SHIFT)))
			addr |= (uint64_t)(i + 1) << KTR_ADDR_GEN_SHIFT;
	}
	return ktr_sym_lookup(s, addr, flags, out);
}

void ktr_syms_set_demangle(struct ktr_syms *s, int on)
{
	if (on && !s->dm) {
		s->dm = ktr_demangler_new();
	} else if (!on) {
		ktr_demangler_free(s->dm);
		s->dm = NULL;
	}
}

const char *ktr_sym_format(const struct ktr_sym *sym, int with_offset, char *buf, size_t len)
{
	if (!len)
		return buf;
	if (sym->name) {
		if (with_offset == 2 || (with_offset == 1 && sym->offset))
			snprintf(buf, len, "%s+0x%llx", sym->name, (unsigned long long)sym->offset);
		else
			snprintf(buf, len, "%s", sym->name);
	} else if (sym->modname) {
		snprintf(buf, len, "[%s]+0x%llx", sym->modname, (unsigned long long)sym->modoff);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)sym->addr);
	}
	return buf;
}

/*
 * cli/record_detect.c - how a program was built for the function tracer:
 * `ktrace record` reads the program's ELF file (libelf) before running it
 * and says in one line what it will do, or why it cannot trace it and
 * which compiler flag would make it traceable.
 *
 * What is looked for, in the symbol tables (.dynsym and .symtab, defined
 * or not) and the section headers:
 *   __cyg_profile_func_enter         -finstrument-functions (lib/kft_hooks.c)
 *   __fentry__                       -pg -mfentry (lib/kft_pg.c)
 *   mcount, _mcount                  -pg
 *   __patchable_function_entries     -fpatchable-function-entry=N[,M]
 *   __mcount_loc                     -mrecord-mcount (-pg -mfentry -mnop-mcount)
 *                                    (both patched at start, lib/kft_patch.c)
 * and PT_INTERP (a static program cannot be given libktrace by LD_PRELOAD).
 * Only the program file is read: hooks in its shared libraries are not
 * seen (the line says so when the program itself has none).
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/record_opts.h"

/*
 * What rec_detect() found at the sites of the patchable-entry sections,
 * classified as lib/kft_patch.c does at run time (which see): sites at a
 * function's entry (its symbol, or 4 bytes past it after endbr64) that
 * hold a 5-byte NOP (patchable), a call already (-pg -mfentry
 * -mrecord-mcount: its hook is called anyway), something else (not_nop:
 * -fpatchable-function-entry=N with N < 5), or not at an entry
 * (not_entry: -fpatchable-function-entry=N,M with M > 0).  Filled by the
 * last rec_detect() call, read by rec_detect_line(): the CLI is one thread.
 */
static struct {
	unsigned sites, patchable, calls, not_nop, not_entry;
} rec_patch;

static int cmp_addr(const void *a, const void *b)
{
	GElf_Addr x = *(const GElf_Addr *)a, y = *(const GElf_Addr *)b;

	return x < y ? -1 : x > y;
}

/* The @len bytes at link-time address @addr in an executable section of @elf into @out. */
static int text_bytes(Elf *elf, GElf_Addr addr, unsigned char *out, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr || addr + len > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + len > d->d_size)
			return -1;
		memcpy(out, (const char *)d->d_buf + (addr - sh.sh_addr), len);
		return 0;
	}
	return -1;
}

/*
 * Classify the sites of @elf's patchable-entry sections into rec_patch.
 * The file holds their link-time addresses (a PIE's relocation addends
 * are written in place too); function symbols from .symtab, else .dynsym.
 */
static void scan_patch_sites(Elf *elf, size_t shstrndx)
{
	static const unsigned char nop5[4] = { 0x0f, 0x1f, 0x44, 0x00 }; /* + any disp8 */
	static const unsigned char nop1x5[5] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
	static const unsigned char endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	GElf_Addr *fns = NULL;
	size_t nfn = 0, cap = 0;
	Elf_Scn *scn;

	for (int pass = 0; pass < 2 && !nfn; pass++) {
		for (scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
			    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;

				if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF || !sym.st_value)
					continue;
				if (nfn == cap) {
					GElf_Addr *n = realloc(fns, (cap = cap ? cap * 2 : 1024) * sizeof(*n));

					if (!n)
						goto out;
					fns = n;
				}
				fns[nfn++] = sym.st_value;
			}
		}
	}
	if (nfn)
		qsort(fns, nfn, sizeof(*fns), cmp_addr);
	for (scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, "__patchable_function_entries") && strcmp(name, "__mcount_loc")))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t off = 0; d && d->d_buf && off + 8 <= d->d_size; off += 8) {
			unsigned char b[9];
			GElf_Addr v, w;
			int at = 0;

			memcpy(&v, (const char *)d->d_buf + off, 8);
			rec_patch.sites++;
			w = v;
			if (nfn && bsearch(&w, fns, nfn, sizeof(*fns), cmp_addr))
				at = 1;
			w = v - 4;
			if (!at && nfn && bsearch(&w, fns, nfn, sizeof(*fns), cmp_addr) &&
			    text_bytes(elf, v - 4, b, 4) == 0 && !memcmp(b, endbr, 4))
				at = 1;
			if (!at || text_bytes(elf, v, b, 5) < 0)
				rec_patch.not_entry++;
			else if (b[0] == 0xe8)
				rec_patch.calls++;
			else if (!memcmp(b, nop5, 4) || !memcmp(b, nop1x5, 5))
				rec_patch.patchable++;
			else
				rec_patch.not_nop++;
		}
	}
out:
	free(fns);
}

/* PROG as exec() with PATH finds it, into @path. Return: 0, -1 not found. */
static int find_prog(const char *prog, char *path, size_t size)
{
	const char *p = getenv("PATH"), *e;

	if (strchr(prog, '/')) {
		snprintf(path, size, "%s", prog);
		return access(path, X_OK) == 0 ? 0 : -1;
	}
	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin";
	for (; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		if ((size_t)snprintf(path, size, "%.*s/%s", (int)(e - p), e > p ? p : ".", prog) >= size)
			continue;
		if (access(path, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* Symbols named in one symbol table section @scn. */
static void scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, unsigned *found)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'm'))
			continue;
		if (!strcmp(name, "__cyg_profile_func_enter"))
			*found |= REC_BUILD_INST;
		else if (!strcmp(name, "__fentry__"))
			*found |= REC_BUILD_FENTRY;
		else if (!strcmp(name, "mcount") || !strcmp(name, "_mcount"))
			*found |= REC_BUILD_MCOUNT;
	}
}

unsigned rec_detect(const char *prog, char *path, size_t size)
{
	unsigned found = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx, nph;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	memset(&rec_patch, 0, sizeof(rec_patch));
	if (find_prog(prog, path, size) < 0)
		return REC_BUILD_NOFILE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return REC_BUILD_NOFILE;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return REC_BUILD_NOTELF;
	}
	if (eh.e_machine != EM_X86_64)
		found |= REC_BUILD_OTHERARCH;
	if (elf_getphdrnum(elf, &nph) == 0) {
		int interp = 0;

		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
				interp = 1;
		}
		if (!interp)
			found |= REC_BUILD_STATIC;
	}
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			scan_symbols(elf, scn, &sh, &found);
		name = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, "__patchable_function_entries"))
			found |= REC_BUILD_PATCHABLE;
		if (name && !strcmp(name, "__mcount_loc"))
			found |= REC_BUILD_MCOUNTLOC;
	}
	if (found & (REC_BUILD_PATCHABLE | REC_BUILD_MCOUNTLOC) && shstrndx)
		scan_patch_sites(elf, shstrndx);
	elf_end(elf);
	close(fd);
	return found;
}

int rec_detect_line(unsigned b, const char *prog, char *line, size_t size)
{
	int ok = 1;

	if (b & (REC_BUILD_NOFILE | REC_BUILD_NOTELF)) {
		snprintf(line, size, "%s: %s: its build is not known, calls are traced if it (or a "
				     "library) was built with -finstrument-functions or -pg",
			 prog, b & REC_BUILD_NOFILE ? "not found" : "not an ELF file");
		return 1;
	}
	if (b & REC_BUILD_STATIC) {
		snprintf(line, size, "%s: a static program: libktrace cannot be preloaded into it, its "
				     "calls are not traced (link it dynamically, or with -lktrace)",
			 prog);
		return 0;
	}
	if (b & REC_BUILD_INST)
		snprintf(line, size, "%s: built with -finstrument-functions: tracing every call",
			 prog);
	else if ((b & (REC_BUILD_FENTRY | REC_BUILD_MCOUNT)) && (b & REC_BUILD_OTHERARCH))
		ok = 0, snprintf(line, size, "%s: built with -pg, but its -pg hooks are supported "
					     "on x86-64 only: rebuild with -finstrument-functions",
				 prog);
	else if (b & REC_BUILD_FENTRY)
		snprintf(line, size, "%s: built with -pg -mfentry: tracing every call through "
				     "__fentry__ and an exit trampoline",
			 prog);
	else if (b & REC_BUILD_MCOUNT)
		snprintf(line, size, "%s: built with -pg: tracing every call through mcount and "
				     "an exit trampoline",
			 prog);
	else if ((b & (REC_BUILD_PATCHABLE | REC_BUILD_MCOUNTLOC)) && (b & REC_BUILD_OTHERARCH))
		ok = 0, snprintf(line, size, "%s: built with patchable function entries, but patching "
					     "them is supported on x86-64 only: rebuild with "
					     "-finstrument-functions",
				 prog);
	else if ((b & (REC_BUILD_PATCHABLE | REC_BUILD_MCOUNTLOC)) && rec_patch.patchable) {
		int n = snprintf(line, size, "%s: patchable entries in %u functions (%s): patched at "
					     "start, only those selected by -F/funclist (all without one)",
				 prog, rec_patch.patchable,
				 b & REC_BUILD_PATCHABLE ? "-fpatchable-function-entry"
							 : "-mnop-mcount -mrecord-mcount");
		unsigned left = rec_patch.not_nop + rec_patch.not_entry;

		if (left && n > 0 && (size_t)n < size)
			snprintf(line + n, size - (size_t)n, "; %u sites left alone (%u not a 5-byte NOP, "
							       "%u not at a function entry)",
				 left, rec_patch.not_nop, rec_patch.not_entry);
	} else if ((b & REC_BUILD_PATCHABLE) && rec_patch.not_entry)
		ok = 0, snprintf(line, size, "%s: built with -fpatchable-function-entry=N,M with M > 0 "
					     "(the NOPs before the entry run for no call): not "
					     "patched, its calls are not traced (rebuild with "
					     "-fpatchable-function-entry=5)",
				 prog);
	else if ((b & REC_BUILD_PATCHABLE) && rec_patch.not_nop)
		ok = 0, snprintf(line, size, "%s: built with -fpatchable-function-entry=N with N < 5 "
					     "(no room for a call): not patched, its calls are not "
					     "traced (rebuild with -fpatchable-function-entry=5)",
				 prog);
	else if (b & (REC_BUILD_PATCHABLE | REC_BUILD_MCOUNTLOC))
		ok = 0, snprintf(line, size, "%s: its patchable-entry sections list no function entry "
					     "with a 5-byte NOP: its calls are not traced (rebuild "
					     "with -fpatchable-function-entry=5 or -pg -mfentry)",
				 prog);
	else
		ok = 0, snprintf(line, size, "%s: built without function hooks: its own calls are "
					     "not traced (rebuild with -pg, -pg -mfentry or "
					     "-finstrument-functions; or -fpatchable-function-entry=5, "
					     "free when untraced)",
				 prog);
	return ok;
}

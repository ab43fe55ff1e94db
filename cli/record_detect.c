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
 *   __patchable_function_entries     -fpatchable-function-entry, -mnop-mcount
 *                                    (patched at run time: not supported yet)
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
	}
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
	else if (b & REC_BUILD_PATCHABLE)
		ok = 0, snprintf(line, size, "%s: built with -fpatchable-function-entry or "
					     "-mnop-mcount: patching at run time is not supported yet, "
					     "its calls are not traced (rebuild with -pg or "
					     "-finstrument-functions)",
				 prog);
	else
		ok = 0, snprintf(line, size, "%s: built without function hooks: its own calls are "
					     "not traced (rebuild with -pg, -pg -mfentry or "
					     "-finstrument-functions)",
				 prog);
	return ok;
}

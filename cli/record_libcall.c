/*
 * cli/record_libcall.c - how many library functions `ktrace record` will
 * trace the calls of in a program (lib/kft_plt.c hooks them at run time):
 * read from the program's ELF file (libelf) before it runs, for the line
 * record prints about the build (cli/record_detect.c's).
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "cli/record_opts.h"
#include "kft/libcall.h"

/*
 * Hookable relocations of @type in the SHT_RELA section @scn (header @sh);
 * *@plt counts those not in kft_libcall_always_plt().
 */
static int count_rela(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, unsigned type, int *plt)
{
	Elf_Scn *ls = elf_getscn(elf, sh->sh_link);
	Elf_Data *rd = elf_getdata(scn, NULL), *sd;
	GElf_Shdr lsh;
	int n = 0;

	if (!ls || !gelf_getshdr(ls, &lsh) || lsh.sh_type != SHT_DYNSYM || !rd || !sh->sh_entsize)
		return 0;
	sd = elf_getdata(ls, NULL);
	if (!sd)
		return 0;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;

		if (!gelf_getrela(rd, (int)i, &r))
			break;
		if (GELF_R_TYPE(r.r_info) != type || !GELF_R_SYM(r.r_info) ||
		    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) || sym.st_shndx != SHN_UNDEF ||
		    (type == R_X86_64_GLOB_DAT && GELF_ST_TYPE(sym.st_info) != STT_FUNC))
			continue;
		name = elf_strptr(elf, lsh.sh_link, sym.st_name);
		if (name && *name && !kft_libcall_skip(name)) {
			n++;
			*plt += !kft_libcall_always_plt(name);
		}
	}
	return n;
}

int rec_detect_libcalls(const char *path)
{
	unsigned types[2] = { R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT };
	GElf_Ehdr eh;
	Elf *elf;
	int fd, n = 0, plt = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_machine != EM_X86_64) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	/* as the runtime: the PLT's slots, and with -fno-plt the GLOB_DAT ones */
	for (int t = 0; t < 2 && !plt; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
				n += count_rela(elf, scn, &sh, types[t], &plt);
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

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
#include "reader/reader.h"

/* Counts of hookable slots: all, and those not in kft_libcall_always_plt(). */
struct lc_count {
	int n, plt;
};

/* ktr_elf_libcall_slots() callback: count the slot of @name unless skipped. */
static int count_slot(const char *name, uint64_t slot, void *arg)
{
	struct lc_count *c = arg;

	(void)slot;
	if (!kft_libcall_skip(name)) {
		c->n++;
		c->plt += !kft_libcall_always_plt(name);
	}
	return 0;
}

int rec_detect_libcalls(const char *path)
{
	unsigned types[2] = { R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT };
	GElf_Ehdr eh;
	Elf *elf;
	struct lc_count c = { 0, 0 };
	int fd;

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
	for (int t = 0; t < 2 && !c.plt; t++)
		ktr_elf_libcall_slots(elf, types[t], count_slot, &c);
	elf_end(elf);
	close(fd);
	return c.n;
}

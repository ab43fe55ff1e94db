/*
 * cli/record_patch.c - `ktrace record -P PATTERN[@LIB]` and `-U
 * PATTERN[@LIB]`: which functions of a program built without hooks are
 * patched at its start (lib/kft_dynpatch.c), as the rules of
 * KTRACE_PATCH (lib/kft_patchrules.h), and how many of the main program's
 * can be, read from its ELF file (libelf) and planned with the same
 * relocator (lib/kft_reloc.c) before it runs, for the line record prints.
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/record_opts.h"
#include "lib/kft_debugfile.h"
#include "lib/kft_patchrules.h"
#include "lib/kft_reloc.h"
#include "reader/reader.h"

_Static_assert(KFT_RELOC_NR <= sizeof(((struct rec_patch_scan *)0)->why) / sizeof(unsigned),
	       "rec_patch_scan counts every reason");

int rec_patch_add(struct rec_patch *p, int key, const char *arg)
{
	const char *why = kft_patch_rule_check(arg);
	size_t n = strlen(arg);
	char *s;

	if (why) {
		cli_error("record", "option '-%c': '%s': %s", key, arg, why);
		return -1;
	}
	if (p->nrules == KFT_PATCH_RULES_MAX) {
		cli_error("record", "option '-%c': at most %d -P and -U (use patterns: 'btree*')",
			  key, KFT_PATCH_RULES_MAX);
		return -1;
	}
	s = realloc(p->spec, p->len + n + 3);
	if (!s) {
		cli_error("record", "out of memory");
		return -1;
	}
	p->spec = s;
	p->len += (size_t)sprintf(s + p->len, "%s%c%s", p->len ? ";" : "", key == 'P' ? '+' : '-',
				  arg);
	p->nrules++;
	if (key == 'P' && !strchr(arg, '@'))
		p->main_plus = 1;
	return 0;
}

void rec_patch_free(struct rec_patch *p)
{
	free(p->spec);
	memset(p, 0, sizeof(*p));
}

/* kft_patch_selects()'s matcher: the symbol, demangled, or demangled without parameters. */
static int cli_match(void *arg, const char *pat, const char *name)
{
	struct ktr_demangler *dm = arg;
	const char *d;
	char buf[1024], *paren;

	if (!fnmatch(pat, name, 0))
		return 1;
	d = dm ? ktr_demangle(dm, name) : name;
	if (d == name)
		return 0;
	if (!fnmatch(pat, d, 0))
		return 1;
	snprintf(buf, sizeof(buf), "%s", d);
	paren = strchr(buf, '(');
	if (!paren)
		return 0;
	*paren = '\0';
	return !fnmatch(pat, buf, 0);
}

/* The bytes of [@addr, @addr + @size) in an executable section of @elf, or NULL. */
static const uint8_t *text_of(Elf *elf, GElf_Addr addr, GElf_Xword size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr + size > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + size > d->d_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

static int cmp_sym(const void *a, const void *b)
{
	const GElf_Sym *x = a, *y = b;

	return x->st_value < y->st_value ? -1 : x->st_value > y->st_value;
}

/* Plan the patch of the function @sym of @elf, as the runtime will: its outcome into @s. */
static void scan_function(Elf *elf, const GElf_Sym *sym, struct rec_patch_scan *s)
{
	const uint8_t *code = text_of(elf, sym->st_value, sym->st_size);
	struct kft_reloc rel;

	if (!code)
		return; /* not in the text: the runtime does not select it either */
	s->selected++;
	/* a trampoline is never within rel8 reach of the code: plan 1 MiB away */
	s->why[kft_reloc_entry(code, sym->st_size, sym->st_value, sym->st_value + (1u << 20), &rel)]++;
}

/* The rules of @spec (parsed into @rules) that are the main program's, into @sel. */
static unsigned main_rules(char *spec, const struct kft_patch_rule **sel,
			   struct kft_patch_rule *rules)
{
	unsigned n = kft_patch_rules_parse(spec, rules, KFT_PATCH_RULES_MAX), k = 0;

	for (unsigned i = 0; i < n; i++)
		if (kft_patch_lib_matches(rules[i].lib, "", 1))
			sel[k++] = &rules[i];
	return k;
}

/* The functions a scan selects, one per symbol (aliases are merged later). */
struct fn_list {
	GElf_Sym *fn;
	size_t n, cap;
	int oom;
};

int rec_elf_funcs(Elf *elf, unsigned type, int (*fn)(const GElf_Sym *, const char *, void *),
		  void *arg)
{
	Elf_Scn *scn = NULL;
	int rc = -1;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		rc = 0;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_shndx != SHN_UNDEF &&
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
			    (rc = fn(&sym, name, arg)) != 0)
				return rc;
		}
	}
	return rc;
}

/* What add_selected() hands rec_elf_funcs(). */
struct selecting {
	const struct kft_patch_rule **sel;
	unsigned nsel;
	struct ktr_demangler *dm;
	struct fn_list *l;
};

static int add_one(const GElf_Sym *sym, const char *name, void *arg)
{
	struct selecting *x = arg;
	struct fn_list *l = x->l;

	if (!sym->st_value || !sym->st_size || kft_patch_startup_code(name) ||
	    !kft_patch_selects(x->sel, x->nsel, name, cli_match, x->dm))
		return 0;
	if (l->n == l->cap) {
		GElf_Sym *m = realloc(l->fn, (l->cap = l->cap ? l->cap * 2 : 1024) * sizeof(*m));

		if (!m)
			return l->oom = -1;
		l->fn = m;
	}
	l->fn[l->n++] = *sym;
	return 0;
}

/*
 * Add the functions of @elf's symbol table of type @type that the rules
 * @sel (@nsel of them) select to @l.  Return: 1 if @elf has that table,
 * 0 if not, -1 out of memory.
 */
static int add_selected(Elf *elf, unsigned type, const struct kft_patch_rule **sel, unsigned nsel,
			struct ktr_demangler *dm, struct fn_list *l)
{
	struct selecting x = { sel, nsel, dm, l };
	int rc = rec_elf_funcs(elf, type, add_one, &x);

	return rc == -1 && !l->oom ? 0 : rc < 0 ? -1 : 1;
}

/* @elf's separate debug file (lib/kft_debugfile.h) opened into *@fd, or NULL. */
static Elf *debug_elf(const char *path, Elf *elf, int *fd)
{
	const void *id = NULL, *did = NULL;
	GElf_Word crc;
	const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	Elf *d;

	*fd = kft_debugfile_open(path, id, n > 0 ? (size_t)n : 0, link);
	if (*fd < 0)
		return NULL;
	d = elf_begin(*fd, ELF_C_READ, NULL);
	if (d && n > 0 && (dwelf_elf_gnu_build_id(d, &did) != n || memcmp(id, did, (size_t)n))) {
		elf_end(d); /* another build's */
		d = NULL;
	}
	return d;
}

int rec_patch_scan(const char *path, const char *spec, struct rec_patch_scan *s)
{
	struct kft_patch_rule rules[KFT_PATCH_RULES_MAX];
	const struct kft_patch_rule *sel[KFT_PATCH_RULES_MAX];
	struct ktr_demangler *dm = ktr_demangler_new();
	char *copy = strdup(spec);
	struct fn_list l = { 0 };
	unsigned nsel;
	int fd = -1, dfd = -1, table;
	Elf *elf = NULL, *delf = NULL;

	memset(s, 0, sizeof(*s));
	if (!copy || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto out;
	nsel = main_rules(copy, sel, rules);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || kft_reloc_load() < 0)
		goto out;
	s->decoder = 1;
	/* the functions selected: .symtab, else the debug file's, else .dynsym (as lib/kft_names.c) */
	table = add_selected(elf, SHT_SYMTAB, sel, nsel, dm, &l);
	if (!table && (delf = debug_elf(path, elf, &dfd)) != NULL)
		table = add_selected(delf, SHT_SYMTAB, sel, nsel, dm, &l);
	if (!table)
		table = add_selected(elf, SHT_DYNSYM, sel, nsel, dm, &l);
	if (table < 0)
		goto out;
	/* one function per address (aliases); the code is the object's, not the debug file's */
	if (l.n)
		qsort(l.fn, l.n, sizeof(*l.fn), cmp_sym);
	for (size_t i = 0; i < l.n; i++)
		if (!i || l.fn[i].st_value != l.fn[i - 1].st_value)
			scan_function(elf, &l.fn[i], s);
out:
	if (delf)
		elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	ktr_demangler_free(dm);
	free(copy);
	free(l.fn);
	return s->decoder ? 0 : -1;
}

int rec_patch_line(const char *prog, const struct rec_patch_scan *s, char *line, size_t size)
{
	int n;
	unsigned skipped = s->selected - s->why[KFT_RELOC_OK];

	if (!s->decoder) {
		snprintf(line, size, "%s: built without function hooks: its functions cannot be "
				     "patched without libZydis.so.4 (apt install libzydis4), its calls "
				     "are not traced (or rebuild with -pg or -finstrument-functions)",
			 prog);
		return 0;
	}
	if (!s->selected) {
		snprintf(line, size, "%s: built without function hooks, and its symbol tables name no "
				     "function to patch (stripped, and no debug file in /usr/lib/debug or beside it)",
			 prog);
		return 1; /* its library calls are traced */
	}
	n = snprintf(line, size, "%s: built without function hooks: %u functions patched at start",
		     prog, s->why[KFT_RELOC_OK]);
	if (skipped && n > 0 && (size_t)n < size) {
		const char *sep = " (";

		n += snprintf(line + n, size - (size_t)n, ", %u left alone", skipped);
		for (int k = KFT_RELOC_SMALL; k < KFT_RELOC_NR && n > 0 && (size_t)n < size; k++) {
			if (!s->why[k])
				continue;
			n += snprintf(line + n, size - (size_t)n, "%s%u %s", sep, s->why[k],
				      kft_reloc_reason[k]);
			sep = ", ";
		}
		if (n > 0 && (size_t)n < size)
			snprintf(line + n, size - (size_t)n, ")");
	}
	return s->why[KFT_RELOC_OK] > 0;
}

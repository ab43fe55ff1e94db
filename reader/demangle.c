/*
 * reader/demangle.c - C++ (and Rust) symbol names as people read them:
 * `_ZNK3geo4Rect4areaEv` -> `geo::Rect::area() const`.
 *
 * The demangler is libiberty's cplus_demangle() (the one binutils, gdb
 * and perf use; Debian's libiberty-dev), with parameters and the ANSI
 * qualifiers (DMGL_PARAMS | DMGL_ANSI): the "full" form of uftrace's
 * --demangle.  Results are interned per mangled string, so a name
 * demangled for many addresses costs one allocation and every caller may
 * keep the pointer until ktr_demangler_free().
 *
 * Not thread-safe (one demangler per struct ktr_syms); no global state
 * besides libiberty's own, which is read-only here.
 */
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

struct dm_ent {
	char *mangled; /* NULL: empty slot */
	char *plain;   /* demangled, or NULL: not a mangled name */
};

struct ktr_demangler {
	struct dm_ent *e;
	size_t n, cap; /* cap: 0 or a power of two */
};

struct ktr_demangler *ktr_demangler_new(void)
{
	return calloc(1, sizeof(struct ktr_demangler));
}

void ktr_demangler_free(struct ktr_demangler *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->cap; i++) {
		free(d->e[i].mangled);
		free(d->e[i].plain);
	}
	free(d->e);
	free(d);
}

static size_t dm_hash(const char *s, size_t mask)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29)) & mask;
}

/* Only names that look mangled go to libiberty (C names are left alone). */
static int looks_mangled(const char *s)
{
	return (s[0] == '_' && s[1] == 'Z') || (s[0] == '_' && s[1] == 'R') ||
	       (s[0] == '_' && s[1] == '_' && s[2] == 'Z');
}

static int grow(struct ktr_demangler *d)
{
	size_t cap = d->cap ? 2 * d->cap : 256;
	struct dm_ent *n = calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < d->cap; i++) {
		size_t j;

		if (!d->e[i].mangled)
			continue;
		for (j = dm_hash(d->e[i].mangled, cap - 1); n[j].mangled; j = (j + 1) & (cap - 1))
			;
		n[j] = d->e[i];
	}
	free(d->e);
	d->e = n;
	d->cap = cap;
	return 0;
}

const char *ktr_demangle(struct ktr_demangler *d, const char *name)
{
	size_t i;
	char *plain;

	if (!d || !name || !looks_mangled(name))
		return name;
	if ((d->n + 1) * 2 > d->cap && grow(d) < 0)
		return name;
	for (i = dm_hash(name, d->cap - 1); d->e[i].mangled; i = (i + 1) & (d->cap - 1))
		if (!strcmp(d->e[i].mangled, name))
			return d->e[i].plain ? d->e[i].plain : name;
	plain = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	d->e[i].mangled = strdup(name);
	if (!d->e[i].mangled) {
		free(plain);
		return name;
	}
	d->e[i].plain = plain;
	d->n++;
	return plain ? plain : name;
}

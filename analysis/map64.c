/*
 * analysis/map64.c - the hash map the analyses and the exports index their
 * arrays with (analysis/analysis.h, struct ka_map64): open addressing with
 * linear probing, at most half full, keys mixed by MurmurHash3's fmix64
 * finalizer so that keys differing only in high bits (pid << 32 | tid)
 * spread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

static size_t hash64(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

long ka_map64_get(const struct ka_map64 *m, uint64_t k)
{
	if (!m->cap)
		return -1;
	for (size_t i = hash64(k, m->cap - 1); m->v[i]; i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k)
			return (long)m->v[i] - 1;
	return -1;
}

int ka_map64_put(struct ka_map64 *m, uint64_t k, uint32_t v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 1024;
		uint64_t *nk = malloc(cap * sizeof(*nk));
		uint32_t *nv = calloc(cap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->v[j])
				continue;
			for (i = hash64(m->k[j], cap - 1); nv[i]; i = (i + 1) & (cap - 1))
				;
			nk[i] = m->k[j];
			nv[i] = m->v[j];
		}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = cap;
	}
	for (i = hash64(k, m->cap - 1); m->v[i]; i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k) {
			m->v[i] = v + 1;
			return 0;
		}
	m->k[i] = k;
	m->v[i] = v + 1;
	m->n++;
	return 0;
}

void ka_map64_free(struct ka_map64 *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

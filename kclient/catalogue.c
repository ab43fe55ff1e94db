/*
 * kclient/catalogue.c - the kernel event catalogue (include/ktrace/lkst.h)
 * expanded into a table, and the parser of the maskset specifications of
 * `ktrace record --kernel=MASKSET` (krec_parse_maskset() in
 * kclient/kclient.h; the table, krec_catalogue(), in kclient/internal.h).
 *
 * Kept apart from the tracefs backend so it has no library dependency: the
 * fuzz target fuzz/fuzz_maskset.c compiles this file alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ktrace/lkst.h>

#include "kclient/internal.h"

#define KREC_DEF_(id, mn, cat, sys, tp, nargs, args, primary) \
	{ id, #mn, #cat, sys, tp, nargs, args, primary },
static const struct lkst_def lkst_defs[] = { KTRACE_LKST_EVENTS(KREC_DEF_) };
#undef KREC_DEF_
#define NDEFS (sizeof(lkst_defs) / sizeof(lkst_defs[0]))

const struct lkst_def *krec_catalogue(size_t *n)
{
	*n = NDEFS;
	return lkst_defs;
}

int krec_parse_maskset(const char *spec, uint8_t *sel, char *err, size_t len)
{
	char *copy, *save = NULL, *tok;
	int n = 0, bad = 0;

	memset(sel, 0, KTRACE_LKST_MAX_ID);
	if (!spec || !*spec)
		spec = "RDEFAULT";
	copy = strdup(spec);
	if (!copy) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int hit = !strcasecmp(tok, "RNOTHING") || !strcasecmp(tok, "RDEFAULT") ||
			  !strcasecmp(tok, "RALL");

		/* the user-placed hooks (tracefs kprobe events): all, or by id */
		if (!strcasecmp(tok, "RALL") || !strcasecmp(tok, "hook")) {
			for (unsigned i = KTRACE_LKST_HOOK_FIRST; i <= KTRACE_LKST_HOOK_LAST; i++)
				sel[i] = 1;
			hit = 1;
		} else if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
			char *end;
			unsigned long v = strtoul(tok + 2, &end, 16);

			if (!*end && end != tok + 2 && KTRACE_LKST_IS_HOOK(v)) {
				sel[v] = 1;
				hit = 1;
			}
		}

		for (size_t i = 0; i < NDEFS; i++) {
			const struct lkst_def *d = &lkst_defs[i];

			if (!strcasecmp(tok, "RALL") || (!strcasecmp(tok, "RDEFAULT") && d->primary) ||
			    !strcasecmp(tok, d->mn) || !strcasecmp(tok, d->cat)) {
				sel[d->id] = 1;
				hit = 1;
			}
		}
		if (!hit) {
			snprintf(err, len, "unknown event or category '%.64s' (an LKST mnemonic such as "
					   "PROCESS_CONTEXTSWITCH, a category such as syscall, hook or a "
					   "hook id 0xc0..0xff, or RDEFAULT, RALL, RNOTHING)", tok);
			bad = 1;
			break;
		}
	}
	free(copy);
	if (bad)
		return -1;
	for (unsigned i = 0; i < KTRACE_LKST_MAX_ID; i++)
		n += sel[i];
	return n;
}

/*
 * lib/kft_patchrules.c - the rules of run-time patching (lib/kft_patchrules.h).
 */
#include <string.h>

#include "kft_patchrules.h"

unsigned kft_patch_rules_parse(char *spec, struct kft_patch_rule *rules, unsigned max)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *t = strtok_r(spec, ";", &save); t && n < max; t = strtok_r(NULL, ";", &save)) {
		char *at;

		if ((t[0] != '+' && t[0] != '-') || !t[1])
			continue;
		rules[n].patch = t[0] == '+';
		rules[n].pat = t + 1;
		rules[n].lib = NULL;
		at = strrchr(t + 1, '@');
		if (at) {
			*at = '\0';
			if (!at[1])
				continue;
			rules[n].lib = at + 1;
		}
		if (*rules[n].pat)
			n++;
	}
	return n;
}

const char *kft_patch_rule_check(const char *arg)
{
	const char *at = strrchr(arg, '@');

	if (strchr(arg, ';'))
		return "a pattern cannot hold ';'";
	if (!*arg || at == arg)
		return "an empty pattern";
	if (at && !at[1])
		return "an empty library name after '@'";
	return NULL;
}

int kft_patch_lib_matches(const char *lib, const char *path, int is_main)
{
	const char *base;
	size_t n;

	if (!lib || is_main)
		return !lib && is_main;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	n = strlen(lib);
	return !strncmp(base, lib, n) && (!base[n] || base[n] == '.' || base[n] == '-');
}

int kft_patch_selects(const struct kft_patch_rule *const *rules, unsigned n, const char *name,
		      kft_patch_match_fn *match, void *arg)
{
	int plus = 0;

	for (unsigned k = 0; k < n; k++) {
		const struct kft_patch_rule *u = rules[k];

		if (u->patch && plus)
			continue; /* selected already: only a '-' rule can change that */
		if (strcmp(u->pat, ".") != 0 && !match(arg, u->pat, name))
			continue;
		if (!u->patch)
			return 0;
		plus = 1;
	}
	return plus;
}

int kft_patch_startup_code(const char *name)
{
	static const char *const names[] = {
		"_start", "_init", "_fini", "__libc_csu_init", "__libc_csu_fini",
		"_dl_relocate_static_pie", "deregister_tm_clones", "register_tm_clones",
		"__do_global_dtors_aux", "frame_dummy",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

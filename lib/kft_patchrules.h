/*
 * lib/kft_patchrules.h - which functions run-time patching selects: the rules
 * of `ktrace record -P PATTERN[@LIB]` and `-U PATTERN[@LIB]`, passed to
 * the program as KTRACE_PATCH and applied by lib/kft_dynpatch.c; `ktrace
 * record` applies the same rules to the program's file to count them
 * before it runs (cli/record_patch.c).
 *
 * KTRACE_PATCH: rules separated by ';', each
 *     +PATTERN[@LIB]   patch the functions PATTERN matches (-P)
 *     -PATTERN[@LIB]   do not patch them (-U)
 * PATTERN: a shell pattern (fnmatch(3)) matched against the symbol, its
 * demangled name, or that name without its parameters (the matcher's
 * business); "." is every function (uftrace users type `-P .`).  LIB:
 * the shared object whose file name is LIB or starts with LIB followed by
 * '.' or '-' ("libz", "libz.so.1"); without @LIB, the main program.  A
 * function is patched when a '+' rule matches it and no '-' rule does.
 *
 * Pure functions of their arguments: thread-safe, no allocation.
 */
#ifndef KTRACE_LIB_KFT_PATCHRULES_H
#define KTRACE_LIB_KFT_PATCHRULES_H

/* One rule: @patch 1 '+', 0 '-'; @pat the pattern; @lib NULL: the main program. */
struct kft_patch_rule {
	int patch;
	const char *pat;
	const char *lib;
};

#define KFT_PATCH_RULES_MAX 64

/**
 * kft_patch_rules_parse() - split @spec (KTRACE_PATCH's text; modified in
 * place: the rules point into it) into at most @max @rules.  A rule
 * without its sign or with an empty PATTERN or LIB is skipped (`ktrace
 * record` refuses them first).  Return: the number of rules.
 */
unsigned kft_patch_rules_parse(char *spec, struct kft_patch_rule *rules, unsigned max);

/**
 * kft_patch_rule_check() - is @arg a valid -P/-U argument (PATTERN[@LIB],
 * neither empty, no ';')?  Return: NULL, or why not (a constant string).
 */
const char *kft_patch_rule_check(const char *arg);

/**
 * kft_patch_lib_matches() - does @lib (a rule's; NULL: the main program)
 * name the object at @path (@is_main: the main program)?
 */
int kft_patch_lib_matches(const char *lib, const char *path, int is_main);

/* kft_patch_selects()'s pattern matcher: 1 if @name matches @pat. */
typedef int kft_patch_match_fn(void *arg, const char *pat, const char *name);

/**
 * kft_patch_selects() - do the @n @rules (those of one object) select the
 * function @name?  "." matches without calling @match.
 * Return: 1 patch it, 0 not.
 */
int kft_patch_selects(const struct kft_patch_rule *const *rules, unsigned n, const char *name,
		      kft_patch_match_fn *match, void *arg);

/**
 * kft_patch_startup_code() - is @name start-up code the compiler or the C
 * library adds to every program (_start, _init, frame_dummy, ...)?  Such
 * functions are never patched: they are not the program's calls.
 */
int kft_patch_startup_code(const char *name);

#endif

/*
 * fuzz/fuzz_reloc.c - libFuzzer target for the relocator of run-time
 * patching and the parser of KTRACE_PATCH's rules (lib/kft_reloc.c and
 * lib/kft_patchrules.c, compiled in here).  The input: one byte choosing
 * where the trampoline lies (64 bytes, 4 KiB, 1 MiB or 3 GiB away), then
 * a function's bytes.  Whatever the bytes, the
 * relocator must not read past them, and a plan it accepts must keep its
 * promises: whole instructions of at least 5 bytes moved (after an
 * endbr64), within the function, the output within its bound and ending
 * with the jump back to the first instruction left in place.  The same
 * input, as text, is also parsed as KTRACE_PATCH's rules, and as bytes as
 * an ELF note section searched for a build id (lib/kft_debugfile.c).
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kft_debugfile.c"
#include "lib/kft_patchrules.c"
#include "lib/kft_reloc.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t away[4] = { 0x40, 0x100000, 0xc0000000ull, 0x1000 };
	const uint64_t addr = 0x555555554000ull;
	struct kft_patch_rule rules[KFT_PATCH_RULES_MAX];
	struct kft_reloc r;
	uint64_t to;
	uint8_t *code;
	char *text;
	int32_t back;
	enum kft_reloc_err e;

	if (kft_reloc_load() < 0)
		abort(); /* the fuzz build needs libZydis.so.4 */
	if (size < 1)
		return 0;
	to = addr + away[data[0] & 3];
	/* an exact-size copy: ASan sees any read past the function */
	code = malloc(size - 1 ? size - 1 : 1);
	if (!code)
		return 0;
	memcpy(code, data + 1, size - 1);
	e = kft_reloc_entry(code, size - 1, addr, to, &r);
	if (e < KFT_RELOC_OK || e >= KFT_RELOC_NR)
		abort();
	if (e == KFT_RELOC_OK) {
		unsigned end = r.out_len - r.lit; /* after the jump back */

		if ((r.start != 0 && r.start != 4) || r.len < KFT_RELOC_JMP ||
		    r.start + r.len > size - 1 || (r.lit != 0 && r.lit != 8) ||
		    r.out_len < KFT_RELOC_JMP + 1 + r.lit || r.out_len > KFT_RELOC_MAX)
			abort();
		memcpy(&back, r.out + end - 4, 4);
		if (r.out[end - 5] != 0xe9 || to + end + (uint64_t)(int64_t)back != addr + r.start + r.len)
			abort(); /* the jump back lands on the first instruction left */
		if (r.lit) {
			uint64_t ret;

			memcpy(&ret, r.out + end, 8);
			if (ret != addr + r.start + r.len)
				abort(); /* a moved call returns to the first instruction left */
		}
	}
	free(code);
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (unsigned n = kft_patch_rules_parse(text, rules, KFT_PATCH_RULES_MAX), k = 0; k < n; k++)
		if (!rules[k].pat[0] || (rules[k].lib && !rules[k].lib[0]))
			abort(); /* empty patterns and libraries are dropped */
	free(text);
	code = malloc(size);
	if (!code)
		return 0;
	memcpy(code, data, size); /* exact size again: a torn note is not read past */
	{
		const unsigned char *id = NULL;
		size_t n = kft_note_build_id(code, size, &id);

		if (n && (!id || id < code || id + n > code + size))
			abort(); /* the id lies within the notes */
	}
	free(code);
	return 0;
}

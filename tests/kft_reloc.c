/*
 * tests/kft_reloc.c - the relocator of run-time patching (lib/kft_reloc.c)
 * on hand-encoded functions, one per instruction form: what it moves, how
 * each moved instruction is re-encoded for its new address, and which
 * functions it refuses, with the reason.  The expected bytes are worked
 * out here from the x86-64 encodings (Intel SDM vol. 2), not by a decoder:
 * a retargeted branch or RIP-relative operand must reach the same absolute
 * address from the trampoline.  tests/kft_dynpatch.sh runs the same forms.
 */
#include <stdint.h>
#include <string.h>

#include "lib/kft_reloc.h"
#include "tap.h"

/* Where the function runs, and a trampoline 1 MiB away (rel8 cannot reach back). */
#define A 0x555555554000ull
#define TO (A + 0x100000ull)

static int32_t rel32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The jump back at @r->out + @off: e9, then rel32 to A + start + len (then @r->lit bytes). */
static void check_back(const struct kft_reloc *r, unsigned off, const char *what)
{
	uint64_t end = TO + off + 5;

	is_int(r->out_len, off + 5 + r->lit, "%s: moved bytes then the jump back", what);
	ok(r->out[off] == 0xe9 && end + (uint64_t)(int64_t)rel32_at(r->out + off + 1) ==
						A + r->start + r->len,
	   "%s: jumps back to the first instruction left in place", what);
}

/* Relocate @code (@size bytes) at A to TO; the reason. */
static enum kft_reloc_err reloc(const uint8_t *code, size_t size, struct kft_reloc *r)
{
	return kft_reloc_entry(code, size, A, TO, r);
}

static void test_rip(void)
{
	/* mov 0x1000(%rip),%eax; add %edi,%eax; ret */
	static const uint8_t f[] = { 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x01, 0xf8, 0xc3 };
	/* movq $0x12345,0x2000(%rip): the disp32 is followed by the imm32 */
	static const uint8_t g[] = { 0x48, 0xc7, 0x05, 0x00, 0x20, 0x00, 0x00, 0x45, 0x23, 0x01, 0x00, 0xc3 };
	/* movsd 0x80(%rip),%xmm1 (f2 0f 10 0d disp32); mulsd %xmm1,%xmm0; ret */
	static const uint8_t h[] = { 0xf2, 0x0f, 0x10, 0x0d, 0x80, 0x00, 0x00, 0x00, 0xf2, 0x0f, 0x59, 0xc1, 0xc3 };
	struct kft_reloc r;

	is_int(reloc(f, sizeof(f), &r), KFT_RELOC_OK, "rip load: moved");
	is_int(r.start, 0, "rip load: patched at the entry");
	is_int(r.len, 6, "rip load: one instruction of 6 bytes moved");
	ok(r.out[0] == 0x8b && r.out[1] == 0x05 &&
		   TO + 6 + (uint64_t)(int64_t)rel32_at(r.out + 2) == A + 6 + 0x1000,
	   "rip load: same opcode, the displacement reaches the same byte");
	check_back(&r, 6, "rip load");

	is_int(reloc(g, sizeof(g), &r), KFT_RELOC_OK, "rip store with an immediate: moved");
	is_int(r.len, 11, "rip store: 11 bytes");
	ok(!memcmp(r.out, g, 3) && TO + 11 + (uint64_t)(int64_t)rel32_at(r.out + 3) == A + 11 + 0x2000 &&
		   rel32_at(r.out + 7) == 0x12345,
	   "rip store: the displacement retargeted, the immediate kept");
	check_back(&r, 11, "rip store");

	is_int(reloc(h, sizeof(h), &r), KFT_RELOC_OK, "prefixed SSE rip load: moved");
	is_int(r.len, 8, "movsd: 8 bytes moved");
	ok(!memcmp(r.out, h, 4) && TO + 8 + (uint64_t)(int64_t)rel32_at(r.out + 4) == A + 8 + 0x80,
	   "movsd: prefix and opcode kept, displacement retargeted");

	/* a trampoline 3 GiB away cannot reach the data */
	is_int(kft_reloc_entry(f, sizeof(f), A, A + (3ull << 30), &r), KFT_RELOC_UNMOVABLE,
	       "rip load: refused when the trampoline is out of rel32 reach of its data");
}

static void test_branches(void)
{
	/* jmp +6 (eb 06); 6 nops; lea 3(%rdi),%eax; ret */
	static const uint8_t j8[] = { 0xeb, 0x06, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x8d, 0x47, 0x03, 0xc3 };
	/* test %edi,%edi; jz +3; mov %edi,%eax; ret; ret */
	static const uint8_t c8[] = { 0x85, 0xff, 0x74, 0x03, 0x89, 0xf8, 0xc3, 0xc3 };
	/* test %edi,%edi; jne rel32 +8; 8 x int3; ret */
	static const uint8_t c32[] = { 0x85, 0xff, 0x0f, 0x85, 0x08, 0x00, 0x00, 0x00,
				       0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xc3 };
	/* jmp rel32 far away (a tail call); 3 x int3 */
	static const uint8_t t32[] = { 0xe9, 0x00, 0x00, 0x01, 0x00, 0xcc, 0xcc, 0xcc };
	struct kft_reloc r;

	is_int(reloc(j8, sizeof(j8), &r), KFT_RELOC_OK, "jmp rel8: moved");
	is_int(r.len, 5, "jmp rel8: the jump and 3 nops moved");
	ok(r.out[0] == 0xe9 && TO + 5 + (uint64_t)(int64_t)rel32_at(r.out + 1) == A + 2 + 6,
	   "jmp rel8: widened to rel32, same target");
	ok(r.out[5] == 0x90 && r.out[6] == 0x90 && r.out[7] == 0x90, "jmp rel8: the nops copied");
	check_back(&r, 8, "jmp rel8");

	is_int(reloc(c8, sizeof(c8), &r), KFT_RELOC_OK, "jz rel8: moved");
	is_int(r.len, 6, "jz rel8: test, jz, mov moved");
	ok(r.out[0] == 0x85 && r.out[1] == 0xff && r.out[2] == 0x0f && r.out[3] == 0x84 &&
		   TO + 8 + (uint64_t)(int64_t)rel32_at(r.out + 4) == A + 4 + 3,
	   "jz rel8: widened to 0f 84 rel32, same target");
	ok(r.out[8] == 0x89 && r.out[9] == 0xf8, "jz rel8: the mov after it copied");
	check_back(&r, 10, "jz rel8");

	is_int(reloc(c32, sizeof(c32), &r), KFT_RELOC_OK, "jne rel32: moved");
	ok(r.out[2] == 0x0f && r.out[3] == 0x85 &&
		   TO + 8 + (uint64_t)(int64_t)rel32_at(r.out + 4) == A + 8 + 8,
	   "jne rel32: same target from the trampoline");
	check_back(&r, 8, "jne rel32");

	is_int(reloc(t32, sizeof(t32), &r), KFT_RELOC_OK, "jmp rel32 (a tail call): moved");
	ok(r.out[0] == 0xe9 && TO + 5 + (uint64_t)(int64_t)rel32_at(r.out + 1) == A + 5 + 0x10000,
	   "jmp rel32: same target");
}

static void test_prologues(void)
{
	/* endbr64; push %rbp; mov %rsp,%rbp; sub $16,%rsp; leave; ret */
	static const uint8_t cet[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5,
				       0x48, 0x83, 0xec, 0x10, 0xc9, 0xc3 };
	/* push %rbx; sub $16,%rsp; mov %edi,%ebx; ... ret */
	static const uint8_t ps[] = { 0x53, 0x48, 0x83, 0xec, 0x10, 0x89, 0xfb, 0x5b, 0xc3 };
	struct kft_reloc r;

	is_int(reloc(cet, sizeof(cet), &r), KFT_RELOC_OK, "endbr64 prologue: moved");
	is_int(r.start, 4, "endbr64 prologue: patched after endbr64 (kept for indirect calls)");
	is_int(r.len, 8, "endbr64 prologue: push, mov, sub moved");
	ok(!memcmp(r.out, cet + 4, 8), "endbr64 prologue: copied byte for byte");
	check_back(&r, 8, "endbr64 prologue");

	is_int(reloc(ps, sizeof(ps), &r), KFT_RELOC_OK, "push/sub prologue: moved");
	is_int(r.len, 5, "push/sub prologue: 5 bytes");
	ok(!memcmp(r.out, ps, 5), "push/sub prologue: copied byte for byte");
	check_back(&r, 5, "push/sub prologue");
}

static void test_refused(void)
{
	/* call rel32; add $1,%eax; ret */
	static const uint8_t call[] = { 0xe8, 0x00, 0x01, 0x00, 0x00, 0x83, 0xc0, 0x01, 0xc3 };
	/* push %rbx; call *%rsi; pop %rbx; add $1,%eax; ret */
	static const uint8_t callreg[] = { 0x53, 0xff, 0xd6, 0x5b, 0x83, 0xc0, 0x01, 0xc3 };
	/* nop; call *8(%rsp); ret */
	static const uint8_t callrsp[] = { 0x90, 0xff, 0x54, 0x24, 0x08, 0xc3 };
	/* top: add $2,%esi; sub $1,%edi; jg top; mov %esi,%eax; ret (the stack as at the entry) */
	static const uint8_t loop[] = { 0x83, 0xc6, 0x02, 0x83, 0xef, 0x01, 0x7f, 0xf8, 0x89, 0xf0, 0xc3 };
	/* xor %eax,%eax; 1: add $3,%eax; sub $1,%edi; jg 1b; ret */
	static const uint8_t mid[] = { 0x31, 0xc0, 0x83, 0xc0, 0x03, 0x83, 0xef, 0x01, 0x7f, 0xf8, 0xc3 };
	/* a recursive call to its own entry is not a jump into it */
	static const uint8_t rec[] = { 0x53, 0x48, 0x89, 0xfb, 0x90, 0xe8, 0xf6, 0xff, 0xff, 0xff, 0x5b, 0xc3 };
	/* xor %eax,%eax; ret */
	static const uint8_t tiny[] = { 0x31, 0xc0, 0xc3 };
	/* jrcxz +6; mov %rcx,%rax; add %rdi,%rax; ret; ... */
	static const uint8_t jrcxz[] = { 0xe3, 0x07, 0x48, 0x89, 0xc8, 0x48, 0x01, 0xf8, 0xc3, 0x48, 0x89, 0xf8, 0xc3 };
	/* 06: push %es, not an instruction in 64-bit mode */
	static const uint8_t bad[] = { 0x06, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	struct kft_reloc r;

	is_int(reloc(call, sizeof(call), &r), KFT_RELOC_OK, "a call, the last instruction moved: moved");
	ok(r.out[0] == 0xff && r.out[1] == 0x35, "call: became push qword [rip + disp32]");
	{
		uint64_t lit = TO + 6 + (uint64_t)(int64_t)rel32_at(r.out + 2), ret;

		is_int(r.lit, 8, "call: 8 bytes of literal after the jump back");
		ok(lit == TO + r.out_len - 8, "call: the push reads the literal");
		memcpy(&ret, r.out + r.out_len - 8, 8);
		ok(ret == A + 5, "call: the literal is the call's own return address (the code left in place)");
	}
	ok(r.out[6] == 0xe9 && TO + 11 + (uint64_t)(int64_t)rel32_at(r.out + 7) == A + 5 + 0x100,
	   "call: then jmp rel32 to the call's target");
	check_back(&r, 11, "call");
	is_int(reloc(callreg, sizeof(callreg), &r), KFT_RELOC_CALL,
	       "a call followed by other moved instructions: refused");
	is_int(reloc(callrsp, sizeof(callrsp), &r), KFT_RELOC_UNMOVABLE,
	       "a call through the stack pointer (a push before it would move it): refused");
	is_int(reloc(loop, sizeof(loop), &r), KFT_RELOC_OK,
	       "a jump back to the entry (a tail self-call as far as the code tells): moved");
	is_int(reloc(mid, sizeof(mid), &r), KFT_RELOC_JUMPIN, "a jump into the third byte: refused");
	is_int(reloc(tiny, sizeof(tiny), &r), KFT_RELOC_SMALL, "3 bytes: too small");
	is_int(reloc(jrcxz, sizeof(jrcxz), &r), KFT_RELOC_UNMOVABLE,
	       "jrcxz (rel8 only) 1 MiB from its target: cannot be moved");
	is_int(kft_reloc_entry(jrcxz, sizeof(jrcxz), A, A + 64, &r), KFT_RELOC_OK,
	       "jrcxz: moved where rel8 still reaches");
	is_int(reloc(bad, sizeof(bad), &r), KFT_RELOC_BADINSN, "an invalid opcode: refused");
	is_int(reloc(call, 3, &r), KFT_RELOC_BADINSN, "a call cut by the symbol's size: refused");
	is_int(reloc(rec, sizeof(rec), &r), KFT_RELOC_OK, "a recursive call to the entry: moved");
	ok(strlen(kft_reloc_reason[KFT_RELOC_JUMPIN]) > 0, "every reason has a phrase");
}

int main(void)
{
	if (kft_reloc_load() < 0)
		bail_out("libZydis.so.4 cannot be loaded (scripts/deps.sh installs libzydis-dev)");
	test_rip();
	test_branches();
	test_prologues();
	test_refused();
	return done_testing();
}

/*
 * tests/kft/relocs.c - functions written in assembly, one per instruction
 * form that run-time patching (lib/kft_reloc.c) must move out of a
 * function's first bytes, or must refuse to; for tests/kft_dynpatch.sh.
 * Built plain (no hooks): `ktrace record` patches what it can.
 *
 * Each function is called CALLS times by main() with known arguments,
 * and main() prints every result: the output must not change when the
 * program is traced.  The first bytes of each function:
 *   rip_load    mov disp(%rip),%eax          RIP-relative load
 *   rip_store   movl $imm32,disp(%rip)       RIP-relative with an immediate after it
 *   lea_rip     lea disp(%rip),%rax          RIP-relative address
 *   sse_rip     movsd disp(%rip),%xmm0       prefixed SSE, RIP-relative
 *   jmp8        jmp rel8 over nops           short jump retargeted
 *   jmp32       jmp rel32                    near jump retargeted
 *   jcc8        test; jz rel8                short conditional jump widened
 *   jcc32       test; jne rel32              near conditional jump retargeted
 *   cet_frame   endbr64; push %rbp; mov %rsp,%rbp; sub $16,%rsp   (patched after endbr64)
 *   push_sub    push %rbx; sub $16,%rsp      plain prologue
 *   tail_jmp    jmp rel32 to another function (a tail call in its first bytes)
 *   call_first  call helper                  a call, the last instruction moved:
 *                                            "push return address; jmp helper"
 *   loop_top    a loop back to its first byte (the stack as at the entry: a
 *               tail self-call as far as the code tells; each pass is recorded)
 * and those that must be left alone, each for its reason:
 *   call_reg    push; call *%rsi; pop; add   a call followed by other moved instructions
 *   jump_mid    a jump into its third byte
 *   tiny        xor %eax,%eax; ret           shorter than 5 bytes
 *   jrcxz_first jrcxz rel8                   no rel32 form: cannot be moved
 * (tail_jmp jumps to push_sub, which is entered once more per iteration:
 * nested in tail_jmp, as compiled hooks see a tail call.)
 * Usage: relocs [CALLS]  (default 3).  Exit status 0.
 */
#include <stdio.h>
#include <stdlib.h>

int counter = 40;
long stored;
int table[4] = { 10, 20, 30, 40 };
double half = 0.5;

int rip_load(int x);
int rip_store(int x);
int lea_rip(int i);
double sse_rip(double x);
int jmp8(int x);
int jmp32(int x);
int jcc8(int x);
int jcc32(int x);
int cet_frame(int x);
int push_sub(int x);
int tail_jmp(int x);
int call_first(int x);
int call_reg(int x, int (*f)(int));
int loop_top(int n, int acc);
int jump_mid(int n);
int tiny(void);
long jrcxz_first(long n, long unused1, long unused2, long c);
int helper(int x);

__attribute__((noinline, used)) int helper(int x)
{
	return x * 7;
}

__asm__(
	".text\n"
	".globl rip_load\n.type rip_load,@function\n"
	"rip_load:\n"
	"	movl counter(%rip), %eax\n"
	"	addl %edi, %eax\n"
	"	ret\n"
	".size rip_load, .-rip_load\n"

	".globl rip_store\n.type rip_store,@function\n"
	"rip_store:\n"
	"	movq $0x12345, stored(%rip)\n"
	"	movslq %edi, %rax\n"
	"	addq stored(%rip), %rax\n"
	"	ret\n"
	".size rip_store, .-rip_store\n"

	".globl lea_rip\n.type lea_rip,@function\n"
	"lea_rip:\n"
	"	leaq table(%rip), %rax\n"
	"	andl $3, %edi\n"
	"	movl (%rax,%rdi,4), %eax\n"
	"	ret\n"
	".size lea_rip, .-lea_rip\n"

	".globl sse_rip\n.type sse_rip,@function\n"
	"sse_rip:\n"
	"	movsd half(%rip), %xmm1\n"
	"	mulsd %xmm1, %xmm0\n"
	"	ret\n"
	".size sse_rip, .-sse_rip\n"

	".globl jmp8\n.type jmp8,@function\n"
	"jmp8:\n"
	"	jmp 1f\n"
	"	nop\n	nop\n	nop\n	nop\n	nop\n	nop\n"
	"1:	leal 3(%rdi), %eax\n"
	"	ret\n"
	".size jmp8, .-jmp8\n"

	".globl jmp32\n.type jmp32,@function\n"
	"jmp32:\n"
	"	.byte 0xe9\n	.long 2f - 1f\n"
	"1:	.fill 200, 1, 0xcc\n"
	"2:	leal 5(%rdi), %eax\n"
	"	ret\n"
	".size jmp32, .-jmp32\n"

	".globl jcc8\n.type jcc8,@function\n"
	"jcc8:\n"
	"	testl %edi, %edi\n"
	"	jz 1f\n"
	"	movl %edi, %eax\n"
	"	negl %eax\n"
	"	ret\n"
	"1:	movl $99, %eax\n"
	"	ret\n"
	".size jcc8, .-jcc8\n"

	".globl jcc32\n.type jcc32,@function\n"
	"jcc32:\n"
	"	testl %edi, %edi\n"
	"	.byte 0x0f, 0x85\n	.long 2f - 1f\n"
	"1:	movl $-1, %eax\n"
	"	ret\n"
	"	.fill 200, 1, 0xcc\n"
	"2:	leal 100(%rdi), %eax\n"
	"	ret\n"
	".size jcc32, .-jcc32\n"

	".globl cet_frame\n.type cet_frame,@function\n"
	"cet_frame:\n"
	"	endbr64\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	subq $16, %rsp\n"
	"	movl %edi, -4(%rbp)\n"
	"	movl -4(%rbp), %eax\n"
	"	imull $3, %eax, %eax\n"
	"	leave\n"
	"	ret\n"
	".size cet_frame, .-cet_frame\n"

	".globl push_sub\n.type push_sub,@function\n"
	"push_sub:\n"
	"	pushq %rbx\n"
	"	subq $16, %rsp\n"
	"	movl %edi, %ebx\n"
	"	movl %ebx, 8(%rsp)\n"
	"	leal 1(%rbx,%rbx), %eax\n"
	"	addq $16, %rsp\n"
	"	popq %rbx\n"
	"	ret\n"
	".size push_sub, .-push_sub\n"

	".globl tail_jmp\n.type tail_jmp,@function\n"
	"tail_jmp:\n"
	"	jmp push_sub\n"
	"	.fill 3, 1, 0xcc\n"
	".size tail_jmp, .-tail_jmp\n"

	".globl call_first\n.type call_first,@function\n"
	"call_first:\n"
	"	call helper\n"
	"	addl $1, %eax\n"
	"	ret\n"
	".size call_first, .-call_first\n"

	".globl call_reg\n.type call_reg,@function\n"
	"call_reg:\n"
	"	pushq %rbx\n"
	"	call *%rsi\n"
	"	popq %rbx\n"
	"	addl $1, %eax\n"
	"	ret\n"
	".size call_reg, .-call_reg\n"

	".globl loop_top\n.type loop_top,@function\n"
	"loop_top:\n"
	"	addl $2, %esi\n"
	"	subl $1, %edi\n"
	"	jg loop_top\n"
	"	movl %esi, %eax\n"
	"	ret\n"
	".size loop_top, .-loop_top\n"

	".globl jump_mid\n.type jump_mid,@function\n"
	"jump_mid:\n"
	"	xorl %eax, %eax\n"
	"1:	addl $3, %eax\n"
	"	subl $1, %edi\n"
	"	jg 1b\n"
	"	ret\n"
	".size jump_mid, .-jump_mid\n"

	".globl tiny\n.type tiny,@function\n"
	"tiny:\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".size tiny, .-tiny\n"

	".globl jrcxz_first\n.type jrcxz_first,@function\n"
	"jrcxz_first:\n"
	"	jrcxz 1f\n"
	"	movq %rcx, %rax\n"
	"	addq %rdi, %rax\n"
	"	ret\n"
	"1:	movq %rdi, %rax\n"
	"	ret\n"
	".size jrcxz_first, .-jrcxz_first\n");

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 3;
	long sum = 0;

	for (int i = 0; i < calls; i++) {
		printf("%d %d %d %.2f %d %d %d %d %d %d %d %d %d %d %d %d %d\n", rip_load(i), rip_store(i),
		       lea_rip(i), sse_rip(i + 1.0), jmp8(i), jmp32(i), jcc8(i), jcc32(i), cet_frame(i),
		       push_sub(i), tail_jmp(i), call_first(i), call_reg(i, helper), loop_top(i + 1, 0),
		       jump_mid(i + 1), tiny(), (int)jrcxz_first(i, 0, 0, i % 2));
		sum += i;
	}
	printf("sum %ld\n", sum);
	return 0;
}

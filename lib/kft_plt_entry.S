/*
 * lib/kft_plt_entry.S - the common entry of hooked library calls (x86-64
 * only); lib/kft_plt.c has the C side and the design.
 *
 * A hooked GOT slot points to a generated stub that loads the slot's
 * struct kft_plt_slot into %r11 (a scratch register no argument uses; PLT
 * entries and ld.so's lazy resolver use it the same way) and jumps here,
 * with the stack as the library call left it: the call's return address
 * at 0(%rsp).  kft_plt_entry saves the argument registers (rax: vector
 * count of a variadic call, rdi rsi rdx rcx r8 r9, r10, xmm0-7), calls
 * kft_plt_enter(return-address slot, slot info), which may divert the
 * return address to kft_pg_return (lib/kft_pg_entry.S) and returns the
 * real function's address, restores the registers and jumps there.
 *
 * Stack alignment: the call to the C side is made with %rsp 16-aligned.
 */
#if defined(__x86_64__)

	.text
	.globl	kft_plt_entry
	.hidden	kft_plt_entry
	.type	kft_plt_entry, @function
	.p2align 4
kft_plt_entry:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	movq	%rsp, %rbx
	.cfi_def_cfa_register rbx
	subq	$192, %rsp
	andq	$-16, %rsp
	movq	%rax, 0(%rsp)
	movq	%rdi, 8(%rsp)
	movq	%rsi, 16(%rsp)
	movq	%rdx, 24(%rsp)
	movq	%rcx, 32(%rsp)
	movq	%r8, 40(%rsp)
	movq	%r9, 48(%rsp)
	movq	%r10, 56(%rsp)
	movaps	%xmm0, 64(%rsp)
	movaps	%xmm1, 80(%rsp)
	movaps	%xmm2, 96(%rsp)
	movaps	%xmm3, 112(%rsp)
	movaps	%xmm4, 128(%rsp)
	movaps	%xmm5, 144(%rsp)
	movaps	%xmm6, 160(%rsp)
	movaps	%xmm7, 176(%rsp)
	leaq	8(%rbx), %rdi		/* the library call's return-address slot */
	movq	%r11, %rsi		/* the slot's struct kft_plt_slot */
	call	kft_plt_enter
	movq	%rax, %r11		/* the real function */
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdi
	movq	16(%rsp), %rsi
	movq	24(%rsp), %rdx
	movq	32(%rsp), %rcx
	movq	40(%rsp), %r8
	movq	48(%rsp), %r9
	movq	56(%rsp), %r10
	movaps	64(%rsp), %xmm0
	movaps	80(%rsp), %xmm1
	movaps	96(%rsp), %xmm2
	movaps	112(%rsp), %xmm3
	movaps	128(%rsp), %xmm4
	movaps	144(%rsp), %xmm5
	movaps	160(%rsp), %xmm6
	movaps	176(%rsp), %xmm7
	movq	%rbx, %rsp
	.cfi_def_cfa_register rsp
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	jmp	*%r11
	.cfi_endproc
	.size	kft_plt_entry, .-kft_plt_entry

#endif /* __x86_64__ */

	.section .note.GNU-stack, "", @progbits

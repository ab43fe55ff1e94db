/*
 * lib/kft_pg_entry.S - the assembly entry points of the -pg hooks (x86-64 only):
 * mcount (gcc -pg), __fentry__ (gcc -pg -mfentry; also kft_pg_fentry for
 * lib/kft_patch.c's patched entries), kft_plt_entry (library calls,
 * lib/kft_plt.c) and the exit trampoline kft_pg_return.  lib/kft_pg.c has
 * the C side and the design.
 *
 * mcount is called after the traced function's prologue (push %rbp; mov
 * %rsp,%rbp): the function's return address is at 8(%rbp).  __fentry__ is
 * called as the function's first instruction: the function's return
 * address is just above mcount's own, at 8(%rsp) on entry.  Both save the
 * registers that may carry the function's arguments (rax: vector count of
 * a variadic call, rdi rsi rdx rcx r8 r9, r10: static chain, xmm0-7),
 * call kft_pg_enter(slot, own return address, kind), restore, return.
 *
 * kft_pg_return is where a traced function returns to once kft_pg_enter()
 * replaced its return address: it saves the return value (rax rdx xmm0
 * xmm1), calls kft_pg_exit(stack pointer), which writes the call's record
 * and gives back the real return address, restores and jumps there.
 *
 * Stack alignment: the call to the C side is made with %rsp 16-aligned
 * whatever the caller's alignment.
 */
#if defined(__x86_64__)

	.text

/*
 * Save the argument registers in a 16-aligned area (callers need not keep
 * the stack aligned: gcc omits the alignment for calls to functions it
 * knows need none); %rbx keeps the stack pointer at entry + 8.
 */
.macro PG_SAVE
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
.endm

.macro PG_RESTORE
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
.endm

/* Called after the function's prologue: its return address is at 8(%rbp). */
	.globl	mcount
	.type	mcount, @function
	.p2align 4
mcount:
	.cfi_startproc
	PG_SAVE
	leaq	8(%rbp), %rdi		/* the traced function's return-address slot */
	movq	8(%rbx), %rsi		/* mcount's return address, in the function */
	xorl	%edx, %edx		/* 0: mcount */
	call	kft_pg_enter
	PG_RESTORE
	ret
	.cfi_endproc
	.size	mcount, .-mcount

/* Called as the function's first instruction: its return address is above ours. */
	.globl	__fentry__
	.type	__fentry__, @function
	.p2align 4
/* kft_pg_fentry: the same entry, for lib/kft_patch.c's trampolines (never interposed) */
	.globl	kft_pg_fentry
	.hidden	kft_pg_fentry
kft_pg_fentry:
__fentry__:
	.cfi_startproc
	PG_SAVE
	leaq	16(%rbx), %rdi		/* the traced function's return-address slot */
	movq	8(%rbx), %rsi		/* __fentry__'s return address, in the function */
	movl	$1, %edx		/* 1: fentry */
	call	kft_pg_enter
	PG_RESTORE
	ret
	.cfi_endproc
	.size	__fentry__, .-__fentry__

/*
 * The common entry of hooked library calls (lib/kft_plt.c has the C side
 * and the design).  A hooked GOT slot points to a generated stub that
 * loads the slot's struct kft_plt_slot into %r11 (a scratch register no
 * argument uses; PLT entries and ld.so's lazy resolver use it the same
 * way) and jumps here, with the stack as the library call left it: the
 * call's return address at 0(%rsp).  kft_plt_enter(return-address slot,
 * slot info, first argument, second argument) may divert the return address to kft_pg_return and returns
 * the real function's address, which is jumped to with the registers
 * restored.
 */
	.globl	kft_plt_entry
	.hidden	kft_plt_entry
	.type	kft_plt_entry, @function
	.p2align 4
kft_plt_entry:
	.cfi_startproc
	PG_SAVE
	movq	%rsi, %rcx		/* its second (swapcontext's ucp) */
	movq	%rdi, %rdx		/* the call's first argument (setjmp's jmp_buf) */
	leaq	8(%rbx), %rdi		/* the library call's return-address slot */
	movq	%r11, %rsi		/* the slot's struct kft_plt_slot */
	call	kft_plt_enter
	movq	%rax, %r11		/* the real function */
	PG_RESTORE
	jmp	*%r11
	.cfi_endproc
	.size	kft_plt_entry, .-kft_plt_entry

/*
 * vfork() of a traced thread (lib/kft_hooks.c "vfork" has the design):
 * kft_plt_enter() jumps here instead of to vfork(), with the stack as the
 * program's call left it, once kft_hooks_vfork_enter() has kept vfork()'s
 * return address.  Nothing may stay on the stack across vfork(): the child
 * runs on this stack below the caller's frame and overwrites it before the
 * parent resumes.  So the return address is dropped (kept by the hooks),
 * glibc's vfork() is called (it keeps its own return address in %rdi, not
 * on the stack), and each process in turn (the child first) calls
 * kft_hooks_vfork_return(pid), which gives the program's return address
 * back.  %rbx is the program's (callee-saved): pushed below, after
 * vfork(), so each process saves and restores its own.
 */
	.globl	kft_vfork_call
	.hidden	kft_vfork_call
	.type	kft_vfork_call, @function
	.p2align 4
kft_vfork_call:
	addq	$8, %rsp		/* the program's return address: the hooks keep it */
	movq	kft_vfork_real(%rip), %rax
	call	*%rax			/* vfork() */
	pushq	%rbx
	pushq	%rax			/* its return value */
	movq	%rsp, %rbx
	andq	$-16, %rsp
	movl	%eax, %edi
	call	kft_hooks_vfork_return
	movq	%rax, %rcx		/* where to return to */
	movq	%rbx, %rsp
	popq	%rax
	popq	%rbx
	jmp	*%rcx
	.size	kft_vfork_call, .-kft_vfork_call

/*
 * A traced function returns here.  The nop before the label keeps
 * return-address-minus-one lookups (an unwinder's, a profiler's) inside
 * this symbol.
 */
	.globl	kft_pg_return
	.hidden	kft_pg_return
	.type	kft_pg_return, @function
	.p2align 4
	nop
kft_pg_return:
	pushq	%rbx
	movq	%rsp, %rbx
	subq	$48, %rsp
	andq	$-16, %rsp
	movq	%rax, 0(%rsp)
	movq	%rdx, 8(%rsp)
	movaps	%xmm0, 16(%rsp)
	movaps	%xmm1, 32(%rsp)
	leaq	8(%rbx), %rdi		/* the stack pointer after the function's ret */
	call	kft_pg_exit
	movq	%rax, %r11		/* the real return address */
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdx
	movaps	16(%rsp), %xmm0
	movaps	32(%rsp), %xmm1
	movq	%rbx, %rsp
	popq	%rbx
	jmp	*%r11
	.size	kft_pg_return, .-kft_pg_return

#endif /* __x86_64__ */

	.section .note.GNU-stack, "", @progbits

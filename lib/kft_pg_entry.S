/*
 * lib/kft_pg_entry.S - the assembly entry points of the -pg hooks (x86-64 only):
 * mcount (gcc -pg), __fentry__ (gcc -pg -mfentry; also kft_pg_fentry for
 * lib/kft_patch.c's patched entries), kft_dyn_entry (functions patched at
 * run time, lib/kft_dynpatch.c), kft_plt_entry (library calls,
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
 * and gives back the real return address, restores and jumps there;
 * kft_dyn_return does the same for functions patched at run time, keeping
 * every register (see below).
 *
 * Registers: a function built without hooks may be called by code that
 * relies on it leaving some call-clobbered registers alone (gcc's
 * -fipa-ra, on by default at -O2, knows which ones a function of the
 * same file does not touch).  So kft_dyn_entry and kft_dyn_return keep
 * every register the C side may change: rax rcx rdx rsi rdi r8-r11 and
 * xmm0-15 (PG_SAVE 1); the compiled hooks' callers expect a clobber and
 * need only the argument registers kept (PG_SAVE).
 *
 * Stack alignment: the call to the C side is made with %rsp 16-aligned
 * whatever the caller's alignment.
 */
#if defined(__x86_64__)

	.text

/*
 * PG_SAVE: save the argument registers (rax rdi rsi rdx rcx r8-r10,
 * xmm0-7) in a 16-aligned area below the stack (callers need not keep the
 * stack aligned: gcc omits the alignment for calls to functions it knows
 * need none); %rbx keeps the stack pointer at entry + 8.  @all=1: every
 * call-clobbered register (r11 and xmm8-15 too), for code whose callers
 * expected no call (kft_dyn_entry, kft_dyn_return); the area then ends at
 * least 16 bytes below the saved %rbx (kft_dyn_return keeps a word at
 * -8(%rbx)).  @cfi=0: no CFI directives (outside a CFI procedure).
 */
.macro PG_SAVE all=0 cfi=1
	pushq	%rbx
	.if \cfi
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	.endif
	movq	%rsp, %rbx
	.if \cfi
	.cfi_def_cfa_register rbx
	.endif
	subq	$(208 + \all * 144), %rsp
	andq	$-16, %rsp
	movq	%rax, 0(%rsp)
	movq	%rdi, 8(%rsp)
	movq	%rsi, 16(%rsp)
	movq	%rdx, 24(%rsp)
	movq	%rcx, 32(%rsp)
	movq	%r8, 40(%rsp)
	movq	%r9, 48(%rsp)
	movq	%r10, 56(%rsp)
	movaps	%xmm0, 80(%rsp)
	movaps	%xmm1, 96(%rsp)
	movaps	%xmm2, 112(%rsp)
	movaps	%xmm3, 128(%rsp)
	movaps	%xmm4, 144(%rsp)
	movaps	%xmm5, 160(%rsp)
	movaps	%xmm6, 176(%rsp)
	movaps	%xmm7, 192(%rsp)
	.if \all
	movq	%r11, 64(%rsp)
	movaps	%xmm8, 208(%rsp)
	movaps	%xmm9, 224(%rsp)
	movaps	%xmm10, 240(%rsp)
	movaps	%xmm11, 256(%rsp)
	movaps	%xmm12, 272(%rsp)
	movaps	%xmm13, 288(%rsp)
	movaps	%xmm14, 304(%rsp)
	movaps	%xmm15, 320(%rsp)
	.endif
.endm

/* PG_SAVE undone, with the same @all and @cfi. */
.macro PG_RESTORE all=0 cfi=1
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdi
	movq	16(%rsp), %rsi
	movq	24(%rsp), %rdx
	movq	32(%rsp), %rcx
	movq	40(%rsp), %r8
	movq	48(%rsp), %r9
	movq	56(%rsp), %r10
	movaps	80(%rsp), %xmm0
	movaps	96(%rsp), %xmm1
	movaps	112(%rsp), %xmm2
	movaps	128(%rsp), %xmm3
	movaps	144(%rsp), %xmm4
	movaps	160(%rsp), %xmm5
	movaps	176(%rsp), %xmm6
	movaps	192(%rsp), %xmm7
	.if \all
	movq	64(%rsp), %r11
	movaps	208(%rsp), %xmm8
	movaps	224(%rsp), %xmm9
	movaps	240(%rsp), %xmm10
	movaps	256(%rsp), %xmm11
	movaps	272(%rsp), %xmm12
	movaps	288(%rsp), %xmm13
	movaps	304(%rsp), %xmm14
	movaps	320(%rsp), %xmm15
	.endif
	movq	%rbx, %rsp
	.if \cfi
	.cfi_def_cfa_register rsp
	.endif
	popq	%rbx
	.if \cfi
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	.endif
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
 * Functions patched at run time (lib/kft_dynpatch.c): the trampoline of
 * each holds the function's address, then "call *kft_dyn_entry" (6 bytes),
 * then the function's moved first instructions.  So the function's
 * address lies 14 bytes before our return address, and its return address
 * just above ours, as for __fentry__.  Every call-clobbered register is
 * kept (PG_SAVE 1: the function's callers did not expect a hook).
 */
	.globl	kft_dyn_entry
	.hidden	kft_dyn_entry
	.type	kft_dyn_entry, @function
	.p2align 4
kft_dyn_entry:
	.cfi_startproc
	PG_SAVE 1
	leaq	16(%rbx), %rdi		/* the traced function's return-address slot */
	movq	8(%rbx), %rsi		/* our return address, in the trampoline */
	movq	-14(%rsi), %rsi		/* the function's address, kept before the call */
	movl	$3, %edx		/* KFT_PG_PATCHED */
	call	kft_pg_enter
	PG_RESTORE 1
	ret
	.cfi_endproc
	.size	kft_dyn_entry, .-kft_dyn_entry

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
 * this symbol.  Only the return value is kept (rax rdx xmm0 xmm1): the
 * function's callers expected it to clobber the rest.
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

/*
 * The exit trampoline of functions patched at run time (kft_dyn_entry's):
 * as kft_pg_return, but every call-clobbered register is kept (their
 * callers may rely on some, -fipa-ra), %r11 included, so the jump back
 * goes through a word left 16 bytes below the stack pointer, in the red
 * zone, which a signal delivered then does not overwrite (the kernel skips
 * 128 bytes) and which the caller, just returned to, does not use.
 */
	.globl	kft_dyn_return
	.hidden	kft_dyn_return
	.type	kft_dyn_return, @function
	.p2align 4
	nop
kft_dyn_return:
	PG_SAVE 1, 0		/* every register; no CFI: nothing unwinds through here */
	leaq	8(%rbx), %rdi		/* the stack pointer after the function's ret */
	call	kft_pg_exit
	movq	%rax, -8(%rbx)		/* the real return address, below the saved %rbx */
	PG_RESTORE 1, 0
	jmp	*-16(%rsp)
	.size	kft_dyn_return, .-kft_dyn_return

#endif /* __x86_64__ */

	.section .note.GNU-stack, "", @progbits

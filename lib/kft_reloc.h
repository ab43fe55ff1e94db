/*
 * lib/kft_reloc.h - moving the first instructions of a function elsewhere
 * (x86-64), for run-time patching of programs built without function
 * hooks (lib/kft_dynpatch.c; `ktrace record` asks the same questions of
 * the ELF file before the run, cli/record_detect.c).
 *
 * A function is patched by writing "jmp rel32" (5 bytes) over its first
 * instructions (after an endbr64, which stays for indirect calls).  The
 * whole instructions that the jump covers are moved to a trampoline, where
 * they run after the entry hook and are followed by a jump back to the
 * first instruction the patch left intact.  Moving an instruction keeps
 * its meaning when it is re-encoded for its new address: a relative jump
 * or conditional jump is retargeted (rel8 widened to rel32 when needed),
 * a RIP-relative operand gets the displacement that reaches the same
 * byte; any other instruction is copied byte for byte.  Instructions are
 * decoded and re-encoded by Zydis 4 (libZydis.so.4, Debian's libzydis4),
 * loaded with dlopen() so that libktrace does not depend on it.
 *
 * A call among them (common: "sub $8,%rsp; call f") is moved only as the
 * last of them, as "push its return address; jmp target": the callee then
 * returns to the first instruction left in place, with the return address
 * the program itself would have pushed, so unwinders (C++ exceptions,
 * backtraces) find the function as they expect; a call followed by other
 * moved instructions would return into the trampoline, where no unwinder
 * finds the function, and is refused.
 *
 * A function is refused (enum kft_reloc_err) when it is shorter than the
 * jump, when an instruction in its first bytes does not decode, is a call
 * not moved last, or cannot be re-encoded where it goes (loop/jrcxz
 * have only rel8; a RIP-relative target out of reach; a call through the
 * stack pointer), or when a jump in
 * the function lands inside the bytes to be overwritten (a jump to the
 * entry itself is a recursive or tail self-call: it runs the entry hook
 * again and is recorded as a call, as -pg builds and uftrace record it):
 * every relative branch of the function (the symbol's size) is checked,
 * by a linear sweep.  Jumps from other functions into the moved bytes, and
 * computed jumps, cannot be seen: compilers do not emit them into a
 * function's first instructions.
 *
 * Thread-safety: kft_reloc_load() once, before use (not thread-safe);
 * then kft_reloc_entry() is reentrant.  Not async-signal-safe (dlopen).
 */
#ifndef KTRACE_LIB_KFT_RELOC_H
#define KTRACE_LIB_KFT_RELOC_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the jump written at the patch site. */
#define KFT_RELOC_JMP 5
/* Most bytes the moved instructions and the jump back take in a trampoline. */
#define KFT_RELOC_MAX 64

/* Why a function cannot be patched: counted and shown per reason. */
enum kft_reloc_err {
	KFT_RELOC_OK = 0,
	KFT_RELOC_NODECODER, /* libZydis.so.4 cannot be loaded */
	KFT_RELOC_SMALL,     /* shorter than the jump */
	KFT_RELOC_BADINSN,   /* an instruction of its first bytes does not decode */
	KFT_RELOC_CALL,      /* a call among its first bytes, not the last moved */
	KFT_RELOC_UNMOVABLE, /* an instruction that cannot run in the trampoline */
	KFT_RELOC_JUMPIN,    /* a jump of the function lands in its first bytes */
	KFT_RELOC_NR
};

/* One short phrase per reason: "shorter than 5 bytes", ... */
extern const char *const kft_reloc_reason[KFT_RELOC_NR];

/**
 * struct kft_reloc - what kft_reloc_entry() made of a function.
 * @start:   where the patch goes, from the function's address (bytes):
 *           4 after an endbr64, else 0.
 * @len:     bytes of whole instructions moved (>= KFT_RELOC_JMP), from
 *           @start; the patch overwrites them.
 * @out_len: bytes of @out: the moved instructions re-encoded for their new
 *           address, then "jmp rel32" back to function + @start + @len,
 *           then @lit bytes of data.
 * @lit:     8 when the last instruction moved is a call: it became "push
 *           qword [rip + to the literal]; jmp target", and the literal,
 *           after the jump back, is the call's own return address (the
 *           first instruction left in place); else 0.
 */
struct kft_reloc {
	unsigned start, len, out_len, lit;
	uint8_t out[KFT_RELOC_MAX];
};

/**
 * kft_reloc_load() - load libZydis.so.4.  Idempotent.
 * Return: 0, or -ENOENT (not installed, or not the Zydis 4 interface).
 */
int kft_reloc_load(void);

/**
 * kft_reloc_entry() - plan the patch of one function.
 * @code: the function's bytes (@size: its symbol's size, in bytes), which
 *        run at address @addr.
 * @to:   the address where @r->out will run (a trampoline within 2 GiB of
 *        the function and of its RIP-relative targets).
 * @r:    filled when the function can be patched.
 * Return: KFT_RELOC_OK, or the reason it cannot.
 */
enum kft_reloc_err kft_reloc_entry(const uint8_t *code, size_t size, uint64_t addr, uint64_t to,
				   struct kft_reloc *r);

#endif

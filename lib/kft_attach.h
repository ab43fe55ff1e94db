/*
 * lib/kft_attach.h - what `ktrace record -p PID` (cli/record_attach.c) and
 * libktrace, loaded into the running process PID, tell each other.
 *
 * record stops every thread of PID (ptrace), makes one of them call
 * dlopen("libktrace.so.0") and then, with the other threads running again,
 * kft_attach_start(SETTINGS): SETTINGS is "NAME=VALUE\0"..."\0", each of
 * the variables a program started by record finds in its environment
 * (KTRACE_SESSION, KTRACE_RECORD_DIR, KTRACE_CONFIG_TEXT, KTRACE_PATCH,
 * KTRACE_FLIGHT, ...; kt_env() reads them, the process's environment is
 * not touched).  The run is set up as lib/kft_setup.c's constructor sets it
 * up, except that the entries of the functions to patch (and the GOT
 * slots of a program's compiled hooks, lib/kft_plt.c) are not written:
 * the writes are listed in struct kft_attach_info, which record reads
 * (process_vm_readv) and performs itself, every thread stopped, skipping
 * (for the moment) a function a thread is stopped inside (ptrace writes
 * read-only text).  Then kft_attach_go() primes the run (so no call is
 * recorded while one of its callees is still unpatched), and each thread
 * whose stack record unwound holds calls of patched functions is made to
 * call kft_attach_adopt() with them: they are followed from then on,
 * flagged unfinished.
 * At the end record stops every thread again, writes the old bytes back,
 * and has one thread call kft_attach_stop(): the run stops, the memory
 * maps and the status are written.  Then, once no thread is inside
 * libktrace's code (record checks every thread's %rip, every thread
 * stopped), kft_attach_release(): the channel is retired (its rings
 * unmapped), the session forgotten, so that a later attach sets a new run
 * up.  libktrace stays loaded: calls still open return through its exit
 * trampoline.
 *
 * The functions: called by one thread (kft_attach_adopt(): by each in
 * turn, every other thread stopped), injected, not re-entrant;
 * allocate (kt_malloc); return the address of the static
 * struct kft_attach_info (never NULL).
 */
#ifndef KTRACE_LIB_KFT_ATTACH_H
#define KTRACE_LIB_KFT_ATTACH_H

#include <stdint.h>

#include "runtime.h" /* KT_EXPORT */

#define KFT_ATTACH_MAGIC 0x6b617431u /* "kat1" */

/*
 * One write: @len bytes at @addr, @old now, @new_ to write; @kind
 * KFT_WRITE_ENTRY a function's entry (a jmp + int3s), KFT_WRITE_HOOK a GOT
 * slot of a compiled hook (libktrace's hook's address).
 */
enum { KFT_WRITE_ENTRY = 0, KFT_WRITE_HOOK = 1 };

struct kft_patch_write {
	uint64_t addr;
	uint32_t len;
	uint32_t kind;
	uint8_t old[16];
	uint8_t new_[16];
};

/**
 * struct kft_attach_info - the answer of kft_attach_start() and
 * kft_attach_stop(), at a fixed address in the process.
 * @magic: KFT_ATTACH_MAGIC once written.
 * @status: 0, or a negative errno: the run could not be set up (or
 *          stopped); @error says why in one line.  -EOWNERDEAD from
 *          kft_attach_start(): an earlier attach's run is still there and
 *          its consumer is dead (record was killed): @writes lists its
 *          writes, for record to undo before kft_attach_stop() and
 *          kft_attach_release(), then to attach again.
 * @writes: address of @nwrites struct kft_patch_write, sorted by address
 *          (0 if none): the entries record writes.
 * @patched: functions planned (= @nwrites); @skipped: left alone (why in
 *          DIR/kft-dynpatch).
 * @returns: the exit trampolines' addresses (kft_dyn_return,
 *          kft_pg_return; hidden symbols): a stack frame that returns
 *          there is a traced call in flight, not a thread inside
 *          libktrace's code (record's check before kft_attach_release()).
 */
struct kft_attach_info {
	uint32_t magic;
	int32_t status;
	uint64_t writes;
	uint32_t nwrites;
	uint32_t skipped;
	uint64_t returns[2];
	char error[512];
};

KT_EXPORT struct kft_attach_info *kft_attach_start(const char *settings);
KT_EXPORT struct kft_attach_info *kft_attach_stop(void);
KT_EXPORT struct kft_attach_info *kft_attach_release(void);
/*
 * kft_attach_go() - once record has made every write: the run is primed
 * (it starts, unless its configuration waits for a trigger), so that no
 * call is recorded while some of its callees are still unpatched.
 */
KT_EXPORT struct kft_attach_info *kft_attach_go(void);
/*
 * kft_attach_adopt() - called in each thread, after kft_attach_go(): the
 * calls of patched functions that thread was inside when record attached,
 * @n pairs (return-address slot, function) at @pairs, innermost first (as
 * record unwound the thread's stack): each is entered now, its return
 * diverted to the exit trampoline, and its record flagged unfinished (its
 * entry was not seen), so calls open at the attach are in the trace.
 */
KT_EXPORT struct kft_attach_info *kft_attach_adopt(const uint64_t *pairs, uint64_t n);

/* For lib/kft_setup.c: the run set up by kft_attach_start() is primed by kft_attach_go(). */
void kft_attach_prime_later(void);

/* For lib/kft_dynpatch.c: nonzero while kft_attach_start() runs (entries are listed, not written). */
int kft_attaching(void);

/* For lib/kft_dynpatch.c and lib/kft_plt.c: list a write of @kind.  Return: 0, -EINVAL or -ENOMEM. */
int kft_attach_add_write(uint64_t addr, const uint8_t *new_, uint32_t len, uint32_t kind);

#endif

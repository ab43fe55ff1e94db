/*
 * cli/record_opts.h - `ktrace record`'s uftrace-style options turned into
 * KFT configuration text (cli/record_opts.c), and what record tells the
 * program besides (its start time, a pipe for the reason it could not be
 * traced) and how it reports the outcome.
 *
 *   -F FUNC            only these functions: filter funclist FUNC fend
 *   -N FUNC            never these functions: filter notrace FUNC fend
 *   -D N               only calls less than N deep: filter depth N
 *   -t TIME            only calls lasting TIME or more: filter mintime
 *                      (100us, 1.5ms, 2s; a bare number is microseconds)
 *   -T FUNC@trace-on   trigger start entry FUNC  (trace_on also accepted)
 *   -T FUNC@trace-off  trigger stop entry FUNC
 *
 * FUNC may be a shell pattern ('sqlite3Btree*', 'geo::Rect::*'); -F, -N
 * and -T repeat.  The text holds one statement per line, each ending with
 * "# OPTION", which the runtime quotes in errors.
 */
#ifndef KTRACE_CLI_RECORD_OPTS_H
#define KTRACE_CLI_RECORD_OPTS_H

#include <gelf.h>
#include <stddef.h>

/**
 * struct rec_opts - the options as given.  @text grows with each option
 * (malloc'ed, NUL-terminated; NULL while empty).
 */
struct rec_opts {
	char *text;
	size_t len;
	int have_start, have_stop, have_depth, have_time;
};

/**
 * rec_opts_add() - take option @opt ('F', 'N', 'D', 't', 'T') with @arg.
 * Return: 0, or -1 after printing "ktrace record: option '-X': why"
 * (exit 2).
 */
int rec_opts_add(struct rec_opts *o, int opt, const char *arg);

/**
 * rec_opts_check() - parse the generated text and @config_text (a
 * configuration file's contents, or NULL) for syntax, as the program will
 * (names are resolved there), and check that they combine.  Errors are
 * printed naming the option or FILE:LINE:COL.  Return: 0 or -1.
 */
int rec_opts_check(const struct rec_opts *o, const char *config_path, const char *config_text,
		   size_t config_len);

/** rec_opts_free() - release @o's text. */
void rec_opts_free(struct rec_opts *o);

/**
 * struct rec_report - the pipe on which the runtime says why it could not
 * trace (KTRACE_REPORT_FD), read by record when the program has ended.
 */
struct rec_report {
	int rd, wr;
};

/** rec_report_open() - make the pipe (both ends close-on-exec).  Return: 0 or -errno. */
int rec_report_open(struct rec_report *r);

/**
 * rec_report_child() - in the child, before exec: hand the write end to
 * the program (KTRACE_REPORT_FD=FD,INODE), set KTRACE_EXEC_NS to now
 * (CLOCK_MONOTONIC: time 0 of `trigger start time`) and
 * KTRACE_CONFIG_TEXT to @opts' text.
 */
void rec_report_child(struct rec_report *r, const struct rec_opts *opts);

/** rec_report_parent() - in record, after fork: close the write end. */
void rec_report_parent(struct rec_report *r);

/**
 * rec_outcome() - after the program ended: say once why nothing was
 * traced, if so, or summarise the run (unless @quiet), and choose the exit
 * status.
 * @dir:     the trace directory; @argv: the program and its arguments
 *           (appended to DIR/metadata as its `cmdline` line).
 * @status:  its wait status; @kernel: REC_OTHER_EVENTS: something else
 *           was recorded (kernel events, lock events, or a channel the
 *           program set up itself): the program need not be instrumented;
 *           with REC_SAID_NO_HOOKS too, the build line already said that
 *           its calls cannot be traced (no second warning when none were);
 *           REC_TRACED: the consumer saw the program's records (written
 *           or counted lost), so it was traced whatever DIR/kft-status
 *           says (a full disk may have kept the runtime from rewriting it).
 * Return: the program's exit status (128 + signal if killed), or 1 when
 * it could not be traced (the reason printed once:
 * "ktrace record: PROG was not traced: REASON").
 */
#define REC_OTHER_EVENTS 1
#define REC_SAID_NO_HOOKS 2
#define REC_TRACED 4
int rec_outcome(struct rec_report *r, const char *dir, char **argv, int status, int kernel,
		int quiet);

/* What rec_detect() found in a program's ELF file (cli/record_detect.c). */
#define REC_BUILD_INST 1u       /* __cyg_profile_func_enter: -finstrument-functions */
#define REC_BUILD_MCOUNT 2u     /* mcount: -pg */
#define REC_BUILD_FENTRY 4u     /* __fentry__: -pg -mfentry */
#define REC_BUILD_PATCHABLE 8u  /* __patchable_function_entries section */
#define REC_BUILD_STATIC 16u    /* no PT_INTERP: LD_PRELOAD cannot reach it */
#define REC_BUILD_OTHERARCH 32u /* not x86-64 (the -pg hooks are x86-64 only) */
#define REC_BUILD_NOFILE 64u    /* not found along PATH, or unreadable */
#define REC_BUILD_NOTELF 128u   /* a script or another format */
#define REC_BUILD_MCOUNTLOC 256u /* __mcount_loc section: -mrecord-mcount (with -mnop-mcount) */

/**
 * rec_detect() - how @prog (found along PATH as exec does, its path into
 * @path) was built: REC_BUILD_* bits from its symbol tables, section
 * headers and program headers (libelf).  Never fails: an unreadable file
 * is REC_BUILD_NOFILE.
 */
unsigned rec_detect(const char *prog, char *path, size_t size);

/**
 * rec_detect_line() - the one line `ktrace record` prints about build @b
 * of @prog into @line: what it will do, or why it cannot trace its calls
 * and which flag would.  Return: 1 if its calls can be traced, 0 if not.
 */
int rec_detect_line(unsigned b, const char *prog, char *line, size_t size);

/**
 * rec_detect_libcalls() - how many library functions the program at @path
 * calls through its PLT (or, built -fno-plt, its GOT) that lib/kft_plt.c
 * hooks (kft/libcall.h's list left out), from its ELF file (libelf).
 * Return: the number, -1 if the file is unreadable, not ELF or not x86-64.
 */
int rec_detect_libcalls(const char *path);

/**
 * struct rec_patch - the -P and -U options as KTRACE_PATCH's rules
 * (lib/kft_patchrules.h): @spec "+PAT;-PAT@LIB;..." (malloc'ed, NULL while
 * empty, @len bytes), @nrules of them, @main_plus set when a -P names
 * functions of the main program (no @LIB).
 */
struct rec_patch {
	char *spec;
	size_t len;
	int nrules, main_plus;
};

/**
 * rec_patch_add() - take -P (@key 'P') or -U ('U') PATTERN[@LIB] @arg.
 * Return: 0, or -1 after one line "ktrace record: option '-P': why".
 */
int rec_patch_add(struct rec_patch *p, int key, const char *arg);

/** rec_patch_free() - release @p's rules. */
void rec_patch_free(struct rec_patch *p);

/**
 * struct rec_patch_scan - the main program's functions that the rules
 * select (@selected) and what lib/kft_reloc.c makes of them: @why[0]
 * patchable, @why[k] left alone for reason k (enum kft_reloc_err);
 * @decoder 0: libZydis.so.4 missing, nothing was planned.
 */
struct rec_patch_scan {
	unsigned selected, why[8];
	int decoder;
};

/**
 * rec_patch_scan() - apply the rules of @spec (KTRACE_PATCH's text) to
 * the program file @path, as lib/kft_dynpatch.c will in the process, and
 * plan each selected function's patch.  Return: 0, or -1 (no decoder,
 * unreadable file: @s says which).
 */
int rec_patch_scan(const char *path, const char *spec, struct rec_patch_scan *s);

/**
 * rec_elf_funcs() - call @fn(symbol, name, @arg) for each defined function
 * symbol (STT_FUNC, not undefined) of @elf's symbol tables of type @type
 * (SHT_SYMTAB, SHT_DYNSYM), in file order, until it returns nonzero.
 * Return: -1 if @elf has no such table, else what @fn returned last (0:
 * every symbol seen).
 */
int rec_elf_funcs(Elf *elf, unsigned type, int (*fn)(const GElf_Sym *sym, const char *name, void *arg),
		  void *arg);

/**
 * rec_patch_line() - the build line for a program without hooks traced by
 * patching: "PROG: built without function hooks: N functions patched at
 * start, M left alone (why)".  Return: 1 if some can be patched, or none is
 * selected (a stripped program: its library calls are traced), else 0.
 */
int rec_patch_line(const char *prog, const struct rec_patch_scan *s, char *line, size_t size);

#endif

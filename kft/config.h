/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/config.h - the KFT configuration language: parsed form and parser.
 *
 * A configuration describes one trace run of the function tracer, in the
 * language of seed 002's Appendix A (KFT, Kernel Function Trace):
 *
 *     new                            # optional, first word
 *     begin                          # optional block: begin ... end
 *     trigger start entry main       # start|stop  entry|exit FUNC  or  time USECS
 *     trigger stop time 5000         # stop time counts from the start
 *     filter mintime 500             # keep calls lasting >= 500 us
 *     filter maxtime 0               # 0: no upper bound
 *     filter noints                  # or onlyints (signal handlers in user space)
 *     filter funclist f g 0x401136 fend
 *     filter notrace h 'parse_*' fend  # never these functions
 *     filter depth 8                 # only calls less than 8 deep
 *     watch stack 4096               # or worst-stack BYTES
 *     logentries 500
 *     autorepeat
 *     prime                          # prime as soon as loaded
 *     end
 *
 * docs/KFT-CONFIG.md is the reference.  The parser is freestanding C (no
 * libc, no allocation): the caller owns the struct kft_config and the
 * error; function names are resolved by a callback the caller supplies
 * (dladdr/ELF symbols in user space, kallsyms in the kernel).
 */
#ifndef KFT_CONFIG_H
#define KFT_CONFIG_H

#include "kft.h"

/* Functions a funclist can hold (KFT kept a fixed table too). */
#define KFT_FUNCLIST_MAX 256u
/* Bytes of an error message, NUL included. */
#define KFT_ERRMSG_MAX 160u

/* What a trigger fires on. */
enum kft_trigger_kind {
	KFT_TRIG_NONE = 0,  /* no trigger given */
	KFT_TRIG_ENTRY = 1, /* entry to function @arg */
	KFT_TRIG_EXIT = 2,  /* exit from function @arg */
	KFT_TRIG_TIME = 3,  /* @arg microseconds: start: after the time origin;
			     * stop: after the run started */
};

/* Kinds of watch. */
enum kft_watch_kind {
	KFT_WATCH_NONE = 0,
	KFT_WATCH_STACK = 1,       /* mark the call stack whenever stack left < threshold */
	KFT_WATCH_WORST_STACK = 2, /* the same, and lower the threshold each time */
};

/* struct kft_config.flags */
#define KFT_CF_NOINTS 0x0001u     /* filter noints */
#define KFT_CF_ONLYINTS 0x0002u   /* filter onlyints */
#define KFT_CF_MINTIME 0x0004u    /* filter mintime given */
#define KFT_CF_MAXTIME 0x0008u    /* filter maxtime given (0 = no bound) */
#define KFT_CF_FUNCLIST 0x0010u   /* filter funclist given */
#define KFT_CF_AUTOREPEAT 0x0020u /* autorepeat */
#define KFT_CF_PRIME 0x0040u      /* prime: prime the run when loaded */
#define KFT_CF_LOGENTRIES 0x0080u /* logentries given */
#define KFT_CF_NEW 0x0100u        /* the text began with 'new' */
#define KFT_CF_BLOCK 0x0200u      /* the statements were inside begin ... end */
#define KFT_CF_NOTRACE 0x0400u    /* filter notrace given */
#define KFT_CF_DEPTH 0x0800u      /* filter depth given */

/**
 * struct kft_trigger - one start or stop trigger.
 * @kind: enum kft_trigger_kind.
 * @arg:  the function address (ENTRY, EXIT) or the time in microseconds (TIME).
 */
struct kft_trigger {
	kt_u32 kind;
	kt_u32 pad;
	kt_u64 arg;
};

/**
 * struct kft_config - one parsed run configuration.  Plain data (no
 * pointers), so it can be copied into shared memory or the kernel.
 * @start, @stop:     the triggers (kind NONE: start when primed, stop only
 *                    by command, buffer exhaustion or logentries).
 * @mintime_us:       keep calls lasting at least this long (KFT_CF_MINTIME).
 * @maxtime_us:       drop calls lasting longer; 0 = no bound (KFT_CF_MAXTIME).
 * @watch:            enum kft_watch_kind.
 * @watch_threshold:  bytes of stack left below which the watch fires.
 * @logentries:       the most records the run may keep (0 = unbounded, the
 *                    default: the trace buffer is the bound).
 * @flags:            KFT_CF_*.
 * @nfuncs, @funcs:   the funclist, in the order given (duplicates allowed).
 * @nnotrace, @notrace_fns: the notrace list (functions never recorded).
 * @max_depth:        filter depth: keep calls at shadow-stack depth below
 *                    it (0 = the outermost traced frame), KFT_CF_DEPTH.
 */
struct kft_config {
	struct kft_trigger start;
	struct kft_trigger stop;
	kt_u64 mintime_us;
	kt_u64 maxtime_us;
	kt_u64 watch_threshold;
	kt_u64 logentries;
	kt_u32 watch;
	kt_u32 flags;
	kt_u32 nfuncs;
	kt_u32 nnotrace;
	kt_u64 funcs[KFT_FUNCLIST_MAX];
	kt_u64 notrace_fns[KFT_FUNCLIST_MAX]; /* not "notrace": a kernel macro */
	kt_u32 max_depth;
	kt_u32 pad;
};

/**
 * struct kft_error - where and why a configuration was refused.
 * @line, @col: 1-based position (columns count bytes; a tab is one).
 * @msg:        what was expected, NUL-terminated, no position, no newline.
 */
struct kft_error {
	kt_u32 line;
	kt_u32 col;
	char msg[KFT_ERRMSG_MAX];
};

/**
 * kft_resolve_fn - resolve a function name to its address.
 * @arg:  the caller's context, as given to kft_config_parse().
 * @name: the name, @len bytes, NOT NUL-terminated.
 * @addr: where to store the address.
 * Return: 0 if found, a negative errno (e.g. -KFT_ENOENT) if not.
 * Called from the parser only (never from a tracing hook).
 */
typedef int (*kft_resolve_fn)(void *arg, const char *name, kt_u32 len, kt_u64 *addr);

/**
 * kft_glob_fn - the functions whose names match a shell pattern (`*`, `?`,
 * `[...]`, as fnmatch(3); C++ functions match by mangled or demangled
 * name).
 * @pat:   the pattern, @len bytes, NOT NUL-terminated.
 * @addrs: room for @max addresses, filled with the first matches.
 * Return: the number of matching functions (may exceed @max: then only
 * @max were stored), or a negative errno.  Parser only.
 */
typedef int (*kft_glob_fn)(void *arg, const char *pat, kt_u32 len, kt_u64 *addrs, kt_u32 max);

/**
 * struct kft_names - how a configuration's function names become
 * addresses: @resolve for names (NULL: only 0x addresses), @glob for
 * patterns (NULL: patterns are refused), both called with @arg; and the
 * largest `logentries` the caller's log can hold, @max_logentries (0: no
 * limit; the kernel module's log is allocated whole, user space streams).
 */
struct kft_names {
	kft_resolve_fn resolve;
	kft_glob_fn glob;
	void *arg;
	kt_u64 max_logentries;
};

/** kft_config_init() - an empty configuration (no trigger, no filter). */
void kft_config_init(struct kft_config *cfg);

/**
 * kft_config_parse() - parse a configuration text.
 * @cfg:     filled from scratch (kft_config_init() first).
 * @text:    the text, @len bytes; need not be NUL-terminated; NUL and other
 *           control bytes (except tab, CR, LF) are refused.
 * @resolve: resolves function names; NULL means names are refused and only
 *           0x addresses work (KFT's dynamic /proc/kft rule).
 * @arg:     passed to @resolve.
 * @err:     on failure, line, column and message of the first error.
 *
 * Not thread-safe on the same @cfg; no allocation; stack use is small and
 * bounded (no recursion), so it may run in the kernel.
 * Return: 0, or -KFT_EINVAL with @err filled (syntax, unknown keyword,
 * missing argument, bad number, unknown function, contradiction, ...).
 */
int kft_config_parse(struct kft_config *cfg, const char *text, kt_u64 len, kft_resolve_fn resolve,
		     void *arg, struct kft_error *err);

/**
 * kft_config_parse_names() - kft_config_parse() with patterns: a function
 * word holding `*`, `?` or `[` is a pattern, given to @names->glob; in a
 * funclist or notrace list it stands for every match (the lists hold at
 * most KFT_FUNCLIST_MAX each), in a trigger it must match exactly one
 * function.  A pattern matching nothing is an error, as an unknown name.
 * Return: as kft_config_parse().
 */
int kft_config_parse_names(struct kft_config *cfg, const char *text, kt_u64 len,
			   const struct kft_names *names, struct kft_error *err);

/**
 * kft_config_merge() - add @src to @dst, as if @src's statements followed
 * @dst's: funclists and notrace lists add up, flags combine; a statement
 * both give that may appear once (a trigger, mintime, maxtime, depth,
 * watch, logentries), noints with onlyints, or a mintime above maxtime
 * is refused and @dst is left unchanged.  Used to combine a configuration
 * file with `ktrace record`'s -F/-N/-D/-t/-T options.
 * Return: 0, or -KFT_EINVAL with @err->msg saying what clashed (line and
 * column 0).
 */
int kft_config_merge(struct kft_config *dst, const struct kft_config *src, struct kft_error *err);

/**
 * kft_error_format() - "FILE:LINE:COL: MESSAGE" into @buf (NUL-terminated,
 * truncated to @size).  @file NULL gives "LINE:COL: MESSAGE".
 * Return: the length written (without the NUL).
 */
kt_u32 kft_error_format(char *buf, kt_u32 size, const char *file, const struct kft_error *e);

/**
 * kft_name_fn - write a name for function address @addr into @buf (@size
 * bytes, NUL-terminated).  Return: its length, or 0 to print the address.
 */
typedef kt_u32 (*kft_name_fn)(void *arg, kt_u64 addr, char *buf, kt_u32 size);

/**
 * kft_config_format() - write @cfg back as configuration text, one
 * statement per line, inside "new / begin / end".  Functions are written as
 * 0x addresses, or by name if @name is given and knows them: the
 * address-only form is what KFT's sym2addr produced for /proc/kft, and it
 * parses back to an equal configuration.
 * @indent: prefix of each statement line ("" or "  ").
 * Return: the length the full text needs (as snprintf: if >= @size the
 * text was truncated; @buf is always NUL-terminated when @size > 0).
 */
kt_u32 kft_config_format(const struct kft_config *cfg, char *buf, kt_u32 size, const char *indent,
			 kft_name_fn name, void *arg);

#endif /* KFT_CONFIG_H */

/*
 * kclient/internal.h - what the files of libktrace-kclient share and
 * nothing else may use: the error reporting behind kcl_set_report(),
 * whole-file reading, the machine's metadata lines, the clock, the event catalogue as a table, the steps
 * of a tracefs recording, the KFT kernel trace directory.
 * Only files in kclient/ include it; the library's API is kclient.h.
 */
#ifndef KTRACE_KCLIENT_INTERNAL_H
#define KTRACE_KCLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "kclient/kclient.h"

/**
 * kcl_error() - report an error of the ktrace command @cmd ("record",
 * "read", "kft", "lkst"): the message formatted from @fmt (cut at 4095
 * bytes) goes to the kcl_set_report() hook.  Not async-signal-safe (never
 * call it in a signal handler or between fork() and exec()).
 */
void kcl_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * kcl_slurp() - read the whole file @path (also a /proc or debugfs file,
 * whose size is 0) into a malloc'ed buffer, NUL-terminated after its
 * *@len bytes (kclient/slurp.c).
 * @max: the most bytes accepted; a longer file fails with EFBIG.
 * Return: the buffer, or NULL with errno set (*@len then holds the bytes
 * read before a read error).  Thread-safe.
 */
char *kcl_slurp(const char *path, size_t *len, size_t max);

/** kcl_slurp_fd() - the same from an open descriptor @fd (not closed). */
char *kcl_slurp_fd(int fd, size_t *len, size_t max);

/**
 * kcl_md_machine() - the metadata lines that describe this machine
 * (docs/FORMAT.md), written to @f: `host`, `kernel`, `machine` (uname(2))
 * and `cpus` @cpus (kclient/metadata.c).
 */
void kcl_md_machine(FILE *f, long cpus);

/** kcl_now_ns() - the clock @c in ns. */
static inline uint64_t kcl_now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the kernel event catalogue (kclient/catalogue.c) ------------------ */

/**
 * struct lkst_def - one entry of the kernel event catalogue (lkst.h's
 * X-macro expanded): event type @id, @mn mnemonic, @cat category, the
 * tracepoint @sys:@tp ("" if none), @nargs argument words named by @args
 * (comma-separated tracefs field names), @primary: in RDEFAULT.
 */
struct lkst_def {
	unsigned id;
	const char *mn, *cat, *sys, *tp;
	unsigned nargs;
	const char *args;
	int primary;
};

/** krec_catalogue() - the catalogue, *@n entries, in lkst.h's order (kclient/catalogue.c). */
const struct lkst_def *krec_catalogue(size_t *n);

/**
 * krec_hook_defs() - the tracefs hooks (kclient/lkst_tracefs.c) whose id
 * @sel selects, as catalogue entries in @defs (category "hook", tracepoint
 * KCL_LKST_TF_GROUP:lkst_hook_XX, args "a1,a2"), their strings in @names,
 * @args and @events; room for KTRACE_LKST_HOOK_LAST -
 * KTRACE_LKST_HOOK_FIRST + 1 of each.  Return: how many.
 */
int krec_hook_defs(const uint8_t *sel, struct lkst_def *defs, char (*names)[160],
		   char (*args)[32], char (*events)[32]);

/**
 * kcl_tf_last_error() - the reason of tracefs's last error_log entry ("Invalid
 * probed address or symbol") in @why (@len bytes; "" if none), for a
 * refused dynamic event's message (kclient/lkst_tracefs.c).
 */
void kcl_tf_last_error(char *why, size_t len);

/* ---- EXCEPTION_ENTRY through kprobe events (kclient/exc_tracefs.c) ------ */

/* the kprobe event group of the exception probes: KREC_EXC_GROUP/PREFIX_PID */
#define KREC_EXC_GROUP "ktrace_exc"

/**
 * krec_exc_create() - make this process's kprobe events of EXCEPTION_ENTRY
 * (fields vector, error_code, ip: u64, do_trap's vector u32), before the
 * recording reads the formats of group KREC_EXC_GROUP.  @why (@whylen
 * bytes) gets the probes refused and why ("" if none).  Return: how many
 * were made (0: none; tracefs errors are not fatal).
 */
int krec_exc_create(char *why, size_t whylen);
/** krec_exc_nprobes() - the number of probe slots krec_exc_event() takes. */
unsigned krec_exc_nprobes(void);
/**
 * krec_exc_event() - event name of probe slot @i if made (else NULL), the
 * filter to set in the instance (*@filter, NULL: none) and the vectors it
 * covers (*@vectors, "0 4 5 ...": static strings).
 */
const char *krec_exc_event(unsigned i, const char **filter, const char **vectors);
/** krec_exc_destroy() - delete the events made (once no instance enables them). */
void krec_exc_destroy(void);
/** krec_exc_emergency() - the same with open/write only, for a fatal signal. */
void krec_exc_emergency(void);
/** krec_exc_remove_stale() - delete KREC_EXC_GROUP events of dead pids; how many. */
int krec_exc_remove_stale(void);

/* ---- recording kernel events through tracefs (kclient/tracefs_record.c) - */

/* (krec_begin_program(), krec_end_program() and krec_record_system() are
 * the flows kclient.h offers; these are their steps.) */

/**
 * struct krec_stats - what a finished recording did.
 * @events:      KEVENT records written.
 * @lost:        events the kernel's ring buffer lost (overwritten before
 *               they were read, from the pages' missed-events counts and
 *               the per-CPU `stats` overrun) plus records that could not
 *               be written (disk full).
 * @bytes:       bytes written to the stream files (headers included).
 * @enabled:     tracepoints enabled; @unavailable: selected events this
 *               kernel could not give.
 * @cpus:        per-CPU streams.
 * @raw_pages, @raw_enabled: the raw copy (kclient/ftrace_copy.c).
 */
struct krec_stats {
	uint64_t events, lost, bytes;
	unsigned enabled, unavailable, cpus;
	uint64_t raw_pages;   /* pages in the raw copy, DIR/kernel/ftrace/cpuN */
	unsigned raw_enabled; /* tracepoints enabled in the instance (ftrace/set_event) */
};

/**
 * krec_start() - create the instance, enable the events, start the reader
 * thread writing into the trace directory @outdir (created, mode 0700, or
 * an empty directory of the caller's that is not a link: ksf_dir_open()).
 * @msg, @len: on failure, one line saying why kernel events cannot be
 *             recorded here ("tracefs is not mounted ...", "no permission
 *             to create a tracefs instance ... (needs root)").
 * Return: the recording, or NULL (nothing left behind: no instance, no
 * directory).
 */
struct krec *krec_start(const char *outdir, const struct krec_opts *o, char *msg, size_t len);

/**
 * krec_stop() - stop tracing, read what is left in the ring buffers, write
 * the final metadata (with `thread` lines), remove the instance and free
 * @k.  @st (may be NULL) receives the counts.
 * Return: 0, or -1 if something could not be written (reported: cmd
 * "record", "FILE: what"; everything else was still written).
 */
int krec_stop(struct krec *k, struct krec_stats *st);

/**
 * krec_remove_stale() - remove tracefs instances named ktrace-PID whose
 * process no longer exists (left by a ktrace killed with SIGKILL).
 * Return: instances removed.
 */
int krec_remove_stale(void);

/* ---- the raw ftrace copy and -e tracepoints (kclient/ftrace_copy.c) ---- */

struct tracefs_instance;

/**
 * struct krec_evlist - tracepoints, "SYS" and "NAME" pairs (malloc'ed),
 * without duplicates.  Zero-initialise; krec_evlist_free() releases.
 */
struct krec_evlist {
	char **sys, **name;
	size_t n, cap;
};

/** krec_evlist_add() - add @sys:@name unless present.  Return: 0 or -ENOMEM. */
int krec_evlist_add(struct krec_evlist *l, const char *sys, const char *name);
void krec_evlist_free(struct krec_evlist *l);

/**
 * krec_events_match() - add to @l the tracepoints of the live tracefs
 * (its top level) that the @n patterns "SYS:NAME" / "SYS/NAME" / "SYS"
 * (fnmatch(3) patterns, "SYS" = "SYS:*") name.
 * Return: 0, or -1 with @msg ("unknown tracepoint 'nosuch:event' (no
 * /sys/kernel/tracing/events/nosuch/event)") when a pattern matches
 * nothing or tracefs cannot be listed.
 */
int krec_events_match(const char *const *pats, size_t n, struct krec_evlist *l, char *msg, size_t len);

/**
 * krec_ftrace_begin() - create @kdir/ftrace/ and copy into it, from tracefs
 * (@inst for trace_clock), events/header_page, events/header_event, the
 * format of every event of @l, printk_formats, trace_clock, and write
 * set_event (@l, "SYS:NAME" a line).  Return: a descriptor of
 * @kdir/ftrace (the caller creates cpuN in it and closes it), or -1 with
 * @msg ("PATH: what").
 */
int krec_ftrace_begin(const char *kdir, struct tracefs_instance *inst, const struct krec_evlist *l,
		      char *msg, size_t len);

/**
 * krec_ftrace_end() - copy tracefs's saved_cmdlines (pid -> comm of the
 * tasks the kernel saw) into the ftrace directory @fd (@kdir/ftrace).
 * Return: 0, or -1 with @msg.
 */
int krec_ftrace_end(int fd, const char *kdir, char *msg, size_t len);

/* ---- the trace directory of a KFT kernel run (kclient/kdir.c) ---------- */

/* Shared by kft_proc_extract() and kft_fgraph_run(); errors as cmd "kft". */

/**
 * kft_kdir_create() - create trace directory @dst (mode 0700); an existing
 * directory is reused if it is empty or holds an earlier kernel KFT trace
 * (its files are then replaced with ksf_replace()), and if it is yours and
 * not a symbolic link (lib/safefile.h).
 * Return: 0, or -1 (reported).
 */
int kft_kdir_create(const char *dst);

/**
 * kft_kdir_symbols() - copy the function symbols (types t, T, w, W) of
 * @kallsyms (a /proc/kallsyms or System.map file) to DST/kallsyms.
 * Return: 1 copied, 0 not usable (addresses hidden: a warning was
 * reported), -1 error (reported).
 */
int kft_kdir_symbols(const char *dst, const char *kallsyms);

/**
 * kft_kdir_metadata() - write DST/metadata for a KFT kernel trace: format
 * version, clock mono (identity calibration), host, kernel, CPUs, one
 * shared packed stream cpu0 with @buf_size-byte sub-buffers, time origin
 * boot (created-ns 0), a comment naming DIR/kallsyms if @have_syms, and a
 * `thread TID PID COMM` line per task now listed in @procdir.  @source
 * names where the data came from (a comment).
 * Return: 0, or -1 (reported).
 */
int kft_kdir_metadata(const char *dst, const char *source, uint32_t buf_size, int have_syms,
		      const char *procdir);

/* ---- kernel function symbols (kclient/kft_tracefs.c) ------------------- */

/** struct kft_ksym - one function symbol: its address and name. */
struct kft_ksym {
	uint64_t addr;
	char *name;
};

/** struct kft_ksyms - function symbols sorted by address (zero-init empty). */
struct kft_ksyms {
	struct kft_ksym *v;
	size_t n, cap;
};

/**
 * kft_ksyms_load() - add the function symbols (types t, T, w, W) of @path,
 * a /proc/kallsyms or System.map file, to @s and sort them by address.
 * Return: 0, or -1 with errno set if @path cannot be opened (an
 * allocation failure stops the reading early).
 */
int kft_ksyms_load(struct kft_ksyms *s, const char *path);

/** kft_ksyms_free() - free @s's symbols; @s is empty again. */
void kft_ksyms_free(struct kft_ksyms *s);

/** kft_ksym_name() - the name of the function starting at @addr, or NULL. */
const char *kft_ksym_name(const struct kft_ksyms *s, uint64_t addr);

/**
 * kft_ksym_resolve() - kft_resolve_fn (kft/config.h) over a struct
 * kft_ksyms passed as @arg: the first symbol named @name (@len bytes) with
 * a non-zero address.  Return: 0, or -ENOENT.
 */
int kft_ksym_resolve(void *arg, const char *name, uint32_t len, uint64_t *addr);

#endif

/*
 * cli/tracefs_rec.h - the tracefs backend of `ktrace record --kernel`:
 * kernel events of the LKST catalogue (include/ktrace/lkst.h) recorded
 * through the kernel's own tracepoints, without the ktrace module.
 *
 * A recording creates a tracefs instance of its own ("ktrace-PID", never
 * the global buffer), sets its clock to `mono` (CLOCK_MONOTONIC, the clock
 * every ktrace trace converts to), enables the tracepoints the maskset
 * selects, and one thread reads every CPU's trace_pipe_raw while the traced
 * program runs, converting each event to a KEVENT record (word 0 = pid |
 * tgid << 32, then the catalogue's arguments) in a trace directory of its
 * own: `clock mono`, `scope cpu`, `layout packed`, one stream cpuN per CPU,
 * the kevent catalogue, `unavailable` lines for the events this kernel
 * cannot give, `thread` lines for every task seen (docs/FORMAT.md, "The
 * kernel sub-trace").
 *
 * Libraries: libtracefs (instance, event enabling, tracing directory) and
 * libtraceevent (event formats, tep_kbuffer() page parsing), Debian's
 * packages; mirrors what trace-cmd's `record` does with the same libraries,
 * minus its own file format.
 *
 * Thread safety: one recording at a time per process; the functions are
 * called from one thread (the recorder's own thread is internal).  Not
 * async-signal-safe, except that a fatal signal in the process still removes
 * the instance (an internal handler closes the trace_pipe_raw files and
 * rmdir()s it).
 */
#ifndef KTRACE_CLI_TRACEFS_REC_H
#define KTRACE_CLI_TRACEFS_REC_H

#include <stddef.h>
#include <stdint.h>

#include <ktrace/lkst.h>

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

/** krec_catalogue() - the catalogue, *@n entries, in lkst.h's order (cli/maskset.c). */
const struct lkst_def *krec_catalogue(size_t *n);

/**
 * krec_parse_maskset() - the events a maskset selects (cli/maskset.c).
 * @spec: RDEFAULT (the primary events), RALL (every event), RNOTHING
 *        (none), or a comma-separated list of those names, mnemonics
 *        (PROCESS_CONTEXTSWITCH) and categories (process, interrupt,
 *        exception, syscall, memory, network, lock, timer, workqueue,
 *        block); case does not matter; the union is taken.  NULL or "" is
 *        RDEFAULT.
 * @sel:  KTRACE_LKST_MAX_ID bytes, set to 1 for every selected event id
 *        (cleared first).
 * @err, @len: on failure, "unknown event or category 'X'".
 * Return: number of selected events, or -1.
 */
int krec_parse_maskset(const char *spec, uint8_t *sel, char *err, size_t len);

/**
 * struct krec_opts - how to record.
 * @maskset:   as krec_parse_maskset() takes it (already checked).
 * @buf_kb:    ring-buffer size per CPU in KiB (0: 4096).
 * @progress:  print a live "N events" line on stderr every second (a
 *             terminal only; for system-wide recording).
 */
struct krec_opts {
	const char *maskset;
	unsigned buf_kb;
	int progress;
};

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
 */
struct krec_stats {
	uint64_t events, lost, bytes;
	unsigned enabled, unavailable, cpus;
};

struct krec;

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
 * Return: 0, or -1 if something could not be written (reported on stderr
 * as "ktrace record: FILE: what"; everything else was still written).
 */
int krec_stop(struct krec *k, struct krec_stats *st);

/**
 * krec_remove_stale() - remove tracefs instances named ktrace-PID whose
 * process no longer exists (left by a ktrace killed with SIGKILL).
 * Return: instances removed.
 */
int krec_remove_stale(void);

/* ---- the flows of `ktrace record --kernel` (cli/cmd_record.c) ---------- */

/**
 * krec_begin_program() - before PROG runs (the caller has prepared @dir with
 * cli_trace_dir(), which removed an earlier DIR/kernel), if @o is not NULL,
 * start recording into a staging directory beside @dir, made by mkdtemp(3)
 * (".BASE.kernel-XXXXXX": the program's runtime clears DIR when it starts;
 * the name is unpredictable and the directory always new).  A recording
 * that cannot start is reported as one line ("kernel events not recorded:
 * WHY; recording PROG alone") and leaves no staging directory.
 * Return: the recording, or NULL (not asked for, or not possible).
 */
struct krec *krec_begin_program(const char *dir, const struct krec_opts *o, const char *prog);

/**
 * krec_end_program() - after PROG ended: stop @k (NULL: nothing to do) and,
 * if @keep, move its directory to DIR/kernel (creating DIR if PROG did not)
 * and print a one-line summary unless @quiet; else delete it.
 * Return: 0, or -1 if something could not be written or moved (reported).
 */
int krec_end_program(struct krec *k, const char *dir, int keep, int quiet);

/**
 * krec_record_system() - `ktrace record --kernel` without a program: make
 * @dir an empty trace directory, record the whole system into DIR/kernel
 * until SIGINT, SIGTERM or SIGHUP, then stop cleanly (instance removed).
 * Return: the exit status (0, or 1 with a message).
 */
int krec_record_system(const char *dir, const struct krec_opts *o, int quiet);

#endif

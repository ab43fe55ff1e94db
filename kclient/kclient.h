/*
 * kclient/kclient.h - the API of libktrace-kclient, the user-space clients
 * of the kernel's tracing interfaces: tracefs (kernel events and the
 * function_graph tracer, through libtracefs and libtraceevent), ktrace.ko's
 * /proc/kft, its debugfs files (the LKST tracer's control files) and its
 * relay channels.  The module itself is kmod/; the `ktrace` command (cli/)
 * parses options and prints, and calls these functions for everything that
 * touches the kernel.  This header is the library's whole API (its files
 * share kclient/internal.h, which nothing outside kclient/ includes); it
 * needs no libtracefs header.
 *
 * Errors.  A function that fails says why in one line, through the hook
 * set with kcl_set_report() (by default "ktrace CMD: message" on stderr),
 * where CMD names the ktrace command the function serves ("record",
 * "read", "kft", "lkst"); a few return the message in a caller's buffer
 * instead, as their comments say.  Return values are documented per
 * function.
 *
 * Thread safety: unless a function says otherwise, call it from one thread
 * at a time; none is async-signal-safe.
 */
#ifndef KTRACE_KCLIENT_H
#define KTRACE_KCLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ktrace/lkst.h>

/* ---- errors (kclient/report.c) ------------------------------------------ */

/**
 * kcl_report_fn - receives each error message of kclient.
 * @cmd: the ktrace command the failing function serves ("record", "read",
 *       "kft", "lkst").
 * @msg: the message, one line without its newline (at most 4095 bytes; it
 *       may hold control characters taken from file names or input).
 */
typedef void (*kcl_report_fn)(const char *cmd, const char *msg);

/**
 * kcl_set_report() - send kclient's error messages to @fn; NULL restores
 * the default, which prints "ktrace CMD: MSG" on stderr as one line
 * (control characters shown as '?'), after flushing stdout.
 * Not thread-safe: set it once, before calling anything else here.
 */
void kcl_set_report(kcl_report_fn fn);

/* ---- the kernel event catalogue and masksets (kclient/catalogue.c) ------ */

/**
 * krec_parse_maskset() - the events a maskset selects (kclient/catalogue.c).
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

/* ---- kernel events through tracefs (kclient/tracefs_record.c) ----------- */

/*
 * The tracefs backend of `ktrace record --kernel`: kernel events of the
 * LKST catalogue (include/ktrace/lkst.h) recorded through the kernel's own
 * tracepoints, without the ktrace module.
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
 * Raw copy.  Besides the KEVENT records, every ring-buffer page read is
 * appended unmodified to DIR/kernel/ftrace/cpuN (one page, usually 4096
 * bytes, per read of trace_pipe_raw), and the files a reader of those
 * pages needs are copied from tracefs into DIR/kernel/ftrace laid out as
 * tracefs is: events/header_page, events/header_event,
 * events/SYS/NAME/format of every enabled event, printk_formats,
 * trace_clock, set_event (the enabled events, "SYS:NAME" a line) and, at
 * the end, saved_cmdlines (docs/FORMAT.md, "The raw ftrace copy").  Files
 * 0600, directories 0700.  So tracepoints outside the catalogue
 * (krec_opts.events) are kept with all their fields, and `ktrace export
 * --format=trace.dat` (krec_tracedat_write()) hands them to trace-cmd and
 * KernelShark.
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
	const char *const *events; /* @nevents patterns of `-e`, see krec_check_events() */
	size_t nevents;
};

/**
 * krec_check_events() - check `ktrace record --kernel -e` arguments before
 * recording: each of the @n @events is "SYS:NAME", "SYS/NAME" or "SYS"
 * (all of its events), SYS and NAME fnmatch(3) patterns ('block:*',
 * 'syscalls:sys_enter_open*'), and must name at least one tracepoint of
 * the running kernel.  Those tracepoints are enabled in the recording's
 * instance besides the maskset's; the ones outside the catalogue are kept
 * in the raw copy only (DIR/kernel/ftrace), not as KEVENT records.
 * @msg, @len: on failure, one line: "unknown tracepoint 'nosuch:event' (no
 *             /sys/kernel/tracing/events/nosuch/event)" or "'x:' is not a
 *             tracepoint: SYS:NAME, SYS:* or SYS".
 * Return: 0 valid, -1 invalid (@msg), 1 tracefs cannot be read here (not
 * root, not mounted): only the syntax was checked; recording will say why
 * it cannot start.
 */
int krec_check_events(const char *const *events, size_t n, char *msg, size_t len);

/* A recording in progress (opaque; kclient/tracefs_record.c). */
struct krec;

/* The flows of `ktrace record --kernel` (cli/cmd_record.c calls them). */

/**
 * krec_begin_program() - before PROG runs (the caller has prepared @dir
 * with ksf_dir_open(KSF_CLEAR), which removed an earlier DIR/kernel), if
 * @o is not NULL, start recording into a staging directory beside @dir, made by mkdtemp(3)
 * (".BASE.kernel-XXXXXX": the program's runtime clears DIR when it starts;
 * the name is unpredictable and the directory always new).  A recording
 * that cannot start is reported as one line ("kernel events not recorded:
 * WHY; recording PROG alone") and leaves no staging directory.
 * Return: the recording, or NULL (not asked for, or not possible).
 */
struct krec *krec_begin_program(const char *dir, const struct krec_opts *o, const char *prog);

/**
 * krec_program_pid() - tell recording @k (NULL: nothing) the pid of the
 * program it records, as soon as it is forked: its threads then get that
 * tgid even when the reader thread reads their events before the fork's
 * task_newtask (per-CPU buffers are read one after the other) and the
 * program has left /proc by then.  Any thread; async-signal-unsafe only in
 * that it must not race krec_end_program().
 */
void krec_program_pid(struct krec *k, int pid);

/**
 * krec_end_program() - after PROG ended: stop @k (NULL: nothing to do) and,
 * if @keep, move its directory to DIR/kernel (creating DIR if PROG did not)
 * and print a one-line summary on stderr unless @quiet ("ktrace record:
 * kernel: N events, ..."); else delete it.
 * Return: 0, or -1 if something could not be written or moved (reported).
 */
int krec_end_program(struct krec *k, const char *dir, int keep, int quiet);

/**
 * krec_record_system() - `ktrace record --kernel` without a program: make
 * @dir an empty trace directory, record the whole system into DIR/kernel
 * until SIGINT, SIGTERM or SIGHUP, then stop cleanly (instance removed).
 * Unless @quiet, says on stderr what it records and, at the end, what it
 * recorded ("ktrace record: ...", not through the report hook).
 * Return: the exit status (0, or 1 with a message).
 */
int krec_record_system(const char *dir, const struct krec_opts *o, int quiet);

/* ---- trace-cmd's trace.dat (kclient/tracedat.c) -------------------------- */

/** struct krec_tracedat_info - what krec_tracedat_write() wrote. */
struct krec_tracedat_info {
	unsigned cpus;   /* CPUs (ftrace/cpuN files) */
	uint64_t pages;  /* ring-buffer pages copied */
	int kallsyms;    /* 1: DIR/kallsyms was included */
};

/**
 * krec_tracedat_write() - write the raw ftrace copy of the trace @dir
 * (DIR/kernel/ftrace, see "Raw copy" above) to @fd as a trace-cmd trace.dat,
 * file format version 6 (man 5 trace-cmd.dat.v6), through libtracecmd:
 * header_page/header_event, every event format of the copy, an empty
 * kallsyms section (or DIR/kallsyms if the trace holds one), printk_formats,
 * saved_cmdlines, the trace_clock, then each CPU's pages unchanged.
 * `trace-cmd report FILE` and KernelShark read it.
 * @fd:   a seekable file open for writing, empty (the caller keeps and
 *        closes it; a duplicate is written through).
 * @info: receives the counts.
 * @msg, @len: on failure, one line: "DIR: no raw ftrace copy (...); record
 *        one with `ktrace record --kernel`", a bad cpuN size, libtracecmd's
 *        own message, or (a ktrace built without libtracecmd 1.3) that the
 *        format was left out.
 * Return: 0, or -1 (what was written to @fd is incomplete: discard it).
 * Not thread-safe (libtracecmd's warnings are caught in a global).
 */
int krec_tracedat_write(const char *dir, int fd, struct krec_tracedat_info *info, char *msg, size_t len);

/* ---- ktrace.ko's relay channels (kclient/relay.c) ----------------------- */

/**
 * read_relay() - `ktrace read` for a kernel channel: copy the relay files
 * of a ktrace.ko channel to a trace directory, draining it until the
 * channel stops (kclient/relay.c documents the contract with the module).
 * @src:        the channel's debugfs directory (has trace0.. and state).
 * @dst:        the trace directory to create (mode 0700; files 0600): one
 *              packed stream file cpuN per relay file, plus metadata.
 * @subbuf_size, @n_subbufs: the -b/-n options of `ktrace read` (klog's
 *              relay geometry), 0 = the channel's own.
 * Errors are reported as one line each (cmd "read": "FILE: what"); a
 * flight recorder still running is waited for, with one line on stderr
 * saying so.  Sets its own SIGINT/SIGTERM handlers while it runs (an
 * interrupt ends the copy after a last pass).  Plain libc: kclient/relay.c builds alone with
 * kclient/report.c and lib/safefile.c (the VM tests' kthelper does).
 * Return: the exit status: 0 done, 1 failed (what was copied stays), 2 a
 * bad @subbuf_size or @n_subbufs.
 */
int read_relay(const char *src, const char *dst, unsigned subbuf_size, unsigned n_subbufs);

/* ---- ktrace.ko's crash region (kclient/crash.c) ------------------------ */

/* One channel of a crash region, as kcr_open() found it (checked). */
struct kcr_chan {
	char name[64];          /* printable, no '/' (others become '_') */
	uint32_t flags;         /* TRACE_* (KTRACE_GLOBAL_CHANNEL: context words) */
	uint32_t nrings, subbuf_size, subbuf_nr;
	uint64_t ring_off;      /* bytes from the image start */
	uint64_t start_ns;      /* CLOCK_MONOTONIC of its last start, 0 never */
	const char *catalog;    /* its catalog text in the image, NULL if absent/bad */
	size_t catalog_len;
};

/* A crash region image, checked by kcr_open(); points into the image. */
struct kcr_region {
	const unsigned char *img;
	size_t len;
	unsigned char boot_id[16];
	uint64_t created_ns, realtime_ns; /* CLOCK_MONOTONIC at layout; wall ns of mono 0 */
	uint64_t panic_ns;                /* stamped by the panic notifier; 0: none/bad */
	unsigned panic_cpu;
	unsigned panic_src;               /* KTRACE_CRASH_PANIC_ENTRY or _NOTIFIER */
	uint64_t stop_ns;                 /* the other CPUs stopped (notifier); 0: unknown */
	char note[64];                    /* "" if none or bad */
	unsigned nchan;
	struct kcr_chan chan[8];          /* KTRACE_CRASH_MAX_CHAN */
};

/* Counts of kcr_ring() (added to) and read_crash() (of the channel). */
struct kcr_stats {
	uint64_t subbufs;       /* valid sub-buffers written out */
	uint64_t records;       /* records whose check word matched */
	uint64_t torn;          /* records whose check failed: skipped, counted lost */
	uint64_t bad_subbufs;   /* sub-buffer headers that failed their check */
	uint64_t empty_subbufs; /* slots never written (or being reset at the panic) */
	uint64_t first_ns, last_ns; /* first sub-buffer's open time, last record (mono ns) */
	uint64_t panic_ns;      /* read_crash(): the region's panic time, 0 none */
	uint64_t stop_ns;       /* read_crash(): when the other CPUs were stopped, 0 unknown */
};

/**
 * kcr_open() - check a crash region image (docs/FORMAT.md "Crash region")
 * and describe it in @r: header, panic stamp, note and channel table, each
 * against its check word; every offset and size against @len.
 * @img, @len: the whole region (kept referenced by @r).
 * @err, @errlen: the reason on failure ("offset N: what").
 * Return: 0, or -1 (not a region, damaged header or channel entry, image
 * shorter than the region).  Pure: no I/O, no allocation; thread-safe.
 */
int kcr_open(const unsigned char *img, size_t len, struct kcr_region *r, char *err, size_t errlen);

/* Called with each converted sub-buffer (header + records, unpadded). */
typedef int (*kcr_emit_fn)(void *arg, const void *subbuf, size_t len);

/**
 * kcr_ring() - convert ring @ring of channel @ch: its valid sub-buffers in
 * seq order, each rewritten as a normal closed sub-buffer holding only the
 * records whose check word matches (the first that does not is torn: it
 * and the rest of its sub-buffer are skipped and counted in `lost`).
 * @emit: called per sub-buffer (NULL: only count); a negative return stops.
 * @st:   counts, added to.
 * Return: 0, or -1 (out of memory, or @emit failed).
 */
int kcr_ring(const struct kcr_region *r, unsigned ch, unsigned ring, kcr_emit_fn emit, void *arg,
	     struct kcr_stats *st);

/**
 * read_crash() - `ktrace read --crash SRC DST`: write the trace directory
 * DST (cpuN per ring with records, metadata with the catalogue and the
 * crash-* lines, dropped = torn records) from the crash region SRC (an
 * image file, or a directory holding `image`: debugfs ktrace/crash).
 * @channel: the channel to convert; NULL: the only one holding records.
 * @total:   out: the channel's counts.
 * Errors are one line each (cmd "read").
 * Return: 0, or 1.
 */
int read_crash(const char *src, const char *dst, const char *channel, struct kcr_stats *total);

/* ---- KFT in the kernel: /proc/kft and function_graph -------------------- */

/*
 * `ktrace kft --kernel` drives ktrace.ko's /proc/kft and copies
 * /proc/kft_data into a trace directory (kclient/kft_proc.c); `ktrace kft
 * --tracefs` runs a KFT configuration on the kernel's own function_graph
 * tracer (kclient/kft_tracefs.c).  Both write the same kind of trace
 * directory: one shared stream cpu0 of CALL records (docs/FORMAT.md, packed
 * layout, clock mono), callsites, kft-status, metadata, and a copy of the
 * kernel's function symbols (file `kallsyms`, docs/FORMAT.md "Kernel
 * traces") so that kd, addr2sym and print can name kernel addresses later
 * and elsewhere.
 */

/**
 * struct kft_fgraph_opts - a KFT run on function_graph.
 * @config:      the configuration file (docs/KFT-CONFIG.md, at most 64 KiB;
 *               names resolved in /proc/kallsyms); NULL: every function,
 *               from now on.
 * @dir:         the trace directory to write (kft_kdir_create()).
 * @buf_kb:      ring buffer per CPU in KiB (0: 4096); a full
 *               buffer loses the later calls, as KFT's log did.
 * @duration_ns: stop after this long (0: no limit).
 * @argv:        a command to run while tracing (NULL-terminated, execvp()'d
 *               in a child); tracing stops when it ends.  NULL: none.
 */
struct kft_fgraph_opts {
	const char *config, *dir;
	unsigned buf_kb;
	uint64_t duration_ns;
	char *const *argv;
};

/**
 * struct kft_fgraph_stats - what a run did: function_graph exits @read,
 * calls @kept after the configuration was applied again, entries @lost
 * (the ring buffer was full: the per-CPU `dropped events` and `overrun`).
 */
struct kft_fgraph_stats {
	size_t read, kept;
	uint64_t lost;
};

/**
 * kft_fgraph_run() - `ktrace kft --tracefs`: run the configuration over
 * every kernel function with the kernel's function_graph tracer, in the
 * top-level tracefs instance (kclient/kft_tracefs.c says how each
 * configuration line maps onto tracefs), until @o->argv's command ends,
 * @o->duration_ns passed, a stop trigger fired (no autorepeat), or SIGINT
 * or SIGTERM came (handlers installed for the run); then read the calls
 * with libtracefs/libtraceevent, apply the configuration once more exactly
 * and write @o->dir: CALL records in cpu0, callsites, kft-status,
 * kallsyms, metadata.  Everything the run changed in tracefs is put back.
 * Needs root, tracefs and CONFIG_FUNCTION_GRAPH_TRACER; refuses if
 * current_tracer is not nop (tracefs busy), and `watch` configurations
 * (function_graph does not record the stack pointer).  One run per
 * process at a time.
 * Return: 0 and *@stats, or -1 (reported: a bad configuration as
 * FILE:LINE:COL: message).
 */
int kft_fgraph_run(const struct kft_fgraph_opts *o, struct kft_fgraph_stats *stats);

/**
 * kft_fgraph_extract() - `ktrace kft --tracefs extract`: the calls a
 * boot-time function_graph run (the parameters kft_boot_params() printed)
 * left in the top-level ring buffer, written to @o->dir as kft_fgraph_run()
 * writes them.  Switches tracing off, reads trace_pipe_raw (consumed),
 * applies the configuration once more exactly (triggers from the
 * ktrace_kft/start and stop kprobe events, time triggers, filters,
 * logentries), then sets current_tracer to nop and removes the boot run's
 * filters, threshold and trigger events.  @o->config: the configuration
 * file; NULL: the one on the kernel command line (KFT_BOOT_CONFIG_PARAM in
 * /proc/cmdline), or none (every call) if absent.  Other fields unused.
 * Needs root and current_tracer function_graph (else: no boot run).
 * Return: 0 and *@stats, or -1 (reported).
 */
int kft_fgraph_extract(const struct kft_fgraph_opts *o, struct kft_fgraph_stats *stats);

/* ---- boot-time KFT (kclient/kft_boot.c) -------------------------------- */

/* The boot parameter that carries the configuration of a tracefs boot run. */
#define KFT_BOOT_CONFIG_PARAM "ktrace_kft.config"
/* ktrace.ko's module parameter that carries a boot run's configuration. */
#define KFT_BOOT_MODULE_PARAM "ktrace.kft_boot"

/**
 * struct kft_boot_opts - what kft_boot_params() translates.
 * @config:  the configuration file (docs/KFT-CONFIG.md, at most 64 KiB).
 * @symbols: the booted kernel's function symbols (a System.map or
 *           /proc/kallsyms file) to check and name functions; NULL:
 *           /proc/kallsyms.
 * @buf_kb:  ring buffer per CPU in KiB (0: from logentries, else 4096).
 * @module:  0: tracefs function_graph parameters; 1: ktrace.ko's
 *           KFT_BOOT_MODULE_PARAM.
 */
struct kft_boot_opts {
	const char *config, *symbols;
	unsigned buf_kb;
	int module;
};

/**
 * kft_boot_params() - the kernel command-line parameters that run
 * @o->config from boot (kclient/kft_boot.c says how each statement maps):
 * one line, without newline, at most 2047 bytes (x86's command line).
 * What cannot be translated is refused and reported as "FILE:LINE:
 * message" (a parse error as FILE:LINE:COL: message).
 * Return: a malloc'ed string, or NULL (reported).
 */
char *kft_boot_params(const struct kft_boot_opts *o);

/**
 * kft_boot_config_text() - the configuration text a boot parameter
 * carries: the value of the first word `@param=VALUE` of @cmdline (VALUE
 * optionally in double quotes), with each ';' turned into a newline, into
 * @out (@cap bytes, NUL-terminated).
 * Return: 1 found, 0 absent, -1 longer than @cap - 1.
 */
int kft_boot_config_text(const char *cmdline, const char *param, char *out, size_t cap);

/*
 * The /proc/kft client (kclient/kft_proc.c).  @procdir is the directory of
 * ktrace.ko's files kft, kft_data, kft_callsites and of kallsyms: "/proc"
 * (tests point it at plain files laid out the same way).  A missing file
 * is reported with "(is ktrace.ko loaded? modprobe ktrace)".
 */

/**
 * kft_proc_status() - the text of PROCDIR/kft: the run's state, probes,
 * log use, counters, configuration (kmod/kft_proc.c writes it).
 * Return: a malloc'ed copy of *@len bytes (NUL-terminated), or NULL
 * (reported).
 */
char *kft_proc_status(const char *procdir, size_t *len);

/**
 * kft_proc_load() - load the configuration in @file ("-": standard input;
 * docs/KFT-CONFIG.md, at most 64 KiB, what /proc/kft takes) with one
 * write(2) to PROCDIR/kft.  The module parses it (function names or 0x
 * addresses); a refused one is reported as "FILE:LINE:COL: message" from
 * the status's `error:` line, and the loaded configuration stays.
 * Return: 0, or -1 (reported).
 */
int kft_proc_load(const char *procdir, const char *file);

/**
 * kft_proc_command() - write @cmd, "prime", "start" or "stop", to
 * PROCDIR/kft.  Return: 0, or -1 (reported: the status's `error:` line,
 * e.g. a command the run's state refuses).
 */
int kft_proc_command(const char *procdir, const char *cmd);

/**
 * struct kft_proc_extract_stats - what kft_proc_extract() copied: @bytes
 * of CALL records (DST/cpu0), @callsites entries (DST/callsites).
 */
struct kft_proc_extract_stats {
	size_t bytes, callsites;
};

/**
 * kft_proc_extract() - copy the log into trace directory @dst
 * (kft_kdir_create()): PROCDIR/kft_data first (reading it makes the module
 * enter the call sites of the records it returns) to DST/cpu0, then
 * kft_callsites and kft to DST/callsites and DST/kft-status, the function
 * symbols of @system_map (NULL: PROCDIR/kallsyms) to DST/kallsyms
 * (kft_kdir_symbols()), and DST/metadata (kft_kdir_metadata()).
 * Return: 0 and *@st, or -1 (reported; what was written stays).
 */
int kft_proc_extract(const char *procdir, const char *dst, const char *system_map,
		     struct kft_proc_extract_stats *st);

/**
 * kft_ksyms_filter() - copy the function symbol lines (types t, T, w, W) of
 * a /proc/kallsyms or System.map text @in (@len bytes, need not end in a
 * newline or be NUL-terminated) to @out (at least @len + 1 bytes), each
 * ending in '\n'; other and malformed lines are dropped.  *@kept counts
 * the lines copied, *@nonzero those with a nonzero address (0 everywhere:
 * the addresses were hidden).  Pure, no allocation, thread-safe
 * (kclient/ksyms.c; fuzz/fuzz_kft_ksyms.c).
 * Return: the bytes written to @out.
 */
size_t kft_ksyms_filter(const char *in, size_t len, char *out, size_t *kept, size_t *nonzero);

/* ---- LKST masksets as text (kclient/lkst_text.c) ------------------------ */

/*
 * The text form of an LKST maskset, as `ktrace lkst read` prints it and
 * `ktrace lkst write` takes it: one "EVENT HANDLER" pair per line, '#' to
 * the end of the line is a comment, blank lines are ignored.  EVENT is an
 * event id of the catalogue (include/ktrace/lkst.h; decimal, or hex with
 * 0x) or its mnemonic (any case); HANDLER a handler id (decimal or 0x hex)
 * or name, resolved by the caller.  Pure functions: no I/O, no global
 * state, thread-safe (fuzz/fuzz_lkst_text.c).
 */

/**
 * lkst_handler_fn - resolves a handler token for lkst_text_parse().
 * @tok: the token (NUL-terminated, no spaces).
 * @arg: the caller's argument.
 * Return: the handler id 1..255, or -1 if there is no such handler.
 */
typedef int (*lkst_handler_fn)(const char *tok, void *arg);

/**
 * lkst_text_parse() - parse maskset text.
 * @text:    the input, @len bytes (need not end with a newline; a NUL byte
 *           is an error).
 * @hfn:     resolves HANDLER tokens; @harg is passed to it.
 * @handler: out, KTRACE_LKST_MAX_ID entries: the handler id of each event
 *           the text names (NOTHING, 255, included), 0 for the others.
 * @err:     out, on failure: "LINE:COLUMN: what" (1-based), @errlen bytes.
 *
 * Errors: a line with other than two tokens, an unknown event or handler,
 * an event named twice, a NUL byte, a line longer than 4096 bytes.
 * Thread-safe if @hfn is.
 * Return: the number of entries, or -1 (nothing in @handler is meaningful).
 */
int lkst_text_parse(const char *text, size_t len, lkst_handler_fn hfn, void *harg,
		    unsigned char *handler, char *err, size_t errlen);

/**
 * lkst_event_id() - the catalogue id of EVENT token @tok (id or mnemonic).
 * Return: 0..KTRACE_LKST_MAX_ID-1, or -1 if the catalogue has no such event.
 */
int lkst_event_id(const char *tok);

/** lkst_event_name() - the mnemonic of event @id, or NULL. */
const char *lkst_event_name(unsigned id);

/**
 * lkst_hook_parse() - check and split a hook location and its arguments,
 * as `ktrace lkst hook add` takes them and ktrace.ko's ktrace/lkst/hooks
 * accepts them: @spec is FUNC[+OFFSET] (FUNC 1..127 of [A-Za-z0-9_.], not
 * starting with a digit; OFFSET decimal or 0x hex, at most 0xfffff), @args
 * NULL/"" or a1..a6 separated by commas or blanks, at most
 * KTRACE_LKST_HOOK_MAX_ARGS, none twice.  Out: @func (@funclen bytes),
 * *@off, @argn[] the 0-based argument numbers, and the canonical @argstr
 * ("a1,a3", "-" for none; @argstrlen bytes, at least 16).  Pure, no
 * allocation, thread-safe.
 * Return: the number of arguments, or -1 with "what" in @err (@errlen).
 */
int lkst_hook_parse(const char *spec, const char *args, char *func, size_t funclen,
		    unsigned *off, unsigned char *argn, char *argstr, size_t argstrlen, char *err,
		    size_t errlen);

/**
 * lkst_parse_number() - a whole decimal number, or hex with 0x/0X.
 * Return: 0 and *@v, or -1 (empty, other characters, over 2^32 - 1).
 */
int lkst_parse_number(const char *s, unsigned *v);

/* ---- the LKST tracer's debugfs files (kclient/lkst.c) ------------------- */

/*
 * ktrace.ko's LKST tracer is driven through the files of its debugfs
 * directory @dir (KCL_LKST_DIR; kmod/lkst_fs.c documents them): events,
 * handlers, masksets, catalog, state, info.  A file that cannot be opened
 * is reported as "DIR/FILE: why (is ktrace.ko loaded and debugfs
 * mounted?)".  Writes are one write(2) each and return the module's errno
 * unreported, for the caller to explain.
 */
#define KCL_LKST_DIR "/sys/kernel/debug/ktrace/lkst"
#define KCL_LKST_MASKSETS 64  /* maskset ids 0..63 */
#define KCL_LKST_FIRST_USER 3 /* 0 RNOTHING, 1 RDEFAULT, 2 RALL are the system's */

/**
 * kcl_lkst_read() - the whole of DIR/@file (e.g. "state", "info").
 * Return: a malloc'ed NUL-terminated copy, or NULL (reported).
 */
char *kcl_lkst_read(const char *dir, const char *file);

/**
 * struct kcl_lkst_handlers - DIR/handlers: the name of handler ID in
 * @name[ID] ("" if there is none; 1 is DEFAULT, 255 NOTHING) and the
 * times it was called in @calls[ID].
 */
struct kcl_lkst_handlers {
	char name[256][64];
	unsigned long long calls[256];
};

/** kcl_lkst_handlers() - read DIR/handlers into @h.  Return: 0, or -1 (reported). */
int kcl_lkst_handlers(const char *dir, struct kcl_lkst_handlers *h);

/**
 * struct kcl_lkst_maskset - one maskset of DIR/masksets: @present, its
 * @name, @system (0 RNOTHING, 1 RDEFAULT, 2 RALL) or user, @current, and
 * @handler[EVENT]: the handler id each event goes to (0: not listed).
 */
struct kcl_lkst_maskset {
	int present, system, current;
	char name[64];
	unsigned char handler[KTRACE_LKST_MAX_ID];
};

/**
 * kcl_lkst_masksets() - read DIR/masksets into @m, KCL_LKST_MASKSETS
 * entries indexed by id.  Return: 0, or -1 (reported).
 */
int kcl_lkst_masksets(const char *dir, struct kcl_lkst_maskset *m);

/**
 * struct kcl_lkst_event - one line of DIR/events: event @id and mnemonic
 * @name, @category, @tracepoint (SYSTEM:NAME or "-"), @status
 * ("available", "unavailable"), @probe attached ("on", "off"), the
 * current maskset's @handler, counters since the last start (@hits,
 * records @written, @dropped), and @reason: why it is unavailable
 * (kcl_lkst_reasons(); "" until then).
 */
struct kcl_lkst_event {
	unsigned id, handler;
	char name[160], category[32], tracepoint[176], status[16], probe[8], reason[160];
	unsigned long long hits, written, dropped;
};

/**
 * kcl_lkst_events() - parse DIR/events into *@v (malloc'ed, *@n entries,
 * in the file's order; the caller frees it).  A line that does not parse
 * is reported ("DIR/events: unexpected line '...'") and skipped.
 * Return: the number of such lines (0: all parsed), or -1 (reported;
 * *@v is NULL).
 */
int kcl_lkst_events(const char *dir, struct kcl_lkst_event **v, size_t *n);

/**
 * kcl_lkst_reasons() - fill the @reason of the @n events @v from the
 * `unavailable ID MNEMONIC REASON` lines of DIR/catalog.  An unreadable
 * catalog is reported and leaves the reasons empty.
 */
void kcl_lkst_reasons(const char *dir, struct kcl_lkst_event *v, size_t n);

/** kcl_lkst_state() - write @word ("start", "stop") to DIR/state.  Return: 0 or -errno. */
int kcl_lkst_state(const char *dir, const char *word);

/**
 * kcl_lkst_maskset_write() - create or replace user maskset @id
 * (KCL_LKST_FIRST_USER..KCL_LKST_MASKSETS-1), named @name (NULL: the
 * module's default), from @handler[EVENT] (KTRACE_LKST_MAX_ID entries; 0
 * and NOTHING leave an event out): one "write ID [NAME]" command with an
 * "0xEV H" line per connected event, so the module takes all or nothing.
 * Return: 0 or -errno (-EPERM a system maskset, -EBUSY the current one,
 * -EEXIST another maskset has @name, -ENOENT no such event or handler).
 */
int kcl_lkst_maskset_write(const char *dir, int id, const char *name, const unsigned char *handler);

/**
 * kcl_lkst_maskset_config() - connect event @ev to @handler in user
 * maskset @id (NOTHING, 255, disconnects it).  Return: 0 or -errno.
 */
int kcl_lkst_maskset_config(const char *dir, int id, unsigned ev, unsigned handler);

/** kcl_lkst_maskset_set() - make maskset @id current, on the fly.  Return: 0 or -errno. */
int kcl_lkst_maskset_set(const char *dir, int id);

/** kcl_lkst_maskset_delete() - remove user maskset @id (not the current one).  Return: 0 or -errno. */
int kcl_lkst_maskset_delete(const char *dir, int id);

/**
 * struct kcl_lkst_hook - one line of DIR/hooks (kmod/lkst_hooks.c): event
 * @id (KTRACE_LKST_HOOK_FIRST..LAST), @name FUNC+OFFSET, @func, @offset,
 * @args ("a1,a2" or "-"), @probe (ftrace, optimized, int3, "-"), @state
 * (on, off, deleted), @hits since the last start, @missed (the kprobe's).
 */
struct kcl_lkst_hook {
	unsigned id, offset;
	char name[160], func[144], args[32], probe[16], state[16];
	unsigned long long hits, missed;
};

/**
 * kcl_lkst_hooks() - parse DIR/hooks into *@v (malloc'ed, *@n entries;
 * the caller frees it); lines that do not parse are skipped.
 * Return: 0, or -1 (reported; *@v NULL).
 */
int kcl_lkst_hooks(const char *dir, struct kcl_lkst_hook **v, size_t *n);

/**
 * kcl_lkst_hook_add() - "add ID|auto FUNC+OFFSET ARGS" to DIR/hooks, one
 * write(2); @id < 0 lets the module choose.  @spec and @argstr as
 * lkst_hook_parse() makes them.  Return: 0 or the module's -errno
 * (-ENOENT no such symbol, -EPERM the kernel forbids a probe there,
 * -EILSEQ not an instruction boundary, -ERANGE offset outside the
 * function, -EBUSY id taken, -EEXIST same location, -ENOSPC no id left).
 */
int kcl_lkst_hook_add(const char *dir, int id, const char *func, unsigned off, const char *argstr);

/** kcl_lkst_hook_del() - "del WHAT" (an id or FUNC+OFFSET).  Return: 0 or -errno. */
int kcl_lkst_hook_del(const char *dir, const char *what);

/*
 * The same hooks on the tracefs backend (kclient/lkst_tracefs.c): kprobe
 * events KCL_LKST_TF_GROUP/lkst_hook_XX (XX the id in hex) with u64 fields
 * a1..a6, made and removed through libtracefs; `ktrace record
 * --kernel=hook` (or RALL) records them.
 */
#define KCL_LKST_TF_GROUP "ktrace_lkst"

/**
 * kcl_lkst_tf_hooks() - the hooks defined in tracefs, as struct
 * kcl_lkst_hook (@probe "tracefs", @state the group, @hits and @missed
 * from kprobe_profile, since the event was made); *@v malloc'ed.
 * Return: 0, or -1 (reported: tracefs not mounted, out of memory).
 */
int kcl_lkst_tf_hooks(struct kcl_lkst_hook **v, size_t *n);

/**
 * kcl_lkst_tf_hook_add() - make the kprobe event of a hook on @func+@off
 * with id @id (< 0: the first free one) recording arguments @argn[0..
 * @nargs-1] (0-based, lkst_hook_parse()).  On a refusal @why gets the
 * last line of tracefs's error_log (or ""), @whylen bytes.
 * Return: the id, or -errno (-EEXIST same place, -EBUSY id taken, -ENOSPC,
 * -ENODEV no tracefs, the kernel's error for the kprobe_events write:
 * -ENOENT/-EINVAL unknown or forbidden place, -EILSEQ, ...).
 */
int kcl_lkst_tf_hook_add(int id, const char *func, unsigned off, const unsigned char *argn,
			 int nargs, char *why, size_t whylen);

/**
 * kcl_lkst_tf_hook_del() - remove the kprobe event of hook @id.
 * Return: 0, -ENOENT (no such hook), or the kernel's error (-EBUSY: enabled
 * somewhere) with @why as for kcl_lkst_tf_hook_add().
 */
int kcl_lkst_tf_hook_del(int id, char *why, size_t whylen);

#endif /* KTRACE_KCLIENT_H */

/*
 * analysis/analysis.h - the analysis shared by ktrace's reading commands
 * (libktrace-analysis.a): which tasks a view shows, the names of functions
 * and tasks, the progress line of long reads, where the time went per
 * function (the profile) and the nested call traces.  It works on the reader's
 * records (reader/reader.h) and knows nothing of options or output
 * formats: cli/ turns options into its arguments, formats/ writes what it
 * computes.  The profile and call traces of `ktrace kd` are here too
 * (analysis/profile.c, analysis/calltrace.c: their comments explain them).
 *
 * Task selection.  By default a view shows the traced program: the process
 * whose trace it is (metadata `pid`) and every process and thread it forked
 * (PROCESS_FORK events, followed as the records go by); a trace with no
 * program (kernel only) shows every task.  --all shows every task; -p/-t
 * lists pick processes (tgids) and threads.  The idle task (pid 0) is never
 * a task here.
 *
 * Function names.  A CALL record names its function by address; names come
 * from the trace's memory maps through the reader's symbolizer (elfutils),
 * cached per call-site key, "0xADDR" when unknown.
 *
 * Progress: a progress line for long reads and exports: on a
 * terminal (stderr is a tty) a line "ktrace CMD: 42% 12.3M records,
 * 4.1M records/s" is redrawn at most twice a second; when stderr is not a
 * terminal (piped, redirected, tests) nothing is printed at all, nor when
 * the command's own output goes to that terminal.
 *
 * Progress is measured in bytes: the sum of the trace's stream file sizes
 * (application streams and the kernel sub-trace's) against the byte offset
 * of the latest record of each stream, so it is exact for one stream and
 * close for a merge.  The per-record cost is a counter increment and, every
 * 65536 records, a clock read.
 *
 * Not thread-safe: one user per object; one progress line per process at a
 * time.  Memory: one entry per selected process and per distinct call site.
 */
#ifndef KTRACE_ANALYSIS_H
#define KTRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "reader/reader.h"

/**
 * struct ka_ids - a set of process or thread ids, as `--tid 12,15` gives
 * (cli_idlist_parse()); an empty set selects every id.
 */
struct ka_ids {
	uint64_t *v;
	size_t n;
};

/** ka_ids_has() - 1 if @x is in @l or @l is empty, else 0. */
int ka_ids_has(const struct ka_ids *l, uint64_t x);

/* ---- a hash map (analysis/map64.c) --------------------------------------------- */

/**
 * struct ka_map64 - a map from a 64-bit key to a 32-bit value, usually the
 * index of the key's entry in the caller's own array (functions, call
 * edges, threads, tracks, event classes).  Zero it to start;
 * ka_map64_free() at the end.  About 24 bytes per key; not thread-safe.
 */
struct ka_map64 {
	uint64_t *k;
	uint32_t *v; /* value + 1, 0 = empty */
	size_t n, cap;
};

/** ka_map64_get() - the value of @k, or -1 if @k is not in @m. */
long ka_map64_get(const struct ka_map64 *m, uint64_t k);

/**
 * ka_map64_put() - set @k to @v (at most UINT32_MAX - 1), adding @k or
 * replacing its value.  Return: 0, or -ENOMEM (@m is unchanged).
 */
int ka_map64_put(struct ka_map64 *m, uint64_t k, uint32_t v);

/** ka_map64_free() - free @m's memory; it is empty (and reusable) after. */
void ka_map64_free(struct ka_map64 *m);

/* ---- tasks (analysis/tasks.c) ------------------------------------------------- */

struct ka_tasks;

/**
 * ka_tasks_new() - the task selection for trace @t: @all, or the
 * processes @pids and threads @tids (either may be empty), else the
 * program and its descendants (see above).  Return: NULL on ENOMEM.
 */
struct ka_tasks *ka_tasks_new(const struct ktr_trace *t, int all, const struct ka_ids *pids,
			      const struct ka_ids *tids);
/** ka_tasks_feed() - follow forks: call for every record, in order. */
void ka_tasks_feed(struct ka_tasks *k, const struct ktr_rec *r);
/** ka_tasks_want() - 1 if task @tid of process @pid (0 = unknown) is shown (ktr_sched_follow()). */
int ka_tasks_want(void *k, uint32_t tid, uint32_t pid);
/** ka_tasks_free() - free @k (NULL allowed). */
void ka_tasks_free(struct ka_tasks *k);

/* ---- names (analysis/names.c) ------------------------------------------------- */

struct ka_names;

/**
 * ka_names_new() - a name cache for the CALL records of @t, C++ names
 * demangled when @demangle.  NULL on ENOMEM.
 */
struct ka_names *ka_names_new(struct ktr_trace *t, int demangle);
/** ka_names_call() - the function name of call @c (owned by the cache). */
const char *ka_names_call(struct ka_names *n, const struct ktr_call *c);
/** ka_names_free() - free @n (NULL allowed). */
void ka_names_free(struct ka_names *n);

/** ka_comm() - the name of task @tid ("?" if unknown; owned by @t). */
const char *ka_comm(const struct ktr_trace *t, uint32_t tid);

/**
 * ka_static_slice() - whether static event @r is a function's entry or
 * exit (klog's codes 1 and 2, seed 000): then @name (@len bytes) is the
 * function's name from the catalogue ("F<n>" if it has none) and the
 * return is 'B' (entry) or 'E' (exit), the trace-event phases; else 0 and
 * @name is untouched.
 */
int ka_static_slice(const struct ktr_trace *t, const struct ktr_rec *r, char *name, size_t len);

/**
 * ka_syscall_name() - the system call kernel event @r is about: for a
 * SYSCALL_ENTRY or SYSCALL_EXIT record (include/ktrace/lkst.h), the name
 * of its number (argument `id`) on the machine the trace @t was recorded
 * on (metadata `machine`), from libaudit's tables (audit_syscall_to_name());
 * NULL for any other record, an unknown number, a machine libaudit has no
 * table for, or no libaudit.so.1 (loaded on the first call, dlopen).  The
 * string is libaudit's (static).  Thread-safe.
 */
const char *ka_syscall_name(const struct ktr_trace *t, const struct ktr_rec *r);

/* ---- progress (analysis/progress.c) ------------------------------------------- */

struct ka_progress;

/**
 * ka_progress_start() - begin a progress line for reading @t in command
 * @cmd; @to_stdout: the command writes its output to standard output while
 * reading (then a terminal there means no progress line).
 * KTRACE_PROGRESS=1 in the environment forces it on (one line per update
 * and a final "100%" line; for tests), KTRACE_PROGRESS=0 off.
 * Return: the progress state, or NULL when it is off (all functions accept
 * NULL).
 */
struct ka_progress *ka_progress_start(const struct ktr_trace *t, const char *cmd, int to_stdout);

/** ka_progress_rec() - account record @r (call for every record or gap). */
void ka_progress_rec(struct ka_progress *p, const struct ktr_rec *r);

/**
 * ka_progress_recs() - account @n records of stream @stream (ktr_rec.stream)
 * read up to offset @offset (the last one's ktr_rec.offset), as
 * ktr_next_calls() returns them.
 */
void ka_progress_recs(struct ka_progress *p, unsigned stream, uint64_t offset, uint64_t n);

/** ka_progress_end() - erase the line (or end it) and free @p. */
void ka_progress_end(struct ka_progress *p);

/* ---- profile (analysis/profile.c) ---------------------------------------------- */

/**
 * struct ka_fn - one function's statistics (kd's table row).  Times in ns.
 * @addr:       the function's address (0: unknown).
 * @count:      calls; @unfinished: of them, calls whose exit was not seen.
 * @time:       total time, a recursive function's outermost calls only.
 * @sum:        every call's duration (for the average).
 * @local:      self time (minus the callees'); on-CPU only with kernel
 *              events (@wlocal is then the wall-clock self time).
 * @max:        the longest call; @off: time scheduled out during the calls.
 * @name:       after ka_profile_name() (malloc'ed; freed with the profile).
 * @best, @best_ns, @best_count, @have_best: after ka_profile_best(), the
 *              most time-consuming callee (an index of fns), its time and calls.
 */
struct ka_fn {
	uint64_t addr;
	uint64_t count, time, local, max, unfinished;
	uint64_t sum, wlocal, off;
	char *name;
	uint32_t best;
	uint64_t best_ns, best_count;
	int have_best;
};

/**
 * struct ka_profile_opts - what ka_profile_new() counts.
 * @edges:      collect caller -> callee edges (ka_profile_best()).
 * @all_tasks:  with kernel events, follow every task (a --pid/--tid
 *              selection was given), else the program's (ka_tasks_new()).
 * @want_call:  count call @c? (NULL: every call; the --pid/--tid/--time-range
 *              selection), called with @arg.
 * @want_task:  does a gap of thread (@pid, @tid) go to the sorter?
 * @sorter:     if not NULL, every counted call and the selected gaps are
 *              added (struct ktr_callent, key = the fns index; for a gap
 *              key = the gap kind and local_ns = its count) for kd -c.
 * @cmd:        the command, for the progress line.
 */
struct ka_profile_opts {
	int edges, all_tasks;
	int (*want_call)(void *arg, const struct ktr_call *c);
	int (*want_task)(void *arg, uint32_t pid, uint32_t tid);
	void *arg;
	struct ktr_callsort *sorter;
	const char *cmd;
};

/**
 * struct ka_profile - a function trace's profile: @fns[@nfns] (in order of
 * first call); @records read, @calls counted, @call_records decoded
 * (before selection); @lost, @overwritten, @corrupt: the application's
 * gaps (records, sub-buffers, areas); @klost: kernel records lost;
 * @offcpu: context switches were seen (field o and on-CPU local time
 * apply).  @priv: the library's.
 */
struct ka_profile {
	struct ka_fn *fns;
	size_t nfns;
	uint64_t records, calls, call_records;
	uint64_t lost, overwritten, corrupt, klost;
	int offcpu;
	struct ka_profile_priv *priv;
};

/** ka_profile_new() - an empty profile of trace @t.  Return: NULL on ENOMEM. */
struct ka_profile *ka_profile_new(struct ktr_trace *t, const struct ka_profile_opts *o);

/**
 * ka_profile_read() - read every record of the trace once (the reader's
 * diagnostics stay queued for the caller).  Without kernel events it runs
 * on two threads, a reader that decodes and selects the calls and the
 * caller's thread that counts them, handing over batches of 4096 in
 * record order (same result as one thread; $KTRACE_ONE_THREAD set: one
 * thread, for comparison).  The trace, the options' callbacks and the
 * sorter must not be used by others meanwhile.  Return: 0, or -ENOMEM, or
 * the sorter's -errno (a temporary file could not be written).
 */
int ka_profile_read(struct ka_profile *p);

/**
 * ka_profile_fn() - the index in @p->fns of call @c's function, added
 * (and named through @syms) if new: the functions of calls read without
 * ka_profile_read() (kd -c streaming its calls).  Return: the index, or
 * -1 (no memory).
 */
long ka_profile_fn(struct ka_profile *p, const struct ktr_call *c, struct ktr_syms *syms);

/** ka_profile_name() - give every function its (demangled) name from @syms. */
void ka_profile_name(struct ka_profile *p, struct ktr_syms *syms);

/** ka_profile_best() - each function's most time-consuming callee (needs @edges). */
void ka_profile_best(struct ka_profile *p);

/**
 * ka_fn_field() - the value of kd's field letter @field (c count, t time,
 * a average, l local, s sub-time, o off-CPU, x max, n calls of the top
 * child); 0 for the others.
 */
uint64_t ka_fn_field(const struct ka_fn *f, char field);

/**
 * ka_profile_sort() - the functions whose time exceeds *@min_time (every
 * one if NULL), sorted by field @key descending (F: by name ascending),
 * then time, then name.  Return: a malloc'ed array of *@n pointers into
 * fns, or NULL on ENOMEM.  Not thread-safe (qsort without an argument).
 */
struct ka_fn **ka_profile_sort(struct ka_profile *p, char key, const uint64_t *min_time, size_t *n);

/** ka_profile_sched() - the context switches followed, or NULL without any. */
struct ktr_sched *ka_profile_sched(const struct ka_profile *p);

/** ka_profile_free() - free @p and its functions' names (NULL allowed). */
void ka_profile_free(struct ka_profile *p);

/* ---- call traces (analysis/calltrace.c) ---------------------------------------- */

struct ktr_offcpu;
struct ktr_sched;

/**
 * struct ka_ct_ops - what ka_calltrace_walk() reports, in output order.
 * @thread:   the lines of thread @tid (of process @pid) begin (with several
 *            threads; interlaced: a switch to that thread).
 * @section:  a signal-handler section starts (@start 1) or ends (0).
 * @gap:      records were lost here: @gap a KTR_GAP_* kind, @count.
 * @call:     call @e of thread @tid, @marks levels deep ('|', or '!' inside
 *            a signal-handler section: @e->sig).  Return < 0 to stop.
 * @offcpu:   thread @tid left the CPU (@o) with @level of its calls open.
 */
struct ka_ct_ops {
	void (*thread)(void *arg, uint32_t pid, uint32_t tid);
	void (*section)(void *arg, int start);
	void (*gap)(void *arg, unsigned gap, uint64_t count);
	int (*call)(void *arg, const struct ktr_callent *e, uint32_t tid, unsigned marks);
	void (*offcpu)(void *arg, const struct ktr_offcpu *o, uint32_t tid, unsigned level);
};

/**
 * ka_calltrace_walk() - walk the calls of sorter @s (filled by
 * ka_profile_read(), ordered by thread or, with @interlace, by entry time)
 * as nested call traces, reporting to @ops; @sched (ka_profile_sched(),
 * may be NULL) adds the switch-outs inside the calls.
 * Return: 0, or -errno from the sorter or memory.
 */
int ka_calltrace_walk(struct ktr_callsort *s, struct ktr_sched *sched, int interlace,
		      const struct ka_ct_ops *ops, void *arg);

/**
 * ka_calltrace_walk_from() - ka_calltrace_walk() of the entries @next
 * gives (@src passed to it: 1 an entry, 0 the end, or -errno), in @s's
 * order, @s naming their threads (ktr_preorder_next() over its sorter).
 */
int ka_calltrace_walk_from(struct ktr_callsort *s, int (*next)(void *src, struct ktr_callent *e), void *src,
			   struct ktr_sched *sched, int interlace, const struct ka_ct_ops *ops, void *arg);

/* ---- folded stacks (analysis/folded.c) ----------------------------------------- */

/**
 * struct ka_folded_opts - what ka_folded() reads: calls @want_call keeps
 * (NULL: all; with @arg), named through @names; @cmd for the progress line.
 */
struct ka_folded_opts {
	int (*want_call)(void *arg, const struct ktr_call *c);
	void *arg;
	struct ka_names *names;
	const char *cmd;
};

/**
 * ka_folded() - the folded stacks of trace @t: @emit(@arg, path, ns) for
 * each distinct path ("comm;f1;...;fn", ';' and newlines in names
 * replaced) with its self time in ns (0 never emitted).  *@calls is
 * incremented per call read.  Return: 0, or -errno (memory, or the
 * sorter's temporary files).
 */
int ka_folded(struct ktr_trace *t, const struct ka_folded_opts *o,
	      void (*emit)(void *arg, const char *path, uint64_t ns), void *arg, uint64_t *calls);

/* ---- rows of the shared CSV/JSON schema (analysis/rows.c) --------------------- */

struct fmt_row;
struct ka_rows;

/**
 * ka_rows_new() - a converter of @t's records into rows of the schema of
 * formats/formats.h (struct fmt_row), naming calls through @names; @hex:
 * event argument values in hex.  Feed it every call of the trace, in
 * order, even those not written: self times need the whole call tree.
 * Return: the converter, or NULL (ENOMEM).  Not thread-safe.
 */
struct ka_rows *ka_rows_new(struct ktr_trace *t, struct ka_names *names, int hex);
void ka_rows_free(struct ka_rows *x);

enum { KA_ROW_NONE, KA_ROW_GAP, KA_ROW_CALL, KA_ROW_EVENT };

/**
 * ka_rows_of() - @r as a row: a gap ("[lost]" and the like, category
 * "ktrace", args "count=N;stream=S"), a call (time_ns its entry, dur_ns,
 * self_ns, category "call", args "depth=D;sig=S;flags=F;func=0x..;site=0x..";
 * *@c receives the decoded call, for selection) or an event (args
 * "name=value;...").  The row's strings stay valid until the next call.
 * Return: KA_ROW_GAP, KA_ROW_CALL or KA_ROW_EVENT, or KA_ROW_NONE for a
 * call record that does not decode (no row).
 */
int ka_rows_of(struct ka_rows *x, const struct ktr_rec *r, struct fmt_row *row, struct ktr_call *c);

/**
 * ka_rows_call() - decoded call @c as a row, as ka_rows_of() makes it of
 * the call's record (for readers of ktr_next_calls()).  Return: KA_ROW_CALL.
 */
int ka_rows_call(struct ka_rows *x, const struct ktr_call *c, struct fmt_row *row);

/* ---- physical pages per process over time (analysis/memview.c) --------------- */

/*
 * `ktrace memview`: the pages each process holds, from MEM_PAGE_ALLOC
 * (pfn,order,gfp_flags) and MEM_PAGE_FREE (pfn,order) kernel events.  A
 * page belongs to the process that allocated it (pfn -> owner map, 2^order
 * pages per event) until someone frees it: a free by another task (kswapd,
 * an RCU callback, the parent reaping a child) lowers the owner's count.
 * A free of a page whose allocation the trace did not see (allocated
 * before the recording started, or lost) is counted apart, per freeing
 * process and in total, never against anyone.  Counts are pages (the
 * kernel's PAGE_SIZE, 4 KiB on x86-64); times CLOCK_MONOTONIC ns.
 * Not thread-safe; about 24 bytes per page ever seen plus 24 per process
 * and interval.
 */
#define KA_MV_NOBODY (UINT32_MAX - 1) /* owner map value of a freed page */

/**
 * struct ka_mv_proc - one process (tgid; the tid when the tgid is
 * unknown, i.e. word 0's high half is 0 and no thread line names it).
 * @alloc/@freed: pages allocated by it / of its pages freed (by anyone)
 * in each interval, @nint entries of struct ka_memview when finished;
 * @held: pages it holds at the end of each interval (after finish).
 * Totals in pages: @total_alloc, @total_freed (of its pages),
 * @freed_by_others (of those, freed by another process), @untracked
 * (pages it freed whose allocation the trace did not see), @cur (held
 * now), @peak (most held at any event) and @peak_ns when first reached.
 */
struct ka_mv_proc {
	uint32_t pid, tid;
	uint64_t *alloc, *freed, *held;
	size_t cap;
	uint64_t total_alloc, total_freed, freed_by_others, untracked, cur, peak, peak_ns;
};

/**
 * struct ka_memview - the accounting; zero it, set @interval_ns (> 0) and
 * @first_ns (interval 0 starts there: the trace's first record), feed it,
 * ka_memview_finish(), read @procs[0..@nprocs), ka_memview_free().
 * @untracked: pages freed with no allocation seen (all processes);
 * @failed: allocation events without a page (pfn -1, the allocation
 * failed); @reowned: pages allocated again while still owned (a free was
 * lost: the old owner's count is lowered); @bad: events with an order
 * above 10 or too few words (ignored); @oom: memory ran out, counts are
 * incomplete.
 */
struct ka_memview {
	uint64_t interval_ns, first_ns;
	size_t nint;
	struct ka_mv_proc *procs;
	size_t nprocs, pcap;
	struct ka_map64 proc_of; /* pid -> index in procs */
	struct ka_map64 owner;   /* pfn -> index in procs, or KA_MV_NOBODY */
	uint64_t untracked, failed, reowned, bad, events;
	int oom;
};

/**
 * ka_memview_page() - account one event: @alloc 1 (allocation) or 0
 * (free) of 2^@order pages from @pfn at @ns, in task @tid of process
 * @pid (0 = unknown: @tid stands for it).  Return: 0, or -ENOMEM (@m->oom
 * is set; the event is partly counted).
 */
int ka_memview_page(struct ka_memview *m, uint64_t ns, int alloc, uint32_t tid, uint32_t pid,
		    uint64_t pfn, unsigned order);

/**
 * ka_memview_feed() - account @r if it is a MEM_PAGE_ALLOC or
 * MEM_PAGE_FREE KEVENT record (word 0 pid | tgid << 32, then pfn, order);
 * anything else is ignored.  Return: 1 if counted, 0 if not such an
 * event, -ENOMEM.
 */
int ka_memview_feed(struct ka_memview *m, const struct ktr_rec *r);

/**
 * ka_memview_finish() - size every process's arrays to the intervals up to
 * @last_ns (at least those with events) and fill @held.  Return: 0 or
 * -ENOMEM (@oom set).
 */
int ka_memview_finish(struct ka_memview *m, uint64_t last_ns);

/** ka_memview_free() - free @m's memory (it is zeroed). */
void ka_memview_free(struct ka_memview *m);

/* ---- lock misuse and lock times (analysis/locks.c, `ktrace locks`) ------------- */

/* What a finding is (struct ka_lock_finding). */
enum ka_lock_kind {
	KA_LOCK_INVERSION = 1,  /* lock-order inversion: a potential deadlock */
	KA_LOCK_BAD_RELEASE,    /* released by a thread that does not hold it */
	KA_LOCK_DOUBLE,         /* acquired again by its holder (not recursive) */
	KA_LOCK_HELD_AT_EXIT,   /* still held when its thread ended */
	KA_LOCK_HELD_AT_END,    /* still held when the trace ended (a note, not misuse) */
	KA_LOCK_CYCLE,          /* a lock-order cycle of 3 or 4 locks: a potential deadlock */
};

/**
 * struct ka_lock_finding - one misuse, reported once per distinct
 * (kind, locks, call sites); @count is how often it was seen.  Call sites
 * are return addresses (look them up with KTR_SYM_RETADDR).
 * INVERSION: thread @tid acquired @lock2 at @site while holding @lock
 *            (acquired at @site2); thread @tid2 acquired @lock at @site3
 *            while holding @lock2 (acquired at @site4).
 * BAD_RELEASE: thread @tid released @lock at @site; thread @tid2 held it
 *            (acquired at @site2), or @tid2 = 0: nobody held it.
 * DOUBLE:    thread @tid acquired @lock at @site, holding it since @site2.
 * HELD_AT_EXIT: thread @tid ended (pthread_exit at @site; 0: it returned)
 *            holding @lock, acquired at @site2.
 * HELD_AT_END: thread @tid held @lock (acquired at @site2) at the end.
 * CYCLE:     @ncycle edges of the lock-order graph, @cycle[] (for
 *            ka_locks_edge()), each lock acquired while holding the one
 *            before, the last's back to the first's; @lock the smallest.
 * @ns: CLOCK_MONOTONIC ns of the first time it was seen.
 */
struct ka_lock_finding {
	enum ka_lock_kind kind;
	uint64_t lock, lock2;
	uint32_t tid, tid2;
	uint64_t site, site2, site3, site4;
	uint64_t ns;
	uint64_t count;
	unsigned err; /* DOUBLE: the error the second acquisition returned (EBUSY, EDEADLK), 0 if none */
	uint32_t cycle[4];
	unsigned ncycle;
};

/**
 * struct ka_lock_stat - the times of one lock acquired at one call site.
 * @lock, @site: the lock's address and the call site of its acquisition
 *          (@site 0 and @kernel 1 for the kernel's contention events, whose
 *          @lock is the tracepoint's lock_addr, 0 where not recorded).
 * @acquired: acquisitions (kernel: contentions).
 * @wait_total, @wait_max: ns from the acquire call to holding the lock
 *          (kernel: from contention_begin to contention_end).
 * @hold_total, @hold_max: ns from holding it to its release (0 kernel).
 */
struct ka_lock_stat {
	uint64_t lock, site;
	int kernel;
	unsigned kflags; /* kernel: contention_begin's flags seen (1 spin, 2 read, 4 write, 8 rt, 32 mutex) */
	uint64_t acquired;
	uint64_t wait_total, wait_max, hold_total, hold_max;
};

struct ka_locks;

/**
 * ka_locks_new() - a lock analysis of trace @t: feed it every record in
 * time order (ktr_next()) with ka_locks_feed(), then ka_locks_end().  It
 * keeps, per thread, the locks held and the acquisition under way, the
 * lock-order graph (an edge A -> B per pair of locks, with the first call
 * sites seen) and per (lock, call site) the times.  The lock events are
 * those of include/ktrace/locks.h whose catalogue category is "locks";
 * LOCK_CONTENTION_BEGIN/END of the kernel sub-trace (include/ktrace/lkst.h)
 * give kernel wait times.  Memory: per thread, lock, edge and site.
 * Return: the analysis or NULL (ENOMEM).  Not thread-safe.
 */
struct ka_locks *ka_locks_new(const struct ktr_trace *t);

/** ka_locks_feed() - take record @r (gaps make the results uncertain: counted). Return: 0 or -ENOMEM. */
int ka_locks_feed(struct ka_locks *l, const struct ktr_rec *r);

/**
 * ka_locks_end() - after the last record: inversions from the graph
 * (cycles of two locks), locks still held.  Return: 0 or -ENOMEM.
 */
int ka_locks_end(struct ka_locks *l);

/**
 * struct ka_lock_edge - one edge of the lock-order graph: thread @tid
 * acquired @b at @site_b while holding @a, acquired at @site_a (the first
 * time seen).
 */
struct ka_lock_edge {
	uint64_t a, b, site_a, site_b;
	uint32_t tid;
};

/** ka_locks_edge() - edge @i of the graph (a CYCLE finding's @cycle[k]) into *@e. Return: 0, -1 bad @i. */
int ka_locks_edge(const struct ka_locks *l, uint32_t i, struct ka_lock_edge *e);

/** ka_locks_findings() - the findings in the order seen (inversions last); *@n their number. */
const struct ka_lock_finding *ka_locks_findings(const struct ka_locks *l, size_t *n);

/** ka_locks_stats() - the (lock, site) times, sorted by @hold_max then @wait_max, longest first. */
const struct ka_lock_stat *ka_locks_stats(struct ka_locks *l, size_t *n);

/** ka_locks_counts() - lock events read (application, kernel) and gaps seen, into *@app, *@kernel, *@gaps. */
void ka_locks_counts(const struct ka_locks *l, uint64_t *app, uint64_t *kernel, uint64_t *gaps);

/** ka_locks_free() - free @l (NULL allowed). */
void ka_locks_free(struct ka_locks *l);

#endif

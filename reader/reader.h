/*
 * reader/reader.h - the trace reader library (libktrace-reader.a), used by
 * every `ktrace` subcommand that looks at a trace directory.
 *
 * It opens a trace directory written by libktrace, the kernel module or
 * `ktrace read` (docs/FORMAT.md), and hands out its records:
 *
 *   - one stream at a time (ktr_stream_next()), sub-buffers in sequence
 *     order, or all streams merged by time (ktr_next(), a k-way merge with a
 *     binary heap);
 *   - with full timestamps (the 40-bit record stamps extended against the
 *     sub-buffer's first_ts) converted to CLOCK_MONOTONIC nanoseconds;
 *   - with the CPU, thread id and process id of each record;
 *   - with gaps (lost records, overwritten sub-buffers, dropped records,
 *     corrupt or truncated data) delivered in line, as pseudo-records at the
 *     place they happened.
 *
 * For function traces (KFT, CALL records) it also decodes calls with their
 * function and call site (ktr_call_decode(), the `callsites` table),
 * names addresses from the trace's memory maps with elfutils
 * (ktr_syms_new(), ktr_sym_lookup()), rebuilds call trees for local times
 * (ktr_ctree_add()) and sorts calls into entry order in bounded memory
 * (ktr_callsort_*()): what `ktrace addr2sym` and `ktrace kd` are made of.
 *
 * Bad input never stops the reader: what cannot be read is reported as a
 * one-line diagnostic ("FILE: offset N: what", or "FILE:LINE: what" for the
 * metadata) and everything else is still returned.  The caller drains the
 * diagnostics with ktr_diag_next() and decides the exit status with
 * ktr_error_count().
 *
 * Memory: stream files are mapped read-only (or given as memory buffers,
 * ktr_open_mem(), for the fuzz target); the reader keeps one index entry
 * per sub-buffer and one look-ahead record per stream, never a copy of the
 * trace.
 *
 * Thread safety: a struct ktr_trace is used by one thread at a time;
 * distinct traces are independent.  Nothing here is async-signal-safe.
 *
 * Mirrors: the stream/sub-buffer walk follows relay's reader side (seed
 * 003, klog's reader in seed 000); the merge is what trace-cmd's and
 * babeltrace's readers do for per-CPU buffers.
 */
#ifndef KTRACE_READER_H
#define KTRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include <ktrace/format.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ktr_trace;

/* What a struct ktr_rec holds. */
enum ktr_kind {
	KTR_RECORD = 0, /* a record of the trace */
	KTR_GAP = 1,    /* a place where records are missing (see ktr_gap) */
};

/* Kinds of gap. */
enum ktr_gap {
	KTR_GAP_LOST = 1,        /* @count records not stored after this point (sub-buffer `lost`) */
	KTR_GAP_OVERWRITTEN = 2, /* @count sub-buffers overwritten (flight recorder) or missing */
	KTR_GAP_DROPPED = 3,     /* @count records dropped at the end of the stream (control file) */
	KTR_GAP_CORRUPT = 4,     /* unreadable data in @file at byte @offset */
};

/**
 * struct ktr_rec - one record or gap, as returned by ktr_next() and
 * ktr_stream_next().
 * @kind:   KTR_RECORD or KTR_GAP.
 * @raw:    full raw timestamp (TSC ticks or ns, see ktr_info.clock_tsc).
 *          For a gap: the time of the last record before it (or of the
 *          first record after it, for a gap at the start of a sub-buffer).
 * @ns:     @raw converted to CLOCK_MONOTONIC nanoseconds (ktr_raw_to_ns()).
 * @stream: index of the stream (N of traceN / cpuN).
 * @cpu:    CPU the record was written on, -1 if unknown.
 * @tid:    writing thread (0 if unknown, e.g. kernel per-CPU records).
 * @pid:    its process (from the threads file, metadata or control file;
 *          0 if unknown).
 * @depth:  signal nesting depth for shared-stream records (0 = thread
 *          context), 0 otherwise.
 * @cls:    record class (KTRACE_CLASS_*).
 * @id:     16-bit record id; for LOG2/LOG4 (func << 8) | event code.
 * @nwords: payload words in @w.
 * @w:      the payload words, copied (LOG4: two u32 per word, a in the low
 *          half of w[0]); use ktr_rec_args() to get them by name.
 * @gap:    for KTR_GAP: the enum ktr_gap kind.
 * @count:  for KTR_GAP: records (LOST, DROPPED) or sub-buffers (OVERWRITTEN);
 *          0 for CORRUPT.
 * @file:   for KTR_GAP_CORRUPT: path of the stream file (owned by the trace).
 * @offset: for KTR_GAP_CORRUPT: byte offset in @file of the bad data; for
 *          records: byte offset of the record header in its stream file.
 * @what:   for KTR_GAP_CORRUPT: a short description (owned by the trace,
 *          valid until the next call on the same stream).
 * @until_ns: for KTR_GAP_LOST and KTR_GAP_OVERWRITTEN: ns of the stream's
 *          next record, so [@ns, @until_ns] is where records are missing
 *          (0: none follows).
 */
struct ktr_rec {
	enum ktr_kind kind;
	uint64_t raw;
	uint64_t ns;
	unsigned stream;
	int cpu;
	uint32_t tid;
	uint32_t pid;
	unsigned depth;
	unsigned cls;
	unsigned id;
	unsigned nwords;
	uint64_t w[KTRACE_MAX_WORDS];
	enum ktr_gap gap;
	uint64_t count;
	const char *file;
	uint64_t offset;
	const char *what;
	uint64_t until_ns;
};

/* Stream kinds as the reader knows them (KTRACE_STREAM_*, 0 = unknown). */

/**
 * struct ktr_info - what the metadata (and control file) say about a trace.
 * Strings are "" when absent, numbers 0.  Owned by the trace.
 * @version:     the `ktrace-format` version found (0 if no metadata).
 * @clock_tsc:   1 if raw times are TSC ticks, 0 if CLOCK_MONOTONIC ns.
 * @flight:      1 for flight-recorder mode (`mode flight` or control flag).
 * @scope:       "thread", "global", "cpu" or "".
 * @packed:      1 for `layout packed` stream files, 2 for `layout slots`
 *               (what `ktrace record`'s consumer writes).
 * @buf_size:    sub-buffer size in bytes (from metadata, control, or
 *               guessed from the stream files).
 * @buf_nr:      sub-buffers per stream (fixed layout); for `layout
 *               slots`, per ring the program wrote into; 0 for packed.
 * @nstreams:    streams found.
 * @ncalib:      calibration pairs in use (metadata + sub-buffer headers).
 */
struct ktr_info {
	unsigned version;
	int clock_tsc;
	int flight;
	int packed;
	const char *scope;
	const char *host, *kernel, *machine, *channel, *comm;
	uint32_t pid;
	unsigned cpus;
	uint32_t buf_size, buf_nr;
	unsigned nstreams;
	unsigned ncalib;
	uint64_t created_ns, realtime_ns;
};

/**
 * struct ktr_stream_info - one stream of a trace (owned by the trace).
 * @path:        the stream file, "DIR/trace0" or "DIR/cpu3".
 * @index:       the stream's index N (ktr_rec.stream), from the metadata's
 *               `stream` line or the file name.
 * @buf_size, @buf_nr: its geometry (fixed layout; @buf_nr is 0 for packed).
 * @kind:        KTRACE_STREAM_THREAD/SHARED/CPU, 0 if unknown.
 * @nsubbufs:    sub-buffers found in the file (valid or corrupt).
 * @have_ctl:    1 if the control file has an entry for this stream; then
 *               @head, @dropped, @overwritten, @written, @owner, @pid are
 *               that entry's values when the trace was opened.
 */
struct ktr_stream_info {
	const char *path;
	unsigned index;
	uint32_t buf_size, buf_nr;
	unsigned kind;
	size_t nsubbufs;
	int have_ctl;
	uint64_t head, dropped, overwritten, written;
	uint32_t owner, pid;
};

/**
 * struct ktr_event - a catalogue entry from a metadata `event` line.
 * @id:       16-bit event id ((func << 8) | code for log2/log4).
 * @cls:      KTRACE_CLASS_LOG2, KTRACE_CLASS_LOG4 or KTRACE_CLASS_KEVENT.
 * @name, @category: as declared ("default" if the line said "-").
 * @args:     up to KTRACE_MAX_WORDS argument names (NULL past @nargs):
 *            4 for static events and the LKST catalogue, up to 8 for the
 *            tracepoints `ktrace record --kernel -e` adds.
 */
struct ktr_event {
	unsigned id;
	unsigned cls;
	const char *name;
	const char *category;
	const char *args[KTRACE_MAX_WORDS];
	unsigned nargs;
};

/* ------------------------------------------------------------------ */
/* Opening                                                             */
/* ------------------------------------------------------------------ */

/**
 * ktr_open() - open the trace directory @dir.
 *
 * Reads `metadata` (errors are reported as "DIR/metadata:LINE: what"; a
 * version newer than KTRACE_FORMAT_VERSION is reported and the rest is still
 * read), the `control` file's stream table, the `threads` file, and indexes
 * every stream file named by the metadata's `stream` lines or, without
 * them, every traceN / cpuN file.  Without metadata the geometry comes from
 * the control file or is guessed from the sub-buffer headers, and the clock
 * is assumed to be the TSC calibrated by the headers' (first_ts, first_ns)
 * pairs.  Nothing fatal happens here: a directory that cannot be read gives
 * a trace with no streams and a diagnostic.
 *
 * Return: the trace, or NULL with errno = ENOMEM.
 */
struct ktr_trace *ktr_open(const char *dir);

/**
 * struct ktr_memfile - one file of an in-memory trace for ktr_open_mem().
 * @name: file name inside the trace directory ("metadata", "control",
 *        "threads", "trace0", ...).
 * @data, @size: its contents (not copied; must outlive the trace).
 */
struct ktr_memfile {
	const char *name;
	const void *data;
	size_t size;
};

/**
 * ktr_open_mem() - as ktr_open(), with the trace's files given in memory.
 * @dir:   the directory name used in diagnostics.
 * @files: @n files; names not listed do not exist.
 * Used by the fuzz target and the tests.  Return: the trace or NULL (ENOMEM).
 */
struct ktr_trace *ktr_open_mem(const char *dir, const struct ktr_memfile *files, size_t n);

/** ktr_close() - unmap and free everything of @t (NULL is allowed). */
void ktr_close(struct ktr_trace *t);

/** ktr_info() - the trace's metadata summary (owned by @t). */
const struct ktr_info *ktr_info(const struct ktr_trace *t);

/**
 * ktr_stream() - the @i-th stream (0 <= @i < ktr_info()->nstreams, sorted
 * by stream index), or NULL.
 */
const struct ktr_stream_info *ktr_stream(const struct ktr_trace *t, unsigned i);

/** ktr_dir() - the directory @t was opened from. */
const char *ktr_dir(const struct ktr_trace *t);

/*
 * The kernel sub-trace.  A trace directory may hold kernel/, itself a trace
 * directory (clock mono, per-CPU KEVENT streams) written by `ktrace record
 * --kernel` (docs/FORMAT.md, "The kernel sub-trace").  ktr_open() opens it
 * too; ktr_next() then merges both by CLOCK_MONOTONIC ns into one timeline
 * (ties: the application's record first), the names and diagnostics
 * functions fall through to it, and ktr_error_count() counts both.  Its
 * records carry stream numbers KTR_KERNEL_STREAM + N (kernel/cpuN) and raw
 * times in ns of its own clock: compare records of a merged trace by @ns,
 * never by @raw.  ktr_info()->nstreams, ktr_stream() and ktr_stream_next()
 * cover the application's streams only.  A directory holding nothing but
 * kernel/ is a trace whose info is the sub-trace's.
 *
 * KEVENT records (either trace) have @tid = the task's pid (word 0 bits
 * 0..31) and @pid = its tgid (bits 32..63, else the `thread` lines'), and
 * ktr_rec_args() gives the arguments after word 0.
 */
#define KTR_KERNEL_STREAM 65536u

/** ktr_kernel() - the kernel sub-trace of @t (its own info, streams), or NULL. */
const struct ktr_trace *ktr_kernel(const struct ktr_trace *t);

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/**
 * ktr_stream_next() - the next record or gap of the @s-th stream (as
 * ktr_stream()), in stream order:
 * sub-buffers by sequence number, records in file order.  Every sub-buffer
 * is validated (magic, hdr_size, `used` within the sub-buffer, records
 * parsing to exactly `used` bytes); a bad one is reported, delivered as a
 * KTR_GAP_CORRUPT and skipped.  INTERNAL CPU-change records update the CPU
 * of later records and are not returned.
 *
 * Streams have independent cursors; do not mix with ktr_next() on the same
 * trace without ktr_rewind().
 *
 * Return: 1 with *@r filled, 0 at the end of the stream (or bad @s).
 */
int ktr_stream_next(struct ktr_trace *t, unsigned s, struct ktr_rec *r);

/**
 * struct ktr_subbuf_info - a sub-buffer of a stream as its header (and,
 * compressed, its frame entry) describe it, without its records being
 * read: what an index of a stream offers (ktr_subbuf_at()).
 * @seq:       its sequence number.
 * @first_ns:  CLOCK_MONOTONIC ns when it was opened (0: unknown).
 * @last_ns:   of its last record.
 * @records:   its records (internal ones not counted; header `nrec`).
 * @lost:      records lost right after it.
 * @tid:       its writing thread (thread streams), else 0.
 * @flags:     KTRACE_SBF_*.
 * @depth_min: the smallest depth of its CALL records, from its frame
 *             entry (docs/FORMAT.md, "Compressed frames"); -1 when not
 *             known (a slot, a writer that did not say, or none).
 * @corrupt:   1 if its header or entry is unusable (the rest is 0).
 */
struct ktr_subbuf_info {
	uint64_t seq, first_ns, last_ns;
	uint32_t records, lost, tid;
	unsigned flags;
	int depth_min;
	int corrupt;
};

/**
 * ktr_subbuf_count() - the sub-buffers of the @s-th stream (as
 * ktr_stream()) in sequence order; ktr_subbuf_at() - the @i-th of them.
 * Return: the count; 1 with *@out filled, 0 if @s or @i is out of range.
 */
size_t ktr_subbuf_count(const struct ktr_trace *t, unsigned s);
int ktr_subbuf_at(const struct ktr_trace *t, unsigned s, size_t i, struct ktr_subbuf_info *out);

/**
 * ktr_next() - the next record or gap of the whole trace, all streams
 * merged by timestamp (ties: lower stream first).  Each stream's records
 * are in time order (writers guarantee it), so the output is too.
 * Return: 1 with *@r filled, 0 at the end.
 */
int ktr_next(struct ktr_trace *t, struct ktr_rec *r);

/** ktr_rewind() - start ktr_next() and every ktr_stream_next() over. */
void ktr_rewind(struct ktr_trace *t);

/**
 * struct ktr_loss - a stretch of one stream where records are missing.
 * @stream:  the stream.
 * @gap:     KTR_GAP_LOST (a writer could not store them: buffer full, or
 *           the consumer was behind), KTR_GAP_OVERWRITTEN (flight
 *           recorder: @count sub-buffers), KTR_GAP_DROPPED (counted by the
 *           control file but not placed in any sub-buffer).
 * @count:   records (sub-buffers for OVERWRITTEN).
 * @from_ns: CLOCK_MONOTONIC ns of the last record before the stretch (0:
 *           before the first).
 * @to_ns:   of the first record after it (0: none after it).
 */
struct ktr_loss {
	unsigned stream;
	enum ktr_gap gap;
	uint64_t count;
	uint64_t from_ns, to_ns;
};

/**
 * ktr_losses() - every stretch of @t (and its kernel sub-trace) where
 * records are missing, from the sub-buffer index (no record is read):
 * the first @max into @out (may be NULL with @max 0), records missing in
 * all (LOST + DROPPED) into *@records if not NULL.
 * Return: the number of stretches (may exceed @max).
 */
size_t ktr_losses(const struct ktr_trace *t, struct ktr_loss *out, size_t max, uint64_t *records);

/**
 * ktr_raw_to_ns() - convert a raw timestamp of @t to CLOCK_MONOTONIC ns:
 * identity for `clock mono`; for `clock tsc` piecewise-linear interpolation
 * between the calibration pairs around @raw (metadata `calib` lines and
 * sub-buffer headers), the nearest segment's slope outside them.  Values
 * that would be negative give 0.
 */
uint64_t ktr_raw_to_ns(const struct ktr_trace *t, uint64_t raw);

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/**
 * ktr_event_find() - the catalogue entry of a record class and id, or NULL.
 * LOG2 and LOG4 share one id space; KEVENT has its own.
 */
const struct ktr_event *ktr_event_find(const struct ktr_trace *t, unsigned cls, unsigned id);

/** ktr_func_name() - name of function id @func (metadata `func`), or NULL. */
const char *ktr_func_name(const struct ktr_trace *t, unsigned func);

/**
 * ktr_rec_name() - the printable name of record @r into @buf (@len bytes,
 * always NUL-terminated): the catalogue name; else for a named function
 * NAME:entry, NAME:exit or NAME:N; else F<func>:E<event>; for CALL
 * records "call:0xFUNC" (the function's address; "call:?" if unknown:
 * tools name it with ktr_sym_lookup()); "class N id M" for other classes
 * without names; for gaps "[lost]", "[overwritten]", "[dropped]",
 * "[corrupt]".  Return: @buf.
 */
const char *ktr_rec_name(const struct ktr_trace *t, const struct ktr_rec *r, char *buf,
			 size_t len);

/**
 * ktr_rec_category() - the catalogue category of @r ("ktrace" for gaps,
 * "call" for CALL records).
 */
const char *ktr_rec_category(const struct ktr_trace *t, const struct ktr_rec *r);

/**
 * ktr_rec_args() - the arguments of record @r by name.
 * @names: receives up to KTRACE_MAX_WORDS argument names (catalogue names,
 *         else "a".."d" for LOG2/LOG4, "w0".."w14" for other classes).
 *         CALL records give their decoded fields: entry (ns), dur (ns),
 *         depth, sig, flags, func and site (addresses, 0 if unknown).
 * @vals:  their values (LOG4: the u32 values).
 * Return: the number of arguments (0 for gaps).
 */
unsigned ktr_rec_args(const struct ktr_trace *t, const struct ktr_rec *r, const char **names,
		      uint64_t *vals);

/**
 * ktr_rec_hidden() - which of ktr_rec_args()' values were hidden by the
 * producer: bit i set = value i was a kernel address, recorded as 0 (a
 * KEVENT's word 0 hidden mask, include/ktrace/lkst.h).  Print such a value
 * as hidden, never as 0.  Return: the mask, 0 for other classes.
 */
unsigned ktr_rec_hidden(const struct ktr_rec *r);

/**
 * ktr_rec_comm() - the task name a PROCESS_COMM record carries
 * (include/ktrace/lkst.h) into @buf (@len >= 17 for a whole one), bytes
 * outside printable ASCII and spaces as '?', "?" if empty.
 * Return: @buf, or NULL if @r is no PROCESS_COMM record.
 */
char *ktr_rec_comm(const struct ktr_rec *r, char *buf, size_t len);

/**
 * ktr_thread() - what the trace knows about thread @tid (`threads` file
 * and metadata `thread` lines; later lines win).
 * @pid, @comm: set when found (@comm owned by @t); either may be NULL.
 * Return: 1 if known, 0 if not.
 */
int ktr_thread(const struct ktr_trace *t, uint32_t tid, uint32_t *pid, const char **comm);

/**
 * ktr_thread_at() - the @i-th known thread (sorted by tid), for tools that
 * list them.  Return: 1 and the fields, 0 past the end.
 */
int ktr_thread_at(const struct ktr_trace *t, size_t i, uint32_t *tid, uint32_t *pid,
		  const char **comm);

/**
 * ktr_event_at() - the @i-th catalogue entry (sorted by class group, id),
 * or NULL past the end.
 */
const struct ktr_event *ktr_event_at(const struct ktr_trace *t, size_t i);

/**
 * ktr_resolve_events() - turn an event specification into event ids, as
 * `ktrace ctl enable|disable` and `ktrace print --event` take them:
 *   NAME          a catalogue name (every id with that name)
 *   FUNC:entry, FUNC:exit, FUNC:N, FUNC:*   FUNC a function name or number
 *   F<func>:E<event>                        as printed for unnamed ids
 *   ID            a numeric 16-bit id (decimal or 0x hex)
 *   all           every id
 * @map: 65536 bytes, set to 1 for each matching id (others untouched).
 * Return: number of ids set, or -EINVAL if @spec matches nothing it could
 * name (an unknown name).
 */
int ktr_resolve_events(const struct ktr_trace *t, const char *spec, uint8_t *map);

/* ------------------------------------------------------------------ */
/* Control file                                                        */
/* ------------------------------------------------------------------ */

/**
 * ktr_control_check() - validate a control file image (struct
 * ktrace_control, stream table and enable map, format.h) of @size bytes.
 * Checks the magic, that the header, the stream table and the enable map
 * lie inside the file, and the version.
 * @msg:  on failure (or a newer version), "offset N: what" (@len bytes).
 * Return: 0 usable; 1 usable but the version is newer than this reader's
 * (@msg says so); -1 unusable.
 */
int ktr_control_check(const void *p, size_t size, char *msg, size_t len);

/* ------------------------------------------------------------------ */
/* Diagnostics                                                         */
/* ------------------------------------------------------------------ */

/**
 * ktr_diag_next() - the oldest diagnostic not yet taken, or NULL.  One line,
 * no newline: "DIR/trace0: offset 4096: bad sub-buffer magic 0x...",
 * "DIR/metadata:3: bad calib line".  Valid until the next call on @t.  At
 * most 256 undrained messages are kept; the rest are counted and announced
 * in one "... N more diagnostics suppressed" line.
 */
const char *ktr_diag_next(struct ktr_trace *t);

/**
 * ktr_error_count() - errors found so far (corrupt or truncated data,
 * metadata errors, missing files, newer version).  Gaps from normal
 * operation (lost, overwritten, dropped) are not errors.
 */
unsigned long ktr_error_count(const struct ktr_trace *t);

/* ------------------------------------------------------------------ */
/* Memory maps (metadata `map` lines)                                  */
/* ------------------------------------------------------------------ */

/**
 * struct ktr_map - one metadata `map START END OFFSET BUILDID PATH` line,
 * or `map-gen LOAD UNLOAD START END OFFSET BUILDID PATH` line: a loaded
 * segment of an object in the traced program's address space.
 * @start, @end:  its addresses [start, end).
 * @offset:       file offset of the segment's first byte.
 * @buildid:      the object's GNU build id in hex, "" if none was recorded.
 * @path:         the object's file as the program saw it ("linux-vdso.so.1"
 *                for objects without a file).
 * @timed:        1 for a `map-gen` line (the next two fields are known), 0
 *                for a `map` line (mapped when the metadata was written).
 * @load_ns:      CLOCK_MONOTONIC ns by which the object was loaded (0:
 *                before the trace was set up); 0 for a `map` line.
 * @unload_ns:    ns by which it had been unloaded, UINT64_MAX if it was
 *                still loaded (and for a `map` line).
 * Strings are owned by the trace.
 */
struct ktr_map {
	uint64_t start, end, offset;
	const char *buildid;
	const char *path;
	int timed;
	uint64_t load_ns, unload_ns;
};

/**
 * ktr_map_at() - the @i-th map or map-gen line (in file order: the traced
 * executable first, as dl_iterate_phdr() reports it), or NULL past the end.
 */
const struct ktr_map *ktr_map_at(const struct ktr_trace *t, size_t i);

/**
 * ktr_map_pick() - the map-gen line (ktr_map_at() index) that covered
 * address @addr at CLOCK_MONOTONIC time @ns (UINT64_MAX: the latest
 * object), for traces whose metadata has `map-gen` lines (docs/FORMAT.md):
 * of the lines covering @addr, one whose object was loaded at @ns (the
 * latest loaded if several), else the one nearest in time.  *@ambiguous
 * (may be NULL) is set to 1 when lines of different loads cover @addr.
 * At most 4,096 lines are examined per call (time bounded on hostile
 * traces).  Not thread-safe (builds an index on the first call).
 * Return: the line index, or SIZE_MAX when the trace has no map-gen line
 * covering @addr (or out of memory).
 */
size_t ktr_map_pick(struct ktr_trace *t, uint64_t addr, uint64_t ns, int *ambiguous);

/*
 * A function address of a call into an object that shared its addresses
 * with another object loaded before or after it (dlclose() then dlopen())
 * is returned by ktr_call_decode() with the map-gen line's index + 1 in
 * bits 47..63 (KTR_ADDR_GEN()), so that tools that count per address keep
 * the two apart; ktr_sym_lookup() resolves it in that object.
 */
#define KTR_ADDR_GEN_SHIFT 47
#define KTR_ADDR_GEN(a) ((a) >> KTR_ADDR_GEN_SHIFT)               /* 0: untagged */
#define KTR_ADDR_PLAIN(a) ((a) & ((1ull << KTR_ADDR_GEN_SHIFT) - 1)) /* the address */

/* ------------------------------------------------------------------ */
/* Function call records (KFT, class KTRACE_CLASS_CALL)                */
/* ------------------------------------------------------------------ */

/**
 * struct ktr_call - a CALL record decoded (docs/FORMAT.md, "Function call
 * records"): one completed (or unfinished) function call.
 * @entry_ns:  CLOCK_MONOTONIC ns of the call's entry (record time minus
 *             the duration, converted with the trace's calibration).
 * @exit_ns:   ns of its exit: the record's time.  For an unfinished call,
 *             the moment its record was written (the exit was not seen).
 * @dur_ns:    exit_ns - entry_ns.
 * @dur_raw:   the duration as recorded, raw clock units.
 * @func:      address of the called function, 0 if unknown (bad call-site
 *             entry, see ktr_call_decode()); tagged with its load
 *             generation (KTR_ADDR_GEN()) when loads of different objects
 *             covered it during the trace (dlclose(), then dlopen()).
 * @site:      return address in the caller (gcc's call_site), 0 if unknown;
 *             tagged as @func.
 * @key:       a 32-bit name of the (func, site) pair: the call-site index,
 *             or for records with inline addresses (index 0xffffff) an id
 *             >= KTR_CALL_KEY_EXTRA interned by the reader; equal pairs
 *             written under different indexes keep different keys.
 *             ktr_call_key_addrs() turns it back into addresses.
 * @index:     the call-site index as recorded (24 bits).
 * @tid, @pid, @cpu: thread, process and CPU (as struct ktr_rec).
 * @depth:     depth on the thread's shadow stack, 0 = outermost traced frame.
 * @sig:       signal-handler nesting, 0 = thread context (KFT's interrupt
 *             context), 15 = 15 or more.
 * @flags:     KTRACE_CALLF_UNFINISHED, KTRACE_CALLF_WATCH.
 */
struct ktr_call {
	uint64_t entry_ns, exit_ns, dur_ns, dur_raw;
	uint64_t func, site;
	uint32_t key, index;
	uint32_t tid, pid;
	int cpu;
	unsigned depth, sig, flags;
};

#define KTR_CALL_KEY_EXTRA 0x1000000u /* first key of interned inline pairs */
#define KTR_CALL_KEY_NONE 0xffffffffu /* the pair is unknown */

/**
 * ktr_call_decode() - decode record @r into *@c if it is a CALL record.
 *
 * The call-site index is looked up in the trace's `callsites` file (read
 * when the trace was opened).  A missing or damaged file, an index beyond
 * the table or an entry never written is reported once (a diagnostic
 * naming DIR/callsites and the byte offset, counted as an error) and the
 * call is returned with func = site = 0 and key KTR_CALL_KEY_NONE, so it
 * can still be counted and printed.  A CALL record too short to hold its
 * payload word is reported (stream file and offset) and not decoded.
 *
 * Return: 1 if @c was filled, 0 if @r is not a (usable) CALL record.
 */
int ktr_call_decode(struct ktr_trace *t, const struct ktr_rec *r, struct ktr_call *c);

/**
 * ktr_next_calls() - ktr_next() and ktr_call_decode() of many records at
 * once, for readers of hundreds of millions of calls (kd): the next
 * records of @t in ktr_next()'s order, decoded into @c[0 .. @max), as
 * long as each is a CALL record that ktr_call_decode() accepts (of a
 * stream without context words).  It stops before any other record or
 * gap (and at sub-buffer boundaries, and in traces with kernel events),
 * returning 0 when the very next one is such: the caller then takes that
 * one with ktr_next() and calls again.  The two may be mixed freely; the
 * calls are those ktr_next() + ktr_call_decode() would give, field for
 * field.  *@stream, *@offset: the ktr_rec.stream and .offset of the last
 * call (set when the return is not 0; a progress line's position).
 * The environment variable KTRACE_READ_RECORDS (set and not empty when
 * the trace is opened) turns the runs off: this returns 0 and every
 * record comes through ktr_next(), so tests can compare a tool's fast
 * path with the record-at-a-time one.
 * Return: the number of calls, each one record.  Not thread-safe.
 */
size_t ktr_next_calls(struct ktr_trace *t, struct ktr_call *c, size_t max, unsigned *stream,
		      uint64_t *offset);

/**
 * ktr_callsite() - the (function, call site) pair of call-site index @index.
 * Return: 1 with *@func and *@site set, 0 if the table has no valid entry
 * there (nothing reported: ktr_call_decode() does that).
 */
int ktr_callsite(const struct ktr_trace *t, uint32_t index, uint64_t *func, uint64_t *site);

/**
 * ktr_call_key_addrs() - the addresses behind a struct ktr_call @key.
 * Return: 1 with *@func and *@site set, 0 for KTR_CALL_KEY_NONE or an
 * unknown key (*@func = *@site = 0).
 */
int ktr_call_key_addrs(const struct ktr_trace *t, uint32_t key, uint64_t *func, uint64_t *site);

/**
 * ktr_set_window() - tell the reader of @t that records stamped outside
 * [@from_ns, @to_ns] (CLOCK_MONOTONIC ns) will not be used, as a
 * `--time-range` selection says: a sub-buffer of a thread or per-CPU
 * stream whose headers place all its records outside (its last record
 * before @from_ns, or the previous sub-buffer's last record after @to_ns:
 * a stream's records are in time order) is then skipped without being
 * read or decompressed.  Its records count as read and its
 * gaps (lost records, overwritten sub-buffers) are still delivered.
 * Every record inside the window is delivered; some outside may be.
 * Shared streams (records out of order) are read whole.  Call before the
 * first ktr_next().  ktr_window_skipped(): sub-buffers skipped so far.
 */
void ktr_set_window(struct ktr_trace *t, uint64_t from_ns, uint64_t to_ns);
uint64_t ktr_window_skipped(const struct ktr_trace *t);

/**
 * ktr_time_origin() - the trace's time origin in CLOCK_MONOTONIC ns: for
 * a function trace the KFT run's origin (DIR/kft: the moment the runtime
 * began setting the trace up; `trigger start time` and the run status's
 * start and stop times count from it), else the metadata's `created-ns`,
 * else 0 (times since boot, as KFT's were).  Tools print call entry times
 * relative to it.
 */
uint64_t ktr_time_origin(const struct ktr_trace *t);

/* ------------------------------------------------------------------ */
/* Symbols (elfutils libdwfl)                                          */
/* ------------------------------------------------------------------ */

struct ktr_syms;

/* Lookup flags. */
#define KTR_SYM_RETADDR 0x1u /* @addr is a return address: look at addr - 1 */
#define KTR_SYM_LINES 0x2u   /* fill src/line */
#define KTR_SYM_INLINE 0x4u  /* fill the inlined frames */

#define KTR_SYM_MAX_INLINE 8

/**
 * struct ktr_inline_frame - a function inlined at the looked-up address.
 * @name:       the inlined function ("?" if DWARF does not name it).
 * @call_src, @call_line: where it was inlined (its call site), NULL/0 if
 *              unknown.
 */
struct ktr_inline_frame {
	const char *name;
	const char *call_src;
	unsigned call_line;
};

/**
 * struct ktr_sym - what an address is.  Strings are owned by the
 * symbolizer and live until ktr_syms_free().
 * @addr:     the address looked up.
 * @name:     the function symbol containing it, NULL if none (no symbol
 *            table, a stale file, no file, or between symbols).
 * @offset:   @addr minus the symbol's start (for a return address: of the
 *            return address itself, as KFT's "Called At" printed it).
 * @module:   the mapped file's path as recorded, NULL if @addr lies in no
 *            `map` line.
 * @modname:  its base name ("libc.so.6"), NULL with @module.
 * @modoff:   file offset of @addr in @module.
 * @src, @line: source file and line (KTR_SYM_LINES, DWARF line table;
 *            for a return address the line of the call), NULL/0 if unknown.
 * @ninline, @inl: functions inlined at the address, innermost first
 *            (KTR_SYM_INLINE; at most KTR_SYM_MAX_INLINE).
 */
struct ktr_sym {
	uint64_t addr;
	const char *name;
	uint64_t offset;
	const char *module, *modname;
	uint64_t modoff;
	const char *src;
	unsigned line;
	unsigned ninline;
	struct ktr_inline_frame inl[KTR_SYM_MAX_INLINE];
};

/**
 * ktr_syms_new() - a symbolizer for the addresses of trace @t, built from
 * its `map` lines (ktr_map_at()).  Objects are opened lazily, on the first
 * address that falls in them, with elfutils (libelf for the build id and
 * program headers, libdwfl for symbols, lines and inlined frames; separate
 * debug files are found the standard way, /usr/lib/debug and
 * .gnu_debuglink).  PIE executables and shared libraries are placed at the
 * load bias their map lines imply.
 *
 * Problems are reported once per object, as a warning through the trace's
 * diagnostics (ktr_diag_next(); not counted as errors):
 *   - the file cannot be opened or is not ELF;
 *   - its build id differs from the recorded one (the file changed since
 *     the trace was taken): its symbols are not used;
 *   - it has no symbol table (stripped, no debug file) and a function
 *     address in it has no symbol.
 * Addresses without a symbol are formatted as "[NAME]+0xOFF" (file offset
 * in the object) or, outside every map, as "0xADDR" (ktr_sym_format()).
 * Addresses outside every map are looked up in DIR/kallsyms when the trace
 * has one (kernel function traces: "ADDR TYPE NAME [MODULE]" lines as
 * /proc/kallsyms prints them; a symbol extends to the next one).
 *
 * Return: the symbolizer, or NULL with errno = ENOMEM.
 */
struct ktr_syms *ktr_syms_new(struct ktr_trace *t);

/**
 * ktr_syms_set_file() - read the symbols of the object recorded as @path
 * (NULL: the traced executable, the first map line) from @file instead,
 * e.g. a copy with debug information or a moved binary.  The build id is
 * still checked.  Call before the first lookup.  Return: 0, or -ENOENT if
 * the trace maps no such object, -ENOMEM.
 */
int ktr_syms_set_file(struct ktr_syms *s, const char *path, const char *file);

/**
 * ktr_sym_lookup() - describe address @addr (KTR_SYM_* @flags) in *@out.
 * Results are cached per (address, flags): looking up the same address
 * again costs a hash probe.  Never fails: an unknown address gives a
 * struct with @name and @module NULL.
 * Return: @out.
 */
const struct ktr_sym *ktr_sym_lookup(struct ktr_syms *s, uint64_t addr, unsigned flags,
				     struct ktr_sym *out);

/**
 * ktr_sym_lookup_at() - ktr_sym_lookup() of @addr as it was at CLOCK_MONOTONIC
 * time @ns: in the load that covered it then, where the trace's `map-gen`
 * lines say that different objects were loaded there in turn (an address
 * ktr_call_decode() already tagged, or a trace without map-gen lines:
 * as ktr_sym_lookup()).  Not thread-safe (as ktr_sym_lookup()).
 * Return: @out.
 */
const struct ktr_sym *ktr_sym_lookup_at(struct ktr_syms *s, uint64_t addr, uint64_t ns,
					unsigned flags, struct ktr_sym *out);

/**
 * ktr_sym_format() - @sym as text into @buf (@len bytes, NUL-terminated):
 * "NAME+0xOFF" (just "NAME" when @with_offset is 0 or the offset is 0
 * and @with_offset is 1; @with_offset 2 always adds it), else
 * "[MODNAME]+0xOFF", else "0xADDR".  Return: @buf.
 */
const char *ktr_sym_format(const struct ktr_sym *sym, int with_offset, char *buf, size_t len);

/**
 * ktr_elf_libcall_slots() - the GOT slots through which ELF object @elf
 * calls library functions, as lib/kft_plt.c hooks them: relocations of
 * @type, R_X86_64_JUMP_SLOT (the PLT's slots) or R_X86_64_GLOB_DAT (a
 * -fno-plt build's; functions only), of undefined symbols, in the
 * SHT_RELA sections over .dynsym.  @fn(symbol name, the slot's link-time
 * address, @arg) for each; a non-zero return stops the walk.  @elf is a
 * libelf handle (Elf *).  Return: the number of slots passed to @fn; 0 for
 * other machines than x86-64.
 */
struct Elf;
size_t ktr_elf_libcall_slots(struct Elf *elf, unsigned type,
			     int (*fn)(const char *name, uint64_t slot, void *arg), void *arg);

/** ktr_syms_free() - free @s (NULL allowed); the trace is not touched. */
void ktr_syms_free(struct ktr_syms *s);

/**
 * ktr_syms_set_demangle() - name C++ (and Rust) functions demangled
 * (@on = 1, the default: `geo::Rect::area() const`) or as the symbol
 * table spells them (@on = 0: `_ZNK3geo4Rect4areaEv`).  Call before the
 * first lookup (cached results keep the form they were made with).
 */
void ktr_syms_set_demangle(struct ktr_syms *s, int on);

/*
 * Demangling on its own (reader/demangle.c, libiberty's cplus_demangle()
 * with parameters), for names that do not come from a symbolizer.
 */
struct ktr_demangler;

/** ktr_demangler_new() - an interning demangler, or NULL (ENOMEM). */
struct ktr_demangler *ktr_demangler_new(void);

/**
 * ktr_demangle() - the demangled form of @name, or @name itself when it
 * is not a mangled C++/Rust name (or @d is NULL, or memory ran out).  The
 * result lives until ktr_demangler_free().  Not thread-safe.
 */
const char *ktr_demangle(struct ktr_demangler *d, const char *name);

/** ktr_demangler_free() - free @d and every name it returned (NULL allowed). */
void ktr_demangler_free(struct ktr_demangler *d);

/* ------------------------------------------------------------------ */
/* Call trees and entry-ordered call lists (kd, addr2sym)              */
/* ------------------------------------------------------------------ */

struct ktr_ctree;

/**
 * ktr_child_fn - told, for each recorded call, its nearest recorded
 * descendants (its children in the call tree): @parent_key is the @key
 * given with the parent to ktr_ctree_add(), @child_key the child's (or
 * the keys of a group of children merged to bound memory), @ns their
 * total duration, @count how many calls.
 */
typedef void (*ktr_child_fn)(void *arg, uintptr_t parent_key, uintptr_t child_key, uint64_t ns,
			     uint64_t count);

/**
 * ktr_ctree_new() - a call-tree builder: fed the calls of a trace in
 * record order (ktr_next(): per thread, by EXIT time, so a call comes
 * after all of its callees), it finds each call's children and its local
 * (self) time, exact: duration minus the children's durations.
 *
 * Per thread it keeps the calls whose parent has not come yet.  A call's
 * children are the pending calls of its thread that are deeper and
 * entered at or after it; calls whose parents were not recorded (a
 * filter dropped them) become children of their nearest recorded
 * ancestor.  Memory is bounded: pending runs longer than 4096 calls are
 * merged (siblings of the same depth first, which is exact when the
 * parents are recorded), so a thread costs at most a few hundred kB
 * however long the trace.
 *
 * Return: the builder, or NULL (ENOMEM).
 */
struct ktr_ctree *ktr_ctree_new(void);

/**
 * ktr_ctree_add() - add call @c (with the caller's @key for it, e.g. its
 * function) and return its local time in ns (duration minus children,
 * never negative).  @fn (may be NULL) is called for the call's children
 * before this returns.  On allocation failure the call is treated as a
 * leaf (its local time is its duration).
 */
uint64_t ktr_ctree_add(struct ktr_ctree *ct, const struct ktr_call *c, uintptr_t key,
		       ktr_child_fn fn, void *arg);

/** ktr_ctree_threads() - threads seen so far. */
size_t ktr_ctree_threads(const struct ktr_ctree *ct);

/** ktr_ctree_free() - free @ct (NULL allowed). */
void ktr_ctree_free(struct ktr_ctree *ct);

struct ktr_outer;

/**
 * ktr_outer_new() - a builder of "total time counted once" per function
 * (reader/outer.c): fed the calls of a trace in record order, as
 * ktr_ctree_add(), it tells how much each call adds to its function's
 * total so that the total is the sum over the function's outermost
 * active calls.  Recursive calls (fib calling fib, or f -> g -> f) are
 * then not counted twice, and a function's total never exceeds its
 * caller's or its thread's (uftrace's report counts the same way).
 * Memory: O(depth) per (thread, function) seen (ktr_outer_items()),
 * whatever the trace's length.
 * Return: the builder, or NULL (ENOMEM).
 */
struct ktr_outer *ktr_outer_new(void);

/**
 * ktr_outer_items() - the calls @o holds now (merged groups of calls not
 * yet known to be nested in another call of their function), over all
 * threads and functions: at most one per depth of each (thread, function).
 */
size_t ktr_outer_items(const struct ktr_outer *o);

/**
 * ktr_outer_add() - add call @c of the function named by @key.
 * Return: what @c adds to its function's total, in ns: its duration minus
 * the durations of the outermost calls of the same @key nested in it
 * (already added when they came); never negative.  On allocation failure
 * the call counts in full.
 */
uint64_t ktr_outer_add(struct ktr_outer *o, const struct ktr_call *c, uint64_t key);

/**
 * ktr_outer_prefetch() - ask the CPU to fetch what a later
 * ktr_outer_add(@o, @c, @key) will read (the (thread, function) list),
 * when @c's thread is the one of the last call added.  A hint: it changes
 * nothing, and costs a hash.  kd calls it a few calls ahead, so the
 * random access to per-function state overlaps the work on earlier calls.
 */
void ktr_outer_prefetch(const struct ktr_outer *o, const struct ktr_call *c, uint64_t key);

/** ktr_outer_free() - free @o (NULL allowed). */
void ktr_outer_free(struct ktr_outer *o);

/**
 * struct ktr_callent - a call as kept for sorting (40 bytes).
 * @entry_ns, @dur_ns, @local_ns: times in ns (local: ktr_ctree_add()).
 * @key:     struct ktr_call's key (or whatever the tool names calls by).
 * @thread:  the call's thread, an ordinal from ktr_callsort_thread().
 * @depth, @sig, @flags: as struct ktr_call (depth saturated at 65535).
 *           Tools may mark entries that are not calls with
 *           KTR_CALLENT_GAP in @flags (a gap at @entry_ns; @key and
 *           @local_ns are then theirs to use).
 * @cpu:     the CPU, or 0xffffffff.
 */
struct ktr_callent {
	uint64_t entry_ns, dur_ns, local_ns;
	uint32_t key, thread;
	uint16_t depth;
	uint8_t sig, flags;
	uint32_t cpu;
};

#define KTR_CALLENT_GAP 0x80u

struct ktr_callsort;

/* Orders for ktr_callsort_new(). */
#define KTR_SORT_ENTRY 0  /* by entry time, then depth (callers first), thread */
#define KTR_SORT_THREAD 1 /* by process id and thread id, then entry time, then depth */

/**
 * ktr_callsort_new() - an external sort of struct ktr_callent: calls are
 * added in any order and come back in @order.  At most @mem bytes of
 * entries are kept in memory (0: 64 MiB); beyond that sorted runs are
 * written to unlinked temporary files (mode 0600) in $TMPDIR or /tmp and
 * merged, so any number of calls is sorted in bounded memory.
 * Return: the sorter, or NULL (ENOMEM).
 */
struct ktr_callsort *ktr_callsort_new(size_t mem, int order);

/** ktr_callsort_add() - add @e.  Return: 0, or -errno (temporary file: ENOSPC, ...). */
int ktr_callsort_add(struct ktr_callsort *s, const struct ktr_callent *e);

/**
 * ktr_callsort_next() - the next entry in order (the first call ends the
 * adding).  Return: 1 with *@e filled, 0 at the end, -errno on a read
 * error of a temporary file.
 */
int ktr_callsort_next(struct ktr_callsort *s, struct ktr_callent *e);

/**
 * ktr_callsort_thread() - the ordinal of thread (@pid, @tid) for
 * ktr_callent.thread: 0, 1, 2, ... in order of first appearance (0 also
 * when out of memory).
 */
uint32_t ktr_callsort_thread(struct ktr_callsort *s, uint32_t pid, uint32_t tid);

/**
 * ktr_callsort_add_call() - add call @c as an entry: its times, depth
 * (at most 65535), signal depth, flags, CPU (0xffffffff unknown) and its
 * thread's ordinal, with @key and @local_ns (the caller's: a call key, a
 * function index, a self time).  Return: as ktr_callsort_add().
 */
int ktr_callsort_add_call(struct ktr_callsort *s, const struct ktr_call *c, uint32_t key,
			  uint64_t local_ns);

/**
 * struct ktr_exits - the calls entered but not yet left, while sorted
 * calls (KTR_SORT_ENTRY) are turned into entry and exit events in time
 * order (Perfetto slices, CTF func_entry/func_exit): a min-heap on exit
 * time (entry_ns + dur_ns), the deeper call first at the same time, so
 * exits nest.  Zero it to start; ktr_exits_free() at the end.
 */
struct ktr_exits {
	struct ktr_callent *v;
	size_t n, cap;
};

/** ktr_exits_push() - add the call @e.  Return: 0, -ENOMEM. */
int ktr_exits_push(struct ktr_exits *h, const struct ktr_callent *e);
/** ktr_exits_top() - the call whose exit comes first, or NULL if none is open. */
const struct ktr_callent *ktr_exits_top(const struct ktr_exits *h);
/** ktr_exits_pop() - remove the top call (there must be one). */
void ktr_exits_pop(struct ktr_exits *h);
/** ktr_exits_free() - free the heap's memory; @h is empty after. */
void ktr_exits_free(struct ktr_exits *h);

/** ktr_callsort_thread_ids() - the ids behind ordinal @ord.  Return: 1, or 0 if unknown. */
int ktr_callsort_thread_ids(const struct ktr_callsort *s, uint32_t ord, uint32_t *pid,
			    uint32_t *tid);

/**
 * ktr_preorder_new() - the calls of @t in @s's order (KTR_SORT_THREAD:
 * threads by process and thread id, each thread's calls by entry time,
 * then depth, then record order; KTR_SORT_ENTRY: all threads' calls by
 * entry time, then depth, then thread), streamed window by window instead
 * of sorted whole (reader/preorder.c): a caller's record comes after its
 * callees', but the compressed frames' depth_min index finds where each
 * call open at a sub-buffer's start returns, so each sub-buffer's calls
 * are ordered alone, in memory.  @s must be an empty sorter: the threads
 * with calls are numbered in it at once (ktr_callsort_thread()), and with
 * KTR_SORT_THREAD each window is sorted there (ktr_callsort_reset());
 * with KTR_SORT_ENTRY each thread's windows are sorted in a small sorter
 * of its own (4 MiB) and the threads merged.
 * @want_task (NULL: all) leaves out threads; @key (NULL: the call-site
 * key) gives each entry's key; @arg is passed to both.
 * Return: the stream, or NULL with errno ENOTSUP when @t is not a trace
 * where this is exact (it needs compressed thread streams, no lost,
 * dropped, overwritten or corrupt data, no kernel events, no calls in the
 * shared stream, no ucontext switches: sort instead), or ENOMEM.
 */
struct ktr_preorder;
struct ktr_preorder *ktr_preorder_new(struct ktr_trace *t, struct ktr_callsort *s,
				      int (*want_task)(void *arg, uint32_t pid, uint32_t tid),
				      uint32_t (*key)(void *arg, const struct ktr_call *c), void *arg);

/**
 * ktr_preorder_next() - the next call (entries with local_ns 0).
 * Return: 1, 0 at the end, or -errno: -ENOMEM, -EPROTO if the calls
 * turned out not to nest as one stack (a record that began before a
 * window was not open at its start: the output so far is right, the rest
 * would not be).  Not thread-safe.
 */
int ktr_preorder_next(struct ktr_preorder *p, struct ktr_callent *e);

/** ktr_preorder_free() - free @p (NULL allowed); the sorter stays. */
void ktr_preorder_free(struct ktr_preorder *p);

/** ktr_callsort_order() - @s's order (KTR_SORT_*). */
int ktr_callsort_order(const struct ktr_callsort *s);

/**
 * ktr_callsort_reset() - empty @s for a new batch of entries (its
 * temporary file goes; its thread ordinals stay).  Streamed entry order
 * (ktr_preorder_next()) sorts each window of calls this way.
 */
void ktr_callsort_reset(struct ktr_callsort *s);

/** ktr_callsort_runs() - temporary runs written so far (0: all in memory). */
size_t ktr_callsort_runs(const struct ktr_callsort *s);

/** ktr_callsort_free() - free @s and its temporary files (NULL allowed). */
void ktr_callsort_free(struct ktr_callsort *s);

#ifdef __cplusplus
}
#endif

#endif /* KTRACE_READER_H */

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
};

/* Stream kinds as the reader knows them (KTRACE_STREAM_*, 0 = unknown). */

/**
 * struct ktr_info - what the metadata (and control file) say about a trace.
 * Strings are "" when absent, numbers 0.  Owned by the trace.
 * @version:     the `ktrace-format` version found (0 if no metadata).
 * @clock_tsc:   1 if raw times are TSC ticks, 0 if CLOCK_MONOTONIC ns.
 * @flight:      1 for flight-recorder mode (`mode flight` or control flag).
 * @scope:       "thread", "global", "cpu" or "".
 * @packed:      1 for `layout packed` stream files.
 * @buf_size:    sub-buffer size in bytes (from metadata, control, or
 *               guessed from the stream files).
 * @buf_nr:      sub-buffers per stream (fixed layout).
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
 * @args:     up to 4 argument names (NULL past @nargs).
 */
struct ktr_event {
	unsigned id;
	unsigned cls;
	const char *name;
	const char *category;
	const char *args[4];
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
 * ktr_next() - the next record or gap of the whole trace, all streams
 * merged by timestamp (ties: lower stream first).  Each stream's records
 * are in time order (writers guarantee it), so the output is too.
 * Return: 1 with *@r filled, 0 at the end.
 */
int ktr_next(struct ktr_trace *t, struct ktr_rec *r);

/** ktr_rewind() - start ktr_next() and every ktr_stream_next() over. */
void ktr_rewind(struct ktr_trace *t);

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
 * NAME:entry, NAME:exit or NAME:N; else F<func>:E<event>; "class N id M"
 * for classes without names; for gaps "[lost]", "[overwritten]",
 * "[dropped]", "[corrupt]".  Return: @buf.
 */
const char *ktr_rec_name(const struct ktr_trace *t, const struct ktr_rec *r, char *buf,
			 size_t len);

/** ktr_rec_category() - the catalogue category of @r ("ktrace" for gaps). */
const char *ktr_rec_category(const struct ktr_trace *t, const struct ktr_rec *r);

/**
 * ktr_rec_args() - the arguments of record @r by name.
 * @names: receives up to KTRACE_MAX_WORDS argument names (catalogue names,
 *         else "a".."d" for LOG2/LOG4, "w0".."w14" for other classes).
 * @vals:  their values (LOG4: the u32 values).
 * Return: the number of arguments (0 for gaps).
 */
unsigned ktr_rec_args(const struct ktr_trace *t, const struct ktr_rec *r, const char **names,
		      uint64_t *vals);

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

#ifdef __cplusplus
}
#endif

#endif /* KTRACE_READER_H */

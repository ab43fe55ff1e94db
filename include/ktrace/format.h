/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * ktrace/format.h - the on-disk trace format, version 1.
 *
 * This header is the single definition of what ktrace writes and reads.  It
 * is freestanding C (fixed-width integers only, no libc, no floating point)
 * so that the user-space runtime, the kernel module (kmod/) and the reader
 * all compile the same definitions.  docs/FORMAT.md is the prose version;
 * keep both in step and bump KTRACE_FORMAT_VERSION on any incompatible
 * change.
 *
 * A trace is a directory:
 *
 *   metadata        text, "key value..." lines: version, clock, host,
 *                   event catalogue, streams, maps (docs/FORMAT.md)
 *   control         binary, struct ktrace_control followed by the stream
 *                   table and the event enable map; mapped MAP_SHARED by the
 *                   writer, so `ktrace ctl` can start/stop it with no syscall
 *                   on the writer's side
 *   state, dropped  text mirrors of the control page, rewritten whenever the
 *                   state changes through the library or `ktrace ctl`
 *   threads         text, one "tid pid comm" line per thread that wrote
 *   trace0..traceN  the streams: buf_nr sub-buffers of buf_size bytes each
 *                   (`ktrace read` copies them to cpu0..cpuN, as klog did)
 *
 * A stream is a ring of sub-buffers.  Each sub-buffer starts with a
 * struct ktrace_subbuf (64 bytes) followed by `used` bytes of records.
 * Records are 8-byte aligned and start with one 64-bit header word
 * (KTRACE_REC_* accessors below), optionally followed by one context word
 * (sub-buffers flagged KTRACE_SBF_CTX, i.e. streams shared by several
 * threads), followed by `words` 64-bit payload words.
 *
 * All integers are little-endian (the format is only written on
 * little-endian machines; a reader on a big-endian host must swap).
 *
 * Timestamps.  A record stores the low 40 bits of the raw clock (the TSC in
 * user space, nanoseconds of the kernel's monotonic clock in the module).
 * The full value is the one congruent to those 40 bits that is nearest to
 * the sub-buffer's first_ts (a signed 40-bit difference).  Writers guarantee
 * every record of a sub-buffer lies within KTRACE_TS_WINDOW of first_ts by
 * opening a new sub-buffer when the window would be exceeded.  Each
 * sub-buffer header also holds a (raw, CLOCK_MONOTONIC ns) pair taken when
 * it was opened: those pairs, plus the ones in metadata, calibrate raw
 * values into CLOCK_MONOTONIC nanoseconds (docs/FORMAT.md, "Clock").
 *
 * Mirrors: the record layout learns from ftrace's ring buffer (small header
 * word, time delta), uftrace (compact 16-byte records) and klog's
 * "IBBBxQQ" record (seed 000); the sub-buffer/stream organisation follows
 * relay (seed 003).
 */
#ifndef KTRACE_FORMAT_H
#define KTRACE_FORMAT_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef u8 kt_u8;
typedef u16 kt_u16;
typedef u32 kt_u32;
typedef u64 kt_u64;
#else
#include <stdint.h>
typedef uint8_t kt_u8;
typedef uint16_t kt_u16;
typedef uint32_t kt_u32;
typedef uint64_t kt_u64;
#endif

/*
 * KTRACE_STATIC_ASSERT(cond, msg) - a compile-time check that C (C11's
 * _Static_assert, also in the kernel) and C++ (static_assert) both accept,
 * so the public headers compile in C++ programs too.
 */
#ifdef __cplusplus
#define KTRACE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define KTRACE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* Version of the whole format (metadata, control, streams, records). */
#define KTRACE_FORMAT_VERSION 1

/* ------------------------------------------------------------------ */
/* Sub-buffer header                                                   */
/* ------------------------------------------------------------------ */

#define KTRACE_SUBBUF_MAGIC 0x4253544bu /* "KTSB" little-endian */
#define KTRACE_SUBBUF_HDR_SIZE 64u

/* Sub-buffer flags. */
#define KTRACE_SBF_CTX 0x0001u    /* every record carries a context word */
#define KTRACE_SBF_CLOSED 0x0002u /* writer moved on: `used` is final */
/*
 * KTRACE_SBF_ORDERED: the records' stamps are in order and none is below
 * first_ts (shared streams since the stamp is taken inside the
 * reservation, lib/runtime.h): a record stamped before first_ts is left
 * over from an earlier lap of the ring (a writer died before writing its
 * header), not data.
 */
#define KTRACE_SBF_ORDERED 0x0004u

/*
 * struct ktrace_subbuf - the header at the start of every sub-buffer.
 *
 * @magic:     KTRACE_SUBBUF_MAGIC; anything else means the sub-buffer was
 *             never written (all zero) or is corrupt.
 * @hdr_size:  bytes from the start of this header to the first record (64
 *             in version 1; readers must honour larger values).
 * @flags:     KTRACE_SBF_*.
 * @seq:       sequence number of this sub-buffer in its stream, from 0.  It
 *             sits in ring slot seq % buf_nr.  Missing numbers are
 *             sub-buffers overwritten in flight-recorder mode.
 * @first_ts:  raw clock when the sub-buffer was opened; the reference for
 *             the 40-bit record timestamps.
 * @first_ns:  CLOCK_MONOTONIC in ns read together with @first_ts (a
 *             calibration pair), 0 if the writer could not read it.
 * @last_ts:   raw clock of the last committed record (0 if none).
 * @used:      bytes of committed records after the header.  Single-writer
 *             streams update it after each record (the commit); shared
 *             streams set it when the sub-buffer is closed, and the open one
 *             is bounded by the stream's head in the control file.
 * @lost:      records that could not be written after this sub-buffer's
 *             last record (buffer full, nesting too deep): the gap follows
 *             this sub-buffer's records.
 * @nrec:      records committed in this sub-buffer, not counting
 *             KTRACE_CLASS_INTERNAL ones (0 in shared streams: count them).
 * @tid:       the writing thread (0 for shared streams, whose records carry
 *             a context word instead).
 * @commit:    shared streams only: bytes committed to this ring slot over all
 *             laps, modulo 2^32, padding included (see lib/stream_shared.c).
 * @cpu:       CPU of a per-CPU stream, or the CPU the writer ran on when it
 *             opened the sub-buffer (0xffff if unknown).
 * @stream:    index of the stream (N of traceN).
 */
struct ktrace_subbuf {
	kt_u32 magic;
	kt_u16 hdr_size;
	kt_u16 flags;
	kt_u64 seq;
	kt_u64 first_ts;
	kt_u64 first_ns;
	kt_u64 last_ts;
	kt_u32 used;
	kt_u32 lost;
	kt_u32 nrec;
	kt_u32 tid;
	kt_u32 commit;
	kt_u16 cpu;
	kt_u16 stream;
};

KTRACE_STATIC_ASSERT(sizeof(struct ktrace_subbuf) == KTRACE_SUBBUF_HDR_SIZE,
	       "sub-buffer header is 64 bytes");

/* ------------------------------------------------------------------ */
/* Compressed frames (slots layout, `ktrace record --compress=zstd`)    */
/* ------------------------------------------------------------------ */

/*
 * A stream file of the slots layout is a sequence of units, each starting
 * at a multiple of 4096 bytes: a slot (a sub-buffer of buf-size bytes,
 * magic KTRACE_SUBBUF_MAGIC) or a frame (magic KTRACE_ZFRAME_MAGIC) that
 * holds 1..KTRACE_ZFRAME_MAX sub-buffers compressed.  A frame is
 *
 *   struct ktrace_zframe                      64 bytes
 *   struct ktrace_zentry [nsub]               96 bytes each
 *   the entries' data, each at its zoff       zlen bytes each
 *   zero padding to `len` (a multiple of 4096, so frames can be written
 *   with O_DIRECT)
 *
 * Each sub-buffer is compressed on its own (a zstd frame with its content
 * checksum), so a reader decompresses one sub-buffer at a time into a
 * buffer of buf-size bytes, and a corrupt one costs only itself.  The
 * sub-buffer headers are stored whole and uncompressed in the entries: a
 * reader indexes a file (sequence numbers, calibration pairs, losses)
 * without decompressing anything.  Written by consumer/consumer.c, read by
 * reader/stream.c; the codec is reader/zframe.c.  Not a seed's: relay's
 * sub-buffers, compressed the way LTTng and perf do not (they write raw).
 */
#define KTRACE_ZFRAME_MAGIC 0x465a544bu /* "KTZF" little-endian */
#define KTRACE_ZFRAME_HDR_SIZE 64u
#define KTRACE_ZENTRY_SIZE 96u
#define KTRACE_ZFRAME_ALIGN 4096u
#define KTRACE_ZFRAME_MAX 64u

/* Entry codecs and transforms. */
#define KTRACE_ZCODEC_STORED 0u  /* the records as they were, zlen == used */
#define KTRACE_ZCODEC_ZSTD 1u    /* one zstd frame (RFC 8878) of the (transformed) records */
/*
 * KTRACE_ZXFORM_SPLIT: before compression the records were split into
 * columns (similar words next to each other compress 2.5 times better):
 * first the `nhdr` header words in order, each with its 40 timestamp bits
 * replaced by the difference to the previous header's (mod 2^40; the first
 * to 0), then the low 32-bit halves of every other word (context and
 * payload words, in record order), then their high halves.  Applied only
 * to sub-buffers whose records parse to exactly `used` bytes.
 */
#define KTRACE_ZXFORM_NONE 0u
#define KTRACE_ZXFORM_SPLIT 1u

/**
 * struct ktrace_zframe - the header of a compressed frame.
 * @magic:    KTRACE_ZFRAME_MAGIC.
 * @hdr_size: bytes of this header (64): the entries follow.
 * @entry_size: bytes per entry (96; readers honour larger values).
 * @nsub:     sub-buffers in the frame, 1..KTRACE_ZFRAME_MAX.
 * @version:  1.
 * @len:      bytes of the whole frame in the file, padding included: a
 *            multiple of KTRACE_ZFRAME_ALIGN; the next unit starts there.
 * @raw:      bytes the sub-buffers had uncompressed (sum of 64 + used).
 */
struct ktrace_zframe {
	kt_u32 magic;
	kt_u16 hdr_size;
	kt_u16 entry_size;
	kt_u32 nsub;
	kt_u32 version;
	kt_u64 len;
	kt_u64 raw;
	kt_u64 reserved[4];
};

/**
 * struct ktrace_zentry - one sub-buffer of a frame.
 * @hdr:     its sub-buffer header, as a slot would hold it (CLOSED, `used`
 *           final; hdr_size 64).
 * @zoff:    offset of its data from the frame's start.
 * @zlen:    bytes of its data (0 when used is 0).
 * @nhdr:    KTRACE_ZXFORM_SPLIT: records (header words) in it, internal
 *           ones included; 0 otherwise.
 * @records: its records, internal ones not counted (what `nrec` counts in
 *           a thread stream, also for shared streams): recovery and the
 *           consumer's accounting read it without decompressing.
 * @codec:   KTRACE_ZCODEC_*.
 * @xform:   KTRACE_ZXFORM_*.
 * @depth_min: 1 + the smallest depth of its CALL records (thread and
 *           per-CPU streams: without context words), saturated at 65535;
 *           0 when it has none, or they were not parsed (not split, or a
 *           writer before this field): an index that lets a reader find
 *           where a call open at some point returns without reading the
 *           sub-buffers between (a call at depth d returns before any
 *           later call at a depth at most d).
 */
struct ktrace_zentry {
	struct ktrace_subbuf hdr;
	kt_u32 zoff;
	kt_u32 zlen;
	kt_u32 nhdr;
	kt_u32 records;
	kt_u16 codec;
	kt_u16 xform;
	kt_u16 depth_min;
	kt_u16 pad;
	kt_u32 reserved[2];
};

KTRACE_STATIC_ASSERT(sizeof(struct ktrace_zframe) == KTRACE_ZFRAME_HDR_SIZE,
	       "frame header is 64 bytes");
KTRACE_STATIC_ASSERT(sizeof(struct ktrace_zentry) == KTRACE_ZENTRY_SIZE,
	       "frame entry is 96 bytes");

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/*
 * Record header word (64 bits):
 *
 *   bits  0..39  ts     low 40 bits of the raw clock
 *   bits 40..43  words  payload length in 64-bit words (0..15)
 *   bits 44..47  class  KTRACE_CLASS_*; 0 is never written, so an all-zero
 *                       word marks unwritten space
 *   bits 48..63  id     meaning depends on the class
 *
 * A record is 8 bytes (header) + 8 (context word, if the sub-buffer has
 * KTRACE_SBF_CTX) + 8 * words bytes.  A reader skips classes it does not
 * know by their length.
 */
#define KTRACE_TS_BITS 40
#define KTRACE_TS_MASK ((((kt_u64)1) << KTRACE_TS_BITS) - 1)
/* Writers keep every record within this distance of first_ts. */
#define KTRACE_TS_WINDOW (((kt_u64)1) << 38)
#define KTRACE_MAX_WORDS 15u

#define KTRACE_REC_HDR(ts, cls, words, id)                           \
	(((kt_u64)(ts) & KTRACE_TS_MASK) | ((kt_u64)(words) << 40) | \
	 ((kt_u64)(cls) << 44) | ((kt_u64)(id) << 48))
/*
 * A record reserved in a shared stream but not (yet) written: class
 * INVALID, its length in `words`, id KTRACE_RESERVED_ID and the writer's
 * thread id in the stamp bits.  A writer stores it first, right after its
 * reservation, and replaces it by the real header last; one left in a
 * trace is a record torn by the death of its writer: readers skip it by
 * its length (and count it), and a flight-mode writer that needs the
 * sub-buffer back checks whether that thread still lives.
 */
#define KTRACE_RESERVED_ID 0xffffu
#define KTRACE_REC_RESERVED(words, tid) \
	((((kt_u64)(tid)) & KTRACE_TS_MASK) | ((kt_u64)(words) << 40) | ((kt_u64)KTRACE_RESERVED_ID << 48))
#define KTRACE_REC_IS_RESERVED(h) \
	(((h) >> 44 & 0xf) == 0 && ((h) >> 48) == KTRACE_RESERVED_ID)
#define KTRACE_REC_TS(h) ((h) & KTRACE_TS_MASK)
#define KTRACE_REC_WORDS(h) ((unsigned)(((h) >> 40) & 0xf))
#define KTRACE_REC_CLASS(h) ((unsigned)(((h) >> 44) & 0xf))
#define KTRACE_REC_ID(h) ((unsigned)((h) >> 48))

/*
 * Record classes.
 *
 * LOG2:     a static event from ktrace_log2(): id = (func << 8) | event,
 *           payload u64 a, u64 b (words = 2).  24 bytes per event.
 * LOG4:     ktrace_log4(): same id, payload u32 a, b, c, d (words = 2).
 * INTERNAL: bookkeeping written by the runtime, id = KTRACE_INT_*.
 * CALL:     a completed function call (KFT, docs/FORMAT.md).
 * KEVENT:   a kernel state event (LKST catalogue), id = event type.
 */
enum ktrace_class {
	KTRACE_CLASS_INVALID = 0,
	KTRACE_CLASS_LOG2 = 1,
	KTRACE_CLASS_LOG4 = 2,
	KTRACE_CLASS_INTERNAL = 3,
	KTRACE_CLASS_CALL = 4,
	KTRACE_CLASS_KEVENT = 5,
};

/*
 * Internal record ids (class KTRACE_CLASS_INTERNAL).
 *
 * CPU:  the writer now runs on another CPU; payload word 0 = cpu (bits
 *       0..31) | tid (bits 32..63).  Written by per-thread streams only,
 *       when the CPU changed since the previous record.
 */
enum ktrace_internal_id {
	KTRACE_INT_CPU = 1,
};

/*
 * Context word of records in KTRACE_SBF_CTX sub-buffers (shared streams):
 *   bits  0..31 tid, bits 32..47 cpu, bits 48..55 signal nesting depth
 *   (0 = thread context), bits 56..63 reserved (0).
 */
#define KTRACE_CTX(tid, cpu, depth)                              \
	((kt_u64)(kt_u32)(tid) | ((kt_u64)((cpu) & 0xffff) << 32) | \
	 ((kt_u64)((depth) & 0xff) << 48))
#define KTRACE_CTX_TID(c) ((kt_u32)(c))
#define KTRACE_CTX_CPU(c) ((unsigned)(((c) >> 32) & 0xffff))
#define KTRACE_CTX_DEPTH(c) ((unsigned)(((c) >> 48) & 0xff))

/* Static event ids: klog's function id and event code in one 16-bit id. */
#define KTRACE_EVENT_ID(func, event) ((kt_u16)(((func) << 8) | ((event) & 0xff)))
#define KTRACE_EVENT_FUNC(id) ((unsigned)((id) >> 8))
#define KTRACE_EVENT_CODE(id) ((unsigned)((id) & 0xff))

/* ------------------------------------------------------------------ */
/* Control file                                                        */
/* ------------------------------------------------------------------ */

#define KTRACE_CONTROL_MAGIC 0x4c43544bu /* "KTCL" */

enum ktrace_state {
	KTRACE_STATE_STOPPED = 0,
	KTRACE_STATE_RUNNING = 1,
};

/* Channel flags, as in seed 003's trace_setup(); also in the control page. */
#define KTRACE_GLOBAL_CHANNEL 0x01u /* one stream shared by every writer */
#define KTRACE_FLIGHT_CHANNEL 0x02u /* overwrite the oldest sub-buffer */
#define KTRACE_DISABLE_STATE 0x04u  /* `ktrace ctl` may not start/stop */
/*
 * KTRACE_CTL_UCONTEXT: set in the control file by the function tracer
 * when a thread of the channel switched ucontexts (swapcontext(),
 * setcontext()): its calls then do not all nest on one stack, and readers
 * that rely on the nesting (streamed entry order) sort instead.
 */
#define KTRACE_CTL_UCONTEXT 0x08u

/* Stream kinds in the stream table. */
enum ktrace_stream_kind {
	KTRACE_STREAM_THREAD = 1, /* one writer thread at a time (a slot) */
	KTRACE_STREAM_SHARED = 2, /* any thread, reserve by compare-and-swap */
	KTRACE_STREAM_CPU = 3,    /* per-CPU (kernel module) */
};

/*
 * struct ktrace_stream_ctl - one entry of the stream table in the control
 * file (64 bytes).
 *
 * @head:        next write position: (seq << log2(buf_size)) | offset.  For
 *               thread streams it is updated at sub-buffer switches only.
 * @dropped:     records this stream could not store (discard mode full,
 *               nesting overflow).
 * @overwritten: records lost to flight-recorder overwrite.
 * @owner:       tid currently owning a thread slot (0 = free).
 * @pid:         process of @owner.
 * @kind:        enum ktrace_stream_kind.
 * @written:     records committed (updated at sub-buffer switch and at
 *               stop, so it can lag by one sub-buffer while running).
 * @ring:        streamed channels only (under `ktrace record`): byte offset
 *               of the stream's ring of buf_nr sub-buffers in the session
 *               file (lib/session.h), 0 = not allocated yet (no thread has
 *               claimed the stream).  0 in a trace whose streams are the
 *               traceN files themselves.
 * @consumed:    streamed channels only: sequence number of the next
 *               sub-buffer the consumer will copy to the trace directory;
 *               a writer may reuse the ring slot of sub-buffer s only when
 *               s < consumed + buf_nr (flight mode: never waits for it).
 */
struct ktrace_stream_ctl {
	kt_u64 head;
	kt_u64 dropped;
	kt_u64 overwritten;
	kt_u32 owner;
	kt_u32 pid;
	kt_u32 kind;
	kt_u32 pad0;
	kt_u64 written;
	kt_u64 ring;
	kt_u64 consumed;
};

KTRACE_STATIC_ASSERT(sizeof(struct ktrace_stream_ctl) == 64, "stream entry is 64 bytes");

#define KTRACE_WRITER_PIDS 64u

/*
 * struct ktrace_control - page 0 of the control file.
 *
 * Layout of the file: this header, then @nstreams struct ktrace_stream_ctl
 * at @streams_off, then the event enable map (65536 bytes, one per 16-bit
 * event id, nonzero = enabled) at @enable_off.  Offsets are in bytes from
 * the start of the file.
 *
 * @state is the only field written while tracing runs by someone other
 * than the writers: `ktrace ctl` and ktrace_start()/ktrace_stop() store it
 * with release semantics; writers load it relaxed (a stale value delays
 * start/stop by a few records, never corrupts anything).
 *
 * The shared stream's stall: in flight mode a writer reuses a sub-buffer
 * only when every record of its previous lap was committed.  When one was
 * not, @stall_seq names the sub-buffer waited for, @stall_ns (CLOCK_
 * MONOTONIC) when the wait began, @stall_check when a writer last looked
 * whether the records' writers still live; @reclaimed counts sub-buffers
 * taken back from dead writers (lib/stream_shared.c).  The writers table
 * (KTRACE_WRITERS_OFF) lists the processes that wrote to the shared
 * stream (0 = free entry; the first free one is claimed by
 * compare-and-swap): a sub-buffer holding a torn record whose writer
 * cannot be named is taken back only once one of them has died.
 */
struct ktrace_control {
	kt_u32 magic;
	kt_u16 version;
	kt_u16 hdr_size;
	kt_u32 state;
	kt_u32 flags;
	kt_u32 buf_size;
	kt_u32 buf_nr;
	kt_u32 nstreams;
	kt_u32 streams_off;
	kt_u32 enable_off;
	kt_u32 owner_pid;
	kt_u64 start_ns; /* CLOCK_MONOTONIC of the last start, 0 if never */
	kt_u64 stop_ns;  /* CLOCK_MONOTONIC of the last stop, 0 if never */
	kt_u64 stall_seq, stall_ns, stall_check, reclaimed;
	kt_u64 reserved[4];
};

/*
 * The shared stream's writers table: KTRACE_WRITER_PIDS u32 at byte
 * KTRACE_WRITERS_OFF of the control file, in page 0 after struct
 * ktrace_control (the runtime puts the stream table at 4096).
 */
#define KTRACE_WRITERS_OFF 1024u

#define KTRACE_ENABLE_MAP_SIZE 65536u

/* ================================================================== */
/* KFT function call records (class KTRACE_CLASS_CALL)                 */
/* Added by the function tracer; prose in docs/FORMAT.md, "Function    */
/* call records".  Nothing above this block depends on it.             */
/* ================================================================== */

/*
 * A CALL record describes one completed function call and is written when
 * the call returns, so the header's 40-bit ts is the EXIT time (streams stay
 * sorted by header time).  The entry time is ts - duration.
 *
 *   header id (16 bits)  call-site index, bits 0..15
 *   word 0:
 *     bits  0..31  duration, raw clock units, bits 0..31
 *     bits 32..39  call-site index, bits 16..23
 *     bits 40..55  depth: shadow-stack depth of the call in its thread
 *                  (0 = outermost traced frame), saturated at 0xffff
 *     bits 56..59  signal-handler nesting (0 = thread context; KFT's
 *                  "interrupt context"), saturated at 15
 *     bits 60..63  KTRACE_CALLF_*
 *   word 1 (words >= 2): duration bits 32..63 (calls of 2^32 raw units or
 *                  more: 1.6 s of a 2.6 GHz TSC); 0 otherwise
 *   words 2, 3 (words >= 4, call-site index KTRACE_CALLSITE_NONE): the
 *                  function address and the call-site address, for calls
 *                  whose pair could not be entered in the call-site table
 *
 * So a call costs 16 bytes (words = 1), 24 with a long duration, 32 with
 * inline addresses; a shared-stream record adds its context word.  The
 * thread is the stream's (sub-buffer tid) or the context word's; the CPU
 * comes from KTRACE_INT_CPU records.
 *
 * The call-site index names a (function, call site) pair in the trace
 * directory's `callsites` file: a struct ktrace_callsites header, then
 * `capacity` struct ktrace_callsite entries, entry i at byte
 * hdr_size + i * entry_size.  Writers append with an atomic counter and
 * store `site` before `func`; an entry whose func is 0 is not (yet) valid.
 * The file is shared (MAP_SHARED) by the traced process and its forked
 * children, never overwritten, so indexes stay valid in flight-recorder
 * mode and after a crash.
 */
#define KTRACE_CALLF_UNFINISHED 0x1u /* exit never seen: duration = ts - entry */
#define KTRACE_CALLF_WATCH 0x2u      /* kept by a stack watch (KFT's -2 mark) */

#define KTRACE_CALLSITE_BITS 24
#define KTRACE_CALLSITE_NONE 0xffffffu /* addresses are in words 2 and 3 */
#define KTRACE_CALL_WORDS 1u            /* the common record: 16 bytes */
#define KTRACE_CALL_WORDS_LONG 2u       /* duration >= 2^32 raw units */
#define KTRACE_CALL_WORDS_ADDR 4u       /* with inline addresses */

#define KTRACE_CALL_ID(site) ((unsigned)((site) & 0xffff))
#define KTRACE_CALL_W0(dur, site, depth, sig, flags)                          \
	((kt_u64)(kt_u32)(dur) | ((kt_u64)(((site) >> 16) & 0xff) << 32) |    \
	 ((kt_u64)((depth) > 0xffff ? 0xffff : (depth)) << 40) |              \
	 ((kt_u64)((sig) > 15 ? 15 : (sig)) << 56) | ((kt_u64)((flags) & 0xf) << 60))
#define KTRACE_CALL_SITE(id, w0) ((kt_u32)(id) | ((kt_u32)(((w0) >> 32) & 0xff) << 16))
#define KTRACE_CALL_DUR_LO(w0) ((kt_u32)(w0))
#define KTRACE_CALL_DEPTH(w0) ((unsigned)(((w0) >> 40) & 0xffff))
#define KTRACE_CALL_SIG(w0) ((unsigned)(((w0) >> 56) & 0xf))
#define KTRACE_CALL_FLAGS(w0) ((unsigned)((w0) >> 60))

#define KTRACE_CALLSITES_MAGIC 0x5343544bu /* "KTCS" */
#define KTRACE_CALLSITES_VERSION 1u

/*
 * struct ktrace_callsites - header of the `callsites` file (64 bytes).
 * @magic:      KTRACE_CALLSITES_MAGIC.
 * @version:    KTRACE_CALLSITES_VERSION.
 * @hdr_size:   bytes before entry 0 (64).
 * @entry_size: bytes per entry (16; readers honour larger values).
 * @capacity:   entries the file has room for.
 * @count:      indexes handed out so far (may exceed capacity when full:
 *              indexes >= capacity were never written).
 */
struct ktrace_callsites {
	kt_u32 magic;
	kt_u16 version;
	kt_u16 hdr_size;
	kt_u32 entry_size;
	kt_u32 pad;
	kt_u64 capacity;
	kt_u64 count;
	kt_u64 reserved[4];
};

/* struct ktrace_callsite - one (function, call site) pair. */
struct ktrace_callsite {
	kt_u64 func; /* address of the called function (0 = entry not valid) */
	kt_u64 site; /* return address in the caller (gcc's call_site) */
};

KTRACE_STATIC_ASSERT(sizeof(struct ktrace_callsites) == 64, "callsites header is 64 bytes");
KTRACE_STATIC_ASSERT(sizeof(struct ktrace_callsite) == 16, "callsite entry is 16 bytes");

/* ================================================================== */
/* End of the KFT function call records block                          */
/* ================================================================== */

/* ================================================================== */
/* Crash region (ktrace.ko's crash_mem=, docs/FORMAT.md "Crash        */
/* region", docs/KMOD.md "Crash extraction").  Nothing above this     */
/* block depends on it.                                               */
/* ================================================================== */

/*
 * A crash region is memory the kernel does not use (reserved on its
 * command line, memmap=SIZE$ADDR) that survives a panic and a warm reboot.
 * ktrace.ko writes a copy of each flight channel's records there.  Layout
 * (offsets in bytes from the start of the region, all little-endian):
 *
 *   0          struct ktrace_crash_hdr (checked by @check)
 *   @chan_off  @nchan struct ktrace_crash_chan, @chan_size bytes apart
 *   per channel: the catalogue text at @cat_off (@cat_cap bytes), and
 *              @nrings rings at @ring_off, ring i at
 *              ring_off + i * subbuf_size * subbuf_nr; a ring is
 *              @subbuf_nr sub-buffers of @subbuf_size bytes.
 *
 * A ring's sub-buffer is a struct ktrace_subbuf with KTRACE_SBF_CHECKED
 * set, whose @commit is the low 32 bits of the header check (below), then
 * records back to back, each followed by one check word, then a zero word
 * (the end; what follows is left from earlier laps): the writer stores the
 * zero after a record's place before the record itself, and when it opens
 * a sub-buffer it clears the magic first, writes the header and a zero
 * first word, and the magic last.  Sub-buffer seq sits in slot
 * seq % subbuf_nr.  A record is valid when its check word equals
 * KTRACE_CRASH_REC_CHECK(seq, offset, words...); the first record that is
 * not valid ends its sub-buffer: it is torn (the writer was stopped by the
 * panic inside it), counted and never shown.  @used, @nrec and @last_ts of
 * such a header are informative only (check words included in @used).
 */
#define KTRACE_CRASH_MAGIC 0x314853415243544bull /* "KTCRASH1" */
#define KTRACE_CRASH_VERSION 1u
#define KTRACE_CRASH_HDR_SIZE 4096u  /* the header's page */
#define KTRACE_CRASH_CHAN_SIZE 256u
#define KTRACE_CRASH_MAX_CHAN 8u
#define KTRACE_CRASH_NOTE_MAX 64u
#define KTRACE_CRASH_PANIC_ENTRY 1u    /* panic_src: entry of panic() */
#define KTRACE_CRASH_PANIC_NOTIFIER 2u /* panic_src: the panic notifier */

/* Sub-buffer flag: every record is followed by a check word (crash rings). */
#define KTRACE_SBF_CHECKED 0x0008u

/*
 * The check function of the crash region: a 64-bit multiply-xorshift
 * fold.  KTRACE_CRASH_MIX(h, w) = ((h ^ w) * K) ^ (((h ^ w) * K) >> 31)
 * with K = 0x9e3779b97f4a7c15, starting from KTRACE_CRASH_SEED; a result
 * of 0 is stored as 1 (0 means "never written").
 *
 *   header check    fold of the words of struct ktrace_crash_hdr before
 *                   @check (seed ^ 1)
 *   panic check     fold of panic_ns, panic_cpu | panic_src << 32,
 *                   stop_ns (seed ^ 2)
 *   channel check   fold of the entry's words before @check (seed ^ 3)
 *   catalogue check fold of cat_len, then the text as little-endian
 *                   words, the last one zero-padded (seed ^ 4)
 *   note check      fold of the 64 note bytes as 8 words (seed ^ 5)
 *   sub-buffer      fold of magic | hdr_size << 32 | flags << 48 (with
 *                   KTRACE_SBF_CLOSED cleared), seq, first_ts, first_ns,
 *                   cpu | stream << 16 (seed ^ 6); low 32 bits in @commit
 *   record          fold of seq, offset of the record from the sub-buffer
 *                   start, then the record's words (header, context word,
 *                   payload) (seed ^ 7)
 */
#define KTRACE_CRASH_SEED 0x6b74726163652121ull /* "!!ecartk" */
#define KTRACE_CRASH_K 0x9e3779b97f4a7c15ull

static inline kt_u64 ktrace_crash_mix(kt_u64 h, kt_u64 w)
{
	h = (h ^ w) * KTRACE_CRASH_K;
	return h ^ (h >> 31);
}

static inline kt_u64 ktrace_crash_fold(kt_u64 h, const kt_u64 *w, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		h = ktrace_crash_mix(h, w[i]);
	return h;
}

static inline kt_u64 ktrace_crash_final(kt_u64 h)
{
	return h ? h : 1;
}

/*
 * struct ktrace_crash_hdr - the start of a crash region.
 * @magic:        KTRACE_CRASH_MAGIC.
 * @version:      KTRACE_CRASH_VERSION.
 * @hdr_size:     KTRACE_CRASH_HDR_SIZE.
 * @region_size:  bytes of the region.
 * @boot_id:      the kernel's /proc/sys/kernel/random/boot_id (16 bytes)
 *                of the boot that laid the region out (random bytes if it
 *                could not be read).
 * @created_ns:   CLOCK_MONOTONIC ns when the region was laid out.
 * @realtime_ns:  CLOCK_REALTIME ns of CLOCK_MONOTONIC 0 in that boot.
 * @nchan, @chan_off, @chan_size: the channel table.
 * @check:        header check of everything above.
 * @panic_ns:     CLOCK_MONOTONIC ns of the panic (0: no panic in that
 *                boot); @panic_cpu the panicking CPU; @panic_src where the
 *                stamp comes from: KTRACE_CRASH_PANIC_ENTRY (a kprobe on
 *                panic(): its start) or KTRACE_CRASH_PANIC_NOTIFIER (the
 *                panic notifier: after the panic's console output and the
 *                stop of the other CPUs); @stop_ns when the panic notifier
 *                ran (the other CPUs are stopped: no record is later), 0
 *                if it did not; @panic_check their check.
 * @note:         text a user stored (debugfs crash/note), NUL-padded;
 *                @note_check its check (0: no note).
 */
struct ktrace_crash_hdr {
	kt_u64 magic;
	kt_u32 version;
	kt_u32 hdr_size;
	kt_u64 region_size;
	kt_u8 boot_id[16];
	kt_u64 created_ns;
	kt_u64 realtime_ns;
	kt_u32 nchan;
	kt_u32 chan_off;
	kt_u32 chan_size;
	kt_u32 reserved0;
	kt_u64 reserved[4];
	kt_u64 check;
	/* mutable, each with its own check */
	kt_u64 panic_ns;
	kt_u32 panic_cpu;
	kt_u32 panic_src;
	kt_u64 stop_ns;
	kt_u64 panic_check;
	kt_u64 note_check;
	char note[KTRACE_CRASH_NOTE_MAX];
};

KTRACE_STATIC_ASSERT(sizeof(struct ktrace_crash_hdr) == 216, "crash header is 216 bytes");

/*
 * struct ktrace_crash_chan - one channel of a crash region (256 bytes).
 * @name:        the channel's name (debugfs directory), NUL-padded.
 * @flags:       its TRACE_* flags (KTRACE_GLOBAL_CHANNEL: one ring, records
 *               with a context word).
 * @nrings:      rings (one per possible CPU; 1 for a global channel).
 * @subbuf_size: bytes per sub-buffer (power of two, 4096..1 MiB).
 * @subbuf_nr:   sub-buffers per ring (>= 2).
 * @ring_off:    offset of ring 0.
 * @cat_off, @cat_cap: where the catalogue text goes and its room.
 * @check:       channel check of everything above.
 * @cat_len, @cat_check: bytes of catalogue text (the channel's `catalog`
 *               file when it last started) and their check.
 * @start_ns:    CLOCK_MONOTONIC of the channel's last start (0: never).
 */
struct ktrace_crash_chan {
	char name[64];
	kt_u32 flags;
	kt_u32 nrings;
	kt_u32 subbuf_size;
	kt_u32 subbuf_nr;
	kt_u64 ring_off;
	kt_u64 cat_off;
	kt_u64 cat_cap;
	kt_u64 reserved[5];
	kt_u64 check;
	kt_u64 cat_len;
	kt_u64 cat_check;
	kt_u64 start_ns;
	kt_u64 reserved2[10];
};

KTRACE_STATIC_ASSERT(sizeof(struct ktrace_crash_chan) == KTRACE_CRASH_CHAN_SIZE,
		     "crash channel entry is 256 bytes");

/* ================================================================== */
/* End of the crash region block                                       */
/* ================================================================== */

#endif /* KTRACE_FORMAT_H */

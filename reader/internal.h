/*
 * reader/internal.h - data structures shared by the reader's source files
 * (not part of the reader API; tools include reader/reader.h only).
 *
 * A struct ktr_trace holds the parsed metadata (info, catalogue, function
 * names, threads, calibration pairs), a snapshot of the control file's
 * stream table, and one struct ktr_stream per stream file.  A stream has an
 * index of its sub-buffers in sequence order (built at open time from the
 * headers alone) and a cursor that walks records one at a time, producing
 * records and gaps (stream.c).  merge.c keeps the streams' look-ahead
 * records in a binary heap.
 */
#ifndef KTRACE_READER_INTERNAL_H
#define KTRACE_READER_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/reader.h"

#define KTR_DIAG_MAX 256
/*
 * Bounds on what a metadata file may declare, checked before anything is
 * allocated (docs/FORMAT.md, "The metadata file"): stream indexes are
 * 0..65535 and each once, so at most 65536 `stream` and `seq-base` lines
 * count; at most KTR_MAX_MAPS `map` lines and as many `map-gen` lines
 * (a process has at most
 * vm.max_map_count mappings, 65530 by default, and each object about 4
 * PT_LOAD segments); the lines beyond are refused as errors.
 */
#ifndef KTR_MAX_STREAMS /* the fuzz targets build with small ones (fuzz/Makefile) */
#define KTR_MAX_STREAMS 65536
#endif
#ifndef KTR_MAX_MAPS
#define KTR_MAX_MAPS 65536
#endif
#define KTR_STR_(x) #x
#define KTR_STR(x) KTR_STR_(x) /* a number macro as a string literal */
/* Largest sub-buffer the reader accepts without a stated geometry (64 MiB,
 * ktrace.h's KTRACE_MAX_BUF_SIZE). */
#define KTRACE_MAX_BUF_SIZE_GUESS (64u * 1024u * 1024u)

/* A file of the trace: a read-only mapping or a caller's memory buffer. */
struct ktr_file {
	char *path;       /* "DIR/name", for messages */
	const uint8_t *p; /* contents, NULL if size 0 or missing */
	size_t size;
	int mapped;       /* 1: munmap() on close */
	int exists;
};

/* One sub-buffer of a stream, in the order the cursor visits them. */
struct ktr_sb {
	uint64_t seq;
	uint64_t off;   /* offset of the header in the records' view (s->d): the file's,
			 * or 0 for a framed sub-buffer (decompressed alone into s->zbuf) */
	uint64_t hoff;  /* framed: file offset of its struct ktrace_zentry (header first) */
	uint64_t zdata; /* framed: file offset of its data */
	int framed;     /* in a compressed frame (include/ktrace/format.h) */
	uint16_t depth_min; /* framed: its entry's depth_min (0: not known) */
	int corrupt;    /* header unusable: the cursor emits a CORRUPT gap */
	char *why;      /* for corrupt entries: what was wrong (owned) */
};

/* File offset of the sub-buffer header of index entry @e. */
static inline uint64_t ktr_sb_hdr(const struct ktr_sb *e)
{
	return e->framed ? e->hoff : e->off;
}

/* Cursor phases within one sub-buffer entry. */
enum {
	PH_GAP = 0,   /* maybe emit the seq gap before this sub-buffer */
	PH_START,     /* set up the record range (or emit CORRUPT) */
	PH_RECORDS,   /* emit records */
	PH_TAIL,      /* emit a pending CORRUPT gap (bad record, truncation) */
	PH_LOST,      /* emit the LOST gap after the records */
	PH_NEXT,      /* go to the next sub-buffer */
	PH_DROPPED,   /* after the last sub-buffer: the control file's dropped */
	PH_MISSING,   /* then records the consumer wrote that the file lacks (`stream-written`) */
	PH_END,
};

struct ktr_stream {
	struct ktr_stream_info info;
	unsigned index;
	int peek;        /* a ktr_peek's copy: reads sub-buffers its caller names */
	struct ktr_file f;
	struct ktr_sb *sb;
	size_t nsb;
	int packed;      /* packed or slots layout: sub-buffers in sequence order */
	uint64_t seq_base; /* first seq of the stream (`seq-base`; 0 if none): none missing before */
	int scan_tail;   /* the current sub-buffer's extent is not known: read to the first
			  * record not of its lap (shared stream without a control file) */
	uint64_t stride; /* slots layout: each sub-buffer takes buf_size bytes (else 0) */
	uint64_t room;   /* largest sub-buffer, header included */

	/* the records' view: the file's mapping, or for a framed sub-buffer
	 * (entry zloaded - 1) its header and records decompressed in zbuf */
	const uint8_t *d;
	uint64_t dsize;
	uint8_t *zbuf;    /* zcap bytes, grown to the largest framed sub-buffer read */
	size_t zcap;
	size_t zloaded;

	/* cursor */
	size_t cur;       /* index into sb[] */
	int phase;
	uint64_t pos, end; /* file offsets: next record, end of the records */
	uint64_t first_ts;
	unsigned flags;   /* KTRACE_SBF_* of the current sub-buffer */
	unsigned hdr_size;
	int cpu;
	uint32_t tid;
	uint32_t lost;
	uint64_t last_raw; /* raw time of the last item returned */
	uint64_t lost_sum; /* sum of `lost` over visited sub-buffers */
	uint64_t prev_seq;
	int have_prev;
	int open_shared;  /* shared stream (CTX): a zero word ends the records */
	int trunc;        /* the records were cut by the end of the file */
	int bad;          /* PH_TAIL has a pending CORRUPT gap */
	uint32_t nrec;    /* the current sub-buffer's header nrec (read before used) */
	uint32_t found;   /* records of it decoded so far, internal ones not counted */
	uint64_t got;     /* records of the stream decoded, internal ones not counted */
	int have_want;    /* a `stream-written` line: the consumer wrote want_bytes, want_records */
	uint64_t want_bytes, want_records;
	uint32_t cache_tid, cache_pid;
	uint64_t bad_off; /* PH_TAIL: offset and text of the pending gap */
	char what[128];

	size_t calib_hint; /* ktr_raw_to_ns_hint() segment of this stream's last time */

	/* merge look-ahead */
	struct ktr_rec la;
	int la_valid;
};

struct ktr_thread_ent {
	uint32_t tid, pid;
	char *comm;
	unsigned long order; /* line order: later lines win */
};

struct ktr_pair {
	uint64_t raw, ns;
};

/*
 * The slope of the calibration segment from pair i to pair i + 1, split
 * so that a time converts with multiplications only (reader/clock.c):
 * dn / dr = whole + frac / dr, and recip = floor(frac * 2^64 / dr).
 */
struct ktr_slope {
	uint64_t dr, whole, frac, recip;
};

/* A metadata `stream` line. */
struct ktr_mstream {
	unsigned index;
	unsigned kind;
	char *file;
	unsigned line; /* its metadata line */
};

/* A metadata `map` line (the public struct plus its owned strings). */
struct ktr_map_ent {
	struct ktr_map m;
	char *buildid, *path;
};

/* An interned (func, site) pair of a CALL record with inline addresses. */
struct ktr_pair2 {
	uint64_t func, site;
};

struct ktr_trace {
	char *dir;
	char *base;             /* a sub-trace's: the directory the user named (DIR), else NULL */
	const char *sub_prefix; /* a sub-trace's "kernel/" (never followed), else NULL */
	char **badf;            /* files ksf_trace_check() refused (reported once; never opened) */
	size_t nbadf;
	const struct ktr_memfile *mfiles; /* ktr_open_mem(), else NULL */
	size_t nmfiles;

	struct ktr_info info;
	char *strs[6]; /* owned strings behind info (host, kernel, ...) */
	int have_clock; /* metadata had a clock line */
	uint32_t meta_buf_size, meta_buf_nr;
	int meta_layout; /* -1 unset, 0 fixed, 1 packed, 2 slots */

	struct ktr_mstream *mstreams;
	size_t nmstreams, capmstreams;
	uint8_t *mstream_seen;   /* KTR_MAX_STREAMS bits: stream indexes with a line (parsing) */
	uint32_t *mstream_hash;  /* open addressing: mstreams[] index + 1 by file name (parsing) */
	size_t hashcap;
	uint64_t *seqbase;       /* KTR_MAX_STREAMS `seq-base` values by index (NULL: no such line) */
	uint8_t *seqbase_set;    /* KTR_MAX_STREAMS bits: which are set */
	/* each_line()'s run of one error on consecutive lines, said once as FILE:A-B */
	const char *run_err;
	unsigned run_first, run_last;
	/* `stream-written` lines: what ktrace record's consumer wrote to each stream file */
	struct ktr_swritten { unsigned index; char *file; uint64_t bytes, records; } *swritten;
	size_t nswritten, capswritten;
	uint8_t *swritten_seen;  /* KTR_MAX_STREAMS bits: indexes with a line (parsing) */

	struct ktr_event *events; /* sorted by (cls group, id) */
	size_t nevents, capevents;
	char *funcs[256];

	struct ktr_thread_ent *threads; /* sorted by tid after open */
	size_t nthreads, capthreads;

	struct ktr_pair *calib; /* sorted by raw, ns increasing, after open */
	size_t ncalib, capcalib;
	struct ktr_slope *slope; /* ncalib - 1 entries: segment i's slope (reader/clock.c) */
	struct kz_dec *zdec;     /* framed streams' decoder (reader/zframe.h), made on first use */
	uint32_t zdec_room;

	int have_ctl;
	struct ktrace_control ctl;
	struct ktrace_stream_ctl *sctl; /* ctl.nstreams entries (copied) */
	unsigned nsctl;

	struct ktr_stream *streams;
	unsigned nstreams;
	size_t capstreams;

	/* diagnostics: a ring of undrained messages */
	char *diag[KTR_DIAG_MAX];
	unsigned dhead, dcount;
	unsigned long suppressed;
	char *dlast;
	unsigned long nerr;

	struct ktr_map_ent *maps; /* metadata `map` and `map-gen` lines, file order */
	size_t nmaps, capmaps;
	size_t nmapgen;           /* how many are `map-gen` lines */
	size_t *gidx;             /* map-gen lines sorted by start (ktr_map_pick()) */
	uint64_t *gmaxend;        /* per gidx[] entry: the largest end up to it */
	size_t ngidx;
	int gidx_built;
	uint64_t gplain[1024];    /* addresses no two loads shared (calls.c) */

	uint64_t origin_ns;    /* KFT run's time origin (DIR/kft), 0 if none */
	size_t call_hint;      /* ktr_raw_to_ns_hint() segment for call entry times */
	int no_runs;           /* KTRACE_READ_RECORDS set: ktr_next_calls() gives none */
	int win;               /* ktr_set_window() called: skip sub-buffers outside */
	uint64_t win_from, win_to; /* its bounds, ns */
	uint64_t win_skipped;  /* sub-buffers skipped so */

	/* the call-site table (calls.c) */
	struct ktr_file cs;
	int cs_state;          /* 0 not loaded, 1 usable, -1 missing or unusable */
	uint64_t cs_hdr, cs_esize, cs_cap, cs_count, cs_avail; /* avail: entries in the file */
	uint8_t *cs_reported;  /* one bit per index: bad entry already reported */
	uint8_t *cs_plain;     /* per index: 1 = neither address is tagged by load generation (calls.c) */
	int cs_far_reported;   /* an index beyond the table was reported */
	int cs_short_reported; /* a CALL record without payload was reported */
	struct ktr_pair2 *xpairs; /* interned inline pairs, key KTR_CALL_KEY_EXTRA + i */
	size_t nxpairs, capxpairs;
	uint32_t *xhash;       /* open addressing over xpairs (index + 1), 0 = empty */
	size_t xhash_size;

	/* merge heap of stream indexes with a valid look-ahead */
	unsigned *heap;
	unsigned nheap;
	int merge_ready;
	char what[128]; /* the returned gap's text, stable until the next call */

	/* the kernel sub-trace DIR/kernel (kernel.c) */
	struct ktr_trace *sub;
	int is_sub;      /* this is a sub-trace: no DIR/kernel of its own */
	int kernel_only; /* DIR has no metadata, only kernel/ */
	struct ktr_memfile *sub_mfiles;
	struct ktr_rec la2[2]; /* look-ahead: [0] this trace's merge, [1] the sub-trace's */
	int la_state[2];
};

/* diag.c */
void ktr_diag(struct ktr_trace *t, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ktr_diag_free(struct ktr_trace *t);

/* files.c */
int ktr_open_in(struct ktr_trace *t, const char *name, unsigned flags);
void ktr_check_files(struct ktr_trace *t);
int ktr_file_refused(const struct ktr_trace *t, const char *name);
int ktr_file_open(struct ktr_trace *t, struct ktr_file *f, const char *name, int quiet);
void ktr_file_close(struct ktr_file *f);
int ktr_file_exists(struct ktr_trace *t, const char *name);
char **ktr_list_files(struct ktr_trace *t, size_t *n);

/* metadata.c */
void ktr_parse_metadata(struct ktr_trace *t, const struct ktr_file *f);
void ktr_parse_threads(struct ktr_trace *t, const struct ktr_file *f);
void ktr_add_thread(struct ktr_trace *t, uint32_t tid, uint32_t pid, const char *comm,
		    size_t len);
void ktr_sort_tables(struct ktr_trace *t);
void ktr_add_map(struct ktr_trace *t, uint64_t start, uint64_t end, uint64_t off,
		 const char *id, size_t idlen, const char *path, size_t plen);
int ktr_parse_u64(const char *s, size_t len, uint64_t *v);

/* calls.c */
void ktr_callsites_load(struct ktr_trace *t);
void ktr_calls_free(struct ktr_trace *t);

/* control.c */
void ktr_read_control(struct ktr_trace *t);

/* merge.c, kernel.c */
int ktr_merge_next(struct ktr_trace *t, struct ktr_rec *r);

/*
 * ktr_call_fill() - the fields of a call from CALL record header id @id,
 * its @nwords (>= 1) payload words @w and its time @raw (@ns): everything
 * but tid, pid and cpu, which the caller sets (calls.c; the one decoder of
 * ktr_call_decode() and ktr_stream_calls()).
 */
void ktr_call_fill(struct ktr_trace *t, struct ktr_call *c, unsigned id, const uint64_t *w,
		   unsigned nwords, uint64_t raw, uint64_t ns);

/*
 * ktr_stream_calls() - ktr_next_calls()'s fast path on stream @si
 * (stream.c): the records that follow in its current sub-buffer decoded
 * straight into @c[0 .. @max), while each is a whole CALL record of a
 * stream without context words whose raw time is below @lim (or equal,
 * with @incl), and the stream is amid a sub-buffer's records; it stops
 * before anything else, which ktr_stream_next() then returns as it would
 * have.  *@last_off: the offset of the last call decoded (ktr_rec.offset).
 * Return: the number of calls.
 */
size_t ktr_stream_calls(struct ktr_trace *t, unsigned si, struct ktr_call *c, size_t max, uint64_t lim,
			int incl, uint64_t *last_off);

/* 1 if stream @s's file is shorter than the recording wrote (cut short since). */
static inline int ktr_stream_cut(const struct ktr_stream *s)
{
	return s->have_want && s->f.exists && s->f.size < s->want_bytes;
}

/*
 * ktr_peek_new() - a second cursor over stream @si (its index, file and
 * calibration shared, a decompression buffer of its own) for reading
 * sub-buffers out of order: ktr_peek_calls() gives the calls of the
 * stream's @j-th sub-buffer (index order), as the stream's cursor would
 * (other records skipped; at most @max).  The window of ktr_set_window()
 * does not apply.  Not thread-safe (the trace's decoder is shared).
 */
struct ktr_peek;
struct ktr_peek *ktr_peek_new(struct ktr_trace *t, unsigned si);
size_t ktr_peek_calls(struct ktr_trace *t, struct ktr_peek *p, size_t j, struct ktr_call *c, size_t max);
void ktr_peek_free(struct ktr_peek *p);
void ktr_sub_open(struct ktr_trace *t);
void ktr_sub_rewind(struct ktr_trace *t);
void ktr_sub_close(struct ktr_trace *t);
struct ktr_trace *ktr_open_sub(const char *parent, const struct ktr_memfile *files, size_t n);

/* stream.c */
void ktr_stream_index(struct ktr_trace *t, struct ktr_stream *s);
void ktr_stream_reset(struct ktr_stream *s);
int ktr_guess_fixed(const struct ktr_stream *s, uint32_t *bs, uint32_t *nr);

/* clock.c */
void ktr_add_pair(struct ktr_trace *t, uint64_t raw, uint64_t ns);
uint64_t ktr_raw_to_ns_hint(const struct ktr_trace *t, uint64_t raw, size_t *hint);

/*
 * ktr_line_fast() - ns at @raw on calibration segment @i (pairs i and
 * i + 1), for @raw at or after pair i and less than 2^62 raw units past it
 * (every time inside a segment, most extrapolated ones): exactly
 * floor(dx * dn / dr) past pair i's ns, with multiplications instead of a
 * 128-bit division (kd reads two times a call: the division was a tenth of
 * its time).  Return: -1 where it does not apply (clock.c's line() then).
 */
static inline __int128 ktr_line_fast(const struct ktr_trace *t, size_t i, uint64_t raw)
{
	const struct ktr_slope *s = &t->slope[i];
	uint64_t dx = raw - t->calib[i].raw, q;
	unsigned __int128 rem;

	if (raw < t->calib[i].raw || dx >= (uint64_t)1 << 62)
		return -1;
	/* floor(dx * frac / dr): recip's error makes q at most 1 short */
	q = (uint64_t)(((unsigned __int128)dx * s->recip) >> 64);
	rem = (unsigned __int128)dx * s->frac - (unsigned __int128)q * s->dr;
	while (rem >= s->dr) {
		q++;
		rem -= s->dr;
	}
	return (__int128)t->calib[i].ns + (__int128)dx * s->whole + q;
}

/*
 * ktr_ns_at() - ktr_raw_to_ns_hint(), inline where it is cheap: @raw in
 * the segment *@hint already names (consecutive times of a stream mostly
 * are), the same value; anything else goes to ktr_raw_to_ns_hint().  kd
 * converts two times a call: the call into clock.c was a sixth of its
 * reading thread's time.
 */
static inline uint64_t ktr_ns_at(const struct ktr_trace *t, uint64_t raw, size_t *hint)
{
	size_t i = *hint;

	if (t->slope && t->info.clock_tsc && i + 1 < t->ncalib && t->calib[i].raw < raw &&
	    raw <= t->calib[i + 1].raw) {
		__int128 v = ktr_line_fast(t, i, raw);

		if (v >= 0 && v <= (__int128)UINT64_MAX)
			return (uint64_t)v;
	}
	return ktr_raw_to_ns_hint(t, raw, hint);
}
void ktr_calib_finish(struct ktr_trace *t);

/* util */
static inline uint64_t ktr_le64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline uint32_t ktr_le32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

#endif

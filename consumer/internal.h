/*
 * consumer/internal.h - state shared by the files of consumer/ (not an API:
 * consumer/consumer.h is).
 */
#ifndef KTRACE_CONSUMER_INTERNAL_H
#define KTRACE_CONSUMER_INTERNAL_H

#include <limits.h>
#include <stdint.h>

#include <ktrace/format.h>

#include "consumer/consumer.h"
#include "lib/session.h"

#define KC_MAX_LOSSES 64

/* One stream of a channel, as the consumer sees it. */
struct kc_stream {
	uint8_t *ring;       /* its ring, mapped (NULL until allocated) */
	int fd;              /* DIR/traceN, -1 until its first sub-buffer */
	int direct;          /* fd is O_DIRECT */
	uint64_t fsize;      /* bytes of DIR/traceN */
	uint64_t next_seq;   /* the sequence number after the last one written */
	uint64_t lost;       /* `lost` counts of the sub-buffers copied */
	uint64_t pend;       /* drops after the last sub-buffer copied, range open */
	uint64_t pend_from;  /* ns of the last record before them */
	int werr;            /* errno of the first failed write (reported once), 0 none */
	uint64_t unwritten;  /* records of sub-buffers that could not be written */
	uint64_t unwritten_subbufs;
	uint64_t added;      /* of them, already added to the stream's `dropped` counter */
	uint64_t subbufs, records; /* written to DIR/traceN (for its `stream-written` line) */
	uint64_t *units;     /* file offsets of the slots and frames written, in order */
	size_t nunits, capunits;
};

/* One channel (trace directory). */
struct kc_chan {
	int state;                    /* 0 not open, 1 open, 2 done, -1 unusable */
	int dirfd;
	struct ktrace_control *ctl;   /* DIR/control, mapped read-write */
	size_t ctl_len;
	struct ktrace_stream_ctl *sctl;
	uint32_t bs, nr, shift, nstreams, flags;
	struct kc_stream *st;
	const char *dir;
	struct kz_enc *zenc;          /* frames' encoder (s->zlevel set), made on first use */
};

struct kc_session {
	int fd;
	char path[PATH_MAX];
	const char *cmd;
	struct kt_session_hdr *hdr;
	struct kt_session_chan *chan;
	struct kt_session_stack *stack;
	struct kc_chan *chans; /* KT_SESSION_NCHAN */
	struct kc_stats stats;
	struct kc_loss losses[KC_MAX_LOSSES];
	uint64_t calib_raw, calib_ns; /* a (raw, ns) pair from kc_create()/kc_open() */
	uint32_t wake_seen;
	unsigned throttle_us;
	int no_direct; /* $KTRACE_NO_DIRECT: buffered writes (for comparison) */
	int zon, zlevel; /* kc_set_compress(): sub-buffers written in zstd frames, at level zlevel */
	unsigned werr_said; /* stream files that could not be written (the first is reported) */
	unsigned unwritable; /* streams kc_drain() skipped in this pass: their files cannot be written */
};

/* consumer.c */
int kc_chan_open(struct kc_session *s, unsigned idx);
/* Append @len bytes (a sub-buffer built by the consumer) to stream @i's file. */
int kc_append(struct kc_session *s, struct kc_chan *c, unsigned i, const void *buf, size_t len);
/* Stream @i's ring, mapped on first use; NULL if it has none yet (or cannot be mapped: said). */
uint8_t *kc_ring(struct kc_session *s, struct kc_chan *c, unsigned i);
/* Records in sub-buffer data @p of @len bytes, internal ones not counted (@ctx: context words). */
uint64_t kc_count_records(const uint8_t *p, uint64_t len, int ctx);
/*
 * Write the function tracer's call-site table at session offset @off (a
 * struct ktrace_callsites and its entries) to @dirfd/callsites: the
 * entries handed out so far, from a copy (the table in the session is
 * never changed).  Return: 0, or -errno (said).
 */
int kc_write_callsites(struct kc_session *s, struct kc_chan *c, uint64_t off, int dirfd);
/* Replace DIR/@name with @text (temporary name, no links followed). */
int kc_write_text(struct kc_session *s, struct kc_chan *c, const char *name, const char *text);
void kc_error(struct kc_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* CLOCK_MONOTONIC ns of raw clock value @raw (the session's pair and a fresh one). */
uint64_t kc_ns(const struct kc_session *s, uint64_t raw);
/*
 * Make room on a full disk for @need bytes of @c's own files (call-site
 * table, status): remove the newest written sub-buffers of its stream files,
 * counting their records as not written.  Return: bytes freed.
 */
uint64_t kc_make_room(struct kc_session *s, struct kc_chan *c, uint64_t need);
/*
 * unfinished.c: @n records the function tracer counted kept were not
 * written (a full disk): its counters say so (kept - n, lost + n) and
 * DIR/kft-status is rewritten, so every report shows one loss figure.
 */
void kc_kft_unwritten(struct kc_session *s, struct kc_chan *c, uint64_t n);
/* Drop counters into the stats, close every channel, mark them drained. */
void kc_chans_done(struct kc_session *s);

#endif

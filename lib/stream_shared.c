/*
 * lib/stream_shared.c - the shared stream: many writers, reserve by
 * compare-and-swap, commit by atomic add.
 *
 * Used by KTRACE_GLOBAL_CHANNEL channels for every record, and by
 * per-thread channels for records written from a signal handler that
 * interrupted a logging call, and for threads that found no free slot.
 * Works across processes too (a forked child shares the mapping).
 *
 * Protocol (lib/runtime.h has the overview):
 *
 *   head   = (seq << shift) | offset, 0 before the first sub-buffer; the
 *            offset stays below buf_size (a record never ends exactly at
 *            the end, which would carry into seq)
 *   commit = per ring slot, bytes committed over all laps (mod 2^32)
 *
 *   reserve: load head; if the record fits in sub-buffer seq, CAS head to
 *            head + len and write at offset.  Otherwise CAS head to the
 *            start of seq + 1 plus len: the winner closes seq (used =
 *            offset - 64, padding = buf_size - offset added to its commit)
 *            and initialises the header of seq + 1, other writers retry.
 *   commit:  after writing, add len to the slot's commit (release).
 *
 *   A slot of lap L is complete when commit == (L + 1) * (buf_size - 64).
 *   Discard mode stops at seq == buf_nr; flight mode reuses a slot only
 *   when its previous lap is complete, else the record is dropped.
 *
 *   The switcher initialises the new header after its CAS, so other
 *   writers may already fill, and even close, that sub-buffer before the
 *   initialisation is done.  So the two never write the same field: the
 *   closer owns `used` and `commit`, the initialiser everything else
 *   (kt_open_subbuf() leaves `used` alone for shared streams), and a
 *   reader recognises a closed sub-buffer by a complete commit count
 *   rather than by a flag.  The time-window check and the `lost` count use
 *   the header only once it is initialised ("magic set and seq == s").
 *
 * Writers never wait for each other: a writer preempted (or killed) inside
 * its record only delays the reuse of that one slot in flight mode.
 */
#include <errno.h>
#include <stdint.h>

#include "runtime.h"
#include "session.h"

static inline uint32_t kt_lap_bytes(const struct ktrace_channel *ch, uint64_t lap)
{
	return (uint32_t)((lap + 1) * (uint64_t)(ch->buf_size - KTRACE_SUBBUF_HDR_SIZE));
}

/* Has the switcher of @seq finished initialising its header? */
static inline int kt_header_ready(const struct ktrace_subbuf *sb, uint64_t seq)
{
	return __atomic_load_n(&sb->magic, __ATOMIC_ACQUIRE) == KTRACE_SUBBUF_MAGIC &&
	       __atomic_load_n(&sb->seq, __ATOMIC_RELAXED) == seq;
}

/* Count a dropped record.  Return: the stream's drops before this one. */
static uint64_t kt_shared_drop(struct kt_stream *st, struct ktrace_subbuf *last)
{
	uint64_t n = __atomic_fetch_add(&st->ctl->dropped, 1, __ATOMIC_RELAXED);

	if (last)
		__atomic_fetch_add(&last->lost, 1, __ATOMIC_RELAXED);
	return n;
}

int kt_shared_write(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
		    const uint64_t *payload, unsigned words, unsigned depth)
{
	struct kt_stream *st = kt_shared_stream(ch);
	uint64_t mask = ch->buf_size - 1;
	uint32_t len = 16 + 8 * words;
	int flight = !!(ch->flags & KTRACE_FLIGHT_CHANNEL);
	struct ktrace_subbuf *sb;
	uint64_t h, off;
	uint64_t *r;

	if (KT_UNLIKELY(!st->base) && kt_stream_map(ch, st) < 0) {
		/* A streamed channel's shared ring is made at its first record. */
		kt_shared_drop(st, NULL);
		return -ENOBUFS;
	}
	h = __atomic_load_n(&st->ctl->head, __ATOMIC_ACQUIRE);
	for (;;) {
		uint64_t seq = h >> ch->shift, nseq, nh, old_records = 0;
		struct ktrace_subbuf *nsb;

		off = h & mask;
		if (h) {
			int ready;

			sb = kt_subbuf(ch, st, seq);
			ready = kt_header_ready(sb, seq);
			/* Strictly less: an offset of buf_size would carry into seq. */
			if (off + len < ch->buf_size &&
			    (!ready || ts - __atomic_load_n(&sb->first_ts, __ATOMIC_RELAXED) +
						   KTRACE_TS_WINDOW < 2 * KTRACE_TS_WINDOW)) {
				if (__atomic_compare_exchange_n(&st->ctl->head, &h, h + len, 1,
								__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
					break;
				continue;
			}
		}
		/* Move to the next sub-buffer. */
		nseq = h ? seq + 1 : 0;
		nsb = kt_subbuf(ch, st, nseq);
		if (nseq >= ch->buf_nr) {
			int rc = 0;

			if (kt_streaming(ch)) {
				/* The consumer copies a slot only once it is complete. */
				if (nseq >= __atomic_load_n(&st->ctl->consumed, __ATOMIC_ACQUIRE) +
						    ch->buf_nr &&
				    !kt_session_wait(ch->sess, &st->ctl->consumed, nseq, ch->buf_nr))
					rc = -ENOBUFS;
			} else if (!flight) {
				rc = -ENOSPC;
			} else if (__atomic_load_n(&nsb->commit, __ATOMIC_ACQUIRE) !=
				   kt_lap_bytes(ch, nseq / ch->buf_nr - 1)) {
				rc = -ENOSPC;
			}
			if (rc) {
				uint64_t n;

				sb = h ? kt_subbuf(ch, st, seq) : NULL;
				n = kt_shared_drop(st, sb && kt_header_ready(sb, seq) ? sb : NULL);
				if (rc == -ENOBUFS && !(n & 1023)) /* not a syscall per drop */
					kt_session_wake(ch->sess);
				return rc;
			}
			/* Count what we would overwrite now: once head moves
			 * into the slot, other writers start filling it. */
			if (flight)
				old_records = kt_count_records(
					nsb, __atomic_load_n(&nsb->used, __ATOMIC_RELAXED));
		}
		nh = (nseq << ch->shift) | (KTRACE_SUBBUF_HDR_SIZE + len);
		if (!__atomic_compare_exchange_n(&st->ctl->head, &h, nh, 1, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		/* We own the switch: close the old sub-buffer, open the new one. */
		if (h) {
			struct ktrace_subbuf *old = kt_subbuf(ch, st, seq);

			__atomic_store_n(&old->used, (uint32_t)(off - KTRACE_SUBBUF_HDR_SIZE),
					 __ATOMIC_RELAXED);
			__atomic_fetch_add(&old->commit, (uint32_t)(ch->buf_size - off),
					   __ATOMIC_RELEASE);
		}
		if (old_records)
			__atomic_fetch_add(&st->ctl->overwritten, old_records, __ATOMIC_RELAXED);
		kt_open_subbuf(nsb, st->index, nseq, 0, KTRACE_SBF_CTX);
		if (h && kt_streaming(ch))
			kt_session_wake(ch->sess); /* seq is closed: the consumer may copy it once complete */
		sb = nsb;
		off = KTRACE_SUBBUF_HDR_SIZE;
		break;
	}

	r = (uint64_t *)((uint8_t *)sb + off);
	/* Flight mode: this space may hold an old record; mark it unwritten
	 * until the header word is stored, last. */
	__atomic_store_n(&r[0], 0, __ATOMIC_RELAXED);
	r[1] = KTRACE_CTX(kt_tls.tid ? kt_tls.tid : kt_gettid(), kt_cpu_slow(), depth);
	for (unsigned i = 0; i < words; i++)
		r[2 + i] = payload[i];
	__atomic_store_n(&r[0], KTRACE_REC_HDR(ts, cls, words, id), __ATOMIC_RELEASE);
	__atomic_fetch_add(&sb->commit, len, __ATOMIC_RELEASE);
	__atomic_fetch_add(&st->ctl->written, 1, __ATOMIC_RELAXED);
	return 0;
}

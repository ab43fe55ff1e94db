/*
 * lib/stream_shared.c - the shared stream: many writers, reserve by
 * compare-and-swap, commit by atomic add.
 *
 * Used by KTRACE_GLOBAL_CHANNEL channels for every record, and by
 * per-thread channels for records written from a signal handler that
 * interrupted a logging call, and for threads that found no free slot.
 * Works across processes too (a forked child shares the mapping).
 *
 * The protocol (reserve with the stamp read inside it, switch, write
 * behind a reservation marker, commit; complete slots; dead writers in
 * flight mode) is explained in lib/runtime.h, "Shared stream".  Details
 * kept here: head's offset stays below buf_size (a record never ends
 * exactly at the end, which would carry into seq); the time-window check
 * and the `lost` count use a header only once it is initialised ("magic
 * set and seq == s", kt_header_ready()), since writers may fill a
 * sub-buffer before its switcher has initialised it.
 */
#include <errno.h>
#include <signal.h>
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

#define KT_STALL_CHECK_NS 1000000ull     /* look at a stalled sub-buffer's writers every 1 ms */
#define KT_STALL_GIVEUP_NS 1000000000ull /* a writer of unknown name: give up after 1 s */

/*
 * This process's entry in the control file's writers table, claimed at its
 * first shared-stream record (and again in a forked child, whose pid
 * differs): the table says which processes may have records in flight.
 */
static void kt_register_writer(struct ktrace_channel *ch)
{
	pid_t pid = __atomic_load_n(&kt_pid, __ATOMIC_RELAXED);
	uint32_t *w = (uint32_t *)((uint8_t *)ch->ctl + KTRACE_WRITERS_OFF);

	if (KT_LIKELY(__atomic_load_n(&ch->writer_pid, __ATOMIC_RELAXED) == pid))
		return;
	__atomic_store_n(&ch->writer_pid, pid, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < KTRACE_WRITER_PIDS; i++) {
		uint32_t v = __atomic_load_n(&w[i], __ATOMIC_RELAXED), zero = 0;

		if (v == (uint32_t)pid)
			return;
		if (!v && __atomic_compare_exchange_n(&w[i], &zero, (uint32_t)pid, 0, __ATOMIC_ACQ_REL,
						      __ATOMIC_RELAXED))
			return;
	}
	/* table full: kt_writer_died() then assumes the worst */
	__atomic_store_n(&w[KTRACE_WRITER_PIDS - 1], ~0u, __ATOMIC_RELAXED);
}

/* Has a process that wrote to the shared stream died (or are there too many to tell)? */
static int kt_writer_died(const struct ktrace_control *ctl)
{
	const uint32_t *w = (const uint32_t *)((const uint8_t *)ctl + KTRACE_WRITERS_OFF);

	for (unsigned i = 0; i < KTRACE_WRITER_PIDS; i++) {
		uint32_t pid = __atomic_load_n(&w[i], __ATOMIC_RELAXED);

		if (pid == ~0u || (pid && !kt_pid_alive(pid)))
			return 1;
	}
	return 0;
}

/* The 64-bit word at byte @off of sub-buffer @sb's records (acquire). */
static inline uint64_t kt_word(const struct ktrace_subbuf *sb, uint64_t off)
{
	return __atomic_load_n((const uint64_t *)((const uint8_t *)sb + KTRACE_SUBBUF_HDR_SIZE + off),
			       __ATOMIC_ACQUIRE);
}

/*
 * Flight mode: may sub-buffer @nsb (ring slot of @nseq) be reused, i.e. is
 * every record of its previous lap (sequence number nseq - buf_nr)
 * committed?  If not, its writers were preempted inside their records,
 * or died there (killed with their process); dead writers would stop the
 * stream for good.  So one writer at a time (every KT_STALL_CHECK_NS)
 * walks that lap's records: complete ones, and reservation markers naming
 * their writers (KTRACE_REC_RESERVED), up to the first word that is
 * neither (or a record stamped before the lap's first_ts: an older lap's).
 * What is not committed must then be accounted for:
 *   - markers of threads that no longer live (a live one: wait for it);
 *   - and, if the walk stopped early, the closer's part: the writer that
 *     moved head to the next sub-buffer marks its own record there first
 *     (offset 0 of nseq - buf_nr + 1), then stores `used` and commits the
 *     padding; if that marker is still there and its thread is dead, the
 *     padding (buf_size - where the walk stopped) is missing too.
 * If that is everything, the sub-buffer is taken back at once: its commit
 * count is set complete; the markers stay, and readers skip the torn
 * records by their length.  A record torn before its marker (a writer
 * that died between its reservation and its first store) leaves bytes
 * nobody can name: then the sub-buffer is taken back after
 * KT_STALL_GIVEUP_NS.  A writer stalled longer than that, which resumes,
 * drops its record (kt_shared_write()).
 * Return: 1 reusable, 0 not (the caller drops its record).
 */
static int kt_flight_reusable(struct ktrace_channel *ch, struct kt_stream *st,
			      struct ktrace_subbuf *nsb, uint64_t nseq)
{
	struct ktrace_control *ctl = ch->ctl;
	uint64_t room = ch->buf_size - KTRACE_SUBBUF_HDR_SIZE, lap_first, now, check, off = 0;
	uint32_t full = kt_lap_bytes(ch, nseq / ch->buf_nr - 1);
	uint32_t commit = __atomic_load_n(&nsb->commit, __ATOMIC_ACQUIRE), dead = 0;
	int ordered = (__atomic_load_n(&nsb->flags, __ATOMIC_RELAXED) & KTRACE_SBF_ORDERED) != 0;

	if (commit == full)
		return 1;
	now = kt_mono_ns();
	if (__atomic_load_n(&ctl->stall_seq, __ATOMIC_RELAXED) != nseq) {
		__atomic_store_n(&ctl->stall_ns, now, __ATOMIC_RELAXED);
		__atomic_store_n(&ctl->stall_seq, nseq, __ATOMIC_RELEASE);
	}
	check = __atomic_load_n(&ctl->stall_check, __ATOMIC_RELAXED);
	if (now - check < KT_STALL_CHECK_NS ||
	    !__atomic_compare_exchange_n(&ctl->stall_check, &check, now, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return 0;
	lap_first = __atomic_load_n(&nsb->first_ts, __ATOMIC_RELAXED);
	while (off + 16 <= room) {
		uint64_t h = kt_word(nsb, off), len = 16 + 8 * (uint64_t)KTRACE_REC_WORDS(h);

		if (KTRACE_REC_IS_RESERVED(h)) {
			if (kt_pid_alive((uint32_t)KTRACE_REC_TS(h)))
				return 0; /* preempted, not dead: wait for it */
			dead += (uint32_t)len;
		} else if (!KTRACE_REC_CLASS(h) ||
			   (ordered && ((KTRACE_REC_TS(h) - lap_first) & KTRACE_TS_MASK) >> 39)) {
			break; /* not of this lap */
		}
		off += len;
	}
	if (full - commit != dead && off < room) {
		/* Is the rest the padding of a closer that died before adding it? */
		struct ktrace_subbuf *next = kt_subbuf(ch, st, nseq - ch->buf_nr + 1);
		uint64_t h = kt_word(next, 0);

		if (KTRACE_REC_IS_RESERVED(h)) {
			if (kt_pid_alive((uint32_t)KTRACE_REC_TS(h)))
				return 0;
			dead += (uint32_t)(room - off);
		}
	}
	/*
	 * Torn records nobody can name: while every process that wrote lives,
	 * their writers are alive and will finish; once one has died, they may
	 * be its threads: give them KT_STALL_GIVEUP_NS.
	 */
	if (full - commit != dead &&
	    (!kt_writer_died(ctl) ||
	     now - __atomic_load_n(&ctl->stall_ns, __ATOMIC_RELAXED) < KT_STALL_GIVEUP_NS))
		return 0;
	if (!__atomic_compare_exchange_n(&nsb->commit, &commit, full, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return 0; /* a writer committed meanwhile: look again */
	__atomic_fetch_add(&ctl->reclaimed, 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * A CALL record's duration runs to its stamp: a record stamped later than
 * its caller's @ts (inside the reservation, for order) lasted @delta more.
 * Rewrites the payload in @w (room for 2 words); returns its word count.
 */
static unsigned kt_call_restamp(uint64_t *w, unsigned words, uint64_t delta)
{
	uint64_t dur = (uint32_t)w[0] | (words >= KTRACE_CALL_WORDS_LONG ? w[1] << 32 : 0);

	dur += delta;
	w[0] = (w[0] & ~(uint64_t)0xffffffffu) | (uint32_t)dur;
	if (words >= KTRACE_CALL_WORDS_LONG)
		w[1] = dur >> 32;
	else if (dur >> 32) {
		w[1] = dur >> 32;
		words = KTRACE_CALL_WORDS_LONG;
	}
	return words;
}

/*
 * kt_shared_write() in steps, all inlined into it (no calls added on the
 * hot path; no locks, syscalls or allocation but where noted):
 * kt_shared_stage() copies a CALL payload aside, kt_shared_reserve() takes
 * space (switching sub-buffers through kt_shared_switch()), and
 * kt_shared_fill() writes and commits the record.
 */
#define KT_SHARED_STEP static inline __attribute__((always_inline))

/* Where a reservation landed: sub-buffer, byte offset in it, its sequence, the stamp. */
struct kt_shared_resv {
	struct ktrace_subbuf *sb;
	uint64_t off, seq, stamp;
};

/*
 * kt_shared_stage - a CALL record's payload (@payload, @words) copied into
 * @pw with room for a duration that grows past 32 bits when restamped;
 * *@len (bytes) grows by the word it may need.  Other classes: nothing.
 */
KT_SHARED_STEP void kt_shared_stage(uint64_t *pw, const uint64_t *payload, unsigned words,
				    unsigned cls, uint32_t *len)
{
	if (cls != KTRACE_CLASS_CALL)
		return;
	for (unsigned i = 0; i < words; i++)
		pw[i] = payload[i];
	if (words == KTRACE_CALL_WORDS) {
		pw[1] = 0;
		*len += 8;
	}
}

/*
 * kt_shared_full - sub-buffer @nsb (sequence @nseq) is the ring's slot of
 * an earlier lap: may a writer move into it?  Streamed: once the consumer
 * has copied it (may block in kt_session_wait()); flight mode: once that
 * lap is complete (kt_flight_reusable()); otherwise never.  Returns 0, or
 * -ENOBUFS (the consumer is behind) or -ENOSPC (the ring is full).
 */
KT_SHARED_STEP int kt_shared_full(struct ktrace_channel *ch, struct kt_stream *st,
				  struct ktrace_subbuf *nsb, uint64_t nseq, int flight)
{
	if (kt_streaming(ch)) {
		/* The consumer copies a slot only once it is complete. */
		if (nseq >= __atomic_load_n(&st->ctl->consumed, __ATOMIC_ACQUIRE) + ch->buf_nr &&
		    !kt_session_wait(ch->sess, &st->ctl->consumed, nseq, ch->buf_nr))
			return -ENOBUFS;
		return 0;
	}
	if (!flight || !kt_flight_reusable(ch, st, nsb, nseq))
		return -ENOSPC;
	return 0;
}

/*
 * kt_shared_switch - move head from @*h (sequence @seq, offset @off; 0: the
 * stream's first record) to the next sub-buffer, with our record of @len
 * bytes (thread @tid) first in it.  On success, *@rv is that record's
 * place and stamp; a lost race updates *@h.  Returns 0 switched, 1 lost
 * the race (reserve again), or -ENOBUFS / -ENOSPC with the record dropped
 * and counted.  Lock-free; may wake the consumer (a syscall, only at a
 * switch or every 1024th drop).
 */
KT_SHARED_STEP int kt_shared_switch(struct ktrace_channel *ch, struct kt_stream *st, uint64_t *h,
				    uint64_t seq, uint64_t off, uint32_t len, uint32_t tid,
				    int flight, struct kt_shared_resv *rv)
{
	uint64_t nseq = *h ? seq + 1 : 0, nh, old_records = 0, pair[2];
	struct ktrace_subbuf *nsb = kt_subbuf(ch, st, nseq);

	if (nseq >= ch->buf_nr) {
		int rc = kt_shared_full(ch, st, nsb, nseq, flight);

		if (rc) {
			struct ktrace_subbuf *sb = *h ? kt_subbuf(ch, st, seq) : NULL;
			uint64_t n = kt_shared_drop(st, sb && kt_header_ready(sb, seq) ? sb : NULL);

			if (rc == -ENOBUFS && !(n & 1023)) /* not a syscall per drop */
				kt_session_wake(ch->sess);
			return rc;
		}
		/* Count what we would overwrite now: once head moves
		 * into the slot, other writers start filling it. */
		if (flight)
			old_records = kt_count_records(nsb, __atomic_load_n(&nsb->used, __ATOMIC_RELAXED));
	}
	/*
	 * The switcher's record opens the sub-buffer: its stamp is the
	 * sub-buffer's first_ts, read with CLOCK_MONOTONIC as one pair,
	 * so no record of this lap is stamped below first_ts and an
	 * older one is left over from the previous lap.
	 */
	(void)kt_clock_ordered(); /* the pair's clock reads come after the head's load */
	kt_calib_pair(&pair[0], &pair[1]);
	nh = (nseq << ch->shift) | (KTRACE_SUBBUF_HDR_SIZE + len);
	if (!__atomic_compare_exchange_n(&st->ctl->head, h, nh, 1, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return 1;
	/*
	 * We own the switch.  Mark our record first, so that a writer
	 * waiting for the old sub-buffer knows who closes it
	 * (kt_flight_reusable()); then close the old one, open the new.
	 */
	__atomic_store_n((uint64_t *)((uint8_t *)nsb + KTRACE_SUBBUF_HDR_SIZE),
			 KTRACE_REC_RESERVED((len - 16) / 8, tid), __ATOMIC_RELEASE);
	if (*h) {
		struct ktrace_subbuf *old = kt_subbuf(ch, st, seq);

		__atomic_store_n(&old->used, (uint32_t)(off - KTRACE_SUBBUF_HDR_SIZE),
				 __ATOMIC_RELAXED);
		__atomic_fetch_add(&old->commit, (uint32_t)(ch->buf_size - off), __ATOMIC_RELEASE);
	}
	if (old_records)
		__atomic_fetch_add(&st->ctl->overwritten, old_records, __ATOMIC_RELAXED);
	kt_open_subbuf(nsb, st->index, nseq, 0, KTRACE_SBF_CTX | KTRACE_SBF_ORDERED, pair);
	if (*h && kt_streaming(ch))
		kt_session_wake(ch->sess); /* seq is closed: the consumer may copy it once complete */
	rv->sb = nsb;
	rv->off = KTRACE_SUBBUF_HDR_SIZE;
	rv->seq = nseq;
	rv->stamp = pair[0];
	return 0;
}

/*
 * kt_shared_reserve - reserve @len bytes (a record of thread @tid) in the
 * shared stream: by CAS on head inside the current sub-buffer, or by
 * switching to the next one.  Fills *@rv.  Returns 0, or -ENOBUFS /
 * -ENOSPC with the record dropped and counted.  Lock-free.
 */
KT_SHARED_STEP int kt_shared_reserve(struct ktrace_channel *ch, struct kt_stream *st, uint32_t len,
				     uint32_t tid, int flight, struct kt_shared_resv *rv)
{
	uint64_t mask = ch->buf_size - 1;
	uint64_t h = __atomic_load_n(&st->ctl->head, __ATOMIC_ACQUIRE);

	for (;;) {
		uint64_t seq = h >> ch->shift, off = h & mask, stamp;
		int rc;

		/*
		 * The stamp is read after head and before the CAS that reserves:
		 * a reservation that succeeds had no other between the two, so
		 * stamps follow the order of the stream (as LTTng's reserve does).
		 */
		stamp = kt_clock_ordered();
		if (h) {
			struct ktrace_subbuf *sb = kt_subbuf(ch, st, seq);
			int ready = kt_header_ready(sb, seq);

			/* Strictly less: an offset of buf_size would carry into seq. */
			if (off + len < ch->buf_size &&
			    (!ready || stamp - __atomic_load_n(&sb->first_ts, __ATOMIC_RELAXED) +
						   KTRACE_TS_WINDOW < 2 * KTRACE_TS_WINDOW)) {
				if (__atomic_compare_exchange_n(&st->ctl->head, &h, h + len, 1,
								__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
					rv->sb = sb;
					rv->off = off;
					rv->seq = seq;
					rv->stamp = stamp;
					return 0;
				}
				continue;
			}
		}
		/* Move to the next sub-buffer. */
		rc = kt_shared_switch(ch, st, &h, seq, off, len, tid, flight, rv);
		if (rc <= 0)
			return rc;
	}
}

/*
 * kt_shared_fill - write the record (@cls, @id, @payload of @words words,
 * call @depth, thread @tid, @len bytes as reserved) into its reservation
 * @rv and commit it.  A CALL record (@payload staged by kt_shared_stage())
 * is restamped: its duration runs to rv->stamp instead of @ts.
 */
KT_SHARED_STEP void kt_shared_fill(struct ktrace_channel *ch, struct kt_stream *st,
				   const struct kt_shared_resv *rv, uint64_t ts, unsigned cls,
				   unsigned id, uint64_t *pw, const uint64_t *payload,
				   unsigned words, unsigned depth, uint32_t len, uint32_t tid)
{
	uint64_t *r = (uint64_t *)((uint8_t *)rv->sb + rv->off);

	if (cls == KTRACE_CLASS_CALL) {
		words = kt_call_restamp(pw, words, rv->stamp - ts);
		if (8 * (words + 2) < len) { /* the second word was not needed: pad the record */
			pw[1] = 0;
			words = KTRACE_CALL_WORDS_LONG;
		}
		payload = pw;
	}
	/*
	 * Mark the space reserved, with its length and our thread id, before
	 * anything else: a flight-mode writer that finds this sub-buffer
	 * incomplete later can tell a dead writer from a preempted one, and a
	 * reader skips a torn record by its length.  The real header goes in
	 * last, with release order.
	 */
	__atomic_store_n(&r[0], KTRACE_REC_RESERVED(words, tid), __ATOMIC_RELAXED);
	r[1] = KTRACE_CTX(tid, kt_cpu_slow(), depth);
	for (unsigned i = 0; i < words; i++)
		r[2 + i] = payload[i];
	__atomic_store_n(&r[0], KTRACE_REC_HDR(rv->stamp, cls, words, id), __ATOMIC_RELEASE);
	__atomic_fetch_add(&rv->sb->commit, len, __ATOMIC_RELEASE);
	__atomic_fetch_add(&st->ctl->written, 1, __ATOMIC_RELAXED);
}

/*
 * kt_shared_write - write one record (@ts ns stamp of the caller, class
 * @cls, event @id, @payload of @words words, call @depth) to @ch's shared
 * stream.  Returns 0, -ENOBUFS (a streamed channel's consumer is behind,
 * or its ring could not be made) or -ENOSPC (the ring is full, or a
 * flight-mode writer stalled past reclaim): the record is dropped and
 * counted.  Async-signal-safe and thread-safe; lock-free (see the top of
 * this file).
 */
int kt_shared_write(struct ktrace_channel *ch, uint64_t ts, unsigned cls, unsigned id,
		    const uint64_t *payload, unsigned words, unsigned depth)
{
	struct kt_stream *st = kt_shared_stream(ch);
	uint64_t pw[KTRACE_MAX_WORDS];
	uint32_t len = 16 + 8 * words, tid = kt_tls.tid ? kt_tls.tid : kt_gettid();
	int flight = !!(ch->flags & KTRACE_FLIGHT_CHANNEL), rc;
	struct kt_shared_resv rv;

	if (KT_UNLIKELY(!st->base) && kt_stream_map(ch, st) < 0) {
		/* A streamed channel's shared ring is made at its first record. */
		kt_shared_drop(st, NULL);
		return -ENOBUFS;
	}
	if (flight)
		kt_register_writer(ch);
	kt_shared_stage(pw, payload, words, cls, &len);
	rc = kt_shared_reserve(ch, st, len, tid, flight, &rv);
	if (rc)
		return rc;
	/*
	 * A writer stalled between its reservation and here for longer than
	 * kt_flight_reusable()'s bound may find its sub-buffer taken back (its
	 * lap's commit count already full): it must not write into what is
	 * now another lap's space.  Its record is dropped.
	 */
	if (KT_UNLIKELY((int32_t)(__atomic_load_n(&rv.sb->commit, __ATOMIC_ACQUIRE) -
				  kt_lap_bytes(ch, rv.seq / ch->buf_nr)) >= 0)) {
		kt_shared_drop(st, NULL);
		return -ENOSPC;
	}
	kt_shared_fill(ch, st, &rv, ts, cls, id, pw, payload, words, depth, len, tid);
	return 0;
}

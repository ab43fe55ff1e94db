// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace_chan.c - channels over relay: seed 003's trace_setup() API and the
 * record writer, in the format of include/ktrace/format.h.
 *
 * The protocol between writers, relay and the reader:
 *
 *  - Each CPU (or, with TRACE_GLOBAL_CHANNEL, the one global buffer) is a
 *    relay buffer of buf_nr sub-buffers of buf_size bytes.  relay calls
 *    kt_subbuf_start() whenever a writer moves to a new sub-buffer; it
 *    marks the previous sub-buffer KTRACE_SBF_CLOSED and writes the
 *    64-byte struct ktrace_subbuf at the start of the new one, reserving
 *    those bytes with subbuf_start_reserve().  seq is relay's
 *    subbufs_produced, so sub-buffer seq lives in ring slot seq % buf_nr.
 *  - A writer disables interrupts (and takes the raw spinlock of a global
 *    channel; during a panic or an oops only if it is free, else the
 *    record is dropped and counted: its holder may be a stopped CPU), reserves the record the way relay_reserve() does, copies
 *    it, and commits it by adding its size to the header's `used` (plus
 *    nrec and last_ts).  So at any time a sub-buffer holds exactly
 *    hdr_size + used bytes of finished records, and once CLOSED its header
 *    is final: nothing writes to it again until the slot is reused.
 *  - Drops are counted where the reservation fails (relay_switch_subbuf()
 *    returns 0 because the discard-mode buffer is full), never in the
 *    callback, which relay also calls for flushes and resets.
 *  - trace_stop() sets the state, waits for writers with synchronize_rcu()
 *    and then marks each current sub-buffer CLOSED instead of calling
 *    relay_flush(): a flush would make the flight recorder overwrite its
 *    oldest sub-buffer.  The next record after a restart sees the CLOSED
 *    flag and switches.
 *  - `ktrace read` (kclient/relay.c) uses relay's mmap mode: it maps the
 *    relay file, copies each sub-buffer once it is CLOSED (hdr_size + used
 *    bytes: the copy is a sequence of whole sub-buffers, "layout packed"),
 *    and tells the module through the channel's `consumed` file which
 *    sub-buffers it has copied; kt_consume() passes that on to relay
 *    (relay_subbufs_consumed()), which frees them for a discard-mode
 *    writer.  relay's read() is not used: in discard mode it can skip a
 *    sub-buffer when it runs while a writer finds the buffer full (it
 *    applies the overwrite-mode catch-up while buf->offset is briefly 0).
 *    The module keeps the reader's position (rd_next) itself because the
 *    current sub-buffer, CLOSED by a stop, can be copied before relay
 *    counts it as produced; kt_sync_consumed() catches relay up at the
 *    next switch.
 *
 * NMI: relay's reservation is a read-modify-write of buf->offset that an
 * NMI could interrupt, so records from NMI context are refused and counted
 * in dropped.  A writer that re-enters itself on one CPU (a probe fired
 * from inside the writer) is refused the same way.
 */
#include <linux/debugfs.h>
#include <linux/hardirq.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include "ktrace_internal.h"

/* ------------------------------------------------------------------ */
/* relay callbacks                                                     */
/* ------------------------------------------------------------------ */

static inline struct ktrace_subbuf *kt_hdr(void *subbuf)
{
	return subbuf;
}

static inline struct kt_cpu *kt_stream_pcpu(struct trace_info *t, struct rchan_buf *buf)
{
	return per_cpu_ptr(t->pcpu, (t->flags & TRACE_GLOBAL_CHANNEL) ? 0 : buf->cpu);
}

/*
 * kt_sync_consumed() - make relay's consumed count cover what the reader
 * copied (rd_next), as far as relay has produced.  Only ever advances it:
 * called by the writer at a switch and by the reader's consumed file.
 */
static void kt_sync_consumed(struct trace_info *t, struct rchan_buf *buf)
{
	u64 want = READ_ONCE(kt_stream_pcpu(t, buf)->rd_next);
	size_t old, target;

	for (;;) {
		old = READ_ONCE(buf->subbufs_consumed);
		target = min_t(u64, want, READ_ONCE(buf->subbufs_produced));
		if (target <= old)
			return;
		if (cmpxchg(&buf->subbufs_consumed, old, target) == old)
			return;
	}
}

/**
 * kt_consume() - the reader copied every sub-buffer of @stream below @seq.
 * @t:      the channel (mutex held).
 * @stream: relay file index (CPU number; 0 for a global channel).
 * @seq:    sequence number of the first sub-buffer not copied.
 * Return: 0, or -EINVAL (no such stream; @seq behind the previous value
 * or beyond the current sub-buffer + 1), -ENODEV.
 */
int kt_consume(struct trace_info *t, unsigned int stream, u64 seq)
{
	struct rchan *chan = t->rchan;
	struct rchan_buf *buf;
	struct kt_cpu *pc;

	lockdep_assert_held(&t->mutex);
	if (t->dead || !chan)
		return -ENODEV;
	if (stream >= nr_cpu_ids || ((t->flags & TRACE_GLOBAL_CHANNEL) && stream != 0) ||
	    !cpu_possible(stream))
		return -EINVAL;
	buf = *per_cpu_ptr(chan->buf, stream);
	if (!buf)
		return -EINVAL;
	pc = kt_stream_pcpu(t, buf);
	if (seq < pc->rd_next || seq > kt_hdr(READ_ONCE(buf->data))->seq + 1)
		return -EINVAL;
	WRITE_ONCE(pc->rd_next, seq);
	kt_sync_consumed(t, buf);
	return 0;
}

/*
 * kt_subbuf_start() - relay's sub-buffer switch callback.  Runs inside a
 * writer (interrupts off, global lock held), or at relay_open()/CPU
 * hotplug time with no writer on that buffer.
 */
static int kt_subbuf_start(struct rchan_buf *buf, void *subbuf, void *prev_subbuf,
			   size_t prev_padding)
{
	struct trace_info *t = buf->chan->private_data;
	struct ktrace_subbuf *sb = kt_hdr(subbuf);
	u64 seq = buf->subbufs_produced;
	u64 now;

	if (prev_subbuf) {
		struct ktrace_subbuf *prev = kt_hdr(prev_subbuf);

		WRITE_ONCE(prev->flags, prev->flags | KTRACE_SBF_CLOSED);
	}
	if (!(t->flags & TRACE_FLIGHT_CHANNEL)) {
		kt_sync_consumed(t, buf);
		if (relay_buf_full(buf))
			return 0; /* discard mode: the writer counts the drop */
	}

	/* Flight recorder: the slot's previous records are overwritten. */
	if (prev_subbuf && sb->magic == KTRACE_SUBBUF_MAGIC &&
	    sb->seq + buf->chan->n_subbufs == seq)
		this_cpu_add(t->pcpu->overwritten, sb->nrec);

	now = ktime_get_mono_fast_ns();
	sb->magic = KTRACE_SUBBUF_MAGIC;
	sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	sb->flags = (t->flags & TRACE_GLOBAL_CHANNEL) ? KTRACE_SBF_CTX : 0;
	sb->seq = seq;
	sb->first_ts = now;
	sb->first_ns = now; /* the raw clock is CLOCK_MONOTONIC ns */
	sb->last_ts = 0;
	sb->used = 0;
	sb->lost = 0;
	sb->nrec = 0;
	sb->tid = 0;
	sb->commit = 0;
	sb->cpu = (t->flags & TRACE_GLOBAL_CHANNEL) ? raw_smp_processor_id() : buf->cpu;
	sb->stream = (t->flags & TRACE_GLOBAL_CHANNEL) ? 0 : buf->cpu;
	/* The header is complete before relay's offset makes it readable. */
	smp_wmb();
	subbuf_start_reserve(buf, KTRACE_SUBBUF_HDR_SIZE);
	return 1;
}

static struct dentry *kt_create_buf_file(const char *filename, struct dentry *parent,
					 umode_t mode, struct rchan_buf *buf, int *is_global)
{
	struct trace_info *t = buf->chan->private_data;
	struct dentry *d;

	if (t->flags & TRACE_GLOBAL_CHANNEL)
		*is_global = 1;
	/*
	 * The "unsafe" variant hands relay's own file operations to the
	 * opener, so the reader can mmap() the buffer (debugfs's full proxy
	 * has no mmap).  relay keeps the buffer alive with its own reference
	 * count while the file is open, which is what the proxy would
	 * otherwise protect.
	 */
	d = debugfs_create_file_unsafe(filename, mode & 0400, parent, buf,
				       &relay_file_operations);
	return IS_ERR(d) ? NULL : d;
}

static int kt_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

static const struct rchan_callbacks kt_relay_callbacks = {
	.subbuf_start = kt_subbuf_start,
	.create_buf_file = kt_create_buf_file,
	.remove_buf_file = kt_remove_buf_file,
};

/* ------------------------------------------------------------------ */
/* Geometry and relay channel lifetime (under t->mutex)                */
/* ------------------------------------------------------------------ */

/**
 * kt_check_geometry() - validate a sub-buffer size and count.
 * @buf_size: bytes per sub-buffer.
 * @buf_nr:   sub-buffers per stream.
 * Return: 0 or -EINVAL.
 */
int kt_check_geometry(u32 buf_size, u32 buf_nr)
{
	if (buf_size < TRACE_MIN_BUF_SIZE || buf_size > TRACE_MAX_BUF_SIZE ||
	    !is_power_of_2(buf_size))
		return -EINVAL;
	if (buf_nr < 2 || buf_nr > TRACE_MAX_BUF_NR)
		return -EINVAL;
	if ((u64)buf_size * buf_nr > TRACE_MAX_STREAM_BYTES)
		return -EINVAL;
	return 0;
}

/**
 * kt_open_relay() - create the relay channel (files trace0..N in t->dir).
 * @t:        the channel.
 * @buf_size: bytes per sub-buffer.
 * @buf_nr:   sub-buffers per stream.
 * Return: 0 or -ENOMEM.
 */
int kt_open_relay(struct trace_info *t, u32 buf_size, u32 buf_nr)
{
	struct rchan *chan;
	int cpu;

	for_each_possible_cpu(cpu)
		per_cpu_ptr(t->pcpu, cpu)->rd_next = 0;

	chan = relay_open("trace", t->dir, buf_size, buf_nr, &kt_relay_callbacks, t);
	if (!chan)
		return -ENOMEM;
	t->buf_size = buf_size;
	t->buf_nr = buf_nr;
	WRITE_ONCE(t->rchan, chan);
	return 0;
}

/**
 * kt_close_relay() - close the relay channel.  The caller made sure no
 * writer can be using it (stopped + synchronize_rcu()).
 * @t: the channel.
 */
void kt_close_relay(struct trace_info *t)
{
	struct rchan *chan = t->rchan;

	WRITE_ONCE(t->rchan, NULL);
	relay_close(chan);
}

/**
 * kt_resize() - replace the relay channel by one of a new geometry; the
 * channel must be stopped.
 * @t:        the channel (mutex held).
 * @buf_size: new bytes per sub-buffer.
 * @buf_nr:   new sub-buffers per stream.  Readers holding the old files keep the old
 * buffers until they close them.  On allocation failure the old geometry
 * is restored if possible.
 * Return: 0, -EINVAL, -EBUSY (running), -ENOMEM, -ENODEV (dead).
 */
int kt_resize(struct trace_info *t, u32 buf_size, u32 buf_nr)
{
	u32 old_size = t->buf_size, old_nr = t->buf_nr;
	int ret;

	lockdep_assert_held(&t->mutex);
	if (t->dead)
		return -ENODEV;
	ret = kt_check_geometry(buf_size, buf_nr);
	if (ret)
		return ret;
	if (t->running)
		return -EBUSY;
	if (t->rchan && buf_size == old_size && buf_nr == old_nr)
		return 0;
	synchronize_rcu();
	if (t->rchan)
		kt_close_relay(t);
	ret = kt_open_relay(t, buf_size, buf_nr);
	if (ret && kt_open_relay(t, old_size, old_nr))
		pr_warn("ktrace: %s: no buffers left after a failed resize\n", t->name);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Start / stop                                                        */
/* ------------------------------------------------------------------ */

int kt_start_locked(struct trace_info *t)
{
	lockdep_assert_held(&t->mutex);
	if (t->dead || !t->rchan)
		return -ENODEV;
	if (!t->running) {
		t->start_ns = ktime_get_mono_fast_ns();
		kt_crash_started(t); /* the catalogue, into the crash region */
		WRITE_ONCE(t->running, 1);
		if (t->state_hook) { /* LKST: attach the probes */
			int ret = t->state_hook(t, true);

			if (ret) {
				kt_stop_locked(t);
				return ret;
			}
		}
	}
	return 0;
}

void kt_stop_locked(struct trace_info *t)
{
	struct rchan *chan = t->rchan;
	int cpu;

	lockdep_assert_held(&t->mutex);
	if (!t->running)
		return;
	if (t->state_hook) /* LKST: detach the probes first */
		t->state_hook(t, false);
	WRITE_ONCE(t->running, 0);
	t->stop_ns = ktime_get_mono_fast_ns();
	/* Writers run with interrupts off: an RCU read-side section. */
	synchronize_rcu();
	if (!chan)
		return;
	for_each_possible_cpu(cpu) {
		struct rchan_buf *buf = *per_cpu_ptr(chan->buf, cpu);
		struct ktrace_subbuf *sb;

		if (!buf)
			continue;
		sb = kt_hdr(buf->data);
		WRITE_ONCE(sb->flags, sb->flags | KTRACE_SBF_CLOSED);
	}
	smp_mb();
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

/**
 * kt_stats() - counters of one CPU (@cpu >= 0) or of all CPUs (@cpu < 0;
 * then @dropped includes NMI refusals).  Racy snapshot while running.
 * @t:           the channel.
 * @cpu:         a CPU, or -1 for all.
 * @written:     out: records stored.
 * @dropped:     out: records refused.
 * @overwritten: out: records lost to flight-recorder reuse.
 */
void kt_stats(struct trace_info *t, int cpu, u64 *written, u64 *dropped, u64 *overwritten)
{
	u64 w = 0, d = 0, o = 0;
	int c;

	for_each_possible_cpu(c) {
		struct kt_cpu *pc = per_cpu_ptr(t->pcpu, c);

		if (cpu >= 0 && c != cpu)
			continue;
		w += READ_ONCE(pc->written);
		d += READ_ONCE(pc->dropped);
		o += READ_ONCE(pc->overwritten);
	}
	if (cpu < 0)
		d += atomic64_read(&t->nmi_dropped);
	*written = w;
	*dropped = d;
	*overwritten = o;
}

/*
 * kt_subbuf_seq() - the sequence number of this CPU's current sub-buffer
 * of @t (per-CPU channels), U64_MAX when @t has no buffers.  Context:
 * preemption disabled (a probe).
 */
u64 kt_subbuf_seq(struct trace_info *t)
{
	struct rchan *chan = READ_ONCE(t->rchan);
	struct rchan_buf *buf = chan ? *this_cpu_ptr(chan->buf) : NULL;

	return buf ? READ_ONCE(buf->subbufs_produced) : U64_MAX;
}

u64 kt_total_dropped(struct trace_info *t)
{
	u64 w, d, o;

	kt_stats(t, -1, &w, &d, &o);
	return d;
}

/* ------------------------------------------------------------------ */
/* The writer                                                          */
/* ------------------------------------------------------------------ */

static inline unsigned int kt_ctx_depth(void)
{
	if (in_hardirq())
		return 2;
	if (in_serving_softirq())
		return 1;
	return 0;
}

/*
 * kt_write() - store one record: @hdr is the header word without its
 * timestamp.  See the protocol at the top of this file.
 */
static __always_inline int kt_write(struct trace_info *t, u64 hdr, const u64 *payload,
				    unsigned int nwords)
{
	struct ktrace_subbuf *sb;
	struct rchan_buf *buf;
	struct rchan *chan;
	struct kt_cpu *pc;
	unsigned long flags;
	unsigned int ctx;
	size_t len;
	u64 ts, *rec;
	int ret = 0;

	if (!READ_ONCE(t->running))
		return -ENODATA;
	if (unlikely(in_nmi())) {
		atomic64_inc(&t->nmi_dropped);
		return -EBUSY;
	}

	local_irq_save(flags);
	pc = this_cpu_ptr(t->pcpu);
	if (unlikely(pc->nesting)) {
		pc->dropped++;
		local_irq_restore(flags);
		return -EBUSY;
	}
	pc->nesting = 1;
	/* The check that counts: trace_stop() waits for this section. */
	chan = READ_ONCE(t->rchan);
	if (unlikely(!READ_ONCE(t->running) || !chan)) {
		ret = -ENODATA;
		goto out;
	}
	ctx = (t->flags & TRACE_GLOBAL_CHANNEL) ? 1 : 0;
	len = 8 * (1 + ctx + nwords);
	if (ctx) {
		/*
		 * In a panic or an oops the holder may be a CPU that
		 * smp_send_stop() stopped (its NMI fallback stops CPUs with
		 * interrupts off): never wait for it there.
		 */
		if (unlikely(READ_ONCE(oops_in_progress))) {
			if (!raw_spin_trylock(&t->lock)) {
				pc->dropped++;
				ret = -EBUSY;
				goto out;
			}
		} else {
			raw_spin_lock(&t->lock);
		}
	}
	buf = *this_cpu_ptr(chan->buf);
	if (unlikely(!buf)) { /* a CPU whose buffer relay could not allocate */
		pc->dropped++;
		ret = -ENOSPC;
		goto unlock;
	}
	ts = ktime_get_mono_fast_ns();
	sb = kt_hdr(buf->data);
	if (unlikely(buf->offset + len > chan->subbuf_size ||
		     (READ_ONCE(sb->flags) & KTRACE_SBF_CLOSED) ||
		     (s64)(ts - sb->first_ts) >= (s64)KTRACE_TS_WINDOW)) {
		if (!relay_switch_subbuf(buf, len)) {
			/* Discard mode and full: the gap follows buf->data. */
			sb = kt_hdr(buf->data);
			sb->lost++;
			pc->dropped++;
			ret = -ENOSPC;
			goto unlock;
		}
		sb = kt_hdr(buf->data);
	}
	rec = buf->data + buf->offset;
	buf->offset += len;
	rec[0] = hdr | (ts & KTRACE_TS_MASK);
	if (ctx)
		rec[1] = KTRACE_CTX(current->pid, raw_smp_processor_id(), kt_ctx_depth());
	memcpy(rec + 1 + ctx, payload, 8 * nwords);
	/* Commit: the header counts only finished records. */
	sb->nrec++;
	sb->last_ts = ts;
	WRITE_ONCE(sb->used, sb->used + len);
	pc->written++;
	{ /* crash extraction: a checked copy in the crash region */
		struct kt_crash_chan *kc = READ_ONCE(t->crash);

		if (unlikely(kc))
			kt_crash_write(kc, ctx ? 0 : raw_smp_processor_id(), rec, len / 8, ts);
	}
unlock:
	if (ctx)
		raw_spin_unlock(&t->lock);
out:
	pc->nesting = 0;
	local_irq_restore(flags);
	return ret;
}

int trace_record(struct trace_info *trace, unsigned int cls, u16 id, const u64 *words,
		 unsigned int nwords)
{
	if (cls == KTRACE_CLASS_INVALID || cls > 15 || nwords > KTRACE_MAX_WORDS)
		return -EINVAL;
	return kt_write(trace, KTRACE_REC_HDR(0, cls, nwords, id), words, nwords);
}
EXPORT_SYMBOL_GPL(trace_record);

int trace_log2(struct trace_info *trace, u8 func, u8 event, u64 u1, u64 u2)
{
	u64 w[2] = { u1, u2 };

	return kt_write(trace, KTRACE_REC_HDR(0, KTRACE_CLASS_LOG2, 2, KTRACE_EVENT_ID(func, event)),
			w, 2);
}
EXPORT_SYMBOL_GPL(trace_log2);

int trace_log4(struct trace_info *trace, u8 func, u8 event, u32 u1, u32 u2, u32 u3, u32 u4)
{
	u64 w[2] = { (u64)u1 | ((u64)u2 << 32), (u64)u3 | ((u64)u4 << 32) };

	return kt_write(trace, KTRACE_REC_HDR(0, KTRACE_CLASS_LOG4, 2, KTRACE_EVENT_ID(func, event)),
			w, 2);
}
EXPORT_SYMBOL_GPL(trace_log4);

/* ------------------------------------------------------------------ */
/* Seed 003's API                                                      */
/* ------------------------------------------------------------------ */

static bool kt_valid_name(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, KT_NAME_MAX);
	if (n == 0 || n >= KT_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s <= ' ' || *s > '~')
			return false;
	return true;
}

struct trace_info *trace_setup(const char *root, const char *name, u32 buf_size, u32 buf_nr,
			       u32 flags)
{
	struct trace_info *t;
	struct dentry *rootd;
	int ret;

	if (!buf_size)
		buf_size = TRACE_DEFAULT_BUF_SIZE;
	if (!buf_nr)
		buf_nr = TRACE_DEFAULT_BUF_NR;
	if (!kt_valid_name(root) || !kt_valid_name(name) ||
	    (flags & ~(TRACE_GLOBAL_CHANNEL | TRACE_FLIGHT_CHANNEL | TRACE_DISABLE_STATE)) ||
	    kt_check_geometry(buf_size, buf_nr))
		return ERR_PTR(-EINVAL);

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->pcpu = alloc_percpu(struct kt_cpu);
	if (!t->pcpu) {
		kfree(t);
		return ERR_PTR(-ENOMEM);
	}
	t->flags = flags;
	raw_spin_lock_init(&t->lock);
	atomic64_set(&t->nmi_dropped, 0);
	mutex_init(&t->mutex);
	strscpy(t->name, name, sizeof(t->name));
	t->created_ns = ktime_get_mono_fast_ns();

	rootd = kt_root_get(root, &t->root);
	if (IS_ERR(rootd)) {
		ret = PTR_ERR(rootd);
		goto err_free;
	}
	t->dir = debugfs_create_dir(name, rootd);
	if (IS_ERR(t->dir)) {
		ret = PTR_ERR(t->dir);
		t->dir = NULL;
		goto err_root;
	}
	ret = kt_open_relay(t, buf_size, buf_nr);
	if (ret)
		goto err_dir;
	ret = kt_create_files(t);
	if (ret)
		goto err_relay;
	kt_crash_attach(t); /* flight channels: crash rings at the next layout */
	return t;

err_relay:
	kt_close_relay(t);
err_dir:
	debugfs_remove(t->dir);
err_root:
	kt_root_put(t->root);
err_free:
	free_percpu(t->pcpu);
	kfree(t);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(trace_setup);

int trace_start(struct trace_info *trace)
{
	int ret;

	mutex_lock(&trace->mutex);
	ret = kt_start_locked(trace);
	mutex_unlock(&trace->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(trace_start);

int trace_stop(struct trace_info *trace)
{
	int ret = 0;

	mutex_lock(&trace->mutex);
	if (trace->dead)
		ret = -ENODEV;
	else
		kt_stop_locked(trace);
	mutex_unlock(&trace->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(trace_stop);

int trace_running(const struct trace_info *trace)
{
	return READ_ONCE(trace->running) ? 1 : 0;
}
EXPORT_SYMBOL_GPL(trace_running);

void trace_cleanup(struct trace_info *trace)
{
	unsigned int i;

	if (IS_ERR_OR_NULL(trace))
		return;
	mutex_lock(&trace->mutex);
	kt_stop_locked(trace);
	trace->dead = true;
	mutex_unlock(&trace->mutex);
	kt_crash_detach(trace);
	/*
	 * Relay files first, then the control files: debugfs_remove() waits
	 * for control-file operations in progress, which see ->dead.
	 */
	if (trace->rchan)
		kt_close_relay(trace);
	debugfs_remove(trace->dir);
	kt_root_put(trace->root);

	for (i = 0; i < ARRAY_SIZE(trace->funcs); i++)
		kfree(trace->funcs[i]);
	for (i = 0; i < trace->nevents; i++) {
		kfree(trace->events[i].name);
		kfree(trace->events[i].category);
		kfree(trace->events[i].args);
	}
	kfree(trace->events);
	free_percpu(trace->pcpu);
	kfree(trace);
}
EXPORT_SYMBOL_GPL(trace_cleanup);

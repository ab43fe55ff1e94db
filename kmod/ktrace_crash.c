// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace_crash.c - crash extraction: a copy of every flight channel's
 * records in memory that survives a panic and a warm reboot, found again
 * by the next load of the module (docs/KMOD.md "Crash extraction", the
 * internals in docs/KMOD-DESIGN.md "Crash extraction"; the region's
 * format is the "crash region" block of include/ktrace/format.h and
 * docs/FORMAT.md).
 *
 * The memory: the module parameter crash_mem=SIZE@ADDR names physical
 * memory the kernel does not use (reserved on its command line, e.g.
 * memmap=16M$0x38000000 on x86); it must not be System RAM.  It is mapped
 * with memremap(MEMREMAP_WB).
 *
 * At load:
 *  - a region whose header is valid (magic, version, size and check) is
 *    KEPT: nothing writes to it; debugfs ktrace/crash/image (0400) gives
 *    its bytes to `ktrace read --crash`, info (0400) says what it holds
 *    (boot "previous" when its boot id is not this boot's), and writing
 *    "release" to release (0200) lays it out anew and arms it;
 *  - a region with the magic but a bad check or size is kept the same way
 *    (state "damaged"): never overwritten without the user saying so;
 *  - anything else (first use: zeros or garbage) is laid out and ARMED:
 *    the flight channels existing then (the default channel with flags=2,
 *    LKST with lkst_flags=2) share the space equally, one ring per
 *    possible CPU (one for a global channel).
 *
 * While armed, kt_write() (ktrace_chan.c) calls kt_crash_write() after
 * each record it stores in relay, inside the same interrupts-off section
 * (the channel's writer exclusion), so each ring has one writer at a time:
 * no lock, no allocation.  A record stores a zero word after its place
 * (the end mark), then its words, then its check word; a sub-buffer's
 * header is rewritten (its magic last) when it is opened.  A writer
 * stopped by the panic inside a record leaves one whose check fails: the
 * reader counts it as torn and never shows it.
 *
 * The panic time (CLOCK_MONOTONIC, the records' clock) is stamped into the
 * header: an end of the recording that does not come from the records
 * themselves.  A kprobe on panic() stamps its start; the panic notifier,
 * which runs only after panic() printed its stack dump to every console
 * and stopped the other CPUs (33 ms later on the test VM's emulated serial
 * console), stamps it only if the kprobe could not be registered.
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/panic_notifier.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include "ktrace_internal.h"

static char *crash_mem;
module_param(crash_mem, charp, 0400);
MODULE_PARM_DESC(crash_mem, "crash region SIZE@ADDR (reserved memory, e.g. 16M@0x38000000)");

static bool crash_test;
module_param(crash_test, bool, 0400);
MODULE_PARM_DESC(crash_test, "create debugfs ktrace/crash/tear (VM test: a torn record, then panic)");

#define KT_CRASH_SUBBUF 4096u
#define KT_CRASH_CAT_CAP (64u * 1024u)

/* The region's state; see the header comment. */
enum kt_crash_state { KT_CRASH_OFF, KT_CRASH_ARMED, KT_CRASH_KEPT, KT_CRASH_DAMAGED };
static const char *const kt_crash_state_name[] = { "off", "armed", "kept", "damaged" };

static DEFINE_MUTEX(kt_crash_lock); /* before any channel's mutex */
static LIST_HEAD(kt_crash_chans);   /* flight channels (trace_info.crash_node) */
static enum kt_crash_state kt_crash_state;
static u8 *kt_crash_base;           /* the mapped region */
static phys_addr_t kt_crash_addr;
static u64 kt_crash_size;
static u8 kt_crash_boot[16];        /* this boot's id */
static bool kt_crash_boot_random;   /* boot_id was unreadable */
static char kt_crash_why[96];       /* damaged: why */
static struct kt_root *kt_crash_root;
static struct dentry *kt_crash_dir;

static inline struct ktrace_crash_hdr *kt_crash_hdr(void)
{
	return (struct ktrace_crash_hdr *)kt_crash_base;
}

static u64 kt_crash_fold_bytes(u64 seed, const void *p, size_t bytes)
{
	return ktrace_crash_fold(seed, p, bytes / 8);
}

/* The header check, of the header as it is once its magic is stored. */
static u64 kt_crash_hdr_check(const struct ktrace_crash_hdr *h)
{
	u64 c = ktrace_crash_mix(KTRACE_CRASH_SEED ^ 1, KTRACE_CRASH_MAGIC);

	return ktrace_crash_final(kt_crash_fold_bytes(c, (const u8 *)h + 8,
						      offsetof(struct ktrace_crash_hdr, check) - 8));
}

static u64 kt_crash_chan_check(const struct ktrace_crash_chan *e)
{
	return ktrace_crash_final(kt_crash_fold_bytes(KTRACE_CRASH_SEED ^ 3, e,
						      offsetof(struct ktrace_crash_chan, check)));
}

static u64 kt_crash_note_check(const struct ktrace_crash_hdr *h)
{
	return ktrace_crash_final(kt_crash_fold_bytes(KTRACE_CRASH_SEED ^ 5, h->note,
						      KTRACE_CRASH_NOTE_MAX));
}

/* Catalogue check: cat_len, then the text as words, the last zero-padded. */
static u64 kt_crash_cat_check(const char *text, u64 len)
{
	u64 h = ktrace_crash_mix(KTRACE_CRASH_SEED ^ 4, len), w;
	u64 i;

	for (i = 0; i < len; i += 8) {
		w = 0;
		memcpy(&w, text + i, min_t(u64, 8, len - i));
		h = ktrace_crash_mix(h, w);
	}
	return ktrace_crash_final(h);
}

/* This boot's id from /proc/sys/kernel/random/boot_id, else random bytes. */
static void kt_crash_read_boot_id(void)
{
	struct file *f = filp_open("/proc/sys/kernel/random/boot_id", O_RDONLY, 0);
	char buf[40];
	loff_t pos = 0;
	ssize_t n = -EIO;
	int i, j;

	if (!IS_ERR(f)) {
		n = kernel_read(f, buf, 36, &pos);
		filp_close(f, NULL);
	}
	if (n == 36) {
		for (i = 0, j = 0; i < 36 && j < 16; i++) {
			if (buf[i] == '-')
				continue;
			if (i + 1 >= 36 || hex2bin(&kt_crash_boot[j], &buf[i], 1))
				break;
			i++;
			j++;
		}
		if (j == 16)
			return;
	}
	get_random_bytes(kt_crash_boot, sizeof(kt_crash_boot));
	kt_crash_boot_random = true;
}

/* ------------------------------------------------------------------ */
/* The writer                                                          */
/* ------------------------------------------------------------------ */

/*
 * Open the next sub-buffer of @r: its header (magic last) and a zero word
 * where its first record goes.  The rest is left from earlier laps; the
 * zero word each record stores after itself marks the end.
 */
static void kt_crash_open(struct kt_crash_chan *kc, struct kt_crash_ring *r, u64 ts,
			  unsigned int ring)
{
	struct ktrace_subbuf *sb;
	u64 w[5];

	if (r->sb)
		r->seq++;
	sb = (struct ktrace_subbuf *)(r->base + (size_t)(r->seq % kc->subbuf_nr) * kc->subbuf_size);
	WRITE_ONCE(sb->magic, 0);
	barrier();
	memset((u8 *)sb + 8, 0, KTRACE_SUBBUF_HDR_SIZE); /* header + first word */
	sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	sb->flags = KTRACE_SBF_CHECKED | ((kc->flags & TRACE_GLOBAL_CHANNEL) ? KTRACE_SBF_CTX : 0);
	sb->seq = r->seq;
	sb->first_ts = ts;
	sb->first_ns = ts;
	sb->cpu = (kc->flags & TRACE_GLOBAL_CHANNEL) ? raw_smp_processor_id() : ring;
	sb->stream = ring;
	w[0] = KTRACE_SUBBUF_MAGIC | ((u64)sb->hdr_size << 32) | ((u64)sb->flags << 48);
	w[1] = sb->seq;
	w[2] = sb->first_ts;
	w[3] = sb->first_ns;
	w[4] = sb->cpu | ((u64)sb->stream << 16);
	sb->commit = (u32)ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 6, w, 5));
	barrier();
	WRITE_ONCE(sb->magic, KTRACE_SUBBUF_MAGIC);
	r->sb = sb;
	r->off = KTRACE_SUBBUF_HDR_SIZE;
	r->hbase = ktrace_crash_mix(KTRACE_CRASH_SEED ^ 7, r->seq);
}

/**
 * kt_crash_write() - copy one record just stored in relay to the crash ring.
 * @kc:   the channel's crash rings (t->crash).
 * @ring: the CPU (0 for a global channel).
 * @rec:  the record's words: header, context word if any, payload.
 * @nw:   how many.
 * @ts:   its full timestamp (CLOCK_MONOTONIC ns).
 *
 * Context: inside kt_write()'s interrupts-off section (and the global
 * channel's lock), so nothing else writes ring @ring.  No lock, no
 * allocation, no atomic.
 */
void kt_crash_write(struct kt_crash_chan *kc, unsigned int ring, const u64 *rec,
		    unsigned int nw, u64 ts)
{
	struct kt_crash_ring *r;
	unsigned int i, len = 8 * (nw + 1);
	u64 *dst, h;

	if (unlikely(ring >= kc->nrings))
		return;
	r = &kc->rings[ring];
	if (unlikely(!r->sb || r->off + len > kc->subbuf_size ||
		     (s64)(ts - r->sb->first_ts) >= (s64)KTRACE_TS_WINDOW))
		kt_crash_open(kc, r, ts, ring);
	dst = (u64 *)((u8 *)r->sb + r->off);
	/* The end mark after the record first: a stop from here on leaves
	 * either the previous end mark at dst[0] or a record that fails. */
	if (r->off + len + 8 <= kc->subbuf_size)
		WRITE_ONCE(dst[nw + 1], 0);
	barrier();
	h = ktrace_crash_mix(r->hbase, r->off);
	for (i = 0; i < nw; i++) {
		dst[i] = rec[i];
		h = ktrace_crash_mix(h, rec[i]);
	}
	/* The check word last: until it is stored the record is torn. */
	barrier();
	WRITE_ONCE(dst[nw], ktrace_crash_final(h));
	barrier();
	r->off += len;
	r->sb->nrec++;
	r->sb->last_ts = ts;
	WRITE_ONCE(r->sb->used, r->off - KTRACE_SUBBUF_HDR_SIZE);
}

/* ------------------------------------------------------------------ */
/* Layout, arming, channels                                            */
/* ------------------------------------------------------------------ */

/* Store @t's catalogue and start time in its entry (t->mutex held). */
static void kt_crash_catalog_locked(struct trace_info *t)
{
	struct kt_crash_chan *kc = t->crash;
	struct ktrace_crash_chan *e;
	size_t len = 0;
	char *text;

	if (!kc)
		return;
	e = kc->entry;
	WRITE_ONCE(e->cat_len, 0);
	e->cat_check = 0;
	e->start_ns = t->start_ns;
	text = kt_catalog_text(t, &len);
	if (!text)
		return;
	len = min_t(size_t, len, e->cat_cap);
	memcpy(kt_crash_base + e->cat_off, text, len);
	e->cat_check = kt_crash_cat_check(text, len);
	barrier();
	WRITE_ONCE(e->cat_len, len);
	kvfree(text);
}

/**
 * kt_crash_started() - @t started: record its catalogue and start time in
 * the region.  Context: process, t->mutex held.
 */
void kt_crash_started(struct trace_info *t)
{
	kt_crash_catalog_locked(t);
}

/* Lay the region out for the listed channels and arm them (kt_crash_lock). */
static void kt_crash_arm(void)
{
	struct ktrace_crash_hdr *h = kt_crash_hdr();
	struct trace_info *t;
	unsigned int n = 0, i = 0;
	u64 data, share, off;

	list_for_each_entry(t, &kt_crash_chans, crash_node)
		n++;
	n = min_t(unsigned int, n, KTRACE_CRASH_MAX_CHAN);
	WRITE_ONCE(h->magic, 0);
	barrier();
	memset(kt_crash_base, 0, kt_crash_size);
	h->version = KTRACE_CRASH_VERSION;
	h->hdr_size = KTRACE_CRASH_HDR_SIZE;
	h->region_size = kt_crash_size;
	memcpy(h->boot_id, kt_crash_boot, sizeof(h->boot_id));
	h->created_ns = ktime_get_mono_fast_ns();
	h->realtime_ns = ktime_get_real_ns() - ktime_get_ns();
	h->chan_off = 256; /* after the header (216 bytes) */
	h->chan_size = KTRACE_CRASH_CHAN_SIZE;

	data = kt_crash_size - KTRACE_CRASH_HDR_SIZE;
	share = n ? data / n : 0;
	off = KTRACE_CRASH_HDR_SIZE;
	list_for_each_entry(t, &kt_crash_chans, crash_node) {
		struct ktrace_crash_chan *e;
		struct kt_crash_chan *kc;
		u32 nrings = (t->flags & TRACE_GLOBAL_CHANNEL) ? 1 : nr_cpu_ids;
		u64 nr;
		u32 r;

		if (i >= n)
			break;
		nr = share > KT_CRASH_CAT_CAP ?
		     (share - KT_CRASH_CAT_CAP) / ((u64)nrings * KT_CRASH_SUBBUF) : 0;
		if (nr < 2) {
			pr_warn("ktrace: crash region: no room for channel %s\n", t->name);
			continue;
		}
		nr = min_t(u64, nr, 1u << 20);
		kc = kzalloc(struct_size(kc, rings, nrings), GFP_KERNEL);
		if (!kc) {
			pr_warn("ktrace: crash region: out of memory for channel %s\n", t->name);
			continue;
		}
		e = (struct ktrace_crash_chan *)(kt_crash_base + h->chan_off +
						 (size_t)i * KTRACE_CRASH_CHAN_SIZE);
		strscpy(e->name, t->name, sizeof(e->name));
		e->flags = t->flags;
		e->nrings = nrings;
		e->subbuf_size = KT_CRASH_SUBBUF;
		e->subbuf_nr = nr;
		e->cat_off = off;
		e->cat_cap = KT_CRASH_CAT_CAP;
		e->ring_off = off + KT_CRASH_CAT_CAP;
		e->check = kt_crash_chan_check(e);
		kc->entry = e;
		kc->flags = t->flags;
		kc->nrings = nrings;
		kc->subbuf_size = KT_CRASH_SUBBUF;
		kc->subbuf_nr = nr;
		for (r = 0; r < nrings; r++)
			kc->rings[r].base = kt_crash_base + e->ring_off +
					    (size_t)r * KT_CRASH_SUBBUF * nr;
		off += share;
		i++;
		mutex_lock(&t->mutex);
		smp_store_release(&t->crash, kc);
		kt_crash_catalog_locked(t);
		mutex_unlock(&t->mutex);
	}
	h->nchan = i;
	h->check = kt_crash_hdr_check(h);
	barrier();
	WRITE_ONCE(h->magic, KTRACE_CRASH_MAGIC);
	kt_crash_state = KT_CRASH_ARMED;
	pr_info("ktrace: crash region %llu KiB at %pa armed for %u channel(s)\n",
		kt_crash_size >> 10, &kt_crash_addr, i);
}

/* Take the rings away from every channel (kt_crash_lock held). */
static void kt_crash_disarm(void)
{
	struct trace_info *t;

	list_for_each_entry(t, &kt_crash_chans, crash_node) {
		struct kt_crash_chan *kc;

		mutex_lock(&t->mutex);
		kc = t->crash;
		WRITE_ONCE(t->crash, NULL);
		mutex_unlock(&t->mutex);
		if (kc) {
			synchronize_rcu(); /* writers run with interrupts off */
			kfree(kc);
		}
	}
}

/**
 * kt_crash_attach() - @t (a flight channel) may get crash rings.  It gets
 * them at the next layout (module load, or release of a kept region).
 * Context: process (trace_setup()).
 */
void kt_crash_attach(struct trace_info *t)
{
	if (!(t->flags & TRACE_FLIGHT_CHANNEL))
		return;
	mutex_lock(&kt_crash_lock);
	list_add_tail(&t->crash_node, &kt_crash_chans);
	t->crash_listed = true;
	mutex_unlock(&kt_crash_lock);
}

/**
 * kt_crash_detach() - @t goes away (stopped: no writer).  Its part of the
 * region stays as it is.  Context: process (trace_cleanup()).
 */
void kt_crash_detach(struct trace_info *t)
{
	struct kt_crash_chan *kc;

	if (!t->crash_listed)
		return;
	mutex_lock(&kt_crash_lock);
	list_del(&t->crash_node);
	t->crash_listed = false;
	mutex_lock(&t->mutex);
	kc = t->crash;
	WRITE_ONCE(t->crash, NULL);
	mutex_unlock(&t->mutex);
	mutex_unlock(&kt_crash_lock);
	if (kc) {
		synchronize_rcu();
		kfree(kc);
	}
}

/* ------------------------------------------------------------------ */
/* Checking a region found at load                                     */
/* ------------------------------------------------------------------ */

/* Return: KT_CRASH_KEPT, KT_CRASH_DAMAGED, or KT_CRASH_OFF (not ours). */
static enum kt_crash_state kt_crash_check_region(void)
{
	struct ktrace_crash_hdr *h = kt_crash_hdr();
	u32 i;

	if (READ_ONCE(h->magic) != KTRACE_CRASH_MAGIC)
		return KT_CRASH_OFF;
	if (h->version != KTRACE_CRASH_VERSION || h->hdr_size != KTRACE_CRASH_HDR_SIZE) {
		snprintf(kt_crash_why, sizeof(kt_crash_why), "version %u, header size %u",
			 h->version, h->hdr_size);
		return KT_CRASH_DAMAGED;
	}
	if (h->check != kt_crash_hdr_check(h)) {
		snprintf(kt_crash_why, sizeof(kt_crash_why), "header check fails");
		return KT_CRASH_DAMAGED;
	}
	if (h->region_size != kt_crash_size) {
		snprintf(kt_crash_why, sizeof(kt_crash_why), "laid out for %llu bytes, not %llu",
			 h->region_size, kt_crash_size);
		return KT_CRASH_DAMAGED;
	}
	if (h->nchan > KTRACE_CRASH_MAX_CHAN || h->chan_size != KTRACE_CRASH_CHAN_SIZE ||
	    h->chan_off < sizeof(*h) ||
	    h->chan_off + (u64)h->nchan * h->chan_size > KTRACE_CRASH_HDR_SIZE) {
		snprintf(kt_crash_why, sizeof(kt_crash_why), "bad channel table");
		return KT_CRASH_DAMAGED;
	}
	for (i = 0; i < h->nchan; i++) {
		const struct ktrace_crash_chan *e =
			(const void *)(kt_crash_base + h->chan_off + (size_t)i * h->chan_size);

		if (e->check != kt_crash_chan_check(e)) {
			snprintf(kt_crash_why, sizeof(kt_crash_why), "channel %u: check fails", i);
			return KT_CRASH_DAMAGED;
		}
	}
	return KT_CRASH_KEPT;
}

/* ------------------------------------------------------------------ */
/* Panic notifier                                                      */
/* ------------------------------------------------------------------ */

/*
 * Stamp the panic: its start (the first stamp, from the kprobe, or from
 * the notifier without one) and, from the notifier, the time the other
 * CPUs were stopped.  One CPU at a time gets here (the kprobe lets the
 * first CPU in panic() through, panic() lets one CPU reach the notifier,
 * after the others stopped), so plain stores; the check word goes last.
 */
static void kt_crash_stamp(u32 src)
{
	struct ktrace_crash_hdr *h;
	u64 now = ktime_get_mono_fast_ns(), w[3];

	if (READ_ONCE(kt_crash_state) != KT_CRASH_ARMED)
		return;
	h = kt_crash_hdr();
	WRITE_ONCE(h->panic_check, 0);
	barrier();
	if (!h->panic_ns) {
		h->panic_ns = now;
		h->panic_cpu = raw_smp_processor_id();
		h->panic_src = src;
	}
	if (src == KTRACE_CRASH_PANIC_NOTIFIER)
		h->stop_ns = now;
	w[0] = h->panic_ns;
	w[1] = h->panic_cpu | ((u64)h->panic_src << 32);
	w[2] = h->stop_ns;
	barrier();
	WRITE_ONCE(h->panic_check, ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 2, w, 3)));
}

static atomic_t kt_crash_entered = ATOMIC_INIT(0);

static int kt_crash_panic_entry(struct kprobe *p, struct pt_regs *regs)
{
	/* several CPUs may enter panic(); the first one's time counts */
	if (atomic_cmpxchg(&kt_crash_entered, 0, 1) == 0)
		kt_crash_stamp(KTRACE_CRASH_PANIC_ENTRY);
	return 0;
}

static struct kprobe kt_crash_kp = {
	.symbol_name = "panic",
	.pre_handler = kt_crash_panic_entry,
};

static bool kt_crash_kp_on;

static int kt_crash_panic(struct notifier_block *nb, unsigned long action, void *data)
{
	kt_crash_stamp(KTRACE_CRASH_PANIC_NOTIFIER);
	return NOTIFY_DONE;
}

static struct notifier_block kt_crash_nb = {
	.notifier_call = kt_crash_panic,
	.priority = INT_MAX, /* first: before other notifiers that may hang */
};

/* ------------------------------------------------------------------ */
/* debugfs ktrace/crash/                                               */
/* ------------------------------------------------------------------ */

static int kt_crash_info_open(struct inode *inode, struct file *f)
{
	struct ktrace_crash_hdr *h = kt_crash_hdr();
	size_t cap = 4096, len = 0;
	char *buf = kvzalloc(cap, GFP_KERNEL);
	u64 w[3];
	u32 i;

	if (!buf)
		return -ENOMEM;
	mutex_lock(&kt_crash_lock);
	len += scnprintf(buf + len, cap - len, "state %s\nregion-size %llu\n",
			 kt_crash_state_name[kt_crash_state], kt_crash_size);
	if (kt_crash_state == KT_CRASH_DAMAGED)
		len += scnprintf(buf + len, cap - len, "damaged %s\n", kt_crash_why);
	if (kt_crash_state == KT_CRASH_KEPT || kt_crash_state == KT_CRASH_ARMED) {
		bool same = !memcmp(h->boot_id, kt_crash_boot, 16);

		len += scnprintf(buf + len, cap - len, "boot %s\nboot-id %pUb\nthis-boot-id %pUb%s\n",
				 same ? "this" : "previous", h->boot_id, kt_crash_boot,
				 kt_crash_boot_random ? " random" : "");
		w[0] = h->panic_ns;
		w[1] = h->panic_cpu | ((u64)h->panic_src << 32);
		w[2] = h->stop_ns;
		if (h->panic_ns && h->panic_check ==
		    ktrace_crash_final(ktrace_crash_fold(KTRACE_CRASH_SEED ^ 2, w, 3)))
			len += scnprintf(buf + len, cap - len,
					 "panic-ns %llu\npanic-cpu %u\npanic-src %s\nstop-ns %llu\n",
					 h->panic_ns, h->panic_cpu,
					 h->panic_src == KTRACE_CRASH_PANIC_ENTRY ? "entry" : "notifier",
					 h->stop_ns);
		else
			len += scnprintf(buf + len, cap - len, "panic-ns 0\n");
		len += scnprintf(buf + len, cap - len, "created-ns %llu\nnote %s\n", h->created_ns,
				 h->note_check && h->note_check == kt_crash_note_check(h) &&
				 h->note[0] ? h->note : "-");
		for (i = 0; i < h->nchan; i++) {
			const struct ktrace_crash_chan *e =
				(const void *)(kt_crash_base + h->chan_off + (size_t)i * h->chan_size);

			len += scnprintf(buf + len, cap - len,
					 "channel %.63s rings %u subbuf-size %u subbuf-nr %u start-ns %llu\n",
					 e->name, e->nrings, e->subbuf_size, e->subbuf_nr, e->start_ns);
		}
	}
	mutex_unlock(&kt_crash_lock);
	f->private_data = buf;
	return 0;
}

static ssize_t kt_crash_info_read(struct file *f, char __user *u, size_t c, loff_t *p)
{
	const char *buf = f->private_data;

	return simple_read_from_buffer(u, c, p, buf, strnlen(buf, 4096));
}

static int kt_crash_info_release(struct inode *inode, struct file *f)
{
	kvfree(f->private_data);
	return 0;
}

static const struct file_operations kt_crash_info_fops = {
	.owner = THIS_MODULE,
	.open = kt_crash_info_open,
	.read = kt_crash_info_read,
	.release = kt_crash_info_release,
	.llseek = default_llseek,
};

static ssize_t kt_crash_image_read(struct file *f, char __user *u, size_t c, loff_t *p)
{
	return simple_read_from_buffer(u, c, p, kt_crash_base, kt_crash_size);
}

static const struct file_operations kt_crash_image_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_crash_image_read,
	.llseek = default_llseek,
};

#define KT_CRASH_WRITE_MAX 64

/* One write() of the whole value, an optional trailing newline. */
static int kt_crash_get_value(char *kbuf, const char __user *u, size_t c, loff_t *p)
{
	if (*p != 0 || c == 0 || c >= KT_CRASH_WRITE_MAX)
		return -EINVAL;
	if (copy_from_user(kbuf, u, c))
		return -EFAULT;
	kbuf[c] = '\0';
	if (kbuf[c - 1] == '\n')
		kbuf[--c] = '\0';
	if (c == 0 || strlen(kbuf) != c)
		return -EINVAL;
	return 0;
}

static ssize_t kt_crash_release_write(struct file *f, const char __user *u, size_t c, loff_t *p)
{
	char kbuf[KT_CRASH_WRITE_MAX];
	int ret = kt_crash_get_value(kbuf, u, c, p);

	if (ret)
		return ret;
	if (strcmp(kbuf, "release"))
		return -EINVAL;
	mutex_lock(&kt_crash_lock);
	if (kt_crash_state == KT_CRASH_KEPT || kt_crash_state == KT_CRASH_DAMAGED) {
		kt_crash_arm();
		ret = 0;
	} else {
		ret = -EINVAL; /* armed: nothing to release */
	}
	mutex_unlock(&kt_crash_lock);
	if (ret)
		return ret;
	*p += c;
	return c;
}

static const struct file_operations kt_crash_release_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kt_crash_release_write,
	.llseek = default_llseek,
};

static ssize_t kt_crash_note_read(struct file *f, char __user *u, size_t c, loff_t *p)
{
	struct ktrace_crash_hdr *h = kt_crash_hdr();
	char kbuf[KTRACE_CRASH_NOTE_MAX + 1];
	int n = 0;

	mutex_lock(&kt_crash_lock);
	if (kt_crash_state != KT_CRASH_DAMAGED && h->note_check &&
	    h->note_check == kt_crash_note_check(h) && h->note[0])
		n = scnprintf(kbuf, sizeof(kbuf), "%.63s\n", h->note);
	mutex_unlock(&kt_crash_lock);
	return simple_read_from_buffer(u, c, p, kbuf, n);
}

static ssize_t kt_crash_note_write(struct file *f, const char __user *u, size_t c, loff_t *p)
{
	struct ktrace_crash_hdr *h = kt_crash_hdr();
	char kbuf[KT_CRASH_WRITE_MAX];
	int ret = kt_crash_get_value(kbuf, u, c, p), i;

	if (ret)
		return ret;
	for (i = 0; kbuf[i]; i++)
		if (kbuf[i] < ' ' || kbuf[i] > '~')
			return -EINVAL;
	mutex_lock(&kt_crash_lock);
	if (kt_crash_state == KT_CRASH_ARMED) {
		WRITE_ONCE(h->note_check, 0);
		barrier();
		memset(h->note, 0, sizeof(h->note));
		strscpy(h->note, kbuf, sizeof(h->note));
		barrier();
		WRITE_ONCE(h->note_check, kt_crash_note_check(h));
	} else {
		ret = -EBUSY; /* the note of a kept region is the old boot's */
	}
	mutex_unlock(&kt_crash_lock);
	if (ret)
		return ret;
	*p += c;
	return c;
}

/*
 * crash/tear (crash_test=1 only, 0200): write "panic" to leave a record
 * torn exactly as a CPU stopped inside kt_crash_write() would (its header
 * and first payload word stored, the rest and the check word not) in this
 * CPU's ring of the LKST channel (else the first armed one), then panic.
 * The VM test (kmod/tests/suite_crash.sh) checks that the reader finds it
 * torn and never shows it.  Interrupts are off from the choice of the ring
 * on, so no writer of that ring runs meanwhile.
 */
static ssize_t kt_crash_tear_write(struct file *f, const char __user *u, size_t c, loff_t *p)
{
	struct kt_crash_chan *kc = NULL;
	struct kt_crash_ring *r;
	struct trace_info *t;
	char kbuf[KT_CRASH_WRITE_MAX];
	unsigned int ring;
	u64 ts, *dst;
	int ret = kt_crash_get_value(kbuf, u, c, p);

	if (ret)
		return ret;
	if (strcmp(kbuf, "panic"))
		return -EINVAL;
	mutex_lock(&kt_crash_lock);
	list_for_each_entry(t, &kt_crash_chans, crash_node) {
		struct kt_crash_chan *tc = READ_ONCE(t->crash);

		if (tc && !(tc->flags & TRACE_GLOBAL_CHANNEL) && (!kc || !strcmp(t->name, "lkst")))
			kc = tc;
	}
	mutex_unlock(&kt_crash_lock);
	if (kt_crash_state != KT_CRASH_ARMED || !kc)
		return -EINVAL;
	local_irq_disable();
	ring = raw_smp_processor_id();
	r = &kc->rings[ring];
	ts = ktime_get_mono_fast_ns();
	if (!r->sb || r->off + 8 * 7 > kc->subbuf_size)
		kt_crash_open(kc, r, ts, ring);
	dst = (u64 *)((u8 *)r->sb + r->off);
	dst[0] = KTRACE_REC_HDR(ts, KTRACE_CLASS_KEVENT, 5, 0x30); /* SYSCALL_ENTRY */
	dst[1] = current->pid;
	panic("ktrace: crash/tear: a record torn on purpose (crash_test)");
}

static const struct file_operations kt_crash_tear_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kt_crash_tear_write,
	.llseek = default_llseek,
};

static const struct file_operations kt_crash_note_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_crash_note_read,
	.write = kt_crash_note_write,
	.llseek = default_llseek,
};

/* ------------------------------------------------------------------ */
/* Module load / unload                                                */
/* ------------------------------------------------------------------ */

/* Parse SIZE@ADDR (memparse suffixes).  Return 0 or -EINVAL. */
static int kt_crash_parse(const char *s, u64 *size, u64 *addr)
{
	char *end;

	*size = memparse(s, &end);
	if (end == s || *end != '@')
		return -EINVAL;
	s = end + 1;
	*addr = memparse(s, &end);
	if (end == s || *end)
		return -EINVAL;
	return 0;
}

/**
 * kt_crash_init() - map the crash_mem= region, keep or arm it, create
 * debugfs ktrace/crash/.  Called after the channels of the module exist.
 * Context: module init.
 * Return: 0 (also when crash_mem is not set), -EINVAL for a bad
 * parameter or a region that is System RAM, -ENOMEM, -EBUSY.
 */
int kt_crash_init(void)
{
	struct dentry *root;
	u64 size, addr;
	int ret;

	if (!crash_mem || !*crash_mem)
		return 0;
	if (kt_crash_parse(crash_mem, &size, &addr) || size < 64 * 1024 || size > (1ull << 34) ||
	    !PAGE_ALIGNED(size) || !PAGE_ALIGNED(addr)) {
		pr_err("ktrace: crash_mem=%s: expected SIZE@ADDR, page-aligned, 64K..16G\n", crash_mem);
		return -EINVAL;
	}
	if (region_intersects(addr, size, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT) {
		pr_err("ktrace: crash_mem=%s is System RAM: reserve it first (memmap=SIZE$ADDR)\n",
		       crash_mem);
		return -EINVAL;
	}
	kt_crash_base = memremap(addr, size, MEMREMAP_WB);
	if (!kt_crash_base) {
		pr_err("ktrace: crash_mem=%s: cannot map it\n", crash_mem);
		return -ENOMEM;
	}
	kt_crash_addr = addr;
	kt_crash_size = size;
	kt_crash_read_boot_id();

	mutex_lock(&kt_crash_lock);
	kt_crash_state = kt_crash_check_region();
	if (kt_crash_state == KT_CRASH_OFF) {
		kt_crash_arm();
	} else {
		struct ktrace_crash_hdr *h = kt_crash_hdr();

		pr_info("ktrace: crash region at %pa holds records of %s (%s): read them with `ktrace read --crash`, then release it\n",
			&kt_crash_addr,
			kt_crash_state == KT_CRASH_DAMAGED ? "unknown origin" :
			!memcmp(h->boot_id, kt_crash_boot, 16) ? "this boot" : "a previous boot",
			kt_crash_state == KT_CRASH_DAMAGED ? kt_crash_why :
			h->panic_ns ? "it panicked" : "no panic stamped");
	}
	mutex_unlock(&kt_crash_lock);

	root = kt_root_get("ktrace", &kt_crash_root);
	if (IS_ERR(root)) {
		ret = PTR_ERR(root);
		kt_crash_root = NULL;
		goto err;
	}
	kt_crash_dir = debugfs_create_dir("crash", root);
	if (IS_ERR(kt_crash_dir)) {
		ret = PTR_ERR(kt_crash_dir);
		kt_crash_dir = NULL;
		goto err;
	}
	debugfs_create_file("info", 0400, kt_crash_dir, NULL, &kt_crash_info_fops);
	debugfs_create_file_size("image", 0400, kt_crash_dir, NULL, &kt_crash_image_fops, size);
	debugfs_create_file("note", 0600, kt_crash_dir, NULL, &kt_crash_note_fops);
	debugfs_create_file("release", 0200, kt_crash_dir, NULL, &kt_crash_release_fops);
	if (crash_test)
		debugfs_create_file("tear", 0200, kt_crash_dir, NULL, &kt_crash_tear_fops);
	atomic_notifier_chain_register(&panic_notifier_list, &kt_crash_nb);
	ret = register_kprobe(&kt_crash_kp);
	if (ret)
		pr_info("ktrace: crash region: no kprobe on panic() (%d): the panic notifier stamps the panic time\n",
			ret);
	kt_crash_kp_on = !ret;
	return 0;
err:
	kt_crash_exit();
	return ret;
}

/**
 * kt_crash_exit() - unregister, remove the files, unmap.  The channels
 * were cleaned up (detached) before.  Context: module exit.
 */
void kt_crash_exit(void)
{
	if (!kt_crash_base)
		return;
	if (kt_crash_kp_on)
		unregister_kprobe(&kt_crash_kp);
	kt_crash_kp_on = false;
	atomic_notifier_chain_unregister(&panic_notifier_list, &kt_crash_nb);
	debugfs_remove(kt_crash_dir);
	kt_crash_dir = NULL;
	if (kt_crash_root)
		kt_root_put(kt_crash_root);
	kt_crash_root = NULL;
	mutex_lock(&kt_crash_lock);
	kt_crash_disarm();
	kt_crash_state = KT_CRASH_OFF;
	mutex_unlock(&kt_crash_lock);
	memunmap(kt_crash_base);
	kt_crash_base = NULL;
}

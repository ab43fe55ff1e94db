/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace_internal.h - what the files of ktrace.ko share: the channel
 * structure and the helpers between the relay part (ktrace_chan.c), the
 * debugfs control files (ktrace_fs.c) and module setup (ktrace_main.c).
 * Internal names start with kt_ so they never meet a kernel symbol.
 */
#ifndef KTRACE_INTERNAL_H
#define KTRACE_INTERNAL_H

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include "ktrace_kernel.h"

#define KT_NAME_MAX 64
#define KT_MAX_EVENTS 256

/*
 * struct kt_cpu - per-CPU writer state of one channel.  Only the CPU
 * itself writes these, with interrupts disabled (the sub-buffer callback
 * runs inside a writer, or with no writer active), so plain increments are
 * exact; readers sum them without a lock.
 */
struct kt_cpu {
	u64 written;     /* records stored */
	u64 dropped;     /* records refused: buffer full, nested write */
	u64 overwritten; /* records lost to flight-recorder reuse */
	unsigned int nesting;
	/*
	 * Stream state (for this CPU's relay buffer; index 0 of a global
	 * channel): the reader has copied every sub-buffer below rd_next
	 * (written through the consumed file, under the mutex).
	 */
	u64 rd_next;
};

struct kt_root;

/*
 * Crash rings of a channel (ktrace_crash.c): one ring per CPU (one for a
 * global channel) in the crash region.  A ring is written only inside
 * kt_write()'s interrupts-off section, so by one writer at a time.
 */
struct kt_crash_ring {
	u8 *base;                 /* slot 0 in the region */
	struct ktrace_subbuf *sb; /* open sub-buffer, NULL before the first */
	u64 seq;                  /* its seq */
	u64 hbase;                /* check of (seed, seq), the records' start */
	u32 off;                  /* next record's offset in it */
};

struct kt_crash_chan {
	struct ktrace_crash_chan *entry; /* in the region */
	u32 flags, nrings, subbuf_size, subbuf_nr;
	struct kt_crash_ring rings[];
};

/* One `event` line of the catalogue. */
struct kt_event {
	u16 id;
	bool is_log4;
	char *name, *category, *args;
};

/*
 * struct trace_info - a channel.  Writers read @running, @rchan, @flags
 * and @pcpu with interrupts disabled; everything else is changed under
 * @mutex by the control paths, which wait for writers with
 * synchronize_rcu() (an interrupts-off section is an RCU read-side
 * critical section) before touching the relay channel.
 */
struct trace_info {
	int running;               /* 1 = recording (READ_ONCE/WRITE_ONCE) */
	u32 flags;                 /* TRACE_* */
	struct rchan *rchan;       /* NULL after a failed resize */
	struct kt_cpu __percpu *pcpu;
	raw_spinlock_t lock;       /* serialises TRACE_GLOBAL_CHANNEL writers */
	atomic64_t nmi_dropped;    /* records refused in NMI context */

	struct mutex mutex;        /* control: start/stop/resize/catalogue */
	bool dead;                 /* trace_cleanup() began */
	u32 buf_size, buf_nr;
	u64 created_ns, start_ns, stop_ns;
	char name[KT_NAME_MAX];
	struct kt_root *root;
	struct dentry *dir;
	char *funcs[256];
	struct kt_event *events;
	unsigned int nevents;

	/*
	 * Set by the owner of the channel (the LKST tracer, lkst_main.c),
	 * under @mutex: @catalog_extra is appended to the catalog file as it
	 * is (metadata lines); @state_hook is called under @mutex right after
	 * the channel started (an error undoes the start) and right before it
	 * stops.
	 */
	const char *catalog_extra;
	int (*state_hook)(struct trace_info *t, bool running);

	/*
	 * Crash extraction (ktrace_crash.c): @crash is set (under @mutex and
	 * the crash lock) while the region is armed and this flight channel
	 * has rings in it; writers read it with interrupts off.  @crash_node
	 * lists the flight channels.
	 */
	struct kt_crash_chan *crash;
	struct list_head crash_node;
	bool crash_listed;
};

/* ktrace_chan.c */
int kt_check_geometry(u32 buf_size, u32 buf_nr);
int kt_open_relay(struct trace_info *t, u32 buf_size, u32 buf_nr);
void kt_close_relay(struct trace_info *t);
int kt_resize(struct trace_info *t, u32 buf_size, u32 buf_nr);
int kt_consume(struct trace_info *t, unsigned int stream, u64 seq);
int kt_start_locked(struct trace_info *t);
void kt_stop_locked(struct trace_info *t);
void kt_stats(struct trace_info *t, int cpu, u64 *written, u64 *dropped, u64 *overwritten);
u64 kt_total_dropped(struct trace_info *t);
u64 kt_subbuf_seq(struct trace_info *t);

/* ktrace_fs.c */
int kt_create_files(struct trace_info *t);
char *kt_catalog_text(struct trace_info *t, size_t *len);
struct dentry *kt_root_get(const char *name, struct kt_root **rootp);
void kt_root_put(struct kt_root *root);

/* ktrace_crash.c */
int kt_crash_init(void);
void kt_crash_exit(void);
void kt_crash_attach(struct trace_info *t);
void kt_crash_detach(struct trace_info *t);
void kt_crash_started(struct trace_info *t);
void kt_crash_write(struct kt_crash_chan *kc, unsigned int ring, const u64 *rec,
		    unsigned int nw, u64 ts);

#endif /* KTRACE_INTERNAL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lkst_internal.h - what the LKST files of ktrace.ko share: the event
 * table (lkst_events.c), handlers and counters (lkst_handlers.c), masksets
 * and probe arming (lkst_maskset.c), debugfs files (lkst_fs.c).
 *
 * Locking: kt_lkst_lock (a mutex) serialises every change: masksets,
 * handlers, probe registration, arming.  It nests inside the LKST
 * channel's own mutex (the state hook is called with it held), never the
 * other way round.  The probes read kt_lkst_cur and kt_lkst_handlers[]
 * with rcu_dereference_sched(): tracepoint probes run with preemption
 * disabled, an RCU read-side section.
 */
#ifndef KTRACE_LKST_INTERNAL_H
#define KTRACE_LKST_INTERNAL_H

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/tracepoint.h>
#include "ktrace_internal.h"
#include "ktrace_lkst.h"

#define KT_LKST_NR_MASKSETS 64 /* ids 0..63; 0..2 are the system ones */
#define KT_LKST_FIRST_USER 3

/* One event of the catalogue (include/ktrace/lkst.h) on this kernel. */
struct kt_lkst_ev {
	u16 id;
	u8 nargs;
	bool primary;              /* in RDEFAULT */
	const char *name, *category, *system, *tp_name, *args;
	void *probe;               /* NULL: no probe for it */
	struct tracepoint *tp;     /* NULL: unavailable here */
	bool registered;           /* probe on @tp, or hook enabled (kt_lkst_lock) */
	struct kt_lkst_hook *hook; /* a user-placed hook (lkst_hooks.c), else NULL */
	/* an event of the module's own (system "ktrace", lkst_exc.c): set = available */
	int (*enable)(struct kt_lkst_ev *e);
	void (*disable)(struct kt_lkst_ev *e);
	const char *how;           /* its source, or why it is unavailable */
};

/*
 * Every event, catalogue and hooks, in id order: @e is set to each
 * existing entry, @i is the id (kt_lkst_lock held for the hooks to stay).
 */
#define kt_lkst_for_each_ev(e, i)				\
	for ((i) = 0; (i) < KTRACE_LKST_MAX_ID; (i)++)		\
		if (((e) = kt_lkst_ev_by_id(i)) == NULL) {} else

/*
 * A maskset: the handler of every event id.  Immutable once reachable
 * from kt_lkst_cur: changes make a copy and switch to it.
 */
struct kt_maskset {
	u8 handler[KTRACE_LKST_MAX_ID];
	bool system;
	char name[KTRACE_LKST_NAME_MAX];
};

/*
 * Per-CPU counters.  An event's three counters share a cache line, so a
 * probe touches one line of them.
 */
struct kt_lkst_count {
	u64 hits;    /* events dispatched to a handler */
	u64 written; /* records stored by ktrace_lkst_log() */
	u64 dropped; /* refused: full, NMI, nested */
	u64 pad;
};

struct kt_lkst_pcpu {
	struct kt_lkst_count ev[KTRACE_LKST_MAX_ID]; /* by event id */
	u64 calls[256];                              /* by extended handler id */
};

extern struct mutex kt_lkst_lock;
extern struct trace_info *kt_lkst_chan;
extern struct kt_lkst_pcpu __percpu *kt_lkst_pcpu;
extern struct kt_maskset __rcu *kt_lkst_cur;
extern struct ktrace_lkst_handler __rcu *kt_lkst_handlers[256];
extern bool kt_lkst_dead;

/*
 * Is @v in the kernel's half of the address space (x86-64: at or above
 * -(TASK_SIZE_MAX + PAGE_SIZE), 0xffff800000000000 with 4-level paging,
 * 0xff00000000000000 with 5-level)?  Values between the top of user space
 * and there (non-canonical: LLONG_MAX, large sizes) are no addresses.
 */
static __always_inline bool kt_kernel_half(unsigned long v)
{
#ifdef CONFIG_X86_64
	return v >= -(TASK_SIZE_MAX + PAGE_SIZE);
#else
	return v >= PAGE_OFFSET;
#endif
}

/* pid | tgid << 32 of the task the event happened in (probes, hooks) */
static __always_inline u64 kt_self(void)
{
	return (u64)(u32)current->pid | ((u64)(u32)current->tgid << 32);
}

/* The current maskset's handler of event @id (probe context). */
static __always_inline u8 kt_handler_for(unsigned int id)
{
	const struct kt_maskset *ms = rcu_dereference_sched(kt_lkst_cur);

	return ms ? ms->handler[id] : KTRACE_LKST_HANDLER_NOTHING;
}

/* lkst_events.c */
extern struct kt_lkst_ev kt_lkst_events[];
extern const unsigned int kt_lkst_nevents;
struct kt_lkst_ev *kt_lkst_ev_by_id(unsigned int id);
void kt_lkst_ev_set(unsigned int id, struct kt_lkst_ev *e);
struct kt_lkst_ev *kt_lkst_ev_by_name(const char *name);
bool kt_lkst_ev_available(const struct kt_lkst_ev *e);
const char *kt_lkst_ev_reason(const struct kt_lkst_ev *e, char *buf, size_t len);
void kt_lkst_find_tracepoints(void);
int kt_lkst_probe_register(struct kt_lkst_ev *e);
void kt_lkst_probe_unregister(struct kt_lkst_ev *e);

/* lkst_hooks.c (kt_lkst_lock held unless said otherwise) */
int kt_lkst_hook_enable(struct kt_lkst_ev *e);
void kt_lkst_hook_disable(struct kt_lkst_ev *e);
void kt_lkst_hooks_retire(void);
void kt_lkst_hooks_remove_all(void);
void kt_lkst_hooks_show(struct seq_file *m);
int kt_lkst_hooks_command(char *buf);
size_t kt_lkst_hooks_catalog(char *s, size_t len, size_t cap);

/* lkst_exc.c: EXCEPTION_ENTRY/EXIT (die chain, page faults, kretprobes) */
void kt_lkst_exc_init(void);
void kt_lkst_exc_exit(void);

/* lkst_handlers.c */
void kt_lkst_dispatch(u8 handler, const struct ktrace_kevent *ev);
const char *kt_lkst_handler_name(unsigned int id);
int kt_lkst_handler_by_name(const char *name);
void kt_lkst_counters_reset(void);
void kt_lkst_counters(unsigned int id, u64 *hits, u64 *written, u64 *dropped);
u64 kt_lkst_handler_calls(unsigned int id);

/* lkst_maskset.c (kt_lkst_lock held unless said otherwise) */
int kt_lkst_masksets_init(void);
void kt_lkst_masksets_free(void);
int kt_lkst_state_hook(struct trace_info *t, bool running); /* takes the lock */
void kt_lkst_disarm(void);
const struct kt_maskset *kt_lkst_maskset(unsigned int id);
int kt_lkst_current_id(void);
int kt_lkst_maskset_by_name(const char *name);
int kt_lkst_maskset_write(unsigned int id, const char *name, const u8 *handler);
int kt_lkst_maskset_config(unsigned int id, unsigned int ev, unsigned int handler);
int kt_lkst_maskset_delete(unsigned int id);
int kt_lkst_maskset_set(unsigned int id);
int kt_lkst_drop_handler(unsigned int handler);
int kt_lkst_event_added(unsigned int id);
void kt_lkst_event_removed(unsigned int id);
bool kt_lkst_armed(void);

/* lkst_fs.c */
int kt_lkst_create_files(struct trace_info *t);
/* A whole decimal number, or hex with 0x (control-file words).  Return: 0 or -EINVAL/-ERANGE. */
int kt_parse_num(const char *s, unsigned int *v);
char *kt_lkst_catalog_text(void);

/* lkst_main.c */
extern char *kt_lkst_catalog;
int kt_lkst_catalog_refresh(void);
int kt_lkst_init(void);
void kt_lkst_exit(void);

#endif /* KTRACE_LKST_INTERNAL_H */

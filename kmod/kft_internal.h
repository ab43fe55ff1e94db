/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kft_internal.h - KFT in the kernel (seed 002): what kft_probes.c (the
 * probes, the log, the run) and kft_proc.c (/proc/kft, /proc/kft_data,
 * /proc/kft_callsites) share.
 *
 * The run itself is the freestanding engine of kft/ (kft/engine.h), the
 * configuration language its parser (kft/config.h): the same sources as
 * libktrace, compiled into ktrace.ko by kft_lib_*.c.  Here the engine's
 * "writers" are the CPUs (one struct kft_thread and counter block each)
 * plus the hrtimer that fires time triggers.
 *
 * A configuration loaded through /proc/kft becomes a session: its parsed
 * configuration, one kretprobe per function it names (trigger functions
 * and funclist), and a log of fixed-size entries (KFT's log: not circular,
 * a full log stops the run).  Exactly one session is current; loading a
 * configuration builds a new one beside it and swaps them under kft_mutex.
 */
#ifndef KFT_INTERNAL_H
#define KFT_INTERNAL_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include "kft/engine.h"

/* Bytes of one write to /proc/kft (a command or a whole configuration). */
#define KFT_TEXT_MAX (64u * 1024u)
/* Log entries: default (module parameter kft_log), most a session may have. */
#define KFT_LOG_DEFAULT 65536u
#define KFT_LOG_MAX (1u << 20)
/* Functions a configuration can probe: two triggers and the funclist. */
#define KFT_PROBES_MAX (2u + KFT_FUNCLIST_MAX)
/* Bytes of the status text (/proc/kft). */
#define KFT_STATUS_MAX (64u * 1024u)
/* Sub-buffers of /proc/kft_data: bytes each, header included. */
#define KFT_DATA_SUBBUF 65536u

/*
 * struct kft_ent - one log entry: a completed (or unfinished) call,
 * 48 bytes.  Written by the return handler that approved it; @ts is
 * stored last with release semantics and is the commit: 0 = not (yet)
 * written.
 */
struct kft_ent {
	u64 ts;    /* exit time, ns of CLOCK_MONOTONIC (ktime_get_mono_fast_ns) */
	u64 dur;   /* ns from entry to @ts */
	u64 fn;    /* the probed function, as the configuration names it */
	u64 site;  /* return address into the caller */
	u32 pid;   /* current->pid (the interrupted task in irq context) */
	u16 cpu;
	u16 depth; /* probed calls open below it on the task's stack */
	u8 sig;    /* 0 task, 1 softirq, 2 hardirq context */
	u8 flags;  /* KTRACE_CALLF_* */
	u8 pad[6];
};

/* struct kft_site - one (function, call site) pair of the callsites table. */
struct kft_site {
	u64 func, site;
};

struct kft_sess;

/* struct kft_probe - a kretprobe on one function of a session. */
struct kft_probe {
	struct kretprobe rp;
	u64 fn;                /* the function's address as the configuration holds it */
	struct kft_sess *sess;
	char *name;            /* the name it was given by, or NULL (0x address) */
	bool registered;
};

/**
 * struct kft_sess - one loaded configuration and everything it owns.
 * @cfg:      the parsed configuration (addresses only).
 * @probes:   @nprobes kretprobes, registered disabled, enabled when the
 *            session becomes current.
 * @log:      @cap entries; @next entries handed out so far (may exceed @cap:
 *            the excess was refused, @lost counts the records lost).
 * @sites, @nsites, @capsites, @index, @index_mask: the callsites table,
 *            grown by /proc/kft_data readers (process context, kft_mutex);
 *            an index never changes once given.
 */
struct kft_sess {
	struct kft_config *cfg;
	struct kft_probe *probes;
	unsigned int nprobes;
	struct kft_ent *log;
	u64 cap;
	atomic64_t next;
	atomic64_t lost;
	struct kft_site *sites;
	u32 nsites, capsites;
	u32 *index;
	u32 index_mask;
};

extern struct mutex kft_mutex;

/* kft_probes.c */
int kft_core_init(void);
void kft_core_exit(void);
/* Load a configuration text; on failure *@msg (@size bytes) says why. */
int kft_load_text(const char *text, size_t len, char *msg, size_t size);
/* prime/start/stop: KFT_CMD_*.  Return: 0, -EBUSY (state), -ENOENT (nothing loaded). */
int kft_run_command(int cmd);
/* The status text (what `cat /proc/kft` shows).  Return: its length. */
size_t kft_status_text(char *buf, size_t size);
/* /proc/kft_data and /proc/kft_callsites images (kvfree() them). */
int kft_data_image(void **img, size_t *len);
int kft_callsites_image(void **img, size_t *len);

/* kft_proc.c: module setup (called by ktrace_main.c) */
int kt_kft_init(void);
void kt_kft_exit(void);

#endif /* KFT_INTERNAL_H */

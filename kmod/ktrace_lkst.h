/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace_lkst.h - the kernel API of ktrace.ko's LKST tracer (seed 001,
 * "Linux Kernel State Tracer") for other kernel modules: extended event
 * handlers.
 *
 * ktrace.ko probes the kernel tracepoints of the event catalogue
 * (include/ktrace/lkst.h).  For each event that fires, the current maskset
 * names a handler: DEFAULT (id 1) writes the event as one KEVENT record to
 * the LKST channel (debugfs ktrace/lkst/, per-CPU relay buffers), NOTHING
 * (id 255) drops it, and any other id is a handler that a module
 * registered here ("extended event handler" in LKST).  A maskset entry is
 * connected to a handler with `ktrace lkst config -m N EVENT HANDLER` or
 * the debugfs file ktrace/lkst/masksets (docs/KMOD.md, "Kernel events").
 *
 * What a handler is called with, and where:
 *
 *  - @ev points to the event, filled by the probe: ev->w[0] = pid | tgid
 *    << 32 of the current task (for interrupts: the interrupted task),
 *    ev->w[1..nargs] = the catalogue's arguments.  @ev lives on the
 *    probe's stack; copy what you keep.
 *  - Context: the tracepoint's.  That is any context: process, softirq,
 *    hardirq, NMI (EXCEPTION_NMI), with preemption disabled, often with
 *    interrupts disabled, and with scheduler, timer or allocator locks
 *    held (PROCESS_CONTEXTSWITCH runs under the runqueue lock,
 *    MEM_KMALLOC inside the allocator).
 *  - So a handler must not sleep, allocate, take a lock that the traced
 *    code may hold (any sleeping lock, the runqueue or timer locks,
 *    printk), wake a task up, or call into code that raises the events it
 *    handles (recursion).  It may read @ev, update per-CPU data or
 *    atomics, and call ktrace_lkst_log() (as DEFAULT does) or the channel
 *    writers of ktrace_kernel.h, which are safe in every context (NMI:
 *    refused and counted as dropped).
 *  - Handlers run inside an RCU-sched read-side section (preemption off).
 *    ktrace_lkst_unregister_handler() disconnects the handler from every
 *    maskset and then waits until no CPU runs it any more, so a module
 *    may free @priv and unload once it returns.
 *
 * Symbol names (ktrace_lkst_register_handler, ktrace_lkst_unregister_handler,
 * ktrace_lkst_log, ktrace_lkst_event_name) were checked against Debian 6.1's
 * Module.symvers, where none of them exists.
 */
#ifndef KTRACE_LKST_KERNEL_H
#define KTRACE_LKST_KERNEL_H

#include <linux/types.h>
#include "ktrace/lkst.h"

/* Most arguments an event of the catalogue has. */
#define KTRACE_LKST_MAX_ARGS 4

/* Handler names: 1..31 bytes of [A-Za-z0-9_-]. */
#define KTRACE_LKST_NAME_MAX 32

/**
 * struct ktrace_kevent - one kernel event, as a handler sees it (the
 * payload of a KEVENT record).
 * @id:    event type (KTRACE_LKST_PROCESS_CONTEXTSWITCH, ...).
 * @nargs: argument words in @w[1..@nargs] (0..KTRACE_LKST_MAX_ARGS).
 * @w:     @w[0] = pid (bits 0..31) | tgid (bits 32..63) of the current
 *         task; then the arguments, zero- or sign-extended to 64 bits, in
 *         the catalogue's order.  Exactly the payload of the KEVENT record
 *         DEFAULT writes.
 */
struct ktrace_kevent {
	u16 id;
	u8 nargs;
	u64 w[1 + KTRACE_LKST_MAX_ARGS];
};

/**
 * struct ktrace_lkst_handler - an extended event handler.
 * @name: its name in ktrace/lkst/handlers and in maskset commands.
 * @fn:   called for every event the current maskset connects to this
 *        handler, in the event's context (see the top of this file).
 * @priv: passed to @fn.
 * @id:   before registering: 0 for the lowest free id, or the id wanted
 *        (2..254); after: the id given.  Read-only while registered.
 *
 * The structure must stay valid until ktrace_lkst_unregister_handler()
 * returns.
 */
struct ktrace_lkst_handler {
	const char *name;
	void (*fn)(const struct ktrace_kevent *ev, void *priv);
	void *priv;
	int id;
};

/**
 * ktrace_lkst_register_handler() - make @h available to masksets.
 * @h: the handler; @h->id 0 or the id wanted.
 *
 * No maskset uses the new handler until one is configured to.
 * Context: process, may sleep.
 * Return: the handler id (2..254, also stored in @h->id), or -EINVAL (bad
 * name, no @fn, id out of range), -EEXIST (name taken), -EBUSY (the id
 * wanted is taken), -ENOSPC (no free id), -ENODEV (ktrace.ko is
 * unloading).
 */
int ktrace_lkst_register_handler(struct ktrace_lkst_handler *h);

/**
 * ktrace_lkst_unregister_handler() - remove @h: every maskset entry that
 * pointed to it becomes NOTHING (the current maskset is switched safely,
 * as `ktrace lkst set` does), then waits for every CPU to leave @h->fn
 * (tracepoint_synchronize_unregister()).  Afterwards @h may be freed and
 * its module unloaded.  Unregistering a handler that is not registered
 * does nothing.
 * Context: process, may sleep (one or two RCU grace periods).
 */
void ktrace_lkst_unregister_handler(struct ktrace_lkst_handler *h);

/**
 * ktrace_lkst_log() - what the DEFAULT handler does: write @ev as one
 * KEVENT record (header word + 1 + @ev->nargs words: 16 + 8 * nargs bytes)
 * to the LKST channel, and count it for the event in ktrace/lkst/events.
 * @ev: the event (a handler passes on the one it got, or a changed copy).
 *
 * Context: any (NMI: refused, counted as dropped).  Lock-free.
 * Return: 0 stored; -ENODATA the channel is stopped; -ENOSPC full
 * (discard mode) or -EBUSY (NMI, nested write): both counted as dropped;
 * -EINVAL @ev->id or @ev->nargs out of range.
 */
int ktrace_lkst_log(const struct ktrace_kevent *ev);

/**
 * ktrace_lkst_event_name() - the mnemonic of event @id
 * ("PROCESS_CONTEXTSWITCH"), or NULL if the catalogue has no such event.
 * Context: any.
 */
const char *ktrace_lkst_event_name(unsigned int id);

#endif /* KTRACE_LKST_KERNEL_H */

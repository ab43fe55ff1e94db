// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_handlers.c - LKST's event handlers: DEFAULT (id 1) writes the event
 * to the LKST channel, NOTHING (id 255) drops it, and modules register
 * extended handlers (ids 2..254) with ktrace_lkst_register_handler()
 * (kmod/ktrace_lkst.h documents the contract).  Also the per-CPU counters
 * behind ktrace/lkst/events and ktrace/lkst/handlers.
 *
 * The handler table is an array of RCU-protected pointers: probes load a
 * slot with rcu_dereference_sched() (they run with preemption disabled);
 * registration publishes with rcu_assign_pointer(); unregistration clears
 * the slot, rewrites every maskset that named the handler (switching the
 * current one safely, lkst_maskset.c) and waits for
 * tracepoint_synchronize_unregister(), after which no CPU can be inside
 * the handler and its module may go.
 */
#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/string.h>
#include "lkst_internal.h"

struct ktrace_lkst_handler __rcu *kt_lkst_handlers[256] __read_mostly;
struct kt_lkst_pcpu __percpu *kt_lkst_pcpu __read_mostly;

/**
 * kt_lkst_dispatch() - hand @ev to handler @handler (not NOTHING): the
 * tail of every probe.  Context: the probe's (preemption disabled).
 */
void kt_lkst_dispatch(u8 handler, const struct ktrace_kevent *ev)
{
	struct ktrace_lkst_handler *h;

	this_cpu_inc(kt_lkst_pcpu->ev[ev->id].hits);
	if (likely(handler == KTRACE_LKST_HANDLER_DEFAULT)) {
		ktrace_lkst_log(ev);
		return;
	}
	this_cpu_inc(kt_lkst_pcpu->calls[handler]);
	h = rcu_dereference_sched(kt_lkst_handlers[handler]);
	if (h)
		h->fn(ev, h->priv);
}

int ktrace_lkst_log(const struct ktrace_kevent *ev)
{
	int ret;

	if (unlikely(ev->id >= KTRACE_LKST_MAX_ID || ev->nargs > KTRACE_LKST_MAX_ARGS))
		return -EINVAL;
	ret = trace_record(kt_lkst_chan, KTRACE_CLASS_KEVENT, ev->id, ev->w, 1 + ev->nargs);
	if (likely(!ret))
		this_cpu_inc(kt_lkst_pcpu->ev[ev->id].written);
	else if (ret != -ENODATA)
		this_cpu_inc(kt_lkst_pcpu->ev[ev->id].dropped);
	return ret;
}
EXPORT_SYMBOL_GPL(ktrace_lkst_log);

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

/**
 * kt_lkst_counters_reset() - zero every counter (at start, before any
 * probe is registered; a user handler calling ktrace_lkst_log() on its own
 * at that moment may leave a count of 1 behind).
 */
void kt_lkst_counters_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(kt_lkst_pcpu, cpu), 0, sizeof(struct kt_lkst_pcpu));
}

/**
 * kt_lkst_counters() - sums over CPUs for event @id (a racy snapshot while
 * tracing runs, exact once it stopped).
 */
void kt_lkst_counters(unsigned int id, u64 *hits, u64 *written, u64 *dropped)
{
	u64 h = 0, w = 0, d = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct kt_lkst_pcpu *p = per_cpu_ptr(kt_lkst_pcpu, cpu);

		h += READ_ONCE(p->ev[id].hits);
		w += READ_ONCE(p->ev[id].written);
		d += READ_ONCE(p->ev[id].dropped);
	}
	*hits = h;
	*written = w;
	*dropped = d;
}

/**
 * kt_lkst_handler_calls() - events handed to handler @id, all CPUs, since
 * the last start.  DEFAULT's are all dispatches minus the extended
 * handlers' (the probes count no separate DEFAULT calls: one counter less
 * on the hot path).
 */
u64 kt_lkst_handler_calls(unsigned int id)
{
	u64 n = 0, all = 0;
	unsigned int i;
	int cpu;

	if (id == KTRACE_LKST_HANDLER_NOTHING)
		return 0;
	for_each_possible_cpu(cpu) {
		struct kt_lkst_pcpu *p = per_cpu_ptr(kt_lkst_pcpu, cpu);

		if (id != KTRACE_LKST_HANDLER_DEFAULT) {
			n += READ_ONCE(p->calls[id & 255]);
			continue;
		}
		for (i = 0; i < KTRACE_LKST_MAX_ID; i++)
			all += READ_ONCE(p->ev[i].hits);
		for (i = 2; i < 255; i++)
			n += READ_ONCE(p->calls[i]);
	}
	return id == KTRACE_LKST_HANDLER_DEFAULT ? all - n : n;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/**
 * kt_lkst_handler_name() - name of handler @id, or NULL if none has it.
 * Context: kt_lkst_lock held (the name of a registered handler is stable).
 */
const char *kt_lkst_handler_name(unsigned int id)
{
	struct ktrace_lkst_handler *h;

	if (id == KTRACE_LKST_HANDLER_DEFAULT)
		return "DEFAULT";
	if (id == KTRACE_LKST_HANDLER_NOTHING)
		return "NOTHING";
	if (id >= 256)
		return NULL;
	h = rcu_dereference_protected(kt_lkst_handlers[id], lockdep_is_held(&kt_lkst_lock));
	return h ? h->name : NULL;
}

/**
 * kt_lkst_handler_by_name() - the id of the handler called @name (any
 * case), or -ENOENT.  Context: kt_lkst_lock held.
 */
int kt_lkst_handler_by_name(const char *name)
{
	unsigned int i;

	for (i = 1; i < 256; i++) {
		const char *n = kt_lkst_handler_name(i);

		if (n && !strcasecmp(n, name))
			return i;
	}
	return -ENOENT;
}

static bool kt_valid_handler_name(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, KTRACE_LKST_NAME_MAX);
	if (n == 0 || n >= KTRACE_LKST_NAME_MAX)
		return false;
	/* not a number: maskset commands take ids or names */
	if (isdigit(s[0]))
		return false;
	for (; *s; s++)
		if (!isalnum(*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* The exported API                                                    */
/* ------------------------------------------------------------------ */

int ktrace_lkst_register_handler(struct ktrace_lkst_handler *h)
{
	int id, ret;

	if (!h || !h->fn || !kt_valid_handler_name(h->name))
		return -EINVAL;
	if (h->id && (h->id < 2 || h->id > 254))
		return -EINVAL;

	mutex_lock(&kt_lkst_lock);
	if (kt_lkst_dead) {
		ret = -ENODEV;
		goto out;
	}
	if (kt_lkst_handler_by_name(h->name) >= 0) {
		ret = -EEXIST;
		goto out;
	}
	if (h->id) {
		id = h->id;
		if (kt_lkst_handler_name(id)) {
			ret = -EBUSY;
			goto out;
		}
	} else {
		for (id = 2; id <= 254; id++)
			if (!kt_lkst_handler_name(id))
				break;
		if (id > 254) {
			ret = -ENOSPC;
			goto out;
		}
	}
	h->id = id;
	rcu_assign_pointer(kt_lkst_handlers[id], h);
	ret = id;
out:
	mutex_unlock(&kt_lkst_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(ktrace_lkst_register_handler);

void ktrace_lkst_unregister_handler(struct ktrace_lkst_handler *h)
{
	struct ktrace_lkst_handler *cur;

	if (!h || h->id < 2 || h->id > 254)
		return;
	mutex_lock(&kt_lkst_lock);
	cur = rcu_dereference_protected(kt_lkst_handlers[h->id], lockdep_is_held(&kt_lkst_lock));
	if (cur != h) {
		mutex_unlock(&kt_lkst_lock);
		return;
	}
	RCU_INIT_POINTER(kt_lkst_handlers[h->id], NULL);
	/* Masksets naming it now say NOTHING (the current one switched). */
	kt_lkst_drop_handler(h->id);
	mutex_unlock(&kt_lkst_lock);
	/* No CPU is inside h->fn after this (probes may be SRCU or RCU). */
	tracepoint_synchronize_unregister();
}
EXPORT_SYMBOL_GPL(ktrace_lkst_unregister_handler);

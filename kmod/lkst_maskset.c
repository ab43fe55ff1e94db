// SPDX-License-Identifier: GPL-2.0
/*
 * lkst_maskset.c - LKST's masksets: which handler each event goes to, the
 * current maskset, and the probes that follow it.
 *
 * Masksets 0..2 are the system ones (KTRACE_LKST_MASKSET_*): RNOTHING (no
 * event), RDEFAULT (the catalogue's primary events -> DEFAULT), RALL
 * (every event -> DEFAULT); they cannot be changed.  User masksets
 * 3..63 are created, replaced, edited and deleted through
 * ktrace/lkst/masksets (`ktrace lkst write/config/delete`), and any
 * maskset is made current with `set` (ktrace/lkst/current).  RDEFAULT is
 * current after load.
 *
 * Probes are registered only while the LKST channel runs ("armed": the
 * channel's state hook, kt_lkst_state_hook()).  Starting attaches exactly
 * the probes of the events the current maskset connects to a handler, so
 * a stopped tracer, or RNOTHING, costs nothing; stopping detaches them
 * all.
 *
 * Switching on the fly (kt_ms_switch()), with no event lost or torn:
 *  1. register the probes the new maskset needs that are not registered
 *     yet (their events are NOTHING in the old maskset, so until step 2
 *     they return at once);
 *  2. publish the new maskset with rcu_assign_pointer(); a probe reads
 *     the pointer once and then one byte of it, so each event is handled
 *     entirely by the old or entirely by the new maskset;
 *  3. if the old maskset was a copy being replaced: synchronize_rcu(),
 *     then free it (no probe can still read it).
 * Probes are not detached by a switch: the tracer keeps the union of
 * what the masksets used since the start, until it stops.  So switching
 * back and forth patches no kernel code after the first round (attaching
 * a probe patches the tracepoint's jump label and static call), costs a
 * few microseconds, and cannot fail for lack of memory; an attached probe
 * whose event the current maskset does not trap costs a call, a load and
 * a compare.  An event that both masksets trap keeps its probe through
 * the switch, so none of its occurrences is missed: the VM suite checks
 * that every CPU's chain of context switches (next_pid of one = prev_pid
 * of the next) stays unbroken across hundreds of switches under load.
 * When a handler goes away, the probes nobody needs any more are
 * detached at once (kt_lkst_drop_handler()).
 *
 * The maskset reachable from kt_lkst_cur is never written except one
 * entry at a time to NOTHING when its handler goes away (a single byte
 * store: a probe sees the old or the new value, and the old handler's
 * slot is already empty).  Everything else makes a copy and switches.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include "lkst_internal.h"

struct kt_maskset __rcu *kt_lkst_cur __read_mostly;

static struct kt_maskset *kt_ms[KT_LKST_NR_MASKSETS]; /* kt_lkst_lock */
static int kt_ms_cur_id = KTRACE_LKST_MASKSET_RDEFAULT;
static bool kt_armed;

/* Is a probe on event @e needed while @ms is current? */
static bool kt_ms_wants(const struct kt_maskset *ms, const struct kt_lkst_ev *e)
{
	u8 h = ms->handler[e->id];

	return kt_lkst_ev_available(e) && h != KTRACE_LKST_HANDLER_NOTHING &&
	       kt_lkst_handler_name(h);
}

/* Unregister the probes @ms does not want; wait for them to be gone. */
static void kt_ms_trim(const struct kt_maskset *ms)
{
	struct kt_lkst_ev *e;
	bool any = false;
	unsigned int i;

	kt_lkst_for_each_ev(e, i) {
		if (e->registered && (!ms || !kt_ms_wants(ms, e))) {
			kt_lkst_probe_unregister(e);
			any = true;
		}
	}
	if (any)
		tracepoint_synchronize_unregister();
}

/*
 * kt_ms_switch() - make @next the maskset the probes use (see the top of
 * the file); probes it does not need stay attached.  @old_copy, if not
 * NULL, is freed once no probe can see it.
 * Return: 0, or a probe registration error (nothing changed then).
 */
static int kt_ms_switch(struct kt_maskset *next, struct kt_maskset *old_copy)
{
	DECLARE_BITMAP(added, KTRACE_LKST_MAX_ID);
	struct kt_lkst_ev *e;
	unsigned int i;
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	bitmap_zero(added, KTRACE_LKST_MAX_ID);
	if (kt_armed) {
		kt_lkst_for_each_ev(e, i) {
			if (e->registered || !kt_ms_wants(next, e))
				continue;
			ret = kt_lkst_probe_register(e);
			if (ret)
				goto undo;
			set_bit(e->id, added);
		}
	}
	rcu_assign_pointer(kt_lkst_cur, next);
	if (old_copy) {
		synchronize_rcu();
		kfree(old_copy);
	}
	return 0;
undo:
	kt_lkst_for_each_ev(e, i)
		if (test_bit(i, added))
			kt_lkst_probe_unregister(e);
	tracepoint_synchronize_unregister();
	return ret;
}

/* ------------------------------------------------------------------ */
/* Arming: the LKST channel's state hook                               */
/* ------------------------------------------------------------------ */

static int kt_arm(void)
{
	struct kt_maskset *ms = kt_ms[kt_ms_cur_id];
	struct kt_lkst_ev *e;
	unsigned int i;
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	if (kt_armed)
		return 0;
	kt_lkst_counters_reset();
	/* hooks deleted before this start leave the catalogue now */
	kt_lkst_hooks_retire();
	kt_lkst_catalog_refresh();
	kt_lkst_for_each_ev(e, i) {
		if (!kt_ms_wants(ms, e))
			continue;
		ret = kt_lkst_probe_register(e);
		if (ret) {
			pr_err("ktrace-lkst: cannot attach to %s: %d\n", e->name, ret);
			kt_ms_trim(NULL);
			return ret;
		}
	}
	kt_armed = true;
	return 0;
}

/**
 * kt_lkst_disarm() - unregister every probe and wait until none runs.
 * Context: kt_lkst_lock held.
 */
void kt_lkst_disarm(void)
{
	lockdep_assert_held(&kt_lkst_lock);
	kt_ms_trim(NULL);
	kt_armed = false;
}

/**
 * kt_lkst_state_hook() - called by the LKST channel (ktrace_chan.c) under
 * its mutex: after it started (@running true: register the current
 * maskset's probes; an error makes the start fail) and before it stops
 * (unregister them all, so no record comes after the stop).
 */
int kt_lkst_state_hook(struct trace_info *t, bool running)
{
	int ret = 0;

	mutex_lock(&kt_lkst_lock);
	if (kt_lkst_dead)
		ret = running ? -ENODEV : 0;
	else if (running)
		ret = kt_arm();
	else
		kt_lkst_disarm();
	mutex_unlock(&kt_lkst_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Masksets                                                            */
/* ------------------------------------------------------------------ */

static struct kt_maskset *kt_ms_new(const char *name, bool system)
{
	struct kt_maskset *ms = kzalloc(sizeof(*ms), GFP_KERNEL);

	if (!ms)
		return NULL;
	memset(ms->handler, KTRACE_LKST_HANDLER_NOTHING, sizeof(ms->handler));
	strscpy(ms->name, name, sizeof(ms->name));
	ms->system = system;
	return ms;
}

/**
 * kt_lkst_masksets_init() - the system masksets; RDEFAULT current.
 * Return: 0 or -ENOMEM.
 */
int kt_lkst_masksets_init(void)
{
	unsigned int i;

	kt_ms[KTRACE_LKST_MASKSET_RNOTHING] = kt_ms_new("RNOTHING", true);
	kt_ms[KTRACE_LKST_MASKSET_RDEFAULT] = kt_ms_new("RDEFAULT", true);
	kt_ms[KTRACE_LKST_MASKSET_RALL] = kt_ms_new("RALL", true);
	if (!kt_ms[0] || !kt_ms[1] || !kt_ms[2]) {
		kt_lkst_masksets_free();
		return -ENOMEM;
	}
	for (i = 0; i < kt_lkst_nevents; i++) {
		const struct kt_lkst_ev *e = &kt_lkst_events[i];

		kt_ms[KTRACE_LKST_MASKSET_RALL]->handler[e->id] = KTRACE_LKST_HANDLER_DEFAULT;
		if (e->primary)
			kt_ms[KTRACE_LKST_MASKSET_RDEFAULT]->handler[e->id] =
				KTRACE_LKST_HANDLER_DEFAULT;
	}
	kt_ms_cur_id = KTRACE_LKST_MASKSET_RDEFAULT;
	rcu_assign_pointer(kt_lkst_cur, kt_ms[kt_ms_cur_id]);
	return 0;
}

/** kt_lkst_masksets_free() - at unload, after the probes are gone. */
void kt_lkst_masksets_free(void)
{
	unsigned int i;

	RCU_INIT_POINTER(kt_lkst_cur, NULL);
	synchronize_rcu();
	for (i = 0; i < KT_LKST_NR_MASKSETS; i++) {
		kfree(kt_ms[i]);
		kt_ms[i] = NULL;
	}
}

/** kt_lkst_maskset() - maskset @id or NULL (kt_lkst_lock held). */
const struct kt_maskset *kt_lkst_maskset(unsigned int id)
{
	return id < KT_LKST_NR_MASKSETS ? kt_ms[id] : NULL;
}

/** kt_lkst_current_id() - the id of the current maskset. */
int kt_lkst_current_id(void)
{
	return kt_ms_cur_id;
}

/** kt_lkst_maskset_by_name() - id of the maskset named @name (any case), or -ENOENT. */
int kt_lkst_maskset_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < KT_LKST_NR_MASKSETS; i++)
		if (kt_ms[i] && !strcasecmp(kt_ms[i]->name, name))
			return i;
	return -ENOENT;
}

/* Put @ms into user slot @id, switching to it if @id is current. */
static int kt_ms_store(unsigned int id, struct kt_maskset *ms)
{
	struct kt_maskset *old = kt_ms[id];
	int ret;

	if (id == kt_ms_cur_id) {
		ret = kt_ms_switch(ms, old);
		if (ret)
			return ret;
	} else {
		kfree(old);
	}
	kt_ms[id] = ms;
	return 0;
}

static int kt_check_user_id(unsigned int id)
{
	if (id >= KT_LKST_NR_MASKSETS)
		return -EINVAL;
	if (id < KT_LKST_FIRST_USER)
		return -EPERM;
	return 0;
}

static int kt_check_handler(unsigned int h)
{
	if (h == 0 || h > 255 || !kt_lkst_handler_name(h))
		return -ENOENT;
	return 0;
}

/**
 * kt_lkst_maskset_write() - create or replace user maskset @id: name
 * @name (NULL: keep the old one, or "maskset<id>"), entries @handler (one
 * handler id per event id; ids of events not in the catalogue must be
 * NOTHING).  If @id is current, the tracer switches to the new contents.
 * Return: 0, -EINVAL (bad id), -EPERM (system maskset), -ENOENT (an
 * unknown event or handler), -ENOMEM, a probe registration error.
 */
int kt_lkst_maskset_write(unsigned int id, const char *name, const u8 *handler)
{
	struct kt_maskset *ms;
	char def[KTRACE_LKST_NAME_MAX];
	unsigned int i;
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	ret = kt_check_user_id(id);
	if (ret)
		return ret;
	for (i = 0; i < KTRACE_LKST_MAX_ID; i++) {
		if (handler[i] == KTRACE_LKST_HANDLER_NOTHING)
			continue;
		if (!kt_lkst_ev_by_id(i) || kt_check_handler(handler[i]))
			return -ENOENT;
	}
	if (name) {
		ret = kt_lkst_maskset_by_name(name);
		if (ret >= 0 && ret != id)
			return -EEXIST;
	}
	snprintf(def, sizeof(def), "maskset%u", id);
	ms = kt_ms_new(name ? name : kt_ms[id] ? kt_ms[id]->name : def, false);
	if (!ms)
		return -ENOMEM;
	memcpy(ms->handler, handler, sizeof(ms->handler));
	ret = kt_ms_store(id, ms);
	if (ret)
		kfree(ms);
	return ret;
}

/**
 * kt_lkst_maskset_config() - connect event @ev of user maskset @id to
 * handler @handler (NOTHING disconnects it).
 * Return: 0, -EINVAL, -EPERM, -ENOENT (no such maskset, event or
 * handler), -ENOMEM, a probe registration error.
 */
int kt_lkst_maskset_config(unsigned int id, unsigned int ev, unsigned int handler)
{
	struct kt_maskset *ms;
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	ret = kt_check_user_id(id);
	if (ret)
		return ret;
	if (!kt_ms[id] || !kt_lkst_ev_by_id(ev) || kt_check_handler(handler))
		return -ENOENT;
	ms = kmemdup(kt_ms[id], sizeof(*ms), GFP_KERNEL);
	if (!ms)
		return -ENOMEM;
	ms->handler[ev] = handler;
	ret = kt_ms_store(id, ms);
	if (ret)
		kfree(ms);
	return ret;
}

/**
 * kt_lkst_maskset_delete() - remove user maskset @id.
 * Return: 0, -EINVAL, -EPERM, -ENOENT, -EBUSY (it is current).
 */
int kt_lkst_maskset_delete(unsigned int id)
{
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	ret = kt_check_user_id(id);
	if (ret)
		return ret;
	if (!kt_ms[id])
		return -ENOENT;
	if (id == kt_ms_cur_id)
		return -EBUSY;
	kfree(kt_ms[id]);
	kt_ms[id] = NULL;
	return 0;
}

/**
 * kt_lkst_maskset_set() - make maskset @id current, on the fly.
 * Return: 0, -EINVAL, -ENOENT, a probe registration error.
 */
int kt_lkst_maskset_set(unsigned int id)
{
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	if (id >= KT_LKST_NR_MASKSETS)
		return -EINVAL;
	if (!kt_ms[id])
		return -ENOENT;
	if (id == kt_ms_cur_id)
		return 0;
	ret = kt_ms_switch(kt_ms[id], NULL);
	if (ret)
		return ret;
	kt_ms_cur_id = id;
	return 0;
}

/**
 * kt_lkst_drop_handler() - handler @handler is gone: every entry naming it
 * becomes NOTHING (one byte store each, see the top of the file) and the
 * probes the current maskset no longer needs are removed.  Cannot fail.
 * Return: number of entries changed.
 */
int kt_lkst_drop_handler(unsigned int handler)
{
	unsigned int i, j;
	int n = 0;

	lockdep_assert_held(&kt_lkst_lock);
	for (i = KT_LKST_FIRST_USER; i < KT_LKST_NR_MASKSETS; i++) {
		if (!kt_ms[i])
			continue;
		for (j = 0; j < KTRACE_LKST_MAX_ID; j++) {
			if (kt_ms[i]->handler[j] == handler) {
				WRITE_ONCE(kt_ms[i]->handler[j], KTRACE_LKST_HANDLER_NOTHING);
				n++;
			}
		}
	}
	if (n && kt_armed) {
		synchronize_rcu();
		kt_ms_trim(kt_ms[kt_ms_cur_id]);
	}
	return n;
}

/** kt_lkst_armed() - the tracer runs (probes follow the current maskset). */
bool kt_lkst_armed(void)
{
	return kt_armed;
}

/**
 * kt_lkst_event_added() - event @id (a hook, lkst_hooks.c) was entered:
 * RALL, "every event", connects it to DEFAULT (a copy of RALL replaces
 * it, switched to if current: its probe is then enabled while tracing
 * runs); every other maskset leaves it at NOTHING until configured.
 * Return: 0, -ENOMEM, or the hook's enable error (nothing changed then).
 */
int kt_lkst_event_added(unsigned int id)
{
	struct kt_maskset *ms, *old = kt_ms[KTRACE_LKST_MASKSET_RALL];
	int ret;

	lockdep_assert_held(&kt_lkst_lock);
	ms = kmemdup(old, sizeof(*ms), GFP_KERNEL);
	if (!ms)
		return -ENOMEM;
	ms->handler[id] = KTRACE_LKST_HANDLER_DEFAULT;
	if (kt_ms_cur_id == KTRACE_LKST_MASKSET_RALL) {
		ret = kt_ms_switch(ms, old);
		if (ret) {
			kfree(ms);
			return ret;
		}
	} else {
		kfree(old);
	}
	kt_ms[KTRACE_LKST_MASKSET_RALL] = ms;
	return 0;
}

/**
 * kt_lkst_event_removed() - event @id (a hook) goes: every maskset's
 * entry becomes NOTHING (one byte store each, as when a handler goes) and,
 * while tracing runs, its probe is disabled and waited for.  Afterwards
 * no CPU handles event @id.  Cannot fail.
 */
void kt_lkst_event_removed(unsigned int id)
{
	unsigned int i;

	lockdep_assert_held(&kt_lkst_lock);
	for (i = 0; i < KT_LKST_NR_MASKSETS; i++)
		if (kt_ms[i])
			WRITE_ONCE(kt_ms[i]->handler[id], KTRACE_LKST_HANDLER_NOTHING);
	if (kt_armed)
		kt_ms_trim(kt_ms[kt_ms_cur_id]);
}
